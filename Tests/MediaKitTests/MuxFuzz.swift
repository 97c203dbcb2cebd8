import Foundation
import MediaKit

/// A run of one of MediaKit's writers spelled out as data: the target (MP4 in its four layouts,
/// Matroska, WebM, Ogg, MP3, FLAC, WAV, AIFF, MPEG-TS, HLS with MPEG-TS or fMP4 segments), its tracks (codec, time base, edit list) and the calls made
/// on it (packets of any size, timestamps, durations and trims, replaced edit lists, announced
/// timestamps, the writer's final figures). The `mux` fuzz target reads one from the fuzzer's
/// bytes (``init(fuzz:)``); `MuxerHostileValuesTests` writes them out by hand.
///
/// A run must end in a ``MediaError`` with a message, or in a file that ffprobe reads:
/// never a trap (issue 28).
public struct MuxScript: Sendable {
    /// The writer.
    public enum Target: Int, CaseIterable, Sendable {
        case mp4, mp4FastStart, mp4Fragmented, mp4Hybrid, matroska, webm, ogg, mp3, flac, wav, aiff, caf, mpegts, hls, hlsFMP4

        /// The output's extension.
        public var fileExtension: String {
            switch self {
            case .mp4, .mp4FastStart, .mp4Fragmented, .mp4Hybrid: return "mp4"
            case .matroska: return "mkv"
            case .webm: return "webm"
            case .ogg: return "ogg"
            case .mp3: return "mp3"
            case .flac: return "flac"
            case .wav: return "wav"
            case .aiff: return "aiff"
            case .caf: return "caf"
            case .mpegts: return "ts"
            case .hls, .hlsFMP4: return "m3u8"
            }
        }

        /// The codecs its tracks are drawn from.
        public var codecs: [Codec] {
            switch self {
            case .mp4, .mp4FastStart, .mp4Fragmented, .mp4Hybrid, .matroska: return [.aac, .opus, .pcm, .mp3, .flac, .vp9]
            case .webm: return [.opus, .vp9]
            case .ogg: return [.opus, .flac]
            case .mp3: return [.mp3]
            case .flac: return [.flac]
            case .wav, .aiff: return [.pcm]
            case .caf: return [.aac, .opus, .pcm, .flac]
            case .mpegts, .hls: return [.aac, .opus, .mp3]
            case .hlsFMP4: return [.aac, .opus, .mp3, .flac, .vp9]
            }
        }

        /// True for HLS: a playlist with its segments beside it.
        public var isHLS: Bool { self == .hls || self == .hlsFMP4 }

        var isMP4: Bool { rawValue <= Target.mp4Hybrid.rawValue }
        /// True for the formats that hold one track.
        var isSingleTrack: Bool { [.mp3, .flac, .wav, .aiff, .caf].contains(self) }
    }

    /// The codecs of the tracks, each with parameters the writers accept.
    public enum Codec: Int, CaseIterable, Sendable {
        case aac, opus, pcm, mp3, flac, vp9

        /// Its natural time base (samples of its rate, or milliseconds for video).
        public var timeBase: Rational {
            switch self {
            case .aac, .mp3, .flac: return Rational(1, 44100)
            case .opus, .pcm: return Rational(1, 48000)
            case .vp9: return Rational(1, 1000)
            }
        }

        /// The 34-byte STREAMINFO of the FLAC tracks: 4096-sample blocks, 44.1 kHz, stereo, 16 bits.
        static let streamInfo: [UInt8] = [0x10, 0x00, 0x10, 0x00, 0, 0, 0, 0, 0, 0, 0x0A, 0xC4, 0x42, 0xF0] + [UInt8](repeating: 0, count: 20)

        /// Codec parameters for `target` (VP9's vpcC is MP4's; Matroska takes none).
        func parameters(for target: Target) -> CodecParameters {
            switch self {
            case .aac:
                return CodecParameters(mediaType: .audio, codec: "aac", extradata: [0x12, 0x10], sampleRate: 44100, channels: 2)
            case .opus:
                let head = Array("OpusHead".utf8) + [1, 2, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 0]
                return CodecParameters(mediaType: .audio, codec: "opus", extradata: head, sampleRate: 48000, channels: 2)
            case .pcm:
                return CodecParameters(mediaType: .audio, codec: "pcm_s16le", sampleRate: 48000, channels: 2, bitsPerCodedSample: 16)
            case .mp3:
                return CodecParameters(mediaType: .audio, codec: "mp3", sampleRate: 44100, channels: 2)
            case .flac:
                return CodecParameters(mediaType: .audio, codec: "flac", extradata: Self.streamInfo, sampleRate: 44100, channels: 2)
            case .vp9:
                let vpcC: [UInt8] = [1, 0, 0, 0, 0, 10, 0x82, 2, 2, 2, 0, 0]
                return CodecParameters(mediaType: .video, codec: "vp9", extradata: target.isMP4 ? vpcC : [], width: 64, height: 64)
            }
        }

        /// A packet of `size` bytes that starts as this codec's frames start (an Opus TOC, an
        /// MPEG audio header, a FLAC frame header with its CRC-8), then `fill`.
        func packet(size: Int, fill: UInt8) -> [UInt8] {
            var head: [UInt8]
            switch self {
            case .opus: head = [0xFC]                                  // CELT fullband 20 ms, stereo, one frame
            case .mp3: head = [0xFF, 0xFB, 0x90, 0x44]                 // MPEG-1 Layer III 128 kb/s 44.1 kHz
            case .flac:
                head = [0xFF, 0xF8, 0xC9, 0x18, 0x00]                   // 4096 samples, 44.1 kHz, stereo, 16 bits, frame 0
                var crc: UInt8 = 0
                for b in head {
                    crc ^= b
                    for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
                }
                head.append(crc)
            default: head = []
            }
            if size <= head.count { return Array(head.prefix(size)) }
            return head + [UInt8](repeating: fill, count: size - head.count)
        }
    }

    /// One track.
    public struct TrackSpec: Sendable {
        public var codec: Codec
        public var timeBase: Rational
        /// The source edit list (MP4: kept by `addTrack(from:)`), in `movieTimeScale` ticks.
        public var edits: [EditListEntry]
        public var movieTimeScale: Int64
        /// The source track's duration (Ogg: the final granule of a copied track).
        public var duration: Int64
        public var trimsOnPackets: Bool

        public init(codec: Codec, timeBase: Rational? = nil, edits: [EditListEntry] = [], movieTimeScale: Int64 = 0,
                    duration: Int64 = 0, trimsOnPackets: Bool = false) {
            self.codec = codec
            self.timeBase = timeBase ?? codec.timeBase
            self.edits = edits
            self.movieTimeScale = movieTimeScale
            self.duration = duration
            self.trimsOnPackets = trimsOnPackets
        }
    }

    /// One packet; `codecFramed`: its bytes start as the codec's frames do.
    public struct PacketSpec: Sendable {
        public var track: Int
        public var size: Int
        public var pts: Int64
        public var dts: Int64
        public var duration: Int64?
        public var isKeyframe = true
        public var trimStart = 0
        public var trimEnd = 0
        public var codecFramed = true

        public init(track: Int, size: Int, pts: Int64, dts: Int64, duration: Int64? = nil, isKeyframe: Bool = true,
                    trimStart: Int = 0, trimEnd: Int = 0, codecFramed: Bool = true) {
            self.track = track
            self.size = size
            self.pts = pts
            self.dts = dts
            self.duration = duration
            self.isKeyframe = isKeyframe
            self.trimStart = trimStart
            self.trimEnd = trimEnd
            self.codecFramed = codecFramed
        }
    }

    /// A call on the writer.
    public enum Step: Sendable {
        case packet(PacketSpec)
        /// MP4: `replaceEdits`; Ogg: `setPresentedSamples` with the first edit's duration.
        case replaceEdits(track: Int, edits: [EditListEntry], movieTimeScale: Int64)
        /// MP4: `announceTimestamps` of the track's packets of the script (before the first write).
        case announce(track: Int)
    }

    public var target: Target
    public var tracks: [TrackSpec]
    public var steps: [Step]
    /// MP4: the movie time scale option.
    public var movieTimeScale: Int64 = 1000
    /// MP4: the chunk duration, the fragment duration (fragmented and hybrid layouts) and the
    /// bytes reserved for the moov (fast start; 2048 by default here).
    public var chunkSeconds = 0.5
    public var fragmentSeconds = 0.5
    public var reservedMoovBytes = 2048
    /// MP3: `finish(inputSamples:encoderDelay:)`'s arguments.
    public var inputSamples: Int64 = 0
    public var encoderDelay = 0

    public init(target: Target, tracks: [TrackSpec], steps: [Step]) {
        self.target = target
        self.tracks = tracks
        self.steps = steps
    }

    /// How a run ended: a file (its path), or the writer's error.
    public enum Outcome {
        case file(String)
        case error(MediaError)
    }

    /// Runs the script, writing `path` (its extension is the target's).
    /// A thrown error that is not a ``MediaError``, or one without a message, stops the process:
    /// that is a finding.
    public func run(path: String) -> Outcome {
        do {
            try write(path: path)
            return .file(path)
        } catch let e as MediaError {
            if e.message.isEmpty { fatalError("\(target): a MediaError without a message: \(e)") }
            return .error(e)
        } catch {
            fatalError("\(target): an error that is not a MediaError: \(error)")
        }
    }

    private func packet(_ p: PacketSpec, fill: UInt8) -> Packet {
        let t = tracks.indices.contains(p.track) ? tracks[p.track] : tracks[0]
        let data = p.codecFramed ? t.codec.packet(size: p.size, fill: fill) : [UInt8](repeating: fill, count: p.size)
        var packet = Packet(trackIndex: p.track, pts: p.pts, dts: p.dts, statedDuration: p.duration, isKeyframe: p.isKeyframe,
                            data: data, timeBase: t.timeBase)
        packet.trimStart = p.trimStart
        packet.trimEnd = p.trimEnd
        return packet
    }

    private func track(_ i: Int) -> Track {
        let s = tracks[i]
        var t = Track(index: i, id: i + 1, parameters: s.codec.parameters(for: target), timeBase: s.timeBase, duration: s.duration,
                      editList: s.edits, movieTimeScale: s.movieTimeScale)
        t.trimsOnPackets = s.trimsOnPackets
        return t
    }

    private func write(path: String) throws {
        var fill: UInt8 = 0x55
        switch target {
        case .mp4, .mp4FastStart, .mp4Fragmented, .mp4Hybrid:
            let layouts: [MP4Muxer.Layout] = [.progressive, .fastStart, .fragmented(seconds: fragmentSeconds), .hybrid(seconds: fragmentSeconds)]
            var options = MP4Muxer.Options(layout: layouts[target.rawValue], movieTimeScale: movieTimeScale, chunkSeconds: chunkSeconds)
            if target == .mp4FastStart { options.reservedMoovBytes = reservedMoovBytes }
            let m = try MP4Muxer(path: path, options: options)
            do {
                for i in tracks.indices { _ = try m.addTrack(from: track(i)) }
                for step in steps {
                    switch step {
                    case .packet(let p): fill &+= 1; try m.write(packet(p, fill: fill))
                    case .replaceEdits(let t, let edits, let scale): m.replaceEdits(track: t, edits, movieTimeScale: scale)
                    case .announce(let t):
                        let mine = steps.compactMap { s -> (pts: Int64, dts: Int64)? in
                            if case .packet(let p) = s, p.track == t { return (p.pts, p.dts) } else { return nil }
                        }
                        try m.announceTimestamps(track: t, mine)
                    }
                }
                try m.finish()
            } catch { m.cancel(); throw error }
        case .matroska, .webm, .ogg:
            let m: Muxer = target == .ogg ? try OggMuxer(path: path) : try MatroskaMuxer(path: path, webM: target == .webm)
            do {
                for i in tracks.indices { _ = try m.addTrack(from: track(i)) }
                for step in steps {
                    switch step {
                    case .packet(let p): fill &+= 1; try m.write(packet(p, fill: fill))
                    case .replaceEdits(let t, let edits, _):
                        if let ogg = m as? OggMuxer, let e = edits.first { try ogg.setPresentedSamples(e.segmentDuration, track: t) }
                    case .announce: break
                    }
                }
                try m.finish()
            } catch { m.cancel(); throw error }
        case .mp3:
            let w = try MP3Writer(path: path)
            do {
                for case .packet(let p) in steps { fill &+= 1; try w.write(packet(p, fill: fill)) }
                try w.finish(inputSamples: inputSamples, encoderDelay: encoderDelay)
            } catch { w.cancel(); throw error }
        case .flac:
            let w = try FLACWriter(path: path, streamInfo: Codec.streamInfo)
            do {
                for case .packet(let p) in steps { fill &+= 1; try w.write(packet(p, fill: fill)) }
                try w.finish(streamInfo: Codec.streamInfo)
            } catch { w.cancel(); throw error }
        case .wav, .aiff, .caf, .mpegts, .hls, .hlsFMP4:
            // Through the catalogue, as mk-remux and mk_muxer_open reach them (HLS: segments
            // of the fragment duration, MPEG-TS or fMP4).
            let format = ContainerCatalog.shared.muxerFormat(named: ["wav": "wav", "aiff": "aiff", "caf": "caf", "ts": "mpegts", "m3u8": "hls"][target.fileExtension] ?? "")
            guard let format else { fatalError("\(target) is not in the catalogue") }
            var options = MuxerOptions(layout: target.isHLS ? .fragmented(seconds: fragmentSeconds) : .progressive)
            if target == .hlsFMP4 { options.segmentFormat = "fmp4" }
            let m = try format.make(path: path, options: options)
            do {
                for i in tracks.indices { _ = try m.addTrack(from: track(i)) }
                for case .packet(let p) in steps { fill &+= 1; try m.write(packet(p, fill: fill)) }
                try m.finish()
            } catch { m.cancel(); throw error }
        }
    }

    /// Nil when ffprobe reads `path` (exit status 0, no error printed, one stream per track);
    /// else what it said. `ffprobe` must be on the PATH.
    public func ffprobeProblem(path: String) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["ffprobe", "-v", "error", "-show_entries", "stream=index", "-of", "json", path]
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        do { try p.run() } catch { return "ffprobe did not run: \(error)" }
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        // The top-level streams of the JSON (an MPEG-TS lists them under its program too).
        let json = (try? JSONSerialization.jsonObject(with: o)) as? [String: Any]
        let streams = (json?["streams"] as? [Any])?.count ?? 0
        let expected = target.isSingleTrack ? 1 : tracks.count
        // FFmpeg 5.1's mp3 demuxer confirms a frame by the header after it and refuses the file
        // when that is past the end ("Invalid frame size (N): Could not seek to <file size>"):
        // a file whose audio is one frame, as its own encode of a 20 ms sound is (3 frames,
        // refused the same way). A limit of FFmpeg's, not a fault of the file: not counted.
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
        if target == .mp3, String(decoding: e, as: UTF8.self).contains("Could not seek to \(size).") {
            return nil
        }
        if p.terminationStatus != 0 || streams != expected {
            return "ffprobe exit \(p.terminationStatus), \(streams) streams (expected \(expected)): \(String(decoding: e, as: UTF8.self))"
        }
        return nil
    }
}

/// The fuzzer's bytes as the values of a ``MuxScript``: past the end, every value is 0.
struct FuzzBytes {
    let data: [UInt8]
    var at = 0
    var isEmpty: Bool { at >= data.count }
    mutating func u8() -> UInt8 { defer { at += 1 }; return at < data.count ? data[at] : 0 }
    mutating func u16() -> UInt16 { UInt16(u8()) << 8 | UInt16(u8()) }
    mutating func u32() -> UInt32 { UInt32(u16()) << 16 | UInt32(u16()) }
    mutating func i64() -> Int64 { Int64(bitPattern: UInt64(u32()) << 32 | UInt64(u32())) }

    /// A value for a time or a duration: mostly small, sometimes any 64-bit value or an extreme.
    mutating func hostile(small: Int64) -> Int64 {
        switch u8() % 8 {
        case 0: return i64()
        case 1:
            let extremes: [Int64] = [.min, .max, Packet.noTimestamp, -1, 1 << 31, 1 << 32, -(1 << 32), 1 << 60, -(1 << 60), 1 << 62, Int64(UInt32.max)]
            return extremes[Int(u8()) % extremes.count]
        case 2: return -Int64(u16())
        default: return Int64(u16()) % max(1, small)
        }
    }
}

extension MuxScript {
    /// A script read from fuzzer bytes: the target, 1 to 3 tracks with time bases and edit lists
    /// (natural or hostile), then up to 400 calls: packets whose decode times mostly advance
    /// (sometimes jump, go back or are any 64-bit value), with composition offsets, durations,
    /// trims and sizes (empty included) drawn the same way, replaced edit lists, announcements.
    public init(fuzz data: [UInt8]) {
        var r = FuzzBytes(data: data)
        // The first byte is the target's index (modulo the count): a new target goes at the end,
        // and the seeds and regression inputs store their target's index there, not a byte that
        // only picks it for one count of targets.
        let target = Target.allCases[Int(r.u8()) % Target.allCases.count]
        let single = target.isSingleTrack
        let count = single ? 1 : 1 + Int(r.u8()) % 3
        var tracks: [TrackSpec] = []
        for _ in 0..<count {
            let codec = target.codecs[Int(r.u8()) % target.codecs.count]
            var spec = TrackSpec(codec: codec)
            let mode = r.u8()
            if mode % 4 == 1 { spec.timeBase = Rational(1, Int64(r.u16()) + 1) }
            if mode % 4 == 2 { spec.timeBase = Rational(Int64(r.u8()) + 1, Int64(r.u32())) }
            if mode % 4 == 3 { spec.timeBase = Rational(r.hostile(small: 1000), r.hostile(small: 1 << 20)) }
            if mode & 0x10 != 0 {
                for _ in 0..<(1 + Int(r.u8()) % 3) {
                    spec.edits.append(EditListEntry(segmentDuration: r.hostile(small: 100_000), mediaTime: r.hostile(small: 5000) &- 1,
                                                    mediaRate: r.u8() % 16 == 0 ? Double(bitPattern: UInt64(bitPattern: r.i64())) : 1))
                }
                spec.movieTimeScale = r.hostile(small: 100_000)
            }
            if mode & 0x20 != 0 { spec.duration = r.hostile(small: 1 << 20); spec.trimsOnPackets = mode & 0x40 != 0 }
            tracks.append(spec)
        }
        self.init(target: target, tracks: tracks, steps: [])
        if r.u8() % 8 == 0 {
            // MP4's options: any movie time scale, chunk and fragment durations among the
            // extremes of a Double, any reserved size.
            movieTimeScale = r.hostile(small: 1 << 20)
            let seconds: [Double] = [0.5, 0, -1, .nan, .infinity, -.infinity, 1e300, 1e-300, .ulpOfOne, 86400, 3]
            chunkSeconds = seconds[Int(r.u8()) % seconds.count]
            fragmentSeconds = seconds[Int(r.u8()) % seconds.count]
            reservedMoovBytes = Int(truncatingIfNeeded: r.hostile(small: 1 << 16))
        }
        var dts = [Int64](repeating: 0, count: count)
        while !r.isEmpty && steps.count < 400 {
            let kind = r.u8()
            let t = Int(r.u8()) % (count + (kind & 0x80 != 0 ? 1 : 0))   // now and then a track that does not exist
            switch kind % 32 {
            case 0:
                var edits: [EditListEntry] = []
                for _ in 0..<(1 + Int(r.u8()) % 2) {
                    edits.append(EditListEntry(segmentDuration: r.hostile(small: 100_000), mediaTime: r.hostile(small: 5000) &- 1, mediaRate: 1))
                }
                steps.append(.replaceEdits(track: t, edits: edits, movieTimeScale: r.hostile(small: 100_000)))
            case 1:
                steps.append(.announce(track: t))
            default:
                let i = min(t, count - 1)
                switch r.u8() % 8 {
                case 0: dts[i] = r.hostile(small: 1 << 16)                       // a jump anywhere
                case 1: dts[i] = dts[i] &- Int64(r.u16())                          // backwards
                default: dts[i] = dts[i] &+ Int64(r.u16() % 4096)
                }
                let offset = r.u8() % 4 == 0 ? r.hostile(small: 4096) : Int64(r.u8())
                let size = r.u8() % 8 == 0 ? 0 : Int(r.u16() % 2048)
                let flags = r.u8()
                var p = PacketSpec(track: t, size: size, pts: dts[i] &+ offset, dts: dts[i],
                                   duration: flags & 3 == 0 ? nil : flags & 3 == 1 ? r.hostile(small: 4096) : Int64(r.u16() % 4096),
                                   isKeyframe: flags & 4 != 0, codecFramed: flags & 8 == 0)
                if flags & 0x30 == 0x30 { p.trimEnd = Int(truncatingIfNeeded: r.hostile(small: 2048)) }
                if flags & 0xC0 == 0xC0 { p.trimStart = Int(truncatingIfNeeded: r.hostile(small: 2048)) }
                if flags & 0x40 != 0 && flags & 0x80 == 0 { p.pts = Packet.noTimestamp }
                steps.append(.packet(p))
            }
        }
        if target == .mp3 { inputSamples = r.hostile(small: 1 << 20); encoderDelay = Int(truncatingIfNeeded: r.hostile(small: 4096)) }
    }
}
