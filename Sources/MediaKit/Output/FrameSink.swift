import Foundation

/// Where decoded frames go as raw bytes: the raw outputs of `mk-decode` and `mk_decode_file`
/// (PCM, WAV, NV12 / I420, Y4M), one family of writers made by ``FrameSinkFormat``s of the
/// catalogue. Written to a temporary name and renamed by ``finish()``.
public protocol FrameSink: AnyObject {
    /// Writes one frame: an audio frame's samples converted to the sink's sample type, or a
    /// picture packed.
    func write(_ frame: Frame) throws
    /// Completes the file and moves it to its final name.
    func finish() throws
    /// Abandons the file and removes what was written.
    func cancel()
}

/// A sink of audio frames.
public protocol AudioFrameSink: FrameSink {
    /// Writes sample frames `[from, from + count)` of `frame` (count nil: to its end).
    func write(_ frame: Frame, from: Int, count: Int?) throws
    /// Writes samples an ``AudioConverter`` made, already in the sink's format.
    func write(_ buffer: AudioBuffer) throws
    /// Sample frames written.
    var sampleFrames: Int64 { get }
    /// The rate and channels written.
    var sampleRate: Int { get }
    var channels: Int { get }
}

/// A sink of pictures.
public protocol PictureFrameSink: FrameSink {
    /// Pictures written.
    var frames: Int { get }
    /// The size written (after turning upright), once a picture was.
    var size: (width: Int, height: Int)? { get }
    /// The frame rate the file states.
    var frameRate: Rational { get }
}

/// What an audio ``FrameSinkFormat`` makes its sink for.
public struct AudioSinkSettings: Sendable {
    /// The sample type written.
    public var sampleType: SampleFormat
    /// Sample rate and channels.
    public var sampleRate: Int, channels: Int
    /// The WAVE channel mask (0: none stated).
    public var channelMask: UInt64

    /// Settings for `channels` of `sampleType` at `sampleRate`.
    public init(sampleType: SampleFormat, sampleRate: Int, channels: Int, channelMask: UInt64 = 0) {
        self.sampleType = sampleType
        self.sampleRate = sampleRate
        self.channels = channels
        self.channelMask = channelMask
    }
}

/// What a picture ``FrameSinkFormat`` makes its sink for.
public struct PictureSinkSettings: Sendable {
    /// The raw layout written (NV12 or I420; Y4M writes I420).
    public var pixelFormat: PixelFormat
    /// The frame rate stated (Y4M) or reported.
    public var frameRate: Rational
    /// How pictures are turned upright.
    public var orientation: PictureOrientation
    /// Full-range pictures are written full range (default false: brought to limited range);
    /// see ``PicturePipeline/keepsFullRange``.
    public var keepsFullRange = false

    /// Settings for `pixelFormat` pictures.
    public init(pixelFormat: PixelFormat = .nv12, frameRate: Rational = Rational(25, 1), orientation: PictureOrientation = .upright) {
        self.pixelFormat = pixelFormat
        self.frameRate = frameRate
        self.orientation = orientation
    }
}

/// A raw output MediaKit writes decoded frames to: static facts and factories, registered once
/// in ``ContainerCatalog`` next to the muxers (``ContainerCatalog/frameSinkFormats``).
public struct FrameSinkFormat: Sendable {
    /// Short name ("pcm", "wav", "rawvideo", "y4m").
    public let name: String
    /// What a person calls it.
    public let description: String
    /// File name extensions that select it, lower case, without the dot.
    public let extensions: [String]
    /// Audio or video.
    public let mediaType: MediaType
    private let audioFactory: (@Sendable (String, AudioSinkSettings) throws -> AudioFrameSink)?
    private let pictureFactory: (@Sendable (String, PictureSinkSettings) throws -> PictureFrameSink)?

    /// An audio sink format.
    public init(name: String, description: String, extensions: [String],
                makeAudio: @escaping @Sendable (_ path: String, _ settings: AudioSinkSettings) throws -> AudioFrameSink) {
        self.name = name
        self.description = description
        self.extensions = extensions
        self.mediaType = .audio
        self.audioFactory = makeAudio
        self.pictureFactory = nil
    }

    /// A picture sink format.
    public init(name: String, description: String, extensions: [String],
                makePicture: @escaping @Sendable (_ path: String, _ settings: PictureSinkSettings) throws -> PictureFrameSink) {
        self.name = name
        self.description = description
        self.extensions = extensions
        self.mediaType = .video
        self.audioFactory = nil
        self.pictureFactory = makePicture
    }

    /// An audio sink writing `path`.
    /// - Throws: `.invalidArgument` for a picture format; the writer's errors (`.io`).
    public func makeAudio(path: String, settings: AudioSinkSettings) throws -> AudioFrameSink {
        guard let audioFactory else { throw MediaError(.invalidArgument, "\(description) holds pictures, not audio", path: path) }
        return try audioFactory(path, settings)
    }

    /// A picture sink writing `path`.
    /// - Throws: `.invalidArgument` for an audio format; the writer's errors (`.io`, `.unsupported`).
    public func makePicture(path: String, settings: PictureSinkSettings) throws -> PictureFrameSink {
        guard let pictureFactory else { throw MediaError(.invalidArgument, "\(description) holds audio, not pictures", path: path) }
        return try pictureFactory(path, settings)
    }
}

extension FrameSinkFormat {
    /// Raw interleaved PCM, no header.
    public static let pcm = FrameSinkFormat(name: "pcm", description: "raw PCM", extensions: ["pcm", "raw"]) { path, s in
        try PCMWriter(path: path, sampleType: s.sampleType, sampleRate: s.sampleRate, channels: s.channels, channelMask: s.channelMask, wav: false)
    }
    /// WAVE: PCM with a RIFF header (WAVE_FORMAT_EXTENSIBLE beyond 2 channels or 16 bits).
    public static let wav = FrameSinkFormat(name: "wav", description: "WAV", extensions: ["wav"]) { path, s in
        try PCMWriter(path: path, sampleType: s.sampleType, sampleRate: s.sampleRate, channels: s.channels, channelMask: s.channelMask, wav: true)
    }
    /// Raw pictures, NV12 or I420, no header.
    public static let rawVideo = FrameSinkFormat(name: "rawvideo", description: "raw NV12 / I420 pictures", extensions: ["yuv", "nv12", "i420"]) { path, s in
        try PictureWriter(path: path, format: s.pixelFormat, y4m: false, frameRate: s.frameRate, orientation: s.orientation, keepsFullRange: s.keepsFullRange)
    }
    /// YUV4MPEG2 (I420 pictures with a stream header and a FRAME line each).
    public static let y4m = FrameSinkFormat(name: "y4m", description: "YUV4MPEG2", extensions: ["y4m"]) { path, s in
        try PictureWriter(path: path, format: s.pixelFormat, y4m: true, frameRate: s.frameRate, orientation: s.orientation, keepsFullRange: s.keepsFullRange)
    }
}

extension ContainerCatalog {
    /// The raw outputs MediaKit writes decoded frames to: PCM, WAV, raw pictures, Y4M.
    public static let builtInFrameSinks: [FrameSinkFormat] = [.pcm, .wav, .rawVideo, .y4m]

    /// The raw output formats (``builtInFrameSinks``).
    public var frameSinkFormats: [FrameSinkFormat] { Self.builtInFrameSinks }

    /// The raw output format named `name` ("wav"), or nil.
    public func frameSinkFormat(named name: String) -> FrameSinkFormat? { frameSinkFormats.first { $0.name == name } }

    /// The raw output format of `mediaType` whose extensions hold `path`'s, or nil.
    public func frameSinkFormat(forPath path: String, mediaType: MediaType) -> FrameSinkFormat? {
        let ext = (path as NSString).pathExtension.lowercased()
        return frameSinkFormats.first { $0.mediaType == mediaType && $0.extensions.contains(ext) }
    }
}
