import Foundation
import MediaKit

/// What each fuzz target does with one input: the one place, shared by the libFuzzer
/// executables of `Tests/fuzz` (this file is linked there as `Sources/FuzzHarness`) and by
/// `FuzzRegressionTests`, which replays every saved crasher of `Tests/fuzz/regressions/<target>/`.
///
/// Every entry takes any bytes. A thrown ``MediaError`` is the expected answer to bad input and is
/// swallowed; a crash, a hang or an allocation the size of a lie is the finding.
///
/// Adding a target: one function here, its name in ``targets`` and one line in `Tests/fuzz/Package.swift`.
public enum FuzzHarness {
    /// Packets read per pass at most: a fuzz input is at most a few hundred KB, and no real
    /// file of that size holds more, but a table may claim billions of empty samples.
    static let maxPackets = 1 << 17

    /// The targets by name (the executable is `fuzz-<name>`, its regressions `Tests/fuzz/regressions/<name>/`).
    public static let targets: [String: @Sendable ([UInt8]) -> Void] = [
        "mp4": mp4,
        "ogg": ogg,
        "ivf": ivf,
        "wav": wav,
        "aiff": aiff,
        "caf": caf,
        "mpegts": mpegts,
        "rawvideo": rawVideo,
        "flac": flac,
        "matroska": matroska,
        "audiostream": audioStream,
        "audiostream-demuxer": audioStreamDemuxer,
        "rawaudio": rawAudio,
        "probe": probe,
        "remux": remux,
        "mux": mux,
        "srt": srt,
        "webvtt": webvtt,
        "tx3g": tx3g,
        "ass": ass,
        "tags": tags,
        "ilst": ilst,
        "tagedit": tagEdit,
        "lavf": lavf,
        "mkvzlib": matroskaZlib,
    ]

    /// MP4 / QuickTime, progressive and fragmented: open, read all, seek, re-read, per track.
    public static func mp4(_ data: [UInt8]) { demux(data) { try MP4Demuxer(source: $0) } }
    /// Ogg (Opus, Vorbis, FLAC, chained links).
    public static func ogg(_ data: [UInt8]) { demux(data) { try OggDemuxer(source: $0) } }
    /// IVF (AV1, VP8, VP9).
    public static func ivf(_ data: [UInt8]) { demux(data) { try IVFDemuxer(source: $0) } }
    /// WAV / RF64 / Wave64.
    public static func wav(_ data: [UInt8]) { demux(data) { try WAVDemuxer(source: $0) } }
    /// AIFF / AIFF-C (COMM, SSND, the compression types, 80-bit rates).
    public static func aiff(_ data: [UInt8]) { demux(data) { try AIFFDemuxer(source: $0) } }
    /// CAF (desc, kuki, pakt packet tables, chan, info, data of unknown size).
    public static func caf(_ data: [UInt8]) { demux(data) { try CAFDemuxer(source: $0) } }
    /// MPEG-TS / M2TS (PAT, PMT, PES, the audio frame splitters, the SPS / VPS timing readers).
    /// MPEG-TS: inputs of even length from memory, of odd length through a source that cannot
    /// seek (a pipe: no look ahead at open, so a later PMT version adds its tracks while reading).
    public static func mpegts(_ data: [UInt8]) {
        if data.count % 2 == 1 {
            exercise { try MPEGTSDemuxer(source: pipe(data)) }
        } else {
            demux(data) { try MPEGTSDemuxer(source: $0) }
        }
    }

    /// `data` as a source that cannot seek, read front to back as from a pipe.
    static func pipe(_ data: [UInt8]) -> ByteSource {
        final class Position: @unchecked Sendable { var offset = 0 }
        let at = Position()
        return CallbackSource(name: "fuzz-pipe", size: nil, read: { buffer in
            let n = min(buffer.count, data.count - at.offset)
            data.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[at.offset..<(at.offset + n)])) }
            at.offset += n
            return n
        }, seek: nil)
    }
    /// Raw H.264 / HEVC (the access unit splitters, SPS / VPS / SEI readers) and AV1 OBU streams:
    /// the first byte chooses the syntax (0 H.264, 1 HEVC, 2 AV1; modulo 3), the rest is the stream.
    public static func rawVideo(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let syntax: RawVideoDemuxer.Syntax = [.h264, .hevc, .av1][Int(first) % 3]
        demux(Array(data.dropFirst())) { try RawVideoDemuxer(source: $0, syntax: syntax) }
    }
    /// Matroska / WebM (EBML, lacing, unknown sizes, Cues).
    public static func matroska(_ data: [UInt8]) { demux(data) { try MatroskaDemuxer(source: $0) } }
    /// Native FLAC.
    public static func flac(_ data: [UInt8]) { demux(data) { try FLACDemuxer(source: $0) } }
    /// MP3 / ADTS files through their demuxer (which drives ``AudioStreamParser`` over a file).
    public static func audioStreamDemuxer(_ data: [UInt8]) { demux(data) { try AudioStreamDemuxer(source: $0) } }
    /// Whatever the probe picks (every built-in container), as `mk-probe` and the C API open files.
    public static func probe(_ data: [UInt8]) { demux(data) { try ContainerCatalog.shared.open($0).demuxer } }

    /// The plugins' container formats (the FFmpeg plugin's libavformat demuxers, issue 31)
    /// reading through MediaKit's IO callbacks: the plugin format whose probe scores the bytes
    /// best (any of them, also those whose container MediaKit reads itself, which
    /// ``ContainerCatalog`` uses only when named) opens them, then the reads of
    /// ``demux(_:open:)``: every packet, seeks, every track. Nothing is tried when no plugin
    /// container format is loaded (a build without the FFmpeg plugin).
    public static func lavf(_ data: [UInt8]) {
        let formats = ContainerCatalog.shared.pluginFormats
        guard !formats.isEmpty, !data.isEmpty else { return }
        let head = Array(data.prefix(ContainerCatalog.probeSize))
        var best: (format: MediaRegistry.DemuxerFormat, score: Int)?
        for f in formats {
            let score = f.score(head, size: Int64(data.count))
            if score > (best?.score ?? 0) { best = (f, score) }
        }
        guard let chosen = best?.format.qualifiedName else { return }
        demux(data) { try ContainerCatalog.shared.open($0, demuxer: chosen).demuxer }
    }

    /// The inflater of Matroska's zlib ContentCompression (`Inflate`), reached through the
    /// demuxer: the input after its first byte is the stored frame of a subtitle track whose
    /// ContentEncoding is zlib with ContentEncodingScope 1 (byte 0 even) or 3 (odd: the same
    /// bytes are its CodecPrivate too). Header, block types, Huffman tables, distances, the
    /// Adler-32 trailer and the output bound are all the input's to break.
    public static func matroskaZlib(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let stored = Array(data.dropFirst())
        demux(matroskaZlibFile(frame: stored, scope: first % 2 == 0 ? 1 : 3)) { try MatroskaDemuxer(source: $0) }
    }

    /// The smallest Matroska file with one S_TEXT/UTF8 track compressed with zlib (ContentCompAlgo 0)
    /// under `scope`, whose one SimpleBlock (a key frame at 0) stores `frame`; with scope bit 2,
    /// `frame` is the track's CodecPrivate as well. Shared by the fuzz target and the unit tests.
    public static func matroskaZlibFile(frame: [UInt8], scope: UInt8) -> [UInt8] {
        func element(_ id: [UInt8], _ payload: [UInt8]) -> [UInt8] {
            // An 8-byte size (0x01 marker): any payload length fits.
            let n = payload.count
            return id + [0x01] + (0..<7).map { UInt8(truncatingIfNeeded: n >> (8 * (6 - $0))) } + payload
        }
        func uint(_ id: [UInt8], _ v: UInt8) -> [UInt8] { id + [0x81, v] }
        let header = element([0x1A, 0x45, 0xDF, 0xA3], element([0x42, 0x82], Array("matroska".utf8)))
        let encoding = element([0x6D, 0x80], element([0x62, 0x40], uint([0x50, 0x32], scope) + uint([0x50, 0x33], 0)
            + element([0x50, 0x34], uint([0x42, 0x54], 0))))
        let entry = element([0xAE], uint([0xD7], 1) + uint([0x73, 0xC5], 1) + uint([0x83], 0x11)
            + element([0x86], Array("S_TEXT/UTF8".utf8)) + (scope & 2 != 0 ? element([0x63, 0xA2], frame) : []) + encoding)
        let info = element([0x15, 0x49, 0xA9, 0x66], element([0x2A, 0xD7, 0xB1], [0x0F, 0x42, 0x40]))
        let block = element([0xA3], [0x81, 0x00, 0x00, 0x80] + frame)
        let cluster = element([0x1F, 0x43, 0xB6, 0x75], uint([0xE7], 0) + block)
        return header + element([0x18, 0x53, 0x80, 0x67], info + element([0x16, 0x54, 0xAE, 0x6B], entry) + cluster)
    }

    /// SubRip files: the line reader, the timing lines, the markup to ASS and the SubRip /
    /// WebVTT rendering of every cue.
    public static func srt(_ data: [UInt8]) { textSubtitles(data, format: .subrip) }
    /// WebVTT files, then the input as an MP4 `wvtt` sample (vttc / iden / sttg / payl boxes).
    public static func webvtt(_ data: [UInt8]) {
        textSubtitles(data, format: .webvtt)
        var p = CodecParameters(mediaType: .subtitle, codec: "webvtt", codecTag: "wvtt")
        p.extradata = []
        decodeCues(data, parameters: p)
    }
    /// A `tx3g` sample entry (the first byte's count of bytes, up to 255) and a sample (the rest):
    /// the defaults, the text length, the style / highlight / wrap boxes, the UTF-8 walk.
    public static func tx3g(_ data: [UInt8]) {
        guard let first = data.first else { return }
        let n = min(Int(first), data.count - 1)
        let entry = Array(data[1..<(1 + n)])
        var p = CodecParameters(mediaType: .subtitle, codec: "mov_text", codecTag: "tx3g")
        p.sampleEntry = entry
        _ = MovText.defaults(entry: entry)
        decodeCues(Array(data[(1 + n)...]), parameters: p)
    }
    /// An ASS header (up to the first NUL byte) and an event line (the rest): styles, the event
    /// fields, the override codes, both renderings.
    public static func ass(_ data: [UInt8]) {
        let cut = data.firstIndex(of: 0) ?? data.count
        var p = CodecParameters(mediaType: .subtitle, codec: "ass")
        p.extradata = Array(data[..<cut])
        decodeCues(cut < data.count ? Array(data[(cut + 1)...]) : [], parameters: p)
    }

    static func textSubtitles(_ data: [UInt8], format: ContainerFormat) {
        exercise { try format.makeDemuxer(MemorySource(data, name: "fuzz")) }
        guard let d = try? format.makeDemuxer(MemorySource(data, name: "fuzz")),
              let decoder = try? SubtitleDecoder(parameters: d.tracks[0].parameters) else { return }
        var n = 0
        while n < maxPackets, let p = try? d.read() {
            for cue in (try? decoder.decode(p)) ?? [] {
                _ = decoder.render(cue, as: .subrip)
                _ = decoder.render(cue, as: .webvtt)
            }
            n += 1
        }
    }

    static func decodeCues(_ sample: [UInt8], parameters: CodecParameters) {
        guard let decoder = try? SubtitleDecoder(parameters: parameters) else { return }
        let packet = Packet(trackIndex: 0, pts: 0, dts: 0, duration: 1, isKeyframe: true, data: sample, timeBase: Rational(1, 1000))
        for cue in (try? decoder.decode(packet)) ?? [] {
            _ = decoder.render(cue, as: .subrip)
            _ = decoder.render(cue, as: .webvtt)
        }
    }

    /// Opens `data` with `open`, then: every packet in file order, a seek to the start, the middle,
    /// past the end and before the start with a few packets after each, every packet of each track.
    static func demux(_ data: [UInt8], open: (ByteSource) throws -> Demuxer) {
        exercise { try open(MemorySource(data, name: "fuzz")) }
    }

    /// The reads of ``demux(_:open:)`` on the demuxer `open` returns (nothing when it throws).
    static func exercise(_ open: () throws -> Demuxer) {
        guard let d = try? open() else { return }
        for t in d.tracks { _ = (t.parameters.codec, t.duration, t.sampleCount) }
        _ = d.duration
        drain(maxPackets) { try d.read() }
        let middle = (d.duration ?? 1).isFinite ? (d.duration ?? 1) / 2 : 1
        for target in [0, middle, 1e9, -5] {
            guard (try? d.seek(to: target)) != nil else { continue }
            drain(16) { try d.read() }
        }
        guard (try? d.seek(to: 0)) != nil else { return }
        for t in d.tracks.indices { drain(maxPackets) { try d.read(track: t) } }
        _ = d.warnings
        touchMetadata(d)
    }

    /// Every tag, chapter and attachment of `d` (and the FFmpeg view, which merges them).
    static func touchMetadata(_ d: Demuxer) {
        for m in [d.metadata] + d.tracks.map(\.metadata) + d.chapters.map(\.metadata) { _ = m.ffmpegTags.count }
        for a in d.attachments { _ = (a.data.last, a.mimeType) }
        for c in d.chapters { _ = (c.start, c.end, c.title) }
    }

    /// The tag parsers on their own, the input wrapped in the smallest file that reaches them;
    /// byte 0 chooses (modulo 4): 0 an ID3v2.3 / 2.4 tag body (byte 1: the version) in front of
    /// MPEG audio frames (ID3 frames, TXXX, COMM, APIC, CHAP / CTOC), 1 a FLAC VORBIS_COMMENT
    /// block (Vorbis comments, METADATA_BLOCK_PICTURE, OGM chapters), 2 a WAV's chunks after
    /// `fmt ` (LIST/INFO, `id3 `), 3 an AIFF's chunks (NAME, AUTH, ANNO, (c), `ID3 `). Matroska
    /// Tags, Chapters and Attachments are read by the "matroska" target's opening.
    public static func tags(_ data: [UInt8]) {
        guard let (file, open) = tagFile(data) else { return }
        if let d = try? open(MemorySource(file, name: "fuzz")) { touchMetadata(d) }
    }

    /// The file ``tags(_:)`` makes of `data` and the demuxer that reads it; nil for fewer than 2 bytes.
    static func tagFile(_ data: [UInt8]) -> (file: [UInt8], open: (ByteSource) throws -> Demuxer)? {
        guard data.count >= 2 else { return nil }
        let body = Array(data.dropFirst(2))
        func be32(_ n: Int) -> [UInt8] { [UInt8((n >> 24) & 0xFF), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] }
        func le32(_ n: Int) -> [UInt8] { be32(n).reversed() }
        var file: [UInt8]
        let open: (ByteSource) throws -> Demuxer
        switch data[0] % 5 {
        case 0:
            let n = body.count
            let silentFrame = [0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 413)   // MPEG-1 Layer III 128 kb/s 44.1 kHz
            file = [0x49, 0x44, 0x33, 3 + data[1] % 2, 0, 0, UInt8((n >> 21) & 0x7F), UInt8((n >> 14) & 0x7F), UInt8((n >> 7) & 0x7F), UInt8(n & 0x7F)]
                + body + Array([[UInt8]](repeating: silentFrame, count: 4).joined())
            open = { try AudioStreamDemuxer(source: $0) }
        case 1:
            // STREAMINFO: 4096-sample blocks, 44100 Hz, 2 channels, 16 bits, 44100 samples.
            let info: [UInt8] = [0x10, 0x00, 0x10, 0x00, 0, 0, 0, 0, 0, 0, 0x0A, 0xC4, 0x42, 0xF0, 0x00, 0x00, 0xAC, 0x44] + [UInt8](repeating: 0, count: 16)
            let n = min(body.count, 0xFF_FFFF)
            file = Array("fLaC".utf8) + [0, 0, 0, 34] + info + [0x84, UInt8(n >> 16), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] + body.prefix(n)
            open = { try FLACDemuxer(source: $0) }
        case 2:
            let fmt: [UInt8] = Array("fmt ".utf8) + le32(16) + [1, 0, 2, 0, 0x44, 0xAC, 0, 0, 0x10, 0xB1, 2, 0, 4, 0, 16, 0]
            let rest = fmt + body + Array("data".utf8) + le32(4) + [0, 0, 0, 0]
            file = Array("RIFF".utf8) + le32(rest.count + 4) + Array("WAVE".utf8) + rest
            open = { try WAVDemuxer(source: $0) }
        case 4:
            // Eight ADTS frames (AAC LC, 44.1 kHz, stereo, 17 bytes), then the rest as the items
            // of an APEv2 tag whose footer ends the file (byte 1: the item count).
            let frame: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x3F, 0xFC] + [UInt8](repeating: 0, count: 10)
            let footer = Array("APETAGEX".utf8) + le32(2000) + le32(body.count + 32) + le32(Int(data[1])) + le32(0) + [UInt8](repeating: 0, count: 8)
            file = Array([[UInt8]](repeating: frame, count: 8).joined()) + body + footer
            open = { try AudioStreamDemuxer(source: $0) }
        default:
            let comm: [UInt8] = Array("COMM".utf8) + be32(18) + [0, 2, 0, 0, 0, 1, 0, 16, 0x40, 0x0E, 0xAC, 0x44, 0, 0, 0, 0, 0, 0]
            let rest = comm + body + Array("SSND".utf8) + be32(12) + [UInt8](repeating: 0, count: 12)
            file = Array("FORM".utf8) + be32(rest.count + 4) + Array("AIFF".utf8) + rest
            open = { try AIFFDemuxer(source: $0) }
        }
        return (file, open)
    }

    /// The MP4 / QuickTime tag readers (issue 33): the input after its first byte is the payload
    /// of a movie's `udta` (byte 0 even: ilst in meta, ©xxx strings, chpl, loci, `----`) or of a
    /// QuickTime `meta` at the movie level (odd: hdlr, keys, ilst of mdta items), in a file with
    /// one audio track whose `tref/chap` names itself (so its sample, the input's last 64 bytes,
    /// is read as a chapter title); then every tag, chapter and attachment.
    public static func ilst(_ data: [UInt8]) {
        guard let file = ilstFile(data) else { return }
        if let d = try? MP4Demuxer(source: MemorySource(file, name: "fuzz")) { touchMetadata(d) }
    }

    /// The MP4 file ``ilst(_:)`` makes of `data`; nil for no bytes.
    static func ilstFile(_ data: [UInt8]) -> [UInt8]? {
        guard let first = data.first else { return nil }
        let body = Array(data.dropFirst())
        func be32(_ n: Int) -> [UInt8] { [UInt8((n >> 24) & 0xFF), UInt8((n >> 16) & 0xFF), UInt8((n >> 8) & 0xFF), UInt8(n & 0xFF)] }
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] { be32(payload.count + 8) + Array(type.utf8) + payload }
        let sample = Array(body.suffix(64))
        let ftyp = box("ftyp", Array("isom".utf8) + be32(512) + Array("isommp41".utf8))
        let mdatOffset = ftyp.count + 8
        let mdat = box("mdat", sample)
        let mvhd = box("mvhd", [UInt8](repeating: 0, count: 4) + be32(1) + be32(0) + be32(1000) + be32(1000) + [UInt8](repeating: 0, count: 80))
        let tkhd = box("tkhd", [0, 0, 0, 3] + be32(0) + be32(0) + be32(1) + be32(0) + be32(1000) + [UInt8](repeating: 0, count: 60))
        let mdhd = box("mdhd", [UInt8](repeating: 0, count: 4) + be32(5) + be32(0) + be32(1000) + be32(1000) + [0x15, 0xC7, 0, 0])
        let hdlr = box("hdlr", [UInt8](repeating: 0, count: 8) + Array("text".utf8) + [UInt8](repeating: 0, count: 12) + Array("Chapters\0".utf8))
        let stbl = box("stbl", box("stsd", be32(0) + be32(1) + box("text", [UInt8](repeating: 0, count: 51)))
            + box("stts", be32(0) + be32(1) + be32(1) + be32(1000)) + box("stsc", be32(0) + be32(1) + be32(1) + be32(1) + be32(1))
            + box("stsz", be32(0) + be32(sample.count) + be32(1)) + box("stco", be32(0) + be32(1) + be32(mdatOffset)))
        let trak = box("trak", tkhd + box("tref", box("chap", be32(1))) + box("mdia", mdhd + hdlr + box("minf", stbl)))
        let tags = first % 2 == 0 ? box("udta", body) : box("meta", body)
        return ftyp + mdat + box("moov", mvhd + trak + tags)
    }

    /// The tag editor (issue 33: `mk-tag`, ``TagEditor``), whose planners read a file's own tag
    /// bytes to write them again: the MP4 `moov` / `udta` / `meta` / `ilst` walk and the
    /// in-place plans of the `free` boxes, the ID3v2 frame copy (frames the model does not
    /// hold), the FLAC metadata blocks. Byte 0 chooses the file (modulo 3: 0 the MP4 of
    /// ``ilst(_:)``, 1 the MP3 and 2 the FLAC of ``tags(_:)``, made of the input after byte 1),
    /// byte 1 the edits (bits: set the title, remove the artist, set a custom key, put a cover
    /// in, remove the pictures, clear every tag, no in-place write); the file is written to a
    /// temporary file (in /dev/shm where there is one), edited through ``TagEditor/edit(path:edits:allowInPlace:)``
    /// and read back.
    public static func tagEdit(_ data: [UInt8]) {
        guard data.count >= 3 else { return }
        let rest = Array(data.dropFirst(2)), bits = data[1]
        let made: (file: [UInt8], ext: String)?
        switch data[0] % 3 {
        case 0: made = ilstFile(rest).map { ($0, "mp4") }
        case 1: made = tagFile([0] + rest).map { ($0.file, "mp3") }
        default: made = tagFile([1] + rest).map { ($0.file, "flac") }
        }
        guard let (file, ext) = made else { return }
        var edits = TagEdits()
        if bits & 1 != 0 { edits.set["title"] = "fuzz title \u{00E9}" }
        if bits & 2 != 0 { edits.remove.append("artist") }
        if bits & 4 != 0 { edits.set["MK_FUZZ"] = String(repeating: "x", count: Int(bits)) }
        if bits & 8 != 0 {
            let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0] + [UInt8](repeating: 0, count: 60) + [0xFF, 0xD9]
            edits.cover = Attachment(data: jpeg, mimeType: "image/jpeg", pictureType: 3)
        }
        if bits & 16 != 0 { edits.removePictures = true }
        if bits & 32 != 0 { edits.clear = true }
        let dir = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
        let path = "\(dir)/mk-fuzz-tagedit-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).\(ext)"
        guard FileManager.default.createFile(atPath: path, contents: Data(file)) else { return }
        defer { try? FileManager.default.removeItem(atPath: path) }
        _ = try? TagEditor.edit(path: path, edits: edits, allowInPlace: bits & 64 == 0)
        if let listing = try? TagEditor.read(path: path) {
            _ = (listing.tags.ffmpegTags.count, listing.chapters.count, listing.attachments.last?.data.last)
        }
    }

    /// Reads until the end, an error, or `limit` packets; touches each packet's bytes.
    static func drain(_ limit: Int, _ next: () throws -> Packet?) {
        var n = 0
        while n < limit, let p = try? next() {
            _ = p.data.last
            n += 1
        }
    }

    /// ``AudioStreamParser`` fed the input in chunks whose sizes come from the input's first bytes
    /// (down to one byte), then a seek and a discontinuous push of the rest, then the end.
    public static func audioStream(_ data: [UInt8]) {
        guard data.count >= 2 else { return }
        let parser = AudioStreamParser(totalBytes: data[0] & 1 == 0 ? Int64(data.count - 2) : nil)
        var rng = UInt64(data[0]) << 8 | UInt64(data[1])
        let body = Array(data[2...])
        var at = 0
        while at < body.count {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            let size = 1 + Int((rng >> 33) % UInt64(rng & 0x10000 == 0 ? 16 : 4096))
            let end = min(body.count, at + size)
            guard (try? parser.push(Array(body[at..<end]))) != nil else { return }
            at = end
        }
        _ = parser.finish()
        // Seek back in and read the rest again from the offset the parser chose.
        let fresh = AudioStreamParser(totalBytes: Int64(body.count))
        guard (try? fresh.push(body)) != nil else { return }
        if let s = fresh.seek(to: Double(data[1]) / 16), s.offset >= 0, s.offset < Int64(body.count) {
            _ = try? fresh.push(Array(body[Int(s.offset)...]), discontinuity: true)
        }
        _ = fresh.finish()
    }

    /// Raw AC-3 / E-AC-3, DTS and AMR streams (issue 30): the push parser in random chunks and
    /// after a seek (as ``audioStream(_:)``), then the input's body through the probe and the
    /// demuxer the catalogue picks for it. Seeded with those files (Tests/fuzz/seeds/rawaudio).
    public static func rawAudio(_ data: [UInt8]) {
        audioStream(data)
        guard data.count >= 2 else { return }
        exercise { try ContainerCatalog.shared.open(MemorySource(Array(data[2...]), name: "fuzz")).demuxer }
    }

    /// The remux path (`mk-remux`): the input, whatever its container, remuxed into MP4 with a
    /// layout chosen by its last byte, and the output read back.
    public static func remux(_ data: [UInt8]) {
        let dir = FileManager.default.temporaryDirectory.path
        let input = "\(dir)/mk-fuzz-remux-\(getpid()).in"
        let output = "\(dir)/mk-fuzz-remux-\(getpid()).mp4"
        defer { unlink(input); unlink(output) }
        guard FileManager.default.createFile(atPath: input, contents: Data(data)) else { return }
        let layouts: [MP4Muxer.Layout] = [.progressive, .fastStart, .fragmented(seconds: 0.5), .hybrid(seconds: 1)]
        let layout = layouts[Int(data.last ?? 0) % layouts.count]
        guard (try? Remuxer.remux(input: input, output: output, layout: layout)) != nil else { return }
        exercise { try MP4Demuxer(path: output) }
    }

    /// Every writer (MP4 in four layouts, Matroska, WebM, Ogg, MP3, FLAC, WAV, AIFF, MPEG-TS, HLS with TS or fMP4 segments) driven by a script read
    /// from the input (``MuxScript/init(fuzz:)``: tracks, packet sizes, timestamps, durations,
    /// trims, edit lists, dts out of order). The run ends in a ``MediaError`` or a file, which is
    /// read back through the probe; with `MK_FUZZ_FFPROBE` set, ffprobe must read it too (run.sh
    /// replays the corpus that way after fuzzing: ffprobe per input is too slow inside the loop).
    public static func mux(_ data: [UInt8]) {
        let script = MuxScript(fuzz: data)
        // HLS: its segments beside the playlist, in a folder of this process's own.
        let folder = "\(FileManager.default.temporaryDirectory.path)/mk-fuzz-mux-\(getpid())"
        if script.target.isHLS { mkdir(folder, 0o700) }
        let path = script.target.isHLS ? "\(folder)/index.m3u8"
            : "\(FileManager.default.temporaryDirectory.path)/mk-fuzz-mux-\(getpid()).\(script.target.fileExtension)"
        defer {
            unlink(path)
            if script.target.isHLS {
                let ext = script.target == .hls ? "ts" : "m4s"
                unlink("\(folder)/init.mp4")
                for n in 0..<100_000 where unlink("\(folder)/seg\(n).\(ext)") != 0 { break }
            }
        }
        guard case .file = script.run(path: path) else { return }
        if ProcessInfo.processInfo.environment["MK_FUZZ_FFPROBE"] != nil, let problem = script.ffprobeProblem(path: path) {
            fatalError("\(script.target): ffprobe does not read the file MediaKit wrote: \(problem)")
        }
        let written = script.target == .hls ? "\(folder)/seg0.ts" : script.target == .hlsFMP4 ? "\(folder)/init.mp4" : path
        exercise { try ContainerCatalog.shared.open(ByteSources.open(path: written)).demuxer }
    }
}
