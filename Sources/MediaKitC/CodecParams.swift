// mk_codec_params: the one reading of the C struct into a Swift Track, for
// mk_decode_session_open_params and mk_muxer_add_track_params.
import CMediaKit
import Foundation
import MediaKit

@_cdecl("mk_codec_params_default")
public func mk_codec_params_default(_ p: UnsafeMutablePointer<mk_codec_params>?) {
    guard let p else { return }
    var d = mk_codec_params()
    d.struct_size = UInt32(MemoryLayout<mk_codec_params>.size)
    d.time_base_num = 1
    d.time_base_den = 90000
    d.sample_aspect_den = 1
    d.color_primaries = Int32(ColorPrimaries.unspecified.rawValue)
    d.color_transfer = Int32(ColorTransfer.unspecified.rawValue)
    d.color_space = Int32(ColorMatrix.unspecified.rawValue)
    p.pointee = d
}

/// Reads and checks `params` (a 0.1 struct, which ends at reorder_depth, or a newer one) into a
/// track (index 0, id 1, no edit list; encoder delay and padding in samples); nil after
/// fail(MK_EINVAL) naming `function` and the field.
func paramsTrack(_ params: UnsafePointer<mk_codec_params>?, _ function: String) -> Track? {
    guard let params else { fail(MK_EINVAL, "\(function): params is NULL"); return nil }
    let oldSize = MemoryLayout<mk_codec_params>.offset(of: \mk_codec_params.codec_tag)!
    guard sizeOK(params.pointee.struct_size, oldSize, "mk_codec_params") else { return nil }
    var defaults = mk_codec_params()
    mk_codec_params_default(&defaults)
    let c = copyIn(defaults, from: params, size: params.pointee.struct_size)
    func invalid(_ message: String) -> Track? { fail(MK_EINVAL, "\(function): \(message)"); return nil }
    let kind: MediaType
    switch c.media_type {
    case MK_MEDIA_AUDIO: kind = .audio
    case MK_MEDIA_VIDEO: kind = .video
    default: return invalid("media_type \(c.media_type) is not MK_MEDIA_AUDIO or MK_MEDIA_VIDEO")
    }
    guard let name = c.codec, name.pointee != 0 else {
        return invalid("codec is NULL or empty (give FFmpeg's name: \"h264\", \"aac\" ...)")
    }
    guard c.extradata_size == 0 || c.extradata != nil else { return invalid("extradata is NULL with extradata_size \(c.extradata_size)") }
    guard c.extradata_size <= 1 << 24 else { return invalid("extradata_size \(c.extradata_size) is over the 16 MiB limit") }
    guard c.time_base_num > 0 && c.time_base_den > 0 else { return invalid("time base \(c.time_base_num)/\(c.time_base_den) is not positive") }
    guard c.width >= 0, c.height >= 0, c.sample_rate >= 0, c.channels >= 0, c.reorder_depth >= 0 else {
        return invalid("a negative size, rate, channel count or reorder depth")
    }
    guard c.encoder_delay >= 0, c.encoder_padding >= 0, c.bit_rate >= 0, c.bits_per_coded_sample >= 0, c.block_align >= 0 else {
        return invalid("a negative encoder_delay, encoder_padding, bit_rate, bits_per_coded_sample or block_align")
    }
    guard c.sample_aspect_num >= 0, c.sample_aspect_den >= 0 else {
        return invalid("sample aspect ratio \(c.sample_aspect_num)/\(c.sample_aspect_den) is negative")
    }
    guard let range = ColorRange(rawValue: Int(c.color_range)) else { return invalid("color_range \(c.color_range) is not 0, 1 or 2") }
    guard c.color_primaries >= 0, c.color_transfer >= 0, c.color_space >= 0 else { return invalid("a negative colour code point") }
    if (c.encoder_delay > 0 || c.encoder_padding > 0) && (kind != .audio || c.sample_rate <= 0) {
        return invalid("encoder_delay and encoder_padding are audio samples: they need an audio track with a sample_rate")
    }
    var p = CodecParameters(mediaType: kind, codec: CodecID(String(cString: name)),
                            codecTag: c.codec_tag.map { String(cString: $0) } ?? "",
                            extradata: c.extradata_size > 0 ? Array(UnsafeBufferPointer(start: c.extradata, count: c.extradata_size)) : [],
                            width: Int(c.width), height: Int(c.height), sampleRate: Int(c.sample_rate), channels: Int(c.channels),
                            bitsPerCodedSample: Int(c.bits_per_coded_sample), blockAlign: Int(c.block_align), bitRate: Int(c.bit_rate),
                            sampleAspectRatio: c.sample_aspect_den > 0 ? Rational(Int64(c.sample_aspect_num), Int64(c.sample_aspect_den)) : Rational(0, 1))
    p.reorderDepth = Int(c.reorder_depth)
    p.channelMask = c.channel_mask
    p.colorRange = range
    // 0 is "reserved" in H.273: a caller that cleared the struct means "unspecified".
    p.colorPrimaries = ColorPrimaries(rawValue: c.color_primaries == 0 ? ColorPrimaries.unspecified.rawValue : Int(c.color_primaries))
    p.colorTransfer = ColorTransfer(rawValue: c.color_transfer == 0 ? ColorTransfer.unspecified.rawValue : Int(c.color_transfer))
    p.colorSpace = ColorMatrix(rawValue: c.color_space == 0 ? ColorMatrix.unspecified.rawValue : Int(c.color_space))
    let m = withUnsafeBytes(of: c.matrix) { Array($0.bindMemory(to: Int32.self)) }
    let matrix = m.allSatisfy { $0 == 0 } ? [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000] : m
    let language = c.language.map { String(cString: $0) } ?? "und"
    guard language.utf8.count == 3, language.utf8.allSatisfy({ (0x61...0x7A).contains($0) }) else {
        return invalid("language \"\(language)\" is not an ISO 639-2/T code (three lower-case letters, \"und\" when unknown)")
    }
    var track = Track(index: 0, id: 1, parameters: p, timeBase: Rational(Int64(c.time_base_num), Int64(c.time_base_den)), duration: 0,
                      language: language, rotation: Track.displayRotation(matrix), matrix: matrix)
    track.encoderDelay = Int(c.encoder_delay)
    track.encoderPadding = Int(c.encoder_padding)
    return track
}
