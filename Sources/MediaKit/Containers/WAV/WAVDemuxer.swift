/// Reads WAV files: RIFF and RF64 (EBU Tech 3306), every format tag of FFmpeg's RIFF table
/// (PCM, float, A-law, mu-law, IMA and Microsoft ADPCM, GSM 6.10, MP3, G.726 ...; see
/// `WAVCodec`) and `WAVE_FORMAT_EXTENSIBLE` (with its channel mask), as FFmpeg's wav demuxer does.
/// The container names the codec and hands the track on: a codec no plugin decodes fails when
/// a decoder is asked for, naming the tag, and a tag that names no codec is a track with an
/// ``Track/unsupportedReason``.
///
/// One track; packets are runs of whole blocks (a sample frame for PCM, `nBlockAlign` bytes of
/// ADPCM) of at most 4096 bytes (FFmpeg's packet size, so `ffprobe -show_packets` lists the
/// same ones), one 65-byte frame pair of GSM 6.10 or one MPEG audio frame (as FFmpeg's parsers
/// cut them); timestamps count sample frames (an IMA ADPCM block holds
/// 1 + (nBlockAlign - 4 x channels) / (bits x channels) x 8 of them, as its decoders output). A
/// file whose data chunk says more than the file holds (a recording that stopped) is read to
/// its end (the last packet holding the bytes there are, as FFmpeg's), with a `.truncated`
/// error after it.
public final class WAVDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The one track.
    public let tracks: [Track]
    /// LIST/INFO and `id3 ` chunk tags (see docs/metadata.md).
    public let metadata: Metadata
    /// Pictures of an `id3 ` chunk.
    public let attachments: [Attachment]
    /// CHAP frames of an `id3 ` chunk.
    public let chapters: [Chapter]
    /// Seconds, from the data chunk's size.
    public let duration: Double?
    /// The source's name.
    public let path: String

    private let source: ByteSource
    private let dataStart: Int64
    private let dataEnd: Int64
    private let blockAlign: Int
    /// The codec, its packets and their timing.
    private let wavCodec: WAVCodec
    /// nAvgBytesPerSec of the fmt chunk.
    private let byteRate: Int
    private var position: Cursor
    private var trackPosition: Cursor
    private var cut = TruncationState()
    private var trackCut = TruncationState()

    /// FFmpeg's packet size for PCM in WAV (wavdec.c MAX_SIZE).
    static let packetBytes = 4096

    /// Reads the RIFF / RF64 header and the `fmt ` chunk, up to the start of the `data` chunk.
    /// - Throws: `.invalidData` naming the chunk and offset for a malformed header. A format
    ///   tag is never refused here: see the type's description.
    public init(source: ByteSource) throws {
        self.source = source
        let path = source.name
        self.path = path
        // ID3v2 tags in front (taggers write them; FFmpeg skips them before every format's header).
        let start = try ID3.leadingV2TagsEnd(source)
        let head = try source.read(at: start, count: 12)
        let riff = String(decoding: head[0..<4], as: UTF8.self)
        guard riff == "RIFF" || riff == "RF64", String(decoding: head[8..<12], as: UTF8.self) == "WAVE" else {
            throw MediaError(.invalidData, "expected \"RIFF\" or \"RF64\" and \"WAVE\"", path: path, offset: start, context: "RIFF header")
        }
        func le16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        func le32(_ b: [UInt8], _ i: Int) -> Int64 { Int64(le16(b, i)) | Int64(le16(b, i + 2)) << 16 }
        func le64(_ b: [UInt8], _ i: Int) -> Int64 { le32(b, i) | le32(b, i + 4) << 32 }
        let tags = ChunkMetadata.readFile(source, start: start + 12, bigEndian: false)
        (metadata, attachments, chapters) = (tags.metadata, tags.attachments, tags.chapters)
        var offset: Int64 = start + 12
        var fmt: [UInt8]?
        var rf64DataSize: Int64?
        var factSamples: Int64?
        var data: (start: Int64, size: Int64)?
        while data == nil {
            let header = try source.readUpTo(at: offset, count: 8)
            guard header.count == 8 else { break }
            let id = String(decoding: header[0..<4].map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            var size = le32(header, 4)
            switch id {
            case "fmt ":
                guard (16...4096).contains(size) else {
                    throw MediaError(.invalidData, "the fmt chunk is \(size) bytes; 16 to 4096 expected", path: path, offset: offset, context: "fmt ")
                }
                fmt = try source.read(at: offset + 8, count: Int(size))
            case "fact":
                // The sample frame count of a compressed format (the first 4 bytes).
                let body = try source.readUpTo(at: offset + 8, count: 4)
                if size >= 4, body.count == 4 { factSamples = le32(body, 0) }
            case "ds64":
                let body = try source.read(at: offset + 8, count: Int(min(max(size, 0), 28)))
                if body.count >= 16 { rf64DataSize = le64(body, 8) }
            case "data":
                if riff == "RF64" && size == 0xFFFF_FFFF, let s = rf64DataSize { size = s }
                data = (offset + 8, size)
            default: break
            }
            if data == nil { offset += 8 + size + (size & 1) }
        }
        guard let fmt else {
            throw MediaError(.invalidData, "no fmt chunk before the data", path: path, offset: offset, context: "fmt ")
        }
        guard let data else {
            throw MediaError(.invalidData, "no data chunk found", path: path, offset: offset, context: "data")
        }
        var tag = le16(fmt, 0)
        let channels = le16(fmt, 2), rate = Int(le32(fmt, 4)), align = le16(fmt, 12), bits = le16(fmt, 14)
        var mask: UInt64 = 0
        if tag == 0xFFFE {
            guard fmt.count >= 40 else {
                throw MediaError(.invalidData, "WAVE_FORMAT_EXTENSIBLE needs a 40-byte fmt chunk, this one has \(fmt.count)", path: path, offset: 12, context: "fmt ")
            }
            mask = UInt64(le32(fmt, 20))
            tag = le16(fmt, 24)   // the sub-format GUID starts with the format tag
        }
        guard channels > 0, rate > 0, align > 0 else {
            throw MediaError(.invalidData, "\(channels) channels at \(rate) Hz with \(align)-byte blocks", path: path, offset: 12, context: "fmt ")
        }
        // The codec by FFmpeg's RIFF table; a tag MediaKit cannot name is still a track (its
        // packets are read; decoding it fails, naming the tag).
        let wavCodec = WAVCodec.resolve(tag: tag, bits: bits, channels: channels, align: align)
        var codec = wavCodec.codec
        let byteRate = Int(le32(fmt, 8))
        // WAVEFORMATEX's extension (cbSize bytes after the 18-byte header; after the 22 bytes of
        // WAVE_FORMAT_EXTENSIBLE's) is the codec's extradata, as FFmpeg keeps it (ADPCM
        // coefficients, samples per block ...).
        var extradata: [UInt8] = []
        if fmt.count >= 18 {
            let end = min(fmt.count, 18 + le16(fmt, 16))
            let from = le16(fmt, 0) == 0xFFFE ? 40 : 18
            if end > from { extradata = Array(fmt[from..<end]) }
        }
        let pcm = wavCodec.timing == .perBlock(samples: 1)
        let bitRate = pcm ? rate * align * 8 : byteRate * 8
        var sampleRate = rate, channelCount = channels
        var firstFrame: MPEGAudioHeader?
        if wavCodec.framing == .mpegAudio {
            // The layer of the first frame names the codec (FFmpeg's parser does so: tag 0x50 is
            // any MPEG-1/2 layer), its rate and channels the stream's.
            let head = try source.readUpTo(at: data.start, count: 4)
            if let h = MPEGAudioHeader(head) {
                firstFrame = h
                codec = h.codec
                sampleRate = h.sampleRate
                channelCount = h.channels
            }
        }
        var unsupported: String?
        if codec.isUnknown {
            unsupported = String(format: "WAV format tag 0x%04X", tag) + " (\(bits) bits per sample) names no codec MediaKit knows (FFmpeg's RIFF table has none either)"
        }
        var p = CodecParameters(mediaType: .audio, codec: codec, codecTag: String(format: "0x%04X", tag), sampleRate: sampleRate,
                                channels: channelCount, bitsPerCodedSample: bits, blockAlign: align, bitRate: bitRate)
        p.channelMask = mask
        p.extradata = extradata
        self.wavCodec = wavCodec
        self.byteRate = byteRate
        // A compressed format's fact chunk states the length; otherwise every block counts.
        let computed = wavCodec.samples(bytes: Int(clamping: max(0, data.size)), align: align, channels: channels, sampleRate: rate, byteRate: byteRate)
        let frames = pcm ? data.size / Int64(align) : (factSamples ?? computed ?? 0)
        var track = Track(index: 0, id: 0, parameters: p, timeBase: Rational(1, Int64(sampleRate)), duration: frames, unsupportedReason: unsupported)
        // Packets in the data chunk (rounded up without overflow: an RF64 size may be anything).
        func packets(_ bytes: Int64, _ per: Int64) -> Int { Int(bytes / per + (bytes % per == 0 ? 0 : 1)) }
        let dataBytes = max(0, data.size)
        switch wavCodec.framing {
        case .blocks:
            track.sampleCount = packets(dataBytes / Int64(align), Int64(max(1, Self.packetBytes / align)))
        case .fixed(let n): track.sampleCount = packets(dataBytes, Int64(n))
        case .mpegAudio:
            let size = firstFrame.map(\.frameSize) ?? 0
            track.sampleCount = size > 0 ? Int(dataBytes / Int64(size)) : 0
        }
        tracks = [track]
        duration = pcm || frames > 0 ? Double(frames) / Double(sampleRate) : nil
        blockAlign = align
        dataStart = data.start
        dataEnd = data.start + data.size
        position = Cursor(offset: data.start)
        trackPosition = Cursor(offset: data.start)
    }

    /// Damage found so far (none: WAV has no structure to damage past the header).
    public var warnings: [MediaError] { [] }

    /// Where a reader is: the byte offset in the data chunk and the pts of the packet there.
    private struct Cursor {
        var offset: Int64
        var pts: Int64 = 0
    }

    /// The MPEG audio frame at or after `offset` (junk before it skipped, as FFmpeg's parser
    /// does): its start, length (cut at the data's end) and samples; nil when no frame follows.
    private func mpegFrame(at offset: Int64) throws -> (start: Int64, length: Int, samples: Int64)? {
        var at = offset
        while at + 4 <= dataEnd {
            let window = try source.readUpTo(at: at, count: Int(min(4096, dataEnd - at)))
            guard window.count >= 4 else { return nil }
            var i = 0
            while i + 4 <= window.count {
                if let h = MPEGAudioHeader(window, at: i) {
                    let start = at + Int64(i)
                    var length = h.frameSize
                    if length == 0 {
                        // Free format: the frame ends where the next header of the stream starts.
                        length = try nextHeader(after: start, like: h).map { Int($0 - start) } ?? Int(dataEnd - start)
                    }
                    return (start, Int(min(Int64(length), dataEnd - start)), Int64(h.samplesPerFrame))
                }
                i += 1
            }
            at += Int64(window.count - 3)
        }
        return nil
    }

    /// The offset of the next header continuing `h` after `start`, nil when none.
    private func nextHeader(after start: Int64, like h: MPEGAudioHeader) throws -> Int64? {
        var at = start + 4
        while at + 4 <= dataEnd {
            let window = try source.readUpTo(at: at, count: Int(min(4096, dataEnd - at)))
            guard window.count >= 4 else { return nil }
            for i in 0...(window.count - 4) {
                if let n = MPEGAudioHeader(window, at: i), n.continues(h) { return at + Int64(i) }
            }
            at += Int64(window.count - 3)
        }
        return nil
    }

    /// The pts of the packet at `offset` (a block boundary) for codecs timed by bytes.
    private func ptsAt(_ offset: Int64) -> Int64 {
        wavCodec.samples(bytes: Int(clamping: offset - dataStart), align: blockAlign, channels: tracks[0].parameters.channels,
                         sampleRate: tracks[0].parameters.sampleRate, byteRate: byteRate) ?? Packet.noTimestamp
    }

    private func packet(at cursor: inout Cursor, cut: inout TruncationState) throws -> Packet? {
        if try cut.check() { return nil }
        guard cursor.offset < dataEnd else { return nil }
        let start: Int64, wanted: Int
        var samples: Int64?
        switch wavCodec.framing {
        case .blocks:
            let perPacket = max(blockAlign, Self.packetBytes / blockAlign * blockAlign)
            (start, wanted) = (cursor.offset, Int(min(Int64(perPacket), dataEnd - cursor.offset)))
        case .fixed(let n):
            (start, wanted) = (cursor.offset, Int(min(Int64(n), dataEnd - cursor.offset)))
        case .mpegAudio:
            guard let frame = try mpegFrame(at: cursor.offset) else { cursor.offset = dataEnd; return nil }
            (start, wanted, samples) = (frame.start, frame.length, frame.samples)
        }
        let bytes = try source.readUpTo(at: start, count: wanted)
        if bytes.count < wanted {
            // As FFmpeg: the bytes there are make the last packet (a part of a frame included:
            // the decoder drops it), then the cut is reported.
            cut.cut(MediaError(.truncated, "the data chunk says \(dataEnd - dataStart) bytes but the file ends after \(start - dataStart + Int64(bytes.count))",
                               path: path, offset: start + Int64(bytes.count), context: "data"))
            if bytes.isEmpty { _ = try cut.check(); return nil }
        }
        let pts: Int64, duration: Int64
        if let samples {
            (pts, duration) = (cursor.pts, samples)
        } else {
            pts = ptsAt(start)
            let p = tracks[0].parameters
            duration = wavCodec.samples(bytes: bytes.count, align: blockAlign, channels: p.channels, sampleRate: p.sampleRate, byteRate: byteRate) ?? 0
        }
        var p = Packet(trackIndex: 0, pts: pts, dts: pts, duration: duration, isKeyframe: !tracks[0].parameters.codec.isUnknown,
                       position: start, data: bytes, timeBase: tracks[0].timeBase)
        p.isTruncated = bytes.count < wanted
        cursor.offset = start + Int64(bytes.count)
        if pts != Packet.noTimestamp { cursor.pts = pts + duration }
        return p
    }

    public func read() throws -> Packet? { try packet(at: &position, cut: &cut) }

    public func read(track: Int) throws -> Packet? {
        guard track == 0 else { throw MediaError(.invalidArgument, "track \(track) does not exist (the file has 1)", path: path) }
        return try packet(at: &trackPosition, cut: &trackCut)
    }

    /// Moves to the packet holding the sample frame at `seconds`: the block (for PCM the frame
    /// itself: every block has the same size), the fixed-size frame, or the MPEG audio frame
    /// (frame headers are read from the start of the data to find it).
    public func seek(to seconds: Double) throws {
        guard source.isSeekable else { throw MediaError(.unsupported, "seeking needs a seekable source (a file or memory)", path: path) }
        // In samples, clamped before converting (any Double, NaN and 1e300 included).
        let rate = Double(tracks[0].parameters.sampleRate)
        let wanted = seconds * rate
        let target = wanted > 0 ? Int64(min(wanted, 9e15)) : 0
        var cursor = Cursor(offset: dataStart)
        switch wavCodec.framing {
        case .blocks, .fixed:
            let unit: Int
            if case .fixed(let n) = wavCodec.framing { unit = n } else { unit = blockAlign }
            let p = tracks[0].parameters
            let perUnit = wavCodec.samples(bytes: unit, align: blockAlign, channels: p.channels, sampleRate: p.sampleRate, byteRate: byteRate) ?? 0
            let units = (dataEnd - dataStart) / Int64(unit)
            let index = perUnit > 0 ? min(target / perUnit, units) : 0
            cursor.offset = dataStart + index * Int64(unit)
            cursor.pts = index * perUnit
        case .mpegAudio:
            while let frame = try mpegFrame(at: cursor.offset), cursor.pts + frame.samples <= target {
                cursor = Cursor(offset: frame.start + Int64(frame.length), pts: cursor.pts + frame.samples)
            }
        }
        position = cursor
        trackPosition = cursor
        cut.reset()
        trackCut.reset()
    }

    public func select(tracks: Set<Int>?) {}
}

extension ContainerFormat {
    /// WAV (RIFF / RF64 WAVE).
    public static let wav = ContainerFormat(
        name: "wav", description: "WAV (RIFF/RF64)", extensions: ["wav", "wave", "rf64"], mimeTypes: ["audio/wav", "audio/x-wav", "audio/vnd.wave"],
        probe: { head, _ in
            guard head.count >= 12 else { return 0 }
            let riff = String(decoding: head[0..<4], as: UTF8.self)
            return (riff == "RIFF" || riff == "RF64") && String(decoding: head[8..<12], as: UTF8.self) == "WAVE" ? 100 : 0
        },
        makeDemuxer: { try WAVDemuxer(source: $0) })
}
