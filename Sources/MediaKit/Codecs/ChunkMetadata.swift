/// Tags in chunked files: RIFF INFO lists (WAV, AVI), AIFF text chunks, and ID3v2 tags held in
/// an `id3 ` / `ID3 ` chunk, as FFmpeg 5.1 reads them (libavformat/riffdec.c ff_read_riff_info,
/// ff_riff_info_conv; aiffdec.c get_meta).
enum ChunkMetadata {
    /// RIFF INFO ids -> MediaKit's normalised key and FFmpeg's name (ff_riff_info_conv; the
    /// ids are those of the RIFF MCI specification, "INFO list chunk").
    static let riffInfo: [String: String] = [
        "IART": "artist", "ICMT": "comment", "ICOP": "copyright", "ICRD": "date", "IGNR": "genre", "ILNG": "language",
        "INAM": "title", "IPRD": "album", "IPRT": "track", "ITRK": "track", "ISFT": "encoder", "ISMP": "timecode",
        "ITCH": "encoded_by",
    ]

    /// AIFF text chunks -> FFmpeg's key (and normalised key): NAME, AUTH, (c), ANNO (Audio IFF 1.3).
    static let aiffText: [String: String] = ["NAME": "title", "AUTH": "author", "(c) ": "copyright", "ANNO": "comment"]

    /// The most chunks visited, and the largest tag chunk read.
    static let maxChunks = 100_000, maxTagChunk = 16 << 20

    /// Tags, pictures and chapters of a RIFF (`bigEndian` false) or IFF file whose chunks run from
    /// `start` to `end`: LIST/INFO (RIFF), the AIFF text chunks (IFF), `id3 ` / `ID3 ` chunks. A
    /// chunk past the end of the source ends the walk (what was read is kept).
    static func read(_ source: ByteSource, start: Int64, end: Int64, bigEndian: Bool) throws -> ID3Metadata.Result {
        var result = ID3Metadata.Result()
        result.metadata = Metadata(ffmpegMerge: .replace)
        // WAV: the text of an `id3 ` chunk goes into libavformat's id3v2_meta, kept only when
        // the header gave no tag (avformat_open_input: "Discarding ID3 tags because more
        // suitable tags were found"); its PRIV frames go into the tags directly (wavdec.c).
        var riffID3Text: [MetadataEntry] = []
        var offset = start, visited = 0
        while offset + 8 <= end, visited < maxChunks {
            visited += 1
            let header = try source.readUpTo(at: offset, count: 8)
            guard header.count == 8 else { break }
            let id = String(decoding: header[0..<4], as: UTF8.self)
            let size = bigEndian ? Int64(be32(header, 4)) : Int64(header[4]) | Int64(header[5]) << 8 | Int64(header[6]) << 16 | Int64(header[7]) << 24
            let body = offset + 8
            let readable = size <= Int64(maxTagChunk)
            switch id {
            case "LIST" where !bigEndian && readable && size >= 4:
                let b = try source.readUpTo(at: body, count: Int(size))
                if b.count >= 4, String(decoding: b[0..<4], as: UTF8.self) == "INFO" { info(Array(b[4...]), into: &result.metadata) }
            case "id3 " where readable, "ID3 " where readable:
                let b = try source.readUpTo(at: body, count: Int(size))
                var tag = ID3Metadata.Result()
                ID3Metadata.parseV2(b, into: &tag)
                for e in tag.metadata where !e.ffmpegKey.isEmpty {
                    let priv = e.ffmpegKey.lowercased().hasPrefix("id3v2_priv.")
                    if !bigEndian && !priv {
                        riffID3Text.append(e)
                        continue
                    }
                    // AIFF: aiffdec.c parses no PRIV frame into the tags.
                    if bigEndian && priv { continue }
                    // AV_DICT_DONT_OVERWRITE: a tag already there stays.
                    if !result.metadata.contains(where: { $0.ffmpegKey.lowercased() == e.ffmpegKey.lowercased() }) { result.metadata.append(e) }
                }
                result.attachments += tag.attachments
                result.chapters += tag.chapters
            case _ where bigEndian && aiffText[id] != nil && readable:
                let b = try source.readUpTo(at: body, count: Int(size))
                let name = aiffText[id]!
                result.metadata.append(key: name == "author" ? "artist" : name, nativeKey: id, ffmpegKey: name,
                                       value: String(decoding: b.prefix { $0 != 0 }, as: UTF8.self))
            default: break
            }
            guard size >= 0 else { break }
            offset = body + size + (size & 1)
        }
        if result.metadata.isEmpty {
            for e in riffID3Text where !result.metadata.contains(where: { $0.ffmpegKey.lowercased() == e.ffmpegKey.lowercased() }) {
                result.metadata.append(e)
            }
        }
        return result
    }

    /// ``read(_:start:end:bigEndian:)`` on a seekable source (FFmpeg reads the chunks after
    /// the audio only then), else nothing; when the chunks hold no tag, the ID3v2 tags in front of
    /// the file (FFmpeg keeps those only when the format's header gave none).
    static func readFile(_ source: ByteSource, start: Int64, bigEndian: Bool) -> ID3Metadata.Result {
        var result = ID3Metadata.Result()
        if source.isSeekable, let size = source.knownSize {
            result = (try? read(source, start: start, end: size, bigEndian: bigEndian)) ?? result
        }
        if result.metadata.isEmpty, let leading = try? ID3Metadata.read(source, v1: false), !leading.metadata.isEmpty {
            result.metadata = leading.metadata
            if result.attachments.isEmpty { result.attachments = leading.attachments }
            if result.chapters.isEmpty { result.chapters = leading.chapters }
        }
        return result
    }

    /// The sub-chunks of a LIST/INFO body (after "INFO"): id, size, NUL-terminated text.
    static func info(_ b: [UInt8], into metadata: inout Metadata) {
        var at = 0
        while at + 8 <= b.count {
            let id = String(decoding: b[at..<at + 4], as: UTF8.self)
            let size = Int(b[at + 4]) | Int(b[at + 5]) << 8 | Int(b[at + 6]) << 16 | Int(b[at + 7]) << 24
            at += 8
            guard size <= b.count - at else { break }
            if b[at - 8] != 0 || size > 0 {
                let text = String(decoding: b[at..<at + size].prefix { $0 != 0 }, as: UTF8.self)
                if b[at - 8] != 0 {
                    let name = riffInfo[id]
                    metadata.append(key: name ?? id, nativeKey: id, ffmpegKey: name ?? id, value: text)
                }
            }
            at += size + (size & 1)
        }
    }
}
