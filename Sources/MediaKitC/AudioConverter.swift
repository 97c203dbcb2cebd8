// mk_audio_converter: MediaKit's AudioConverter, for PCM or for a track's packets.
import CMediaKit
import Foundation
import MediaKit

/// A converter as C sees it: a PCM ``AudioConverter`` or a ``PacketAudioConverter``, and the
/// converted frames not read yet.
final class AudioConverterHandle {
    let pcm: AudioConverter?
    let packets: PacketAudioConverter?
    let track: Int
    /// Converted frames waiting for mk_audio_converter_read; `consumed` of them were read.
    var output: AudioBuffer?
    var consumed = 0
    var flushed = false
    /// A pull's input callback said "no data now" (MK_EAGAIN) or failed (another negative value).
    var callbackEnd: Int32?
    /// A pull's input callback said the stream ended (the converter drained itself).
    var pullEnded = false

    init(pcm: AudioConverter) {
        self.pcm = pcm
        packets = nil
        track = -1
    }

    init(packets: PacketAudioConverter, track: Int) {
        pcm = nil
        self.packets = packets
        self.track = track
    }

    var waiting: Int { (output?.frames ?? 0) - consumed }

    func keep(_ b: AudioBuffer) {
        guard b.frames > 0 else { return }
        if output == nil || waiting == 0 {
            output = b
            consumed = 0
            return
        }
        if consumed > 0 {
            _ = output!.removeFirstFrames(consumed)
            consumed = 0
        }
        output!.appendFrames(b)
    }

    /// Copies up to `capacity` waiting frames into `planes`; returns the count.
    func copyOut(_ planes: UnsafePointer<UnsafeMutableRawPointer?>, _ capacity: Int) -> Int {
        guard let out = output else { return 0 }
        let n = min(capacity, waiting)
        guard n > 0 else { return 0 }
        let bpf = out.format.bytesPerFrame
        for p in 0..<out.format.planeCount {
            guard let dst = planes[p] else { continue }
            out.planes[p].withUnsafeBytes { src in
                dst.copyMemory(from: src.baseAddress! + consumed * bpf, byteCount: n * bpf)
            }
        }
        consumed += n
        return n
    }
}

extension AudioConverterHandle: NamedHandle { static var kind: String { "audio converter" } }

/// The sample type and interleaving of an MK_SAMPLES_* value; nil for an unknown one.
private func sampleType(_ v: Int32) -> (SampleFormat, Bool)? {
    guard let f = SampleFormat(rawValue: v) else { return nil }
    return (f.interleaved, f.isPlanar)
}

/// The MK_SAMPLES_* value of a type and interleaving (``SampleFormat``'s raw values are the codes).
func sampleFormatCode(_ t: SampleFormat, planar: Bool) -> Int32 {
    (planar ? t.planar : t.interleaved).rawValue
}

/// Reads a C format: the request it makes (a zero rate or channel count left open when
/// `open` allows it). Throws `.invalidArgument` naming the field.
func request(_ f: UnsafePointer<mk_audio_format>?, _ role: String, open: Bool) throws -> AudioOutputRequest {
    guard let f else { throw MediaError(.invalidArgument, "the \(role) format is NULL") }
    guard Int(f.pointee.struct_size) >= MemoryLayout<mk_audio_format>.size else {
        throw MediaError(.invalidArgument, "\(role) mk_audio_format.struct_size is \(f.pointee.struct_size); this library needs at least \(MemoryLayout<mk_audio_format>.size)")
    }
    let c = f.pointee
    guard let (type, planar) = sampleType(c.sample_format) else {
        throw MediaError(.invalidArgument, "\(role) sample_format \(c.sample_format) is not an MK_SAMPLES_* value")
    }
    guard c.sample_rate > 0 || (open && c.sample_rate == 0) else {
        throw MediaError(.invalidArgument, "\(role) sample_rate \(c.sample_rate) is not positive")
    }
    guard c.channels > 0 || (open && c.channels == 0 && c.channel_mask == 0) else {
        throw MediaError(.invalidArgument, "\(role) channels \(c.channels) is not positive")
    }
    var layout: ChannelLayout?
    if c.channel_mask != 0 {
        guard let l = ChannelLayout(mask: c.channel_mask), l.count == Int(c.channels) else {
            throw MediaError(.invalidArgument, "\(role) channel_mask 0x\(String(c.channel_mask, radix: 16)) does not name \(c.channels) known channel(s)")
        }
        layout = l
    } else if c.channels > 0 {
        layout = AudioFormat(type, sampleRate: 1, channels: Int(c.channels)).layout
    }
    return AudioOutputRequest(type, planar: planar, sampleRate: c.sample_rate > 0 ? Int(c.sample_rate) : nil, layout: layout)
}

/// The preset of an MK_RESAMPLE_* value. Throws `.invalidArgument` for another.
func resampleQuality(_ code: Int32) throws -> ResampleQuality {
    switch code {
    case MK_RESAMPLE_LOW: return .low
    case MK_RESAMPLE_MEDIUM: return .medium
    case MK_RESAMPLE_HIGH: return .high
    default: throw MediaError(.invalidArgument, "quality \(code) is not MK_RESAMPLE_LOW, MEDIUM or HIGH")
    }
}

/// The checked settings and the converter options they make.
private func converterOptions(_ settings: UnsafePointer<mk_audio_converter_settings>?, inChannels: Int?, outChannels: Int?) throws
    -> (mk_audio_converter_settings, AudioConverter.Options, TrimMode) {
    var s = mk_audio_converter_settings()
    mk_audio_converter_default_settings(&s)
    if let settings {
        // The 0.1 struct ended at backend; the priming fields keep their defaults when it is that short.
        let minimum = MemoryLayout<mk_audio_converter_settings>.offset(of: \mk_audio_converter_settings.prime_leading)!
        guard Int(settings.pointee.struct_size) >= minimum else {
            throw MediaError(.invalidArgument, "mk_audio_converter_settings.struct_size is \(settings.pointee.struct_size); this library needs at least \(minimum)")
        }
        s = copyIn(s, from: settings, size: settings.pointee.struct_size)
    }
    var o = AudioConverter.Options()
    o.quality = try resampleQuality(s.quality)
    o.dither = s.dither != 0
    o.primeLeading = Int(s.prime_leading)
    o.primeTrailing = Int(s.prime_trailing)
    if let m = s.mix_matrix {
        guard let i = inChannels, let out = outChannels else {
            throw MediaError(.invalidArgument, "a mix_matrix needs the channel counts of both formats")
        }
        o.channelMix = .matrix((0..<out).map { r in (0..<i).map { m[r * i + $0] } })
    }
    if let map = s.channel_map {
        guard s.mix_matrix == nil else { throw MediaError(.invalidArgument, "give a channel_map or a mix_matrix, not both") }
        guard let out = outChannels else { throw MediaError(.invalidArgument, "a channel_map needs the output's channel count") }
        o.channelMix = .map(try (0..<out).map { k in
            let v = map[k]
            guard v >= -1 else { throw MediaError(.invalidArgument, "channel_map[\(k)] is \(v): an input channel, or -1 for silence") }
            return v < 0 ? nil : Int(v)
        })
    }
    switch s.prime_method {
    case MK_PRIME_NORMAL: o.primeMethod = .normal
    case MK_PRIME_PRE: o.primeMethod = .pre
    case MK_PRIME_NONE: o.primeMethod = .none
    default: throw MediaError(.invalidArgument, "prime_method \(s.prime_method) is not MK_PRIME_NORMAL, MK_PRIME_PRE or MK_PRIME_NONE")
    }
    guard let trim = trimMode(s.trim) else {
        throw MediaError(.invalidArgument, "trim \(s.trim) is not MK_TRIM_NONE, MK_TRIM_GAPLESS or MK_TRIM_FFMPEG")
    }
    return (s, o, trim)
}

@_cdecl("mk_audio_converter_default_settings")
public func mk_audio_converter_default_settings(_ s: UnsafeMutablePointer<mk_audio_converter_settings>?) {
    guard let s else { return }
    s.pointee = mk_audio_converter_settings(struct_size: UInt32(MemoryLayout<mk_audio_converter_settings>.size), quality: MK_RESAMPLE_MEDIUM,
                                            dither: 0, mix_matrix: nil, trim: MK_TRIM_GAPLESS, threads: 0, backend: nil,
                                            prime_leading: 0, prime_trailing: 0, channel_map: nil, prime_method: MK_PRIME_NORMAL)
}

@_cdecl("mk_audio_converter_open")
public func mk_audio_converter_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ from: UnsafePointer<mk_audio_format>?,
                                    _ to: UnsafePointer<mk_audio_format>?, _ settings: UnsafePointer<mk_audio_converter_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_audio_converter_open: out is NULL") }
    out.pointee = nil
    return guarded {
        let src = try request(from, "source", open: false), dst = try request(to, "destination", open: false)
        let (_, options, _) = try converterOptions(settings, inChannels: src.layout?.count, outChannels: dst.layout?.count)
        let source = AudioFormat(src.sampleType, planar: src.planar, sampleRate: src.sampleRate!, layout: src.layout!)
        let converter = try AudioConverter(from: source, to: dst.resolved(for: source), options: options)
        out.pointee = Handles.make(AudioConverterHandle(pcm: converter))
        return MK_OK
    }
}

@_cdecl("mk_audio_converter_open_track")
public func mk_audio_converter_open_track(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ demuxer: OpaquePointer?, _ track: Int32,
                                          _ to: UnsafePointer<mk_audio_format>?, _ settings: UnsafePointer<mk_audio_converter_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_audio_converter_open_track: out is NULL") }
    out.pointee = nil
    guard let t = demuxerTrack(demuxer, track, "mk_audio_converter_open_track") else { return MK_EINVAL }
    return guarded {
        let dst = try request(to, "destination", open: true)
        let (s, options, trim) = try converterOptions(settings, inChannels: t.parameters.channels > 0 ? t.parameters.channels : nil,
                                                      outChannels: dst.layout?.count)
        let converter = try PacketAudioConverter(track: t, to: dst, options: options, backend: s.backend.map { String(cString: $0) },
                                                 threads: Int(s.threads), trim: trim)
        out.pointee = Handles.make(AudioConverterHandle(packets: converter, track: Int(track)))
        return MK_OK
    }
}

@_cdecl("mk_audio_converter_close")
public func mk_audio_converter_close(_ c: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(c, as: AudioConverterHandle.self)
}

@_cdecl("mk_audio_converter_output_format")
public func mk_audio_converter_output_format(_ c: OpaquePointer?, _ format: UnsafeMutablePointer<mk_audio_format>?) -> Int32 {
    guard let h = liveHandle(AudioConverterHandle.self, c, "mk_audio_converter_output_format") else { return MK_EINVAL }
    guard let format else { return fail(MK_EINVAL, "mk_audio_converter_output_format: format is NULL") }
    guard sizeOK(format.pointee.struct_size, MemoryLayout<mk_audio_format>.size, "mk_audio_format") else { return MK_EINVAL }
    guard let d = h.pcm?.destination ?? h.packets?.destination else { return MK_EAGAIN }
    format.pointee.sample_format = sampleFormatCode(d.sampleType, planar: d.isPlanar)
    format.pointee.sample_rate = Int32(clamping: d.sampleRate)
    format.pointee.channels = Int32(d.channels)
    format.pointee.channel_mask = d.layout.isMaskOrder ? d.layout.mask : 0
    return MK_OK
}

@_cdecl("mk_audio_converter_push")
public func mk_audio_converter_push(_ c: OpaquePointer?, _ planes: UnsafePointer<UnsafeRawPointer?>?, _ frames: Int32) -> Int32 {
    guard let h = liveHandle(AudioConverterHandle.self, c, "mk_audio_converter_push") else { return MK_EINVAL }
    guard let pcm = h.pcm else { return fail(MK_EINVAL, "mk_audio_converter_push: this converter takes packets (mk_audio_converter_push_packet)") }
    guard frames >= 0 else { return fail(MK_EINVAL, "mk_audio_converter_push: frames \(frames) is negative") }
    if h.flushed { return fail(MK_ESTATE, "mk_audio_converter_push: the converter was flushed") }
    if frames == 0 { return MK_OK }
    guard let planes else { return fail(MK_EINVAL, "mk_audio_converter_push: planes is NULL") }
    var ptrs: [UnsafeRawPointer] = []
    for p in 0..<pcm.source.planeCount {
        guard let ptr = planes[p] else { return fail(MK_EINVAL, "mk_audio_converter_push: plane \(p) is NULL") }
        ptrs.append(ptr)
    }
    return guarded {
        h.keep(try pcm.convert(planes: ptrs, frames: Int(frames)))
        return MK_OK
    }
}

@_cdecl("mk_audio_converter_push_packet")
public func mk_audio_converter_push_packet(_ c: OpaquePointer?, _ packet: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(AudioConverterHandle.self, c, "mk_audio_converter_push_packet") else { return MK_EINVAL }
    guard let conv = h.packets else { return fail(MK_EINVAL, "mk_audio_converter_push_packet: this converter takes PCM (mk_audio_converter_push)") }
    if h.flushed { return fail(MK_ESTATE, "mk_audio_converter_push_packet: the converter was flushed") }
    guard let ph = liveHandle(PacketHandle.self, packet, "mk_audio_converter_push_packet") else { return MK_EINVAL }
    guard ph.packet.trackIndex == h.track else {
        return fail(MK_EINVAL, "mk_audio_converter_push_packet: the packet is from track \(ph.packet.trackIndex), the converter decodes track \(h.track)")
    }
    return guarded {
        h.keep(try conv.convert(ph.packet))
        return MK_OK
    }
}

@_cdecl("mk_audio_converter_flush")
public func mk_audio_converter_flush(_ c: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(AudioConverterHandle.self, c, "mk_audio_converter_flush") else { return MK_EINVAL }
    if h.flushed { return MK_OK }
    h.flushed = true
    return guarded {
        if let pcm = h.pcm { h.keep(pcm.flush()) }
        if let conv = h.packets { h.keep(try conv.flush()) }
        return MK_OK
    }
}

@_cdecl("mk_audio_converter_reset")
public func mk_audio_converter_reset(_ c: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(AudioConverterHandle.self, c, "mk_audio_converter_reset") else { return MK_EINVAL }
    h.pcm?.reset()
    h.packets?.reset()
    h.output = nil
    h.consumed = 0
    h.flushed = false
    h.pullEnded = false
    h.callbackEnd = nil
    return MK_OK
}

@_cdecl("mk_audio_converter_get_stats")
public func mk_audio_converter_get_stats(_ c: OpaquePointer?, _ stats: UnsafeMutablePointer<mk_audio_converter_stats>?) -> Int32 {
    guard let h = liveHandle(AudioConverterHandle.self, c, "mk_audio_converter_get_stats") else { return MK_EINVAL }
    guard let stats else { return fail(MK_EINVAL, "mk_audio_converter_get_stats: stats is NULL") }
    // The shorter struct ended at latency (its size, padded, 32 bytes); the later fields are filled when struct_size covers them.
    let size = Int(stats.pointee.struct_size)
    guard sizeOK(stats.pointee.struct_size, MemoryLayout<mk_audio_converter_stats>.offset(of: \mk_audio_converter_stats.latency)! + 4,
                 "mk_audio_converter_stats") else { return MK_EINVAL }
    guard let pcm = h.pcm else { return fail(MK_EINVAL, "mk_audio_converter_get_stats: a track converter's input is packets; the counts are a PCM converter's") }
    stats.pointee.input_frames = pcm.inputFrames
    stats.pointee.output_frames = pcm.outputFrames
    stats.pointee.latency = Int32(clamping: pcm.latency)
    func covers(_ field: PartialKeyPath<mk_audio_converter_stats>) -> Bool {
        size >= MemoryLayout<mk_audio_converter_stats>.offset(of: field)! + 4
    }
    if covers(\mk_audio_converter_stats.prime_leading_frames) { stats.pointee.prime_leading_frames = Int32(clamping: pcm.primeInfo.leadingFrames) }
    if covers(\mk_audio_converter_stats.prime_trailing_frames) { stats.pointee.prime_trailing_frames = Int32(clamping: pcm.primeInfo.trailingFrames) }
    if covers(\mk_audio_converter_stats.max_output_packet_size) { stats.pointee.max_output_packet_size = Int32(clamping: pcm.maximumOutputPacketSize) }
    return MK_OK
}

/// The PCM converter of `c` for a buffer-size call, or nil with the error set.
private func bufferSizeConverter(_ c: OpaquePointer?, _ bytes: Int64, _ result: UnsafeMutablePointer<Int64>?, _ function: String) -> AudioConverter? {
    guard let h = liveHandle(AudioConverterHandle.self, c, function) else { return nil }
    guard result != nil else { _ = fail(MK_EINVAL, "\(function): the result pointer is NULL"); return nil }
    guard bytes >= 0 else { _ = fail(MK_EINVAL, "\(function): \(bytes) bytes is negative"); return nil }
    guard let pcm = h.pcm else { _ = fail(MK_EINVAL, "\(function): a track converter's input is packets; buffer sizes are a PCM converter's"); return nil }
    return pcm
}

@_cdecl("mk_audio_converter_output_buffer_size")
public func mk_audio_converter_output_buffer_size(_ c: OpaquePointer?, _ inputBytes: Int64, _ outputBytes: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let pcm = bufferSizeConverter(c, inputBytes, outputBytes, "mk_audio_converter_output_buffer_size") else { return MK_EINVAL }
    outputBytes!.pointee = Int64(pcm.outputBufferSize(forInputBytes: Int(clamping: inputBytes)))
    return MK_OK
}

@_cdecl("mk_audio_converter_input_buffer_size")
public func mk_audio_converter_input_buffer_size(_ c: OpaquePointer?, _ outputBytes: Int64, _ inputBytes: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let pcm = bufferSizeConverter(c, outputBytes, inputBytes, "mk_audio_converter_input_buffer_size") else { return MK_EINVAL }
    inputBytes!.pointee = Int64(pcm.inputBufferSize(forOutputBytes: Int(clamping: outputBytes)))
    return MK_OK
}

@_cdecl("mk_audio_converter_read")
public func mk_audio_converter_read(_ c: OpaquePointer?, _ planes: UnsafePointer<UnsafeMutableRawPointer?>?, _ capacity: Int32,
                                    _ frames: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(AudioConverterHandle.self, c, "mk_audio_converter_read") else { return MK_EINVAL }
    guard let frames else { return fail(MK_EINVAL, "mk_audio_converter_read: frames is NULL") }
    frames.pointee = 0
    guard capacity >= 0 else { return fail(MK_EINVAL, "mk_audio_converter_read: capacity \(capacity) is negative") }
    if h.waiting == 0 { return h.flushed ? MK_EOF : MK_EAGAIN }
    guard let planes else {              // a query: how many frames wait
        frames.pointee = Int32(clamping: h.waiting)
        return MK_OK
    }
    let count = h.output!.format.planeCount
    for p in 0..<count where planes[p] == nil { return fail(MK_EINVAL, "mk_audio_converter_read: plane \(p) of \(count) is NULL") }
    frames.pointee = Int32(h.copyOut(planes, Int(capacity)))
    return MK_OK
}

@_cdecl("mk_audio_converter_fill")
public func mk_audio_converter_fill(_ c: OpaquePointer?, _ planes: UnsafePointer<UnsafeMutableRawPointer?>?, _ frames: Int32,
                                    _ input: mk_audio_input_callback?, _ user: UnsafeMutableRawPointer?,
                                    _ filled: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(AudioConverterHandle.self, c, "mk_audio_converter_fill") else { return MK_EINVAL }
    guard let pcm = h.pcm else { return fail(MK_EINVAL, "mk_audio_converter_fill: this converter takes packets: mk_audio_converter_fill_packets") }
    guard let filled else { return fail(MK_EINVAL, "mk_audio_converter_fill: filled is NULL") }
    filled.pointee = 0
    guard let input else { return fail(MK_EINVAL, "mk_audio_converter_fill: input is NULL") }
    guard frames >= 0 else { return fail(MK_EINVAL, "mk_audio_converter_fill: frames \(frames) is negative") }
    guard let planes else { return fail(MK_EINVAL, "mk_audio_converter_fill: planes is NULL") }
    let count = pcm.destination.planeCount
    for p in 0..<count where planes[p] == nil { return fail(MK_EINVAL, "mk_audio_converter_fill: plane \(p) of \(count) is NULL") }
    let source = pcm.source
    return h.pull("mk_audio_converter_fill", planes, frames, filled) {
        try pcm.fill(frames: $0, pull: { wanted in
            var given: UnsafePointer<UnsafeRawPointer?>?
            let n = input(user, Int32(clamping: wanted), &given)
            if let answer: AudioConverterInput<AudioBuffer> = h.answer(n, "mk_audio_converter_fill") { return answer }
            return .data(try pulledPCM(given, frames: n, format: source))
        })
    } rest: {
        try pcm.fill(frames: pcm.pendingFrames, pull: { _ in .noDataNow })
    }
}

@_cdecl("mk_audio_converter_fill_packets")
public func mk_audio_converter_fill_packets(_ c: OpaquePointer?, _ planes: UnsafePointer<UnsafeMutableRawPointer?>?, _ frames: Int32,
                                            _ input: mk_audio_packet_callback?, _ user: UnsafeMutableRawPointer?,
                                            _ filled: UnsafeMutablePointer<Int32>?) -> Int32 {
    let function = "mk_audio_converter_fill_packets"
    guard let h = liveHandle(AudioConverterHandle.self, c, function) else { return MK_EINVAL }
    guard let conv = h.packets else { return fail(MK_EINVAL, "\(function): this converter takes PCM: mk_audio_converter_fill") }
    guard let filled else { return fail(MK_EINVAL, "\(function): filled is NULL") }
    filled.pointee = 0
    guard let input else { return fail(MK_EINVAL, "\(function): input is NULL") }
    guard frames >= 0 else { return fail(MK_EINVAL, "\(function): frames \(frames) is negative") }
    let track = h.track
    let pullPacket: (Int) throws -> AudioConverterInput<[Packet]> = { wanted in
        var given: OpaquePointer?
        let n = input(user, Int32(clamping: wanted), &given)
        if let answer: AudioConverterInput<[Packet]> = h.answer(n, function) {
            Handles.release(&given, as: PacketHandle.self)
            return answer
        }
        guard let ph = Handles.get(given, as: PacketHandle.self) else {
            throw MediaError(.invalidArgument, "the packet callback returned \(n) and no live packet")
        }
        let packet = ph.packet
        Handles.release(&given, as: PacketHandle.self)        // the converter owns it
        guard packet.trackIndex == track else {
            throw MediaError(.invalidArgument, "the packet callback gave a packet of track \(packet.trackIndex); the converter decodes track \(track)")
        }
        return .data([packet])
    }
    return h.fillTrack(conv, function, planes, frames, filled, pullPacket)
}

@_cdecl("mk_audio_converter_fill_demuxer")
public func mk_audio_converter_fill_demuxer(_ c: OpaquePointer?, _ demuxer: OpaquePointer?, _ planes: UnsafePointer<UnsafeMutableRawPointer?>?,
                                            _ frames: Int32, _ filled: UnsafeMutablePointer<Int32>?) -> Int32 {
    let function = "mk_audio_converter_fill_demuxer"
    guard let h = liveHandle(AudioConverterHandle.self, c, function) else { return MK_EINVAL }
    guard let conv = h.packets else { return fail(MK_EINVAL, "\(function): this converter takes PCM: mk_audio_converter_fill") }
    guard let dh = liveHandle(DemuxerHandle.self, demuxer, function) else { return MK_EINVAL }
    guard let filled else { return fail(MK_EINVAL, "\(function): filled is NULL") }
    filled.pointee = 0
    guard frames >= 0 else { return fail(MK_EINVAL, "\(function): frames \(frames) is negative") }
    let track = h.track
    guard track < dh.demuxer.tracks.count else {
        return fail(MK_EINVAL, "\(function): the converter decodes track \(track); this demuxer has \(dh.demuxer.tracks.count) track(s)")
    }
    var cut: MediaError?
    let pullPacket: (Int) throws -> AudioConverterInput<[Packet]> = { _ in
        do {
            guard let p = try readPacket(dh, track: track, { try dh.demuxer.read(track: track) }) else {
                h.pullEnded = true
                return .endOfStream
            }
            return .data([p])
        } catch let e as MediaError where e.kind == .truncated {
            cut = e                   // read as far as it goes, then said
            h.pullEnded = true
            return .endOfStream
        }
    }
    var status: Int32
    if let planes {
        status = h.fillTrack(conv, function, planes, frames, filled, pullPacket)
    } else if frames == 0 {
        status = h.fillTrack(conv, function, nil, 0, filled, pullPacket)
    } else {
        status = h.skipTrack(conv, function, frames, filled, pullPacket)
    }
    if status == MK_OK, let cut {
        return fail(MK_ETRUNCATED, "\(function): \(cut.description); the \(filled.pointee) frame(s) before the cut were given")
    }
    return status
}

extension AudioConverterHandle {
    /// A track converter's pull (mk_audio_converter_fill_packets, _fill_demuxer) with its
    /// packets from `pullPacket`; `frames` 0 with no output format yet decodes up to the first
    /// frame, so that the format is known before planes are sized.
    func fillTrack(_ conv: PacketAudioConverter, _ function: String, _ planes: UnsafePointer<UnsafeMutableRawPointer?>?, _ frames: Int32,
                   _ filled: UnsafeMutablePointer<Int32>, _ pullPacket: @escaping (Int) throws -> AudioConverterInput<[Packet]>) -> Int32 {
        guard planes != nil || frames == 0 else { return fail(MK_EINVAL, "\(function): planes is NULL") }
        if let planes, let d = conv.destination {
            for p in 0..<d.planeCount where planes[p] == nil { return fail(MK_EINVAL, "\(function): plane \(p) of \(d.planeCount) is NULL") }
        }
        if frames == 0 && conv.destination == nil && !flushed {
            return pull(function, nil, 0, filled) { _ in
                var got = try conv.fill(frames: 1, pull: pullPacket)
                while conv.destination == nil && callbackEnd == nil && !pullEnded {
                    got = try conv.fill(frames: 1, pull: pullPacket)
                }
                return got
            } rest: {
                try conv.fill(frames: conv.pendingFrames, pull: { _ in .noDataNow })
            }
        }
        guard let planes else { return MK_OK }       // 0 frames, the format known: nothing to do
        // Each packet's frames go straight to the caller's planes.
        return pullWriting(function, planes, frames, filled, { done in
            try conv.fill(into: planes, frames: Int(frames), written: &done, pull: pullPacket)
        }, rest: {
            try conv.fill(frames: conv.pendingFrames, pull: { _ in .noDataNow })
        })
    }

    /// Decodes and drops `frames` frames (fewer at the end): pulls into a scratch buffer of at
    /// most 8192 frames, as many times as it takes. *filled counts the frames dropped.
    func skipTrack(_ conv: PacketAudioConverter, _ function: String, _ frames: Int32, _ filled: UnsafeMutablePointer<Int32>,
                   _ pullPacket: @escaping (Int) throws -> AudioConverterInput<[Packet]>) -> Int32 {
        var status = fillTrack(conv, function, nil, 0, filled, pullPacket)      // the output format
        guard status == MK_OK, let d = conv.destination else { return status }
        let chunk = min(Int(frames), 8192)
        let scratch = (0..<d.planeCount).map { _ in UnsafeMutableRawPointer.allocate(byteCount: chunk * d.bytesPerFrame, alignment: 16) }
        defer { scratch.forEach { $0.deallocate() } }
        let planes: [UnsafeMutableRawPointer?] = scratch
        var done = 0
        while done < Int(frames) {
            let want = min(chunk, Int(frames) - done)
            var got: Int32 = 0
            status = planes.withUnsafeBufferPointer { fillTrack(conv, function, $0.baseAddress!, Int32(want), &got, pullPacket) }
            done += Int(got)
            if status != MK_OK || Int(got) < want { break }
        }
        filled.pointee = Int32(done)
        return status
    }
}

extension AudioConverterHandle {
    /// What a pull callback's return value `n` means when it is not data: nil for data (n > 0);
    /// `.endOfStream` for 0; `.noDataNow` for MK_EAGAIN and for a failure (recorded in
    /// ``callbackEnd``, so that the fill returns what it made so far with the status).
    func answer<D>(_ n: Int32, _ function: String) -> AudioConverterInput<D>? {
        if n > 0 { return nil }
        if n == 0 {
            pullEnded = true
            return .endOfStream
        }
        callbackEnd = n
        return .noDataNow
    }

    /// One pull: what waits from earlier pushes first, then `produce(missing)`; what `rest()`
    /// returns (the surplus a converter made beyond the request) is kept waiting, so that reads,
    /// pushes and fills see the frames in order. *filled is set on every return, errors too:
    /// the frames written to planes are never lost.
    func pull(_ function: String, _ planes: UnsafePointer<UnsafeMutableRawPointer?>?, _ frames: Int32,
              _ filled: UnsafeMutablePointer<Int32>, _ produce: (Int) throws -> AudioBuffer, rest: () throws -> AudioBuffer) -> Int32 {
        pullWriting(function, planes, frames, filled, { done in
            let b = try produce(Int(frames) - done)
            guard let planes else {
                keep(b)
                return
            }
            let bpf = b.format.bytesPerFrame
            for p in 0..<b.format.planeCount where b.frames > 0 {
                b.planes[p].withUnsafeBytes { src in
                    planes[p]!.advanced(by: done * bpf).copyMemory(from: src.baseAddress!, byteCount: b.frames * bpf)
                }
            }
            done += b.frames
        }, rest: rest)
    }

    /// ``pull(_:_:_:_:_:rest:)`` with a producer that writes to planes itself: `write(&done)`
    /// writes frames from `done` on (after what waited) and counts them in `done`, a throw
    /// included.
    func pullWriting(_ function: String, _ planes: UnsafePointer<UnsafeMutableRawPointer?>?, _ frames: Int32,
                     _ filled: UnsafeMutablePointer<Int32>, _ write: (inout Int) throws -> Void, rest: () throws -> AudioBuffer) -> Int32 {
        callbackEnd = nil
        var done = planes.map { copyOut($0, Int(frames)) } ?? 0
        filled.pointee = Int32(done)
        if done == Int(frames) && frames > 0 || flushed { return MK_OK }    // flushed: only what waits is left
        var thrown: Error?
        do {
            try write(&done)
        } catch { thrown = error }
        filled.pointee = Int32(done)
        if let more = try? rest() { keep(more) }
        if pullEnded { flushed = true }
        if let thrown { return fail(thrown) }
        if let n = callbackEnd {
            if n == MK_EAGAIN {
                mkc_set_last_error("\(function): no input for now (the callback returned MK_EAGAIN); *filled is what was converted so far")
                return MK_EAGAIN
            }
            return fail(MK_EFAIL, "\(function): the input callback failed (returned \(n)); the \(done) frame(s) converted before it were written")
        }
        return MK_OK
    }
}

@_cdecl("mk_channel_layout")
public func mk_channel_layout(_ name: UnsafePointer<CChar>?, _ mask: UnsafeMutablePointer<UInt64>?, _ channels: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let name else { return fail(MK_EINVAL, "mk_channel_layout: name is NULL") }
    return guarded {
        let layout = try ChannelLayout(name: String(cString: name))
        mask?.pointee = layout.isMaskOrder ? layout.mask : 0
        channels?.pointee = Int32(layout.count)
        return MK_OK
    }
}

/// A copy of the `frames` frames of `format` PCM an input callback gave (one pointer per plane
/// of the format), for the pulls of mk_audio_converter_fill and mk_encoder_fill.
/// - Throws: `.invalidArgument` for NULL planes.
func pulledPCM(_ given: UnsafePointer<UnsafeRawPointer?>?, frames n: Int32, format: AudioFormat) throws -> AudioBuffer {
    guard let given else { throw MediaError(.invalidArgument, "the input callback returned \(n) frames and NULL planes") }
    let bytes = Int(n) * format.bytesPerFrame
    var arrays: [[UInt8]] = []
    for p in 0..<format.planeCount {
        guard let ptr = given[p] else { throw MediaError(.invalidArgument, "the input callback's plane \(p) is NULL") }
        arrays.append(Array(UnsafeRawBufferPointer(start: ptr, count: bytes)))
    }
    return try AudioBuffer(format: format, frames: Int(n), planes: arrays)
}
