import Foundation

/// A ``VideoEncoder`` with a picture converter in front: pictures of any pixel format the
/// picture converters take (NV12, I420, RGB24, 10-bit ...) and of any size are converted to
/// what the encoder codes (through a plugin's ``PictureConverter``, as `ffmpeg -pix_fmt` and
/// `-vf scale` convert them), then encoded: the video mirror of ``AudioEncodingConverter``.
/// The C API's `mk_video_encoder`, Python's `mediakit.VideoEncoder` and ``CompressionSession``
/// go through it.
///
/// ```swift
/// let enc = try VideoEncodingConverter(VideoEncoderSettings(codec: "h264", qp: 0),
///                                      output: VideoFormat(pixelFormat: .yuv420p, width: 64, height: 64,
///                                                          timeBase: Rational(1, 25), frameRate: Rational(25, 1)))
/// try enc.send(rgbPicture, forceKeyFrame: false)
/// while let p = try enc.receive() { write(p) }
/// ```
///
/// One thread at a time.
public final class VideoEncodingConverter: @unchecked Sendable {
    /// The encoder the pictures go to (its ``VideoEncoder/parameters`` hold the magic cookie).
    public let encoder: VideoEncoder
    /// What the encoder codes: pixel format, size, time base, frame rate, colour.
    public var output: VideoFormat { encoder.inputFormat }
    /// True once ``flush()`` was called.
    public private(set) var isFlushed = false
    /// Pictures sent so far.
    public private(set) var framesSent = 0
    private let registry: MediaRegistry
    private var converter: PictureConverter?
    private var lastPTS: Int64?

    /// Opens the encoder `settings` name for pictures of `output` (its pixel format is the one
    /// coded: ``defaultPixelFormat(for:registry:)`` gives the encoder's first choice).
    /// - Throws: those of ``MediaRegistry/makeVideoEncoder(_:input:)``; `.invalidArgument` for
    ///   a size or time base that is not positive.
    public init(_ settings: VideoEncoderSettings, output: VideoFormat, registry: MediaRegistry = .shared) throws {
        guard output.width > 0, output.height > 0, output.width <= 16384, output.height <= 16384 else {
            throw MediaError(.invalidArgument, "a video encoder for \(output.width)x\(output.height) pictures: width and height must be 1 to 16384")
        }
        guard output.timeBase.numerator > 0, output.timeBase.denominator > 0 else {
            throw MediaError(.invalidArgument, "a video encoder with time base \(output.timeBase): it must be positive")
        }
        self.registry = registry
        encoder = try registry.makeVideoEncoder(settings, input: output)
    }

    /// The pixel format the encoder named or picked by `codec` (a codec or encoder name, as
    /// ``VideoEncoderSettings/codec``) codes by default: the first it lists (yuv420p for
    /// libx264). Nil when no plugin has the encoder.
    public static func defaultPixelFormat(for codec: String, registry: MediaRegistry = .shared) -> PixelFormat? {
        registry.videoEncoderBackends(named: codec).first?.pixelFormats.first
    }

    /// Converts `frame` (a picture of any pixel format and size) to ``output`` when it differs,
    /// and sends it; with `forceKeyFrame` it is coded as a key frame. A frame without a pts
    /// (``Packet/noTimestamp``) is given the previous one's plus one frame (at the frame
    /// rate, else one tick); the first such frame gets 0.
    /// - Throws: `.state` after ``flush()``; `.invalidArgument` for an audio frame; the
    ///   converter's (`.notFound` when no plugin converts the format) and encoder's errors.
    public func send(_ frame: Frame, forceKeyFrame: Bool = false) throws {
        guard !isFlushed else { throw MediaError(.state, "the video encoder was flushed: no more pictures") }
        guard frame.mediaType == .video, let source = frame.pixelFormat else {
            throw MediaError(.invalidArgument, "an audio frame was given to a video encoder")
        }
        var picture = frame
        if picture.pts == Packet.noTimestamp {
            picture.timeBase = output.timeBase
            picture.pts = lastPTS.map { $0 + frameTicks } ?? 0
        } else {
            // Later frames without a pts continue from this one, in the output's time base.
            picture.pts = Rational.rescale(picture.pts, from: picture.timeBase, to: output.timeBase)
            picture.timeBase = output.timeBase
        }
        if picture.duration == 0 { picture.duration = frameTicks }
        lastPTS = picture.pts
        let o = output
        if source != o.pixelFormat || frame.width != o.width || frame.height != o.height {
            let c: PictureConverter
            if let cached = converter, cached.source == source, cached.width == frame.width, cached.height == frame.height {
                c = cached
            } else {
                c = try registry.makePictureConverter(from: source, to: o.pixelFormat, width: frame.width, height: frame.height,
                                                      outputWidth: o.width, outputHeight: o.height,
                                                      colorRange: frame.colorRange, colorSpace: frame.colorSpace)
                converter = c
            }
            let converted = try c.convert(picture)
            picture.planes = converted.planes
            picture.storage = converted.storage
            picture.pixelFormat = converted.pixelFormat
            picture.width = converted.width
            picture.height = converted.height
            picture.colorRange = o.colorRange
        }
        try encoder.send(picture, forceKeyFrame: forceKeyFrame)
        framesSent += 1
    }

    /// One frame in ``output``'s time base: 1 / frame rate when that is known, else 1 tick.
    private var frameTicks: Int64 {
        let rate = output.frameRate
        guard rate.numerator > 0, rate.denominator > 0 else { return 1 }
        return max(1, Rational.rescale(1, from: Rational(rate.denominator, rate.numerator), to: output.timeBase))
    }

    /// The next packet (pts and dts in the encoder's ``VideoEncoder/timeBase``, decoding
    /// order), ``EncoderOutput/needsInput``, or after ``flush()`` once all were received
    /// ``EncoderOutput/endOfStream``.
    public func receiveOutput() throws -> EncoderOutput { try encoder.receiveOutput() }

    /// The next packet, or nil (needs input, or drained).
    public func receive() throws -> Packet? { try encoder.receiveOutput().packet }

    /// Ends the input: the encoder releases its delayed packets. A second call does nothing.
    public func flush() throws {
        guard !isFlushed else { return }
        isFlushed = true
        try encoder.flush()
    }
}

extension Frame {
    /// A `width` x `height` picture of `format` holding a copy of the caller's planes (each a
    /// first byte and the bytes from one row to the next; ``PixelFormat/planes(width:height:)``
    /// says how many rows of how many bytes are read from each), in memory of its own with
    /// rows 64-byte aligned; colour description unspecified (as `ffmpeg -f rawvideo` reads raw
    /// pictures).
    /// - Throws: `.invalidArgument` for a size out of 1...16384, too few planes or a stride
    ///   smaller than a row.
    public init(copyingPicture format: PixelFormat, width: Int, height: Int, planes: [(base: UnsafeRawPointer, stride: Int)],
                pts: Int64, duration: Int64 = 0, timeBase: Rational) throws {
        guard (1...16384).contains(width), (1...16384).contains(height) else {
            throw MediaError(.invalidArgument, "a \(width)x\(height) picture: width and height must be 1 to 16384")
        }
        let layout = format.planes(width: width, height: height)
        guard planes.count >= layout.count else {
            throw MediaError(.invalidArgument, "a \(format.name) picture has \(layout.count) planes; \(planes.count) given")
        }
        var offsets: [Int] = [], strides: [Int] = [], total = 0
        for (i, l) in layout.enumerated() {
            guard planes[i].stride >= l.rowBytes else {
                throw MediaError(.invalidArgument, "plane \(i) of a \(width)x\(height) \(format.name) picture: stride \(planes[i].stride) is less than a row (\(l.rowBytes) bytes)")
            }
            let stride = (l.rowBytes + 63) & ~63
            offsets.append(total)
            strides.append(stride)
            total += stride * l.rows
        }
        // 64 bytes more than the rows: an encoder given the picture without a copy may read
        // a vector past the last row, as libavcodec's own buffers allow.
        let memory = UnsafeMutableRawPointer.allocate(byteCount: total + 64, alignment: 64)
        var out: [Plane] = []
        for (i, l) in layout.enumerated() {
            let dst = memory + offsets[i]
            for row in 0..<l.rows {
                (dst + row * strides[i]).copyMemory(from: planes[i].base + row * planes[i].stride, byteCount: l.rowBytes)
            }
            out.append(Plane(base: UnsafeRawPointer(dst), stride: strides[i], length: strides[i] * l.rows))
        }
        nonisolated(unsafe) let owned = memory
        self.init(mediaType: .video, pts: pts, duration: duration, timeBase: timeBase, pixelFormat: format, width: width, height: height,
                  planes: out, storage: FrameStorage(keepsPlanesUnchanged: true, release: { owned.deallocate() }))
    }
}
