/// The codec of a CAF audio description, as FFmpeg names it (libavformat/caf.c
/// `ff_codec_caf_tags`, and for `lpcm` the format flags and bits per channel as
/// `ff_mov_get_lpcm_codec_id` reads them), and the description MediaKit writes for a codec.
enum CAFCodec {
    /// FFmpeg's table: format ID -> codec, in its order.
    static let formatIDs: [(id: [UInt8], codec: CodecID)] = [
        (Array("aac ".utf8), "aac"), (Array("aacl".utf8), "aac"), (Array("ac-3".utf8), "ac3"), (Array("ima4".utf8), "adpcm_ima_qt"),
        ([0x6D, 0x73, 0, 17], "adpcm_ima_wav"), ([0x6D, 0x73, 0, 2], "adpcm_ms"), (Array("alac".utf8), "alac"), (Array("samr".utf8), "amr_nb"),
        (Array("agsm".utf8), "gsm"), ([0x6D, 0x73, 0, 0x31], "gsm_ms"), (Array("ilbc".utf8), "ilbc"), (Array("flac".utf8), "flac"),
        (Array("MAC3".utf8), "mace3"), (Array("MAC6".utf8), "mace6"), (Array(".mp1".utf8), "mp1"), (Array(".mp2".utf8), "mp2"),
        (Array(".mp3".utf8), "mp3"), ([0x6D, 0x73, 0, 0x55], "mp3"), (Array("opus".utf8), "opus"), (Array("alaw".utf8), "pcm_alaw"),
        (Array("ulaw".utf8), "pcm_mulaw"), (Array("Qclp".utf8), "qcelp"), (Array("QDM2".utf8), "qdm2"), (Array("QDMC".utf8), "qdmc"),
    ]

    /// The codec `desc` names; ``CodecID/unknown`` for a format ID FFmpeg's table does not list,
    /// or linear PCM of a width no PCM codec has.
    static func codec(of d: CAFChunks.Description) -> CodecID {
        guard d.formatID == Array("lpcm".utf8) else {
            return formatIDs.first { $0.id == d.formatID }?.codec ?? .unknown
        }
        let little = d.formatFlags & CAFChunks.Description.littleEndian != 0
        let order = little ? "le" : "be"
        let bits = Int(truncatingIfNeeded: d.bitsPerChannel)
        if d.formatFlags & CAFChunks.Description.float != 0 {
            return bits == 32 || bits == 64 ? CodecID("pcm_f\(bits)\(order)") : .unknown
        }
        // Signed integer in whole bytes (a 20-bit sample is stored in 3), as FFmpeg reads it.
        switch (bits + 7) / 8 {
        case 1: return "pcm_s8"
        case 2, 3, 4, 8: return CodecID("pcm_s\((bits + 7) / 8 * 8)\(order)")
        default: return .unknown
        }
    }

    /// The codecs the CAF writer takes.
    static let written: [CodecID] = ["aac", "alac", "flac", "opus"] + PCMCodec.plainCodecs

    /// The `desc` of a stream of codec `p.codec` (`framesPerPacket` filled in later for the
    /// packetized codecs when it is constant), and the PCM storage of a PCM codec (`pcm_u8` is
    /// stored as `pcm_s8`: CAF's linear PCM is signed). nil for a codec not in ``written``.
    static func description(for p: CodecParameters) -> (desc: CAFChunks.Description, pcm: (source: PCMCodec, stored: PCMCodec)?)? {
        let rate = Double(p.sampleRate), channels = UInt32(clamping: p.channels)
        if let source = PCMCodec(p.codec), PCMCodec.plainCodecs.contains(source.codec) {
            let stored = source.kind == .unsigned ? source.with(kind: .signed) : source
            let bytes = UInt32(clamping: stored.bytes * p.channels)
            switch stored.kind {
            case .alaw, .mulaw:
                return (CAFChunks.Description(sampleRate: rate, formatID: stored.kind == .alaw ? "alaw" : "ulaw", formatFlags: 0,
                                              bytesPerPacket: bytes, framesPerPacket: 1, channels: channels, bitsPerChannel: 8), (source, stored))
            case .signed, .unsigned, .ieeeFloat:
                let flags = (stored.kind == .ieeeFloat ? CAFChunks.Description.float : 0)
                    | (stored.bigEndian || stored.bytes == 1 ? 0 : CAFChunks.Description.littleEndian)
                return (CAFChunks.Description(sampleRate: rate, formatID: "lpcm", formatFlags: flags, bytesPerPacket: bytes,
                                              framesPerPacket: 1, channels: channels, bitsPerChannel: UInt32(clamping: stored.bits)), (source, stored))
            }
        }
        switch p.codec {
        case "aac":
            return (CAFChunks.Description(sampleRate: rate, formatID: "aac ", formatFlags: 0, bytesPerPacket: 0, framesPerPacket: 0,
                                          channels: channels, bitsPerChannel: 0), nil)
        case "alac":
            // Apple's flag for the source bit depth (kAppleLosslessFormatFlag_16/20/24/32BitSourceData).
            let depth = p.extradata.count >= 36 ? Int(truncatingIfNeeded: p.extradata[17]) : 0
            let flag: UInt32 = [16: 1, 20: 2, 24: 3, 32: 4][depth] ?? 0
            return (CAFChunks.Description(sampleRate: rate, formatID: "alac", formatFlags: flag, bytesPerPacket: 0, framesPerPacket: 0,
                                          channels: channels, bitsPerChannel: 0), nil)
        case "flac", "opus":
            return (CAFChunks.Description(sampleRate: rate, formatID: p.codec.rawValue, formatFlags: 0, bytesPerPacket: 0, framesPerPacket: 0,
                                          channels: channels, bitsPerChannel: 0), nil)
        default:
            return nil
        }
    }

    /// The magic cookie (`kuki`) MediaKit writes for `p`, nil when it writes none.
    /// - AAC: the ES_Descriptor as Apple writes it (no box header; lengths in four bytes, ES_ID
    ///   0), holding the AudioSpecificConfig.
    /// - ALAC: the 24-byte ALACSpecificConfig (Apple's "new" cookie), from the 36-byte `alac`
    ///   atom MediaKit keeps as extradata (FFmpeg's form).
    /// - FLAC: a `dfLa` box (version 0) holding STREAMINFO as the last metadata block; none
    ///   without a STREAMINFO (a copy of FFmpeg's CAF, which has none: FLAC frames describe themselves).
    /// - Opus: none (the layout of Apple's Opus cookie is not public; FFmpeg writes none either).
    static func cookie(for p: CodecParameters) -> [UInt8]? {
        switch p.codec {
        case "aac" where !p.extradata.isEmpty:
            return ESDescriptor.build(objectType: 0x40, specificInfo: p.extradata, bitRate: p.bitRate, esID: 0)
        case "alac" where p.extradata.count >= 36 && p.extradata[4..<8].elementsEqual(Array("alac".utf8)):
            return Array(p.extradata[12..<36])
        case "flac" where p.extradata.count == 34:
            return CAFChunks.put32(8 + 4 + 4 + 34) + Array("dfLa".utf8) + [0, 0, 0, 0] + CAFChunks.put32(0x8000_0000 | 34) + p.extradata
        default:
            return nil
        }
    }

    /// The codec configuration (extradata, in MediaKit's / FFmpeg's form) from a magic cookie,
    /// or nil with why the cookie cannot be read.
    static func extradata(codec: CodecID, cookie k: [UInt8]) -> Result<[UInt8], CookieProblem> {
        switch codec {
        case "aac":
            // Apple writes the ES_Descriptor alone; an `esds` payload (4 bytes of version and
            // flags first, as FFmpeg's reader expects) is taken too.
            let body = k.first == 3 ? k : (k.count > 4 && k[0..<4].allSatisfy { $0 == 0 } ? Array(k[4...]) : k)
            guard let c = ESDescriptor.parse(body), !c.specificInfo.isEmpty else { return .failure(.invalid("no AudioSpecificConfig in its ES descriptor")) }
            return .success(c.specificInfo)
        case "alac":
            // Old cookies wrap the config in `frma` and `alac` atoms; new ones are the 24-byte
            // ALACSpecificConfig. Both become the 36-byte atom FFmpeg's decoder takes.
            if k.count >= 48, k[4..<12].elementsEqual(Array("frmaalac".utf8)) { return .success(Array(k[12..<48])) }
            guard k.count >= 24 else { return .failure(.invalid("\(k.count) bytes; an ALAC cookie has at least 24")) }
            return .success(CAFChunks.put32(36) + Array("alac".utf8) + [0, 0, 0, 0] + k[0..<24])
        case "flac":
            // A dfLa box: size, "dfLa", version and flags, then STREAMINFO as the first block.
            guard k.count >= 16 + 34, k[4..<8].elementsEqual(Array("dfLa".utf8)), k[8] == 0, k[12] & 0x7F == 0,
                  Int(truncatingIfNeeded: k[13]) << 16 | Int(truncatingIfNeeded: k[14]) << 8 | Int(truncatingIfNeeded: k[15]) == 34 else {
                return .failure(.invalid("not a dfLa box with STREAMINFO first"))
            }
            return .success(Array(k[16..<50]))
        case "opus":
            // An OpusHead when a writer put one; Apple's own layout is not public (FFmpeg
            // ignores the cookie): mono and stereo decode without one.
            return .success(k.starts(with: Array("OpusHead".utf8)) ? k : [])
        default:
            return .success(k)
        }
    }

    /// Why a magic cookie was not read.
    enum CookieProblem: Error, Equatable {
        case invalid(String)
    }
}
