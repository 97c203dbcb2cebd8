// Tags, chapters, markers, instrument settings and attachments of an mk_demuxer (include/mediakit/metadata.h).
import CMediaKit
import Foundation
import MediaKit

/// The C strings and bytes the metadata calls lend out, made once per demuxer (its metadata
/// does not change after opening) and freed with it.
final class MetadataStrings {
    typealias Tag = (key: CString, native: CString, value: CString)
    let format: [Tag]
    let tracks: [[Tag]]
    let chapters: [(chapter: Chapter, title: CString)]
    let markers: [(marker: Marker, name: CString)]
    let attachments: [(attachment: Attachment, mime: CString, description: CString, fileName: CString, data: UnsafeMutableBufferPointer<UInt8>)]

    convenience init(_ d: Demuxer) {
        self.init(metadata: d.metadata, tracks: d.tracks.map(\.metadata), chapters: d.chapters, markers: d.markers, attachments: d.attachments)
    }

    /// The strings of tags, track tags, chapters, markers and attachments (a stream parser's: no tracks, no markers).
    init(metadata: Metadata, tracks trackTags: [Metadata], chapters chapterList: [Chapter], markers markerList: [Marker] = [],
         attachments attachmentList: [Attachment]) {
        func tags(_ m: Metadata) -> [Tag] { m.map { (CString($0.key), CString($0.nativeKey), CString($0.value)) } }
        format = tags(metadata)
        tracks = trackTags.map { tags($0) }
        chapters = chapterList.map { ($0, CString($0.title ?? "")) }
        markers = markerList.map { ($0, CString($0.name)) }
        attachments = attachmentList.map { a in
            let data = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: max(a.data.count, 1))
            _ = data.initialize(from: a.data)
            return (a, CString(a.mimeType), CString(a.description), CString(a.fileName), data)
        }
    }
    deinit { attachments.forEach { $0.data.deallocate() } }
}

func lend(_ tags: [MetadataStrings.Tag], _ index: Int32, _ name: String, _ key: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                  _ native: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let key, let value else { return fail(MK_EINVAL, "\(name): key or value is NULL") }
    key.pointee = nil
    value.pointee = nil
    native?.pointee = nil
    guard index >= 0 && Int(index) < tags.count else { return fail(MK_EINVAL, "\(name): tag \(index) does not exist (there are \(tags.count))") }
    let t = tags[Int(index)]
    key.pointee = UnsafePointer(t.key.pointer)
    native?.pointee = UnsafePointer(t.native.pointer)
    value.pointee = UnsafePointer(t.value.pointer)
    return MK_OK
}

/// The count calls: `n` of the demuxer's metadata, or nil with a message for a bad argument.
private func countOut(_ d: OpaquePointer?, _ name: String, _ count: UnsafeMutablePointer<Int32>?,
                      _ n: (MetadataStrings) -> Result<Int, MediaKitCError>) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, name) else { return MK_EINVAL }
    guard let count else { return fail(MK_EINVAL, "\(name): count is NULL") }
    switch n(h.metadataStrings) {
    case .success(let value): count.pointee = Int32(clamping: value); return MK_OK
    case .failure(let e): return fail(MK_EINVAL, "\(name): \(e.message)")
    }
}

/// A bad argument of a count call.
struct MediaKitCError: Error { let message: String }

@_cdecl("mk_demuxer_tag_count")
public func mk_demuxer_tag_count(_ d: OpaquePointer?, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    countOut(d, "mk_demuxer_tag_count", count) { .success($0.format.count) }
}

@_cdecl("mk_demuxer_tag_at")
public func mk_demuxer_tag_at(_ d: OpaquePointer?, _ index: Int32, _ key: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                              _ native: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_tag_at") else { return MK_EINVAL }
    return lend(h.metadataStrings.format, index, "mk_demuxer_tag_at", key, native, value)
}

@_cdecl("mk_track_tag_count")
public func mk_track_tag_count(_ d: OpaquePointer?, _ track: Int32, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    countOut(d, "mk_track_tag_count", count) { m in
        track >= 0 && Int(track) < m.tracks.count ? .success(m.tracks[Int(track)].count)
            : .failure(MediaKitCError(message: "track \(track) does not exist (there are \(m.tracks.count))"))
    }
}

@_cdecl("mk_track_tag_at")
public func mk_track_tag_at(_ d: OpaquePointer?, _ track: Int32, _ index: Int32, _ key: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                            _ native: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_track_tag_at") else { return MK_EINVAL }
    let tracks = h.metadataStrings.tracks
    guard track >= 0 && Int(track) < tracks.count else { return fail(MK_EINVAL, "mk_track_tag_at: track \(track) does not exist (there are \(tracks.count))") }
    return lend(tracks[Int(track)], index, "mk_track_tag_at", key, native, value)
}

@_cdecl("mk_demuxer_chapter_count")
public func mk_demuxer_chapter_count(_ d: OpaquePointer?, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    countOut(d, "mk_demuxer_chapter_count", count) { .success($0.chapters.count) }
}

@_cdecl("mk_demuxer_chapter_at")
public func mk_demuxer_chapter_at(_ d: OpaquePointer?, _ index: Int32, _ start: UnsafeMutablePointer<Int64>?, _ end: UnsafeMutablePointer<Int64>?,
                                  _ timeBaseNum: UnsafeMutablePointer<Int64>?, _ timeBaseDen: UnsafeMutablePointer<Int64>?,
                                  _ title: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_chapter_at") else { return MK_EINVAL }
    return lendChapter(h.metadataStrings, index, "mk_demuxer_chapter_at", start, end, timeBaseNum, timeBaseDen, title)
}

/// Chapter `index` of `strings` into the outputs (mk_demuxer_chapter_at, mk_stream_parser_chapter_at).
func lendChapter(_ strings: MetadataStrings, _ index: Int32, _ name: String, _ start: UnsafeMutablePointer<Int64>?, _ end: UnsafeMutablePointer<Int64>?,
                 _ timeBaseNum: UnsafeMutablePointer<Int64>?, _ timeBaseDen: UnsafeMutablePointer<Int64>?,
                 _ title: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let start, let end, let timeBaseNum, let timeBaseDen, let title else { return fail(MK_EINVAL, "\(name): an output pointer is NULL") }
    let chapters = strings.chapters
    guard index >= 0 && Int(index) < chapters.count else { return fail(MK_EINVAL, "\(name): chapter \(index) does not exist (there are \(chapters.count))") }
    let c = chapters[Int(index)]
    (start.pointee, end.pointee) = (c.chapter.start, c.chapter.end)
    (timeBaseNum.pointee, timeBaseDen.pointee) = (c.chapter.timeBase.numerator, c.chapter.timeBase.denominator)
    title.pointee = UnsafePointer(c.title.pointer)
    return MK_OK
}

@_cdecl("mk_demuxer_marker_count")
public func mk_demuxer_marker_count(_ d: OpaquePointer?, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    countOut(d, "mk_demuxer_marker_count", count) { .success($0.markers.count) }
}

@_cdecl("mk_demuxer_marker_at")
public func mk_demuxer_marker_at(_ d: OpaquePointer?, _ index: Int32, _ frame: UnsafeMutablePointer<Int64>?, _ id: UnsafeMutablePointer<Int32>?,
                                 _ name: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_marker_at") else { return MK_EINVAL }
    guard let frame, let name else { return fail(MK_EINVAL, "mk_demuxer_marker_at: frame or name is NULL") }
    let markers = h.metadataStrings.markers
    guard index >= 0 && Int(index) < markers.count else {
        return fail(MK_EINVAL, "mk_demuxer_marker_at: marker \(index) does not exist (there are \(markers.count))")
    }
    let m = markers[Int(index)]
    frame.pointee = m.marker.frame
    id?.pointee = Int32(clamping: m.marker.id)
    name.pointee = UnsafePointer(m.name.pointer)
    return MK_OK
}

@_cdecl("mk_demuxer_instrument")
public func mk_demuxer_instrument(_ d: OpaquePointer?, _ present: UnsafeMutablePointer<Int32>?, _ baseNote: UnsafeMutablePointer<Int32>?,
                                  _ detune: UnsafeMutablePointer<Int32>?, _ lowNote: UnsafeMutablePointer<Int32>?, _ highNote: UnsafeMutablePointer<Int32>?,
                                  _ lowVelocity: UnsafeMutablePointer<Int32>?, _ highVelocity: UnsafeMutablePointer<Int32>?,
                                  _ gain: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_instrument") else { return MK_EINVAL }
    guard let present else { return fail(MK_EINVAL, "mk_demuxer_instrument: present is NULL") }
    guard let i = h.demuxer.instrument else { present.pointee = 0; return MK_OK }
    present.pointee = 1
    for (out, value) in [(baseNote, i.baseNote), (detune, i.detune), (lowNote, i.lowNote), (highNote, i.highNote),
                         (lowVelocity, i.lowVelocity), (highVelocity, i.highVelocity), (gain, i.gain)] {
        out?.pointee = Int32(clamping: value)
    }
    return MK_OK
}

@_cdecl("mk_demuxer_instrument_loop")
public func mk_demuxer_instrument_loop(_ d: OpaquePointer?, _ loop: Int32, _ playMode: UnsafeMutablePointer<Int32>?,
                                       _ beginMarker: UnsafeMutablePointer<Int32>?, _ endMarker: UnsafeMutablePointer<Int32>?,
                                       _ beginFrame: UnsafeMutablePointer<Int64>?, _ endFrame: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_instrument_loop") else { return MK_EINVAL }
    guard let playMode else { return fail(MK_EINVAL, "mk_demuxer_instrument_loop: play_mode is NULL") }
    guard loop == 0 || loop == 1 else { return fail(MK_EINVAL, "mk_demuxer_instrument_loop: loop \(loop) does not exist (0: sustain, 1: release)") }
    guard let i = h.demuxer.instrument else {
        return fail(MK_EINVAL, "mk_demuxer_instrument_loop: the file has no instrument settings (no INST chunk)")
    }
    let l = loop == 0 ? i.sustainLoop : i.releaseLoop
    playMode.pointee = Int32(clamping: l.playMode)
    beginMarker?.pointee = Int32(clamping: l.beginMarker)
    endMarker?.pointee = Int32(clamping: l.endMarker)
    beginFrame?.pointee = l.beginFrame ?? -1
    endFrame?.pointee = l.endFrame ?? -1
    return MK_OK
}

@_cdecl("mk_demuxer_attachment_count")
public func mk_demuxer_attachment_count(_ d: OpaquePointer?, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    countOut(d, "mk_demuxer_attachment_count", count) { .success($0.attachments.count) }
}

@_cdecl("mk_demuxer_attachment_at")
public func mk_demuxer_attachment_at(_ d: OpaquePointer?, _ index: Int32, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                     _ size: UnsafeMutablePointer<Int64>?, _ mime: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                     _ pictureType: UnsafeMutablePointer<Int32>?, _ description: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                     _ fileName: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(DemuxerHandle.self, d, "mk_demuxer_attachment_at") else { return MK_EINVAL }
    return lendAttachment(h.metadataStrings, index, "mk_demuxer_attachment_at", data, size, mime, pictureType, description, fileName)
}

/// Attachment `index` of `strings` into the outputs (mk_demuxer_attachment_at, mk_stream_parser_attachment_at).
func lendAttachment(_ strings: MetadataStrings, _ index: Int32, _ name: String, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                    _ size: UnsafeMutablePointer<Int64>?, _ mime: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                    _ pictureType: UnsafeMutablePointer<Int32>?, _ description: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                    _ fileName: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let data, let size, let mime, let pictureType else { return fail(MK_EINVAL, "\(name): data, size, mime or picture_type is NULL") }
    let list = strings.attachments
    guard index >= 0 && Int(index) < list.count else { return fail(MK_EINVAL, "\(name): attachment \(index) does not exist (there are \(list.count))") }
    let a = list[Int(index)]
    data.pointee = UnsafePointer(a.data.baseAddress)
    size.pointee = Int64(a.attachment.data.count)
    mime.pointee = UnsafePointer(a.mime.pointer)
    pictureType.pointee = Int32(a.attachment.pictureType ?? -1)
    description?.pointee = UnsafePointer(a.description.pointer)
    fileName?.pointee = UnsafePointer(a.fileName.pointer)
    return MK_OK
}
