import XCTest
@testable import MediaKit

/// The send / receive contract of ``Decoder`` (libavcodec's: a decoder with output waiting
/// refuses input with ``SendResult/receiveFirst``), checked against a decoder written to
/// that contract: one frame per packet, at most one waiting, as `avcodec_send_packet` does.
final class DecodeModelTests: XCTestCase {
    /// Holds the frame of the last packet until it is received; refuses a packet meanwhile.
    final class OneSlotDecoder: Decoder {
        let parameters = CodecParameters(mediaType: .audio, codec: "test")
        private var waiting: Frame?
        private var flushed = false
        private(set) var isDrained = false
        var refuseForever = false
        func send(_ packet: Packet) throws -> SendResult {
            if waiting != nil || refuseForever { return .receiveFirst }
            waiting = Frame(mediaType: .audio, pts: packet.pts, duration: 1, timeBase: Rational(1, 1),
                            planes: [], storage: FrameStorage {})
            return .accepted
        }
        func receive() throws -> Frame? {
            if let f = waiting { waiting = nil; return f }
            if flushed { isDrained = true }
            return nil
        }
        func flush() throws { flushed = true }
        func reset() { waiting = nil; flushed = false; isDrained = false }
    }

    private func packet(_ pts: Int64) -> Packet {
        Packet(trackIndex: 0, pts: pts, dts: pts, duration: 1, isKeyframe: true, data: [1], timeBase: Rational(1, 1))
    }

    func testDecodeReceivesFirstWhenAskedAndLosesNothing() throws {
        let d = OneSlotDecoder()
        // A caller that never receives between sends: the helper receives first when refused.
        XCTAssertEqual(try d.send(packet(0)), .accepted)
        XCTAssertEqual(try d.send(packet(1)), .receiveFirst)   // the packet is not taken
        var out: [Int64] = []
        try d.decode(packet(1)) { out.append($0.pts) }
        try d.decode(packet(2)) { out.append($0.pts) }
        try d.finish { out.append($0.pts) }
        XCTAssertEqual(out, [0, 1, 2])
        XCTAssertTrue(d.isDrained)
    }

    func testADecoderThatRefusesWithNothingToGiveIsAnError() {
        let d = OneSlotDecoder()
        d.refuseForever = true
        XCTAssertThrowsError(try d.decode(packet(0)) { _ in }) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .state)
        }
    }
}

/// What a ``DecodeSession`` hands its decoder: packets whose frames the edit list does not
/// present are marked discarded (MK_PACKET_FLAG_DISCARD), the others not.
final class DecodeSessionDiscardTests: XCTestCase {
    /// Records the packets it is sent; gives one frame per packet unless the packet is discarded.
    final class RecordingDecoder: Decoder {
        let parameters = CodecParameters(mediaType: .video, codec: "test")
        var sent: [(pts: Int64, discarded: Bool)] = []
        private var waiting: [Frame] = []
        private var flushed = false
        var isDrained: Bool { flushed && waiting.isEmpty }
        func send(_ packet: Packet) throws -> SendResult {
            sent.append((packet.pts, packet.isDiscarded))
            if !packet.isDiscarded {
                waiting.append(Frame(mediaType: .video, pts: packet.pts, duration: 1, timeBase: Rational(1, 10),
                                     planes: [], storage: FrameStorage {}))
            }
            return .accepted
        }
        func receive() throws -> Frame? { waiting.isEmpty ? nil : waiting.removeFirst() }
        func flush() throws { flushed = true }
        func reset() { waiting = []; flushed = false }
    }

    func testPacketsOutsideTheEditAreSentDiscarded() throws {
        // Edit list (ISO/IEC 14496-12 8.6.6): media from time 2 for 5 ticks of a 10 Hz movie scale.
        let p = CodecParameters(mediaType: .video, codec: "test")
        let track = Track(index: 0, id: 1, parameters: p, timeBase: Rational(1, 10), duration: 10,
                          editList: [EditListEntry(segmentDuration: 5, mediaTime: 2, mediaRate: 1)], movieTimeScale: 10)
        let recorder = RecordingDecoder()
        let session = DecodeSession(track: track, decoder: recorder)
        var out: [Int64] = []
        for pts: Int64 in [0, 3, 1, 2, 5, 4, 6, 7, 9, 8] {   // decode order of a B-frame stream
            try session.decode(Packet(trackIndex: 0, pts: pts, dts: 0, duration: 1, isKeyframe: pts == 0, data: [0],
                                      timeBase: Rational(1, 10))) { out.append($0.pts) }
        }
        try session.finish { out.append($0.pts) }
        XCTAssertEqual(recorder.sent.filter(\.discarded).map(\.pts).sorted(), [0, 1, 7, 8, 9])
        XCTAssertEqual(out.sorted(), [2, 3, 4, 5, 6])
        XCTAssertTrue(session.isDrained)
    }
}
