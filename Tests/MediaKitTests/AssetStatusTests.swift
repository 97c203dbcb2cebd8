import Foundation
@testable import MediaKit
import XCTest

/// Issue 35, item 10: reader and writer status as AVAssetReader / AVAssetWriter say it. The
/// packets an ``AssetReader`` hands out are the wrapped demuxer's (the same file read another
/// way); the status follows what the reads did.
final class AssetStatusTests: XCTestCase {
    let file = "mp4_h264_aac_moov_at_start_ctts_8s.mp4"

    /// Every packet, read straight from a demuxer of `path`: the oracle of the reader's.
    func packets(_ path: String) throws -> [Packet] {
        let d = try MediaRegistry.shared.makeDemuxer(path: path)
        var out: [Packet] = []
        while let p = try d.read() { out.append(p) }
        return out
    }

    func testReadingToTheEndCompletesAndEndsEveryTrack() throws {
        let path = try SharedMedia.file(file).path
        let expected = try packets(path)
        let reader = try AssetReader(path: path)
        XCTAssertEqual(reader.status, .unknown)
        XCTAssertTrue(reader.startReading())
        XCTAssertEqual(reader.status, .reading)
        var got: [Packet] = []
        while let p = try reader.read() {
            got.append(p)
            XCTAssertEqual(reader.status, .reading)
        }
        XCTAssertEqual(got.map(\.data), expected.map(\.data))
        XCTAssertEqual(reader.status, .completed)
        XCTAssertNil(reader.error)
        XCTAssertEqual(reader.endedTracks, Array(reader.tracks.indices))
        XCTAssertFalse(reader.startReading(), "a completed reader does not start again")
    }

    func testPerTrackEndOfStream() throws {
        let path = try SharedMedia.file(file).path
        let expected = try packets(path)
        let reader = try AssetReader(path: path)
        XCTAssertEqual(reader.tracks.count, 2)
        var first = 0
        while try reader.read(track: 0) != nil { first += 1 }
        XCTAssertEqual(first, expected.filter { $0.trackIndex == 0 }.count)
        XCTAssertTrue(reader.hasEnded(track: 0))
        XCTAssertFalse(reader.hasEnded(track: 1))
        XCTAssertEqual(reader.status, .reading, "one track of two ended: still reading")
        var second = 0
        while try reader.read(track: 1) != nil { second += 1 }
        XCTAssertEqual(second, expected.filter { $0.trackIndex == 1 }.count)
        XCTAssertEqual(reader.status, .completed)
        try reader.seek(to: 0)
        XCTAssertEqual(reader.status, .reading, "a seek reads again")
        XCTAssertFalse(reader.hasEnded(track: 0))
        XCTAssertNotNil(try reader.read(track: 0))
    }

    func testACutFileCompletesWithTheCutAsAWarning() throws {
        let path = try SharedMedia.file("ogg_opus_stereo_truncated_10000b_no_eos.opus").path
        let reader = try AssetReader(path: path)
        var n = 0
        while try reader.read() != nil { n += 1 }
        XCTAssertGreaterThan(n, 40)
        XCTAssertEqual(reader.status, .completed)
        XCTAssertTrue(reader.warnings.contains { $0.kind == .truncated }, "\(reader.warnings)")
    }

    /// A demuxer whose source fails after three packets (an I/O error mid-file).
    final class Failing: Demuxer {
        var count = 0
        var tracks: [Track] { [Track(index: 0, id: 1, parameters: CodecParameters(mediaType: .audio, codec: "pcm_s16le"), timeBase: Rational(1, 8000), duration: 0)] }
        var duration: Double? { nil }
        func read() throws -> Packet? {
            count += 1
            if count > 3 { throw MediaError(.io, "the disk went away", path: "fake") }
            return Packet(trackIndex: 0, pts: Int64(count), dts: Int64(count), duration: 1, isKeyframe: true, data: [1, 2], timeBase: Rational(1, 8000))
        }
        func read(track: Int) throws -> Packet? { try read() }
        func seek(to seconds: Double) throws {}
        func select(tracks: Set<Int>?) {}
    }

    func testAFailedReadFailsTheReaderOnce() throws {
        let inner = Failing()
        let reader = AssetReader(inner)
        for _ in 0..<3 { XCTAssertNotNil(try reader.read()) }
        XCTAssertThrowsError(try reader.read()) { XCTAssertEqual(($0 as? MediaError)?.kind, .io) }
        XCTAssertEqual(reader.status, .failed)
        XCTAssertEqual(reader.error?.kind, .io)
        XCTAssertNil(try reader.read(), "reads after a failure return nil")
        XCTAssertEqual(inner.count, 4, "the failed demuxer is not read again")
        reader.cancelReading()
        XCTAssertEqual(reader.status, .failed, "failed is final")
    }

    func testCancelReading() throws {
        let reader = try AssetReader(path: SharedMedia.file(file).path)
        XCTAssertNotNil(try reader.read())
        reader.cancelReading()
        XCTAssertEqual(reader.status, .cancelled)
        XCTAssertNil(try reader.read())
    }

    /// A packet copy into Matroska: unknown -> writing -> completed, a track marked finished
    /// refuses packets; the file holds what was written (read back: the same packet data).
    func testPacketWriterStatusAndFinishedTracks() throws {
        let path = try SharedMedia.file(file).path
        let source = try MediaRegistry.shared.makeDemuxer(path: path)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("asset-status-\(getpid()).mkv").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let writer = PacketWriter(try ContainerCatalog.shared.makeMuxer(path: out))
        XCTAssertEqual(writer.status, .unknown)
        for t in source.tracks { _ = try writer.addTrack(from: t) }
        var written: [Packet] = []
        while let p = try source.read() {
            if p.trackIndex == 1 && written.filter({ $0.trackIndex == 1 }).count == 20 {
                writer.markAsFinished(track: 1)
            }
            if writer.isFinished(track: p.trackIndex) {
                XCTAssertThrowsError(try writer.write(p)) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
                continue
            }
            try writer.write(p)
            written.append(p)
            XCTAssertEqual(writer.status, .writing)
        }
        XCTAssertEqual(writer.status, .writing, "a refused packet leaves the writer writing")
        try writer.finish()
        XCTAssertEqual(writer.status, .completed)
        XCTAssertTrue(writer.isFinished(track: 0))
        XCTAssertThrowsError(try writer.write(written[0])) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
        let back = try packets(out)
        XCTAssertEqual(back.filter { $0.trackIndex == 1 }.count, 20)
        XCTAssertEqual(back.map(\.data).sorted { $0.lexicographicallyPrecedes($1) }, written.map(\.data).sorted { $0.lexicographicallyPrecedes($1) })
    }

    /// A muxer whose second packet fails with an I/O error: the writer fails and cancels it.
    final class FailingMuxer: Muxer {
        var writes = 0, cancelled = false
        func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int { 0 }
        func needsFirstPacket(_ track: Track) -> Bool { false }
        func addTrack(from track: Track, firstPacket: [UInt8]?) throws -> Int { 0 }
        func addEncodedTrack(_ parameters: CodecParameters, timeBase: Rational, encoderDelay: Int) throws -> Int { 0 }
        func setGapless(track: Int, presentedDuration: Int64, padding: Int64) throws {}
        func updateParameters(_ parameters: CodecParameters, track: Int) throws {}
        func setMetadata(_ metadata: MuxMetadata) throws {}
        func write(_ packet: Packet) throws {
            writes += 1
            if packet.pts < 0 { throw MediaError(.invalidArgument, "a negative pts") }
            if writes == 3 { throw MediaError(.io, "the disk is full") }
        }
        func finish() throws {}
        func cancel() { cancelled = true }
    }

    func testAFailedWriteFailsTheWriterAndARefusalDoesNot() throws {
        let inner = FailingMuxer()
        let writer = PacketWriter(inner)
        try writer.write(Packet(trackIndex: 0, pts: 0, dts: 0, duration: 1, isKeyframe: true, data: [1], timeBase: Rational(1, 8000)))
        XCTAssertThrowsError(try writer.write(Packet(trackIndex: 0, pts: -5, dts: -5, duration: 1, isKeyframe: true, data: [1], timeBase: Rational(1, 8000))))
        XCTAssertEqual(writer.status, .writing, "a refused packet is the caller's: the file is intact")
        XCTAssertThrowsError(try writer.write(Packet(trackIndex: 0, pts: 2, dts: 2, duration: 1, isKeyframe: true, data: [1], timeBase: Rational(1, 8000))))
        XCTAssertEqual(writer.status, .failed)
        XCTAssertEqual(writer.error?.kind, .io)
        XCTAssertTrue(inner.cancelled, "a failed writer removes what it wrote")
        XCTAssertThrowsError(try writer.finish()) { XCTAssertEqual(($0 as? MediaError)?.kind, .state) }
        writer.cancel()
        XCTAssertEqual(writer.status, .failed)
    }
}
