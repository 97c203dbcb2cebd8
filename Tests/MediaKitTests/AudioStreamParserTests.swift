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
                case .discontinuity(let at, let skipped): lines.append("discontinuity \(at) \(skipped)")
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
        // 200 KB of noise: refused as no type read, once 64 KiB passed without a frame (not at finish()).
        XCTAssertThrowsError(try AudioStreamParser().push(garbage)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
            XCTAssertEqual((error as? MediaError)?.offset, 0)
        }
        for input in [Array(garbage.prefix(60_000)), [], [0xFF, 0xFB], Array("ID3".utf8) + [4, 0, 0, 0, 0, 0x7F, 0x7F], Array(repeating: 0xFF, count: 5000)] {
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

    /// Every packet parsed: the properties and the conversions agree with the packets the parser
    /// reported (exact where the offsets were seen), and the tags are the MP3 demuxer's (the
    /// same file read another way).
    func testPropertiesAndConversionsMatchThePackets() throws {
        for name in ["mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", "mp3_id3v2_apic_1400px_48k.mp3", "aac_adts_lc_with_id3v2_prefix.aac"] {
            let url = try SharedMedia.file(name)
            let bytes = try [UInt8](Data(contentsOf: url))
            let parser = AudioStreamParser(totalBytes: Int64(bytes.count))
            XCTAssertNil(parser.fileFormat)
            XCTAssertNil(parser.bitRate)
            XCTAssertNil(parser.packetToFrame(0))
            XCTAssertTrue(parser.formatList.isEmpty)
            var packets: [AudioStreamParser.Packet] = []
            var i = 0
            while i < bytes.count {
                for case .packets(let p) in try parser.push(Array(bytes[i..<min(bytes.count, i + 4096)])) { packets += p }
                i += 4096
            }
            for case .packets(let p) in parser.finish() { packets += p }
            let f = try XCTUnwrap(parser.dataFormat, name)
            XCTAssertEqual(parser.fileFormat, name.hasSuffix(".aac") ? "adts" : "mp3")
            XCTAssertEqual(parser.dataOffset, packets.first?.offset)
            XCTAssertEqual(parser.maximumPacketSize, packets.map(\.data.count).max())
            XCTAssertLessThanOrEqual(parser.maximumPacketSize, try XCTUnwrap(parser.packetSizeUpperBound))
            XCTAssertEqual(parser.audioDataPacketCount?.packets, Int64(packets.count))
            XCTAssertEqual(parser.audioDataPacketCount?.estimated, false)
            XCTAssertEqual(parser.audioDataByteCount?.bytes, Int64(packets.reduce(0) { $0 + $1.data.count }))
            XCTAssertEqual(try XCTUnwrap(parser.averageBytesPerPacket), Double(packets.reduce(0) { $0 + $1.data.count }) / Double(packets.count), accuracy: 1e-9)
            XCTAssertEqual(parser.duration?.seconds ?? 0, Double(packets.reduce(0) { $0 + $1.frames }) / Double(f.sampleRate), accuracy: 1e-9)
            XCTAssertEqual(parser.duration?.estimated, false)
            XCTAssertNotNil(parser.channelMask)
            XCTAssertEqual(parser.channelMask.map { $0.nonzeroBitCount }, f.channels)
            for (n, p) in packets.enumerated() {
                let (offset, estimated) = try XCTUnwrap(parser.packetToByte(Int64(n)))
                XCTAssertEqual(offset, p.offset, "\(name) packet \(n)")
                XCTAssertFalse(estimated)
                let back = try XCTUnwrap(parser.byteToPacket(p.offset + Int64(p.data.count) - 1))
                XCTAssertEqual(back.packet, Int64(n))
                XCTAssertEqual(back.byteOffset, p.data.count - 1)
                XCTAssertFalse(back.estimated)
                XCTAssertEqual(parser.packetToFrame(Int64(n)), Int64(n * f.framesPerPacket))
                XCTAssertEqual(parser.frameToPacket(Int64(n * f.framesPerPacket + 5))?.packet, Int64(n))
                XCTAssertEqual(parser.frameToPacket(Int64(n * f.framesPerPacket + 5))?.frameOffset, 5)
            }
            // Past the packets parsed: estimated from the average size.
            XCTAssertEqual(parser.packetToByte(Int64(packets.count + 100))?.estimated, true)
            // The tags: the demuxer's (ID3v2 in front, read from the file by another path). Not for
            // the ADTS file: its second ID3v2 tag, between frames, only the parser reads.
            guard name.hasSuffix(".mp3") else { continue }
            let demuxer = try AudioStreamDemuxer(source: FileSource(path: url.path))
            XCTAssertEqual(parser.metadata.map(\.key), demuxer.metadata.map(\.key), name)
            XCTAssertEqual(parser.metadata.map(\.value), demuxer.metadata.map(\.value), name)
            XCTAssertEqual(parser.attachments, demuxer.attachments, name)
        }
    }

    /// A VBR MP3 without a Xing / VBRI header: the duration, first a guess from the first frame's
    /// bit rate, is refined as packets arrive (the average so far) and is the packets' at the end.
    func testRunningEstimatesConvergeOnVBRWithoutXing() throws {
        let bytes = try [UInt8](Data(contentsOf: try SharedMedia.file("mp3_vbr_no_xing_no_vbri.mp3")))
        let parser = AudioStreamParser(totalBytes: Int64(bytes.count))
        var durations: [(Double, Bool)] = [], rates: [Int] = []
        func note(_ events: [AudioStreamParser.Event]) {
            for e in events {
                if case .duration(let d, let estimated) = e { durations.append((d, estimated)) }
                if case .bitRate(let r, _) = e { rates.append(r) }
            }
        }
        var i = 0
        while i < bytes.count {
            note(try parser.push(Array(bytes[i..<min(bytes.count, i + 1000)])))
            i += 1000
        }
        note(parser.finish())
        let final = try XCTUnwrap(durations.last)
        XCTAssertFalse(final.1)
        XCTAssertEqual(final.0, Double(parser.sampleCount) / 48000, accuracy: 1e-9)
        let estimates = durations.filter { $0.1 }.map(\.0)
        XCTAssertGreaterThan(estimates.count, 3, "refined several times")
        // The first guess is far off (the first frame's bit rate); the last is within 5%.
        XCTAssertGreaterThan(abs(estimates[0] - final.0), abs(estimates.last! - final.0))
        XCTAssertLessThan(abs(estimates.last! - final.0) / final.0, 0.05)
        XCTAssertGreaterThan(rates.count, 3)
    }

    /// A seek to an estimated offset: the bytes before the first frame found there are a
    /// discontinuity event, not a damage warning.
    func testSeekToAnEstimatedOffsetReportsADiscontinuity() throws {
        let bytes = try [UInt8](Data(contentsOf: try SharedMedia.file("mp3_vbr_no_xing_no_vbri.mp3")))
        let parser = AudioStreamParser(totalBytes: Int64(bytes.count))
        _ = try parser.push(Array(bytes[..<4000]))
        let target = try XCTUnwrap(parser.seek(to: 2.0))
        XCTAssertFalse(target.exact)
        let events = try parser.push(Array(bytes[Int(target.offset)...]), discontinuity: true)
        var found: (Int64, Int64)?
        for e in events {
            if case .warning(let w) = e { XCTFail("a warning after the seek: \(w)") }
            if case .discontinuity(let at, let skipped) = e { found = (at, skipped) }
        }
        let (at, skipped) = try XCTUnwrap(found)
        XCTAssertEqual(at, target.offset + skipped)
        XCTAssertEqual(bytes[Int(at)], 0xFF)
        guard case .packets(let p)? = events.first(where: { if case .packets = $0 { return true }; return false }) else { return XCTFail("no packets") }
        XCTAssertEqual(p.first?.offset, at)
    }

    /// An ID3 TLEN states the duration before any frame.
    func testTLENGivesTheDuration() throws {
        // ID3v2.3 with TLEN "2808" (ms), then the VBR file without a Xing header.
        let text = Array("2808".utf8)
        let frame = Array("TLEN".utf8) + [0, 0, 0, UInt8(text.count + 1), 0, 0, 0] + text
        let tag = Array("ID3".utf8) + [3, 0, 0, 0, 0, 0, UInt8(frame.count)] + frame
        let bytes = tag + (try [UInt8](Data(contentsOf: try SharedMedia.file("mp3_vbr_no_xing_no_vbri.mp3"))))
        let parser = AudioStreamParser(totalBytes: Int64(bytes.count))
        let events = try parser.push(Array(bytes[..<tag.count]))
        XCTAssertTrue(events.contains { if case .duration(2.808, false) = $0 { return true }; return false })
        _ = try parser.push(Array(bytes[tag.count..<tag.count + 20000]))
        XCTAssertEqual(parser.duration?.seconds, 2.808)
        XCTAssertEqual(parser.metadata.first { $0.nativeKey == "TLEN" }?.value, "2808")
    }

    /// A container the parser does not read is refused at its first bytes (after any ID3v2 tag
    /// in front), whatever the chunking, not after every byte at finish(): Matroska / WebM
    /// (EBML's 1A 45 DF A3), IVF ("DKIF"), AVI ("RIFF" then "AVI "), on real files. (The
    /// containers it reads: AudioStreamParserContainerTests.)
    func testOtherContainersAreRefusedEarly() throws {
        let files = ["mkv_opus_mono_tiny.mkv", "webm_vorbis_mono_12k_3s.webm", "ivf_vp9_320x180_1s.ivf",
                     "breadth/avi_meta-pytor_133ba9_testsrc2_mpeg4.avi"]
        for name in files {
            let url = try SharedMedia.file(name)
            let head = try [UInt8](Data(contentsOf: url).prefix(4096))
            for chunk in [1, 3, 4096] {
                let parser = AudioStreamParser()
                var error: MediaError?
                var i = 0
                while i < head.count && error == nil {
                    do { _ = try parser.push(Array(head[i..<min(head.count, i + chunk)])) } catch let e as MediaError { error = e }
                    i += chunk
                }
                let e = try XCTUnwrap(error, "\(name) in chunks of \(chunk): no error")
                XCTAssertEqual(e.kind, .unsupported)
                XCTAssertTrue(e.message.contains("does not read"), e.message)
                if chunk < 200 { XCTAssertLessThanOrEqual(i, 200, "\(name): refused within its first bytes") }
            }
        }
        // An MP3 is not refused.
        let mp3 = try [UInt8](Data(contentsOf: try SharedMedia.file("mp3_cbr_56k_mono_no_xing.mp3")))
        XCTAssertNoThrow(try AudioStreamParser().push(mp3))
    }
}
