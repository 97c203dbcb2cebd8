import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reads and edits the tags of a media file without re-encoding (`mk-tag`).
///
/// A format with its own tag writer (``ContainerFormat/tagRewriter``: MP3's ID3v2, FLAC's
/// metadata blocks) replaces its tags in place when its padding leaves room and the bytes that
/// change lie within one page (one `pwrite`: a process killed during it leaves the old or the
/// new file), else through a temporary file; a format with an edit in place whose fallback is a
/// remux (MP4's `free` boxes) tries it first; every other edit goes
/// through a remux (``Remuxer``) by the muxer of the file's extension into a temporary file
/// beside it. A temporary file is synced, given the file's permissions and renamed over it:
/// the file at `path` is always either the old one or the new one. A temporary file that a
/// killed run left (`.NAME.partial-PID`, `.NAME.mktag-PID.EXT`, its process gone) is removed
/// by the next edit of the same file.
public enum TagEditor {
    /// What a file holds: its format and tags, as the demuxer reads them.
    public struct Listing: Sendable {
        /// The format's name ("mp3", "flac", "mp4").
        public var format: String
        /// The container's tags.
        public var tags: Metadata
        /// Each track's tags, by track index (tracks without tags left out).
        public var trackTags: [Int: Metadata]
        /// The chapters.
        public var chapters: [Chapter]
        /// Pictures and other attached files.
        public var attachments: [Attachment]
    }

    /// The tags of the file at `path`.
    /// - Throws: the catalogue's and the demuxer's errors (`.notFound`, `.unsupported`, `.invalidData`).
    public static func read(path: String) throws -> Listing {
        try read(source: ByteSources.open(path: path))
    }

    /// The tags of the file `source` reads.
    static func read(source: ByteSource) throws -> Listing {
        let (format, demuxer) = try ContainerCatalog.shared.open(source)
        var trackTags: [Int: Metadata] = [:]
        for t in demuxer.tracks where !t.metadata.isEmpty { trackTags[t.index] = t.metadata }
        return Listing(format: format.qualifiedName, tags: demuxer.metadata, trackTags: trackTags, chapters: demuxer.chapters,
                       attachments: demuxer.attachments)
    }

    /// Applies `edits` to the file at `path`. The chapters and the tags not edited are kept
    /// (as ``Remuxer`` copies them: the tags libavformat shows).
    /// - Parameter allowInPlace: false: a format with its own tag writer writes a temporary
    ///   file even when the tags would fit in place.
    /// - Returns: how the file was written.
    /// - Throws: `.notFound` / `.io`; `.invalidArgument` for a path that is not a regular file;
    ///   `.unsupported` for a format read by a plugin or written by no muxer, a track the muxer
    ///   would leave out, or a tag the format does not store (the file is then unchanged);
    ///   `.truncated` for a file cut short (a remux would lose its end); the demuxer's and the
    ///   muxer's errors. On any error the file is as it was.
    @discardableResult
    public static func edit(path: String, edits: TagEdits, allowInPlace: Bool = true) throws -> TagWriteMethod {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw MediaError(errno == ENOENT ? .notFound : .io, "cannot stat", errno: errno, path: path)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            throw MediaError(.invalidArgument, "is not a regular file: tags are edited in files only", path: path)
        }
        guard access(path, W_OK) == 0 else {
            throw MediaError(.io, "cannot edit the tags", errno: errno, path: path)
        }
        removeStaleTemporaries(of: path)
        let (format, demuxer) = try ContainerCatalog.shared.open(try FileSource(path: path))
        guard format.plugin == nil else {
            throw MediaError(.unsupported, "\(format.description) is read by the \(format.plugin ?? "") plugin; MediaKit writes no tags into it", path: path)
        }
        let all = demuxer.tracks
        var trackTags: [Int: Metadata] = [:]
        for t in all where !t.metadata.isEmpty { trackTags[t.index] = t.metadata }
        if changesNothing(edits, in: Listing(format: format.qualifiedName, tags: demuxer.metadata, trackTags: trackTags,
                                             chapters: demuxer.chapters, attachments: demuxer.attachments)) {
            return .unchanged
        }
        var options = MetadataCopyOptions(copy: true, set: edits.settings)
        options.edits = edits
        if let rewriter = format.tagRewriter {
            return try rewriter.rewrite(path, options.muxMetadata(of: demuxer, tracks: all.map { ($0.index, $0.index) }), allowInPlace)
        }
        if allowInPlace, let inPlace = format.inPlaceTagEdit,
           let method = try inPlace.edit(path, options.muxMetadata(of: demuxer, tracks: all.map { ($0.index, $0.index) }), demuxer.metadata, edits,
                                         { (try? check(read(source: $0), holds: edits, format: format.description, path: path)) != nil }) {
            return method
        }
        let ext = (path as NSString).pathExtension.lowercased()
        guard format.extensions.contains(ext), let target = ContainerCatalog.shared.muxerFormat(forPath: path) else {
            let why = ext.isEmpty ? "the file name has no extension to choose a muxer" : "no muxer writes \(format.description) files named .\(ext)"
            throw MediaError(.unsupported, "cannot rewrite the tags of this \(format.description) file: \(why)", path: path)
        }
        let leftOut = Remuxer.tracksToCopy(all, into: target).leftOut
        if let first = leftOut.first {
            throw MediaError(.unsupported, "cannot rewrite the tags without losing track \(first.track): \(first.why)", path: path)
        }
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = "\(dir).\(name).mktag-\(getpid()).\(ext)"
        do {
            let layout = try target.layoutOfFile?(try FileSource(path: path)) ?? .progressive
            var muxerOptions = MuxerOptions(layout: layout)
            if case .fastStart = layout, let reserve = format.inPlaceTagEdit?.remuxReserve {
                // Room before the media data so that the next edit goes in place.
                let pictures = options.muxMetadata(of: demuxer, tracks: []).attachments.reduce(0) { $0 + $1.data.count }
                muxerOptions.reservedIndexBytes = reserve(demuxer, pictures)
            }
            if let cut = try Remuxer.remux(input: path, output: temporary, options: muxerOptions, metadata: options) {
                throw MediaError(.truncated, "the file is cut short (\(cut.description)): a rewrite would lose its end", path: path)
            }
            try check(read(path: temporary), holds: edits, format: target.description, path: path)
            let fd = open(temporary, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw MediaError(.io, "cannot open the rewritten file", errno: errno, path: temporary) }
            _ = fchown(fd, st.st_uid, st.st_gid)   // best effort: only root may give a file away
            let ok = fchmod(fd, st.st_mode & 0o7777) == 0 && fsync(fd) == 0
            let err = errno
            close(fd)
            guard ok else { throw MediaError(.io, "cannot set the permissions of or sync the rewritten file", errno: err, path: temporary) }
            guard rename(temporary, path) == 0 else { throw MediaError(.io, "cannot rename \(temporary) into place", errno: errno, path: path) }
        } catch {
            unlink(temporary)
            throw error
        }
        FileRegionRewrite.syncDirectory(of: path)
        return .remux
    }

    /// True when `edits` would leave a file that holds `listing` as it is, so that nothing need
    /// be written (a tag set to the value it has, a key removed that is not there): every key
    /// set is the container's one tag of that key, with that value, and no track's; no key
    /// removed is anywhere; the cover is the file's one front cover and its first picture;
    /// pictures removed or tags cleared only where there are none.
    static func changesNothing(_ edits: TagEdits, in listing: Listing) -> Bool {
        func named(_ e: MetadataEntry, _ key: String) -> Bool {
            let k = key.lowercased(), n = MetadataKeys.normalised(key)?.lowercased()
            return [e.key, e.ffmpegKey, e.nativeKey].contains { $0.lowercased() == k || $0.lowercased() == n }
        }
        let tracks = Array(listing.trackTags.values)
        guard !edits.clear || (edits.set.isEmpty && listing.tags.isEmpty && tracks.allSatisfy(\.isEmpty)) else { return false }
        for (key, value) in edits.settings {
            let here = listing.tags.filter { named($0, key) }
            guard !tracks.contains(where: { $0.contains { named($0, key) } }) else { return false }
            guard value.isEmpty ? here.isEmpty : here.count == 1 && here[0].value == value else { return false }
        }
        let pictures = listing.attachments.filter(\.isPicture)
        if edits.removePictures && !pictures.isEmpty { return false }
        if let cover = edits.cover {
            let fronts = pictures.filter { $0.pictureType == 3 }
            guard fronts.count == 1, pictures.first?.data == cover.data, pictures.first?.pictureType == 3,
                  pictures.first?.mimeType == cover.mimeType else { return false }
        }
        return true
    }

    /// Checks that `listing` (of the new version of `path`) holds the edits: every key set
    /// is there, no key removed is, the cover is among its pictures.
    /// - Throws: `.unsupported` naming `path` and the key or the cover the format does not store.
    static func check(_ listing: Listing, holds edits: TagEdits, format: String, path: String) throws {
        let lists = [listing.tags] + listing.trackTags.values
        func has(_ key: String) -> Bool {
            let k = key.lowercased(), n = MetadataKeys.normalised(key)?.lowercased()
            return lists.contains { m in
                m.contains { e in [e.key, e.ffmpegKey, e.nativeKey].contains { $0.lowercased() == k || $0.lowercased() == n } && !e.value.isEmpty }
            }
        }
        for (key, value) in edits.settings.sorted(by: { $0.key < $1.key }) where has(key) == value.isEmpty {
            throw MediaError(.unsupported, value.isEmpty
                             ? "\(format) files keep the tag \"\(key)\" in a way MediaKit cannot remove; the file is unchanged"
                             : "\(format) files do not store the tag \"\(key)\"; the file is unchanged", path: path)
        }
        if let cover = edits.cover, !listing.attachments.contains(where: { $0.data == cover.data }) {
            throw MediaError(.unsupported, "\(format) files do not store cover art; the file is unchanged", path: path)
        }
    }

    /// Removes the temporary files that an edit of `path` killed before its end left beside it
    /// (`.NAME.partial-PID`, `.NAME.mktag-PID.EXT` and the muxer's `..NAME.mktag-PID.EXT.partial-PID`)
    /// when their process is gone.
    static func removeStaleTemporaries(of path: String) {
        let slash = path.lastIndex(of: "/")
        let dir = slash.map { String(path[...$0]) } ?? ""
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: dir.isEmpty ? "." : dir) else { return }
        for entry in entries {
            var pidText: Substring?
            for prefix in [".\(name).partial-", ".\(name).mktag-", "..\(name).mktag-"] where entry.hasPrefix(prefix) {
                pidText = entry.dropFirst(prefix.count).prefix { $0.isNumber }
            }
            guard let pidText, let pid = Int32(pidText), pid > 0, pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(dir + entry) }
        }
    }
}
