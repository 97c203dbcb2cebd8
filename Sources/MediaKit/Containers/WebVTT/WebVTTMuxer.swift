extension MuxerFormat {
    /// WebVTT (`.vtt`): one text subtitle track, written as ffmpeg's `webvtt` muxer writes its
    /// `webvtt` encoder's cues (``SubtitleFileMuxer``).
    public static let webvtt = MuxerFormat(
        name: "webvtt", description: "WebVTT subtitles", extensions: ["vtt"], mimeTypes: ["text/vtt"],
        codecs: SubtitleFileMuxer.codecs, refusals: SubtitleFileMuxer.refusals,
        make: { path, _ in try SubtitleFileMuxer(path: path, format: .webvtt) }, trackLimit: .oneSubtitle)
}
