import Foundation
import XCTest
@testable import MediaKit

/// Oracle: the file system itself (what exists under which name, and of what type).
final class OutputFileTests: XCTestCase {
    func testNothingAppearsUnderTheTargetNameUntilCommit() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let target = dir.appendingPathComponent("out.pcm").path
        let f = try OutputFile(path: target)
        try f.write([1, 2, 3])
        XCTAssertFalse(FileManager.default.fileExists(atPath: target))
        XCTAssertTrue(FileManager.default.fileExists(atPath: f.temporaryPath))
        try f.commit()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), Data([1, 2, 3]))
        XCTAssertFalse(FileManager.default.fileExists(atPath: f.temporaryPath))

        let g = try OutputFile(path: dir.appendingPathComponent("cancelled.pcm").path)
        try g.write([9])
        g.discard()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["out.pcm"])
    }

    func testADeviceIsWrittenNotReplaced() throws {
        let f = try OutputFile(path: "/dev/null")
        XCTAssertTrue(f.isStream)
        try f.write([UInt8](repeating: 7, count: 3 << 20))
        try f.commit()
        var st = stat()
        XCTAssertEqual(stat("/dev/null", &st), 0)
        XCTAssertEqual(st.st_mode & S_IFMT, S_IFCHR, "/dev/null must still be a character device")
    }

    func testAMissingDirectoryIsAnIOError() {
        XCTAssertThrowsError(try OutputFile(path: "/nonexistent-dir/out.pcm")) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .io)
            // The operating system's errno is kept as the cause (open(2): ENOENT).
            XCTAssertEqual(e.underlying, .system(errno: ENOENT))
            XCTAssertTrue(e.message.hasSuffix(String(cString: strerror(ENOENT))), e.message)
        }
    }

    func testAMissingInputKeepsItsErrnoAsTheCause() {
        XCTAssertThrowsError(try FileSource(path: "/nonexistent-dir/in.mp4")) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .notFound)
            XCTAssertEqual(e.underlying, .system(errno: ENOENT))
            XCTAssertEqual(e.underlying?.description, "errno \(ENOENT) (\(String(cString: strerror(ENOENT))))")
        }
    }

    /// The background writer (a file past its first 1 MiB buffer): small writes, arrays kept
    /// whole (4 KiB and more), raw buffers, bytes laid out in place and a large array, in a
    /// seeded random order over several buffers, must come out in the order written; a patch
    /// after them lands where it was asked. Oracle: the same bytes gathered in memory.
    func testBackgroundWritesKeepTheOrder() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let target = dir.appendingPathComponent("out.bin").path
        let f = try OutputFile(path: target)
        var expected: [UInt8] = []
        var state: UInt64 = 12345
        func next() -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33)
        }
        var n: UInt8 = 0
        func bytes(_ count: Int) -> [UInt8] {
            (0..<count).map { _ in n &+= 1; return n }
        }
        while expected.count < 9 << 20 {
            switch next() % 5 {
            case 0:
                let b = bytes(next() % 300)
                try f.write(b); expected += b
            case 1:
                let b = bytes(4096 + next() % 60000)
                try f.write(b); expected += b
            case 2:
                let b = bytes(next() % 200_000)
                try b.withUnsafeBytes { try f.write($0) }; expected += b
            case 3:
                let b = bytes(188)
                try f.append(count: 188) { p in b.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: 188) } }
                expected += b
            default:
                if next() % 8 == 0 {
                    let b = bytes(1_500_000)
                    try f.write(b); expected += b
                }
            }
        }
        XCTAssertEqual(f.bytesWritten, Int64(expected.count))
        try f.patch([0xAA, 0xBB, 0xCC], at: 5_000_000)
        expected[5_000_000..<5_000_003] = [0xAA, 0xBB, 0xCC]
        let tail = bytes(1000)
        try f.write(tail); expected += tail
        try f.commit()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: target)), Data(expected))
    }

    /// A write the background thread fails (ENOSPC of /dev/full) is thrown by a later call, at
    /// the latest by commit, as an I/O error naming errno; never lost.
    func testABackgroundWriteFailureIsThrown() throws {
        let f = try OutputFile(path: "/dev/full")
        var thrown: MediaError?
        do {
            for _ in 0..<8 { try f.write([UInt8](repeating: 1, count: 700_000)) }
            try f.commit()
        } catch let e as MediaError { thrown = e }
        XCTAssertEqual(thrown?.kind, .io)
        XCTAssertEqual(thrown?.underlying, .system(errno: ENOSPC))
        f.discard()
    }

    /// A file discarded while its background thread runs leaves nothing behind.
    func testDiscardWhileWritingLeavesNothing() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let f = try OutputFile(path: dir.appendingPathComponent("gone.bin").path)
        for _ in 0..<6 { try f.write([UInt8](repeating: 3, count: 1 << 20)) }
        f.discard()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), [])
    }

    /// A commit finished by the writer's thread (the HLS segments'): the file appears whole under
    /// its name after `wait()`, its temporary name gone; a rename that fails (a directory now
    /// stands at the target) is thrown by `wait()` and leaves no temporary file. A file under
    /// one buffer is committed at once. Oracle: the bytes written, the directory's listing.
    func testACommitInTheBackground() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bytes = (0..<(3 << 20) + 5).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }
        let path = dir.appendingPathComponent("whole.bin").path
        let f = try OutputFile(path: path)
        try bytes.withUnsafeBytes { try f.write($0) }
        let pending = try f.commitInBackground()
        XCTAssertThrowsError(try f.write([1]))   // the file is no longer open for writing
        try pending.wait()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), Data(bytes))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir.path), ["whole.bin"])

        let small = dir.appendingPathComponent("small.bin").path
        let s = try OutputFile(path: small)
        try s.write([1, 2, 3])
        let done = try s.commitInBackground()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: small)), Data([1, 2, 3]))   // there before wait()
        try done.wait()

        let blocked = dir.appendingPathComponent("blocked").path
        let g = try OutputFile(path: blocked)
        try bytes.withUnsafeBytes { try g.write($0) }
        try FileManager.default.createDirectory(atPath: blocked + "/inside", withIntermediateDirectories: true)
        let failing = try g.commitInBackground()
        XCTAssertThrowsError(try failing.wait()) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .io, "\(error)")
        }
        XCTAssertEqual(Set(try FileManager.default.contentsOfDirectory(atPath: dir.path)), ["whole.bin", "small.bin", "blocked"])
    }

    /// ReadAhead (the MPEG-TS reader's chunks read on a thread of their own): sequential
    /// requests, a jump back, a request of another size and the end of the file give the bytes
    /// a plain read gives. Oracle: the file's bytes.
    func testReadAheadGivesTheFilesBytes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-ra-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("in.bin").path
        let data = (0..<3_000_001).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        try Data(data).write(to: URL(fileURLWithPath: path))
        let ahead = ReadAhead(source: try FileSource(path: path))
        var at = 0
        let block = 96_256
        while at < data.count {
            let got = try ahead.read(at: Int64(at), count: block)
            XCTAssertEqual(got, Array(data[at..<min(at + block, data.count)]), "at \(at)")
            at += block
            if at == 20 * block {   // a jump back, then sequential again
                XCTAssertEqual(try ahead.read(at: 100, count: 1000), Array(data[100..<1100]))
                at = 7 * block + 11
            }
        }
        XCTAssertEqual(try ahead.read(at: Int64(data.count), count: block), [])
        XCTAssertEqual(try ahead.read(at: 5, count: 3), [data[5], data[6], data[7]])
    }

    /// ForwardReader (an MP4's samples in file order, from blocks read ahead): pieces of
    /// varying size with gaps, one spanning several blocks, a jump back and forward again, and
    /// a piece past the end (an `.endOfFile` error, as a direct read) give what a plain read
    /// gives. Oracle: the file's bytes.
    func testForwardReaderGivesTheFilesBytes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-fr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("in.bin").path
        let data = (0..<5_000_003).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ $0 >> 10) }
        try Data(data).write(to: URL(fileURLWithPath: path))
        let reader = ForwardReader(source: try FileSource(path: path))
        var rng = SeededRandom(state: 3)
        var at = 0
        var jumped = false
        while true {
            let gap = Int.random(in: 0...3, using: &rng) == 0 ? Int.random(in: 0...70_000, using: &rng) : 0
            let count = at > 3_000_000 && at < 3_100_000 ? 1_300_000 : Int.random(in: 1...200_000, using: &rng)
            at += gap
            guard at + count <= data.count else { break }
            XCTAssertEqual(try reader.read(at: Int64(at), count: count), Array(data[at..<at + count]), "at \(at)")
            at += count
            if at > 2_000_000 && !jumped {   // back to the start, then forward again
                jumped = true
                at = 1234
            }
        }
        // Up to the end through the blocks (forward requests in a row), then one past it.
        for i in stride(from: data.count - 100, to: data.count - 5, by: 5) {
            XCTAssertEqual(try reader.read(at: Int64(i), count: 5), Array(data[i..<i + 5]))
        }
        XCTAssertThrowsError(try reader.read(at: Int64(data.count - 5), count: 10)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .endOfFile, "\(error)")
        }
    }
}
