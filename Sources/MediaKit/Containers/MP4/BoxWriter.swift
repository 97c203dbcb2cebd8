/// Builds ISO BMFF boxes in memory, big-endian, with sizes filled in when a box closes.
///
/// Only headers and sample tables go through it; media data is written to the file directly.
struct BoxWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

    var count: Int { bytes.count }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { bytes.append(UInt8(truncatingIfNeeded: v >> 8)); bytes.append(UInt8(truncatingIfNeeded: v & 0xFF)) }
    mutating func u24(_ v: UInt32) { bytes.append(UInt8(truncatingIfNeeded: (v >> 16) & 0xFF)); u16(UInt16(truncatingIfNeeded: v & 0xFFFF)) }
    mutating func u32(_ v: UInt32) {
        bytes.append(UInt8(truncatingIfNeeded: v >> 24)); bytes.append(UInt8(truncatingIfNeeded: (v >> 16) & 0xFF))
        bytes.append(UInt8(truncatingIfNeeded: (v >> 8) & 0xFF)); bytes.append(UInt8(truncatingIfNeeded: v & 0xFF))
    }
    mutating func i32(_ v: Int32) { u32(UInt32(bitPattern: v)) }
    mutating func u64(_ v: UInt64) { u32(UInt32(truncatingIfNeeded: v >> 32)); u32(UInt32(truncatingIfNeeded: v & 0xFFFF_FFFF)) }
    mutating func zeros(_ n: Int) { bytes.append(contentsOf: repeatElement(0, count: n)) }
    mutating func append(_ b: [UInt8]) { bytes.append(contentsOf: b) }
    mutating func fourCC(_ s: String) {
        // One byte a character (ISO 8859-1): iTunes atoms start with (c), 0xA9 ("©nam").
        var u = s.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
        while u.count < 4 { u.append(0x20) }
        bytes.append(contentsOf: u.prefix(4))
    }

    /// Writes a box: header, then whatever `body` appends; patches the 32-bit size.
    mutating func box(_ type: String, _ body: (inout BoxWriter) throws -> Void) rethrows {
        let start = bytes.count
        u32(0)
        fourCC(type)
        try body(&self)
        patchSize(at: start)
    }

    /// A full box: header, version and flags, then `body`.
    mutating func fullBox(_ type: String, version: UInt8, flags: UInt32, _ body: (inout BoxWriter) throws -> Void) rethrows {
        try box(type) { w in
            w.u32(UInt32(version) << 24 | (flags & 0xFF_FFFF))
            try body(&w)
        }
    }

    mutating func patchSize(at start: Int) {
        let size = UInt32(truncatingIfNeeded: bytes.count - start)
        bytes[start] = UInt8(truncatingIfNeeded: size >> 24); bytes[start + 1] = UInt8(truncatingIfNeeded: (size >> 16) & 0xFF)
        bytes[start + 2] = UInt8(truncatingIfNeeded: (size >> 8) & 0xFF); bytes[start + 3] = UInt8(truncatingIfNeeded: size & 0xFF)
    }

    mutating func patchU32(_ v: UInt32, at i: Int) {
        bytes[i] = UInt8(truncatingIfNeeded: v >> 24); bytes[i + 1] = UInt8(truncatingIfNeeded: (v >> 16) & 0xFF)
        bytes[i + 2] = UInt8(truncatingIfNeeded: (v >> 8) & 0xFF); bytes[i + 3] = UInt8(truncatingIfNeeded: v & 0xFF)
    }

    /// An ISO 639-2/T code packed as mdhd stores it (5 bits per letter, minus 0x60).
    static func packedLanguage(_ code: String) -> UInt16 {
        let u = Array(code.lowercased().utf8)
        guard u.count == 3, u.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else { return 0x55C4 }  // "und"
        return UInt16(u[0] - 0x60) << 10 | UInt16(u[1] - 0x60) << 5 | UInt16(u[2] - 0x60)
    }
}
