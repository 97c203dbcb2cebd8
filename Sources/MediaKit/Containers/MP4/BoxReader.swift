/// Hard limits that keep a hostile file from making us allocate without bound.
enum MP4Limits {
    /// The largest moov (or moof) box read into memory.
    static let maxHeaderBox: Int64 = 512 << 20
    /// The most entries a sample table may declare.
    static let maxTableEntries: Int = 64 << 20
    /// The largest single sample.
    static let maxSampleSize: Int = 256 << 20
    /// The most samples a trun without a per-sample table may declare when the source's size
    /// is not known (a stream), so cannot bound them (40 MiB of index; 21 s of 48 kHz PCM).
    static let maxUncountedRunSamples: UInt32 = 1 << 20
    /// The deepest box nesting followed.
    static let maxDepth = 16
}

/// A cursor over the bytes of one box, that can never read past the box's end
/// (a child box can never read past its parent). Errors name the box path and
/// the absolute file offset.
struct BoxReader {
    let bytes: [UInt8]
    /// Absolute file offset of `bytes[0]`.
    let base: Int64
    private(set) var position: Int
    let end: Int
    /// Path of the box being read, e.g. "moov/trak[0]/mdia".
    let path: String
    let file: String

    init(bytes: [UInt8], base: Int64, start: Int, end: Int, path: String, file: String) {
        self.bytes = bytes
        self.base = base
        self.position = start
        self.end = end
        self.path = path
        self.file = file
    }

    var remaining: Int { end - position }
    var absoluteOffset: Int64 { base + Int64(position) }

    func error(_ kind: MediaError.Kind = .invalidData, _ message: String) -> MediaError {
        MediaError(kind, message, path: file, offset: absoluteOffset, context: path)
    }

    mutating func need(_ n: Int, _ what: @autoclosure () -> String) throws {
        if n < 0 || n > remaining {
            throw error(.invalidData, "\(what()) needs \(n) bytes, the box has \(remaining) left")
        }
    }

    mutating func u8() throws -> UInt8 {
        try need(1, "a byte")
        defer { position += 1 }
        return bytes[position]
    }

    mutating func u16() throws -> UInt16 {
        try need(2, "a 16-bit field")
        defer { position += 2 }
        return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
    }

    mutating func u24() throws -> UInt32 {
        try need(3, "a 24-bit field")
        defer { position += 3 }
        return UInt32(bytes[position]) << 16 | UInt32(bytes[position + 1]) << 8 | UInt32(bytes[position + 2])
    }

    mutating func u32() throws -> UInt32 {
        try need(4, "a 32-bit field")
        defer { position += 4 }
        return readU32(at: position)
    }

    func readU32(at p: Int) -> UInt32 { be32(bytes, p) }

    mutating func u64() throws -> UInt64 {
        try need(8, "a 64-bit field")
        let hi = UInt64(readU32(at: position)), lo = UInt64(readU32(at: position + 4))
        position += 8
        return hi << 32 | lo
    }

    mutating func i32() throws -> Int32 { Int32(bitPattern: try u32()) }

    mutating func fourCC() throws -> String {
        try need(4, "a four-character code")
        defer { position += 4 }
        return fourCCString(bytes[position..<position + 4])
    }

    mutating func skip(_ n: Int) throws {
        try need(n, "skipping")
        position += n
    }

    mutating func take(_ n: Int) throws -> [UInt8] {
        try need(n, "a field")
        defer { position += n }
        return Array(bytes[position..<position + n])
    }

    /// Version and flags of a full box.
    mutating func fullBoxHeader() throws -> (version: UInt8, flags: UInt32) {
        let v = try u32()
        return (UInt8(v >> 24), v & 0xFF_FFFF)
    }

    /// Checks that a table of `count` entries of `entrySize` bytes fits in what remains.
    mutating func checkTable(count: UInt64, entrySize: Int, _ what: String) throws -> Int {
        if count > UInt64(MP4Limits.maxTableEntries) {
            throw error(.limit, "\(what) declares \(count) entries, above the limit of \(MP4Limits.maxTableEntries)")
        }
        let n = Int(count)
        if n * entrySize > remaining {
            throw error(.invalidData, "\(what) declares \(n) entries of \(entrySize) bytes, the box has \(remaining) bytes left")
        }
        return n
    }

    /// Iterates the child boxes that follow the current position.
    /// Each child reader is bounded to the child's size.
    mutating func children(_ body: (String, inout BoxReader) throws -> Void) throws {
        var counts: [String: Int] = [:]
        while remaining >= 8 {
            let start = position
            let size32 = try u32()
            let type = try fourCC()
            var size = Int64(size32)
            var headerSize = 8
            if size32 == 1 {
                size = Int64(bitPattern: try u64())
                headerSize = 16
            } else if size32 == 0 {
                size = Int64(end - start)
            }
            if type == "uuid" {
                try need(16, "a uuid box's extended type")
                headerSize += 16
                position += 16
            }
            if size < Int64(headerSize) || size > Int64(end - start) {
                position = start
                throw error(.invalidData, "box '\(type)' declares \(size) bytes but its parent has \(end - start) left from here (header \(headerSize))")
            }
            let n = counts[type, default: 0]
            counts[type] = n + 1
            var child = BoxReader(bytes: bytes, base: base, start: start + headerSize, end: start + Int(size),
                                  path: path + "/" + type + (n > 0 || type == "trak" ? "[\(n)]" : ""), file: file)
            try body(type, &child)
            position = start + Int(size)
        }
        // Up to 7 trailing bytes (e.g. a 32-bit zero terminator) are tolerated.
    }
}

/// A four-character code as text, with non-printable bytes shown as `\xNN`.
func fourCCString<C: Collection>(_ b: C) -> String where C.Element == UInt8 {
    var s = ""
    for c in b {
        if c >= 0x20 && c < 0x7F { s.append(Character(Unicode.Scalar(c))) } else { s += "\\x" + String(c, radix: 16) }
    }
    return s
}
