/// One sample waiting to be written (in the current chunk or fragment).
struct PendingSample {
    var data: [UInt8]
    /// For a packet in Annex B form, the NAL units of `data` the sample holds, each written
    /// after its 4-byte length (``AnnexBConversion/sampleUnits(_:track:codec:)``); empty when
    /// `data` is the sample as it is.
    var units: [Range<Int>] = []
    /// Where the bytes are in a source file when `data` is empty (a zero-copy remux).
    var sourceOffset: Int64
    var size: Int
    var dts: Int64
    /// Composition offset as a fragment's `trun` stores it: pts minus the output decode time,
    /// plus the track's ``MuxTrack/compositionShift``.
    var compositionOffset: Int64
    var duration: Int64
    var isKey: Bool
}

/// What the muxer keeps of one track: its description and its compact sample tables.
/// Memory per sample is one stsz entry (4 bytes); runs cost one entry each.
///
/// Uncompressed audio (``pcmFrameSize`` > 0) is written as FFmpeg's mov muxer writes it:
/// its sample tables count PCM frames (stsz: one constant frame size, stts: one entry of
/// duration 1, stsc: frames per chunk) and nothing is kept per packet.
struct MuxTrack {
    var parameters: CodecParameters
    var sampleEntry: [UInt8]
    var handler: String
    /// The `hdlr` name (some players show it as the track's title): a copied track's own
    /// (FFmpeg's `handler_name` tag), else FFmpeg's name for the handler type (``defaultHandlerName(_:)``).
    var handlerName = ""
    var id: Int
    var timeScale: Int64
    /// Ticks of the track time scale per packet timestamp tick (time base numerator).
    var tickMultiplier: Int64
    var language: String
    /// Writes the `mdhd` language as QuickTime's Macintosh code 0 (English), as FFmpeg writes
    /// its chapter track, instead of ``language`` packed as ISO 639-2.
    var macintoshLanguageZero = false
    /// False for a track players should not present on their own (`tkhd` flags 2, in the movie
    /// but not enabled): a chapter track, as FFmpeg writes its QuickTime chapter track, and a
    /// track copied from one that was not default (``Track/isDefault``; the movie still enables
    /// the first of a type none of whose tracks is: ``MovieWriter/enabledTracks(_:)``).
    var isEnabled = true
    /// A chapter track (the muxer's own, or a copied one): never enabled.
    var isChapter = false
    /// Appends a `btrt` box (no buffer size, the average bit rate as the maximum too) to the
    /// sample entry of a progressive `moov`, as FFmpeg's mp4 muxer ends its chapter track's
    /// `text` entry (`mov_write_btrt_tag`); none when the rate is 0 or in fragments.
    var writesBitRateBox = false
    /// MPEG-4 Part 2 video whose `mp4v` entry the muxer made: the esds states the rates
    /// measured when the `moov` is written, followed (with ``writesBitRateBox``) by a `btrt`,
    /// as FFmpeg's mp4 muxer writes them (``SampleEntryWriter/mpeg4Visual(_:trackID:averageBitRate:bitRateBox:)``).
    var measuresMPEG4BitRates = false
    var matrix: [Int32]
    /// The source's edit list (and its movie time scale), nil to generate one.
    var sourceEdits: [EditListEntry]?
    var sourceMovieTimeScale: Int64
    var width: Int
    var height: Int
    /// `tref` entries: type and referenced track IDs.
    var references: [(type: String, ids: [Int])] = []

    // Sample tables.
    var stts: [(count: UInt32, delta: UInt32)] = []
    var ctts: [(count: UInt32, offset: Int32)] = []
    var hasCompositionOffsets = false
    var hasNegativeOffsets = false
    var syncSamples: [UInt32] = []
    var sizes: [UInt32] = []
    var chunks: [(offset: UInt64, samples: UInt32)] = []
    /// Uncompressed audio: bytes per PCM frame, all channels (0 for other tracks).
    var pcmFrameSize = 0
    /// Uncompressed audio: PCM frames written so far.
    var pcmFrames = 0
    /// Samples of the sample tables: PCM frames for uncompressed audio, else packets.
    var sampleCount: Int { pcmFrameSize > 0 ? pcmFrames : sizes.count }

    /// The PCM frames a reader cuts a chunk of uncompressed audio into packets of (FFmpeg's
    /// mov demuxer: 1024). A chunk whose packets before the last are all a multiple of it
    /// reads back as the same packets.
    static let pcmPacketFrames = 1024

    /// Table samples in pending samples `range` (what stsc counts for a chunk of them).
    func tableSamples(_ range: Range<Int>) -> UInt32 {
        guard pcmFrameSize > 0 else { return UInt32(range.count) }
        return UInt32(clamping: pending[range].reduce(0) { $0 + $1.size } / pcmFrameSize)
    }

    /// True when uncompressed audio pending sample `i` must end its chunk (or run): its frame
    /// count is not a multiple of ``pcmPacketFrames``, so a reader would not cut the chunk
    /// where it ends if more followed in the same chunk.
    func endsChunk(_ i: Int) -> Bool {
        pcmFrameSize > 0 && (pending[i].size / pcmFrameSize) % Self.pcmPacketFrames != 0
    }

    // Timing.
    var firstDts: Int64?
    /// Subtracted from decode times so the output's decode times start at 0 (or, when the
    /// first decode time is positive, kept: fragments carry it in tfdt, a progressive file
    /// as an empty edit).
    var origin: Int64 = 0
    var lastDts: Int64 = 0
    var lastDuration: Int64 = 0
    var minComposition: Int64 = .max
    /// Added to pts - dts to give the composition offset the sample tables store: ``origin``,
    /// so that the tables themselves keep the source's presentation times (offsets then go
    /// negative when decode times start below 0), or 0 when the edit list maps the media
    /// back to the source's times instead (``shiftsEarlyStartByEdit``).
    var compositionBase: Int64 = 0
    /// True when decode times start below 0 and the edit list, not negative composition
    /// offsets, carries the shift (see ``MovieWriter/edits(_:movieTimeScale:fragmented:)``).
    var shiftsEarlyStartByEdit: Bool { origin < 0 && compositionBase == 0 }

    /// Whether a track whose first decode time is `firstDts` keeps pts - dts as composition
    /// offsets and gets an edit list that moves the media back by the early start, as FFmpeg's
    /// mov muxer writes it: when decode times start below 0 (B-frames from a container that
    /// stores presentation times, audio with pre-roll), the muxer writes the edit list (the
    /// source has none) and the `moov` comes after the samples (not a fragmented layout,
    /// whose `moov` is written before the first sample). Readers then read the source's decode
    /// times too, not times shifted by the least composition offset.
    static func shiftsEarlyStartByEdit(firstDts: Int64, sourceEdits: [EditListEntry]?, fragmented: Bool) -> Bool {
        firstDts < 0 && !fragmented && (sourceEdits?.isEmpty ?? true)
    }
    /// Fragmented layouts: added to every composition offset a `trun` stores and to the
    /// media time of the fragmented `moov`'s edit list, so that no stored offset is negative
    /// (see ``MP4Muxer/announceTimestamps(track:_:)``). Sample tables (`ctts`) do not have it.
    var compositionShift: Int64 = 0
    /// The latest composition end (decode time + offset + duration) seen: where the
    /// presentation of the media ends.
    var maxCompositionEnd: Int64 = 0
    var presentationEnd: Int64 { max(maxCompositionEnd, totalDuration) }
    var totalDuration: Int64 { lastDts - (firstDts ?? 0) + lastDuration }

    // The current chunk (progressive) or fragment run.
    var pending: [PendingSample] = []
    var pendingBytes = 0

    mutating func appendStts(_ delta: Int64) {
        let d = UInt32(clamping: max(0, delta))
        if let last = stts.last, last.delta == d, last.count < UInt32.max { stts[stts.count - 1].count += 1 } else { stts.append((1, d)) }
    }

    mutating func appendCtts(_ offset: Int64) {
        let o = Int32(clamping: offset)
        if o != 0 { hasCompositionOffsets = true }
        if o < 0 { hasNegativeOffsets = true }
        if let last = ctts.last, last.offset == o, last.count < UInt32.max { ctts[ctts.count - 1].count += 1 } else { ctts.append((1, o)) }
    }
}

extension MuxTrack {
    /// The `hdlr` name FFmpeg's mov muxer writes for a handler type when the track names none
    /// (`mov_write_hdlr_tag`): "VideoHandler", "SoundHandler", "SubtitleHandler" ...
    static func defaultHandlerName(_ handler: String) -> String {
        switch handler {
        case "vide": return "VideoHandler"
        case "soun": return "SoundHandler"
        case "clcp": return "ClosedCaptionHandler"
        case "text", "sbtl", "subt", "subp": return "SubtitleHandler"
        case "tmcd": return "TimeCodeHandler"
        default: return "DataHandler"
        }
    }
}
