import XCTest
@testable import MediaKit

/// Frame-accurate access (``DecodeSession/frames(at:from:)``, ``DecodeSession/frames(atIndices:from:)``):
/// which packets reach the decoder. The pictures themselves are checked against ffmpeg in
/// Tests/oracle/test_seek.py; here, against a demuxer of 100 packets (pts 0...99, a key frame
/// every 10, time base 1/10) and a decoder that logs what it is sent: each GOP a target needs is
/// decoded once, up to the target, and the GOPs between targets are not decoded at all.
final class DecodeSessionSeekTests: XCTestCase {
    final class ListDemuxer: Demuxer {
        let tracks: [Track]
        var duration: Double? { 10 }
        private var cursor = 0
        private(set) var seeks: [Double] = []
        init(track: Track) { tracks = [track] }
        func read() throws -> Packet? { try read(track: 0) }
        func read(track: Int) throws -> Packet? {
            guard cursor < 100 else { return nil }
            defer { cursor += 1 }
            return Packet(trackIndex: 0, pts: Int64(cursor), dts: Int64(cursor), duration: 1, isKeyframe: cursor % 10 == 0,
                          data: [1], timeBase: Rational(1, 10))
        }
        func seek(to seconds: Double) throws {
            seeks.append(seconds)
            cursor = min(90, Int((seconds * 10).rounded(.down)) / 10 * 10)
        }
        func select(tracks: Set<Int>?) {}
    }

    final class LoggingDecoder: Decoder {
        let parameters = CodecParameters(mediaType: .video, codec: "test")
        var sent: [(pts: Int64, discarded: Bool)] = []
        var resets = 0
        private var waiting: [Frame] = []
        private var flushed = false
        var isDrained: Bool { flushed && waiting.isEmpty }
        func send(_ packet: Packet) throws -> SendResult {
            sent.append((packet.pts, packet.isDiscarded))
            if !packet.isDiscarded {
                waiting.append(Frame(mediaType: .video, pts: packet.pts, duration: 1, timeBase: Rational(1, 10), planes: [], storage: FrameStorage {}))
            }
            return .accepted
        }
        func receiveOutput() throws -> DecoderOutput {
            if let f = try pending() { return .frame(f) }
            return isDrained ? .endOfStream : .needsInput
        }
        func pending() throws -> Frame? { waiting.isEmpty ? nil : waiting.removeFirst() }
        func flush() throws { flushed = true }
        func reset() { waiting = []; flushed = false; resets += 1 }
    }

    private func make(editStart: Int64? = nil) -> (DecodeSession, ListDemuxer, LoggingDecoder) {
        let edits = editStart.map { [EditListEntry(segmentDuration: 100 - $0, mediaTime: $0, mediaRate: 1)] } ?? []
        let track = Track(index: 0, id: 1, parameters: CodecParameters(mediaType: .video, codec: "test"), timeBase: Rational(1, 10),
                          duration: 100, editList: edits, movieTimeScale: 10)
        let decoder = LoggingDecoder()
        return (DecodeSession(track: track, decoder: decoder), ListDemuxer(track: track), decoder)
    }

    func testEachNeededGOPIsDecodedOnceAndTheOthersNot() throws {
        let (session, demuxer, decoder) = make()
        let frames = try session.frames(at: [7.3, 0.5, 2.0, 2.1, 12.0, 0.5], from: demuxer)
        XCTAssertEqual(frames.map { $0?.pts }, [73, 5, 20, 21, nil, 5])
        let sent = decoder.sent.map(\.pts)
        XCTAssertEqual(sent, Array(0...6) + [20, 21] + Array(70...74), "\(sent)")
        XCTAssertEqual(Set(sent).count, sent.count, "a packet was decoded twice")
        // Packets before a target are decoded as references only.
        XCTAssertEqual(decoder.sent.filter(\.discarded).map(\.pts), Array(0...4) + Array(70...72))
        XCTAssertEqual(demuxer.seeks, [0.5], "targets within forwardReadLimit are reached by reading on")
    }

    func testFarTargetsSeekTheDemuxer() throws {
        let (session, demuxer, _) = make()
        XCTAssertEqual(try session.frames(at: [9.0, 0.1], from: demuxer).map { $0?.pts }, [90, 1])
        XCTAssertEqual(try session.frame(atTime: 4.4, from: demuxer)?.pts, 44)
        XCTAssertEqual(demuxer.seeks.count, 2)   // 0.1 s -> 9.0 s is 8.9 s: read on; then a new call seeks
    }

    func testIndicesCountPresentedFramesAfterTheEditList() throws {
        let (session, demuxer, _) = make(editStart: 3)
        XCTAssertEqual(try session.frames(atIndices: [0, 96, 10], from: demuxer).map { $0?.pts }, [3, 99, 13])
        XCTAssertEqual(try session.frame(at: 5, from: demuxer).pts, 8)
        XCTAssertThrowsError(try session.frame(at: 97, from: demuxer)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .invalidArgument)
            XCTAssertTrue("\(error)".contains("presents 97 frames"), "\(error)")
        }
        XCTAssertThrowsError(try session.frames(at: [-1], from: demuxer))
    }
}

/// A packet with ``Packet/newParameters`` (a chained Ogg link): the session drains the decoder,
/// makes one from the new parameters, and the frames come from it, none lost.
final class DecodeSessionFormatChangeTests: XCTestCase {
    /// Holds back one frame (as a decoder with delay does), each frame at its parameters' rate.
    final class DelayDecoder: Decoder {
        let parameters: CodecParameters
        var held: [Frame] = []
        var flushed = false
        var isDrained: Bool { flushed && held.isEmpty }
        init(_ p: CodecParameters) { parameters = p }
        func send(_ packet: Packet) throws -> SendResult {
            held.append(Frame(mediaType: .audio, pts: packet.pts, duration: 1, timeBase: Rational(1, 10), sampleRate: parameters.sampleRate,
                              channels: parameters.channels, planes: [], storage: FrameStorage {}))
            return .accepted
        }
        func receiveOutput() throws -> DecoderOutput {
            if let f = try pending() { return .frame(f) }
            return isDrained ? .endOfStream : .needsInput
        }
        func pending() throws -> Frame? { (held.count > 1 || flushed) && !held.isEmpty ? held.removeFirst() : nil }
        func flush() throws { flushed = true }
        func reset() { held = []; flushed = false }
    }

    func testANewLinkGetsADecoderOfItsOwn() throws {
        let first = CodecParameters(mediaType: .audio, codec: "test", sampleRate: 44100, channels: 1)
        let second = CodecParameters(mediaType: .audio, codec: "test", sampleRate: 48000, channels: 2)
        let track = Track(index: 0, id: 1, parameters: first, timeBase: Rational(1, 10), duration: 0)
        var made: [CodecParameters] = []
        let session = DecodeSession(track: track, decoder: DelayDecoder(first), trim: .none, rebuild: nil,
                                    remake: { made.append($0); return DelayDecoder($0) })
        var out: [(Int64, Int, Int)] = []
        for pts: Int64 in 0..<6 {
            var p = Packet(trackIndex: 0, pts: pts, dts: pts, duration: 1, isKeyframe: true, data: [1], timeBase: Rational(1, 10))
            if pts == 3 { p.newParameters = second }
            if pts == 4 { p.newParameters = second }   // the same again: no new decoder
            try session.decode(p) { out.append(($0.pts, $0.sampleRate, $0.channels)) }
        }
        try session.finish { out.append(($0.pts, $0.sampleRate, $0.channels)) }
        XCTAssertEqual(out.map(\.0), [0, 1, 2, 3, 4, 5])
        XCTAssertEqual(out.map(\.1), [44100, 44100, 44100, 48000, 48000, 48000])
        XCTAssertEqual(out.map(\.2), [1, 1, 1, 2, 2, 2])
        XCTAssertEqual(made, [second])
        XCTAssertEqual(session.formatChanges, 1)
    }
}
