import Foundation

/// The kind of data a track carries.
public enum MediaType: String, Sendable, Hashable, CaseIterable {
    /// Sound.
    case audio
    /// Pictures.
    case video
    /// Subtitles and captions.
    case subtitle
    /// Timed metadata, time codes and anything else.
    case data
}

/// Everything a decoder needs to know about a stream, and what a muxer needs
/// to write its sample entry.
public struct CodecParameters: Sendable, Hashable {
    /// Audio, video, subtitle or data.
    public var mediaType: MediaType
    /// The codec, named as FFmpeg names it ("h264", "hevc", "aac", "mp3", "av1",
    /// "opus", "vorbis", ...); ``CodecID/unknown`` when the sample entry is not one MediaKit knows.
    public var codec: CodecID
    /// The container's tag for the codec: the MP4 sample-entry type ("avc1", "mp4a" ...).
    public var codecTag: String
    /// The codec configuration, the "magic cookie": avcC, hvcC, av1C payload,
    /// AudioSpecificConfig, OpusHead, Vorbis headers. Empty if the codec has none.
    public var extradata: [UInt8]
    /// Video: width in pixels (0 if unknown).
    public var width: Int
    /// Video: height in pixels (0 if unknown).
    public var height: Int
    /// Audio: samples per second (0 if unknown).
    public var sampleRate: Int
    /// Audio: channel count (0 if unknown).
    public var channels: Int
    /// Audio: the speaker positions the container states (a WAV channel mask: bit 0 front
    /// left, 1 front right, 2 front centre, 3 LFE ...), 0 when it states none.
    public var channelMask: UInt64 = 0
    /// Bits per coded sample, from the sample entry (0 if unknown).
    public var bitsPerCodedSample: Int
    /// Audio: bytes per packet for constant-size codecs (0 if unknown).
    public var blockAlign: Int
    /// Average bit rate in bits per second, when the container states it (0 otherwise).
    public var bitRate: Int
    /// Video: pixel aspect ratio (`pasp`), 0/1 when not stated.
    public var sampleAspectRatio: Rational
    /// Video: the colour description the container states (an MP4 `colr` box of type `nclx`
    /// or `nclc`), as ISO/IEC 23091-4 code points: range a ``ColorRange`` code (0 unknown, 1 limited, 2 full); primaries,
    /// transfer and matrix 2 when unspecified. Decoded pictures whose bitstream does not say take
    /// these, as FFmpeg's decoders take them from the stream's parameters.
    public var colorRange = ColorRange.unspecified
    /// See ``colorRange``.
    public var colorPrimaries = ColorPrimaries.unspecified, colorTransfer = ColorTransfer.unspecified, colorSpace = ColorMatrix.unspecified
    /// Video: frames a decoder must hold back to output in presentation order
    /// (the B-frame reorder depth, from the container's timestamps); 0 if none.
    public var reorderDepth: Int = 0
    /// The whole sample entry as it was in the source container, so that a
    /// remux can carry over a sample entry it does not understand.
    public var sampleEntry: [UInt8]

    /// Creates parameters; every field not given is zero or empty.
    public init(mediaType: MediaType, codec: CodecID, codecTag: String = "", extradata: [UInt8] = [],
                width: Int = 0, height: Int = 0, sampleRate: Int = 0, channels: Int = 0,
                bitsPerCodedSample: Int = 0, blockAlign: Int = 0, bitRate: Int = 0,
                sampleAspectRatio: Rational = Rational(0, 1), sampleEntry: [UInt8] = []) {
        self.mediaType = mediaType
        self.codec = codec
        self.codecTag = codecTag
        self.extradata = extradata
        self.width = width
        self.height = height
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitsPerCodedSample = bitsPerCodedSample
        self.blockAlign = blockAlign
        self.bitRate = bitRate
        self.sampleAspectRatio = sampleAspectRatio
        self.sampleEntry = sampleEntry
    }
}

/// One entry of a track's edit list: a span of the presentation timeline.
public struct EditListEntry: Sendable, Hashable {
    /// Length of the span, in the movie time scale (``Track/movieTimeScale``).
    public var segmentDuration: Int64
    /// Where the span starts in the media, in the track time base; -1 for an empty edit (a gap).
    public var mediaTime: Int64
    /// Playback rate; 1 for normal play, 0 for a dwell.
    public var mediaRate: Double

    /// Creates an entry.
    public init(segmentDuration: Int64, mediaTime: Int64, mediaRate: Double) {
        self.segmentDuration = segmentDuration
        self.mediaTime = mediaTime
        self.mediaRate = mediaRate
    }

    /// True for an empty edit (no media, a gap in the presentation).
    public var isEmpty: Bool { mediaTime == -1 }
}

/// One track (stream) of a container.
public struct Track: Sendable {
    /// Position among the container's tracks, from 0, in file order (= ffprobe's stream index).
    public var index: Int
    /// The container's own identifier (MP4 track_ID), 0 if none.
    public var id: Int
    /// The codec and its configuration.
    public var parameters: CodecParameters
    /// Seconds per timestamp tick of this track's packets (MP4: 1 / mdhd time scale).
    public var timeBase: Rational
    /// Duration in ``timeBase`` ticks, as the container states it (MP4: mdhd), 0 if unknown.
    public var duration: Int64
    /// ISO 639-2/T language code ("und" when unknown).
    public var language: String
    /// Display rotation in degrees, counter-clockwise, in (-180, 180]: the sign
    /// convention of FFmpeg's display matrix (`ffprobe ... side_data_list rotation`).
    public var rotation: Double
    /// True when the display matrix also mirrors the picture (a negative determinant: a
    /// rotation with a reflection, e.g. the matrix [0 1; 1 0]). ``orientation`` says how.
    public var isReflected: Bool {
        matrix.count == 9 && Int64(matrix[0]) * Int64(matrix[4]) - Int64(matrix[1]) * Int64(matrix[3]) < 0
    }
    /// How a picture of this track is turned upright for display, as FFmpeg's autorotation
    /// turns it (rotation and reflection; see ``PictureOrientation/init(displayMatrix:)``).
    public var orientation: PictureOrientation { PictureOrientation(displayMatrix: matrix) }
    /// The 3x3 transformation matrix from the track header, row-major
    /// (a, b, u, c, d, v, x, y, w), in 16.16 fixed point (u, v, w in 2.30). Identity if none.
    public var matrix: [Int32]
    /// Number of samples (packets) in the track.
    public var sampleCount: Int
    /// The edit list: how media time maps to presentation time. Empty when none.
    public var editList: [EditListEntry]
    /// Ticks per second of the movie (MP4 mvhd time scale), the unit of edit durations.
    public var movieTimeScale: Int64
    /// Why MediaKit cannot decode this track, if it cannot (an unknown sample entry,
    /// encryption ...). The track is still listed and its packets still read.
    public var unsupportedReason: String?
    /// True when the track is encrypted (encv / enca sample entries).
    public var isEncrypted: Bool
    /// Video: frames per second. The constant rate when the sample durations say so
    /// (one duration, or one and a different last), else the average; 0/1 when unknown.
    public var frameRate = Rational(0, 1)
    /// Audio: encoder delay (priming) in samples from an iTunes `iTunSMPB` tag, 0 if none.
    public var encoderDelay: Int = 0
    /// Audio: padding samples at the end (iTunes `iTunSMPB`, Ogg end granule), 0 if none.
    public var encoderPadding: Int = 0
    /// True when the demuxer states the start and end cuts on the packets themselves
    /// (``Packet/trimStart``, ``Packet/trimEnd``: Ogg, where each chained link has its
    /// own); ``encoderDelay`` and ``encoderPadding`` are then informative only.
    public var trimsOnPackets = false
    /// Audio: the samples FFmpeg 5.1's demuxer marks to discard at the end (its first and last
    /// discard sample), counted in samples of the track's rate on the packets' timestamps
    /// (before the encoder delay is cut); nil when it marks none. ``TrimMode/ffmpeg`` cuts
    /// them from each packet that holds some, as FFmpeg's decoding does. Each container states
    /// its own: MP3 from the LAME tag's padding and the Xing / VBRI frame count; none for
    /// MP4 (FFmpeg keeps the `iTunSMPB` padding), ADTS, FLAC, WAV; Ogg and Matroska cut on
    /// the packets themselves.
    public var ffmpegEndDiscard: Range<Int64>?
    /// True for a track whose samples are the file's chapter titles (an MP4 / QuickTime chapter
    /// track, named by another track's `tref/chap`): FFmpeg reads it into chapters and lists it
    /// as a data stream. A remux into another container writes its chapters as that
    /// container's chapters and leaves the track out.
    public var isChapterTrack = false
    /// True unless the container marks the track as not one to present by default: Matroska's
    /// FlagDefault 0, an MP4 track header without `track_enabled` (FFmpeg's `default`
    /// disposition, which ffprobe shows). Containers without such a mark leave it true. A remux
    /// keeps it: Matroska writes FlagDefault 0, MP4 leaves the track disabled unless no other
    /// track of its type is enabled (then the first one is, as FFmpeg's mov muxer does).
    public var isDefault = true
    /// True when the container marks the track as forced (Matroska FlagForced: subtitles shown
    /// even when subtitles are off; FFmpeg's `forced` disposition). Kept by a Matroska remux.
    public var isForced = false
    /// Track-level tags (Matroska track Tags, MP4 track `udta`, Ogg stream comments ...); see
    /// ``Metadata``. Empty when the container states none.
    public var metadata = Metadata()

    /// The media type (shortcut for `parameters.mediaType`).
    public var mediaType: MediaType { parameters.mediaType }

    /// Reduces `numerator / denominator` (helper for rates).
    static func reduced(_ n: Int64, _ d: Int64) -> Rational {
        var a = n, b = d
        while b != 0 { (a, b) = (b, a % b) }
        return a == 0 ? Rational(n, d) : Rational(n / a, d / a)
    }

    /// Counter-clockwise display rotation in degrees from a transform matrix (row-major, 16.16),
    /// as FFmpeg's `av_display_rotation_get`, in (-180, 180]; 0 for a degenerate matrix.
    public static func displayRotation(_ m: [Int32]) -> Double {
        guard m.count >= 5 else { return 0 }
        let a = Double(m[0]) / 65536, b = Double(m[1]) / 65536, c = Double(m[3]) / 65536, d = Double(m[4]) / 65536
        let sx = (a * a + c * c).squareRoot(), sy = (b * b + d * d).squareRoot()
        if sx == 0 || sy == 0 { return 0 }
        var deg = -atan2(b / sy, a / sx) * 180 / .pi
        if deg == -0 { deg = 0 }
        if deg <= -180 { deg += 360 }
        return deg.rounded() == deg ? deg : (deg * 100).rounded() / 100
    }

    /// Duration in seconds.
    public var durationSeconds: Double { Double(duration) * timeBase.doubleValue }

    /// Creates a track.
    public init(index: Int, id: Int, parameters: CodecParameters, timeBase: Rational, duration: Int64,
                language: String = "und", rotation: Double = 0,
                matrix: [Int32] = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000],
                sampleCount: Int = 0, editList: [EditListEntry] = [], movieTimeScale: Int64 = 0,
                unsupportedReason: String? = nil, isEncrypted: Bool = false) {
        self.index = index
        self.id = id
        self.parameters = parameters
        self.timeBase = timeBase
        self.duration = duration
        self.language = language
        self.rotation = rotation
        self.matrix = matrix
        self.sampleCount = sampleCount
        self.editList = editList
        self.movieTimeScale = movieTimeScale
        self.unsupportedReason = unsupportedReason
        self.isEncrypted = isEncrypted
    }
}
