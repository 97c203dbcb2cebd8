/// One compressed sample (an access unit) of a track.
public struct Packet: Sendable {
    /// Index of the track it belongs to (``Track/index``).
    public var trackIndex: Int
    /// Presentation timestamp in the track's time base, as stored (no edit list applied).
    public var pts: Int64
    /// Decoding timestamp in the track's time base, as stored.
    public var dts: Int64
    /// Duration in the track's time base; 0 when unknown or when the container states a
    /// duration of 0 (``statedDuration`` tells the two apart). Setting it to 0 makes the
    /// duration unknown; any other value makes it stated.
    public var duration: Int64 {
        get { statedDuration ?? 0 }
        set { statedDuration = newValue == 0 ? nil : newValue }
    }
    /// The duration the container states, in the track's time base, 0 included (an MP4
    /// `stts` or `trun` entry of 0); nil when the container does not give one. A muxer
    /// keeps a stated duration as it is and derives an unknown one.
    public var statedDuration: Int64?
    /// True for a random access point (sync sample).
    public var isKeyframe: Bool
    /// Byte offset of the data in the source file, -1 if not from a file.
    public var position: Int64
    /// The compressed bytes.
    public var data: [UInt8]
    /// Seconds per timestamp tick.
    public var timeBase: Rational
    /// Audio: samples to drop from the start of this packet's decoded output (FFmpeg's
    /// `AV_PKT_DATA_SKIP_SAMPLES` start field). Ogg Opus puts its pre-skip on the first packet
    /// of each chained link. Default: 0.
    public var trimStart: Int = 0
    /// Audio: samples to drop from the end of this packet's decoded output (FFmpeg's
    /// `AV_PKT_DATA_SKIP_SAMPLES` end field): set on the last packets of an Ogg Opus or Vorbis
    /// stream whose granule position ends before the packet does. Default: 0.
    public var trimEnd: Int = 0
    /// True when the file ends inside this packet, so ``data`` holds only the bytes the file
    /// has (FFmpeg's `AV_PKT_FLAG_CORRUPT` from a short read); `read()` throws `.truncated`
    /// after the packets the file still holds. A ``DecodeSession`` decodes it as FFmpeg does
    /// and takes a decoder's rejection of it as a warning. Default: false.
    public var isTruncated = false
    /// Decode this packet (later ones may refer to it) but return none of its frames: the
    /// plugin ABI's `MK_PACKET_FLAG_DISCARD`, FFmpeg's `AV_PKT_FLAG_DISCARD`. A
    /// ``DecodeSession`` sets it on packets whose frames fall outside what is presented.
    /// Default: false.
    public var isDiscarded = false
    /// A text subtitle cue's identifier line (a WebVTT cue id, FFmpeg's `AV_PKT_DATA_WEBVTT_IDENTIFIER`),
    /// nil when the cue has none. Default: nil.
    public var cueIdentifier: String? = nil
    /// A text subtitle cue's settings: the rest of a WebVTT timing line (`align:start line:0`,
    /// FFmpeg's `AV_PKT_DATA_WEBVTT_SETTINGS`) or a SubRip timing line's `X1:.. X2:.. Y1:.. Y2:..`
    /// box (FFmpeg's `AV_PKT_DATA_SUBTITLE_POSITION`); nil when the timing line has none. Default: nil.
    public var cueSettings: String? = nil
    /// Set on the first packet after the stream's codec parameters changed mid-stream (a
    /// chained Ogg link with its own headers: another rate, channel count or setup): a
    /// decoder is re-created from these to decode this packet and the ones after it (a
    /// ``DecodeSession`` does that itself). nil, the default: unchanged.
    public var newParameters: CodecParameters? {
        get { parameterChange?.parameters }
        set { parameterChange = newValue.map(ParameterChange.init) }
    }
    /// Boxed, so that packets without a change stay small.
    private var parameterChange: ParameterChange?
    private final class ParameterChange: Sendable {
        let parameters: CodecParameters
        init(_ parameters: CodecParameters) { self.parameters = parameters }
    }

    /// The value of ``pts`` and ``dts`` when the container gives the packet no timestamp
    /// (FFmpeg's `AV_NOPTS_VALUE`; ffprobe prints it as N/A).
    public static let noTimestamp = Int64.min

    /// Creates a packet whose `duration` is 0 when unknown (a nonzero one is stated).
    public init(trackIndex: Int, pts: Int64, dts: Int64, duration: Int64, isKeyframe: Bool,
                position: Int64 = -1, data: [UInt8], timeBase: Rational) {
        self.init(trackIndex: trackIndex, pts: pts, dts: dts, statedDuration: duration == 0 ? nil : duration,
                  isKeyframe: isKeyframe, position: position, data: data, timeBase: timeBase)
    }

    /// Creates a packet whose duration is stated (0 included) or, when nil, unknown.
    public init(trackIndex: Int, pts: Int64, dts: Int64, statedDuration: Int64?, isKeyframe: Bool,
                position: Int64 = -1, data: [UInt8], timeBase: Rational) {
        self.trackIndex = trackIndex
        self.pts = pts
        self.dts = dts
        self.statedDuration = statedDuration
        self.isKeyframe = isKeyframe
        self.position = position
        self.data = data
        self.timeBase = timeBase
    }

    /// Size of ``data`` in bytes.
    public var size: Int { data.count }
}
