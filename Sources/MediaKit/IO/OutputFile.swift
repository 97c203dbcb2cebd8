#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// glibc's `copy_file_range` (not exported by Swift's Glibc module), looked up once.
private typealias CopyFileRange = @convention(c) (Int32, UnsafeMutablePointer<off_t>?, Int32, UnsafeMutablePointer<off_t>?, Int, UInt32) -> Int
private let copyFileRange: CopyFileRange? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "copy_file_range") else { return nil }
    return unsafeBitCast(symbol, to: CopyFileRange.self)
}()

/// A piece of memory the writer owns: it fills one at a time and hands it to the
/// background thread, which gives it back once written.
///
/// The memory is mapped directly (`mmap`), not taken from malloc, and kept in a small
/// process-wide pool when freed: buffers of 1 MiB made and freed for every file (HLS writes a
/// file per segment) would otherwise raise glibc's mmap threshold and leave its heap
/// fragmented, so that peak memory grew with the number of files written.
final class WriteChunk: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let capacity: Int

    /// Freed buffers kept for the next chunks (at most `poolLimit`), all of `poolSize` bytes.
    private final class Pool: @unchecked Sendable {
        let lock = NSLock()
        var free: [UnsafeMutableRawPointer] = []
    }
    private static let pool = Pool()
    private static let poolLimit = 6
    static let poolSize = 1 << 20

    init(capacity: Int) {
        self.capacity = capacity
        if capacity == Self.poolSize {
            Self.pool.lock.lock()
            let reused = Self.pool.free.popLast()
            Self.pool.lock.unlock()
            if let reused { base = reused; return }
        }
        let p = mmap(nil, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        if let p, p != MAP_FAILED {
            base = p
        } else {
            base = .allocate(byteCount: capacity, alignment: 64)   // no mapping to be had: malloc's memory
            mapped = false
        }
    }

    /// False for memory from malloc (mmap failed), which is never pooled.
    private var mapped = true

    deinit {
        if !mapped { return base.deallocate() }
        if capacity == Self.poolSize {
            Self.pool.lock.lock()
            defer { Self.pool.lock.unlock() }
            if Self.pool.free.count < Self.poolLimit {
                Self.pool.free.append(base)
                return
            }
        }
        munmap(base, capacity)
    }
}

/// Bytes on their way to the file: a region of a chunk, or (a part of) an array handed over
/// as it is (not copied).
enum WritePiece: @unchecked Sendable {
    case region(WriteChunk, Int, Int)
    case array(ArraySlice<UInt8>)
}

/// The thread that writes an ``OutputFile``'s full buffers while its owner goes on filling the
/// next one (double buffering: the kernel's copy of a write runs beside the muxing). At most
/// `maxQueued` batches wait; the owner blocks when it is that far ahead (memory stays bounded).
final class BackgroundWriter: @unchecked Sendable {
    private let fd: Int32
    private let cond = NSCondition()
    // Under `cond`.
    private var batches: [(pieces: [WritePiece], chunk: WriteChunk?)] = []
    private var busy = false
    private var stopping = false
    private var exited = false
    private var freeChunks: [WriteChunk] = []
    /// The first failure: errno and the file offset of the write that failed.
    private var failure: (errno: Int32, offset: Int64)?
    /// Bytes the thread has written (its file offset).
    private var written: Int64
    private let maxQueued = 2
    /// Run by the thread after its last batch (``finish(then:)``), and its error.
    private var finalAction: (@Sendable (Bool) -> MediaError?)?
    private var actionError: MediaError?

    /// Starts the thread writing to `fd`, whose first `offset` bytes are written already.
    init(fd: Int32, offset: Int64) {
        self.fd = fd
        written = offset
        let t = Thread { [self] in run() }
        t.name = "mediakit.output-writer"
        t.stackSize = 1 << 20
        t.start()
    }

    /// Queues `pieces` (and gives `chunk` back to the free list once they are written); waits
    /// while `maxQueued` batches are queued. Returns a free chunk for the next fill, if one was
    /// given back.
    func submit(_ pieces: [WritePiece], chunk: WriteChunk?) -> WriteChunk? {
        cond.lock()
        defer { cond.unlock() }
        while batches.count >= maxQueued && failure == nil { cond.wait() }
        if failure == nil { batches.append((pieces, chunk)) }
        cond.broadcast()
        return freeChunks.popLast()
    }

    /// Moves the thread's file offset to `offset` after its owner wrote directly (the thread
    /// is idle then: drained); it only names where a later write failed.
    func wroteDirectly(upTo offset: Int64) {
        cond.lock()
        written = offset
        cond.unlock()
    }

    /// The first failure so far, if any.
    var firstFailure: (errno: Int32, offset: Int64)? {
        cond.lock()
        defer { cond.unlock() }
        return failure
    }

    /// Waits until everything queued is written; returns the first failure, if any.
    func drain() -> (errno: Int32, offset: Int64)? {
        cond.lock()
        defer { cond.unlock() }
        while (!batches.isEmpty || busy) && failure == nil { cond.wait() }
        return failure
    }

    /// Ends the thread after what is queued, then runs `action` on it (told whether a write
    /// failed), and returns at once: ``wait()`` gives the outcome.
    func finish(then action: @escaping @Sendable (_ failed: Bool) -> MediaError?) {
        cond.lock()
        finalAction = action
        stopping = true
        cond.broadcast()
        cond.unlock()
    }

    /// Waits until the thread has ended (after ``finish(then:)``); returns the first write
    /// failure, or else the final action's error.
    func wait() -> (failure: (errno: Int32, offset: Int64)?, actionError: MediaError?) {
        cond.lock()
        defer { cond.unlock() }
        while !exited { cond.wait() }
        return (failure, actionError)
    }

    /// Ends the thread after what is queued (dropped when `discard`), and waits for it.
    func stop(discard: Bool) {
        cond.lock()
        if discard { batches.removeAll() }
        stopping = true
        cond.broadcast()
        while !exited { cond.wait() }
        cond.unlock()
    }

    private func run() {
        while true {
            cond.lock()
            while batches.isEmpty && !stopping { cond.wait() }
            if batches.isEmpty {
                if let action = finalAction {
                    finalAction = nil
                    let failed = failure != nil
                    cond.unlock()
                    let error = action(failed)
                    cond.lock()
                    actionError = error
                }
                exited = true
                cond.broadcast()
                cond.unlock()
                return
            }
            let batch = batches.removeFirst()
            busy = true
            let offset = written
            cond.unlock()
            let result = OutputFile.writeAll(fd, batch.pieces)
            cond.lock()
            busy = false
            switch result {
            case .success(let n): written = offset + n
            case .failure(let f): if failure == nil { failure = (f.errno, offset + f.written) }
            }
            if let c = batch.chunk { freeChunks.append(c) }
            if failure != nil { batches.removeAll() }
            cond.broadcast()
            cond.unlock()
        }
    }
}

/// A file being written: the bytes go to a temporary file beside the target,
/// which ``commit()`` renames into place. A file that is not committed (an
/// error, a cancel, a crash) never appears under the target name; ``discard()``
/// and `deinit` remove the temporary file.
///
/// Bytes are gathered into 1 MiB buffers; once the output passes the first of them, a
/// background thread writes each full buffer while the next one fills, so the kernel's copy
/// of the data runs beside the muxing. A write error the thread meets is thrown by the next
/// call (a write, ``flush()``, ``commit()`` ...). The operations that need the file as written
/// so far (``patch(_:at:)``, ``appendCopy(fromDescriptor:offset:count:sourcePath:)``,
/// ``flush()``, ``commit()``) wait for the thread first.
public final class OutputFile: @unchecked Sendable {
    /// The final name.
    public let path: String
    /// The temporary name the data goes to until ``commit()``.
    public let temporaryPath: String
    private var fd: Int32
    private let bufferLimit = 1 << 20
    /// The buffer being filled: bytes `sealed..<used` are not yet in ``pieces``.
    @exclusivity(unchecked) private var chunk: WriteChunk
    @exclusivity(unchecked) private var used = 0
    @exclusivity(unchecked) private var sealed = 0
    /// What goes to the file before the buffer's unsealed bytes, in order: regions of the
    /// buffer, and arrays (or parts) of at least ``holdMinimum`` bytes handed to ``write(_:)-([UInt8])``
    /// kept as they are (no copy: an MP4 or Matroska sample goes from the packet to the kernel).
    @exclusivity(unchecked) private var pieces: [WritePiece] = []
    /// Bytes of the arrays in ``pieces``.
    @exclusivity(unchecked) private var heldBytes = 0
    private let holdMinimum = 1 << 12
    /// Started once the output passes its first buffer.
    private var writer: BackgroundWriter?
    /// Bytes written so far (including what is still buffered).
    @exclusivity(unchecked) public private(set) var bytesWritten: Int64 = 0
    /// Bytes handed to the kernel or to the writer.
    private var submitted: Int64 = 0
    private var done = false

    /// True when the target is not a regular file (a device such as /dev/null, a pipe,
    /// "-" for standard output): it is written directly, never replaced.
    public let isStream: Bool

    /// Creates the temporary file `.<name>.partial-<pid>` beside `path`. A target that
    /// exists and is not a regular file (/dev/null, a FIFO), or "-" (standard output),
    /// is written directly instead: a device must never be replaced by a file.
    /// A writer whose in-progress file must be findable after a crash (fragmented MP4)
    /// names it with `temporaryPath`.
    /// - Throws: `.io` naming the directory and the OS error.
    public init(path: String, temporaryPath: String? = nil) throws {
        self.path = path
        chunk = WriteChunk(capacity: bufferLimit)
        var st = stat()
        if path == "-" || (stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG) {
            isStream = true
            self.temporaryPath = path
            fd = path == "-" ? dup(STDOUT_FILENO) : open(path, O_WRONLY | O_CLOEXEC)
            if fd < 0 {
                throw MediaError(.io, "cannot open for writing", errno: errno, path: path)
            }
            return
        }
        isStream = false
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        self.temporaryPath = temporaryPath ?? ((dir.isEmpty ? "" : dir + "/") + ".\(name).partial-\(getpid())")
        fd = open(self.temporaryPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            throw MediaError(.io, "cannot create a file in \(dir)", errno: errno, path: path)
        }
    }

    deinit { discard() }

    /// Appends bytes. An array of 4 KiB or more is not copied: it is kept until the bytes
    /// before it go out, and written from its own memory.
    public func write(_ bytes: [UInt8]) throws { try write(bytes[...]) }

    /// Appends a part of an array, as ``write(_:)-([UInt8])``: 4 KiB or more is kept, not copied.
    func write(_ bytes: ArraySlice<UInt8>) throws {
        guard bytes.count >= holdMinimum, !done else { return try bytes.withUnsafeBytes { try write($0) } }
        seal()
        pieces.append(.array(bytes))
        heldBytes += bytes.count
        bytesWritten += Int64(bytes.count)
        if heldBytes + used >= bufferLimit { try submit() }
    }

    /// Appends bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !done else { throw MediaError(.state, "write after commit or discard", path: path) }
        var rest = bytes
        while !rest.isEmpty {
            if used == chunk.capacity { try submit() }
            let n = min(rest.count, chunk.capacity - used)
            (chunk.base + used).copyMemory(from: rest.baseAddress!, byteCount: n)
            used += n
            bytesWritten += Int64(n)
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
        }
    }

    /// Appends `count` bytes (at most 64 KiB) that `body` writes in place, in the buffer
    /// (no copy in between: the MPEG-TS writer lays its packets out there).
    func append(count: Int, _ body: (UnsafeMutableRawPointer) -> Void) throws {
        precondition(count <= 1 << 16)
        guard !done else { throw MediaError(.state, "write after commit or discard", path: path) }
        if used + count > chunk.capacity { try submit() }
        body(chunk.base + used)
        used += count
        bytesWritten += Int64(count)
    }

    /// Closes the buffer's bytes so far into a region of ``pieces``.
    private func seal() {
        if used > sealed {
            pieces.append(.region(chunk, sealed, used - sealed))
            sealed = used
        }
    }

    /// Hands the pieces and the buffer to the background thread (started on the first call)
    /// and takes a free buffer to fill next.
    private func submit() throws {
        try checkWriter()
        seal()
        guard !pieces.isEmpty else { return }
        let batch = pieces
        pieces = []
        heldBytes = 0
        let full = used > 0 ? chunk : nil
        let w: BackgroundWriter
        if let writer { w = writer } else { w = BackgroundWriter(fd: fd, offset: submitted); writer = w }
        submitted = bytesWritten
        let next = w.submit(batch, chunk: full)
        if full != nil { chunk = next ?? WriteChunk(capacity: bufferLimit) }
        used = 0
        sealed = 0
    }

    /// Throws the background thread's failure, if it had one.
    private func checkWriter() throws {
        if let writer, let f = writer.firstFailure { throw Self.writeFailed(f.errno, temporaryPath, f.offset) }
    }

    /// The error of a failed write to `path` at `offset`.
    static func writeFailed(_ errno: Int32, _ path: String, _ offset: Int64) -> MediaError {
        MediaError(.io, "write failed", errno: errno, path: path, offset: offset)
    }

    /// Appends several pieces of memory in one system call where possible (`writev`),
    /// so large planes go from the decoder's memory to the file without a copy.
    public func write(pieces more: [UnsafeRawBufferPointer]) throws {
        guard !done else { throw MediaError(.state, "write after commit or discard", path: path) }
        try drain()
        let count = Int64(more.reduce(0) { $0 + $1.count })
        var iov = more.filter { $0.count > 0 }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        if case .failure(let f) = Self.writeVector(fd, &iov) {
            throw Self.writeFailed(f.errno, temporaryPath, submitted + f.written)
        }
        bytesWritten += count
        submitted += count
        writer?.wroteDirectly(upTo: submitted)
    }

    /// A failed write: errno and the bytes written before it.
    struct WriteFailure: Error {
        let errno: Int32
        let written: Int64
    }

    /// Writes `pieces` in order (`writev`, at most 1024 at a time), all of them; the arrays'
    /// memory pinned while it is written. Returns the bytes written.
    static func writeAll(_ fd: Int32, _ pieces: [WritePiece]) -> Result<Int64, WriteFailure> {
        var iov: [iovec] = []
        iov.reserveCapacity(pieces.count)
        // Each array's memory pinned by its own withUnsafeBytes, nested: at most a few hundred
        // (a batch holds about 1 MiB of arrays of 4 KiB or more).
        func pinned(_ i: Int) -> Result<Int64, WriteFailure> {
            if i == pieces.count { return writeVector(fd, &iov) }
            switch pieces[i] {
            case .region(let c, let start, let count):
                iov.append(iovec(iov_base: c.base + start, iov_len: count))
                return pinned(i + 1)
            case .array(let a):
                return a.withUnsafeBytes { b in
                    iov.append(iovec(iov_base: UnsafeMutableRawPointer(mutating: b.baseAddress), iov_len: b.count))
                    return pinned(i + 1)
                }
            }
        }
        return withExtendedLifetime(pieces) { pinned(0) }
    }

    /// The most bytes one `writev` is given: 256 KiB (the gathered megabyte goes out in 4 calls).
    /// Linux sizes the page-cache folios a write allocates by the write's length, and its cost
    /// per byte follows: small folios pay the per-folio work (LRU insertion, ext4's delayed
    /// allocation) more often; on a machine whose memory was just freed by deleting large files,
    /// 1 MiB folios made the kernel's copy into them several times slower (a 1 GB TS -> MP4
    /// remux in the bench script's sequence: 0.54-1.27 s with 1 MiB calls, 0.43-0.55 s with 256
    /// KiB, 0.38-0.50 s with 64 KiB). In the script's runs of 3 Dec 2026 256 KiB calls did at
    /// least as well as 64 KiB ones on every row and better on the segment writers (HLS 0.46x /
    /// 0.48x of ffmpeg's wall time against 0.50x / 0.64x; ffmpeg's hls muxer writes 256 KiB at a
    /// time): BENCHMARKS.md.
    static let writeCall = 256 << 10

    /// `writev` of `iov` until all of it is written (retried on EINTR and short writes).
    private static func writeVector(_ fd: Int32, _ iov: inout [iovec]) -> Result<Int64, WriteFailure> {
        var first = 0
        var written: Int64 = 0
        while first < iov.count {
            if iov[first].iov_len == 0 { first += 1; continue }
            // At most writeCall bytes a call (the iovecs that fit, or a part of a longer one).
            var count = 0, bytes = 0
            while first + count < iov.count, count < 1024, count == 0 || bytes + iov[first + count].iov_len <= writeCall {
                bytes += iov[first + count].iov_len
                count += 1
            }
            let n: Int
            if count == 1 && bytes > writeCall {
                var part = iovec(iov_base: iov[first].iov_base, iov_len: writeCall)
                n = writev(fd, &part, 1)
            } else {
                n = iov[first...].withUnsafeBufferPointer { writev(fd, $0.baseAddress, Int32(count)) }
            }
            if n < 0 {
                if errno == EINTR { continue }
                return .failure(WriteFailure(errno: errno, written: written))
            }
            written += Int64(n)
            var left = n
            while first < iov.count && left >= iov[first].iov_len { left -= iov[first].iov_len; first += 1 }
            if left > 0 {
                iov[first].iov_base += left
                iov[first].iov_len -= left
            }
        }
        return .success(written)
    }

    /// Writes everything gathered and waits until the file holds it (through the background
    /// thread when it runs, else here). - Throws: `.io`, the first write failure.
    private func drain() throws {
        if let writer {
            try submit()
            if let f = writer.drain() {
                throw Self.writeFailed(f.errno, temporaryPath, f.offset)
            }
            return
        }
        seal()
        guard !pieces.isEmpty else { return }
        if case .failure(let f) = Self.writeAll(fd, pieces) {
            throw Self.writeFailed(f.errno, temporaryPath, submitted + f.written)
        }
        pieces.removeAll(keepingCapacity: true)
        heldBytes = 0
        used = 0
        sealed = 0
        submitted = bytesWritten
    }

    /// Overwrites bytes at `offset` (for headers whose sizes are known at the end).
    public func patch(_ bytes: [UInt8], at offset: Int64) throws {
        try drain()
        if isStream { return }   // a pipe or device cannot be rewritten: the header stays as first written
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        if n != bytes.count { throw MediaError(.io, "cannot update the header", errno: errno, path: temporaryPath, offset: offset) }
    }

    /// Hands the buffered bytes to the kernel, so that they survive a crash of this process.
    public func flush() throws {
        guard !done else { throw MediaError(.state, "flush after commit or discard", path: path) }
        try drain()
    }

    /// Appends `count` bytes of another open file, from `offset`, copied in the kernel
    /// (`copy_file_range`, falling back to read/write), without passing through memory.
    /// - Throws: `.io` when reading the source or writing fails, `.endOfFile` when the source is short.
    public func appendCopy(fromDescriptor source: Int32, offset: Int64, count: Int64, sourcePath: String) throws {
        guard !done else { throw MediaError(.state, "write after commit or discard", path: path) }
        try drain()
        var inOffset = off_t(offset)
        var left = count
        var useCopyRange = true
        while left > 0 {
            if useCopyRange {
                guard let copyRange = copyFileRange else { useCopyRange = false; continue }
                let n = copyRange(source, &inOffset, fd, nil, Int(min(left, 1 << 30)), 0)
                if n > 0 {
                    left -= Int64(n)
                    bytesWritten += Int64(n)
                    submitted += Int64(n)
                    writer?.wroteDirectly(upTo: submitted)
                    continue
                }
                if n == 0 { throw MediaError(.endOfFile, "the source ends before \(count) bytes could be copied", path: sourcePath, offset: Int64(inOffset)) }
                let err = errno
                if err == EINTR { continue }
                if err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == EBADF {
                    useCopyRange = false
                    continue
                }
                throw Self.writeFailed(err, temporaryPath, bytesWritten)
            }
            // Fallback: through a bounded buffer.
            let chunk = Int(min(left, 1 << 20))
            var tmp = [UInt8](repeating: 0, count: chunk)
            let got = tmp.withUnsafeMutableBytes { pread(source, $0.baseAddress, chunk, inOffset) }
            if got < 0 {
                if errno == EINTR { continue }
                throw MediaError(.io, "read failed", errno: errno, path: sourcePath, offset: Int64(inOffset))
            }
            if got == 0 { throw MediaError(.endOfFile, "the source ends before \(count) bytes could be copied", path: sourcePath, offset: Int64(inOffset)) }
            try tmp.withUnsafeBytes { try writeNow(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
            bytesWritten += Int64(got)
            inOffset += off_t(got)
            left -= Int64(got)
        }
    }

    /// The open descriptor of the temporary file (for copies out of it), after flushing.
    func flushedDescriptor() throws -> Int32 {
        try drain()
        return fd
    }

    /// Writes `bytes` here and now (the fallback of a copy; nothing is gathered then).
    private func writeNow(_ bytes: UnsafeRawBufferPointer) throws {
        var iov = [iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress), iov_len: bytes.count)]
        if case .failure(let f) = Self.writeVector(fd, &iov) {
            throw Self.writeFailed(f.errno, temporaryPath, submitted + f.written)
        }
        submitted += Int64(bytes.count)
        writer?.wroteDirectly(upTo: submitted)
    }

    /// Flushes the buffer, gives the temporary file the permission bits, owner and group of the
    /// file it replaces (`st`; the owner as far as this process may set it) and waits until its
    /// bytes are on the disk (`fsync`), so that the rename of ``commit()`` can only ever expose
    /// a whole file.
    /// - Throws: `.io` naming the OS error.
    func syncForReplacing(_ st: stat) throws {
        try drain()
        if isStream { return }
        let mode = st.st_mode
        _ = fchown(fd, st.st_uid, st.st_gid)   // best effort: only root may give a file away
        if fchmod(fd, mode & 0o7777) != 0 {
            throw MediaError(.io, "cannot set the permissions of the temporary file", errno: errno, path: temporaryPath)
        }
        if fsync(fd) != 0 { throw MediaError(.io, "fsync failed", errno: errno, path: temporaryPath) }
    }

    /// Flushes, closes and renames the file to ``path``.
    public func commit() throws {
        guard !done else { throw MediaError(.state, "commit after commit or discard", path: path) }
        do {
            try drain()
        } catch {
            discard()
            throw error
        }
        done = true
        writer?.stop(discard: false)
        writer = nil
        let closed = close(fd)
        fd = -1
        if closed != 0 {
            if !isStream { unlink(temporaryPath) }
            throw MediaError(.io, "close failed", errno: errno, path: temporaryPath)
        }
        if isStream { return }
        if rename(temporaryPath, path) != 0 {
            let err = errno
            unlink(temporaryPath)
            throw MediaError(.io, "cannot rename \(temporaryPath) into place", errno: err, path: path)
        }
    }

    /// Starts a ``commit()`` that the background thread completes: it writes what is still
    /// buffered, closes the file and renames it into place while the caller goes on (a segment
    /// writer opens its next file at once). ``PendingCommit/wait()`` gives the outcome; a failed
    /// write leaves no file. A file that never passed its first buffer (no thread), or a
    /// stream, is committed here and now.
    /// - Throws: `.io` for a failure already known (the file is then removed).
    func commitInBackground() throws -> PendingCommit {
        guard !done else { throw MediaError(.state, "commit after commit or discard", path: path) }
        guard let writer, !isStream else {
            try commit()
            return PendingCommit(writer: nil, temporaryPath: temporaryPath)
        }
        do {
            try submit()
        } catch {
            discard()
            throw error
        }
        done = true
        self.writer = nil
        let fd = self.fd, temporaryPath = self.temporaryPath, path = self.path
        self.fd = -1
        writer.finish { failed in
            let closed = close(fd), err = errno
            if failed || closed != 0 {
                unlink(temporaryPath)
                return failed ? nil : MediaError(.io, "close failed", errno: err, path: temporaryPath)
            }
            if rename(temporaryPath, path) != 0 {
                let err = errno
                unlink(temporaryPath)
                return MediaError(.io, "cannot rename \(temporaryPath) into place", errno: err, path: path)
            }
            return nil
        }
        return PendingCommit(writer: writer, temporaryPath: temporaryPath)
    }

    /// Closes and removes the temporary file. Harmless after ``commit()``.
    public func discard() {
        writer?.stop(discard: true)
        writer = nil
        if fd >= 0 { close(fd); fd = -1 }
        if !done && !isStream { unlink(temporaryPath) }
        done = true
    }
}

/// A commit running on an ``OutputFile``'s background thread (``OutputFile/commitInBackground()``).
final class PendingCommit: @unchecked Sendable {
    private let writer: BackgroundWriter?
    private let temporaryPath: String

    init(writer: BackgroundWriter?, temporaryPath: String) {
        self.writer = writer
        self.temporaryPath = temporaryPath
    }

    /// Waits until the file is renamed into place (or removed after a failure).
    /// - Throws: `.io`: the write, close or rename that failed.
    func wait() throws {
        guard let writer else { return }
        let outcome = writer.wait()
        if let f = outcome.failure { throw OutputFile.writeFailed(f.errno, temporaryPath, f.offset) }
        if let e = outcome.actionError { throw e }
    }
}
