/// The QuickTime chapter track FFmpeg's mov muxer writes next to the Nero `chpl` for the
/// chapters of an MP4 or MOV file (`mov_create_chapter_track`): a `text` track in 1/1000 s, one
/// sample per chapter with a title (a 16-bit length, the UTF-8 title and an `encd` atom saying
/// UTF-8), each lasting to the next; every other track names it with `tref/chap`.
enum MP4ChapterTrack {
    /// The track's time scale (FFmpeg's MOV_TIMESCALE).
    static let timeScale: Int64 = 1000

    /// The `text` sample entry FFmpeg writes for it: display flags 1, no justification or
    /// colours, an empty text box, a default style with font 1, a font table with font 1 and
    /// no name.
    static let sampleEntry: [UInt8] = {
        var body: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1]           // reserved, data reference index 1
        body += [0, 0, 0, 1]                                    // display flags
        body += [0, 0]                                          // justification
        body += [0, 0, 0, 0]                                    // background colour
        body += [UInt8](repeating: 0, count: 8)                 // text box
        body += [0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]           // style record: font 1, size 0, colour 0
        body += [0, 0, 0, 0x0D] + Array("ftab".utf8) + [0, 1, 0, 1, 0]   // font table: font 1, no name
        return [0, 0, 0, UInt8(truncatingIfNeeded: 8 + body.count)] + Array("text".utf8) + body   // 59 bytes
    }()

    /// The samples for `chapters`: (start, duration) in ``timeScale`` ticks and the sample's
    /// bytes, for the chapters with a title, in order of their start (a chapter starting
    /// before the previous one is left out: decode times cannot go back); nil when none has a title.
    static func samples(_ chapters: [Chapter]) -> [(start: Int64, duration: Int64, data: [UInt8])] {
        var out: [(start: Int64, duration: Int64, data: [UInt8])] = []
        let encd: [UInt8] = [0, 0, 0, 0x0C] + Array("encd".utf8) + [0, 0, 1, 0]
        for c in chapters {
            guard let title = c.shownTitle else { continue }
            let start = Rational.rescale(c.start, from: c.timeBase, to: Rational(1, timeScale))
            let end = Rational.rescale(c.end, from: c.timeBase, to: Rational(1, timeScale))
            guard start >= (out.last?.start ?? 0) else { continue }
            var text = Array(title.utf8.prefix(Int(UInt16.max)))
            while !text.isEmpty, String(bytes: text, encoding: .utf8) == nil { text.removeLast() }   // not inside a character
            out.append((start, max(0, end - start), [UInt8(truncatingIfNeeded: text.count >> 8), UInt8(truncatingIfNeeded: text.count)] + text + encd))
        }
        return out
    }
}
