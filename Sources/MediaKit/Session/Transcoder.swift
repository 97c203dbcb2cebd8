import Foundation

/// What ``Transcoder/transcode(input:output:options:registry:progress:)`` is asked for.
public struct TranscodeOptions: Sendable {
    /// The codec and its settings; a nil ``codec`` is chosen from the output's extension.
    public var codec: CodecID?
    /// Target bits per second (`--bitrate`).
    public var bitRate: Int?
    /// Variable bit rate quality on the codec's scale (see ``EncoderSettings/quality``).
    public var quality: Double?
    /// Encoder effort (see ``EncoderSettings/complexity``): Opus 0...10, FLAC level 0...12.
    public var complexity: Int?
    /// Opus application (`ffmpeg -application`); nil: the encoder's default (audio).
    public var application: EncoderSettings.Application?
    /// Opus frame duration in seconds (`ffmpeg -frame_duration`, there in milliseconds); nil: 0.02.
    public var frameDuration: Double?
    /// Output rate; nil keeps the input's when the encoder takes it (Opus: 48 kHz otherwise).
    public var sampleRate: Int?
    /// Output channels; nil keeps the input's (mixed down to the encoder's maximum).
    public var channels: Int?
    /// Copy the input's video tracks unchanged (MP4 outputs only).
    public var copyVideo = false
    /// A backend or plugin name to insist on for the encoder.
    public var backend: String?

    /// Options with every default.
    public init(codec: CodecID? = nil, bitRate: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil) {
        self.codec = codec
        self.bitRate = bitRate
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// What a transcode wrote.
public struct TranscodeResult: Sendable {
    /// The codec written.
    public var codec: CodecID
    /// The coded stream's rate and channels.
    public var sampleRate: Int, channels: Int
    /// Input samples (per channel, at the encoder's rate) encoded: the output's decoded length.
    public var samples: Int64
    /// The encoder's priming, in the packets' time base, cut by the container.
    public var encoderDelay: Int
    /// Packets written.
    public var packets: Int
}

/// Decode -> convert -> encode -> mux in one call: the first audio track of any input MediaKit
/// reads into a new file, gapless (the encoder's priming and end padding cut by an MP4 edit
/// list, plus iTunSMPB for AAC; FLAC needs none). Outputs by extension: `.mp4`, `.mov` (AAC,
/// MP3, Opus, FLAC; video copied with ``TranscodeOptions/copyVideo``), `.m4a`, `.m4b` (the same
/// but MP3, which iTunes-style files do not carry, as FFmpeg's ipod muxer refuses it), `.flac`,
/// `.mp3` (an Info frame with LAME's delay and padding first),
/// `.mka` / `.mkv` / `.webm` (Opus, Vorbis and, in Matroska, AAC, MP3, FLAC). Every output is
/// written to a temporary name and renamed at the end: a failed or cancelled transcode leaves
/// nothing under the target name.
public enum Transcoder {
    /// The codec written by default for an output named `path` (nil: an extension MediaKit does not write).
    public static func defaultCodec(forOutput path: String) -> CodecID? {
        switch (path as NSString).pathExtension.lowercased() {
        case "m4a", "mp4", "m4b", "mov": return "aac"
        case "flac": return "flac"
        case "mp3": return "mp3"
        case "opus": return "opus"
        case "ogg", "oga": return "vorbis"
        case "mka", "mkv", "webm": return "opus"
        default: return nil
        }
    }

    private enum Sink {
        case mp4(MP4Muxer)
        case matroska(MatroskaMuxer)
        case flac(FLACWriter?)
        case mp3(MP3Writer)
        case ogg(OggMuxer)
    }

    /// Transcodes the first audio track of `input` into `output`.
    /// - Parameter progress: called now and then with the fraction done (0...1); return false to
    ///   stop (the output is then removed and `.state` "cancelled" thrown).
    /// - Throws: `.notFound` for an input without audio or no encoder; `.unsupported` for an
    ///   output the codec cannot go into (naming what it takes) or settings the encoder refuses
    ///   (naming what it accepts); the demuxer's, decoder's and muxer's errors.
    @discardableResult
    public static func transcode(input: String, output: String, options: TranscodeOptions = .init(),
                                 registry: MediaRegistry = .shared, progress: ((Double) -> Bool)? = nil) throws -> TranscodeResult {
        let ext = (output as NSString).pathExtension.lowercased()
        guard let codec = options.codec ?? defaultCodec(forOutput: output) else {
            throw MediaError(.unsupported, "no codec for an output named .\(ext): MediaKit writes .m4a, .mp4, .flac, .mp3, .ogg, .oga, .opus, .mka, .mkv, .webm", path: output)
        }
        let containers: [String: Set<CodecID>] = [
            "m4a": ["aac", "opus", "flac"], "mp4": ["aac", "mp3", "opus", "flac"], "m4b": ["aac", "opus", "flac"],
            "mov": ["aac", "mp3", "opus", "flac"], "flac": ["flac"], "mp3": ["mp3"], "mka": ["aac", "mp3", "opus", "vorbis", "flac"],
            "mkv": ["aac", "mp3", "opus", "vorbis", "flac"], "webm": ["opus", "vorbis"],
            "ogg": ["opus", "vorbis", "flac"], "oga": ["opus", "vorbis", "flac"], "opus": ["opus"],
        ]
        guard let allowed = containers[ext] else {
            throw MediaError(.unsupported, "MediaKit has no writer for .\(ext) files; write .m4a, .mp4, .flac, .mp3, .ogg, .oga, .opus, .mka, .mkv or .webm",
                             path: output)
        }
        guard allowed.contains(codec) else {
            throw MediaError(.unsupported, ".\(ext) cannot carry \(codec); it takes \(allowed.map(\.rawValue).sorted().joined(separator: ", "))", path: output)
        }
        let settings = EncoderSettings(codec: codec, bitRate: options.bitRate, quality: options.quality, complexity: options.complexity,
                                       application: options.application, frameDuration: options.frameDuration, backend: options.backend)
        if registry.encoderBackends(for: codec, backend: options.backend).isEmpty {
            _ = try registry.makeEncoder(settings, input: AudioFormat(.f32, sampleRate: 48000, channels: 2))   // throws the full .notFound
        }
        let demuxer = try registry.makeDemuxer(path: input)
        guard let audio = demuxer.tracks.first(where: { $0.mediaType == .audio }) else {
            throw MediaError(.notFound, "the input has no audio track", path: input)
        }
        let videos = options.copyVideo ? demuxer.tracks.filter { $0.mediaType == .video } : []
        if !videos.isEmpty, !["mp4", "m4a", "m4b", "mov"].contains(ext) {
            throw MediaError(.unsupported, "--copy-video writes MP4 outputs only", path: output)
        }
        demuxer.select(tracks: Set([audio.index] + videos.map(\.index)))
        let session = try DecodeSession(track: audio, registry: registry)

        var sink: Sink?
        var converter: AudioEncodingConverter?
        var audioOut = 0
        var videoMap: [Int: Int] = [:]
        var pendingVideo: [Packet] = []
        var packets = 0
        var lastPacket: Packet?

        func cancelSink() {
            switch sink {
            case .mp4(let m): m.cancel()
            case .matroska(let m): m.cancel()
            case .flac(let w): w?.cancel()
            case .mp3(let w): w.cancel()
            case .ogg(let m): m.cancel()
            case nil: break
            }
        }
        func writeAudio(_ p: Packet) throws {
            var p = p
            p.trackIndex = audioOut
            switch sink {
            case .mp4(let m): try m.write(p)
            case .matroska(let m): try m.write(p)
            case .flac(let w): try w?.write(p)
            case .mp3(let w): try w.write(p)
            case .ogg(let m):
                // Ogg's convention (FFmpeg's): an Opus stream's timestamps start at -pre-skip.
                if codec == "opus" && p.pts != Packet.noTimestamp {
                    p.pts -= Int64(converter?.encoder.encoderDelay ?? 0)
                    p.dts = p.pts
                }
                try m.write(p)
            case nil: break
            }
            packets += 1
        }
        /// Packets are written one behind, so the last can carry its end trim (Matroska).
        func emit(_ p: Packet) throws {
            if let prev = lastPacket { try writeAudio(prev) }
            lastPacket = p
        }
        func start(with frame: Frame) throws {
            let conv = try AudioEncodingConverter(from: AudioFormat(of: frame), to: settings, sampleRate: options.sampleRate,
                                                  channels: options.channels, registry: registry)
            converter = conv
            let enc = conv.encoder
            switch ext {
            case "flac":
                sink = .flac(try FLACWriter(path: output, streamInfo: enc.parameters.extradata))
                audioOut = 0
            case "mp3":
                sink = .mp3(try MP3Writer(path: output))
                audioOut = 0
            case "ogg", "oga", "opus":
                let m = try OggMuxer(path: output, opusOnly: ext == "opus")
                sink = .ogg(m)
                audioOut = try m.addTrack(enc.parameters, timeBase: enc.timeBase)
            case "mka", "mkv", "webm":
                let m = try MatroskaMuxer(path: output, webM: ext == "webm")
                sink = .matroska(m)
                audioOut = try m.addTrack(enc.parameters, timeBase: enc.timeBase)
            default:
                var o = MP4Muxer.Options()
                o.movieTimeScale = enc.timeBase.denominator
                let m = try MP4Muxer(path: output, options: o)
                sink = .mp4(m)
                var p = enc.parameters
                if codec == "mp3" { p.codecTag = "mp4a" }
                audioOut = try m.addTrack(p, timeBase: enc.timeBase)
                for v in videos { videoMap[v.index] = try m.addTrack(from: v) }
                for var v in pendingVideo {
                    v.trackIndex = videoMap[v.trackIndex]!
                    try m.write(v)
                }
                pendingVideo = []
            }
        }
        func encode(_ frame: Frame) throws {
            if converter == nil { try start(with: frame) }
            for p in try converter!.encode(frame) { try emit(p) }
        }

        do {
            let total = max(demuxer.duration ?? audio.durationSeconds, 0.001)
            var cut: MediaError?
            var lastReport = -1.0
            while let packet = try demuxer.read(untilCut: &cut) {
                if packet.trackIndex == audio.index {
                    try session.decode(packet, encode)
                    let done = min(1, max(0, Double(packet.pts) * packet.timeBase.doubleValue / total))
                    if done - lastReport >= 0.01 {
                        lastReport = done
                        if progress?(done) == false { throw MediaError(.state, "cancelled") }
                    }
                } else if videoMap.isEmpty && !videos.isEmpty {
                    pendingVideo.append(packet)
                } else if case .mp4(let m) = sink, let out = videoMap[packet.trackIndex] {
                    var p = packet
                    p.trackIndex = out
                    try m.write(p)
                }
            }
            try session.finish(encode)
            guard let conv = converter else {
                throw MediaError(.invalidData, "the audio track decoded to no samples", path: input)
            }
            for p in try conv.finish() { try emit(p) }
            let enc = conv.encoder
            // The decoded length: the input samples; the rest is priming and padding.
            let inputRate = Int64(enc.inputFormat.sampleRate)
            let samples = Rational.rescale(enc.inputSampleCount, multiply: enc.timeBase.denominator, divide: inputRate * enc.timeBase.numerator)
            // A packet decodes to a whole frame even when the encoder states a shorter last duration.
            let frameTicks = Rational.rescale(Int64(enc.frameSize), multiply: enc.timeBase.denominator, divide: inputRate * enc.timeBase.numerator)
            let coded = lastPacket.map { $0.pts + max($0.duration, frameTicks) } ?? 0
            let padding = max(0, coded - Int64(enc.encoderDelay) - samples)
            if var last = lastPacket {
                if case .matroska = sink, codec == "opus" { last.trimEnd = Int(padding) }
                // Ogg: the last page's granule position cuts the stream at the input's length.
                if case .ogg(let m) = sink { try m.setPresentedSamples(samples, track: audioOut) }
                try writeAudio(last)
                lastPacket = nil
            }
            switch sink {
            case .mp4(let m):
                m.replaceEdits(track: audioOut, [EditListEntry(segmentDuration: samples, mediaTime: Int64(enc.encoderDelay), mediaRate: 1)],
                               movieTimeScale: enc.timeBase.denominator)
                if codec == "aac" {
                    m.replaceUserData(iTunSMPB(delay: enc.encoderDelay, padding: Int(padding), samples: samples))
                }
                try m.finish()
            case .matroska(let m): try m.finish()
            case .ogg(let m):
                if codec == "flac" { try m.updateStreamInfo(enc.parameters.extradata, track: audioOut) }
                try m.finish()
            case .flac(let w): try w?.finish(streamInfo: enc.parameters.extradata)
            case .mp3(let w): try w.finish(inputSamples: samples, encoderDelay: enc.encoderDelay)
            case nil: break
            }
            _ = progress?(1)
            return TranscodeResult(codec: codec, sampleRate: enc.parameters.sampleRate, channels: enc.parameters.channels,
                                   samples: samples, encoderDelay: enc.encoderDelay, packets: packets)
        } catch {
            cancelSink()
            throw error
        }
    }

    /// A `udta` box holding iTunes' gapless tag as iTunes writes it: `meta` > `hdlr` (mdir) >
    /// `ilst` > `----` (mean "com.apple.iTunes", name "iTunSMPB", data " 00000000 DELAY PADDING
    /// SAMPLES" then eight zero fields, hexadecimal).
    static func iTunSMPB(delay: Int, padding: Int, samples: Int64) -> [UInt8] {
        func hex(_ v: Int64, _ width: Int) -> String {
            let s = String(v, radix: 16, uppercase: true)
            return String(repeating: "0", count: max(0, width - s.count)) + s
        }
        let value = " " + ([hex(0, 8), hex(Int64(delay), 8), hex(Int64(padding), 8), hex(samples, 16)]
                           + Array(repeating: hex(0, 8), count: 8)).joined(separator: " ")
        var w = BoxWriter()
        w.box("udta") { w in
            w.fullBox("meta", version: 0, flags: 0) { w in
                w.fullBox("hdlr", version: 0, flags: 0) { w in
                    w.u32(0); w.fourCC("mdir"); w.fourCC("appl"); w.u32(0); w.u32(0); w.u8(0)
                }
                w.box("ilst") { w in
                    w.box("----") { w in
                        w.fullBox("mean", version: 0, flags: 0) { $0.append(Array("com.apple.iTunes".utf8)) }
                        w.fullBox("name", version: 0, flags: 0) { $0.append(Array("iTunSMPB".utf8)) }
                        w.box("data") { w in w.u32(1); w.u32(0); w.append(Array(value.utf8)) }
                    }
                }
            }
        }
        return w.bytes
    }
}
