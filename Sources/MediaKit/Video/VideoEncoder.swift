/// The pictures a ``VideoEncoder`` takes: their layout, size, timing and colour description.
public struct VideoFormat: Sendable, Hashable {
    /// The pixel format of the frames sent (one the backend lists in
    /// ``MediaRegistry/EncoderBackend/pixelFormats``).
    public var pixelFormat: PixelFormat
    /// The picture size in pixels.
    public var width: Int, height: Int
    /// The time base of the frames' timestamps.
    public var timeBase: Rational
    /// The nominal frame rate; `Rational(0, 1)` (the default): unknown, the encoder then
    /// works in ``timeBase``. With a rate the encoder's time base is 1 / rate, as the `ffmpeg`
    /// tool sets it for constant-rate input.
    public var frameRate = Rational(0, 1)
    /// The sample aspect ratio; `Rational(0, 1)` (the default): unknown.
    public var sampleAspectRatio = Rational(0, 1)
    /// Colour description written into the stream (defaults: unspecified).
    public var colorRange = ColorRange.unspecified
    /// Colour primaries (H.273).
    public var colorPrimaries = ColorPrimaries.unspecified
    /// Transfer characteristics (H.273).
    public var colorTransfer = ColorTransfer.unspecified
    /// Matrix coefficients (H.273).
    public var colorSpace = ColorMatrix.unspecified
    /// Chroma sample location.
    public var chromaLocation = ChromaLocation.unspecified

    /// Pictures of `pixelFormat`, `width` x `height`, timestamps in `timeBase`; the rest default.
    public init(pixelFormat: PixelFormat, width: Int, height: Int, timeBase: Rational, frameRate: Rational = Rational(0, 1)) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.timeBase = timeBase
        self.frameRate = frameRate
    }

    /// The format of `frame` (a video frame), timestamps in its time base, at `frameRate`.
    public init(of frame: Frame, frameRate: Rational = Rational(0, 1)) {
        self.init(pixelFormat: frame.pixelFormat ?? .yuv420p, width: frame.width, height: frame.height,
                  timeBase: frame.timeBase, frameRate: frameRate)
        sampleAspectRatio = frame.sampleAspectRatio
        colorRange = frame.colorRange
        colorPrimaries = frame.colorPrimaries
        colorTransfer = frame.colorTransfer
        colorSpace = frame.colorSpace
        chromaLocation = frame.chromaLocation
    }
}

/// What a ``VideoEncoder`` is asked for, as the `ffmpeg` tool's video encoder options take it.
/// Every field but the codec is optional (nil: the encoder's default, as `ffmpeg -c:v NAME`
/// has it).
public struct VideoEncoderSettings: Sendable, Hashable {
    /// The codec ("h264", "hevc", "av1", "vp9") or an encoder's name ("libx264",
    /// "libsvtav1"): an encoder name picks that encoder, a codec the one of highest priority
    /// (the one `ffmpeg -c:v CODEC` picks).
    public var codec: String
    /// Constant rate factor (`-crf`); wins over ``qp`` and ``bitRate``.
    public var crf: Double?
    /// Constant quantiser (`-qp`, or `-q:v` for encoders without a qp option); wins over ``bitRate``.
    public var qp: Double?
    /// Average bits per second (`-b:v`).
    public var bitRate: Int?
    /// The encoder's preset (`-preset`: "medium", "veryslow"; SVT-AV1 "8").
    public var preset: String?
    /// The profile (`-profile:v`: "high", "main10").
    public var profile: String?
    /// Frames between key frames at most (`-g`).
    public var gopSize: Int?
    /// B-frames in a row at most (`-bf`; 0: none).
    public var maxBFrames: Int?
    /// Encoder threads (`-threads`); nil or 0: the encoder's choice (all cores). 1 makes
    /// libx264, libx265 and libvpx deterministic.
    public var threads: Int?

    /// Settings for `codec`; the rest default.
    public init(codec: String, crf: Double? = nil, qp: Double? = nil, bitRate: Int? = nil, preset: String? = nil,
                profile: String? = nil, gopSize: Int? = nil, maxBFrames: Int? = nil, threads: Int? = nil) {
        self.codec = codec
        self.crf = crf
        self.qp = qp
        self.bitRate = bitRate
        self.preset = preset
        self.profile = profile
        self.gopSize = gopSize
        self.maxBFrames = maxBFrames
        self.threads = threads
    }
}

/// Turns pictures into packets of one compressed video stream, with libavcodec's send /
/// receive model (the video mirror of ``Encoder``). Made by
/// ``MediaRegistry/makeVideoEncoder(_:input:)`` from a plugin's encoder (plugin ABI 2.3).
///
/// ```swift
/// let encoder = try MediaRegistry.shared.makeVideoEncoder(VideoEncoderSettings(codec: "h264", crf: 23),
///                                                         input: VideoFormat(of: firstFrame, frameRate: Rational(25, 1)))
/// for frame in frames {
///     try encoder.encode(frame) { write($0) }
/// }
/// try encoder.finish { write($0) }
/// ```
///
/// Packets come in decoding order with pts and dts in ``timeBase``; with B-frames the first
/// dts is ``reorderDelay`` frames below the first pts (an MP4 muxer writes an edit list so that
/// the first picture is presented at its pts).
public protocol VideoEncoder: AnyObject {
    /// The coded stream: codec, size, aspect ratio, colour and the magic cookie
    /// (``CodecParameters/extradata``: what libavcodec's encoder gives with a global header —
    /// for libx264 / libx265 the parameter sets in Annex B form, from which the MP4 and Matroska
    /// muxers build the avcC / hvcC —, av1C's OBUs; none for VP9).
    var parameters: CodecParameters { get }
    /// The pictures the encoder takes.
    var inputFormat: VideoFormat { get }
    /// The time base of the packets' timestamps (1 / frame rate when that is known).
    var timeBase: Rational { get }
    /// Frames by which decoding runs ahead of presentation (B-frame delay).
    var reorderDelay: Int { get }
    /// The backend that encodes ("libx264").
    var backendName: String { get }
    /// Feeds one picture in ``inputFormat`` (its pts in the input's time base); with
    /// `forceKeyFrame` it is coded as a key frame. Never refuses (packets are queued).
    /// - Throws: `.invalidArgument` for a picture of another format or size, `.state` after
    ///   ``flush()``, the backend's own failures.
    func send(_ frame: Frame, forceKeyFrame: Bool) throws
    /// The next packet, ``EncoderOutput/needsInput``, or after ``flush()`` once every packet
    /// was received ``EncoderOutput/endOfStream``.
    func receiveOutput() throws -> EncoderOutput
    /// Signals the end of the input: the encoder releases its delayed packets through
    /// ``receiveOutput()``.
    func flush() throws
}

extension VideoEncoder {
    /// The next packet, or nil when there is none (needs input, or drained).
    public func receive() throws -> Packet? {
        try receiveOutput().packet
    }

    /// Sends `frame` (a key frame when `forceKeyFrame`) and passes every packet that becomes
    /// ready to `output`.
    public func encode(_ frame: Frame, forceKeyFrame: Bool = false, _ output: (Packet) throws -> Void) throws {
        try send(frame, forceKeyFrame: forceKeyFrame)
        while let p = try receive() { try output(p) }
    }

    /// Ends the input: flushes the encoder and passes its last packets to `output`.
    public func finish(_ output: (Packet) throws -> Void) throws {
        try flush()
        while let p = try receive() { try output(p) }
    }
}
