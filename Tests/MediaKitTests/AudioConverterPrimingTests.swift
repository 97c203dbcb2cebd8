import Foundation
import XCTest
@testable import MediaKit

/// AudioConverter's PrimeMethod / PrimeInfo and buffer-size calculations (issue 35 item 6), against
/// what they promise: the filter's reach measured with an impulse, `.pre` equal to the uncut
/// stream from a cut on, `.none` equal to `.normal` delayed, and buffer sizes that every push
/// respects and some push reaches.
final class AudioConverterPrimingTests: XCTestCase {
    func mono(_ rate: Int) -> AudioFormat { AudioFormat(.f32, sampleRate: rate, channels: 1) }

    func buffer(_ samples: [Float], rate: Int) throws -> AudioBuffer {
        let bytes = samples.withUnsafeBytes { Array($0) }
        return try AudioBuffer(format: mono(rate), frames: samples.count, planes: [bytes])
    }

    func floats(_ b: AudioBuffer) -> [Float] {
        b.planes[0].withUnsafeBytes { Array($0.bindMemory(to: Float.self).prefix(b.frames)) }
    }

    func noise(_ n: Int, seed: UInt64 = 7) -> [Float] {
        var s = seed
        return (0..<n).map { _ in
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: s) >> 11) / Float(1 << 52) * 0.9
        }
    }

    func converter(_ from: Int, _ to: Int, _ method: AudioConverter.PrimeMethod) throws -> AudioConverter {
        var o = AudioConverter.Options()
        o.primeMethod = method
        return try AudioConverter(from: mono(from), to: mono(to), options: o)
    }

    /// All of `samples` pushed (in `chunk`-frame pieces) then flushed.
    func convert(_ c: AudioConverter, _ samples: [Float], chunk: Int = 1000) throws -> [Float] {
        var out: [Float] = []
        var i = 0
        while i < samples.count {
            out += floats(try c.convert(buffer(Array(samples[i..<min(samples.count, i + chunk)]), rate: c.source.sampleRate)))
            i += chunk
        }
        return out + floats(c.flush())
    }

    func testPrimeInfoIsTheReachOfTheFilter() throws {
        XCTAssertEqual(try converter(44100, 44100, .normal).primeInfo, AudioConverter.PrimeInfo(leadingFrames: 0, trailingFrames: 0))
        // 2x up: output j is at input time j / 2, and its filter reads the inputs from
        // floor(j / 2) - leading to floor(j / 2) + trailing: an impulse at input k reaches the
        // outputs whose floor(time) is in k - trailing ... k + leading, and no other.
        let c = try converter(24000, 48000, .normal)
        let info = c.primeInfo
        XCTAssertEqual(info.trailingFrames, info.leadingFrames + 1)
        XCTAssertEqual(c.latency, info.trailingFrames, "normal reads trailingFrames ahead")
        let k = 1000
        var x = [Float](repeating: 0, count: 3000)
        x[k] = 1
        let y = try convert(c, x)
        let bases = y.indices.filter { y[$0] != 0 }.map { $0 / 2 }
        XCTAssertEqual(bases.min(), k - info.trailingFrames)
        XCTAssertEqual(bases.max(), k + info.leadingFrames)
    }

    func testPreGivesTheUncutStreamFromTheCut() throws {
        // 48000 -> 44100 is 147 / 160: a cut at a multiple of 160 input frames is an output frame.
        let x = noise(20000)
        let cut = 160 * 40, outCut = cut * 147 / 160
        let whole = try convert(converter(48000, 44100, .normal), x)
        let pre = try converter(48000, 44100, .pre)
        let lead = pre.primeInfo.leadingFrames
        XCTAssertGreaterThan(lead, 0)
        let fromCut = try convert(pre, Array(x[(cut - lead)...]), chunk: 777)
        XCTAssertEqual(fromCut.count, whole.count - outCut)
        XCTAssertEqual(fromCut.count, pre.outputFrames(forInputFrames: x.count - cut + lead))
        XCTAssertEqual(fromCut, Array(whole[outCut...]), "pre with its leading frames differs from the uncut stream")
        // Without them (normal: silence before the cut) the start differs: the test sees the edge.
        let plain = try convert(converter(48000, 44100, .normal), Array(x[cut...]))
        XCTAssertNotEqual(Array(plain.prefix(50)), Array(whole[outCut..<(outCut + 50)]))
    }

    func testNoneIsNormalDelayedAndNothingWaits() throws {
        let x = noise(5000, seed: 3)
        let normal = try converter(24000, 48000, .normal), none = try converter(24000, 48000, .none)
        let delay = 2 * none.primeInfo.trailingFrames   // output frames of trailingFrames input frames
        XCTAssertEqual(none.latency, 0)
        // Streaming: after n input frames, none has given all 2n outputs; normal holds its look-ahead.
        var given = 0, normalGiven = 0
        for (i, start) in stride(from: 0, to: 2000, by: 100).enumerated() {
            let b = try buffer(Array(x[start..<(start + 100)]), rate: 24000)
            given += try none.convert(b).frames
            normalGiven += try normal.convert(b).frames
            XCTAssertEqual(given, 2 * 100 * (i + 1))
            XCTAssertEqual(normalGiven, max(0, 2 * (100 * (i + 1) - normal.latency)))
        }
        let a = try convert(converter(24000, 48000, .normal), x)
        let c = try convert(converter(24000, 48000, .none), x)
        XCTAssertEqual(c.count, a.count + delay)
        XCTAssertEqual(Array(c[delay...]), a, "none is not normal delayed by trailingFrames")
        XCTAssertTrue(c.prefix(delay).contains { $0 != 0 }, "the ramp from silence is output")
        XCTAssertEqual(c.count, try converter(24000, 48000, .none).outputFrames(forInputFrames: x.count))
    }

    /// Pushes `count` pieces of `n` frames after a warm-up and returns each push's output frames.
    func pushCounts(_ c: AudioConverter, pieces count: Int, of n: Int) throws -> [Int] {
        let src = c.source
        let piece = try AudioBuffer(format: src, frames: n, planes: Array(repeating: [UInt8](repeating: 0, count: n * src.bytesPerFrame), count: src.planeCount))
        let warm = c.latency + 1
        _ = try c.convert(AudioBuffer(format: src, frames: warm, planes: Array(repeating: [UInt8](repeating: 0, count: warm * src.bytesPerFrame), count: src.planeCount)))
        return try (0..<count).map { _ in try c.convert(piece).frames }
    }

    func testBufferSizesAreEnoughAndNotMoreThanAFrameTooLarge() throws {
        let pairs = [(44100, 48000), (48000, 44100), (8000, 48000), (48000, 8000), (22050, 44100), (44100, 44100)]
        for (inRate, outRate) in pairs {
            let src = AudioFormat(.s16, sampleRate: inRate, channels: 2)
            let dst = AudioFormat(.f32, planar: true, sampleRate: outRate, channels: 1)
            let probe = try AudioConverter(from: src, to: dst)
            XCTAssertEqual(probe.maximumOutputPacketSize, 4)
            for n in [1, 7, 100, 441, 1000] {
                let bound = probe.outputBufferSize(forInputBytes: n * 4) / 4
                XCTAssertEqual(probe.outputBufferSize(forInputBytes: n * 4 + 3), bound * 4, "partial frames do not count")
                let counts = try pushCounts(AudioConverter(from: src, to: dst), pieces: 400, of: n)
                XCTAssertLessThanOrEqual(counts.max()!, bound, "\(inRate)->\(outRate): a push of \(n) gave more than the computed size")
                XCTAssertEqual(counts.max()!, bound, "\(inRate)->\(outRate): no push of \(n) needed the computed size")
            }
            for m in [1, 10, 480, 1000] {
                let need = probe.inputBufferSize(forOutputBytes: m * 4) / 4
                XCTAssertEqual(probe.inputBufferSize(forOutputBytes: m * 4 - 1), need * 4, "bytes round up to whole frames")
                let counts = try pushCounts(AudioConverter(from: src, to: dst), pieces: 400, of: need)
                XCTAssertGreaterThanOrEqual(counts.min()!, m, "\(inRate)->\(outRate): \(need) input frames gave fewer than \(m)")
                if need > 1 {
                    let fewer = try pushCounts(AudioConverter(from: src, to: dst), pieces: 400, of: need - 1)
                    XCTAssertLessThan(fewer.min()!, m, "\(inRate)->\(outRate): \(need - 1) frames were always enough for \(m)")
                }
            }
        }
    }
}
