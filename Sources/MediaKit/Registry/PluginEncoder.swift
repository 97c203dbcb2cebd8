import CMediaKitPlugin

/// An ``Encoder`` backed by a plugin's C vtable (plugin ABI 2.1). Input is queued and sent to
/// the plugin in frames of exactly the backend's frame size (the last one shorter), as the
/// ABI asks; packets the plugin hands over are copied into ``Packet``s.
final class PluginEncoder: Encoder, @unchecked Sendable {
    private(set) var parameters: CodecParameters
    let inputFormat: AudioFormat
    let frameSize: Int
    let encoderDelay: Int
    let timeBase: Rational
    let backend: MediaRegistry.EncoderBackend
    private(set) var inputSampleCount: Int64 = 0
    private let instance: UnsafeMutableRawPointer
    private let vtable: UnsafePointer<mk_plugin_encoder_vtable>
    private let context: String
    /// ``inputFormat`` as an MK_SAMPLES_* value.
    private let abiFormat: Int32
    /// Samples waiting for a whole frame, one array per plane, and how many.
    private var fifo: [[UInt8]]
    private var fifoFrames = 0
    /// Packets received while a frame was refused (EAGAIN), handed out first.
    private var ready: [Packet] = []
    /// Where the stream stands: the one record of draining between the plugin and the
    /// layers above (they pass ``EncoderOutput/endOfStream`` on).
    private var stage = DrainStage.decoding

    init(backend: MediaRegistry.EncoderBackend, input: AudioFormat, codec: CodecID, instance: UnsafeMutableRawPointer,
         vtable: UnsafePointer<mk_plugin_encoder_vtable>) throws {
        self.backend = backend
        self.inputFormat = input
        self.instance = instance
        self.vtable = vtable
        self.context = "\(backend.plugin.name) \(codec) encoder"
        guard let abi = SampleFormat(input) else {
            vtable.pointee.destroy(instance)
            throw MediaError(.invalidArgument, "an encoder cannot take packed 24-bit samples", context: context)
        }
        abiFormat = abi.rawValue
        fifo = Array(repeating: [], count: input.planeCount)
        var info = mk_plugin_encoder_info()
        info.struct_size = UInt32(MemoryLayout<mk_plugin_encoder_info>.size)
        let status = vtable.pointee.get_info(instance, &info)
        guard status == MK_OK, info.struct_size >= PluginLoader.endOf(\mk_plugin_encoder_info.packet_time_base_den),
              info.packet_time_base_num > 0, info.packet_time_base_den > 0, info.frame_size >= 0, info.encoder_delay >= 0 else {
            vtable.pointee.destroy(instance)
            throw MediaError(.pluginABI, "the encoder's get_info failed or is incomplete (status \(status), struct size \(info.struct_size))",
                             context: context)
        }
        frameSize = Int(info.frame_size)
        encoderDelay = Int(info.encoder_delay)
        timeBase = Rational(Int64(info.packet_time_base_num), Int64(info.packet_time_base_den))
        parameters = CodecParameters(mediaType: .audio, codec: codec,
                                     extradata: Self.bytes(info.extradata, info.extradata_size),
                                     sampleRate: Int(info.sample_rate > 0 ? info.sample_rate : Int32(input.sampleRate)),
                                     channels: Int(info.channels > 0 ? info.channels : Int32(input.channels)),
                                     bitRate: Int(info.bit_rate))
        parameters.channelMask = input.layout.mask
    }

    deinit { vtable.pointee.destroy(instance) }

    /// Starts `b`'s encoder: checks that it takes `input`'s sample format, fills the plugin's
    /// encoder config from `settings` and `input`, calls create and checks the vtable it
    /// returns (``MediaRegistry`` only chooses the backends to try, in order).
    /// - Parameters:
    ///   - errorBuffer: where the plugin writes why it refused (`size` bytes).
    /// - Returns: the plugin's status, with the encoder when it made one (nil: refused).
    /// - Throws: `.invalidArgument` for packed 24-bit input; `.unsupported` naming the sample
    ///   formats `b` takes when `input`'s is not one; `.pluginABI` when the vtable or the
    ///   encoder's info is incomplete (the instance is destroyed).
    static func make(_ b: MediaRegistry.EncoderBackend, settings: EncoderSettings, input: AudioFormat,
                     errorBuffer errbuf: UnsafeMutablePointer<CChar>, size errsize: Int) throws -> (Int32, PluginEncoder?) {
        guard let format = SampleFormat(input) else {
            throw MediaError(.invalidArgument, "an encoder cannot take packed 24-bit samples; convert to s32 or f32 first")
        }
        guard b.sampleFormats.contains(format) else {
            let names = b.sampleFormats.map(\.name).joined(separator: ", ")
            throw MediaError(.unsupported, "the \(b.plugin.name) \(settings.codec) encoder takes \(names) samples, not \(format.name)")
        }
        var cfg = mk_plugin_encoder_config()
        cfg.struct_size = UInt32(MemoryLayout<mk_plugin_encoder_config>.size)
        cfg.media_type = MK_MEDIA_AUDIO
        cfg.sample_format = format.rawValue
        cfg.sample_rate = Int32(clamping: input.sampleRate)
        cfg.channels = Int32(clamping: input.channels)
        cfg.channel_mask = input.layout.mask
        cfg.time_base_num = 1
        cfg.time_base_den = Int32(clamping: input.sampleRate)
        cfg.bit_rate = Int64(settings.bitRate ?? 0)
        cfg.has_quality = settings.quality != nil ? 1 : 0
        cfg.quality = settings.quality ?? 0
        cfg.complexity = Int32(clamping: settings.complexity ?? -1)
        cfg.application = settings.application?.rawValue ?? MK_ENCODER_APPLICATION_DEFAULT
        cfg.frame_duration_us = Int32(clamping: Int(((settings.frameDuration ?? 0) * 1_000_000).rounded()))
        var instance: UnsafeMutableRawPointer?
        var vt: UnsafePointer<mk_plugin_encoder_vtable>?
        let status: Int32 = settings.codec.rawValue.withCString { codec in
            cfg.codec = codec
            return b.raw.pointee.create(&cfg, &instance, &vt, errbuf, errsize)
        }
        guard status == MK_OK, let instance, let vt else { return (status, nil) }
        guard vt.pointee.struct_size >= PluginLoader.endOf(\mk_plugin_encoder_vtable.last_error),
              vt.pointee.get_info != nil, vt.pointee.send_frame != nil, vt.pointee.receive_packet != nil,
              vt.pointee.destroy != nil, vt.pointee.last_error != nil else {
            vt.pointee.destroy?(instance)
            throw MediaError(.pluginABI, "the \(b.plugin.name) \(settings.codec) encoder returned an incomplete vtable", path: b.plugin.path)
        }
        return (status, try PluginEncoder(backend: b, input: input, codec: settings.codec, instance: instance, vtable: vt))
    }

    private static func bytes(_ p: UnsafePointer<UInt8>?, _ n: Int) -> [UInt8] {
        guard let p, n > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: p, count: n))
    }

    private func failure(_ status: Int32, _ what: String) -> MediaError {
        let detail = vtable.pointee.last_error.flatMap { $0(instance) }.map { String(cString: $0) } ?? ""
        return MediaError(pluginStatus: status, what, detail: detail, context: context)
    }

    func send(_ frame: Frame) throws -> SendResult {
        guard frame.mediaType == .audio, frame.sampleFormat != nil else {
            throw MediaError(.invalidArgument, "an audio encoder was given a \(frame.mediaType.rawValue) frame", context: context)
        }
        let format = AudioFormat(of: frame)
        guard format.sampleType == inputFormat.sampleType, format.isPlanar == inputFormat.isPlanar,
              format.sampleRate == inputFormat.sampleRate, format.channels == inputFormat.channels else {
            throw MediaError(.invalidArgument, "the encoder takes \(inputFormat); a frame of \(format) was given (convert it with an AudioConverter)",
                             context: context)
        }
        let bytes = frame.sampleCount * inputFormat.bytesPerFrame
        var planes: [[UInt8]] = []
        for i in 0..<inputFormat.planeCount {
            planes.append(frame.withPlane(i) { Array($0.prefix(bytes)) })
        }
        try send(buffer: AudioBuffer(format: inputFormat, frames: frame.sampleCount, planes: planes))
        return .accepted
    }

    func send(buffer: AudioBuffer) throws {
        if stage != .decoding { throw MediaError(.state, "send after flush(): an encoder codes one stream", context: context) }
        guard buffer.format.sampleType == inputFormat.sampleType, buffer.format.isPlanar == inputFormat.isPlanar,
              buffer.format.sampleRate == inputFormat.sampleRate, buffer.format.channels == inputFormat.channels else {
            throw MediaError(.invalidArgument, "the encoder takes \(inputFormat); a buffer of \(buffer.format) was given (convert it with an AudioConverter)",
                             context: context)
        }
        guard buffer.frames > 0 else { return }
        let bytes = buffer.frames * inputFormat.bytesPerFrame
        for p in fifo.indices { fifo[p].append(contentsOf: buffer.planes[p].prefix(bytes)) }
        fifoFrames += buffer.frames
        inputSampleCount += Int64(buffer.frames)
        try sendWholeFrames(final: false)
    }

    /// Sends the queued samples in frames of ``frameSize`` (any count when 0); with `final`,
    /// the shorter rest too.
    private func sendWholeFrames(final: Bool) throws {
        let step = frameSize > 0 ? frameSize : fifoFrames
        var consumed = 0
        while fifoFrames - consumed >= max(1, step) || (final && fifoFrames - consumed > 0) {
            let n = min(step > 0 ? step : fifoFrames - consumed, fifoFrames - consumed)
            try sendChunk(offset: consumed, frames: n)
            consumed += n
        }
        if consumed > 0 {
            let bytes = consumed * inputFormat.bytesPerFrame
            for p in fifo.indices { fifo[p].removeFirst(bytes) }
            fifoFrames -= consumed
        }
    }

    private func sendChunk(offset: Int, frames: Int) throws {
        let bpf = inputFormat.bytesPerFrame
        let pts = inputSampleCount - Int64(fifoFrames) + Int64(offset)
        var pending = true
        while pending {
            let status: Int32 = withPlanePointers(offset: offset * bpf) { ptrs in
                var f = mk_plugin_frame()
                f.struct_size = UInt32(MemoryLayout<mk_plugin_frame>.size)
                f.media_type = MK_MEDIA_AUDIO
                f.format = abiFormat
                f.pts = pts
                f.duration = Int64(frames)
                f.sample_rate = Int32(inputFormat.sampleRate)
                f.channels = Int32(inputFormat.channels)
                f.channel_mask = inputFormat.layout.mask
                f.nb_samples = Int32(frames)
                f.plane_count = Int32(ptrs.count)
                withUnsafeMutableBytes(of: &f.planes) { raw in
                    let b = raw.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
                    for (i, p) in ptrs.enumerated() { b[i] = UnsafeMutablePointer(mutating: p) }
                }
                withUnsafeMutableBytes(of: &f.strides) { raw in
                    let b = raw.bindMemory(to: Int64.self)
                    for i in ptrs.indices { b[i] = Int64(frames * bpf) }
                }
                return vtable.pointee.send_frame(instance, &f)
            }
            switch status {
            case MK_OK: pending = false
            case MK_EAGAIN:
                let before = ready.count
                while let p = try receivePlugin() { ready.append(p) }
                if ready.count == before {
                    throw MediaError(.backend, "the encoder refuses a frame (EAGAIN) but has no packet to give", context: context)
                }
            default: throw failure(status, "encoding \(frames) samples at \(pts)")
            }
        }
    }

    /// Calls `body` with a pointer into each plane of the queue, `offset` bytes in (at most 8 planes:
    /// the ABI frame's limit).
    private func withPlanePointers<R>(offset: Int, _ body: ([UnsafePointer<UInt8>]) -> R) -> R {
        func nest(_ i: Int, _ acc: [UnsafePointer<UInt8>]) -> R {
            if i == min(fifo.count, 8) { return body(acc) }
            return fifo[i].withUnsafeBufferPointer { nest(i + 1, acc + [$0.baseAddress! + offset]) }
        }
        return nest(0, [])
    }

    func flush() throws {
        guard stage == .decoding else { return }
        try sendWholeFrames(final: true)
        stage = .draining(endOfStreamSent: false)
        try sendEndOfStream()
    }

    /// Sends the end-of-stream (NULL) frame; an encoder with packets waiting refuses it
    /// (EAGAIN), and ``receiveOutput()`` sends it again once they are received.
    private func sendEndOfStream() throws {
        let status = vtable.pointee.send_frame(instance, nil)
        if status == MK_EAGAIN { return }
        stage = .draining(endOfStreamSent: true)
        if status != MK_OK && status != MK_EOF { throw failure(status, "draining") }
    }

    func receiveOutput() throws -> EncoderOutput {
        if !ready.isEmpty { return .packet(ready.removeFirst()) }
        if stage == .ended { return .endOfStream }
        if let p = try receivePlugin() { return .packet(p) }
        if stage == .draining(endOfStreamSent: false) {
            try sendEndOfStream()
            if stage == .draining(endOfStreamSent: false) {
                throw MediaError(.backend, "the encoder refuses the end of the stream (EAGAIN) but has no packet to give", context: context)
            }
            if let p = try receivePlugin() { return .packet(p) }
        }
        return stage == .ended ? .endOfStream : .needsInput
    }

    /// One packet from the plugin, nil on EAGAIN or EOF (which, while draining, marks the
    /// encoder ended and takes the final magic cookie).
    private func receivePlugin() throws -> Packet? {
        var p = mk_plugin_encoded_packet()
        p.struct_size = UInt32(MemoryLayout<mk_plugin_encoded_packet>.size)
        let status = vtable.pointee.receive_packet(instance, &p)
        switch status {
        case MK_OK:
            let data = Self.bytes(p.data, p.size)
            return Packet(trackIndex: 0, pts: p.pts, dts: p.dts, duration: p.duration, isKeyframe: p.flags & MK_PACKET_FLAG_KEY != 0,
                          data: data, timeBase: timeBase)
        case MK_EAGAIN: return nil
        case MK_EOF:
            if stage != .decoding {
                stage = .ended
                var info = mk_plugin_encoder_info()
                info.struct_size = UInt32(MemoryLayout<mk_plugin_encoder_info>.size)
                if vtable.pointee.get_info(instance, &info) == MK_OK, info.extradata_size > 0 {
                    parameters.extradata = Self.bytes(info.extradata, info.extradata_size)
                }
            }
            return nil
        default: throw failure(status, "receiving a packet")
        }
    }
}

extension SampleFormat {
    /// The sample format of `format`'s samples and interleaving; nil for packed 24-bit, which
    /// the frames given to an encoder do not carry.
    init?(_ format: AudioFormat) {
        guard format.sampleType != .s24 else { return nil }
        self = format.sampleFormat
    }
}
