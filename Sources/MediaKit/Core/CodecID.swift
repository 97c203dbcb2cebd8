/// A codec's identity, spelled as FFmpeg names it ("h264", "aac", "opus" ...): the key that
/// joins a track's ``CodecParameters`` to a plugin's decoder backend.
///
/// A typed value rather than a free string, so a name is written once (``h264``, ``aac`` ...)
/// and a typo is a compile error; any other FFmpeg name is written as a literal
/// (`let id: CodecID = "pcm_s24le"`) or with ``init(_:)``. ``unknown`` (the empty name) is a
/// stream MediaKit cannot name.
public struct CodecID: RawRepresentable, Hashable, Sendable, Comparable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// FFmpeg's name of the codec; empty for ``unknown``.
    public let rawValue: String

    /// The codec FFmpeg calls `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// The codec FFmpeg calls `name`.
    public init(_ name: String) { self.rawValue = name }
    /// The codec FFmpeg calls `value` (`let id: CodecID = "h264"`).
    public init(stringLiteral value: String) { self.rawValue = value }

    /// FFmpeg's name.
    public var description: String { rawValue }
    /// True for ``unknown``: a stream MediaKit cannot name.
    public var isUnknown: Bool { rawValue.isEmpty }

    /// Orders by name (for listings).
    public static func < (a: CodecID, b: CodecID) -> Bool { a.rawValue < b.rawValue }

    /// No codec MediaKit can name.
    public static let unknown = CodecID("")
    /// H.264 / AVC.
    public static let h264 = CodecID("h264")
    /// H.265 / HEVC.
    public static let hevc = CodecID("hevc")
    /// AV1.
    public static let av1 = CodecID("av1")
    /// VP8.
    public static let vp8 = CodecID("vp8")
    /// VP9.
    public static let vp9 = CodecID("vp9")
    /// MPEG-4 part 2.
    public static let mpeg4 = CodecID("mpeg4")
    /// Motion JPEG.
    public static let mjpeg = CodecID("mjpeg")
    /// Theora.
    public static let theora = CodecID("theora")
    /// AAC (every profile: LC, HE-AAC, HE-AACv2).
    public static let aac = CodecID("aac")
    /// AAC in LATM (ISO/IEC 14496-3 1.7), as MPEG-TS carries it in LOAS frames (stream type
    /// 0x11, DVB): each packet one AudioMuxElement behind its LOAS sync header, the
    /// configuration in band (FFmpeg's `aac_latm` decoder).
    public static let aacLATM = CodecID("aac_latm")
    /// MPEG-1/2 Audio Layer III.
    public static let mp3 = CodecID("mp3")
    /// MPEG-1/2 Audio Layer II.
    public static let mp2 = CodecID("mp2")
    /// Opus.
    public static let opus = CodecID("opus")
    /// Vorbis.
    public static let vorbis = CodecID("vorbis")
    /// FLAC.
    public static let flac = CodecID("flac")
    /// Apple Lossless.
    public static let alac = CodecID("alac")
    /// AC-3.
    public static let ac3 = CodecID("ac3")
    /// E-AC-3.
    public static let eac3 = CodecID("eac3")
    /// ID3 tags timed by their PES timestamps (the "timed metadata" of HLS in MPEG-TS: stream
    /// type 0x15 with a metadata descriptor, or an "ID3 " registration): a data stream.
    public static let timedID3 = CodecID("timed_id3")
}
