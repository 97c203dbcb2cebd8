import Foundation

/// ID3v2 / ID3v1 tags as ``Metadata``, ``Attachment``s and ``Chapter``s, with FFmpeg 5.1's
/// reading of them (libavformat/id3v2.c, id3v1.c) for ``MetadataEntry/ffmpegKey``.
enum ID3Metadata {
    /// Frame id -> MediaKit's normalised key (ID3v2.3 / 2.4 and the three-letter v2.2 ids).
    static let normalised: [String: String] = [
        "TIT2": "title", "TT2": "title", "TPE1": "artist", "TP1": "artist", "TPE2": "album_artist", "TP2": "album_artist",
        "TALB": "album", "TAL": "album", "TRCK": "track", "TRK": "track", "TPOS": "disc", "TPA": "disc",
        "TDRC": "date", "TYER": "date", "TYE": "date", "TDRL": "date", "TCON": "genre", "TCO": "genre",
        "COMM": "comment", "COM": "comment", "TCOM": "composer", "TCM": "composer", "USLT": "lyrics", "ULT": "lyrics",
        "TSSE": "encoder", "TSS": "encoder", "TENC": "encoded_by", "TEN": "encoded_by", "TLAN": "language", "TLA": "language",
        "TCOP": "copyright", "TCR": "copyright", "TSRC": "isrc", "TRC": "isrc", "TPUB": "publisher", "TPB": "publisher",
        "TPE3": "performer", "TP3": "performer", "TCMP": "compilation", "TCP": "compilation", "TIT1": "grouping", "TT1": "grouping",
        "TSOA": "album-sort", "TSOP": "artist-sort", "TSOT": "title-sort", "TDEN": "creation_time", "TBPM": "bpm", "TBP": "bpm",
    ]

    /// Frame id -> the key FFmpeg gives it (ff_id3v2_34_metadata_conv, ff_id3v2_4_metadata_conv,
    /// id3v2_2_metadata_conv); other text frames keep their id.
    static let ffmpegNames: [String: String] = [
        "TALB": "album", "TCOM": "composer", "TCON": "genre", "TCOP": "copyright", "TENC": "encoded_by", "TIT2": "title",
        "TLAN": "language", "TPE1": "artist", "TPE2": "album_artist", "TPE3": "performer", "TPOS": "disc", "TPUB": "publisher",
        "TRCK": "track", "TSSE": "encoder", "USLT": "lyrics",
        "TCMP": "compilation", "TDRC": "date", "TDRL": "date", "TDEN": "creation_time", "TSOA": "album-sort",
        "TSOP": "artist-sort", "TSOT": "title-sort", "TIT1": "grouping",
        "TAL": "album", "TCO": "genre", "TCP": "compilation", "TT2": "title", "TEN": "encoded_by", "TP1": "artist",
        "TP2": "album_artist", "TP3": "performer", "TRK": "track",
    ]

    /// The ID3v1 genres 0-191 (id3.org ID3v2.3 appendix A, with Winamp's extensions), as
    /// FFmpeg's `ff_id3v1_genre_str` spells them.
    static let genres = [
        "Blues", "Classic Rock", "Country", "Dance", "Disco", "Funk", "Grunge", "Hip-Hop", "Jazz", "Metal", "New Age",
        "Oldies", "Other", "Pop", "R&B", "Rap", "Reggae", "Rock", "Techno", "Industrial", "Alternative", "Ska",
        "Death Metal", "Pranks", "Soundtrack", "Euro-Techno", "Ambient", "Trip-Hop", "Vocal", "Jazz+Funk", "Fusion",
        "Trance", "Classical", "Instrumental", "Acid", "House", "Game", "Sound Clip", "Gospel", "Noise", "AlternRock",
        "Bass", "Soul", "Punk", "Space", "Meditative", "Instrumental Pop", "Instrumental Rock", "Ethnic", "Gothic",
        "Darkwave", "Techno-Industrial", "Electronic", "Pop-Folk", "Eurodance", "Dream", "Southern Rock", "Comedy",
        "Cult", "Gangsta", "Top 40", "Christian Rap", "Pop/Funk", "Jungle", "Native American", "Cabaret", "New Wave",
        "Psychadelic", "Rave", "Showtunes", "Trailer", "Lo-Fi", "Tribal", "Acid Punk", "Acid Jazz", "Polka", "Retro",
        "Musical", "Rock & Roll", "Hard Rock", "Folk", "Folk-Rock", "National Folk", "Swing", "Fast Fusion", "Bebob",
        "Latin", "Revival", "Celtic", "Bluegrass", "Avantgarde", "Gothic Rock", "Progressive Rock", "Psychedelic Rock",
        "Symphonic Rock", "Slow Rock", "Big Band", "Chorus", "Easy Listening", "Acoustic", "Humour", "Speech", "Chanson",
        "Opera", "Chamber Music", "Sonata", "Symphony", "Booty Bass", "Primus", "Porn Groove", "Satire", "Slow Jam",
        "Club", "Tango", "Samba", "Folklore", "Ballad", "Power Ballad", "Rhythmic Soul", "Freestyle", "Duet", "Punk Rock",
        "Drum Solo", "A capella", "Euro-House", "Dance Hall", "Goa", "Drum & Bass", "Club-House", "Hardcore", "Terror",
        "Indie", "BritPop", "Negerpunk", "Polsk Punk", "Beat", "Christian Gangsta", "Heavy Metal", "Black Metal",
        "Crossover", "Contemporary Christian", "Christian Rock", "Merengue", "Salsa", "Thrash Metal", "Anime", "JPop",
        "SynthPop", "Abstract", "Art Rock", "Baroque", "Bhangra", "Big Beat", "Breakbeat", "Chillout", "Downtempo", "Dub",
        "EBM", "Eclectic", "Electro", "Electroclash", "Emo", "Experimental", "Garage", "Global", "IDM", "Illbient",
        "Industro-Goth", "Jam Band", "Krautrock", "Leftfield", "Lounge", "Math Rock", "New Romantic", "Nu-Breakz",
        "Post-Punk", "Post-Rock", "Psytrance", "Shoegaze", "Space Rock", "Trop Rock", "World Music", "Neoclassical",
        "Audiobook", "Audio Theatre", "Neue Deutsche Welle", "Podcast", "Indie Rock", "G-Funk", "Dubstep", "Garage Rock",
        "Psybient",
    ]

    /// Tags, pictures and chapters of one file.
    struct Result {
        var metadata = Metadata(ffmpegMerge: .keepFirst)
        var attachments: [Attachment] = []
        var chapters: [Chapter] = []
    }

    /// The largest ID3v2 tag read for metadata (a larger one is skipped).
    static let maxTagBytes = 64 << 20

    /// Reads the ID3v2 tags at the start of `source` and, when there are none, the ID3v1 tag in
    /// its last 128 bytes (FFmpeg reads ID3v1 only when no ID3v2 tag gave a tag).
    static func read(_ source: ByteSource, v1: Bool = true) throws -> Result {
        var result = Result()
        var at: Int64 = 0
        while let size = ID3.v2TagSize(try source.readUpTo(at: at, count: 10)[...]) {
            if size <= maxTagBytes { parseV2(try source.readUpTo(at: at, count: size), into: &result) }
            at += Int64(size)
        }
        if v1, result.metadata.isEmpty, source.isSeekable, let size = source.knownSize, size > 128 {
            parseV1(try source.readUpTo(at: size - 128, count: 128), into: &result.metadata)
        }
        return result
    }

    /// Adds the frames of one whole ID3v2 tag (header included).
    static func parseV2(_ tag: [UInt8], into result: inout Result) {
        guard tag.count >= 10 else { return }
        var raw = AudioTags(), warnings: [String] = []
        ID3.readV2(tag, into: &raw, warnings: &warnings)
        let major = Int(tag[3])
        addFrames(raw.frames, major: major, into: &result, chapterTags: false)
        mergeDate(&result.metadata)
        // libavformat adds the PRIV frames (ff_id3v2_parse_priv) after reading every text frame:
        // they come last in its dictionary, whatever their place in the tag.
        let priv = result.metadata.filter { $0.nativeKey == "PRIV" }
        if !priv.isEmpty {
            result.metadata = Metadata(result.metadata.filter { $0.nativeKey != "PRIV" } + priv, ffmpegMerge: result.metadata.ffmpegMerge)
        }
    }

    /// Adds ID3v2 frames (id, body after unsynchronisation) as FFmpeg reads them.
    private static func addFrames(_ frames: [(id: String, data: [UInt8])], major: Int, into result: inout Result, chapterTags: Bool) {
        var chapterFrames: [(element: String, start: Int64, end: Int64, tags: Metadata)] = []
        for (id, data) in frames {
            switch id {
            case "TXXX", "TXX":
                guard let enc = data.first else { continue }
                let (description, rest) = string(Array(data.dropFirst()), encoding: enc)
                let (value, _) = string(rest, encoding: enc)
                result.metadata.append(key: normalisedUserKey(description), nativeKey: description, ffmpegKey: description, value: value)
            case _ where id.first == "T":
                guard let enc = data.first else { continue }
                var (value, _) = string(Array(data.dropFirst()), encoding: enc)
                if id == "TCON" || id == "TCO", let n = leadingGenreNumber(value), n < genres.count { value = genres[n] }
                result.metadata.append(key: normalised[id] ?? id, nativeKey: id, ffmpegKey: ffmpegNames[id] ?? id, value: value)
            case "COMM", "COM", "USLT", "ULT":
                guard data.count >= 4 else { continue }
                let enc = data[0]
                let language = String(decoding: data[1..<4].filter { $0 != 0 }, as: UTF8.self)
                let (description, rest) = string(Array(data[4...]), encoding: enc)
                let (value, _) = string(rest, encoding: enc)
                let ffKey: String
                if id == "COMM" || id == "COM" {
                    ffKey = description.isEmpty ? "comment" : description
                } else {
                    ffKey = "lyrics-" + (description.isEmpty ? "" : description + "-") + language
                }
                result.metadata.append(key: normalised[id] ?? id, nativeKey: id, ffmpegKey: chapterTags ? "" : ffKey, value: value)
            case "PRIV" where !chapterTags:
                guard let end = data.firstIndex(of: 0) else { continue }
                let owner = String(decoding: data[..<end], as: UTF8.self)
                var value = ""
                for b in data[(end + 1)...] {
                    if b < 32 || b > 126 || b == UInt8(ascii: "\\") { value += String(format: "\\x%02x", b) } else { value.append(Character(UnicodeScalar(b))) }
                }
                result.metadata.append(key: "id3v2_priv." + owner, nativeKey: "PRIV", ffmpegKey: "id3v2_priv." + owner, value: value)
            case "APIC" where !chapterTags, "PIC" where !chapterTags:
                if let picture = picture(id: id, data) { result.attachments.append(picture) }
            case "CHAP" where !chapterTags:
                guard let c = ID3.chapterFrame(data, major: major) else { continue }
                let (element, start, stop, sub) = (c.element, c.start, c.end, c.sub)
                // FFmpeg titles a chapter with its element id until a TIT2 sub-frame replaces it.
                var inside = Result()
                inside.metadata = Metadata(ffmpegMerge: .replace)
                inside.metadata.append(key: "element_id", nativeKey: "CHAP", ffmpegKey: "title", value: element)
                addFrames(sub.frames, major: major, into: &inside, chapterTags: true)
                chapterFrames.append((element, start, stop, inside.metadata))
            default:
                continue
            }
        }
        // FFmpeg sorts the CHAP frames by start time (ff_id3v2_parse_chapters) and numbers them.
        let sorted = chapterFrames.enumerated().sorted { ($0.element.start, $0.offset) < ($1.element.start, $1.offset) }.map(\.element)
        for c in sorted {
            result.chapters.append(Chapter(id: Int64(result.chapters.count), timeBase: Rational(1, 1000), start: c.start, end: c.end, metadata: c.tags))
        }
    }

    /// An APIC (v2.3 / 2.4) or PIC (v2.2) frame as an attachment.
    static func picture(id: String, _ data: [UInt8]) -> Attachment? {
        guard data.count > 4 else { return nil }
        let enc = data[0]
        var at = 1
        var mime: String
        if id == "PIC" {
            let format = String(decoding: data[1..<4], as: UTF8.self).uppercased()
            mime = format == "PNG" ? "image/png" : "image/jpeg"
            at = 4
        } else {
            guard let end = data[1...].firstIndex(of: 0) else { return nil }
            mime = String(decoding: data[1..<end], as: UTF8.self)
            at = end + 1
            if !mime.contains("/") { mime = "image/" + mime.lowercased() }
        }
        guard at < data.count else { return nil }
        var type = Int(data[at])
        if type >= Attachment.pictureTypeNames.count { type = 0 }
        at += 1
        let (description, rest) = string(Array(data[at...]), encoding: enc)
        return Attachment(data: rest, mimeType: mime, pictureType: type, description: description)
    }

    /// A 128-byte ID3v1 tag ("TAG"), as FFmpeg's parse_tag reads it: each field up to its first
    /// NUL, not trimmed; the track from the ID3v1.1 byte; the genre when its number is known.
    static func parseV1(_ b: [UInt8], into metadata: inout Metadata) {
        guard b.count == 128, b[0] == 0x54, b[1] == 0x41, b[2] == 0x47 else { return }
        func field(_ name: String, _ r: Range<Int>) {
            let bytes = b[r].prefix { $0 != 0 }
            guard !bytes.isEmpty else { return }
            metadata.append(key: name, nativeKey: "ID3v1:" + name, ffmpegKey: name, value: ID3.decode(Array(bytes), encoding: 0))
        }
        field("title", 3..<33)
        field("artist", 33..<63)
        field("album", 63..<93)
        field("date", 93..<97)
        field("comment", 97..<127)
        if b[125] == 0 && b[126] != 0 { metadata.append(key: "track", nativeKey: "ID3v1:track", ffmpegKey: "track", value: String(b[126])) }
        if Int(b[127]) < genres.count { metadata.append(key: "genre", nativeKey: "ID3v1:genre", ffmpegKey: "genre", value: genres[Int(b[127])]) }
    }

    /// FFmpeg's merge_date: a four-digit TYER, then TDAT (DDMM) and TIME (HHMM), become one
    /// "YYYY-MM-DD HH:MM" date that replaces any other; the frames used are no longer tags.
    static func mergeDate(_ metadata: inout Metadata) {
        func fourDigits(_ ids: [String]) -> MetadataEntry? {
            metadata.first { ids.contains($0.ffmpegKey) && $0.value.utf8.count == 4 && $0.value.utf8.allSatisfy { (0x30...0x39).contains($0) } }
        }
        guard let year = fourDigits(["TYER", "TYE"]) else { return }
        var date = year.value
        var used: Set<String> = ["TYER", "TYE"]
        if let dm = fourDigits(["TDAT", "TDA"]) {
            date += "-\(dm.value.suffix(2))-\(dm.value.prefix(2))"
            used.formUnion(["TDAT", "TDA"])
            if let hm = fourDigits(["TIME", "TIM"]) {
                date += " \(hm.value.prefix(2)):\(hm.value.suffix(2))"
                used.formUnion(["TIME", "TIM"])
            }
        }
        var entries: [MetadataEntry] = metadata.map { e in
            var e = e
            // Hidden from the FFmpeg view: replaced by the merged date.
            if used.contains(e.ffmpegKey) || e.ffmpegKey == "date" { e.ffmpegKey = "" }
            return e
        }
        entries.append(MetadataEntry(key: "date", nativeKey: "TYER+TDAT+TIME", ffmpegKey: "date", value: date))
        metadata = Metadata(entries, ffmpegMerge: metadata.ffmpegMerge)
    }

    /// The normalised key of a TXXX description (MusicBrainz Picard's and ReplayGain's names).
    static func normalisedUserKey(_ description: String) -> String {
        MetadataKeys.normalised(description) ?? description
    }

    /// FFmpeg reads a TCON genre number as `sscanf("(%d)")` or `sscanf("%d")`.
    private static func leadingGenreNumber(_ s: String) -> Int? {
        var text = Substring(s)
        if text.hasPrefix("(") { text = text.dropFirst() }
        let digits = text.prefix { $0.isASCII && $0.isNumber }
        return digits.isEmpty ? nil : Int(digits.prefix(6))
    }

    /// A terminated string in ID3 encoding `enc` and the bytes after its terminator.
    static func string(_ data: [UInt8], encoding enc: UInt8) -> (String, [UInt8]) {
        let wide = enc == 1 || enc == 2
        var end = data.count, next = data.count
        if wide {
            var i = 0
            while i + 1 < data.count { if data[i] == 0 && data[i + 1] == 0 { end = i; next = i + 2; break }; i += 2 }
        } else if let i = data.firstIndex(of: 0) {
            end = i
            next = i + 1
        }
        return (ID3.decode(Array(data[..<end]), encoding: enc), Array(data[next...]))
    }
}
