import Foundation

/// Reads MP4, MOV and M4A files (ISO BMFF and QuickTime).
///
/// The `moov` box may be at the start or the end of the file; only the boxes
/// that describe the movie are read into memory, sample data is read from disk
/// packet by packet. A fragmented file from a pipe is read front to back, one fragment
/// in memory at a time. Timestamps are those of the sample tables (no edit list
/// applied); each ``Track`` carries its edit list for presentation.
///
/// ```swift
/// let demuxer = try MP4Demuxer(path: "movie.mp4")
/// while let packet = try demuxer.read() { ... }
/// ```
public final class MP4Demuxer: SourceDemuxer, SampleTableDemuxer, @unchecked Sendable {
    /// The tracks, in the order of their `trak` boxes (= ffprobe's stream indexes).
    public let tracks: [Track]
    /// Movie duration in seconds (mvhd), if stated.
    public let duration: Double?
    /// The `ftyp` major brand ("isom", "qt  ", "M4A " ...), empty if there is no ftyp.
    public let majorBrand: String
    /// The compatible brands of `ftyp`.
    public let compatibleBrands: [String]
    /// The path the demuxer was opened on.
    public let path: String
    /// Size in bytes of the `moov` box.
    public let movieBoxSize: Int64
    /// True when the file has movie fragments (`moof`).
    public let isFragmented: Bool
    /// The movie's `udta` box as stored (metadata, cover art, chapter list), empty if none.
    public let userData: [UInt8]
    /// Track references (`tref`) by track index: the reference type ("chap", "cdsc",
    /// "hint" ...) and the indexes of the referenced tracks.
    public let trackReferences: [Int: [(type: String, tracks: [Int])]]
    /// The container's tags, as FFmpeg's mov demuxer gives them (docs/metadata.md): ftyp's
    /// brands, mvhd's creation time, iTunes `ilst` items and freeform `----` atoms, QuickTime
    /// udta strings and `meta` / `keys` items, of the movie and of its tracks' udta.
    public let metadata: Metadata
    /// Nero `chpl` chapters and the chapters of a QuickTime chapter track (`tref/chap` to a
    /// text track: its samples' text are the titles), the track's replacing `chpl`'s of the
    /// same number, as FFmpeg reads them.
    public let chapters: [Chapter]
    /// The `covr` pictures of the iTunes tags (JPEG, PNG, BMP), as front covers.
    public let attachments: [Attachment]

    private let source: ByteSource
    /// The samples' bytes: read ahead in blocks while they are read in file order.
    private let samplesReader: ForwardReader
    private var samples: [[IndexedSample]]
    /// Next sample of each track for `read()`.
    private var cursors: [Int]
    /// Next sample of each track for `read(track:)`.
    private var trackCursors: [Int]
    private let timeScales: [Int64]
    private var selected: Set<Int>?
    /// Where `read()` and each `read(track:)` stand at a cut at the end of the file.
    private var readCut = TruncationState()
    private var trackCuts: [TruncationState]
    /// A movie fragment (`moof`) the file cuts short: its samples are lost, reported after the others.
    private var cutFragment: MediaError?
    /// A fragmented file read from a stream read once: its fragments are indexed one at a
    /// time as reading reaches them (``samples`` then holds the current fragment only).
    private var stream: FragmentStream?

    /// Opens and indexes the MP4 / MOV in `source`. A non-seekable source (a pipe) works for a
    /// progressive file whose `moov` comes before its media data, and for a fragmented file
    /// (`moov`, then `moof` / `mdat` pairs: CMAF, live ingest), whose fragments are then indexed
    /// one at a time as reading reaches them, only the current one kept in memory. Layouts
    /// that need to go back in the file (a `moov` after the media data) are refused with an
    /// `.unsupported` error naming the layout.
    /// - Throws: ``MediaError``: `.invalidData` naming the box path and offset for a damaged
    ///   file, `.limit` for tables above MediaKit's hard limits, the source's `.io` errors.
    public init(source: ByteSource) throws {
        let path = source.name
        self.path = path
        self.source = source
        samplesReader = ForwardReader(source: source)
        var moov: (offset: Int64, size: Int64)?
        var brand = "", compatible: [String] = []
        var ftypBody: [UInt8]?
        var offset: Int64 = 0
        var sawMoof = false
        var fragmentCut: MediaError?
        var moofs: [(offset: Int64, size: Int64)] = []
        var lastBox = ""
        /// A stream: where the scan stopped (the media data or first fragment after the moov).
        var streamResume: Int64?
        // Top level: find ftyp and the first moov, stepping over mdat without reading it.
        while offset <= source.size - 8 {
            let head = try source.readUpTo(at: offset, count: 16)
            if head.count < 8 { break }   // the end of a stream whose size was not known
            var size = Int64(be32(head, 0))
            let type = fourCCString(head[4..<8])
            var header: Int64 = 8
            if size == 1 {
                guard head.count >= 16 else {
                    throw MediaError(.invalidData, "box '\(type)' has a 64-bit size but the file ends", path: path, offset: offset, context: type)
                }
                size = Int64(bitPattern: UInt64(be32(head, 8)) << 32 | UInt64(be32(head, 12)))
                header = 16
            } else if size == 0 {
                size = source.size - offset
            }
            if size < header {
                if moov != nil { break }   // trailing junk after a complete movie
                throw MediaError(.invalidData, "box '\(type)' declares \(size) bytes, less than its \(header)-byte header", path: path, offset: offset, context: type)
            }
            let truncated = size > source.size - offset
            if !source.isSeekable && (type == "mdat" || type == "moof") {
                // A stream is read once: the samples can be read only if the movie came first;
                // what follows (media data, movie fragments) is read as reading reaches it.
                guard moov != nil else {
                    let what = type == "mdat" ? "the media data" : "a movie fragment (moof)"
                    throw MediaError(.unsupported, "the moov box comes after \(what) (at \(offset)); this layout needs a seekable source (a file or memory), not a stream read once. Remux it with `mk-remux --faststart` first",
                                     path: path, offset: offset, context: type)
                }
                if type == "moof" { sawMoof = true }
                streamResume = offset
                break
            }
            switch type {
            case "ftyp" where brand.isEmpty && !truncated:
                let body = try source.read(at: offset + header, count: Int(min(size - header, 1024)))
                ftypBody = body
                if body.count >= 4 { brand = fourCCString(body[0..<4]) }
                var i = 8
                while i + 4 <= body.count { compatible.append(fourCCString(body[i..<i + 4])); i += 4 }
            case "moov" where moov == nil:
                if truncated {
                    throw MediaError(.invalidData, "the moov box declares \(size) bytes but the file ends after \(source.size - offset)", path: path, offset: offset, context: "moov")
                }
                if size > MP4Limits.maxHeaderBox {
                    throw MediaError(.limit, "the moov box is \(size) bytes, above the limit of \(MP4Limits.maxHeaderBox)", path: path, offset: offset, context: "moov")
                }
                moov = (offset, size)
            case "moof":
                sawMoof = true
                if !truncated { moofs.append((offset, size)) } else {
                    fragmentCut = MediaError(.truncated, "the moof box declares \(size) bytes but the file ends after \(source.size - offset); the samples of this fragment are lost",
                                             path: path, offset: offset, context: "moof")
                }
            default: break
            }
            lastBox = type
            if truncated { break }
            offset += size
        }
        guard let moov else {
            let where_ = lastBox.isEmpty ? "the file has no boxes" : "the last top-level box read was '\(lastBox)'"
            throw MediaError(.invalidData, "no moov box found (\(where_)); not an MP4/MOV file, or a truncated one", path: path, offset: offset)
        }
        let moovBytes = try source.read(at: moov.offset, count: Int(moov.size))
        let headerLength = be32(moovBytes, 0) == 1 ? 16 : 8
        var reader = BoxReader(bytes: moovBytes, base: moov.offset, start: headerLength, end: moovBytes.count, path: "moov", file: path)
        // FFmpeg's "isom" files: an ftyp whose major brand is not QuickTime's (sound descriptions
        // are read with their version 1/2 fields only when stsd is version 0, unless "qt  " is compatible).
        let isom = !brand.isEmpty && brand != "qt  " && !compatible.contains("qt  ")
        let movie = try MovieBox.parse(&reader, isom: isom, quickTimeBrand: brand.isEmpty || brand == "qt  ")
        // A fragmented file from a stream: its fragments are read front to back as reading
        // reaches them, one in memory at a time.
        let streaming = !source.isSeekable && (sawMoof || movie.isFragmented)
        var tracks: [Track] = []
        var allSamples: [[IndexedSample]] = []
        var scales: [Int64] = []
        for (i, t) in movie.tracks.enumerated() {
            guard t.timeScale > 0 else {
                throw MediaError(.invalidData, "track \(t.id) has a time scale of 0 in mdhd", path: path, context: t.path + "/mdia/mdhd")
            }
            let s = try SampleIndexBuilder.build(t.tables, trackPath: t.path, file: path,
                                                 audio: t.handler == "soun" ? t.framing : nil, mediaDuration: t.mediaDuration,
                                                 fileSize: source.size)
            var track = Track(index: i, id: t.id, parameters: t.parameters, timeBase: Rational(1, t.timeScale),
                              duration: t.mediaDuration, language: t.language, rotation: Track.displayRotation(t.matrix),
                              matrix: t.matrix, sampleCount: s.count, editList: t.edits,
                              movieTimeScale: movie.timeScale, unsupportedReason: t.unsupportedReason,
                              isEncrypted: t.encrypted)
            track.isDefault = t.tkhdEnabled
            // As FFmpeg: the smaller of mdhd's duration and the sum of the sample durations.
            if let last = s.last {
                let sum = last.dts + last.duration - (s.first?.dts ?? 0)
                if track.duration == 0 || (sum > 0 && sum < track.duration) { track.duration = sum }
            }
            if track.mediaType == .video {
                track.parameters.reorderDepth = SampleIndexBuilder.reorderDepth(s)
                track.frameRate = Self.frameRate(t.tables.stts, timeScale: t.timeScale, samples: s.count, duration: track.duration)
            }
            // MP3: the frames say what the sample entry may not (FFmpeg reports the stream's values).
            if track.parameters.codec == "mp3", let first = s.first, first.offset >= 0, first.offset + 4 <= source.size,
               let head = try? source.read(at: first.offset, count: 4), let h = SampleEntryParser.mpegAudioHeader(head) {
                track.parameters.sampleRate = h.sampleRate
                track.parameters.channels = h.channels
            }
            if track.mediaType == .audio, let smpb = movie.iTunSMPB {
                // iTunSMPB counts the codec's own samples (AAC: 1024 a frame, at the core's rate);
                // HE-AAC decodes to the SBR rate, so the cuts are stated here at that rate.
                let output = Int64(track.parameters.sampleRate)
                let core = track.parameters.codec == "aac" ? Int64(AudioSpecificConfig(track.parameters.extradata)?.sampleRate ?? 0) : 0
                let (mul, div) = core > 0 && output > 0 ? (output, core) : (1, 1)
                track.encoderDelay = Int(Rational.rescale(Int64(smpb.delay), multiply: mul, divide: div))
                track.encoderPadding = Int(Rational.rescale(Int64(smpb.padding), multiply: mul, divide: div))
            }
            track.metadata = t.metadata
            tracks.append(track)
            allSamples.append(s)
            scales.append(t.timeScale)
        }
        var streamState: FragmentStream?
        if streaming {
            let indexer = FragmentIndexer(
                file: path, trex: movie.trex,
                trackIndex: Dictionary(movie.tracks.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a }),
                isAudio: tracks.map { $0.mediaType == .audio },
                nextDts: allSamples.map { s in s.last.map { $0.dts + $0.duration } ?? 0 },
                moovCounts: allSamples.map(\.count), fileSize: source.size)
            // The moov's own samples carry their shift already; the fragments' start from it.
            let shifts = allSamples.map { s in s.isEmpty ? 0 : max(0, -s[0].dts) }
            streamState = FragmentStream(indexer: indexer, next: streamResume ?? offset, shifts: shifts)
        } else if !moofs.isEmpty {
            var indexer = FragmentIndexer(
                file: path, trex: movie.trex,
                trackIndex: Dictionary(movie.tracks.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a }),
                isAudio: tracks.map { $0.mediaType == .audio },
                nextDts: allSamples.map { s in s.last.map { $0.dts + $0.duration } ?? 0 },
                moovCounts: allSamples.map(\.count), fileSize: source.size)
            for m in moofs {
                if m.size > MP4Limits.maxHeaderBox {
                    throw MediaError(.limit, "a moof box is \(m.size) bytes, above the limit of \(MP4Limits.maxHeaderBox)", path: path, offset: m.offset, context: "moof")
                }
                let bytes = try source.read(at: m.offset, count: Int(m.size))
                try indexer.index(moof: bytes, at: m.offset, into: &allSamples)
            }
            for i in tracks.indices {
                // As FFmpeg: pts = dts + shift + offset, the shift being the largest negative
                // composition offset of the track (moov samples already carry theirs).
                let moovCount = indexer.moovCounts[i]
                let moovShift = moovCount > 0 ? max(0, -allSamples[i][0].dts) : 0
                var shift = moovShift
                for j in moovCount..<allSamples[i].count { shift = max(shift, allSamples[i][j].dts - allSamples[i][j].pts) }
                if shift > 0 {
                    for j in 0..<allSamples[i].count { allSamples[i][j].pts += j < moovCount ? shift - moovShift : shift }
                }
                let s = allSamples[i]
                tracks[i].sampleCount = s.count
                if let first = s.first, let last = s.last {
                    let sum = last.dts + last.duration - first.dts
                    if tracks[i].duration == 0 || (sum > 0 && sum > tracks[i].duration) { tracks[i].duration = sum }
                }
                if tracks[i].mediaType == .video {
                    tracks[i].parameters.reorderDepth = SampleIndexBuilder.reorderDepth(s)
                }
            }
        }
        self.userData = movie.userData
        self.movieBoxSize = moov.size
        self.isFragmented = !moofs.isEmpty || streaming
        self.stream = streamState
        var refs: [Int: [(type: String, tracks: [Int])]] = [:]
        let indexByID = Dictionary(movie.tracks.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a })
        for (i, t) in movie.tracks.enumerated() where !t.references.isEmpty {
            refs[i] = t.references.map { ($0.type, $0.ids.compactMap { indexByID[$0] }) }
        }
        self.trackReferences = refs
        for r in refs.values.joined() where r.type == "chap" {
            for i in r.tracks where i >= 0 && i < tracks.count { tracks[i].isChapterTrack = true }
        }
        var tags = Metadata()
        if let f = ftypBody, f.count >= 8 {
            // mov_read_ftyp: the major brand and the compatible brands as C strings.
            tags.append(key: "major_brand", nativeKey: "ftyp.major_brand", ffmpegKey: "major_brand", value: ITunesMetadata.cString(f[0..<4]))
            tags.append(key: "minor_version", nativeKey: "ftyp.minor_version", ffmpegKey: "minor_version", value: "\(ITunesMetadata.be32(f, 4))")
            tags.append(key: "compatible_brands", nativeKey: "ftyp.compatible_brands", ffmpegKey: "compatible_brands", value: ITunesMetadata.cString(f[8...]))
        }
        for e in movie.userMetadata.metadata { tags.append(e) }
        self.metadata = tags
        self.attachments = movie.userMetadata.covers
        let duration = movie.timeScale > 0 && movie.duration > 0 ? Double(movie.duration) / Double(movie.timeScale) : nil
        self.chapters = Self.chapters(movie: movie, tracks: tracks, samples: streaming ? [] : allSamples, source: source, duration: duration)
        self.tracks = tracks
        self.samples = allSamples
        self.timeScales = scales
        self.cursors = Array(repeating: 0, count: tracks.count)
        self.trackCursors = Array(repeating: 0, count: tracks.count)
        self.trackCuts = Array(repeating: TruncationState(), count: tracks.count)
        self.cutFragment = fragmentCut
        self.duration = duration
        self.majorBrand = brand
        self.compatibleBrands = compatible
    }

    /// The most chapter-track samples read as chapters (as Matroska's chapter limit): a hostile
    /// track of millions of samples would otherwise cost a read each.
    static let maxChapters = 4096

    /// The chapters as FFmpeg 5.1's mov demuxer reads them: Nero `chpl` (in the udta), then the
    /// text samples of the tracks the last `tref/chap` names (mov_read_chapters: each sample a
    /// chapter from its time to the next sample's, the last to the track's duration, in a
    /// fragmented file the end of its last sample), a track
    /// chapter replacing the `chpl` chapter of the same number. Ends not stated are filled as
    /// FFmpeg does. A chapter track of video (timed thumbnails) gives no chapters; a source that
    /// cannot seek gives only `chpl`'s (FFmpeg reads chapter tracks only when it can seek). At
    /// most ``maxChapters`` samples are read.
    private static func chapters(movie: MovieBox, tracks: [Track], samples: [[IndexedSample]], source: ByteSource, duration: Double?) -> [Chapter] {
        var out = movie.userMetadata.chapters
        var chapterIDs: [Int] = []
        for t in movie.tracks { for r in t.references where r.type == "chap" { chapterIDs = r.ids } }
        if source.isSeekable {
            for id in chapterIDs {
                guard let i = movie.tracks.firstIndex(where: { $0.id == id }), i < samples.count, tracks[i].mediaType != .video else { continue }
                let list = samples[i]
                let shift = tracks[i].editList.first(where: { !$0.isEmpty })?.mediaTime ?? 0
                for (n, s) in list.prefix(Self.maxChapters).enumerated() where s.size <= 65_537 {
                    guard let bytes = try? source.read(at: s.offset, count: Int(s.size)), let title = ITunesMetadata.chapterTitle(bytes) else { continue }
                    let start = s.dts &- max(0, shift)   // wrapping: a tfdt is any 64-bit pattern (a wild one gives an end before the start)
                    // The last runs to the track's duration: mdhd's, or in a fragmented file
                    // (mdhd 0) the end of its last sample, as FFmpeg's st->duration is there.
                    let trackEnd = movie.tracks[i].mediaDuration > 0 ? movie.tracks[i].mediaDuration : (s.dts &+ s.duration) &- max(0, shift)
                    var end = n + 1 < list.count ? list[n + 1].dts &- max(0, shift) : trackEnd
                    if end < start { end = Chapter.unknownEnd }
                    var c = Chapter(id: Int64(n), timeBase: tracks[i].timeBase, start: start, end: end)
                    c.metadata.append(key: "title", nativeKey: "text sample", ffmpegKey: "title", value: title)
                    if let k = out.firstIndex(where: { $0.id == Int64(n) }) { out[k] = c } else { out.append(c) }
                }
            }
        }
        Chapter.fillEnds(&out, duration: duration)
        return out
    }

    /// The nominal frame rate: timescale / delta when the stts is one run (or one run and a
    /// single different last sample), unless that is above 210 fps while the average is
    /// below 70 (FFmpeg's av_guess_frame_rate); otherwise the average rate.
    static func frameRate(_ stts: [(count: UInt32, delta: UInt32)], timeScale: Int64, samples: Int, duration: Int64) -> Rational {
        let average = samples > 0 && duration > 0 ? Track.reduced(Int64(samples) * timeScale, duration) : Rational(0, 1)
        // FFmpeg's r_frame_rate: the one duration of the table (and a different last), else its
        // guess from the first decoding times; av_guess_frame_rate then prefers the average when
        // that rate is implausibly high.
        var rate: Rational?
        if let first = stts.first, first.delta > 0, stts.count == 1 || (stts.count == 2 && stts[1].count == 1) {
            rate = Track.reduced(timeScale, Int64(first.delta))
        } else {
            var dts: [Int64] = [0]
            for entry in stts where dts.count <= standardRateDeltas {
                for _ in 0..<min(Int(entry.count), standardRateDeltas + 1 - dts.count) { dts.append(dts.last! + Int64(entry.delta)) }
            }
            rate = standardFrameRate(dts: dts, timeScale: timeScale)
        }
        guard let rate else { return average }
        if rate.doubleValue > 210 && average.doubleValue > 0 && average.doubleValue < 70 { return average }
        return rate
    }

    /// Decoding-time deltas FFmpeg looks at to guess a frame rate (its fps_analyze_framecount).
    static let standardRateDeltas = 20

    /// The standard frame rate that best explains `dts` (ticks of 1/`timeScale` s), as
    /// libavformat guesses r_frame_rate for a stream whose sample durations vary
    /// (ff_rfps_add_frame / ff_rfps_calculate): every k/12 fps up to 30, 31...60, 80, 120,
    /// 240 fps and the NTSC rates (24, 30, 60, 12, 15, 48 x 1000/1001) are tried, the
    /// decoding times (and the same shifted by half a frame) scaled to each, and the rate
    /// whose fractional parts vary least wins if that variance is under 0.01. Nil when none
    /// fits (FFmpeg then falls back on the codec's timing; MediaKit on the average).
    static func standardFrameRate(dts: [Int64], timeScale: Int64) -> Rational? {
        let deltas = zip(dts.dropFirst(), dts).map { $0 - $1 }.filter { $0 > 0 }
        guard deltas.count > 1, timeScale > 0 else { return nil }
        func standard(_ i: Int) -> Int {
            if i < 30 * 12 { return (i + 1) * 1001 }
            if i < 30 * 12 + 30 { return (i - 30 * 12 + 31) * 1001 * 12 }
            if i < 30 * 12 + 33 { return [80, 120, 240][i - 30 * 12 - 30] * 1001 * 12 }
            return [24, 30, 60, 12, 15, 48][i - 30 * 12 - 33] * 1000 * 12
        }
        let n = Double(deltas.count)
        let meanDelta = Double(deltas.reduce(0, +)) / n / Double(timeScale)
        let seconds = Double(dts.last! - dts.first!) / Double(timeScale)
        var best = 0.01, chosen = 0
        for i in 0..<(30 * 12 + 39) {
            let rate = standard(i)
            let period = 1001 * 12 / Double(rate)
            if seconds < period || meanDelta < 0.8 * period { continue }
            for shift in [0.0, 0.5] {
                var sum = 0.0, squares = 0.0
                var previous: Int64?
                for t in dts {
                    // Only times after a later one count, as FFmpeg's adds each increasing dts.
                    if let p = previous, t <= p { continue }
                    if previous != nil {
                        let scaled = Double(t) / Double(timeScale) * Double(rate) / (1001 * 12)
                        let error = scaled - (scaled + shift).rounded(.toNearestOrAwayFromZero) + shift
                        sum += error
                        squares += error * error
                    }
                    previous = t
                }
                let a = sum / n, variance = squares / n - a * a
                if variance < best && best > 1e-9 {
                    best = variance
                    chosen = rate
                }
            }
        }
        return chosen > 0 ? Track.reduced(Int64(chosen), 1001 * 12) : nil
    }

    /// The next packet in file order, or nil at the end.
    ///
    /// Among the tracks, the next packet is the one stored first in the file,
    /// unless the tracks' decoding times drift more than one second apart, when
    /// the earliest decoding time goes first (FFmpeg's order for interleaved files).
    ///
    /// In a file cut short, a sample the file holds only part of is returned with those bytes
    /// (``Packet/isTruncated``), as FFmpeg's demuxer returns it, and so are the samples after
    /// it in this order that the file holds whole; at the first sample past the end (or the end
    /// of the samples) `.truncated` is thrown.
    ///
    /// A fragmented file from a stream read once (a pipe) is read one fragment at a time, in
    /// the order its samples are stored (as FFmpeg reads a source it cannot seek).
    public func read() throws -> Packet? {
        if readCut.ended { return nil }
        if stream != nil { try claimStream(.all) }
        while true {
            if let (track, index) = nextInFileOrder() { return try packet(track: track, sample: index, cut: &readCut) }
            if try !nextFragment() { return try endOfSamples(&readCut) }
        }
    }

    /// On a stream, `read()` and `read(track:)` share the one pass over the file: the first
    /// call says which of them reads it.
    private func claimStream(_ reader: FragmentStream.Reader) throws {
        guard let current = stream?.reader else {
            stream?.reader = reader
            return
        }
        guard current != reader else { return }
        func name(_ r: FragmentStream.Reader) -> String {
            switch r {
            case .all: return "read() (every track)"
            case .track(let t): return "read(track: \(t))"
            }
        }
        throw MediaError(.unsupported, "a fragmented MP4 from a stream read once is read in one pass, front to back, by read() for every track or by read(track:) for one track; \(name(reader)) after \(name(current)) needs a seekable source (a file or memory)",
                         path: path)
    }

    /// Stream: indexes the next movie fragment (`moof`) in place of the samples read so far,
    /// stepping over the media data and other boxes before it. False at the end of the stream
    /// (or at a fragment it cuts short, kept in ``cutFragment``).
    private func nextFragment() throws -> Bool {
        guard var st = stream, !st.ended else { return false }
        defer { stream = st }
        while true {
            let offset = st.next
            let head = try source.readUpTo(at: offset, count: 16)
            if head.count < 8 {   // the end (or up to 7 trailing bytes, as at the top of a file)
                st.ended = true
                return false
            }
            var size = Int64(be32(head, 0))
            let type = fourCCString(head[4..<8])
            var header: Int64 = 8
            if size == 1 {
                guard head.count >= 16 else {
                    throw MediaError(.invalidData, "box '\(type)' has a 64-bit size but the stream ends", path: path, offset: offset, context: type)
                }
                size = Int64(bitPattern: UInt64(be32(head, 8)) << 32 | UInt64(be32(head, 12)))
                header = 16
            } else if size == 0 {
                // A box that runs to the end of the stream: nothing follows it.
                if type == "moof" {
                    throw MediaError(.invalidData, "a moof box with size 0 (to the end of the stream) leaves no room for its media data", path: path, offset: offset, context: "moof")
                }
                st.ended = true
                return false
            }
            if size < header {   // trailing junk after the last fragment, as at the top of a file
                st.ended = true
                return false
            }
            guard size <= Int64.max - offset else {
                throw MediaError(.invalidData, "box '\(type)' declares \(size) bytes, past any stream's end", path: path, offset: offset, context: type)
            }
            st.next = offset + size
            guard type == "moof" else { continue }
            if size > MP4Limits.maxHeaderBox {
                throw MediaError(.limit, "a moof box is \(size) bytes, above the limit of \(MP4Limits.maxHeaderBox)", path: path, offset: offset, context: "moof")
            }
            // In pieces: a size the stream does not hold allocates no more than it sends.
            var bytes: [UInt8] = []
            while bytes.count < Int(size) {
                let piece = try source.readUpTo(at: offset + Int64(bytes.count), count: min(Int(size) - bytes.count, 1 << 20))
                if piece.isEmpty { break }
                bytes += piece
            }
            if bytes.count < Int(size) {
                st.ended = true
                cutFragment = MediaError(.truncated, "the moof box declares \(size) bytes but the stream ends after \(bytes.count); the samples of this fragment are lost",
                                         path: path, offset: offset, context: "moof")
                return false
            }
            var fresh = Array(repeating: [IndexedSample](), count: samples.count)
            try st.indexer.index(moof: bytes, at: offset, into: &fresh)
            // As FFmpeg reading a stream: pts = dts + shift + offset, the shift being the largest
            // negative composition offset of the track read so far.
            for t in fresh.indices where !fresh[t].isEmpty {
                for s in fresh[t] { st.shifts[t] = max(st.shifts[t], s.dts &- s.pts) }
                let shift = st.shifts[t]
                if shift > 0 { for j in fresh[t].indices { fresh[t][j].pts &+= shift } }
            }
            samples = fresh
            cursors = Array(repeating: 0, count: samples.count)
            return true
        }
    }

    /// nil at the end of the samples, or the `.truncated` error of a cut fragment.
    private func endOfSamples(_ cut: inout TruncationState) throws -> Packet? {
        if let cutFragment { cut.cut(cutFragment) }
        _ = try cut.check()
        return nil
    }

    /// The next sample in the order of ``read()``, without reading its bytes: where they
    /// are in ``source`` and the packet's timing (for a remux that copies file to file).
    /// - Throws: `.truncated` for a sample the end of the file cuts short (the file was cut:
    ///   the samples before it are whole), `.limit`, `.invalidData` for a negative offset.
    public func readReference() throws -> SampleReference? {
        if stream != nil {
            throw MediaError(.unsupported, "sample references need a seekable source (a file): this fragmented MP4 comes from a stream read once", path: path)
        }
        guard let (track, index) = nextInFileOrder() else { return nil }
        let s = samples[track][index]
        if Int(s.size) > MP4Limits.maxSampleSize {
            throw MediaError(.limit, "the sample is \(s.size) bytes, above the limit of \(MP4Limits.maxSampleSize)", path: path, offset: s.offset, context: "track \(track) sample \(index)")
        }
        if s.offset < 0 {
            throw MediaError(.invalidData, "the sample's offset is negative", path: path, offset: s.offset, context: "track \(track) sample \(index)")
        }
        if s.offset > source.size - Int64(s.size) {   // (not offset + size: a damaged offset may be near Int64.max)
            let there = max(0, source.size - s.offset)
            throw MediaError(.truncated, "the sample's \(s.size) bytes extend past the end of the file (\(there) of them are there)",
                             path: path, offset: s.offset, context: "track \(track) sample \(index)")
        }
        return SampleReference(trackIndex: track, pts: s.pts, dts: s.dts, duration: s.duration, isKeyframe: s.isKey,
                               offset: s.offset, size: Int(s.size))
    }

    /// The file the demuxer reads (where ``SampleReference`` offsets point).
    public var file: FileSource? { source as? FileSource }

    /// The next sample of the selected tracks (or of `only`); on a stream, the one stored first.
    private func nextInFileOrder(only: Int? = nil) -> (Int, Int)? {
        var best = -1
        var bestDts: Int64 = 0
        var bestPos: Int64 = 0
        let byPosition = stream != nil
        for t in 0..<samples.count {
            let c = cursors[t]
            guard c < samples[t].count, only.map({ $0 == t }) ?? (selected?.contains(t) ?? true) else { continue }
            let s = samples[t][c]
            let dts = Rational.rescale(s.dts, multiply: 1_000_000, divide: timeScales[t])
            if best < 0 {
                best = t; bestDts = dts; bestPos = s.offset
                continue
            }
            let gap = dts > bestDts ? dts &- bestDts : bestDts &- dts
            if byPosition ? s.offset < bestPos
                : (gap <= 1_000_000 && s.offset < bestPos) || (gap > 1_000_000 && dts < bestDts) {
                best = t; bestDts = dts; bestPos = s.offset
            }
        }
        guard best >= 0 else { return nil }
        let index = cursors[best]
        cursors[best] += 1
        return (best, index)
    }

    /// Limits `read()` to these tracks (nil: all); the others' data is never read.
    public func select(tracks: Set<Int>?) { selected = tracks }

    /// The next packet of `track`, or nil at its end. Independent of `read()`, except on a
    /// fragmented file read from a stream: that is one pass, by `read()` or by `read(track:)` of
    /// one track, and anything else throws `.unsupported` (it needs a seekable source).
    public func read(track: Int) throws -> Packet? {
        guard track >= 0 && track < samples.count else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (the file has \(samples.count))", path: path)
        }
        if trackCuts[track].ended { return nil }
        if stream != nil {
            // A stream is read once: this track's packets come from the one pass over it.
            try claimStream(.track(track))
            while true {
                if let (t, index) = nextInFileOrder(only: track) { return try packet(track: t, sample: index, cut: &trackCuts[track]) }
                if try !nextFragment() { return try endOfSamples(&trackCuts[track]) }
            }
        }
        let index = trackCursors[track]
        guard index < samples[track].count else { return try endOfSamples(&trackCuts[track]) }
        trackCursors[track] += 1
        return try packet(track: track, sample: index, cut: &trackCuts[track])
    }

    /// Moves `read()` and `read(track:)` of every track to the key frame at or
    /// before `seconds` of presentation time (the edit list's first media time counts as 0).
    /// - Throws: `.invalidArgument` for a negative or non-finite time; `.unsupported` on a
    ///   fragmented file read from a stream (seeking needs a seekable source).
    public func seek(to seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.invalidArgument, "cannot seek to \(seconds) s", path: path)
        }
        if stream != nil {
            throw MediaError(.unsupported, "seeking needs a seekable source (a file or memory): this fragmented MP4 comes from a stream read once, front to back",
                             path: path)
        }
        for t in 0..<samples.count {
            let start = tracks[t].editList.first(where: { !$0.isEmpty })?.mediaTime ?? 0
            // Saturated: a hostile edit's media time (any 64-bit value) plus a far target
            // overflowed; past either end, the first or the last key frame is chosen anyway.
            let (sum, overflow) = Rational.ticks(seconds: seconds, perSecond: Double(timeScales[t])).addingReportingOverflow(start)
            let target = overflow ? (start > 0 ? Int64.max : Int64.min) : sum
            var chosen = 0
            for (i, s) in samples[t].enumerated() where s.isKey {
                if s.pts <= target { chosen = i } else if s.dts > target { break }
            }
            cursors[t] = chosen
            trackCursors[t] = chosen
            trackCuts[t].reset()
        }
        readCut.reset()
    }

    /// ``seek(to:)``, then one key frame further back for each track whose key frame opens an
    /// open GOP: samples after it in decoding order, before the next key frame, are presented
    /// before it (leading pictures: an H.264 I frame that is not an IDR, an HEVC CRA). Such a
    /// key frame is a sync sample but not a clean start: its leading pictures refer to the GOP
    /// before it, and libavcodec's H.264 decoder, started there, also dropped pictures of the
    /// next GOP (`mp4_h264_bframes_iibbibb_elst_offset.mp4` at 8.5 s gave 2 of the 4 frames
    /// presented from then on; from the key frame before, all 4). Closed GOPs seek as before.
    public func seekForDecoding(to seconds: Double) throws {
        try seek(to: seconds)
        for t in 0..<samples.count where opensWithLeadingPictures(track: t, key: cursors[t]) {
            if let earlier = samples[t][..<cursors[t]].lastIndex(where: \.isKey) {
                cursors[t] = earlier
                trackCursors[t] = earlier
            }
        }
    }

    /// Whether the key sample `key` of track `t` is followed, before the next key sample in
    /// decoding order, by a sample presented before it.
    private func opensWithLeadingPictures(track t: Int, key: Int) -> Bool {
        guard key < samples[t].count else { return false }
        let keyPts = samples[t][key].pts
        var i = key + 1
        while i < samples[t].count && !samples[t][i].isKey {
            if samples[t][i].pts < keyPts { return true }
            i += 1
        }
        return false
    }

    /// Facts about sample `index` of `track` without reading its data:
    /// (pts, dts, duration, size, offset, key).
    /// Nil on a fragmented file read from a stream, whose samples are indexed as they come.
    public func sampleInfo(track: Int, index: Int) -> (pts: Int64, dts: Int64, duration: Int64, size: Int, offset: Int64, isKeyframe: Bool)? {
        guard stream == nil, track >= 0 && track < samples.count && index >= 0 && index < samples[track].count else { return nil }
        let s = samples[track][index]
        return (s.pts, s.dts, s.duration, Int(s.size), s.offset, s.isKey)
    }

    private func packet(track: Int, sample index: Int, cut: inout TruncationState) throws -> Packet? {
        let s = samples[track][index]
        // Built only for an error: a string per packet is a measurable share of a remux.
        func context() -> String { "track \(track) sample \(index)" }
        if Int(s.size) > MP4Limits.maxSampleSize {
            throw MediaError(.limit, "the sample is \(s.size) bytes, above the limit of \(MP4Limits.maxSampleSize)", path: path, offset: s.offset, context: context())
        }
        if s.offset < 0 {
            throw MediaError(.invalidData, "the sample's offset is negative", path: path, offset: s.offset, context: context())
        }
        var count = Int(s.size)
        let there = Int(try source.available(from: s.offset, upTo: Int64(s.size)))
        if there < count {
            // A cut: as FFmpeg, the sample is returned with the bytes there are (if any),
            // and the cut is reported next.
            count = there
            cut.cut(MediaError(.truncated, "the sample's \(s.size) bytes extend past the end of the file (\(count) of them are there)",
                               path: path, offset: s.offset, context: context()))
            if count == 0 {
                _ = try cut.check()
                return nil
            }
        }
        let data = try samplesReader.read(at: s.offset, count: count)
        // Every MP4 sample's duration is stated (stts, trun, tfhd or trex), 0 included.
        var p = Packet(trackIndex: track, pts: s.pts, dts: s.dts, statedDuration: s.duration, isKeyframe: s.isKey,
                       position: s.offset, data: data, timeBase: tracks[track].timeBase)
        p.isTruncated = count < Int(s.size)
        return p
    }
}

/// A fragmented MP4 read once from a stream: where the next top-level box starts, the
/// fragment indexer's running state and each track's composition shift so far.
private struct FragmentStream {
    var indexer: FragmentIndexer
    /// The next top-level box to look at.
    var next: Int64
    /// Each track's shift (pts = dts + shift + offset): the largest negative composition
    /// offset read so far, as FFmpeg's dts_shift grows while it reads a stream's fragments.
    var shifts: [Int64]
    /// True once the stream has no more fragments.
    var ended = false
    /// Who reads the one pass: nil until the first read.
    var reader: Reader?

    enum Reader: Equatable { case all, track(Int) }
}

/// Where a sample's bytes are in a file, and its timing: a ``Packet`` without its data.
public struct SampleReference: Sendable, Hashable {
    /// Index of the track.
    public var trackIndex: Int
    /// Presentation timestamp in the track's time base (no edit list applied).
    public var pts: Int64
    /// Decoding timestamp in the track's time base.
    public var dts: Int64
    /// Duration in the track's time base, as the file states it (0 is a stated zero).
    public var duration: Int64
    /// True for a sync sample.
    public var isKeyframe: Bool
    /// Byte offset of the sample in the file.
    public var offset: Int64
    /// Size in bytes.
    public var size: Int
}

/// A sample's bytes are the file's at its offset (`packet(track:sample:cut:)`): a decode
/// session may keep a GOP as positions and read it again from here.
extension MP4Demuxer: PacketRereading {
    func rereadBytes(at position: Int64, count: Int) throws -> [UInt8]? {
        guard stream == nil, source.isSeekable, position >= 0, count > 0 else { return nil }
        return try source.read(at: position, count: count)
    }
}
