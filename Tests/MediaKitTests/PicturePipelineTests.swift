import XCTest
@testable import MediaKit

/// Oracle: the layouts' definitions (NV12: the Y rows, then rows of U and V samples in
/// turn; I420: the Y, U and V rows; yuv420p10le: the three planes in 16-bit little-endian
/// words; rows without padding), applied to pictures whose every sample is distinct. Real
/// files are compared with `ffmpeg -f rawvideo -pix_fmt ...` in Tests/oracle/test_decode.py
/// (mk-decode) and Bindings/python/tests/test_decode.py (to_numpy, mk_frame_pack).
final class PicturePipelineTests: XCTestCase {
    /// The bytes of `frame` in `layout`, from the definition.
    private func expected(_ frame: Frame, _ layout: PixelFormat) -> [UInt8] {
        let f = frame.pixelFormat!
        let y = TestPictures.samples(frame, 0).flatMap { $0 }
        let (u, v): ([[Int]], [[Int]]) = f == .nv12
            ? (TestPictures.samples(frame, 1).map { r in stride(from: 0, to: r.count, by: 2).map { r[$0] } },
               TestPictures.samples(frame, 1).map { r in stride(from: 1, to: r.count, by: 2).map { r[$0] } })
            : (TestPictures.samples(frame, 1), TestPictures.samples(frame, 2))
        switch layout {
        case .nv12:
            let uv = zip(u, v).flatMap { zip($0, $1).flatMap { [$0, $1] } }
            return (y + uv).map { UInt8(truncatingIfNeeded: $0) }
        case .yuv420p:
            return (y + u.flatMap { $0 } + v.flatMap { $0 }).map { UInt8(truncatingIfNeeded: $0) }
        case .yuv420p10:
            return (y + u.flatMap { $0 } + v.flatMap { $0 }).flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        default:
            XCTFail("\(layout.name) is not a raw layout of these tests")
            return []
        }
    }

    /// The raw layouts are pixel formats (the one pixel-format type, issue 29 item 5): every
    /// format's packed size is the size of one `ffmpeg -f rawvideo -pix_fmt NAME` picture (odd
    /// sizes included), and the layout names mk-decode takes parse to them.
    func testPackedSizesAreFFmpegsRawvideoSizes() throws {
        for f in PixelFormat.allCases {
            for (w, h) in [(7, 5), (16, 9)] {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
                p.arguments = ["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=\(w)x\(h)", "-frames:v", "1",
                               "-pix_fmt", f.name, "-f", "rawvideo", "-"]
                let pipe = Pipe()
                p.standardOutput = pipe
                try p.run()
                let bytes = pipe.fileHandleForReading.readDataToEndOfFile().count
                p.waitUntilExit()
                XCTAssertEqual(p.terminationStatus, 0, f.name)
                XCTAssertEqual(f.frameSize(width: w, height: h), bytes, "\(f.name) \(w)x\(h)")
            }
            XCTAssertEqual(PixelFormat(name: f.name), f)
        }
        XCTAssertEqual(PixelFormat(name: "I420"), .yuv420p)
        XCTAssertEqual(PixelFormat(name: "yuv420p10"), .yuv420p10)
        XCTAssertNil(PixelFormat(name: "yuyv422"))
        // The YUV layouts (P010 since issue 35), then the packed RGB / gray ones for models (issue 32).
        XCTAssertEqual(PicturePipeline.layouts, [.nv12, .yuv420p, .yuv420p10, .p010, .rgb24, .bgr24, .rgba, .bgra, .gray8, .gray16, .rgb48])
    }

    private func packed(_ frame: Frame, _ layout: PixelFormat) throws -> [UInt8] {
        var out: [UInt8] = []
        try PicturePipeline.pack(frame, as: layout, into: &out)
        return out
    }

    private func pieces(_ frame: Frame, _ layout: PixelFormat) throws -> (bytes: [UInt8], inPlace: [Bool]) {
        var scratch: [UInt8] = []
        return try PicturePipeline.withPackedPieces(frame, as: layout, scratch: &scratch) { pieces in
            let inPlace = pieces.map { piece in frame.planes.contains { $0.base == piece.baseAddress } }
            return (pieces.flatMap { Array($0) }, inPlace)
        }
    }

    func testPackingFollowsTheLayoutDefinitions() throws {
        let cases: [(PixelFormat, PixelFormat)] = [(.yuv420p, .nv12), (.yuv420p, .yuv420p), (.nv12, .nv12), (.nv12, .yuv420p),
                                                        (.yuvj420p, .yuv420p), (.yuv420p10, .yuv420p10)]
        for (format, layout) in cases {
            for (w, h) in [(8, 4), (7, 5), (1, 1)] {
                for padding in [0, 16] {
                    let picture = TestPictures.make(format, width: w, height: h, padding: padding)
                    let want = expected(picture, layout)
                    let what = "\(format.name) \(w)x\(h) padding \(padding) as \(layout.name)"
                    XCTAssertEqual(want.count, layout.frameSize(width: w, height: h), what)
                    XCTAssertEqual(try packed(picture, layout), want, what)
                    XCTAssertEqual(try pieces(picture, layout).bytes, want, "pieces of " + what)
                }
            }
        }
    }

    func testPiecesComeFromTheFramesMemoryWhenTheyNeedNoPacking() throws {
        let planar = TestPictures.make(.yuv420p, width: 8, height: 4, padding: 0)
        XCTAssertEqual(try pieces(planar, .yuv420p).inPlace, [true, true, true])
        XCTAssertEqual(try pieces(planar, .nv12).inPlace, [true, false], "the chroma is interleaved")
        XCTAssertEqual(try pieces(TestPictures.make(.nv12, width: 8, height: 4, padding: 0), .yuv420p).inPlace, [true, false, false])
        XCTAssertEqual(try pieces(TestPictures.make(.yuv420p, width: 8, height: 4, padding: 16), .yuv420p).inPlace, [false, false, false],
                       "padded rows are packed")
    }

    func testViewsOnlyWhereTheFrameHoldsTheLayout() throws {
        let planar = TestPictures.make(.yuv420p, width: 7, height: 5, padding: 16)
        let views = try XCTUnwrap(PicturePipeline.views(of: planar, as: .yuv420p))
        XCTAssertEqual(views.map(\.base), planar.planes.map(\.base))
        XCTAssertEqual(views.map(\.stride), planar.planes.map(\.stride))
        XCTAssertEqual(views.map(\.rowBytes), [7, 4, 4])
        XCTAssertEqual(views.map(\.rows), [5, 3, 3])
        XCTAssertNil(PicturePipeline.views(of: planar, as: .nv12), "NV12 of planar chroma needs interleaving")
        XCTAssertNotNil(PicturePipeline.views(of: TestPictures.make(.nv12, width: 7, height: 5), as: .nv12))
        // ffmpeg copies a picture already in the output format whatever its range, and converts
        // the others (full range to limited, other formats): those are not read in place.
        let full = TestPictures.make(.yuv420p, width: 8, height: 4, colorRange: .full)
        XCTAssertNotNil(PicturePipeline.views(of: full, as: .yuv420p))
        XCTAssertNil(PicturePipeline.views(of: full, as: .nv12))
        XCTAssertNil(PicturePipeline.views(of: TestPictures.make(.yuvj420p, width: 8, height: 4), as: .yuv420p))
        XCTAssertNil(PicturePipeline.views(of: TestPictures.make(.yuv444p, width: 8, height: 4), as: .yuv420p))
    }

    func testAFormatThatNeedsAConversionIsNotPackedAsIs() {
        XCTAssertThrowsError(try packed(TestPictures.make(.yuv444p, width: 4, height: 4), .nv12)) { error in
            XCTAssertEqual((error as! MediaError).kind, .unsupported)
        }
    }

    func testTurnedPicturesArePackedTurned() throws {
        let picture = TestPictures.make(.yuv420p, width: 6, height: 4)
        let pipeline = PicturePipeline(layout: .yuv420p, orientation: PictureOrientation(clockwise: 90)!, registry: MediaRegistry())
        XCTAssertTrue(pipeline.outputSize(of: picture) == (4, 6))
        var out = [UInt8](repeating: 0, count: PixelFormat.yuv420p.frameSize(width: 4, height: 6))
        try out.withUnsafeMutableBufferPointer { try pipeline.pack(picture, into: $0) }
        XCTAssertEqual(out, expected(try picture.rotated(clockwise: 90), .yuv420p))
    }

    func testNoConverterNamesTheConversion() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("mk-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let registry = MediaRegistry()
        try registry.load(path: empty.path)
        let pipeline = PicturePipeline(layout: .nv12, registry: registry)
        let picture = TestPictures.make(.yuv420p10, width: 8, height: 4)
        XCTAssertTrue(pipeline.needsConversion(picture))
        XCTAssertThrowsError(try pipeline.prepare(picture)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .notFound)
            XCTAssertTrue(e.message.contains("no picture converter from yuv420p10le to nv12"), e.message)
        }
    }

    func testAScaledPipelineScalesOnlyPicturesOfAnotherSize() throws {
        // As FFmpeg's scale filter: a picture already of the size asked for (after the turn)
        // is packed as it is; one of another size needs a converter that scales.
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("mk-empty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        let registry = MediaRegistry()
        try registry.load(path: empty.path)
        let pipeline = PicturePipeline(layout: .yuv420p, orientation: PictureOrientation(clockwise: 90)!, size: (4, 6),
                                       filter: .area, registry: registry)
        let fits = TestPictures.make(.yuv420p, width: 6, height: 4)
        XCTAssertTrue(pipeline.outputSize(of: fits) == (4, 6))
        XCTAssertFalse(pipeline.needsConversion(fits))
        var out = [UInt8](repeating: 0, count: PixelFormat.yuv420p.frameSize(width: 4, height: 6))
        try out.withUnsafeMutableBufferPointer { try pipeline.pack(fits, into: $0) }
        XCTAssertEqual(out, expected(try fits.rotated(clockwise: 90), .yuv420p))
        let larger = TestPictures.make(.yuv420p, width: 12, height: 8)
        XCTAssertTrue(pipeline.outputSize(of: larger) == (4, 6))
        XCTAssertTrue(pipeline.needsConversion(larger))
        XCTAssertThrowsError(try pipeline.prepare(larger)) { error in
            let e = error as! MediaError
            XCTAssertEqual(e.kind, .notFound)
            XCTAssertTrue(e.message.contains("from yuv420p to yuv420p that scales 8x12 to 4x6 (area; plugin ABI 2.2)"), e.message)
        }
    }
}
