/// Writes `stsd` sample entries.
///
/// A sample entry read from another MP4 (``CodecParameters/sampleEntry``) is carried
/// over verbatim, so entries MediaKit does not understand (ac-3, c608, tx3g, mebx ...)
/// and the boxes it does not model (colr, btrt, pasp, SA3D ...) survive a remux.
/// Otherwise the entry is generated from the parameters: avc1, hvc1, av01, vp09 (vpcC), mp4v (esds: MPEG-1 / 2
/// video, MPEG-4 Part 2), ac-3 (dac3), ec-3 (dec3), mp4a (esds: AAC, MP3, MP2, DTS),
/// Opus (dOps), .mp3, fLaC (dfLa), and QuickTime sound descriptions for uncompressed audio (sowt, twos,
/// in24, in32, fl32, fl64, raw, ulaw, alaw; lpcm above 65535 Hz), as FFmpeg's mov muxer writes them.
enum SampleEntryWriter {
    /// The sample entry bytes (header included) for `p`, and the handler type of the track.
    static func entry(for p: CodecParameters, trackID: Int) throws -> [UInt8] {
        if p.codecTag == "encv" || p.codecTag == "enca" || Self.isEncrypted(p.sampleEntry) {
            throw MediaError(.unsupported, "encrypted track (\(p.codecTag)); MediaKit cannot write protected samples")
        }
        if p.sampleEntry.count >= 8, be32(p.sampleEntry, 0) == UInt32(p.sampleEntry.count) {
            return p.sampleEntry
        }
        var w = BoxWriter()
        switch p.codec {
        case "h264", "hevc", "av1":
            let (type, config) = p.codec == "h264" ? ("avc1", "avcC") : p.codec == "hevc" ? ("hvc1", "hvcC") : ("av01", "av1C")
            guard !p.extradata.isEmpty else {
                throw MediaError(.invalidArgument, "a \(p.codec) track needs its \(config) configuration in extradata")
            }
            guard p.width > 0, p.height > 0, p.width <= 65535, p.height <= 65535 else {
                throw MediaError(.invalidArgument, "a video track needs a width and height (got \(p.width)x\(p.height))")
            }
            let tag = p.codecTag.count == 4 && ["avc1", "avc3", "hvc1", "hev1", "av01"].contains(p.codecTag) ? p.codecTag : type
            w.append(visualEntry(tag, config: config, p))
        case "vp9":
            // extradata: the vpcC body (``CodecConfigRecords/vpcC(_:codecPrivate:keyFrame:frameRate:)``).
            guard p.extradata.count >= 12, p.extradata[0] == 1 else {
                throw MediaError(.invalidArgument, "a vp9 track needs its vpcC configuration (version 1) in extradata")
            }
            guard p.width > 0, p.height > 0, p.width <= 65535, p.height <= 65535 else {
                throw MediaError(.invalidArgument, "a video track needs a width and height (got \(p.width)x\(p.height))")
            }
            w.append(visualEntry("vp09", config: "vpcC", p))
        case "ac3", "eac3":
            // extradata: the 3-byte dac3 payload (``CodecConfigRecords/dac3(_:)``), or E-AC-3's
            // dec3 payload of at least 5 bytes (``EAC3Track/dec3``).
            let eac3 = p.codec == "eac3"
            guard p.channels > 0, p.sampleRate > 0, eac3 ? p.extradata.count >= 5 : p.extradata.count == 3 else {
                throw MediaError(.invalidArgument, eac3 ? "an E-AC-3 track needs its rate, channels and the dec3 payload (5 bytes or more) in extradata"
                                                        : "an AC-3 track needs its rate, channels and the 3-byte dac3 payload in extradata")
            }
            w.box(eac3 ? "ec-3" : "ac-3") { w in
                w.zeros(6); w.u16(1)
                w.zeros(8)
                w.u16(2); w.u16(16)                       // channel count 2 and sample size 16 (ETSI TS 102 366 F.3)
                w.u16(0); w.u16(0)
                w.u32(p.sampleRate < 65536 ? UInt32(p.sampleRate) << 16 : 0)
                w.box(eac3 ? "dec3" : "dac3") { $0.append(p.extradata) }
            }
        case "mpeg1video", "mpeg2video":
            // mp4v with an esds: Object Type 0x6A (MPEG-1) or 0x61 (MPEG-2 Main, the one FFmpeg
            // writes for every MPEG-2 profile), the sequence header as the decoder config.
            guard p.width > 0, p.height > 0, p.width <= 65535, p.height <= 65535 else {
                throw MediaError(.invalidArgument, "a video track needs a width and height (got \(p.width)x\(p.height))")
            }
            let esds = esds(oti: p.codec == "mpeg1video" ? 0x6A : 0x61, config: p.extradata, bitRate: p.bitRate, trackID: trackID, video: true)
            w.append(visualEntry("mp4v", configBox: esds, p))
        case "mpeg4":
            // MPEG-4 Part 2 (ISO 14496-2): mp4v with an esds, Object Type 0x20, the VOL headers
            // (extradata) as the decoder config; the rates here are the stream's, replaced by
            // the measured ones when the moov is written (``mpeg4Visual(_:trackID:averageBitRate:bitRateBox:)``).
            w.append(try mpeg4Visual(p, trackID: trackID, averageBitRate: 0, bitRateBox: false))
        case "aac", "mp3", "mp2", "dts", "opus":
            // A DTS stream whose channels only a decoder states (DTS-HD, Express: no core header
            // to read them from) gets 2, the value FFmpeg writes in every mp4a entry.
            var p = p
            if p.codec == "dts" && p.channels == 0 { p.channels = 2 }
            guard p.channels > 0, p.sampleRate > 0 else {
                throw MediaError(.invalidArgument, "an audio track needs a sample rate and channel count (got \(p.sampleRate) Hz, \(p.channels) channels)")
            }
            let type = p.codec == "opus" ? "Opus" : (p.codec == "mp3" && p.codecTag == ".mp3") ? ".mp3" : "mp4a"
            w.box(type) { w in
                w.zeros(6); w.u16(1)
                w.zeros(8)
                w.u16(UInt16(clamping: p.channels)); w.u16(16)
                w.u16(0); w.u16(0)
                w.u32(p.sampleRate < 65536 ? UInt32(p.sampleRate) << 16 : 0)
                switch type {
                case "Opus":
                    w.box("dOps") { $0.append(dOps(fromOpusHead: p.extradata, channels: p.channels)) }
                case "mp4a":
                    if p.codec == "aac", p.extradata.isEmpty {
                        // handled below by the throw; keeps the closure non-throwing
                    }
                    w.append(esds(oti: objectType(p), config: p.extradata, bitRate: p.bitRate, trackID: trackID))
                default: break
                }
            }
            if p.codec == "aac", p.extradata.isEmpty {
                throw MediaError(.invalidArgument, "an AAC track needs its AudioSpecificConfig in extradata")
            }
        case "flac":
            // fLaC + dfLa (the FLAC-in-ISOBMFF encapsulation): STREAMINFO as the one, last metadata block.
            guard p.channels > 0, p.sampleRate > 0, p.extradata.count == 34 else {
                throw MediaError(.invalidArgument, "a FLAC track needs its rate, channels and the 34-byte STREAMINFO in extradata")
            }
            w.box("fLaC") { w in
                w.zeros(6); w.u16(1)
                w.zeros(8)
                w.u16(UInt16(clamping: p.channels)); w.u16(16)
                w.u16(0); w.u16(0)
                w.u32(p.sampleRate < 65536 ? UInt32(p.sampleRate) << 16 : 0)
                w.box("dfLa") { w in
                    w.u32(0)                          // version, flags
                    w.u32(0x8000_0000 | 34)           // last block, type 0 (STREAMINFO), 34 bytes
                    w.append(p.extradata)
                }
            }
        case "alac":
            // alac + alac (Apple's ALAC-in-MP4): the ALACSpecificConfig in a full box. extradata
            // is that box whole (size, 'alac', version and flags, the 24-byte config), as MP4's
            // reader and FFmpeg's encoder give it.
            guard p.channels > 0, p.sampleRate > 0, p.extradata.count >= 36, p.extradata[4..<8].elementsEqual(Array("alac".utf8)) else {
                throw MediaError(.invalidArgument, "an ALAC track needs its rate, channels and the 36-byte 'alac' atom in extradata")
            }
            w.box("alac") { w in
                w.zeros(6); w.u16(1)
                w.zeros(8)
                w.u16(UInt16(clamping: p.channels)); w.u16(UInt16(truncatingIfNeeded: p.extradata[17]))   // the config's bitDepth
                w.u16(0); w.u16(0)
                w.u32(p.sampleRate < 65536 ? UInt32(p.sampleRate) << 16 : 0)
                w.box("alac") { w in w.append(Array(p.extradata[8...])) }
            }
        default:
            guard let bits = SampleEntryParser.bitsPerSample(codec: p.codec), let tag = pcmTag(p.codec) else {
                throw MediaError(.unsupported, "cannot write a '\(p.codec.isUnknown ? p.codecTag : p.codec.rawValue)' sample entry without the source's sample entry bytes")
            }
            // Bounded so that the frame size and the 32-bit fields of the sound description hold them.
            guard p.channels > 0, p.sampleRate > 0, p.channels <= 65535, p.sampleRate <= Int(Int32.max) else {
                throw MediaError(.invalidArgument, "an audio track needs a sample rate and channel count (got \(p.sampleRate) Hz, \(p.channels) channels)")
            }
            w.append(pcmEntry(p, tag: tag, bits: bits))
        }
        return w.bytes
    }

    /// An `mp4v` entry for MPEG-4 Part 2 video as FFmpeg's mov muxer writes it (movenc.c
    /// `mov_write_esds_tag`, `calculate_mpeg4_bit_rates`): the esds (Object Type 0x20, visual
    /// stream, no buffer size) states as its average `averageBitRate` (the track's bytes over
    /// its duration; when 0, as in a fragmented file's moov, the stream's bit rate) and as its
    /// maximum the larger of that and the stream's bit rate; a `pasp` for a stated pixel aspect;
    /// then, when `bitRateBox` (mp4 mode, not QuickTime), a `btrt` with the same two rates
    /// unless both are 0.
    /// - Throws: `.invalidArgument` without a width and height.
    static func mpeg4Visual(_ p: CodecParameters, trackID: Int, averageBitRate: Int, bitRateBox: Bool) throws -> [UInt8] {
        guard p.width > 0, p.height > 0, p.width <= 65535, p.height <= 65535 else {
            throw MediaError(.invalidArgument, "a video track needs a width and height (got \(p.width)x\(p.height))")
        }
        let average = averageBitRate > 0 ? averageBitRate : max(0, p.bitRate)
        let maximum = max(max(0, p.bitRate), average)
        var esds = BoxWriter()
        esds.fullBox("esds", version: 0, flags: 0) {
            $0.append(ESDescriptor.build(objectType: 0x20, specificInfo: p.extradata, bitRate: average, maxBitRate: maximum, esID: trackID, video: true))
        }
        var entry = visualEntry("mp4v", configBox: esds.bytes, p)
        guard bitRateBox, average > 0 || maximum > 0 else { return entry }
        var btrt = BoxWriter()
        btrt.box("btrt") { w in w.u32(0); w.u32(UInt32(clamping: maximum)); w.u32(UInt32(clamping: average)) }
        let size = entry.count + btrt.bytes.count
        guard size <= Int(UInt32.max) else { return entry }
        entry.replaceSubrange(0..<4, with: [UInt8(truncatingIfNeeded: size >> 24), UInt8(truncatingIfNeeded: size >> 16),
                                            UInt8(truncatingIfNeeded: size >> 8), UInt8(truncatingIfNeeded: size)])
        return entry + btrt.bytes
    }

    /// The MPEG-4 Object Type of an `mp4a` entry's esds, as FFmpeg's mov muxer writes it: AAC
    /// 0x40; MPEG audio 0x6B (ISO 11172-3) above 24 kHz and 0x69 (ISO 13818-3, the half
    /// rates) at 24 kHz and below; DTS 0xA9.
    static func objectType(_ p: CodecParameters) -> UInt8 {
        switch p.codec {
        case "aac": return 0x40
        case "dts": return 0xA9
        default: return p.sampleRate > 24000 ? 0x6B : 0x69
        }
    }

    /// A visual sample entry `type` (ISO 14496-12 VisualSampleEntry) holding the box `config`
    /// with `p.extradata` and, when the pixels are not square, a `pasp`.
    static func visualEntry(_ type: String, config: String, _ p: CodecParameters) -> [UInt8] {
        var c = BoxWriter()
        c.box(config) { $0.append(p.extradata) }
        return visualEntry(type, configBox: c.bytes, p)
    }

    /// A visual sample entry `type` holding the complete box `configBox` (header included)
    /// and, when the pixels are not square, a `pasp`.
    static func visualEntry(_ type: String, configBox: [UInt8], _ p: CodecParameters) -> [UInt8] {
        var w = BoxWriter()
        w.box(type) { w in
            w.zeros(6); w.u16(1)                      // reserved, data_reference_index
            w.zeros(16)                               // pre_defined, reserved
            w.u16(UInt16(p.width)); w.u16(UInt16(p.height))
            w.u32(0x0048_0000); w.u32(0x0048_0000)    // 72 dpi
            w.u32(0); w.u16(1)                        // reserved, frame_count
            w.zeros(32)                               // compressorname
            w.u16(0x18); w.u16(0xFFFF)                // depth, pre_defined
            w.append(configBox)
            if p.sampleAspectRatio.numerator > 0, p.sampleAspectRatio.denominator > 0 {
                w.box("pasp") { w in
                    w.u32(UInt32(clamping: p.sampleAspectRatio.numerator)); w.u32(UInt32(clamping: p.sampleAspectRatio.denominator))
                }
            }
        }
        return w.bytes
    }

    /// The QuickTime fourcc of an uncompressed audio codec.
    static func pcmTag(_ codec: CodecID) -> String? {
        switch codec {
        case "pcm_s16le", "pcm_s8": return "sowt"
        case "pcm_s16be": return "twos"
        case "pcm_s24le", "pcm_s24be": return "in24"
        case "pcm_s32le", "pcm_s32be": return "in32"
        case "pcm_f32le", "pcm_f32be": return "fl32"
        case "pcm_f64le", "pcm_f64be": return "fl64"
        case "pcm_u8": return "raw "
        case "pcm_mulaw": return "ulaw"
        case "pcm_alaw": return "alaw"
        default: return nil
        }
    }

    /// A QuickTime sound description for uncompressed audio: version 0 (8/16-bit), version 1
    /// (wider samples; little-endian ones with a `wave` box holding `enda`) or, above 65535 Hz,
    /// version 2 `lpcm` with its format flags (1 float, 2 big-endian, 4 signed, 8 packed).
    static func pcmEntry(_ p: CodecParameters, tag: String, bits: Int) -> [UInt8] {
        let frameSize = bits / 8 * p.channels
        let wide = bits > 16
        let littleEndian = p.codec.rawValue.hasSuffix("le")
        let version: UInt16 = p.sampleRate > 65535 ? 2 : wide ? 1 : 0
        var w = BoxWriter()
        w.box(version == 2 ? "lpcm" : tag) { w in
            w.zeros(6); w.u16(1)                                  // reserved, data_reference_index
            w.u16(version); w.u16(0); w.u32(0)                    // version, revision, vendor
            if version == 2 {
                w.u16(3); w.u16(16); w.u16(0xFFFE); w.u16(0); w.u32(0x0001_0000)
                w.u32(72)                                         // sizeOfStructOnly
                w.u64(Double(p.sampleRate).bitPattern)
                w.u32(UInt32(p.channels)); w.u32(0x7F00_0000)
                w.u32(UInt32(bits))
                let float = p.codec.rawValue.hasPrefix("pcm_f"), signed = p.codec.rawValue.hasPrefix("pcm_s")
                let flags: UInt32 = 8 | (float ? 1 : 0) | (!littleEndian && bits > 8 ? 2 : 0) | (signed ? 4 : 0)
                w.u32(flags)
                w.u32(UInt32(frameSize)); w.u32(1)                // bytes per packet, frames per packet
                return
            }
            w.u16(UInt16(clamping: p.channels))
            w.u16(p.codec == "pcm_u8" || p.codec == "pcm_s8" ? 8 : 16)   // sample size field (16 for other codecs)
            w.u16(0); w.u16(0)                                    // compression ID, packet size
            w.u32(UInt32(p.sampleRate) << 16)
            if version == 1 {
                w.u32(1)                                          // samples per packet
                w.u32(UInt32(frameSize / p.channels))             // bytes per packet (one channel)
                w.u32(UInt32(frameSize))                          // bytes per frame
                w.u32(2)                                          // bytes per sample
                if littleEndian {
                    w.box("wave") { w in
                        w.box("frma") { $0.fourCC(tag) }
                        w.box("enda") { $0.u16(1) }
                        w.zeros(8)                                // terminator atom
                    }
                }
            }
        }
        return w.bytes
    }

    /// True when a sample entry is encv/enca, or protected (has a sinf box).
    static func isEncrypted(_ entry: [UInt8]) -> Bool {
        guard entry.count >= 8 else { return false }
        let type = fourCCString(entry[4..<8])
        return type == "encv" || type == "enca"
    }

    /// An `esds` box: ES_Descriptor > DecoderConfigDescriptor > DecoderSpecificInfo, SLConfig.
    static func esds(oti: UInt8, config: [UInt8], bitRate: Int, trackID: Int, video: Bool = false) -> [UInt8] {
        var w = BoxWriter()
        w.fullBox("esds", version: 0, flags: 0) { $0.append(ESDescriptor.build(objectType: oti, specificInfo: config, bitRate: bitRate, esID: trackID, video: video)) }
        return w.bytes
    }

    /// A `dOps` payload from an `OpusHead` (RFC 7845 little-endian -> ISO BMFF big-endian).
    static func dOps(fromOpusHead h: [UInt8], channels: Int) -> [UInt8] {
        guard h.count >= 19, h.starts(with: Array("OpusHead".utf8)) else {
            // No header: a plain stereo/mono mapping with no pre-skip.
            return [0, UInt8(clamping: channels), 0, 0, 0, 0, 0xBB, 0x80, 0, 0, 0]
        }
        var d: [UInt8] = [0, h[9], h[11], h[10], h[15], h[14], h[13], h[12], h[17], h[16], h[18]]
        if h[18] != 0, h.count >= 21 + Int(h[9]) { d += h[19..<(21 + Int(h[9]))] }
        return d
    }
}
