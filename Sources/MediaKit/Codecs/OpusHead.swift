/// The OpusHead identification header (RFC 7845 section 5.1).
struct OpusHead {
    var channels: Int
    var preSkip: Int
    var inputSampleRate: Int
    var outputGain: Int
    var mappingFamily: Int

    /// Parses an OpusHead packet; nil with a reason when it is not a usable one.
    static func parse(_ p: [UInt8]) -> Result<OpusHead, OggHeaderProblem> {
        guard p.count >= 19, p.starts(with: Array("OpusHead".utf8)) else { return .failure("the OpusHead packet is \(p.count) bytes, at least 19 expected") }
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
