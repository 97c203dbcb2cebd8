/// Places the packets of an audio stream on a sample clock: the positions an Ogg granule
/// position or an MP4 Opus media time counts (48 kHz samples from the first encoded one,
/// pre-skip included, for Opus; samples for Vorbis and FLAC).
///
/// A packet starts where the previous one ended; the container's timestamp only moves it
/// when the two differ by more than the container's rounding (two of its ticks, at least two
/// samples): a gap in the source. The clock never goes back. Packet timestamps follow FFmpeg's
/// convention: the first packet of a stream with an encoder delay is at minus that delay
/// (Opus at -pre-skip, Vorbis at minus its first packet's duration, which decodes to nothing).
/// The first packet is where its timestamp says when the time base counts whole samples or
/// finer (an Ogg or MP4 source: positions then equal the timestamps, as FFmpeg's Ogg muxer
/// writes them); in a coarser time base (Matroska's milliseconds) a first timestamp within
/// the rounding of the start is the start.
struct SampleClock {
    /// Samples per second.
    let rate: Int64
    /// Samples added to a timestamp to get a position (Opus: the pre-skip; otherwise 0).
    let offset: Int64
    /// Where the next packet starts; nil before the first.
    private(set) var next: Int64?

    init(rate: Int, offset: Int64 = 0) {
        self.rate = Int64(max(1, rate))
        self.offset = offset
    }

    /// The position of a packet of `samples` samples whose timestamp is `pts` (in `timeBase`,
    /// or ``Packet/noTimestamp``); `start` is the earliest position of the first packet, where a
    /// stream that begins at its start puts it (0, or minus the first packet's duration for Vorbis).
    mutating func place(pts: Int64, timeBase: Rational, samples: Int64, start: Int64 = 0) -> Int64 {
        var at = next ?? start
        if pts != Packet.noTimestamp {
            let clockBase = Rational(1, rate)
            let fromContainer = Rational.rescale(pts, from: timeBase, to: clockBase) + offset
            let slack = 2 * max(1, Rational.rescale(1, from: timeBase, to: clockBase))
            if next == nil ? (Self.countsSamples(timeBase, rate: rate) || fromContainer > slack) : abs(fromContainer - at) > slack { at = max(at, fromContainer) }
        }
        next = at + samples
        return at
    }

    /// True when `timeBase` counts whole samples at `rate` or finer (an Ogg or MP4 audio track).
    static func countsSamples(_ timeBase: Rational, rate: Int64) -> Bool {
        timeBase.numerator > 0 && rate > 0 && timeBase.denominator % (timeBase.numerator * rate) == 0
    }
}
