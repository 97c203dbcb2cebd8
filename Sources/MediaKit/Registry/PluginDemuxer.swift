import CMediaKitPlugin
import Foundation

/// A container read by a plugin's demuxer (plugin ABI 2.4, `MK_PLUGIN_DEMUXER_FACTORY`): the
/// FFmpeg plugin's libavformat for the containers MediaKit does not read itself (AVI,
/// Musepack, WebVTT ...).
///
/// ``ContainerCatalog/open(_:demuxer:)`` makes one when no built-in format claims a source's
/// first bytes and a plugin format does, or when the caller names a plugin format. The plugin
/// reads the ``ByteSource`` through the ABI's IO callbacks (`seek` is NULL for a source that
/// cannot seek: a pipe is read front to back). Tracks carry FFmpeg's codec names, also for
/// codecs MediaKit has no decoder for (decoding them fails naming the codec).
///
/// ``read(track:)`` reads through a second instance of the plugin's demuxer per track
/// (seekable sources only), so that its position is independent of ``read()``'s.
///
/// Since plugin ABI 2.5 the file's tags are its ``metadata``, a track's its ``Track/metadata``; a file the container
/// carries (`MK_DISPOSITION_ATTACHMENT`: a Matroska font or picture) is one of the
/// ``attachments``, not a track; a cover picture (`MK_DISPOSITION_ATTACHED_PIC`) stays a track
/// (its one packet, as ffprobe lists it) and is an attachment too, with its picture type.
public final class PluginDemuxer: Demuxer, @unchecked Sendable {
    /// The plugin format that reads the source.
    public let format: MediaRegistry.DemuxerFormat
    /// The format the plugin says it read (FFmpeg's name: "avi").
    public let formatName: String
    /// The tracks, in the plugin's order.
    public let tracks: [Track]
    /// The container's duration in seconds, if the plugin knows it.
    public let duration: Double?
    /// Per track, the title the container gives it ("" if none).
    public let trackTitles: [String]
    /// Per track, the plugin's disposition bits (`MK_DISPOSITION_*`: default, forced,
    /// attached picture ...).
    public let trackDispositions: [UInt32]
    /// The files the container carries and the cover pictures, in the plugin's track order.
    public let attachments: [Attachment]
    /// The file's tags as the plugin names them (plugin ABI 2.5; none from an older plugin).
    public let metadata: Metadata

    private let source: ByteSource
    private let main: Instance
    private var perTrack: [Int: Instance] = [:]
    private var selected: Set<Int>?

    /// Opens `source` with the plugin format `format`.
    /// - Throws: `.invalidData` (or the plugin's status as another kind) naming the plugin,
    ///   the format and what the plugin said when it does not open the source; the source's
    ///   own error when reading it failed.
    public init(format: MediaRegistry.DemuxerFormat, source: ByteSource) throws {
        self.format = format
        self.source = source
        main = try Instance(format: format, source: source)
        var info = mk_plugin_demuxer_info()
        info.struct_size = UInt32(MemoryLayout<mk_plugin_demuxer_info>.size)
        if let get = main.vtable.get_info, get(main.handle, &info) == MK_OK {
            formatName = info.format_name.map { String(cString: $0) } ?? format.name
            duration = info.duration_us == Int64.min || info.duration_us < 0 ? nil : Double(info.duration_us) / 1_000_000
            var tags = Metadata()
            if Int(info.struct_size) >= PluginLoader.endOf(\mk_plugin_demuxer_info.tags) {
                for (key, value) in Self.tags(info.tags) {
                    tags.append(key: MetadataKeys.key(key), nativeKey: key, ffmpegKey: key, value: value)
                }
            }
            metadata = tags
        } else {
            formatName = format.name
            duration = nil
            metadata = Metadata()
        }
        let count = Int(main.vtable.track_count?(main.handle) ?? 0)
        guard count <= 100_000 else {
            throw MediaError(.limit, "the plugin demuxer \(format.qualifiedName) lists \(count) tracks", path: source.name)
        }
        var tracks: [Track] = [], titles: [String] = [], dispositions: [UInt32] = [], attachments: [Attachment] = []
        var trackOf = [Int](repeating: -1, count: count)
        for i in 0..<count {
            var t = mk_plugin_track_info()
            t.struct_size = UInt32(MemoryLayout<mk_plugin_track_info>.size)
            let status = main.vtable.get_track?(main.handle, UInt32(i), &t) ?? MK_EFAIL
            guard status == MK_OK else { throw main.failure(status, "describing track \(i)") }
            let (track, title, disposition) = Self.track(tracks.count, t)
            let attachment = Self.attachment(t, track)
            if let attachment { attachments.append(attachment) }
            if disposition & MK_DISPOSITION_ATTACHMENT != 0 && attachment != nil { continue }   // a file, not a stream
            trackOf[i] = tracks.count
            tracks.append(track); titles.append(title); dispositions.append(disposition)
        }
        self.tracks = tracks
        trackTitles = titles
        trackDispositions = dispositions
        self.attachments = attachments
        main.trackOf = trackOf
    }

    /// The plugin's tags of a track (ABI 2.5: key, value, ..., NULL), in order; none before 2.5.
    private static func tags(_ t: mk_plugin_track_info) -> [(key: String, value: String)] {
        guard Int(t.struct_size) >= PluginLoader.endOf(\mk_plugin_track_info.tags) else { return [] }
        return tags(t.tags)
    }

    /// A plugin's list of tags (key, value, ..., NULL), in order, at most 10,000.
    private static func tags(_ list: UnsafePointer<UnsafePointer<CChar>?>?) -> [(key: String, value: String)] {
        guard var p = list else { return [] }
        var out: [(key: String, value: String)] = []
        while let key = p[0], let value = p[1], out.count < 10_000 {
            out.append((String(cString: key), String(cString: value)))
            p += 2
        }
        return out
    }

    /// The ``Attachment`` of a file the container carries or of a cover picture (ABI 2.5), nil
    /// for other tracks. Names as libavformat gives them: the tags `filename`, `mimetype`,
    /// `title` (Matroska's FileDescription), `comment` (the ID3 picture type's name); an APE
    /// cover's key is its item name ("Cover Art (Front)") and its value the file name.
    private static func attachment(_ t: mk_plugin_track_info, _ track: Track) -> Attachment? {
        guard Int(t.struct_size) >= PluginLoader.endOf(\mk_plugin_track_info.attachment_size), let bytes = t.attachment,
              t.attachment_size > 0, t.attachment_size < 1 << 28,
              t.disposition & (MK_DISPOSITION_ATTACHMENT | MK_DISPOSITION_ATTACHED_PIC) != 0 else { return nil }
        let tags = Self.tags(t)
        func tag(_ key: String) -> String { tags.first { $0.key.lowercased() == key }?.value ?? "" }
        let data = [UInt8](UnsafeBufferPointer(start: bytes, count: t.attachment_size))
        if t.disposition & MK_DISPOSITION_ATTACHMENT != 0 {
            return Attachment(data: data, mimeType: tag("mimetype"), description: tag("title"), fileName: tag("filename"))
        }
        let mime = tag("mimetype").isEmpty ? PictureCodec.mimeType(track.parameters.codec) : tag("mimetype")
        // (Width and height stay 0: the container states none; the track has the decoder's.)
        if let ape = tags.first(where: { $0.key.lowercased().hasPrefix("cover art (") }) {
            return Attachment(data: data, mimeType: mime, pictureType: ape.key.lowercased() == "cover art (front)" ? 3 : 0,
                              description: ape.key, fileName: ape.value)
        }
        return Attachment(data: data, mimeType: mime, pictureType: Attachment.pictureTypeNames.firstIndex(of: tag("comment")) ?? 0,
                          description: tag("title"), fileName: tag("filename"))
    }

    /// A ``Track`` for the plugin's description of track `index`, its title and disposition.
    private static func track(_ index: Int, _ t: mk_plugin_track_info) -> (Track, String, UInt32) {
        func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
        // Fields past the plugin's struct_size read as absent (0 / NULL), as the ABI says.
        let size = Int(t.struct_size)
        func has<F>(_ field: KeyPath<mk_plugin_track_info, F>) -> Bool { size >= PluginLoader.endOf(field) }
        let type: MediaType
        switch Int32(t.media_type) {
        case MK_MEDIA_AUDIO: type = .audio
        case MK_MEDIA_VIDEO: type = .video
        case MK_MEDIA_SUBTITLE: type = .subtitle
        default: type = .data
        }
        let extradata = t.extradata != nil && t.extradata_size > 0 && t.extradata_size < 1 << 28
            ? [UInt8](UnsafeBufferPointer(start: t.extradata, count: t.extradata_size)) : []
        var p = CodecParameters(mediaType: type, codec: CodecID(text(t.codec)), codecTag: text(t.codec_tag), extradata: extradata,
                                width: Int(max(0, t.width)), height: Int(max(0, t.height)),
                                sampleRate: Int(max(0, t.sample_rate)), channels: Int(max(0, t.channels)),
                                bitsPerCodedSample: Int(max(0, t.bits_per_coded_sample)), blockAlign: Int(max(0, t.block_align)),
                                bitRate: Int(max(0, t.bit_rate)),
                                sampleAspectRatio: t.sar_num > 0 && t.sar_den > 0 ? Rational(Int64(t.sar_num), Int64(t.sar_den)) : Rational(0, 1))
        p.channelMask = t.channel_mask
        p.reorderDepth = Int(max(0, t.video_delay))
        let timeBase = Rational(Int64(max(1, t.time_base_num)), Int64(max(1, t.time_base_den)))
        let language = has(\.language) ? text(t.language) : ""
        var track = Track(index: index, id: index, parameters: p, timeBase: timeBase,
                          duration: t.duration == Int64.min || t.duration < 0 ? 0 : t.duration,
                          language: language.isEmpty ? "und" : language)
        if t.frame_rate_num > 0 && t.frame_rate_den > 0 { track.frameRate = Rational(Int64(t.frame_rate_num), Int64(t.frame_rate_den)) }
        for (key, value) in tags(t) {
            track.metadata.append(key: MetadataKeys.key(key), nativeKey: key, ffmpegKey: key, value: value)
        }
        return (track, has(\.title) ? text(t.title) : "", has(\.disposition) ? t.disposition : 0)
    }

    /// The next packet of the selected tracks in file order, or nil at the end.
    /// - Throws: the plugin's failure (`.invalidData` for damaged data) naming the plugin and
    ///   what it said, or the source's own read error.
    public func read() throws -> Packet? {
        while let p = try main.next(tracks) {
            if selected?.contains(p.trackIndex) ?? true { return p }
        }
        return nil
    }

    /// The next packet of `track`, from a reader of its own (a second instance of the plugin's
    /// demuxer), or nil at that track's end.
    /// - Throws: `.invalidArgument` for a track that does not exist; `.unsupported` for a source
    ///   that cannot seek (it cannot be read twice); as ``read()``.
    public func read(track: Int) throws -> Packet? {
        guard tracks.indices.contains(track) else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (\(tracks.count) tracks)", path: source.name)
        }
        let reader: Instance
        if let known = perTrack[track] { reader = known } else {
            guard source.isSeekable else {
                throw MediaError(.unsupported, "reading one track on its own needs a seekable source (this one is read once); use read()", path: source.name)
            }
            reader = try Instance(format: format, source: source)
            reader.trackOf = main.trackOf
            perTrack[track] = reader
        }
        while let p = try reader.next(tracks) {
            if p.trackIndex == track { return p }
        }
        return nil
    }

    /// Moves every track to the key frame at or before `seconds` (on the packets' timeline).
    /// - Throws: `.unsupported` for a source that cannot seek; the plugin's failure otherwise.
    public func seek(to seconds: Double) throws {
        guard seconds.isFinite else { throw MediaError(.invalidArgument, "seek to \(seconds) s", path: source.name) }
        let us = Int64(max(-9.2e12, min(9.2e12, seconds * 1_000_000)))
        for instance in [main] + perTrack.keys.sorted().compactMap({ perTrack[$0] }) {
            let status = instance.vtable.seek?(instance.handle, us, 0) ?? MK_EUNSUPPORTED
            guard status == MK_OK else { throw instance.failure(status, String(format: "seeking to %.3f s", seconds)) }
        }
    }

    /// Limits ``read()`` to these tracks (nil: all).
    public func select(tracks: Set<Int>?) { selected = tracks }

    /// One open instance of a plugin demuxer, with the IO bridge it reads through.
    private final class Instance {
        let handle: UnsafeMutableRawPointer
        let vtable: mk_plugin_demuxer_vtable
        let io: PluginIO
        let format: MediaRegistry.DemuxerFormat
        /// Our track index of each plugin track index; -1 for an attachment (not a track).
        var trackOf: [Int] = []

        init(format: MediaRegistry.DemuxerFormat, source: ByteSource) throws {
            self.format = format
            io = PluginIO(source: source)
            var handle: UnsafeMutableRawPointer?
            var vtable: UnsafePointer<mk_plugin_demuxer_vtable>?
            var errbuf = [CChar](repeating: 0, count: 1024)
            let status = format.raw.pointee.create?(format.raw, io.io, &handle, &vtable, &errbuf, errbuf.count) ?? MK_EINVAL
            let message = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            guard status == MK_OK, let handle, let vtable else {
                if let e = io.error as? MediaError { throw e }
                throw MediaError(Self.kind(status), "the \(format.plugin.name) plugin's demuxer '\(format.name)' does not open it"
                                 + (message.isEmpty ? " (status \(status))" : ": \(message)"),
                                 path: source.name, underlying: .plugin(status: status, message: message))
            }
            let v = vtable.pointee
            guard Int(v.struct_size) >= PluginLoader.endOf(\mk_plugin_demuxer_vtable.destroy), v.track_count != nil, v.get_track != nil,
                  v.read_packet != nil, v.destroy != nil else {
                v.destroy?(handle)
                throw MediaError(.pluginABI, "the demuxer vtable of \(format.qualifiedName) is malformed (struct size \(v.struct_size), or a NULL function)",
                                 path: format.plugin.path)
            }
            self.handle = handle
            self.vtable = v
        }

        deinit { vtable.destroy?(handle) }

        static func kind(_ status: Int32) -> MediaError.Kind {
            switch status {
            case MK_EDATA: return .invalidData
            case MK_EUNSUPPORTED: return .unsupported
            case MK_EINVAL: return .invalidArgument
            case MK_ENOMEM: return .limit
            default: return .backend
            }
        }

        /// The error for a failed call: the source's own when its read failed, else the
        /// plugin's status and last_error.
        func failure(_ status: Int32, _ what: String) -> MediaError {
            if let e = io.error as? MediaError { io.error = nil; return e }
            let message = vtable.last_error.flatMap { $0(handle) }.map { String(cString: $0) } ?? ""
            return MediaError(Self.kind(status), "\(format.qualifiedName): \(what): " + (message.isEmpty ? "status \(status)" : message),
                              path: io.source.name, underlying: .plugin(status: status, message: message))
        }

        /// The next packet, or nil at the end.
        func next(_ tracks: [Track]) throws -> Packet? {
            var p = mk_plugin_demuxed_packet()
            var index = -1
            repeat {   // packets of an attachment (a plugin should send none) are skipped
                p = mk_plugin_demuxed_packet()
                p.struct_size = UInt32(MemoryLayout<mk_plugin_demuxed_packet>.size)
                let status = vtable.read_packet!(handle, &p)
                if status == MK_EOF { return nil }
                guard status == MK_OK else { throw failure(status, "reading a packet") }
                guard trackOf.indices.contains(Int(p.track)), p.size < 1 << 31, p.size == 0 || p.data != nil else {
                    throw MediaError(.pluginABI, "\(format.qualifiedName) returned a packet of track \(p.track) (\(trackOf.count) tracks), \(p.size) bytes",
                                     path: io.source.name)
                }
                index = trackOf[Int(p.track)]
            } while index < 0
            let data = p.size > 0 ? [UInt8](UnsafeBufferPointer(start: p.data, count: p.size)) : []
            let hasPosition = Int(p.struct_size) >= PluginLoader.endOf(\mk_plugin_demuxed_packet.position)
            var packet = Packet(trackIndex: index, pts: p.pts, dts: p.dts, duration: max(0, p.duration),
                                isKeyframe: p.flags & MK_PACKET_FLAG_KEY != 0, position: hasPosition ? p.position : -1,
                                data: data, timeBase: tracks[index].timeBase)
            packet.isDiscarded = p.flags & MK_PACKET_FLAG_DISCARD != 0
            return packet
        }
    }
}

/// The plugin ABI's `mk_plugin_io` over a ``ByteSource``: a position of its own, so that two
/// instances on one seekable source do not disturb each other; `seek` is NULL for a source
/// that cannot seek. A read error of the source is kept (``error``) for the host's message.
final class PluginIO {
    let source: ByteSource
    var position: Int64 = 0
    var error: Error?
    let io: UnsafeMutablePointer<mk_plugin_io>

    init(source: ByteSource) {
        self.source = source
        io = UnsafeMutablePointer<mk_plugin_io>.allocate(capacity: 1)
        io.initialize(to: mk_plugin_io(struct_size: UInt32(MemoryLayout<mk_plugin_io>.size), opaque: nil,
                                       read: Self.readCallback, seek: source.isSeekable ? Self.seekCallback : nil,
                                       size: Self.sizeCallback))
        io.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { io.deinitialize(count: 1); io.deallocate() }

    private static func me(_ opaque: UnsafeMutableRawPointer?) -> PluginIO {
        Unmanaged<PluginIO>.fromOpaque(opaque!).takeUnretainedValue()
    }

    private static let readCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int) -> Int64 = { opaque, buf, size in
        let me = PluginIO.me(opaque)
        guard let buf, size > 0 else { return 0 }
        do {
            let n = try me.source.readSome(at: me.position, into: UnsafeMutableRawBufferPointer(start: buf, count: size))
            me.position += Int64(n)
            return Int64(n)
        } catch {
            me.error = error
            return Int64(MK_EFAIL)
        }
    }

    private static let seekCallback: @convention(c) (UnsafeMutableRawPointer?, Int64) -> Int32 = { opaque, offset in
        let me = PluginIO.me(opaque)
        guard offset >= 0 else { return MK_EINVAL }
        me.position = offset
        return MK_OK
    }

    private static let sizeCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int64 = { opaque in
        PluginIO.me(opaque).source.knownSize ?? -1
    }
}
