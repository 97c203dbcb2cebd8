import Foundation

/// One tag: a value under three names — the normalised key of MediaKit's model, the key as the
/// container stores it, and the key FFmpeg's libavformat gives it (what `ffprobe` prints).
public struct MetadataEntry: Sendable, Hashable {
    /// The normalised key ("title", "artist", "album_artist", "track", ... see docs/metadata.md);
    /// a key with no normalised name keeps its native name here, verbatim.
    public var key: String
    /// The key as the container stores it: an ID3 frame id ("TIT2", or the TXXX description),
    /// an iTunes atom name ("©nam", or "----:mean:name"), a Vorbis comment field name as
    /// written ("TITLE"), a Matroska SimpleTag name, a RIFF INFO id ("INAM") ...
    public var nativeKey: String
    /// The key libavformat (FFmpeg 5.1) gives this tag: ffprobe's `tags` name. Some formats keep
    /// native names there (Vorbis comments, Matroska), others map them (ID3, iTunes atoms, INFO).
    public var ffmpegKey: String
    /// The value as text (numbers as written: "3/12" for a track with its total).
    public var value: String
    /// True for a fact of the track's own structure that libavformat shows among the stream
    /// tags (an MP4 track's `mdhd` language, `hdlr` name, sample entry vendor; a Matroska
    /// TrackEntry's Name and Language; an MPEG-TS language descriptor): a muxer writes it into
    /// its own track fields or not at all, never into a file's single tag list (FFmpeg's
    /// muxers do not either).
    var describesTrack = false

    /// Creates an entry; `ffmpegKey` defaults to `nativeKey`.
    public init(key: String, nativeKey: String, ffmpegKey: String? = nil, value: String) {
        self.key = key
        self.nativeKey = nativeKey
        self.ffmpegKey = ffmpegKey ?? nativeKey
        self.value = value
    }
}

/// Container-level or track-level tags: an ordered list of entries, in the order the file
/// stores them, each with its normalised and native key. Keys match in any case.
public struct Metadata: Sendable, Hashable, RandomAccessCollection {
    /// How libavformat merges a key that comes twice (for ``ffmpegTags``).
    public enum FFmpegMerge: Sendable, Hashable {
        /// The last value replaces the earlier one and moves to the end (`av_dict_set(.., 0)`:
        /// Matroska, iTunes atoms, RIFF INFO).
        case replace
        /// The first value stays (`AV_DICT_DONT_OVERWRITE`: ID3v2 frames).
        case keepFirst
        /// The values are joined with this separator, under the last spelling of the key
        /// (`AV_DICT_APPEND`: Vorbis comments, joined with ";").
        case join(String)
    }

    /// The entries, in file order.
    public private(set) var entries: [MetadataEntry]
    /// How ``ffmpegTags`` merges repeated keys. Default: `.replace`.
    public var ffmpegMerge: FFmpegMerge

    /// No tags.
    public init(ffmpegMerge: FFmpegMerge = .replace) {
        entries = []
        self.ffmpegMerge = ffmpegMerge
    }

    /// Tags from entries.
    public init(_ entries: [MetadataEntry], ffmpegMerge: FFmpegMerge = .replace) {
        self.entries = entries
        self.ffmpegMerge = ffmpegMerge
    }

    /// The first index (0).
    public var startIndex: Int { entries.startIndex }
    /// One past the last entry.
    public var endIndex: Int { entries.endIndex }
    /// The entry at `position`.
    public subscript(position: Int) -> MetadataEntry { entries[position] }

    /// The first value whose normalised key is `key` (in any case), or nil.
    public subscript(key: String) -> String? {
        let k = key.lowercased()
        return entries.first { $0.key.lowercased() == k }?.value
    }

    /// Every value whose normalised key is `key` (in any case), in file order.
    public func values(for key: String) -> [String] {
        let k = key.lowercased()
        return entries.filter { $0.key.lowercased() == k }.map(\.value)
    }

    /// Appends an entry.
    public mutating func append(_ entry: MetadataEntry) { entries.append(entry) }

    /// Appends a fact of the track's structure (``MetadataEntry/describesTrack``).
    mutating func appendTrackField(key: String, nativeKey: String, ffmpegKey: String? = nil, value: String) {
        var e = MetadataEntry(key: key, nativeKey: nativeKey, ffmpegKey: ffmpegKey, value: value)
        e.describesTrack = true
        entries.append(e)
    }

    /// Appends a tag; `ffmpegKey` defaults to `nativeKey`.
    public mutating func append(key: String, nativeKey: String, ffmpegKey: String? = nil, value: String) {
        entries.append(MetadataEntry(key: key, nativeKey: nativeKey, ffmpegKey: ffmpegKey, value: value))
    }

    /// The tags as libavformat's dictionary holds them (ffprobe's `tags`): keyed by
    /// ``MetadataEntry/ffmpegKey``, repeated keys (in any case) merged by ``ffmpegMerge``, empty
    /// keys and values left out, in the dictionary's order.
    public var ffmpegTags: [(key: String, value: String)] {
        let shown = entries.filter { !$0.ffmpegKey.isEmpty && !$0.value.isEmpty }
        guard case .join(let separator) = ffmpegMerge else {
            return Self.dictionary(shown.map { ($0.ffmpegKey, $0.value) }, join: nil, keepFirst: ffmpegMerge == .keepFirst)
        }
        // Vorbis comments: libavformat joins a repeated field under its native name first, then
        // renames (ALBUMARTIST -> album_artist ...), a renamed key replacing one already there.
        var renames: [String: String] = [:]
        for e in shown { renames[e.nativeKey.lowercased()] = e.ffmpegKey }
        let joined = Self.dictionary(shown.map { ($0.nativeKey, $0.value) }, join: separator, keepFirst: false)
        return Self.dictionary(joined.map { (renames[$0.key.lowercased()] ?? $0.key, $0.value) }, join: nil, keepFirst: false)
    }

    /// libavformat's AVDictionary fed `pairs` in order: keys match in any case; a key set again
    /// is kept (`keepFirst`), joined with `join`, or replaced; a changed entry moves to the end
    /// (removing one moves the last entry into its place).
    private static func dictionary(_ pairs: [(String, String)], join: String?, keepFirst: Bool) -> [(key: String, value: String)] {
        var out: [(key: String, value: String)] = []
        for (key, value) in pairs {
            let k = key.lowercased()
            guard let i = out.firstIndex(where: { $0.key.lowercased() == k }) else { out.append((key, value)); continue }
            if keepFirst { continue }
            let merged = join.map { out[i].value + $0 + value } ?? value
            out[i] = out[out.count - 1]
            out.removeLast()
            out.append((key, merged))
        }
        return out
    }
}

/// A file attached to a container or a track: cover art (ID3 APIC, FLAC / Vorbis PICTURE, iTunes
/// `covr`) or a Matroska attachment (fonts, pictures).
public struct Attachment: Sendable, Hashable {
    /// The bytes of the attached file.
    public var data: [UInt8]
    /// The MIME type ("image/jpeg"); empty when the container does not say.
    public var mimeType: String
    /// The ID3v2 APIC picture type (3: front cover, 0: other) for a picture; nil for an
    /// attachment that is not declared as a picture (a Matroska font).
    public var pictureType: Int?
    /// The description stored with it (APIC / PICTURE description, Matroska FileDescription).
    public var description: String
    /// The file name (Matroska FileName); empty when the container stores none.
    public var fileName: String
    /// Width and height in pixels when the container states them (FLAC PICTURE), else 0.
    public var width: Int, height: Int

    /// Creates an attachment.
    public init(data: [UInt8], mimeType: String, pictureType: Int? = nil, description: String = "", fileName: String = "",
                width: Int = 0, height: Int = 0) {
        self.data = data
        self.mimeType = mimeType
        self.pictureType = pictureType
        self.description = description
        self.fileName = fileName
        self.width = width
        self.height = height
    }

    /// True for cover art and other pictures (a picture type is set).
    public var isPicture: Bool { pictureType != nil }

    /// The ID3v2 names of the APIC picture types (id3.org ID3v2.4 frames section 4.14), as
    /// FFmpeg's `ff_id3v2_picture_types` spells them: ffprobe's `comment` tag of a cover stream.
    public static let pictureTypeNames = [
        "Other", "32x32 pixels 'file icon'", "Other file icon", "Cover (front)", "Cover (back)", "Leaflet page",
        "Media (e.g. label side of CD)", "Lead artist/lead performer/soloist", "Artist/performer", "Conductor",
        "Band/Orchestra", "Composer", "Lyricist/text writer", "Recording Location", "During recording",
        "During performance", "Movie/video screen capture", "A bright coloured fish", "Illustration",
        "Band/artist logotype", "Publisher/Studio logotype",
    ]
}

/// A chapter: a span of the presentation with its own tags (its title among them).
public struct Chapter: Sendable, Hashable {
    /// The container's identifier (Matroska ChapterUID, the ID3 CHAP element's position, ...).
    public var id: Int64
    /// Seconds per tick of ``start`` and ``end``: times are exact rationals, `start * timeBase`.
    public var timeBase: Rational
    /// Start, in ``timeBase`` ticks.
    public var start: Int64
    /// End, in ``timeBase`` ticks (the next chapter's start or the duration when the container
    /// states none, as FFmpeg fills it).
    public var end: Int64
    /// The chapter's tags; ``title`` is `metadata["title"]`.
    public var metadata: Metadata

    /// Creates a chapter.
    public init(id: Int64, timeBase: Rational, start: Int64, end: Int64, metadata: Metadata = Metadata()) {
        self.id = id
        self.timeBase = timeBase
        self.start = start
        self.end = end
        self.metadata = metadata
    }

    /// The title, if the chapter has one.
    public var title: String? { metadata["title"] }
    /// Start in seconds.
    public var startSeconds: Double { Double(start) * timeBase.doubleValue }
    /// End in seconds.
    public var endSeconds: Double { Double(end) * timeBase.doubleValue }
}

/// A named place in the sound, as an AIFF file's `MARK` chunk holds them (AudioToolbox's
/// `AudioFileMarker`, `kAudioFilePropertyMarkerList`). FFmpeg does not read them.
public struct Marker: Sendable, Hashable {
    /// The file's identifier for the marker (AIFF's MarkerId, which the `INST` chunk's sustain
    /// and release loops name).
    public var id: Int
    /// The position, in sample frames from the start of the sound: the marker sits before
    /// this frame (0: at the start).
    public var frame: Int64
    /// The name ("" when none); AIFF's Pascal string read as UTF-8 (ASCII in practice, a byte
    /// that is not UTF-8 becomes U+FFFD).
    public var name: String

    /// Creates a marker.
    public init(id: Int, frame: Int64, name: String) {
        self.id = id
        self.frame = frame
        self.name = name
    }
}

/// How a sampler plays the sound, as an AIFF file's `INST` chunk says it (Audio IFF 1.3,
/// "Instrument Chunk"; CAF's `inst` chunk holds the same notes and velocities): the key and
/// velocity ranges it answers, its pitch and gain, and two loops between ``Marker``s. FFmpeg
/// does not read it; libsndfile does (`SFC_GET_INSTRUMENT`).
public struct Instrument: Sendable, Hashable {
    /// A loop between two markers: the sustain loop plays while a key is held, the release
    /// loop after it is let go.
    public struct Loop: Sendable, Hashable {
        /// AIFF's play mode: 0 no looping, 1 forward, 2 forward then backward (another value
        /// is kept as the file stores it).
        public var playMode: Int
        /// The id of the marker where the loop begins (a ``Marker/id``).
        public var beginMarker: Int
        /// The id of the marker where the loop ends: the loop plays the frames from the begin
        /// marker's up to (not including) this one's.
        public var endMarker: Int
        /// The begin marker's frame, or nil when the file has no marker with that id.
        public var beginFrame: Int64?
        /// The end marker's frame, or nil when the file has no marker with that id.
        public var endFrame: Int64?

        /// Creates a loop.
        public init(playMode: Int, beginMarker: Int, endMarker: Int, beginFrame: Int64? = nil, endFrame: Int64? = nil) {
            self.playMode = playMode
            self.beginMarker = beginMarker
            self.endMarker = endMarker
            self.beginFrame = beginFrame
            self.endFrame = endFrame
        }
    }

    /// The MIDI note (0-127; 60 is middle C) that plays the sound at its recorded pitch.
    public var baseNote: Int
    /// The pitch shift to apply, in cents (-50 to 50 in a valid file).
    public var detune: Int
    /// The lowest MIDI note the sound is played for.
    public var lowNote: Int
    /// The highest MIDI note the sound is played for.
    public var highNote: Int
    /// The lowest MIDI velocity (1-127) the sound is played for.
    public var lowVelocity: Int
    /// The highest MIDI velocity the sound is played for.
    public var highVelocity: Int
    /// The gain to apply, in decibels.
    public var gain: Int
    /// The loop played while the key is held.
    public var sustainLoop: Loop
    /// The loop played after the key is released.
    public var releaseLoop: Loop

    /// Creates instrument settings.
    public init(baseNote: Int, detune: Int, lowNote: Int, highNote: Int, lowVelocity: Int, highVelocity: Int, gain: Int,
                sustainLoop: Loop, releaseLoop: Loop) {
        self.baseNote = baseNote
        self.detune = detune
        self.lowNote = lowNote
        self.highNote = highNote
        self.lowVelocity = lowVelocity
        self.highVelocity = highVelocity
        self.gain = gain
        self.sustainLoop = sustainLoop
        self.releaseLoop = releaseLoop
    }
}
