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
    private let core: PluginEncoderInstance
    /// ``inputFormat`` as an MK_SAMPLES_* value.
    private let abiFormat: Int32
    /// Samples waiting for a whole frame, one array per plane, and how many.
    private var fifo: [[UInt8]]
    private var fifoFrames = 0

    init(backend: MediaRegistry.EncoderBackend, input: AudioFormat, codec: CodecID, core: PluginEncoderInstance) throws {
        self.backend = backend
        self.inputFormat = input
        self.core = core
        guard let abi = SampleFormat(input) else {
            throw MediaError(.invalidArgument, "an encoder cannot take packed 24-bit samples", context: core.context)
        }
        abiFormat = abi.rawValue
        fifo = Array(repeating: [], count: input.planeCount)
        guard let info = core.info(), info.struct_size >= PluginLoader.endOf(\mk_plugin_encoder_info.packet_time_base_den),
              info.packet_time_base_num > 0, info.packet_time_base_den > 0, info.frame_size >= 0, info.encoder_delay >= 0 else {
            throw MediaError(.pluginABI, "the encoder's get_info failed or is incomplete", context: core.context)
        }
        frameSize = Int(info.frame_size)
        encoderDelay = Int(info.encoder_delay)
        timeBase = Rational(Int64(info.packet_time_base_num), Int64(info.packet_time_base_den))
        core.timeBase = timeBase
        parameters = CodecParameters(mediaType: .audio, codec: codec,
                                     extradata: PluginEncoderInstance.bytes(info.extradata, info.extradata_size),
                                     sampleRate: Int(info.sample_rate > 0 ? info.sample_rate : Int32(input.sampleRate)),
                                     channels: Int(info.channels > 0 ? info.channels : Int32(input.channels)),
                                     bitRate: Int(info.bit_rate))
        parameters.channelMask = input.layout.mask
        // After draining the encoder may state a newer cookie (FLAC: STREAMINFO with the totals).
        core.onEnd = { [unowned self] in
            if let info = self.core.info(), info.extradata_size > 0 {
                self.parameters.extradata = PluginEncoderInstance.bytes(info.extradata, info.extradata_size)
            }
        }
    }

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
        try PluginEncoderInstance.checkVtable(vt, instance: instance, b)
        let core = PluginEncoderInstance(instance: instance, vtable: vt, context: "\(b.plugin.name) \(settings.codec) encoder")
        return (status, try PluginEncoder(backend: b, input: input, codec: settings.codec, core: core))
    }

    func send(_ frame: Frame) throws -> SendResult {
        guard frame.mediaType == .audio, frame.sampleFormat != nil else {
            throw MediaError(.invalidArgument, "an audio encoder was given a \(frame.mediaType.rawValue) frame", context: core.context)
        }
        let format = AudioFormat(of: frame)
        guard format.sampleType == inputFormat.sampleType, format.isPlanar == inputFormat.isPlanar,
              format.sampleRate == inputFormat.sampleRate, format.channels == inputFormat.channels else {
            throw MediaError(.invalidArgument, "the encoder takes \(inputFormat); a frame of \(format) was given (convert it with an AudioConverter)",
                             context: core.context)
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
        if core.stage != .decoding { throw MediaError(.state, "send after flush(): an encoder codes one stream", context: core.context) }
        guard buffer.format.sampleType == inputFormat.sampleType, buffer.format.isPlanar == inputFormat.isPlanar,
              buffer.format.sampleRate == inputFormat.sampleRate, buffer.format.channels == inputFormat.channels else {
            throw MediaError(.invalidArgument, "the encoder takes \(inputFormat); a buffer of \(buffer.format) was given (convert it with an AudioConverter)",
                             context: core.context)
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
        try withPlanePointers(offset: offset * bpf) { ptrs in
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
            try core.send(&f, what: "\(frames) samples at \(pts)")
        }
    }

    /// Calls `body` with a pointer into each plane of the queue, `offset` bytes in (at most 8 planes:
    /// the ABI frame's limit).
    private func withPlanePointers<R>(offset: Int, _ body: ([UnsafePointer<UInt8>]) throws -> R) rethrows -> R {
        func nest(_ i: Int, _ acc: [UnsafePointer<UInt8>]) throws -> R {
            if i == min(fifo.count, 8) { return try body(acc) }
            return try fifo[i].withUnsafeBufferPointer { try nest(i + 1, acc + [$0.baseAddress! + offset]) }
        }
        return try nest(0, [])
    }

    func flush() throws {
        guard core.stage == .decoding else { return }
        try sendWholeFrames(final: true)
        try core.flush()
    }

    func receiveOutput() throws -> EncoderOutput { try core.receiveOutput() }
}

extension SampleFormat {
    /// The sample format of `format`'s samples and interleaving; nil for packed 24-bit, which
    /// the frames given to an encoder do not carry.
    init?(_ format: AudioFormat) {
        guard format.sampleType != .s24 else { return nil }
        self = format.sampleFormat
    }
}
