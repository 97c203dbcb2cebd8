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
        B-frame delay disappear); --no-trim keeps every decoded frame and sample.
        At the end it prints the ffplay command that plays each output.
        """)

    @Argument(help: "The media file to decode (MP4, MOV, M4A, Ogg, Opus, IVF).")
    var file: String

    @Option(help: "Where to write the decoded audio.")
    var audioOut: String?

    @Option(help: "Where to write the decoded video.")
    var videoOut: String?

    @Option(help: "Raw video layout: nv12 (default) or i420.")
    var pixelFormat: RawPictureFormat = .nv12

    @Option(help: "PCM sample format: s16 (default, little-endian) or f32.")
    var sampleFormat: PCMFormat = .s16

    @Flag(help: "Write the audio as a WAV file instead of raw PCM.")
    var wav = false

    @Flag(help: "Write the video as YUV4MPEG2 (I420) instead of raw frames.")
    var y4m = false

    @Flag(help: "Output every decoded frame and sample: do not apply the edit list.")
    var noTrim = false

    @Flag(inversion: .prefixedNo, help: "Turn pictures upright by the track's display rotation (90/180/270 degrees), as ffmpeg does.")
    var autorotate = true

    @Option(help: "Use this decoder backend or plugin (for example ffmpeg) instead of the highest-priority one.")
    var backend: String?

    @Option(help: "Decoder threads; 0 uses every core.")
    var threads = 0

    @Flag(name: .shortAndLong, help: "Print no progress or ffplay hints.")
    var quiet = false

    mutating func run() throws {
        do {
            try decode()
        } catch let e as MediaError {
            FileHandle.standardError.write(Data("mk-decode: \(e)\n".utf8))
            throw ExitCode(1)
        }
    }

    mutating func decode() throws {
        let demuxer = try MediaRegistry.shared.makeDemuxer(path: file)
        let dir = (file as NSString).deletingLastPathComponent
        func beside(_ name: String) -> String { dir.isEmpty ? name : (dir as NSString).appendingPathComponent(name) }
        let explicit = audioOut != nil || videoOut != nil
        let audioTrack = demuxer.tracks.first { $0.mediaType == .audio }
        let videoTrack = demuxer.tracks.first { $0.mediaType == .video }
        var audioPath = audioOut, videoPath = videoOut
        if !explicit {
            audioPath = audioTrack == nil ? nil : beside(wav ? "output.wav" : "output.pcm")
            videoPath = videoTrack == nil ? nil : beside(y4m ? "output.y4m" : "output.yuv")
        }
        if audioPath != nil && audioTrack == nil {
            throw MediaError(.notFound, "the file has no audio track (tracks: \(describe(demuxer.tracks)))", path: file)
        }
        if videoPath != nil && videoTrack == nil {
            throw MediaError(.notFound, "the file has no video track (tracks: \(describe(demuxer.tracks)))", path: file)
        }
        if audioPath == nil && videoPath == nil {
            throw MediaError(.notFound, "the file has neither audio nor video to decode", path: file)
        }

        var audio: (track: Track, session: DecodeSession, writer: PCMWriter?)?
        var video: (track: Track, session: DecodeSession, writer: PictureWriter)?
        if let path = videoPath, let t = videoTrack {
            let session = try DecodeSession(track: t, backend: backend, threads: threads, trim: !noTrim)
            let turn = autorotate ? PicturePacker.clockwiseTurn(forRotation: t.rotation) : 0
            video = (t, session, try PictureWriter(path: path, format: pixelFormat, y4m: y4m, frameRate: Self.frameRate(t), clockwise: turn))
        }
        if audioPath != nil, let t = audioTrack {
            audio = (t, try DecodeSession(track: t, backend: backend, threads: threads, trim: !noTrim), nil)
        }
        demuxer.select(tracks: Set([audio?.track.index, video?.track.index].compactMap { $0 }))

        let total = max(audio?.track.durationSeconds ?? 0, video?.track.durationSeconds ?? 0)
        let progress = Progress(total: total, enabled: !quiet && (total > 10 || isatty(2) != 0))
        var failure: Error?
        do {
            func writeAudio(_ frame: Frame) throws {
                if audio!.writer == nil {
                    audio!.writer = try PCMWriter(path: audioPath!, format: sampleFormat, sampleRate: frame.sampleRate,
                                                  channels: frame.channels, channelMask: frame.channelMask, wav: wav)
                }
                try audio!.writer!.write(frame)
            }
            while let packet = try demuxer.read() {
                if packet.trackIndex == video?.track.index {
                    try video!.session.decode(packet) { try video!.writer.write($0) }
                } else if packet.trackIndex == audio?.track.index {
                    try audio!.session.decode(packet, writeAudio)
                }
                progress.update(Double(packet.dts) * packet.timeBase.doubleValue)
            }
            if video != nil { try video!.session.finish { try video!.writer.write($0) } }
            if audio != nil { try audio!.session.finish(writeAudio) }
            if audio != nil && audio!.writer == nil {
                // No samples at all: still leave an (empty) output, as ffmpeg does.
                let p = audio!.track.parameters
                audio!.writer = try PCMWriter(path: audioPath!, format: sampleFormat, sampleRate: p.sampleRate, channels: max(1, p.channels), wav: wav)
            }
            try video?.writer.finish()
            try audio?.writer?.finish()
        } catch {
            failure = error
            video?.writer.cancel()
            audio?.writer?.cancel()
        }
        progress.done()
        if let failure { throw failure }

        guard !quiet else { return }
        if let v = video {
            let w = v.writer
            let size = w.size.map { "\($0.width)x\($0.height)" } ?? "\(v.track.parameters.width)x\(v.track.parameters.height)"
            print("video: \(w.frames) frames \(size) \(y4m ? "y4m" : pixelFormat.rawValue) -> \(videoPath!)")
            if y4m {
                print("  play: ffplay \(shellQuote(videoPath!))")
            } else {
                let fps = Self.frameRate(v.track)
                print("  play: ffplay -f rawvideo -pixel_format \(pixelFormat == .nv12 ? "nv12" : "yuv420p") -video_size \(size) -framerate \(fps.numerator)/\(fps.denominator) \(shellQuote(videoPath!))")
            }
        }
        if let a = audio, let w = a.writer {
            print("audio: \(w.sampleFrames) samples, \(w.sampleRate) Hz, \(w.channels) ch, \(sampleFormat.rawValue)\(wav ? " wav" : "") -> \(audioPath!)")
            if wav {
                print("  play: ffplay \(shellQuote(audioPath!))")
            } else {
                print("  play: ffplay -f \(sampleFormat == .s16 ? "s16le" : "f32le") -ar \(w.sampleRate) -ac \(w.channels) \(shellQuote(audioPath!))")
            }
        }
    }

    func describe(_ tracks: [Track]) -> String {
        tracks.isEmpty ? "none" : tracks.map { "#\($0.index) \($0.mediaType.rawValue) \($0.parameters.codec.isEmpty ? $0.parameters.codecTag : $0.parameters.codec)" }.joined(separator: ", ")
    }

    /// The track's frame rate for Y4M headers and ffplay; 25/1 when the track does not say.
    static func frameRate(_ t: Track) -> Rational {
        t.frameRate.numerator > 0 && t.frameRate.denominator > 0 ? t.frameRate : Rational(25, 1)
    }
}

func shellQuote(_ s: String) -> String {
    s.allSatisfy({ $0.isLetter || $0.isNumber || "/._-+=:,".contains($0) }) ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// A progress line on standard error, at most twice a second.
final class Progress {
    let total: Double
    let enabled: Bool
    var last = Date.distantPast
    var shown = false
    init(total: Double, enabled: Bool) { self.total = total; self.enabled = enabled }
    func update(_ seconds: Double) {
        guard enabled, Date().timeIntervalSince(last) >= 0.5 else { return }
        last = Date()
        let pct = total > 0 ? min(100, Int(seconds / total * 100)) : 0
        FileHandle.standardError.write(Data(String(format: "\rmk-decode: %.1f s of %.1f s (%d%%)", seconds, total, pct).utf8))
        shown = true
    }
    func done() {
        if shown { FileHandle.standardError.write(Data(String(format: "\rmk-decode: %.1f s of %.1f s (100%%)\n", total, total).utf8)) }
    }
}

extension RawPictureFormat: ExpressibleByArgument {}
extension PCMFormat: ExpressibleByArgument {}
