/// ASS / SSA text facts: Matroska's event lines (`ReadOrder,Layer,Style,Name,MarginL,MarginR,
/// MarginV,Effect,Text`), the `[V4+ Styles]` of the header (CodecPrivate), and the override
/// codes of a dialogue's text (`{\b1}`, `{\i0}`, `{\c&HFF&}`, `{\an8}`, `\N`), read as
/// FFmpeg's `ass_split.c` reads them. Every text subtitle MediaKit decodes is brought to this
/// form first (as FFmpeg's decoders do), and the SubRip and WebVTT writers render from it.
public enum ASSText {
    /// One dialogue event.
    public struct Event: Sendable, Hashable {
        /// Matroska's ReadOrder (the event's place in the script).
        public var readOrder: Int
        /// Layer (higher is drawn on top).
        public var layer: Int
        /// Style name ("Default").
        public var style: String
        /// Speaker name.
        public var name: String
        /// MarginL, MarginR, MarginV (0: the style's).
        public var margins: [Int]
        /// Effect.
        public var effect: String
        /// The text with its override codes.
        public var text: String

        /// An event with `text` in the style "Default", every other field zero or empty.
        public init(text: String, readOrder: Int = 0, layer: Int = 0, style: String = "Default", name: String = "",
                    margins: [Int] = [0, 0, 0], effect: String = "") {
            self.text = text
            self.readOrder = readOrder
            self.layer = layer
            self.style = style
            self.name = name
            self.margins = margins
            self.effect = effect
        }

        /// The Matroska event line `ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text`.
        public var line: String {
            "\(readOrder),\(layer),\(style),\(name),\(margins.map(String.init).joined(separator: ",")),\(effect),\(text)"
        }
    }

    /// Splits a Matroska event line (9 fields; the text may hold commas). An SSA event from an
    /// older muxer with "Marked=" in the layer field reads as layer 0.
    /// - Throws: `.invalidData` when the line has fewer than 9 fields.
    public static func event(_ line: String) throws -> Event {
        var fields: [Substring] = []
        var rest = Substring(line)
        for _ in 0..<8 {
            guard let comma = rest.firstIndex(of: ",") else {
                throw MediaError(.invalidData, "an ASS event line has 9 comma-separated fields (ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text), this one \(fields.count + 1)",
                                 context: "ASS event")
            }
            fields.append(rest[..<comma])
            rest = rest[rest.index(after: comma)...]
        }
        func int(_ s: Substring) -> Int { Int(s.trimmingCharacters(in: .whitespaces)) ?? 0 }
        return Event(text: String(rest), readOrder: int(fields[0]), layer: int(fields[1]), style: String(fields[2]),
                     name: String(fields[3]), margins: [int(fields[4]), int(fields[5]), int(fields[6])], effect: String(fields[7]))
    }

    /// A style of the header's `[V4+ Styles]` (or `[V4 Styles]`): what the SubRip writer turns
    /// into tags.
    public struct Style: Sendable, Hashable {
        /// Its name.
        public var name: String
        /// Font name ("Arial").
        public var fontName: String
        /// Font size (16).
        public var fontSize: Int
        /// Primary colour, 0xBBGGRR (alpha dropped).
        public var primaryColor: UInt32
        /// Bold, italic, underline.
        public var bold: Bool, italic: Bool, underline: Bool
        /// Numpad alignment 1...9 (2: bottom centre).
        public var alignment: Int
        /// The primary colour's alpha byte (0: opaque), the `AA` of `&HAABBGGRR`.
        public var primaryAlpha: UInt8 = 0
        /// Back colour, 0xAABBGGRR as the header states it (alpha kept).
        public var backColor: UInt32 = 0

        /// FFmpeg's default style (`ASS_DEFAULT_*`): Arial 16, white, plain, bottom centre.
        public static let `default` = Style(name: "Default", fontName: "Arial", fontSize: 16, primaryColor: 0xFFFFFF,
                                            bold: false, italic: false, underline: false, alignment: 2)
    }

    /// The styles of an ASS / SSA header (`Format:` line of the styles section, then `Style:`
    /// lines). SSA's (v4) alignment is converted to the numpad form.
    public static func styles(header: String) -> [Style] {
        var styles: [Style] = []
        var format: [String] = []
        var inStyles = false, ssa = false
        for raw in header.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("[") {
                inStyles = line.lowercased().hasPrefix("[v4") && line.lowercased().contains("styles")
                ssa = inStyles && !line.contains("+")
                continue
            }
            guard inStyles, let colon = line.firstIndex(of: ":") else { continue }
            let key = line[..<colon].trimmingCharacters(in: .whitespaces)
            let values = line[line.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
                .map { $0.trimmingCharacters(in: .whitespaces) }
            if key == "Format" { format = values.map { $0.lowercased() }; continue }
            guard key == "Style" else { continue }
            func field(_ n: String) -> String? { format.firstIndex(of: n).flatMap { $0 < values.count ? values[$0] : nil } }
            func flag(_ n: String) -> Bool { (Int(field(n) ?? "0") ?? 0) != 0 }
            var s = Style.default
            s.name = field("name") ?? ""
            if let f = field("fontname") { s.fontName = f }
            // A size a renderer can use: a number that is not finite or beyond any font size
            // (the header is the file's, any text) keeps the default.
            if let f = field("fontsize"), let size = Double(f), size.isFinite, abs(size) < 1e6 { s.fontSize = Int(size) }
            if let c = field("primarycolour").flatMap(color) {
                s.primaryColor = c & 0xFFFFFF
                s.primaryAlpha = UInt8(c >> 24)
            }
            if let c = field("backcolour").flatMap(color) { s.backColor = c }
            s.bold = flag("bold")
            s.italic = flag("italic")
            s.underline = flag("underline")
            if let a = field("alignment").flatMap({ Int($0) }) {
                s.alignment = ssa ? (a & 3) + (a & 4 != 0 ? 6 : a & 8 != 0 ? 3 : 0) : a
            }
            styles.append(s)
        }
        return styles
    }

    /// An ASS colour `&HAABBGGRR` or decimal; nil when it is neither.
    static func color(_ s: String) -> UInt32? {
        var t = Substring(s)
        if t.hasPrefix("&H") || t.hasPrefix("&h") {
            t = t.dropFirst(2)
            if t.hasSuffix("&") { t = t.dropLast() }
            return UInt32(t.prefix(8), radix: 16)
        }
        return Int64(t).map { UInt32(truncatingIfNeeded: $0) }
    }

    /// What the override-code reader finds in a dialogue's text, in order (FFmpeg's
    /// `ASSCodesCallbacks`).
    public enum Code: Sendable, Hashable {
        /// Plain text.
        case text(String)
        /// `\n` (soft) or `\N` (forced) line break.
        case newLine(forced: Bool)
        /// `\b`, `\i`, `\u`, `\s` on (`close` false) or off.
        case style(Character, close: Bool)
        /// `\c` / `\1c`...`\4c`: a colour 0xBBGGRR (0xFFFFFFFF: back to the style's) for colour `id` (0 or 1: primary).
        case color(UInt32, id: Int)
        /// `\alpha` / `\1a`...`\4a`: an alpha 0...255 (0: opaque; -1 when the code has no value) for
        /// colour `id` (0: `\alpha`, every colour).
        case alpha(Int, id: Int)
        /// `\fn`: a font name, nil: back to the style's.
        case fontName(String?)
        /// `\fs`: a font size, -1: back to the style's.
        case fontSize(Int)
        /// `\an` / `\a`: numpad alignment, -1: the style's.
        case alignment(Int)
        /// `\r[Style]`: every override cancelled, then `style` ("" for the event's).
        case cancelOverrides(String)
        /// `\move` / `\pos`.
        case move(x1: Int, y1: Int, x2: Int, y2: Int)
    }

    /// The override codes and text runs of `text` (FFmpeg's `ff_ass_split_override_codes`),
    /// and whether the text was well formed (false: an override block without its `}`, the
    /// codes read up to there).
    public static func codes(_ text: String) -> (codes: [Code], complete: Bool) {
        let b = Array(text.utf8)
        var out: [Code] = []
        var run: [UInt8] = []
        var i = 0
        func flush() {
            if !run.isEmpty { out.append(.text(String(decoding: run, as: UTF8.self))); run.removeAll() }
        }
        func at(_ k: Int) -> UInt8? { k < b.count ? b[k] : nil }
        func isEnd(_ k: Int) -> Bool { at(k) == 0x5C || at(k) == 0x7D }   // '\' or '}'
        while i < b.count {
            if b[i] == 0x5C, let n = at(i + 1), n == 0x6E || n == 0x4E {
                flush()
                out.append(.newLine(forced: n == 0x4E))
                i += 2
            } else if b[i] == 0x7B, at(i + 1) == 0x5C {
                flush()
                i += 1
                while at(i) == 0x5C {
                    // the code's name and argument run to the next '\' or '}'
                    var j = i + 1
                    while j < b.count, b[j] != 0x5C, b[j] != 0x7D { j += 1 }
                    let body = String(decoding: b[(i + 1)..<j], as: UTF8.self)
                    if j >= b.count { return (out, false) }
                    if let code = overrideCode(body) { out.append(code) }
                    i = j
                }
                guard at(i) == 0x7D else { return (out, false) }
                i += 1
            } else {
                run.append(b[i])
                i += 1
            }
        }
        flush()
        return (out, true)
    }

    /// One override code's body (without its `\`), as `ass_split.c`'s patterns read it; nil for
    /// a code the writers do not use.
    static func overrideCode(_ body: String) -> Code? {
        let s = Substring(body)
        func rest(after p: String) -> Substring? { s.hasPrefix(p) ? s.dropFirst(p.count) : nil }
        if let f = s.first, "bisu".contains(f) {
            let arg = s.dropFirst()
            if arg.isEmpty { return .style(f, close: false) }
            if arg.first == "0" || arg.first == "1" { return arg.count == 1 ? .style(f, close: arg.first == "0") : nil }
        }
        func colorArg(_ a: Substring) -> UInt32?? {
            if a.isEmpty { return .some(nil) }
            guard a.hasPrefix("&H"), a.hasSuffix("&"), a.count > 3, let v = UInt32(a.dropFirst(2).dropLast(), radix: 16) else { return nil }
            return .some(v)
        }
        if let a = rest(after: "c"), let c = colorArg(a) { return .color(c ?? 0xFFFF_FFFF, id: 0) }
        if let f = s.first, "1234".contains(f), s.dropFirst().first == "c", let c = colorArg(s.dropFirst(2)) {
            return .color(c ?? 0xFFFF_FFFF, id: Int(String(f)) ?? 0)
        }
        // `\alpha` is colour 0 (every colour), `\1a`...`\4a` one; no value: -1.
        if let f = s.first, "1234".contains(f), s.dropFirst().first == "a", let a = colorArg(s.dropFirst(2)) {
            return .alpha(a.map { Int($0 & 0xFF) } ?? -1, id: Int(String(f)) ?? 0)
        }
        if let a = rest(after: "alpha"), let c = colorArg(a) { return .alpha(c.map { Int($0 & 0xFF) } ?? -1, id: 0) }
        if let a = rest(after: "fn") { return .fontName(a.isEmpty ? nil : String(a.prefix(127))) }
        if let a = rest(after: "fs") {
            if a.isEmpty { return .fontSize(-1) }
            if let v = UInt32(a) { return .fontSize(Int(v)) }
        }
        if let a = rest(after: "an") {
            if a.isEmpty { return .alignment(-1) }
            if a.count == 1, let v = Int(a) { return .alignment(v) }
        } else if let a = rest(after: "a"), !a.hasPrefix("lpha") {
            if a.isEmpty { return .alignment(-1) }
            if a.count <= 2, let v = Int(a) { return .alignment((v & 3) + (v & 4 != 0 ? 6 : v & 8 != 0 ? 3 : 0)) }
        }
        if let a = rest(after: "r") { return .cancelOverrides(String(a.prefix(127))) }
        for name in ["move(", "pos("] {
            guard let a = rest(after: name), a.hasSuffix(")") else { continue }
            let v = a.dropLast().split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard v.allSatisfy({ $0 != nil }) else { continue }
            let n = v.map { $0! }
            if name == "pos(", n.count == 2 { return .move(x1: n[0], y1: n[1], x2: n[0], y2: n[1]) }
            if name == "move(", n.count == 4 || n.count == 6 { return .move(x1: n[0], y1: n[1], x2: n[2], y2: n[3]) }
        }
        return nil
    }

    /// The text without its override codes, line breaks as `\n` (FFmpeg's `text` encoder).
    public static func plainText(_ text: String) -> String {
        var out = ""
        for code in codes(text).codes {
            switch code {
            case .text(let t): out += t
            case .newLine: out += "\n"
            default: break
            }
        }
        return out
    }
}
