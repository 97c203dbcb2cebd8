import Dispatch
import Foundation
import XCTest
@testable import MediaKit

/// CompressionSession (issue 36 item 2) against the same pictures fed another way: the
/// synchronous VideoEncodingConverter with the same settings (libx264 at one thread is
/// deterministic) gives byte for byte the packets the session's handler receives, in order;
/// the handler runs on the session's queue, never the caller's; completeFrames() returns only
/// once every packet was delivered; invalidate() stops delivery; refusals are thrown.
final class CompressionSessionTests: XCTestCase {
    static let settings = VideoEncoderSettings(codec: "libx264", qp: 20, preset: "veryfast", gopSize: 12, maxBFrames: 2, threads: 1)
    static let format = VideoFormat(pixelFormat: .yuv420p, width: 64, height: 48, timeBase: Rational(1, 25), frameRate: Rational(25, 1))

    override func setUpWithError() throws {
        // The FFmpeg plugin is built with the package; its absence is a broken build, not a skip.
        XCTAssertFalse(MediaRegistry.shared.videoEncoderBackends(named: "libx264").isEmpty,
                       "no libx264 encoder: the FFmpeg plugin did not load")
    }

    /// 20 different pictures: NV12, so that the session converts them too.
    static func pictures() -> [Frame] {
        (0..<20).map { i in
            var f = TestPictures.make(.nv12, width: 64, height: 48)
            let luma = f.planes[0]
            let p = UnsafeMutableRawPointer(mutating: luma.base)
            for y in 0..<48 {
                for x in 0..<64 { p.storeBytes(of: UInt8(truncatingIfNeeded: x * 3 + y * 5 + i * 11), toByteOffset: y * luma.stride + x, as: UInt8.self) }
            }
            f.pts = Packet.noTimestamp
            return f
        }
    }

    final class Collector: @unchecked Sendable {
        let lock = NSLock()
        var packets: [Packet] = []
        var errors: [MediaError] = []
        var onCallerThread = false
    }

    func testPacketsAreThoseOfTheSynchronousEncoderAndArriveOnTheSessionsQueue() throws {
        let frames = Self.pictures()
        let sync = try VideoEncodingConverter(Self.settings, output: Self.format)
        var expected: [Packet] = []
        for (i, f) in frames.enumerated() {
            var g = f
            g.pts = Int64(i)
            g.timeBase = Self.format.timeBase
            try sync.send(g, forceKeyFrame: i == 5)
            while let p = try sync.receive() { expected.append(p) }
        }
        try sync.flush()
        while let p = try sync.receive() { expected.append(p) }

        let got = Collector()
        let caller = pthread_self()
        let session = try CompressionSession(Self.settings, output: Self.format) { result in
            got.lock.withLock {
                if pthread_equal(pthread_self(), caller) != 0 { got.onCallerThread = true }
                switch result {
                case .success(let p): got.packets.append(p)
                case .failure(let e): got.errors.append(e)
                }
            }
        }
        XCTAssertEqual(session.parameters.extradata, sync.encoder.parameters.extradata)
        XCTAssertEqual(session.reorderDelay, sync.encoder.reorderDelay)
        for (i, f) in frames.enumerated() { try session.encodeFrame(f, pts: Int64(i), forceKeyFrame: i == 5) }
        session.completeFrames()
        let (packets, errors, onCaller) = got.lock.withLock { (got.packets, got.errors, got.onCallerThread) }
        XCTAssertEqual(errors.map(\.description), [])
        XCTAssertFalse(onCaller, "the output handler ran on the caller's thread")
        XCTAssertEqual(packets.count, 20)
        XCTAssertEqual(packets.map(\.data), expected.map(\.data), "the session's packets differ from the synchronous encoder's")
        XCTAssertEqual(packets.map(\.pts), expected.map(\.pts))
        XCTAssertEqual(packets.map(\.dts), expected.map(\.dts))
        XCTAssertTrue(packets.contains { $0.pts != $0.dts }, "qp 20 with -bf 2 codes B-frames")
        XCTAssertTrue(try XCTUnwrap(packets.first { $0.pts == 5 }).isKeyframe, "the forced key frame")
        XCTAssertThrowsError(try session.encodeFrame(frames[0], pts: 20)) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
        session.invalidate()
        session.invalidate()
    }

    func testInvalidateStopsDeliveryAndRefusesLaterFrames() throws {
        let got = Collector()
        let session = try CompressionSession(Self.settings, output: Self.format) { result in
            got.lock.withLock { if case .success(let p) = result { got.packets.append(p) } }
        }
        let frames = Self.pictures()
        for (i, f) in frames.prefix(10).enumerated() { try session.encodeFrame(f, pts: Int64(i)) }
        session.completeFrames(untilPresentationTimeStamp: 9)   // the session goes on
        try session.encodeFrame(frames[10], pts: 10)
        session.invalidate()
        let count = got.lock.withLock { got.packets.count }
        Thread.sleep(forTimeInterval: 0.05)
        XCTAssertEqual(got.lock.withLock { got.packets.count }, count, "a packet was delivered after invalidate() returned")
        XCTAssertLessThanOrEqual(count, 11)
        XCTAssertThrowsError(try session.encodeFrame(frames[11], pts: 11)) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
    }

    func testRefusals() throws {
        XCTAssertThrowsError(try CompressionSession(VideoEncoderSettings(codec: "no-such-encoder"), output: Self.format) { _ in }) {
            XCTAssertEqual(($0 as? MediaError)?.kind, .notFound)
        }
        var bad = Self.format
        bad.width = 0
        XCTAssertThrowsError(try CompressionSession(Self.settings, output: bad) { _ in }) {
            XCTAssertEqual(($0 as? MediaError)?.kind, .invalidArgument)
        }
        let session = try CompressionSession(Self.settings, output: Self.format) { _ in }
        let audio = Frame(mediaType: .audio, pts: 0, duration: 0, timeBase: Rational(1, 48000), sampleFormat: .f32, sampleRate: 48000,
                          channels: 1, sampleCount: 0, planes: [], storage: FrameStorage {})
        XCTAssertThrowsError(try session.encodeFrame(audio, pts: 0)) { XCTAssertEqual(($0 as? MediaError)?.kind, .invalidArgument) }
        session.invalidate()
    }

    /// Frame(copyingPicture:) keeps the caller's samples and refuses short strides.
    func testFrameFromCallerPlanes() throws {
        let src = TestPictures.make(.yuv420p, width: 6, height: 4, padding: 5)
        let planes = src.planes.map { (base: $0.base, stride: $0.stride) }
        let copy = try withExtendedLifetime(src) {
            try Frame(copyingPicture: .yuv420p, width: 6, height: 4, planes: planes, pts: 3, timeBase: Rational(1, 25))
        }
        for i in 0..<3 { XCTAssertEqual(TestPictures.samples(copy, i), TestPictures.samples(src, i)) }
        XCTAssertThrowsError(try Frame(copyingPicture: .yuv420p, width: 6, height: 4, planes: [(planes[0].base, 5)] + planes.dropFirst(),
                                       pts: 0, timeBase: Rational(1, 25))) {
            XCTAssertEqual(($0 as? MediaError)?.kind, .invalidArgument)
        }
    }
}
