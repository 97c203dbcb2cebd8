import Foundation
import XCTest
@testable import MediaKit

/// Every container read from a file, from memory, from seekable callbacks and from a stream
/// read once gives the same packets. Oracle: the same input fed another way (the file).
/// Inputs: real files of ../shared/media (skipped without ../shared, a failure under CI=true).
final class ByteSourceTests: XCTestCase {
    /// Every packet of a demuxer as (track, pts, dts, duration, key, bytes), then the error
    /// that ended reading, if any.
    private func packets(_ demuxer: Demuxer) -> ([String], String?) {
        var out: [String] = []
        do {
            while let p = try demuxer.read() {
                out.append("\(p.trackIndex),\(p.pts),\(p.dts),\(p.duration),\(p.isKeyframe),\(p.data.count),\(p.data.hashValue)")
            }
            return (out, nil)
        } catch {
            return (out, "\(error)")
        }
    }

    /// A source over `bytes` through callbacks, seekable or not, handing out at most `chunk`
    /// bytes per call (short reads, as pipes give).
    private func callbacks(_ bytes: [UInt8], seekable: Bool, chunk: Int = 1000) -> CallbackSource {
        final class Cursor: @unchecked Sendable { var position = 0 }
        let cursor = Cursor()
        return CallbackSource(name: seekable ? "callbacks" : "stream", size: seekable ? Int64(bytes.count) : nil, read: { buffer in
            let n = min(buffer.count, chunk, bytes.count - cursor.position)
            if n <= 0 { return 0 }
            bytes.withUnsafeBytes { buffer.baseAddress!.copyMemory(from: $0.baseAddress! + cursor.position, byteCount: n) }
            cursor.position += n
            return n
        }, seek: seekable ? { cursor.position = Int($0) } : nil)
    }

    func testEverySourceGivesTheFilesPackets() throws {
        // (file, whether its layout can be read once front to back)
        let cases: [(String, Bool)] = [
            ("ogg_vorbis_48k_stereo_bear.ogg", true), ("ogg_opus_stereo_tiny_155b.opus", true),
            ("ivf_av1_320x180_1s.ivf", true), ("mp4_h264_aac_moov_at_start_ctts_8s.mp4", true),
            ("mp4_hevc_hvc1_aac_ctts_elst.mp4", false),            // moov after mdat
            ("fmp4_aac_single_file_sidx.mp4", true),                // fragmented: read as it comes
        ]
        _ = try SharedMedia.files(extensions: ["mp4"])
        for (name, streamable) in cases {
            let path = SharedMedia.directory.appendingPathComponent(name).path
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
            let reference = packets(try MediaRegistry.shared.makeDemuxer(path: path))
            XCTAssertNil(reference.1, "\(name) reads cleanly from its file")
            XCTAssertFalse(reference.0.isEmpty, name)
            for source in [MemorySource(bytes), callbacks(bytes, seekable: true)] as [ByteSource] {
                let got = packets(try MediaRegistry.shared.makeDemuxer(source: source))
                XCTAssertEqual(got.0, reference.0, "\(name) from \(source.name)")
                XCTAssertNil(got.1, "\(name) from \(source.name)")
            }
            let stream = callbacks(bytes, seekable: false)
            if streamable {
                let got = packets(try MediaRegistry.shared.makeDemuxer(source: stream))
                XCTAssertEqual(got.0, reference.0, "\(name) from a stream")
                XCTAssertNil(got.1, "\(name) from a stream")
            } else {
                XCTAssertThrowsError(try MediaRegistry.shared.makeDemuxer(source: stream), name) { error in
                    let e = error as? MediaError
                    XCTAssertEqual(e?.kind, .unsupported, "\(name): \(error)")
                    XCTAssertTrue(e?.message.contains("moov") ?? false, "the error names the layout: \(error)")
                }
            }
        }
    }

    /// A fragmented MP4 from a stream is one pass: read(track:) of one track gives that track's
    /// packets of the file; reading another track, read() after it, or a seek, need a seekable
    /// source and say so. read() gives every track's packets of the file, each in its order.
    func testFragmentedStreamIsReadInOnePass() throws {
        _ = try SharedMedia.files(extensions: ["mp4"])
        let path = SharedMedia.directory.appendingPathComponent("fmp4_h264_aac_single_file_2tracks.mp4").path
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let file = try MP4Demuxer(path: path)
        var reference: [[String]] = [[], []]
        for t in 0..<2 {
            while let p = try file.read(track: t) { reference[t].append("\(p.pts),\(p.dts),\(p.duration),\(p.isKeyframe),\(p.position),\(p.data.hashValue)") }
        }
        XCTAssertFalse(reference[0].isEmpty || reference[1].isEmpty)

        let one = try MP4Demuxer(source: callbacks(bytes, seekable: false))
        XCTAssertTrue(one.isFragmented)
        var video: [String] = []
        while let p = try one.read(track: 0) { video.append("\(p.pts),\(p.dts),\(p.duration),\(p.isKeyframe),\(p.position),\(p.data.hashValue)") }
        XCTAssertEqual(video, reference[0])
        for call in [{ _ = try one.read(track: 1) }, { _ = try one.read() }, { try one.seek(to: 0) }] as [() throws -> Void] {
            XCTAssertThrowsError(try call()) { error in
                XCTAssertEqual((error as? MediaError)?.kind, .unsupported, "\(error)")
                XCTAssertTrue((error as? MediaError)?.message.contains("seekable source") ?? false, "\(error)")
            }
        }

        let all = try MP4Demuxer(source: callbacks(bytes, seekable: false, chunk: 777))
        var got: [[String]] = [[], []]
        var lastPosition: Int64 = -1
        while let p = try all.read() {
            XCTAssertGreaterThan(p.position, lastPosition, "a stream is read in stored order")
            lastPosition = p.position
            got[p.trackIndex].append("\(p.pts),\(p.dts),\(p.duration),\(p.isKeyframe),\(p.position),\(p.data.hashValue)")
        }
        XCTAssertEqual(got, reference)
        XCTAssertThrowsError(try all.seek(to: 1)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported, "\(error)")
        }
    }

    func testStreamRefusesToGoBackAndReadsAheadInPieces() throws {
        let bytes = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let stream = callbacks(bytes, seekable: false, chunk: 333)
        XCTAssertEqual(try stream.read(at: 10, count: 5), Array(bytes[10..<15]))
        XCTAssertEqual(try stream.read(at: 250_000, count: 4), Array(bytes[250_000..<250_004]))
        XCTAssertEqual(try stream.readUpTo(at: 299_998, count: 10), Array(bytes[299_998...]))
        XCTAssertEqual(try stream.available(from: 300_000, upTo: 1), 0)
        // 10 is more than keptBehind before 250 000? No: 1 MiB is kept, so it is still there.
        XCTAssertEqual(try stream.read(at: 10, count: 1), [bytes[10]])
        let big = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0) }
        let long = callbacks(big, seekable: false, chunk: 65536)
        _ = try long.read(at: 2_500_000, count: 1)
        XCTAssertThrowsError(try long.read(at: 0, count: 1)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
        }
        XCTAssertThrowsError(try long.read(at: 2_999_999, count: 2)) { error in
            XCTAssertEqual((error as? MediaError)?.kind, .endOfFile)
        }
    }

    func testProbingNamesWhatItFound() throws {
        XCTAssertThrowsError(try MediaRegistry.shared.makeDemuxer(source: MemorySource(Array("FORM\u{0}\u{0}\u{0}\u{4}8SVXVHDR".utf8)))) { error in
            let text = "\(error)"
            XCTAssertEqual((error as? MediaError)?.kind, .unsupported)
            XCTAssertTrue(text.contains("FORM") && text.contains("AIFF") && text.contains("Ogg") && text.contains("IVF") && text.contains("WAV"), text)
        }
        XCTAssertThrowsError(try MediaRegistry.shared.makeDemuxer(source: MemorySource([]))) { error in
            XCTAssertTrue("\(error)".contains("empty"), "\(error)")
        }
        XCTAssertEqual(ContainerCatalog.shared.muxerFormat(forPath: "x.M4A")?.name, "mp4")
        XCTAssertEqual(ContainerCatalog.shared.muxerFormat(forPath: "x.ogg")?.name, "ogg")
        XCTAssertEqual(ContainerCatalog.shared.muxerFormat(forPath: "x.opus")?.name, "opus")
        // No built-in muxer writes AVI: libavformat's does, when the FFmpeg plugin is loaded.
        if let avi = ContainerCatalog.shared.muxerFormat(forPath: "x.avi") { XCTAssertNotNil(avi.plugin, "a built-in AVI muxer") }
        XCTAssertNil(ContainerCatalog.shared.muxerFormat(forPath: "x.xyz"))
    }
}
