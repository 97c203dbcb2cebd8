import Foundation
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

    /// Writes 4 frames of 16-bit mono PCM as AIFF with `metadata`, then the file's bytes.
    private func writeAIFF(_ metadata: MuxMetadata) throws -> [UInt8] {
        let path = NSTemporaryDirectory() + "markers-\(UUID().uuidString).aiff"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let muxer = try PCMFileMuxer(path: path, layout: .aiff)
        _ = try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "pcm_s16be", sampleRate: 8000, channels: 1), timeBase: Rational(1, 8000))
        try muxer.setMetadata(metadata)
        try muxer.write(Packet(trackIndex: 0, pts: 0, dts: 0, duration: 4, isKeyframe: true, data: [1, 2, 3, 4, 5, 6, 7, 8], timeBase: Rational(1, 8000)))
        try muxer.finish()
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    func testMarkersAndInstrumentAreWrittenAsTheTablesSay() throws {
        let instrument = Instrument(baseNote: 60, detune: -12, lowNote: 0, highNote: 127, lowVelocity: 1, highVelocity: 127, gain: -6,
                                    sustainLoop: .init(playMode: 1, beginMarker: 1, endMarker: 2), releaseLoop: .init(playMode: 2, beginMarker: 300, endMarker: 9))
        let bytes = try writeAIFF(MuxMetadata(tags: Metadata([MetadataEntry(key: "title", nativeKey: "NAME", ffmpegKey: "title", value: "t")]),
                                              markers: Self.expected, instrument: instrument))
        // The chunks of the reader's tests, byte for byte, before COMM (after the tags), and the FORM size.
        let inst = Self.chunk("INST", Self.inst([60, -12, 0, 127, 1, 127], gain: -6, (1, 1, 2), (2, 300, 9)))
        let at = try XCTUnwrap(bytes.firstRange(of: Self.markChunk)?.lowerBound)
        XCTAssertEqual(Array(bytes[(at + Self.markChunk.count)...].prefix(inst.count)), inst)
        XCTAssertEqual(Array(bytes[(at + Self.markChunk.count + inst.count)...].prefix(4)), Array("COMM".utf8))
        XCTAssertEqual(Array(bytes[12..<16]), Array("NAME".utf8))
        XCTAssertEqual(Int(bytes[4]) << 24 | Int(bytes[5]) << 16 | Int(bytes[6]) << 8 | Int(bytes[7]), bytes.count - 8)
        let d = try AIFFDemuxer(source: MemorySource(bytes))
        XCTAssertEqual(d.markers, Self.expected)
        XCTAssertEqual(d.instrument?.sustainLoop.endFrame, 3)
        XCTAssertEqual(try readAll(d), [[1, 2, 3, 4, 5, 6, 7, 8]])
        // Markers the fields cannot hold are left out, a long name is cut at a character's end,
        // values past a field are clamped; none at all writes no MARK.
        let long = String(repeating: "é", count: 200)
        let written = try AIFFDemuxer(source: MemorySource(try writeAIFF(MuxMetadata(markers: [
            Marker(id: 40000, frame: 0, name: "id"), Marker(id: 1, frame: -1, name: "before"), Marker(id: 2, frame: 1 << 32, name: "past"),
            Marker(id: 3, frame: 2, name: long)], instrument: Instrument(baseNote: 300, detune: -300, lowNote: 0, highNote: 0, lowVelocity: 0,
            highVelocity: 0, gain: 1 << 20, sustainLoop: .init(playMode: 0, beginMarker: 0, endMarker: 0), releaseLoop: .init(playMode: 0, beginMarker: 0, endMarker: 0))))))
        XCTAssertEqual(written.markers, [Marker(id: 3, frame: 2, name: String(repeating: "é", count: 127))])
        XCTAssertEqual(written.instrument.map { [$0.baseNote, $0.detune, $0.gain] }, [127, -128, 32767])
        // The count is unsigned: more than 32,767 markers are all written and read back.
        let many = (0..<33_000).map { Marker(id: $0 % 32_768, frame: Int64($0), name: "") }
        XCTAssertEqual(try AIFFDemuxer(source: MemorySource(try writeAIFF(MuxMetadata(markers: many)))).markers, many)
        let plain = try writeAIFF(MuxMetadata(markers: [Marker(id: 1, frame: -5, name: "")]))
        XCTAssertNil(plain.firstRange(of: Array("MARK".utf8)))
        XCTAssertEqual(try writeAIFF(MuxMetadata()), plain)
    }

    func testResampledMetadataScalesTheFrames() {
        let m = MuxMetadata(markers: [Marker(id: 1, frame: 3, name: "a"), Marker(id: 2, frame: 44100, name: "b")],
                            instrument: Instrument(baseNote: 60, detune: 0, lowNote: 0, highNote: 127, lowVelocity: 1, highVelocity: 127, gain: 0,
                                                   sustainLoop: .init(playMode: 1, beginMarker: 1, endMarker: 2, beginFrame: 3, endFrame: 44100),
                                                   releaseLoop: .init(playMode: 0, beginMarker: 0, endMarker: 0)))
        let r = m.resampled(from: 44100, to: 48000)
        // 3 * 48000 / 44100 = 3.27 -> 3; 44100 -> 48000.
        XCTAssertEqual(r.markers.map(\.frame), [3, 48000])
        XCTAssertEqual(r.instrument?.sustainLoop.endFrame, 48000)
        XCTAssertEqual(m.resampled(from: 8000, to: 8000), m)
        XCTAssertEqual(m.resampled(from: 48000, to: 24000).markers.map(\.frame), [2, 22050])
    }

    private func readAll(_ d: Demuxer) throws -> [[UInt8]] {
        var out: [[UInt8]] = []
        while let p = try d.read() { out.append(Array(p.data)) }
        return out
    }
}
