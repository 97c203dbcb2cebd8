import Foundation
import XCTest
@testable import MediaKit

/// The storage variants of ``SampleFormat`` (issue 35 item 6, issue 30 item 3): big-endian,
/// signed 8-bit, 24 bits in 32 aligned high or low, and their planar forms, checked against
/// their definitions byte for byte (FFmpeg's raw formats `s16be` ..., `s8`; CoreAudio's
/// "aligned high / low" 24-in-32), and against the native path they must agree with.
final class PCMVariantTests: XCTestCase {
    func convert(_ bytes: [UInt8], _ from: SampleFormat, to: SampleFormat, channels: Int = 1,
                 options: AudioConverter.Options = AudioConverter.Options()) throws -> AudioBuffer {
        let src = AudioFormat(from, sampleRate: 8000, channels: channels)
        let frames = bytes.count / (from.bytesPerSample * channels)
        let planes: [[UInt8]]
        if from.isPlanar {
            let per = frames * from.bytesPerSample
            planes = (0..<channels).map { Array(bytes[($0 * per)..<(($0 + 1) * per)]) }
        } else {
            planes = [bytes]
        }
        let conv = try AudioConverter(from: src, to: AudioFormat(to, sampleRate: 8000, channels: channels), options: options)
        return try conv.convert(AudioBuffer(format: src, frames: frames, planes: planes))
    }

    func le16(_ v: [Int16]) -> [UInt8] { v.flatMap { [UInt8(truncatingIfNeeded: $0), UInt8(truncatingIfNeeded: $0 >> 8)] } }
    func le32(_ v: [Int32]) -> [UInt8] { v.flatMap { x in (0..<4).map { UInt8(truncatingIfNeeded: x >> (8 * $0)) } } }
    func floats(_ v: [Float]) -> [UInt8] { v.flatMap { x in (0..<4).map { UInt8(truncatingIfNeeded: x.bitPattern >> (8 * $0)) } } }

    /// Big-endian is the little-endian bytes reversed sample by sample, both ways, and through
    /// a change of width (s16 -> s32be is s16 << 16, big-endian).
    func testBigEndianIsTheSameValuesBytesReversed() throws {
        let s16: [Int16] = [0x0102, -2, 32767, -32768, 0]
        XCTAssertEqual(try convert(le16(s16), .s16, to: .s16be).planes[0], [1, 2, 0xFF, 0xFE, 0x7F, 0xFF, 0x80, 0x00, 0, 0])
        XCTAssertEqual(try convert([1, 2, 0xFF, 0xFE], .s16be, to: .s16).planes[0], le16([0x0102, -2]))
        XCTAssertEqual(try convert(le16([0x0102, -2]), .s16, to: .s32be).planes[0], [1, 2, 0, 0, 0xFF, 0xFE, 0, 0])
        XCTAssertEqual(try convert(le16([0x0102]), .s16, to: .s24be).planes[0], [1, 2, 0])
        XCTAssertEqual(try convert([0x12, 0x34, 0x56], .s24be, to: .s24).planes[0], [0x56, 0x34, 0x12])
        let f: [Float] = [0.5, -1, 0.25]
        let be = try convert(floats(f), .f32, to: .f32be).planes[0]
        XCTAssertEqual(be, f.flatMap { x in (0..<4).map { UInt8(truncatingIfNeeded: x.bitPattern >> (24 - 8 * $0)) } })
        let f64be = try convert(be, .f32be, to: .f64be).planes[0]
        XCTAssertEqual(f64be, f.flatMap { x in (0..<8).map { UInt8(truncatingIfNeeded: Double(x).bitPattern >> (56 - 8 * $0)) } })
        // Float to big-endian integer rounds as float to the native integer does.
        XCTAssertEqual(try convert(floats([0.5, 1.5 / 32768, 2]), .f32, to: .s16be).planes[0], [0x40, 0, 0, 2, 0x7F, 0xFF])
    }

    /// s8 is u8 with the top bit flipped (FFmpeg's pcm_s8 encoder writes `x - 128`).
    func testS8IsU8WithTheTopBitFlipped() throws {
        XCTAssertEqual(try convert([0x80, 0x00, 0xFF, 0x81], .u8, to: .s8).planes[0], [0x00, 0x80, 0x7F, 0x01])
        XCTAssertEqual(try convert([0x00, 0x80, 0x7F], .s8, to: .s16).planes[0], le16([0, -32768, 0x7F00]))
        XCTAssertEqual(try convert(floats([0, -1, 1, 0.5]), .f32, to: .s8).planes[0], [0, 0x80, 0x7F, 0x40])
        // Silence for a channel the map leaves empty is 0, not u8's 0x80.
        var o = AudioConverter.Options()
        o.channelMix = .map([0, nil])
        let src = AudioFormat(.s8, sampleRate: 8000, channels: 1)
        let out = try AudioConverter(from: src, to: AudioFormat(.s8, sampleRate: 8000, channels: 2), options: o)
            .convert(AudioBuffer(format: src, frames: 2, planes: [[5, 0xFB]]))
        XCTAssertEqual(out.planes[0], [5, 0, 0xFB, 0])
    }

    /// 24 in 32: aligned high is an s32 with a zero low byte, aligned low the 24-bit value
    /// sign-extended; the unused byte is ignored when read.
    func testTwentyFourInThirtyTwoAlignsHighOrLow() throws {
        let s24: [UInt8] = [0x56, 0x34, 0x12, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x80]   // 0x123456, -1, -2^23
        XCTAssertEqual(try convert(s24, .s24, to: .s24In32High).planes[0], le32([0x1234_5600, -256, Int32.min]))
        XCTAssertEqual(try convert(s24, .s24, to: .s24In32Low).planes[0], le32([0x12_3456, -1, -8_388_608]))
        XCTAssertEqual(try convert(le32([0x1234_56AB, -1]), .s24In32High, to: .s24).planes[0], [0x56, 0x34, 0x12, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual(try convert(le32([0x7F12_3456, 0x00FF_FFFF]), .s24In32Low, to: .s24).planes[0], [0x56, 0x34, 0x12, 0xFF, 0xFF, 0xFF])
        // From s32, the low 8 bits are dropped as s32 -> s24 drops them.
        XCTAssertEqual(try convert(le32([0x1234_56FF, -1]), .s32, to: .s24In32High).planes[0], le32([0x1234_5600, -256]))
        XCTAssertEqual(try convert(le32([0x1234_56FF, -1]), .s32, to: .s24In32Low).planes[0], le32([0x12_3456, -1]))
        // From float: FFmpeg's s24 (s32 shifted down); full scale clips to 0x7FFFFF.
        XCTAssertEqual(try convert(floats([1, -1, 0.5]), .f32, to: .s24In32High).planes[0], le32([0x7FFF_FF00, Int32.min, 0x4000_0000]))
        XCTAssertEqual(try convert(floats([1, -1, 0.5]), .f32, to: .s24In32Low).planes[0], le32([0x7F_FFFF, -8_388_608, 0x40_0000]))
        // Same type in and out keeps the bytes as they are.
        XCTAssertEqual(try convert(le32([0x1234_56AB]), .s24In32High, to: .s24In32High).planes[0], le32([0x1234_56AB]))
    }

    /// Every variant, planar or interleaved, goes to its native type and back bit-exactly, and
    /// gives the floats its native type gives (so mixing, resampling and dither see the same
    /// samples whichever byte order they came in).
    func testVariantsRoundTripAndConvertAsTheirNativeType() throws {
        let frames = 3000, channels = 2
        let f64 = AudioFormat(.f64, sampleRate: 48000, channels: channels)
        var bytes = [UInt8](repeating: 0, count: frames * channels * 8)
        var s: UInt64 = 7
        bytes.withUnsafeMutableBytes { p in
            for i in 0..<(frames * channels) {
                s = s &* 6364136223846793005 &+ 1442695040888963407
                p.storeBytes(of: Double(Int64(bitPattern: s) >> 11) / Double(1 << 52) * 0.99, toByteOffset: 8 * i, as: Double.self)
            }
        }
        let source = try AudioBuffer(format: f64, frames: frames, planes: [bytes])
        let variants: [SampleFormat] = [.s8, .s16be, .s24be, .s32be, .f32be, .f64be, .s24In32High, .s24In32Low]
        for v in variants {
            let native = v.native
            let n = try AudioConverter(from: f64, to: AudioFormat(native, sampleRate: 48000, channels: channels)).convert(source)
            for form in [v, v.planar] {
                let fmt = AudioFormat(form, sampleRate: 48000, channels: channels)
                let x = try AudioConverter(from: f64, to: fmt).convert(source)
                XCTAssertEqual(x.frames, frames)
                let back = try AudioConverter(from: fmt, to: n.format).convert(x)
                XCTAssertEqual(back.planes, n.planes, "\(form) from f64 differs from \(native) from f64")
                let again = try AudioConverter(from: n.format, to: fmt).convert(n)
                XCTAssertEqual(again.interleavedBytes, x.interleavedBytes, "\(native) -> \(form) differs from f64 -> \(form)")
                // Mixing (stereo -> mono) and resampling read the variant as they read the native type.
                for (rate, layout) in [(48000, ChannelLayout.mono), (44100, ChannelLayout.stereo)] {
                    let out = AudioFormat(.f32, sampleRate: rate, layout: layout)
                    let a = try AudioConverter(from: fmt, to: out).convert(x)
                    let b = try AudioConverter(from: n.format, to: out).convert(n)
                    XCTAssertEqual(a.planes, b.planes, "\(form) -> \(out)")
                    let c = try AudioConverter(from: out, to: AudioFormat(form, sampleRate: rate, layout: layout)).convert(a)
                    let d = try AudioConverter(from: out, to: AudioFormat(native, sampleRate: rate, layout: layout)).convert(b)
                    let e = try AudioConverter(from: c.format, to: d.format).convert(c)
                    XCTAssertEqual(e.planes, d.planes, "\(out) -> \(form)")
                }
            }
        }
    }

    /// Dither to a variant stays within one step of the variant's width (s8: 1 of 256 levels).
    func testDitherToAVariantIsOneStepOfItsWidth() throws {
        var o = AudioConverter.Options()
        o.dither = true
        let values: [Float] = (0..<4000).map { 0.3 * sin(Float($0) * 0.01) }
        let plain = try convert(floats(values), .f32, to: .s8).planes[0]
        let dithered = try convert(floats(values), .f32, to: .s8, options: o).planes[0]
        XCTAssertNotEqual(plain, dithered)
        for (a, b) in zip(plain, dithered) { XCTAssertLessThanOrEqual(abs(Int(Int8(bitPattern: a)) - Int(Int8(bitPattern: b))), 1) }
    }

    /// The raw writer writes the variants' bytes (`ffmpeg -f s16be`'s); WAV refuses what it cannot hold.
    func testRawWriterTakesVariantsAndWAVRefusesThem() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-variants-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("out.s16be").path
        let writer = try PCMWriter(path: path, sampleType: .s16be, sampleRate: 8000, channels: 1, wav: false)
        let buffer = try convert(le16([0x0102, -2]), .s16, to: .s16be)
        try writer.write(buffer)
        try writer.finish()
        XCTAssertEqual([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))), [1, 2, 0xFF, 0xFE])
        for t: SampleFormat in [.s16be, .s8, .s24In32High, .f64be] {
            XCTAssertThrowsError(try PCMWriter(path: dir.appendingPathComponent("x.wav").path, sampleType: t, sampleRate: 8000, channels: 1, wav: true)) { e in
                XCTAssertTrue((e as? MediaError)?.message.contains("WAV holds little-endian") == true, "\(e)")
            }
        }
    }
}
