/// The frame timing H.264 and HEVC streams may state in their parameter sets (H.264 VUI
/// `timing_info`, HEVC VPS `vps_timing_info`), as FFmpeg's h264 and hevc parsers read it to
/// give packets of a container without durations (MPEG-TS) their duration.
enum VideoTiming {
    /// The duration of one frame picture in ticks of `clock` Hz, from an H.264 SPS NAL unit
    /// (header byte included, emulation prevention still in): 2 * num_units_in_tick /
    /// time_scale seconds (a frame is two field ticks, FFmpeg's `repeat_pict` 1), rounded
    /// down; nil when the SPS states no timing or cannot be read that far.
    static func h264FrameTicks(sps nal: [UInt8], clock: Int64) -> Int64? { h264(sps: nal, clock: clock)?.frameTicks }

    /// The picture size (cropped, as decoders output it) and frame duration (see
    /// ``h264FrameTicks(sps:clock:)``, nil when not stated) of an H.264 SPS NAL unit; nil when
    /// the SPS cannot be read as far as its cropping.
    static func h264(sps nal: [UInt8], clock: Int64) -> (width: Int, height: Int, frameTicks: Int64?)? {
        guard nal.count > 4, let sps = H264SequenceParameterSet(nal: nal), sps.chromaFormat <= 3,
              let layout = sps.layout, layout.widthInMbs <= 1024, layout.heightInMapUnits <= 1024,
              let size = sps.size else { return nil }
        let ticks = sps.vui?.timing.map { clock * 2 * Int64($0.unitsInTick) / Int64($0.timeScale) }
        return (size.width, size.height, ticks)
    }

    /// The duration of one picture in ticks of `clock` Hz, from an HEVC VPS NAL unit (2-byte
    /// header included): vps_num_units_in_tick / vps_time_scale seconds, rounded down; nil
    /// when the VPS states no timing or cannot be read that far.
    static func hevcFrameTicks(vps nal: [UInt8], clock: Int64) -> Int64? {
        guard nal.count > 6 else { return nil }
        var r = BitReader(AnnexB.unescape(nal.dropFirst(2)))
        guard r.read(4) != nil, r.read(2) != nil, r.read(6) != nil, let maxSub = r.read(3), r.read(17) != nil else { return nil }
        guard skipProfileTierLevel(&r, maxSub: maxSub) else { return nil }
        guard let ordering = r.read(1) else { return nil }
        for _ in (ordering == 1 ? 0 : maxSub)...maxSub {
            guard r.ue() != nil, r.ue() != nil, r.ue() != nil else { return nil }
        }
        guard let maxLayerID = r.read(6), let sets = r.ue(), sets < 1024 else { return nil }
        if sets > 0 { for _ in 1...sets { guard r.read(maxLayerID + 1) != nil else { return nil } } }
        guard r.read(1) == 1, let units = r.read(32), let scale = r.read(32), units > 0, scale > 0 else { return nil }
        return clock * Int64(units) / Int64(scale)
    }
}

extension VideoTiming {
    /// The duration of one picture in ticks of `clock` Hz, from an HEVC SPS NAL unit (2-byte
    /// header included): the VUI's vui_num_units_in_tick / vui_time_scale seconds, rounded
    /// down; nil when the SPS states no timing or cannot be read that far (FFmpeg's hevc parser
    /// takes it when the VPS has none).
    static func hevcFrameTicks(sps nal: [UInt8], clock: Int64) -> Int64? { hevc(sps: nal, clock: clock)?.frameTicks }

    /// The picture size (the conformance window, as decoders output it) and picture duration
    /// (see ``hevcFrameTicks(sps:clock:)``, nil when not stated) of an HEVC SPS NAL unit; nil
    /// when the SPS cannot be read as far as its conformance window.
    static func hevc(sps nal: [UInt8], clock: Int64) -> (width: Int, height: Int, frameTicks: Int64?)? {
        guard nal.count > 6 else { return nil }
        var r = BitReader(AnnexB.unescape(nal.dropFirst(2)))
        guard r.read(4) != nil, let maxSub = r.read(3), r.read(1) != nil else { return nil }
        guard skipProfileTierLevel(&r, maxSub: maxSub), r.ue() != nil, let chroma = r.ue(), chroma <= 3 else { return nil }
        var separatePlanes = 0
        if chroma == 3 { separatePlanes = r.read(1) ?? 0 }
        guard let fullWidth = r.ue(), let fullHeight = r.ue(), let window = r.read(1) else { return nil }
        var crop = [0, 0, 0, 0]
        if window == 1 { for i in 0..<4 { guard let v = r.ue() else { return nil }; crop[i] = v } }
        let planar = chroma == 0 || separatePlanes == 1
        let unitX = planar || chroma == 3 ? 1 : 2, unitY = planar || chroma != 1 ? 1 : 2
        let width = max(0, fullWidth - unitX * (crop[0] + crop[1])), height = max(0, fullHeight - unitY * (crop[2] + crop[3]))
        return (width, height, hevcTiming(&r, maxSub: maxSub, clock: clock))
    }

    private static func hevcTiming(_ r: inout BitReader, maxSub: Int, clock: Int64) -> Int64? {
        guard r.ue() != nil, r.ue() != nil, let pocBits = r.ue(), pocBits <= 12, let ordering = r.read(1) else { return nil }
        for _ in (ordering == 1 ? 0 : maxSub)...maxSub { guard r.ue() != nil, r.ue() != nil, r.ue() != nil else { return nil } }
        for _ in 0..<6 { guard r.ue() != nil else { return nil } }
        guard let scaling = r.read(1) else { return nil }
        if scaling == 1, r.read(1) == 1 {
            for size in 0..<4 {
                for _ in stride(from: 0, to: 6, by: size == 3 ? 3 : 1) {
                    guard let predicted = r.read(1) else { return nil }
                    if predicted == 0 { guard r.ue() != nil else { return nil }; continue }
                    if size > 1 { guard r.se() != nil else { return nil } }
                    for _ in 0..<min(64, 1 << (4 + (size << 1))) { guard r.se() != nil else { return nil } }
                }
            }
        }
        guard r.read(1) != nil, r.read(1) != nil, let pcm = r.read(1) else { return nil }
        if pcm == 1 { guard r.read(8) != nil, r.ue() != nil, r.ue() != nil, r.read(1) != nil else { return nil } }
        guard let sets = r.ue(), sets <= 64 else { return nil }
        var deltaPocs: [Int] = []
        for i in 0..<sets {
            var predicted = 0
            if i > 0 { guard let f = r.read(1) else { return nil }; predicted = f }
            if predicted == 1 {
                guard r.read(1) != nil, r.ue() != nil, let reference = deltaPocs.last else { return nil }
                var n = 0
                for _ in 0...reference {
                    guard let used = r.read(1) else { return nil }
                    var useDelta = 1
                    if used == 0 { guard let u = r.read(1) else { return nil }; useDelta = u }
                    if used == 1 || useDelta == 1 { n += 1 }
                }
                deltaPocs.append(n)
            } else {
                guard let negative = r.ue(), let positive = r.ue(), negative + positive <= 32 else { return nil }
                for _ in 0..<(negative + positive) { guard r.ue() != nil, r.read(1) != nil else { return nil } }
                deltaPocs.append(negative + positive)
            }
        }
        guard let longTerm = r.read(1) else { return nil }
        if longTerm == 1 {
            guard let n = r.ue(), n <= 32 else { return nil }
            for _ in 0..<n { guard r.read(pocBits + 4) != nil, r.read(1) != nil else { return nil } }
        }
        guard r.read(1) != nil, r.read(1) != nil, r.read(1) == 1 else { return nil }   // vui_parameters_present_flag
        if r.read(1) == 1, r.read(8) == 255 { _ = r.read(32) }            // aspect ratio
        if r.read(1) == 1 { _ = r.read(1) }                                // overscan
        if r.read(1) == 1, r.read(4) != nil, r.read(1) == 1 { _ = r.read(24) }   // video signal, colour
        if r.read(1) == 1 { _ = r.ue(); _ = r.ue() }                       // chroma location
        guard r.read(3) != nil else { return nil }                         // neutral chroma, field, frame-field
        if r.read(1) == 1 { for _ in 0..<4 { guard r.ue() != nil else { return nil } } }   // default display window
        guard r.read(1) == 1, let units = r.read(32), let scale = r.read(32), units > 0, scale > 0 else { return nil }
        return clock * Int64(units) / Int64(scale)
    }

    /// Steps over profile_tier_level(1, maxSub) (H.265 7.3.3).
    private static func skipProfileTierLevel(_ r: inout BitReader, maxSub: Int) -> Bool {
        guard r.read(48) != nil, r.read(48) != nil else { return false }   // 88 bits of profile, 8 of level
        var profilePresent: [Bool] = [], levelPresent: [Bool] = []
        for _ in 0..<maxSub {
            guard let p = r.read(1), let l = r.read(1) else { return false }
            profilePresent.append(p == 1)
            levelPresent.append(l == 1)
        }
        if maxSub > 0 { for _ in maxSub..<8 { guard r.read(2) != nil else { return false } } }
        for i in 0..<maxSub {
            if profilePresent[i] { guard r.read(44) != nil, r.read(44) != nil else { return false } }
            if levelPresent[i] { guard r.read(8) != nil else { return false } }
        }
        return true
    }
}
