import XCTest
@testable import MediaKit

/// Xiph-laced extradata (Codecs/XiphLacing.swift), the layout FFmpeg's Vorbis and Theora
/// decoders take and Matroska's CodecPrivate stores, against RFC 9559 section 10.3.2's
/// example (the same lacing as a Block's). The Ogg muxer and the Matroska demuxer read it
/// with `xiphUnlacing`; Tests/oracle/test_ogg_mux.py and test_matroska.py check the Vorbis
/// files they make and read against FFmpeg.
final class XiphLacingTests: XCTestCase {
    /// RFC 9559 section 10.3.2: packets of 800, 500 and 1000 bytes are laced as
    /// 0x02, 255 255 255 35, 255 245, then the packets.
    func testTheSpecExample() throws {
        let packets = [[UInt8](repeating: 1, count: 800), [UInt8](repeating: 2, count: 500), [UInt8](repeating: 3, count: 1000)]
        let laced = xiphLacing(packets)
        XCTAssertEqual(Array(laced.prefix(7)), [0x02, 255, 255, 255, 35, 255, 245])
        XCTAssertEqual(laced.count, 7 + 2300)
        XCTAssertEqual(xiphUnlacing(laced), packets)
    }

    /// Sizes of exactly 255 (a run ended by a 0 byte), empty packets, and one packet.
    func testRunsOf255AndEmptyPackets() {
        for packets: [[UInt8]] in [[[7], [UInt8](repeating: 9, count: 255), []], [[], [], [1, 2]], [[5, 6, 7]], [[UInt8](repeating: 4, count: 510), [8]]] {
            XCTAssertEqual(xiphUnlacing(xiphLacing(packets)), packets, "\(packets.map(\.count))")
        }
        XCTAssertEqual(Array(xiphLacing([[UInt8](repeating: 0, count: 255), [1]]).prefix(3)), [0x01, 255, 0])
    }

    /// Lacing that does not fit the bytes is refused (nil), never read past the end.
    func testLacingThatDoesNotFit() {
        XCTAssertNil(xiphUnlacing([]), "no packet count")
        XCTAssertNil(xiphUnlacing([0x02, 255, 255]), "the sizes run past the end")
        XCTAssertNil(xiphUnlacing([0x02, 255, 255, 255, 35, 255, 245] + [UInt8](repeating: 0, count: 1000)), "the sizes add up to more than the bytes")
        XCTAssertEqual(xiphUnlacing([0x00]), [[]], "one empty packet")
    }
}
