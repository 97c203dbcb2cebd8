/// Reads native FLAC files (RFC 9639), as FFmpeg's flac demuxer and parser do.
///
/// Leading ID3v2 tags are skipped; the metadata blocks give the track (STREAMINFO, which is
/// also the decoder's extradata), ``seekPoints`` (SEEKTABLE), ``tags`` (VORBIS_COMMENT) and
/// ``pictures`` (PICTURE); every block's size is checked against the bytes the file has.
///
/// One track; a packet is one frame. A frame ends where the next valid frame header starts
/// (sync code, CRC-8, the stream's sample rate, channels, sample size and block strategy) and
/// the CRC-16 over the frame is 0, so packets are the ones `ffprobe -show_packets` lists;
/// timestamps are sample numbers from the frame headers. A frame whose CRC-16 fails is still
/// cut at the next valid header (as FFmpeg's parser does) and listed in ``warnings``; a file
/// cut inside a frame gives that frame's bytes as a last, truncated packet, then a
/// `.truncated` error.
public final class FLACDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The one track.
    public let tracks: [Track]
    /// Seconds, from STREAMINFO's sample count (nil when it is 0: not known).
    public let duration: Double?
    /// The source's name.
    public let path: String
    /// The STREAMINFO block.
    public let streamInfo: FLACStreamInfo
    /// The VORBIS_COMMENT fields as FFmpeg lists them (see ``VorbisComment/parse(_:)``).
    public let tags: [(key: String, value: String)]
    /// The VORBIS_COMMENT vendor string ("" when there is none).
    public let vendor: String
    /// The PICTURE blocks, in file order.
    public let pictures: [FLACPicture]
    /// The VORBIS_COMMENT block as ``Metadata`` (FFmpeg shows it as the format's tags).
    public let metadata: Metadata
    /// The PICTURE blocks as attachments.
    public var attachments: [Attachment] { pictures.map(\.attachment) }
    /// OGM chapter fields of the VORBIS_COMMENT block (FFmpeg reads them in FLAC too).
    public let chapters: [Chapter]
    /// The SEEKTABLE's points (placeholders left out): first sample and byte offset of a frame
    /// (from the first frame).
    public let seekPoints: [(sample: Int64, offset: Int64)]
    /// Offset of the first frame.
    public let dataOffset: Int64

    private let source: ByteSource
    private var collected: [MediaError] = []

    /// One reading position: where the next frame starts, bytes already read from there, and
    /// the cut state.
    private struct Cursor {
        var offset: Int64
        var ahead = Window()
        var cut = TruncationState()
        /// After a seek: frames that end at or before this sample are dropped.
        var skipUntil: Int64 = 0
        var ended = false
    }
    /// Bytes read ahead from a cursor's offset: consuming moves an index, and the bytes before
    /// it are dropped only when more are appended (so a frame taken costs no copy of the rest).
    private struct Window {
        private var bytes: [UInt8] = []
        private var head = 0
        var count: Int { bytes.count - head }
        var isEmpty: Bool { count == 0 }
        mutating func append(_ more: [UInt8]) {
            if head > 0 { bytes.removeFirst(head); head = 0 }
            bytes += more
        }
        mutating func removeFirst(_ n: Int) { head += n }
        func prefix(_ n: Int) -> [UInt8] { Array(bytes[head..<head + n]) }
        /// The index (from the window's start) of the first `byte` at or after `from`.
        func firstIndex(of byte: UInt8, from: Int) -> Int? {
            bytes[(head + from)...].firstIndex(of: byte).map { $0 - head }
        }
        func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
            try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[head...])) }
        }
    }
    private var main: Cursor
    private var trackCursor: Cursor

    /// Bytes read from the source at a time.
    static let chunk = 1 << 16

    /// Reads the ID3v2 tags that may come first, the "fLaC" signature and the metadata blocks.
    /// - Throws: `.invalidData` naming the block and offset for a missing signature, a first
    ///   block that is not a 34-byte STREAMINFO, a block longer than the bytes left, a malformed
    ///   SEEKTABLE or PICTURE.
    public init(source: ByteSource) throws {
        self.source = source
        let path = source.name
        self.path = path
        var offset: Int64 = 0
        // ID3v2 tags before the signature (FFmpeg skips them for every format).
        while true {
            let head = try source.readUpTo(at: offset, count: 10)
            guard let size = ID3.v2TagSize(head[...]) else { break }
            offset += Int64(size)
        }
        let magic = try source.readUpTo(at: offset, count: 4)
        guard magic == Array("fLaC".utf8) else {
            throw MediaError(.invalidData, "expected the \"fLaC\" signature", path: path, offset: offset, context: "FLAC signature")
        }
        offset += 4
        var info: FLACStreamInfo?
        var tags: [(key: String, value: String)] = []
        var vendor = ""
        var pictures: [FLACPicture] = []
        var comments = Metadata(ffmpegMerge: .join(";")), commentChapters: [Chapter] = []
        var points: [(sample: Int64, offset: Int64)] = []
        let names = [0: "STREAMINFO", 1: "PADDING", 2: "APPLICATION", 3: "SEEKTABLE", 4: "VORBIS_COMMENT", 5: "CUESHEET", 6: "PICTURE"]
        var last = false
        while !last {
            let header = try source.readUpTo(at: offset, count: 4)
            guard header.count == 4 else {
                throw MediaError(.truncated, "the file ends inside the metadata blocks (a block header needs 4 bytes, \(header.count) left)",
                                 path: path, offset: offset, context: "FLAC metadata")
            }
            last = header[0] & 0x80 != 0
            let type = Int(header[0] & 0x7F)
            let size = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let name = names[type] ?? "type \(type)"
            guard type != 127 else {
                throw MediaError(.invalidData, "metadata block type 127 is invalid", path: path, offset: offset, context: "FLAC metadata")
            }
            let left = try source.available(from: offset + 4, upTo: Int64(size))
            guard left >= Int64(size) else {
                throw MediaError(.invalidData, "the \(name) block says \(size) bytes but the file has \(left) left", path: path, offset: offset, context: name)
            }
            if info == nil && type != 0 {
                throw MediaError(.invalidData, "the first metadata block is \(name); STREAMINFO must come first", path: path, offset: offset, context: name)
            }
            switch type {
            case 0:
                guard info == nil else {
                    collected.append(MediaError(.invalidData, "a second STREAMINFO block is ignored", path: path, offset: offset, context: name))
                    break
                }
                guard size == FLACStreamInfo.size, let si = FLACStreamInfo(try source.read(at: offset + 4, count: size)) else {
                    throw MediaError(.invalidData, "STREAMINFO is \(size) bytes; 34 expected", path: path, offset: offset, context: name)
                }
                guard si.sampleRate > 0 else {
                    throw MediaError(.invalidData, "STREAMINFO gives a sample rate of 0", path: path, offset: offset, context: name)
                }
                info = si
            case 3:
                guard size % 18 == 0 else {
                    throw MediaError(.invalidData, "SEEKTABLE is \(size) bytes, not a multiple of 18", path: path, offset: offset, context: name)
                }
                let b = try source.read(at: offset + 4, count: size)
                func be64(_ i: Int) -> UInt64 { (0..<8).reduce(0) { $0 << 8 | UInt64(b[i + $1]) } }
                for i in stride(from: 0, to: size, by: 18) {
                    let sample = be64(i), at = be64(i + 8)
                    if sample == .max || sample > UInt64(Int64.max) || at > UInt64(Int64.max) { continue }   // placeholder
                    points.append((Int64(sample), Int64(at)))
                }
            case 4:
                let body = try source.read(at: offset + 4, count: size)
                let parsed = VorbisComment.parse(body)
                (vendor, tags) = (parsed.vendor, parsed.tags)
                (comments, commentChapters) = { let m = VorbisComment.metadata(body); return (m.metadata, m.chapters) }()
                if let p = parsed.problem {
                    collected.append(MediaError(.invalidData, p, path: path, offset: offset, context: name))
                }
            case 6:
                pictures.append(try FLACPicture(try source.read(at: offset + 4, count: size), offset: offset, path: path))
            default:
                // PADDING, APPLICATION, CUESHEET and reserved types are skipped; on a stream
                // the bytes were read by the size check above.
                break
            }
            offset += 4 + Int64(size)
        }
        guard let info else { throw MediaError(.invalidData, "no STREAMINFO block", path: path, offset: offset, context: "FLAC metadata") }
        streamInfo = info
        self.tags = tags
        self.vendor = vendor
        self.pictures = pictures
        self.metadata = comments
        seekPoints = points.sorted { $0.sample < $1.sample }
        dataOffset = offset
        var p = CodecParameters(mediaType: .audio, codec: "flac", codecTag: "", extradata: info.bytes, sampleRate: info.sampleRate,
                                channels: info.channels, bitsPerCodedSample: info.bitsPerSample)
        p.bitRate = 0
        var track = Track(index: 0, id: 0, parameters: p, timeBase: Rational(1, Int64(info.sampleRate)), duration: info.totalSamples)
        if info.minBlockSize == info.maxBlockSize && info.maxBlockSize > 0 {
            track.sampleCount = Int((info.totalSamples + Int64(info.maxBlockSize) - 1) / Int64(info.maxBlockSize))
        }
        tracks = [track]
        duration = info.totalSamples > 0 ? Double(info.totalSamples) / Double(info.sampleRate) : nil
        Chapter.fillEnds(&commentChapters, duration: duration)
        chapters = commentChapters
        main = Cursor(offset: offset)
        trackCursor = main
    }

    /// Damage stepped over: frames whose CRC-16 fails, bytes between frames that are not a
    /// frame, a malformed Vorbis comment block.
    public var warnings: [MediaError] { collected }

    /// The largest a frame of this stream can be: every channel stored verbatim (the side
    /// channel one bit wider), plus header and footer.
    private var frameBound: Int {
        let block = max(streamInfo.maxBlockSize, 16)
        return block * streamInfo.channels * (streamInfo.bitsPerSample + 1) / 8 + streamInfo.channels * 8 + 64
    }

    /// True when `h` belongs to this stream (same rate, channels, sample size).
    private func matches(_ h: FLACFrameHeader, strategy: Bool?) -> Bool {
        (h.sampleRate == 0 || h.sampleRate == streamInfo.sampleRate) && h.channels == streamInfo.channels
            && (h.bitsPerSample == 0 || h.bitsPerSample == streamInfo.bitsPerSample)
            && (strategy == nil || strategy == h.isVariable)
    }

    /// Makes `c.ahead` hold at least `count` bytes from `c.offset` (fewer at the end); returns
    /// false when nothing more could be read.
    private func fill(_ c: inout Cursor, to count: Int) throws -> Bool {
        var grew = false
        while c.ahead.count < count {
            let more = try source.readUpTo(at: c.offset + Int64(c.ahead.count), count: max(Self.chunk, count - c.ahead.count))
            if more.isEmpty { break }
            c.ahead.append(more)
            grew = true
        }
        return grew
    }

    /// The next frame at or after `c.offset`.
    private func frame(_ c: inout Cursor) throws -> Packet? {
        if try c.cut.check() || c.ended { return nil }
        // Find the frame's header: at the offset, or (after damage or junk) the next valid one.
        var skipped = 0
        var header: FLACFrameHeader?
        while header == nil {
            _ = try fill(&c, to: FLACFrameHeader.maxLength)
            if c.ahead.isEmpty {
                if skipped > 0 {
                    collected.append(MediaError(.invalidData, "\(skipped) bytes at the end are not a FLAC frame", path: path,
                                                offset: c.offset - Int64(skipped), context: "FLAC frame"))
                }
                c.ended = true
                return nil
            }
            if let h = c.ahead.withUnsafeBytes({ FLACFrameHeader.parse($0) }), matches(h, strategy: nil) {
                header = h
                break
            }
            // Step to the next byte that can start a sync code.
            let next = c.ahead.firstIndex(of: 0xFF, from: 1) ?? c.ahead.count
            c.ahead.removeFirst(next)
            c.offset += Int64(next)
            skipped += next
            if skipped > frameBound + Self.chunk {
                throw MediaError(.invalidData, "no FLAC frame header in the \(skipped) bytes from here", path: path, offset: c.offset - Int64(skipped), context: "FLAC frame")
            }
        }
        guard let header else { return nil }
        if skipped > 0 {
            collected.append(MediaError(.invalidData, "\(skipped) bytes that are not a FLAC frame skipped", path: path,
                                        offset: c.offset - Int64(skipped), context: "FLAC frame"))
        }
        // Find the frame's end: the next valid header where the CRC-16 so far is 0.
        let start = c.offset
        let nominal = streamInfo.minBlockSize == streamInfo.maxBlockSize ? streamInfo.maxBlockSize : header.blockSize
        let expectedNext = header.isVariable ? header.number + UInt64(header.blockSize) : header.number + 1
        var crc: UInt16 = 0
        var j = 0
        var firstCandidate: Int?
        var end: Int?
        var atEOF = false
        let table = FLACFrameHeader.crc16Table
        scan: while true {
            if c.ahead.count < j + FLACFrameHeader.maxLength + 1 && !atEOF {
                if !(try fill(&c, to: c.ahead.count + Self.chunk)) { atEOF = true }
            }
            let stop = atEOF ? c.ahead.count : c.ahead.count - FLACFrameHeader.maxLength
            // The byte loop works on locals (a captured variable would be read through a box);
            // eight bytes without a 0xFF (no header can start there) go through at once.
            let found: Int? = table.withUnsafeBufferPointer { t in
                c.ahead.withUnsafeBytes { b in
                    var r = crc, k = j, first = firstCandidate
                    defer { (crc, j, firstCandidate) = (r, k, first) }
                    let minimum = header.length + 2
                    while k < stop {
                        if k + 8 <= stop && k >= minimum {
                            let w = UInt64(littleEndian: b.loadUnaligned(fromByteOffset: k, as: UInt64.self))
                            let v = ~w
                            if (v &- 0x0101_0101_0101_0101) & ~v & 0x8080_8080_8080_8080 == 0 {
                                r = FLACFrameHeader.crc16(r, eightBytes: w)
                                k += 8
                                continue
                            }
                        }
                        let byte = b[k]
                        if k >= minimum && byte == 0xFF,
                           let h = FLACFrameHeader.parse(UnsafeRawBufferPointer(rebasing: b[k..<min(b.count, k + FLACFrameHeader.maxLength)])),
                           matches(h, strategy: header.isVariable) {
                            if r == 0 { return k }
                            if first == nil && h.number == expectedNext { first = k }
                        }
                        r = (r << 8) ^ t[Int(UInt8(truncatingIfNeeded: r >> 8) ^ byte)]
                        k += 1
                    }
                    return nil
                }
            }
            if let found { end = found; break scan }
            if atEOF { break }
            if j > frameBound {
                if firstCandidate != nil { break }
                throw MediaError(.invalidData, "no frame header follows the frame within \(j) bytes (the stream's frames are at most \(frameBound))",
                                 path: path, offset: start, context: "FLAC frame")
            }
        }
        let pts = header.firstSample(nominalBlockSize: nominal)
        var truncated = false
        if end == nil, let f = firstCandidate, crc != 0 || !atEOF {
            // The next header is there but the CRC-16 up to it is not 0: a damaged frame, cut
            // at that header all the same (FFmpeg's parser does so too).
            end = f
            collected.append(MediaError(.invalidData, "the frame's CRC-16 does not match", path: path, offset: start, context: "FLAC frame"))
        } else if end == nil && crc != 0 {
            // The last frame: whole when the CRC-16 was 0 at some point and its samples end the
            // stream (the bytes after it stay in it, as in FFmpeg's), else the file was cut.
            if let z = lastZeroCRC(c.ahead, after: header.length + 2), pts + Int64(header.blockSize) == streamInfo.totalSamples {
                collected.append(MediaError(.invalidData, "\(c.ahead.count - z) bytes after the last frame", path: path,
                                            offset: start + Int64(z), context: "FLAC frame"))
            } else {
                truncated = true
            }
        }
        let size = end ?? c.ahead.count
        let bytes = c.ahead.prefix(size)
        c.ahead.removeFirst(size)
        c.offset += Int64(size)
        if end == nil { c.ended = true }
        var p = Packet(trackIndex: 0, pts: pts, dts: pts, duration: Int64(header.blockSize), isKeyframe: true,
                       position: start, data: bytes, timeBase: tracks[0].timeBase)
        if truncated {
            p.isTruncated = true
            c.cut.cut(MediaError(.truncated, "the file ends inside a frame (its CRC-16 does not match after \(size) bytes)",
                                 path: path, offset: start + Int64(size), context: "FLAC frame"))
        }
        return p
    }

    /// The last offset in `w` after `minimum` where the CRC-16 of the bytes before it is 0 (the
    /// end of a whole frame followed by other bytes), nil when there is none.
    private func lastZeroCRC(_ w: Window, after minimum: Int) -> Int? {
        var r: UInt16 = 0, last: Int?
        let t = FLACFrameHeader.crc16Table
        w.withUnsafeBytes { b in
            for k in 0..<b.count {
                if r == 0 && k >= minimum { last = k }
                r = (r << 8) ^ t[Int(UInt8(truncatingIfNeeded: r >> 8) ^ b[k])]
            }
        }
        return r == 0 ? nil : last
    }

    private func packet(_ c: inout Cursor) throws -> Packet? {
        while let p = try frame(&c) {
            if p.pts + p.duration > c.skipUntil || p.isTruncated { return p }
        }
        return nil
    }

    /// The next frame in file order; nil at the end (after a cut: the `.truncated` error first).
    public func read() throws -> Packet? { try packet(&main) }

    /// The next frame of track 0, from a position of its own.
    public func read(track: Int) throws -> Packet? {
        guard track == 0 else { throw MediaError(.invalidArgument, "track \(track) does not exist (the file has 1)", path: path) }
        return try packet(&trackCursor)
    }

    /// Moves to the frame that holds the sample at `seconds`: from the last SEEKTABLE point at
    /// or before it (else from the first frame), reading frames forward.
    public func seek(to seconds: Double) throws {
        guard source.isSeekable else { throw MediaError(.unsupported, "seeking needs a seekable source (a file or memory)", path: path) }
        guard seconds.isFinite else { throw MediaError(.invalidArgument, "cannot seek to \(seconds) seconds", path: path) }
        // Clamped so the sample number fits in 64 bits (FLAC counts at most 2^36 samples).
        let target = Int64(min(max(0, seconds), 1e9) * Double(streamInfo.sampleRate))
        var cursor = Cursor(offset: dataOffset)
        if let point = seekPoints.last(where: { $0.sample <= target }) {
            cursor.offset = dataOffset + point.offset
        }
        cursor.skipUntil = target
        main = cursor
        trackCursor = cursor
    }

    /// Nothing to select: the file has one track.
    public func select(tracks: Set<Int>?) {}
}

extension ContainerFormat {
    /// Native FLAC.
    public static let flac = ContainerFormat(
        name: "flac", description: "FLAC", extensions: ["flac"], mimeTypes: ["audio/flac", "audio/x-flac"],
        probe: { head, _ in
            // As FFmpeg's probing: ID3v2 tags that fit in the probe bytes are looked past.
            var at = 0
            while let size = ID3.v2TagSize(head[at...]), at + size < head.count { at += size }
            return head.count >= at + 4 && head[at..<at + 4].elementsEqual("fLaC".utf8) ? 100 : 0
        },
        makeDemuxer: { try FLACDemuxer(source: $0) }, tagRewriter: FLACTagRewriter.rewriter)
}
