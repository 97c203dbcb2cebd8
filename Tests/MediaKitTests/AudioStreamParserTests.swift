import Foundation
import XCTest
@testable import MediaKit

/// AudioStreamParser: the same events and packets whatever the chunking (the oracle is the
/// same input fed another way: whole), and bad input never crashes or hangs. The packets
/// themselves are checked against ffprobe in Tests/oracle/test_audio_streams.py.
final class AudioStreamParserTests: XCTestCase {
    /// Everything the parser said, as comparable text: events in order, packets one per line.
    private func transcript(_ bytes: [UInt8], chunk: Int) -> [String] {
        let parser = AudioStreamParser(totalBytes: Int64(bytes.count))
        var lines: [String] = []
        func note(_ events: [AudioStreamParser.Event]) {
            for e in events {
                switch e {
                case .packets(let ps): lines += ps.map { "packet \($0.offset) \($0.data.count) \($0.frames) \($0.isTruncated)" }
                case .warning(let w): lines.append("warning \(w.kind) \(w.offset ?? -1)")
                case .tags(let t): lines.append("tags \(t.title ?? "") \(t.artist ?? "") \(t.frames.count) \(t.coverArt?.data.count ?? 0)")
                case .fileFormat(let f): lines.append("format \(f)")
                case .dataFormat(let f): lines.append("data \(f)")
                case .magicCookie(let c): lines.append("cookie \(c)")
                case .dataOffset(let o): lines.append("offset \(o)")
                case .audioDataByteCount(let n): lines.append("bytes \(n)")
                case .audioDataPacketCount(let n): lines.append("packets \(n)")
                case .bitRate(let r, let exact): lines.append("bitrate \(r) \(exact)")
                case .duration(let d, let estimated): lines.append("duration \(d) \(estimated)")
                case .encoderDelayAndPadding(let d, let p): lines.append("gapless \(d) \(p)")
                case .readyToProducePackets: lines.append("ready")
                }
            }
        }
        do {
            var i = 0
            while i < bytes.count {
                note(try parser.push(Array(bytes[i..<min(bytes.count, i + chunk)])))
                i += chunk
            }
            note(parser.finish())
        } catch {
            lines.append("error \(error)")
        }
        // Packets and tags arrive at different pushes for different chunkings; their order
        // among themselves is what must not change, so compare each kind in order.
        return lines.filter { $0.hasPrefix("packet") } + lines.filter { !$0.hasPrefix("packet") }
    }

    func testChunkingDoesNotChangeAnything() throws {
        let files = try SharedMedia.files(extensions: ["mp3", "aac"])
        XCTAssertFalse(files.isEmpty)
        for url in files {
            let bytes = try [UInt8](Data(contentsOf: url))
            let whole = transcript(bytes, chunk: max(1, bytes.count))
            for chunk in [4096, 7, 2] + (bytes.count <= 120_000 ? [1] : []) {
                let got = transcript(bytes, chunk: chunk)
                XCTAssertEqual(got, whole, "\(url.lastPathComponent) in chunks of \(chunk)")
            }
        }
    }

    func testGarbageZeroBytesAndTagsOnly() throws {
        var random = SeededRandom(state: 42)
        let garbage = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        for input in [garbage, [], [0xFF, 0xFB], Array("ID3".utf8) + [4, 0, 0, 0, 0, 0x7F, 0x7F], Array(repeating: 0xFF, count: 5000)] {
            let parser = AudioStreamParser()
            var packets = 0
            for e in try parser.push(input) + parser.finish() { if case .packets(let p) = e { packets += p.count } }
            XCTAssertLessThanOrEqual(packets, 1, "no stream of frames in \(input.count) bytes of noise")
        }
        XCTAssertThrowsError(try AudioStreamParser().push(Array("ADIF".utf8) + [0, 0, 0, 0])) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
        }
    }

    func testHeaderTables() {
        // MPEG-1 Layer III 128 kbit/s 44.1 kHz, no padding: 417 bytes (ISO/IEC 11172-3 2.4.3.1).
        let h = MPEGAudioHeader(0xFF, 0xFB, 0x90, 0x64)!
        XCTAssertEqual([h.version, h.layer, h.sampleRate, h.bitRate, h.frameSize, h.samplesPerFrame], [1, 3, 44100, 128000, 417, 1152])
        // MPEG-2 Layer III 32 kbit/s 22.05 kHz mono: 72 * 32000 / 22050 = 104 bytes, 576 samples.
        let m2 = MPEGAudioHeader(0xFF, 0xF3, 0x40, 0xC4)!
        XCTAssertEqual([m2.version, m2.sampleRate, m2.bitRate, m2.frameSize, m2.samplesPerFrame, m2.channels], [2, 22050, 32000, 104, 576, 1])
        XCTAssertNil(MPEGAudioHeader(0xFF, 0xFB, 0xF0, 0x64))   // bit rate index 15
        XCTAssertNil(MPEGAudioHeader(0xFF, 0xEB, 0x90, 0x64))   // reserved version
        // ADTS LC 44.1 kHz stereo, 371 bytes, no CRC.
        let a = ADTSHeader([0xFF, 0xF1, 0x50, 0x80, 0x2E, 0x7F, 0xFC])!
        XCTAssertEqual([a.objectType, a.sampleRate, a.channels, a.frameLength, a.headerSize], [2, 44100, 2, 371, 7])
        XCTAssertEqual(a.audioSpecificConfig, [0x12, 0x10])
    }
}
