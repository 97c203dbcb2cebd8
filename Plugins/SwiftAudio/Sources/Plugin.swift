// The SwiftAudio plugin: a MediaKit codec plugin written in Swift, behind the C ABI of
// Include/mediakit/mediakit_plugin.h (imported as the MediaKitPluginABI module).
//
// Decoders for codecs that need no library, each output bit-exact with FFmpeg's:
//   pcm_alaw, pcm_mulaw   G.711 A-law and mu-law (ITU-T G.711; FFmpeg's pcm.c tables)
//   adpcm_ima_qt          IMA ADPCM as QuickTime stores it ('ima4': 34-byte blocks of 64 samples
//                         per channel, the predictor carried from block to block)
//   adpcm_ima_wav         IMA ADPCM as WAV stores it (format tag 0x11, 4 bits per sample:
//                         blocks of block_align bytes, a 4-byte header per channel)
// One backend per codec, named "swiftaudio" like the plugin, at priority 200: above the FFmpeg
// plugin's 100, so the registry picks these unless asked for another (`mk-decode --backend ffmpeg`).
//
// The boundary is C only: the host sees the descriptor, factory, backend and vtable structs of
// the header, C function pointers and opaque `void *` instances; no Swift type crosses it. The
// library exports `mediakit_plugin_entry` and nothing else (exports.map). Every entry point
// checks its arguments and answers an MK_ status; nothing traps on bad input.

import MediaKitPluginABI

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The plugin's name, also each backend's name.
let pluginName: StaticString = "swiftaudio"

/// A NUL-terminated C string in the library's read-only data (valid for the life of the process).
@inline(__always)
func cString(_ s: StaticString) -> UnsafePointer<CChar> {
    UnsafeRawPointer(s.utf8Start).assumingMemoryBound(to: CChar.self)
}

/// Bytes of `T` up to and including the field at `key`: the struct_size a reader needs to read it.
func endOf<T, F>(_ key: KeyPath<T, F>) -> Int {
    MemoryLayout<T>.offset(of: key)! + MemoryLayout<F>.size
}

/// The host given to init(), kept for logging; nil before init and after deinit.
nonisolated(unsafe) var pluginHost: UnsafePointer<mk_host>?

/// Sends `message` to the host's log when the host wants messages of `level`.
func log(_ level: Int32, _ message: @autoclosure () -> String) {
    guard let host = pluginHost, host.pointee.log_level >= level, level > MK_LOG_QUIET,
          let log = host.pointee.log else { return }
    message().withCString { log(host, level, $0) }
}

/// init(host): keeps the host (it stays valid for the life of the process). Refuses a host of
/// another major version or too small to hold the 2.0 fields.
private let pluginInit: @convention(c) (UnsafePointer<mk_host>?) -> Int32 = { host in
    guard let host, Int(host.pointee.struct_size) >= endOf(\mk_host.log),
          host.pointee.abi.major == MK_PLUGIN_ABI_MAJOR else { return MK_EINVAL }
    pluginHost = host
    return MK_OK
}

/// deinit(): every instance is gone; frames handed out stay valid (each owns its buffer).
private let pluginDeinit: @convention(c) () -> Void = { pluginHost = nil }

/// get_factory(id): the decoder factory, NULL for any other id.
private let getFactory: @convention(c) (UnsafePointer<CChar>?) -> UnsafeRawPointer? = { id in
    guard let id, strcmp(id, MK_PLUGIN_DECODER_FACTORY) == 0 else { return nil }
    return UnsafeRawPointer(decoderFactory)
}

/// backend_count() and get_backend(index) over ``backends``.
private let backendCount: @convention(c) () -> UInt32 = { UInt32(Codec.allCases.count) }
private let getBackend: @convention(c) (UInt32) -> UnsafePointer<mk_plugin_decoder_backend>? = { index in
    index < UInt32(Codec.allCases.count) ? UnsafePointer(backends + Int(index)) : nil
}

/// One backend per codec, in ``Codec`` order; static storage for the life of the process.
nonisolated(unsafe) let backends: UnsafeMutablePointer<mk_plugin_decoder_backend> = {
    let all = Codec.allCases
    let table = UnsafeMutablePointer<mk_plugin_decoder_backend>.allocate(capacity: all.count)
    for (i, codec) in all.enumerated() {
        (table + i).initialize(to: mk_plugin_decoder_backend(
            struct_size: UInt32(MemoryLayout<mk_plugin_decoder_backend>.size),
            media_type: MK_MEDIA_AUDIO, codec: cString(codec.name), name: cString(pluginName),
            priority: 200, create: createDecoder))
    }
    return table
}()

/// The decoder factory (MK_PLUGIN_DECODER_FACTORY); static storage.
nonisolated(unsafe) let decoderFactory: UnsafeMutablePointer<mk_plugin_decoder_factory> = {
    let f = UnsafeMutablePointer<mk_plugin_decoder_factory>.allocate(capacity: 1)
    f.initialize(to: mk_plugin_decoder_factory(
        struct_size: UInt32(MemoryLayout<mk_plugin_decoder_factory>.size),
        backend_count: backendCount, get_backend: getBackend))
    return f
}()

/// The descriptor mediakit_plugin_entry returns; static storage, never freed.
nonisolated(unsafe) private let descriptor: UnsafeMutablePointer<mk_plugin_descriptor> = {
    let d = UnsafeMutablePointer<mk_plugin_descriptor>.allocate(capacity: 1)
    d.initialize(to: mk_plugin_descriptor(
        abi: mk_plugin_abi(major: MK_PLUGIN_ABI_MAJOR, minor: MK_PLUGIN_ABI_MINOR),
        struct_size: UInt32(MemoryLayout<mk_plugin_descriptor>.size),
        name: cString(pluginName),
        version: cString("1.0.0 (Swift)"),
        init: pluginInit,
        deinit: pluginDeinit,
        get_factory: getFactory,
        description: cString("G.711 A-law/mu-law and IMA ADPCM (QuickTime, WAV) decoders written in Swift")))
    return d
}()

/// The plugin's one exported symbol (MK_PLUGIN_ENTRY_SYMBOL): returns the static descriptor.
/// Thread-safe; does no other work (set-up is in init).
@_cdecl("mediakit_plugin_entry")
public func mediakitPluginEntry() -> UnsafePointer<mk_plugin_descriptor> {
    UnsafePointer(descriptor)
}
