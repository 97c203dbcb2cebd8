import Foundation

/// Puts pictures on a constant-rate grid as FFmpeg's `fps` filter does (`-vf fps=R` with its
/// defaults: `round=near`, `eof_action=round`, no `start_time`): each picture's time is
/// rounded (to nearest, halves away from zero) to a tick of 1 / ``rate``; the first output
/// picture is at the first picture's rounded time, every later tick gets the latest picture
/// whose rounded time is at or before it (pictures are repeated to fill gaps and dropped
/// when several fall on one tick), and the last picture is repeated up to the input's end
/// time (rounded the same way). The pictures returned carry ticks of ``timeBase`` as pts and
/// a duration of 1. `mk-transcode --fps` puts the decoded pictures through one before they
/// are scaled and encoded.
///
/// One converter is used by one thread at a time.
public final class FrameRateConverter {
    /// The output rate (frames per second).
    public let rate: Rational
    /// The time base of the pictures returned: 1 / ``rate``.
    public let timeBase: Rational
    /// Pictures taken and pictures returned so far.
    public private(set) var framesIn = 0, framesOut = 0
    /// At most two pictures, each with its time rounded onto the grid (the filter's buffer).
    private var buffer: [(frame: Frame, tick: Int64)] = []
    /// The tick of the next picture returned; nil before the first one with a time.
    private var nextTick: Int64?
    /// Times the first buffered picture was returned; at most ``maxRepeats``.
    private var repeats = 0
    /// A picture is repeated over at most a day of ticks: a damaged time (a jump of years)
    /// is an error, not billions of pictures.
    private var maxRepeats: Int { Int(min(Double(Int32.max), rate.doubleValue * 86400 + 1)) }

    /// A converter to `rate` frames per second.
    /// - Throws: `.invalidArgument` for a rate that is not positive.
    public init(rate: Rational) throws {
        guard rate.numerator > 0, rate.denominator > 0 else {
            throw MediaError(.invalidArgument, "a frame rate must be positive, not \(rate)")
        }
        let g = Self.gcd(rate.numerator, rate.denominator)
        self.rate = Rational(rate.numerator / g, rate.denominator / g)
        self.timeBase = Rational(self.rate.denominator, self.rate.numerator)
    }

    /// A rate as `ffmpeg -vf fps=R` and `-r` take it: a whole number ("30"), a fraction
    /// ("30000/1001"), a decimal ("29.97", kept exact: 2997/100) or one of the filter's
    /// names "ntsc" (30000/1001), "pal" (25), "film" (24), "ntsc_film" (24000/1001); nil
    /// for anything else or a rate that is not positive.
    public static func rate(parsing text: String) -> Rational? {
        let named: [String: Rational] = ["ntsc": Rational(30000, 1001), "pal": Rational(25, 1),
                                         "film": Rational(24, 1), "ntsc_film": Rational(24000, 1001)]
        let t = text.trimmingCharacters(in: .whitespaces).lowercased()
        if let r = named[t] { return r }
        let parts = t.split(separator: "/", omittingEmptySubsequences: false)
        let r: Rational?
        if parts.count == 2 {
            r = Int64(parts[0]).flatMap { n in Int64(parts[1]).map { Rational(n, $0) } }
        } else if parts.count == 1 {
            let dot = t.split(separator: ".", omittingEmptySubsequences: false)
            if dot.count == 1 {
                r = Int64(t).map { Rational($0, 1) }
            } else if dot.count == 2, dot[1].count <= 6, !dot[1].isEmpty, dot[1].allSatisfy(\.isNumber),
                      let whole = Int64(dot[0].isEmpty ? "0" : String(dot[0])), whole >= 0, whole < 1_000_000 {
                var scale: Int64 = 1
                for _ in dot[1] { scale *= 10 }
                r = Int64(dot[1]).map { Rational(whole * scale + $0, scale) }
            } else {
                r = nil
            }
        } else {
            r = nil
        }
        guard let v = r, v.numerator > 0, v.denominator > 0, v.numerator <= Int64(Int32.max), v.denominator <= Int64(Int32.max) else { return nil }
        let g = gcd(v.numerator, v.denominator)
        return Rational(v.numerator / g, v.denominator / g)
    }

    /// Takes the next picture (in presentation order, its pts in its own time base) and passes
    /// the pictures it completes to `output`.
    public func push(_ frame: Frame, _ output: (Frame) throws -> Void) throws {
        let tick = frame.pts == Packet.noTimestamp ? Packet.noTimestamp : Rational.rescale(frame.pts, from: frame.timeBase, to: timeBase)
        buffer.append((frame, tick))
        framesIn += 1
        while buffer.count == 2 {
            try step(end: nil, output)
        }
    }

    /// The end of the input: the last picture is repeated up to `end` (the input's end time:
    /// the last decoded picture's pts plus its duration, in `timeBase`; nil: the last
    /// picture once), and passed to `output`.
    public func finish(end: Int64?, timeBase endBase: Rational, _ output: (Frame) throws -> Void) throws {
        guard !buffer.isEmpty else { return }
        // Without an end time the last picture is returned once (at the next tick).
        let endTick = end.map { Rational.rescale($0, from: endBase, to: timeBase) }
            ?? (nextTick ?? buffer[0].tick) &+ 1   // (push leaves at most one picture)
        while !buffer.isEmpty {
            try step(end: endTick, output)
        }
    }

    /// The filter's write step: drops the first buffered picture when the second one (or the
    /// end) has reached the next tick, else returns the first one at the next tick.
    private func step(end: Int64?, _ output: (Frame) throws -> Void) throws {
        if nextTick == nil {
            guard buffer[0].tick != Packet.noTimestamp else {   // pictures before the first time are dropped
                buffer.removeFirst()
                repeats = 0
                return
            }
            nextTick = buffer[0].tick
        }
        let next = nextTick!
        if (buffer.count == 2 && buffer[1].tick <= next) || (end.map { $0 <= next } ?? false) {
            buffer.removeFirst()
            repeats = 0
            return
        }
        repeats += 1
        guard repeats <= maxRepeats else {
            throw MediaError(.invalidData, "a picture would be repeated over more than a day at \(rate) fps: its next picture's time (or the end) jumps from \(next) to \(buffer.count == 2 ? buffer[1].tick : end ?? next) ticks of \(timeBase) s")
        }
        var out = buffer[0].frame
        out.pts = next
        out.duration = 1
        out.timeBase = timeBase
        nextTick = next + 1
        framesOut += 1
        try output(out)
    }

    private static func gcd(_ a: Int64, _ b: Int64) -> Int64 {
        var (x, y) = (a.magnitude, b.magnitude)
        while y != 0 { (x, y) = (y, x % y) }
        return max(1, Int64(x))
    }
}

/// An output picture size as FFmpeg's scale filter takes it (`-vf scale=W:H`): each side a
/// number of pixels, 0 for the input's, or negative to follow the other side keeping the
/// input's aspect ratio (-1), rounded to a multiple of n (-n: -2 gives an even size); both
/// negative keep the input's size. `mk-transcode --scale W:H`.
public struct VideoScale: Sendable, Hashable, CustomStringConvertible {
    /// The width asked for (see the type's description for 0 and negative values).
    public var width: Int
    /// The height asked for.
    public var height: Int

    /// A size of `width` x `height` with the scale filter's meaning of 0 and negative values.
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// "W:H" (or "WxH"), each side a whole number as the scale filter's: nil for anything else.
    public init?(parsing text: String) {
        let sep: Character = text.contains(":") ? ":" : "x"
        let parts = text.split(separator: sep, omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]), w >= -16384, h >= -16384, w <= 16384, h <= 16384 else { return nil }
        self.init(width: w, height: h)
    }

    /// "W:H".
    public var description: String { "\(width):\(height)" }

    /// The size a `inWidth` x `inHeight` picture is scaled to (FFmpeg's
    /// `ff_scale_eval_dimensions` and `ff_scale_adjust_dimensions`: the input's sides, not its
    /// sample aspect ratio, give the ratio kept; rounded to nearest).
    /// - Throws: `.invalidArgument` for a size out of 1...16384 pixels a side.
    public func outputSize(width inWidth: Int, height inHeight: Int) throws -> (width: Int, height: Int) {
        var w = width == 0 ? inWidth : width, h = height == 0 ? inHeight : height
        let factorW = w < -1 ? -w : 1, factorH = h < -1 ? -h : 1
        if w < 0 && h < 0 {
            w = inWidth
            h = inHeight
        }
        if w < 0 {
            w = Int(Rational.rescale(Int64(h), multiply: Int64(inWidth), divide: Int64(inHeight * factorW))) * factorW
        }
        if h < 0 {
            h = Int(Rational.rescale(Int64(w), multiply: Int64(inHeight), divide: Int64(inWidth * factorH))) * factorH
        }
        guard (1...16384).contains(w), (1...16384).contains(h) else {
            throw MediaError(.invalidArgument, "scaling \(inWidth)x\(inHeight) by \(description) gives \(w)x\(h): each side must be 1...16384 pixels")
        }
        return (w, h)
    }
}
