/// The 4-byte header of an MPEG audio frame (ISO/IEC 11172-3 2.4.1.3, ISO/IEC 13818-3 for
/// MPEG-2 low sampling frequencies, and the MPEG-2.5 extension): Layer I, II or III.
public struct MPEGAudioHeader: Sendable, Hashable {
    /// 1 (MPEG-1), 2 (MPEG-2) or 25 (MPEG-2.5).
    public let version: Int
    /// 1, 2 or 3.
    public let layer: Int
    /// Samples per second.
    public let sampleRate: Int
    /// Bits per second; 0 for free format (the frame size then comes from the next header).
    public let bitRate: Int
    /// 1 or 2.
    public let channels: Int
    /// True when the frame carries a 16-bit CRC after the header.
    public let hasCRC: Bool
    /// The padding slot (1 byte, 4 for Layer I).
    public let padding: Bool
    /// Channel mode: 0 stereo, 1 joint stereo, 2 dual channel, 3 mono.
    public let channelMode: Int
    /// The four bytes as one number (for comparing the fields that stay fixed in a stream).
    public let raw: UInt32

    /// Samples per channel in one frame.
    public var samplesPerFrame: Int {
        switch layer {
        case 1: return 384
        case 2: return 1152
        default: return version == 1 ? 1152 : 576
        }
    }

    /// The frame's size in bytes (header included); 0 for free format.
    public var frameSize: Int {
        guard bitRate > 0 else { return 0 }
        if layer == 1 { return (12 * bitRate / sampleRate + (padding ? 1 : 0)) * 4 }
        let factor = layer == 3 && version != 1 ? 72 : 144
        return factor * bitRate / sampleRate + (padding ? 1 : 0)
    }

    /// The codec's FFmpeg name: "mp1", "mp2" or "mp3".
    public var codec: CodecID { CodecID("mp\(layer)") }

    /// Offset of the Xing / Info tag inside a Layer III frame (after the side information).
    public var sideInfoEnd: Int {
        let mono = channelMode == 3
        let side = version == 1 ? (mono ? 17 : 32) : (mono ? 9 : 17)
        return 4 + (hasCRC ? 2 : 0) + side
    }

    /// Offset of a Xing / Info tag inside a Layer III frame: after the side information as if
    /// there were no CRC. LAME writes the tag there whatever the protection bit says, and
    /// FFmpeg's mp3 demuxer reads it there (4 bytes of header, then 32, 17 or 9 bytes).
    public var vbrTagOffset: Int { sideInfoEnd - (hasCRC ? 2 : 0) }

    private static let rates = [44100, 48000, 32000]
    // kbit/s at [(MPEG-1 ? 0 : 3) + layer - 1) * 15 + index]: MPEG-1 Layers I-III, then MPEG-2 / 2.5
    // Layers I-III (one flat table: a header is parsed per frame, this is the parser's hot path).
    private static let bitRates: [Int] = [
        0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448,
        0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384,
        0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320,
        0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256,
        0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160,
        0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160,
    ]

    /// The bit rates (bits per second) an MPEG audio Layer III stream at `sampleRate` can be
    /// coded at, the free format left out: ISO/IEC 11172-3's table for MPEG-1 (32, 44.1,
    /// 48 kHz: 32 to 320 kbit/s), ISO/IEC 13818-3's for MPEG-2 (16, 22.05, 24 kHz) and MPEG 2.5
    /// (8, 11.025, 12 kHz): 8 to 160 kbit/s. Empty for a rate MPEG audio does not have.
    public static func layerIIIBitRates(sampleRate: Int) -> [Int] {
        guard let i = rates.firstIndex(where: { sampleRate == $0 || sampleRate == $0 / 2 || sampleRate == $0 / 4 }) else { return [] }
        let row = rates[i] == sampleRate ? 2 : 5     // MPEG-1 Layer III, else MPEG-2 / 2.5 Layer III
        return (1..<15).map { bitRates[row * 15 + $0] * 1000 }
    }

    /// The largest Layer III frame, in bytes, at `bitRate` and `sampleRate` (a padded frame):
    /// `144 * bitRate / sampleRate + 1` for MPEG-1, `72 * bitRate / sampleRate + 1` for MPEG-2
    /// and 2.5 (their frames have half the samples), as ISO/IEC 11172-3 2.4.3.1 sizes frames.
    public static func layerIIIMaximumFrameSize(bitRate: Int, sampleRate: Int) -> Int {
        guard sampleRate > 0 else { return 0 }
        let coefficient = rates.contains(sampleRate) ? 144 : 72
        return coefficient * bitRate / sampleRate + 1
    }

    /// Parses four bytes; nil when they are not a valid header (no sync, a reserved version,
    /// layer, bit rate or sample rate).
    public init?(_ b0: UInt8, _ b1: UInt8, _ b2: UInt8, _ b3: UInt8) {
        guard b0 == 0xFF, b1 & 0xE0 == 0xE0 else { return nil }
        let v = Int((b1 >> 3) & 3), l = Int((b1 >> 1) & 3)
        let bitIndex = Int(b2 >> 4), rateIndex = Int((b2 >> 2) & 3)
        guard v != 1, l != 0, bitIndex != 15, rateIndex != 3 else { return nil }
        version = v == 3 ? 1 : (v == 2 ? 2 : 25)
        layer = 4 - l
        let base = Self.rates[rateIndex]
        sampleRate = version == 1 ? base : (version == 2 ? base / 2 : base / 4)
        bitRate = Self.bitRates[((version == 1 ? 0 : 3) + layer - 1) * 15 + bitIndex] * 1000
        hasCRC = b1 & 1 == 0
        padding = (b2 >> 1) & 1 == 1
        channelMode = Int(b3 >> 6)
        channels = channelMode == 3 ? 1 : 2
        raw = UInt32(b0) << 24 | UInt32(b1) << 16 | UInt32(b2) << 8 | UInt32(b3)
    }

    /// Parses the first four bytes of `bytes` from `index`.
    public init?(_ bytes: [UInt8], at index: Int = 0) {
        guard index >= 0, index + 4 <= bytes.count else { return nil }
        self.init(bytes[index], bytes[index + 1], bytes[index + 2], bytes[index + 3])
    }

    /// True when `other` can be the next frame of the same stream: same version, layer and
    /// sample rate (FFmpeg's mpegaudio parser's check, the header mask 0xFFFE0C00; the channel
    /// mode may change from frame to frame).
    public func continues(_ other: MPEGAudioHeader) -> Bool {
        raw & 0xFFFE_0C00 == other.raw & 0xFFFE_0C00
    }
}

/// The VBR header of an MPEG audio stream's first frame: Xing / Info (with LAME's tag), or
/// Fraunhofer's VBRI.
public struct MPEGAudioVBRHeader: Sendable, Hashable {
    /// "Xing", "Info" (a CBR file's tag) or "VBRI".
    public let kind: String
    /// Audio frames in the stream (not counting this one), when stated.
    public let frames: Int?
    /// Bytes of audio in the stream, when stated.
    public let bytes: Int?
    /// Xing's 100-entry table of contents (byte position / 256 per percent of the duration), or
    /// VBRI's (converted to the same form), when stated.
    public let tableOfContents: [UInt8]?
    /// LAME's encoder delay in samples (0 without a LAME tag).
    public let encoderDelay: Int
    /// LAME's padding in samples (0 without a LAME tag).
    public let encoderPadding: Int
    /// The encoder string of a LAME tag ("LAME3.100"), empty without one.
    public let encoder: String

    /// Reads the VBR header of the frame `frame` (whole, header first) described by `header`;
    /// nil when the frame carries none (it is then an audio frame).
    public init?(frame: [UInt8], header: MPEGAudioHeader) {
        func u32(_ i: Int) -> Int { Int(be32(frame, i)) }
        func be16(_ i: Int) -> Int { Int(frame[i]) << 8 | Int(frame[i + 1]) }
        let x = header.vbrTagOffset
        if header.layer == 3, x + 8 <= frame.count, let tag = String(bytes: frame[x..<x + 4], encoding: .ascii), tag == "Xing" || tag == "Info" {
            kind = tag
            let flags = u32(x + 4)
            var at = x + 8
            var frames: Int?, bytes: Int?, toc: [UInt8]?
            if flags & 1 != 0, at + 4 <= frame.count { frames = u32(at); at += 4 }
            if flags & 2 != 0, at + 4 <= frame.count { bytes = u32(at); at += 4 }
            if flags & 4 != 0, at + 100 <= frame.count { toc = Array(frame[at..<at + 100]); at += 100 }
            if flags & 8 != 0 { at += 4 }
            self.frames = frames
            self.bytes = bytes
            self.tableOfContents = toc
            // LAME's tag: 9 bytes of version string, then at +21 the 24-bit delay / padding pair.
            if at + 24 <= frame.count, let name = String(bytes: frame[at..<at + 4], encoding: .ascii), name == "LAME" || name == "Lavf" || name == "Lavc" {
                encoder = String(decoding: frame[at..<at + 9].filter { $0 >= 0x20 && $0 < 0x7F }, as: UTF8.self)
                let d = Int(frame[at + 21]) << 16 | Int(frame[at + 22]) << 8 | Int(frame[at + 23])
                encoderDelay = d >> 12
                encoderPadding = d & 0xFFF
            } else {
                encoder = ""
                encoderDelay = 0
                encoderPadding = 0
            }
            return
        }
        // VBRI: 32 bytes after the 4-byte header, whatever the layer's side information.
        let v = 4 + 32
        guard v + 26 <= frame.count, frame[v] == 0x56, frame[v + 1] == 0x42, frame[v + 2] == 0x52, frame[v + 3] == 0x49 else { return nil }
        kind = "VBRI"
        bytes = u32(v + 10)
        frames = u32(v + 14)
        let entries = be16(v + 18), scale = be16(v + 20), entrySize = be16(v + 22)
        var toc: [UInt8]?
        if entries > 0, (1...4).contains(entrySize), v + 26 + entries * entrySize <= frame.count, let total = bytes, total > 0 {
            // Cumulative byte positions per entry, mapped onto Xing's 100 percent steps.
            var positions: [Int] = [0]
            for e in 0..<entries {
                var n = 0
                for k in 0..<entrySize { n = n << 8 | Int(frame[v + 26 + e * entrySize + k]) }
                positions.append(positions.last! + n * max(1, scale))
            }
            toc = (0..<100).map { percent in
                let i = min(positions.count - 1, percent * entries / 100)
                return UInt8(min(255, positions[i] * 256 / total))
            }
        }
        tableOfContents = toc
        encoder = ""
        encoderDelay = 0
        encoderPadding = 0
    }
}
