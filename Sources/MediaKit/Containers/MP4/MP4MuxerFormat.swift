extension MuxerFormat {
    /// MP4 / QuickTime (``MP4Muxer``): progressive, fast-start, fragmented or hybrid
    /// (``MuxerOptions/layout``), with every ``MuxerOptions`` value but
    /// ``MuxerOptions/segmentFormat`` (an HLS presentation's) and the ID3v2 ones.
    public static let mp4 = MuxerFormat(
        name: "mp4", description: "MP4 (ISO BMFF)", extensions: ["mp4", "m4a", "m4v", "m4b", "mov", "3gp"],
        mimeTypes: ["video/mp4", "audio/mp4", "video/quicktime", "video/3gpp"],
        codecs: MP4Muxer.carriedCodecs, refusals: MP4Muxer.refusedCodecs, options: MuxerOptions.Name.allCases.filter { ![.segmentFormat, .id3v2Version, .writeID3v2, .rf64].contains($0) }, defaultAudioCodec: "aac",
        make: { try MP4Muxer(path: $0, options: $1) },
        carriesTrack: { MP4TrackAdapter.isMP4($0) || MP4Muxer.carriedCodecs.contains($0.parameters.codec) },
        layoutOfFile: { try MP4Muxer.layout(of: $0) })
}

extension MP4Muxer {
    /// The layout of an MP4 file: ``MuxLayout/fragmented(seconds:)`` when it has top-level
    /// `moof` boxes (fragments as long as the file's on average: its duration over their
    /// number; 1 s when that is not known), else ``MuxLayout/fastStart`` when its top-level
    /// `moov` comes before its first `mdat` (or it has no `mdat`), else
    /// ``MuxLayout/progressive``. Only the top-level box headers are read (and, for a
    /// fragmented file, its duration).
    static func layout(of source: ByteSource) throws -> MuxLayout {
        var at: Int64 = 0, moovFirst: Bool?, fragments = 0
        let end = source.size
        while at + 8 <= end {
            let h = try source.readUpTo(at: at, count: 16)
            guard h.count >= 8 else { break }
            let type = fourCCString(h[4..<8])
            if moovFirst == nil, type == "moov" || type == "mdat" { moovFirst = type == "moov" }
            if type == "moof" { fragments += 1 }
            var size = Int64(be32(h, 0))
            if size == 1 {
                guard h.count >= 16 else { break }
                size = h[8..<16].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            }
            guard size >= 8 else { break }   // 0 (to the end) or damaged: no further box
            at += size
        }
        if fragments > 0 {
            // The movie's duration, or its longest track's (a fragmented file's mvhd often says 0).
            let demuxer = try? MP4Demuxer(source: source)
            let duration = demuxer.map { d in d.duration ?? d.tracks.map(\.durationSeconds).max() ?? 0 } ?? 0
            let seconds = duration / Double(fragments)
            return .fragmented(seconds: seconds.isFinite && seconds > 0 ? seconds : 1)
        }
        return moovFirst == false ? .progressive : .fastStart
    }
}

extension MP4Muxer {
    /// Starts a file that ``finish()`` will move to `path`, with the catalogue's options
    /// (``MuxerOptions``): a nil ``MuxerOptions/timeScale`` leaves the movie time scale to the
    /// muxer (1000, or an encoded track's rate, or the one scale of adapted tracks' edit lists).
    /// - Throws: as ``init(path:options:)``.
    public convenience init(path: String, options: MuxerOptions) throws {
        var o = Options(layout: options.layout, movieTimeScale: options.timeScale ?? MuxerOptions.defaultTimeScale,
                        chunkSeconds: options.chunkSeconds ?? MuxerOptions.defaultChunkSeconds,
                        reservedMoovBytes: options.reservedIndexBytes, writeMfra: options.writeFragmentIndex)
        o.userData = options.userData
        try self.init(path: path, options: o)
        if options.timeScale == nil { leaveMovieTimeScale() }
    }
}
