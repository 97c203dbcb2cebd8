/// The B-frame reorder depth an H.264, HEVC or MPEG-4 Part 2 decoder starts with, read from the
/// sequence parameter set or video object layer in the codec configuration, as FFmpeg's decoders set
/// `has_b_frames` when they open. Matroska stores no decoding timestamps: the demuxer derives
/// them from the presentation timestamps with this depth, as libavformat does.
enum ReorderDepth {
    /// H.264 (ITU-T H.264 section 7.3.2.1.1 and annex E.1.1): the VUI's max_num_reorder_frames,
    /// else (with reference frames) what the level's largest DPB holds at this picture size,
    /// at most 15, as FFmpeg's h264_ps.c; nil when avcC holds no readable SPS.
    static func h264(avcC: [UInt8]) -> Int? {
        guard avcC.count > 8, avcC[0] == 1, avcC[5] & 0x1F > 0 else { return nil }
        let length = Int(avcC[6]) << 8 | Int(avcC[7])
        guard length > 4, 8 + length <= avcC.count,
              let sps = H264SequenceParameterSet(nal: avcC[8..<(8 + length)]), let layout = sps.layout else { return nil }
        let fromLevel: Int = {
            guard layout.maxRefFrames > 0 else { return 0 }
            let dpb: [Int: Int] = [9: 396, 10: 396, 11: 900, 12: 2376, 13: 2376, 20: 2376, 21: 4752, 22: 8100, 30: 8100,
                                   31: 18000, 32: 20480, 40: 32768, 41: 32768, 42: 34816, 50: 110400, 51: 184320, 52: 184320]
            let mbs = layout.widthInMbs * layout.heightInMapUnits * (layout.frameMbsOnly ? 1 : 2)
            guard let max = dpb[sps.level], mbs > 0 else { return 15 }
            return min(15, max / mbs)
        }()
        guard let vui = sps.vui else { return fromLevel }
        guard !vui.hrdUnreadable else { return nil }
        guard let reorder = vui.maxNumReorderFrames else { return fromLevel }
        return min(reorder, 16)
    }

    /// MPEG-4 Part 2 (ISO 14496-2 section 6.2.3): what FFmpeg's decoder sets has_b_frames to
    /// from the video object layer in `config` (the VOL headers a container stores): 0 when its
    /// vol_control_parameters say low_delay, 1 when they do not; without control parameters,
    /// 0 for the Simple and Advanced Simple object types (1 and 17) and 1 for the others
    /// (mpeg4videodec.c `decode_vol_header`). nil when `config` holds no readable VOL header.
    static func mpeg4(config: [UInt8]) -> Int? {
        var i = 0
        while i + 4 <= config.count, !(config[i] == 0 && config[i + 1] == 0 && config[i + 2] == 1 && config[i + 3] & 0xF0 == 0x20) {
            i += 1
        }
        guard i + 4 < config.count else { return nil }
        var r = BitReader(Array(config[(i + 4)...]))
        guard r.read(1) != nil, let objectType = r.read(8), let identified = r.read(1) else { return nil }
        if identified == 1 { guard r.read(7) != nil else { return nil } }   // verid, priority
        guard let aspect = r.read(4) else { return nil }
        if aspect == 15 { guard r.read(16) != nil else { return nil } }     // par_width, par_height
        guard let control = r.read(1) else { return nil }
        guard control == 1 else { return objectType == 1 || objectType == 17 ? 0 : 1 }
        guard r.read(2) != nil, let lowDelay = r.read(1) else { return nil }  // chroma_format, low_delay
        return lowDelay == 1 ? 0 : 1
    }

    /// HEVC (ITU-T H.265 section 7.3.2.2): sps_max_num_reorder_pics of the highest sub-layer;
    /// nil when hvcC holds no readable SPS.
    static func hevc(hvcC: [UInt8]) -> Int? {
        // The first SPS (type 33) after its 2-byte NAL unit header.
        guard let sps = HEVCConfigurationRecord.units(ofType: 33, in: hvcC)?.first(where: { $0.count > 2 }) else { return nil }
        var r = BitReader(AnnexB.unescape(sps.dropFirst(2)))
        guard r.read(4) != nil, let maxSub = r.read(3), r.read(1) != nil else { return nil }
        // profile_tier_level(1, maxSub)
        guard r.read(88) != nil, r.read(8) != nil else { return nil }
        var profilePresent: [Int] = [], levelPresent: [Int] = []
        for _ in 0..<maxSub {
            guard let p = r.read(1), let l = r.read(1) else { return nil }
            profilePresent.append(p)
            levelPresent.append(l)
        }
        if maxSub > 0 { for _ in maxSub..<8 { _ = r.read(2) } }
        for k in 0..<maxSub {
            if profilePresent[k] == 1 { guard r.read(88) != nil else { return nil } }
            if levelPresent[k] == 1 { guard r.read(8) != nil else { return nil } }
        }
        guard r.ue() != nil, let chroma = r.ue() else { return nil }
        if chroma == 3 { _ = r.read(1) }
        guard r.ue() != nil, r.ue() != nil, let window = r.read(1) else { return nil }
        if window == 1 { for _ in 0..<4 { guard r.ue() != nil else { return nil } } }
        guard r.ue() != nil, r.ue() != nil, r.ue() != nil, let orderingInfo = r.read(1) else { return nil }
        var reorder = 0
        for _ in (orderingInfo == 1 ? 0 : maxSub)...maxSub {
            guard r.ue() != nil, let n = r.ue(), r.ue() != nil else { return nil }
            reorder = n
        }
        return min(reorder, 16)
    }
}
