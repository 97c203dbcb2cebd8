/// How a picture is turned for display: any of the eight quarter-turn rotations and
/// reflections of a rectangle.
///
/// Applied to a picture as: swap rows and columns when ``transposed`` (the picture's
/// width becomes its height), then mirror left-right when ``flippedHorizontally``, then
/// top-bottom when ``flippedVertically``. So a clockwise quarter turn is a transpose and a
/// horizontal flip, a half turn is both flips, and a track matrix that mirrors (rotation
/// with a reflection) is a transpose alone or a single flip.
public struct PictureOrientation: Sendable, Hashable, CustomStringConvertible {
    /// Rows become columns: the output pixel at column x, row y is the input's at column y, row x.
    public var transposed: Bool
    /// Mirrored left-right (after the transpose).
    public var flippedHorizontally: Bool
    /// Mirrored top-bottom (after the transpose).
    public var flippedVertically: Bool

    /// Creates an orientation from its three steps.
    public init(transposed: Bool = false, flippedHorizontally: Bool = false, flippedVertically: Bool = false) {
        self.transposed = transposed
        self.flippedHorizontally = flippedHorizontally
        self.flippedVertically = flippedVertically
    }

    /// The picture as decoded.
    public static let upright = PictureOrientation()

    /// A clockwise turn by `degrees` (0, 90, 180 or 270; any other angle gives nil).
    public init?(clockwise degrees: Int) {
        switch degrees {
        case 0: self.init()
        case 90: self.init(transposed: true, flippedHorizontally: true)
        case 180: self.init(flippedHorizontally: true, flippedVertically: true)
        case 270: self.init(transposed: true, flippedVertically: true)
        default: return nil
        }
    }

    /// What FFmpeg 5.1's autorotation does for a track whose transform matrix is `matrix`
    /// (row-major a, b, u, c, d, v, x, y, w, 16.16 fixed point, as ``Track/matrix``): the
    /// angle is `av_display_rotation_get`'s, rounded to whole degrees, and the signs of the
    /// matrix choose among FFmpeg's `transpose` directions (clock, cclock, and their
    /// `_flip` forms) and `hflip` / `vflip`. A matrix whose angle is not a multiple of 90
    /// degrees gives ``upright`` (FFmpeg would resample the picture with its `rotate` filter).
    public init(displayMatrix matrix: [Int32]) {
        self.init()
        guard matrix.count == 9 else { return }
        var theta = -Track.displayRotation(matrix).rounded()
        theta -= 360 * (theta / 360 + 0.9 / 360).rounded(.down)
        if abs(theta - 90) < 1 {
            // transpose=cclock_flip (a transpose alone) when the matrix also mirrors, else clock.
            self = matrix[3] > 0 ? PictureOrientation(transposed: true) : PictureOrientation(clockwise: 90)!
        } else if abs(theta - 180) < 1 {
            self = PictureOrientation(flippedHorizontally: matrix[0] < 0, flippedVertically: matrix[4] < 0)
        } else if abs(theta - 270) < 1 {
            // transpose=clock_flip when the matrix also mirrors, else cclock.
            self = matrix[3] < 0 ? PictureOrientation(transposed: true, flippedHorizontally: true, flippedVertically: true)
                                 : PictureOrientation(clockwise: 270)!
        } else if abs(theta) < 1 {
            self = PictureOrientation(flippedVertically: matrix[4] < 0)
        }
    }

    /// True when nothing moves.
    public var isUpright: Bool { self == .upright }

    /// FFmpeg's filter chain for the same change, e.g. "transpose=clock" or "hflip,vflip".
    public var description: String {
        switch (transposed, flippedHorizontally, flippedVertically) {
        case (false, false, false): return "upright"
        case (true, true, false): return "transpose=clock"
        case (true, false, true): return "transpose=cclock"
        case (true, false, false): return "transpose=cclock_flip"
        case (true, true, true): return "transpose=clock_flip"
        case (false, true, true): return "hflip,vflip"
        case (false, true, false): return "hflip"
        case (false, false, true): return "vflip"
        }
    }
}

extension Frame {
    /// Returns this picture turned clockwise by `degrees` (90, 180 or 270; 0 returns it as
    /// it is); see ``oriented(_:)``.
    /// - Throws: as ``oriented(_:)``, and `.invalidArgument` for another angle.
    public func rotated(clockwise degrees: Int) throws -> Frame {
        guard let orientation = PictureOrientation(clockwise: degrees) else {
            throw MediaError(.invalidArgument, "pictures turn by 90, 180 or 270 degrees, not \(degrees)")
        }
        return try oriented(orientation)
    }

    /// Returns this picture turned by `orientation` (``PictureOrientation/upright`` returns it
    /// as it is) in new memory, in the same pixel format: FFmpeg's `transpose` / `hflip` /
    /// `vflip`, which the ffmpeg tool applies before any format conversion. Every planar
    /// format, NV12 / P010 (a chroma pair moves as one sample) and gray can be turned; a
    /// transpose needs the same chroma subsampling both ways (4:2:0, 4:4:4).
    /// - Throws: `.unsupported` for a transpose of 4:2:2 pictures, `.invalidArgument`
    ///   for an audio frame.
    public func oriented(_ orientation: PictureOrientation) throws -> Frame {
        let frame = self
        guard !orientation.isUpright else { return frame }
        guard let format = frame.pixelFormat else { throw MediaError(.invalidArgument, "not a video frame") }
        let quarter = orientation.transposed
        let (flipX, flipY) = (orientation.flippedHorizontally, orientation.flippedVertically)
        if quarter && format.chromaShift.x != format.chromaShift.y {
            throw MediaError(.unsupported, "a quarter turn of \(format.name) pictures would need other chroma subsampling; use --no-autorotate")
        }
        let interleaved = format == .nv12 || format == .p010
        // Per plane: bytes per sample (a chroma pair counts as one), samples per row, rows.
        let shapes: [(bytes: Int, columns: Int, rows: Int)] = (0..<format.planeCount).map { i in
            let size = frame.planeSize(i)
            let pair = interleaved && i == 1 ? 2 : 1
            // A packed RGB pixel moves as one sample of its components' bytes.
            return (format.bytesPerComponent * pair * format.componentsPerPixel, size.width / pair, size.height)
        }
        // Each plane starts on a 64-byte boundary, so 16- and 32-bit samples are read aligned.
        let sizes = shapes.map { (($0.rows * $0.bytes * $0.columns) + 63) & ~63 }
        // 64 bytes more: an encoder given the picture without a copy may read a vector past the
        // last row, as libavcodec's own buffers allow.
        let memory = UnsafeMutableRawPointer.allocate(byteCount: sizes.reduce(0, +) + 64, alignment: 64)
        nonisolated(unsafe) let owned = memory
        var out = frame
        out.storage = FrameStorage(keepsPlanesUnchanged: true, release: { owned.deallocate() })
        out.planes = []
        if quarter {
            (out.width, out.height) = (frame.height, frame.width)
            if frame.sampleAspectRatio.numerator > 0 {
                out.sampleAspectRatio = Rational(frame.sampleAspectRatio.denominator, frame.sampleAspectRatio.numerator)
            }
        }
        var offset = 0
        withExtendedLifetime(frame.storage) {
            for (i, shape) in shapes.enumerated() {
                let (pw, ph) = (shape.columns, shape.rows)
                let (dw, dh) = quarter ? (ph, pw) : (pw, ph)
                let src = frame.planes[i], dst = memory + offset
                let stride = dw * shape.bytes
                func turn<T>(_: T.Type) {
                    let d = dst.assumingMemoryBound(to: T.self)
                    for y in 0..<dh {
                        let row = d + y * dw
                        let sy = flipY ? dh - 1 - y : y
                        if quarter {
                            // Output column x, row sy (before the flips) is input column sy, row x.
                            for x in 0..<dw {
                                let sx = flipX ? dw - 1 - x : x
                                row[x] = (src.base + sx * src.stride).assumingMemoryBound(to: T.self)[sy]
                            }
                        } else {
                            let s = (src.base + sy * src.stride).assumingMemoryBound(to: T.self)
                            if flipX {
                                for x in 0..<dw { row[x] = s[dw - 1 - x] }
                            } else {
                                for x in 0..<dw { row[x] = s[x] }
                            }
                        }
                    }
                }
                switch shape.bytes {
                case 1: turn(UInt8.self)
                case 2: turn(UInt16.self)
                default: turn(UInt32.self)
                }
                out.planes.append(Plane(base: UnsafeRawPointer(dst), stride: stride, length: stride * dh))
                offset += sizes[i]
            }
        }
        return out
    }
}
