/// Which key frames of a stream without timestamps (raw H.264 / HEVC, Annex B access units in
/// decoding order) a decode can start at with a known place in presentation order, and which
/// pictures after such a key frame are its leading pictures (decoded after it, presented
/// before it). The frame list and seeks of raw streams count presentation order with it: a key
/// frame followed by L leading pictures is presented L frames after its place in decoding order.
///
/// - HEVC: every IRAP picture starts; leading pictures are marked by NAL unit type (RADL
///   decodable from the IRAP picture, RASL not; H.265 7.4.2.2).
/// - H.264 marks no leading pictures: they are found by picture order count (8.2.1). An IDR
///   picture starts (no picture after it is presented before it). A recovery point (SEI,
///   recovery_frame_cnt 0) on an intra-coded frame picture starts when the SPS's POC type is 0
///   (the pictures after it with a lower order count are its leading pictures; a decoder starting
///   there drops them, as libavcodec drops pictures output before the recovery point) or 2
///   (output order is decoding order). With POC type 1, interlaced coding, or a parameter set
///   not seen, a recovery point does not start (its leading pictures cannot be counted) and a
///   decode starts at the IDR picture before it. Memory management operation 5 (a POC reset
///   inside the stream, which no common encoder writes) is not read.
/// - Other codecs: every key frame starts, no picture leads.
struct LeadingPictures {
    /// Where a picture stands against the key frame before it in decoding order.
    enum Place: Equatable {
        /// Presented after the key frame (or a key frame itself, or no picture).
        case trailing
        /// A leading picture that refers only to the key frame and its leading pictures
        /// (HEVC RADL_N / RADL_R): decodable when decoding starts at the key frame.
        case decodableLeading
        /// A leading picture that may refer to pictures before the key frame (HEVC RASL_N /
        /// RASL_R; H.264 leading pictures of a recovery point): a decoder starting at the key
        /// frame drops it.
        case skippedLeading
    }

    private let codec: CodecID
    /// H.264 parameter sets seen so far: SPS by id, and the SPS id of each PPS.
    private var sequenceSets: [Int: H264SequenceParameterSet] = [:]
    private var pictureSets: [Int: Int] = [:]
    /// PicOrderCntMsb and pic_order_cnt_lsb of the last reference picture (H.264 8.2.1.1).
    private var previousReference = (msb: 0, lsb: 0)
    /// The order count of the recovery point whose leading pictures are being counted.
    private var keyOrderCount: Int?

    init(codec: CodecID) { self.codec = codec }

    /// The next access unit in decoding order (`isKeyframe`: as the demuxer flags it, ffprobe's
    /// flag): whether a decode can start at it with its place in presentation order known, and
    /// its place against the last access unit that could.
    mutating func next(_ accessUnit: [UInt8], isKeyframe: Bool) -> (start: Bool, place: Place) {
        switch codec {
        case .hevc: return (isKeyframe, Self.hevcPlace(accessUnit))
        case .h264: return nextH264(accessUnit, isKeyframe: isKeyframe)
        default: return (isKeyframe, .trailing)
        }
    }

    /// The place of the picture in `accessUnit` (HEVC in Annex B form) by its first slice's NAL
    /// unit type (H.265 table 7-1).
    static func hevcPlace(_ accessUnit: [UInt8]) -> Place {
        switch AnnexB.firstHEVCSliceType(accessUnit) {
        case 6, 7: return .decodableLeading
        case 8, 9: return .skippedLeading
        default: return .trailing
        }
    }

    private mutating func nextH264(_ accessUnit: [UInt8], isKeyframe: Bool) -> (start: Bool, place: Place) {
        var recoveryFrames: Int?
        for u in AnnexB.nalUnits(in: accessUnit, stopAfter: { [1, 2, 5].contains(AnnexB.h264Type($0)) }) where !u.isEmpty {
            let nal = accessUnit[u]
            switch AnnexB.h264Type(nal[nal.startIndex]) {
            case 6:
                if recoveryFrames == nil { recoveryFrames = AnnexB.recoveryFrameCount(nal) }
            case 7:
                if let sps = H264SequenceParameterSet(nal: nal) { sequenceSets[sps.id] = sps }
            case 8:
                var r = BitReader(AnnexB.unescape(nal.dropFirst()))
                if let pps = r.ue(), let sps = r.ue() { pictureSets[pps] = sps }
            case 1, 2, 5:   // a slice (2: data partition A, which holds the slice header)
                return picture(nal, recoveryFrames: isKeyframe ? recoveryFrames : nil)
            default:
                break
            }
        }
        return (false, .trailing)   // no picture
    }

    /// The place of the picture whose first slice is `slice` (NAL unit, header byte included).
    private mutating func picture(_ slice: ArraySlice<UInt8>, recoveryFrames: Int?) -> (start: Bool, place: Place) {
        let header = slice[slice.startIndex]
        let idr = AnnexB.h264Type(header) == 5, reference = header & 0x60 != 0
        // The slice header as far as pic_order_cnt_lsb (7.3.3), read from its first bytes.
        var r = BitReader(AnnexB.unescape(slice.dropFirst().prefix(32)))
        var orderCount: Int?, intra = false, progressive = false, pocType: Int?
        if r.ue() != nil, let type = r.ue(), let pps = r.ue(), let spsID = pictureSets[pps],
           let sps = sequenceSets[spsID], let layout = sps.layout {
            intra = type % 5 == 2 || type % 5 == 4   // I or SI
            progressive = layout.frameMbsOnly
            pocType = layout.pocType
            if layout.pocType == 0, !sps.separateColourPlanes || r.read(2) != nil, r.read(layout.log2MaxFrameNum) != nil,
               progressive, !idr || r.ue() != nil, let lsb = r.read(layout.log2MaxPocLsb) {
                orderCount = orderCountType0(lsb: lsb, idr: idr, reference: reference, maxLsb: 1 << layout.log2MaxPocLsb)
            }
        }
        if let key = keyOrderCount {
            if let count = orderCount, count < key { return (false, .skippedLeading) }
            keyOrderCount = nil
        }
        if idr { return (true, .trailing) }
        // A recovery point with its picture whole at once (recovery_frame_cnt 0) on an intra frame.
        guard recoveryFrames == 0, intra, progressive else { return (false, .trailing) }
        if pocType == 2 { return (true, .trailing) }   // output order is decoding order: no leading pictures
        guard pocType == 0, let count = orderCount else { return (false, .trailing) }
        keyOrderCount = count
        return (true, .trailing)
    }

    /// TopFieldOrderCnt of a frame picture (H.264 8.2.1.1), the last reference picture's
    /// count carried over (reset by an IDR picture).
    private mutating func orderCountType0(lsb: Int, idr: Bool, reference: Bool, maxLsb: Int) -> Int {
        if idr { previousReference = (0, 0) }
        let prev = previousReference
        var msb = prev.msb
        if lsb < prev.lsb && prev.lsb - lsb >= maxLsb / 2 {
            msb += maxLsb
        } else if lsb > prev.lsb && lsb - prev.lsb > maxLsb / 2 {
            msb -= maxLsb
        }
        if reference { previousReference = (msb, lsb) }
        return msb + lsb
    }
}
