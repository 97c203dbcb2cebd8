/// The codec of an AIFF / AIFF-C sound (the `COMM` chunk's sample size and, in AIFF-C, its
/// compression type), as FFmpeg names it (libavformat/aiff.c `ff_codec_aiff_tags` and the
/// rules of aiffdec.c), and how its `SSND` data is cut into packets and timed.
///
/// Plain AIFF, and AIFF-C's `NONE` and `twos`, are big-endian two's-complement PCM named by
/// the sample size: up to 8 bits `pcm_s8`, 16 `pcm_s16be`, 24 `pcm_s24be`, 32 `pcm_s32be`
/// (a 12-bit sample is stored in 16, and so on). A compression type is looked up as written,
/// then with its letters upper-cased (`FL32` is `fl32`), as FFmpeg's tag lookup does. Also
/// read: `GSM ` (GSM 06.10), `MAC3` / `MAC6` (MACE) and `G722`, framed and timed as FFmpeg's
/// demuxer does; the rest of FFmpeg's table (`G726`, whose packets FFmpeg times at one sample
/// a byte, QDesign, QCELP, the DPCMs, `ADP4`) is refused by name.
struct AIFFCodec: Sendable, Equatable {
    /// FFmpeg's codec name.
    let codec: CodecID
    /// Bytes of one block: a sample frame for PCM, 34 bytes per channel of `ima4`.
    let blockAlign: Int
    /// Sample frames per block.
    let blockDuration: Int64
    /// True when a packet is one block (`ima4`, `GSM `, as FFmpeg's demuxer reads them); otherwise a
    /// packet is a run of whole blocks of at most ``packetBytes`` bytes.
    let blockPerPacket: Bool
    /// Bits per sample of the codec (`av_get_bits_per_sample`; 4 for `ima4`).
    let bitsPerSample: Int
    /// True when the codec was named by the sample size (plain AIFF, `NONE`, `twos`): FFmpeg
    /// then reports the codec's bits per sample rather than the `COMM` chunk's.
    var namedBySampleSize = false

    /// FFmpeg's packet size for PCM in AIFF (aiffdec.c MAX_SIZE).
    static let packetBytes = 4096

    /// Bytes of a packet that starts a run: one block, or as many whole blocks as fit in
    /// ``packetBytes`` (0 when one block is larger: FFmpeg reads no packet of such a stream).
    var packetSize: Int { blockPerPacket ? blockAlign : Self.packetBytes / blockAlign * blockAlign }

    /// FFmpeg's AIFF-C compression types (`ff_codec_aiff_tags`, in its order: the first entry
    /// of a type names its codec).
    static let compressionTypes: [(type: String, codec: String)] = [
        ("NONE", "pcm_s16be"), ("raw ", "pcm_u8"), ("fl32", "pcm_f32be"), ("fl64", "pcm_f64be"),
        ("alaw", "pcm_alaw"), ("ulaw", "pcm_mulaw"), ("in24", "pcm_s24be"), ("in32", "pcm_s32be"),
        ("MAC3", "mace3"), ("MAC6", "mace6"), ("GSM ", "gsm"), ("G722", "adpcm_g722"), ("G726", "adpcm_g726le"),
        ("twos", "pcm_s16be"), ("sowt", "pcm_s16le"), ("ima4", "adpcm_ima_qt"), ("QDMC", "qdmc"), ("QDM2", "qdm2"),
        ("Qclp", "qcelp"), ("CBD2", "cbd2_dpcm"), ("SDX2", "sdx2_dpcm"), ("ADP4", "adpcm_ima_ws"),
    ]

    /// FFmpeg's codec name for an AIFF-C compression type (4 bytes), nil when its table has none.
    static func codecName(compressionType type: [UInt8]) -> String? {
        let written = String(decoding: type, as: UTF8.self)
        if let hit = compressionTypes.first(where: { $0.type == written }) { return hit.codec }
        func upper(_ s: [UInt8]) -> [UInt8] { s.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 } }
        return compressionTypes.first { upper(Array($0.type.utf8)) == upper(type) }?.codec
    }

    /// Big-endian integer PCM for a sample size, as FFmpeg's `aiff_codec_get_id`; nil above 32 bits.
    static func pcmName(bits: Int) -> (name: String, bits: Int)? {
        switch bits {
        case ...8: return ("pcm_s8", 8)
        case ...16: return ("pcm_s16be", 16)
        case ...24: return ("pcm_s24be", 24)
        case ...32: return ("pcm_s32be", 32)
        default: return nil
        }
    }

    /// Why a sound cannot be read, for ``resolve(compressionType:bits:channels:)``.
    enum Problem: Error, Equatable {
        /// A sample size no PCM codec holds (above 32 bits).
        case sampleSize(Int)
        /// A compression type FFmpeg's table does not list.
        case unknownType(String)
        /// A type FFmpeg names (the codec) whose framing this reader does not know.
        case unreadType(String, codec: String)
    }

    /// The codec of a `COMM` chunk: `compressionType` is AIFF-C's (nil for plain AIFF, or an
    /// AIFF-C `COMM` too short to hold one), `bits` its sample size, `channels` its channels (> 0).
    static func resolve(compressionType: [UInt8]?, bits: Int, channels: Int) -> Result<AIFFCodec, Problem> {
        func pcm(_ name: String, _ size: Int) -> AIFFCodec {
            AIFFCodec(codec: CodecID(name), blockAlign: size * channels / 8, blockDuration: 1, blockPerPacket: false, bitsPerSample: size)
        }
        guard let type = compressionType else {
            guard let p = pcmName(bits: bits) else { return .failure(.sampleSize(bits)) }
            var c = pcm(p.name, p.bits)
            c.namedBySampleSize = true
            return .success(c)
        }
        let printable = String(decoding: type.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        guard let name = codecName(compressionType: type) else { return .failure(.unknownType(printable)) }
        switch name {
        case "pcm_s16be":
            // NONE and twos: by the sample size, as plain AIFF.
            return resolve(compressionType: nil, bits: bits, channels: channels)
        case "pcm_f32be", "pcm_s32be": return .success(pcm(name, 32))
        case "pcm_f64be": return .success(pcm(name, 64))
        case "pcm_s24be": return .success(pcm(name, 24))
        case "pcm_s16le": return .success(pcm(name, 16))
        case "pcm_alaw", "pcm_mulaw", "pcm_u8": return .success(pcm(name, 8))
        case "adpcm_ima_qt":
            // Apple's IMA4: per channel a 2-byte header (predictor, step index) and 32 bytes
            // of 64 4-bit samples.
            return .success(AIFFCodec(codec: CodecID(name), blockAlign: 34 * channels, blockDuration: 64, blockPerPacket: true, bitsPerSample: 4))
        case "gsm":
            // GSM 06.10 full rate: 33-byte frames of 160 samples, one per packet.
            return .success(AIFFCodec(codec: CodecID(name), blockAlign: 33, blockDuration: 160, blockPerPacket: true, bitsPerSample: 0))
        case "mace3", "mace6":
            // MACE 3:1 (2 bytes per channel) and 6:1 (1 byte): 6 samples each, in runs of 4096 bytes.
            return .success(AIFFCodec(codec: CodecID(name), blockAlign: (name == "mace3" ? 2 : 1) * channels, blockDuration: 6,
                                      blockPerPacket: false, bitsPerSample: 0))
        case "adpcm_g722":
            // G.722: a byte per channel holds 2 samples.
            return .success(AIFFCodec(codec: CodecID(name), blockAlign: channels, blockDuration: 2, blockPerPacket: false, bitsPerSample: 4))
        default:
            return .failure(.unreadType(printable, codec: name))
        }
    }
}
