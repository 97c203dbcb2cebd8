import XCTest
@testable import MediaKit

/// Oracle: the definition of FFmpeg's av_rescale (round to nearest, halves away from zero),
/// computed here independently with exact integer arithmetic on small values.
final class RationalTests: XCTestCase {
    func testRescaleMatchesExactRounding() {
        var rng = SeededRandom(state: 7)
        for _ in 0..<5000 {
            let a = Int64.random(in: -1_000_000...1_000_000, using: &rng)
            let b = Int64.random(in: 1...100_000, using: &rng)
            let c = Int64.random(in: 1...100_000, using: &rng)
            let num = a * b
            // round half away from zero: (|num| + c/2) / c with sign
            let expected = (num >= 0 ? 1 : -1) * ((abs(num) + c / 2) / c)
            XCTAssertEqual(Rational.rescale(a, multiply: b, divide: c), expected, "\(a)*\(b)/\(c)")
            // Halves away from zero are symmetric: each negative factor flips the sign only.
            XCTAssertEqual(Rational.rescale(a, multiply: -b, divide: c), -expected, "\(a)*-\(b)/\(c)")
            XCTAssertEqual(Rational.rescale(a, multiply: b, divide: -c), -expected, "\(a)*\(b)/-\(c)")
            XCTAssertEqual(Rational.rescale(a, multiply: -b, divide: -c), expected, "\(a)*-\(b)/-\(c)")
        }
    }

    /// Rounding up and down: the floor / ceiling of the exact quotient (av_rescale_rnd's
    /// AV_ROUND_DOWN / AV_ROUND_UP, toward minus / plus infinity).
    func testRescaleRoundingUpAndDown() {
        var rng = SeededRandom(state: 11)
        for _ in 0..<5000 {
            let a = Int64.random(in: -1_000_000...1_000_000, using: &rng)
            let b = Int64.random(in: 1...100_000, using: &rng)
            let c = Int64.random(in: 1...100_000, using: &rng)
            let num = a * b
            let floor = num >= 0 ? num / c : -((-num + c - 1) / c)
            let ceiling = num >= 0 ? (num + c - 1) / c : -(-num / c)
            XCTAssertEqual(Rational.rescale(a, multiply: b, divide: c, rounding: .down), floor, "\(a)*\(b)/\(c)")
            XCTAssertEqual(Rational.rescale(a, multiply: b, divide: c, rounding: .up), ceiling, "\(a)*\(b)/\(c)")
        }
        // Issue 10: 79872 samples at 22050 Hz are 3622.31 ms.
        XCTAssertEqual(Rational.rescale(79872, multiply: 1000, divide: 22050, rounding: .up), 3623)
        XCTAssertEqual(Rational.rescale(79872, multiply: 1000, divide: 22050), 3622)
    }

    func testRescaleDoesNotOverflowIntermediate() {
        // 2^62 * 90000 / 90000 needs 128-bit intermediates.
        XCTAssertEqual(Rational.rescale(1 << 62, multiply: 90000, divide: 90000), 1 << 62)
        XCTAssertEqual(Rational.rescale(Int64.max, multiply: 2, divide: 1), Int64.max, "saturates")
        XCTAssertEqual(Rational.rescale(3, from: Rational(1, 1000), to: Rational(1, 48000)), 144)
    }

    /// fuzz-mux (regressions/mux/ogg-opus-hostile-edit-list-*): a caller's Track with a huge
    /// movie time scale and time base trapped in PresentationWindow and rescale's products.
    func testHostileValuesSaturateInsteadOfTrapping() {
        XCTAssertEqual(Rational.rescale(Int64.min, multiply: Int64.min, divide: 1), Int64.max, "(-) * (-) saturates high")
        XCTAssertEqual(Rational.rescale(5, multiply: 1, divide: Int64.min), 0)
        XCTAssertEqual(Rational.rescale(Int64.max, from: Rational(Int64.max, 1), to: Rational(1, Int64.max)), Int64.max)
        XCTAssertEqual(Rational.rescale(-7, multiply: 3, divide: 2), -11, "halves away from zero, as before")
        var t = Track(index: 0, id: 1, parameters: CodecParameters(mediaType: .audio, codec: "opus"), timeBase: Rational(Int64.max / 2, 3),
                      duration: Int64.max, movieTimeScale: Int64.max / 2)
        t.editList = [EditListEntry(segmentDuration: Int64.max, mediaTime: Int64.max - 1, mediaRate: 1)]
        let window = PresentationWindow(track: t)
        XCTAssertEqual(window.start, Int64.max - 1)
        XCTAssertNil(window.end, "a window whose scale does not fit 64 bits runs to the end")
        _ = t.presentationOffset
    }

    func testMediaTimeSeconds() {
        XCTAssertEqual(MediaTime(value: 1536, timeBase: Rational(1, 48000)).seconds, 0.032, accuracy: 1e-12)
        XCTAssertEqual(MediaTime(value: 1, timeBase: Rational(1, 2)).converted(to: Rational(1, 4)).value, 2)
    }
}
