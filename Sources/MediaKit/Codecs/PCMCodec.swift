/// An uncompressed (or G.711-companded) PCM codec by FFmpeg's name (`pcm_s16be`, `pcm_f32le`,
/// `pcm_alaw` ...): its sample width, byte order and kind, and the lossless rewrites between
/// byte orders and between signed and unsigned 8-bit samples that containers holding one
/// order only need (WAV is little-endian, AIFF big-endian).
struct PCMCodec: Sendable, Equatable {
    /// What one sample is.
    enum Kind: Sendable, Equatable {
        /// Two's-complement integer.
        case signed
        /// Unsigned integer (0x80 is silence for 8 bits).
        case unsigned
        /// IEEE 754 float.
        case ieeeFloat
        /// G.711 A-law (one byte).
        case alaw
        /// G.711 mu-law (one byte).
        case mulaw
    }

    let kind: Kind
    /// The PCM codecs the WAV and AIFF writers take (each stores them in its own byte order).
    static let plainCodecs: [CodecID] = ["pcm_u8", "pcm_s8", "pcm_s16le", "pcm_s16be", "pcm_s24le", "pcm_s24be", "pcm_s32le", "pcm_s32be",
                                         "pcm_f32le", "pcm_f32be", "pcm_f64le", "pcm_f64be", "pcm_alaw", "pcm_mulaw"]
    /// Bytes of one sample of one channel.
    let bytes: Int
    /// True for big-endian samples wider than a byte (false for one-byte samples).
    let bigEndian: Bool

    /// The codec `codec` names; nil for a name that is not one of FFmpeg's plain PCM codecs
    /// (8 to 64-bit integer, 32 and 64-bit float, A-law, mu-law).
    init?(_ codec: CodecID) {
        switch codec.rawValue {
        case "pcm_alaw": self.init(kind: .alaw, bytes: 1, bigEndian: false)
        case "pcm_mulaw": self.init(kind: .mulaw, bytes: 1, bigEndian: false)
        case "pcm_s8": self.init(kind: .signed, bytes: 1, bigEndian: false)
        case "pcm_u8": self.init(kind: .unsigned, bytes: 1, bigEndian: false)
        default:
            let name = codec.rawValue
            guard name.hasPrefix("pcm_"), name.count >= 9 else { return nil }
            let body = name.dropFirst(4)           // "s16be"
            let order = body.suffix(2)
            guard order == "le" || order == "be", let bits = Int(body.dropFirst().dropLast(2)) else { return nil }
            let kind: Kind
            switch body.first {
            case "s": kind = .signed
            case "u": kind = .unsigned
            case "f": kind = .ieeeFloat
            default: return nil
            }
            let widths: Set<Int> = kind == .ieeeFloat ? [32, 64] : [16, 24, 32, 64]
            guard widths.contains(bits) else { return nil }
            self.init(kind: kind, bytes: bits / 8, bigEndian: order == "be")
        }
    }

    init(kind: Kind, bytes: Int, bigEndian: Bool) {
        self.kind = kind
        self.bytes = bytes
        self.bigEndian = bytes > 1 && bigEndian
    }

    /// FFmpeg's name of this codec.
    var codec: CodecID {
        switch kind {
        case .alaw: return "pcm_alaw"
        case .mulaw: return "pcm_mulaw"
        case .signed, .unsigned, .ieeeFloat:
            let letter = kind == .signed ? "s" : kind == .unsigned ? "u" : "f"
            return CodecID("pcm_\(letter)\(bytes * 8)" + (bytes == 1 ? "" : bigEndian ? "be" : "le"))
        }
    }

    /// Bits per sample.
    var bits: Int { bytes * 8 }

    /// This codec with its samples in the other byte order or sign (same width and kind
    /// otherwise).
    func with(bigEndian: Bool? = nil, kind: Kind? = nil) -> PCMCodec {
        PCMCodec(kind: kind ?? self.kind, bytes: bytes, bigEndian: bigEndian ?? self.bigEndian)
    }

    /// `data` (samples of this codec) rewritten as samples of `target`, which must differ from
    /// this codec only in byte order and, for 8-bit integers, in sign: both rewrites are
    /// lossless. A trailing part of a sample is dropped. Returns `data` itself when nothing changes.
    func convert(_ data: [UInt8], to target: PCMCodec) -> [UInt8] {
        precondition(target.bytes == bytes, "PCM rewrites keep the sample width")
        let flipSign = kind != target.kind && bytes == 1 && [Kind.signed, .unsigned].contains(kind) && [Kind.signed, .unsigned].contains(target.kind)
        let swap = bytes > 1 && bigEndian != target.bigEndian
        guard flipSign || swap else { return data }
        let n = data.count / bytes * bytes
        var out = [UInt8](repeating: 0, count: n)
        data.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                if flipSign {
                    for i in 0..<n { dst[i] = src[i] ^ 0x80 }
                    return
                }
                var i = 0
                while i < n {
                    for k in 0..<bytes { dst[i + k] = src[i + bytes - 1 - k] }
                    i += bytes
                }
            }
        }
        return out
    }
}
