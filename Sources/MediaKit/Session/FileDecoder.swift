import Foundation

/// What ``FileDecoder`` writes and how.
public struct FileDecodeOptions: Sendable {
    /// Where the first audio track goes (raw PCM, or WAV with ``wav``); nil: audio is not decoded.
    public var audioPath: String?
    /// Where the first video track goes (raw frames, or Y4M with ``y4m``); nil: video is not decoded.
    public var videoPath: String?
    /// Raw video layout. Default: ``PixelFormat/nv12``.
    public var pixelFormat: PixelFormat = .nv12
    /// Full-range pictures are written full range (NV12 / I420 of a full-range stream; as
    /// `ffmpeg -vf scale=out_range=full`). Default false: brought to limited range, as
    /// `ffmpeg -pix_fmt`. See ``PicturePipeline/keepsFullRange``.
    public var keepsFullRange = false
    /// PCM layout. Default: ``SampleFormat/s16``.
    public var sampleFormat: SampleFormat = .s16
    /// PCM sample type, any of ``SampleFormat`` (overrides ``sampleFormat``). Default: nil.
    public var sampleType: SampleFormat?
    /// Resample the audio to this rate with an ``AudioConverter``. Default: nil (the source's rate).
    public var sampleRate: Int?
    /// Mix the audio to these channels (as `ffmpeg -ac` mixes, see ``ChannelMix``). Default:
    /// nil (the source's channels).
    public var channelLayout: ChannelLayout?
    /// Resampler preset when ``sampleRate`` changes the rate. Default: ``ResampleQuality/medium``.
    public var resampleQuality: ResampleQuality = .medium

    /// The sample type written: ``sampleType``, else ``sampleFormat``'s.
    public var writtenSampleType: SampleFormat { sampleType ?? sampleFormat }
    /// Write the audio as WAV. Default: false (raw PCM).
    public var wav = false
    /// Write the video as YUV4MPEG2. Default: false (raw frames).
    public var y4m = false
    /// How tracks are cut to what is presented. Default: ``TrimMode/gapless`` (the edit list
    /// applied as FFmpeg applies it, audio ending exactly where the file says).
    public var trim: TrimMode = .gapless
    /// Turn pictures upright by the display matrix (rotation and reflection), as ffmpeg does. Default: true.
    public var autorotate = true
    /// Decoder backend or plugin name to insist on. Default: nil (highest priority).
    public var backend: String?
    /// Decoder threads. Default: 0 (every core).
    public var threads = 0
    /// Start at this presentation time, in seconds, sample-accurately (as `ffmpeg -ss T -i`):
    /// the first picture written is the one presented at that time, the audio starts at its
    /// exact sample. Default: nil (the start).
    public var seek: Double?
    /// Write at most this many pictures. Default: nil (all).
    public var maxVideoFrames: Int?
    /// Write at most this many seconds of audio (exactly `round(seconds * rate)` sample frames).
    /// Default: nil (all).
    public var maxAudioDuration: Double?
    /// When only video is decoded: decode it on a thread of its own (``AsyncDecodeSession``)
    /// while the calling thread hands the frames to the writer. Same output. Default: false.
    public var asyncVideo = false

    /// Options that write the given outputs with every default.
    public init(audioPath: String? = nil, videoPath: String? = nil) {
        self.audioPath = audioPath
        self.videoPath = videoPath
    }
}

/// What ``FileDecoder`` wrote.
public struct FileDecodeResult: Sendable {
    /// The video output, if any, with the pictures written, their size and frame rate.
    public var video: (path: String, frames: Int, width: Int, height: Int, frameRate: Rational)?
    /// The audio output, if any, with the sample frames written, rate and channels.
    public var audio: (path: String, samples: Int64, sampleRate: Int, channels: Int)?
    /// The options used.
    public var options: FileDecodeOptions
    /// Where the input was cut short (a `.truncated` error naming the offset), if it was: the
    /// outputs then hold everything decoded up to the cut, as ffmpeg's do.
    public var truncation: MediaError?
    /// Everything stepped over without failing, oldest first: the demuxer's skipped damage
    /// (``Demuxer/warnings``), the cut (``truncation``) and a cut packet the decoder rejected.
    public var warnings: [MediaError] = []
    /// The recoveries from damaged data of both tracks (see ``DecodeSession/RecoveryPolicy``), in
    /// the order of each track.
    public var recoveries: [DecodeSession.Recovery] = []
    /// Decoder rebuilds of both tracks.
    public var rebuilds = 0

    /// One line that sums up the damage stepped over, nil when there was none.
    public var damageSummary: String? {
        guard !recoveries.isEmpty else { return nil }
        let damage = recoveries.filter { $0.error.kind != .sessionInvalidated }
        let invalidated = recoveries.count - damage.count
        let skipped = damage.filter { $0.pts != Packet.noTimestamp }.count
        let lost = damage.reduce(0) { $0 + $1.framesLost }
        return "damaged input: \(skipped) packet(s) the decoder rejected were skipped (\(lost) frame(s) lost), "
            + "\(damage.count - skipped) frame(s) could not be received, \(rebuilds) decoder rebuild(s)"
            + (invalidated > 0 ? ", \(invalidated) time(s) the decoder was invalidated (not damage: rebuilt, nothing lost)" : "")
    }

    /// The `ffplay` command that plays each output.
    public var ffplayCommands: [String] {
        var out: [String] = []
        if let v = video {
            if options.y4m {
                out.append("ffplay \(Self.quote(v.path))")
            } else {
                let fmt = options.pixelFormat.name
                out.append("ffplay -f rawvideo -pixel_format \(fmt) -video_size \(v.width)x\(v.height) -framerate \(v.frameRate.numerator)/\(v.frameRate.denominator) \(Self.quote(v.path))")
            }
        }
        if let a = audio {
            if options.wav {
                out.append("ffplay \(Self.quote(a.path))")
            } else {
                // FFmpeg's raw format of the samples; 24 bits aligned low play as s32 raised by 8 bits.
                let t = options.writtenSampleType.interleaved
                let raw: String
                switch t {
                case .u8, .s8: raw = t.typeName
                case .s24In32High: raw = "s32le"
                case .s24In32Low: raw = "s32le -af volume=256"
                default: raw = t.isBigEndian ? t.typeName : t.typeName + "le"
                }
                out.append("ffplay -f \(raw) -ar \(a.sampleRate) -ac \(a.channels) \(Self.quote(a.path))")
            }
        }
        return out
    }

    static func quote(_ s: String) -> String {
        s.allSatisfy({ $0.isLetter || $0.isNumber || "/._-+=:,".contains($0) }) ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

/// Decodes the first audio and the first video track of a file to raw outputs:
/// the pipeline of `mk-decode` and of the C function `mk_decode_file`.
///
/// Outputs are written through temporary files and renamed at the end, so a
/// failure never leaves a partial file under an output's name.
public enum FileDecoder {
    /// Decodes `path` as `options` say.
    ///
    /// A file cut short is decoded as far as it goes, as ffmpeg decodes it: the packets before
    /// the cut (and the partial one ffmpeg's demuxer returns) are decoded, the outputs are
    /// completed, and the cut is reported in ``FileDecodeResult/truncation`` and
    /// ``FileDecodeResult/warnings`` instead of being thrown.
    /// - Parameters:
    ///   - progress: called now and then with (seconds decoded, total seconds); an error it throws
    ///     stops the decoding (nothing is left under the output paths) and is rethrown.
    /// - Throws: ``MediaError``: the demuxer's, the registry's (no decoder), a track that
    ///   is missing (`.notFound`), a picture format that cannot be written exactly
    ///   (`.unsupported`), or an I/O error.
    public static func decode(path: String, options: FileDecodeOptions, registry: MediaRegistry = .shared,
                              progress: ((Double, Double) throws -> Void)? = nil) throws -> FileDecodeResult {
        try decode(demuxer: registry.makeDemuxer(path: path), path: path, options: options, registry: registry, progress: progress)
    }

    /// Decodes from a demuxer already open (at its start), as `options` say; `path` names the
    /// input in messages. `mk-decode` opens its input once this way.
    public static func decode(demuxer: Demuxer, path: String, options: FileDecodeOptions, registry: MediaRegistry = .shared,
                              progress: ((Double, Double) throws -> Void)? = nil) throws -> FileDecodeResult {
        let audioTrack = demuxer.tracks.first { $0.mediaType == .audio }
        let videoTrack = demuxer.tracks.first { $0.mediaType == .video }
        func describe() -> String {
            demuxer.tracks.isEmpty ? "none" : demuxer.tracks.map { "#\($0.index) \($0.mediaType.rawValue) \($0.parameters.codec.isUnknown ? $0.parameters.codecTag : $0.parameters.codec.rawValue)" }.joined(separator: ", ")
        }
        if options.audioPath != nil && audioTrack == nil {
            throw MediaError(.notFound, "the file has no audio track (tracks: \(describe()))", path: path)
        }
        if options.videoPath != nil && videoTrack == nil {
            throw MediaError(.notFound, "the file has no video track (tracks: \(describe()))", path: path)
        }
        if options.audioPath == nil && options.videoPath == nil {
            throw MediaError(.invalidArgument, "no output named: give an audio or a video output path", path: path)
        }

        // The raw outputs come from the catalogue's frame sinks, by name.
        let catalog = ContainerCatalog.shared
        let audioSink = catalog.frameSinkFormat(named: options.wav ? "wav" : "pcm")
        let videoSink = catalog.frameSinkFormat(named: options.y4m ? "y4m" : "rawvideo")
        func makeAudio(_ settings: AudioSinkSettings) throws -> AudioFrameSink {
            guard let audioSink else { throw MediaError(.unsupported, "the catalogue has no \(options.wav ? "WAV" : "PCM") writer", path: options.audioPath) }
            return try audioSink.makeAudio(path: options.audioPath!, settings: settings)
        }
        var audio: (track: Track, session: DecodeSession, writer: AudioFrameSink?)?
        var video: (track: Track, session: DecodeSession, writer: PictureFrameSink)?
        if let out = options.videoPath, let t = videoTrack {
            let session = try DecodeSession(track: t, registry: registry, backend: options.backend, threads: options.threads, trim: options.trim)
            // One thread reads the demuxer and feeds the session (this one, or the async
            // session's): the GOP kept for a rebuild can be positions read again.
            session.rereader = demuxer as? PacketRereading
            let orientation = options.autorotate ? t.orientation : .upright
            let rate = t.frameRate.numerator > 0 && t.frameRate.denominator > 0 ? t.frameRate : Rational(25, 1)
            guard let videoSink else { throw MediaError(.unsupported, "the catalogue has no \(options.y4m ? "Y4M" : "raw picture") writer", path: out) }
            var settings = PictureSinkSettings(pixelFormat: options.pixelFormat, frameRate: rate, orientation: orientation)
            settings.keepsFullRange = options.keepsFullRange
            video = (t, session, try videoSink.makePicture(path: out, settings: settings))
        }
        if options.audioPath != nil, let t = audioTrack {
            audio = (t, try DecodeSession(track: t, registry: registry, backend: options.backend, threads: options.threads, trim: options.trim), nil)
        }
        demuxer.select(tracks: Set([audio?.track.index, video?.track.index].compactMap { $0 }))
        if let t = options.seek {
            try demuxer.seekForDecoding(to: max(0, t - (audio != nil ? DecodeSession.seekPreroll : 0)))
            try video?.session.seek(to: t)
            try audio?.session.seek(to: t)
        }
        var videoDone = false, audioDone = false
        func writeVideo(_ frame: Frame) throws {
            guard !videoDone else { return }
            try video!.writer.write(frame)
            if let n = options.maxVideoFrames, video!.writer.frames >= n { videoDone = true }
        }
        /// Sample frames still to write when the audio is limited; nil: no limit yet known.
        var audioLeft: Int64?
        func limitAudio(rate: Int) {
            if audioLeft == nil, let d = options.maxAudioDuration { audioLeft = Int64((d * Double(rate)).rounded()) }
        }
        let total = max(audio?.track.durationSeconds ?? 0, video?.track.durationSeconds ?? 0)

        // With a rate or channel layout asked for, frames go through a FrameAudioConverter to
        // one fixed output format (a change of the source's format mid-stream drains one
        // converter and starts another to the same output).
        var converterOptions = AudioConverter.Options()
        converterOptions.quality = options.resampleQuality
        let converter = options.sampleRate != nil || options.channelLayout != nil
            ? FrameAudioConverter(to: AudioOutputRequest(options.writtenSampleType, sampleRate: options.sampleRate, layout: options.channelLayout),
                                  options: converterOptions)
            : nil
        func writeAudio(_ frame: Frame) throws {
            guard !audioDone else { return }
            guard let converter else {
                if audio!.writer == nil {
                    audio!.writer = try makeAudio(AudioSinkSettings(sampleType: options.writtenSampleType, sampleRate: frame.sampleRate,
                                                                    channels: frame.channels, channelMask: frame.channelMask))
                }
                limitAudio(rate: frame.sampleRate)
                let count = audioLeft.map { Int(min(Int64(frame.sampleCount), $0)) } ?? frame.sampleCount
                try audio!.writer!.write(frame, from: 0, count: count)
                if let left = audioLeft { audioLeft = left - Int64(count); audioDone = audioLeft! <= 0 }
                return
            }
            let converted = try converter.convert(frame)
            if audio!.writer == nil, let d = converter.destination {
                audio!.writer = try makeAudio(AudioSinkSettings(sampleType: d.sampleType, sampleRate: d.sampleRate, channels: d.channels,
                                                                channelMask: d.layout.isMaskOrder ? d.layout.mask : 0))
            }
            try writeConverted(converted)
        }
        func writeConverted(_ buffer: AudioBuffer) throws {
            guard !audioDone else { return }
            limitAudio(rate: buffer.format.sampleRate)
            var b = buffer
            if let left = audioLeft, Int64(b.frames) > left { b = b.prefixFrames(Int(left)) }
            try audio!.writer!.write(b)
            if let left = audioLeft { audioLeft = left - Int64(b.frames); audioDone = audioLeft! <= 0 }
        }
        var truncation: MediaError?
        // Video alone, asynchronously: the session (seeked above) and the demuxer go to an
        // AsyncDecodeSession, whose thread runs the same MediaPipeline (a decode stage for the
        // track) and decodes ahead while this one writes.
        let asyncVideo = options.asyncVideo && audio == nil ? video.map { AsyncDecodeSession(demuxer: demuxer, session: $0.session) } : nil
        defer {
            asyncVideo?.cancel()
            asyncVideo?.wait()
        }
        // Progress never goes back (packets of interleaved tracks are not in time order) and
        // reaches the total once everything is decoded.
        var reached = 0.0
        func report(_ seconds: Double) throws {
            guard let progress else { return }
            reached = max(reached, total > 0 ? min(seconds, total) : seconds)
            try progress(reached, total)
        }
        do {
            if let asyncVideo {
                while !videoDone, let frame = try asyncVideo.nextFrame() {
                    try writeVideo(frame)
                    try report(Double(frame.pts) * frame.timeBase.doubleValue)
                }
                asyncVideo.cancel()
                asyncVideo.wait()
                truncation = asyncVideo.truncation
            }
            if asyncVideo == nil {
                // One pipeline: each track decoded into its writer, video finished first.
                var stages: [(track: Int, stage: PacketStage)] = []
                if let v = video { stages.append((v.track.index, DecodeStage(session: v.session, isDone: { videoDone }, output: writeVideo))) }
                if let a = audio { stages.append((a.track.index, DecodeStage(session: a.session, isDone: { audioDone }, output: writeAudio))) }
                truncation = try MediaPipeline(demuxer: demuxer, stages: stages).run { packet in
                    try report(Double(packet.dts) * packet.timeBase.doubleValue)
                }
            }
            if let converter, converter.destination != nil {
                try writeConverted(converter.flush(fallback: converter.destination!))
            }
            if audio != nil && audio!.writer == nil {
                // No samples at all: still leave an (empty) output, as ffmpeg does.
                let p = audio!.track.parameters
                audio!.writer = try makeAudio(AudioSinkSettings(sampleType: options.writtenSampleType, sampleRate: options.sampleRate ?? p.sampleRate,
                                                                channels: options.channelLayout?.count ?? max(1, p.channels)))
            }
            try report(total)
            try video?.writer.finish()
            try audio?.writer?.finish()
        } catch {
            video?.writer.cancel()
            audio?.writer?.cancel()
            throw error
        }
        var result = FileDecodeResult(video: nil, audio: nil, options: options)
        result.truncation = truncation
        result.warnings = demuxer.warnings + (truncation.map { [$0] } ?? [])
            + (video?.session.warnings ?? []) + (audio?.session.warnings ?? [])
        result.recoveries = (video?.session.recoveries ?? []) + (audio?.session.recoveries ?? [])
        result.rebuilds = (video?.session.rebuilds ?? 0) + (audio?.session.rebuilds ?? 0)
        if let v = video {
            let size = v.writer.size ?? (v.track.parameters.width, v.track.parameters.height)
            result.video = (options.videoPath!, v.writer.frames, size.width, size.height, v.writer.frameRate)
        }
        if let a = audio, let w = a.writer {
            result.audio = (options.audioPath!, w.sampleFrames, w.sampleRate, w.channels)
        }
        return result
    }
}
