#if canImport(Glibc)
import Glibc
#endif

/// glibc's `copy_file_range` (not exported by Swift's Glibc module), looked up once.
private typealias CopyFileRange = @convention(c) (Int32, UnsafeMutablePointer<off_t>?, Int32, UnsafeMutablePointer<off_t>?, Int, UInt32) -> Int
private let copyFileRange: CopyFileRange? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "copy_file_range") else { return nil }
    return unsafeBitCast(symbol, to: CopyFileRange.self)
}()

/// A file being written: the bytes go to a temporary file beside the target,
/// which ``commit()`` renames into place. A file that is not committed (an
/// error, a cancel, a crash) never appears under the target name; ``discard()``
/// and `deinit` remove the temporary file.
public final class OutputFile: @unchecked Sendable {
    /// The final name.
    public let path: String
    /// The temporary name the data goes to until ``commit()``.
    public let temporaryPath: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    private let bufferLimit = 1 << 20
    /// What goes to the file before ``buffer``, in order: arrays of at least ``holdMinimum``
    /// bytes handed to ``write(_:)-([UInt8])`` kept as they are (no copy: an MP4 or Matroska
    /// sample goes from the packet to the kernel), and copies of the buffer's bytes that came
    /// before each; written with the buffer in one `writev` once they hold ``bufferLimit``.
    private var held: [[UInt8]] = []
    private var heldBytes = 0
    private let holdMinimum = 1 << 12
    /// Bytes written so far (including what is still buffered).
    public private(set) var bytesWritten: Int64 = 0
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
        var st = stat()
        if path == "-" || (stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG) {
            isStream = true
            self.temporaryPath = path
            fd = path == "-" ? dup(STDOUT_FILENO) : open(path, O_WRONLY | O_CLOEXEC)
            if fd < 0 {
                throw MediaError(.io, "cannot open for writing", errno: errno, path: path)
            }
            buffer.reserveCapacity(bufferLimit)
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
        buffer.reserveCapacity(bufferLimit)
    }

    deinit { discard() }

    /// Appends bytes. An array of 4 KiB or more is not copied: one of 256 KiB or more goes to the
    /// file at once (after what is buffered), a smaller one is kept until the bytes go out.
    public func write(_ bytes: [UInt8]) throws {
        guard bytes.count >= holdMinimum, !done else { return try bytes.withUnsafeBytes { try write($0) } }
        if bytes.count >= bufferLimit / 4 {
            // A writer's own buffer (MPEG-TS) is written as it is; holding it would make the
            // writer's next append copy it (copy on write).
            try flushBuffer()
            bytesWritten += Int64(bytes.count)
            return try bytes.withUnsafeBytes { try writeAll($0) }
        }
        bytesWritten += Int64(bytes.count)
        if !buffer.isEmpty {
            held.append(buffer.withUnsafeBytes { [UInt8]($0) })   // a copy: the buffer keeps its storage
            heldBytes += buffer.count
            buffer.removeAll(keepingCapacity: true)
        }
        held.append(bytes)
        heldBytes += bytes.count
        if heldBytes >= bufferLimit { try flushBuffer() }
    }

    /// Appends bytes.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        guard !done else { throw MediaError(.state, "write after commit or discard", path: path) }
        bytesWritten += Int64(bytes.count)
        if buffer.count + bytes.count <= bufferLimit {
            buffer.append(contentsOf: bytes)
            return
        }
        try flushBuffer()
        if bytes.count >= bufferLimit { try writeAll(bytes) } else { buffer.append(contentsOf: bytes) }
    }

    /// Appends several pieces of memory in one system call where possible (`writev`),
    /// so large planes go from the decoder's memory to the file without a copy.
    public func write(pieces: [UnsafeRawBufferPointer]) throws {
        guard !done else { throw MediaError(.state, "write after commit or discard", path: path) }
        try flushBuffer()
        try writeVector(pieces)
        bytesWritten += Int64(pieces.reduce(0) { $0 + $1.count })
    }

    /// Writes `pieces` in order (`writev`, at most 1024 at a time), all of them.
    private func writeVector(_ pieces: [UnsafeRawBufferPointer]) throws {
        var iov = pieces.filter { $0.count > 0 }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        var first = 0
        var written: Int64 = 0
        while first < iov.count {
            let n = iov[first...].withUnsafeBufferPointer { writev(fd, $0.baseAddress, Int32(min($0.count, 1024))) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError(.io, "write failed", errno: errno, path: temporaryPath, offset: bytesWritten - Int64(heldBytes + buffer.count) + written)
            }
            written += Int64(n)
            var left = n
            while first < iov.count && left >= iov[first].iov_len { left -= iov[first].iov_len; first += 1 }
            if left > 0 {
                iov[first].iov_base += left
                iov[first].iov_len -= left
            }
        }
    }

    /// Overwrites bytes at `offset` (for headers whose sizes are known at the end).
    public func patch(_ bytes: [UInt8], at offset: Int64) throws {
        try flushBuffer()
        if isStream { return }   // a pipe or device cannot be rewritten: the header stays as first written
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        if n != bytes.count { throw MediaError(.io, "cannot update the header", errno: errno, path: temporaryPath, offset: offset) }
    }

    /// Hands the buffered bytes to the kernel, so that they survive a crash of this process.
    public func flush() throws {
        guard !done else { throw MediaError(.state, "flush after commit or discard", path: path) }
        try flushBuffer()
    }

    /// Appends `count` bytes of another open file, from `offset`, copied in the kernel
    /// (`copy_file_range`, falling back to read/write), without passing through memory.
    /// - Throws: `.io` when reading the source or writing fails, `.endOfFile` when the source is short.
    public func appendCopy(fromDescriptor source: Int32, offset: Int64, count: Int64, sourcePath: String) throws {
        guard !done else { throw MediaError(.state, "write after commit or discard", path: path) }
        try flushBuffer()
        var inOffset = off_t(offset)
        var left = count
        var useCopyRange = true
        while left > 0 {
            if useCopyRange {
                guard let copyRange = copyFileRange else { useCopyRange = false; continue }
                let n = copyRange(source, &inOffset, fd, nil, Int(min(left, 1 << 30)), 0)
                if n > 0 { left -= Int64(n); bytesWritten += Int64(n); continue }
                if n == 0 { throw MediaError(.endOfFile, "the source ends before \(count) bytes could be copied", path: sourcePath, offset: Int64(inOffset)) }
                let err = errno
                if err == EINTR { continue }
                if err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == EBADF {
                    useCopyRange = false
                    continue
                }
                throw MediaError(.io, "write failed", errno: err, path: temporaryPath, offset: bytesWritten)
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
            try tmp.withUnsafeBytes { try writeAll(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
            bytesWritten += Int64(got)
            inOffset += off_t(got)
            left -= Int64(got)
        }
    }

    /// The open descriptor of the temporary file (for copies out of it), after flushing.
    func flushedDescriptor() throws -> Int32 {
        try flushBuffer()
        return fd
    }

    private func flushBuffer() throws {
        if held.isEmpty {
            if buffer.isEmpty { return }
            try buffer.withUnsafeBytes { try writeAll($0) }
            buffer.removeAll(keepingCapacity: true)
            return
        }
        // The held arrays' and the buffer's memory, each pinned by its own withUnsafeBytes
        // (nested: at most a few hundred, as they hold 4 KiB or more each up to 1 MiB).
        func pinned(_ i: Int, _ pieces: inout [UnsafeRawBufferPointer]) throws {
            if i == held.count {
                try buffer.withUnsafeBytes { b in
                    pieces.append(b)
                    try writeVector(pieces)
                }
                return
            }
            try held[i].withUnsafeBytes { b in
                pieces.append(b)
                try pinned(i + 1, &pieces)
            }
        }
        var pieces: [UnsafeRawBufferPointer] = []
        pieces.reserveCapacity(held.count + 1)
        try pinned(0, &pieces)
        held.removeAll(keepingCapacity: true)
        heldBytes = 0
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError(.io, "write failed", errno: errno, path: temporaryPath, offset: bytesWritten)
            }
            done += n
        }
    }

    /// Flushes the buffer, gives the temporary file the permission bits, owner and group of the
    /// file it replaces (`st`; the owner as far as this process may set it) and waits until its
    /// bytes are on the disk (`fsync`), so that the rename of ``commit()`` can only ever expose
    /// a whole file.
    /// - Throws: `.io` naming the OS error.
    func syncForReplacing(_ st: stat) throws {
        try flushBuffer()
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
            try flushBuffer()
        } catch {
            discard()
            throw error
        }
        done = true
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

    /// Closes and removes the temporary file. Harmless after ``commit()``.
    public func discard() {
        if fd >= 0 { close(fd); fd = -1 }
        if !done && !isStream { unlink(temporaryPath) }
        done = true
    }
}
