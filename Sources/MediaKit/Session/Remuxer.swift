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
    ///   - progress: called after each sample with (samples written, samples in all); an error it
    ///     throws stops the remux (nothing is left under `output`) and is rethrown.
    /// - Throws: ``MediaError``: the demuxer's, `.invalidArgument` for a track that does not
    ///   exist, `.unsupported` for an encrypted track, `.io` for a write failure (the
    ///   target is then left untouched).
    public static func remux(input: String, output: String, layout: MP4Muxer.Layout = .progressive,
                             tracks: [Int]? = nil, progress: ((Int, Int) throws -> Void)? = nil) throws {
        let catalog = ContainerCatalog.shared
        let target = try catalog.requireMuxerFormat(forPath: output)
        let (format, opened) = try catalog.open(ByteSources.open(path: input))
        if target.name == "matroska" || target.name == "webm" {
            try remuxToMatroska(opened, input: input, output: output, webM: target.name == "webm", tracks: tracks, progress: progress)
            return
        }
        if target.name == "ogg" {
            try remuxToOgg(opened, input: input, output: output, tracks: tracks, progress: progress)
            return
        }
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
                try progress?(done, total)
            }
        }
    }

    /// Codecs an MP4 carries from the containers that are not MP4 (MP3, ADTS AAC, FLAC, WAV
    /// PCM, Matroska / WebM, Ogg, IVF).
    static let packetCodecs: Set<CodecID> = ["mp3", "aac", "flac", "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le", "pcm_f64le",
                                            "pcm_u8", "pcm_alaw", "pcm_mulaw", "h264", "hevc", "av1", "vp9", "opus", "ac3"]

    /// Why a codec is refused in MP4 when there is more to say than "not supported".
    static let refusedInMP4: [CodecID: String] = [
        "vorbis": "Vorbis in MP4 is not standard (no registered sample entry; players do not read it)",
        "vp8": "VP8 in MP4 is not standard (no registered sample entry; players do not read it)",
    ]

    /// Packets and bytes read ahead (held in memory) to find the frames a sample entry is
    /// built from (VP9, AC-3).
    static let lookAheadLimit = 4096, lookAheadBytes = 64 << 20

    /// Remuxes a demuxer that is not MP4 packet by packet (the bytes go through memory): ADTS
    /// frames lose their header (the AudioSpecificConfig goes into the sample entry, as FFmpeg's
    /// aac_adtstoasc does); a packet cut short by the end of the file is left out. VP9's vpcC
    /// and AC-3's dac3 come from the CodecPrivate or the track's first frame (read ahead);
    /// Opus is retimed in 48 kHz samples with its pre-skip and end trim as the edit list;
    /// unknown decoding timestamps are filled in (``PacketRetimer``).
    static func remuxPackets(_ demuxer: Demuxer, format: ContainerFormat, input: String, output: String, layout: MP4Muxer.Layout,
                             tracks: [Int]?, progress: ((Int, Int) throws -> Void)?) throws {
        let all = demuxer.tracks
        let wanted = tracks ?? all.map(\.index)
        for t in wanted where t < 0 || t >= all.count {
            throw MediaError(.invalidArgument, "track \(t) does not exist (the file has \(all.count))", path: input)
        }
        for t in wanted where !packetCodecs.contains(all[t].parameters.codec) {
            let codec = all[t].parameters.codec
            let why = refusedInMP4[codec].map { ": " + $0 }
                ?? ": MediaKit copies \(packetCodecs.sorted().map(\.rawValue).joined(separator: ", ")) from it"
            throw MediaError(.unsupported, "remuxing \(codec) (track \(t)) from \(format.description) into MP4 is not supported\(why)",
                             path: input)
        }
        for t in wanted where ["h264", "hevc"].contains(all[t].parameters.codec) && all[t].parameters.extradata.isEmpty {
            let codec = all[t].parameters.codec
            let box = codec == "h264" ? "avcC" : codec == "hevc" ? "hvcC" : "av1C"
            throw MediaError(.unsupported, "remuxing \(codec) (track \(t)) from \(format.description) into MP4 is not supported: the source stores no \(box) configuration and MediaKit does not build one from the bitstream",
                             path: input)
        }
        // The first frame of the tracks whose sample entry is built from it.
        let needFrame = Set(wanted.filter {
            ["vp9", "ac3"].contains(all[$0].parameters.codec) || (all[$0].parameters.codec == "av1" && all[$0].parameters.extradata.isEmpty)
        })
        demuxer.select(tracks: Set(wanted))
        var ahead: [Packet] = []
        var firstFrame: [Int: [UInt8]] = [:]
        var cut: MediaError?
        var aheadBytes = 0
        while firstFrame.count < needFrame.count {
            guard ahead.count < lookAheadLimit, aheadBytes < lookAheadBytes, let packet = try demuxer.read(untilCut: &cut) else {
                let missing = needFrame.subtracting(firstFrame.keys).sorted()
                throw MediaError(.invalidArgument, "track \(missing.map(String.init).joined(separator: ", ")) (\(missing.map { all[$0].parameters.codec.rawValue }.joined(separator: ", "))) has no frame in the first \(ahead.count) packets (\(aheadBytes) bytes) of the file to build the MP4 sample entry from",
                                 path: input)
            }
            aheadBytes += packet.data.count
            ahead.append(packet)
            if needFrame.contains(packet.trackIndex), firstFrame[packet.trackIndex] == nil, !packet.isTruncated {
                firstFrame[packet.trackIndex] = packet.data
            }
        }
        // Gapless: an encoder delay and padding (MP3's LAME tag) become an edit list, as FFmpeg's
        // muxer writes it, here in the track's own time scale so that it is exact to the sample.
        // A tag whose delay and padding add up to more than the track (a LAME encode of a very
        // short sound) cannot be honoured: the edit then runs from the delay to the end of the
        // media (duration 0), as `ffmpeg -c copy` writes such a file, never a negative duration.
        var kept: [Track] = []
        for i in wanted {
            var t = all[i]
            if t.editList.isEmpty && !t.trimsOnPackets && t.duration > 0 && (t.encoderDelay > 0 || t.encoderPadding > 0) {
                t.movieTimeScale = t.timeBase.denominator / max(1, t.timeBase.numerator)
                let kept = t.duration - Int64(t.encoderDelay) - Int64(t.encoderPadding)
                t.editList = [EditListEntry(segmentDuration: max(0, kept), mediaTime: Int64(t.encoderDelay), mediaRate: 1)]
            }
            switch t.parameters.codec {
            case "vp9":
                guard let vpcC = CodecConfigRecords.vpcC(t.parameters, codecPrivate: t.parameters.extradata, keyFrame: firstFrame[i],
                                                         frameRate: t.frameRate) else {
                    throw MediaError(.invalidArgument, "track \(i) (vp9): neither its CodecPrivate nor its first frame (not a key frame) states the VP9 profile for the MP4 vpcC box",
                                     path: input)
                }
                t.parameters.extradata = vpcC
            case "av1" where t.parameters.extradata.isEmpty:
                // IVF / OBU streams: the av1C from the sequence header of the first temporal unit.
                guard let av1C = firstFrame[i].flatMap({ CodecConfigRecords.av1C(temporalUnit: $0) }) else {
                    throw MediaError(.invalidArgument, "track \(i) (av1): its first temporal unit has no sequence header OBU (or one that does not parse) to build the MP4 av1C from",
                                     path: input)
                }
                t.parameters.extradata = av1C
            case "ac3":
                guard let dac3 = firstFrame[i].flatMap(CodecConfigRecords.dac3) else {
                    throw MediaError(.invalidArgument, "track \(i) (ac3): its first packet is not an AC-3 syncframe (0x0B77, bsid <= 10), so there is no dac3 for MP4",
                                     path: input)
                }
                t.parameters.extradata = dac3
            case "opus":
                // Samples at 48 kHz; the pre-skip is the edit's media time (end trim set at the end).
                t.timeBase = Rational(1, 48000)
                t.movieTimeScale = 0
                t.editList = t.encoderDelay > 0 ? [EditListEntry(segmentDuration: 0, mediaTime: Int64(t.encoderDelay), mediaRate: 1)] : []
            default: break
            }
            kept.append(t)
        }
        var options = MP4Muxer.Options()
        options.layout = layout
        let scales = Set(kept.map(\.movieTimeScale).filter { $0 > 0 })
        if scales.count == 1, let scale = scales.first { options.movieTimeScale = scale }
        try writing(MP4Muxer(path: output, options: options)) { muxer in
            var map = [Int: Int]()
            for (i, t) in zip(wanted, kept) { map[i] = try muxer.addTrack(from: t) }
            var retimer = PacketRetimer(source: all, output: Dictionary(uniqueKeysWithValues: zip(wanted, kept)))
            try copyPackets(demuxer, into: muxer, map: map, ahead: ahead, fix: { retimer.fix(&$0) }, progress: progress)
            for (i, t) in zip(wanted, kept) where t.parameters.codec == "opus" {
                guard let out = map[i], let edit = retimer.opusEdit(track: i, preSkip: t.encoderDelay) else { continue }
                muxer.replaceEdits(track: out, [edit], movieTimeScale: 48000)
            }
        }
    }

    /// Copies the packets of the tracks in `map` (source index -> muxer index) in file order:
    /// a packet cut short by the end of the file is left out, an ADTS frame loses its header
    /// (the AudioSpecificConfig is in the track's parameters, as FFmpeg's aac_adtstoasc does)
    /// and an AV1 temporal unit its temporal delimiter, padding, tile list and redundant frame
    /// header OBUs, which neither MP4 nor Matroska samples hold (``AV1/mp4Sample(_:)``; FFmpeg's
    /// mov and Matroska muxers drop them too).
    /// `ahead` are packets already read, written first; `retimer` fixes timestamps for MP4.
    static func copyPackets(_ demuxer: Demuxer, into muxer: Muxer, map: [Int: Int], progress: ((Int, Int) throws -> Void)?) throws {
        try copyPackets(demuxer, into: muxer, map: map, ahead: [], fix: { _ in }, progress: progress)
    }

    /// ``copyPackets(_:into:map:progress:)`` with packets already read (`ahead`, written
    /// first) and each packet's timestamps fixed by `fix` (for MP4, a ``PacketRetimer``),
    /// which sees the packet with its source track index.
    static func copyPackets(_ demuxer: Demuxer, into muxer: Muxer, map: [Int: Int], ahead: [Packet],
                            fix: (inout Packet) throws -> Void, progress: ((Int, Int) throws -> Void)?) throws {
        let all = demuxer.tracks
        if ahead.isEmpty { demuxer.select(tracks: Set(map.keys)) }
        let total = max(1, map.keys.reduce(0) { $0 + all[$1].sampleCount })
        var done = 0
        var cut: MediaError?
        var pending = ahead[...]
        while var packet = try pending.popFirst() ?? demuxer.read(untilCut: &cut) {
            guard let out = map[packet.trackIndex], !packet.isTruncated else { continue }
            if all[packet.trackIndex].parameters.codecTag == "adts", let h = ADTSHeader(packet.data) {
                packet.data.removeFirst(min(packet.data.count, h.headerSize))
            }
            if all[packet.trackIndex].parameters.codec == "av1" { packet.data = AV1.mp4Sample(packet.data) }
            try fix(&packet)
            packet.trackIndex = out
            try muxer.write(packet)
            done += 1
            try progress?(done, total)
        }
    }

    /// Remuxes any demuxer into Matroska / WebM packet by packet (``MatroskaMuxer``, see
    /// ``copyPackets(_:into:map:progress:)``).
    static func remuxToMatroska(_ demuxer: Demuxer, input: String, output: String, webM: Bool, tracks: [Int]?,
                                progress: ((Int, Int) throws -> Void)?) throws {
        let all = demuxer.tracks
        let wanted = tracks ?? all.map(\.index)
        for t in wanted where t < 0 || t >= all.count {
            throw MediaError(.invalidArgument, "track \(t) does not exist (the file has \(all.count))", path: input)
        }
        let muxer = try MatroskaMuxer(path: output, webM: webM)
        do {
            var map = [Int: Int]()
            for t in wanted { map[t] = try muxer.addTrack(all[t].parameters, timeBase: all[t].timeBase) }
            try copyPackets(demuxer, into: muxer, map: map, progress: progress)
            try muxer.finish()
        } catch {
            muxer.cancel()
            throw error
        }
    }

    /// Remuxes any demuxer's Opus, Vorbis and FLAC tracks into Ogg packet by packet
    /// (``OggMuxer``, see ``copyPackets(_:into:map:progress:)``). Ogg and Matroska state their
    /// start and end cuts on the packets (``Track/trimsOnPackets``) and are copied as they
    /// are; an MP4 Opus track's edit list becomes them: its media time is the pre-skip
    /// (written into the OpusHead when it differs from the stated one), the packets are
    /// moved back by it (FFmpeg's timestamps), and the samples after the edit's end are
    /// the last packet's end trim, so the Ogg file decodes to what the edit list presents.
    static func remuxToOgg(_ demuxer: Demuxer, input: String, output: String, tracks: [Int]?,
                           progress: ((Int, Int) throws -> Void)?) throws {
        let all = demuxer.tracks
        let wanted = tracks ?? all.map(\.index)
        for t in wanted where t < 0 || t >= all.count {
            throw MediaError(.invalidArgument, "track \(t) does not exist (the file has \(all.count))", path: input)
        }
        let muxer = try OggMuxer(path: output)
        do {
            var map = [Int: Int]()
            /// MP4 Opus: (samples the packets move back, the presented end in 48 kHz samples or nil).
            var edits = [Int: (shift: Int64, end: Int64?)]()
            for t in wanted {
                var track = all[t]
                if let edit = mp4OpusEdit(track) {
                    guard edit.shift <= Int64(UInt16.max) else {
                        throw MediaError(.unsupported, "track \(t) (opus): its edit list starts \(edit.shift) samples into the media, more than an Ogg Opus pre-skip holds (65535)",
                                         path: input)
                    }
                    edits[t] = edit
                    if case .success(let head) = OpusHead.parse(track.parameters.extradata), head.preSkip != Int(edit.shift) {
                        track.parameters.extradata = OpusHead.replacingPreSkip(track.parameters.extradata, with: Int(edit.shift))
                    }
                }
                map[t] = try muxer.addTrack(from: track)
            }
            var written = [Int: (packets: Int, samples: Int64)]()
            try copyPackets(demuxer, into: muxer, map: map, ahead: [], fix: { packet in
                guard let edit = edits[packet.trackIndex] else { return }
                let t = packet.trackIndex
                var w = written[t] ?? (0, 0)
                w.packets += 1
                w.samples += Int64(OpusHead.packetDuration(packet.data[...]) ?? 0)
                written[t] = w
                if packet.pts != Packet.noTimestamp {
                    packet.pts -= Rational.rescale(edit.shift, from: Rational(1, 48000), to: packet.timeBase)
                }
                packet.dts = packet.pts
                if w.packets == all[t].sampleCount, let end = edit.end, w.samples > end {
                    packet.trimEnd = Int(w.samples - end)
                }
            }, progress: progress)
            try muxer.finish()
        } catch {
            muxer.cancel()
            throw error
        }
    }

    /// The cuts of an MP4 Opus track's edit list (``PresentationWindow``, the one reading of
    /// edit lists) in 48 kHz samples: the first presented sample (the pre-skip) and the end,
    /// nil when the edit runs to the media's end. Nil for a track without an edit list or
    /// whose cuts are on its packets.
    static func mp4OpusEdit(_ track: Track) -> (shift: Int64, end: Int64?)? {
        guard track.parameters.codec == "opus", !track.trimsOnPackets, !track.editList.isEmpty else { return nil }
        let window = PresentationWindow(track: track)
        guard window != .everything, window.start >= 0 else { return nil }
        let samples = Rational(1, 48000)
        return (Rational.rescale(window.start, from: track.timeBase, to: samples),
                window.end.map { Rational.rescale($0, from: track.timeBase, to: samples) })
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
