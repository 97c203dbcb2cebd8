// mk_writer: MediaKit's AssetWriter for C.
import CMediaKit
import Foundation
import MediaKit

/// A writer as C sees it: the Swift writer and the PCM format mk_writer_write_audio takes.
final class WriterHandle: NamedHandle {
    static let kind = "writer"
    let writer: AssetWriter
    let audioInput: AudioFormat?
    /// The failure's message mk_writer_get_status lends out.
    var failureMessage: CString?

    init(_ writer: AssetWriter, audioInput: AudioFormat?) {
        self.writer = writer
        self.audioInput = audioInput
    }

    /// Runs `body`; an error other than a bad argument cancels the writer (nothing is left
    /// under its path), as the Swift writer does for its own errors.
    func guardedWrite(_ body: () throws -> Void) -> mk_status {
        guarded {
            try body()
            return MK_OK
        }
    }
}

@_cdecl("mk_writer_default_settings")
public func mk_writer_default_settings(_ s: UnsafeMutablePointer<mk_writer_settings>?) {
    guard let s else { return }
    s.pointee = mk_writer_settings(struct_size: UInt32(MemoryLayout<mk_writer_settings>.size), video: nil, audio: nil, audio_input: nil)
}

@_cdecl("mk_writer_open")
public func mk_writer_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?,
                           _ settings: UnsafePointer<mk_writer_settings>?) -> Int32 {
    let function = "mk_writer_open"
    guard let out else { return fail(MK_EINVAL, "\(function): out is NULL") }
    out.pointee = nil
    guard let path else { return fail(MK_EINVAL, "\(function): path is NULL") }
    guard let settings else { return fail(MK_EINVAL, "\(function): settings is NULL") }
    guard sizeOK(settings.pointee.struct_size, MemoryLayout<mk_writer_settings>.size, "mk_writer_settings") else { return MK_EINVAL }
    let s = settings.pointee
    return guarded {
        var video: AssetWriter.VideoSettings?
        if let v = s.video {
            let (e, f, timeBaseGiven) = try videoEncoderSettings(v, function)
            guard f.frameRate.numerator > 0 else {
                throw MediaError(.invalidArgument, "\(function): the video settings need a frame rate (frame_rate_num/den)")
            }
            var vs = AssetWriter.VideoSettings(e, width: f.width, height: f.height, frameRate: f.frameRate,
                                               timeBase: timeBaseGiven ? f.timeBase : nil)
            vs.pixelFormat = v.pointee.pixel_format == 0 ? nil : f.pixelFormat
            video = vs
        }
        var audio: AssetWriter.AudioSettings?
        var input: AudioFormat?
        if let a = s.audio {
            let (e, rate, channels, copyVideo, relay) = try encoderSettings(a, codec: nil, function)
            if copyVideo || relay.isSet {
                throw MediaError(.invalidArgument, "\(function): copy_video and progress are mk_transcode's settings")
            }
            let src = try request(s.audio_input, "audio input", open: false)
            let pcm = AudioFormat(src.sampleType, planar: src.planar, sampleRate: src.sampleRate!, layout: src.layout!)
            audio = AssetWriter.AudioSettings(e, input: pcm, sampleRate: rate, channels: channels)
            input = pcm
        }
        let writer = try AssetWriter(path: String(cString: path), video: video, audio: audio)
        out.pointee = Handles.make(WriterHandle(writer, audioInput: input))
        return MK_OK
    }
}

@_cdecl("mk_writer_write_video_planes")
public func mk_writer_write_video_planes(_ w: OpaquePointer?, _ format: Int32, _ planes: UnsafePointer<UnsafePointer<UInt8>?>?,
                                         _ strides: UnsafePointer<Int64>?, _ pts: Int64, _ flags: Int32) -> Int32 {
    let function = "mk_writer_write_video_planes"
    guard let h = liveHandle(WriterHandle.self, w, function) else { return MK_EINVAL }
    guard let video = h.writer.video else { return fail(MK_ESTATE, "\(function): the writer has no video track") }
    return guarded {
        let frame = try callerPicture(format, planes, strides, flags, output: video.output, pts: pts, function)
        try h.writer.appendVideo(frame, forceKeyFrame: flags & MK_ENCODE_FORCE_KEYFRAME != 0)
        return MK_OK
    }
}

@_cdecl("mk_writer_write_video_frame")
public func mk_writer_write_video_frame(_ w: OpaquePointer?, _ f: OpaquePointer?, _ flags: Int32) -> Int32 {
    let function = "mk_writer_write_video_frame"
    guard let h = liveHandle(WriterHandle.self, w, function) else { return MK_EINVAL }
    guard let frame = liveHandle(FrameHandle.self, f, function)?.frame else { return MK_EINVAL }
    guard flags & ~MK_ENCODE_FORCE_KEYFRAME == 0 else { return fail(MK_EINVAL, "\(function): unknown flags \(flags)") }
    return h.guardedWrite { try h.writer.appendVideo(frame, forceKeyFrame: flags & MK_ENCODE_FORCE_KEYFRAME != 0) }
}

@_cdecl("mk_writer_write_audio")
public func mk_writer_write_audio(_ w: OpaquePointer?, _ planes: UnsafePointer<UnsafeRawPointer?>?, _ frames: Int32) -> Int32 {
    let function = "mk_writer_write_audio"
    guard let h = liveHandle(WriterHandle.self, w, function) else { return MK_EINVAL }
    guard let source = h.audioInput else { return fail(MK_ESTATE, "\(function): the writer has no audio track") }
    guard frames >= 0 else { return fail(MK_EINVAL, "\(function): frames \(frames) is negative") }
    if frames == 0 { return MK_OK }
    guard let planes else { return fail(MK_EINVAL, "\(function): planes is NULL") }
    let bytes = Int(truncatingIfNeeded: frames) * source.bytesPerFrame
    var copies: [[UInt8]] = []
    for p in 0..<source.planeCount {
        guard let ptr = planes[p] else { return fail(MK_EINVAL, "\(function): plane \(p) is NULL") }
        copies.append(Array(UnsafeRawBufferPointer(start: ptr, count: bytes)))
    }
    return h.guardedWrite {
        try h.writer.appendAudio(AudioBuffer(format: source, frames: Int(truncatingIfNeeded: frames), planes: copies))
    }
}

@_cdecl("mk_writer_finish")
public func mk_writer_finish(_ w: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(WriterHandle.self, w, "mk_writer_finish") else { return MK_EINVAL }
    return h.guardedWrite { try h.writer.finish() }
}

@_cdecl("mk_writer_cancel")
public func mk_writer_cancel(_ w: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(WriterHandle.self, w, "mk_writer_cancel") else { return MK_EINVAL }
    h.writer.cancel()
    return MK_OK
}

@_cdecl("mk_writer_get_status")
public func mk_writer_get_status(_ w: OpaquePointer?, _ status: UnsafeMutablePointer<mk_asset_status>?) -> Int32 {
    guard let h = liveHandle(WriterHandle.self, w, "mk_writer_get_status") else { return MK_EINVAL }
    guard let status else { return fail(MK_EINVAL, "mk_writer_get_status: status is NULL") }
    guard sizeOK(status.pointee.struct_size, MemoryLayout<mk_asset_status>.size, "mk_asset_status") else { return MK_EINVAL }
    if let e = h.writer.error, h.failureMessage == nil { h.failureMessage = CString(e.description) }
    status.pointee = assetStatus(h.writer.status, h.writer.error, h.failureMessage, size: status.pointee.struct_size)
    return MK_OK
}

@_cdecl("mk_writer_end_track")
public func mk_writer_end_track(_ w: OpaquePointer?, _ mediaType: Int32) -> Int32 {
    guard let h = liveHandle(WriterHandle.self, w, "mk_writer_end_track") else { return MK_EINVAL }
    switch mediaType {
    case MK_MEDIA_VIDEO where h.writer.video != nil: h.writer.markVideoAsFinished()
    case MK_MEDIA_AUDIO where h.writer.audio != nil: h.writer.markAudioAsFinished()
    default:
        return fail(MK_EINVAL, "mk_writer_end_track: media_type \(mediaType) is not a track of this writer (MK_MEDIA_VIDEO or MK_MEDIA_AUDIO, as opened)")
    }
    return MK_OK
}

@_cdecl("mk_writer_close")
public func mk_writer_close(_ w: UnsafeMutablePointer<OpaquePointer?>?) {
    if let w, let h = Handles.get(w.pointee, as: WriterHandle.self) { h.writer.cancel() }
    Handles.release(w, as: WriterHandle.self)
}
