import XCTest
@testable import MediaKit

/// SampleIndexBuilder's uncompressed-audio grouping (FFmpeg's packets for tracks whose stts
/// counts PCM frames), on sample tables built in memory.
final class SampleIndexTests: XCTestCase {
    private func pcmTables(framesPerChunk: [UInt32], frameSize: UInt32) -> SampleTables {
        var t = SampleTables()
        let total = framesPerChunk.reduce(0, +)
        t.stts = [(total, 1)]
        t.constantSize = frameSize
        t.sampleCount = Int(total)
        var offset: UInt64 = 1000
        for (i, n) in framesPerChunk.enumerated() {
            t.chunkOffsets.append(offset)
            offset += UInt64(n * frameSize) + 17
            if i == 0 || framesPerChunk[i - 1] != n { t.stsc.append((UInt32(i + 1), n, 1)) }
        }
        t.stscLocation = ("moov/trak[0]/mdia/minf/stbl/stsc", 4242)
        return t
    }

    func testChunksAreCutInto1024FramePackets() throws {
        let t = pcmTables(framesPerChunk: [2048, 2000, 1000, 3000], frameSize: 4)
        let s = try SampleIndexBuilder.build(t, trackPath: "moov/trak[0]", file: "x.mov",
                                             audio: AudioFraming(sampleSize: 4), mediaDuration: 8048)
        XCTAssertEqual(s.map(\.duration), [1024, 1024, 1024, 976, 1000, 1024, 1024, 952])
        XCTAssertEqual(s.map(\.size), [4096, 4096, 4096, 3904, 4000, 4096, 4096, 3808])
        XCTAssertEqual(s.map(\.dts), [0, 1024, 2048, 3072, 4048, 5048, 6072, 7096])
        XCTAssertEqual(s[0].offset, 1000)
        XCTAssertEqual(s[1].offset, 1000 + 4096)
        XCTAssertEqual(s[2].offset, 1000 + 2048 * 4 + 17)
        XCTAssertTrue(s.allSatisfy { $0.isKey && $0.pts == $0.dts })
    }

    /// The codec's bytes per frame win over stsz's (FFmpeg: stsz's constant size is used only
    /// when the codec implies none); mdhd shorter than the frames shortens the last packet.
    func testCodecFrameSizeAndTrackEnd() throws {
        let t = pcmTables(framesPerChunk: [1500], frameSize: 1)
        let s = try SampleIndexBuilder.build(t, trackPath: "moov/trak[0]", file: "x.mov",
                                             audio: AudioFraming(sampleSize: 6), mediaDuration: 1400)
        XCTAssertEqual(s.map(\.size), [6144, 476 * 6])
        XCTAssertEqual(s.map(\.duration), [1024, 376])
    }

    /// ima4-style framing: whole 64-frame blocks of 34 bytes per channel, 16 per packet.
    func testCompressedFramesPerPacket() throws {
        let t = pcmTables(framesPerChunk: [64 * 20], frameSize: 1)
        let s = try SampleIndexBuilder.build(t, trackPath: "moov/trak[0]", file: "x.mov",
                                             audio: AudioFraming(samplesPerFrame: 64, bytesPerFrame: 68), mediaDuration: 0)
        XCTAssertEqual(s.map(\.duration), [1024, 256])
        XCTAssertEqual(s.map(\.size), [16 * 68, 4 * 68])
    }

    /// An hour of 48 kHz stereo in one-second chunks: one entry per 1024 frames, not per frame.
    func testAnHourIsIndexedByPacket() throws {
        let t = pcmTables(framesPerChunk: Array(repeating: 48000, count: 3600), frameSize: 4)
        let s = try SampleIndexBuilder.build(t, trackPath: "moov/trak[0]", file: "x.mov",
                                             audio: AudioFraming(sampleSize: 4), mediaDuration: 0)
        XCTAssertEqual(s.count, 3600 * 47)
        XCTAssertEqual(s.last.map { $0.dts + $0.duration }, 3600 * 48000)
    }

    func testZeroBytesPerFrameIsAnError() {
        var f = AudioFraming(samplesPerFrame: 64, bytesPerFrame: 0)
        f.entryPath = "moov/trak[0]/mdia/minf/stbl/stsd/ima4"
        f.entryOffset = 777
        XCTAssertThrowsError(try SampleIndexBuilder.build(pcmTables(framesPerChunk: [640], frameSize: 1), trackPath: "moov/trak[0]",
                                                          file: "x.mov", audio: f, mediaDuration: 0)) { e in
            guard let m = e as? MediaError else { return XCTFail("\(e)") }
            XCTAssertEqual(m.offset, 777)
            XCTAssertEqual(m.context, f.entryPath)
        }
    }

    func testUnalignedChunkIsAnError() {
        // The first stsc entry's chunks hold 100 frames: not a whole number of 64-frame blocks.
        let t = pcmTables(framesPerChunk: [100, 128], frameSize: 1)
        XCTAssertThrowsError(try SampleIndexBuilder.build(t, trackPath: "moov/trak[0]", file: "x.mov",
                                                          audio: AudioFraming(samplesPerFrame: 64, bytesPerFrame: 34), mediaDuration: 0)) { e in
            guard let m = e as? MediaError else { return XCTFail("\(e)") }
            XCTAssertEqual(m.offset, 4242)
            XCTAssertEqual(m.context, "moov/trak[0]/mdia/minf/stbl/stsc")
        }
    }

    /// An stsc whose first entry starts after chunk 1: the chunks before it take that entry's
    /// frame count when the index is built, so the packet limit must count them too (here
    /// 64 chunks of ~4 G frames: 268 M packets, far above the limit; before, only the one
    /// chunk the entry names was counted and building ran out of memory).
    func testChunksBeforeTheFirstStscEntryCountTowardsTheLimit() {
        var t = pcmTables(framesPerChunk: Array(repeating: 1024, count: 64), frameSize: 2)
        t.stsc = [(64, 0xFFFF_FFF0, 1)]
        XCTAssertThrowsError(try SampleIndexBuilder.build(t, trackPath: "moov/trak[0]", file: "x.mov",
                                                          audio: AudioFraming(sampleSize: 2), mediaDuration: 0)) { e in
            guard let m = e as? MediaError else { return XCTFail("\(e)") }
            XCTAssertEqual(m.kind, .limit)
            XCTAssertEqual(m.context, "moov/trak[0]/mdia/minf/stbl/stsc")
        }
    }
}
