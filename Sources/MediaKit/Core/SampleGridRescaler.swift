/// FFmpeg's `av_rescale_delta` (libavutil/mathematics.c) as `ffmpeg -c copy` uses it for audio
/// (fftools `do_streamcopy`): a packet's decoding time is moved from the source's time base to
/// the output's on the grid of the stream's samples. Where the source ticks are coarser than a
/// sample (a 1/1000 FLV or Matroska track), each packet starts where the previous one ended
/// (its time plus its samples) as long as that lies within the source tick's rounding, so
/// 1024-sample AAC frames at 44100 Hz stamped 0, 23, 46 ms land at 0, 1024, 2048 rather than at
/// 0, 1014, 2029; a jump beyond the rounding starts the grid afresh.
struct SampleGridRescaler {
    /// Where the previous packet ended, in samples; nil before the first.
    private var last: Int64?

    /// A rescaler before the first packet.
    init() {}

    /// `ts` of time base `from` in time base `to`, on the grid of `sampleRate` given the
    /// packet's `samples` (0: plain rounding, as when FFmpeg knows no frame duration).
    mutating func rescale(_ ts: Int64, from: Rational, sampleRate: Int64, samples: Int64, to: Rational) -> Int64 {
        let grid = Rational(1, sampleRate)
        let finer = from.numerator.multipliedReportingOverflow(by: to.denominator)
        let coarser = to.numerator.multipliedReportingOverflow(by: from.denominator)
        let simple = { (value: Int64) -> Int64 in Rational.rescale(value, from: from, to: to) }
        guard let previous = last, samples > 0, sampleRate > 0, !finer.overflow, !coarser.overflow,
              finer.partialValue > coarser.partialValue else {
            last = sampleRate > 0 ? Rational.rescale(ts, from: from, to: grid) &+ samples : nil
            return simple(ts)
        }
        // The source tick's rounding interval [ts - 1/2, ts + 1/2], in samples.
        let b1 = from.numerator.multipliedReportingOverflow(by: grid.denominator)
        let c1 = grid.numerator.multipliedReportingOverflow(by: from.denominator)
        guard !b1.overflow, !c1.overflow, ts > Int64.min / 4, ts < Int64.max / 4 else {
            last = Rational.rescale(ts, from: from, to: grid) &+ samples
            return simple(ts)
        }
        let a = Rational.rescale(2 * ts - 1, multiply: b1.partialValue, divide: c1.partialValue, rounding: .down) >> 1
        let b = (Rational.rescale(2 * ts + 1, multiply: b1.partialValue, divide: c1.partialValue, rounding: .up) &+ 1) >> 1
        if previous < 2 &* a &- b || previous > 2 &* b &- a {
            last = Rational.rescale(ts, from: from, to: grid) &+ samples
            return simple(ts)
        }
        let this = min(max(previous, a), b)
        last = this &+ samples
        return Rational.rescale(this, from: grid, to: to)
    }
}
