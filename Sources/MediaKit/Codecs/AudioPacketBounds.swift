/// The largest packet an audio encoder can give, from each codec's specification: what
/// ``AudioEncodingConverter/maximumOutputPacketSize`` (AudioConverter's
/// `kAudioConverterPropertyMaximumOutputPacketSize`) reports for the codecs that bound it.
enum AudioPacketBounds {
    /// AAC: a raw_data_block holds at most 6144 bits per channel (ISO/IEC 14496-3 4.5.3.2,
    /// 13818-7 8.2.2: the decoder's input buffer per channel), so 768 bytes a channel.
    static func aac(channels: Int) -> Int { 768 * max(1, channels) }

    /// FLAC: a frame of `blockSize` samples coded verbatim, the size an encoder never exceeds
    /// (RFC 9639: a frame header of at most 16 bytes, each subframe's header of one byte plus
    /// wasted-bits flags, a stereo pair's side channel one bit wider, the CRC-16 footer), as
    /// FFmpeg's `ff_flac_get_max_frame_size` counts it.
    static func flac(blockSize: Int, channels: Int, bitsPerSample: Int) -> Int {
        var count = 16 + channels * ((7 + bitsPerSample + 7) / 8)
        if channels == 2 {
            count += ((2 * bitsPerSample + 1) * blockSize + 7) / 8
        } else {
            count += (channels * bitsPerSample * blockSize + 7) / 8
        }
        return count + 2
    }

    /// ALAC: the `maxFrameBytes` its magic cookie states (the ALACSpecificConfig, bare or in
    /// its `alac` atom); nil when the cookie has none (0 means unknown).
    static func alac(cookie: [UInt8]) -> Int? {
        var c = cookie[...]
        if c.count >= 36, c.dropFirst(4).starts(with: Array("alac".utf8)) { c = c.dropFirst(12) }
        guard c.count >= 24 else { return nil }
        let at = c.startIndex + 12
        let n = Int(c[at]) << 24 | Int(c[at + 1]) << 16 | Int(c[at + 2]) << 8 | Int(c[at + 3])
        return n > 0 ? n : nil
    }

    /// Opus: `frames` frames of at most 1275 bytes each in every one of `streams` streams
    /// (RFC 6716 section 3.2: a frame's length is at most 1275 bytes; a packet of one frame
    /// adds its TOC byte, one of several (code 2 or 3) the frame count byte and up to two length
    /// bytes a frame; RFC 6716 appendix B: a multistream packet's streams but the last are
    /// self-delimited, up to two bytes more each).
    static func opus(frames: Int, streams: Int) -> Int {
        let n = max(1, frames), s = max(1, streams)
        return s * (2 + 2 * n + 1275 * n)
    }

    /// Opus streams in a packet, from the OpusHead (RFC 7845 5.1.1: family 0 has one).
    static func opusStreams(head: [UInt8]) -> Int {
        guard case .success(let h) = OpusHead.parse(head) else { return 1 }
        return h.mappingFamily == 0 || head.count < 20 ? 1 : max(1, Int(head[19]))
    }

    /// PCM: `frames` frames of `channels` samples of the codec's width; nil for a name that is
    /// not PCM or no fixed frame count.
    static func pcm(codec: String, frames: Int, channels: Int) -> Int? {
        guard frames > 0, codec.hasPrefix("pcm_") else { return nil }
        let width: Int
        switch codec {
        case "pcm_u8", "pcm_s8", "pcm_alaw", "pcm_mulaw": width = 1
        case "pcm_s16le", "pcm_s16be": width = 2
        case "pcm_s24le", "pcm_s24be": width = 3
        case "pcm_s32le", "pcm_s32be", "pcm_f32le", "pcm_f32be": width = 4
        case "pcm_f64le", "pcm_f64be": width = 8
        default: return nil
        }
        return frames * channels * width
    }
}
