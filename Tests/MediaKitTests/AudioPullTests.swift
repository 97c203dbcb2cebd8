import Foundation
@testable import MediaKit
import XCTest

/// Issue 35, item 5: the pull model with "no data now" (an AudioConverterComplexInputDataProc
/// returning an error and zero packets). The oracle is the same input fed another way: the
/// output of a pull that is interrupted equals the output of one push of the whole input.
final class AudioPullTests: XCTestCase {
    /// `n` frames of deterministic noise in `format` (f32 interleaved made, then converted).
    func noise(_ format: AudioFormat, frames n: Int, seed: UInt64) throws -> AudioBuffer {
        var s = seed
        var floats = [Float](repeating: 0, count: n * format.channels)
        for i in floats.indices {
            s = s &* 6364136223846793005 &+ 1442695040888963407
            floats[i] = Float(Double(Int64(bitPattern: s) >> 11) / Double(1 << 52)) * 0.9
        }
        let f32 = AudioFormat(.f32, sampleRate: format.sampleRate, layout: format.layout)
        let bytes = floats.withUnsafeBytes { Array($0) }
        let b = try AudioBuffer(format: f32, frames: n, planes: [bytes])
        return f32 == format ? b : try AudioConverter(from: f32, to: format).convert(b)
    }

    func slice(_ b: AudioBuffer, _ from: Int, _ count: Int) throws -> AudioBuffer {
        let bpf = b.format.bytesPerFrame
        return try AudioBuffer(format: b.format, frames: count, planes: b.planes.map { Array($0[(from * bpf)..<((from + count) * bpf)]) })
    }

    func testPullWithNoDataNowEqualsOnePush() throws {
        let src = AudioFormat(.s16, sampleRate: 44100, layout: .stereo)
        let dst = AudioFormat(.f32, planar: true, sampleRate: 48000, layout: .stereo)
        let input = try noise(src, frames: 9000, seed: 7)
        let reference = try AudioConverter(from: src, to: dst)
        var expected = try reference.convert(input)
        expected.append(reference.flush())
        XCTAssertEqual(expected.frames, reference.outputFrames(forInputFrames: 9000))

        let conv = try AudioConverter(from: src, to: dst)
        var got = AudioBuffer(empty: dst)
        var pos = 0, calls = 0, starved = 0, short = 0, ended = false
        while true {
            let b = try conv.fill(frames: 1000, pull: { want in
                calls += 1
                if calls % 3 != 0 { return .noDataNow }       // no data two calls in three
                let k = min(want, 700, input.frames - pos)
                if k == 0 { ended = true; return .endOfStream }
                defer { pos += k }
                return .data(try slice(input, pos, k))
            })
            got.append(b)
            if ended && b.frames == 0 { break }
            if b.frames < 1000 && !ended { starved += 1; short += b.frames }   // no data now: what it had
        }
        XCTAssertGreaterThan(starved, 10, "the source said 'no data now' and the fill never returned early")
        XCTAssertGreaterThan(short, 0, "no fill returned frames it had before the source ran dry")
        XCTAssertEqual(got.frames, expected.frames)
        XCTAssertEqual(got.planes, expected.planes, "the interrupted pull differs from one push")
        XCTAssertEqual(conv.outputFrames, Int64(expected.frames))
        XCTAssertEqual(try conv.fill(frames: 10, pull: { _ in XCTFail("asked for input after the end"); return .noDataNow }).frames, 0)
    }

    func testAThrowingSourceLosesNoFrames() throws {
        let src = AudioFormat(.f32, sampleRate: 48000, layout: .mono)
        let dst = AudioFormat(.s16, sampleRate: 32000, layout: .mono)
        let input = try noise(src, frames: 6000, seed: 3)
        let reference = try AudioConverter(from: src, to: dst)
        var expected = try reference.convert(input)
        expected.append(reference.flush())

        struct Broken: Error {}
        let conv = try AudioConverter(from: src, to: dst)
        var got = AudioBuffer(empty: dst)
        var pos = 0, calls = 0, thrown = 0
        while true {
            do {
                let b = try conv.fill(frames: 2500, pull: { _ in
                    calls += 1
                    if calls % 4 == 0 { throw Broken() }
                    let k = min(900, input.frames - pos)
                    if k == 0 { return .endOfStream }
                    defer { pos += k }
                    return .data(try slice(input, pos, k))
                })
                got.append(b)
                if b.frames < 2500 { break }
            } catch is Broken {
                thrown += 1
            }
        }
        XCTAssertGreaterThan(thrown, 0)
        XCTAssertEqual(got.planes, expected.planes, "frames converted before the source threw were lost")
    }

    /// The first audio track of a real AAC file, decoded by pushing every packet then flushing,
    /// against the pull for packets with "no data now" every other call.
    func testPacketPullWithNoDataNowEqualsPushingThePackets() throws {
        let url = try SharedMedia.file("mp4_h264_aac_moov_at_start_ctts_8s.mp4")
        func open() throws -> (Demuxer, Track) {
            let d = try MediaRegistry.shared.makeDemuxer(path: url.path)
            return (d, try XCTUnwrap(d.tracks.first(where: { $0.mediaType == .audio }), "the file has no audio track"))
        }
        let request = AudioOutputRequest(.f32, sampleRate: 48000, layout: .mono)
        let (d1, t1) = try open()
        let pushed = try PacketAudioConverter(track: t1, to: request)
        var expected: AudioBuffer?
        func add(_ b: AudioBuffer, to acc: inout AudioBuffer?) { if acc == nil { acc = b } else { acc!.append(b) } }
        while let p = try d1.read(track: t1.index) { add(try pushed.convert(p), to: &expected) }
        add(try pushed.flush(), to: &expected)
        XCTAssertGreaterThan(expected?.frames ?? 0, 48000 * 7)

        let (d2, t2) = try open()
        let pulled = try PacketAudioConverter(track: t2, to: request)
        var got: AudioBuffer?
        var calls = 0, starved = 0, ended = false
        while true {
            let b = try pulled.fill(frames: 4096, pull: { _ in
                calls += 1
                if calls % 2 == 0 { starved += 1; return .noDataNow }
                guard let p = try d2.read(track: t2.index) else { ended = true; return .endOfStream }
                return .data([p])
            })
            add(b, to: &got)
            if ended && b.frames == 0 { break }
        }
        XCTAssertGreaterThan(starved, 10)
        XCTAssertEqual(got?.frames, expected?.frames)
        XCTAssertEqual(got?.planes, expected?.planes, "the interrupted packet pull differs from pushing the packets")
    }

    /// FLAC packets (lossless, deterministic) from PCM pushed at once against PCM pulled with
    /// "no data now" every other call: the same packets, bytes and times.
    func testEncodingPullWithNoDataNowEqualsOnePush() throws {
        let src = AudioFormat(.s16, sampleRate: 44100, layout: .stereo)
        let input = try noise(src, frames: 30000, seed: 11)
        let pushed = try AudioEncodingConverter(from: src, to: EncoderSettings(codec: "flac"))
        let expected = try pushed.encode(input) + pushed.finish()
        XCTAssertGreaterThan(expected.count, 5)

        let pulling = try AudioEncodingConverter(from: src, to: EncoderSettings(codec: "flac"))
        var got: [Packet] = []
        var pos = 0, calls = 0, starved = 0
        while true {
            let ps = try pulling.fill(packets: 2, pull: {
                calls += 1
                if calls % 2 == 0 { return .noDataNow }
                let k = min(1500, input.frames - pos)
                if k == 0 { return .endOfStream }
                defer { pos += k }
                return .data(try self.slice(input, pos, k))
            })
            got += ps
            if ps.count < 2 {
                if pulling.isFlushed && ps.isEmpty { break }
                starved += 1
            }
        }
        XCTAssertGreaterThan(starved, 3)
        XCTAssertEqual(got.map(\.data), expected.map(\.data), "the interrupted encoding pull gives other packets")
        XCTAssertEqual(got.map(\.pts), expected.map(\.pts))
        XCTAssertEqual(got.map(\.duration), expected.map(\.duration))
    }
}
