// mk-audioconv: converts raw interleaved PCM (a file or standard input) with MediaKit's
// AudioConverter: sample type, channels and sample rate. The options follow ffmpeg's raw
// PCM options, so the same file can go through both.
import ArgumentParser
import Foundation
import MediaKit

@main
struct AudioConv: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mk-audioconv",
        abstract: "Convert raw interleaved PCM: sample format, channel layout, sample rate.",
        discussion: """
        Reads raw PCM (- for standard input) and writes raw PCM or WAV (- for standard output), \
        as ffmpeg -f FMT -ar R -ac N -i IN -f FMT -ar R2 -ac N2 OUT would. Formats: u8, s16, \
        s24, s32, f32, f64 (little-endian), s16be, s24be, s32be, f32be, f64be (big-endian, as \
        AIFF holds them), s8 (signed 8-bit), s24in32hi, s24in32lo (24 bits in a 32-bit \
        little-endian word, aligned high or low); WAV takes the little-endian ones. Layouts: a \
        channel count or a name (mono, stereo, 2.1, quad, 5.0, 5.1, 7.1 ...), or positions \
        such as FL+FR+LFE.
        """)

    @Argument(help: "Raw interleaved PCM to read, or - for standard input.")
    var input: String

    @Argument(help: "Where to write, or - for standard output.")
    var output: String

    @Option(help: "Input sample format.")
    var inFormat = "f32"
    @Option(help: "Input sample rate.")
    var inRate = 44100
    @Option(help: "Input channels: a count or a layout name.")
    var inChannels = "2"

    @Option(help: "Output sample format (default: the input's).")
    var sampleFormat: String?
    @Option(help: "Output sample rate (default: the input's).")
    var sampleRate: Int?
    @Option(help: "Output channels: a count or a layout name (default: the input's).")
    var channels: String?
    @Option(help: "Output channel i is input channel map[i]: comma-separated indices, - for silence.")
    var map: String?

    @Option(help: "Resampler preset: low, medium (default), high.")
    var quality = "medium"
    @Flag(help: "TPDF dither when rounding float to integers.")
    var dither = false
    @Option(help: "Input frames to drop at the start (priming).")
    var primeLeading = 0
    @Option(help: "Input frames to drop at the end (padding).")
    var primeTrailing = 0

    @Option(help: "Frames per read (push) or per fill request (pull).")
    var chunk = 65536
    @Flag(help: "Drive the converter with fill(frames:) and an input callback instead of pushing.")
    var pull = false
    @Flag(help: "Write a WAV file instead of raw PCM.")
    var wav = false
    @Flag(help: "Print the time spent converting to standard error.")
    var time = false

    func run() throws {
        do {
            try convert()
        } catch let e as MediaError {
            FileHandle.standardError.write(Data("mk-audioconv: \(e)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// The sample type a name gives (interleaved: the layout is not chosen by name here).
    static func type(_ name: String) throws -> SampleFormat {
        guard let t = SampleFormat(name: name)?.interleaved else {
            throw MediaError(.invalidArgument, "unknown sample format \"\(name)\": give u8, s16, s24, s32, f32, f64, s16be, s24be, s32be, f32be, f64be, s8, s24in32hi or s24in32lo")
        }
        return t
    }

    func convert() throws {
        let inLayout = try ChannelLayout(name: inChannels)
        let src = AudioFormat(try Self.type(inFormat), sampleRate: inRate, layout: inLayout)
        let dst = AudioFormat(try sampleFormat.map(Self.type) ?? src.sampleType, sampleRate: sampleRate ?? inRate,
                              layout: try channels.map { try ChannelLayout(name: $0) } ?? inLayout)
        var options = AudioConverter.Options()
        guard let q = ResampleQuality(rawValue: quality) else {
            throw MediaError(.invalidArgument, "unknown quality \"\(quality)\": give low, medium or high")
        }
        options.quality = q
        options.dither = dither
        options.primeLeading = primeLeading
        options.primeTrailing = primeTrailing
        if let map {
            options.channelMix = .map(try map.split(separator: ",").map { part -> Int? in
                if part == "-" { return nil }
                guard let i = Int(part) else { throw MediaError(.invalidArgument, "channel map entry \"\(part)\" is not an index or -") }
                return i
            })
        }
        guard chunk > 0 else { throw MediaError(.invalidArgument, "--chunk must be positive") }
        let converter = try AudioConverter(from: src, to: dst, options: options)

        guard let reader = input == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: input) else {
            throw MediaError(.notFound, "cannot open the input", path: input)
        }
        var sink: (AudioBuffer) throws -> Void
        var finish: () throws -> Void
        if wav || output != "-" {
            let writer = try PCMWriter(path: output == "-" ? "/dev/stdout" : output, sampleType: dst.sampleType, sampleRate: dst.sampleRate,
                                       channels: dst.channels, channelMask: dst.layout.isMaskOrder ? dst.layout.mask : 0, wav: wav)
            sink = { try writer.write($0) }
            finish = { try writer.finish() }
        } else {
            sink = { b in
                try b.planes[0].withUnsafeBytes { p in
                    var done = 0
                    while done < b.frames * dst.bytesPerFrame {
                        let n = Foundation.write(1, p.baseAddress! + done, b.frames * dst.bytesPerFrame - done)
                        guard n > 0 else { throw MediaError(.io, "writing standard output failed (errno \(errno))") }
                        done += n
                    }
                }
            }
            finish = {}
        }

        let bpf = src.bytesPerFrame
        let fd = reader.fileDescriptor
        var inBytes = [UInt8](repeating: 0, count: chunk * bpf)
        var held = 0   // bytes in inBytes
        /// Reads up to `frames` whole frames into `inBytes` (bytes past the last whole frame
        /// stay for the next call); 0 at the end.
        func read(_ frames: Int) throws -> Int {
            let want = min(frames, chunk) * bpf
            while held < want {
                let n = inBytes.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress! + held, want - held) }
                if n < 0 && errno == EINTR { continue }
                guard n >= 0 else { throw MediaError(.io, "reading the input failed (errno \(errno))", path: input) }
                if n == 0 { break }
                held += n
            }
            return held / bpf
        }
        /// Drops the first `frames` frames of `inBytes`.
        func consume(_ frames: Int) {
            let used = frames * bpf
            inBytes.withUnsafeMutableBytes { p in _ = memmove(p.baseAddress!, p.baseAddress! + used, held - used) }
            held -= used
        }
        var outBuffer = AudioBuffer(empty: dst)

        var spent = 0.0
        func timed<R>(_ body: () throws -> R) rethrows -> R {
            let t0 = DispatchTime.now().uptimeNanoseconds
            defer { spent += Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9 }
            return try body()
        }
        let wall0 = DispatchTime.now().uptimeNanoseconds
        var inFrames = 0, outFrames = 0
        if pull {
            // In pull mode the reads happen inside fill(), so the time includes them.
            var ended = false
            while !ended {
                let b = try timed {
                    try converter.fill(frames: chunk) { want -> AudioBuffer? in
                        let n = try read(want)
                        if n == 0 { return nil }
                        defer { consume(n) }
                        inFrames += n
                        return try AudioBuffer(format: src, frames: n, planes: [Array(inBytes[0..<(n * bpf)])])
                    }
                }
                outFrames += b.frames
                try sink(b)
                ended = b.frames < chunk
            }
        } else {
            while true {
                let n = try read(chunk)
                if n == 0 { break }
                inFrames += n
                outBuffer.removeAll()
                try timed {
                    try inBytes.withUnsafeBytes { try converter.convert(planes: [$0.baseAddress!], frames: n, appendingTo: &outBuffer) }
                }
                consume(n)
                outFrames += outBuffer.frames
                try sink(outBuffer)
            }
            let tail = timed { converter.flush() }
            outFrames += tail.frames
            try sink(tail)
        }
        try finish()
        if time {
            let wall = Double(DispatchTime.now().uptimeNanoseconds - wall0) / 1e9
            let seconds = Double(inFrames) / Double(src.sampleRate)
            FileHandle.standardError.write(Data(String(format: "mk-audioconv: %d -> %d frames (%.1f s of audio), convert %.3f s (%.0fx real time), total %.3f s\n",
                                                       inFrames, outFrames, seconds, spent, seconds / max(spent, 1e-9), wall).utf8))
        }
    }
}
