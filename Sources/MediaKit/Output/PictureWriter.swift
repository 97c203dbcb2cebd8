import Foundation

/// Writes decoded pictures as raw NV12 / I420 / yuv420p10le / P010 / packed RGB (any of
/// ``PicturePipeline/layouts``), or as a YUV4MPEG2 (Y4M) stream,
/// through a ``PicturePipeline`` (turn, convert when needed, pack).
///
/// Pictures are turned, converted, packed and written on a writer thread, so that work and
/// the file I/O overlap decoding; at most three pictures wait at a time (the frames keep the
/// decoder's memory alive until they are written). Planes that are already tightly packed
/// go to the file straight from the frame's memory.
public final class PictureWriter: PictureFrameSink, @unchecked Sendable {
    /// The packed layout written.
    public let format: PixelFormat
    /// True for Y4M (always I420 inside), false for headerless raw frames.
    public let y4m: Bool
    /// How every picture is turned before it is written (``PictureOrientation/upright``: not at all).
    public var orientation: PictureOrientation { pipeline.orientation }
    private let file: OutputFile
    /// Frames per second written into the Y4M header.
    public let frameRate: Rational
    private var headerWritten = false
    /// Pictures handed to ``write(_:)`` so far.
    public private(set) var frames = 0
    /// Width and height of the first picture as written (every later one must match).
    public private(set) var size: (width: Int, height: Int)?

    private let pipeline: PicturePipeline
    private let queue = DispatchQueue(label: "mediakit.picture-writer")
    private let slots = DispatchSemaphore(value: 3)
    private let lock = NSLock()
    private var failure: Error?
    private var scratch: [UInt8] = []   // used on `queue` only

    /// Starts writing `path`. `frameRate` goes into the Y4M header; each picture is
    /// turned by `orientation` (a track's ``Track/orientation`` turns it as ffmpeg's
    /// autorotation does), then, when its pixel format does not pack to `format` by copying
    /// samples (10-bit or 4:4:4 pictures into NV12 ...), converted by a picture converter from
    /// `registry` (the FFmpeg plugin's libswscale, as `ffmpeg -pix_fmt` converts).
    /// With `keepsFullRange`, full-range pictures are written full range (``PicturePipeline/keepsFullRange``).
    public init(path: String, format: PixelFormat, y4m: Bool, frameRate: Rational = Rational(25, 1), orientation: PictureOrientation = .upright,
                registry: MediaRegistry = .shared, keepsFullRange: Bool = false) throws {
        self.format = y4m ? .yuv420p : format
        self.y4m = y4m
        self.frameRate = frameRate
        pipeline = PicturePipeline(layout: self.format, orientation: orientation, registry: registry, keepsFullRange: keepsFullRange)
        file = try OutputFile(path: path)
    }

    /// Queues one picture for writing. An error from an earlier picture is thrown here
    /// or by ``finish()``.
    public func write(_ frame: Frame) throws {
        if let e = lock.withLock({ failure }) { throw e }
        guard frame.pixelFormat != nil else {
            throw MediaError(.invalidArgument, "an audio frame was given to the picture writer")
        }
        let (w, h) = pipeline.outputSize(of: frame)
        if let size, size != (w, h) {
            throw MediaError(.unsupported, "the picture size changed from \(size.width)x\(size.height) to \(w)x\(h) mid-stream; raw video cannot hold both")
        }
        var header: [UInt8] = []
        if y4m && !headerWritten {
            header = y4mHeader(frame, width: w, height: h)
            headerWritten = true
        }
        size = (w, h)
        frames += 1
        slots.wait()
        queue.async { [self, header] in
            defer { slots.signal() }
            guard lock.withLock({ failure == nil }) else { return }
            do {
                if !header.isEmpty { try file.write(header) }
                let picture = try pipeline.prepare(frame)
                try Self.frameMarker.withUnsafeBytes { marker in
                    try PicturePipeline.withPackedPieces(picture, as: format, scratch: &scratch) { planes in
                        try file.write(pieces: y4m ? [marker] + planes : planes)
                    }
                }
            } catch {
                lock.withLock { failure = error }
            }
        }
    }

    private static let frameMarker = Array("FRAME\n".utf8)

    /// The stream header as FFmpeg's yuv4mpegpipe writes it: chroma siting from the decoder,
    /// SAR 0:0 when unknown, and the range of the pictures as written: converted pictures are
    /// limited range (as ffmpeg marks them, also when the source's range was unspecified).
    private func y4mHeader(_ frame: Frame, width w: Int, height h: Int) -> [UInt8] {
        let written: ColorRange = pipeline.needsConversion(frame) ? .limited
            : frame.pixelFormat == .yuvj420p ? .full : frame.colorRange
        let range = written == .full ? " XCOLORRANGE=FULL" : written == .limited ? " XCOLORRANGE=LIMITED" : ""
        let siting: String
        switch Optional(frame.chromaLocation) {
        case .topLeft: siting = "C420paldv XYSCSS=420PALDV"
        case .left: siting = "C420mpeg2 XYSCSS=420MPEG2"
        default: siting = "C420jpeg XYSCSS=420JPEG"
        }
        var sar = frame.sampleAspectRatio
        if orientation.transposed && sar.numerator > 0 { sar = Rational(sar.denominator, sar.numerator) }
        return Array("YUV4MPEG2 W\(w) H\(h) F\(frameRate.numerator):\(frameRate.denominator) Ip A\(sar.numerator):\(sar.numerator == 0 ? 0 : sar.denominator) \(siting)\(range)\n".utf8)
    }

    /// Waits for queued pictures, then moves the file into place.
    public func finish() throws {
        queue.sync {}
        if let e = lock.withLock({ failure }) {
            file.discard()
            throw e
        }
        try file.commit()
    }

    /// Waits for queued pictures, then removes what was written.
    public func cancel() {
        queue.sync {}
        file.discard()
    }
}
