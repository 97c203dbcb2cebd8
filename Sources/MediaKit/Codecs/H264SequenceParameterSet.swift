/// An H.264 sequence parameter set (ITU-T H.264 section 7.3.2.1.1, with annex E.1.1's VUI) read
/// as far as it goes: the one reader behind the picture format an avcC record states, the picture
/// size and frame timing of raw and MPEG-TS streams, the reorder depth of Matroska's decoding
/// times, and the picture order counts of raw streams' recovery points.
struct H264SequenceParameterSet {
    /// The profiles whose SPS states chroma format, bit depths and scaling matrices.
    static let highProfiles: Set<Int> = [100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]

    let profile: Int
    let level: Int
    /// seq_parameter_set_id.
    let id: Int
    /// chroma_format_idc as stated (1, 4:2:0, where the profile states none; not checked to be at most 3).
    let chromaFormat: Int
    let separateColourPlanes: Bool
    let lumaBitDepth: Int
    let chromaBitDepth: Int

    /// The fields from log2_max_frame_num to the cropping: nil when the SPS ends before them.
    let layout: Layout?
    /// The VUI, nil when the SPS has none (or ends before its flag).
    let vui: VUI?

    struct Layout {
        /// log2_max_frame_num_minus4 + 4: the bits of a slice header's frame_num.
        let log2MaxFrameNum: Int
        /// pic_order_cnt_type (0, 1 or 2).
        let pocType: Int
        /// log2_max_pic_order_cnt_lsb_minus4 + 4 (POC type 0).
        let log2MaxPocLsb: Int
        let maxRefFrames: Int
        let widthInMbs: Int
        let heightInMapUnits: Int
        let frameMbsOnly: Bool
        /// frame_crop_left, right, top and bottom offsets (0 without cropping).
        let crop: [Int]
    }

    struct VUI {
        /// num_units_in_tick and time_scale when timing_info is present and both are above 0.
        let timing: (unitsInTick: Int, timeScale: Int)?
        /// max_num_reorder_frames of the bitstream restriction, nil without one.
        let maxNumReorderFrames: Int?
        /// The HRD parameters could not be read (the SPS ends inside them).
        let hrdUnreadable: Bool
    }

    /// Reads `nal`, an SPS NAL unit (header byte included, emulation prevention still in); nil
    /// when it ends before its bit depths (the fields every user of it needs).
    init?(nal: some Collection<UInt8>) {
        var r = BitReader(AnnexB.unescape(nal.dropFirst()))
        guard let profile = r.read(8), r.read(8) != nil, let level = r.read(8), let id = r.ue() else { return nil }
        self.profile = profile
        self.level = level
        self.id = id
        var chroma = 1, separate = false, luma = 8, chromaDepth = 8
        var complete = true   // read as far as the layout's first field
        if Self.highProfiles.contains(profile) {
            guard let c = r.ue() else { return nil }
            chroma = c
            if c == 3 {
                guard let s = r.read(1) else { return nil }
                separate = s == 1
            }
            guard let l = r.ue(), let cd = r.ue() else { return nil }
            luma = l + 8
            chromaDepth = cd + 8
            complete = Self.skipScalingMatrices(&r, chroma: chroma)
        }
        chromaFormat = chroma
        separateColourPlanes = separate
        lumaBitDepth = luma
        chromaBitDepth = chromaDepth
        guard complete, let layout = Self.layout(&r) else {
            layout = nil
            vui = nil
            return
        }
        self.layout = layout
        vui = Self.vui(&r)
    }

    /// The cropped picture size, as decoders output it (H.264 7.4.2.1.1: crop units are chroma
    /// samples, luma ones for monochrome or separate planes); nil without a layout.
    var size: (width: Int, height: Int)? {
        guard let l = layout else { return nil }
        let planar = chromaFormat == 0 || separateColourPlanes
        let frames = l.frameMbsOnly ? 1 : 2
        let unitX = planar ? 1 : (chromaFormat == 3 ? 1 : 2)
        let unitY = (planar ? 1 : (chromaFormat == 1 ? 2 : 1)) * frames
        let width = max(0, l.widthInMbs * 16 - unitX * (l.crop[0] + l.crop[1]))
        let height = max(0, frames * l.heightInMapUnits * 16 - unitY * (l.crop[2] + l.crop[3]))
        return (width, height)
    }

    /// seq_scaling_matrix_present_flag and the lists after it; false when the SPS ends inside.
    private static func skipScalingMatrices(_ r: inout BitReader, chroma: Int) -> Bool {
        guard r.read(1) != nil, let scaling = r.read(1) else { return false }   // qpprime_y_zero_transform_bypass_flag
        guard scaling == 1 else { return true }
        for i in 0..<(chroma == 3 ? 12 : 8) {
            guard let present = r.read(1) else { return false }
            guard present == 1 else { continue }
            var last = 8, next = 8
            for _ in 0..<(i < 6 ? 16 : 64) where next != 0 {
                guard let delta = r.se() else { return false }
                next = (last + delta + 256) % 256
                if next != 0 { last = next }
            }
        }
        return true
    }

    /// nil, as FFmpeg's h264_ps.c refuses the SPS, for values outside H.264's ranges (7.4.2.1.1):
    /// log2_max_frame_num_minus4 and log2_max_pic_order_cnt_lsb_minus4 0 to 12, pic_order_cnt_type
    /// 0 to 2 (a count of bits beyond them made the picture order count overflow: fuzz-rawvideo).
    private static func layout(_ r: inout BitReader) -> Layout? {
        guard let frameNum = r.ue(), frameNum <= 12, let pocType = r.ue(), pocType <= 2 else { return nil }
        var pocLsb = 0
        if pocType == 0 {
            guard let v = r.ue(), v <= 12 else { return nil }
            pocLsb = v + 4
        } else if pocType == 1 {
            guard r.read(1) != nil, r.se() != nil, r.se() != nil, let n = r.ue(), n < 256 else { return nil }
            for _ in 0..<n { guard r.se() != nil else { return nil } }
        }
        guard let refFrames = r.ue(), r.read(1) != nil, let mbWidth = r.ue(), let mapHeight = r.ue(),
              let frameMbsOnly = r.read(1) else { return nil }
        if frameMbsOnly == 0 { _ = r.read(1) }   // mb_adaptive_frame_field_flag
        guard r.read(1) != nil, let cropping = r.read(1) else { return nil }   // direct_8x8_inference_flag
        var crop = [0, 0, 0, 0]
        if cropping == 1 { for i in 0..<4 { guard let v = r.ue() else { return nil }; crop[i] = v } }
        return Layout(log2MaxFrameNum: frameNum + 4, pocType: pocType, log2MaxPocLsb: pocLsb, maxRefFrames: refFrames,
                      widthInMbs: mbWidth + 1, heightInMapUnits: mapHeight + 1, frameMbsOnly: frameMbsOnly == 1, crop: crop)
    }

    /// The VUI (annex E.1.1) up to the bitstream restriction's max_num_reorder_frames. A field
    /// the SPS ends before reads as absent, as FFmpeg's h264_ps.c reads a short VUI.
    private static func vui(_ r: inout BitReader) -> VUI? {
        guard r.read(1) == 1 else { return nil }                                 // vui_parameters_present_flag
        if r.read(1) == 1, r.read(8) == 255 { _ = r.read(32) }                  // aspect ratio
        if r.read(1) == 1 { _ = r.read(1) }                                      // overscan
        if r.read(1) == 1, r.read(4) != nil, r.read(1) == 1 { _ = r.read(24) }   // video signal, colour
        if r.read(1) == 1 { _ = r.ue(); _ = r.ue() }                             // chroma location
        var timing: (Int, Int)?
        if r.read(1) == 1 {
            let units = r.read(32), scale = r.read(32)
            _ = r.read(1)                                                        // fixed_frame_rate_flag
            if let units, let scale, units > 0, scale > 0 { timing = (units, scale) }
        }
        let nal = r.read(1) ?? 0
        if nal == 1 && !skipHRD(&r) { return VUI(timing: timing, maxNumReorderFrames: nil, hrdUnreadable: true) }
        let vcl = r.read(1) ?? 0
        if vcl == 1 && !skipHRD(&r) { return VUI(timing: timing, maxNumReorderFrames: nil, hrdUnreadable: true) }
        if nal == 1 || vcl == 1 { _ = r.read(1) }                                // low_delay_hrd_flag
        var reorder: Int?
        if r.read(1) != nil, r.read(1) == 1,                                     // pic_struct_present, bitstream_restriction
           r.read(1) != nil, r.ue() != nil, r.ue() != nil, r.ue() != nil, r.ue() != nil, let n = r.ue() {
            reorder = n
        }
        return VUI(timing: timing, maxNumReorderFrames: reorder, hrdUnreadable: false)
    }

    /// hrd_parameters (annex E.1.2); false when the SPS ends inside them.
    static func skipHRD(_ r: inout BitReader) -> Bool {
        guard let count = r.ue(), count < 32, r.read(4) != nil, r.read(4) != nil else { return false }
        for _ in 0...count {
            guard r.ue() != nil, r.ue() != nil, r.read(1) != nil else { return false }
        }
        return r.read(20) != nil
    }
}
