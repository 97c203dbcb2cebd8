// Version, status names and plugin listing.
import CMediaKit
import Foundation
import MediaKit

/// The library version.
let libraryVersion = MediaKitVersion.string

private let versionString = CString(libraryVersion)

@_cdecl("mk_version")
public func mk_version() -> UnsafePointer<CChar> { UnsafePointer(versionString.pointer) }

@_cdecl("mk_abi_version")
public func mk_abi_version() -> Int32 { MK_ABI_VERSION }

@_cdecl("mk_set_thread_limit")
public func mk_set_thread_limit(_ threads: Int32) -> Int32 {
    guard threads >= 0 else { return fail(MK_EINVAL, "mk_set_thread_limit: \(threads) threads (0 removes the budget)") }
    MediaRegistry.threadLimit = Int(threads)
    return MK_OK
}

@_cdecl("mk_thread_limit")
public func mk_thread_limit() -> Int32 { Int32(clamping: MediaRegistry.threadLimit) }

private let statusNames: [Int32: CString] = [
    MK_OK: CString("MK_OK"), MK_EAGAIN: CString("MK_EAGAIN"), MK_EOF: CString("MK_EOF"),
    MK_EINVAL: CString("MK_EINVAL"), MK_ENOMEM: CString("MK_ENOMEM"), MK_EUNSUPPORTED: CString("MK_EUNSUPPORTED"),
    MK_EDATA: CString("MK_EDATA"), MK_EIO: CString("MK_EIO"), MK_ENOTFOUND: CString("MK_ENOTFOUND"),
    MK_ESTATE: CString("MK_ESTATE"), MK_EPLUGIN: CString("MK_EPLUGIN"), MK_ELIMIT: CString("MK_ELIMIT"),
    MK_EFAIL: CString("MK_EFAIL"), MK_ETRUNCATED: CString("MK_ETRUNCATED"), MK_ECANCELLED: CString("MK_ECANCELLED"),
    MK_EINVALIDATED: CString("MK_EINVALIDATED"),
]
private let unknownStatus = CString("MK_UNKNOWN")

@_cdecl("mk_status_name")
public func mk_status_name(_ status: Int32) -> UnsafePointer<CChar> {
    UnsafePointer((statusNames[status] ?? unknownStatus).pointer)
}

/// Plugin strings handed to C: kept for the life of the process, as the header promises.
private final class PluginStrings: @unchecked Sendable {
    let lock = NSLock()
    var byPath: [String: (CString, CString, CString, CString)] = [:]
}
private let pluginStrings = PluginStrings()

@_cdecl("mk_plugins_load")
public func mk_plugins_load(_ path: UnsafePointer<CChar>?) -> Int32 {
    guard let path else { return fail(MK_EINVAL, "mk_plugins_load: path is NULL") }
    return guarded {
        try MediaRegistry.shared.load(path: String(cString: path))
        return MK_OK
    }
}

@_cdecl("mk_plugin_count")
public func mk_plugin_count() -> Int32 { Int32(MediaRegistry.shared.plugins.count) }

@_cdecl("mk_plugin_get_info")
public func mk_plugin_get_info(_ index: Int32, _ info: UnsafeMutablePointer<mk_plugin_info>?) -> Int32 {
    guard let info else { return fail(MK_EINVAL, "mk_plugin_get_info: info is NULL") }
    guard sizeOK(info.pointee.struct_size, MemoryLayout<mk_plugin_info>.size, "mk_plugin_info") else { return MK_EINVAL }
    let registry = MediaRegistry.shared
    let plugins = registry.plugins
    guard index >= 0 && Int(index) < plugins.count else {
        return fail(MK_EINVAL, "mk_plugin_get_info: index \(index) is out of range (\(plugins.count) plugins)")
    }
    let p = plugins[Int(index)]
    let strings = pluginStrings.lock.withLock { () -> (CString, CString, CString, CString) in
        if let s = pluginStrings.byPath[p.path] { return s }
        let codecs = registry.backends.filter { $0.plugin == p }.map { "\($0.codec):\($0.priority)" }.joined(separator: ",")
        let s = (CString(p.name), CString(p.version), CString(p.path), CString(codecs))
        pluginStrings.byPath[p.path] = s
        return s
    }
    info.pointee.name = UnsafePointer(strings.0.pointer)
    info.pointee.version = UnsafePointer(strings.1.pointer)
    info.pointee.path = UnsafePointer(strings.2.pointer)
    info.pointee.codecs = UnsafePointer(strings.3.pointer)
    return MK_OK
}

/// Strings the registry listings hand to C: one copy of each, kept for the life of the process
/// (the header promises static strings; the set is as small as the plugins' names).
private final class InternedStrings: @unchecked Sendable {
    let lock = NSLock()
    var strings: [String: CString] = [:]
    func pointer(_ s: String) -> UnsafePointer<CChar> {
        lock.withLock {
            if let c = strings[s] { return UnsafePointer(c.pointer) }
            let c = CString(s)
            strings[s] = c
            return UnsafePointer(c.pointer)
        }
    }
}
private let interned = InternedStrings()

/// Arrays the backend listing hands to C, by the backend they describe: kept for the life of
/// the process, as the header promises.
private final class InternedArrays: @unchecked Sendable {
    let lock = NSLock()
    var arrays: [String: UnsafeMutableRawPointer] = [:]
    /// A copy of `values` that is never freed (nil when empty), one per `key`.
    func pointer<T>(_ key: String, _ values: [T]) -> UnsafePointer<T>? {
        guard !values.isEmpty else { return nil }
        return lock.withLock {
            let raw = arrays[key] ?? {
                let p = UnsafeMutablePointer<T>.allocate(capacity: values.count)
                p.initialize(from: values, count: values.count)
                arrays[key] = UnsafeMutableRawPointer(p)
                return UnsafeMutableRawPointer(p)
            }()
            return UnsafePointer(raw.assumingMemoryBound(to: T.self))
        }
    }
}
private let internedArrays = InternedArrays()

/// A listing kept while what it lists stays the same (its key: the generation of the registry
/// or catalogue it comes from). Built again on every call, `for (i = 0; i < mk_container_count();
/// i++) mk_container_get_info(i, ...)` cost the square of the catalogue's size.
private final class CachedListing<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var key: [Int]?
    private var value: [T] = []

    /// The listing for `key` (read before `make` runs, so that a change during it is not
    /// missed), made by `make` when the key is not the one kept.
    func get(_ key: [Int], _ make: () -> [T]) -> [T] {
        if let kept = lock.withLock({ self.key == key ? value : nil }) { return kept }
        let made = make()
        lock.withLock { self.key = key; value = made }
        return made
    }
}
private let backendListing = CachedListing<mk_backend_info>()
private let containerListing = CachedListing<mk_container_info>()

/// Every backend of the registry as C lists it: decoders, encoders, then picture converters,
/// each by priority (the registry's order).
private func backendInfos() -> [mk_backend_info] {
    backendListing.get([MediaRegistry.shared.generation], makeBackendInfos)
}

private func makeBackendInfos() -> [mk_backend_info] {
    let registry = MediaRegistry.shared
    let size = UInt32(MemoryLayout<mk_backend_info>.size)
    func info(_ kind: Int32, _ codec: String, _ name: String, _ media: Int32, _ priority: Int, _ plugin: MediaRegistry.Plugin) -> mk_backend_info {
        var i = mk_backend_info()
        i.struct_size = size
        i.kind = kind
        i.codec = interned.pointer(codec)
        i.name = interned.pointer(name)
        i.media_type = media
        i.priority = Int32(clamping: priority)
        i.plugin = interned.pointer(plugin.name)
        i.plugin_path = interned.pointer(plugin.path)
        return i
    }
    func encoder(_ e: MediaRegistry.EncoderBackend) -> mk_backend_info {
        var i = info(MK_BACKEND_ENCODER, e.codec.rawValue, e.name, mediaTypeCode(e.mediaType), e.priority, e.plugin)
        let key = "\(e.plugin.path)\u{0}\(e.name)\u{0}\(e.codec.rawValue)"
        i.sample_formats = internedArrays.pointer(key + "\u{0}formats", e.sampleFormats.map(\.rawValue))
        i.sample_format_count = Int32(clamping: e.sampleFormats.count)
        i.sample_rates = internedArrays.pointer(key + "\u{0}rates", e.sampleRates.map { Int32(clamping: $0) })
        i.sample_rate_count = Int32(clamping: e.sampleRates.count)
        i.min_sample_rate = Int32(clamping: e.sampleRateRange.lowerBound)
        i.max_sample_rate = Int32(clamping: e.sampleRateRange.upperBound)
        i.max_channels = Int32(clamping: e.maxChannels)
        i.channel_masks = internedArrays.pointer(key + "\u{0}masks", e.channelMasks)
        i.channel_mask_count = Int32(clamping: e.channelMasks.count)
        i.min_bit_rate = Int64(e.bitRateRange?.lowerBound ?? 0)
        i.max_bit_rate = Int64(e.bitRateRange?.upperBound ?? 0)
        return i
    }
    func converter(_ c: MediaRegistry.Converter) -> mk_backend_info {
        var i = info(MK_BACKEND_PICTURE_CONVERTER, "", c.name, 0, c.priority, c.plugin)
        i.scales = c.scales ? 1 : 0
        return i
    }
    return registry.backends.map { info(MK_BACKEND_DECODER, $0.codec.rawValue, $0.name, mediaTypeCode($0.mediaType), $0.priority, $0.plugin) }
        + registry.encoderBackends.map(encoder)
        + registry.converters.map(converter)
}

@_cdecl("mk_backend_count")
public func mk_backend_count() -> Int32 { Int32(clamping: backendInfos().count) }

/// A listing getter's work: entry `index` of `all` copied into the caller's `info` up to its
/// struct_size (`size`), which must be at least `minimum` bytes; `noun` names the entries.
private func getListed<T>(_ function: String, _ all: @autoclosure () -> [T], _ index: Int32, _ info: UnsafeMutablePointer<T>?,
                          size: WritableKeyPath<T, UInt32>, minimum: Int, _ noun: String) -> Int32 {
    guard let info else { return fail(MK_EINVAL, "\(function): info is NULL") }
    guard sizeOK(info.pointee[keyPath: size], minimum, "\(T.self)") else { return MK_EINVAL }
    let all = all()
    guard index >= 0 && Int(index) < all.count else {
        return fail(MK_EINVAL, "\(function): index \(index) is out of range (\(all.count) \(noun))")
    }
    var i = all[Int(index)]
    i[keyPath: size] = info.pointee[keyPath: size]
    copyOut(i, to: info, size: i[keyPath: size])
    return MK_OK
}

@_cdecl("mk_backend_get_info")
public func mk_backend_get_info(_ index: Int32, _ info: UnsafeMutablePointer<mk_backend_info>?) -> Int32 {
    // The 0.1 struct ended at plugin_path; newer fields are filled when struct_size covers them.
    getListed("mk_backend_get_info", backendInfos(), index, info, size: \.struct_size,
              minimum: MemoryLayout<mk_backend_info>.offset(of: \mk_backend_info.sample_formats)!, "backends")
}

@_cdecl("mk_backend_converts")
public func mk_backend_converts(_ index: Int32, _ source: Int32, _ target: Int32, _ supported: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let supported else { return fail(MK_EINVAL, "mk_backend_converts: supported is NULL") }
    let registry = MediaRegistry.shared
    let converters = registry.converters
    let first = registry.backends.count + registry.encoderBackends.count
    guard index >= Int32(clamping: first), Int(index) - first < converters.count else {
        return fail(MK_EINVAL, "mk_backend_converts: backend \(index) is not a picture converter (those are backends \(first) to \(first + converters.count - 1))")
    }
    let c = converters[Int(index) - first]
    guard let from = PixelFormat(rawValue: source), let to = PixelFormat(rawValue: target) else {
        supported.pointee = 0   // a code the library does not know: no converter takes it
        return MK_OK
    }
    supported.pointee = c.supports(from, to: to) ? 1 : 0
    return MK_OK
}

/// The container catalogue as C lists it: the built-in demuxers in probing order, the
/// plugins' demuxers (named "plugin:format", as mk_demuxer_open_as takes them), then the
/// muxers (the built-in ones, then the plugins' named "plugin:format"), then the frame sinks (the raw outputs of mk_decode_file).
private func containerInfos() -> [mk_container_info] {
    containerListing.get(ContainerCatalog.shared.generation, makeContainerInfos)
}

private func makeContainerInfos() -> [mk_container_info] {
    let catalog = ContainerCatalog.shared
    let size = UInt32(MemoryLayout<mk_container_info>.size)
    func info(_ kind: Int32, _ name: String, _ description: String, _ extensions: [String], _ mimeTypes: [String],
              codecs: [CodecID] = [], options: [MuxerOptions.Name] = [], plugin: String = "") -> mk_container_info {
        mk_container_info(struct_size: size, kind: kind, name: interned.pointer(name), description: interned.pointer(description),
                          extensions: interned.pointer(extensions.joined(separator: ",")),
                          mime_types: interned.pointer(mimeTypes.joined(separator: ",")),
                          codecs: interned.pointer(codecs.map(\.rawValue).joined(separator: ",")),
                          options: interned.pointer(options.map(\.rawValue).joined(separator: ",")),
                          plugin: interned.pointer(plugin))
    }
    return catalog.formats.map { info(MK_CONTAINER_DEMUXER, $0.name, $0.description, $0.extensions, $0.mimeTypes) }
        + catalog.pluginFormats.map { info(MK_CONTAINER_DEMUXER, $0.qualifiedName, $0.longName.isEmpty ? $0.name : $0.longName,
                                           $0.extensions, $0.mimeTypes, plugin: $0.plugin.name) }
        + catalog.muxerFormats.map { info(MK_CONTAINER_MUXER, $0.qualifiedName, $0.description, $0.extensions, $0.mimeTypes,
                                          codecs: $0.codecs, options: $0.options, plugin: $0.plugin ?? "") }
        + catalog.frameSinkFormats.map { info(MK_CONTAINER_FRAME_SINK, $0.name, $0.description, $0.extensions, []) }
}

@_cdecl("mk_container_count")
public func mk_container_count() -> Int32 { Int32(clamping: containerInfos().count) }

@_cdecl("mk_container_get_info")
public func mk_container_get_info(_ index: Int32, _ info: UnsafeMutablePointer<mk_container_info>?) -> Int32 {
    getListed("mk_container_get_info", containerInfos(), index, info, size: \.struct_size,
              minimum: MemoryLayout<mk_container_info>.offset(of: \mk_container_info.codecs)!, "container formats")
}

@_cdecl("mk_plugin_failure_count")
public func mk_plugin_failure_count() -> Int32 { Int32(clamping: MediaRegistry.shared.loadFailures.count) }

@_cdecl("mk_plugin_failure")
public func mk_plugin_failure(_ index: Int32, _ path: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                              _ message: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    let failures = MediaRegistry.shared.loadFailures
    guard index >= 0 && Int(index) < failures.count else {
        return fail(MK_EINVAL, "mk_plugin_failure: index \(index) is out of range (\(failures.count) failures)")
    }
    let f = failures[Int(index)]
    path?.pointee = interned.pointer(f.path ?? "")
    message?.pointee = interned.pointer(f.description)
    return MK_OK
}

@_cdecl("mk_plugin_search_count")
public func mk_plugin_search_count() -> Int32 { Int32(clamping: MediaRegistry.shared.searchedLocations.count) }

@_cdecl("mk_plugin_search_path")
public func mk_plugin_search_path(_ index: Int32, _ path: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let path else { return fail(MK_EINVAL, "mk_plugin_search_path: path is NULL") }
    let places = MediaRegistry.shared.searchedLocations
    guard index >= 0 && Int(index) < places.count else {
        return fail(MK_EINVAL, "mk_plugin_search_path: index \(index) is out of range (\(places.count) places)")
    }
    path.pointee = interned.pointer(places[Int(index)])
    return MK_OK
}
