import Foundation
import Synchronization
import XCTest
@testable import MediaKit

/// Every writer handed values a caller or a damaged source can give (issue 28): negative and
/// huge durations, timestamps beyond 32 bits and beyond 64-bit sums, dts going backwards, no
/// timestamps, empty packets, edit lists longer than the media or negative, absurd trims and
/// time bases. Each run must end in a ``MediaError`` with a message or in a file that ffprobe
/// reads (the oracle); a trap ends the test process.
final class MuxerHostileValuesTests: XCTestCase {
    private var dir: URL!

    override func setUpWithError() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-hostile-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeAllItems(at: dir)
    }

    /// Packets of track 0 at the given dts (pts = dts), each of `size` bytes, with `duration` on every one.
    private static func packets(_ dts: [Int64], size: Int = 200, duration: Int64? = nil, track: Int = 0) -> [MuxScript.Step] {
        dts.map { .packet(MuxScript.PacketSpec(track: track, size: size, pts: $0, dts: $0, duration: duration)) }
    }

    /// The hostile runs for one target, by name.
    private static func cases(_ target: MuxScript.Target) -> [(String, MuxScript)] {
        let codec = target.codecs[0]
        let second = target.codecs.count > 1 ? target.codecs[1] : codec
        let one = [MuxScript.TrackSpec(codec: codec)]
        func script(_ tracks: [MuxScript.TrackSpec], _ steps: [MuxScript.Step]) -> MuxScript {
            MuxScript(target: target, tracks: tracks, steps: steps)
        }
        func script(_ steps: [MuxScript.Step]) -> MuxScript { script(one, steps) }
        // Packets of the codec's frame size where it has one (MP3: 417 bytes at 128 kb/s).
        func packets(_ dts: [Int64], size: Int? = nil, duration: Int64? = nil, track: Int = 0) -> [MuxScript.Step] {
            Self.packets(dts, size: size ?? (codec == .mp3 ? 417 : 200), duration: duration, track: track)
        }
        let step = Int64(codec == .opus ? 960 : codec == .vp9 ? 40 : 1152)
        let normal = (0..<4).map { Int64($0) * step }
        var out: [(String, MuxScript)] = [
            ("a negative duration", script(packets(normal, duration: -5000))),
            ("a duration of Int64.max", script(packets(normal, duration: .max))),
            ("a duration beyond 32 bits", script(packets(normal, duration: 1 << 33))),
            ("timestamps beyond 32 bits", script(packets(normal.map { $0 + (1 << 33) }))),
            ("timestamps near Int64.max", script(packets(normal.map { Int64.max - 10_000 + $0 }))),
            ("timestamps near Int64.min", script(packets(normal.map { Int64.min + 1 + $0 }))),
            ("a gap beyond 32 bits", script(packets([0, 1 << 40, (1 << 40) + step]))),
            ("dts going backwards", script(packets([0, 2 * step, step, 3 * step]))),
            ("equal dts", script(packets([0, 0, 0]))),
            ("no timestamps", script(packets([Packet.noTimestamp, Packet.noTimestamp]))),
            ("empty packets", script(packets(normal, size: 0))),
            ("pts far from dts", script([.packet(MuxScript.PacketSpec(track: 0, size: 100, pts: 1 << 40, dts: 0)),
                                         .packet(MuxScript.PacketSpec(track: 0, size: 100, pts: -(1 << 40), dts: step))])),
            ("an unknown track", script([.packet(MuxScript.PacketSpec(track: 3, size: 10, pts: 0, dts: 0))])),
            ("a time base of 0/0", script([MuxScript.TrackSpec(codec: codec, timeBase: Rational(0, 0))], packets(normal))),
            ("a negative time base", script([MuxScript.TrackSpec(codec: codec, timeBase: Rational(-1, 1000))], packets(normal))),
            ("a time base of Int64.max/1", script([MuxScript.TrackSpec(codec: codec, timeBase: Rational(.max, 1))], packets(normal))),
            ("a time base of 1/Int64.max", script([MuxScript.TrackSpec(codec: codec, timeBase: Rational(1, .max))], packets(normal))),
            ("an end trim of Int.max", script([.packet(MuxScript.PacketSpec(track: 0, size: 100, pts: 0, dts: 0, trimEnd: .max))])),
            ("a negative start trim", script([.packet(MuxScript.PacketSpec(track: 0, size: 100, pts: 0, dts: 0, trimStart: -5))])),
            ("an edit longer than the media", script([MuxScript.TrackSpec(codec: codec, edits: [EditListEntry(segmentDuration: 1 << 40, mediaTime: 0, mediaRate: 1)],
                                                                          movieTimeScale: 1000)], packets(normal))),
            ("an edit starting past the media", script([MuxScript.TrackSpec(codec: codec, edits: [EditListEntry(segmentDuration: 0, mediaTime: 1 << 35, mediaRate: 1)],
                                                                            movieTimeScale: 1000)], packets(normal))),
            ("a negative edit", script([MuxScript.TrackSpec(codec: codec, edits: [EditListEntry(segmentDuration: -300, mediaTime: 1105, mediaRate: 1)],
                                                             movieTimeScale: 44100)], packets(normal))),
            ("an edit of media time -7", script([MuxScript.TrackSpec(codec: codec, edits: [EditListEntry(segmentDuration: 10, mediaTime: -7, mediaRate: 1)],
                                                                     movieTimeScale: 1000)], packets(normal))),
            ("an edit of rate NaN", script([MuxScript.TrackSpec(codec: codec, edits: [EditListEntry(segmentDuration: 10, mediaTime: 0, mediaRate: .nan)],
                                                                movieTimeScale: 1000)], packets(normal))),
            ("an edit of Int64.max in a finer movie time scale",
             script([MuxScript.TrackSpec(codec: codec, edits: [EditListEntry(segmentDuration: .max, mediaTime: 0, mediaRate: 1)], movieTimeScale: 1)], packets(normal))),
            ("replaced edits longer than the media", script(packets(normal) + [.replaceEdits(track: 0, edits: [EditListEntry(segmentDuration: 1 << 34, mediaTime: 5, mediaRate: 1)],
                                                                                                    movieTimeScale: 1000)])),
            ("replaced negative edits", script(packets(normal) + [.replaceEdits(track: 0, edits: [EditListEntry(segmentDuration: -(1 << 40), mediaTime: .min, mediaRate: 1)],
                                                                                            movieTimeScale: -3)])),
            ("a source duration of Int64.max", script([MuxScript.TrackSpec(codec: codec, duration: .max, trimsOnPackets: true)], packets(normal))),
            ("no packet", script([MuxScript.TrackSpec(codec: codec), MuxScript.TrackSpec(codec: second)], [])),
            ("two tracks, one going backwards", script([MuxScript.TrackSpec(codec: codec), MuxScript.TrackSpec(codec: second)],
                                                       packets(normal) + packets([5 * step, step], track: 1))),
        ]
        if target.isMP4 {
            var s = script(packets(normal))
            s.movieTimeScale = .max
            out.append(("a movie time scale of Int64.max", s))
            for (name, value) in [("NaN", Double.nan), ("infinite", Double.infinity), ("1e300", 1e300), ("negative", -1)] {
                var chunk = script(packets(normal))
                chunk.chunkSeconds = value
                out.append(("a chunk duration \(name)", chunk))
                var fragment = script(packets(normal))
                fragment.fragmentSeconds = value
                out.append(("a fragment duration \(name)", fragment))
            }
            for bytes in [-1, Int.max, 1 << 40] {
                var reserved = script(packets(normal))
                reserved.reservedMoovBytes = bytes
                out.append(("\(bytes) bytes reserved for the moov", reserved))
            }
            var announced = script([.announce(track: 0)] + [.packet(MuxScript.PacketSpec(track: 0, size: 10, pts: .min + 5, dts: .max - 5))])
            announced.movieTimeScale = 1000
            out.append(("announced timestamps at the extremes", announced))
        }
        if target == .mp3 {
            var s = script(packets(normal))
            s.inputSamples = -1
            out.append(("a negative sample count", s))
            s.inputSamples = 1000
            s.encoderDelay = .min
            out.append(("an encoder delay of Int.min", s))
        }
        return out
    }

    func testEveryWriterAnswersHostileValuesWithAnErrorOrAReadableFile() throws {
        try XCTSkipIf(!FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe") && ProcessInfo.processInfo.environment["CI"] == nil,
                      "ffprobe is not installed")
        // Every (writer, case) at once, two at a time: most of a case's time is ffprobe's start.
        let runs = MuxScript.Target.allCases.flatMap { target in Self.cases(target).map { (target, $0.0, $0.1) } }
        let outcomes = Mutex<(files: Int, errors: Int, failures: [String])>((0, 0, []))
        let dir = self.dir!
        DispatchQueue.concurrentPerform(iterations: runs.count) { i in
            let (target, name, script) = runs[i]
            // A folder per case: the HLS writers put their segments beside the playlist.
            let folder = dir.appendingPathComponent("\(i)")
            try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let path = folder.appendingPathComponent("\(target).\(target.fileExtension)").path
            var failures: [String] = []
            let wrote: Bool
            switch script.run(path: path) {
            case .error(let e):
                wrote = false
                if e.message.isEmpty { failures.append("\(target), \(name): an error without a message") }
                if FileManager.default.fileExists(atPath: path) { failures.append("\(target), \(name): \(e) but the file exists") }
            case .file:
                wrote = true
                if let problem = script.ffprobeProblem(path: path) {
                    failures.append("\(target), \(name): ffprobe does not read the file: \(problem)")
                }
            }
            outcomes.withLock {
                if wrote { $0.files += 1 } else { $0.errors += 1 }
                $0.failures += failures
            }
        }
        let (files, errors, failures) = outcomes.withLock { $0 }
        for failure in failures { XCTFail(failure) }
        // Both outcomes occur: the values a format holds are written, the others refused.
        XCTAssertGreaterThan(files, 20)
        XCTAssertGreaterThan(errors, 20)
    }

    /// The WAV writer (PCMWriter) with rates and channel counts its header cannot hold: an error
    /// naming them (UInt32(rate) trapped on a negative rate), never a trap; a normal header reads.
    func testPCMWriterRefusesWhatAWAVHeaderCannotHold() throws {
        for (rate, channels) in [(-1, 2), (Int.max, 2), (48000, 70000), (Int(UInt32.max), 2), (Int.max / 2, 0)] {
            let path = dir.appendingPathComponent("bad-\(rate)-\(channels).wav").path
            XCTAssertThrowsError(try PCMWriter(path: path, sampleType: .s16, sampleRate: rate, channels: channels, wav: true), "\(rate) Hz, \(channels) channels") { e in
                XCTAssertTrue((e as? MediaError)?.message.contains("\(rate) Hz") ?? false, "\(e)")
            }
        }
        let path = dir.appendingPathComponent("good.wav").path
        let w = try PCMWriter(path: path, sampleType: .s16, sampleRate: 48000, channels: 2, wav: true)
        try w.finish()
        let script = MuxScript(target: .flac, tracks: [MuxScript.TrackSpec(codec: .pcm)], steps: [])
        XCTAssertNil(script.ffprobeProblem(path: path))
    }

    /// The seeds of the `mux` fuzz target (Tests/fuzz/seeds/mux: one well-formed script per
    /// writer and codec pair) read as the fuzzer reads them and each write a file ffprobe reads:
    /// the fuzzer starts from runs that reach the end of every writer, not from early errors.
    func testMuxFuzzSeedsWriteFilesThatFFprobeReads() throws {
        try XCTSkipIf(!FileManager.default.isExecutableFile(atPath: "/usr/bin/ffprobe") && ProcessInfo.processInfo.environment["CI"] == nil,
                      "ffprobe is not installed")
        let seeds = FuzzRegressionTests.directory.deletingLastPathComponent().appendingPathComponent("seeds/mux")
        let names = try FileManager.default.contentsOfDirectory(atPath: seeds.path).sorted()
        var targets = Set<MuxScript.Target>()
        for name in names {
            let script = MuxScript(fuzz: try [UInt8](Data(contentsOf: seeds.appendingPathComponent(name))))
            targets.insert(script.target)
            let path = dir.appendingPathComponent("\(name).\(script.target.fileExtension)").path
            switch script.run(path: path) {
            case .error(let e): XCTFail("\(name): \(e)")
            case .file: XCTAssertNil(script.ffprobeProblem(path: path), name)
            }
        }
        XCTAssertEqual(targets, Set(MuxScript.Target.allCases))
    }

    /// The ISSUE 28 trap: an MP3 whose LAME delay + padding exceed its samples (a LAME encode of
    /// a very short sound) remuxed to MP4 made a negative edit duration that `UInt32(...)`
    /// trapped on. The remux now writes FFmpeg's edit (from the delay to the end of the media):
    /// ffprobe reads the file, and its elst equals the one `ffmpeg -c copy` writes.
    func testShortMP3WhosePaddingExceedsItsSamplesRemuxesToMP4() throws {
        try XCTSkipIf(!FileManager.default.isExecutableFile(atPath: "/usr/bin/ffmpeg") && ProcessInfo.processInfo.environment["CI"] == nil,
                      "ffmpeg is not installed")
        let mp3 = dir.appendingPathComponent("short.mp3").path
        try Self.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=0.02:sample_rate=24000", "-c:a", "libmp3lame", "-q:a", "9", mp3])
        // LAME's tag: delay 576, padding 1452 (FFmpeg's encoder writes the exact padding; a LAME
        // encoder of a sound this short writes more): 576 + 1452 > 3 frames x 576 samples.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: mp3)))
        // The LAME tag follows the Info fields its flags announce (frames, bytes, TOC, quality).
        let info = try XCTUnwrap(bytes.indices.first { bytes[$0...].starts(with: Array("Xing".utf8)) || bytes[$0...].starts(with: Array("Info".utf8)) })
        let flags = Int(bytes[info + 7])
        let tag = info + 8 + 4 * (flags & 1) + 4 * (flags >> 1 & 1) + 100 * (flags >> 2 & 1) + 4 * (flags >> 3 & 1)
        XCTAssertTrue(bytes[tag...].starts(with: Array("Lavc".utf8)) || bytes[tag...].starts(with: Array("LAME".utf8)), "no LAME tag after the Info fields")
        let pair = 576 << 12 | 1452
        bytes[tag + 21] = UInt8(pair >> 16); bytes[tag + 22] = UInt8((pair >> 8) & 0xFF); bytes[tag + 23] = UInt8(pair & 0xFF)
        try Data(bytes).write(to: URL(fileURLWithPath: mp3))
        let track = try XCTUnwrap(AudioStreamDemuxer(source: FileSource(path: mp3)).tracks.first)
        XCTAssertGreaterThan(track.encoderDelay + track.encoderPadding, Int(track.duration), "the file must have more delay and padding than samples")

        let ours = dir.appendingPathComponent("ours.mp4").path, theirs = dir.appendingPathComponent("ffmpeg.mp4").path
        try Remuxer.remux(input: mp3, output: ours)
        try Self.run("/usr/bin/ffmpeg", ["-v", "error", "-y", "-i", mp3, "-c", "copy", theirs])
        let probe = MuxScript(target: .mp4, tracks: [MuxScript.TrackSpec(codec: .mp3)], steps: [])
        XCTAssertNil(probe.ffprobeProblem(path: ours))
        // The edit in the track's time scale (ours) against FFmpeg's in its movie time scale (1000).
        let edits = try XCTUnwrap(MP4Demuxer(path: ours).tracks.first?.editList)
        let reference = try XCTUnwrap(MP4Demuxer(path: theirs).tracks.first?.editList)
        XCTAssertEqual(edits.map(\.mediaTime), reference.map(\.mediaTime))
        XCTAssertEqual(edits.count, 1)
        XCTAssertEqual(Double(edits[0].segmentDuration) / Double(track.timeBase.denominator),
                       Double(reference[0].segmentDuration) / 1000, accuracy: 0.001)
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = arguments
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw MediaError(.io, "\(tool) \(arguments.joined(separator: " ")) failed") }
    }
}

private extension FileManager {
    func removeAllItems(at url: URL) throws { try removeItem(at: url) }
}
