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
