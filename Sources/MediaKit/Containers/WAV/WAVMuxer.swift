extension PCMFileLayout {
    /// WAV (RIFF `WAVE`): the header of ``WAVHeader``. Samples are stored as WAV holds them:
    /// little-endian, 8-bit unsigned. Big-endian samples (AIFF's, QuickTime's `twos` / `in24` /
    /// `fl32`) are byte-swapped and signed 8-bit ones moved to unsigned on the way in, so a
    /// remux from AIFF keeps every sample (ffmpeg refuses that copy: its wav muxer has no
    /// big-endian tags).
    static let wav = PCMFileLayout(
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
            WAVHeader.bytes(codec: stored, rate: rate, channels: channels, mask: mask, dataBytes: UInt32(clamping: dataBytes),
                            frames: UInt32(clamping: dataBytes / Int64(channels * stored.bytes)))
        },
        maxDataBytes: Int64(UInt32.max) - 128,
        withTags: { header, tags in
            // A LIST/INFO chunk before the `data` chunk's header (its last 8 bytes), as FFmpeg's
            // wav muxer writes it, the RIFF size grown by it.
            let info = MetadataWriting.riffInfo(tags)
            guard !info.isEmpty, header.count >= 20 else { return header }
            var h = Array(header[..<(header.count - 8)]) + info + Array(header[(header.count - 8)...])
            var size = UInt32(truncatingIfNeeded: info.count)
            for k in 0..<4 { size &+= UInt32(truncatingIfNeeded: h[4 + k]) << (8 * k) }
            for k in 0..<4 { h[4 + k] = UInt8(truncatingIfNeeded: size >> (8 * k)) }
            return h
        },
        id3Chunk: ("id3 ", false))
}

extension MuxerFormat {
    /// WAV: one PCM track, stored little-endian (``PCMFileLayout/wav``), its tags in a LIST/INFO
    /// chunk; with ``MuxerOptions/writeID3v2`` also an `id3 ` chunk after the samples (an ID3v2
    /// tag with the cover art and chapters, ``MuxerOptions/id3v2Version``), as mutagen and
    /// FFmpeg's wav demuxer read it (FFmpeg 5.1's wav muxer writes none).
    public static let wav = MuxerFormat(name: "wav", description: "WAV", extensions: ["wav"], mimeTypes: ["audio/wav", "audio/x-wav"],
                                        codecs: PCMCodec.plainCodecs, options: [.writeID3v2, .id3v2Version], defaultAudioCodec: "pcm_s16le",
                                        make: { path, o in try PCMFileMuxer.make(path: path, layout: .wav, options: o) })
}
