#if canImport(Glibc)
import Glibc
#endif

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
    /// Bytes written so far (including what is still buffered).
    public private(set) var bytesWritten: Int64 = 0
    private var done = false

    /// True when the target is not a regular file (a device such as /dev/null, a pipe,
    /// "-" for standard output): it is written directly, never replaced.
    public let isStream: Bool

    /// Creates the temporary file `.<name>.partial-<pid>` beside `path`. A target that
    /// exists and is not a regular file (/dev/null, a FIFO), or "-" (standard output),
    /// is written directly instead: a device must never be replaced by a file.
    /// - Throws: `.io` naming the directory and the OS error.
    public init(path: String) throws {
        self.path = path
        var st = stat()
        if path == "-" || (stat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFREG) {
            isStream = true
            temporaryPath = path
            fd = path == "-" ? dup(STDOUT_FILENO) : open(path, O_WRONLY | O_CLOEXEC)
            if fd < 0 {
                throw MediaError(.io, "cannot open for writing: \(String(cString: strerror(errno)))", path: path)
            }
            buffer.reserveCapacity(bufferLimit)
            return
        }
        isStream = false
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        temporaryPath = (dir.isEmpty ? "" : dir + "/") + ".\(name).partial-\(getpid())"
        fd = open(temporaryPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd < 0 {
            throw MediaError(.io, "cannot create a file in \(dir): \(String(cString: strerror(errno)))", path: path)
        }
        buffer.reserveCapacity(bufferLimit)
    }

    deinit { discard() }

    /// Appends bytes.
    public func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
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
        var iov = pieces.filter { $0.count > 0 }.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
        var first = 0
        while first < iov.count {
            let n = iov[first...].withUnsafeBufferPointer { writev(fd, $0.baseAddress, Int32(min($0.count, 1024))) }
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError(.io, "write failed: \(String(cString: strerror(errno)))", path: temporaryPath, offset: bytesWritten)
            }
            bytesWritten += Int64(n)
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
        if n != bytes.count { throw MediaError(.io, "cannot update the header: \(String(cString: strerror(errno)))", path: temporaryPath, offset: offset) }
    }

    private func flushBuffer() throws {
        if buffer.isEmpty { return }
        try buffer.withUnsafeBytes { try writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < bytes.count {
            let n = Glibc.write(fd, bytes.baseAddress! + done, bytes.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError(.io, "write failed: \(String(cString: strerror(errno)))", path: temporaryPath, offset: bytesWritten)
            }
            done += n
        }
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
            throw MediaError(.io, "close failed: \(String(cString: strerror(errno)))", path: temporaryPath)
        }
        if isStream { return }
        if rename(temporaryPath, path) != 0 {
            let err = errno
            unlink(temporaryPath)
            throw MediaError(.io, "cannot rename \(temporaryPath) into place: \(String(cString: strerror(err)))", path: path)
        }
    }

    /// Closes and removes the temporary file. Harmless after ``commit()``.
    public func discard() {
        if fd >= 0 { close(fd); fd = -1 }
        if !done && !isStream { unlink(temporaryPath) }
        done = true
    }
}
