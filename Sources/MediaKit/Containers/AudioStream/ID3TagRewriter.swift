/// The tag writer of MP3 files (``ContainerFormat/mpegAudio``'s ``ContainerFormat/tagRewriter``):
/// the ID3v2 tags at the start of the file are replaced by one ID3v2.4 tag of the frames
/// ``MP3Writer`` writes (``MetadataWriting/id3v2(tags:pictures:chapters:padding:)``), the APIC
/// frames first, then the old tags' frames that the model does not hold (GEOB, POPM, UFID,
/// PCNT, URL frames ...: ``ID3/unmodelledFrames(_:)``, their bodies copied byte for byte; from
/// an ID3v2.3 tag only the frames whose body is the same in ID3v2.4); the audio frames after
/// them are never touched. An ID3v1 tag at the end is
/// written again with the new values (``id3v1(_:old:)``).
///
/// In place when the new tag fits in the old tags' bytes (padding absorbs the difference), the
/// ID3v1 tag (if any) stays as it is, and the bytes that change lie in one page (``FileRegionRewrite``); otherwise the file is written
/// again with the new tag and ``grownPadding`` bytes of padding, then the audio copied.
enum ID3TagRewriter {
    /// Padding given to a tag written through a temporary file, so that later edits of a few
    /// text frames fit in place.
    static let grownPadding = 1024

    /// The rewriter.
    static let rewriter = TagRewriter { path, metadata, allowInPlace in
        let source = try FileSource(path: path)
        let end = try ID3.leadingV2TagsEnd(source)
        guard end <= source.fileSize else {
            throw MediaError(.invalidData, "the ID3v2 tags at the start state \(end) bytes; the file has \(source.fileSize)", path: path, offset: 0)
        }
        // The pictures first: an edit of the text frames then shifts only the bytes after the
        // (large) APIC frames, which can often be rewritten in place (one page).
        let pictures = MetadataWriting.id3v2(tags: [], pictures: metadata.pictures, chapters: [])
        let text = MetadataWriting.id3v2(tags: metadata.combined(track: 0), pictures: [], chapters: metadata.chapters)
        var frames = pictures.isEmpty ? text : text.isEmpty ? pictures : pictures + text.dropFirst(10)
        // The frames the model does not hold (GEOB, POPM, UFID ...) are copied, after the others.
        var kept: [UInt8] = [], at: Int64 = 0
        while at < end, let size = ID3.v2TagSize(try source.readUpTo(at: at, count: 10)[...]) {
            kept += ID3.unmodelledFrames(try source.read(at: at, count: min(size, Int(truncatingIfNeeded: end - at)))).joined()
            at += Int64(size)
        }
        if !kept.isEmpty { frames = (frames.isEmpty ? Array("ID3".utf8) + [4, 0, 0] + MetadataWriting.syncsafe(kept.count) : frames) + kept }
        guard frames.count + grownPadding < 1 << 28 else {
            throw MediaError(.invalidArgument, "an ID3v2 tag of \(frames.count) bytes is over the format's 256 MiB", path: path)
        }
        // An ID3v1 tag at the end is written again with the new values (readers such as mutagen
        // merge its fields into the ID3v2 tag's: a removed key would come back from it).
        var v1: [UInt8]?
        if source.fileSize >= end + 128, let old = try? source.readUpTo(at: source.fileSize - 128, count: 128), old.starts(with: Array("TAG".utf8)) {
            v1 = id3v1(metadata.combined(track: 0), old: old)
        }
        return try FileRegionRewrite.replace(path: path, start: 0, oldLength: end, fitted: tag(frames, size: Int(truncatingIfNeeded: end)),
                                             grown: tag(frames, size: max(frames.count, 10) + grownPadding) ?? frames, trailer: v1,
                                             allowInPlace: allowInPlace)
    }

    /// An ID3v1.1 tag (128 bytes: "TAG", title, artist, album, year, comment, track, genre)
    /// holding `tags`, in ISO 8859-1 (other characters as "?"), each field cut to its size; the
    /// genre byte of `old` is kept while the tags have a genre, else 255 (none).
    static func id3v1(_ tags: [MetadataEntry], old: [UInt8]) -> [UInt8] {
        func value(_ key: String) -> String { tags.first { $0.key.lowercased() == key }?.value ?? "" }
        func field(_ s: String, _ n: Int) -> [UInt8] {
            let bytes = s.unicodeScalars.prefix(n).map { $0.value < 256 ? UInt8(truncatingIfNeeded: $0.value) : 0x3F }
            return bytes + [UInt8](repeating: 0, count: n - bytes.count)
        }
        let track = value("track").split(separator: "/").first.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        var out = Array("TAG".utf8) + field(value("title"), 30) + field(value("artist"), 30) + field(value("album"), 30) + field(value("date"), 4)
        if (1...255).contains(track) {
            out += field(value("comment"), 28) + [0, UInt8(truncatingIfNeeded: track)]
        } else {
            out += field(value("comment"), 30)
        }
        return out + [value("genre").isEmpty ? 0xFF : old[127]]
    }

    /// `frames` (a whole tag from ``MetadataWriting/id3v2(tags:pictures:chapters:padding:)``, or
    /// empty for none) grown with padding to `size` bytes in all; nil when it does not fit. No
    /// frames: a tag of padding alone (readers take it as an empty tag).
    static func tag(_ frames: [UInt8], size: Int) -> [UInt8]? {
        guard size >= 10, size - 10 < 1 << 28 else { return nil }
        let header: [UInt8] = Array("ID3".utf8) + [4, 0, 0] + MetadataWriting.syncsafe(size - 10)
        if frames.isEmpty { return header + [UInt8](repeating: 0, count: size - 10) }
        guard frames.count <= size else { return nil }
        return header + frames[10...] + [UInt8](repeating: 0, count: size - frames.count)
    }
}
