// mk_async_decode_session (formerly mk_session): an AsyncDecodeSession as C sees it (decoding on a thread the library owns,
// frames pulled or delivered through callbacks on the session's serial queue).
import CMediaKit
import Foundation
import MediaKit

/// A C caller's pointer, passed back to its callbacks on the session's queue.
private struct UserPointer: @unchecked Sendable {
    let raw: UnsafeMutableRawPointer?
}

/// The C callbacks, copied at mk_async_decode_session_start.
private struct CCallbacks: @unchecked Sendable {
    let c: mk_async_decode_session_callbacks
    let user: UserPointer
}

/// A session handle: the Swift session and the queue its callbacks run on.
final class SessionHandle {
    let session: AsyncDecodeSession
    /// Where callbacks run: a serial queue of the library's.
    let queue = DispatchQueue(label: "mediakit.session-callbacks")

    /// The messages mk_async_decode_session_get_recovery handed out, by recovery index: borrowed by the
    /// caller until the session is closed.
    private var messages: [Int: CString] = [:]   // under `lock`
    private let lock = NSLock()

    /// The demuxer track a session made with mk_async_decode_session_open_packets decodes (its
    /// packets must be of that track); nil for the other sessions.
    let packetTrack: Int?

    init(session: AsyncDecodeSession, packetTrack: Int? = nil) {
        self.session = session
        self.packetTrack = packetTrack
        queue.setSpecific(key: Self.ownQueue, value: ObjectIdentifier(self))
    }

    /// Marks ``queue`` with the handle's identity: a call from one of its callbacks must not
    /// wait for the queue it runs on (libdispatch stops the process on such a `sync`).
    private static let ownQueue = DispatchSpecificKey<ObjectIdentifier>()
    /// True inside one of this session's callbacks.
    var inCallback: Bool { DispatchQueue.getSpecific(key: Self.ownQueue) == ObjectIdentifier(self) }

    /// Recovery `index`'s message as a C string that lives as long as the handle.
    func message(_ index: Int, _ text: () -> String) -> CString {
        lock.withLock {
            if let m = messages[index] { return m }
            let m = CString(text())
            messages[index] = m
            return m
        }
    }

    deinit { session.cancel() }
}

extension SessionHandle: NamedHandle { static var kind: String { "session" } }

@_cdecl("mk_async_decode_session_default_settings")
public func mk_async_decode_session_default_settings(_ s: UnsafeMutablePointer<mk_async_decode_session_settings>?) {
    guard let s else { return }
    let policy = DecodeSession.RecoveryPolicy()
    s.pointee = mk_async_decode_session_settings(struct_size: UInt32(MemoryLayout<mk_async_decode_session_settings>.size), backend: nil, threads: 0,
                                    trim: MK_TRIM_GAPLESS, recovery: policy.enabled ? 1 : 0,
                                    max_failed_packets: Int32(policy.maxFailedPackets), max_rebuilds: Int32(policy.maxRebuilds), queue_frames: 8)
}

/// The checked settings of an open call (defaults for NULL), nil after recording the error.
private func sessionSettings(_ settings: UnsafePointer<mk_async_decode_session_settings>?, _ function: String)
    -> (settings: mk_async_decode_session_settings, trim: TrimMode, policy: DecodeSession.RecoveryPolicy)? {
    var s = mk_async_decode_session_settings()
    mk_async_decode_session_default_settings(&s)
    if let settings {
        guard sizeOK(settings.pointee.struct_size, MemoryLayout<mk_async_decode_session_settings>.size, "mk_async_decode_session_settings") else { return nil }
        s = settings.pointee
    }
    guard let trim = trimMode(s.trim) else {
        _ = fail(MK_EINVAL, "\(function): trim \(s.trim) is not MK_TRIM_NONE, MK_TRIM_GAPLESS or MK_TRIM_FFMPEG")
        return nil
    }
    guard s.queue_frames >= 1 else {
        _ = fail(MK_EINVAL, "\(function): queue_frames is \(s.queue_frames); at least 1 frame must be able to wait")
        return nil
    }
    guard s.max_failed_packets >= 0, s.max_rebuilds >= 0, s.threads >= 0 else {
        _ = fail(MK_EINVAL, "\(function): a negative max_failed_packets (\(s.max_failed_packets)), max_rebuilds (\(s.max_rebuilds)) or threads (\(s.threads))")
        return nil
    }
    var policy = DecodeSession.RecoveryPolicy()
    policy.enabled = s.recovery != 0
    policy.maxFailedPackets = Int(s.max_failed_packets)
    policy.maxRebuilds = Int(s.max_rebuilds)
    return (s, trim, policy)
}

@_cdecl("mk_async_decode_session_open")
public func mk_async_decode_session_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ demuxer: OpaquePointer?, _ track: Int32,
                            _ settings: UnsafePointer<mk_async_decode_session_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_async_decode_session_open: out is NULL") }
    out.pointee = nil
    guard demuxerTrack(demuxer, track, "mk_async_decode_session_open") != nil,
          let dh = liveHandle(DemuxerHandle.self, demuxer, "mk_async_decode_session_open") else { return MK_EINVAL }
    guard let checked = sessionSettings(settings, "mk_async_decode_session_open") else { return MK_EINVAL }
    let (s, trim, policy) = checked
    return guarded {
        let session = try AsyncDecodeSession(demuxer: dh.demuxer, track: Int(track), backend: s.backend.map { String(cString: $0) },
                                             threads: Int(s.threads), trim: trim, recovery: policy, bufferLimit: Int(s.queue_frames))
        out.pointee = Handles.make(SessionHandle(session: session))
        return MK_OK
    }
}

/// A session for the caller's packets of `track`.
private func openPacketSession(_ out: UnsafeMutablePointer<OpaquePointer?>, _ track: Track, packetTrack: Int?,
                               _ settings: UnsafePointer<mk_async_decode_session_settings>?, _ function: String) -> Int32 {
    guard let checked = sessionSettings(settings, function) else { return MK_EINVAL }
    let (s, trim, policy) = checked
    return guarded {
        let session = try AsyncDecodeSession(track: track, backend: s.backend.map { String(cString: $0) }, threads: Int(s.threads),
                                             trim: trim, recovery: policy, bufferLimit: Int(s.queue_frames), packetLimit: Int(s.queue_frames))
        out.pointee = Handles.make(SessionHandle(session: session, packetTrack: packetTrack))
        return MK_OK
    }
}

@_cdecl("mk_async_decode_session_open_packets")
public func mk_async_decode_session_open_packets(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ demuxer: OpaquePointer?, _ track: Int32,
                                                 _ settings: UnsafePointer<mk_async_decode_session_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_async_decode_session_open_packets: out is NULL") }
    out.pointee = nil
    guard let t = demuxerTrack(demuxer, track, "mk_async_decode_session_open_packets") else { return MK_EINVAL }
    return openPacketSession(out, t, packetTrack: Int(track), settings, "mk_async_decode_session_open_packets")
}

@_cdecl("mk_async_decode_session_open_params")
public func mk_async_decode_session_open_params(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ params: UnsafePointer<mk_codec_params>?,
                                                _ settings: UnsafePointer<mk_async_decode_session_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_async_decode_session_open_params: out is NULL") }
    out.pointee = nil
    guard let t = paramsTrack(params, "mk_async_decode_session_open_params") else { return MK_EINVAL }
    return openPacketSession(out, t, packetTrack: nil, settings, "mk_async_decode_session_open_params")
}

@_cdecl("mk_async_decode_session_decode")
public func mk_async_decode_session_decode(_ handle: OpaquePointer?, _ packet: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(SessionHandle.self, handle, "mk_async_decode_session_decode") else { return MK_EINVAL }
    var p: Packet?
    if let packet {
        guard let ph = liveHandle(PacketHandle.self, packet, "mk_async_decode_session_decode") else { return MK_EINVAL }
        var copy = ph.packet
        if let track = h.packetTrack {
            guard copy.trackIndex == track else {
                return fail(MK_EINVAL, "mk_async_decode_session_decode: the packet is from track \(copy.trackIndex), the session decodes track \(track)")
            }
        } else {
            copy.trackIndex = h.session.track.index
            copy.timeBase = h.session.track.timeBase
        }
        p = copy
    }
    return guarded {
        do {
            if let p { try h.session.decode(p) } else { try h.session.finish() }
        } catch let e as MediaError where e.kind == .state {
            throw MediaError(.state, "mk_async_decode_session_decode: \(e.message)")
        }
        return MK_OK
    }
}

@_cdecl("mk_async_decode_session_wait_frames")
public func mk_async_decode_session_wait_frames(_ handle: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(SessionHandle.self, handle, "mk_async_decode_session_wait_frames") else { return MK_EINVAL }
    if h.inCallback {
        return fail(MK_ESTATE, "mk_async_decode_session_wait_frames: called from one of the session's callbacks, which it would wait for")
    }
    h.session.waitForAsynchronousFrames()
    return MK_OK
}

@_cdecl("mk_async_decode_session_start")
public func mk_async_decode_session_start(_ handle: OpaquePointer?, _ callbacks: UnsafePointer<mk_async_decode_session_callbacks>?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let h = liveHandle(SessionHandle.self, handle, "mk_async_decode_session_start") else { return MK_EINVAL }
    guard let callbacks else { return fail(MK_EINVAL, "mk_async_decode_session_start: callbacks is NULL") }
    guard sizeOK(callbacks.pointee.struct_size, MemoryLayout<mk_async_decode_session_callbacks>.size, "mk_async_decode_session_callbacks") else { return MK_EINVAL }
    guard callbacks.pointee.frame != nil else { return fail(MK_EINVAL, "mk_async_decode_session_start: callbacks->frame is NULL (it is required)") }
    let cb = CCallbacks(c: callbacks.pointee, user: UserPointer(raw: user))
    let onFrame: @Sendable (Frame) -> Void = { frame in
        cb.c.frame?(cb.user.raw, Handles.make(FrameHandle(frame)))
    }
    var onRecovery: (@Sendable (DecodeSession.Recovery) -> Void)?
    if cb.c.recovery != nil {
        onRecovery = { r in
            let message = CString(r.error.description)
            var info = recoveryInfo(r, message)
            withExtendedLifetime(message) { cb.c.recovery?(cb.user.raw, &info) }
        }
    }
    var onError: (@Sendable (Error) -> Void)?
    if cb.c.error != nil {
        onError = { error in
            let e = error as? MediaError ?? MediaError(.backend, "\(error)")
            let message = CString(e.description)
            withExtendedLifetime(message) { cb.c.error?(cb.user.raw, status(for: e), message.pointer) }
        }
    }
    var onEnd: (@Sendable () -> Void)?
    if cb.c.end != nil {
        onEnd = { cb.c.end?(cb.user.raw) }
    }
    return guarded {
        try h.session.start(on: h.queue, frame: onFrame, recovery: onRecovery, error: onError, end: onEnd)
        return MK_OK
    }
}

/// The C form of recovery `r`, its message pointing into `message` (which must outlive it).
private func recoveryInfo(_ r: DecodeSession.Recovery, _ message: CString) -> mk_recovery_info {
    var info = mk_recovery_info()
    info.struct_size = UInt32(MemoryLayout<mk_recovery_info>.size)
    info.pts = r.pts
    info.position = r.position
    info.rebuilt = r.rebuilt ? 1 : 0
    info.frames_lost = Int32(clamping: r.framesLost)
    info.status = status(for: r.error)
    info.message = UnsafePointer(message.pointer)
    return info
}

@_cdecl("mk_async_decode_session_get_recovery")
public func mk_async_decode_session_get_recovery(_ handle: OpaquePointer?, _ index: Int32, _ out: UnsafeMutablePointer<mk_recovery_info>?) -> Int32 {
    guard let h = liveHandle(SessionHandle.self, handle, "mk_async_decode_session_get_recovery") else { return MK_EINVAL }
    guard let out else { return fail(MK_EINVAL, "mk_async_decode_session_get_recovery: info is NULL") }
    guard sizeOK(out.pointee.struct_size, MemoryLayout<mk_recovery_info>.size, "mk_recovery_info") else { return MK_EINVAL }
    let recoveries = h.session.recoveries
    guard index >= 0, Int(index) < recoveries.count else {
        return fail(MK_EINVAL, "mk_async_decode_session_get_recovery: index \(index) is out of range (the session made \(recoveries.count) recoveries)")
    }
    let r = recoveries[Int(index)]
    let message = h.message(Int(index)) { r.error.description }
    var info = recoveryInfo(r, message)
    info.struct_size = out.pointee.struct_size
    copyOut(info, to: out, size: info.struct_size)
    return MK_OK
}

@_cdecl("mk_async_decode_session_read_frame")
public func mk_async_decode_session_read_frame(_ handle: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_async_decode_session_read_frame: out is NULL") }
    out.pointee = nil
    guard let h = liveHandle(SessionHandle.self, handle, "mk_async_decode_session_read_frame") else { return MK_EINVAL }
    do {
        guard let frame = try h.session.nextFrame() else { return MK_EOF }
        out.pointee = Handles.make(FrameHandle(frame))
        return MK_OK
    } catch is CancellationError {
        return fail(MK_ESTATE, "mk_async_decode_session_read_frame: the session was closed")
    } catch {
        return fail(error)
    }
}

@_cdecl("mk_async_decode_session_seek")
public func mk_async_decode_session_seek(_ handle: OpaquePointer?, _ seconds: Double) -> Int32 {
    guard let h = liveHandle(SessionHandle.self, handle, "mk_async_decode_session_seek") else { return MK_EINVAL }
    return guarded {
        try h.session.seek(to: seconds)
        return MK_OK
    }
}

@_cdecl("mk_async_decode_session_flush")
public func mk_async_decode_session_flush(_ handle: OpaquePointer?, _ completion: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?,
                             _ user: UnsafeMutableRawPointer?) -> Int32 {
    guard let h = liveHandle(SessionHandle.self, handle, "mk_async_decode_session_flush") else { return MK_EINVAL }
    let u = UserPointer(raw: user)
    h.session.flush { completion?(u.raw) }
    return MK_OK
}

@_cdecl("mk_async_decode_session_get_stats")
public func mk_async_decode_session_get_stats(_ handle: OpaquePointer?, _ stats: UnsafeMutablePointer<mk_async_decode_session_stats>?) -> Int32 {
    guard let h = liveHandle(SessionHandle.self, handle, "mk_async_decode_session_get_stats") else { return MK_EINVAL }
    guard let stats else { return fail(MK_EINVAL, "mk_async_decode_session_get_stats: stats is NULL") }
    // The struct of 0.1 ended at `warnings`: a caller built against it gets those fields.
    let size = stats.pointee.struct_size
    guard sizeOK(size, MemoryLayout<mk_async_decode_session_stats>.offset(of: \.packets)!, "mk_async_decode_session_stats") else { return MK_EINVAL }
    let recoveries = h.session.recoveries
    var st = mk_async_decode_session_stats()
    st.struct_size = size
    st.frames = Int64(h.session.framesDelivered)
    st.recoveries = Int32(clamping: recoveries.count)
    st.rebuilds = Int32(clamping: h.session.rebuilds)
    st.frames_lost = Int32(clamping: recoveries.reduce(0) { $0 + $1.framesLost })
    st.warnings = Int32(clamping: h.session.warnings.count)
    st.packets = Int64(h.session.packetsSent)
    st.invalidations = Int32(clamping: h.session.invalidations)
    copyOut(st, to: stats, size: size)
    return MK_OK
}

@_cdecl("mk_async_decode_session_close")
public func mk_async_decode_session_close(_ handle: UnsafeMutablePointer<OpaquePointer?>?) {
    guard let handle, let h = Handles.get(handle.pointee, as: SessionHandle.self) else { return }
    // Stop the thread and let the callbacks already queued return (they skip their frames)
    // before the handle goes: no callback runs after this returns. From a callback, the queue
    // cannot be waited for: the callbacks queued behind this one skip theirs (cancelled).
    h.session.cancel()
    h.session.wait()
    if !h.inCallback { h.queue.sync {} }
    Handles.release(handle, as: SessionHandle.self)
}

// MARK: - The names before 0.2 (deprecated in the header; still exported, the same ABI)
//
// mk_session_* was renamed mk_async_decode_session_* so that one name means one thing in
// Swift (AsyncDecodeSession), C and Python (mediakit.AsyncDecodeSession). The old symbols stay
// for one release: programs built against them keep running.

@_cdecl("mk_session_default_settings")
public func mk_session_default_settings(_ s: UnsafeMutablePointer<mk_async_decode_session_settings>?) {
    mk_async_decode_session_default_settings(s)
}

@_cdecl("mk_session_open")
public func mk_session_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ demuxer: OpaquePointer?, _ track: Int32,
                            _ settings: UnsafePointer<mk_async_decode_session_settings>?) -> Int32 {
    mk_async_decode_session_open(out, demuxer, track, settings)
}

@_cdecl("mk_session_start")
public func mk_session_start(_ handle: OpaquePointer?, _ callbacks: UnsafePointer<mk_async_decode_session_callbacks>?,
                             _ user: UnsafeMutableRawPointer?) -> Int32 {
    mk_async_decode_session_start(handle, callbacks, user)
}

@_cdecl("mk_session_get_recovery")
public func mk_session_get_recovery(_ handle: OpaquePointer?, _ index: Int32, _ out: UnsafeMutablePointer<mk_recovery_info>?) -> Int32 {
    mk_async_decode_session_get_recovery(handle, index, out)
}

@_cdecl("mk_session_read_frame")
public func mk_session_read_frame(_ handle: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    mk_async_decode_session_read_frame(handle, out)
}

@_cdecl("mk_session_seek")
public func mk_session_seek(_ handle: OpaquePointer?, _ seconds: Double) -> Int32 {
    mk_async_decode_session_seek(handle, seconds)
}

@_cdecl("mk_session_flush")
public func mk_session_flush(_ handle: OpaquePointer?, _ completion: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?,
                             _ user: UnsafeMutableRawPointer?) -> Int32 {
    mk_async_decode_session_flush(handle, completion, user)
}

@_cdecl("mk_session_get_stats")
public func mk_session_get_stats(_ handle: OpaquePointer?, _ stats: UnsafeMutablePointer<mk_async_decode_session_stats>?) -> Int32 {
    mk_async_decode_session_get_stats(handle, stats)
}

@_cdecl("mk_session_close")
public func mk_session_close(_ handle: UnsafeMutablePointer<OpaquePointer?>?) {
    mk_async_decode_session_close(handle)
}
