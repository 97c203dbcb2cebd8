import Foundation
import XCTest
@testable import MediaKit

/// Bad input must be an error, never a crash or a hang. Oracle: the intact file read the same
/// way — every packet the demuxer returns from a damaged copy must equal the intact file's
/// packet at the same place, and truncation inside sample data must end in a `.truncated`
/// MediaError after the last packet (the one the cut goes through returned partial, as
/// FFmpeg's demuxer returns it), then nil.
/// Reads the real files in ../shared/media.
final class CorruptInputTests: XCTestCase {
    private func readAll(_ path: String) -> (packets: [Packet], error: MediaError?, opened: Bool) {
        var packets: [Packet] = []
        var demuxer: MP4Demuxer?
        do {
            let d = try MP4Demuxer(path: path)
            demuxer = d
            while let p = try d.read() {
                packets.append(p)
                if packets.count > 2_000_000 { XCTFail("runaway read on \(path)"); break }
            }
            return (packets, nil, true)
        } catch let e as MediaError {
            if e.kind == .truncated, let d = demuxer {
                XCTAssertNil(try d.read(), "\(path): after .truncated, read() returns nil")
            }
            return (packets, e, demuxer != nil)
        } catch {
            XCTFail("\(path): a non-MediaError escaped: \(error)")
            return (packets, nil, demuxer != nil)
        }
    }

    private func progressiveFiles() throws -> [URL] {
        let files = try SharedMedia.files(extensions: ["mp4", "mov", "m4a", "qta", "3gp"]).filter {
            !$0.lastPathComponent.hasPrefix("broken") && !$0.lastPathComponent.hasPrefix("fmp4")
        }
        XCTAssertGreaterThan(files.count, 20, "the corpus should hold the progressive files listed in MANIFEST.tsv")
        return files
    }

    func testTruncatedFilesReturnTheirPrefixThenAnError() throws {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("mk-trunc-\(getpid())")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        for file in try progressiveFiles() {
            let intact = readAll(file.path)
            XCTAssertNil(intact.error, "\(file.lastPathComponent) should read cleanly")
            let data = try Data(contentsOf: file)
            for k in 1...10 {
                let cut = data.count * k / 11
                let damaged = tmp.appendingPathComponent(file.lastPathComponent)
                try data.prefix(cut).write(to: damaged)
                let result = readAll(damaged.path)
                for (i, p) in result.packets.enumerated() {
                    XCTAssertLessThan(i, intact.packets.count)
                    guard i < intact.packets.count else { break }
                    let o = intact.packets[i]
                    // The packet the cut goes through comes with the bytes the file has.
                    let data = p.isTruncated ? p.size < o.size && o.data.starts(with: p.data) : p.data == o.data
                    XCTAssertTrue(p.trackIndex == o.trackIndex && p.pts == o.pts && p.position == o.position && data,
                                  "\(file.lastPathComponent) cut at \(cut): packet \(i) differs from the intact file's")
                    XCTAssertLessThanOrEqual(p.position + Int64(p.size), Int64(cut))
                    XCTAssertEqual(p.isTruncated, p.position + Int64(o.size) > Int64(cut), "\(file.lastPathComponent) cut at \(cut): packet \(i) isTruncated")
                }
                let lost = intact.packets.contains { $0.position + Int64($0.size) > Int64(cut) }
                if lost {
                    XCTAssertNotNil(result.error, "\(file.lastPathComponent) cut at \(cut): samples were lost but no error was reported")
                }
                if lost && result.opened {
                    // A cut in the sample data (the moov is whole): the packets before it, then
                    // .truncated. A cut moov fails to open, with its own error.
                    XCTAssertEqual(result.error?.kind, .truncated, "\(file.lastPathComponent) cut at \(cut): samples were lost but no .truncated error was reported")
                    XCTAssertNotNil(result.error?.offset, "the cut names its offset")
                }
            }
        }
    }

    func testRandomByteFlipsNeverCrash() throws {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("mk-flip-\(getpid())")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        var rng = SeededRandom(state: 2026)
        for file in try progressiveFiles() {
            let data = try Data(contentsOf: file)
            // Damage the movie header (moov) most: that is where the parser works hardest.
            let moov = data.range(of: Data("moov".utf8)).map { max(0, $0.lowerBound - 4) } ?? 0
            for round in 0..<10 {
                var bytes = [UInt8](data)
                for n in 0..<(1 + round * 3) {
                    let i = n % 2 == 0 ? Int.random(in: moov..<bytes.count, using: &rng) : Int.random(in: 0..<bytes.count, using: &rng)
                    bytes[i] ^= UInt8.random(in: 1...255, using: &rng)
                }
                let damaged = tmp.appendingPathComponent(file.lastPathComponent)
                try Data(bytes).write(to: damaged)
                _ = readAll(damaged.path)   // must return, with packets and/or a MediaError
            }
        }
    }

    func testBrokenCorpusFilesGiveErrorsNotCrashes() throws {
        for file in try SharedMedia.files(extensions: ["mp4", "mov", "m4a", "m4b", "3gp"]) where file.lastPathComponent.hasPrefix("broken") {
            let r = readAll(file.path)
            if let e = r.error {
                XCTAssertFalse(e.message.isEmpty)
                XCTAssertEqual(e.path, file.path, "errors name the file: \(e)")
            }
        }
    }

    func testMissingFileIsNotFound() {
        XCTAssertThrowsError(try MP4Demuxer(path: "/nonexistent/file.mp4")) { error in
            XCTAssertEqual((error as! MediaError).kind, .notFound)
        }
    }
}
