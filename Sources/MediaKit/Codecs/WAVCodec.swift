/// The codec of a WAVE format tag (`WAVEFORMATEX.wFormatTag`, or the first two bytes of a
/// `WAVE_FORMAT_EXTENSIBLE` sub-format GUID), as FFmpeg's RIFF table names it
/// (libavformat/riff.c `ff_codec_wav_tags`), and how a data chunk of that codec is cut into
/// packets and timed (libavformat/wavdec.c with the parsers it runs, and
/// libavcodec `av_get_audio_frame_duration2`).
///
/// The container only names the codec; whether it can be decoded is the registry's question,
/// asked at decode time.
struct WAVCodec: Sendable {
    /// How the data chunk is cut into packets.
    enum Framing: Sendable, Equatable {
        /// Runs of whole `nBlockAlign` blocks, at most 4096 bytes (FFmpeg's wav demuxer, no parser).
        case blocks
        /// One block of `bytes` per packet (FFmpeg's GSM parser: 65-byte GSM 6.10 frame pairs).
        case fixed(bytes: Int)
        /// One MPEG audio frame per packet (FFmpeg's mpegaudio parser).
        case mpegAudio
    }

    /// How many sample frames a packet of a given size holds.
    enum Timing: Sendable, Equatable {
        /// `samples` per whole `nBlockAlign` block (PCM: 1; ADPCM: from the block's layout).
        case perBlock(samples: Int64)
        /// A fixed number of bits per sample and channel (FFmpeg's "exact bits per sample").
        case bits(Int)
        /// `samples` per `bytes` (TrueSpeech: 240 per 32; GSM 6.10 (Microsoft): 320 per 65).
        case chunk(bytes: Int, samples: Int64)
        /// From the byte rate of the `fmt ` chunk (`nAvgBytesPerSec`), as FFmpeg's last resort.
        case byteRate
        /// Unknown: packets carry no timestamps (ffprobe prints N/A), as FFmpeg's for a tag it cannot name.
        case none
    }

    /// FFmpeg's name of the codec; ``CodecID/unknown`` for a tag FFmpeg's table does not list.
    let codec: CodecID
    let framing: Framing
    let timing: Timing

    /// The codec of `tag` with `bits` bits per sample, `channels` channels and `nBlockAlign` `align`.
    static func resolve(tag: Int, bits: Int, channels: Int, align: Int, float: Bool = false) -> WAVCodec {
        switch tag {
        case 0x0001:
            // Integer PCM by its container size (FFmpeg's ff_get_pcm_codec_id, 8 bits unsigned).
            let names: [Int: String] = [1: "pcm_u8", 2: "pcm_s16le", 3: "pcm_s24le", 4: "pcm_s32le", 8: "pcm_s64le"]
            let name = (1...64).contains(bits) ? names[(bits + 7) / 8] : nil
            return WAVCodec(codec: name.map { CodecID($0) } ?? .unknown, framing: .blocks, timing: name == nil ? .none : .perBlock(samples: 1))
        case 0x0003:
            let name = bits == 32 ? "pcm_f32le" : bits == 64 ? "pcm_f64le" : nil
            return WAVCodec(codec: name.map { CodecID($0) } ?? .unknown, framing: .blocks, timing: name == nil ? .none : .perBlock(samples: 1))
        case 0x0006, 0x0007, 0x6C75:
            return WAVCodec(codec: tag == 0x0006 ? "pcm_alaw" : "pcm_mulaw", framing: .blocks, timing: .perBlock(samples: 1))
        case 0x0011, 0x0069:
            // IMA ADPCM (Multimedia Registration, "IMA ADPCM Wave Type"): a 4-byte header per
            // channel, then groups of 4 bytes of `bits`-bit samples per channel.
            let perGroup = bits * channels
            guard (2...5).contains(bits), align > 4 * channels else {
                return WAVCodec(codec: "adpcm_ima_wav", framing: .blocks, timing: .none)
            }
            return WAVCodec(codec: "adpcm_ima_wav", framing: .blocks, timing: .perBlock(samples: Int64(1 + (align - 4 * channels) / perGroup * 8)))
        case 0x0002:
            // Microsoft ADPCM: a 7-byte header per channel (two samples), then 4-bit samples.
            guard align > 7 * channels else { return WAVCodec(codec: "adpcm_ms", framing: .blocks, timing: .none) }
            return WAVCodec(codec: "adpcm_ms", framing: .blocks, timing: .perBlock(samples: Int64(2 + (align - 7 * channels) * 2 / channels)))
        case 0x0031, 0x0032, 0x1500:
            return WAVCodec(codec: "gsm_ms", framing: .fixed(bytes: 65), timing: .chunk(bytes: 65, samples: 320))
        case 0x0022, 0x1501:
            return WAVCodec(codec: "truespeech", framing: .blocks, timing: .chunk(bytes: 32, samples: 240))
        case 0x0050, 0x0055:
            return WAVCodec(codec: tag == 0x0050 ? .mp2 : .mp3, framing: .mpegAudio, timing: .none)
        case 0x0010, 0x0017:
            return WAVCodec(codec: "adpcm_ima_oki", framing: .blocks, timing: .bits(4))
        case 0x0020:
            return WAVCodec(codec: "adpcm_yamaha", framing: .blocks, timing: .bits(4))
        case 0x0200:
            return WAVCodec(codec: "adpcm_ct", framing: .blocks, timing: .bits(4))
        case 0x028F:
            return WAVCodec(codec: "adpcm_g722", framing: .blocks, timing: .bits(4))
        case 0x0045, 0x0014, 0x0040, 0x0064:
            return WAVCodec(codec: tag == 0x0064 ? "adpcm_g726le" : "adpcm_g726", framing: .blocks, timing: (2...5).contains(bits) ? .bits(bits) : .none)
        default:
            guard let name = otherTags[tag] else { return WAVCodec(codec: .unknown, framing: .blocks, timing: .none) }
            return WAVCodec(codec: CodecID(name), framing: .blocks, timing: .byteRate)
        }
    }

    /// The other tags of FFmpeg's RIFF table (riff.c `ff_codec_wav_tags`), by FFmpeg's codec
    /// names; their packets are runs of blocks, timed from the byte rate.
    static let otherTags: [Int: String] = [
        0x000A: "wmavoice", 0x0038: "amr_nb", 0x0042: "g723_1", 0x0057: "amr_nb", 0x0058: "amr_wb",
        0x0061: "adpcm_ima_dk4", 0x0062: "adpcm_ima_dk3", 0x0075: "metasound", 0x0083: "g729",
        0x00FF: "aac", 0x0111: "g723_1", 0x0130: "sipr", 0x0160: "wmav1", 0x0161: "wmav2",
        0x0162: "wmapro", 0x0163: "wmalossless", 0x0165: "xma1", 0x0166: "xma2", 0x0180: "ftr",
        0x0215: "dvaudio", 0x0216: "dvaudio", 0x0270: "atrac3", 0x028E: "msnsiren", 0x0350: "misc4",
        0x0401: "imc", 0x0402: "iac", 0x0500: "on2avc", 0x0501: "on2avc", 0x1600: "aac", 0x1602: "aac_latm",
        0x2000: "ac3", 0x2001: "dts", 0x2048: "sonic", 0x2222: "g729", 0x706D: "aac", 0x4143: "aac",
        0x4180: "ftr", 0x594A: "xan_dpcm", 0x729A: "g729", 0x8180: "ftr", 0xA100: "g723_1", 0xA106: "aac",
        0xA109: "speex", 0xF1AC: "flac", 0x5346: "adpcm_swf", 0x566F: "vorbis",
    ]

    /// Sample frames in a packet (or data chunk) of `bytes` bytes; nil when they cannot be known
    /// (``Timing/none``) or do not fit in 64 bits (a header's absurd size).
    func samples(bytes: Int, align: Int, channels: Int, sampleRate: Int, byteRate: Int) -> Int64? {
        let n = Int64(max(0, bytes))
        func times(_ a: Int64, _ b: Int64) -> Int64? {
            let (r, overflow) = a.multipliedReportingOverflow(by: b)
            return overflow ? nil : r
        }
        switch timing {
        case .perBlock(let k): return times(n / Int64(max(1, align)), k)
        case .bits(let b):
            let unit = Int64(b * max(1, channels))
            return times(n / unit, 8).map { $0 + n % unit * 8 / unit }
        case .chunk(let size, let k): return times(n / Int64(size), k)
        case .byteRate: return byteRate > 0 ? times(n, Int64(sampleRate)).map { $0 / Int64(byteRate) } : nil
        case .none: return nil
        }
    }
}

/// A `WAVEFORMATEX` (Microsoft's audio format header, as Matroska's `A_MS/ACM` CodecPrivate
/// carries it): the fields FFmpeg's `ff_get_wav_header` reads.
struct WAVEFormatEx: Sendable {
    /// The format tag (the sub-format's for `WAVE_FORMAT_EXTENSIBLE`).
    let tag: Int
    let channels: Int
    let sampleRate: Int
    /// nAvgBytesPerSec.
    let byteRate: Int
    /// nBlockAlign.
    let blockAlign: Int
    let bitsPerSample: Int
    /// The bytes after the header (cbSize of them, after the 22 of `WAVE_FORMAT_EXTENSIBLE`).
    let extradata: [UInt8]

    /// Parses `b`; nil when it is shorter than the 16 bytes of a `WAVEFORMAT` (or an
    /// extensible one shorter than 40).
    init?(_ b: [UInt8]) {
        guard b.count >= 16 else { return nil }
        func le16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        var tag = le16(0)
        var from = 18
        if tag == 0xFFFE {
            guard b.count >= 40 else { return nil }
            tag = le16(24)
            from = 40
        }
        self.tag = tag
        channels = le16(2)
        sampleRate = le16(4) | le16(6) << 16
        byteRate = le16(8) | le16(10) << 16
        blockAlign = le16(12)
        bitsPerSample = le16(14)
        let end = b.count >= 18 ? min(b.count, 18 + le16(16)) : 0
        extradata = end > from ? Array(b[from..<end]) : []
    }

    /// The codec by FFmpeg's RIFF table (``WAVCodec``).
    var codec: WAVCodec { WAVCodec.resolve(tag: tag, bits: bitsPerSample, channels: max(1, channels), align: max(1, blockAlign)) }

    /// The bytes of a `WAVEFORMAT` (16 bytes, integer PCM's) or, with `extra`, of a
    /// `WAVEFORMATEX`: the same then cbSize and the `extra` bytes (at most 65535). Values are
    /// stored in their low 16 or 32 bits; callers check the ranges.
    static func bytes(tag: Int, channels: Int, sampleRate: Int, byteRate: Int, blockAlign: Int, bits: Int, extra: [UInt8]?) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
        var b = le16(tag) + le16(channels) + le16(sampleRate) + le16(sampleRate >> 16) + le16(byteRate) + le16(byteRate >> 16)
            + le16(blockAlign) + le16(bits)
        if let extra { b += le16(min(extra.count, 65535)) + extra.prefix(65535) }
        return b
    }

    /// A `WAVEFORMATEX` for a compressed codec without bits per sample of its own, as FFmpeg's
    /// `ff_put_wav_header` writes one: 16 bits per sample, a block of 16 bits per channel,
    /// `bitRate` / 8 bytes per second (0 unknown), `extradata` after cbSize.
    static func compressed(tag: Int, channels: Int, sampleRate: Int, bitRate: Int, extradata: [UInt8]) -> [UInt8] {
        let ch = min(max(1, channels), 65535)
        return bytes(tag: tag, channels: ch, sampleRate: sampleRate, byteRate: max(0, bitRate) / 8, blockAlign: 2 * ch, bits: 16, extra: extradata)
    }
}

/// The header of a WAV file MediaKit writes (a RIFF `WAVE` with its `fmt ` chunk, a `fact`
/// chunk for every format tag but integer PCM's, and the `data` chunk's header), for PCM, IEEE
/// float, A-law and mu-law, as FFmpeg's wav muxer writes them (riffenc.c `ff_put_wav_header`,
/// wavenc.c): `WAVE_FORMAT_EXTENSIBLE`, with the channel mask, for more than two channels,
/// samples wider than 16 bits (float included) and rates above 48 kHz; otherwise a
/// `WAVEFORMATEX`, with `cbSize` 0 for G.711. The header's length depends only on the codec,
/// the channel count and the rate, so the same call with the final sizes overwrites it in place.
enum WAVHeader {
    /// The speaker masks of FFmpeg's default layouts for 0 to 8 channels (`av_channel_layout_default`:
    /// mono, stereo, 2.1, 4.0, 5.0, 5.1, 6.1, 7.1), which `ffmpeg -c copy` writes for a stream
    /// whose layout is unknown.
    static let defaultMasks: [UInt32] = [0, 0x4, 0x3, 0x0B, 0x107, 0x37, 0x3F, 0x13F, 0x63F]

    /// True when a WAV file stores `codec` (little-endian or 8-bit PCM, IEEE float, G.711).
    static func stores(_ codec: PCMCodec) -> Bool {
        switch codec.kind {
        case .alaw, .mulaw: return true
        case .ieeeFloat: return !codec.bigEndian
        case .signed: return codec.bytes > 1 && !codec.bigEndian
        case .unsigned: return codec.bytes == 1
        }
    }

    /// True when a WAV header holds `rate` and `channels` of `bytesPerSample`-byte samples: 16-bit
    /// channel count and block size, 32-bit rate and bytes per second (`minimum`: the lowest
    /// rate and channel count allowed, 0 for a writer that may end with no samples).
    static func holds(rate: Int, channels: Int, bytesPerSample: Int, minimum: Int = 1) -> Bool {
        let perSecond = rate.multipliedReportingOverflow(by: max(0, min(channels, 65535)) * bytesPerSample)
        return rate >= minimum && channels >= minimum && channels <= 65535 && channels * bytesPerSample <= 65535
            && UInt32(exactly: rate) != nil && !perSecond.overflow && UInt32(exactly: perSecond.partialValue) != nil
    }

    /// The header bytes. `codec` must be one ``stores(_:)`` accepts; `frames` (sample frames)
    /// goes into the `fact` chunk of float and G.711.
    static func bytes(codec: PCMCodec, rate: Int, channels: Int, mask: UInt64, dataBytes: UInt32, frames: UInt32 = 0) -> [UInt8] {
        bytes(codec: codec, rate: rate, channels: channels, mask: mask, dataBytes: Int64(dataBytes), frames: Int64(frames))
    }

    /// The header bytes, RIFF or RF64 (EBU Tech 3306) as `rf64` asks and FFmpeg's wav muxer
    /// writes them (wavenc.c): ``MuxerOptions/RF64/auto`` reserves a `JUNK` chunk of 28 bytes
    /// after `WAVE` and becomes RF64 when the RIFF size (the file less 8 bytes, the pad byte
    /// counted) passes `limit` (4 GiB - 1; lower only in tests); RF64 states 0xFFFFFFFF in the
    /// RIFF, `data` and `fact` sizes and the real ones in the `ds64` chunk where the `JUNK` was
    /// (the RIFF size, the data size with its pad byte, the sample frames, no table).
    static func bytes(codec: PCMCodec, rate: Int, channels: Int, mask: UInt64, dataBytes: Int64, frames: Int64,
                      rf64: MuxerOptions.RF64 = .never, limit: Int64 = Int64(UInt32.max)) -> [UInt8] {
        func le16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
        func le32(_ v: UInt32) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 24)] }
        func le64(_ v: Int64) -> [UInt8] { le32(UInt32(truncatingIfNeeded: v)) + le32(UInt32(truncatingIfNeeded: v >> 32)) }
        let bits = codec.bits
        let block = channels * codec.bytes
        let g711 = codec.kind == .alaw || codec.kind == .mulaw
        let extensible = channels > 2 || bits > 16 || rate > 48000
        let tag = g711 ? (codec.kind == .alaw ? 6 : 7) : codec.kind == .ieeeFloat ? 3 : 1
        // Every tag but integer PCM's has a WAVEFORMATEX (cbSize) and a `fact` chunk.
        let integerPCM = tag == 1
        // WAVE_FORMAT_EXTENSIBLE's 22 bytes: valid bits, the channel mask, the sub-format GUID
        // (KSDATAFORMAT_SUBTYPE_PCM / IEEE_FLOAT / ALAW / MULAW: the tag, then a fixed tail).
        let extensibleTail = le16(bits) + le32(mask != 0 ? UInt32(truncatingIfNeeded: mask) : defaultMasks[min(channels, 8)])
            + le16(tag) + [0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71]
        let fmt = WAVEFormatEx.bytes(tag: extensible ? 0xFFFE : tag, channels: channels, sampleRate: rate, byteRate: rate * block,
                                     blockAlign: block, bits: bits, extra: extensible ? extensibleTail : integerPCM ? nil : [])
        let reserved = rf64 == .never ? 0 : 36
        // The RIFF size counts the data chunk's pad byte (an odd size is padded to even).
        let padded = dataBytes + (dataBytes & 1)
        let riffSize = Int64(4 + reserved + 8 + fmt.count + (integerPCM ? 0 : 12) + 8) + padded
        let isRF64 = rf64 == .always || (rf64 == .auto && riffSize > limit)
        let fact = !integerPCM ? Array("fact".utf8) + le32(4) + le32(isRF64 ? UInt32.max : UInt32(truncatingIfNeeded: frames)) : []
        var h = Array((isRF64 ? "RF64" : "RIFF").utf8) + le32(isRF64 ? UInt32.max : UInt32(truncatingIfNeeded: riffSize)) + Array("WAVE".utf8)
        if isRF64 {
            h += Array("ds64".utf8) + le32(28) + le64(riffSize) + le64(padded) + le64(frames) + le32(0)
        } else if reserved > 0 {
            h += Array("JUNK".utf8) + le32(28) + [UInt8](repeating: 0, count: 28)
        }
        h += Array("fmt ".utf8) + le32(UInt32(truncatingIfNeeded: fmt.count)) + fmt + fact
        h += Array("data".utf8) + le32(isRF64 ? UInt32.max : UInt32(truncatingIfNeeded: dataBytes))
        return h
    }
}
