/// A file as it will read once some of its bytes are replaced and its size set: the bytes of
/// `base` with `patches` laid over them, zeros past the base's end, cut at `size`. A writer
/// checks the file it is about to make through it before it changes a byte (``TagEditor``'s
/// MP4 edit in place).
final class PatchedSource: ByteSource, @unchecked Sendable {
    let base: ByteSource
    /// The replaced bytes: where, and what (not overlapping, any order).
    let patches: [(offset: Int64, bytes: [UInt8])]
    let size: Int64
    var name: String { base.name }
    var knownSize: Int64? { size }
    var isSeekable: Bool { true }

    /// `base` with `patches` over it, `size` bytes long.
    init(base: ByteSource, patches: [(offset: Int64, bytes: [UInt8])], size: Int64) {
        self.base = base
        self.patches = patches
        self.size = size
    }

    func readSome(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset >= 0, offset < size, buffer.count > 0 else { return 0 }
        let count = Int(min(Int64(buffer.count), size - offset))
        let baseSize = base.knownSize ?? 0
        var done = 0
        // The base's bytes first (zeros past its end), then each patch copied over them.
        if offset < baseSize {
            let n = Int(min(Int64(count), baseSize - offset))
            try base.read(at: offset, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n]))
            done = n
        }
        if done < count { UnsafeMutableRawBufferPointer(rebasing: buffer[done..<count]).initializeMemory(as: UInt8.self, repeating: 0) }
        for p in patches {
            let lo = max(offset, p.offset), hi = min(offset + Int64(count), p.offset + Int64(p.bytes.count))
            guard lo < hi else { continue }
            p.bytes.withUnsafeBytes { src in
                let from = Int(lo - p.offset), to = Int(lo - offset), n = Int(hi - lo)
                UnsafeMutableRawBufferPointer(rebasing: buffer[to..<to + n]).copyMemory(from: UnsafeRawBufferPointer(rebasing: src[from..<from + n]))
            }
        }
        return count
    }
}
