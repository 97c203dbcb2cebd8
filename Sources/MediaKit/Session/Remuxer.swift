import Foundation

/// Copies the compressed samples of an MP4 / MOV file into a new MP4 without decoding:
/// the pipeline of `mk-remux`, of the C function `mk_remux` and of Python's `mediakit.remux`.
///
/// Sample data goes from file to file in the kernel; track facts (language, rotation,
/// edit lists, sample entries MediaKit does not know), track references and the movie's
/// user data are carried over. The output is written as ``MP4Muxer`` describes
/// (a temporary file renamed at the end, or a visible `.partial` file for fragmented layouts).
public enum Remuxer {
    /// Remuxes `input` to `output`.
    /// - Parameters:
    ///   - layout: progressive (default), fast-start, fragmented or hybrid.
    ///   - tracks: the track indexes to keep, in order; nil keeps every track.
    ///   - progress: called after each sample with (samples written, samples in all).
    /// - Throws: ``MediaError``: the demuxer's, `.invalidArgument` for a track that does not
    ///   exist, `.unsupported` for an encrypted track, `.io` for a write failure (the
    ///   target is then left untouched).
    public static func remux(input: String, output: String, layout: MP4Muxer.Layout = .progressive,
                             tracks: [Int]? = nil, progress: ((Int, Int) -> Void)? = nil) throws {
        let catalog = ContainerCatalog.shared
        guard let target = catalog.muxerFormat(forPath: output) else {
            let known = catalog.muxerFormats.map { "\($0.description): .\($0.extensions.joined(separator: ", ."))" }.joined(separator: "; ")
            throw MediaError(.unsupported, "no muxer writes \((output as NSString).pathExtension.isEmpty ? "files without an extension" : "." + (output as NSString).pathExtension + " files"); MediaKit writes \(known)", path: output)
        }
        let (format, opened) = try catalog.open(ByteSources.open(path: input))
        guard target.name == "mp4" else {
            throw MediaError(.unsupported, "remuxing into \(target.description) is not supported: MediaKit writes MP4", path: output)
        }
        guard let demuxer = opened as? MP4Demuxer else {
            try remuxPackets(opened, format: format, input: input, output: output, layout: layout, tracks: tracks, progress: progress)
            return
        }
        let all = demuxer.tracks
        let wanted = tracks ?? all.map(\.index)
        for t in wanted where t < 0 || t >= all.count {
            throw MediaError(.invalidArgument, "track \(t) does not exist (the file has \(all.count))", path: input)
        }
        var options = MP4Muxer.Options()
        options.layout = layout
        if case .fastStart = layout {
            // Room for the moov before the media data, so that finish() copies nothing: the
            // source's moov and a quarter more (a fragmented source's moov has no tables:
            // 16 bytes per sample). When it does not fit, finish() copies the data once.
            let samples = wanted.reduce(0) { $0 + all[$1].sampleCount }
            options.reservedMoovBytes = 4096 + Int(demuxer.movieBoxSize) * 5 / 4 + (demuxer.isFragmented ? samples * 16 : 0)
        }
        let scales = Set(wanted.map { all[$0].movieTimeScale }.filter { $0 > 0 })
        if scales.count == 1, let s = scales.first { options.movieTimeScale = s }
        options.userData = demuxer.userData
        try writing(MP4Muxer(path: output, options: options)) { muxer in
            var map = [Int: Int]()
            for t in wanted { map[t] = try muxer.addTrack(from: all[t]) }
            for (from, refs) in demuxer.trackReferences {
                guard let f = map[from] else { continue }
                for r in refs {
                    let to = r.tracks.compactMap { map[$0] }
                    if !to.isEmpty { try muxer.addTrackReference(from: f, type: r.type, to: to) }
                }
            }
            // The whole sample table is known before the first write: fragments can then
            // store composition offsets that are never negative (see announceTimestamps).
            for t in wanted {
                guard let out = map[t] else { continue }
                let info = (0..<all[t].sampleCount).lazy.compactMap { demuxer.sampleInfo(track: t, index: $0) }
                try muxer.announceTimestamps(track: out, info.map { (pts: $0.pts, dts: $0.dts) })
            }
            demuxer.select(tracks: Set(wanted))
            let total = max(1, all.filter { map[$0.index] != nil }.reduce(0) { $0 + $1.sampleCount })
            var done = 0
            // Sample bytes go file to file in the kernel.
            guard let source = demuxer.file else {
                throw MediaError(.unsupported, "remux copies sample bytes file to file: the input must be a regular file, not a stream", path: input)
            }
            while let s = try demuxer.readReference() {
                guard let out = map[s.trackIndex] else { continue }
                try muxer.writeSample(track: out, pts: s.pts, dts: s.dts, duration: s.duration, isKeyframe: s.isKeyframe,
                                      from: source, offset: s.offset, size: s.size)
                done += 1
                progress?(done, total)
            }
        }
    }

    /// Codecs an MP4 carries from the containers that are not MP4 (MP3, ADTS AAC, FLAC, WAV PCM).
    static let packetCodecs: Set<CodecID> = ["mp3", "aac", "flac", "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le", "pcm_f64le",
                                            "pcm_u8", "pcm_alaw", "pcm_mulaw"]

    /// Remuxes a demuxer that is not MP4 packet by packet (the bytes go through memory): ADTS
    /// frames lose their header (the AudioSpecificConfig goes into the sample entry, as FFmpeg's
    /// aac_adtstoasc does); a packet cut short by the end of the file is left out.
    static func remuxPackets(_ demuxer: Demuxer, format: ContainerFormat, input: String, output: String, layout: MP4Muxer.Layout,
                             tracks: [Int]?, progress: ((Int, Int) -> Void)?) throws {
        let all = demuxer.tracks
        let wanted = tracks ?? all.map(\.index)
        for t in wanted where t < 0 || t >= all.count {
            throw MediaError(.invalidArgument, "track \(t) does not exist (the file has \(all.count))", path: input)
        }
        for t in wanted where !packetCodecs.contains(all[t].parameters.codec) {
            throw MediaError(.unsupported, "remuxing \(all[t].parameters.codec) from \(format.description) into MP4 is not supported: MediaKit copies \(packetCodecs.sorted().map(\.rawValue).joined(separator: ", ")) from it",
                             path: input)
        }
        // Gapless: an encoder delay and padding (MP3's LAME tag) become an edit list, as FFmpeg's
        // muxer writes it, here in the track's own time scale so that it is exact to the sample.
        let kept: [Track] = wanted.map { i in
            var t = all[i]
            if t.editList.isEmpty && !t.trimsOnPackets && t.duration > 0 && (t.encoderDelay > 0 || t.encoderPadding > 0) {
                t.movieTimeScale = t.timeBase.denominator / max(1, t.timeBase.numerator)
                t.editList = [EditListEntry(segmentDuration: t.duration - Int64(t.encoderDelay) - Int64(t.encoderPadding),
                                            mediaTime: Int64(t.encoderDelay), mediaRate: 1)]
            }
            return t
        }
        var options = MP4Muxer.Options()
        options.layout = layout
        let scales = Set(kept.map(\.movieTimeScale).filter { $0 > 0 })
        if scales.count == 1, let scale = scales.first { options.movieTimeScale = scale }
        try writing(MP4Muxer(path: output, options: options)) { muxer in
            var map = [Int: Int]()
            for (i, t) in zip(wanted, kept) { map[i] = try muxer.addTrack(from: t) }
            demuxer.select(tracks: Set(wanted))
            let total = max(1, wanted.reduce(0) { $0 + all[$1].sampleCount })
            var done = 0
            var cut: MediaError?
            while var packet = try demuxer.read(untilCut: &cut) {
                guard let out = map[packet.trackIndex], !packet.isTruncated else { continue }
                if all[packet.trackIndex].parameters.codecTag == "adts", let h = ADTSHeader(packet.data) {
                    packet.data.removeFirst(min(packet.data.count, h.headerSize))
                }
                packet.trackIndex = out
                try muxer.write(packet)
                done += 1
                progress?(done, total)
            }
        }
    }

    /// Runs `body` on `muxer`, then finishes the file; on any error the muxer is cancelled (the
    /// target name is left untouched) and the error rethrown.
    static func writing(_ muxer: MP4Muxer, _ body: (MP4Muxer) throws -> Void) throws {
        do {
            try body(muxer)
            try muxer.finish()
        } catch {
            muxer.cancel()
            throw error
        }
    }
}
