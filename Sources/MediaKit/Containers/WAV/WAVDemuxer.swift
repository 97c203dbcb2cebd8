/// Reads WAV files: RIFF and RF64 (EBU Tech 3306), `WAVE_FORMAT_PCM`, `IEEE_FLOAT`, `ALAW`,
/// `MULAW`, `IMA_ADPCM` (0x11) and `WAVE_FORMAT_EXTENSIBLE` (with its channel mask), as
/// FFmpeg's wav demuxer does.
///
/// One track; packets are runs of whole blocks (a sample frame for PCM, `nBlockAlign` bytes of
/// IMA ADPCM) of at most 4096 bytes (FFmpeg's packet size, so `ffprobe -show_packets` lists the
/// same ones), timestamps count sample frames (an IMA ADPCM block holds
/// 1 + (nBlockAlign - 4 x channels) / (4 x channels) x 8 of them, as its decoders output). A
/// file whose data chunk says more than the file holds (a recording that stopped) is read to
/// its end (the last packet holding the bytes there are, as FFmpeg's), with a `.truncated`
/// error after it.
public final class WAVDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The one track.
    public let tracks: [Track]
    /// Seconds, from the data chunk's size.
    public let duration: Double?
    /// The source's name.
    public let path: String

    private let source: ByteSource
    private let dataStart: Int64
    private let dataEnd: Int64
    private let blockAlign: Int
    /// Sample frames per block: 1 for PCM, more for IMA ADPCM.
    private let framesPerBlock: Int64
    private var position: Int64
    private var trackPosition: Int64
    private var cut = TruncationState()
    private var trackCut = TruncationState()

    /// FFmpeg's packet size for PCM in WAV (wavdec.c MAX_SIZE).
    static let packetBytes = 4096

    /// Reads the RIFF / RF64 header and the `fmt ` chunk, up to the start of the `data` chunk.
    /// - Throws: `.invalidData` naming the chunk and offset for a malformed header,
    ///   `.unsupported` for a format tag MediaKit does not decode (ADPCM, MP3 in WAV ...).
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
        let codec: String
        var framesPerBlock: Int64 = 1
        var extradata: [UInt8] = []
        var bitRate = rate * align * 8
        switch (tag, bits) {
        case (1, 8): codec = "pcm_u8"
        case (1, 16): codec = "pcm_s16le"
        case (1, 24): codec = "pcm_s24le"
        case (1, 32): codec = "pcm_s32le"
        case (3, 32): codec = "pcm_f32le"
        case (3, 64): codec = "pcm_f64le"
        case (6, _): codec = "pcm_alaw"
        case (7, _): codec = "pcm_mulaw"
        case (0x11, 4):
            // IMA ADPCM (Multimedia Registration, "IMA ADPCM Wave Type"): blocks of nBlockAlign bytes,
            // a 4-byte header per channel, then 4-byte groups of 8 samples per channel.
            codec = "adpcm_ima_wav"
            guard align > 4 * channels else {
                throw MediaError(.invalidData, "IMA ADPCM blocks of \(align) bytes cannot hold the \(4 * channels)-byte headers of \(channels) channels",
                                 path: path, offset: 12, context: "fmt ")
            }
            framesPerBlock = Int64(1 + (align - 4 * channels) / (4 * channels) * 8)
            // The extension after cbSize (wSamplesPerBlock) is the codec's extradata, as FFmpeg keeps it.
            if fmt.count >= 20 { extradata = Array(fmt[18..<min(fmt.count, 18 + le16(fmt, 16))]) }
            bitRate = Int(le32(fmt, 8)) * 8
        default:
            throw MediaError(.unsupported, "WAV format tag \(tag) with \(bits) bits per sample; MediaKit reads PCM (8, 16, 24, 32 bits), float (32, 64), A-law, mu-law and 4-bit IMA ADPCM",
                             path: path, offset: 12, context: "fmt ")
        }
        var p = CodecParameters(mediaType: .audio, codec: CodecID(codec), codecTag: String(format: "0x%04X", tag), sampleRate: rate,
                                channels: channels, bitsPerCodedSample: bits, blockAlign: align, bitRate: bitRate)
        p.channelMask = mask
        p.extradata = extradata
        // A compressed format's fact chunk states the length; otherwise every block counts.
        let frames = framesPerBlock > 1 ? (factSamples ?? data.size / Int64(align) * framesPerBlock) : data.size / Int64(align)
        var track = Track(index: 0, id: 0, parameters: p, timeBase: Rational(1, Int64(rate)), duration: frames)
        let blocks = data.size / Int64(align), blocksPerPacket = Int64(max(1, Self.packetBytes / align))
        track.sampleCount = Int((blocks + blocksPerPacket - 1) / blocksPerPacket)
        tracks = [track]
        duration = Double(frames) / Double(rate)
        blockAlign = align
        self.framesPerBlock = framesPerBlock
        dataStart = data.start
        dataEnd = data.start + data.size
        position = data.start
        trackPosition = data.start
    }

    /// Damage found so far (none: WAV has no structure to damage past the header).
    public var warnings: [MediaError] { [] }

    private func packet(at offset: inout Int64, cut: inout TruncationState) throws -> Packet? {
        if try cut.check() { return nil }
        guard offset < dataEnd else { return nil }
        let perPacket = max(blockAlign, Self.packetBytes / blockAlign * blockAlign)
        let wanted = Int(min(Int64(perPacket), dataEnd - offset))
        let bytes = try source.readUpTo(at: offset, count: wanted)
        if bytes.count < wanted {
            // As FFmpeg: the bytes there are make the last packet (a part of a frame included:
            // the decoder drops it), then the cut is reported.
            cut.cut(MediaError(.truncated, "the data chunk says \(dataEnd - dataStart) bytes but the file ends after \(offset - dataStart + Int64(bytes.count))",
                               path: path, offset: offset + Int64(bytes.count), context: "data"))
            if bytes.isEmpty { _ = try cut.check(); return nil }
        }
        let pts = (offset - dataStart) / Int64(blockAlign) * framesPerBlock
        var p = Packet(trackIndex: 0, pts: pts, dts: pts, duration: Int64(bytes.count / blockAlign) * framesPerBlock, isKeyframe: true,
                       position: offset, data: bytes, timeBase: tracks[0].timeBase)
        p.isTruncated = bytes.count < wanted
        offset += Int64(bytes.count)
        return p
    }

    public func read() throws -> Packet? { try packet(at: &position, cut: &cut) }

    public func read(track: Int) throws -> Packet? {
        guard track == 0 else { throw MediaError(.invalidArgument, "track \(track) does not exist (the file has 1)", path: path) }
        return try packet(at: &trackPosition, cut: &trackCut)
    }

    /// Moves to the block holding the sample frame at `seconds` (for PCM the frame itself: every
    /// block has the same size).
    public func seek(to seconds: Double) throws {
        guard source.isSeekable else { throw MediaError(.unsupported, "seeking needs a seekable source (a file or memory)", path: path) }
        // In blocks, clamped to the data before converting (any Double, NaN and 1e300 included).
        let blocks = (dataEnd - dataStart) / Int64(blockAlign)
        let wanted = seconds * Double(tracks[0].parameters.sampleRate) / Double(framesPerBlock)
        let block = wanted > 0 ? Int64(min(wanted, Double(blocks))) : 0
        position = dataStart + block * Int64(blockAlign)
        trackPosition = position
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
