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
    /// Copy the input's video tracks unchanged (into any output whose muxer carries their codec;
    /// the muxer refuses, naming itself and the codec, one it cannot).
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
    /// The `.truncated` warning of an input cut short (naming the offset of the cut): the
    /// output then holds what the packets before the cut decode to, as ffmpeg's transcode of
    /// a cut file; nil for a whole input.
    public var truncation: MediaError? = nil
}

/// Decode -> convert -> encode -> mux in one call: the first audio track of any input MediaKit
/// reads into a new file, gapless: the encoder's priming and end padding are stated to the
/// muxer (``Muxer/addEncodedTrack(_:timeBase:encoderDelay:)``,
/// ``Muxer/setGapless(track:presentedDuration:padding:)``), which cuts them as its container
/// can (an MP4 edit list and iTunSMPB for AAC, Ogg granule positions, Matroska's
/// DiscardPadding for Opus, MP3's LAME tag; FLAC needs none). The output's writer comes from
/// the catalogue (``ContainerCatalog/requireMuxerFormat(forPath:)``) by its extension, which
/// also gives the default codec (``MuxerFormat/defaultAudioCodec``); the muxer refuses, naming
/// itself, a codec it cannot carry (MP3 in `.m4a`). Video tracks are copied with
/// ``TranscodeOptions/copyVideo``. Every output is written to a temporary name and renamed at
/// the end: a failed or cancelled transcode leaves nothing under the target name.
public enum Transcoder {
    /// The codec written by default for an output named `path` (nil: an extension MediaKit does not write).
    public static func defaultCodec(forOutput path: String) -> CodecID? {
        ContainerCatalog.shared.muxerFormat(forPath: path)?.defaultAudioCodec
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
        let format = try ContainerCatalog.shared.requireMuxerFormat(forPath: output)
        let ext = (output as NSString).pathExtension.lowercased()
        guard let codec = options.codec ?? format.defaultAudioCodec else {
            throw MediaError(.unsupported, "\(format.description) has no default audio codec: name one", path: output)
        }
        if let why = format.refusal(of: codec) {
            throw MediaError(.unsupported, ".\(ext) (\(format.description)) cannot carry \(codec): \(why)", path: output)
        }
        let settings = EncoderSettings(codec: codec, bitRate: options.bitRate, quality: options.quality, complexity: options.complexity,
                                       application: options.application, frameDuration: options.frameDuration, backend: options.backend)
        if registry.encoderBackends(for: codec, backend: options.backend).isEmpty {
            _ = try registry.makeEncoder(settings, input: AudioFormat(.f32, sampleRate: 48000, channels: 2))   // throws the full .notFound
        }
        let (source, demuxer) = try ContainerCatalog.shared.open(ByteSources.open(path: input))
        guard let audio = demuxer.tracks.first(where: { $0.mediaType == .audio }) else {
            throw MediaError(.notFound, "the input has no audio track", path: input)
        }
        let videos = options.copyVideo ? demuxer.tracks.filter { $0.mediaType == .video } : []
        demuxer.select(tracks: Set([audio.index] + videos.map(\.index)))
        let session = try DecodeSession(track: audio, registry: registry)

        var muxer: Muxer?
        var converter: AudioEncodingConverter?
        var audioOut = 0
        // Video is copied once the muxer exists (it is opened when the encoder is known).
        let videoStages = videos.map { ($0, CopyStage()) }
        var packets = 0
        var lastPacket: Packet?

        func writeAudio(_ p: Packet) throws {
            var p = p
            p.trackIndex = audioOut
            try muxer?.write(p)
            packets += 1
        }
        /// Packets are written one behind, so the muxer hears of the end before the last one.
        func emit(_ p: Packet) throws {
            if let prev = lastPacket { try writeAudio(prev) }
            lastPacket = p
        }
        func start(with frame: Frame) throws {
            let conv = try AudioEncodingConverter(from: AudioFormat(of: frame), to: settings, sampleRate: options.sampleRate,
                                                  channels: options.channels, registry: registry)
            converter = conv
            let enc = conv.encoder
            let m = try format.make(path: output)
            muxer = m
            audioOut = try m.addEncodedTrack(enc.parameters, timeBase: enc.timeBase, encoderDelay: enc.encoderDelay)
            // The encoded audio starts at 0. From a source whose timestamps are a clock
            // (MPEG-TS) the copied video moves with it: by the audio's first time, so that the
            // two keep their offset (as ffmpeg's transcode keeps it); other sources' times are
            // already from the start of the file.
            let audioStart = source.clockTimestamps && frame.pts != Packet.noTimestamp
                ? Double(frame.pts) * frame.timeBase.doubleValue : 0
            for (v, stage) in videoStages {
                let shift = audioStart == 0 ? 0 : Int64((audioStart / v.timeBase.doubleValue).rounded())
                try stage.bind(to: m, track: try m.addTrack(from: v), shift: shift)
            }
        }
        func encode(_ frame: Frame) throws {
            if converter == nil { try start(with: frame) }
            for p in try converter!.encode(frame) { try emit(p) }
        }

        do {
            let total = max(demuxer.duration ?? audio.durationSeconds, 0.001)
            var lastReport = -1.0
            let pipeline = MediaPipeline(demuxer: demuxer, stages: [(audio.index, DecodeStage(session: session, output: encode))]
                                         + videoStages.map { ($0.0.index, $0.1) })
            let truncation = try pipeline.run { packet in
                guard packet.trackIndex == audio.index else { return }
                let done = min(1, max(0, Double(packet.pts) * packet.timeBase.doubleValue / total))
                if done - lastReport >= 0.01 {
                    lastReport = done
                    if progress?(done) == false { throw MediaError(.state, "cancelled") }
                }
            }
            guard let conv = converter, let m = muxer else {
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
            try m.setGapless(track: audioOut, presentedDuration: samples, padding: padding)
            if let last = lastPacket {
                try writeAudio(last)
                lastPacket = nil
            }
            try m.updateParameters(enc.parameters, track: audioOut)
            try m.finish()
            _ = progress?(1)
            return TranscodeResult(codec: codec, sampleRate: enc.parameters.sampleRate, channels: enc.parameters.channels,
                                   samples: samples, encoderDelay: enc.encoderDelay, packets: packets, truncation: truncation)
        } catch {
            muxer?.cancel()
            throw error
        }
    }
}
