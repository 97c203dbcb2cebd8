/// Fixes packet timestamps on the way from a packet container into MP4, whose sample
/// tables need a decoding time for every sample, in increasing order.
///
/// - Unknown decoding timestamps (Matroska stores none; the demuxer derives them from the
///   presentation times and the reorder depth, so the first `depth` packets of an H.264 /
///   HEVC track with B-frames have none) are filled as FFmpeg's stream copy does: the first
///   is the packet's pts less `depth` frame durations, each next one the previous dts plus
///   the previous packet's duration.
/// - A dts that does not increase becomes the previous one plus 1 and the pts at least the
///   dts, as ffmpeg's muxing step makes them monotonic for formats that need strict order.
/// - Opus tracks (output time base 1/48000) count samples (``SampleClock``): each packet's
///   duration is its TOC sample count; its time is the previous end, or the container's time
///   plus the pre-skip when the two differ by more than the container's rounding (a gap).
struct PacketRetimer {
    private struct State {
        var lastDts: Int64?
        var lastDuration: Int64 = 0
        var opusClock: SampleClock?
        var opusTrimEnd: Int64 = 0
    }
    private let source: [Track]
    private let output: [Int: Track]
    private var states: [Int: State] = [:]

    /// `source`: the demuxer's tracks; `output`: the track each source index is written as.
    init(source: [Track], output: [Int: Track]) {
        self.source = source
        self.output = output
    }

    /// Rewrites `packet` (still carrying its source track index) for the output track.
    mutating func fix(_ packet: inout Packet) {
        let t = packet.trackIndex
        guard let out = output[t], t < source.count else { return }
        var state = states[t] ?? State()
        defer { states[t] = state }
        let src = source[t]
        if out.parameters.codec == "opus" {
            let samples = Int64(OpusHead.packetDuration(packet.data[...]) ?? 0)
            var clock = state.opusClock ?? SampleClock(rate: 48000, offset: Int64(out.encoderDelay))
            let at = clock.place(pts: packet.pts, timeBase: src.timeBase, samples: samples)
            state.opusClock = clock
            packet.pts = at
            packet.dts = at
            packet.statedDuration = samples
            packet.timeBase = out.timeBase
            state.opusTrimEnd = Int64(packet.trimEnd)
            packet.trimStart = 0
            packet.trimEnd = 0
            return
        }
        let duration = packet.statedDuration ?? frameDuration(src)
        if packet.dts == Packet.noTimestamp {
            if let last = state.lastDts {
                packet.dts = last + state.lastDuration
            } else if packet.pts != Packet.noTimestamp {
                packet.dts = packet.pts - Int64(src.parameters.reorderDepth) * duration
            } else {
                packet.dts = 0
            }
        }
        if packet.pts == Packet.noTimestamp { packet.pts = packet.dts }
        if let last = state.lastDts, packet.dts <= last {
            packet.dts = last + 1
            packet.pts = max(packet.pts, packet.dts)
        }
        state.lastDts = packet.dts
        state.lastDuration = duration
    }

    /// The edit of an Opus track after its last packet: from the pre-skip to the end less the
    /// last packet's DiscardPadding, in 48 kHz samples; nil when no packet was written.
    func opusEdit(track t: Int, preSkip: Int) -> EditListEntry? {
        guard let state = states[t], let end = state.opusClock?.next else { return nil }
        let length = end - Int64(preSkip) - state.opusTrimEnd
        guard length > 0 else { return nil }
        return EditListEntry(segmentDuration: length, mediaTime: Int64(preSkip), mediaRate: 1)
    }

    /// One frame's duration in the track's time base (its frame rate), 0 when unknown.
    private func frameDuration(_ t: Track) -> Int64 {
        guard t.frameRate.numerator > 0, t.frameRate.denominator > 0 else { return 0 }
        return Rational.rescale(1, from: Rational(t.frameRate.denominator, t.frameRate.numerator), to: t.timeBase)
    }
}

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
