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

private let statusNames: [Int32: CString] = [
    MK_OK: CString("MK_OK"), MK_EAGAIN: CString("MK_EAGAIN"), MK_EOF: CString("MK_EOF"),
    MK_EINVAL: CString("MK_EINVAL"), MK_ENOMEM: CString("MK_ENOMEM"), MK_EUNSUPPORTED: CString("MK_EUNSUPPORTED"),
    MK_EDATA: CString("MK_EDATA"), MK_EIO: CString("MK_EIO"), MK_ENOTFOUND: CString("MK_ENOTFOUND"),
    MK_ESTATE: CString("MK_ESTATE"), MK_EPLUGIN: CString("MK_EPLUGIN"), MK_ELIMIT: CString("MK_ELIMIT"),
    MK_EFAIL: CString("MK_EFAIL"), MK_ETRUNCATED: CString("MK_ETRUNCATED"), MK_ECANCELLED: CString("MK_ECANCELLED"),
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

/// Every backend of the registry as C lists it: decoders, encoders, then picture converters,
/// each by priority (the registry's order).
private func backendInfos() -> [mk_backend_info] {
    let registry = MediaRegistry.shared
    let size = UInt32(MemoryLayout<mk_backend_info>.size)
    func info(_ kind: Int32, _ codec: String, _ name: String, _ media: Int32, _ priority: Int, _ plugin: MediaRegistry.Plugin) -> mk_backend_info {
        mk_backend_info(struct_size: size, kind: kind, codec: interned.pointer(codec), name: interned.pointer(name), media_type: media,
                        priority: Int32(clamping: priority), plugin: interned.pointer(plugin.name), plugin_path: interned.pointer(plugin.path))
    }
    return registry.backends.map { info(MK_BACKEND_DECODER, $0.codec.rawValue, $0.name, mediaTypeCode($0.mediaType), $0.priority, $0.plugin) }
        + registry.encoderBackends.map { info(MK_BACKEND_ENCODER, $0.codec.rawValue, $0.name, MK_MEDIA_AUDIO, $0.priority, $0.plugin) }
        + registry.converters.map { info(MK_BACKEND_PICTURE_CONVERTER, "", $0.name, 0, $0.priority, $0.plugin) }
}

@_cdecl("mk_backend_count")
public func mk_backend_count() -> Int32 { Int32(clamping: backendInfos().count) }

@_cdecl("mk_backend_get_info")
public func mk_backend_get_info(_ index: Int32, _ info: UnsafeMutablePointer<mk_backend_info>?) -> Int32 {
    guard let info else { return fail(MK_EINVAL, "mk_backend_get_info: info is NULL") }
    guard sizeOK(info.pointee.struct_size, MemoryLayout<mk_backend_info>.size, "mk_backend_info") else { return MK_EINVAL }
    let all = backendInfos()
    guard index >= 0 && Int(index) < all.count else {
        return fail(MK_EINVAL, "mk_backend_get_info: index \(index) is out of range (\(all.count) backends)")
    }
    var i = all[Int(index)]
    i.struct_size = info.pointee.struct_size
    copyOut(i, to: info, size: i.struct_size)
    return MK_OK
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
