/// Tells the H.264 and HEVC packets whose picture no other picture refers to, so that a
/// decoder looking for later frames can leave them out (what libavcodec's
/// `skip_frame = AVDISCARD_NONREF` does, without even parsing them): every other picture decodes
/// to the same samples without them.
///
/// - H.264 (ITU-T H.264 7.4.1): a picture is not a reference when the `nal_ref_idc` of its
///   slice (and slice data partition) NAL units is 0; an IDR slice always is one.
/// - HEVC (ITU-T H.265 7.4.2.2): a picture of the sub-layer non-reference types (`TRAIL_N`,
///   `TSA_N`, `STSA_N`, `RADL_N`, `RASL_N`, the reserved `RSV_VCL_N10 / 12 / 14`: the even
///   types below 16) is not referred to by pictures of its own temporal sub-layer, only by
///   higher ones; so it is only left out when it belongs to the highest sub-layer the SPS
///   allows (`sps_max_sub_layers_minus1`), and never when the extradata holds no SPS.
///
/// A packet counts as a non-reference picture only when every VCL NAL unit in it says so (two
/// fields in one packet, one a reference, are kept); a packet whose units cannot be walked
/// (a length prefix past its end, no start code) or that holds no slice is kept.
struct NonReferencePictures: Sendable {
    private let hevc: Bool
    /// The samples' length prefix size (1...4), 0 for packets in Annex B form.
    private let lengthSize: Int
    /// HEVC: the highest TemporalId the stream's SPS allows.
    private let highestTemporalId: Int

    /// The test for a track of `codec` with `extradata` (avcC / hvcC or Annex B parameter sets);
    /// nil for other codecs, and for HEVC whose extradata holds no readable SPS.
    init?(codec: CodecID, extradata: [UInt8]) {
        switch codec {
        case "h264":
            hevc = false
            highestTemporalId = 0
            if extradata.isEmpty || AnnexB.startsWithStartCode(extradata) {
                lengthSize = 0
            } else {
                guard extradata.count >= 5 else { return nil }
                lengthSize = Int(extradata[4] & 3) + 1
            }
        case "hevc":
            hevc = true
            var spsFirstBytes: [UInt8] = []
            if AnnexB.startsWithStartCode(extradata) {
                lengthSize = 0
                for u in AnnexB.nalUnits(in: extradata) where u.count >= 3 && AnnexB.hevcType(extradata[u.lowerBound]) == 33 {
                    spsFirstBytes.append(extradata[u.lowerBound + 2])
                }
            } else {
                guard let units = HEVCConfigurationRecord.units(ofType: 33, in: extradata) else { return nil }
                lengthSize = Int(extradata[21] & 3) + 1
                for u in units where u.count >= 3 { spsFirstBytes.append(u[u.startIndex + 2]) }
            }
            // The byte after the SPS's NAL unit header: sps_video_parameter_set_id (4 bits),
            // sps_max_sub_layers_minus1 (3), sps_temporal_id_nesting_flag (1).
            guard let highest = spsFirstBytes.map({ Int($0 >> 1 & 7) }).max() else { return nil }
            highestTemporalId = highest
        default:
            return nil
        }
    }

    /// The test for `track`'s packets, as ``init(codec:extradata:)``.
    init?(track: Track) { self.init(codec: track.parameters.codec, extradata: track.parameters.extradata) }

    /// True when `data` (one packet) is a picture no other picture refers to.
    func isNonReference(_ data: [UInt8]) -> Bool {
        var slices = 0
        if lengthSize > 0 {
            var at = 0
            while at < data.count {
                guard at + lengthSize <= data.count else { return false }
                var n = 0
                for k in 0..<lengthSize { n = n << 8 | Int(data[at + k]) }
                at += lengthSize
                guard n > 0, at + n <= data.count else { return false }
                switch classify(data, at, n) {
                case .reference: return false
                case .nonReference: slices += 1
                case .other: break
                }
                at += n
            }
        } else {
            guard AnnexB.startsWithStartCode(data) else { return false }
            for u in AnnexB.nalUnits(in: data) {
                switch classify(data, u.lowerBound, u.count) {
                case .reference: return false
                case .nonReference: slices += 1
                case .other: break
                }
            }
        }
        return slices > 0
    }

    private enum Unit { case reference, nonReference, other }

    /// What the NAL unit of `count` bytes at `at` says about its picture.
    private func classify(_ data: [UInt8], _ at: Int, _ count: Int) -> Unit {
        let header = data[at]
        if hevc {
            let type = AnnexB.hevcType(header)
            guard type < 32 else { return .other }   // not a VCL unit
            guard count >= 2 else { return .reference }
            let temporalId = Int(data[at + 1] & 7) - 1
            let subLayerNonReference = type < 16 && type % 2 == 0
            return subLayerNonReference && temporalId == highestTemporalId ? .nonReference : .reference
        }
        switch AnnexB.h264Type(header) {
        case 1...4: return header & 0x60 == 0 ? .nonReference : .reference   // slices, partitions
        case 5, 20, 21: return .reference   // IDR; SVC / MVC and 3D slices: not judged, kept
        default: return .other
        }
    }
}
