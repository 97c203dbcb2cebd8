import CMediaKitPlugin

/// How a picture is resampled when a ``PictureConverter`` changes its size. The cases are
/// FFmpeg's scale-filter flags (`-vf scale=W:H:flags=NAME`), and the FFmpeg plugin's
/// converter uses the libswscale filter of that name.
public enum ScaleFilter: Int32, Sendable, CaseIterable {
    /// "fast_bilinear".
    case fastBilinear = 1
    /// "bilinear".
    case bilinear = 2
    /// "bicubic": the default, as in the `ffmpeg` tool.
    case bicubic = 3
    /// "neighbor": the nearest sample.
    case neighbor = 4
    /// "area": averaging, for shrinking.
    case area = 5
    /// "lanczos".
    case lanczos = 6

    /// The FFmpeg flag name ("bicubic").
    public var name: String {
        switch self {
        case .fastBilinear: return "fast_bilinear"
        case .bilinear: return "bilinear"
        case .bicubic: return "bicubic"
        case .neighbor: return "neighbor"
        case .area: return "area"
        case .lanczos: return "lanczos"
        }
    }

    /// The filter of an FFmpeg flag name ("bicubic"), or nil.
    public init?(name: String) {
        guard let f = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = f
    }

    /// The filter of a C `MK_SCALE_*` value (`MK_SCALE_DEFAULT`, 0: ``bicubic``), or nil.
    public init?(code: Int32) {
        if code == MK_SCALE_DEFAULT { self = .bicubic; return }
        self.init(rawValue: code)
    }
}

/// Changes the pixel format of decoded pictures (bit depth, chroma subsampling,
/// planar or semi-planar layout) and, when asked, their size, through a plugin's
/// picture converter: the FFmpeg plugin's is libswscale, set up as the `ffmpeg`
/// tool sets it up, so `yuv420p10le` or `yuv444p` pictures become the same NV12
/// bytes as `ffmpeg -pix_fmt nv12` writes, and a picture scaled with
/// ``ScaleFilter/bicubic`` the bytes of `ffmpeg -vf scale=W:H:flags=bicubic`.
///
/// Make one with ``MediaRegistry/makePictureConverter(from:to:width:height:outputWidth:outputHeight:filter:colorRange:colorSpace:)``,
/// or let a ``PicturePipeline`` make and keep one.
/// One converter is used by one thread at a time; the frames it returns may be
/// used and released on any thread.
public final class PictureConverter: @unchecked Sendable {
    /// The pixel format of the pictures it takes.
    public let source: PixelFormat
    /// The pixel format of the pictures it returns.
    public let target: PixelFormat
    /// The picture size it takes.
    public let width: Int, height: Int
    /// The picture size it returns (``width`` x ``height`` unless it scales).
    public let outputWidth: Int, outputHeight: Int
    /// How it resamples when the size changes.
    public let filter: ScaleFilter
    /// The converter's name within its plugin ("swscale").
    public let name: String
    /// The plugin that carries it.
    public let plugin: MediaRegistry.Plugin
    private let instance: UnsafeMutableRawPointer
    private let vtable: UnsafePointer<mk_plugin_converter_vtable>
    private let context: String

    init(source: PixelFormat, target: PixelFormat, width: Int, height: Int, outputWidth: Int, outputHeight: Int,
         filter: ScaleFilter, name: String, plugin: MediaRegistry.Plugin,
         instance: UnsafeMutableRawPointer, vtable: UnsafePointer<mk_plugin_converter_vtable>) {
        self.source = source
        self.target = target
        self.width = width
        self.height = height
        self.outputWidth = outputWidth
        self.outputHeight = outputHeight
        self.filter = filter
        self.name = name
        self.plugin = plugin
        self.instance = instance
        self.vtable = vtable
        let scale = outputWidth == width && outputHeight == height ? "" : " \(width)x\(height) -> \(outputWidth)x\(outputHeight) \(filter.name)"
        context = "\(plugin.name) \(name) converter (\(source.name) -> \(target.name)\(scale))"
    }

    deinit { vtable.pointee.destroy(instance) }

    /// Starts `c`'s converter: the plugin's converter config (the size and filter only when
    /// `c` ``MediaRegistry/Converter/scales``), its create call, and a check of the vtable it
    /// returns (``MediaRegistry`` only chooses the converters to try, in order).
    /// - Parameters:
    ///   - errorBuffer: where the plugin writes why it refused (`size` bytes).
    /// - Returns: the plugin's status, with the converter when it made one (nil: refused).
    /// - Throws: `.pluginABI` when the vtable returned is incomplete (the instance is destroyed).
    static func make(_ c: MediaRegistry.Converter, from source: PixelFormat, to target: PixelFormat, width: Int, height: Int,
                     outputWidth outW: Int, outputHeight outH: Int, filter: ScaleFilter, colorRange: ColorRange,
                     colorSpace: ColorMatrix, errorBuffer errbuf: UnsafeMutablePointer<CChar>, size errsize: Int)
        throws -> (Int32, PictureConverter?) {
        var cfg = mk_plugin_converter_config()
        cfg.struct_size = UInt32(MemoryLayout<mk_plugin_converter_config>.size)
        cfg.src_format = source.rawValue
        cfg.dst_format = target.rawValue
        cfg.width = Int32(clamping: width)
        cfg.height = Int32(clamping: height)
        cfg.color_range = Int32(clamping: colorRange.rawValue)
        cfg.color_space = Int32(clamping: colorSpace.rawValue)
        if c.scales {
            cfg.dst_width = Int32(clamping: outW)
            cfg.dst_height = Int32(clamping: outH)
            cfg.scale_filter = filter.rawValue
        }
        var instance: UnsafeMutableRawPointer?
        var vt: UnsafePointer<mk_plugin_converter_vtable>?
        let status = c.raw.pointee.create(&cfg, &instance, &vt, errbuf, errsize)
        guard status == MK_OK, let instance, let vt else { return (status, nil) }
        guard vt.pointee.struct_size >= PluginLoader.endOf(\mk_plugin_converter_vtable.last_error),
              vt.pointee.convert != nil, vt.pointee.destroy != nil, vt.pointee.last_error != nil else {
            vt.pointee.destroy?(instance)   // what can be freed is
            throw MediaError(.pluginABI, "the \(c.plugin.name) \(c.name) converter returned an incomplete vtable", path: c.plugin.path)
        }
        return (status, PictureConverter(source: source, target: target, width: width, height: height,
                                         outputWidth: outW, outputHeight: outH, filter: filter, name: c.name,
                                         plugin: c.plugin, instance: instance, vtable: vt))
    }

    /// Returns `frame` in ``target`` format at ``outputWidth`` x ``outputHeight``; every
    /// other property (timestamps, colour description) is kept, and a known sample aspect
    /// ratio is scaled with the picture so that it shows with the same shape (as FFmpeg's
    /// scale filter does).
    /// - Throws: `.invalidArgument` for a frame of another format or size than the
    ///   converter was made for; the plugin's error when the conversion fails.
    public func convert(_ frame: Frame) throws -> Frame {
        guard frame.pixelFormat == source, frame.width == width, frame.height == height else {
            throw MediaError(.invalidArgument, "made for \(width)x\(height) \(source.name) pictures, given \(frame.width)x\(frame.height) \(frame.pixelFormat?.name ?? "audio")", context: context)
        }
        var src = mk_plugin_frame()
        src.struct_size = UInt32(MemoryLayout<mk_plugin_frame>.size)
        src.media_type = MK_MEDIA_VIDEO
        src.format = source.rawValue
        src.flags = frame.isKeyframe ? MK_PACKET_FLAG_KEY : 0
        src.pts = frame.pts
        src.duration = frame.duration
        src.width = Int32(width)
        src.height = Int32(height)
        src.color_range = Int32(clamping: frame.colorRange.rawValue)
        src.color_primaries = Int32(clamping: frame.colorPrimaries.rawValue)
        src.color_trc = Int32(clamping: frame.colorTransfer.rawValue)
        src.color_space = Int32(clamping: frame.colorSpace.rawValue)
        src.sar_num = Int32(clamping: frame.sampleAspectRatio.numerator)
        src.sar_den = Int32(clamping: frame.sampleAspectRatio.denominator)
        src.chroma_location = Int32(clamping: frame.chromaLocation.rawValue)
        src.plane_count = Int32(frame.planes.count)
        withUnsafeMutableBytes(of: &src.planes) { raw in
            let p = raw.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
            for (i, plane) in frame.planes.prefix(8).enumerated() { p[i] = UnsafeMutablePointer(mutating: plane.base.assumingMemoryBound(to: UInt8.self)) }
        }
        withUnsafeMutableBytes(of: &src.strides) { raw in
            let s = raw.bindMemory(to: Int64.self)
            for (i, plane) in frame.planes.prefix(8).enumerated() { s[i] = Int64(plane.stride) }
        }
        var dst = mk_plugin_frame()
        dst.struct_size = UInt32(MemoryLayout<mk_plugin_frame>.size)
        let status = withExtendedLifetime(frame.storage) { vtable.pointee.convert(instance, &src, &dst) }
        guard status == MK_OK else {
            let detail = vtable.pointee.last_error.flatMap { $0(instance) }.map { String(cString: $0) } ?? ""
            throw MediaError(pluginStatus: status, "converting a picture (pts \(frame.pts))", detail: detail, context: context)
        }
        var out = try Frame(plugin: dst, timeBase: frame.timeBase, context: context)
        guard out.pixelFormat == target, out.width == outputWidth, out.height == outputHeight else {
            throw MediaError(.pluginABI, "returned a \(out.width)x\(out.height) \(out.pixelFormat?.name ?? "?") picture", context: context)
        }
        let sar = frame.sampleAspectRatio
        if sar.numerator != 0 && (outputWidth != width || outputHeight != height) {
            out.sampleAspectRatio = Track.reduced(sar.numerator * Int64(outputHeight * width), sar.denominator * Int64(outputWidth * height))
        } else {
            out.sampleAspectRatio = sar
        }
        return out
    }
}
