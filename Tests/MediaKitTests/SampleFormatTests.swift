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

    /// FFmpeg's sample formats (`ffmpeg -sample_fmts`: name and bits) hold each of ours but s24 by
    /// the same name and width.
    func testNamesAreFFmpegs() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["ffmpeg", "-hide_banner", "-sample_fmts"]
        let pipe = Pipe()
        p.standardOutput = pipe
        try p.run()
        let out = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        var depth: [String: Int] = [:]
        for line in out.split(separator: "\n").dropFirst() {
            let parts = line.split(separator: " ")
            if parts.count == 2, let d = Int(parts[1]) { depth[String(parts[0])] = d }
        }
        XCTAssertFalse(depth.isEmpty, "ffmpeg -sample_fmts printed nothing")
        for f in SampleFormat.allCases where f.interleaved != .s24 {
            XCTAssertEqual(depth[f.name], f.bytesPerSample * 8, "\(f.name)")
        }
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
