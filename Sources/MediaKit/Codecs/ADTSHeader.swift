/// The header of an ADTS frame (ISO/IEC 13818-7 6.2 / ISO/IEC 14496-3 1.A.2): AAC in a
/// self-describing stream, 7 bytes (9 with a CRC).
public struct ADTSHeader: Sendable, Hashable {
    /// Audio object type (profile + 1): 1 Main, 2 LC, 3 SSR, 4 LTP.
    public let objectType: Int
    /// Sampling frequency index (ISO/IEC 14496-3 table 1.18).
    public let rateIndex: Int
    /// Samples per second.
    public let sampleRate: Int
    /// Channel configuration (0: in a program config element).
    public let channelConfig: Int
    /// The frame's size in bytes, header included.
    public let frameLength: Int
    /// True when a 16-bit CRC follows the fixed and variable header.
    public let hasCRC: Bool
    /// Raw data blocks in the frame, each 1024 samples.
    public let blocks: Int
    /// The fields that stay fixed in a stream (sync, id, layer, profile, rate, channels).
    let fixed: UInt32

    /// Header bytes (7, or 9 with a CRC).
    public var headerSize: Int { hasCRC ? 9 : 7 }
    /// Samples per channel in the frame.
    public var samplesPerFrame: Int { 1024 * blocks }
    /// Channels of the configuration (0 when a PCE states them).
    public var channels: Int { [0, 1, 2, 3, 4, 5, 6, 8][channelConfig] }

    /// The AudioSpecificConfig the header implies (the magic cookie a decoder takes).
    public var audioSpecificConfig: [UInt8] {
        let bits = objectType << 11 | rateIndex << 7 | channelConfig << 3
        return [UInt8(bits >> 8), UInt8(bits & 0xFF)]
    }

    /// Parses the header at `index` of `b`; nil when it is not one (no sync, layer not 0,
    /// a reserved rate, a frame shorter than its header).
    public init?(_ b: [UInt8], at index: Int = 0) {
        guard index >= 0, index + 7 <= b.count, b[index] == 0xFF, b[index + 1] & 0xF6 == 0xF0 else { return nil }
        let profile = Int(b[index + 2] >> 6)
        rateIndex = Int((b[index + 2] >> 2) & 0xF)
        guard rateIndex < 13 else { return nil }
        sampleRate = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350][rateIndex]
        objectType = profile + 1
        channelConfig = Int(b[index + 2] & 1) << 2 | Int(b[index + 3] >> 6)
        hasCRC = b[index + 1] & 1 == 0
        frameLength = Int(b[index + 3] & 3) << 11 | Int(b[index + 4]) << 3 | Int(b[index + 5] >> 5)
        blocks = Int(b[index + 6] & 3) + 1
        guard frameLength >= (hasCRC ? 9 : 7) else { return nil }
        fixed = UInt32(b[index]) << 24 | UInt32(b[index + 1]) << 16 | UInt32(b[index + 2]) << 8 | UInt32(b[index + 3] & 0xC0)
    }

    /// True when `other` can be the next frame of the same stream.
    public func continues(_ other: ADTSHeader) -> Bool { fixed & 0xFFFE_FFC0 == other.fixed & 0xFFFE_FFC0 }
}
