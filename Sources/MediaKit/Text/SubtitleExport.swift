import Foundation

/// Writes the cues of a text subtitle track as a SubRip or WebVTT file, as
/// `ffmpeg -i IN -map 0:s:N -f srt OUT` / `-f webvtt OUT` writes them (`mk-decode --subtitles-out`).
public enum SubtitleExport {
    /// The format a file name's extension asks for (`.srt`, `.vtt`), nil for another.
    public static func format(forPath path: String) -> SubtitleRendering.Format? {
        switch (path as NSString).pathExtension.lowercased() {
        case "srt": return .subrip
        case "vtt", "webvtt": return .webvtt
        default: return nil
        }
    }

    /// The index (in `demuxer.tracks`) of its `n`-th subtitle track (0 first, ffmpeg's `0:s:n`).
    /// - Throws: `.notFound` naming how many subtitle tracks the file has.
    public static func subtitleTrack(_ n: Int, of demuxer: Demuxer, path: String? = nil) throws -> Int {
        let subs = demuxer.tracks.filter { $0.parameters.mediaType == .subtitle }
        guard n >= 0, n < subs.count else {
            throw MediaError(.notFound, "no subtitle track \(n): the file has \(subs.count)", path: path)
        }
        return subs[n].index
    }

    /// Decodes track `track` of `demuxer` (read with `read(track:)`, from where that track
    /// stands) and writes its cues to `path` in `format`: numbered SubRip cues, or a WebVTT file
    /// (`WEBVTT` header, identifiers and cue settings kept). A cue whose rendered text is empty
    /// is left out, as ffmpeg leaves it out. The file is written under a temporary name and
    /// renamed at the end: a failure leaves nothing under `path`. Returns the number of cues
    /// written.
    /// - Throws: ``SubtitleDecoder/init(parameters:)``'s `.unsupported` for a track that is not
    ///   text, the demuxer's and decoder's errors (a file cut short ends the cues: its
    ///   `.truncated` error is not thrown), `.io` for the output.
    @discardableResult
    public static func write(from demuxer: Demuxer, track: Int, to path: String, format: SubtitleRendering.Format) throws -> Int {
        guard track >= 0, track < demuxer.tracks.count else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (the file has \(demuxer.tracks.count))")
        }
        let decoder = try SubtitleDecoder(parameters: demuxer.tracks[track].parameters)
        let muxer = try SubtitleFileMuxer(path: path, format: format)
        muxer.addTrack(decoder: decoder)
        do {
            while true {
                let packet: Packet?
                do {
                    packet = try demuxer.read(track: track)
                } catch let e as MediaError where e.kind == .truncated {
                    packet = nil
                }
                guard var packet else { break }
                packet.trackIndex = 0
                try muxer.write(packet)
            }
            try muxer.finish()
            return muxer.count
        } catch {
            muxer.cancel()
            throw error
        }
    }
}
