extension ContainerFormat {
    /// Raw H.264 byte streams (Annex B); ``RawVideoDemuxer``. The probe is FFmpeg's
    /// `h264_probe`: an SPS, a PPS naming it and an IDR slice (or four slices) naming that PPS,
    /// every NAL header valid, scored 51 (below MP4's 60 and the signatures).
    public static let h264 = ContainerFormat(
        name: "h264", description: "raw H.264 (Annex B)", extensions: ["h264", "264", "avc", "h26l"], mimeTypes: ["video/h264"],
        probe: { head, _ in RawVideoDemuxer.probeH264(head) },
        makeDemuxer: { try RawVideoDemuxer(source: $0, syntax: .h264) })

    /// Raw HEVC byte streams (Annex B); ``RawVideoDemuxer``. The probe is FFmpeg's
    /// `hevc_probe`: a VPS, an SPS, a PPS and an IRAP slice of the base layer, every NAL header
    /// valid, scored 51.
    public static let hevc = ContainerFormat(
        name: "hevc", description: "raw HEVC (Annex B)", extensions: ["hevc", "h265", "265"], mimeTypes: ["video/h265"],
        probe: { head, _ in RawVideoDemuxer.probeHEVC(head) },
        makeDemuxer: { try RawVideoDemuxer(source: $0, syntax: .hevc) })

    /// AV1 low-overhead OBU streams; ``RawVideoDemuxer``. The probe is FFmpeg's `obu_probe`: a
    /// temporal delimiter first, then a sequence header before the first frame, scored 51.
    public static let obu = ContainerFormat(
        name: "obu", description: "AV1 low-overhead OBU stream", extensions: ["obu"], mimeTypes: ["video/AV1"],
        probe: { head, _ in RawVideoDemuxer.probeOBU(head) },
        makeDemuxer: { try RawVideoDemuxer(source: $0, syntax: .av1) })
}

extension RawVideoDemuxer {
    /// FFmpeg's score for a raw stream it recognises by content: AVPROBE_SCORE_EXTENSION + 1.
    static let probeScore = 51

    /// ue(v) read from `b` at bit `bit` (zero bits past the end), as FFmpeg's get_ue_golomb_long.
    private static func ue(_ b: ArraySlice<UInt8>, _ bit: inout Int) -> UInt32 {
        func bitAt(_ k: Int) -> Int {
            let byte = b.startIndex + k >> 3
            return byte < b.endIndex ? Int(b[byte] >> (7 - UInt8(k & 7))) & 1 : 0
        }
        var zeros = 0
        while zeros < 32 && bitAt(bit + zeros) == 0 { zeros += 1 }
        if zeros == 32 { bit += 32; return UInt32.max }
        var v: UInt64 = 0
        for k in 0...zeros { v = v << 1 | UInt64(bitAt(bit + zeros + k)) }
        bit += 2 * zeros + 1
        return UInt32(truncatingIfNeeded: v - 1)
    }

    /// FFmpeg's `h264_probe` (libavformat/h264dec.c) over `head`: 51 or 0.
    static func probeH264(_ head: [UInt8]) -> Int {
        var code: UInt32 = 0xFFFF_FFFF
        var sps = 0, pps = 0, idr = 0, res = 0, sli = 0
        var ppsIDs = [Bool](repeating: false, count: 257), spsIDs = [Bool](repeating: false, count: 33)
        let refZero: [Int8] = [2, 0, 0, 0, 0, -1, 1, -1, -1, 1, 1, 1, 1, -1, 2, 2, 2, 2, 2, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
        var i = 0
        while i + 2 < head.count {
            code = code << 8 | UInt32(head[i])
            if code & 0xFFFF_FF00 == 0x100 {
                let refIdc = (code >> 5) & 3, type = Int(code & 0x1F)
                if code & 0x80 != 0 { return 0 }
                if refZero[type] == 1 && refIdc != 0 { return 0 }
                if refZero[type] == -1 && refIdc == 0 { return 0 }
                if refZero[type] == 2 && !(code == 0x100 && head[i + 1] == 0 && head[i + 2] == 0) { res += 1 }
                let rest = head[(i + 1)...]
                var bit = 0
                switch type {
                case 1, 5:
                    _ = ue(rest, &bit)
                    if ue(rest, &bit) > 9 { return 0 }
                    let ppsID = ue(rest, &bit)
                    if ppsID > 256 { return 0 }
                    if !ppsIDs[Int(ppsID)] { break }
                    if type == 1 { sli += 1 } else { idr += 1 }
                case 7:
                    let constraints = rest.count > 1 ? rest[rest.startIndex + 1] : 0
                    if constraints & 3 != 0 { return 0 }   // reserved_zero_2bits
                    bit = 24   // profile_idc, the constraint flags, level_idc
                    let spsID = ue(rest, &bit)
                    if spsID > 32 { return 0 }
                    spsIDs[Int(spsID)] = true
                    sps += 1
                case 8:
                    let ppsID = ue(rest, &bit)
                    if ppsID > 256 { return 0 }
                    let spsID = ue(rest, &bit)
                    if spsID > 32 { return 0 }
                    if !spsIDs[Int(spsID)] { break }
                    ppsIDs[Int(ppsID)] = true
                    pps += 1
                default: break
                }
            }
            i += 1
        }
        return sps > 0 && pps > 0 && (idr > 0 || sli > 3) && res < sps + pps + idr ? probeScore : 0
    }

    /// FFmpeg's `hevc_probe` (libavformat/hevcdec.c) over `head`: 51 or 0.
    static func probeHEVC(_ head: [UInt8]) -> Int {
        var code: UInt32 = 0xFFFF_FFFF
        var vps = 0, sps = 0, pps = 0, irap = 0
        var i = 0
        while i + 1 < head.count {
            code = code << 8 | UInt32(head[i])
            if code & 0xFFFF_FF00 == 0x100 {
                let type = Int(code & 0x7E) >> 1
                if code & 0x81 != 0 || head[i + 1] & 0xF8 != 0 { return 0 }
                switch type {
                case 32: vps += 1
                case 33: sps += 1
                case 34: pps += 1
                case 16...21: irap += 1
                default: break
                }
            }
            i += 1
        }
        return vps > 0 && sps > 0 && pps > 0 && irap > 0 ? probeScore : 0
    }

    /// FFmpeg's `obu_probe` (libavformat/av1dec.c) over `head`: a temporal delimiter with
    /// size 0 first, then OBUs with size fields up to a frame (header) after a sequence
    /// header: 51; 0 otherwise.
    static func probeOBU(_ head: [UInt8]) -> Int {
        // One OBU at `i`: (type, total length) when its header is valid and has a size field.
        func obu(_ i: Int) -> (type: Int, size: Int, length: Int)? {
            guard i < head.count else { return nil }
            let h = head[i]
            guard h & 0x80 == 0, h & 2 != 0, h & 1 == 0 else { return nil }   // forbidden bit, size field, reserved bit
            var p = i + 1
            if h & 4 != 0 { guard p < head.count else { return nil }; p += 1 }
            var size = 0, shift = 0
            while true {
                guard p < head.count, shift < 56 else { return nil }
                let b = head[p]
                p += 1
                size |= Int(b & 0x7F) << shift
                shift += 7
                if b & 0x80 == 0 { break }
            }
            return (Int(h >> 3) & 15, size, p - i + size)
        }
        guard let first = obu(0), first.type == 2, first.size == 0 else { return 0 }
        var i = first.length
        var sequence = false
        while i < head.count {
            guard let o = obu(i), o.size > 0 else { return 0 }
            switch o.type {
            case 1: sequence = true
            case 3, 6: return sequence ? probeScore : 0
            case 2, 4, 8: return 0   // another temporal delimiter, a tile group or tile list before a frame
            default: break
            }
            i += o.length
        }
        return 0
    }
}

extension RawVideoDemuxer {
    /// A frame rate written as ffmpeg's `-r` / `-framerate` take one: "25", "30000/1001" or
    /// "29.97" (as 2997/100); nil when the text is not a positive rate.
    public static func frameRate(parsing text: String) -> Rational? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2, let n = Int64(parts[0]), let d = Int64(parts[1]), n > 0, d > 0 { return Track.reduced(n, d) }
        if parts.count == 1, let n = Int64(text), n > 0 { return Rational(n, 1) }
        if parts.count == 1, let v = Double(text), v.isFinite, v > 0, v < 1e6 {
            return Track.reduced(Int64((v * 1000).rounded()), 1000)
        }
        return nil
    }

    /// Times the packets of `demuxer` at `rate` (``frameRate``), as ffmpeg's `-r` before `-i`
    /// times a raw stream.
    /// - Throws: `.invalidArgument` when `demuxer` does not read a raw video stream (the other
    ///   containers carry their own times).
    public static func setFrameRate(_ rate: Rational, on demuxer: Demuxer, path: String) throws {
        guard let raw = demuxer as? RawVideoDemuxer else {
            throw MediaError(.invalidArgument, "a frame rate applies to raw H.264, HEVC and AV1 OBU streams only; this file's container times its packets itself",
                             path: path)
        }
        raw.frameRate = rate
    }
}
