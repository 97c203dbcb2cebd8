/// Builds the MP4 configuration records that other containers do not store as such: VP9's
/// `vpcC` (VP Codec ISO Media File Format Binding, section 2.2) and AC-3's `dac3` (ETSI TS
/// 102 366 annex F.4), from the Matroska CodecPrivate or from the stream's first frame, as
/// FFmpeg's mov muxer derives them (libavformat vpcc.c, ac3 parsing in movenc.c).
enum CodecConfigRecords {
    /// The `av1C` box body (AV1-ISOBMFF section 2.3) built from a temporal unit that holds a
    /// sequence header OBU, as FFmpeg's ff_isom_write_av1c builds it for a track without one:
    /// marker and version 1, seq_profile, seq_level_idx[0], seq_tier[0], high_bitdepth,
    /// twelve_bit, monochrome, chroma subsampling and sample position, no initial presentation
    /// delay, then the sequence header OBU and the metadata OBUs of the unit as they are. Nil
    /// when the unit has no sequence header (or more than one) or it does not parse.
    static func av1C(temporalUnit data: [UInt8]) -> [UInt8]? {
        let obus = AV1.obus(data)
        let headers = obus.filter { $0.type == AV1.sequenceHeader }
        guard headers.count == 1, let obu = headers.first, !obu.payload.isEmpty,
              let h = AV1.SequenceHeader(data[obu.payload]) else { return nil }
        var out: [UInt8] = [0x81, UInt8(h.profile << 5 | h.level),
                            UInt8(h.tier << 7 | (h.bitDepth > 8 ? 1 : 0) << 6 | (h.bitDepth == 12 ? 1 : 0) << 5
                                  | (h.monochrome ? 1 : 0) << 4 | h.subsamplingX << 3 | h.subsamplingY << 2 | h.chromaSamplePosition),
                            0]
        out.append(contentsOf: data[obu.bytes])
        for m in obus where m.type == 5 && !m.payload.isEmpty { out.append(contentsOf: data[m.bytes]) }   // OBU_METADATA
        return out
    }

    /// The `vpcC` box body (version 1, flags 0, then profile, level, bit depth, chroma
    /// subsampling, full-range flag, primaries, transfer, matrix and an empty initialization
    /// data size: 12 bytes). Profile, bit depth and subsampling come from the Matroska VP9
    /// CodecPrivate (RFC 9559 / WebM codec mapping: ID 1 profile, 2 level, 3 bit depth,
    /// 4 chroma subsampling) when it states them, else from the uncompressed header of
    /// `keyFrame` (VP9 bitstream spec section 6.2); colour from `p`, else from that header.
    /// Nil when neither source gives the profile.
    static func vpcC(_ p: CodecParameters, codecPrivate: [UInt8], keyFrame: [UInt8]?, frameRate: Rational) -> [UInt8]? {
        var profile: Int?, level: Int?, depth: Int?, subsampling: Int?
        var i = 0
        while i + 2 <= codecPrivate.count {
            let id = codecPrivate[i], n = Int(codecPrivate[i + 1])
            guard i + 2 + n <= codecPrivate.count else { break }
            if n == 1 {
                let v = Int(codecPrivate[i + 2])
                switch id {
                case 1: profile = v
                case 2: level = v
                case 3: depth = v
                case 4: subsampling = v
                default: break
                }
            }
            i += 2 + n
        }
        var matrix = p.colorSpace.rawValue, fullRange = p.colorRange == .full
        if let frame = keyFrame, let h = VP9Header(frame) {
            profile = profile ?? h.profile
            depth = depth ?? h.bitDepth
            subsampling = subsampling ?? h.subsampling
            if p.colorSpace == .unspecified { matrix = h.matrix }
            if p.colorRange == .unspecified { fullRange = h.fullRange }
        }
        guard let profile, profile <= 3 else { return nil }
        let chroma = subsampling ?? (profile == 1 || profile == 3 ? 3 : 1)
        let bits = depth ?? (profile >= 2 ? 10 : 8)
        let lvl = level ?? Self.vp9Level(width: p.width, height: p.height, frameRate: frameRate)
        return [1, 0, 0, 0, UInt8(profile), UInt8(clamping: lvl),
                UInt8((bits & 0xF) << 4 | (chroma & 7) << 1 | (fullRange ? 1 : 0)),
                UInt8(clamping: p.colorPrimaries.rawValue), UInt8(clamping: p.colorTransfer.rawValue), UInt8(clamping: matrix),
                0, 0]
    }

    /// The VP9 level (x10) whose limits hold the picture size and sample rate (VP9 levels
    /// table, as libavformat's vpcc.c picks it), 0 when the size is unknown.
    static func vp9Level(width: Int, height: Int, frameRate: Rational) -> Int {
        let size = width * height
        guard size > 0 else { return 0 }
        let rate = frameRate.numerator > 0 && frameRate.denominator > 0 ? Double(size) * frameRate.doubleValue : 0
        let levels: [(Int, Int, Double)] = [(10, 36864, 829440), (11, 73728, 2764800), (20, 122880, 4608000),
                                             (21, 245760, 9216000), (30, 552960, 20736000), (31, 983040, 36864000),
                                             (40, 2228224, 83558400), (41, 2228224, 160432128), (50, 8912896, 311951360),
                                             (51, 8912896, 588251136), (52, 8912896, 1176502272), (60, 35651584, 1176502272),
                                             (61, 35651584, 2353004544), (62, 35651584, 4706009088)]
        return levels.first { size <= $0.1 && rate <= $0.2 }?.0 ?? 62
    }

    /// The `dac3` payload (3 bytes: fscod, bsid, bsmod, acmod, lfeon, bit_rate_code) from an
    /// AC-3 syncframe (ATSC A/52 section 5.3); nil when `frame` does not start with one.
    static func dac3(_ frame: [UInt8]) -> [UInt8]? {
        guard frame.count >= 8, frame[0] == 0x0B, frame[1] == 0x77 else { return nil }
        var r = BitReader(Array(frame[4..<min(frame.count, 12)]))
        guard let fscod = r.read(2), let frmsizecod = r.read(6), let bsid = r.read(5), bsid <= 10,
              let bsmod = r.read(3), let acmod = r.read(3) else { return nil }
        if acmod & 1 != 0 && acmod != 1 { _ = r.read(2) }   // cmixlev
        if acmod & 4 != 0 { _ = r.read(2) }                  // surmixlev
        if acmod == 2 { _ = r.read(2) }                      // dsurmod
        guard let lfeon = r.read(1), fscod != 3, frmsizecod < 38 else { return nil }
        let v = fscod << 22 | bsid << 17 | bsmod << 14 | acmod << 11 | lfeon << 10 | (frmsizecod >> 1) << 5
        return [UInt8(v >> 16), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)]
    }
}
