import XCTest
@testable import MediaKit

/// MPEGTSDemuxer on transport streams built here byte by byte (PAT, PMT with its CRC, PES of
/// ADTS frames), so each damage is exactly the one asked for: wrong sync, lost sync, a
/// continuity-counter jump, a scrambled PID, a PES cut short, a file cut inside a packet, an
/// oversized PES, random byte flips. Damage is a warning or an error with an offset, never a
/// crash or a hang. Files ffmpeg writes and real files are compared with ffprobe in
/// Tests/oracle/test_mpegts.py.
final class MPEGTSTests: XCTestCase {
    /// Builds 188-byte transport packets.
    struct Builder {
        var bytes: [UInt8] = []
        var counters: [Int: Int] = [:]
        var m2ts = false

        mutating func packet(pid: Int, start: Bool, payload: [UInt8], scrambled: Bool = false, discontinuity: Bool = false) {
            precondition(payload.count <= 184)
            let cc = counters[pid, default: 0]
            counters[pid] = (cc + 1) & 15
            var p: [UInt8] = [0x47, UInt8(start ? 0x40 : 0) | UInt8(pid >> 8), UInt8(pid & 0xFF), 0]
            let stuffing = 184 - payload.count
            if stuffing > 0 {
                p[3] = 0x30 | UInt8(cc) | (scrambled ? 0x80 : 0)
                p.append(UInt8(stuffing - 1))
                if stuffing > 1 { p.append(discontinuity ? 0x80 : 0); p += [UInt8](repeating: 0xFF, count: stuffing - 2) }
            } else {
                p[3] = 0x10 | UInt8(cc) | (scrambled ? 0x80 : 0)
            }
            p += payload
            if m2ts { bytes += [0, 0, 0, 0] }
            bytes += p
        }

        static func section(table: UInt8, id: Int, version: Int = 0, _ body: [UInt8]) -> [UInt8] {
            let length = 5 + body.count + 4
            var s: [UInt8] = [table, 0xB0 | UInt8(length >> 8), UInt8(length & 0xFF), UInt8(id >> 8), UInt8(id & 0xFF),
                              0xC1 | UInt8(version << 1 & 0x3E), 0, 0] + body
            let crc = MPEGTS.crc32(s)
            s += [UInt8(crc >> 24), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc & 0xFF)]
            return s
        }

        /// PAT (program 1 on PID 0x1000) and a PMT with one ES of `streamType` on PID 0x100,
        /// with the descriptors `esInfo`.
        mutating func tables(streamType: UInt8 = 0x0F, pmtVersion: Int = 0, pat: Bool = true, esInfo: [UInt8] = []) {
            if pat { packet(pid: 0, start: true, payload: [0] + Self.section(table: 0, id: 1, [0, 1, 0xF0, 0x00])) }
            let pmt: [UInt8] = [0xE1, 0x00, 0xF0, 0x00, streamType, 0xE1, 0x00, 0xF0 | UInt8(esInfo.count >> 8), UInt8(esInfo.count & 0xFF)] + esInfo
            packet(pid: 0x1000, start: true, payload: [0] + Self.section(table: 2, id: 1, version: pmtVersion, pmt))
        }

        /// One PES with `pts`, `bounded` giving its length, split over packets.
        mutating func pes(pid: Int = 0x100, streamID: UInt8 = 0xC0, pts: Int64, payload: [UInt8], bounded: Bool = true,
                          lengthOverride: Int? = nil, scrambled: Bool = false, discontinuity: Bool = false) {
            let t = pts & ((1 << 33) - 1)
            let ptsBytes: [UInt8] = [0x21 | UInt8(t >> 29 & 0x0E), UInt8(t >> 22 & 0xFF), UInt8(t >> 14 & 0xFE) | 1,
                                     UInt8(t >> 7 & 0xFF), UInt8(t << 1 & 0xFE) | 1]
            let length = lengthOverride ?? (bounded ? 3 + 5 + payload.count : 0)
            var all: [UInt8] = [0, 0, 1, streamID, UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), 0x80, 0x80, 5] + ptsBytes + payload
            var first = true
            while !all.isEmpty {
                let n = min(184, all.count)
                packet(pid: pid, start: first, payload: Array(all[0..<n]), scrambled: scrambled, discontinuity: discontinuity && first)
                all.removeFirst(n)
                first = false
            }
        }
    }

    /// An ADTS frame (AAC LC, 44.1 kHz, stereo) of `size` bytes.
    static func adts(_ size: Int, fill: UInt8 = 0x11) -> [UInt8] {
        [0xFF, 0xF1, 0x50, 0x80 | UInt8(size >> 11 & 3), UInt8(size >> 3 & 0xFF), UInt8((size & 7) << 5) | 0x1F, 0xFC]
            + [UInt8](repeating: fill, count: size - 7)
    }

    /// `count` PES of two ADTS frames each, 2048 samples apart.
    static func stream(count: Int = 10, m2ts: Bool = false, firstPTS: Int64 = 90000) -> [UInt8] {
        var b = Builder()
        b.m2ts = m2ts
        b.tables()
        for i in 0..<count {
            b.pes(pts: firstPTS + Int64(i) * 4180, payload: adts(200) + adts(150))
        }
        return b.bytes
    }

    private func readAll(_ d: MPEGTSDemuxer) throws -> (packets: [Packet], cut: MediaError?) {
        var out: [Packet] = []
        var cut: MediaError?
        while let p = try d.read(untilCut: &cut) {
            out.append(p)
            XCTAssertLessThan(out.count, 100_000, "runaway read")
        }
        return (out, cut)
    }

    func testFramesAndTimestampsOfAnIntactStream() throws {
        let d = try MPEGTSDemuxer(source: MemorySource(Self.stream()))
        XCTAssertEqual(d.tracks.count, 1)
        XCTAssertEqual(d.tracks[0].parameters.codec, .aac)
        XCTAssertEqual(d.tracks[0].parameters.sampleRate, 44100)
        XCTAssertEqual(d.tracks[0].parameters.channels, 2)
        let (packets, cut) = try readAll(d)
        XCTAssertNil(cut)
        XCTAssertEqual(packets.count, 20)
        XCTAssertEqual(packets.map(\.size), [Int](repeating: 0, count: 10).flatMap { _ in [200, 150] })
        XCTAssertEqual(packets[0].pts, 90000)
        // The second frame of a PES: one frame on (1024 / 44100 s = 2089.8 ticks), on the frame grid.
        XCTAssertEqual(packets[1].pts, MPEGTSDemuxer.addStable(90000, samples: 1024, rate: 44100))
        XCTAssertTrue((2089...2090).contains(packets[1].pts - 90000))
        XCTAssertEqual(packets[1].position, -1)
        XCTAssertEqual(packets[2].pts, 94180)
        XCTAssertEqual(packets[0].duration, 2089)
        XCTAssertTrue(d.warnings.isEmpty, "\(d.warnings)")
    }

    func testM2TSGivesTheSamePackets() throws {
        let ts = try readAll(MPEGTSDemuxer(source: MemorySource(Self.stream()))).packets
        let d = try MPEGTSDemuxer(source: MemorySource(Self.stream(m2ts: true)))
        XCTAssertEqual(d.packetSize, 192)
        let m2ts = try readAll(d).packets
        XCTAssertEqual(ts.map(\.data), m2ts.map(\.data))
        XCTAssertEqual(ts.map(\.pts), m2ts.map(\.pts))
    }

    func testProbeWantsSyncOnEveryPacket() {
        let good = Self.stream()
        XCTAssertEqual(ContainerFormat.mpegts.probe(Array(good.prefix(4096)), Int64(good.count)), 100)
        var shifted = good
        shifted[188 * 3] = 0x48
        XCTAssertEqual(ContainerFormat.mpegts.probe(Array(shifted.prefix(4096)), Int64(good.count)), 0)
        XCTAssertEqual(ContainerFormat.mpegts.probe([0x47] + [UInt8](repeating: 0, count: 4000), nil), 0)
        // A stream that starts inside a packet (here 100 bytes of one) still opens, scored below
        // the signature formats.
        let late = [UInt8](repeating: 0xAB, count: 100) + good
        XCTAssertEqual(ContainerFormat.mpegts.probe(Array(late.prefix(4096)), nil), 40)
        XCTAssertEqual(try readAll(MPEGTSDemuxer(source: MemorySource(late))).packets.count, 20)
    }

    func testWrongSyncIsAnErrorSayingWhatItFound() {
        XCTAssertThrowsError(try MPEGTSDemuxer(source: MemorySource([UInt8](repeating: 0x46, count: 3000)))) { error in
            let e = error as? MediaError
            XCTAssertEqual(e?.kind, .invalidData)
            XCTAssertTrue(e?.message.contains("0x47") ?? false, "\(error)")
            XCTAssertTrue(e?.message.contains("46 46") ?? false, "\(error)")
        }
    }

    func testNoPATIsAnError() {
        var b = Builder()
        for _ in 0..<20 { b.packet(pid: 0x100, start: false, payload: [UInt8](repeating: 0, count: 184)) }
        XCTAssertThrowsError(try MPEGTSDemuxer(source: MemorySource(b.bytes))) { error in
            XCTAssertTrue("\(error)".contains("no PAT"), "\(error)")
        }
    }

    func testLostSyncIsFoundAgainWithAWarning() throws {
        var bytes = Self.stream()
        bytes.insert(contentsOf: [1, 2, 3, 4, 5, 6, 7], at: 188 * 6)
        let d = try MPEGTSDemuxer(source: MemorySource(bytes))
        let (packets, cut) = try readAll(d)
        XCTAssertNil(cut)
        XCTAssertGreaterThanOrEqual(packets.count, 18)
        let w = d.warnings.first { $0.message.contains("lost sync") }
        XCTAssertNotNil(w, "\(d.warnings)")
        XCTAssertEqual(w?.offset, 188 * 6)
        XCTAssertTrue(w?.message.contains("7 bytes skipped") ?? false, "\(String(describing: w))")
    }

    func testContinuityJumpIsAWarningNamingThePID() throws {
        var b = Builder()
        b.tables()
        b.pes(pts: 90000, payload: Self.adts(200) + Self.adts(150))
        b.counters[0x100] = 9   // seven packets lost
        b.pes(pts: 94180, payload: Self.adts(200) + Self.adts(150))
        let d = try MPEGTSDemuxer(source: MemorySource(b.bytes))
        let (packets, _) = try readAll(d)
        XCTAssertEqual(packets.count, 4)
        let w = d.warnings.first { $0.message.contains("continuity counter on PID 256") }
        XCTAssertNotNil(w, "\(d.warnings)")
        XCTAssertTrue(w?.message.contains("jumps from 1 to 9: 7 packets lost") ?? false, "\(String(describing: w))")
        XCTAssertEqual(w?.offset, 188 * 4)
    }

    func testScrambledPacketsAreNamedAndDropped() throws {
        var b = Builder()
        b.tables()
        b.pes(pts: 90000, payload: Self.adts(200) + Self.adts(150))
        b.pes(pts: 94180, payload: Self.adts(200) + Self.adts(150), scrambled: true)
        b.pes(pts: 98360, payload: Self.adts(200) + Self.adts(150))
        let d = try MPEGTSDemuxer(source: MemorySource(b.bytes))
        let (packets, _) = try readAll(d)
        XCTAssertEqual(packets.map(\.pts).filter { $0 >= 94180 && $0 < 98360 }, [])
        XCTAssertEqual(packets.count, 4)
        XCTAssertTrue(d.warnings.contains { $0.message.contains("PID 256 is scrambled") }, "\(d.warnings)")
    }

    func testPESCutShortIsAWarningAndItsFramesAreKept() throws {
        var b = Builder()
        b.tables()
        b.pes(pts: 90000, payload: Self.adts(200) + Self.adts(150))
        // A PES that says 1000 bytes more than it has, then the file ends.
        b.pes(pts: 94180, payload: Self.adts(200) + Self.adts(150), lengthOverride: 8 + 350 + 1000)
        let d = try MPEGTSDemuxer(source: MemorySource(b.bytes))
        let (packets, cut) = try readAll(d)
        XCTAssertNil(cut)
        XCTAssertEqual(packets.count, 4)
        XCTAssertTrue(d.warnings.contains { $0.message.contains("says 1358 bytes but 358 came before the end of the file") }, "\(d.warnings)")
    }

    func testFileCutInsideAPacketThrowsTruncatedAfterThePackets() throws {
        let bytes = Self.stream()
        let d = try MPEGTSDemuxer(source: MemorySource(Array(bytes.prefix(bytes.count - 100))))
        var got = 0
        var cut: MediaError?
        while let _ = try d.read(untilCut: &cut) { got += 1 }
        XCTAssertEqual(cut?.kind, .truncated)
        XCTAssertTrue(cut?.message.contains("88 of 188 bytes") ?? false, "\(String(describing: cut))")
        XCTAssertGreaterThan(got, 15)
        XCTAssertNil(try d.read())
    }

    func testOversizedPESIsDroppedWithAWarning() throws {
        var b = Builder()
        b.tables(streamType: 0x1B)
        var payload = [UInt8](repeating: 0, count: 184)
        payload[0...8] = [0, 0, 1, 0xE0, 0, 0, 0x80, 0, 0]
        b.packet(pid: 0x100, start: true, payload: payload)
        let filler = [UInt8](repeating: 0x55, count: 184)
        for _ in 0..<(MPEGTSDemuxer.maxPESBytes / 184 + 2) { b.packet(pid: 0x100, start: false, payload: filler) }
        let d = try MPEGTSDemuxer(source: MemorySource(b.bytes))
        let (packets, _) = try readAll(d)
        XCTAssertTrue(packets.allSatisfy { $0.size <= MPEGTSDemuxer.maxPESBytes })
        XCTAssertTrue(d.warnings.contains { $0.message.contains("larger than \(MPEGTSDemuxer.maxPESBytes) bytes") }, "\(d.warnings)")
    }

    func testTimestampsCrossTheWrapRising() throws {
        var b = Builder()
        b.tables()
        let start: Int64 = (1 << 33) - 90000 * 120   // two minutes before the wrap
        for i in 0..<4 { b.pes(pts: start + Int64(i) * 90000 * 50, payload: Self.adts(200)) }
        let packets = try readAll(MPEGTSDemuxer(source: MemorySource(b.bytes))).packets
        XCTAssertEqual(packets.map(\.pts), (0..<4).map { start + Int64($0) * 90000 * 50 })
        XCTAssertGreaterThan(packets[3].pts, 1 << 33)
    }

    func testRandomDamageNeverCrashesOrHangs() throws {
        let good = Self.stream(count: 30)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var bad = good
            for _ in 0..<Int.random(in: 1...20, using: &rng) {
                bad[Int.random(in: 0..<bad.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            if Bool.random(using: &rng) { bad.removeLast(Int.random(in: 0..<bad.count, using: &rng)) }
            do {
                let d = try MPEGTSDemuxer(source: MemorySource(bad))
                _ = try readAll(d)
                XCTAssertLessThanOrEqual(d.warnings.count, MPEGTSDemuxer.maxWarnings + 1)
            } catch let e as MediaError {
                XCTAssertFalse(e.message.isEmpty)
            }
            FuzzHarness.mpegts(bad)   // every read, seek and read(track:) the fuzz target makes
        }
    }

    func testSeekLandsOnThePESHoldingTheTime() throws {
        let d = try MPEGTSDemuxer(source: MemorySource(Self.stream(count: 20)))
        let all = try readAll(d).packets
        for k in [0, 3, 11, 19] {
            let pts = 90000 + Int64(k) * 4180
            try d.seek(to: Double(pts + 100) / 90000)
            let first = try XCTUnwrap(d.read())
            XCTAssertEqual(first.pts, pts, "seek to PES \(k)")
            XCTAssertEqual(first.position, all.first { $0.pts == pts }?.position)
        }
        try d.seek(to: 0.5)   // before the first frame: the start
        XCTAssertEqual(try d.read()?.pts, 90000)
        try d.seek(to: 1e9)   // after the last: the last key frame
        XCTAssertEqual(try d.read()?.pts, 90000 + 19 * 4180)
        XCTAssertEqual(try readAll(d).packets.count, 1)
    }

    /// A source that counts the bytes read from it.
    final class CountingSource: ByteSource, @unchecked Sendable {
        let inner: MemorySource
        var bytesRead = 0
        init(_ bytes: [UInt8]) { inner = MemorySource(bytes) }
        var name: String { inner.name }
        var knownSize: Int64? { inner.knownSize }
        var isSeekable: Bool { true }
        func readSome(at offset: Int64, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            let n = try inner.readSome(at: offset, into: buffer)
            bytesRead += n
            return n
        }
    }

    /// A long file (about 6 MB, 16000 PES of ADTS frames, every frame a key frame) whose 33-bit
    /// timestamps wrap 100 s in, with lost sync (bytes inserted) two thirds in: a seek lands on
    /// the PES a read from the start lands on (the oracle: the packets of one whole read), and
    /// reads a small part of the file (the bisection), not everything before the time.
    func testSeekInALongFileBisectsAcrossTheWrapAndDamage() throws {
        let first: Int64 = (1 << 33) - 100 * 90000
        var good = Self.stream(count: 16000, firstPTS: first)
        let damage = good.count * 2 / 3 / 188 * 188 + 50
        good.insert(contentsOf: [UInt8](repeating: 0x47, count: 7) + [UInt8](repeating: 0x11, count: 300), at: damage)
        let all = try readAll(MPEGTSDemuxer(source: MemorySource(good))).packets
        XCTAssertGreaterThan(all.count, 31_900)   // the damage costs a PES or two
        XCTAssertLessThan(all[0].pts, 1 << 33)
        XCTAssertGreaterThan(all.last!.pts, 1 << 33)   // unwrapped: rising through the wrap
        let source = CountingSource(good)
        let d = try MPEGTSDemuxer(source: source)
        XCTAssertGreaterThan(Int64(good.count), 4 * MPEGTSDemuxer.seekWindow)
        let starts = all.filter { $0.position >= 0 }
        for k in [1, 1500, 2391, 2392, 4000, 10666, 10667, 10668, 12000, starts.count - 1] {
            let wanted = starts[k]
            source.bytesRead = 0
            try d.seek(to: Double(wanted.pts + 100) / 90000)
            let got = try XCTUnwrap(d.read())
            XCTAssertEqual(got.pts, wanted.pts, "seek to PES \(k)")
            XCTAssertEqual(got.position, wanted.position, "seek to PES \(k)")
            // The track's own reader (what decode sessions read) starts where the seek put read().
            let own = try XCTUnwrap(d.read(track: got.trackIndex))
            XCTAssertEqual(own.pts, wanted.pts, "read(track:) after the seek to PES \(k)")
            XCTAssertEqual(own.position, wanted.position, "read(track:) after the seek to PES \(k)")
            if wanted.position > 3 * MPEGTSDemuxer.seekWindow {
                XCTAssertLessThan(source.bytesRead, good.count / 2, "seek to PES \(k) read \(source.bytesRead) of \(good.count) bytes")
            }
        }
        try d.seek(to: Double(first - 1000) / 90000)   // before the first frame: the start
        XCTAssertEqual(try d.read()?.pts, first)
        try d.seek(to: Double(all.last!.pts + 90000) / 90000)   // after the last: the last key frame
        XCTAssertEqual(try d.read()?.pts, starts.last!.pts)
        // Flipped bytes (timestamps, headers, sync): a seek ends somewhere, without a crash or a hang.
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<8 {
            var bad = good
            for _ in 0..<200 { bad[Int.random(in: 0..<bad.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            guard let b = try? MPEGTSDemuxer(source: MemorySource(bad)) else { continue }
            for k in [500, 9000, starts.count - 1] {
                try b.seek(to: Double(starts[k].pts) / 90000)
                _ = try? b.read()
            }
        }
    }

    func testReadTrackIsIndependentOfRead() throws {
        let d = try MPEGTSDemuxer(source: MemorySource(Self.stream(count: 5)))
        let first = try XCTUnwrap(d.read())
        var own: [Packet] = []
        while let p = try d.read(track: 0) { own.append(p) }
        XCTAssertEqual(own.count, 10)
        XCTAssertEqual(own.first?.pts, first.pts)
        XCTAssertEqual(try readAll(d).packets.count, 9)
        XCTAssertThrowsError(try d.read(track: 1))
    }

    func testPMTChangeAndDiscontinuityAreWarnings() throws {
        var b = Builder()
        b.tables()
        b.pes(pts: 90000, payload: Self.adts(200))
        b.tables(streamType: 0x03, pmtVersion: 1, pat: false)
        b.counters[0x100] = 12
        b.pes(pts: 90000 * 3600, payload: Self.adts(100), discontinuity: true)   // one packet, with an adaptation field
        let d = try MPEGTSDemuxer(source: MemorySource(b.bytes))
        let packets = try readAll(d).packets
        XCTAssertEqual(packets.map(\.pts), [90000, 90000 * 3600])
        XCTAssertEqual(d.tracks.map(\.parameters.codec), [.aac])
        XCTAssertTrue(d.warnings.contains { $0.message.contains("the PMT changed (version 0 to 1)") }, "\(d.warnings)")
        XCTAssertTrue(d.warnings.contains { $0.message.contains("discontinuity indicator on PID 256") }, "\(d.warnings)")
        XCTAssertFalse(d.warnings.contains { $0.message.contains("continuity counter") }, "\(d.warnings)")
    }
    /// `count` PES of one ADTS frame on PID 0x100 (44.1 kHz); from PES `change` on, PMT
    /// version 1 (repeated every `every` PES) adds PID 0x101, ADTS at 48 kHz, one frame per PES
    /// from two PES before it (those two are not listed yet: not read, as by FFmpeg).
    static func laterPMTStream(count: Int, change: Int, every: Int) -> [UInt8] {
        var b = Builder()
        b.tables()
        var frame48 = adts(120, fill: 0x22)
        frame48[2] = 0x4C   // sampling_frequency_index 3: 48 kHz
        let body: [UInt8] = [0xE1, 0x00, 0xF0, 0x00, 0x0F, 0xE1, 0x00, 0xF0, 0x00, 0x0F, 0xE1, 0x01, 0xF0, 0x00]
        for i in 0..<count {
            if i >= change && (i - change) % every == 0 {
                b.packet(pid: 0x1000, start: true, payload: [0] + Builder.section(table: 2, id: 1, version: 1, body))
            }
            b.pes(pts: 90000 + Int64(i) * 4180, payload: adts(200))
            if i >= change - 2 { b.pes(pid: 0x101, streamID: 0xC1, pts: 90000 + Int64(i) * 4180, payload: frame48) }
        }
        return b.bytes
    }

    /// A PMT version that adds a stream after what opening reads: on a seekable source the
    /// stream is a track from the start (its parameters learned from where the version comes:
    /// the whole rest of a short file is looked through, places spread through a long one),
    /// its packets from that PMT on; the same after a seek to the start and from a reader of
    /// the track alone. From a source that cannot seek the track is added while reading, at
    /// the PMT, with a warning naming its PID, and listed with its parameters by the time its
    /// first packet comes: the packets equal the file's.
    func testALaterPMTVersionAddsItsStreams() throws {
        for (count, change, every) in [(40, 20, 1000), (10_000, 5_000, 200), (30_000, 15_000, 200)] {
            let bytes = Self.laterPMTStream(count: count, change: change, every: every)
            // Under 512 KiB (one window), 3.8 MB (windows in a row), 11 MB (16 places).
            XCTAssertEqual(bytes.count > MPEGTSDemuxer.scanWindow, count > 1000)
            XCTAssertEqual(bytes.count > Int(MPEGTSDemuxer.scanWhole), count > 10_000)
            let expected = (change..<count).map { 90000 + Int64($0) * 4180 }
            let d = try MPEGTSDemuxer(source: MemorySource(bytes))
            XCTAssertEqual(d.tracks.map(\.id), [0x100, 0x101])
            XCTAssertEqual(d.tracks.map(\.parameters.sampleRate), [44100, 48000])
            let packets = try readAll(d).packets
            XCTAssertEqual(packets.filter { $0.trackIndex == 1 }.map(\.pts), expected)
            XCTAssertEqual(packets.filter { $0.trackIndex == 0 }.count, count)
            XCTAssertFalse(d.warnings.contains { $0.message.contains("PMT") }, "\(d.warnings)")
            try d.seek(to: 0)
            XCTAssertEqual(try readAll(d).packets.map { [$0.trackIndex, Int($0.pts)] }, packets.map { [$0.trackIndex, Int($0.pts)] })
            var own: [Int64] = []
            while let p = try d.read(track: 1) { own.append(p.pts) }
            XCTAssertEqual(own, expected)

            var offset = 0
            let pipe = CallbackSource(name: "-", size: nil, read: { buffer in
                let n = min(buffer.count, bytes.count - offset)
                bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + n)])) }
                offset += n
                return n
            }, seek: nil)
            let p = try MPEGTSDemuxer(source: pipe)
            XCTAssertEqual(p.tracks.map(\.id), [0x100])
            var piped: [Packet] = []
            while let packet = try p.read() {
                XCTAssertLessThan(packet.trackIndex, p.tracks.count)
                if packet.trackIndex == 1 && !piped.contains(where: { $0.trackIndex == 1 }) {
                    XCTAssertEqual(p.tracks[1].parameters.sampleRate, 48000)   // listed whole at its first packet
                }
                piped.append(packet)
            }
            XCTAssertEqual(piped.map { [$0.trackIndex, Int($0.pts), Int($0.duration), $0.size] },
                           packets.map { [$0.trackIndex, Int($0.pts), Int($0.duration), $0.size] })
            XCTAssertEqual(p.tracks.map(\.id), [0x100, 0x101])
            XCTAssertEqual(p.tracks.map(\.parameters.codec), [.aac, .aac])
            XCTAssertTrue(p.warnings.contains { $0.message.contains("the PMT changed (version 0 to 1)") && $0.message.contains("adds PID 257 as track 1") },
                          "\(p.warnings)")
        }
    }

    /// A PMT version that comes once, between the places opening looks at in a long file: its
    /// track is added while reading (as from a pipe), and a seek to the start or a reader of
    /// that track alone finds it at the same PMT again.
    func testAPMTVersionOpeningMissedAddsItsTrackWhileReading() throws {
        let bytes = Self.laterPMTStream(count: 30_000, change: 14_000, every: 1_000_000)
        let d = try MPEGTSDemuxer(source: MemorySource(bytes))
        XCTAssertEqual(d.tracks.map(\.id), [0x100])   // between the 16 places
        let packets = try readAll(d).packets
        XCTAssertEqual(d.tracks.map(\.id), [0x100, 0x101])
        XCTAssertEqual(d.tracks.map(\.parameters.sampleRate), [44100, 48000])
        let expected = (14_000..<30_000).map { 90000 + Int64($0) * 4180 }
        XCTAssertEqual(packets.filter { $0.trackIndex == 1 }.map(\.pts), expected)
        XCTAssertEqual(packets.filter { $0.trackIndex == 0 }.count, 30_000)
        XCTAssertTrue(d.warnings.contains { $0.message.contains("adds PID 257 as track 1") }, "\(d.warnings)")
        try d.seek(to: 0)
        XCTAssertEqual(try readAll(d).packets.map { [$0.trackIndex, Int($0.pts)] }, packets.map { [$0.trackIndex, Int($0.pts)] })
        var own: [Int64] = []
        while let p = try d.read(track: 1) { own.append(p.pts) }
        XCTAssertEqual(own, expected)
    }

    /// A LOAS frame of `size` bytes in all: with a StreamMuxConfig (audioMuxVersion 0, one
    /// program and layer) whose AudioSpecificConfig is AAC LC, 48 kHz, stereo (11 90), else
    /// one that reuses the last one (useSameStreamMux 1).
    static func loas(_ size: Int, config: Bool, fill: UInt8 = 0x33) -> [UInt8] {
        let length = size - 3
        let body: [UInt8] = config ? [0x20, 0x00, 0x11, 0x90] : [0x80]
        return [0x56, 0xE0 | UInt8(length >> 8), UInt8(length & 0xFF)] + body + [UInt8](repeating: fill, count: size - 3 - body.count)
    }

    func testLATMFramesKeepTheirSyncHeaderAndStraddlePES() throws {
        var b = Builder()
        b.tables(streamType: 0x11)
        let frames = [Self.loas(300, config: true), Self.loas(250, config: false, fill: 0x44),
                      Self.loas(260, config: false, fill: 0x55), Self.loas(270, config: true, fill: 0x66)]
        // PES 1: frame 0 and the first 100 bytes of frame 1; PES 2: the rest of frame 1, two
        // junk bytes (kept in the next packet, as FFmpeg's latm parser keeps them), frames 2 and 3.
        b.pes(pts: 90000, payload: frames[0] + Array(frames[1].prefix(100)))
        b.pes(pts: 90000 + 3840, payload: Array(frames[1].dropFirst(100)) + [0xAA, 0xBB] + frames[2] + frames[3])
        let d = try MPEGTSDemuxer(source: MemorySource(b.bytes))
        let t = d.tracks[0]
        XCTAssertEqual(t.parameters.codec, .aacLATM)
        XCTAssertEqual(t.mediaType, .audio)
        XCTAssertEqual(t.parameters.sampleRate, 48000)
        XCTAssertEqual(t.parameters.channels, 2)
        XCTAssertEqual(t.parameters.extradata, [0x11, 0x90])
        XCTAssertNil(t.unsupportedReason)
        let (packets, cut) = try readAll(d)
        XCTAssertNil(cut)
        XCTAssertEqual(packets.map(\.data), [frames[0], frames[1], [0xAA, 0xBB] + frames[2], frames[3]])
        // 1024 samples at 48 kHz: 1920 ticks; frame 1 begins in PES 1, frame 2 in PES 2.
        XCTAssertEqual(packets.map(\.pts), [90000, 91920, 93840, 95760])
        XCTAssertEqual(packets.map(\.duration), [1920, 1920, 1920, 1920])
        XCTAssertTrue(packets.allSatisfy(\.isKeyframe))
        XCTAssertEqual(packets.map(\.position), [188 * 2, -1, 188 * 5, -1])
        XCTAssertTrue(d.warnings.isEmpty, "\(d.warnings)")
    }

    func testLATMStreamMuxConfigVersion1AndLength() throws {
        // audioMuxVersion 1: taraBufferFullness and the AudioSpecificConfig's length in bits
        // (LatmGetValue), here AAC LC 44.1 kHz mono (12 08, 16 bits).
        // 0 1 0 | 00 11111111 | 1 000000 0000 000 | 00 00010000 | 00010010 00001000
        let body: [UInt8] = [0x47, 0xFC, 0x00, 0x00, 0x80, 0x90, 0x40]
        let frame = [0x56, 0xE0, UInt8(body.count + 10)] + body + [UInt8](repeating: 0, count: 10)
        let config = try XCTUnwrap(LATMMuxConfig(loasFrame: frame, at: 0, size: frame.count))
        XCTAssertEqual(config.audioSpecificConfig, [0x12, 0x08])
        XCTAssertEqual(config.config.sampleRate, 44100)
        XCTAssertEqual(config.config.channels, 1)
        XCTAssertEqual(config.samplesPerFrame, 1024)
        XCTAssertEqual(LATMMuxConfig.frameSize(frame, at: 0), frame.count)
        XCTAssertNil(LATMMuxConfig(loasFrame: Self.loas(20, config: false), at: 0, size: 20))   // useSameStreamMux
        XCTAssertNil(LATMMuxConfig(loasFrame: Array(frame.prefix(6)), at: 0, size: 6))   // cut short
    }

    func testLATMWithoutSyncWordsIsBoundedAndWarned() throws {
        var b = Builder()
        b.tables(streamType: 0x11)
        for i in 0..<500 { b.pes(pts: 90000 + Int64(i) * 1920, payload: [UInt8](repeating: 0x12, count: 170)) }
        b.pes(pts: 90000 + 500 * 1920, payload: Self.loas(200, config: true))
        let d = try MPEGTSDemuxer(source: MemorySource(b.bytes))
        let packets = try readAll(d).packets
        // The junk before the last frame passed 64 KiB: dropped with a warning naming a PES.
        XCTAssertLessThan(packets.map(\.size).reduce(0, +), MPEGTSDemuxer.loasJunkLimit + 400)
        XCTAssertEqual(packets.last?.data.suffix(200), Self.loas(200, config: true)[...])
        let w = d.warnings.first { $0.message.contains("no LOAS sync word") }
        XCTAssertNotNil(w, "\(d.warnings)")
        XCTAssertNotNil(w?.offset)
        // Damage anywhere: warnings, never a crash.
        var rng = SystemRandomNumberGenerator()
        var good = Builder()
        good.tables(streamType: 0x11)
        for i in 0..<20 { good.pes(pts: 90000 + Int64(i) * 3840, payload: Self.loas(300, config: i % 5 == 0) + Self.loas(200, config: false)) }
        for _ in 0..<100 {
            var bad = good.bytes
            for _ in 0..<Int.random(in: 1...20, using: &rng) {
                bad[Int.random(in: 0..<bad.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            }
            guard let d = try? MPEGTSDemuxer(source: MemorySource(bad)) else { continue }
            _ = try readAll(d)
        }
    }

    func testTimedID3IsADataTrackOfWholePES() throws {
        // An ID3v2.4 tag with one TXXX frame, as HLS timed metadata carries it.
        func tag(_ text: String) -> [UInt8] {
            let n = text.utf8.count + 2
            let frame = Array("TXXX".utf8) + [0, 0, UInt8(n >> 7), UInt8(n & 0x7F), 0, 0, 3, 0] + Array(text.utf8)
            return Array("ID3".utf8) + [4, 0, 0, 0, 0, UInt8(frame.count >> 7), UInt8(frame.count & 0x7F)] + frame
        }
        let metadataDescriptor: [UInt8] = [0x26, 13, 0xFF, 0xFF] + Array("ID3 ".utf8) + [0xFF] + Array("ID3 ".utf8) + [0, 0x0F]
        let registration: [UInt8] = [0x05, 4] + Array("ID3 ".utf8)
        // Of stream type 0x15 (not of others) the first 5 bytes of each PES go, as FFmpeg drops
        // them (taken for ISO/IEC 13818-1's metadata AU cell header).
        let cases: [(UInt8, [UInt8], CodecID)] = [(0x15, metadataDescriptor, .timedID3), (0x15, registration, .timedID3),
                                                  (0x15, [], .unknown), (0x06, registration, .timedID3)]
        for (type, info, codec) in cases {
            var b = Builder()
            b.tables(streamType: type, esInfo: info)
            let tags = [tag("one"), tag(String(repeating: "x", count: 300))]
            b.pes(streamID: 0xFC, pts: 90000, payload: tags[0])
            b.pes(streamID: 0xFC, pts: 180000, payload: tags[1])
            let d = try MPEGTSDemuxer(source: MemorySource(b.bytes))
            XCTAssertEqual(d.tracks[0].mediaType, .data)
            XCTAssertEqual(d.tracks[0].parameters.codec, codec)
            XCTAssertEqual(d.tracks[0].unsupportedReason == nil, codec == .timedID3)
            let packets = try readAll(d).packets
            XCTAssertEqual(packets.map(\.data), tags.map { Array($0.dropFirst(type == 0x15 ? 5 : 0)) })
            XCTAssertEqual(packets.map(\.pts), [90000, 180000])
            XCTAssertEqual(packets.map(\.duration), [0, 0])
            // FFmpeg flags the packets of a stream it names (not those of an unknown one).
            XCTAssertEqual(packets.map(\.isKeyframe), [codec == .timedID3, codec == .timedID3])
        }
    }

    func testPMTChangeWhileOpeningAddsTracks() throws {
        var b = Builder()
        b.tables()
        b.pes(pts: 90000, payload: Self.adts(200), bounded: false)   // open until the next PES of its PID starts
        // Version 1 adds PID 0x101 before the first frame is known: a second track, as FFmpeg adds a stream.
        let pmt: [UInt8] = [0xE1, 0x00, 0xF0, 0x00, 0x0F, 0xE1, 0x00, 0xF0, 0x00, 0x0F, 0xE1, 0x01, 0xF0, 0x00]
        b.packet(pid: 0x1000, start: true, payload: [0] + Builder.section(table: 2, id: 1, version: 1, pmt))
        b.pes(pid: 0x101, pts: 90000, payload: Self.adts(180))
        b.pes(pts: 94180, payload: Self.adts(150))
        let d = try MPEGTSDemuxer(source: MemorySource(b.bytes))
        XCTAssertEqual(d.tracks.map(\.id), [0x100, 0x101])
        XCTAssertEqual(d.tracks.map(\.parameters.codec), [.aac, .aac])
        let packets = try readAll(d).packets
        XCTAssertEqual(packets.map(\.trackIndex), [1, 0, 0])
        XCTAssertEqual(packets.map(\.size), [180, 200, 150])
        XCTAssertTrue(d.warnings.isEmpty, "\(d.warnings)")
    }
}
