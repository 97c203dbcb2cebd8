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
}
