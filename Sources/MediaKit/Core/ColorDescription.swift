/// The range of a picture's sample values. The raw values are the codes that
/// ``Frame/colorRange``, ``Track/colorRange`` and the plugin ABI's `color_range` hold
/// (FFmpeg's AVColorRange).
public enum ColorRange: Int, Sendable, CaseIterable {
    /// Not said: YUV pictures are then taken as limited range (yuvj* formats as full range).
    case unspecified = 0
    /// Limited ("MPEG", "tv"): 8-bit luma from 16 to 235, chroma from 16 to 240.
    case limited = 1
    /// Full ("JPEG", "pc"): every code value.
    case full = 2
}

/// Where a picture's chroma samples sit relative to its luma samples. The raw values are
/// the codes that ``Frame/chromaLocation`` and the plugin ABI's `chroma_location` hold
/// (FFmpeg's AVChromaLocation; ISO/IEC 23091-4 chroma_sample_loc_type plus one).
public enum ChromaLocation: Int, Sendable, CaseIterable {
    /// Not said.
    case unspecified = 0
    /// Left of the luma pair, between its rows (MPEG-2, H.264's default).
    case left = 1
    /// In the middle of the four luma samples (JPEG, MPEG-1).
    case center = 2
    /// On the top-left luma sample (DV PAL, BT.2020 4:2:0).
    case topLeft = 3
    /// Between the two top luma samples.
    case top = 4
    /// On the bottom-left luma sample.
    case bottomLeft = 5
    /// Between the two bottom luma samples.
    case bottom = 6
}

/// A picture's colour primaries, as the ISO/IEC 23091-2 (H.273) `ColourPrimaries` code point
/// that bitstreams, MP4 `colr` boxes, Matroska `Colour` and FFmpeg's AVColorPrimaries share.
/// A code point MediaKit has no name for is kept as it is.
public struct ColorPrimaries: RawRepresentable, Hashable, Sendable {
    /// The H.273 code point.
    public var rawValue: Int
    /// The primaries with H.273 code point `rawValue`.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// BT.709 / sRGB (1).
    public static let bt709 = ColorPrimaries(rawValue: 1)
    /// Not said (2): the default.
    public static let unspecified = ColorPrimaries(rawValue: 2)
    /// BT.470 System M (4).
    public static let bt470m = ColorPrimaries(rawValue: 4)
    /// BT.601 625 lines / BT.470 System B, G (5).
    public static let bt470bg = ColorPrimaries(rawValue: 5)
    /// BT.601 525 lines / SMPTE 170M (6).
    public static let smpte170m = ColorPrimaries(rawValue: 6)
    /// SMPTE 240M (7).
    public static let smpte240m = ColorPrimaries(rawValue: 7)
    /// BT.2020 / BT.2100 (9).
    public static let bt2020 = ColorPrimaries(rawValue: 9)
    /// DCI-P3 with the Display P3 white point (12).
    public static let displayP3 = ColorPrimaries(rawValue: 12)
}

/// A picture's transfer characteristics, as the ISO/IEC 23091-2 (H.273)
/// `TransferCharacteristics` code point (FFmpeg's AVColorTransferCharacteristic).
public struct ColorTransfer: RawRepresentable, Hashable, Sendable {
    /// The H.273 code point.
    public var rawValue: Int
    /// The transfer with H.273 code point `rawValue`.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// BT.709 (1).
    public static let bt709 = ColorTransfer(rawValue: 1)
    /// Not said (2): the default.
    public static let unspecified = ColorTransfer(rawValue: 2)
    /// BT.601 / SMPTE 170M (6).
    public static let smpte170m = ColorTransfer(rawValue: 6)
    /// Linear (8).
    public static let linear = ColorTransfer(rawValue: 8)
    /// sRGB / IEC 61966-2-1 (13).
    public static let sRGB = ColorTransfer(rawValue: 13)
    /// BT.2020 10-bit (14).
    public static let bt2020_10 = ColorTransfer(rawValue: 14)
    /// PQ, SMPTE ST 2084 (HDR10) (16).
    public static let pq = ColorTransfer(rawValue: 16)
    /// HLG, ARIB STD-B67 (18).
    public static let hlg = ColorTransfer(rawValue: 18)
}

/// The matrix from RGB to a picture's YUV, as the ISO/IEC 23091-2 (H.273)
/// `MatrixCoefficients` code point (FFmpeg's AVColorSpace).
public struct ColorMatrix: RawRepresentable, Hashable, Sendable {
    /// The H.273 code point.
    public var rawValue: Int
    /// The matrix with H.273 code point `rawValue`.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// Identity: the planes are G, B, R (0).
    public static let rgb = ColorMatrix(rawValue: 0)
    /// BT.709 (1).
    public static let bt709 = ColorMatrix(rawValue: 1)
    /// Not said (2): the default.
    public static let unspecified = ColorMatrix(rawValue: 2)
    /// BT.601 625 lines / BT.470 System B, G (5).
    public static let bt470bg = ColorMatrix(rawValue: 5)
    /// BT.601 525 lines / SMPTE 170M (6).
    public static let smpte170m = ColorMatrix(rawValue: 6)
    /// BT.2020 non-constant luminance (9).
    public static let bt2020nc = ColorMatrix(rawValue: 9)
    /// BT.2020 constant luminance (10).
    public static let bt2020c = ColorMatrix(rawValue: 10)
}

extension ColorRange {
    /// The range for a code, ``unspecified`` for one FFmpeg does not define.
    public init(code: Int) { self = ColorRange(rawValue: code) ?? .unspecified }
}

extension ChromaLocation {
    /// The location for a code, ``unspecified`` for one FFmpeg does not define.
    public init(code: Int) { self = ChromaLocation(rawValue: code) ?? .unspecified }
}
