/// The tag writer of native FLAC files (``ContainerFormat/flac``'s
/// ``ContainerFormat/tagRewriter``): the metadata blocks are written again with the
/// STREAMINFO, SEEKTABLE, APPLICATION, CUESHEET ... blocks kept byte for byte and in order,
/// then a PICTURE block for each picture, a new VORBIS_COMMENT (the old vendor string kept) and
/// a PADDING block absorbing the difference; the frames are never touched. ID3v2 tags in
/// front of "fLaC" are kept as they are.
///
/// In place when the new blocks fit in the old metadata area (exactly, or with room for a
/// PADDING block's 4-byte header) and the bytes that change lie in one page
/// (``FileRegionRewrite``); otherwise the file is written again with ``grownPadding`` bytes of
/// padding, then the frames copied.
enum FLACTagRewriter {
    /// The PADDING given to a file written through a temporary file (as much as the reference
    /// encoder leaves), so that later edits fit in place.
    static let grownPadding = 8192

    /// The rewriter.
    static let rewriter = TagRewriter { path, metadata, allowInPlace in
        let source = try FileSource(path: path)
        let magic = try ID3.leadingV2TagsEnd(source)
        guard try source.readUpTo(at: magic, count: 4).elementsEqual("fLaC".utf8) else {
            throw MediaError(.invalidData, "no \"fLaC\" signature: not a native FLAC file", path: path, offset: magic)
        }
        // The metadata blocks: header (last flag, type, 24-bit length), body.
        var kept: [UInt8] = []
        var vendor: String?
        var at = magic + 4, last = false, index = 0
        while !last {
            let h = try source.readUpTo(at: at, count: 4)
            guard h.count == 4 else { throw MediaError(.invalidData, "the file ends inside metadata block \(index)'s header", path: path, offset: at) }
            last = h[0] & 0x80 != 0
            let type = h[0] & 0x7F, length = Int64(h[1]) << 16 | Int64(h[2]) << 8 | Int64(h[3])
            guard type != 127, at + 4 + length <= source.fileSize else {
                throw MediaError(.invalidData, "metadata block \(index) (type \(type), \(length) bytes) \(type == 127 ? "has the invalid type 127" : "runs past the end of the file")",
                                 path: path, offset: at)
            }
            if index == 0 && (type != 0 || length != 34) {
                throw MediaError(.invalidData, "the first metadata block is not a 34-byte STREAMINFO (type \(type), \(length) bytes)", path: path, offset: at)
            }
            switch type {
            case 1, 6: break   // PADDING and PICTURE: written anew
            case 4:
                if vendor == nil { vendor = try vendorString(source, at: at + 4, length: length) }
            default:
                kept += [h[0] & 0x7F] + h[1...] + (try source.readUpTo(at: at + 4, count: Int(truncatingIfNeeded: length)))
            }
            at += 4 + length
            index += 1
        }
        var blocks = kept
        let comment = MetadataWriting.vorbisComment(vendor: vendor ?? "MediaKit", tags: metadata.combined(track: 0), chapters: metadata.chapters)
        // The PICTUREs before the VORBIS_COMMENT: an edit of the tags then shifts only the bytes
        // after the (large) pictures, which can often be rewritten in place (one page).
        let pictures = metadata.pictures.map(MetadataWriting.flacPicture)
        for (i, body) in (pictures + [comment]).enumerated() {
            guard body.count <= FLACWriter.maxBlockBytes else {
                throw MediaError(.invalidArgument, "a FLAC metadata block of \(body.count) bytes is over the format's 16 MiB", path: path)
            }
            blocks += [i < pictures.count ? 6 : 4] + be24(body.count) + body
        }
        let area = Int(truncatingIfNeeded: at - magic - 4)
        return try FileRegionRewrite.replace(path: path, start: magic + 4, oldLength: at - magic - 4, fitted: fitted(blocks, area: area),
                                             grown: padded(blocks, padding: grownPadding), allowInPlace: allowInPlace)
    }

    /// `blocks` with a last PADDING block of `padding` bytes (header flagged last).
    static func padded(_ blocks: [UInt8], padding: Int) -> [UInt8] {
        blocks + [0x81] + be24(padding) + [UInt8](repeating: 0, count: padding)
    }

    /// `blocks` filling `area` bytes: flagged last when they fill it exactly, else followed by a
    /// PADDING block; nil when they do not fit (or leave 1 to 3 bytes, less than a header).
    static func fitted(_ blocks: [UInt8], area: Int) -> [UInt8]? {
        if blocks.count == area { return lastFlagged(blocks) }
        let room = area - blocks.count - 4
        guard room >= 0, room <= FLACWriter.maxBlockBytes else { return nil }
        return padded(blocks, padding: room)
    }

    /// `blocks` with the last block's header flagged last.
    static func lastFlagged(_ blocks: [UInt8]) -> [UInt8] {
        var out = blocks, at = 0, lastHeader = 0
        while at + 4 <= out.count {
            lastHeader = at
            at += 4 + (Int(truncatingIfNeeded: out[at + 1]) << 16 | Int(truncatingIfNeeded: out[at + 2]) << 8 | Int(truncatingIfNeeded: out[at + 3]))
        }
        out[lastHeader] |= 0x80
        return out
    }

    /// The vendor string of the VORBIS_COMMENT body at `offset` (`length` bytes), or nil when it
    /// does not hold one.
    static func vendorString(_ source: FileSource, at offset: Int64, length: Int64) throws -> String? {
        guard length >= 4 else { return nil }
        let n = try source.readUpTo(at: offset, count: 4)
        let count = Int64(n[0]) | Int64(n[1]) << 8 | Int64(n[2]) << 16 | Int64(n[3]) << 24
        guard count <= length - 4 else { return nil }
        return String(decoding: try source.readUpTo(at: offset + 4, count: Int(truncatingIfNeeded: count)), as: UTF8.self)
    }

    /// A 24-bit big-endian length.
    static func be24(_ n: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: n >> 16), UInt8(truncatingIfNeeded: n >> 8), UInt8(truncatingIfNeeded: n)]
    }
}
