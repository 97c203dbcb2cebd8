extension MetadataCopyOptions {
    /// Normalised keys not copied: they describe the input file, not the content.
    static let notCopied: Set<String> = ["encoder", "duration"]

    /// The tags, chapters and attachments of `demuxer` that a remux or a transcode gives its
    /// muxer (``Muxer/setMetadata(_:)``), with ``set`` applied: the container's tags, the tags
    /// of each copied track (`tracks`: source index -> the muxer's index), the chapters and the
    /// attachments, as `ffmpeg -map_metadata 0 -map_chapters 0` copies them. Entries libavformat
    /// does not show (an empty FFmpeg key, an empty value) are left out, and so is `encoder`,
    /// which names the tool that wrote the input (ffmpeg replaces it with its own), and
    /// `duration` (a Matroska track's DURATION tag, the input's). A key that libavformat shows
    /// once (``Metadata/ffmpegMerge``: the first of repeated ID3 frames, the last of repeated
    /// Matroska tags) is copied once.
    func muxMetadata(of demuxer: Demuxer, tracks: [(source: Int, output: Int)]) -> MuxMetadata {
        func kept(_ m: Metadata) -> Metadata {
            // A tag editor keeps `encoder`: the file stays the one that tool wrote.
            let dropped = edits == nil ? Self.notCopied : ["duration"]
            var shown = m.filter { !$0.ffmpegKey.isEmpty && !$0.value.isEmpty && !dropped.contains($0.key.lowercased()) }
            // A key that libavformat shows once (the first ID3 frame, the last Matroska tag) is
            // copied once; Vorbis comments keep every value (FFmpeg would join them with ";").
            switch m.ffmpegMerge {
            case .keepFirst:
                var seen = Set<String>()
                shown = shown.filter { seen.insert($0.ffmpegKey.lowercased()).inserted }
            case .replace:
                var seen = Set<String>()
                shown = shown.reversed().filter { seen.insert($0.ffmpegKey.lowercased()).inserted }.reversed()
            case .join:
                break
            }
            return Metadata(shown, ffmpegMerge: m.ffmpegMerge)
        }
        var out = MuxMetadata()
        if copy {
            out.tags = kept(demuxer.metadata)
            let all = demuxer.tracks
            for (source, output) in tracks where source >= 0 && source < all.count {
                let t = kept(all[source].metadata)
                if !t.isEmpty { out.trackTags[output] = t }
            }
            out.chapters = demuxer.chapters
            out.attachments = demuxer.attachments
        }
        if edits?.clear == true {
            out.tags = Metadata(ffmpegMerge: out.tags.ffmpegMerge)
            out.trackTags = [:]
        }
        for (key, value) in set.sorted(by: { $0.key < $1.key }) {
            let k = key.lowercased()
            func matches(_ e: MetadataEntry) -> Bool {
                e.key.lowercased() == k || e.ffmpegKey.lowercased() == k || e.nativeKey.lowercased() == k
            }
            out.tags = Metadata(out.tags.filter { !matches($0) }, ffmpegMerge: out.tags.ffmpegMerge)
            if value.isEmpty {
                for (i, t) in out.trackTags { out.trackTags[i] = Metadata(t.filter { !matches($0) }, ffmpegMerge: t.ffmpegMerge) }
            } else {
                let normalised = MetadataKeys.normalised(key)
                out.tags.append(key: normalised ?? key, nativeKey: key, ffmpegKey: normalised ?? key, value: value)
            }
        }
        if let edits { edits.apply(to: &out) }
        return out
    }
}
