/// Renders a cue's ASS-form text (``SubtitleCue/markup``) as SubRip or WebVTT cue text, as
/// FFmpeg's `srt` and `webvtt` encoders do (`srtenc.c`, `webvttenc.c`): bold, italic,
/// underline (and strike-out for SubRip) become `<b>` `<i>` `<u>` `<s>`; SubRip also keeps font
/// colour, face and size as `<font ...>` and the alignment as `{\anN}`; tags left open are
/// closed at the end; line breaks are `\r\n` in SubRip and `\n` in WebVTT.
public enum SubtitleRendering {
    /// The text format written.
    public enum Format: Sendable, Hashable {
        /// SubRip cue text.
        case subrip
        /// WebVTT cue text.
        case webvtt
    }

    /// `markup` (an ASS dialogue's text) in `format`, with `style` the event's style (its
    /// font, colour and flags are written where they differ from FFmpeg's default style, for
    /// SubRip only).
    public static func render(_ markup: String, as format: Format, style: ASSText.Style? = nil,
                              styles: [ASSText.Style] = []) -> String {
        var r = Renderer(format: format, styles: styles)
        r.apply(style)
        let (codes, complete) = ASSText.codes(markup)
        for code in codes { r.take(code) }
        // FFmpeg's reader stops at a broken override block without its end callback.
        if complete { r.closeAll() }
        return r.out
    }

    private struct Renderer {
        let format: Format
        let styles: [ASSText.Style]
        var out = ""
        var stack: [Character] = []
        var alignmentApplied = false

        mutating func pushPop(_ c: Character?, close: Bool) {
            if close {
                let i: Int
                if let c {
                    guard let k = stack.lastIndex(of: c) else { return }
                    i = k
                } else {
                    i = 0
                }
                while stack.count > i {
                    let tag = stack.removeLast()
                    out += tag == "f" ? "</font>" : "</\(tag)>"
                }
            } else if let c, stack.count < 16 {
                stack.append(c)
            }
        }

        mutating func closeAll() { pushPop(nil, close: true) }

        static func rgb(_ bgr: UInt32) -> String {
            let c = (bgr & 0xFF0000) >> 16 | bgr & 0xFF00 | (bgr & 0xFF) << 16
            let hex = String(c, radix: 16)
            return "#" + String(repeating: "0", count: max(0, 6 - hex.count)) + hex
        }

        /// `srt_style_apply` / `webvtt_style_apply`.
        mutating func apply(_ style: ASSText.Style?) {
            guard let st = style else { return }
            let d = ASSText.Style.default
            if format == .subrip {
                let c = st.primaryColor & 0xFFFFFF
                if st.fontName != d.fontName || (st.fontSize != 0 && st.fontSize != d.fontSize) || c != d.primaryColor {
                    out += "<font"
                    if st.fontName != d.fontName { out += " face=\"\(st.fontName)\"" }
                    if st.fontSize != 0 && st.fontSize != d.fontSize { out += " size=\"\(st.fontSize)\"" }
                    if c != d.primaryColor { out += " color=\"\(Self.rgb(c))\"" }
                    out += ">"
                    pushPop("f", close: false)
                }
            }
            if st.bold != d.bold { out += "<b>"; pushPop("b", close: false) }
            if st.italic != d.italic { out += "<i>"; pushPop("i", close: false) }
            if st.underline != d.underline { out += "<u>"; pushPop("u", close: false) }
            if format == .subrip, st.alignment != d.alignment {
                out += "{\\an\(st.alignment)}"
                alignmentApplied = true
            }
        }

        mutating func take(_ code: ASSText.Code) {
            switch code {
            case .text(let t): out += t
            case .newLine: out += format == .subrip ? "\r\n" : "\n"
            case .style(let c, let close):
                if format == .webvtt && c == "s" { return }
                pushPop(c, close: close)
                if !close { out += "<\(c)>" }
            case .color(let color, let id):
                guard format == .subrip, id <= 1 else { return }
                pushPop("f", close: color == 0xFFFF_FFFF)
                if color != 0xFFFF_FFFF { out += "<font color=\"\(Self.rgb(color))\">" }
            case .fontName(let name):
                guard format == .subrip else { return }
                pushPop("f", close: name == nil)
                if let name { out += "<font face=\"\(name)\">" }
            case .fontSize(let size):
                guard format == .subrip else { return }
                pushPop("f", close: size < 0)
                if size >= 0 { out += "<font size=\"\(size)\">" }
            case .alignment(let an):
                guard format == .subrip, !alignmentApplied, an >= 0 else { return }
                out += "{\\an\(an)}"
                alignmentApplied = true
            case .cancelOverrides(let name):
                closeAll()
                apply(styles.first { $0.name == (name.isEmpty ? "Default" : name) })
            case .move, .alpha: break
            }
        }
    }

    /// A SubRip file's cue: counter, timing line (with the `X1..Y2` box when `box` has 4
    /// values), text, blank line, as FFmpeg's `srt` muxer writes it.
    public static func subripCue(number: Int, startMs: Int64, endMs: Int64, text: String, box: [Int32]? = nil) -> String {
        var s = "\(number)\n\(SubRipTiming.format(startMs)) --> \(SubRipTiming.format(endMs))"
        if let box, box.count == 4 {
            func pad(_ v: Int32) -> String { v >= 0 && v < 100 ? String(repeating: "0", count: 3 - String(v).count) + String(v) : String(v) }
            s += "  X1:\(pad(box[0])) X2:\(pad(box[1])) Y1:\(pad(box[2])) Y2:\(pad(box[3]))"
        }
        return s + "\n\(text)\n\n"
    }

    /// A WebVTT file's cue as FFmpeg's `webvtt` muxer writes it after ``webvttHeader``: a blank
    /// line, the identifier when there is one, the timing line (`mm:ss.ttt`, `hh:mm:ss.ttt` from one
    /// hour on) with the settings, the text.
    public static func webvttCue(startMs: Int64, endMs: Int64, text: String, identifier: String? = nil, settings: String? = nil) -> String {
        var s = "\n"
        if let identifier, !identifier.isEmpty { s += identifier + "\n" }
        s += "\(SubRipTiming.format(startMs, separator: ".", shortHours: true)) --> \(SubRipTiming.format(endMs, separator: ".", shortHours: true))"
        if let settings, !settings.isEmpty { s += " " + settings }
        return s + "\n\(text)\n"
    }

    /// The header FFmpeg's WebVTT muxer writes first.
    public static let webvttHeader = "WEBVTT\n"
}
