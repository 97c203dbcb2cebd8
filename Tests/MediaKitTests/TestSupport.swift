import Foundation
import XCTest

/// Where the shared corpus of real media files lives (`../shared/media` beside the checkout).
enum SharedMedia {
    static let directory: URL = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/media")
    }()

    /// The corpus files, or a skip when a user's clone has no ../shared (a failure under CI=true).
    static func files(extensions: Set<String>) throws -> [URL] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                XCTFail("../shared/media is missing under CI: \(directory.path)")
                return []
            }
            throw XCTSkip("these tests read real files from ../shared/media, which this clone does not have (\(directory.path))")
        }
        return names.sorted().filter { extensions.contains(($0 as NSString).pathExtension.lowercased()) }
            .map { directory.appendingPathComponent($0) }
    }
}

/// A small deterministic random generator (SplitMix64), so corruption tests repeat exactly.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
