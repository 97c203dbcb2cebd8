import Foundation

/// The old name of the raw layouts pictures are written in, which are pixel formats:
/// `nv12` is ``PixelFormat/nv12``, `i420` ``PixelFormat/yuv420p``, `yuv420p10le`
/// ``PixelFormat/yuv420p10`` (the deprecated aliases ``PixelFormat/i420`` and
/// ``PixelFormat/yuv420p10le`` keep the old case names compiling).
@available(*, deprecated, renamed: "PixelFormat")
public typealias RawPictureFormat = PixelFormat

/// One plane of a packed layout where it lies in memory: `rows` rows of `rowBytes` bytes,
/// `stride` bytes apart (`stride >= rowBytes`; equal when the rows are not padded).
public struct PlaneView: @unchecked Sendable {
    /// The first byte of the first row. Valid while the frame it was taken from is alive.
    public let base: UnsafeRawPointer
    /// Bytes from one row to the next.
    public let stride: Int
    /// Bytes of a row of the layout.
    public let rowBytes: Int
    /// Rows in the plane.
    public let rows: Int
}

/// The one way from a decoded picture to the bytes of a raw layout: turned by an
/// orientation, converted through a plugin's ``PictureConverter`` only when its pixel format
/// does not pack to the layout by copying samples (``needsConversion(_:as:)``) or when it
/// must be scaled to the pipeline's ``size``, then packed.
/// The raw picture writer (``PictureWriter``), the C functions `mk_frame_pack` and
/// `mk_frame_pack_scaled` and Python's `Frame.to_numpy` all go through it, so they write the
/// same bytes as `ffmpeg -f rawvideo -pix_fmt nv12|yuv420p|yuv420p10le` (with its
/// autorotation when an orientation is given, and `-vf scale=W:H:flags=F` after it when a
/// size is).
///
/// A pipeline keeps the converters it last made (for a source format, size and colour
/// range) and makes others when the pictures change. Its methods may be called from any
/// thread, and conversions on different threads run at the same time: a converter converts
/// one picture at a time, so a thread takes one out of the pipeline's cache for the
/// conversion (or makes one when none is free) and puts it back after.
public final class PicturePipeline: @unchecked Sendable {
    /// The layout pictures are packed as: a pixel format, its planes without padding
    /// (``PixelFormat/planes(width:height:)``). ``layouts`` are those the raw writers offer.
    public let layout: PixelFormat

    /// The layouts the raw picture writers offer (mk-decode's `--pixel-format`, the C API's
    /// `MK_PACK_*`): NV12, I420 (``PixelFormat/yuv420p``), ``PixelFormat/yuv420p10``, the 10-bit
    /// biplanar ``PixelFormat/p010`` (VideoToolbox's `kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange`,
    /// `ffmpeg -pix_fmt p010le`: each sample in the high 10 bits of a little-endian uint16), and for
    /// models the packed RGB and gray forms (``PixelFormat/rgb24``, ``PixelFormat/bgr24``,
    /// ``PixelFormat/rgba``, ``PixelFormat/bgra``, ``PixelFormat/gray8``,
    /// ``PixelFormat/gray16``, ``PixelFormat/rgb48``), whose bytes are those of
    /// `ffmpeg -pix_fmt rgb24` (and the others) through the FFmpeg plugin's converter.
    public static let layouts: [PixelFormat] = [.nv12, .yuv420p, .yuv420p10, .p010, .rgb24, .bgr24, .rgba, .bgra, .gray8, .gray16, .rgb48]
    /// How every picture is turned first (``PictureOrientation/upright``: not at all).
    public let orientation: PictureOrientation
    /// Where picture converters come from.
    public let registry: MediaRegistry
    /// The size every picture is scaled to after it is turned, or nil to keep each one's.
    public let size: (width: Int, height: Int)?
    /// How pictures are resampled when they are scaled (and when their chroma is).
    public let filter: ScaleFilter
    /// True: full-range 8-bit 4:2:0 pictures packed as NV12 or I420 stay full range (their
    /// samples copied, as VideoToolbox's `kCVPixelFormatType_420YpCbCr8BiPlanarFullRange`
    /// output and `ffmpeg -vf scale=out_range=full` give them); limited-range pictures stay
    /// limited. False (the default): full range is brought to limited, as `ffmpeg -pix_fmt`.
    public let keepsFullRange: Bool
    private let lock = NSLock()
    /// Under `lock`: the converters not in use, with the colour range and matrix each was
    /// made for, the most recently returned last.
    private var idle: [(converter: PictureConverter, range: ColorRange, matrix: ColorMatrix)] = []

    /// Creates a pipeline to `layout`, turning pictures by `orientation` (default: upright),
    /// then scaling them to `size` (default nil: not at all) with `filter` (default
    /// ``ScaleFilter/bicubic``, as the `ffmpeg` tool), converting them with picture converters
    /// from `registry` (default: ``MediaRegistry/shared``).
    /// With `keepsFullRange` (default false), full-range pictures stay full range (see ``keepsFullRange``).
    public init(layout: PixelFormat, orientation: PictureOrientation = .upright, size: (width: Int, height: Int)? = nil,
                filter: ScaleFilter = .bicubic, registry: MediaRegistry = .shared, keepsFullRange: Bool = false) {
        self.layout = layout
        self.keepsFullRange = keepsFullRange
        self.orientation = orientation
        self.size = size
        self.filter = filter
        self.registry = registry
    }

    /// The width and height of `frame` as packed: ``size`` when set, else the frame's
    /// (swapped by a quarter turn).
    public func outputSize(of frame: Frame) -> (width: Int, height: Int) {
        size ?? turnedSize(of: frame)
    }

    /// The frame's size once turned by ``orientation``.
    private func turnedSize(of frame: Frame) -> (width: Int, height: Int) {
        orientation.transposed ? (frame.height, frame.width) : (frame.width, frame.height)
    }

    /// True when `frame` goes through a picture converter on its way to this pipeline's
    /// layout: its pixel format needs it (``needsConversion(_:as:)``), or it must be scaled.
    public func needsConversion(_ frame: Frame) -> Bool {
        guard let f = frame.pixelFormat else { return false }
        if needsScaling(frame) { return true }
        if keepsFullRange && (f == .yuvj420p || frame.colorRange == .full) && Self.canPack(f, as: layout) { return false }
        return Self.needsConversion(frame, as: layout)
    }

    /// True when the turned frame is not of ``size``. As FFmpeg's scale filter, a picture
    /// already of that size is left as it is (and only converted if its format needs it).
    private func needsScaling(_ frame: Frame) -> Bool {
        guard let size else { return false }
        let turned = turnedSize(of: frame)
        return turned.width != size.width || turned.height != size.height
    }

    /// True when `frame` must go through a ``PictureConverter`` before it is packed as
    /// `layout`, to give the bytes `ffmpeg -pix_fmt` gives. FFmpeg converts whenever the
    /// decoded format differs from the output format, and its converter (libswscale) then
    /// also brings full-range pictures to the limited range of the YUV output; a picture
    /// already in the output format is copied whatever its range. So: no conversion for the
    /// same format, nor for NV12 <-> yuv420p interleaving of limited-range pictures; a
    /// conversion for everything else (10-bit, 4:4:4, 4:2:2, full range as yuvj420p or as
    /// yuv420p flagged full range). False for an audio frame.
    public static func needsConversion(_ frame: Frame, as layout: PixelFormat) -> Bool {
        guard let f = frame.pixelFormat else { return false }
        if f == layout { return false }
        if f == .yuvj420p || frame.colorRange == .full { return true }
        return !canPack(f, as: layout)
    }

    /// Pixel formats that pack to `layout` without any resampling or change of value
    /// (copying, interleaving or splitting samples): 8-bit 4:2:0 (yuv420p, yuvj420p, NV12)
    /// for NV12 / I420 (``PixelFormat/yuv420p``); for any other layout, the layout itself.
    public static func canPack(_ f: PixelFormat, as layout: PixelFormat) -> Bool {
        layout == .nv12 || layout == .yuv420p ? (f == .yuv420p || f == .yuvj420p || f == .nv12) : f == layout
    }

    // MARK: turning and converting

    /// Returns `frame` turned and, when ``needsConversion(_:)``, converted (and scaled to
    /// ``size``): a picture that packs to ``layout`` by copying samples (the frame itself when
    /// there is nothing to do). FFmpeg turns pictures before converting them, except where its
    /// transpose filter cannot take the format (a quarter turn of 4:2:2): then the conversion
    /// comes first, and the scaling after the turn.
    /// - Throws: `.invalidArgument` for an audio frame; the turn's error (see
    ///   ``Frame/oriented(_:)``); `.notFound` when no plugin has the converter; the converter's error.
    public func prepare(_ frame: Frame) throws -> Frame {
        guard let source = frame.pixelFormat else {
            throw MediaError(.invalidArgument, "an audio frame was given to a picture pipeline")
        }
        guard needsConversion(frame) else { return try frame.oriented(orientation) }
        if orientation.transposed && source.chromaShift.x != source.chromaShift.y {
            let turned = try convert(frame, to: (frame.width, frame.height)).oriented(orientation)
            let target = size ?? (turned.width, turned.height)
            return target == (turned.width, turned.height) ? turned : try convert(turned, to: target)
        }
        let turned = try frame.oriented(orientation)
        return try convert(turned, to: size ?? (turned.width, turned.height))
    }

    /// Idle converters a pipeline keeps: the 4:2:2 quarter turn uses two at once, and two
    /// threads may each be converting.
    private static let cacheLimit = 4

    /// Converts `frame` to the layout's pixel format at `size` with a cached converter, made
    /// anew when the source format, size or range changed. The conversion itself runs outside
    /// the pipeline's lock, on a converter no other thread holds meanwhile.
    private func convert(_ frame: Frame, to size: (width: Int, height: Int)) throws -> Frame {
        guard let source = frame.pixelFormat else { throw MediaError(.invalidArgument, "not a video frame") }
        let range = frame.colorRange, matrix = frame.colorSpace
        let taken: PictureConverter? = lock.withLock {
            let i = idle.lastIndex { e in
                let c = e.converter
                return c.source == source && c.width == frame.width && c.height == frame.height && e.range == range && e.matrix == matrix
                    && c.outputWidth == size.width && c.outputHeight == size.height
            }
            return i.map { idle.remove(at: $0).converter }
        }
        let converter = try taken ?? registry.makePictureConverter(from: source, to: layout, width: frame.width, height: frame.height,
                                                                   outputWidth: size.width, outputHeight: size.height, filter: filter,
                                                                   colorRange: range, colorSpace: frame.colorSpace)
        defer {
            lock.withLock {
                idle.append((converter, range, matrix))
                if idle.count > Self.cacheLimit { idle.removeFirst() }   // the least recently used goes
            }
        }
        return try converter.convert(frame)
    }

    // MARK: packing

    /// Turns, converts and scales when needed and packs `frame` into `output`, which must hold
    /// `layout.frameSize` of the picture as packed (``outputSize(of:)``).
    /// - Throws: as ``prepare(_:)``; `.invalidArgument` when `output` is too small.
    public func pack(_ frame: Frame, into output: UnsafeMutableBufferPointer<UInt8>) throws {
        try Self.pack(prepare(frame), as: layout, into: output)
    }

    /// Packs a picture that needs no conversion (see ``prepare(_:)``) into `output`, resized
    /// to the picture's size.
    /// - Throws: as the buffer form of `pack(_:as:into:)`.
    public static func pack(_ frame: Frame, as layout: PixelFormat, into output: inout [UInt8]) throws {
        let size = layout.frameSize(width: frame.width, height: frame.height)
        if output.count != size { output = [UInt8](repeating: 0, count: size) }
        try output.withUnsafeMutableBufferPointer { try pack(frame, as: layout, into: $0) }
    }

    /// Packs a picture whose format ``canPack(_:as:)`` into `output`, which must hold at
    /// least `layout.frameSize(width:height:)` bytes: plane by plane, rows without padding.
    /// - Throws: `.unsupported` for a format that needs a conversion first (naming it and
    ///   what to ask for instead), `.invalidArgument` for an audio frame or when `output` is too small.
    public static func pack(_ frame: Frame, as layout: PixelFormat, into output: UnsafeMutableBufferPointer<UInt8>) throws {
        try check(frame, as: layout)
        let need = layout.frameSize(width: frame.width, height: frame.height)
        guard output.count >= need, let out = output.baseAddress else {
            throw MediaError(.invalidArgument, "the buffer holds \(output.count) bytes, a \(frame.width)x\(frame.height) \(layout.name) picture needs \(need)")
        }
        var offset = 0
        withExtendedLifetime(frame.storage) {
            for (i, p) in layout.planes(width: frame.width, height: frame.height).enumerated() {
                packPlane(i, of: frame, as: layout, into: out + offset)
                offset += p.rowBytes * p.rows
            }
        }
    }

    /// Calls `body` with the packed picture as pieces to write one after the other: planes
    /// the frame already holds without row padding come straight from its memory, the others
    /// are packed into `scratch` (resized as needed) first. For writers of files and pipes.
    /// - Throws: as the buffer form of `pack(_:as:into:)`, and what `body` throws.
    public static func withPackedPieces<R>(_ frame: Frame, as layout: PixelFormat, scratch: inout [UInt8],
                                           _ body: ([UnsafeRawBufferPointer]) throws -> R) throws -> R {
        try check(frame, as: layout)
        let shapes = layout.planes(width: frame.width, height: frame.height)
        let direct = shapes.indices.map { i in view(i, of: frame, as: layout).flatMap { $0.stride == $0.rowBytes ? $0 : nil } }
        let packedBytes = shapes.indices.reduce(0) { direct[$1] == nil ? $0 + shapes[$1].rowBytes * shapes[$1].rows : $0 }
        if scratch.count < packedBytes { scratch = [UInt8](repeating: 0, count: packedBytes) }
        return try withExtendedLifetime(frame.storage) {
            try scratch.withUnsafeMutableBytes { buffer in
                var pieces: [UnsafeRawBufferPointer] = [], offset = 0
                for (i, shape) in shapes.enumerated() {
                    let bytes = shape.rowBytes * shape.rows
                    if let v = direct[i] {
                        pieces.append(UnsafeRawBufferPointer(start: v.base, count: bytes))
                    } else {
                        let dst = buffer.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self)
                        packPlane(i, of: frame, as: layout, into: dst)
                        pieces.append(UnsafeRawBufferPointer(start: dst, count: bytes))
                        offset += bytes
                    }
                }
                return try body(pieces)
            }
        }
    }

    /// The planes of `layout` where `frame`'s memory already holds them sample for sample
    /// (rows perhaps padded), or nil when the picture needs a conversion or packing
    /// (interleaving, splitting) to become `layout`: an NV12 picture as ``PixelFormat/nv12``,
    /// a yuv420p picture as ``PixelFormat/yuv420p`` (whatever its range, as ffmpeg copies it). The views borrow the
    /// frame's memory: they are valid while `frame` (or a copy of it) is alive.
    public static func views(of frame: Frame, as layout: PixelFormat) -> [PlaneView]? {
        guard frame.pixelFormat != nil, !needsConversion(frame, as: layout) else { return nil }
        var views: [PlaneView] = []
        for i in layout.planes(width: frame.width, height: frame.height).indices {
            guard let v = view(i, of: frame, as: layout) else { return nil }
            views.append(v)
        }
        return views
    }

    private static func check(_ frame: Frame, as layout: PixelFormat) throws {
        guard let src = frame.pixelFormat else {
            throw MediaError(.invalidArgument, "not a video frame")
        }
        guard canPack(src, as: layout), frame.planes.count >= src.planeCount else {
            throw MediaError(.unsupported, "decoded pictures are \(src.name); packing them as \(layout.name) needs a conversion first (PicturePipeline.prepare, or a PictureConverter to \(layout.name))")
        }
    }

    /// Plane `i` of `layout` where `frame` holds it sample for sample, or nil when it must be
    /// interleaved (planar U, V into NV12's UV) or split (NV12's UV into U, V).
    private static func view(_ i: Int, of frame: Frame, as layout: PixelFormat) -> PlaneView? {
        guard let src = frame.pixelFormat, canPack(src, as: layout), i < frame.planes.count else { return nil }
        let semiPlanar = src == .nv12
        guard i == 0 || semiPlanar == (layout == .nv12) else { return nil }
        let shape = layout.planes(width: frame.width, height: frame.height)[i]
        let p = frame.planes[i]
        guard shape.rows > 0, p.stride >= shape.rowBytes, p.length >= p.stride * (shape.rows - 1) + shape.rowBytes else { return nil }
        return PlaneView(base: p.base, stride: p.stride, rowBytes: shape.rowBytes, rows: shape.rows)
    }

    /// Writes plane `i` of `layout` from `frame` (a format that ``canPack(_:as:)``) to `dst`,
    /// rows without padding. The one place NV12's chroma is interleaved and split.
    private static func packPlane(_ i: Int, of frame: Frame, as layout: PixelFormat, into dst: UnsafeMutablePointer<UInt8>) {
        let shape = layout.planes(width: frame.width, height: frame.height)[i]
        if let v = view(i, of: frame, as: layout) {
            copyRows(v, to: dst)
            return
        }
        let cw = (frame.width + 1) / 2, rows = shape.rows
        if layout == .nv12 {
            // Planar U and V into interleaved UV.
            let u = frame.planes[1], v = frame.planes[2]
            for y in 0..<rows {
                let su = u.base.assumingMemoryBound(to: UInt8.self) + y * u.stride
                let sv = v.base.assumingMemoryBound(to: UInt8.self) + y * v.stride
                let d = dst + y * 2 * cw
                for x in 0..<cw { d[2 * x] = su[x]; d[2 * x + 1] = sv[x] }
            }
        } else {
            // NV12's UV into U (plane 1) or V (plane 2).
            let uv = frame.planes[1], first = i - 1
            for y in 0..<rows {
                let s = uv.base.assumingMemoryBound(to: UInt8.self) + y * uv.stride + first
                let d = dst + y * cw
                for x in 0..<cw { d[x] = s[2 * x] }
            }
        }
    }

    @inline(__always)
    private static func copyRows(_ p: PlaneView, to dst: UnsafeMutablePointer<UInt8>) {
        let src = p.base.assumingMemoryBound(to: UInt8.self)
        if p.stride == p.rowBytes {
            dst.update(from: src, count: p.rowBytes * p.rows)
            return
        }
        for y in 0..<p.rows {
            (dst + y * p.rowBytes).update(from: src + y * p.stride, count: p.rowBytes)
        }
    }
}
