import Foundation

/// MP4 / QuickTime metadata atoms as ``Metadata``, ``Attachment``s and ``Chapter``s: iTunes
/// `udta/meta/ilst` items (and freeform `----` mean / name / data atoms), QuickTime `udta` ©xxx
/// strings with their language, QuickTime `meta` with `keys` (mdta: com.apple.quicktime.*), the
/// 3GPP `loci` location, `covr` pictures, Nero `chpl` chapters and QuickTime chapter track samples.
/// The reading follows FFmpeg 5.1's libavformat/mov.c (mov_read_udta_string, mov_read_custom,
/// mov_read_keys, mov_read_chpl, mov_read_covr, mov_metadata_loci, mov_read_chapters) so that
/// ``MetadataEntry/ffmpegKey`` is what ffprobe prints.
enum ITunesMetadata {
    /// How an atom's value is stored.
    enum Kind: Sendable, Equatable {
        /// Text (a `data` atom's UTF-8 / Mac Roman / number, or a QuickTime udta string).
        case text
        /// Stored as is, with no QuickTime string header (FFmpeg's "raw": `@PRM`, `FIRM` ...).
        case raw
        /// `trkn` / `disk`: 2 bytes, the number, the total (16-bit each): "N" or "N/M".
        case numberOfTotal
        /// One byte, its decimal value (`cpil`, `stik`, `rtng`, `pgap`, `hdvd` ...).
        case byte
        /// A 32-bit number of which FFmpeg reads the last byte (`tvsn`, `tves`).
        case paddedByte
        /// `gnre`: an ID3v1 genre number plus one, as a 16-bit value.
        case genre
    }

    /// One row of the mapping: the atom, MediaKit's normalised key, FFmpeg's key ("" when
    /// libavformat ignores the atom) and the value's form. One table for reading and writing.
    struct Row: Sendable {
        /// The atom type as text: four bytes read as Latin-1 ("©nam" for A9 6E 61 6D).
        let atom: String
        /// MediaKit's normalised key.
        let key: String
        /// libavformat's key (ffprobe's tag name); empty when FFmpeg does not read the atom.
        let ffmpegKey: String
        /// How the value is stored.
        let kind: Kind
    }

    /// The atoms libavformat's mov.c maps (mov_read_udta_string), with FFmpeg's key names, then
    /// atoms MediaKit reads that FFmpeg ignores (3GPP TS 26.244 udta strings, ©pub, tmpo).
    /// Where a key has several atoms, the one FFmpeg's mov muxer writes comes first (the
    /// writer, MP4MetadataWriter, takes the first text atom of each key).
    static let table: [Row] = [
        Row(atom: "@PRM", key: "premiere_version", ffmpegKey: "premiere_version", kind: .raw),
        Row(atom: "@PRQ", key: "quicktime_version", ffmpegKey: "quicktime_version", kind: .raw),
        Row(atom: "aART", key: "album_artist", ffmpegKey: "album_artist", kind: .text),
        Row(atom: "akID", key: "account_type", ffmpegKey: "account_type", kind: .byte),
        Row(atom: "apID", key: "account_id", ffmpegKey: "account_id", kind: .text),
        Row(atom: "catg", key: "category", ffmpegKey: "category", kind: .text),
        Row(atom: "cpil", key: "compilation", ffmpegKey: "compilation", kind: .byte),
        Row(atom: "cprt", key: "copyright", ffmpegKey: "copyright", kind: .text),
        Row(atom: "desc", key: "description", ffmpegKey: "description", kind: .text),
        Row(atom: "disk", key: "disc", ffmpegKey: "disc", kind: .numberOfTotal),
        Row(atom: "egid", key: "episode_uid", ffmpegKey: "episode_uid", kind: .byte),
        Row(atom: "FIRM", key: "firmware", ffmpegKey: "firmware", kind: .raw),
        Row(atom: "gnre", key: "genre", ffmpegKey: "genre", kind: .genre),
        Row(atom: "hdvd", key: "hd_video", ffmpegKey: "hd_video", kind: .byte),
        Row(atom: "keyw", key: "keywords", ffmpegKey: "keywords", kind: .text),
        Row(atom: "ldes", key: "synopsis", ffmpegKey: "synopsis", kind: .text),
        Row(atom: "manu", key: "make", ffmpegKey: "make", kind: .text),
        Row(atom: "modl", key: "model", ffmpegKey: "model", kind: .text),
        Row(atom: "pcst", key: "podcast", ffmpegKey: "podcast", kind: .byte),
        Row(atom: "pgap", key: "gapless_playback", ffmpegKey: "gapless_playback", kind: .byte),
        Row(atom: "purd", key: "purchase_date", ffmpegKey: "purchase_date", kind: .text),
        Row(atom: "rtng", key: "rating", ffmpegKey: "rating", kind: .byte),
        Row(atom: "soaa", key: "sort_album_artist", ffmpegKey: "sort_album_artist", kind: .text),
        Row(atom: "soal", key: "sort_album", ffmpegKey: "sort_album", kind: .text),
        Row(atom: "soar", key: "sort_artist", ffmpegKey: "sort_artist", kind: .text),
        Row(atom: "soco", key: "sort_composer", ffmpegKey: "sort_composer", kind: .text),
        Row(atom: "sonm", key: "sort_name", ffmpegKey: "sort_name", kind: .text),
        Row(atom: "sosn", key: "sort_show", ffmpegKey: "sort_show", kind: .text),
        Row(atom: "stik", key: "media_type", ffmpegKey: "media_type", kind: .byte),
        Row(atom: "trkn", key: "track", ffmpegKey: "track", kind: .numberOfTotal),
        Row(atom: "tven", key: "episode_id", ffmpegKey: "episode_id", kind: .text),
        Row(atom: "tves", key: "episode_sort", ffmpegKey: "episode_sort", kind: .paddedByte),
        Row(atom: "tvnn", key: "network", ffmpegKey: "network", kind: .text),
        Row(atom: "tvsh", key: "show", ffmpegKey: "show", kind: .text),
        Row(atom: "tvsn", key: "season_number", ffmpegKey: "season_number", kind: .paddedByte),
        Row(atom: "©ART", key: "artist", ffmpegKey: "artist", kind: .text),
        Row(atom: "©PRD", key: "producer", ffmpegKey: "producer", kind: .text),
        Row(atom: "©alb", key: "album", ffmpegKey: "album", kind: .text),
        Row(atom: "©aut", key: "artist", ffmpegKey: "artist", kind: .text),
        Row(atom: "©chp", key: "chapter", ffmpegKey: "chapter", kind: .text),
        Row(atom: "©cmt", key: "comment", ffmpegKey: "comment", kind: .text),
        Row(atom: "©cpy", key: "copyright", ffmpegKey: "copyright", kind: .text),
        Row(atom: "©day", key: "date", ffmpegKey: "date", kind: .text),
        Row(atom: "©dir", key: "director", ffmpegKey: "director", kind: .text),
        Row(atom: "©dis", key: "disclaimer", ffmpegKey: "disclaimer", kind: .text),
        Row(atom: "©ed1", key: "edit_date", ffmpegKey: "edit_date", kind: .text),
        Row(atom: "©fmt", key: "original_format", ffmpegKey: "original_format", kind: .text),
        Row(atom: "©gen", key: "genre", ffmpegKey: "genre", kind: .text),
        Row(atom: "©grp", key: "grouping", ffmpegKey: "grouping", kind: .text),
        Row(atom: "©hst", key: "host_computer", ffmpegKey: "host_computer", kind: .text),
        Row(atom: "©inf", key: "comment", ffmpegKey: "comment", kind: .text),
        Row(atom: "©lyr", key: "lyrics", ffmpegKey: "lyrics", kind: .text),
        Row(atom: "©mak", key: "make", ffmpegKey: "make", kind: .text),
        Row(atom: "©mod", key: "model", ffmpegKey: "model", kind: .text),
        Row(atom: "©nam", key: "title", ffmpegKey: "title", kind: .text),
        Row(atom: "©ope", key: "original_artist", ffmpegKey: "original_artist", kind: .text),
        Row(atom: "©prd", key: "producer", ffmpegKey: "producer", kind: .text),
        Row(atom: "©prf", key: "performer", ffmpegKey: "performers", kind: .text),
        Row(atom: "©req", key: "playback_requirements", ffmpegKey: "playback_requirements", kind: .text),
        Row(atom: "©src", key: "original_source", ffmpegKey: "original_source", kind: .text),
        Row(atom: "©st3", key: "subtitle", ffmpegKey: "subtitle", kind: .text),
        Row(atom: "©too", key: "encoder", ffmpegKey: "encoder", kind: .text),
        Row(atom: "©swr", key: "encoder", ffmpegKey: "encoder", kind: .text),
        Row(atom: "©enc", key: "encoder", ffmpegKey: "encoder", kind: .text),
        Row(atom: "©trk", key: "track", ffmpegKey: "track", kind: .text),
        Row(atom: "©url", key: "URL", ffmpegKey: "URL", kind: .text),
        Row(atom: "©wrn", key: "warning", ffmpegKey: "warning", kind: .text),
        Row(atom: "©wrt", key: "composer", ffmpegKey: "composer", kind: .text),
        Row(atom: "©com", key: "composer", ffmpegKey: "composer", kind: .text),
        Row(atom: "©xyz", key: "location", ffmpegKey: "location", kind: .text),
        // Not read by libavformat 5.1 (ffprobe does not show them): in the model only.
        Row(atom: "©pub", key: "publisher", ffmpegKey: "", kind: .text),
        Row(atom: "tmpo", key: "bpm", ffmpegKey: "", kind: .text),
    ]

    /// 3GPP TS 26.244 user data strings (full box, a packed ISO 639-2 language, a string):
    /// in the model only — libavformat does not read them.
    static let threeGPP: [String: String] = [
        "titl": "title", "auth": "artist", "perf": "performer", "dscp": "description", "albm": "album", "yrrc": "date",
    ]

    /// ``table`` by atom.
    static let byAtom: [String: Row] = Dictionary(table.map { ($0.atom, $0) }, uniquingKeysWith: { a, _ in a })

    /// The atom type of four bytes as text (Latin-1: A9 is "©").
    static func atomName<C: Collection>(_ b: C) -> String where C.Element == UInt8 {
        String(String.UnicodeScalarView(b.map { Unicode.Scalar($0) }))
    }

    // MARK: - Byte helpers

    static func be16(_ b: [UInt8], _ i: Int) -> Int {
        i >= 0 && i + 2 <= b.count ? Int(b[i]) << 8 | Int(b[i + 1]) : 0
    }

    static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        guard i >= 0, i + 4 <= b.count else { return 0 }
        return UInt32(b[i]) << 24 | UInt32(b[i + 1]) << 16 | UInt32(b[i + 2]) << 8 | UInt32(b[i + 3])
    }

    static func be64(_ b: [UInt8], _ i: Int) -> UInt64 { UInt64(be32(b, i)) << 32 | UInt64(be32(b, i + 4)) }

    /// A C string: the bytes up to the first NUL, as UTF-8 (invalid sequences replaced).
    static func cString<C: Collection>(_ b: C) -> String where C.Element == UInt8 {
        String(decoding: b.prefix(while: { $0 != 0 }), as: UTF8.self)
    }

    /// The child boxes of `b[range]` as libavformat's mov_read_default walks them: a 64-bit size
    /// when there is room for it, size 0 running to the end of the parent, a size past the
    /// parent's end cut to it, the walk ending at a size below 8.
    static func boxes(_ b: [UInt8], _ range: Range<Int>) -> [(type: String, payload: Range<Int>)] {
        var out: [(type: String, payload: Range<Int>)] = []
        var p = range.lowerBound
        while range.upperBound - p >= 8 {
            var size = Int64(be32(b, p))
            let type = atomName(b[p + 4..<p + 8])
            var header = 8
            if size == 1 && range.upperBound - p >= 16 {
                size = Int64(bitPattern: be64(b, p + 8))
                header = 16
            } else if size == 0 {
                size = Int64(range.upperBound - p)
            }
            if size < Int64(header) { break }
            let end = Int64(p) + min(size, Int64(range.upperBound - p))
            out.append((type, p + header..<Int(end)))
            p = Int(end)
        }
        return out
    }

    // MARK: - Values

    /// The Mac OS Roman characters 0x80-0xFF (FFmpeg's mac_to_unicode).
    static let macRoman: [UInt32] = [
        0x00C4, 0x00C5, 0x00C7, 0x00C9, 0x00D1, 0x00D6, 0x00DC, 0x00E1, 0x00E0, 0x00E2, 0x00E4, 0x00E3, 0x00E5, 0x00E7, 0x00E9, 0x00E8,
        0x00EA, 0x00EB, 0x00ED, 0x00EC, 0x00EE, 0x00EF, 0x00F1, 0x00F3, 0x00F2, 0x00F4, 0x00F6, 0x00F5, 0x00FA, 0x00F9, 0x00FB, 0x00FC,
        0x2020, 0x00B0, 0x00A2, 0x00A3, 0x00A7, 0x2022, 0x00B6, 0x00DF, 0x00AE, 0x00A9, 0x2122, 0x00B4, 0x00A8, 0x2260, 0x00C6, 0x00D8,
        0x221E, 0x00B1, 0x2264, 0x2265, 0x00A5, 0x00B5, 0x2202, 0x2211, 0x220F, 0x03C0, 0x222B, 0x00AA, 0x00BA, 0x03A9, 0x00E6, 0x00F8,
        0x00BF, 0x00A1, 0x00AC, 0x221A, 0x0192, 0x2248, 0x2206, 0x00AB, 0x00BB, 0x2026, 0x00A0, 0x00C0, 0x00C3, 0x00D5, 0x0152, 0x0153,
        0x2013, 0x2014, 0x201C, 0x201D, 0x2018, 0x2019, 0x00F7, 0x25CA, 0x00FF, 0x0178, 0x2044, 0x20AC, 0x2039, 0x203A, 0xFB01, 0xFB02,
        0x2021, 0x00B7, 0x201A, 0x201E, 0x2030, 0x00C2, 0x00CA, 0x00C1, 0x00CB, 0x00C8, 0x00CD, 0x00CE, 0x00CF, 0x00CC, 0x00D3, 0x00D4,
        0xF8FF, 0x00D2, 0x00DA, 0x00DB, 0x00D9, 0x0131, 0x02C6, 0x02DC, 0x00AF, 0x02D8, 0x02D9, 0x02DA, 0x00B8, 0x02DD, 0x02DB, 0x02C7,
    ]

    /// Mac OS Roman text up to its first NUL.
    static func macString<C: Collection>(_ b: C) -> String where C.Element == UInt8 {
        var s = String.UnicodeScalarView()
        for c in b {
            if c == 0 { break }
            s.append(Unicode.Scalar(c < 0x80 ? UInt32(c) : macRoman[Int(c) - 0x80]) ?? "?")
        }
        return String(s)
    }

    /// The Macintosh language codes 0-94 as FFmpeg's mov_mdhd_language_map gives them.
    private static let macLanguages = [
        "eng", "fra", "ger", "ita", "dut", "sve", "spa", "dan", "por", "nor", "heb", "jpn", "ara", "fin", "gre", "ice",
        "mlt", "tur", "hr ", "chi", "urd", "hin", "tha", "kor", "lit", "pol", "hun", "est", "lav", "", "fo ", "",
        "rus", "chi", "", "iri", "alb", "ron", "ces", "slk", "slv", "yid", "sr ", "mac", "bul", "ukr", "bel", "uzb",
        "kaz", "aze", "aze", "arm", "geo", "mol", "kir", "tgk", "tuk", "mon", "", "pus", "kur", "kas", "snd", "tib",
        "nep", "san", "mar", "ben", "asm", "guj", "pa ", "ori", "mal", "kan", "tam", "tel", "", "bur", "khm", "lao",
        "vie", "ind", "tgl", "may", "may", "amh", "tir", "orm", "som", "swa", "", "run", "", "mlg", "epo",
    ]

    /// FFmpeg's ff_mov_lang_to_iso639: a packed ISO 639-2 code (three 5-bit letters, not checked)
    /// or a Macintosh language code; nil for 0x7FFF and codes with no name.
    static func language(_ code: Int) -> String? {
        if code >= 0x400 && code != 0x7FFF {
            let letters = [(code >> 10) & 31, (code >> 5) & 31, code & 31].map { UInt8(0x60 + $0) }
            return cString(letters)
        }
        guard code >= 0, code < macLanguages.count, !macLanguages[code].isEmpty else { return nil }
        return macLanguages[code]
    }

    /// libavformat's creation_time (mov_metadata_creation_time): seconds since 1904 (or since
    /// 1970 for values below 1970's offset, as FFmpeg takes them), ISO 8601 in UTC with
    /// microseconds ("2016-05-31T17:01:35.000000Z"); nil for 0 (not set) and for a year past 9999.
    static func creationTime(_ stored: UInt64) -> String? {
        var t = Int64(bitPattern: stored)
        guard t != 0 else { return nil }
        if t >= 2_082_844_800 { t -= 2_082_844_800 }
        guard t >= 0, t < 253_402_300_800 else { return nil }   // 0000 .. 9999-12-31
        let days = t / 86_400, rest = t % 86_400
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days + 719_468
        let era = z / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return String(format: "%04lld-%02lld-%02lldT%02lld:%02lld:%02lld.000000Z", year, month, day, rest / 3600, rest / 60 % 60, rest % 60)
    }

    /// FFmpeg's av_fourcc2str: letters, digits and ". -_" as they are, other bytes as "[N]".
    static func fourCCText<C: Collection>(_ b: C) -> String where C.Element == UInt8 {
        var s = ""
        for c in b {
            let ok = (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A) || c == 0x2E || c == 0x20 || c == 0x2D || c == 0x5F
            s += ok ? String(UnicodeScalar(c)) : "[\(c)]"
        }
        return s
    }

    /// An ilst `covr` picture (mov_read_covr): JPEG (data type 13), PNG (14) or BMP (27),
    /// JPEG / PNG told apart by the PNG signature as FFmpeg does; nil for another type.
    static func cover(type: UInt32, _ data: [UInt8]) -> Attachment? {
        var mime: String
        switch type {
        case 0xD: mime = "image/jpeg"
        case 0xE: mime = "image/png"
        case 0x1B: mime = "image/bmp"
        default: return nil
        }
        if data.count >= 8, type != 0x1B { mime = be64(data, 0) == 0x8950_4E47_0D0A_1A0A ? "image/png" : "image/jpeg" }
        return Attachment(data: data, mimeType: mime, pictureType: 3)
    }

    /// 3GPP `loci` (mov_metadata_loci): "+LAT+LON[+ALT]/place"; nil when too short.
    static func location(_ b: [UInt8]) -> (value: String, language: String?)? {
        guard b.count >= 4 + 2 + 1 + 1 + 4 + 4 + 4 else { return nil }
        let language = Self.language(be16(b, 4))
        var p = 6
        let placeBytes = b[p...].prefix(while: { $0 != 0 })
        p += placeBytes.count + 1
        p += 1   // role
        guard b.count - p >= 12 else { return nil }
        let longitude = Float(Int32(bitPattern: be32(b, p))) / 65536
        let latitude = Float(Int32(bitPattern: be32(b, p + 4))) / 65536
        let altitude = Float(Int32(bitPattern: be32(b, p + 8))) / 65536
        var s = String(format: "%+08.4f%+09.4f", Double(latitude), Double(longitude))
        if altitude != 0 { s += String(format: "%+f", Double(altitude)) }
        s += "/" + String(decoding: placeBytes, as: UTF8.self)
        return (s, language)
    }

    /// Nero `chpl` (mov_read_chpl): chapters in 100 ns units, ends left to fill.
    static func neroChapters(_ b: [UInt8]) -> [Chapter] {
        guard b.count >= 5 else { return [] }
        var left = b.count - 5
        let version = b[0]
        var p = 4
        if version != 0 { p += 4 }
        guard p < b.count else { return [] }
        let count = Int(b[p]); p += 1
        var out: [Chapter] = []
        for i in 0..<count {
            guard left >= 9, p + 9 <= b.count else { break }
            let start = Int64(bitPattern: be64(b, p))
            let length = Int(b[p + 8])
            p += 9
            left -= 9 + length
            guard left >= 0, p + length <= b.count else { break }
            var c = Chapter(id: Int64(i), timeBase: Rational(1, 10_000_000), start: start, end: Chapter.unknownEnd)
            c.metadata.append(key: "title", nativeKey: "chpl", ffmpegKey: "title", value: cString(b[p..<p + length]))
            out.append(c)
            p += length
        }
        return out
    }

    /// A QuickTime chapter track sample's title (mov_read_chapters): a 16-bit length, then
    /// UTF-16 with its byte-order mark or UTF-8; nil when the length exceeds the sample.
    static func chapterTitle(_ b: [UInt8]) -> String? {
        guard b.count >= 2 else { return nil }
        let length = be16(b, 0)
        guard length <= b.count - 2 else { return nil }
        let text = Array(b[2..<2 + length])
        if text.count >= 2, text[0] == 0xFE, text[1] == 0xFF || text[0] == 0xFF && text[1] == 0xFE {
            let big = text[0] == 0xFE
            var units: [UInt16] = []
            var i = 2
            while i + 1 < text.count {
                let u = big ? UInt16(text[i]) << 8 | UInt16(text[i + 1]) : UInt16(text[i + 1]) << 8 | UInt16(text[i])
                if u == 0 { break }
                units.append(u)
                i += 2
            }
            return String(decoding: units, as: UTF16.self)
        }
        return cString(text)
    }
}

/// The metadata of one movie box, read as libavformat's mov demuxer reads it: the format's
/// tags (in order, repeated keys replaced), the covers, the `chpl` chapters, and the handler
/// names of `meta` boxes inside a track.
struct QuickTimeMetadataReader {
    /// The format's tags.
    var metadata = Metadata()
    /// `covr` pictures, in file order.
    var covers: [Attachment] = []
    /// Nero `chpl` chapters (ends not filled).
    var chapters: [Chapter] = []
    /// A `meta` handler of type `mdta` was met outside any track (FFmpeg's found_hdlr_mdta).
    private var foundMdta = false
    /// The `keys` of a QuickTime `meta`, 1-based (index 0 unused).
    private var keys: [String] = []
    /// Nesting of udta boxes followed.
    private static let maxDepth = 8

    /// Reads a `udta` payload (`b[range]`). `tracksSoFar`: the `trak` boxes met (FFmpeg
    /// ignores freeform `----` atoms before the first); `handlerName`: a track's handler name
    /// so far, set by a `meta` handler inside a track when it has none (nil outside tracks).
    mutating func readUserData(_ b: [UInt8], _ range: Range<Int>, tracksSoFar: Int, handlerName: inout String?, inTrack: Bool, depth: Int = 0) {
        guard depth < Self.maxDepth else { return }
        for (type, payload) in ITunesMetadata.boxes(b, range) {
            switch type {
            case "meta": readMeta(b, payload, tracksSoFar: tracksSoFar, handlerName: &handlerName, inTrack: inTrack)
            case "udta": readUserData(b, payload, tracksSoFar: tracksSoFar, handlerName: &handlerName, inTrack: inTrack, depth: depth + 1)
            case "chpl": chapters = ITunesMetadata.neroChapters(Array(b[payload]))
            case "ilst": readItems(b, payload, tracksSoFar: tracksSoFar)
            case "----": readFreeform(b, payload, tracksSoFar: tracksSoFar)
            case "hdlr", "keys", "free", "skip", "uuid", "wide": break
            default: readString(type: type, Array(b[payload]), itunes: false)
            }
        }
    }

    /// Reads a `meta` payload: from its `hdlr` on (a full box in MP4, a plain one in QuickTime).
    mutating func readMeta(_ b: [UInt8], _ range: Range<Int>, tracksSoFar: Int, handlerName: inout String?, inTrack: Bool) {
        // mov_read_meta: 4 bytes at a time until a 'hdlr' tag, the box starting 4 bytes before it.
        var p = range.lowerBound
        var start: Int?
        while range.upperBound - p > 8 {
            if b[p + 4] == 0x68, b[p + 5] == 0x64, b[p + 6] == 0x6C, b[p + 7] == 0x72 { start = p; break }   // "hdlr"
            p += 4
        }
        guard let start else { return }
        for (type, payload) in ITunesMetadata.boxes(b, start..<range.upperBound) {
            let body = Array(b[payload])
            switch type {
            case "hdlr":
                guard body.count >= 12 else { continue }
                if !inTrack {
                    if ITunesMetadata.atomName(body[8..<12]) == "mdta" { foundMdta = true }
                } else if handlerName == nil, body.count > 24, body[24] != 0 {
                    handlerName = ITunesMetadata.cString(body[24...])
                }
            case "keys": readKeys(body)
            case "ilst": readItems(b, payload, tracksSoFar: tracksSoFar)
            case "udta": readUserData(b, payload, tracksSoFar: tracksSoFar, handlerName: &handlerName, inTrack: inTrack, depth: 1)
            case "chpl": chapters = ITunesMetadata.neroChapters(body)
            case "----": readFreeform(b, payload, tracksSoFar: tracksSoFar)
            default: break
            }
        }
    }

    /// `keys` (mov_read_keys): the key names of mdta items, 1-based.
    private mutating func readKeys(_ b: [UInt8]) {
        guard b.count >= 8 else { return }
        let count = Int(ITunesMetadata.be32(b, 4))
        var out = [""]
        var p = 8
        for _ in 0..<min(count, 65_536) {
            guard p + 8 <= b.count else { break }
            let size = Int(ITunesMetadata.be32(b, p))
            guard size >= 8, p + size <= b.count else { break }
            out.append(ITunesMetadata.cString(b[p + 8..<p + size]))
            p += size
        }
        keys = out
    }

    /// `ilst` children (mov_read_ilst): each item as an iTunes value, `----` as freeform.
    private mutating func readItems(_ b: [UInt8], _ range: Range<Int>, tracksSoFar: Int) {
        for (type, payload) in ITunesMetadata.boxes(b, range) {
            switch type {
            case "----": readFreeform(b, payload, tracksSoFar: tracksSoFar)
            case "meta", "udta", "hdlr", "keys", "free", "skip", "chpl": break
            default: readString(type: type, Array(b[payload]), itunes: true, typeBytes: Array(b[payload.lowerBound - 4..<payload.lowerBound]))
            }
        }
    }

    /// A freeform `----` item (mov_read_custom): mean, name and data atoms in any order, keyed
    /// by its name; ignored before the first track, as FFmpeg does, and when named "cdec".
    private mutating func readFreeform(_ b: [UInt8], _ range: Range<Int>, tracksSoFar: Int) {
        guard tracksSoFar > 0 else { return }
        var mean: String?, name: String?, value: String?
        var p = range.lowerBound
        atoms: for _ in 0..<3 {
            guard range.upperBound - p > 12 else { break }
            var length = Int(ITunesMetadata.be32(b, p))
            let tag = ITunesMetadata.atomName(b[p + 4..<p + 8])
            p += 12
            guard length >= 12, length - 12 <= range.upperBound - p else { break }
            length -= 12
            let text: String
            switch tag {
            case "mean", "name":
                text = ITunesMetadata.cString(b[p..<p + length])
            case "data" where length > 4:
                text = ITunesMetadata.cString(b[p + 4..<p + length])
            default:
                break atoms
            }
            switch tag {
            case "mean": if mean != nil { break atoms }; mean = text
            case "name": if name != nil { break atoms }; name = text
            default: if value != nil { break atoms }; value = text
            }
            p += length
        }
        guard let mean, let name, let value, name != "cdec" else { return }
        metadata.append(key: MetadataKeys.key(name), nativeKey: "----:\(mean):\(name)", ffmpegKey: name, value: value)
    }

    /// One udta string / ilst item (mov_read_udta_string, FFmpeg 5.1).
    private mutating func readString(type: String, _ b: [UInt8], itunes: Bool, typeBytes: [UInt8] = []) {
        var row = ITunesMetadata.byAtom[type]
        if type == "loci", !itunes {
            guard let (value, language) = ITunesMetadata.location(b) else { return }
            if let language, language != "und" { metadata.append(key: "location", nativeKey: "loci", ffmpegKey: "location-\(language)", value: value) }
            metadata.append(key: "location", nativeKey: "loci", ffmpegKey: "location", value: value)
            return
        }
        if !itunes, let key = ITunesMetadata.threeGPP[type], b.count > 6 {
            // 3GPP: version / flags, language, a UTF-8 or UTF-16 (with BOM) string.
            let text = Array(b[6...])
            var value = ITunesMetadata.cString(text)
            if text.count >= 2, text[0] == 0xFE, text[1] == 0xFF {
                var units: [UInt16] = []
                var i = 2
                while i + 1 < text.count {
                    let u = UInt16(text[i]) << 8 | UInt16(text[i + 1])
                    if u == 0 { break }
                    units.append(u)
                    i += 2
                }
                value = String(decoding: units, as: UTF16.self)
            }
            metadata.append(key: key, nativeKey: type, ffmpegKey: "", value: value)
            return
        }
        var raw = row?.kind == .raw
        var dataType: UInt32 = 0
        var language: String?
        var langcode = 0
        var value: [UInt8]
        var nativeKey = type
        if itunes {
            guard b.count > 8 else { return }
            let size = Int(ITunesMetadata.be32(b, 0))
            guard ITunesMetadata.atomName(b[4..<8]) == "data", size <= b.count, size >= 16 else { return }
            dataType = ITunesMetadata.be32(b, 8)
            if row == nil, foundMdta, !keys.isEmpty {
                let index = Int(ITunesMetadata.be32(typeBytes, 0))
                if index > 0 && index < keys.count {
                    row = ITunesMetadata.Row(atom: type, key: keys[index], ffmpegKey: keys[index], kind: .text)
                    nativeKey = keys[index]
                }
            }
            if type == "covr" || row?.ffmpegKey == "com.apple.quicktime.artwork" {
                // One or more data atoms, each a picture.
                var p = 0
                var left = b.count
                while left > 8, p + 16 <= b.count {
                    let n = Int(ITunesMetadata.be32(b, p))
                    guard ITunesMetadata.atomName(b[p + 4..<p + 8]) == "data", n >= 16, n <= left else { break }
                    if let c = ITunesMetadata.cover(type: ITunesMetadata.be32(b, p + 8), Array(b[p + 16..<p + n])) { covers.append(c) }
                    left -= n
                    p += n
                }
                return
            }
            value = Array(b[16..<size])
        } else if b.count > 4, row != nil, !raw {
            let length = ITunesMetadata.be16(b, 0)
            if length > b.count {
                raw = true
                value = b
            } else {
                langcode = ITunesMetadata.be16(b, 2)
                language = ITunesMetadata.language(langcode)
                value = Array(b[4..<min(b.count, 4 + length)])
            }
        } else {
            value = b
        }
        guard let row, !row.ffmpegKey.isEmpty || !row.key.isEmpty else { return }
        var text: String?
        func byte(_ i: Int) -> Int { i < value.count ? Int(value[i]) : 0 }
        switch row.kind {
        case .numberOfTotal:
            let current = Int(Int16(truncatingIfNeeded: ITunesMetadata.be16(value, 2)))
            let total = value.count >= 6 ? Int(Int16(truncatingIfNeeded: ITunesMetadata.be16(value, 4))) : 0
            text = total == 0 ? "\(current)" : "\(current)/\(total)"
        case .byte: text = "\(byte(0))"
        case .paddedByte: text = "\(byte(3))"
        case .genre:
            let g = byte(1)
            if g >= 1 && g <= 191 { text = ID3Metadata.genres[g - 1] }
        case .text, .raw:
            if !raw && (dataType == 3 || (dataType == 0 && (langcode < 0x400 || langcode == 0x7FFF))) {
                text = ITunesMetadata.macString(value)
            } else if dataType == 21 {
                var v = 0
                switch value.count {
                case 1: v = Int(Int8(bitPattern: value[0]))
                case 2: v = Int(Int16(truncatingIfNeeded: ITunesMetadata.be16(value, 0)))
                case 3: v = Int(Int32(bitPattern: ITunesMetadata.be32([0] + value, 0) << 8) >> 8)
                case 4: v = Int(Int32(bitPattern: ITunesMetadata.be32(value, 0)))
                default: break
                }
                text = "\(v)"
            } else if dataType == 22 {
                var v: UInt32 = 0
                switch value.count {
                case 1: v = UInt32(value[0])
                case 2: v = UInt32(ITunesMetadata.be16(value, 0))
                case 3: v = ITunesMetadata.be32([0] + value, 0)
                case 4: v = ITunesMetadata.be32(value, 0)
                default: break
                }
                text = "\(v)"
            } else if dataType == 23 && value.count >= 4 {
                text = String(format: "%f", Double(Float(bitPattern: ITunesMetadata.be32(value, 0))))
            } else if dataType > 1 && dataType != 4 {
                // UTF-16, pictures and other types: FFmpeg 5.1 skips them ("Skipping unhandled
                // metadata"; checked with ffprobe on items of types 2 and 13).
                return
            } else {
                text = ITunesMetadata.cString(value)
            }
        }
        guard let text else { return }
        metadata.append(key: row.key, nativeKey: nativeKey, ffmpegKey: row.ffmpegKey, value: text)
        if let language, language != "und", !row.ffmpegKey.isEmpty {
            metadata.append(key: row.key, nativeKey: nativeKey, ffmpegKey: "\(row.ffmpegKey)-\(language)", value: text)
        }
    }
}
