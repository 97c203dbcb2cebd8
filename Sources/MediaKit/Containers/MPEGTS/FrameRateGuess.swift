/// FFmpeg's guess of a video stream's frame rate from its decoding timestamps (libavformat's
/// `ff_rfps_add_frame` / `ff_rfps_calculate`, which set a stream's `r_frame_rate`). Its
/// stream-info pass makes the guess for a stream whose time base says nothing of the rate (an
/// MPEG-TS stream, whose clock is 90 kHz, or H.264 / HEVC anywhere) and whose codec states no
/// rate either (an SPS without VUI timing); each packet without a stated duration then lasts
/// one frame of the guessed rate, rounded down to the time base. MPEG-TS segments cut from a
/// live stream without timing in their SPS are such streams.
///
/// The guess, as FFmpeg makes it: when more than 15 timestamp steps were seen and the greatest
/// common divisor of the steps after the first three is above 1/500 s, the rate is one frame
/// per that divisor; otherwise, of FFmpeg's standard rates (1/12 fps steps up to 30 fps, whole
/// rates up to 60, 80, 120, 240, and 24 / 30 / 60 / 12 / 15 / 48 without the 1000/1001 factor),
/// the one whose frame grid the timestamps fit best (the variance of each timestamp's distance
/// to the grid, on and half a frame off, under 0.01), leaving out rates below 1 fps or more
/// than 25 % under the mean step. Rates whose variance is over 0.04 both ways are dropped
/// every 10 steps and not looked at again, as FFmpeg drops them.
struct FrameRateGuess {
    /// The standard rates, in 1 / (1001 * 12) frames per second (FFmpeg's `get_std_framerate`).
    static let standardRates: [Int] = {
        var rates = (0..<(30 * 12)).map { ($0 + 1) * 1001 }
        rates += (0..<30).map { ($0 + 31) * 1001 * 12 }
        rates += [80, 120, 240].map { $0 * 1001 * 12 }
        rates += [24, 30, 60, 12, 15, 48].map { $0 * 1000 * 12 }
        return rates
    }()
    /// A rate's error sums at or above this were dropped (FFmpeg marks them 2e10).
    private static let dropped = 1e10

    /// Seconds per timestamp tick.
    let timeBase: Rational
    /// Per standard rate, on the grid (index 0) and half a frame off it (1): the sum of the
    /// timestamps' distances to the rate's frame grid, and the sum of their squares.
    private var sums = [[Double]](repeating: [Double](repeating: 0, count: standardRates.count), count: 2)
    private var squares = [[Double]](repeating: [Double](repeating: 0, count: standardRates.count), count: 2)
    /// Timestamp steps counted, their sum, and the greatest common divisor of those after the first three.
    private(set) var steps = 0
    private var stepSum: Int64 = 0
    private var stepGCD: Int64 = 0
    private var last: Int64?

    /// A guess over a stream whose timestamps count `timeBase` seconds.
    init(timeBase: Rational) { self.timeBase = timeBase }

    /// Takes the next packet's decoding timestamp (in decoding order). A timestamp not after
    /// the one before is not a step (it only becomes the one the next step starts from).
    mutating func add(_ dts: Int64) {
        defer { last = dts }
        guard let last, dts > last, dts &- last > 0 else { return }
        let step = dts - last
        let seconds = Double(dts) * timeBase.doubleValue
        for i in Self.standardRates.indices where squares[0][i] < Self.dropped {
            let scaled = seconds * Double(Self.standardRates[i]) / Double(1001 * 12)
            for j in 0..<2 {
                let ticks = (scaled + Double(j) * 0.5).rounded(.toNearestOrEven)
                let error = scaled - ticks + Double(j) * 0.5
                sums[j][i] += error
                squares[j][i] += error * error
            }
        }
        if stepSum <= Int64.max - step {
            steps += 1
            stepSum += step
        }
        if steps % 10 == 0 {
            let n = Double(steps)
            for i in Self.standardRates.indices where squares[0][i] < Self.dropped {
                let a0 = sums[0][i] / n, a1 = sums[1][i] / n
                if squares[0][i] / n - a0 * a0 > 0.04 && squares[1][i] / n - a1 * a1 > 0.04 {
                    squares[0][i] = 2e10
                    squares[1][i] = 2e10
                }
            }
        }
        // The first steps may jitter: the divisor counts from the fourth.
        if steps > 3 { stepGCD = Self.gcd(stepGCD, step) }
    }

    /// The guessed rate in frames per second (reduced), nil when the timestamps fit none.
    var rate: Rational? {
        let base = timeBase.numerator, ticksPerSecond = timeBase.denominator
        guard base > 0, ticksPerSecond > 0 else { return nil }
        if steps > 15 && stepGCD > max(1, ticksPerSecond / (500 * base)) && stepGCD < Int64.max / base {
            return Track.reduced(ticksPerSecond, base * stepGCD)
        }
        guard steps > 1 else { return nil }
        var best = 0
        var bestError = 0.01
        let meanStep = timeBase.doubleValue * Double(stepSum) / Double(steps)
        for (j, rate) in Self.standardRates.enumerated() {
            // No duration was stated (the guess is made for that case): rates under 1 fps are out.
            if rate < 1001 * 12 { continue }
            if meanStep < (1001 * 12.0 * 0.8) / Double(rate) { continue }
            for k in 0..<2 {
                let n = Double(steps)
                let a = sums[k][j] / n
                let error = squares[k][j] / n - a * a
                if error < bestError && bestError > 0.000000001 {
                    bestError = error
                    best = rate
                }
            }
        }
        // FFmpeg keeps a rate at most 1 % above the time base's own (1 / timeBase).
        guard best > 0, Double(best) / Double(12 * 1001) < 1.01 / timeBase.doubleValue else { return nil }
        return Track.reduced(Int64(best), 12 * 1001)
    }

    /// One frame of the guessed rate in time-base ticks, rounded down (FFmpeg's packet
    /// duration from `r_frame_rate`); 0 without a guess.
    var frameTicks: Int64 {
        guard let rate, rate.numerator > 0 else { return 0 }
        return Rational.rescale(1, multiply: rate.denominator * timeBase.denominator, divide: rate.numerator * timeBase.numerator,
                                rounding: .down)
    }

    private static func gcd(_ a: Int64, _ b: Int64) -> Int64 {
        var a = a, b = b
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }
}
