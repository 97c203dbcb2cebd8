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
/// - Tracks whose MP4 time scale is not their source's time base (``MP4TrackAdapter/trackTimeBase(_:)``:
///   a 1/1000 FLV or Matroska track, an AVI's 1/30) are rescaled as `ffmpeg -c copy` rescales
///   them: audio on the grid of its samples, the rest to the nearest tick; the monotonic fix
///   above then works in the output's ticks.
/// - Opus tracks (output time base 1/48000) count samples (``SampleClock``): each packet's
///   duration is its TOC sample count; its time is the previous end, or the container's time
///   plus the pre-skip when the two differ by more than the container's rounding (a gap).
struct PacketRetimer {
    private struct State {
        var lastDts: Int64?
        var lastDuration: Int64 = 0
        var opusClock: SampleClock?
        var opusTrimEnd: Int64 = 0
        /// Tracks rescaled to another time base: the last decoding time written (output time
        /// base) and the audio sample grid (``SampleGridRescaler``).
        var lastOutputDts: Int64?
        var grid = SampleGridRescaler()
    }
    private var source: [Int: Track] = [:]
    private var output: [Int: Track] = [:]
    private var states: [Int: State] = [:]

    /// A retimer for no track yet.
    init() {}

    /// Retimes the packets of muxer track `index`, demuxed as `source` and written as `output`.
    mutating func add(_ index: Int, source: Track, output: Track) {
        self.source[index] = source
        self.output[index] = output
    }

    /// True when the packets of muxer track `index` are retimed.
    func retimes(_ index: Int) -> Bool { output[index] != nil }

    /// Rewrites `packet` (its track index the muxer's) for the output track.
    mutating func fix(_ packet: inout Packet) {
        let t = packet.trackIndex
        guard let out = output[t], let src = source[t] else { return }
        var state = states[t] ?? State()
        defer { states[t] = state }
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
        guard out.timeBase != src.timeBase else {
            if let last = state.lastDts, packet.dts <= last {
                packet.dts = last + 1
                packet.pts = max(packet.pts, packet.dts)
            }
            state.lastDts = packet.dts
            state.lastDuration = duration
            return
        }
        state.lastDts = packet.dts
        state.lastDuration = duration
        rescale(&packet, from: src, to: out, grid: &state.grid)
        if let last = state.lastOutputDts, packet.dts <= last {
            packet.dts = last + 1
            packet.pts = max(packet.pts, packet.dts)
        }
        state.lastOutputDts = packet.dts
    }

    /// Moves `packet` from the source track's time base to the output track's (the MP4 track
    /// time scale FFmpeg's mov muxer chooses, ``MP4TrackAdapter/trackTimeBase(_:)``), as
    /// `ffmpeg -c copy` does: audio on the sample grid (``SampleGridRescaler``), its pts the
    /// rescaled dts, an unknown duration its samples in source ticks as libavformat states it;
    /// other tracks' pts and dts rounded to the nearest tick; the duration rounded.
    private func rescale(_ packet: inout Packet, from src: Track, to out: Track, grid: inout SampleGridRescaler) {
        let from = src.timeBase, to = out.timeBase
        let rate = Int64(src.parameters.sampleRate)
        if out.mediaType == .audio, rate > 0 {
            let stated = packet.statedDuration.map { Rational.rescale($0, from: from, to: Rational(1, rate)) }
            let samples = AudioFrameDuration.samples(src.parameters, packet: packet.data, stated: stated)
            packet.dts = grid.rescale(packet.dts, from: from, sampleRate: rate, samples: samples, to: to)
            packet.pts = packet.dts
            let divisor = rate.multipliedReportingOverflow(by: from.numerator)
            if packet.statedDuration == nil, samples > 0, !divisor.overflow {
                // libavformat's duration of a packet its container does not time (a Matroska
                // block): the samples in source ticks, rounded down (compute_frame_duration),
                // which the copy then rescales; it is the last packet's in the sample table.
                let ticks = Rational.rescale(samples, multiply: from.denominator, divide: divisor.partialValue, rounding: .down)
                if ticks > 0 { packet.statedDuration = ticks }
            }
        } else {
            packet.pts = Rational.rescale(packet.pts, from: from, to: to)
            packet.dts = Rational.rescale(packet.dts, from: from, to: to)
        }
        if let d = packet.statedDuration { packet.statedDuration = Rational.rescale(d, from: from, to: to) }
        packet.timeBase = to
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
