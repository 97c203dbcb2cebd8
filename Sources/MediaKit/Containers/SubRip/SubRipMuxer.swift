extension MuxerFormat {
    /// SubRip (`.srt`): one text subtitle track, written as ffmpeg's `srt` muxer writes its
    /// `srt` encoder's cues (``SubtitleFileMuxer``).
    public static let subrip = MuxerFormat(
        name: "srt", description: "SubRip subtitles", extensions: ["srt"], mimeTypes: ["application/x-subrip"],
        codecs: SubtitleFileMuxer.codecs, refusals: SubtitleFileMuxer.refusals,
        make: { path, _ in try SubtitleFileMuxer(path: path, format: .subrip) }, trackLimit: .oneSubtitle)
}
