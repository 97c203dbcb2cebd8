import Foundation

extension VorbisComment {
    /// A comment block as ``Metadata`` (every `KEY=value` field in order, its native name kept,
    /// FFmpeg's key being the field name but for ``generic``'s four renames, repeated keys joined
    /// with ";"), the METADATA_BLOCK_PICTURE fields as attachments, and the OGM chapter fields
    /// (`CHAPTER001=00:01:02.500`, `CHAPTER001NAME=`) as chapters in milliseconds (their end is
    /// left at ``Chapter/unknownEnd``: see ``Chapter/fillEnds(_:duration:)``).
    static func metadata(_ b: [UInt8]) -> (metadata: Metadata, pictures: [Attachment], chapters: [Chapter], problem: String?) {
        let (_, list, problem) = fields(b)
        var metadata = Metadata(ffmpegMerge: .join(";"))
        var pictures: [Attachment] = []
        var chapters: [Int: Chapter] = [:]
        var order: [Int] = []
        for (key, value) in list {
            guard !key.isEmpty else { continue }
            if key.uppercased() == "METADATA_BLOCK_PICTURE" {
                if let bytes = Data(base64Encoded: value, options: .ignoreUnknownCharacters),
                   let p = try? FLACPicture([UInt8](bytes), offset: 0, path: "") {
                    pictures.append(p.attachment)
                }
                continue
            }
            if let (number, isName) = chapterField(key, value) {
                if !isName {
                    let parts = value.split(whereSeparator: { $0 == ":" || $0 == "." }).prefix(4).map { Int($0.prefix(3)) ?? 0 }
                    if parts.count == 4 {
                        // As FFmpeg's sscanf("%02d:%02d:%02d.%03d"): ".5" is 5 ms.
                        let ms = parts[3]
                        let start = Int64(ms + 1000 * (parts[2] + 60 * (parts[1] + 60 * parts[0])))
                        if chapters[number] == nil { order.append(number) }
                        chapters[number] = Chapter(id: Int64(number), timeBase: Rational(1, 1000), start: start, end: Chapter.unknownEnd)
                    }
                    continue
                }
                if var c = chapters[number] {
                    c.metadata.append(key: "title", nativeKey: key, ffmpegKey: "title", value: value)
                    chapters[number] = c
                    continue
                }
            }
            metadata.append(key: MetadataKeys.key(key), nativeKey: key, ffmpegKey: generic[key.uppercased()] ?? key, value: value)
        }
        return (metadata, pictures, order.compactMap { chapters[$0] }, problem)
    }
}

extension FLACPicture {
    /// The picture as an ``Attachment``.
    var attachment: Attachment {
        Attachment(data: data, mimeType: mimeType, pictureType: type, description: description, width: width, height: height)
    }
}

extension Chapter {
    /// The ``end`` of a chapter whose container states none, until ``fillEnds(_:duration:)``.
    static let unknownEnd = Int64.min

    /// FFmpeg's compute_chapters_end: a chapter without an end ends where the next chapter (in
    /// start order) starts, else at the end of the file (`duration` seconds), else at its start.
    static func fillEnds(_ chapters: inout [Chapter], duration: Double?) {
        for i in chapters.indices where chapters[i].end == unknownEnd {
            let c = chapters[i]
            var end: Int64 = Int64.max
            if let duration, duration > 0, c.timeBase.numerator > 0 {
                end = Int64((duration * Double(c.timeBase.denominator) / Double(c.timeBase.numerator)).rounded(.down))
            }
            for other in chapters where other.start > c.start {
                let s = Rational.rescale(other.start, from: other.timeBase, to: c.timeBase)
                end = min(end, s)
            }
            chapters[i].end = end == Int64.max ? c.start : end
        }
    }
}
