/// Reads a text subtitle file's cues one at a time, front to back (the SubRip and WebVTT
/// readers). `nil` is the end of the cues.
protocol CueParser {
    /// A parser at the start of `source`.
    init(source: ByteSource) throws
    /// The next cue as a packet (time base 1/1000), nil at the end.
    mutating func next() throws -> Packet?
    /// Damage stepped over so far.
    var warnings: [MediaError] { get }
}

/// The demuxer of a text subtitle file: one subtitle track, one packet per cue (time base
/// 1/1000), read line by line (never the whole file).
///
/// Packets are FFmpeg's (`ff_subtitles_queue_finalize`) but in file order: a cue with a
/// negative duration takes the gap to the next cue's start, and a cue equal to the one before
/// it (start, duration and text) is dropped. FFmpeg also sorts the cues by start time (it reads
/// the whole file first); a file whose cues are out of order gives them here in file order.
final class TextSubtitleDemuxer<Parser: CueParser>: Demuxer, @unchecked Sendable {
    /// The one subtitle track.
    let tracks: [Track]
    /// Unknown (FFmpeg states none for these files).
    var duration: Double? { nil }
    /// Damage stepped over (a NUL byte that ended the file early, a cue with a broken timing line).
    var warnings: [MediaError] { main.parser.warnings }

    private let source: ByteSource
    private let codec: CodecID
    private var main: Cursor
    private var perTrack: Cursor
    private var selected: Set<Int>?

    /// One reading position: the parser and the cue held back to look at the next one.
    struct Cursor {
        var parser: Parser
        var held: Packet?
        var last: Packet?
        var queued: [Packet] = []

        mutating func next() throws -> Packet? {
            if !queued.isEmpty { return queued.removeFirst() }
            while true {
                if held == nil { held = try parser.next() }
                guard var p = held else { return nil }
                held = try parser.next()
                if let n = held, let d = p.statedDuration, d < 0 {
                    p.statedDuration = n.pts - p.pts
                }
                if let l = last, l.pts == p.pts, l.statedDuration == p.statedDuration, l.data == p.data { continue }
                last = p
                return p
            }
        }
    }

    /// Opens `source` with `Parser`; the track carries `codec`.
    init(source: ByteSource, codec: CodecID) throws {
        self.source = source
        self.codec = codec
        let params = CodecParameters(mediaType: .subtitle, codec: codec)
        tracks = [Track(index: 0, id: 0, parameters: params, timeBase: Rational(1, 1000), duration: 0)]
        main = Cursor(parser: try Parser(source: source))
        perTrack = Cursor(parser: try Parser(source: source))
    }

    /// The next cue, nil at the end.
    func read() throws -> Packet? {
        if let selected, !selected.contains(0) { return nil }
        return try main.next()
    }

    /// The next cue of track 0, independent of ``read()``.
    func read(track: Int) throws -> Packet? {
        guard track == 0 else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (a subtitle file has 1)", path: source.name)
        }
        return try perTrack.next()
    }

    /// Limits ``read()`` to these tracks (nil: all).
    func select(tracks: Set<Int>?) { selected = tracks }

    /// Moves to the last cue starting at or before `seconds` (read again from the start).
    func seek(to seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.invalidArgument, "cannot seek to \(seconds) s", path: source.name)
        }
        let target = Int64((seconds * 1000).rounded(.down))
        var c = Cursor(parser: try Parser(source: source))
        var before: Packet?
        while let p = try c.next() {
            if p.pts > target { c.queued = (before.map { [$0] } ?? []) + [p]; break }
            before = p
        }
        if c.queued.isEmpty, let before { c.queued = [before] }
        main = c
        perTrack = c
    }
}
