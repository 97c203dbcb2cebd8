import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes MP4 files from compressed packets: progressive, fast-start, fragmented or hybrid.
///
/// ```swift
/// let muxer = try MP4Muxer(path: "out.mp4", options: .init(layout: .fastStart))
/// let v = try muxer.addTrack(from: demuxer.tracks[0])   // keeps language, matrix, edits, sample entry
/// while let p = try demuxer.read() { try muxer.write(p) }
/// try muxer.finish()
/// ```
///
/// Where the bytes go while writing:
/// - ``Layout/progressive`` and ``Layout/fastStart``: a hidden temporary file beside the
///   target, `.<name>.partial-<pid>` (fast-start also uses `.<name>.mdat-<pid>`), renamed
///   to the target by ``finish()``. A failure or ``cancel()`` removes them: the target
///   name never holds a half-written file.
/// - ``Layout/fragmented(seconds:)`` and ``Layout/hybrid(seconds:)``: the visible file
///   `<target>.partial` beside the target. Every complete fragment is handed to the
///   kernel as soon as it is written, so after a crash or a SIGKILL `<target>.partial`
///   is a fragmented MP4 that players open up to its last complete fragment.
///   ``finish()`` renames it to the target (a hybrid file is first turned into a
///   progressive one in place); ``cancel()`` and write errors remove it.
///
/// Sample tables stay compact (stts/ctts runs, stss only when some samples are not sync
/// samples, stsc runs, stco or co64 past 4 GiB); memory grows by 4 bytes per sample (stsz)
/// plus one chunk or fragment of media data.
public final class MP4Muxer: Muxer, @unchecked Sendable {
    /// Where the movie box goes and how the media data is laid out (``MuxLayout``).
    public typealias Layout = MuxLayout

    /// How the file is written.
    public struct Options: Sendable {
        /// The layout. Default: ``Layout/progressive``.
        public var layout: Layout
        /// The movie time scale (mvhd; unit of edit list durations). Default: 1000.
        public var movieTimeScale: Int64
        /// Target chunk duration in seconds for progressive and fast-start files. Default: 0.5.
        public var chunkSeconds: Double
        /// Fast-start: bytes reserved before the media data for the `moov`. When the
        /// final `moov` fits, nothing is copied on ``finish()``. Default: 0 (copy).
        public var reservedMoovBytes: Int
        /// Fragmented: write an `mfra` random-access index at the end. Default: true.
        public var writeMfra: Bool
        /// A `udta` box written verbatim into the `moov` (metadata, cover art, chapters,
        /// iTunes gapless info), e.g. ``MP4Demuxer/userData``. Default: none.
        public var userData: [UInt8] = []

        /// Creates options; every value not given is its default.
        public init(layout: Layout = .progressive, movieTimeScale: Int64 = 1000, chunkSeconds: Double = 0.5,
                    reservedMoovBytes: Int = 0, writeMfra: Bool = true) {
            self.layout = layout
            self.movieTimeScale = movieTimeScale
            self.chunkSeconds = chunkSeconds
            self.reservedMoovBytes = reservedMoovBytes
            self.writeMfra = writeMfra
        }
    }

    /// The largest ``Options/reservedMoovBytes``: 256 MiB (the space is built in memory).
    public static let maxReservedMoovBytes = 256 << 20

    /// The target path.
    public let path: String
    /// The options it was created with (``Options/userData`` may be replaced before ``finish()``).
    public private(set) var options: Options
    /// The file being written now (temporary or `.partial`); after ``finish()``, ``path``.
    public var inProgressPath: String { file?.temporaryPath ?? path }

    private var file: OutputFile?
    private var tracks: [MuxTrack] = []
    private var started = false
    private var finished = false
    private var mdatStart: Int64 = 0          // offset of the mdat header (progressive, fast-start)
    private var mdatHeaderSize: Int64 = 16
    private var pendingSeconds: [Double] = []
    private var moofOffsets: [Int64] = []
    private var fragmentTimes: [(offset: Int64, times: [Int: Int64])] = []
    private var sequence: UInt32 = 0
    private var fragmentStartDts: Int64?
    private var referenceTrack = 0
    private var initMoovOffset: Int64 = 0
    private var fragmentBytes = 0
    /// Sources for zero-copy samples, by identity.
    private var sources: [ObjectIdentifier: FileSource] = [:]
    private var pendingSources: [FileSource?] = []
    /// False when the movie time scale was left to the muxer (``MuxerOptions/timeScale`` nil):
    /// an encoded track's rate, or the one scale of the adapted tracks' edit lists, is taken.
    private var movieTimeScaleChosen = true
    /// Movie time scales the tracks adapted from other containers state (LAME edits).
    private var adaptedScales = Set<Int64>()
    /// Timestamps of the tracks adapted from other containers (``PacketRetimer``).
    private var retimer = PacketRetimer()
    /// Tracks whose packets are ADTS frames (the header is dropped) and AV1 tracks (temporal
    /// units become samples).
    private var adtsTracks = Set<Int>(), av1Tracks = Set<Int>()
    /// H.264 / HEVC tracks given in Annex B form (``AnnexBConversion``): their packets become
    /// length-prefixed samples. Those with no extradata have an empty sample entry until their
    /// first packet gives the parameter sets.
    private var annexBTracks = Set<Int>()
    /// The QuickTime chapter track (``setMetadata(_:)``) and its samples, written before the
    /// first packet; `copiesChapterTrack`: a source's chapter track is copied, so none is made.
    private var chapterTrack: Int?
    private var chapterSamples: [(start: Int64, duration: Int64, data: [UInt8])] = []
    private var copiesChapterTrack = false
    /// 3GPP timed text tracks (`mov_text`): their converter (nil: copied) and where their last
    /// sample ends, for the empty samples that fill gaps (``writeTimedText(_:)``).
    private var timedTextTracks: [Int: TimedTextTrack] = [:]
    private struct TimedTextTrack {
        var converter: SubtitleConverter?
        var end: Int64 = 0
        var samples = 0
        var lastWasGap = false
    }
    /// E-AC-3 tracks whose sample entry the muxer makes: their dec3 facts and the frames of
    /// fewer than 6 blocks waiting to make a sample (``EAC3Track``).
    private var eac3Tracks: [Int: EAC3Track] = [:]
    /// Adapted Opus tracks: their pre-skip, for the edit list set after the last packet.
    private var opusTracks: [Int: Int] = [:]
    /// Encoded tracks: their priming, for ``setGapless(track:presentedDuration:padding:)``.
    private var encodedDelays: [Int: Int] = [:]
    /// Cut into segments (``startSegment(path:)``): fragments are cut only where a segment
    /// starts (or at 256 MiB), never by ``Options/layout``'s seconds.
    private var segmented = false
    /// The file the next packet starts (``startSegment(path:)``).
    private var pendingSegment: String?
    /// Files already completed (the initialization segment, earlier media segments), removed
    /// when the stream is abandoned.
    private var completedSegments: [String] = []

    private var isFragmentedLayout: Bool {
        switch options.layout { case .fragmented, .hybrid: return true; default: return false }
    }
    private var fragmentSeconds: Double {
        switch options.layout { case .fragmented(let s), .hybrid(let s): return max(s, 0.001); default: return 0 }
    }

    /// Starts a file that ``finish()`` will move to `path`.
    /// - Throws: `.io` when the temporary file cannot be created, `.invalidArgument` for bad options.
    public init(path: String, options: Options = Options()) throws {
        guard options.movieTimeScale > 0, options.movieTimeScale <= Int64(UInt32.max) else {
            throw MediaError(.invalidArgument, "movie time scale \(options.movieTimeScale) is out of range", path: path)
        }
        // The chunk duration becomes ticks (Int64 of a Double) and the reserved bytes a box in memory.
        guard options.chunkSeconds > 0, options.chunkSeconds <= 86400 else {
            throw MediaError(.invalidArgument, "chunk duration \(options.chunkSeconds) s is out of range (0 to 86400 s)", path: path)
        }
        guard options.reservedMoovBytes >= 0, options.reservedMoovBytes <= Self.maxReservedMoovBytes else {
            throw MediaError(.invalidArgument, "reserved moov bytes \(options.reservedMoovBytes) are out of range (0 to \(Self.maxReservedMoovBytes))", path: path)
        }
        if case .fragmented(let s) = options.layout, !(s > 0 && s.isFinite) {
            throw MediaError(.invalidArgument, "fragment duration \(s) s must be positive", path: path)
        }
        if case .hybrid(let s) = options.layout, !(s > 0 && s.isFinite) {
            throw MediaError(.invalidArgument, "fragment duration \(s) s must be positive", path: path)
        }
        self.path = path
        self.options = options
        switch options.layout {
        case .fragmented, .hybrid:
            file = try OutputFile(path: path, temporaryPath: path + ".partial")
        case .fastStart:
            // Not the default temporary name: finish() may write that one (ftyp + moov + copy).
            let slash = path.lastIndex(of: "/")
            let dir = slash.map { String(path[...$0]) } ?? ""
            let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
            file = try OutputFile(path: path, temporaryPath: dir + ".\(name).mdat-\(getpid())")
        case .progressive:
            file = try OutputFile(path: path)
        }
    }

    deinit { file?.discard() }

    // MARK: tracks

    /// Adds a track described by codec parameters (sample entry generated, or carried
    /// over from ``CodecParameters/sampleEntry``). `timeBase` is the packets' time base.
    ///
    /// An H.264 or HEVC track whose extradata is Annex B parameter sets (starting with a start
    /// code) or empty is taken in Annex B form, as FFmpeg's mov muxer takes it: the avcC /
    /// hvcC is built from those parameter sets, or from the first packet's when the extradata
    /// is empty (the sample entry then waits for that packet: the progressive and fast-start
    /// layouts write it at the end; the fragmented ones need it before the first packet of any
    /// track), HEVC gets the `hev1` entry (`hvc1` when ``CodecParameters/codecTag`` asks, its
    /// parameter-set arrays then complete), and each packet's NAL units are length-prefixed in
    /// 4 bytes, parameter sets in the stream kept (``AnnexBConversion``).
    /// - Throws: `.invalidData` for parameter sets that make no avcC / hvcC, `.invalidArgument`
    ///   for parameters a sample entry cannot be made from.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        try addTrack(parameters, timeBase: timeBase, language: "und", matrix: MovieWriter.identity, edits: nil, movieTimeScale: 0)
    }

    /// Adds a track that keeps what a demuxed ``Track`` says: language, matrix (rotation),
    /// edit list (B-frame offset, priming, empty edits), the source sample entry, its handler
    /// name (FFmpeg's `handler_name` tag; else FFmpeg's name for the type) and whether it
    /// is presented by default (``Track/isDefault``: `tkhd` enabled; as in FFmpeg, the first track
    /// of a type none of whose tracks is default is enabled too); a chapter track
    /// (``Track/isChapterTrack``) is written disabled, as chapter tracks are.
    /// - Throws: `.unsupported` ("unsupported: encrypted") for an encrypted track.
    public func addTrack(from track: Track) throws -> Int {
        if track.isEncrypted {
            throw MediaError(.unsupported, "encrypted track \(track.index) (\(track.parameters.codecTag)); MediaKit cannot remux protected samples", path: path)
        }
        if track.isChapterTrack { copiesChapterTrack = true }
        let index = try addTrack(track.parameters, timeBase: track.timeBase, language: track.language, matrix: track.matrix,
                                 edits: track.editList, movieTimeScale: track.movieTimeScale)
        // A copied chapter track stays out of the presentation (tkhd not enabled), as QuickTime
        // and FFmpeg write chapter tracks: ffprobe shows it not default, as the source's.
        // The source's handler name (FFmpeg's `handler_name` tag: an MP4 `hdlr`, a Matroska
        // HANDLER_NAME tag), as FFmpeg's muxer keeps it; NUL would end the C string early.
        if let name = track.metadata.first(where: { $0.ffmpegKey.lowercased() == "handler_name" })?.value {
            tracks[index].handlerName = String(name.prefix { $0 != "\0" })
        }
        tracks[index].isEnabled = track.isDefault && !track.isChapterTrack
        tracks[index].isChapter = track.isChapterTrack
        return index
    }

    /// Leaves the movie time scale to the muxer (see ``init(path:options:)-(_,MuxerOptions)``).
    func leaveMovieTimeScale() { movieTimeScaleChosen = false }

    /// The codecs MP4 carries from other containers and encoders, and why it refuses some.
    public static let carriedCodecs = MP4TrackAdapter.codecs, refusedCodecs = MP4TrackAdapter.refusals

    /// True for a track from another container whose sample entry is built from its first
    /// frame (VP9, AC-3, E-AC-3, AV1 without an av1C).
    public func needsFirstPacket(_ track: Track) -> Bool { MP4TrackAdapter.needsFirstPacket(track) }

    /// Adds a demuxed track. One from an MP4 (its sample entry present) is added as
    /// ``addTrack(from:)`` adds it; one from another container is adapted first
    /// (``MP4TrackAdapter``): its codec checked, its sample entry built (from `firstPacket` for
    /// VP9, AC-3, E-AC-3 and AV1 streams; E-AC-3 frames of fewer than 6 blocks joined into
    /// samples of 6, ``EAC3Track``), an encoder delay and padding made an edit list, and its
    /// packets then fixed on the way in: an ADTS frame loses its header (the AudioSpecificConfig
    /// is in the sample entry, as FFmpeg's aac_adtstoasc does), an AV1 temporal unit its
    /// temporal delimiter, padding, tile list and redundant frame header OBUs, an H.264 / HEVC
    /// access unit in Annex B form its length-prefixed units (the avcC / hvcC from the
    /// extradata's parameter sets, or `firstPacket`'s when there is no extradata, as an MPEG-TS
    /// track gives them; ``addTrack(_:timeBase:)``), unknown decoding
    /// timestamps are filled in and Opus is counted in 48 kHz samples (``PacketRetimer``), its
    /// end trim the edit list's end.
    /// - Throws: `.unsupported` naming MP4 and the codec for a codec MP4 does not carry here;
    ///   `.invalidArgument` when the first frame does not give the sample entry; as ``addTrack(from:)``.
    public func addTrack(from track: Track, firstPacket: [UInt8]?) throws -> Int {
        if MP4TrackAdapter.isConvertedText(track) {
            // A text subtitle from another container: 3GPP timed text, as `-c:s mov_text`.
            let converter: SubtitleConverter
            do { converter = try SubtitleConverter(from: track.parameters, to: "mov_text", track: track.index) } catch let e as MediaError { throw e.at(path: path) }
            var t = track
            t.parameters = converter.parameters
            t.editList = []
            let index = try addTrack(from: t)
            timedTextTracks[index] = TimedTextTrack(converter: converter)
            return index
        }
        guard !MP4TrackAdapter.isMP4(track) else {
            let index = try addTrack(from: track)
            if track.parameters.codec == "mov_text" && track.parameters.codecTag == "tx3g" && !track.isChapterTrack {
                timedTextTracks[index] = TimedTextTrack()
            }
            return index
        }
        let kept = try MP4TrackAdapter.adapt(track, firstPacket: firstPacket, path: path)
        let index = try addTrack(from: kept)
        if kept.movieTimeScale > 0 { adaptedScales.insert(kept.movieTimeScale) }
        retimer.add(index, source: track, output: kept)
        if kept.parameters.codec == "opus" { opusTracks[index] = kept.encoderDelay }
        return index
    }

    /// Adds a track an encoder writes (``Muxer/addEncodedTrack(_:timeBase:encoderDelay:)``): its
    /// priming is cut by the edit list ``setGapless(track:presentedDuration:padding:)`` writes;
    /// MP3 gets the `mp4a` sample entry (Object Type 0x6B). When the movie time scale was left
    /// to the muxer, it becomes the track's rate.
    public func addEncodedTrack(_ parameters: CodecParameters, timeBase: Rational, encoderDelay: Int) throws -> Int {
        var p = parameters
        if p.codec == "mp3" {
            let ext = path.split(separator: "/").last.flatMap { $0.split(separator: ".", omittingEmptySubsequences: false).dropFirst().last }.map(String.init) ?? ""
            if ext.lowercased() == "m4a" || ext.lowercased() == "m4b" {
                throw MediaError(.unsupported, "MP4 cannot carry mp3 in .\(ext) files: iTunes-style files do not (FFmpeg's ipod muxer refuses it); write .mp4 or .mov",
                                 path: path)
            }
            p.codecTag = "mp4a"
        }
        let index = try addTrack(p, timeBase: timeBase)
        if !movieTimeScaleChosen {
            options.movieTimeScale = timeBase.denominator
            movieTimeScaleChosen = true
        }
        encodedDelays[index] = encoderDelay
        return index
    }

    /// Cuts an encoded track to its signal: an edit list from the priming for
    /// `presentedDuration` ticks, and for AAC iTunes' gapless tag (`iTunSMPB` in the `udta`),
    /// as iTunes writes it. Progressive and fast-start layouts.
    /// - Throws: `.invalidArgument` for a track not added by ``addEncodedTrack(_:timeBase:encoderDelay:)``.
    public func setGapless(track ti: Int, presentedDuration: Int64, padding: Int64) throws {
        guard let delay = encodedDelays[ti], ti < tracks.count else {
            throw MediaError(.invalidArgument, "track \(ti) was not added by addEncodedTrack", path: path)
        }
        replaceEdits(track: ti, [EditListEntry(segmentDuration: presentedDuration, mediaTime: Int64(delay), mediaRate: 1)],
                     movieTimeScale: tracks[ti].timeScale)
        if tracks[ti].parameters.codec == "aac" {
            gaplessItem = MovieWriter.iTunSMPBItem(delay: delay, padding: Int(clamping: padding), samples: presentedDuration)
            replaceUserData(MP4MetadataWriter.userData(items: gaplessItem))
        }
    }

    /// Replaces track `ti`'s edit list before ``finish()``: durations in `movieTimeScale`
    /// ticks (0: the track's own time scale), a zero duration reaching the end of the media;
    /// media times in the track's time scale (its time base's denominator). For an end trim
    /// known only after the last packet (Opus DiscardPadding, an encoder's padding). A track
    /// index that was not added is ignored.
    public func replaceEdits(track ti: Int, _ edits: [EditListEntry], movieTimeScale: Int64) {
        guard ti >= 0, ti < tracks.count else { return }
        tracks[ti].sourceEdits = edits
        tracks[ti].sourceMovieTimeScale = movieTimeScale > 0 ? movieTimeScale : tracks[ti].timeScale
    }

    /// Replaces the `udta` box written into the `moov` (metadata known only at the end, such
    /// as an encoder's iTunSMPB); before ``finish()``, for the progressive and fast-start layouts.
    func replaceUserData(_ bytes: [UInt8]) {
        options.userData = bytes
    }

    /// The `ilst` items, `chpl` and (`.mov`) QuickTime strings of ``setMetadata(_:)``; empty:
    /// ``Options/userData`` is written.
    private var metadataItems: [UInt8] = [], chapterList: [UInt8] = [], quickTimeStrings: [UInt8] = []
    /// An encoded AAC track's iTunSMPB item (``setGapless(track:presentedDuration:padding:)``).
    private var gaplessItem: [UInt8] = []

    /// Writes the tags, cover art and chapters as iTunes metadata (`udta/meta/ilst`: text atoms,
    /// `trkn` / `disk`, `cpil`, `tmpo`, freeform `----` items, `covr`) and a Nero `chpl`
    /// (``MP4MetadataWriter``), the container's tags then the first track's that it does not
    /// have; the `udta` then replaces ``Options/userData`` (an encoder's iTunSMPB is kept
    /// among the items). A `.mov` file gets QuickTime `udta` strings (©nam, ©ART ...:
    /// ``MP4MetadataWriter/quickTimeStrings(tags:)``) instead of `ilst` items, as FFmpeg's mov
    /// muxer writes them. The chapters also get a QuickTime chapter track, as FFmpeg's mov
    /// muxer writes one for MP4 and MOV (``MP4ChapterTrack``: a disabled `text` track
    /// referenced by `tref/chap` from every other track), in every layout (in a fragmented
    /// file its samples are in the first fragment), unless a source's chapter track is copied
    /// as a track (that track is written disabled too) or segmenting started. A `udta` given in
    /// ``Options/userData`` (verbatim) wins: the metadata is then not written.
    /// - Throws: `.state` after the first write.
    public func setMetadata(_ metadata: MuxMetadata) throws {
        guard !metadata.isEmpty, options.userData.isEmpty else { return }
        guard !started else { throw MediaError(.state, "metadata must be given before the first write", path: path) }
        let tags = metadata.combined(track: metadata.trackTags.keys.min())
        if isQuickTime {
            quickTimeStrings = MP4MetadataWriter.quickTimeStrings(tags: tags)
        } else {
            metadataItems = MP4MetadataWriter.items(tags: tags, pictures: metadata.pictures)
        }
        chapterList = MP4MetadataWriter.chpl(metadata.chapters)
        try addChapterTrack(metadata.chapters)
    }

    /// The `ftyp` brands of the target's extension, as FFmpeg's muxer for it writes them.
    private var brand: MovieWriter.Brand { MovieWriter.Brand(pathExtension: (path as NSString).pathExtension) }
    /// True for a `.mov` target (FFmpeg's mov muxer mode rather than mp4's).
    private var isQuickTime: Bool { brand == .quickTime }

    /// Adds the chapter track for `chapters` (``setMetadata(_:)``); its samples are written
    /// with the first packet: first in the `mdat` of the progressive and fast-start layouts,
    /// in the first fragment of the fragmented and hybrid ones (as FFmpeg writes them with
    /// `-movflags frag_keyframe+empty_moov`). None once ``startSegment(path:)`` was called
    /// (FFmpeg's HLS and DASH muxers give their segment muxers no chapters; MediaKit's HLS
    /// muxer gives its MP4 muxer none either).
    private func addChapterTrack(_ chapters: [Chapter]) throws {
        guard chapterTrack == nil, !copiesChapterTrack, !segmented, pendingSegment == nil, !tracks.isEmpty else { return }
        let samples = MP4ChapterTrack.samples(chapters)
        guard !samples.isEmpty else { return }
        var p = CodecParameters(mediaType: .subtitle, codec: "bin_data", codecTag: "text")
        p.sampleEntry = MP4ChapterTrack.sampleEntry
        let others = Array(tracks.indices)
        let ci = try addTrack(p, timeBase: Rational(1, MP4ChapterTrack.timeScale), language: "und", matrix: [],
                              edits: [EditListEntry(segmentDuration: 0, mediaTime: 0, mediaRate: 1)], movieTimeScale: MP4ChapterTrack.timeScale)
        tracks[ci].macintoshLanguageZero = true   // FFmpeg's chapter track: language code 0 (read as "eng")
        tracks[ci].isEnabled = false              // and not enabled (tkhd flags 2): ffprobe shows it not default
        tracks[ci].isChapter = true
        tracks[ci].writesBitRateBox = !isQuickTime   // mp4 mode: its text entry ends with a btrt
        for i in others { try addTrackReference(from: i, type: "chap", to: [ci]) }
        chapterTrack = ci
        chapterSamples = samples
    }

    /// Writes the chapter track's samples, once, before the first packet (first in the `mdat`,
    /// as FFmpeg writes them with the header).
    private func writeChapterSamples() throws {
        guard let ci = chapterTrack, !chapterSamples.isEmpty else { return }
        let samples = chapterSamples
        chapterSamples = []
        for s in samples {
            try append(track: ci, pts: s.start, dts: s.start, duration: s.duration, isKeyframe: true, data: s.data, source: nil, offset: -1, size: s.data.count)
        }
    }

    /// The `udta` written into the `moov`: ``Options/userData``, or the one made from
    /// ``setMetadata(_:)`` with an encoder's iTunSMPB item.
    private var userDataToWrite: [UInt8] {
        guard !metadataItems.isEmpty || !chapterList.isEmpty || !quickTimeStrings.isEmpty else { return options.userData }
        return MP4MetadataWriter.userData(items: metadataItems + gaplessItem, extra: chapterList, strings: quickTimeStrings)
    }

    /// Makes track `from` reference `to` (a `tref` entry such as "chap" for a chapter
    /// track, "cdsc" for timed metadata describing a track). Indexes are the muxer's.
    public func addTrackReference(from: Int, type: String, to: [Int]) throws {
        guard !started else { throw MediaError(.state, "addTrackReference after the first write", path: path) }
        guard from >= 0, from < tracks.count, to.allSatisfy({ $0 >= 0 && $0 < tracks.count }), type.utf8.count == 4 else {
            throw MediaError(.invalidArgument, "track reference \(type) from \(from) to \(to) names a track that does not exist", path: path)
        }
        tracks[from].references.append((type, to.map { tracks[$0].id }))
    }

    private func addTrack(_ p: CodecParameters, timeBase: Rational, language: String, matrix: [Int32],
                          edits: [EditListEntry]?, movieTimeScale: Int64) throws -> Int {
        guard !started else { throw MediaError(.state, "addTrack after the first write", path: path) }
        guard !finished else { throw MediaError(.state, "addTrack after finish or cancel", path: path) }
        guard timeBase.numerator > 0, timeBase.denominator > 0, timeBase.denominator <= Int64(UInt32.max) else {
            throw MediaError(.invalidArgument, "time base \(timeBase) cannot be an MP4 time scale", path: path)
        }
        guard (0...65535).contains(p.width), (0...65535).contains(p.height) else {
            throw MediaError(.invalidArgument, "track \(tracks.count): the size \(p.width)x\(p.height) does not fit an MP4 track header (0 to 65535)", path: path)
        }
        let id = tracks.count + 1
        var p = p
        let annexB = AnnexBConversion.applies(to: p)
        // AV1 whose extradata is the bare OBUs an encoder states (a sequence header), not an
        // `av1C` record (marker and version 1: 0x81): the record around them, as FFmpeg's
        // ff_isom_write_av1c builds it from an encoder's extradata.
        if p.codec == "av1", let first = p.extradata.first, first != 0x81 {
            guard let record = CodecConfigRecords.av1C(temporalUnit: p.extradata) else {
                throw MediaError(.invalidArgument, "track \(tracks.count) (av1): the extradata is neither an av1C record nor a sequence header OBU", path: path)
            }
            p.extradata = record
        }
        if annexB {
            // FFmpeg's mp4 muxer tags HEVC hev1 (parameter sets in the samples too), its
            // parameter-set arrays not complete; hvc1 when asked for, the arrays complete.
            if p.codec == "hevc" && p.codecTag != "hvc1" { p.codecTag = "hev1" }
            if !p.extradata.isEmpty {
                do {
                    p.extradata = try AnnexBConversion.record(codec: p.codec, extradata: p.extradata, completeness: p.codecTag == "hvc1", track: tracks.count)
                } catch let e as MediaError { throw e.at(path: path) }
            } else if !(p.width > 0 && p.height > 0) {
                throw MediaError(.invalidArgument, "track \(tracks.count) (\(p.codec)): no extradata (the \(p.codec == "h264" ? "avcC" : "hvcC") would come from the first packet's parameter sets) and no width and height (got \(p.width)x\(p.height)); a video track needs both", path: path)
            }
        }
        let eac3 = p.codec == "eac3" && p.sampleEntry.isEmpty
        let entry: [UInt8]
        if (annexB || eac3) && p.extradata.isEmpty {
            entry = []                     // built from the first packet (write)
        } else {
            do { entry = try SampleEntryWriter.entry(for: p, trackID: id) } catch let e as MediaError { throw e.at(path: path) }
        }
        var width = p.width, height = p.height
        if p.mediaType == .video, (width == 0 || height == 0), entry.count >= 36 {
            width = Int(UInt16(entry[32]) << 8 | UInt16(entry[33])); height = Int(UInt16(entry[34]) << 8 | UInt16(entry[35]))
        }
        let tag = entry.count >= 8 ? fourCCString(entry[4..<8]) : p.codecTag
        if annexB { annexBTracks.insert(tracks.count) }
        let handler: String
        switch p.mediaType {
        case .video: handler = "vide"
        case .audio: handler = "soun"
        case .subtitle: handler = tag == "c608" || tag == "c708" ? "clcp" : tag == "text" ? "text" : tag == "wvtt" || tag == "stpp" ? "subt" : tag == "mp4s" ? "subp" : "sbtl"
        case .data: handler = tag == "tmcd" ? "tmcd" : "meta"
        }
        var track = MuxTrack(parameters: p, sampleEntry: entry, handler: handler, id: id, timeScale: timeBase.denominator,
                             tickMultiplier: timeBase.numerator, language: language,
                             matrix: matrix.count == 9 ? matrix : MovieWriter.identity,
                             sourceEdits: edits, sourceMovieTimeScale: movieTimeScale, width: width, height: height)
        // Uncompressed audio whose timestamps count PCM frames: tables in PCM frames, as FFmpeg
        // writes them (QuickTime reads sowt/twos/in24/... sample tables that way).
        if p.mediaType == .audio, let bits = SampleEntryParser.bitsPerSample(codec: p.codec), p.channels > 0,
           timeBase.numerator == 1, timeBase.denominator == Int64(p.sampleRate) {
            track.pcmFrameSize = bits / 8 * p.channels
        }
        if p.codec == "mpeg4", p.sampleEntry.isEmpty {
            track.measuresMPEG4BitRates = true
            track.writesBitRateBox = !isQuickTime
        }
        if eac3 {
            eac3Tracks[tracks.count] = EAC3Track()
            track.writesBitRateBox = !isQuickTime   // FFmpeg's mp4 muxer ends its ec-3 entry with a btrt
        }
        if p.codecTag == "adts" { adtsTracks.insert(tracks.count) }
        if p.codec == "av1" { av1Tracks.insert(tracks.count) }
        tracks.append(track)
        pendingSources.append(nil)
        return tracks.count - 1
    }

    /// Announces, before the first write, the timestamps (pts, dts in the track's time base)
    /// of every packet that will be written to `track`, in decode order, e.g. from
    /// ``MP4Demuxer/sampleInfo(track:index:)``.
    ///
    /// Fragmented and hybrid layouts use them to store a track whose composition offsets
    /// go below zero (pts before dts, as B-frame encoders that start decode times at 0
    /// write) without negative offsets: the most negative offset, made positive, is added to
    /// every offset in the fragments (`trun` version 0) and to the media time of the track's
    /// edit list in the initial `moov`. The presentation is the same; readers that do not
    /// shift decode times for negative offsets in fragments (FFmpeg 5.1 delays such a track
    /// by the most negative offset instead) then present it in sync with the other tracks.
    /// Without this call, negative offsets are stored signed (`trun` version 1). The
    /// progressive `moov` (of every layout, the hybrid one included) keeps the offsets as
    /// they are. Other layouts ignore the call. Packets written later whose offsets go
    /// below the announced ones are stored signed.
    /// - Throws: `.state` after the first write, `.invalidArgument` for an unknown track.
    public func announceTimestamps(track ti: Int, _ timestamps: some Sequence<(pts: Int64, dts: Int64)>) throws {
        guard !finished else { throw MediaError(.state, "announceTimestamps after finish or cancel", path: path) }
        guard !started else { throw MediaError(.state, "announceTimestamps after the first write", path: path) }
        guard ti >= 0, ti < tracks.count else {
            throw MediaError(.invalidArgument, "track \(ti) does not exist (the muxer has \(tracks.count))", path: path)
        }
        guard isFragmentedLayout else { return }
        // The offsets `append` will store: pts - (dts - origin), origin = min(first dts, 0).
        var origin: Int64?
        var least: Int64 = 0
        for t in timestamps {
            let dts = try ticks(t.dts, track: ti, "an announced dts"), pts = try ticks(t.pts, track: ti, "an announced pts")
            if origin == nil { origin = min(dts, 0) }
            least = min(least, pts - (dts - (origin ?? 0)))
        }
        guard least >= Int64(Int32.min) else {
            throw MediaError(.limit, "track \(ti): an announced pts is \(-least) ticks before its dts; an MP4 composition offset holds 32 bits", path: path)
        }
        tracks[ti].compositionShift = -least
    }

    /// A caller's timestamp or duration `v` (in the packets' time base) in track ticks, or an
    /// error naming the track and the value when it is beyond ``MovieWriter/timeLimit``.
    private func ticks(_ v: Int64, track ti: Int, _ what: String) throws -> Int64 {
        let m = tracks[ti].tickMultiplier
        let (r, overflow) = v.multipliedReportingOverflow(by: m)
        guard !overflow, r >= -MovieWriter.timeLimit, r <= MovieWriter.timeLimit else {
            throw MediaError(.invalidArgument, "track \(ti): \(what) \(v) (x\(m) ticks of 1/\(tracks[ti].timeScale) s) is beyond the 2^60 ticks an MP4 track takes", path: path)
        }
        return r
    }

    // MARK: writing

    /// Writes one packet. Packets of each track must come in decode order
    /// (non-decreasing dts); tracks may be interleaved in any way.
    ///
    /// The duration written is the next packet's dts minus this one's; for the last packet of
    /// a track it is ``Packet/statedDuration``, 0 included (as a source file states it), or,
    /// when unknown, the previous packet's (a PCM packet's: its frame count). In the fragmented
    /// and hybrid layouts an empty packet is dropped, as FFmpeg's mov muxer drops them.
    /// - Throws: `.invalidArgument` for an unknown track, a dts going backwards, a timestamp
    ///   beyond 2^60 ticks or a duration out of 0...2^32-1; `.limit` for a value its MP4 field
    ///   cannot hold (a dts gap or composition offset beyond 32 bits); `.io` when writing fails
    ///   (the target name is left untouched). Any error abandons the file.
    public func write(_ packet: Packet) throws {
        if !chapterSamples.isEmpty { try writeChapterSamples() }
        let ti = packet.trackIndex
        if timedTextTracks[ti] != nil { return try writeTimedText(packet) }
        guard adtsTracks.contains(ti) || av1Tracks.contains(ti) || annexBTracks.contains(ti) || retimer.retimes(ti) || eac3Tracks[ti] != nil else {
            try append(track: ti, pts: packet.pts, dts: packet.dts, duration: packet.statedDuration,
                       isKeyframe: packet.isKeyframe, data: packet.data, source: nil, offset: -1, size: packet.data.count)
            return
        }
        var packet = packet
        if adtsTracks.contains(ti), let h = ADTSHeader(packet.data) {
            packet.data.removeFirst(min(packet.data.count, h.headerSize))
        }
        if av1Tracks.contains(ti) { packet.data = AV1.mp4Sample(packet.data) }
        // An Annex B packet's units are written after their lengths from the packet's own
        // memory (writeData): the sample is never built.
        var units: [Range<Int>] = [], unitsSize = 0
        if annexBTracks.contains(ti) {
            guard !finished else { throw MediaError(.state, "write after finish or cancel", path: path) }
            if tracks[ti].sampleEntry.isEmpty { try buildSampleEntry(track: ti, firstPacket: packet.data) }
            do { (units, unitsSize) = try AnnexBConversion.sampleUnits(packet.data, track: ti, codec: tracks[ti].parameters.codec) } catch let e as MediaError { throw e.at(path: path) }
        }
        retimer.fix(&packet)
        if eac3Tracks[ti] != nil {
            // Frames of fewer than 6 blocks wait for the rest of their sample. Mutated in place in
            // the dictionary: a copy out and back would copy the waiting frames per packet.
            let sample: Packet?, hasSamples = tracks[ti].sampleCount > 0
            do { sample = try eac3Tracks[ti]?.take(packet, track: ti, hasSamples: hasSamples) ?? nil } catch let e as MediaError { throw e.at(path: path) }
            if tracks[ti].sampleEntry.isEmpty { try buildEAC3SampleEntry(track: ti) }
            guard let sample else { return }
            packet = sample
        }
        try append(track: packet.trackIndex, pts: packet.pts, dts: packet.dts, duration: packet.statedDuration,
                   isKeyframe: packet.isKeyframe, data: packet.data, units: units, source: nil, offset: -1,
                   size: units.isEmpty ? packet.data.count : unitsSize)
    }

    /// Writes a packet of a 3GPP timed text track: converted first when it comes from another
    /// text codec, and after an empty sample (2 zero bytes) where it starts after the previous
    /// sample's end (or after 0 for the first), as FFmpeg's mov muxer fills the gaps of a
    /// `mov_text` track (`mov_write_subtitle_end_packet`); each sample lasts to the next one.
    private func writeTimedText(_ packet: Packet) throws {
        let ti = packet.trackIndex
        guard var state = timedTextTracks[ti] else { return }
        var packets = [packet]
        if let converter = state.converter {
            do { packets = try converter.convert(packet) } catch let e as MediaError { throw e.at(path: path) }
        }
        for p in packets {
            let dts = p.dts != Packet.noTimestamp ? p.dts : p.pts
            guard dts != Packet.noTimestamp else {
                throw MediaError(.invalidArgument, "track \(ti): a timed text sample with neither pts nor dts", path: path)
            }
            if state.end < dts && (state.samples == 0 || !state.lastWasGap) {
                try append(track: ti, pts: state.end, dts: state.end, duration: 0, isKeyframe: true, data: [0, 0], source: nil, offset: -1, size: 2)
                state.samples += 1
                state.lastWasGap = true
            }
            try append(track: ti, pts: p.pts != Packet.noTimestamp ? p.pts : dts, dts: dts, duration: p.statedDuration,
                       isKeyframe: true, data: p.data, source: nil, offset: -1, size: p.data.count)
            state.samples += 1
            state.lastWasGap = false
            // dts is within 2^60 (checked by append), the duration bounded: no overflow.
            state.end = dts + min(max(0, p.duration), 1 << 40)
        }
        timedTextTracks[ti] = state
    }

    /// The sample entry of Annex B track `ti` given no extradata, from the parameter sets of its
    /// first packet: possible until the `moov` is written (the progressive and fast-start
    /// layouts write it at the end; the fragmented ones at the first packet of any track).
    private func buildSampleEntry(track ti: Int, firstPacket: [UInt8]) throws {
        var p = tracks[ti].parameters
        guard !(started && isFragmentedLayout) else {
            throw MediaError(.invalidArgument, "track \(ti) (\(p.codec)): no extradata, and the fragmented moov was written before its first packet; give its parameter sets in extradata or write its first packet first", path: path)
        }
        do {
            p.extradata = try AnnexBConversion.record(codec: p.codec, firstPacket: firstPacket, completeness: p.codecTag == "hvc1", track: ti)
            tracks[ti].sampleEntry = try SampleEntryWriter.entry(for: p, trackID: tracks[ti].id)
        } catch let e as MediaError { throw e.at(path: path) }
        tracks[ti].parameters = p
    }

    /// The `ec-3` sample entry of E-AC-3 track `ti` from the frames read so far (nothing before
    /// the first frame): at its first frame, and again before the `moov` that ends the file,
    /// whose `dec3` states the highest rate of the stream.
    private func buildEAC3SampleEntry(track ti: Int) throws {
        guard let dec3 = eac3Tracks[ti]?.dec3 else { return }
        var p = tracks[ti].parameters
        p.extradata = dec3
        do { tracks[ti].sampleEntry = try SampleEntryWriter.entry(for: p, trackID: tracks[ti].id) } catch let e as MediaError { throw e.at(path: path) }
        tracks[ti].parameters = p
    }

    /// Writes one sample whose bytes are `size` bytes at `offset` of `source`, copied
    /// file to file in the kernel (a remux never brings them into memory). `duration` is
    /// the sample's stated duration (0 included), nil when unknown, as in ``write(_:)``.
    public func writeSample(track: Int, pts: Int64, dts: Int64, duration: Int64?, isKeyframe: Bool,
                            from source: FileSource, offset: Int64, size: Int) throws {
        if !chapterSamples.isEmpty { try writeChapterSamples() }
        guard !annexBTracks.contains(track) else {
            throw MediaError(.invalidArgument, "track \(track) (\(tracks[track].parameters.codec)) is in Annex B form: its packets are converted, so they go through write(_:), not copied from a file", path: path)
        }
        guard offset >= 0, size >= 0, offset + Int64(size) <= source.size else {
            throw MediaError(.invalidData, "the sample's \(size) bytes at \(offset) are outside the source (\(source.size) bytes)", path: source.path, offset: offset)
        }
        try append(track: track, pts: pts, dts: dts, duration: duration, isKeyframe: isKeyframe, data: [], source: source, offset: offset, size: size)
    }

    /// `rawDuration`: the stated duration (0 included), nil when unknown; `units`: as
    /// ``PendingSample/units``.
    private func append(track ti: Int, pts rawPts: Int64, dts rawDts: Int64, duration rawDuration: Int64?, isKeyframe: Bool,
                        data: [UInt8], units: [Range<Int>] = [], source: FileSource?, offset: Int64, size: Int) throws {
        guard !finished, let file else { throw MediaError(.state, "write after finish or cancel", path: path) }
        guard ti >= 0, ti < tracks.count else {
            throw MediaError(.invalidArgument, "track \(ti) does not exist (the muxer has \(tracks.count))", path: path)
        }
        guard size <= Int(UInt32.max) else { throw MediaError(.limit, "a sample of \(size) bytes does not fit an MP4 sample size", path: path) }
        // Fragments: an empty packet is dropped, as FFmpeg's mov muxer drops every one ("Discard
        // 0 sized packets"): FFmpeg 5.1 refuses a file whose trun lists a sample of 0 bytes. (The
        // sample tables of a progressive file hold one, and FFmpeg reads it: kept there.)
        if size == 0 && isFragmentedLayout { return }
        do {
            if !started { try start(file) }
            if pendingSegment != nil { try openPendingSegment() }
            let m = tracks[ti].tickMultiplier
            // Timestamps from a damaged file or a caller can be anything: within ±2^60 ticks
            // (MovieWriter.timeLimit) the sums and differences below cannot overflow; what an
            // MP4 field cannot hold is refused, naming the track and the value.
            let dts = try ticks(rawDts, track: ti, "dts"), pts = try ticks(rawPts, track: ti, "pts")
            let duration = try rawDuration.map { d in
                let v = try ticks(d, track: ti, "the packet duration")
                // FFmpeg's mov muxer refuses a duration out of range too ("out of range for mov/mp4 format").
                guard v >= 0, v <= Int64(UInt32.max) else {
                    throw MediaError(.invalidArgument, "track \(ti): the packet duration \(d) is out of range for MP4 (0 to 2^32-1 ticks)", path: path)
                }
                return v
            }
            func difference(_ a: Int64, _ b: Int64) throws -> Int64 { try checked(a.subtractingReportingOverflow(b)) }
            func checked(_ r: (partialValue: Int64, overflow: Bool)) throws -> Int64 {
                let (d, overflow) = r
                if overflow {
                    throw MediaError(.invalidArgument, "track \(ti): the timestamps pts \(rawPts), dts \(rawDts) are too far from the track's others to be written", path: path)
                }
                return d
            }
            guard tracks[ti].sizes.count < Int(UInt32.max) - 1 else {
                throw MediaError(.limit, "track \(ti): more than \(UInt32.max - 1) samples do not fit an MP4 sample table", path: path)
            }
            if tracks[ti].firstDts != nil {
                let delta = try difference(dts, tracks[ti].lastDts)
                guard delta >= 0 else {
                    throw MediaError(.invalidArgument, "track \(ti): dts \(rawDts) goes back from \(tracks[ti].lastDts / m)", path: path)
                }
                guard delta <= Int64(UInt32.max) else {
                    throw MediaError(.limit, "track \(ti): dts \(rawDts) is \(delta) ticks after the previous one; an MP4 sample duration (stts) holds 32 bits", path: path)
                }
                if tracks[ti].pcmFrameSize == 0 { tracks[ti].appendStts(delta) }
                if let last = tracks[ti].pending.indices.last { tracks[ti].pending[last].duration = delta }
            } else {
                tracks[ti].firstDts = dts
                tracks[ti].origin = min(dts, 0)
                let byEdit = MuxTrack.shiftsEarlyStartByEdit(firstDts: dts, sourceEdits: tracks[ti].sourceEdits, fragmented: isFragmentedLayout)
                tracks[ti].compositionBase = byEdit ? 0 : tracks[ti].origin
            }
            let frameSize = tracks[ti].pcmFrameSize
            if frameSize > 0 && (size == 0 || size % frameSize != 0) {
                throw MediaError(.invalidArgument, "track \(ti): a packet of \(size) bytes is not a whole number of \(frameSize)-byte PCM frames (\(tracks[ti].parameters.codec), \(tracks[ti].parameters.channels) channels)", path: path)
            }
            if isFragmentedLayout { try maybeCutFragment(before: ti, dts: dts, isKeyframe: isKeyframe) }
            let composition = try difference(pts, try difference(dts, tracks[ti].compositionBase))
            guard Int32(exactly: composition) != nil, Int32(exactly: composition + tracks[ti].compositionShift) != nil else {
                throw MediaError(.limit, "track \(ti): pts \(rawPts) is \(composition) ticks from dts \(rawDts); an MP4 composition offset (ctts) holds 32 bits", path: path)
            }
            if frameSize == 0 { tracks[ti].appendCtts(composition) }
            let decodeTime = try difference(dts, tracks[ti].firstDts ?? 0)
            tracks[ti].minComposition = min(tracks[ti].minComposition, try checked(decodeTime.addingReportingOverflow(composition)))
            tracks[ti].lastDts = dts
            // The last sample's duration until a next one says otherwise: the stated one, else
            // (unknown) a PCM packet's frame count or the previous sample's.
            if frameSize > 0 {
                tracks[ti].lastDuration = duration ?? Int64(size / frameSize)
            } else {
                tracks[ti].lastDuration = duration ?? (tracks[ti].stts.last.map { Int64($0.delta) } ?? 0)
            }
            tracks[ti].maxCompositionEnd = max(tracks[ti].maxCompositionEnd, decodeTime + composition + tracks[ti].lastDuration)
            if frameSize > 0 {
                guard tracks[ti].pcmFrames + size / frameSize <= Int(UInt32.max) else {
                    throw MediaError(.limit, "track \(ti): more than \(UInt32.max) PCM frames do not fit an MP4 sample table", path: path)
                }
                tracks[ti].pcmFrames += size / frameSize
            } else {
                tracks[ti].sizes.append(UInt32(size))
                if isKeyframe { tracks[ti].syncSamples.append(UInt32(tracks[ti].sizes.count)) }
            }
            // Uncompressed audio: a packet that is not a whole number of reader packets ends its
            // chunk (MuxTrack.endsChunk); the chunk is written when the next one starts, as a
            // source chunk is, so the output keeps the source's order.
            if !isFragmentedLayout, let last = tracks[ti].pending.indices.last, tracks[ti].endsChunk(last) {
                try flushChunk(of: ti, file)
            }
            if let source {
                if sources[ObjectIdentifier(source)] == nil { sources[ObjectIdentifier(source)] = source }
                // Copying file to file: a chunk ends where the source's chunk ends, so the output
                // keeps the source's interleaving and consecutive chunks coalesce into one
                // in-kernel copy (see `copyRun`).
                if !isFragmentedLayout, let last = tracks[ti].pending.last, last.sourceOffset >= 0,
                   last.sourceOffset + Int64(last.size) != offset || pendingSources[ti] !== source {
                    try flushChunk(of: ti, file)
                }
                pendingSources[ti] = source
            }
            tracks[ti].pending.append(PendingSample(data: data, units: units, sourceOffset: source == nil ? -1 : offset, size: size, dts: dts,
                                                    compositionOffset: composition + tracks[ti].compositionShift,
                                                    duration: tracks[ti].lastDuration, isKey: isKeyframe))
            tracks[ti].pendingBytes += size
            fragmentBytes += size
            if !isFragmentedLayout {
                let span = Double(dts - tracks[ti].pending[0].dts + tracks[ti].lastDuration) / Double(tracks[ti].timeScale)
                if source != nil {
                    // Chunks follow the source's; a source chunk longer than 2 chunk durations is split.
                    if span >= options.chunkSeconds * 2 || tracks[ti].pendingBytes >= 16 << 20 { try flushChunk(of: ti, file) }
                } else if span >= options.chunkSeconds || tracks[ti].pendingBytes >= 4 << 20 {
                    try flushChunks(file)
                }
            }
        } catch let e as MediaError {
            abandon()
            throw e.at(path: path)
        }
    }

    private func start(_ file: OutputFile) throws {
        started = true
        guard !tracks.isEmpty else { throw MediaError(.state, "write before any addTrack", path: path) }
        if !movieTimeScaleChosen, adaptedScales.count == 1, let scale = adaptedScales.first { options.movieTimeScale = scale }
        referenceTrack = tracks.firstIndex { $0.parameters.mediaType == .video } ?? 0
        if isFragmentedLayout, let ti = tracks.firstIndex(where: { $0.sampleEntry.isEmpty }) {
            throw MediaError(.invalidArgument, "track \(ti) (\(tracks[ti].parameters.codec)): no extradata, and the fragmented moov is written at the first packet of any track, before this track's parameter sets; give them in extradata or write its first packet first", path: path)
        }
        // A hybrid file ends progressive: its brands are a progressive file's from the start.
        var fragments = false
        if case .fragmented = options.layout { fragments = true }
        try file.write(MovieWriter.ftyp(tracks: tracks, fragmented: fragments, brand: brand))
        switch options.layout {
        case .progressive, .fastStart:
            if case .fastStart = options.layout, options.reservedMoovBytes > 0 {
                var w = BoxWriter()
                w.box("free") { $0.zeros(max(0, options.reservedMoovBytes - 8)) }
                try file.write(w.bytes)
            }
            mdatStart = file.bytesWritten
            var w = BoxWriter()
            w.u32(1); w.fourCC("mdat"); w.u64(0)     // 64-bit size, patched on finish
            try file.write(w.bytes)
        case .fragmented, .hybrid:
            initMoovOffset = file.bytesWritten
            try file.write(try MovieWriter.moov(tracks: tracks, movieTimeScale: options.movieTimeScale, fragmented: true, userData: userDataToWrite))
            try file.flush()
        }
    }

    /// Writes one track's pending chunk. Copying from a source file, the pending chunks of
    /// other tracks that begin earlier in that source go first: read in file order, they are
    /// complete (the chunks of a file do not overlap), and the output keeps the source's order.
    private func flushChunk(of ti: Int, _ file: OutputFile) throws {
        guard !tracks[ti].pending.isEmpty else { return }
        let start = tracks[ti].pending[0].sourceOffset
        if start >= 0, let source = pendingSources[ti] {
            let earlier = tracks.indices.filter {
                $0 != ti && !tracks[$0].pending.isEmpty && pendingSources[$0] === source
                    && tracks[$0].pending[0].sourceOffset >= 0 && tracks[$0].pending[0].sourceOffset < start
            }
            for other in earlier.sorted(by: { tracks[$0].pending[0].sourceOffset < tracks[$1].pending[0].sourceOffset }) {
                try writeChunk(of: other, file)
            }
        }
        try writeChunk(of: ti, file)
    }

    /// Writes one track's pending samples as a chunk.
    private func writeChunk(of ti: Int, _ file: OutputFile) throws {
        let offset = UInt64(position(file))
        try writeData(of: ti, to: file)
        tracks[ti].chunks.append((offset, tracks[ti].tableSamples(tracks[ti].pending.indices)))
        tracks[ti].pending.removeAll(keepingCapacity: true)
        tracks[ti].pendingBytes = 0
    }

    /// Writes every track's pending chunk, the earliest first (interleaved by time); chunks
    /// copied from one source file go in the source's order, so the output keeps its interleaving.
    private func flushChunks(_ file: OutputFile) throws {
        let waiting = tracks.indices.filter { !tracks[$0].pending.isEmpty }
        let source = waiting.first.flatMap { pendingSources[$0] }
        let fromOneSource = source != nil && waiting.allSatisfy { pendingSources[$0] === source && tracks[$0].pending[0].sourceOffset >= 0 }
        let order = fromOneSource ? waiting.sorted { tracks[$0].pending[0].sourceOffset < tracks[$1].pending[0].sourceOffset } : waiting.sorted {
            Double(tracks[$0].pending[0].dts) / Double(tracks[$0].timeScale) < Double(tracks[$1].pending[0].dts) / Double(tracks[$1].timeScale)
        }
        for ti in order {
            let offset = UInt64(position(file))
            try writeData(of: ti, to: file)
            tracks[ti].chunks.append((offset, tracks[ti].tableSamples(tracks[ti].pending.indices)))
            tracks[ti].pending.removeAll(keepingCapacity: true)
            tracks[ti].pendingBytes = 0
        }
    }

    /// Writes the bytes of a track's pending samples. Ranges of a source file are not copied
    /// at once: consecutive ranges (across chunks and tracks) coalesce into one copy.
    private func writeData(of ti: Int, to file: OutputFile) throws {
        try writeData(of: ti, samples: tracks[ti].pending.indices, to: file)
    }

    /// Writes the bytes of some of a track's pending samples (a run of a fragment).
    private func writeData(of ti: Int, samples range: Range<Int>, to file: OutputFile) throws {
        let samples = tracks[ti].pending
        var i = range.lowerBound
        while i < range.upperBound {
            let s = samples[i]
            if s.sourceOffset >= 0, let source = pendingSources[ti] {
                var end = s.sourceOffset + Int64(s.size)
                var j = i + 1
                while j < range.upperBound, samples[j].sourceOffset == end { end += Int64(samples[j].size); j += 1 }
                if let run = copyRun, run.source === source, run.offset + run.count == s.sourceOffset {
                    copyRun?.count += end - s.sourceOffset
                } else {
                    try flushCopyRun(file)
                    copyRun = (source, s.sourceOffset, end - s.sourceOffset)
                }
                i = j
            } else {
                try flushCopyRun(file)
                if s.units.isEmpty {
                    try file.write(s.data)
                } else {
                    // Each unit's length was checked to fit 32 bits (AnnexBConversion.sampleUnits).
                    for u in s.units {
                        try withUnsafeBytes(of: UInt32(truncatingIfNeeded: u.count).bigEndian) { try file.write($0) }
                        try file.write(s.data[u])
                    }
                }
                i += 1
            }
        }
    }

    /// A source range not copied yet (it is the last thing in the output).
    private var copyRun: (source: FileSource, offset: Int64, count: Int64)?

    private func flushCopyRun(_ file: OutputFile) throws {
        guard let run = copyRun else { return }
        copyRun = nil
        try file.appendCopy(fromDescriptor: run.source.descriptor, offset: run.offset, count: run.count, sourcePath: run.source.path)
    }

    /// The output position, counting a pending copy.
    private func position(_ file: OutputFile) -> Int64 { file.bytesWritten + (copyRun?.count ?? 0) }

    private func maybeCutFragment(before ti: Int, dts: Int64, isKeyframe: Bool) throws {
        guard let file else { return }
        let ref = tracks[referenceTrack]
        if fragmentStartDts == nil {
            if ti == referenceTrack { fragmentStartDts = dts }
            return
        }
        let hasPending = tracks.contains { !$0.pending.isEmpty }
        guard hasPending else { return }
        let elapsed = Double(ti == referenceTrack ? dts - fragmentStartDts! : 0) / Double(ref.timeScale)
        let cut = (!segmented && ti == referenceTrack && isKeyframe && elapsed >= fragmentSeconds) || fragmentBytes >= 256 << 20
        if cut {
            try writeFragment(file)
            if ti == referenceTrack { fragmentStartDts = dts }
        }
    }

    /// The runs of a fragment: each track's pending samples cut into runs of at most
    /// ``Options/chunkSeconds``, in the order their data goes into the `mdat` (by start
    /// time, then track), so the tracks stay interleaved within a fragment as they are in a
    /// progressive file: a reader that looks at the first bytes of a fragment sees every
    /// track that starts there.
    private func fragmentRuns() -> [MovieWriter.FragmentRun] {
        var runs: [(run: MovieWriter.FragmentRun, start: Double)] = []
        for ti in tracks.indices where !tracks[ti].pending.isEmpty {
            let t = tracks[ti]
            let limit = Int64(max(options.chunkSeconds, 0.001) * Double(t.timeScale))
            var first = 0, bytes = 0
            for i in t.pending.indices {
                // A run is a chunk of the hybrid file's moov: uncompressed audio ends one after a
                // packet that is not a whole number of reader packets (see MuxTrack.endsChunk).
                if i > first, t.pending[i].dts - t.pending[first].dts >= limit || t.endsChunk(i - 1) {
                    runs.append((MovieWriter.FragmentRun(track: ti, samples: first..<i, bytes: bytes, dataOffset: 0),
                                 Double(t.pending[first].dts) / Double(t.timeScale)))
                    first = i; bytes = 0
                }
                bytes += t.pending[i].size
            }
            runs.append((MovieWriter.FragmentRun(track: ti, samples: first..<t.pending.count, bytes: bytes, dataOffset: 0),
                         Double(t.pending[first].dts) / Double(t.timeScale)))
        }
        runs.sort { a, b in a.start != b.start ? a.start < b.start : (a.run.track, a.run.samples.lowerBound) < (b.run.track, b.run.samples.lowerBound) }
        var offset = 0
        return runs.map { r in
            var run = r.run
            run.dataOffset = offset
            offset += run.bytes
            return run
        }
    }

    private func writeFragment(_ file: OutputFile) throws {
        guard tracks.contains(where: { !$0.pending.isEmpty }) else { return }
        sequence += 1
        let total = tracks.reduce(0) { $0 + $1.pendingBytes }
        let large = total + 8 > Int(UInt32.max)
        let mdatHeader = large ? 16 : 8
        let runs = fragmentRuns()
        var moof = try MovieWriter.moof(sequence: sequence, tracks: tracks, runs: runs, mdatHeader: mdatHeader)
        // Crash safety: the moof goes out typed `free` and becomes a `moof` (one 4-byte
        // write) only once all of its mdat is in the file. A process killed while writing
        // the fragment leaves an ignorable free box, never a moof describing missing data.
        // (A pipe or device cannot be rewritten: there the moof is written as it is.)
        let deferred = !file.isStream
        if deferred { moof.replaceSubrange(4..<8, with: Array("free".utf8)) }
        try flushCopyRun(file)
        let moofOffset = file.bytesWritten
        moofOffsets.append(moofOffset)
        var times: [Int: Int64] = [:]
        for t in tracks where !t.pending.isEmpty { times[t.id] = t.pending[0].dts - t.origin }
        fragmentTimes.append((moofOffset, times))
        try file.write(moof)
        var w = BoxWriter()
        if large { w.u32(1); w.fourCC("mdat"); w.u64(UInt64(total + 16)) } else { w.u32(UInt32(total + 8)); w.fourCC("mdat") }
        try file.write(w.bytes)
        for run in runs {
            let offset = UInt64(position(file))
            try writeData(of: run.track, samples: run.samples, to: file)
            tracks[run.track].chunks.append((offset, tracks[run.track].tableSamples(run.samples)))
        }
        for ti in tracks.indices where !tracks[ti].pending.isEmpty {
            tracks[ti].pending.removeAll(keepingCapacity: true)
            tracks[ti].pendingBytes = 0
        }
        fragmentBytes = 0
        try flushCopyRun(file)
        try file.flush()
        if deferred { try file.patch(Array("moof".utf8), at: moofOffset + 4) }
    }

    // MARK: finishing

    /// Completes the file and renames it to ``path``.
    /// - Throws: `.io` when a write fails; the temporary file is then removed and
    ///   the target name left untouched.
    public func finish() throws {
        guard !finished, self.file != nil else { throw MediaError(.state, "finish after finish or cancel", path: path) }
        do {
            if !chapterSamples.isEmpty { try writeChapterSamples() }
            if let file = self.file, !started { try start(file) }
            if pendingSegment != nil { try openPendingSegment() }
            guard let file = self.file else { throw MediaError(.state, "finish after finish or cancel", path: path) }
            for ti in eac3Tracks.keys.sorted() { try buildEAC3SampleEntry(track: ti) }
            if let ti = tracks.firstIndex(where: { $0.sampleEntry.isEmpty }) {
                let codec = tracks[ti].parameters.codec
                let what = codec == "eac3" ? "no E-AC-3 frame for its dec3" : "no parameter sets for its \(codec == "h264" ? "avcC" : "hvcC")"
                throw MediaError(.invalidArgument, "track \(ti) (\(codec)): no extradata and no packet written, so \(what)", path: path)
            }
            for (ti, preSkip) in opusTracks {
                if let edit = retimer.opusEdit(track: ti, preSkip: preSkip) { replaceEdits(track: ti, [edit], movieTimeScale: 48000) }
            }
            // The last sample of each track: its duration is the packet's (no next dts).
            for i in tracks.indices where tracks[i].sampleCount > 0 && tracks[i].pcmFrameSize == 0 {
                tracks[i].appendStts(tracks[i].lastDuration)
            }
            switch options.layout {
            case .progressive:
                try flushChunks(file)
                try patchMdatSize(file)
                try file.write(try MovieWriter.moov(tracks: tracks, movieTimeScale: finalMovieTimeScale, fragmented: false, userData: userDataToWrite))
                try file.commit()
            case .fastStart:
                try flushChunks(file)
                try finishFastStart(file)
            case .fragmented:
                try writeFragment(file)
                if options.writeMfra {
                    try file.write(try MovieWriter.mfra(tracks: tracks, fragments: fragmentTimes))
                }
                try file.commit()
            case .hybrid:
                try writeFragment(file)
                try finishHybrid(file)
            }
            finished = true
            self.file = nil
        } catch let e as MediaError {
            abandon()
            throw e.at(path: path)
        }
    }

    /// The movie time scale of a progressive `moov`: ``Options/movieTimeScale``, or a multiple
    /// of it when an empty edit (a track whose decode times start late) would otherwise be
    /// rounded, which would move that track against the others by a fraction of a tick.
    private var finalMovieTimeScale: Int64 {
        MovieWriter.exactMovieTimeScale(options.movieTimeScale, tracks: tracks)
    }

    private func patchMdatSize(_ file: OutputFile) throws {
        try flushCopyRun(file)
        let size = file.bytesWritten - mdatStart
        var w = BoxWriter()
        w.u64(UInt64(size))
        try file.patch(w.bytes, at: mdatStart + 8)
    }

    private func finishFastStart(_ file: OutputFile) throws {
        try patchMdatSize(file)
        let scale = finalMovieTimeScale
        let ftypSize = Int64(MovieWriter.ftyp(tracks: tracks, fragmented: false, brand: brand).count)
        if options.reservedMoovBytes > 0 {
            let moov = try MovieWriter.moov(tracks: tracks, movieTimeScale: scale, fragmented: false, userData: userDataToWrite)
            let gap = Int(mdatStart - ftypSize)
            if moov.count == gap || moov.count + 8 <= gap {
                var w = BoxWriter()
                w.append(moov)
                if moov.count < gap { w.box("free") { $0.zeros(gap - moov.count - 8) } }
                try file.patch(w.bytes, at: ftypSize)
                try file.commit()
                return
            }
        }
        // Rewrite: ftyp + moov (offsets shifted) + the media data, copied in the kernel.
        let mdatLength = file.bytesWritten - mdatStart
        var moov: [UInt8] = []
        var shift: Int64 = 0
        // The moov's size depends on the shift only through stco -> co64: iterate to a fixed point.
        for _ in 0..<4 {
            shift = ftypSize + Int64(moov.count) - mdatStart
            let next = try MovieWriter.moov(tracks: tracks, movieTimeScale: scale, fragmented: false, chunkShift: shift, userData: userDataToWrite)
            let done = next.count == moov.count
            moov = next
            if done { break }
        }
        guard shift == ftypSize + Int64(moov.count) - mdatStart else {
            throw MediaError(.state, "the moov size did not settle while moving it to the front", path: path)
        }
        let out = try OutputFile(path: path)
        do {
            try out.write(MovieWriter.ftyp(tracks: tracks, fragmented: false, brand: brand))
            try out.write(moov)
            let fd = try file.flushedDescriptor()
            try out.appendCopy(fromDescriptor: fd, offset: mdatStart, count: mdatLength, sourcePath: file.temporaryPath)
            try out.commit()
        } catch {
            out.discard()
            throw error
        }
        file.discard()
    }

    private func finishHybrid(_ file: OutputFile) throws {
        // 1. The progressive moov at the end (the fragments' data are its chunks).
        try file.write(try MovieWriter.moov(tracks: tracks, movieTimeScale: finalMovieTimeScale, fragmented: false, userData: userDataToWrite))
        try file.flush()
        // 2. The fragmented moov at the front and every moof become free boxes.
        try file.patch(Array("free".utf8), at: initMoovOffset + 4)
        for o in moofOffsets { try file.patch(Array("free".utf8), at: o + 4) }
        try file.commit()
    }

    /// Abandons the file: the temporary (or `.partial`) file is removed.
    public func cancel() {
        abandon()
    }

    private func abandon() {
        finished = true
        file?.discard()
        file = nil
        for p in completedSegments { try? FileManager.default.removeItem(atPath: p) }
        completedSegments = []
    }
}

extension MP4Muxer: DirectCopyMuxer {
    /// Copies `wanted` tracks of an ``MP4Demuxer`` file to file (the remux of `mk-remux`):
    /// sample data goes from file to file in the kernel; track facts (language, rotation, edit
    /// lists, sample entries MediaKit does not know), track references and the movie's user
    /// data are carried over. Returns false for any other demuxer.
    /// - Throws: `.unsupported` for an encrypted track or a source that is not a regular file;
    ///   the demuxer's and the muxer's errors.
    public func copyDirectly(from demuxer: Demuxer, tracks wanted: [Int], cut: inout MediaError?, progress: ((Int, Int) throws -> Void)?) throws -> Bool {
        guard let demuxer = demuxer as? MP4Demuxer else { return false }
        guard !started else { throw MediaError(.state, "copyDirectly after the first write", path: path) }
        let all = demuxer.tracks
        if case .fastStart = options.layout, options.reservedMoovBytes == 0 {
            // Room for the moov before the media data, so that finish() copies nothing: the
            // source's moov and a quarter more (a fragmented source's moov has no tables:
            // 16 bytes per sample). When it does not fit, finish() copies the data once.
            let samples = wanted.reduce(0) { $0 + all[$1].sampleCount }
            options.reservedMoovBytes = min(Self.maxReservedMoovBytes,
                                            4096 + Int(clamping: demuxer.movieBoxSize) * 5 / 4 + (demuxer.isFragmented ? samples * 16 : 0))
        }
        if !movieTimeScaleChosen {
            let scales = Set(wanted.map { all[$0].movieTimeScale }.filter { $0 > 0 })
            if scales.count == 1, let s = scales.first { options.movieTimeScale = s }
            movieTimeScaleChosen = true
        }
        if options.userData.isEmpty { options.userData = demuxer.userData }
        var map = [Int: Int]()
        for t in wanted { map[t] = try addTrack(from: all[t]) }
        for (from, refs) in demuxer.trackReferences {
            guard let f = map[from] else { continue }
            for r in refs {
                let to = r.tracks.compactMap { map[$0] }
                if !to.isEmpty { try addTrackReference(from: f, type: r.type, to: to) }
            }
        }
        // The whole sample table is known before the first write: fragments can then
        // store composition offsets that are never negative (see announceTimestamps).
        for t in wanted {
            guard let out = map[t] else { continue }
            let info = (0..<all[t].sampleCount).lazy.compactMap { demuxer.sampleInfo(track: t, index: $0) }
            try announceTimestamps(track: out, info.map { (pts: $0.pts, dts: $0.dts) })
        }
        demuxer.select(tracks: Set(wanted))
        let total = max(1, all.filter { map[$0.index] != nil }.reduce(0) { $0 + $1.sampleCount })
        var done = 0
        // Sample bytes go file to file in the kernel.
        guard let source = demuxer.file else {
            throw MediaError(.unsupported, "remux copies sample bytes file to file: the input must be a regular file, not a stream", path: demuxer.path)
        }
        while true {
            let next: SampleReference?
            do {
                next = try demuxer.readReference()
            } catch let e as MediaError where e.kind == .truncated {
                cut = e   // the samples before the cut are copied, as ffmpeg's stream copy of a cut file
                break
            }
            guard let s = next else { break }
            guard let out = map[s.trackIndex] else { continue }
            try writeSample(track: out, pts: s.pts, dts: s.dts, duration: s.duration, isKeyframe: s.isKeyframe,
                            from: source, offset: s.offset, size: s.size)
            done += 1
            try progress?(done, total)
        }
        return true
    }
}

extension MP4Muxer: PresentationMuxer, PartialFileMuxer {
    /// One edit: `duration` units from `mediaTime` (``replaceEdits(track:_:movieTimeScale:)``).
    public func setPresentation(track: Int, mediaTime: Int64, duration: Int64, timeScale: Int64) {
        replaceEdits(track: track, [EditListEntry(segmentDuration: duration, mediaTime: mediaTime, mediaRate: 1)], movieTimeScale: timeScale)
    }
}

extension MP4Muxer: SegmentingMuxer {
    /// True in the fragmented layout: the `ftyp` and the `moov` (with its `mvex`, no samples)
    /// are written on their own at the first packet, so a segment started before it leaves the
    /// file this muxer was made with an initialization segment (CMAF's header, HLS's
    /// `#EXT-X-MAP`) and every sample in the segments.
    public var writesInitializationSegment: Bool {
        if case .fragmented = options.layout { return true }
        return false
    }

    /// Makes the next packet written the first of a new file, `path` (a CMAF media segment:
    /// `styp`, then `moof` + `mdat`): the samples before it complete the current file's last
    /// fragment and that file is renamed into place (as ``finish()`` renames the last). From
    /// then on fragments are cut only where a segment starts (a fragment over 256 MiB aside),
    /// their sequence numbers and decode times (`tfdt`) running on across files, and no `mfra`
    /// is written (its offsets would point into one file). The fragmented layout only.
    /// - Throws: `.state` after ``finish()`` or ``cancel()``; `.unsupported` for another layout
    ///   (a hybrid file rewrites its fragments in place at the end).
    public func startSegment(path next: String) throws {
        guard !finished, file != nil else { throw MediaError(.state, "startSegment after finish or cancel", path: path) }
        guard case .fragmented = options.layout else {
            throw MediaError(.unsupported, "only a fragmented MP4 can be cut into segments, not one with the \(options.layout) layout", path: path)
        }
        segmented = true
        options.writeMfra = false
        pendingSegment = next
    }

    /// Completes the current file (its pending samples as a last fragment) and opens the
    /// pending segment, starting it with a `styp` box.
    private func openPendingSegment() throws {
        guard let next = pendingSegment, let current = file else { return }
        pendingSegment = nil
        try writeFragment(current)
        try current.commit()
        completedSegments.append(current.path)
        file = nil
        let segment = try OutputFile(path: next)
        file = segment
        try segment.write(MovieWriter.styp())
    }
}
