import CMediaKitPlugin
import Foundation

/// A container written by a plugin's muxer (plugin ABI 2.5, `MK_PLUGIN_MUXER_FACTORY`): the
/// FFmpeg plugin's libavformat for the containers MediaKit does not write itself (AVI, FLV,
/// NUT, ADTS ...).
///
/// ``ContainerCatalog`` makes one for an output extension no built-in writer takes, or when
/// the caller names a plugin format (``ContainerCatalog/muxerFormat(named:)``). The plugin
/// writes through the ABI's output callbacks into an ``OutputFile``: a temporary file beside
/// the target, renamed into place by ``finish()`` once the plugin completed the file;
/// ``cancel()`` (and any failure) removes it, so nothing half-written appears under the
/// target's name. A target that is a pipe or a device is written front to back (`seek` NULL).
///
/// The track description the plugin gets is the ``CodecParameters`` as they are (FFmpeg's
/// codec names, the extradata as MP4 and Matroska store it, the source's codec tag), with the
/// track's time base, frame rate and language. Tags, chapters, encoder delay and gapless
/// facts are not handed over (the ABI has no place for them yet).
public final class PluginMuxer: Muxer, @unchecked Sendable {
    /// The plugin format that writes the file.
    public let format: MediaRegistry.PluginMuxerFormat
    /// The final path.
    public let path: String

    private let output: OutputFile
    private let io: PluginOutputIO
    private let handle: UnsafeMutableRawPointer
    private let vtable: mk_plugin_muxer_vtable
    private var timeBases: [Rational] = []
    /// Per track, ticks added to every timestamp: a demuxed track's edit list as FFmpeg's MP4
    /// demuxer applies it (``Track/presentationOffset``), 0 for tracks added from parameters.
    private var shifts: [Int64] = []
    private var started = false
    private var closed = false

    /// Opens a muxer of the plugin format `format` writing `path` (through a temporary file).
    /// - Throws: `.io` when the temporary file cannot be made; the plugin's refusal (naming the
    ///   plugin and format) when it does not open a muxer; `.pluginABI` for a malformed vtable.
    public init(format: MediaRegistry.PluginMuxerFormat, path: String) throws {
        self.format = format
        self.path = path
        output = try OutputFile(path: path)
        io = PluginOutputIO(file: output)
        var handle: UnsafeMutableRawPointer?
        var vtable: UnsafePointer<mk_plugin_muxer_vtable>?
        var errbuf = [CChar](repeating: 0, count: 1024)
        let status = format.raw.pointee.create?(format.raw, io.io, &handle, &vtable, &errbuf, errbuf.count) ?? MK_EINVAL
        let message = String(decoding: errbuf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard status == MK_OK, let handle, let vtable else {
            output.discard()
            throw MediaError(Self.kind(status), "the \(format.plugin.name) plugin's muxer '\(format.name)' does not open"
                             + (message.isEmpty ? " (status \(status))" : ": \(message)"),
                             path: path, underlying: .plugin(status: status, message: message))
        }
        let v = vtable.pointee
        guard Int(clamping: v.struct_size) >= PluginLoader.endOf(\mk_plugin_muxer_vtable.destroy), v.add_track != nil, v.write_header != nil,
              v.write_packet != nil, v.finish != nil, v.cancel != nil, v.destroy != nil else {
            v.destroy?(handle)
            output.discard()
            throw MediaError(.pluginABI, "the muxer vtable of \(format.qualifiedName) is malformed (struct size \(v.struct_size), or a NULL function)",
                             path: format.plugin.path)
        }
        self.handle = handle
        self.vtable = v
    }

    deinit {
        if !closed { vtable.cancel?(handle) }
        vtable.destroy?(handle)
        output.discard()
    }

    static func kind(_ status: Int32) -> MediaError.Kind {
        switch status {
        case MK_EDATA: return .invalidData
        case MK_EUNSUPPORTED: return .unsupported
        case MK_EINVAL: return .invalidArgument
        case MK_ENOMEM: return .limit
        default: return .backend
        }
    }

    /// The error for a failed call: the output's own when its write failed, else the plugin's
    /// status and last_error.
    private func failure(_ status: Int32, _ what: String) -> MediaError {
        if let e = io.error as? MediaError { io.error = nil; return e }
        let message = vtable.last_error.flatMap { $0(handle) }.map { String(cString: $0) } ?? ""
        return MediaError(Self.kind(status), "\(format.qualifiedName): \(what): " + (message.isEmpty ? "status \(status)" : message),
                          path: path, underlying: .plugin(status: status, message: message))
    }

    /// Adds a track of `parameters` timed in `timeBase`.
    /// - Throws: `.unsupported` (naming the codec) for a codec the format does not carry;
    ///   `.state` after the first packet.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        var track = Track(index: timeBases.count, id: timeBases.count + 1, parameters: parameters, timeBase: timeBase, duration: 0)
        track.language = ""
        return try add(track)
    }

    /// Adds a track copied from a demuxed ``Track``: its codec parameters, time base, frame rate
    /// and language. Its timestamps are moved by its edit list as `ffmpeg -c copy` from an MP4
    /// moves them (``Track/presentationOffset``: the first media edit starts at zero, after a
    /// first empty edit's delay).
    /// - Throws: as ``addTrack(_:timeBase:)``.
    public func addTrack(from track: Track) throws -> Int {
        let offset = track.presentationOffset
        return try add(track, shift: offset == .min || offset == .max ? 0 : offset)
    }

    private func add(_ track: Track, shift: Int64 = 0) throws -> Int {
        guard !started, !closed else {
            throw MediaError(.state, "\(format.qualifiedName): a track is added after the first packet", path: path)
        }
        let tb = track.timeBase
        guard tb.numerator > 0, tb.denominator > 0, tb.numerator <= Int64(Int32.max), tb.denominator <= Int64(Int32.max) else {
            throw MediaError(.invalidArgument, "\(format.qualifiedName): track time base \(tb) does not fit the plugin ABI (32-bit)", path: path)
        }
        let p = track.parameters
        var t = mk_plugin_mux_track()
        t.struct_size = UInt32(clamping: MemoryLayout<mk_plugin_mux_track>.size)
        switch p.mediaType {
        case .audio: t.media_type = MK_MEDIA_AUDIO
        case .video: t.media_type = MK_MEDIA_VIDEO
        case .subtitle: t.media_type = MK_MEDIA_SUBTITLE
        case .data: t.media_type = MK_MEDIA_DATA
        }
        t.time_base_num = Int32(clamping: tb.numerator)
        t.time_base_den = Int32(clamping: tb.denominator)
        t.sample_rate = Int32(clamping: p.sampleRate)
        t.channels = Int32(clamping: p.channels)
        t.channel_mask = p.channelMask
        t.width = Int32(clamping: p.width)
        t.height = Int32(clamping: p.height)
        let sar = p.sampleAspectRatio
        if sar.numerator > 0, sar.denominator > 0, sar.numerator <= Int64(Int32.max), sar.denominator <= Int64(Int32.max) {
            t.sar_num = Int32(clamping: sar.numerator)
            t.sar_den = Int32(clamping: sar.denominator)
        } else {
            t.sar_num = 0
            t.sar_den = 1
        }
        let rate = track.frameRate
        if rate.numerator > 0, rate.denominator > 0, rate.numerator <= Int64(Int32.max), rate.denominator <= Int64(Int32.max) {
            t.frame_rate_num = Int32(clamping: rate.numerator)
            t.frame_rate_den = Int32(clamping: rate.denominator)
        } else {
            t.frame_rate_num = 0
            t.frame_rate_den = 1
        }
        t.bits_per_coded_sample = Int32(clamping: p.bitsPerCodedSample)
        t.block_align = Int32(clamping: p.blockAlign)
        t.bit_rate = Int64(p.bitRate)
        t.video_delay = Int32(clamping: p.reorderDepth)
        t.disposition = 0
        var index: Int32 = -1
        let language = track.language == "und" ? "" : track.language
        let status = p.codec.rawValue.withCString { codec in
            p.codecTag.withCString { tag in
                language.withCString { lang in
                    "".withCString { title in
                        p.extradata.withUnsafeBufferPointer { extra in
                            t.codec = codec
                            t.codec_tag = tag
                            t.language = lang
                            t.title = title
                            t.extradata = extra.isEmpty ? nil : extra.baseAddress
                            t.extradata_size = extra.count
                            return vtable.add_track!(handle, &t, &index)
                        }
                    }
                }
            }
        }
        guard status == MK_OK else {
            throw failure(status, "adding track \(timeBases.count) (\(p.mediaType.rawValue) \(p.codec.rawValue))")
        }
        guard Int(clamping: index) == timeBases.count else {
            throw MediaError(.pluginABI, "\(format.qualifiedName) numbered track \(timeBases.count) as \(index)", path: path)
        }
        timeBases.append(tb)
        shifts.append(shift)
        return Int(clamping: index)
    }

    private func start() throws {
        guard !started else { return }
        started = true
        let status = vtable.write_header!(handle)
        guard status == MK_OK else { throw failure(status, "starting the file") }
    }

    /// Writes one packet; the first one starts the file (the plugin's write_header).
    /// - Throws: `.invalidArgument` for a track that was not added; the plugin's failure, or the
    ///   output's `.io` error when writing failed.
    public func write(_ packet: Packet) throws {
        guard !closed else { throw MediaError(.state, "\(format.qualifiedName): a packet after finish or cancel", path: path) }
        guard timeBases.indices.contains(packet.trackIndex) else {
            throw MediaError(.invalidArgument, "\(format.qualifiedName): a packet of track \(packet.trackIndex) (\(timeBases.count) tracks added)", path: path)
        }
        try start()
        let tb = timeBases[packet.trackIndex], shift = shifts[packet.trackIndex]
        func convert(_ v: Int64) -> Int64 {
            v == Int64.min || packet.timeBase == tb || packet.timeBase.numerator <= 0 ? v : Rational.rescale(v, from: packet.timeBase, to: tb)
        }
        func moved(_ v: Int64) -> Int64 {
            let t = convert(v)
            guard t != Int64.min else { return t }
            let (r, overflow) = t.addingReportingOverflow(shift)
            return overflow ? t : r
        }
        var p = mk_plugin_mux_packet()
        p.struct_size = UInt32(clamping: MemoryLayout<mk_plugin_mux_packet>.size)
        p.flags = (packet.isKeyframe ? MK_PACKET_FLAG_KEY : 0) | (packet.isDiscarded ? MK_PACKET_FLAG_DISCARD : 0)
        p.track = Int32(clamping: packet.trackIndex)
        p.pts = moved(packet.pts)
        p.dts = moved(packet.dts)
        p.duration = packet.duration > 0 ? convert(packet.duration) : 0
        p.size = packet.data.count
        let status = packet.data.withUnsafeBufferPointer { bytes in
            p.data = bytes.isEmpty ? nil : bytes.baseAddress
            return vtable.write_packet!(handle, &p)
        }
        guard status == MK_OK else { throw failure(status, "writing a packet of track \(packet.trackIndex) at dts \(packet.dts)") }
    }

    /// Completes the file (the plugin's trailer) and renames it into place.
    /// - Throws: the plugin's failure or the output's `.io` error; the temporary file is then
    ///   removed and nothing is left under ``path``.
    public func finish() throws {
        guard !closed else { throw MediaError(.state, "\(format.qualifiedName): finish after finish or cancel", path: path) }
        do {
            if timeBases.isEmpty { throw MediaError(.invalidArgument, "\(format.qualifiedName): no track was added", path: path) }
            try start()
            closed = true
            let status = vtable.finish!(handle)
            guard status == MK_OK else { throw failure(status, "completing the file") }
            try output.commit()
        } catch {
            if !closed { vtable.cancel!(handle) }
            closed = true
            output.discard()
            throw error
        }
    }

    /// Abandons the file: the plugin writes nothing more and the temporary file is removed.
    public func cancel() {
        guard !closed else { output.discard(); return }
        closed = true
        vtable.cancel!(handle)
        output.discard()
    }
}

/// The plugin ABI's `mk_plugin_output_io` over an ``OutputFile``: appends at its end,
/// overwrites bytes already written after a seek back; `seek` is NULL for an output that is a
/// pipe or a device. A write error of the file is kept (``error``) for the host's message.
final class PluginOutputIO {
    let file: OutputFile
    var position: Int64 = 0
    var error: Error?
    let io: UnsafeMutablePointer<mk_plugin_output_io>

    init(file: OutputFile) {
        self.file = file
        io = UnsafeMutablePointer<mk_plugin_output_io>.allocate(capacity: 1)
        io.initialize(to: mk_plugin_output_io(struct_size: UInt32(clamping: MemoryLayout<mk_plugin_output_io>.size), opaque: nil,
                                              write: Self.writeCallback, seek: file.isStream ? nil : Self.seekCallback,
                                              tell: Self.tellCallback))
        io.pointee.opaque = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { io.deinitialize(count: 1); io.deallocate() }

    private static func me(_ opaque: UnsafeMutableRawPointer?) -> PluginOutputIO {
        Unmanaged<PluginOutputIO>.fromOpaque(opaque!).takeUnretainedValue()
    }

    private static let writeCallback: @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<UInt8>?, Int) -> Int32 = { opaque, buf, size in
        let me = PluginOutputIO.me(opaque)
        guard size > 0 else { return MK_OK }
        guard let buf else { return MK_EINVAL }
        do {
            let end = me.file.bytesWritten
            var bytes = UnsafeRawBufferPointer(start: buf, count: size)
            if me.position < end {
                // Overwrite what is there (a header whose sizes are known at the end) ...
                let inside = Int(clamping: min(Int64(size), end - me.position))
                try me.file.patch([UInt8](bytes[0..<inside]), at: me.position)
                bytes = UnsafeRawBufferPointer(rebasing: bytes[inside...])
            }
            // ... and append the rest.
            if !bytes.isEmpty { try me.file.write(bytes) }
            me.position += Int64(size)
            return MK_OK
        } catch {
            me.error = error
            return MK_EFAIL
        }
    }

    private static let seekCallback: @convention(c) (UnsafeMutableRawPointer?, Int64) -> Int32 = { opaque, offset in
        let me = PluginOutputIO.me(opaque)
        guard offset >= 0, offset <= me.file.bytesWritten else { return MK_EINVAL }
        me.position = offset
        return MK_OK
    }

    private static let tellCallback: @convention(c) (UnsafeMutableRawPointer?) -> Int64 = { opaque in
        PluginOutputIO.me(opaque).position
    }
}
