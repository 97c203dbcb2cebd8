/// The fixed-layout chunks of a CAF file (Apple's Core Audio Format Specification, "CAF File
/// Structure"): every number big-endian, a chunk a 4-byte type and a signed 64-bit size.
enum CAFChunks {
    /// The file header: `caff`, version 1, flags 0.
    static let fileHeader: [UInt8] = Array("caff".utf8) + [0, 1, 0, 0]
    /// A `data` chunk size of -1: the audio runs to the end of the file (a recording still
    /// being written, or one that was never closed).
    static let unknownSize: Int64 = -1

    /// The Audio Description chunk (`desc`, 32 bytes): the spec's `CAFAudioFormat`.
    struct Description: Equatable {
        /// mSampleRate: frames per second.
        var sampleRate: Double
        /// mFormatID: `lpcm`, `aac `, `alac`, `opus`, `flac`, `alaw`, `ulaw`, `ima4` ...
        var formatID: [UInt8]
        /// mFormatFlags: for `lpcm`, 1 = float, 2 = little-endian; for `alac`, the source bit depth.
        var formatFlags: UInt32
        /// mBytesPerPacket: 0 when packets vary in size (their sizes are in `pakt`).
        var bytesPerPacket: UInt32
        /// mFramesPerPacket: 0 when packets vary in frames (their counts are in `pakt`).
        var framesPerPacket: UInt32
        /// mChannelsPerFrame.
        var channels: UInt32
        /// mBitsPerChannel: 0 for compressed formats.
        var bitsPerChannel: UInt32

        /// The `lpcm` float flag.
        static let float: UInt32 = 1
        /// The `lpcm` little-endian flag.
        static let littleEndian: UInt32 = 2

        /// Reads the 32-byte body.
        init?(_ b: [UInt8]) {
            guard b.count >= 32 else { return nil }
            sampleRate = Double(bitPattern: CAFChunks.be64(b, 0))
            formatID = Array(b[8..<12])
            formatFlags = CAFChunks.be32(b, 12)
            bytesPerPacket = CAFChunks.be32(b, 16)
            framesPerPacket = CAFChunks.be32(b, 20)
            channels = CAFChunks.be32(b, 24)
            bitsPerChannel = CAFChunks.be32(b, 28)
        }

        init(sampleRate: Double, formatID: String, formatFlags: UInt32, bytesPerPacket: UInt32, framesPerPacket: UInt32,
             channels: UInt32, bitsPerChannel: UInt32) {
            self.sampleRate = sampleRate
            self.formatID = Array(formatID.utf8)
            self.formatFlags = formatFlags
            self.bytesPerPacket = bytesPerPacket
            self.framesPerPacket = framesPerPacket
            self.channels = channels
            self.bitsPerChannel = bitsPerChannel
        }

        /// The 32-byte body.
        var bytes: [UInt8] {
            CAFChunks.put64(sampleRate.bitPattern) + formatID + CAFChunks.put32(formatFlags) + CAFChunks.put32(bytesPerPacket) + CAFChunks.put32(framesPerPacket)
                + CAFChunks.put32(channels) + CAFChunks.put32(bitsPerChannel)
        }

        /// The format ID as text (non-printable bytes as FFmpeg prints them: `[17]`).
        var formatName: String { CAFChunks.fourCC(formatID) }
    }

    /// The Packet Table chunk's header (`pakt`, 24 bytes), before the packet descriptions.
    struct PacketTableHeader: Equatable {
        /// mNumberPackets.
        var packets: Int64
        /// mNumberValidFrames: the frames that are the signal.
        var validFrames: Int64
        /// mPrimingFrames: frames at the start that are not (an encoder's delay).
        var primingFrames: Int32
        /// mRemainderFrames: frames at the end that are not (padding of the last packet).
        var remainderFrames: Int32

        init?(_ b: [UInt8]) {
            guard b.count >= 24 else { return nil }
            packets = Int64(bitPattern: CAFChunks.be64(b, 0))
            validFrames = Int64(bitPattern: CAFChunks.be64(b, 8))
            primingFrames = Int32(bitPattern: CAFChunks.be32(b, 16))
            remainderFrames = Int32(bitPattern: CAFChunks.be32(b, 20))
        }

        init(packets: Int64, validFrames: Int64, primingFrames: Int32, remainderFrames: Int32) {
            self.packets = packets
            self.validFrames = validFrames
            self.primingFrames = primingFrames
            self.remainderFrames = remainderFrames
        }

        var bytes: [UInt8] {
            CAFChunks.put64(UInt64(bitPattern: packets)) + CAFChunks.put64(UInt64(bitPattern: validFrames))
                + CAFChunks.put32(UInt32(bitPattern: primingFrames)) + CAFChunks.put32(UInt32(bitPattern: remainderFrames))
        }
    }

    /// A packet description number (the spec's variable-length integer: 7 bits a byte, most
    /// significant first, the top bit set on every byte but the last).
    static func varint(_ value: Int64) -> [UInt8] {
        var v = UInt64(max(0, value))
        var out: [UInt8] = [UInt8(truncatingIfNeeded: v & 0x7F)]
        v >>= 7
        while v > 0 {
            out.insert(0x80 | UInt8(truncatingIfNeeded: v & 0x7F), at: 0)
            v >>= 7
        }
        return out
    }

    /// Reads a variable-length integer at `i` (moved past it); nil when the bytes end inside it
    /// or it needs more than 63 bits.
    static func readVarint(_ b: [UInt8], _ i: inout Int) -> Int64? {
        var v: Int64 = 0
        for _ in 0..<9 {
            guard i < b.count else { return nil }
            let c = b[i]
            i += 1
            v = v << 7 | Int64(c & 0x7F)
            if c & 0x80 == 0 { return v }
        }
        return nil
    }

    /// The Channel Layout chunk (`chan`): a layout tag, a bitmap, and channel descriptions.
    /// Only what maps to a WAV-style speaker mask is read; the rest gives 0 (no stated layout).
    enum ChannelLayout {
        /// kCAFChannelLayoutTag_UseChannelDescriptions.
        static let useDescriptions: UInt32 = 0
        /// kCAFChannelLayoutTag_UseChannelBitmap.
        static let useBitmap: UInt32 = 1 << 16
        /// Layout tags (the number of channels in the low 16 bits) and their speaker masks, as
        /// FFmpeg maps them (mov_chan.c): the spec's mono, stereo and MPEG layouts, surrounds at
        /// the side for 5.0 and 5.1 (FFmpeg's "5.1(side)"), the DVD layouts with an LFE, and 7.1
        /// (MPEG_7_1_C, back and side surrounds) and 7.1 with front centres (MPEG_7_1_A): the tags
        /// FFmpeg's caf muxer writes for these layouts. The other layouts are written as a
        /// bitmap, as FFmpeg writes them; so are 5.0 and 5.1 with back surrounds and quad with
        /// back ones, which FFmpeg writes as the side layout's tag (read back as the side
        /// layout): MediaKit keeps them apart.
        static let tags: [(tag: UInt32, mask: UInt64)] = [
            (100 << 16 | 1, 0x4),         // Mono: C
            (101 << 16 | 2, 0x3),         // Stereo: L R
            (113 << 16 | 3, 0x7),         // MPEG_3_0_A: L R C
            (108 << 16 | 4, 0x33),        // Quadraphonic: L R Ls Rs
            (115 << 16 | 4, 0x107),       // MPEG_4_0_A: L R C Cs
            (117 << 16 | 5, 0x607),       // MPEG_5_0_A: L R C Ls Rs
            (121 << 16 | 6, 0x60F),       // MPEG_5_1_A: L R C LFE Ls Rs
            (132 << 16 | 4, 0x603),       // AudioUnit_4 / ITU_2_2: L R Ls Rs (FFmpeg's "quad(side)")
            (133 << 16 | 3, 0xB),         // DVD_4: L R LFE (FFmpeg's "2.1")
            (131 << 16 | 3, 0x103),       // ITU_2_1: L R Cs (FFmpeg's "3.0(back)")
            (136 << 16 | 4, 0xF),         // DVD_10: L R C LFE (FFmpeg's "3.1")
            (137 << 16 | 5, 0x10F),       // DVD_11: L R C LFE Cs (FFmpeg's "4.1")
            (128 << 16 | 8, 0x63F),       // MPEG_7_1_C: L R C LFE Ls Rs Rls Rrs (FFmpeg's "7.1")
            (126 << 16 | 8, 0x6CF),       // MPEG_7_1_A: L R C LFE Ls Rs Lc Rc (FFmpeg's "7.1(wide-side)")
        ]

        /// The speaker mask of a `chan` body (0 when it states none this reader maps).
        static func mask(_ b: [UInt8]) -> UInt64 {
            guard b.count >= 12 else { return 0 }
            let tag = CAFChunks.be32(b, 0)
            switch tag {
            case useBitmap:
                return UInt64(CAFChunks.be32(b, 4))
            case useDescriptions:
                // Labels 1 to 18 (Left ... TopBackRight) are the WAV mask's bits 0 to 17.
                let n = Int(truncatingIfNeeded: CAFChunks.be32(b, 8))
                guard n > 0, n <= 64, b.count >= 12 + 20 * n else { return 0 }
                var mask: UInt64 = 0
                for k in 0..<n {
                    let label = CAFChunks.be32(b, 12 + 20 * k)
                    guard (1...18).contains(label) else { return 0 }
                    let bit = UInt64(1) << UInt64(label - 1)
                    guard mask & bit == 0 else { return 0 }
                    mask |= bit
                }
                return mask
            default:
                return tags.first { $0.tag == tag }?.mask ?? 0
            }
        }

        /// The `chan` body for `channels` with speaker mask `mask` (0: none stated, then mono and
        /// stereo as FFmpeg's defaults); nil when nothing can be said.
        static func body(channels: Int, mask: UInt64) -> [UInt8]? {
            var m = mask
            if m == 0 { m = channels == 1 ? 0x4 : channels == 2 ? 0x3 : 0 }
            guard m != 0, m.nonzeroBitCount == channels else { return nil }
            if let t = tags.first(where: { $0.mask == m && Int(truncatingIfNeeded: $0.tag & 0xFFFF) == channels }) {
                return CAFChunks.put32(t.tag) + CAFChunks.put32(0) + CAFChunks.put32(0)
            }
            guard m <= UInt64(UInt32.max) else { return nil }
            return CAFChunks.put32(useBitmap) + CAFChunks.put32(UInt32(truncatingIfNeeded: m)) + CAFChunks.put32(0)
        }
    }

    /// The Information chunk (`info`): a count, then that many pairs of NUL-terminated UTF-8
    /// strings (key, value). Pairs past the chunk's end are left out.
    static func information(_ b: [UInt8]) -> [(key: String, value: String)] {
        guard b.count >= 4 else { return [] }
        let count = Int(truncatingIfNeeded: CAFChunks.be32(b, 0))
        var out: [(String, String)] = []
        var i = 4
        func string() -> String? {
            guard i < b.count, let end = b[i...].firstIndex(of: 0) else { return nil }
            defer { i = end + 1 }
            return String(decoding: b[i..<end], as: UTF8.self)
        }
        while out.count < count, let key = string(), let value = string() {
            out.append((key, value))
        }
        return out
    }

    /// Four bytes as text, a byte outside printable ASCII as `[n]` (as FFmpeg prints tags).
    static func fourCC<C: Collection>(_ b: C) -> String where C.Element == UInt8 {
        b.map { (0x20..<0x7F).contains($0) ? String(UnicodeScalar($0)) : "[\($0)]" }.joined()
    }

    static func be32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(truncatingIfNeeded: b[i]) << 24 | UInt32(truncatingIfNeeded: b[i + 1]) << 16 | UInt32(truncatingIfNeeded: b[i + 2]) << 8
            | UInt32(truncatingIfNeeded: b[i + 3])
    }

    static func be64(_ b: [UInt8], _ i: Int) -> UInt64 {
        UInt64(be32(b, i)) << 32 | UInt64(be32(b, i + 4))
    }

    static func put32(_ v: UInt32) -> [UInt8] {
        [UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: v >> 16), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)]
    }

    static func put64(_ v: UInt64) -> [UInt8] {
        put32(UInt32(truncatingIfNeeded: v >> 32)) + put32(UInt32(truncatingIfNeeded: v))
    }

    /// A chunk header: the type and the size of the body.
    static func header(_ type: String, size: Int64) -> [UInt8] {
        Array(type.utf8) + put64(UInt64(bitPattern: size))
    }
}
