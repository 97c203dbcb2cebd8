import Foundation

/// APEv2 tags (hydrogenaudio.org "APEv2 specification": a 32-byte footer "APETAGEX", version,
/// size, item count, flags; items of size, flags, key, value) as FFmpeg 5.1's apetag.c reads
/// them (ff_ape_parse_tag): only a tag whose footer ends the file, text items keyed as stored
/// (a repeated key, in any case, replacing the earlier one) with their value up to the first
/// NUL, binary items whose file name has a picture extension as attachments.
enum APETag {
    /// The footer's size.
    static let footerBytes = 32
    /// FFmpeg's largest tag (16 MiB past the footer) and most items.
    static let maxTagBytes = 16 << 20
    static let maxItems = 65_536

    /// The tag ending `source`, or nil when the file does not end with an APEv2 footer (FFmpeg
    /// does not look before an ID3v1 tag) or the footer is one FFmpeg refuses.
    static func read(_ source: ByteSource) throws -> (metadata: Metadata, attachments: [Attachment])? {
        guard source.isSeekable, let size = source.knownSize, size >= Int64(footerBytes) else { return nil }
        let footer = try source.readUpTo(at: size - Int64(footerBytes), count: footerBytes)
        guard footer.count == footerBytes, Array(footer[0..<8]) == Array("APETAGEX".utf8) else { return nil }
        func le32(_ b: [UInt8], _ i: Int) -> UInt32 {
            UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
        }
        let version = le32(footer, 8), tagBytes = Int64(le32(footer, 12)), items = le32(footer, 16), flags = le32(footer, 20)
        guard version <= 2000, tagBytes >= Int64(footerBytes), tagBytes - Int64(footerBytes) <= Int64(maxTagBytes), tagBytes <= size - Int64(footerBytes),
              items <= UInt32(maxItems), flags & (1 << 29) == 0 else { return nil }
        // The items run from the file's end minus the tag size (which counts the footer).
        let body = try source.readUpTo(at: size - tagBytes, count: Int(tagBytes))
        var metadata = Metadata()
        var attachments: [Attachment] = []
        var p = 0
        for _ in 0..<Int(items) {
            guard p + 8 <= body.count else { break }
            let length = Int(le32(body, p)), itemFlags = le32(body, p + 4)
            p += 8
            var key: [UInt8] = []
            var terminator: UInt8 = 0
            while p < body.count, key.count < 1023 {
                let c = body[p]
                p += 1
                if c < 0x20 || c > 0x7E { terminator = c; break }
                key.append(c)
            }
            guard terminator == 0, p <= body.count else { break }   // FFmpeg: an invalid key ends the tag
            let name = String(decoding: key, as: UTF8.self)
            let end = min(body.count, p + length)
            let value = Array(body[p..<end])
            p = end
            if itemFlags & 2 != 0 {
                // Binary: a file name, a NUL, the file.
                let fileName = ITunesMetadata.cString(value)
                let start = min(value.count, value.prefix(while: { $0 != 0 }).count + 1)
                guard start < value.count, let mime = pictureType(fileName) else { continue }
                attachments.append(Attachment(data: Array(value[start...]), mimeType: mime, pictureType: name.lowercased() == "cover art (front)" ? 3 : 0,
                                              description: name, fileName: fileName))
            } else {
                metadata.append(key: MetadataKeys.key(name), nativeKey: name, ffmpegKey: name, value: ITunesMetadata.cString(value))
            }
        }
        return (metadata, attachments)
    }

    /// The MIME type of a picture file name FFmpeg's ff_guess_image2_codec recognises (by its
    /// extension), nil for another file.
    static func pictureType(_ fileName: String) -> String? {
        let ext = fileName.split(separator: ".").last.map { $0.lowercased() } ?? ""
        switch ext {
        case "jpg", "jpeg", "jpe", "jfif", "jfi", "jps", "mpo": return "image/jpeg"
        case "png", "apng": return "image/png"
        case "bmp": return "image/bmp"
        case "gif": return "image/gif"
        case "tif", "tiff": return "image/tiff"
        case "webp": return "image/webp"
        default: return nil
        }
    }
}
