import Foundation
import XCTest
@testable import MediaKit

/// AudioStreamParser over containers (WAV / RF64, AIFF, FLAC, Ogg, MP4 with its moov first,
/// MPEG-TS): the packets pushed out equal the pull demuxer's (the same file read another way:
/// offsets, bytes, samples), whatever the chunking (whole, random sizes from a fixed seed, one
/// byte at a time on a small file), and so do all the events. ffprobe's packets are the oracle of
/// Tests/oracle/test_stream_containers.py.
final class AudioStreamParserContainerTests: XCTestCase {
    /// (file under ../shared/media, the format the parser must report)
    static let files: [(String, String)] = [
        ("breadth/wav_androidx_b4e52e_bbb_2ch_44kHz.wav", "wav"),
        ("breadth/wav_androidx_5dbe0f_sample_rf64.wav", "wav"),
        ("breadth/wav_Borewit_c3b266_riff-iprt-tag.wav", "wav"),
        ("breadth/aifc_Borewit_638bb0_M1F1-AlawC-AFsp.aif", "aiff"),
        ("breadth/flac_tinytag_a3f1bf_flac1sMono.flac", "flac"),
        ("breadth/flac_androidx_af3fe8_bear_with_picture.flac", "flac"),
        ("ogg_vorbis_stereo_1s.ogg", "ogg"),
        ("ogg_opus_stereo_tiny_155b.opus", "ogg"),
        ("ogg_vorbis_48k_stereo_bear.ogg", "ogg"),
        ("mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mp4"),
        ("breadth/ts_androidx_a24d4d_sample_h264_mpeg_audio.ts", "mpegts"),
        ("breadth/ts_Vanilagy_00bbd7_eac3.ts", "mpegts"),
    ]

    struct Pulled: Equatable, CustomStringConvertible {
        var offset: Int64, data: [UInt8], frames: Int
        var description: String { "\(offset) \(data.count) \(frames)" }
    }

    /// The pull demuxer's packets of the file's first audio track, its format and track.
    private func pull(_ url: URL) throws -> (format: ContainerFormat, track: Track, packets: [Pulled], metadata: Metadata) {
        let source = try FileSource(path: url.path)
        let head = try source.readUpTo(at: 0, count: ContainerCatalog.probeSize)
        let format = try XCTUnwrap(ContainerCatalog.builtIn.max { $0.probe(head, source.knownSize) < $1.probe(head, source.knownSize) })
        let demuxer = try format.makeDemuxer(source)
        let track = try XCTUnwrap(demuxer.tracks.first { $0.mediaType == .audio })
        demuxer.select(tracks: [track.index])
        var packets: [Pulled] = []
        var cut: MediaError?
        while let p = try demuxer.read(untilCut: &cut) {
            guard p.trackIndex == track.index else { continue }
            packets.append(Pulled(offset: p.position, data: p.data,
                                  frames: AudioStreamParser.samples(p.duration, timeBase: p.timeBase, rate: track.parameters.sampleRate)))
        }
        return (format, track, packets, demuxer.metadata)
    }

    /// The packets and every other event (as text, in order) of `bytes` pushed in `chunks`
    /// (sizes used in turn).
    private func push(_ bytes: [UInt8], chunks: [Int], hint: String? = nil) -> (packets: [Pulled], events: [String], error: MediaError?, format: AudioStreamParser.DataFormat?) {
        let parser = AudioStreamParser(totalBytes: nil, fileTypeHint: hint)
        var packets: [Pulled] = []
        var events: [String] = []
        func note(_ list: [AudioStreamParser.Event]) {
            for e in list {
                if case .packets(let ps) = e {
                    packets += ps.map { Pulled(offset: $0.offset, data: $0.data, frames: $0.frames) }
                } else {
                    events.append("\(e)")
                }
            }
        }
        var i = 0, k = 0
        do {
            while i < bytes.count {
                let n = chunks[k % chunks.count]
                k += 1
                note(try parser.push(Array(bytes[i..<min(bytes.count, i + n)])))
                i += n
            }
            note(parser.finish())
        } catch let e as MediaError {
            return (packets, events, e, parser.dataFormat)
        } catch {
            XCTFail("\(error)")
        }
        return (packets, events, nil, parser.dataFormat)
    }

    func testPacketsEqualThePullDemuxersInAnyChunking() throws {
        var random = SeededRandom(state: 35)
        let randomSizes = (0..<64).map { _ in Int.random(in: 1...9000, using: &random) }
        for (name, formatName) in Self.files {
            let url = try SharedMedia.file(name)
            let bytes = try [UInt8](Data(contentsOf: url))
            let (format, track, pulled, _) = try pull(url)
            XCTAssertEqual(format.name, formatName, name)
            XCTAssertFalse(pulled.isEmpty, name)
            let whole = push(bytes, chunks: [bytes.count])
            XCTAssertNil(whole.error, name)
            XCTAssertEqual(whole.packets.count, pulled.count, name)
            XCTAssertTrue(whole.packets == pulled, "\(name): the pushed packets differ from the pull demuxer's: first difference at \(Array(zip(whole.packets, pulled)).firstIndex { $0.0 != $0.1 } ?? -1)")
            // The events the pull demuxer's header gives.
            XCTAssertEqual(whole.events.first, "\(AudioStreamParser.Event.fileFormat(formatName))", name)
            let p = track.parameters
            XCTAssertEqual(whole.format?.codec, p.codec, name)
            XCTAssertEqual(whole.format?.sampleRate, p.sampleRate, name)
            XCTAssertEqual(whole.format?.channels, p.channels, name)
            if !p.extradata.isEmpty { XCTAssertTrue(whole.events.contains("\(AudioStreamParser.Event.magicCookie(p.extradata))"), name) }
            XCTAssertTrue(whole.events.contains("\(AudioStreamParser.Event.dataOffset(pulled[0].offset))"), name)
            XCTAssertTrue(whole.events.contains("readyToProducePackets"), name)
            if ["wav", "aiff", "mp4"].contains(formatName) {
                // The header's packet count (the sample tables, the data chunk's size).
                XCTAssertTrue(whole.events.contains("\(AudioStreamParser.Event.audioDataPacketCount(Int64(pulled.count)))"), "\(name): \(whole.events)")
            }
            // Any chunking: the same packets and events.
            var chunkings: [[Int]] = [[4096], randomSizes]
            if bytes.count <= 30_000 { chunkings.append([1]) }
            for chunks in chunkings {
                let got = push(bytes, chunks: chunks)
                XCTAssertNil(got.error, name)
                XCTAssertTrue(got.packets == whole.packets, "\(name) in chunks of \(chunks.prefix(3))...: other packets")
                XCTAssertEqual(got.events, whole.events, "\(name) in chunks of \(chunks.prefix(3))...")
            }
        }
    }

    /// A chained Ogg file (two real Vorbis files one after the other: 44.1 then 48 kHz): the pull
    /// demuxer's packets, and the second link's format and headers announced before its packets.
    func testChainedOggGivesTheSecondLinksFormat() throws {
        let first = try [UInt8](Data(contentsOf: try SharedMedia.file("ogg_vorbis_stereo_1s.ogg")))
        let second = try [UInt8](Data(contentsOf: try SharedMedia.file("ogg_vorbis_48k_stereo_bear.ogg")))
        let chained = first + second
        let demuxer = try OggDemuxer(source: MemorySource(chained))
        var pulled: [Pulled] = []
        var cut: MediaError?
        var linkStart: Int?
        while let p = try demuxer.read(untilCut: &cut) {
            if p.newParameters != nil && !pulled.isEmpty && linkStart == nil { linkStart = pulled.count }
            pulled.append(Pulled(offset: p.position, data: p.data, frames: AudioStreamParser.samples(p.duration, timeBase: p.timeBase, rate: 44100)))
        }
        let link = try XCTUnwrap(linkStart, "the pull demuxer reports no second link")
        for chunks in [[chained.count], [4000]] {
            let got = push(chained, chunks: chunks)
            XCTAssertNil(got.error)
            XCTAssertEqual(got.packets.map(\.offset), pulled.map(\.offset))
            XCTAssertEqual(got.packets.map(\.data), pulled.map(\.data))
            XCTAssertEqual(got.format?.sampleRate, 48000)
            XCTAssertEqual(got.events.filter { $0.hasPrefix("dataFormat") }.count, 2, "\(got.events)")
            XCTAssertGreaterThan(got.packets[link].offset, Int64(first.count - 1))
        }
    }

    /// Memory: the bytes kept stay bounded by what the demuxer may read again behind its last
    /// read (CallbackSource.keptBehind, dropped in steps of 256 KiB) and one push, not the file
    /// (a 2.6 MB WAV in pushes of 64 KiB).
    func testKeptBytesAreBoundedNotTheFile() throws {
        let bytes = try [UInt8](Data(contentsOf: try SharedMedia.file("breadth/wav_Vanilagy_870a34_CantinaBand60.wav")))
        let parser = AudioStreamParser()
        var most = 0, packets = 0
        var i = 0
        while i < bytes.count {
            for e in try parser.push(Array(bytes[i..<min(bytes.count, i + 65536)])) { if case .packets(let p) = e { packets += p.count } }
            most = max(most, parser.containerKeptBytes ?? 0)
            i += 65536
        }
        _ = parser.finish()
        XCTAssertGreaterThan(packets, 100)
        XCTAssertLessThanOrEqual(most, CallbackSource.keptBehind + (1 << 18) + 2 * 65536)
        XCTAssertLessThan(most, bytes.count / 2)
    }

    /// Properties as the pull demuxer states them, after the header and after the end.
    func testPropertiesOfAContainer() throws {
        let url = try SharedMedia.file("breadth/flac_tinytag_a3f1bf_flac1sMono.flac")
        let bytes = try [UInt8](Data(contentsOf: url))
        let (_, track, pulled, metadata) = try pull(url)
        let parser = AudioStreamParser(fileTypeHint: "song.flac")
        XCTAssertEqual(parser.fileTypeHint, "flac")
        _ = try parser.push(Array(bytes.prefix(8192)))
        XCTAssertEqual(parser.fileFormat, "flac")
        XCTAssertEqual(parser.dataFormat?.sampleRate, track.parameters.sampleRate)
        XCTAssertEqual(parser.magicCookie, track.parameters.extradata)
        XCTAssertEqual(parser.tags.title, metadata["title"] ?? track.metadata["title"])
        XCTAssertNotNil(parser.tags.title)
        _ = try parser.push(Array(bytes.dropFirst(8192)))
        _ = parser.finish()
        XCTAssertEqual(parser.dataOffset, pulled[0].offset)
        XCTAssertEqual(parser.packetCount, Int64(pulled.count))
        XCTAssertEqual(parser.audioBytes, Int64(pulled.reduce(0) { $0 + $1.data.count }))
        XCTAssertEqual(parser.sampleCount, Int64(pulled.reduce(0) { $0 + $1.frames }))
        XCTAssertEqual(parser.maximumPacketSize, pulled.map(\.data.count).max())
    }

    /// A wrong hint is overridden by the bytes; an unknown one is ignored.
    func testTheBytesOverrideAWrongHint() throws {
        let url = try SharedMedia.file("breadth/wav_androidx_5dbe0f_sample_rf64.wav")
        let bytes = try [UInt8](Data(contentsOf: url))
        let right = push(bytes, chunks: [5000], hint: "wav")
        for hint in ["mp3", "m4a", "aac", "nonsense", ""] {
            let got = push(bytes, chunks: [5000], hint: hint)
            XCTAssertNil(got.error, hint)
            XCTAssertTrue(got.packets == right.packets, hint)
            XCTAssertEqual(got.events, right.events, hint)
        }
        XCTAssertEqual(AudioStreamParser(fileTypeHint: "M4A").fileTypeHint, "mp4")
        XCTAssertEqual(AudioStreamParser(fileTypeHint: ".ts").fileTypeHint, "mpegts")
        XCTAssertNil(AudioStreamParser(fileTypeHint: "xyz").fileTypeHint)
        // An MP3 with a WAV hint is read as MP3.
        let mp3 = try [UInt8](Data(contentsOf: try SharedMedia.file("mp3_cbr_56k_mono_no_xing.mp3")))
        let asMP3 = push(mp3, chunks: [4096], hint: "wav")
        XCTAssertNil(asMP3.error)
        XCTAssertEqual(asMP3.events.first { $0.contains("fileFormat") }, "\(AudioStreamParser.Event.fileFormat("mp3"))")
        XCTAssertTrue(asMP3.packets == push(mp3, chunks: [4096]).packets)
    }

    /// An MP4 whose moov follows its media data cannot be read front to back: an error that says
    /// so, at the mdat (not after every byte).
    func testMoovAtTheEndIsRefusedWithAReason() throws {
        let url = try SharedMedia.file("m4a_aac_8k_mono.m4a")
        let bytes = try [UInt8](Data(contentsOf: url))
        let parser = AudioStreamParser(fileTypeHint: "m4a")
        var error: MediaError?
        var pushed = 0
        do {
            while pushed < bytes.count {
                _ = try parser.push(Array(bytes[pushed..<min(bytes.count, pushed + 256)]))
                pushed += 256
            }
        } catch let e as MediaError { error = e }
        let e = try XCTUnwrap(error, "no error for a moov after the mdat")
        XCTAssertEqual(e.kind, .unsupported)
        XCTAssertTrue(e.message.contains("moov"), e.message)
        XCTAssertLessThan(pushed, bytes.count, "refused only after every byte")
    }

    /// Bytes that can be no supported type are refused early: garbage after maxBytesBeforeSync
    /// bytes (a known-unsupported signature at once: AudioStreamParserTests).
    func testUnsupportedBytesAreRefusedEarly() throws {
        var random = SeededRandom(state: 7)
        let garbage = (0..<(200 << 10)).map { _ in UInt8.random(in: 0...255, using: &random) & 0xFE }   // never 0xFF: no sync
        let g = AudioStreamParser(fileTypeHint: "aac")
        var pushed = 0
        var refused: MediaError?
        do {
            while pushed < garbage.count {
                _ = try g.push(Array(garbage[pushed..<pushed + 1024]))
                pushed += 1024
            }
        } catch let e as MediaError { refused = e }
        let e = try XCTUnwrap(refused)
        XCTAssertEqual(e.kind, .unsupported)
        XCTAssertTrue(e.message.contains("adts"), e.message)
        XCTAssertLessThanOrEqual(pushed, Int(AudioStreamParser.maxBytesBeforeSync) + 1024)
    }
}
