import CMediaKitPlugin
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds and loads codec plugins, and creates decoders and demuxers.
///
/// Plugins are shared libraries exporting `mediakit_plugin_entry` (see
/// `Include/mediakit/mediakit_plugin.h`). ``shared`` searches, in order:
/// 1. the directories in `MEDIAKIT_PLUGIN_PATH` (colon-separated; every `.so` in them);
/// 2. the directory of the running executable and of the library holding
///    MediaKit (files named `libMediaKitPlugin*.so`), so a plain `swift build` tree works;
/// 3. `<prefix>/lib/mediakit/plugins` next to the executable or library, then
///    `/usr/local/lib/mediakit/plugins` and `/usr/lib/mediakit/plugins`.
///
/// Setting `MEDIAKIT_NO_DEFAULT_PLUGINS=1` keeps only 1.
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
        public let codec: String
        /// The backend's name within its plugin.
        public let name: String
        /// Audio or video.
        public let mediaType: MediaType
        /// Higher wins when several backends decode the same codec.
        public let priority: Int
        /// The plugin that carries it.
        public let plugin: Plugin
        nonisolated(unsafe) let raw: UnsafePointer<mk_plugin_backend>
    }

    /// One picture converter of a loaded plugin (see ``PictureConverter``).
    public struct Converter: Sendable {
        /// The converter's name within its plugin ("swscale").
        public let name: String
        /// Higher wins when several converters can do a conversion.
        public let priority: Int
        /// The plugin that carries it.
        public let plugin: Plugin
        nonisolated(unsafe) let raw: UnsafePointer<mk_plugin_converter>

        /// True when the converter takes `source` pictures and returns `target` ones.
        public func supports(_ source: PixelFormat, to target: PixelFormat) -> Bool {
            raw.pointee.supports?(source.rawValue, target.rawValue) == 1
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
    // convertPicture(_:to:)'s one cached converter, used under conversionLock.
    let conversionLock = NSLock()
    var cachedConverter: PictureConverter?
    var cachedConverterRange = 0
    private var _searched: [String] = []
    private var _failures: [MediaError] = []
    private var loadedFiles: Set<String> = []

    /// Creates an empty registry (no plugins until ``load(path:)`` or ``loadDefaultLocations()``).
    public init() {}

    /// The plugins loaded so far, in load order.
    public var plugins: [Plugin] { loadDefaultsIfPending(); return lock.withLock { _plugins } }
    /// Every codec backend, highest priority first.
    public var backends: [Backend] { loadDefaultsIfPending(); return lock.withLock { _backends.sorted { $0.priority > $1.priority } } }
    /// Every picture converter, highest priority first.
    public var converters: [Converter] { loadDefaultsIfPending(); return lock.withLock { _converters.sorted { $0.priority > $1.priority } } }
    /// Every file or directory looked at so far, in order.
    public var searchedLocations: [String] { loadDefaultsIfPending(); return lock.withLock { _searched } }
    /// Plugins that were found but refused (wrong ABI, missing entry point ...).
    public var loadFailures: [MediaError] { loadDefaultsIfPending(); return lock.withLock { _failures } }

    /// The default search locations, in order (see the type's documentation).
    public static func defaultLocations() -> [(path: String, pattern: String?)] {
        var out: [(String, String?)] = []
        let env = ProcessInfo.processInfo.environment
        for dir in (env["MEDIAKIT_PLUGIN_PATH"] ?? "").split(separator: ":") where !dir.isEmpty {
            out.append((String(dir), nil))
        }
        if env["MEDIAKIT_NO_DEFAULT_PLUGINS"] == "1" { return out }
        var dirs: [String] = []
        if let exe = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            dirs.append((exe as NSString).deletingLastPathComponent)
        }
        var buffer = [CChar](repeating: 0, count: 4096)
        if mkhost_image_path(#dsohandle, &buffer, buffer.count) == 0 {
            let lib = (String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) as NSString).deletingLastPathComponent
            if !dirs.contains(lib) { dirs.append(lib) }
        }
        for d in dirs { out.append((d, "libMediaKitPlugin")) }
        var prefixes: [String] = []
        for d in dirs {
            prefixes.append(((d as NSString).deletingLastPathComponent as NSString).appendingPathComponent("lib/mediakit/plugins"))
            prefixes.append((d as NSString).appendingPathComponent("mediakit/plugins"))
        }
        prefixes += ["/usr/local/lib/mediakit/plugins", "/usr/lib/mediakit/plugins"]
        for p in prefixes where !out.contains(where: { $0.0 == p }) { out.append((p, nil)) }
        return out
    }

    /// Searches the default locations. Failures are recorded in ``loadFailures``, not thrown.
    public func loadDefaultLocations() {
        for (dir, pattern) in Self.defaultLocations() {
            loadDirectory(dir, namePrefix: pattern)
        }
    }

    private func loadDirectory(_ dir: String, namePrefix: String?) {
        lock.withLock { _searched.append(dir) }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return }
        for name in names.sorted() where name.hasSuffix(".so") || name.contains(".so.") {
            if let p = namePrefix, !name.hasPrefix(p) { continue }
            do { _ = try load(path: (dir as NSString).appendingPathComponent(name)) } catch let e as MediaError {
                lock.withLock { _failures.append(e) }
            } catch {}
        }
    }

    /// Loads one plugin file, or every `.so` in a directory.
    /// - Returns: the plugin (for a directory, the last one loaded).
    /// - Throws: `.notFound` if nothing is there, `.pluginABI` if the file is not a
    ///   MediaKit plugin or was built for another ABI version.
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
        if lock.withLock({ loadedFiles.contains(canonical) }) { return lock.withLock { _plugins.first { $0.path == path } } }
        if !lock.withLock({ _searched.contains(path) }) { lock.withLock { _searched.append(path) } }
        // Look before loading: a library that does not export the entry point is never
        // loaded (its constructors never run; libmediakit itself may sit in the same folder).
        if ELFSymbols.defines(MK_PLUGIN_ENTRY_SYMBOL, in: path) == false {
            throw MediaError(.pluginABI, "not a MediaKit plugin: it does not export \(MK_PLUGIN_ENTRY_SYMBOL)", path: path)
        }
        // A loaded library is never closed: frames handed out may point into it, and a
        // library linked with a language runtime cannot always be unloaded safely.
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let msg = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw MediaError(.pluginABI, "cannot load the shared library: \(msg)", path: path)
        }
        guard let sym = dlsym(handle, MK_PLUGIN_ENTRY_SYMBOL) else {
            throw MediaError(.pluginABI, "not a MediaKit plugin: it does not export \(MK_PLUGIN_ENTRY_SYMBOL)", path: path)
        }
        let entry = unsafeBitCast(sym, to: mk_plugin_entry_fn.self)
        guard let desc = entry() else {
            throw MediaError(.pluginABI, "\(MK_PLUGIN_ENTRY_SYMBOL) returned NULL", path: path)
        }
        // The ABI version is read before any other field.
        let abi = desc.pointee.abi_version
        guard abi == MK_PLUGIN_ABI_VERSION else {
            throw MediaError(.pluginABI, "the plugin was built for plugin ABI version \(abi); this MediaKit supports version \(MK_PLUGIN_ABI_VERSION). Rebuild the plugin against this MediaKit's mediakit_plugin.h", path: path)
        }
        let d = desc.pointee
        guard d.struct_size >= UInt32(MemoryLayout<mk_plugin_descriptor>.offset(of: \.reserved)!) else {
            throw MediaError(.pluginABI, "the plugin descriptor is \(d.struct_size) bytes, too small for ABI version 1", path: path)
        }
        let plugin = Plugin(name: d.name.map { String(cString: $0) } ?? "(unnamed)",
                            version: d.version.map { String(cString: $0) } ?? "",
                            summary: d.description.map { String(cString: $0) } ?? "",
                            path: path)
        var found: [Backend] = []
        if d.backend_count > 0 {
            guard let list = d.backends, d.backend_count < 10_000 else {
                throw MediaError(.pluginABI, "the plugin declares \(d.backend_count) backends but no valid list", path: path)
            }
            for i in 0..<Int(d.backend_count) {
                let b = list + i
                guard b.pointee.struct_size >= UInt32(MemoryLayout<mk_plugin_backend>.offset(of: \.reserved)!),
                      let codec = b.pointee.codec, b.pointee.create != nil else {
                    throw MediaError(.pluginABI, "backend \(i) of the plugin is malformed (struct size, codec or create missing)", path: path)
                }
                let type: MediaType = b.pointee.media_type == MK_PLUGIN_MEDIA_AUDIO ? .audio : .video
                found.append(Backend(codec: String(cString: codec), name: b.pointee.name.map { String(cString: $0) } ?? plugin.name,
                                     mediaType: type, priority: Int(b.pointee.priority), plugin: plugin, raw: b))
            }
        }
        var converters: [Converter] = []
        let convertersEnd = MemoryLayout<mk_plugin_descriptor>.offset(of: \.converters)! + MemoryLayout<UnsafePointer<mk_plugin_converter>?>.size
        if Int(d.struct_size) >= convertersEnd && d.converter_count > 0 {
            guard let list = d.converters, d.converter_count < 1_000 else {
                throw MediaError(.pluginABI, "the plugin declares \(d.converter_count) picture converters but no valid list", path: path)
            }
            for i in 0..<Int(d.converter_count) {
                let c = list + i
                guard c.pointee.struct_size >= UInt32(MemoryLayout<mk_plugin_converter>.offset(of: \.reserved)!),
                      c.pointee.supports != nil, c.pointee.create != nil else {
                    throw MediaError(.pluginABI, "picture converter \(i) of the plugin is malformed (struct size, supports or create missing)", path: path)
                }
                converters.append(Converter(name: c.pointee.name.map { String(cString: $0) } ?? plugin.name,
                                            priority: Int(c.pointee.priority), plugin: plugin, raw: c))
            }
        }
        // The handle is never closed: frames handed out may still point into the plugin.
        lock.withLock {
            loadedFiles.insert(canonical)
            if _plugins.contains(where: { $0.name == plugin.name }) {
                _failures.append(MediaError(.pluginABI, "a plugin named '\(plugin.name)' is already loaded from \(_plugins.first { $0.name == plugin.name }!.path); this copy is ignored", path: path))
                return
            }
            _plugins.append(plugin)
            _backends.append(contentsOf: found)
            _converters.append(contentsOf: converters)
        }
        return plugin
    }

    /// The backends that decode `codec`, highest priority first.
    public func backends(for codec: String) -> [Backend] {
        backends.filter { $0.codec == codec }
    }

    /// Creates a decoder for a stream.
    /// - Parameters:
    ///   - parameters: the stream's codec parameters (from ``Track/parameters``).
    ///   - timeBase: the time base of the packets that will be sent (and of the frames' pts).
    ///   - backend: ask for one backend by its name or its plugin's name ("ffmpeg"); nil picks by priority.
    ///   - threads: decoder threads; 0 (the default) lets the backend use every core.
    /// - Throws: `.notFound` naming the codec, every place searched and every plugin loaded,
    ///   when no backend fits; the backend's own error when creation fails.
    public func makeDecoder(for parameters: CodecParameters, timeBase: Rational, backend: String? = nil, threads: Int = 0) throws -> Decoder {
        guard !parameters.codec.isEmpty else {
            throw MediaError(.unsupported, "no decoder for sample entry '\(parameters.codecTag)': MediaKit does not know this codec")
        }
        var candidates = backends(for: parameters.codec)
        if let backend { candidates = candidates.filter { $0.name == backend || $0.plugin.name == backend } }
        guard !candidates.isEmpty else { throw noDecoderError(parameters.codec, backend: backend) }
        var errors: [String] = []
        for b in candidates {
            var cfg = mk_plugin_codec_config()
            cfg.struct_size = UInt32(MemoryLayout<mk_plugin_codec_config>.size)
            cfg.media_type = parameters.mediaType == .audio ? MK_PLUGIN_MEDIA_AUDIO : MK_PLUGIN_MEDIA_VIDEO
            cfg.time_base_num = Int32(clamping: timeBase.numerator)
            cfg.time_base_den = Int32(clamping: timeBase.denominator)
            cfg.width = Int32(clamping: parameters.width)
            cfg.height = Int32(clamping: parameters.height)
            cfg.sample_rate = Int32(clamping: parameters.sampleRate)
            cfg.channels = Int32(clamping: parameters.channels)
            cfg.bits_per_coded_sample = Int32(clamping: parameters.bitsPerCodedSample)
            cfg.block_align = Int32(clamping: parameters.blockAlign)
            cfg.video_delay = Int32(clamping: parameters.reorderDepth)
            cfg.thread_count = Int32(clamping: threads)
            var instance: UnsafeMutableRawPointer?
            var vt: UnsafePointer<mk_plugin_decoder_vtable>?
            var errbuf = [CChar](repeating: 0, count: 1024)
            let status: Int32 = parameters.codec.withCString { codec in
                parameters.extradata.withUnsafeBufferPointer { extra in
                    cfg.codec = codec
                    cfg.extradata = extra.baseAddress
                    cfg.extradata_size = extra.count
                    return b.raw.pointee.create(&cfg, &instance, &vt, &errbuf, errbuf.count)
                }
            }
            if status == MK_PLUGIN_OK, let instance, let vt {
                guard vt.pointee.struct_size >= UInt32(MemoryLayout<mk_plugin_decoder_vtable>.offset(of: \.reserved)!),
                      vt.pointee.send_packet != nil, vt.pointee.receive_frame != nil, vt.pointee.destroy != nil, vt.pointee.flush != nil else {
                    vt.pointee.destroy?(instance)   // what can be freed is
                    throw MediaError(.pluginABI, "the \(b.plugin.name) backend for \(parameters.codec) returned an incomplete vtable", path: b.plugin.path)
                }
                return PluginDecoder(parameters: parameters, timeBase: timeBase, backend: b, instance: instance, vtable: vt)
            }
            let msg = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            errors.append("\(b.plugin.name) (\(b.plugin.path)): status \(status)\(msg.isEmpty ? "" : ": " + msg)")
        }
        throw MediaError(.backend, "every backend for \(parameters.codec) failed to start: " + errors.joined(separator: "; "))
    }

    /// Creates a converter from `source` to `target` pictures of `width` x `height`.
    /// - Parameters:
    ///   - colorRange: the source pictures' range as on ``Frame/colorRange`` (a full-range
    ///     source becomes limited range in a YUV target, as in the `ffmpeg` tool).
    ///   - colorSpace: the source pictures' matrix (``Frame/colorSpace``).
    /// - Throws: `.notFound` naming the conversion, the plugins loaded and every place
    ///   searched when no plugin converts it; the converter's own error when creation fails.
    public func makePictureConverter(from source: PixelFormat, to target: PixelFormat, width: Int, height: Int,
                                     colorRange: Int = 0, colorSpace: Int = 2) throws -> PictureConverter {
        let candidates = converters.filter { $0.supports(source, to: target) }
        guard !candidates.isEmpty else {
            throw notFoundError("no picture converter from \(source.name) to \(target.name) (the FFmpeg plugin has one, libswscale)")
        }
        var errors: [String] = []
        for c in candidates {
            var cfg = mk_plugin_converter_config()
            cfg.struct_size = UInt32(MemoryLayout<mk_plugin_converter_config>.size)
            cfg.src_format = source.rawValue
            cfg.dst_format = target.rawValue
            cfg.width = Int32(clamping: width)
            cfg.height = Int32(clamping: height)
            cfg.color_range = Int32(clamping: colorRange)
            cfg.color_space = Int32(clamping: colorSpace)
            var instance: UnsafeMutableRawPointer?
            var vt: UnsafePointer<mk_plugin_converter_vtable>?
            var errbuf = [CChar](repeating: 0, count: 1024)
            let status = c.raw.pointee.create(&cfg, &instance, &vt, &errbuf, errbuf.count)
            if status == MK_PLUGIN_OK, let instance, let vt {
                guard vt.pointee.struct_size >= UInt32(MemoryLayout<mk_plugin_converter_vtable>.offset(of: \.reserved)!),
                      vt.pointee.convert != nil, vt.pointee.destroy != nil else {
                    vt.pointee.destroy?(instance)   // what can be freed is
                    throw MediaError(.pluginABI, "the \(c.plugin.name) \(c.name) converter returned an incomplete vtable", path: c.plugin.path)
                }
                return PictureConverter(source: source, target: target, width: width, height: height, name: c.name,
                                        plugin: c.plugin, instance: instance, vtable: vt)
            }
            let msg = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            errors.append("\(c.plugin.name) \(c.name) (\(c.plugin.path)): status \(status)\(msg.isEmpty ? "" : ": " + msg)")
        }
        throw MediaError(.backend, "every picture converter from \(source.name) to \(target.name) failed to start: " + errors.joined(separator: "; "))
    }

    private func noDecoderError(_ codec: String, backend: String?) -> MediaError {
        var msg = "no decoder for \(codec)"
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
    /// first bytes (`"-"` is standard input); see ``ContainerCatalog/open(_:)``.
    /// - Throws: `.unsupported` naming the file and what its first bytes are when no demuxer
    ///   recognises it; the demuxer's own errors otherwise.
    public func makeDemuxer(path: String) throws -> Demuxer {
        try ContainerCatalog.shared.open(ByteSources.open(path: path)).demuxer
    }

    /// Opens a container on `source` (probed once, then handed to the demuxer as it is).
    public func makeDemuxer(source: ByteSource) throws -> Demuxer {
        try ContainerCatalog.shared.open(source).demuxer
    }
}
