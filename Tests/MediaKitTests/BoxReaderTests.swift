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
        XCTAssertEqual(Track.displayRotation([0, 65536, 0, -65536, 0, 0, 0, 0, 1 << 30]), -90)
        XCTAssertEqual(Track.displayRotation([0, -65536, 0, 65536, 0, 0, 0, 0, 1 << 30]), 90)
        XCTAssertEqual(Track.displayRotation([-65536, 0, 0, 0, -65536, 0, 0, 0, 1 << 30]), 180)
        // FFmpeg 5.1's autorotation (ffmpeg_filter.c) for the eight quarter-turn matrices.
        let one: Int32 = 65536, w: Int32 = 1 << 30
        func orientation(_ a: Int32, _ b: Int32, _ c: Int32, _ d: Int32) -> String {
            PictureOrientation(displayMatrix: [a * one, b * one, 0, c * one, d * one, 0, 0, 0, w]).description
        }
        XCTAssertEqual(orientation(1, 0, 0, 1), "upright")
        XCTAssertEqual(orientation(0, 1, -1, 0), "transpose=clock")
        XCTAssertEqual(orientation(0, -1, 1, 0), "transpose=cclock")
        XCTAssertEqual(orientation(-1, 0, 0, -1), "hflip,vflip")
        XCTAssertEqual(orientation(0, 1, 1, 0), "transpose=cclock_flip")
        XCTAssertEqual(orientation(0, -1, -1, 0), "transpose=clock_flip")
        XCTAssertEqual(orientation(-1, 0, 0, 1), "hflip")
        XCTAssertEqual(orientation(1, 0, 0, -1), "vflip")
    }

    func testAudioSpecificConfig() {
        // AAC-LC (2), 44.1 kHz (index 4), stereo: 00010 0100 0010 000 = 0x12 0x10
        let asc = AudioSpecificConfig([0x12, 0x10])!
        XCTAssertEqual(asc.objectType, 2)
        XCTAssertEqual(asc.sampleRate, 44100)
        XCTAssertEqual(asc.channels, 2)
        XCTAssertEqual(asc.outputSampleRate, 44100)
        XCTAssertEqual(asc.outputChannels, 2)
    }

    /// HE-AAC signalling (ISO/IEC 14496-3 1.6.2.1 and 1.6.6), with the output FFmpeg's AAC
    /// decoder gives for it (what ffprobe reports).
    func testHEAACSignalling() {
        // Sync extension: LC 8 kHz mono, GA config 000, 0x2B7, SBR (5), present, 16 kHz; no
        // PS flag, so PS may follow and the output is stereo (the corpus's tone_heaac.m4a).
        let sync = AudioSpecificConfig([0x15, 0x88, 0x56, 0xE5, 0xC0])!
        XCTAssertEqual(sync.sampleRate, 8000)
        XCTAssertEqual(sync.channels, 1)
        XCTAssertEqual(sync.sbr, 1)
        XCTAssertEqual(sync.outputSampleRate, 16000)
        XCTAssertEqual(sync.outputChannels, 2)
        // Same, then 0x548 and PS = 0: the output stays mono.
        let noPS = AudioSpecificConfig([0x15, 0x88, 0x56, 0xE5, 0xC5, 0x48, 0x00])!
        XCTAssertEqual(noPS.ps, 0)
        XCTAssertEqual(noPS.outputChannels, 1)
        // Hierarchical: object type 5, core 22.05 kHz (7) stereo, extension 44.1 kHz (4), core LC:
        // 00101 0111 0010 0100 00010 000 -> 0x2B 0x92 0x08 0x00
        let hier = AudioSpecificConfig([0x2B, 0x92, 0x08, 0x00])!
        XCTAssertEqual(hier.objectType, 2)
        XCTAssertEqual(hier.outputSampleRate, 44100)
        XCTAssertEqual(hier.outputChannels, 2)
        // Object type 29 (PS), core 24 kHz (6) mono, extension 48 kHz (3), core LC:
        // 11101 0110 0001 0011 00010 000 -> 0xEB 0x09 0x88 0x00
        let ps = AudioSpecificConfig([0xEB, 0x09, 0x88, 0x00])!
        XCTAssertEqual(ps.ps, 1)
        XCTAssertEqual(ps.outputSampleRate, 48000)
        XCTAssertEqual(ps.outputChannels, 2)
        // Plain LC 8 kHz mono (implicit signalling at most): the core's facts.
        let lc = AudioSpecificConfig([0x15, 0x88])!
        XCTAssertEqual(lc.sbr, -1)
        XCTAssertEqual(lc.outputSampleRate, 8000)
        XCTAssertEqual(lc.outputChannels, 1)
    }
}
