// mk-tag: prints or edits the tags of a media file without re-encoding it.
import ArgumentParser
import Foundation
import MediaKit

@main
struct Tag: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mk-tag",
        abstract: "Print or edit the tags, cover art and other metadata of a media file (no re-encoding).",
        discussion: """
        Without an edit option the tags are printed (KEY=VALUE lines, or --json).

        Keys are MediaKit's normalised keys (title, artist, album_artist, album,
        track, disc, date, genre, comment, composer ...; see docs/metadata.md), or a
        container's own names (a Vorbis field name, an ID3 frame id), in any case.

        How the file is written:
          MP3   the ID3v2 tag at the start is replaced by an ID3v2.4 tag (frames
                MediaKit does not read, such as GEOB, POPM, UFID, copied); the
                audio bytes after it are never touched
          FLAC  the metadata blocks are written again (STREAMINFO, SEEKTABLE ...
                kept byte for byte; new VORBIS_COMMENT, PICTURE and PADDING)
          MP4 / M4A / MOV  the moov's udta/meta/ilst is replaced (the other
                items and boxes kept byte for byte), in place: within the meta's
                padding when the bytes that change lie in one page, else a new
                moov is written into the free box next to the old one (or into
                a free box added at the end of a file whose moov is last) and
                one 8-byte write turns the old moov into free space; when there
                is no room, the packets are copied by the MP4 muxer
          other formats MediaKit writes (Ogg, Opus, Matroska, WebM, WAV, AIFF,
                CAF): the packets are copied by the format's muxer
        MP3 and FLAC are rewritten in place when the tag's padding leaves room
        and the bytes that change lie within one 4096-byte page (one write: a
        process killed during it leaves the old or the new file); otherwise, and
        for the other formats, a temporary file beside FILE is written, synced,
        given FILE's permissions and renamed over it. FILE is never left
        half-written; a temporary file a killed run leaves (.FILE.partial-PID,
        .FILE.mktag-PID.EXT) is removed by the next mk-tag run on FILE.

        A tag a format cannot store (WAV's INFO list holds a few keys only) is an
        error, and the file is left as it was.

        Examples:
          mk-tag song.mp3
          mk-tag song.mp3 --json
          mk-tag song.flac --set title="Blue in Green" --set track=3 --remove comment
          mk-tag song.m4a --cover front.jpg
          mk-tag song.ogg --remove-cover --clear --set artist=Someone
        """)

    @Argument(help: "The media file (edited in place: see above).")
    var file: String

    @Option(name: .customLong("set"), help: ArgumentHelp("Set a tag (repeatable; an empty VALUE removes it).", valueName: "KEY=VALUE"))
    var settings: [String] = []

    @Option(name: .customLong("remove"), help: ArgumentHelp("Remove a tag (repeatable).", valueName: "KEY"))
    var removals: [String] = []

    @Option(help: ArgumentHelp("Put this picture (JPEG, PNG, GIF, BMP, WebP) in as the front cover, replacing the file's front covers.", valueName: "IMAGE"))
    var cover: String?

    @Flag(help: "Remove every picture (cover art) from the file.")
    var removeCover = false

    @Flag(help: "Remove every tag before the --set ones are written (chapters and pictures stay).")
    var clear = false

    @Flag(help: "Write through a temporary file even when the tags would fit in place.")
    var noInPlace = false

    @Flag(help: "Print the tags (after the edits, when there are any).")
    var list = false

    @Flag(help: "Print the tags as JSON (after the edits, when there are any).")
    var json = false

    mutating func run() throws {
        do {
            let picture = try cover.map { try TagEdits.cover(imagePath: $0) }
            let edits = try TagEdits(settings: settings, removals: removals, cover: picture, removePictures: removeCover, clear: clear)
            if !edits.isEmpty {
                let method = try TagEditor.edit(path: file, edits: edits, allowInPlace: !noInPlace)
                FileHandle.standardError.write(Data("mk-tag: \(file): \(Self.said(method))\n".utf8))
            }
            if edits.isEmpty || list || json {
                let listing = try TagEditor.read(path: file)
                print(json ? Self.json(listing) : Self.text(listing))
            }
        } catch let e as MediaError {
            FileHandle.standardError.write(Data("mk-tag: \(e)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// What the edit did, for the message.
    static func said(_ method: TagWriteMethod) -> String {
        switch method {
        case .inPlace: return "tags written in place"
        case .temporaryFile: return "tags written (the file was written again through a temporary file)"
        case .remux: return "tags written (the file was remuxed through a temporary file)"
        case .unchanged: return "the file already holds these tags; nothing written"
        }
    }

    /// `key=value` lines: the container's tags, each track's, the pictures and the chapters.
    static func text(_ l: TagEditor.Listing) -> String {
        var lines = ["format: \(l.format)"]
        lines += l.tags.map { "\($0.key)=\($0.value)" }
        for (t, tags) in l.trackTags.sorted(by: { $0.key < $1.key }) {
            lines += tags.map { "track \(t): \($0.key)=\($0.value)" }
        }
        for (i, a) in l.attachments.enumerated() {
            let type = a.pictureType.map { $0 < Attachment.pictureTypeNames.count ? Attachment.pictureTypeNames[$0] : "type \($0)" } ?? "attachment"
            let name = a.fileName.isEmpty ? "" : " \(a.fileName)"
            lines.append("picture \(i): \(type), \(a.mimeType.isEmpty ? "?" : a.mimeType), \(a.data.count) bytes\(name)")
        }
        for (i, c) in l.chapters.enumerated() {
            lines.append(String(format: "chapter %d: %.3f-%.3f", i, c.startSeconds, c.endSeconds) + (c.title.map { " \($0)" } ?? ""))
        }
        return lines.joined(separator: "\n")
    }

    /// The listing as JSON: format, tags (key, native_key, ffmpeg_key, value), tracks' tags,
    /// the tags as libavformat shows them (ffmpeg_tags, track_ffmpeg_tags: [key, value] pairs,
    /// repeated keys merged as it merges them), attachments (mime_type, picture_type, description, size) and chapters (start, end, title).
    static func json(_ l: TagEditor.Listing) -> String {
        func entries(_ m: Metadata) -> [[String: String]] {
            m.map { ["key": $0.key, "native_key": $0.nativeKey, "ffmpeg_key": $0.ffmpegKey, "value": $0.value] }
        }
        func shown(_ m: Metadata) -> [[String]] { m.ffmpegTags.map { [$0.key, $0.value] } }
        var tracks: [String: Any] = [:], tracksShown: [String: Any] = [:]
        for (t, tags) in l.trackTags {
            tracks[String(t)] = entries(tags)
            tracksShown[String(t)] = shown(tags)
        }
        let object: [String: Any] = [
            "format": l.format,
            "tags": entries(l.tags),
            "track_tags": tracks,
            "ffmpeg_tags": shown(l.tags),
            "track_ffmpeg_tags": tracksShown,
            "attachments": l.attachments.map { a -> [String: Any] in
                ["mime_type": a.mimeType, "picture_type": a.pictureType.map { $0 as Any } ?? NSNull(), "description": a.description,
                 "file_name": a.fileName, "size": a.data.count]
            },
            "chapters": l.chapters.map { c -> [String: Any] in
                ["start": c.startSeconds, "end": c.endSeconds, "title": c.title.map { $0 as Any } ?? NSNull()]
            },
        ]
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
