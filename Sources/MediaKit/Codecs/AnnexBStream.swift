/// An H.264 or HEVC track's packets as the Annex B byte stream an MPEG-TS carries, byte for byte
/// as `ffmpeg -c copy out.ts` writes them (FFmpeg 5.1):
///
/// - length-prefixed samples (MP4, Matroska: an avcC / hvcC in the extradata) become NAL units
///   after start codes, and the parameter sets of the configuration record go in front of each
///   IDR (H.264) / IRAP (HEVC) picture that does not carry its own, as the `h264_mp4toannexb` and
///   `hevc_mp4toannexb` bitstream filters put them: H.264 a 4-byte start code before the first
///   unit of the packet and before parameter sets, 3 bytes before the others, the SPS and PPS
///   (4-byte start codes) in front of the first IDR slice of a new IDR picture, which then
///   gets 3; HEVC 4-byte start codes throughout,
///   every VPS / SPS / PPS / SEI unit of the hvcC in front of the first IRAP slice of a packet;
/// - then, as the mpegts muxer does, an access unit delimiter in front of a packet whose first
///   units (up to the first slice) hold none: `00 00 00 01 09 F0` (H.264), `00 00 00 01 46 01
///   50` (HEVC); the Annex B parameter sets go after it, in front of a key frame whose first
///   slice is an IDR (IRAP) slice with no SPS (VPS) before it.
///
/// Packets already in Annex B form (MPEG-TS, raw streams) keep their bytes; only the delimiter
/// (and the parameter sets) are added where the muxer adds them.
struct AnnexBStream {
    let hevc: Bool
    /// The length prefix size of the samples (1...4), 0 for packets in Annex B form.
    let lengthSize: Int
    /// The configuration record's parameter sets as Annex B (each after 00 00 00 01); for an
    /// Annex B track, its extradata as given.
    private(set) var parameterSets: [UInt8]
    /// H.264: where the PPS begin in ``parameterSets`` (-1: none), and whether it has an SPS.
    private var ppsOffset = -1, hasSPS = false
    // h264_mp4toannexb's state.
    private var newIDR = true, idrSPSSeen = false, idrPPSSeen = false

    /// The conversion of a `codec` ("h264" or "hevc") track with `extradata` (an avcC / hvcC,
    /// Annex B parameter sets, or nothing).
    /// - Throws: `.invalidData` naming the track when a configuration record ends early or
    ///   holds a unit type the filters refuse.
    init(codec: CodecID, extradata: [UInt8], track: Int) throws {
        hevc = codec == "hevc"
        let what = "track \(track) (\(codec.rawValue))"
        if extradata.isEmpty || AnnexB.startsWithStartCode(extradata) {
            lengthSize = 0
            parameterSets = extradata
            return
        }
        let record = codec == "hevc" ? "hvcC" : "avcC"
        var at = 0
        func byte() throws -> Int {
            guard at < extradata.count else {
                throw MediaError(.invalidData, "\(what): its \(record) ends at byte \(extradata.count), inside its parameter sets")
            }
            defer { at += 1 }
            return Int(truncatingIfNeeded: extradata[at])
        }
        func unit() throws -> [UInt8] {
            let n = try byte() << 8 | byte()
            guard at + n <= extradata.count else {
                throw MediaError(.invalidData, "\(what): a parameter set of \(n) bytes at byte \(at - 2) of its \(record) runs past its end (\(extradata.count) bytes)")
            }
            defer { at += n }
            return [0, 0, 0, 1] + extradata[at..<(at + n)]
        }
        var sets: [UInt8] = []
        if codec == "hevc" {
            at = 21
            lengthSize = try byte() & 3 + 1
            let arrays = try byte()
            for _ in 0..<arrays {
                let type = try byte() & 0x3F
                guard [32, 33, 34, 39, 40].contains(type) else {
                    throw MediaError(.invalidData, "\(what): its hvcC holds an array of NAL unit type \(type); only VPS, SPS, PPS and SEI go in front of key frames")
                }
                let count = try byte() << 8 | byte()
                for _ in 0..<count { sets += try unit() }
            }
        } else {
            at = 4
            lengthSize = try byte() & 3 + 1
            let spsCount = try byte() & 0x1F
            for _ in 0..<spsCount { sets += try unit() }
            hasSPS = spsCount > 0
            let ppsCount = try byte()
            if ppsCount > 0 { ppsOffset = sets.count }
            for _ in 0..<ppsCount { sets += try unit() }
        }
        parameterSets = sets
    }

    /// Takes the parameter sets of an Annex B track with no extradata from its first packet
    /// (as FFmpeg's stream probing fills its extradata). Does nothing once there are some.
    mutating func learnParameterSets(from firstPacket: [UInt8]) {
        guard lengthSize == 0, parameterSets.isEmpty else { return }
        let wanted: Set<Int> = hevc ? [32, 33, 34] : [7, 8]
        for u in AnnexB.rawUnits(in: firstPacket) where wanted.contains(type(firstPacket[u.lowerBound])) {
            parameterSets += [0, 0, 1] + firstPacket[u]
        }
    }

    private func type(_ header: UInt8) -> Int { hevc ? AnnexB.hevcType(header) : AnnexB.h264Type(header) }

    /// One packet as the bytes of its PES payload.
    /// - Throws: `.invalidData` naming the track and packet when a length prefix runs past the
    ///   packet's end, or an Annex B packet does not start with a start code.
    mutating func payload(_ data: [UInt8], isKeyframe: Bool, track: Int, packet: Int) throws -> [UInt8] {
        let what = "track \(track) (\(hevc ? "hevc" : "h264")), packet \(packet)"
        let stream: [UInt8]
        if lengthSize > 0 {
            stream = hevc ? try hevcUnits(data, what) : try h264Units(data, what)
        } else {
            guard data.isEmpty || AnnexB.startsWithStartCode(data) else {
                throw MediaError(.invalidData, "\(what): \(data.count) bytes that start with neither a start code (00 00 01) nor a length prefix the track's extradata states")
            }
            stream = data
        }
        return delimited(stream, isKeyframe: isKeyframe)
    }

    /// h264_mp4toannexb on one sample.
    private mutating func h264Units(_ data: [UInt8], _ what: String) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + parameterSets.count + 16)
        // FFmpeg 5.1's start codes: the parameter sets put in front are copied as they are
        // (their own 4-byte start codes), then 4 bytes before a unit that starts the output
        // or is a parameter set, 3 before the others (an IDR slice after inserted sets too).
        func put(_ sets: ArraySlice<UInt8>, _ unit: ArraySlice<UInt8>, parameterSet: Bool) {
            out += sets
            let four = out.isEmpty || parameterSet
            out += four ? [0, 0, 0, 1] : [0, 0, 1]
            out += unit
        }
        var at = 0
        while at < data.count {
            let unit = try nextUnit(data, &at, what)
            guard let header = unit.first else { continue }
            let t = AnnexB.h264Type(header)
            if t == 7 {
                idrSPSSeen = true; newIDR = true
            } else if t == 8 {
                idrPPSSeen = true; newIDR = true
                if !idrSPSSeen && hasSPS {
                    put(parameterSets[0..<(ppsOffset >= 0 ? ppsOffset : parameterSets.count)], unit, parameterSet: true)
                    idrSPSSeen = true
                    continue
                }
            }
            if !newIDR && t == 5 && unit.count > 1 && unit[unit.startIndex + 1] & 0x80 != 0 { newIDR = true }
            if newIDR && t == 5 && !idrSPSSeen && !idrPPSSeen {
                put(parameterSets[...], unit, parameterSet: false)
                newIDR = false
            } else if newIDR && t == 5 && idrSPSSeen && !idrPPSSeen {
                put(ppsOffset >= 0 ? parameterSets[ppsOffset...] : [], unit, parameterSet: false)
            } else {
                put([], unit, parameterSet: t == 7 || t == 8)
                if !newIDR && t == 1 {
                    newIDR = true; idrSPSSeen = false; idrPPSSeen = false
                }
            }
        }
        return out
    }

    /// hevc_mp4toannexb on one sample.
    private func hevcUnits(_ data: [UInt8], _ what: String) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(data.count + parameterSets.count + 16)
        var gotIRAP = false
        var at = 0
        while at < data.count {
            let unit = try nextUnit(data, &at, what)
            guard let header = unit.first else { continue }
            let t = AnnexB.hevcType(header)
            let irap = (16...23).contains(t)
            if irap && !gotIRAP { out += parameterSets }
            gotIRAP = gotIRAP || irap
            out += [0, 0, 0, 1]
            out += unit
        }
        return out
    }

    private func nextUnit(_ data: [UInt8], _ at: inout Int, _ what: String) throws -> ArraySlice<UInt8> {
        guard at + lengthSize <= data.count else {
            throw MediaError(.invalidData, "\(what): \(data.count - at) bytes at offset \(at) are too few for a \(lengthSize)-byte NAL unit length")
        }
        var n = 0
        for k in 0..<lengthSize { n = n << 8 | Int(truncatingIfNeeded: data[at + k]) }
        at += lengthSize
        guard n <= data.count - at else {
            throw MediaError(.invalidData, "\(what): a NAL unit of \(n) bytes at offset \(at - lengthSize) runs past the packet's end (\(data.count) bytes)")
        }
        defer { at += n }
        return data[at..<(at + n)]
    }

    /// The access unit delimiter (and the Annex B extradata) the mpegts muxer puts in front.
    private func delimited(_ stream: [UInt8], isKeyframe: Bool) -> [UInt8] {
        // The types of the units up to the first slice or delimiter, as the muxer's scan sees
        // them; past the last start code its state is the packet's last byte.
        var last: Int?
        var sawSPS = false
        var i = 0
        let n = stream.count
        while i + 3 < n {
            if stream[i + 2] > 1 { i += 3; continue }
            guard stream[i] == 0, stream[i + 1] == 0, stream[i + 2] == 1 else { i += 1; continue }
            let t = type(stream[i + 3])
            i += 4
            last = t
            if hevc {
                if t == 32 { sawSPS = true }
                if t == 35 || t < 32 { break }
            } else {
                if t == 7 { sawSPS = true }
                if t == 9 || t == 5 || t == 1 { break }
            }
            last = nil
        }
        let stop = last ?? stream.last.map { hevc ? Int(truncatingIfNeeded: $0 >> 1 & 0x3F) : Int(truncatingIfNeeded: $0 & 0x1F) } ?? -1
        if stop == (hevc ? 35 : 9) { return stream }
        let keyStart = hevc ? (16..<24).contains(stop) : stop == 5
        let extra = isKeyframe && keyStart && !sawSPS && AnnexB.startsWithStartCode(parameterSets) ? parameterSets : []
        let aud: [UInt8] = hevc ? [0, 0, 0, 1, 0x46, 0x01, 0x50] : [0, 0, 0, 1, 0x09, 0xF0]
        return aud + extra + stream
    }
}
