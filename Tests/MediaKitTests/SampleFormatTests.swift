import Foundation
import MediaKit
import XCTest

/// ``SampleFormat`` is the one sample-format type (it replaced `AudioSampleType` and `PCMFormat`):
/// its names are FFmpeg's (its raw values, the C API's `MK_SAMPLES_*` codes, are checked in
/// `RegistryTests.testFormatValuesAreThoseOfTheSharedHeader`).
final class SampleFormatTests: XCTestCase {
    func testS24IsThreeBytesAndLayoutsPair() {
        XCTAssertEqual(SampleFormat.s24.bytesPerSample, 3)
        XCTAssertEqual(SampleFormat.s24Planar.bytesPerSample, 3)
        XCTAssertTrue(SampleFormat.s24Planar.isPlanar)
        XCTAssertFalse(SampleFormat.s24.isPlanar)
        for f in SampleFormat.allCases {
            XCTAssertFalse(f.interleaved.isPlanar)
            XCTAssertTrue(f.planar.isPlanar)
            XCTAssertEqual(f.planar.interleaved, f.interleaved)
            XCTAssertEqual(f.bytesPerSample, f.interleaved.bytesPerSample)
            XCTAssertEqual(f.isFloat, f.typeName.hasPrefix("f"))
            XCTAssertEqual(SampleFormat(name: f.name), f, "FFmpeg's name \(f.name)")
            XCTAssertEqual(SampleFormat(name: f.typeName), f.interleaved)
        }
        XCTAssertEqual(SampleFormat(name: "S24LE"), .s24)
        XCTAssertNil(SampleFormat(name: "s12"))
    }

    static func ffmpeg(_ args: String...) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["ffmpeg", "-hide_banner"] + args
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return out
    }

    /// FFmpeg's sample formats (`ffmpeg -sample_fmts`: name and bits) hold each of our native
    /// types by the same name and width; the big-endian types and s8 are FFmpeg's raw PCM
    /// formats (`ffmpeg -formats`: "s16be" ...) of the same name.
    func testNamesAreFFmpegs() throws {
        var depth: [String: Int] = [:]
        for line in try Self.ffmpeg("-sample_fmts").split(separator: "\n").dropFirst() {
            let parts = line.split(separator: " ")
            if parts.count == 2, let d = Int(parts[1]) { depth[String(parts[0])] = d }
        }
        XCTAssertFalse(depth.isEmpty, "ffmpeg -sample_fmts printed nothing")
        let natives: Set<SampleFormat> = [.u8, .s16, .s32, .f32, .f64]
        for f in SampleFormat.allCases where natives.contains(f.interleaved) {
            XCTAssertEqual(depth[f.name], f.bytesPerSample * 8, "\(f.name)")
        }
        // " DE s16be           PCM signed 16-bit big-endian"
        var raw: Set<String> = []
        for line in try Self.ffmpeg("-formats").split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count >= 2, parts[0].contains("E") { raw.insert(String(parts[1])) }
        }
        for f: SampleFormat in [.s8, .s16be, .s24be, .s32be, .f32be, .f64be] {
            XCTAssertTrue(raw.contains(f.name), "ffmpeg -formats has no muxer \(f.name)")
            XCTAssertTrue(f.isBigEndian || f == .s8)
        }
    }

    /// Every type has a planar form, one value up (the first five: five up), and the names
    /// read back; the variants' widths are those of the formats they store.
    func testVariantsPairAndNameTheirWidths() {
        let widths: [String: Int] = ["u8": 1, "s8": 1, "s16": 2, "s16be": 2, "s24": 3, "s24be": 3, "s32": 4, "s32be": 4,
                                     "f32": 4, "f32be": 4, "f64": 8, "f64be": 8, "s24in32hi": 4, "s24in32lo": 4]
        XCTAssertEqual(Set(SampleFormat.allCases.map(\.typeName)), Set(widths.keys))
        for f in SampleFormat.allCases {
            XCTAssertEqual(f.bytesPerSample, widths[f.typeName], f.name)
            XCTAssertEqual(f.isBigEndian, f.typeName.hasSuffix("be"), f.name)
            XCTAssertEqual(f.planar.rawValue - f.interleaved.rawValue, f.rawValue <= 10 ? 5 : 1, f.name)
        }
        XCTAssertEqual(SampleFormat(name: "S16BEP"), .s16bePlanar)
        XCTAssertEqual(SampleFormat(name: "s24in32hip"), .s24In32HighPlanar)
        XCTAssertEqual(SampleFormat(name: "s8p"), .s8Planar)
        XCTAssertEqual(SampleFormat.f32bePlanar.name, "f32bep")
        XCTAssertNil(SampleFormat(name: "s12be"))
    }

    /// ``AudioFormat`` keeps the type interleaved and the layout in `isPlanar`, whichever form it is given.
    func testAudioFormatSplitsTypeAndLayout() {
        var a = AudioFormat(.f32Planar, sampleRate: 48000, channels: 2)
        XCTAssertEqual(a.sampleType, .f32)
        XCTAssertTrue(a.isPlanar)
        XCTAssertEqual(a.sampleFormat, .f32Planar)
        XCTAssertEqual(a, AudioFormat(.f32, planar: true, sampleRate: 48000, channels: 2))
        a.sampleType = .s24Planar
        XCTAssertEqual(a.sampleType, .s24)
        XCTAssertEqual(a.sampleFormat, .s24Planar)
        XCTAssertEqual(a.description, "s24 planar 48000 Hz stereo")
    }
}
