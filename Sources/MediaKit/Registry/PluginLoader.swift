import CMediaKitPlugin
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds codec plugin files and checks them against the plugin ABI
/// (`Include/mediakit/mediakit_plugin.h`, version 2): the ELF symbol table, `dlopen`, the
/// entry point, the ABI version, `init(host)`, then the factories and every entry they list.
/// Its only state is the process-wide list of plugin files initialised (``loadOnce(path:canonical:)``);
/// ``MediaRegistry`` holds the catalogue of what each registry uses.
enum PluginLoader {
    /// A plugin that passed every check, initialised, with what its factories offer.
    struct Loaded {
        let plugin: MediaRegistry.Plugin
        let backends: [MediaRegistry.Backend]
        let converters: [MediaRegistry.Converter]
        let encoders: [MediaRegistry.EncoderBackend]
        let demuxers: [MediaRegistry.DemuxerFormat]
        let muxers: [MediaRegistry.PluginMuxerFormat]
        nonisolated(unsafe) let descriptor: UnsafePointer<mk_plugin_descriptor>
        /// The host struct given to its init (kept for the process, see ``loadOnce(path:canonical:)``).
        nonisolated(unsafe) let host: UnsafePointer<mk_host>
    }

    /// Every plugin file this process loaded (or refused), by canonical path: a plugin's `init`
    /// runs once per process, whatever the number of registries, and its host struct lives as
    /// long as the process (the plugin keeps the pointer; the library is never unloaded).
    /// Registries share the result.
    private final class Cache: @unchecked Sendable {
        let lock = NSLock()
        var files: [String: Result<Loaded, MediaError>] = [:]
    }
    private static let cache = Cache()

    /// ``load(path:)`` once per process and file (`canonical`: the file's resolved path): a later
    /// call, from any registry, returns the same plugin, or throws the same refusal.
    static func loadOnce(path: String, canonical: String) throws -> Loaded {
        try cache.lock.withLock {
            if let known = cache.files[canonical] { return try known.get() }
            let result: Result<Loaded, MediaError>
            do { result = .success(try load(path: path)) } catch let e as MediaError {
                result = .failure(e)
            }
            cache.files[canonical] = result
            return try result.get()
        }
    }

    /// The plugin ABI this host implements.
    static let abiMajor = MK_PLUGIN_ABI_MAJOR, abiMinor = MK_PLUGIN_ABI_MINOR

    /// The default search locations, in order (see ``MediaRegistry``).
    static func defaultLocations() -> [(path: String, pattern: String?)] {
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

    /// The shared libraries in `dir` (names ending in `.so` or holding `.so.`), sorted, that
    /// start with `namePrefix` when given; nil when the directory cannot be read.
    static func candidates(in dir: String, namePrefix: String?) -> [String]? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return nil }
        return names.sorted().filter { name in
            (name.hasSuffix(".so") || name.contains(".so.")) && (namePrefix.map { name.hasPrefix($0) } ?? true)
        }.map { (dir as NSString).appendingPathComponent($0) }
    }

    /// Loads and checks the plugin file at `path` and calls its `init`.
    /// - Throws: `.pluginABI` naming the file and what is wrong: not a MediaKit plugin, built
    ///   for another ABI version (both versions named), init refused, a malformed factory.
    static func load(path: String) throws -> Loaded {
        func refuse(_ why: String) -> MediaError { MediaError(.pluginABI, why, path: path) }
        // Look before loading: a library that does not export the entry point is never
        // loaded (its constructors never run; libmediakit itself may sit in the same folder).
        if ELFSymbols.defines(MK_PLUGIN_ENTRY_SYMBOL, in: path) == false {
            throw refuse("not a MediaKit plugin: it does not export \(MK_PLUGIN_ENTRY_SYMBOL)")
        }
        // A loaded library is never closed: frames handed out may point into it, and a
        // library linked with a language runtime cannot always be unloaded safely.
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            let msg = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw refuse("cannot load the shared library: \(msg)")
        }
        guard let sym = dlsym(handle, MK_PLUGIN_ENTRY_SYMBOL) else {
            throw refuse("not a MediaKit plugin: it does not export \(MK_PLUGIN_ENTRY_SYMBOL)")
        }
        let entry = unsafeBitCast(sym, to: mk_plugin_entry_fn.self)
        guard let desc = entry() else { throw refuse("\(MK_PLUGIN_ENTRY_SYMBOL) returned NULL") }
        try checkVersion(UnsafeRawPointer(desc), refuse)

        let d = desc.pointee
        let required = endOf(\mk_plugin_descriptor.get_factory)
        guard d.struct_size >= required else {
            throw refuse("the plugin descriptor is \(d.struct_size) bytes, smaller than the \(required) bytes of plugin ABI \(abiMajor).0")
        }
        guard let initialize = d.`init`, d.deinit != nil, let getFactory = d.get_factory else {
            throw refuse("the plugin descriptor lacks init, deinit or get_factory")
        }
        let host = makeHost(path: path)
        let status = initialize(host)
        guard status == MK_OK else {
            freeHost(host)
            throw refuse("the plugin's init refused this host (status \(status)); its log says why (MEDIAKIT_LOG_LEVEL=error)")
        }
        do {
            let description = Int(d.struct_size) >= endOf(\mk_plugin_descriptor.description) ? d.description : nil
            let plugin = MediaRegistry.Plugin(name: d.name.map { String(cString: $0) } ?? "(unnamed)",
                                              version: d.version.map { String(cString: $0) } ?? "",
                                              summary: description.map { String(cString: $0) } ?? "",
                                              path: path)
            let backends = try decoderBackends(getFactory(MK_PLUGIN_DECODER_FACTORY), plugin, refuse)
            let converters = try pictureConverters(getFactory(MK_PLUGIN_PICTURE_CONVERTER_FACTORY), plugin, refuse)
            let encoders = try encoderBackends(getFactory(MK_PLUGIN_ENCODER_FACTORY), plugin, refuse)
            let demuxers = try demuxerFormats(getFactory(MK_PLUGIN_DEMUXER_FACTORY), plugin, refuse)
            let muxers = try muxerFormats(getFactory(MK_PLUGIN_MUXER_FACTORY), plugin, refuse)
            return Loaded(plugin: plugin, backends: backends, converters: converters, encoders: encoders, demuxers: demuxers, muxers: muxers,
                          descriptor: desc, host: host)
        } catch {
            d.deinit()
            freeHost(host)
            throw error
        }
    }

    /// Reads the ABI version before any other field. A version-1 descriptor starts with one
    /// `uint32_t abi_version` (1); version 2 with `{major, minor}`: the first 32 bits are the
    /// major version in both.
    private static func checkVersion(_ desc: UnsafeRawPointer, _ refuse: (String) -> MediaError) throws {
        let major = desc.load(as: UInt32.self)
        guard major != abiMajor else { return }
        let host = "this MediaKit loads plugin ABI version \(abiMajor) (\(abiMajor).\(abiMinor) and any \(abiMajor).x)"
        let rebuild = "Rebuild the plugin against this MediaKit's mediakit_plugin.h"
        if major == 1 {
            throw refuse("the plugin was built for plugin ABI version 1 (v1: no init, no factories); \(host). \(rebuild)")
        }
        let minor = desc.load(fromByteOffset: 4, as: UInt32.self)
        throw refuse("the plugin was built for plugin ABI version \(major).\(minor); \(host). \(rebuild)")
    }

    /// The bytes of `T` up to and including `field`: the struct_size that covers it.
    static func endOf<T, F>(_ field: KeyPath<T, F>) -> Int {
        MemoryLayout<T>.offset(of: field)! + MemoryLayout<F>.size
    }

    /// Entries a factory may list; more means a broken factory.
    private static let entryLimit: UInt32 = 10_000

    private static func decoderBackends(_ raw: UnsafeRawPointer?, _ plugin: MediaRegistry.Plugin,
                                        _ refuse: (String) -> MediaError) throws -> [MediaRegistry.Backend] {
        guard let raw else { return [] }
        let f = raw.assumingMemoryBound(to: mk_plugin_decoder_factory.self).pointee
        guard f.struct_size >= endOf(\mk_plugin_decoder_factory.get_backend), let count = f.backend_count, let get = f.get_backend else {
            throw refuse("the decoder factory is malformed (struct size \(f.struct_size), backend_count or get_backend missing)")
        }
        let n = count()
        guard n < entryLimit else { throw refuse("the decoder factory lists \(n) backends") }
        return try (0..<n).map { i in
            guard let b = get(i), b.pointee.struct_size >= endOf(\mk_plugin_decoder_backend.create),
                  let codec = b.pointee.codec, b.pointee.create != nil else {
                throw refuse("decoder backend \(i) of the plugin is malformed (missing, struct size, codec or create)")
            }
            let type: MediaType = b.pointee.media_type == MK_MEDIA_AUDIO ? .audio : .video
            return MediaRegistry.Backend(codec: CodecID(String(cString: codec)), name: b.pointee.name.map { String(cString: $0) } ?? plugin.name,
                                         mediaType: type, priority: Int(b.pointee.priority), plugin: plugin, raw: b)
        }
    }

    /// The encoder factory (ABI 2.1; a 2.0 plugin has none). A backend struct is read up to its
    /// struct_size: the fields of 2.1 up to `create` are required.
    private static func encoderBackends(_ raw: UnsafeRawPointer?, _ plugin: MediaRegistry.Plugin,
                                        _ refuse: (String) -> MediaError) throws -> [MediaRegistry.EncoderBackend] {
        guard let raw else { return [] }
        let f = raw.assumingMemoryBound(to: mk_plugin_encoder_factory.self).pointee
        guard f.struct_size >= endOf(\mk_plugin_encoder_factory.get_backend), let count = f.backend_count, let get = f.get_backend else {
            throw refuse("the encoder factory is malformed (struct size \(f.struct_size), backend_count or get_backend missing)")
        }
        let n = count()
        guard n < entryLimit else { throw refuse("the encoder factory lists \(n) backends") }
        return try (0..<n).map { i in
            guard let b = get(i), b.pointee.struct_size >= endOf(\mk_plugin_encoder_backend.create),
                  let codec = b.pointee.codec, b.pointee.create != nil, let formats = b.pointee.sample_formats else {
                throw refuse("encoder backend \(i) of the plugin is malformed (missing, struct size, codec, sample formats or create)")
            }
            func list<T: BinaryInteger>(_ p: UnsafePointer<T>?) -> [T] {
                guard var p else { return [] }
                var out: [T] = []
                while p.pointee != 0 && out.count < 1000 { out.append(p.pointee); p += 1 }
                return out
            }
            let e = b.pointee
            // 2.3: a video backend lists its pixel formats (an older struct ends before them).
            let hasPixels = e.struct_size >= endOf(\mk_plugin_encoder_backend.pixel_formats)
            let video = e.media_type == MK_MEDIA_VIDEO && hasPixels && e.pixel_formats != nil
            if e.media_type == MK_MEDIA_VIDEO && !video {
                throw refuse("video encoder backend \(i) of the plugin lists no pixel formats (plugin ABI 2.3)")
            }
            return MediaRegistry.EncoderBackend(
                codec: CodecID(String(cString: codec)), mediaType: video ? .video : .audio,
                pixelFormats: video ? list(e.pixel_formats).compactMap { PixelFormat(rawValue: $0) } : [],
                name: e.name.map { String(cString: $0) } ?? plugin.name,
                priority: Int(e.priority), sampleFormats: list(formats).compactMap { SampleFormat(rawValue: $0) },
                sampleRates: list(e.sample_rates).map(Int.init),
                sampleRateRange: max(1, Int(e.min_sample_rate))...max(1, Int(e.min_sample_rate), Int(e.max_sample_rate > 0 ? e.max_sample_rate : Int32.max)),
                maxChannels: Int(e.max_channels), channelMasks: list(e.channel_masks),
                bitRateRange: e.max_bit_rate > 0 ? Int(e.min_bit_rate)...max(Int(e.min_bit_rate), Int(e.max_bit_rate)) : nil,
                plugin: plugin, raw: b)
        }
    }

    /// The demuxer factory (ABI 2.4; a plugin of 2.3 or older has none). Every format entry
    /// needs its name, score and create.
    private static func demuxerFormats(_ raw: UnsafeRawPointer?, _ plugin: MediaRegistry.Plugin,
                                       _ refuse: (String) -> MediaError) throws -> [MediaRegistry.DemuxerFormat] {
        guard let raw else { return [] }
        let f = raw.assumingMemoryBound(to: mk_plugin_demuxer_factory.self).pointee
        guard f.struct_size >= endOf(\mk_plugin_demuxer_factory.get_format), let count = f.format_count, let get = f.get_format else {
            throw refuse("the demuxer factory is malformed (struct size \(f.struct_size), format_count or get_format missing)")
        }
        let n = count()
        guard n < entryLimit else { throw refuse("the demuxer factory lists \(n) formats") }
        func list(_ p: UnsafePointer<CChar>?) -> [String] {
            (p.map { String(cString: $0) } ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return try (0..<n).map { i in
            guard let d = get(i), d.pointee.struct_size >= endOf(\mk_plugin_demuxer_format.create),
                  let name = d.pointee.name, d.pointee.score != nil, d.pointee.create != nil else {
                throw refuse("demuxer format \(i) of the plugin is malformed (missing, struct size, name, score or create)")
            }
            return MediaRegistry.DemuxerFormat(name: String(cString: name), longName: d.pointee.long_name.map { String(cString: $0) } ?? "",
                                               extensions: list(d.pointee.extensions).map { $0.lowercased() },
                                               mimeTypes: list(d.pointee.mime_types), priority: Int(d.pointee.priority),
                                               plugin: plugin, raw: d)
        }
    }

    /// The muxer factory (ABI 2.5; a plugin of 2.4 or older has none). Every format entry needs
    /// its name, carries and create.
    private static func muxerFormats(_ raw: UnsafeRawPointer?, _ plugin: MediaRegistry.Plugin,
                                     _ refuse: (String) -> MediaError) throws -> [MediaRegistry.PluginMuxerFormat] {
        guard let raw else { return [] }
        let f = raw.assumingMemoryBound(to: mk_plugin_muxer_factory.self).pointee
        guard f.struct_size >= endOf(\mk_plugin_muxer_factory.get_format), let count = f.format_count, let get = f.get_format else {
            throw refuse("the muxer factory is malformed (struct size \(f.struct_size), format_count or get_format missing)")
        }
        let n = count()
        guard n < entryLimit else { throw refuse("the muxer factory lists \(n) formats") }
        func list(_ p: UnsafePointer<CChar>?) -> [String] {
            (p.map { String(cString: $0) } ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        return try (0..<n).map { i in
            guard let d = get(i), d.pointee.struct_size >= endOf(\mk_plugin_muxer_format.create),
                  let name = d.pointee.name, d.pointee.carries != nil, d.pointee.create != nil else {
                throw refuse("muxer format \(i) of the plugin is malformed (missing, struct size, name, carries or create)")
            }
            return MediaRegistry.PluginMuxerFormat(name: String(cString: name), longName: d.pointee.long_name.map { String(cString: $0) } ?? "",
                                                   extensions: list(d.pointee.extensions).map { $0.lowercased() },
                                                   mimeTypes: list(d.pointee.mime_types), priority: Int(d.pointee.priority),
                                                   plugin: plugin, raw: d)
        }
    }

    private static func pictureConverters(_ raw: UnsafeRawPointer?, _ plugin: MediaRegistry.Plugin,
                                          _ refuse: (String) -> MediaError) throws -> [MediaRegistry.Converter] {
        guard let raw else { return [] }
        let f = raw.assumingMemoryBound(to: mk_plugin_picture_converter_factory.self).pointee
        guard f.struct_size >= endOf(\mk_plugin_picture_converter_factory.get_converter), let count = f.converter_count,
              let get = f.get_converter else {
            throw refuse("the picture converter factory is malformed (struct size \(f.struct_size), converter_count or get_converter missing)")
        }
        let n = count()
        guard n < entryLimit else { throw refuse("the picture converter factory lists \(n) picture converters") }
        return try (0..<n).map { i in
            guard let c = get(i), c.pointee.struct_size >= endOf(\mk_plugin_picture_converter.create),
                  c.pointee.supports != nil, c.pointee.create != nil else {
                throw refuse("picture converter \(i) of the plugin is malformed (missing, struct size, supports or create)")
            }
            return MediaRegistry.Converter(name: c.pointee.name.map { String(cString: $0) } ?? plugin.name,
                                           priority: Int(c.pointee.priority), plugin: plugin, raw: c)
        }
    }

    // MARK: - The host struct

    /// The log level handed to plugins: `MEDIAKIT_LOG_LEVEL` (quiet, error, warning, info,
    /// debug, trace, or 0-5). Default: quiet.
    static let logLevel: Int32 = {
        let names: [String: Int32] = ["quiet": MK_LOG_QUIET, "error": MK_LOG_ERROR, "warning": MK_LOG_WARNING,
                                      "info": MK_LOG_INFO, "debug": MK_LOG_DEBUG, "trace": MK_LOG_TRACE]
        guard let v = ProcessInfo.processInfo.environment["MEDIAKIT_LOG_LEVEL"]?.lowercased(), !v.isEmpty else { return MK_LOG_QUIET }
        if let level = names[v] { return level }
        if let n = Int32(v), (MK_LOG_QUIET...MK_LOG_TRACE).contains(n) { return n }
        return MK_LOG_QUIET
    }()

    nonisolated(unsafe) private static let hostName = strdup("MediaKit")!
    nonisolated(unsafe) private static let hostVersion = strdup(MediaKitVersion.string)!

    /// Where plugin log messages go: one line on standard error, naming the plugin file.
    private static let log: @convention(c) (UnsafePointer<mk_host>?, Int32, UnsafePointer<CChar>?) -> Void = { host, level, message in
        guard let host, let message else { return }
        let file = host.pointee.host_data.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "plugin"
        let names = ["quiet", "error", "warning", "info", "debug", "trace"]
        let name = names.indices.contains(Int(level)) ? names[Int(level)] : "level \(level)"
        FileHandle.standardError.write(Data("mediakit: \(file): \(name): \(String(cString: message))\n".utf8))
    }

    /// Frees a host struct (and its file name) once its plugin was refused: after a failed
    /// init (or a deinit) the plugin no longer holds it.
    static func freeHost(_ host: UnsafePointer<mk_host>) {
        free(host.pointee.host_data)
        UnsafeMutablePointer(mutating: host).deinitialize(count: 1)
        UnsafeMutablePointer(mutating: host).deallocate()
    }

    /// One mk_host per plugin, kept while the plugin is loaded (the plugin may keep the
    /// pointer); `host_data` is the plugin's file name, for the log.
    private static func makeHost(path: String) -> UnsafePointer<mk_host> {
        let host = UnsafeMutablePointer<mk_host>.allocate(capacity: 1)
        host.initialize(to: mk_host(struct_size: UInt32(MemoryLayout<mk_host>.size),
                                    abi: mk_plugin_abi(major: abiMajor, minor: abiMinor),
                                    name: UnsafePointer(hostName), version: UnsafePointer(hostVersion),
                                    host_data: UnsafeMutableRawPointer(strdup((path as NSString).lastPathComponent)),
                                    log_level: logLevel, log: log))
        return UnsafePointer(host)
    }
}
