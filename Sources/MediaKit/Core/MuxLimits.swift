/// What the writers check of a caller's packet before any arithmetic on its values: a muxer
/// may be handed any packet sequence, duration, trim or timestamp (a damaged source, a
/// caller's mistake), and must answer with a ``MediaError`` naming the track and the value,
/// never a trap.
enum MuxLimits {
    /// The largest time a writer takes, in nanoseconds: 2^62 (146 years). Rescaled to any
    /// clock of up to 2^32 Hz it stays far enough below 2^63 that sums of a few times do not
    /// overflow.
    static let nanoseconds: Int64 = 1 << 62
    /// The largest magnitude of a writer's time in its own clock's ticks: 2^60.
    static let ticks: Int64 = 1 << 60

    /// Checks `packet`'s time base (numerator and denominator 1 to 2^31-1, FFmpeg's 32-bit
    /// AVRational), its timestamps (unknown, or within ``nanoseconds``), its stated duration
    /// (within ``nanoseconds``; what a negative one means is the muxer's to say) and its trims (0 to 2^31-1 samples).
    /// - Throws: `.invalidArgument` naming `track` and the value.
    static func check(_ packet: Packet, track: Int, path: String, context: String? = nil) throws {
        func fail(_ why: String) -> MediaError {
            MediaError(.invalidArgument, "track \(track): \(why)", path: path, context: context)
        }
        let tb = packet.timeBase
        guard tb.numerator > 0, tb.denominator > 0, tb.numerator <= Int64(Int32.max), tb.denominator <= Int64(Int32.max) else {
            throw fail("the packet's time base \(tb.numerator)/\(tb.denominator) is not a positive ratio of 32-bit integers")
        }
        let ns = Rational(1, 1_000_000_000)
        for (name, v) in [("pts", packet.pts), ("dts", packet.dts)] where v != Packet.noTimestamp {
            let t = Rational.rescale(v, from: tb, to: ns)
            guard t >= -nanoseconds, t <= nanoseconds else {
                throw fail("\(name) \(v) (x \(tb.numerator)/\(tb.denominator) s) is beyond the ±146 years a writer takes")
            }
        }
        if let d = packet.statedDuration {
            let t = Rational.rescale(d, from: tb, to: ns)
            guard t >= -nanoseconds, t <= nanoseconds else { throw fail("the packet duration \(d) is beyond ±146 years") }
        }
        guard packet.trimStart >= 0, packet.trimEnd >= 0, packet.trimStart <= Int(Int32.max), packet.trimEnd <= Int(Int32.max) else {
            throw fail("the packet's trims (\(packet.trimStart) at the start, \(packet.trimEnd) at the end) are not 0 to 2^31-1 samples")
        }
    }

    /// `v` ticks of `from` in ticks of `to`, or an error naming the track when beyond ±``ticks``.
    static func rescale(_ v: Int64, from: Rational, to: Rational, track: Int, _ what: String, path: String, context: String? = nil) throws -> Int64 {
        let r = Rational.rescale(v, from: from, to: to)
        guard r >= -ticks, r <= ticks else {
            throw MediaError(.invalidArgument, "track \(track): \(what) \(v) is beyond 2^60 ticks of 1/\(to.denominator) s", path: path, context: context)
        }
        return r
    }
}
