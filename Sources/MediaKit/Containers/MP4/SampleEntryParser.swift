/// How a QuickTime sound description frames uncompressed or constant-size audio: what
/// FFmpeg's mov demuxer needs to cut a chunk of such a track into packets when its stts
/// counts one table sample per PCM frame (see ``SampleIndexBuilder``).
struct AudioFraming {
    /// PCM frames per compressed frame (sound description version 1 or 2, or implied by the
    /// codec: 64 for ima4, 6 for MACE, 160 for GSM); 0 or 1 for plain PCM.
    var samplesPerFrame = 0
    /// Bytes per compressed frame, for all channels (version 1 or 2, or implied by the codec).
    var bytesPerFrame = 0
    /// Bytes per PCM frame implied by the codec (bits per sample / 8 x channels); 0 when the
    /// codec implies none, and stsz's constant sample size is used instead.
    var sampleSize = 0
    /// Where the sample entry is, for errors: its box path and file offset.
    var entryPath = ""
    var entryOffset: Int64 = 0
}

/// The first sample entry of an `stsd` box, as ``SampleEntryParser`` reads it.
struct ParsedSampleEntry {
    var parameters: CodecParameters
    /// Why MediaKit cannot decode the track, nil when it can.
    var unsupportedReason: String?
    var encrypted: Bool
    /// Audio tracks: the framing of the sound description.
    var framing = AudioFraming()
}

/// Parses `stsd` sample entries into ``CodecParameters``.
enum SampleEntryParser {
    /// Parses the first sample entry of an `stsd` box. An entry MediaKit does
    /// not know is returned with an empty codec name and a reason, not thrown.
    /// `isom`: the file's ftyp names neither "qt  " as major brand nor among its compatible
    /// brands; then, as FFmpeg does, the version 1/2 fields of a sound description are read
    /// only when the stsd box is version 0.
    static func parse(stsd r: inout BoxReader, handler: String, isom: Bool = false) throws -> ParsedSampleEntry {
        let (stsdVersion, _) = try r.fullBoxHeader()
        let count = try r.u32()
        let empty = ParsedSampleEntry(parameters: CodecParameters(mediaType: mediaType(handler: handler), codec: ""),
                                      unsupportedReason: "the stsd box has no sample entry", encrypted: false)
        guard count > 0, r.remaining >= 8 else { return empty }
        var result: ParsedSampleEntry?
        try r.children { type, entry in
            if result != nil { return }   // later entries: packets referring to them are decoded with the first one
            result = try parseEntry(type: type, &entry, handler: handler, soundFields: !isom || stsdVersion == 0)
        }
        return result ?? empty
    }

    static func mediaType(handler: String) -> MediaType {
        switch handler {
        case "vide": return .video
        case "soun": return .audio
        case "sbtl", "subt", "text", "clcp", "subp": return .subtitle
        default: return .data
        }
    }

    private static func parseEntry(type: String, _ r: inout BoxReader, handler: String, soundFields: Bool) throws -> ParsedSampleEntry {
        let entryStart = r.position - 8
        let entryBytes = Array(r.bytes[max(0, entryStart)..<r.end])
        var encrypted = false
        var type = type
        switch handler {
        case "vide":
            var p = CodecParameters(mediaType: .video, codec: "", codecTag: type, sampleEntry: entryBytes)
            try r.skip(6 + 2 + 16)
            p.width = Int(try r.u16())
            p.height = Int(try r.u16())
            try r.skip(4 + 4 + 4 + 2 + 32)
            p.bitsPerCodedSample = Int(try r.u16())
            try r.skip(2)
            var children: [String: [UInt8]] = [:]
            try r.children { t, c in
                if t == "sinf" {
                    try c.children { st, s in if st == "frma" { let f = try s.fourCC(); children["frma"] = Array(f.utf8) } }
                } else if t == "colr" {
                    // Several colr boxes may follow each other (an ICC profile beside nclx): the
                    // first coded description (nclx / nclc) counts.
                    let b = try c.take(c.remaining)
                    let kind = String(decoding: b.prefix(4), as: UTF8.self)
                    if children["colr"] == nil && (kind == "nclx" || kind == "nclc") { children["colr"] = b }
                } else if children[t] == nil {
                    children[t] = try c.take(c.remaining)
                }
            }
            if type == "encv" {
                encrypted = true
                if let f = children["frma"] { type = String(decoding: f, as: UTF8.self) }
            }
            if let colr = children["colr"], colr.count >= 10 {
                // As FFmpeg's mov_read_colr: primaries, transfer, matrix; nclx adds the range flag.
                func code(_ o: Int) -> Int { Int(colr[o]) << 8 | Int(colr[o + 1]) }
                p.colorPrimaries = ColorPrimaries(rawValue: code(4))
                p.colorTransfer = ColorTransfer(rawValue: code(6))
                p.colorSpace = ColorMatrix(rawValue: code(8))
                if colr.starts(with: Array("nclx".utf8)), colr.count >= 11 { p.colorRange = colr[10] & 0x80 != 0 ? .full : .limited }
            }
            if let pasp = children["pasp"], pasp.count >= 8 {
                let h = Int64(be32(pasp, 0)), v = Int64(be32(pasp, 4))
                if h > 0 && v > 0 { p.sampleAspectRatio = Rational(h, v) }
            }
            switch type {
            case "avc1", "avc3", "avc2", "avc4":
                p.codec = "h264"; p.extradata = children["avcC"] ?? []
            case "hvc1", "hev1", "dvh1", "dvhe":
                p.codec = "hevc"; p.extradata = children["hvcC"] ?? []
            case "av01":
                p.codec = "av1"; p.extradata = children["av1C"] ?? []
            case "vp09":
                p.codec = "vp9"; p.extradata = []
            case "vp08":
                p.codec = "vp8"
            case "mp4v":
                if let esds = children["esds"], let d = parseESDS(esds) {
                    p.codec = d.oti == 0x20 ? "mpeg4" : (0x60...0x65).contains(d.oti) ? "mpeg2video" : d.oti == 0x6A ? "mpeg1video" : d.oti == 0x6C ? "mjpeg" : ""
                    p.extradata = d.config
                    p.bitRate = d.avgBitrate
                }
            case "jpeg", "mjpa": p.codec = "mjpeg"
            case "s263", "h263", "H263": p.codec = "h263"   // 3GPP TS 26.244's H263SampleEntry (and QuickTime's tags), as FFmpeg maps them
            default: p.codec = CodecID(QuickTimeVideoTag.table[type] ?? "")
            }
            let reason = p.codec.isUnknown ? "unknown video sample entry '\(type)'" : (encrypted ? "unsupported: encrypted track" : nil)
            return ParsedSampleEntry(parameters: p, unsupportedReason: reason, encrypted: encrypted)
        case "soun":
            var p = CodecParameters(mediaType: .audio, codec: "", codecTag: type, sampleEntry: entryBytes)
            var framing = AudioFraming(entryPath: r.path, entryOffset: r.base + Int64(max(0, entryStart)))
            try r.skip(6 + 2)
            let version = try r.u16()
            try r.skip(2 + 4)
            p.channels = Int(try r.u16())
            p.bitsPerCodedSample = Int(try r.u16())
            try r.skip(2 + 2)
            p.sampleRate = Int(try r.u32() >> 16)
            var lpcmFlags: UInt32?
            if soundFields && version == 1 {
                framing.samplesPerFrame = Int(try r.u32())
                try r.skip(4)                                   // bytes per packet (one channel)
                framing.bytesPerFrame = Int(try r.u32())
                try r.skip(4)                                   // bytes per sample
            } else if soundFields && version == 2 {
                try r.skip(4)
                let rate = Double(bitPattern: try r.u64())
                // A float64 in the file: anything but a plausible rate would trap in Int(_:).
                guard rate.isFinite, rate >= 0, rate <= Double(UInt32.max) else {
                    throw r.error(.invalidData, "\(type) sound sample entry version 2: sample rate \(rate) is not a rate")
                }
                p.sampleRate = Int(rate)
                p.channels = Int(try r.u32())
                try r.skip(4)
                p.bitsPerCodedSample = Int(try r.u32())
                lpcmFlags = try r.u32()
                framing.bytesPerFrame = Int(try r.u32())        // constBytesPerAudioPacket
                framing.samplesPerFrame = Int(try r.u32())      // constLPCMFramesPerAudioPacket
            }
            var children: [String: [UInt8]] = [:]
            func collect(_ c: inout BoxReader, _ t: String) throws {
                if children[t] == nil { children[t] = Array(c.bytes[c.position..<c.end]) }
                if t == "wave" {
                    try c.children { wt, w in try collect(&w, wt) }
                } else if t == "sinf" {
                    try c.children { st, s in if st == "frma" { let f = try s.fourCC(); children["frma"] = Array(f.utf8) } }
                }
            }
            try r.children { t, c in try collect(&c, t) }
            if type == "enca" {
                encrypted = true
                if let f = children["frma"] { type = String(decoding: f, as: UTF8.self) }
            }
            switch type {
            case "mp4a":
                if let esds = children["esds"], let d = parseESDS(esds) {
                    p.bitRate = d.avgBitrate
                    switch d.oti {
                    case 0x40, 0x66, 0x67, 0x68:
                        p.codec = "aac"; p.extradata = d.config
                        if let asc = AudioSpecificConfig(d.config) {
                            if asc.objectType == 36 {
                                // MPEG-4 ALS: the real rate and channels are in ALSSpecificConfig ("ALS\0").
                                p.codec = "mp4als"
                                if let i = alsConfigStart(d.config), i + 14 <= d.config.count {
                                    p.sampleRate = Int(be32(d.config, i + 4))
                                    p.channels = Int(UInt16(d.config[i + 12]) << 8 | UInt16(d.config[i + 13])) + 1
                                }
                                break
                            }
                            if asc.sampleRate > 0 { p.sampleRate = asc.outputSampleRate }
                            if asc.outputChannels > 0 { p.channels = asc.outputChannels }
                        }
                    case 0x69, 0x6B: p.codec = "mp3"
                    case 0xA5: p.codec = "ac3"
                    case 0xA6: p.codec = "eac3"
                    case 0xDD: p.codec = "vorbis"; p.extradata = d.config
                    case 0xAD: p.codec = "opus"
                    default: break
                    }
                }
            case ".mp3", "ms\0U": p.codec = "mp3"
            case "samr": p.codec = "amr_nb"; p.channels = 1; p.sampleRate = 8000
            case "sawb": p.codec = "amr_wb"; p.channels = 1; p.sampleRate = 16000
            case "sevc": p.codec = "evrc"; p.channels = 1; p.sampleRate = 8000    // 3GPP2 C.S0050's EVRC and QCELP entries
            case "sqcp": p.codec = "qcelp"; p.channels = 1; p.sampleRate = 8000
            case "ac-3":
                p.codec = "ac3"
                if let dac3 = children["dac3"], dac3.count >= 3 {
                    let v = UInt32(dac3[0]) << 16 | UInt32(dac3[1]) << 8 | UInt32(dac3[2])
                    let acmod = Int((v >> 11) & 7), lfe = Int((v >> 10) & 1)
                    p.channels = [2, 1, 2, 3, 3, 4, 4, 5][acmod] + lfe
                }
            case "ec-3": p.codec = "eac3"
            case "Opus":
                p.codec = "opus"
                if let dops = children["dOps"], dops.count >= 11 {
                    p.extradata = opusHead(fromDOps: dops)
                    p.channels = Int(dops[1])
                }
                p.sampleRate = 48000
            case "fLaC":
                p.codec = "flac"
                // dfLa: version/flags, then FLAC metadata blocks; the decoder takes STREAMINFO's
                // 34 bytes without its block header (as FFmpeg's mov_read_dfla reads them).
                if let dfla = children["dfLa"], dfla.count >= 42, dfla[4] & 0x7F == 0 { p.extradata = Array(dfla[8..<42]) }
            case "alac":
                p.codec = "alac"
                if let a = children["alac"] { p.extradata = [0, 0, 0, UInt8(a.count + 8)] + Array("alac".utf8) + a }
            default:
                if let codec = uncompressedCodec(tag: type, bits: p.bitsPerCodedSample, lpcmFlags: lpcmFlags,
                                                 littleEndian: children["enda"].map { $0.count >= 2 && $0[1] == 1 } ?? false) {
                    p.codec = CodecID(codec)
                }
            }
            // Codecs whose sound description does not state their framing (as FFmpeg sets them).
            switch p.codec {
            case "mace3": framing.samplesPerFrame = 6; framing.bytesPerFrame = 2 * p.channels
            case "mace6": framing.samplesPerFrame = 6; framing.bytesPerFrame = p.channels
            case "adpcm_ima_qt": framing.samplesPerFrame = 64; framing.bytesPerFrame = 34 * p.channels
            case "gsm": framing.samplesPerFrame = 160; framing.bytesPerFrame = 33
            default: break
            }
            if let bits = bitsPerSample(codec: p.codec) {
                p.bitsPerCodedSample = bits
                framing.sampleSize = bits / 8 * p.channels
            }
            if p.codec == "aac", p.extradata.isEmpty { p.codec = "" }
            let reason = p.codec.isUnknown ? "unknown audio sample entry '\(type)'" : (encrypted ? "unsupported: encrypted track" : nil)
            return ParsedSampleEntry(parameters: p, unsupportedReason: reason, encrypted: encrypted, framing: framing)
        default:
            var p = CodecParameters(mediaType: mediaType(handler: handler), codec: "", codecTag: type, sampleEntry: entryBytes)
            switch type {
            case "tx3g": p.codec = "mov_text"
            case "text": p.codec = "mov_text"
            case "c608": p.codec = "eia_608"
            case "wvtt": p.codec = "webvtt"
            case "stpp": p.codec = "ttml"
            case "tmcd": p.codec = ""
            case "mp4s":
                // MPEG-4 systems stream: VobSub when its esds says object type 0xE0 (FFmpeg
                // reads no other); the palette is the extradata (MP4Demuxer makes it the .idx text).
                try r.skip(8)   // reserved, data reference index
                var esds: [UInt8]?
                try r.children { t, c in if t == "esds", esds == nil { esds = Array(c.bytes[c.position..<c.end]) } }
                if let esds, let d = parseESDS(esds), d.oti == DVDSubtitlePalette.objectType {
                    p.codec = "dvd_subtitle"
                    p.extradata = d.config
                }
            default: break
            }
            if p.codec == "dvd_subtitle" {
                return ParsedSampleEntry(parameters: p, unsupportedReason: "a bitmap subtitle track ('mp4s', dvd_subtitle): its packets can be copied, not decoded to text",
                                         encrypted: false)
            }
            // Text tracks are read by SubtitleDecoder (mov_text, webvtt); only decoders of audio
            // and video frames do not apply to them.
            let reason = SubtitleDecoder.textCodecs.contains(p.codec)
                ? "a subtitle track ('\(type)', \(p.codec.rawValue)): read its cues with SubtitleDecoder; it has no audio or video decoder"
                : "no decoder for '\(type)' tracks (\(handler) handler)"
            return ParsedSampleEntry(parameters: p, unsupportedReason: reason, encrypted: false)
        }
    }

    /// The FFmpeg codec name of an uncompressed (or simply framed) QuickTime audio sample
    /// entry, nil for other entries: the codec of the fourcc, then, as FFmpeg's mov demuxer
    /// does, the bit depth of the sound description (sowt/twos of 8, 24 or 32 bits), the
    /// flags of a version 2 `lpcm` entry and an `enda` box (little-endian in24/in32/fl32/fl64).
    static func uncompressedCodec(tag: String, bits: Int, lpcmFlags: UInt32?, littleEndian: Bool) -> String? {
        var codec: String
        switch tag {
        case "twos", "lpcm", "NONE": codec = "pcm_s16be"
        case "sowt": codec = "pcm_s16le"
        case "raw ": codec = "pcm_u8"
        case "in24": codec = "pcm_s24be"
        case "in32": codec = "pcm_s32be"
        case "fl32": codec = "pcm_f32be"
        case "fl64": codec = "pcm_f64be"
        case "ulaw": codec = "pcm_mulaw"
        case "alaw": codec = "pcm_alaw"
        case "ima4": codec = "adpcm_ima_qt"
        case "MAC3": codec = "mace3"
        case "MAC6": codec = "mace6"
        case "agsm": codec = "gsm"
        case "\\x0\\x0\\x0\\x0":   // no fourcc: by bit depth
            codec = bits == 8 ? "pcm_u8" : bits == 16 ? "pcm_s16be" : ""
        default: return nil
        }
        if tag == "lpcm", let flags = lpcmFlags {
            codec = lpcmCodec(bits: bits, flags: flags) ?? ""
        }
        switch codec {
        case "pcm_s8", "pcm_u8":
            if bits == 16 { codec = "pcm_s16be" }
        case "pcm_s16le", "pcm_s16be":
            let le = codec == "pcm_s16le"
            if bits == 8 { codec = "pcm_s8" }
            else if bits == 24 { codec = le ? "pcm_s24le" : "pcm_s24be" }
            else if bits == 32 { codec = le ? "pcm_s32le" : "pcm_s32be" }
        default: break
        }
        if littleEndian {
            switch codec {
            case "pcm_s24be": codec = "pcm_s24le"
            case "pcm_s32be": codec = "pcm_s32le"
            case "pcm_f32be": codec = "pcm_f32le"
            case "pcm_f64be": codec = "pcm_f64le"
            default: break
            }
        }
        return codec
    }

    /// The codec of a version 2 `lpcm` sound description: flags 1 float, 2 big-endian, 4 signed.
    static func lpcmCodec(bits: Int, flags: UInt32) -> String? {
        guard bits > 0, bits <= 64 else { return nil }
        let be = flags & 2 != 0
        if flags & 1 != 0 {
            switch bits {
            case 32: return be ? "pcm_f32be" : "pcm_f32le"
            case 64: return be ? "pcm_f64be" : "pcm_f64le"
            default: return nil
            }
        }
        let bytes = (bits + 7) / 8
        if flags & 4 != 0 {
            switch bytes {
            case 1: return "pcm_s8"
            case 2: return be ? "pcm_s16be" : "pcm_s16le"
            case 3: return be ? "pcm_s24be" : "pcm_s24le"
            case 4: return be ? "pcm_s32be" : "pcm_s32le"
            case 8: return be ? "pcm_s64be" : "pcm_s64le"
            default: return nil
            }
        }
        switch bytes {
        case 1: return "pcm_u8"
        case 2: return be ? "pcm_u16be" : "pcm_u16le"
        case 3: return be ? "pcm_u24be" : "pcm_u24le"
        case 4: return be ? "pcm_u32be" : "pcm_u32le"
        default: return nil
        }
    }

    /// Bits per sample of one channel that a codec implies (FFmpeg's av_get_bits_per_sample)
    /// when it is 8 or more: the uncompressed codecs. nil for the others.
    static func bitsPerSample(codec: CodecID) -> Int? {
        switch codec {
        case "pcm_s8", "pcm_u8", "pcm_mulaw", "pcm_alaw": return 8
        case "pcm_s16le", "pcm_s16be", "pcm_u16le", "pcm_u16be": return 16
        case "pcm_s24le", "pcm_s24be", "pcm_u24le", "pcm_u24be": return 24
        case "pcm_s32le", "pcm_s32be", "pcm_u32le", "pcm_u32be", "pcm_f32le", "pcm_f32be": return 32
        case "pcm_s64le", "pcm_s64be", "pcm_f64le", "pcm_f64be": return 64
        default: return nil
        }
    }

    /// The decoder configuration from an `esds` payload (full box header included).
    static func parseESDS(_ b: [UInt8]) -> (oti: UInt8, config: [UInt8], avgBitrate: Int)? {
        guard b.count > 4, let c = ESDescriptor.parse(Array(b[4...])) else { return nil }
        return (c.objectType, c.specificInfo, c.averageBitRate)
    }

    /// Offset of "ALS\0" (the ALSSpecificConfig) inside an AudioSpecificConfig.
    static func alsConfigStart(_ c: [UInt8]) -> Int? {
        guard c.count >= 4 else { return nil }
        for i in 0...(c.count - 4) where c[i] == 0x41 && c[i + 1] == 0x4C && c[i + 2] == 0x53 && c[i + 3] == 0 { return i }
        return nil
    }

    /// Sample rate and channel count from an MPEG audio (layer I-III) frame header.
    static func mpegAudioHeader(_ b: [UInt8]) -> (sampleRate: Int, channels: Int)? {
        guard b.count >= 4, b[0] == 0xFF, b[1] & 0xE0 == 0xE0 else { return nil }
        let version = Int((b[1] >> 3) & 3)          // 0: 2.5, 2: 2, 3: 1
        let rateIndex = Int((b[2] >> 2) & 3)
        guard version != 1, rateIndex != 3 else { return nil }
        let base = [44100, 48000, 32000][rateIndex]
        let rate = version == 3 ? base : (version == 2 ? base / 2 : base / 4)
        return (rate, (b[3] >> 6) == 3 ? 1 : 2)
    }

    /// Builds an `OpusHead` (RFC 7845) from an ISO BMFF `dOps` payload.
    static func opusHead(fromDOps d: [UInt8]) -> [UInt8] {
        var h = Array("OpusHead".utf8)
        h.append(1)                    // version
        h.append(d[1])                 // channels
        h += [d[3], d[2]]              // pre-skip, little-endian
        h += [d[7], d[6], d[5], d[4]]  // input sample rate
        h += [d[9], d[8]]              // output gain
        h.append(d[10])                // mapping family
        if d[10] != 0, d.count >= 13 + Int(d[1]) { h += d[11..<(13 + Int(d[1]))] }
        return h
    }
}
