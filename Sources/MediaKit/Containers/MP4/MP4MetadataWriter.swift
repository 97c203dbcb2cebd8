import Foundation

/// iTunes metadata (`moov/udta/meta/ilst`) and Nero chapters (`udta/chpl`) written from the
/// metadata model, as FFmpeg 5.1's mov muxer writes them (libavformat/movenc.c
/// mov_write_ilst_tag, mov_write_chpl_tag), plus freeform `----` items (mean
/// "com.apple.iTunes") for the tags without an atom of their own, as iTunes and MusicBrainz
/// Picard write them. The atom names are the reading side's (``ITunesMetadata/table``). A
/// `.mov` file gets QuickTime `udta` strings (©nam ...) instead of `ilst`, as FFmpeg writes
/// one (``quickTimeStrings(tags:)``).
enum MP4MetadataWriter {
    /// Normalised key -> the iTunes text atom (type 1, UTF-8) that holds it: the first text row
    /// of ``ITunesMetadata/table`` for the key (atoms libavformat shows), and the names
    /// FFmpeg's ID3 reader gives the sort and encoded-by frames.
    static let textAtoms: [String: String] = {
        var atoms: [String: String] = ["album-sort": "soal", "artist-sort": "soar", "title-sort": "sonm", "encoded_by": "©enc"]
        for row in ITunesMetadata.table where row.kind == .text && !row.ffmpegKey.isEmpty && atoms[row.key] == nil {
            atoms[row.key] = row.atom
        }
        return atoms
    }()

    /// The box fields the MP4 reader shows as tags (FFmpeg's major_brand, language,
    /// handler_name ...): the muxer writes them into their boxes or not at all, never as `ilst`
    /// items (FFmpeg's mov muxer does not either).
    static let boxFields: Set<String> = ["ftyp.major_brand", "ftyp.minor_version", "ftyp.compatible_brands", "mvhd.creation_time",
                                         "mdhd.creation_time", "mdhd.language", "hdlr.name", "stsd.vendor", "stsd.compressorname"]

    /// The `ilst` items for `tags` (text atoms, `trkn` / `disk` as binary number and total,
    /// `cpil` and `tmpo` as integers, freeform items for the rest; an ID3 PRIV entry and the
    /// MP4 reader's ``boxFields`` are left out) and `pictures` (one `covr` with a data atom per picture: type 13 JPEG, 14 PNG).
    static func items(tags: [MetadataEntry], pictures: [Attachment]) -> [UInt8] {
        var w = BoxWriter()
        var done = Set<String>()
        func number(_ key: String, _ total: String) -> (Int, Int)? {
            guard let v = tags.first(where: { $0.key.lowercased() == key })?.value else { return nil }
            let parts = v.split(separator: "/", maxSplits: 1).map { Int($0.trimmingCharacters(in: .whitespaces)) ?? 0 }
            let t = parts.count > 1 ? parts[1] : Int(tags.first { $0.key.lowercased() == total }?.value ?? "") ?? 0
            return (parts.first ?? 0, t)
        }
        func data(_ type: UInt32, _ bytes: [UInt8]) -> (inout BoxWriter) -> Void {
            { w in w.box("data") { w in w.u32(type); w.u32(0); w.append(bytes) } }
        }
        for e in tags {
            let key = e.key.lowercased()
            guard !e.value.isEmpty, !key.hasPrefix("id3v2_priv."), !boxFields.contains(e.nativeKey) else { continue }
            if key == "track" || key == "disc" || key == "track_total" || key == "disc_total" {
                let atom = key.hasPrefix("track") ? "trkn" : "disk"
                guard done.insert(atom).inserted, let (n, t) = number(key.hasPrefix("track") ? "track" : "disc",
                                                                       key.hasPrefix("track") ? "track_total" : "disc_total") else { continue }
                let n16 = UInt16(clamping: n), t16 = UInt16(clamping: t)
                var b: [UInt8] = [0, 0, UInt8(truncatingIfNeeded: n16 >> 8), UInt8(truncatingIfNeeded: n16), UInt8(truncatingIfNeeded: t16 >> 8), UInt8(truncatingIfNeeded: t16)]
                if atom == "trkn" { b += [0, 0] }
                w.box(atom, data(0, b))
            } else if key == "compilation" {
                guard done.insert("cpil").inserted else { continue }
                w.box("cpil", data(21, [Int(e.value) ?? 0 != 0 ? 1 : 0]))
            } else if key == "bpm", let bpm = Int(e.value) {
                guard done.insert("tmpo").inserted else { continue }
                let v = UInt16(clamping: bpm)
                w.box("tmpo", data(21, [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]))
            } else if let atom = textAtoms[key] {
                guard done.insert(atom).inserted else { continue }
                w.box(atom, data(1, Array(e.value.utf8)))
            } else {
                let name = MetadataWriting.id3UserNames[key] ?? e.ffmpegKey
                guard done.insert("----:" + name.lowercased()).inserted else { continue }
                w.box("----") { w in
                    w.fullBox("mean", version: 0, flags: 0) { $0.append(Array("com.apple.iTunes".utf8)) }
                    w.fullBox("name", version: 0, flags: 0) { $0.append(Array(name.utf8)) }
                    w.box("data") { w in w.u32(1); w.u32(0); w.append(Array(e.value.utf8)) }
                }
            }
        }
        let covers = pictures.filter { ["image/jpeg", "image/jpg", "image/png", "image/bmp"].contains($0.mimeType.lowercased()) }
        if !covers.isEmpty {
            w.box("covr") { w in
                for p in covers {
                    let m = p.mimeType.lowercased()
                    data(m == "image/png" ? 14 : m == "image/bmp" ? 27 : 13, p.data)(&w)
                }
            }
        }
        return w.bytes
    }

    /// A Nero `chpl` box (version 1): each chapter's start in 100 ns units and its title (up to
    /// 255 bytes); at most 255 chapters; empty when there is none.
    static func chpl(_ chapters: [Chapter]) -> [UInt8] {
        guard !chapters.isEmpty else { return [] }
        var w = BoxWriter()
        w.fullBox("chpl", version: 1, flags: 0) { w in
            w.u32(0)
            let list = chapters.prefix(255)
            w.u8(UInt8(truncatingIfNeeded: list.count))
            for c in list {
                let start = max(0, Rational.rescale(c.start, from: c.timeBase, to: Rational(1, 10_000_000)))
                w.u64(UInt64(start))
                var title = Array((c.shownTitle ?? "").utf8.prefix(255))
                while !title.isEmpty, String(bytes: title, encoding: .utf8) == nil { title.removeLast() }   // not inside a character
                w.u8(UInt8(truncatingIfNeeded: title.count))
                w.append(title)
            }
        }
        return w.bytes
    }

    /// The QuickTime `udta` strings FFmpeg 5.1's mov muxer writes for a `.mov` file (MODE_MOV,
    /// mov_write_udta_tag) instead of iTunes `ilst` items, in its order: the atom and the tag
    /// it holds, by the name libavformat gives the tag (`comment` goes into both ©des and ©cmt).
    static let quickTimeStringAtoms: [(atom: String, key: String)] = [
        ("©ART", "artist"), ("©nam", "title"), ("©aut", "author"), ("©alb", "album"), ("©day", "date"), ("©swr", "encoder"),
        ("©des", "comment"), ("©cmt", "comment"), ("©gen", "genre"), ("©cpy", "copyright"), ("©mak", "make"), ("©mod", "model"),
        ("©xyz", "location"), ("©key", "keywords"),
    ]

    /// QuickTime `udta` string atoms for `tags` (``quickTimeStringAtoms``; the first tag of
    /// each name, in any case): each a 16-bit length, the packed language code of "und"
    /// (0x55C4), the UTF-8 text (at most 65,535 bytes, cut at a character's start), as
    /// mov_write_string_tag writes them. Tags without such an atom (composer, track, cover art)
    /// are not written, as FFmpeg writes none for them in a `.mov`.
    static func quickTimeStrings(tags: [MetadataEntry]) -> [UInt8] {
        var w = BoxWriter()
        for (atom, key) in quickTimeStringAtoms {
            guard let e = tags.first(where: { $0.ffmpegKey.lowercased() == key && !$0.value.isEmpty }) else { continue }
            var text = Array(e.value.utf8.prefix(0xFFFF))
            while !text.isEmpty, String(bytes: text, encoding: .utf8) == nil { text.removeLast() }   // not inside a character
            guard !text.isEmpty else { continue }
            w.box(atom) { w in
                w.u16(UInt16(truncatingIfNeeded: text.count))
                w.u16(0x55C4)   // "und", ISO 639-2/T packed as 5-bit letters
                w.append(text)
            }
        }
        return w.bytes
    }

    /// A `udta` box with `strings` (QuickTime string atoms), then `meta` > `hdlr` (mdir, appl) >
    /// `ilst` holding `items`, then `extra` (a `chpl`); empty when all are.
    static func userData(items: [UInt8], extra: [UInt8] = [], strings: [UInt8] = []) -> [UInt8] {
        guard !items.isEmpty || !extra.isEmpty || !strings.isEmpty else { return [] }
        var w = BoxWriter()
        w.box("udta") { w in
            w.append(strings)
            if !items.isEmpty {
                w.fullBox("meta", version: 0, flags: 0) { w in
                    w.fullBox("hdlr", version: 0, flags: 0) { w in
                        w.u32(0); w.fourCC("mdir"); w.fourCC("appl"); w.u32(0); w.u32(0); w.u8(0)
                    }
                    w.box("ilst") { $0.append(items) }
                }
            }
            w.append(extra)
        }
        return w.bytes
    }
}
