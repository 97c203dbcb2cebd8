/// One compressed sample (an access unit) of a track.
public struct Packet: Sendable {
    /// Index of the track it belongs to (``Track/index``).
    public var trackIndex: Int
    /// Presentation timestamp in the track's time base, as stored (no edit list applied).
    public var pts: Int64
    /// Decoding timestamp in the track's time base, as stored.
    public var dts: Int64
    /// Duration in the track's time base (0 if unknown).
    public var duration: Int64
    /// True for a random access point (sync sample).
    public var isKeyframe: Bool
    /// Byte offset of the data in the source file, -1 if not from a file.
    public var position: Int64
    /// The compressed bytes.
    public var data: [UInt8]
    /// Seconds per timestamp tick.
    public var timeBase: Rational

    /// Creates a packet.
    public init(trackIndex: Int, pts: Int64, dts: Int64, duration: Int64, isKeyframe: Bool,
                position: Int64 = -1, data: [UInt8], timeBase: Rational) {
        self.trackIndex = trackIndex
        self.pts = pts
        self.dts = dts
        self.duration = duration
        self.isKeyframe = isKeyframe
        self.position = position
        self.data = data
        self.timeBase = timeBase
    }

    /// Size of ``data`` in bytes.
    public var size: Int { data.count }
}
