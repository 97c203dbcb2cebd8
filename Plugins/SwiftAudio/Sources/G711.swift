// G.711 A-law and mu-law (ITU-T G.711): one byte per sample, expanded to 16 bits by a 256-entry
// table built as FFmpeg's pcm_tablegen.h builds it (the Sun reference g711.c), so the output is
// bit-exact with FFmpeg's pcm_alaw / pcm_mulaw decoders.

/// The expansion tables and the decode loop.
enum G711 {
    /// A-law byte to linear 16-bit sample.
    nonisolated(unsafe) static let alaw: UnsafePointer<Int16> = table { byte in
        let a = Int32(byte ^ 0x55)
        var t = a & 0x0F
        let segment = (a & 0x70) >> 4
        t = segment != 0 ? (t * 2 + 1 + 32) << (segment + 2) : (t * 2 + 1) << 3
        return a & 0x80 != 0 ? t : -t
    }

    /// mu-law byte to linear 16-bit sample.
    nonisolated(unsafe) static let mulaw: UnsafePointer<Int16> = table { byte in
        let u = Int32(~byte)
        let bias: Int32 = 0x84
        let t = (((u & 0x0F) << 3) + bias) << ((u & 0x70) >> 4)
        return u & 0x80 != 0 ? bias - t : t - bias
    }

    /// A table of the 256 bytes' samples; static storage for the life of the process.
    private static func table(_ expand: (UInt8) -> Int32) -> UnsafePointer<Int16> {
        let t = UnsafeMutablePointer<Int16>.allocate(capacity: 256)
        for byte in 0...255 { t[byte] = Int16(truncatingIfNeeded: expand(UInt8(byte))) }
        return UnsafePointer(t)
    }

    /// Expands `count` bytes of `source` through `table` into `destination` (interleaved as they are).
    @inline(__always)
    static func decode(_ source: UnsafePointer<UInt8>, count: Int, table: UnsafePointer<Int16>,
                       into destination: UnsafeMutablePointer<Int16>) {
        var i = 0
        while i < count {
            destination[i] = table[Int(source[i])]
            i &+= 1
        }
    }
}
