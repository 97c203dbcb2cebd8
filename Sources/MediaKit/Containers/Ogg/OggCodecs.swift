/// The codecs the Ogg demuxer recognises from a stream's first packet.
enum OggCodec: Equatable {
    case opus, vorbis, theora, flac, unknown

    /// Identifies a codec from the first bytes of a stream's first packet (its BOS page).
    static func identify(_ p: ArraySlice<UInt8>) -> OggCodec {
        func starts(_ magic: [UInt8]) -> Bool { p.count >= magic.count && p.prefix(magic.count).elementsEqual(magic) }
        if starts(Array("OpusHead".utf8)) { return .opus }
        if starts([1] + Array("vorbis".utf8)) { return .vorbis }
        if starts([0x80] + Array("theora".utf8)) { return .theora }
        if starts([0x7F] + Array("FLAC".utf8)) { return .flac }
        return .unknown
    }

    /// FFmpeg's codec name.
    var name: String {
        switch self {
        case .opus: return "opus"
        case .vorbis: return "vorbis"
        case .theora: return "theora"
        case .flac: return "flac"
        case .unknown: return ""
        }
    }
}

/// Why a header packet cannot be used (becomes a track's ``Track/unsupportedReason``).
struct OggHeaderProblem: Error, ExpressibleByStringInterpolation {
    let reason: String
    init(stringLiteral value: String) { reason = value }
}

/// Little helpers over byte arrays (bounds are checked by the callers).
@inline(__always) func oggLE16(_ b: [UInt8], _ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
@inline(__always) func oggLE32(_ b: [UInt8], _ i: Int) -> Int { oggLE16(b, i) | oggLE16(b, i + 2) << 16 }
@inline(__always) func oggBE(_ b: [UInt8], _ i: Int, _ n: Int) -> Int { (0..<n).reduce(0) { $0 << 8 | Int(b[i + $1]) } }

/// The OpusHead identification header (RFC 7845 section 5.1).
struct OpusHead {
    var channels: Int
    var preSkip: Int
    var inputSampleRate: Int
    var outputGain: Int
    var mappingFamily: Int

    /// Parses an OpusHead packet; nil with a reason when it is not a usable one.
    static func parse(_ p: [UInt8]) -> Result<OpusHead, OggHeaderProblem> {
        guard p.count >= 19, OggCodec.identify(p[...]) == .opus else { return .failure("the OpusHead packet is \(p.count) bytes, at least 19 expected") }
        guard p[8] & 0xF0 == 0 else { return .failure("OpusHead version \(p[8]) is not 0.x") }
        guard p[9] > 0 else { return .failure("OpusHead declares 0 channels") }
        let h = OpusHead(channels: Int(p[9]), preSkip: oggLE16(p, 10), inputSampleRate: oggLE32(p, 12),
                         outputGain: Int(Int16(bitPattern: UInt16(oggLE16(p, 16)))), mappingFamily: Int(p[18]))
        if h.mappingFamily != 0 && p.count < 21 + h.channels {
            return .failure("OpusHead uses channel mapping family \(h.mappingFamily) but has no mapping table for \(h.channels) channels")
        }
        return .success(h)
    }

    /// `head` (a valid OpusHead) with its pre-skip set to `preSkip` (0 to 65535): a larger
    /// pre-skip than the encoder's delay cuts more of the start (RFC 7845 section 4.2).
    static func replacingPreSkip(_ head: [UInt8], with preSkip: Int) -> [UInt8] {
        var h = head
        h[10] = UInt8(truncatingIfNeeded: preSkip)
        h[11] = UInt8(truncatingIfNeeded: preSkip >> 8)
        return h
    }

    /// Samples (at 48 kHz) in one Opus packet from its TOC byte (RFC 6716 section 3.1), or nil when malformed.
    /// As FFmpeg: the frame count of a code-3 packet is taken as stated.
    static func packetDuration(_ p: ArraySlice<UInt8>) -> Int? {
        guard let toc = p.first else { return nil }
        let config = Int(toc >> 3)
        let frameSize: Int
        if config < 12 { frameSize = max(480, 960 * (config & 3)) }
        else if config < 16 { frameSize = 480 << (config & 1) }
        else { frameSize = 120 << (config & 3) }
        switch toc & 3 {
        case 0: return frameSize
        case 3:
            guard p.count >= 2 else { return nil }
            return frameSize * Int(p[p.startIndex + 1] & 0x3F)
        default: return frameSize * 2
        }
    }
}

/// The Vorbis identification header and the packet-duration rules FFmpeg derives from the
/// setup header (the modes' block flags), so packet durations equal ffprobe's.
struct VorbisInfo {
    var channels: Int
    var sampleRate: Int
    var nominalBitrate: Int
    /// Short and long block sizes.
    var blocksize: (Int, Int)
    /// Block flag of every mode (false: short block), from the setup header.
    var modeLong: [Bool] = []

    /// The block size of an audio packet from its first byte (packet type bit 0, then the
    /// mode number in ilog(modes - 1) bits; Vorbis I section 4.3.1), nil for a header packet
    /// or a mode the setup header does not have.
    func blockSize(firstByte b: UInt8) -> Int? {
        guard b & 1 == 0, !modeLong.isEmpty else { return nil }
        let bits = modeLong.count > 1 ? Int.bitWidth - (modeLong.count - 1).leadingZeroBitCount : 0
        let mode = (Int(b) >> 1) & ((1 << bits) - 1)
        guard mode < modeLong.count else { return nil }
        return modeLong[mode] ? blocksize.1 : blocksize.0
    }

    static func parseIdentification(_ p: [UInt8]) -> Result<VorbisInfo, OggHeaderProblem> {
        guard p.count >= 30 else { return .failure("the Vorbis identification header is \(p.count) bytes, 30 expected") }
        guard oggLE32(p, 7) == 0 else { return .failure("Vorbis version \(oggLE32(p, 7)), expected 0") }
        let channels = Int(p[11]), rate = oggLE32(p, 12)
        let b0 = Int(p[28] & 15), b1 = Int(p[28] >> 4)
        guard channels > 0, rate > 0 else { return .failure("the Vorbis identification header declares \(channels) channels at \(rate) Hz") }
        guard b0 >= 6, b1 <= 13, b0 <= b1 else { return .failure("Vorbis block sizes 2^\(b0) / 2^\(b1) are out of range") }
        let nominal = Int(Int32(bitPattern: UInt32(oggLE32(p, 20))))
        return .success(VorbisInfo(channels: channels, sampleRate: rate, nominalBitrate: max(0, nominal), blocksize: (1 << b0, 1 << b1)))
    }

    /// Reads the mode block flags from the end of a setup header: its last fields are
    /// `mode_count - 1` (6 bits) and the modes (41 bits each: block flag, window type 0,
    /// transform type 0, mapping), then the framing bit. Working backwards from the framing
    /// bit avoids decoding the codebooks.
    static func modes(fromSetup p: [UInt8]) -> [Bool]? {
        guard p.count > 7, p[0] == 5 else { return nil }
        func bit(_ i: Int) -> Bool { (p[i >> 3] >> UInt8(i & 7)) & 1 == 1 }
        var framing = p.count * 8 - 1
        while framing >= 0 && !bit(framing) { framing -= 1 }
        guard framing > 7 * 8 else { return nil }
        var possible = 0
        while true {
            let start = framing - 41 * (possible + 1)
            guard start >= 7 * 8 else { break }
            // window type (16 bits) and transform type (16 bits) must be 0
            if (1...32).contains(where: { bit(start + $0) }) { break }
            possible += 1
            if possible == 64 { break }
        }
        var n = possible
        while n > 0 {
            let countAt = framing - 41 * n - 6
            if countAt >= 7 * 8 {
                let value = (0..<6).reduce(0) { $0 | (bit(countAt + $1) ? 1 << $1 : 0) }
                if value == n - 1 {
                    return (0..<n).map { bit(framing - 41 * (n - $0)) }
                }
            }
            n -= 1
        }
        return nil
    }
}

/// FFmpeg's Vorbis packet-duration parser (libavcodec vorbis_parser), re-derived: it reads only
/// the first byte of a packet. A long block takes its previous block size from the packet's
/// previous-window flag; a short block takes it from the parser's state.
struct VorbisDurationParser {
    let info: VorbisInfo
    private let modeMask: Int
    private let prevMask: Int
    private(set) var previous: Int

    init(info: VorbisInfo) {
        self.info = info
        let bits = info.modeLong.count > 1 ? (Int.bitWidth - (info.modeLong.count - 1).leadingZeroBitCount) : 1
        modeMask = ((1 << bits) - 1) << 1
        prevMask = (modeMask | 1) + 1
        previous = info.blocksize.0
    }

    mutating func reset() { previous = info.blocksize.0 }

    /// Duration in samples of a packet whose first byte is `byte`: 0 for a header packet,
    /// nil for an invalid one.
    mutating func duration(firstByte byte: UInt8) -> Int? {
        let b = Int(byte)
        if b & 1 == 1 { return b == 1 || b == 3 || b == 5 ? 0 : nil }
        let mode = info.modeLong.count == 1 ? 0 : (b & modeMask) >> 1
        guard mode < info.modeLong.count else { return nil }
        var prev = previous
        if info.modeLong[mode] { prev = (b & prevMask) != 0 ? info.blocksize.1 : info.blocksize.0 }
        let current = info.modeLong[mode] ? info.blocksize.1 : info.blocksize.0
        previous = current
        return (prev + current) >> 2
    }
}

/// The Theora identification header (Theora specification section 6.2).
struct TheoraInfo {
    var version: Int
    var width: Int
    var height: Int
    var frameRate: (num: Int, den: Int)
    var granuleShift: Int

    static func parse(_ p: [UInt8]) -> Result<TheoraInfo, OggHeaderProblem> {
        guard p.count >= 42 else { return .failure("the Theora identification header is \(p.count) bytes, 42 expected") }
        let version = oggBE(p, 7, 3)
        let fmbw = oggBE(p, 10, 2) * 16, fmbh = oggBE(p, 12, 2) * 16
        var w = oggBE(p, 14, 3), h = oggBE(p, 17, 3)
        if version < 0x030200 || w == 0 || h == 0 { w = fmbw; h = fmbh }
        let frn = oggBE(p, 22, 4), frd = oggBE(p, 26, 4)
        guard frn > 0, frd > 0 else { return .failure("the Theora frame rate \(frn)/\(frd) is invalid") }
        let shift = Int((p[40] & 3) << 3 | p[41] >> 5)
        return .success(TheoraInfo(version: version, width: w, height: h, frameRate: (frn, frd), granuleShift: shift))
    }

    /// Frame number of a granule position (FFmpeg's rule: key frame number + offset, plus one before 3.2.1).
    func framePTS(_ granule: Int64) -> Int64 {
        let g = UInt64(bitPattern: granule)
        var iframe = Int64(bitPattern: g >> UInt64(granuleShift))
        let pframe = Int64(bitPattern: g & ((1 << UInt64(granuleShift)) - 1))
        if version < 0x030201 { iframe += 1 }
        return iframe &+ pframe
    }
}

/// The Ogg FLAC mapping's first packet and FLAC frame headers.
struct FlacInfo {
    var streamInfo: [UInt8]
    var sampleRate: Int
    var channels: Int
    var bitsPerSample: Int
    var headerPackets: Int

    static func parse(_ p: [UInt8]) -> Result<FlacInfo, OggHeaderProblem> {
        // 0x7F "FLAC" major minor, header count (16 bits), "fLaC", metadata block header (4), STREAMINFO (34)
        guard p.count >= 51, p[9...12].elementsEqual(Array("fLaC".utf8)) else {
            return .failure("the Ogg FLAC header is \(p.count) bytes or lacks fLaC; 51 bytes expected")
        }
        guard let info = FLACStreamInfo(Array(p[17..<51])) else {
            return .failure("the Ogg FLAC header's STREAMINFO is not 34 bytes")
        }
        return .success(FlacInfo(streamInfo: info.bytes, sampleRate: info.sampleRate, channels: info.channels,
                                 bitsPerSample: info.bitsPerSample, headerPackets: oggBE(p, 7, 2)))
    }

    /// Samples in a FLAC frame from its header, nil when the header is not readable.
    static func frameDuration(_ p: ArraySlice<UInt8>) -> Int? {
        FLACFrameHeader.parse(Array(p.prefix(FLACFrameHeader.maxLength)), checkCRC: false)?.blockSize
    }
}

/// Xiph lacing of header packets, the extradata layout FFmpeg's Vorbis and Theora decoders
/// expect: the packet count minus one, the lacing of every packet but the last, then the packets.
func xiphLacing(_ packets: [[UInt8]]) -> [UInt8] {
    var out: [UInt8] = [UInt8(packets.count - 1)]
    for p in packets.dropLast() {
        var n = p.count
        while n >= 255 { out.append(255); n -= 255 }
        out.append(UInt8(n))
    }
    for p in packets { out += p }
    return out
}
