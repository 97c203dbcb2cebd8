/// Reads Ogg files (RFC 3533): Opus (RFC 7845), Vorbis, Theora, FLAC and Speex streams.
///
/// Pages are read one at a time (never the whole file) and their CRC is checked; packets are
/// reassembled across pages. Timestamps, durations and positions follow FFmpeg's Ogg demuxer
/// exactly, so `read()` returns what `ffprobe -show_packets` shows: Opus packets start at
/// `-pre-skip`, Vorbis packets of the first page may start before 0, and the last packets
/// are shortened to end at the last granule position.
///
/// Gapless playback (what `ffmpeg` outputs when it decodes the file):
/// - Opus: ``Track/encoderDelay`` is the pre-skip (drop that many samples from the start of
///   the decoded output) and ``Track/encoderPadding`` the samples to drop from the end; the
///   output then holds `last granule - pre-skip` samples. The same cuts are on the packets
///   (``Packet/trimStart`` on the first, ``Packet/trimEnd`` on the last), per chained link.
/// - Vorbis: ``Track/encoderDelay`` is 0 (the decoder itself outputs nothing for the first
///   packet) and ``Track/encoderPadding`` the samples to drop from the end.
///
/// Chained files (a new stream after the end of the previous one) are read as one track when
/// the codec stays the same, as FFmpeg does (Vorbis: the new link's three header packets are
/// returned as packets of duration 0); a change of codec, or a chain in a multi-stream file,
/// ends reading with an `.unsupported` error. Damaged pages are skipped: reading resumes at
/// the next page with a correct CRC, and the damage is listed in ``warnings``.
public final class OggDemuxer: SourceDemuxer, @unchecked Sendable {
    /// One track per logical stream, in the order of their first pages (= ffprobe's streams).
    public let tracks: [Track]
    /// The longest track duration in seconds, from the last granule positions.
    public let duration: Double?
    /// The path the demuxer was opened on.
    public let path: String
    /// OGM chapters (CHAPTERnnn comments) of every stream, in stream order.
    public let chapters: [Chapter]
    /// METADATA_BLOCK_PICTURE pictures of every stream, in stream order.
    public let attachments: [Attachment]

    private let source: ByteSource
    private let configs: [OggStreamConfig]
    private var main: OggPacketReader
    /// Packets `read()` still drops per track after a seek (global file-order index).
    private var skipUntil: [Int]
    private var mainIndex = 0
    private var perTrack: [OggPacketReader?]
    /// After a seek in a file whose parameters change (chained links): the parameters in
    /// effect where each track's `read()` / `read(track:)` resumes, for its next packet.
    private var resumeParameters: [CodecParameters?] = []
    private var resumeTrackParameters: [CodecParameters?] = []
    /// A packet with ``Packet/newParameters`` was met (read or skipped by a seek).
    private var parametersChange = false
    private var selected: Set<Int>?

    /// Reads the headers of every logical stream from `source`. A non-seekable source works:
    /// pages are read front to back (the durations, read from the last pages, are then unknown).
    /// - Throws: `.invalidData` when no valid page or no beginning-of-stream page is found; the
    ///   source's `.io` errors.
    public init(source: ByteSource) throws {
        self.path = source.name
        self.source = source
        var configs = try Self.readHeaders(source)
        Self.readDurations(source, &configs)
        self.configs = configs
        self.tracks = configs.map(\.track)
        let seconds = tracks.map(\.durationSeconds).max()
        self.duration = seconds.flatMap { $0 > 0 ? $0 : nil }
        var chapters = configs.flatMap(\.comments.chapters)
        Chapter.fillEnds(&chapters, duration: duration)
        self.chapters = chapters
        self.attachments = configs.flatMap(\.comments.pictures)
        self.main = OggPacketReader(source: source, configs: configs)
        self.skipUntil = Array(repeating: 0, count: configs.count)
        self.perTrack = Array(repeating: nil, count: configs.count)
    }

    /// Damage skipped so far by `read()`: pages with a bad CRC, bytes that are not pages,
    /// packets left incomplete by a missing page. Oldest first, at most 64 kept.
    public var warnings: [MediaError] { main.warnings }
    /// How many damaged regions `read()` skipped so far (also those not kept in ``warnings``).
    public var damageCount: Int { main.damageCount }

    /// The next packet in file order, or nil at the end.
    /// - Throws: `.truncated` when the file ends inside a page or packet (after the packets
    ///   before it, as FFmpeg, which drops the incomplete page; later calls return nil),
    ///   `.unsupported` at a chained stream with another codec.
    public func read() throws -> Packet? {
        while let p = try main.next() {
            let index = mainIndex
            mainIndex += 1
            if p.newParameters != nil { parametersChange = true }
            if index < skipUntil[p.trackIndex] { continue }
            if let selected, !selected.contains(p.trackIndex) { continue }
            return Self.resumed(p, &resumeParameters)
        }
        return nil
    }

    /// `packet`, carrying the parameters a seek left for its track if it states none itself.
    private static func resumed(_ packet: Packet, _ pending: inout [CodecParameters?]) -> Packet {
        guard packet.trackIndex < pending.count, let p = pending[packet.trackIndex] else { return packet }
        pending[packet.trackIndex] = nil
        var packet = packet
        if packet.newParameters == nil { packet.newParameters = p }
        return packet
    }

    /// The next packet of `track`, or nil at its end. Independent of `read()`.
    public func read(track: Int) throws -> Packet? {
        guard track >= 0 && track < tracks.count else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (the file has \(tracks.count))", path: path)
        }
        if perTrack[track] == nil { perTrack[track] = OggPacketReader(source: source, configs: configs) }
        while let p = try perTrack[track]!.next() {
            if p.newParameters != nil { parametersChange = true }
            if p.trackIndex == track { return Self.resumed(p, &resumeTrackParameters) }
        }
        return nil
    }

    /// Limits `read()` to these tracks (nil: all). Ogg interleaves streams page by page,
    /// so the other tracks' pages are still read, but their packets are not returned.
    public func select(tracks: Set<Int>?) { selected = tracks }

    /// Moves `read()` and `read(track:)` of every track to the last packet that starts at or
    /// before `seconds` (every audio packet is a sync point; Theora: the last key frame).
    /// Ogg has no index: this scans the file from the start.
    public func seek(to seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.invalidArgument, "cannot seek to \(seconds) s", path: path)
        }
        let scanner = OggPacketReader(source: source, configs: configs)
        var chosen = Array(repeating: 0, count: tracks.count)
        var index = 0
        var passed = Set<Int>()
        while passed.count < tracks.count, let p = try Self.untilCut(scanner) {
            defer { index += 1 }
            guard p.pts != Packet.noTimestamp else { continue }
            if Double(p.pts) * p.timeBase.doubleValue <= seconds {
                if p.isKeyframe { chosen[p.trackIndex] = index }
            } else {
                passed.insert(p.trackIndex)
            }
        }
        main = OggPacketReader(source: source, configs: configs)
        mainIndex = 0
        skipUntil = chosen
        // The parameters in effect at each chosen packet: the track's, or a chained link's.
        var effective = tracks.map { Optional($0.parameters) }
        for t in 0..<tracks.count {
            let r = OggPacketReader(source: source, configs: configs)
            var i = 0
            // position the track's reader just before its chosen packet
            while i < chosen[t] {
                guard let p = try Self.untilCut(r) else { break }
                if p.trackIndex == t, let np = p.newParameters {
                    effective[t] = np
                    parametersChange = true
                }
                i += 1
            }
            perTrack[t] = r
        }
        resumeParameters = parametersChange ? effective : []
        resumeTrackParameters = resumeParameters
    }

    /// The reader's next packet; nil at the end or at a cut (a seek scans to the cut; `read()`
    /// reports it when it gets there).
    private static func untilCut(_ reader: OggPacketReader) throws -> Packet? {
        do {
            return try reader.next()
        } catch let e as MediaError where e.kind == .truncated {
            return nil
        }
    }

    // MARK: - Opening

    private struct Collecting {
        var serial: UInt32
        var codec: OggCodec
        var packets: [[UInt8]] = []
        var pending: [UInt8] = []
        var firstPage: Int64
        var needed: Int {
            switch codec {
            case .opus, .flac: return 1
            case .vorbis, .theora: return 3
            case .speex: return 2
            case .unknown: return 0
            }
        }
        var done: Bool { packets.count >= needed }
        /// Header packets kept: the comment packet too (Opus and FLAC need only their first).
        var kept: Int { codec == .opus || codec == .flac ? 2 : needed }
    }

    /// Reads pages from the start until every stream announced by a beginning-of-stream page
    /// has given the header packets its codec needs.
    private static func readHeaders(_ source: ByteSource) throws -> [OggStreamConfig] {
        var reader = OggPageReader(source: source)
        var streams: [Collecting] = []
        var index: [UInt32: Int] = [:]
        var sawData = false
        var pagesRead = 0
        var firstError: MediaError?
        while pagesRead < OggLimits.maxHeaderPages {
            let page: OggPage
            do {
                guard let p = try reader.next() else { break }
                page = p
            } catch let e as MediaError {
                firstError = e
                break
            }
            pagesRead += 1
            if page.flags.contains(.beginning) && !sawData && index[page.serial] == nil {
                guard streams.count < OggLimits.maxStreams else {
                    throw MediaError(.limit, "more than \(OggLimits.maxStreams) logical streams", path: source.path, offset: page.offset)
                }
                index[page.serial] = streams.count
                let first = page.body.prefix(page.segments.first.map(Int.init) ?? 0)
                streams.append(Collecting(serial: page.serial, codec: OggCodec.identify(first), firstPage: page.offset))
            }
            if !page.flags.contains(.beginning) { sawData = true }
            guard let i = index[page.serial] else { continue }
            var s = streams[i]
            if !page.flags.contains(.continued) { s.pending = [] }
            var start = 0, offset = 0
            for v in page.segments {
                offset += Int(v)
                if v < 255 {
                    if s.packets.count < s.kept { s.packets.append(s.pending + page.body[start..<offset]) }
                    s.pending = []
                    start = offset
                }
            }
            if start < offset && s.packets.count < s.kept {
                s.pending += page.body[start..<offset]
                if s.pending.count > OggLimits.maxPacketSize {
                    throw MediaError(.limit, "a header packet grows beyond \(OggLimits.maxPacketSize) bytes", path: source.path, offset: page.offset)
                }
            }
            streams[i] = s
            if sawData && streams.allSatisfy(\.done) { break }
        }
        if streams.isEmpty {
            if let firstError { throw firstError }
            let what = pagesRead == 0 ? "no valid Ogg page (capture pattern \"OggS\" with a correct CRC) was found" : "no beginning-of-stream page was found in the first \(pagesRead) pages"
            throw MediaError(.invalidData, what, path: source.path, offset: 0, context: "Ogg")
        }
        return streams.enumerated().map { i, s in config(s, index: i, path: source.path) }
    }

    /// The codec parameters of an Opus stream (or chained link) with this `OpusHead` packet.
    static func opusParameters(_ h: OpusHead, head: [UInt8]) -> CodecParameters {
        CodecParameters(mediaType: .audio, codec: "opus", codecTag: "Opus", extradata: head, sampleRate: 48000, channels: h.channels)
    }

    /// The codec parameters of a Vorbis stream (or chained link) with these three header packets.
    static func vorbisParameters(_ v: VorbisInfo, headers: [[UInt8]]) -> CodecParameters {
        CodecParameters(mediaType: .audio, codec: "vorbis", codecTag: "vorbis", extradata: xiphLacing(headers),
                        sampleRate: v.sampleRate, channels: v.channels, bitRate: v.nominalBitrate)
    }

    private static func config(_ s: Collecting, index i: Int, path: String) -> OggStreamConfig {
        var reason: String?
        var params = CodecParameters(mediaType: .data, codec: CodecID(s.codec.name), codecTag: s.codec.name)
        var timeBase = Rational(1, 1_000_000)
        var cfg = OggStreamConfig(serial: s.serial, codec: s.codec, track: Track(index: i, id: Int(s.serial), parameters: params, timeBase: timeBase, duration: 0))
        if !s.done {
            reason = "the stream's header packets are incomplete (\(s.packets.count) of \(s.needed) found)"
        }
        switch s.codec {
        case .opus where s.done:
            switch OpusHead.parse(s.packets[0]) {
            case .success(let h):
                params = opusParameters(h, head: s.packets[0])
                timeBase = Rational(1, 48000)
                cfg.opus = h
            case .failure(let why): reason = why.reason
            }
        case .vorbis where s.done:
            switch VorbisInfo.parseIdentification(s.packets[0]) {
            case .success(var v):
                if let modes = VorbisInfo.modes(fromSetup: s.packets[2]) { v.modeLong = modes } else {
                    reason = "the Vorbis setup header's modes could not be read; packet durations are unknown"
                }
                params = vorbisParameters(v, headers: s.packets)
                timeBase = Rational(1, Int64(v.sampleRate))
                cfg.vorbis = v
            case .failure(let why): reason = why.reason
            }
        case .theora where s.done:
            switch TheoraInfo.parse(s.packets[0]) {
            case .success(let th):
                params = CodecParameters(mediaType: .video, codec: "theora", codecTag: "theora", extradata: xiphLacing(s.packets), width: th.width, height: th.height)
                timeBase = Rational(Int64(th.frameRate.den), Int64(th.frameRate.num))
                cfg.theora = th
            case .failure(let why): reason = why.reason
            }
        case .flac where s.done:
            switch FlacInfo.parse(s.packets[0]) {
            case .success(let f):
                params = CodecParameters(mediaType: .audio, codec: "flac", codecTag: "flac", extradata: f.streamInfo,
                                         sampleRate: f.sampleRate, channels: f.channels, bitsPerCodedSample: f.bitsPerSample)
                if f.sampleRate > 0 { timeBase = Rational(1, Int64(f.sampleRate)) }
                cfg.flac = f
            case .failure(let why): reason = why.reason
            }
        case .speex where s.done:
            switch SpeexHeader.parse(s.packets[0]) {
            case .success(let h):
                params = CodecParameters(mediaType: .audio, codec: "speex", codecTag: "speex", extradata: s.packets[0],
                                         sampleRate: h.sampleRate, channels: h.channels)
                timeBase = Rational(1, Int64(h.sampleRate))
                cfg.speex = h
            case .failure(let why): reason = why.reason
            }
        case .unknown:
            reason = "the stream's first packet is not Opus, Vorbis, Theora, FLAC or Speex"
        default:
            break
        }
        cfg.track = Track(index: i, id: Int(s.serial), parameters: params, timeBase: timeBase, duration: 0, unsupportedReason: reason)
        cfg.track.trimsOnPackets = true
        if let h = cfg.opus { cfg.track.encoderDelay = h.preSkip }
        cfg.comments = OggComments.read(codec: s.codec, headers: s.packets)
        cfg.track.metadata = cfg.comments.metadata
        return cfg
    }

    /// FFmpeg's rule: a stream's duration is the last granule position found in the last
    /// 64 KiB of the file (any serial when the file has one stream: a chained link counts).
    /// The end trim (``Track/encoderPadding``) comes from reading the packets of that tail.
    private static func readDurations(_ source: ByteSource, _ configs: inout [OggStreamConfig]) {
        guard source.isSeekable else { return }
        let tailStart = max(0, source.size - 65_307)
        var reader = OggPageReader(source: source, start: tailStart)
        var last = Array(repeating: Int64(-1), count: configs.count)
        while let page = try? reader.next() {
            var t = configs.firstIndex { $0.serial == page.serial }
            if t == nil && configs.count == 1 {
                // A chained link of another codec ends the file for FFmpeg (and for read()).
                if page.flags.contains(.beginning) && OggCodec.identify(page.body.prefix(8)) != configs[0].codec { break }
                t = 0
            }
            guard let t else { continue }
            if page.granule != -1 && page.granule != 0 { last[t] = page.granule }
        }
        for t in configs.indices where last[t] > 0 {
            let g = configs[t].theora?.framePTS(last[t]) ?? last[t]
            configs[t].track.duration = g
        }
        // The end trim: the last packets' trimEnd, read from the tail (a reader started
        // anywhere recomputes absolute timestamps from the first page's granule position).
        let packets = OggPacketReader(source: source, configs: configs, start: tailStart, tail: true)
        while let p = try? packets.next() {
            if p.trimEnd > 0 { configs[p.trackIndex].track.encoderPadding = p.trimEnd }
        }
    }
}
