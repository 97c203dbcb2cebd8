import Foundation
import XCTest
@testable import MediaKit

/// `Inflate` (zlib / DEFLATE) against the reference zlib, through Python's `zlib` module: the
/// streams zlib writes at every level and strategy inflate to their input, and for damaged
/// streams (every cut, byte flips) both say the same (an error, or the same bytes). Then the
/// output bound, and the Matroska reader's use of it (ContentCompression, issue 33).
final class InflateTests: XCTestCase {
    /// Runs `script` with python3 in `dir`; fails when python3 is absent (scripts/deps.sh
    /// installs it with the other test tools).
    private func python(_ script: String, in dir: URL) throws {
        struct Missing: Error, CustomStringConvertible {
            var description: String { "/usr/bin/python3 (the reference zlib's binding) is not installed: run scripts/deps.sh" }
        }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw Missing() }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = ["-c", script]
        p.currentDirectoryURL = dir
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "python3 failed")
    }

    private func scratch() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-inflate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(at: dir) }
        return dir
    }

    /// Payloads of every kind a deflater treats differently: text, noise, long runs, empty, large.
    private func payloads() -> [String: [UInt8]] {
        var rng = SystemRandomNumberGenerator()
        let text = Array((0..<400).map { "\($0)\n00:00:\($0 % 60),000 --> 00:00:\($0 % 60),500\nLine \($0) <i>of</i> text\n\n" }.joined().utf8)
        let noise = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &rng) }
        var mixed: [UInt8] = []
        for i in 0..<3000 {
            if i % 7 == 0 {
                mixed += [UInt8](repeating: UInt8(i % 251), count: i % 300)
            } else {
                mixed += noise[(i * 13)..<(i * 13 + 40)]
            }
        }
        return ["text": text, "noise": noise, "runs": [UInt8](repeating: 0, count: 200_000) + [UInt8](repeating: 7, count: 300),
                "empty": [], "mixed": mixed, "one": [0x41]]
    }

    func testInflatesWhatZlibDeflatesAtEveryLevelAndStrategy() throws {
        let dir = try scratch()
        let inputs = payloads()
        for (name, bytes) in inputs { try Data(bytes).write(to: dir.appendingPathComponent("\(name).raw")) }
        try python("""
            import glob, zlib
            for path in glob.glob('*.raw'):
                data = open(path, 'rb').read()
                for level in range(10):
                    open(f'{path[:-4]}.l{level}.z', 'wb').write(zlib.compress(data, level))
                for strategy, name in ((zlib.Z_FIXED, 'fixed'), (zlib.Z_HUFFMAN_ONLY, 'huffman'), (zlib.Z_RLE, 'rle'), (zlib.Z_FILTERED, 'filtered')):
                    for wbits in (9, 15):
                        c = zlib.compressobj(6, zlib.DEFLATED, wbits, 9, strategy)
                        open(f'{path[:-4]}.{name}{wbits}.z', 'wb').write(c.compress(data) + c.flush())
                # Flushes mid-stream: empty stored blocks and blocks ending anywhere.
                c = zlib.compressobj(6)
                out = b''.join(c.compress(data[i:i + 5000]) + c.flush(zlib.Z_SYNC_FLUSH) for i in range(0, len(data), 5000))
                open(f'{path[:-4]}.sync.z', 'wb').write(out + c.flush() + b'trailing bytes zlib leaves unread')
            """, in: dir)
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".z") }.sorted()
        XCTAssertEqual(files.count, inputs.count * 19)
        for file in files {
            let stream = try [UInt8](Data(contentsOf: dir.appendingPathComponent(file)))
            let expected = inputs[String(file.prefix { $0 != "." })]!
            switch Inflate.zlib(stream[...], limit: 1 << 20) {
            case .success(let out): XCTAssertTrue(out == expected, "\(file): \(out.count) bytes, zlib's input had \(expected.count)")
            case .failure(let f): XCTFail("\(file): \(f.reason) at \(f.offset)")
            }
        }
    }

    /// Every cut of a stream, and byte flips: the reference zlib and `Inflate` agree on which fail,
    /// and on the bytes of those that do not.
    func testDamagedStreamsFailWhereZlibFails() throws {
        let dir = try scratch()
        try Data(payloads()["text"]!).write(to: dir.appendingPathComponent("text.raw"))
        try python("""
            import zlib
            data = open('text.raw', 'rb').read()
            c = zlib.compressobj(9, zlib.DEFLATED, 15, 9, zlib.Z_FIXED)
            open('fixed.z', 'wb').write(c.compress(data[:3000]) + c.flush())
            open('dynamic.z', 'wb').write(zlib.compress(data, 9))
            open('stored.z', 'wb').write(zlib.compress(data[:2000], 0))
            """, in: dir)
        var cases: [[UInt8]] = []
        var rng = SystemRandomNumberGenerator()
        for name in ["fixed", "dynamic", "stored"] {
            let stream = try [UInt8](Data(contentsOf: dir.appendingPathComponent("\(name).z")))
            for cut in stride(from: 0, to: stream.count, by: max(1, stream.count / 150)) { cases.append(Array(stream[..<cut])) }
            for _ in 0..<150 {
                var flipped = stream
                let i = Int.random(in: 0..<stream.count, using: &rng)
                flipped[i] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
                cases.append(flipped)
            }
        }
        for (i, c) in cases.enumerated() { try Data(c).write(to: dir.appendingPathComponent("case\(i).in")) }
        try python("""
            import glob, zlib
            for path in glob.glob('case*.in'):
                try:
                    out = zlib.decompress(open(path, 'rb').read())
                except zlib.error:
                    continue
                open(path[:-3] + '.out', 'wb').write(out)
            """, in: dir)
        var failures = 0
        for (i, c) in cases.enumerated() {
            let out = dir.appendingPathComponent("case\(i).out")
            let expected = FileManager.default.fileExists(atPath: out.path) ? try [UInt8](Data(contentsOf: out)) : nil
            switch Inflate.zlib(c[...], limit: 1 << 20) {
            case .success(let bytes): XCTAssertTrue(bytes == expected, "case \(i): inflated, zlib \(expected == nil ? "failed" : "gave other bytes")")
            case .failure(let f):
                failures += 1
                XCTAssertNil(expected, "case \(i): \(f.reason), zlib inflated it")
                XCTAssertTrue(f.offset >= 0 && f.offset <= c.count, "case \(i): offset \(f.offset) outside the \(c.count) bytes")
                XCTAssertFalse(f.reason.isEmpty)
            }
        }
        XCTAssertGreaterThan(failures, cases.count / 2, "most damaged streams must fail")
    }

    func testOutputIsBoundedAndChecksAreNamed() throws {
        // A zlib stream of four stored blocks of 65,535 zeros each (RFC 1951 section 3.2.4), and its Adler-32.
        var stream: [UInt8] = [0x78, 0x01]
        let block = [UInt8](repeating: 0, count: 65_535)
        for i in 0..<4 { stream += [i == 3 ? 1 : 0, 0xFF, 0xFF, 0x00, 0x00] + block }
        let all = [UInt8](repeating: 0, count: 4 * 65_535)
        let adler = Inflate.adler32(all)
        stream += [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)]
        XCTAssertEqual(try Inflate.zlib(stream[...], limit: 1 << 20).get().count, all.count)
        guard case .failure(let f) = Inflate.zlib(stream[...], limit: 100_000) else { return XCTFail("a limit of 100000 bytes passed") }
        XCTAssertTrue(f.reason.contains("past 100000 bytes"), f.reason)
        var bad = stream
        bad[bad.count - 1] ^= 1
        guard case .failure(let g) = Inflate.zlib(bad[...], limit: 1 << 20) else { return XCTFail("a wrong Adler-32 passed") }
        XCTAssertTrue(g.reason.contains("Adler-32"), g.reason)
        XCTAssertEqual(g.offset, bad.count - 4)
        guard case .failure(let h) = Inflate.zlib([0x78, 0x9C][...].dropLast(), limit: 10) else { return XCTFail("one byte passed") }
        XCTAssertEqual(h.offset, 0)
        // The Adler-32 of "Wikipedia" (RFC 1950's algorithm; the value Wikipedia's article gives).
        XCTAssertEqual(Inflate.adler32(Array("Wikipedia".utf8)), 0x11E6_0398)
    }

    /// A Matroska track compressed with zlib: frames come out inflated, CodecPrivate too under
    /// ContentEncodingScope 3, and a damaged frame is a warning naming the track and the offset.
    func testMatroskaZlibFramesAndCodecPrivate() throws {
        // zlib.compress(b"Hello, subtitles!") (Python 3.11, zlib 1.2.13).
        let hello: [UInt8] = [0x78, 0x9C, 0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0xD7, 0x51, 0x28, 0x2E, 0x4D, 0x2A, 0xC9, 0x2C, 0xC9,
                              0x49, 0x2D, 0x56, 0x04, 0x00, 0x37, 0xEF, 0x06, 0x41]
        XCTAssertEqual(try Inflate.zlib(hello[...], limit: 100).get(), Array("Hello, subtitles!".utf8))
        for scope: UInt8 in [1, 3] {
            let d = try MatroskaDemuxer(source: MemorySource(FuzzHarness.matroskaZlibFile(frame: hello, scope: scope), name: "zlib.mkv"))
            XCTAssertNil(d.tracks[0].unsupportedReason)
            XCTAssertEqual(d.tracks[0].parameters.extradata, scope == 3 ? Array("Hello, subtitles!".utf8) : [])
            XCTAssertEqual(try d.read()?.data, Array("Hello, subtitles!".utf8))
            XCTAssertNil(try d.read())
        }
        var damaged = hello
        damaged[10] ^= 0x40
        let d = try MatroskaDemuxer(source: MemorySource(FuzzHarness.matroskaZlibFile(frame: damaged, scope: 1), name: "bad.mkv"))
        XCTAssertNil(try d.read())
        let warning = d.warnings.map(\.description).joined(separator: "\n")
        XCTAssertTrue(warning.contains("track 1: a zlib-compressed frame (25 bytes at offset"), warning)
        XCTAssertTrue(warning.contains("does not inflate"), warning)
        let bad = try MatroskaDemuxer(source: MemorySource(FuzzHarness.matroskaZlibFile(frame: damaged, scope: 3), name: "bad.mkv"))
        XCTAssertTrue(bad.tracks[0].unsupportedReason?.contains("CodecPrivate") == true, bad.tracks[0].unsupportedReason ?? "no reason")
    }
}
