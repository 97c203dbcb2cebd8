import Foundation

/// Writes pictures and PCM into a new movie, encoding them on the way: AVAssetWriter with
/// output settings. The container comes from the path's extension through the muxer catalogue
/// (``ContainerCatalog/requireMuxerFormat(forPath:)``: .mp4, .mov, .mkv, .webm ...); the video
/// is encoded by a ``VideoEncodingConverter`` (any pixel format in, converted), the audio by an
/// ``AudioEncodingConverter``; the packets of the two tracks are interleaved by time; an MP4
/// gets the edit lists that present the first picture at 0 despite the B-frame delay and cut
/// the audio encoder's priming and padding. Pictures are timed by their pts, so the frame rate
/// may vary.
///
/// ```swift
/// let writer = try AssetWriter(path: "out.mp4",
///                              video: AssetWriter.VideoSettings(VideoEncoderSettings(codec: "h264", crf: 23),
///                                                               width: 1280, height: 720, frameRate: Rational(30, 1)),
///                              audio: AssetWriter.AudioSettings(EncoderSettings(codec: "aac"),
///                                                               input: AudioFormat(.f32, sampleRate: 48000, channels: 2)))
/// try writer.appendVideo(picture)             // pts in its time base; none: the next frame
/// try writer.appendAudio(samples)             // an AudioBuffer in the input format
/// try writer.finish()
/// ```
///
/// Until ``finish()`` the file is written under a temporary name (the muxer's), so the path
/// never holds half a file; ``cancel()``, a failed ``finish()`` or a writer dropped unfinished
/// leave nothing. One thread at a time.
public final class AssetWriter {
    /// The video track's settings: the encoder's, the coded size, the frame rate.
    public struct VideoSettings: Sendable {
        /// The encoder and its options (codec, CRF / QP / bit rate, preset, GOP, B-frames ...).
        public var encoder: VideoEncoderSettings
        /// The coded picture size; pictures of another size are scaled to it.
        public var width: Int, height: Int
        /// The nominal frame rate; pictures without a pts follow each other at it (with a
        /// ``timeBase`` of its own, one tick of it: give such pictures their pts).
        public var frameRate: Rational
        /// The unit of the pictures' pts when they have none of their own; nil (the default):
        /// 1 / frame rate. Give a finer one (1/1000, 1/90000) for a variable frame rate: the
        /// encoder then keeps the pts as given instead of counting frames.
        public var timeBase: Rational?
        /// The pixel format coded; nil (the default): the encoder's first (yuv420p for libx264).
        public var pixelFormat: PixelFormat?

        /// Settings for `encoder` at `width` x `height` and `frameRate`; the rest default.
        public init(_ encoder: VideoEncoderSettings, width: Int, height: Int, frameRate: Rational,
                    timeBase: Rational? = nil, pixelFormat: PixelFormat? = nil) {
            self.encoder = encoder
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.timeBase = timeBase
            self.pixelFormat = pixelFormat
        }
    }

    /// The audio track's settings: the encoder's, and the PCM appended.
    public struct AudioSettings: Sendable {
        /// The encoder and its options (codec, bit rate, quality ...).
        public var encoder: EncoderSettings
        /// The PCM given to ``AssetWriter/appendAudio(_:)``.
        public var input: AudioFormat
        /// The coded rate and channels; nil (the default): the input's when the encoder takes them.
        public var sampleRate: Int?, channels: Int?

        /// Settings for `encoder` taking PCM in `input`.
        public init(_ encoder: EncoderSettings, input: AudioFormat, sampleRate: Int? = nil, channels: Int? = nil) {
            self.encoder = encoder
            self.input = input
            self.sampleRate = sampleRate
            self.channels = channels
        }
    }

    /// The path written on ``finish()``.
    public let path: String
    /// The video encoder, when there is a video track.
    public let video: VideoEncodingConverter?
    /// The audio encoder, when there is an audio track.
    public let audio: AudioEncodingConverter?
    private let format: MuxerFormat
    private var muxer: Muxer?
    private var videoTrack = -1, audioTrack = -1
    /// Packets waiting to be interleaved (and, before the muxer opens, for its first packets).
    private var pendingVideo: [Packet] = [], pendingAudio: [Packet] = []
    private var lastAudio: Packet?
    private var done = false
    /// Where writing stands (AVAssetWriter's `status`): `.unknown` until the first append,
    /// `.writing`, then `.completed` after ``finish()``, `.failed` after an error (which cancelled
    /// the writer: ``error``), `.cancelled` after ``cancel()``.
    public private(set) var status: AssetStatus = .unknown
    /// The error that made ``status`` `.failed` (AVAssetWriter's `error`); nil otherwise.
    public private(set) var error: MediaError?
    /// True once ``markVideoAsFinished()`` was called (AVAssetWriterInput's `markAsFinished()`).
    public private(set) var isVideoFinished = false
    /// True once ``markAudioAsFinished()`` was called.
    public private(set) var isAudioFinished = false
    /// Packets of one track held at most while waiting for the other's to interleave with (a
    /// caller that writes all the video first, then the audio, gets them one after the other):
    /// memory stays bounded.
    private static let maxPending = 256

    /// Opens a writer for `path` with a video track, an audio track or both.
    /// - Throws: `.invalidArgument` with neither; `.unsupported` for an extension no muxer
    ///   writes or a codec the container cannot carry (naming why); the encoders' errors.
    public init(path: String, video: VideoSettings?, audio: AudioSettings?, registry: MediaRegistry = .shared) throws {
        guard video != nil || audio != nil else {
            throw MediaError(.invalidArgument, "an asset writer needs a video or an audio track", path: path)
        }
        format = try ContainerCatalog.shared.requireMuxerFormat(forPath: path)
        let ext = (path as NSString).pathExtension.lowercased()
        if let a = audio, let why = format.refusal(of: a.encoder.codec) {
            throw MediaError(.unsupported, ".\(ext) (\(format.description)) cannot carry \(a.encoder.codec): \(why)", path: path)
        }
        self.path = path
        if let v = video {
            guard v.frameRate.numerator > 0, v.frameRate.denominator > 0 else {
                throw MediaError(.invalidArgument, "the video frame rate \(v.frameRate) must be positive", path: path)
            }
            guard let pixel = v.pixelFormat ?? VideoEncodingConverter.defaultPixelFormat(for: v.encoder.codec, registry: registry) else {
                _ = try registry.makeVideoEncoder(v.encoder, input: VideoFormat(pixelFormat: .yuv420p, width: 16, height: 16, timeBase: Rational(1, 25)))
                throw MediaError(.notFound, "no video encoder named or writing '\(v.encoder.codec)'", path: path)
            }
            let base = v.timeBase ?? Rational(v.frameRate.denominator, v.frameRate.numerator)
            // A time base of its own means variable frame rate: the encoder works in it.
            let out = VideoFormat(pixelFormat: pixel, width: v.width, height: v.height, timeBase: base,
                                  frameRate: v.timeBase == nil ? v.frameRate : Rational(0, 1))
            self.video = try VideoEncodingConverter(v.encoder, output: out, registry: registry)
        } else {
            self.video = nil
        }
        if let a = audio {
            self.audio = try AudioEncodingConverter(from: a.input, to: a.encoder, sampleRate: a.sampleRate, channels: a.channels, registry: registry)
        } else {
            self.audio = nil
        }
    }

    deinit {
        if !done { muxer?.cancel() }
    }

    /// Encodes one picture (any pixel format and size: converted). Its pts is in its own time
    /// base; ``Packet/noTimestamp``: the previous picture's plus one frame (0 for the first).
    /// - Throws: `.state` without a video track or after ``finish()`` / ``cancel()``; the
    ///   converter's, encoder's and muxer's errors (the writer is then cancelled).
    public func appendVideo(_ frame: Frame, forceKeyFrame: Bool = false) throws {
        guard let video else { throw MediaError(.state, "the asset writer has no video track", path: path) }
        try guardOpen()
        if isVideoFinished { throw MediaError(.state, "the video track was marked finished: no picture may follow", path: path) }
        try cancelling {
            try video.send(frame, forceKeyFrame: forceKeyFrame)
            while let p = try video.receive() { pendingVideo.append(p) }
            try drain(final: false)
        }
    }

    /// Encodes PCM in the audio settings' input format (converted to what the encoder takes).
    /// - Throws: `.state` without an audio track or after ``finish()`` / ``cancel()``; the
    ///   converter's, encoder's and muxer's errors (the writer is then cancelled).
    public func appendAudio(_ buffer: AudioBuffer) throws {
        guard let audio else { throw MediaError(.state, "the asset writer has no audio track", path: path) }
        try guardOpen()
        if isAudioFinished { throw MediaError(.state, "the audio track was marked finished: no sample may follow", path: path) }
        try cancelling {
            for p in try audio.encode(buffer) { queueAudio(p) }
            try drain(final: false)
        }
    }

    /// Flushes the encoders, writes what is left, the edit lists and the index, and gives the
    /// file its name.
    /// - Throws: `.state` when nothing was appended to a track or after ``cancel()``; the
    ///   encoders' and muxer's errors (nothing is then left under ``path``).
    public func finish() throws {
        try guardOpen()
        try cancelling {
            if let video {
                try video.flush()
                while let p = try video.receive() { pendingVideo.append(p) }
            }
            if let audio { for p in try audio.finish() { queueAudio(p) } }
            if let video, video.framesSent == 0 {
                throw MediaError(.state, "no picture was appended to the video track", path: path)
            }
            if let audio, audio.encoder.inputSampleCount == 0 {
                throw MediaError(.state, "no sample was appended to the audio track", path: path)
            }
            try drain(final: true)
            guard let m = muxer else { throw MediaError(.state, "nothing was written", path: path) }
            if let audio, var last = lastAudio {
                // The muxer hears of the end padding before the last packet (as the transcoder writes it).
                let trim = audio.gaplessTrim(lastPacket: last)
                try m.setGapless(track: audioTrack, presentedDuration: trim.samples, padding: trim.padding)
                last.trackIndex = audioTrack
                try m.write(last)
                lastAudio = nil
                try m.updateParameters(audio.encoder.parameters, track: audioTrack)
            }
            try m.finish()
            done = true
            status = .completed
        }
    }

    /// Marks the video track finished (AVAssetWriterInput's `markAsFinished()`): later pictures
    /// are refused with `.state`; ``finish()`` completes the file.
    public func markVideoAsFinished() { isVideoFinished = true }

    /// Marks the audio track finished: later samples are refused with `.state`.
    public func markAudioAsFinished() { isAudioFinished = true }

    /// Stops writing and removes what was written. Harmless after ``finish()`` or a second time.
    public func cancel() {
        if !done {
            muxer?.cancel()
            status = .cancelled
        }
        done = true
    }

    private func guardOpen() throws {
        if done { throw MediaError(.state, "the asset writer is finished or cancelled", path: path) }
    }

    /// Runs `body`; on an error cancels the writer (nothing left under the path) and rethrows.
    private func cancelling(_ body: () throws -> Void) throws {
        if status == .unknown { status = .writing }
        do { try body() } catch {
            cancel()
            self.error = error as? MediaError ?? MediaError(.io, "\(error)", path: path)
            status = .failed
            throw error
        }
    }


    /// Audio packets go one behind, so that the muxer is told the end padding before the last
    /// one (as the transcoder writes them).
    private func queueAudio(_ p: Packet) {
        if let prev = lastAudio { pendingAudio.append(prev) }
        lastAudio = p
    }

    /// Opens the muxer once each track has its first packet (a muxer may build its codec
    /// configuration from it), then writes the pending packets in time order: the earliest
    /// dts first while both tracks have one waiting; everything at the end (`final`), or when
    /// one track ran far ahead of the other.
    private func drain(final: Bool) throws {
        if muxer == nil {
            // The video's first packet may be needed for its codec configuration (vpcC, av1C): the
            // file opens with it. Audio far ahead of the first picture opens it without, where the
            // muxer can do without (H.264, HEVC into MP4 ...); the audio track needs only its encoder.
            let early = video != nil && pendingVideo.isEmpty
            guard !early || pendingAudio.count > Self.maxPending else { return }
            let m = try format.make(path: path)
            muxer = m
            if let video {
                let e = video.encoder
                let t = Track(index: 0, id: 1, parameters: e.parameters, timeBase: e.timeBase, duration: 0)
                if early && m.needsFirstPacket(t) {
                    throw MediaError(.state, "\(pendingAudio.count) audio packets were written before the first picture, and this "
                                     + "container builds the \(e.parameters.codec) configuration from the first video packet: "
                                     + "append pictures as you go", path: path)
                }
                videoTrack = try m.addTrack(from: t, firstPacket: pendingVideo.first?.data)
            }
            if let audio {
                let e = audio.encoder
                audioTrack = try m.addEncodedTrack(e.parameters, timeBase: e.timeBase, encoderDelay: e.encoderDelay)
            }
        }
        guard let m = muxer else { return }
        while true {
            let v = pendingVideo.first, a = pendingAudio.first
            let takeVideo: Bool
            switch (v, a) {
            case (nil, nil): return
            case (.some, nil):
                guard final || audio == nil || pendingVideo.count > Self.maxPending else { return }
                takeVideo = true
            case (nil, .some):
                guard final || video == nil || pendingAudio.count > Self.maxPending else { return }
                takeVideo = false
            case (.some(let pv), .some(let pa)):
                takeVideo = Self.seconds(pv.dts, pv.timeBase) <= Self.seconds(pa.dts, pa.timeBase)
            }
            var p = takeVideo ? pendingVideo.removeFirst() : pendingAudio.removeFirst()
            p.trackIndex = takeVideo ? videoTrack : audioTrack
            try m.write(p)
        }
    }

    private static func seconds(_ t: Int64, _ base: Rational) -> Double {
        Double(t) * base.doubleValue
    }
}

extension AudioEncodingConverter {
    /// The samples the encoded stream presents (the input's, in the packets' time base) and the
    /// padding after them, given the end of the last packet (pts + duration): what
    /// ``Muxer/setGapless(track:presentedDuration:padding:)`` takes. A packet decodes to a
    /// whole frame even when the encoder states a shorter last duration.
    func gaplessTrim(lastPacket: Packet?) -> (samples: Int64, padding: Int64) {
        let enc = encoder
        let inputRate = Int64(enc.inputFormat.sampleRate)
        let scale = enc.timeBase
        let samples = Rational.rescale(enc.inputSampleCount, multiply: scale.denominator, divide: inputRate * scale.numerator)
        let frameTicks = Rational.rescale(Int64(enc.frameSize), multiply: scale.denominator, divide: inputRate * scale.numerator)
        let coded = lastPacket.map { $0.pts + max($0.duration, frameTicks) } ?? 0
        return (samples, max(0, coded - Int64(enc.encoderDelay) - samples))
    }
}
