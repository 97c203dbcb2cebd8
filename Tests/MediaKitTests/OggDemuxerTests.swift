import Foundation
import XCTest
@testable import MediaKit

/// Ogg and IVF: damaged input is an error or the packets before the damage, never a crash,
/// a hang or a runaway read; Ogg resyncs on the next page with a correct CRC. Oracle: the
/// intact file read the same way. Reads the real files in ../shared/media.
final class OggDemuxerTests: XCTestCase {
    private func readAll(_ path: String) -> (packets: [Packet], error: MediaError?, warnings: [MediaError]) {
        var packets: [Packet] = []
        var demuxer: Demuxer?
        do {
            let d = try MediaRegistry().makeDemuxer(path: path)
            demuxer = d
            while let p = try d.read() {
                packets.append(p)
                if packets.count > 2_000_000 { XCTFail("runaway read on \(path)"); break }
            }
            return (packets, nil, d.warnings)
        } catch let e as MediaError {
            if e.kind == .truncated, let d = demuxer {
                XCTAssertNil(try d.read(), "\(path): after .truncated, read() returns nil")
            }
            return (packets, e, demuxer?.warnings ?? [])
        } catch {
            XCTFail("\(path): a non-MediaError escaped: \(error)")
            return (packets, nil, [])
        }
    }

    private func files(_ exts: Set<String>) throws -> [URL] {
        try SharedMedia.files(extensions: exts).filter { !$0.lastPathComponent.hasPrefix("broken") }
    }

    private func same(_ a: Packet, _ b: Packet) -> Bool {
        a.trackIndex == b.trackIndex && a.pts == b.pts && a.duration == b.duration && a.position == b.position && a.data == b.data
    }

    private func scratch(_ name: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-ogg-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name)
    }

    func testCRCIsOggs() {
        // CRC of the Ogg capture pattern alone (a known constant of this polynomial).
        XCTAssertEqual(OggCRC.update(0, Array("OggS".utf8)), 0x5FB0_A94F)
    }

    func testOpusTrackFacts() throws {
        let url = SharedMedia.directory.appendingPathComponent("ogg_opus_stereo_tiny_155b.opus")
        guard FileManager.default.fileExists(atPath: url.path) else { _ = try SharedMedia.files(extensions: []); throw XCTSkip("no shared media") }
        let d = try OggDemuxer(path: url.path)
        let t = d.tracks[0]
        XCTAssertEqual(t.parameters.codec, "opus")
        XCTAssertEqual(t.parameters.sampleRate, 48000)
        XCTAssertEqual(t.parameters.channels, 2)
        XCTAssertEqual(Array(t.parameters.extradata.prefix(8)), Array("OpusHead".utf8))
        XCTAssertEqual(t.encoderDelay, 312)
        XCTAssertEqual(t.timeBase, Rational(1, 48000))
        let first = try XCTUnwrap(d.read())
        XCTAssertEqual(first.pts, -312)
        XCTAssertEqual(first.trimStart, 312)
    }

    func testVorbisExtradataIsXiphLaced() throws {
        let url = SharedMedia.directory.appendingPathComponent("ogg_vorbis_48k_stereo_bear.ogg")
        guard FileManager.default.fileExists(atPath: url.path) else { _ = try SharedMedia.files(extensions: []); throw XCTSkip("no shared media") }
        let t = try OggDemuxer(path: url.path).tracks[0]
        let x = t.parameters.extradata
        XCTAssertEqual(x.first, 2)
        // lacing of the first two packets, then the identification header
        var i = 1, sizes: [Int] = []
        for _ in 0..<2 {
            var n = 0
            while x[i] == 255 { n += 255; i += 1 }
            n += Int(x[i]); i += 1
            sizes.append(n)
        }
        XCTAssertEqual(sizes[0], 30)
        XCTAssertEqual(Array(x[i..<i + 7]), [1] + Array("vorbis".utf8))
        XCTAssertEqual(x[i + 30], 3, "the comment header follows the identification header")
        XCTAssertEqual(x[i + sizes[0] + sizes[1]], 5, "the setup header is the last packet")
        XCTAssertEqual(t.parameters.sampleRate, 48000)
        XCTAssertEqual(t.encoderDelay, 0)
    }

    /// Corrupt one byte inside a middle page: that page fails its CRC and is skipped, the
    /// damage is reported, and every packet that starts on a later page equals the intact file's.
    func testResyncAfterABadPageInTheMiddle() throws {
        var checked = 0
        for file in try files(["ogg", "opus"]) {
            let intact = readAll(file.path)
            // A corpus file may itself be cut short: its end is then a .truncated error.
            XCTAssertTrue(intact.error == nil || intact.error?.kind == .truncated, "\(file.lastPathComponent): \(String(describing: intact.error))")
            let bytes = [UInt8](try Data(contentsOf: file))
            // page offsets
            var pages: [Int] = []
            var i = 0
            while let r = bytes[i...].firstRange(of: Array("OggS".utf8)) { pages.append(r.lowerBound); i = r.lowerBound + 4 }
            guard pages.count >= 5 else { continue }
            let victim = pages[pages.count / 2], after = pages[pages.count / 2 + 1]
            var damaged = bytes
            damaged[victim + 27 + Int(damaged[victim + 26])] ^= 0x5A   // first body byte
            let url = try scratch(file.lastPathComponent)
            try Data(damaged).write(to: url)
            let r = readAll(url.path)
            XCTAssertEqual(r.error?.kind, intact.error?.kind, "\(file.lastPathComponent): a bad page in the middle must not end reading: \(String(describing: r.error))")
            XCTAssertTrue(r.warnings.contains { $0.offset == Int64(victim) && $0.message.contains("CRC") },
                          "\(file.lastPathComponent): the skipped page at \(victim) must be reported: \(r.warnings)")
            let later = intact.packets.filter { $0.position >= Int64(after) }
            let ours = r.packets.filter { $0.position >= Int64(after) }
            XCTAssertEqual(ours.count, later.count, "\(file.lastPathComponent): packets after the damaged page")
            for (a, b) in zip(ours, later) where !(a.data == b.data && a.position == b.position && a.trackIndex == b.trackIndex) {
                XCTFail("\(file.lastPathComponent): packet at \(a.position) differs after resync")
                break
            }
            // before the damage: identical
            let before = intact.packets.filter { $0.position < Int64(victim) && $0.position >= 0 }
            for (a, b) in zip(r.packets, before) { XCTAssertTrue(same(a, b), "\(file.lastPathComponent): packet before the damage differs") }
            checked += 1
        }
        XCTAssertGreaterThan(checked, 2)
    }

    func testTruncatedFilesReturnTheirPrefixThenAnError() throws {
        for file in try files(["ogg", "opus", "ivf"]) {
            let intact = readAll(file.path)
            XCTAssertTrue(intact.error == nil || intact.error?.kind == .truncated, "\(file.lastPathComponent) should read cleanly (to its own cut, if it is cut short)")
            let data = try Data(contentsOf: file)
            for k in 1...10 {
                let cut = data.count * k / 11
                let url = try scratch(file.lastPathComponent)
                try data.prefix(cut).write(to: url)
                let r = readAll(url.path)
                for (i, p) in r.packets.enumerated() {
                    guard i < intact.packets.count else { XCTFail("\(file.lastPathComponent) cut at \(cut): extra packets"); break }
                    let o = intact.packets[i]
                    // IVF: the frame the cut goes through comes last, with the bytes the file has (as FFmpeg).
                    let data = p.isTruncated ? i == r.packets.count - 1 && file.pathExtension == "ivf" && o.data.starts(with: p.data)
                                             : p.data == o.data
                    XCTAssertTrue(p.trackIndex == o.trackIndex && p.position == o.position && data,
                                  "\(file.lastPathComponent) cut at \(cut): packet \(i) differs from the intact file's")
                }
                if let e = r.error {
                    XCTAssertEqual(e.kind, .truncated, "a cut is reported as .truncated: \(e)")
                    XCTAssertEqual(e.path, url.path, "errors name the file: \(e)")
                    XCTAssertNotNil(e.offset, "errors name the offset: \(e)")
                } else if r.packets.count < intact.packets.count {
                    // Ogg: a cut exactly at a page boundary loses only whole pages; the packets
                    // returned are still a prefix (checked above) and nothing is invented.
                    XCTAssertTrue(file.pathExtension != "ivf", "\(file.lastPathComponent) cut at \(cut): IVF frames lost without an error")
                }
            }
        }
    }

    func testRandomByteFlipsNeverCrash() throws {
        var rng = SeededRandom(state: 6)
        for file in try files(["ogg", "opus", "ivf"]) {
            let data = [UInt8](try Data(contentsOf: file))
            for round in 0..<10 {
                var bytes = data
                for _ in 0..<(1 + round * 3) {
                    bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= UInt8.random(in: 1...255, using: &rng)
                }
                let url = try scratch(file.lastPathComponent)
                try Data(bytes).write(to: url)
                _ = readAll(url.path)   // must return, with packets and/or a MediaError
            }
        }
    }

    func testBrokenOggFilesGiveErrorsNamingTheFile() throws {
        for file in try SharedMedia.files(extensions: ["ogg", "opus", "ivf"]) where file.lastPathComponent.hasPrefix("broken") {
            let r = readAll(file.path)
            if let e = r.error {
                XCTAssertEqual(e.path, file.path, "errors name the file: \(e)")
                XCTAssertFalse(e.message.isEmpty)
            }
        }
    }

    func testIVFHeaderAndKeyFrames() throws {
        let url = SharedMedia.directory.appendingPathComponent("ivf_av1_320x180_1s.ivf")
        guard FileManager.default.fileExists(atPath: url.path) else { _ = try SharedMedia.files(extensions: []); throw XCTSkip("no shared media") }
        let d = try IVFDemuxer(path: url.path)
        XCTAssertEqual(d.tracks[0].parameters.codec, "av1")
        XCTAssertEqual(d.tracks[0].parameters.width, 320)
        XCTAssertEqual(d.tracks[0].parameters.height, 180)
        XCTAssertEqual(d.tracks[0].timeBase, Rational(1, 25))
        XCTAssertEqual(d.duration ?? 0, 1, accuracy: 1e-9)
        let first = try XCTUnwrap(d.read())
        XCTAssertTrue(first.isKeyframe)
        XCTAssertEqual(first.position, 32)
        XCTAssertFalse(try XCTUnwrap(d.read()).isKeyframe)
        try d.seek(to: 0.5)
        let target = try XCTUnwrap(d.read())
        XCTAssertTrue(target.isKeyframe)
        XCTAssertLessThanOrEqual(target.pts, 12, "0.5 s is pts 12.5 at 25 fps")
    }

    func testUnknownFileIsUnsupportedNamingWhatWasFound() throws {
        let url = try scratch("text.bin")
        try Data("hello, this is not media".utf8).write(to: url)
        XCTAssertThrowsError(try MediaRegistry().makeDemuxer(path: url.path)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .unsupported)
            XCTAssertEqual(e.path, url.path)
            XCTAssertTrue(e.message.contains("hello, t"), e.message)
        }
    }

    func testSeekAndPerTrackReading() throws {
        let url = SharedMedia.directory.appendingPathComponent("ogg_vorbis_stereo_eos_edge.ogg")
        guard FileManager.default.fileExists(atPath: url.path) else { _ = try SharedMedia.files(extensions: []); throw XCTSkip("no shared media") }
        let d = try OggDemuxer(path: url.path)
        var all: [Packet] = []
        while let p = try d.read(track: 0) { all.append(p) }
        XCTAssertEqual(all.count, 366)
        try d.seek(to: 2.0)
        let p = try XCTUnwrap(d.read())
        XCTAssertLessThanOrEqual(Double(p.pts) / 44100, 2.0)
        XCTAssertGreaterThan(Double(p.pts + 2048) / 44100, 2.0)
    }
}
