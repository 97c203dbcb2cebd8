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
    /// The output muxer's options (``MuxerOptions``), given to the format that writes it
    /// (``MuxerFormat/make(path:options:)``, which refuses those it does not take): the ID3v2
    /// version of an MP3's tag (`mk-transcode --id3v2-version 3`), a WAV or AIFF ID3v2 chunk
    /// (`--write-id3v2`). Default: every option at its default.
    public var muxer = MuxerOptions()
    /// Scale the re-encoded video (``video``) to this size first (`mk-transcode --scale W:H`,
    /// as `ffmpeg -vf scale=W:H` sizes it) through the picture converter (``PictureConverter``:
    /// the FFmpeg plugin's libswscale, the bytes of the `ffmpeg` tool's scale filter); nil:
    /// the decoded size. Needs ``video``.
    public var videoScale: VideoScale?
    /// How pictures are resampled when ``videoScale`` is set (`--scale-filter`; default
    /// ``ScaleFilter/bicubic``, the `ffmpeg` tool's default).
    public var scaleFilter = ScaleFilter.bicubic
    /// Put the re-encoded video's pictures on this constant rate before they are scaled and
    /// encoded (`--fps`, as `ffmpeg -vf fps=R,scale=W:H`: ``FrameRateConverter``); nil: the
    /// decoded pictures keep their times. Needs ``video``.
    public var videoFrameRate: Rational?
    /// Copy the first audio track's packets unchanged instead of re-encoding them
    /// (`--audio-codec copy`), into any output whose muxer carries their codec; the audio
    /// encoder's settings must then be left unset.
    public var copyAudio = false
    /// Leave the audio out (`--no-audio`): the output holds the video asked for only.
    public var dropAudio = false

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
    /// True when the audio track was copied (``TranscodeOptions/copyAudio``): ``codec``,
    /// ``sampleRate`` and ``channels`` are then the track's, ``packets`` the packets copied.
    public var copiedAudio = false
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

    /// Refuses options that contradict each other, naming them.
    static func check(_ o: TranscodeOptions) throws {
        func refuse(_ why: String) throws { throw MediaError(.invalidArgument, why) }
        if o.video != nil && o.copyVideo { try refuse("the video is either re-encoded (video settings) or copied (copyVideo), not both") }
        if o.video == nil && (o.videoScale != nil || o.videoFrameRate != nil) {
            try refuse("scaling and a frame rate change need the video re-encoded (video settings): \(o.copyVideo ? "copied video cannot change" : "no video is written")")
        }
        if o.copyAudio && o.dropAudio { try refuse("the audio is either copied or left out, not both") }
        let audioSettings = [o.codec != nil ? "codec" : nil, o.bitRate != nil ? "bit rate" : nil, o.quality != nil ? "quality" : nil,
                             o.complexity != nil ? "complexity" : nil, o.application != nil ? "application" : nil,
                             o.frameDuration != nil ? "frame duration" : nil, o.sampleRate != nil ? "sample rate" : nil,
                             o.channels != nil ? "channels" : nil, o.backend != nil ? "backend" : nil].compactMap { $0 }
        if (o.copyAudio || o.dropAudio) && !audioSettings.isEmpty {
            try refuse("audio encoder settings (\(audioSettings.joined(separator: ", "))) with the audio \(o.copyAudio ? "copied" : "left out")")
        }
    }

    /// Transcodes the first audio track of `input` into `output` (or copies it:
    /// ``TranscodeOptions/copyAudio``; or leaves it out: ``TranscodeOptions/dropAudio``), with
    /// the first video track re-encoded (``TranscodeOptions/video``, put on a rate and scaled
    /// first as asked) or every video track copied (``TranscodeOptions/copyVideo``). Other
    /// tracks are left out.
    /// - Parameter progress: called now and then with the fraction done (0...1); return false to
    ///   stop (the output is then removed and `.state` "cancelled" thrown).
    /// - Throws: `.invalidArgument` for options that contradict each other (naming them);
    ///   `.notFound` for an input without audio or no encoder; `.unsupported` for an
    ///   output the codec cannot go into (naming what it takes) or settings the encoder refuses
    ///   (naming what it accepts); the demuxer's, decoder's and muxer's errors.
    @discardableResult
    public static func transcode(input: String, output: String, options: TranscodeOptions = .init(),
                                 registry: MediaRegistry = .shared, progress: ((Double) -> Bool)? = nil) throws -> TranscodeResult {
        try check(options)
        let format = try ContainerCatalog.shared.requireMuxerFormat(forPath: output)
        let ext = (output as NSString).pathExtension.lowercased()
        let (source, demuxer) = try ContainerCatalog.shared.open(ByteSources.open(path: input))
        let videoTrack = options.video != nil ? demuxer.tracks.first(where: { $0.mediaType == .video }) : nil
        if options.video != nil && videoTrack == nil {
            throw MediaError(.notFound, "the input has no video track to encode", path: input)
        }
        let firstAudio = options.dropAudio ? nil : demuxer.tracks.first(where: { $0.mediaType == .audio })
        if options.copyAudio && firstAudio == nil {
            throw MediaError(.notFound, "the input has no audio track to copy", path: input)
        }
        // The audio track re-encoded; a copied one goes through `audioCopy` instead.
        let audio = options.copyAudio ? nil : firstAudio
        let copiedAudio = options.copyAudio ? firstAudio : nil
        let videos = options.copyVideo && videoTrack == nil ? demuxer.tracks.filter { $0.mediaType == .video } : []
        guard audio != nil || copiedAudio != nil || videoTrack != nil || !videos.isEmpty else {
            throw MediaError(.notFound, options.dropAudio ? "with the audio left out there is nothing to write: the input has no video track to copy or encode"
                                                          : "the input has no audio track", path: input)
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
        demuxer.select(tracks: Set([firstAudio?.index, videoTrack?.index].compactMap { $0 } + videos.map(\.index)))
        let session = try audio.map { try DecodeSession(track: $0, registry: registry) }
        let videoSession = try videoTrack.map { try DecodeSession(track: $0, registry: registry, threads: options.video?.threads ?? 0) }
        // The demuxer is read on this thread, so the GOP kept for a rebuild can be positions.
        videoSession?.rereader = demuxer as? PacketRereading

        var muxer: Muxer?
        var converter: AudioEncodingConverter?
        var audioOut = 0
        var videoEncoder: VideoEncoder?
        var pictureConverter: PictureConverter?
        // --fps: the pictures go through the fps filter's rules before they are scaled.
        let rateConverter = try options.videoFrameRate.map { try FrameRateConverter(rate: $0) }
        // The last decoded picture's time and duration (the input's end for --fps).
        var lastPicture: (pts: Int64, duration: Int64, timeBase: Rational)?
        // The last picture converted, by its storage: a picture --fps repeats is converted once.
        var lastConverted: (storage: FrameStorage, picture: Frame)?
        // A copied audio track: its stage, and its first packet (the muxer may build the
        // track's description from it; from a clock source its time is where the audio starts).
        let audioCopy = copiedAudio.map { _ in CopyStage() }
        audioCopy?.keepsCutPackets = copiedAudio.map { PCMCodec($0.parameters.codec) != nil } ?? false
        var firstAudioData: [UInt8]?
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
            guard muxer == nil, audio == nil || converter != nil, copiedAudio == nil || firstAudioData != nil,
                  videoTrack == nil || firstVideoData != nil else { return }
            let m = try format.make(path: output, options: options.muxer)
            muxer = m
            var order: [(Int, () throws -> Void)] = []
            // Copied tracks write what they hold once every track is added.
            var binds: [() throws -> Void] = []
            if let a = audio, let enc = converter?.encoder {
                order.append((a.index, { audioOut = try m.addEncodedTrack(enc.parameters, timeBase: enc.timeBase, encoderDelay: enc.encoderDelay) }))
            }
            if let a = copiedAudio, let stage = audioCopy {
                order.append((a.index, {
                    let shift = audioStart == 0 ? 0 : Int64((audioStart / a.timeBase.doubleValue).rounded())
                    let index = try m.addTrack(from: a, firstPacket: firstAudioData)
                    audioOut = index
                    binds.append({ try stage.bind(to: m, track: index, shift: shift) })
                }))
            }
            if let v = videoTrack, let enc = videoEncoder {
                // The source's language and display matrix (the pictures are not turned).
                let t = Track(index: v.index, id: v.id, parameters: enc.parameters, timeBase: enc.timeBase, duration: 0,
                              language: v.language, matrix: v.matrix)
                order.append((v.index, { videoOut = try m.addTrack(from: t, firstPacket: firstVideoData) }))
            }
            for (_, add) in order.sorted(by: { $0.0 < $1.0 }) { try add() }
            var copiedVideo: [(source: Int, output: Int)] = []
            for (v, stage) in videoStages {
                let shift = audioStart == 0 ? 0 : Int64((audioStart / v.timeBase.doubleValue).rounded())
                let index = try m.addTrack(from: v)
                copiedVideo.append((v.index, index))
                binds.append({ try stage.bind(to: m, track: index, shift: shift) })
            }
            // The input's tags, chapters and attachments (the one place a transcode copies
            // them), before any packet.
            var kept: [(source: Int, output: Int)] = []
            if let a = audio, converter != nil { kept.append((a.index, audioOut)) }
            if let a = copiedAudio, audioCopy != nil { kept.append((a.index, audioOut)) }
            if let v = videoTrack, videoEncoder != nil { kept.append((v.index, videoOut)) }
            var metadata = options.metadata.muxMetadata(of: demuxer, tracks: kept + copiedVideo)
            if let a = audio, let enc = converter?.encoder {
                // Markers count frames of the source's rate.
                metadata = metadata.resampled(from: a.parameters.sampleRate, to: enc.parameters.sampleRate)
            }
            try m.setMetadata(metadata)
            for bind in binds { try bind() }
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
            var target = frame.pixelFormat
            if let source = frame.pixelFormat, let first = backends.first, !first.pixelFormats.contains(source) {
                target = first.pixelFormats.first
            }
            let size = try options.videoScale?.outputSize(width: frame.width, height: frame.height) ?? (frame.width, frame.height)
            // As the ffmpeg tool's scale filter: a picture of the size and format wanted passes
            // through; else one libswscale call scales and converts (--scale-filter's flags).
            if let source = frame.pixelFormat, let target, source != target || size != (frame.width, frame.height) {
                let c = try registry.makePictureConverter(from: source, to: target, width: frame.width, height: frame.height,
                                                          outputWidth: size.0, outputHeight: size.1,
                                                          filter: options.videoScale != nil ? options.scaleFilter : .bicubic,
                                                          colorRange: frame.colorRange, colorSpace: frame.colorSpace)
                pictureConverter = c
                picture = try c.convert(frame)
            }
            var input = VideoFormat(of: picture, frameRate: rateConverter?.rate ?? track.frameRate)
            if input.sampleAspectRatio.numerator == 0 { input.sampleAspectRatio = picture.sampleAspectRatio }
            videoEncoder = try registry.makeVideoEncoder(v, input: input)
        }
        /// Added to each picture's pts: the edit list's shift onto the presentation timeline (as
        /// ffmpeg's MP4 demuxer applies it), or from a clock (MPEG-TS) the first picture's time.
        var videoShift: Int64 = 0
        var videoStarted = false
        /// One picture to the encoder (after --fps): converted (scaled) when it must be, encoded.
        func encodePicture(_ frame: Frame) throws {
            guard let v = options.video, let track = videoTrack else { return }
            if videoEncoder == nil { try startVideo(with: frame, settings: v, track: track) }
            var picture = frame
            if let c = pictureConverter {
                if let last = lastConverted, last.storage === frame.storage {
                    picture = last.picture
                    picture.pts = frame.pts
                    picture.duration = frame.duration
                } else {
                    picture = try c.convert(frame)
                    lastConverted = rateConverter != nil ? (frame.storage, picture) : nil
                }
            }
            try videoEncoder!.encode(picture) { try write($0, video: true) }
            videoFrames += 1
        }
        func encodeVideo(_ frame: Frame) throws {
            guard let track = videoTrack else { return }
            if !videoStarted {
                videoStarted = true
                if source.clockTimestamps {
                    videoShift = frame.pts == Packet.noTimestamp ? 0 : -frame.pts
                } else if track.presentationOffset != .min && track.presentationOffset != .max {
                    videoShift = Rational.rescale(track.presentationOffset, from: track.timeBase, to: frame.timeBase)
                }
            }
            var frame = frame
            if frame.pts != Packet.noTimestamp { frame.pts += videoShift }
            // The decoder's aspect ratio, else the track's: the scale filter scales it.
            if frame.sampleAspectRatio.numerator == 0 { frame.sampleAspectRatio = track.parameters.sampleAspectRatio }
            if frame.pts != Packet.noTimestamp {
                // ffmpeg's fallback for a picture without a duration: one frame of the rate.
                let rate = track.frameRate
                let fallback = rate.numerator > 0 && rate.denominator > 0
                    ? Rational.rescale(1, from: Rational(rate.denominator, rate.numerator), to: frame.timeBase) : 0
                lastPicture = (frame.pts, frame.duration > 0 ? frame.duration : fallback, frame.timeBase)
            }
            if let rc = rateConverter {
                try rc.push(frame, encodePicture)
            } else {
                try encodePicture(frame)
            }
        }
        /// The end of the decoded video: the pictures --fps still holds, up to the input's end
        /// as the ffmpeg tool states it to its filters (the last picture's pts plus its
        /// duration, through microseconds as its AV_TIME_BASE, in the stream's time base).
        func finishVideo() throws {
            guard let rc = rateConverter else { return }
            let micro = Rational(1, 1_000_000)
            let end = lastPicture.map { last in
                Rational.rescale(Rational.rescale(last.pts, from: last.timeBase, to: micro) + Rational.rescale(last.duration, from: last.timeBase, to: micro),
                                 from: micro, to: last.timeBase)
            }
            try rc.finish(end: end, timeBase: lastPicture?.timeBase ?? rc.timeBase, encodePicture)
        }
        /// A copied audio track's packets: the first one (its data, and from a clock source its
        /// time) opens the muxer when the rest is ready.
        final class AudioCopyStage: PacketStage {
            let stage: CopyStage
            let first: (Packet) throws -> Void
            var seen = false
            init(_ stage: CopyStage, first: @escaping (Packet) throws -> Void) {
                self.stage = stage
                self.first = first
            }
            var isDone: Bool { false }
            func take(_ packet: Packet) throws {
                if !seen && !packet.isTruncated {
                    seen = true
                    try first(packet)
                }
                try stage.take(packet)
            }
            func finish() throws { try stage.finish() }
        }
        let audioCopyStage = audioCopy.map { stage in
            AudioCopyStage(stage) { p in
                firstAudioData = p.data
                let ts = p.pts != Packet.noTimestamp ? p.pts : p.dts
                if source.clockTimestamps && ts != Packet.noTimestamp { audioStart = Double(ts) * p.timeBase.doubleValue }
                try openIfReady()
            }
        }

        do {
            // Progress by the time of the first track written (the audio's, else the video's).
            let progressIndex = (audio ?? copiedAudio ?? videoTrack ?? videos.first)!.index
            let total = max(demuxer.duration ?? demuxer.tracks[progressIndex].durationSeconds, 0.001)
            var lastReport = -1.0
            var stages: [(track: Int, stage: PacketStage)] = []
            if let a = audio, let session { stages.append((a.index, DecodeStage(session: session, output: encode))) }
            if let a = copiedAudio, let stage = audioCopyStage { stages.append((a.index, stage)) }
            if let v = videoTrack, let videoSession { stages.append((v.index, DecodeStage(session: videoSession, output: encodeVideo))) }
            try openIfReady()   // copied tracks only: nothing to wait for
            let pipeline = MediaPipeline(demuxer: demuxer, stages: stages + videoStages.map { ($0.0.index, $0.1) })
            let truncation = try pipeline.run { packet in
                guard packet.trackIndex == progressIndex, packet.pts != Packet.noTimestamp else { return }
                let done = min(1, max(0, Double(packet.pts) * packet.timeBase.doubleValue / total))
                // Every 0.1 %: a video encode reaches the caller's cancel within a few pictures.
                if done - lastReport >= 0.001 {
                    lastReport = done
                    if progress?(done) == false { throw MediaError(.state, "cancelled") }
                }
            }
            try finishVideo()
            // The encoder's delayed pictures (x264's look-ahead: seconds at 1080p) can be cancelled too.
            if let enc = videoEncoder {
                try enc.finish { p in
                    try write(p, video: true)
                    if progress?(max(0, lastReport)) == false { throw MediaError(.state, "cancelled") }
                }
            }
            if audio != nil && converter == nil {
                throw MediaError(.invalidData, "the audio track decoded to no samples", path: input)
            }
            if videoTrack != nil && videoEncoder == nil {
                throw MediaError(.invalidData, "the video track decoded to no pictures", path: input)
            }
            if copiedAudio != nil && firstAudioData == nil {
                throw MediaError(.invalidData, "the audio track to copy has no packets", path: input)
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
            if let a = copiedAudio, let stage = audioCopy {
                result = TranscodeResult(codec: a.parameters.codec, sampleRate: a.parameters.sampleRate, channels: a.parameters.channels,
                                         samples: 0, encoderDelay: 0, packets: stage.written, truncation: truncation)
                result.copiedAudio = true
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
