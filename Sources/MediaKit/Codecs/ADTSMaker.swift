extension ADTSHeader {
    /// The 7-byte header (no CRC) that FFmpeg's adts muxer puts in front of a raw AAC frame of a
    /// track with the AudioSpecificConfig `config` (MPEG-4 ID 0, buffer fullness 0x7FF, one raw
    /// data block), as `ffmpeg -c copy out.ts` writes AAC from MP4 or Matroska.
    ///
    /// Channel configuration 0 (the channels in a program config element of the
    /// AudioSpecificConfig): the header states 0 and the first frame's raw data starts with that
    /// PCE (``programConfigElement(_:track:)``), as FFmpeg's adtsenc writes it.
    struct Maker {
        let profile: Int, rateIndex: Int, channelConfig: Int
        /// The PCE syntax element the next frame starts with (channel configuration 0, first
        /// frame only); empty otherwise.
        private(set) var pendingPCE: [UInt8] = []

        /// - Throws: `.unsupported` (naming the track) for a configuration ADTS cannot state:
        ///   an object type past AAC LTP, a rate off the ADTS table, channels in a program
        ///   config element; `.invalidData` when `config` is not an AudioSpecificConfig.
        init(config: [UInt8], track: Int) throws {
            guard let asc = AudioSpecificConfig(config) else {
                throw MediaError(.invalidData, "track \(track) (aac): its extradata (\(config.count) bytes) is not an AudioSpecificConfig, and its packets have no ADTS headers")
            }
            guard (1...4).contains(asc.objectType) else {
                throw MediaError(.unsupported, "track \(track) (aac): audio object type \(asc.objectType) cannot be stated in an ADTS header (1 to 4: Main, LC, SSR, LTP)")
            }
            guard let index = AudioSpecificConfig.rates.firstIndex(of: asc.sampleRate) else {
                throw MediaError(.unsupported, "track \(track) (aac): the rate \(asc.sampleRate) Hz is not one an ADTS header states")
            }
            guard (0...7).contains(asc.channelConfig) else {
                throw MediaError(.unsupported, "track \(track) (aac): channel configuration \(asc.channelConfig) cannot be stated in an ADTS header (0 to 7)")
            }
            if asc.channelConfig == 0 { pendingPCE = try Self.programConfigElement(config, track: track) }
            profile = asc.objectType - 1
            rateIndex = index
            channelConfig = asc.channelConfig
        }

        /// `frame` (one raw AAC frame) after its header (and, for the first frame of channel
        /// configuration 0, after the program config element).
        /// - Throws: `.limit` when the frame and header exceed ADTS's 13-bit length (8191 bytes).
        mutating func frame(_ frame: [UInt8], track: Int) throws -> [UInt8] {
            let n = frame.count + 7 + pendingPCE.count
            guard n < 1 << 13 else {
                throw MediaError(.limit, "track \(track) (aac): a frame of \(frame.count) bytes does not fit an ADTS frame (\(8184 - pendingPCE.count) bytes at most)")
            }
            var out: [UInt8] = [0xFF, 0xF1, UInt8(truncatingIfNeeded: profile << 6 | rateIndex << 2 | channelConfig >> 2),
                                UInt8(truncatingIfNeeded: (channelConfig & 3) << 6 | n >> 11), UInt8(truncatingIfNeeded: n >> 3),
                                UInt8(truncatingIfNeeded: (n & 7) << 5 | 0x1F), 0xFC]
            out += pendingPCE
            out += frame
            pendingPCE = []
            return out
        }

        /// The program config element of AudioSpecificConfig `config` (channel configuration 0)
        /// as the syntax element an ADTS frame's raw data starts with: ID_PCE (3 bits: 5) and the
        /// PCE's fields copied, its comment byte-aligned from the element's start, as FFmpeg's
        /// adtsenc copies it (`ff_copy_pce_data`).
        /// - Throws: `.unsupported` for a GASpecificConfig ADTS cannot carry (960-sample frames, a
        ///   core coder, the extension flag: FFmpeg refuses them too); `.invalidData` when
        ///   `config` ends inside the PCE.
        static func programConfigElement(_ config: [UInt8], track: Int) throws -> [UInt8] {
            var r = BitReader(config)
            let short = MediaError(.invalidData, "track \(track) (aac): the AudioSpecificConfig (\(config.count) bytes) ends inside its program config element")
            func read(_ n: Int) throws -> Int { guard let v = r.read(n) else { throw short }; return v }
            func objectType() throws -> Int { let t = try read(5); return t == 31 ? 32 + (try read(6)) : t }
            func rate() throws { if try read(4) == 15 { _ = try read(24) } }
            var type = try objectType()
            try rate()
            _ = try read(4)                                           // channel configuration 0
            if type == 5 || type == 29 { try rate(); type = try objectType() }
            // GASpecificConfig: frameLengthFlag, dependsOnCoreCoder, extensionFlag.
            for what in ["960-sample frames", "a core coder", "the extension flag"] {
                if try read(1) == 1 {
                    throw MediaError(.unsupported, "track \(track) (aac): an AudioSpecificConfig with \(what) cannot be carried in ADTS")
                }
            }
            var out: [UInt8] = [], acc = 0, count = 0
            func put(_ v: Int, _ n: Int) {
                for i in stride(from: n - 1, through: 0, by: -1) {
                    acc = acc << 1 | (v >> i & 1)
                    count += 1
                    if count == 8 { out.append(UInt8(truncatingIfNeeded: acc)); acc = 0; count = 0 }   // 8 bits
                }
            }
            @discardableResult func copy(_ n: Int) throws -> Int { let v = try read(n); put(v, n); return v }
            put(5, 3)                                                 // ID_PCE
            try copy(10)                                              // element tag, object type, rate index
            var fiveBit = try copy(4) + copy(4) + copy(4)             // front, side, back elements
            let fourBit = try copy(2) + copy(3)                       // LFE, data elements
            fiveBit += try copy(4)                                    // coupling elements
            for width in [4, 4, 3] {                                  // mono, stereo, matrix mixdown
                if try copy(1) == 1 { try copy(width) }
            }
            var bits = fiveBit * 5 + fourBit * 4
            while bits > 0 { try copy(min(bits, 16)); bits -= min(bits, 16) }
            if count > 0 { put(0, 8 - count) }                        // byte_alignment(), from the element's start
            r.bit = (r.bit + 7) / 8 * 8                               // and in the AudioSpecificConfig
            let comment = try copy(8)
            for _ in 0..<comment { try copy(8) }
            return out
        }
    }
}
