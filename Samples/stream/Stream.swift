// mk-stream: feeds an MP3 or ADTS AAC file (or standard input) to AudioStreamParser in chunks,
// as bytes arriving from a socket would, and prints what the parser reports as it reports it.
import ArgumentParser
import Foundation
import MediaKit

@main
struct Stream: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mk-stream",
        abstract: "Push an MP3, ADTS AAC, AC-3 / E-AC-3, DTS or AMR stream, or a WAV, AIFF, CAF, FLAC, Ogg, M4A (moov first) or MPEG-TS file, through MediaKit's AudioStreamParser and print its events.",
        discussion: """
        The input is read in chunks of --chunk bytes, each pushed to the parser as a
        download or a socket would deliver it; - reads standard input, as in
        curl -s URL | mk-stream -

        Standard output: one line per event, in the order the events come:
          format mp3|adts|ac3|dts|amr|wav|aiff|caf|flac|ogg|mp4|mpegts
          data-format codec=C rate=R channels=N frames-per-packet=F
          magic-cookie HEX
          data-offset N
          audio-data-bytes N | audio-data-packets N     (Xing / VBRI)
          bit-rate N exact|average
          duration S exact|estimated
          encoder-delay-padding delay=N padding=N       (LAME tag)
          tags title="..." artist="..." ... frames=N
          ready
          packets N first-offset=N bytes=N
          warning MESSAGE
        --packets: one CSV line per packet instead, offset,size,frames (offset from
        the start of the input; frames 0 for bytes cut short by the end); warnings
        go to standard error.

        --pcm-out: the packets are also decoded through the registry's decoders to
        interleaved s16le PCM, gapless MP3 trimmed as FFmpeg trims it (as
        ffmpeg -i IN -f s16le OUT).

        --seek S (a file only): the start of the file is read until the seek can be
        resolved (the format, the VBR header and 64 KiB of frames; its events are
        printed, its packets are not), then this line is printed:
          seek S packet P offset O exact|estimated
          (with --packets: seek,S,P,O,exact|estimated)
        and the file is parsed from offset O, pushed with the discontinuity flag.
        P is the packet holding S seconds. exact: O is its start (a packet already
        parsed, or constant bit rate MPEG audio, whose frame offsets follow from
        its frame size and padding pattern). estimated: O comes from a Xing / VBRI
        table of contents or the average bit rate; parsing resynchronises at the
        next frame. With --pcm-out, decoding starts there as FFmpeg's does after a
        seek: no start trim, the gapless end trim kept, so the output ends where a
        decode from the start ends (the first frame or two lack the bit reservoir, as
        in any decoder started mid-stream). After an estimated seek the packet index,
        and so where the end trim falls, is an estimate too.

        --benchmark: times the parser alone, as ffmpeg's -benchmark times a run. The
        whole input is read into memory first, as pieces of --chunk bytes, which are
        then pushed to a new parser, 5 times; no event is printed, this line is:
          benchmark bytes=B packets=P cpu-seconds=S rate=R MB/s wall-seconds=W
        S: the least CPU time of the parsing thread over the passes (so that other work on
        the machine does not count), R = B / S; W: the least wall time. P and the packets'
        bytes must be the same in every pass.

        Exit status 1 with a message on standard error when the input cannot be
        read or holds no MPEG audio or ADTS frame.
        """)

    @Argument(help: "The MP3 / ADTS AAC file to read, or - for standard input.")
    var file: String

    @Option(help: "Bytes per push (1 to 64 MiB).")
    var chunk = 4096

    @Flag(help: "Print one CSV line per packet (offset,size,frames) instead of the events.")
    var packets = false

    @Option(help: "Decode the packets and write interleaved s16le PCM to this file.")
    var pcmOut: String?

    @Option(help: "Resolve a seek to this time (seconds) and parse from the offset it gives.")
    var seek: Double?

    @Flag(help: "Time the parser alone over the input held in memory (5 passes) and print the fastest pass's rate.")
    var benchmark = false

    func run() throws {
        do {
            try stream()
        } catch let e as MediaError {
            FileHandle.standardError.write(Data("mk-stream: \(e)\n".utf8))
            throw ExitCode(1)
        }
    }

    func stream() throws {
        guard chunk > 0 && chunk <= 1 << 26 else { throw MediaError(.invalidArgument, "--chunk must be from 1 byte to 64 MiB (\(chunk) given)") }
        if let s = seek, !(s >= 0 && s.isFinite) { throw MediaError(.invalidArgument, "--seek must be a time in seconds, 0 or more") }
        if pcmOut == "-" {
            throw MediaError(.invalidArgument, "--pcm-out needs a file path: standard output carries the events")
        }
        let input = try Input(path: file)
        defer { input.close() }
        if benchmark {
            guard seek == nil && pcmOut == nil && !packets else {
                throw MediaError(.invalidArgument, "--benchmark times the parser alone: it takes no --seek, --pcm-out or --packets")
            }
            return try timeParser(input)
        }
        if seek != nil && !input.isSeekable {
            throw MediaError(.unsupported, "--seek needs a file: standard input cannot go back", path: file)
        }
        let parser = AudioStreamParser(totalBytes: input.size)
        let out = Output()
        var pcm: PCMOutput? = pcmOut.map { PCMOutput(path: $0) }
        defer { pcm?.cancel() }

        if let seconds = seek {
            // Read what the seek needs: the format, the VBR header, and 64 KiB of frames
            // (whose padding pins down a constant bit rate stream's frame offsets).
            // Its events are printed, its packets not (they come before the seek).
            var none: Int64 = 0
            while parser.dataOffset == nil || input.offset < parser.dataOffset! + (64 << 10) {
                let bytes = try input.read(chunk)
                if bytes.isEmpty { break }
                try emit(try parser.push(bytes).filter { if case .packets = $0 { return false }; return true }, out, pcm: nil, pts: &none)
            }
            guard let target = parser.seek(to: seconds) else {
                out.flush()
                throw MediaError(.invalidData, "no MPEG audio or ADTS frame confirmed by the next one was found before offset \(input.offset); cannot seek", path: file)
            }
            let kind = target.exact ? "exact" : "estimated"
            out.line(packets ? "seek,\(seconds),\(target.packet),\(target.offset),\(kind)"
                             : "seek \(seconds) packet \(target.packet) offset \(target.offset) \(kind)")
            try pcm?.start(parser, seekPacket: target.packet)
            try input.seek(to: target.offset)
            var first = true
            var pts = target.packet * Int64(parser.dataFormat?.framesPerPacket ?? 0)
            func handle(_ events: [AudioStreamParser.Event]) throws {
                if first, let p = events.lazy.compactMap({ e -> Int64? in if case .packets(let p) = e { return p.first?.offset }; return nil }).first {
                    first = false
                    if target.exact && p != target.offset {
                        FileHandle.standardError.write(Data("mk-stream: warning: the seek was resolved as exact at offset \(target.offset), but the first frame found there starts at \(p)\n".utf8))
                    }
                }
                try emit(events, out, pcm: pcm, pts: &pts)
            }
            var discontinuity = true
            while true {
                let bytes = try input.read(chunk)
                if bytes.isEmpty { break }
                try handle(try parser.push(bytes, discontinuity: discontinuity))
                discontinuity = false
            }
            try handle(parser.finish())
        } else {
            var pts: Int64 = 0
            while true {
                let bytes = try input.read(chunk)
                if bytes.isEmpty { break }
                let events = try parser.push(bytes)
                if pcm != nil && parser.dataOffset != nil { try pcm!.start(parser) }
                try emit(events, out, pcm: pcm, pts: &pts)
            }
            try emit(parser.finish(), out, pcm: pcm, pts: &pts)
        }
        out.flush()
        if parser.dataFormat == nil {
            throw MediaError(.invalidData, "no MPEG audio or ADTS frame confirmed by the next one was found in \(input.offset) bytes", path: file)
        }
        if pcm != nil {
            try pcm!.finish(parser)
            pcm = nil
        }
    }

    /// `--benchmark`: the parser's own rate over the input held in memory (the fastest of 5 passes).
    func timeParser(_ input: Input) throws {
        var data: [UInt8] = []
        while true {
            let bytes = try input.read(1 << 20)
            if bytes.isEmpty { break }
            data += bytes
        }
        // Held in memory as the pieces a socket or a download would deliver.
        let pieces = stride(from: 0, to: data.count, by: chunk).map { Array(data[$0..<min($0 + chunk, data.count)]) }
        var best = Double.infinity, bestWall = Double.infinity
        var counted: (packets: Int, bytes: Int)?
        for _ in 0..<5 {
            var packetCount = 0, packetBytes = 0
            func take(_ events: [AudioStreamParser.Event]) {
                for case .packets(let list) in events {
                    packetCount += list.count
                    for p in list { packetBytes += p.data.count }
                }
            }
            let start = (wall: DispatchTime.now().uptimeNanoseconds, cpu: Self.threadCPUSeconds())
            let parser = AudioStreamParser(totalBytes: Int64(data.count))
            for piece in pieces { take(try parser.push(piece)) }
            take(parser.finish())
            best = min(best, Self.threadCPUSeconds() - start.cpu)
            bestWall = min(bestWall, Double(DispatchTime.now().uptimeNanoseconds - start.wall) / 1e9)
            guard parser.dataFormat != nil else {
                throw MediaError(.invalidData, "no MPEG audio or ADTS frame confirmed by the next one was found in \(data.count) bytes", path: file)
            }
            if let c = counted, c != (packetCount, packetBytes) {
                throw MediaError(.invalidData, "the passes disagree: \(c.packets) and \(packetCount) packets", path: file)
            }
            counted = (packetCount, packetBytes)
        }
        let rate = Double(data.count) / best / 1e6
        print("benchmark bytes=\(data.count) packets=\(counted!.packets) cpu-seconds=\(String(format: "%.6f", best)) rate=\(String(format: "%.0f", rate)) MB/s"
              + " wall-seconds=\(String(format: "%.6f", bestWall))")
    }

    /// CPU time of the calling thread (what it spent running, whatever else the machine runs).
    static func threadCPUSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }

    /// Prints `events` (or their packets as CSV) and decodes their packets.
    func emit(_ events: [AudioStreamParser.Event], _ out: Output, pcm: PCMOutput?, pts: inout Int64) throws {
        for e in events {
            if case .packets(let list) = e {
                if packets {
                    for p in list { out.line("\(p.offset),\(p.data.count),\(p.frames)") }
                } else if let first = list.first {
                    out.line("packets \(list.count) first-offset=\(first.offset) bytes=\(list.reduce(0) { $0 + $1.data.count })")
                }
                if let pcm {
                    for p in list {
                        try pcm.decode(p, pts: pts)
                        pts += Int64(p.frames)
                    }
                } else {
                    pts += list.reduce(0) { $0 + Int64($1.frames) }
                }
                continue
            }
            if packets {
                if case .warning(let w) = e { FileHandle.standardError.write(Data("mk-stream: warning: \(w)\n".utf8)) }
                continue
            }
            out.line(Self.describe(e))
        }
        out.flushIfLarge()
    }

    /// One readable line for an event other than packets.
    static func describe(_ e: AudioStreamParser.Event) -> String {
        switch e {
        case .fileFormat(let f): return "format \(f)"
        case .dataFormat(let f): return "data-format codec=\(f.codec) rate=\(f.sampleRate) channels=\(f.channels) frames-per-packet=\(f.framesPerPacket)"
        case .magicCookie(let c): return "magic-cookie " + c.map { String(format: "%02x", $0) }.joined()
        case .dataOffset(let o): return "data-offset \(o)"
        case .audioDataByteCount(let n): return "audio-data-bytes \(n)"
        case .audioDataPacketCount(let n): return "audio-data-packets \(n)"
        case .bitRate(let r, let exact): return "bit-rate \(r) \(exact ? "exact" : "average")"
        case .duration(let d, let estimated): return "duration \(d) \(estimated ? "estimated" : "exact")"
        case .encoderDelayAndPadding(let d, let p): return "encoder-delay-padding delay=\(d) padding=\(p)"
        case .tags(let t):
            var parts: [String] = []
            for (name, value) in [("title", t.title), ("artist", t.artist), ("album", t.album), ("track", t.track),
                                  ("date", t.date), ("genre", t.genre), ("comment", t.comment)] {
                if let value { parts.append("\(name)=\(quote(value))") }
            }
            if let art = t.coverArt { parts.append("cover=\(art.mime),\(art.data.count)-bytes") }
            if !t.chapters.isEmpty { parts.append("chapters=\(t.chapters.count)") }
            parts.append("frames=\(t.frames.count)")
            return "tags " + parts.joined(separator: " ")
        case .readyToProducePackets: return "ready"
        case .packets(let p): return "packets \(p.count)"
        case .warning(let w): return "warning \(w)"
        case .discontinuity(let at, let skipped): return "discontinuity offset=\(at) skipped=\(skipped)"
        }
    }

    static func quote(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }
}

/// The input: a file or standard input, read in chunks of an exact size (short only at the end).
final class Input {
    let path: String
    private let fd: Int32
    /// Offset of the next byte read.
    private(set) var offset: Int64 = 0
    /// The file's size; nil for a pipe.
    let size: Int64?
    let isSeekable: Bool

    init(path: String) throws {
        self.path = path
        if path == "-" {
            fd = 0
        } else {
            fd = open(path, O_RDONLY)
            guard fd >= 0 else { throw MediaError(.notFound, "cannot open the input: \(String(cString: strerror(errno)))", path: path) }
        }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG {
            size = Int64(st.st_size)
            isSeekable = true
        } else {
            size = nil
            isSeekable = false
        }
    }

    /// Up to `count` bytes: fewer only at the end of the input.
    func read(_ count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let n = buffer.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress! + done, count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw MediaError(.io, "reading the input failed: \(String(cString: strerror(errno)))", path: path, offset: offset + Int64(done)) }
            if n == 0 { break }
            done += n
        }
        offset += Int64(done)
        if done < count { buffer.removeLast(count - done) }
        return buffer
    }

    func seek(to position: Int64) throws {
        guard lseek(fd, off_t(position), SEEK_SET) >= 0 else {
            throw MediaError(.io, "cannot seek the input: \(String(cString: strerror(errno)))", path: path, offset: position)
        }
        offset = position
    }

    func close() { if fd > 0 { _ = Foundation.close(fd) } }
}

/// Standard output, buffered.
final class Output {
    private var text = ""

    func line(_ s: String) {
        text += s
        text += "\n"
    }

    func flushIfLarge() { if text.utf8.count > 1 << 16 { flush() } }

    func flush() {
        if !text.isEmpty { FileHandle.standardOutput.write(Data(text.utf8)) }
        text = ""
    }
}

/// Decodes the parser's packets to s16le PCM through a ``DecodeSession`` on the track the
/// parser describes (``AudioStreamParser/makeTrack()``: the demuxer's track, gapless included).
final class PCMOutput {
    let path: String
    private var session: DecodeSession?
    private var track: Track?
    private var writer: PCMWriter?

    init(path: String) {
        self.path = path
    }

    /// Creates the decoder once the parser knows the format (no-op after that). After a seek
    /// to packet `seekPacket`, the track starts there: no start trim, the gapless end trim kept
    /// (``AudioStreamParser/makeTrack(fromPacket:)``), as FFmpeg decodes after a seek.
    func start(_ parser: AudioStreamParser, seekPacket: Int64? = nil) throws {
        guard session == nil, let made = seekPacket.map({ parser.makeTrack(fromPacket: $0) }) ?? parser.makeTrack() else { return }
        track = made.track
        session = try DecodeSession(track: made.track)
    }

    func decode(_ p: AudioStreamParser.Packet, pts: Int64) throws {
        guard let session, let track else { return }
        try session.decode(p.packet(pts: pts, timeBase: track.timeBase), write)
    }

    private func write(_ frame: Frame) throws {
        if writer == nil {
            writer = try PCMWriter(path: path, sampleType: .s16, sampleRate: frame.sampleRate, channels: frame.channels,
                                   channelMask: frame.channelMask, wav: false)
        }
        try writer!.write(frame)
    }

    /// Drains the decoder and closes the output (an empty one when nothing was decoded).
    func finish(_ parser: AudioStreamParser) throws {
        if let session { try session.finish(write) }
        if writer == nil {
            let f = parser.dataFormat
            writer = try PCMWriter(path: path, sampleType: .s16, sampleRate: f?.sampleRate ?? 44100, channels: max(1, f?.channels ?? 1), wav: false)
        }
        try writer!.finish()
        writer = nil
    }

    /// Removes a partial output after an error.
    func cancel() { writer?.cancel() }
}
