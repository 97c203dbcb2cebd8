import Foundation
import XCTest
@testable import MediaKit

/// AudioStreamParser: the same events and packets whatever the chunking (the oracle is the
/// same input fed another way: whole), and bad input never crashes or hangs. The packets
/// themselves are checked against ffprobe in Tests/oracle/test_audio_streams.py.
final class AudioStreamParserTests: XCTestCase {
    /// Everything the parser said, as comparable text: events in order, packets one per line.
    private func transcript(_ bytes: [UInt8], chunk: Int) -> [String] {
        let parser = AudioStreamParser(totalBytes: Int64(bytes.count))
        var lines: [String] = []
        func note(_ events: [AudioStreamParser.Event]) {
            for e in events {
                switch e {
                case .packets(let ps): lines += ps.map { "packet \($0.offset) \($0.data.count) \($0.frames) \($0.isTruncated)" }
                case .warning(let w): lines.append("warning \(w.kind) \(w.offset ?? -1)")
                case .tags(let t): lines.append("tags \(t.title ?? "") \(t.artist ?? "") \(t.frames.count) \(t.coverArt?.data.count ?? 0)")
                case .fileFormat(let f): lines.append("format \(f)")
                case .dataFormat(let f): lines.append("data \(f)")
                case .magicCookie(let c): lines.append("cookie \(c)")
                case .dataOffset(let o): lines.append("offset \(o)")
                case .audioDataByteCount(let n): lines.append("bytes \(n)")
                case .audioDataPacketCount(let n): lines.append("packets \(n)")
                case .bitRate(let r, let exact): lines.append("bitrate \(r) \(exact)")
                case .duration(let d, let estimated): lines.append("duration \(d) \(estimated)")
                case .encoderDelayAndPadding(let d, let p): lines.append("gapless \(d) \(p)")
                case .readyToProducePackets: lines.append("ready")
                }
            }
        }
        do {
            var i = 0
            while i < bytes.count {
                note(try parser.push(Array(bytes[i..<min(bytes.count, i + chunk)])))
                i += chunk
            }
            note(parser.finish())
        } catch {
            lines.append("error \(error)")
        }
        // Packets and tags arrive at different pushes for different chunkings; their order
        // among themselves is what must not change, so compare each kind in order.
        return lines.filter { $0.hasPrefix("packet") } + lines.filter { !$0.hasPrefix("packet") }
    }

    func testChunkingDoesNotChangeAnything() throws {
        let files = try SharedMedia.files(extensions: ["mp3", "aac"])
        XCTAssertFalse(files.isEmpty)
        for url in files {
            let bytes = try [UInt8](Data(contentsOf: url))
            let whole = transcript(bytes, chunk: max(1, bytes.count))
            for chunk in [4096, 7, 2] + (bytes.count <= 120_000 ? [1] : []) {
                let got = transcript(bytes, chunk: chunk)
                XCTAssertEqual(got, whole, "\(url.lastPathComponent) in chunks of \(chunk)")
            }
        }
    }

    /// AC-3, E-AC-3, DTS (core, DTS-HD MA, Express) and AMR: the fuzz seeds in the repository
    /// (a few frames each, cut inside a frame for some) give the same transcript byte by byte
    /// as whole; each is recognised as its codec.
    func testRawStreamsChunkingDoesNotChangeAnything() throws {
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("fuzz/seeds/rawaudio")
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        XCTAssertGreaterThanOrEqual(files.count, 8)
        for url in files {
            let bytes = try [UInt8](Data(contentsOf: url))
            let whole = transcript(bytes, chunk: bytes.count)
            let codec = ["ac3": "ac3", "eac3": "eac3", "dts": "dts", "amr": url.lastPathComponent.contains("wb") ? "amr_wb" : "amr_nb"][url.pathExtension]!
            let parser = AudioStreamParser()
            _ = try parser.push(bytes)
            _ = parser.finish()
            XCTAssertEqual(parser.dataFormat?.codec.rawValue, codec, url.lastPathComponent)
            for chunk in [1, 7, 4096] {
                XCTAssertEqual(transcript(bytes, chunk: chunk), whole, "\(url.lastPathComponent) in chunks of \(chunk)")
            }
        }
    }

    /// AMR storage frame sizes against RFC 4867 section 5.3 (a ToC byte, then the frame type's
    /// speech bits of 3GPP TS 26.101 table 1a / TS 26.201 table 2 padded to whole bytes).
    func testAMRFrameSizesAreTheRFCs() {
        let nbBits = [95, 103, 118, 134, 148, 159, 204, 244, 39]          // modes 0-7, SID
        let wbBits = [132, 177, 253, 285, 317, 365, 397, 461, 477, 40]   // modes 0-8, SID
        for (type, bits) in nbBits.enumerated() { XCTAssertEqual(RawAudioFrame.amrNBSizes[type], 1 + (bits + 7) / 8, "NB type \(type)") }
        for (type, bits) in wbBits.enumerated() { XCTAssertEqual(RawAudioFrame.amrWBSizes[type], 1 + (bits + 7) / 8, "WB type \(type)") }
        XCTAssertEqual(RawAudioFrame.amrNBSizes[15], 1)   // NO_DATA: the ToC byte alone
        XCTAssertEqual(RawAudioFrame.amrWBSizes[15], 1)
    }

    func testGarbageZeroBytesAndTagsOnly() throws {
        var random = SeededRandom(state: 42)
        let garbage = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        for input in [garbage, [], [0xFF, 0xFB], Array("ID3".utf8) + [4, 0, 0, 0, 0, 0x7F, 0x7F], Array(repeating: 0xFF, count: 5000)] {
            let parser = AudioStreamParser()
            var packets = 0
            for e in try parser.push(input) + parser.finish() { if case .packets(let p) = e { packets += p.count } }
            XCTAssertLessThanOrEqual(packets, 1, "no stream of frames in \(input.count) bytes of noise")
        }
        XCTAssertThrowsError(try AudioStreamParser().push(Array("ADIF".utf8) + [0, 0, 0, 0])) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
        }
    }

    func testHeaderTables() {
        // MPEG-1 Layer III 128 kbit/s 44.1 kHz, no padding: 417 bytes (ISO/IEC 11172-3 2.4.3.1).
        let h = MPEGAudioHeader(0xFF, 0xFB, 0x90, 0x64)!
        XCTAssertEqual([h.version, h.layer, h.sampleRate, h.bitRate, h.frameSize, h.samplesPerFrame], [1, 3, 44100, 128000, 417, 1152])
        // MPEG-2 Layer III 32 kbit/s 22.05 kHz mono: 72 * 32000 / 22050 = 104 bytes, 576 samples.
        let m2 = MPEGAudioHeader(0xFF, 0xF3, 0x40, 0xC4)!
        XCTAssertEqual([m2.version, m2.sampleRate, m2.bitRate, m2.frameSize, m2.samplesPerFrame, m2.channels], [2, 22050, 32000, 104, 576, 1])
        XCTAssertNil(MPEGAudioHeader(0xFF, 0xFB, 0xF0, 0x64))   // bit rate index 15
        XCTAssertNil(MPEGAudioHeader(0xFF, 0xEB, 0x90, 0x64))   // reserved version
        // ADTS LC 44.1 kHz stereo, 371 bytes, no CRC.
        let a = ADTSHeader([0xFF, 0xF1, 0x50, 0x80, 0x2E, 0x7F, 0xFC])!
        XCTAssertEqual([a.objectType, a.sampleRate, a.channels, a.frameLength, a.headerSize], [2, 44100, 2, 371, 7])
        XCTAssertEqual(a.audioSpecificConfig, [0x12, 0x10])
    }

    // MARK: - Seek

    /// Runs ffmpeg (the files the seek checks need are made by it, as the oracle suite makes them).
    private func ffmpeg(_ args: [String], output: String) throws -> [UInt8] {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-seek-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let out = dir.appendingPathComponent(output)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ffmpeg", "-v", "error", "-nostdin", "-y"] + args + [out.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw MediaError(.io, "ffmpeg \(args.joined(separator: " ")) exited \(process.terminationStatus)")
        }
        defer { try? FileManager.default.removeItem(at: out) }
        return try [UInt8](Data(contentsOf: out))
    }

    private func packets(_ events: [AudioStreamParser.Event]) -> [AudioStreamParser.Packet] {
        events.flatMap { e -> [AudioStreamParser.Packet] in if case .packets(let p) = e { return p }; return [] }
    }

    /// Seek to 30.0 s in 10-minute files: CBR exact (the packet whose samples hold 30.0 s by a
    /// full parse's cumulative frames, at its offset); VBR with a Xing table estimated, landing
    /// within 1% of the duration of that packet; from the offset on, parsing gives the full
    /// parse's packets. (The oracle suite checks the same through mk-stream against ffprobe.)
    func testSeekTo30SecondsInTenMinuteFiles() throws {
        let files: [(String, [String])] = [
            ("cbr", ["-f", "lavfi", "-i", "sine=frequency=440:duration=600:sample_rate=44100", "-c:a", "libmp3lame", "-b:a", "128k"]),
            ("vbr", ["-f", "lavfi", "-i", "anoisesrc=d=600:c=pink:a=0.3:r=44100", "-af", "volume='0.05+0.95*abs(sin(t/7))':eval=frame",
                     "-c:a", "libmp3lame", "-q:a", "4"]),
        ]
        for (kind, args) in files {
            let bytes = try ffmpeg(args, output: "\(kind).mp3")
            XCTAssertEqual(Array(bytes.prefix(3)), Array("ID3".utf8), "ffmpeg writes an ID3v2 tag in front")
            let full = AudioStreamParser(totalBytes: Int64(bytes.count))
            let all = packets(try full.push(bytes) + full.finish())
            let rate = full.dataFormat!.sampleRate
            var samples = 0, holder = -1
            for (i, p) in all.enumerated() {
                if samples + p.frames > 30 * rate { holder = i; break }
                samples += p.frames
            }
            XCTAssertGreaterThan(holder, 0)

            // What a player has before seeking: the start of the stream (format, VBR header, 64 KiB of frames).
            let parser = AudioStreamParser(totalBytes: Int64(bytes.count))
            var read = 0
            while parser.dataOffset == nil || Int64(read) < parser.dataOffset! + (64 << 10) {
                _ = try parser.push(Array(bytes[read..<min(bytes.count, read + 4096)]))
                read += 4096
            }
            let target = try XCTUnwrap(parser.seek(to: 30.0))
            XCTAssertEqual(target.packet, Int64(holder), kind)
            var after: [AudioStreamParser.Packet] = []
            var at = Int(target.offset), first = true
            while at < bytes.count {
                after += packets(try parser.push(Array(bytes[at..<min(bytes.count, at + 4096)]), discontinuity: first))
                first = false
                at += 4096
            }
            after += packets(parser.finish())
            let landed = try XCTUnwrap(all.firstIndex { $0.offset == after.first?.offset }, "\(kind): the first packet after the seek is a full parse's")
            XCTAssertEqual(after, Array(all[landed...]), "\(kind): from the seek on, the packets of a full parse")
            XCTAssertEqual(landed, all.firstIndex { $0.offset >= target.offset }, "\(kind): resynchronised at the next frame")
            if kind == "cbr" {
                XCTAssertTrue(target.exact)
                XCTAssertEqual(target.offset, all[holder].offset)
            } else {
                XCTAssertFalse(target.exact)
                let duration = Double(all.reduce(0) { $0 + $1.frames }) / Double(rate)
                XCTAssertLessThanOrEqual(Double(abs(landed - holder) * 1152) / Double(rate), duration / 100,
                                         "estimated offset \(target.offset), true \(all[holder].offset)")
            }
            // A packet already parsed: exact, at its offset.
            let early = try XCTUnwrap(parser.seek(to: 1.0))
            XCTAssertTrue(early.exact)
            XCTAssertEqual(early.offset, all[Int(early.packet)].offset)
        }
    }

    /// The CBR seek's padding model against LAME's own padding rule (lame's bitstream.c
    /// getframebits / the slot_lag accumulator: `slot_lag -= frac; if slot_lag < 0 { slot_lag
    /// += rate; pad }`, starting at `slot_lag = frac`) for every Layer III bit rate at 44.1 and
    /// 48 kHz (MPEG-1) and 22.05 kHz (MPEG-2), and any starting phase: after 150 frames the
    /// predicted padding of frame n's offset always brackets the truth, and when it is one
    /// number (exact) it is the truth. A stream padded at random is not taken for CBR.
    func testCBRPaddingModelMatchesLAME() throws {
        var random = SeededRandom(state: 7)
        var exactCount = 0, total = 0
        for (version, rateIndex, rate) in [(1, 0, 44100), (1, 1, 48000), (2, 0, 22050)] {
            for bitIndex in 1...14 {
                let b1: UInt8 = version == 1 ? 0xFB : 0xF3
                func header(padding: Bool) -> MPEGAudioHeader {
                    MPEGAudioHeader(0xFF, b1, UInt8(bitIndex << 4 | rateIndex << 2 | (padding ? 2 : 0)), 0x64)!
                }
                let h = header(padding: false)
                let frac = (version == 1 ? 144 : 72) * h.bitRate % rate
                for start in [frac, 0, Int.random(in: 0..<rate, using: &random)] {
                    // LAME's accumulator, from `start`: padded frames in 0..<n for every n.
                    var lag = start, slots = [0]
                    for _ in 0..<40_000 {
                        lag -= frac
                        var pad = false
                        if frac != 0 && lag < 0 { lag += rate; pad = true }
                        slots.append(slots.last! + (pad ? 1 : 0))
                    }
                    var pattern = try XCTUnwrap(AudioStreamParser.CBRPattern(h))
                    for i in 0..<150 { XCTAssertTrue(pattern.add(header(padding: slots[i + 1] > slots[i]))) }
                    for n in stride(from: 150, to: 40_000, by: 37) {
                        let range = try XCTUnwrap(pattern.slots(before: Int64(n)))
                        XCTAssertTrue(range.contains(Int64(slots[n])), "\(h.bitRate) bit/s \(rate) Hz, frame \(n)")
                        total += 1
                        if range.lowerBound == range.upperBound { exactCount += 1 }
                    }
                }
            }
        }
        XCTAssertGreaterThan(Double(exactCount) / Double(total), 0.97, "most seeks resolve exactly after 150 frames")
        var pattern = AudioStreamParser.CBRPattern(MPEGAudioHeader(0xFF, 0xFB, 0x90, 0x64)!)!
        var broken = false
        for _ in 0..<200 where !broken {
            broken = !pattern.add(MPEGAudioHeader(0xFF, 0xFB, Bool.random(using: &random) ? 0x92 : 0x90, 0x64)!)
        }
        XCTAssertTrue(broken, "random padding is no accumulator's")
    }
}
