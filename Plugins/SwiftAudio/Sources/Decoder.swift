// One decoder instance behind mk_plugin_decoder_vtable: create(), send_packet / receive_frame /
// flush / destroy / last_error, the argument checks of the ABI, and frames that own their buffer.
//
// Send/receive model: each packet decodes at once into one frame (every whole block or sample of
// the packet) that waits for receive_frame(); send_packet() answers MK_EAGAIN (packet not taken)
// while a frame waits. No decoder delay: draining returns the waiting frame, then MK_EOF. A
// zero-size packet is a no-op. A packet with no whole block is consumed and answered MK_EDATA.
//
// Frames: interleaved signed 16-bit (MK_SAMPLES_S16), in one malloc'd buffer that release()
// frees; they outlive the decoder. Threads: as tagged in mediakit_plugin.h (an instance is used
// by one thread at a time; create() and release() from any thread).

import MediaKitPluginABI

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The codecs of this plugin, in backend order.
enum Codec: CaseIterable {
    case alaw, mulaw, imaQT, imaWAV

    /// FFmpeg's name, as the ABI names codecs.
    var name: StaticString {
        switch self {
        case .alaw: return "pcm_alaw"
        case .mulaw: return "pcm_mulaw"
        case .imaQT: return "adpcm_ima_qt"
        case .imaWAV: return "adpcm_ima_wav"
        }
    }

    /// The codec named `name`, nil for one this plugin does not decode.
    init?(name: UnsafePointer<CChar>) {
        guard let c = Codec.allCases.first(where: { strcmp(cString($0.name), name) == 0 }) else { return nil }
        self = c
    }
}

/// The most channels a stream may have (a sanity bound; the codecs have no limit of their own).
let maxChannels = 64
/// The smallest packet and frame structs this plugin reads (ABI 2.0).
let packetMinSize = endOf(\mk_plugin_packet.duration)
let frameMinSize = endOf(\mk_plugin_frame.release_opaque)
/// The config fields read: up to channels for every codec, block_align for IMA ADPCM in WAV.
let configMinSize = endOf(\mk_plugin_codec_config.channels)
let configBlockAlignSize = endOf(\mk_plugin_codec_config.block_align)

/// Writes `message` into a host buffer of `size` bytes (NUL-terminated, cut to fit); nothing for NULL.
func write(_ message: String, to buffer: UnsafeMutablePointer<CChar>?, size: Int) {
    guard let buffer, size > 0 else { return }
    var n = 0
    for byte in message.utf8 where n < size - 1 {
        buffer[n] = CChar(bitPattern: byte)
        n += 1
    }
    buffer[n] = 0
}

/// One decoder: the stream's shape, the IMA ADPCM state carried between QuickTime blocks, the
/// frame waiting for receive_frame and the last error message.
final class Decoder {
    let codec: Codec
    let channels: Int
    let sampleRate: Int
    /// IMA ADPCM in WAV: bytes per block (all channels).
    let blockAlign: Int
    /// Packet/frame time base.
    let timeBaseNum: Int64, timeBaseDen: Int64
    /// IMA ADPCM QuickTime: each channel's predictor and step index, carried across blocks.
    let imaState: UnsafeMutablePointer<IMAChannel>
    var ready = mk_plugin_frame()
    var hasReady = false
    var draining = false
    /// last_error's answer: owned here, valid until the next call on the instance.
    let lastError: UnsafeMutablePointer<CChar>
    static let errorSize = 512

    init(codec: Codec, channels: Int, sampleRate: Int, blockAlign: Int, timeBaseNum: Int64, timeBaseDen: Int64) {
        self.codec = codec
        self.channels = channels
        self.sampleRate = sampleRate
        self.blockAlign = blockAlign
        self.timeBaseNum = timeBaseNum
        self.timeBaseDen = timeBaseDen
        imaState = .allocate(capacity: channels)
        imaState.initialize(repeating: IMAChannel(), count: channels)
        lastError = .allocate(capacity: Self.errorSize)
        lastError[0] = 0
    }

    deinit {
        dropReady()
        imaState.deallocate()
        lastError.deallocate()
    }

    func fail(_ status: Int32, _ message: String) -> Int32 {
        write(message, to: lastError, size: Self.errorSize)
        return status
    }

    func dropReady() {
        if hasReady, let release = ready.release { release(ready.release_opaque) }
        hasReady = false
    }

    /// Back to the state of a new decoder: nothing waiting, not draining, IMA state cleared.
    func reset() {
        dropReady()
        draining = false
        imaState.update(repeating: IMAChannel(), count: channels)
    }

    /// `samples` per channel in the packet time base (0 when the rate or time base is unknown).
    func duration(ofSamples samples: Int) -> Int64 {
        guard sampleRate > 0, timeBaseNum > 0, timeBaseDen > 0 else { return 0 }
        // samples < 2^31 and the time base's terms < 2^31: neither product overflows.
        return Int64(samples) * timeBaseDen / (timeBaseNum * Int64(sampleRate))
    }

    /// Decodes one packet's bytes into the waiting frame. MK_OK, or an error with last_error set.
    func decode(_ data: UnsafePointer<UInt8>, count: Int, pts: Int64) -> Int32 {
        // Samples per channel the packet holds, and the bytes that hold them.
        let samples: Int
        switch codec {
        case .alaw, .mulaw:
            samples = count / channels
            if samples == 0 {
                return fail(MK_EDATA, "\(codec.name): a packet of \(count) bytes holds no sample of \(channels) channels")
            }
        case .imaQT:
            let blocks = count / (IMAADPCM.qtBlockBytes * channels)
            if blocks == 0 {
                return fail(MK_EDATA, "adpcm_ima_qt: a packet of \(count) bytes holds no \(IMAADPCM.qtBlockBytes * channels)-byte block of \(channels) channels")
            }
            samples = blocks * IMAADPCM.qtBlockSamples
        case .imaWAV:
            samples = IMAADPCM.wavSamples(packetBytes: count, blockAlign: blockAlign, channels: channels)
            if samples == 0 {
                return fail(MK_EDATA, "adpcm_ima_wav: a packet of \(count) bytes holds no block header of \(channels) channels (\(4 * channels) bytes)")
            }
        }
        guard let raw = malloc(samples * channels * MemoryLayout<Int16>.size) else {
            return fail(MK_ENOMEM, "\(codec.name): no memory for \(samples) samples of \(channels) channels")
        }
        let out = raw.assumingMemoryBound(to: Int16.self)
        var produced = samples
        switch codec {
        case .alaw:
            G711.decode(data, count: samples * channels, table: G711.alaw, into: out)
        case .mulaw:
            G711.decode(data, count: samples * channels, table: G711.mulaw, into: out)
        case .imaQT:
            let blocks = samples / IMAADPCM.qtBlockSamples
            let decoded = IMAADPCM.decodeQT(data, blocks: blocks, channels: channels, state: imaState, into: out)
            produced = decoded * IMAADPCM.qtBlockSamples
            if decoded < blocks {
                // As FFmpeg: the block with a step index above 88 is an error; the ones before it stand.
                _ = fail(MK_EDATA, "adpcm_ima_qt: block \(decoded) of the packet (byte \(decoded * IMAADPCM.qtBlockBytes * channels)) has a step index above 88")
                if produced == 0 {
                    free(raw)
                    return MK_EDATA
                }
            }
        case .imaWAV:
            let result = IMAADPCM.decodeWAV(data, count: count, blockAlign: blockAlign, channels: channels, into: out)
            produced = result.samples
            if let bad = result.badBlockOffset {
                // As FFmpeg: the block with a step index above 88 is an error; the ones before it stand.
                _ = fail(MK_EDATA, "adpcm_ima_wav: the block at byte \(bad) of the packet has a step index above 88")
                if produced == 0 {
                    free(raw)
                    return MK_EDATA
                }
            }
        }
        var f = mk_plugin_frame()
        f.struct_size = UInt32(MemoryLayout<mk_plugin_frame>.size)
        f.media_type = MK_MEDIA_AUDIO
        f.format = MK_SAMPLES_S16
        f.flags = MK_PACKET_FLAG_KEY
        f.pts = pts
        f.duration = duration(ofSamples: produced)
        f.sample_rate = Int32(clamping: sampleRate)
        f.channels = Int32(channels)
        f.nb_samples = Int32(produced)
        f.plane_count = 1
        f.planes.0 = raw.assumingMemoryBound(to: UInt8.self)
        f.strides.0 = Int64(produced * channels * MemoryLayout<Int16>.size)
        f.release = { opaque in free(opaque) }
        f.release_opaque = raw
        ready = f
        hasReady = true
        return MK_OK
    }
}

/// The instance behind a `void *` the host holds (retained at create, released at destroy).
@inline(__always)
private func instance(_ p: UnsafeMutableRawPointer?) -> Decoder? {
    p.map { Unmanaged<Decoder>.fromOpaque($0).takeUnretainedValue() }
}

/// create(): checks the config as every MediaKit plugin does (NULL arguments, struct size, codec,
/// media type, extradata), then the stream's shape for the codec.
let createDecoder: @convention(c) (UnsafePointer<mk_plugin_codec_config>?, UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
                                   UnsafeMutablePointer<UnsafePointer<mk_plugin_decoder_vtable>?>?,
                                   UnsafeMutablePointer<CChar>?, Int) -> Int32 = { config, decoder, vtable, errbuf, errsize in
    func refuse(_ status: Int32, _ message: String) -> Int32 {
        write("swiftaudio: create: " + message, to: errbuf, size: errsize)
        return status
    }
    write("", to: errbuf, size: errsize)
    guard let config, let decoder, let vtable else {
        return refuse(MK_EINVAL, "\(config == nil ? "config" : decoder == nil ? "decoder" : "vtable") is NULL")
    }
    decoder.pointee = nil
    vtable.pointee = nil
    let c = config.pointee
    guard Int(c.struct_size) >= configMinSize else {
        return refuse(MK_EINVAL, "config struct_size \(c.struct_size) < \(configMinSize)")
    }
    guard let name = c.codec, let codec = Codec(name: name) else {
        return refuse(MK_EINVAL, "asked to decode codec \"\(c.codec.map { String(cString: $0) } ?? "(NULL)")\"")
    }
    guard c.media_type == MK_MEDIA_AUDIO else { return refuse(MK_EINVAL, "media type \(c.media_type), expected audio") }
    if c.extradata_size > 0 && c.extradata == nil {
        return refuse(MK_EINVAL, "extradata is NULL but extradata_size is \(c.extradata_size)")
    }
    let channels = Int(c.channels)
    guard (1...maxChannels).contains(channels) else {
        return refuse(MK_EINVAL, "\(codec.name) with \(channels) channels (1 to \(maxChannels) are decoded)")
    }
    var blockAlign = 0
    if codec == .imaWAV {
        // The bits per sample of the fmt chunk; 0: not stated, taken as 4.
        let bits = c.bits_per_coded_sample
        guard bits == 0 || bits == 4 else {
            return refuse(MK_EUNSUPPORTED, "adpcm_ima_wav with \(bits) bits per sample: this backend decodes 4-bit IMA ADPCM only")
        }
        blockAlign = Int(c.struct_size) >= configBlockAlignSize ? Int(c.block_align) : 0
        guard blockAlign > 4 * channels, blockAlign <= 1 << 20 else {
            return refuse(MK_EINVAL, "adpcm_ima_wav needs the block size (block_align) of the stream: \(blockAlign) bytes for \(channels) channels")
        }
    }
    let d = Decoder(codec: codec, channels: channels, sampleRate: max(0, Int(c.sample_rate)), blockAlign: blockAlign,
                    timeBaseNum: Int64(c.time_base_num), timeBaseDen: Int64(c.time_base_den))
    decoder.pointee = Unmanaged.passRetained(d).toOpaque()
    vtable.pointee = UnsafePointer(decoderVTable)
    log(MK_LOG_DEBUG, "swiftaudio: \(codec.name) decoder, \(channels) channels, \(c.sample_rate) Hz" +
        (blockAlign > 0 ? ", \(blockAlign)-byte blocks" : ""))
    return MK_OK
}

private let sendPacket: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<mk_plugin_packet>?) -> Int32 = { p, packet in
    guard let d = instance(p) else { return MK_EINVAL }
    guard let packet else {
        if d.draining { return MK_EOF }
        d.draining = true
        return MK_OK
    }
    let pk = packet.pointee
    guard Int(pk.struct_size) >= packetMinSize else {
        return d.fail(MK_EINVAL, "swiftaudio: send_packet: packet struct_size \(pk.struct_size) < \(packetMinSize)")
    }
    if pk.size > 0 && pk.data == nil {
        return d.fail(MK_EINVAL, "swiftaudio: send_packet: data is NULL but size is \(pk.size)")
    }
    if d.draining { return d.fail(MK_EOF, "swiftaudio: send_packet after the end of stream; flush first") }
    if d.hasReady { return MK_EAGAIN }
    guard pk.size > 0, let data = pk.data else { return MK_OK }
    guard pk.size <= Int(Int32.max) else {
        return d.fail(MK_EDATA, "swiftaudio: send_packet: a packet of \(pk.size) bytes is too large")
    }
    return d.decode(data, count: Int(pk.size), pts: pk.pts)
}

private let receiveFrame: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<mk_plugin_frame>?) -> Int32 = { p, frame in
    guard let d = instance(p), let frame else { return MK_EINVAL }
    let hostSize = Int(frame.pointee.struct_size)
    guard hostSize >= frameMinSize else {
        return d.fail(MK_EINVAL, "swiftaudio: receive_frame: frame struct_size \(hostSize) < \(frameMinSize)")
    }
    guard d.hasReady else { return d.draining ? MK_EOF : MK_EAGAIN }
    // Filled up to the smaller of the host's struct and ours, which struct_size then says.
    let size = min(hostSize, MemoryLayout<mk_plugin_frame>.size)
    d.ready.struct_size = UInt32(size)
    withUnsafeBytes(of: &d.ready) { UnsafeMutableRawPointer(frame).copyMemory(from: $0.baseAddress!, byteCount: size) }
    d.hasReady = false   // the host owns the buffer now
    return MK_OK
}

private let flushDecoder: @convention(c) (UnsafeMutableRawPointer?) -> Void = { p in instance(p)?.reset() }

private let destroyDecoder: @convention(c) (UnsafeMutableRawPointer?) -> Void = { p in
    guard let p else { return }
    Unmanaged<Decoder>.fromOpaque(p).release()
}

private let lastErrorOf: @convention(c) (UnsafeMutableRawPointer?) -> UnsafePointer<CChar>? = { p in
    guard let d = instance(p) else { return cString("") }
    return UnsafePointer(d.lastError)
}

/// The vtable of every instance; static storage.
nonisolated(unsafe) let decoderVTable: UnsafeMutablePointer<mk_plugin_decoder_vtable> = {
    let v = UnsafeMutablePointer<mk_plugin_decoder_vtable>.allocate(capacity: 1)
    v.initialize(to: mk_plugin_decoder_vtable(
        struct_size: UInt32(MemoryLayout<mk_plugin_decoder_vtable>.size),
        send_packet: sendPacket, receive_frame: receiveFrame, flush: flushDecoder,
        destroy: destroyDecoder, last_error: lastErrorOf))
    return v
}()
