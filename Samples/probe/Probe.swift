// mk-probe: prints what a media file holds, the way ffprobe would.
import ArgumentParser
import Foundation
import MediaKit

@main
struct Probe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mk-probe",
        abstract: "Print the tracks of a media file, its packets, or the loaded codec plugins.",
        discussion: """
        Examples:
          mk-probe movie.mp4             tracks, human-readable
          mk-probe --json movie.mp4      the same as JSON
          mk-probe --packets movie.mp4   one CSV line per packet in file order:
                                         track,pts,dts,duration,size,offset,flags (K = key frame,
                                         N/A = unknown)
          mk-probe --plugins             the codec plugins found and where, and the container
                                         formats they read
          mk-probe --demuxer ffmpeg:avi movie.avi   read with that demuxer (a built-in format's
                                         name, or a plugin's: "avi", "ffmpeg:avi"), not the probed one
        Containers MediaKit does not read itself are read through a plugin's demuxer (the FFmpeg
        plugin's libavformat) when no built-in format claims the file; --json names the demuxer
        in format.demuxer ("mp4", "ffmpeg:avi").
        """)

    @Argument(help: "The media file to read (MP4, MOV, M4A, Ogg, Opus, IVF, MKV, MKA, WebM, TS, M2TS, raw H.264 / HEVC / AV1 OBU ...); - reads standard input (a pipe: Ogg, IVF, Matroska / WebM, MPEG-TS, raw video streams, MP4 with its moov first, or fragmented MP4).")
    var file: String?

    @Flag(help: "Print the tracks as JSON.")
    var json = false

    @Flag(help: "Print one CSV line per packet: track,pts,dts,duration,size,offset,flags.")
    var packets = false

    @Flag(help: "Read every packet and print how many there are and their total size.")
    var count = false

    @Flag(help: "List the codec plugins the registry loaded, the container formats they read and the places it searched.")
    var plugins = false

    @Option(help: ArgumentHelp("Read the file with this demuxer instead of the probed one: a built-in format (mp4, matroska ...) or a plugin's (avi, ffmpeg:avi).", valueName: "NAME"))
    var demuxer: String?

    @Option(help: "Write the file's cover art (MP3 / ADTS ID3 tags) to this path.")
    var coverOut: String?

    @Option(help: ArgumentHelp("Time a raw H.264 / HEVC / AV1 OBU stream at this frame rate (N, N/D or a decimal), as ffmpeg's -r before -i. Default: the rate its SPS states, else 25.", valueName: "RATE"))
    var frameRate: String?

    mutating func run() throws {
        if plugins {
            printPlugins()
            if file == nil { return }
        }
        guard let file else { throw ValidationError("give a media file to probe, or --plugins") }
        do {
            let rate = try Self.parsedFrameRate(frameRate)
            let (format, demuxer) = try ContainerCatalog.shared.open(ByteSources.open(path: file), demuxer: self.demuxer)
            if let rate { try RawVideoDemuxer.setFrameRate(rate, on: demuxer, path: file) }
            if let coverOut {
                // The first picture: cover art of any container (APIC, PICTURE, covr, an image attachment).
                guard let cover = demuxer.attachments.first(where: \.isPicture) else {
                    throw MediaError(.notFound, "the file has no cover art in its tags", path: file)
                }
                let out = try OutputFile(path: coverOut)
                do { try out.write(cover.data); try out.commit() } catch { out.discard(); throw error }
            }
            if count {
                var n = 0, bytes = 0
                var cut: MediaError?
                while let p = try demuxer.read(untilCut: &cut) { n += 1; bytes += p.size }
                print("\(n) packets, \(bytes) bytes")
                if let cut { FileHandle.standardError.write(Data("mk-probe: warning: \(cut)\n".utf8)) }
            } else if packets {
                try printPackets(demuxer)
            } else if json {
                try printJSON(demuxer, format: format)
            } else {
                printTracks(demuxer, file: file)
            }
        } catch let e as MediaError {
            FileHandle.standardError.write(Data("mk-probe: \(e)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// The --frame-rate value, or nil when none was given.
    static func parsedFrameRate(_ text: String?) throws -> Rational? {
        guard let text else { return nil }
        guard let rate = RawVideoDemuxer.frameRate(parsing: text) else {
            throw ValidationError("--frame-rate wants a positive rate (25, 30000/1001, 29.97), not \"\(text)\"")
        }
        return rate
    }

    func printPlugins() {
        let registry = MediaRegistry.shared
        if registry.plugins.isEmpty { print("No plugins loaded.") }
        for p in registry.plugins {
            let codecs = registry.backends.filter { $0.plugin == p }
            print("\(p.name) \(p.version)")
            print("  path:   \(p.path)")
            print("  codecs: " + codecs.map { "\($0.codec) (\($0.mediaType.rawValue), priority \($0.priority))" }.joined(separator: ", "))
            let converters = registry.converters.filter { $0.plugin == p }
            if !converters.isEmpty {
                print("  picture converters: " + converters.map { "\($0.name) (priority \($0.priority))" }.joined(separator: ", "))
            }
            let containers = registry.demuxerFormats.filter { $0.plugin == p }
            if !containers.isEmpty {
                print("  containers (\(containers.count), read when no built-in format claims a file): "
                      + containers.map { "\($0.name) (priority \($0.priority))" }.joined(separator: ", "))
            }
        }
        print("Searched: " + registry.searchedLocations.joined(separator: ", "))
        for f in registry.loadFailures { print("Refused: \(f)") }
    }

    func printPackets(_ demuxer: Demuxer) throws {
        var out = ""
        out.reserveCapacity(1 << 16)
        let stdout = FileHandle.standardOutput
        defer { stdout.write(Data(out.utf8)) }   // the packets before an error are printed too
        var cut: MediaError?   // a file cut short: its packets, then a warning (as ffprobe)
        defer {
            for w in demuxer.warnings + (cut.map { [$0] } ?? []) { FileHandle.standardError.write(Data("mk-probe: warning: \(w)\n".utf8)) }
        }
        while let p = try demuxer.read(untilCut: &cut) {
            // As ffprobe: an unknown timestamp and a zero duration print as N/A.
            let pts = p.pts == Packet.noTimestamp ? "N/A" : String(p.pts)
            let dts = p.dts == Packet.noTimestamp ? "N/A" : String(p.dts)
            let duration = p.duration == 0 ? "N/A" : String(p.duration)
            let position = p.position < 0 ? "N/A" : String(p.position)   // a frame split from a PES has none
            out += "\(p.trackIndex),\(pts),\(dts),\(duration),\(p.size),\(position),\(p.isKeyframe ? "K" : "_")\n"
            if out.utf8.count > 1 << 16 { stdout.write(Data(out.utf8)); out = "" }
        }
    }

    func printTracks(_ demuxer: Demuxer, file: String) {
        var head = "\(file)"
        if let mp4 = demuxer as? MP4Demuxer, !mp4.majorBrand.isEmpty { head += " (\(mp4.majorBrand.trimmingCharacters(in: .whitespaces)))" }
        if let d = demuxer.duration { head += String(format: ", duration %.3f s", d) }
        print(head + ", \(demuxer.tracks.count) track\(demuxer.tracks.count == 1 ? "" : "s")")
        for t in demuxer.tracks {
            let p = t.parameters
            var line = "  #\(t.index) \(p.mediaType.rawValue) \(p.codec.isUnknown ? "unknown" : p.codec.rawValue) (\(p.codecTag))"
            switch p.mediaType {
            case .video: line += " \(p.width)x\(p.height)"
            case .audio: line += " \(p.sampleRate) Hz, \(p.channels) ch"
            default: break
            }
            // A container without a sample table (MPEG-TS, Matroska, Ogg ...) does not say how many
            // samples a track holds (`--count` reads them): no count rather than "0 samples".
            line += String(format: ", %.3f s", t.durationSeconds) + (t.sampleCount > 0 ? ", \(t.sampleCount) samples" : "")
                + ", language \(t.language)"
            if t.rotation != 0 { line += ", rotation \(Int(t.rotation))" }
            if t.isReflected { line += ", reflected (shown as \(t.orientation))" }
            if !t.editList.isEmpty { line += ", edit list " + t.editList.map { "[\($0.segmentDuration)/\($0.mediaTime)]" }.joined(separator: " ") }
            if let r = t.unsupportedReason { line += " — \(r)" }
            print(line)
        }
    }

    /// Tags as ffprobe prints them: libavformat's keys and merged values.
    static func tagObject(_ m: Metadata) -> [String: String] {
        Dictionary(m.ffmpegTags.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
    }

    func printJSON(_ demuxer: Demuxer, format container: ContainerFormat) throws {
        var tracks: [[String: Any]] = []
        for t in demuxer.tracks {
            let p = t.parameters
            var d: [String: Any] = [
                "index": t.index, "id": t.id, "type": p.mediaType.rawValue,
                "codec": p.codec.isUnknown ? p.codecTag : p.codec.rawValue, "codec_tag": p.codecTag,
                "time_base": t.timeBase.description, "duration": t.durationSeconds, "duration_ts": t.duration,
                "language": t.language, "rotation": t.rotation, "reflected": t.isReflected,
                "orientation": t.orientation.description, "sample_count": t.sampleCount,
                "width": p.width, "height": p.height, "sample_rate": p.sampleRate, "channels": p.channels,
                "frame_rate": t.frameRate.description,
                "encoder_delay": t.encoderDelay, "encoder_padding": t.encoderPadding,
                "edit_list": t.editList.map { ["segment_duration": $0.segmentDuration, "media_time": $0.mediaTime, "media_rate": $0.mediaRate] },
            ]
            if let r = t.unsupportedReason { d["unsupported"] = r }
            // ffprobe's streams[].tags (see docs/metadata.md).
            d["tags"] = Self.tagObject(t.metadata)
            if let plugin = demuxer as? PluginDemuxer {
                d["name"] = plugin.trackTitles[t.index]
                d["disposition"] = plugin.trackDispositions[t.index]
            }
            if let mkv = demuxer as? MatroskaDemuxer {
                let info = mkv.trackInfo[t.index]
                d["name"] = info.name
                d["default"] = info.isDefault
                d["forced"] = info.isForced
            }
            tracks.append(d)
        }
        var format: [String: Any] = [:]
        // Which demuxer read it: a built-in format's name, or "plugin:name" for a plugin's.
        format["demuxer"] = container.qualifiedName
        if let plugin = container.plugin { format["demuxer_plugin"] = plugin }
        if let p = demuxer as? PluginDemuxer { format["format_name"] = p.formatName }
        if let d = demuxer.duration { format["duration"] = d }
        if let mp4 = demuxer as? MP4Demuxer { format["major_brand"] = mp4.majorBrand; format["compatible_brands"] = mp4.compatibleBrands }
        // ffprobe's format.tags, chapters, and the attached pictures / files (see docs/metadata.md).
        format["tags"] = Self.tagObject(demuxer.metadata)
        if let stream = demuxer as? AudioStreamDemuxer { format["id3_frames"] = stream.tags.frames.map(\.id) }
        if let mkv = demuxer as? MatroskaDemuxer {
            format["doc_type"] = mkv.docType
            format["title"] = mkv.title
            format["writing_app"] = mkv.writingApp
            format["muxing_app"] = mkv.muxingApp
        }
        if let flac = demuxer as? FLACDemuxer {
            format["pictures"] = flac.pictures.map { ["type": $0.type, "mime_type": $0.mimeType, "description": $0.description,
                                                      "width": $0.width, "height": $0.height, "size": $0.data.count] as [String: Any] }
        }
        let chapters: [[String: Any]] = demuxer.chapters.map { c in
            ["id": c.id, "time_base": c.timeBase.description, "start": c.start, "end": c.end,
             "start_time": String(format: "%.6f", c.startSeconds), "end_time": String(format: "%.6f", c.endSeconds),
             "tags": Self.tagObject(c.metadata)]
        }
        let attachments: [[String: Any]] = demuxer.attachments.map { a in
            ["mime_type": a.mimeType, "picture_type": a.pictureType ?? -1, "description": a.description,
             "file_name": a.fileName, "size": a.data.count, "width": a.width, "height": a.height]
        }
        // Markers (AIFF MARK; ffprobe has none): id, frame, name.
        let markers: [[String: Any]] = demuxer.markers.map { ["id": $0.id, "frame": $0.frame, "name": $0.name] }
        // Sampler settings (AIFF INST; ffprobe has none), its loops' frames -1 without their marker.
        var object: [String: Any] = ["tracks": tracks, "format": format, "chapters": chapters, "markers": markers, "attachments": attachments]
        if let i = demuxer.instrument {
            func loop(_ l: Instrument.Loop) -> [String: Any] {
                ["play_mode": l.playMode, "begin_marker": l.beginMarker, "end_marker": l.endMarker,
                 "begin_frame": l.beginFrame ?? -1, "end_frame": l.endFrame ?? -1]
            }
            object["instrument"] = ["base_note": i.baseNote, "detune": i.detune, "low_note": i.lowNote, "high_note": i.highNote,
                                    "low_velocity": i.lowVelocity, "high_velocity": i.highVelocity, "gain": i.gain,
                                    "sustain_loop": loop(i.sustainLoop), "release_loop": loop(i.releaseLoop)]
        }
        let data = try JSONSerialization.data(withJSONObject: object,
                                              options: [.prettyPrinted, .sortedKeys])
        FileHandle.standardOutput.write(data + Data("\n".utf8))
    }
}
