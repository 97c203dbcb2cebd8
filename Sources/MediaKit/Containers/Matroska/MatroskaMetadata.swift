import Foundation

/// Element ids of Matroska Tags, Chapters and Attachments beyond those the demuxer reads for
/// packets (RFC 9559 sections 5.1.7-5.1.8, matroska.org Tags).
enum MKVMetaID {
    static let targetTypeValue: UInt32 = 0x68CA, targetType: UInt32 = 0x63CA, tagChapterUID: UInt32 = 0x63C4
    static let tagAttachmentUID: UInt32 = 0x63C6, tagLanguage: UInt32 = 0x447A, tagDefault: UInt32 = 0x4484
    static let chapterUID: UInt32 = 0x73C4, fileDescription: UInt32 = 0x467E, dateUTC: UInt32 = 0x4461
}

/// Matroska Tags, Chapters and Attachments as the metadata model, with FFmpeg 5.1's reading
/// (libavformat/matroskadec.c matroska_convert_tag / matroska_convert_tags, ff_mkv_metadata_conv).
enum MatroskaMetadata {
    /// FFmpeg's renames of Matroska tag names (ff_mkv_metadata_conv), compared in any case.
    static let ffmpegNames = ["LEAD_PERFORMER": "performer", "PART_NUMBER": "track"]

    /// One Tag element: where it points and its SimpleTags as (key, value) in FFmpeg's naming.
    struct Tag {
        var trackUID: UInt64?
        var chapterUID: UInt64?
        var attachmentUID: UInt64?
        var targetType = ""
        var entries: [MetadataEntry] = []
    }

    /// Reads the Tag elements of a Tags body.
    static func tags(_ w: inout EBMLWalker, limit: Int) throws -> [Tag] {
        var out: [Tag] = []
        var count = 0
        while let e = try w.next() {
            guard e.id == MKVID.tag else { continue }
            var t = w.children(of: e)
            var tag = Tag()
            var simple: [MetadataEntry] = []
            while let c = try t.next() {
                if c.id == MKVID.targets {
                    var k = t.children(of: c)
                    while let x = try k.next() {
                        switch x.id {
                        case MKVID.tagTrackUID: tag.trackUID = try k.uint(x)
                        case MKVMetaID.tagChapterUID: tag.chapterUID = try k.uint(x)
                        case MKVMetaID.tagAttachmentUID: tag.attachmentUID = try k.uint(x)
                        case MKVMetaID.targetType: tag.targetType = k.string(x)
                        default: break
                        }
                    }
                } else if c.id == MKVID.simpleTag {
                    try simpleTag(&t, c, prefix: nil, into: &simple, count: &count, limit: limit)
                }
            }
            tag.entries = simple
            out.append(tag)
        }
        return out
    }

    /// One SimpleTag (and the SimpleTags nested in it, named "PARENT/CHILD"), as
    /// matroska_convert_tag names it: the name when TagDefault is set or the language is
    /// "und", and "NAME-lang" for another language (TagDefault is 0 unless stated, as FFmpeg
    /// reads it).
    private static func simpleTag(_ parent: inout EBMLWalker, _ element: EBMLElement, prefix: String?, into out: inout [MetadataEntry],
                                  count: inout Int, limit: Int) throws {
        var s = parent.children(of: element)
        var name = "", value = "", language = "und", isDefault = false
        var nested: [EBMLElement] = []
        while let x = try s.next() {
            switch x.id {
            case MKVID.tagName: name = s.string(x)
            case MKVID.tagString: value = s.string(x)
            case MKVMetaID.tagLanguage: language = s.string(x)
            case MKVMetaID.tagDefault, 0x44B4: isDefault = try s.uint(x) != 0   // TagDefault, and the 0x44B4 some writers used
            case MKVID.simpleTag: nested.append(x)
            default: break
            }
        }
        guard !name.isEmpty, count < limit else { return }
        let full = prefix.map { $0 + "/" + name } ?? name
        let lang: String? = language.isEmpty || language == "und" ? nil : language
        var keys: [String] = []
        if isDefault || lang == nil { keys.append(full) }
        if let lang { keys.append(full + "-" + lang) }
        for key in keys {
            count += 1
            out.append(MetadataEntry(key: MetadataKeys.key(name), nativeKey: full, ffmpegKey: ffmpegNames[key.uppercased()] ?? key, value: value))
            for n in nested { try simpleTag(&s, n, prefix: key, into: &out, count: &count, limit: limit) }
        }
    }

    /// A DateUTC (nanoseconds since 2001-01-01 00:00 UTC) as FFmpeg prints a creation time:
    /// "2025-01-02T19:59:28.000000Z".
    static func creationTime(_ ns: Int64) -> String {
        let us = ns / 1000 + 978_307_200_000_000
        let seconds = us >= 0 ? us / 1_000_000 : (us - 999_999) / 1_000_000
        let micro = us - seconds * 1_000_000
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "UTC")
        f.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
        return f.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))) + String(format: ".%06lldZ", micro)
    }

    /// Reads the chapter atoms of every edition: (uid, start ns, end ns or nil, title).
    static func chapters(_ w: inout EBMLWalker, limit: Int) throws -> [Chapter] {
        var out: [Chapter] = []
        while let e = try w.next() {
            guard e.id == MKVID.editionEntry else { continue }
            var ed = w.children(of: e)
            while let a = try ed.next() {
                guard a.id == MKVID.chapterAtom, out.count < limit else { continue }
                var c = ed.children(of: a)
                var uid: UInt64 = 0, start: Int64 = Packet.noTimestamp, end = Chapter.unknownEnd, title: String?
                while let x = try c.next() {
                    switch x.id {
                    case MKVMetaID.chapterUID: uid = try c.uint(x)
                    case MKVID.chapterTimeStart: start = Int64(clamping: try c.uint(x))
                    case MKVID.chapterTimeEnd: end = Int64(clamping: try c.uint(x))
                    case MKVID.chapterDisplay:
                        var d = c.children(of: x)
                        // FFmpeg keeps the last ChapString it reads.
                        while let s = try d.next() { if s.id == MKVID.chapString { title = d.string(s) } }
                    default: break
                    }
                }
                var m = Metadata()
                if let title { m.append(key: "title", nativeKey: "ChapString", ffmpegKey: "title", value: title) }
                out.append(Chapter(id: Int64(bitPattern: uid), timeBase: Rational(1, 1_000_000_000), start: start, end: end, metadata: m))
            }
        }
        // FFmpeg keeps chapters with a start and a UID whose start grows (matroska_read_header).
        var kept: [Chapter] = []
        var maxStart: Int64 = 0
        for c in out where c.start != Packet.noTimestamp && c.id != 0 && (maxStart == 0 || c.start > maxStart) {
            maxStart = c.start
            kept.append(c)
        }
        return kept
    }

    /// Reads the AttachedFile elements: the model's attachments with their UIDs.
    static func attachments(_ w: inout EBMLWalker, limit: Int) throws -> [(uid: UInt64, attachment: Attachment)] {
        var out: [(uid: UInt64, attachment: Attachment)] = []
        while let e = try w.next() {
            guard e.id == MKVID.attachedFile, out.count < limit else { continue }
            var f = w.children(of: e)
            var a = Attachment(data: [], mimeType: "")
            var uid: UInt64 = 0
            while let x = try f.next() {
                switch x.id {
                case MKVID.fileName: a.fileName = f.string(x)
                case MKVID.fileMimeType: a.mimeType = f.string(x)
                case MKVMetaID.fileDescription: a.description = f.string(x)
                case MKVID.fileData: a.data = Array(f.bytes[x.data])
                case 0x46AE: uid = try f.uint(x)   // FileUID
                default: break
                }
            }
            // FFmpeg shows image attachments as cover pictures (attached_pic streams).
            if ["image/jpeg", "image/png", "image/gif", "image/bmp", "image/tiff", "image/webp"].contains(a.mimeType.lowercased()) { a.pictureType = 0 }
            out.append((uid, a))
        }
        return out
    }
}
