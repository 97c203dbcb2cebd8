/// One sample of a track, with its place in the file and its timestamps.
struct SampleEntry {
    var offset: Int64
    var dts: Int64
    var pts: Int64
    var duration: Int64
    var size: UInt32
    var isKey: Bool
}

/// Expands a track's compact sample tables into one entry per sample.
///
/// Timestamps follow the sample tables as stored (no edit list applied), the
/// way FFmpeg's mov demuxer exposes them with `-ignore_editlist 1`: dts starts
/// at 0 (or at minus the largest negative composition offset, so that pts >= dts
/// holds), pts = dts + shift + composition offset.
enum SampleIndexBuilder {
    static func build(_ t: SampleTables, trackPath: String, file: String) throws -> [SampleEntry] {
        let total = t.constantSize == 0 ? t.sizes.count : t.sampleCount
        if total == 0 || t.chunkOffsets.isEmpty || t.stsc.isEmpty { return [] }
        if t.stts.isEmpty {
            throw MediaError(.invalidData, "the track has \(total) samples but no stts entries", path: file, context: trackPath + "/mdia/minf/stbl/stts")
        }
        // Composition offsets: the shift that keeps pts >= dts. As FFmpeg does, the
        // last two ctts entries are not considered (encoders often end on a negative run).
        var shift: Int64 = 0
        for (i, e) in t.ctts.enumerated() where e.offset < 0 && i + 2 < t.ctts.count {
            shift = max(shift, -Int64(e.offset))
        }
        var samples: [SampleEntry] = []
        samples.reserveCapacity(min(total, MP4Limits.maxTableEntries))
        var sampleIndex = 0
        var stscIndex = 0
        var sttsIndex = 0, sttsUsed: UInt32 = 0
        var cttsIndex = 0, cttsUsed: UInt32 = 0
        var syncIndex = 0, partialIndex = 0
        var dts: Int64 = -shift
        // An stss whose first entry is 0 numbers samples from 0 (FFmpeg accepts this writer bug).
        let syncBase: UInt32 = (t.syncSamples?.first == 0) ? 0 : 1
        let sync = t.syncSamples
        chunks: for chunk in 0..<t.chunkOffsets.count {
            while stscIndex + 1 < t.stsc.count && UInt32(chunk + 1) >= t.stsc[stscIndex + 1].firstChunk { stscIndex += 1 }
            let perChunk = Int(t.stsc[stscIndex].samplesPerChunk)
            var offset = Int64(bitPattern: t.chunkOffsets[chunk])
            for _ in 0..<perChunk {
                if sampleIndex >= total { break chunks }
                let size = t.constantSize != 0 ? t.constantSize : t.sizes[sampleIndex]
                let delta = Int64(t.stts[sttsIndex].delta)
                var pts = dts
                if cttsIndex < t.ctts.count {
                    pts = dts + shift + Int64(t.ctts[cttsIndex].offset)
                    cttsUsed += 1
                    if cttsUsed >= t.ctts[cttsIndex].count { cttsIndex += 1; cttsUsed = 0 }
                }
                var key = true
                if let sync {
                    let n = UInt32(sampleIndex) + syncBase
                    while syncIndex < sync.count && sync[syncIndex] < n { syncIndex += 1 }
                    while partialIndex < t.partialSyncSamples.count && t.partialSyncSamples[partialIndex] < n { partialIndex += 1 }
                    key = (syncIndex < sync.count && sync[syncIndex] == n)
                        || (partialIndex < t.partialSyncSamples.count && t.partialSyncSamples[partialIndex] == n)
                }
                samples.append(SampleEntry(offset: offset, dts: dts, pts: pts, duration: delta, size: size, isKey: key))
                offset &+= Int64(size)
                dts &+= delta
                sampleIndex += 1
                sttsUsed += 1
                if sttsIndex + 1 < t.stts.count && sttsUsed >= t.stts[sttsIndex].count { sttsIndex += 1; sttsUsed = 0 }
            }
        }
        return samples
    }

    /// Frames a decoder must hold back to output in presentation order: the largest
    /// distance between a sample's decode position and its presentation rank.
    static func reorderDepth(_ samples: [SampleEntry]) -> Int {
        guard samples.contains(where: { $0.pts != $0.dts }) else { return 0 }
        let order = samples.indices.sorted { (samples[$0].pts, $0) < (samples[$1].pts, $1) }
        var depth = 0
        for (rank, index) in order.enumerated() { depth = max(depth, index - rank) }
        return min(depth, 16)
    }
}
