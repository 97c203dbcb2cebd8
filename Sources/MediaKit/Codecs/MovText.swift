/// 3GPP timed text (`tx3g`, FFmpeg's `mov_text`; 3GPP TS 26.245): the sample entry's defaults
/// and the samples (a 16-bit text length, the UTF-8 text, then modifier boxes: `styl` style
/// runs, `hlit` highlight, `hclr` highlight colour, `twrp` wrap), turned into ASS dialogue text
/// as FFmpeg's `movtextdec.c` does.
public enum MovText {
    /// A style record (12 bytes): a run of characters and how it is drawn.
    public struct StyleRecord: Sendable, Hashable {
        /// First character of the run (characters, not bytes).
        public var start: Int
        /// The character after the run.
        public var end: Int
        /// Font, an id of the entry's font table.
        public var fontID: Int
        /// Face flags: 1 bold, 2 italic, 4 underline.
        public var face: UInt8
        /// Font size.
        public var fontSize: Int
        /// Colour, 0xRRGGBBAA.
        public var rgba: UInt32

        /// Bold, italic, underline.
        public var bold: Bool { face & 1 != 0 }
        /// See ``bold``.
        public var italic: Bool { face & 2 != 0 }
        /// See ``bold``.
        public var underline: Bool { face & 4 != 0 }

        static func parse(_ b: ArraySlice<UInt8>) -> StyleRecord {
            let i = b.startIndex
            func u16(_ k: Int) -> Int { Int(b[i + k]) << 8 | Int(b[i + k + 1]) }
            return StyleRecord(start: u16(0), end: u16(2), fontID: u16(4), face: b[i + 6], fontSize: Int(b[i + 7]),
                               rgba: UInt32(b[i + 8]) << 24 | UInt32(b[i + 9]) << 16 | UInt32(b[i + 10]) << 8 | UInt32(b[i + 11]))
        }

        /// The 12 bytes of the record.
        public var bytes: [UInt8] {
            [UInt8(start >> 8 & 0xFF), UInt8(start & 0xFF), UInt8(end >> 8 & 0xFF), UInt8(end & 0xFF),
             UInt8(fontID >> 8 & 0xFF), UInt8(fontID & 0xFF), face, UInt8(clamping: fontSize),
             UInt8(rgba >> 24), UInt8(rgba >> 16 & 0xFF), UInt8(rgba >> 8 & 0xFF), UInt8(rgba & 0xFF)]
        }
    }

    /// The defaults of a `tx3g` sample entry (TS 26.245 5.16): justification, background colour,
    /// text box, default style and font table.
    public struct Defaults: Sendable, Hashable {
        /// The default style record.
        public var style = StyleRecord(start: 0, end: 0, fontID: 1, face: 0, fontSize: 16, rgba: 0xFFFF_FFFF)
        /// Horizontal (0 left, 1 centre, -1 right) and vertical (0 top, 1 centre, -1 bottom) justification.
        public var horizontal: Int8 = 1, vertical: Int8 = -1
        /// Background colour, 0xRRGGBBAA.
        public var background: UInt32 = 0x0000_00FF
        /// Font table: id → name.
        public var fonts: [Int: String] = [1: "Serif"]

        /// The default font's name.
        public var fontName: String { fonts[style.fontID] ?? "Serif" }

        /// ASS's numpad alignment for the justification (FFmpeg's `mov_text_tx3g`).
        public var alignment: Int {
            let h = horizontal == 0 ? 1 : horizontal == 1 ? 2 : 3
            let v = vertical == 0 ? 7 : vertical == 1 ? 4 : 1
            return v + h - 1
        }

        /// The ASS style a SubRip writer compares with the defaults.
        public var assStyle: ASSText.Style {
            ASSText.Style(name: "Default", fontName: fontName, fontSize: style.fontSize,
                          primaryColor: (style.rgba >> 8 & 0xFF) << 16 | (style.rgba >> 16 & 0xFF) << 8 | style.rgba >> 24 & 0xFF,
                          bold: style.bold, italic: style.italic, underline: style.underline, alignment: alignment)
        }

        /// The defaults FFmpeg's `mov_text` encoder writes: centred at the bottom, white Arial 16
        /// (its ASS default style).
        public static let ffmpeg = Defaults(fonts: [1: "Arial"])
    }

    /// Reads the defaults from a `tx3g` sample entry (`entry`: the whole box, with its size and
    /// type, as ``CodecParameters/sampleEntry`` holds it) or from FFmpeg's extradata (the
    /// entry's body after the 8-byte SampleEntry fields). nil when it is too short.
    public static func defaults(entry: [UInt8]) -> Defaults? {
        var body = entry[...]
        if entry.count >= 8, entry[4...7].elementsEqual("tx3g".utf8) { body = entry.dropFirst(16) }
        guard body.count >= 38 else { return nil }
        let i = body.startIndex
        var d = Defaults()
        d.horizontal = Int8(bitPattern: body[i + 4])
        d.vertical = Int8(bitPattern: body[i + 5])
        d.background = UInt32(body[i + 6]) << 24 | UInt32(body[i + 7]) << 16 | UInt32(body[i + 8]) << 8 | UInt32(body[i + 9])
        d.style = StyleRecord.parse(body[(i + 18)..<(i + 30)])
        d.fonts = [:]
        // ftab: size, 'ftab', count, then (id 16, name length 8, name)
        var k = i + 30
        if body.endIndex - k >= 10, body[(k + 4)..<(k + 8)].elementsEqual("ftab".utf8) {
            let count = Int(body[k + 8]) << 8 | Int(body[k + 9])
            k += 10
            for _ in 0..<count {
                guard body.endIndex - k >= 3 else { break }
                let id = Int(body[k]) << 8 | Int(body[k + 1]), n = Int(body[k + 2])
                guard body.endIndex - k - 3 >= n else { break }
                d.fonts[id] = String(decoding: body[(k + 3)..<(k + 3 + n)], as: UTF8.self)
                k += 3 + n
            }
        }
        return d
    }

    /// A `tx3g` sample entry (the whole box) for `defaults`, as FFmpeg's `mov_text` encoder
    /// writes it: display flags 0, the justification, background, an empty text box, the
    /// default style and a font table.
    public static func sampleEntry(_ defaults: Defaults = .ffmpeg) -> [UInt8] {
        func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        var ftab: [UInt8] = [UInt8(defaults.fonts.count >> 8), UInt8(defaults.fonts.count & 0xFF)]
        for (id, name) in defaults.fonts.sorted(by: { $0.key < $1.key }) {
            let n = Array(name.utf8.prefix(255))
            ftab += [UInt8(id >> 8), UInt8(id & 0xFF), UInt8(n.count)] + n
        }
        var body: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 1] + be32(0) + [UInt8(bitPattern: defaults.horizontal), UInt8(bitPattern: defaults.vertical)]
        body += be32(defaults.background) + [UInt8](repeating: 0, count: 8) + defaults.style.bytes
        body += be32(UInt32(8 + ftab.count)) + Array("ftab".utf8) + ftab
        return be32(UInt32(8 + body.count)) + Array("tx3g".utf8) + body
    }

    /// The text of a sample without its boxes (nil for the 2-byte empty sample that ends the
    /// cue before it).
    /// - Throws: `.invalidData` for a sample under 2 bytes or a 2-byte sample that is not 0.
    public static func text(_ sample: [UInt8]) throws -> [UInt8]? {
        guard sample.count >= 2 else {
            throw MediaError(.invalidData, "a tx3g sample starts with a 16-bit text length, this one has \(sample.count) bytes", context: "tx3g sample")
        }
        let n = Int(sample[0]) << 8 | Int(sample[1])
        if sample.count == 2 {
            guard n == 0 else { throw MediaError(.invalidData, "a 2-byte tx3g sample must be 0 (an empty cue), it says \(n)", context: "tx3g sample") }
            return nil
        }
        return Array(sample[2..<min(sample.count, 2 + n)])
    }

    /// The sample as ASS dialogue text (FFmpeg's `text_to_ass`): style runs become `{\b1}`
    /// `{\i1}` `{\u1}` `{\fsN}` `{\fnName}` `{\1c&HBBGGRR&}` `{\1a&HAA&}` against `defaults`,
    /// ended by `{\r}`; a highlight colours its run; `\n` becomes `\N`, `\r` is dropped. nil for
    /// an empty sample. Boxes that run past the sample or repeat end the reading of boxes
    /// (the text is still given), as in FFmpeg.
    /// - Throws: as ``text(_:)``.
    public static func assText(_ sample: [UInt8], defaults: Defaults) throws -> String? {
        guard let text = try text(sample) else { return nil }
        var styles: [StyleRecord] = []
        var hlit: (start: Int, end: Int)?
        var hclr: UInt32?
        var wrap: UInt8?
        var k = 2 + text.count
        boxes: while sample.count - k >= 8 {
            var size = Int(sample[k]) << 24 | Int(sample[k + 1]) << 16 | Int(sample[k + 2]) << 8 | Int(sample[k + 3])
            let type = String(decoding: sample[(k + 4)..<(k + 8)], as: UTF8.self)
            var head = 8
            if size == 1 {
                guard sample.count - k >= 16 else { break }
                size = 0
                for j in 8..<16 { size = size << 8 | Int(sample[k + j]) }
                head = 16
            }
            guard size >= head, size <= sample.count - k else { break }
            let body = sample[(k + head)..<(k + size)]
            switch type {
            case "styl":
                guard body.count >= 2 else { break boxes }
                let n = Int(body[body.startIndex]) << 8 | Int(body[body.startIndex + 1])
                guard body.count >= 2 + 12 * n else { break boxes }
                styles = []
                for e in 0..<n {
                    let r = StyleRecord.parse(body[(body.startIndex + 2 + 12 * e)...])
                    if r.end < r.start || (styles.last.map { r.start < $0.end } ?? false) { styles = []; break boxes }
                    if r.start != r.end { styles.append(r) }
                }
            case "hlit":
                guard body.count >= 4 else { break boxes }
                let b = body.startIndex
                hlit = (Int(body[b]) << 8 | Int(body[b + 1]), Int(body[b + 2]) << 8 | Int(body[b + 3]))
            case "hclr":
                guard body.count >= 4 else { break boxes }
                let b = body.startIndex
                hclr = UInt32(body[b]) << 24 | UInt32(body[b + 1]) << 16 | UInt32(body[b + 2]) << 8 | UInt32(body[b + 3])
            case "twrp":
                guard body.count >= 1 else { break boxes }
                wrap = body[body.startIndex]
            default: break
            }
            k += size
        }
        func bgr(_ rgba: UInt32) -> String { String(((rgba >> 8) & 0xFF) << 16 | ((rgba >> 16) & 0xFF) << 8 | (rgba >> 24) & 0xFF, radix: 16, uppercase: true) }
        let d = defaults.style
        var out = ""
        if !text.isEmpty, let wrap { out += wrap == 1 ? "{\\q1}" : "{\\q2}" }
        var entry = 0
        var color = d.rgba
        var pos = 0, i = 0
        while i < text.count {
            if entry < styles.count {
                if pos == styles[entry].end {
                    out += "{\\r}"
                    color = d.rgba
                    entry += 1
                }
                if entry < styles.count, pos == styles[entry].start {
                    let s = styles[entry]
                    if s.bold != d.bold { out += "{\\b\(s.bold ? 1 : 0)}" }
                    if s.italic != d.italic { out += "{\\i\(s.italic ? 1 : 0)}" }
                    if s.underline != d.underline { out += "{\\u\(s.underline ? 1 : 0)}" }
                    if s.fontSize != d.fontSize { out += "{\\fs\(s.fontSize)}" }
                    if s.fontID != d.fontID, let name = defaults.fonts[s.fontID] { out += "{\\fn\(name)}" }
                    if s.rgba >> 8 != d.rgba >> 8 { color = s.rgba; out += "{\\1c&H\(bgr(s.rgba))&}" }
                    if s.rgba & 0xFF != d.rgba & 0xFF {
                        let a = String(255 - (s.rgba & 0xFF), radix: 16, uppercase: true)
                        out += "{\\1a&H\(a.count < 2 ? "0" + a : a)&}"
                    }
                }
            }
            if let h = hlit {
                if pos == h.start {
                    out += hclr.map { "{\\2c&H\(bgr($0))&}" } ?? "{\\1c&H000000&}{\\2c&HFFFFFF&}"
                }
                if pos == h.end {
                    out += hclr != nil ? "{\\2c&H\(bgr(d.rgba))&}" : "{\\1c&H\(bgr(color))&}{\\2c&H\(bgr(d.rgba))&}"
                }
            }
            let len = utf8Length(text, at: i)
            switch text[i] {
            case 0x0D: break
            case 0x0A: out += "\\N"
            default: out += String(decoding: text[i..<i + len], as: UTF8.self)
            }
            i += len
            pos += 1
        }
        return out
    }

    /// The length of the UTF-8 character at `i` (1 for a byte that starts none, as FFmpeg
    /// steps over an invalid byte).
    static func utf8Length(_ b: [UInt8], at i: Int) -> Int {
        let c = b[i]
        let n = c < 0x80 ? 1 : c >> 5 == 0b110 ? 2 : c >> 4 == 0b1110 ? 3 : c >> 3 == 0b11110 ? 4 : 1
        guard i + n <= b.count else { return 1 }
        for k in 1..<max(n, 1) where b[i + k] & 0xC0 != 0x80 { return 1 }
        return n
    }
}
