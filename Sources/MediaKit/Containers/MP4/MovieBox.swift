/// The raw sample tables of one `trak`, as stored.
struct SampleTables {
    var stts: [(count: UInt32, delta: UInt32)] = []
    var ctts: [(count: UInt32, offset: Int32)] = []
    var syncSamples: [UInt32]? = nil        // 1-based; nil when there is no stss
    var partialSyncSamples: [UInt32] = []   // stps
    var constantSize: UInt32 = 0
    var sizes: [UInt32] = []
    var sampleCount: Int = 0
    var stsc: [(firstChunk: UInt32, samplesPerChunk: UInt32, descriptionIndex: UInt32)] = []
    var chunkOffsets: [UInt64] = []
    /// Where stsc and stsz are (box path, file offset of the payload), for errors found
    /// while the index is built.
    var stscLocation: (path: String, offset: Int64) = ("", 0)
    var stszLocation: (path: String, offset: Int64) = ("", 0)
}

/// What the `trak` box says about one track, before the sample index is built.
struct TrackBox {
    var id = 0
    var tkhdDuration: Int64 = 0
    var matrix: [Int32] = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000]
    var timeScale: Int64 = 0
    var mediaDuration: Int64 = 0
    var language = "und"
    var handler = ""
    var parameters = CodecParameters(mediaType: .data, codec: "")
    var unsupportedReason: String?
    var encrypted = false
    /// Audio: how the sound description frames the samples (uncompressed audio grouping).
    var framing = AudioFraming()
    var edits: [EditListEntry] = []
    /// `tref` entries: reference type and referenced track IDs.
    var references: [(type: String, ids: [Int])] = []
    var tables = SampleTables()
    var hasSampleTable = false
    var path = ""
}

/// What the `moov` box says about the movie.
struct MovieBox {
    var timeScale: Int64 = 0
    var duration: Int64 = 0
    var tracks: [TrackBox] = []
    var isFragmented = false
    /// Gapless information from an iTunes `iTunSMPB` tag (udta/meta/ilst).
    var iTunSMPB: (delay: Int, padding: Int)?
    /// The movie's `udta` box as stored (metadata, cover art, chapters), empty if none.
    var userData: [UInt8] = []
    /// trex defaults by track ID: (description index, duration, size, flags).
    var trex: [Int: (UInt32, UInt32, UInt32, UInt32)] = [:]

    /// Parses a `moov` payload. `isom`: the ftyp says the file is not QuickTime (see
    /// ``SampleEntryParser/parse(stsd:handler:isom:)``).
    static func parse(_ r: inout BoxReader, isom: Bool = false) throws -> MovieBox {
        var movie = MovieBox()
        try r.children { type, c in
            switch type {
            case "mvhd":
                let (v, _) = try c.fullBoxHeader()
                if v == 1 { try c.skip(16); movie.timeScale = Int64(try c.u32()); movie.duration = Int64(bitPattern: try c.u64()) }
                else { try c.skip(8); movie.timeScale = Int64(try c.u32()); movie.duration = Int64(try c.u32()) }
            case "trak":
                movie.tracks.append(try parseTrak(&c, isom: isom))
            case "udta":
                let start = c.position - 8
                if start >= 0, be32(c.bytes, start) == UInt32(c.end - start) { movie.userData = Array(c.bytes[start..<c.end]) }
                movie.iTunSMPB = (try? parseITunSMPB(&c)) ?? nil
            case "mvex":
                movie.isFragmented = true
                try c.children { t, x in
                    if t == "trex" {
                        _ = try x.fullBoxHeader()
                        let id = Int(try x.u32())
                        movie.trex[id] = (try x.u32(), try x.u32(), try x.u32(), try x.u32())
                    }
                }
            default: break
            }
        }
        return movie
    }

    /// Finds `meta/ilst/----` with name `iTunSMPB` and reads its priming and padding fields.
    static func parseITunSMPB(_ udta: inout BoxReader) throws -> (delay: Int, padding: Int)? {
        var result: (Int, Int)?
        try udta.children { t, meta in
            guard t == "meta" else { return }
            // meta is a full box in MP4 (QuickTime writes it without version/flags).
            if meta.remaining >= 8, meta.readU32(at: meta.position + 4) != 0x6864_6C72 /* hdlr */ { try meta.skip(4) }
            try meta.children { t, ilst in
                guard t == "ilst" else { return }
                try ilst.children { _, item in
                    var name = "", value = ""
                    try item.children { t, f in
                        if t == "name" { try f.skip(4); name = String(decoding: try f.take(f.remaining), as: UTF8.self) }
                        if t == "data" { try f.skip(8); value = String(decoding: try f.take(f.remaining), as: UTF8.self) }
                    }
                    guard name == "iTunSMPB" else { return }
                    let fields = value.split(separator: " ").compactMap { Int($0, radix: 16) }
                    if fields.count >= 3, fields[1] > 0, fields[1] < 16384 { result = (fields[1], fields[2]) }
                }
            }
        }
        return result
    }

    static func parseTrak(_ r: inout BoxReader, isom: Bool = false) throws -> TrackBox {
        var t = TrackBox()
        t.path = r.path
        var stsdReader: BoxReader?
        try r.children { type, c in
            switch type {
            case "tref":
                try c.children { rt, e in
                    var ids: [Int] = []
                    while e.remaining >= 4 { ids.append(Int(try e.u32())) }
                    t.references.append((rt, ids))
                }
            case "tkhd":
                let (v, _) = try c.fullBoxHeader()
                if v == 1 { try c.skip(16); t.id = Int(try c.u32()); try c.skip(4); t.tkhdDuration = Int64(bitPattern: try c.u64()) }
                else { try c.skip(8); t.id = Int(try c.u32()); try c.skip(4); t.tkhdDuration = Int64(try c.u32()) }
                try c.skip(8 + 2 + 2 + 2 + 2)
                var m: [Int32] = []
                for _ in 0..<9 { m.append(try c.i32()) }
                t.matrix = m
            case "edts":
                try c.children { et, e in
                    guard et == "elst" else { return }
                    let (v, _) = try e.fullBoxHeader()
                    let n = try e.checkTable(count: UInt64(try e.u32()), entrySize: v == 1 ? 20 : 12, "elst")
                    for _ in 0..<n {
                        let dur: Int64, time: Int64
                        if v == 1 { dur = Int64(bitPattern: try e.u64()); time = Int64(bitPattern: try e.u64()) }
                        else { dur = Int64(try e.u32()); time = Int64(try e.i32()) }
                        let rate = Double(try e.i32()) / 65536
                        t.edits.append(EditListEntry(segmentDuration: dur, mediaTime: time, mediaRate: rate))
                    }
                }
            case "mdia":
                try c.children { mt, m in
                    switch mt {
                    case "mdhd":
                        let (v, _) = try m.fullBoxHeader()
                        if v == 1 { try m.skip(16); t.timeScale = Int64(try m.u32()); t.mediaDuration = Int64(bitPattern: try m.u64()) }
                        else { try m.skip(8); t.timeScale = Int64(try m.u32()); t.mediaDuration = Int64(try m.u32()) }
                        t.language = languageCode(try m.u16())
                    case "hdlr":
                        _ = try m.fullBoxHeader()
                        try m.skip(4)
                        t.handler = try m.fourCC()
                    case "minf":
                        try m.children { nt, n in
                            guard nt == "stbl" else { return }
                            t.hasSampleTable = true
                            try n.children { st, s in
                                if st == "stsd" { stsdReader = s; return }
                                try parseTable(st, &s, into: &t.tables)
                            }
                        }
                    default: break
                    }
                }
            default: break
            }
        }
        if var s = stsdReader {
            let entry = try SampleEntryParser.parse(stsd: &s, handler: t.handler, isom: isom)
            (t.parameters, t.unsupportedReason, t.encrypted, t.framing) = (entry.parameters, entry.unsupportedReason, entry.encrypted, entry.framing)
        } else {
            t.parameters = CodecParameters(mediaType: SampleEntryParser.mediaType(handler: t.handler), codec: "")
            t.unsupportedReason = "the track has no sample description (stsd)"
        }
        return t
    }

    static func parseTable(_ type: String, _ s: inout BoxReader, into tb: inout SampleTables) throws {
        switch type {
        case "stts":
            _ = try s.fullBoxHeader()
            let n = try s.checkTable(count: UInt64(try s.u32()), entrySize: 8, "stts")
            tb.stts.reserveCapacity(n)
            for _ in 0..<n { tb.stts.append((try s.u32(), try s.u32())) }
        case "ctts":
            _ = try s.fullBoxHeader()
            let n = try s.checkTable(count: UInt64(try s.u32()), entrySize: 8, "ctts")
            tb.ctts.reserveCapacity(n)
            for _ in 0..<n { tb.ctts.append((try s.u32(), try s.i32())) }
        case "stss", "stps":
            _ = try s.fullBoxHeader()
            let n = try s.checkTable(count: UInt64(try s.u32()), entrySize: 4, type)
            var list: [UInt32] = []
            list.reserveCapacity(n)
            for _ in 0..<n { list.append(try s.u32()) }
            if type == "stss" { tb.syncSamples = list } else { tb.partialSyncSamples = list }
        case "stsz":
            tb.stszLocation = (s.path, s.absoluteOffset)
            _ = try s.fullBoxHeader()
            tb.constantSize = try s.u32()
            let count = try s.u32()
            if tb.constantSize == 0 {
                let n = try s.checkTable(count: UInt64(count), entrySize: 4, "stsz")
                tb.sizes.reserveCapacity(n)
                for _ in 0..<n { tb.sizes.append(try s.u32()) }
                tb.sampleCount = n
            } else {
                // No table to hold: the limit applies to the index built from it (SampleIndexBuilder),
                // where uncompressed audio counts packets, not PCM frames.
                tb.sampleCount = Int(count)
            }
        case "stz2":
            _ = try s.fullBoxHeader()
            try s.skip(3)
            let field = Int(try s.u8())
            guard [4, 8, 16].contains(field) else { throw s.error(.invalidData, "stz2 field size \(field) is not 4, 8 or 16") }
            let count = try s.u32()
            _ = try s.checkTable(count: UInt64(count) * UInt64(field) / 8, entrySize: 1, "stz2")   // throws past the bytes left
            tb.sampleCount = Int(count)
            tb.sizes.reserveCapacity(Int(count))
            var i = 0
            while i < Int(count) {
                switch field {
                case 4:
                    let b = try s.u8()
                    tb.sizes.append(UInt32(b >> 4)); i += 1
                    if i < Int(count) { tb.sizes.append(UInt32(b & 15)); i += 1 }
                case 8: tb.sizes.append(UInt32(try s.u8())); i += 1
                default: tb.sizes.append(UInt32(try s.u16())); i += 1
                }
            }
        case "stsc":
            tb.stscLocation = (s.path, s.absoluteOffset)
            _ = try s.fullBoxHeader()
            let n = try s.checkTable(count: UInt64(try s.u32()), entrySize: 12, "stsc")
            tb.stsc.reserveCapacity(n)
            for _ in 0..<n { tb.stsc.append((try s.u32(), try s.u32(), try s.u32())) }
        case "stco", "co64":
            _ = try s.fullBoxHeader()
            let size = type == "stco" ? 4 : 8
            let n = try s.checkTable(count: UInt64(try s.u32()), entrySize: size, type)
            tb.chunkOffsets.reserveCapacity(n)
            for _ in 0..<n { tb.chunkOffsets.append(size == 4 ? UInt64(try s.u32()) : try s.u64()) }
        default: break
        }
    }

    /// ISO 639-2/T code from mdhd's packed language, or a QuickTime (Macintosh) language code.
    static func languageCode(_ v: UInt16) -> String {
        if v >= 0x400 {
            if v == 0x7FFF { return "und" }
            let chars = [(v >> 10) & 31, (v >> 5) & 31, v & 31].map { UInt8($0) + 0x60 }
            if chars.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) { return String(decoding: chars, as: UTF8.self) }
            return "und"
        }
        let mac = ["eng", "fra", "ger", "ita", "dut", "sve", "spa", "dan", "por", "nor", "heb", "jpn", "ara",
                   "fin", "gre", "ice", "mlt", "tur", "hr ", "chi", "urd", "hin", "tha", "kor", "lit", "pol",
                   "hun", "est", "lav", "", "fo ", "", "rus", "chi", "", "iri", "alb", "ron", "ces", "slk",
                   "slv", "yid", "sr ", "mac", "bul", "ukr", "bel", "uzb", "kaz", "aze", "aze", "arm", "geo",
                   "mol", "kir", "tgk", "tuk", "mon", "mon", "pus", "kur", "kas", "snd", "tib", "nep", "san",
                   "mar", "ben", "asm", "guj", "pa ", "ori", "mal", "kan", "tam", "tel", "sin", "bur", "khm",
                   "lao", "vie", "ind", "tgl", "may", "may", "amh", "tir", "orm", "som", "swa", "kin", "run",
                   "nya", "mlg", "epo"]
        let i = Int(v)
        if i < mac.count, !mac[i].isEmpty, !mac[i].contains(" ") { return mac[i] }
        return "und"
    }
}
