/// Vorbis comments (the FLAC VORBIS_COMMENT block, Ogg Vorbis / Opus comment headers).
public enum VorbisComment {
    /// FFmpeg's names for the Vorbis keys it renames (libavformat/vorbiscomment.c).
    static let generic = ["ALBUMARTIST": "album_artist", "TRACKNUMBER": "track", "DISCNUMBER": "disc", "DESCRIPTION": "comment"]

    /// Reads a comment block: the vendor string and the `KEY=value` fields, as FFmpeg 5.1 lists
    /// them (`ffprobe -show_entries format_tags`, libavformat's ff_vorbis_comment and
    /// ff_metadata_conv over its AVDictionary): a field without `=`, or with an empty key or
    /// value, is dropped; OGM chapter fields (`CHAPTER001=00:00:00.000`, `CHAPTER001NAME=`) and
    /// `METADATA_BLOCK_PICTURE` are not tags; a key repeated in any case keeps one entry, the
    /// values joined by ";", under the last spelling; ALBUMARTIST, TRACKNUMBER, DISCNUMBER and
    /// DESCRIPTION take FFmpeg's generic names.
    /// - Returns: the tags and a problem found (a count or a length running past the block,
    ///   where reading stopped), if any.
    static func parse(_ b: [UInt8]) -> (vendor: String, tags: [(key: String, value: String)], problem: String?) {
        let (vendor, list, problem) = fields(b)
        var raw = Dictionary()
        var chapters: Set<Int> = []
        for (key, value) in list {
            guard !key.isEmpty, !value.isEmpty else { continue }
            let upper = key.uppercased()
            if upper == "METADATA_BLOCK_PICTURE" { continue }
            if let (number, isName) = chapterField(key, value) {
                if !isName { chapters.insert(number); continue }
                if chapters.contains(number) { continue }
            }
            if raw.contains(key) { raw.set(key, ";", append: true) }
            raw.set(key, value, append: true)
        }
        var tags = Dictionary()
        for (key, value) in raw.entries { tags.set(generic[key.uppercased()] ?? key, value, append: false) }
        return (vendor, tags.entries, problem)
    }

    /// The fields of a comment block as stored: `KEY=value` split at the first "=" (a field
    /// without one has an empty key... and is given as key "" with the whole field as value).
    /// - Returns: the vendor string, the fields, and a problem found (a count or a length
    ///   running past the block, where reading stopped), if any.
    static func fields(_ b: [UInt8]) -> (vendor: String, fields: [(key: String, value: String)], problem: String?) {
        func le32(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 | Int(b[i + 3]) << 24 }
        guard b.count >= 8 else { return ("", [], "the block is \(b.count) bytes; at least 8 expected") }
        let vendorLength = le32(0)
        guard vendorLength <= b.count - 8 else { return ("", [], "the vendor string's length \(vendorLength) runs past the block's \(b.count) bytes") }
        let vendor = String(decoding: b[4..<4 + vendorLength], as: UTF8.self)
        var at = 4 + vendorLength
        var count = le32(at)
        at += 4
        var out: [(key: String, value: String)] = []
        var problem: String?
        while count > 0 {
            guard b.count - at >= 4 else { problem = "the block ends with \(count) comments still announced"; break }
            let n = le32(at)
            at += 4
            guard n <= b.count - at else { problem = "a comment of \(n) bytes at byte \(at) runs past the block's \(b.count)"; break }
            let field = b[at..<at + n]
            at += n
            count -= 1
            if let eq = field.firstIndex(of: UInt8(ascii: "=")) {
                out.append((String(decoding: field[field.startIndex..<eq], as: UTF8.self), String(decoding: field[(eq + 1)...], as: UTF8.self)))
            } else {
                out.append(("", String(decoding: field, as: UTF8.self)))
            }
        }
        return (vendor, out, problem)
    }

    /// An OGM chapter field: `CHAPTERnnn` holding a time (isName false) or `CHAPTERnnnNAME`
    /// (isName true), with its number; nil for any other field (FFmpeg's vorbis_parse_chapter).
    static func chapterField(_ key: String, _ value: String) -> (number: Int, isName: Bool)? {
        let upper = key.uppercased()
        guard upper.hasPrefix("CHAPTER"), key.utf8.count >= 9 else { return nil }
        let digits = upper.dropFirst(7).prefix(3).prefix { $0.isASCII && $0.isNumber }
        guard let number = Int(digits) else { return nil }
        if key.utf8.count <= 10 {
            return value.wholeMatch(of: /\d{1,2}:\d{1,2}:\d{1,2}\.\d{1,3}.*/) != nil ? (number, false) : nil
        }
        return upper.hasSuffix("NAME") ? (number, true) : nil
    }

    /// FFmpeg's AVDictionary as libavformat fills it: keys match in any case; setting a key that
    /// is there removes its entry (the last entry takes its place) and appends the new one.
    private struct Dictionary {
        var entries: [(key: String, value: String)] = []
        func index(_ key: String) -> Int? {
            let k = key.lowercased()
            return entries.firstIndex { $0.key.lowercased() == k }
        }
        func contains(_ key: String) -> Bool { index(key) != nil }
        mutating func set(_ key: String, _ value: String, append: Bool) {
            var value = value
            if let i = index(key) {
                if append { value = entries[i].value + value }
                entries[i] = entries[entries.count - 1]
                entries.removeLast()
            }
            entries.append((key, value))
        }
    }
}
