// mk-remux: copies the tracks of a media file into a new MP4, Matroska / WebM, Ogg, MPEG-TS ... file (or an HLS presentation) without decoding them.
import ArgumentParser
import Foundation
import MediaKit

@main
struct Remux: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mk-remux",
        abstract: "Copy the compressed tracks of a media file into a new MP4, Matroska, WebM, Ogg, MPEG-TS ... file or an HLS presentation (no decoding).",
        discussion: """
        The samples are copied file to file in the kernel; memory holds the sample
        tables and at most one fragment. Layouts:
          (default)          progressive: media data, then the moov box
          --faststart        moov before the media data (for progressive download)
          --fragment SECONDS moof+mdat fragments starting at video key frames; while it
                             runs the output is OUT.partial, which a crash leaves
                             playable up to its last complete fragment
          --hybrid SECONDS   fragmented (crash-safe) while running, turned into a
                             progressive file in place when done
        Without --fragment/--hybrid the output is written to a hidden temporary file
        beside OUT and renamed on success: OUT never holds a half-written file.

        An output named .mkv, .mka or .webm is written as Matroska / WebM (packets
        through memory, Clusters starting at key frames, Cues and a SeekHead); a FIFO
        or device as the output gets a live stream (unknown sizes, nothing written back).

        An output named .ogg, .oga or .opus is written as Ogg: Opus, Vorbis and FLAC
        tracks (.opus: Opus only) from Ogg, Matroska / WebM or MP4, gapless (the Opus
        pre-skip and the end trim stay: the file decodes to the input's samples).
        Video tracks cannot go into Ogg: pick the audio ones with --track.

        From Matroska / WebM (and Ogg, IVF, MP3, ADTS, FLAC, WAV, MPEG-TS) into MP4:
        H.264, HEVC, AV1, VP9 (vp09 + vpcC), MPEG-1 / 2 video, Opus (pre-skip and end
        trim as the edit list), AC-3, AAC, FLAC, MP3, MP2, DTS and PCM; Vorbis and VP8
        are refused (not standard in MP4), E-AC-3 for now (write .mkv).

        From MPEG-TS the timestamps start at zero (the earliest track's first packet;
        the others keep their offset, in MP4 as an empty edit), as ffmpeg's copy does.
        Without --track every audio and video track is copied, and the subtitle and
        data tracks the output carries; the others (timed ID3, DVB tables) are left
        out with a note.

        Text subtitles: Matroska carries SubRip, ASS / SSA and WebVTT, WebM WebVTT; a
        text track the output does not carry is converted as ffmpeg -c:s srt / webvtt /
        mov_text converts it (into MP4 as tx3g, mov_text into Matroska as SubRip, any
        text into WebM as WebVTT). An output named .srt or .vtt takes the first text
        subtitle track and nothing else. Bitmap subtitles (PGS, DVB, DVD) are copied
        into Matroska; text outputs, WebM and MP4 refuse them (an MP4's own DVD
        subtitles are copied into MP4).

        An output named .wav, .aiff, .aif or .aifc takes one PCM track (integer,
        float, A-law, mu-law) and stores it in the format's byte order: WAV
        little-endian, AIFF big-endian (16-bit little-endian as AIFF-C sowt). The
        samples are the same, only their storage changes: mk-remux song.aiff
        song.wav keeps every sample (ffmpeg refuses that stream copy).

        An output named .caf takes one audio track of AAC, ALAC, FLAC, Opus or PCM;
        an MP4 edit list (or an encoder delay and padding) becomes the packet
        table's priming and remainder frames, so M4A -> CAF -> M4A keeps them.

        An output named .ts is written as MPEG-TS, as ffmpeg -c copy writes it: H.264
        and HEVC in Annex B with access unit delimiters and the parameter sets before
        key frames, AAC with ADTS headers, MP2, MP3, AC-3, E-AC-3, MPEG-1 / 2 video and
        Opus; timestamps 1.4 s after the source's, as ffmpeg's.

        --hls SECONDS writes an HLS presentation into the directory OUT (made when
        missing): OUT/index.m3u8, a VOD playlist, and MPEG-TS segments OUT/seg0.ts,
        seg1.ts ... cut at key frames about every SECONDS (an output named .m3u8
        without --hls gets 2 s segments beside it). --segment-format fmp4 writes
        fragmented MP4 (CMAF) segments instead: OUT/init.mp4 (ftyp + moov) and
        OUT/seg0.m4s, seg1.m4s ... (moof + mdat), the playlist version 7 with
        #EXT-X-MAP.

        Other extensions (.avi, .flv, .nut, .aac ...) are written by a plugin's muxer
        (plugin ABI 2.5): the FFmpeg plugin writes every format of libavformat, as
        ffmpeg -c copy writes it (--list-formats marks them [plugin ffmpeg]). A
        built-in writer always wins for its extensions; --format ffmpeg:mp4 names
        libavformat's writer of a container MediaKit writes itself.

        Examples:
          mk-remux in.mov out.mp4
          mk-remux in.mp4 out.ts
          mk-remux in.mp4 out/ --hls 4
          mk-remux in.mp4 out/ --hls 4 --segment-format fmp4
          mk-remux clip.mp4 clip.avi
          mk-remux take.aiff take.wav
          mk-remux song.m4a song.caf
          mk-remux clip.mp4 clip.mkv
          mk-remux talk.webm talk.opus --track 1
          mk-remux in.mp4 out.mp4 --faststart --track 0 --track 2
          mk-remux camera.mp4 out.mp4 --hybrid 2
        """)

    @Argument(help: "The input file (MP4, MOV, M4A, fragmented or not; Ogg, Matroska / WebM, MP3, ADTS, WAV, FLAC, AIFF, CAF, MPEG-TS).")
    var input: String?

    @Argument(help: "The output: its extension chooses the format (see --list-formats): .mp4 (MP4), .mkv / .mka (Matroska), .webm (WebM), .ogg / .oga (Ogg), .opus (Ogg Opus), .flac, .mp3, .wav, .aiff / .aif / .aifc, .caf, .ts (MPEG-TS), .m3u8 (HLS), .srt / .vtt (subtitles); with --hls, a directory.")
    var output: String?

    @Flag(help: "Print the formats MediaKit writes (name, extensions, codecs, options) and exit.")
    var listFormats = false

    @Option(help: ArgumentHelp("Write this format whatever OUTPUT's extension: a name --list-formats prints (\"matroska\"; a plugin's \"ffmpeg:avi\", and \"ffmpeg:mp4\" for libavformat's writer of a container MediaKit writes itself).", valueName: "NAME"))
    var format: String?

    @Flag(help: "Put the moov box at the front.")
    var faststart = false

    @Option(help: ArgumentHelp("Write a fragmented MP4, one fragment about every SECONDS.", valueName: "SECONDS"))
    var fragment: Double?

    @Option(help: ArgumentHelp("Fragmented while writing, progressive when done.", valueName: "SECONDS"))
    var hybrid: Double?

    @Option(help: ArgumentHelp("Write an HLS presentation into the directory OUTPUT: index.m3u8 and MPEG-TS segments of about SECONDS, cut at key frames.", valueName: "SECONDS"))
    var hls: Double?

    @Option(help: ArgumentHelp("With --hls: the segments' format, ts (MPEG-TS, default) or fmp4 (fragmented MP4 / CMAF: init.mp4 and .m4s segments).", valueName: "ts|fmp4"))
    var segmentFormat: String?

    @Option(name: .customLong("track"), help: ArgumentHelp("Keep only this track (0-based; repeatable). Default: all.", valueName: "N"))
    var tracks: [Int] = []

    @Option(help: ArgumentHelp("Time a raw H.264 / HEVC / AV1 OBU stream at this frame rate (N, N/D or a decimal), as ffmpeg's -r before -i. Default: the rate its SPS states, else 25.", valueName: "RATE"))
    var frameRate: String?

    @Option(name: .customLong("metadata"), help: ArgumentHelp("Set a container tag (repeatable; an empty VALUE removes it), as ffmpeg -metadata.", valueName: "KEY=VALUE"))
    var metadata: [String] = []

    @Flag(name: .customLong("no-metadata"), help: "Copy no tags, chapters or attachments (by default they are copied into what OUTPUT holds).")
    var noMetadata = false

    @Option(name: .customLong("id3v2-version"), help: ArgumentHelp("The ID3v2 version of the tags written into an MP3 (and with --write-id3v2 a WAV or AIFF): 3 or 4 (default 4), as ffmpeg -id3v2_version.", valueName: "3|4"))
    var id3v2Version: Int?

    @Flag(name: .customLong("write-id3v2"), help: "WAV and AIFF: also write the tags, cover art and chapters as an ID3v2 chunk after the samples (AIFF: as ffmpeg -write_id3v2 1).")
    var writeID3v2 = false

    @Option(name: .customLong("rf64"), help: ArgumentHelp("WAV: never (default), auto (a JUNK chunk reserved, RF64 past 4 GiB) or always RF64, as ffmpeg -rf64.", valueName: "never|auto|always"))
    var rf64: String = "never"

    @Flag(help: "Print no progress line.")
    var quiet = false

    @Option(help: ArgumentHelp("Sleep MS milliseconds after each packet (to test crash safety).", valueName: "MS", visibility: .hidden))
    var paceMs: Int = 0

    mutating func validate() throws {
        if listFormats { return }
        if input == nil || output == nil { throw ValidationError("give an input and an output (or --list-formats)") }
        if [faststart, fragment != nil, hybrid != nil, hls != nil].filter({ $0 }).count > 1 {
            throw ValidationError("give at most one of --faststart, --fragment, --hybrid, --hls")
        }
        for s in [fragment, hybrid].compactMap({ $0 }) where !(s > 0 && s.isFinite) {
            throw ValidationError("the fragment duration must be a positive number of seconds")
        }
        if let hls, !(hls > 0 && hls.isFinite) {
            throw ValidationError("the HLS segment duration must be a positive number of seconds")
        }
        if let v = id3v2Version, v != 3 && v != 4 { throw ValidationError("--id3v2-version is 3 or 4, not \(v)") }
        if MuxerOptions.RF64(rawValue: rf64) == nil { throw ValidationError("--rf64 is never, auto or always, not \(rf64)") }
        if let segmentFormat {
            guard hls != nil || output.map({ ($0 as NSString).pathExtension.lowercased() == "m3u8" }) == true else {
                throw ValidationError("--segment-format is for HLS output (--hls SECONDS, or an output named .m3u8)")
            }
            guard HLSMuxer.SegmentFormat(rawValue: segmentFormat) != nil else {
                throw ValidationError("--segment-format is ts or fmp4, not \"\(segmentFormat)\"")
            }
        }
    }

    mutating func run() throws {
        if listFormats {
            print(Self.formatListing())
            return
        }
        do {
            try remux()
        } catch let e as MediaError {
            FileHandle.standardError.write(Data("mk-remux: \(e)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// The catalogue's writers, one block each: name, description, extensions, MIME types,
    /// codecs, refusals and options.
    static func formatListing() -> String {
        var lines = ["Formats MediaKit writes (the output's extension chooses one; --format NAME names one):"]
        for f in ContainerCatalog.shared.muxerFormats {
            lines.append("\(f.qualifiedName): \(f.description)" + (f.plugin.map { " [plugin \($0)]" } ?? ""))
            lines.append("  extensions: " + f.extensions.map { "." + $0 }.joined(separator: " "))
            lines.append("  mime types: " + f.mimeTypes.joined(separator: " "))
            lines.append("  codecs: " + f.codecs.map(\.rawValue).joined(separator: " "))
            for (codec, why) in f.refusals.sorted(by: { $0.key < $1.key }) { lines.append("  refuses \(codec): \(why)") }
            lines.append("  options: " + (f.options.isEmpty ? "none" : f.options.map(\.rawValue).joined(separator: " ")))
        }
        lines.append("")
        lines.append("Raw outputs of decoded frames (mk-decode writes them; --wav and --y4m choose):")
        for f in ContainerCatalog.shared.frameSinkFormats {
            lines.append("\(f.name): \(f.description) (\(f.mediaType.rawValue))")
            lines.append("  extensions: " + f.extensions.map { "." + $0 }.joined(separator: " "))
        }
        return lines.joined(separator: "\n")
    }

    /// The --frame-rate value, or nil when none was given.
    static func parsedFrameRate(_ text: String?) throws -> Rational? {
        guard let text else { return nil }
        guard let rate = RawVideoDemuxer.frameRate(parsing: text) else {
            throw ValidationError("--frame-rate wants a positive rate (25, 30000/1001, 29.97), not \"\(text)\"")
        }
        return rate
    }

    /// The output path: for --hls the playlist index.m3u8 in the directory `output` (made when
    /// missing), else `output` itself.
    static func outputPath(_ output: String, hls: Bool) throws -> String {
        guard hls else { return output }
        do {
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        } catch {
            throw MediaError(.io, "cannot make the HLS directory: \(error.localizedDescription)", path: output)
        }
        return (output as NSString).appendingPathComponent("index.m3u8")
    }

    func remux() throws {
        guard let input, var output else { return }
        output = try Self.outputPath(output, hls: hls != nil)
        let layout: MuxLayout = fragment.map { .fragmented(seconds: $0) } ?? hls.map { .fragmented(seconds: $0) }
            ?? hybrid.map { .hybrid(seconds: $0) } ?? (faststart ? .fastStart : .progressive)
        let size = (try? FileSource(path: input).size) ?? 0
        let showProgress = !quiet && size >= 64 << 20
        var lastShown = -1
        var lineDrawn = false   // a progress line is on the terminal, without its newline
        if tracks.isEmpty, !quiet, let target = format.flatMap({ ContainerCatalog.shared.muxerFormat(named: $0) }) ?? ContainerCatalog.shared.muxerFormat(forPath: output),
           let (_, demuxer) = try? ContainerCatalog.shared.open(ByteSources.open(path: input)) {
            for (t, why) in Remuxer.tracksToCopy(demuxer.tracks, into: target).leftOut {
                FileHandle.standardError.write(Data("mk-remux: track \(t) left out: \(why) (--track chooses the tracks)\n".utf8))
            }
        }
        let rate = try Self.parsedFrameRate(frameRate)
        var options = MuxerOptions(layout: layout)
        options.segmentFormat = segmentFormat
        options.id3v2Version = id3v2Version
        options.writeID3v2 = writeID3v2
        options.rf64 = MuxerOptions.RF64(rawValue: rf64) ?? .never
        let copy = try MetadataCopyOptions(copy: !noMetadata, settings: metadata)
        let cut = try Remuxer.remux(input: input, output: output, options: options, tracks: tracks.isEmpty ? nil : tracks, frameRate: rate,
                                    metadata: copy, format: format, progress: { done, total in
            if paceMs > 0 { usleep(useconds_t(paceMs) * 1000) }
            guard showProgress else { return }
            // An input that does not say how many samples it holds (MPEG-TS, Matroska, raw streams): the
            // count so far, every 1024 samples.
            guard total > 0 else {
                if done % 1024 == 0 {
                    FileHandle.standardError.write(Data("\rmk-remux: \(done) samples".utf8))
                    lineDrawn = true
                }
                return
            }
            let percent = min(100, done * 100 / total)
            if percent != lastShown {
                lastShown = percent
                FileHandle.standardError.write(Data("\rmk-remux: \(percent)% (\(done)/\(total) samples)".utf8))
                lineDrawn = true
            }
        }, warning: { w in
            // On a line of its own below the progress line, which the last line draws again.
            FileHandle.standardError.write(Data("\(lineDrawn ? "\n" : "")mk-remux: warning: \(w.description)\n".utf8))
            lineDrawn = false
        })
        if showProgress { FileHandle.standardError.write(Data("\rmk-remux: 100%, wrote \(output)\n".utf8)) }
        if let cut {   // a warning, as ffmpeg's: the output holds every packet before the cut
            FileHandle.standardError.write(Data("mk-remux: warning: \(cut.description); \(output) holds the packets before the cut\n".utf8))
        }
    }
}
