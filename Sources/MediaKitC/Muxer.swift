// mk_muxer and mk_remux.
import CMediaKit
import Foundation
import MediaKit

/// A muxer being written through the C API, and what it knows of each track's packets.
final class MuxerHandle {
    let muxer: Muxer
    var finished = false
    /// Where writing stands (mk_muxer_get_status), its failure, and the tracks marked finished.
    var status = AssetStatus.unknown
    var failure: MediaError?
    var failureMessage: CString?
    var endedTracks: Set<Int> = []

    /// Records a failure of a write or the finish (a refusal, MK_EINVAL, leaves the file intact).
    func failed(_ error: Error) {
        let e = error as? MediaError ?? MediaError(.io, "\(error)")
        guard e.kind != .invalidArgument, !status.isFinal else { return }
        status = .failed
        failure = e
    }
    /// The path mk_muxer_in_progress_path lent last.
    var inProgressPath: CString?
    /// Per track: the packets' time base, the encoder delay and padding in samples (and the
    /// rate), and the end of the presentation so far in time-base ticks.
    var tracks: [(timeBase: Rational, delay: Int, padding: Int, rate: Int, end: Int64)] = []
    init(_ muxer: Muxer) { self.muxer = muxer }
    deinit { if !finished { muxer.cancel() } }

    /// MP4: the encoder delay and padding of tracks added from codec parameters become their
    /// edit list, now that the end is known (as the Remuxer and Transcoder write gapless audio).
    /// - Throws: `.invalidArgument` when the trims, in the track's ticks, do not fit 64 bits.
    func writeTrims() throws {
        guard let presenting = muxer as? PresentationMuxer else { return }
        for (i, t) in tracks.enumerated() where t.delay > 0 || t.padding > 0 {
            guard t.rate > 0 else {
                throw MediaError(.invalidArgument, "track \(i): encoder_delay \(t.delay) and encoder_padding \(t.padding) need the track's sample rate")
            }
            let samples = Rational(1, Int64(t.rate))
            let delay = Rational.rescale(Int64(t.delay), from: samples, to: t.timeBase)
            let padding = Rational.rescale(Int64(t.padding), from: samples, to: t.timeBase)
            let n = t.timeBase.numerator
            // The muxer checks the edit (MovieWriter.check); only the arithmetic is checked here.
            let afterDelay = t.end.subtractingReportingOverflow(delay)
            let kept = afterDelay.partialValue.subtractingReportingOverflow(padding)
            let (duration, o1) = max(0, kept.partialValue).multipliedReportingOverflow(by: n)
            let (start, o2) = delay.multipliedReportingOverflow(by: n)
            guard !afterDelay.overflow, !kept.overflow, !o1, !o2 else {
                throw MediaError(.invalidArgument, "track \(i): the trims (delay \(t.delay), padding \(t.padding) samples) do not fit 64-bit ticks of \(t.timeBase.numerator)/\(t.timeBase.denominator) s")
            }
            presenting.setPresentation(track: i, mediaTime: start, duration: duration, timeScale: t.timeBase.denominator)
        }
    }
}

private func layout(_ s: mk_muxer_settings) -> MuxLayout? {
    switch s.layout {
    case MK_LAYOUT_PROGRESSIVE: return .progressive
    case MK_LAYOUT_FASTSTART: return .fastStart
    case MK_LAYOUT_FRAGMENTED: return .fragmented(seconds: s.fragment_seconds)
    case MK_LAYOUT_HYBRID: return .hybrid(seconds: s.fragment_seconds)
    default: return nil
    }
}

/// The caller's settings (a 0.1 struct ends at fragment_seconds: the rest keeps its defaults)
/// and their layout, checked; nil after fail().
private func muxerSettings(_ settings: UnsafePointer<mk_muxer_settings>?, _ function: String) -> (settings: mk_muxer_settings, layout: MuxLayout)? {
    var s = mk_muxer_settings()
    mk_muxer_default_settings(&s)
    if let settings {
        guard sizeOK(settings.pointee.struct_size, MemoryLayout<mk_muxer_settings>.offset(of: \mk_muxer_settings.tracks)!, "mk_muxer_settings") else { return nil }
        s = copyIn(s, from: settings, size: settings.pointee.struct_size)
    }
    guard let l = layout(s) else { fail(MK_EINVAL, "\(function): layout \(s.layout) is not one of MK_LAYOUT_*"); return nil }
    if s.layout >= MK_LAYOUT_FRAGMENTED && !(s.fragment_seconds > 0 && s.fragment_seconds.isFinite) {
        fail(MK_EINVAL, "\(function): fragment_seconds must be above 0 (got \(s.fragment_seconds))")
        return nil
    }
    guard s.track_count >= 0, s.track_count <= 65536, s.track_count == 0 || s.tracks != nil else {
        fail(MK_EINVAL, "\(function): \(s.track_count) tracks from \(s.tracks == nil ? "NULL" : "a list")")
        return nil
    }
    return (s, l)
}

@_cdecl("mk_muxer_default_settings")
public func mk_muxer_default_settings(_ s: UnsafeMutablePointer<mk_muxer_settings>?) {
    guard let s else { return }
    let d = MuxerOptions()
    s.pointee = mk_muxer_settings(struct_size: UInt32(MemoryLayout<mk_muxer_settings>.size), layout: MK_LAYOUT_PROGRESSIVE, fragment_seconds: 2.0,
                                  tracks: nil, track_count: 0, progress: nil, progress_user: nil,
                                  chunk_seconds: MuxerOptions.defaultChunkSeconds, movie_time_scale: MuxerOptions.defaultTimeScale,
                                  reserved_moov_bytes: Int64(d.reservedIndexBytes), write_mfra: d.writeFragmentIndex ? 1 : 0,
                                  user_data: nil, user_data_size: 0, segment_format: nil, no_metadata: 0, metadata_count: 0, metadata: nil,
                                  id3v2_version: 0, write_id3v2: 0, format: nil, rf64: MK_RF64_NEVER, warning: nil, warning_user: nil)
}

/// The largest `udta` box and `free` reservation mk_muxer_open takes (bounded allocations).
private let maxUserDataBytes = 16 << 20, maxReservedMoovBytes: Int64 = 256 << 20

/// The muxer options of mk_muxer_settings (layout `l`), checked; nil after fail(). Values at
/// their defaults are left to the format.
private func muxerOptions(_ s: mk_muxer_settings, _ l: MuxLayout, _ function: String) -> MuxerOptions? {
    guard s.chunk_seconds.isFinite, s.chunk_seconds >= 0.001, s.chunk_seconds <= 3600 else {
        fail(MK_EINVAL, "\(function): chunk_seconds \(s.chunk_seconds) is out of range (0.001 to 3600)")
        return nil
    }
    guard s.movie_time_scale >= 1, s.movie_time_scale <= Int64(UInt32.max) else {
        fail(MK_EINVAL, "\(function): movie_time_scale \(s.movie_time_scale) is out of range (1 to \(UInt32.max))")
        return nil
    }
    guard s.reserved_moov_bytes >= 0, s.reserved_moov_bytes <= maxReservedMoovBytes else {
        fail(MK_EINVAL, "\(function): reserved_moov_bytes \(s.reserved_moov_bytes) is out of range (0 to \(maxReservedMoovBytes))")
        return nil
    }
    guard s.write_mfra == 0 || s.write_mfra == 1 else {
        fail(MK_EINVAL, "\(function): write_mfra is \(s.write_mfra), not 0 or 1")
        return nil
    }
    var userData: [UInt8] = []
    if s.user_data_size > 0 {
        guard let data = s.user_data else { fail(MK_EINVAL, "\(function): user_data is NULL with user_data_size \(s.user_data_size)"); return nil }
        guard s.user_data_size <= maxUserDataBytes else {
            fail(MK_EINVAL, "\(function): user_data_size \(s.user_data_size) is above the \(maxUserDataBytes)-byte limit")
            return nil
        }
        userData = Array(UnsafeBufferPointer(start: data, count: s.user_data_size))
        let size = userData.count >= 8 ? userData[0..<4].reduce(0) { $0 << 8 | Int($1) } : 0
        guard userData.count >= 8, size == userData.count, Array(userData[4..<8]) == Array("udta".utf8) else {
            let type = userData.count >= 8 ? String(decoding: userData[4..<8], as: UTF8.self) : "?"
            fail(MK_EINVAL, "\(function): user_data must be one whole udta box: its \(userData.count) bytes start with size \(size) and type '\(type)'")
            return nil
        }
    }
    var o = MuxerOptions(layout: l)
    guard id3AndRF64Options(s, &o, function) else { return nil }
    if s.movie_time_scale != MuxerOptions.defaultTimeScale { o.timeScale = s.movie_time_scale }
    if s.chunk_seconds != MuxerOptions.defaultChunkSeconds { o.chunkSeconds = s.chunk_seconds }
    o.reservedIndexBytes = Int(s.reserved_moov_bytes)
    o.writeFragmentIndex = s.write_mfra == 1
    o.userData = userData
    o.segmentFormat = s.segment_format.map { String(cString: $0) }
    return o
}

/// Sets `o`'s ID3v2 and RF64 options from `s` (id3v2_version 0 leaves the format's 4), checked;
/// false after fail().
private func id3AndRF64Options(_ s: mk_muxer_settings, _ o: inout MuxerOptions, _ function: String) -> Bool {
    guard [0, 3, 4].contains(s.id3v2_version) else {
        fail(MK_EINVAL, "\(function): id3v2_version is \(s.id3v2_version), not 3, 4 or 0 (the default, 4)")
        return false
    }
    guard s.write_id3v2 == 0 || s.write_id3v2 == 1 else {
        fail(MK_EINVAL, "\(function): write_id3v2 is \(s.write_id3v2), not 0 or 1")
        return false
    }
    o.id3v2Version = s.id3v2_version == 3 ? 3 : s.id3v2_version == 4 ? 4 : nil
    o.writeID3v2 = s.write_id3v2 == 1
    do { o.rf64 = try rf64Mode(s.rf64, function) } catch { _ = fail(error); return false }
    return true
}

/// An `MK_RF64_*` value (mk_muxer_settings and mk_transcode_settings' `rf64`) as the muxer option.
/// - Throws: `.invalidArgument` naming the value when it is none of them.
func rf64Mode(_ value: Int32, _ function: String) throws -> MuxerOptions.RF64 {
    switch value {
    case MK_RF64_NEVER: return .never
    case MK_RF64_AUTO: return .auto
    case MK_RF64_ALWAYS: return .always
    default: throw MediaError(.invalidArgument, "\(function): rf64 is \(value), not MK_RF64_NEVER (0), MK_RF64_AUTO (1) or MK_RF64_ALWAYS (2)")
    }
}

/// True when `s` holds only the default MP4 options (what mk_remux and the other containers take).
private func defaultMP4Options(_ s: mk_muxer_settings) -> Bool {
    var d = mk_muxer_settings()
    mk_muxer_default_settings(&d)
    return s.chunk_seconds == d.chunk_seconds && s.movie_time_scale == d.movie_time_scale && s.reserved_moov_bytes == d.reserved_moov_bytes
        && s.write_mfra == d.write_mfra && s.user_data == nil && s.user_data_size == 0
}

@_cdecl("mk_muxer_open")
public func mk_muxer_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?,
                          _ settings: UnsafePointer<mk_muxer_settings>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_muxer_open: out is NULL") }
    out.pointee = nil
    guard let path else { return fail(MK_EINVAL, "mk_muxer_open: path is NULL") }
    guard let (s, l) = muxerSettings(settings, "mk_muxer_open") else { return MK_EINVAL }
    if s.tracks != nil || s.track_count != 0 || s.progress != nil || s.no_metadata != 0 || s.metadata_count != 0 || s.metadata != nil
        || s.warning != nil {
        return fail(MK_EINVAL, "mk_muxer_open: tracks, track_count, progress, no_metadata, metadata and warning are mk_remux's settings (the muxer writes what it is given)")
    }
    guard let options = muxerOptions(s, l, "mk_muxer_open") else { return MK_EINVAL }
    let target = String(cString: path)
    let named = s.format.map { String(cString: $0) }
    return guarded {
        let catalog = ContainerCatalog.shared
        // settings->format names the muxer (a plugin's too); else the extension does.
        let chosen = try named.map { try catalog.requireMuxerFormat(named: $0) }
        if let format = chosen ?? catalog.muxerFormat(forPath: target), format.name != "mp4", !defaultMP4Options(s) {
            return fail(MK_EINVAL, "mk_muxer_open: chunk_seconds, movie_time_scale, reserved_moov_bytes, write_mfra and user_data are MP4's; \(target) is not written as an MP4 file")
        }
        let muxer = try chosen.map { try $0.make(path: target, options: options) } ?? catalog.makeMuxer(path: target, options: options)
        out.pointee = Handles.make(MuxerHandle(muxer))
        return MK_OK
    }
}

@_cdecl("mk_muxer_add_track")
public func mk_muxer_add_track(_ m: OpaquePointer?, _ d: OpaquePointer?, _ track: Int32, _ index: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_add_track") else { return MK_EINVAL }
    guard let index else { return fail(MK_EINVAL, "mk_muxer_add_track: index is NULL") }
    guard let t = demuxerTrack(d, track, "mk_muxer_add_track") else { return MK_EINVAL }
    if h.finished { return fail(MK_ESTATE, "mk_muxer_add_track: the muxer is finished") }
    return guarded {
        index.pointee = Int32(clamping: try h.muxer.addTrack(from: t))   // a track index: far below 2^31
        h.tracks.append((t.timeBase, 0, 0, 0, 0))
        return MK_OK
    }
}

@_cdecl("mk_muxer_add_track_params")
public func mk_muxer_add_track_params(_ m: OpaquePointer?, _ params: UnsafePointer<mk_codec_params>?, _ index: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_add_track_params") else { return MK_EINVAL }
    guard let index else { return fail(MK_EINVAL, "mk_muxer_add_track_params: index is NULL") }
    guard var t = paramsTrack(params, "mk_muxer_add_track_params") else { return MK_EINVAL }
    if h.finished { return fail(MK_ESTATE, "mk_muxer_add_track_params: the muxer is finished") }
    let delay = t.encoderDelay, padding = t.encoderPadding
    if !(h.muxer is PresentationMuxer) && (padding > 0 || (delay > 0 && t.parameters.codec != "opus")) {
        return fail(MK_EUNSUPPORTED, "mk_muxer_add_track_params: encoder_delay \(delay) and encoder_padding \(padding) are written as an MP4 edit list; "
                    + "Matroska and Ogg state only the Opus pre-skip, from the OpusHead in extradata")
    }
    // The trims are written at the end (writeTrims); the Track's would make the muxer guess.
    t.encoderDelay = 0
    t.encoderPadding = 0
    return guarded {
        index.pointee = Int32(clamping: try h.muxer.addTrack(from: t))   // a track index: far below 2^31
        h.tracks.append((t.timeBase, delay, padding, t.parameters.sampleRate, 0))
        return MK_OK
    }
}

@_cdecl("mk_muxer_write_packet")
public func mk_muxer_write_packet(_ m: OpaquePointer?, _ index: Int32, _ packet: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_write_packet") else { return MK_EINVAL }
    guard let ph = liveHandle(PacketHandle.self, packet, "mk_muxer_write_packet") else { return MK_EINVAL }
    if h.finished { return fail(MK_ESTATE, "mk_muxer_write_packet: the muxer is finished") }
    guard index >= 0 && Int(index) < h.tracks.count else {
        return fail(MK_EINVAL, "mk_muxer_write_packet: track \(index) does not exist (the muxer has \(h.tracks.count))")
    }
    var p = ph.packet
    if p.dts == Packet.noTimestamp { p.dts = p.pts }
    if p.pts == Packet.noTimestamp { p.pts = p.dts }
    guard p.dts != Packet.noTimestamp else {
        return fail(MK_EINVAL, "mk_muxer_write_packet: the packet has neither a pts nor a dts (track \(index))")
    }
    let i = Int(index)
    if h.endedTracks.contains(i) {
        return fail(MK_ESTATE, "mk_muxer_write_packet: track \(i) was marked finished (mk_muxer_end_track): no packet may follow")
    }
    p.trackIndex = i
    p.timeBase = h.tracks[i].timeBase
    if h.status == .unknown { h.status = .writing }
    return guarded {
        do { try h.muxer.write(p) } catch {
            h.failed(error)
            throw error
        }
        h.tracks[i].end = max(h.tracks[i].end, p.pts &+ p.duration)
        return MK_OK
    }
}

@_cdecl("mk_muxer_finish")
public func mk_muxer_finish(_ m: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_finish") else { return MK_EINVAL }
    if h.finished { return fail(MK_ESTATE, "mk_muxer_finish: the muxer is already finished or cancelled") }
    h.finished = true
    return guarded {
        do {
            try h.writeTrims()
            try h.muxer.finish()
        } catch {
            // A failed finish fails the file, whatever the error.
            h.status = .failed
            h.failure = error as? MediaError ?? MediaError(.io, "\(error)")
            throw error
        }
        h.status = .completed
        return MK_OK
    }
}

@_cdecl("mk_muxer_cancel")
public func mk_muxer_cancel(_ m: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_cancel") else { return MK_EINVAL }
    if !h.finished {
        h.muxer.cancel()
        if !h.status.isFinal { h.status = .cancelled }
    }
    h.finished = true
    return MK_OK
}

@_cdecl("mk_muxer_get_status")
public func mk_muxer_get_status(_ m: OpaquePointer?, _ status: UnsafeMutablePointer<mk_asset_status>?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_get_status") else { return MK_EINVAL }
    guard let status else { return fail(MK_EINVAL, "mk_muxer_get_status: status is NULL") }
    guard sizeOK(status.pointee.struct_size, MemoryLayout<mk_asset_status>.size, "mk_asset_status") else { return MK_EINVAL }
    if let f = h.failure, h.failureMessage == nil { h.failureMessage = CString(f.description) }
    status.pointee = assetStatus(h.status, h.failure, h.failureMessage, size: status.pointee.struct_size)
    return MK_OK
}

@_cdecl("mk_muxer_end_track")
public func mk_muxer_end_track(_ m: OpaquePointer?, _ track: Int32) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_end_track") else { return MK_EINVAL }
    let t = Int(truncatingIfNeeded: track)        // Int32 into Int: widening
    guard t >= 0 && t < h.tracks.count else {
        return fail(MK_EINVAL, "mk_muxer_end_track: track \(track) does not exist (the muxer has \(h.tracks.count))")
    }
    h.endedTracks.insert(t)
    return MK_OK
}

@_cdecl("mk_muxer_track_ended")
public func mk_muxer_track_ended(_ m: OpaquePointer?, _ track: Int32, _ ended: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_track_ended") else { return MK_EINVAL }
    guard let ended else { return fail(MK_EINVAL, "mk_muxer_track_ended: ended is NULL") }
    let t = Int(truncatingIfNeeded: track)        // Int32 into Int: widening
    guard t >= 0 && t < h.tracks.count else {
        return fail(MK_EINVAL, "mk_muxer_track_ended: track \(track) does not exist (the muxer has \(h.tracks.count))")
    }
    ended.pointee = h.endedTracks.contains(t) || h.status == .completed ? 1 : 0
    return MK_OK
}

@_cdecl("mk_muxer_in_progress_path")
public func mk_muxer_in_progress_path(_ m: OpaquePointer?, _ path: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(MuxerHandle.self, m, "mk_muxer_in_progress_path") else { return MK_EINVAL }
    guard let path else { return fail(MK_EINVAL, "mk_muxer_in_progress_path: path is NULL") }
    guard let partial = h.muxer as? PartialFileMuxer else {
        return fail(MK_EUNSUPPORTED, "mk_muxer_in_progress_path: only MP4 muxers name the file they are writing")
    }
    let c = CString(partial.inProgressPath)
    h.inProgressPath = c
    path.pointee = UnsafePointer(c.pointer)
    return MK_OK
}

@_cdecl("mk_muxer_close")
public func mk_muxer_close(_ m: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(m, as: MuxerHandle.self)
}

@_cdecl("mk_remux")
public func mk_remux(_ src: UnsafePointer<CChar>?, _ dst: UnsafePointer<CChar>?, _ settings: UnsafePointer<mk_muxer_settings>?) -> Int32 {
    guard let src, let dst else { return fail(MK_EINVAL, "mk_remux: \(src == nil ? "src" : "dst") is NULL") }
    guard let (s, l) = muxerSettings(settings, "mk_remux") else { return MK_EINVAL }
    guard defaultMP4Options(s) else {
        return fail(MK_EINVAL, "mk_remux: chunk_seconds, movie_time_scale, reserved_moov_bytes, write_mfra and user_data are mk_muxer_open's (mk_remux takes them from the source)")
    }
    let tracks = s.tracks.map { Array(UnsafeBufferPointer(start: $0, count: Int(s.track_count))).map(Int.init) }
    guard s.metadata_count >= 0, s.metadata_count <= 65536, s.metadata_count == 0 || s.metadata != nil else {
        return fail(MK_EINVAL, "mk_remux: \(s.metadata_count) metadata entries from \(s.metadata == nil ? "NULL" : "a list")")
    }
    var settingsText: [String] = []
    if let list = s.metadata {
        for i in 0..<Int(clamping: s.metadata_count) {
            guard let entry = list[i] else { return fail(MK_EINVAL, "mk_remux: metadata[\(i)] is NULL") }
            settingsText.append(String(cString: entry))
        }
    }
    let relay = ProgressRelay(s.progress, s.progress_user)
    return relay.guarded("mk_remux") {
        var options = MuxerOptions(layout: l)
        options.segmentFormat = s.segment_format.map { String(cString: $0) }
        guard id3AndRF64Options(s, &options, "mk_remux") else { return MK_EINVAL }
        let metadata = try MetadataCopyOptions(copy: s.no_metadata == 0, settings: settingsText)
        let cut = try Remuxer.remux(input: String(cString: src), output: String(cString: dst), options: options, tracks: tracks,
                                    metadata: metadata, format: s.format.map { String(cString: $0) }, progress: { done, total in
            try relay.check(fraction: total > 0 ? Double(done) / Double(total) : 0, done: Int64(done), total: Int64(total))
        }, warning: s.warning.map { callback in { w in w.description.withCString { callback(s.warning_user, $0) } } })
        if let cut { return fail(MK_ETRUNCATED, cut.description) }   // a warning: dst is written
        return MK_OK
    }
}
