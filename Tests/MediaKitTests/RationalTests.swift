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

    func testMediaTimeSeconds() {
        XCTAssertEqual(MediaTime(value: 1536, timeBase: Rational(1, 48000)).seconds, 0.032, accuracy: 1e-12)
        XCTAssertEqual(MediaTime(value: 1, timeBase: Rational(1, 2)).converted(to: Rational(1, 4)).value, 2)
    }
}
