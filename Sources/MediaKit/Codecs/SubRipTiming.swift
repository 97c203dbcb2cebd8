/// SubRip (`.srt`) text facts: the timing line `00:00:01,000 --> 00:00:02,500 X1:.. X2:.. Y1:.. Y2:..`,
/// the probe, and the timestamps SubRip and WebVTT files write. Read as FFmpeg's `srtdec.c`
/// reads them (a `sscanf` pattern: blanks allowed around numbers, `,` or `.` before the
/// milliseconds, the box optional).
public enum SubRipTiming {
    /// One parsed timing line: start and end in milliseconds, and the display box when the
    /// line gives one (-1 for a coordinate it does not give).
    public struct Line: Sendable, Hashable {
        /// Start, in milliseconds.
        public var start: Int64
        /// End, in milliseconds (may be before ``start`` in a damaged file).
        public var end: Int64
        /// The `X1 X2 Y1 Y2` box (4 values, -1 for one the line does not give), nil when the line has none.
        public var box: [Int32]?

        /// The box as FFmpeg's SubRip muxer writes it after the end time (`X1:10 X2:20 Y1:5 Y2:6`).
        public var settings: String? {
            box.map { "X1:\($0[0]) X2:\($0[1]) Y1:\($0[2]) Y2:\($0[3])" }
        }
    }

    /// A C `sscanf` over bytes: just the conversions the subtitle timing patterns use.
    struct Scanner {
        let b: [UInt8]
        var i = 0
        init(_ bytes: [UInt8]) { b = bytes }
        var atEnd: Bool { i >= b.count }
        var current: UInt8? { i < b.count ? b[i] : nil }
        static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (0x09...0x0D).contains(c) }
        mutating func skipSpace() { while let c = current, Self.isSpace(c) { i += 1 } }
        /// `%d` (`signed`) or `%u`: blanks, a sign, at least one digit; nil when none.
        mutating func int(signed: Bool = true) -> Int64? {
            let save = i
            skipSpace()
            var negative = false
            if let c = current, c == 0x2B || c == 0x2D { negative = c == 0x2D; i += 1 }
            var v: Int64 = 0, digits = 0
            while let c = current, (0x30...0x39).contains(c) {
                if digits < 18 { v = v * 10 + Int64(c - 0x30) }
                digits += 1
                i += 1
            }
            if digits == 0 { i = save; return nil }
            _ = signed
            return negative ? -v : v
        }
        /// A literal byte.
        mutating func literal(_ c: UInt8) -> Bool {
            guard current == c else { return false }
            i += 1
            return true
        }
        /// A literal string; a blank in it matches any run of blanks (none included), as in a
        /// `sscanf` format.
        mutating func literal(_ s: String) -> Bool {
            let save = i
            for c in s.utf8 {
                if c == 0x20 { skipSpace(); continue }
                guard literal(c) else { i = save; return false }
            }
            return true
        }
        /// One of `set`.
        mutating func one(of set: String) -> Bool {
            guard let c = current, set.utf8.contains(c) else { return false }
            i += 1
            return true
        }
    }

    /// Parses `hh:mm:ss,mmm --> hh:mm:ss,mmm[ X1:n X2:n Y1:n Y2:n]` (FFmpeg's `get_event_info`);
    /// nil when the line is not a timing line.
    public static func parse(_ line: [UInt8]) -> Line? {
        var s = Scanner(line)
        func stamp() -> Int64? {
            guard let h = s.int(), s.literal(0x3A), let m = s.int(), s.literal(0x3A), let sec = s.int(),
                  s.one(of: ",."), let ms = s.int() else { return nil }
            return ((h &* 3600) &+ (m &* 60) &+ sec) &* 1000 &+ ms
        }
        guard let start = stamp(), s.literal(" --> "), let end = stamp() else { return nil }
        var result = Line(start: start, end: end, box: nil)
        // "%*[ ]X1:%d X2:%d Y1:%d Y2:%d": at least one space, then as many as match.
        guard s.current == 0x20 else { return result }
        while s.current == 0x20 { s.i += 1 }
        var box: [Int32] = [-1, -1, -1, -1]
        for (k, name) in ["X1:", "X2:", "Y1:", "Y2:"].enumerated() {
            if k > 0 && !s.literal(" ") { break }
            guard s.literal(name), let v = s.int() else { break }
            box[k] = Int32(truncatingIfNeeded: v)
        }
        if box[0] != -1 { result.box = box }
        return result
    }

    /// How sure the SubRip reader is that `head` is a SubRip file (FFmpeg's `srt_probe`): 100
    /// when the first non-blank line (after a UTF-8 byte-order mark) is a number and the next
    /// one a timing line, else 0.
    public static func probe(_ head: [UInt8]) -> Int {
        var i = head.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while i < head.count, head[i] == 0x0D || head[i] == 0x0A { i += 1 }
        func line() -> [UInt8]? {
            var l: [UInt8] = []
            // ff_subtitles_read_line into FFmpeg's 64-byte probe buffer: at most 63 bytes, the
            // line's end taken, then one more \r and one more \n.
            while i < head.count, l.count < 63 {
                let c = head[i]
                i += 1
                if c == 0 { return nil }
                if c == 0x0D || c == 0x0A { break }
                l.append(c)
            }
            if i < head.count, head[i] == 0x0D { i += 1 }
            if i < head.count, head[i] == 0x0A { i += 1 }
            return l
        }
        guard let first = line() else { return 0 }
        var s = Scanner(first)
        guard let n = s.int(), n >= 0, let second = line() else { return 0 }
        let body = second.first == 0x2D ? Array(second.dropFirst()) : second
        guard let c = body.first, (0x30...0x39).contains(c), second.containsSubsequence(Array(" --> ".utf8)) else { return 0 }
        return parse(second) == nil ? 0 : 100
    }

    /// `hh:mm:ss,mmm` (SubRip, `separator` ",") or `hh:mm:ss.mmm` (WebVTT, ".") for `ms`
    /// milliseconds, as FFmpeg's muxers write them (negative times are written as 0);
    /// `shortHours`: the hours left out under one hour (FFmpeg's WebVTT muxer).
    public static func format(_ ms: Int64, separator: Character = ",", shortHours: Bool = false) -> String {
        let t = max(0, ms)
        let h = t / 3_600_000, m = t / 60_000 % 60, s = t / 1000 % 60, f = t % 1000
        func pad(_ v: Int64, _ n: Int) -> String {
            let d = String(v)
            return d.count >= n ? d : String(repeating: "0", count: n - d.count) + d
        }
        let head = shortHours && h == 0 ? "" : pad(h, 2) + ":"
        return head + pad(m, 2) + ":" + pad(s, 2) + String(separator) + pad(f, 3)
    }
}

extension Array where Element == UInt8 {
    /// True when `needle` occurs in the array.
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, count >= needle.count else { return needle.isEmpty }
        for i in 0...(count - needle.count) where self[i] == needle[0] {
            if Array(self[i..<i + needle.count]) == needle { return true }
        }
        return false
    }
}
