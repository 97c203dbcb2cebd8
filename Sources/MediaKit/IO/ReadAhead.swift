import Foundation

/// Reads a file front to back ahead of its reader, on a thread of its own, so that the
/// kernel's copy of the next blocks runs beside the parsing of this one (the MPEG-TS reader).
///
/// The reader asks for blocks with ``read(at:count:)``. While it asks for each block where the
/// previous one ended, with the same size, the blocks come from the thread, which keeps up to
/// ``depth`` of them read ahead (memory: `depth` x the block size). Any other request (a seek, a
/// resynchronisation, the first reads of a probe) is read here and now, and the thread starts
/// again after it once two requests in a row were sequential: a short read starts no thread.
/// Only a ``FileSource`` is read ahead (its reads are `pread`s, safe beside the reader's own).
final class ReadAhead: @unchecked Sendable {
    /// Blocks held read ahead.
    static let depth = 8

    /// The state the thread and the reader share (the thread keeps it alive, not the reader).
    private final class Shared: @unchecked Sendable {
        let source: ByteSource
        let cond = NSCondition()
        // Under `cond`.
        /// The blocks read ahead, in order, each with its offset (or the read's failure).
        var blocks: [(offset: Int64, result: Result<[UInt8], MediaError>)] = []
        /// Where the thread reads next, and how much.
        var next: Int64 = 0
        var blockSize = 0
        /// Bumped by every restart: a block read for an older one is dropped.
        var generation = 0
        var stopping = false
        var exited = false
        /// The file's end was reached (or a read failed): the thread waits for a restart.
        var ended = false

        init(source: ByteSource) { self.source = source }

        func run() {
            cond.lock()
            while true {
                while !stopping && (ended || blocks.count >= ReadAhead.depth) { cond.wait() }
                if stopping { break }
                let at = next, size = blockSize, gen = generation
                cond.unlock()
                let result: Result<[UInt8], MediaError>
                do { result = .success(try source.readUpTo(at: at, count: size)) } catch let e as MediaError {
                    result = .failure(e)
                } catch {
                    result = .failure(MediaError(.io, "\(error)", path: source.name, offset: at))
                }
                cond.lock()
                guard gen == generation else { continue }
                blocks.append((at, result))
                if case .success(let b) = result, b.count == size { next = at + Int64(size) } else { ended = true }
                cond.broadcast()
            }
            exited = true
            cond.broadcast()
            cond.unlock()
        }
    }

    private let shared: Shared?
    private let source: ByteSource

    /// True when blocks are read ahead on a thread (a ``FileSource`` of a regular file).
    var readsAhead: Bool { shared != nil }
    /// Where the reader's previous request ended, and its size: the next one there is sequential.
    private var expected: Int64 = -1
    private var lastCount = 0
    /// True while the thread reads ahead for the requests to come.
    private var streaming = false
    private var threadStarted = false

    /// Reads `source` (ahead only when it is a ``FileSource`` of a regular file).
    init(source: ByteSource) {
        self.source = source
        if let f = source as? FileSource, f.isRegularFile { shared = Shared(source: f) } else { shared = nil }
    }

    deinit {
        guard let shared, threadStarted else { return }
        shared.cond.lock()
        shared.stopping = true
        shared.cond.broadcast()
        while !shared.exited { shared.cond.wait() }
        shared.cond.unlock()
    }

    /// Up to `count` bytes at `offset` (fewer at the end of the source), as
    /// ``ByteSource/readUpTo(at:count:)``. - Throws: the read's error.
    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        guard let shared else { return try source.readUpTo(at: offset, count: count) }
        let sequential = offset == expected && count == lastCount
        expected = offset + Int64(count)
        lastCount = count
        if sequential && streaming {
            shared.cond.lock()
            while shared.blocks.isEmpty && !shared.ended { shared.cond.wait() }
            let block = shared.blocks.isEmpty ? nil : shared.blocks.removeFirst()
            shared.cond.broadcast()
            shared.cond.unlock()
            if let block, block.offset == offset { return try block.result.get() }
            // Past the end the thread stopped at, or not the block asked for (cannot happen
            // while the requests are sequential): read here.
        }
        let bytes = try source.readUpTo(at: offset, count: count)
        // Read ahead from here when this request continued the previous one (and the file goes on).
        shared.cond.lock()
        shared.generation += 1
        shared.blocks.removeAll()
        streaming = sequential && bytes.count == count
        shared.ended = !streaming
        shared.next = offset + Int64(count)
        shared.blockSize = count
        shared.cond.broadcast()
        shared.cond.unlock()
        if streaming && !threadStarted {
            threadStarted = true
            let s = shared
            let t = Thread { s.run() }
            t.name = "mediakit.read-ahead"
            t.stackSize = 1 << 20
            t.start()
        }
        return bytes
    }
}

/// Reads pieces of varying size that come forward through a file with small gaps between
/// them (an MP4's samples in file order) out of blocks read ahead on a thread (``ReadAhead``),
/// so that the kernel's copy of the file runs beside the muxing and a piece costs a memory
/// copy instead of a system call. Requests that do not continue forward (a seek, the random
/// access of a decoder) are read directly, and the blocks are used again only after
/// ``runBeforeBlocks`` forward requests in a row. Any other source than a regular file is
/// read directly.
final class ForwardReader: @unchecked Sendable {
    /// Bytes per block read ahead (``ReadAhead/depth`` of them held).
    static let blockSize = 1 << 19
    /// The largest gap between the end of one request and the start of the next that still
    /// counts as reading forward (the skipped bytes are read with the block, not used).
    static let maxGap: Int64 = 1 << 16
    /// Forward requests in a row before blocks are read.
    static let runBeforeBlocks = 8

    private let source: ByteSource
    private let ahead: ReadAhead
    /// The block last read, and its offset.
    private var block: [UInt8] = []
    private var blockStart: Int64 = -1
    /// Where the previous request ended, and how many forward requests came in a row.
    private var lastEnd: Int64 = -1
    private var run = 0

    init(source: ByteSource) {
        self.source = source
        ahead = ReadAhead(source: source)
    }

    /// Exactly `count` bytes at `offset`, as ``ByteSource/read(at:count:)``.
    /// - Throws: `.endOfFile` when the source ends first; the read's error.
    func read(at offset: Int64, count: Int) throws -> [UInt8] {
        let forward = lastEnd >= 0 && offset >= lastEnd && offset - lastEnd <= Self.maxGap
        run = forward ? run + 1 : 0
        lastEnd = offset + Int64(count)
        // Only a file read ahead gains from blocks (and only a file can give bytes before the
        // request's offset again: a stream's reads stay as they were).
        guard ahead.readsAhead, run >= Self.runBeforeBlocks, count > 0 else { return try source.read(at: offset, count: count) }
        let size = Int64(Self.blockSize)
        var missing = false
        let bytes: [UInt8]
        do {
            bytes = try blockBytes(at: offset, count: count, size: size, missing: &missing)
        } catch {
            // A block failed to read (EIO somewhere in its 512 KiB): the request's own bytes are
            // read directly, and their error, if they have one, is the one thrown.
            block = []
            blockStart = -1
            return try source.read(at: offset, count: count)
        }
        // Past the blocks' end: read directly (its error names the end, or the bytes are there now).
        return missing ? try source.read(at: offset, count: count) : bytes
    }

    /// `count` bytes at `offset` copied out of the blocks read ahead; `missing` when the blocks
    /// end first (nothing is copied then).
    private func blockBytes(at offset: Int64, count: Int, size: Int64, missing: inout Bool) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buf, initialized in
            var done = 0
            while done < count {
                let at = offset + Int64(done)
                let start = at / size * size
                if start != blockStart {
                    block = try ahead.read(at: start, count: Self.blockSize)
                    blockStart = start
                }
                let from = Int(at - start)
                let n = min(count - done, block.count - from)
                if n <= 0 { missing = true; break }   // the file ended in this block (or it grew since)
                block.withUnsafeBytes { b in
                    (UnsafeMutableRawPointer(buf.baseAddress!) + done).copyMemory(from: b.baseAddress! + from, byteCount: n)
                }
                done += n
            }
            initialized = missing ? 0 : count
        }
    }
}
