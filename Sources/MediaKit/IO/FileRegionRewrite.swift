#if canImport(Glibc)
import Glibc
#endif

/// Replaces one region of a file (a tag area at its start) while the rest of it stays as it
/// is, never leaving a half-written file under its name.
///
/// In place: when the new region has the old one's length and the bytes that differ all lie
/// within one 4096-byte page of the file, they are written with one `pwrite` and synced.
/// Linux copies a write into the page cache a page at a time and checks for a fatal signal
/// only between pages (`generic_perform_write`), so a process killed by SIGKILL during that
/// write leaves either the old page or the new one: the file reads as the old or the new
/// version. (A power cut during the write is not covered: the page may reach the disk in
/// part.) Otherwise the file is written again beside itself (``OutputFile``: the bytes before
/// the region, the new region, the bytes after it copied in the kernel), given the old
/// file's permissions, synced, renamed over it, and the directory synced.
enum FileRegionRewrite {
    /// The span a rewrite in place may change: one page of the page cache.
    static let pageSize: Int64 = 4096

    /// Replaces `oldLength` bytes at `start` of the file at `path`.
    /// - Parameters:
    ///   - fitted: the new region at exactly `oldLength` bytes (padded), or nil when it does not fit.
    ///   - grown: the new region to write through a temporary file (with room for later edits).
    ///   - trailer: new bytes for the file's last `trailer.count` bytes (an ID3v1 tag), or nil.
    ///     A trailer that changes makes the rewrite go through a temporary file (two regions
    ///     cannot change in one write).
    ///   - allowInPlace: false: always the temporary file.
    /// - Returns: `.inPlace`, `.unchanged` (the region already holds `fitted`) or `.temporaryFile`.
    /// - Throws: `.io` naming the path and the OS error; the file is then as it was.
    static func replace(path: String, start: Int64, oldLength: Int64, fitted: [UInt8]?, grown: [UInt8],
                        trailer: [UInt8]? = nil, allowInPlace: Bool) throws -> TagWriteMethod {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError(errno == ENOENT ? .notFound : .io, "cannot open for writing", errno: errno, path: path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw MediaError(.io, "cannot stat", errno: errno, path: path) }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw MediaError(.invalidArgument, "is not a regular file: its tags cannot be rewritten", path: path)
        }
        let size = Int64(st.st_size), trailerLength = Int64(trailer?.count ?? 0)
        guard start >= 0, oldLength >= 0, start + oldLength <= size - trailerLength else {
            throw MediaError(.invalidData, "the tag area (\(oldLength) bytes at \(start)) runs past the end of the file (\(size) bytes)", path: path, offset: start)
        }
        var trailerSame = true
        if let trailer, !trailer.isEmpty {
            var old = [UInt8](repeating: 0, count: trailer.count)
            try readAll(fd, into: &old, at: size - trailerLength, path: path)
            trailerSame = old == trailer
        }
        if allowInPlace, trailerSame, let fitted, Int64(fitted.count) == oldLength {
            var old = [UInt8](repeating: 0, count: fitted.count)
            try readAll(fd, into: &old, at: start, path: path)
            guard let first = old.indices.first(where: { old[$0] != fitted[$0] }) else { return .unchanged }
            let last = old.indices.last(where: { old[$0] != fitted[$0] }) ?? first
            if (start + Int64(first)) / pageSize == (start + Int64(last)) / pageSize {
                let n = fitted[first...last].withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(start + Int64(first))) }
                guard n == last - first + 1 else {
                    throw MediaError(.io, "the write in place of \(last - first + 1) bytes failed (\(n) written)", errno: errno, path: path, offset: start + Int64(first))
                }
                guard fsync(fd) == 0 else { throw MediaError(.io, "fsync failed", errno: errno, path: path) }
                return .inPlace
            }
        }
        let out = try OutputFile(path: path)
        do {
            if start > 0 { try out.appendCopy(fromDescriptor: fd, offset: 0, count: start, sourcePath: path) }
            try out.write(grown)
            let rest = size - start - oldLength - trailerLength
            if rest > 0 { try out.appendCopy(fromDescriptor: fd, offset: start + oldLength, count: rest, sourcePath: path) }
            if let trailer { try out.write(trailer) }
            try out.syncForReplacing(st)
            try out.commit()
        } catch {
            out.discard()
            throw error
        }
        syncDirectory(of: path)
        return .temporaryFile
    }

    /// Reads `buffer.count` bytes at `offset` of `fd`.
    static func readAll(_ fd: Int32, into buffer: inout [UInt8], at offset: Int64, path: String) throws {
        var done = 0
        while done < buffer.count {
            let n = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + Int64(done))) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw MediaError(.io, "cannot read the tag area", errno: errno, path: path, offset: offset + Int64(done)) }
            if n == 0 { throw MediaError(.endOfFile, "the file ends inside the tag area", path: path, offset: offset + Int64(done)) }
            done += n
        }
    }

    /// Syncs the directory holding `path`, so that a rename into it is on the disk (best
    /// effort: a directory that cannot be opened is left as it is).
    static func syncDirectory(of path: String) {
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if fd >= 0 {
            _ = fsync(fd)
            close(fd)
        }
    }
}
