import XCTest
@testable import MediaKit

/// A decoder's answer as text: "frame PTS", "needsInput" or "endOfStream".
func outcome(_ output: DecoderOutput) -> String {
    switch output {
    case .frame(let f): return "frame \(f.pts)"
    case .needsInput: return "needsInput"
    case .endOfStream: return "endOfStream"
    }
}

/// An encoder's answer as text: "packet PTS", "needsInput" or "endOfStream".
func outcome(_ output: EncoderOutput) -> String {
    switch output {
    case .packet(let p): return "packet \(p.pts)"
    case .needsInput: return "needsInput"
    case .endOfStream: return "endOfStream"
    }
}

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
        func receiveOutput() throws -> DecoderOutput {
            if let f = try pending() { return .frame(f) }
            return isDrained ? .endOfStream : .needsInput
        }
        func pending() throws -> Frame? {
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

    /// Issue 29 item 6: receive's three outcomes, passed on by a DecodeSession from its
    /// decoder (the session keeps no end-of-stream record of its own): ``DecoderOutput/needsInput``
    /// while the decoder wants packets, ``DecoderOutput/endOfStream`` only after flush once every
    /// frame is out (and on every later call), needsInput again after reset.
    func testASessionPassesOnNeedsInputAndEndOfStream() throws {
        let track = Track(index: 0, id: 1, parameters: CodecParameters(mediaType: .video, codec: "test"), timeBase: Rational(1, 1), duration: 0)
        let decoder = OneSlotDecoder()
        let session = DecodeSession(track: track, decoder: decoder, trim: .none)
        XCTAssertEqual(try outcome(session.receiveOutput()), "needsInput")
        XCTAssertEqual(try session.send(packet(0)), .accepted)
        XCTAssertEqual(try outcome(session.receiveOutput()), "frame 0")
        XCTAssertEqual(try outcome(session.receiveOutput()), "needsInput")
        XCTAssertFalse(session.isDraining)
        XCTAssertEqual(try session.send(packet(1)), .accepted)
        try session.flush()
        XCTAssertTrue(session.isDraining)
        XCTAssertEqual(try outcome(session.receiveOutput()), "frame 1")
        XCTAssertEqual(try outcome(session.receiveOutput()), "endOfStream")
        XCTAssertEqual(try outcome(session.receiveOutput()), "endOfStream")
        XCTAssertNil(try session.receive(), "the Frame? convenience: nil at the end")
        XCTAssertThrowsError(try session.send(packet(2))) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
        session.reset()
        XCTAssertFalse(session.isDraining)
        XCTAssertEqual(try outcome(session.receiveOutput()), "needsInput")
    }

    /// A flush whose held start packet the decoder refuses (an audio edit that starts later:
    /// the session holds the packet before it until the next one or the flush) still ends the
    /// stream: the session is draining and refuses packets, as mk_decode_session_send_packet's NULL
    /// has always made the C decoder (MK_ESTATE after it, whatever the flush returned).
    func testAFlushThatFailsStillEndsTheStream() throws {
        final class Refusing: Decoder {
            let parameters = CodecParameters(mediaType: .audio, codec: "test", sampleRate: 10, channels: 1)
            func send(_ packet: Packet) throws -> SendResult { throw MediaError(.unsupported, "no") }
            func receiveOutput() throws -> DecoderOutput { .needsInput }
            func flush() throws {}
            func reset() {}
        }
        let track = Track(index: 0, id: 1, parameters: CodecParameters(mediaType: .audio, codec: "test", sampleRate: 10, channels: 1),
                          timeBase: Rational(1, 10), duration: 100,
                          editList: [EditListEntry(segmentDuration: 50, mediaTime: 20, mediaRate: 1)], movieTimeScale: 10)
        let session = DecodeSession(track: track, decoder: Refusing())
        XCTAssertEqual(try session.send(packet(0)), .accepted)   // held: before the edit's start
        XCTAssertThrowsError(try session.flush())
        XCTAssertTrue(session.isDraining)
        XCTAssertThrowsError(try session.send(packet(1))) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
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
        func receiveOutput() throws -> DecoderOutput {
            if let f = try pending() { return .frame(f) }
            return isDrained ? .endOfStream : .needsInput
        }
        func pending() throws -> Frame? { waiting.isEmpty ? nil : waiting.removeFirst() }
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
        XCTAssertEqual(try outcome(session.receiveOutput()), "endOfStream")
    }
}

/// Recovery from damage (``DecodeSession/RecoveryPolicy``), against a decoder that fails on
/// chosen packets and logs what it is sent: the rules are the (skip, rebuild after
/// repeated failures, re-feed the GOP discarded, give up after the limits).
final class DecodeSessionRecoveryTests: XCTestCase {
    final class Log {
        var sent: [(decoder: Int, pts: Int64, discarded: Bool, data: [UInt8])] = []
        var made = 0
        /// The packets the test had given the session when each decoder creation was tried.
        var attempts: [Int] = []
        var fed = 0
    }

    final class FailingDecoder: Decoder {
        let parameters = CodecParameters(mediaType: .video, codec: "test")
        let id: Int, log: Log, failing: Set<Int64>, invalidating: Set<Int64>
        private var waiting: [Frame] = []
        private var flushed = false
        private var lost = false
        var isDrained: Bool { flushed && waiting.isEmpty }
        init(id: Int, log: Log, failing: Set<Int64>, invalidating: Set<Int64> = []) {
            self.id = id; self.log = log; self.failing = failing; self.invalidating = invalidating
        }
        func send(_ packet: Packet) throws -> SendResult {
            log.sent.append((id, packet.pts, packet.isDiscarded, packet.data))
            // A device that goes away: this decoder fails from here on, whatever it is sent.
            if lost || invalidating.contains(packet.pts) {
                lost = true
                throw MediaError(.sessionInvalidated, "the device went away")
            }
            if failing.contains(packet.pts) { throw MediaError(.invalidData, "damaged packet \(packet.pts)") }
            if !packet.isDiscarded {
                waiting.append(Frame(mediaType: .video, pts: packet.pts, duration: 1, timeBase: Rational(1, 10), planes: [], storage: FrameStorage {}))
            }
            return .accepted
        }
        func receiveOutput() throws -> DecoderOutput {
            if lost { throw MediaError(.sessionInvalidated, "the device went away") }
            if let f = try pending() { return .frame(f) }
            return isDrained ? .endOfStream : .needsInput
        }
        func pending() throws -> Frame? { waiting.isEmpty ? nil : waiting.removeFirst() }
        func flush() throws { flushed = true }
        func reset() { waiting = [] }
    }

    /// A model of libavcodec's frame threads: `lag` packets are in flight; a packet's result
    /// (its frame, or its error) comes out when the packet `lag` places later is sent (the
    /// error thrown by that send, which took its packet), or at the drain (from receive).
    final class LateDecoder: Decoder {
        let parameters = CodecParameters(mediaType: .video, codec: "test")
        let id: Int, log: Log, failing: Set<Int64>, lag: Int
        private var inFlight: [Packet] = []
        private var waiting: [Frame] = []
        private var flushed = false
        var isDrained: Bool { flushed && waiting.isEmpty && inFlight.isEmpty }
        init(id: Int, log: Log, failing: Set<Int64>, lag: Int) { self.id = id; self.log = log; self.failing = failing; self.lag = lag }
        func send(_ packet: Packet) throws -> SendResult {
            log.sent.append((id, packet.pts, packet.isDiscarded, packet.data))
            inFlight.append(packet)
            if inFlight.count > lag { try finish(inFlight.removeFirst()) }
            return .accepted
        }
        private func finish(_ p: Packet) throws {
            if failing.contains(p.pts) { throw MediaError(.invalidData, "damaged packet \(p.pts)") }
            if !p.isDiscarded {
                waiting.append(Frame(mediaType: .video, pts: p.pts, duration: 1, timeBase: Rational(1, 10), planes: [], storage: FrameStorage {}))
            }
        }
        func receiveOutput() throws -> DecoderOutput {
            if let f = try pending() { return .frame(f) }
            return isDrained ? .endOfStream : .needsInput
        }
        func pending() throws -> Frame? {
            while waiting.isEmpty && flushed && !inFlight.isEmpty { try finish(inFlight.removeFirst()) }
            return waiting.isEmpty ? nil : waiting.removeFirst()
        }
        func flush() throws { flushed = true }
        func reset() { waiting = []; inFlight = []; flushed = false }
    }

    private let track = Track(index: 0, id: 1, parameters: CodecParameters(mediaType: .video, codec: "test"), timeBase: Rational(1, 10), duration: 0)

    /// The file kept packets are read again from (``PacketRereading``): bytes by position.
    final class FileBytes: PacketRereading {
        var bytes: [Int64: [UInt8]] = [:]
        var reads = 0
        func rereadBytes(at position: Int64, count: Int) throws -> [UInt8]? {
            reads += 1
            guard let b = bytes[position], b.count >= count else { return nil }
            return Array(b.prefix(count))
        }
    }

    /// Packet `pts`'s bytes (distinct per packet) and position in ``FileBytes``.
    private static func bytes(_ pts: Int64) -> [UInt8] { [UInt8(pts), 7, UInt8(truncatingIfNeeded: pts &* 3)] }

    /// Decodes `count` packets (a key frame every `gop`) through a session whose decoders reject
    /// the packets in `failing` (only the first decoder when `firstOnly`), the first decoder
    /// is invalidated at the packets in `invalidating`, and `rebuildFails` creations fail first.
    private func run(failing: Set<Int64>, count: Int64 = 30, gop: Int64 = 10, rebuildFails: Int = 0, lag: Int = 0,
                     policy: DecodeSession.RecoveryPolicy = .init(), file: FileBytes? = nil, firstOnly: Bool = false,
                     invalidating: Set<Int64> = [], log: Log = Log()) throws -> (session: DecodeSession, log: Log, out: [Int64]) {
        var rebuildFailures = rebuildFails
        func make(_ id: Int) -> Decoder {
            let f = firstOnly && id > 0 ? [] : failing
            return lag > 0 ? LateDecoder(id: id, log: log, failing: f, lag: lag)
                : FailingDecoder(id: id, log: log, failing: f, invalidating: id == 0 ? invalidating : [])
        }
        let session = DecodeSession(track: track, decoder: make(0), trim: .gapless, rebuild: {
            log.attempts.append(log.fed)
            if rebuildFailures > 0 { rebuildFailures -= 1; throw MediaError(.backend, "cannot make a decoder") }
            log.made += 1
            return make(log.made)
        })
        session.recoveryPolicy = policy
        session.rereader = file
        var out: [Int64] = []
        for pts in 0..<count {
            log.fed += 1
            try session.decode(Packet(trackIndex: 0, pts: pts, dts: pts, duration: 1, isKeyframe: pts % gop == 0,
                                      position: file == nil ? -1 : pts * 100, data: file == nil ? [1] : Self.bytes(pts),
                                      timeBase: Rational(1, 10))) { out.append($0.pts) }
        }
        try session.finish { out.append($0.pts) }
        return (session, log, out)
    }

    func testOneRejectedPacketIsSkippedWithoutARebuild() throws {
        let r = try run(failing: [13])
        XCTAssertEqual(r.out, (0..<30).filter { $0 != 13 })
        XCTAssertEqual(r.session.recoveries.map(\.pts), [13])
        XCTAssertEqual(r.session.recoveries.first?.framesLost, 1)
        XCTAssertEqual(r.session.rebuilds, 0)
        XCTAssertEqual(r.log.made, 0)
        XCTAssertEqual(r.session.warnings.count, 1)
    }

    func testRepeatedFailuresRebuildAndReFeedTheGOPDiscarded() throws {
        let r = try run(failing: [13, 14])
        XCTAssertEqual(r.out, (0..<30).filter { $0 != 13 && $0 != 14 })
        XCTAssertEqual(r.session.rebuilds, 1)
        XCTAssertEqual(r.log.made, 1)
        // The new decoder first gets the GOP since key frame 10 (the packets it accepted), discarded.
        let refed = r.log.sent.filter { $0.decoder == 1 }.prefix(3)
        XCTAssertEqual(refed.map(\.pts), [10, 11, 12])
        XCTAssertTrue(refed.allSatisfy(\.discarded))
        XCTAssertFalse(r.log.sent.filter { $0.decoder == 1 && $0.pts >= 15 }.contains { $0.discarded })
        XCTAssertEqual(r.session.recoveries.map(\.rebuilt), [false, true])
    }

    func testAGOPKeptAsPositionsIsReadAgainForARebuild() throws {
        // The transcoder's and mk-decode's sessions keep the GOP as positions (memory: one
        // GOP of compressed video less); a rebuild reads it again and sends the same bytes.
        let file = FileBytes()
        for pts in Int64(0)..<30 { file.bytes[pts * 100] = Self.bytes(pts) }
        let r = try run(failing: [13, 14], file: file)
        XCTAssertEqual(r.out, (0..<30).filter { $0 != 13 && $0 != 14 })
        XCTAssertEqual(r.session.rebuilds, 1)
        let refed = r.log.sent.filter { $0.decoder == 1 }.prefix(3)
        XCTAssertEqual(refed.map(\.pts), [10, 11, 12])
        XCTAssertEqual(refed.map(\.data), [10, 11, 12].map { Self.bytes($0) })
        XCTAssertTrue(refed.allSatisfy(\.discarded))
        XCTAssertGreaterThanOrEqual(file.reads, 3)
        // Every packet the first decoder was sent had its bytes.
        XCTAssertEqual(r.log.sent.filter { $0.decoder == 0 }.map(\.data), r.log.sent.filter { $0.decoder == 0 }.map { Self.bytes($0.pts) })
    }

    func testAGOPWhoseFileChangedIsNotSentAgain() throws {
        // Bytes read again that are not those decoded (the hash differs): the rebuilt decoder
        // starts at the next packet, as after a GOP too long to keep, never with wrong data.
        let file = FileBytes()
        for pts in Int64(0)..<30 { file.bytes[pts * 100] = Self.bytes(pts) }
        file.bytes[1100] = [0, 0, 0]
        let r = try run(failing: [13, 14], file: file)
        XCTAssertEqual(r.session.rebuilds, 1)
        XCTAssertEqual(r.log.sent.filter { $0.decoder == 1 && $0.pts < 15 }.count, 0)
        XCTAssertEqual(r.out, (0..<30).filter { $0 != 13 && $0 != 14 })
    }

    func testErrorsReportedLateCostOneRebuildAndOnlyTheDamagedFrames() throws {
        // Issue 28: with frame threads the errors of 13 and 14 come out of the sends of 15 and
        // 16. The session blamed those, left them out of the GOP it re-fed, and rebuilt again
        // on every packet after (the primed damage failing again, late) until it gave up.
        for lag in [1, 2, 3] {
            for damage in [Set<Int64>([13, 14]), Set(11..<16), Set(41..<66)] {
                let r = try run(failing: damage, count: 80, gop: 40, lag: lag)
                XCTAssertEqual(r.out, (0..<80).filter { !damage.contains($0) }, "lag \(lag), damage \(damage.sorted())")
                XCTAssertEqual(r.session.rebuilds, 1, "lag \(lag), damage \(damage.sorted())")
                XCTAssertEqual(r.session.recoveries.count, damage.count, "lag \(lag), damage \(damage.sorted())")
            }
        }
    }

    func testDamageBetweenKeyFramesNeverGivesUpButARejectedKeyFrameCounts() throws {
        // 25 rejected non-key packets (more than the limit of 20): decoding starts again at the
        // next key frame, as ffmpeg's does.
        let long = Set<Int64>(41..<66)
        let r = try run(failing: long, count: 80, gop: 40)
        XCTAssertEqual(r.out, (0..<80).filter { !long.contains($0) })
        XCTAssertEqual(r.session.rebuilds, 1)
        // Rejections from a key frame on are counted: the 20th gives up (the seed's rule), at
        // the packet 19 after the key frame 40; no packet after it is sent.
        let log = Log()
        XCTAssertThrowsError(try run(failing: Set(35..<80), count: 80, gop: 40, log: log)) { error in
            XCTAssertTrue((error as? MediaError)?.message.contains("gave up after 20 consecutive packets the decoder rejected (from the first key frame among 25)") == true, "\(error)")
            XCTAssertTrue((error as? MediaError)?.message.contains("at the packet at pts 59") == true, "\(error)")
        }
        XCTAssertEqual(log.sent.map(\.pts).max(), 59)
    }

    func testTooManyFailedPacketsGiveUpCountingThem() {
        var policy = DecodeSession.RecoveryPolicy()
        policy.maxFailedPackets = 3
        XCTAssertThrowsError(try run(failing: Set(5..<30), policy: policy)) { error in
            let e = error as? MediaError
            XCTAssertEqual(e?.kind, .invalidData)
            XCTAssertTrue(e?.message.contains("gave up after 3 consecutive packets") == true, e?.message ?? "")
        }
    }

    func testFailedRebuildsGiveUp() {
        // The seed's rule: a creation that fails is tried again on each later packet, and the
        // 5th failure in a row gives up (at packet 10: the attempts came with packets 6 to 10).
        let log = Log()
        XCTAssertThrowsError(try run(failing: [5, 6], rebuildFails: 10, log: log)) { error in
            XCTAssertTrue((error as? MediaError)?.message.contains("and 5 failed rebuilds (limits 20 and 5) at the packet at pts 10") == true, "\(error)")
        }
        XCTAssertEqual(log.attempts, [7, 8, 9, 10, 11])
        XCTAssertEqual(log.made, 0)
        XCTAssertEqual(log.sent.map(\.pts), Array(0...6), "no decoder may be sent a packet while none could be made")
    }

    func testAFailedCreationIsTriedAgainOnTheNextPacketsWhichAreKeptForTheNewDecoder() throws {
        // 3 creations fail (with packets 14, 15, 16); the 4th, with packet 17, works: it is sent
        // the GOP (10 ... 12 discarded: their frames came out), the rejected 13 and 14 again,
        // and 15, 16, 17, which no decoder had: their frames come out, in order.
        let r = try run(failing: [13, 14], rebuildFails: 3, firstOnly: true)
        XCTAssertEqual(r.log.attempts, [15, 16, 17, 18])
        XCTAssertEqual(r.out, Array(0..<30))
        let second = r.log.sent.filter { $0.decoder == 1 }
        XCTAssertEqual(second.prefix(8).map(\.pts), Array(10...17))
        XCTAssertEqual(second.prefix(8).map(\.discarded), [true, true, true, false, false, false, false, false])
        XCTAssertEqual(r.session.rebuilds, 1)
        XCTAssertEqual(r.session.recoveries.map(\.rebuilt), [false, false])
    }

    func testTheRejectedPacketsAreDecodedAgainAfterARebuild() throws {
        // Only the first decoder rejects 13 and 14 (a decoder in a bad state): the rebuilt one,
        // re-fed the GOP, decodes them: no frame lost, and the recoveries say so.
        let r = try run(failing: [13, 14], firstOnly: true)
        XCTAssertEqual(r.out, Array(0..<30))
        XCTAssertEqual(r.session.rebuilds, 1)
        XCTAssertEqual(r.session.recoveries.map(\.pts), [13, 14])
        XCTAssertEqual(r.session.recoveries.map(\.framesLost), [0, 0])
        XCTAssertEqual(r.log.sent.filter { $0.decoder == 1 }.prefix(5).map(\.discarded), [true, true, true, false, false])
    }

    func testAnInvalidatedDecoderIsRebuiltAtOnceAndIsNotDamage() throws {
        // The decoder's device goes away at packet 13: a new decoder at once (no second failure
        // needed), re-fed the GOP and 13 again; nothing lost, no damage warning, no failure counted.
        let r = try run(failing: [], invalidating: [13])
        XCTAssertEqual(r.out, Array(0..<30))
        XCTAssertEqual(r.session.rebuilds, 1)
        XCTAssertEqual(r.session.invalidations, 1)
        XCTAssertEqual(r.session.warnings.count, 0)
        XCTAssertEqual(r.session.recoveries.map(\.error.kind), [.sessionInvalidated])
        XCTAssertEqual(r.session.recoveries.map(\.framesLost), [0])
        XCTAssertEqual(r.log.sent.filter { $0.decoder == 1 }.prefix(4).map(\.pts), [10, 11, 12, 13])
        XCTAssertEqual(r.log.sent.filter { $0.decoder == 1 }.prefix(4).map(\.discarded), [true, true, true, false])
        XCTAssertEqual(r.session.packetsSent, 30)
        // With the device still away for 2 attempts: tried again on packets 14 and 15, made on 15.
        let away = try run(failing: [], rebuildFails: 2, invalidating: [13])
        XCTAssertEqual(away.out, Array(0..<30))
        XCTAssertEqual(away.log.attempts, [14, 15, 16])
        XCTAssertEqual(away.session.invalidations, 1)
        XCTAssertEqual(away.session.warnings.count, 0)
    }

    func testPacketsSentAreCounted() throws {
        let r = try run(failing: [13], count: 30)
        XCTAssertEqual(r.session.packetsSent, 30)
        XCTAssertEqual(r.out.count, 29)
    }

    func testRecoveryOffThrowsTheFirstError() {
        var policy = DecodeSession.RecoveryPolicy()
        policy.enabled = false
        XCTAssertThrowsError(try run(failing: [5], policy: policy))
    }
}
