extension MetadataCopyOptions {
    /// The tags, chapters and attachments of `demuxer` that a remux or a transcode gives its
    /// muxer (``Muxer/setMetadata(_:)``), with ``set`` applied: the container's tags, the tags
    /// of each copied track (`tracks`: source index -> the muxer's index), the chapters and the
    /// attachments, as `ffmpeg -map_metadata 0 -map_chapters 0` copies them; and the markers
    /// and instrument settings (which ffmpeg drops) when an audio track is kept. Entries libavformat
    /// does not show (an empty FFmpeg key, an empty value) are left out, and so is `encoder`,
    /// which names the tool that wrote the input (ffmpeg replaces it with its own), and
    /// `duration` (a Matroska track's DURATION tag, the input's). Tags set and removed (and
    /// `encoder`) leave the others in the order FFmpeg's dictionary leaves them
    /// (``removing(_:where:)``). A key that libavformat shows
    /// once (``Metadata/ffmpegMerge``: the first of repeated ID3 frames, the last of repeated
    /// Matroska tags) is copied once.
    func muxMetadata(of demuxer: Demuxer, tracks: [(source: Int, output: Int)]) -> MuxMetadata {
        func kept(_ m: Metadata) -> Metadata {
            var shown = m.filter { !$0.ffmpegKey.isEmpty && !$0.value.isEmpty && $0.key.lowercased() != "duration" }
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
            // Places in the sound: kept with the sound (the source's audio track).
            if tracks.contains(where: { $0.source >= 0 && $0.source < all.count && all[$0.source].parameters.mediaType == .audio }) {
                out.markers = demuxer.markers
                out.instrument = demuxer.instrument
            }
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
            out.tags = Self.removing(out.tags, where: matches)
            if value.isEmpty {
                for (i, t) in out.trackTags { out.trackTags[i] = Metadata(t.filter { !matches($0) }, ffmpegMerge: t.ffmpegMerge) }
            } else {
                // The key as given is libavformat's (ffmpeg -metadata stores it so: "author"
                // stays "author" though MediaKit reads it as the artist).
                let normalised = MetadataKeys.normalised(key)
                out.tags.append(key: normalised ?? key, nativeKey: key, ffmpegKey: normalised == nil || normalised == k ? normalised ?? key : key, value: value)
            }
        }
        if let edits {
            // A tag editor keeps `encoder`: the file stays the one that tool wrote.
            edits.apply(to: &out)
        } else {
            // ffmpeg replaces the input's `encoder` (or with -fflags +bitexact removes it) after
            // the -metadata settings.
            out.tags = Self.removing(out.tags) { $0.key.lowercased() == "encoder" }
            for (i, t) in out.trackTags { out.trackTags[i] = Self.removing(t) { $0.key.lowercased() == "encoder" } }
        }
        return out
    }

    /// `m` without the entries `matches` picks, removed as libavformat's AVDictionary removes a
    /// key it sets again or to nothing (`av_dict_set`): the last entry moves into the freed
    /// place, so the order of what is written follows FFmpeg's (an ID3v2 tag's frames, a CAF
    /// `info` chunk's pairs are in its dictionary's order).
    static func removing(_ m: Metadata, where matches: (MetadataEntry) -> Bool) -> Metadata {
        var entries = Array(m)
        var i = 0
        while i < entries.count {
            guard matches(entries[i]) else { i += 1; continue }
            let last = entries.removeLast()
            if i < entries.count { entries[i] = last }
        }
        return Metadata(entries, ffmpegMerge: m.ffmpegMerge)
    }
}
