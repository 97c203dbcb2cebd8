/// SubRip's HTML-like markup (`<b>`, `<i>`, `<u>`, `<s>`, `<font color= face= size=>`, `<br>`)
/// turned into ASS dialogue text as FFmpeg's `ff_htmlmarkup_to_ass` (htmlsubtitles.c) does, and
/// WebVTT cue text turned into it as FFmpeg's `webvtt_event_to_ass` does.
public enum SubRipMarkup {
    /// `html` as ASS dialogue text: the first `{...}` block is kept as it is (an `{\an8}`
    /// override), later `{\...}` blocks are dropped; tags become override codes, unknown tags
    /// vanish, `<<` is text; line breaks become `\N`; leading blanks of a line and trailing
    /// blanks and `\N` are removed; an empty line ends the text.
    public static func ass(_ html: String) -> String {
        let b = Array(html.utf8)
        var out: [UInt8] = []
        struct Font { var size: UInt32 = 0; var color: UInt32 = 0; var face: String = "" }
        var stack = [Font()]
        var lineStart = true, an = 0, braceMissing = false
        func emit(_ s: String) { out += Array(s.utf8) }
        func rstrip() { while out.last == 0x20 { out.removeLast() } }
        var i = 0
        scan: while i < b.count {
            let c = b[i]
            switch c {
            case 0x0D: break
            case 0x0A:
                if lineStart { break scan }
                rstrip()
                emit("\\N")
                lineStart = true
            case 0x20:
                if !lineStart { out.append(c) }
            case 0x7B:   // '{'
                an += 1
                if !braceMissing {
                    let next = i + 1 < b.count ? b[i + 1] : 0
                    if (an != 1 && next == 0x5C) || (next != 0 && Array("CcFfoPSsYy".utf8).contains(next) && i + 2 < b.count && b[i + 2] == 0x3A) {
                        if let close = b[(i + 2 < b.count ? i + 2 : b.count)...].firstIndex(of: 0x7D) {
                            i = close
                            break
                        }
                        braceMissing = true
                    }
                }
                out.append(c)
            case 0x3C:   // '<'
                var likelyTag = true
                while i + 1 < b.count, b[i + 1] == 0x3C {
                    out.append(0x3C)
                    likelyTag = false
                    i += 1
                }
                let close = i + 1 < b.count && b[i + 1] == 0x2F
                if close { likelyTag = true }
                // "%127[^<>]>": up to 127 bytes that are not < or >, then '>'
                let start = i + 1 + (close ? 1 : 0)
                var j = start
                while j < b.count, j - start < 127, b[j] != 0x3C, b[j] != 0x3E { j += 1 }
                guard j > start, j < b.count, b[j] == 0x3E else { out.append(c); break }
                let skip = j - i              // in += skip lands on '>'
                var tag = Array(b[start..<j])
                while tag.first == 0x20 { likelyTag = false; tag.removeFirst() }
                var param: [UInt8]?
                if let sp = tag.firstIndex(of: 0x20) { param = Array(tag[(sp + 1)...]); tag = Array(tag[..<sp]) }
                for t in tag where !(t >= 0x30 && t <= 0x39 || t >= 0x61 && t <= 0x7A || t >= 0x41 && t <= 0x5A || t == 0x5F || t == 0x2F) {
                    likelyTag = false
                    break
                }
                let name = String(decoding: tag, as: UTF8.self).lowercased()
                if name == "font" {
                    if close, stack.count > 1 {
                        let cur = stack.removeLast(), last = stack[stack.count - 1]
                        if cur.size != 0 { if last.size == 0 { emit("{\\fs}") } else if last.size != cur.size { emit("{\\fs\(last.size)}") } }
                        if cur.color & 0xFF00_0000 != 0 {
                            if last.color & 0xFF00_0000 == 0 { emit("{\\c}") } else if last.color != cur.color {
                                emit("{\\c&H\(String(last.color & 0xFFFFFF, radix: 16, uppercase: true))&}")
                            }
                        }
                        if !cur.face.isEmpty { if last.face.isEmpty { emit("{\\fn}") } else if last.face != cur.face { emit("{\\fn\(last.face)}") } }
                    } else if !close, stack.count < 16 {
                        var new = stack[stack.count - 1]
                        var p = param.map { Substring(String(decoding: $0, as: UTF8.self)) }
                        while var q = p {
                            let lower = q.lowercased()
                            if lower.hasPrefix("size=") {
                                q = q.dropFirst(5)
                                if q.first == "\"" { q = q.dropFirst() }
                                let digits = q.prefix { $0.isASCII && $0.isNumber }
                                if let v = UInt32(digits) { new.size = v; emit("{\\fs\(v)}") }
                            } else if lower.hasPrefix("color=") {
                                q = q.dropFirst(6)
                                if q.first == "\"" { q = q.dropFirst() }
                                if let rgb = htmlColor(q) {
                                    new.color = 0xFF00_0000 | rgb
                                    emit("{\\c&H\(String(rgb, radix: 16, uppercase: true))&}")
                                }
                            } else if lower.hasPrefix("face=") {
                                q = q.dropFirst(5)
                                let quoted = q.first == "\""
                                if quoted { q = q.dropFirst() }
                                let face = q.prefix { $0 != (quoted ? "\"" : " ") }
                                new.face = String(face.prefix(127))
                                q = q.dropFirst(face.count)
                                emit("{\\fn\(new.face)}")
                            }
                            p = q.firstIndex(of: " ").map { q[q.index(after: $0)...] }
                        }
                        stack.append(new)
                    }
                    i += skip
                } else if tag.count == 1, "bisu".utf8.contains(tag[0] | 0x20) {
                    emit("{\\\(Character(UnicodeScalar(tag[0] | 0x20)))\(close ? 0 : 1)}")
                    i += skip
                } else if name.hasPrefix("br") && (name.count == 2 || name == "br/") {
                    emit("\\N")
                    i += skip
                } else if likelyTag {
                    i += skip
                } else {
                    out.append(0x3C)
                }
            default:
                out.append(c)
            }
            let cur = b[i]
            if cur != 0x20 && cur != 0x0D && cur != 0x0A { lineStart = false }
            i += 1
        }
        while out.count >= 2, out[out.count - 2] == 0x5C, out[out.count - 1] == 0x4E { out.removeLast(2) }
        rstrip()
        return String(decoding: out, as: UTF8.self)
    }

    /// A colour of a `<font color=...>`: `#rrggbb`, `rrggbb`, or one of the common CSS names;
    /// as ASS's 0xBBGGRR.
    static func htmlColor(_ s: Substring) -> UInt32? {
        let names: [String: UInt32] = ["white": 0xFFFFFF, "black": 0x000000, "red": 0xFF0000, "green": 0x008000, "lime": 0x00FF00,
                                       "blue": 0x0000FF, "yellow": 0xFFFF00, "cyan": 0x00FFFF, "aqua": 0x00FFFF, "magenta": 0xFF00FF,
                                       "fuchsia": 0xFF00FF, "gray": 0x808080, "grey": 0x808080, "silver": 0xC0C0C0, "maroon": 0x800000,
                                       "olive": 0x808000, "navy": 0x000080, "purple": 0x800080, "teal": 0x008080, "orange": 0xFFA500]
        var t = s.prefix { $0 != "\"" && $0 != " " && $0 != ">" }
        var rgb: UInt32?
        if t.first == "#" { t = t.dropFirst() }
        if t.count == 6, let v = UInt32(t, radix: 16) { rgb = v } else if let v = names[t.lowercased()] { rgb = v }
        guard let c = rgb else { return nil }
        return (c & 0xFF) << 16 | c & 0xFF00 | (c >> 16) & 0xFF
    }

    /// WebVTT cue text as ASS dialogue text (FFmpeg's `webvtt_event_to_ass`): `<b>` `<i>` `<u>`
    /// become override codes, other tags (`<c.x>`, `<v Name>`, timestamps) vanish, `{` `}` are
    /// escaped, `&amp;` `&lt;` `&gt;` `&nbsp;` `&lrm;` `&rlm;` are replaced, line breaks become `\N`
    /// (a final one is kept as it is), `\r` is dropped.
    public static func assFromWebVTT(_ text: String) -> String {
        let table: [(String, String)] = [("<i>", "{\\i1}"), ("</i>", "{\\i0}"), ("<b>", "{\\b1}"), ("</b>", "{\\b0}"),
                                         ("<u>", "{\\u1}"), ("</u>", "{\\u0}"), ("{", "\\{"), ("}", "\\}"),
                                         ("&gt;", ">"), ("&lt;", "<"), ("&lrm;", ""), ("&rlm;", ""), ("&amp;", "&"), ("&nbsp;", "\\h")]
        let b = Array(text.utf8)
        let froms = table.map { (Array($0.0.utf8), Array($0.1.utf8)) }
        var out: [UInt8] = []
        var skip = false, i = 0
        while i < b.count {
            var replaced = false
            for (from, to) in froms where b.count - i >= from.count && Array(b[i..<i + from.count]) == from {
                out += to
                i += from.count
                replaced = true
                break
            }
            if i >= b.count { break }
            if replaced { skip = false; continue }
            let c = b[i]
            if c == 0x3C { skip = true } else if c == 0x3E { skip = false } else if c == 0x0A && i + 1 < b.count { out += Array("\\N".utf8) } else if !skip && c != 0x0D { out.append(c) }
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }
}
