/// Hard limits of the WebVTT reader.
enum WebVTTLimits {
    /// The most bytes one cue block may hold.
    static let maxCue = 1 << 20
}

/// Reads WebVTT (`.vtt`) cue blocks as FFmpeg's `webvttdec.c` does: blocks are separated by a
/// blank line; the `WEBVTT` header and `STYLE`, `REGION` and `NOTE` blocks are skipped; a
/// block's first line is its identifier when it holds no `-->`; then the timing line
/// (``WebVTTCue/timestamp(_:)``), whose rest is the cue settings; the packet's data is the
/// rest of the block. A block whose timing line does not parse ends the cues, as in FFmpeg
/// (reported in ``warnings``). The packet's position is the offset after its block, as
/// FFmpeg 5.1 gives it.
struct WebVTTParser: CueParser {
    private var reader: TextByteReader
    private let path: String
    private var done = false
    private(set) var warnings: [MediaError] = []

    init(source: ByteSource) throws {
        reader = TextByteReader(source: source)
        path = source.name
    }

    mutating func next() throws -> Packet? {
        while !done {
            let start = reader.position
            let block = try reader.readChunk(limit: WebVTTLimits.maxCue, path: path)
            if block.isEmpty { done = true; break }
            let pos = reader.position
            if ["\u{FEFF}WEBVTT", "WEBVTT", "STYLE", "REGION", "NOTE"].contains(where: { block.starts(with: Array($0.utf8)) }) { continue }
            var i = 0
            let firstLineEnd = block.firstIndex(where: { $0 == 0x0A || $0 == 0x0D }) ?? block.count
            var identifier: String?
            if !Array(block[0..<firstLineEnd]).containsSubsequence(Array("-->".utf8)) {
                identifier = String(decoding: block[0..<firstLineEnd], as: UTF8.self)
                i = firstLineEnd
                if i < block.count, block[i] == 0x0D { i += 1 }
                if i < block.count, block[i] == 0x0A { i += 1 }
            }
            func stop(_ what: String) -> Packet? {
                warnings.append(MediaError(.invalidData, "\(what): the cues end here, as in FFmpeg", path: path, offset: start, context: "WebVTT cue"))
                done = true
                return nil
            }
            guard let begin = WebVTTCue.timestamp(block[i...]) else { return stop("expected a cue timestamp") }
            guard let arrow = Array(block[i...]).firstRange(of: Array("-->".utf8)) else { return stop("expected \"-->\"") }
            i += arrow.lowerBound + 3
            while i < block.count, block[i] == 0x20 || block[i] == 0x09 { i += 1 }
            guard let end = WebVTTCue.timestamp(block[i...]) else { return stop("expected the cue's end timestamp") }
            while i < block.count, ![0x0D, 0x0A, 0x09, 0x20].contains(block[i]) { i += 1 }
            while i < block.count, block[i] == 0x09 || block[i] == 0x20 { i += 1 }
            let settingsStart = i
            while i < block.count, block[i] != 0x0D, block[i] != 0x0A { i += 1 }
            let settings = block[settingsStart..<i]
            if i < block.count, block[i] == 0x0D { i += 1 }
            if i < block.count, block[i] == 0x0A { i += 1 }
            var p = Packet(trackIndex: 0, pts: begin.ms, dts: begin.ms, statedDuration: end.ms &- begin.ms, isKeyframe: true,
                           position: pos, data: Array(block[i...]), timeBase: Rational(1, 1000))
            if let identifier, !identifier.isEmpty { p.cueIdentifier = identifier }
            if !settings.isEmpty { p.cueSettings = String(decoding: settings, as: UTF8.self) }
            return p
        }
        return nil
    }
}

extension ContainerFormat {
    /// WebVTT (`.vtt`): one `webvtt` track, one packet per cue (``WebVTTParser``).
    public static let webvtt = ContainerFormat(
        name: "webvtt", description: "WebVTT subtitle", extensions: ["vtt"], mimeTypes: ["text/vtt"],
        probe: { head, _ in WebVTTCue.probe(head) },
        makeDemuxer: { try TextSubtitleDemuxer<WebVTTParser>(source: $0, codec: "webvtt") })
}
