/// What the Ogg demuxer learnt about one logical stream when it opened the file.
struct OggStreamConfig {
    var serial: UInt32
    var codec: OggCodec
    var track: Track
    var opus: OpusHead?
    var vorbis: VorbisInfo?
    var theora: TheoraInfo?
    var flac: FlacInfo?
    var speex: SpeexHeader?
    var comments = OggComments()
}

/// Turns pages into packets for every stream of a file, with FFmpeg's timestamp rules
/// (libavformat oggdec + oggparseopus / oggparsevorbis / oggparsetheora and the generic
/// timestamp interpolation), so that packets equal ffprobe's:
///
/// - A packet's timestamp comes from the stream's "last pts": set from a page's granule
///   position after that page's last complete packet (it is the next packet's start), or,
///   for Opus, Vorbis and Theora when it is unset (or 0) on a page that is not the last,
///   recomputed as the page's granule minus the durations of this and the page's
///   remaining packets. Opus subtracts the pre-skip. Otherwise the timestamp is the
///   previous packet's end; a packet with neither has none (``Packet/noTimestamp``).
/// - Durations: Opus from the TOC byte; Vorbis from the mode's block sizes (FFmpeg's
///   parser, which reads only the first byte); Theora 1 frame; FLAC from the frame header;
///   Speex the header's samples per packet, but the last packet of the last page, which
///   ends at the page's granule position (oggparsespeex).
/// - On the last page (EOS), Opus and Vorbis shorten the last packets to end at the
///   granule position and record the cut as ``Packet/trimEnd``; Opus puts its pre-skip
///   on the first packet as ``Packet/trimStart``.
/// - A packet's position is the page where it starts.
final class OggPacketReader {
    private let configs: [OggStreamConfig]
    private var pages: OggPageReader
    private var streams: [StreamState]
    private var serialToTrack: [UInt32: Int]
    private var queue: [Packet] = []
    private var queueHead = 0
    private var dataSeen = false
    private var ended = false
    private let path: String
    /// Packet-level damage found (page-level damage is in the page reader).
    private(set) var packetWarnings: [MediaError] = []
    private(set) var packetDamageCount = 0

    var warnings: [MediaError] { Array((pages.warnings + packetWarnings).prefix(OggLimits.maxWarnings)) }
    var damageCount: Int { pages.damageCount + packetDamageCount }

    struct StreamState {
        var serial: UInt32
        var headerMode = true
        var opusExpectTags = false
        var preSkip = 0
        var pending: [UInt8] = []
        var pendingPage: UInt32?
        var syncPos: Int64 = -1
        var lastSequence: UInt32?
        var lastpts: Int64? = 0
        var lastdts: Int64? = 0
        var curDts: Int64?
        var opusCurDts: Int64 = 0
        var vorbis: VorbisDurationParser?
        var finalPts: Int64?
        var finalDuration: Int64 = 0
        var startTrim = 0
        var endTrim = 0
        /// In a chained link after the first: its header packets, as they come (Vorbis).
        var chained = false
        var linkHeaders: [[UInt8]] = []
        /// The chained link's codec parameters, for its next packet (``Packet/newParameters``).
        var newParameters: CodecParameters?
        var granule: Int64 = -1
        var flags: OggPageFlags = []
        /// Speex: header packets taken so far (2: the header and the comments).
        var speexHeaders = 0
        /// Speex: the last packet's duration, set on the last page (0: none).
        var speexFinalDuration: Int64 = 0
    }

    private let tail: Bool

    /// - Parameters:
    ///   - start: where to start reading pages (0: the file's start; elsewhere the reader
    ///     resyncs on the first valid page and recomputes timestamps from granule positions).
    ///   - tail: reading from the middle of the file: in a one-stream file, pages of any other
    ///     serial are taken as a chained link of the same codec.
    init(source: ByteSource, configs: [OggStreamConfig], start: Int64 = 0, tail: Bool = false) {
        self.configs = configs
        self.path = source.path
        self.tail = tail
        self.pages = OggPageReader(source: source, start: start)
        self.streams = configs.map { c in
            var s = StreamState(serial: c.serial)
            if let v = c.vorbis, !v.modeLong.isEmpty { s.vorbis = VorbisDurationParser(info: v) }
            return s
        }
        var map: [UInt32: Int] = [:]
        for (i, c) in configs.enumerated() { map[c.serial] = i }
        self.serialToTrack = map
    }

    private func note(_ e: MediaError) {
        packetDamageCount += 1
        if packetWarnings.count < OggLimits.maxWarnings { packetWarnings.append(e) }
    }

    /// The next packet in file order, or nil at the end.
    func next() throws -> Packet? {
        while queueHead >= queue.count {
            queue.removeAll(keepingCapacity: true)
            queueHead = 0
            if ended { return nil }
            let next: OggPage?
            do {
                next = try pages.next()
            } catch {
                ended = true   // a cut (or an I/O error) ends reading: later calls return nil
                throw error
            }
            guard let page = next else {
                ended = true
                for (t, s) in streams.enumerated() where !s.pending.isEmpty {
                    throw MediaError(.truncated, "the file ends inside a packet of track \(t) (\(s.pending.count) bytes read, the page continuing it is missing)",
                                     path: path, offset: s.syncPos, context: "Ogg stream \(String(format: "%08x", s.serial))")
                }
                return nil
            }
            try process(page)
        }
        defer { queueHead += 1 }
        return queue[queueHead]
    }

    private func process(_ page: OggPage) throws {
        let context = String(format: "Ogg page of stream %08x", page.serial)
        var track = serialToTrack[page.serial]
        if track == nil && tail && configs.count == 1
            && !(page.flags.contains(.beginning) && OggCodec.identify(page.body.prefix(8)) != configs[0].codec) {
            serialToTrack[page.serial] = 0
            track = 0
            streams[0].serial = page.serial
            streams[0].lastpts = 0
            streams[0].lastdts = 0
            streams[0].headerMode = configs[0].codec == .opus && page.flags.contains(.beginning)
            streams[0].chained = true
            streams[0].linkHeaders = []
        }
        if track == nil {
            guard dataSeen else {
                // A stream that was not announced at the start: nothing to attach it to.
                note(MediaError(.invalidData, "a page of an unknown logical stream; skipped", path: path, offset: page.offset, context: context))
                return
            }
            // Chained stream: a new logical stream after the data of the previous one.
            let first = page.body.prefix(8)
            guard configs.count == 1 else {
                ended = true
                throw MediaError(.unsupported, "a new logical stream starts after data in a file with \(configs.count) streams; chained multi-stream Ogg is not supported (FFmpeg stops here too)",
                                 path: path, offset: page.offset, context: context)
            }
            let codec = OggCodec.identify(first)
            guard codec == configs[0].codec else {
                ended = true
                throw MediaError(.unsupported, "the chained stream here is \(codec == .unknown ? "an unknown codec" : codec.name), the file's track is \(configs[0].codec.name); a codec change inside one file is not supported (FFmpeg stops here too)",
                                 path: path, offset: page.offset, context: context)
            }
            serialToTrack[page.serial] = 0
            track = 0
            var s = streams[0]
            s.serial = page.serial
            s.lastpts = 0
            s.lastdts = 0
            s.startTrim = 0
            s.endTrim = 0
            s.lastSequence = nil
            if codec == .opus || codec == .speex { s.headerMode = true }
            s.speexHeaders = 0
            s.chained = true
            s.linkHeaders = []
            streams[0] = s
        }
        let t = track!
        if !page.flags.contains(.beginning) { dataSeen = true }
        var s = streams[t]
        defer { streams[t] = s }
        s.granule = page.granule
        s.flags = page.flags
        let contiguous = s.lastSequence.map { page.sequence == $0 &+ 1 } ?? true
        s.lastSequence = page.sequence
        var seg = 0
        var bodyOffset = 0
        if page.flags.contains(.continued) && !s.pending.isEmpty && contiguous {
            // the pending packet continues here
        } else {
            if !s.pending.isEmpty {
                note(MediaError(.invalidData, "a packet of \(s.pending.count) bytes started on an earlier page was not continued (a page is missing); it was dropped",
                                path: path, offset: s.syncPos, context: context))
                s.pending = []
            }
            if page.flags.contains(.continued) {
                // The start of this packet was never seen: skip its remainder.
                while seg < page.segments.count {
                    let v = Int(page.segments[seg])
                    seg += 1
                    bodyOffset += v
                    if v < 255 { break }
                }
            }
            s.syncPos = page.offset
        }
        var packetStart = bodyOffset
        while seg < page.segments.count {
            let v = Int(page.segments[seg])
            seg += 1
            bodyOffset += v
            if v < 255 {
                var data = s.pending
                data += page.body[packetStart..<bodyOffset]
                s.pending = []
                packetStart = bodyOffset
                try handle(data, stream: &s, track: t, page: page, segmentAfter: seg, bodyAfter: bodyOffset)
            }
        }
        if packetStart < bodyOffset {
            guard s.pending.count + (bodyOffset - packetStart) <= OggLimits.maxPacketSize else {
                throw MediaError(.limit, "a packet grows beyond \(OggLimits.maxPacketSize) bytes across pages", path: path, offset: page.offset, context: context)
            }
            s.pending += page.body[packetStart..<bodyOffset]
        }
    }

    /// First byte of the packet starting at `offset` of the page body, 0 past the end
    /// (FFmpeg reads that byte, or its zeroed padding, even for an empty packet).
    private func byte(_ page: OggPage, _ offset: Int) -> UInt8 { offset < page.body.count ? page.body[offset] : 0 }

    private func handle(_ data: [UInt8], stream s: inout StreamState, track t: Int, page: OggPage, segmentAfter: Int, bodyAfter: Int) throws {
        let cfg = configs[t]
        if cfg.codec == .unknown { return }
        if s.headerMode {
            switch cfg.codec {
            case .opus:
                if page.flags.contains(.beginning), case .success(let head) = OpusHead.parse(data) {
                    s.preSkip = head.preSkip
                    s.startTrim = head.preSkip
                    s.opusExpectTags = true
                    if s.chained { s.newParameters = OggDemuxer.opusParameters(head, head: data) }
                    return
                }
                if s.opusExpectTags && data.starts(with: Array("OpusTags".utf8)) {
                    s.opusExpectTags = false
                    return
                }
            case .vorbis:
                if data.isEmpty || data[0] & 1 == 1 { return }
            case .theora:
                if data.isEmpty || data[0] & 0x80 != 0 { return }
            case .flac:
                if data.first != 0xFF { return }
            case .speex:
                if s.speexHeaders < 2 {
                    s.speexHeaders += 1
                    return
                }
            case .unknown:
                return
            }
            s.headerMode = false
        }
        let eos = page.flags.contains(.end)
        let remaining = page.segments[segmentAfter...]
        var duration: Int64 = 0
        var keyframe = true
        var usable = true
        switch cfg.codec {
        case .opus:
            guard !data.isEmpty, page.granule <= 1 << 62 else {
                note(MediaError(.invalidData, data.isEmpty ? "an empty Opus packet; skipped" : "granule position \(page.granule) is too large; packet skipped",
                                path: path, offset: s.syncPos, context: "track \(t)"))
                s.syncPos = page.offset
                return
            }
            if (s.lastpts == nil || s.lastpts == 0) && !eos {
                if let d = OpusHead.packetDuration(data[...]) {
                    var total = d
                    var last = bodyAfter, next = bodyAfter
                    for v in remaining {
                        next += Int(v)
                        if v < 255 && next != last {
                            if let d = OpusHead.packetDuration(page.body[last..<min(next, page.body.count)]), d > 0 { total += d }
                            last = next
                        }
                    }
                    s.lastpts = page.granule &- Int64(total)
                    s.lastdts = s.lastpts
                } else {
                    usable = false
                }
            }
            if usable {
                guard let d = OpusHead.packetDuration(data[...]) else {
                    note(MediaError(.invalidData, "an Opus packet of \(data.count) bytes has an invalid TOC; skipped", path: path, offset: s.syncPos, context: "track \(t)"))
                    s.syncPos = page.offset
                    return
                }
                duration = Int64(d)
                if let l = s.lastpts {
                    s.lastpts = l - Int64(s.preSkip)
                    s.lastdts = s.lastpts
                    s.opusCurDts = l - Int64(s.preSkip)
                }
                s.opusCurDts += duration
                if eos {
                    let skip = min(s.opusCurDts - page.granule + Int64(s.preSkip), duration)
                    if skip > 0 {
                        duration = skip < duration ? duration - skip : 1
                        s.endTrim = Int(skip)
                    }
                }
            }
        case .vorbis:
            if s.chained, let type = data.first, type & 1 == 1 {
                // A chained link's header packets (returned as packets, as FFmpeg does): with
                // the setup header, its parameters and block sizes replace the previous link's.
                if type == 1 { s.linkHeaders = [] }
                s.linkHeaders.append(data)
                if type == 5 && s.linkHeaders.count == 3, case .success(var v) = VorbisInfo.parseIdentification(s.linkHeaders[0]),
                   let modes = VorbisInfo.modes(fromSetup: data) {
                    v.modeLong = modes
                    s.vorbis = VorbisDurationParser(info: v)
                    s.newParameters = OggDemuxer.vorbisParameters(v, headers: s.linkHeaders)
                    s.chained = false
                }
            }
            guard var parser = s.vorbis else { break }
            if (s.lastpts == nil || s.lastpts == 0) && !eos && page.granule >= 0 {
                parser.reset()
                if let d = parser.duration(firstByte: data.first ?? byte(page, bodyAfter)) {
                    var total = Int64(d)
                    var last = bodyAfter, next = bodyAfter
                    for v in remaining {
                        if v < 255 {
                            guard let d = parser.duration(firstByte: byte(page, last)) else { total = page.granule; break }
                            total += Int64(d)
                            last = next + Int(v)
                        }
                        next += Int(v)
                    }
                    s.lastpts = page.granule - total
                    s.lastdts = s.lastpts
                    if page.granule == 0 && total != 0 { s.lastpts = nil; s.lastdts = nil }
                    s.finalPts = nil
                    parser.reset()
                } else {
                    usable = false
                }
            }
            if usable && !data.isEmpty {
                if let d = parser.duration(firstByte: data[0]) { duration = Int64(d) } else { usable = false }
            }
            s.vorbis = parser
            if usable && eos {
                if let l = s.lastpts {
                    s.finalPts = l
                    s.finalDuration = 0
                }
                if segmentAfter == page.segments.count {
                    let base = (s.finalPts ?? 0) + s.finalDuration
                    let skip = base + duration - page.granule
                    if skip > 0 { s.endTrim = Int(skip) }
                    duration = page.granule - base
                }
                s.finalDuration += duration
            }
        case .theora:
            if (s.lastpts == nil || s.lastpts == 0) && !eos, let th = cfg.theora {
                let count = 1 + remaining.filter { $0 < 255 }.count
                s.lastpts = th.framePTS(page.granule) &- Int64(count)
                s.lastdts = s.lastpts
            }
            duration = data.isEmpty ? 0 : 1
            keyframe = !data.isEmpty && data[0] & 0x40 == 0
        case .flac:
            duration = Int64(FlacInfo.frameDuration(data[...]) ?? 0)
        case .speex:
            // oggparsespeex, in its order: the last page's first packet fixes the last
            // packet's duration; the first data page's packets count back from its granule.
            let size = Int64(cfg.speex?.packetSamples ?? 0)
            let onPage = Int64(page.segments.filter { $0 < 255 }.count)
            if eos, let l = s.lastpts, page.granule > 0 {
                s.speexFinalDuration = page.granule &- l &- size &* (onPage - 1)
            }
            if s.lastpts == 0 && page.granule > 0 {
                s.lastpts = page.granule &- size &* onPage
                s.lastdts = s.lastpts
            }
            duration = eos && segmentAfter == page.segments.count && s.speexFinalDuration != 0 ? s.speexFinalDuration : size
        case .unknown:
            return
        }
        // FFmpeg's ogg_calc_pts: take the pending timestamp; after a page's last packet, the
        // page's granule position becomes the next packet's timestamp.
        var pts = s.lastpts, dts = s.lastdts
        s.lastpts = nil
        s.lastdts = nil
        let pageEnd = !remaining.contains { $0 < 255 }
        if pageEnd && s.granule != -1 {
            let g: Int64 = cfg.codec == .theora ? (cfg.theora?.framePTS(s.granule) ?? s.granule) : s.granule
            s.lastpts = g
            s.lastdts = g
            s.granule = -1
        }
        // libavformat's interpolation for streams without reordering.
        if duration < 0 { duration = 0 }
        if pts != nil || dts != nil || duration > 0 {
            if pts == nil { pts = dts }
            if pts == nil { pts = s.curDts }
            dts = pts
            if let p = pts, duration != 0 { s.curDts = p &+ duration }
        }
        var packet = Packet(trackIndex: t, pts: pts ?? Packet.noTimestamp, dts: dts ?? Packet.noTimestamp, duration: duration,
                            isKeyframe: keyframe, position: s.syncPos, data: data, timeBase: cfg.track.timeBase)
        packet.trimStart = s.startTrim
        packet.trimEnd = s.endTrim
        if let p = s.newParameters {
            packet.newParameters = p
            s.newParameters = nil
            if cfg.codec == .opus { s.chained = false }
        }
        s.startTrim = 0
        s.endTrim = 0
        queue.append(packet)
        s.syncPos = page.offset
    }
}
