/// The Speex header packet (the first packet of a Speex stream in Ogg: speex_header.h of the
/// Speex reference library, all fields 32-bit little-endian): "Speex   ", a 20-byte version
/// string, then version id (28), header size (32), rate (36), mode (40), mode bitstream
/// version (44), channels (48), bit rate (52), frame size (56), VBR (60), frames per packet
/// (64), extra headers (68). The whole packet is the decoder's extradata, as FFmpeg's Ogg
/// demuxer passes it.
struct SpeexHeader {
    /// Hz.
    var sampleRate: Int
    /// 1 or 2.
    var channels: Int
    /// Samples per channel in one packet: frame size times frames per packet (FFmpeg's rule:
    /// a frames-per-packet of 0 counts as 1).
    var packetSamples: Int

    /// The packet's magic.
    static let magic = Array("Speex   ".utf8)

    /// Reads the header as FFmpeg's oggparsespeex does, with its checks.
    static func parse(_ p: [UInt8]) -> Result<SpeexHeader, OggHeaderProblem> {
        guard p.count >= 68 else { return .failure("the Speex header is \(p.count) bytes, at least 68 expected") }
        func le32(_ i: Int) -> Int32 { Int32(bitPattern: UInt32(p[i]) | UInt32(p[i + 1]) << 8 | UInt32(p[i + 2]) << 16 | UInt32(p[i + 3]) << 24) }
        let rate = le32(36), channels = le32(48), frameSize = le32(56), perPacket = le32(64)
        guard rate > 0 else { return .failure("the Speex header's sample rate \(rate) is invalid") }
        guard channels == 1 || channels == 2 else { return .failure("the Speex header's channel count \(channels) is invalid (Speex is mono or stereo)") }
        guard frameSize >= 0, perPacket >= 0, Int64(frameSize) * Int64(perPacket) <= Int64(Int32.max / 256) else {
            return .failure("the Speex header's frame size \(frameSize) x frames per packet \(perPacket) is invalid")
        }
        let samples = Int(frameSize) * (perPacket > 0 ? Int(perPacket) : 1)
        return .success(SpeexHeader(sampleRate: Int(rate), channels: Int(channels), packetSamples: samples))
    }
}
