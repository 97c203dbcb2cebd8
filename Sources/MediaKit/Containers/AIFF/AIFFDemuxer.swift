/// Reads AIFF and AIFF-C files (Apple's Audio Interchange File Format: an IFF `FORM` of
/// chunks, big-endian), as FFmpeg's aiff demuxer does: the `COMM` chunk (channels, sample
/// frames, sample size, the 80-bit sample rate and, in AIFF-C, the compression type) and the
/// `SSND` chunk (its offset to the first sample); the tags of the text and `ID3 ` chunks, and
/// the markers of the `MARK` chunk (``markers``) and the `INST` chunk (``instrument``), which
/// FFmpeg does not read; every other chunk (`FVER`, `APPL` ...) is stepped over by its size and
/// pad byte (`FVER` still says whether the file is AIFF-C, as for FFmpeg). Codecs: see `AIFFCodec`.
///
/// One track; packets are runs of whole blocks (sample frames for PCM) of at most 4096 bytes,
/// or one block of `ima4` (34 bytes per channel) or `GSM ` (33 bytes) (FFmpeg's packet sizes,
/// so `ffprobe -show_packets` lists the same ones); timestamps count sample frames (64 per
/// `ima4` block, 160 per GSM frame). A file whose `SSND` chunk
/// says more than the file holds is read to its end (the last packet holding the bytes there
/// are, as FFmpeg's: a PCM packet shorter than one sample frame has no timestamps, a part of an
/// `ima4` or GSM block lasts a block), with a `.truncated` error after it. A source that cannot seek is read
/// when `COMM` comes before `SSND` (as writers put it).
public final class AIFFDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The one track.
    public let tracks: [Track]
    /// Seconds, from the `COMM` chunk's sample frames.
    public let duration: Double?
    /// The source's name.
    public let path: String

    private let source: ByteSource
    private let dataStart: Int64
    private let dataEnd: Int64
    private let aiffCodec: AIFFCodec
    private var position: Int64
    private var trackPosition: Int64
    private var cut = TruncationState()
    private var trackCut = TruncationState()

    /// AIFF-C's version (the `FVER` chunk's timestamp of the May 1990 draft).
    static let aifcVersion1: UInt32 = 0xA280_5140

    /// NAME / AUTH / (c) / ANNO and `ID3 ` chunk tags (see docs/metadata.md).
    public let metadata: Metadata
    /// Pictures of an `ID3 ` chunk.
    public let attachments: [Attachment]
    /// CHAP frames of an `ID3 ` chunk.
    public let chapters: [Chapter]
    /// The `MARK` chunk's markers, in the chunk's order: before the sound or, on a source that
    /// can seek, anywhere in the file (as the tags). A chunk that ends inside a marker keeps the
    /// whole ones before it; none when the file has no `MARK` chunk.
    public let markers: [Marker]
    /// The `INST` chunk's sampler settings, found as the `MARK` chunk is (before the sound, or
    /// anywhere in a file that can seek), with its loops' frames taken from ``markers``; nil
    /// when the file has no `INST` chunk or one shorter than its 20 bytes.
    public let instrument: Instrument?

    /// Reads the `FORM` header and the chunks up to `COMM` and `SSND`.
    /// - Throws: `.invalidData` naming the chunk and offset for a malformed header (no `FORM`,
    ///   a `COMM` chunk too short or with a sample rate out of range, no `COMM` or `SSND`);
    ///   `.unsupported` for a compression type this reader does not frame, naming it, and for
    ///   `SSND` before `COMM` in a source that cannot seek.
    public init(source: ByteSource) throws {
        self.source = source
        let path = source.name
        self.path = path
        // ID3v2 tags in front (FFmpeg skips them before every format's header).
        let start = try ID3.leadingV2TagsEnd(source)
        let head = try source.readUpTo(at: start, count: 12)
        func text(_ b: ArraySlice<UInt8>) -> String {
            String(decoding: b.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        }
        guard head.count == 12, text(head[0..<4]) == "FORM", ["AIFF", "AIFC"].contains(text(head[8..<12])) else {
            throw MediaError(.invalidData, "expected \"FORM\" and \"AIFF\" or \"AIFC\"", path: path, offset: start, context: "FORM header")
        }
        // A size with the top bit set counts as 2^31 - 1, as FFmpeg reads it.
        func size32(_ b: [UInt8], _ i: Int) -> Int64 {
            let v = be32(b, i)
            return v >= 0x8000_0000 ? 0x7FFF_FFFF : Int64(v)
        }
        let tags = ChunkMetadata.readFile(source, start: start + 12, bigEndian: true)
        (metadata, attachments, chapters) = (tags.metadata, tags.attachments, tags.chapters)
        var version: UInt32 = text(head[8..<12]) == "AIFC" ? Self.aifcVersion1 : 0
        var remaining = size32(head, 4) - 4
        var offset = start + 12
        var comm: (offset: Int64, body: [UInt8], aifc: Bool)?
        var ssnd: (offset: Int64, dataStart: Int64, dataEnd: Int64)?
        var marks: [Marker]?
        var inst: [UInt8]?
        /// The markers of the MARK chunk of `size` bytes at `at` (metadata: a read that fails keeps none).
        func readMarks(at: Int64, size: Int64) -> [Marker] {
            guard let b = try? source.readUpTo(at: at + 8, count: Int(min(size, Int64(ChunkMetadata.maxTagChunk)))) else { return [] }
            return Self.markers(b)
        }
        /// The body of the INST chunk of `size` bytes at `at` (at most its 20 bytes; a read that fails keeps none).
        func readInst(at: Int64, size: Int64) -> [UInt8] {
            (try? source.readUpTo(at: at + 8, count: Int(min(size, 20)))) ?? []
        }
        scan: while remaining > 0 {
            let header = try source.readUpTo(at: offset, count: 8)
            guard header.count == 8 else { break }
            let id = text(header[0..<4])
            let size = size32(header, 4)
            remaining = size >= 0x7FFF_FFFF - 8 ? 0 : remaining - size - 8
            switch id {
            case "COMM":
                guard size >= 18, size < 0x7FFF_FFFF else {
                    throw MediaError(.invalidData, "the COMM chunk is \(size) bytes; at least 18 expected", path: path, offset: offset, context: "COMM")
                }
                let body = try source.readUpTo(at: offset + 8, count: Int(min(size, 22)))
                guard body.count >= 18 else {
                    throw MediaError(.invalidData, "the file ends inside the COMM chunk", path: path, offset: offset + 8 + Int64(body.count), context: "COMM")
                }
                // AIFF-C's compression type follows when the chunk holds it.
                comm = (offset, body, version == Self.aifcVersion1 && body.count >= 22)
                if ssnd != nil { break scan }
            case "FVER":
                let body = try source.readUpTo(at: offset + 8, count: 4)
                if body.count == 4 { version = be32(body, 0) }
            case "MARK" where marks == nil:
                marks = readMarks(at: offset, size: size)
            case "INST" where inst == nil:
                inst = readInst(at: offset, size: size)
            case "SSND":
                guard size >= 8 else {
                    throw MediaError(.invalidData, "the SSND chunk is \(size) bytes; at least 8 expected (offset and block size)", path: path, offset: offset, context: "SSND")
                }
                let body = try source.readUpTo(at: offset + 8, count: 8)
                guard body.count == 8 else {
                    throw MediaError(.invalidData, "the file ends inside the SSND chunk's header", path: path, offset: offset + 8 + Int64(body.count), context: "SSND")
                }
                // The offset to the first sample frame (block alignment padding); the block
                // size field is advisory (FFmpeg ignores it too).
                ssnd = (offset, offset + 16 + Int64(be32(body, 0)), offset + 8 + size)
                if comm != nil { break scan }
                guard source.isSeekable else {
                    throw MediaError(.unsupported, "the SSND chunk comes before COMM, which a source that cannot seek cannot read back", path: path, offset: offset, context: "SSND")
                }
            case "\0\0\0\0" where comm != nil && ssnd != nil:
                break scan
            default: break
            }
            offset += 8 + size + (size & 1)
            remaining -= size & 1
        }
        guard let comm else {
            throw MediaError(.invalidData, "no COMM chunk found", path: path, offset: offset, context: "COMM")
        }
        // MARK and INST chunks after the ones read (aifc and Logic write MARK after SSND): the
        // rest of a file that can seek, chunk by chunk, as the tags are read.
        if marks == nil || inst == nil, source.isSeekable, let end = source.knownSize {
            var at = offset, visited = 0
            while marks == nil || inst == nil, at + 8 <= end, visited < ChunkMetadata.maxChunks,
                  let header = try? source.readUpTo(at: at, count: 8), header.count == 8 {
                visited += 1
                let size = Int64(be32(header, 4))
                switch text(header[0..<4]) {
                case "MARK" where marks == nil: marks = readMarks(at: at, size: size)
                case "INST" where inst == nil: inst = readInst(at: at, size: size)
                default: break
                }
                at += 8 + size + (size & 1)
            }
        }
        markers = marks ?? []
        instrument = inst.flatMap { Self.instrument($0, markers: marks ?? []) }
        guard let ssnd else {
            throw MediaError(.invalidData, "no SSND chunk found", path: path, offset: offset, context: "SSND")
        }
        let b = comm.body
        let channels = Int(b[0]) << 8 | Int(b[1])
        let frames = Int64(be32(b, 2))
        let bits = Int(b[6]) << 8 | Int(b[7])
        guard let rate = ExtendedFloat.integer(b, at: 8), (1...UInt64(Int32.max)).contains(rate) else {
            throw MediaError(.invalidData, "the sample rate is out of range (exponent 0x" + String(Int(b[8]) << 8 | Int(b[9]), radix: 16) + ")",
                             path: path, offset: comm.offset + 16, context: "COMM")
        }
        guard channels > 0 else {
            throw MediaError(.invalidData, "the COMM chunk says 0 channels", path: path, offset: comm.offset + 8, context: "COMM")
        }
        let aiffCodec: AIFFCodec
        switch AIFFCodec.resolve(compressionType: comm.aifc ? Array(b[18..<22]) : nil, bits: bits, channels: channels) {
        case .success(let c): aiffCodec = c
        case .failure(.sampleSize(let n)):
            throw MediaError(.invalidData, "a sample size of \(n) bits (AIFF PCM holds 1 to 32)", path: path, offset: comm.offset + 14, context: "COMM")
        case .failure(.unknownType(let t)):
            throw MediaError(.unsupported, "the compression type \"\(t)\" names no codec MediaKit knows (FFmpeg's AIFF table has none either)",
                             path: path, offset: comm.offset + 26, context: "COMM")
        case .failure(.unreadType(let t, let name)):
            throw MediaError(.unsupported, "the compression type \"\(t)\" (\(name)) is not read by MediaKit's AIFF reader",
                             path: path, offset: comm.offset + 26, context: "COMM")
        }
        guard aiffCodec.packetSize > 0 else {
            throw MediaError(.unsupported, "a sample frame of \(aiffCodec.blockAlign) bytes (\(channels) channels) is larger than a packet (\(AIFFCodec.packetBytes) bytes)",
                             path: path, offset: comm.offset + 8, context: "COMM")
        }
        let tag = comm.aifc ? text(b[18..<22]) : ""
        let bitRate = Int(min(Int64(rate) * Int64(aiffCodec.blockAlign) * 8 / aiffCodec.blockDuration, Int64(Int.max)))
        let p = CodecParameters(mediaType: .audio, codec: aiffCodec.codec, codecTag: tag, sampleRate: Int(rate), channels: channels,
                                bitsPerCodedSample: aiffCodec.namedBySampleSize ? aiffCodec.bitsPerSample : bits,
                                blockAlign: aiffCodec.blockAlign, bitRate: bitRate)
        // COMM counts sample frames (blocks for a compressed type, as FFmpeg reads it).
        var track = Track(index: 0, id: 0, parameters: p, timeBase: Rational(1, Int64(rate)), duration: frames * aiffCodec.blockDuration)
        let dataBytes = max(0, ssnd.dataEnd - ssnd.dataStart)
        let perPacket = Int64(aiffCodec.packetSize)
        track.sampleCount = Int(dataBytes / perPacket + (dataBytes % perPacket == 0 ? 0 : 1))
        tracks = [track]
        duration = Double(track.duration) / Double(rate)
        self.aiffCodec = aiffCodec
        dataStart = ssnd.dataStart
        dataEnd = ssnd.dataEnd
        position = ssnd.dataStart
        trackPosition = ssnd.dataStart
    }

    /// The markers of a `MARK` chunk's body (Audio IFF 1.3: a 16-bit count, then for each marker
    /// its id (16 bits, signed), position (32 bits, sample frames) and name (a Pascal string: a
    /// count byte and the text, padded to an even length in all)): the whole markers before
    /// one that runs past the body.
    static func markers(_ b: [UInt8]) -> [Marker] {
        guard b.count >= 2 else { return [] }
        let count = Int(b[0]) << 8 | Int(b[1])
        var out: [Marker] = []
        var i = 2
        while out.count < count, i + 7 <= b.count {
            let id = Int(Int16(bitPattern: UInt16(b[i]) << 8 | UInt16(b[i + 1])))
            let length = Int(b[i + 6])
            guard i + 7 + length <= b.count else { break }
            out.append(Marker(id: id, frame: Int64(be32(b, i + 2)), name: String(decoding: b[(i + 7)..<(i + 7 + length)], as: UTF8.self)))
            i += 7 + length + (length + 1) % 2
        }
        return out
    }

    /// The settings of an `INST` chunk's body (Audio IFF 1.3: base note, detune, low and high
    /// note, low and high velocity as signed bytes, a 16-bit gain, then the sustain and release
    /// loops, each a 16-bit play mode and the ids of its begin and end markers), each loop's
    /// frames looked up in `markers` (the first marker with the id); nil for a body under 20 bytes.
    static func instrument(_ b: [UInt8], markers: [Marker]) -> Instrument? {
        guard b.count >= 20 else { return nil }
        func s8(_ i: Int) -> Int { Int(Int8(bitPattern: b[i])) }
        func s16(_ i: Int) -> Int { Int(Int16(bitPattern: UInt16(b[i]) << 8 | UInt16(b[i + 1]))) }
        func loop(_ i: Int) -> Instrument.Loop {
            let (begin, end) = (s16(i + 2), s16(i + 4))
            return Instrument.Loop(playMode: s16(i), beginMarker: begin, endMarker: end,
                                   beginFrame: markers.first { $0.id == begin }?.frame, endFrame: markers.first { $0.id == end }?.frame)
        }
        return Instrument(baseNote: s8(0), detune: s8(1), lowNote: s8(2), highNote: s8(3), lowVelocity: s8(4), highVelocity: s8(5),
                          gain: s16(6), sustainLoop: loop(8), releaseLoop: loop(14))
    }

    private func packet(at offset: inout Int64, cut: inout TruncationState) throws -> Packet? {
        if try cut.check() { return nil }
        guard offset < dataEnd else { return nil }
        let start = offset
        let wanted = Int(min(Int64(aiffCodec.packetSize), dataEnd - start))
        let bytes = try source.readUpTo(at: start, count: wanted)
        if bytes.count < wanted {
            // As FFmpeg: the bytes there are make the last packet, then the cut is reported.
            cut.cut(MediaError(.truncated, "the SSND chunk says \(dataEnd - dataStart) bytes of sound but the file ends after \(start - dataStart + Int64(bytes.count))",
                               path: path, offset: start + Int64(bytes.count), context: "SSND"))
            if bytes.isEmpty { _ = try cut.check(); return nil }
        }
        // Every packet before this one holds whole blocks.
        let align = Int64(aiffCodec.blockAlign)
        var pts = (start - dataStart) / align * aiffCodec.blockDuration
        var duration = Int64(bytes.count) / align * aiffCodec.blockDuration
        if duration == 0 {
            // Less than one block (the end of a cut file). FFmpeg then falls back on the
            // decoder's frame size: an ima4 block's 64 samples, a GSM frame's 160; PCM has
            // none, and a packet without a duration gets no timestamps either.
            if aiffCodec.blockPerPacket { duration = aiffCodec.blockDuration } else { pts = Packet.noTimestamp }
        }
        var p = Packet(trackIndex: 0, pts: pts, dts: pts, duration: duration, isKeyframe: true,
                       position: start, data: bytes, timeBase: tracks[0].timeBase)
        p.isTruncated = bytes.count < wanted
        offset = start + Int64(bytes.count)
        return p
    }

    public func read() throws -> Packet? { try packet(at: &position, cut: &cut) }

    public func read(track: Int) throws -> Packet? {
        guard track == 0 else { throw MediaError(.invalidArgument, "track \(track) does not exist (the file has 1)", path: path) }
        return try packet(at: &trackPosition, cut: &trackCut)
    }

    /// Moves to the block holding the sample frame at `seconds` (for PCM the frame itself:
    /// every block has the same size), clamped to the end of the sound.
    public func seek(to seconds: Double) throws {
        guard source.isSeekable else { throw MediaError(.unsupported, "seeking needs a seekable source (a file or memory)", path: path) }
        // In samples, clamped before converting (any Double, NaN and 1e300 included).
        let wanted = seconds * Double(tracks[0].parameters.sampleRate)
        let target = wanted > 0 ? Int64(min(wanted, 9e15)) : 0
        let blocks = max(0, dataEnd - dataStart) / Int64(aiffCodec.blockAlign)
        let index = min(target / aiffCodec.blockDuration, blocks)
        position = dataStart + index * Int64(aiffCodec.blockAlign)
        trackPosition = position
        cut.reset()
        trackCut.reset()
    }

    public func select(tracks: Set<Int>?) {}
}
