import Foundation

/// Writes MPEG transport streams (ISO/IEC 13818-1) laid out as FFmpeg 5.1's mpegts muxer lays
/// them out with its defaults (`ffmpeg -c copy out.ts`), so that `ffprobe` reads back the packets
/// written, frame for frame:
///
/// - one program (service 1, PMT on PID 0x1000), the streams on PIDs 0x100, 0x101 ... in the
///   order added; the PCR on the first video stream (else the first stream), in the
///   adaptation field of its key frames and of its PES starts once per largest multiple of
///   its frame duration under 100 ms; the SDT, PAT and PMT before the first PES, then every
///   0.5 s (SDT) and 0.1 s (PAT / PMT) of PCR time, and the PAT / PMT again before a video key
///   frame that follows a non-key one;
/// - timestamps on the 90 kHz clock moved 1.4 s later (FFmpeg's 2 x 0.7 s mux delay), the
///   PCR 0.7 s behind the DTS; a track read from an MP4 with an edit list starts where
///   its edit starts, as FFmpeg's MP4 reader moves it;
/// - H.264 / HEVC as Annex B with access unit delimiters and the parameter sets in front of
///   key frames (``AnnexBStream``), one access unit per PES (the PES length 0); AAC with ADTS
///   headers (``ADTSHeader/Maker`` for raw AAC); MP2 / MP3 (stream type 3, 4 below 32 kHz),
///   AC-3 (0x81, registration 'AC-3'), E-AC-3 (0x87, 'EAC3'), MPEG-1 / 2 video (2) as they
///   are, HEVC with the registration 'HEVC'; an ISO 639 language descriptor on audio; Opus (private data with the
///   'Opus' registration and its channel configuration) with the control header of ETSI TS
///   102 366-like Opus in TS before each packet, the pre-skip and end trim in it;
/// - audio frames grouped into PES of up to 2930 bytes, 0.35 s or (Opus) 120 ms, as FFmpeg
///   groups them; the packets of the tracks interleaved by DTS (as FFmpeg's muxing does: a
///   packet waits until every track has one, or 10 s of them are held), so memory holds a few
///   seconds of packets whatever the input's length;
/// - the key frame flag (random access indicator) on the first TS packet of a key frame's PES.
///
/// The file is written under a temporary name and renamed by ``finish()`` (``OutputFile``); a
/// pipe or device gets the stream directly. ``startSegment(path:)`` cuts the stream into files
/// that play one after the other (HLS segments, ``HLSMuxer``).
public final class MPEGTSMuxer: Muxer, SegmentingMuxer, @unchecked Sendable {
    /// The codecs written into MPEG-TS.
    public static let codecs: [CodecID] = ["aac", "ac3", "eac3", "h264", "hevc", "mp2", "mp3", "mpeg1video", "mpeg2video", "opus"]

    /// 1.4 s on the 90 kHz clock: FFmpeg's PTS offset (twice its 0.7 s default mux delay).
    static let delay: Int64 = 126_000
    /// The PCR runs this far (0.7 s, FFmpeg's mux delay) behind the DTS.
    static let pcrDelay: Int64 = 63_000
    /// Largest grouped audio PES payload (FFmpeg's default `pes_payload_size`).
    static let pesPayloadSize = 2930
    /// Audio frames are grouped while their DTS are less than this apart: 0.35 s.
    static let maxAudioDelay: Int64 = 31_500
    /// Table repetition periods on the 27 MHz PCR clock: PAT / PMT 0.1 s, SDT 0.5 s.
    static let patPeriod: Int64 = 2_700_000, sdtPeriod: Int64 = 13_500_000
    /// The PIDs: the PMT, the first elementary stream, the SDT.
    static let pmtPID = 0x1000, firstPID = 0x100, sdtPID = 0x11
    /// The largest timestamp magnitude written (90 kHz ticks): 2^50.
    static let maxTicks: Int64 = 1 << 50
    /// Packets are held for interleaving until this much DTS separates the first and the last held (10 s).
    static let maxInterleave: Int64 = 900_000

    private final class Stream {
        let index: Int
        let pid: Int
        let codec: CodecID
        let isVideo: Bool
        let streamType: UInt8
        let streamID: UInt8
        let descriptors: [UInt8]
        let timeBase: Rational
        /// Subtracted from every timestamp (in the track's time base): the start of an MP4 edit.
        let shift: Int64
        /// Added to every timestamp (90 kHz): an MP4 empty edit before it.
        let gap: Int64
        var annexB: AnnexBStream?
        var adts: ADTSHeader.Maker?
        let opus: Bool
        var opusTrimStart = 0
        var frameRate: Rational
        let sampleRate: Int
        @exclusivity(unchecked) var cc = 15
        var payload: [UInt8] = []
        var payloadPTS = Packet.noTimestamp, payloadDTS = Packet.noTimestamp
        var payloadKey = false
        var opusQueued = 0
        @exclusivity(unchecked) var prevPayloadKey = false
        /// 27 MHz; 0 for a stream without PCR.
        var pcrPeriod: Int64 = 0
        /// The PCR last written by the period (none yet: the first PES writes one).
        @exclusivity(unchecked) var lastPCR = Packet.noTimestamp
        var pcrStream = false
        var packets = 0
        /// The previous packet's DTS and duration, in the packets' time base.
        var lastDTS = Packet.noTimestamp, lastDuration: Int64 = 0
        let reorderDepth: Int
        var queue: [Item] = []
        var queueHead = 0

        init(index: Int, codec: CodecID, isVideo: Bool, streamType: UInt8, streamID: UInt8, descriptors: [UInt8],
             timeBase: Rational, shift: Int64, gap: Int64, opus: Bool, frameRate: Rational, sampleRate: Int, reorderDepth: Int) {
            self.index = index
            self.pid = MPEGTSMuxer.firstPID + index
            self.codec = codec
            self.isVideo = isVideo
            self.streamType = streamType
            self.streamID = streamID
            self.descriptors = descriptors
            self.timeBase = timeBase
            self.shift = shift
            self.gap = gap
            self.opus = opus
            self.frameRate = frameRate
            self.sampleRate = sampleRate
            self.reorderDepth = reorderDepth
        }

        /// One frame in `timeBase` by the frame rate, 0 when unknown.
        func frameDuration(in timeBase: Rational) -> Int64 {
            guard frameRate.numerator > 0, frameRate.denominator > 0 else { return 0 }
            return Rational.rescale(1, from: Rational(frameRate.denominator, frameRate.numerator), to: timeBase)
        }

        var queued: Int { queue.count - queueHead }
    }

    /// A packet converted and timed (90 kHz, the delay added), waiting to be interleaved.
    private struct Item {
        var data: [UInt8]
        var pts: Int64
        var dts: Int64
        var key: Bool
        var opusSamples: Int
        var duration: Int64
        /// The segment file this packet starts.
        var segment: String?
    }

    @exclusivity(unchecked) private var file: OutputFile
    /// Segment files already completed (``startSegment(path:)``), removed by ``cancel()``.
    private var completed: [String] = []
    private var streams: [Stream] = []
    private var started = false
    private var finished = false
    private var patCC = 15, pmtCC = 15, sdtCC = 15
    @exclusivity(unchecked) private var lastPAT: Int64?, lastSDT: Int64?
    @exclusivity(unchecked) private var resendTables = false
    /// The previous segment's commit, still running on its writer's thread.
    private var pendingCommit: PendingCommit?
    private var pcrChosen = false
    /// Added to every timestamp: minus the first packet's DTS when it is negative.
    private var offset: Int64?
    /// The file the next packet written starts (``startSegment(path:)``).
    private var pendingSegment: String?
    @exclusivity(unchecked) private var wroteAnything = false

    /// Starts `path` (a temporary name until ``finish()``).
    /// - Throws: `.io` when the file cannot be created.
    public init(path: String) throws {
        file = try OutputFile(path: path)
    }

    deinit { if !finished { file.discard() } }

    // MARK: - Tracks

    /// Adds a track. - Throws: `.unsupported` for a codec MPEG-TS does not carry here, `.state`
    /// after the first packet, `.invalidData` for an H.264 / HEVC configuration record that
    /// ends early, `.unsupported` / `.invalidData` for raw AAC whose AudioSpecificConfig an ADTS
    /// header cannot state.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        try add(parameters, timeBase: timeBase, shift: 0, gap: 0, language: "", frameRate: Rational(0, 1))
    }

    /// Adds a demuxed track: its language (an ISO 639 descriptor for audio), its frame rate (the
    /// PCR period) and, for a track with an MP4 edit list, the edit's start (its timestamps
    /// move by it, as FFmpeg's MP4 reader moves them). - Throws: as ``addTrack(_:timeBase:)``.
    public func addTrack(from track: Track) throws -> Int {
        var shift: Int64 = 0, gap: Int64 = 0
        let edits = track.editList
        if let first = edits.firstIndex(where: { !$0.isEmpty }), first <= 1, track.timeBase.numerator > 0, track.movieTimeScale > 0 {
            shift = edits[first].mediaTime
            gap = Rational.rescale(first == 1 ? edits[0].segmentDuration : 0, from: Rational(1, track.movieTimeScale), to: Rational(1, MPEGTS.clock))
        }
        // "und" is a language an MP4's mdhd states (FFmpeg's reader passes it on), and no
        // language at all from the other readers.
        let language = track.language == "und" && track.movieTimeScale <= 0 ? "" : track.language
        return try add(track.parameters, timeBase: track.timeBase, shift: shift, gap: gap, language: language, frameRate: track.frameRate)
    }

    private func add(_ p: CodecParameters, timeBase: Rational, shift: Int64, gap: Int64, language: String, frameRate: Rational) throws -> Int {
        guard !started, !finished else { throw MediaError(.state, "tracks must be added before the first packet", path: file.path) }
        let index = streams.count
        guard index < 0x1000 - Self.firstPID else {
            throw MediaError(.limit, "an MPEG-TS program holds at most \(0x1000 - Self.firstPID) streams here", path: file.path)
        }
        guard timeBase.numerator > 0, timeBase.denominator > 0 else {
            throw MediaError(.invalidArgument, "track \(index): the time base \(timeBase) is not positive", path: file.path)
        }
        let codec = p.codec
        let type: UInt8, id: UInt8
        var descriptors: [UInt8] = []
        switch codec.rawValue {
        case "h264": (type, id) = (MPEGTS.StreamType.h264, 0xE0)
        case "hevc":
            (type, id) = (MPEGTS.StreamType.hevc, 0xE0)
            descriptors = [0x05, 4] + Array("HEVC".utf8)
        case "mpeg1video", "mpeg2video": (type, id) = (MPEGTS.StreamType.mpeg2Video, 0xE0)
        case "aac": (type, id) = (MPEGTS.StreamType.adtsAAC, 0xC0)
        case "mp2", "mp3":
            (type, id) = (p.sampleRate > 0 && p.sampleRate < 32000 ? MPEGTS.StreamType.mpeg2Audio : MPEGTS.StreamType.mpeg1Audio, 0xC0)
        case "ac3":
            (type, id) = (MPEGTS.StreamType.ac3, 0xBD)
            descriptors = [0x05, 4] + Array("AC-3".utf8)
        case "eac3":
            (type, id) = (MPEGTS.StreamType.eac3, 0xBD)
            descriptors = [0x05, 4] + Array("EAC3".utf8)
        case "opus":
            (type, id) = (MPEGTS.StreamType.privateData, 0xBD)
            descriptors = [0x05, 4] + Array("Opus".utf8) + [0x7F, 2, 0x80, Self.opusChannelConfig(p)]
        default:
            let what = codec.isUnknown ? "an unknown codec" : codec.rawValue
            throw MediaError(.unsupported, "MPEG-TS cannot carry \(what) here; MediaKit writes \(Self.codecs.map(\.rawValue).joined(separator: ", ")) into it", path: file.path)
        }
        if p.mediaType == .audio, language.utf8.count == 3, language.allSatisfy({ $0.isASCII && $0.isLetter }) {
            descriptors += [0x0A, 4] + Array(language.lowercased().utf8) + [0]
        }
        let s = Stream(index: index, codec: codec, isVideo: id == 0xE0, streamType: type, streamID: id, descriptors: descriptors,
                       timeBase: timeBase, shift: shift, gap: gap, opus: codec == "opus", frameRate: frameRate, sampleRate: p.sampleRate, reorderDepth: p.reorderDepth)
        do {
            if codec == "h264" || codec == "hevc" { s.annexB = try AnnexBStream(codec: codec, extradata: p.extradata, track: index) }
            if codec == "aac" && !p.extradata.isEmpty && p.codecTag != "adts" { s.adts = try ADTSHeader.Maker(config: p.extradata, track: index) }
        } catch let e as MediaError { throw e.at(path: file.path) }
        if s.opus, case .success(let head) = OpusHead.parse(p.extradata), p.sampleRate > 0 {
            s.opusTrimStart = head.preSkip * 48000 / p.sampleRate
        }
        streams.append(s)
        return index
    }

    /// The channel configuration byte of the Opus extension descriptor, as FFmpeg derives it
    /// from the OpusHead: the channel count for mapping family 0 (up to 2) and for family 1 in
    /// the Vorbis order, the count | 0x80 for family 1 with every stream uncoupled, 0xFF else.
    static func opusChannelConfig(_ p: CodecParameters) -> UInt8 {
        let h = p.extradata
        let channels = p.channels
        guard h.count >= 19 else { return channels >= 1 && channels <= 2 ? UInt8(truncatingIfNeeded: channels) : 0xFF }
        if h[18] == 0 && channels >= 1 && channels <= 2 { return UInt8(truncatingIfNeeded: channels) }
        guard h[18] == 1, channels >= 1, channels <= 8, h.count >= 21 + channels else { return 0xFF }
        let coupled = MPEGTS.opusCoupledCounts[channels]
        if Int(truncatingIfNeeded: h[19]) == channels - coupled && Int(truncatingIfNeeded: h[20]) == coupled
            && Array(h[21..<(21 + channels)]) == MPEGTS.opusChannelMaps[channels - 1] {
            return UInt8(truncatingIfNeeded: channels)
        }
        if channels >= 2 && Int(truncatingIfNeeded: h[19]) == channels && h[20] == 0 { return UInt8(truncatingIfNeeded: channels | 0x80) }
        return 0xFF
    }

    // MARK: - Packets

    /// Writes one packet (after its track's earlier ones, in decoding order).
    /// - Throws: `.invalidArgument` for a track that was not added or a packet with no
    ///   timestamp; the conversions' `.invalidData` / `.limit`
    ///   (an H.264 length prefix past the packet's end, an AAC frame too long for ADTS);
    ///   `.state` after ``finish()``; `.io`.
    public func write(_ packet: Packet) throws {
        guard !finished else { throw MediaError(.state, "write after finish", path: file.path) }
        guard packet.trackIndex >= 0 && packet.trackIndex < streams.count else {
            throw MediaError(.invalidArgument, "track \(packet.trackIndex) was not added", path: file.path)
        }
        try MuxLimits.check(packet, track: packet.trackIndex, path: file.path)
        started = true
        let s = streams[packet.trackIndex]
        let n = s.packets
        // Timestamps as FFmpeg's stream copy makes them: an unknown DTS (Matroska's first
        // B-frame packets) the previous one plus its duration, or the PTS less the reorder
        // depth's frames; a DTS that does not increase the previous one plus 1.
        var pts = packet.pts, dts = packet.dts
        let frame = packet.statedDuration ?? s.frameDuration(in: packet.timeBase)
        if dts == Packet.noTimestamp {
            if s.lastDTS != Packet.noTimestamp { dts = s.lastDTS &+ s.lastDuration }
            else if pts != Packet.noTimestamp { dts = pts - min(Int64(s.reorderDepth), 64) * max(0, min(frame, MuxLimits.ticks >> 8)) }
        }
        if pts == Packet.noTimestamp { pts = dts }
        guard dts != Packet.noTimestamp else {
            throw MediaError(.invalidArgument, "track \(s.index), packet \(n): no timestamp (MPEG-TS states a PTS for every PES)", path: file.path)
        }
        if s.lastDTS != Packet.noTimestamp && dts <= s.lastDTS {
            dts = s.lastDTS &+ 1
            pts = max(pts, dts)
        }
        // A sum above that wrapped (a previous DTS and duration at the edge of Int64, both
        // within MuxLimits) is refused, not written.
        guard s.lastDTS == Packet.noTimestamp || dts > s.lastDTS else {
            throw MediaError(.invalidArgument, "track \(s.index), packet \(n): the DTS after \(s.lastDTS) does not fit 64 bits", path: file.path)
        }
        s.lastDTS = dts
        s.lastDuration = frame
        // The edit's start off in the track's time base, then on the clock (as FFmpeg's MP4
        // reader moves the timestamps before the muxer rescales them).
        let clock = Rational(1, MPEGTS.clock)
        let shift = packet.timeBase == s.timeBase ? s.shift : Rational.rescale(s.shift, from: s.timeBase, to: packet.timeBase)
        // Within 2^50 ticks (some 400 years): the PCR (300 x) and the differences taken
        // below cannot overflow. Checked on the way: a hostile edit start (shift) or empty
        // edit (gap) must not wrap a timestamp (nor saturate it to Int64.min, whose
        // magnitude no Int64 holds) into that range.
        func onClock(_ v: Int64) -> Int64? {
            let (moved, o1) = v.subtractingReportingOverflow(shift)
            let (t, o2) = Rational.rescale(moved, from: packet.timeBase, to: clock).addingReportingOverflow(s.gap)
            return !o1 && !o2 && t.magnitude <= UInt64(Self.maxTicks) ? t : nil
        }
        guard let p = onClock(pts), let d = onClock(dts) else {
            throw MediaError(.invalidArgument, "track \(s.index), packet \(n): a timestamp beyond 2^50 ticks of 90 kHz (pts \(packet.pts), dts \(packet.dts) in \(packet.timeBase), the edit moving it by \(shift) and \(s.gap) ticks) is not written into MPEG-TS", path: file.path)
        }
        pts = p
        dts = d
        s.packets += 1
        var data = packet.data
        var opusSamples = 0
        do {
            if var a = s.annexB {
                if a.lengthSize == 0 && n == 0 { a.learnParameterSets(from: data) }
                data = try a.payload(data, isKeyframe: packet.isKeyframe, track: s.index, packet: n)
                s.annexB = a
            } else if s.codec == "aac" {
                guard data.count >= 2 else { throw MediaError(.invalidData, "track \(s.index), packet \(n): an AAC packet of \(data.count) bytes") }
                if data[0] != 0xFF || data[1] & 0xF0 != 0xF0 {
                    guard var adts = s.adts else {
                        throw MediaError(.invalidArgument, "track \(s.index) (aac), packet \(n): raw AAC without an AudioSpecificConfig in the extradata: no ADTS header can be made")
                    }
                    data = try adts.frame(data, track: s.index)
                    s.adts = adts
                }
            } else if s.opus {
                (data, opusSamples) = try opusPayload(s, data, trimEnd: packet.trimEnd, packet: n)
            }
        } catch let e as MediaError { throw e.at(path: file.path) }
        let duration = packet.duration > 0 ? Rational.rescale(packet.duration, from: packet.timeBase, to: clock) : 0
        s.queue.append(Item(data: data, pts: pts, dts: dts, key: packet.isKeyframe, opusSamples: opusSamples, duration: duration,
                            segment: pendingSegment))
        pendingSegment = nil
        try interleave(flush: false)
    }

    /// An Opus packet after its control header (0x7F 0xE0, the trim flags, the size in 255s),
    /// and its samples at 48 kHz.
    private func opusPayload(_ s: Stream, _ data: [UInt8], trimEnd: Int, packet: Int) throws -> ([UInt8], Int) {
        guard data.count >= 2 else {
            throw MediaError(.invalidData, "track \(s.index) (opus), packet \(packet): \(data.count) bytes, shorter than an Opus packet's TOC and frame")
        }
        if data[0] == 0x7F && data[1] & 0xE0 == 0xE0 { return (data, OpusHead.packetDuration(data[2...]) ?? 0) }
        var samples = OpusHead.packetDuration(data[...]) ?? 0
        if samples > 5760 { samples = 0 }
        // As FFmpeg: the start trim is stated while some of the pre-skip is pending, the end
        // trim when the packet has one (at 48 kHz), each clipped to the packet's samples.
        let pending = s.opusTrimStart
        let start = min(pending, samples)
        s.opusTrimStart -= start
        let endTrim = s.sampleRate > 0 ? trimEnd * 48000 / s.sampleRate : trimEnd
        let end = min(endTrim, samples - start)
        var out: [UInt8] = [0x7F, 0xE0 | (pending > 0 ? 0x10 : 0) | (endTrim > 0 ? 0x08 : 0)]
        out.reserveCapacity(data.count + data.count / 255 + 8)
        var left = data.count
        repeat {
            out.append(UInt8(truncatingIfNeeded: min(left, 255)))
            left -= 255
        } while left >= 0
        if pending > 0 { out += [UInt8(truncatingIfNeeded: start >> 8), UInt8(truncatingIfNeeded: start)] }
        if endTrim > 0 { out += [UInt8(truncatingIfNeeded: end >> 8), UInt8(truncatingIfNeeded: end)] }
        out += data
        return (out, samples)
    }

    /// Hands the held packets to the PES writer in DTS order while every track has one held
    /// (or 10 s of them are held, or `flush`).
    private func interleave(flush: Bool) throws {
        while true {
            var next: Stream?
            var waiting = false
            var lowest = Int64.max, highest = Int64.min
            for s in streams {
                guard s.queued > 0 else { waiting = true; continue }
                let d = s.queue[s.queueHead].dts
                highest = max(highest, s.queue[s.queue.count - 1].dts)
                if d < lowest { lowest = d; next = s }
            }
            guard let s = next else { return }
            if waiting && !flush && highest - lowest <= Self.maxInterleave { return }
            let item = s.queue[s.queueHead]
            s.queue[s.queueHead].data = []
            s.queueHead += 1
            if s.queueHead > 64 && s.queueHead * 2 > s.queue.count {
                s.queue.removeFirst(s.queueHead)
                s.queueHead = 0
            }
            try emit(s, item)
        }
    }

    /// FFmpeg's grouping: video (and audio frames over the PES payload size) in a PES of their
    /// own, audio frames gathered.
    private func emit(_ s: Stream, _ item: Item) throws {
        if let path = item.segment { try cut(to: path) }
        // As FFmpeg's muxing: when the first packet (in DTS order) has a negative DTS, every
        // timestamp moves by as much, so none is negative; then the 1.4 s delay.
        if offset == nil { offset = max(0, -item.dts) }
        var item = item
        item.pts += (offset ?? 0) + Self.delay
        item.dts += (offset ?? 0) + Self.delay
        if !pcrChosen {
            pcrChosen = true
            let pcrIndex = streams.firstIndex { $0.isVideo } ?? 0
            streams[pcrIndex].pcrStream = true
        }
        if s.pcrStream && s.pcrPeriod == 0 { setUpPCR(s, first: item) }
        if s.isVideo || item.data.count > Self.pesPayloadSize {
            try flushPayload(s)
            try writePES(s, item.data[...], pts: item.pts, dts: item.dts, key: item.key)
            s.opusQueued = 0
            return
        }
        if !s.payload.isEmpty && (s.payload.count + item.data.count > Self.pesPayloadSize || item.dts - s.payloadDTS >= Self.maxAudioDelay
                                  || s.opusQueued + item.opusSamples >= 5760) {
            try flushPayload(s)
        }
        if s.payload.isEmpty {
            s.payloadPTS = item.pts
            s.payloadDTS = item.dts
            s.payloadKey = item.key
        }
        s.payload += item.data
        s.opusQueued += item.opusSamples
    }

    private func flushPayload(_ s: Stream) throws {
        guard !s.payload.isEmpty else { return }
        try writePES(s, s.payload[...], pts: s.payloadPTS, dts: s.payloadDTS, key: s.payloadKey)
        s.payload = []
        s.opusQueued = 0
    }

    /// The PCR stream (the first video stream, else the first stream) and its period: the
    /// largest multiple of its frame duration within 100 ms (FFmpeg's VBR rule), every PES
    /// when the duration is unknown.
    private func setUpPCR(_ s: Stream, first: Item) {
        var frame: Int64 = 0
        if s.isVideo && s.frameRate.numerator > 0 && s.frameRate.denominator > 0 {
            frame = Rational.rescale(s.frameRate.denominator, multiply: 27_000_000, divide: s.frameRate.numerator, rounding: .up)
        } else if first.duration > 0 {
            frame = first.duration * 300
        }
        s.pcrPeriod = frame > 0 && frame <= 2_700_000 ? frame * (2_700_000 / frame) : 1
    }

    // MARK: - Transport packets

    private func writePES(_ s: Stream, _ payload: ArraySlice<UInt8>, pts: Int64, dts: Int64, key: Bool) throws {
        let forcePAT = s.isVideo && key && !s.prevPayloadKey
        let pcr = max(0, dts - Self.pcrDelay) * 300
        let both = dts != pts
        let headerLength = both ? 10 : 5
        var length = payload.count + headerLength + 3
        if length > 0xFFFF || s.isVideo { length = 0 }
        // The PES header (at most 19 bytes), on the stack.
        var headerStorage: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let headerCount = 9 + headerLength
        withUnsafeMutableBytes(of: &headerStorage) { h in
            h[0] = 0; h[1] = 0; h[2] = 1; h[3] = s.streamID
            h[4] = UInt8(truncatingIfNeeded: length >> 8); h[5] = UInt8(truncatingIfNeeded: length)
            h[6] = 0x80; h[7] = both ? 0xC0 : 0x80; h[8] = UInt8(truncatingIfNeeded: headerLength)
            Self.storeTimestamp(both ? 3 : 2, pts, h.baseAddress! + 9)
            if both { Self.storeTimestamp(1, dts, h.baseAddress! + 14) }
        }
        let pid = s.pid
        // The tables go before the PES's first packet when due: their periods are counted in
        // this PES's PCR, the same for all its packets, so none falls due within it.
        if !payload.isEmpty { try retransmitTables(force: forcePAT, pcr: pcr) }
        let out = file   // one reference for the whole PES
        try payload.withUnsafeBytes { data in
            try withUnsafeBytes(of: &headerStorage) { storage in
                let header = UnsafeRawBufferPointer(rebasing: storage[0..<headerCount])
                var at = 0
                var isStart = true
                while at < data.count {
                    var writePCR = false
                    if s.pcrStream && s.pcrPeriod > 0 && isStart && s.lastPCR == Packet.noTimestamp {
                        s.lastPCR = pcr
                        writePCR = true
                    } else if s.pcrStream && s.pcrPeriod > 0 && isStart && pcr - s.lastPCR >= s.pcrPeriod {
                        s.lastPCR = max(pcr - s.pcrPeriod, s.lastPCR + s.pcrPeriod)
                        writePCR = true
                    }
                    var flags: UInt8 = 0
                    if key && isStart {
                        if s.pcrStream && s.pcrPeriod > 0 { writePCR = true }
                        flags |= 0x40
                    }
                    if writePCR { flags |= 0x10 }
                    // The adaptation field: its flags (random access, PCR) and the stuffing that
                    // fills the packet's end, as FFmpeg lays it out; the packet is laid out in
                    // the output's buffer.
                    let fieldBody = flags != 0 ? 1 + (writePCR ? 6 : 0) : 0
                    let pesBytes = isStart ? header.count : 0
                    let headerBytes = 4 + (flags != 0 ? 1 + fieldBody : 0) + pesBytes
                    let take = min(MPEGTS.packetSize - headerBytes, data.count - at)
                    let stuffing = MPEGTS.packetSize - headerBytes - take
                    // The field's length byte, or -1 for none.
                    let fieldLength = flags != 0 ? fieldBody + stuffing : stuffing - 1
                    s.cc = (s.cc + 1) & 0xF
                    let cc = s.cc, start = isStart
                    try out.append(count: MPEGTS.packetSize) { p in
                        p.storeBytes(of: MPEGTS.syncByte, toByteOffset: 0, as: UInt8.self)
                        p.storeBytes(of: UInt8(truncatingIfNeeded: pid >> 8) | (start ? 0x40 : 0), toByteOffset: 1, as: UInt8.self)
                        p.storeBytes(of: UInt8(truncatingIfNeeded: pid), toByteOffset: 2, as: UInt8.self)
                        p.storeBytes(of: UInt8(truncatingIfNeeded: cc) | 0x10 | (fieldLength >= 0 ? 0x20 : 0), toByteOffset: 3, as: UInt8.self)
                        var i = 4
                        if fieldLength >= 0 {
                            p.storeBytes(of: UInt8(truncatingIfNeeded: fieldLength), toByteOffset: 4, as: UInt8.self)
                            i = 5
                            if flags != 0 {
                                p.storeBytes(of: flags, toByteOffset: 5, as: UInt8.self)
                                i = 6
                                if writePCR {
                                    Self.storePCR(pcr, p + 6)
                                    i = 12
                                }
                                (p + i).initializeMemory(as: UInt8.self, repeating: 0xFF, count: stuffing)
                                i += stuffing
                            } else if stuffing >= 2 {
                                p.storeBytes(of: 0, toByteOffset: 5, as: UInt8.self)
                                (p + 6).initializeMemory(as: UInt8.self, repeating: 0xFF, count: stuffing - 2)
                                i = 4 + stuffing
                            }
                        }
                        if start {
                            (p + i).copyMemory(from: header.baseAddress!, byteCount: header.count)
                            i += header.count
                        }
                        (p + i).copyMemory(from: data.baseAddress! + at, byteCount: take)
                    }
                    at += take
                    isStart = false
                }
            }
        }
        s.prevPayloadKey = key
        wroteAnything = true
    }

    /// A PES timestamp as 5 bytes at `p`: the 4-bit prefix, 33 bits with marker bits.
    static func storeTimestamp(_ prefix: UInt8, _ value: Int64, _ p: UnsafeMutableRawPointer) {
        let t = value & ((1 << 33) - 1)
        p.storeBytes(of: prefix << 4 | UInt8(truncatingIfNeeded: t >> 29) & 0x0E | 1, toByteOffset: 0, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: t >> 22), toByteOffset: 1, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: t >> 14) | 1, toByteOffset: 2, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: t >> 7), toByteOffset: 3, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: t << 1) | 1, toByteOffset: 4, as: UInt8.self)
    }

    /// A PCR (27 MHz) as the adaptation field's 6 bytes at `p`: 33-bit base, 6 reserved bits, 9-bit extension.
    static func storePCR(_ pcr: Int64, _ p: UnsafeMutableRawPointer) {
        let base = pcr / 300 & ((1 << 33) - 1), ext = pcr % 300
        p.storeBytes(of: UInt8(truncatingIfNeeded: base >> 25), toByteOffset: 0, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: base >> 17), toByteOffset: 1, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: base >> 9), toByteOffset: 2, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: base >> 1), toByteOffset: 3, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: base << 7 | ext >> 8 | 0x7E), toByteOffset: 4, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: ext), toByteOffset: 5, as: UInt8.self)
    }

    private func retransmitTables(force: Bool, pcr: Int64) throws {
        let forceAll = resendTables
        resendTables = false
        if forceAll || lastSDT.map({ pcr - $0 >= Self.sdtPeriod }) ?? true {
            lastSDT = max(pcr, lastSDT ?? pcr)
            try writeSection(pid: Self.sdtPID, cc: &sdtCC, section: sdt())
        }
        if force || forceAll || lastPAT.map({ pcr - $0 >= Self.patPeriod }) ?? true {
            lastPAT = max(pcr, lastPAT ?? pcr)
            try writeSection(pid: 0, cc: &patCC, section: Self.section(table: 0, id: 1, [0, 1, 0xE0 | UInt8(truncatingIfNeeded: Self.pmtPID >> 8), UInt8(truncatingIfNeeded: Self.pmtPID)]))
            try writeSection(pid: Self.pmtPID, cc: &pmtCC, section: pmt())
        }
    }

    private func pmt() -> [UInt8] {
        let pcrPID = streams.first(where: { $0.isVideo })?.pid ?? streams.first?.pid ?? 0x1FFF
        var body: [UInt8] = [0xE0 | UInt8(truncatingIfNeeded: pcrPID >> 8), UInt8(truncatingIfNeeded: pcrPID), 0xF0, 0]
        for s in streams {
            body += [s.streamType, 0xE0 | UInt8(truncatingIfNeeded: s.pid >> 8), UInt8(truncatingIfNeeded: s.pid),
                     0xF0 | UInt8(truncatingIfNeeded: s.descriptors.count >> 8), UInt8(truncatingIfNeeded: s.descriptors.count)]
            body += s.descriptors
        }
        return Self.section(table: 2, id: 1, body)
    }

    /// The SDT: service 1 of network 0xFF01 (FFmpeg's default), a digital television service named "Service01" by "MediaKit".
    private func sdt() -> [UInt8] {
        let provider = Array("MediaKit".utf8), name = Array("Service01".utf8)
        let service: [UInt8] = [0x48, UInt8(truncatingIfNeeded: 3 + provider.count + name.count), 0x01,
                                UInt8(truncatingIfNeeded: provider.count)] + provider + [UInt8(truncatingIfNeeded: name.count)] + name
        let loop = 4 << 13 | service.count
        return Self.section(table: 0x42, id: 1, [0xFF, 0x01, 0xFF, 0, 1, 0xFC, UInt8(truncatingIfNeeded: loop >> 8), UInt8(truncatingIfNeeded: loop)] + service)
    }

    /// A long-form section (version 0, current, section 0 of 0) with its CRC; the reserved
    /// bits after the syntax indicator set for the SDT, as FFmpeg sets them.
    static func section(table: UInt8, id: Int, _ body: [UInt8]) -> [UInt8] {
        let length = 5 + body.count + 4
        var s: [UInt8] = [table, (table == 0x42 ? 0xF0 : 0xB0) | UInt8(truncatingIfNeeded: length >> 8 & 0x0F), UInt8(truncatingIfNeeded: length),
                          UInt8(truncatingIfNeeded: id >> 8), UInt8(truncatingIfNeeded: id), 0xC1, 0, 0] + body
        let crc = MPEGTS.crc32(s)
        s += [UInt8(truncatingIfNeeded: crc >> 24), UInt8(truncatingIfNeeded: crc >> 16), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc)]
        return s
    }

    /// A section in transport packets (pointer field 0, the rest stuffed with 0xFF).
    private func writeSection(pid: Int, cc: inout Int, section: [UInt8]) throws {
        var rest = section[...]
        var first = true
        while !rest.isEmpty || first {
            cc = (cc + 1) & 0xF
            var p: [UInt8] = [MPEGTS.syncByte, UInt8(truncatingIfNeeded: pid >> 8) | (first ? 0x40 : 0), UInt8(truncatingIfNeeded: pid),
                              0x10 | UInt8(truncatingIfNeeded: cc)]
            if first { p.append(0) }
            let take = min(MPEGTS.packetSize - p.count, rest.count)
            p += rest.prefix(take)
            rest = rest.dropFirst(take)
            p += [UInt8](repeating: 0xFF, count: MPEGTS.packetSize - p.count)
            try file.write(p)
            first = false
        }
    }

    /// Writes every packet still held and the gathered audio, into the current file.
    private func flushAll() throws {
        try interleave(flush: true)
        for s in streams { try flushPayload(s) }
        if !wroteAnything && !streams.isEmpty { try retransmitTables(force: true, pcr: 0) }
    }

    // MARK: - Segments

    /// Makes the next packet written the first of the file `path`: the packets before it in
    /// DTS order, and the audio gathered in PES before it, complete the current file, which is
    /// renamed into place; `path` starts with the SDT, PAT and PMT, so it plays on its own, and
    /// after the previous file as one stream (continuity counters and timestamps run on).
    /// - Throws: `.state` after ``finish()`` or when the previous cut has not had its packet.
    public func startSegment(path: String) throws {
        guard !finished else { throw MediaError(.state, "startSegment after finish", path: file.path) }
        guard pendingSegment == nil else {
            throw MediaError(.state, "startSegment(\(path)) before a packet was written into the segment \(pendingSegment ?? "") started last", path: file.path)
        }
        pendingSegment = path
    }

    /// Completes the current file with what comes before `item` and opens `path`.
    private func cut(to path: String) throws {
        for s in streams { try flushPayload(s) }
        if !wroteAnything && !streams.isEmpty { try retransmitTables(force: true, pcr: 0) }
        // The finished file is closed and renamed on its writer's thread while this one fills
        // the next; at most one such commit runs (the previous one's outcome is taken first).
        try waitForPendingCommit()
        pendingCommit = try file.commitInBackground()
        completed.append(file.path)
        file = try OutputFile(path: path)
        resendTables = true
        wroteAnything = false
    }

    /// Waits for the segment committed in the background, if one is: its write, close or rename
    /// failure is thrown (once: it is no longer pending after).
    private func waitForPendingCommit() throws {
        let previous = pendingCommit
        pendingCommit = nil
        try previous?.wait()
    }

    /// Writes the packets still held and renames the file into place. - Throws: `.io`; the
    /// file is then removed.
    public func finish() throws {
        guard !finished else { return }
        do {
            try flushAll()
            finished = true
            try waitForPendingCommit()
            try file.commit()
        } catch {
            finished = true
            file.discard()
            throw error
        }
    }

    /// Abandons the file and removes what was written (segments already completed too).
    public func cancel() {
        finished = true
        file.discard()
        try? waitForPendingCommit()
        for p in completed { try? FileManager.default.removeItem(atPath: p) }
    }
}

extension MuxerFormat {
    /// MPEG-TS (``MPEGTSMuxer``): H.264, HEVC, MPEG-1 / 2 video, AAC (ADTS), MP2, MP3, AC-3, E-AC-3, Opus.
    public static let mpegts = MuxerFormat(
        name: "mpegts", description: "MPEG-TS", extensions: ["ts"], mimeTypes: ["video/mp2t"],
        codecs: MPEGTSMuxer.codecs, defaultAudioCodec: "aac", make: { path, _ in try MPEGTSMuxer(path: path) })
}
