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
    /// Bytes written so far (including what is still buffered).
    public private(set) var bytesWritten: Int64 = 0
    private var done = false

    /// Creates the temporary file beside `path`: `temporaryPath` when given (a writer
    /// whose in-progress file must be findable after a crash names it), else
    /// `.<name>.partial-<pid>`.
    /// - Throws: `.io` naming the directory and the OS error.
    public init(path: String, temporaryPath: String? = nil) throws {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        self.temporaryPath = temporaryPath ?? ((dir.isEmpty ? "" : dir + "/") + ".\(name).partial-\(getpid())")
        fd = open(self.temporaryPath, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
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

    /// Overwrites bytes at `offset` (for headers whose sizes are known at the end).
    public func patch(_ bytes: [UInt8], at offset: Int64) throws {
        try flushBuffer()
        let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
        if n != bytes.count { throw MediaError(.io, "cannot update the header: \(String(cString: strerror(errno)))", path: temporaryPath, offset: offset) }
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
                throw MediaError(.io, "write failed: \(String(cString: strerror(err)))", path: temporaryPath, offset: bytesWritten)
            }
            // Fallback: through a bounded buffer.
            let chunk = Int(min(left, 1 << 20))
            var tmp = [UInt8](repeating: 0, count: chunk)
            let got = tmp.withUnsafeMutableBytes { pread(source, $0.baseAddress, chunk, inOffset) }
            if got < 0 {
                if errno == EINTR { continue }
                throw MediaError(.io, "read failed: \(String(cString: strerror(errno)))", path: sourcePath, offset: Int64(inOffset))
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
            unlink(temporaryPath)
            throw MediaError(.io, "close failed: \(String(cString: strerror(errno)))", path: temporaryPath)
        }
        if rename(temporaryPath, path) != 0 {
            let err = errno
            unlink(temporaryPath)
            throw MediaError(.io, "cannot rename \(temporaryPath) into place: \(String(cString: strerror(err)))", path: path)
        }
    }

    /// Closes and removes the temporary file. Harmless after ``commit()``.
    public func discard() {
        if fd >= 0 { close(fd); fd = -1 }
        if !done { unlink(temporaryPath) }
        done = true
    }
}
