import Dispatch
import Foundation
import XCTest
@testable import MediaKit

/// ``AsyncDecodeSession``: the frames it delivers (as an AsyncSequence, through callbacks on a
/// serial queue, from the blocking call) are those of the synchronous ``DecodeSession`` over the
/// same packets, in the same order, byte for byte; back-pressure, mid-stream flush, seek and
/// cancellation. The synchronous path is checked against ffmpeg by the oracle suite
/// (Tests/oracle/test_decode.py, test_async_decode.py).
final class AsyncDecodeSessionTests: XCTestCase {
    static let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Samples/media/sample.mp4").path

    /// What identifies a frame: its pts and an FNV-1a hash of its planes' bytes.
    struct Fingerprint: Hashable, CustomStringConvertible {
        let pts: Int64
        let hash: UInt64
        var description: String { "\(pts):\(String(hash, radix: 16))" }
    }

    static func fingerprint(_ f: Frame) -> Fingerprint {
        var h = FNV1a()
        h.add(presentedBytesOf: f)
        return Fingerprint(pts: f.pts, hash: h.value)
    }

    /// Runs `body` on a task and waits for it (at most `seconds`). The tests that need Swift
    /// concurrency run this way instead of as `async` test methods: swift-corelibs-xctest runs
    /// those through an expectation whose weak-reference side table it never frees, which keeps
    /// the whole test suite's objects alive, and LeakSanitizer (`make sanitize`) reports them.
    static func runAsync(seconds: Double = 120, _ body: @escaping @Sendable () async throws -> Void) throws {
        let outcome = Locked<Result<Void, Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do { try await body(); outcome.mutate { $0 = .success(()) } } catch { outcome.mutate { $0 = .failure(error) } }
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success, let result = outcome.value else {
            throw MediaError(.state, "the test's task did not finish within \(seconds) s", context: "AsyncDecodeSessionTests")
        }
        try result.get()
    }

    /// The synchronous decode of one track: the reference every async path must equal.
    /// With `seek`, `warmUp` packets are decoded first (as the async session has decoded some
    /// when it is told to seek: the decoder is then reset, not new).
    static func syncFingerprints(track: Int, seek: Double? = nil, warmUp: Int = 0) throws -> [Fingerprint] {
        let demuxer = try MediaRegistry.shared.makeDemuxer(path: sample)
        let session = try DecodeSession(track: demuxer.tracks[track])
        demuxer.select(tracks: [track])
        for _ in 0..<warmUp {
            if let p = try demuxer.read() { try session.decode(p) { _ in } }
        }
        if let t = seek {
            try demuxer.seek(to: max(0, t - (demuxer.tracks[track].mediaType == .audio ? DecodeSession.seekPreroll : 0)))
            try session.seek(to: t)
        }
        var out: [Fingerprint] = []
        while let p = try demuxer.read() {
            try session.decode(p) { out.append(fingerprint($0)) }
        }
        try session.finish { out.append(fingerprint($0)) }
        return out
    }

    func testFrameSequenceEqualsTheSynchronousDecode() throws {
        try Self.runAsync {
            for track in [0, 1] {
                let reference = try Self.syncFingerprints(track: track)
                XCTAssertGreaterThan(reference.count, 100)
                let session = try AsyncDecodeSession(path: Self.sample, track: track, bufferLimit: 4)
                var got: [Fingerprint] = []
                for try await frame in session.frames { got.append(Self.fingerprint(frame)) }
                XCTAssertEqual(got, reference, "track \(track)")
                XCTAssertEqual(session.framesDelivered, reference.count)
            }
        }
    }

    func testCallbacksRunOnTheCallersSerialQueueInOrder() throws {
        let reference = try Self.syncFingerprints(track: 0)
        let queue = DispatchQueue(label: "test.callbacks")
        let session = try AsyncDecodeSession(path: Self.sample, track: 0, bufferLimit: 3)
        let got = Locked<[Fingerprint]>([])
        let done = DispatchSemaphore(value: 0)
        try session.start(on: queue, frame: { frame in
            dispatchPrecondition(condition: .onQueue(queue))
            got.mutate { $0.append(Self.fingerprint(frame)) }
        }, error: { error in
            XCTFail("\(error)")
        }, end: {
            dispatchPrecondition(condition: .onQueue(queue))
            done.signal()
        })
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success, "no end within 60 s")
        XCTAssertEqual(got.value, reference)
        // One consumer only.
        XCTAssertThrowsError(try session.nextFrame()) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
    }

    func testDecodingRunsAheadByAtMostTheBufferLimit() throws {
        let session = try AsyncDecodeSession(path: Self.sample, track: 0, bufferLimit: 2)
        var taken = 0
        while let _ = try session.nextFrame() {
            taken += 1
            if taken % 10 == 0 { Thread.sleep(forTimeInterval: 0.02) }   // a slow consumer: the thread must wait
            XCTAssertLessThanOrEqual(session.core.peakWaiting, 2)
        }
        XCTAssertEqual(taken, 125)
        XCTAssertNil(try session.nextFrame(), "the end again, not a wait")
        XCTAssertEqual(session.core.peakWaiting, 2, "the decoder ran ahead of a slow consumer up to the limit")
    }

    /// The iOS flush: the delayed frames come out, the completion is called, and decoding goes
    /// on with the next packet: every frame comes out exactly once, byte-identical.
    func testMidStreamFlushDeliversEveryFrameOnceAndKeepsTheSessionUsable() throws {
        let reference = try Self.syncFingerprints(track: 0)
        let queue = DispatchQueue(label: "test.flush")
        let session = try AsyncDecodeSession(path: Self.sample, track: 0)
        let got = Locked<[Fingerprint]>([])
        let flushes = Locked<[Int]>([])
        let done = DispatchSemaphore(value: 0)
        try session.start(on: queue, frame: { frame in
            let n = got.mutate { $0.append(Self.fingerprint(frame)); return $0.count }
            if n % 17 == 0 {
                session.flush { flushes.mutate { $0.append(got.value.count) } }
            }
        }, error: { XCTFail("\($0)") }, end: { done.signal() })
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success, "no end within 60 s")
        // A flush asked for by the last frames completes after the end: the session's thread
        // (or the one the flush starts after the end) puts its completion on the queue when it
        // gets to it, which under load can be after the end's callback. Wait for that thread,
        // then for the queue (the sanitizer run under load once counted 6 of 7 completions).
        session.wait()
        queue.sync {}
        XCTAssertEqual(got.value.count, reference.count)
        XCTAssertEqual(Set(got.value), Set(reference), "a frame was lost or damaged by a flush")
        XCTAssertEqual(flushes.value.count, reference.count / 17)
        // After a flush the frames go on from where decoding was: pts order holds between flushes.
        XCTAssertFalse(flushes.value.isEmpty)
        session.cancel()   // the frame callback captures the session: cancel() breaks the cycle
    }

    /// A session keeps its callbacks (a seek after the end delivers again) until cancel(),
    /// which lets go of them: a callback that captures the session no longer keeps it alive.
    func testCancelReleasesCallbacksThatCaptureTheSession() throws {
        let queue = DispatchQueue(label: "test.release")
        weak var released: AsyncDecodeSession?
        do {
            let session = try AsyncDecodeSession(path: Self.sample, track: 1, bufferLimit: 2)
            released = session
            let done = DispatchSemaphore(value: 0)
            try session.start(on: queue, frame: { _ in _ = session.framesDelivered }, end: { done.signal() })
            XCTAssertEqual(done.wait(timeout: .now() + 60), .success, "no end within 60 s")
            session.cancel()
            session.wait()
        }
        queue.sync {}   // the blocks queued before the cancel have run
        XCTAssertNil(released, "the cancelled session's callbacks still hold it")
    }

    func testFlushInTheFrameSequence() throws {
        try Self.runAsync {
            let reference = try Self.syncFingerprints(track: 0)
            let session = try AsyncDecodeSession(path: Self.sample, track: 0)
            var got: [Fingerprint] = []
            let flushed = Locked(0)
            for try await frame in session.frames {
                got.append(Self.fingerprint(frame))
                if got.count == 40 { session.flush { flushed.mutate { $0 += 1 } } }
            }
            XCTAssertEqual(flushed.value, 1)
            XCTAssertEqual(got.count, reference.count)
            XCTAssertEqual(Set(got), Set(reference))
        }
    }

    /// Video: a seek while decoding is under way. Audio: a seek before the first frame (the
    /// AAC decoder's noise substitution keeps a random state across a reset, so its samples
    /// after a seek depend on what it decoded before, in ffmpeg too: the reference must have
    /// decoded the same, which the async session's read-ahead does not fix).
    func testSeekDeliversWhatTheSynchronousSeekDelivers() throws {
        try Self.runAsync {
            for (track, t) in [(0, 2.3), (1, 3.1234)] {
                let warmUp = track == 0 ? 30 : 0
                let reference = try Self.syncFingerprints(track: track, seek: t, warmUp: warmUp)
                let session = try AsyncDecodeSession(path: Self.sample, track: track)
                var it = session.frames.makeAsyncIterator()
                if warmUp > 0 { _ = try await it.next() }   // decoding is under way ...
                try session.seek(to: t)                     // ... and starts again at t
                var got: [Fingerprint] = []
                while let f = try await it.next() { got.append(Self.fingerprint(f)) }
                XCTAssertEqual(got, reference, "track \(track) at \(t) s")
            }
            let session = try AsyncDecodeSession(path: Self.sample, track: 0)
            XCTAssertThrowsError(try session.seek(to: -1)) { XCTAssertEqual(($0 as? MediaError)?.kind, .invalidArgument) }
        }
    }

    func testCancellingTheTaskStopsTheSession() throws {
        try Self.runAsync {
            let session = try AsyncDecodeSession(path: Self.sample, track: 0, bufferLimit: 2)
            let task = Task {
                var n = 0
                for try await _ in session.frames {
                    n += 1
                    if n == 3 { withUnsafeCurrentTask { $0?.cancel() } }
                }
                return n
            }
            do {
                let n = try await task.value
                XCTFail("the sequence ended normally after \(n) frames")
            } catch is CancellationError {
            }
            session.wait()   // the thread has ended
            XCTAssertLessThan(session.framesDelivered, 10)
            XCTAssertThrowsError(try session.nextFrame()) { XCTAssertTrue($0 is CancellationError) }
            let flushed = Locked(false)
            session.flush { flushed.mutate { $0 = true } }
            XCTAssertTrue(flushed.value, "a flush after cancel completes at once")
        }
    }

    func testDroppingTheSessionEndsItsThread() throws {
        weak var core: AsyncDecodeCore?
        do {
            let session = try AsyncDecodeSession(path: Self.sample, track: 0, bufferLimit: 1)
            core = session.core
            _ = try session.nextFrame()
        }
        // The thread ends once the session is gone (it waits on a full buffer until then).
        let deadline = Date().addingTimeInterval(10)
        while core != nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertNil(core, "the session's thread still holds it")
    }

    func testBadTrackIsAnError() {
        XCTAssertThrowsError(try AsyncDecodeSession(path: Self.sample, track: 7)) {
            XCTAssertEqual(($0 as? MediaError)?.kind, .invalidArgument)
        }
    }
}

/// A value shared between threads under a lock.
final class Locked<T>: @unchecked Sendable {
    private var v: T
    private let lock = NSLock()
    init(_ v: T) { self.v = v }
    var value: T { lock.withLock { v } }
    @discardableResult
    func mutate<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&v) } }
}
