import Foundation

/// Writes an HTTP Live Streaming presentation for video on demand (RFC 8216): a media playlist
/// (the path given, `.m3u8`) and, beside it, segments `seg0.ts`, `seg1.ts` ... (or, with
/// ``SegmentFormat/fmp4``, an initialization segment `init.mp4` and media segments `seg0.m4s`,
/// `seg1.m4s` ...) that a player (or `ffmpeg -i index.m3u8`) reads one after the other as one
/// stream.
///
/// The segments are written by the catalogue's MPEG-TS writer (any ``SegmentingMuxer`` made by
/// the ``MuxerFormat`` named "mpegts"), or for fMP4 by its MP4 writer in the fragmented layout
/// (`init.mp4`: `ftyp` + `moov` with `mvex` and the edit lists a fragmented MP4 has, no
/// samples; each `.m4s`: `styp`, `moof` + `mdat` with the decode time in `tfdt`), cut before a
/// key frame of the first video track (of the
/// first track when there is no video) once the segments so far are `seconds` x their count
/// long, as FFmpeg's hls muxer cuts them: every packet is in exactly one segment, in order,
/// and each segment starts with a key frame (and, for MPEG-TS, the tables), so it plays on its
/// own (an fMP4 segment after `init.mp4`).
///
/// The playlist: `#EXTM3U`, `#EXT-X-VERSION:3` (7 and `#EXT-X-MAP:URI="init.mp4"` for fMP4),
/// `#EXT-X-TARGETDURATION` (the longest segment,
/// rounded up to whole seconds), `#EXT-X-MEDIA-SEQUENCE:0`, `#EXT-X-PLAYLIST-TYPE:VOD`, one
/// `#EXTINF` per segment with its duration (from its first key frame to the next segment's; the
/// last, as FFmpeg states it, the sum of the cut track's packet durations in it),
/// `#EXT-X-ENDLIST`. It is written by ``finish()`` under a
/// temporary name and renamed (``OutputFile``); each segment is renamed into place when the
/// next one starts. ``cancel()`` removes them all.
public final class HLSMuxer: Muxer, @unchecked Sendable {
    /// The segment duration when none is given: 2 s (FFmpeg's `hls_time`).
    public static let defaultSegmentSeconds = 2.0

    /// The format of the segments (FFmpeg's `hls_segment_type`).
    public enum SegmentFormat: String, Sendable, CaseIterable {
        /// MPEG-TS segments `segN.ts`, by the catalogue's "mpegts" writer. Default.
        case ts
        /// Fragmented MP4 (CMAF) segments `segN.m4s` after the initialization segment
        /// `init.mp4`, by the catalogue's "mp4" writer in the fragmented layout.
        case fmp4

        /// The segment format named `name` ("ts", "mpegts", "fmp4", "mp4"; nil: ``ts``), or an
        /// error naming the formats taken.
        /// - Throws: `.invalidArgument` for another name.
        public init(named name: String?, path: String = "") throws {
            switch name?.lowercased() {
            case nil, "ts", "mpegts": self = .ts
            case "fmp4", "mp4", "cmaf": self = .fmp4
            case let other?:
                throw MediaError(.invalidArgument, "HLS segments in \"\(other)\": the segment format is ts (MPEG-TS) or fmp4 (fragmented MP4)", path: path)
            }
        }
    }

    /// The name of the initialization segment of fMP4 segments, beside the playlist.
    static let initializationName = "init.mp4"

    private let playlist: OutputFile
    private let directory: String
    private let seconds: Double
    private let segments: SegmentingMuxer
    private let segmentExtension: String
    private var tracks: [(timeBase: Rational, video: Bool)] = []
    private var cutTrack: Int?
    /// The start (seconds) of each segment, by the cut track's key frames.
    private var starts: [Double] = []
    /// The length of the segment being written, as FFmpeg's hls muxer states the last one.
    private var lastSegment = 0.0
    /// The cut track's first timestamp, and the segment duration in microseconds.
    private var firstStamp: Int64?
    private let microseconds: Int64
    private var finished = false
    /// The segments' format.
    public let segmentFormat: SegmentFormat

    /// Starts the presentation whose playlist is `path`, segments of about `seconds` (cut at
    /// key frames, so longer when key frames are further apart), in the format `segmentFormat`.
    /// - Throws: `.invalidArgument` for a duration that is not positive and finite;
    ///   `.unsupported` when the catalogue has no writer that cuts its stream into files of
    ///   that format; `.io` when a file cannot be created (the directory must exist).
    public init(path: String, seconds: Double = HLSMuxer.defaultSegmentSeconds, segmentFormat: SegmentFormat = .ts) throws {
        guard seconds > 0 && seconds.isFinite && seconds < 1e9 else {
            throw MediaError(.invalidArgument, "HLS segments of \(seconds) s: the duration must be a positive number of seconds", path: path)
        }
        let name = segmentFormat == .ts ? "mpegts" : "mp4"
        guard let format = ContainerCatalog.shared.muxerFormat(named: name) else {
            throw MediaError(.unsupported, "no \(name) writer is registered for the HLS segments", path: path)
        }
        self.seconds = seconds
        self.segmentFormat = segmentFormat
        microseconds = Int64((seconds * 1e6).rounded())
        directory = (path as NSString).deletingLastPathComponent
        var options = MuxerOptions()
        switch segmentFormat {
        case .ts:
            segmentExtension = format.extensions.first ?? format.name
        case .fmp4:
            segmentExtension = "m4s"
            // Fragments are cut where the segments start (SegmentingMuxer); no mfra.
            options.layout = .fragmented(seconds: seconds)
            options.writeFragmentIndex = false
        }
        playlist = try OutputFile(path: path)
        let first = segmentFormat == .fmp4 ? (directory as NSString).appendingPathComponent(Self.initializationName)
                                           : Self.segmentPath(directory, 0, segmentExtension)
        let muxer: Muxer
        do { muxer = try format.make(path: first, options: options) } catch { playlist.discard(); throw error }
        guard let cutting = muxer as? SegmentingMuxer, cutting.writesInitializationSegment == (segmentFormat == .fmp4) else {
            muxer.cancel()
            playlist.discard()
            throw MediaError(.unsupported, "\(format.description) files cannot be cut into HLS \(segmentFormat.rawValue) segments", path: path)
        }
        segments = cutting
        if cutting.writesInitializationSegment {
            // init.mp4 holds the header only: the first packet starts seg0.
            do { try cutting.startSegment(path: Self.segmentPath(directory, 0, segmentExtension)) } catch { cutting.cancel(); playlist.discard(); throw error }
        }
    }

    deinit { if !finished { playlist.discard() } }

    private static func segmentPath(_ directory: String, _ n: Int, _ ext: String) -> String {
        (directory as NSString).appendingPathComponent("seg\(n).\(ext)")
    }

    /// The name of segment `n` in the playlist (beside it).
    private func segmentName(_ n: Int) -> String { "seg\(n).\(segmentExtension)" }

    /// Adds a track to the segments. - Throws: the segment muxer's refusals.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        let i = try segments.addTrack(parameters, timeBase: timeBase)
        note(i, parameters, timeBase)
        return i
    }

    /// Adds a demuxed track to the segments (the segment muxer keeps what it keeps of it).
    /// - Throws: the segment muxer's refusals.
    public func addTrack(from track: Track) throws -> Int {
        let i = try segments.addTrack(from: track)
        note(i, track.parameters, track.timeBase)
        return i
    }

    /// True when the segment muxer builds the track's configuration from its first packet
    /// (fMP4: VP9, AC-3, AV1 without an av1C; see ``Muxer/needsFirstPacket(_:)``).
    public func needsFirstPacket(_ track: Track) -> Bool { segments.needsFirstPacket(track) }

    /// Adds a demuxed track from another container as the segment muxer adapts it (fMP4: an
    /// ADTS header dropped, Annex B made length-prefixed, Opus retimed; see
    /// ``Muxer/addTrack(from:firstPacket:)``). - Throws: the segment muxer's refusals.
    public func addTrack(from track: Track, firstPacket: [UInt8]?) throws -> Int {
        let i = try segments.addTrack(from: track, firstPacket: firstPacket)
        note(i, track.parameters, track.timeBase)
        return i
    }

    private func note(_ i: Int, _ p: CodecParameters, _ timeBase: Rational) {
        while tracks.count <= i { tracks.append((Rational(1, 1), false)) }
        tracks[i] = (timeBase, p.mediaType == .video)
        cutTrack = tracks.firstIndex { $0.video } ?? 0
    }

    /// Writes one packet, starting a new segment before it when it is a key frame of the cut
    /// track and the segments so far have reached their share of the duration.
    /// - Throws: `.invalidArgument` for a track that was not added; the segment muxer's errors.
    public func write(_ packet: Packet) throws {
        guard !finished else { throw MediaError(.state, "write after finish", path: playlist.path) }
        guard packet.trackIndex >= 0 && packet.trackIndex < tracks.count else {
            throw MediaError(.invalidArgument, "track \(packet.trackIndex) was not added", path: playlist.path)
        }
        // Timestamps and durations within MuxLimits: the differences below cannot overflow.
        try MuxLimits.check(packet, track: packet.trackIndex, path: playlist.path)
        if packet.trackIndex == cutTrack {
            let stamp = packet.pts != Packet.noTimestamp ? packet.pts : packet.dts
            if stamp != Packet.noTimestamp {
                let t = Double(stamp) * packet.timeBase.doubleValue
                let seconds = Double(max(0, packet.duration)) * packet.timeBase.doubleValue
                if let first = firstStamp {
                    // As FFmpeg's hls muxer: the time since the first packet in microseconds
                    // against the segments so far times the duration, as integers.
                    let elapsed = Rational.rescale(stamp - first, from: packet.timeBase, to: Rational(1, 1_000_000))
                    let (due, over) = microseconds.multipliedReportingOverflow(by: Int64(starts.count))
                    if packet.isKeyframe && !over && elapsed >= due && t > starts[starts.count - 1] {
                        try segments.startSegment(path: Self.segmentPath(directory, starts.count, segmentExtension))
                        starts.append(t)
                        lastSegment = seconds
                    } else {
                        // The segment's length as FFmpeg's hls muxer counts it: the durations of
                        // the cut track's packets (a packet without one: to its start).
                        lastSegment = packet.duration > 0 ? lastSegment + seconds : t - starts[starts.count - 1]
                    }
                } else {
                    firstStamp = stamp
                    starts.append(t)
                    lastSegment = seconds
                }
            }
        }
        try segments.write(packet)
    }

    /// Completes the last segment and writes the playlist.
    /// - Throws: the segment muxer's errors; `.io`. Everything is then removed.
    public func finish() throws {
        guard !finished else { return }
        finished = true
        do {
            try segments.finish()
            var durations: [Double] = []
            for (k, s) in starts.enumerated() {
                durations.append(max(0, k + 1 < starts.count ? starts[k + 1] - s : lastSegment))
            }
            if durations.isEmpty { durations = [0] }
            // The durations as written (6 decimals), rounded up: a segment of 1.0000001 s is 1.
            durations = durations.map { ($0 * 1e6).rounded() / 1e6 }
            let target = Int(exactly: min(1e12, (durations.max() ?? 0).rounded(.up))) ?? 1
            // fMP4 segments need version 7 (RFC 8216 section 7: EXT-X-MAP without I-frames only).
            let version = segmentFormat == .fmp4 ? 7 : 3
            var text = "#EXTM3U\n#EXT-X-VERSION:\(version)\n#EXT-X-TARGETDURATION:\(max(1, target))\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n"
            if segmentFormat == .fmp4 { text += "#EXT-X-MAP:URI=\"\(Self.initializationName)\"\n" }
            for (k, d) in durations.enumerated() {
                text += "#EXTINF:\(String(format: "%.6f", d)),\n\(segmentName(k))\n"
            }
            text += "#EXT-X-ENDLIST\n"
            try playlist.write(Array(text.utf8))
            try playlist.commit()
        } catch {
            segments.cancel()
            playlist.discard()
            throw error
        }
    }

    /// Abandons the presentation: the segments written so far and the playlist are removed.
    public func cancel() {
        finished = true
        segments.cancel()
        playlist.discard()
    }
}
