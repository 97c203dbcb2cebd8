extension PCMFileLayout {
    /// WAV (RIFF `WAVE`): the header of ``WAVHeader``. Samples are stored as WAV holds them:
    /// little-endian, 8-bit unsigned. Big-endian samples (AIFF's, QuickTime's `twos` / `in24` /
    /// `fl32`) are byte-swapped and signed 8-bit ones moved to unsigned on the way in, so a
    /// remux from AIFF keeps every sample (ffmpeg refuses that copy: its wav muxer has no
    /// big-endian tags). `rf64`: when the file is RF64 (``WAVHeader/bytes(codec:rate:channels:mask:dataBytes:frames:rf64:limit:)``;
    /// `limit`, the RIFF size above which ``MuxerOptions/RF64/auto`` turns to RF64, is lowered
    /// only by tests).
    static func wavLayout(rf64: MuxerOptions.RF64 = .never, limit: Int64 = Int64(UInt32.max)) -> PCMFileLayout {
        PCMFileLayout(
            name: "WAV",
            storage: { codec in
                var stored = codec.with(bigEndian: false)
                if stored.bytes == 1, stored.kind == .signed { stored = stored.with(kind: .unsigned) }
                return WAVHeader.stores(stored) ? stored : nil
            },
            refusal: { codec, rate, channels in
                WAVHeader.holds(rate: rate, channels: channels, bytesPerSample: codec.bytes)
                    ? nil : "1 to 65535 channels, a rate and bytes per second within 32 bits"
            },
            header: { stored, rate, channels, mask, dataBytes in
                WAVHeader.bytes(codec: stored, rate: rate, channels: channels, mask: mask, dataBytes: dataBytes,
                                frames: dataBytes / Int64(channels * stored.bytes), rf64: rf64, limit: limit)
            },
            // RF64's sizes hold 64 bits: the limit is the disk's.
            maxDataBytes: rf64 == .never ? Int64(UInt32.max) - 128 : Int64.max / 2,
            withTags: { header, tags in
                // A LIST/INFO chunk before the `data` chunk's header (its last 8 bytes), as FFmpeg's
                // wav muxer writes it, the RIFF size grown by it.
                let info = MetadataWriting.riffInfo(tags)
                guard !info.isEmpty, header.count >= 20 else { return header }
                var h = Array(header[..<(header.count - 8)]) + info + Array(header[(header.count - 8)...])
                _ = PCMFileLayout.growFileSize(&h, by: Int64(info.count), bigEndian: false)
                return h
            },
            id3Chunk: ("id3 ", false))
    }
}

extension MuxerFormat {
    /// WAV: one PCM track, stored little-endian (``PCMFileLayout/wavLayout(rf64:limit:)``), RIFF or
    /// RF64 as ``MuxerOptions/rf64`` asks, its tags in a LIST/INFO
    /// chunk; with ``MuxerOptions/writeID3v2`` also an `id3 ` chunk after the samples (an ID3v2
    /// tag with the cover art and chapters, ``MuxerOptions/id3v2Version``), as mutagen and
    /// FFmpeg's wav demuxer read it (FFmpeg 5.1's wav muxer writes none).
    public static let wav = MuxerFormat(name: "wav", description: "WAV", extensions: ["wav"], mimeTypes: ["audio/wav", "audio/x-wav"],
                                        codecs: PCMCodec.plainCodecs, options: [.writeID3v2, .id3v2Version, .rf64], defaultAudioCodec: "pcm_s16le",
                                        make: { path, o in try PCMFileMuxer.make(path: path, layout: .wavLayout(rf64: o.rf64), options: o) })
}
