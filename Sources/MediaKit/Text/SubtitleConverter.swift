/// Converts the packets of a text subtitle track into another text codec, as ffmpeg's
/// `-c:s srt` / `-c:s webvtt` / `-c:s mov_text` does it: each packet decoded to cues
/// (``SubtitleDecoder``, every text codec brought to ASS dialogue text), each cue encoded again:
/// SubRip and WebVTT cue text by ``SubtitleRendering`` (FFmpeg's `srt` and `webvtt` encoders:
/// ASS override codes become `<b>` `<i>` `<u>` (SubRip also `<s>`, `<font>`, `{\anN}`), the
/// others are dropped), 3GPP timed text by ``MovTextEncoder``. The cue keeps its packet's pts and
/// duration; a cue with nothing to show gives no packet, as FFmpeg's encoders give none.
///
/// Muxers install one in ``Muxer/addTrack(from:firstPacket:)`` for a text track whose codec
/// their container does not carry but whose content it holds (SubRip into MP4 as `tx3g`,
/// `mov_text` into Matroska as `S_TEXT/UTF8`, any text into WebM as WebVTT). Bitmap subtitles
/// and captions are not text: ``init(from:to:track:)`` refuses them.
public final class SubtitleConverter: @unchecked Sendable {
    /// The codecs a converter writes.
    public static let targets: [CodecID] = ["subrip", "webvtt", "mov_text"]

    /// The codec written.
    public let target: CodecID
    /// The output track's codec parameters: the target codec, its configuration (the `tx3g`
    /// sample entry, whole in ``CodecParameters/sampleEntry`` and its body as the extradata, for
    /// `mov_text`).
    public let parameters: CodecParameters
    private let decoder: SubtitleDecoder
    private let movText: MovTextEncoder?

    /// A converter for a track with `source` parameters into `target` (one of ``targets``).
    /// `track` names the track in errors.
    /// - Throws: `.unsupported` naming the track, its codec and the target for a source that is
    ///   not text (a bitmap subtitle, captions) or a target not in ``targets``.
    public init(from source: CodecParameters, to target: CodecID, track: Int) throws {
        guard Self.targets.contains(target) else {
            throw MediaError(.unsupported, "track \(track): MediaKit converts subtitles into \(Self.targets.map(\.rawValue).joined(separator: ", ")), not \(target.rawValue)")
        }
        do {
            decoder = try SubtitleDecoder(parameters: source)
        } catch let e as MediaError {
            throw MediaError(.unsupported, "track \(track) (\(source.codec.isUnknown ? source.codecTag : source.codec.rawValue)) cannot become \(target.rawValue): \(e.message)")
        }
        self.target = target
        var p = CodecParameters(mediaType: .subtitle, codec: target)
        p.codecTag = ""
        if target == "mov_text" {
            let header: String? = source.codec == "ass" || source.codec == "ssa" ? String(decoding: source.extradata, as: UTF8.self) : nil
            let encoder = MovTextEncoder(header: header)
            movText = encoder
            p.sampleEntry = encoder.sampleEntry
            p.extradata = Array(p.sampleEntry.dropFirst(16))   // FFmpeg's extradata: the entry's body after the SampleEntry fields
            p.codecTag = "tx3g"
        } else {
            movText = nil
        }
        parameters = p
    }

    /// Why a track of `codec` cannot be converted to text, nil when it can.
    public static func refusal(of codec: CodecID) -> String? {
        if SubtitleDecoder.decodes(codec) { return nil }
        let bitmaps: Set<CodecID> = ["hdmv_pgs_subtitle", "dvb_subtitle", "dvd_subtitle", "xsub"]
        if bitmaps.contains(codec) { return "\(codec.rawValue) is a bitmap subtitle codec: its pictures cannot become text" }
        return "\(codec.isUnknown ? "its codec" : codec.rawValue) is not a text subtitle codec"
    }

    /// The packets `packet` becomes: one per cue with something to show, with the packet's
    /// track, pts, dts and duration.
    /// - Throws: the decoder's `.invalidData` for a damaged packet, ``MovTextEncoder``'s `.limit`.
    public func convert(_ packet: Packet) throws -> [Packet] {
        var out: [Packet] = []
        for cue in try decoder.decode(packet) {
            let data: [UInt8]
            switch target {
            case "mov_text":
                guard let sample = try movText?.encode(markup: cue.markup, style: cue.style) else { continue }
                data = sample
            default:
                let text = decoder.render(cue, as: target == "webvtt" ? .webvtt : .subrip)
                if text.isEmpty { continue }
                data = Array(text.utf8)
            }
            var p = packet
            p.data = data
            p.cueIdentifier = nil
            p.cueSettings = nil
            p.isKeyframe = true
            out.append(p)
        }
        return out
    }
}
