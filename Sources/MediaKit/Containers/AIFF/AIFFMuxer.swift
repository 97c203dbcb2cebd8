extension PCMFileLayout {
    /// AIFF and AIFF-C, laid out as FFmpeg's aiff muxer lays them out: `FORM`, for AIFF-C an
    /// `FVER` chunk, `COMM` (channels, sample frames, sample size, the rate as an 80-bit float
    /// and for AIFF-C the compression type with an empty name), then `SSND` (offset and block
    /// size 0, the samples).
    ///
    /// Codecs, by FFmpeg's AIFF table (`ff_codec_aiff_tags`): big-endian integer PCM (`pcm_s8`,
    /// `pcm_s16be`, `pcm_s24be`, `pcm_s32be`) as plain AIFF; `pcm_u8` (`raw `), `pcm_f32be`
    /// (`fl32`), `pcm_f64be` (`fl64`), A-law (`alaw`), mu-law (`ulaw`) and `pcm_s16le` (`sowt`)
    /// as AIFF-C. Other little-endian PCM (WAV's 24 and 32-bit integers and floats) is
    /// byte-swapped to its big-endian codec on the way in: the samples are the same, only their
    /// storage changes (ffmpeg refuses that copy into AIFF).
    static let aiff = PCMFileLayout(
        name: "AIFF",
        storage: { codec in
            switch codec.kind {
            case .alaw, .mulaw: return codec
            case .signed where codec.bytes == 2 && !codec.bigEndian: return codec
            case .unsigned: return codec.bytes == 1 ? codec : nil
            default: return codec.with(bigEndian: true)
            }
        },
        refusal: { _, rate, channels in
            rate > 0 && rate <= Int(Int32.max) && (1...32767).contains(channels) ? nil : "1 to 32767 channels, a positive 32-bit rate"
        },
        header: { stored, rate, channels, _, dataBytes in
            func be16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
            func be32(_ v: Int64) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> Int64(24 - 8 * $0)) } }
            let compression: String?
            switch (stored.kind, stored.bytes) {
            case (.alaw, _): compression = "alaw"
            case (.mulaw, _): compression = "ulaw"
            case (.unsigned, _): compression = "raw "
            case (.ieeeFloat, 4): compression = "fl32"
            case (.ieeeFloat, _): compression = "fl64"
            case (.signed, 2) where !stored.bigEndian: compression = "sowt"
            default: compression = nil
            }
            let frames = dataBytes / Int64(channels * stored.bytes)
            var comm = be16(channels) + be32(frames) + be16(stored.bits) + ExtendedFloat.bytes(UInt64(rate))
            var chunks: [UInt8] = []
            if let type = compression {
                chunks += Array("FVER".utf8) + be32(4) + be32(Int64(AIFFDemuxer.aifcVersion1))
                comm += Array(type.utf8) + [0, 0]      // the type and an empty name (its count byte and pad)
            }
            chunks += Array("COMM".utf8) + be32(Int64(comm.count)) + comm
            chunks += Array("SSND".utf8) + be32(8 + dataBytes) + be32(0) + be32(0)
            let formSize = 4 + Int64(chunks.count) + dataBytes + dataBytes % 2
            return Array("FORM".utf8) + be32(formSize) + Array((compression == nil ? "AIFF" : "AIFC").utf8) + chunks
        },
        maxDataBytes: Int64(UInt32.max) - 128)
}

extension MuxerFormat {
    /// AIFF / AIFF-C: one PCM track, stored big-endian or as AIFF-C names it (``PCMFileLayout/aiff``).
    public static let aiff = MuxerFormat(name: "aiff", description: "AIFF / AIFF-C", extensions: ["aiff", "aif", "aifc"],
                                         mimeTypes: ["audio/aiff", "audio/x-aiff"], codecs: PCMCodec.plainCodecs, defaultAudioCodec: "pcm_s16be",
                                         make: { path, _ in try PCMFileMuxer(path: path, layout: .aiff) })
}
