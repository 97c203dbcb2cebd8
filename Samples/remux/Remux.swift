// mk-remux: copies the tracks of an MP4/MOV/M4A into a new MP4 without decoding them.
import ArgumentParser
import Foundation
import MediaKit

@main
struct Remux: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mk-remux",
        abstract: "Copy the compressed tracks of an MP4/MOV/M4A into a new MP4 (no decoding).",
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

        Examples:
          mk-remux in.mov out.mp4
          mk-remux in.mp4 out.mp4 --faststart --track 0 --track 2
          mk-remux camera.mp4 out.mp4 --hybrid 2
        """)

    @Argument(help: "The input file (MP4, MOV, M4A; fragmented or not).")
    var input: String

    @Argument(help: "The output MP4.")
    var output: String

    @Flag(help: "Put the moov box at the front.")
    var faststart = false

    @Option(help: ArgumentHelp("Write a fragmented MP4, one fragment about every SECONDS.", valueName: "SECONDS"))
    var fragment: Double?

    @Option(help: ArgumentHelp("Fragmented while writing, progressive when done.", valueName: "SECONDS"))
    var hybrid: Double?

    @Option(name: .customLong("track"), help: ArgumentHelp("Keep only this track (0-based; repeatable). Default: all.", valueName: "N"))
    var tracks: [Int] = []

    @Flag(help: "Print no progress line.")
    var quiet = false

    @Option(help: ArgumentHelp("Sleep MS milliseconds after each packet (to test crash safety).", valueName: "MS", visibility: .hidden))
    var paceMs: Int = 0

    mutating func validate() throws {
        if [faststart, fragment != nil, hybrid != nil].filter({ $0 }).count > 1 {
            throw ValidationError("give at most one of --faststart, --fragment, --hybrid")
        }
        for s in [fragment, hybrid].compactMap({ $0 }) where !(s > 0 && s.isFinite) {
            throw ValidationError("the fragment duration must be a positive number of seconds")
        }
    }

    mutating func run() throws {
        do {
            try remux()
        } catch let e as MediaError {
            FileHandle.standardError.write(Data("mk-remux: \(e)\n".utf8))
            throw ExitCode(1)
        }
    }

    func remux() throws {
        let demuxer = try MP4Demuxer(path: input)
        let all = demuxer.tracks
        let wanted = tracks.isEmpty ? all.map(\.index) : tracks
        for t in wanted where t < 0 || t >= all.count {
            throw MediaError(.invalidArgument, "track \(t) does not exist (the file has \(all.count))", path: input)
        }
        var options = MP4Muxer.Options()
        if let s = fragment { options.layout = .fragmented(seconds: s) }
        else if let s = hybrid { options.layout = .hybrid(seconds: s) }
        else if faststart {
            options.layout = .fastStart
            // Room for the moov before the media data, so that finish() copies nothing: the
            // source's moov and a quarter more (a fragmented source's moov has no tables:
            // 16 bytes per sample). When it does not fit, finish() copies the data once.
            let samples = wanted.reduce(0) { $0 + all[$1].sampleCount }
            options.reservedMoovBytes = 4096 + Int(demuxer.movieBoxSize) * 5 / 4 + (demuxer.isFragmented ? samples * 16 : 0)
        }
        let scales = Set(wanted.map { all[$0].movieTimeScale }.filter { $0 > 0 })
        if scales.count == 1, let s = scales.first { options.movieTimeScale = s }
        options.userData = demuxer.userData
        let muxer = try MP4Muxer(path: output, options: options)
        var map = [Int: Int]()
        do {
            for t in wanted { map[t] = try muxer.addTrack(from: all[t]) }
            for (from, refs) in demuxer.trackReferences {
                guard let f = map[from] else { continue }
                for r in refs {
                    let to = r.tracks.compactMap { map[$0] }
                    if !to.isEmpty { try muxer.addTrackReference(from: f, type: r.type, to: to) }
                }
            }
            demuxer.select(tracks: Set(wanted))
            let total = max(1, all.filter { map[$0.index] != nil }.reduce(0) { $0 + $1.sampleCount })
            let showProgress = !quiet && demuxer.file.size >= 64 << 20
            var done = 0, lastShown = -1
            let source = demuxer.file
            while let s = try demuxer.readReference() {
                guard let out = map[s.trackIndex] else { continue }
                try muxer.writeSample(track: out, pts: s.pts, dts: s.dts, duration: s.duration, isKeyframe: s.isKeyframe,
                                      from: source, offset: s.offset, size: s.size)
                done += 1
                if paceMs > 0 { usleep(useconds_t(paceMs) * 1000) }
                if showProgress {
                    let percent = done * 100 / total
                    if percent != lastShown {
                        lastShown = percent
                        FileHandle.standardError.write(Data("\rmk-remux: \(percent)% (\(done)/\(total) samples)".utf8))
                    }
                }
            }
            try muxer.finish()
            if showProgress { FileHandle.standardError.write(Data("\rmk-remux: 100% (\(done)/\(total) samples), wrote \(output)\n".utf8)) }
        } catch {
            muxer.cancel()
            throw error
        }
    }
}
