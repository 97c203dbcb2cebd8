// mk_compression_session: MediaKit's CompressionSession (asynchronous encoding, packets through a
// callback on the session's own queue) for C.
import CMediaKit
import Foundation
import MediaKit

/// The C callbacks and the caller's pointer, copied at mk_compression_session_open.
private struct CompressionCallbacks: @unchecked Sendable {
    let c: mk_compression_session_callbacks
    let user: UnsafeMutableRawPointer?
}

/// The error that stopped a session, as its handler heard it (complete_frames returns it).
private final class FailureBox: @unchecked Sendable {
    private let lock = NSLock()
    private var error: MediaError?
    var value: MediaError? { lock.withLock { error } }
    func set(_ e: MediaError) { lock.withLock { if error == nil { error = e } } }
}

/// A compression session as C sees it: the Swift session, the error that stopped it, and the
/// codec name and cookie that mk_compression_session_get_params lends out.
final class CompressionSessionHandle: NamedHandle {
    static let kind = "compression session"
    let session: CompressionSession
    fileprivate let failure: FailureBox
    let codecName: [CChar]
    var cookie: [UInt8] = []

    fileprivate init(_ session: CompressionSession, failure: FailureBox) {
        self.session = session
        self.failure = failure
        codecName = Array(session.parameters.codec.rawValue.utf8CString)
    }

    deinit { session.invalidate() }
}

@_cdecl("mk_compression_session_open")
public func mk_compression_session_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ settings: UnsafePointer<mk_video_encoder_settings>?,
                                        _ callbacks: UnsafePointer<mk_compression_session_callbacks>?,
                                        _ user: UnsafeMutableRawPointer?) -> Int32 {
    let function = "mk_compression_session_open"
    guard let out else { return fail(MK_EINVAL, "\(function): out is NULL") }
    out.pointee = nil
    guard let callbacks else { return fail(MK_EINVAL, "\(function): callbacks is NULL") }
    guard sizeOK(callbacks.pointee.struct_size, MemoryLayout<mk_compression_session_callbacks>.size, "mk_compression_session_callbacks") else {
        return MK_EINVAL
    }
    guard callbacks.pointee.packet != nil else { return fail(MK_EINVAL, "\(function): callbacks->packet is NULL (it is required)") }
    let cb = CompressionCallbacks(c: callbacks.pointee, user: user)
    let failure = FailureBox()
    return guarded {
        let (s, format, _) = try videoEncoderSettings(settings, function)
        let session = try CompressionSession(s, output: format) { result in
            switch result {
            case .success(let packet):
                cb.c.packet?(cb.user, Handles.make(PacketHandle(packet)))
            case .failure(let e):
                failure.set(e)
                if cb.c.error != nil {
                    let message = CString(e.description)
                    withExtendedLifetime(message) { cb.c.error?(cb.user, status(for: e), message.pointer) }
                }
            }
        }
        out.pointee = Handles.make(CompressionSessionHandle(session, failure: failure))
        return MK_OK
    }
}

@_cdecl("mk_compression_session_get_params")
public func mk_compression_session_get_params(_ handle: OpaquePointer?, _ params: UnsafeMutablePointer<mk_codec_params>?) -> Int32 {
    guard let h = liveHandle(CompressionSessionHandle.self, handle, "mk_compression_session_get_params") else { return MK_EINVAL }
    let s = h.session
    h.cookie = s.parameters.extradata
    return codedParams(s.parameters, timeBase: s.timeBase, reorderDelay: s.reorderDelay, codecName: h.codecName, cookie: h.cookie,
                       into: params, "mk_compression_session_get_params")
}

@_cdecl("mk_compression_session_encode_frame")
public func mk_compression_session_encode_frame(_ handle: OpaquePointer?, _ f: OpaquePointer?, _ pts: Int64, _ flags: Int32) -> Int32 {
    let function = "mk_compression_session_encode_frame"
    guard let h = liveHandle(CompressionSessionHandle.self, handle, function) else { return MK_EINVAL }
    guard let frame = liveHandle(FrameHandle.self, f, function)?.frame else { return MK_EINVAL }
    guard flags & ~MK_ENCODE_FORCE_KEYFRAME == 0 else { return fail(MK_EINVAL, "\(function): unknown flags \(flags)") }
    let at = pts != Packet.noTimestamp ? pts : Rational.rescale(frame.pts, from: frame.timeBase, to: h.session.output.timeBase)
    return guarded {
        try h.session.encodeFrame(frame, pts: at, forceKeyFrame: flags & MK_ENCODE_FORCE_KEYFRAME != 0)
        return MK_OK
    }
}

@_cdecl("mk_compression_session_encode_planes")
public func mk_compression_session_encode_planes(_ handle: OpaquePointer?, _ format: Int32, _ planes: UnsafePointer<UnsafePointer<UInt8>?>?,
                                                 _ strides: UnsafePointer<Int64>?, _ pts: Int64, _ flags: Int32) -> Int32 {
    let function = "mk_compression_session_encode_planes"
    guard let h = liveHandle(CompressionSessionHandle.self, handle, function) else { return MK_EINVAL }
    guard pts != Packet.noTimestamp else { return fail(MK_EINVAL, "\(function): pts is MK_NOPTS_VALUE; give each picture's time") }
    return guarded {
        let frame = try callerPicture(format, planes, strides, flags, output: h.session.output, pts: pts, function)
        try h.session.encodeFrame(frame, pts: pts, forceKeyFrame: flags & MK_ENCODE_FORCE_KEYFRAME != 0)
        return MK_OK
    }
}

@_cdecl("mk_compression_session_complete_frames")
public func mk_compression_session_complete_frames(_ handle: OpaquePointer?, _ untilPTS: Int64) -> Int32 {
    guard let h = liveHandle(CompressionSessionHandle.self, handle, "mk_compression_session_complete_frames") else { return MK_EINVAL }
    h.session.completeFrames(untilPresentationTimeStamp: untilPTS == Packet.noTimestamp ? nil : untilPTS)
    if let e = h.failure.value { return fail(e) }
    return MK_OK
}

@_cdecl("mk_compression_session_flush")
public func mk_compression_session_flush(_ handle: OpaquePointer?) -> Int32 {
    guard liveHandle(CompressionSessionHandle.self, handle, "mk_compression_session_flush") != nil else { return MK_EINVAL }
    return mk_compression_session_complete_frames(handle, Packet.noTimestamp)
}

@_cdecl("mk_compression_session_close")
public func mk_compression_session_close(_ handle: UnsafeMutablePointer<OpaquePointer?>?) {
    if let h = Handles.get(handle?.pointee, as: CompressionSessionHandle.self) {
        h.session.invalidate()   // no callback runs once this returns, whoever else still holds the handle
    }
    Handles.release(handle, as: CompressionSessionHandle.self)
}
