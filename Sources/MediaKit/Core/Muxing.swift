/// Where a muxer puts its index and how the media data is laid out. MP4 writes all four;
/// the formats written in one pass (Matroska / WebM, Ogg, FLAC, MP3) write ``progressive``
/// only and refuse the others when they are made (``MuxerFormat/make``).
public enum MuxLayout: Sendable, Hashable {
    /// Media data first, the index at the end. Default.
    case progressive
    /// The index at the front, for playback while downloading. MP4 writes its `moov` on
    /// `finish()` into space reserved before the media data when it fits
    /// (``MuxerOptions/reservedIndexBytes``), else by one in-kernel copy of the media data.
    case fastStart
    /// Self-contained fragments every `seconds` (they start at key frames of the first video
    /// track), crash-safe while writing, with a random-access index at the end (MP4 `mfra`).
    case fragmented(seconds: Double)
    /// Written as ``fragmented(seconds:)`` while running; `finish()` appends the index and
    /// turns the fragment headers into padding, in place, without copying the media data.
    case hybrid(seconds: Double)
}

/// How a muxer made by a ``MuxerFormat`` writes its file: one options type for every format.
/// A format takes the options it lists in ``MuxerFormat/options`` and refuses any other that
/// is not at its default, naming it.
public struct MuxerOptions: Sendable, Equatable {
    /// The options a format may take, by the name ``MuxerFormat/options`` lists.
    public enum Name: String, Sendable, CaseIterable {
        /// ``MuxerOptions/layout`` other than progressive.
        case layout
        /// ``MuxerOptions/timeScale``.
        case timeScale = "time-scale"
        /// ``MuxerOptions/chunkSeconds``.
        case chunkSeconds = "chunk-seconds"
        /// ``MuxerOptions/reservedIndexBytes``.
        case reservedIndexBytes = "reserved-index-bytes"
        /// ``MuxerOptions/writeFragmentIndex``.
        case writeFragmentIndex = "fragment-index"
        /// ``MuxerOptions/userData``.
        case userData = "user-data"
        /// ``MuxerOptions/segmentFormat``.
        case segmentFormat = "segment-format"
        /// ``MuxerOptions/id3v2Version``.
        case id3v2Version = "id3v2-version"
        /// ``MuxerOptions/writeID3v2``.
        case writeID3v2 = "write-id3v2"
        /// ``MuxerOptions/rf64``.
        case rf64
    }

    /// When a WAV file is written as RF64 (EBU Tech 3306: an `RF64` header whose sizes are in
    /// a `ds64` chunk, for more than 4 GiB), as FFmpeg's wav muxer `-rf64` option.
    public enum RF64: String, Sendable, CaseIterable {
        /// Always RIFF: more than 4 GiB of samples is refused (`.limit`). FFmpeg's default.
        case never
        /// RIFF with a `JUNK` chunk of the `ds64` size reserved after `WAVE`, made `RF64` and
        /// `ds64` when the file passes 4 GiB.
        case auto
        /// Always RF64 with its `ds64` chunk.
        case always
    }

    /// The layout. Default: ``MuxLayout/progressive``.
    public var layout: MuxLayout = .progressive
    /// The file's time scale (MP4: the movie time scale of `mvhd` and edit list durations);
    /// nil: the format's choice (MP4: 1000, or an encoded track's own rate when one is added
    /// by ``Muxer/addEncodedTrack(_:timeBase:encoderDelay:)``).
    public var timeScale: Int64?
    /// Target chunk duration in seconds for progressive and fast-start files (MP4); nil: 0.5.
    public var chunkSeconds: Double?
    /// Fast-start: bytes reserved before the media data for the index (MP4's `moov`); 0: copy
    /// the media data once on `finish()` instead.
    public var reservedIndexBytes = 0
    /// Fragmented: write a random-access index at the end (MP4 `mfra`). Default: true.
    public var writeFragmentIndex = true
    /// Container metadata written verbatim (MP4: a `udta` box, e.g. ``MP4Demuxer/userData``).
    public var userData: [UInt8] = []
    /// Segmented presentations (HLS): the segments' format, "ts" (MPEG-TS) or "fmp4"
    /// (fragmented MP4 / CMAF: an `init.mp4` and `.m4s` media segments). nil (default): "ts".
    public var segmentFormat: String?
    /// The version of the ID3v2 tags written (MP3's tag; WAV's `id3 ` and AIFF's `ID3 ` chunk
    /// with ``writeID3v2``): 3 (ID3v2.3: TYER / TDAT, ISO-8859-1 or UTF-16 text, as FFmpeg's
    /// `-id3v2_version 3`) or 4 (ID3v2.4, UTF-8 text). nil (default): 4. Other values are
    /// refused by the muxer (`.invalidArgument`).
    public var id3v2Version: Int?
    /// WAV and AIFF: also write the tags, cover art and chapters as an ID3v2 tag in a chunk
    /// after the samples (WAV `id3 `, AIFF `ID3 `, as FFmpeg's aiff muxer `-write_id3v2 1`).
    /// Default: false (WAV: LIST/INFO only; AIFF: NAME, AUTH, `(c) `, ANNO only).
    public var writeID3v2 = false
    /// WAV: when to write RF64 (``RF64``). Default: ``RF64/never``, as FFmpeg.
    public var rf64: RF64 = .never

    /// The time scale a format uses when ``timeScale`` is nil and it has no better one (MP4's 1000).
    public static let defaultTimeScale: Int64 = 1000
    /// The chunk duration when ``chunkSeconds`` is nil: 0.5 s.
    public static let defaultChunkSeconds = 0.5

    /// Options with every default.
    public init(layout: MuxLayout = .progressive) {
        self.layout = layout
    }

    /// ``id3v2Version`` checked: 3 or 4 (nil: 4).
    /// - Throws: `.invalidArgument` for another version.
    func checkedID3v2Version(path: String) throws -> Int {
        let v = id3v2Version ?? 4
        guard v == 3 || v == 4 else {
            throw MediaError(.invalidArgument, "ID3v2 version \(v) is not written: give 3 (ID3v2.3) or 4 (ID3v2.4)", path: path)
        }
        return v
    }

    /// The options set away from their defaults, by name.
    public var changed: [Name] {
        let d = MuxerOptions()
        var names: [Name] = []
        if layout != d.layout { names.append(.layout) }
        if timeScale != d.timeScale { names.append(.timeScale) }
        if chunkSeconds != d.chunkSeconds { names.append(.chunkSeconds) }
        if reservedIndexBytes != d.reservedIndexBytes { names.append(.reservedIndexBytes) }
        if writeFragmentIndex != d.writeFragmentIndex { names.append(.writeFragmentIndex) }
        if userData != d.userData { names.append(.userData) }
        if segmentFormat != d.segmentFormat { names.append(.segmentFormat) }
        if id3v2Version != d.id3v2Version { names.append(.id3v2Version) }
        if writeID3v2 != d.writeID3v2 { names.append(.writeID3v2) }
        if rf64 != d.rf64 { names.append(.rf64) }
        return names
    }
}

/// A muxer that copies a whole demuxer of its own kind better than packet by packet (MP4 to
/// MP4: sample bytes file to file in the kernel, sample entries, track references and user
/// data kept). The remux pipeline offers it the demuxer first.
public protocol DirectCopyMuxer: Muxer {
    /// Copies `tracks` of `demuxer` (indexes checked by the caller) and returns true, or
    /// returns false, having changed nothing, when `demuxer` is not of its kind.
    /// `progress` is called after each sample with (samples written, samples in all). A source
    /// cut short is copied up to the cut, as ``Demuxer/read(untilCut:)`` reads it: `cut` is then
    /// set to the `.truncated` error naming the offset (the sample the cut goes through is left
    /// out) and the copy returns true.
    func copyDirectly(from demuxer: Demuxer, tracks: [Int], cut: inout MediaError?, progress: ((Int, Int) throws -> Void)?) throws -> Bool
}

extension Muxer {
    /// Default: no track needs its first packet.
    public func needsFirstPacket(_ track: Track) -> Bool { false }

    /// Default: ``addTrack(from:)``.
    public func addTrack(from track: Track, firstPacket: [UInt8]?) throws -> Int {
        try addTrack(from: track)
    }

    /// Default: ``addTrack(_:timeBase:)`` (the container has no way to state the priming).
    public func addEncodedTrack(_ parameters: CodecParameters, timeBase: Rational, encoderDelay: Int) throws -> Int {
        try addTrack(parameters, timeBase: timeBase)
    }

    /// Default: nothing (the container has no way to state it; its decoders see the padding).
    public func setGapless(track: Int, presentedDuration: Int64, padding: Int64) throws {}

    /// Default: nothing (the codec configuration written first stays).
    public func updateParameters(_ parameters: CodecParameters, track: Int) throws {}

    /// Default: nothing (the container holds no tags here).
    public func setMetadata(_ metadata: MuxMetadata) throws {}
}

/// A muxer whose container states which part of a track is presented (MP4's edit list), so
/// an encoder's priming and padding can be cut from packets written as they are.
public protocol PresentationMuxer: Muxer {
    /// Presents `duration` units of `track` from `mediaTime`, both in units of 1/`timeScale` s
    /// (the track's time scale, its time base's denominator). Before `finish()`.
    func setPresentation(track: Int, mediaTime: Int64, duration: Int64, timeScale: Int64)
}

/// A muxer whose file is readable under another name while it is written (fragmented MP4's
/// `.partial` file), renamed by `finish()`.
public protocol PartialFileMuxer: Muxer {
    /// The file being written now; after `finish()`, the target path.
    var inProgressPath: String { get }
}

/// A muxer whose stream can be cut into files that play one after the other as one stream
/// (MPEG-TS: the segments of an HLS playlist): each file plays on its own, and the stream's
/// state (continuity counters, timestamps) runs on across the cut.
public protocol SegmentingMuxer: Muxer {
    /// Makes the next packet written (a key frame) the first of a new file, `path`: the
    /// packets before it in the order the muxer writes them (interleaved by DTS) complete the
    /// current file, which is then renamed into place as ``Muxer/finish()`` renames it.
    func startSegment(path: String) throws

    /// True when the file the muxer was made with holds only the stream's header (fragmented
    /// MP4's `ftyp` + `moov`: the initialization segment of an HLS `#EXT-X-MAP`), so that every
    /// packet goes into segments: the first is started before the first packet. Default: false
    /// (the first file holds the first segment's packets).
    var writesInitializationSegment: Bool { get }
}

extension SegmentingMuxer {
    /// Default: false (MPEG-TS: every segment carries its own tables).
    public var writesInitializationSegment: Bool { false }
}
