/// Reads Matroska and WebM files (RFC 8794 EBML, RFC 9559 Matroska): VP8, VP9, AV1, H.264,
/// HEVC, Opus, Vorbis, AAC, FLAC and the other codecs of FFmpeg's Matroska mapping.
///
/// The header elements before the first Cluster (Info, Tracks, Tags, Chapters, Attachments,
/// SeekHead, Cues) are read into memory, each bounded in size; Clusters are read one element
/// at a time, so memory stays flat with the file's length. Clusters and the Segment may have
/// an unknown size (live WebM): a source that cannot seek (a pipe) is read front to back.
/// Elements after the Clusters (Tracks of a writer that finishes the header last, Cues, Tags,
/// Chapters, Attachments) are read where the SeekHead places them, when the source can seek;
/// Tracks after the Clusters from a pipe are an `.unsupported` error saying the file needs seeking.
///
/// Packets equal `ffprobe -show_packets`: timestamps are the Cluster timestamp plus the
/// block's, in the track's time base (TimecodeScale / 10^9 s), less the track's CodecDelay;
/// the position is the offset of the SimpleBlock (or of the Block inside a BlockGroup); the
/// duration is BlockDuration or DefaultDuration, split evenly over a block's laced frames,
/// and for Opus, Vorbis and FLAC the frame's own duration (as FFmpeg's parsers give it); the
/// key-frame flag is the SimpleBlock's flag or, in a BlockGroup, the absence of a
/// ReferenceBlock, and for VP8, VP9 and AV1 the frame header's (FFmpeg's parsers).
///
/// Gapless Opus: the OpusHead pre-skip is the first packet's ``Packet/trimStart`` and a
/// block's DiscardPadding its ``Packet/trimEnd`` (``Track/trimsOnPackets``), as the Ogg path.
/// ContentEncoding header stripping is undone; compressed or encrypted tracks are listed with
/// an ``Track/unsupportedReason`` and their packets returned as stored.
public final class MatroskaDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The tracks, in TrackEntry order.
    public private(set) var tracks: [Track]
    /// Matroska facts of each track (name, flags, codec ID, display size ...), in track order.
    public let trackInfo: [MatroskaTrackInfo]
    /// The Segment duration (Info/Duration) in seconds, if stated.
    public let duration: Double?
    /// The path the demuxer was opened on.
    public let path: String
    /// The EBML DocType: "matroska" or "webm".
    public let docType: String
    /// The Segment title (Info/Title), empty when none.
    public let title: String
    /// The application that wrote the file (Info/WritingApp) and the library that muxed it
    /// (Info/MuxingApp: FFmpeg's "encoder" tag), empty when not stated.
    public let writingApp: String, muxingApp: String
    /// TimecodeScale: nanoseconds per Cluster / block timestamp tick.
    public let timecodeScale: UInt64
    /// Tags as (target track index or nil for the whole file, name, value), in file order.
    public private(set) var tags: [(track: Int?, name: String, value: String)] = []
    /// Chapters of every edition (time base 1/1e9 s), those FFmpeg keeps: with a ChapterUID
    /// and a start after the previous one's; an end not stated is the next start or the duration.
    public private(set) var chapters: [Chapter] = []
    /// Attached files (fonts, cover art), with their bytes.
    public private(set) var attachments: [Attachment] = []
    /// Segment-level tags: Info's title, muxing application and date, then the Tags without a
    /// track, chapter or attachment target (named "TARGETTYPE/NAME" when the target has a type).
    public private(set) var metadata = Metadata()
    private var trackMetadata: [Metadata] = []

    private let source: ByteSource
    private let configs: [MatroskaTrackConfig]
    private let segmentStart: Int64
    private let segmentEnd: Int64
    private let firstCluster: Int64
    private var cuesOffset: Int64?
    private var cues: [(time: Int64, track: UInt64, cluster: Int64)]?
    private var main: MatroskaPacketReader
    private var perTrack: [MatroskaPacketReader?]
    private var selected: Set<Int>?
    /// After a seek: packets of each track `read()` drops before that track's key frame.
    private var skipBefore: [Int]
    private var mainIndex = 0

    /// Reads the EBML header and the Segment's header elements up to the first Cluster.
    /// - Throws: `.invalidData` naming the element path and offset for a malformed header,
    ///   `.unsupported` for a DocType that is not Matroska or WebM, `.limit` for a header
    ///   element above 64 MiB, `.endOfFile` when the file ends before the first Cluster,
    ///   `.unsupported` when the Tracks come after the Clusters and the source cannot seek.
    public init(source: ByteSource) throws {
        let path = source.name
        self.path = path
        self.source = source
        // EBML header
        // (after any ID3v2 tags in front: FFmpeg skips them before every format's header)
        let start = try ID3.leadingV2TagsEnd(source)
        guard case .header(let ebml) = try source.ebmlHeader(at: start), ebml.id == MKVID.ebml, ebml.size != nil else {
            throw MediaError(.invalidData, "the file does not start with an EBML header (ID 0x1A45DFA3 with a known size)", path: path, offset: start, context: "EBML")
        }
        let head = try Self.readBody(source, ebml, limit: 4096, context: "EBML")
        var w = EBMLWalker(bytes: head, base: ebml.dataStart, range: 0..<head.count, path: "EBML", file: path)
        var docType = "matroska"
        while let e = try w.next() {
            if e.id == MKVID.docType { docType = w.string(e) }
        }
        guard docType == "matroska" || docType == "webm" else {
            throw MediaError(.unsupported, "the EBML DocType is \"\(docType)\", not \"matroska\" or \"webm\"", path: path, offset: ebml.offset, context: "EBML/DocType")
        }
        self.docType = docType
        // Segment (after any Void elements)
        var at = ebml.end
        var segment: EBMLHeader?
        while segment == nil {
            switch try source.ebmlHeader(at: at) {
            case .header(let h) where h.id == MKVID.segment: segment = h
            case .header(let h) where h.id == MKVID.void && h.size != nil: at = h.end
            case .end, .cut:
                throw MediaError(.endOfFile, "the file ends before its Segment", path: path, offset: at, context: "Segment")
            default:
                throw MediaError(.invalidData, "expected a Segment (ID 0x18538067) after the EBML header", path: path, offset: at, context: "Segment")
            }
        }
        let seg = segment!
        segmentStart = seg.dataStart
        segmentEnd = seg.end
        // Header elements up to the first Cluster.
        var timecodeScale: UInt64 = 1_000_000
        var durationTicks: Double?
        var title = "", writingApp = "", muxingApp = ""
        var dateUTC: Int64?
        var trackEntries: [(EBMLWalker, EBMLElement)] = []
        var seekTargets: [UInt32: Int64] = [:]
        var tagBodies: [(EBMLHeader, [UInt8])] = []
        var chapterBody: (EBMLHeader, [UInt8])?
        var attachmentBody: (EBMLHeader, [UInt8])?
        var cuesBody: (EBMLHeader, [UInt8])?
        func readTracks(_ h: EBMLHeader, _ b: [UInt8]) throws {
            let name = "Segment/Tracks"
            var t = EBMLWalker(bytes: b, base: h.dataStart, range: 0..<b.count, path: name, file: path)
            while let e = try t.next() {
                guard e.id == MKVID.trackEntry else { continue }
                guard trackEntries.count < MatroskaLimits.maxTracks else {
                    throw t.error("more than \(MatroskaLimits.maxTracks) tracks", at: e.offset, .limit)
                }
                trackEntries.append((t.children(of: e, name: "TrackEntry[\(trackEntries.count)]"), e))
            }
        }
        at = seg.dataStart
        var firstCluster: Int64?
        var previous: EBMLHeader?
        var seen = 0
        walk: while at < seg.end {
            seen += 1
            if seen > MatroskaLimits.maxHeaderElements {
                throw MediaError(.limit, "more than \(MatroskaLimits.maxHeaderElements) elements before the first Cluster", path: path, offset: at, context: "Segment")
            }
            let h: EBMLHeader
            switch try source.ebmlHeader(at: at) {
            case .end:
                let end = source.knownSize ?? at
                if let last = previous, trackEntries.isEmpty || at > end {
                    throw MediaError(.endOfFile, "the file ends at offset \(end), inside \(MKVID.name(last.id)) at offset \(last.offset) (it declares \(last.size ?? 0) bytes), before \(trackEntries.isEmpty ? "the Segment's Tracks" : "the first Cluster")",
                                     path: path, offset: min(at, end), context: "Segment/" + MKVID.name(last.id))
                }
                break walk
            case .cut(let n):
                throw MediaError(.endOfFile, "the file ends \(n) bytes into an element header", path: path, offset: at, context: "Segment")
            case .malformed:
                throw MediaError(.invalidData, "malformed element header (an ID of 1 to 4 bytes and a size of 1 to 8 were expected)", path: path, offset: at, context: "Segment")
            case .header(let x): h = x
            }
            previous = h
            let name = "Segment/" + MKVID.name(h.id)
            if h.id == MKVID.cluster { firstCluster = h.offset; break }
            guard let size = h.size else {
                throw MediaError(.invalidData, "element \(MKVID.name(h.id)) has an unknown size; only a Segment and a Cluster may", path: path, offset: h.offset, context: name)
            }
            if seg.size != nil && h.end > seg.end {
                throw MediaError(.invalidData, "element \(MKVID.name(h.id)) declares \(size) bytes, past the end of the Segment (offset \(seg.end))", path: path, offset: h.offset, context: name)
            }
            switch h.id {
            case MKVID.info:
                let b = try Self.readBody(source, h, limit: MatroskaLimits.maxHeaderElement, context: name)
                var i = EBMLWalker(bytes: b, base: h.dataStart, range: 0..<b.count, path: name, file: path)
                while let e = try i.next() {
                    switch e.id {
                    case MKVID.timecodeScale:
                        let s = try i.uint(e)
                        guard s > 0 && s <= 1_000_000_000_000 else { throw i.error("TimecodeScale \(s) is out of range", at: e.offset) }
                        timecodeScale = s
                    case MKVID.duration: durationTicks = try i.float(e)
                    case MKVID.title: title = i.string(e)
                    case MKVID.writingApp: writingApp = i.string(e)
                    case MKVID.muxingApp: muxingApp = i.string(e)
                    case MKVMetaID.dateUTC: dateUTC = try i.int(e)
                    default: break
                    }
                }
            case MKVID.tracks:
                try readTracks(h, Self.readBody(source, h, limit: MatroskaLimits.maxHeaderElement, context: name))
            case MKVID.seekHead:
                let b = try Self.readBody(source, h, limit: MatroskaLimits.maxHeaderElement, context: name)
                var s = EBMLWalker(bytes: b, base: h.dataStart, range: 0..<b.count, path: name, file: path)
                while let e = try s.next() {
                    guard e.id == MKVID.seek else { continue }
                    var k = s.children(of: e)
                    var id: UInt32?, pos: UInt64?
                    while let c = try k.next() {
                        if c.id == MKVID.seekID { id = UInt32(truncatingIfNeeded: try k.uint(c)) }
                        if c.id == MKVID.seekPosition { pos = try k.uint(c) }
                    }
                    if let id, let pos, pos < UInt64(Int64.max / 2), seekTargets[id] == nil { seekTargets[id] = seg.dataStart + Int64(pos) }
                }
            case MKVID.tags:
                tagBodies.append((h, try Self.readBody(source, h, limit: MatroskaLimits.maxHeaderElement, context: name)))
            case MKVID.chapters:
                chapterBody = (h, try Self.readBody(source, h, limit: MatroskaLimits.maxHeaderElement, context: name))
            case MKVID.attachments where size <= MatroskaLimits.maxHeaderElement:
                attachmentBody = (h, try Self.readBody(source, h, limit: MatroskaLimits.maxHeaderElement, context: name))
            case MKVID.cues:
                cuesBody = (h, try Self.readBody(source, h, limit: MatroskaLimits.maxHeaderElement, context: name))
            default:
                break
            }
            at = h.end
        }
        // Writers that finish the header last (Tracks after the Clusters) point to it from the
        // SeekHead, as FFmpeg's reader follows it: on a source that can seek, read it there.
        if trackEntries.isEmpty, let t = seekTargets[MKVID.tracks] {
            guard source.isSeekable else {
                throw MediaError(.unsupported, "the Segment's Tracks come after its Clusters (the SeekHead places them at offset \(t)); reading this file needs a seekable source (a file or memory), not a stream read once",
                                 path: path, offset: t, context: "Segment/Tracks")
            }
            guard t >= seg.dataStart, t < seg.end, let (h, b) = try Self.bodyAt(source, t, id: MKVID.tracks) else {
                throw MediaError(.invalidData, "the SeekHead places Tracks at offset \(t), where there is no Tracks element", path: path, offset: t, context: "Segment/SeekHead")
            }
            try readTracks(h, b)
        }
        guard !trackEntries.isEmpty else {
            throw MediaError(.invalidData, "the Segment has no Tracks element with a TrackEntry before its first Cluster, and its SeekHead points to none", path: path, offset: seg.dataStart, context: "Segment/Tracks")
        }
        self.timecodeScale = timecodeScale
        self.title = title
        self.writingApp = writingApp
        self.muxingApp = muxingApp
        let seconds = durationTicks.map { $0 * Double(timecodeScale) / 1e9 }
        self.duration = seconds.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        var configs: [MatroskaTrackConfig] = []
        for (walker, _) in trackEntries {
            configs.append(try MatroskaTrackConfig.parse(walker, index: configs.count, timecodeScale: timecodeScale, segmentDuration: duration))
        }
        self.configs = configs
        self.tracks = configs.map(\.track)
        self.trackInfo = configs.map(\.info)
        self.firstCluster = firstCluster ?? at
        self.main = MatroskaPacketReader(source: source, configs: configs, segmentEnd: segmentEnd, timecodeScale: timecodeScale, start: self.firstCluster)
        self.perTrack = Array(repeating: nil, count: configs.count)
        self.skipBefore = Array(repeating: 0, count: configs.count)
        self.cuesOffset = seekTargets[MKVID.cues]
        if let (h, b) = cuesBody { self.cues = try? parseCues(b, base: h.dataStart) }
        // Elements after the Clusters that the SeekHead points to: read when the source can seek.
        if source.isSeekable {
            if tagBodies.isEmpty, let t = seekTargets[MKVID.tags], let b = try? Self.bodyAt(source, t, id: MKVID.tags) {
                tagBodies.append(b)
            }
            if chapterBody == nil, let c = seekTargets[MKVID.chapters] { chapterBody = try? Self.bodyAt(source, c, id: MKVID.chapters) }
            if attachmentBody == nil, let a = seekTargets[MKVID.attachments] { attachmentBody = try? Self.bodyAt(source, a, id: MKVID.attachments) }
        }
        for (h, b) in tagBodies { try? parseTags(b, base: h.dataStart) }
        if let (h, b) = chapterBody { try? parseChapters(b, base: h.dataStart) }
        if let (h, b) = attachmentBody { try? parseAttachments(b, base: h.dataStart) }
        // The model: Info's facts as FFmpeg names them, then the Tags by target.
        if !title.isEmpty { metadata.append(key: "title", nativeKey: "Title", ffmpegKey: "title", value: title) }
        if !muxingApp.isEmpty { metadata.append(key: "encoder", nativeKey: "MuxingApp", ffmpegKey: "encoder", value: muxingApp) }
        if let dateUTC { metadata.append(key: "creation_time", nativeKey: "DateUTC", ffmpegKey: "creation_time", value: MatroskaMetadata.creationTime(dateUTC)) }
        trackMetadata = trackInfo.indices.map { i in
            var m = Metadata()
            if !trackInfo[i].name.isEmpty { m.appendTrackField(key: "title", nativeKey: "Name", ffmpegKey: "title", value: trackInfo[i].name) }
            let language = trackInfo[i].iso639Language
            if language != "und" { m.appendTrackField(key: "language", nativeKey: "Language", ffmpegKey: "language", value: language) }
            return m
        }
        for (h, b) in tagBodies { try? parseTagsModel(b, base: h.dataStart) }
        for i in tracks.indices { tracks[i].metadata = trackMetadata[i] }
        Chapter.fillEnds(&chapters, duration: duration)
    }

    /// Damage `read()` stepped over (blocks skipped), oldest first, at most 64.
    public var warnings: [MediaError] { main.warnings }

    /// The next packet in file order, or nil at the end.
    /// - Throws: `.truncated` once when the file ends inside an element (a block cut short is
    ///   not returned, as FFmpeg drops it), `.invalidData` naming the element path and offset.
    public func read() throws -> Packet? {
        while let p = try main.next() {
            let index = mainIndex
            mainIndex += 1
            if index < skipBefore[p.trackIndex] { continue }
            return p
        }
        return nil
    }

    /// The next packet of `track`, independent of `read()` (needs a seekable source).
    public func read(track: Int) throws -> Packet? {
        guard track >= 0 && track < tracks.count else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (the file has \(tracks.count))", path: path)
        }
        if perTrack[track] == nil {
            let r = MatroskaPacketReader(source: source, configs: configs, segmentEnd: segmentEnd, timecodeScale: timecodeScale, start: firstCluster)
            r.filter = [track]
            perTrack[track] = r
        }
        return try perTrack[track]!.next()
    }

    /// Limits `read()` to these tracks (nil: all); the other tracks' blocks are skipped unread.
    public func select(tracks: Set<Int>?) {
        selected = tracks
        main.filter = tracks
    }

    /// Moves `read()` and every `read(track:)` to the key frame at or before `seconds` of each
    /// track: from the last Cue at or before it (the first Cluster when there are no Cues),
    /// the Clusters are scanned up to `seconds`.
    public func seek(to seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.invalidArgument, "cannot seek to \(seconds) s", path: path)
        }
        guard source.isSeekable else {
            throw MediaError(.unsupported, "cannot seek: the source is a stream read once", path: path)
        }
        let target = Rational.ticks(seconds: seconds, perSecond: 1e9 / Double(timecodeScale))
        if cues == nil, let c = cuesOffset, let (h, b) = try? Self.bodyAt(source, c, id: MKVID.cues) {
            cues = try? parseCues(b, base: h.dataStart)
        }
        var start = firstCluster
        if let cues {
            // The cue track: the first video track's number, else any track.
            let video = configs.first { $0.track.mediaType == .video }?.info.number
            let wanted = cues.filter { video == nil || $0.track == video }
            if let best = wanted.last(where: { $0.time <= target }) {
                start = best.cluster
            }
        }
        // Scan from `start`: each track's last key frame at or before the target, in its own ticks
        // (TrackTimestampScale).
        let targets = configs.map { c in
            c.info.timestampScale == 1 ? target : Rational.ticks(seconds: seconds, perSecond: 1 / c.track.timeBase.doubleValue)
        }
        let scanner = MatroskaPacketReader(source: source, configs: configs, segmentEnd: segmentEnd, timecodeScale: timecodeScale, start: start)
        scanner.restart(at: start, fresh: false)
        // chosen[t]: file-order index (from `start`) of track t's packet to start at;
        // before[t]: how many of track t's packets come before it.
        var chosen = Array(repeating: Int.max, count: tracks.count)
        var before = Array(repeating: 0, count: tracks.count)
        var counts = Array(repeating: 0, count: tracks.count)
        var passed = Set<Int>()
        var index = 0
        while passed.count < tracks.count {
            let p: Packet?
            do { p = try scanner.next() } catch let e as MediaError where e.kind == .truncated { p = nil }
            guard let p else { break }
            let t = p.trackIndex
            defer { index += 1; counts[t] += 1 }
            if chosen[t] == .max { (chosen[t], before[t]) = (index, counts[t]) }
            guard p.pts != Packet.noTimestamp else { continue }
            if p.pts <= targets[t] {
                if p.isKeyframe { (chosen[t], before[t]) = (index, counts[t]) }
            } else {
                passed.insert(t)
            }
        }
        main.restart(at: start, fresh: false)
        mainIndex = 0
        skipBefore = chosen
        for t in 0..<tracks.count {
            let r = MatroskaPacketReader(source: source, configs: configs, segmentEnd: segmentEnd, timecodeScale: timecodeScale, start: start)
            r.restart(at: start, fresh: false)
            r.filter = [t]
            for _ in 0..<before[t] { _ = try? r.next() }
            perTrack[t] = r
        }
    }

    // MARK: - Header elements

    /// Reads the data of `h`, at most `limit` bytes, all of which the source must have.
    private static func readBody(_ source: ByteSource, _ h: EBMLHeader, limit: Int64, context: String) throws -> [UInt8] {
        guard let size = h.size else {
            throw MediaError(.invalidData, "element \(MKVID.name(h.id)) has an unknown size", path: source.name, offset: h.offset, context: context)
        }
        guard size <= limit else {
            throw MediaError(.limit, "element \(MKVID.name(h.id)) declares \(size) bytes, above the limit of \(limit)", path: source.name, offset: h.offset, context: context)
        }
        let available = try source.available(from: h.dataStart, upTo: size)
        guard available == size else {
            throw MediaError(.endOfFile, "element \(MKVID.name(h.id)) declares \(size) bytes, the file ends after \(available)", path: source.name, offset: h.offset, context: context)
        }
        return try source.read(at: h.dataStart, count: Int(size))
    }

    /// The element `id` at `offset` (a SeekHead target) and its data.
    private static func bodyAt(_ source: ByteSource, _ offset: Int64, id: UInt32) throws -> (EBMLHeader, [UInt8])? {
        guard case .header(let h) = try source.ebmlHeader(at: offset), h.id == id else { return nil }
        return (h, try readBody(source, h, limit: MatroskaLimits.maxHeaderElement, context: "Segment/" + MKVID.name(id)))
    }

    private func parseCues(_ b: [UInt8], base: Int64) throws -> [(time: Int64, track: UInt64, cluster: Int64)] {
        var w = EBMLWalker(bytes: b, base: base, range: 0..<b.count, path: "Segment/Cues", file: path)
        var out: [(time: Int64, track: UInt64, cluster: Int64)] = []
        while let e = try w.next() {
            guard e.id == MKVID.cuePoint else { continue }
            var p = w.children(of: e)
            var time: UInt64 = 0
            var positions: [(UInt64, Int64)] = []
            while let c = try p.next() {
                if c.id == MKVID.cueTime { time = try p.uint(c) }
                if c.id == MKVID.cueTrackPositions {
                    var k = p.children(of: c)
                    var track: UInt64 = 0, cluster: UInt64?
                    while let x = try k.next() {
                        if x.id == MKVID.cueTrack { track = try k.uint(x) }
                        if x.id == MKVID.cueClusterPosition { cluster = try k.uint(x) }
                    }
                    if let cluster, cluster < UInt64(Int64.max / 2) { positions.append((track, segmentStart + Int64(cluster))) }
                }
            }
            guard time < UInt64(Int64.max) else { continue }
            for (track, cluster) in positions where cluster >= firstCluster && cluster < segmentEnd {
                out.append((Int64(time), track, cluster))
            }
        }
        out.sort { $0.time < $1.time }
        return out
    }

    private func parseTagsModel(_ b: [UInt8], base: Int64) throws {
        var w = EBMLWalker(bytes: b, base: base, range: 0..<b.count, path: "Segment/Tags", file: path)
        for tag in try MatroskaMetadata.tags(&w, limit: 4096) {
            if let uid = tag.trackUID, uid != 0 {
                if let i = trackInfo.firstIndex(where: { $0.uid == uid }) { for e in tag.entries { trackMetadata[i].append(e) } }
            } else if let uid = tag.chapterUID, uid != 0 {
                if let i = chapters.firstIndex(where: { $0.id == Int64(bitPattern: uid) }) { for e in tag.entries { chapters[i].metadata.append(e) } }
            } else if tag.attachmentUID.map({ $0 != 0 }) ?? false {
                continue
            } else {
                for var e in tag.entries {
                    if !tag.targetType.isEmpty { e.ffmpegKey = tag.targetType + "/" + e.ffmpegKey }
                    metadata.append(e)
                }
            }
        }
    }

    private func parseTags(_ b: [UInt8], base: Int64) throws {
        var w = EBMLWalker(bytes: b, base: base, range: 0..<b.count, path: "Segment/Tags", file: path)
        while let e = try w.next() {
            guard e.id == MKVID.tag else { continue }
            var t = w.children(of: e)
            var target: Int?
            var simple: [(String, String)] = []
            while let c = try t.next() {
                if c.id == MKVID.targets {
                    var k = t.children(of: c)
                    while let x = try k.next() {
                        guard x.id == MKVID.tagTrackUID else { continue }
                        let uid = try k.uint(x)
                        target = trackInfo.firstIndex { $0.uid == uid }
                    }
                } else if c.id == MKVID.simpleTag {
                    var s = t.children(of: c)
                    var name = "", value = ""
                    while let x = try s.next() {
                        if x.id == MKVID.tagName { name = s.string(x) }
                        if x.id == MKVID.tagString { value = s.string(x) }
                    }
                    if !name.isEmpty { simple.append((name, value)) }
                }
            }
            for (name, value) in simple where tags.count < 4096 { tags.append((target, name, value)) }
        }
    }

    private func parseChapters(_ b: [UInt8], base: Int64) throws {
        var w = EBMLWalker(bytes: b, base: base, range: 0..<b.count, path: "Segment/Chapters", file: path)
        chapters = try MatroskaMetadata.chapters(&w, limit: 4096)
    }

    private func parseAttachments(_ b: [UInt8], base: Int64) throws {
        var w = EBMLWalker(bytes: b, base: base, range: 0..<b.count, path: "Segment/Attachments", file: path)
        attachments = try MatroskaMetadata.attachments(&w, limit: 4096).map(\.attachment)
    }
}
