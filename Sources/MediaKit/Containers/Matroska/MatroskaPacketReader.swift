/// An element header read from the source: ID, where its data starts, and its size.
struct EBMLHeader {
    let id: UInt32
    /// Absolute offset of the ID.
    let offset: Int64
    /// Absolute offset of the data.
    let dataStart: Int64
    /// The data size; nil when unknown (all ones).
    let size: Int64?
    /// The end of the data; `Int64.max` for an unknown size.
    var end: Int64 { size.map { dataStart + $0 } ?? .max }
}

/// What reading an element header from the source found.
enum EBMLHeaderRead {
    case header(EBMLHeader)
    /// The source ends exactly here.
    case end
    /// The source ends inside the header (this many bytes were there).
    case cut(Int)
    /// The bytes are not an element header.
    case malformed
}

extension ByteSource {
    /// Reads the element header at `offset` (at most 12 bytes: a 4-byte ID and an 8-byte size).
    func ebmlHeader(at offset: Int64) throws -> EBMLHeaderRead {
        let b = try readUpTo(at: offset, count: 12)
        if b.isEmpty { return .end }
        return b.withUnsafeBytes { raw -> EBMLHeaderRead in
            guard let first = EBMLVarInt.length(raw[0]), first <= 4 else { return .malformed }
            guard let id = EBMLVarInt.id(raw, at: 0) else { return raw.count < first ? .cut(raw.count) : .malformed }
            guard id.length < raw.count, let sizeLength = EBMLVarInt.length(raw[id.length]) else {
                return id.length >= raw.count ? .cut(raw.count) : .malformed
            }
            guard let size = EBMLVarInt.size(raw, at: id.length) else {
                return id.length + sizeLength > raw.count ? .cut(raw.count) : .malformed
            }
            guard size.value <= UInt64(Int64.max / 2) || size.unknown else { return .malformed }
            return .header(EBMLHeader(id: id.id, offset: offset, dataStart: offset + Int64(id.length + size.length),
                                      size: size.unknown ? nil : Int64(size.value)))
        }
    }
}

/// Reads the Clusters of a Segment in file order and turns their blocks into packets:
/// one reader for `read()`, one more for each `read(track:)`.
///
/// Every element's size is checked against the Cluster and Segment that hold it and against
/// the bytes the source has before its data is read. Clusters (and the Segment) of unknown
/// size end at the first element that cannot be their child (RFC 9559 section 6.2), so live
/// WebM streams read front to back.
final class MatroskaPacketReader {
    private let source: ByteSource
    private let path: String
    private let configs: [MatroskaTrackConfig]
    private let trackIndex: [UInt64: Int]
    private let segmentEnd: Int64
    private let timecodeScale: UInt64
    /// The tracks whose packets are returned (nil: all); the other blocks are skipped unread.
    var filter: Set<Int>?

    /// Where the next element header is.
    private(set) var offset: Int64
    /// The Cluster being read: its end (`Int64.max` when unknown) and offset; nil between Clusters.
    private var clusterEnd: Int64?
    private var clusterOffset: Int64 = 0
    private var clusterTime: Int64?
    /// Packets of a laced block not yet returned.
    private var queue: [Packet] = []
    private var queueHead = 0
    private var cut = TruncationState()
    private var started: [Bool]
    private var lastEnd: [Int64?]
    private var vorbis: [VorbisDurationParser?]
    private var av1: [AV1.State]
    /// Per track: the last `reorderDepth + 1` presentation timestamps, sorted (libavformat's
    /// `pts_buffer`): a track with B-frames takes its decoding timestamp from it.
    private var ptsBuffer: [[Int64]]
    private(set) var warnings: [MediaError] = []

    init(source: ByteSource, configs: [MatroskaTrackConfig], segmentEnd: Int64, timecodeScale: UInt64, start: Int64) {
        self.source = source
        self.path = source.name
        self.configs = configs
        var map: [UInt64: Int] = [:]
        for (i, c) in configs.enumerated() where map[c.info.number] == nil { map[c.info.number] = i }
        self.trackIndex = map
        self.segmentEnd = segmentEnd
        self.timecodeScale = timecodeScale
        self.offset = start
        self.started = Array(repeating: false, count: configs.count)
        self.lastEnd = Array(repeating: nil, count: configs.count)
        self.vorbis = configs.map { if case .vorbis(let v) = $0.durations { VorbisDurationParser(info: v) } else { nil } }
        self.av1 = Array(repeating: AV1.State(), count: configs.count)
        self.ptsBuffer = configs.map { Self.emptyBuffer($0) }
    }

    private static func emptyBuffer(_ c: MatroskaTrackConfig) -> [Int64] {
        let delay = c.track.parameters.reorderDepth
        return delay > 0 ? Array(repeating: Packet.noTimestamp, count: delay + 1) : []
    }

    /// The decoding timestamp of a packet with presentation timestamp `pts`: `pts` itself
    /// without reordering, else the smallest of the last `delay + 1` (unknown for the first
    /// `delay` packets), as libavformat's compute_pkt_fields guesses it.
    private func dts(track t: Int, pts: Int64) -> Int64 {
        guard !ptsBuffer[t].isEmpty, pts != Packet.noTimestamp else { return pts }
        ptsBuffer[t][0] = pts
        var i = 0
        while i + 1 < ptsBuffer[t].count && ptsBuffer[t][i] > ptsBuffer[t][i + 1] {
            ptsBuffer[t].swapAt(i, i + 1)
            i += 1
        }
        return ptsBuffer[t][0]
    }

    /// Restarts reading at the Cluster at `offset`; `fresh` forgets the track states (the
    /// first packets' priming trims are then not applied again when false).
    func restart(at offset: Int64, fresh: Bool) {
        self.offset = offset
        clusterEnd = nil
        clusterTime = nil
        queue = []
        queueHead = 0
        cut.reset()
        lastEnd = Array(repeating: nil, count: configs.count)
        vorbis = vorbis.map { v in v.map { var p = $0; p.reset(); return p } }
        av1 = Array(repeating: AV1.State(), count: configs.count)
        ptsBuffer = configs.map { Self.emptyBuffer($0) }
        if !fresh { started = Array(repeating: true, count: configs.count) }
    }

    private func error(_ kind: MediaError.Kind, _ message: String, at offset: Int64, _ context: String) -> MediaError {
        MediaError(kind, message, path: path, offset: offset, context: context)
    }

    private var where_: String { clusterEnd == nil ? "Segment" : "Segment/Cluster" }

    /// The next packet in file order, nil at the end.
    /// - Throws: `.truncated` once when the file ends inside an element (after the packets
    ///   before it), `.invalidData` naming the element path and offset for damage, `.limit`.
    func next() throws -> Packet? {
        while true {
            if queueHead < queue.count {
                defer { queueHead += 1; if queueHead == queue.count { queue = []; queueHead = 0 } }
                return queue[queueHead]
            }
            if try cut.check() { return nil }
            guard try step() else {
                if try cut.check() { return nil }
                return nil
            }
        }
    }

    /// Reads one element; false at the end of the Segment.
    private func step() throws -> Bool {
        if let end = clusterEnd, offset >= end {
            clusterEnd = nil
        }
        if offset >= segmentEnd { return false }
        let header: EBMLHeader
        switch try source.ebmlHeader(at: offset) {
        case .end:
            if let end = clusterEnd, end != .max {
                cut.cut(error(.truncated, "the file ends inside a Cluster that declares \(end - clusterOffset) more bytes from its start (it ends at \(end))", at: offset, "Segment/Cluster"))
            } else if segmentEnd != .max {
                cut.cut(error(.truncated, "the file ends before the end of the Segment (offset \(segmentEnd))", at: offset, "Segment"))
            }
            return false
        case .cut(let n):
            cut.cut(error(.truncated, "the file ends \(n) bytes into an element header", at: offset, where_))
            return false
        case .malformed:
            return try resync(error(.invalidData, "malformed element header (an ID of 1 to 4 bytes and a size of 1 to 8 were expected)", at: offset, where_))
        case .header(let h):
            header = h
        }
        if let end = clusterEnd {
            // An element that cannot be a Cluster's child ends a Cluster of unknown size.
            if end == .max && (MKVID.segmentChildren.contains(header.id) || header.id == MKVID.ebml) {
                clusterEnd = nil
                return true
            }
            if header.end > end && end != .max {
                return try resync(error(.invalidData, "element \(MKVID.name(header.id)) declares \(header.size ?? -1) bytes, past the end of its Cluster (offset \(end))", at: header.offset, "Segment/Cluster"))
            }
            do {
                try clusterChild(header)
            } catch let e as MediaError where e.kind == .invalidData {
                return try resync(e)
            }
            return true
        }
        if header.end > segmentEnd && segmentEnd != .max && header.size != nil {
            return try resync(error(.invalidData, "element \(MKVID.name(header.id)) declares \(header.size!) bytes, past the end of the Segment (offset \(segmentEnd))", at: header.offset, "Segment"))
        }
        switch header.id {
        case MKVID.cluster:
            clusterEnd = header.end
            clusterOffset = header.offset
            clusterTime = nil
            offset = header.dataStart
        case MKVID.ebml, MKVID.segment:
            // A second EBML document (a chained file): FFmpeg reads the first Segment only.
            return false
        default:
            guard let size = header.size else {
                return try resync(error(.invalidData, "element \(MKVID.name(header.id)) has an unknown size; only a Segment and a Cluster may", at: header.offset, "Segment"))
            }
            let next = header.dataStart + size
            if let known = source.knownSize, next > known {
                cut.cut(error(.truncated, "element \(MKVID.name(header.id)) declares \(size) bytes, the file ends after \(known - header.dataStart)", at: header.offset, "Segment/\(MKVID.name(header.id))"))
                return false
            }
            offset = next
        }
        return true
    }

    /// Bytes looked at per read while resyncing.
    private static let resyncChunk = 64 << 10

    /// After damage (an element header that is malformed, larger than its Cluster or Segment, of
    /// unknown size where none may be, or a BlockGroup whose children are): records `problem` as
    /// a warning and resumes at the next top-level element ID (Cluster, Cues, Tags ...) found
    /// after the damaged element's first byte, as FFmpeg's Matroska demuxer resyncs; the rest of
    /// the damaged Cluster is skipped. False (the end) when none follows. The scan reads the
    /// source in 64 KiB pieces: memory stays bounded whatever the file's size.
    private func resync(_ problem: MediaError) throws -> Bool {
        let from = (problem.offset ?? offset) + 1
        let end = segmentEnd == .max ? Int64.max : segmentEnd
        clusterEnd = nil
        clusterTime = nil
        var at = from
        var window: UInt32 = 0
        var filled = 0
        while at < end {
            let piece = try source.readUpTo(at: at, count: Int(min(Int64(Self.resyncChunk), end - at)))
            if piece.isEmpty { break }
            for (i, byte) in piece.enumerated() {
                window = window << 8 | UInt32(byte)
                filled += 1
                if filled >= 4 && MKVID.segmentChildren.contains(window) {
                    offset = at + Int64(i) - 3
                    note(MediaError(.invalidData, "\(problem.message); reading resumes at the next \(MKVID.name(window)) (offset \(offset))",
                                    path: path, offset: problem.offset, context: problem.context))
                    return true
                }
            }
            at += Int64(piece.count)
        }
        note(MediaError(.invalidData, "\(problem.message); no Cluster follows, the rest of the file (from offset \(from - 1)) is skipped",
                        path: path, offset: problem.offset, context: problem.context))
        offset = end == .max ? at : end
        return false
    }

    /// Reads `count` bytes of element data at `at`, checked against the limit and the file's
    /// end; nil (after recording the cut) when the file ends inside.
    private func body(_ h: EBMLHeader, context: String) throws -> [UInt8]? {
        guard let size = h.size else {
            throw error(.invalidData, "element \(MKVID.name(h.id)) has an unknown size inside a Cluster", at: h.offset, context)
        }
        // The end of the file first (a cut), then the limit: nothing is allocated before both pass.
        let wanted = min(size, MatroskaLimits.maxBlockSize + 1)
        let available = try source.available(from: h.dataStart, upTo: wanted)
        guard available == wanted else {
            cut.cut(error(.truncated, "element \(MKVID.name(h.id)) declares \(size) bytes, the file ends after \(available)", at: h.offset, context))
            return nil
        }
        guard size <= MatroskaLimits.maxBlockSize else {
            throw error(.limit, "element \(MKVID.name(h.id)) declares \(size) bytes, above the limit of \(MatroskaLimits.maxBlockSize)", at: h.offset, context)
        }
        return try source.read(at: h.dataStart, count: Int(size))
    }

    private func clusterChild(_ h: EBMLHeader) throws {
        let context = "Segment/Cluster/\(MKVID.name(h.id))"
        switch h.id {
        case MKVID.timecode:
            guard let b = try body(h, context: context) else { return }
            guard b.count <= 8 else { throw error(.invalidData, "the Cluster Timestamp is \(b.count) bytes, at most 8", at: h.offset, context) }
            clusterTime = Int64(bitPattern: b.reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
            offset = h.end
        case MKVID.simpleBlock:
            if try skipUnwanted(h) { return }
            guard let b = try body(h, context: context) else { return }
            offset = h.end
            try block(b, position: h.dataStart, duration: nil, key: nil, discardPadding: 0, context: context)
        case MKVID.blockGroup:
            if try skipUnwanted(h, group: true) { return }
            guard let b = try body(h, context: context) else { return }
            offset = h.end
            var w = EBMLWalker(bytes: b, base: h.dataStart, range: 0..<b.count, path: context, file: path)
            var blockElement: EBMLElement?
            var duration: UInt64?
            var references = 0
            var padding: Int64 = 0
            while let e = try w.next() {
                switch e.id {
                case MKVID.block: blockElement = e
                case MKVID.blockDuration: duration = try w.uint(e)
                case MKVID.referenceBlock: references += 1
                case MKVID.discardPadding: padding = try w.int(e)
                default: break   // BlockAdditions, ReferencePriority, CodecState ...: ignored
                }
            }
            guard let e = blockElement else {
                note(error(.invalidData, "a BlockGroup has no Block; skipped", at: h.offset, context))
                return
            }
            try block(Array(b[e.data]), position: h.dataStart + Int64(e.data.lowerBound), duration: duration, key: references == 0, discardPadding: padding,
                      context: context + "/Block")
        default:
            // Position, PrevSize, Void, CRC-32, EncryptedBlock ...: skipped.
            guard h.size != nil else {
                throw error(.invalidData, "element \(MKVID.name(h.id)) has an unknown size inside a Cluster", at: h.offset, context)
            }
            offset = h.end
        }
    }

    /// Skips a block of a track not wanted (its data is never read); true when skipped.
    private func skipUnwanted(_ h: EBMLHeader, group: Bool = false) throws -> Bool {
        guard let filter, let size = h.size else { return false }
        var at = h.dataStart
        if group {
            // The Block is normally the group's first child.
            guard case .header(let inner) = try source.ebmlHeader(at: at), inner.id == MKVID.block else { return false }
            at = inner.dataStart
        }
        let head = try source.readUpTo(at: at, count: 8)
        let number: UInt64? = head.withUnsafeBytes { raw in EBMLVarInt.size(raw, at: 0).map(\.value) }
        guard let number, let t = trackIndex[number], !filter.contains(t) else { return false }
        if let known = source.knownSize, h.dataStart + size > known { return false }
        offset = h.end
        return true
    }

    private func note(_ e: MediaError) {
        if warnings.count < 64 { warnings.append(e) }
    }

    /// Turns one Block (SimpleBlock or the Block of a BlockGroup) into its packets.
    private func block(_ b: [UInt8], position: Int64, duration: UInt64?, key: Bool?, discardPadding: Int64, context: String) throws {
        let parsed: (number: UInt64, headerLength: Int)? = b.withUnsafeBytes { raw in
            guard let n = EBMLVarInt.size(raw, at: 0), !n.unknown, n.length + 3 <= raw.count else { return nil }
            return (n.value, n.length)
        }
        guard let parsed else {
            note(error(.invalidData, "the block header (track number, timestamp, flags) does not fit its \(b.count) bytes; skipped", at: position, context))
            return
        }
        guard let t = trackIndex[parsed.number] else {
            note(error(.invalidData, "a block refers to track number \(parsed.number), which no TrackEntry declares; skipped", at: position, context))
            return
        }
        if let filter, !filter.contains(t) { return }
        let cfg = configs[t]
        let h = parsed.headerLength
        let blockTime = Int64(Int16(bitPattern: UInt16(b[h]) << 8 | UInt16(b[h + 1])))
        let flags = b[h + 2]
        let isKey = key ?? (flags & 0x80 != 0)
        let lacing = MatroskaLacing.Kind(rawValue: Int(flags >> 1) & 3) ?? .none
        let frames: Result<(sizes: [Int], headerLength: Int), MatroskaLacing.LacingProblem> = b.withUnsafeBytes { raw in
            MatroskaLacing.frameSizes(UnsafeRawBufferPointer(rebasing: raw[(h + 3)...]), kind: lacing)
        }
        let laced: (sizes: [Int], headerLength: Int)
        switch frames {
        case .success(let l): laced = l
        case .failure(let why):
            note(error(.invalidData, "\(why.reason); the block was skipped", at: position, context))
            return
        }
        var timecode = Packet.noTimestamp
        if let ct = clusterTime, blockTime >= 0 || ct >= -blockTime {
            timecode = cfg.trackTicks(clusterTime: ct) + blockTime - cfg.codecDelayTicks
        }
        let laces = UInt64(laced.sizes.count)
        var blockDuration = duration ?? 0
        if blockDuration == 0 {
            blockDuration = cfg.defaultDurationTicks(laces: laces, timecodeScale: timecodeScale)
        }
        blockDuration = min(blockDuration, UInt64(Int64.max))
        let timeBase = cfg.track.timeBase
        var at = h + 3 + laced.headerLength
        var out: [Packet] = []
        out.reserveCapacity(laced.sizes.count)
        for (n, size) in laced.sizes.enumerated() {
            let (lo, _) = blockDuration.multipliedReportingOverflow(by: UInt64(n))
            let (hi, _) = blockDuration.multipliedReportingOverflow(by: UInt64(n + 1))
            let laceDuration = Int64(hi / laces) - Int64(lo / laces)
            var data: [UInt8]
            switch cfg.info.frameCompression {
            case .none: data = Array(b[at..<(at + size)])
            case .headerStripping(let header): data = header + b[at..<(at + size)]
            case .zlib:
                switch Inflate.zlib(b[at..<(at + size)], limit: MatroskaCompression.inflateLimit) {
                case .success(let bytes): data = bytes
                case .failure(let f):
                    // The frame is dropped, as FFmpeg drops it; the block's other frames (laces) stay.
                    note(error(.invalidData, "track \(cfg.info.number): a zlib-compressed frame (\(size) bytes at offset \(position + Int64(at))) does not inflate: \(f.reason) (byte \(f.offset) of the frame); the frame was skipped",
                               at: position, context))
                    at += size
                    if timecode != Packet.noTimestamp { timecode = laceDuration != 0 ? timecode + laceDuration : Packet.noTimestamp }
                    continue
                }
            }
            at += size
            var packetKey = n == 0 ? isKey : false
            if cfg.alwaysKey { packetKey = true }
            switch cfg.keyFromBitstream {
            case .none: break
            case .vp8: packetKey = !data.isEmpty && data[0] & 1 == 0
            case .vp9: packetKey = VP9Header.isKeyframe(data)
            case .av1: packetKey = AV1.isKeyframe(data, state: &av1[t])
            }
            var packetDuration = laceDuration
            let rate = cfg.track.parameters.sampleRate
            switch cfg.durations {
            case .container: break
            case .opus:
                packetDuration = Self.samplesToTicks(OpusHead.packetDuration(data[...]) ?? 0, rate: 48000, timeBase)
            case .vorbis:
                let d = data.first.flatMap { vorbis[t]?.duration(firstByte: $0) } ?? 0
                packetDuration = Self.samplesToTicks(d, rate: rate, timeBase)
            case .flac:
                packetDuration = Self.samplesToTicks(FlacInfo.frameDuration(data[...]) ?? 0, rate: rate, timeBase)
            case .ac3:
                packetDuration = Self.samplesToTicks(MatroskaTrackConfig.ac3FrameSamples(data[...]) ?? 0, rate: rate, timeBase)
            case .mpegAudio:
                let h = MPEGAudioHeader(data)
                packetDuration = Self.samplesToTicks(h?.samplesPerFrame ?? 0, rate: h?.sampleRate ?? rate, timeBase)
            case .pcm(let bytesPerFrame):
                packetDuration = Self.samplesToTicks(data.count / bytesPerFrame, rate: rate, timeBase)
            case .wav:
                if packetDuration == 0 {
                    let samples = cfg.durations.wavSamples(bytes: data.count, channels: max(1, cfg.track.parameters.channels), sampleRate: rate) ?? 0
                    packetDuration = Self.samplesToTicks(Int(clamping: samples), rate: rate, timeBase)
                }
            }
            var pts = timecode
            if pts == Packet.noTimestamp, let end = lastEnd[t] { pts = end }
            var p = Packet(trackIndex: t, pts: pts, dts: dts(track: t, pts: pts), duration: packetDuration, isKeyframe: packetKey,
                           position: position, data: data, timeBase: timeBase)
            if cfg.track.parameters.codec == "webvtt", cfg.track.parameters.codecTag.hasPrefix("D_WEBVTT"),
               let cue = WebVTTCue.parseWebMBlock(data) {
                // WebM's form: the cue's identifier and settings lines before its text.
                p.data = cue.text
                if !cue.identifier.isEmpty { p.cueIdentifier = cue.identifier }
                if !cue.settings.isEmpty { p.cueSettings = cue.settings }
            }
            if !started[t] {
                started[t] = true
                if cfg.track.trimsOnPackets { p.trimStart = cfg.track.encoderDelay }
            }
            if discardPadding > 0 && n == laced.sizes.count - 1 && rate > 0 {
                p.trimEnd = Int(Rational.rescale(discardPadding, from: Rational(1, 1_000_000_000), to: Rational(1, Int64(rate))))
            }
            lastEnd[t] = pts == Packet.noTimestamp || packetDuration == 0 ? nil : pts + packetDuration
            out.append(p)
            if timecode != Packet.noTimestamp { timecode = laceDuration != 0 ? timecode + laceDuration : Packet.noTimestamp }
        }
        queue = out
        queueHead = 0
    }

    /// Samples at `rate` in the track's time base, rounded down (FFmpeg's parsers' durations).
    static func samplesToTicks(_ samples: Int, rate: Int, _ timeBase: Rational) -> Int64 {
        guard rate > 0, samples > 0 else { return 0 }
        return Rational.rescale(Int64(samples), multiply: timeBase.denominator, divide: Int64(rate) * timeBase.numerator, rounding: .down)
    }
}
