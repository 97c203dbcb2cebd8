import Foundation
import XCTest
@testable import MediaKit

/// H.264 / HEVC in Annex B form into MP4 and Matroska (``AnnexBConversion``): the configuration
/// records against FFmpeg's, the NAL unit splitting at its edges, the refusals, and the muxers
/// end to end read back by our demuxers. Tests/oracle/test_annexb_mux.py compares whole files
/// with FFmpeg's.
final class AnnexBMuxTests: XCTestCase {
    private func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var i = s.startIndex
        while i < s.endIndex {
            let j = s.index(i, offsetBy: 2)
            out.append(UInt8(s[i..<j], radix: 16)!)
            i = j
        }
        return out
    }

    // The parameter sets x264 wrote (`ffmpeg -f lavfi -i testsrc2=size=320x240:rate=25 -t 2
    // -c:v libx264 -bf 2 -g 25 -f h264 x.h264`, High profile, level 1.3) and the avcC
    // `ffmpeg -i x.h264 -c copy x.mp4` stored for them (FFmpeg 5.1), with its high-profile
    // trailer (4:2:0, 8 bits, no SPS extension).
    private lazy var x264SPS = hex("6764000dacd94141fb011000000300100000030320f1429960")
    private lazy var x264PPS = hex("68ebe3cb22c0")
    private let ffmpegAVCC = "0164000dffe100196764000dacd94141fb011000000300100000030320f142996001000668ebe3cb22c0fdf8f800"

    // The same picture size through libx265 (`-c:v libx265 -f hevc x.hevc`): VPS, SPS, PPS, and
    // the hvcC of `ffmpeg -i x.hevc -c copy x.mp4` (an hev1 entry: arrays not complete).
    private lazy var x265VPS = hex("40010c01ffff01600000030090000003000003003c959809")
    private lazy var x265SPS = hex("42010101600000030090000003000003003ca00a080f165959a4932bc05a020000030002000003003210")
    private lazy var x265PPS = hex("4401c172b46240")
    private let ffmpegHVCC = "0101600000009000000000003cf000fcfdf8f800000f03200001001840010c01ffff01600000030090000003000003003c959809210001002a42010101600000030090000003000003003ca00a080f165959a4932bc05a02000003000200000300321022000100074401c172b46240"

    private func annexB(_ units: [[UInt8]], long: Bool = true) -> [UInt8] {
        units.flatMap { (long ? [0, 0, 0, 1] : [0, 0, 1]) + $0 }
    }

    private func hexString(_ b: [UInt8]) -> String { b.map { String(format: "%02x", $0) }.joined() }

    // MARK: records

    func testAVCRecordIsFFmpegs() throws {
        let record = try AVCConfigurationRecord.make(units: [x264SPS[...], x264PPS[...]])
        XCTAssertEqual(hexString(record), ffmpegAVCC)
        // From Annex B extradata with 3- and 4-byte start codes alike.
        for long in [true, false] {
            let r = try AnnexBConversion.record(codec: "h264", extradata: annexB([x264SPS, x264PPS], long: long), completeness: false, track: 0)
            XCTAssertEqual(hexString(r), ffmpegAVCC)
        }
    }

    func testAVCBaselineHasNoTrailer() throws {
        // Constrained Baseline (profile 66): FFmpeg writes no chroma / bit depth trailer.
        let sps = hex("6742c00dd90141fb0110"), pps = hex("68cb83cb20")
        let record = try AVCConfigurationRecord.make(units: [sps[...], pps[...]])
        XCTAssertEqual(record, [1, 0x42, 0xC0, 0x0D, 0xFF, 0xE1, 0, UInt8(sps.count)] + sps + [1, 0, UInt8(pps.count)] + pps)
    }

    func testAVCHigh422TrailerFromTheSPS() throws {
        // A High 4:2:2 10-bit SPS (profile 122): chroma_format_idc 2, bit depths 10 (ue 2 -> 011).
        // profile 122, constraints 0, level 30, then ue: sps id 0 (1), chroma 2 (011),
        // luma depth-8 = 2 (011), chroma depth-8 = 2 (011), then padding ones.
        let sps: [UInt8] = [0x67, 122, 0, 30, 0b1011_0110, 0b1111_1111]
        let record = try AVCConfigurationRecord.make(units: [sps[...], x264PPS[...]])
        XCTAssertEqual(Array(record.suffix(4)), [0xFC | 2, 0xF8 | 2, 0xF8 | 2, 0])
    }

    func testHEVCRecordIsFFmpegs() throws {
        let record = try HEVCConfigurationRecord.make(units: [x265VPS[...], x265SPS[...], x265PPS[...]], completeness: false)
        XCTAssertEqual(hexString(record), ffmpegHVCC)
        // hvc1: the parameter-set arrays complete (bit 7 of each array's type byte).
        let complete = try HEVCConfigurationRecord.make(units: [x265VPS[...], x265SPS[...], x265PPS[...]], completeness: true)
        var expected = hex(ffmpegHVCC)
        for (i, b) in expected.enumerated() where i >= 23 && [0x20, 0x21, 0x22].contains(b) && expected[i + 1] == 0 && expected[i + 2] == 1 {
            expected[i] = b | 0x80
        }
        XCTAssertEqual(hexString(complete), hexString(expected))
    }

    func testHEVCRExtWithHRDAndSubLayers() throws {
        // libx265 4:4:4 10-bit (RExt), hrd=1 and two temporal sub-layers
        // (`-pix_fmt yuv444p10le -x265-params hrd=1:vbv-bufsize=2000:vbv-maxrate=1000:temporal-layers=1`):
        // the sub-layer profile_tier_level and the VUI's hrd_parameters are read through.
        let vps = hex("40010c02ffff0408000003009c0800000300003c00009594aca048")
        let sps = hex("4201020408000003009c0800000300003c000090014101e26cb2b295964932bc05a0200000030020000003032c039acbc001e848003d0970007a12000f4244")
        let pps = hex("4401c172860c4624")
        let r = try HEVCConfigurationRecord.make(units: [vps[...], sps[...], pps[...]], completeness: false)
        // FFmpeg 5.1 writes 0104080000009c08000000003c f002 ff fe fa fa 0000 13 (its
        // min_spatial_segmentation_idc 2 and parallelismType 3 come from misreading the HRD
        // parameters: Tests/oracle/test_annexb_mux.py KNOWN_RECORD_DIFFERENCES). The SPS has no
        // bitstream restrictions: 0 and 0. Profile RExt (4), level 60, 4:4:4, 10 bits, two
        // temporal layers, not nested, lengthSizeMinusOne 3.
        XCTAssertEqual(hexString(Array(r.prefix(23))), "0104080000009c08000000003cf000fcfffafa00001303")
    }

    func testRecordRefusals() {
        func fails(_ message: String, _ body: () throws -> [UInt8]) {
            XCTAssertThrowsError(try body()) { e in
                XCTAssertTrue("\(e)".contains(message), "\(e) does not say \(message)")
            }
        }
        fails("no sequence parameter set") { try AVCConfigurationRecord.make(units: [self.x264PPS[...]]) }
        fails("no picture parameter set") { try AVCConfigurationRecord.make(units: [self.x264SPS[...]]) }
        fails("too short") { try AVCConfigurationRecord.make(units: [[0x67, 100][...], self.x264PPS[...]]) }
        fails("ends before its chroma format") { try AVCConfigurationRecord.make(units: [[0x67, 100, 0, 13][...], self.x264PPS[...]]) }
        let huge = [0x67, 66, 0, 13] + [UInt8](repeating: 0xFF, count: 70000)
        fails("65535") { try AVCConfigurationRecord.make(units: [huge[...], self.x264PPS[...]]) }
        fails("32 SPS units") { try AVCConfigurationRecord.make(units: Array(repeating: self.x264SPS[...], count: 32) + [self.x264PPS[...]]) }
        fails("NAL unit type 35") {
            try HEVCConfigurationRecord.make(units: [[0x46, 0x01, 0x50][...], self.x265VPS[...], self.x265SPS[...], self.x265PPS[...]], completeness: false)
        }
        fails("no PPS") { try HEVCConfigurationRecord.make(units: [self.x265VPS[...], self.x265SPS[...]], completeness: false) }
        fails("the SPS (unit 1) ends early") {
            try HEVCConfigurationRecord.make(units: [self.x265VPS[...], self.x265SPS.prefix(20), self.x265PPS[...]], completeness: false)
        }
        fails("track 3 (hevc): its Annex B extradata") {
            try AnnexBConversion.record(codec: "hevc", extradata: self.annexB([self.x265VPS]), completeness: false, track: 3)
        }
    }

    func testDamagedParameterSetsAreErrorsNotTraps() {
        // Every parameter set of the fixtures with bytes flipped, cut short or grown: each record
        // is built or refused with an error; nothing traps (out-of-range reads, narrowing).
        var rng = SeededRandom(state: 29)
        let sets: [[UInt8]] = [x264SPS, x264PPS, x265VPS, x265SPS, x265PPS]
        var built = 0, refused = 0
        for _ in 0..<3000 {
            var damaged = sets.map { u -> [UInt8] in
                var u = u
                for _ in 0..<Int.random(in: 0...3, using: &rng) where !u.isEmpty {
                    u[Int.random(in: 1..<max(2, u.count), using: &rng) % u.count] = UInt8.random(in: 0...255, using: &rng)
                }
                if Bool.random(using: &rng) { u = Array(u.prefix(Int.random(in: 1...u.count, using: &rng))) }
                return u
            }
            damaged[Int.random(in: 0..<damaged.count, using: &rng)] += (0..<Int.random(in: 0...8, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            for make in [{ try AVCConfigurationRecord.make(units: [damaged[0][...], damaged[1][...]]) },
                         { try HEVCConfigurationRecord.make(units: [damaged[2][...], damaged[3][...], damaged[4][...]], completeness: true) }] {
                do { _ = try make(); built += 1 } catch { refused += 1 }
            }
        }
        XCTAssertGreaterThan(built, 0)
        XCTAssertGreaterThan(refused, 0)
    }

    // MARK: NAL units

    func testUnitSplittingEdges() {
        let a: [UInt8] = [0x65, 1, 2], b: [UInt8] = [0x41, 3]
        // 3- and 4-byte start codes, bytes before the first one, no start code at all.
        XCTAssertEqual(AnnexB.nalUnits(in: [9, 9] + [0, 0, 1] + a + [0, 0, 0, 1] + b).count, 2)
        XCTAssertEqual(AnnexB.sampleUnits(in: [9, 9, 9]), [])
        XCTAssertEqual(AnnexB.nalUnits(in: [0, 0]), [])
        let bytes: [UInt8] = [0, 0, 0, 1] + a + [0, 0, 0, 1] + b
        XCTAssertEqual(AnnexB.sampleUnits(in: bytes), [4..<7, 11..<13])
        // The first zero of a 4-byte start code: FFmpeg's muxers leave it out, its stream
        // splitter (extract_extradata) keeps it.
        XCTAssertEqual(AnnexB.rawUnits(in: bytes), [4..<8, 11..<13])
        // Trailing zeros: a run of five before a start code keeps two in FFmpeg's sample;
        // those at the end of the packet stay; nalUnits drops them all.
        let padded: [UInt8] = [0, 0, 1] + a + [0, 0, 0, 0, 0, 1] + b + [0, 0]
        XCTAssertEqual(AnnexB.sampleUnits(in: padded), [3..<8, 12..<16])
        XCTAssertEqual(AnnexB.nalUnits(in: padded), [3..<6, 12..<14])
        // Empty units (two start codes in a row) are left out.
        XCTAssertEqual(AnnexB.sampleUnits(in: [0, 0, 1, 0, 0, 1] + a), [6..<9])
    }

    /// The vectorized start-code scan (16 positions a step) against the definition, byte by
    /// byte: start codes at every offset around the 16-byte steps and the end, runs of zeros,
    /// 00 00 00 01, and random bytes (seeded) where zeros and ones are frequent.
    func testStartCodeScanMatchesTheDefinition() {
        func naive(_ b: [UInt8]) -> [Int] {
            var found: [Int] = [], i = 0
            while i + 2 < b.count {
                if b[i] == 0 && b[i + 1] == 0 && b[i + 2] == 1 { found.append(i); i += 3 } else { i += 1 }
            }
            return found
        }
        for length in [0, 1, 2, 3, 4, 15, 16, 17, 18, 19, 31, 32, 33, 34, 35, 50, 64, 100] {
            for at in 0..<max(1, length - 2) where length >= 3 {
                var b = [UInt8](repeating: 7, count: length)
                b[at] = 0; b[at + 1] = 0; b[at + 2] = 1
                XCTAssertEqual(AnnexB.startCodes(in: b), naive(b), "length \(length), code at \(at)")
                XCTAssertEqual(AnnexB.startCodes(in: b), [at])
            }
            XCTAssertEqual(AnnexB.startCodes(in: [UInt8](repeating: 0, count: length)), [])
        }
        var state: UInt64 = 0x9E3779B97F4A7C15
        for round in 0..<200 {
            let length = Int(state % 700)
            var b = [UInt8](repeating: 0, count: length)
            for i in 0..<length {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                let r = Int(state >> 59)   // 0 ... 31
                b[i] = r < 12 ? 0 : r < 18 ? 1 : UInt8(truncatingIfNeeded: state >> 40)
            }
            XCTAssertEqual(AnnexB.startCodes(in: b), naive(b), "round \(round)")
            let units = AnnexB.nalUnits(in: b)
            XCTAssertTrue(units.allSatisfy { $0.lowerBound >= 3 && $0.upperBound <= length })
        }
    }

    func testSampleConversion() throws {
        let a: [UInt8] = [0x65, 1, 2], b: [UInt8] = [0x41, 3]
        XCTAssertEqual(try AnnexBConversion.sample([0, 0, 0, 1] + a + [0, 0, 1] + b, track: 0, codec: "h264"),
                       [0, 0, 0, 3] + a + [0, 0, 0, 2] + b)
        XCTAssertEqual(try AnnexBConversion.sample([], track: 0, codec: "h264"), [])
        XCTAssertThrowsError(try AnnexBConversion.sample([0, 0, 0, 3] + a, track: 2, codec: "hevc")) { e in
            XCTAssertTrue("\(e)".contains("track 2 (hevc)") && "\(e)".contains("no start code"), "\(e)")
        }
        XCTAssertThrowsError(try AnnexBConversion.record(codec: "h264", firstPacket: [0, 0, 1] + a, completeness: false, track: 1)) { e in
            XCTAssertTrue("\(e)".contains("track 1 (h264)") && "\(e)".contains("no parameter sets"), "\(e)")
        }
        XCTAssertThrowsError(try AnnexBConversion.record(codec: "h264", firstPacket: [0, 0, 0, 3] + a, completeness: false, track: 1)) { e in
            XCTAssertTrue("\(e)".contains("does not start with a start code"), "\(e)")
        }
    }

    // MARK: muxers

    private func tempPath(_ name: String) -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("mk-annexb-\(getpid())-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent(name).path
    }

    /// Two access units: parameter sets + an IDR slice, then a non-IDR slice (slice bytes made
    /// up: the muxers do not decode them), with x264's start codes: 4 bytes before the
    /// parameter sets, 3 before the slices.
    private var accessUnits: [[UInt8]] {
        [annexB([x264SPS, x264PPS]) + annexB([[0x65, 0x88, 0x84, 0x21]], long: false), annexB([[0x41, 0x9A, 0x02]], long: false)]
    }

    private func write(_ muxer: Muxer, extradata: [UInt8]) throws {
        let p = CodecParameters(mediaType: .video, codec: "h264", extradata: extradata, width: 320, height: 240)
        let t = try muxer.addTrack(p, timeBase: Rational(1, 25))
        for (i, au) in accessUnits.enumerated() {
            try muxer.write(Packet(trackIndex: t, pts: Int64(i), dts: Int64(i), duration: 1, isKeyframe: i == 0, data: au, timeBase: Rational(1, 25)))
        }
        try muxer.finish()
    }

    private func expectedSamples() throws -> [[UInt8]] {
        try accessUnits.map { try AnnexBConversion.sample($0, track: 0, codec: "h264") }
    }

    func testMP4AndMatroskaStoreRecordAndSamples() throws {
        for extradata in [annexB([x264SPS, x264PPS]), []] {
            let mp4 = tempPath("a.mp4")
            try write(try MP4Muxer(path: mp4), extradata: extradata)
            let d = try MP4Demuxer(path: mp4)
            XCTAssertEqual(hexString(d.tracks[0].parameters.extradata), ffmpegAVCC)
            XCTAssertEqual(d.tracks[0].parameters.codecTag, "avc1")
            var samples: [[UInt8]] = []
            while let p = try d.read() { samples.append(p.data) }
            XCTAssertEqual(samples, try expectedSamples())
            // The in-band SPS and PPS stay in the first sample, as FFmpeg leaves them.
            XCTAssertEqual(Array(samples[0][4..<(4 + x264SPS.count)]), x264SPS)

            let mkv = tempPath("a.mkv")
            try write(try MatroskaMuxer(path: mkv), extradata: extradata)
            let m = try MatroskaDemuxer(path: mkv)
            XCTAssertEqual(hexString(m.tracks[0].parameters.extradata), ffmpegAVCC)
            samples = []
            while let p = try m.read() { samples.append(p.data) }
            XCTAssertEqual(samples, try expectedSamples())
        }
    }

    func testHEVCIsHev1InMP4() throws {
        let mp4 = tempPath("h.mp4")
        let muxer = try MP4Muxer(path: mp4)
        let p = CodecParameters(mediaType: .video, codec: "hevc", extradata: annexB([x265VPS, x265SPS, x265PPS]), width: 320, height: 240)
        let t = try muxer.addTrack(p, timeBase: Rational(1, 25))
        try muxer.write(Packet(trackIndex: t, pts: 0, dts: 0, duration: 1, isKeyframe: true, data: annexB([[0x26, 0x01, 0xAF]]), timeBase: Rational(1, 25)))
        try muxer.finish()
        let d = try MP4Demuxer(path: mp4)
        XCTAssertEqual(d.tracks[0].parameters.codecTag, "hev1")
        XCTAssertEqual(hexString(d.tracks[0].parameters.extradata), ffmpegHVCC)
    }

    func testRecordFromFirstPacketRefusedWhenTooLate() throws {
        // Fragmented MP4: the moov is written at the first packet of any track; an Annex B
        // track with no extradata whose first packet comes later cannot get its avcC.
        let path = tempPath("f.mp4")
        let muxer = try MP4Muxer(path: path, options: .init(layout: .fragmented(seconds: 1)))
        let v = try muxer.addTrack(CodecParameters(mediaType: .video, codec: "h264", width: 320, height: 240), timeBase: Rational(1, 25))
        let opusHead: [UInt8] = Array("OpusHead".utf8) + [1, 2, 0x38, 1, 0x80, 0xBB, 0, 0, 0, 0, 0]
        let a = try muxer.addTrack(CodecParameters(mediaType: .audio, codec: "opus", extradata: opusHead, sampleRate: 48000, channels: 2),
                                   timeBase: Rational(1, 48000))
        XCTAssertThrowsError(try muxer.write(Packet(trackIndex: a, pts: 0, dts: 0, duration: 960, isKeyframe: true, data: [1, 2], timeBase: Rational(1, 48000)))) { e in
            XCTAssertTrue("\(e)".contains("track \(v) (h264): no extradata"), "\(e)")
        }
        muxer.cancel()

        // A progressive MP4 finished before the track's first packet: no avcC to write.
        let p2 = tempPath("g.mp4")
        let m2 = try MP4Muxer(path: p2)
        _ = try m2.addTrack(CodecParameters(mediaType: .video, codec: "h264", width: 320, height: 240), timeBase: Rational(1, 25))
        XCTAssertThrowsError(try m2.finish()) { e in XCTAssertTrue("\(e)".contains("no packet written"), "\(e)") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: p2))

        // Matroska: the header goes out at the first packet too.
        let p3 = tempPath("h.mkv")
        let m3 = try MatroskaMuxer(path: p3)
        _ = try m3.addTrack(CodecParameters(mediaType: .video, codec: "h264", width: 320, height: 240), timeBase: Rational(1, 25))
        let a3 = try m3.addTrack(CodecParameters(mediaType: .audio, codec: "opus", extradata: opusHead, sampleRate: 48000, channels: 2),
                                 timeBase: Rational(1, 48000))
        XCTAssertThrowsError(try m3.write(Packet(trackIndex: a3, pts: 0, dts: 0, duration: 960, isKeyframe: true, data: [1, 2], timeBase: Rational(1, 48000)))) { e in
            XCTAssertTrue("\(e)".contains("track 0 (h264): no extradata"), "\(e)")
        }
        m3.cancel()
    }

    func testFirstPacketParameterSetsAsFFmpegTakesThem() throws {
        // A PPS followed by a 4-byte start code keeps that code's first zero in FFmpeg's
        // extradata (extract_extradata), and so in its avcC: ours too.
        let packet = annexB([x264SPS, x264PPS, [0x65, 0x88, 0x84, 0x21]])
        let record = try AnnexBConversion.record(codec: "h264", firstPacket: packet, completeness: false, track: 0)
        let pps = x264PPS + [0]
        XCTAssertEqual(hexString(record), hexString(Array(hex(ffmpegAVCC).prefix(8 + x264SPS.count)) + [1, 0, UInt8(pps.count)] + pps + [0xFD, 0xF8, 0xF8, 0]))
    }

    func testFirstPacketGivenAtAddTrack() throws {
        // The remux path (needsFirstPacket / addTrack(from:firstPacket:)): the record is built
        // at addTrack, so a fragmented MP4 whose audio comes first works.
        let path = tempPath("r.mp4")
        let muxer = try MP4Muxer(path: path, options: .init(layout: .fragmented(seconds: 1)))
        let track = Track(index: 0, id: 1, parameters: CodecParameters(mediaType: .video, codec: "h264", width: 320, height: 240),
                          timeBase: Rational(1, 25), duration: 2)
        XCTAssertTrue(muxer.needsFirstPacket(track))
        XCTAssertTrue(try MatroskaMuxer(path: tempPath("n.mkv")).needsFirstPacket(track))
        let v = try muxer.addTrack(from: track, firstPacket: accessUnits[0])
        for (i, au) in accessUnits.enumerated() {
            try muxer.write(Packet(trackIndex: v, pts: Int64(i), dts: Int64(i), duration: 1, isKeyframe: i == 0, data: au, timeBase: Rational(1, 25)))
        }
        try muxer.finish()
        let d = try MP4Demuxer(path: path)
        XCTAssertEqual(hexString(d.tracks[0].parameters.extradata), ffmpegAVCC)

        // Matroska the same way: its header goes out at the audio packet written first.
        let mkv = tempPath("r.mkv")
        let m = try MatroskaMuxer(path: mkv)
        let mv = try m.addTrack(from: track, firstPacket: accessUnits[0])
        let opusHead: [UInt8] = Array("OpusHead".utf8) + [1, 2, 0x38, 1, 0x80, 0xBB, 0, 0, 0, 0, 0]
        let ma = try m.addTrack(CodecParameters(mediaType: .audio, codec: "opus", extradata: opusHead, sampleRate: 48000, channels: 2),
                                timeBase: Rational(1, 48000))
        try m.write(Packet(trackIndex: ma, pts: 0, dts: 0, duration: 960, isKeyframe: true, data: [0xFC, 0xFF, 0xFE], timeBase: Rational(1, 48000)))
        for (i, au) in accessUnits.enumerated() {
            try m.write(Packet(trackIndex: mv, pts: Int64(i), dts: Int64(i), duration: 1, isKeyframe: i == 0, data: au, timeBase: Rational(1, 25)))
        }
        try m.finish()
        let md = try MatroskaDemuxer(path: mkv)
        XCTAssertEqual(hexString(md.tracks[0].parameters.extradata), ffmpegAVCC)
        var video: [[UInt8]] = []
        while let p = try md.read() { if p.trackIndex == 0 { video.append(p.data) } }
        XCTAssertEqual(video, try expectedSamples())
    }
}
