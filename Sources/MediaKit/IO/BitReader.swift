/// Reading numbers out of bytes, for every container and codec parser: bit fields
/// (`BitReader`, with H.264 / HEVC Exp-Golomb codes), and whole big- and little-endian
/// integers at an index (`be32`, `oggLE16`, `oggLE32`, `oggBE`). Bounds are checked by the
/// callers of the index readers; `BitReader` returns nil past the end.

/// Reads big-endian bit fields.
struct BitReader {
    let bytes: [UInt8]
    var bit = 0
    init(_ bytes: [UInt8]) { self.bytes = bytes }
    /// Bits not read yet.
    var remaining: Int { bytes.count * 8 - bit }
    /// The next `n` bits, without reading them.
    func peek(_ n: Int) -> Int? {
        var copy = self
        return copy.read(n)
    }
    mutating func read(_ n: Int) -> Int? {
        var v = 0
        for _ in 0..<n {
            let byte = bit >> 3
            guard byte < bytes.count else { return nil }
            v = v << 1 | Int((bytes[byte] >> (7 - UInt8(bit & 7))) & 1)
            bit += 1
        }
        return v
    }
}

extension BitReader {
    /// An unsigned Exp-Golomb code (ue(v)); nil past the end or above 32 bits.
    mutating func ue() -> Int? {
        var zeros = 0
        while true {
            guard let b = read(1) else { return nil }
            if b == 1 { break }
            zeros += 1
            if zeros > 31 { return nil }
        }
        guard let rest = read(zeros) else { return nil }
        return (1 << zeros) - 1 + rest
    }

    /// A signed Exp-Golomb code (se(v)).
    mutating func se() -> Int? {
        guard let k = ue() else { return nil }
        return k & 1 == 1 ? (k + 1) / 2 : -(k / 2)
    }
}

/// The big-endian 32-bit integer at `b[i..<i + 4]`.
func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
    UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
}

/// Little-endian 16- and 32-bit integers and an `n`-byte big-endian integer at `b[i...]`
/// (named for the Ogg headers they were first written for; any parser may use them).
@inline(__always) func oggLE16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
@inline(__always) func oggLE32(_ b: [UInt8], _ i: Int) -> Int { oggLE16(b, i) | oggLE16(b, i + 2) << 16 }
@inline(__always) func oggBE(_ b: [UInt8], _ i: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 << 8 | Int(b[i + $1]) } }
