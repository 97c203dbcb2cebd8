import Foundation
import XCTest
@testable import MediaKit

/// Native FLAC: seeking (through a SEEKTABLE and by scanning) lands on the frame that holds the
/// time asked for and reads on as a full read does; damaged and cut files give an error or the
/// packets before the damage, never a crash, a hang or a runaway read. Oracle: the intact file
/// read from its start (whose packets Tests/oracle/test_flac.py compares with ffprobe's).
/// The files are written by ffmpeg and by libFLAC's `flac` (scripts/deps.sh installs both).
final class FLACDemuxerTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-flac-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: dir)
    }

    private func run(_ args: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = args
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw MediaError(.io, "\(args[0]) failed (status \(p.terminationStatus)) writing this test's input: scripts/deps.sh installs it") }
    }

    /// 30 s of a changing tone: through ffmpeg (no SEEKTABLE) or libFLAC (a SEEKTABLE every 10 s).
    private func make(_ name: String, reference: Bool, seconds: Int = 30) throws -> String {
        let wav = dir.appendingPathComponent(name + ".wav").path
        let flac = dir.appendingPathComponent(name + ".flac").path
        try run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=500:beep_factor=4:duration=\(seconds):sample_rate=44100",
                 "-ac", "2", "-c:a", "pcm_s16le", wav])
        if reference {
            try run(["flac", "-s", "-f", "-5", "-S", "10s", "-o", flac, wav])
        } else {
            try run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", wav, "-c:a", "flac", flac])
        }
        return flac
    }

    private func readAll(_ d: Demuxer, limit: Int = 1_000_000) throws -> [Packet] {
        var out: [Packet] = []
        while let p = try d.read() {
            out.append(p)
            if out.count > limit { XCTFail("runaway read"); break }
        }
        return out
    }

    private func checkSeeks(_ path: String, expectTable: Bool) throws {
        let full = try readAll(try FLACDemuxer(path: path))
        XCTAssertGreaterThan(full.count, 100)
        for seconds in [0.0, 0.01, 4.99, 10.0, 12.345, 20.0, 29.9, 29.99, 31.0, -5, 1e300] {
            let d = try FLACDemuxer(path: path)
            XCTAssertEqual(!d.seekPoints.isEmpty, expectTable)
            try d.seek(to: seconds)
            let target = Int64(min(max(0, seconds), 1e9) * 44100)
            guard let i = full.firstIndex(where: { $0.pts + $0.duration > target }) else {
                XCTAssertNil(try d.read(), "a seek past the end reads nothing")
                continue
            }
            let after = try readAll(d)
            XCTAssertEqual(after.count, full.count - i, "seek to \(seconds)")
            for (a, b) in zip(after, full[i...]) {
                XCTAssertEqual([a.position, a.pts, a.duration], [b.position, b.pts, b.duration], "seek to \(seconds)")
                XCTAssertEqual(a.data, b.data)
            }
        }
    }

    func testSeekToNotANumberIsAnError() throws {
        let d = try FLACDemuxer(path: try make("nan", reference: false, seconds: 1))
        for bad in [Double.nan, .infinity, -.infinity] {
            XCTAssertThrowsError(try d.seek(to: bad)) { XCTAssertEqual(($0 as? MediaError)?.kind, .invalidArgument) }
        }
    }

    func testSeekThroughTheSeekTable() throws {
        try checkSeeks(try make("table", reference: true), expectTable: true)
    }

    func testSeekByScanningWithoutSeekTable() throws {
        try checkSeeks(try make("scan", reference: false), expectTable: false)
    }

    func testSeekOnAStreamIsRefused() throws {
        let path = try make("stream", reference: false, seconds: 2)
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        var at = 0
        let source = CallbackSource(name: "pipe", size: nil, read: { buffer in
            let n = min(buffer.count, bytes.count - at)
            bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + at, byteCount: n) }
            at += n
            return n
        }, seek: nil)
        let d = try FLACDemuxer(source: source)
        XCTAssertThrowsError(try d.seek(to: 1)) { XCTAssertEqual(($0 as? MediaError)?.kind, .unsupported) }
        let piped = try readAll(d)
        let file = try readAll(try FLACDemuxer(path: path))
        XCTAssertEqual(piped.map(\.position), file.map(\.position))
        XCTAssertEqual(piped.map(\.data), file.map(\.data))
    }

    /// Every cut and random damage: an error naming an offset or the packets up to the damage.
    func testDamageIsAnErrorOrSkipped() throws {
        let path = try make("damage", reference: true, seconds: 3)
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let full = try readAll(try FLACDemuxer(path: path))
        var rng = SeededRandom(state: 12)
        var cases: [[UInt8]] = [[], Array(good.prefix(3)), Array(good.prefix(4)), Array(good.prefix(41)), Array(good.prefix(42))]
        for _ in 0..<40 { cases.append(Array(good.prefix(Int.random(in: 0..<good.count, using: &rng)))) }
        for _ in 0..<60 {
            var b = good
            for _ in 0..<Int.random(in: 1...8, using: &rng) {
                let i = Int.random(in: 0..<b.count, using: &rng)
                b[i] = UInt8.random(in: 0...255, using: &rng)
            }
            cases.append(b)
        }
        // Garbage in the middle, and a frame's bytes repeated.
        cases.append(Array(good.prefix(20_000)) + [UInt8](repeating: 0xFF, count: 5000) + Array(good.dropFirst(20_000)))
        cases.append(Array(good.prefix(30_000)) + Array(good[25_000..<30_000]) + Array(good.dropFirst(30_000)))
        for (n, b) in cases.enumerated() {
            var packets: [Packet] = []
            do {
                let d = try FLACDemuxer(source: MemorySource(b, name: "case\(n)"))
                while let p = try d.read() {
                    packets.append(p)
                    XCTAssertLessThanOrEqual(p.data.count, b.count)
                    if packets.count > full.count + 100 { XCTFail("case \(n): runaway read"); break }
                }
            } catch let e as MediaError {
                XCTAssertNotNil(e.offset, "case \(n): \(e)")
            }
            if b.count < good.count && b == Array(good.prefix(b.count)) && b.count > 0 {
                // A cut file: the packets it holds whole are the full read's.
                for (a, f) in zip(packets, full) where !a.isTruncated {
                    XCTAssertEqual(a.position, f.position, "case \(n)")
                    XCTAssertEqual(a.data, f.data, "case \(n)")
                }
            }
        }
    }

    func testFrameHeaderFields() throws {
        // Fixed strategy, frame 1, 4096 samples (code 12), 44.1 kHz (9), stereo (0001), 16 bit (100).
        var h: [UInt8] = [0xFF, 0xF8, 0xC9, 0x18, 0x01]
        h.append(h.withUnsafeBytes { FLACFrameHeader.crc8($0) })
        let parsed = try XCTUnwrap(FLACFrameHeader.parse(h))
        XCTAssertEqual([parsed.blockSize, parsed.sampleRate, parsed.channels, parsed.bitsPerSample, Int(parsed.number), parsed.length],
                       [4096, 44100, 2, 16, 1, 6])
        h[5] ^= 1
        XCTAssertNil(FLACFrameHeader.parse(h), "a CRC-8 mismatch is not a header")
        XCTAssertNotNil(FLACFrameHeader.parse(h, checkCRC: false))
    }
}
