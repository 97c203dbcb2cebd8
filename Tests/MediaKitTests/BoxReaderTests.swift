import XCTest
@testable import MediaKit

/// Oracle: ISO/IEC 14496-12 box layout, written out by hand in each test.
final class BoxReaderTests: XCTestCase {
    private func box(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + body.count)
        return [UInt8(size >> 24), UInt8((size >> 16) & 255), UInt8((size >> 8) & 255), UInt8(size & 255)] + Array(type.utf8) + body
    }

    func testChildCannotReadPastParent() {
        // A child that claims 100 bytes inside a 20-byte parent.
        let bytes: [UInt8] = [0, 0, 0, 100] + Array("stsz".utf8) + [UInt8](repeating: 0, count: 12)
        var r = BoxReader(bytes: bytes, base: 1000, start: 0, end: bytes.count, path: "moov/trak[0]", file: "x.mp4")
        XCTAssertThrowsError(try r.children { _, _ in }) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .invalidData)
            XCTAssertEqual(e.offset, 1000, "the offset is absolute in the file")
            XCTAssertTrue(e.description.contains("moov/trak[0]"), e.description)
            XCTAssertTrue(e.message.contains("stsz"), e.message)
        }
    }

    func testTableCountAboveWhatRemainsIsRefusedBeforeAllocating() {
        // stts declaring 2^31 entries with 8 bytes present.
        let body: [UInt8] = [0, 0, 0, 0, 0x80, 0, 0, 0] + [UInt8](repeating: 1, count: 8)
        var tables = SampleTables()
        var r = BoxReader(bytes: body, base: 0, start: 0, end: body.count, path: "stts", file: "x.mp4")
        XCTAssertThrowsError(try MovieBox.parseTable("stts", &r, into: &tables)) { error in
            XCTAssertEqual((error as! MediaError).kind, .limit)
        }
        let small: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 9] + [UInt8](repeating: 1, count: 8)
        r = BoxReader(bytes: small, base: 0, start: 0, end: small.count, path: "stts", file: "x.mp4")
        XCTAssertThrowsError(try MovieBox.parseTable("stts", &r, into: &tables)) { error in
            XCTAssertEqual((error as! MediaError).kind, .invalidData)
        }
    }

    func testLanguageCodes() {
        // ISO 639-2/T packed: each letter - 0x60 in 5 bits. "und" = 0x55C4, "eng" = 0x15C7.
        XCTAssertEqual(MovieBox.languageCode(0x55C4), "und")
        XCTAssertEqual(MovieBox.languageCode(0x15C7), "eng")
        // QuickTime Macintosh language codes: 0 English, 1 French.
        XCTAssertEqual(MovieBox.languageCode(0), "eng")
        XCTAssertEqual(MovieBox.languageCode(1), "fra")
    }

    func testRotationFromMatrix() {
        // 16.16 fixed point: (0, 1, -1, 0) is FFmpeg's -90 degrees.
        XCTAssertEqual(MP4Demuxer.rotation([0, 65536, 0, -65536, 0, 0, 0, 0, 1 << 30]), -90)
        XCTAssertEqual(MP4Demuxer.rotation([0, -65536, 0, 65536, 0, 0, 0, 0, 1 << 30]), 90)
        XCTAssertEqual(MP4Demuxer.rotation([-65536, 0, 0, 0, -65536, 0, 0, 0, 1 << 30]), 180)
        XCTAssertEqual(PicturePacker.clockwiseTurn(forRotation: -90), 90)
        XCTAssertEqual(PicturePacker.clockwiseTurn(forRotation: 90), 270)
    }

    func testAudioSpecificConfig() {
        // AAC-LC (2), 44.1 kHz (index 4), stereo: 00010 0100 0010 000 = 0x12 0x10
        let asc = AudioSpecificConfig([0x12, 0x10])!
        XCTAssertEqual(asc.objectType, 2)
        XCTAssertEqual(asc.sampleRate, 44100)
        XCTAssertEqual(asc.channels, 2)
    }
}
