/// What a muxer is given to write besides the packets: the container's tags, each track's tags,
/// chapters, attached files (cover art, fonts), and markers and instrument settings (an AIFF
/// file's MARK and INST chunks). A muxer writes what its container can hold (see
/// docs/metadata.md, "Writing") and leaves out the rest.
public struct MuxMetadata: Sendable, Hashable {
    /// The container's tags.
    public var tags: Metadata
    /// Tags by the muxer's track index (a value `addTrack` returned).
    public var trackTags: [Int: Metadata]
    /// Chapters, in start order.
    public var chapters: [Chapter]
    /// Attached files: pictures (``Attachment/isPicture``) and other files.
    public var attachments: [Attachment]
    /// Named places in the sound, in sample frames of the file's one audio track (only AIFF
    /// writes them: a `MARK` chunk).
    public var markers: [Marker]
    /// How a sampler plays the sound (only AIFF writes it: an `INST` chunk); its loops name
    /// ``markers`` by id.
    public var instrument: Instrument?

    /// Metadata to write; every part empty by default.
    public init(tags: Metadata = Metadata(), trackTags: [Int: Metadata] = [:], chapters: [Chapter] = [], attachments: [Attachment] = [],
                markers: [Marker] = [], instrument: Instrument? = nil) {
        self.tags = tags
        self.trackTags = trackTags
        self.chapters = chapters
        self.attachments = attachments
        self.markers = markers
        self.instrument = instrument
    }

    /// True when there are no tags, chapters or attachments to write (markers and instrument
    /// settings, which only AIFF holds, are not counted: a muxer that cannot hold them has
    /// nothing to do for them).
    public var isEmpty: Bool {
        tags.isEmpty && trackTags.values.allSatisfy(\.isEmpty) && chapters.isEmpty && attachments.isEmpty
    }

    /// This metadata for the sound resampled from `sourceRate` to `rate` Hz: each marker's
    /// frame scaled to the new rate (rounded to the nearest frame), as the loops' frames.
    func resampled(from sourceRate: Int, to rate: Int) -> MuxMetadata {
        guard sourceRate > 0, rate > 0, sourceRate != rate else { return self }
        func scaled(_ frame: Int64) -> Int64 {
            let (product, overflow) = frame.multipliedReportingOverflow(by: Int64(rate))
            return overflow ? Int64((Double(frame) * Double(rate) / Double(sourceRate)).rounded())
                : (product + Int64(sourceRate) / 2) / Int64(sourceRate)
        }
        var out = self
        out.markers = markers.map { Marker(id: $0.id, frame: scaled($0.frame), name: $0.name) }
        if var i = instrument {
            for loop in [\Instrument.sustainLoop, \Instrument.releaseLoop] {
                i[keyPath: loop].beginFrame = i[keyPath: loop].beginFrame.map(scaled)
                i[keyPath: loop].endFrame = i[keyPath: loop].endFrame.map(scaled)
            }
            out.instrument = i
        }
        return out
    }

    /// The tags of a file that holds one list (FLAC, MP3, WAV, an Ogg stream's comments): the
    /// container's tags, then those of `track` whose ``MetadataEntry/ffmpegKey`` (in any case)
    /// the container's do not have; entries with an empty key or value left out, and the track's
    /// structure fields (``MetadataEntry/describesTrack``: an MP4 track's language and handler
    /// name are not tags of an MP3 made from it, as FFmpeg does not write them either) unless
    /// `withTrackFields`: an Ogg stream's comments are its stream's tags, where FFmpeg writes them.
    func combined(track: Int?, withTrackFields: Bool = false) -> [MetadataEntry] {
        var out = tags.filter { !$0.ffmpegKey.isEmpty && !$0.value.isEmpty }
        let have = Set(out.map { $0.ffmpegKey.lowercased() })
        if let track, let t = trackTags[track] {
            out += t.filter { (withTrackFields || !$0.describesTrack) && !$0.ffmpegKey.isEmpty && !$0.value.isEmpty && !have.contains($0.ffmpegKey.lowercased()) }
        }
        return out
    }

    /// The pictures among the attachments (cover art first, as they came).
    var pictures: [Attachment] { attachments.filter(\.isPicture) }
}

extension Chapter {
    /// The title libavformat shows for the chapter (an ID3 CHAP's element id when it has no
    /// TIT2), or nil.
    var shownTitle: String? {
        metadata.ffmpegTags.last { $0.key.lowercased() == "title" }?.value ?? title
    }
}

/// How a remux or a transcode treats the input's tags, chapters and attachments.
public struct MetadataCopyOptions: Sendable, Hashable {
    /// Copy the input's container and track tags, chapters and attachments into what the output
    /// can hold (as `ffmpeg -map_metadata 0 -map_chapters 0`). Default: true; false is
    /// `--no-metadata` (then only ``set`` is written).
    public var copy = true
    /// Container tags set (`--metadata KEY=VALUE`), applied after the copy in key order: the
    /// entries with that key (normalised or FFmpeg's, in any case) are replaced; an empty value
    /// removes them.
    public var set: [String: String] = [:]
    /// A tag editor's edits (``TagEditor``), applied with ``set``: all tags cleared before it,
    /// pictures removed or a front cover put in after it; nil: none.
    var edits: TagEdits?

    /// Copy everything, set nothing.
    public init(copy: Bool = true, set: [String: String] = [:]) {
        self.copy = copy
        self.set = set
    }

    /// Options from the command line: `copy` false for `--no-metadata`, and each
    /// `--metadata KEY=VALUE` (split at the first "="; an empty value removes the tag; a key
    /// given twice keeps the last value).
    /// - Throws: `.invalidArgument` naming a setting without "=" or with an empty key.
    public init(copy: Bool, settings: [String]) throws {
        self.copy = copy
        for setting in settings {
            guard let eq = setting.firstIndex(of: "="), eq != setting.startIndex else {
                throw MediaError(.invalidArgument, "--metadata takes KEY=VALUE (an empty VALUE removes the tag), not \"\(setting)\"")
            }
            set[String(setting[..<eq])] = String(setting[setting.index(after: eq)...])
        }
    }
}
