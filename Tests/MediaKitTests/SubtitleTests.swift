import Foundation
import XCTest
@testable import MediaKit

/// The text subtitle parsers against their specifications' examples: the W3C WebVTT spec's
/// sample files (section 1 "Introduction", STYLE and REGION blocks), the 3GPP TS 26.245 `tx3g`
/// sample entry and sample layout (5.16, 5.17: text length, `styl` style records), SubRip
/// timing lines, ASS override codes (ass_split.c's grammar). Tests/oracle/test_subtitles.py
/// compares whole files with ffmpeg's output.
final class SubtitleTests: XCTestCase {
    private func open(_ text: String, _ format: ContainerFormat) throws -> Demuxer {
        try format.makeDemuxer(MemorySource(Array(text.utf8), name: "test"))
    }

    private func packets(_ d: Demuxer) throws -> [Packet] {
        var out: [Packet] = []
        while let p = try d.read() { out.append(p) }
        return out
    }

    // W3C WebVTT (https://www.w3.org/TR/webvtt1/), example 1 (section 1.1), first cues.
    private let specExample = """
    WEBVTT

    00:11.000 --> 00:13.000
    <v Roger Bingham>We are in New York City

    00:13.000 --> 00:16.000
    <v Roger Bingham>We're actually at the Lucern Hotel, just down the street

    00:16.000 --> 00:18.000
    <v Roger Bingham>from the American Museum of Natural History

    """

    func testWebVTTSpecExample() throws {
        XCTAssertEqual(WebVTTCue.probe(Array(specExample.utf8)), 100)
        let d = try open(specExample, .webvtt)
        XCTAssertEqual(d.tracks.map(\.parameters.codec), ["webvtt"])
        let ps = try packets(d)
        XCTAssertEqual(ps.map(\.pts), [11000, 13000, 16000])
        XCTAssertEqual(ps.map(\.duration), [2000, 3000, 2000])
        let decoder = try SubtitleDecoder(parameters: d.tracks[0].parameters)
        let cues = try ps.flatMap { try decoder.decode($0) }
        // Voice spans are dropped, as FFmpeg's WebVTT decoder drops every tag but b, i, u.
        XCTAssertEqual(cues.map(\.text), ["We are in New York City", "We're actually at the Lucern Hotel, just down the street",
                                          "from the American Museum of Natural History"])
        XCTAssertEqual(cues.map(\.endMilliseconds), [13000, 16000, 18000])
    }

    // The spec's STYLE example (section 6.2 / example 8) and REGION example (example 5).
    func testWebVTTStyleAndRegionBlocksAreSkipped() throws {
        let style = """
        WEBVTT

        STYLE
        ::cue {
          background-image: linear-gradient(to bottom, dimgray, lightgray);
          color: papayawhip;
        }
        /* Style blocks cannot use blank lines nor "dash dash greater than" */

        NOTE comment blocks can be used between style blocks.

        STYLE
        ::cue(b) {
          color: peachpuff;
        }

        00:00:00.000 --> 00:00:10.000
        - Hello <b>world</b>.

        NOTE style blocks cannot appear after the first cue.
        """
        let ps = try packets(try open(style, .webvtt))
        XCTAssertEqual(ps.count, 1)
        XCTAssertEqual(String(decoding: ps[0].data, as: UTF8.self), "- Hello <b>world</b>.")
        XCTAssertEqual(SubRipMarkup.assFromWebVTT("- Hello <b>world</b>."), "- Hello {\\b1}world{\\b0}.")

        let region = """
        WEBVTT

        REGION
        id:fred
        width:40%
        lines:3
        regionanchor:0%,100%
        viewportanchor:10%,90%
        scroll:up

        00:00:00.000 --> 00:00:20.000 region:fred align:left
        <v Fred>Hi, my name is Fred
        """
        let r = try packets(try open(region, .webvtt))
        XCTAssertEqual(r.map(\.cueSettings), ["region:fred align:left"])
        XCTAssertEqual(r.map(\.duration), [20000])
    }

    func testWebVTTIdentifierTimestampsAndBrokenTiming() throws {
        let text = "\u{FEFF}WEBVTT\r\n\r\nintro\r\n1:02:03.004 --> 1:02:04.000 line:0\r\nA\r\nB\r\n\r\n00:05.000 -> 00:06.000\nbad\n\n00:07.000 --> 00:08.000\nnever\n"
        let d = try open(text, .webvtt)
        let ps = try packets(d)
        XCTAssertEqual(ps.map(\.pts), [3_723_004])
        XCTAssertEqual(ps[0].cueIdentifier, "intro")
        XCTAssertEqual(ps[0].cueSettings, "line:0")
        XCTAssertEqual(String(decoding: ps[0].data, as: UTF8.self), "A\r\nB")
        XCTAssertEqual(d.warnings.count, 1, "the broken timing line ends the cues with a warning")
        XCTAssertEqual(WebVTTCue.timestamp(Array("12:34.5".utf8)[...])?.ms, 754_005, "the fraction is a count of ms, as FFmpeg reads it")
    }

    // ISO/IEC 14496-30 7.3: a wvtt sample of a vttc cue box (iden, sttg, payl) and a vtte box.
    func testWVTTBoxes() throws {
        let cue = WebVTTCue.Box(identifier: "id", settings: "align:start", payload: "<i>hi</i>")
        let sample = WebVTTCue.box(cue) + WebVTTCue.vtte
        XCTAssertEqual(try WebVTTCue.boxes(sample), [cue])
        XCTAssertEqual(try WebVTTCue.boxes(WebVTTCue.vtte), [])
        XCTAssertThrowsError(try WebVTTCue.boxes(Array(sample.dropLast(3))))
        let d = try SubtitleDecoder(parameters: CodecParameters(mediaType: .subtitle, codec: "webvtt", codecTag: "wvtt"))
        let cues = try d.decode(Packet(trackIndex: 0, pts: 90, dts: 90, duration: 45, isKeyframe: true, data: sample, timeBase: Rational(1, 90)))
        XCTAssertEqual(cues.map(\.markup), ["{\\i1}hi{\\i0}"])
        XCTAssertEqual(cues.map(\.settings), ["align:start"])
        XCTAssertEqual(cues.map(\.startMilliseconds), [1000])
        XCTAssertEqual(cues.map(\.endMilliseconds), [1500])
    }

    func testSubRipTimingLines() {
        XCTAssertEqual(SubRipTiming.parse(Array("00:00:01,000 --> 00:00:02,500".utf8)), SubRipTiming.Line(start: 1000, end: 2500, box: nil))
        XCTAssertEqual(SubRipTiming.parse(Array("0:0:1.5 --> 0:0:2.25".utf8)), SubRipTiming.Line(start: 1005, end: 2025, box: nil))
        XCTAssertEqual(SubRipTiming.parse(Array("01:00:00,000-->01:00:01,000  X1:10 X2:20 Y1:5 Y2:6".utf8))?.box, [10, 20, 5, 6])
        XCTAssertNil(SubRipTiming.parse(Array("00:00:01,000 -> 00:00:02,000".utf8)))
        XCTAssertNil(SubRipTiming.parse(Array("1".utf8)))
        XCTAssertEqual(SubRipTiming.probe(Array("\u{FEFF}\n1\n00:00:01,000 --> 00:00:02,000\nx".utf8)), 100)
        XCTAssertEqual(SubRipTiming.probe(Array("WEBVTT\n\n00:01.000 --> 00:02.000\n".utf8)), 0)
        XCTAssertEqual(SubRipTiming.format(3_723_004), "01:02:03,004")
        XCTAssertEqual(SubRipTiming.format(63_004, separator: ".", shortHours: true), "01:03.004")
    }

    func testSubRipCuesAndCounters() throws {
        let srt = "1\n00:00:01,000 --> 00:00:02,000\nfirst\n\n7\n\n2\n00:00:03,000 --> 00:00:02,000\nsecond\n\n3\n00:00:04,000 --> 00:00:05,000\nthird\n4\n"
        let ps = try packets(try open(srt, .subrip))
        XCTAssertEqual(ps.map { String(decoding: $0.data, as: UTF8.self) }, ["first\n7", "second", "third\n4"],
                       "a number line is text unless a timing line follows it")
        XCTAssertEqual(ps.map(\.duration), [1000, 1000, 1000], "a negative duration takes the gap to the next cue, as FFmpeg")
        XCTAssertEqual(ps.map(\.position), [2, 44, 84])
    }

    func testSeekAndPerTrackReading() throws {
        let srt = "1\n00:00:01,000 --> 00:00:02,000\na\n\n2\n00:00:03,000 --> 00:00:04,000\nb\n\n3\n00:00:05,000 --> 00:00:06,000\nc\n"
        let d = try open(srt, .subrip)
        XCTAssertEqual(try d.read()?.pts, 1000)
        XCTAssertEqual(try d.read(track: 0)?.pts, 1000, "read(track:) has its own position")
        try d.seek(to: 3.5)
        XCTAssertEqual(try packets(d).map(\.pts), [3000, 5000], "the cue starting at or before the time, then the rest")
        try d.seek(to: 0)
        XCTAssertEqual(try packets(d).map(\.pts), [1000, 3000, 5000])
        try d.seek(to: 100)
        XCTAssertEqual(try packets(d).map(\.pts), [5000])
        XCTAssertThrowsError(try d.seek(to: -1))
        XCTAssertThrowsError(try d.read(track: 1))
        d.select(tracks: [])
        XCTAssertNil(try d.read())
    }

    // 3GPP TS 26.245 5.16: the sample entry FFmpeg's mov_text encoder writes (FFmpeg 5.1,
    // `ffmpeg -i in.srt -c:s mov_text out.mp4`): display flags 0, centred bottom, black
    // background, empty box, default style (font 1, plain, 16, opaque white), ftab {1: Arial}.
    private let ffmpegTX3G: [UInt8] = [
        0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0xFF, 0, 0, 0, 0xFF, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 1, 0, 0x10, 0xFF, 0xFF, 0xFF, 0xFF,
        0, 0, 0, 0x12, 0x66, 0x74, 0x61, 0x62, 0, 1, 0, 1, 5, 0x41, 0x72, 0x69, 0x61, 0x6C]

    func testTX3GSampleEntry() throws {
        let entry = MovText.sampleEntry(.ffmpeg)
        XCTAssertEqual(Array(entry[8...]), ffmpegTX3G)
        XCTAssertEqual(Array(entry[4..<8]), Array("tx3g".utf8))
        let d = try XCTUnwrap(MovText.defaults(entry: entry))
        XCTAssertEqual(d, .ffmpeg)
        XCTAssertEqual(d.alignment, 2)
        XCTAssertEqual(d.assStyle, ASSText.Style.default, "FFmpeg's entry is the ASS default style")
    }

    // TS 26.245 5.17: a sample is a 16-bit text length, the UTF-8 text, then boxes; `styl` holds
    // an entry count and 12-byte style records whose start / end count characters.
    func testTX3GSampleWithStyles() throws {
        let text = Array("Héllo wörld".utf8)   // 11 characters, 13 bytes
        let bold = MovText.StyleRecord(start: 6, end: 11, fontID: 1, face: 1, fontSize: 16, rgba: 0xFFFF_FFFF)
        let red = MovText.StyleRecord(start: 0, end: 5, fontID: 1, face: 2, fontSize: 24, rgba: 0xFF00_00FF)
        let styl = [0, 2] + red.bytes + bold.bytes
        let sample = [0, UInt8(text.count)] + text + [0, 0, 0, UInt8(8 + styl.count)] + Array("styl".utf8) + styl
        XCTAssertEqual(try MovText.assText(sample, defaults: .ffmpeg),
                       "{\\i1}{\\fs24}{\\1c&HFF&}Héllo{\\r} {\\b1}wörld")
        XCTAssertNil(try MovText.assText([0, 0], defaults: .ffmpeg), "the 2-byte empty sample ends a cue")
        XCTAssertThrowsError(try MovText.assText([0, 3], defaults: .ffmpeg))
        XCTAssertThrowsError(try MovText.assText([7], defaults: .ffmpeg))
        // A box that runs past the sample ends the boxes; the text stays.
        XCTAssertEqual(try MovText.assText(Array(sample.dropLast(4)), defaults: .ffmpeg), "Héllo wörld")
        let rendered = SubtitleRendering.render(try XCTUnwrap(MovText.assText(sample, defaults: .ffmpeg)), as: .subrip)
        XCTAssertEqual(rendered, "<i><font size=\"24\"><font color=\"#ff0000\">Héllo</font></font></i> <b>wörld</b>")
    }

    func testASSEventAndOverrideCodes() throws {
        let e = try ASSText.event("2,1,Default,Bob,0,0,0,,{\\an7\\fs30}Top, left {\\fnCourier}mono\\Nend")
        XCTAssertEqual(e.readOrder, 2)
        XCTAssertEqual(e.layer, 1)
        XCTAssertEqual(e.name, "Bob")
        XCTAssertEqual(e.text, "{\\an7\\fs30}Top, left {\\fnCourier}mono\\Nend")
        XCTAssertEqual(ASSText.codes(e.text).codes, [.alignment(7), .fontSize(30), .text("Top, left "), .fontName("Courier"),
                                                     .text("mono"), .newLine(forced: true), .text("end")])
        XCTAssertEqual(ASSText.plainText(e.text), "Top, left mono\nend")
        XCTAssertThrowsError(try ASSText.event("0,0,Default,text"))
        XCTAssertFalse(ASSText.codes("a {\\b1 b").complete)
        XCTAssertEqual(ASSText.codes("{\\a6}x").codes.first, .alignment(8), "SSA's \\a6 (top centre) is numpad 8")
        let styles = ASSText.styles(header: "[V4+ Styles]\nFormat: Name, Fontname, Fontsize, PrimaryColour, Bold, Italic, Alignment\nStyle: Big,Times,24,&H000000ff,-1,0,8\n")
        XCTAssertEqual(styles, [ASSText.Style(name: "Big", fontName: "Times", fontSize: 24, primaryColor: 0xFF,
                                              bold: true, italic: false, underline: false, alignment: 8)])
        XCTAssertEqual(SubtitleRendering.render("x", as: .subrip, style: styles[0]),
                       "<font face=\"Times\" size=\"24\" color=\"#ff0000\"><b>{\\an8}x</b></font>")
        XCTAssertEqual(SubtitleRendering.render("x", as: .webvtt, style: styles[0]), "<b>x</b>")
    }

    func testSubRipMarkupToASS() {
        XCTAssertEqual(SubRipMarkup.ass("Hello <b>world</b>\n<font color=\"#ff8000\">o</font> <br/>x"),
                       "Hello {\\b1}world{\\b0}\\N{\\c&H80FF&}o{\\c} \\Nx")
        XCTAssertEqual(SubRipMarkup.ass("{\\an8}top {\\b1}gone"), "{\\an8}top gone", "only the first brace block is kept")
        XCTAssertEqual(SubRipMarkup.ass("<< a >> <unknown>t</unknown>"), "<< a >> t")
        XCTAssertEqual(SubRipMarkup.ass("  lead\n\nafter a blank line"), "lead", "an empty line ends the text")
    }

    func testBitmapCodecsAreRefused() {
        for codec: CodecID in ["hdmv_pgs_subtitle", "dvb_subtitle", "eia_608"] {
            XCTAssertThrowsError(try SubtitleDecoder(parameters: CodecParameters(mediaType: .subtitle, codec: codec))) { e in
                XCTAssertEqual((e as? MediaError)?.kind, .unsupported)
                XCTAssertTrue("\(e)".contains(codec.rawValue) && "\(e)".contains("copied"), "\(e)")
            }
        }
    }

    func testCatalogueProbesTextFiles() throws {
        let catalog = ContainerCatalog(plugins: nil)
        XCTAssertEqual(try catalog.open(MemorySource(Array("1\n00:00:01,000 --> 00:00:02,000\nx\n".utf8), name: "a")).format.name, "srt")
        XCTAssertEqual(try catalog.open(MemorySource(Array("WEBVTT\n".utf8), name: "a")).format.name, "webvtt")
    }
}
