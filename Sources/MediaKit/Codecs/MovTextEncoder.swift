/// Encodes ASS dialogue text (``SubtitleCue/markup``) as 3GPP timed text (`tx3g`, FFmpeg's
/// `mov_text`) as FFmpeg's `mov_text` encoder (`movtextenc.c`) does: the sample entry from the
/// track's ASS header (its "Default" style, else its first: font size, colour, alpha, face
/// flags, back colour; a font table of the styles' fonts, the default style's first; "Serif"
/// alone when there is no style), and each sample as a 16-bit text length, the UTF-8 text with
/// override codes removed and `\N` as a line feed, then a `styl` box of the runs whose bold /
/// italic / underline, colour, alpha, font or size differ from the defaults, and `hlit` / `hclr`
/// boxes for a secondary colour. Alignment, positions and the other codes are dropped, as
/// FFmpeg drops them.
public final class MovTextEncoder: @unchecked Sendable {
    /// The sample entry's defaults.
    public let defaults: MovText.Defaults
    /// The font table, in id order (id 1 first).
    public let fonts: [String]
    private let styles: [ASSText.Style]
    private let defaultRecord: MovText.StyleRecord

    // The encoder's state, as `MovTextContext`: the run being built persists from one sample
    // to the next (FFmpeg's starts zeroed, then reset to the defaults after each sample).
    private var temp = MovText.StyleRecord(start: 0, end: 0, fontID: 0, face: 0, fontSize: 0, rgba: 0)
    private var records: [MovText.StyleRecord] = []
    private var position = 0
    private var hlit: (start: Int, end: Int) = (0, 0)
    private var hclr: UInt32 = 0
    private var hasHighlight = false, hasHighlightColor = false
    private var dialogStyle: ASSText.Style?

    /// An encoder for a track whose ASS header is `header` (nil or empty: FFmpeg's default
    /// header, one "Default" style, Arial 16, white, as its SubRip, WebVTT and text decoders
    /// state it).
    public init(header: String?) {
        let parsed = (header?.isEmpty ?? true) ? [] : ASSText.styles(header: header ?? "")
        let styles = (header?.isEmpty ?? true) ? [ASSText.Style.default] : parsed
        self.styles = styles
        let style = styles.first { $0.name == "Default" } ?? styles.first
        var d = MovText.StyleRecord(start: 0, end: 0, fontID: 1, face: 0, fontSize: 0x12, rgba: 0xFFFF_FFFF)
        var back: UInt32 = 0
        if let style {
            d.fontSize = Int(truncatingIfNeeded: UInt8(truncatingIfNeeded: style.fontSize))
            d.rgba = Self.rgb(style.primaryColor) << 8 | UInt32(truncatingIfNeeded: 255 - style.primaryAlpha)
            d.face = Self.face(style)
            back = Self.rgb(style.backColor & 0xFFFFFF) << 8 | (255 - (style.backColor >> 24))
        }
        var fonts: [String] = []
        if let style, !styles.isEmpty {
            fonts.append(style.fontName)
            for s in styles where !fonts.contains(s.fontName) { fonts.append(s.fontName) }
        } else {
            fonts = ["Serif"]
        }
        self.fonts = fonts
        defaultRecord = d
        var defaults = MovText.Defaults()
        defaults.style = d
        defaults.horizontal = 1
        defaults.vertical = -1
        defaults.background = back
        defaults.fonts = Dictionary(uniqueKeysWithValues: fonts.enumerated().map { ($0.offset + 1, $0.element) })
        self.defaults = defaults
    }

    /// The `tx3g` sample entry (the whole box) for the track.
    public var sampleEntry: [UInt8] { MovText.sampleEntry(defaults) }

    /// 0xBBGGRR as 0xRRGGBB.
    static func rgb(_ bgr: UInt32) -> UInt32 { (bgr & 0xFF) << 16 | bgr & 0xFF00 | (bgr >> 16) & 0xFF }

    static func face(_ s: ASSText.Style) -> UInt8 { (s.bold ? 1 : 0) | (s.italic ? 2 : 0) | (s.underline ? 4 : 0) }

    /// The sample for one event: `markup` drawn with the style named `style`. nil when the
    /// sample would hold nothing (FFmpeg's encoder then returns no packet).
    /// - Throws: `.limit` for a text of more than 65535 bytes (FFmpeg: ERANGE).
    public func encode(markup: String, style: String) throws -> [UInt8]? {
        position = 0
        records = []
        hasHighlight = false
        hasHighlightColor = false
        var text: [UInt8] = []
        let name = style.isEmpty ? "Default" : style
        dialogStyle = styles.first { $0.name == name }
        applyStyle(dialogStyle)
        let (codes, complete) = ASSText.codes(markup)
        for code in codes {
            switch code {
            case .text(let t):
                let bytes = Array(t.utf8)
                text += bytes
                position += Self.utf8Count(bytes) ?? bytes.count
            case .newLine:
                position += 1
                text.append(0x0A)
            case .style(let c, let close):
                let flag: UInt8 = c == "b" ? 1 : c == "i" ? 2 : c == "u" ? 4 : 0
                if (temp.face & flag != 0) != close { break }
                if startRun() {
                    if close { temp.face &= ~flag } else { temp.face |= flag }
                }
            case .color(let bgr, let id):
                // FFmpeg's `\c` is colour 0, which its encoder leaves alone: only `\1c` (and
                // `\2c`, the highlight) count.
                let color = Self.rgb(bgr) << 8
                if id == 1 {
                    setColor(color)
                } else if id == 2 {
                    highlight { color | ($0 & 0xFF) }
                }
            case .alpha(let a, let id):
                let alpha = UInt32(truncatingIfNeeded: 255 - a) & 0xFF   // -1 (no value): 256, a byte 0
                if id == 1 {
                    setAlpha(alpha)
                } else if id == 2 {
                    highlight { ($0 & 0xFFFF_FF00) | alpha }
                }
            case .fontName(let name): setFont(name)
            case .fontSize(let size): setSize(size)
            case .cancelOverrides(let name):
                applyStyle(name.isEmpty ? dialogStyle : styles.first { $0.name == name })
            case .alignment, .move: break
            }
        }
        // FFmpeg's end callback closes the open run, only when the text was read to its end.
        if complete { _ = startRun() }
        guard text.count <= Int(UInt16.max) else {
            throw MediaError(.limit, "a mov_text sample holds at most 65535 bytes of text; this cue has \(text.count)")
        }
        var out: [UInt8] = Self.be16(text.count) + text
                if !records.isEmpty {
            out += Self.be32(records.count * 12 + 10) + Array("styl".utf8) + Self.be16(records.count)
            for r in records { out += r.bytes }
        }
        records = []
        temp = defaultRecord
        if hasHighlight {
            out += Self.be32(12) + Array("hlit".utf8) + Self.be16(hlit.start) + Self.be16(hlit.end)
        }
        if hasHighlightColor { out += Self.be32(12) + Array("hclr".utf8) + Self.be32(Int(truncatingIfNeeded: hclr)) }
        return out.count > 2 ? out : nil
    }

    /// `mov_text_style_start`: a run that differs from the defaults ends here and is kept;
    /// false when no more runs fit (FFmpeg then drops the styles).
    private func startRun() -> Bool {
        if temp.start == position { return true }
        let d = defaultRecord
        if temp.face != d.face || temp.rgba != d.rgba || temp.fontID != d.fontID || temp.fontSize != d.fontSize {
            guard records.count + 1 <= Int(UInt16.max) else {
                records = []
                temp = d
                return false
            }
            temp.end = position
            records.append(temp)
        }
        temp = d
        temp.start = position
        return true
    }

    private func applyStyle(_ style: ASSText.Style?) {
        guard let style else { _ = startRun(); return }
        let flags = Self.face(style)
        if (temp.face & flags) ^ flags != 0, startRun() { temp.face |= flags }
        setColor(Self.rgb(style.primaryColor) << 8)
        setAlpha(UInt32(truncatingIfNeeded: 255 - style.primaryAlpha))
        setSize(style.fontSize)
        setFont(style.fontName)
    }

    /// A secondary colour or alpha code (`\2c`, `\2a`): the highlight colour `update` makes of
    /// the current one (the text colour until one was set) starts here, or the highlight ends
    /// here when one started earlier, as movtextenc's mov_text_color_cb / alpha_cb do.
    private func highlight(_ update: (UInt32) -> UInt32) {
        if !hasHighlightColor { hclr = temp.rgba }
        if !hasHighlight || hlit.start == position {
            hasHighlightColor = true
            hasHighlight = true
            hlit.start = position
            hclr = update(hclr)
        } else {
            hlit.end = position
        }
    }

    private func setColor(_ color: UInt32) {
        guard temp.rgba & 0xFFFF_FF00 != color else { return }
        if startRun() { temp.rgba = (color & 0xFFFF_FF00) | (temp.rgba & 0xFF) }
    }

    private func setAlpha(_ alpha: UInt32) {
        guard temp.rgba & 0xFF != alpha else { return }
        if startRun() { temp.rgba = (temp.rgba & 0xFFFF_FF00) | alpha }
    }

    private func setSize(_ size: Int) {
        // FONTSIZE_SCALE with a scale of 1: (size + 0.5) truncated toward zero (a negative size
        // one up: -1, no value, is 0), stored in a byte.
        let v = Int(truncatingIfNeeded: UInt8(truncatingIfNeeded: size >= 0 ? size : size + 1))
        guard temp.fontSize != v else { return }
        if startRun() { temp.fontSize = v }
    }

    private func setFont(_ name: String?) {
        let id = name.flatMap { n in fonts.firstIndex(of: n).map { $0 + 1 } } ?? 1
        guard temp.fontID != id else { return }
        if startRun() { temp.fontID = id }
    }

    /// The low 16 bits of `v`, big-endian.
    static func be16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }

    /// The low 32 bits of `v`, big-endian.
    static func be32(_ v: Int) -> [UInt8] { be16(v >> 16) + be16(v) }

    /// The number of UTF-8 characters in `b` (FFmpeg's `utf8_strlen`), nil when it is not
    /// UTF-8 by its lead bytes.
    static func utf8Count(_ b: [UInt8]) -> Int? {
        var i = 0, n = 0
        while i < b.count {
            let c = b[i]
            if c & 0x80 == 0 { i += 1 } else if c & 0xE0 == 0xC0 { i += 2 } else if c & 0xF0 == 0xE0 { i += 3 } else if c & 0xF8 == 0xF0 { i += 4 } else { return nil }
            n += 1
        }
        return n
    }
}
