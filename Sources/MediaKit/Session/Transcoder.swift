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
    /// Re-encode the first video track with these settings (decode -> encode, plugin ABI 2.3;
    /// `mk-transcode --video-codec`); nil: video is copied (``copyVideo``) or dropped. An input
    /// with video and no audio then gives a video-only output.
    public var video: VideoEncoderSettings?
    /// The input's tags, chapters and attachments: copied into what the output holds by
    /// default (`ffmpeg -map_metadata 0 -map_chapters 0`), or dropped (`--no-metadata`), and
    /// tags set (`--metadata KEY=VALUE`).
    public var metadata = MetadataCopyOptions()

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
    /// The video encoder's backend ("libx264") and the pictures and packets it coded, when
    /// ``TranscodeOptions/video`` re-encoded a video track; nil otherwise.
    public var videoEncoder: String? = nil
    /// Pictures encoded (with ``TranscodeOptions/video``).
    public var videoFrames = 0
    /// Video packets written (with ``TranscodeOptions/video``).
    public var videoPackets = 0
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
        let (source, demuxer) = try ContainerCatalog.shared.open(ByteSources.open(path: input))
        let videoTrack = options.video != nil ? demuxer.tracks.first(where: { $0.mediaType == .video }) : nil
        if options.video != nil && videoTrack == nil {
            throw MediaError(.notFound, "the input has no video track to encode", path: input)
        }
        let audio = demuxer.tracks.first(where: { $0.mediaType == .audio })
        guard audio != nil || videoTrack != nil else {
            throw MediaError(.notFound, "the input has no audio track", path: input)
        }
        let codec = options.codec ?? format.defaultAudioCodec ?? "none"
        let settings = EncoderSettings(codec: codec, bitRate: options.bitRate, quality: options.quality, complexity: options.complexity,
                                       application: options.application, frameDuration: options.frameDuration, backend: options.backend)
        if audio != nil {
            guard options.codec != nil || format.defaultAudioCodec != nil else {
                throw MediaError(.unsupported, "\(format.description) has no default audio codec: name one", path: output)
            }
            if let why = format.refusal(of: codec) {
                throw MediaError(.unsupported, ".\(ext) (\(format.description)) cannot carry \(codec): \(why)", path: output)
            }
            if registry.encoderBackends(for: codec, backend: options.backend).isEmpty {
                _ = try registry.makeEncoder(settings, input: AudioFormat(.f32, sampleRate: 48000, channels: 2))   // throws the full .notFound
            }
        }
        let videos = options.copyVideo && videoTrack == nil ? demuxer.tracks.filter { $0.mediaType == .video } : []
        demuxer.select(tracks: Set([audio?.index, videoTrack?.index].compactMap { $0 } + videos.map(\.index)))
        let session = try audio.map { try DecodeSession(track: $0, registry: registry) }
        let videoSession = try videoTrack.map { try DecodeSession(track: $0, registry: registry, threads: options.video?.threads ?? 0) }

        var muxer: Muxer?
        var converter: AudioEncodingConverter?
        var audioOut = 0
        var videoEncoder: VideoEncoder?
        var pictureConverter: PictureConverter?
        var videoOut = 0
        var videoFrames = 0, videoPackets = 0
        var audioStart = 0.0
        // Video is copied once the muxer exists (it is opened when the encoders are known).
        let videoStages = videos.map { ($0, CopyStage()) }
        var packets = 0
        var lastPacket: Packet?
        // Packets made before the muxer exists (one encoder waits for its first frame).
        var held: [(video: Bool, packet: Packet)] = []

        // The encoded video's first packet: a muxer may build its codec configuration from it
        // (MP4's vpcC for VP9, av1C for an AV1 encoder that states no sequence header).
        var firstVideoData: [UInt8]?
        func write(_ p: Packet, video: Bool) throws {
            guard let m = muxer else {
                held.append((video, p))
                if video && firstVideoData == nil {
                    firstVideoData = p.data
                    try openIfReady()
                }
                return
            }
            var p = p
            p.trackIndex = video ? videoOut : audioOut
            try m.write(p)
            if video { videoPackets += 1 } else { packets += 1 }
        }
        /// Audio packets are written one behind, so the muxer hears of the end before the last one.
        func emit(_ p: Packet) throws {
            if let prev = lastPacket { try write(prev, video: false) }
            lastPacket = p
        }
        /// Opens the muxer once every encoder is known: tracks in the input's order.
        func openIfReady() throws {
            guard muxer == nil, audio == nil || converter != nil, videoTrack == nil || firstVideoData != nil else { return }
            let m = try format.make(path: output)
            muxer = m
            var order: [(Int, () throws -> Void)] = []
            if let a = audio, let enc = converter?.encoder {
                order.append((a.index, { audioOut = try m.addEncodedTrack(enc.parameters, timeBase: enc.timeBase, encoderDelay: enc.encoderDelay) }))
            }
            if let v = videoTrack, let enc = videoEncoder {
                // The source's language and display matrix (the pictures are not turned).
                let t = Track(index: v.index, id: v.id, parameters: enc.parameters, timeBase: enc.timeBase, duration: 0,
                              language: v.language, matrix: v.matrix)
                order.append((v.index, { videoOut = try m.addTrack(from: t, firstPacket: firstVideoData) }))
            }
            for (_, add) in order.sorted(by: { $0.0 < $1.0 }) { try add() }
            let copiedVideo = try videoStages.map { (source: $0.0.index, output: try m.addTrack(from: $0.0)) }
            // The input's tags, chapters and attachments (the one place a transcode copies
            // them), before any packet.
            var encoded: [(source: Int, output: Int)] = []
            if let a = audio, converter != nil { encoded.append((a.index, audioOut)) }
            if let v = videoTrack, videoEncoder != nil { encoded.append((v.index, videoOut)) }
            try m.setMetadata(options.metadata.muxMetadata(of: demuxer, tracks: encoded + copiedVideo))
            for ((v, stage), out) in zip(videoStages, copiedVideo) {
                let shift = audioStart == 0 ? 0 : Int64((audioStart / v.timeBase.doubleValue).rounded())
                try stage.bind(to: m, track: out.output, shift: shift)
            }
            let waiting = held
            held = []
            for (video, p) in waiting { try write(p, video: video) }
        }
        func start(with frame: Frame) throws {
            let conv = try AudioEncodingConverter(from: AudioFormat(of: frame), to: settings, sampleRate: options.sampleRate,
                                                  channels: options.channels, registry: registry)
            converter = conv
            // The encoded audio starts at 0. From a source whose timestamps are a clock
            // (MPEG-TS) the copied video moves with it: by the audio's first time, so that the
            // two keep their offset (as ffmpeg's transcode keeps it); other sources' times are
            // already from the start of the file.
            audioStart = source.clockTimestamps && frame.pts != Packet.noTimestamp
                ? Double(frame.pts) * frame.timeBase.doubleValue : 0
            try openIfReady()
        }
        func encode(_ frame: Frame) throws {
            if converter == nil { try start(with: frame) }
            for p in try converter!.encode(frame) { try emit(p) }
        }
        /// The first picture makes the encoder: the decoded pixel format when the encoder takes
        /// it, else the encoder's first choice through a picture converter.
        func startVideo(with frame: Frame, settings v: VideoEncoderSettings, track: Track) throws {
            let backends = registry.videoEncoderBackends(named: v.codec)
            var picture = frame
            if let source = frame.pixelFormat, let first = backends.first, !first.pixelFormats.contains(source),
               let target = first.pixelFormats.first {
                let c = try registry.makePictureConverter(from: source, to: target, width: frame.width, height: frame.height,
                                                          colorRange: frame.colorRange, colorSpace: frame.colorSpace)
                pictureConverter = c
                picture = try c.convert(frame)
            }
            var input = VideoFormat(of: picture, frameRate: track.frameRate)
            if input.sampleAspectRatio.numerator == 0 { input.sampleAspectRatio = track.parameters.sampleAspectRatio }
            videoEncoder = try registry.makeVideoEncoder(v, input: input)
        }
        /// Added to each picture's pts: the edit list's shift onto the presentation timeline (as
        /// ffmpeg's MP4 demuxer applies it), or from a clock (MPEG-TS) the first picture's time.
        var videoShift: Int64 = 0
        func encodeVideo(_ frame: Frame) throws {
            guard let v = options.video, let track = videoTrack else { return }
            if videoEncoder == nil {
                if source.clockTimestamps {
                    videoShift = frame.pts == Packet.noTimestamp ? 0 : -frame.pts
                } else if track.presentationOffset != .min && track.presentationOffset != .max {
                    videoShift = Rational.rescale(track.presentationOffset, from: track.timeBase, to: frame.timeBase)
                }
                try startVideo(with: frame, settings: v, track: track)
            }
            var frame = frame
            if frame.pts != Packet.noTimestamp { frame.pts += videoShift }
            let picture = try pictureConverter?.convert(frame) ?? frame
            try videoEncoder!.encode(picture) { try write($0, video: true) }
            videoFrames += 1
        }

        do {
            let progressTrack = audio ?? videoTrack!
            let total = max(demuxer.duration ?? progressTrack.durationSeconds, 0.001)
            var lastReport = -1.0
            var stages: [(track: Int, stage: PacketStage)] = []
            if let a = audio, let session { stages.append((a.index, DecodeStage(session: session, output: encode))) }
            if let v = videoTrack, let videoSession { stages.append((v.index, DecodeStage(session: videoSession, output: encodeVideo))) }
            let pipeline = MediaPipeline(demuxer: demuxer, stages: stages + videoStages.map { ($0.0.index, $0.1) })
            let truncation = try pipeline.run { packet in
                guard packet.trackIndex == progressTrack.index else { return }
                let done = min(1, max(0, Double(packet.pts) * packet.timeBase.doubleValue / total))
                if done - lastReport >= 0.01 {
                    lastReport = done
                    if progress?(done) == false { throw MediaError(.state, "cancelled") }
                }
            }
            if let enc = videoEncoder { try enc.finish { try write($0, video: true) } }
            if audio != nil && converter == nil {
                throw MediaError(.invalidData, "the audio track decoded to no samples", path: input)
            }
            if videoTrack != nil && videoEncoder == nil {
                throw MediaError(.invalidData, "the video track decoded to no pictures", path: input)
            }
            guard let m = muxer else { throw MediaError(.invalidData, "nothing was decoded", path: input) }
            var result = TranscodeResult(codec: codec, sampleRate: 0, channels: 0, samples: 0, encoderDelay: 0, packets: 0, truncation: truncation)
            if let conv = converter {
                for p in try conv.finish() { try emit(p) }
                let enc = conv.encoder
                // The decoded length: the input samples; the rest is priming and padding.
                let (samples, padding) = conv.gaplessTrim(lastPacket: lastPacket)
                try m.setGapless(track: audioOut, presentedDuration: samples, padding: padding)
                if let last = lastPacket {
                    try write(last, video: false)
                    lastPacket = nil
                }
                try m.updateParameters(enc.parameters, track: audioOut)
                result = TranscodeResult(codec: codec, sampleRate: enc.parameters.sampleRate, channels: enc.parameters.channels,
                                         samples: samples, encoderDelay: enc.encoderDelay, packets: packets, truncation: truncation)
            }
            try m.finish()
            _ = progress?(1)
            result.videoEncoder = videoEncoder?.backendName
            result.videoFrames = videoFrames
            result.videoPackets = videoPackets
            return result
        } catch {
            muxer?.cancel()
            throw error
        }
    }
}
