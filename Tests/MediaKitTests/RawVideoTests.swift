import Foundation
import XCTest
@testable import MediaKit

/// The raw video reader on hand-made streams: where the access units are cut (the rules of
/// FFmpeg's h264 / hevc parsers, whatever pieces the bytes come in), the probes, and a pipe.
/// The oracle tests (Tests/oracle/test_raw_video.py) compare real streams with ffprobe.
final class RawVideoTests: XCTestCase {
    // H.264 NAL units: an SPS / PPS pair whose bits the probe reads (sps id 0, pps id 0 -> sps 0),
    // slices with first_mb_in_slice 0 (ue "1") or 1 (ue "010").
    static let sps: [UInt8] = [0x67, 0x42, 0x00, 0x1E, 0x80]          // profile 66, level 30, sps id 0
    static let pps: [UInt8] = [0x68, 0xC0]                            // pps id 0, sps id 0
    static let idr: [UInt8] = [0x65, 0x88, 0x80, 0x11, 0x22]          // first_mb 0, slice_type 7 (ue 0001000)
    static let idrSecondSlice: [UInt8] = [0x65, 0x48, 0x80, 0x33]     // first_mb 1
    static let slice: [UInt8] = [0x41, 0x9A, 0x11, 0x22]              // first_mb 0, P
    static let aud: [UInt8] = [0x09, 0xF0]

    static func h264Stream() -> (bytes: [UInt8], cuts: [Int]) {
        var b: [UInt8] = []
        var cuts: [Int] = []
        func unit(_ nal: [UInt8], long: Bool = true) { b += (long ? [0, 0, 0, 1] : [0, 0, 1]) + nal }
        unit(aud); unit(sps); unit(pps); unit(idr); unit(idrSecondSlice, long: false)
        cuts.append(b.count); unit(slice)                                 // new picture: first_mb 0 <= 1
        cuts.append(b.count); unit(aud); unit(slice, long: false)          // an AUD ends the picture
        cuts.append(b.count + 1); b += [0]; unit(sps); unit(pps); unit(idr)   // 5 zeros: one goes with the SPS
        return (b, cuts)
    }

    func testH264CutsAsFFmpegWhateverThePieces() {
        let (bytes, cuts) = Self.h264Stream()
        for piece in [1, 2, 3, 7, bytes.count] {
            var splitter = AnnexBFrameSplitter(hevc: false)
            var found: [Int] = []
            var fed = 0, from = 0
            while fed < bytes.count {
                fed = min(bytes.count, fed + piece)
                let prefix = Array(bytes[0..<fed])
                while let (cut, _) = prefix.withUnsafeBufferPointer({ splitter.scan($0, from: from) }) {
                    found.append(cut)
                    splitter.restart()
                    from = cut
                }
                from = fed
            }
            XCTAssertEqual(found, cuts, "pieces of \(piece) bytes")
        }
    }

    func testDemuxerPacketsFromMemoryAndPipe() throws {
        let (bytes, cuts) = Self.h264Stream()
        XCTAssertEqual(RawVideoDemuxer.probeH264(bytes), 51)
        XCTAssertEqual(RawVideoDemuxer.probeHEVC(bytes), 0)
        XCTAssertEqual(RawVideoDemuxer.probeOBU(bytes), 0)
        let bounds = [0] + cuts + [bytes.count]
        for source in [MemorySource(bytes) as ByteSource, pipe(bytes)] {
            let d = try RawVideoDemuxer(source: source, syntax: .h264)
            var got: [(Int64, Int, Bool)] = []
            while let p = try d.read() {
                got.append((p.position, p.size, p.isKeyframe))
                XCTAssertEqual(p.pts, Packet.noTimestamp)
                XCTAssertEqual(p.duration, 48000)   // 25 frames a second in 1/1200000
            }
            XCTAssertEqual(got.map(\.0), bounds.dropLast().map(Int64.init))
            XCTAssertEqual(got.map(\.1), zip(bounds.dropFirst(), bounds).map { $0 - $1 })
            XCTAssertEqual(got.map(\.2), [true, false, false, true])
            // FFmpeg's extract_extradata: each set up to the next 00 00 01 (a 4-byte start code's zero kept).
            XCTAssertEqual(d.tracks[0].parameters.extradata, [0, 0, 1] + Self.sps + [0] + [0, 0, 1] + Self.pps + [0])
        }
    }

    /// A seek lands on the key frame presented at or before the time (frame `t * 25`); both
    /// `read()` and `read(track:)` go on from there (`read(track:)` once started from the
    /// beginning of the stream after every seek).
    func testSeekLandsOnTheKeyFrameForBothReads() throws {
        let (bytes, cuts) = Self.h264Stream()   // key frames: units 0 and 3
        let d = try RawVideoDemuxer(source: MemorySource(bytes), syntax: .h264)
        for (frame, unit) in [(3, 3), (2, 0), (0, 0), (9, 3)] {
            let at = unit == 0 ? 0 : Int64(cuts[unit - 1])
            try d.seek(to: Double(frame) / 25)
            XCTAssertEqual(try d.read()?.position, at, "read() after a seek to frame \(frame)")
            try d.seek(to: Double(frame) / 25)
            XCTAssertEqual(try d.read(track: 0)?.position, at, "read(track:) after a seek to frame \(frame)")
        }
    }

    /// An H.264 recovery point (a key frame by its SEI, as ffprobe flags it) whose leading
    /// pictures cannot be counted (here: the SPS ends before its picture order count fields) is
    /// not where a seek lands: the IDR picture before it is.
    func testSeekSkipsH264RecoveryPointsItCannotPlace() throws {
        let sei: [UInt8] = [0x06, 0x06, 0x01, 0x84, 0x80]   // recovery point SEI (payload type 6, 1 byte)
        var b: [UInt8] = []
        for nals in [[Self.aud, Self.sps, Self.pps, Self.idr], [Self.aud, Self.slice], [Self.aud, sei, Self.slice], [Self.aud, Self.slice]] {
            for nal in nals { b += [0, 0, 0, 1] + nal }
        }
        let d = try RawVideoDemuxer(source: MemorySource(b), syntax: .h264)
        var keys: [Bool] = []
        while let p = try d.read() { keys.append(p.isKeyframe) }
        XCTAssertEqual(keys, [true, false, true, false], "the recovery point is a key frame, as ffprobe flags it")
        for frame in [2, 3] {
            try d.seek(to: Double(frame) / 25)
            XCTAssertEqual(try d.read()?.position, 0, "a seek to frame \(frame) lands on the IDR picture")
        }
    }

    /// Bits written most significant first, with Exp-Golomb codes, for hand-made parameter sets
    /// and slice headers (H.264 7.2); `bytes` ends them with the RBSP stop bit.
    private struct BitWriter {
        var bits: [Bool] = []
        mutating func u(_ value: Int, _ n: Int) { for k in stride(from: n - 1, through: 0, by: -1) { bits.append(value >> k & 1 == 1) } }
        mutating func ue(_ value: Int) {
            let n = (value + 1).bitWidth - (value + 1).leadingZeroBitCount
            u(0, n - 1)
            u(value + 1, n)
        }
        func bytes(header: UInt8) -> [UInt8] {
            var all = bits + [true]
            while all.count % 8 != 0 { all.append(false) }
            return [header] + stride(from: 0, to: all.count, by: 8).map { i in all[i..<(i + 8)].reduce(0) { $0 << 1 | ($1 ? 1 : 0) } }
        }
    }

    /// An open-GOP H.264 stream (POC type 0, 4-bit pic_order_cnt_lsb) in decoding order:
    /// IDR (POC 0), P 6, B 2, B 4, then a recovery point (SEI with `recoveryFrames`) on an
    /// intra (`intra`) picture with POC 12, B 8 and B 10 (its leading pictures), P 18 (lsb 2:
    /// the count wraps), B 14, B 16. Presentation order: decode indices 0 2 3 1 5 6 4 8 9 7.
    private static func openGOPStream(recoveryFrames: Int = 0, intra: Bool = true) -> (bytes: [UInt8], starts: [Int]) {
        var sps = BitWriter()
        sps.u(66, 8); sps.u(0, 8); sps.u(30, 8); sps.ue(0)     // profile, constraints, level, id
        sps.ue(0); sps.ue(0); sps.ue(0)                         // log2_max_frame_num 4, POC type 0, lsb 4 bits
        sps.ue(2); sps.u(0, 1); sps.ue(0); sps.ue(0)            // 2 reference frames, one macroblock
        sps.u(1, 1); sps.u(1, 1); sps.u(0, 1); sps.u(0, 1)      // frame_mbs_only, direct_8x8, no crop, no VUI
        var pps = BitWriter()
        pps.ue(0); pps.ue(0); pps.u(0, 2)
        var sei = BitWriter()
        sei.u(6, 8); sei.u(1, 8)
        var payload = BitWriter()
        payload.ue(recoveryFrames); payload.u(0, 4)
        sei.bits += payload.bits
        while sei.bits.count % 8 != 0 { sei.bits.append(false) }
        // (slice type, POC, frame_num, NAL header): I 7, P 5, B 6; 0x65 IDR, 0x41 reference, 0x01 not.
        let pictures: [(Int, Int, Int, UInt8)] = [(7, 0, 0, 0x65), (5, 6, 1, 0x41), (6, 2, 2, 0x01), (6, 4, 2, 0x01),
                                                  (intra ? 7 : 5, 12, 2, 0x41), (6, 8, 3, 0x01), (6, 10, 3, 0x01),
                                                  (5, 18, 3, 0x41), (6, 14, 4, 0x01), (6, 16, 4, 0x01)]
        var b: [UInt8] = [], starts: [Int] = []
        for (k, (type, poc, frameNum, header)) in pictures.enumerated() {
            starts.append(b.count)
            var nals: [[UInt8]] = [Self.aud]
            if k == 0 { nals += [sps.bytes(header: 0x67), pps.bytes(header: 0x68)] }
            if k == 4 { nals.append(sei.bytes(header: 0x06)) }
            var slice = BitWriter()
            slice.ue(0); slice.ue(type); slice.ue(0); slice.u(frameNum, 4)
            if header == 0x65 { slice.ue(0) }                  // idr_pic_id
            slice.u(poc % 16, 4)
            slice.u(0x5A5A, 16)                                // the rest of the slice
            nals.append(slice.bytes(header: header))
            for nal in nals { b += [0, 0, 0, 1] + nal }
        }
        return (b, starts)
    }

    /// H.264 leading pictures found by picture order count (H.264 8.2.1.1): the recovery point
    /// starts, its two leading B-pictures are skipped ones, the wrapped lsb of the P picture after
    /// them still counts as later; and a seek lands on the recovery point for the frames
    /// presented from it on (its place: decoding index 4 + 2 leading pictures = frame 6).
    func testH264RecoveryPointsAreStartsWithTheirLeadingPictures() throws {
        let (b, starts) = Self.openGOPStream()
        var order = LeadingPictures(codec: .h264)
        var got: [(Bool, LeadingPictures.Place)] = []
        let d = try RawVideoDemuxer(source: MemorySource(b), syntax: .h264)
        while let p = try d.read() {
            let r = order.next(p.data, isKeyframe: p.isKeyframe)
            got.append((r.start, r.place))
        }
        XCTAssertEqual(got.map(\.0), [true, false, false, false, true, false, false, false, false, false])
        XCTAssertEqual(got.map(\.1), [.trailing, .trailing, .trailing, .trailing, .trailing, .skippedLeading, .skippedLeading,
                                      .trailing, .trailing, .trailing])
        for (frame, unit) in [(0, 0), (5, 0), (6, 4), (9, 4)] {
            try d.seek(to: Double(frame) / 25)
            XCTAssertEqual(try d.read()?.position, Int64(starts[unit]), "a seek to frame \(frame)")
        }
        // Not starts: a recovery point with frames to go before it is whole, one on a P picture.
        for (frames, intra) in [(1, true), (0, false)] {
            let (b, _) = Self.openGOPStream(recoveryFrames: frames, intra: intra)
            var order = LeadingPictures(codec: .h264)
            let d = try RawVideoDemuxer(source: MemorySource(b), syntax: .h264)
            var starts: [Bool] = []
            while let p = try d.read() { starts.append(order.next(p.data, isKeyframe: p.isKeyframe).start) }
            XCTAssertEqual(starts, [true] + Array(repeating: false, count: 9), "recovery_frame_cnt \(frames), intra \(intra)")
        }
    }

    /// Seeks go on from the key frames earlier seeks passed: in any order, each lands where a
    /// first seek on a fresh demuxer lands (the open-GOP stream above, repeated: IDR pictures,
    /// recovery points with leading pictures; and the stream of IDR pictures only).
    func testSeeksInAnyOrderLandWhereAFirstSeekLands() throws {
        let (gop, _) = Self.openGOPStream()
        for bytes in [gop + gop + gop, Self.h264Stream().bytes + Self.h264Stream().bytes] {
            var frames = 0
            let count = try RawVideoDemuxer(source: MemorySource(bytes), syntax: .h264)
            while try count.read() != nil { frames += 1 }
            func firstSeek(_ frame: Int) throws -> Int64? {
                let d = try RawVideoDemuxer(source: MemorySource(bytes), syntax: .h264)
                try d.seek(to: Double(frame) / 25)
                return try d.read()?.position
            }
            let expected = try (0...frames + 1).map(firstSeek)
            XCTAssertGreaterThan(Set(expected.compactMap { $0 }).count, 2, "the stream has several places to land")
            let d = try RawVideoDemuxer(source: MemorySource(bytes), syntax: .h264)
            for frame in [frames + 1, 3, 17, 0, 25, 6, 5, 16, 29, frames - 1, 1, 13, 12] where frame <= frames + 1 {
                try d.seek(to: Double(frame) / 25)
                XCTAssertEqual(try d.read()?.position, expected[frame], "a seek to frame \(frame)")
            }
        }
    }

    /// HEVC leading pictures by their first slice's NAL unit type (H.265 table 7-1): RADL_N /
    /// RADL_R decodable, RASL_N / RASL_R dropped when decoding starts at the IRAP picture; a
    /// parameter set or SEI before the slice does not count.
    func testHEVCLeadingPictureKinds() {
        func unit(_ types: [Int]) -> [UInt8] { types.flatMap { [0, 0, 1, UInt8($0 << 1), 1, 0xAF, 0x80] } }
        XCTAssertEqual(LeadingPictures.hevcPlace(unit([35, 39, 6])), .decodableLeading)
        XCTAssertEqual(LeadingPictures.hevcPlace(unit([7])), .decodableLeading)
        XCTAssertEqual(LeadingPictures.hevcPlace(unit([8])), .skippedLeading)
        XCTAssertEqual(LeadingPictures.hevcPlace(unit([32, 33, 34, 9])), .skippedLeading)
        for trailing in [0, 1, 19, 20, 21] { XCTAssertEqual(LeadingPictures.hevcPlace(unit([trailing])), .trailing) }
        XCTAssertEqual(LeadingPictures.hevcPlace(unit([32, 33, 34])), .trailing, "no picture")
    }

    func testFrameRateParsing() {
        XCTAssertEqual(RawVideoDemuxer.frameRate(parsing: "30000/1001"), Rational(30000, 1001))
        XCTAssertEqual(RawVideoDemuxer.frameRate(parsing: "25"), Rational(25, 1))
        XCTAssertEqual(RawVideoDemuxer.frameRate(parsing: "29.97"), Rational(2997, 100))
        for bad in ["0", "-1", "1/0", "x", ""] { XCTAssertNil(RawVideoDemuxer.frameRate(parsing: bad), bad) }
    }

    private func pipe(_ bytes: [UInt8]) -> ByteSource {
        var offset = 0
        return CallbackSource(name: "-", size: nil, read: { buffer in
            let n = min(buffer.count, bytes.count - offset, 3)
            for k in 0..<n { buffer[k] = bytes[offset + k] }
            offset += n
            return n
        }, seek: nil)
    }
}
