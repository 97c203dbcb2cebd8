/// The FLAC bitstream structures the demuxers read (RFC 9639): STREAMINFO and frame headers,
/// and the Ogg FLAC mapping's first packet (`FlacInfo`).
///
/// One owner for all, used by the native FLAC demuxer, Ogg FLAC and Matroska.

/// A FLAC STREAMINFO metadata block (34 bytes), the codec's "magic cookie": FFmpeg's flac
/// decoder takes exactly these bytes as its extradata.
public struct FLACStreamInfo: Sendable, Hashable {
    /// The 34 bytes as stored.
    public let bytes: [UInt8]
    /// Smallest and largest block size in samples (the last frame may be smaller than the minimum).
    public let minBlockSize: Int, maxBlockSize: Int
    /// Smallest and largest frame size in bytes, 0 when not known.
    public let minFrameSize: Int, maxFrameSize: Int
    /// Samples per second.
    public let sampleRate: Int
    /// Channels (1 to 8).
    public let channels: Int
    /// Bits per sample (4 to 32).
    public let bitsPerSample: Int
    /// Samples per channel in the stream, 0 when not known.
    public let totalSamples: Int64

    /// The size of a STREAMINFO block.
    public static let size = 34

    /// Reads a STREAMINFO block; nil when `bytes` are not 34 bytes long.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count == Self.size else { return nil }
        let b = bytes
        self.bytes = b
        minBlockSize = Int(b[0]) << 8 | Int(b[1])
        maxBlockSize = Int(b[2]) << 8 | Int(b[3])
        minFrameSize = Int(b[4]) << 16 | Int(b[5]) << 8 | Int(b[6])
        maxFrameSize = Int(b[7]) << 16 | Int(b[8]) << 8 | Int(b[9])
        sampleRate = Int(b[10]) << 12 | Int(b[11]) << 4 | Int(b[12]) >> 4
        channels = Int((b[12] >> 1) & 7) + 1
        bitsPerSample = Int((b[12] & 1) << 4 | b[13] >> 4) + 1
        totalSamples = Int64(b[13] & 0x0F) << 32 | Int64(b[14]) << 24 | Int64(b[15]) << 16 | Int64(b[16]) << 8 | Int64(b[17])
    }
}

/// A FLAC frame header: the fields a demuxer needs to split, time and check frames.
public struct FLACFrameHeader: Sendable, Hashable {
    /// True for the variable block size strategy (`number` counts samples, not frames).
    public let isVariable: Bool
    /// Samples per channel in the frame.
    public let blockSize: Int
    /// Samples per second, 0 when the header refers to STREAMINFO.
    public let sampleRate: Int
    /// Channels (the channel assignment's count).
    public let channels: Int
    /// Bits per sample, 0 when the header refers to STREAMINFO.
    public let bitsPerSample: Int
    /// The frame number (fixed strategy) or the first sample's number (variable strategy).
    public let number: UInt64
    /// Header bytes, CRC-8 included.
    public let length: Int

    /// The longest frame header: sync and codes (4), a 7-byte coded number, 2 + 2 extra bytes, CRC-8.
    public static let maxLength = 16

    /// Parses the header at the start of `b`.
    /// - Parameter checkCRC: verify the header's CRC-8 (false when only the block size is wanted).
    /// - Returns: nil when the bytes are not a valid header (bad sync, a reserved code, a
    ///   malformed coded number, a CRC-8 mismatch) or are too short to hold one.
    public static func parse(_ b: UnsafeRawBufferPointer, checkCRC: Bool = true) -> FLACFrameHeader? {
        guard b.count >= 6, b[0] == 0xFF, b[1] & 0xFE == 0xF8 else { return nil }
        let blockCode = Int(b[2] >> 4), rateCode = Int(b[2] & 0x0F)
        let channelCode = Int(b[3] >> 4), sizeCode = Int((b[3] >> 1) & 7)
        guard blockCode != 0, rateCode != 15, channelCode <= 10, sizeCode != 3, b[3] & 1 == 0 else { return nil }
        // The UTF-8-style coded number.
        var at = 4
        let lead = b[at]
        var count = 0
        var number: UInt64
        if lead & 0x80 == 0 { number = UInt64(lead) } else {
            count = (~lead).leadingZeroBitCount - 1           // continuation bytes
            guard (1...6).contains(count) else { return nil }
            number = UInt64(lead) & (0x3F >> count)
        }
        at += 1
        guard b.count >= at + count else { return nil }
        for _ in 0..<count {
            guard b[at] & 0xC0 == 0x80 else { return nil }
            number = number << 6 | UInt64(b[at] & 0x3F)
            at += 1
        }
        let isVariable = b[1] & 1 == 1
        if !isVariable && count > 5 { return nil }            // a frame number has at most 31 bits
        var blockSize: Int
        switch blockCode {
        case 1: blockSize = 192
        case 2...5: blockSize = 576 << (blockCode - 2)
        case 6:
            guard b.count > at else { return nil }
            blockSize = Int(b[at]) + 1; at += 1
        case 7:
            guard b.count > at + 1 else { return nil }
            blockSize = (Int(b[at]) << 8 | Int(b[at + 1])) + 1; at += 2
        default: blockSize = 256 << (blockCode - 8)
        }
        let rates = [0, 88200, 176400, 192000, 8000, 16000, 22050, 24000, 32000, 44100, 48000, 96000]
        var rate = 0
        switch rateCode {
        case 0...11: rate = rates[rateCode]
        case 12:
            guard b.count > at else { return nil }
            rate = Int(b[at]) * 1000; at += 1
        case 13, 14:
            guard b.count > at + 1 else { return nil }
            rate = (Int(b[at]) << 8 | Int(b[at + 1])) * (rateCode == 14 ? 10 : 1); at += 2
        default: return nil
        }
        guard b.count > at else { return nil }
        if checkCRC && crc8(UnsafeRawBufferPointer(rebasing: b[0..<at])) != b[at] { return nil }
        let sizes = [0, 8, 12, 0, 16, 20, 24, 32]
        return FLACFrameHeader(isVariable: isVariable, blockSize: blockSize, sampleRate: rate,
                               channels: channelCode < 8 ? channelCode + 1 : 2, bitsPerSample: sizes[sizeCode],
                               number: number, length: at + 1)
    }

    /// Parses the header at the start of `bytes` (see ``parse(_:checkCRC:)``).
    public static func parse(_ bytes: [UInt8], checkCRC: Bool = true) -> FLACFrameHeader? {
        bytes.withUnsafeBytes { parse($0, checkCRC: checkCRC) }
    }

    /// The first sample's number, given the stream's nominal block size for the fixed strategy.
    public func firstSample(nominalBlockSize: Int) -> Int64 {
        isVariable ? Int64(number) : Int64(number) * Int64(nominalBlockSize)
    }

    /// CRC-8 (polynomial x^8 + x^2 + x + 1, initial 0), the frame header's check.
    static func crc8(_ b: UnsafeRawBufferPointer) -> UInt8 {
        var crc: UInt8 = 0
        for byte in b { crc = crc8Table[Int(crc ^ byte)] }
        return crc
    }

    static let crc8Table: [UInt8] = (0..<256).map { i in
        var c = UInt8(i)
        for _ in 0..<8 { c = c & 0x80 != 0 ? (c << 1) ^ 0x07 : c << 1 }
        return c
    }

    /// The CRC-16 `crc` continued over the eight bytes of `w` (first byte in the low bits),
    /// a table per byte position (slicing by 8).
    @inline(__always)
    static func crc16(_ crc: UInt16, eightBytes w: UInt64) -> UInt16 {
        crc16Slices.withUnsafeBufferPointer { t in
            func at(_ slice: Int, _ byte: UInt64) -> UInt16 { t[slice << 8 | Int(byte & 0xFF)] }
            return at(7, UInt64(crc >> 8) ^ w) ^ at(6, UInt64(crc & 0xFF) ^ (w >> 8)) ^ at(5, w >> 16) ^ at(4, w >> 24)
                ^ at(3, w >> 32) ^ at(2, w >> 40) ^ at(1, w >> 48) ^ at(0, w >> 56)
        }
    }

    /// Slice k, entry b: the CRC-16 register after byte b then k zero bytes, from 0.
    static let crc16Slices: [UInt16] = {
        var out = crc16Table
        for k in 1..<8 {
            for b in 0..<256 {
                let prev = out[(k - 1) << 8 | b]
                out.append((prev << 8) ^ crc16Table[Int(prev >> 8)])
            }
        }
        return out
    }()

    /// CRC-16 (polynomial x^16 + x^15 + x^2 + 1, initial 0), the frame footer's check: over a
    /// whole frame, footer included, it is 0.
    static let crc16Table: [UInt16] = (0..<256).map { i in
        var c = UInt16(i) << 8
        for _ in 0..<8 { c = c & 0x8000 != 0 ? (c << 1) ^ 0x8005 : c << 1 }
        return c
    }
}

/// The Ogg FLAC mapping's first packet and FLAC frame headers.
struct FlacInfo {
    var streamInfo: [UInt8]
    var sampleRate: Int
    var channels: Int
    var bitsPerSample: Int
    var headerPackets: Int

    static func parse(_ p: [UInt8]) -> Result<FlacInfo, OggHeaderProblem> {
        // 0x7F "FLAC" major minor, header count (16 bits), "fLaC", metadata block header (4), STREAMINFO (34)
        guard p.count >= 51, p[9...12].elementsEqual(Array("fLaC".utf8)) else {
            return .failure("the Ogg FLAC header is \(p.count) bytes or lacks fLaC; 51 bytes expected")
        }
        guard let info = FLACStreamInfo(Array(p[17..<51])) else {
            return .failure("the Ogg FLAC header's STREAMINFO is not 34 bytes")
        }
        return .success(FlacInfo(streamInfo: info.bytes, sampleRate: info.sampleRate, channels: info.channels,
                                 bitsPerSample: info.bitsPerSample, headerPackets: oggBE(p, 7, 2)))
    }

    /// Samples in a FLAC frame from its header, nil when the header is not readable.
    static func frameDuration(_ p: ArraySlice<UInt8>) -> Int? {
        FLACFrameHeader.parse(Array(p.prefix(FLACFrameHeader.maxLength)), checkCRC: false)?.blockSize
    }
}
