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

    /// An H.264 recovery point (a key frame by its SEI, as ffprobe flags it) is not where a seek
    /// lands: the pictures after it may be presented before it (an open GOP) without a mark, so
    /// its place in presentation order is not known; the IDR picture before it is.
    func testSeekSkipsH264RecoveryPoints() throws {
        let sei: [UInt8] = [0x06, 0x06, 0x01, 0x84, 0x80]   // recovery point SEI (payload type 6, 1 byte)
        var b: [UInt8] = []
        var starts: [Int] = []
        for nals in [[Self.aud, Self.sps, Self.pps, Self.idr], [Self.aud, Self.slice], [Self.aud, sei, Self.slice], [Self.aud, Self.slice]] {
            starts.append(b.count)
            for nal in nals { b += [0, 0, 0, 1] + nal }
        }
        let d = try RawVideoDemuxer(source: MemorySource(b), syntax: .h264)
        var keys: [Bool] = []
        while let p = try d.read() { keys.append(p.isKeyframe) }
        XCTAssertEqual(keys, [true, false, true, false], "the recovery point is a key frame, as ffprobe flags it")
        XCTAssertTrue(AnnexB.holdsH264IDR(Array(b[0..<starts[1]])))
        XCTAssertFalse(AnnexB.holdsH264IDR(Array(b[starts[2]..<starts[3]])))
        for frame in [2, 3] {
            try d.seek(to: Double(frame) / 25)
            XCTAssertEqual(try d.read()?.position, 0, "a seek to frame \(frame) lands on the IDR picture")
        }
    }

    /// HEVC leading pictures by their first slice's NAL unit type (H.265 table 7-1): RADL_N /
    /// RADL_R decodable, RASL_N / RASL_R dropped when decoding starts at the IRAP picture; a
    /// parameter set or SEI before the slice does not count.
    func testHEVCLeadingPictureKinds() {
        func unit(_ types: [Int]) -> [UInt8] { types.flatMap { [0, 0, 1, UInt8($0 << 1), 1, 0xAF, 0x80] } }
        XCTAssertEqual(AnnexB.hevcPlace(unit([35, 39, 6])), .decodableLeading)
        XCTAssertEqual(AnnexB.hevcPlace(unit([7])), .decodableLeading)
        XCTAssertEqual(AnnexB.hevcPlace(unit([8])), .skippedLeading)
        XCTAssertEqual(AnnexB.hevcPlace(unit([32, 33, 34, 9])), .skippedLeading)
        for trailing in [0, 1, 19, 20, 21] { XCTAssertEqual(AnnexB.hevcPlace(unit([trailing])), .trailing) }
        XCTAssertEqual(AnnexB.hevcPlace(unit([32, 33, 34])), .trailing, "no picture")
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
