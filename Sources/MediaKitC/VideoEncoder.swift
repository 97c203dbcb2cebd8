// mk_video_encoder: MediaKit's VideoEncodingConverter for C.
import CMediaKit
import Foundation
import MediaKit

/// A video encoder as C sees it: the converter, and the strings and cookie that
/// mk_video_encoder_get_info / _get_params lend out until the next call.
final class VideoEncoderHandle: NamedHandle {
    static let kind = "video encoder"
    let converter: VideoEncodingConverter
    let codecName: [CChar]
    let backendName: [CChar]
    var cookie: [UInt8] = []

    init(_ converter: VideoEncodingConverter) {
        self.converter = converter
        codecName = Array(converter.encoder.parameters.codec.rawValue.utf8CString)
        backendName = Array(converter.encoder.backendName.utf8CString)
    }
}

@_cdecl("mk_video_encoder_default_settings")
public func mk_video_encoder_default_settings(_ s: UnsafeMutablePointer<mk_video_encoder_settings>?) {
    guard let s else { return }
    var d = mk_video_encoder_settings()
    d.struct_size = UInt32(MemoryLayout<mk_video_encoder_settings>.size)
    d.crf = -1
    d.qp = -1
    d.gop_size = -1
    d.max_b_frames = -1
    d.sample_aspect_num = 0
    d.sample_aspect_den = 1
    d.color_primaries = 2
    d.color_transfer = 2
    d.color_space = 2
    s.pointee = d
}

/// The checked settings as the Swift encoder takes them, and whether a time base was given.
func videoEncoderSettings(_ s: UnsafePointer<mk_video_encoder_settings>?, _ function: String = "mk_video_encoder_open") throws
    -> (VideoEncoderSettings, VideoFormat, timeBaseGiven: Bool) {
    guard let s else { throw MediaError(.invalidArgument, "\(function): the video settings are NULL") }
    let size = MemoryLayout<mk_video_encoder_settings>.size
    guard Int(s.pointee.struct_size) >= size else {
        throw MediaError(.invalidArgument, "\(function): mk_video_encoder_settings.struct_size is \(s.pointee.struct_size); this library needs \(size) (set it to sizeof(mk_video_encoder_settings))")
    }
    let c = s.pointee
    guard let codecPtr = c.codec else { throw MediaError(.invalidArgument, "\(function): settings.codec is NULL") }
    let codec = String(cString: codecPtr)
    guard c.bit_rate >= 0, c.threads >= 0 else {
        throw MediaError(.invalidArgument, "\(function): a negative \(c.bit_rate < 0 ? "bit_rate" : "threads")")
    }
    var e = VideoEncoderSettings(codec: codec)
    e.crf = c.crf >= 0 ? c.crf : nil
    e.qp = c.qp >= 0 ? c.qp : nil
    e.bitRate = c.bit_rate > 0 ? Int(c.bit_rate) : nil
    e.preset = c.preset.map { String(cString: $0) }
    e.profile = c.profile.map { String(cString: $0) }
    e.gopSize = c.gop_size >= 0 ? Int(c.gop_size) : nil
    e.maxBFrames = c.max_b_frames >= 0 ? Int(c.max_b_frames) : nil
    e.threads = c.threads > 0 ? Int(c.threads) : nil
    let rate = c.frame_rate_num > 0 && c.frame_rate_den > 0 ? Rational(Int64(c.frame_rate_num), Int64(c.frame_rate_den)) : Rational(0, 1)
    let timeBase: Rational
    if c.time_base_num > 0 && c.time_base_den > 0 {
        timeBase = Rational(Int64(c.time_base_num), Int64(c.time_base_den))
    } else if rate.numerator > 0 {
        timeBase = Rational(rate.denominator, rate.numerator)
    } else {
        throw MediaError(.invalidArgument, "\(function): neither a time base (time_base_num/den) nor a frame rate (frame_rate_num/den) is set")
    }
    let pixel: PixelFormat
    if c.pixel_format == 0 {
        guard let first = VideoEncodingConverter.defaultPixelFormat(for: codec) else {
            _ = try MediaRegistry.shared.makeVideoEncoder(e, input: VideoFormat(pixelFormat: .yuv420p, width: 16, height: 16, timeBase: timeBase))
            throw MediaError(.notFound, "\(function): no video encoder named or writing '\(codec)'")
        }
        pixel = first
    } else {
        guard let p = PixelFormat(rawValue: c.pixel_format) else {
            throw MediaError(.invalidArgument, "\(function): pixel_format \(c.pixel_format) is not an MK_PIXEL_* value")
        }
        pixel = p
    }
    var f = VideoFormat(pixelFormat: pixel, width: Int(c.width), height: Int(c.height), timeBase: timeBase, frameRate: rate)
    if c.sample_aspect_num > 0 && c.sample_aspect_den > 0 {
        f.sampleAspectRatio = Rational(Int64(c.sample_aspect_num), Int64(c.sample_aspect_den))
    }
    f.colorRange = ColorRange(rawValue: Int(c.color_range)) ?? .unspecified
    f.colorPrimaries = ColorPrimaries(rawValue: Int(c.color_primaries))
    f.colorTransfer = ColorTransfer(rawValue: Int(c.color_transfer))
    f.colorSpace = ColorMatrix(rawValue: Int(c.color_space))
    return (e, f, c.time_base_num > 0 && c.time_base_den > 0)
}

@_cdecl("mk_video_encoder_open")
public func mk_video_encoder_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ settings: UnsafePointer<mk_video_encoder_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_video_encoder_open: out is NULL") }
    out.pointee = nil
    return guarded {
        let (s, format, _) = try videoEncoderSettings(settings)
        out.pointee = Handles.make(VideoEncoderHandle(try VideoEncodingConverter(s, output: format)))
        return MK_OK
    }
}

@_cdecl("mk_video_encoder_get_info")
public func mk_video_encoder_get_info(_ e: OpaquePointer?, _ info: UnsafeMutablePointer<mk_video_encoder_info>?) -> Int32 {
    guard let h = liveHandle(VideoEncoderHandle.self, e, "mk_video_encoder_get_info") else { return MK_EINVAL }
    guard let info else { return fail(MK_EINVAL, "mk_video_encoder_get_info: info is NULL") }
    guard sizeOK(info.pointee.struct_size, MemoryLayout<mk_video_encoder_info>.size, "mk_video_encoder_info") else { return MK_EINVAL }
    let enc = h.converter.encoder
    let p = enc.parameters
    h.cookie = p.extradata
    var i = mk_video_encoder_info()
    i.struct_size = info.pointee.struct_size
    i.codec = h.codecName.withUnsafeBufferPointer { $0.baseAddress }
    i.backend = h.backendName.withUnsafeBufferPointer { $0.baseAddress }
    i.width = Int32(clamping: p.width)
    i.height = Int32(clamping: p.height)
    i.pixel_format = enc.inputFormat.pixelFormat.rawValue
    i.time_base_num = Int32(clamping: enc.timeBase.numerator)
    i.time_base_den = Int32(clamping: enc.timeBase.denominator)
    i.reorder_delay = Int32(clamping: enc.reorderDelay)
    i.bit_rate = Int64(p.bitRate)
    i.extradata = h.cookie.isEmpty ? nil : h.cookie.withUnsafeBufferPointer { $0.baseAddress }
    i.extradata_size = h.cookie.count
    i.frames_sent = Int64(h.converter.framesSent)
    copyOut(i, to: info, size: info.pointee.struct_size)
    return MK_OK
}

@_cdecl("mk_video_encoder_get_params")
public func mk_video_encoder_get_params(_ e: OpaquePointer?, _ params: UnsafeMutablePointer<mk_codec_params>?) -> Int32 {
    guard let h = liveHandle(VideoEncoderHandle.self, e, "mk_video_encoder_get_params") else { return MK_EINVAL }
    let enc = h.converter.encoder
    h.cookie = enc.parameters.extradata
    return codedParams(enc.parameters, timeBase: enc.timeBase, reorderDelay: enc.reorderDelay, codecName: h.codecName, cookie: h.cookie,
                       into: params, "mk_video_encoder_get_params")
}

/// Fills a caller's mk_codec_params with a video encoder's coded stream (mk_video_encoder_get_params,
/// mk_compression_session_get_params); `codecName` and `cookie` are the handle's, lent out.
func codedParams(_ p: CodecParameters, timeBase: Rational, reorderDelay: Int, codecName: [CChar], cookie: [UInt8],
                 into params: UnsafeMutablePointer<mk_codec_params>?, _ function: String) -> Int32 {
    guard let params else { return fail(MK_EINVAL, "\(function): params is NULL") }
    let size = params.pointee.struct_size
    guard sizeOK(size, MemoryLayout<mk_codec_params>.offset(of: \mk_codec_params.codec_tag)!, "mk_codec_params") else { return MK_EINVAL }
    var c = mk_codec_params()
    mk_codec_params_default(&c)
    c.struct_size = size
    c.media_type = MK_MEDIA_VIDEO
    c.codec = codecName.withUnsafeBufferPointer { $0.baseAddress }
    c.extradata = cookie.isEmpty ? nil : cookie.withUnsafeBufferPointer { $0.baseAddress }
    c.extradata_size = cookie.count
    c.width = Int32(clamping: p.width)
    c.height = Int32(clamping: p.height)
    c.time_base_num = Int32(clamping: timeBase.numerator)
    c.time_base_den = Int32(clamping: timeBase.denominator)
    c.reorder_depth = Int32(clamping: reorderDelay)
    c.bit_rate = Int64(p.bitRate)
    if p.sampleAspectRatio.numerator > 0 {
        c.sample_aspect_num = Int32(clamping: p.sampleAspectRatio.numerator)
        c.sample_aspect_den = Int32(clamping: p.sampleAspectRatio.denominator)
    }
    c.color_range = Int32(p.colorRange.rawValue)
    c.color_primaries = Int32(clamping: p.colorPrimaries.rawValue)
    c.color_transfer = Int32(clamping: p.colorTransfer.rawValue)
    c.color_space = Int32(clamping: p.colorSpace.rawValue)
    copyOut(c, to: params, size: size)
    return MK_OK
}

@_cdecl("mk_video_encoder_send_frame")
public func mk_video_encoder_send_frame(_ e: OpaquePointer?, _ f: OpaquePointer?, _ flags: Int32) -> Int32 {
    guard let h = liveHandle(VideoEncoderHandle.self, e, "mk_video_encoder_send_frame") else { return MK_EINVAL }
    guard let frame = liveHandle(FrameHandle.self, f, "mk_video_encoder_send_frame")?.frame else { return MK_EINVAL }
    guard flags & ~MK_ENCODE_FORCE_KEYFRAME == 0 else { return fail(MK_EINVAL, "mk_video_encoder_send_frame: unknown flags \(flags)") }
    return guarded {
        try h.converter.send(frame, forceKeyFrame: flags & MK_ENCODE_FORCE_KEYFRAME != 0)
        return MK_OK
    }
}

@_cdecl("mk_video_encoder_send_planes")
public func mk_video_encoder_send_planes(_ e: OpaquePointer?, _ format: Int32, _ planes: UnsafePointer<UnsafePointer<UInt8>?>?,
                                         _ strides: UnsafePointer<Int64>?, _ pts: Int64, _ flags: Int32) -> Int32 {
    let function = "mk_video_encoder_send_planes"
    guard let h = liveHandle(VideoEncoderHandle.self, e, function) else { return MK_EINVAL }
    if h.converter.isFlushed { return fail(MK_ESTATE, "\(function): the encoder was flushed") }
    return guarded {
        let frame = try callerPicture(format, planes, strides, flags, output: h.converter.output, pts: pts, function)
        try h.converter.send(frame, forceKeyFrame: flags & MK_ENCODE_FORCE_KEYFRAME != 0)
        return MK_OK
    }
}

/// A picture of `output`'s size and time base holding a copy of the caller's planes in
/// `format` (mk_video_encoder_send_planes, mk_writer_write_video_planes), after checking every
/// pointer, stride and flag.
/// - Throws: `.invalidArgument` naming what is wrong.
func callerPicture(_ format: Int32, _ planes: UnsafePointer<UnsafePointer<UInt8>?>?, _ strides: UnsafePointer<Int64>?, _ flags: Int32,
                   output: VideoFormat, pts: Int64, _ function: String) throws -> Frame {
    guard let planes, let strides else {
        throw MediaError(.invalidArgument, "\(function): \(planes == nil ? "planes" : "strides") is NULL")
    }
    guard let pixel = PixelFormat(rawValue: format) else {
        throw MediaError(.invalidArgument, "\(function): format \(format) is not an MK_PIXEL_* value")
    }
    guard flags & ~MK_ENCODE_FORCE_KEYFRAME == 0 else { throw MediaError(.invalidArgument, "\(function): unknown flags \(flags)") }
    var given: [(base: UnsafeRawPointer, stride: Int)] = []
    for i in 0..<pixel.planeCount {
        guard let p = planes[i] else { throw MediaError(.invalidArgument, "\(function): plane \(i) of a \(pixel.name) picture is NULL") }
        guard strides[i] > 0 && strides[i] <= Int64(Int32.max) else {
            throw MediaError(.invalidArgument, "\(function): stride \(strides[i]) of plane \(i) is out of range")
        }
        given.append((UnsafeRawPointer(p), Int(truncatingIfNeeded: strides[i])))
    }
    return try Frame(copyingPicture: pixel, width: output.width, height: output.height, planes: given, pts: pts, timeBase: output.timeBase)
}

@_cdecl("mk_video_encoder_flush")
public func mk_video_encoder_flush(_ e: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(VideoEncoderHandle.self, e, "mk_video_encoder_flush") else { return MK_EINVAL }
    return guarded {
        try h.converter.flush()
        return MK_OK
    }
}

@_cdecl("mk_video_encoder_receive_packet")
public func mk_video_encoder_receive_packet(_ e: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let h = liveHandle(VideoEncoderHandle.self, e, "mk_video_encoder_receive_packet") else { return MK_EINVAL }
    guard let out else { return fail(MK_EINVAL, "mk_video_encoder_receive_packet: out is NULL") }
    out.pointee = nil
    return guarded {
        switch try h.converter.receiveOutput() {
        case .packet(let p):
            out.pointee = Handles.make(PacketHandle(p))
            return MK_OK
        case .needsInput: return MK_EAGAIN
        case .endOfStream: return MK_EOF
        }
    }
}

@_cdecl("mk_video_encoder_close")
public func mk_video_encoder_close(_ e: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(e, as: VideoEncoderHandle.self)
}
