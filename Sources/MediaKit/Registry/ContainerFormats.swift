import Foundation

/// A container format MediaKit can read: static facts and a factory, registered once.
///
/// The registry probes a source's first bytes with every format's ``probe`` and opens it
/// with the best scorer's ``makeDemuxer``, handing it the same ``ByteSource``. Adding a
/// container is a folder with its demuxer and one `ContainerFormat` value, and one line in
/// ``ContainerCatalog/builtIn``.
public struct ContainerFormat: Sendable {
    /// Short name ("mp4", "ogg", "ivf"), as FFmpeg's format names where they exist.
    public let name: String
    /// What a person calls it ("MP4 / QuickTime").
    public let description: String
    /// File name extensions, lower case, without the dot.
    public let extensions: [String]
    /// MIME types.
    public let mimeTypes: [String]
    /// How sure the format is that these first bytes are its own: 0 (not this format) to 100
    /// (a signature). `size` is the source's size when known.
    public let probe: @Sendable (_ head: [UInt8], _ size: Int64?) -> Int
    /// Opens a demuxer on `source` (read from offset 0).
    public let makeDemuxer: @Sendable (_ source: ByteSource) throws -> Demuxer
    /// True when the packets' timestamps are a running clock that starts anywhere (MPEG-TS's
    /// 90 kHz PTS, 10 s or 26 hours into a broadcast), not times from the start of the file:
    /// a copy into another container (``Remuxer``) starts them at zero, the tracks' offsets to
    /// each other kept, as ffmpeg's stream copy does.
    public let clockTimestamps: Bool
    /// The name of the plugin whose demuxer reads the format ("ffmpeg"), nil for a format
    /// MediaKit has built in (plugin ABI 2.4, see ``ContainerCatalog/open(_:demuxer:)``).
    public internal(set) var plugin: String? = nil
    /// The format's own tag writer (`mk-tag`, ``TagEditor``): replaces the tags of a file in
    /// place where the format leaves room (ID3v2 padding, FLAC PADDING); nil: a tag edit goes
    /// through a remux by the muxer of the file's extension.
    public let tagRewriter: TagRewriter?
    /// The format's tag edit in place whose fallback is a remux (MP4's `free` boxes), nil for
    /// none; see ``InPlaceTagEdit``.
    var inPlaceTagEdit: InPlaceTagEdit? = nil

    /// The name `mk-probe --demuxer` and ``ContainerCatalog/open(_:demuxer:)`` take for it: the
    /// format's name, "plugin:name" for a plugin's ("ffmpeg:avi").
    public var qualifiedName: String { plugin.map { "\($0):\(name)" } ?? name }

    /// Creates a descriptor.
    public init(name: String, description: String, extensions: [String], mimeTypes: [String],
                probe: @escaping @Sendable ([UInt8], Int64?) -> Int,
                makeDemuxer: @escaping @Sendable (ByteSource) throws -> Demuxer, clockTimestamps: Bool = false,
                tagRewriter: TagRewriter? = nil) {
        self.clockTimestamps = clockTimestamps
        self.tagRewriter = tagRewriter
        self.name = name
        self.description = description
        self.extensions = extensions
        self.mimeTypes = mimeTypes
        self.probe = probe
        self.makeDemuxer = makeDemuxer
    }
}

/// A container format MediaKit can write: static facts and a factory, registered once.
///
/// The tools, the C and Python APIs and the pipelines (``Remuxer``, ``Transcoder``) choose a
/// writer through ``ContainerCatalog`` by name or by the output's extension and make it with
/// ``make``; none names a concrete muxer type. Adding a writer is a folder with its ``Muxer``
/// and one `MuxerFormat` value, and one line in ``ContainerCatalog/builtInMuxers``.
public struct MuxerFormat: Sendable {
    /// Short name ("mp4"), as FFmpeg's muxer names where they exist.
    public let name: String
    /// What a person calls it.
    public let description: String
    /// File name extensions that select it, lower case, without the dot.
    public let extensions: [String]
    /// MIME types.
    public let mimeTypes: [String]
    /// The codecs it carries (the muxer may still refuse one in some files, naming why:
    /// MP4 takes MP3 but `.m4a` does not).
    public let codecs: [CodecID]
    /// Codecs it refuses for a reason worth telling (Vorbis in MP4: no registered sample entry).
    public let refusals: [CodecID: String]
    /// The ``MuxerOptions`` it takes; any other set away from its default is refused by ``make``.
    public let options: [MuxerOptions.Name]
    /// The audio codec a transcode writes into it when none is named (`mk-transcode`).
    public let defaultAudioCodec: CodecID?
    /// Which tracks a file of the format holds besides what its codecs say.
    public let trackLimit: TrackLimit
    private let factory: @Sendable (_ path: String, _ options: MuxerOptions) throws -> Muxer
    private let trackTest: (@Sendable (Track) -> Bool)?
    /// The layout that a file of this format written again keeps (``TagEditor``: MP4's `moov`
    /// before or after the media data, or fragments), read from the file; nil: ``MuxLayout/progressive``.
    public let layoutOfFile: (@Sendable (_ source: ByteSource) throws -> MuxLayout)?
    /// The name of the plugin whose muxer writes the format ("ffmpeg"), nil for a format
    /// MediaKit has built in (plugin ABI 2.5, see ``ContainerCatalog/muxerFormat(named:)``).
    public internal(set) var plugin: String? = nil

    /// The name `mk-remux --format` and ``ContainerCatalog/muxerFormat(named:)`` take for it:
    /// the format's name, "plugin:name" for a plugin's ("ffmpeg:avi").
    public var qualifiedName: String { plugin.map { "\($0):\(name)" } ?? name }

    /// Which tracks a file of the format holds.
    public enum TrackLimit: Sendable, Hashable {
        /// Any number of tracks of any kind its codecs allow.
        case none
        /// One subtitle track and nothing else (`.srt`, `.vtt`): a remux keeps the first text
        /// subtitle track, as ffmpeg's default stream choice does.
        case oneSubtitle
    }

    /// Creates a descriptor. `carriesTrack` says whether a demuxed track goes in when its codec
    /// alone does not say it (MP4 carries any track read from an MP4, its sample entry as it
    /// is); nil: ``codecs`` decides. `layoutOfFile`: see ``layoutOfFile``. `trackLimit`: which
    /// tracks a file holds (``TrackLimit``).
    public init(name: String, description: String, extensions: [String], mimeTypes: [String], codecs: [CodecID],
                refusals: [CodecID: String] = [:], options: [MuxerOptions.Name] = [], defaultAudioCodec: CodecID? = nil,
                make: @escaping @Sendable (_ path: String, _ options: MuxerOptions) throws -> Muxer,
                carriesTrack: (@Sendable (Track) -> Bool)? = nil, layoutOfFile: (@Sendable (_ source: ByteSource) throws -> MuxLayout)? = nil,
                trackLimit: TrackLimit = .none) {
        self.trackTest = carriesTrack
        self.layoutOfFile = layoutOfFile
        self.trackLimit = trackLimit
        self.name = name
        self.description = description
        self.extensions = extensions
        self.mimeTypes = mimeTypes
        self.codecs = codecs
        self.refusals = refusals
        self.options = options
        self.defaultAudioCodec = defaultAudioCodec
        self.factory = make
    }

    /// True when the format carries `codec`.
    public func carries(_ codec: CodecID) -> Bool { codecs.contains(codec) }

    /// True when the format carries the demuxed `track` (its codec, or for MP4 a track read
    /// from an MP4).
    public func carries(track: Track) -> Bool { trackTest?(track) ?? carries(track.parameters.codec) }

    /// Why the format does not carry `codec` (nil when it does): its stated reason, or the
    /// codecs it takes.
    public func refusal(of codec: CodecID) -> String? {
        if carries(codec) { return nil }
        if let why = refusals[codec] { return why }
        return "\(description) carries \(codecs.map(\.rawValue).sorted().joined(separator: ", "))"
    }

    /// A muxer writing `path` with `options`. Nothing is written under `path` before the
    /// muxer's `finish()`.
    /// - Throws: `.invalidArgument` naming the options set that this format does not take,
    ///   the muxer's own errors (`.io` when its file cannot be created, `.invalidArgument` for
    ///   values out of range).
    public func make(path: String, options: MuxerOptions = MuxerOptions()) throws -> Muxer {
        let foreign = options.changed.filter { !self.options.contains($0) }
        if !foreign.isEmpty {
            let names = foreign.map(\.rawValue).joined(separator: ", ")
            let takes = self.options.isEmpty ? "it takes none" : "it takes " + self.options.map(\.rawValue).joined(separator: ", ")
            throw MediaError(.invalidArgument, "\(description) files take no \(names) option (\(takes))", path: path)
        }
        return try factory(path, options)
    }
}

/// The container formats MediaKit reads and writes, and the probing that picks one.
public final class ContainerCatalog: @unchecked Sendable {
    /// The formats MediaKit has built in: MP4 / QuickTime, Ogg, IVF, MP3 (MPEG audio), ADTS AAC, WAV, FLAC,
    /// Matroska / WebM, AIFF / AIFF-C, CAF, MPEG-TS, raw AC-3, E-AC-3, DTS and AMR, raw H.264, HEVC and AV1 OBU streams, SubRip and WebVTT subtitles.
    public static let builtIn: [ContainerFormat] = [.mp4, .ogg, .ivf, .mpegAudio, .adts, .wav, .flac, .matroska, .aiff, .caf, .mpegts,
                                                    .ac3, .eac3, .dts, .amr, .h264, .hevc, .obu, .subrip, .webvtt]
    /// The formats MediaKit writes.
    public static let builtInMuxers: [MuxerFormat] = [.mp4, .matroska, .webm, .ogg, .opus, .flac, .mp3, .wav, .aiff, .caf, .mpegts, .hls,
                                                      .subrip, .webvtt]

    /// The catalogue the registry and the tools use; its fallback is the container formats of
    /// ``MediaRegistry/shared``'s plugins (loaded the first time a source needs them).
    public static let shared = ContainerCatalog(plugins: .shared)

    private let lock = NSLock()
    private var readers: [ContainerFormat]
    private var writers: [MuxerFormat]
    /// Where plugin container formats come from (plugin ABI 2.4); nil: built-in formats only.
    private let plugins: MediaRegistry?

    /// Changes whenever what the catalogue lists does: a format registered here (formats are
    /// only ever added, so the counts tell), or a plugin added to its registry. Listings built
    /// from the catalogue (the C API's) are kept while it stays the same.
    package var generation: [Int] { [lock.withLock { readers.count + writers.count }, plugins?.generation ?? 0] }

    /// Bytes read from the start of a source to probe it.
    public static let probeSize = 4096

    /// A catalogue of the built-in formats, falling back on the container formats of the
    /// plugins of `plugins` (nil, the default: none) for sources none of them claims.
    public init(plugins: MediaRegistry? = nil) {
        readers = Self.builtIn
        writers = Self.builtInMuxers
        self.plugins = plugins
    }

    /// The readable formats, built-in first, in registration order.
    public var formats: [ContainerFormat] { lock.withLock { readers } }
    /// The writable formats: the built-in ones, then (plugin ABI 2.5) the plugins' in their
    /// priority and load order (``MuxerFormat/plugin`` set). Reading this loads the plugins.
    public var muxerFormats: [MuxerFormat] { lock.withLock { writers } + pluginMuxerFormats }
    /// The plugins' container formats (plugin ABI 2.4: the FFmpeg plugin's libavformat), in
    /// their plugins' load order: asked only when no built-in format claims a source, or when
    /// named (``open(_:demuxer:)``). Reading this loads the plugins. Empty for a catalogue
    /// without plugins.
    public var pluginFormats: [MediaRegistry.DemuxerFormat] { plugins?.demuxerFormats ?? [] }

    /// The writable formats of the plugins (plugin ABI 2.5: the FFmpeg plugin's libavformat),
    /// after every built-in one: chosen for an extension no built-in writer takes, or when
    /// named. Reading this loads the plugins. Empty for a catalogue without plugins.
    public var pluginMuxerFormats: [MuxerFormat] {
        guard let plugins else { return [] }
        let loaded = plugins.muxerFormats
        return lock.withLock {
            if let cached = pluginWriters, cached.count == loaded.count { return cached }
            let candidates = Self.pluginCodecCandidates(writers)
            let made = loaded.map { MuxerFormat(plugin: $0, candidates: candidates) }
            pluginWriters = made
            return made
        }
    }
    private var pluginWriters: [MuxerFormat]?

    /// The codecs a plugin format's listing is asked about: those of the built-in writers and
    /// a few more that only other containers carry.
    private static func pluginCodecCandidates(_ writers: [MuxerFormat]) -> [CodecID] {
        let more: [CodecID] = ["mpeg4", "mjpeg", "h263", "flv1", "theora", "msmpeg4v3", "wmav2", "wmv2", "vp6f", "adpcm_ima_wav",
                               "adpcm_swf", "nellymoser", "speex", "gsm", "amr_nb", "amr_wb", "pcm_s16le", "pcm_s16be", "pcm_u8",
                               "pcm_alaw", "pcm_mulaw", "pcm_f32le", "rawvideo"]
        return Array(Set(writers.flatMap(\.codecs) + more)).sorted()
    }

    /// Names of ISO BMFF writers a plugin may have besides the built-in writer's "mp4": like
    /// the built-in names, a plugin format of one of them is used only when named
    /// "plugin:name".
    private static let bmffNames: Set<String> = ["mov", "ipod", "ismv", "psp", "f4v", "3gp", "3g2"]

    /// True when a plugin format stands for a container MediaKit writes itself (its name is a
    /// built-in writer's, an ISO BMFF variant's, or its extensions are all a built-in writer's):
    /// then it is chosen only by its qualified name, never by an extension or its bare name.
    private func shadowed(_ f: MuxerFormat) -> Bool {
        let native = lock.withLock { writers }
        let names = Set(native.map(\.name)).union(Self.bmffNames)
        let extensions = Set(native.flatMap(\.extensions))
        return names.contains(f.name) || (!f.extensions.isEmpty && f.extensions.allSatisfy { extensions.contains($0) })
    }

    /// Adds a readable format (probed after the built-in ones at equal scores).
    public func register(_ format: ContainerFormat) { lock.withLock { readers.append(format) } }

    /// The readable format named `name` ("mp4"), or nil.
    public func format(named name: String) -> ContainerFormat? { formats.first { $0.name == name } }

    /// The writable format for a file name's extension ("out.mp4" -> mp4), or nil: a built-in
    /// writer's, else (loading the plugins) the first plugin format that lists the extension
    /// and does not stand for a built-in container (``MuxerFormat/plugin`` set: "out.avi").
    public func muxerFormat(forPath path: String) -> MuxerFormat? {
        let ext = (path as NSString).pathExtension.lowercased()
        if let native = lock.withLock({ writers }).first(where: { $0.extensions.contains(ext) }) { return native }
        guard !ext.isEmpty else { return nil }
        return pluginMuxerFormats.first { $0.extensions.contains(ext) && !shadowed($0) }
    }

    /// The writable format for a file name's extension, or an error saying what MediaKit writes.
    /// - Throws: `.unsupported` naming the extension and every built-in writable format with its
    ///   extensions, and the plugin to load when no plugin writer is loaded.
    public func requireMuxerFormat(forPath path: String) throws -> MuxerFormat {
        if let format = muxerFormat(forPath: path) { return format }
        let known = lock.withLock { writers }.map { "\($0.description): .\($0.extensions.joined(separator: ", ."))" }.joined(separator: "; ")
        let ext = (path as NSString).pathExtension
        throw MediaError(.unsupported, "no muxer writes \(ext.isEmpty ? "files without an extension" : "." + ext + " files"); MediaKit writes \(known)"
                         + pluginWriterNote, path: path)
    }

    /// What an error about a missing writer adds on the plugins: the plugin to load when no
    /// plugin writer is loaded, else how many there are.
    private var pluginWriterNote: String {
        guard let plugins else { return "" }
        let loaded = plugins.muxerFormats
        if loaded.isEmpty {
            return "; no plugin muxer is loaded (the FFmpeg plugin, libMediaKitPluginFFmpeg.so, writes AVI, FLV, NUT and the other formats of libavformat: set MEDIAKIT_PLUGIN_PATH to its directory)"
        }
        return "; nor do the \(loaded.count) muxers of the plugins (\(Set(loaded.map(\.plugin.name)).sorted().joined(separator: ", ")); mk-remux --list-formats lists them)"
    }

    /// The writable format named `name` ("mp4", "webm"), or nil: a built-in writer's name, else
    /// a plugin format's qualified name ("ffmpeg:avi", "ffmpeg:mp4") or its bare name when it
    /// does not stand for a built-in container ("avi").
    public func muxerFormat(named name: String) -> MuxerFormat? {
        if let native = lock.withLock({ writers }).first(where: { $0.name == name }) { return native }
        let plugin = pluginMuxerFormats
        return plugin.first { $0.qualifiedName == name } ?? plugin.first { $0.name == name && !shadowed($0) }
    }

    /// The writable format named `name` (``muxerFormat(named:)``), or an error.
    /// - Throws: `.notFound` naming the built-in writers and the plugin to load.
    public func requireMuxerFormat(named name: String) throws -> MuxerFormat {
        if let format = muxerFormat(named: name) { return format }
        let known = lock.withLock { writers }.map(\.name).joined(separator: ", ")
        throw MediaError(.notFound, "no muxer named '\(name)': built-in ones are \(known)" + pluginWriterNote)
    }

    /// Adds a writable format (chosen after the built-in ones for a shared extension).
    public func register(_ format: MuxerFormat) { lock.withLock { writers.append(format) } }

    /// A muxer that writes `path` in the format its extension names (``requireMuxerFormat(forPath:)``),
    /// made with `options` (``MuxerFormat/make(path:options:)``). Nothing is written under
    /// `path` before the muxer's `finish()`.
    /// - Throws: `.unsupported` for an extension no muxer writes, `.invalidArgument` for options
    ///   the format does not take, the muxer's `.io` when its file cannot be created.
    public func makeMuxer(path: String, options: MuxerOptions = MuxerOptions()) throws -> Muxer {
        try requireMuxerFormat(forPath: path).make(path: path, options: options)
    }

    /// The format of `source` (its first bytes read once) and a demuxer opened on it.
    /// - Throws: `.unsupported` naming what the source starts with and the formats tried when
    ///   none recognises it; the chosen demuxer's own errors otherwise.
    ///
    /// ID3v2 tags in front are looked past whatever their length, as FFmpeg does for every format
    /// (taggers put them before FLAC, MP3, ADTS, WAV ... files): the formats are probed with the
    /// bytes after the tags (only each tag's 10-byte header is read here), and the demuxer, handed
    /// the whole source, skips the tags itself. A format that recognises the bytes after the tags
    /// keeps the better of that score and its score for the first bytes as they are (MP3's probe
    /// rates a tag in front); when none does, the first bytes as they are decide (MP3 and ADTS
    /// then claim a tag with no frame after it, and their demuxer says so).
    ///
    /// Plugin container formats (plugin ABI 2.4: the FFmpeg plugin's libavformat) come after
    /// every built-in one: they are asked only when no built-in format claims the bytes, the
    /// highest score winning (then the plugin's priority), and one that has a built-in format's
    /// name (libavformat's "mov,mp4,...", "ogg") only when named; the format returned then has
    /// ``ContainerFormat/plugin`` set. `demuxer` names one format instead of probing: a built-in
    /// format's name ("mp4"), or a plugin format's ("avi", "ffmpeg:avi"; see
    /// ``MediaRegistry/DemuxerFormat/isNamed(_:)``).
    /// - Throws: also `.notFound` for a `demuxer` name that no format has.
    public func open(_ source: ByteSource, demuxer: String? = nil) throws -> (format: ContainerFormat, demuxer: Demuxer) {
        if let demuxer { return try open(source, named: demuxer) }
        let head = try source.readUpTo(at: 0, count: Self.probeSize)
        let tagsEnd = try ID3.leadingV2TagsEnd(source)
        var scored = formats.map { ($0, $0.probe(head, source.knownSize)) }
        if tagsEnd > 0 {
            let after = try source.readUpTo(at: tagsEnd, count: Self.probeSize)
            let afterScores = formats.map { $0.probe(after, source.knownSize.map { $0 - tagsEnd }) }
            if afterScores.contains(where: { $0 > 0 }) {
                scored = zip(scored, afterScores).map { ($0.0, $1 > 0 ? max($0.1, $1) : 0) }
            }
        }
        scored = scored.filter { $0.1 > 0 }
        if let best = scored.max(by: { $0.1 < $1.1 }) {
            return (best.0, try best.0.makeDemuxer(source))
        }
        let names = formats.map(\.description).joined(separator: ", ")
        if head.isEmpty {
            throw MediaError(.unsupported, "the input is empty; expected one of: \(names)", path: source.name, offset: 0)
        }
        // No built-in format claims it: the plugins' formats, best score first.
        var pluginRefusal = ""
        if let plugins {
            // A plugin format for a container MediaKit reads itself (libavformat's "mov,mp4,...",
            // "matroska,webm", "ogg" ...) is used only when named: bytes the built-in reader does
            // not take are its to refuse, with its own words, not a second reader's to guess at.
            let native = Set(formats.map(\.name))
            let loaded = plugins.demuxerFormats
            let candidates = loaded.filter { !$0.name.split(separator: ",").contains { native.contains(String($0)) } }
            if loaded.isEmpty {
                pluginRefusal = "; no plugin container format is loaded (the FFmpeg plugin, libMediaKitPluginFFmpeg.so, reads AVI, Musepack, WebVTT and the other formats of libavformat: set MEDIAKIT_PLUGIN_PATH to its directory)"
            } else {
                var best: (MediaRegistry.DemuxerFormat, Int)?
                for f in candidates {
                    let score = f.score(head, size: source.knownSize)
                    if score > (best?.1 ?? 0) { best = (f, score) }
                }
                if let f = best?.0 {
                    do {
                        return (ContainerFormat(plugin: f), try PluginDemuxer(format: f, source: source))
                    } catch let e as MediaError where e.kind != .io {
                        pluginRefusal = "; \(e.message)"
                    }
                } else {
                    pluginRefusal = "; nor do the \(candidates.count) container formats of the plugins (\(Set(candidates.map(\.plugin.name)).sorted().joined(separator: ", ")))"
                }
            }
        }
        // No signature: still give the MP4 reader a chance (a damaged first box), and say what
        // the input starts with when it refuses too.
        var refusal = ""
        if let mp4 = format(named: "mp4") {
            do { return (mp4, try mp4.makeDemuxer(source)) } catch let e as MediaError { refusal = "; the MP4 reader refused it: \(e.message)" }
        }
        let shown = head.prefix(8).map { (0x20..<0x7F).contains($0) ? String(UnicodeScalar($0)) : "." }.joined()
        let hex = head.prefix(8).map { String(format: "%02x", $0) }.joined(separator: " ")
        throw MediaError(.unsupported, "the input starts with \"\(shown)\" (\(hex)), which no container MediaKit reads recognises (\(names))\(refusal)\(pluginRefusal)",
                         path: source.name, offset: 0)
    }

    /// `source` opened by the format named `name`: a built-in one, else a plugin's.
    private func open(_ source: ByteSource, named name: String) throws -> (format: ContainerFormat, demuxer: Demuxer) {
        if let native = format(named: name) { return (native, try native.makeDemuxer(source)) }
        let candidates = plugins?.demuxerFormats ?? []
        if let f = candidates.first(where: { $0.qualifiedName == name || $0.name == name }) ?? candidates.first(where: { $0.isNamed(name) }) {
            return (ContainerFormat(plugin: f), try PluginDemuxer(format: f, source: source))
        }
        let known = formats.map(\.name).joined(separator: ", ")
        let more = plugins == nil ? "" : candidates.isEmpty ? "; no plugin container format is loaded (the FFmpeg plugin adds libavformat's)"
            : "; plugin formats: \(candidates.count) (mk-probe --plugins lists them)"
        throw MediaError(.notFound, "no demuxer named '\(name)': built-in ones are \(known)\(more)", path: source.name)
    }
}

extension MuxerFormat {
    /// The descriptor of a plugin's writable format (``plugin`` set): made as a ``PluginMuxer``;
    /// its ``codecs`` are those of `candidates` the plugin says it carries, and it takes a
    /// track unless the plugin says it does not carry its codec.
    init(plugin format: MediaRegistry.PluginMuxerFormat, candidates: [CodecID]) {
        let codecs = candidates.filter { codec in MediaType.allCases.contains { format.carries(codec, mediaType: $0) == true } }
        self.init(name: format.name, description: format.longName.isEmpty ? format.name : format.longName,
                  extensions: format.extensions, mimeTypes: format.mimeTypes, codecs: codecs,
                  make: { path, _ in try PluginMuxer(format: format, path: path) },
                  carriesTrack: { format.carries($0.parameters.codec, mediaType: $0.mediaType) != false })
        plugin = format.plugin.name
    }
}

extension ContainerFormat {
    /// The descriptor of a plugin's container format (``plugin`` set): probed by the plugin's
    /// score, opened as a ``PluginDemuxer``.
    init(plugin format: MediaRegistry.DemuxerFormat) {
        self.init(name: format.name, description: format.longName.isEmpty ? format.name : format.longName,
                  extensions: format.extensions, mimeTypes: format.mimeTypes,
                  probe: { format.score($0, size: $1) }, makeDemuxer: { try PluginDemuxer(format: format, source: $0) })
        plugin = format.plugin.name
    }
}

extension ContainerFormat {
    /// MP4, QuickTime, M4A, 3GP (ISO BMFF), progressive or fragmented.
    public static let mp4: ContainerFormat = {
        var format = ContainerFormat(
            name: "mp4", description: "MP4/MOV (ISO BMFF)", extensions: ["mp4", "m4a", "m4v", "mov", "3gp", "3g2", "mj2", "m4s", "cmfv", "cmfa"],
            mimeTypes: ["video/mp4", "audio/mp4", "video/quicktime", "video/3gpp"],
            probe: { head, size in looksLikeBMFF(head, fileSize: size ?? .max) ? 60 : 0 },
            makeDemuxer: { try MP4Demuxer(source: $0) })
        format.inPlaceTagEdit = MP4TagRewriter.inPlaceEdit
        return format
    }()

    /// Ogg (Opus, Vorbis; Theora and FLAC listed).
    public static let ogg = ContainerFormat(
        name: "ogg", description: "Ogg (\"OggS\")", extensions: ["ogg", "oga", "opus", "ogv", "ogx"],
        mimeTypes: ["audio/ogg", "video/ogg", "application/ogg", "audio/opus"],
        probe: { head, _ in head.starts(with: Array("OggS".utf8)) ? 100 : 0 },
        makeDemuxer: { try OggDemuxer(source: $0) })

    /// IVF (AV1, VP8, VP9 elementary streams with a 32-byte header).
    public static let ivf = ContainerFormat(
        name: "ivf", description: "IVF (\"DKIF\")", extensions: ["ivf"], mimeTypes: ["video/x-ivf"],
        probe: { head, _ in head.starts(with: Array("DKIF".utf8)) ? 100 : 0 },
        makeDemuxer: { try IVFDemuxer(source: $0) })

    /// Matroska and WebM (EBML DocType "matroska" or "webm").
    public static let matroska = ContainerFormat(
        name: "matroska", description: "Matroska/WebM (EBML)", extensions: ["mkv", "mka", "webm", "mk3d", "mks"],
        mimeTypes: ["video/x-matroska", "audio/x-matroska", "video/webm", "audio/webm"],
        probe: { head, _ in matroskaProbeScore(head) },
        makeDemuxer: { try MatroskaDemuxer(source: $0) })

    /// 100 when `head` starts with an EBML header whose DocType is "matroska" or "webm"
    /// (FFmpeg's matroska probe), 50 for an EBML header whose DocType is not in `head`, 0 otherwise.
    static func matroskaProbeScore(_ head: [UInt8]) -> Int {
        guard head.count >= 5, head.starts(with: [0x1A, 0x45, 0xDF, 0xA3]) else { return 0 }
        return head.withUnsafeBytes { raw -> Int in
            guard let size = EBMLVarInt.size(raw, at: 4), !size.unknown else { return 0 }
            let start = 4 + size.length
            let end = min(raw.count, start + Int(min(size.value, 4096)))
            var i = start
            while i < end {
                guard let id = EBMLVarInt.id(raw, at: i), let s = EBMLVarInt.size(raw, at: i + id.length) else { return 50 }
                let data = i + id.length + s.length
                if id.id == MKVID.docType {
                    let n = Int(min(s.value, UInt64(end - data)))
                    let doc = String(decoding: raw[data..<(data + max(0, n))].prefix { $0 != 0 }, as: UTF8.self)
                    return doc == "matroska" || doc == "webm" ? 100 : 0
                }
                i = data + Int(min(s.value, UInt64(end)))
            }
            return 50
        }
    }

    /// True when `head` starts like an ISO BMFF / QuickTime file: a box size that fits the
    /// file (or 0: to the end; 1: a 64-bit size after the type, which must fit) and a type of four printable characters
    /// (ftyp, moov, mdat, free, wide, skip ...).
    static func looksLikeBMFF(_ head: [UInt8], fileSize: Int64) -> Bool {
        guard head.count >= 8 else { return false }
        let size = Int64(head[0]) << 24 | Int64(head[1]) << 16 | Int64(head[2]) << 8 | Int64(head[3])
        guard size == 0 || size == 1 || (8...max(8, fileSize)).contains(size) else { return false }
        if size == 1 {
            // A 64-bit size must follow and fit too: a raw H.264 stream's 00 00 00 01 start code
            // and a printable SPS ("gM@)", Main profile) look like a box header otherwise.
            guard head.count >= 16 else { return false }
            let large = head[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            guard (16...max(16, fileSize)).contains(large) else { return false }
        }
        return head[4..<8].allSatisfy { (0x20..<0x7F).contains($0) }
    }
}

extension MuxerFormat {
    /// HLS (``HLSMuxer``): a VOD media playlist and MPEG-TS segments beside it, carrying what
    /// MPEG-TS carries, or with ``MuxerOptions/segmentFormat`` "fmp4" fragmented MP4 (CMAF)
    /// segments after an `init.mp4`, carrying those codecs and what fragmented MP4 carries
    /// (a codec MP4 refuses is refused when its track is added). Its
    /// ``MuxerOptions/layout`` may be ``MuxLayout/fragmented(seconds:)``: the segment duration
    /// (default ``HLSMuxer/defaultSegmentSeconds``).
    public static let hls = MuxerFormat(
        name: "hls", description: "HLS (MPEG-TS or fMP4 segments)", extensions: ["m3u8"], mimeTypes: ["application/vnd.apple.mpegurl"],
        codecs: MPEGTSMuxer.codecs, options: [.layout, .segmentFormat], defaultAudioCodec: "aac",
        make: { path, options in
            let segments = try HLSMuxer.SegmentFormat(named: options.segmentFormat, path: path)
            switch options.layout {
            case .progressive: return try HLSMuxer(path: path, segmentFormat: segments)
            case .fragmented(let seconds): return try HLSMuxer(path: path, seconds: seconds, segmentFormat: segments)
            case .fastStart, .hybrid:
                throw MediaError(.invalidArgument, "HLS takes a segment duration (the fragmented layout's seconds), not the \(options.layout) layout", path: path)
            }
        })
}
