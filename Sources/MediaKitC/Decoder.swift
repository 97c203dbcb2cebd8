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
