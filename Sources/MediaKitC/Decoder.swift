// mk_decoder and mk_frame.
import CMediaKit
import Foundation
import MediaKit

/// A decode session and the frames it produced that the caller has not received yet.
final class DecoderHandle {
    let session: DecodeSession
    let track: Int
    var pending: [Frame] = []
    var head = 0
    var draining = false

    init(session: DecodeSession, track: Int) {
        self.session = session
        self.track = track
    }

    func push(_ frame: Frame) {
        if head > 64 && head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
        pending.append(frame)
    }

    func pop() -> Frame? {
        guard head < pending.count else { return nil }
        defer { head += 1 }
        return pending[head]
    }
}

/// A frame handed to C.
final class FrameHandle {
    let frame: Frame
    init(_ frame: Frame) { self.frame = frame }
}

/// The TrimMode a C `trim` setting stands for; nil for an unknown value.
func trimMode(_ value: Int32) -> TrimMode? {
    switch value {
    case MK_TRIM_NONE: return TrimMode.none
    case MK_TRIM_GAPLESS: return .gapless
    case MK_TRIM_FFMPEG: return .ffmpeg
    default: return nil
    }
}

@_cdecl("mk_decoder_default_settings")
public func mk_decoder_default_settings(_ s: UnsafeMutablePointer<mk_decoder_settings>?) {
    guard let s else { return }
    s.pointee = mk_decoder_settings(struct_size: UInt32(MemoryLayout<mk_decoder_settings>.size), backend: nil, threads: 0, trim: 1)
}

@_cdecl("mk_decoder_open")
public func mk_decoder_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ demuxer: OpaquePointer?, _ track: Int32,
                            _ settings: UnsafePointer<mk_decoder_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_decoder_open: out is NULL") }
    out.pointee = nil
    guard let dh = liveHandle(DemuxerHandle.self, demuxer, "mk_decoder_open") else { return MK_EINVAL }
    let tracks = dh.demuxer.tracks
    guard track >= 0 && Int(track) < tracks.count else {
        return fail(MK_EINVAL, "mk_decoder_open: track \(track) does not exist (the file has \(tracks.count))")
    }
    var s = mk_decoder_settings()
    mk_decoder_default_settings(&s)
    if let settings {
        guard sizeOK(settings.pointee.struct_size, MemoryLayout<mk_decoder_settings>.size, "mk_decoder_settings") else { return MK_EINVAL }
        s = settings.pointee
    }
    guard let trim = trimMode(s.trim) else {
        return fail(MK_EINVAL, "mk_decoder_open: trim \(s.trim) is not MK_TRIM_NONE, MK_TRIM_GAPLESS or MK_TRIM_FFMPEG")
    }
    return guarded {
        let session = try DecodeSession(track: tracks[Int(track)], backend: s.backend.map { String(cString: $0) },
                                        threads: Int(s.threads), trim: trim)
        out.pointee = Handles.make(DecoderHandle(session: session, track: Int(track)))
        return MK_OK
    }
}

@_cdecl("mk_decoder_close")
public func mk_decoder_close(_ decoder: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(decoder, as: DecoderHandle.self)
}

@_cdecl("mk_decoder_send_packet")
public func mk_decoder_send_packet(_ d: OpaquePointer?, _ packet: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decoder_send_packet") else { return MK_EINVAL }
    if h.draining {
        return fail(MK_ESTATE, "mk_decoder_send_packet: the decoder is draining (a NULL packet was sent); call mk_decoder_reset to decode more")
    }
    guard let packet else {
        h.draining = true
        return guarded {
            try h.session.finish { h.push($0) }
            return MK_OK
        }
    }
    guard let ph = liveHandle(PacketHandle.self, packet, "mk_decoder_send_packet") else { return MK_EINVAL }
    guard ph.packet.trackIndex == h.track else {
        return fail(MK_EINVAL, "mk_decoder_send_packet: the packet is from track \(ph.packet.trackIndex), the decoder decodes track \(h.track)")
    }
    return guarded {
        try h.session.decode(ph.packet) { h.push($0) }
        return MK_OK
    }
}

@_cdecl("mk_decoder_receive_frame")
public func mk_decoder_receive_frame(_ d: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_decoder_receive_frame: out is NULL") }
    out.pointee = nil
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decoder_receive_frame") else { return MK_EINVAL }
    guard let frame = h.pop() else { return h.draining ? MK_EOF : MK_EAGAIN }
    out.pointee = Handles.make(FrameHandle(frame))
    return MK_OK
}

@_cdecl("mk_decoder_reset")
public func mk_decoder_reset(_ d: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decoder_reset") else { return MK_EINVAL }
    h.session.reset()
    h.pending.removeAll()
    h.head = 0
    h.draining = false
    return MK_OK
}

@_cdecl("mk_frame_get_info")
public func mk_frame_get_info(_ f: OpaquePointer?, _ info: UnsafeMutablePointer<mk_frame_info>?) -> Int32 {
    guard let h = liveHandle(FrameHandle.self, f, "mk_frame_get_info") else { return MK_EINVAL }
    guard let info else { return fail(MK_EINVAL, "mk_frame_get_info: info is NULL") }
    guard sizeOK(info.pointee.struct_size, MemoryLayout<mk_frame_info>.size, "mk_frame_info") else { return MK_EINVAL }
    let fr = h.frame
    var i = mk_frame_info()
    i.struct_size = info.pointee.struct_size
    i.media_type = mediaTypeCode(fr.mediaType)
    i.format = fr.pixelFormat?.rawValue ?? fr.sampleFormat?.rawValue ?? 0
    i.pts = fr.pts
    i.duration = fr.duration
    i.time_base_num = Int32(clamping: fr.timeBase.numerator)
    i.time_base_den = Int32(clamping: fr.timeBase.denominator)
    i.width = Int32(clamping: fr.width)
    i.height = Int32(clamping: fr.height)
    i.sample_rate = Int32(clamping: fr.sampleRate)
    i.channels = Int32(clamping: fr.channels)
    i.sample_count = Int32(clamping: fr.sampleCount)
    i.plane_count = Int32(min(8, fr.planes.count))
    withUnsafeMutableBytes(of: &i.planes) { raw in
        let planes = raw.bindMemory(to: UnsafePointer<UInt8>?.self)
        for (k, p) in fr.planes.prefix(8).enumerated() { planes[k] = p.base.assumingMemoryBound(to: UInt8.self) }
    }
    withUnsafeMutableBytes(of: &i.strides) { raw in
        let strides = raw.bindMemory(to: Int64.self)
        for (k, p) in fr.planes.prefix(8).enumerated() { strides[k] = Int64(p.stride) }
    }
    withUnsafeMutableBytes(of: &i.plane_sizes) { raw in
        let sizes = raw.bindMemory(to: Int64.self)
        for (k, p) in fr.planes.prefix(8).enumerated() { sizes[k] = Int64(p.length) }
    }
    info.pointee = i
    return MK_OK
}

@_cdecl("mk_frame_pack")
public func mk_frame_pack(_ f: OpaquePointer?, _ layout: Int32, _ buffer: UnsafeMutablePointer<UInt8>?, _ capacity: Int,
                          _ size: UnsafeMutablePointer<Int>?) -> Int32 {
    guard let h = liveHandle(FrameHandle.self, f, "mk_frame_pack") else { return MK_EINVAL }
    guard let size else { return fail(MK_EINVAL, "mk_frame_pack: size is NULL") }
    let fr = h.frame
    switch layout {
    case MK_PACK_NV12, MK_PACK_I420:
        guard fr.mediaType == .video else { return fail(MK_EINVAL, "mk_frame_pack: a video layout for an audio frame") }
        let format: RawPictureFormat = layout == MK_PACK_NV12 ? .nv12 : .i420
        let needed = format.frameSize(width: fr.width, height: fr.height)
        size.pointee = needed
        guard let buffer else { return MK_OK }
        guard capacity >= needed else { return fail(MK_EINVAL, "mk_frame_pack: the buffer holds \(capacity) bytes, \(needed) are needed") }
        var picture = fr
        if let source = fr.pixelFormat, PicturePacker.needsConversion(fr, as: format) {
            // 10-bit, 4:4:4, 4:2:2, full range ...: a plugin's picture converter (libswscale), as ffmpeg converts.
            switch MediaRegistry.shared.convertPicture(fr, to: format.pixelFormat) {
            case .success(let converted): picture = converted
            case .failure(let e):
                return fail(e.kind == .notFound ? MK_EUNSUPPORTED : status(for: e), "mk_frame_pack: decoded pictures are \(source.name); packing them as \(format.rawValue): \(e.message)")
            }
        }
        PicturePacker.packValidated(picture, as: format, into: UnsafeMutableBufferPointer(start: buffer, count: capacity))
        return MK_OK
    case MK_PACK_S16, MK_PACK_F32:
        guard fr.mediaType == .audio else { return fail(MK_EINVAL, "mk_frame_pack: an audio layout for a video frame") }
        let format: PCMFormat = layout == MK_PACK_S16 ? .s16 : .f32
        let needed = fr.sampleCount * fr.channels * format.bytesPerSample
        size.pointee = needed
        guard let buffer else { return MK_OK }
        guard capacity >= needed else { return fail(MK_EINVAL, "mk_frame_pack: the buffer holds \(capacity) bytes, \(needed) are needed") }
        var bytes: [UInt8] = []
        AudioSampleConverter.append(fr, as: format, to: &bytes)
        bytes.withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: min(needed, $0.count)) }
        return MK_OK
    default:
        return fail(MK_EINVAL, "mk_frame_pack: unknown layout \(layout) (MK_PACK_NV12, MK_PACK_I420, MK_PACK_S16 or MK_PACK_F32)")
    }
}

@_cdecl("mk_frame_free")
public func mk_frame_free(_ frame: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(frame, as: FrameHandle.self)
}

@_cdecl("mk_decode_default_settings")
public func mk_decode_default_settings(_ s: UnsafeMutablePointer<mk_decode_settings>?) {
    guard let s else { return }
    s.pointee = mk_decode_settings(struct_size: UInt32(MemoryLayout<mk_decode_settings>.size), video_layout: MK_PACK_NV12,
                                   audio_layout: MK_PACK_S16, wav: 0, y4m: 0, trim: 1, autorotate: 1, threads: 0, backend: nil)
}

@_cdecl("mk_decode_file")
public func mk_decode_file(_ path: UnsafePointer<CChar>?, _ audioOut: UnsafePointer<CChar>?, _ videoOut: UnsafePointer<CChar>?,
                           _ settings: UnsafePointer<mk_decode_settings>?) -> Int32 {
    guard let path else { return fail(MK_EINVAL, "mk_decode_file: path is NULL") }
    guard audioOut != nil || videoOut != nil else { return fail(MK_EINVAL, "mk_decode_file: give an audio or a video output (both are NULL)") }
    var s = mk_decode_settings()
    mk_decode_default_settings(&s)
    if let settings {
        guard sizeOK(settings.pointee.struct_size, MemoryLayout<mk_decode_settings>.size, "mk_decode_settings") else { return MK_EINVAL }
        s = settings.pointee
    }
    guard s.video_layout == MK_PACK_NV12 || s.video_layout == MK_PACK_I420 else { return fail(MK_EINVAL, "mk_decode_file: video_layout \(s.video_layout) is not MK_PACK_NV12 or MK_PACK_I420") }
    guard s.audio_layout == MK_PACK_S16 || s.audio_layout == MK_PACK_F32 else { return fail(MK_EINVAL, "mk_decode_file: audio_layout \(s.audio_layout) is not MK_PACK_S16 or MK_PACK_F32") }
    var o = FileDecodeOptions(audioPath: audioOut.map { String(cString: $0) }, videoPath: videoOut.map { String(cString: $0) })
    o.pixelFormat = s.video_layout == MK_PACK_NV12 ? .nv12 : .i420
    o.sampleFormat = s.audio_layout == MK_PACK_S16 ? .s16 : .f32
    o.wav = s.wav != 0
    o.y4m = s.y4m != 0
    guard let trim = trimMode(s.trim) else {
        return fail(MK_EINVAL, "mk_decode_file: trim \(s.trim) is not MK_TRIM_NONE, MK_TRIM_GAPLESS or MK_TRIM_FFMPEG")
    }
    o.trim = trim
    o.autorotate = s.autorotate != 0
    o.threads = Int(s.threads)
    o.backend = s.backend.map { String(cString: $0) }
    return guarded {
        let result = try FileDecoder.decode(path: String(cString: path), options: o)
        if let cut = result.truncation { return fail(MK_ETRUNCATED, cut.description) }   // the outputs are written
        return MK_OK
    }
}
