// mk_encoder, mk_transcode and mk_transcode_with: MediaKit's AudioEncodingConverter and Transcoder for C.
import CMediaKit
import Foundation
import MediaKit

/// An encoder as C sees it: the converter (which holds the packets not received yet and knows
/// whether the input ended), and the strings and cookie mk_encoder_get_info lends out.
final class EncoderHandle: NamedHandle {
    static let kind = "encoder"
    let converter: AudioEncodingConverter
    /// Borrowed by mk_encoder_get_info until the next call.
    var codecName: [CChar]
    var cookie: [UInt8] = []
    /// Fed by mk_encoder_push / by mk_encoder_fill: one or the other, as their packets wait in
    /// different queues.
    var pushed = false
    var pulled = false

    init(_ converter: AudioEncodingConverter) {
        self.converter = converter
        codecName = Array(converter.encoder.parameters.codec.rawValue.utf8CString)
    }
}

@_cdecl("mk_encoder_default_settings")
public func mk_encoder_default_settings(_ s: UnsafeMutablePointer<mk_encoder_settings>?) {
    guard let s else { return }
    s.pointee = mk_encoder_settings(struct_size: UInt32(MemoryLayout<mk_encoder_settings>.size), codec: nil, bit_rate: 0,
                                    has_quality: 0, quality: 0, complexity: -1, application: MK_APPLICATION_DEFAULT,
                                    frame_duration: 0, sample_rate: 0, channels: 0, backend: nil, copy_video: 0,
                                    progress: nil, progress_user: nil, adjustable_sample_rate: 0)
}

/// The checked settings: the encoder settings, the coded rate and channels asked for, whether
/// to copy the video, and the progress callback (mk_transcode's).
func encoderSettings(_ s: UnsafePointer<mk_encoder_settings>?, codec fallback: CodecID?, _ function: String) throws
    -> (EncoderSettings, Int?, Int?, Bool, ProgressRelay) {
    var c = mk_encoder_settings()
    mk_encoder_default_settings(&c)
    if let s {
        // The 0.1 struct ended at copy_video; the progress fields keep their defaults for it.
        let oldSize = MemoryLayout<mk_encoder_settings>.offset(of: \mk_encoder_settings.progress)!
        guard Int(s.pointee.struct_size) >= oldSize else {
            throw MediaError(.invalidArgument, "\(function): mk_encoder_settings.struct_size is \(s.pointee.struct_size); this library needs at least \(oldSize)")
        }
        c = copyIn(c, from: s, size: s.pointee.struct_size)
    }
    guard let codec = c.codec.map({ CodecID(String(cString: $0).lowercased()) }) ?? fallback else {
        throw MediaError(.invalidArgument, "\(function): settings.codec is NULL")
    }
    guard c.bit_rate >= 0, c.sample_rate >= 0, c.channels >= 0, c.frame_duration >= 0 else {
        throw MediaError(.invalidArgument, "\(function): a negative bit rate, sample rate, channel count or frame duration")
    }
    var e = EncoderSettings(codec: codec)
    e.bitRate = c.bit_rate > 0 ? Int(c.bit_rate) : nil
    e.quality = c.has_quality != 0 ? c.quality : nil
    e.complexity = c.complexity >= 0 ? Int(c.complexity) : nil
    e.application = EncoderSettings.Application(rawValue: c.application)
    e.frameDuration = c.frame_duration > 0 ? c.frame_duration : nil
    e.backend = c.backend.map { String(cString: $0) }
    return (e, c.sample_rate > 0 ? Int(c.sample_rate) : nil, c.channels > 0 ? Int(c.channels) : nil, c.copy_video != 0,
            ProgressRelay(c.progress, c.progress_user))
}

@_cdecl("mk_encoder_open")
public func mk_encoder_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ format: UnsafePointer<mk_audio_format>?,
                            _ settings: UnsafePointer<mk_encoder_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_encoder_open: out is NULL") }
    out.pointee = nil
    return guarded {
        let src = try request(format, "source", open: false)
        let (s, rate, channels, _, relay) = try encoderSettings(settings, codec: nil, "mk_encoder_open")
        if relay.isSet { throw MediaError(.invalidArgument, "mk_encoder_open: progress is mk_transcode's setting (an encoder codes what it is pushed)") }
        let source = AudioFormat(src.sampleType, planar: src.planar, sampleRate: src.sampleRate!, layout: src.layout!)
        // adjustable_sample_rate (appended later), when the caller's struct_size covers it.
        var adjusts = false
        if let settings, Int(settings.pointee.struct_size) >= MemoryLayout<mk_encoder_settings>.offset(of: \mk_encoder_settings.adjustable_sample_rate)! + 4 {
            adjusts = settings.pointee.adjustable_sample_rate != 0
        }
        let converter = try AudioEncodingConverter(from: source, to: s, sampleRate: rate, channels: channels, adjustsSampleRate: adjusts)
        out.pointee = Handles.make(EncoderHandle(converter))
        return MK_OK
    }
}

@_cdecl("mk_encoder_get_info")
public func mk_encoder_get_info(_ e: OpaquePointer?, _ info: UnsafeMutablePointer<mk_encoder_info>?) -> Int32 {
    guard let h = liveHandle(EncoderHandle.self, e, "mk_encoder_get_info") else { return MK_EINVAL }
    guard let info else { return fail(MK_EINVAL, "mk_encoder_get_info: info is NULL") }
    // The 0.1 struct ended at `input`; input_samples is filled when struct_size covers it.
    let newFields = MemoryLayout<mk_encoder_info>.offset(of: \mk_encoder_info.input_samples)!
    guard sizeOK(info.pointee.struct_size, newFields, "mk_encoder_info") else { return MK_EINVAL }
    let enc = h.converter.encoder
    let p = enc.parameters
    h.cookie = p.extradata
    info.pointee.codec = h.codecName.withUnsafeBufferPointer { $0.baseAddress }
    info.pointee.sample_rate = Int32(clamping: p.sampleRate)
    info.pointee.channels = Int32(clamping: p.channels)
    info.pointee.bit_rate = Int64(p.bitRate)
    info.pointee.frame_size = Int32(clamping: enc.frameSize)
    info.pointee.encoder_delay = Int32(clamping: enc.encoderDelay)
    info.pointee.time_base_num = Int32(clamping: enc.timeBase.numerator)
    info.pointee.time_base_den = Int32(clamping: enc.timeBase.denominator)
    info.pointee.extradata = h.cookie.isEmpty ? nil : h.cookie.withUnsafeBufferPointer { $0.baseAddress }
    info.pointee.extradata_size = h.cookie.count
    let i = enc.inputFormat
    info.pointee.input = mk_audio_format(struct_size: UInt32(MemoryLayout<mk_audio_format>.size),
                                         sample_format: sampleFormatCode(i.sampleType, planar: i.isPlanar),
                                         sample_rate: Int32(clamping: i.sampleRate), channels: Int32(i.channels),
                                         channel_mask: i.layout.isMaskOrder ? i.layout.mask : 0)
    if Int(info.pointee.struct_size) >= MemoryLayout<mk_encoder_info>.offset(of: \mk_encoder_info.input_samples)! + 8 {
        info.pointee.input_samples = enc.inputSampleCount
    }
    if Int(info.pointee.struct_size) >= MemoryLayout<mk_encoder_info>.offset(of: \mk_encoder_info.max_packet_size)! + 8 {
        info.pointee.max_packet_size = Int64(h.converter.maximumOutputPacketSize ?? 0)
    }
    return MK_OK
}

@_cdecl("mk_encoder_applicable_bit_rates")
public func mk_encoder_applicable_bit_rates(_ e: OpaquePointer?, _ rates: UnsafeMutablePointer<Int64>?, _ capacity: Int32,
                                            _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(EncoderHandle.self, e, "mk_encoder_applicable_bit_rates") else { return MK_EINVAL }
    guard let count else { return fail(MK_EINVAL, "mk_encoder_applicable_bit_rates: count is NULL") }
    guard capacity >= 0 else { return fail(MK_EINVAL, "mk_encoder_applicable_bit_rates: capacity \(capacity) is negative") }
    guard rates != nil || capacity == 0 else { return fail(MK_EINVAL, "mk_encoder_applicable_bit_rates: rates is NULL with capacity \(capacity)") }
    let list = h.converter.applicableBitRates
    for (i, r) in list.prefix(Int(capacity)).enumerated() { rates![i] = Int64(r) }
    count.pointee = Int32(list.count)
    return MK_OK
}

@_cdecl("mk_encoder_push")
public func mk_encoder_push(_ e: OpaquePointer?, _ planes: UnsafePointer<UnsafeRawPointer?>?, _ frames: Int32) -> Int32 {
    guard let h = liveHandle(EncoderHandle.self, e, "mk_encoder_push") else { return MK_EINVAL }
    guard frames >= 0 else { return fail(MK_EINVAL, "mk_encoder_push: frames \(frames) is negative") }
    if h.converter.isFlushed { return fail(MK_ESTATE, "mk_encoder_push: the encoder was flushed") }
    if h.pulled { return fail(MK_ESTATE, "mk_encoder_push: this encoder is fed by mk_encoder_fill") }
    h.pushed = true
    if frames == 0 { return MK_OK }
    guard let planes else { return fail(MK_EINVAL, "mk_encoder_push: planes is NULL") }
    let source = h.converter.source
    let bytes = Int(frames) * source.bytesPerFrame
    var copies: [[UInt8]] = []
    for p in 0..<source.planeCount {
        guard let ptr = planes[p] else { return fail(MK_EINVAL, "mk_encoder_push: plane \(p) is NULL") }
        copies.append(Array(UnsafeRawBufferPointer(start: ptr, count: bytes)))
    }
    return guarded {
        try h.converter.send(AudioBuffer(format: source, frames: Int(frames), planes: copies))
        return MK_OK
    }
}

@_cdecl("mk_encoder_flush")
public func mk_encoder_flush(_ e: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(EncoderHandle.self, e, "mk_encoder_flush") else { return MK_EINVAL }
    return guarded {
        try h.converter.flushOutput()
        return MK_OK
    }
}

@_cdecl("mk_encoder_receive_packet")
public func mk_encoder_receive_packet(_ e: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let h = liveHandle(EncoderHandle.self, e, "mk_encoder_receive_packet") else { return MK_EINVAL }
    guard let out else { return fail(MK_EINVAL, "mk_encoder_receive_packet: out is NULL") }
    out.pointee = nil
    switch h.converter.receiveOutput() {
    case .packet(let p):
        out.pointee = Handles.make(PacketHandle(p))
        return MK_OK
    case .needsInput: return MK_EAGAIN
    case .endOfStream: return MK_EOF
    }
}

@_cdecl("mk_encoder_fill")
public func mk_encoder_fill(_ e: OpaquePointer?, _ packets: UnsafeMutablePointer<OpaquePointer?>?, _ capacity: Int32,
                            _ input: mk_audio_input_callback?, _ user: UnsafeMutableRawPointer?,
                            _ filled: UnsafeMutablePointer<Int32>?) -> Int32 {
    let function = "mk_encoder_fill"
    guard let h = liveHandle(EncoderHandle.self, e, function) else { return MK_EINVAL }
    guard let filled else { return fail(MK_EINVAL, "\(function): filled is NULL") }
    filled.pointee = 0
    guard let input else { return fail(MK_EINVAL, "\(function): input is NULL") }
    guard capacity >= 0 else { return fail(MK_EINVAL, "\(function): capacity \(capacity) is negative") }
    guard let packets else { return fail(MK_EINVAL, "\(function): packets is NULL") }
    if h.pushed { return fail(MK_ESTATE, "\(function): this encoder is fed by mk_encoder_push; receive its packets with mk_encoder_receive_packet") }
    h.pulled = true
    let source = h.converter.source
    var failure: Int32?
    let got: [Packet]
    do {
        got = try h.converter.fill(packets: Int(capacity), pull: {
            var given: UnsafePointer<UnsafeRawPointer?>?
            let n = input(user, Int32(clamping: max(1, h.converter.encoder.frameSize)), &given)
            if n == 0 { return .endOfStream }
            if n < 0 {
                failure = n
                return .noDataNow
            }
            return .data(try pulledPCM(given, frames: n, format: source))
        })
    } catch { return fail(error) }                 // the packets ready before it wait for the next call
    for (i, p) in got.enumerated() { packets[i] = Handles.make(PacketHandle(p)) }
    filled.pointee = Int32(got.count)
    if let n = failure {
        if n == MK_EAGAIN {
            mkc_set_last_error("\(function): no input for now (the callback returned MK_EAGAIN)")
            return MK_EAGAIN
        }
        return fail(MK_EFAIL, "\(function): the input callback failed (returned \(n)); the \(got.count) packet(s) ready before it were returned")
    }
    return MK_OK
}

@_cdecl("mk_encoder_close")
public func mk_encoder_close(_ e: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(e, as: EncoderHandle.self)
}

@_cdecl("mk_transcode")
public func mk_transcode(_ src: UnsafePointer<CChar>?, _ dst: UnsafePointer<CChar>?, _ settings: UnsafePointer<mk_encoder_settings>?) -> Int32 {
    guard let src, let dst else { return fail(MK_EINVAL, "mk_transcode: \(src == nil ? "src" : "dst") is NULL") }
    let output = String(cString: dst)
    let checked: (EncoderSettings, Int?, Int?, Bool, ProgressRelay)
    do { checked = try encoderSettings(settings, codec: Transcoder.defaultCodec(forOutput: output) ?? "", "mk_transcode") } catch { return fail(error) }
    let (s, rate, channels, copyVideo, relay) = checked
    var o = transcodeOptions(s, rate: rate, channels: channels)
    o.copyVideo = copyVideo
    return transcode(String(cString: src), output, o, relay, "mk_transcode")
}

@_cdecl("mk_transcode_default_settings")
public func mk_transcode_default_settings(_ s: UnsafeMutablePointer<mk_transcode_settings>?) {
    guard let s else { return }
    var t = mk_transcode_settings()
    t.struct_size = UInt32(MemoryLayout<mk_transcode_settings>.size)
    t.crf = -1
    t.qp = -1
    t.gop_size = -1
    t.max_b_frames = -1
    s.pointee = t
}

@_cdecl("mk_transcode_with")
public func mk_transcode_with(_ src: UnsafePointer<CChar>?, _ dst: UnsafePointer<CChar>?,
                              _ settings: UnsafePointer<mk_transcode_settings>?) -> Int32 {
    let function = "mk_transcode_with"
    guard let src, let dst else { return fail(MK_EINVAL, "\(function): \(src == nil ? "src" : "dst") is NULL") }
    var t = mk_transcode_settings()
    mk_transcode_default_settings(&t)
    if let settings {
        // The shorter struct ended at progress_user; the video and track fields keep their defaults for
        // it. A size between the two (a field cut in half) is a caller's mistake.
        let oldSize = MemoryLayout<mk_transcode_settings>.offset(of: \mk_transcode_settings.video_codec)!
        let size = Int(settings.pointee.struct_size), full = MemoryLayout<mk_transcode_settings>.size
        guard size == oldSize || size >= full else {
            return fail(MK_EINVAL, "\(function): mk_transcode_settings.struct_size is \(size); this library takes \(oldSize) (the struct up to progress_user) or \(full) (set it to sizeof(mk_transcode_settings))")
        }
        t = copyIn(t, from: settings, size: settings.pointee.struct_size)
    }
    let output = String(cString: dst)
    let checked: (EncoderSettings, Int?, Int?, Bool, ProgressRelay)
    do { checked = try encoderSettings(t.encoder, codec: Transcoder.defaultCodec(forOutput: output) ?? "", function) } catch { return fail(error) }
    let (s, rate, channels, oldCopyVideo, oldRelay) = checked
    if oldCopyVideo || oldRelay.isSet {
        let field = oldCopyVideo ? "copy_video" : "progress"
        return fail(MK_EINVAL, "\(function): mk_encoder_settings.\(field) is set; it is mk_transcode_settings.\(field) here")
    }
    var o = transcodeOptions(s, rate: rate, channels: channels)
    if t.encoder?.pointee.codec == nil { o.codec = nil }   // from dst's extension, as mk-transcode without --codec
    do {
        try addTrackOptions(&o, t, function)
        try addMetadataOptions(&o, t, function)
    } catch { return fail(error) }
    return transcode(String(cString: src), output, o, ProgressRelay(t.progress, t.progress_user), function)
}

/// The audio encoder's checked settings as Transcoder's options.
private func transcodeOptions(_ s: EncoderSettings, rate: Int?, channels: Int?) -> TranscodeOptions {
    var o = TranscodeOptions(codec: s.codec.isUnknown ? nil : s.codec, bitRate: s.bitRate, sampleRate: rate, channels: channels)
    o.quality = s.quality
    o.complexity = s.complexity
    o.application = s.application
    o.frameDuration = s.frameDuration
    o.backend = s.backend
    return o
}

/// mk_transcode_settings' track and video fields as Transcoder's options, the ones mk-transcode
/// sets from --video-codec ... --no-video (Transcoder.check then refuses what contradicts).
/// - Throws: `.invalidArgument` naming the fields that contradict each other or are out of range.
private func addTrackOptions(_ o: inout TranscodeOptions, _ t: mk_transcode_settings, _ function: String) throws {
    func refuse(_ why: String) -> MediaError { MediaError(.invalidArgument, "\(function): \(why)") }
    let videoCodec = t.video_codec.map { String(cString: $0) }
    let copies = t.copy_video != 0 || videoCodec?.lowercased() == "copy"
    let encodes = videoCodec != nil && !copies
    if let v = videoCodec, v.isEmpty { throw refuse("video_codec is empty: give a codec, an encoder's name or \"copy\"") }
    if t.copy_video != 0, let v = videoCodec, v.lowercased() != "copy" { throw refuse("copy_video contradicts video_codec \"\(v)\": give one") }
    if t.no_video != 0 && (videoCodec != nil || t.copy_video != 0) {
        throw refuse("no_video contradicts \(videoCodec != nil ? "video_codec" : "copy_video")")
    }
    let videoSettings = [t.crf >= 0 ? "crf" : nil, t.qp >= 0 ? "qp" : nil, t.video_bit_rate != 0 ? "video_bit_rate" : nil,
                         t.preset != nil ? "preset" : nil, t.profile != nil ? "profile" : nil, t.gop_size >= 0 ? "gop_size" : nil,
                         t.max_b_frames >= 0 ? "max_b_frames" : nil, t.threads != 0 ? "threads" : nil].compactMap { $0 }
    if !encodes && !videoSettings.isEmpty {
        throw refuse("\(videoSettings.joined(separator: ", ")) set\(videoSettings.count == 1 ? "s" : "") the video encoder, but \(copies ? "the video is copied" : "no video_codec re-encodes the video")")
    }
    guard t.video_bit_rate >= 0, t.threads >= 0 else { throw refuse("a negative \(t.video_bit_rate < 0 ? "video_bit_rate" : "threads")") }
    let scaled = t.scale_width != 0 || t.scale_height != 0
    guard (-16384...16384).contains(t.scale_width), (-16384...16384).contains(t.scale_height) else {
        throw refuse("scale \(t.scale_width):\(t.scale_height) is out of range (-16384 to 16384 a side)")
    }
    let filter: ScaleFilter?
    if t.scale_filter == 0 {
        filter = nil
    } else {
        guard let f = ScaleFilter(rawValue: t.scale_filter) else { throw refuse("scale_filter \(t.scale_filter) is not an MK_SCALE_* value") }
        guard scaled else { throw refuse("scale_filter goes with scale_width / scale_height") }
        filter = f
    }
    var rate: Rational?
    if t.fps_num != 0 || t.fps_den != 0 {
        guard t.fps_num > 0, t.fps_den > 0 else { throw refuse("fps \(t.fps_num)/\(t.fps_den) is not a positive rate") }
        var a = Int64(t.fps_num), b = Int64(t.fps_den)
        while b != 0 { (a, b) = (b, a % b) }
        rate = Rational(Int64(t.fps_num) / a, Int64(t.fps_den) / a)
    }
    if !encodes && (scaled || rate != nil) {
        let what = [scaled ? "scale_width / scale_height" : nil, rate != nil ? "fps" : nil].compactMap { $0 }.joined(separator: " and ")
        throw refuse("\(what) change the pictures: \(copies ? "a copied video cannot be changed" : "give video_codec to re-encode the video")")
    }
    o.copyVideo = copies
    o.copyAudio = t.copy_audio != 0
    o.dropAudio = t.no_audio != 0
    if encodes, let codec = videoCodec {
        o.video = VideoEncoderSettings(codec: codec, crf: t.crf >= 0 ? t.crf : nil, qp: t.qp >= 0 ? t.qp : nil,
                                       bitRate: t.video_bit_rate > 0 ? Int(t.video_bit_rate) : nil,
                                       preset: t.preset.map { String(cString: $0) }, profile: t.profile.map { String(cString: $0) },
                                       gopSize: t.gop_size >= 0 ? Int(t.gop_size) : nil, maxBFrames: t.max_b_frames >= 0 ? Int(t.max_b_frames) : nil,
                                       threads: t.threads > 0 ? Int(t.threads) : nil)
        if scaled { o.videoScale = VideoScale(width: Int(t.scale_width), height: Int(t.scale_height)) }
        if let filter { o.scaleFilter = filter }
        o.videoFrameRate = rate
    }
}

/// mk_transcode_settings' metadata, ID3 and RF64 fields as Transcoder's options (mk-transcode's
/// --no-metadata, --metadata, --id3v2-version, --write-id3v2, --rf64), checked as mk_remux checks its.
/// - Throws: `.invalidArgument` naming a field out of range or a malformed setting.
private func addMetadataOptions(_ o: inout TranscodeOptions, _ t: mk_transcode_settings, _ function: String) throws {
    guard t.no_metadata == 0 || t.no_metadata == 1 else {
        throw MediaError(.invalidArgument, "\(function): no_metadata is \(t.no_metadata), not 0 or 1")
    }
    guard t.metadata_count >= 0, t.metadata_count <= 65536, t.metadata_count == 0 || t.metadata != nil else {
        throw MediaError(.invalidArgument, "\(function): \(t.metadata_count) metadata entries from \(t.metadata == nil ? "NULL" : "a list")")
    }
    var settings: [String] = []
    if let list = t.metadata {
        for i in 0..<Int(t.metadata_count) {
            guard let entry = list[i] else { throw MediaError(.invalidArgument, "\(function): metadata[\(i)] is NULL") }
            settings.append(String(cString: entry))
        }
    }
    o.metadata = try MetadataCopyOptions(copy: t.no_metadata == 0, settings: settings)
    guard [0, 3, 4].contains(t.id3v2_version) else {
        throw MediaError(.invalidArgument, "\(function): id3v2_version is \(t.id3v2_version), not 3, 4 or 0 (the default, 4)")
    }
    guard t.write_id3v2 == 0 || t.write_id3v2 == 1 else {
        throw MediaError(.invalidArgument, "\(function): write_id3v2 is \(t.write_id3v2), not 0 or 1")
    }
    if t.id3v2_version != 0 { o.muxer.id3v2Version = Int(t.id3v2_version) }
    o.muxer.writeID3v2 = t.write_id3v2 == 1
    o.muxer.rf64 = try rf64Mode(t.rf64, function)
}

/// mk_transcode and mk_transcode_with after their settings are checked: Transcoder.transcode
/// (mk-transcode's one code path) with the progress relayed to C.
private func transcode(_ input: String, _ output: String, _ o: TranscodeOptions, _ relay: ProgressRelay, _ function: String) -> Int32 {
    relay.guarded(function) {
        let result = try Transcoder.transcode(input: input, output: output, options: o) { fraction in
            relay.report(fraction: fraction, done: -1, total: -1)
        }
        if let cut = result.truncation { return fail(MK_ETRUNCATED, cut.description) }   // a warning: the output is written
        return MK_OK
    }
}
