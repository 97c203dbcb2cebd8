import Foundation
import XCTest
@testable import MediaKit

/// Several threads decoding at once, each with its own registry (so plugins are being found,
/// loaded and initialised on one thread while another decodes) and its own decoders: every
/// thread's frames must equal a decode of the same file on one thread (the oracle: the same
/// input decoded another way). Meant for `swift test --sanitize=thread` (`make sanitize`), and
/// cheap enough for every `swift test`.
final class ConcurrentDecodeTests: XCTestCase {
    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Samples/media/sample.mp4").path

    /// FNV-1a over the presented bytes of every frame (rows of pictures without their padding,
    /// the samples of audio planes), and the frame count.
    private static func digest(registry: MediaRegistry) throws -> [String] {
        registry.loadDefaultLocations()
        let demuxer = try MP4Demuxer(path: sample)
        var out: [String] = []
        for track in demuxer.tracks {
            let session = try DecodeSession(track: track, registry: registry, threads: 2)
            var hash = FNV1a()
            var frames = 0
            func eat(_ frame: Frame) {
                frames += 1
                hash.add(presentedBytesOf: frame)
            }
            let reader = try MP4Demuxer(path: sample)
            while let p = try reader.read(track: track.index) {
                while try session.send(p) == .receiveFirst {
                    while let f = try session.receive() { eat(f) }
                }
                while let f = try session.receive() { eat(f) }
            }
            try session.flush()
            while let f = try session.receive() { eat(f) }
            out.append("track \(track.index): \(frames) frames, \(String(hash.value, radix: 16))")
        }
        return out
    }

    func testThreadsLoadingPluginsAndDecodingAtOnceAgreeWithOneThread() throws {
        let reference = try Self.digest(registry: MediaRegistry())
        XCTAssertEqual(reference.count, 2)
        XCTAssertTrue(reference.allSatisfy { !$0.contains(": 0 frames") }, "\(reference)")
        let threads = 4
        // Under an NSLock (pthread): ThreadSanitizer does not see Synchronization.Mutex's
        // futex on Linux, and reported its guarded writes as a race when two threads ended at once.
        let results = Locked<[Int: Result<[String], Error>]>([:])
        DispatchQueue.concurrentPerform(iterations: threads) { i in
            // A registry of its own: plugins are loaded while the other threads decode.
            let r = Result { try Self.digest(registry: MediaRegistry()) }
            results.mutate { $0[i] = r }
        }
        let all = results.value
        for i in 0..<threads {
            switch all[i] {
            case .success(let got)?: XCTAssertEqual(got, reference, "thread \(i)")
            case .failure(let e)?: XCTFail("thread \(i): \(e)")
            case nil: XCTFail("thread \(i) gave no result")
            }
        }
    }
}
