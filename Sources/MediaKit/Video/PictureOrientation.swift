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
