import XCTest
@testable import MediaKit

/// Oracles: FFmpeg 5.1 itself, its answers written down here — the time base `ffmpeg -vf fps=R`
/// gives (`-f framemd5`'s `#tb`), the size `ffmpeg -vf scale=W:H` gives (`#dimensions`) — and
/// vf_fps.c's rules on hand-made timestamps (Tests/oracle/test_transcode_video.py compares whole
/// encodes with ffmpeg's).
final class FrameRateConverterTests: XCTestCase {
    func testRatesParseAsFFmpegsFpsFilter() {
        // rate text -> the output time base ffmpeg prints for -vf fps=TEXT
        let table: [(String, Rational)] = [("30", Rational(1, 30)), ("30000/1001", Rational(1001, 30000)),
                                           ("29.97", Rational(100, 2997)), ("23.976", Rational(125, 2997)),
                                           ("ntsc", Rational(1001, 30000)), ("pal", Rational(1, 25)), ("60/2", Rational(1, 30))]
        for (text, tb) in table {
            let rate = FrameRateConverter.rate(parsing: text)
            XCTAssertEqual(rate.map { Rational($0.denominator, $0.numerator) }, tb, text)
        }
        for bad in ["0", "-30", "30/0", "abc", "", "1.", "3/4/5", "1e3"] {
            XCTAssertNil(FrameRateConverter.rate(parsing: bad), bad)
        }
        XCTAssertThrowsError(try FrameRateConverter(rate: Rational(0, 1)))
    }

    func testScaleSizesAsFFmpegsScaleFilter() throws {
        // (input, W:H) -> the size ffmpeg 5.1's scale filter gives
        let table: [(Int, Int, String, Int, Int)] = [
            (320, 240, "-2:100", 134, 100), (320, 240, "-1:101", 135, 101), (320, 240, "-1:-1", 320, 240),
            (320, 240, "-2:-3", 320, 240), (320, 240, "100:-4", 100, 76), (320, 240, "0:0", 320, 240),
            (3026, 1386, "640:-2", 640, 294), (720, 1280, "360:-2", 360, 640), (1920, 1080, "1280x720", 1280, 720),
        ]
        for (w, h, text, ow, oh) in table {
            let scale = try XCTUnwrap(VideoScale(parsing: text), text)
            let size = try scale.outputSize(width: w, height: h)
            XCTAssertEqual([size.width, size.height], [ow, oh], "\(w)x\(h) scale=\(text)")
        }
        XCTAssertNil(VideoScale(parsing: "big"))
        XCTAssertNil(VideoScale(parsing: "100"))
        XCTAssertThrowsError(try VideoScale(width: 40000, height: -1).outputSize(width: 320, height: 240))
    }

    private func frame(_ pts: Int64, _ tb: Rational = Rational(1, 1000)) -> Frame {
        Frame(mediaType: .video, pts: pts, duration: 0, timeBase: tb, planes: [], storage: FrameStorage {})
    }

    /// vf_fps on 25 fps input in ms (0, 40, 80 ...) to 10 fps: ticks rounded to nearest, every
    /// tick gets the latest picture at or before it; the end (200 ms) rounds to tick 2.
    func testPicturesDroppedAndRepeatedOnTheGrid() throws {
        let c = try FrameRateConverter(rate: Rational(10, 1))
        var out: [(Int64, Int64)] = []   // (tick, source pts)
        var source: [ObjectIdentifier: Int64] = [:]
        let input: [Int64] = [0, 40, 80, 120, 160]
        for pts in input {
            let f = frame(pts)
            source[ObjectIdentifier(f.storage)] = pts
            try c.push(f) { out.append(($0.pts, source[ObjectIdentifier($0.storage)] ?? -1)) }
        }
        try c.finish(end: 200, timeBase: Rational(1, 1000)) { out.append(($0.pts, source[ObjectIdentifier($0.storage)] ?? -1)) }
        // ticks of 100 ms: 0 and 40 ms round to tick 0 (the later one is kept), 80 and 120 ms
        // to tick 1 (120 kept), 160 ms to tick 2, which the end (200 ms, tick 2) cuts.
        XCTAssertEqual(out.map(\.0), [0, 1])
        XCTAssertEqual(out.map(\.1), [40, 120])
        XCTAssertEqual(c.framesIn, 5)
        XCTAssertEqual(c.framesOut, 2)
        // 25 -> 50 fps: each picture twice, up to the end.
        let d = try FrameRateConverter(rate: Rational(50, 1))
        var ticks: [Int64] = []
        for pts in input { try d.push(frame(pts)) { ticks.append($0.pts) } }
        try d.finish(end: 200, timeBase: Rational(1, 1000)) { ticks.append($0.pts) }
        XCTAssertEqual(ticks, Array(0..<10))
    }

    func testFinishWithoutAnEndReturnsTheLastPictureOnce() throws {
        let c = try FrameRateConverter(rate: Rational(30, 1))
        var ticks: [Int64] = []
        try c.push(frame(1000)) { ticks.append($0.pts) }
        try c.finish(end: nil, timeBase: Rational(1, 1000)) { ticks.append($0.pts) }
        XCTAssertEqual(ticks, [30])
    }

    func testADamagedTimeJumpIsAnErrorNotBillionsOfPictures() throws {
        let c = try FrameRateConverter(rate: Rational(30, 1))
        var n = 0
        try c.push(frame(0)) { _ in n += 1 }
        XCTAssertThrowsError(try c.push(frame(Int64(1) << 50)) { _ in n += 1 }) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .invalidData)
        }
        XCTAssertEqual(n, 30 * 86400 + 1)
    }
}
