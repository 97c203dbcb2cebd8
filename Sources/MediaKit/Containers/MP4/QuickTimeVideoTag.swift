/// QuickTime video sample entry types that name a codec with no configuration box MediaKit
/// reads (ProRes, DV, HDV / XDCAM MPEG-2, PNG, QuickTime RLE, Cinepak ...), by FFmpeg's codec
/// names (its `ff_codec_movvideo_tags`). The entries with a configuration box (avc1, hvc1,
/// av01, mp4v ...) are read by `SampleEntryParser` itself, and so is `dvh1` (Dolby Vision HEVC,
/// which FFmpeg 5.1 names dvvideo when the entry has no hvcC). Each entry is checked against
/// ffmpeg by Tests/oracle/test_codec_tags.py.
enum QuickTimeVideoTag {
    /// Sample entry type -> FFmpeg codec name.
    static let table: [String: String] = {
        var t: [String: String] = [:]
        func add(_ codec: String, _ tags: [String]) { for tag in tags { t[tag] = codec } }
        add("prores", ["apcn", "apch", "apcs", "apco", "ap4h", "ap4x"])
        add("png", ["png ", "MNG "])
        add("qtrle", ["rle "])
        add("cinepak", ["cvid"])
        add("smc", ["smc "])
        add("rpza", ["rpza"])
        add("8bps", ["8BPS"])
        add("dvvideo", ["dvc ", "dvcp", "dvpp", "dv5n", "dv5p", "dvh5", "dvh6", "dvhp", "dvhq", "dvh3", "dvh2"])
        add("mjpegb", ["mjpb"])
        add("dnxhd", ["AVdn"])
        add("hap", ["Hap1", "Hap5", "HapY", "HapM", "HapA"])
        add("qdraw", ["qdrw"])
        add("tiff", ["tiff"])
        add("jpeg2000", ["mjp2"])
        add("v210", ["v210"])
        add("v410", ["v410"])
        add("r210", ["r210"])
        add("yuv4", ["yuv4"])
        add("svq1", ["SVQ1", "svq1", "svqi"])
        add("svq3", ["SVQ3"])
        add("targa", ["tga "])
        add("sgi", ["SGI "])
        add("cfhd", ["CFHD"])
        add("h263", ["U263"])
        add("mpeg2video", ["hdv1", "hdv2", "hdv3", "hdv5", "hdv6", "hdv7", "hdv8", "hdv9", "hdva", "xdv1", "xdv2", "xdv3",
                           "xdv4", "xdv5", "xdv6", "xdv7", "xdv8", "xdv9", "xdva", "xdvb", "xdvc", "xdvd", "xdve", "xdvf",
                           "xd5a", "xd5b", "xd5c", "xd5d", "xd5e", "xd5f", "xd59", "xd54", "xd55", "xd51", "mx5n", "mx5p",
                           "mx4n", "mx4p", "mx3n", "mx3p", "AVmp", "mp2v", "m2v1"])
        add("mpeg1video", ["m1v1", "m1v ", "mpeg"])
        add("vc1", ["vc-1"])
        add("avrp", ["AVrp"])
        add("aic", ["icod"])
        // Uncompressed pictures: libavcodec's rawvideo decoder takes the pixel layout from the
        // sample entry type (and, for 'raw ', its depth: the bits per coded sample).
        add("rawvideo", ["raw ", "yuv2", "2vuy", "yuvs", "L555", "L565", "B565", "24BG", "BGRA", "RGBA", "ABGR", "b16g", "b48r",
                         "b64a", "bxbg", "bxrg", "bxyv", "NO16", "DVOO", "R420", "R411", "WRAW", "AV1x", "AVup"])
        return t
    }()
}
