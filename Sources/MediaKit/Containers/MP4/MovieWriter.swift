/// Builds `ftyp`, `moov` (progressive or fragmented), `moof` and `mfra` boxes from the
/// muxer's track state.
enum MovieWriter {
    static let identity: [Int32] = [0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x4000_0000]

    /// The largest magnitude of a timestamp or an edit time the muxer takes, in ticks: 2^60
    /// (36 000 years at 1 GHz), so that the sums and differences of a few of them the tables
    /// are built from never overflow 64 bits.
    static let timeLimit: Int64 = 1 << 60

    /// `v` as an unsigned 32-bit field, or an error naming the track and the field.
    static func u32(_ v: Int64, track: Int, _ field: String) throws -> UInt32 {
        guard let r = UInt32(exactly: v) else {
            throw MediaError(.limit, "track \(track): \(field) \(v) does not fit its 32-bit field of an MP4 box")
        }
        return r
    }

    /// `v` as an unsigned 64-bit field (a version-1 box), or an error naming the track and the field.
    static func u64(_ v: Int64, track: Int, _ field: String) throws -> UInt64 {
        guard let r = UInt64(exactly: v) else {
            throw MediaError(.invalidArgument, "track \(track): \(field) \(v) is negative")
        }
        return r
    }

    /// `a + b`, or an error naming the track and what is summed when it overflows 64 bits.
    static func sum(_ a: Int64, _ b: Int64, track: Int, _ what: String) throws -> Int64 {
        let (r, overflow) = a.addingReportingOverflow(b)
        if overflow { throw MediaError(.limit, "track \(track): \(what) overflows 64 bits (\(a) + \(b))") }
        return r
    }

    /// The file type FFmpeg's muxer of an extension states (`mov_write_ftyp_tag`): `.mov` its mov
    /// muxer's, `.m4a` / `.m4v` / `.m4b` its ipod muxer's, `.3gp` its 3gp muxer's, else mp4's.
    enum Brand {
        case mp4, quickTime, iTunes, threeGPP

        init(pathExtension ext: String) {
            switch ext.lowercased() {
            case "mov": self = .quickTime
            case "m4a", "m4v", "m4b": self = .iTunes
            case "3gp": self = .threeGPP
            default: self = .mp4
            }
        }
    }

    /// The `ftyp` box, with the brands FFmpeg's muxer for the `brand`'s extension writes: the
    /// major brand (`isom`; `qt  ` alone for .mov; `M4V ` with video or `M4A ` for the iTunes
    /// extensions; `3gp6` with H.264, minor version 0x100, or `3gp4` for .3gp), then as
    /// compatible brands the major one, `isom` and `iso2` (`avc1` with H.264, `av01` before
    /// `iso2` with AV1 in .mp4) and `mp41` for .mp4. `fragmented`: movie fragments whose `tfhd`
    /// says default-base-is-moof (this muxer's fragments always do), for which FFmpeg
    /// (`-movflags +default_base_moof`) writes `iso6` and `iso5`, the brand that flag needs,
    /// instead of `isom` / `iso2` / `avc1`: `iso5` is then the major brand of an .mp4.
    static func ftyp(tracks: [MuxTrack], fragmented: Bool, brand: Brand = .mp4) -> [UInt8] {
        let h264 = tracks.contains { $0.parameters.codec == "h264" }
        let av1 = tracks.contains { $0.parameters.codec == "av1" }
        let major: String
        var minor: UInt32 = 0x200
        switch brand {
        case .quickTime: major = "qt  "
        case .iTunes: major = tracks.contains { $0.parameters.mediaType == .video && !$0.isChapter } ? "M4V " : "M4A "
        case .threeGPP:
            major = h264 ? "3gp6" : "3gp4"
            if h264 { minor = 0x100 }
        case .mp4: major = fragmented ? "iso5" : "isom"
        }
        var compatible = [major]
        if brand != .quickTime {
            if fragmented { compatible.append("iso6") }
            if av1 && brand == .mp4 { compatible.append("av01") }
            if fragmented {
                if major != "iso5" { compatible.append("iso5") }
            } else {
                if major != "isom" { compatible.append("isom") }
                compatible.append("iso2")
                if h264 { compatible.append("avc1") }
            }
            if brand == .mp4 { compatible.append("mp41") }
        }
        var w = BoxWriter()
        w.box("ftyp") { w in
            w.fourCC(major); w.u32(minor)
            for b in compatible { w.fourCC(b) }
        }
        return w.bytes
    }

    /// A media segment's `styp` as FFmpeg's DASH / HLS writer starts one: the brand "msdh"
    /// (ISO/IEC 23009-1 media segment), compatible "msdh", "msix" (indexed).
    static func styp() -> [UInt8] {
        var w = BoxWriter()
        w.box("styp") { w in
            w.fourCC("msdh"); w.u32(0)
            w.fourCC("msdh"); w.fourCC("msix")
        }
        return w.bytes
    }

    /// The presentation of a track as edit list entries in `movieTimeScale` units.
    /// `fragmented`: the media duration is not known yet (edits of unknown length are 0).
    /// - Throws: `.invalidArgument` for an edit that an `elst` cannot hold (a negative duration,
    ///   a media time below -1, a rate that is not a 16.16 number) or times beyond ``timeLimit``.
    static func edits(_ t: MuxTrack, movieTimeScale: Int64, fragmented: Bool) throws -> [EditListEntry] {
        let edits = try presentationEdits(t, movieTimeScale: movieTimeScale, fragmented: fragmented)
        try check(edits, track: t.id - 1, "")
        guard fragmented, t.compositionShift > 0 else { return edits }
        // The fragments store every composition offset plus the shift: the presentation
        // starts that much later in the media (an edit of unknown length: duration 0).
        if !edits.contains(where: { !$0.isEmpty }) {
            return edits + [EditListEntry(segmentDuration: 0, mediaTime: t.compositionShift, mediaRate: 1)]
        }
        return edits.map { e in
            e.isEmpty ? e : EditListEntry(segmentDuration: e.segmentDuration, mediaTime: e.mediaTime + t.compositionShift, mediaRate: e.mediaRate)
        }
    }

    /// Refuses edits an `elst` cannot hold: a duration outside 0...``timeLimit``, a media time
    /// other than -1 (empty) outside 0...``timeLimit``, a rate that is not a finite 16.16 number.
    static func check(_ edits: [EditListEntry], track: Int, _ source: String) throws {
        for (k, e) in edits.enumerated() {
            guard e.segmentDuration >= 0, e.segmentDuration <= timeLimit else {
                throw MediaError(.invalidArgument, "track \(track): \(source)edit \(k) lasts \(e.segmentDuration) ticks; an MP4 edit lasts 0 to 2^60 ticks")
            }
            guard e.mediaTime == -1 || (e.mediaTime >= 0 && e.mediaTime <= timeLimit) else {
                throw MediaError(.invalidArgument, "track \(track): \(source)edit \(k) starts at media time \(e.mediaTime); an MP4 edit starts at -1 (empty) or 0 to 2^60")
            }
            guard e.mediaRate.isFinite, abs(e.mediaRate) < 32768 else {
                throw MediaError(.invalidArgument, "track \(track): \(source)edit \(k) has the rate \(e.mediaRate), not a 16.16 fixed-point number")
            }
        }
    }

    /// ``edits(_:movieTimeScale:fragmented:)`` before the composition shift of fragments.
    private static func presentationEdits(_ t: MuxTrack, movieTimeScale: Int64, fragmented: Bool) throws -> [EditListEntry] {
        let mediaDuration = t.totalDuration
        // Empty edits to the nearest movie tick (exact in the movie time scale the muxer
        // chooses); the length of a media edit rounded up, as FFmpeg's muxer rounds tkhd and
        // mvhd durations (and as a fragmented file's own mehd is): rounded down, the edit
        // would end before the media does and readers would cut its last samples.
        func toMovie(_ v: Int64) -> Int64 { Rational.rescale(v, multiply: movieTimeScale, divide: t.timeScale) }
        func mediaToMovie(_ v: Int64) -> Int64 { Rational.rescale(v, multiply: movieTimeScale, divide: t.timeScale, rounding: .up) }
        if t.shiftsEarlyStartByEdit, let first = t.firstDts, !fragmented {
            // Decode times that start below 0 and no source edit list (MuxTrack.shiftsEarlyStartByEdit),
            // as FFmpeg's mov muxer writes it: the media starts at the first decode time, so the
            // presentation starts at media time -first (the source's time 0), or, when the first
            // frame is presented later, an empty edit lasts until its time and the media edit
            // starts at it. Readers that apply the edit read the source's dts and pts.
            let start = earlyStartPresentation(t)
            if start > 0 {
                let from = t.minComposition
                return [EditListEntry(segmentDuration: toMovie(start), mediaTime: -1, mediaRate: 1),
                        EditListEntry(segmentDuration: mediaToMovie(max(0, t.presentationEnd - from)), mediaTime: from, mediaRate: 1)]
            }
            return [EditListEntry(segmentDuration: mediaToMovie(max(0, t.presentationEnd + first)), mediaTime: -first, mediaRate: 1)]
        }
        if let source = t.sourceEdits, !source.isEmpty {
            // Edits from a caller or a source file: checked before any arithmetic on them.
            try check(source, track: t.id - 1, "the source's ")
            var out: [EditListEntry] = []
            for e in source {
                var d = e.segmentDuration
                if t.sourceMovieTimeScale > 0, t.sourceMovieTimeScale != movieTimeScale {
                    d = Rational.rescale(d, multiply: movieTimeScale, divide: t.sourceMovieTimeScale)
                }
                if d == 0, !e.isEmpty, !fragmented {
                    d = mediaToMovie(max(0, t.presentationEnd - e.mediaTime))
                }
                out.append(EditListEntry(segmentDuration: d, mediaTime: e.mediaTime, mediaRate: e.mediaRate))
            }
            if !fragmented, let first = t.firstDts, first > 0 {
                out.insert(EditListEntry(segmentDuration: toMovie(first), mediaTime: -1, mediaRate: 1), at: 0)
            }
            return out
        }
        if t.sourceEdits != nil {
            // The source had no edit list: none, unless its decode times start late. Then the
            // empty edit lasts until the first composition time and the media edit starts
            // there: the same presentation as an edit at media time 0, but readers that move
            // a track's first frame to its edit's start (FFmpeg) keep the composition delay.
            if !fragmented, let first = t.firstDts, first > 0 {
                let start = lateStartCompositionTime(t)
                return [EditListEntry(segmentDuration: toMovie(first + start), mediaTime: -1, mediaRate: 1),
                        EditListEntry(segmentDuration: mediaToMovie(max(mediaDuration, t.presentationEnd) - start), mediaTime: start, mediaRate: 1)]
            }
            return []
        }
        guard t.sampleCount > 0 || fragmented else { return [] }
        var out: [EditListEntry] = []
        let start = t.minComposition == .max ? 0 : t.minComposition
        if !fragmented, let first = t.firstDts, first > 0 {
            out.append(EditListEntry(segmentDuration: toMovie(first), mediaTime: -1, mediaRate: 1))
        }
        if start != 0 || !out.isEmpty {
            out.append(EditListEntry(segmentDuration: fragmented ? 0 : mediaToMovie(max(0, t.presentationEnd - start)),
                                     mediaTime: start, mediaRate: 1))
        }
        return out
    }

    /// The media time at which a late-starting track without a source edit list begins
    /// to be presented: its earliest composition time (0 when negative or unknown).
    static func lateStartCompositionTime(_ t: MuxTrack) -> Int64 {
        t.minComposition == .max ? 0 : max(0, t.minComposition)
    }

    /// The source time of the earliest presentation of a track whose decode times start below
    /// 0 (``MuxTrack/shiftsEarlyStartByEdit``): its least pts. Positive, it becomes an empty edit.
    static func earlyStartPresentation(_ t: MuxTrack) -> Int64 {
        guard let first = t.firstDts, t.minComposition != .max else { return 0 }
        return t.minComposition + first
    }

    /// The track-time values that become empty edits (the late start of decode times, or of the
    /// presentation of decode times that start early): a movie time scale that expresses them
    /// exactly keeps tracks in sync to the tick.
    static func emptyEditTimes(_ t: MuxTrack) -> [Int64] {
        if t.shiftsEarlyStartByEdit {
            let start = earlyStartPresentation(t)
            return start > 0 ? [start] : []
        }
        guard let first = t.firstDts, first > 0 else { return [] }
        if let source = t.sourceEdits, source.isEmpty { return [first + lateStartCompositionTime(t)] }
        return [first]
    }

    /// `base`, or the smallest multiple of it in which every empty edit of `tracks` is a
    /// whole number of ticks, when that still fits 32 bits.
    static func exactMovieTimeScale(_ base: Int64, tracks: [MuxTrack]) -> Int64 {
        func gcd(_ a: Int64, _ b: Int64) -> Int64 { var a = a, b = b; while b != 0 { (a, b) = (b, a % b) }; return a }
        var scale = base
        for t in tracks where t.timeScale > 0 {
            for v in emptyEditTimes(t) {
                // v / timeScale seconds is exact in `scale` when timeScale / gcd(v, timeScale) divides scale.
                let need = t.timeScale / gcd(v, t.timeScale)
                let next = scale / gcd(scale, need) * need
                if next > Int64(UInt32.max) { return base }
                scale = next
            }
        }
        return scale
    }

    static func presentationDuration(_ t: MuxTrack, movieTimeScale: Int64) throws -> Int64 {
        let e = try edits(t, movieTimeScale: movieTimeScale, fragmented: false)
        if !e.isEmpty { return try e.reduce(0) { try sum($0, $1.segmentDuration, track: t.id - 1, "the sum of the edit durations") } }
        return Rational.rescale(t.totalDuration, multiply: movieTimeScale, divide: t.timeScale, rounding: .up)
    }

    /// The `moov` box. `chunkShift` is added to every chunk offset (fast-start).
    /// `fragmented`: empty sample tables and an `mvex`.
    /// - Throws: a ``MediaError`` naming the track and the value that an MP4 cannot hold.
    static func moov(tracks: [MuxTrack], movieTimeScale: Int64, fragmented: Bool, chunkShift: Int64 = 0, userData: [UInt8] = []) throws -> [UInt8] {
        var w = BoxWriter(capacity: 4096 + tracks.reduce(0) { $0 + $1.sizes.count * 4 + $1.chunks.count * 8 })
        let durations = try tracks.map { fragmented ? 0 : try presentationDuration($0, movieTimeScale: movieTimeScale) }
        let movieDuration = durations.max() ?? 0
        let scale = try u32(movieTimeScale, track: 0, "the movie time scale")
        try w.box("moov") { w in
            // Version 1 (64-bit times) where 32 bits do not fit, as FFmpeg writes mvhd/tkhd/mdhd/elst.
            let v1 = movieDuration > Int64(UInt32.max)
            try w.fullBox("mvhd", version: v1 ? 1 : 0, flags: 0) { w in
                if v1 { w.u64(0); w.u64(0); w.u32(scale); w.u64(try u64(movieDuration, track: 0, "the movie duration")) }
                else { w.u32(0); w.u32(0); w.u32(scale); w.u32(try u32(movieDuration, track: 0, "the movie duration")) }
                w.u32(0x0001_0000); w.u16(0x0100); w.zeros(10)
                for m in identity { w.i32(m) }
                w.zeros(24)
                w.u32(try u32(Int64((tracks.map(\.id).max() ?? 0) + 1), track: tracks.count, "the next track ID"))
            }
            let enabled = enabledTracks(tracks)
            for (i, t) in tracks.enumerated() {
                try trak(&w, t, enabled: enabled[i], movieTimeScale: movieTimeScale, duration: durations[i], fragmented: fragmented,
                         chunkShift: chunkShift)
            }
            w.append(userData)
            if fragmented {
                try w.box("mvex") { w in
                    for t in tracks {
                        let id = try u32(Int64(t.id), track: t.id - 1, "the track ID")
                        w.fullBox("trex", version: 0, flags: 0) { w in
                            w.u32(id); w.u32(1); w.u32(0); w.u32(0); w.u32(0)
                        }
                    }
                }
            }
        }
        return w.bytes
    }

    /// Which tracks the movie presents (`tkhd` flag `track_enabled`), as FFmpeg's mov muxer
    /// decides (`enable_tracks`): those marked ``MuxTrack/isEnabled`` (a source's enabled or
    /// default tracks), and of the video, audio and subtitle tracks where none of a type is,
    /// the first of that type (chapter tracks aside: they are never presented).
    static func enabledTracks(_ tracks: [MuxTrack]) -> [Bool] {
        var enabled = tracks.map(\.isEnabled)
        for type in [MediaType.video, .audio, .subtitle] {
            let ofType = tracks.indices.filter { tracks[$0].parameters.mediaType == type && !tracks[$0].isChapter }
            if let first = ofType.first, !ofType.contains(where: { enabled[$0] }) { enabled[first] = true }
        }
        return enabled
    }

    static func trak(_ w: inout BoxWriter, _ t: MuxTrack, enabled: Bool, movieTimeScale: Int64, duration: Int64, fragmented: Bool,
                     chunkShift: Int64) throws {
        let ti = t.id - 1
        try w.box("trak") { w in
            let v1 = duration > Int64(UInt32.max)
            try w.fullBox("tkhd", version: v1 ? 1 : 0, flags: enabled ? 3 : 2) { w in
                if v1 { w.u64(0); w.u64(0) } else { w.u32(0); w.u32(0) }
                w.u32(try u32(Int64(t.id), track: ti, "the track ID")); w.u32(0)
                if v1 { w.u64(try u64(duration, track: ti, "the duration")) } else { w.u32(try u32(duration, track: ti, "the duration")) }
                w.zeros(8)
                w.u16(0); w.u16(0)                                       // layer, alternate_group
                w.u16(t.parameters.mediaType == .audio ? 0x0100 : 0); w.u16(0)
                for m in (t.matrix.count == 9 ? t.matrix : identity) { w.i32(m) }
                var width = Double(t.width)
                let sar = t.parameters.sampleAspectRatio
                if sar.numerator > 0, sar.denominator > 0 { width = width * Double(sar.numerator) / Double(sar.denominator) }
                // FFmpeg's mov_write_tkhd_tag gives subtitle tracks their size too (a DVD
                // subtitle's, which readers take as the stream's; 0 for text tracks).
                let visual = t.parameters.mediaType == .video || t.parameters.mediaType == .subtitle
                // 16.16 fixed point; addTrack keeps width and height within 0...65535.
                let fixedWidth = (width * 65536).rounded()
                guard !visual || (fixedWidth >= 0 && fixedWidth <= Double(UInt32.max)) else {
                    throw MediaError(.invalidArgument, "track \(ti): the display width \(width) (\(t.width) pixels, aspect ratio \(sar)) does not fit tkhd's 16.16 field")
                }
                w.u32(visual ? UInt32(exactly: fixedWidth) ?? 0 : 0)   // in range: checked above
                w.u32(visual ? try u32(Int64(t.height) << 16, track: ti, "the height (16.16)") : 0)
            }
            if !t.references.isEmpty {
                try w.box("tref") { w in
                    for r in t.references { try w.box(r.type) { w in for id in r.ids { w.u32(try u32(Int64(id), track: ti, "a referenced track ID")) } } }
                }
            }
            let edits = try edits(t, movieTimeScale: movieTimeScale, fragmented: fragmented)
            if !edits.isEmpty {
                // edits() keeps durations in 0...2^60, media times -1 or 0...2^60, rates 16.16.
                try w.box("edts") { w in
                    let big = edits.contains { $0.segmentDuration > Int64(UInt32.max) || $0.mediaTime > Int64(Int32.max) || $0.mediaTime < Int64(Int32.min) }
                    try w.fullBox("elst", version: big ? 1 : 0, flags: 0) { w in
                        w.u32(try u32(Int64(edits.count), track: ti, "the edit count"))
                        for e in edits {
                            if big { w.u64(UInt64(clamping: e.segmentDuration)); w.u64(UInt64(bitPattern: e.mediaTime)) }
                            else { w.u32(UInt32(clamping: e.segmentDuration)); w.i32(Int32(clamping: e.mediaTime)) }
                            w.i32(Int32(clamping: Int64((e.mediaRate * 65536).rounded())))
                        }
                    }
                }
            }
            try w.box("mdia") { w in
                let mediaDuration = fragmented ? 0 : t.totalDuration
                let mv1 = mediaDuration > Int64(UInt32.max)
                let timeScale = try u32(t.timeScale, track: ti, "the time scale")
                try w.fullBox("mdhd", version: mv1 ? 1 : 0, flags: 0) { w in
                    if mv1 { w.u64(0); w.u64(0); w.u32(timeScale); w.u64(try u64(mediaDuration, track: ti, "the media duration")) }
                    else { w.u32(0); w.u32(0); w.u32(timeScale); w.u32(try u32(mediaDuration, track: ti, "the media duration")) }
                    w.u16(t.macintoshLanguageZero ? 0 : BoxWriter.packedLanguage(t.language)); w.u16(0)
                }
                w.fullBox("hdlr", version: 0, flags: 0) { w in
                    w.u32(0); w.fourCC(t.handler); w.zeros(12)
                    w.append(Array((t.handlerName.isEmpty ? MuxTrack.defaultHandlerName(t.handler) : t.handlerName).utf8)); w.u8(0)
                }
                try w.box("minf") { w in
                    switch t.handler {
                    case "vide": w.fullBox("vmhd", version: 0, flags: 1) { $0.zeros(8) }
                    case "soun": w.fullBox("smhd", version: 0, flags: 0) { $0.zeros(4) }
                    case "subt": w.fullBox("sthd", version: 0, flags: 0) { _ in }
                    case "text", "tmcd":
                        w.box("gmhd") { w in
                            w.fullBox("gmin", version: 0, flags: 0) { w in
                                w.u16(0x40); w.u16(0x8000); w.u16(0x8000); w.u16(0x8000); w.u16(0); w.u16(0)
                            }
                            if t.handler == "text" {
                                // The undocumented `text` atom QuickTime wants for a chapter track,
                                // as FFmpeg's mov_write_gmhd_tag writes it (a matrix, verbatim).
                                w.box("text") { w in
                                    w.u16(1); w.u32(0); w.u32(0); w.u32(0); w.u32(1); w.u32(0); w.u32(0); w.u32(0); w.u32(0x4000); w.u16(0)
                                }
                            }
                        }
                    default: w.fullBox("nmhd", version: 0, flags: 0) { _ in }
                    }
                    w.box("dinf") { w in
                        w.fullBox("dref", version: 0, flags: 0) { w in
                            w.u32(1)
                            w.fullBox("url ", version: 0, flags: 1) { _ in }
                        }
                    }
                    try stbl(&w, t, fragmented: fragmented, chunkShift: chunkShift)
                }
            }
        }
    }

    static func stbl(_ w: inout BoxWriter, _ t: MuxTrack, fragmented: Bool, chunkShift: Int64) throws {
        let ti = t.id - 1
        try w.box("stbl") { w in
            try w.fullBox("stsd", version: 0, flags: 0) { w in
                w.u32(1)
                if t.measuresMPEG4BitRates {
                    // FFmpeg measures the average over the samples written; a fragmented moov has none yet.
                    let average = fragmented ? 0 : Int(clamping: averageBitRate(t))
                    return w.append(try SampleEntryWriter.mpeg4Visual(t.parameters, trackID: t.id, averageBitRate: average, bitRateBox: t.writesBitRateBox))
                }
                let bitRate = t.writesBitRateBox && !fragmented ? averageBitRate(t) : 0
                guard bitRate > 0, t.sampleEntry.count >= 8 else { return w.append(t.sampleEntry) }
                // The entry with a `btrt` at its end (buffer size 0, maximum = average).
                w.u32(try u32(Int64(t.sampleEntry.count + 20), track: ti, "the sample entry size"))
                w.append(Array(t.sampleEntry[4...]))
                w.box("btrt") { w in w.u32(0); w.u32(bitRate); w.u32(bitRate) }
            }
            if fragmented {
                for type in ["stts", "stsc", "stco"] { w.fullBox(type, version: 0, flags: 0) { $0.u32(0) } }
                w.fullBox("stsz", version: 0, flags: 0) { $0.u32(0); $0.u32(0) }
                return
            }
            try w.fullBox("stts", version: 0, flags: 0) { w in
                if t.pcmFrameSize > 0 {
                    // Uncompressed audio: one table sample per PCM frame.
                    w.u32(t.pcmFrames > 0 ? 1 : 0)
                    if t.pcmFrames > 0 { w.u32(try u32(Int64(t.pcmFrames), track: ti, "the PCM frame count")); w.u32(1) }
                } else {
                    w.u32(try u32(Int64(t.stts.count), track: ti, "the stts entry count"))
                    for e in t.stts { w.u32(e.count); w.u32(e.delta) }
                }
            }
            if t.hasCompositionOffsets {
                try w.fullBox("ctts", version: t.hasNegativeOffsets ? 1 : 0, flags: 0) { w in
                    w.u32(try u32(Int64(t.ctts.count), track: ti, "the ctts entry count"))
                    for e in t.ctts { w.u32(e.count); w.i32(e.offset) }
                }
            }
            if t.pcmFrameSize == 0, t.syncSamples.count < t.sampleCount {
                try w.fullBox("stss", version: 0, flags: 0) { w in
                    w.u32(try u32(Int64(t.syncSamples.count), track: ti, "the sync sample count"))
                    for s in t.syncSamples { w.u32(s) }
                }
            }
            // stsc: runs of chunks with the same number of samples.
            var runs: [(first: UInt32, samples: UInt32)] = []
            for (i, c) in t.chunks.enumerated() where runs.last?.samples != c.samples {
                runs.append((try u32(Int64(i + 1), track: ti, "the chunk number"), c.samples))
            }
            try w.fullBox("stsc", version: 0, flags: 0) { w in
                w.u32(try u32(Int64(runs.count), track: ti, "the stsc entry count"))
                for r in runs { w.u32(r.first); w.u32(r.samples); w.u32(1) }
            }
            // A constant size of 0 would mean "a table follows": empty samples are listed.
            let constant = t.sizes.first.map { s in s > 0 && t.sizes.allSatisfy { $0 == s } } ?? false
            try w.fullBox("stsz", version: 0, flags: 0) { w in
                if t.pcmFrameSize > 0 {
                    w.u32(try u32(Int64(t.pcmFrameSize), track: ti, "the PCM frame size"))
                    w.u32(try u32(Int64(t.pcmFrames), track: ti, "the PCM frame count"))
                }
                else if constant, let s = t.sizes.first { w.u32(s); w.u32(try u32(Int64(t.sizes.count), track: ti, "the sample count")) }
                else {
                    w.u32(0); w.u32(try u32(Int64(t.sizes.count), track: ti, "the sample count"))
                    for s in t.sizes { w.u32(s) }
                }
            }
            // Chunk offsets are file positions (below 2^63) and the shift is the moov's size.
            let large = t.chunks.contains { Int64(clamping: $0.offset) + chunkShift > Int64(UInt32.max) }
            try w.fullBox(large ? "co64" : "stco", version: 0, flags: 0) { w in
                w.u32(try u32(Int64(t.chunks.count), track: ti, "the chunk count"))
                for c in t.chunks {
                    let o = try u64(Int64(clamping: c.offset) + chunkShift, track: ti, "the chunk offset")
                    if large { w.u64(o) } else { w.u32(UInt32(truncatingIfNeeded: o)) }
                }
            }
        }
    }

    /// A track's average bit rate as FFmpeg's compute_avg_bitrate gives it: its bytes x 8 per
    /// second of its media duration, rounded down (0 without duration; at most 2^32 - 1).
    static func averageBitRate(_ t: MuxTrack) -> UInt32 {
        let duration = t.totalDuration
        guard duration > 0, t.timeScale > 0 else { return 0 }
        let bytes = t.sizes.reduce(Int64(0)) { sum, size in
            let (r, overflow) = sum.addingReportingOverflow(Int64(size))
            return overflow ? .max : r
        }
        let rate = Rational.rescale(bytes, multiply: 8 * t.timeScale, divide: duration, rounding: .down)
        return UInt32(clamping: rate)
    }

    /// A movie fragment: mfhd and one traf per track with samples. Returns the moof bytes;
    /// data offsets assume the mdat header (`mdatHeader` bytes) follows the moof directly
    /// and the tracks' data follow in `tracks` order.
    /// One `trun` of a fragment: samples `samples` of the pending samples of track `track`,
    /// whose `bytes` bytes start `dataOffset` bytes into the `mdat` payload.
    struct FragmentRun {
        var track: Int
        var samples: Range<Int>
        var bytes: Int
        var dataOffset: Int
    }

    /// A `moof` with one `traf` per track that has pending samples and one `trun` per run
    /// (runs of a track in sample order; the data of all runs in the order of `runs`).
    /// - Throws: `.limit` when a value does not fit its field (a data offset beyond 2^31).
    static func moof(sequence: UInt32, tracks: [MuxTrack], runs: [FragmentRun], mdatHeader: Int) throws -> [UInt8] {
        var w = BoxWriter(capacity: 1024)
        var dataOffsetFields: [(field: Int, dataOffset: Int, track: Int)] = []
        try w.box("moof") { w in
            w.fullBox("mfhd", version: 0, flags: 0) { $0.u32(sequence) }
            for (ti, t) in tracks.enumerated() where !t.pending.isEmpty {
                try w.box("traf") { w in
                    let id = try u32(Int64(t.id), track: ti, "the track ID")
                    w.fullBox("tfhd", version: 0, flags: 0x02_0000) { $0.u32(id) }
                    let base = t.pending[0].dts - t.origin
                    w.fullBox("tfdt", version: 1, flags: 0) { $0.u64(UInt64(bitPattern: base)) }
                    let withOffsets = t.pending.contains { $0.compositionOffset != 0 }
                    let negative = t.pending.contains { $0.compositionOffset < 0 }
                    let flags: UInt32 = 0x001 | 0x100 | 0x200 | 0x400 | (withOffsets ? 0x800 : 0)
                    for run in runs where run.track == ti {
                        try w.fullBox("trun", version: negative ? 1 : 0, flags: flags) { w in
                            w.u32(try u32(Int64(run.samples.count), track: ti, "the trun sample count"))
                            dataOffsetFields.append((w.count, run.dataOffset, ti))
                            w.i32(0)
                            for s in t.pending[run.samples] {
                                // MP4Muxer.append keeps durations and sizes within 32 bits.
                                w.u32(try u32(s.duration, track: ti, "the sample duration"))
                                w.u32(try u32(Int64(s.size), track: ti, "the sample size"))
                                w.u32(s.isKey ? 0x0200_0000 : 0x0101_0000)
                                if withOffsets {
                                    guard let o = Int32(exactly: s.compositionOffset) else {
                                        throw MediaError(.limit, "track \(ti): the composition offset \(s.compositionOffset) does not fit trun's 32-bit field")
                                    }
                                    w.i32(o)
                                }
                            }
                        }
                    }
                }
            }
        }
        let payload = w.count + mdatHeader
        for (field, dataOffset, ti) in dataOffsetFields {
            // trun's data_offset is signed 32-bit.
            guard let o = Int32(exactly: payload + dataOffset) else {
                throw MediaError(.limit, "track \(ti): a fragment's data offset \(payload + dataOffset) does not fit trun's 32-bit field")
            }
            w.patchU32(UInt32(bitPattern: o), at: field)
        }
        return w.bytes
    }

    /// `mfra`: one `tfra` per track listing the fragments (time, moof offset), then `mfro`.
    static func mfra(tracks: [MuxTrack], fragments: [(offset: Int64, times: [Int: Int64])]) throws -> [UInt8] {
        var w = BoxWriter()
        try w.box("mfra") { w in
            for t in tracks {
                let ti = t.id - 1
                let entries = fragments.compactMap { f in f.times[t.id].map { (time: $0, offset: f.offset) } }
                try w.fullBox("tfra", version: 1, flags: 0) { w in
                    w.u32(try u32(Int64(t.id), track: ti, "the track ID")); w.u32(0)   // 1-byte traf/trun/sample numbers
                    w.u32(try u32(Int64(entries.count), track: ti, "the tfra entry count"))
                    for e in entries {
                        w.u64(UInt64(bitPattern: e.time)); w.u64(try u64(e.offset, track: ti, "the moof offset")); w.u8(1); w.u8(1); w.u8(1)
                    }
                }
            }
            let size = try u32(Int64(w.count + 16), track: 0, "the mfra size")
            w.fullBox("mfro", version: 0, flags: 0) { $0.u32(size) }
        }
        return w.bytes
    }
}

extension MovieWriter {
    /// A `udta` box holding iTunes' gapless tag as iTunes writes it: `meta` > `hdlr` (mdir) >
    /// `ilst` > `----` (mean "com.apple.iTunes", name "iTunSMPB", data " 00000000 DELAY PADDING
    /// SAMPLES" then eight zero fields, hexadecimal).
    static func iTunSMPB(delay: Int, padding: Int, samples: Int64) -> [UInt8] {
        MP4MetadataWriter.userData(items: iTunSMPBItem(delay: delay, padding: padding, samples: samples))
    }

    /// The `----` item of ``iTunSMPB(delay:padding:samples:)``.
    static func iTunSMPBItem(delay: Int, padding: Int, samples: Int64) -> [UInt8] {
        func hex(_ v: Int64, _ width: Int) -> String {
            let s = String(v, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let value = " " + ([hex(0, 8), hex(Int64(delay), 8), hex(Int64(padding), 8), hex(samples, 16)]
                           + Array(repeating: hex(0, 8), count: 8)).joined(separator: " ")
        var w = BoxWriter()
        w.box("----") { w in
            w.fullBox("mean", version: 0, flags: 0) { $0.append(Array("com.apple.iTunes".utf8)) }
            w.fullBox("name", version: 0, flags: 0) { $0.append(Array("iTunSMPB".utf8)) }
            w.box("data") { w in w.u32(1); w.u32(0); w.append(Array(value.utf8)) }
        }
        return w.bytes
    }
}
