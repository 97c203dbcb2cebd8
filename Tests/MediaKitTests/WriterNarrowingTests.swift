import Foundation
import XCTest

/// No writer converts a value to a narrower integer type without saying how (issue 28): a bare
/// `UInt32(x)`, `Int32(x)`, `Int(x)`, `UInt16(x)`, `UInt8(x)` or `Int16(x)` traps when `x` does not fit,
/// and a writer may be handed any value by a caller or a damaged source. Each conversion in the
/// writer files is either spelled with its rule (`exactly:` with an error, `clamping:`,
/// `truncatingIfNeeded:` for bytes of a wider value, `bitPattern:`), converts a constant
/// (`Int(UInt32.max)`), or is one of the audited sites below, each with why it cannot trap.
/// A new bare conversion fails this test until it is given a rule or audited here; an audited
/// line that no longer exists fails it too, so the list stays the code's.
final class WriterNarrowingTests: XCTestCase {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// The writer files: every muxer, the box / EBML / Ogg page writers, the MP3 and FLAC
    /// writers, the raw output writers and the C muxer API.
    static let files = [
        "MediaKit/Containers/MP4/MP4Muxer.swift", "MediaKit/Containers/MP4/MovieWriter.swift", "MediaKit/Containers/MP4/BoxWriter.swift",
        "MediaKit/Containers/MP4/MuxTrack.swift", "MediaKit/Containers/MP4/SampleEntryWriter.swift",
        "MediaKit/Containers/Matroska/MatroskaMuxer.swift", "MediaKit/Containers/Ogg/OggMuxer.swift", "MediaKit/Containers/Ogg/OggPage.swift",
        "MediaKit/Containers/AudioStream/MP3Writer.swift", "MediaKit/Containers/FLAC/FLACWriter.swift",
        "MediaKit/Output/PCMWriter.swift", "MediaKit/Output/PictureWriter.swift", "MediaKit/Core/MuxLimits.swift", "MediaKitC/Muxer.swift",
        "MediaKit/Codecs/PCMFileMuxer.swift", "MediaKit/Codecs/WAVCodec.swift", "MediaKit/Containers/WAV/WAVMuxer.swift",
        "MediaKit/Containers/AIFF/AIFFMuxer.swift", "MediaKit/Containers/CAF/CAFMuxer.swift", "MediaKit/Containers/CAF/CAFChunks.swift",
        "MediaKit/Containers/CAF/CAFCodec.swift", "MediaKit/Codecs/ESDescriptor.swift",
        "MediaKit/Containers/MPEGTS/MPEGTSMuxer.swift", "MediaKit/Containers/MPEGTS/MPEGTS.swift",
        "MediaKit/Containers/HLS/HLSMuxer.swift", "MediaKit/Codecs/AnnexBStream.swift", "MediaKit/Codecs/ADTSMaker.swift",
        "MediaKit/Session/AssetWriter.swift", "MediaKitC/Writer.swift",
        "MediaKit/Codecs/MetadataWriting.swift", "MediaKit/Containers/Matroska/MatroskaMetadataWriter.swift",
        "MediaKit/Containers/AudioStream/ID3TagRewriter.swift", "MediaKit/Containers/FLAC/FLACTagRewriter.swift",
        "MediaKit/IO/FileRegionRewrite.swift", "MediaKit/Session/TagEditor.swift", "MediaKit/Core/TagEditing.swift",
        "MediaKit/Codecs/MovTextEncoder.swift", "MediaKit/Text/SubtitleConverter.swift", "MediaKit/Text/SubtitleFileMuxer.swift",
        "MediaKit/Containers/MP4/MP4ChapterTrack.swift", "MediaKit/Registry/PluginMuxer.swift",
        "MediaKit/Containers/MP4/MP4TagRewriter.swift",
    ]

    /// Audited bare conversions: file, a fragment of the line, why it cannot trap.
    static let audited: [(file: String, line: String, why: String)] = [
        ("MetadataWriting.swift", "let b = UInt8(String(decoding: u[(i + 2)...(i + 3)], as: UTF8.self), radix: 16)", "parses two hex digits: nil (not a trap) for anything else"),
        ("TagEditor.swift", "let pid = Int32(pidText)", "parses digits: nil (not a trap) when they do not fit"),
        ("ID3TagRewriter.swift", "Int($0.trimmingCharacters(in: .whitespaces))", "parses a number: nil (not a trap) for anything else"),
        ("MP4Muxer.swift", "width = Int(UInt16(entry[32]) << 8", "bytes of the sample entry, widened"),
        ("MP4Muxer.swift", "tracks[ti].sizes.append(UInt32(size))", "size <= UInt32.max is checked at the top of append"),
        ("MP4Muxer.swift", "syncSamples.append(UInt32(tracks[ti].sizes.count))", "sizes.count < UInt32.max - 1 is checked in append"),
        ("MP4Muxer.swift", "w.u32(UInt32(total + 8))", "in the branch where total + 8 <= UInt32.max (large is false)"),
        ("MP4Muxer.swift", "let gap = Int(mdatStart - ftypSize)", "Int64 to Int: the same width on the 64-bit platforms MediaKit builds for"),
        ("BoxWriter.swift", "w.u32(UInt32(version) << 24", "UInt8 widened"),
        ("BoxWriter.swift", "return UInt16(u[0] - 0x60) << 10", "letters a-z checked just above: 1...26"),
        ("MuxTrack.swift", "guard pcmFrameSize > 0 else { return UInt32(range.count) }", "a range of pending samples: fewer than the UInt32 sample count append allows"),
        ("SampleEntryWriter.swift", "be32(p.sampleEntry, 0) == UInt32(p.sampleEntry.count)", "an array count below 2^32 (the entry is held in memory and was read from a box)"),
        ("SampleEntryWriter.swift", "w.u32(p.sampleRate < 65536 ? UInt32(p.sampleRate) << 16 : 0)", "sampleRate > 0 is checked above (guard), < 65536 here"),
        ("SampleEntryWriter.swift", "w.u16(UInt16(p.width)); w.u16(UInt16(p.height))", "visualEntry is called after the 1...65535 checks of width and height"),
        ("SampleEntryWriter.swift", "w.u32(UInt32(p.channels)); w.u32(0x7F00_0000)", "channels 1...65535 checked by the PCM guard"),
        ("SampleEntryWriter.swift", "w.u32(UInt32(bits))", "bits per sample from the codec table (8...64)"),
        ("SampleEntryWriter.swift", "w.u32(UInt32(frameSize)); w.u32(1)", "bits / 8 * channels <= 8 * 65535"),
        ("SampleEntryWriter.swift", "w.u32(UInt32(p.sampleRate) << 16)", "version 0/1 only: 1...65535 Hz (above that, version 2)"),
        ("SampleEntryWriter.swift", "w.u32(UInt32(frameSize / p.channels))", "bytes per sample (1...8)"),
        ("SampleEntryWriter.swift", "w.u32(UInt32(frameSize))", "bits / 8 * channels <= 8 * 65535"),
        ("SampleEntryWriter.swift", "h.count >= 21 + Int(h[9])", "a byte widened"),
        ("MatroskaMuxer.swift", "out[0] |= UInt8(0x80 >> (n - 1))", "n is 1...8: 0x80 >> 0...7"),
        ("MatroskaMuxer.swift", "[UInt8(UInt16(bitPattern: relative) >> 8), UInt8(UInt16(bitPattern: relative) & 0xFF)]", "the high and low byte of a UInt16"),
        ("OggPage.swift", "var r = UInt32(i) << 24", "the CRC table index 0...255"),
        ("OggPage.swift", "t[Int(((c >> 24) ^ UInt32(b)) & 0xFF)]", "a byte widened, an index masked to 0...255"),
        ("OggPage.swift", "let nsegs = Int(header[26])", "page reader: a byte widened"),
        ("OggPage.swift", "segments.reduce(0) { $0 + Int($1) }", "page reader: bytes widened (at most 255 x 255)"),
        ("OggPage.swift", "let stored = UInt32(header[22])", "page reader: bytes widened"),
        ("OggPage.swift", "UInt32(header[i]) | UInt32(header[i + 1]) << 8", "page reader: bytes widened"),
        ("OggPage.swift", "out.append(UInt8(truncatingIfNeeded: v >> (8 * UInt32(i))))", "a loop index 0...3 widened"),
        ("OggPage.swift", "out.append(UInt8(segments.count))", "append closes a page at 255 segments"),
        ("OggPage.swift", "out[22 + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i)))", "a loop index 0...3 widened"),
        ("OggPage.swift", "segments.append(UInt8(take))", "take = min(left, 255)"),
        ("MP3Writer.swift", "padding: Int(min(padding, 4095))", "Int64 to Int, 0...4095"),
        ("MP3Writer.swift", "f[at + i] = UInt8(min(255, position * 256 / max(1, bytes + infoSize)))", "0...255 (positions are byte offsets, not negative)"),
        ("MP3Writer.swift", "crc ^= UInt16(b)", "a byte widened"),
        ("PCMWriter.swift", "dataBytes: UInt32(data)), at: 0)", "data <= UInt32.max - 80 is checked just above"),
        ("WAVCodec.swift", "func le16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }", "WAVEFormatEx's reader: bytes widened"),
        ("Muxer.swift", "struct_size: UInt32(MemoryLayout<mk_muxer_settings>.size)", "the size of a C struct"),
        ("Writer.swift", "struct_size: UInt32(MemoryLayout<mk_writer_settings>.size)", "the size of a C struct"),
        ("Muxer.swift", "userData[0..<4].reduce(0) { $0 << 8 | Int($1) }", "bytes widened (4 of them: below 2^32)"),
        ("Muxer.swift", "o.reservedIndexBytes = Int(s.reserved_moov_bytes)", "Int64 to Int (64-bit platforms), checked 0...256 MiB above"),
        ("Muxer.swift", "guard index >= 0 && Int(index) < h.tracks.count", "Int32 widened"),
        ("Muxer.swift", "let i = Int(index)", "Int32 widened"),
        ("Muxer.swift", "count: Int(s.track_count)", "Int32 widened (checked non-negative by the caller's guard)"),
    ]

    /// A conversion to a narrower (or same-width, other-signedness) integer type without a label.
    static let bare = try! NSRegularExpression(pattern: #"\b(UInt32|Int32|Int|UInt16|UInt8|Int16)\((?!exactly:|clamping:|truncatingIfNeeded:|bitPattern:|(U?Int(8|16|32|64)?)\.(max|min)\))"#)

    func testNoBareNarrowingConversionInWriters() throws {
        var used = Set<Int>()
        var unaudited: [String] = []
        for file in Self.files {
            let name = (file as NSString).lastPathComponent
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = String(line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
                guard Self.bare.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil else { continue }
                if let k = Self.audited.indices.first(where: { Self.audited[$0].file == name && code.contains(Self.audited[$0].line) }) {
                    used.insert(k)
                } else {
                    unaudited.append("\(file):\(n + 1): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        XCTAssertEqual(unaudited, [], "bare narrowing conversions in writers: use exactly: (with a MediaError naming the track and value), clamping: or truncatingIfNeeded:, or audit the line in WriterNarrowingTests.audited")
        let stale = Self.audited.indices.filter { !used.contains($0) }.map { "\(Self.audited[$0].file): \(Self.audited[$0].line)" }
        XCTAssertEqual(stale, [], "audited lines that no longer exist: remove them from WriterNarrowingTests.audited")
    }

    /// The check itself: it finds a bare conversion and passes the labelled ones and constants.
    func testTheCheckTellsBareConversionsFromLabelledOnes() {
        func bare(_ s: String) -> Bool { Self.bare.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil }
        XCTAssertTrue(bare("w.u32(UInt32(movieDuration))"))
        XCTAssertTrue(bare("let i = Int32(x)"))
        XCTAssertTrue(bare("UInt8(v >> 8)"))
        XCTAssertFalse(bare("UInt32(exactly: v)"))
        XCTAssertFalse(bare("Int32(clamping: v)"))
        XCTAssertFalse(bare("UInt8(truncatingIfNeeded: v)"))
        XCTAssertFalse(bare("UInt64(bitPattern: v)"))
        XCTAssertFalse(bare("guard size <= Int(UInt32.max)"))
        XCTAssertFalse(bare("Int64(x) + UInt64(y)"))
    }
}
