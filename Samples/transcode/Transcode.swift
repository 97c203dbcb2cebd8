// mk-transcode: the first audio track (and, with --video-codec, the first video track) of a
// media file into a new compressed file; tracks copied or left out as asked.
import ArgumentParser
import Foundation
import MediaKit

/// Set by SIGINT / SIGTERM: the transcode stops, and its temporary output is removed.
nonisolated(unsafe) private var interrupted: sig_atomic_t = 0

@main
struct Transcode: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mk-transcode",
        abstract: "Re-encode the first audio track (AAC, Opus, Vorbis, MP3, FLAC, PCM) and, when asked, the first video track (H.264, HEVC, AV1, VP9 ...) of a media file into a new file.",
        discussion: """
        The codec comes from the output's extension unless --codec says: .m4a/.mp4 AAC,
        .flac FLAC, .mp3 MP3, .ogg/.oga Vorbis, .opus Opus, .mka/.mkv/.webm Opus, .wav
        pcm_s16le, .aiff/.aif/.aifc and .caf pcm_s16be (any PCM codec with --codec). MP4 takes
        AAC, MP3, Opus, FLAC and ALAC (.m4a all but MP3); Ogg Opus, Vorbis and FLAC (.opus only Opus);
        Matroska all six; WebM Opus and Vorbis; CAF AAC, ALAC, FLAC, Opus and PCM. The output is
        gapless: the encoder's priming and end padding are cut by an MP4 edit list (and iTunSMPB
        for AAC), a CAF packet table's priming and remainder frames, the LAME tag of an
        .mp3, Opus's pre-skip and the last Ogg page's granule position, Matroska's CodecDelay
        and DiscardPadding for Opus. It is written to a hidden temporary file and renamed at the
        end: an interrupted or failed transcode leaves nothing under OUT.

        --video-codec re-encodes the first video track (decode -> encode) with a video encoder
        of the plugins (the FFmpeg plugin lists every one libavcodec has): a codec (h264, hevc,
        av1, vp9: the encoder `ffmpeg -c:v CODEC` picks) or an encoder's name (libx264,
        libsvtav1 ...), set up as the ffmpeg tool sets it up: the same --preset / --crf /
        --threads 1 give libx264's bitstream of `ffmpeg -c:v libx264 -preset P -crf C -threads 1`.
        With B-frames an MP4 edit list makes the first picture start at 0. --fps R puts the
        pictures on a constant rate first (as `-vf fps=R`: times rounded to the nearest tick,
        pictures repeated or dropped), then --scale W:H sizes them (as `-vf scale=W:H`: -1
        keeps the aspect ratio, -2 too with an even size, 0 the input's side; libswscale with
        --scale-filter, bicubic by default as ffmpeg's): the same pictures as
        `ffmpeg -vf fps=R,scale=W:H`.

        Tracks: the first audio track is re-encoded (--audio-codec / --codec), copied
        (--audio-codec copy) or left out (--no-audio); the first video track is re-encoded
        (--video-codec C), every video track copied (--video-codec copy, --copy-video), or,
        by default and with --no-video, left out. Other tracks (subtitles, data, further audio
        tracks) are left out. Options that contradict each other are refused.

        Examples:
          mk-transcode song.mp3 song.m4a --bitrate 192k
          mk-transcode song.wav song.mp4 --codec mp3 --bitrate 192k
          mk-transcode take.wav take.flac
          mk-transcode take.wav take.caf --codec aac
          mk-transcode take.wav take.opus --bitrate 96k
          mk-transcode take.wav take.ogg --quality 5
          mk-transcode talk.wav talk.mka --codec opus --bitrate 32k --sample-rate 16000 --channels 1
          mk-transcode movie.mov movie.mp4 --copy-video
          mk-transcode movie.mkv movie.mp4 --video-codec h264 --crf 23 --preset medium
          mk-transcode movie.mp4 small.mp4 --video-codec libsvtav1 --crf 35 --preset 8
          mk-transcode movie.mkv movie.mp4 --video-codec h264 --crf 23 --scale 1280:-2 --fps 30 --audio-codec copy
          mk-transcode movie.mkv silent.mp4 --video-codec hevc --no-audio
        """)

    @Argument(help: "The input file (MP4, MOV, M4A, Ogg, Matroska / WebM, MP3, ADTS, WAV, FLAC).")
    var input: String

    @Argument(help: "The output file (.m4a, .mp4, .flac, .mp3, .mka, .mkv, .webm).")
    var output: String

    @Option(help: "aac, opus, vorbis, mp3, flac or alac (default: from OUT's extension).")
    var codec: String?

    @Option(name: .customLong("audio-codec"), help: ArgumentHelp("The audio codec as --codec, or copy to copy the first audio track's packets.", valueName: "C"))
    var audioCodec: String?

    @Flag(name: .customLong("no-audio"), help: "Leave the audio out.")
    var noAudio = false

    @Flag(name: .customLong("no-video"), help: "Leave the video out (the default without --video-codec or --copy-video).")
    var noVideo = false

    @Option(help: ArgumentHelp("Target bit rate: bits per second, or with k (128k).", valueName: "B"))
    var bitrate: String?

    @Option(help: ArgumentHelp("Variable bit rate quality on the codec's scale (Vorbis -1..10, MP3 9..0, AAC 0.1..2).", valueName: "Q"))
    var quality: Double?

    @Option(help: ArgumentHelp("Encoder effort: Opus 0..10 (default 10), FLAC compression level 0..12 (default 5).", valueName: "C"))
    var complexity: Int?

    @Option(help: ArgumentHelp("Opus application: audio (default), voip or lowdelay.", valueName: "A"))
    var application: String?

    @Option(name: .customLong("frame-duration"), help: ArgumentHelp("Opus frame duration in milliseconds: 2.5, 5, 10, 20 (default), 40, 60.", valueName: "MS"))
    var frameDuration: Double?

    @Option(name: .customLong("sample-rate"), help: ArgumentHelp("Output rate in Hz (default: the input's when the encoder takes it).", valueName: "R"))
    var sampleRate: Int?

    @Option(help: ArgumentHelp("Output channels (default: the input's).", valueName: "N"))
    var channels: Int?

    @Flag(name: .customLong("copy-video"), help: "Copy the input's video tracks unchanged (into any output whose format carries their codec).")
    var copyVideo = false

    @Option(name: .customLong("video-codec"), help: ArgumentHelp("Re-encode the video: h264, hevc, av1, vp9, an encoder name (libx264 ...), or copy.", valueName: "C"))
    var videoCodec: String?

    @Option(help: ArgumentHelp("Video constant rate factor (ffmpeg -crf).", valueName: "N"))
    var crf: Double?

    @Option(help: ArgumentHelp("Video constant quantiser (ffmpeg -qp).", valueName: "N"))
    var qp: Double?

    @Option(name: .customLong("video-bitrate"), help: ArgumentHelp("Video bit rate: bits per second, or with k / M (ffmpeg -b:v).", valueName: "B"))
    var videoBitrate: String?

    @Option(help: ArgumentHelp("Video encoder preset (ffmpeg -preset: medium, veryslow; SVT-AV1 0..13).", valueName: "P"))
    var preset: String?

    @Option(help: ArgumentHelp("Video profile (ffmpeg -profile:v: high, main10 ...).", valueName: "P"))
    var profile: String?

    @Option(help: ArgumentHelp("Frames between video key frames at most (ffmpeg -g).", valueName: "N"))
    var gop: Int?

    @Option(help: ArgumentHelp("B-frames in a row at most (ffmpeg -bf).", valueName: "N"))
    var bframes: Int?

    @Option(help: ArgumentHelp("Video encoder and decoder threads (0: all cores; 1 makes libx264 deterministic).", valueName: "N"))
    var threads: Int?

    @Option(name: .customLong("metadata"), help: ArgumentHelp("Set a container tag (repeatable; an empty VALUE removes it), as ffmpeg -metadata.", valueName: "KEY=VALUE"))
    var metadata: [String] = []

    @Flag(name: .customLong("no-metadata"), help: "Copy no tags, chapters or attachments (by default they are copied into what OUT holds).")
    var noMetadata = false

    @Option(name: .customLong("id3v2-version"), help: ArgumentHelp("The ID3v2 version of the tags written into an MP3 (and with --write-id3v2 a WAV or AIFF): 3 or 4 (default 4), as ffmpeg -id3v2_version.", valueName: "3|4"))
    var id3v2Version: Int?

    @Flag(name: .customLong("write-id3v2"), help: "WAV and AIFF: also write the tags, cover art and chapters as an ID3v2 chunk after the samples (AIFF: as ffmpeg -write_id3v2 1).")
    var writeID3v2 = false

    @Option(name: .customLong("rf64"), help: ArgumentHelp("WAV: never (default), auto (a JUNK chunk reserved, RF64 past 4 GiB) or always RF64, as ffmpeg -rf64.", valueName: "never|auto|always"))
    var rf64: String = "never"

    @Option(parsing: .unconditional, help: ArgumentHelp("Scale the re-encoded video to W:H (ffmpeg's scale filter: -1 / -2 keep the aspect ratio, -2 with an even size; 0 the input's).", valueName: "W:H"))
    var scale: String?

    @Option(name: .customLong("scale-filter"), help: ArgumentHelp("How --scale resamples: \(ScaleFilter.allCases.map(\.name).joined(separator: ", ")) (default bicubic).", valueName: "F"))
    var scaleFilter: String?

    @Option(help: ArgumentHelp("Put the re-encoded video on a constant frame rate first (ffmpeg's fps filter): 30, 30000/1001, 29.97, ntsc ...", valueName: "R"))
    var fps: String?

    @Flag(help: "Print no progress line.")
    var quiet = false

    func run() throws {
        if codec != nil && audioCodec != nil { throw ValidationError("--codec and --audio-codec name the same thing: give one") }
        let copyAudio = audioCodec?.lowercased() == "copy"
        let audioName = copyAudio ? nil : (audioCodec ?? codec)
        let audioOptions = [audioName != nil ? (audioCodec != nil ? "--audio-codec" : "--codec") : nil, bitrate != nil ? "--bitrate" : nil, quality != nil ? "--quality" : nil,
                            complexity != nil ? "--complexity" : nil, application != nil ? "--application" : nil,
                            frameDuration != nil ? "--frame-duration" : nil, sampleRate != nil ? "--sample-rate" : nil,
                            channels != nil ? "--channels" : nil].compactMap { $0 }
        if noAudio && copyAudio { throw ValidationError("--no-audio and --audio-codec copy contradict each other") }
        if (noAudio || copyAudio) && !audioOptions.isEmpty {
            throw ValidationError("\(audioOptions.joined(separator: ", ")) set\(audioOptions.count == 1 ? "s" : "") the audio encoder, but \(noAudio ? "--no-audio leaves the audio out" : "--audio-codec copy copies it")")
        }
        let copiesVideo = copyVideo || videoCodec?.lowercased() == "copy"
        if noVideo && (videoCodec != nil || copyVideo) { throw ValidationError("--no-video contradicts \(videoCodec != nil ? "--video-codec" : "--copy-video")") }
        if copyVideo, let v = videoCodec, v.lowercased() != "copy" { throw ValidationError("--copy-video contradicts --video-codec \(v): give one") }
        if noAudio && !copiesVideo && videoCodec == nil { throw ValidationError("--no-audio without --video-codec or --copy-video leaves nothing to write") }
        let videoShaping = [scale != nil ? "--scale" : nil, scaleFilter != nil ? "--scale-filter" : nil, fps != nil ? "--fps" : nil].compactMap { $0 }
        if !videoShaping.isEmpty && (videoCodec == nil || copiesVideo) {
            throw ValidationError("\(videoShaping.joined(separator: ", ")) change\(videoShaping.count == 1 ? "s" : "") the pictures: \(copiesVideo ? "a copied video cannot be changed" : "give --video-codec to re-encode the video")")
        }
        if scaleFilter != nil && scale == nil { throw ValidationError("--scale-filter goes with --scale") }
        var options = TranscodeOptions(codec: audioName.map { CodecID($0.lowercased()) }, sampleRate: sampleRate, channels: channels)
        options.copyAudio = copyAudio
        options.dropAudio = noAudio
        options.metadata = try MetadataCopyOptions(copy: !noMetadata, settings: metadata)
        if let v = id3v2Version, v != 3 && v != 4 { throw ValidationError("--id3v2-version is 3 or 4, not \(v)") }
        options.muxer.id3v2Version = id3v2Version
        options.muxer.writeID3v2 = writeID3v2
        guard let rf64Mode = MuxerOptions.RF64(rawValue: rf64) else { throw ValidationError("--rf64 is never, auto or always, not \(rf64)") }
        options.muxer.rf64 = rf64Mode
        options.quality = quality
        options.complexity = complexity
        options.frameDuration = frameDuration.map { $0 / 1000 }
        if let a = application {
            let byName: [String: EncoderSettings.Application] = ["audio": .audio, "voip": .voip, "lowdelay": .lowDelay]
            guard let value = byName[a.lowercased()] else { throw ValidationError("--application \(a): give audio, voip or lowdelay") }
            options.application = value
        }
        options.copyVideo = copyVideo
        if let b = bitrate { options.bitRate = try Self.bits(b, option: "--bitrate") }
        if let v = videoCodec {
            if v.lowercased() == "copy" {
                options.copyVideo = true
            } else {
                options.video = VideoEncoderSettings(codec: v, crf: crf, qp: qp, bitRate: try videoBitrate.map { try Self.bits($0, option: "--video-bitrate") },
                                                     preset: preset, profile: profile, gopSize: gop, maxBFrames: bframes, threads: threads)
                if let s = scale {
                    guard let size = VideoScale(parsing: s) else { throw ValidationError("--scale \(s): give W:H, each a whole number (-1 or -2 to keep the aspect ratio, 0 for the input's)") }
                    options.videoScale = size
                }
                if let f = scaleFilter {
                    guard let filter = ScaleFilter(name: f.lowercased()) else {
                        throw ValidationError("--scale-filter \(f): give \(ScaleFilter.allCases.map(\.name).joined(separator: ", "))")
                    }
                    options.scaleFilter = filter
                }
                if let r = fps {
                    guard let rate = FrameRateConverter.rate(parsing: r) else { throw ValidationError("--fps \(r): give a positive rate: 30, 30000/1001, 29.97 or ntsc, pal, film, ntsc_film") }
                    options.videoFrameRate = rate
                }
            }
        }
        if options.video == nil && (crf != nil || qp != nil || videoBitrate != nil || preset != nil || profile != nil || gop != nil || bframes != nil) {
            throw ValidationError("--crf, --qp, --video-bitrate, --preset, --profile, --gop and --bframes go with --video-codec (to re-encode the video)\(copiesVideo ? ": a copied video is not encoded" : "")")
        }
        signal(SIGINT) { _ in interrupted = 1 }
        signal(SIGTERM) { _ in interrupted = 1 }
        let showProgress = !quiet && isatty(STDERR_FILENO) == 1
        do {
            let r = try Transcoder.transcode(input: input, output: output, options: options) { done in
                if showProgress {
                    FileHandle.standardError.write(Data(String(format: "\r%5.1f%%", done * 100).utf8))
                }
                return interrupted == 0
            }
            if showProgress { FileHandle.standardError.write(Data("\r".utf8)) }
            if let cut = r.truncation {   // a warning, as ffmpeg's: the output is written
                FileHandle.standardError.write(Data("mk-transcode: warning: \(cut.description); \(output) holds what the packets before the cut decode to\n".utf8))
            }
            if !quiet {
                if r.copiedAudio {
                    print("\(output): audio \(r.codec) copied, \(r.packets) packets")
                } else if r.sampleRate > 0 {
                    print("\(output): \(r.codec), \(r.sampleRate) Hz, \(r.channels) channels, \(r.samples) samples, encoder delay \(r.encoderDelay), \(r.packets) packets")
                }
                if let v = r.videoEncoder {
                    print("\(output): video \(v), \(r.videoFrames) pictures, \(r.videoPackets) packets")
                }
            }
        } catch let e as MediaError {
            if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
            FileHandle.standardError.write(Data("mk-transcode: \(e)\n".utf8))
            throw ExitCode(interrupted != 0 ? 130 : 1)
        }
    }

    /// Bits per second from "128000", "128k" or "2M".
    private static func bits(_ text: String, option: String) throws -> Int {
        let lower = text.lowercased()
        let scale: Double = lower.hasSuffix("k") ? 1000 : lower.hasSuffix("m") ? 1_000_000 : 1
        let value = Double(scale == 1 ? lower : String(lower.dropLast())).map { $0 * scale }
        guard let v = value, v > 0, v < Double(Int.max) else { throw ValidationError("\(option) \(text): give bits per second, e.g. 128000, 128k or 2M") }
        return Int(v)
    }
}
