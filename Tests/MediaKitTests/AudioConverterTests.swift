import Foundation
import XCTest
@testable import MediaKit

/// The audio converter against its specification: libswresample's conversions, exact
/// lengths, chunking-independence, and the resampler's measured response.
final class AudioConverterTests: XCTestCase {
    // MARK: helpers

    /// A buffer of `type` interleaved (or planar) holding `samples[frame][channel]` (floats in [-1, 1)
    /// written through the converter's own float -> type kernel is avoided: integers are given raw).
    func buffer(_ format: AudioFormat, floats: [[Double]]) throws -> AudioBuffer {
        let src = AudioFormat(.f64, sampleRate: format.sampleRate, layout: format.layout)
        var bytes = [UInt8](repeating: 0, count: floats.count * format.channels * 8)
        bytes.withUnsafeMutableBytes { p in
            for (i, f) in floats.enumerated() { for (c, v) in f.enumerated() { p.storeBytes(of: v, toByteOffset: (i * format.channels + c) * 8, as: Double.self) } }
        }
        let b = try AudioBuffer(format: src, frames: floats.count, planes: [bytes])
        if format == src { return b }
        return try AudioConverter(from: src, to: format).convert(b)
    }

    func doubles(_ b: AudioBuffer) throws -> [[Double]] {
        let dst = AudioFormat(.f64, sampleRate: b.format.sampleRate, layout: b.format.layout)
        let out = try AudioConverter(from: b.format, to: dst, options: { var o = AudioConverter.Options(); o.channelMix = .map(Array(0..<b.format.channels)); return o }()).convert(b)
        return out.planes[0].withUnsafeBytes { p in
            (0..<out.frames).map { i in (0..<dst.channels).map { p.load(fromByteOffset: (i * dst.channels + $0) * 8, as: Double.self) } }
        }
    }

    func randomSamples(_ frames: Int, _ channels: Int, seed: UInt64 = 1) -> [[Double]] {
        var s = seed
        func next() -> Double {
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return Double(Int64(bitPattern: s) >> 11) / Double(1 << 52)
        }
        return (0..<frames).map { _ in (0..<channels).map { _ in next() * 0.99 } }
    }

    // MARK: sample formats

    func testLosslessRoundTripsAreBitExact() throws {
        let layout = ChannelLayout.surround51
        let frames = 1000
        for type in SampleFormat.allCases where !type.isPlanar {
            for planar in [false, true] {
                let start = try buffer(AudioFormat(type, planar: planar, sampleRate: 48000, layout: layout), floats: randomSamples(frames, 6))
                // Through every type at least as wide, and both layouts.
                for wide in SampleFormat.allCases where !wide.isPlanar && Self.holds(wide, type) {
                    for planar2 in [false, true] {
                        let mid = AudioFormat(wide, planar: planar2, sampleRate: 48000, layout: layout)
                        let there = try AudioConverter(from: start.format, to: mid).convert(start)
                        let back = try AudioConverter(from: mid, to: start.format).convert(there)
                        XCTAssertEqual(back.frames, frames)
                        XCTAssertEqual(back.planes, start.planes, "\(start.format) -> \(mid) -> back is not bit-exact")
                    }
                }
                // A reordering and its inverse (WAVE order -> Vorbis order -> WAVE order).
                let vorbis = AudioFormat(type, planar: planar, sampleRate: 48000, layout: ChannelLayout.vorbis(channels: 6)!)
                let v = try AudioConverter(from: start.format, to: vorbis).convert(start)
                let back = try AudioConverter(from: vorbis, to: start.format).convert(v)
                XCTAssertEqual(back.planes, start.planes, "reorder round trip \(type)")
                XCTAssertNotEqual(v.planes, start.planes)
            }
        }
    }

    /// `wide` represents every value of `narrow` exactly.
    static func holds(_ wide: SampleFormat, _ narrow: SampleFormat) -> Bool {
        let bits: [SampleFormat: Int] = [.u8: 8, .s16: 16, .s24: 24, .s32: 32, .f32: 24, .f64: 53]
        if narrow.isFloat { return wide.native == .f64 || wide.native == narrow.native }
        return bits[wide.native]! >= bits[narrow.native]!
    }

    func testFloatToIntegerRoundsAndClipsAsLibswresample() throws {
        let values: [Float] = [0, 0.5 / 32768, 1.5 / 32768, -0.5 / 32768, -2.5 / 32768, 1, -1, 1.5, -1.5, 0.99999, .nan, .infinity, -.infinity]
        let expected16: [Int16] = [0, 0, 2, 0, -2, 32767, -32768, 32767, -32768, 32767, -32768, 32767, -32768]
        let expectedU8: [UInt8] = [128, 128, 128, 128, 128, 255, 0, 255, 0, 255, 0, 255, 0]
        var bytes = [UInt8](repeating: 0, count: values.count * 4)
        bytes.withUnsafeMutableBytes { p in for (i, v) in values.enumerated() { p.storeBytes(of: v, toByteOffset: 4 * i, as: Float.self) } }
        let src = try AudioBuffer(format: AudioFormat(.f32, sampleRate: 8000, layout: .mono), frames: values.count, planes: [bytes])
        let s16 = try AudioConverter(from: src.format, to: AudioFormat(.s16, sampleRate: 8000, layout: .mono)).convert(src)
        let got16 = s16.planes[0].withUnsafeBytes { p in (0..<values.count).map { p.load(fromByteOffset: 2 * $0, as: Int16.self) } }
        XCTAssertEqual(got16, expected16)
        let u8 = try AudioConverter(from: src.format, to: AudioFormat(.u8, sampleRate: 8000, layout: .mono)).convert(src)
        XCTAssertEqual(u8.planes[0], expectedU8)
        // s24 is s32 shifted down (FFmpeg's 24-bit PCM encoder): 1.0 clips to 0x7FFFFF.
        let s24 = try AudioConverter(from: src.format, to: AudioFormat(.s24, sampleRate: 8000, layout: .mono)).convert(src)
        XCTAssertEqual(Array(s24.planes[0][15..<18]), [0xFF, 0xFF, 0x7F])
        XCTAssertEqual(Array(s24.planes[0][18..<21]), [0x00, 0x00, 0x80])
    }

    func testDitherStaysWithinOneStepAndIsUnbiased() throws {
        let n = 20000
        let src = try buffer(AudioFormat(.f32, sampleRate: 48000, layout: .mono), floats: (0..<n).map { [0.3 * sin(Double($0) * 0.01)] })
        let dst = AudioFormat(.s16, sampleRate: 48000, layout: .mono)
        var o = AudioConverter.Options()
        o.dither = true
        let plain = try AudioConverter(from: src.format, to: dst).convert(src)
        let dithered = try AudioConverter(from: src.format, to: dst, options: o).convert(src)
        let a = plain.planes[0].withUnsafeBytes { p in (0..<n).map { Int(p.load(fromByteOffset: 2 * $0, as: Int16.self)) } }
        let b = dithered.planes[0].withUnsafeBytes { p in (0..<n).map { Int(p.load(fromByteOffset: 2 * $0, as: Int16.self)) } }
        let diffs = zip(a, b).map { $1 - $0 }
        XCTAssertLessThanOrEqual(diffs.map(abs).max()!, 1)
        XCTAssertGreaterThan(diffs.filter { $0 != 0 }.count, n / 10, "dither changed almost nothing")
        XCTAssertLessThan(abs(Double(diffs.reduce(0, +)) / Double(n)), 0.05)
        // Chunking does not change the noise.
        let conv = try AudioConverter(from: src.format, to: dst, options: o)
        var chunked = AudioBuffer(empty: dst)
        var i = 0
        while i < n {
            let k = min(777, n - i)
            chunked.append(try conv.convert(AudioBuffer(format: src.format, frames: k, planes: [Array(src.planes[0][(i * 4)..<((i + k) * 4)])])))
            i += k
        }
        XCTAssertEqual(chunked.planes, dithered.planes)
    }

    // MARK: channels

    func testLayoutsByNameAndOrders() throws {
        XCTAssertEqual(try ChannelLayout(name: "5.1").positions.map(\.name), ["FL", "FR", "FC", "LFE", "BL", "BR"])
        XCTAssertEqual(try ChannelLayout(name: "5.1").mask, 0x3F)
        XCTAssertEqual(try ChannelLayout(name: "7.1").mask, 0x63F)
        XCTAssertEqual(try ChannelLayout(name: "quad").mask, 0x33)
        XCTAssertEqual(try ChannelLayout(name: "2.1").mask, 0x0B)
        XCTAssertEqual(try ChannelLayout(name: "6").description, "5.1")
        XCTAssertEqual(try ChannelLayout(name: "FL+FR+LFE").description, "2.1")
        XCTAssertEqual(ChannelLayout.vorbis(channels: 6)!.positions.map(\.name), ["FL", "FC", "FR", "BL", "BR", "LFE"])
        XCTAssertEqual(ChannelLayout.aac(configuration: 6)!.positions.map(\.name), ["FC", "FL", "FR", "BL", "BR", "LFE"])
        XCTAssertEqual(ChannelLayout(mask: 0x60F)?.description, "5.1(side)")
        XCTAssertThrowsError(try ChannelLayout(name: "9.1")) { XCTAssertTrue("\($0)".contains("unknown channel layout \"9.1\"")) }
        XCTAssertThrowsError(try ChannelLayout(name: "FL+FL"))
        XCTAssertThrowsError(try ChannelLayout(name: "12"))
    }

    func testStandardDownmixMatrixIsLibswresamples() throws {
        let r = 0.5.squareRoot()
        // Float output: not normalised (as swresample with a float output format).
        let f = try AudioConverter(from: AudioFormat(.f32, sampleRate: 48000, layout: .surround51), to: AudioFormat(.f32, sampleRate: 48000, layout: .stereo))
        XCTAssertEqual(f.mixMatrix, [[1, 0, r, 0, r, 0], [0, 1, r, 0, 0, r]])
        // Integer output: each row scaled by 1 / (1 + 2 * 0.7071).
        let s = try AudioConverter(from: AudioFormat(.s16, sampleRate: 48000, layout: .surround51), to: AudioFormat(.s16, sampleRate: 48000, layout: .stereo))
        let k = 1 / (1 + 2 * r)
        for (a, b) in zip(s.mixMatrix.joined(), [k, 0, r * k, 0, r * k, 0, 0, k, r * k, 0, 0, r * k]) { XCTAssertEqual(a, b, accuracy: 1e-12) }
        let up = try AudioConverter(from: AudioFormat(.s16, sampleRate: 48000, layout: .mono), to: AudioFormat(.s16, sampleRate: 48000, layout: .stereo))
        XCTAssertEqual(up.mixMatrix, [[r], [r]])
        let down = try AudioConverter(from: AudioFormat(.f32, sampleRate: 48000, layout: .stereo), to: AudioFormat(.f32, sampleRate: 48000, layout: .mono))
        XCTAssertEqual(down.mixMatrix, [[r, r]])
    }

    func testChannelMapPicksDuplicatesAndSilences() throws {
        let src = try buffer(AudioFormat(.s16, sampleRate: 8000, layout: .stereo), floats: [[0.5, -0.25], [0.125, 0.75]])
        var o = AudioConverter.Options()
        o.channelMix = .map([1, 1, nil, 0])
        let dst = AudioFormat(.s16, sampleRate: 8000, layout: try ChannelLayout(name: "quad"))
        let out = try doubles(AudioConverter(from: src.format, to: dst, options: o).convert(src))
        XCTAssertEqual(out, [[-0.25, -0.25, 0, 0.5], [0.75, 0.75, 0, 0.125]])
        // Dropping a channel keeps the others in place (2.1 -> stereo picks FL and FR of three).
        let three = try buffer(AudioFormat(.s16, sampleRate: 8000, layout: try ChannelLayout(name: "2.1")), floats: [[0.5, -0.25, 0.125], [0.25, 0.75, -1]])
        let two = try doubles(AudioConverter(from: three.format, to: AudioFormat(.s16, sampleRate: 8000, layout: .stereo)).convert(three))
        XCTAssertEqual(two, [[0.5, -0.25], [0.25, 0.75]])
        o.channelMix = .matrix([[0.5, 0.5]])
        let mono = try doubles(AudioConverter(from: src.format, to: AudioFormat(.f32, sampleRate: 8000, layout: .mono), options: o).convert(src))
        XCTAssertEqual(mono, [[0.125], [0.4375]])
    }

    func testBadFormatsAreErrorsWithMessages() {
        func message(_ body: () throws -> Any) -> String {
            do { _ = try body(); return "no error" } catch { return "\(error)" }
        }
        let good = AudioFormat(.f32, sampleRate: 48000, layout: .stereo)
        XCTAssertTrue(message { try AudioConverter(from: AudioFormat(.f32, sampleRate: 0, layout: .stereo), to: good) }.contains("source format has sample rate 0"))
        XCTAssertTrue(message { try AudioConverter(from: good, to: AudioFormat(.f32, sampleRate: -5, layout: .stereo)) }.contains("destination format has sample rate -5"))
        XCTAssertTrue(message { try AudioConverter(from: AudioFormat(.f32, sampleRate: 48000, layout: ChannelLayout([])), to: good) }.contains("no channels"))
        XCTAssertTrue(message { try ChannelLayout(name: "surround-ish") }.contains("unknown channel layout"))
        var o = AudioConverter.Options()
        o.channelMix = .map([0, 2])
        XCTAssertTrue(message { try AudioConverter(from: good, to: good, options: o) }.contains("names input channel 2"))
        o.channelMix = .map([0])
        XCTAssertTrue(message { try AudioConverter(from: good, to: good, options: o) }.contains("the channel map has 1 entries"))
        o.channelMix = .matrix([[1, 0, 0], [0, 1]])
        XCTAssertTrue(message { try AudioConverter(from: good, to: good, options: o) }.contains("row 0 of the mixing matrix"))
        o = AudioConverter.Options()
        o.primeLeading = -1
        XCTAssertTrue(message { try AudioConverter(from: good, to: good, options: o) }.contains("must not be negative"))
        let conv = try! AudioConverter(from: good, to: good)
        XCTAssertTrue(message { try conv.convert(AudioBuffer(empty: AudioFormat(.s16, sampleRate: 48000, layout: .stereo))) }.contains("the converter takes"))
        XCTAssertTrue(message { try AudioBuffer(format: good, frames: 10, planes: [[0, 0]]) }.contains("need 80"))
        XCTAssertTrue(message { try AudioConverter(from: AudioFormat(.f32, sampleRate: 48000, layout: ChannelLayout([.lowFrequency])), to: good) }.contains("cannot be mixed automatically"))
        XCTAssertTrue(message { try AudioConverter(from: AudioFormat(.f32, sampleRate: 6_000_000, layout: .stereo), to: AudioFormat(.f32, sampleRate: 1, layout: .stereo)) }.contains("above the"))
        XCTAssertTrue(message { try AudioConverter(from: AudioFormat(.f32, sampleRate: 7_000_000, layout: .stereo), to: good) }.contains("limit"))
        // A huge trailing cut holds input back, but allocates nothing up front or at the flush.
        o = AudioConverter.Options()
        o.primeTrailing = 1 << 40
        let held = try! AudioConverter(from: good, to: AudioFormat(.f32, sampleRate: 44100, layout: .stereo), options: o)
        XCTAssertEqual(try! held.convert(buffer(good, floats: randomSamples(100, 2))).frames, 0)
        XCTAssertEqual(held.flush().frames, 0)
    }

    // MARK: lengths, push and pull

    /// Converts `input` pushed in chunks of `chunk` frames, then flushed.
    func push(_ conv: AudioConverter, _ input: AudioBuffer, chunk: Int) throws -> AudioBuffer {
        var out = AudioBuffer(empty: conv.destination)
        var i = 0
        let bpf = input.format.bytesPerFrame
        while i < input.frames {
            let k = min(chunk, input.frames - i)
            out.append(try conv.convert(AudioBuffer(format: input.format, frames: k, planes: input.planes.map { Array($0[(i * bpf)..<((i + k) * bpf)]) })))
            i += k
        }
        out.append(conv.flush())
        return out
    }

    /// Pulls `request` frames at a time from a callback that gives at most `chunk` frames.
    func pull(_ conv: AudioConverter, _ input: AudioBuffer, chunk: Int, request: Int) throws -> AudioBuffer {
        var out = AudioBuffer(empty: conv.destination)
        var i = 0
        let bpf = input.format.bytesPerFrame
        while true {
            let b = try conv.fill(frames: request) { want in
                let k = min(chunk, want, input.frames - i)
                if k == 0 { return nil }
                defer { i += k }
                return try AudioBuffer(format: input.format, frames: k, planes: input.planes.map { Array($0[(i * bpf)..<((i + k) * bpf)]) })
            }
            out.append(b)
            if b.frames < request { break }
        }
        return out
    }

    func testExactLengthsAndPushPullAgreeForAnyChunking() throws {
        let src = AudioFormat(.f32, sampleRate: 44100, layout: .stereo)
        let dst = AudioFormat(.s16, planar: true, sampleRate: 48000, layout: .stereo)
        for n in [0, 1, 2, 7, 146, 147, 148, 1000, 4410, 12345] {
            let input = try buffer(src, floats: randomSamples(n, 2, seed: UInt64(n + 3)))
            let expected = (2 * n * 160 + 147) / (2 * 147)   // round(n * 48000 / 44100)
            var reference: AudioBuffer?
            for chunk in [1, 7, 1024, max(1, n)] where chunk <= max(1, n) || chunk == 1024 {
                if n > 2000 && chunk == 1 { continue }
                let conv = try AudioConverter(from: src, to: dst)
                XCTAssertEqual(conv.outputFrames(forInputFrames: n), expected)
                let pushed = try push(conv, input, chunk: chunk)
                XCTAssertEqual(pushed.frames, expected, "n=\(n) chunk=\(chunk)")
                let pulled = try pull(try AudioConverter(from: src, to: dst), input, chunk: chunk, request: 333)
                XCTAssertEqual(pulled.frames, expected, "pull n=\(n) chunk=\(chunk)")
                XCTAssertEqual(pulled.planes, pushed.planes, "push and pull differ, n=\(n) chunk=\(chunk)")
                if let r = reference { XCTAssertEqual(pushed.planes, r.planes, "chunk \(chunk) differs, n=\(n)") } else { reference = pushed }
            }
        }
    }

    func testPortableLoopsAgreeWithTheAVX2Loops() throws {
        guard CPUFeatures.avx2FMA else { throw XCTSkip("this processor has no AVX2/FMA: only the portable loops run") }
        defer { CPUFeatures.useAVX2 = true }
        for type in [SampleFormat.f32, .f64] {
            let src = AudioFormat(type, sampleRate: 44100, layout: .surround51)
            let dst = AudioFormat(type, sampleRate: 48000, layout: try ChannelLayout(name: "5.0"))
            let input = try buffer(src, floats: randomSamples(3000, 6))
            var results: [[[Double]]] = []
            for avx in [true, false] {
                CPUFeatures.useAVX2 = avx
                let a = try doubles(push(AudioConverter(from: src, to: dst), input, chunk: 1000))
                let b = try doubles(pull(AudioConverter(from: src, to: dst), input, chunk: 7, request: 100))
                XCTAssertEqual(a, b, "push and pull differ (AVX2 \(avx), \(type))")
                results.append(a)
            }
            XCTAssertEqual(results[0].count, results[1].count)
            let worst = zip(results[0].joined(), results[1].joined()).map { abs($0 - $1) }.max() ?? 0
            XCTAssertLessThan(worst, type == .f32 ? 1e-6 : 1e-13, "\(type): the two loops differ by \(worst)")
        }
    }

    func testOtherRatiosGiveRoundedLengths() throws {
        let rates: [(Int, Int)] = [(8000, 192_000), (192_000, 8000), (48000, 44100), (44100, 44101), (22050, 16000), (32000, 48000)]
        for (a, b) in rates {
            for q in ResampleQuality.allCases {
                var o = AudioConverter.Options()
                o.quality = q
                let n = 5003
                let conv = try AudioConverter(from: AudioFormat(.f32, sampleRate: a, layout: .mono), to: AudioFormat(.f32, sampleRate: b, layout: .mono), options: o)
                let input = try buffer(conv.source, floats: randomSamples(n, 1))
                let out = try push(conv, input, chunk: 1000)
                let g = Int64(Self.gcd(a, b)), up = Int64(b) / g, down = Int64(a) / g
                XCTAssertEqual(Int64(out.frames), (2 * Int64(n) * up + down) / (2 * down), "\(a) -> \(b) \(q)")
            }
        }
    }

    static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? a : gcd(b, a % b) }

    func testPrimingCutsLeadingAndTrailingFramesExactly() throws {
        // At equal rates, priming is a plain cut.
        var o = AudioConverter.Options()
        o.primeLeading = 5
        o.primeTrailing = 3
        let fmt = AudioFormat(.s16, sampleRate: 48000, layout: .mono)
        let samples = (0..<50).map { [Double($0) / 100] }
        let input = try buffer(fmt, floats: samples)
        for chunk in [1, 4, 50] {
            let out = try push(AudioConverter(from: fmt, to: fmt, options: o), input, chunk: chunk)
            XCTAssertEqual(out.frames, 42)
            XCTAssertEqual(Array(out.planes[0]), Array(input.planes[0][10..<94]))
        }
        // Resampling: output j is the input at time lead + j * 147 / 160; the signal between the
        // cuts is the same as a converter without priming, shifted.
        let src = AudioFormat(.f64, sampleRate: 44100, layout: .mono), dst = AudioFormat(.f64, sampleRate: 48000, layout: .mono)
        o.primeLeading = 147 * 3
        o.primeTrailing = 100
        let long = try buffer(src, floats: (0..<4000).map { [sin(Double($0) * 0.05)] })
        let conv = try AudioConverter(from: src, to: dst, options: o)
        XCTAssertEqual(conv.outputFrames(forInputFrames: 4000), (2 * (4000 - 441 - 100) * 160 + 147) / 294)
        let cut = try doubles(push(conv, long, chunk: 999))
        let whole = try doubles(push(AudioConverter(from: src, to: dst), long, chunk: 999))
        XCTAssertEqual(cut.count, conv.outputFrames(forInputFrames: 4000))
        for j in 0..<cut.count { XCTAssertEqual(cut[j][0], whole[j + 480][0], accuracy: 1e-12) }
    }

    // MARK: the resampler's response

    /// Measures the converter on sines: SNR of a 1 kHz sine, gain across the passband,
    /// image and alias rejection. Prints the figures.
    func measure(_ quality: ResampleQuality, type: SampleFormat) throws -> (snr: Double, ripple: Double, rejection: Double) {
        var o = AudioConverter.Options()
        o.quality = quality
        let n = 44100
        func run(_ f: Double, from a: Int, to b: Int) throws -> [Double] {
            let conv = try AudioConverter(from: AudioFormat(type, sampleRate: a, layout: .mono), to: AudioFormat(.f64, sampleRate: b, layout: .mono), options: o)
            let input = try buffer(conv.source, floats: (0..<n).map { [0.5 * sin(2 * Double.pi * f * Double($0) / Double(a))] })
            return try doubles(push(conv, input, chunk: 4096)).map { $0[0] }
        }
        // SNR against the exact sine at the output rate, away from the ends.
        let y = try run(1000, from: 44100, to: 48000)
        var sig = 0.0, err = 0.0
        for j in 2000..<(y.count - 2000) {
            let ref = 0.5 * sin(2 * Double.pi * 1000 * Double(j) / 48000)
            sig += ref * ref
            err += (y[j] - ref) * (y[j] - ref)
        }
        let snr = 10 * log10(sig / err)
        // Passband: gain from 20 Hz to 0.45 of 44.1 kHz.
        var lo = 0.0, hi = -200.0
        for f in [20.0, 1000, 5000, 10000, 15000, 18000, 19000, 19845] {
            let g = 20 * log10(amplitude(try run(f, from: 44100, to: 48000), f, 48000) / 0.5)
            lo = min(lo, g)
            hi = max(hi, g)
        }
        // Stopband: the image of a 19 kHz tone at 44.1 -> 48 kHz (25.1 kHz, folded to 22.9 kHz), and
        // tones above the stopband edge folded down when going 96 -> 44.1 kHz.
        var worst = 300.0
        let edge = quality.design.stop * 22050
        let tone = min(19000, 44100 - edge - 500)   // its image, 44100 - tone, is in the stopband
        let up = try run(tone, from: 44100, to: 48000)
        worst = min(worst, -20 * log10(amplitude(up, 48000 - (44100 - tone), 48000) / 0.5))
        for f in [edge + 100, edge + 2000, 30000, 40000] {
            let down = try run(f, from: 96000, to: 44100)
            let alias = 44100 - f
            worst = min(worst, -20 * log10(amplitude(down, abs(alias), 44100) / 0.5))
        }
        print(String(format: "audioconv %@ (%@ in): 1 kHz SNR %.1f dB, passband %.4f..%.4f dB to 19845 Hz, stopband %.1f dB",
                     quality.rawValue, type.typeName, snr, lo, hi, worst))
        return (snr, max(abs(lo), abs(hi)), worst)
    }

    /// The amplitude of frequency `f` in `y` (least squares over the middle, a Hann window).
    func amplitude(_ y: [Double], _ f: Double, _ rate: Double) -> Double {
        var c = 0.0, s = 0.0, wsum = 0.0
        let a = 3000, b = y.count - 3000
        for j in a..<b {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(j - a) / Double(b - a))
            let ph = 2 * Double.pi * f * Double(j) / rate
            c += w * y[j] * cos(ph)
            s += w * y[j] * sin(ph)
            wsum += w
        }
        return 2 * (c * c + s * s).squareRoot() / wsum
    }

    func testResamplerQualityFigures() throws {
        let medium = try measure(.medium, type: .f32)
        XCTAssertGreaterThanOrEqual(medium.snr, 90)
        XCTAssertLessThan(medium.ripple, 0.1)
        XCTAssertGreaterThanOrEqual(medium.rejection, 95)
        let high = try measure(.high, type: .f64)
        XCTAssertGreaterThanOrEqual(high.snr, 120)
        XCTAssertLessThan(high.ripple, 0.1)
        XCTAssertGreaterThanOrEqual(high.rejection, 120)
        let low = try measure(.low, type: .f32)
        XCTAssertGreaterThanOrEqual(low.rejection, 60)
    }

    /// Filter tables are designed once per sample type, ratio and preset and shared: the shared
    /// table holds exactly a fresh design's coefficients, the cache keeps the last
    /// ``FilterCache/limit`` and drops the oldest, and converters made at once on several threads
    /// convert alike.
    func testFilterTablesAreSharedAndEqualAFreshDesign() throws {
        let ratio = RateRatio(from: 44100, to: 16000)
        let shape = PolyphaseFilter<Float>.shape(ratio, .medium)
        let a = FilterTable<Float>.shared(ratio, .medium)
        XCTAssertTrue(a === FilterTable<Float>.shared(ratio, .medium), "a second converter designed the table again")
        XCTAssertFalse(a === FilterTable<Float>.shared(ratio, .high), "presets share a table")
        let fresh = UnsafeMutablePointer<Float>.allocate(capacity: shape.rows * shape.taps)
        defer { fresh.deallocate() }
        fresh.initialize(repeating: 0, count: shape.rows * shape.taps)
        PolyphaseFilter<Float>.design(ratio, .medium, into: fresh)
        XCTAssertEqual(memcmp(fresh, a.coefficients, shape.rows * shape.taps * 4), 0, "the shared table is not the design")
        for rate in 0..<FilterCache.limit {                       // other ratios push it out
            _ = FilterTable<Float>.shared(RateRatio(from: 44100, to: 8000 + 1000 * rate), .medium)
        }
        let again = FilterTable<Float>.shared(ratio, .medium)
        XCTAssertFalse(a === again, "the cache kept more than \(FilterCache.limit) tables")
        XCTAssertEqual(memcmp(again.coefficients, a.coefficients, shape.rows * shape.taps * 4), 0)

        let src = AudioFormat(.f32, sampleRate: 44100, channels: 2), dst = AudioFormat(.f32, sampleRate: 16000, channels: 2)
        let input = try buffer(src, floats: randomSamples(20000, 2, seed: 7))
        let reference = try AudioConverter(from: src, to: dst).convert(input)
        let results = Locked([AudioBuffer?](repeating: nil, count: 8))
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            let ratioOfThisRun = [48000, 16000][i % 2]           // a miss and a hit at once
            let to = AudioFormat(.f32, sampleRate: ratioOfThisRun, channels: 2)
            let out = try? AudioConverter(from: src, to: to).convert(input)
            results.mutate { $0[i] = out }
        }
        for (i, out) in results.value.enumerated() where i % 2 == 1 {
            XCTAssertEqual(out?.planes, reference.planes, "a converter made on thread \(i) converts differently")
        }
    }
}
