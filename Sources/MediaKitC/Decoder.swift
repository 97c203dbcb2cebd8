// mk_decode_session and mk_frame.
import CMediaKit
import Foundation
import MediaKit

/// A decode session as C sees it: mk_decode_session_* map one to one onto its send / receive.
final class DecoderHandle {
    let session: DecodeSession
    /// The demuxer track whose packets it takes; nil for a decoder opened from codec
    /// parameters, which takes any packet (its timestamps in the parameters' time base).
    let track: Int?
    /// The demuxer of the last mk_decode_session_frames_at that ran to its end, and its use count
    /// then (``DemuxerHandle/uses``): the next batch on it goes on from there when no C call
    /// used that demuxer in between.
    weak var batchDemuxer: DemuxerHandle?
    var batchDemuxerUses: UInt64 = 0

    init(session: DecodeSession, track: Int?) {
        self.session = session
        self.track = track
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

@_cdecl("mk_decode_session_default_settings")
public func mk_decode_session_default_settings(_ s: UnsafeMutablePointer<mk_decode_session_settings>?) {
    guard let s else { return }
    s.pointee = mk_decode_session_settings(struct_size: UInt32(MemoryLayout<mk_decode_session_settings>.size), backend: nil, threads: 0, trim: 1)
}

/// The settings a C caller passed (or the defaults), checked; nil after fail() for bad ones.
private func decoderSettings(_ settings: UnsafePointer<mk_decode_session_settings>?, _ function: String) -> (settings: mk_decode_session_settings, trim: TrimMode)? {
    var s = mk_decode_session_settings()
    mk_decode_session_default_settings(&s)
    if let settings {
        guard sizeOK(settings.pointee.struct_size, MemoryLayout<mk_decode_session_settings>.size, "mk_decode_session_settings") else { return nil }
        s = settings.pointee
    }
    guard let trim = trimMode(s.trim) else {
        _ = fail(MK_EINVAL, "\(function): trim \(s.trim) is not MK_TRIM_NONE, MK_TRIM_GAPLESS or MK_TRIM_FFMPEG")
        return nil
    }
    return (s, trim)
}

/// Creates the session for `track` and its handle in *out.
private func openDecoder(_ out: UnsafeMutablePointer<OpaquePointer?>, _ track: Track, demuxerTrack: Int?,
                         _ s: (settings: mk_decode_session_settings, trim: TrimMode)) -> Int32 {
    guarded {
        let session = try DecodeSession(track: track, backend: s.settings.backend.map { String(cString: $0) },
                                        threads: Int(s.settings.threads), trim: s.trim)
        out.pointee = Handles.make(DecoderHandle(session: session, track: demuxerTrack))
        return MK_OK
    }
}

@_cdecl("mk_decode_session_open")
public func mk_decode_session_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ demuxer: OpaquePointer?, _ track: Int32,
                                   _ settings: UnsafePointer<mk_decode_session_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_decode_session_open: out is NULL") }
    out.pointee = nil
    guard let t = demuxerTrack(demuxer, track, "mk_decode_session_open") else { return MK_EINVAL }
    guard let s = decoderSettings(settings, "mk_decode_session_open") else { return MK_EINVAL }
    return openDecoder(out, t, demuxerTrack: Int(track), s)
}

@_cdecl("mk_decode_session_open_params")
public func mk_decode_session_open_params(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ params: UnsafePointer<mk_codec_params>?,
                                          _ settings: UnsafePointer<mk_decode_session_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_decode_session_open_params: out is NULL") }
    out.pointee = nil
    guard let t = paramsTrack(params, "mk_decode_session_open_params") else { return MK_EINVAL }
    guard let s = decoderSettings(settings, "mk_decode_session_open_params") else { return MK_EINVAL }
    return openDecoder(out, t, demuxerTrack: nil, s)
}

@_cdecl("mk_decode_session_close")
public func mk_decode_session_close(_ decoder: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(decoder, as: DecoderHandle.self)
}

@_cdecl("mk_decode_session_send_packet")
public func mk_decode_session_send_packet(_ d: OpaquePointer?, _ packet: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decode_session_send_packet") else { return MK_EINVAL }
    if h.session.isDraining {
        return fail(MK_ESTATE, "mk_decode_session_send_packet: the decoder is draining (a NULL packet was sent); call mk_decode_session_reset to decode more")
    }
    guard let packet else {
        return guarded {
            try h.session.flush()
            return MK_OK
        }
    }
    guard let ph = liveHandle(PacketHandle.self, packet, "mk_decode_session_send_packet") else { return MK_EINVAL }
    var p = ph.packet
    if let track = h.track {
        guard p.trackIndex == track else {
            return fail(MK_EINVAL, "mk_decode_session_send_packet: the packet is from track \(p.trackIndex), the decoder decodes track \(track)")
        }
    } else {
        p.trackIndex = 0
        p.timeBase = h.session.track.timeBase
    }
    return guarded {
        try h.session.send(p) == .accepted ? MK_OK : MK_EAGAIN
    }
}

@_cdecl("mk_decode_session_receive_frame")
public func mk_decode_session_receive_frame(_ d: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_decode_session_receive_frame: out is NULL") }
    out.pointee = nil
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decode_session_receive_frame") else { return MK_EINVAL }
    return guarded {
        switch try h.session.receiveOutput() {
        case .frame(let frame):
            out.pointee = Handles.make(FrameHandle(frame))
            return MK_OK
        case .needsInput: return MK_EAGAIN
        case .endOfStream: return MK_EOF
        }
    }
}

@_cdecl("mk_decode_session_reset")
public func mk_decode_session_reset(_ d: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decode_session_reset") else { return MK_EINVAL }
    h.session.reset()
    return MK_OK
}

@_cdecl("mk_decode_session_seek")
public func mk_decode_session_seek(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ seconds: Double) -> Int32 {
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decode_session_seek") else { return MK_EINVAL }
    guard let dh = liveHandle(DemuxerHandle.self, demuxer, "mk_decode_session_seek") else { return MK_EINVAL }
    guard h.track != nil else {
        return fail(MK_EINVAL, "mk_decode_session_seek: the decoder was opened from codec parameters; seek your own source and call mk_decode_session_reset")
    }
    guard seconds.isFinite, seconds >= 0 else { return fail(MK_EINVAL, "mk_decode_session_seek: cannot seek to \(seconds) s") }
    return guarded {
        let audio = h.session.track.mediaType == .audio
        try dh.demuxer.seekForDecoding(to: max(0, seconds - (audio ? DecodeSession.seekPreroll : 0)))
        try h.session.seek(to: seconds)
        return MK_OK
    }
}

@_cdecl("mk_decode_session_frame_index")
public func mk_decode_session_frame_index(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ pts: UnsafeMutablePointer<Int64>?,
                                          _ isKey: UnsafeMutablePointer<Int32>?, _ capacity: Int64, _ count: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decode_session_frame_index") else { return MK_EINVAL }
    guard let dh = liveHandle(DemuxerHandle.self, demuxer, "mk_decode_session_frame_index") else { return MK_EINVAL }
    guard let count else { return fail(MK_EINVAL, "mk_decode_session_frame_index: count is NULL") }
    guard capacity >= 0 else { return fail(MK_EINVAL, "mk_decode_session_frame_index: capacity \(capacity) is negative") }
    guard h.track != nil else {
        return fail(MK_EINVAL, "mk_decode_session_frame_index: the decoder was opened from codec parameters; it has no track to index")
    }
    return guarded {
        let (times, keyFrames) = try h.session.presentedFrames(from: dh.demuxer)
        count.pointee = Int64(times.count)
        let n = min(Int(capacity), times.count)
        if let pts { for i in 0..<n { pts[i] = times[i] } }
        if let isKey {
            for i in 0..<n { isKey[i] = 0 }
            for k in keyFrames where k < n { isKey[k] = 1 }
        }
        return MK_OK
    }
}

@_cdecl("mk_decode_session_set_frame_index")
public func mk_decode_session_set_frame_index(_ d: OpaquePointer?, _ pts: UnsafePointer<Int64>?, _ isKey: UnsafePointer<Int32>?,
                                              _ count: Int64) -> Int32 {
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decode_session_set_frame_index") else { return MK_EINVAL }
    guard count >= 0, count == 0 || (pts != nil && isKey != nil) else {
        return fail(MK_EINVAL, "mk_decode_session_set_frame_index: \(count) frames with pts \(pts == nil ? "NULL" : "given") and is_key \(isKey == nil ? "NULL" : "given")")
    }
    guard h.track != nil else {
        return fail(MK_EINVAL, "mk_decode_session_set_frame_index: the decoder was opened from codec parameters; it has no track to index")
    }
    let n = Int(count)
    return guarded {
        let times = n == 0 ? [] : Array(UnsafeBufferPointer(start: pts, count: n))
        let keys = n == 0 ? [] : (0..<n).filter { isKey![$0] != 0 }
        try h.session.usePresentedFrames(times: times, keyFrames: keys)
        return MK_OK
    }
}

/// Thrown out of a batch when mk_decode_session_frames_at's callback returns a negative status.
private struct CallbackStop: Error { let status: Int32 }

/// A frame callback as C passes it (mk_frame_callback).
public typealias FrameCallback = @convention(c) (UnsafeMutableRawPointer?, Int64, OpaquePointer?) -> Int32

/// The common part of mk_decode_session_frames_at and mk_decode_session_frames_at_pts: the handles and the
/// count checked, the batch run with `run(values, resuming, deliver)`, each frame handed to
/// `callback` as a new handle, a batch that ends well remembered for the next one to resume.
private func frameBatch(_ function: String, _ noun: String, _ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ values: UnsafePointer<Int64>?,
                        _ count: Int64, _ callback: FrameCallback?, _ user: UnsafeMutableRawPointer?,
                        _ run: (DecodeSession, Demuxer, [Int64], Bool, (Int, Frame?) throws -> Void) throws -> Void) -> Int32 {
    guard let h = liveHandle(DecoderHandle.self, d, function) else { return MK_EINVAL }
    guard let dh = liveHandle(DemuxerHandle.self, demuxer, function) else { return MK_EINVAL }
    guard let callback else { return fail(MK_EINVAL, "\(function): callback is NULL") }
    guard count >= 0, count == 0 || values != nil else {
        return fail(MK_EINVAL, "\(function): \(count) \(noun) at \(values == nil ? "NULL" : "an address")")
    }
    guard h.track != nil else {
        return fail(MK_EINVAL, "\(function): the decoder was opened from codec parameters; it has no track to index")
    }
    let wanted = count == 0 ? [] : Array(UnsafeBufferPointer(start: values, count: Int(count)))
    // A batch after a batch on the same demuxer, with no call on that demuxer between them
    // (its use count is the last batch's plus this call's), goes on where that one stopped.
    let resuming = h.batchDemuxer === dh && dh.uses == h.batchDemuxerUses &+ 1
    h.batchDemuxer = nil
    do {
        try run(h.session, dh.demuxer, wanted, resuming) { position, frame in
            let status = callback(user, Int64(position), frame.map { Handles.make(FrameHandle($0)) })
            if status < 0 { throw CallbackStop(status: status) }
        }
        h.batchDemuxer = dh
        h.batchDemuxerUses = dh.uses
        return MK_OK
    } catch let stop as CallbackStop {
        return fail(stop.status, "\(function): stopped by the callback (status \(stop.status))")
    } catch {
        return fail(error)
    }
}

@_cdecl("mk_decode_session_frames_at")
public func mk_decode_session_frames_at(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ indices: UnsafePointer<Int64>?, _ count: Int64,
                                        _ callback: FrameCallback?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    frameBatch("mk_decode_session_frames_at", "indices", d, demuxer, indices, count, callback, user) { session, demuxer, wanted, resuming, deliver in
        try session.frames(atIndices: wanted.map { Int(clamping: $0) }, from: demuxer, resuming: resuming, deliver: deliver)
    }
}

@_cdecl("mk_decode_session_frames_at_pts")
public func mk_decode_session_frames_at_pts(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ pts: UnsafePointer<Int64>?, _ count: Int64,
                                            _ callback: FrameCallback?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    frameBatch("mk_decode_session_frames_at_pts", "times", d, demuxer, pts, count, callback, user) { session, demuxer, wanted, resuming, deliver in
        try session.frames(atTicks: wanted, from: demuxer, resuming: resuming, deliver: deliver)
    }
}

@_cdecl("mk_decode_session_estimate_frames")
public func mk_decode_session_estimate_frames(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ first: UnsafeMutablePointer<Int64>?,
                                              _ end: UnsafeMutablePointer<Int64>?, _ count: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let h = liveHandle(DecoderHandle.self, d, "mk_decode_session_estimate_frames") else { return MK_EINVAL }
    guard let dh = liveHandle(DemuxerHandle.self, demuxer, "mk_decode_session_estimate_frames") else { return MK_EINVAL }
    guard let first, let end, let count else { return fail(MK_EINVAL, "mk_decode_session_estimate_frames: an output pointer is NULL") }
    guard h.track != nil else {
        return fail(MK_EINVAL, "mk_decode_session_estimate_frames: the decoder was opened from codec parameters; it has no track to index")
    }
    return guarded {
        let e = try h.session.estimatedFrames(from: dh.demuxer)
        (first.pointee, end.pointee, count.pointee) = (e.first, e.end, Int64(e.count))
        return MK_OK
    }
}

@_cdecl("mk_decode_default_settings")
public func mk_decode_default_settings(_ s: UnsafeMutablePointer<mk_decode_settings>?) {
    guard let s else { return }
    s.pointee = mk_decode_settings(struct_size: UInt32(MemoryLayout<mk_decode_settings>.size), video_layout: MK_PACK_NV12,
                                   audio_layout: MK_PACK_S16, wav: 0, y4m: 0, trim: 1, autorotate: 1, threads: 0, backend: nil,
                                   progress: nil, progress_user: nil, sample_format: 0, sample_rate: 0, channels: 0, channel_mask: 0,
                                   resample_quality: MK_RESAMPLE_MEDIUM, seek_seconds: -1, max_video_frames: 0, max_audio_seconds: 0,
                                   async_video: 0, reserved: 0, full_range: 0)
}

/// mk-decode's audio and range choices of mk_decode_settings applied to `o`. Throws
/// `.invalidArgument` naming a bad field.
private func applyDecodeChoices(_ s: mk_decode_settings, to o: inout FileDecodeOptions) throws {
    if s.sample_format != 0 || s.sample_rate != 0 || s.channels != 0 || s.channel_mask != 0 {
        // The output format as the converters read one: 0 rate or channels keep the source's.
        var f = mk_audio_format(struct_size: UInt32(MemoryLayout<mk_audio_format>.size), sample_format: s.sample_format == 0 ? MK_SAMPLES_S16 : s.sample_format,
                                sample_rate: s.sample_rate, channels: s.channels, channel_mask: s.channel_mask)
        let r = try request(&f, "mk_decode_settings audio", open: true)
        guard !r.planar else { throw MediaError(.invalidArgument, "mk_decode_settings.sample_format \(s.sample_format) is planar; files are written interleaved") }
        if s.sample_format != 0 {
            o.sampleType = r.sampleType
            o.sampleFormat = r.sampleType == .f32 ? .f32 : .s16
        }
        o.sampleRate = r.sampleRate
        o.channelLayout = r.layout
    }
    o.resampleQuality = try resampleQuality(s.resample_quality)
    if s.seek_seconds >= 0 || s.seek_seconds.isNaN { o.seek = s.seek_seconds }
    guard s.max_video_frames >= 0 else { throw MediaError(.invalidArgument, "mk_decode_settings.max_video_frames \(s.max_video_frames) is negative") }
    if s.max_video_frames > 0 { o.maxVideoFrames = Int(s.max_video_frames) }
    guard s.max_audio_seconds >= 0, s.max_audio_seconds.isFinite else {
        throw MediaError(.invalidArgument, "mk_decode_settings.max_audio_seconds \(s.max_audio_seconds) is not a duration")
    }
    if s.max_audio_seconds > 0 { o.maxAudioDuration = s.max_audio_seconds }
    o.asyncVideo = s.async_video != 0
    o.keepsFullRange = s.full_range != 0
}

@_cdecl("mk_decode_file")
public func mk_decode_file(_ path: UnsafePointer<CChar>?, _ audioOut: UnsafePointer<CChar>?, _ videoOut: UnsafePointer<CChar>?,
                           _ settings: UnsafePointer<mk_decode_settings>?) -> Int32 {
    guard let path else { return fail(MK_EINVAL, "mk_decode_file: path is NULL") }
    guard audioOut != nil || videoOut != nil else { return fail(MK_EINVAL, "mk_decode_file: give an audio or a video output (both are NULL)") }
    var s = mk_decode_settings()
    mk_decode_default_settings(&s)
    if let settings {
        // The 0.1 struct ended at `backend`; the progress fields keep their defaults for it.
        guard sizeOK(settings.pointee.struct_size, MemoryLayout<mk_decode_settings>.offset(of: \mk_decode_settings.progress)!, "mk_decode_settings") else { return MK_EINVAL }
        s = copyIn(s, from: settings, size: settings.pointee.struct_size)
        // The struct up to async_video ends in padding where full_range now is: read it only from a struct that has it.
        if Int(settings.pointee.struct_size) < MemoryLayout<mk_decode_settings>.offset(of: \mk_decode_settings.full_range)! + 4 { s.full_range = 0 }
    }
    guard let pixelFormat = FramePipelines.pictureLayouts[s.video_layout] else {
        return fail(MK_EINVAL, "mk_decode_file: video_layout \(s.video_layout) is not a picture layout (MK_PACK_NV12, MK_PACK_I420, MK_PACK_RGB24 ... MK_PACK_P010)")
    }
    guard s.audio_layout == MK_PACK_S16 || s.audio_layout == MK_PACK_F32 else { return fail(MK_EINVAL, "mk_decode_file: audio_layout \(s.audio_layout) is not MK_PACK_S16 or MK_PACK_F32") }
    var o = FileDecodeOptions(audioPath: audioOut.map { String(cString: $0) }, videoPath: videoOut.map { String(cString: $0) })
    o.pixelFormat = pixelFormat
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
    let relay = ProgressRelay(s.progress, s.progress_user)
    return relay.guarded("mk_decode_file") {
        try applyDecodeChoices(s, to: &o)
        let result = try FileDecoder.decode(path: String(cString: path), options: o) { seconds, total in
            try relay.check(fraction: total > 0 ? seconds / total : 0, done: Int64((seconds * 1000).rounded()), total: Int64((total * 1000).rounded()))
        }
        if let cut = result.truncation { return fail(MK_ETRUNCATED, cut.description) }   // the outputs are written
        return MK_OK
    }
}

// MARK: - The names before 0.2 (deprecated in the header; still exported, the same ABI)
//
// mk_decoder_* was renamed mk_decode_session_* so that one name means one thing in Swift
// (DecodeSession), C and Python. The old symbols stay for one release: programs built against
// them keep running.

@_cdecl("mk_decoder_default_settings")
public func mk_decoder_default_settings(_ s: UnsafeMutablePointer<mk_decode_session_settings>?) {
    mk_decode_session_default_settings(s)
}

@_cdecl("mk_decoder_open")
public func mk_decoder_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ demuxer: OpaquePointer?, _ track: Int32,
                            _ settings: UnsafePointer<mk_decode_session_settings>?) -> Int32 {
    mk_decode_session_open(out, demuxer, track, settings)
}

@_cdecl("mk_decoder_open_params")
public func mk_decoder_open_params(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ params: UnsafePointer<mk_codec_params>?,
                                   _ settings: UnsafePointer<mk_decode_session_settings>?) -> Int32 {
    mk_decode_session_open_params(out, params, settings)
}

@_cdecl("mk_decoder_close")
public func mk_decoder_close(_ decoder: UnsafeMutablePointer<OpaquePointer?>?) {
    mk_decode_session_close(decoder)
}

@_cdecl("mk_decoder_send_packet")
public func mk_decoder_send_packet(_ d: OpaquePointer?, _ packet: OpaquePointer?) -> Int32 {
    mk_decode_session_send_packet(d, packet)
}

@_cdecl("mk_decoder_receive_frame")
public func mk_decoder_receive_frame(_ d: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    mk_decode_session_receive_frame(d, out)
}

@_cdecl("mk_decoder_reset")
public func mk_decoder_reset(_ d: OpaquePointer?) -> Int32 {
    mk_decode_session_reset(d)
}

@_cdecl("mk_decoder_seek")
public func mk_decoder_seek(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ seconds: Double) -> Int32 {
    mk_decode_session_seek(d, demuxer, seconds)
}

@_cdecl("mk_decoder_frame_index")
public func mk_decoder_frame_index(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ pts: UnsafeMutablePointer<Int64>?,
                                   _ isKey: UnsafeMutablePointer<Int32>?, _ capacity: Int64, _ count: UnsafeMutablePointer<Int64>?) -> Int32 {
    mk_decode_session_frame_index(d, demuxer, pts, isKey, capacity, count)
}

@_cdecl("mk_decoder_set_frame_index")
public func mk_decoder_set_frame_index(_ d: OpaquePointer?, _ pts: UnsafePointer<Int64>?, _ isKey: UnsafePointer<Int32>?,
                                       _ count: Int64) -> Int32 {
    mk_decode_session_set_frame_index(d, pts, isKey, count)
}

@_cdecl("mk_decoder_frames_at")
public func mk_decoder_frames_at(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ indices: UnsafePointer<Int64>?, _ count: Int64,
                                 _ callback: FrameCallback?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    mk_decode_session_frames_at(d, demuxer, indices, count, callback, user)
}

@_cdecl("mk_decoder_frames_at_pts")
public func mk_decoder_frames_at_pts(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ pts: UnsafePointer<Int64>?, _ count: Int64,
                                     _ callback: FrameCallback?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    mk_decode_session_frames_at_pts(d, demuxer, pts, count, callback, user)
}

@_cdecl("mk_decoder_estimate_frames")
public func mk_decoder_estimate_frames(_ d: OpaquePointer?, _ demuxer: OpaquePointer?, _ first: UnsafeMutablePointer<Int64>?,
                                       _ end: UnsafeMutablePointer<Int64>?, _ count: UnsafeMutablePointer<Int64>?) -> Int32 {
    mk_decode_session_estimate_frames(d, demuxer, first, end, count)
}
