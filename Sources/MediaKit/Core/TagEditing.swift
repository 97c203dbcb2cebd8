import Foundation

/// How a tag edit reached the file (``TagEditor/edit(path:edits:allowInPlace:)``).
public enum TagWriteMethod: String, Sendable, Hashable {
    /// The tag region was overwritten inside the file (the same inode, the same size): the
    /// bytes that changed lie within one 4096-byte page and went in one `pwrite`, so a process
    /// killed during the write leaves the old bytes or the new ones, never a mix.
    case inPlace = "in place"
    /// The file was written again under a temporary name beside it (the new tags, the media
    /// bytes copied unchanged), synced and renamed over it.
    case temporaryFile = "temporary file"
    /// The packets were copied by the format's muxer (``Remuxer``) into a temporary file beside
    /// it, with the new tags, then synced and renamed over it.
    case remux = "remux"
    /// The file already held the requested tags: nothing was written.
    case unchanged = "unchanged"
}

/// A container's own tag writer (``ContainerFormat/tagRewriter``): it replaces the tags of a
/// file of its format with others without a remux, the media bytes kept as they are.
public struct TagRewriter: Sendable {
    /// Rewrites the tags of the file at `path` so that it holds `metadata` (the container's tags,
    /// its pictures and chapters; the tags of track 0 merged in where the format has one list),
    /// in place when `allowInPlace` and the format leaves room (padding), else through a
    /// temporary file renamed over `path`. Nothing half-written is ever left under `path`.
    public let rewrite: @Sendable (_ path: String, _ metadata: MuxMetadata, _ allowInPlace: Bool) throws -> TagWriteMethod

    /// Creates a rewriter from its function.
    public init(rewrite: @escaping @Sendable (_ path: String, _ metadata: MuxMetadata, _ allowInPlace: Bool) throws -> TagWriteMethod) {
        self.rewrite = rewrite
    }
}

/// A format's tag edit in place whose fallback is a remux (MP4's `free` boxes:
/// ``ContainerFormat/inPlaceTagEdit``), where ``TagRewriter`` serves the formats that write
/// their own fallback. ``TagEditor`` tries it first, then remuxes.
struct InPlaceTagEdit: Sendable {
    /// Makes the edit in place: `.inPlace` or `.unchanged`; nil when it does not fit, or when
    /// `holds` rejects the file it would make (given the planned file to read before a byte is
    /// written; for `.unchanged`, the file as it is). `metadata` is what the file is to hold,
    /// `oldTags` the demuxer's tags of the file as it is.
    /// - Throws: the read and write errors (the file then reads as the old one).
    var edit: @Sendable (_ path: String, _ metadata: MuxMetadata, _ oldTags: Metadata, _ edits: TagEdits,
                         _ holds: (ByteSource) -> Bool) throws -> TagWriteMethod?
    /// The bytes a remux of the file (the fallback) keeps free before its media data when it
    /// writes the index first, so that the next edit goes in place: from the old file's demuxer
    /// and the bytes of the pictures the new file holds.
    var remuxReserve: @Sendable (_ demuxer: Demuxer, _ pictureBytes: Int) -> Int
}

/// Edits of a file's tags (``TagEditor``, `mk-tag`): keys set and removed, a front cover put in,
/// pictures removed, all tags cleared. Keys are taken as ``MetadataCopyOptions/set`` takes them:
/// a normalised key ("title", "album_artist", "track"), FFmpeg's name or the container's own
/// (a Vorbis field name, an ID3 frame id), in any case.
public struct TagEdits: Sendable, Hashable {
    /// Tags set: the entries with the key are replaced by one with the value.
    public var set: [String: String]
    /// Keys removed (from the container's tags and every track's).
    public var remove: [String]
    /// A front cover (picture type 3) to put in place of the file's front covers; nil: none.
    public var cover: Attachment?
    /// Remove every picture (cover art) the file holds (before ``cover`` is put in).
    public var removePictures: Bool
    /// Remove every tag (the container's and the tracks'), before ``set``; chapters and
    /// pictures stay.
    public var clear: Bool

    /// Edits; none by default.
    public init(set: [String: String] = [:], remove: [String] = [], cover: Attachment? = nil, removePictures: Bool = false, clear: Bool = false) {
        self.set = set
        self.remove = remove
        self.cover = cover
        self.removePictures = removePictures
        self.clear = clear
    }

    /// Edits from the command line: each `KEY=VALUE` of `settings` (split at the first "="; an
    /// empty value removes the key, a key given twice keeps the last value) and the keys of
    /// `removals`.
    /// - Throws: `.invalidArgument` naming a setting without "=", an empty key, or a key both set
    ///   and removed.
    public init(settings: [String], removals: [String] = [], cover: Attachment? = nil, removePictures: Bool = false, clear: Bool = false) throws {
        self.init(cover: cover, removePictures: removePictures, clear: clear)
        for setting in settings {
            guard let eq = setting.firstIndex(of: "="), eq != setting.startIndex else {
                throw MediaError(.invalidArgument, "--set takes KEY=VALUE (an empty VALUE removes the tag), not \"\(setting)\"")
            }
            self.set[String(setting[..<eq])] = String(setting[setting.index(after: eq)...])
        }
        for key in removals {
            guard !key.isEmpty, !key.contains("=") else { throw MediaError(.invalidArgument, "--remove takes a KEY, not \"\(key)\"") }
            if let v = self.set.first(where: { $0.key.lowercased() == key.lowercased() }), !v.value.isEmpty {
                throw MediaError(.invalidArgument, "the key \"\(key)\" is both set and removed")
            }
            remove.append(key)
        }
    }

    /// True when there is nothing to do.
    public var isEmpty: Bool { self.set.isEmpty && remove.isEmpty && cover == nil && !removePictures && !clear }

    /// The settings of ``MetadataCopyOptions/set``: ``set``, and an empty value for each key of ``remove``.
    var settings: [String: String] {
        var out = self.set
        for key in remove { out[key] = "" }
        return out
    }

    /// Applies the picture edits to `metadata`: pictures removed, then the front covers
    /// replaced by ``cover``, put first.
    func apply(to metadata: inout MuxMetadata) {
        if removePictures { metadata.attachments.removeAll { $0.isPicture } }
        if let cover {
            metadata.attachments.removeAll { $0.pictureType == 3 }
            metadata.attachments.insert(cover, at: 0)
        }
    }

    /// The largest picture ``cover(imagePath:)`` takes (a FLAC PICTURE block holds 16 MiB).
    public static let maxCoverBytes = 16 << 20 - 1024

    /// A front cover (picture type 3) read from the image file at `path`, its MIME type from its
    /// signature (JPEG, PNG, GIF, BMP, WebP).
    /// - Throws: `.notFound` / `.io` for a file that cannot be read; `.unsupported` for bytes that
    ///   are none of those images; `.invalidArgument` for one over ``maxCoverBytes``.
    public static func cover(imagePath path: String) throws -> Attachment {
        let source = try FileSource(path: path)
        guard source.fileSize <= Int64(maxCoverBytes) else {
            throw MediaError(.invalidArgument, "the picture is \(source.fileSize) bytes, over the \(maxCoverBytes) a cover may have", path: path)
        }
        let data = try source.readUpTo(at: 0, count: Int(truncatingIfNeeded: source.fileSize))
        guard let mime = imageType(data) else {
            let head = data.prefix(4).map { String(format: "%02x", $0) }.joined()
            throw MediaError(.unsupported, "not a JPEG, PNG, GIF, BMP or WebP picture (it starts with \(head.isEmpty ? "nothing" : head))", path: path, offset: 0)
        }
        return Attachment(data: data, mimeType: mime, pictureType: 3)
    }

    /// The MIME type of a picture's bytes, from its signature, or nil.
    static func imageType(_ d: [UInt8]) -> String? {
        if d.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if d.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if d.starts(with: Array("GIF87a".utf8)) || d.starts(with: Array("GIF89a".utf8)) { return "image/gif" }
        if d.starts(with: Array("BM".utf8)), d.count > 14 { return "image/bmp" }
        if d.count >= 12, d.starts(with: Array("RIFF".utf8)), d[8..<12].elementsEqual("WEBP".utf8) { return "image/webp" }
        return nil
    }
}
