import Foundation

/// The write side of the tag tables: ``MetadataEntry`` -> the names and bytes each tag format
/// stores, the reverse of ``MetadataKeys``, ``ID3Metadata``, ``VorbisComment`` and
/// ``ChunkMetadata`` (which read them), following FFmpeg 5.1's muxers where they write the same
/// tag (libavformat/vorbiscomment.c, id3v2enc.c, riffenc.c).
enum MetadataWriting {
    // MARK: - Vorbis comments

    /// Normalised key -> Vorbis comment field name (xiph.org's recommended names, the de-facto
    /// ALBUMARTIST / TRACKTOTAL / DISCTOTAL and MusicBrainz Picard's names); `comment` is
    /// DESCRIPTION, as FFmpeg writes it (ff_vorbiscomment_metadata_conv).
    static let vorbisNames: [String: String] = {
        var m: [String: String] = [
            "title": "TITLE", "artist": "ARTIST", "album_artist": "ALBUMARTIST", "album": "ALBUM", "track": "TRACKNUMBER",
            "track_total": "TRACKTOTAL", "disc": "DISCNUMBER", "disc_total": "DISCTOTAL", "date": "DATE", "genre": "GENRE",
            "comment": "DESCRIPTION", "composer": "COMPOSER", "lyrics": "LYRICS", "encoded_by": "ENCODED_BY", "language": "LANGUAGE",
            "copyright": "COPYRIGHT", "publisher": "ORGANIZATION", "performer": "PERFORMER", "isrc": "ISRC", "compilation": "COMPILATION",
        ]
        for k in MetadataKeys.aliases.values where k.hasPrefix("musicbrainz_") || k.hasPrefix("replaygain_") { m[k] = k.uppercased() }
        return m
    }()

    /// The field name an entry is written under: the name libavformat shows it under when that
    /// is a container's own name (a Vorbis comment or Matroska tag name as written: "COMMENT",
    /// "DATE_RELEASED"; an ID3 frame id or TXXX description without a normalised key), as
    /// FFmpeg copies it; the normalised key's Vorbis name when libavformat shows a generic name
    /// ("title", "album_artist") or an ID3 TXXX description with a normalised key
    /// ("MusicBrainz Album Id" -> MUSICBRAINZ_ALBUMID).
    static func vorbisName(_ e: MetadataEntry) -> String {
        let key = e.key.lowercased(), shown = e.ffmpegKey
        let generic = shown == shown.lowercased() || shown.contains(" ")
        let name = generic ? vorbisNames[key] ?? shown : shown
        // A field name is printable ASCII without "=" (Vorbis I, section 5.2.3).
        return String(String.UnicodeScalarView(name.unicodeScalars.map { (0x20...0x7D).contains($0.value) && $0 != "=" ? $0 : "_" }))
    }

    /// A Vorbis comment body (vendor, fields) without framing: `KEY=value` fields for `tags`,
    /// then the chapters as FFmpeg writes them (`CHAPTER000=00:01:02.500`, `CHAPTER000NAME=`
    /// for the title: the OGM convention), then a METADATA_BLOCK_PICTURE field for each picture
    /// (Ogg; FLAC keeps its pictures in PICTURE blocks).
    static func vorbisComment(vendor: String, tags: [MetadataEntry], chapters: [Chapter] = [], pictures: [Attachment] = []) -> [UInt8] {
        var fields: [[UInt8]] = tags.map { Array((vorbisName($0) + "=" + $0.value).utf8) }
        for (i, c) in chapters.enumerated() where i < 1000 {
            let ms = max(0, Rational.rescale(c.start, from: c.timeBase, to: Rational(1, 1000)))
            let number = String(format: "CHAPTER%03d", i)
            fields.append(Array((number + String(format: "=%02lld:%02lld:%02lld.%03lld", ms / 3_600_000, ms / 60000 % 60, ms / 1000 % 60, ms % 1000)).utf8))
            if let title = c.shownTitle { fields.append(Array((number + "NAME=" + title).utf8)) }
        }
        for p in pictures {
            fields.append(Array("METADATA_BLOCK_PICTURE=".utf8) + Array(Data(flacPicture(p)).base64EncodedString().utf8))
        }
        let v = Array(vendor.utf8)
        var out = le32(v.count) + v + le32(fields.count)
        for f in fields { out += le32(f.count) + f }
        return out
    }

    /// A FLAC PICTURE block body (FLAC format, METADATA_BLOCK_PICTURE): type, MIME type,
    /// description, width, height, depth 0, colours 0, the picture's bytes.
    static func flacPicture(_ p: Attachment) -> [UInt8] {
        let mime = Array(p.mimeType.utf8), description = Array(p.description.utf8)
        return be32(p.pictureType ?? 3) + be32(mime.count) + mime + be32(description.count) + description
            + be32(p.width) + be32(p.height) + be32(0) + be32(0) + be32(p.data.count) + p.data
    }

    // MARK: - ID3v2.4

    /// Normalised key -> ID3v2.4 text frame (the reverse of ``ID3Metadata/normalised``).
    static let id3Frames: [String: String] = [
        "title": "TIT2", "artist": "TPE1", "album_artist": "TPE2", "album": "TALB", "track": "TRCK", "disc": "TPOS",
        "date": "TDRC", "genre": "TCON", "composer": "TCOM", "encoded_by": "TENC", "language": "TLAN", "copyright": "TCOP",
        "publisher": "TPUB", "isrc": "TSRC", "performer": "TPE3", "compilation": "TCMP", "grouping": "TIT1",
        "album-sort": "TSOA", "artist-sort": "TSOP", "title-sort": "TSOT", "bpm": "TBPM", "creation_time": "TDEN",
        "encoder": "TSSE",
    ]

    /// Normalised key -> TXXX description (MusicBrainz Picard's names, ReplayGain's).
    static let id3UserNames: [String: String] = [
        "musicbrainz_trackid": "MusicBrainz Track Id", "musicbrainz_albumid": "MusicBrainz Album Id",
        "musicbrainz_artistid": "MusicBrainz Artist Id", "musicbrainz_albumartistid": "MusicBrainz Album Artist Id",
        "musicbrainz_releasegroupid": "MusicBrainz Release Group Id", "musicbrainz_releasetrackid": "MusicBrainz Release Track Id",
        "musicbrainz_workid": "MusicBrainz Work Id", "replaygain_track_gain": "REPLAYGAIN_TRACK_GAIN",
        "replaygain_track_peak": "REPLAYGAIN_TRACK_PEAK", "replaygain_album_gain": "REPLAYGAIN_ALBUM_GAIN",
        "replaygain_album_peak": "REPLAYGAIN_ALBUM_PEAK", "track_total": "TRACKTOTAL", "disc_total": "DISCTOTAL",
    ]

    /// An ID3v2.4 tag (id3.org ID3v2.4.0 structure and frames; text in UTF-8, encoding 3) for
    /// `tags`, `pictures` (APIC) and `chapters` (CHAP with a TIT2 sub-frame, and a CTOC listing
    /// them), with `padding` zero bytes; empty when there is nothing to write. A track and its
    /// total become one TRCK "3/12" (TPOS for discs); values of a repeated frame are one frame,
    /// NUL-separated; COMM and USLT are written with the language "eng".
    static func id3v2(tags: [MetadataEntry], pictures: [Attachment], chapters: [Chapter], padding: Int = 0) -> [UInt8] {
        var text: [(id: String, values: [String])] = []
        var user: [(description: String, values: [String])] = []
        var frames: [[UInt8]] = []
        for e in withTotals(tags) {
            let key = e.key.lowercased()
            if key.hasPrefix("id3v2_priv.") {
                // PRIV: the owner, then the bytes as libavformat shows them (\xNN escapes undone).
                frames.append(frame("PRIV", Array(e.key.dropFirst(11).utf8) + [0] + unescaped(e.value)))
            } else if key == "comment" || key == "lyrics" {
                let id = key == "comment" ? "COMM" : "USLT"
                frames.append(frame(id, [3] + Array("eng".utf8) + [0] + Array(e.value.utf8)))
            } else if let id = id3Frames[key] ?? (isTextFrameID(e.ffmpegKey) ? e.ffmpegKey : nil) {
                if let i = text.firstIndex(where: { $0.id == id }) { text[i].values.append(e.value) } else { text.append((id, [e.value])) }
            } else {
                let d = id3UserNames[key] ?? e.ffmpegKey
                if let i = user.firstIndex(where: { $0.description == d }) { user[i].values.append(e.value) } else { user.append((d, [e.value])) }
            }
        }
        var body: [UInt8] = []
        for t in text { body += frame(t.id, [3] + Array(t.values.joined(separator: "\0").utf8)) }
        for u in user { body += frame("TXXX", [3] + Array(u.description.utf8) + [0] + Array(u.values.joined(separator: "\0").utf8)) }
        for f in frames { body += f }
        for p in pictures {
            body += frame("APIC", [3] + Array(p.mimeType.utf8) + [0, UInt8(clamping: p.pictureType ?? 3)] + Array(p.description.utf8) + [0] + p.data)
        }
        if !chapters.isEmpty {
            var ids: [String] = []
            for (i, c) in chapters.enumerated() {
                let element = "ch\(i)"
                ids.append(element)
                let start = Rational.rescale(c.start, from: c.timeBase, to: Rational(1, 1000))
                let end = Rational.rescale(c.end, from: c.timeBase, to: Rational(1, 1000))
                var sub: [UInt8] = []
                if let title = c.shownTitle { sub = frame("TIT2", [3] + Array(title.utf8)) }
                body += frame("CHAP", Array(element.utf8) + [0] + be32(Int(clamping: max(0, min(start, 0xFFFF_FFFF))))
                              + be32(Int(clamping: max(0, min(end, 0xFFFF_FFFF)))) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF] + sub)
            }
            // One top-level, ordered table of contents (flags 0x03) listing every chapter.
            var toc = Array("toc".utf8) + [0, 0x03, UInt8(clamping: ids.count)]
            for id in ids { toc += Array(id.utf8) + [0] }
            body += frame("CTOC", toc)
        }
        guard !body.isEmpty else { return [] }
        body += [UInt8](repeating: 0, count: padding)
        return Array("ID3".utf8) + [4, 0, 0] + syncsafe(body.count) + body
    }

    /// `tags` with a track number and its total as one "3/12" value (TRCK), a disc and its
    /// total as one (TPOS), the total's entry removed.
    static func withTotals(_ tags: [MetadataEntry]) -> [MetadataEntry] {
        var entries = tags
        for (number, total) in [("track", "track_total"), ("disc", "disc_total")] {
            if let n = entries.firstIndex(where: { $0.key == number }), !entries[n].value.contains("/"),
               let t = entries.firstIndex(where: { $0.key == total }) {
                entries[n].value += "/" + entries[t].value
                entries.remove(at: t)
            }
        }
        return entries
    }

    // MARK: - ID3v2.3

    /// The text frames FFmpeg writes into an ID3v2.3 tag (id3v2.c `ff_id3v2_tags` and
    /// `ff_id3v2_3_tags`); a tag without one of them becomes a TXXX frame.
    static let id3v23TextFrames: Set<String> = [
        "TALB", "TBPM", "TCOM", "TCON", "TCOP", "TDLY", "TENC", "TEXT", "TFLT", "TIT1", "TIT2", "TIT3", "TKEY", "TLAN", "TLEN", "TMED",
        "TOAL", "TOFN", "TOLY", "TOPE", "TOWN", "TPE1", "TPE2", "TPE3", "TPE4", "TPOS", "TPUB", "TRCK", "TRSN", "TRSO", "TSRC", "TSSE",
        "TDAT", "TIME", "TORY", "TRDA", "TSIZ", "TYER",
    ]

    /// An ID3v2 tag of `version` 3 or 4 (anything else: 4) for `tags`, `pictures` and
    /// `chapters`: ``id3v2_3(tags:pictures:chapters:padding:)`` or
    /// ``id3v2(tags:pictures:chapters:padding:)``.
    static func id3v2(version: Int, tags: [MetadataEntry], pictures: [Attachment], chapters: [Chapter], padding: Int = 0) -> [UInt8] {
        version == 3 ? id3v2_3(tags: tags, pictures: pictures, chapters: chapters, padding: padding)
            : id3v2(tags: tags, pictures: pictures, chapters: chapters, padding: padding)
    }

    /// An ID3v2.3 tag (id3.org ID3v2.3.0) laid out as FFmpeg 5.1's id3v2enc.c writes one with
    /// `-id3v2_version 3`: a frame per tag in the tags' order (libavformat's dictionary order
    /// when they were copied: ``MetadataCopyOptions``), then a CTOC listing the chapters and a CHAP for each
    /// (its title a TIT2 sub-frame), then an APIC per picture, then `padding` zero bytes. Text
    /// is ISO-8859-1 when every string of the frame is ASCII, else UTF-16 with a byte order
    /// mark (encoding 1), each string NUL-terminated; frame sizes are plain 32-bit numbers
    /// (ID3v2.3 has no syncsafe frame sizes), the tag's size syncsafe; no frame flags. Frames
    /// are chosen by the key libavformat gives each tag, as FFmpeg chooses them
    /// (``id3v23Frames(_:)``): the date becomes TYER (the year) and, for "YYYY-MM-DD", TDAT
    /// ("DDMM"); a tag without an ID3v2.3 frame (one of ID3v2.4 only, such as TDRC, TSOP, or a
    /// name such as LABEL) becomes a TXXX frame under that key. As in the ID3v2.4 tag, a comment
    /// and lyrics are COMM and USLT frames (FFmpeg writes TXXX "comment"; its reader shows both
    /// as "comment") and a track or disc with its total one "n/total" frame (FFmpeg keeps a
    /// Vorbis TRACKTOTAL as TXXX).
    /// Empty when there is nothing to write and no padding.
    static func id3v2_3(tags: [MetadataEntry], pictures: [Attachment], chapters: [Chapter], padding: Int = 0) -> [UInt8] {
        let entries = withTotals(tags)
        // One frame per id (TXXX: per description), its values in the order they came.
        var frames: [(id: String, strings: [String])] = []
        for e in entries {
            if e.key.lowercased().hasPrefix("id3v2_priv.") {
                frames.append(("PRIV", [String(e.key.dropFirst(11)), e.value]))
                continue
            }
            for (id, strings) in id3v23Frames(e) {
                if id == "PRIV" {
                    frames.append((id, strings))
                } else if id == "TXXX" || id == "COMM" || id == "USLT",
                   let i = frames.firstIndex(where: { $0.id == id && $0.strings.first == strings.first }) {
                    frames[i].strings += strings.dropFirst()
                } else if id != "TXXX" && id != "COMM" && id != "USLT", let i = frames.firstIndex(where: { $0.id == id }) {
                    frames[i].strings += strings
                } else {
                    frames.append((id, strings))
                }
            }
        }
        var body: [UInt8] = []
        for f in frames {
            if f.id == "PRIV" {
                // The owner, then the bytes as libavformat shows them (\xNN escapes undone).
                body += frame23("PRIV", Array(f.strings[0].utf8) + [0] + unescaped(f.strings[1]))
                continue
            }
            let t = text23(f.strings)
            body += frame23(f.id, f.id == "COMM" || f.id == "USLT" ? [t[0]] + Array("eng".utf8) + t.dropFirst() : t)
        }
        if !chapters.isEmpty {
            // The CTOC counts its entries in one byte: 255 chapters at most.
            let listed = chapters.prefix(255)
            var toc = Array("toc".utf8) + [0, 0x03, UInt8(clamping: listed.count)]
            for i in listed.indices { toc += Array("ch\(i)".utf8) + [0] }
            body += frame23("CTOC", toc)
            for (i, c) in listed.enumerated() {
                let start = Rational.rescale(c.start, from: c.timeBase, to: Rational(1, 1000))
                let end = Rational.rescale(c.end, from: c.timeBase, to: Rational(1, 1000))
                var chap = Array("ch\(i)".utf8) + [0] + be32(Int(clamping: max(0, min(start, 0xFFFF_FFFF))))
                    + be32(Int(clamping: max(0, min(end, 0xFFFF_FFFF)))) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
                if let title = c.shownTitle { chap += frame23("TIT2", text23([title])) }
                body += frame23("CHAP", chap)
            }
        }
        for p in pictures {
            let description = text23([p.description])
            body += frame23("APIC", [description[0]] + Array(p.mimeType.utf8) + [0, UInt8(clamping: p.pictureType ?? 3)] + description.dropFirst() + p.data)
        }
        // With padding, a tag without frames is still written (FFmpeg's mp3 muxer always
        // writes its tag: a header and 10 zero bytes).
        guard !body.isEmpty || padding > 0 else { return [] }
        body += [UInt8](repeating: 0, count: padding)
        return Array("ID3".utf8) + [3, 0, 0] + syncsafe(body.count) + body
    }

    /// FFmpeg's generic tag names -> ID3v2 text frames (id3v2.c `ff_id3v2_34_metadata_conv`,
    /// matched in any case), for the ID3v2.3 tag.
    static let id3v2GenericFrames: [String: String] = [
        "album": "TALB", "composer": "TCOM", "genre": "TCON", "copyright": "TCOP", "encoded_by": "TENC", "title": "TIT2",
        "language": "TLAN", "artist": "TPE1", "album_artist": "TPE2", "performer": "TPE3", "disc": "TPOS", "publisher": "TPUB",
        "track": "TRCK", "encoder": "TSSE",
    ]

    /// The ID3v2.3 frames of one tag as (frame id, strings), by the key libavformat gives the
    /// tag, as FFmpeg's id3v2enc.c picks them: a generic name's frame
    /// (``id3v2GenericFrames``), a text frame id that ID3v2.3 has (TMED ...), TYER and TDAT for
    /// a date, else TXXX with the key as its description (LABEL, artist-sort, TSO2 ...).
    /// MediaKit's own choices: a comment and lyrics (by normalised key) are COMM and USLT with
    /// an empty description.
    private static func id3v23Frames(_ e: MetadataEntry) -> [(String, [String])] {
        let key = e.key.lowercased(), shown = e.ffmpegKey, lower = shown.lowercased()
        if key == "comment" { return [("COMM", ["", e.value])] }
        if key == "lyrics" { return [("USLT", ["", e.value])] }
        if lower == "date" {
            // id3v2_3_metadata_split_date: digits, then the end or "-": the year (its first
            // four characters); "-MM-DD" (then the end or a space) adds the day and month.
            let u = Array(e.value.utf8)
            var i = 0
            while i < u.count, (0x30...0x39).contains(u[i]) { i += 1 }
            if i == u.count || u[i] == 0x2D {
                var out = [("TYER", [String(decoding: u.prefix(4), as: UTF8.self)])]
                func at(_ k: Int, _ range: ClosedRange<UInt8>) -> Bool { i + k < u.count && range.contains(u[i + k]) }
                if i < u.count, at(1, 0x30...0x31), at(2, 0x30...0x39), at(3, 0x2D...0x2D), at(4, 0x30...0x33), at(5, 0x30...0x39),
                   i + 6 == u.count || u[i + 6] == 0x20 {
                    out.append(("TDAT", [String(decoding: u[(i + 4)...(i + 5)] + u[(i + 1)...(i + 2)], as: UTF8.self)]))
                }
                return out
            }
        }
        if let id = id3v2GenericFrames[lower] { return [(id, [e.value])] }
        if isTextFrameID(shown), id3v23TextFrames.contains(shown) { return [(shown, [e.value])] }
        return [("TXXX", [shown, e.value])]
    }

    /// An ID3v2.3 text body: the encoding byte, then each string NUL-terminated: ISO-8859-1
    /// (0) when all are ASCII, else UTF-16 with a byte order mark (1), as FFmpeg encodes them.
    static func text23(_ strings: [String]) -> [UInt8] {
        let ascii = strings.allSatisfy { $0.utf8.allSatisfy { $0 < 0x80 } }
        var out: [UInt8] = [ascii ? 0 : 1]
        for s in strings {
            if ascii {
                out += Array(s.utf8) + [0]
            } else {
                out += [0xFF, 0xFE]
                for unit in s.utf16 { out += [UInt8(truncatingIfNeeded: unit), UInt8(truncatingIfNeeded: unit >> 8)] }
                out += [0, 0]
            }
        }
        return out
    }

    /// An ID3v2.3 frame: id, 32-bit size (not syncsafe), no flags, body.
    static func frame23(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + be32(body.count) + [0, 0] + body
    }

    /// The bytes of a PRIV value as libavformat shows it: `\xNN` for a byte outside 32-126 or a
    /// backslash, the other bytes as they are.
    static func unescaped(_ s: String) -> [UInt8] {
        let u = Array(s.utf8)
        var out: [UInt8] = [], i = 0
        while i < u.count {
            if u[i] == 0x5C, i + 3 < u.count, u[i + 1] == 0x78,   // "\\x"
               let b = UInt8(String(decoding: u[(i + 2)...(i + 3)], as: UTF8.self), radix: 16) {
                out.append(b)
                i += 4
            } else {
                out.append(u[i])
                i += 1
            }
        }
        return out
    }

    /// True for a four-character text frame id other than TXXX ("TMED").
    static func isTextFrameID(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return u.count == 4 && u[0] == 0x54 && s != "TXXX"   // "T..."
            && u.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
    }

    /// An ID3v2.4 frame: id, syncsafe size, no flags, body.
    static func frame(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + syncsafe(body.count) + [0, 0] + body
    }

    /// A 28-bit syncsafe integer (7 bits a byte).
    static func syncsafe(_ n: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: (n >> 21) & 0x7F), UInt8(truncatingIfNeeded: (n >> 14) & 0x7F),
         UInt8(truncatingIfNeeded: (n >> 7) & 0x7F), UInt8(truncatingIfNeeded: n & 0x7F)]
    }

    // MARK: - RIFF INFO

    /// Normalised key -> RIFF INFO id (the reverse of ``ChunkMetadata/riffInfo``).
    static let riffInfoIDs: [String: String] = [
        "artist": "IART", "comment": "ICMT", "copyright": "ICOP", "date": "ICRD", "genre": "IGNR", "language": "ILNG",
        "title": "INAM", "album": "IPRD", "track": "IPRT", "encoded_by": "ITCH", "timecode": "ISMP",
    ]

    /// A LIST chunk of type INFO holding `tags` that have an INFO id (by normalised key, or a
    /// four-character "I..." id as the key is shown), each a NUL-terminated string padded to an
    /// even size, as FFmpeg's ff_riff_write_info writes them; empty when none has one.
    static func riffInfo(_ tags: [MetadataEntry]) -> [UInt8] {
        var body = Array("INFO".utf8)
        var seen = Set<String>()
        for e in tags {
            let u = Array(e.ffmpegKey.utf8)
            let id = riffInfoIDs[e.key.lowercased()]
                ?? (u.count == 4 && u[0] == 0x49 && u.allSatisfy({ (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }) ? e.ffmpegKey : nil)
            guard let id, seen.insert(id).inserted else { continue }
            let text = Array(e.value.utf8) + [0]
            body += Array(id.utf8) + le32(text.count) + text + (text.count & 1 == 1 ? [0] : [])
        }
        guard body.count > 4 else { return [] }
        return Array("LIST".utf8) + le32(body.count) + body
    }

    // MARK: - Bytes

    static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
    static func be32(_ v: Int) -> [UInt8] { (0..<4).reversed().map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
}
