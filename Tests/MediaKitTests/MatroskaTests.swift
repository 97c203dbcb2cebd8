import Foundation
import XCTest
@testable import MediaKit

/// EBML variable-size integers and Matroska block lacing against the examples of RFC 8794
/// (section 4.4) and RFC 9559 (section 10.3), and the demuxer on small files built here
/// byte by byte: unknown sizes, BlockGroups, lacing, hostile sizes. The real files are
/// checked against ffprobe in Tests/oracle/test_matroska.py.
final class MatroskaTests: XCTestCase {
    private func size(_ b: [UInt8]) -> (value: UInt64, length: Int, unknown: Bool)? {
        b.withUnsafeBytes { EBMLVarInt.size($0, at: 0) }
    }

    /// RFC 8794 section 4.4: the value 2 in widths 1 to 4 ("0x82, 0x4002, 0x200002, 0x10000002").
    func testVarIntWidthsOfTheSpecExample() {
        for bytes in [[0x82], [0x40, 0x02], [0x20, 0x00, 0x02], [0x10, 0x00, 0x00, 0x02]] as [[UInt8]] {
            let s = size(bytes)
            XCTAssertEqual(s?.value, 2, "\(bytes)")
            XCTAssertEqual(s?.length, bytes.count)
            XCTAssertEqual(s?.unknown, false)
        }
        XCTAssertEqual(size([0x01, 0, 0, 0, 0, 0, 0, 0x2A])?.value, 42, "8-byte width")
    }

    /// RFC 8794 section 6.2: every VINT_DATA bit set is an unknown size, in any width; one less is not.
    func testUnknownSizes() {
        XCTAssertEqual(size([0xFF])?.unknown, true)
        XCTAssertEqual(size([0x7F, 0xFF])?.unknown, true)
        XCTAssertEqual(size([0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])?.unknown, true)
        XCTAssertEqual(size([0xFE])?.unknown, false)
        XCTAssertEqual(size([0xFE])?.value, 126)
        XCTAssertEqual(size([0x7F, 0xFE])?.value, 16382)
    }

    /// A first byte of 0 (a width above 8) and a varint cut short are not sizes.
    func testMalformedVarInts() {
        XCTAssertNil(size([0x00, 0x81]))
        XCTAssertNil(size([0x40]))
        XCTAssertNil(size([]))
        let id: (UInt32, Int)? = ([0x1A, 0x45, 0xDF, 0xA3] as [UInt8]).withUnsafeBytes { EBMLVarInt.id($0, at: 0).map { ($0.id, $0.length) } }
        XCTAssertEqual(id?.0, 0x1A45DFA3)
        XCTAssertEqual(id?.1, 4)
        let long: Any? = ([0x08, 0, 0, 0, 0] as [UInt8]).withUnsafeBytes { EBMLVarInt.id($0, at: 0) }
        XCTAssertNil(long, "an element ID is at most 4 bytes")
    }

    private func lace(_ header: [UInt8], frames: Int, kind: MatroskaLacing.Kind, total: Int) -> Result<(sizes: [Int], headerLength: Int), MatroskaLacing.LacingProblem> {
        let data = header + [UInt8](repeating: 0xAB, count: total)
        return data.withUnsafeBytes { MatroskaLacing.frameSizes($0, kind: kind) }
    }

    /// RFC 9559 section 10.3.2: Xiph lacing of frames of 800, 500 and 1000 bytes is
    /// 0x02, 255 255 255 35, 255 245.
    func testXiphLacingOfTheSpecExample() throws {
        let r = try lace([0x02, 255, 255, 255, 35, 255, 245], frames: 3, kind: .xiph, total: 2300).get()
        XCTAssertEqual(r.sizes, [800, 500, 1000])
        XCTAssertEqual(r.headerLength, 7)
    }

    /// RFC 9559 section 10.3.3: EBML lacing of the same frames is 0x02, 0x4320 (800),
    /// 0x5ED3 (-300, a signed difference).
    func testEBMLLacingOfTheSpecExample() throws {
        let r = try lace([0x02, 0x43, 0x20, 0x5E, 0xD3], frames: 3, kind: .ebml, total: 2300).get()
        XCTAssertEqual(r.sizes, [800, 500, 1000])
        XCTAssertEqual(r.headerLength, 5)
        let bias: Int64? = ([0x5E, 0xD3] as [UInt8]).withUnsafeBytes { EBMLVarInt.signed($0, at: 0)?.value }
        XCTAssertEqual(bias, -300)
    }

    /// RFC 9559 section 10.3.4: fixed-size lacing of three 800-byte frames is just 0x02.
    func testFixedLacingOfTheSpecExample() throws {
        let r = try lace([0x02], frames: 3, kind: .fixed, total: 2400).get()
        XCTAssertEqual(r.sizes, [800, 800, 800])
        XCTAssertEqual(r.headerLength, 1)
    }

    /// Lacing that does not fit the block is refused, never read past the data.
    func testLacingThatDoesNotFit() {
        guard case .failure = lace([0x02], frames: 3, kind: .fixed, total: 2401) else { return XCTFail("2401 bytes in 3 equal frames") }
        guard case .failure = lace([0x02, 255, 255, 255, 35, 255, 245], frames: 3, kind: .xiph, total: 1000) else { return XCTFail("Xiph sizes above the data") }
        guard case .failure = lace([0x02, 255, 255], frames: 3, kind: .xiph, total: 0) else { return XCTFail("Xiph sizes run past the end") }
        guard case .failure = lace([0x02, 0x43, 0x20, 0x40, 0x00], frames: 3, kind: .ebml, total: 900) else { return XCTFail("EBML difference to a negative size") }
        guard case .failure = lace([0x02, 0x43], frames: 3, kind: .ebml, total: 0) else { return XCTFail("EBML size cut short") }
        guard case .failure = lace([], frames: 1, kind: .xiph, total: 0) else { return XCTFail("no frame count") }
        // One frame (count byte 0) is a valid, if odd, laced block.
        XCTAssertEqual(try? lace([0x00], frames: 1, kind: .ebml, total: 10).get().sizes, [10])
    }

    // MARK: - Files built here

    private func vint(_ v: Int, width: Int = 0) -> [UInt8] {
        let n = width > 0 ? width : (1...8).first { v < (1 << (7 * $0)) - 1 }!
        var out = [UInt8](repeating: 0, count: n)
        for i in 0..<n { out[n - 1 - i] = UInt8((v >> (8 * i)) & 0xFF) }
        out[0] |= UInt8(0x80 >> (n - 1))
        return out
    }

    private func element(_ id: UInt32, _ body: [UInt8]) -> [UInt8] {
        let idBytes = withUnsafeBytes(of: id.bigEndian) { Array($0) }.drop { $0 == 0 }
        return Array(idBytes) + vint(body.count) + body
    }

    private func uint(_ id: UInt32, _ v: Int) -> [UInt8] {
        element(id, v == 0 ? [0] : withUnsafeBytes(of: UInt64(v).bigEndian) { Array($0) }.drop { $0 == 0 }.map { $0 })
    }

    private let unknown: [UInt8] = [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]

    /// EBML header, a Segment of unknown size with Info and two tracks: 1 PCM (s16le mono,
    /// 8 kHz, laced), 2 subtitles (BlockGroups).
    private func header() -> [UInt8] {
        let ebml = element(MKVID.ebml, element(MKVID.docType, Array("matroska".utf8)))
        let info = element(MKVID.info, uint(MKVID.timecodeScale, 1_000_000))
        let pcm = element(MKVID.trackEntry, uint(MKVID.trackNumber, 1) + uint(MKVID.trackType, 2)
            + element(MKVID.codecID, Array("A_PCM/INT/LIT".utf8))
            + element(MKVID.audio, element(MKVID.samplingFrequency, withUnsafeBytes(of: Double(8000).bitPattern.bigEndian) { Array($0) })
                + uint(MKVID.channels, 1) + uint(MKVID.bitDepth, 16)))
        let sub = element(MKVID.trackEntry, uint(MKVID.trackNumber, 2) + uint(MKVID.trackType, 0x11)
            + element(MKVID.codecID, Array("S_TEXT/UTF8".utf8)) + element(MKVID.language, Array("ger".utf8)))
        return ebml + [0x18, 0x53, 0x80, 0x67] + unknown + info + element(MKVID.tracks, pcm + sub)
    }

    private func simpleBlock(track: Int, time: Int16, flags: UInt8, _ payload: [UInt8]) -> [UInt8] {
        element(MKVID.simpleBlock, vint(track) + [UInt8(UInt16(bitPattern: time) >> 8), UInt8(UInt16(bitPattern: time) & 0xFF), flags] + payload)
    }

    private func readAll(_ bytes: [UInt8]) throws -> (packets: [Packet], cut: MediaError?) {
        let d = try MatroskaDemuxer(source: MemorySource(bytes))
        var cut: MediaError?
        var out: [Packet] = []
        while let p = try d.read(untilCut: &cut) { out.append(p) }
        return (out, cut)
    }

    /// Unknown-size Clusters end at the next Cluster; fixed lacing splits a block's duration
    /// (none here: the laces after the first get the previous end); a BlockGroup's
    /// ReferenceBlock clears the key flag and BlockDuration is its duration.
    func testUnknownSizeClustersLacingAndBlockGroups() throws {
        let laced = simpleBlock(track: 1, time: 0, flags: 0x80 | 0x04, [0x01] + [UInt8](repeating: 7, count: 64))   // 2 frames of 32
        let group = element(MKVID.blockGroup, element(MKVID.block, vint(2) + [0, 5, 0] + Array("hi".utf8))
            + uint(MKVID.blockDuration, 40) + element(MKVID.referenceBlock, [0xFF]))
        let cluster1 = [0x1F, 0x43, 0xB6, 0x75] + unknown + uint(MKVID.timecode, 100) + laced + group
        let cluster2 = [0x1F, 0x43, 0xB6, 0x75] + [0x7F, 0xFF] + uint(MKVID.timecode, 200) + simpleBlock(track: 1, time: -4, flags: 0x80, [1, 2, 3, 4])
        let (packets, cut) = try readAll(header() + cluster1 + cluster2)
        XCTAssertNil(cut)
        XCTAssertEqual(packets.map(\.trackIndex), [0, 0, 1, 0])
        XCTAssertEqual(packets.map(\.size), [32, 32, 2, 4])
        // PCM durations: 32 bytes / 2 = 16 samples at 8 kHz = 2 ms
        XCTAssertEqual(packets.map(\.pts), [100, 102, 105, 196])
        XCTAssertEqual(packets.map(\.duration), [2, 2, 40, 0])
        XCTAssertEqual(packets.map(\.isKeyframe), [true, true, true, true], "audio and subtitles are intra-only")
        let d = try MatroskaDemuxer(source: MemorySource(header() + cluster1))
        XCTAssertEqual(d.tracks[1].language, "ger")
        XCTAssertEqual(d.tracks[0].language, "eng", "Matroska's default language")
        XCTAssertEqual(d.tracks[0].parameters.codec, "pcm_s16le")
    }

    /// ContentEncoding header stripping (RFC 9559 section 5.1.4.1.31.8, ContentCompAlgo 3): the
    /// stripped bytes are put back in front of every frame; bzlib compression and encryption
    /// leave the track listed with a reason MediaKit cannot decode it (zlib: InflateTests).
    func testContentEncodings() throws {
        func track(_ number: Int, _ encoding: [UInt8]) -> [UInt8] {
            element(MKVID.trackEntry, uint(MKVID.trackNumber, number) + uint(MKVID.trackType, 0x11)
                + element(MKVID.codecID, Array("S_TEXT/UTF8".utf8)) + element(MKVID.contentEncodings, element(MKVID.contentEncoding, encoding)))
        }
        let strip = track(1, element(MKVID.contentCompression, uint(MKVID.contentCompAlgo, 3) + element(MKVID.contentCompSettings, Array("<b>".utf8))))
        let zlib = track(2, element(MKVID.contentCompression, uint(MKVID.contentCompAlgo, 1)))
        let crypt = track(3, uint(MKVID.contentEncodingType, 1) + element(MKVID.contentEncryption, []))
        let head = element(MKVID.ebml, element(MKVID.docType, Array("webm".utf8))) + [0x18, 0x53, 0x80, 0x67] + unknown
            + element(MKVID.tracks, strip + zlib + crypt)
        let cluster = [0x1F, 0x43, 0xB6, 0x75] + unknown + uint(MKVID.timecode, 0) + simpleBlock(track: 1, time: 0, flags: 0x80, Array("hi</b>".utf8))
        let d = try MatroskaDemuxer(source: MemorySource(head + cluster))
        XCTAssertEqual(d.docType, "webm")
        XCTAssertNil(d.tracks[0].unsupportedReason)
        XCTAssertEqual(try d.read()?.data, Array("<b>hi</b>".utf8))
        XCTAssertTrue(d.tracks[1].unsupportedReason?.contains("compressed with bzlib") == true, "\(d.tracks[1].unsupportedReason ?? "nil")")
        XCTAssertTrue(d.tracks[2].isEncrypted)
        XCTAssertTrue(d.tracks[2].unsupportedReason?.contains("encrypted") == true)
    }

    /// A file cut inside a block: the packets before it, then one `.truncated` naming the element.
    func testCutInsideABlock() throws {
        let block = simpleBlock(track: 1, time: 0, flags: 0x80, [UInt8](repeating: 1, count: 100))
        let file = header() + [0x1F, 0x43, 0xB6, 0x75] + unknown + uint(MKVID.timecode, 0) + block + block
        let (packets, cut) = try readAll(Array(file.dropLast(10)))
        XCTAssertEqual(packets.count, 1)
        XCTAssertEqual(cut?.kind, .truncated)
        XCTAssertEqual(cut?.context, "Segment/Cluster/SimpleBlock")
    }

    /// Hostile sizes: a Cluster child larger than its Cluster (a warning naming the element
    /// and offset, then reading resumes at the next Cluster, as FFmpeg resyncs), a block larger
    /// than the file, a header element above its Segment: errors naming the element and
    /// offset, never an allocation of the declared size.
    func testHostileSizes() throws {
        // A known-size Cluster whose SimpleBlock declares 2^40 bytes, then a good Cluster.
        let huge = [0xA3] + vint(1 << 40, width: 8) + [0x81, 0, 0, 0x80]
        let cluster = element(MKVID.cluster, uint(MKVID.timecode, 0) + huge)
        let good = element(MKVID.cluster, uint(MKVID.timecode, 40) + simpleBlock(track: 1, time: 0, flags: 0x80, [1, 2, 3, 4]))
        let d = try MatroskaDemuxer(source: MemorySource(header() + cluster + good))
        var cut: MediaError?
        var packets: [Packet] = []
        while let p = try d.read(untilCut: &cut) { packets.append(p) }
        XCTAssertNil(cut)
        XCTAssertEqual(packets.map(\.pts), [40])
        let w = d.warnings.first
        XCTAssertEqual(w?.kind, .invalidData)
        XCTAssertEqual(w?.context, "Segment/Cluster")
        XCTAssertEqual(w?.offset, Int64(header().count + cluster.count - huge.count))
        XCTAssertTrue(w?.message.contains("resumes at the next Cluster") ?? false, w?.message ?? "no warning")
        // The same block in an unknown-size Cluster: the file ends first (a cut, not an allocation).
        let (unknownPackets, unknownCut) = try readAll(header() + [0x1F, 0x43, 0xB6, 0x75] + unknown + uint(MKVID.timecode, 0) + huge)
        XCTAssertEqual(unknownPackets.count, 0)
        XCTAssertEqual(unknownCut?.kind, .truncated)
        // A TrackEntry child declaring more than its parent.
        var bad = header()
        let codecAt = bad.firstIndex(of: 0x86)!   // CodecID of the first track
        bad[codecAt + 1] = 0xFE
        XCTAssertThrowsError(try MatroskaDemuxer(source: MemorySource(bad))) { e in
            let m = e as? MediaError
            XCTAssertEqual(m?.kind, .invalidData)
            XCTAssertEqual(m?.context, "Segment/Tracks/TrackEntry[0]")
            XCTAssertEqual(m?.offset, Int64(codecAt))
        }
        // Not Matroska.
        XCTAssertThrowsError(try MatroskaDemuxer(source: MemorySource(Array("OggS....".utf8))))
        XCTAssertEqual(ContainerFormat.matroskaProbeScore(header()), 100)
        XCTAssertEqual(ContainerFormat.matroskaProbeScore(Array("OggS....".utf8)), 0)
    }

    /// MatroskaMuxer's output read back by MatroskaDemuxer: the same payloads, timestamps in
    /// milliseconds, key flags, Cues and Duration; a codec outside WebM is refused there.
    func testMuxerRoundTrip() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-mkv-\(getpid())")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("out.mka").path
        let muxer = try MatroskaMuxer(path: path)
        let params = CodecParameters(mediaType: .audio, codec: "pcm_s16le", sampleRate: 8000, channels: 1, bitsPerCodedSample: 16)
        let t = try muxer.addTrack(params, timeBase: Rational(1, 8000))
        var written: [[UInt8]] = []
        for i in 0..<50 {
            let data = (0..<320).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) }
            written.append(data)
            try muxer.write(Packet(trackIndex: t, pts: Int64(i) * 160, dts: Int64(i) * 160, duration: 160, isKeyframe: true,
                                   data: data, timeBase: Rational(1, 8000)))
        }
        try muxer.finish()
        let d = try MatroskaDemuxer(path: path)
        XCTAssertEqual(d.tracks.first?.parameters.codec, "pcm_s16le")
        XCTAssertEqual(d.duration ?? 0, 1.0, accuracy: 0.001)
        var read: [Packet] = []
        while let p = try d.read() { read.append(p) }
        XCTAssertEqual(read.map(\.data), written)
        XCTAssertEqual(read.map(\.pts), (0..<50).map { Int64($0) * 20 })
        try d.seek(to: 0.5)
        XCTAssertEqual(try d.read()?.pts, 500)
        let webm = try MatroskaMuxer(path: dir.appendingPathComponent("x.webm").path)
        XCTAssertThrowsError(try webm.addTrack(params, timeBase: Rational(1, 8000))) { e in
            XCTAssertEqual((e as? MediaError)?.kind, .unsupported)
        }
        webm.cancel()
    }
}
