/// WebVTT text facts: the file signature, cue timestamps, and the ISO/IEC 14496-30 boxes that
/// carry cues in MP4 (`wvtt` samples: `vttc` cue boxes with `iden` / `sttg` / `payl`, `vtte`
/// empty boxes, `vtta` comments).
public enum WebVTTCue {
    /// How sure the WebVTT reader is that `head` is a WebVTT file (FFmpeg's `webvtt_probe`):
    /// 100 when it starts (after a UTF-8 byte-order mark) with `WEBVTT` then the end, a blank or
    /// a line break, else 0.
    public static func probe(_ head: [UInt8]) -> Int {
        let body = head.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(head.dropFirst(3)) : head
        guard body.starts(with: Array("WEBVTT".utf8)) else { return 0 }
        guard body.count > 6 else { return 100 }
        return [0x0A, 0x0D, 0x09, 0x20, 0x00].contains(body[6]) ? 100 : 0
    }

    /// A cue timestamp `hh:mm:ss.ttt` or `mm:ss.ttt` in milliseconds (FFmpeg's `read_ts`: the
    /// fraction is read as a number of milliseconds), and how many bytes it took; nil when
    /// `bytes` does not start with one.
    public static func timestamp(_ bytes: ArraySlice<UInt8>) -> (ms: Int64, length: Int)? {
        let a = Array(bytes)
        var s = SubRipTiming.Scanner(a)
        if let h = s.int(signed: false), s.literal(0x3A), let m = s.int(signed: false), s.literal(0x3A),
           let sec = s.int(signed: false), s.literal(0x2E), let ms = s.int(signed: false) {
            return (((h &* 3600) &+ (m &* 60) &+ sec) &* 1000 &+ ms, s.i)
        }
        s = SubRipTiming.Scanner(a)
        if let m = s.int(signed: false), s.literal(0x3A), let sec = s.int(signed: false), s.literal(0x2E),
           let ms = s.int(signed: false) {
            return (((m &* 60) &+ sec) &* 1000 &+ ms, s.i)
        }
        return nil
    }

    /// One cue of an MP4 `wvtt` sample.
    public struct Box: Sendable, Hashable {
        /// The `iden` box: the cue identifier ("" when absent).
        public var identifier: String
        /// The `sttg` box: the cue settings ("" when absent).
        public var settings: String
        /// The `payl` box: the cue text.
        public var payload: String
    }

    /// The cues of one `wvtt` sample: every `vttc` box in order; `vtte` (no cue) and `vtta`
    /// (a comment) give none.
    /// - Throws: `.invalidData` naming the box when a box size runs past the sample or is
    ///   below 8.
    public static func boxes(_ sample: [UInt8]) throws -> [Box] {
        var cues: [Box] = []
        try walk(sample[...]) { type, body in
            guard type == "vttc" else { return }
            var cue = Box(identifier: "", settings: "", payload: "")
            try walk(body) { t, b in
                let text = String(decoding: b, as: UTF8.self)
                switch t {
                case "iden": cue.identifier = text
                case "sttg": cue.settings = text
                case "payl": cue.payload = text
                default: break
                }
            }
            cues.append(cue)
        }
        return cues
    }

    /// Calls `visit` with each box (type, body) of `bytes`.
    static func walk(_ bytes: ArraySlice<UInt8>, _ visit: (String, ArraySlice<UInt8>) throws -> Void) throws {
        var i = bytes.startIndex
        while i < bytes.endIndex {
            guard bytes.endIndex - i >= 8 else {
                throw MediaError(.invalidData, "\(bytes.endIndex - i) bytes left where a WebVTT box header (8) was expected", context: "wvtt sample")
            }
            let size = Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
            let type = String(decoding: bytes[(i + 4)..<(i + 8)], as: UTF8.self)
            guard size >= 8, size <= bytes.endIndex - i else {
                throw MediaError(.invalidData, "the '\(type)' box declares \(size) bytes, \(bytes.endIndex - i) are left", context: "wvtt sample")
            }
            try visit(type, bytes[(i + 8)..<(i + size)])
            i += size
        }
    }

    /// A `vttc` box (with `iden`, `sttg` when not empty, and `payl`), as MP4 `wvtt` samples
    /// hold a cue; ``vtte`` is the empty sample.
    public static func box(_ cue: Box) -> [UInt8] {
        func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
            let n = UInt32(8 + body.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + Array(type.utf8) + body
        }
        var body: [UInt8] = []
        if !cue.identifier.isEmpty { body += box("iden", Array(cue.identifier.utf8)) }
        if !cue.settings.isEmpty { body += box("sttg", Array(cue.settings.utf8)) }
        body += box("payl", Array(cue.payload.utf8))
        return box("vttc", body)
    }

    /// The `vtte` box: a `wvtt` sample with no cue (a gap between cues).
    public static let vtte: [UInt8] = [0, 0, 0, 8] + Array("vtte".utf8)

    /// A WebM `D_WEBVTT/*` block as FFmpeg's matroskaenc writes a cue and its matroskadec reads
    /// it: the identifier line, the settings line, then the cue text.
    public static func webMBlock(identifier: String?, settings: String?, text: [UInt8]) -> [UInt8] {
        Array("\(identifier ?? "")\n\(settings ?? "")\n".utf8) + text
    }

    /// The identifier, settings and text of a WebM `D_WEBVTT/*` block (FFmpeg's
    /// `matroska_parse_webvtt`: line feeds and carriage returns at the end of the text
    /// dropped); nil for a block without the two line feeds or with no text.
    public static func parseWebMBlock(_ block: [UInt8]) -> (identifier: String, settings: String, text: [UInt8])? {
        guard let idEnd = block.firstIndex(of: 0x0A), let settingsEnd = block[(idEnd + 1)...].firstIndex(of: 0x0A) else { return nil }
        var end = block.count
        while end > settingsEnd + 1, block[end - 1] == 0x0A || block[end - 1] == 0x0D { end -= 1 }
        guard end > settingsEnd + 1 else { return nil }
        return (String(decoding: block[..<idEnd], as: UTF8.self), String(decoding: block[(idEnd + 1)..<settingsEnd], as: UTF8.self),
                Array(block[(settingsEnd + 1)..<end]))
    }
}
