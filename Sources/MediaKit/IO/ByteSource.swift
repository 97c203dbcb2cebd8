#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a demuxer's bytes come from: a file, memory, a caller's read callbacks, or a
/// stream read once from front to back (a pipe, standard input, a socket).
///
/// Demuxers read by offset (`read(at:)`), so they read only what they need. A source that is
/// not seekable serves offsets at or after what it has already passed (it reads ahead and
/// drops what lies behind), so layouts that go back (an MP4 whose `moov` follows its media
/// data) are refused with an error naming the layout.
///
/// Implement ``readSome(at:into:)``; the protocol extension gives the exact and bounded reads
/// the demuxers use. Every implementation here is safe to share between threads only as its
/// owner (one demuxer) uses it: one read at a time.
public protocol ByteSource: AnyObject, Sendable {
    /// A name for messages and for the demuxers' `path`: the file path, `"memory"`, `"-"` ...
    var name: String { get }
    /// The total size in bytes, or nil when it is not known (a pipe before its end).
    var knownSize: Int64? { get }
    /// True when any offset can be read at any time.
    var isSeekable: Bool { get }
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read, 0 at the end.
    /// - Throws: `.io` on a read failure; `.unsupported` when a non-seekable source is asked for
    ///   bytes it has already passed.
    func readSome(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int
}

extension ByteSource {
    /// The size in bytes; `Int64.max` when it is not known, so that bounds checks against it
    /// pass and the read itself finds the end.
    public var size: Int64 { knownSize ?? .max }

    /// The source's name (the demuxers' historical `path`).
    public var path: String { name }

    /// Reads exactly `buffer.count` bytes at `offset`.
    /// - Throws: `.endOfFile` when the source ends first, naming the offset and how much was there.
    public func read(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws {
        var done = 0
        while done < buffer.count {
            let n = try readSome(at: offset + Int64(done), into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]))
            if n == 0 {
                throw MediaError(.endOfFile, "needed \(buffer.count) bytes, the \(isSeekable ? "file" : "stream") ends after \(done)",
                                 path: name, offset: offset + Int64(done))
            }
            done += n
        }
    }

    /// Reads exactly `count` bytes at `offset`.
    /// - Throws: `.endOfFile` when the source ends first.
    public func read(at offset: Int64, count: Int) throws -> [UInt8] {
        if count == 0 { return [] }
        return try [UInt8](unsafeUninitializedCapacity: count) { buf, initialized in
            try read(at: offset, into: UnsafeMutableRawBufferPointer(buf))
            initialized = count
        }
    }

    /// How many bytes exist from `offset` on, counted up to `limit`: from the size when it is
    /// known, else by reading ahead (a stream keeps what it read for the reads that follow).
    public func available(from offset: Int64, upTo limit: Int64) throws -> Int64 {
        if let size = knownSize { return max(0, min(limit, size - offset)) }
        return Int64(try readUpTo(at: offset, count: Int(min(limit, 1 << 24))).count)
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the source).
    public func readUpTo(at offset: Int64, count: Int) throws -> [UInt8] {
        let wanted = max(0, min(Int64(count), size - offset))
        if wanted == 0 { return [] }
        return try [UInt8](unsafeUninitializedCapacity: Int(wanted)) { buf, initialized in
            var done = 0
            while done < buf.count {
                let n = try readSome(at: offset + Int64(done), into: UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buf)[done...]))
                if n == 0 { break }
                done += n
            }
            initialized = done
        }
    }
}

/// Bytes in memory, read in place (the caller's buffer is kept alive by the source).
public final class MemorySource: ByteSource, @unchecked Sendable {
    public let name: String
    public var knownSize: Int64? { Int64(bytes.count) }
    public var isSeekable: Bool { true }
    private let bytes: [UInt8]

    /// A source over `bytes` (shared, not copied: Swift arrays are copy-on-write).
    public init(_ bytes: [UInt8], name: String = "memory") {
        self.bytes = bytes
        self.name = name
    }

    public func readSome(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard offset >= 0, offset < Int64(bytes.count) else { return 0 }
        let n = min(buffer.count, bytes.count - Int(offset))
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset), byteCount: n) }
        return n
    }
}

/// Bytes from a caller's callbacks: `read` fills a buffer (returning the count, 0 at the end,
/// or throwing), `seek` moves to an absolute offset (nil: not seekable: the stream is read
/// once, front to back), `size` gives the total when known.
///
/// The C API's `mk_demuxer_open_io` and Python's file objects come through here.
public final class CallbackSource: ByteSource, @unchecked Sendable {
    public let name: String
    public let knownSize: Int64?
    public var isSeekable: Bool { seek != nil }
    private let readCallback: (UnsafeMutableRawBufferPointer) throws -> Int
    private let seek: ((Int64) throws -> Void)?
    /// Where the next `readCallback` reads.
    private var position: Int64 = 0
    /// Non-seekable: bytes read ahead and still kept.
    private var window = StreamWindow()
    private var ended = false
    /// Non-seekable: where each read-ahead lands before it joins the window.
    private lazy var scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1 << 16, alignment: 16)
    private var scratchAllocated = false

    deinit { if scratchAllocated { scratch.deallocate() } }

    /// How far behind the furthest read a non-seekable source keeps bytes, so a demuxer may
    /// re-read a header it just read.
    public static let keptBehind = 1 << 20

    /// A source over callbacks.
    /// - Parameters:
    ///   - name: for messages.
    ///   - size: the total size when known.
    ///   - read: fills the buffer from the current position; returns the bytes read, 0 at the end.
    ///   - seek: moves the position to an absolute offset; nil for a stream read once.
    public init(name: String, size: Int64?, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int,
                seek: ((Int64) throws -> Void)?) {
        self.name = name
        self.knownSize = size
        self.readCallback = read
        self.seek = seek
    }

    /// A non-seekable source over an open file descriptor (standard input, a pipe, a FIFO).
    /// The descriptor is not closed by the source.
    public convenience init(fileDescriptor fd: Int32, name: String) {
        self.init(name: name, size: nil, read: { try Self.read(fd, into: $0, name: name) }, seek: nil)
    }

    /// `read(2)` into `buffer`, retried on EINTR; the count read, 0 at the end.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, name: String) throws -> Int {
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR { continue }
            throw MediaError(.io, "read failed", errno: errno, path: name)
        }
    }

    public func readSome(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        if buffer.count == 0 { return 0 }
        if let seek {
            if offset != position {
                try seek(offset)
                position = offset
            }
            let n = try readCallback(buffer)
            guard n >= 0 && n <= buffer.count else {
                throw MediaError(.io, "the read callback returned \(n) for a \(buffer.count)-byte buffer", path: name, offset: offset)
            }
            position += Int64(n)
            return n
        }
        // Not seekable: serve from the window, reading ahead (and dropping what is behind).
        if offset < window.start {
            throw MediaError(.unsupported, "the source is not seekable and has already passed offset \(offset) (it keeps bytes from \(window.start) on); this file's layout needs a seekable source (a file or memory)",
                             path: name, offset: offset)
        }
        let end = offset + Int64(buffer.count)
        while window.end < end && !ended {
            // Drop what lies more than keptBehind before this read, then read ahead.
            window.drop(before: offset)
            scratchAllocated = true
            let n = try readCallback(scratch)
            guard n >= 0 && n <= scratch.count else {
                throw MediaError(.io, "the read callback returned \(n) for a \(scratch.count)-byte buffer", path: name)
            }
            window.append(contentsOf: UnsafeRawBufferPointer(rebasing: scratch[..<n]))
            if n == 0 { ended = true }
        }
        return window.copy(at: offset, into: buffer)
    }
}

/// The bytes a non-seekable source keeps of its stream (``CallbackSource``, the bytes pushed
/// to a container's push reader): from ``start`` on, appended at the end and dropped from the
/// front once reads have gone more than ``CallbackSource/keptBehind`` past them.
struct StreamWindow {
    private(set) var bytes: [UInt8] = []
    /// The stream offset of the first byte kept.
    private(set) var start: Int64 = 0
    /// The stream offset after the last byte kept.
    var end: Int64 { start + Int64(bytes.count) }

    mutating func append<S: Sequence>(contentsOf more: S) where S.Element == UInt8 { bytes.append(contentsOf: more) }

    /// Drops what lies more than ``CallbackSource/keptBehind`` before a read at `offset`, never
    /// more than is kept (a read past the end of the stream drops everything), and only once
    /// that is at least `step` bytes (dropping in steps, not per read).
    mutating func drop(before offset: Int64, step: Int64 = 1) {
        let n = min(offset - Int64(CallbackSource.keptBehind) - start, Int64(bytes.count))
        guard n >= max(step, 1) else { return }
        bytes.removeFirst(Int(n))
        start += n
    }

    /// Up to `buffer.count` bytes at `offset` (at or after ``start``) copied into `buffer`:
    /// the count copied, 0 at or past ``end``.
    func copy(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let available = end - offset
        if available <= 0 { return 0 }
        let n = Int(min(Int64(buffer.count), available))
        bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + Int(offset - start), byteCount: n) }
        return n
    }
}

/// Opening a source by name, as the command-line tools and the registry do.
public enum ByteSources {
    /// `"-"` is standard input (not seekable); a FIFO or character device is read as a stream;
    /// anything else is a ``FileSource``.
    /// - Throws: ``FileSource``'s errors (`.notFound`, `.io`, `.invalidArgument` for a directory).
    public static func open(path: String) throws -> ByteSource {
        if path == "-" { return CallbackSource(fileDescriptor: 0, name: "-") }
        let file = try FileSource(path: path)
        return file.isRegularFile ? file : file.asStream()
    }
}
