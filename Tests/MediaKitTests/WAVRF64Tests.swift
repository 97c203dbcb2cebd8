import Foundation
import XCTest
@testable import MediaKit

/// RF64 writing (EBU Tech 3306) past the 4 GiB switch, without writing 4 GiB: the RIFF size
/// above which `.auto` turns to RF64 is lowered. FFmpeg's `-rf64 auto` overwrites the reserved
/// `JUNK` chunk with the `ds64` its `-rf64 always` writes first, so a switched file has the bytes
/// of an `.always` one (checked against ffmpeg's in Tests/oracle/test_wav.py).
final class WAVRF64Tests: XCTestCase {
    private func write(_ layout: PCMFileLayout, frames: Int, tags: [MetadataEntry] = [], id3: Bool = false) throws -> [UInt8] {
        let path = NSTemporaryDirectory() + "rf64-\(UUID().uuidString).wav"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let muxer = try PCMFileMuxer(path: path, layout: layout, id3v2Version: id3 ? 4 : nil)
        _ = try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "pcm_u8", sampleRate: 8000, channels: 1), timeBase: Rational(1, 8000))
        if !tags.isEmpty { try muxer.setMetadata(MuxMetadata(tags: Metadata(tags))) }
        try muxer.write(Packet(trackIndex: 0, pts: 0, dts: 0, duration: Int64(frames), isKeyframe: true,
                               data: (0..<frames).map { UInt8(truncatingIfNeeded: $0) }, timeBase: Rational(1, 8000)))
        try muxer.finish()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func le64(_ b: [UInt8], _ i: Int) -> Int64 { (0..<8).reduce(Int64(0)) { $0 | Int64(b[i + $1]) << (8 * Int64($1)) } }

    func testAutoTurnsToRF64PastTheLimitAsAlwaysWritesIt() throws {
        let small = try write(.wavLayout(rf64: .auto, limit: 1000), frames: 501)
        XCTAssertEqual(Array(small[0..<4]), Array("RIFF".utf8))
        XCTAssertEqual(Array(small[12..<16]), Array("JUNK".utf8))
        let switched = try write(.wavLayout(rf64: .auto, limit: 100), frames: 501)
        XCTAssertEqual(switched, try write(.wavLayout(rf64: .always), frames: 501))
        XCTAssertEqual(Array(switched[0..<8]), Array("RF64".utf8) + [0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual(Array(switched[12..<20]), Array("ds64".utf8) + [28, 0, 0, 0])
        // The RIFF size counts the pad byte of the odd data; the data size is ffmpeg's (with it).
        XCTAssertEqual(le64(switched, 20), Int64(switched.count - 8))
        XCTAssertEqual(le64(switched, 28), 502)
        XCTAssertEqual(le64(switched, 36), 501)
    }

    func testChunksAroundTheSamplesGrowTheDS64Size() throws {
        let tags = [MetadataEntry(key: "title", nativeKey: "INAM", ffmpegKey: "title", value: "Sine")]
        let file = try write(.wavLayout(rf64: .always), frames: 64, tags: tags, id3: true)
        XCTAssertEqual(Array(file[0..<8]), Array("RF64".utf8) + [0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertEqual(le64(file, 20), Int64(file.count - 8))
    }
}
