import XCTest
@testable import MediaKit

/// Oracle: the definition of a clockwise quarter turn (the output pixel at column x, row y
/// is the input pixel at column y, row H-1-x) and of its inverse; real rotated files are
/// compared with ffmpeg's autorotation in Tests/oracle/test_decode.py.
final class PictureRotationTests: XCTestCase {
    private func picture(_ format: PixelFormat, width: Int, height: Int) -> Frame {
        TestPictures.make(format, width: width, height: height)
    }

    private func samples(_ f: Frame, _ i: Int) -> [[Int]] { TestPictures.samples(f, i) }

    func testQuarterTurnMovesEverySampleWhereTheDefinitionSays() throws {
        for format in [PixelFormat.yuv420p, .yuv420p10, .yuv444p] {
            let src = picture(format, width: 7, height: 5)
            let turned = try src.rotated(clockwise: 90)
            XCTAssertEqual(turned.width, 5)
            XCTAssertEqual(turned.height, 7)
            XCTAssertEqual(turned.pts, 7)
            for i in 0..<format.planeCount {
                let a = samples(src, i), b = samples(turned, i)
                let (w, h) = (a[0].count, a.count)
                XCTAssertEqual(b.count, w, "\(format.name) plane \(i) rows")
                for y in 0..<w { for x in 0..<h { XCTAssertEqual(b[y][x], a[h - 1 - x][y], "\(format.name) plane \(i) (\(x),\(y))") } }
            }
        }
    }

    func testTurnsComposeToTheIdentity() throws {
        for format in [PixelFormat.yuv420p, .yuv420p10, .nv12, .gray8] {
            let src = picture(format, width: 9, height: 6)
            let back = try src.rotated(clockwise: 90).rotated(clockwise: 270)
            let twice = try src.rotated(clockwise: 180).rotated(clockwise: 180)
            let quarter = try src.rotated(clockwise: 90).rotated(clockwise: 90)
            let half = try src.rotated(clockwise: 180)
            for i in 0..<format.planeCount {
                XCTAssertEqual(samples(back, i), samples(src, i), "\(format.name) 90+270 plane \(i)")
                XCTAssertEqual(samples(twice, i), samples(src, i), "\(format.name) 180+180 plane \(i)")
                XCTAssertEqual(samples(quarter, i), samples(half, i), "\(format.name) 90+90 = 180 plane \(i)")
            }
        }
    }

    func testNV12ChromaPairsMoveTogether() throws {
        let src = picture(.nv12, width: 4, height: 2)   // one chroma row: pairs (0,1) (2,3)
        let turned = try src.rotated(clockwise: 90)
        XCTAssertEqual(samples(turned, 1).map { $0.map { $0 & 0xFF } }, [[0, 1], [2, 3]])
    }

    func testQuarterTurnOf422IsRefused() {
        XCTAssertThrowsError(try picture(.yuv422p, width: 4, height: 4).rotated(clockwise: 270)) { error in
            XCTAssertEqual((error as! MediaError).kind, .unsupported)
        }
    }
}
