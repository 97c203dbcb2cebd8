import Foundation
import XCTest
@testable import MediaKit

/// ``NonReferencePictures`` against FFmpeg's own parse of the same packets (the
/// `trace_headers` bitstream filter prints the NAL unit headers of each packet, in file order):
/// H.264 with a B-pyramid (MP4: length-prefixed units; MPEG-TS: Annex B) and HEVC as x265
/// writes it (MP4). The expected answer is the rule of the specs applied to FFmpeg's fields
/// (H.264 7.4.1: `nal_ref_idc` 0 in every slice; H.265 7.4.2.2: a sub-layer non-reference
/// type in the highest sub-layer of `sps_max_sub_layers_minus1`). Then the frames a batch
/// search and a seek return while the session leaves those packets undecoded, against a
/// decode of every packet (the same input decoded another way).
final class NonReferencePicturesTests: XCTestCase {
    private var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mk-nonref-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try FileManager.default.removeItem(at: folder)
    }

    /// Runs ffmpeg with `args`; returns what it wrote on stderr (the trace goes there).
    private func ffmpeg(_ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["ffmpeg", "-hide_banner", "-nostdin", "-y"] + args
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "ffmpeg \(args.joined(separator: " ")): \(text.suffix(2000))")
        return text
    }

    /// A 2 s 160x120 video-only file of `codec` options in `container`.
    private func make(_ name: String, _ codec: [String]) throws -> String {
        let path = folder.appendingPathComponent(name).path
        _ = try ffmpeg(["-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=30", "-t", "2"] + codec + ["-an", path])
        return path
    }

    /// FFmpeg's answer for each packet of `path`, in file order: the spec's rule over the NAL
    /// unit header fields `trace_headers` prints.
    private func traced(_ path: String, hevc: Bool) throws -> [Bool] {
        let text = try ffmpeg(["-v", "info", "-i", path, "-map", "0:v:0", "-c", "copy", "-bsf:v", "trace_headers", "-f", "null", "-"])
        func value(_ line: Substring) -> Int? { line.split(separator: "=").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } }
        var maxSubLayersMinus1 = 0
        // Per packet: (type, ref_idc or temporal id) of each NAL unit.
        var packets: [[(type: Int, field: Int)]] = []
        var units: [(type: Int, field: Int)] = []
        var pendingType: Int?
        var inPacket = false
        // The progress line shares a line with the trace: split on the filter's tag.
        for piece in text.components(separatedBy: "[trace_headers").map({ Substring($0) }) {
            let line = piece.split(separator: "\n").first ?? ""
            if line.contains("Packet:") {
                if inPacket { packets.append(units) }
                units = []
                inPacket = true
            } else if line.contains("sps_max_sub_layers_minus1"), let v = value(line) {
                maxSubLayersMinus1 = max(maxSubLayersMinus1, v)
            } else if line.contains(" nal_unit_type "), let v = value(line) {
                if hevc { pendingType = v } else if let ref = pendingType { units.append((v, ref)); pendingType = nil }
            } else if !hevc && line.contains(" nal_ref_idc "), let v = value(line) {
                pendingType = v   // H.264 prints nal_ref_idc before nal_unit_type
            } else if hevc && line.contains(" nuh_temporal_id_plus1 "), let v = value(line), let type = pendingType {
                units.append((type, v - 1))
                pendingType = nil
            }
        }
        if inPacket { packets.append(units) }
        return packets.map { units in
            if hevc {
                let vcl = units.filter { $0.type < 32 }
                return !vcl.isEmpty && vcl.allSatisfy { $0.type < 16 && $0.type % 2 == 0 && $0.field == maxSubLayersMinus1 }
            }
            let slices = units.filter { (1...5).contains($0.type) }
            return !slices.isEmpty && slices.allSatisfy { $0.type != 5 && $0.field == 0 }
        }
    }

    /// Ours for each packet of `path`'s video track, in file order.
    private func ours(_ path: String) throws -> [Bool] {
        let demuxer = try MediaRegistry.shared.makeDemuxer(path: path)
        let track = try XCTUnwrap(demuxer.tracks.first { $0.mediaType == .video })
        let test = try XCTUnwrap(NonReferencePictures(track: track), "\(track.parameters.codec)")
        var answers: [Bool] = []
        while let p = try demuxer.read(track: track.index) { answers.append(test.isNonReference(p.data)) }
        return answers
    }

    private func check(_ name: String, _ codec: [String], hevc: Bool) throws {
        let path = try make(name, codec)
        let expected = try traced(path, hevc: hevc)
        XCTAssertEqual(expected.count, 60, "\(name): ffmpeg's packets")
        XCTAssertTrue(expected.contains(true) && expected.contains(false), "\(name) holds both kinds: \(expected)")
        XCTAssertEqual(try ours(path), expected, name)
    }

    private static let h264 = ["-c:v", "libx264", "-bf", "3", "-x264-params", "b-pyramid=normal", "-g", "30"]

    func testH264LengthPrefixedInMP4() throws { try check("pyramid.mp4", Self.h264, hevc: false) }

    func testH264AnnexBInMPEGTS() throws { try check("pyramid.ts", Self.h264, hevc: false) }

    func testHEVCInMP4() throws {
        try check("x265.mp4", ["-c:v", "libx265", "-x265-params", "log-level=error", "-g", "30"], hevc: true)
    }

    /// The spec's cases on hand-made units: an IDR slice is always a reference, a packet with
    /// no slice (parameter sets only) or one it cannot walk is kept, one reference field in a
    /// packet keeps it, and HEVC's TRAIL_N below the highest sub-layer is kept.
    func testHandMadeUnits() throws {
        let avc = try XCTUnwrap(NonReferencePictures(codec: "h264", extradata: []))
        func annexB(_ units: [[UInt8]]) -> [UInt8] { units.flatMap { [0, 0, 0, 1] + $0 } }
        XCTAssertTrue(avc.isNonReference(annexB([[0x09, 0xF0], [0x01, 0x88]])))          // AUD, slice nal_ref_idc 0
        XCTAssertFalse(avc.isNonReference(annexB([[0x21, 0x88]])))                        // slice nal_ref_idc 1
        XCTAssertFalse(avc.isNonReference(annexB([[0x05, 0x88]])))                        // IDR (ref_idc 0 is not allowed)
        XCTAssertFalse(avc.isNonReference(annexB([[0x01, 0x88], [0x41, 0x88]])))          // two fields, the second a reference
        XCTAssertFalse(avc.isNonReference(annexB([[0x67, 0x42], [0x68, 0xCE]])))          // SPS + PPS: no slice
        XCTAssertFalse(avc.isNonReference([0x01, 0x88]))                                  // no start code
        let avcC: [UInt8] = [1, 0x42, 0, 0x1E, 0xFF, 0xE0, 0]                             // 4-byte lengths, no sets
        let lengths = try XCTUnwrap(NonReferencePictures(codec: "h264", extradata: avcC))
        XCTAssertTrue(lengths.isNonReference([0, 0, 0, 2, 0x01, 0x88]))
        XCTAssertFalse(lengths.isNonReference([0, 0, 0, 9, 0x01, 0x88]))                  // length past the end
        // HEVC: an SPS (type 33) whose sps_max_sub_layers_minus1 is 2, in Annex B extradata.
        let hevc = try XCTUnwrap(NonReferencePictures(codec: "hevc", extradata: annexB([[0x42, 0x01, 0x04]])))
        XCTAssertFalse(hevc.isNonReference(annexB([[0x00, 0x01, 0xAF]])))                 // TRAIL_N, TemporalId 0
        XCTAssertTrue(hevc.isNonReference(annexB([[0x00, 0x03, 0xAF]])))                  // TRAIL_N, TemporalId 2
        XCTAssertFalse(hevc.isNonReference(annexB([[0x02, 0x03, 0xAF]])))                 // TRAIL_R
        XCTAssertNil(NonReferencePictures(codec: "hevc", extradata: annexB([[0x40, 0x01, 0x0C]])), "no SPS: never judged")
        XCTAssertNil(NonReferencePictures(codec: "av1", extradata: []))
    }

    /// Every frame of `session`'s track read on from where `demuxer` stands: pts and a hash of
    /// the picture, in presentation order.
    private func decodeAll(_ session: DecodeSession, _ demuxer: Demuxer) throws -> [(pts: Int64, hash: UInt64)] {
        var all: [(pts: Int64, hash: UInt64)] = []
        func keep(_ f: Frame) {
            var h = FNV1a()
            h.add(presentedBytesOf: f)
            all.append((f.pts, h.value))
        }
        while let p = try demuxer.read(track: session.track.index) {
            while try session.send(p) == .receiveFirst {
                while let f = try session.receive() { keep(f) }
            }
            while let f = try session.receive() { keep(f) }
        }
        try session.flush()
        while let f = try session.receive() { keep(f) }
        return all.sorted { $0.pts < $1.pts }
    }

    /// Ten frames by index out of the B-pyramid file, and a decode on from a seek: the pictures
    /// are those of a decode of every packet, while packets were left out.
    func testBatchSearchAndSeekSkipThemAndGiveTheSameFrames() throws {
        let path = try make("batch.mp4", Self.h264)
        let registry = MediaRegistry()
        registry.loadDefaultLocations()
        let demuxer = try MP4Demuxer(path: path)
        let track = try XCTUnwrap(demuxer.tracks.first)
        let full = try DecodeSession(track: track, registry: registry)
        let all = try decodeAll(full, demuxer)
        XCTAssertEqual(all.count, 60)
        XCTAssertEqual(full.skippedNonReference, 0, "nothing is discarded in a decode from the start")

        // From 1.5 s (frame 45), the key frame at frame 30 before it.
        let seeking = try DecodeSession(track: track, registry: registry)
        let from = try MP4Demuxer(path: path)
        try from.seek(to: 1.5 - DecodeSession.seekPreroll)
        try seeking.seek(to: 1.5)
        let tail = try decodeAll(seeking, from)
        XCTAssertEqual(tail.map(\.pts), all[45...].map(\.pts))
        XCTAssertEqual(tail.map(\.hash), all[45...].map(\.hash))
        XCTAssertGreaterThan(seeking.skippedNonReference, 0, "no packet before the seek's target was left out")

        let indices = [58, 3, 17, 29, 44, 9, 5, 31, 52, 17]
        let session = try DecodeSession(track: track, registry: registry)
        let frames = try session.frames(atIndices: indices, from: try MP4Demuxer(path: path))
        for (k, i) in indices.enumerated() {
            let f = try XCTUnwrap(frames[k], "frame \(i)")
            var h = FNV1a()
            h.add(presentedBytesOf: f)
            XCTAssertEqual(f.pts, all[i].pts, "frame \(i)")
            XCTAssertEqual(h.value, all[i].hash, "frame \(i)")
        }
        XCTAssertGreaterThan(session.skippedNonReference, 0, "no packet was left out")
    }
}
