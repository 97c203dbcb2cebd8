import Dispatch
import Foundation
import XCTest
@testable import MediaKit

/// ``AsyncDecodeSession`` fed by the caller (issue 35, item 7: `VTDecompressionSessionDecodeFrame`
/// with the asynchronous flag): `decode(_:)` returns at once, the frames reach the consumer in
/// presentation order, and they are the synchronous ``DecodeSession``'s over the same packets,
/// frame for frame (pts and bytes), which Tests/oracle/test_decode.py checks against ffmpeg
/// (and Tests/oracle/test_async_packets.py checks this session against `ffmpeg -f framemd5`
/// through C and Python). Also: finish / flush / wait, the error callback (item 10), the
/// packet queue's bound, cancel.
final class AsyncPacketDecodeTests: XCTestCase {
    typealias Fingerprint = AsyncDecodeSessionTests.Fingerprint
    static let sample = AsyncDecodeSessionTests.sample

    /// The packets of `track` of the sample, in file order.
    static func packets(track: Int) throws -> (Track, [Packet]) {
        let demuxer = try MediaRegistry.shared.makeDemuxer(path: sample)
        var out: [Packet] = []
        while let p = try demuxer.read(track: track) { out.append(p) }
        return (demuxer.tracks[track], out)
    }

    func testFramesThroughTheSequenceAreTheSynchronousDecodesInPresentationOrder() throws {
        try AsyncDecodeSessionTests.runAsync {
            for track in [0, 1] {   // H.264 with B-frames, AAC
                let reference = try AsyncDecodeSessionTests.syncFingerprints(track: track)
                let (t, packets) = try Self.packets(track: track)
                let session = try AsyncDecodeSession(track: t, bufferLimit: 3, packetLimit: 2)
                let feeder = Task.detached {
                    for p in packets { try session.decode(p) }
                    try session.finish()
                }
                var got: [Fingerprint] = []
                for try await frame in session.frames { got.append(AsyncDecodeSessionTests.fingerprint(frame)) }
                try await feeder.value
                XCTAssertEqual(got, reference, "track \(track)")
                XCTAssertEqual(session.packetsSent, packets.count, "track \(track): every packet went to the decoder once")
                if track == 0 {
                    XCTAssertEqual(got.count, 125)
                    XCTAssertTrue(zip(got, got.dropFirst()).allSatisfy { $0.pts < $1.pts }, "presentation order")
                    XCTAssertTrue(zip(packets, packets.dropFirst()).contains { $0.pts > $1.pts }, "the packets come in decoding order (B-frames)")
                }
            }
        }
    }

    /// Callbacks: `decode` returns before the frames come (they come on the caller's queue, in
    /// order), `waitForAsynchronousFrames` returns once every frame's callback has returned,
    /// the flush completion comes after the frames before it, and `finish` ends with `end`.
    func testCallbacksWaitAndFlushCompletion() throws {
        let reference = try AsyncDecodeSessionTests.syncFingerprints(track: 0)
        let (t, packets) = try Self.packets(track: 0)
        let queue = DispatchQueue(label: "test.packets")
        let session = try AsyncDecodeSession(track: t)
        let got = Locked<[Fingerprint]>([])
        let events = Locked<[String]>([])
        let gate = DispatchSemaphore(value: 0)
        let held = Locked(false)
        try session.start(on: queue, frame: { frame in
            dispatchPrecondition(condition: .onQueue(queue))
            if !held.mutate({ h in defer { h = true }; return h }) { gate.wait() }   // the first frame's callback waits for the test
            got.mutate { $0.append(AsyncDecodeSessionTests.fingerprint(frame)) }
        }, error: { e in events.mutate { $0.append("error \(e)") } }, end: { events.mutate { $0.append("end") } })
        // The first packets are decoded while the first callback is held: decode() did not wait for it.
        for p in packets.prefix(4) { try session.decode(p) }
        XCTAssertEqual(got.value.count, 0)
        gate.signal()
        for p in packets.dropFirst(4).prefix(56) { try session.decode(p) }
        let flushedAt = Locked(-1)
        session.flush { flushedAt.mutate { $0 = got.value.count } }
        session.waitForAsynchronousFrames()
        // Every frame of the first 60 packets has been delivered (the flush drained the delayed ones).
        XCTAssertEqual(flushedAt.value, got.value.count, "the completion came after every frame before the flush")
        let first60 = Set(packets.prefix(60).map(\.pts))
        XCTAssertEqual(Set(got.value), Set(reference.filter { first60.contains($0.pts) }), "the frames of the first 60 packets, all delivered")
        for p in packets.dropFirst(60) { try session.decode(p) }
        try session.finish()
        session.waitForAsynchronousFrames()
        XCTAssertEqual(events.value, ["end"])
        XCTAssertEqual(got.value.count, reference.count, "no frame lost or duplicated by the flush")
        XCTAssertEqual(Set(got.value), Set(reference))
        XCTAssertThrowsError(try session.decode(packets[0])) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
        // A seek starts a new stream: the packets from the key frame before 2.3 s give the synchronous seek's frames.
        let afterSeek = try AsyncDecodeSessionTests.syncFingerprints(track: 0, seek: 2.3, warmUp: 30)
        let demuxer = try MediaRegistry.shared.makeDemuxer(path: Self.sample)
        try demuxer.seekForDecoding(to: 2.3)
        try session.seek(to: 2.3)
        got.mutate { $0 = [] }
        while let p = try demuxer.read(track: 0) { try session.decode(p) }
        try session.finish()
        session.waitForAsynchronousFrames()
        XCTAssertFalse(afterSeek.isEmpty)
        XCTAssertEqual(got.value, afterSeek)
        XCTAssertEqual(events.value, ["end", "end"])
        session.cancel()
    }

    /// `waitForAsynchronousFrames` called by a callback returns at once (what it waits for
    /// includes that callback: it hung), in the frame callback and in the end callback (it then
    /// waited for the queue it ran on, which stops the process); `cancel` called by a callback
    /// stops the frames after it. Every frame still comes (the synchronous decode's).
    func testWaitAndCancelFromACallback() throws {
        let reference = try AsyncDecodeSessionTests.syncFingerprints(track: 0)
        let (t, packets) = try Self.packets(track: 0)
        let queue = DispatchQueue(label: "test.wait-in-callback")
        let session = try AsyncDecodeSession(track: t)
        let got = Locked<[Fingerprint]>([])
        let waits = Locked(0)
        let ended = DispatchSemaphore(value: 0)
        try session.start(on: queue, frame: { frame in
            if got.value.count % 40 == 0 {
                session.waitForAsynchronousFrames()
                waits.mutate { $0 += 1 }
            }
            got.mutate { $0.append(AsyncDecodeSessionTests.fingerprint(frame)) }
        }, end: {
            session.waitForAsynchronousFrames()
            ended.signal()
        })
        for p in packets { try session.decode(p) }
        try session.finish()
        XCTAssertEqual(ended.wait(timeout: .now() + 60), .success, "the end callback's wait returned")
        session.waitForAsynchronousFrames()
        XCTAssertEqual(got.value, reference)
        XCTAssertEqual(waits.value, (reference.count + 39) / 40)
        session.cancel()

        let cancelling = try AsyncDecodeSession(track: t)
        let seen = Locked(0)
        let cancelled = DispatchSemaphore(value: 0)
        try cancelling.start(on: queue, frame: { _ in
            if seen.mutate({ n in n += 1; return n }) == 3 {
                cancelling.cancel()
                cancelled.signal()
            }
        })
        for p in packets.prefix(40) { try? cancelling.decode(p) }
        XCTAssertEqual(cancelled.wait(timeout: .now() + 60), .success)
        queue.sync {}
        XCTAssertEqual(seen.value, 3, "no frame callback after cancel() returned in one")
    }

    /// A packet the decoder cannot take with recovery off: the error comes to the error
    /// callback as an error (item 10), and the next decode() throws it.
    func testADecodingErrorComesToTheErrorCallbackAndTheNextCall() throws {
        let (t, packets) = try Self.packets(track: 0)
        var policy = DecodeSession.RecoveryPolicy()
        policy.enabled = false
        let session = try AsyncDecodeSession(track: t, threads: 1, recovery: policy)
        let queue = DispatchQueue(label: "test.error")
        let errors = Locked<[Error]>([])
        let frames = Locked(0)
        try session.start(on: queue, frame: { _ in frames.mutate { $0 += 1 } }, error: { e in errors.mutate { $0.append(e) } },
                          end: { XCTFail("no end after an error") })
        for p in packets.prefix(10) { try session.decode(p) }
        var bad = packets[10]
        bad.data = [UInt8](repeating: 0xff, count: 64)   // not H.264 at all
        bad.isKeyframe = true
        try session.decode(bad)
        session.waitForAsynchronousFrames()
        XCTAssertEqual(errors.value.count, 1, "the error callback was called once")
        let e = try XCTUnwrap(errors.value.first as? MediaError)
        XCTAssertEqual(e.kind, .invalidData, "\(e)")
        XCTAssertThrowsError(try session.decode(packets[11])) { XCTAssertEqual(($0 as? MediaError)?.kind, .invalidData) }
        XCTAssertThrowsError(try session.finish())
        session.cancel()
        session.wait()
    }

    /// The same error through the sequence: it is thrown from the iteration.
    func testADecodingErrorIsThrownFromTheSequence() throws {
        try AsyncDecodeSessionTests.runAsync {
            let (t, packets) = try Self.packets(track: 0)
            var policy = DecodeSession.RecoveryPolicy()
            policy.enabled = false
            let session = try AsyncDecodeSession(track: t, threads: 1, recovery: policy)
            for p in packets.prefix(3) { try session.decode(p) }
            var bad = packets[3]
            bad.data = [UInt8](repeating: 0xff, count: 64)
            try session.decode(bad)
            var n = 0
            do {
                for try await _ in session.frames { n += 1 }
                XCTFail("the sequence ended without the error")
            } catch let e as MediaError {
                XCTAssertEqual(e.kind, .invalidData)
            }
            XCTAssertLessThan(n, 3)
        }
    }

    /// The packet queue is bounded: with no consumer, nothing is decoded and the
    /// `packetLimit + 1`th decode() waits, until a consumer starts (or the session is cancelled).
    func testDecodeWaitsOnlyWhenThePacketQueueIsFull() throws {
        let (t, packets) = try Self.packets(track: 1)
        let session = try AsyncDecodeSession(track: t, bufferLimit: 2, packetLimit: 3)
        XCTAssertEqual(session.packetLimit, 3)
        for p in packets.prefix(3) { try session.decode(p) }   // returns at once
        let fourth = DispatchSemaphore(value: 0)
        let p3 = packets[3]
        DispatchQueue.global().async {
            try? session.decode(p3)
            fourth.signal()
        }
        XCTAssertEqual(fourth.wait(timeout: .now() + 0.3), .timedOut, "the 4th packet did not wait for room")
        var n = 0
        XCTAssertNotNil(try session.nextFrame())   // a consumer: decoding starts, room is made
        n += 1
        XCTAssertEqual(fourth.wait(timeout: .now() + 30), .success)
        // Cancelling wakes a decode() that waits, which then throws.
        let rest = Array(packets.dropFirst(4))
        let thrown = Locked<Error?>(nil)
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            do { for p in rest { try session.decode(p) } } catch { thrown.mutate { $0 = error } }
            stopped.signal()
        }
        Thread.sleep(forTimeInterval: 0.1)
        session.cancel()
        XCTAssertEqual(stopped.wait(timeout: .now() + 30), .success, "a waiting decode() was not woken by cancel()")
        XCTAssertEqual((thrown.value as? MediaError)?.kind, .state)
        session.wait()
        XCTAssertGreaterThan(n, 0)
    }

    /// A session that reads its own demuxer takes no packets.
    func testADemuxerSessionRefusesPackets() throws {
        let (_, packets) = try Self.packets(track: 0)
        let session = try AsyncDecodeSession(path: Self.sample, track: 0)
        XCTAssertThrowsError(try session.decode(packets[0])) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
        XCTAssertThrowsError(try session.finish()) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
    }
}
