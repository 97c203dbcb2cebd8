/// The HEVC decoder configuration record (ISO/IEC 14496-15 8.3.3.1, the `hvcC` box of MP4 and
/// Matroska's V_MPEGH/ISO/HEVC CodecPrivate), built from VPS, SPS, PPS and SEI NAL units as
/// FFmpeg's `ff_isom_write_hvcc` (FFmpeg 5.1) builds it, so that a stream given in Annex B form
/// is stored as `ffmpeg -c copy` stores it:
///
/// - the general profile_tier_level merged over every VPS and SPS (profile space from the
///   last, the highest tier and profile_idc, the level of the highest tier, compatibility and
///   constraint flags ANDed);
/// - min_spatial_segmentation_idc the least an SPS's VUI states (0 when none states one),
///   parallelismType from the last PPS (tiles, wavefronts, both or slices; 0 when
///   min_spatial_segmentation_idc is 0);
/// - chroma format and bit depths, temporalIdNested from the last SPS, numTemporalLayers the
///   most any VPS or SPS states; avgFrameRate 0 and constantFrameRate 0 ("unspecified");
///   lengthSizeMinusOne 3;
/// - one array per NAL unit type in the order the types first appear, the units in the order
///   given; array_completeness `completeness` for the parameter-set arrays (1 for `hvc1`, 0 for
///   `hev1` and Matroska, as FFmpeg writes them), 0 for SEI.
///
/// A unit of any other type is refused, as FFmpeg refuses it.
enum HEVCConfigurationRecord {
    /// The NAL units of `type` in the parameter-set arrays of `hvcC` (from byte 22: the number
    /// of arrays, then each array's type, unit count and units after their 16-bit sizes), each
    /// without its size, in order; nil when the record is shorter than its 23-byte head or an
    /// array runs past its end.
    static func units(ofType type: Int, in hvcC: [UInt8]) -> [ArraySlice<UInt8>]? {
        guard hvcC.count >= 23 else { return nil }
        var found: [ArraySlice<UInt8>] = []
        var i = 23
        for _ in 0..<Int(hvcC[22]) {
            guard i + 3 <= hvcC.count else { return nil }
            let arrayType = Int(hvcC[i] & 0x3F)
            let count = Int(hvcC[i + 1]) << 8 | Int(hvcC[i + 2])
            i += 3
            for _ in 0..<count {
                guard i + 2 <= hvcC.count else { return nil }
                let n = Int(hvcC[i]) << 8 | Int(hvcC[i + 1])
                guard i + 2 + n <= hvcC.count else { return nil }
                if arrayType == type { found.append(hvcC[(i + 2)..<(i + 2 + n)]) }
                i += 2 + n
            }
        }
        return found
    }

    /// The hvcC payload (no box header) from the NAL units `units` (without start codes or
    /// length prefixes). - Throws: `.invalidData` saying which unit and what: a unit type an
    /// hvcC does not hold, a parameter set that ends early or states values out of range, no
    /// VPS, SPS or PPS, a unit over 65535 bytes or more units than the record counts.
    static func make(units: [ArraySlice<UInt8>], completeness: Bool) throws -> [UInt8] {
        var s = State()
        var arrays: [(type: Int, units: [ArraySlice<UInt8>])] = []
        for (n, u) in units.enumerated() {
            guard u.count >= 2 else { throw MediaError(.invalidData, "HEVC parameter sets: unit \(n) is \(u.count) bytes, shorter than a NAL unit header") }
            let type = AnnexB.hevcType(u[u.startIndex])
            guard [32, 33, 34, 39, 40].contains(type) else {
                throw MediaError(.invalidData, "HEVC parameter sets: unit \(n) is of NAL unit type \(type); an hvcC holds VPS, SPS, PPS and SEI units (32, 33, 34, 39, 40)")
            }
            guard u.count <= 0xFFFF else {
                throw MediaError(.invalidData, "HEVC parameter sets: unit \(n) (type \(type)) is \(u.count) bytes; an hvcC length field holds 65535")
            }
            if let i = arrays.firstIndex(where: { $0.type == type }) { arrays[i].units.append(u) } else { arrays.append((type, [u])) }
            var r = BitReader(AnnexB.unescape(u.dropFirst(2)))
            let ok: Bool
            switch type {
            case 32: ok = s.parseVPS(&r)
            case 33: ok = s.parseSPS(&r)
            case 34: ok = s.parsePPS(&r)
            default: ok = true
            }
            guard ok else {
                throw MediaError(.invalidData, "HEVC parameter sets: the \(type == 32 ? "VPS" : type == 33 ? "SPS" : "PPS") (unit \(n)) ends early or states a value out of range")
            }
        }
        for (type, name, limit) in [(32, "VPS", 16), (33, "SPS", 16), (34, "PPS", 64)] {
            let count = arrays.filter { $0.type == type }.reduce(0) { $0 + $1.units.count }
            guard count > 0 else { throw MediaError(.invalidData, "HEVC parameter sets: no \(name) for the hvcC") }
            guard count <= limit else { throw MediaError(.invalidData, "HEVC parameter sets: \(count) \(name) units; HEVC has at most \(limit)") }
        }
        if let big = arrays.first(where: { $0.units.count > 0xFFFF }) {
            throw MediaError(.invalidData, "HEVC parameter sets: \(big.units.count) units of type \(big.type); an hvcC array counts 65535")
        }
        if s.minSpatialSegmentation > 4096 { s.minSpatialSegmentation = 0 }
        if s.minSpatialSegmentation == 0 { s.parallelismType = 0 }
        var out: [UInt8] = [1, UInt8(s.profileSpace << 6 | s.tier << 5 | s.profileIdc)]
        for k in stride(from: 24, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: s.compatibility >> UInt32(k))) }
        for k in stride(from: 40, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: s.constraints >> UInt64(k))) }
        out.append(UInt8(s.levelIdc))
        out.append(0xF0 | UInt8(s.minSpatialSegmentation >> 8)); out.append(UInt8(s.minSpatialSegmentation & 0xFF))
        out.append(0xFC | UInt8(s.parallelismType))
        out.append(0xFC | UInt8(s.chromaFormat))
        out.append(0xF8 | UInt8(s.bitDepthLumaMinus8))
        out.append(0xF8 | UInt8(s.bitDepthChromaMinus8))
        out += [0, 0]                                              // avgFrameRate: unspecified
        out.append(UInt8(s.temporalLayers << 3 | s.temporalIdNested << 2 | 3))   // constantFrameRate 0, lengthSizeMinusOne 3
        out.append(UInt8(arrays.count))
        for a in arrays {
            let complete = completeness && a.type <= 34 ? 0x80 : 0
            out.append(UInt8(complete | a.type))
            out.append(UInt8(a.units.count >> 8)); out.append(UInt8(a.units.count & 0xFF))
            for u in a.units {
                out.append(UInt8(u.count >> 8)); out.append(UInt8(u.count & 0xFF))
                out.append(contentsOf: u)
            }
        }
        return out
    }

    /// The record's fields as the parameter sets are read (FFmpeg's HEVCDecoderConfigurationRecord
    /// in `hvcc_init`: compatibility and constraint flags all set, to be ANDed).
    private struct State {
        var profileSpace = 0, tier = 0, profileIdc = 0, levelIdc = 0
        var compatibility: UInt32 = 0xFFFF_FFFF
        var constraints: UInt64 = 0xFFFF_FFFF_FFFF
        var minSpatialSegmentation = 4097
        var parallelismType = 0, chromaFormat = 0, bitDepthLumaMinus8 = 0, bitDepthChromaMinus8 = 0
        var temporalLayers = 0, temporalIdNested = 0

        /// profile_tier_level(1, maxSubLayersMinus1) (H.265 7.3.3): the general part merged.
        mutating func parsePTL(_ r: inout BitReader, maxSubLayersMinus1: Int) -> Bool {
            guard let space = r.read(2), let tierFlag = r.read(1), let idc = r.read(5), let compat = r.read(32),
                  let c1 = r.read(24), let c2 = r.read(24), let level = r.read(8) else { return false }
            profileSpace = space
            levelIdc = tier < tierFlag ? level : max(levelIdc, level)
            tier = max(tier, tierFlag)
            profileIdc = max(profileIdc, idc)
            compatibility &= UInt32(compat)
            constraints &= UInt64(c1) << 24 | UInt64(c2)
            var profilePresent: [Bool] = [], levelPresent: [Bool] = []
            for _ in 0..<maxSubLayersMinus1 {
                guard let p = r.read(1), let l = r.read(1) else { return false }
                profilePresent.append(p == 1); levelPresent.append(l == 1)
            }
            if maxSubLayersMinus1 > 0 { for _ in maxSubLayersMinus1..<8 { guard r.read(2) != nil else { return false } } }
            for i in 0..<maxSubLayersMinus1 {
                if profilePresent[i] { guard r.read(32) != nil, r.read(32) != nil, r.read(24) != nil else { return false } }   // 88 bits
                if levelPresent[i] { guard r.read(8) != nil else { return false } }
            }
            return true
        }

        /// video_parameter_set_rbsp (H.265 7.3.2.1) up to its profile_tier_level.
        mutating func parseVPS(_ r: inout BitReader) -> Bool {
            guard r.read(12) != nil, let sub = r.read(3), r.read(17) != nil else { return false }
            temporalLayers = max(temporalLayers, sub + 1)
            return parsePTL(&r, maxSubLayersMinus1: sub)
        }

        /// seq_parameter_set_rbsp (H.265 7.3.2.2) up to its VUI's bitstream restrictions.
        mutating func parseSPS(_ r: inout BitReader) -> Bool {
            guard r.read(4) != nil, let sub = r.read(3), let nested = r.read(1) else { return false }
            guard sub <= 6 else { return false }
            temporalLayers = max(temporalLayers, sub + 1)
            temporalIdNested = nested
            guard parsePTL(&r, maxSubLayersMinus1: sub), r.ue() != nil, let chroma = r.ue(), chroma <= 3 else { return false }
            chromaFormat = chroma
            if chroma == 3 { guard r.read(1) != nil else { return false } }
            guard r.ue() != nil, r.ue() != nil, let window = r.read(1) else { return false }
            if window == 1 { for _ in 0..<4 { guard r.ue() != nil else { return false } } }
            guard let luma = r.ue(), luma <= 8, let chromaDepth = r.ue(), chromaDepth <= 8, let pocBits = r.ue(), pocBits <= 12,
                  let ordering = r.read(1) else { return false }
            bitDepthLumaMinus8 = luma; bitDepthChromaMinus8 = chromaDepth
            for _ in (ordering == 1 ? 0 : sub)...sub { for _ in 0..<3 { guard r.ue() != nil else { return false } } }
            for _ in 0..<6 { guard r.ue() != nil else { return false } }
            guard let scaling = r.read(1) else { return false }
            if scaling == 1 {
                guard let present = r.read(1) else { return false }
                if present == 1 && !HEVCConfigurationRecord.skipScalingListData(&r) { return false }
            }
            guard r.read(2) != nil, let pcm = r.read(1) else { return false }
            if pcm == 1 { guard r.read(8) != nil, r.ue() != nil, r.ue() != nil, r.read(1) != nil else { return false } }
            guard let sets = r.ue(), sets <= 64 else { return false }
            var deltaPocs = [Int](repeating: 0, count: sets)
            for i in 0..<sets { guard HEVCConfigurationRecord.skipShortTermRefPicSet(&r, index: i, deltaPocs: &deltaPocs) else { return false } }
            guard let longTerm = r.read(1) else { return false }
            if longTerm == 1 {
                guard let n = r.ue(), n <= 32 else { return false }
                for _ in 0..<n { guard r.read(min(pocBits + 4, 16)) != nil, r.read(1) != nil else { return false } }
            }
            guard r.read(2) != nil, let vui = r.read(1) else { return false }
            return vui == 0 || parseVUI(&r, maxSubLayersMinus1: sub)
        }

        /// pic_parameter_set_rbsp (H.265 7.3.2.3) up to tiles / entropy_coding_sync.
        mutating func parsePPS(_ r: inout BitReader) -> Bool {
            guard r.ue() != nil, r.ue() != nil, r.read(7) != nil, r.ue() != nil, r.ue() != nil, r.se() != nil, r.read(2) != nil,
                  let cuQp = r.read(1) else { return false }
            if cuQp == 1 { guard r.ue() != nil else { return false } }
            guard r.se() != nil, r.se() != nil, r.read(4) != nil, let tiles = r.read(1), let sync = r.read(1) else { return false }
            parallelismType = tiles == 1 && sync == 1 ? 0 : sync == 1 ? 3 : tiles == 1 ? 2 : 1
            return true
        }

        /// vui_parameters (H.265 E.2.1) up to min_spatial_segmentation_idc.
        mutating func parseVUI(_ r: inout BitReader, maxSubLayersMinus1: Int) -> Bool {
            guard let aspect = r.read(1) else { return false }
            if aspect == 1 {
                guard let idc = r.read(8) else { return false }
                if idc == 255 { guard r.read(32) != nil else { return false } }
            }
            guard let overscan = r.read(1) else { return false }
            if overscan == 1 { guard r.read(1) != nil else { return false } }
            guard let signal = r.read(1) else { return false }
            if signal == 1 {
                guard r.read(4) != nil, let colour = r.read(1) else { return false }
                if colour == 1 { guard r.read(24) != nil else { return false } }
            }
            guard let chromaLoc = r.read(1) else { return false }
            if chromaLoc == 1 { guard r.ue() != nil, r.ue() != nil else { return false } }
            guard r.read(3) != nil, let window = r.read(1) else { return false }
            if window == 1 { for _ in 0..<4 { guard r.ue() != nil else { return false } } }
            guard let timing = r.read(1) else { return false }
            if timing == 1 {
                guard r.read(32) != nil, r.read(32) != nil, let poc = r.read(1) else { return false }
                if poc == 1 { guard r.ue() != nil else { return false } }
                guard let hrd = r.read(1) else { return false }
                if hrd == 1 && !HEVCConfigurationRecord.skipHRD(&r, maxSubLayersMinus1: maxSubLayersMinus1) { return false }
            }
            guard let restriction = r.read(1) else { return false }
            if restriction == 1 {
                guard r.read(3) != nil, let segmentation = r.ue() else { return false }
                minSpatialSegmentation = min(minSpatialSegmentation, segmentation)
            }
            return true
        }
    }

    /// scaling_list_data (H.265 7.3.4).
    private static func skipScalingListData(_ r: inout BitReader) -> Bool {
        for size in 0..<4 {
            for _ in 0..<(size == 3 ? 2 : 6) {
                guard let mode = r.read(1) else { return false }
                if mode == 0 { guard r.ue() != nil else { return false }; continue }
                if size > 1 { guard r.se() != nil else { return false } }
                for _ in 0..<min(64, 1 << (4 + (size << 1))) { guard r.se() != nil else { return false } }
            }
        }
        return true
    }

    /// st_ref_pic_set(index) (H.265 7.3.7) in an SPS; `deltaPocs` the NumDeltaPocs of each set.
    private static func skipShortTermRefPicSet(_ r: inout BitReader, index: Int, deltaPocs: inout [Int]) -> Bool {
        if index > 0 {
            guard let predicted = r.read(1) else { return false }
            if predicted == 1 {
                guard r.read(1) != nil, r.ue() != nil else { return false }
                var n = 0
                for _ in 0...deltaPocs[index - 1] {
                    guard let used = r.read(1) else { return false }
                    var useDelta = 0
                    if used == 0 { guard let u = r.read(1) else { return false }; useDelta = u }
                    if used == 1 || useDelta == 1 { n += 1 }
                }
                deltaPocs[index] = n
                return true
            }
        }
        guard let negative = r.ue(), let positive = r.ue(), (negative + positive) * 2 <= r.remaining, negative + positive <= 32 else { return false }
        deltaPocs[index] = negative + positive
        for _ in 0..<(negative + positive) { guard r.ue() != nil, r.read(1) != nil else { return false } }
        return true
    }

    /// hrd_parameters(1, maxSubLayersMinus1) (H.265 E.2.2).
    private static func skipHRD(_ r: inout BitReader, maxSubLayersMinus1: Int) -> Bool {
        guard let nal = r.read(1), let vcl = r.read(1) else { return false }
        var subPic = 0
        if nal == 1 || vcl == 1 {
            guard let s = r.read(1) else { return false }
            subPic = s
            if subPic == 1 { guard r.read(19) != nil else { return false } }
            guard r.read(8) != nil else { return false }
            if subPic == 1 { guard r.read(4) != nil else { return false } }
            guard r.read(15) != nil else { return false }
        }
        for _ in 0...maxSubLayersMinus1 {
            guard let general = r.read(1) else { return false }
            var withinCVS = 1                      // inferred 1 when fixed_pic_rate_general_flag is 1
            if general == 0 { guard let w = r.read(1) else { return false }; withinCVS = w }
            var lowDelay = 0
            if withinCVS == 1 { guard r.ue() != nil else { return false } } else { guard let l = r.read(1) else { return false }; lowDelay = l }
            var cpbCount = 1
            if lowDelay == 0 { guard let c = r.ue(), c <= 31 else { return false }; cpbCount = c + 1 }
            for present in [nal, vcl] where present == 1 {
                for _ in 0..<cpbCount {
                    guard r.ue() != nil, r.ue() != nil else { return false }
                    if subPic == 1 { guard r.ue() != nil, r.ue() != nil else { return false } }
                    guard r.read(1) != nil else { return false }
                }
            }
        }
        return true
    }
}
