/// Indexes the samples of movie fragments (`moof`): tfhd (every flag, including
/// default-base-is-moof and an explicit base data offset), tfdt, trun (every optional
/// field, several per traf), and the `trex` defaults of the `moov`.
///
/// Decode times follow tfdt when present, else continue from the track's previous
/// samples, as FFmpeg does; composition offsets are added as stored.
struct FragmentIndexer {
    let file: String
    let trex: [Int: (UInt32, UInt32, UInt32, UInt32)]
    /// Track index by track_ID.
    let trackIndex: [Int: Int]
    let isAudio: [Bool]
    /// Next decode time of each track (end of what is indexed so far).
    var nextDts: [Int64]
    /// Samples each track had from the moov's own tables, before any fragment.
    let moovCounts: [Int]
    /// The source's size (`Int64.max` when not known): a trun without a per-sample table
    /// costs no bytes per sample in the box, so its count is bounded by the file instead.
    let fileSize: Int64

    /// Appends the samples of one `moof` (its bytes, at file offset `moofOffset`).
    mutating func index(moof bytes: [UInt8], at moofOffset: Int64, into samples: inout [[IndexedSample]]) throws {
        let header = be32(bytes, 0) == 1 ? 16 : 8
        var r = BoxReader(bytes: bytes, base: moofOffset, start: header, end: bytes.count, path: "moof@\(moofOffset)", file: file)
        var implicitOffset = moofOffset     // where a traf without base offset starts
        try r.children { type, traf in
            guard type == "traf" else { return }
            var track: Int?
            var base = implicitOffset
            var defaultDuration: UInt32 = 0, defaultSize: UInt32 = 0, defaultFlags: UInt32 = 0
            var tfdt: Int64?
            var dataEnd = base
            var sawTfhd = false
            try traf.children { t, b in
                switch t {
                case "tfhd":
                    let (_, flags) = try b.fullBoxHeader()
                    let id = Int(try b.u32())
                    sawTfhd = true
                    track = trackIndex[id]
                    let defaults = trex[id] ?? (1, 0, 0, 0)
                    defaultDuration = defaults.1; defaultSize = defaults.2; defaultFlags = defaults.3
                    if flags & 0x1 != 0 { base = Int64(bitPattern: try b.u64()) }
                    else if flags & 0x2_0000 != 0 { base = moofOffset }
                    else { base = implicitOffset }
                    if flags & 0x2 != 0 { _ = try b.u32() }
                    if flags & 0x8 != 0 { defaultDuration = try b.u32() }
                    if flags & 0x10 != 0 { defaultSize = try b.u32() }
                    if flags & 0x20 != 0 { defaultFlags = try b.u32() }
                    dataEnd = base
                case "tfdt":
                    let (v, _) = try b.fullBoxHeader()
                    tfdt = v == 1 ? Int64(bitPattern: try b.u64()) : Int64(try b.u32())
                    if let ti = track, let d = tfdt { nextDts[ti] = d }
                case "trun":
                    guard sawTfhd else { throw b.error(.invalidData, "trun before tfhd in a traf") }
                    guard let ti = track else { return }   // a track the moov does not declare
                    let (version, flags) = try b.fullBoxHeader()
                    var count = try b.u32()
                    var perSample = 0
                    for bit: UInt32 in [0x100, 0x200, 0x400, 0x800] where flags & bit != 0 { perSample += 4 }
                    _ = try b.checkTable(count: UInt64(count) + UInt64(samples[ti].count), entrySize: 0, "trun (with the samples before it)")   // throws above the limit
                    var offset = dataEnd
                    if flags & 0x1 != 0 { offset = base + Int64(try b.i32()) }
                    var firstFlags: UInt32?
                    if flags & 0x4 != 0 { firstFlags = try b.u32() }
                    if Int(count) * perSample > b.remaining {
                        throw b.error(.invalidData, "trun declares \(count) samples of \(perSample) bytes, the box has \(b.remaining) left")
                    }
                    if perSample == 0 {
                        // Every sample has the default size, one after the other from `offset`: the
                        // ones that would start past the end of the file are not in it (a file cut
                        // short: the sample at the cut is read partial, then the cut is reported).
                        // Empty samples: no more than the file has bytes. A source whose size is not
                        // known (a stream) cannot bound them so: a hard limit does.
                        if fileSize == .max && count > MP4Limits.maxUncountedRunSamples {
                            throw b.error(.limit, "trun declares \(count) samples without a sample table, above the limit of \(MP4Limits.maxUncountedRunSamples) for a source whose size is not known (a stream)")
                        }
                        let left = fileSize - max(0, offset)
                        let fit = defaultSize == 0 ? fileSize : left <= 0 ? 1 : left / Int64(defaultSize) + 1
                        if Int64(count) > fit {
                            if defaultSize == 0 {
                                throw b.error(.invalidData, "trun declares \(count) empty samples, more than the file's \(fileSize) bytes")
                            }
                            count = UInt32(fit)
                        }
                    }
                    samples[ti].reserveCapacity(samples[ti].count + Int(count))
                    var dts = nextDts[ti]
                    for i in 0..<Int(count) {
                        let duration = flags & 0x100 != 0 ? try b.u32() : defaultDuration
                        let size = flags & 0x200 != 0 ? try b.u32() : defaultSize
                        var sampleFlags = flags & 0x400 != 0 ? try b.u32() : defaultFlags
                        if i == 0, let f = firstFlags { sampleFlags = f }
                        var cto: Int64 = 0
                        if flags & 0x800 != 0 {
                            let raw = try b.u32()
                            cto = version == 0 ? Int64(raw) : Int64(Int32(bitPattern: raw))
                        }
                        let key = isAudio[ti] || sampleFlags & 0x0101_0000 == 0
                        samples[ti].append(IndexedSample(offset: offset, dts: dts, pts: dts + cto, duration: Int64(duration), size: size, isKey: key))
                        offset &+= Int64(size)
                        dts &+= Int64(duration)
                    }
                    nextDts[ti] = dts
                    dataEnd = offset
                    implicitOffset = offset
                default: break
                }
            }
        }
    }
}
