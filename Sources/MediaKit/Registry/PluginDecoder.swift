import CMediaKitPlugin

/// Keeps a plugin frame's release callback and opaque pointer together.
private struct ReleaseHandle: @unchecked Sendable {
    let release: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
    let opaque: UnsafeMutableRawPointer?
    func callAsFunction() { release?(opaque) }
}

/// A packet's bytes lent to a plugin that keeps them (see "Packets" in mediakit_plugin.h):
/// the plugin holds one reference per retain; the array, never mutated, keeps its address.
private final class KeptBytes: Sendable {
    let data: [UInt8]
    init(_ data: [UInt8]) { self.data = data }
}

/// A ``Decoder`` backed by a plugin's C vtable.
final class PluginDecoder: Decoder, @unchecked Sendable {
    let parameters: CodecParameters
    let backend: MediaRegistry.Backend
    private let instance: UnsafeMutableRawPointer
    private let vtable: UnsafePointer<mk_plugin_decoder_vtable>
    private let timeBase: Rational
    /// Where the stream stands: the one record of draining between the plugin and every
    /// layer above (they pass ``DecoderOutput/endOfStream`` on).
    private var stage = DrainStage.decoding
    private let context: String

    init(parameters: CodecParameters, timeBase: Rational, backend: MediaRegistry.Backend,
         instance: UnsafeMutableRawPointer, vtable: UnsafePointer<mk_plugin_decoder_vtable>) {
        self.parameters = parameters
        self.timeBase = timeBase
        self.backend = backend
        self.instance = instance
        self.vtable = vtable
        self.context = "\(backend.plugin.name) \(parameters.codec) decoder"
    }

    deinit { vtable.pointee.destroy(instance) }

    /// Starts `b`'s decoder for a stream: the plugin's codec config from `parameters`,
    /// `timeBase` and `threads`, its create call, and a check of the vtable it returns
    /// (``MediaRegistry`` only chooses the backends to try, in order).
    /// - Parameters:
    ///   - errorBuffer: where the plugin writes why it refused (`size` bytes).
    /// - Returns: the plugin's status, with the decoder when it made one (nil: refused).
    /// - Throws: `.pluginABI` when the vtable returned is incomplete (the instance is destroyed).
    static func make(_ b: MediaRegistry.Backend, parameters: CodecParameters, timeBase: Rational, threads: Int,
                     errorBuffer errbuf: UnsafeMutablePointer<CChar>, size errsize: Int) throws -> (Int32, PluginDecoder?) {
        var cfg = mk_plugin_codec_config()
        cfg.struct_size = UInt32(MemoryLayout<mk_plugin_codec_config>.size)
        cfg.media_type = parameters.mediaType == .audio ? MK_MEDIA_AUDIO : MK_MEDIA_VIDEO
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
        // The container's tag (plugin ABI 2.5), as the track info gives it: "UYVY", "2vuy".
        let status: Int32 = parameters.codec.rawValue.withCString { codec in
            parameters.codecTag.withCString { tag in
                parameters.extradata.withUnsafeBufferPointer { extra in
                    cfg.codec = codec
                    cfg.codec_tag = tag
                    cfg.extradata = extra.baseAddress
                    cfg.extradata_size = extra.count
                    return b.raw.pointee.create(&cfg, &instance, &vt, errbuf, errsize)
                }
            }
        }
        guard status == MK_OK, let instance, let vt else { return (status, nil) }
        guard vt.pointee.struct_size >= PluginLoader.endOf(\mk_plugin_decoder_vtable.last_error),
              vt.pointee.send_packet != nil, vt.pointee.receive_frame != nil, vt.pointee.destroy != nil,
              vt.pointee.flush != nil, vt.pointee.last_error != nil else {
            vt.pointee.destroy?(instance)   // what can be freed is
            throw MediaError(.pluginABI, "the \(b.plugin.name) backend for \(parameters.codec) returned an incomplete vtable", path: b.plugin.path)
        }
        return (status, PluginDecoder(parameters: parameters, timeBase: timeBase, backend: b, instance: instance, vtable: vt))
    }

    private func lastError() -> String {
        guard let f = vtable.pointee.last_error, let m = f(instance) else { return "" }
        return String(cString: m)
    }

    private func failure(_ status: Int32, _ what: String) -> MediaError {
        MediaError(pluginStatus: status, what, detail: lastError(), context: context)
    }

    func send(_ packet: Packet) throws -> SendResult {
        if stage != .decoding { throw MediaError(.state, "send after flush(): call reset() to decode more", context: context) }
        // The bytes are offered to keep (mk_plugin_packet.retain): a plugin that can use them
        // in place (dav1d) takes a reference to this box instead of copying the packet.
        let kept = KeptBytes(packet.data)
        let status: Int32 = kept.data.withUnsafeBufferPointer { buf in
            var p = mk_plugin_packet()
            if buf.count > 0 {
                p.owner = Unmanaged.passUnretained(kept).toOpaque()
                p.retain = { owner in _ = owner.map { Unmanaged<KeptBytes>.fromOpaque($0).retain() } }
                p.release = { owner in owner.map { Unmanaged<KeptBytes>.fromOpaque($0).release() } }
            }
            p.struct_size = UInt32(MemoryLayout<mk_plugin_packet>.size)
            p.flags = (packet.isKeyframe ? MK_PACKET_FLAG_KEY : 0) | (packet.isDiscarded ? MK_PACKET_FLAG_DISCARD : 0)
            p.data = buf.baseAddress
            p.size = buf.count
            p.pts = packet.pts
            p.dts = packet.dts
            p.duration = packet.duration
            return vtable.pointee.send_packet(instance, &p)
        }
        if status == MK_OK { return .accepted }
        if status == MK_EAGAIN { return .receiveFirst }
        throw failure(status, "decoding a packet (pts \(packet.pts))")
    }

    func flush() throws {
        guard stage == .decoding else { return }
        stage = .draining(endOfStreamSent: false)
        try sendEndOfStream()
    }

    /// Sends the end-of-stream (NULL) packet; a decoder with output waiting refuses it
    /// (EAGAIN), and ``receiveOutput()`` sends it again once that output is received.
    private func sendEndOfStream() throws {
        let status = vtable.pointee.send_packet(instance, nil)
        if status == MK_EAGAIN { return }
        stage = .draining(endOfStreamSent: true)
        if status != MK_OK && status != MK_EOF { throw failure(status, "draining") }
    }

    func reset() {
        vtable.pointee.flush(instance)
        stage = .decoding
    }

    func receiveOutput() throws -> DecoderOutput {
        if stage == .ended { return .endOfStream }
        var f = mk_plugin_frame()
        f.struct_size = UInt32(MemoryLayout<mk_plugin_frame>.size)
        var status = vtable.pointee.receive_frame(instance, &f)
        if status == MK_EAGAIN && stage == .draining(endOfStreamSent: false) {
            try sendEndOfStream()
            if stage == .draining(endOfStreamSent: false) {
                throw MediaError(.backend, "the decoder refuses the end of the stream (EAGAIN) but has no frame to give", context: context)
            }
            status = vtable.pointee.receive_frame(instance, &f)
        }
        switch status {
        case MK_OK: break
        case MK_EAGAIN: return .needsInput
        case MK_EOF:
            stage = .ended
            return .endOfStream
        default: throw failure(status, "receiving a frame")
        }
        return .frame(try Frame(plugin: f, timeBase: timeBase, context: context))
    }
}

/// Where a plugin decoder's or encoder's stream stands (plugin ABI: send NULL to drain,
/// EAGAIN and EOF from receive).
enum DrainStage: Equatable {
    /// Taking input.
    case decoding
    /// ``Decoder/flush()`` was called; the end-of-stream (NULL) input is sent, or waits until
    /// the output the plugin holds is received (it refused it with EAGAIN).
    case draining(endOfStreamSent: Bool)
    /// The plugin said EOF: everything was received.
    case ended
}

extension MediaError {
    /// The error for a failed plugin call: the kind from the MK_* status (mediakit_types.h),
    /// the plugin's own message (`detail`, from its last_error) after what was being done; both
    /// kept as ``MediaError/underlying``.
    init(pluginStatus status: Int32, _ what: String, detail: String, context: String) {
        let kind: MediaError.Kind
        switch status {
        case MK_EDATA: kind = .invalidData
        case MK_EINVALIDATED: kind = .sessionInvalidated
        case MK_EUNSUPPORTED: kind = .unsupported
        case MK_EINVAL: kind = .invalidArgument
        default: kind = .backend
        }
        self.init(kind, "\(what) failed (status \(status))" + (detail.isEmpty ? "" : ": \(detail)"), context: context,
                  underlying: .plugin(status: status, message: detail))
    }
}

extension Frame {
    /// Wraps a frame a plugin filled in (a decoder's or a converter's). The frame's memory stays
    /// the plugin's until the last copy of the returned frame goes away, which calls `release`.
    /// - Throws: `.pluginABI` for a format, plane count or size the ABI does not allow.
    init(plugin f: mk_plugin_frame, timeBase: Rational, context: String) throws {
        let release = ReleaseHandle(release: f.release, opaque: f.release_opaque)
        let storage = FrameStorage(keepsPlanesUnchanged: true, release: { release() })
        let ptrs = withUnsafeBytes(of: f.planes) { Array($0.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)) }
        let strides = withUnsafeBytes(of: f.strides) { Array($0.bindMemory(to: Int64.self)) }
        let count = Int(max(0, min(8, f.plane_count)))
        if f.media_type == MK_MEDIA_VIDEO {
            guard let format = PixelFormat(rawValue: f.format) else {
                throw MediaError(.pluginABI, "the plugin returned unknown pixel format \(f.format)", context: context)
            }
            guard count >= format.planeCount, f.width > 0, f.height > 0 else {
                throw MediaError(.pluginABI, "the plugin returned a \(f.width)x\(f.height) \(format.name) frame with \(count) planes", context: context)
            }
            var frame = Frame(mediaType: .video, pts: f.pts, duration: f.duration, timeBase: timeBase,
                              isKeyframe: f.flags & MK_PACKET_FLAG_KEY != 0, pixelFormat: format,
                              width: Int(f.width), height: Int(f.height), colorRange: ColorRange(code: Int(f.color_range)),
                              colorPrimaries: ColorPrimaries(rawValue: Int(f.color_primaries)), colorTransfer: ColorTransfer(rawValue: Int(f.color_trc)),
                              colorSpace: ColorMatrix(rawValue: Int(f.color_space)), planes: [], storage: storage)
            frame.chromaLocation = ChromaLocation(code: Int(f.chroma_location))
            if f.sar_num > 0 && f.sar_den > 0 { frame.sampleAspectRatio = Rational(Int64(f.sar_num), Int64(f.sar_den)) }
            var planes: [Plane] = []
            for i in 0..<format.planeCount {
                guard let p = ptrs[i] else { throw MediaError(.pluginABI, "plane \(i) is NULL", context: context) }
                let rows = frame.planeSize(i).height
                planes.append(Plane(base: UnsafeRawPointer(p), stride: Int(strides[i]), length: Int(strides[i]) * rows))
            }
            frame.planes = planes
            self = frame
        } else {
            guard let format = SampleFormat(rawValue: f.format) else {
                throw MediaError(.pluginABI, "the plugin returned unknown sample format \(f.format)", context: context)
            }
            let needed = format.isPlanar ? Int(f.channels) : 1
            guard count >= needed, f.channels > 0 else {
                throw MediaError(.pluginABI, "the plugin returned \(count) planes for \(f.channels) channels of \(format.name)", context: context)
            }
            var planes: [Plane] = []
            for i in 0..<needed {
                guard let p = ptrs[i] else { throw MediaError(.pluginABI, "plane \(i) is NULL", context: context) }
                planes.append(Plane(base: UnsafeRawPointer(p), stride: Int(strides[i]), length: Int(strides[i])))
            }
            self = Frame(mediaType: .audio, pts: f.pts, duration: f.duration, timeBase: timeBase,
                         sampleFormat: format, sampleRate: Int(f.sample_rate), channels: Int(f.channels),
                         channelMask: f.channel_mask, sampleCount: Int(f.nb_samples), planes: planes, storage: storage)
        }
    }
}
