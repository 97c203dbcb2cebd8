import Foundation

/// A rational number, used for time bases (seconds per tick) and aspect ratios.
public struct Rational: Hashable, Sendable, CustomStringConvertible {
    /// The numerator.
    public var numerator: Int64
    /// The denominator; never 0 for a valid time base.
    public var denominator: Int64

    /// Creates `numerator / denominator`.
    public init(_ numerator: Int64, _ denominator: Int64) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// The value as a `Double` (0 when the denominator is 0).
    public var doubleValue: Double { denominator == 0 ? 0 : Double(numerator) / Double(denominator) }

    /// `"num/den"`, as FFmpeg prints time bases.
    public var description: String { "\(numerator)/\(denominator)" }

    /// `seconds * ticksPerSecond` rounded as asked, clamped to what an Int64 holds (a seek to
    /// 1e300 s lands at the end instead of trapping). NaN gives 0.
    public static func ticks(seconds: Double, perSecond ticksPerSecond: Double, rounding: FloatingPointRoundingRule = .down) -> Int64 {
        let v = (seconds * ticksPerSecond).rounded(rounding)
        guard !v.isNaN else { return 0 }
        if v >= 9.2e18 { return Int64.max / 2 }
        if v <= -9.2e18 { return Int64.min / 2 }
        return Int64(v)
    }

    /// Converts `value` ticks of time base `from` into ticks of `to`, rounding to
    /// the nearest tick with halves away from zero (FFmpeg's `av_rescale_q`).
    /// Computes in 128 bits, so no intermediate overflow; saturates at the Int64 range.
    public static func rescale(_ value: Int64, from: Rational, to: Rational) -> Int64 {
        let (b, o1) = from.numerator.multipliedReportingOverflow(by: to.denominator)
        let (c, o2) = from.denominator.multipliedReportingOverflow(by: to.numerator)
        if !o1 && !o2 { return rescale(value, multiply: b, divide: c) }
        // Products beyond 64 bits (time bases no container writes): two saturating steps.
        return rescale(rescale(value, multiply: from.numerator, divide: to.numerator), multiply: to.denominator, divide: from.denominator)
    }

    /// How ``rescale(_:multiply:divide:rounding:)`` rounds a result that is not whole.
    public enum Rounding: Sendable {
        /// To the nearest integer, halves away from zero (FFmpeg's `AV_ROUND_NEAR_INF`).
        case nearest
        /// Toward negative infinity (`AV_ROUND_DOWN`).
        case down
        /// Toward positive infinity (`AV_ROUND_UP`): e.g. a duration that must not end
        /// before the media it covers.
        case up
    }

    /// `value * b / c` rounded as `rounding` says (default: to nearest, halves away from
    /// zero), in 128-bit arithmetic (FFmpeg's `av_rescale_rnd`). Returns `value` unchanged
    /// when `c` is 0.
    public static func rescale(_ value: Int64, multiply b: Int64, divide c: Int64, rounding: Rounding = .nearest) -> Int64 {
        guard c != 0 else { return value }
        // Magnitudes (Int64.min included) and the sign apart: nothing here can trap.
        let negative = ((value < 0) != (b < 0)) != (c < 0)
        let a = value < 0 && value == .min ? UInt64(Int64.max) : value.magnitude
        let bb = b.magnitude, cc = c.magnitude
        let product = a.multipliedFullWidth(by: bb)
        // Added to the magnitude before dividing: c/2 rounds to nearest, c-1 away from zero.
        let half: UInt64
        switch rounding {
        case .nearest: half = cc / 2
        case .down: half = negative ? cc - 1 : 0
        case .up: half = negative ? 0 : cc - 1
        }
        let (low, carry) = product.low.addingReportingOverflow(half)
        let high = product.high &+ (carry ? 1 : 0)
        if high >= cc { return negative ? .min : .max }
        // A product within 64 bits (nearly every timestamp) takes the plain division.
        let q = high == 0 ? low / cc : cc.dividingFullWidth((high: high, low: low)).quotient
        if q > UInt64(Int64.max) { return negative ? .min : .max }
        return negative ? -Int64(q) : Int64(q)
    }
}

/// A point or span on a track's timeline: a count of ticks of a time base.
public struct MediaTime: Hashable, Sendable, CustomStringConvertible {
    /// The tick count.
    public var value: Int64
    /// Seconds per tick.
    public var timeBase: Rational

    /// Creates a time of `value` ticks of `timeBase`.
    public init(value: Int64, timeBase: Rational) {
        self.value = value
        self.timeBase = timeBase
    }

    /// The time in seconds.
    public var seconds: Double { Double(value) * timeBase.doubleValue }

    /// The same instant in another time base (rounded to nearest).
    public func converted(to base: Rational) -> MediaTime {
        MediaTime(value: Rational.rescale(value, from: timeBase, to: base), timeBase: base)
    }

    /// Seconds with six decimals, as ffprobe prints them.
    public var description: String { String(format: "%.6f", seconds) }
}
