#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only file accessed by offset (`pread`), so that demuxers read only
/// what they need and never the whole file.
public final class FileSource: @unchecked Sendable {
    /// The path it was opened on.
    public let path: String
    /// Size of the file in bytes when it was opened.
    public let size: Int64
    private let fd: Int32

    /// Opens `path` for reading.
    /// - Throws: ``MediaError`` `.notFound` or `.io` naming the path and the OS error.
    public init(path: String) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let err = errno
            let kind: MediaError.Kind = err == ENOENT ? .notFound : .io
            throw MediaError(kind, "cannot open for reading: \(String(cString: strerror(err)))", path: path)
        }
        var st = stat()
        if fstat(fd, &st) != 0 {
            let err = errno
            close(fd)
            throw MediaError(.io, "cannot stat: \(String(cString: strerror(err)))", path: path)
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw MediaError(.invalidArgument, "is a directory, not a media file", path: path)
        }
        self.fd = fd
        self.size = Int64(st.st_size)
    }

    deinit { close(fd) }

    /// The open file descriptor (valid while this object lives), for in-kernel copies.
    var descriptor: Int32 { fd }

    /// Reads exactly `count` bytes at `offset` into `buffer`.
    /// - Throws: `.endOfFile` when the file ends first, `.io` on a read error.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws {
        var done = 0
        let count = buffer.count
        while done < count {
            let n = pread(fd, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw MediaError(.io, "read of \(count) bytes failed: \(String(cString: strerror(errno)))",
                                 path: path, offset: offset + Int64(done))
            }
            if n == 0 {
                throw MediaError(.endOfFile, "needed \(count) bytes, the file ends after \(done)",
                                 path: path, offset: offset + Int64(done))
            }
            done += n
        }
    }

    /// Reads exactly `count` bytes at `offset`.
    public func read(at offset: Int64, count: Int) throws -> [UInt8] {
        if count == 0 { return [] }
        return try [UInt8](unsafeUninitializedCapacity: count) { buf, initialized in
            try read(at: offset, into: UnsafeMutableRawBufferPointer(buf))
            initialized = count
        }
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    public func readUpTo(at offset: Int64, count: Int) throws -> [UInt8] {
        let available = max(0, min(Int64(count), size - offset))
        return try read(at: offset, count: Int(available))
    }
}
