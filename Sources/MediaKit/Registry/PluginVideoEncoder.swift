import CMediaKitPlugin

/// A ``VideoEncoder`` backed by a plugin's video encoder (plugin ABI 2.3): pictures go to the
/// plugin with their planes borrowed for the call, or, when nothing changes them until their
/// storage is released (a decoder's picture), offered to be kept without a copy (ABI 2.5);
/// packets are copied out by the shared ``PluginEncoderInstance``.
final class PluginVideoEncoder: VideoEncoder, @unchecked Sendable {
    let parameters: CodecParameters
    let inputFormat: VideoFormat
    let timeBase: Rational
    let reorderDelay: Int
    let backendName: String
    private let core: PluginEncoderInstance

    private init(backend: MediaRegistry.EncoderBackend, input: VideoFormat, core: PluginEncoderInstance) throws {
        self.inputFormat = input
        self.core = core
        self.backendName = backend.name
        guard let info = core.info(), info.struct_size >= PluginLoader.endOf(\mk_plugin_encoder_info.reorder_delay),
              info.packet_time_base_num > 0, info.packet_time_base_den > 0, info.reorder_delay >= 0 else {
            throw MediaError(.pluginABI, "the video encoder's get_info failed or is incomplete (no reorder delay or time base)",
                             context: core.context)
        }
        timeBase = Rational(Int64(info.packet_time_base_num), Int64(info.packet_time_base_den))
        core.timeBase = timeBase
        reorderDelay = Int(info.reorder_delay)
        var p = CodecParameters(mediaType: .video, codec: backend.codec,
                                extradata: PluginEncoderInstance.bytes(info.extradata, info.extradata_size),
                                width: input.width, height: input.height, bitRate: Int(info.bit_rate),
                                sampleAspectRatio: input.sampleAspectRatio)
        p.colorRange = input.colorRange
        p.colorPrimaries = input.colorPrimaries
        p.colorTransfer = input.colorTransfer
        p.colorSpace = input.colorSpace
        p.reorderDepth = reorderDelay
        parameters = p
    }

    /// Starts `b`'s encoder for `input` with `settings`: checks that `b` takes the pixel
    /// format, fills the plugin's config, calls create and checks what it returns
    /// (``MediaRegistry`` chooses the backends to try, in order).
    /// - Returns: the plugin's status, with the encoder when it made one (nil: refused, its
    ///   message in `errorBuffer`).
    /// - Throws: `.unsupported` naming the pixel formats `b` takes; `.pluginABI` for an
    ///   incomplete vtable or info (the instance is destroyed).
    static func make(_ b: MediaRegistry.EncoderBackend, settings: VideoEncoderSettings, input: VideoFormat,
                     errorBuffer errbuf: UnsafeMutablePointer<CChar>, size errsize: Int) throws -> (Int32, PluginVideoEncoder?) {
        guard b.pixelFormats.contains(input.pixelFormat) else {
            let names = b.pixelFormats.map(\.name).joined(separator: ", ")
            throw MediaError(.unsupported, "the \(b.plugin.name) \(b.name) encoder takes \(names) pictures, not \(input.pixelFormat.name)")
        }
        var cfg = mk_plugin_encoder_config()
        cfg.struct_size = UInt32(MemoryLayout<mk_plugin_encoder_config>.size)
        cfg.media_type = MK_MEDIA_VIDEO
        cfg.time_base_num = Int32(clamping: input.timeBase.numerator)
        cfg.time_base_den = Int32(clamping: input.timeBase.denominator)
        cfg.thread_count = Int32(clamping: settings.threads ?? 0)
        cfg.pixel_format = input.pixelFormat.rawValue
        cfg.width = Int32(clamping: input.width)
        cfg.height = Int32(clamping: input.height)
        if input.frameRate.numerator > 0 && input.frameRate.denominator > 0 {
            cfg.frame_rate_num = Int32(clamping: input.frameRate.numerator)
            cfg.frame_rate_den = Int32(clamping: input.frameRate.denominator)
        }
        cfg.sar_num = Int32(clamping: input.sampleAspectRatio.numerator)
        cfg.sar_den = Int32(clamping: input.sampleAspectRatio.denominator)
        if let crf = settings.crf {
            cfg.rate_control = MK_ENCODER_RC_CRF
            cfg.quality = crf
        } else if let qp = settings.qp {
            cfg.rate_control = MK_ENCODER_RC_QP
            cfg.quality = qp
        } else if let rate = settings.bitRate {
            cfg.rate_control = MK_ENCODER_RC_BITRATE
            cfg.bit_rate = Int64(rate)
        }
        cfg.gop_size = Int32(clamping: settings.gopSize ?? -1)
        cfg.max_b_frames = Int32(clamping: settings.maxBFrames ?? -1)
        cfg.color_range = Int32(input.colorRange.rawValue)
        cfg.color_primaries = Int32(clamping: input.colorPrimaries.rawValue)
        cfg.color_trc = Int32(clamping: input.colorTransfer.rawValue)
        cfg.color_space = Int32(clamping: input.colorSpace.rawValue)
        cfg.chroma_location = Int32(input.chromaLocation.rawValue)
        var instance: UnsafeMutableRawPointer?
        var vt: UnsafePointer<mk_plugin_encoder_vtable>?
        let status: Int32 = b.codec.rawValue.withCString { codec in
            withOptionalCString(settings.preset) { preset in
                withOptionalCString(settings.profile) { profile in
                    cfg.codec = codec
                    cfg.preset = preset
                    cfg.profile = profile
                    return b.raw.pointee.create(&cfg, &instance, &vt, errbuf, errsize)
                }
            }
        }
        guard status == MK_OK, let instance, let vt else { return (status, nil) }
        try PluginEncoderInstance.checkVtable(vt, instance: instance, b)
        let core = PluginEncoderInstance(instance: instance, vtable: vt, context: "\(b.plugin.name) \(b.name) encoder")
        return (status, try PluginVideoEncoder(backend: b, input: input, core: core))
    }

    func send(_ frame: Frame, forceKeyFrame: Bool) throws {
        guard frame.mediaType == .video, frame.pixelFormat == inputFormat.pixelFormat,
              frame.width == inputFormat.width, frame.height == inputFormat.height else {
            throw MediaError(.invalidArgument, "the encoder takes \(inputFormat.pixelFormat.name) \(inputFormat.width)x\(inputFormat.height) pictures; "
                             + "a \(frame.mediaType.rawValue) frame of \(frame.pixelFormat?.name ?? "no pixel format") \(frame.width)x\(frame.height) was given "
                             + "(convert it with a PicturePipeline)", context: core.context)
        }
        let pts = frame.pts == Packet.noTimestamp ? Packet.noTimestamp
            : Rational.rescale(frame.pts, from: frame.timeBase, to: inputFormat.timeBase)
        var f = mk_plugin_frame()
        f.struct_size = UInt32(MemoryLayout<mk_plugin_frame>.size)
        f.media_type = MK_MEDIA_VIDEO
        f.format = inputFormat.pixelFormat.rawValue
        f.flags = forceKeyFrame ? MK_FRAME_FLAG_FORCE_KEY : 0
        f.pts = pts   // Packet.noTimestamp is MK_NOPTS_VALUE (INT64_MIN)
        f.duration = frame.duration
        f.width = Int32(frame.width)
        f.height = Int32(frame.height)
        f.color_range = Int32(frame.colorRange.rawValue)
        f.color_primaries = Int32(clamping: frame.colorPrimaries.rawValue)
        f.color_trc = Int32(clamping: frame.colorTransfer.rawValue)
        f.color_space = Int32(clamping: frame.colorSpace.rawValue)
        f.chroma_location = Int32(frame.chromaLocation.rawValue)
        f.sar_num = Int32(clamping: frame.sampleAspectRatio.numerator)
        f.sar_den = Int32(clamping: frame.sampleAspectRatio.denominator)
        let planes = frame.planes.prefix(8)
        f.plane_count = Int32(planes.count)
        withUnsafeMutableBytes(of: &f.planes) { raw in
            let b = raw.bindMemory(to: UnsafeMutablePointer<UInt8>?.self)
            for (i, p) in planes.enumerated() { b[i] = UnsafeMutablePointer(mutating: p.base.assumingMemoryBound(to: UInt8.self)) }
        }
        withUnsafeMutableBytes(of: &f.strides) { raw in
            let b = raw.bindMemory(to: Int64.self)
            for (i, p) in planes.enumerated() { b[i] = Int64(p.stride) }
        }
        if frame.storage.keepsPlanesUnchanged {
            // ABI 2.5: the encoder may keep the planes (one retain of the storage each time)
            // instead of copying them, as the ffmpeg tool hands a decoded picture on.
            f.release_opaque = Unmanaged.passUnretained(frame.storage).toOpaque()
            f.retain = { _ = Unmanaged<FrameStorage>.fromOpaque($0!).retain() }
            f.release = { Unmanaged<FrameStorage>.fromOpaque($0!).release() }
        }
        try withExtendedLifetime(frame) {
            try core.send(&f, what: "the picture at pts \(frame.pts)")
        }
    }

    func receiveOutput() throws -> EncoderOutput { try core.receiveOutput() }

    func flush() throws { try core.flush() }
}

/// Calls `body` with `string` as a C string, or NULL when it is nil.
private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) throws -> R) rethrows -> R {
    guard let string else { return try body(nil) }
    return try string.withCString { try body($0) }
}
