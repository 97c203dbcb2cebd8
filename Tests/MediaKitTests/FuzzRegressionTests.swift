import Foundation
import XCTest

/// Replays every input the fuzzers of `Tests/fuzz` found (crashes, hangs, over-allocations,
/// saved under `Tests/fuzz/regressions/<target>/` once fixed) through the same ``FuzzHarness``
/// function the fuzz target runs. Each must end in an error or a clean read: a crash fails the
/// whole test run, and a case over ``timeLimit`` seconds fails here (the fuzzers' `-timeout` was 10 s).
final class FuzzRegressionTests: XCTestCase {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fuzz/regressions")
    /// Seconds one case may take in a debug build.
    static let timeLimit = 5.0

    func testEveryRegressionInputReadsOrFailsCleanly() throws {
        let fm = FileManager.default
        let targets = try fm.contentsOfDirectory(atPath: Self.directory.path).sorted()
        // The writers' target: its findings include files ffprobe does not read, so its inputs
        // are replayed with that check on (FuzzHarness.mux), as run.sh replays its corpus.
        if fm.isExecutableFile(atPath: "/usr/bin/ffprobe") { setenv("MK_FUZZ_FFPROBE", "1", 1) }
        defer { unsetenv("MK_FUZZ_FFPROBE") }
        var cases = 0
        for target in targets {
            let dir = Self.directory.appendingPathComponent(target)
            guard let names = try? fm.contentsOfDirectory(atPath: dir.path) else { continue }
            // The C API target's inputs go through the demuxers it opens (the C layer is the probe's).
            let key = target == "capi" ? "probe" : target
            guard let run = FuzzHarness.targets[key] else {
                XCTFail("Tests/fuzz/regressions/\(target): no FuzzHarness target of that name")
                continue
            }
            for name in names.sorted() where !name.hasPrefix(".") {
                let data = try [UInt8](Data(contentsOf: dir.appendingPathComponent(name)))
                let start = Date()
                run(data)
                let took = Date().timeIntervalSince(start)
                XCTAssertLessThan(took, Self.timeLimit, "\(target)/\(name) took \(took) s")
                cases += 1
            }
        }
        XCTAssertGreaterThan(cases, 0, "no regression inputs found in \(Self.directory.path)")
    }
}
