/// The fields of a VP9 key frame's uncompressed header that `vpcC` states (VP9 bitstream
/// specification sections 6.2 and 6.2.2 color_config).
struct VP9Header {
    var profile: Int
    var bitDepth: Int
    /// vpcC chroma subsampling: 1 4:2:0 (colocated with luma), 2 4:2:2, 3 4:4:4.
    var subsampling: Int
    /// H.273 matrix coefficients for the header's color_space.
    var matrix: Int
    var fullRange: Bool

    /// Nil unless `frame` starts with a key frame's uncompressed header.
    init?(_ frame: [UInt8]) {
        var r = BitReader(Array(frame.prefix(16)))
        guard r.read(2) == 2, let low = r.read(1), let high = r.read(1) else { return nil }
        profile = high << 1 | low
        if profile == 3 { guard r.read(1) == 0 else { return nil } }
        guard r.read(1) == 0, r.read(1) == 0 else { return nil }     // show_existing_frame, frame_type KEY_FRAME
        _ = r.read(2)                                                // show_frame, error_resilient_mode
        guard r.read(24) == 0x49_83_42 else { return nil }
        bitDepth = 8
        if profile >= 2 { guard let b = r.read(1) else { return nil }; bitDepth = b == 1 ? 12 : 10 }
        guard let space = r.read(3) else { return nil }
        matrix = [2, 5, 1, 6, 7, 9, 3, 0][space]
        if space != 7 {
            guard let range = r.read(1) else { return nil }
            fullRange = range == 1
            if profile == 1 || profile == 3 {
                guard let x = r.read(1), let y = r.read(1) else { return nil }
                subsampling = x == 1 && y == 1 ? 1 : x == 1 ? 2 : 3
            } else {
                subsampling = 1
            }
        } else {
            fullRange = true
            subsampling = 3
        }
    }

    /// Whether `d` starts with a key frame: the uncompressed header's frame marker, profile,
    /// then show_existing_frame and frame_type (0 = key frame) (VP9 bitstream section 6.2),
    /// as FFmpeg's vp9 parser reads them; false for an empty packet.
    static func isKeyframe(_ d: [UInt8]) -> Bool {
        guard let b = d.first else { return false }
        var bit = 2   // frame_marker
        func next() -> Int { defer { bit += 1 }; return bit < 8 ? Int(b >> UInt8(7 - bit)) & 1 : (d.count > 1 ? Int(d[1] >> UInt8(15 - bit)) & 1 : 0) }
        let profile = next() | next() << 1
        if profile == 3 { _ = next() }
        if next() == 1 { return false }   // show_existing_frame
        return next() == 0
    }
}
