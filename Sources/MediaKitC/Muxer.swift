// mk_muxer and mk_remux.
import CMediaKit
import Foundation
import MediaKit

/// A muxer being written through the C API.
final class MuxerHandle {
    let muxer: MP4Muxer
    var finished = false
    init(_ muxer: MP4Muxer) { self.muxer = muxer }
    deinit { if !finished { muxer.cancel() } }
}

private func layout(_ s: mk_muxer_settings) -> MP4Muxer.Layout? {
    switch s.layout {
    case MK_LAYOUT_PROGRESSIVE: return .progressive
    case MK_LAYOUT_FASTSTART: return .fastStart
    case MK_LAYOUT_FRAGMENTED: return .fragmented(seconds: s.fragment_seconds)
    case MK_LAYOUT_HYBRID: return .hybrid(seconds: s.fragment_seconds)
    default: return nil
    }
}

private func settingsLayout(_ settings: UnsafePointer<mk_muxer_settings>?, _ function: String) -> (MP4Muxer.Layout?, Int32) {
    var s = mk_muxer_settings()
    mk_muxer_default_settings(&s)
    if let settings {
        guard sizeOK(settings.pointee.struct_size, MemoryLayout<mk_muxer_settings>.size, "mk_muxer_settings") else { return (nil, MK_EINVAL) }
        s = settings.pointee
    }
    guard let l = layout(s) else { return (nil, fail(MK_EINVAL, "\(function): layout \(s.layout) is not one of MK_LAYOUT_*")) }
    if s.layout >= MK_LAYOUT_FRAGMENTED && !(s.fragment_seconds > 0 && s.fragment_seconds.isFinite) {
        return (nil, fail(MK_EINVAL, "\(function): fragment_seconds must be above 0 (got \(s.fragment_seconds))"))
    }
    return (l, MK_OK)
}

@_cdecl("mk_muxer_default_settings")
public func mk_muxer_default_settings(_ s: UnsafeMutablePointer<mk_muxer_settings>?) {
    guard let s else { return }
    s.pointee = mk_muxer_settings(struct_size: UInt32(MemoryLayout<mk_muxer_settings>.size), layout: MK_LAYOUT_PROGRESSIVE, fragment_seconds: 2.0)
}

@_cdecl("mk_muxer_open")
public func mk_muxer_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?,
                          _ settings: UnsafePointer<mk_muxer_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_muxer_open: out is NULL") }
    out.pointee = nil
    guard let path else { return fail(MK_EINVAL, "mk_muxer_open: path is NULL") }
    let (l, status) = settingsLayout(settings, "mk_muxer_open")
    guard let l else { return status }
    return guarded {
        var options = MP4Muxer.Options()
        options.layout = l
        out.pointee = Handles.make(MuxerHandle(try MP4Muxer(path: String(cString: path), options: options)))
        return MK_OK
    }
}

@_cdecl("mk_muxer_add_track")
public func mk_muxer_add_track(_ m: OpaquePointer?, _ d: OpaquePointer?, _ track: Int32, _ index: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_add_track") else { return MK_EINVAL }
    guard let dh = liveHandle(DemuxerHandle.self, d, "mk_muxer_add_track") else { return MK_EINVAL }
    guard let index else { return fail(MK_EINVAL, "mk_muxer_add_track: index is NULL") }
    let tracks = dh.demuxer.tracks
    guard track >= 0 && Int(track) < tracks.count else {
        return fail(MK_EINVAL, "mk_muxer_add_track: track \(track) does not exist (the file has \(tracks.count))")
    }
    if h.finished { return fail(MK_ESTATE, "mk_muxer_add_track: the muxer is finished") }
    return guarded {
        index.pointee = Int32(try h.muxer.addTrack(from: tracks[Int(track)]))
        return MK_OK
    }
}

@_cdecl("mk_muxer_write_packet")
public func mk_muxer_write_packet(_ m: OpaquePointer?, _ index: Int32, _ packet: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_write_packet") else { return MK_EINVAL }
    guard let ph = liveHandle(PacketHandle.self, packet, "mk_muxer_write_packet") else { return MK_EINVAL }
    if h.finished { return fail(MK_ESTATE, "mk_muxer_write_packet: the muxer is finished") }
    var p = ph.packet
    p.trackIndex = Int(index)
    return guarded {
        try h.muxer.write(p)
        return MK_OK
    }
}

@_cdecl("mk_muxer_finish")
public func mk_muxer_finish(_ m: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_finish") else { return MK_EINVAL }
    if h.finished { return fail(MK_ESTATE, "mk_muxer_finish: the muxer is already finished or cancelled") }
    h.finished = true
    return guarded {
        try h.muxer.finish()
        return MK_OK
    }
}

@_cdecl("mk_muxer_cancel")
public func mk_muxer_cancel(_ m: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_cancel") else { return MK_EINVAL }
    if !h.finished { h.muxer.cancel() }
    h.finished = true
    return MK_OK
}

@_cdecl("mk_muxer_close")
public func mk_muxer_close(_ m: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(m, as: MuxerHandle.self)
}

@_cdecl("mk_remux")
public func mk_remux(_ src: UnsafePointer<CChar>?, _ dst: UnsafePointer<CChar>?, _ settings: UnsafePointer<mk_muxer_settings>?) -> Int32 {
    guard let src, let dst else { return fail(MK_EINVAL, "mk_remux: \(src == nil ? "src" : "dst") is NULL") }
    let (l, status) = settingsLayout(settings, "mk_remux")
    guard let l else { return status }
    return guarded {
        try Remuxer.remux(input: String(cString: src), output: String(cString: dst), layout: l)
        return MK_OK
    }
}
