import Foundation
import XCTest
@testable import MediaKit

/// Batches of ``DecodeSession/frames(atIndices:from:resuming:deliver:)`` that go on from the
/// previous batch: a B-pyramid H.264 file (3 s, a key frame every 45 frames) read in batches of
/// 16 consecutive frames gives the pictures of a decode of every packet (the same input decoded
/// another way), while the session is sent each packet once, as for one batch of every frame;
/// without `resuming`, or when the session or the demuxer is used between batches, each batch
/// starts with a seek and still gives the same pictures.
final class FrameBatchResumeTests: XCTestCase {
    private var folder: URL!
    private var path = ""
    private let registry = MediaRegistry()

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mk-resume-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("pyramid.mp4").path
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "3",
                       "-c:v", "libx264", "-bf", "3", "-x264-params", "b-pyramid=normal", "-g", "45", "-an", path]
        try p.run()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "ffmpeg could not make the test file")
        registry.loadDefaultLocations()
    }

    override func tearDownWithError() throws {
        try FileManager.default.removeItem(at: folder)
    }

    private func hash(_ f: Frame) -> UInt64 {
        var h = FNV1a()
        h.add(presentedBytesOf: f)
        return h.value
    }

    /// Every frame of the track, decoded packet after packet from the start: (pts, hash).
    private func decodeAll() throws -> [(pts: Int64, hash: UInt64)] {
        let demuxer = try MP4Demuxer(path: path)
        let session = try DecodeSession(track: demuxer.tracks[0], registry: registry)
        var all: [(pts: Int64, hash: UInt64)] = []
        while let p = try demuxer.read(track: 0) {
            try session.decode(p) { all.append(($0.pts, hash($0))) }
        }
        try session.finish { all.append(($0.pts, hash($0))) }
        return all.sorted { $0.pts < $1.pts }
    }

    /// Reads `batches` with one session and one demuxer, calling `between` after each batch;
    /// returns the frames (pts, hash) in order and the packets the session was sent.
    private func read(_ batches: [[Int]], resuming: Bool, between: (DecodeSession, Demuxer) throws -> Void = { _, _ in })
        throws -> (frames: [(pts: Int64, hash: UInt64)], sent: Int) {
        let demuxer = try MP4Demuxer(path: path)
        let session = try DecodeSession(track: demuxer.tracks[0], registry: registry)
        var frames: [(pts: Int64, hash: UInt64)] = []
        for batch in batches {
            var got = [(pts: Int64, hash: UInt64)?](repeating: nil, count: batch.count)
            try session.frames(atIndices: batch, from: demuxer, resuming: resuming) { position, frame in
                got[position] = frame.map { ($0.pts, hash($0)) }
            }
            for (k, g) in got.enumerated() { frames.append(try XCTUnwrap(g, "frame \(batch[k])")) }
            try between(session, demuxer)
        }
        return (frames, session.packetsSent)
    }

    func testConsecutiveBatchesDecodeEachPacketOnceAndGiveTheFullDecodesFrames() throws {
        let all = try decodeAll()
        XCTAssertEqual(all.count, 90)
        let batches = stride(from: 0, to: 90, by: 16).map { Array($0..<min(90, $0 + 16)) }
        let one = try read([Array(0..<90)], resuming: false)
        let resumed = try read(batches, resuming: true)
        XCTAssertEqual(resumed.frames.map(\.pts), all.map(\.pts))
        XCTAssertEqual(resumed.frames.map(\.hash), all.map(\.hash))
        XCTAssertEqual(resumed.sent, one.sent, "batches that go on from the last one send each packet once, as one batch")

        // Without resuming, each batch seeks back to its key frame: the same frames, more packets.
        let seeking = try read(batches, resuming: false)
        XCTAssertEqual(seeking.frames.map(\.hash), all.map(\.hash))
        XCTAssertGreaterThan(seeking.sent, one.sent)
    }

    func testSparseBatchesAndABatchBehindTheLastOneGiveTheFullDecodesFrames() throws {
        let all = try decodeAll()
        // Rising batches with gaps (one across a key frame), then one behind (a seek), then on.
        let batches = [[2, 7], [9, 20, 33], [50, 44], [47, 60], [10, 3], [89, 88]]
        let resumed = try read(batches, resuming: true)
        let expected = batches.flatMap { $0 }
        XCTAssertEqual(resumed.frames.map(\.pts), expected.map { all[$0].pts })
        XCTAssertEqual(resumed.frames.map(\.hash), expected.map { all[$0].hash })
    }

    func testAnyOtherUseOfTheSessionOrAnotherDemuxerEndsTheResumption() throws {
        let all = try decodeAll()
        let batches = [Array(0..<16), Array(16..<32), Array(32..<48)]
        let resumed = try read(batches, resuming: true)
        // A reset or a seek of the session between batches: each batch seeks again.
        for use: (DecodeSession, Demuxer) throws -> Void in [{ s, _ in s.reset() }, { s, _ in try s.seek(to: 0) }] {
            let r = try read(batches, resuming: true, between: use)
            XCTAssertEqual(r.frames.map(\.hash), all[0..<48].map(\.hash))
            XCTAssertGreaterThan(r.sent, resumed.sent, "a batch after the session was used went on without a seek")
        }
        // Another demuxer of the same file: the batch seeks it.
        let session = try DecodeSession(track: try MP4Demuxer(path: path).tracks[0], registry: registry)
        var frames: [UInt64] = []
        for batch in batches {
            try session.frames(atIndices: batch, from: try MP4Demuxer(path: path), resuming: true) { _, f in
                frames.append(hash(try XCTUnwrap(f)))
            }
        }
        XCTAssertEqual(frames, all[0..<48].map(\.hash))
    }
}
