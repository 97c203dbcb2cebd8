extension ContainerFormat {
    /// CAF (Apple's Core Audio Format; ``CAFDemuxer``).
    public static let caf = ContainerFormat(
        name: "caf", description: "CAF (Core Audio Format)", extensions: ["caf"], mimeTypes: ["audio/x-caf"],
        probe: { head, _ in
            // "caff" and version 1 (FFmpeg's caf probe: a signature).
            head.count >= 6 && head[0..<4].elementsEqual(Array("caff".utf8)) && head[4] == 0 && head[5] == 1 ? 100 : 0
        },
        makeDemuxer: { try CAFDemuxer(source: $0) })
}

extension MuxerFormat {
    /// CAF: one audio track of AAC, ALAC, FLAC, Opus or PCM, gapless through the packet table
    /// (``CAFMuxer``). A transcode writes pcm_s16be when no codec is named, as ffmpeg does.
    public static let caf = MuxerFormat(name: "caf", description: "CAF (Core Audio Format)", extensions: ["caf"], mimeTypes: ["audio/x-caf"],
                                        codecs: CAFCodec.written, defaultAudioCodec: "pcm_s16be",
                                        make: { path, _ in try CAFMuxer(path: path) })
}
