/// A BITMAPINFOHEADER (Microsoft's Video for Windows picture format: what AVI's `strf` and
/// Matroska's `V_MS/VFW/FOURCC` CodecPrivate hold): size (0), width (4), height (8), planes
/// (12), bit count (14), compression fourcc (16), then 20 more bytes; whatever follows the 40
/// bytes is the codec's extradata (as FFmpeg's ff_get_bmp_header passes it on).
struct BitmapInfoHeader {
    /// Pixels; the height is negative for a top-down picture in the header and kept positive here.
    var width: Int
    var height: Int
    /// Bits per pixel as stated (the decoder's `bits_per_coded_sample`).
    var bitCount: Int
    /// The compression fourcc, as stored (little-endian: "H264" is 0x34363248).
    var compression: UInt32
    /// The bytes after the 40-byte header.
    var extradata: [UInt8]

    /// Reads the header; nil when `p` is shorter than 40 bytes.
    init?(_ p: [UInt8]) {
        guard p.count >= 40 else { return nil }
        func le32(_ i: Int) -> UInt32 { UInt32(p[i]) | UInt32(p[i + 1]) << 8 | UInt32(p[i + 2]) << 16 | UInt32(p[i + 3]) << 24 }
        width = Int(Int32(bitPattern: le32(4)))
        height = abs(Int(Int32(bitPattern: le32(8))))
        bitCount = Int(p[14]) | Int(p[15]) << 8
        compression = le32(16)
        extradata = Array(p[40...])
    }

    /// The codec the compression fourcc names (``VFWFourCC/codec(_:)``).
    var codec: CodecID { VFWFourCC.codec(compression) }
    /// The fourcc as text ("H264"; "0x00000001" when it is not printable).
    var fourccText: String { VFWFourCC.text(compression) }
}

/// Video for Windows compression fourccs and the FFmpeg codec each names: the table AVI and
/// Matroska's `V_MS/VFW/FOURCC` share (FFmpeg's `ff_codec_bmp_tags`). Matched as FFmpeg
/// matches them: exactly, then with the four letters upper-cased. Each entry is checked
/// against ffprobe by Tests/oracle/test_codec_tags.py.
enum VFWFourCC {
    /// fourcc text -> FFmpeg codec name.
    static let table: [String: String] = {
        var t: [String: String] = [:]
        func add(_ codec: String, _ tags: [String]) { for tag in tags { t[tag] = codec } }
        add("h264", ["H264", "h264", "X264", "x264", "avc1", "DAVC", "SMV2", "VSSH", "Q264", "V264", "GAVC", "UMSV", "tshd", "INMC"])
        add("mpeg4", ["FMP4", "DIVX", "DX50", "XVID", "MP4S", "M4S2", "DIV1", "BLZ0", "mp4v", "UMP4", "WV1F", "SEDG", "RMP4",
                      "3IV2", "WAWV", "FFDS", "FVFW", "DCOD", "MVXM", "PM4V", "SMP4", "DXGM", "VIDM", "M4T3", "GEOX", "HDX4",
                      "DMK2", "DIGI", "EPHV", "EM4A", "M4CC", "SN40", "VSPX", "ULDX", "GEOV", "SIPP", "SM4V", "XVIX", "DreX",
                      "QMP4", "PLV1", "GLV4", "GMP4", "MNM4", "GTM4"])
        add("h263", ["H263", "X263", "T263", "L263", "VX1K", "ZyGo", "M263", "lsvm", "U263"])
        add("h263i", ["I263"])
        add("msmpeg4v3", ["DIV3", "MP43", "MPG3", "DIV5", "DIV6", "DIV4", "DVX3", "AP41", "COL1", "COL0"])
        add("msmpeg4v2", ["MP42", "DIV2"])
        add("msmpeg4v1", ["MPG4", "MP41"])
        add("wmv1", ["WMV1"])
        add("wmv2", ["WMV2", "GXVE"])
        add("wmv3", ["WMV3"])
        add("vc1", ["WVC1", "WMVA"])
        add("vc1image", ["WVP2"])
        add("mpeg1video", ["mpg1", "MPG1", "PIM1", "BW10", "XMPG"])
        add("mpeg2video", ["mpg2", "MPG2", "PIM2", "DVR ", "MMES", "LMP2", "slif", "EM2V", "M701", "M702", "M703", "M704", "M705", "mpgv", "VCR2"])
        add("mjpeg", ["MJPG", "LJPG", "dmb1", "mjpa", "JR24", "ACDV", "QIVG", "SLMJ", "CJPG", "IJPG", "AVDJ"])
        add("avrn", ["AVRn"])
        add("jpegls", ["MJLS"])
        add("dvvideo", ["dvsd", "dvhd", "dvsl", "dv25", "dv50", "cdvc", "CDVH", "dvc ", "dvcs", "dvh1", "dvis", "pdvc", "SL25", "SLDV", "AVd1"])
        add("huffyuv", ["HFYU"])
        add("ffvhuff", ["FFVH"])
        add("ffv1", ["FFV1"])
        add("rawvideo", ["I420", "IYUV", "YV12", "YUY2", "UYVY", "Y800", "NV12", "NV21", "YVYU", "YV16", "YV24", "Y41B", "Y42B", "2vuy", "yuv2"])
        add("msrle", ["mrle"])
        add("msvideo1", ["MSVC", "msvc", "CRAM", "cram", "WHAM", "wham"])
        add("cinepak", ["cvid"])
        add("truemotion1", ["DUCK", "PVEZ"])
        add("truemotion2", ["TM20"])
        add("tscc", ["tscc"])
        add("tscc2", ["TSC2"])
        add("indeo3", ["IV31", "IV32"])
        add("indeo4", ["IV41"])
        add("indeo5", ["IV50"])
        add("vp3", ["VP30", "VP31"])
        add("vp5", ["VP50"])
        add("vp6", ["VP60", "VP61", "VP62"])
        add("vp6f", ["VP6F", "FLV4"])
        add("vp6a", ["VP6A"])
        add("vp7", ["VP70", "VP71"])
        add("vp8", ["VP80"])
        add("vp9", ["VP90"])
        add("av1", ["AV01"])
        add("theora", ["theo"])
        add("flv1", ["FLV1", "S263"])
        add("snow", ["SNOW"])
        add("asv1", ["ASV1"])
        add("asv2", ["ASV2"])
        add("vcr1", ["VCR1"])
        add("loco", ["LOCO"])
        add("wnv1", ["WNV1"])
        add("zmbv", ["ZMBV"])
        add("qpeg", ["Q1.0", "Q1.1", "QPEG"])
        add("png", ["MPNG", "PNG1", "png "])
        add("jpeg2000", ["MJ2C", "mj2c", "LJ2C", "LJ2K", "IPJ2", "AVj2"])
        add("utvideo", ["ULRA", "ULRG", "ULY0", "ULY2", "ULY4", "ULH0", "ULH2", "ULH4"])
        add("dirac", ["drac"])
        add("cllc", ["CLLC"])
        add("magicyuv", ["MAGY", "M8RG", "M8RA", "M8G0", "M8Y0", "M8Y2", "M8Y4", "M8YA"])
        add("fraps", ["FPS1"])
        add("cfhd", ["CFHD"])
        add("dnxhd", ["AVdn"])
        add("hap", ["Hap1", "Hap5", "HapY"])
        add("aasc", ["AASC", "AAS4"])
        add("mszh", ["MSZH"])
        add("zlib", ["ZLIB"])
        add("cscd", ["CSCD"])
        add("8bps", ["8BPS"])
        add("ulti", ["ULTI"])
        add("vmnc", ["VMnc"])
        add("lagarith", ["LAGS"])
        add("fic", ["FICV"])
        add("prores", ["apcn", "apch", "apcs", "apco", "ap4h"])
        return t
    }()

    /// Fourccs that are not four letters: BI_RGB (0), BI_RLE8 (1), BI_RLE4 (2), BI_BITFIELDS (3).
    static let numeric: [UInt32: String] = [0: "rawvideo", 1: "msrle", 2: "msrle", 3: "rawvideo"]

    /// The codec `tag` names, ``CodecID/unknown`` when the table has none.
    static func codec(_ tag: UInt32) -> CodecID {
        if let name = numeric[tag] { return CodecID(name) }
        let text = self.text(tag)
        if let name = table[text] ?? table[text.uppercased()] { return CodecID(name) }
        // FFmpeg's second pass: the upper-cased tag against the upper-cased table.
        let upper = text.uppercased()
        if let hit = table.first(where: { $0.key.uppercased() == upper }) { return CodecID(hit.value) }
        return .unknown
    }

    /// The fourcc as its four characters, or "0x%08X" when one is not printable ASCII.
    static func text(_ tag: UInt32) -> String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: tag >> (8 * UInt32($0))) }
        guard bytes.allSatisfy({ (0x20...0x7E).contains($0) }) else { return "0x" + String(tag, radix: 16, uppercase: true) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
