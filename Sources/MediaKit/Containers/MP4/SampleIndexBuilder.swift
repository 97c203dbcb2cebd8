/// One sample of a track, with its place in the file and its timestamps.
struct IndexedSample {
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
///
/// Uncompressed audio whose stts is one entry of duration 1 (one table sample per PCM
/// frame: sowt, twos, lpcm, in24, fl32, ulaw, ima4 ...) is the exception: its chunks are
/// cut into packets of about 1024 frames, as FFmpeg does (see ``groupedAudio``), so the
/// index holds one entry per packet, not per frame.
enum SampleIndexBuilder {
    /// - Parameters:
    ///   - audio: the sound description's framing for an audio track, nil for other tracks.
    ///   - mediaDuration: mdhd's duration (the last grouped audio packet ends there when it
    ///     is shorter than the stts).
    ///   - fileSize: the source's size (`Int64.max` when not known). Tables that cost no bytes
    ///     per sample (stsz with one size for all, PCM chunks) are indexed up to one entry per
    ///     byte of the file: a file cannot hold more, and the entries past the end of a file cut
    ///     short are past the cut anyway. So a few bytes never claim gigabytes of index.
    static func build(_ t: SampleTables, trackPath: String, file: String,
                      audio: AudioFraming? = nil, mediaDuration: Int64 = 0, fileSize: Int64 = .max) throws -> [IndexedSample] {
        if let audio, t.stts.count == 1, t.stts[0].delta == 1 {
            return try groupedAudio(t, framing: audio, mediaDuration: mediaDuration, file: file, fileSize: fileSize)
        }
        let declared = t.constantSize == 0 ? t.sizes.count : t.sampleCount
        if declared == 0 || t.chunkOffsets.isEmpty || t.stsc.isEmpty { return [] }
        if declared > MP4Limits.maxTableEntries {
            throw MediaError(.limit, "stsz declares \(declared) samples, above the limit of \(MP4Limits.maxTableEntries)",
                             path: file, offset: t.stszLocation.offset, context: t.stszLocation.path)
        }
        let total = min(declared, Int(clamping: fileSize))
        if t.stts.isEmpty {
            throw MediaError(.invalidData, "the track has \(total) samples but no stts entries", path: file, context: trackPath + "/mdia/minf/stbl/stts")
        }
        // Composition offsets: the shift that keeps pts >= dts. As FFmpeg does, the
        // last two ctts entries are not considered (encoders often end on a negative run).
        var shift: Int64 = 0
        for (i, e) in t.ctts.enumerated() where e.offset < 0 && i + 2 < t.ctts.count {
            shift = max(shift, -Int64(e.offset))
        }
        var samples: [IndexedSample] = []
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
                samples.append(IndexedSample(offset: offset, dts: dts, pts: pts, duration: delta, size: size, isKey: key))
                offset &+= Int64(size)
                dts &+= delta
                sampleIndex += 1
                sttsUsed += 1
                if sttsIndex + 1 < t.stts.count && sttsUsed >= t.stts[sttsIndex].count { sttsIndex += 1; sttsUsed = 0 }
            }
        }
        return samples
    }

    /// The packets of an audio track whose stts counts PCM frames (one entry, duration 1),
    /// as FFmpeg's mov demuxer cuts them: each chunk, in order, into packets of
    /// - `samplesPerFrame` frames and `bytesPerFrame` bytes when samplesPerFrame >= 160 (GSM);
    /// - the most whole compressed frames that fit 1024 PCM frames (at most what is left of
    ///   the chunk), `bytesPerFrame` bytes each, when samplesPerFrame > 1 (ima4, MACE);
    /// - else min(1024, frames left in the chunk) frames of `sampleSize` bytes (the codec's
    ///   bytes per PCM frame, or stsz's constant size when the codec implies none).
    /// Every packet is a key frame; dts = pts counts PCM frames from 0. The frame count is
    /// the chunk table's (stsc x chunks); stsz's count is not used. A packet lasts its frame
    /// count, the last one until the end of the track (mdhd or stts, the shorter).
    static func groupedAudio(_ t: SampleTables, framing f: AudioFraming, mediaDuration: Int64, file: String,
                             fileSize: Int64 = .max) throws -> [IndexedSample] {
        if t.chunkOffsets.isEmpty || t.stsc.isEmpty { return [] }
        let spf = f.samplesPerFrame, bpf = f.bytesPerFrame
        if spf > 1 && bpf <= 0 {
            throw MediaError(.invalidData, "the sound description states \(spf) samples per frame but \(bpf) bytes per frame",
                             path: file, offset: f.entryOffset, context: f.entryPath)
        }
        let frameSize = Int64(f.sampleSize > 0 ? f.sampleSize : Int(t.constantSize))
        func stscError(_ message: String) -> MediaError {
            MediaError(.invalidData, message, path: file, offset: t.stscLocation.offset, context: t.stscLocation.path)
        }
        // Packets in all: checked against the limit before anything is allocated.
        let packetFrames = spf >= 160 ? spf : spf > 1 ? (1024 / spf) * spf : 1024
        var packets = 0
        for (i, e) in t.stsc.enumerated() {
            let first = Int(e.firstChunk)
            let next = i + 1 < t.stsc.count ? Int(t.stsc[i + 1].firstChunk) : t.chunkOffsets.count + 1
            guard first >= 1, next > first else {
                throw stscError("stsc entry \(i) starts at chunk \(first), not after the previous entry's (and not before chunk 1)")
            }
            let frames = Int(e.samplesPerChunk)
            if spf > 1 && frames % spf != 0 && (i + 1 < t.stsc.count || spf >= 160) {
                throw stscError("stsc entry \(i) puts \(frames) PCM frames in a chunk, not a whole number of \(spf)-frame packets")
            }
            // Chunks before the first entry's first chunk are built with that entry's frame
            // count (below), so they count here too: otherwise a first entry that names the last
            // chunk lets every earlier one through unchecked.
            let counted = i == 0 ? 1 : first
            let chunks = max(0, min(next, t.chunkOffsets.count + 1) - counted)
            packets += chunks * ((frames + packetFrames - 1) / packetFrames)
            if packets > MP4Limits.maxTableEntries {
                throw MediaError(.limit, "the chunk table holds more than \(MP4Limits.maxTableEntries) audio packets",
                                 path: file, offset: t.stscLocation.offset, context: t.stscLocation.path)
            }
        }
        var samples: [IndexedSample] = []
        let most = min(packets, Int(clamping: fileSize))     // see build(_:...:fileSize:)
        samples.reserveCapacity(most)
        var stscIndex = 0
        var dts: Int64 = 0
        chunks: for chunk in 0..<t.chunkOffsets.count {
            while stscIndex + 1 < t.stsc.count && UInt32(chunk + 1) >= t.stsc[stscIndex + 1].firstChunk { stscIndex += 1 }
            var left = Int(t.stsc[stscIndex].samplesPerChunk)
            var offset = Int64(bitPattern: t.chunkOffsets[chunk])
            while left > 0 {
                if samples.count >= most { break chunks }
                let frames: Int, size: Int64
                if spf >= 160 {
                    frames = spf; size = Int64(bpf)
                } else if spf > 1 {
                    frames = min(packetFrames, left); size = Int64(frames / spf) * Int64(bpf)
                } else {
                    frames = min(1024, left); size = Int64(frames) * frameSize
                }
                if size > 0x3FFF_FFFF {
                    throw stscError("an audio packet of \(frames) frames would be \(size) bytes")
                }
                samples.append(IndexedSample(offset: offset, dts: dts, pts: dts, duration: Int64(frames), size: UInt32(size), isKey: true))
                offset &+= size
                dts += Int64(frames)
                left -= frames
            }
        }
        // The last packet lasts until the track's end: FFmpeg's stream duration, the smaller
        // of mdhd's and the stts's (nothing when the packet starts after it).
        if let last = samples.indices.last {
            let sttsFrames = Int64(t.stts[0].count)
            let end = sttsFrames == 0 ? mediaDuration : mediaDuration > 0 ? min(mediaDuration, sttsFrames) : sttsFrames
            samples[last].duration = max(0, end - samples[last].dts)
        }
        return samples
    }

    /// Frames a decoder must hold back to output in presentation order: the largest
    /// distance between a sample's decode position and its presentation rank.
    static func reorderDepth(_ samples: [IndexedSample]) -> Int {
        guard samples.contains(where: { $0.pts != $0.dts }) else { return 0 }
        let order = samples.indices.sorted { (samples[$0].pts, $0) < (samples[$1].pts, $1) }
        var depth = 0
        for (rank, index) in order.enumerated() { depth = max(depth, index - rank) }
        return min(depth, 16)
    }
}
