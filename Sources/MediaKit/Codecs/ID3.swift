import Foundation

/// The metadata an audio stream carries in ID3 tags (ID3v2.2 / 2.3 / 2.4 and ID3v1).
public struct AudioTags: Sendable, Hashable {
    /// Title (TIT2 / TT2, or ID3v1).
    public var title: String?
    /// Artist (TPE1 / TP1).
    public var artist: String?
    /// Album (TALB / TAL).
    public var album: String?
    /// Track number as written ("3" or "3/12") (TRCK / TRK).
    public var track: String?
    /// Date or year (TDRC, TYER / TYE).
    public var date: String?
    /// Genre (TCON / TCO).
    public var genre: String?
    /// Comment (COMM / COM: the text of the first one).
    public var comment: String?
    /// Cover art (APIC / PIC): its bytes and MIME type.
    public var coverArt: (mime: String, data: [UInt8])? {
        get { coverData.map { (coverMIME, $0) } }
        set { coverMIME = newValue?.mime ?? ""; coverData = newValue?.data }
    }
    /// Chapters (CHAP): element id, start and end in milliseconds, and the title (TIT2 inside).
    public var chapters: [(id: String, startMs: Int, endMs: Int, title: String?)] {
        get { chapterList.map { ($0.id, $0.start, $0.end, $0.title) } }
        set { chapterList = newValue.map { Chapter(id: $0.id, start: $0.startMs, end: $0.endMs, title: $0.title) } }
    }
    /// Every frame as it was stored (after unsynchronisation is undone): id and bytes.
    public var frames: [(id: String, data: [UInt8])] {
        get { rawFrames.map { ($0.id, $0.data) } }
        set { rawFrames = newValue.map { RawFrame(id: $0.id, data: $0.data) } }
    }

    private var coverMIME = ""
    private var coverData: [UInt8]?
    private var chapterList: [Chapter] = []
    private var rawFrames: [RawFrame] = []
    private struct Chapter: Sendable, Hashable { var id: String; var start: Int; var end: Int; var title: String? }
    private struct RawFrame: Sendable, Hashable { var id: String; var data: [UInt8] }

    /// No tags.
    public init() {}

    /// True when nothing was read.
    public var isEmpty: Bool { self == AudioTags() }
}

/// ID3v2 and ID3v1 readers (id3.org's ID3v2.2, 2.3 and 2.4 specifications).
enum ID3 {
    /// Total size of the ID3v2 tag that `head` (at least 10 bytes) starts, header and
    /// footer included; nil when `head` does not start one.
    static func v2TagSize(_ head: ArraySlice<UInt8>) -> Int? {
        guard head.count >= 10 else { return nil }
        let b = Array(head.prefix(10))
        guard b[0] == 0x49, b[1] == 0x44, b[2] == 0x33, b[3] != 0xFF, b[4] != 0xFF,
              b[6] & 0x80 == 0, b[7] & 0x80 == 0, b[8] & 0x80 == 0, b[9] & 0x80 == 0 else { return nil }
        let size = Int(b[6]) << 21 | Int(b[7]) << 14 | Int(b[8]) << 7 | Int(b[9])
        return 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)
    }

    /// Where the ID3v2 tags that start `source` end: 0 when it starts with none, else the offset
    /// past the last of the tags that follow one another from offset 0. Only each tag's 10-byte
    /// header is read; the bodies are skipped, whatever their length (FFmpeg skips the tags in
    /// front of every format this way before probing and before the demuxer reads its header).
    static func leadingV2TagsEnd(_ source: ByteSource) throws -> Int64 {
        var end: Int64 = 0
        while let size = v2TagSize(try source.readUpTo(at: end, count: 10)[...]) { end += Int64(size) }
        return end
    }

    /// Reads the frames of a whole ID3v2 tag into `tags`; problems become warnings (a compressed
    /// or encrypted frame is skipped with one).
    static func readV2(_ tag: [UInt8], into tags: inout AudioTags, warnings: inout [String]) {
        guard tag.count >= 10 else { return }
        let major = Int(tag[3]), flags = tag[5]
        guard (2...4).contains(major) else {
            warnings.append("ID3v2.\(major) tag skipped: only versions 2.2, 2.3 and 2.4 are read")
            return
        }
        var body = Array(tag[10..<min(tag.count, 10 + (v2TagSize(tag[...]) ?? tag.count) - 10)])
        if flags & 0x80 != 0 && major < 4 { body = undoUnsynchronisation(body) }
        var at = 0
        if flags & 0x40 != 0 && major >= 3, body.count >= 4 {
            // Extended header: v2.3 gives the size after itself, v2.4 a syncsafe size including itself.
            let n = major == 3 ? Int(be32(body, 0)) + 4 : syncsafe(body, 0)
            at = min(body.count, max(4, n))
        }
        let idLength = major == 2 ? 3 : 4, headerLength = major == 2 ? 6 : 10
        while at + headerLength <= body.count {
            let idBytes = body[at..<at + idLength]
            guard idBytes.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else { break }   // padding
            let id = String(decoding: idBytes, as: UTF8.self)
            let size: Int
            var frameFlags: UInt16 = 0
            if major == 2 {
                size = Int(body[at + 3]) << 16 | Int(body[at + 4]) << 8 | Int(body[at + 5])
            } else {
                size = major == 4 ? syncsafe(body, at + 4) : Int(be32(body, at + 4))
                frameFlags = UInt16(body[at + 8]) << 8 | UInt16(body[at + 9])
            }
            let start = at + headerLength
            guard size >= 0, start + size <= body.count else {
                warnings.append("ID3v2 frame \(id) declares \(size) bytes, more than the tag holds; the rest of the tag is skipped")
                break
            }
            var data = Array(body[start..<start + size])
            at = start + size
            let compressed = major == 3 ? frameFlags & 0x0080 != 0 : (major == 4 && frameFlags & 0x0008 != 0)
            let encrypted = major == 3 ? frameFlags & 0x0040 != 0 : (major == 4 && frameFlags & 0x0004 != 0)
            if compressed || encrypted {
                warnings.append("ID3v2 frame \(id) is \(compressed ? "compressed" : "encrypted"); skipped")
                continue
            }
            if major == 4 {
                if frameFlags & 0x0001 != 0 { data = Array(data.dropFirst(4)) }            // data length indicator
                if frameFlags & 0x0002 != 0 || flags & 0x80 != 0 { data = undoUnsynchronisation(data) }
            }
            tags.frames.append((id, data))
            apply(id: id, data: data, major: major, to: &tags)
        }
        // ID3v2.3 splits the date: TYER (YYYY), TDAT (DDMM), TIME (HHMM); as FFmpeg, they are
        // joined into "YYYY-MM-DD HH:MM" when all are well formed.
        if major < 4 {
            func field(_ id: String) -> String? { tags.frames.last { $0.id == id }.flatMap { text($0.data) } }
            if let year = field("TYER"), year.count == 4, year.allSatisfy(\.isNumber) {
                var date = year
                if let dm = field("TDAT"), dm.count == 4, dm.allSatisfy(\.isNumber) {
                    date += "-\(dm.suffix(2))-\(dm.prefix(2))"
                    if let hm = field("TIME"), hm.count == 4, hm.allSatisfy(\.isNumber) { date += " \(hm.prefix(2)):\(hm.suffix(2))" }
                }
                tags.date = date
            }
        }
    }

    /// The ID3v2.3 frames whose body is the same in ID3v2.4 (id3.org ID3v2.3.0 section 4 and
    /// ID3v2.4.0-frames: the same fields; ID3v2.4 adds text encodings, which a v2.3 body does
    /// not use): a rewrite into an ID3v2.4 tag copies them. Not here: EQUA, RVAD, IPLS and the
    /// v2.3 date frames (replaced in ID3v2.4 by EQU2, RVA2, TIPL / TMCL, TDRC).
    static let sameBodyInV24: Set<String> = ["UFID", "MCDI", "ETCO", "MLLT", "SYTC", "SYLT", "RVRB", "GEOB", "PCNT", "POPM", "RBUF",
                                             "AENC", "LINK", "POSS", "USER", "OWNE", "COMR", "ENCR", "GRID", "WCOM", "WCOP", "WOAF",
                                             "WOAR", "WOAS", "WORS", "WPAY", "WPUB", "WXXX"]

    /// The frames of a whole ID3v2 tag that MediaKit's model does not hold (all but the text
    /// frames, COMM, USLT, PRIV, APIC, CHAP and CTOC: GEOB, POPM, UFID, PCNT, MCDI, URL frames
    /// ...), as ID3v2.4 frames for a new tag, in their order: the body as stored (after the
    /// unsynchronisation is undone and a data length indicator dropped), a new frame header
    /// keeping the file-alter-preservation and read-only flags. Left out: an ID3v2.2 tag's frames
    /// (other ids), an ID3v2.3 frame whose body differs in ID3v2.4 (``sameBodyInV24``), a
    /// compressed, encrypted or grouped frame, and a frame flagged to be discarded when the tag
    /// is altered (the tag-alter-preservation flag, as the specifications ask).
    static func unmodelledFrames(_ tag: [UInt8]) -> [[UInt8]] {
        guard tag.count >= 10, tag[3] == 3 || tag[3] == 4 else { return [] }
        let major = Int(tag[3]), flags = tag[5]
        var body = Array(tag[10..<min(tag.count, v2TagSize(tag[...]) ?? tag.count)])
        if flags & 0x80 != 0 && major < 4 { body = undoUnsynchronisation(body) }
        var at = 0
        if flags & 0x40 != 0, body.count >= 4 {
            let n = major == 3 ? Int(be32(body, 0)) + 4 : syncsafe(body, 0)
            at = min(body.count, max(4, n))
        }
        let modelled: Set<String> = ["COMM", "USLT", "PRIV", "APIC", "CHAP", "CTOC"]
        var out: [[UInt8]] = []
        while at + 10 <= body.count {
            let idBytes = body[at..<at + 4]
            guard idBytes.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }) else { break }   // padding
            let id = String(decoding: idBytes, as: UTF8.self)
            let size = major == 4 ? syncsafe(body, at + 4) : Int(be32(body, at + 4))
            let frameFlags = UInt16(body[at + 8]) << 8 | UInt16(body[at + 9])
            let start = at + 10
            guard size >= 0, start + size <= body.count else { break }
            var data = Array(body[start..<start + size])
            at = start + size
            guard id.first != "T", !modelled.contains(id) else { continue }
            // v2.3 flags: %abc00000 %ijk00000; v2.4: %0abc0000 %0h00kmnp.
            let discard = major == 3 ? frameFlags & 0x8000 != 0 : frameFlags & 0x4000 != 0
            let format = major == 3 ? frameFlags & 0x00E0 : frameFlags & 0x004C   // compressed, encrypted, grouped
            guard !discard, format == 0, major == 4 || sameBodyInV24.contains(id) else { continue }
            let status: UInt8 = major == 3 ? UInt8(truncatingIfNeeded: (frameFlags >> 8) & 0x60) >> 1 : UInt8(truncatingIfNeeded: frameFlags >> 8) & 0x30
            if major == 4 {
                if frameFlags & 0x0001 != 0 { data = Array(data.dropFirst(4)) }            // data length indicator
                if frameFlags & 0x0002 != 0 || flags & 0x80 != 0 { data = undoUnsynchronisation(data) }
            }
            out.append(Array(idBytes) + MetadataWriting.syncsafe(data.count) + [status, 0] + data)
        }
        return out
    }

    private static func apply(id: String, data: [UInt8], major: Int, to tags: inout AudioTags) {
        switch id {
        case "TIT2", "TT2": tags.title = tags.title ?? text(data)
        case "TPE1", "TP1": tags.artist = tags.artist ?? text(data)
        case "TALB", "TAL": tags.album = tags.album ?? text(data)
        case "TRCK", "TRK": tags.track = tags.track ?? text(data)
        case "TDRC", "TYER", "TYE": tags.date = tags.date ?? text(data)
        case "TCON", "TCO": tags.genre = tags.genre ?? text(data)
        case "COMM", "COM":
            guard tags.comment == nil, data.count > 4 else { return }
            let encoding = data[0]
            let rest = Array(data[4...])
            let (_, after) = terminated(rest, encoding: encoding)
            tags.comment = decode(Array(rest[after...]), encoding: encoding)
        case "APIC", "PIC":
            guard tags.coverArt == nil, let picture = ID3Metadata.picture(id: id, data) else { return }
            tags.coverArt = (picture.mimeType, picture.data)
        case "CHAP":
            guard let c = chapterFrame(data, major: major) else { return }
            tags.chapters.append((c.element, Int(c.start), Int(c.end), c.sub.title))
        default: break
        }
    }

    /// A CHAP frame's body: its element id, start and end in milliseconds, and its sub-frames
    /// read as a tag; nil when the body is too short.
    static func chapterFrame(_ data: [UInt8], major: Int) -> (element: String, start: Int64, end: Int64, sub: AudioTags)? {
        guard let end = data.firstIndex(of: 0), end + 17 <= data.count else { return nil }
        let element = String(decoding: data[..<end], as: UTF8.self)
        var sub = AudioTags(), ignored: [String] = []
        let inner = Array(data[(end + 17)...])
        if !inner.isEmpty {
            // Sub-frames use the tag's own frame layout: wrap them in a tag header to reuse the reader.
            let size = inner.count
            let header: [UInt8] = [0x49, 0x44, 0x33, UInt8(major), 0, 0,
                                   UInt8((size >> 21) & 0x7F), UInt8((size >> 14) & 0x7F), UInt8((size >> 7) & 0x7F), UInt8(size & 0x7F)]
            readV2(header + inner, into: &sub, warnings: &ignored)
        }
        return (element, Int64(be32(data, end + 1)), Int64(be32(data, end + 5)), sub)
    }

    /// The text of a text frame: its encoding byte, then the string (the first of several).
    static func text(_ data: [UInt8]) -> String? {
        guard let encoding = data.first else { return nil }
        let s = decode(Array(data.dropFirst()), encoding: encoding)
        return s.isEmpty ? nil : s
    }

    /// Where a terminated string ends in `data`: (its length, the index after the terminator).
    private static func terminated(_ data: [UInt8], encoding: UInt8) -> (Int, Int) {
        if encoding == 1 || encoding == 2 {
            var i = 0
            while i + 1 < data.count { if data[i] == 0 && data[i + 1] == 0 { return (i, i + 2) }; i += 2 }
            return (data.count, data.count)
        }
        if let i = data.firstIndex(of: 0) { return (i, i + 1) }
        return (data.count, data.count)
    }

    /// A string in ID3's encodings: 0 ISO-8859-1, 1 UTF-16 with a BOM, 2 UTF-16BE, 3 UTF-8.
    static func decode(_ data: [UInt8], encoding: UInt8) -> String {
        let (length, _) = terminated(data, encoding: encoding)
        let bytes = Array(data[..<length])
        switch encoding {
        case 1:
            if bytes.count >= 2 && bytes[0] == 0xFF && bytes[1] == 0xFE { return String(data: Data(bytes.dropFirst(2)), encoding: .utf16LittleEndian) ?? "" }
            if bytes.count >= 2 && bytes[0] == 0xFE && bytes[1] == 0xFF { return String(data: Data(bytes.dropFirst(2)), encoding: .utf16BigEndian) ?? "" }
            return String(data: Data(bytes), encoding: .utf16LittleEndian) ?? ""
        case 2: return String(data: Data(bytes), encoding: .utf16BigEndian) ?? ""
        case 3: return String(decoding: bytes, as: UTF8.self)
        default: return String(bytes.map { Character(UnicodeScalar($0)) })
        }
    }

    /// Reads a 128-byte ID3v1 tag ("TAG") into the fields `tags` does not have yet.
    static func readV1(_ b: [UInt8], into tags: inout AudioTags) {
        guard b.count == 128, b[0] == 0x54, b[1] == 0x41, b[2] == 0x47 else { return }
        func field(_ r: Range<Int>) -> String? {
            let s = decode(Array(b[r]), encoding: 0).trimmingCharacters(in: .whitespaces)
            return s.isEmpty ? nil : s
        }
        tags.title = tags.title ?? field(3..<33)
        tags.artist = tags.artist ?? field(33..<63)
        tags.album = tags.album ?? field(63..<93)
        tags.date = tags.date ?? field(93..<97)
        tags.comment = tags.comment ?? field(97..<(b[125] == 0 && b[126] != 0 ? 125 : 127))
        if b[125] == 0 && b[126] != 0 { tags.track = tags.track ?? String(b[126]) }
    }

    static func syncsafe(_ b: [UInt8], _ i: Int) -> Int {
        guard i + 4 <= b.count else { return 0 }
        return Int(b[i] & 0x7F) << 21 | Int(b[i + 1] & 0x7F) << 14 | Int(b[i + 2] & 0x7F) << 7 | Int(b[i + 3] & 0x7F)
    }

    /// Undoes unsynchronisation: every 0xFF 0x00 becomes 0xFF.
    static func undoUnsynchronisation(_ b: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var i = 0
        while i < b.count {
            out.append(b[i])
            if b[i] == 0xFF && i + 1 < b.count && b[i + 1] == 0 { i += 1 }
            i += 1
        }
        return out
    }
}
