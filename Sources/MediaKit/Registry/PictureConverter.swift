import CMediaKitPlugin

/// Changes the pixel format of decoded pictures (bit depth, chroma subsampling,
/// planar or semi-planar layout) without changing their size, through a plugin's
/// picture converter: the FFmpeg plugin's is libswscale, set up as the `ffmpeg`
/// tool sets it up, so `yuv420p10le` or `yuv444p` pictures become the same NV12
/// bytes as `ffmpeg -pix_fmt nv12` writes.
///
/// Make one with ``MediaRegistry/makePictureConverter(from:to:width:height:colorRange:colorSpace:)``,
/// or let a ``PicturePipeline`` make and keep one.
/// One converter is used by one thread at a time; the frames it returns may be
/// used and released on any thread.
public final class PictureConverter: @unchecked Sendable {
    /// The pixel format of the pictures it takes.
    public let source: PixelFormat
    /// The pixel format of the pictures it returns.
    public let target: PixelFormat
    /// The picture size it takes and returns.
    public let width: Int, height: Int
    /// The converter's name within its plugin ("swscale").
    public let name: String
    /// The plugin that carries it.
    public let plugin: MediaRegistry.Plugin
    private let instance: UnsafeMutableRawPointer
    private let vtable: UnsafePointer<mk_plugin_converter_vtable>
    private let context: String

    init(source: PixelFormat, target: PixelFormat, width: Int, height: Int, name: String, plugin: MediaRegistry.Plugin,
         instance: UnsafeMutableRawPointer, vtable: UnsafePointer<mk_plugin_converter_vtable>) {
        self.source = source
        self.target = target
        self.width = width
        self.height = height
        self.name = name
        self.plugin = plugin
        self.instance = instance
        self.vtable = vtable
        context = "\(plugin.name) \(name) converter (\(source.name) -> \(target.name))"
    }

    deinit { vtable.pointee.destroy(instance) }

    /// Returns `frame` in ``target`` format; every other property (timestamps, colour
    /// description, aspect ratio) is kept.
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
        guard out.pixelFormat == target, out.width == width, out.height == height else {
            throw MediaError(.pluginABI, "returned a \(out.width)x\(out.height) \(out.pixelFormat?.name ?? "?") picture", context: context)
        }
        out.sampleAspectRatio = frame.sampleAspectRatio
        return out
    }
}
