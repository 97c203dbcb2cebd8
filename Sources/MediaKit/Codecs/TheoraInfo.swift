/// The Theora identification header (Theora specification section 6.2).
struct TheoraInfo {
    var version: Int
    var width: Int
    var height: Int
    var frameRate: (num: Int, den: Int)
    var granuleShift: Int

    static func parse(_ p: [UInt8]) -> Result<TheoraInfo, OggHeaderProblem> {
        guard p.count >= 42 else { return .failure("the Theora identification header is \(p.count) bytes, 42 expected") }
        let version = oggBE(p, 7, 3)
        let fmbw = oggBE(p, 10, 2) * 16, fmbh = oggBE(p, 12, 2) * 16
        var w = oggBE(p, 14, 3), h = oggBE(p, 17, 3)
        if version < 0x030200 || w == 0 || h == 0 { w = fmbw; h = fmbh }
        let frn = oggBE(p, 22, 4), frd = oggBE(p, 26, 4)
        guard frn > 0, frd > 0 else { return .failure("the Theora frame rate \(frn)/\(frd) is invalid") }
        let shift = Int((p[40] & 3) << 3 | p[41] >> 5)
        return .success(TheoraInfo(version: version, width: w, height: h, frameRate: (frn, frd), granuleShift: shift))
    }

    /// Frame number of a granule position (FFmpeg's rule: key frame number + offset, plus one before 3.2.1).
    func framePTS(_ granule: Int64) -> Int64 {
        let g = UInt64(bitPattern: granule)
        var iframe = Int64(bitPattern: g >> UInt64(granuleShift))
        let pframe = Int64(bitPattern: g & ((1 << UInt64(granuleShift)) - 1))
        if version < 0x030201 { iframe += 1 }
        return iframe &+ pframe
    }
}
