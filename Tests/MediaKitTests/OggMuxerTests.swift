import Foundation
import XCTest
@testable import MediaKit

/// The Ogg page writer and muxer against RFC 3533's rules and known values: the page CRC
/// (polynomial 0x04C11DB7, initial 0, no reflection, no final XOR: check value 0x89A1897F for
/// "123456789"), lacing (a packet of n bytes is n / 255 values of 255 and one of n % 255, so a
/// multiple of 255 ends with a 0), packets spanning pages (the `continued` flag, granule -1 on
/// a page where no packet ends), real pages of a corpus file rebuilt byte for byte, and a
/// muxed file read back by the demuxer.
final class OggMuxerTests: XCTestCase {
    func testCRCCheckValue() {
        XCTAssertEqual(OggCRC.update(0, Array("123456789".utf8)), 0x89A1_897F)
    }

    /// Every page of a real file, rebuilt from its parsed fields, is the same bytes (CRC included).
    func testRealPagesRebuildByteForByte() throws {
        for name in ["ogg_opus_stereo_tiny_155b.opus", "ogg_vorbis_stereo_1s.ogg"] {
            let url = try SharedMedia.file(name)
            let bytes = [UInt8](try Data(contentsOf: url))
            var reader = OggPageReader(source: MemorySource(bytes))
            var count = 0
            while let page = try reader.next() {
                let start = Int(page.offset)
                XCTAssertEqual(page.serialized(), Array(bytes[start..<(start + Int(page.size))]), "\(name) page \(count)")
                count += 1
            }
            XCTAssertGreaterThanOrEqual(count, 3, name)
        }
    }

    func testLacingOfPacketSizes() {
        var w = OggPageWriter(serial: 7)
        for (size, granule) in [(0, 10), (1, 20), (254, 30), (255, 40), (256, 50), (510, 60)] {
            w.append([UInt8](repeating: 0xAB, count: size), granule: Int64(granule))
        }
        w.finish()
        let pages = w.takePages()
        guard pages.count == 1 else { return XCTFail("\(pages.count) pages, 1 expected") }
        XCTAssertEqual(pages[0].segments, [0, 1, 254, 255, 0, 255, 1, 255, 255, 0])
        XCTAssertEqual(pages[0].body.count, 0 + 1 + 254 + 255 + 256 + 510)
        XCTAssertEqual(pages[0].granule, 60)
        XCTAssertEqual(pages[0].flags, [.beginning, .end])
    }

    /// A packet longer than a page's 255 lacing values: the first page is all 255s with
    /// granule -1 (no packet ends on it), the next is flagged continued and carries the end.
    func testPacketSpanningPages() throws {
        var w = OggPageWriter(serial: 0x1234_5678)
        w.append([1, 2, 3], granule: 100)
        w.endPage()
        let big = (0..<(255 * 300 + 7)).map { UInt8(truncatingIfNeeded: $0) }
        w.append(big, granule: 200)
        w.append([9], granule: 300)
        w.finish()
        let pages = w.takePages()
        guard pages.count == 3 else { return XCTFail("\(pages.count) pages, 3 expected") }
        XCTAssertEqual(pages.map(\.sequence), [0, 1, 2])
        XCTAssertEqual(pages[0].flags, [.beginning])
        XCTAssertEqual(pages[1].segments, [UInt8](repeating: 255, count: 255))
        XCTAssertEqual(pages[1].granule, -1)
        XCTAssertEqual(pages[1].flags, [])
        // The rest of the big packet (45 x 255 + 7) and the next packet on the last page,
        // whose granule position is the last packet's.
        XCTAssertEqual(pages[2].segments, [UInt8](repeating: 255, count: 45) + [7, 1])
        XCTAssertEqual(pages[2].flags, [.continued, .end])
        XCTAssertEqual(pages[2].granule, 300)
        // Read back: the page reader accepts every CRC and the body bytes are the packet's.
        let file = pages.flatMap { $0.serialized() }
        var reader = OggPageReader(source: MemorySource(file))
        var bodies: [UInt8] = []
        while let p = try reader.next() { bodies += p.body }
        XCTAssertEqual(bodies, [1, 2, 3] + big + [9])
        XCTAssertTrue(reader.warnings.isEmpty)
    }

    /// A packet ending exactly at the 255th lacing value of a page: its 0 terminator goes on
    /// the next page, which is then flagged continued (RFC 3533 section 5).
    func testTerminatorOnNextPage() {
        var w = OggPageWriter(serial: 1)
        w.append([UInt8](repeating: 1, count: 10), granule: 5)
        w.append([UInt8](repeating: 2, count: 254 * 255), granule: 6)
        w.finish()
        let pages = w.takePages()
        guard pages.count == 2 else { return XCTFail("\(pages.count) pages, 2 expected") }
        XCTAssertEqual(pages[0].segments, [10] + [UInt8](repeating: 255, count: 254))
        XCTAssertEqual(pages[0].granule, 5)
        XCTAssertEqual(pages[1].segments, [0])
        XCTAssertEqual(pages[1].flags, [.continued, .end])
        XCTAssertEqual(pages[1].granule, 6)
    }

    /// Opus packets muxed and read back by the demuxer: pre-skip, timestamps from -pre-skip,
    /// the end trim from the last granule position, and the file renamed into place.
    func testOpusRoundTrip() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("oggmux-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("t.opus").path
        var head = Array("OpusHead".utf8) + [1, 2]
        head += [0x38, 0x01] + [0x80, 0xBB, 0, 0] + [0, 0, 0]   // pre-skip 312, 48000 Hz, gain 0, family 0
        let muxer = try OggMuxer(path: path)
        let t = try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "opus", codecTag: "Opus", extradata: head, sampleRate: 48000, channels: 2),
                                   timeBase: Rational(1, 48000))
        // TOC 0xFC: config 31 (CELT FB 20 ms), stereo, code 0: 960 samples per packet.
        for i in 0..<120 {
            var p = Packet(trackIndex: t, pts: Int64(i * 960 - 312), dts: Int64(i * 960 - 312), duration: 960, isKeyframe: true,
                           data: [0xFC] + [UInt8](repeating: UInt8(i & 0xFF), count: 40), timeBase: Rational(1, 48000))
            if i == 119 { p.trimEnd = 500 }
            try muxer.write(p)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: path), "the target appears only at finish")
        try muxer.finish()
        let d = try OggDemuxer(path: path)
        XCTAssertEqual(d.tracks.first?.encoderDelay, 312)
        XCTAssertEqual(d.tracks.first?.encoderPadding, 500)
        XCTAssertEqual(d.tracks.first?.duration, Int64(120 * 960 - 500))
        var packets: [Packet] = []
        while let p = try d.read() { packets.append(p) }
        XCTAssertEqual(packets.count, 120)
        XCTAssertEqual(packets.first?.pts, -312)
        XCTAssertEqual(packets.first?.trimStart, 312)
        XCTAssertEqual(packets.last?.trimEnd, 500)
        XCTAssertEqual(packets[5].data, [0xFC] + [UInt8](repeating: 5, count: 40))
        XCTAssertTrue(d.warnings.isEmpty)
    }

    func testRefusals() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("oggmux-r-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let muxer = try OggMuxer(path: dir.appendingPathComponent("x.ogg").path)
        XCTAssertThrowsError(try muxer.addTrack(CodecParameters(mediaType: .video, codec: "vp9", codecTag: "vp09"), timeBase: Rational(1, 1000))) {
            XCTAssertEqual(($0 as? MediaError)?.kind, .unsupported)
        }
        XCTAssertThrowsError(try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "opus", codecTag: "Opus", extradata: [1, 2, 3]), timeBase: Rational(1, 48000))) {
            XCTAssertEqual(($0 as? MediaError)?.kind, .invalidArgument)
        }
        muxer.cancel()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [], "cancel leaves nothing")
    }
}
