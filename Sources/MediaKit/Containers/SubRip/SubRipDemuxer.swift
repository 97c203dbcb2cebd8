/// Hard limits of the SubRip reader.
enum SubRipLimits {
    /// The most text one cue may hold (a file with no timing line after its first is one cue).
    static let maxCue = 1 << 20
}

/// Reads SubRip (`.srt`) cues line by line as FFmpeg's `srtdec.c` does: a cue starts at a
/// timing line (``SubRipTiming/parse(_:)``) and holds the non-blank lines up to the next timing
/// line, joined by `\n`; a number line just before a timing line is the next cue's counter,
/// not text. Lines before the first timing line are skipped; a line that looks like a broken
/// timing line is cue text, as in FFmpeg. The packet's position is its timing line's offset;
/// its data the text without a trailing line break; its ``Packet/cueSettings`` the timing
/// line's `X1..Y2` box.
struct SubRipParser: CueParser {
    private var reader: TextByteReader
    private let path: String
    private var pending: (line: SubRipTiming.Line, position: Int64)?
    private var done = false
    private(set) var warnings: [MediaError] = []

    init(source: ByteSource) throws {
        reader = TextByteReader(source: source)
        path = source.name
        try reader.skip([0xEF, 0xBB, 0xBF])
    }

    /// The next cue with text: FFmpeg's SubRip reader gives no packet for a cue without text
    /// (its WebVTT reader does).
    mutating func next() throws -> Packet? {
        while let p = try nextCue() {
            if !p.data.isEmpty { return p }
        }
        return nil
    }

    private mutating func nextCue() throws -> Packet? {
        if done { return nil }
        var text: [UInt8] = []
        var counter: [UInt8]?     // a number line held back: the next cue's counter or text
        while true {
            let at = reader.position
            guard let line = try reader.readLine() else { break }
            guard case .text(let bytes) = line else {
                // FFmpeg stops reading there; the cue read so far keeps the lines before it.
                warnings.append(MediaError(.invalidData, "a NUL byte ends the text (FFmpeg stops reading there too)",
                                           path: path, offset: reader.position - 1))
                break
            }
            if bytes.isEmpty { continue }
            if let timing = SubRipTiming.parse(bytes) {
                let previous = pending
                pending = (timing, at)
                if let previous { return packet(previous, text: text) }
                text.removeAll()
                counter = nil
                continue
            }
            guard pending != nil else { continue }
            if let c = counter { text += c + [0x0A]; counter = nil }
            var s = SubRipTiming.Scanner(bytes)
            if s.int() != nil, s.atEnd {
                counter = bytes
            } else {
                text += bytes + [0x0A]
            }
            if text.count > SubRipLimits.maxCue {
                throw MediaError(.limit, "a cue is longer than \(SubRipLimits.maxCue) bytes", path: path, offset: pending?.position)
            }
        }
        done = true
        guard let last = pending else { return nil }
        if let c = counter { text += c + [0x0A] }
        return packet(last, text: text)
    }

    private func packet(_ cue: (line: SubRipTiming.Line, position: Int64), text: [UInt8]) -> Packet {
        var t = text
        while t.last == 0x0A { t.removeLast() }
        var p = Packet(trackIndex: 0, pts: cue.line.start, dts: cue.line.start, statedDuration: cue.line.end &- cue.line.start,
                       isKeyframe: true, position: cue.position, data: t, timeBase: Rational(1, 1000))
        p.cueSettings = cue.line.settings
        return p
    }
}

extension ContainerFormat {
    /// SubRip (`.srt`): one `subrip` track, one packet per cue (``SubRipParser``).
    public static let subrip = ContainerFormat(
        name: "srt", description: "SubRip subtitle", extensions: ["srt"], mimeTypes: ["application/x-subrip"],
        probe: { head, _ in SubRipTiming.probe(head) },
        makeDemuxer: { try TextSubtitleDemuxer<SubRipParser>(source: $0, codec: "subrip") })
}
