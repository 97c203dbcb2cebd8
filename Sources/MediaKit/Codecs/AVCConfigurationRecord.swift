/// The H.264 decoder configuration record (ISO/IEC 14496-15 5.3.3.1, the `avcC` box of MP4 and
/// Matroska's V_MPEG4/ISO/AVC CodecPrivate), built from parameter-set NAL units as FFmpeg's
/// `ff_isom_write_avcc` builds it, so that a stream given in Annex B form is stored as
/// `ffmpeg -c copy` stores it:
///
/// - every SPS (type 7), PPS (8) and SPS extension (13) in the order given, duplicates kept;
///   other units are ignored;
/// - profile, compatibility and level bytes from the first SPS; lengthSizeMinusOne 3;
/// - the chroma_format / bit depth / SPS extension trailer whenever the first SPS's
///   profile_idc is not 66, 77 or 88 (Baseline, Main, Extended), its values read from that SPS
///   (4:2:0 and 8 bits for profiles whose SPS does not state them).
enum AVCConfigurationRecord {
    /// The avcC payload (no box header) from the NAL units `units` (without start codes or
    /// length prefixes). - Throws: `.invalidData` naming what is wrong: no SPS or no PPS, an SPS
    /// too short to hold its profile and level, one that does not parse far enough for the
    /// high-profile trailer, a unit over 65535 bytes or more units than the record counts.
    static func make(units: [ArraySlice<UInt8>]) throws -> [UInt8] {
        var sps: [ArraySlice<UInt8>] = [], pps: [ArraySlice<UInt8>] = [], ext: [ArraySlice<UInt8>] = []
        for u in units where !u.isEmpty {
            switch AnnexB.h264Type(u[u.startIndex]) {
            case 7: sps.append(u)
            case 8: pps.append(u)
            case 13: ext.append(u)
            default: break
            }
        }
        guard let first = sps.first else { throw MediaError(.invalidData, "H.264 parameter sets: no sequence parameter set (NAL unit type 7) for the avcC") }
        guard !pps.isEmpty else { throw MediaError(.invalidData, "H.264 parameter sets: no picture parameter set (NAL unit type 8) for the avcC") }
        guard first.count >= 4 else {
            throw MediaError(.invalidData, "H.264 parameter sets: the SPS is \(first.count) bytes, too short for its profile and level")
        }
        // numOfSequenceParameterSets has 5 bits; FFmpeg refuses 32 and more, as H.264 has 32 SPS ids.
        for (name, list, limit) in [("SPS", sps, 31), ("PPS", pps, 255), ("SPS extension", ext, 255)] {
            guard list.count <= limit else {
                throw MediaError(.invalidData, "H.264 parameter sets: \(list.count) \(name) units; an avcC holds at most \(limit)")
            }
            if let big = list.first(where: { $0.count > 0xFFFF }) {
                throw MediaError(.invalidData, "H.264 parameter sets: an \(name) of \(big.count) bytes; an avcC length field holds 65535")
            }
        }
        let profile = first[first.startIndex + 1]
        var out: [UInt8] = [1, profile, first[first.startIndex + 2], first[first.startIndex + 3], 0xFF, 0xE0 | UInt8(sps.count)]
        func append(_ list: [ArraySlice<UInt8>]) {
            for u in list {
                out.append(UInt8(u.count >> 8)); out.append(UInt8(u.count & 0xFF))
                out.append(contentsOf: u)
            }
        }
        append(sps)
        out.append(UInt8(pps.count))
        append(pps)
        if ![66, 77, 88].contains(profile) {
            guard let f = formatFields(sps: first) else {
                throw MediaError(.invalidData, "H.264 parameter sets: the SPS (profile \(profile)) ends before its chroma format and bit depths")
            }
            guard (0...3).contains(f.chroma), (8...15).contains(f.lumaDepth), (8...15).contains(f.chromaDepth) else {
                throw MediaError(.invalidData, "H.264 parameter sets: the SPS states chroma_format_idc \(f.chroma), bit depths \(f.lumaDepth) / \(f.chromaDepth), beyond what H.264 allows")
            }
            out.append(0xFC | UInt8(f.chroma))
            out.append(0xF8 | UInt8(f.lumaDepth - 8))
            out.append(0xF8 | UInt8(f.chromaDepth - 8))
            out.append(UInt8(ext.count))
            append(ext)
        }
        return out
    }

    /// chroma_format_idc and the luma and chroma bit depths an SPS NAL unit states (4:2:0, 8
    /// bits for the profiles that do not state them); nil when it ends before them.
    static func formatFields(sps: ArraySlice<UInt8>) -> (chroma: Int, lumaDepth: Int, chromaDepth: Int)? {
        H264SequenceParameterSet(nal: sps).map { ($0.chromaFormat, $0.lumaBitDepth, $0.chromaBitDepth) }
    }
}
