/// The 80-bit IEEE 754 extended-precision number (a sign bit, a 15-bit exponent biased by
/// 16383 and a 64-bit significand with an explicit integer bit) that AIFF's `COMM` chunk, and
/// Apple's older formats after it, use for a sample rate.
///
/// Read as FFmpeg reads it (libavformat/aiffdec.c): the value rounded to the nearest integer
/// (halves up), for exponents that keep it within 64 bits.
enum ExtendedFloat {
    /// The integer value of the 10 big-endian bytes at `b[i..<i + 10]` (the caller checks the
    /// bounds); nil when the exponent puts it below 2^-63 or above 2^127 (a negative number's
    /// sign bit gives such an exponent), as FFmpeg refuses those.
    static func integer(_ b: [UInt8], at i: Int) -> UInt64? {
        let exponent = (Int(b[i]) << 8 | Int(b[i + 1])) - 16383 - 63
        let significand = (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(b[i + 2 + $1]) }
        guard (-63...63).contains(exponent) else { return nil }
        if exponent >= 0 { return significand << UInt64(exponent) }
        // Rounded, with FFmpeg's wrap-around for a significand within a half of 2^64.
        return (significand &+ (1 << UInt64(-exponent - 1))) >> UInt64(-exponent)
    }

    /// The 10 big-endian bytes of `value` (a positive integer below 2^63) as an 80-bit IEEE 754
    /// extended float: exponent 16383 + log2, the significand with its integer bit, as
    /// FFmpeg's aiff muxer writes a sample rate (exact for every integer rate).
    static func bytes(_ value: UInt64) -> [UInt8] {
        guard value > 0 else { return [UInt8](repeating: 0, count: 10) }
        let log2 = 63 - value.leadingZeroBitCount
        let exponent = 16383 + log2
        let significand = value << UInt64(63 - log2)
        return [UInt8(truncatingIfNeeded: exponent >> 8), UInt8(truncatingIfNeeded: exponent)] + (0..<8).map { UInt8(truncatingIfNeeded: significand >> UInt64(56 - 8 * $0)) }
    }
}
