/// Reads MP3 (MPEG audio Layer I, II, III), ADTS AAC, raw AC-3 / E-AC-3, raw DTS and AMR
/// (`#!AMR`, `#!AMR-WB`) files through ``AudioStreamParser``: the same parser a caller feeds by
/// hand, fed here from a ``ByteSource`` in 64 KiB pieces.
///
/// One track; packets are the stream's frames with their byte offsets (as `ffprobe
/// -show_packets` lists them: a Xing / Info / VBRI frame is not a packet), timestamps count
/// samples from 0. MP3 with a LAME tag is gapless: ``Track/encoderDelay`` is LAME's delay plus
/// the decoder's 529 samples and ``Track/encoderPadding`` the padding less those 529, which is
/// how FFmpeg trims it. Damage is skipped and listed in ``warnings``; a stream cut short ends
/// after its last whole frame.
public final class AudioStreamDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The one track.
    public let tracks: [Track]
    /// Seconds: exact from a Xing / VBRI frame count, else estimated from the size and bit rate.
    public let duration: Double?
    /// The source's name.
    public let path: String
    /// Tags read before the first packet (ID3v2); those after the audio (ID3v1) join at the end.
    public var tags: AudioTags { parser.tags }
    /// The ID3v2 tags in front as ``Metadata`` (or, without them, the ID3v1 tag at the end).
    public let metadata: Metadata
    /// ID3v2 CHAP frames, in start order.
    public let chapters: [Chapter]
    /// ID3v2 APIC / PIC pictures.
    public let attachments: [Attachment]

    private let source: ByteSource
    private var parser: AudioStreamParser
    private var queue: [AudioStreamParser.Packet] = []
    private var queueHead = 0
    private var readOffset: Int64 = 0
    private var finished = false
    private var nextPTS: Int64 = 0
    private var collected: [MediaError] = []

    /// Bytes handed to the parser per read.
    static let chunk = 1 << 16

    /// Reads `source` until the stream's format is known (tags and a VBR header included).
    /// - Throws: `.invalidData` when no confirmed frame is found in the first megabytes;
    ///   `.unsupported` for ADIF AAC.
    public init(source: ByteSource) throws {
        self.source = source
        self.path = source.name
        self.parser = AudioStreamParser(totalBytes: source.knownSize)
        while parser.dataFormat == nil || parser.dataOffset == nil {
            guard let events = try Self.feed(source, parser, &readOffset, &finished) else { break }
            for e in events {
                switch e {
                case .packets(let p): queue += p
                case .warning(let w): collected.append(w)
                default: break
                }
            }
            if parser.dataFormat == nil && readOffset > 16 << 20 && parser.tags.isEmpty { break }
        }
        guard let made = parser.makeTrack() else {
            throw MediaError(.invalidData, "no MPEG audio or ADTS frame confirmed by the next one was found", path: source.name, offset: 0, context: "audio stream")
        }
        var track = made.track
        var seconds = made.duration
        // ADTS states no length, nor does MP3 without a Xing / VBRI frame count: on a file, count
        // the frames (a second parser over the file, so exactly the packets read() will give,
        // resynchronisation and free format included) rather than guess from the bit rate.
        let counted = parser.vbrHeader?.frames != nil && made.duration != nil
        if !counted, source.isSeekable, source.knownSize != nil, track.parameters.sampleRate > 0,
           let total = try? Self.countFrames(source), total.frames > 0 {
            track.duration = Int64((total.seconds * Double(track.parameters.sampleRate)).rounded())
            track.sampleCount = total.frames
            seconds = total.seconds
        }
        // A LAME tag's encoder string ("LAME3.100", not "Lavc...") is the stream's "encoder" tag, as ffprobe shows it.
        if let encoder = parser.vbrHeader?.encoder, encoder.hasPrefix("LAME") {
            track.metadata.append(key: "encoder", nativeKey: "LAME", ffmpegKey: "encoder", value: encoder)
        }
        tracks = [track]
        duration = seconds
        let id3 = (try? ID3Metadata.read(source)) ?? ID3Metadata.Result()
        var tags = id3.metadata, pictures = id3.attachments
        if track.parameters.codec == "aac" {
            // FFmpeg's aac demuxer (aacdec.c adts_aac_read_header): the ID3v1 tag, else an APEv2
            // tag ending the file; either one replaces the ID3v2 text tags in front (avformat
            // discards those "because more suitable tags were found"), their PRIV frames staying.
            var trailing = Metadata()
            if source.isSeekable, let size = source.knownSize, size > 128, let last = try? source.readUpTo(at: size - 128, count: 128) {
                ID3Metadata.parseV1(last, into: &trailing)
            }
            if trailing.isEmpty, let ape = try? APETag.read(source) {
                trailing = ape.metadata
                pictures += ape.attachments
            }
            if !trailing.isEmpty {
                for e in id3.metadata where e.ffmpegKey.hasPrefix("id3v2_priv.") { trailing.append(e) }
                tags = trailing
            }
        }
        (metadata, chapters, attachments) = (tags, id3.chapters, pictures)
    }

    /// The packets of the whole of `source` (a new parser from its start): how many, and their
    /// duration in seconds (each at the sample rate in force where it is).
    static func countFrames(_ source: ByteSource) throws -> (frames: Int, seconds: Double) {
        let parser = AudioStreamParser(totalBytes: source.knownSize)
        var offset: Int64 = 0, finished = false, frames = 0, seconds = 0.0, rate = 0
        while let events = try feed(source, parser, &offset, &finished) {
            for e in events {
                switch e {
                case .dataFormat(let f): rate = f.sampleRate
                case .packets(let list) where rate > 0:
                    for p in list where p.frames > 0 {
                        frames += 1
                        seconds += Double(p.frames) / Double(rate)
                    }
                default: break
                }
            }
        }
        return (frames, seconds)
    }

    /// Pushes the next chunk of `source`; nil once the parser was finished.
    private static func feed(_ source: ByteSource, _ parser: AudioStreamParser, _ offset: inout Int64, _ finished: inout Bool) throws -> [AudioStreamParser.Event]? {
        if finished { return nil }
        let bytes = try source.readUpTo(at: offset, count: chunk)
        offset += Int64(bytes.count)
        if bytes.isEmpty {
            finished = true
            return parser.finish()
        }
        return try parser.push(bytes)
    }

    /// Damage skipped so far (bytes that were not frames), oldest first.
    public var warnings: [MediaError] { collected }

    public func read() throws -> Packet? {
        while queueHead == queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
            guard let events = try Self.feed(source, parser, &readOffset, &finished) else { return nil }
            for e in events {
                if case .packets(let p) = e { queue += p }
                if case .warning(let w) = e, collected.count < 64 { collected.append(w) }
            }
        }
        let p = queue[queueHead]
        queueHead += 1
        let pts = nextPTS
        nextPTS += Int64(p.frames)
        return p.packet(pts: pts, timeBase: tracks[0].timeBase)
    }

    public func read(track: Int) throws -> Packet? {
        guard track == 0 else { throw MediaError(.invalidArgument, "track \(track) does not exist (the file has 1)", path: path) }
        return try read()
    }

    /// Moves to the packet that holds `seconds`: exactly for a constant bit rate, else where the
    /// Xing / VBRI table of contents or the average bit rate says (then parsing resynchronises).
    public func seek(to seconds: Double) throws {
        guard source.isSeekable else {
            throw MediaError(.unsupported, "seeking needs a seekable source (a file or memory)", path: path)
        }
        guard let target = parser.seek(to: seconds) else {
            // Nothing parsed yet to estimate from: start over.
            try restart(at: parser.dataOffset ?? 0, pts: 0, discontinuity: false)
            return
        }
        try restart(at: target.offset, pts: target.packet * Int64(parser.dataFormat?.framesPerPacket ?? 0), discontinuity: true)
    }

    private func restart(at offset: Int64, pts: Int64, discontinuity: Bool) throws {
        queue.removeAll()
        queueHead = 0
        readOffset = offset
        finished = false
        nextPTS = pts
        if discontinuity {
            let bytes = try source.readUpTo(at: offset, count: Self.chunk)
            readOffset += Int64(bytes.count)
            for e in try parser.push(bytes, discontinuity: true) {
                if case .packets(let p) = e { queue += p }
            }
        } else {
            parser = AudioStreamParser(totalBytes: source.knownSize)
            readOffset = 0
        }
    }

    public func select(tracks: Set<Int>?) {}
}

extension AudioStreamParser {
    /// The track the stream makes, as ``AudioStreamDemuxer`` and a caller feeding the parser
    /// by hand both decode it: codec, rate, channels, the magic cookie, the duration and, for
    /// MP3 with a LAME tag, gapless trimming as FFmpeg applies it (LAME's delay plus the
    /// decoder's 529 samples, the padding less those 529). Timestamps count samples from 0.
    ///
    /// Call it once ``Event/readyToProducePackets`` came (nil before): by then the VBR header,
    /// if any, has been read. `duration` is the stream's in seconds when known.
    public func makeTrack() -> (track: Track, duration: Double?)? {
        guard let format = dataFormat, dataOffset != nil else { return nil }
        var p = CodecParameters(mediaType: .audio, codec: format.codec, codecTag: format.codec == .aac ? "adts" : format.codec.rawValue,
                                extradata: magicCookie ?? [], sampleRate: format.sampleRate, channels: format.channels)
        p.bitRate = 0
        var track = Track(index: 0, id: 0, parameters: p, timeBase: Rational(1, Int64(max(1, format.sampleRate))), duration: 0)
        var seconds = duration?.seconds
        var delay = 0, padding = 0
        if let v = vbrHeader, !v.encoder.isEmpty { (delay, padding) = (v.encoderDelay, v.encoderPadding) }
        // As FFmpeg's mp3 demuxer: a VBR header counts only in a frame right after the leading
        // tags (with junk in between, FFmpeg drops the frame but not its delay and padding).
        let vbrApplies = vbrHeaderOffset != nil && vbrHeaderOffset == tagsEnd
        if !vbrApplies && vbrHeader != nil {
            seconds = nil
            (delay, padding) = (0, 0)
        }
        if let s = seconds { track.duration = Int64((s * Double(format.sampleRate)).rounded()) }
        if vbrApplies, let frames = vbrHeader?.frames { track.sampleCount = frames }
        if format.codec == "mp3" && (delay > 0 || padding > 0) {
            // FFmpeg's mp3 demuxer: the decoder's own delay of 528 + 1 samples is cut with LAME's.
            track.encoderDelay = delay + 529
            track.encoderPadding = max(0, padding - 529)
        }
        // FFmpeg's mp3 demuxer (5.1, mp3_parse_vbr_tags): with a frame count, the samples from
        // frames x samples per frame less the padding plus 529, to frames x samples per frame,
        // are discarded at the end; only a padding over 529 reaches into a frame.
        if format.codec == "mp3" && vbrApplies, let frames = vbrHeader?.frames, frames > 0, padding > 529 {
            let end = Int64(frames) * Int64(format.framesPerPacket)
            track.ffmpegEndDiscard = max(0, end - Int64(padding) + 529)..<end
        }
        return (track, seconds)
    }
}

extension AudioStreamParser {
    /// The track of ``makeTrack()`` for decoding that starts at packet `packet` (after a seek),
    /// trimmed as FFmpeg trims it there: no start trim (the encoder delay lies before the
    /// packet), the end trim kept, so the output ends at the same sample as a decode from the
    /// start. Its duration counts the samples from that packet on. Nil before the format is known.
    public func makeTrack(fromPacket packet: Int64) -> (track: Track, duration: Double?)? {
        guard var made = makeTrack(), let f = dataFormat, f.sampleRate > 0 else { return nil }
        let skipped = max(0, packet) * Int64(f.framesPerPacket)
        made.track.encoderDelay = 0
        if made.track.duration > 0 {
            made.track.duration = max(0, made.track.duration - skipped)
        } else {
            made.track.encoderPadding = 0   // no known end to trim from
        }
        made.duration = made.duration.map { max(0, $0 - Double(skipped) / Double(f.sampleRate)) }
        return made
    }
}

extension AudioStreamParser.Packet {
    /// The packet as a demuxer hands it on: track 0, `pts` (= dts) in samples of `timeBase`,
    /// a key frame at its byte offset.
    public func packet(pts: Int64, timeBase: Rational) -> MediaKit.Packet {
        var packet = MediaKit.Packet(trackIndex: 0, pts: pts, dts: pts, duration: Int64(frames), isKeyframe: true,
                                     position: offset, data: data, timeBase: timeBase)
        packet.isTruncated = isTruncated
        return packet
    }
}

extension ContainerFormat {
    /// MP3 (and MPEG audio Layer I / II) with ID3 tags.
    public static let mpegAudio = ContainerFormat(
        name: "mp3", description: "MP3 / MPEG audio", extensions: ["mp3", "mp2", "mp1", "mpga"],
        mimeTypes: ["audio/mpeg"],
        probe: { head, _ in probeStream(head, adts: false) },
        makeDemuxer: { try AudioStreamDemuxer(source: $0) }, tagRewriter: ID3TagRewriter.rewriter)

    /// ADTS AAC.
    public static let adts = ContainerFormat(
        name: "aac", description: "ADTS AAC", extensions: ["aac", "adts"], mimeTypes: ["audio/aac", "audio/aacp"],
        probe: { head, _ in probeStream(head, adts: true) },
        makeDemuxer: { try AudioStreamDemuxer(source: $0) })

    /// Raw AC-3 (ATSC A/52 sync frames, as `ffmpeg -f ac3` writes them).
    public static let ac3 = ContainerFormat(
        name: "ac3", description: "raw AC-3", extensions: ["ac3"], mimeTypes: ["audio/ac3"],
        probe: { head, _ in probeRawFrames(head, codec: .ac3) },
        makeDemuxer: { try AudioStreamDemuxer(source: $0) })

    /// Raw E-AC-3 (A/52 annex E sync frames, dependent frames joined to theirs).
    public static let eac3 = ContainerFormat(
        name: "eac3", description: "raw E-AC-3", extensions: ["eac3", "ec3"], mimeTypes: ["audio/eac3"],
        probe: { head, _ in probeRawFrames(head, codec: .eac3) },
        makeDemuxer: { try AudioStreamDemuxer(source: $0) })

    /// Raw DTS (16-bit big-endian core frames, DTS-HD extension substreams joined to theirs).
    public static let dts = ContainerFormat(
        name: "dts", description: "raw DTS", extensions: ["dts", "dtshd"], mimeTypes: ["audio/vnd.dts"],
        probe: { head, _ in probeRawFrames(head, codec: "dts") },
        makeDemuxer: { try AudioStreamDemuxer(source: $0) })

    /// AMR-NB and AMR-WB in the storage format of RFC 4867 section 5 (`#!AMR\n`, `#!AMR-WB\n`;
    /// single channel).
    public static let amr = ContainerFormat(
        name: "amr", description: "AMR (\"#!AMR\")", extensions: ["amr", "awb"], mimeTypes: ["audio/amr", "audio/amr-wb"],
        probe: { head, _ in
            head.starts(with: RawAudioFrame.amrNBMagic) || head.starts(with: RawAudioFrame.amrWBMagic) ? 100 : 0
        },
        makeDemuxer: { try AudioStreamDemuxer(source: $0) })

    /// AC-3 / E-AC-3 or DTS frames of `codec` that follow each other in `head`, as FFmpeg's
    /// ac3 and dts probes count them: from the first byte, two or more (the second confirming
    /// the first) score 60, one whose successor lies past the probe bytes 15; after leading
    /// bytes that are no frame, three or more in a row score 30 (below MP3's 40 for the same,
    /// MP4's 60 and every signature). A chain stops at a header of another codec or rate.
    static func probeRawFrames(_ head: [UInt8], codec: CodecID) -> Int {
        let family: RawAudioFrame.Family = codec == "dts" ? .dts : .ac3
        /// Frames chained from `start`, and whether the chain ran past the probe bytes.
        func chain(from start: Int) -> (frames: Int, reachedEnd: Bool) {
            guard let first = RawAudioFrame(head, at: start, family: family), first.codec == codec else { return (0, false) }
            var frames = 0, i = start
            while true {
                guard let f = RawAudioFrame(head, at: i, family: family), first.continues(f) else { return (frames, false) }
                var size = f.size
                while let extra = RawAudioFrame.attachment(head, at: i + size, to: f) { size += extra }
                frames += 1
                i += size
                if i + RawAudioFrame.headerBytes > head.count { return (frames, true) }
            }
        }
        let atStart = chain(from: 0)
        if atStart.frames >= 2 { return 60 }
        if atStart.frames == 1 && atStart.reachedEnd { return 15 }
        let sync: UInt8 = family == .dts ? 0x7F : 0x0B
        for i in 1..<max(1, head.count - 8) where head[i] == sync {
            let c = chain(from: i)
            if c.frames >= 3 { return 30 }
        }
        return 0
    }

    /// A frame header at the start confirmed by the next one scores 80, a lone one 20; a
    /// confirmed pair after leading junk in the probe bytes (as FFmpeg's probe finds them) 40.
    /// ID3v2 tags are skipped: one in front (MP3 and ADTS files both carry one) as FFmpeg's
    /// probe skips it, and one between two frames (HLS packed audio puts timed ID3 tags in the
    /// stream). A tag in front longer than the probe bytes scores 50 for MP3 and 49 for ADTS
    /// (the demuxer, which parses both, then reads what follows).
    static func probeStream(_ head: [UInt8], adts: Bool) -> Int {
        if let tag = ID3.v2TagSize(head[...]) {
            let fallback = adts ? 49 : 50
            guard tag < head.count else { return fallback }
            return max(fallback, probeStream(Array(head[tag...]), adts: adts))
        }
        /// Where the frame after one ending at `end` starts: past an ID3v2 tag there.
        func next(_ end: Int) -> Int { end + (end < head.count ? ID3.v2TagSize(head[end...]) ?? 0 : 0) }
        func confirmed(at i: Int) -> Int? {
            if adts, let a = ADTSHeader(head, at: i) {
                let j = next(i + a.frameLength)
                guard j + 7 <= head.count else { return i == 0 ? 20 : nil }
                return ADTSHeader(head, at: j).flatMap { a.continues($0) ? 80 : nil }
            }
            if !adts, let m = MPEGAudioHeader(head, at: i) {
                guard m.frameSize > 0 else { return i == 0 ? 20 : nil }
                let j = next(i + m.frameSize)
                guard j + 4 <= head.count else { return i == 0 ? 20 : nil }
                return MPEGAudioHeader(head, at: j).flatMap { m.continues($0) ? 80 : nil }
            }
            return nil
        }
        if let score = confirmed(at: 0) { return score }
        for i in 1..<max(1, head.count - 7) where head[i] == 0xFF {
            if confirmed(at: i) == 80 { return 40 }
        }
        return 0
    }
}
