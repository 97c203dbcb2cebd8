import Foundation
import MediaKitSIMD

/// H.264 and HEVC byte streams (ITU-T H.264 annex B, H.265 annex B): NAL units separated by
/// start codes (00 00 01 or 00 00 00 01), as raw `.h264` / `.hevc` files, MPEG-TS PES payloads
/// and some Matroska / MP4 writers' packets carry them; and the NAL unit facts every reader of
/// them needs (unit types, emulation prevention). The length-prefixed form MP4 and Matroska
/// store (avcC / hvcC `lengthSizeMinusOne`) is the other form of the same units.
enum AnnexB {
    /// The NAL units of `bytes`, in order, as ranges of `bytes` without their start codes.
    /// Bytes before the first start code are not a unit (a stream cut mid-unit); the trailing
    /// zero bytes of a unit (trailing_zero_8bits, or the first zero of a 4-byte start code)
    /// are not part of it. Empty units are left out. With `stopAfter`, the scan ends at the first
    /// unit whose header byte it accepts: that unit is the last, its range running to the end
    /// of `bytes` (the bytes after it are not searched for start codes).
    static func nalUnits(in bytes: [UInt8], stopAfter: ((UInt8) -> Bool)? = nil) -> [Range<Int>] {
        var units: [Range<Int>] = []
        var start: Int?
        let n = bytes.count
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, n >= 3 else { return }
            // Each 00 00 01 (``findStartCode``, vectorized).
            var i = 0
            while let code = findStartCode(base, from: i, count: n) {
                if let s = start { appendUnit(bytes, s, code, &units) }
                start = code + 3
                if let stopAfter, code + 3 < n, stopAfter(base[code + 3]) { return }
                i = code + 3
            }
        }
        if let s = start { appendUnit(bytes, s, n, &units) }
        return units
    }

    /// The index of the first 00 00 01 at or after `from` in the `count` bytes at `base`
    /// (an SSE2 scan in MediaKitSIMD: 16 positions per step), nil when there is none.
    @inline(__always)
    static func findStartCode(_ base: UnsafePointer<UInt8>, from: Int, count: Int) -> Int? {
        guard from + 2 < count else { return nil }
        let k = from + mediakit_find_start_code(base + from, count - from)
        return k < count ? k : nil
    }

    private static func appendUnit(_ bytes: [UInt8], _ start: Int, _ end: Int, _ units: inout [Range<Int>]) {
        var e = end
        while e > start && bytes[e - 1] == 0 { e -= 1 }
        if e > start { units.append(start..<e) }
    }

    /// Whether `bytes` begins with a start code (00 00 01, or 00 00 00 01 and longer runs of
    /// zeros before it): the test for a packet in Annex B form rather than length-prefixed.
    static func startsWithStartCode(_ bytes: [UInt8]) -> Bool {
        var i = 0
        while i < bytes.count && bytes[i] == 0 { i += 1 }
        return i >= 2 && i < bytes.count && bytes[i] == 1
    }

    /// `bytes` (Annex B) as length-prefixed NAL units, each preceded by its size in
    /// `lengthSize` big-endian bytes (4 unless the configuration record says otherwise);
    /// nil if a unit is too long for the length field.
    static func lengthPrefixed(_ bytes: [UInt8], lengthSize: Int = 4) -> [UInt8]? {
        let units = nalUnits(in: bytes)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + units.count * lengthSize)
        for u in units {
            guard lengthSize >= 4 || u.count < 1 << (8 * lengthSize) else { return nil }
            for k in stride(from: lengthSize - 1, through: 0, by: -1) { out.append(UInt8(truncatingIfNeeded: u.count >> (8 * k))) }
            out.append(contentsOf: bytes[u])
        }
        return out
    }

    /// Where the start codes of `bytes` are: the index of each 00 00 01 (the zeros of a longer
    /// start code before it are not counted).
    static func startCodes(in bytes: [UInt8]) -> [Int] {
        var found: [Int] = []
        let n = bytes.count
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, n >= 3 else { return }
            // Start codes cannot overlap, so each search goes on after the last one found.
            var i = 0
            while let code = findStartCode(base, from: i, count: n) {
                found.append(code)
                i = code + 3
            }
        }
        return found
    }

    /// The NAL units of `bytes` cut as FFmpeg's MP4 and Matroska muxers cut an Annex B packet
    /// or extradata (`ff_avc_parse_nal_units`), for bytes identical to theirs: a unit ends
    /// where the next 00 00 01 begins, less one zero byte (the first of a 4-byte start code);
    /// longer runs of zeros before a start code, and the zeros at the end of `bytes`
    /// (trailing_zero_8bits), stay in the unit before them. Bytes before the first start code
    /// are not a unit. Empty units are left out (FFmpeg writes them with length 0).
    static func sampleUnits(in bytes: [UInt8]) -> [Range<Int>] {
        let codes = startCodes(in: bytes)
        var units: [Range<Int>] = []
        for (k, c) in codes.enumerated() {
            let s = c + 3
            var e = k + 1 < codes.count ? codes[k + 1] : bytes.count
            if k + 1 < codes.count && e > s && bytes[e - 1] == 0 { e -= 1 }
            if e > s { units.append(s..<e) }
        }
        return units
    }

    /// The NAL units of `bytes` as FFmpeg's H.264 / HEVC stream splitter takes them (the
    /// `raw_size` of `ff_h2645_packet_split`, which extract_extradata copies into a stream's
    /// extradata): a unit runs from its start code to the next 00 00 01, the zeros before that
    /// (the first of a 4-byte start code) included. Empty units are left out.
    static func rawUnits(in bytes: [UInt8]) -> [Range<Int>] {
        let codes = startCodes(in: bytes)
        var units: [Range<Int>] = []
        for (k, c) in codes.enumerated() {
            let s = c + 3, e = k + 1 < codes.count ? codes[k + 1] : bytes.count
            if e > s { units.append(s..<e) }
        }
        return units
    }

    /// A NAL unit's payload without its emulation-prevention bytes (00 00 03 -> 00 00), to be
    /// read as RBSP (a parameter set's or slice header's bit fields).
    static func unescape(_ b: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        var zeros = 0
        for x in b {
            if zeros >= 2 && x == 3 { zeros = 0; continue }
            zeros = x == 0 ? zeros + 1 : 0
            out.append(x)
        }
        return out
    }

    /// The nal_unit_type of an H.264 NAL unit whose first byte is `header` (H.264 table 7-1):
    /// 1 non-IDR slice, 5 IDR slice, 6 SEI, 7 SPS, 8 PPS, 9 access unit delimiter.
    static func h264Type(_ header: UInt8) -> Int { Int(header & 0x1F) }

    /// The nal_unit_type of an HEVC NAL unit whose first byte is `header` (H.265 table 7-1):
    /// 0-31 VCL (16-23 IRAP), 32 VPS, 33 SPS, 34 PPS, 35 access unit delimiter, 39/40 SEI.
    static func hevcType(_ header: UInt8) -> Int { Int(header >> 1 & 0x3F) }

    /// The NAL unit type of the first slice (VCL unit, type below 32) in an HEVC access unit,
    /// nil when it holds none.
    static func firstHEVCSliceType(_ accessUnit: [UInt8]) -> Int? {
        let isSlice = { (header: UInt8) in hevcType(header) < 32 }
        guard let first = nalUnits(in: accessUnit, stopAfter: isSlice).last, isSlice(accessUnit[first.lowerBound]) else { return nil }
        return hevcType(accessUnit[first.lowerBound])
    }
}
