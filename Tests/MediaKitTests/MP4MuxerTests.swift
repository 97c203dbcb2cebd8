import Foundation
import XCTest
@testable import MediaKit

/// MP4Muxer through its Swift API: packets in memory, read back with MP4Demuxer.
final class MP4MuxerTests: XCTestCase {
    private func tempPath(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-mux-\(getpid())-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }

    private let opusHead: [UInt8] = Array("OpusHead".utf8) + [1, 2, 0x38, 1, 0x80, 0xBB, 0, 0, 0, 0, 0]

    /// Writes 50 Opus-like packets (960 ticks each), with every layout, and reads them back.
    func testRoundTripEveryLayout() throws {
        let layouts: [MP4Muxer.Layout] = [.progressive, .fastStart, .fragmented(seconds: 0.2), .hybrid(seconds: 0.2)]
        for layout in layouts {
            let path = tempPath("rt.mp4")
            let muxer = try MP4Muxer(path: path, options: .init(layout: layout))
            let p = CodecParameters(mediaType: .audio, codec: "opus", extradata: opusHead, sampleRate: 48000, channels: 2)
            let t = try muxer.addTrack(p, timeBase: Rational(1, 48000))
            for i in 0..<50 {
                try muxer.write(Packet(trackIndex: t, pts: Int64(i * 960), dts: Int64(i * 960), duration: 960, isKeyframe: true,
                                       data: [UInt8](repeating: UInt8(i), count: 10 + i), timeBase: Rational(1, 48000)))
            }
            XCTAssertFalse(FileManager.default.fileExists(atPath: path), "\(layout): the target exists before finish()")
            try muxer.finish()
            let d = try MP4Demuxer(path: path)
            XCTAssertEqual(d.tracks.count, 1)
            XCTAssertEqual(d.tracks[0].parameters.codec, "opus", "\(layout)")
            var n = 0
            while let packet = try d.read() {
                XCTAssertEqual(packet.dts, Int64(n * 960), "\(layout)")
                XCTAssertEqual(packet.data, [UInt8](repeating: UInt8(n), count: 10 + n), "\(layout)")
                n += 1
            }
            XCTAssertEqual(n, 50, "\(layout)")
        }
    }

    func testCancelRemovesTheFile() throws {
        for layout in [MP4Muxer.Layout.progressive, .fragmented(seconds: 1)] {
            let path = tempPath("cancel.mp4")
            let muxer = try MP4Muxer(path: path, options: .init(layout: layout))
            let t = try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "opus", extradata: opusHead, sampleRate: 48000, channels: 2),
                                       timeBase: Rational(1, 48000))
            try muxer.write(Packet(trackIndex: t, pts: 0, dts: 0, duration: 960, isKeyframe: true, data: [1, 2, 3], timeBase: Rational(1, 48000)))
            let partial = muxer.inProgressPath
            XCTAssertTrue(FileManager.default.fileExists(atPath: partial))
            muxer.cancel()
            XCTAssertFalse(FileManager.default.fileExists(atPath: partial))
            XCTAssertFalse(FileManager.default.fileExists(atPath: path))
            XCTAssertThrowsError(try muxer.finish())
        }
    }

    func testEncryptedTrackIsRefused() throws {
        let muxer = try MP4Muxer(path: tempPath("enc.mp4"))
        var track = Track(index: 0, id: 1, parameters: CodecParameters(mediaType: .video, codec: "h264", codecTag: "encv"),
                          timeBase: Rational(1, 90000), duration: 0)
        track.isEncrypted = true
        XCTAssertThrowsError(try muxer.addTrack(from: track)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
            XCTAssertTrue("\(error)".contains("unsupported: encrypted"), "\(error)")
        }
        muxer.cancel()
    }

    func testDtsGoingBackIsAnError() throws {
        let muxer = try MP4Muxer(path: tempPath("back.mp4"))
        let t = try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "opus", extradata: opusHead, sampleRate: 48000, channels: 2),
                                   timeBase: Rational(1, 48000))
        try muxer.write(Packet(trackIndex: t, pts: 960, dts: 960, duration: 960, isKeyframe: true, data: [1], timeBase: Rational(1, 48000)))
        XCTAssertThrowsError(try muxer.write(Packet(trackIndex: t, pts: 0, dts: 0, duration: 960, isKeyframe: true, data: [1], timeBase: Rational(1, 48000))))
    }

    /// Chunk offsets past 4 GiB switch the table to co64.
    func testCo64PastFourGiB() throws {
        var t = MuxTrack(parameters: CodecParameters(mediaType: .audio, codec: "opus"), sampleEntry: [], handler: "soun", id: 1,
                         timeScale: 48000, tickMultiplier: 1, language: "und", matrix: MovieWriter.identity, sourceEdits: nil,
                         sourceMovieTimeScale: 0, width: 0, height: 0)
        t.sizes = [10, 10]
        t.stts = [(2, 960)]
        t.chunks = [(100, 1), (UInt64(UInt32.max) + 100, 1)]
        var w = BoxWriter()
        try MovieWriter.stbl(&w, t, fragmented: false, chunkShift: 0)
        let bytes = w.bytes
        XCTAssertNotNil(bytes.indices.first { i in i + 4 <= bytes.count && Array(bytes[i..<i + 4]) == Array("co64".utf8) })
        t.chunks = [(100, 2)]
        var w2 = BoxWriter()
        try MovieWriter.stbl(&w2, t, fragmented: false, chunkShift: 0)
        XCTAssertNotNil(w2.bytes.indices.first { i in i + 4 <= w2.bytes.count && Array(w2.bytes[i..<i + 4]) == Array("stco".utf8) })
    }

    /// Decode times that start below 0 without an edit list (Matroska H.264 with B-frames, an
    /// encoder's output) in a progressive file: the tables keep pts - dts (ctts version 0) and
    /// the edit list starts the media at the source's time 0, or after an empty edit at the
    /// first frame's time, as FFmpeg's mov muxer writes it (movenc.c mov_write_edts_tag):
    /// decode time d of the source is media time d - first dts; media time m is presented at
    /// m + first dts.
    func testEarlyDecodeTimesGetAnEditInsteadOfNegativeOffsets() throws {
        // pts - dts per frame (I P B B ...) in frames of 960 ticks, dts from -2 frames; the
        // presentation starts at 0 or 3 frames.
        let offsets: [Int64] = [2, 4, 1, 1, 4, 1, 1, 2]
        let tick: Int64 = 960
        for start: Int64 in [0, 3] {
            let path = tempPath("early.mp4")
            let muxer = try MP4Muxer(path: path)
            let t = try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "opus", extradata: opusHead, sampleRate: 48000, channels: 2),
                                       timeBase: Rational(1, 48000))
            for (i, o) in offsets.enumerated() {
                let dts = (Int64(i) - 2) * tick
                try muxer.write(Packet(trackIndex: t, pts: dts + (o + start) * tick, dts: dts, duration: tick, isKeyframe: true,
                                       data: [UInt8(i)], timeBase: Rational(1, 48000)))
            }
            try muxer.finish()
            let d = try MP4Demuxer(path: path)
            let edits = d.tracks[0].editList
            if start > 0 {
                XCTAssertEqual(edits.count, 2)
                XCTAssertEqual(edits.first?.mediaTime, -1)
                XCTAssertEqual(edits.first?.segmentDuration, start * tick * d.tracks[0].movieTimeScale / 48000, "empty edit until the first frame")
            } else {
                XCTAssertEqual(edits.count, 1)
            }
            // The media time of the earliest frame: its pts less the first dts (-2 frames).
            XCTAssertEqual(edits.last?.mediaTime, (start + 2) * tick)
            var got: [(Int64, Int64)] = []
            while let p = try d.read() { got.append((p.dts, p.pts)) }
            XCTAssertEqual(got.map { $0.1 - $0.0 }, offsets.map { ($0 + start) * tick }, "ctts keeps pts - dts")
            XCTAssertEqual(got.first?.0, 0, "media decode times start at 0")
        }
    }

    /// Fragments store composition offsets that go below zero as non-negative offsets (trun
    /// version 0) plus an edit list at the shifted media time when the timestamps are announced,
    /// signed (trun version 1) when they are not; both read back with the same timestamps.
    func testAnnouncedNegativeOffsetsAreShiftedInFragments() throws {
        let deltas: [Int64] = [0, 960, -960, 960, -960, 960, -960, 0]
        let timestamps = deltas.enumerated().map { (pts: Int64($0.offset * 960) + $0.element, dts: Int64($0.offset * 960)) }
        var readBack: [[Int64]] = []
        for announce in [false, true] {
            let path = tempPath("neg.mp4")
            let muxer = try MP4Muxer(path: path, options: .init(layout: .fragmented(seconds: 1)))
            let t = try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "opus", extradata: opusHead, sampleRate: 48000, channels: 2),
                                       timeBase: Rational(1, 48000))
            if announce { try muxer.announceTimestamps(track: t, timestamps) }
            for (i, ts) in timestamps.enumerated() {
                try muxer.write(Packet(trackIndex: t, pts: ts.pts, dts: ts.dts, duration: 960, isKeyframe: true,
                                       data: [UInt8(i)], timeBase: Rational(1, 48000)))
            }
            XCTAssertThrowsError(try muxer.announceTimestamps(track: t, timestamps), "after the first write")
            try muxer.finish()
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            func body(_ type: String) -> ArraySlice<UInt8>? {
                guard let i = bytes.indices.first(where: { $0 >= 4 && $0 + 4 <= bytes.count && Array(bytes[$0..<$0 + 4]) == Array(type.utf8) }) else { return nil }
                return bytes[(i + 4)...]
            }
            let trun = try XCTUnwrap(body("trun"))
            XCTAssertEqual(trun.first, announce ? 0 : 1, "trun version")
            if announce {
                // elst version 0, one entry: duration 0, media time 960.
                let elst = try XCTUnwrap(body("elst"))
                XCTAssertEqual(Array(elst.dropFirst(8).prefix(8)), [0, 0, 0, 0, 0, 0, 0x03, 0xC0])
            } else {
                XCTAssertNil(body("elst"))
            }
            let d = try MP4Demuxer(path: path)
            var got: [Int64] = []
            while let p = try d.read() { got.append(p.pts - p.dts) }
            readBack.append(got)
        }
        XCTAssertEqual(readBack[0], readBack[1])
        XCTAssertEqual(readBack[1], deltas.map { $0 + 960 })
    }

    /// Uncompressed audio written from packets (sowt entry generated): every layout reads back
    /// as the same packets, although the sample tables count PCM frames, because a packet that
    /// is not a multiple of 1024 frames ends its chunk. From sample tables a reader cuts a
    /// packet of more than 1024 frames into 1024-frame ones (as FFmpeg); a fragment's trun
    /// lists the packets as written.
    func testUncompressedAudioRoundTripEveryLayout() throws {
        let frames = [1024, 1024, 500, 1024, 1000, 1024, 2048, 300, 1024]
        let layouts: [MP4Muxer.Layout] = [.progressive, .fastStart, .fragmented(seconds: 0.01), .hybrid(seconds: 0.01)]
        for layout in layouts {
            let path = tempPath("pcm.mov")
            let muxer = try MP4Muxer(path: path, options: .init(layout: layout))
            let p = CodecParameters(mediaType: .audio, codec: "pcm_s16le", sampleRate: 48000, channels: 2)
            let t = try muxer.addTrack(p, timeBase: Rational(1, 48000))
            var dts: Int64 = 0
            var expected: [(dts: Int64, duration: Int64, data: [UInt8])] = []
            for (i, n) in frames.enumerated() {
                let data = [UInt8](repeating: UInt8(i), count: n * 4)
                try muxer.write(Packet(trackIndex: t, pts: dts, dts: dts, duration: Int64(n), isKeyframe: true, data: data, timeBase: Rational(1, 48000)))
                var left = n, at = 0
                while left > 0 {
                    let k = layout == .fragmented(seconds: 0.01) ? n : min(1024, left)
                    expected.append((dts + Int64(at), Int64(k), Array(data[(at * 4)..<((at + k) * 4)])))
                    left -= k; at += k
                }
                dts += Int64(n)
            }
            try muxer.finish()
            let d = try MP4Demuxer(path: path)
            XCTAssertEqual(d.tracks[0].parameters.codec, "pcm_s16le", "\(layout)")
            XCTAssertEqual(d.tracks[0].parameters.codecTag, "sowt", "\(layout)")
            XCTAssertEqual(d.tracks[0].sampleCount, expected.count, "\(layout): one index entry per packet")
            var got: [(dts: Int64, duration: Int64, data: [UInt8])] = []
            while let packet = try d.read() { got.append((packet.dts, packet.duration, packet.data)) }
            XCTAssertEqual(got.map(\.dts), expected.map(\.dts), "\(layout)")
            XCTAssertEqual(got.map(\.duration), expected.map(\.duration), "\(layout)")
            XCTAssertTrue(got.map(\.data) == expected.map(\.data), "\(layout): packet data differ")
        }
    }

    /// A duration the packet states is kept, 0 included (the last sample of a track, which no
    /// next decode time measures); an unknown one (a streaming caller's 0) is the previous
    /// sample's. Every layout; read back as the file states it.
    func testStatedZeroDurationIsKeptUnknownIsDerived() throws {
        let layouts: [MP4Muxer.Layout] = [.progressive, .fastStart, .fragmented(seconds: 0.2), .hybrid(seconds: 0.2)]
        for layout in layouts {
            for stated in [true, false] {
                let path = tempPath("zero.mp4")
                let muxer = try MP4Muxer(path: path, options: .init(layout: layout))
                let p = CodecParameters(mediaType: .audio, codec: "opus", extradata: opusHead, sampleRate: 48000, channels: 2)
                let t = try muxer.addTrack(p, timeBase: Rational(1, 48000))
                for i in 0..<20 {
                    let last = i == 19
                    let packet = stated
                        ? Packet(trackIndex: t, pts: Int64(i * 960), dts: Int64(i * 960), statedDuration: last ? 0 : 960,
                                 isKeyframe: true, data: [UInt8(i)], timeBase: Rational(1, 48000))
                        : Packet(trackIndex: t, pts: Int64(i * 960), dts: Int64(i * 960), duration: 0,
                                 isKeyframe: true, data: [UInt8(i)], timeBase: Rational(1, 48000))
                    XCTAssertEqual(packet.statedDuration, stated ? (last ? 0 : 960) : nil)
                    try muxer.write(packet)
                }
                try muxer.finish()
                let d = try MP4Demuxer(path: path)
                var durations: [Int64?] = []
                while let packet = try d.read() { durations.append(packet.statedDuration) }
                let lastDuration: Int64 = stated ? 0 : 960
                XCTAssertEqual(durations, Array(repeating: 960, count: 19) + [lastDuration], "\(layout), stated: \(stated)")
                if layout != .fragmented(seconds: 0.2) {
                    XCTAssertEqual(d.tracks[0].duration, 19 * 960 + lastDuration, "\(layout), stated: \(stated): mdhd")
                }
            }
        }
    }

    /// A packet that is not a whole number of PCM frames is refused, naming the frame size.
    func testUncompressedAudioPartialFrameIsAnError() throws {
        let muxer = try MP4Muxer(path: tempPath("partial.mov"))
        let t = try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "pcm_s24le", sampleRate: 44100, channels: 2),
                                   timeBase: Rational(1, 44100))
        XCTAssertThrowsError(try muxer.write(Packet(trackIndex: t, pts: 0, dts: 0, duration: 1, isKeyframe: true,
                                                    data: [UInt8](repeating: 0, count: 7), timeBase: Rational(1, 44100)))) { e in
            XCTAssertTrue("\(e)".contains("6-byte PCM frames"), "\(e)")
        }
        muxer.cancel()
    }
}
