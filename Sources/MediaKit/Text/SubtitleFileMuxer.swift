/// Writes one text subtitle track as a SubRip (`.srt`) or WebVTT (`.vtt`) file, as ffmpeg's
/// `srt` and `webvtt` muxers write what its `srt` / `webvtt` encoders make of any text track
/// (`ffmpeg -i IN -map 0:s:0 OUT.srt`): each packet decoded to cues (``SubtitleDecoder``), each
/// cue rendered (``SubtitleRendering``: ASS override codes become SubRip / WebVTT tags) and
/// written with its timing: numbered cues with `\n` line ends (`\r\n` inside SubRip cue text,
/// as FFmpeg's encoder writes it), or a `WEBVTT` header and cues. A cue with nothing to show is
/// left out, as ffmpeg leaves it out. ASS and SSA are converted, their styles applied as
/// FFmpeg's encoders apply them (not refused). Bitmap subtitles (PGS, DVB, DVD) and captions
/// are refused by ``addTrack(_:timeBase:)``, naming the track and codec.
///
/// The file is written under a temporary name renamed by ``finish()``; the text is buffered
/// in pieces of 64 KiB, never whole.
public final class SubtitleFileMuxer: Muxer, @unchecked Sendable {
    /// The text format written.
    public let format: SubtitleRendering.Format
    private let file: OutputFile
    private var decoder: SubtitleDecoder?
    /// Cues written so far.
    private(set) var count = 0
    private var buffer = ""
    private var finished = false

    /// Creates the file (a temporary name until ``finish()``).
    /// - Throws: `.io` when the file cannot be created.
    public init(path: String, format: SubtitleRendering.Format) throws {
        self.format = format
        file = try OutputFile(path: path)
        buffer = format == .webvtt ? SubtitleRendering.webvttHeader : ""
    }

    private var name: String { format == .subrip ? "SubRip" : "WebVTT" }

    /// Adds the one track a subtitle file holds.
    /// - Throws: `.unsupported` for a second track, a track that is not a text subtitle (naming
    ///   the track, its codec and why: a bitmap subtitle is pictures), `.state` after the first packet.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        try addTrack(parameters, named: 0)
    }

    /// Adds a demuxed track (errors name it by its index in the source).
    /// - Throws: as ``addTrack(_:timeBase:)``.
    public func addTrack(from track: Track) throws -> Int {
        try addTrack(track.parameters, named: track.index)
    }

    private func addTrack(_ parameters: CodecParameters, named index: Int) throws -> Int {
        guard decoder == nil else {
            throw MediaError(.unsupported, "a \(name) file holds one subtitle track; track 0 is already added", path: file.path)
        }
        guard parameters.mediaType == .subtitle else {
            throw MediaError(.unsupported, "a \(name) file holds text subtitles, not track \(index), a \(parameters.mediaType.rawValue) track (\(parameters.codec.rawValue))", path: file.path)
        }
        if let why = SubtitleConverter.refusal(of: parameters.codec) {
            throw MediaError(.unsupported, "\(name) cannot carry track \(index) (\(parameters.codec.isUnknown ? parameters.codecTag : parameters.codec.rawValue)): \(why)", path: file.path)
        }
        do { decoder = try SubtitleDecoder(parameters: parameters) } catch let e as MediaError { throw e.at(path: file.path) }
        return 0
    }

    /// Adds the track `decoder` decodes (``SubtitleExport``, which made it to check the track).
    func addTrack(decoder: SubtitleDecoder) {
        self.decoder = decoder
    }

    /// Writes the cues of one packet.
    /// - Throws: `.invalidArgument` for a track that was not added, `.state` after ``finish()``,
    ///   the decoder's `.invalidData` for a damaged packet, `.io`.
    public func write(_ packet: Packet) throws {
        guard !finished else { throw MediaError(.state, "write after finish", path: file.path) }
        guard packet.trackIndex == 0, let decoder else {
            throw MediaError(.invalidArgument, "track \(packet.trackIndex) was not added", path: file.path)
        }
        let cues: [SubtitleCue]
        do { cues = try decoder.decode(packet) } catch let e as MediaError { throw e.at(path: file.path) }
        for cue in cues {
            let text = decoder.render(cue, as: format)
            if text.isEmpty { continue }
            count += 1
            switch format {
            case .subrip:
                buffer += SubtitleRendering.subripCue(number: count, startMs: cue.startMilliseconds, endMs: cue.endMilliseconds, text: text)
            case .webvtt:
                buffer += SubtitleRendering.webvttCue(startMs: cue.startMilliseconds, endMs: cue.endMilliseconds, text: text)
            }
        }
        if buffer.utf8.count > 1 << 16 {
            try file.write(Array(buffer.utf8))
            buffer = ""
        }
    }

    /// Writes what is buffered and renames the file into place.
    /// - Throws: `.io`; the file is then left unfinished.
    public func finish() throws {
        guard !finished else { return }
        finished = true
        try file.write(Array(buffer.utf8))
        buffer = ""
        try file.commit()
    }

    /// Abandons the file and removes what was written.
    public func cancel() {
        finished = true
        file.discard()
    }

    /// The codecs a subtitle file takes: every text codec (converted).
    public static let codecs: [CodecID] = SubtitleDecoder.textCodecs

    /// Why a subtitle file refuses the bitmap subtitle codecs.
    public static let refusals: [CodecID: String] = Dictionary(uniqueKeysWithValues: ["hdmv_pgs_subtitle", "dvb_subtitle", "dvd_subtitle", "xsub"].map {
        (CodecID(rawValue: $0), "\($0) is a bitmap subtitle codec: a text subtitle file cannot hold its pictures")
    })
}
