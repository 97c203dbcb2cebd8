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
