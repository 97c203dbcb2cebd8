import CMediaKitPlugin
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The catalogue of codec plugins, their decoder backends and picture converters; creates
/// decoders, picture converters and demuxers.
///
/// Plugins are shared libraries exporting `mediakit_plugin_entry` (plugin ABI version 2, see
/// `Include/mediakit/mediakit_plugin.h`); `PluginLoader` finds and checks them, this type
/// keeps what was loaded. ``shared`` searches, in order:
/// 1. the directories in `MEDIAKIT_PLUGIN_PATH` (colon-separated; every `.so` in them);
/// 2. the directory of the running executable and of the library holding
///    MediaKit (files named `libMediaKitPlugin*.so`), so a plain `swift build` tree works;
/// 3. `<prefix>/lib/mediakit/plugins` next to the executable or library, then
///    `/usr/local/lib/mediakit/plugins` and `/usr/lib/mediakit/plugins`.
///
/// Setting `MEDIAKIT_NO_DEFAULT_PLUGINS=1` keeps only 1. `MEDIAKIT_LOG_LEVEL` (quiet, error,
/// warning, info, debug, trace; default quiet) is the level plugins log at, on standard error.
public final class MediaRegistry: @unchecked Sendable {
    /// One loaded plugin.
    public struct Plugin: Sendable, Hashable {
        /// The name the plugin gives itself ("ffmpeg").
        public let name: String
        /// Its version string.
        public let version: String
        /// Its description.
        public let summary: String
        /// The file it was loaded from.
        public let path: String
    }

    /// One codec backend of a loaded plugin.
    public struct Backend: Sendable {
        /// The codec it decodes ("h264").
        public let codec: CodecID
        /// The backend's name within its plugin.
        public let name: String
        /// Audio or video.
        public let mediaType: MediaType
        /// Higher wins when several backends decode the same codec.
        public let priority: Int
        /// The plugin that carries it.
        public let plugin: Plugin
        nonisolated(unsafe) let raw: UnsafePointer<mk_plugin_decoder_backend>
    }

    /// One encoder backend of a loaded plugin (plugin ABI 2.1; video since 2.3): what it takes and makes.
    public struct EncoderBackend: Sendable {
        /// The codec it writes ("aac", "h264").
        public let codec: CodecID
        /// Audio, or video (plugin ABI 2.3: ``pixelFormats`` then lists what it takes).
        public let mediaType: MediaType
        /// The pixel formats a video encoder takes, preferred first; empty for audio.
        public let pixelFormats: [PixelFormat]
        /// The backend's name within its plugin.
        public let name: String
        /// Higher wins when several backends encode the same codec.
        public let priority: Int
        /// The sample formats it takes, preferred first.
        public let sampleFormats: [SampleFormat]
        /// The rates it takes; empty: any rate in ``sampleRateRange``.
        public let sampleRates: [Int]
        /// With ``sampleRates`` empty, the rates it takes.
        public let sampleRateRange: ClosedRange<Int>
        /// Channels it takes: 1 to this.
        public let maxChannels: Int
        /// The WAVE channel masks it takes (one per channel count); empty: the default order of each count.
        public let channelMasks: [UInt64]
        /// The bit rates (bits per second) it can be asked for; nil when it takes none.
        public let bitRateRange: ClosedRange<Int>?
        /// The plugin that carries it.
        public let plugin: Plugin
        nonisolated(unsafe) let raw: UnsafePointer<mk_plugin_encoder_backend>

        /// True when it takes `rate` Hz.
        public func accepts(sampleRate rate: Int) -> Bool {
            sampleRates.isEmpty ? sampleRateRange.contains(rate) : sampleRates.contains(rate)
        }

        /// The rate to encode audio of `rate` Hz at: `rate` itself when taken, else the lowest taken
        /// rate above it, else the highest below it.
        public func closestSampleRate(to rate: Int) -> Int {
            if accepts(sampleRate: rate) { return rate }
            if sampleRates.isEmpty { return min(max(rate, sampleRateRange.lowerBound), sampleRateRange.upperBound) }
            return sampleRates.filter { $0 > rate }.min() ?? sampleRates.max() ?? rate
        }

        /// The PCM to give it for audio of `source`'s format: the source's sample type and
        /// interleaving when taken (then the same type the other way, then the backend's first
        /// choice), the source's rate when taken (else ``closestSampleRate(to:)``) and channels
        /// up to ``maxChannels`` (more are mixed down to the default layout of that many).
        public func inputFormat(for source: AudioFormat, sampleRate: Int? = nil, channels: Int? = nil) -> AudioFormat {
            let exact = sampleFormats.first { $0 == source.sampleFormat }
            let sameType = sampleFormats.first { $0.interleaved == source.sampleType }
            let format = exact ?? sameType ?? sampleFormats.first ?? .f32
            let rate = sampleRate ?? closestSampleRate(to: source.sampleRate)
            let count = min(channels ?? source.channels, max(1, maxChannels))
            let layout = count == source.channels ? source.layout : (ChannelLayout.default(channels: count) ?? source.layout)
            return AudioFormat(format.interleaved, planar: format.isPlanar, sampleRate: rate, layout: layout)
        }
    }

    /// One picture converter of a loaded plugin (see ``PictureConverter``).
    public struct Converter: Sendable {
        /// The converter's name within its plugin ("swscale").
        public let name: String
        /// Higher wins when several converters can do a conversion.
        public let priority: Int
        /// The plugin that carries it.
        public let plugin: Plugin
        nonisolated(unsafe) let raw: UnsafePointer<mk_plugin_picture_converter>

        /// True when the converter takes `source` pictures and returns `target` ones.
        public func supports(_ source: PixelFormat, to target: PixelFormat) -> Bool {
            raw.pointee.supports?(source.rawValue, target.rawValue) == 1
        }

        /// True when the converter also changes the picture size, with a choice of
        /// ``ScaleFilter`` (plugin ABI 2.2, `MK_PLUGIN_CONVERTER_SCALES`; the FFmpeg plugin's does).
        public var scales: Bool {
            Int(raw.pointee.struct_size) >= PluginLoader.endOf(\mk_plugin_picture_converter.flags)
                && raw.pointee.flags & MK_PLUGIN_CONVERTER_SCALES != 0
        }
    }

    /// One container format a loaded plugin reads (plugin ABI 2.4, `MK_PLUGIN_DEMUXER_FACTORY`;
    /// the FFmpeg plugin lists libavformat's). ``ContainerCatalog`` asks these only for sources
    /// no built-in format claims, or when the caller names one.
    public struct DemuxerFormat: Sendable {
        /// The format's name in its plugin ("avi"; FFmpeg's names, some list several: "mov,mp4,m4a,3gp,3g2,mj2").
        public let name: String
        /// What a person calls it.
        public let longName: String
        /// File name extensions, lower case, without the dot.
        public let extensions: [String]
        /// MIME types.
        public let mimeTypes: [String]
        /// Higher wins among plugin formats at equal scores.
        public let priority: Int
        /// The plugin that carries it.
        public let plugin: Plugin
        nonisolated(unsafe) let raw: UnsafePointer<mk_plugin_demuxer_format>

        /// "plugin:name" ("ffmpeg:avi"): how ``ContainerCatalog/open(_:demuxer:)`` and
        /// `mk-probe --demuxer` name it unambiguously.
        public var qualifiedName: String { "\(plugin.name):\(name)" }

        /// True when `name` names this format: its qualified name, its name, or one of the
        /// comma-separated names in it ("mp4" in "mov,mp4,m4a,3gp,3g2,mj2").
        public func isNamed(_ name: String) -> Bool {
            name == qualifiedName || name == self.name || self.name.split(separator: ",").contains { $0 == name }
                || (name.hasPrefix(plugin.name + ":") && self.name.split(separator: ",").contains { $0 == name.dropFirst(plugin.name.count + 1) })
        }

        /// The plugin's score (0: not this format, up to 100) for a source starting with `head`
        /// whose size is `size` (nil: unknown).
        public func score(_ head: [UInt8], size: Int64?) -> Int {
            guard let score = raw.pointee.score, !head.isEmpty else { return 0 }
            let padded = head + [UInt8](repeating: 0, count: 64)   // the ABI promises 64 zero bytes after
            let s = padded.withUnsafeBufferPointer { score(raw, $0.baseAddress, head.count, size ?? -1) }
            return Int(max(0, min(100, s)))
        }
    }

    /// One container format a loaded plugin writes (plugin ABI 2.5, `MK_PLUGIN_MUXER_FACTORY`;
    /// the FFmpeg plugin lists libavformat's). ``ContainerCatalog`` lists these after every
    /// built-in writer (``MuxerFormat/plugin`` set) and chooses one only for an extension no
    /// built-in writer takes, or when the caller names it.
    public struct PluginMuxerFormat: Sendable {
        /// The format's name in its plugin ("avi"; FFmpeg's names).
        public let name: String
        /// What a person calls it.
        public let longName: String
        /// File name extensions, lower case, without the dot.
        public let extensions: [String]
        /// MIME types.
        public let mimeTypes: [String]
        /// Higher wins among plugin formats for one extension.
        public let priority: Int
        /// The plugin that carries it.
        public let plugin: Plugin
        nonisolated(unsafe) let raw: UnsafePointer<mk_plugin_muxer_format>

        /// "plugin:name" ("ffmpeg:avi"): how `mk-remux --format` and
        /// ``ContainerCatalog/muxerFormat(named:)`` name it unambiguously.
        public var qualifiedName: String { "\(plugin.name):\(name)" }

        /// Whether the format carries `codec` as a track of `mediaType`: true, false, or nil when
        /// the plugin cannot tell (adding the track decides).
        public func carries(_ codec: CodecID, mediaType: MediaType) -> Bool? {
            guard let carries = raw.pointee.carries else { return nil }
            let type: Int32
            switch mediaType {
            case .audio: type = MK_MEDIA_AUDIO
            case .video: type = MK_MEDIA_VIDEO
            case .subtitle: type = MK_MEDIA_SUBTITLE
            case .data: type = MK_MEDIA_DATA
            }
            let answer = codec.rawValue.withCString { carries(raw, type, $0) }
            return answer > 0 ? true : answer == 0 ? false : nil
        }
    }

    /// The registry most programs use. Its default locations are searched the first time
    /// something needs the plugins (a decoder, a converter, the lists of plugins, backends,
    /// places searched or refusals, or an explicit ``load(path:)``), not before: reading a
    /// container needs no plugin, so a program that only demuxes or remuxes never loads one.
    public static let shared: MediaRegistry = {
        let r = MediaRegistry()
        r.defaultsPending = true
        return r
    }()

    /// Guards ``defaultsPending``; recursive, because loading the defaults goes through the
    /// same entry points that ask for them.
    private let defaultsLock = NSRecursiveLock()
    private var defaultsPending = false

    /// Searches the default locations now if this registry defers that to first use.
    private func loadDefaultsIfPending() {
        defaultsLock.withLock {
            guard defaultsPending else { return }
            defaultsPending = false
            loadDefaultLocations()
        }
    }

    private let lock = NSLock()
    private var _plugins: [Plugin] = []
    private var _backends: [Backend] = []
    private var _converters: [Converter] = []
    private var _encoders: [EncoderBackend] = []
    private var _demuxers: [DemuxerFormat] = []
    private var _muxers: [PluginMuxerFormat] = []
    private var _searched: [String] = []
    private var _failures: [MediaError] = []
    private var loadedFiles: Set<String> = []
    private var refusedFiles: [String: MediaError] = [:]
    /// Serialises loading plugin files (see ``load(path:)``).
    private let loadLock = NSLock()

    /// Creates an empty registry (no plugins until ``load(path:)`` or ``loadDefaultLocations()``).
    public init() {}

    /// The number of plugins added so far (none is ever removed): what the registry lists
    /// (backends, converters, encoders, container formats) changes only when it does. Listings
    /// built from the registry (the C API's) are kept while it stays the same.
    package var generation: Int { loadDefaultsIfPending(); return lock.withLock { _plugins.count } }

    /// The plugins loaded so far, in load order.
    public var plugins: [Plugin] { loadDefaultsIfPending(); return lock.withLock { _plugins } }
    /// Every codec backend, highest priority first.
    public var backends: [Backend] { loadDefaultsIfPending(); return lock.withLock { _backends.sorted { $0.priority > $1.priority } } }
    /// Every picture converter, highest priority first.
    public var converters: [Converter] { loadDefaultsIfPending(); return lock.withLock { _converters.sorted { $0.priority > $1.priority } } }
    /// Every encoder backend, highest priority first.
    public var encoderBackends: [EncoderBackend] { loadDefaultsIfPending(); return lock.withLock { _encoders.sorted { $0.priority > $1.priority } } }
    /// Every container format of the loaded plugins (plugin ABI 2.4), highest priority first,
    /// then in load order.
    public var demuxerFormats: [DemuxerFormat] {
        loadDefaultsIfPending()
        return lock.withLock { _demuxers.enumerated().sorted { ($0.element.priority, -$0.offset) > ($1.element.priority, -$1.offset) }.map(\.element) }
    }
    /// Every container format the loaded plugins write (plugin ABI 2.5), highest priority
    /// first, then in load order.
    public var muxerFormats: [PluginMuxerFormat] {
        loadDefaultsIfPending()
        return lock.withLock { _muxers.enumerated().sorted { ($0.element.priority, -$0.offset) > ($1.element.priority, -$1.offset) }.map(\.element) }
    }
    /// Every file or directory looked at so far, in order.
    public var searchedLocations: [String] { loadDefaultsIfPending(); return lock.withLock { _searched } }
    /// Plugins that were found but refused (wrong ABI, missing entry point ...).
    public var loadFailures: [MediaError] { loadDefaultsIfPending(); return lock.withLock { _failures } }

    /// The default search locations, in order (see the type's documentation).
    public static func defaultLocations() -> [(path: String, pattern: String?)] {
        PluginLoader.defaultLocations()
    }

    /// Searches the default locations. Failures are recorded in ``loadFailures``, not thrown.
    public func loadDefaultLocations() {
        for (dir, pattern) in Self.defaultLocations() {
            loadDirectory(dir, namePrefix: pattern)
        }
    }

    private func loadDirectory(_ dir: String, namePrefix: String?) {
        lock.withLock { _searched.append(dir) }
        for path in PluginLoader.candidates(in: dir, namePrefix: namePrefix) ?? [] {
            do { _ = try load(path: path) } catch let e as MediaError {
                lock.withLock { _failures.append(e) }
            } catch {}
        }
    }

    /// Loads one plugin file, or every `.so` in a directory.
    /// - Returns: the plugin (for a directory, the last one loaded).
    /// - Throws: `.notFound` if nothing is there, `.pluginABI` if the file is not a
    ///   MediaKit plugin, was built for another plugin ABI (version 1, or another major
    ///   version than 2; the message names both) or is malformed. A file already loaded is
    ///   not loaded again, and a file refused once is refused again with the same error.
    @discardableResult
    public func load(path: String) throws -> Plugin? {
        loadDefaultsIfPending()   // the default plugins keep precedence over later loads
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else {
            lock.withLock { _searched.append(path) }
            throw MediaError(.notFound, "no plugin file or directory here", path: path)
        }
        if isDir.boolValue {
            let before = plugins.count
            loadDirectory(path, namePrefix: nil)
            return plugins.count > before ? plugins.last : nil
        }
        let real = (try? FileManager.default.destinationOfSymbolicLink(atPath: path)).map {
            $0.hasPrefix("/") ? $0 : ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent($0)
        } ?? path
        let canonical = URL(fileURLWithPath: real).standardizedFileURL.resolvingSymlinksInPath().path
        // One file at a time: a plugin's init runs once, never twice at the same time.
        return try loadLock.withLock {
            if lock.withLock({ loadedFiles.contains(canonical) }) { return lock.withLock { _plugins.first { $0.path == path } } }
            if !lock.withLock({ _searched.contains(path) }) { lock.withLock { _searched.append(path) } }
            // A file refused once is not tried again (its init, if it ran, is not called twice).
            if let refusal = lock.withLock({ refusedFiles[canonical] }) { throw refusal }
            let loaded: PluginLoader.Loaded
            do { loaded = try PluginLoader.loadOnce(path: path, canonical: canonical) } catch let e as MediaError {
                lock.withLock { refusedFiles[canonical] = e }
                throw e
            }
            let plugin = loaded.plugin
            // A second file with a plugin's name is not used here (it stays initialised in the
            // process: another registry may have loaded it first and use it).
            lock.withLock {
                loadedFiles.insert(canonical)
                if let first = _plugins.first(where: { $0.name == plugin.name }) {
                    let e = MediaError(.pluginABI, "a plugin named '\(plugin.name)' is already loaded from \(first.path); this copy is ignored", path: path)
                    _failures.append(e)
                    return
                }
                _plugins.append(plugin)
                _backends.append(contentsOf: loaded.backends)
                _converters.append(contentsOf: loaded.converters)
                _encoders.append(contentsOf: loaded.encoders)
                _demuxers.append(contentsOf: loaded.demuxers)
                _muxers.append(contentsOf: loaded.muxers)
            }
            return plugin
        }
    }

    /// The backends that decode `codec`, highest priority first.
    public func backends(for codec: CodecID) -> [Backend] {
        // Filtered before sorting (the same order: the sort is stable): sorting all of them
        // (~450 from the FFmpeg plugin) for each decoder made was ~5 % of decoding a 1 s WAV.
        loadDefaultsIfPending()
        return lock.withLock { _backends.filter { $0.codec == codec } }.sorted { $0.priority > $1.priority }
    }

    /// The process's thread budget for codec backends: at most this many threads per decoder
    /// (a decoder asked for 0, "every core", gets this many; one asked for more gets this
    /// many), so that several processes (a data loader's workers) do not each take every core.
    /// 0: no budget (the default). Read once from the environment variable `MEDIAKIT_THREADS`
    /// (a positive integer) at first use; setting it applies to decoders made afterwards.
    /// Picture conversions run on the caller's threads, one thread each.
    public static var threadLimit: Int {
        get {
            threadLock.withLock {
                if let set = threadBudget { return set }
                let n = environmentThreadLimit()
                threadBudget = n
                return n
            }
        }
        set { threadLock.withLock { threadBudget = max(0, newValue) } }
    }

    private static let threadLock = NSLock()
    /// Under `threadLock`: ``threadLimit`` once read or set.
    nonisolated(unsafe) private static var threadBudget: Int?

    private static func environmentThreadLimit() -> Int {
        guard let text = ProcessInfo.processInfo.environment["MEDIAKIT_THREADS"], let n = Int(text), n > 0 else { return 0 }
        return n
    }

    /// The threads a decoder asked for `threads` (0: every core) gets under ``threadLimit``.
    static func budgetedThreads(_ threads: Int) -> Int {
        let limit = threadLimit
        guard limit > 0 else { return threads }
        return threads == 0 ? limit : min(threads, limit)
    }

    /// Creates a decoder for a stream.
    /// - Parameters:
    ///   - parameters: the stream's codec parameters (from ``Track/parameters``).
    ///   - timeBase: the time base of the packets that will be sent (and of the frames' pts).
    ///   - backend: ask for one backend by its name or its plugin's name ("ffmpeg"); nil picks by priority.
    ///   - threads: decoder threads; 0 (the default) lets the backend use every core. Both are
    ///     bounded by ``threadLimit`` when one is set.
    /// - Throws: `.notFound` naming the codec, every place searched and every plugin loaded,
    ///   when no backend fits; the backend's own error when creation fails.
    public func makeDecoder(for parameters: CodecParameters, timeBase: Rational, backend: String? = nil, threads: Int = 0) throws -> Decoder {
        guard !parameters.codec.isUnknown else {
            throw MediaError(.unsupported, "no decoder for sample entry '\(parameters.codecTag)': MediaKit does not know this codec")
        }
        var candidates = backends(for: parameters.codec)
        if let backend { candidates = candidates.filter { $0.name == backend || $0.plugin.name == backend } }
        guard !candidates.isEmpty else { throw noDecoderError(parameters.codec, tag: parameters.codecTag, backend: backend) }
        return try createFirst(candidates, "backend for \(parameters.codec)", label: { "\($0.plugin.name) (\($0.plugin.path))" }) {
            try PluginDecoder.make($0, parameters: parameters, timeBase: timeBase, threads: Self.budgetedThreads(threads),
                                   errorBuffer: $1, size: $2)
        }
    }

    /// The encoder backends that write `codec` (and, when `backend` is given, are named so or
    /// come from a plugin named so), highest priority first.
    public func encoderBackends(for codec: CodecID, backend: String? = nil) -> [EncoderBackend] {
        encoderBackends.filter { $0.codec == codec && (backend == nil || $0.name == backend || $0.plugin.name == backend) }
    }

    /// The video encoder backends (plugin ABI 2.3) named `name`: those whose backend name is
    /// `name` ("libx264"), else those that write the codec `name` ("h264"), highest priority first.
    public func videoEncoderBackends(named name: String) -> [EncoderBackend] {
        let video = encoderBackends.filter { $0.mediaType == .video }
        let byName = video.filter { $0.name == name }
        return byName.isEmpty ? video.filter { $0.codec.rawValue == name } : byName
    }

    /// Creates an encoder.
    /// - Parameters:
    ///   - settings: the codec, bit rate or quality and the rest (``EncoderSettings``).
    ///   - input: the PCM that will be sent: a format the backend takes (see
    ///     ``EncoderBackend/inputFormat(for:sampleRate:channels:)`` to pick one, and an
    ///     ``AudioConverter`` to convert to it).
    /// - Throws: `.notFound` naming the codec, the plugins loaded and every place searched when
    ///   no backend writes it; `.unsupported` naming what the backend takes (rates, channel
    ///   counts, bit rates, sample formats) when it refuses `input` or the settings.
    public func makeEncoder(_ settings: EncoderSettings, input: AudioFormat) throws -> Encoder {
        let candidates = encoderBackends(for: settings.codec, backend: settings.backend).filter { $0.mediaType == .audio }
        guard !candidates.isEmpty else {
            var what = "no encoder for \(settings.codec)"
            if let b = settings.backend { what += " in a backend named '\(b)'" }
            if settings.codec == "mp3" { what += " (the FFmpeg plugin's needs a libavcodec built with libmp3lame)" }
            throw notFoundError(what)
        }
        return try createFirst(candidates, "\(settings.codec) encoder", label: { "\($0.plugin.name) \($0.name)" }) {
            try PluginEncoder.make($0, settings: settings, input: input, errorBuffer: $1, size: $2)
        }
    }

    /// Creates a video encoder (plugin ABI 2.3).
    /// - Parameters:
    ///   - settings: the codec or encoder name, rate control, preset and the rest
    ///     (``VideoEncoderSettings``).
    ///   - input: the pictures that will be sent: a pixel format the backend takes (see
    ///     ``EncoderBackend/pixelFormats``; a ``PicturePipeline`` converts to it).
    /// - Throws: `.notFound` naming the codec, the plugins loaded and every place searched when
    ///   no backend writes it; `.unsupported` naming what the backend takes or refuses (pixel
    ///   formats, an option it does not have).
    public func makeVideoEncoder(_ settings: VideoEncoderSettings, input: VideoFormat) throws -> VideoEncoder {
        let candidates = videoEncoderBackends(named: settings.codec)
        guard !candidates.isEmpty else {
            throw notFoundError("no video encoder named or writing '\(settings.codec)' (the FFmpeg plugin lists libavcodec's, plugin ABI 2.3)")
        }
        return try createFirst(candidates, "\(settings.codec) video encoder", label: { "\($0.plugin.name) \($0.name)" }) {
            try PluginVideoEncoder.make($0, settings: settings, input: input, errorBuffer: $1, size: $2)
        }
    }

    /// Creates a converter from `source` pictures of `width` x `height` to `target` pictures
    /// of `outputWidth` x `outputHeight`.
    /// - Parameters:
    ///   - outputWidth: the width of the pictures returned; default (nil): `width`.
    ///   - outputHeight: the height of the pictures returned; default (nil): `height`.
    ///   - filter: how pictures are resampled (default ``ScaleFilter/bicubic``, the `ffmpeg`
    ///     tool's). A size change, or another filter, needs a converter that ``Converter/scales``.
    ///   - colorRange: the source pictures' range as on ``Frame/colorRange`` (a full-range
    ///     source becomes limited range in a YUV target, as in the `ffmpeg` tool).
    ///   - colorSpace: the source pictures' matrix (``Frame/colorSpace``).
    /// - Throws: `.invalidArgument` for a size that is not positive; `.notFound` naming the
    ///   conversion, the plugins loaded and every place searched when no plugin converts it;
    ///   the converter's own error when creation fails.
    public func makePictureConverter(from source: PixelFormat, to target: PixelFormat, width: Int, height: Int,
                                     outputWidth: Int? = nil, outputHeight: Int? = nil, filter: ScaleFilter = .bicubic,
                                     colorRange: ColorRange = .unspecified, colorSpace: ColorMatrix = .unspecified) throws -> PictureConverter {
        let outW = outputWidth ?? width, outH = outputHeight ?? height
        guard width > 0, height > 0, outW > 0, outH > 0 else {
            throw MediaError(.invalidArgument, "a picture converter from \(width)x\(height) to \(outW)x\(outH): sizes must be positive")
        }
        let scaling = outW != width || outH != height || filter != .bicubic
        let candidates = converters.filter { $0.supports(source, to: target) && (!scaling || $0.scales) }
        guard !candidates.isEmpty else {
            let what = scaling ? " that scales \(width)x\(height) to \(outW)x\(outH) (\(filter.name); plugin ABI 2.2)" : ""
            throw notFoundError("no picture converter from \(source.name) to \(target.name)\(what) (the FFmpeg plugin has one, libswscale)")
        }
        return try createFirst(candidates, "picture converter from \(source.name) to \(target.name)",
                               label: { "\($0.plugin.name) \($0.name) (\($0.plugin.path))" }) {
            try PictureConverter.make($0, from: source, to: target, width: width, height: height, outputWidth: outW,
                                      outputHeight: outH, filter: filter, colorRange: colorRange, colorSpace: colorSpace,
                                      errorBuffer: $1, size: $2)
        }
    }

    /// The one create loop of decoders and converters: tries each candidate in order and
    /// returns the first instance made. `create` gets an error buffer for the plugin's message
    /// and answers the plugin's status with the instance, or nil when the plugin refused; when
    /// every candidate refused, the error lists each one (`label`), its status and message, and
    /// keeps the last one's as ``MediaError/underlying``.
    private func createFirst<Candidate, Instance>(
        _ candidates: [Candidate], _ what: String, label: (Candidate) -> String,
        _ create: (Candidate, UnsafeMutablePointer<CChar>, Int) throws -> (Int32, Instance?)
    ) throws -> Instance {
        var errors: [String] = []
        var last: MediaError.Cause?
        var errbuf = [CChar](repeating: 0, count: 1024)
        for candidate in candidates {
            errbuf[0] = 0
            let (status, made) = try errbuf.withUnsafeMutableBufferPointer { try create(candidate, $0.baseAddress!, $0.count) }
            if let made { return made }
            let msg = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            errors.append("\(label(candidate)): status \(status)\(msg.isEmpty ? "" : ": " + msg)")
            last = .plugin(status: status, message: msg)
        }
        // The cause kept is the last candidate's (the message names every one).
        throw MediaError(.backend, "every \(what) failed to start: " + errors.joined(separator: "; "), underlying: last)
    }

    private func noDecoderError(_ codec: CodecID, tag: String = "", backend: String?) -> MediaError {
        // The container's tag too (a WAV format tag, an MP4 sample entry ...): what the file says.
        var msg = "no decoder for \(codec)" + (tag.isEmpty ? "" : " (codec tag \(tag))")
        if let backend { msg += " in a backend named '\(backend)'" }
        return notFoundError(msg)
    }

    /// `.notFound` with `what`, then the plugins loaded, every place searched, the
    /// plugins refused and how to point the registry at a plugin.
    private func notFoundError(_ what: String) -> MediaError {
        let searched = searchedLocations
        let loaded = plugins
        var msg = what
        msg += ". Plugins loaded: " + (loaded.isEmpty ? "none" : loaded.map { "\($0.name) (\($0.path))" }.joined(separator: ", "))
        msg += ". Places searched: " + (searched.isEmpty ? "none" : searched.joined(separator: ", "))
        let refused = loadFailures
        if !refused.isEmpty { msg += ". Refused: " + refused.map(\.description).joined(separator: "; ") }
        msg += ". Set MEDIAKIT_PLUGIN_PATH to the directory holding the plugin (for example libMediaKitPluginFFmpeg.so)."
        return MediaError(.notFound, msg)
    }

    /// Opens a container with the demuxer of ``ContainerCatalog/shared`` that recognises its
    /// first bytes (`"-"` is standard input), or the one named `demuxer` (a built-in format's
    /// name, "mp4", or a plugin format's, "avi" / "ffmpeg:avi"); see ``ContainerCatalog/open(_:demuxer:)``.
    /// Plugin formats (the FFmpeg plugin's libavformat) are asked only when no built-in one claims the bytes.
    /// - Throws: `.unsupported` naming the file and what its first bytes are when no demuxer
    ///   recognises it; `.notFound` for a `demuxer` name no format has; the demuxer's own errors otherwise.
    public func makeDemuxer(path: String, demuxer: String? = nil) throws -> Demuxer {
        try ContainerCatalog.shared.open(ByteSources.open(path: path), demuxer: demuxer).demuxer
    }

    /// Opens a container on `source` (probed once, then handed to the demuxer as it is), or with
    /// the demuxer named `demuxer`.
    public func makeDemuxer(source: ByteSource, demuxer: String? = nil) throws -> Demuxer {
        try ContainerCatalog.shared.open(source, demuxer: demuxer).demuxer
    }
}
