/// Reads a text file front to back a byte at a time through a 64 KiB window, with the line and
/// chunk rules of FFmpeg's subtitle readers (`ff_subtitles_read_line`,
/// `ff_subtitles_read_chunk`): the subtitle text containers (SubRip, WebVTT) are streamed with
/// it, never loaded whole.
struct TextByteReader {
    /// The longest line FFmpeg's SubRip reader takes in one piece (its 4096-byte line buffer):
    /// a longer line is cut into pieces of this many bytes, as there.
    static let maxLine = 4095

    private let source: ByteSource
    private var window: [UInt8] = []
    private var windowStart: Int64
    private var index = 0
    private var atEnd = false

    /// A reader at `offset` of `source`.
    init(source: ByteSource, offset: Int64 = 0) {
        self.source = source
        self.windowStart = offset
    }

    /// The offset of the next byte.
    var position: Int64 { windowStart + Int64(index) }

    /// The next byte without taking it, nil at the end of the source.
    mutating func peek() throws -> UInt8? {
        if index < window.count { return window[index] }
        if atEnd { return nil }
        windowStart += Int64(window.count)
        index = 0
        window = try source.readUpTo(at: windowStart, count: 1 << 16)
        if window.isEmpty { atEnd = true; return nil }
        return window[0]
    }

    /// The next byte, nil at the end of the source.
    mutating func next() throws -> UInt8? {
        guard let b = try peek() else { return nil }
        index += 1
        return b
    }

    /// Skips `prefix` when the source continues with it (a UTF-8 byte-order mark).
    mutating func skip(_ prefix: [UInt8]) throws {
        // Called at the start: the first window holds the whole prefix when the file has it.
        _ = try peek()
        guard window.count - index >= prefix.count, Array(window[index..<index + prefix.count]) == prefix else { return }
        index += prefix.count
    }

    /// What ``readLine()`` found.
    enum Line: Equatable {
        /// A line without its end (`\r`, `\n` or `\r\n`), at most ``maxLine`` bytes.
        case text([UInt8])
        /// A NUL byte before the end of the source: FFmpeg stops reading the file there.
        case nul
    }

    /// The next line (`ff_subtitles_read_line`): bytes up to `\r` or `\n`, that byte taken,
    /// then one more `\r` and one more `\n` skipped (so `\n\n` ends one line, as in FFmpeg);
    /// nil at the end of the source.
    mutating func readLine() throws -> Line? {
        guard try peek() != nil else { return nil }
        var line: [UInt8] = []
        while line.count < Self.maxLine {
            guard let c = try next() else { break }
            if c == 0 { return try peek() == nil ? .text(line) : .nul }
            if c == 0x0D || c == 0x0A { break }
            line.append(c)
        }
        if try peek() == 0x0D { index += 1 }
        if try peek() == 0x0A { index += 1 }
        return .text(line)
    }

    /// The next chunk (`ff_subtitles_read_chunk`): the bytes up to a blank line, leading line
    /// breaks skipped and trailing ones left out; the blank line's second `\n` (or a fourth
    /// buffered line-break byte, or a NUL) is taken with it. Empty at the end of the source.
    /// - Throws: `.limit` for a chunk longer than `limit` bytes.
    mutating func readChunk(limit: Int, path: String) throws -> [UInt8] {
        var chunk: [UInt8] = []
        var eol: [UInt8] = []
        var started = false, lastWasCR = false
        var lineBreaks = 0
        let start = position
        while let c = try next() {
            if c == 0 { break }
            let isEOL = c == 0x0D || c == 0x0A
            if !started && isEOL { continue }
            if isEOL {
                if c == 0x0A || lastWasCR { lineBreaks += 1 }
                if lineBreaks == 2 { break }
                eol.append(c)
                if eol.count == 4 { break }
                lastWasCR = c == 0x0D
                continue
            }
            if !eol.isEmpty {
                chunk += eol
                eol.removeAll()
                lineBreaks = 0
            }
            chunk.append(c)
            started = true
            if chunk.count > limit {
                throw MediaError(.limit, "a cue is longer than \(limit) bytes", path: path, offset: start)
            }
        }
        return chunk
    }
}
