/// How audio samples are stored: the sample type (width, encoding and byte order) and the
/// layout (interleaved, or one plane per channel). The one sample-format type of MediaKit:
/// decoded frames, ``AudioFormat``, the audio converter, the PCM writers and the encoders all
/// use it. The raw values are the C API's `MK_SAMPLES_*` codes (values 13 and up came later:
/// an older host or plugin knows 1 to 12 only).
///
/// Decoders give the native types (``u8``, ``s16``, ``s32``, ``f32``, ``f64`` and planar
/// forms); the others are storage variants the converter and the raw writers take: packed
/// 24-bit, big-endian (AIFF's and FFmpeg's `s16be` ... raw formats), signed 8-bit, and 24 bits
/// in 32. Moving between a variant and its native type (``s16be`` and ``s16``, ``s8`` and
/// ``u8``, the 24-bit forms among themselves) is lossless.
public enum SampleFormat: Int32, Sendable, CaseIterable {
    /// Unsigned 8-bit, interleaved; 0x80 is silence.
    case u8 = 1
    /// Signed 16-bit little-endian, interleaved.
    case s16 = 2
    /// Signed 32-bit little-endian, interleaved.
    case s32 = 3
    /// 32-bit IEEE float little-endian, interleaved; full scale is [-1, 1].
    case f32 = 4
    /// 64-bit IEEE float little-endian, interleaved; full scale is [-1, 1].
    case f64 = 5
    /// Unsigned 8-bit, one plane per channel.
    case u8Planar = 6
    /// Signed 16-bit, one plane per channel.
    case s16Planar = 7
    /// Signed 32-bit, one plane per channel.
    case s32Planar = 8
    /// 32-bit float, one plane per channel.
    case f32Planar = 9
    /// 64-bit float, one plane per channel.
    case f64Planar = 10
    /// Signed 24-bit little-endian packed in 3 bytes, interleaved (converter and writer
    /// formats: no decoder outputs it).
    case s24 = 11
    /// Signed 24-bit packed in 3 bytes, one plane per channel.
    case s24Planar = 12
    /// Signed 8-bit, interleaved; 0 is silence (FFmpeg's `s8`: ``u8`` with the top bit flipped).
    case s8 = 13
    /// Signed 8-bit, one plane per channel.
    case s8Planar = 14
    /// Signed 16-bit big-endian, interleaved (FFmpeg's `s16be`, AIFF's 16-bit samples).
    case s16be = 15
    /// Signed 16-bit big-endian, one plane per channel.
    case s16bePlanar = 16
    /// Signed 24-bit big-endian packed in 3 bytes, interleaved (FFmpeg's `s24be`).
    case s24be = 17
    /// Signed 24-bit big-endian packed in 3 bytes, one plane per channel.
    case s24bePlanar = 18
    /// Signed 32-bit big-endian, interleaved (FFmpeg's `s32be`).
    case s32be = 19
    /// Signed 32-bit big-endian, one plane per channel.
    case s32bePlanar = 20
    /// 32-bit IEEE float big-endian, interleaved (FFmpeg's `f32be`).
    case f32be = 21
    /// 32-bit IEEE float big-endian, one plane per channel.
    case f32bePlanar = 22
    /// 64-bit IEEE float big-endian, interleaved (FFmpeg's `f64be`).
    case f64be = 23
    /// 64-bit IEEE float big-endian, one plane per channel.
    case f64bePlanar = 24
    /// Signed 24-bit in the high 3 bytes of a 32-bit little-endian word, interleaved: an
    /// ``s32`` whose low byte is zero (CoreAudio's "aligned high", WAV's 24-in-32). The low
    /// byte is ignored when read.
    case s24In32High = 25
    /// 24-bit aligned high in 32 bits, one plane per channel.
    case s24In32HighPlanar = 26
    /// Signed 24-bit in the low 3 bytes of a 32-bit little-endian word, sign-extended,
    /// interleaved (CoreAudio's "aligned low"): the 24-bit value as an Int32. The high byte
    /// is ignored when read.
    case s24In32Low = 27
    /// 24-bit aligned low in 32 bits, one plane per channel.
    case s24In32LowPlanar = 28

    /// The interleaved types, in raw-value order.
    private static let types: [SampleFormat] = [.u8, .s16, .s32, .f32, .f64, .s24, .s8, .s16be, .s24be, .s32be, .f32be,
                                                .f64be, .s24In32High, .s24In32Low]

    /// Bytes per sample of one channel.
    public var bytesPerSample: Int {
        switch interleaved {
        case .u8, .s8: return 1
        case .s16, .s16be: return 2
        case .s24, .s24be: return 3
        case .f64, .f64be: return 8
        default: return 4
        }
    }

    /// True when each channel has its own plane.
    public var isPlanar: Bool {
        rawValue <= 12 ? (6...10).contains(rawValue) || rawValue == 12 : rawValue % 2 == 0
    }

    /// True for the float types (``f32``, ``f64``, their big-endian and planar forms).
    public var isFloat: Bool {
        switch interleaved {
        case .f32, .f64, .f32be, .f64be: return true
        default: return false
        }
    }

    /// True for the big-endian types (``s16be``, ``s24be``, ``s32be``, ``f32be``, ``f64be``
    /// and their planar forms).
    public var isBigEndian: Bool { (15...24).contains(rawValue) }

    /// The same sample type, interleaved (``s16Planar`` gives ``s16``; interleaved formats give themselves).
    public var interleaved: SampleFormat {
        switch rawValue {
        case 6...10: return SampleFormat(rawValue: rawValue - 5)!
        case 12: return .s24
        case 13...: return rawValue % 2 == 0 ? SampleFormat(rawValue: rawValue - 1)! : self
        default: return self
        }
    }

    /// The same sample type, one plane per channel (``s16`` gives ``s16Planar``).
    public var planar: SampleFormat {
        switch rawValue {
        case 1...5: return SampleFormat(rawValue: rawValue + 5)!
        case 11: return .s24Planar
        case 13...: return rawValue % 2 == 1 ? SampleFormat(rawValue: rawValue + 1)! : self
        default: return self
        }
    }

    /// FFmpeg's name for the format ("s16", "fltp", "s16be" ...): its sample-format names for
    /// the native types, its raw-format names for the big-endian types and ``s8``. FFmpeg has
    /// no 24-bit sample format nor planar big-endian: ``s24`` is "s24", ``s24Planar`` "s24p",
    /// ``s16bePlanar`` "s16bep", ``s24In32High`` "s24in32hi", ``s24In32Low`` "s24in32lo".
    public var name: String {
        switch self {
        case .f32: return "flt"
        case .f64: return "dbl"
        case .f32Planar: return "fltp"
        case .f64Planar: return "dblp"
        default: return typeName + (isPlanar ? "p" : "")
        }
    }

    /// MediaKit's name of the sample type, without the layout: "u8", "s8", "s16", "s24",
    /// "s32", "f32", "f64", "s16be", "s24be", "s32be", "f32be", "f64be", "s24in32hi" or
    /// "s24in32lo" (the names ``init(name:)``, `mk-decode --sample-format` and the Python
    /// bindings take; the big-endian ones and "s8" are also FFmpeg's raw-format names).
    public var typeName: String {
        ["u8", "s16", "s32", "f32", "f64", "s24", "s8", "s16be", "s24be", "s32be", "f32be", "f64be",
         "s24in32hi", "s24in32lo"][Self.types.firstIndex(of: interleaved)!]
    }

    /// Parses a format name: ours (``typeName``: `u8`, `s16`, `s16be`, `s24in32hi` ...),
    /// FFmpeg's (`flt`, `dbl`), or the little-endian spellings (`s16le` ...); a `p` suffix
    /// (`fltp`, `s16p`, `s16bep`) names the planar form. Case is ignored. Nil for an unknown name.
    public init?(name: String) {
        let n = name.lowercased()
        let planar = n.hasSuffix("p") && n.count > 2 && !n.hasSuffix("le")
        let type: SampleFormat
        switch planar ? String(n.dropLast()) : n {
        case "u8": type = .u8
        case "s8": type = .s8
        case "s16", "s16le": type = .s16
        case "s24", "s24le": type = .s24
        case "s32", "s32le": type = .s32
        case "f32", "flt", "f32le": type = .f32
        case "f64", "dbl", "f64le": type = .f64
        case "s16be": type = .s16be
        case "s24be": type = .s24be
        case "s32be": type = .s32be
        case "f32be": type = .f32be
        case "f64be": type = .f64be
        case "s24in32hi": type = .s24In32High
        case "s24in32lo": type = .s24In32Low
        default: return nil
        }
        self = planar ? type.planar : type
    }
}

/// How the pixels of a video frame are stored: the one pixel-format type of MediaKit, for
/// decoded pictures, picture converters and the raw layouts pictures are written in
/// (``PicturePipeline``, ``PictureWriter``: NV12, I420 = ``yuv420p``, ``yuv420p10``). The raw
/// values are the C API's `MK_PIXEL_*` codes.
public enum PixelFormat: Int32, Sendable, CaseIterable {
    /// 8-bit Y, U, V planes, chroma halved both ways (limited range).
    case yuv420p = 1
    /// As ``yuv420p`` with full-range samples.
    case yuvj420p = 2
    /// 8-bit planar, chroma halved horizontally.
    case yuv422p = 3
    /// As ``yuv422p``, full range.
    case yuvj422p = 4
    /// 8-bit planar, full-resolution chroma.
    case yuv444p = 5
    /// As ``yuv444p``, full range.
    case yuvj444p = 6
    /// 8-bit Y plane, then one plane of interleaved U and V, chroma halved both ways.
    case nv12 = 7
    /// 10-bit planar 4:2:0 in little-endian 16-bit words (low bits).
    case yuv420p10 = 8
    /// 10-bit planar 4:2:2.
    case yuv422p10 = 9
    /// 10-bit planar 4:4:4.
    case yuv444p10 = 10
    /// 10-bit semi-planar 4:2:0 in the high bits of 16-bit words.
    case p010 = 11
    /// 8-bit luma only.
    case gray8 = 12
    /// 10-bit luma only.
    case gray10 = 13
    /// 12-bit planar 4:2:0.
    case yuv420p12 = 14
    /// Packed 8-bit R, G, B (full range), one plane of 3 bytes a pixel.
    case rgb24 = 15
    /// Packed 8-bit B, G, R, one plane of 3 bytes a pixel.
    case bgr24 = 16
    /// Packed 8-bit R, G, B, A (alpha 255 from a YUV source), 4 bytes a pixel.
    case rgba = 17
    /// Packed 8-bit B, G, R, A, 4 bytes a pixel.
    case bgra = 18
    /// 16-bit luma only, little-endian (FFmpeg's gray16le).
    case gray16 = 19
    /// Packed 16-bit R, G, B, little-endian words (FFmpeg's rgb48le), 6 bytes a pixel.
    case rgb48 = 20

    /// FFmpeg's name for the format ("yuv420p", "nv12" ...).
    public var name: String {
        ["yuv420p", "yuvj420p", "yuv422p", "yuvj422p", "yuv444p", "yuvj444p", "nv12", "yuv420p10le",
         "yuv422p10le", "yuv444p10le", "p010le", "gray", "gray10le", "yuv420p12le", "rgb24", "bgr24", "rgba", "bgra",
         "gray16le", "rgb48le"][Int(rawValue) - 1]
    }

    /// Bytes per sample (1 for 8-bit formats, 2 otherwise).
    public var bytesPerComponent: Int {
        switch self {
        case .yuv420p, .yuvj420p, .yuv422p, .yuvj422p, .yuv444p, .yuvj444p, .nv12, .gray8, .rgb24, .bgr24, .rgba, .bgra: return 1
        default: return 2
        }
    }

    /// log2 of the horizontal and vertical chroma subsampling.
    public var chromaShift: (x: Int, y: Int) {
        switch self {
        case .yuv420p, .yuvj420p, .nv12, .yuv420p10, .p010, .yuv420p12: return (1, 1)
        case .yuv422p, .yuvj422p, .yuv422p10: return (1, 0)
        case .yuv444p, .yuvj444p, .yuv444p10, .gray8, .gray10, .gray16, .rgb24, .bgr24, .rgba, .bgra, .rgb48: return (0, 0)
        }
    }

    /// Samples a pixel packs in its one plane: 3 for RGB, 4 with alpha, 1 for the others
    /// (whose planes each hold one component).
    public var componentsPerPixel: Int {
        switch self {
        case .rgb24, .bgr24, .rgb48: return 3
        case .rgba, .bgra: return 4
        default: return 1
        }
    }

    /// True for the packed RGB formats (``rgb24``, ``bgr24``, ``rgba``, ``bgra``, ``rgb48``).
    public var isRGB: Bool { componentsPerPixel > 1 }

    /// Number of planes.
    public var planeCount: Int {
        switch self {
        case .nv12, .p010: return 2
        case .gray8, .gray10, .gray16, .rgb24, .bgr24, .rgba, .bgra, .rgb48: return 1
        default: return 3
        }
    }

    /// Parses a pixel format name: FFmpeg's (``name``: "yuv420p", "nv12", "yuv420p10le" ...,
    /// also without the "le"), or "i420" (FFmpeg's yuv420p, as raw-video tools name it).
    /// Case is ignored. Nil for an unknown name.
    public init?(name: String) {
        let n = name.lowercased()
        if n == "i420" { self = .yuv420p; return }
        if n == "gray8" { self = .gray8; return }
        if n == "gray16" { self = .gray16; return }
        guard let f = Self.allCases.first(where: { $0.name == n || ($0.name.hasSuffix("le") && String($0.name.dropLast(2)) == n) }) else {
            return nil
        }
        self = f
    }

    /// The planes of a `width` x `height` picture packed without padding, in order: bytes per
    /// row and rows (odd sizes round the chroma up). NV12 and P010 have two (Y, interleaved
    /// UV), the gray formats one, the others three.
    public func planes(width: Int, height: Int) -> [(rowBytes: Int, rows: Int)] {
        let b = bytesPerComponent, shift = chromaShift
        let cw = (width + (1 << shift.x) - 1) >> shift.x, ch = (height + (1 << shift.y) - 1) >> shift.y
        switch planeCount {
        case 1: return [(width * componentsPerPixel * b, height)]
        case 2: return [(width * b, height), (2 * cw * b, ch)]
        default: return [(width * b, height), (cw * b, ch), (cw * b, ch)]
        }
    }

    /// Bytes of one picture of `width` x `height` packed without padding.
    public func frameSize(width: Int, height: Int) -> Int {
        planes(width: width, height: height).reduce(0) { $0 + $1.rowBytes * $1.rows }
    }

    /// The old name of ``yuv420p`` as a raw layout (`RawPictureFormat.i420`).
    @available(*, deprecated, renamed: "yuv420p")
    public static var i420: PixelFormat { .yuv420p }
    /// The old name of ``yuv420p10`` as a raw layout (`RawPictureFormat.yuv420p10le`).
    @available(*, deprecated, renamed: "yuv420p10")
    public static var yuv420p10le: PixelFormat { .yuv420p10 }
    /// The pixel format itself (a `RawPictureFormat` named the pixel format it packed from).
    @available(*, deprecated, message: "a raw layout is a PixelFormat now: use the value itself")
    public var pixelFormat: PixelFormat { self }
    /// The old name of ``bytesPerComponent`` (`RawPictureFormat.bytesPerSample`).
    @available(*, deprecated, renamed: "bytesPerComponent")
    public var bytesPerSample: Int { bytesPerComponent }
}

/// Owns the memory behind a frame's planes and gives it back (for a plugin
/// frame: calls the plugin's release callback) exactly once, when the last
/// ``Frame`` that refers to it goes away.
public final class FrameStorage: @unchecked Sendable {
    private let release: @Sendable () -> Void
    /// True when nothing changes the planes until `release` runs (memory a plugin or MediaKit
    /// allocated for this frame alone), so that an encoder may keep a reference to them instead
    /// of copying them (plugin ABI 2.5, `mk_plugin_frame.retain`). False for storage made by
    /// ``init(release:)``: a caller's planes are borrowed for the call only.
    let keepsPlanesUnchanged: Bool

    /// Creates storage whose memory is freed by `release`.
    public init(release: @escaping @Sendable () -> Void) {
        self.release = release
        keepsPlanesUnchanged = false
    }

    /// Storage whose memory is freed by `release`; `keepsPlanesUnchanged` when nothing changes
    /// the planes until then (a decoder plugin's frame, a picture MediaKit allocated): an
    /// encoder may keep them past a call without a copy.
    init(keepsPlanesUnchanged: Bool, release: @escaping @Sendable () -> Void) {
        self.release = release
        self.keepsPlanesUnchanged = keepsPlanesUnchanged
    }

    deinit { release() }
}

/// One plane of a frame: a pointer, the bytes per row (video) or per plane
/// (audio), and the number of valid bytes.
public struct Plane: @unchecked Sendable {
    /// Start of the plane. Valid while a ``Frame`` holding it is alive.
    public let base: UnsafeRawPointer
    /// Video: bytes from one row to the next. Audio: bytes in the plane.
    public let stride: Int
    /// Bytes that may be read from `base`.
    public let length: Int

    /// Creates a plane description.
    public init(base: UnsafeRawPointer, stride: Int, length: Int) {
        self.base = base
        self.stride = stride
        self.length = length
    }
}

/// A decoded frame: a picture or a run of audio samples.
///
/// Frames are values; copies share the underlying memory, which is released
/// when the last copy goes away. Planes are read through ``withPlane(_:_:)``.
public struct Frame: Sendable {
    /// Audio or video.
    public var mediaType: MediaType
    /// Presentation timestamp in ``timeBase`` ticks.
    public var pts: Int64
    /// Duration in ``timeBase`` ticks (0 if unknown).
    public var duration: Int64
    /// Seconds per tick.
    public var timeBase: Rational
    /// True for a key frame (video).
    public var isKeyframe: Bool

    /// Video: the pixel format (nil for audio).
    public var pixelFormat: PixelFormat?
    /// Video: width in pixels.
    public var width: Int
    /// Video: height in pixels.
    public var height: Int
    /// Video: the range of the sample values, a ``ColorRange`` code (0 unknown, 1 limited, 2 full).
    public var colorRange: ColorRange
    /// Video: colour primaries, transfer characteristics and matrix (ISO/IEC 23091-4 code points).
    public var colorPrimaries: ColorPrimaries, colorTransfer: ColorTransfer, colorSpace: ColorMatrix
    /// Video: where chroma samples sit, a ``ChromaLocation`` code: 0 unspecified, 1 left (MPEG-2),
    /// 2 center (JPEG), 3 top-left, 4 top, 5 bottom-left, 6 bottom.
    public var chromaLocation = ChromaLocation.unspecified
    /// Video: the shape of one pixel (0/1 when unknown).
    public var sampleAspectRatio = Rational(0, 1)

    /// Audio: the sample format (nil for video).
    public var sampleFormat: SampleFormat?
    /// Audio: samples per second.
    public var sampleRate: Int
    /// Audio: channel count.
    public var channels: Int
    /// Audio: WAVE channel mask (0 if unknown).
    public var channelMask: UInt64
    /// Audio: samples per channel in this frame.
    public var sampleCount: Int

    /// The planes (see ``PixelFormat`` and ``SampleFormat`` for their layout).
    public var planes: [Plane]
    /// Keeps the planes' memory alive.
    public var storage: FrameStorage

    /// Creates a frame over planes kept alive by `storage`.
    public init(mediaType: MediaType, pts: Int64, duration: Int64, timeBase: Rational, isKeyframe: Bool = false,
                pixelFormat: PixelFormat? = nil, width: Int = 0, height: Int = 0, colorRange: ColorRange = .unspecified,
                colorPrimaries: ColorPrimaries = .unspecified, colorTransfer: ColorTransfer = .unspecified, colorSpace: ColorMatrix = .unspecified,
                sampleFormat: SampleFormat? = nil, sampleRate: Int = 0, channels: Int = 0,
                channelMask: UInt64 = 0, sampleCount: Int = 0, planes: [Plane], storage: FrameStorage) {
        self.mediaType = mediaType
        self.pts = pts
        self.duration = duration
        self.timeBase = timeBase
        self.isKeyframe = isKeyframe
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.colorRange = colorRange
        self.colorPrimaries = colorPrimaries
        self.colorTransfer = colorTransfer
        self.colorSpace = colorSpace
        self.sampleFormat = sampleFormat
        self.sampleRate = sampleRate
        self.channels = channels
        self.channelMask = channelMask
        self.sampleCount = sampleCount
        self.planes = planes
        self.storage = storage
    }

    /// Calls `body` with the bytes of plane `index`, kept alive for the call.
    public func withPlane<R>(_ index: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let p = planes[index]
        return try withExtendedLifetime(storage) {
            try body(UnsafeRawBufferPointer(start: p.base, count: p.length))
        }
    }

    /// Video: width and height of plane `index` in samples (chroma planes are subsampled).
    public func planeSize(_ index: Int) -> (width: Int, height: Int) {
        guard let f = pixelFormat else { return (0, 0) }
        if index == 0 { return (width, height) }
        let s = f.chromaShift
        let w = (width + (1 << s.x) - 1) >> s.x
        let h = (height + (1 << s.y) - 1) >> s.y
        return (f == .nv12 || f == .p010) ? (w * 2, h) : (w, h)
    }
}
