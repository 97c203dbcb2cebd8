extension ADTSHeader {
    /// The 7-byte header (no CRC) that FFmpeg's adts muxer puts in front of a raw AAC frame of a
    /// track with the AudioSpecificConfig `config` (MPEG-4 ID 0, buffer fullness 0x7FF, one raw
    /// data block), as `ffmpeg -c copy out.ts` writes AAC from MP4 or Matroska.
    struct Maker {
        let profile: Int, rateIndex: Int, channelConfig: Int

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
            guard (1...7).contains(asc.channelConfig) else {
                throw MediaError(.unsupported, "track \(track) (aac): channel configuration \(asc.channelConfig) (a program config element) is not written into ADTS headers here")
            }
            profile = asc.objectType - 1
            rateIndex = index
            channelConfig = asc.channelConfig
        }

        /// `frame` (one raw AAC frame) after its header.
        /// - Throws: `.limit` when the frame and header exceed ADTS's 13-bit length (8191 bytes).
        func frame(_ frame: [UInt8], track: Int) throws -> [UInt8] {
            let n = frame.count + 7
            guard n < 1 << 13 else {
                throw MediaError(.limit, "track \(track) (aac): a frame of \(frame.count) bytes does not fit an ADTS frame (8184 bytes at most)")
            }
            var out: [UInt8] = [0xFF, 0xF1, UInt8(truncatingIfNeeded: profile << 6 | rateIndex << 2 | channelConfig >> 2),
                                UInt8(truncatingIfNeeded: (channelConfig & 3) << 6 | n >> 11), UInt8(truncatingIfNeeded: n >> 3),
                                UInt8(truncatingIfNeeded: (n & 7) << 5 | 0x1F), 0xFC]
            out += frame
            return out
        }
    }
}
