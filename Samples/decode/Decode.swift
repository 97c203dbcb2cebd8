// mk-decode: decodes the first audio track to PCM / WAV and the first video
// track to NV12 / I420 / Y4M, through the codec plugins.
import ArgumentParser
import Foundation
import MediaKit

@main
struct Decode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mk-decode",
        abstract: "Decode the first audio track to PCM and the first video track to raw YUV.",
        discussion: """
        With no output named, writes output.pcm and output.yuv (output.wav / output.y4m
        with --wav / --y4m) in the directory of the input. With one output named, only that
        track is decoded. The edit list is applied as FFmpeg applies it (AAC priming and
        B-frame delay disappear) and audio is gapless: it ends exactly where the file says
        (--trim ffmpeg keeps the whole last frame, as ffmpeg 5.1 does); --no-trim keeps
        every decoded frame and sample.
        At the end it prints the ffplay command that plays each output.

        A file cut short (it ends inside a packet, page or frame) is decoded as far as it
        goes, as ffmpeg decodes it: the outputs are written, a warning naming the offset of
        the cut goes to standard error, and the exit status is 0 (3 with --strict).
        Damage the demuxer skipped is reported the same way, and so is damage the decoder
        rejects: the packet is skipped, as ffmpeg skips it (a decoder that keeps failing is
        rebuilt, once per damage, and primed with the packets since the last key frame;
        damage between key frames costs its GOP, whatever the --threads; after 20 rejected
        packets in a row from a key frame on, decoding stops with an error), and a summary
        line counts what was lost.

        Exit status: 0 success (warnings, if any, on standard error); 1 an error (no output
        is left under the output names); 3 with --strict only: the outputs were written but
        the input was cut short or damaged (see the warnings).
        """)

    @Argument(help: "The media file to decode (MP4, MOV, M4A, Ogg, Opus, IVF, MKV, MKA, WebM, TS, raw H.264 / HEVC / AV1 OBU ...); - reads standard input (a pipe: Ogg, IVF, Matroska / WebM, or MP4 with its moov first).")
    var file: String

    @Option(help: "Where to write the decoded audio.")
    var audioOut: String?

    @Option(help: ArgumentHelp("Time a raw H.264 / HEVC / AV1 OBU stream at this frame rate (N, N/D or a decimal), as ffmpeg's -r before -i. Default: the rate its SPS states, else 25.", valueName: "RATE"))
    var frameRate: String?

    @Option(help: "Where to write the decoded video.")
    var videoOut: String?

    @Option(name: [.customLong("pixel-format"), .customLong("pix-fmt")],
            help: "Raw video layout: nv12 (default), i420, yuv420p10le, p010le (10-bit biplanar: Y, then interleaved UV, each sample in the high 10 bits of a little-endian uint16, as VideoToolbox's 420YpCbCr10BiPlanar and ffmpeg -pix_fmt p010le), or for models rgb24, bgr24, rgba, bgra, gray, gray16le, rgb48le (one packed plane). Pictures in other formats are converted as ffmpeg's -pix_fmt converts them (the FFmpeg plugin's libswscale: bicubic, the colour matrix and range the stream names), so the bytes equal ffmpeg -pix_fmt's.")
    var pixelFormat: PixelFormat = .nv12

    @Option(help: "Colour range of NV12 / I420 pictures: limited (default: full-range pictures are brought to limited range, as ffmpeg -pix_fmt) or full (full-range pictures stay full range, as VideoToolbox's 420YpCbCr8BiPlanarFullRange and ffmpeg -vf scale=out_range=full; limited-range pictures stay limited).")
    var range: String = "limited"

    @Option(help: "PCM sample format, interleaved: u8, s16 (default), s24, s32, f32 or f64 (little-endian; ffmpeg's flt and dbl are accepted), s16be, s24be, s32be, f32be or f64be (big-endian, as AIFF and ffmpeg -f s16be ... hold them), s8 (signed 8-bit), s24in32hi or s24in32lo (24 bits in a 32-bit little-endian word, aligned high: s32 with a zero low byte, or low: sign-extended). WAV (--wav) takes the little-endian ones.")
    var sampleFormat: String = "s16"

    @Option(help: "Resample the audio to this rate (band-limited, see --resample-quality).")
    var sampleRate: Int?

    @Option(help: "Mix the audio to these channels: a count (FFmpeg's default layout for it) or a layout name (mono, stereo, 2.1, quad, 5.0, 5.1, 7.1 ...), mixed as ffmpeg -ac mixes.")
    var channels: String?

    @Option(help: "Resampler preset with --sample-rate: low, medium (default) or high.")
    var resampleQuality: String = "medium"

    @Flag(help: "Write the audio as a WAV file instead of raw PCM.")
    var wav = false

    @Flag(help: "Write the video as YUV4MPEG2 (I420) instead of raw frames.")
    var y4m = false

    @Flag(help: "Output every decoded frame and sample: do not apply the edit list (same as --trim none).")
    var noTrim = false

    @Option(help: "How to cut to what the file presents: gapless (default: the edit list applied as ffmpeg applies it, audio ending exactly where the file says), ffmpeg (as ffmpeg 5.1: the last audio frame kept whole), none.")
    var trim: TrimMode = .gapless

    @Flag(inversion: .prefixedNo, help: "Turn pictures upright by the track's display rotation (90/180/270 degrees), as ffmpeg does.")
    var autorotate = true

    @Option(help: "Use this decoder backend or plugin (for example ffmpeg) instead of the highest-priority one.")
    var backend: String?

    @Option(help: "Decoder threads; 0 uses every core.")
    var threads = 0

    @Option(help: "Start at this time in seconds, sample-accurately, as ffmpeg -ss T -i: the first picture written is the one presented at T, the audio starts at its exact sample.")
    var seek: Double?

    @Option(help: "Write at most this many pictures (as ffmpeg -frames:v N).")
    var frames: Int?

    @Option(help: "Write only the pictures presented at these times in seconds (comma-separated; each as ffmpeg -ss T -i IN -frames:v 1 gives it), in the order given, to the video output; each group of pictures is decoded at most once.")
    var at: String?

    @Option(help: "Write only the pictures at these indices of the presented frames (comma-separated, 0 first; as ffmpeg's select=eq(n\\,N) counts), in the order given, to the video output.")
    var atFrame: String?

    @Option(help: "Write at most this many seconds of audio (exactly round(D * rate) samples).")
    var duration: Double?

    @Flag(name: .customLong("async"), help: "Decode the video on a thread of its own (MediaKit's AsyncDecodeSession) while the main thread writes; video output only. Same bytes.")
    var asyncVideo = false

    @Flag(name: .shortAndLong, help: "Print no progress or ffplay hints.")
    var quiet = false

    @Flag(help: "Exit with status 3 (instead of 0) when the input was cut short or damaged; the outputs are still written and the warnings printed.")
    var strict = false

    @Option(help: ArgumentHelp("Write the cues of a text subtitle track (SubRip, WebVTT, mov_text, ASS) to this file, as SubRip (.srt) or WebVTT (.vtt) by its extension, as ffmpeg -map 0:s:N -f srt / -f webvtt writes them. Alone, only the subtitles are written.", valueName: "PATH"))
    var subtitlesOut: String?

    @Option(help: ArgumentHelp("The subtitle track --subtitles-out decodes: N-th subtitle track, 0 first (ffmpeg's 0:s:N).", valueName: "N"))
    var subtitleTrack = 0

    /// The exit status of --strict for an input that was cut short or damaged.
    static let strictWarningStatus: Int32 = 3

    mutating func run() throws {
        let warned: Bool
        do {
            warned = try decode()
        } catch let e as MediaError {
            FileHandle.standardError.write(Data("mk-decode: \(e)\n".utf8))
            throw ExitCode(1)
        }
        if strict && warned { throw ExitCode(Self.strictWarningStatus) }
    }

    /// The --frame-rate value, or nil when none was given.
    static func parsedFrameRate(_ text: String?) throws -> Rational? {
        guard let text else { return nil }
        guard let rate = RawVideoDemuxer.frameRate(parsing: text) else {
            throw ValidationError("--frame-rate wants a positive rate (25, 30000/1001, 29.97), not \"\(text)\"")
        }
        return rate
    }

    /// Decodes as the options say; true when warnings were printed.
    mutating func decode() throws -> Bool {
        var options = FileDecodeOptions(audioPath: audioOut, videoPath: videoOut)
        // The input is opened once (`-` is standard input), its tracks read once.
        let rate = try Self.parsedFrameRate(frameRate)
        let demuxer = try MediaRegistry.shared.makeDemuxer(path: file)
        if let rate { try RawVideoDemuxer.setFrameRate(rate, on: demuxer, path: file) }
        if let subtitlesOut {
            guard let format = SubtitleExport.format(forPath: subtitlesOut) else {
                throw MediaError(.invalidArgument, "--subtitles-out writes .srt or .vtt files, not \"\((subtitlesOut as NSString).lastPathComponent)\"")
            }
            let track = try SubtitleExport.subtitleTrack(subtitleTrack, of: demuxer, path: file)
            let n = try SubtitleExport.write(from: demuxer, track: track, to: subtitlesOut, format: format)
            if !quiet { FileHandle.standardError.write(Data("mk-decode: \(n) cues written to \(subtitlesOut)\n".utf8)) }
            if audioOut == nil && videoOut == nil && at == nil && atFrame == nil { return false }
        }
        if at != nil || atFrame != nil { return try writePictures(demuxer) }
        if audioOut == nil && videoOut == nil {
            // Default outputs, beside the input: only for the tracks the file has.
            let dir = (file as NSString).deletingLastPathComponent
            func beside(_ name: String) -> String { dir.isEmpty ? name : (dir as NSString).appendingPathComponent(name) }
            if demuxer.tracks.contains(where: { $0.mediaType == .audio }) { options.audioPath = beside(wav ? "output.wav" : "output.pcm") }
            if demuxer.tracks.contains(where: { $0.mediaType == .video }) { options.videoPath = beside(y4m ? "output.y4m" : "output.yuv") }
            if options.audioPath == nil && options.videoPath == nil {
                throw MediaError(.notFound, "the file has neither audio nor video to decode", path: file)
            }
        }
        options.pixelFormat = pixelFormat
        options.keepsFullRange = try keepsFullRange()
        // Files are written interleaved: a planar name ("fltp") gives its interleaved type.
        guard let type = SampleFormat(name: sampleFormat)?.interleaved else {
            throw MediaError(.invalidArgument, "unknown sample format \"\(sampleFormat)\": give u8, s16, s24, s32, f32, f64, s16be, s24be, s32be, f32be, f64be, s8, s24in32hi or s24in32lo")
        }
        options.sampleType = type
        options.sampleFormat = type == .f32 ? .f32 : .s16
        if let r = sampleRate {
            guard r > 0 && r <= AudioFormat.maxSampleRate else {
                throw MediaError(.invalidArgument, "--sample-rate \(r) is out of range (1 to \(AudioFormat.maxSampleRate))")
            }
            options.sampleRate = r
        }
        options.channelLayout = try channels.map { try ChannelLayout(name: $0) }
        guard let q = ResampleQuality(rawValue: resampleQuality) else {
            throw MediaError(.invalidArgument, "unknown --resample-quality \"\(resampleQuality)\": give low, medium or high")
        }
        options.resampleQuality = q
        options.wav = wav
        options.y4m = y4m
        options.trim = noTrim ? .none : trim
        options.autorotate = autorotate
        options.backend = backend
        options.threads = threads
        options.seek = seek
        options.maxVideoFrames = frames
        if asyncVideo && options.audioPath != nil {
            throw MediaError(.invalidArgument, "--async decodes the video alone: name only --video-out")
        }
        options.asyncVideo = asyncVideo
        options.maxAudioDuration = duration

        let progress = Progress(enabled: !quiet)
        defer { progress.done() }
        let result = try FileDecoder.decode(demuxer: demuxer, path: file, options: options) { progress.update($0, of: $1) }
        progress.done()
        for w in result.warnings { FileHandle.standardError.write(Data("mk-decode: warning: \(w)\n".utf8)) }
        if let damage = result.damageSummary { FileHandle.standardError.write(Data("mk-decode: \(damage)\n".utf8)) }
        guard !quiet else { return !result.warnings.isEmpty }
        let commands = result.ffplayCommands
        var next = 0
        if let v = result.video {
            print("video: \(v.frames) frames \(v.width)x\(v.height) \(y4m ? "y4m" : Self.layoutName(pixelFormat)) -> \(v.path)")
            print("  play: \(commands[next])"); next += 1
        }
        if let a = result.audio {
            print("audio: \(a.samples) samples, \(a.sampleRate) Hz, \(a.channels) ch, \(type.typeName)\(wav ? " wav" : "") -> \(a.path)")
            print("  play: \(commands[next])")
        }
        return !result.warnings.isEmpty
    }
}

extension Decode {
    /// --at / --at-frame: the pictures presented at those times or indices, through
    /// DecodeSession's batch access, written in the order asked.
    func writePictures(_ demuxer: Demuxer) throws -> Bool {
        guard at == nil || atFrame == nil else { throw MediaError(.invalidArgument, "give --at or --at-frame, not both") }
        guard audioOut == nil, seek == nil, frames == nil, duration == nil else {
            throw MediaError(.invalidArgument, "--at and --at-frame write pictures only: --audio-out, --seek, --frames and --duration do not go with them")
        }
        guard let track = demuxer.tracks.first(where: { $0.mediaType == .video }) else {
            throw MediaError(.notFound, "the file has no video track", path: file)
        }
        let list = (at ?? atFrame)!.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let out = videoOut ?? {
            let dir = (file as NSString).deletingLastPathComponent
            return dir.isEmpty ? (y4m ? "output.y4m" : "output.yuv") : (dir as NSString).appendingPathComponent(y4m ? "output.y4m" : "output.yuv")
        }()
        let session = try DecodeSession(track: track, backend: backend, threads: threads, trim: noTrim ? .none : trim)
        let pictures: [Frame?]
        if at != nil {
            let times = try list.map { s -> Double in
                guard let t = Double(s) else { throw MediaError(.invalidArgument, "--at: \"\(s)\" is not a time in seconds") }
                return t
            }
            pictures = try session.frames(at: times, from: demuxer)
        } else {
            let indices = try list.map { s -> Int in
                guard let n = Int(s) else { throw MediaError(.invalidArgument, "--at-frame: \"\(s)\" is not a frame index") }
                return n
            }
            pictures = try session.frames(atIndices: indices, from: demuxer)
        }
        let rate = track.frameRate.numerator > 0 && track.frameRate.denominator > 0 ? track.frameRate : Rational(25, 1)
        guard let sink = ContainerCatalog.shared.frameSinkFormat(named: y4m ? "y4m" : "rawvideo") else {
            throw MediaError(.unsupported, "no picture writer in the catalogue", path: out)
        }
        var settings = PictureSinkSettings(pixelFormat: pixelFormat, frameRate: rate, orientation: autorotate ? track.orientation : .upright)
        settings.keepsFullRange = try keepsFullRange()
        let writer = try sink.makePicture(path: out, settings: settings)
        var missing: [String] = []
        do {
            for (i, picture) in pictures.enumerated() {
                if let picture { try writer.write(picture) } else { missing.append(list[i]) }
            }
            try writer.finish()
        } catch {
            writer.cancel()
            throw error
        }
        for w in session.warnings { FileHandle.standardError.write(Data("mk-decode: warning: \(w)\n".utf8)) }
        if !missing.isEmpty {
            FileHandle.standardError.write(Data("mk-decode: warning: no picture at \(missing.joined(separator: ", ")) (after the end of the track)\n".utf8))
        }
        if !quiet {
            let size = writer.size.map { "\($0.width)x\($0.height)" } ?? "-"
            print("video: \(writer.frames) pictures \(size) \(y4m ? "y4m" : Self.layoutName(pixelFormat)) -> \(out)")
        }
        return !missing.isEmpty || !session.warnings.isEmpty
    }
}

/// A progress line on standard error, at most twice a second, for inputs longer
/// than 10 seconds or when standard error is a terminal.
final class Progress {
    let enabled: Bool
    var last = Date.distantPast
    var shown = false
    var total = 0.0
    init(enabled: Bool) { self.enabled = enabled }
    func update(_ seconds: Double, of total: Double) {
        self.total = total
        guard enabled, total > 10 || isatty(2) != 0, Date().timeIntervalSince(last) >= 0.5 else { return }
        last = Date()
        let pct = total > 0 ? min(100, Int(seconds / total * 100)) : 0
        FileHandle.standardError.write(Data(String(format: "\rmk-decode: %.1f s of %.1f s (%d%%)", seconds, total, pct).utf8))
        shown = true
    }
    func done() {
        if shown { FileHandle.standardError.write(Data(String(format: "\rmk-decode: %.1f s of %.1f s (100%%)\n", total, total).utf8)) }
        shown = false
    }
}

/// `--range`.
extension Decode {
    /// Whether `--range` asks full-range pictures to stay full range.
    /// - Throws: `.invalidArgument` for a value other than limited or full.
    func keepsFullRange() throws -> Bool {
        switch range {
        case "limited": return false
        case "full": return true
        default: throw MediaError(.invalidArgument, "unknown --range \"\(range)\": give limited or full")
        }
    }
}

/// `--pixel-format` takes the raw layouts ``PicturePipeline/layouts`` by the names raw-video tools
/// use: nv12, i420 (yuv420p also), yuv420p10le, p010le, and ffmpeg's rgb24, bgr24, rgba, bgra, gray,
/// gray16le, rgb48le.
extension Decode {
    /// A raw layout's name as `--pixel-format` spells it (and mk-decode prints it): yuv420p is "i420".
    static func layoutName(_ f: PixelFormat) -> String { f == .yuv420p ? "i420" : f.name }
}

extension PixelFormat: ExpressibleByArgument {
    public init?(argument: String) {
        guard let f = PixelFormat(name: argument), PicturePipeline.layouts.contains(f) else { return nil }
        self = f
    }

    public static var allValueStrings: [String] { PicturePipeline.layouts.map(Decode.layoutName) }
}
extension TrimMode: ExpressibleByArgument {}
