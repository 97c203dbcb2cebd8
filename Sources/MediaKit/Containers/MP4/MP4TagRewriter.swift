#if canImport(Glibc)
import Glibc
#endif

/// Edits the iTunes tags of an MP4 / M4A / MOV file in place, through the `free` space after
/// its `moov`, with one small write as the commit (``TagEditor``'s first choice for MP4).
///
/// The new `moov` is the old one's bytes with its `udta/meta/ilst` box replaced (parent sizes
/// updated, the `free` / `skip` padding inside the `meta` dropped, a `udta` / `meta` / `ilst`
/// appended when there is none); every other box of the `moov` is kept byte for byte, so the
/// chunk offsets stay valid (the media data does not move). In the `ilst`, an item is kept byte
/// for byte when the tags it holds are all still wanted, or when it holds none that
/// libavformat shows and is not edited (atoms MediaKit does not read); the `covr` item is kept
/// while the pictures are the same. The rest is written by ``MP4MetadataWriter/items(tags:pictures:)``.
///
/// When the `meta`'s own padding (a `free` box after the `ilst`, as mutagen leaves it) absorbs
/// the change, so the `moov` keeps its size, and the bytes that change lie in one 4096-byte
/// page, they are written with one `pwrite` (as ``FileRegionRewrite`` does: a process killed
/// during it leaves the old page or the new one). Otherwise a new `moov` is written; where it
/// goes, and the commit:
/// - After: the box after the `moov` is a `free` (or `skip`) box with room for the new `moov`:
///   the new `moov` is written at the end of that box's payload (readers skip it: its header
///   still says `free`) and synced; the commit rewrites the old `moov`'s first 8 bytes into the
///   header of a `free` box that covers the old `moov` and the rest up to the new one.
/// - Before: the box before the `moov` is an 8-byte-header `free` box (an earlier edit's) with
///   room for the new `moov` and 8 bytes: the new `moov` is written at the start of its payload,
///   then the header of a `free` box over the rest up to the old `moov`'s end, and synced; the
///   commit cuts the first `free` box to its 8-byte header, so that the new `moov` follows it
///   and the old one lies in the second `free` box. (Edits alternate between the two, so the
///   space of the old `moov` is used again.)
/// - Grown: only `free` / `skip` boxes follow the `moov` to the end of the file (a `moov`
///   after the media data, as ffmpeg writes it): the file is grown by a `free` box (its size set
///   first, `ftruncate`: a zero box to the end of the file, which readers skip; then its
///   header) whose payload takes the new `moov` and ``grownPadding`` bytes of `free` for later
///   edits, and synced; the commit is as in "After".
///
/// The commit is one `pwrite` of 8 bytes that does not cross a 4096-byte page, then a sync.
/// A process killed before it leaves the old file (the new bytes are inside a `free` box), one
/// killed after leaves the new one. The file keeps its inode; it grows only when "Grown". Where
/// none applies (a `moov` followed by media data with no room next to it, the 8 bytes across a
/// page boundary, a `udta` / `meta` / `ilst` with a 64-bit size, a QuickTime `mdta` `meta`),
/// ``plan(source:metadata:oldTags:edits:)`` says so and the caller writes the file another way.
enum MP4TagRewriter {
    /// The `free` space left after a new `moov` when the file grows for it: room for later
    /// edits of a few text tags.
    static let grownPadding = 4096

    /// What an edit writes.
    struct Plan {
        /// Where the commit goes: the old `moov`'s offset, or the first byte that changes in it.
        var commitOffset: Int64
        /// The commit, one write within one page: the header of a `free` box over the old
        /// `moov`, or the bytes that change in a `moov` of the same size.
        var commit: [UInt8]
        /// Where the new `moov` goes (before the commit; nothing when `region` is empty).
        var target: Int64
        /// The new `moov`, then the header of a `free` box over the rest of the room (if any);
        /// empty when the commit is the whole edit.
        var region: [UInt8]
        /// The file's size before; `newSize` after (larger when the file grows).
        var oldSize: Int64, newSize: Int64
        /// When the file grows: the header of the `free` box holding the new `moov`, at `oldSize`.
        var grownHeader: [UInt8]?

        /// The bytes written, as (offset, bytes), the commit last.
        var writes: [(offset: Int64, bytes: [UInt8])] {
            var out: [(offset: Int64, bytes: [UInt8])] = []
            if let grownHeader { out.append((oldSize, grownHeader)) }
            if !region.isEmpty { out.append((target, region)) }
            out.append((commitOffset, commit))
            return out
        }
    }

    /// What ``plan(source:metadata:oldTags:edits:)`` found.
    enum Outcome {
        /// The `ilst` would be the same: nothing to write.
        case unchanged
        /// The edit fits in place.
        case inPlace(Plan)
        /// Not in place; the reason, for the caller's message.
        case notInPlace(String)
    }

    /// A top-level box or a child: type, offset, header length, total size.
    struct Box {
        var type: String
        var offset: Int
        var header: Int
        var size: Int
        var end: Int { offset + size }
        var payload: Range<Int> { offset + header..<offset + size }
    }

    /// The child boxes of `b[range]`; nil when one is damaged (a size below its header or past
    /// the parent's end). A size of 0 runs to the parent's end.
    static func children(_ b: [UInt8], _ range: Range<Int>) -> [Box]? {
        var out: [Box] = []
        var p = range.lowerBound
        while range.upperBound - p >= 8 {
            var size = Int(truncatingIfNeeded: be32(b, p)), header = 8
            if size == 1 {
                guard range.upperBound - p >= 16 else { return nil }
                let big = UInt64(be32(b, p + 8)) << 32 | UInt64(be32(b, p + 12))
                guard big <= UInt64(range.upperBound - p) else { return nil }
                size = Int(truncatingIfNeeded: big)
                header = 16
            } else if size == 0 {
                size = range.upperBound - p
            }
            guard size >= header, size <= range.upperBound - p else { return nil }
            out.append(Box(type: fourCCString(b[p + 4..<p + 8]), offset: p, header: header, size: size))
            p += size
        }
        return out
    }

    /// A box header with a 32-bit size.
    static func header(_ size: Int, _ type: String) -> [UInt8] {
        var w = BoxWriter(capacity: 8)
        w.u32(UInt32(truncatingIfNeeded: size))
        w.fourCC(type)
        return w.bytes
    }

    /// `payload` in a box of `type` (32-bit size).
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { header(payload.count + 8, type) + payload }

    /// The plan of an edit that leaves the file's container tags, pictures and chapters as
    /// `metadata` says (``MetadataCopyOptions/muxMetadata(of:tracks:)``): `oldTags` are the
    /// demuxer's tags of the file as it is, `edits` the edits asked for.
    /// - Throws: the source's read errors.
    static func plan(source: ByteSource, metadata: MuxMetadata, oldTags: Metadata, edits: TagEdits) throws -> Outcome {
        guard let fileSize = source.knownSize else { return .notInPlace("the file's size is not known") }
        // The top-level boxes, from their headers.
        var top: [(type: String, offset: Int64, size: Int64)] = []
        var at: Int64 = 0
        while at + 8 <= fileSize {
            let h = try source.readUpTo(at: at, count: 16)
            guard h.count >= 8 else { break }
            var size = Int64(be32(h, 0))
            if size == 1 {
                guard h.count >= 16 else { return .notInPlace("a box with a 64-bit size is cut short at \(at)") }
                size = Int64(bitPattern: UInt64(be32(h, 8)) << 32 | UInt64(be32(h, 12)))
            } else if size == 0 {
                size = fileSize - at
            }
            guard size >= 8, size <= fileSize - at else { return .notInPlace("the box at \(at) runs past the end of the file") }
            // Zeros to the end of the file (a box of size 0 and no type: what an edit killed
            // right after it grew the file leaves) are free space.
            let zeros = h[0..<8].allSatisfy { $0 == 0 }
            top.append((zeros ? "free" : fourCCString(h[4..<8]), at, size))
            at += size
        }
        guard at == fileSize else { return .notInPlace("the file does not end with a whole box") }
        guard let mi = top.firstIndex(where: { $0.type == "moov" }) else { return .notInPlace("no moov box") }
        let moov = top[mi]
        guard moov.size <= MP4Limits.maxHeaderBox else { return .notInPlace("the moov is over \(MP4Limits.maxHeaderBox) bytes") }
        let old = try source.read(at: moov.offset, count: Int(truncatingIfNeeded: moov.size))
        let rebuilt: (new: [UInt8], fitted: [UInt8]?)?
        do {
            rebuilt = try newMoov(old, metadata: metadata, oldTags: oldTags, edits: edits)
        } catch let e as Refusal {
            return .notInPlace(e.why)
        }
        guard let (new, fitted) = rebuilt else { return .unchanged }
        var plan = Plan(commitOffset: moov.offset, commit: [], target: 0, region: [], oldSize: fileSize, newSize: fileSize, grownHeader: nil)
        // The moov's own padding absorbs the edit and the bytes that change lie in one page.
        if let fitted, let first = old.indices.first(where: { old[$0] != fitted[$0] }) {
            let last = old.indices.last { old[$0] != fitted[$0] } ?? first
            if (moov.offset + Int64(first)) / FileRegionRewrite.pageSize == (moov.offset + Int64(last)) / FileRegionRewrite.pageSize {
                plan.commitOffset = moov.offset + Int64(first)
                plan.commit = Array(fitted[first...last])
                return .inPlace(plan)
            }
        }
        let pads = Set(["free", "skip"]), n = Int64(new.count), page = FileRegionRewrite.pageSize
        func freeHeaderLength(_ box: (type: String, offset: Int64, size: Int64)) throws -> Int64 {
            be32(try source.read(at: box.offset, count: 4), 0) == 1 ? 16 : 8
        }
        func fitsOnePage(_ offset: Int64) -> Bool { offset % page <= page - 8 }
        // After: the new moov at the end of the free box that follows the moov; the commit
        // turns the old moov's header into a free box up to it.
        if mi + 1 < top.count, pads.contains(top[mi + 1].type), fitsOnePage(moov.offset) {
            let free = top[mi + 1]
            if free.size - (try freeHeaderLength(free)) >= n, free.offset + free.size - n - moov.offset <= Int64(UInt32.max) {
                plan.target = free.offset + free.size - n
                plan.region = new
                plan.commit = header(Int(truncatingIfNeeded: plan.target - moov.offset), "free")
                return .inPlace(plan)
            }
        }
        // Before: the new moov at the start of the free box that comes before the moov (an
        // earlier edit's), then a free box over the rest up to the old moov's end; the commit
        // cuts the first free box to its 8-byte header.
        if mi > 0, pads.contains(top[mi - 1].type), fitsOnePage(top[mi - 1].offset) {
            let free = top[mi - 1]
            if try freeHeaderLength(free) == 8, free.size - 8 >= n + 8 {
                let rest = moov.offset + moov.size - (free.offset + 8 + n)
                if rest <= Int64(UInt32.max) {
                    plan.commitOffset = free.offset
                    plan.target = free.offset + 8
                    plan.region = new + header(Int(truncatingIfNeeded: rest), "free")
                    plan.commit = header(8, "free")
                    return .inPlace(plan)
                }
            }
        }
        // Grown: the moov is followed by free boxes only, to the end of the file.
        guard top[(mi + 1)...].allSatisfy({ pads.contains($0.type) }) else {
            return .notInPlace("no free box next to the moov has room for the new one (\(n) bytes), and the moov is followed by '\(top[mi + 1].type)'")
        }
        guard fitsOnePage(moov.offset) else {
            return .notInPlace("the moov's header lies across a page boundary (one write could be cut in two)")
        }
        plan.region = new + header(grownPadding, "free") + [UInt8](repeating: 0, count: grownPadding - 8)
        plan.grownHeader = header(plan.region.count + 8, "free")
        plan.target = fileSize + 8
        plan.newSize = plan.target + Int64(plan.region.count)
        guard plan.target - moov.offset <= Int64(UInt32.max) else { return .notInPlace("the free box over the old moov would be over 4 GiB") }
        plan.commit = header(Int(truncatingIfNeeded: plan.target - moov.offset), "free")
        return .inPlace(plan)
    }

    /// Why an edit cannot be made in place (thrown inside ``newMoov(_:metadata:oldTags:edits:)``).
    struct Refusal: Error {
        var why: String
    }

    /// The `moov` `old` with its `udta/meta/ilst` replaced so that it holds `metadata`'s
    /// container tags and pictures (`new`: the `meta`'s padding dropped; `fitted`: the old
    /// size, the padding grown or shrunk, or nil when it has too little); nil when the `ilst`
    /// would be the same.
    /// - Throws: ``Refusal`` for a structure this edit does not handle.
    static func newMoov(_ old: [UInt8], metadata: MuxMetadata, oldTags: Metadata, edits: TagEdits) throws -> (new: [UInt8], fitted: [UInt8]?)? {
        let moovHeader = be32(old, 0) == 1 ? 16 : 8
        guard let kids = children(old, moovHeader..<old.count) else { throw Refusal(why: "a box inside the moov is damaged") }
        let ui = kids.firstIndex { $0.type == "udta" }
        let tracksBefore = kids[..<(ui ?? kids.count)].filter { $0.type == "trak" }.count
        var udtaKids: [Box] = [], metaKids: [Box] = [], metaPrefix: [UInt8] = [], mi: Int?, li: Int?
        if let ui {
            let udta = kids[ui]
            guard udta.header == 8 else { throw Refusal(why: "the udta box has a 64-bit size") }
            guard let k = children(old, udta.payload) else { throw Refusal(why: "a box inside the udta is damaged") }
            udtaKids = k
            mi = k.firstIndex { $0.type == "meta" }
            if let mi {
                let meta = k[mi]
                guard meta.header == 8, meta.size >= 12 else { throw Refusal(why: "the udta's meta box has a 64-bit size or no room for a header") }
                // An MP4 meta is a full box (version, flags); a QuickTime one starts with its hdlr.
                let full = !(meta.size >= 16 && old[meta.offset + 12..<meta.offset + 16].elementsEqual("hdlr".utf8))
                let start = meta.payload.lowerBound + (full ? 4 : 0)
                metaPrefix = Array(old[meta.payload.lowerBound..<start])
                guard let mk = children(old, start..<meta.end) else { throw Refusal(why: "a box inside the udta's meta is damaged") }
                metaKids = mk
                if let hdlr = mk.first(where: { $0.type == "hdlr" }), hdlr.size >= hdlr.header + 12 {
                    let handler = fourCCString(old[hdlr.payload.lowerBound + 8..<hdlr.payload.lowerBound + 12])
                    guard handler == "mdir" else { throw Refusal(why: "the udta's meta has the handler '\(handler)', not iTunes' mdir") }
                } else {
                    throw Refusal(why: "the udta's meta box has no handler")
                }
                li = mk.firstIndex { $0.type == "ilst" }
                if let li, metaKids[li].header != 8 { throw Refusal(why: "the ilst box has a 64-bit size") }
            }
        }
        let oldItems: [Box]
        if let li {
            guard let items = children(old, metaKids[li].payload) else { throw Refusal(why: "an ilst item is damaged") }
            oldItems = items
        } else {
            oldItems = []
        }
        let ilst = newItems(old, oldItems, tracksBefore: max(tracksBefore, 1), metadata: metadata, oldTags: oldTags, edits: edits)
        if let li, Array(old[metaKids[li].payload]) == ilst { return nil }
        if li == nil, ilst.isEmpty { return nil }
        // The same moov size when the meta's padding (mutagen's free after the ilst) absorbs the
        // difference: the meta rewritten with one free after the ilst, its payload the old bytes.
        var fitted: [UInt8]?
        if let mi, let li {
            let m = udtaKids[mi]
            var body: [UInt8] = [], freeAt = -1
            for k in metaKids where k.type != "free" && k.type != "skip" {
                if k.offset == metaKids[li].offset {
                    body += box("ilst", ilst)
                    freeAt = body.count
                } else {
                    body += old[k.offset..<k.end]
                }
            }
            let room = m.size - 8 - metaPrefix.count - body.count
            if room == 0 || room >= 8 {
                let start = m.offset + 8 + metaPrefix.count
                var f = Array(old[..<start]) + body[..<freeAt]
                if room > 0 {
                    f += header(room, "free")
                    f += old[f.count..<f.count + room - 8]
                }
                f += body[freeAt...]
                f += old[m.end...]
                if f.count == old.count { fitted = f }
            }
        }
        // The meta: its children with the ilst replaced (or added), the padding dropped.
        var meta: [UInt8] = metaPrefix
        if mi != nil {
            for k in metaKids where k.type != "free" && k.type != "skip" {
                meta += k.type == "ilst" && k.offset == metaKids[li ?? -1].offset ? box("ilst", ilst) : Array(old[k.offset..<k.end])
            }
            if li == nil { meta += box("ilst", ilst) }
        } else {
            var w = BoxWriter()
            w.fullBox("hdlr", version: 0, flags: 0) { w in w.u32(0); w.fourCC("mdir"); w.fourCC("appl"); w.u32(0); w.u32(0); w.u8(0) }
            meta = [0, 0, 0, 0] + w.bytes + box("ilst", ilst)
        }
        var udta: [UInt8] = []
        if let mi {
            for (i, k) in udtaKids.enumerated() { udta += i == mi ? box("meta", meta) : Array(old[k.offset..<k.end]) }
        } else {
            udta = udtaKids.flatMap { Array(old[$0.offset..<$0.end]) } + box("meta", meta)
        }
        var payload: [UInt8] = []
        for (i, k) in kids.enumerated() { payload += i == ui ? box("udta", udta) : Array(old[k.offset..<k.end]) }
        if ui == nil { payload += box("udta", udta) }
        // Up to 7 bytes after the last child (a terminator some writers add) are kept.
        let last = kids.last?.end ?? moovHeader
        payload += old[last...]
        return (box("moov", payload), fitted)
    }

    /// The new `ilst` payload: the old items kept (see the type's documentation), then items for
    /// the tags and pictures they do not hold.
    static func newItems(_ old: [UInt8], _ items: [Box], tracksBefore: Int, metadata: MuxMetadata, oldTags: Metadata, edits: TagEdits) -> [UInt8] {
        func same(_ a: MetadataEntry, _ b: MetadataEntry) -> Bool { a.key.lowercased() == b.key.lowercased() && a.value == b.value }
        func shown(_ e: MetadataEntry) -> Bool { !e.ffmpegKey.isEmpty && !e.value.isEmpty }
        func remove(_ e: MetadataEntry, from list: inout [MetadataEntry]) -> Bool {
            guard let i = list.firstIndex(where: { same($0, e) }) else { return false }
            list.remove(at: i)
            return true
        }
        // What each old item holds, read as the demuxer reads it.
        let read: [(entries: [MetadataEntry], covers: [Attachment])] = items.map { item in
            let one = box("ilst", Array(old[item.offset..<item.end]))
            var reader = QuickTimeMetadataReader()
            var none: String?
            reader.readUserData(one, 0..<one.count, tracksSoFar: tracksBefore, handlerName: &none, inTrack: false)
            return (reader.metadata.filter { !$0.value.isEmpty }, reader.covers)
        }
        // The tags from elsewhere in the moov (mvhd, ftyp, QuickTime udta strings) stay there.
        var base = oldTags.filter(shown)
        for r in read { for e in r.entries where shown(e) { _ = remove(e, from: &base) } }
        var wanted: [MetadataEntry] = []
        for e in metadata.tags where shown(e) && !MP4MetadataWriter.boxFields.contains(e.nativeKey) {
            if !remove(e, from: &base) { wanted.append(e) }
        }
        let edited = Set(edits.settings.keys.map { $0.lowercased() })
        func isEdited(_ e: MetadataEntry) -> Bool {
            edits.clear || [e.key, e.ffmpegKey, e.nativeKey].contains { edited.contains($0.lowercased()) }
        }
        let pictures = metadata.pictures
        let oldCovers = read.flatMap(\.covers)
        let samePictures = pictures.count == oldCovers.count
            && zip(pictures, oldCovers).allSatisfy { $0.data == $1.data && $0.mimeType.lowercased() == $1.mimeType.lowercased() }
        let keep: [Bool] = zip(items, read).map { item, r in
            if item.type == "covr" || !r.covers.isEmpty { return samePictures }
            guard r.entries.contains(where: shown) else { return !r.entries.contains(where: isEdited) }   // atoms libavformat does not show
            var rest = wanted
            guard r.entries.filter(shown).allSatisfy({ remove($0, from: &rest) }) else { return false }
            wanted = rest
            return true
        }
        // The new items, each put where an old item of its atom was dropped (an edit then moves
        // fewer bytes), the others last.
        let fresh = MP4MetadataWriter.items(tags: wanted, pictures: samePictures ? [] : pictures)
        var unused = children(fresh, 0..<fresh.count) ?? []
        var out: [UInt8] = []
        for (item, kept) in zip(items, keep) {
            if kept {
                out += old[item.offset..<item.end]
            } else if let j = unused.firstIndex(where: { $0.type == item.type }) {
                out += fresh[unused[j].offset..<unused[j].end]
                unused.remove(at: j)
            }
        }
        for b in unused { out += fresh[b.offset..<b.end] }
        return out
    }

    /// The MP4 format's ``InPlaceTagEdit`` (``ContainerFormat/inPlaceTagEdit``): ``plan(source:metadata:oldTags:edits:)``,
    /// the planned file read through its patches and checked before ``write(_:path:)``; the
    /// reserve of a remux that writes the `moov` first: the old `moov` and a quarter, the
    /// pictures and 8 KiB (up to ``MP4Muxer/maxReservedMoovBytes``), room for the new `moov`
    /// and a `free` box after it.
    static let inPlaceEdit = InPlaceTagEdit(
        edit: { path, metadata, oldTags, edits, holds in
            let source = try FileSource(path: path)
            switch try plan(source: source, metadata: metadata, oldTags: oldTags, edits: edits) {
            case .unchanged:
                return holds(source) ? .unchanged : nil
            case .inPlace(let plan):
                guard holds(PatchedSource(base: source, patches: plan.writes, size: plan.newSize)) else { return nil }
                try write(plan, path: path)
                return .inPlace
            case .notInPlace:
                return nil
            }
        },
        remuxReserve: { demuxer, pictureBytes in
            let moov = (demuxer as? MP4Demuxer)?.movieBoxSize ?? 0
            return min(MP4Muxer.maxReservedMoovBytes, Int(clamping: moov) * 5 / 4 + pictureBytes + 8192)
        })

    /// Writes `plan` into the file at `path`: the grown `free` box (if any), the new `moov`
    /// inside a `free` box, sync, the commit, sync (see the type's documentation). A test may
    /// stop the process (SIGSTOP) at a named step with the environment variable
    /// `MEDIAKIT_TEST_STOP_AT` ("mp4-grown", "mp4-written", "mp4-committed").
    /// - Throws: `.io` naming the path and the OS error; the file then reads as the old one
    ///   (a file that had grown is cut back to its size).
    static func write(_ plan: Plan, path: String) throws {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw MediaError(errno == ENOENT ? .notFound : .io, "cannot open for writing", errno: errno, path: path) }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw MediaError(.io, "cannot stat", errno: errno, path: path) }
        guard Int64(st.st_size) == plan.oldSize else {
            throw MediaError(.io, "the file changed size while its tags were edited (\(plan.oldSize) bytes, now \(st.st_size))", path: path)
        }
        func put(_ bytes: [UInt8], at offset: Int64, _ what: String) throws {
            var done = 0
            while done < bytes.count {
                let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + done, $0.count - done, off_t(offset + Int64(done))) }
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw MediaError(.io, "cannot write \(what)", errno: errno, path: path, offset: offset + Int64(done)) }
                done += n
            }
        }
        func sync() throws { guard fsync(fd) == 0 else { throw MediaError(.io, "fsync failed", errno: errno, path: path) } }
        do {
            if let grown = plan.grownHeader {
                guard ftruncate(fd, off_t(plan.newSize)) == 0 else { throw MediaError(.io, "cannot grow the file for the new moov", errno: errno, path: path) }
                stopForTest(at: "mp4-grown")
                try put(grown, at: plan.oldSize, "the free box for the new moov")
            }
            if !plan.region.isEmpty {
                try put(plan.region, at: plan.target, "the new moov")
                try sync()
            }
        } catch {
            if plan.grownHeader != nil { _ = ftruncate(fd, off_t(plan.oldSize)) }
            throw error
        }
        stopForTest(at: "mp4-written")
        // The commit: one write within one page (checked by the plan).
        let n = plan.commit.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(plan.commitOffset)) }
        guard n == plan.commit.count else {
            let err = errno
            if plan.grownHeader != nil, n <= 0 { _ = ftruncate(fd, off_t(plan.oldSize)) }
            throw MediaError(.io, "the commit write of the new moov failed (\(n) of \(plan.commit.count) bytes written)", errno: err, path: path, offset: plan.commitOffset)
        }
        try sync()
        stopForTest(at: "mp4-committed")
    }

    /// Stops the process (SIGSTOP) when the environment variable `MEDIAKIT_TEST_STOP_AT` names
    /// `step`: the SIGKILL tests look at the file between the steps of an edit.
    static func stopForTest(at step: String) {
        guard let v = getenv("MEDIAKIT_TEST_STOP_AT"), String(cString: v) == step else { return }
        raise(SIGSTOP)
    }
}
