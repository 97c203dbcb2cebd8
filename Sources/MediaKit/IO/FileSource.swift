#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A read-only file accessed by offset (`pread`), so that demuxers read only
/// what they need and never the whole file.
public final class FileSource: ByteSource, @unchecked Sendable {
    /// The path it was opened on.
    public let name: String
    /// Size of the file in bytes when it was opened.
    public let fileSize: Int64
    /// True for a regular file (seekable, its size known); false for a FIFO, a character
    /// device or a socket, which ``ByteSources/open(path:)`` reads as a stream.
    public let isRegularFile: Bool
    private let fd: Int32

    /// Opens `path` for reading.
    /// - Throws: ``MediaError`` `.notFound` or `.io` naming the path and the OS error.
    public init(path: String) throws {
        self.name = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            let err = errno
            let kind: MediaError.Kind = err == ENOENT ? .notFound : .io
            throw MediaError(kind, "cannot open for reading", errno: err, path: path)
        }
        var st = stat()
        if fstat(fd, &st) != 0 {
            let err = errno
            close(fd)
            throw MediaError(.io, "cannot stat", errno: err, path: path)
        }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            close(fd)
            throw MediaError(.invalidArgument, "is a directory, not a media file", path: path)
        }
        self.fd = fd
        self.fileSize = Int64(st.st_size)
        self.isRegularFile = (st.st_mode & S_IFMT) == S_IFREG
    }

    deinit { close(fd) }

    public var knownSize: Int64? { fileSize }
    public var isSeekable: Bool { true }

    /// The open file descriptor (valid while this object lives), for in-kernel copies.
    var descriptor: Int32 { fd }

    public func readSome(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let n = pread(fd, buffer.baseAddress!, buffer.count, off_t(offset))
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw MediaError(.io, "read of \(buffer.count) bytes failed", errno: errno,
                             path: name, offset: offset)
        }
    }

    /// The same descriptor read once, front to back (a FIFO, a character device).
    func asStream() -> ByteSource {
        // The closure keeps this object, and so its descriptor, alive.
        CallbackSource(name: name, size: nil, read: { [self] in try CallbackSource.read(fd, into: $0, name: name) }, seek: nil)
    }
}
