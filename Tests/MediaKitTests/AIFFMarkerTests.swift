import XCTest
@testable import MediaKit

/// AIFF `MARK` chunks laid out by the tables of Audio IFF 1.3 (a 16-bit count; per marker a
/// 16-bit id, a 32-bit position in sample frames and a Pascal string padded to an even length),
/// read by AIFFDemuxer into ``Demuxer/markers``. (The oracle suite checks files Python's aifc
/// module wrote: Tests/oracle/test_metadata_api.py.)
final class AIFFMarkerTests: XCTestCase {
    private static func be32(_ n: Int) -> [UInt8] { [UInt8(n >> 24 & 0xFF), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] }

    private static func chunk(_ id: String, _ body: [UInt8]) -> [UInt8] {
        Array(id.utf8) + be32(body.count) + body + (body.count % 2 == 1 ? [0] : [])
    }

    /// A MARK body: `count` (default: the markers') then the markers.
    private static func mark(_ markers: [(id: Int16, frame: UInt32, name: String)], count: Int? = nil) -> [UInt8] {
        let n = count ?? markers.count
        var b: [UInt8] = [UInt8(n >> 8), UInt8(n & 0xFF)]
        for m in markers {
            let id = UInt16(bitPattern: m.id)
            b += [UInt8(id >> 8), UInt8(id & 0xFF)] + be32(Int(m.frame))
            let text = Array(m.name.utf8)
            b += [UInt8(text.count)] + text + (text.count % 2 == 0 ? [0] : [])
        }
        return b
    }

    /// FORM AIFF around `chunks`.
    private static func aiff(_ chunks: [[UInt8]]) -> [UInt8] {
        let body = Array("AIFF".utf8) + chunks.flatMap { $0 }
        return Array("FORM".utf8) + be32(body.count) + body
    }

    /// COMM: 1 channel, 4 frames, 16 bits, 8000 Hz (the 80-bit float 0x400B FA00 0000 0000 0000).
    private static let comm = chunk("COMM", [0, 1, 0, 0, 0, 4, 0, 16, 0x40, 0x0B, 0xFA, 0, 0, 0, 0, 0, 0, 0])
    /// SSND: offset and block size 0, 4 frames of 16 bits.
    private static let ssnd = chunk("SSND", [UInt8](repeating: 0, count: 8) + [1, 2, 3, 4, 5, 6, 7, 8])

    private static let expected = [Marker(id: 1, frame: 0, name: "a"), Marker(id: 2, frame: 3, name: "ab"),
                                   Marker(id: 300, frame: 4, name: ""), Marker(id: -1, frame: 0xFFFF_FFFF, name: "sustain")]
    private static let markChunk = chunk("MARK", mark(expected.map { (Int16($0.id), UInt32($0.frame), $0.name) }))

    /// A source that cannot seek, over `bytes`.
    private func pipe(_ bytes: [UInt8]) -> ByteSource {
        var offset = 0
        return CallbackSource(name: "-", size: nil, read: { buffer in
            let n = min(buffer.count, bytes.count - offset)
            for k in 0..<n { buffer[k] = bytes[offset + k] }
            offset += n
            return n
        }, seek: nil)
    }

    func testMarkersBeforeTheSoundFromAFileAndAPipe() throws {
        let bytes = Self.aiff([Self.markChunk, Self.comm, Self.ssnd])
        for source in [MemorySource(bytes), pipe(bytes)] {
            let d = try AIFFDemuxer(source: source)
            XCTAssertEqual(d.markers, Self.expected)
            XCTAssertEqual(try d.read()?.data, [1, 2, 3, 4, 5, 6, 7, 8])
        }
    }

    func testMarkersAfterTheSoundNeedASourceThatSeeks() throws {
        let bytes = Self.aiff([Self.comm, Self.ssnd, Self.markChunk])
        let d = try AIFFDemuxer(source: MemorySource(bytes))
        XCTAssertEqual(d.markers, Self.expected)
        XCTAssertEqual((d as Demuxer).markers, Self.expected)
        XCTAssertEqual(try AIFFDemuxer(source: pipe(bytes)).markers, [])
        XCTAssertEqual(try readAll(AIFFDemuxer(source: pipe(bytes))), [[1, 2, 3, 4, 5, 6, 7, 8]])
    }

    func testACutOrEmptyMarkChunkKeepsTheWholeMarkers() throws {
        // The count says 5; the last marker's name runs past the chunk.
        var body = Self.mark([(7, 10, "ten"), (8, 20, "twenty")], count: 5)
        body += [0, 9, 0, 0, 0, 30, 200, 0x41]
        XCTAssertEqual(try AIFFDemuxer(source: MemorySource(Self.aiff([Self.comm, Self.chunk("MARK", body), Self.ssnd]))).markers,
                       [Marker(id: 7, frame: 10, name: "ten"), Marker(id: 8, frame: 20, name: "twenty")])
        XCTAssertEqual(AIFFDemuxer.markers([]), [])
        XCTAssertEqual(AIFFDemuxer.markers([0, 0]), [])
        XCTAssertEqual(try AIFFDemuxer(source: MemorySource(Self.aiff([Self.comm, Self.ssnd]))).markers, [])
        // Other formats have none.
        XCTAssertEqual(try MPEGTSDemuxer(source: MemorySource(MPEGTSTests.stream(count: 2))).markers, [])
    }

    /// An INST body by Audio IFF 1.3's table: six signed bytes (base note, detune, low / high
    /// note, low / high velocity), a 16-bit gain, then two loops (play mode, begin and end marker ids).
    private static func inst(_ bytes: [Int8], gain: Int16, _ sustain: (Int16, Int16, Int16), _ release: (Int16, Int16, Int16)) -> [UInt8] {
        func s16(_ v: Int16) -> [UInt8] { let u = UInt16(bitPattern: v); return [UInt8(u >> 8), UInt8(u & 0xFF)] }
        return bytes.map { UInt8(bitPattern: $0) } + s16(gain) + s16(sustain.0) + s16(sustain.1) + s16(sustain.2)
            + s16(release.0) + s16(release.1) + s16(release.2)
    }

    func testInstrumentSettingsAndTheirLoopFramesWhereverTheChunksAre() throws {
        let body = Self.inst([60, -12, 0, 127, 1, 127], gain: -6, (1, 1, 2), (2, 300, 9))
        let want = Instrument(baseNote: 60, detune: -12, lowNote: 0, highNote: 127, lowVelocity: 1, highVelocity: 127, gain: -6,
                              sustainLoop: .init(playMode: 1, beginMarker: 1, endMarker: 2, beginFrame: 0, endFrame: 3),
                              releaseLoop: .init(playMode: 2, beginMarker: 300, endMarker: 9, beginFrame: 4, endFrame: nil))
        let instChunk = Self.chunk("INST", body)
        // Before the sound (any source), after it (a source that seeks), INST before or after MARK.
        for chunks in [[instChunk, Self.markChunk, Self.comm, Self.ssnd], [Self.comm, Self.ssnd, Self.markChunk, instChunk],
                       [Self.markChunk, Self.comm, Self.ssnd, instChunk], [instChunk, Self.comm, Self.ssnd, Self.markChunk]] {
            let d = try AIFFDemuxer(source: MemorySource(Self.aiff(chunks)))
            XCTAssertEqual(d.instrument, want)
            XCTAssertEqual((d as Demuxer).instrument, want)
            XCTAssertEqual(AssetReader(d).instrument, want)
        }
        let piped = try AIFFDemuxer(source: pipe(Self.aiff([instChunk, Self.markChunk, Self.comm, Self.ssnd])))
        XCTAssertEqual(piped.instrument, want)
        // From a pipe a MARK after the sound is not seen: the loops keep their ids, no frames.
        let late = try AIFFDemuxer(source: pipe(Self.aiff([instChunk, Self.comm, Self.ssnd, Self.markChunk])))
        XCTAssertEqual(late.instrument?.sustainLoop, Instrument.Loop(playMode: 1, beginMarker: 1, endMarker: 2))
        // A chunk under 20 bytes, or none, gives no instrument; a longer one is read by its first 20.
        XCTAssertNil(try AIFFDemuxer(source: MemorySource(Self.aiff([Self.chunk("INST", Array(body[0..<19])), Self.comm, Self.ssnd]))).instrument)
        XCTAssertNil(try AIFFDemuxer(source: MemorySource(Self.aiff([Self.comm, Self.ssnd]))).instrument)
        XCTAssertEqual(try AIFFDemuxer(source: MemorySource(Self.aiff([Self.chunk("INST", body + [1, 2, 3]), Self.markChunk, Self.comm, Self.ssnd])))
            .instrument, want)
        XCTAssertNil(try MPEGTSDemuxer(source: MemorySource(MPEGTSTests.stream(count: 2))).instrument)
    }

    private func readAll(_ d: Demuxer) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        while let p = try d.read() { out.append(Array(p.data)) }
        return out
    }
}
