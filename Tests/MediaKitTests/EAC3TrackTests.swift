import XCTest
@testable import MediaKit

/// E-AC-3 into MP4 (``EAC3Track``) on hand-made frames: the dec3 fields, frames of 1 block joined
/// into samples of 6, and bad input as an error (or dropped before the first sample, as FFmpeg
/// drops it), never a trap. The files ffmpeg writes are compared in Tests/oracle/test_raw_audio.py.
final class EAC3TrackTests: XCTestCase {
    /// An independent E-AC-3 frame of 64 bytes at 48 kHz, 2/0 stereo, bsid 16, `blocks` 1 or 6.
    private func frame(blocks: Int) -> [UInt8] {
        var f = [UInt8](repeating: 0, count: 64)
        f[0] = 0x0B; f[1] = 0x77
        f[2] = 0x00; f[3] = 31                                  // strmtyp 0, substream 0, frmsiz 31
        f[4] = UInt8((blocks == 6 ? 3 : 0) << 4 | 2 << 1)        // fscod 0, numblkscod, acmod 2, lfeon 0
        f[5] = 16 << 3                                          // bsid 16
        return f
    }

    private func packet(_ data: [UInt8], _ dts: Int64) -> Packet {
        Packet(trackIndex: 0, pts: dts, dts: dts, duration: 256, isKeyframe: true, data: data, timeBase: Rational(1, 48000))
    }

    func testOneBlockFramesMakeSamplesOfSix() throws {
        var t = EAC3Track()
        for k in 0..<5 {
            XCTAssertNil(try t.take(packet(frame(blocks: 1), Int64(256 * k)), track: 0, hasSamples: false))
        }
        let sample = try XCTUnwrap(try t.take(packet(frame(blocks: 1), 1280), track: 0, hasSamples: false))
        XCTAssertEqual(sample.data.count, 6 * 64)
        XCTAssertEqual(sample.dts, 0)
        XCTAssertEqual(sample.duration, 1536)
        // 64 bytes for 256 samples at 48 kHz: 96 kbit/s; fscod 0, bsid 16, acmod 2, no dependents.
        XCTAssertEqual(t.dec3, [0x03, 0x00, 0x20, 0x04, 0x00])
        let whole = try XCTUnwrap(try t.take(packet(frame(blocks: 6), 1536), track: 0, hasSamples: true))
        XCTAssertEqual(whole.data, frame(blocks: 6))
    }

    func testBadInputIsDroppedFirstThenAnError() throws {
        var t = EAC3Track()
        XCTAssertNil(try t.take(packet([1, 2, 3], 0), track: 0, hasSamples: false))
        XCTAssertNil(t.dec3)
        XCTAssertThrowsError(try t.take(packet([1, 2, 3], 0), track: 0, hasSamples: true)) { e in
            XCTAssertEqual((e as? MediaError)?.kind, .invalidData, "\(e)")
        }
        _ = try t.take(packet(frame(blocks: 1), 0), track: 0, hasSamples: true)
        XCTAssertThrowsError(try t.take(packet(frame(blocks: 6), 256), track: 0, hasSamples: true)) { e in
            XCTAssertTrue("\(e)".contains("6 blocks"), "\(e)")
        }
        // Bytes after the first frame that are not a dependent frame.
        var u = EAC3Track()
        XCTAssertThrowsError(try u.take(packet(frame(blocks: 6) + [0x0B, 0x77, 0, 0], 0), track: 2, hasSamples: false)) { e in
            XCTAssertTrue("\(e)".contains("track 2 (eac3)"), "\(e)")
        }
    }
}
