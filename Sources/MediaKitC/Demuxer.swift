// mk_demuxer and mk_packet.
import CMediaKit
import Foundation
import MediaKit

/// What one track's mk_track_info lends out: C strings, extradata, edit list and sample entry,
/// made from the Track they describe.
final class LentTrack {
    let codec: CString, tag: CString, language: CString, unsupported: CString?
    let extradata: UnsafeMutableBufferPointer<UInt8>
    let sampleEntry: UnsafeMutableBufferPointer<UInt8>
    let edits: UnsafeMutableBufferPointer<mk_edit>
    /// What the copies were made from, to see whether a track that changed needs new ones.
    private let source: (codec: String, tag: String, language: String, unsupported: String?, extradata: [UInt8],
                         sampleEntry: [UInt8], edits: [EditListEntry])

    init(_ t: Track) {
        source = (t.parameters.codec.rawValue, t.parameters.codecTag, t.language, t.unsupportedReason, t.parameters.extradata,
                  t.parameters.sampleEntry, t.editList)
        codec = CString(source.codec)
        tag = CString(source.tag)
        language = CString(source.language)
        unsupported = source.unsupported.map { CString($0) }
        func copy<T>(_ values: [T]) -> UnsafeMutableBufferPointer<T> {
            let buffer = UnsafeMutableBufferPointer<T>.allocate(capacity: values.count)
            _ = buffer.initialize(from: values)
            return buffer
        }
        extradata = copy(source.extradata)
        sampleEntry = copy(source.sampleEntry)
        edits = copy(source.edits.map { mk_edit(segment_duration: $0.segmentDuration, media_time: $0.mediaTime, media_rate: $0.mediaRate) })
    }

    /// True when `t` lends what this holds.
    func describes(_ t: Track) -> Bool {
        source.codec == t.parameters.codec.rawValue && source.tag == t.parameters.codecTag && source.language == t.language
            && source.unsupported == t.unsupportedReason && source.extradata == t.parameters.extradata
            && source.sampleEntry == t.parameters.sampleEntry && source.edits == t.editList
    }

    deinit {
        extradata.deallocate()
        sampleEntry.deallocate()
        edits.deallocate()
    }
}

/// An open demuxer and what its track infos lend out.
final class DemuxerHandle {
    let demuxer: Demuxer
    /// C calls that took this handle (``liveHandle(_:_:_:)`` counts them): a change between two
    /// mk_decode_session_frames_at batches means the demuxer may have moved.
    var uses: UInt64 = 0
    /// The container format's short name (mk_demuxer_container).
    let container: CString
    /// Each track's lent strings and buffers (``lent(_:)``), and the ones a track's change
    /// replaced: those stay valid until the demuxer is closed, as the header promises.
    private var lentTracks: [LentTrack]
    private var replaced: [LentTrack] = []
    /// The cut of a file cut short, once a read returned MK_ETRUNCATED.
    var truncation: MediaError?
    /// Where reading stands (mk_demuxer_get_status), the tracks that reached their end, the
    /// tracks mk_demuxer_select_tracks limited reading to.
    var status = AssetStatus.unknown
    var failure: MediaError?
    var failureMessage: CString?
    var ended: Set<Int> = []
    var selected: Set<Int>?
    /// The messages mk_demuxer_warning() lends out, rebuilt by mk_demuxer_warning_count().
    var warningStrings: [CString] = []
    /// What the metadata calls lend out (Metadata.swift), made on first use and again once tracks
    /// were added while reading (the earlier strings stay valid until the demuxer is closed).
    var metadataStrings: MetadataStrings {
        if let m = metadataMade, m.tracks.count == demuxer.tracks.count { return m }
        if let m = metadataMade { replacedMetadata.append(m) }
        let m = MetadataStrings(demuxer)
        metadataMade = m
        return m
    }
    private var metadataMade: MetadataStrings?
    private var replacedMetadata: [MetadataStrings] = []
    /// The demuxer's warnings, then the cut.
    var warnings: [MediaError] { demuxer.warnings + (truncation.map { [$0] } ?? []) }
    /// Wraps what ``ContainerCatalog/open(_:)`` opened.
    convenience init(_ opened: (format: ContainerFormat, demuxer: Demuxer)) {
        self.init(opened.demuxer, container: opened.format.name)
    }
    init(_ demuxer: Demuxer, container: String) {
        self.demuxer = demuxer
        self.container = CString(container)
        lentTracks = demuxer.tracks.map(LentTrack.init)
    }

    /// What track `index` of the demuxer (`t`) lends: made for a track added while reading (an
    /// MPEG-TS PMT that adds a stream), made again for a track whose parameters its first packet
    /// told since.
    func lent(_ index: Int, _ t: Track) -> LentTrack {
        while lentTracks.count <= index { lentTracks.append(LentTrack(demuxer.tracks[lentTracks.count])) }
        if !lentTracks[index].describes(t) {
            replaced.append(lentTracks[index])
            lentTracks[index] = LentTrack(t)
        }
        return lentTracks[index]
    }
}

/// A packet read through the C API.
final class PacketHandle {
    let packet: Packet
    /// The data's address, stable while the packet lives (the array is never mutated).
    let bytes: UnsafePointer<UInt8>?
    init(_ packet: Packet) {
        self.packet = packet
        bytes = packet.data.withUnsafeBufferPointer { $0.baseAddress }
    }
}

func mediaTypeCode(_ t: MediaType) -> Int32 {
    switch t {
    case .audio: return MK_MEDIA_AUDIO
    case .video: return MK_MEDIA_VIDEO
    case .subtitle: return MK_MEDIA_SUBTITLE
    case .data: return MK_MEDIA_DATA
    }
}

@_cdecl("mk_demuxer_open")
public func mk_demuxer_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?) -> Int32 {
    mk_demuxer_open_as(out, path, nil)
}

@_cdecl("mk_demuxer_open_as")
public func mk_demuxer_open_as(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?, _ demuxer: UnsafePointer<CChar>?) -> Int32 {
    let function = demuxer == nil ? "mk_demuxer_open" : "mk_demuxer_open_as"
    guard let out else { return fail(MK_EINVAL, "\(function): out is NULL") }
    out.pointee = nil
    guard let path else { return fail(MK_EINVAL, "\(function): path is NULL") }
    return guarded {
        out.pointee = try openDemuxer(ByteSources.open(path: String(cString: path)), named: demuxer)
        return MK_OK
    }
}

@_cdecl("mk_demuxer_open_memory")
public func mk_demuxer_open_memory(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    mk_demuxer_open_memory_as(out, data, size, nil)
}

@_cdecl("mk_demuxer_open_memory_as")
public func mk_demuxer_open_memory_as(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ data: UnsafePointer<UInt8>?, _ size: Int,
                                      _ demuxer: UnsafePointer<CChar>?) -> Int32 {
    let function = demuxer == nil ? "mk_demuxer_open_memory" : "mk_demuxer_open_memory_as"
    guard let out else { return fail(MK_EINVAL, "\(function): out is NULL") }
    out.pointee = nil
    guard data != nil || size == 0 else { return fail(MK_EINVAL, "\(function): data is NULL") }
    guard size >= 0 else { return fail(MK_EINVAL, "\(function): size is negative") }
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    return guarded {
        out.pointee = try openDemuxer(MemorySource(bytes), named: demuxer)
        return MK_OK
    }
}

@_cdecl("mk_demuxer_open_io")
public func mk_demuxer_open_io(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ io: UnsafePointer<mk_io>?, _ user: UnsafeMutableRawPointer?) -> Int32 {
    mk_demuxer_open_io_as(out, io, user, nil)
}

@_cdecl("mk_demuxer_open_io_as")
public func mk_demuxer_open_io_as(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ io: UnsafePointer<mk_io>?, _ user: UnsafeMutableRawPointer?,
                                  _ demuxer: UnsafePointer<CChar>?) -> Int32 {
    let function = demuxer == nil ? "mk_demuxer_open_io" : "mk_demuxer_open_io_as"
    guard let out else { return fail(MK_EINVAL, "\(function): out is NULL") }
    out.pointee = nil
    guard let io else { return fail(MK_EINVAL, "\(function): io is NULL") }
    guard sizeOK(io.pointee.struct_size, MemoryLayout<mk_io>.size, "mk_io") else { return MK_EINVAL }
    let callbacks = io.pointee
    guard let read = callbacks.read else { return fail(MK_EINVAL, "\(function): io->read is NULL") }
    let name = callbacks.name.map { String(cString: $0) } ?? "io"
    nonisolated(unsafe) let context = user
    let size = callbacks.size.flatMap { f -> Int64? in let n = f(context); return n >= 0 ? n : nil }
    let seek: ((Int64) throws -> Void)? = callbacks.seek.map { f in
        { offset in
            let r = f(context, offset)
            if r < 0 { throw MediaError(.io, "the seek callback failed (\(r)) for offset \(offset)", path: name, offset: offset) }
        }
    }
    let source = CallbackSource(name: name, size: size, read: { buffer in
        let n = read(context, buffer.baseAddress?.assumingMemoryBound(to: UInt8.self), buffer.count)
        if n < 0 { throw MediaError(.io, "the read callback failed (\(n))", path: name) }
        return Int(n)
    }, seek: seek)
    return guarded {
        out.pointee = try openDemuxer(source, named: demuxer)
        return MK_OK
    }
}

/// `source` opened by the demuxer `name` names (a built-in format's or a plugin's, as
/// ``ContainerCatalog/open(_:demuxer:)`` takes it), or probed when `name` is NULL or empty.
private func openDemuxer(_ source: ByteSource, named name: UnsafePointer<CChar>?) throws -> OpaquePointer {
    let chosen = name.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
    return Handles.make(DemuxerHandle(try ContainerCatalog.shared.open(source, demuxer: chosen)))
}

@_cdecl("mk_demuxer_close")
public func mk_demuxer_close(_ demuxer: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(demuxer, as: DemuxerHandle.self)
}

@_cdecl("mk_demuxer_track_count")
public func mk_demuxer_track_count(_ d: OpaquePointer?, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_track_count") else { return MK_EINVAL }
    guard let count else { return fail(MK_EINVAL, "mk_demuxer_track_count: count is NULL") }
    count.pointee = Int32(h.demuxer.tracks.count)
    return MK_OK
}

@_cdecl("mk_demuxer_duration")
public func mk_demuxer_duration(_ d: OpaquePointer?, _ seconds: UnsafeMutablePointer<Double>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_duration") else { return MK_EINVAL }
    guard let seconds else { return fail(MK_EINVAL, "mk_demuxer_duration: seconds is NULL") }
    seconds.pointee = h.demuxer.duration ?? 0
    return MK_OK
}

@_cdecl("mk_demuxer_presentation_offset")
public func mk_demuxer_presentation_offset(_ d: OpaquePointer?, _ track: Int32, _ offset: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_presentation_offset") else { return MK_EINVAL }
    guard let offset else { return fail(MK_EINVAL, "mk_demuxer_presentation_offset: offset is NULL") }
    let tracks = h.demuxer.tracks
    guard track >= 0, Int(track) < tracks.count else {
        return fail(MK_EINVAL, "mk_demuxer_presentation_offset: no track \(track) (the file has \(tracks.count))")
    }
    offset.pointee = tracks[Int(track)].presentationOffset
    return MK_OK
}

@_cdecl("mk_demuxer_container")
public func mk_demuxer_container(_ d: OpaquePointer?, _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_container") else { return MK_EINVAL }
    guard let name else { return fail(MK_EINVAL, "mk_demuxer_container: name is NULL") }
    name.pointee = UnsafePointer(h.container.pointer)
    return MK_OK
}

@_cdecl("mk_demuxer_track")
public func mk_demuxer_track(_ d: OpaquePointer?, _ index: Int32, _ info: UnsafeMutablePointer<mk_track_info>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_track") else { return MK_EINVAL }
    guard let info else { return fail(MK_EINVAL, "mk_demuxer_track: info is NULL") }
    // The 0.1 struct ended before `reflected`; newer fields are filled when struct_size covers them.
    let oldSize = MemoryLayout<mk_track_info>.offset(of: \mk_track_info.reflected)!
    guard sizeOK(info.pointee.struct_size, oldSize, "mk_track_info") else { return MK_EINVAL }
    let tracks = h.demuxer.tracks
    guard index >= 0 && Int(index) < tracks.count else {
        return fail(MK_EINVAL, "mk_demuxer_track: track \(index) does not exist (the file has \(tracks.count))")
    }
    let t = tracks[Int(index)], s = h.lent(Int(index), t), p = t.parameters
    var i = mk_track_info()
    i.struct_size = info.pointee.struct_size
    i.index = Int32(t.index)
    i.id = Int32(clamping: t.id)
    i.media_type = mediaTypeCode(t.mediaType)
    i.codec = UnsafePointer(s.codec.pointer)
    i.codec_tag = UnsafePointer(s.tag.pointer)
    i.extradata = p.extradata.isEmpty ? nil : UnsafePointer(s.extradata.baseAddress)
    i.extradata_size = p.extradata.count
    i.time_base_num = Int32(clamping: t.timeBase.numerator)
    i.time_base_den = Int32(clamping: t.timeBase.denominator)
    i.duration = t.duration
    i.sample_count = Int64(t.sampleCount)
    i.width = Int32(clamping: p.width)
    i.height = Int32(clamping: p.height)
    i.sample_rate = Int32(clamping: p.sampleRate)
    i.channels = Int32(clamping: p.channels)
    i.rotation = t.rotation
    i.language = UnsafePointer(s.language.pointer)
    i.frame_rate_num = Int32(clamping: t.frameRate.numerator)
    i.frame_rate_den = Int32(clamping: t.frameRate.denominator)
    i.encoder_delay = Int32(clamping: t.encoderDelay)
    i.encoder_padding = Int32(clamping: t.encoderPadding)
    i.unsupported = s.unsupported.map { UnsafePointer($0.pointer) }
    i.reflected = t.isReflected ? 1 : 0
    setCArray(&i.matrix, t.matrix.count == 9 ? t.matrix : [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000])
    let edits = s.edits, entry = s.sampleEntry
    i.edits = edits.isEmpty ? nil : UnsafePointer(edits.baseAddress)
    i.edit_count = Int32(clamping: edits.count)
    i.movie_time_scale = t.movieTimeScale
    i.bit_rate = Int64(p.bitRate)
    i.sample_aspect_num = Int32(clamping: p.sampleAspectRatio.numerator)
    i.sample_aspect_den = Int32(clamping: p.sampleAspectRatio.denominator)
    i.color_range = Int32(p.colorRange.rawValue)
    i.color_primaries = Int32(clamping: p.colorPrimaries.rawValue)
    i.color_transfer = Int32(clamping: p.colorTransfer.rawValue)
    i.color_space = Int32(clamping: p.colorSpace.rawValue)
    i.channel_mask = p.channelMask
    i.bits_per_coded_sample = Int32(clamping: p.bitsPerCodedSample)
    i.block_align = Int32(clamping: p.blockAlign)
    i.reorder_depth = Int32(clamping: p.reorderDepth)
    i.encrypted = t.isEncrypted ? 1 : 0
    i.trims_on_packets = t.trimsOnPackets ? 1 : 0
    i.sample_entry = entry.isEmpty ? nil : UnsafePointer(entry.baseAddress)
    i.sample_entry_size = entry.count
    i.is_default = t.isDefault ? 1 : 0
    i.forced = t.isForced ? 1 : 0
    copyOut(i, to: info, size: i.struct_size)
    return MK_OK
}

/// One read for the C API: the packet, MK_EOF, or the error; the status and the tracks' ends
/// follow it (`track`: the track read, nil for every track in file order).
private func read(_ h: DemuxerHandle, _ out: UnsafeMutablePointer<OpaquePointer?>, track: Int?, _ next: () throws -> Packet?) -> Int32 {
    guarded {
        guard let p = try readPacket(h, track: track, next) else { return MK_EOF }
        out.pointee = Handles.make(PacketHandle(p))
        return MK_OK
    }
}

/// The next packet `next()` reads for a C call on `h` (of `track`, or of any track when nil),
/// with the handle's bookkeeping: nil at the end (and once reading was cancelled), the track
/// marked ended and the status completed when every selected track is; a cut file's
/// `.truncated` error kept in ``DemuxerHandle/truncation`` (and thrown: MK_ETRUNCATED); another
/// error makes the status failed (and is thrown).
func readPacket(_ h: DemuxerHandle, track: Int?, _ next: () throws -> Packet?) throws -> Packet? {
    if h.status == .cancelled { return nil }
    if h.status == .unknown { h.status = .reading }
    let every = h.selected ?? Set(h.demuxer.tracks.indices)
    func end() {
        if let track { h.ended.insert(track) } else { h.ended.formUnion(every) }
        if every.isSubset(of: h.ended) && h.status == .reading { h.status = .completed }
    }
    do {
        guard let p = try next() else {
            end()
            return nil
        }
        return p
    } catch let e as MediaError where e.kind == .truncated {
        if h.truncation == nil { h.truncation = e }
        end()
        throw e
    } catch {
        if h.status == .reading {
            h.status = .failed
            h.failure = error as? MediaError ?? MediaError(.io, "\(error)")
        }
        throw error
    }
}

@_cdecl("mk_demuxer_get_status")
public func mk_demuxer_get_status(_ d: OpaquePointer?, _ status: UnsafeMutablePointer<mk_asset_status>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_get_status") else { return MK_EINVAL }
    guard let status else { return fail(MK_EINVAL, "mk_demuxer_get_status: status is NULL") }
    guard sizeOK(status.pointee.struct_size, MemoryLayout<mk_asset_status>.size, "mk_asset_status") else { return MK_EINVAL }
    if let f = h.failure, h.failureMessage == nil { h.failureMessage = CString(f.description) }
    status.pointee = assetStatus(h.status, h.failure, h.failureMessage, size: status.pointee.struct_size)
    return MK_OK
}

/// The C form of a status and its failure.
func assetStatus(_ s: AssetStatus, _ failure: MediaError?, _ message: CString?, size: UInt32) -> mk_asset_status {
    let code: Int32
    switch s {
    case .unknown: code = MK_ASSET_UNKNOWN
    case .reading: code = MK_ASSET_READING
    case .writing: code = MK_ASSET_WRITING
    case .completed: code = MK_ASSET_COMPLETED
    case .failed: code = MK_ASSET_FAILED
    case .cancelled: code = MK_ASSET_CANCELLED
    }
    let failed = s == .failed
    return mk_asset_status(struct_size: size, status: code, error: failed ? failure.map { status(for: $0) } ?? MK_EFAIL : MK_OK,
                           message: failed ? message.map { UnsafePointer($0.pointer) } : nil)
}

@_cdecl("mk_demuxer_track_ended")
public func mk_demuxer_track_ended(_ d: OpaquePointer?, _ track: Int32, _ ended: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_track_ended") else { return MK_EINVAL }
    guard let ended else { return fail(MK_EINVAL, "mk_demuxer_track_ended: ended is NULL") }
    guard track >= 0 && Int(track) < h.demuxer.tracks.count else {
        return fail(MK_EINVAL, "mk_demuxer_track_ended: track \(track) does not exist (the file has \(h.demuxer.tracks.count))")
    }
    ended.pointee = h.ended.contains(Int(track)) ? 1 : 0
    return MK_OK
}

@_cdecl("mk_demuxer_cancel")
public func mk_demuxer_cancel(_ d: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_cancel") else { return MK_EINVAL }
    if h.status != .completed && h.status != .failed { h.status = .cancelled }
    return MK_OK
}

@_cdecl("mk_demuxer_warning_count")
public func mk_demuxer_warning_count(_ d: OpaquePointer?, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_warning_count") else { return MK_EINVAL }
    guard let count else { return fail(MK_EINVAL, "mk_demuxer_warning_count: count is NULL") }
    h.warningStrings = h.warnings.map { CString($0.description) }
    count.pointee = Int32(clamping: h.warningStrings.count)
    return MK_OK
}

@_cdecl("mk_demuxer_warning")
public func mk_demuxer_warning(_ d: OpaquePointer?, _ index: Int32, _ message: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_warning") else { return MK_EINVAL }
    guard let message else { return fail(MK_EINVAL, "mk_demuxer_warning: message is NULL") }
    message.pointee = nil
    let warnings = h.warnings
    guard index >= 0 && Int(index) < warnings.count else {
        return fail(MK_EINVAL, "mk_demuxer_warning: warning \(index) does not exist (there are \(warnings.count))")
    }
    if h.warningStrings.count != warnings.count { h.warningStrings = warnings.map { CString($0.description) } }
    message.pointee = UnsafePointer(h.warningStrings[Int(index)].pointer)
    return MK_OK
}

@_cdecl("mk_demuxer_read_packet")
public func mk_demuxer_read_packet(_ d: OpaquePointer?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_demuxer_read_packet: out is NULL") }
    out.pointee = nil
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_read_packet") else { return MK_EINVAL }
    return read(h, out, track: nil) { try h.demuxer.read() }
}

@_cdecl("mk_demuxer_read_track_packet")
public func mk_demuxer_read_track_packet(_ d: OpaquePointer?, _ track: Int32, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_demuxer_read_track_packet: out is NULL") }
    out.pointee = nil
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_read_track_packet") else { return MK_EINVAL }
    guard track >= 0 && Int(track) < h.demuxer.tracks.count else {
        return fail(MK_EINVAL, "mk_demuxer_read_track_packet: track \(track) does not exist (the file has \(h.demuxer.tracks.count))")
    }
    return read(h, out, track: Int(track)) { try h.demuxer.read(track: Int(track)) }
}

@_cdecl("mk_demuxer_seek")
public func mk_demuxer_seek(_ d: OpaquePointer?, _ seconds: Double) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_seek") else { return MK_EINVAL }
    return guarded {
        try h.demuxer.seek(to: seconds)
        h.ended = []
        if h.status == .completed { h.status = .reading }
        return MK_OK
    }
}

@_cdecl("mk_demuxer_select_tracks")
public func mk_demuxer_select_tracks(_ d: OpaquePointer?, _ tracks: UnsafePointer<Int32>?, _ count: Int32) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_select_tracks") else { return MK_EINVAL }
    if count == 0 {
        h.demuxer.select(tracks: nil)
        h.selected = nil
        return MK_OK
    }
    guard let tracks, count > 0 else { return fail(MK_EINVAL, "mk_demuxer_select_tracks: \(count) tracks from \(tracks == nil ? "NULL" : "a list")") }
    var set = Set<Int>()
    for i in 0..<Int(count) {
        let t = Int(tracks[i])
        guard t >= 0 && t < h.demuxer.tracks.count else {
            return fail(MK_EINVAL, "mk_demuxer_select_tracks: track \(t) does not exist (the file has \(h.demuxer.tracks.count))")
        }
        set.insert(t)
    }
    h.demuxer.select(tracks: set)
    h.selected = set
    return MK_OK
}

/// The 0.1 mk_packet_info ended at `size`.
private let packetInfoOldSize = MemoryLayout<mk_packet_info>.offset(of: \mk_packet_info.time_base_num)!

@_cdecl("mk_packet_get_info")
public func mk_packet_get_info(_ packet: OpaquePointer?, _ info: UnsafeMutablePointer<mk_packet_info>?) -> Int32 {
    guard let h = liveHandle(PacketHandle.self, packet, "mk_packet_get_info") else { return MK_EINVAL }
    guard let info else { return fail(MK_EINVAL, "mk_packet_get_info: info is NULL") }
    guard sizeOK(info.pointee.struct_size, packetInfoOldSize, "mk_packet_info") else { return MK_EINVAL }
    let p = h.packet
    var i = mk_packet_info()
    i.struct_size = info.pointee.struct_size
    i.track = Int32(clamping: p.trackIndex)
    i.pts = p.pts
    i.dts = p.dts
    i.duration = p.duration
    i.position = p.position
    i.is_keyframe = p.isKeyframe ? 1 : 0
    i.data = h.bytes
    i.size = p.data.count
    i.time_base_num = Int32(clamping: p.timeBase.numerator)
    i.time_base_den = Int32(clamping: p.timeBase.denominator)
    i.duration_stated = p.statedDuration != nil ? 1 : 0
    i.trim_start = Int32(clamping: p.trimStart)
    i.trim_end = Int32(clamping: p.trimEnd)
    i.truncated = p.isTruncated ? 1 : 0
    i.discard = p.isDiscarded ? 1 : 0
    i.parameters_changed = p.newParameters != nil ? 1 : 0
    copyOut(i, to: info, size: i.struct_size)
    return MK_OK
}

@_cdecl("mk_packet_create")
public func mk_packet_create(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ info: UnsafePointer<mk_packet_info>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_packet_create: out is NULL") }
    out.pointee = nil
    guard let info else { return fail(MK_EINVAL, "mk_packet_create: info is NULL") }
    guard sizeOK(info.pointee.struct_size, packetInfoOldSize, "mk_packet_info") else { return MK_EINVAL }
    let i = copyIn(mk_packet_info(), from: info, size: info.pointee.struct_size)
    guard i.size == 0 || i.data != nil else { return fail(MK_EINVAL, "mk_packet_create: data is NULL with size \(i.size)") }
    guard i.size <= 1 << 28 else { return fail(MK_EINVAL, "mk_packet_create: size \(i.size) is over the 256 MiB packet limit") }
    guard i.track >= 0 else { return fail(MK_EINVAL, "mk_packet_create: track \(i.track) is negative") }
    guard i.time_base_num >= 0, i.time_base_den >= 0, (i.time_base_num == 0) == (i.time_base_den == 0) else {
        return fail(MK_EINVAL, "mk_packet_create: time base \(i.time_base_num)/\(i.time_base_den) is not positive (0/0: unknown)")
    }
    guard i.trim_start >= 0, i.trim_end >= 0 else {
        return fail(MK_EINVAL, "mk_packet_create: trim_start \(i.trim_start) or trim_end \(i.trim_end) is negative")
    }
    let bytes = i.size > 0 ? Array(UnsafeBufferPointer(start: i.data, count: i.size)) : []
    var packet = Packet(trackIndex: Int(i.track), pts: i.pts, dts: i.dts,
                        statedDuration: i.duration != 0 || i.duration_stated != 0 ? i.duration : nil, isKeyframe: i.is_keyframe != 0,
                        position: -1, data: bytes,
                        timeBase: i.time_base_den > 0 ? Rational(Int64(i.time_base_num), Int64(i.time_base_den)) : Rational(1, 1))
    packet.trimStart = Int(i.trim_start)
    packet.trimEnd = Int(i.trim_end)
    packet.isTruncated = i.truncated != 0
    packet.isDiscarded = i.discard != 0
    out.pointee = Handles.make(PacketHandle(packet))
    return MK_OK
}

@_cdecl("mk_packet_free")
public func mk_packet_free(_ packet: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(packet, as: PacketHandle.self)
}

/// Track `track` of a live demuxer handle, or nil after fail() (a bad handle or index) naming `function`.
func demuxerTrack(_ demuxer: OpaquePointer?, _ track: Int32, _ function: String) -> Track? {
    guard let dh = liveHandle(DemuxerHandle.self, demuxer, function) else { return nil }
    let tracks = dh.demuxer.tracks
    guard track >= 0 && Int(track) < tracks.count else {
        _ = fail(MK_EINVAL, "\(function): track \(track) does not exist (the file has \(tracks.count))")
        return nil
    }
    return tracks[Int(track)]
}
