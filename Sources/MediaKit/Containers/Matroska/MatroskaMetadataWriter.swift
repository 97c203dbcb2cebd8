import Foundation

/// Matroska Tags, Chapters and Attachments written from the metadata model (RFC 9559 sections
/// 5.1.7-5.1.8, matroska.org Tags), as FFmpeg 5.1's matroska muxer writes them: a tag name is
/// FFmpeg's key upper-cased with spaces as underscores (`track` as PART_NUMBER, `performer` as
/// LEAD_PERFORMER); the container's `title` is Info's Title and a track's `title` its Name,
/// not tags; a track's `language` is its Language element.
enum MatroskaMetadataWriter {
    /// FFmpeg's renames when writing (ff_mkv_metadata_conv, the reverse of the reading side).
    static let names = ["track": "PART_NUMBER", "performer": "LEAD_PERFORMER"]

    /// The SimpleTag name of an entry.
    static func tagName(_ e: MetadataEntry) -> String {
        let key = e.ffmpegKey
        if let n = names[key.lowercased()] { return n }
        return key.uppercased().replacingOccurrences(of: " ", with: "_")
    }

    /// True for the entries written elsewhere (Info's Title, a track's Name or Language).
    static func isElement(_ e: MetadataEntry) -> Bool {
        let k = e.ffmpegKey.lowercased()
        return k == "title" || k == "language"
    }

    /// The Tags element: the container's tags (TargetTypeValue 50, an album / movie), then a
    /// Tag for each track's (TagTrackUID: the muxer's track number); empty when none.
    static func tags(_ m: MuxMetadata, trackUID: (Int) -> UInt64?) -> [UInt8] {
        func simpleTags(_ entries: [MetadataEntry]) -> [UInt8] {
            var out: [UInt8] = []
            for e in entries where !isElement(e) && !e.value.isEmpty && !e.ffmpegKey.isEmpty {
                out += MatroskaMuxer.element(MKVID.simpleTag, MatroskaMuxer.string(MKVID.tagName, tagName(e))
                                             + MatroskaMuxer.string(MKVID.tagString, e.value))
            }
            return out
        }
        var tags: [UInt8] = []
        let global = simpleTags(Array(m.tags))
        if !global.isEmpty {
            tags += MatroskaMuxer.element(MKVID.tag, MatroskaMuxer.element(MKVID.targets, MatroskaMuxer.uint(MKVMetaID.targetTypeValue, 50)) + global)
        }
        for (track, t) in m.trackTags.sorted(by: { $0.key < $1.key }) {
            guard let uid = trackUID(track) else { continue }
            let s = simpleTags(Array(t))
            if !s.isEmpty {
                tags += MatroskaMuxer.element(MKVID.tag, MatroskaMuxer.element(MKVID.targets, MatroskaMuxer.uint(MKVID.tagTrackUID, uid)) + s)
            }
        }
        return tags.isEmpty ? [] : MatroskaMuxer.element(MKVID.tags, tags)
    }

    /// The Chapters element: one EditionEntry whose ChapterAtoms have their start and end in
    /// nanoseconds and a ChapterDisplay with the title; ChapterUIDs are the chapters' ids when
    /// they are positive and distinct, else 1, 2, 3 ...; empty when there is no chapter.
    static func chapters(_ list: [Chapter]) -> [UInt8] {
        guard !list.isEmpty else { return [] }
        let ids = list.map(\.id)
        let keepIDs = ids.allSatisfy { $0 > 0 } && Set(ids).count == ids.count
        var atoms: [UInt8] = []
        let ns = Rational(1, 1_000_000_000)
        for (i, c) in list.enumerated() {
            let start = max(0, Rational.rescale(c.start, from: c.timeBase, to: ns))
            let end = max(start, Rational.rescale(c.end, from: c.timeBase, to: ns))
            var atom = MatroskaMuxer.uint(MKVMetaID.chapterUID, UInt64(keepIDs ? c.id : Int64(i + 1)))
                + MatroskaMuxer.uint(MKVID.chapterTimeStart, UInt64(start)) + MatroskaMuxer.uint(MKVID.chapterTimeEnd, UInt64(end))
            if let title = c.shownTitle {
                atom += MatroskaMuxer.element(MKVID.chapterDisplay, MatroskaMuxer.string(MKVID.chapString, title)
                                              + MatroskaMuxer.string(chapLanguage, "und"))
            }
            atoms += MatroskaMuxer.element(MKVID.chapterAtom, atom)
        }
        return MatroskaMuxer.element(MKVID.chapters, MatroskaMuxer.element(MKVID.editionEntry, atoms))
    }

    /// ChapLanguage (RFC 9559 section 5.1.7.1.4.11).
    static let chapLanguage: UInt32 = 0x437C
    /// FileUID (RFC 9559 section 5.1.6.1.5).
    static let fileUID: UInt32 = 0x46AE

    /// The Attachments element: an AttachedFile for each attachment (its file name, else
    /// "cover.jpg" / "cover.png" for a front cover and "picture-N.ext" for another picture, as
    /// the Matroska attachment conventions name cover art), FileUIDs 1, 2, 3 ...; empty when none.
    static func attachments(_ list: [Attachment]) -> [UInt8] {
        guard !list.isEmpty else { return [] }
        var files: [UInt8] = []
        for (i, a) in list.enumerated() {
            var name = a.fileName
            if name.isEmpty {
                let mime = a.mimeType.lowercased()
                let ext = mime == "image/png" ? "png" : mime == "image/jpeg" || mime == "image/jpg" ? "jpg"
                    : mime.hasPrefix("image/") ? String(mime.dropFirst(6)) : "bin"
                name = (a.pictureType == 3 && !list[..<i].contains { $0.pictureType == 3 } ? "cover" : "picture-\(i + 1)") + "." + ext
            }
            var f: [UInt8] = []
            if !a.description.isEmpty { f += MatroskaMuxer.string(MKVMetaID.fileDescription, a.description) }
            f += MatroskaMuxer.string(MKVID.fileName, name)
            f += MatroskaMuxer.string(MKVID.fileMimeType, a.mimeType.isEmpty ? "application/octet-stream" : a.mimeType)
            f += MatroskaMuxer.element(MKVID.fileData, a.data)
            f += MatroskaMuxer.uint(fileUID, UInt64(i + 1))
            files += MatroskaMuxer.element(MKVID.attachedFile, f)
        }
        return MatroskaMuxer.element(MKVID.attachments, files)
    }
}
