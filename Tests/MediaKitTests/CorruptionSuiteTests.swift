import Foundation
import Synchronization
import XCTest
@testable import MediaKit

/// The corruption suite (issue 17): every file of ../shared/media, cut at 20 points and damaged by
/// 100 random byte flips (10 copies with 10 flips each, fixed seed), is probed, demuxed to the end,
/// its first audio and video tracks decoded with the real plugins (around the packets that differ
/// from the intact file's: ``damagedWindows(_:_:)``), and remuxed into MP4.
///
/// Oracle: the intact file read the same way. Every case must end in a ``MediaError`` or a clean
/// end (never a crash or another error type) within ``caseSeconds``; the packets a damaged copy
/// returns before the first damaged byte must equal the intact file's packets; a cut copy that
/// opens must return every intact packet that lies wholly before the cut (a truncated file is read
/// as far as it goes, as FFmpeg reads it); a remux that fails leaves no file under its name.
///
/// "Before the damage" is judged by what each container needs to read a packet: its own bytes
/// (and for Ogg, the whole page it ends on, whose CRC covers the page), and for MP4 the sample
/// table too: a flip inside `moov` changes the index of every packet, so only no-crash is checked.
final class CorruptionSuiteTests: XCTestCase {
    /// A case (open, read, decode, remux of one damaged copy) taking longer than this fails: a
    /// hang. The slowest case takes 9 s in a debug build at load 8 (AV1 10-bit decode with
    /// recovery); `MK_CASE_SECONDS` raises it for sanitizer builds (`make sanitize`: 5x slower).
    static let caseSeconds = ProcessInfo.processInfo.environment["MK_CASE_SECONDS"].flatMap(Double.init) ?? 30
    static let cuts = 20
    static let flipCopies = 10
    static let flipsPerCopy = 10

    private struct Reading {
        var format = ""
        var tracks: [Track] = []
        var packets: [Packet] = []
        var error: Error?
        var opened: Bool { !format.isEmpty }
    }

    private static func read(_ bytes: [UInt8], name: String, failures: inout [String]) -> Reading {
        var r = Reading()
        do {
            let (format, demuxer) = try ContainerCatalog.shared.open(MemorySource(bytes, name: name))
            r.format = format.name
            r.tracks = demuxer.tracks
            while let p = try demuxer.read() {
                r.packets.append(p)
                if r.packets.count > 4_000_000 { failures.append("\(name): runaway read"); break }
            }
        } catch {
            r.error = error
        }
        return r
    }

    /// Where the bytes a packet needs end: past its data, up to where the next packet's record
    /// starts (IVF and Matroska report the frame header's or the block's offset, as ffprobe does,
    /// so the data runs to the next record), and for Ogg to the end of the page its data ends on
    /// (the page's CRC covers the whole page).
    ///
    /// MPEG-TS interleaves the transport packets of its streams, so a packet's PES runs past the
    /// next record of another stream, up to the next start on its own stream, whose transport
    /// packet header (its payload-unit-start flag) is what ends it: there the end is the next
    /// start on the same track plus one transport packet (192 bytes: M2TS's size). Its streams
    /// are compared track by track (`perTrack`): at a cut the demuxer hands out the PES each
    /// stream still holds, in an order the intact file does not have. FLAC and raw H.264 / HEVC
    /// frames end where the next frame's header is found (`delimitedByNextFrame`).
    private struct Extent {
        let starts: [Int64]
        let oggPages: [Range<Int64>]
        let trackStarts: [Int: [Int64]]
        let delimitedByNextFrame: Bool
        let fileSize: Int64
        init(_ packets: [Packet], format: String, bytes: [UInt8]) {
            delimitedByNextFrame = ["flac", "h264", "hevc"].contains(format)
            starts = Array(Set(packets.map(\.position))).sorted()
            oggPages = format == "ogg" ? CorruptionSuiteTests.oggPages(bytes) : []
            trackStarts = format == "mpegts"
                ? Dictionary(grouping: packets, by: \.trackIndex).mapValues { Array(Set($0.map(\.position))).sorted() } : [:]
            fileSize = Int64(bytes.count)
        }
        func end(of p: Packet) -> Int64 {
            if let own = trackStarts[p.trackIndex] {
                return own.first { $0 > p.position }.map { min($0 + 192, fileSize) } ?? fileSize
            }
            var end = p.position + Int64(p.size)
            var lo = 0, hi = starts.count
            while lo < hi { let mid = (lo + hi) / 2; if starts[mid] <= p.position { lo = mid + 1 } else { hi = mid } }
            end = max(end, lo < starts.count ? starts[lo] : fileSize)
            if delimitedByNextFrame {
                // Found by the next frame's header: a cut inside that header joins its bytes to
                // this frame (FFmpeg's parsers do the same), so the next frame must be whole too.
                end = max(end, lo + 1 < starts.count ? starts[lo + 1] : fileSize)
            }
            if let page = oggPages.first(where: { $0.contains(end - 1) }) { end = max(end, page.upperBound) }
            return end
        }
    }

    /// What one corpus file's damaged copies gave.
    private struct FileResult: Sendable {
        var cases = 0, compared = 0, intactFrames = 0, damagedFrames = 0
        var slowest = (seconds: 0.0, label: "")
        var failures: [String] = []

        mutating func merge(_ other: FileResult) {
            cases += other.cases
            compared += other.compared
            intactFrames += other.intactFrames
            damagedFrames += other.damagedFrames
            if other.slowest.seconds > slowest.seconds { slowest = other.slowest }
            failures += other.failures
        }
    }

    func testEveryCorpusFileCutAndFlipped() throws {
        let files = try SharedMedia.files(extensions: ["mp4", "mov", "m4a", "m4b", "m4v", "m4s", "cmfv", "3gp", "qta", "ogg", "opus", "oga", "ivf",
                                                        "mkv", "mka", "webm", "mp3", "mp2", "aac", "adts", "wav", "w64", "flac"])
        XCTAssertGreaterThan(files.count, 150, "MANIFEST.tsv lists more than 150 media files")
        try run(files)
    }

    /// The same over ../shared/media/breadth (issue 30's containers: MPEG-TS, AIFF, raw H.264 /
    /// HEVC / AC-3 / E-AC-3 / AMR streams, 3GP, and its WAV / FLAC / Matroska / Ogg files), the
    /// formats MediaKit reads natively; its AVI / Musepack / WebVTT files are not ours to read yet.
    func testEveryBreadthFileCutAndFlipped() throws {
        let files = try SharedMedia.files(extensions: ["ts", "m2ts", "mts", "aif", "aiff", "aifc", "caf", "264", "h264", "265", "hevc",
                                                        "ac3", "eac3", "amr", "3gp", "mov", "wav", "flac", "mkv", "ogv", "spx"],
                                          in: "breadth")
        XCTAssertGreaterThan(files.count, 60, "breadth/MANIFEST.tsv lists more than 60 files in these formats")
        try run(files)
    }

    private func run(_ files: [URL]) throws {
        let tmp = FileManager.default.temporaryDirectory.appendingPathComponent("mk-corrupt-\(getpid())")
        try FileManager.default.createDirectory(at: tmp, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: tmp) }
        let started = Date()
        // Files in parallel, the largest first, and each file's damaged copies in parallel too, so
        // that both cores stay busy to the end instead of one working through the last large file's
        // copies alone (each case is single-threaded: decoders get one thread).
        let sized = files.map { ($0, (try? $0.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0) }
        let ordered = sized.sorted { $0.1 > $1.1 }.map(\.0)
        let results = Mutex<[FileResult]>([])
        DispatchQueue.concurrentPerform(iterations: ordered.count) { i in
            let r = Self.check(ordered[i], tmp: tmp)
            results.withLock { $0.append(r) }
        }
        let all = results.withLock { $0 }
        XCTAssertEqual(all.count, files.count)
        for failure in all.flatMap(\.failures) { XCTFail(failure) }
        let slowest = all.map(\.slowest).max { $0.seconds < $1.seconds } ?? (0, "")
        let intactFrames = all.reduce(0) { $0 + $1.intactFrames }
        // The decoders did run (the plugins were found): the intact files give frames.
        XCTAssertGreaterThan(intactFrames, 10_000, "the intact corpus files should decode to frames")
        print("corruption suite: \(files.count) files, \(all.reduce(0) { $0 + $1.cases }) damaged copies, "
              + "\(all.reduce(0) { $0 + $1.compared }) packets compared with the intact files', "
              + "\(intactFrames) frames decoded from the intact files and \(all.reduce(0) { $0 + $1.damagedFrames }) from the damaged copies, "
              + "\(String(format: "%.1f", Date().timeIntervalSince(started))) s; slowest case \(String(format: "%.2f", slowest.seconds)) s (\(slowest.label))")
    }

    /// Every damaged copy of one file: read, compared with the intact reading, decoded, remuxed.
    private static func check(_ file: URL, tmp: URL) -> FileResult {
        var result = FileResult()
        let name = file.lastPathComponent
        guard let data = try? Data(contentsOf: file) else {
            result.failures.append("cannot read \(file.path)")
            return result
        }
        let bytes = [UInt8](data)
        guard !bytes.isEmpty else { return result }
        let intact = read(bytes, name: name, failures: &result.failures)
        if intact.opened && intact.error == nil {
            result.intactFrames += decode(intact, label: name, failures: &result.failures)
        }
        let extent = Extent(intact.packets, format: intact.format, bytes: bytes)
        let indexEnd = intact.format == "mp4" ? mp4IndexEnd(bytes) : 0
        var rng = SeededRandom(state: UInt64(bitPattern: Int64(name.utf8.reduce(5381) { ($0 &* 33) &+ Int($1) })))

        var variants: [(label: String, bytes: [UInt8], damage: Int64, cut: Bool)] = []
        for k in 1...cuts {
            let at = bytes.count * k / (cuts + 1)
            variants.append(("cut at \(at)", Array(bytes[..<at]), Int64(at), true))
        }
        for c in 0..<flipCopies {
            var copy = bytes
            var first = Int64.max
            for _ in 0..<flipsPerCopy {
                let at = Int(rng.next() % UInt64(bytes.count))
                copy[at] ^= UInt8(1 + rng.next() % 255)
                first = min(first, Int64(at))
            }
            variants.append(("flip copy \(c) (first flipped byte \(first))", copy, first, false))
        }

        let total = Mutex(result)
        let copies = variants
        DispatchQueue.concurrentPerform(iterations: copies.count) { n in
            let v = copies[n]
            var result = FileResult()
            defer { total.withLock { $0.merge(result) } }
            let label = "\(name) \(v.label)"
            let t0 = Date()
            let got = read(v.bytes, name: name, failures: &result.failures)
            if let e = got.error, !(e is MediaError) { result.failures.append("\(label): not a MediaError: \(e)") }
            // The packets before the damage are the intact file's.
            let comparable = intact.opened && intact.error == nil && got.opened && (indexEnd == 0 || v.damage >= indexEnd)
            if comparable {
                // One sequence (the file's order), or one per track (MPEG-TS).
                let perTrack = intact.format == "mpegts"
                let keys = perTrack ? Array(Set(intact.packets.map(\.trackIndex))).sorted() : [-1]
                for key in keys {
                    let want = perTrack ? intact.packets.filter { $0.trackIndex == key } : intact.packets
                    let have = perTrack ? got.packets.filter { $0.trackIndex == key } : got.packets
                    for (i, p) in have.enumerated() {
                        guard i < want.count else { break }
                        let o = want[i]
                        if extent.end(of: o) > v.damage { break }
                        result.compared += 1
                        if p.trackIndex != o.trackIndex || p.pts != o.pts || p.dts != o.dts || p.position != o.position || p.data != o.data {
                            result.failures.append("\(label): packet \(i)\(perTrack ? " of the track" : "") (track \(o.trackIndex), pts \(o.pts), at \(o.position)) lies before the damage but differs from the intact file's (got track \(p.trackIndex), pts \(p.pts), at \(p.position), \(p.size) bytes)")
                            break
                        }
                    }
                    if v.cut {
                        // Read as far as it goes: every packet wholly before the cut came out.
                        let whole = want.prefix { extent.end(of: $0) <= v.damage }.count
                        if have.count < whole {
                            result.failures.append("\(label): \(whole) packets\(perTrack ? " of track \(key)" : "") lie wholly before the cut, \(have.count) came out (\(String(describing: got.error)))")
                        }
                    }
                }
            }
            if got.opened {
                let windows = intact.opened && intact.error == nil ? Self.damagedWindows(got, intact) : nil
                result.damagedFrames += decode(got, windows: windows, label: label, failures: &result.failures)
            }
            remux(v.bytes, name: name, into: tmp, label: label, copy: n, failures: &result.failures)
            let elapsed = Date().timeIntervalSince(t0)
            if elapsed >= caseSeconds { result.failures.append("\(label): one case took \(elapsed) s") }
            if elapsed > result.slowest.seconds { result.slowest = (elapsed, label) }
            result.cases += 1
        }
        return total.withLock { $0 }
    }

    /// Decodes the first audio and the first video track of a reading with the real plugins
    /// (as `mk-decode` does): errors must be ``MediaError``s. With `windows`, only those packet
    /// ranges of each track (indexes into the track's packets), each with a decoder of its own
    /// that is flushed at the window's end; without, every packet.
    /// - Returns: the frames decoded.
    private static func decode(_ r: Reading, windows: [Int: [Range<Int>]]? = nil, label: String, failures: inout [String]) -> Int {
        var frames = 0
        for type in [MediaType.audio, .video] {
            guard let track = r.tracks.first(where: { $0.mediaType == type }) else { continue }
            let packets = r.packets.filter { $0.trackIndex == track.index }
            for window in windows.map({ $0[track.index] ?? [] }) ?? [0..<packets.count] {
                guard let session = try? DecodeSession(track: track, threads: 1) else { break }
                do {
                    for p in packets[window] {
                        while try session.send(p) == .receiveFirst {
                            while try session.receive() != nil { frames += 1 }
                        }
                        while try session.receive() != nil { frames += 1 }
                    }
                    try session.flush()
                    while try session.receive() != nil { frames += 1 }
                } catch is MediaError {
                } catch {
                    failures.append("\(label): decoding track \(track.index) threw a non-MediaError: \(error)")
                }
            }
        }
        return frames
    }

    /// The packets of a damaged copy worth decoding: the intact reading decoded every packet
    /// already, so decoding the copy's packets that equal the intact file's, away from any
    /// damage, adds no check (it was most of the suite's time: ten whole decodes per file for the
    /// flipped copies, twenty prefixes for the cut ones). Per track, for each packet that differs
    /// from the intact file's (or has no counterpart there), a window from the key frame at or
    /// before the fourth packet ahead of it to four packets past the next key frame (so the
    /// damaged packet is decoded with the references it has, and everything that may refer to it:
    /// the rest of its group of pictures, and the next one's leading pictures, which may still
    /// refer to pictures before their key frame); windows that meet are joined.
    /// A copy whose packets all equal the intact file's (a cut copy that ends on a packet
    /// boundary) decodes its last group of pictures, so the decoder is still flushed where the
    /// copy ends.
    private static func damagedWindows(_ got: Reading, _ intact: Reading) -> [Int: [Range<Int>]] {
        var windows: [Int: [Range<Int>]] = [:]
        for track in Set(got.packets.map(\.trackIndex)) {
            let have = got.packets.filter { $0.trackIndex == track }
            let want = intact.packets.filter { $0.trackIndex == track }
            var damaged = have.indices.filter { i in
                i >= want.count || have[i].pts != want[i].pts || have[i].dts != want[i].dts || have[i].data != want[i].data
            }
            if damaged.isEmpty { damaged = [have.count - 1] }
            var ranges: [Range<Int>] = []
            for d in damaged {
                let from = have[...max(0, d - 4)].lastIndex(where: \.isKeyframe) ?? 0
                let next = have[(d + 1)...].firstIndex(where: \.isKeyframe) ?? have.count
                let to = min(have.count, next + 4)
                if let last = ranges.last, from <= last.upperBound {
                    ranges[ranges.count - 1] = last.lowerBound..<max(last.upperBound, to)
                } else {
                    ranges.append(from..<to)
                }
            }
            windows[track] = ranges
        }
        return windows
    }

    /// Remuxes a damaged copy into MP4: success or a ``MediaError``, and no file under the
    /// output's name after a failure.
    private static func remux(_ bytes: [UInt8], name: String, into dir: URL, label: String, copy: Int, failures: inout [String]) {
        let input = dir.appendingPathComponent("in-\(copy)-" + name).path
        let output = dir.appendingPathComponent("out-\(copy)-\(name).mp4").path
        defer { unlink(input); unlink(output) }
        guard FileManager.default.createFile(atPath: input, contents: Data(bytes)) else {
            return failures.append("cannot write \(input)")
        }
        do {
            try Remuxer.remux(input: input, output: output)
        } catch is MediaError {
            if FileManager.default.fileExists(atPath: output) { failures.append("\(label): a failed remux left \(output)") }
        } catch {
            failures.append("\(label): remux threw a non-MediaError: \(error)")
        }
    }

    /// The byte ranges of the Ogg pages of an intact file, in order (junk between pages skipped).
    static func oggPages(_ b: [UInt8]) -> [Range<Int64>] {
        var pages: [Range<Int64>] = []
        var at = 0
        while at + 27 <= b.count {
            // Pages may have junk between them (the demuxer resyncs on the capture pattern).
            guard b[at] == 0x4F, b[at + 1] == 0x67, b[at + 2] == 0x67, b[at + 3] == 0x53 else {
                at += 1
                continue
            }
            let segments = Int(b[at + 26])
            guard at + 27 + segments <= b.count else { break }
            let body = b[(at + 27)..<(at + 27 + segments)].reduce(0) { $0 + Int($1) }
            let end = at + 27 + segments + body
            pages.append(Int64(at)..<Int64(end))
            at = end
        }
        return pages
    }

    /// Where the MP4 index ends: the end of the `moov` box (0 when there is none). A flip
    /// before it may change every packet; fragments (`moof`) come before their own samples.
    static func mp4IndexEnd(_ b: [UInt8]) -> Int64 {
        var at = 0
        while at + 8 <= b.count {
            var size = Int(b[at]) << 24 | Int(b[at + 1]) << 16 | Int(b[at + 2]) << 8 | Int(b[at + 3])
            let type = String(decoding: b[(at + 4)..<(at + 8)], as: UTF8.self)
            if size == 1, at + 16 <= b.count {
                size = b[(at + 8)..<(at + 16)].reduce(0) { $0 << 8 | Int($1) }
            } else if size == 0 {
                size = b.count - at
            }
            guard size >= 8 else { break }
            if type == "moov" { return Int64(at + size) }
            at += size
        }
        return 0
    }
}
