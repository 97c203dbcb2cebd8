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
    /// tkhd's width and height, whole pixels (a subtitle track's size, as FFmpeg takes it).
    var tkhdWidth = 0, tkhdHeight = 0
    /// The track header's `track_enabled` flag (FFmpeg's `default` disposition).
    var tkhdEnabled = true
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
    /// mdhd's creation time as stored (seconds since 1904), 0 if none.
    var creationTime: UInt64 = 0
    /// mdhd's language code as stored.
    var languageCode = 0x7FFF
    /// The first non-empty handler name (mdia/hdlr, minf/hdlr, a meta handler in the track).
    var handlerName: String?
    /// The first sample description's vendor (4 bytes) and, for video, compressor name.
    var vendor: [UInt8]?
    var compressorName = ""

    /// The stream tags libavformat's mov demuxer gives this track (FFmpeg 5.1: mov_read_mdhd,
    /// mov_read_hdlr, mov_parse_stsd_video / audio), as ffprobe prints them.
    var metadata: Metadata {
        var m = Metadata()
        if let time = ITunesMetadata.creationTime(creationTime) {
            m.appendTrackField(key: "creation_time", nativeKey: "mdhd.creation_time", ffmpegKey: "creation_time", value: time)
        }
        if let language = ITunesMetadata.language(languageCode) {
            m.appendTrackField(key: "language", nativeKey: "mdhd.language", ffmpegKey: "language", value: language)
        }
        if let handlerName { m.appendTrackField(key: "handler_name", nativeKey: "hdlr.name", ffmpegKey: "handler_name", value: handlerName) }
        let video = handler == "vide" || (handler != "soun" && parameters.mediaType == .video)
        let audio = handler == "soun" || (handler != "vide" && parameters.mediaType == .audio)
        if let vendor, video || audio {
            m.appendTrackField(key: "vendor_id", nativeKey: "stsd.vendor", ffmpegKey: "vendor_id", value: ITunesMetadata.fourCCText(vendor))
        }
        if video, !compressorName.isEmpty {
            m.appendTrackField(key: "encoder", nativeKey: "stsd.compressorname", ffmpegKey: "encoder", value: compressorName)
        }
        return m
    }
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
    /// mvhd's creation time as stored (seconds since 1904), 0 if none.
    var creationTime: UInt64 = 0
    /// The tags, covers and Nero chapters of the movie's and tracks' udta / meta boxes.
    var userMetadata = QuickTimeMetadataReader()

    /// Parses a `moov` payload. `isom`: the ftyp says the file is not QuickTime (see
    /// ``SampleEntryParser/parse(stsd:handler:isom:)``).
    /// `quickTimeBrand`: the ftyp's major brand is "qt  " or there is no ftyp (libavformat then
    /// reads a handler name as a Pascal string when its first byte is its length).
    static func parse(_ r: inout BoxReader, isom: Bool = false, quickTimeBrand: Bool = false) throws -> MovieBox {
        var movie = MovieBox()
        try r.children { type, c in
            switch type {
            case "mvhd":
                let (v, _) = try c.fullBoxHeader()
                if v == 1 { movie.creationTime = try c.u64(); try c.skip(8); movie.timeScale = Int64(try c.u32()); movie.duration = Int64(bitPattern: try c.u64()) }
                else { movie.creationTime = UInt64(try c.u32()); try c.skip(4); movie.timeScale = Int64(try c.u32()); movie.duration = Int64(try c.u32()) }
                if let time = ITunesMetadata.creationTime(movie.creationTime) {
                    movie.userMetadata.metadata.append(key: "creation_time", nativeKey: "mvhd.creation_time", ffmpegKey: "creation_time", value: time)
                }
            case "trak":
                movie.tracks.append(try parseTrak(&c, isom: isom, quickTimeBrand: quickTimeBrand, userMetadata: &movie.userMetadata, tracksSoFar: movie.tracks.count + 1))
            case "meta":
                var none: String?
                movie.userMetadata.readMeta(c.bytes, c.position..<c.end, tracksSoFar: movie.tracks.count, handlerName: &none, inTrack: false)
            case "udta":
                var none: String?
                movie.userMetadata.readUserData(c.bytes, c.position..<c.end, tracksSoFar: movie.tracks.count, handlerName: &none, inTrack: false)
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

    static func parseTrak(_ r: inout BoxReader, isom: Bool = false, quickTimeBrand: Bool = false) throws -> TrackBox {
        var unused = QuickTimeMetadataReader()
        return try parseTrak(&r, isom: isom, quickTimeBrand: quickTimeBrand, userMetadata: &unused, tracksSoFar: 1)
    }

    /// A `trak`; its `udta` / `meta` boxes are read into `userMetadata` (libavformat gives
    /// their strings to the format), `tracksSoFar` counting this one.
    static func parseTrak(_ r: inout BoxReader, isom: Bool, quickTimeBrand: Bool, userMetadata: inout QuickTimeMetadataReader, tracksSoFar: Int) throws -> TrackBox {
        var t = TrackBox()
        t.path = r.path
        var stsdReader: BoxReader?
        /// A handler name as libavformat's mov_read_hdlr takes it (the first non-empty one).
        func handlerName(_ c: BoxReader) {
            let title = c.position + 24
            guard t.handlerName == nil, title < c.end, c.bytes[title] != 0 else { return }
            let skip = quickTimeBrand && Int(c.bytes[title]) == c.end - title - 1 ? 1 : 0
            t.handlerName = ITunesMetadata.cString(c.bytes[(title + skip)..<c.end])
        }
        try r.children { type, c in
            switch type {
            case "udta":
                userMetadata.readUserData(c.bytes, c.position..<c.end, tracksSoFar: tracksSoFar, handlerName: &t.handlerName, inTrack: true)
            case "meta":
                userMetadata.readMeta(c.bytes, c.position..<c.end, tracksSoFar: tracksSoFar, handlerName: &t.handlerName, inTrack: true)
            case "tref":
                try c.children { rt, e in
                    var ids: [Int] = []
                    while e.remaining >= 4 { ids.append(Int(try e.u32())) }
                    t.references.append((rt, ids))
                }
            case "tkhd":
                let (v, flags) = try c.fullBoxHeader()
                t.tkhdEnabled = flags & 1 != 0
                if v == 1 { try c.skip(16); t.id = Int(try c.u32()); try c.skip(4); t.tkhdDuration = Int64(bitPattern: try c.u64()) }
                else { try c.skip(8); t.id = Int(try c.u32()); try c.skip(4); t.tkhdDuration = Int64(try c.u32()) }
                try c.skip(8 + 2 + 2 + 2 + 2)
                var m: [Int32] = []
                for _ in 0..<9 { m.append(try c.i32()) }
                t.matrix = m
                if c.remaining >= 8 { t.tkhdWidth = Int(try c.u32() >> 16); t.tkhdHeight = Int(try c.u32() >> 16) }
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
                        if v == 1 { t.creationTime = try m.u64(); try m.skip(8); t.timeScale = Int64(try m.u32()); t.mediaDuration = Int64(bitPattern: try m.u64()) }
                        else { t.creationTime = UInt64(try m.u32()); try m.skip(4); t.timeScale = Int64(try m.u32()); t.mediaDuration = Int64(try m.u32()) }
                        let code = try m.u16()
                        t.languageCode = Int(code)
                        t.language = languageCode(code)
                    case "hdlr":
                        handlerName(m)
                        _ = try m.fullBoxHeader()
                        try m.skip(4)
                        t.handler = try m.fourCC()
                    case "minf":
                        try m.children { nt, n in
                            if nt == "hdlr" { handlerName(n) }
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
            // The first sample entry's vendor and (video) compressor name: after the entry's
            // 8-byte header, 6 reserved bytes, the data reference index, version and revision.
            let first = s.position + 8
            if first + 8 + 16 <= s.end, Int(s.readU32(at: first)) >= 24, first + Int(s.readU32(at: first)) <= s.end {
                let body = first + 8, end = first + Int(s.readU32(at: first))
                t.vendor = Array(s.bytes[body + 12..<body + 16])
                if body + 43 <= end {
                    let length = min(Int(s.bytes[body + 42]), 31, end - body - 43)
                    t.compressorName = ITunesMetadata.macString(s.bytes[body + 43..<body + 43 + length])
                }
            }
            let entry = try SampleEntryParser.parse(stsd: &s, handler: t.handler, isom: isom)
            (t.parameters, t.unsupportedReason, t.encrypted, t.framing) = (entry.parameters, entry.unsupportedReason, entry.encrypted, entry.framing)
            if t.parameters.codec == "dvd_subtitle" {
                // FFmpeg gives a subtitle stream the track header's size (the .idx text's "size:").
                (t.parameters.width, t.parameters.height) = (t.tkhdWidth, t.tkhdHeight)
            }
            if t.parameters.codec == "dvd_subtitle",
               let idx = DVDSubtitlePalette.idxText(palette: t.parameters.extradata, width: t.parameters.width, height: t.parameters.height) {
                t.parameters.extradata = idx
            }
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
