/// AAC in LOAS / LATM (ISO/IEC 14496-3 1.7): the LOAS sync header that frames each
/// AudioMuxElement (`AudioSyncStream`: 11-bit sync word 0x2B7, 13-bit length), and the
/// StreamMuxConfig an AudioMuxElement carries when `useSameStreamMux` is 0, as FFmpeg's
/// `aac_latm` decoder reads it (`read_stream_mux_config`): one program, one layer; the
/// AudioSpecificConfig inside it becomes the track's extradata, its bits realigned to a byte
/// as FFmpeg copies them.
struct LATMMuxConfig {
    /// The AudioSpecificConfig, from its first bit, padded with zero bits to a whole byte.
    var audioSpecificConfig: [UInt8]
    /// What it says (rate, channels, SBR / PS).
    var config: AudioSpecificConfig
    /// Samples per frame of the core: 1024, or 960 when the GASpecificConfig's frameLengthFlag is set.
    var samplesPerFrame: Int

    /// The LOAS frame at `b[i...]`: its size in bytes with the 3-byte header (the 13-bit
    /// length + 3); nil when no sync word 0x56E (0x2B7 in 11 bits) starts there.
    static func frameSize(_ b: [UInt8], at i: Int) -> Int? {
        guard i + 3 <= b.count, b[i] == 0x56, b[i + 1] & 0xE0 == 0xE0 else { return nil }
        return 3 + (Int(b[i + 1] & 0x1F) << 8 | Int(b[i + 2]))
    }

    /// The StreamMuxConfig of the LOAS frame `b[i..<i + size]` (`size` from ``frameSize(_:at:)``);
    /// nil when the frame reuses the previous one's (`useSameStreamMux`), uses a layout FFmpeg
    /// does not read either (audioMuxVersionA 1, several programs or layers), or is cut short.
    init?(loasFrame b: [UInt8], at i: Int, size: Int) {
        guard size > 3, i + size <= b.count else { return nil }
        var bits = BitReader(Array(b[(i + 3)..<(i + size)]))
        func latmValue() -> Int? {   // LatmGetValue: 1 to 4 bytes
            guard let n = bits.read(2) else { return nil }
            var v = 0
            for _ in 0...n { guard let byte = bits.read(8) else { return nil }; v = v << 8 | byte }
            return v
        }
        guard bits.read(1) == 0, let version = bits.read(1) else { return nil }   // useSameStreamMux
        if version == 1 {
            guard bits.read(1) == 0, latmValue() != nil else { return nil }   // audioMuxVersionA, taraBufferFullness
        }
        // allStreamsSameTimeFraming (1), numSubFrames (6), numProgram (4), numLayer (3).
        guard bits.read(7) != nil, bits.read(4) == 0, bits.read(3) == 0 else { return nil }
        var declared: Int?
        if version == 1 { guard let n = latmValue() else { return nil }; declared = n }
        let start = bits.bit
        guard let length = Self.configBits(bits, declared: declared), length > 0 else { return nil }
        func bytes(_ count: Int) -> [UInt8]? {
            var out: [UInt8] = []
            var copy = bits
            var left = count
            while left > 0 {
                let n = min(8, left)
                guard let v = copy.read(n) else { return nil }
                out.append(UInt8(v << (8 - n)))
                left -= n
            }
            return out
        }
        // The facts come from the declared length when there is one: a sync extension (SBR, PS)
        // may follow the part FFmpeg copies as extradata.
        guard let config = bytes(length), let parsed = AudioSpecificConfig(declared.flatMap { bytes($0) } ?? config) else { return nil }
        audioSpecificConfig = config
        self.config = parsed
        var ga = bits
        ga.bit = start + (Self.header(bits)?.bits ?? 0)
        samplesPerFrame = Self.gaObjectTypes.contains(parsed.objectType) && parsed.objectType != 23 && ga.read(1) == 1 ? 960 : 1024
    }

    /// The object types whose GASpecificConfig FFmpeg's AAC decoder reads: AAC main, LC, SSR,
    /// LTP, ER AAC LC, ER AAC LD.
    static let gaObjectTypes: Set<Int> = [1, 2, 3, 4, 17, 23]

    /// How many bits of the AudioSpecificConfig at `bits` FFmpeg counts (and copies as
    /// extradata): the header (object type, rates, channel configuration, the SBR / PS
    /// wrapper) and, for the AAC object types, the GASpecificConfig without a program config
    /// element (frameLengthFlag, dependsOnCoreCoder with its delay, extensionFlag, the
    /// error-resilience flags); otherwise the length the mux config
    /// declares (audioMuxVersion 1), else the header alone.
    private static func configBits(_ start: BitReader, declared: Int?) -> Int? {
        guard let header = header(start) else { return nil }
        guard gaObjectTypes.contains(header.objectType), header.channelConfig != 0 else { return declared ?? header.bits }
        var bits = start
        bits.bit += header.bits
        guard bits.read(1) != nil, let core = bits.read(1), core == 0 || bits.read(14) != nil,
              let extensionFlag = bits.read(1) else { return nil }
        let errorResilient = header.objectType == 17 || header.objectType == 23
        if extensionFlag == 1 { bits.bit += errorResilient ? 4 : 1 }   // the resilience flags, extensionFlag3
        if errorResilient { bits.bit += 2 }   // epConfig
        guard bits.bit <= bits.bytes.count * 8 else { return nil }
        return bits.bit - start.bit
    }

    /// The AudioSpecificConfig's header at `start`: its bits (as FFmpeg's
    /// `ff_mpeg4audio_get_config_gb` counts them: the sync extension search is not counted),
    /// the core's object type and the channel configuration.
    private static func header(_ start: BitReader) -> (bits: Int, objectType: Int, channelConfig: Int)? {
        var h = start
        guard var t = objectType(&h), rate(&h) != nil, let channels = h.read(4) else { return nil }
        // Object type 29 followed by these bit patterns is the MP3-on-MP4 draft, not PS.
        if t == 5 || (t == 29 && !((h.peek(3) ?? 0) & 3 != 0 && (h.peek(9) ?? 0) & 0x3F == 0)) {
            guard rate(&h) != nil, let core = objectType(&h) else { return nil }
            if core == 22 { h.bit += 4 }   // ER BSAC's extension channel configuration
            t = core
        }
        return (h.bit - start.bit, t, channels)
    }

    private static func objectType(_ bits: inout BitReader) -> Int? {
        guard let t = bits.read(5) else { return nil }
        if t == 31 { guard let e = bits.read(6) else { return nil }; return 32 + e }
        return t
    }

    private static func rate(_ bits: inout BitReader) -> Int? {
        guard let i = bits.read(4) else { return nil }
        return i == 15 ? bits.read(24) : i
    }
}
