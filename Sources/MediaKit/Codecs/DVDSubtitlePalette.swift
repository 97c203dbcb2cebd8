/// DVD subtitle (VobSub) configuration: the palette an MP4 `mp4s` sample entry carries (the
/// DecoderSpecificInfo of its `esds`, object type 0xE0: 16 entries of 4 bytes, 0x00 Y Cr Cb)
/// and the `.idx`-style text FFmpeg makes of it, the form Matroska's S_VOBSUB CodecPrivate
/// and FFmpeg's dvdsub decoder take.
enum DVDSubtitlePalette {
    /// The MPEG-4 object type indication of VobSub in an `esds` (FFmpeg's ff_mp4_obj_type).
    static let objectType: UInt8 = 0xE0

    /// The `.idx` text for a 64-byte YCrCb palette, as FFmpeg 5.1's mov demuxer rewrites it
    /// (mov_rewrite_dvd_sub_extradata): "size: WxH\n" when both are positive, then
    /// "palette: " and the 16 colours as RGB hex joined by ", ", then "\n". Nil for a
    /// palette that is not 64 bytes (FFmpeg keeps such extradata as it is).
    static func idxText(palette: [UInt8], width: Int, height: Int) -> [UInt8]? {
        guard palette.count == 64 else { return nil }
        var text = width > 0 && height > 0 ? "size: \(width)x\(height)\n" : ""
        text += "palette: "
        var colours: [String] = []
        for i in 0..<16 {
            let y = Int(palette[i * 4 + 1]), cr = Int(palette[i * 4 + 2]), cb = Int(palette[i * 4 + 3])
            colours.append(hex6(rgb(y: y, cr: cr, cb: cb)))
        }
        text += colours.joined(separator: ", ") + "\n"
        return Array(text.utf8)
    }

    /// FFmpeg's yuv_to_rgba: BT.601 studio range to RGB, in integers (division truncating
    /// toward zero, as C's), each component clipped to 0...255.
    static func rgb(y: Int, cr: Int, cb: Int) -> Int {
        func clip(_ v: Int) -> Int { min(255, max(0, v)) }
        let b = clip((1164 * (y - 16) + 2018 * (cb - 128)) / 1000)
        let g = clip((1164 * (y - 16) - 813 * (cr - 128) - 391 * (cb - 128)) / 1000)
        let r = clip((1164 * (y - 16) + 1596 * (cr - 128)) / 1000)
        return r << 16 | g << 8 | b
    }

    /// `v` as at least six lower-case hex digits (C's "%06x").
    private static func hex6(_ v: Int) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: max(0, 6 - s.count)) + s
    }
}
