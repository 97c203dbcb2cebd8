/// One subtitle cue: when it shows, its text, and how it is drawn.
public struct SubtitleCue: Sendable, Hashable {
    /// Start, in ``timeBase`` ticks (the packet's pts).
    public var start: Int64
    /// How long it shows, in ``timeBase`` ticks (the packet's duration; 0 when unknown).
    public var duration: Int64
    /// Seconds per tick of ``start`` and ``duration``.
    public var timeBase: Rational
    /// The text as an ASS dialogue's text, the common form every text codec is brought to (as
    /// FFmpeg's decoders do): override codes `{\b1}`, `{\i1}`, `{\an8}`, `\N` line breaks.
    public var markup: String
    /// The text without markup, lines separated by `\n` (FFmpeg's `text` encoder's output).
    public var text: String
    /// The ASS style the cue is drawn with ("Default" for the codecs without styles).
    public var style: String
    /// ASS layer (higher on top); 0 for the other codecs.
    public var layer: Int
    /// ASS speaker name; "" for the other codecs.
    public var name: String
    /// WebVTT cue identifier, nil when none.
    public var identifier: String?
    /// WebVTT cue settings (`align:start line:0`) or a SubRip `X1..Y2` box, nil when none.
    public var settings: String?

    /// ``start`` in milliseconds, rounded to the nearest (FFmpeg's `av_rescale_q`).
    public var startMilliseconds: Int64 { Rational.rescale(start, from: timeBase, to: Rational(1, 1000)) }
    /// The end in milliseconds: ``startMilliseconds`` plus the duration rounded to milliseconds,
    /// as ffmpeg's subtitle encoding computes it.
    public var endMilliseconds: Int64 { startMilliseconds + Rational.rescale(duration, from: timeBase, to: Rational(1, 1000)) }
}

/// Turns the packets of a text subtitle track into cues (``SubtitleCue``): SubRip (`subrip`),
/// WebVTT (`webvtt`: cue text as in `.vtt` files and Matroska, or ISO/IEC 14496-30 `vttc`
/// boxes of MP4 `wvtt` samples), 3GPP timed text (`mov_text`: `tx3g` samples with style boxes),
/// ASS / SSA (`ass`: Matroska event lines `ReadOrder,Layer,Style,...,Text`) and plain `text`.
/// No plugin is involved. Bitmap subtitles (PGS, DVB, DVD) and captions (EIA-608 / 708) are not
/// text: their packets pass through remux as they are, and ``init(parameters:)`` refuses them.
///
/// ```swift
/// let decoder = try SubtitleDecoder(parameters: track.parameters)
/// while let packet = try demuxer.read(track: track.index) {
///     for cue in try decoder.decode(packet) { print(cue.startMilliseconds, cue.text) }
/// }
/// ```
public final class SubtitleDecoder: @unchecked Sendable {
    /// The codecs this decoder reads.
    public static let textCodecs: [CodecID] = ["subrip", "webvtt", "mov_text", "ass", "ssa", "text"]

    /// The track's codec parameters.
    public let parameters: CodecParameters
    /// The styles of the track's ASS header (ASS / SSA), or the one default style of a
    /// `tx3g` sample entry (mov_text); empty for the other codecs (FFmpeg's default style).
    public let styles: [ASSText.Style]
    private let movText: MovText.Defaults?
    private let boxedWebVTT: Bool
    private var readOrder = 0

    /// True when `codec` is one this decoder reads.
    public static func decodes(_ codec: CodecID) -> Bool { textCodecs.contains(codec) }

    /// A decoder for a track with `parameters`.
    /// - Throws: `.unsupported` for a subtitle codec that is not text (a bitmap or caption
    ///   codec: "hdmv_pgs_subtitle is a bitmap subtitle codec: its packets can be copied, not
    ///   decoded to text") or a codec that is not a subtitle at all.
    public init(parameters: CodecParameters) throws {
        let codec = parameters.codec
        guard Self.decodes(codec) else {
            let bitmaps: Set<CodecID> = ["hdmv_pgs_subtitle", "dvb_subtitle", "dvd_subtitle", "xsub"]
            let captions: Set<CodecID> = ["eia_608", "eia_708"]
            let name = codec.isUnknown ? "'\(parameters.codecTag)'" : codec.rawValue
            let why = bitmaps.contains(codec) ? "\(name) is a bitmap subtitle codec: its packets can be copied, not decoded to text"
                : captions.contains(codec) ? "\(name) captions are not decoded to text: their packets can be copied"
                : "\(name) is not a text subtitle codec (the text decoder reads \(Self.textCodecs.map(\.rawValue).joined(separator: ", ")))"
            throw MediaError(.unsupported, why)
        }
        self.parameters = parameters
        boxedWebVTT = codec == "webvtt" && parameters.codecTag == "wvtt"
        if codec == "mov_text" {
            let d = MovText.defaults(entry: parameters.sampleEntry.isEmpty ? parameters.extradata : parameters.sampleEntry) ?? MovText.Defaults()
            movText = d
            styles = [d.assStyle]
        } else {
            movText = nil
            styles = codec == "ass" || codec == "ssa" ? ASSText.styles(header: String(decoding: parameters.extradata, as: UTF8.self)) : []
        }
    }

    /// The style named `name` ("" or nil: "Default"), nil when the track has none by that name
    /// (FFmpeg's default style applies).
    public func style(named name: String?) -> ASSText.Style? {
        let n = name.flatMap { $0.isEmpty ? nil : $0 } ?? "Default"
        return styles.first { $0.name == n }
    }

    /// The cues of `packet`: one for most codecs, none for an empty `tx3g` sample or a `wvtt`
    /// sample with no cue (`vtte`), one per `vttc` box of a `wvtt` sample.
    /// - Throws: `.invalidData` naming what is wrong in a damaged `tx3g` sample, `wvtt` box
    ///   or ASS event line.
    public func decode(_ packet: Packet) throws -> [SubtitleCue] {
        func cue(_ markup: String, style: String = "Default", layer: Int = 0, name: String = "",
                 identifier: String? = packet.cueIdentifier, settings: String? = packet.cueSettings) -> SubtitleCue {
            SubtitleCue(start: packet.pts, duration: packet.duration, timeBase: packet.timeBase, markup: markup,
                        text: ASSText.plainText(markup), style: style, layer: layer, name: name,
                        identifier: identifier, settings: settings)
        }
        let raw = String(decoding: packet.data, as: UTF8.self)
        switch parameters.codec {
        case "subrip":
            var prefix = ""
            if let settings = packet.cueSettings, let box = Self.box(settings), box[0] >= 0, box[2] >= 0 {
                let (x1, x2, y1, y2) = (Int64(box[0]), Int64(box[1]), Int64(box[2]), Int64(box[3]))
                // FFmpeg scales from an assumed 720x480 DVD picture to ASS's 384x288.
                if x2 >= 0, y2 >= 0, x2 != x1 || y2 != y1, x2 >= x1, y2 >= y1 {
                    prefix = "{\\an5}{\\pos(\((x1 + (x2 - x1) / 2) * 384 / 720),\((y1 + (y2 - y1) / 2) * 288 / 480))}"
                } else {
                    prefix = "{\\an1}{\\pos(\(x1 * 384 / 720),\(y1 * 288 / 480))}"
                }
            }
            return [cue(prefix + SubRipMarkup.ass(raw))]
        case "webvtt" where boxedWebVTT:
            return try WebVTTCue.boxes(packet.data).map {
                cue(SubRipMarkup.assFromWebVTT($0.payload), identifier: $0.identifier.isEmpty ? nil : $0.identifier,
                    settings: $0.settings.isEmpty ? nil : $0.settings)
            }
        case "webvtt":
            return [cue(SubRipMarkup.assFromWebVTT(raw))]
        case "mov_text":
            guard let markup = try MovText.assText(packet.data, defaults: movText ?? MovText.Defaults()) else { return [] }
            return [cue(markup)]
        case "ass", "ssa":
            let e = try ASSText.event(raw)
            return [cue(e.text, style: e.style, layer: e.layer, name: e.name)]
        default:   // "text": plain text
            let markup = raw.replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\n", with: "\\N")
            return [cue(markup)]
        }
    }

    /// `cue`'s text in SubRip or WebVTT markup (``SubtitleRendering``), with the track's style
    /// for it; "" when nothing would show (FFmpeg writes no cue then).
    public func render(_ cue: SubtitleCue, as format: SubtitleRendering.Format) -> String {
        SubtitleRendering.render(cue.markup, as: format, style: style(named: cue.style), styles: styles)
    }

    /// The four values of a SubRip `X1:.. X2:.. Y1:.. Y2:..` settings string.
    static func box(_ settings: String) -> [Int32]? {
        var v: [Int32] = []
        for part in settings.split(separator: " ") {
            guard let colon = part.firstIndex(of: ":"), let n = Int32(part[part.index(after: colon)...]) else { return nil }
            v.append(n)
        }
        return v.count == 4 ? v : nil
    }
}
