import Foundation

/// Copies the compressed packets of any file MediaKit reads into a new file of any format it
/// writes, without decoding: the pipeline of `mk-remux`, of the C function `mk_remux` and of
/// Python's `mediakit.remux`.
///
/// The writer comes from the catalogue by the output's extension (``ContainerCatalog``) and
/// knows its container: a muxer that copies its own kind better (``DirectCopyMuxer``: MP4 to
/// MP4, sample bytes file to file in the kernel, track facts, references and user data kept)
/// is offered the demuxer first; otherwise packets go through memory, each track added with
/// ``Muxer/addTrack(from:firstPacket:)`` (the muxer installs the conversions the track needs
/// and refuses a codec it cannot carry) and packets cut short by the end of the file left out.
/// The output is written under a temporary name renamed at the end (or a visible `.partial`
/// file for fragmented MP4): a failed remux leaves nothing under `output`.
public enum Remuxer {
    /// Remuxes `input` to `output` with the `layout` MP4 files take.
    /// - Parameters:
    ///   - layout: progressive (default), fast-start, fragmented or hybrid.
    ///   - tracks: the track indexes to keep, in order; nil keeps every audio and video track and
    ///     the subtitle and data tracks the output format carries (``tracksToCopy(_:into:)``).
    ///   - frameRate: times a raw video input (``RawVideoDemuxer``) at this rate, as ffmpeg's
    ///     `-r` before `-i`; nil (default): the stream's own rate, else 25.
    ///   - progress: called after each packet with (packets written, packets in all, or -1 when
    ///     the input does not say how many it holds: MPEG-TS, Matroska, raw streams); an error
    ///     it throws stops the remux (nothing is left under `output`) and is rethrown.
    /// - Returns: as ``remux(input:output:options:tracks:frameRate:progress:)``.
    /// - Throws: as ``remux(input:output:options:tracks:frameRate:progress:)``.
    @discardableResult
    public static func remux(input: String, output: String, layout: MuxLayout = .progressive,
                             tracks: [Int]? = nil, frameRate: Rational? = nil, progress: ((Int, Int) throws -> Void)? = nil) throws -> MediaError? {
        try remux(input: input, output: output, options: MuxerOptions(layout: layout), tracks: tracks, frameRate: frameRate, progress: progress)
    }

    /// Remuxes `input` to `output`, the muxer made with `options` (`frameRate`: as
    /// ``remux(input:output:layout:tracks:frameRate:progress:)``). The input's tags, chapters
    /// and attachments are copied into what the output holds (``Muxer/setMetadata(_:)``), as
    /// `ffmpeg -map_metadata 0 -map_chapters 0` copies them; `metadata` drops them or sets tags.
    /// An MP4 copied into MP4 keeps its user data as it is, unless `metadata` asks for a change
    /// (the packets are then copied one by one). `format` names the writer instead of the
    /// output's extension (``ContainerCatalog/muxerFormat(named:)``: "matroska", a plugin's
    /// "ffmpeg:avi" or "ffmpeg:mp4").
    /// `warning` is told, once the output is written, of the damage the demuxer read past
    /// (``Demuxer/warnings``: an MPEG-TS continuity-counter jump, lost sync, scrambled packets,
    /// a damaged page or sample table, each with where it was; `mk-probe` prints the same), and
    /// of each track the input added while it was read (an MPEG-TS PMT that adds a stream, from
    /// a pipe: ``Demuxer/tracks``), whose packets are not in the output, whose tracks were
    /// chosen at the start (ffmpeg's command line warns of such a stream too).
    /// - Returns: nil, or the `.truncated` warning of an input cut short (naming the offset of
    ///   the cut): the output is then written with every packet before the cut, as ffmpeg's
    ///   stream copy of a cut file is (a packet the cut goes through is left out, except a run
    ///   of PCM samples, which keeps its whole samples).
    /// - Throws: ``MediaError``: `.unsupported` for an output extension no muxer writes, a codec
    ///   the muxer cannot carry or an encrypted track; `.invalidArgument` for a track that does
    ///   not exist, options the format does not take, or a frame rate for an input that is not
    ///   a raw video stream; `.notFound` for a `format` no writer has; the demuxer's; `.io` for a write
    ///   failure (the target is then left untouched).
    @discardableResult
    public static func remux(input: String, output: String, options: MuxerOptions, tracks: [Int]? = nil,
                             frameRate: Rational? = nil, metadata: MetadataCopyOptions = MetadataCopyOptions(),
                             format named: String? = nil, progress: ((Int, Int) throws -> Void)? = nil,
                             warning: ((MediaError) -> Void)? = nil) throws -> MediaError? {
        let catalog = ContainerCatalog.shared
        let target = try named.map { try catalog.requireMuxerFormat(named: $0) } ?? catalog.requireMuxerFormat(forPath: output)
        let (format, demuxer) = try catalog.open(ByteSources.open(path: input))
        if let frameRate { try RawVideoDemuxer.setFrameRate(frameRate, on: demuxer, path: input) }
        let all = demuxer.tracks
        let wanted = tracks ?? tracksToCopy(all, into: target).copied
        if wanted.isEmpty {
            throw MediaError(.unsupported, "no track to copy: \(target.description) carries none of the file's \(all.count) tracks (\(all.map { "\($0.mediaType.rawValue) \($0.parameters.codec.rawValue)" }.joined(separator: ", ")))", path: input)
        }
        for t in wanted where t < 0 || t >= all.count {
            throw MediaError(.invalidArgument, "track \(t) does not exist (the file has \(all.count))", path: input)
        }
        let muxer = try target.make(path: output, options: options)
        do {
            var cut: MediaError?
            if metadata == MetadataCopyOptions(), let direct = muxer as? DirectCopyMuxer,
               try direct.copyDirectly(from: demuxer, tracks: wanted, cut: &cut, progress: progress) {
                // The samples were copied as they lie.
            } else {
                cut = try copyPackets(demuxer, from: format, tracks: wanted, into: muxer, input: input, metadata: metadata, progress: progress)
            }
            try muxer.finish()
            demuxer.warnings.forEach { warning?($0) }
            for t in demuxer.tracks.dropFirst(all.count) {
                warning?(MediaError(.unsupported, "track \(t.index) (\(t.mediaType.rawValue) \(t.parameters.codec.isUnknown ? t.parameters.codecTag : t.parameters.codec.rawValue), id \(t.id)) was added while reading, after the output's tracks were set: its packets are not in \(output)",
                                    path: input))
            }
            return cut
        } catch {
            muxer.cancel()
            throw error
        }
    }

    /// The tracks a remux copies when none are named: every audio and video track, and every
    /// subtitle and data track `target` carries (``MuxerFormat/carries(track:)``: an MP4's
    /// captions and time codes into MP4); the others (an MPEG-TS's timed ID3, an
    /// application table) are left out, as ffmpeg's default stream choice leaves them, with
    /// the reason. An audio or video track the target cannot carry stays, and the muxer's
    /// refusal names it. A text subtitle track goes into a target that holds its content in
    /// another codec (SubRip into MP4 as `tx3g`: the muxer converts it). A subtitle file
    /// (``MuxerFormat/TrackLimit/oneSubtitle``: `.srt`, `.vtt`) takes the first subtitle track
    /// it carries and nothing else.
    /// - Returns: the indexes copied, in order, and the ones left out with why.
    public static func tracksToCopy(_ tracks: [Track], into target: MuxerFormat) -> (copied: [Int], leftOut: [(track: Int, why: String)]) {
        var copied: [Int] = [], leftOut: [(track: Int, why: String)] = []
        if target.trackLimit == .oneSubtitle {
            // A subtitle file: the first subtitle track it carries (ffmpeg picks one subtitle
            // stream of a kind its encoder takes, text for SubRip and WebVTT).
            for t in tracks {
                let what = t.parameters.codec.isUnknown ? "an unknown codec" : t.parameters.codec.rawValue
                if t.isChapterTrack {
                    leftOut.append((t.index, "a chapter track (tref/chap), not subtitles"))
                } else if t.mediaType != .subtitle {
                    leftOut.append((t.index, "a \(target.description) file holds one subtitle track, not \(t.mediaType.rawValue)"))
                } else if !copied.isEmpty {
                    leftOut.append((t.index, "a \(target.description) file holds one subtitle track: track \(copied[0]) is written"))
                } else if target.carries(track: t) {
                    copied.append(t.index)
                } else {
                    leftOut.append((t.index, target.refusal(of: t.parameters.codec) ?? "\(target.description) does not carry subtitle tracks of \(what)"))
                }
            }
            return (copied, leftOut)
        }
        for t in tracks {
            if t.isChapterTrack && target.name != "mp4" {
                // FFmpeg lists it as a data stream its default choice leaves out; its chapters
                // are copied as the target's chapters.
                leftOut.append((t.index, "a chapter track (tref/chap): its chapters are written as \(target.description)'s chapters"))
                continue
            }
            if t.mediaType == .audio || t.mediaType == .video || target.carries(track: t) {
                copied.append(t.index)
            } else {
                let what = t.parameters.codec.isUnknown ? "an unknown codec" : t.parameters.codec.rawValue
                leftOut.append((t.index, "\(target.description) does not carry \(t.mediaType.rawValue) tracks of \(what)"))
            }
        }
        return (copied, leftOut)
    }

    /// Packets and bytes read ahead (held in memory) to find the first packets a muxer
    /// describes tracks from (MP4's VP9, AC-3 and AV1 sample entries).
    static let lookAheadLimit = 4096, lookAheadBytes = 64 << 20

    /// Adds `tracks` of `demuxer` to `muxer` (with their first packets where the muxer asks,
    /// read ahead) and copies their packets in file order through a ``MediaPipeline`` of
    /// ``CopyStage``s; a packet cut short by the end of the file is left out. From a format
    /// whose timestamps are a clock (``ContainerFormat/clockTimestamps``: MPEG-TS), and from
    /// one a plugin reads (libavformat's timestamps are the container's: an FLV's audio may
    /// start at 57 ms), the timestamps are moved so that the earliest first packet of the
    /// tracks starts at zero, as ffmpeg's stream copy moves them (its `start_time`, which it
    /// subtracts from every input): the first packets of every track are
    /// read ahead for it, within the look-ahead limits (a track with no packet there does not
    /// count).
    /// - Returns: the `.truncated` error of an input cut short, nil otherwise.
    /// - Throws: a muxer's refusal of a track (`.unsupported`) with the source format named.
    static func copyPackets(_ demuxer: Demuxer, from format: ContainerFormat, tracks wanted: [Int], into muxer: Muxer, input: String,
                            metadata: MetadataCopyOptions = MetadataCopyOptions(), progress: ((Int, Int) throws -> Void)?) throws -> MediaError? {
        let all = demuxer.tracks
        let needFirst = Set(wanted.filter { muxer.needsFirstPacket(all[$0]) })
        let needTime = format.clockTimestamps || format.plugin != nil ? Set(wanted) : []
        demuxer.select(tracks: Set(wanted))
        var ahead: [Packet] = []
        var firstPacket: [Int: [UInt8]] = [:]
        var firstTime: [Int: Double] = [:]
        var cut: MediaError?
        var aheadBytes = 0
        while firstPacket.count < needFirst.count || firstTime.count < needTime.count {
            let roomLeft = ahead.count < lookAheadLimit && aheadBytes < lookAheadBytes
            guard roomLeft, let packet = try demuxer.read(untilCut: &cut) else {
                guard firstPacket.count < needFirst.count else { break }   // only start times missing: the tracks seen decide
                let missing = needFirst.subtracting(firstPacket.keys).sorted()
                throw MediaError(.invalidArgument, "track \(missing.map(String.init).joined(separator: ", ")) (\(missing.map { all[$0].parameters.codec.rawValue }.joined(separator: ", "))) has no frame in the first \(ahead.count) packets (\(aheadBytes) bytes) of the file to describe it to the muxer from",
                                 path: input)
            }
            aheadBytes += packet.data.count
            ahead.append(packet)
            if needFirst.contains(packet.trackIndex), firstPacket[packet.trackIndex] == nil, !packet.isTruncated {
                firstPacket[packet.trackIndex] = packet.data
            }
            if needTime.contains(packet.trackIndex), firstTime[packet.trackIndex] == nil {
                let ts = packet.pts != Packet.noTimestamp ? packet.pts : packet.dts
                if ts != Packet.noTimestamp { firstTime[packet.trackIndex] = Double(ts) * packet.timeBase.doubleValue }
            }
        }
        let start = firstTime.values.min() ?? 0
        var stages: [(track: Int, stage: PacketStage)] = []
        var outputs: [(source: Int, output: Int)] = []
        for t in wanted {
            do {
                let shift = start == 0 ? 0 : Int64((start / all[t].timeBase.doubleValue).rounded())
                let out = try muxer.addTrack(from: all[t], firstPacket: firstPacket[t])
                outputs.append((t, out))
                let stage = CopyStage(into: muxer, track: out, shift: shift)
                stage.keepsCutPackets = PCMCodec(all[t].parameters.codec) != nil
                stages.append((t, stage))
            } catch var e as MediaError where e.kind == .unsupported {
                e.message = "remuxing from \(format.description) is not supported: " + e.message
                throw e
            }
        }
        try muxer.setMetadata(metadata.muxMetadata(of: demuxer, tracks: outputs))
        // Packets in all, when every kept track's count is known (-1: unknown).
        let counts = Set(wanted).map { all[$0].sampleCount }
        let total = counts.contains { $0 <= 0 } ? -1 : max(1, counts.reduce(0, +))
        var done = 0
        var pipeline = MediaPipeline(demuxer: demuxer, stages: stages)
        pipeline.ahead = ahead
        let later = try pipeline.run { packet in
            guard !packet.isTruncated else { return }
            done += 1
            try progress?(done, total)
        }
        return cut ?? later   // a cut met while reading ahead ends the reads that follow
    }
}
