import Foundation
import XCTest
@testable import MediaKit

/// CAF on hand-made files: the spec's variable-length integers, both forms of the AAC cookie
/// (Apple's bare ES_Descriptor and an `esds` payload), a file written by ``MuxerFormat/caf``
/// read back from memory and from a 3-byte-a-read pipe with the packet table first, and a
/// data chunk of unknown size. The oracle tests (Tests/oracle/test_caf.py) compare real files
/// with ffprobe and ffmpeg.
final class CAFTests: XCTestCase {
    func testVarintsAreTheSpecs() {
        // 7 bits a byte, most significant first, the top bit on every byte but the last.
        XCTAssertEqual(CAFChunks.varint(0), [0])
        XCTAssertEqual(CAFChunks.varint(127), [0x7F])
        XCTAssertEqual(CAFChunks.varint(128), [0x81, 0x00])
        XCTAssertEqual(CAFChunks.varint(1572), [0x8C, 0x24])
        for v: Int64 in [0, 1, 300, 1 << 20, Int64(Int32.max), 1 << 62] {
            var i = 0
            XCTAssertEqual(CAFChunks.readVarint(CAFChunks.varint(v), &i), v)
        }
        var i = 0
        XCTAssertNil(CAFChunks.readVarint([0x80, 0x80], &i), "ends inside the number")
    }

    func testAACCookieInBothForms() throws {
        let asc: [UInt8] = [0x12, 0x10]
        let es = ESDescriptor.build(objectType: 0x40, specificInfo: asc, bitRate: 128_000, esID: 0)
        XCTAssertEqual(try CAFCodec.extradata(codec: "aac", cookie: es).get(), asc)
        XCTAssertEqual(try CAFCodec.extradata(codec: "aac", cookie: [0, 0, 0, 0] + es).get(), asc)
        XCTAssertThrowsError(try CAFCodec.extradata(codec: "aac", cookie: [1, 2, 3]).get())
        // ALAC: the 24-byte config and the old frma / alac wrapped form give the same atom.
        let config: [UInt8] = [0, 0, 0x10, 0, 0, 16, 40, 10, 14, 2, 0, 255, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xAC, 0x44]
        let atom = try CAFCodec.extradata(codec: "alac", cookie: config).get()
        XCTAssertEqual(atom.count, 36)
        XCTAssertEqual(try CAFCodec.extradata(codec: "alac", cookie: [0, 0, 0, 12] + Array("frmaalac".utf8) + atom).get(), atom)
    }

    /// An AAC file written through the catalogue, priming 1024 and 100 frames of signal.
    private func aacFile() throws -> [UInt8] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("caf-\(UUID().uuidString).caf").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let m = try MuxerFormat.caf.make(path: path)
        let p = CodecParameters(mediaType: .audio, codec: "aac", extradata: [0x12, 0x10], sampleRate: 44100, channels: 2)
        _ = try m.addEncodedTrack(p, timeBase: Rational(1, 44100), encoderDelay: 1024)
        try m.setGapless(track: 0, presentedDuration: 2000, padding: 48)
        for k in 0..<3 {
            try m.write(Packet(trackIndex: 0, pts: Int64(k) * 1024, dts: Int64(k) * 1024, duration: 1024, isKeyframe: true,
                               data: [UInt8](repeating: UInt8(k), count: 10 + k * 200), timeBase: Rational(1, 44100)))
        }
        try m.finish()
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// The chunks of a file: (type, body).
    private func chunks(_ b: [UInt8]) -> [(String, [UInt8])] {
        var out: [(String, [UInt8])] = []
        var at = 8
        while at + 12 <= b.count {
            let size = Int(Int64(bitPattern: CAFChunks.be64(b, at + 4)))
            out.append((String(decoding: b[at..<at + 4], as: UTF8.self), Array(b[(at + 12)..<(at + 12 + size)])))
            at += 12 + size
        }
        return out
    }

    private func packets(_ d: Demuxer) throws -> [[Int64]] {
        var out: [[Int64]] = []
        while let p = try d.read() { out.append([p.pts, p.duration, Int64(p.data.count), Int64(p.data.first ?? 99)]) }
        return out
    }

    func testWrittenFileReadsBackWithItsGaplessFacts() throws {
        let bytes = try aacFile()
        XCTAssertEqual(chunks(bytes).map(\.0), ["desc", "chan", "kuki", "data", "pakt"])
        let d = try CAFDemuxer(source: MemorySource(bytes))
        let t = d.tracks[0]
        XCTAssertEqual(t.parameters.codec, "aac")
        XCTAssertEqual(t.parameters.extradata, [0x12, 0x10])
        XCTAssertEqual(t.parameters.channelMask, 0x3)
        XCTAssertEqual(t.encoderDelay, 1024)
        XCTAssertEqual(t.encoderPadding, 48)          // 3 packets of 1024 frames, less 1024 priming and 2000 of signal
        XCTAssertEqual(t.duration, 3072)
        XCTAssertEqual(try packets(d), [[0, 1024, 10, 0], [1024, 1024, 210, 1], [2048, 1024, 410, 2]])
    }

    /// The packet table before the audio and a data chunk of size -1 (a recording still being
    /// written): the same packets from memory and from a pipe read 3 bytes at a time; the
    /// file as written (packet table after the audio) from a pipe is an error naming the table.
    func testPacketTableFirstAndUnknownDataSizeFromAPipe() throws {
        let bytes = try aacFile()
        let cs = chunks(bytes)
        var live = Array(bytes[0..<8])
        for (type, body) in cs where type != "data" && type != "pakt" { live += CAFChunks.header(type, size: Int64(body.count)) + body }
        let pakt = cs.first { $0.0 == "pakt" }!.1, data = cs.first { $0.0 == "data" }!.1
        live += CAFChunks.header("pakt", size: Int64(pakt.count)) + pakt + CAFChunks.header("data", size: -1) + data
        let want = try packets(CAFDemuxer(source: MemorySource(bytes)))
        XCTAssertEqual(try packets(CAFDemuxer(source: MemorySource(live))), want)
        XCTAssertEqual(try packets(CAFDemuxer(source: pipe(live))), want)
        XCTAssertThrowsError(try CAFDemuxer(source: pipe(bytes))) { e in
            XCTAssertTrue((e as? MediaError)?.message.contains("packet table (pakt)") ?? false, "\(e)")
        }
    }

    /// An `info` chunk (a count, then NUL-terminated key / value pairs) after the audio, and a
    /// `free` chunk before it: the pairs in file order; a count past the chunk's pairs keeps those there are.
    func testInformationChunk() throws {
        let bytes = try aacFile()
        let info = CAFChunks.put32(3) + Array("title\0Sine\0encoder\0MediaKit\0".utf8)
        let cs = chunks(bytes)
        var file = Array(bytes[0..<8])
        for (type, body) in cs {
            if type == "data" { file += CAFChunks.header("free", size: 5) + [0, 0, 0, 0, 0] }
            file += CAFChunks.header(type, size: Int64(body.count)) + body
        }
        file += CAFChunks.header("info", size: Int64(info.count)) + info
        let d = try CAFDemuxer(source: MemorySource(file))
        XCTAssertEqual(d.information.map(\.key), ["title", "encoder"])
        XCTAssertEqual(d.information.map(\.value), ["Sine", "MediaKit"])
        XCTAssertEqual(try packets(d).count, 3)
    }

    private func pipe(_ bytes: [UInt8]) -> ByteSource {
        var offset = 0
        return CallbackSource(name: "-", size: nil, read: { buffer in
            let n = min(buffer.count, bytes.count - offset, 3)
            for k in 0..<n { buffer[k] = bytes[offset + k] }
            offset += n
            return n
        }, seek: nil)
    }
}
