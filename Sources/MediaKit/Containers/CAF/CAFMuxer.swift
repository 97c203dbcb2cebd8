/// Writes a CAF file of one audio track, laid out as FFmpeg's caf muxer lays it out: `caff`,
/// `desc`, `chan` when the speaker layout is known (mono and stereo by default), `kuki` for the
/// codecs that have a cookie (``CAFCodec/cookie(for:)``), `info` for the tags
/// (``setMetadata(_:)``), `data`, and for packets of varying size a `pakt` after the audio
/// with the priming and remainder frames. The chunks before the audio are written at the first
/// packet (or at ``finish()``).
///
/// Codecs: AAC, ALAC, FLAC, Opus (mono or stereo), and every plain PCM codec (`lpcm` in the
/// source's byte order, integer or float; `pcm_u8` stored as signed 8-bit, a lossless change of
/// storage), A-law, mu-law.
///
/// Gapless: an encoder's priming (``addEncodedTrack(_:timeBase:encoderDelay:)``) and end
/// (``setGapless(track:presentedDuration:padding:)``), or a copied track's edit list (one edit
/// at rate 1) or encoder delay and padding (``addTrack(from:)``), become the packet table's
/// priming and remainder frames, so a copy back into MP4 gives the same edit list.
///
/// The file is written under a temporary name and renamed by ``finish()`` (``OutputFile``);
/// the `data` chunk's size is -1 until then (the spec's "still being written").
final class CAFMuxer: Muxer, @unchecked Sendable {
    private let file: OutputFile
    private var done = false
    private var stream: Stream?

    private struct Stream {
        var parameters: CodecParameters
        var desc: CAFChunks.Description
        var pcm: (source: PCMCodec, stored: PCMCodec)?
        var timeBase: Rational
        /// Where the `kuki` body starts (patched by ``updateParameters(_:track:)``'s same-size cookie).
        var cookie: (offset: Int64, bytes: [UInt8])?
        /// The chunks before `info` and `data`, until they are written (at the first packet or
        /// at ``finish()``, once ``setMetadata(_:)`` had its chance); nil once written.
        var pendingHeader: [UInt8]?
        /// Where the `data` chunk's header starts.
        var dataHeader: Int64 = 0
        var dataBytes: Int64 = 0
        /// Bytes and frames of each packet (packetized codecs only).
        var sizes: [Int64] = []
        var lengths: [Int64] = []
        /// Frames of the priming and, when stated, of the signal after it; padding when only it is stated.
        var priming: Int64 = 0
        var valid: Int64?
        var padding: Int64 = 0
    }

    /// Starts `path`.
    /// - Throws: `.io` when the file cannot be created.
    init(path: String) throws {
        file = try OutputFile(path: path)
    }

    deinit { if !done { file.discard() } }

    /// Adds the file's one track.
    /// - Throws: `.unsupported` for a second track or a codec CAF does not carry here (naming
    ///   it); `.invalidArgument` for a rate, channel count or configuration the file cannot hold; `.io`.
    func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        guard stream == nil, !done else { throw MediaError(.unsupported, "a CAF file holds one track", path: file.path) }
        let p = parameters
        guard p.mediaType == .audio, let made = CAFCodec.description(for: p) else {
            let name = p.codec.isUnknown ? "an unknown codec" : p.codec.rawValue
            throw MediaError(.unsupported, "CAF files written by MediaKit carry \(CAFCodec.written.map(\.rawValue).joined(separator: ", ")), not \(name)", path: file.path)
        }
        guard p.sampleRate > 0, p.sampleRate <= Int(Int32.max), (1...1024).contains(p.channels) else {
            throw MediaError(.invalidArgument, "audio at \(p.sampleRate) Hz with \(p.channels) channels cannot be written as CAF (a positive rate, 1 to 1024 channels)",
                             path: file.path)
        }
        guard timeBase.numerator > 0, timeBase.denominator > 0 else {
            throw MediaError(.invalidArgument, "a time base of \(timeBase.numerator)/\(timeBase.denominator)", path: file.path)
        }
        if p.codec == "opus" && p.channels > 2 {
            throw MediaError(.unsupported, "CAF files written by MediaKit carry mono and stereo Opus: more channels need a channel mapping in the magic cookie, whose layout Apple has not published",
                             path: file.path)
        }
        let cookie = CAFCodec.cookie(for: p)
        // AAC and ALAC frames do not describe themselves; FLAC frames do (FFmpeg writes FLAC
        // without a cookie, and its decoder needs none).
        if cookie == nil && ["aac", "alac"].contains(p.codec.rawValue) {
            throw MediaError(.invalidArgument, "a \(p.codec) track needs its configuration in extradata (\(p.codec == "aac" ? "the AudioSpecificConfig" : "the 36-byte alac atom")) for the CAF magic cookie",
                             path: file.path)
        }
        var s = Stream(parameters: p, desc: made.desc, pcm: made.pcm, timeBase: timeBase)
        var header = CAFChunks.fileHeader + CAFChunks.header("desc", size: 32) + made.desc.bytes
        if let chan = CAFChunks.ChannelLayout.body(channels: p.channels, mask: p.channelMask) {
            header += CAFChunks.header("chan", size: Int64(chan.count)) + chan
        }
        if let cookie {
            header += CAFChunks.header("kuki", size: Int64(cookie.count))
            s.cookie = (Int64(header.count), cookie)
            header += cookie
        }
        s.pendingHeader = header
        stream = s
        return 0
    }

    /// Keeps the container's tags (then the track's that it does not have) for an `info`
    /// chunk before `data`, as FFmpeg's caf muxer writes one: the count, then each key and
    /// value NUL-terminated, under the names libavformat gives them ("title", "artist" ...),
    /// in its dictionary's order. - Throws: `.state` after the first packet.
    func setMetadata(_ metadata: MuxMetadata) throws {
        guard let s = stream, s.pendingHeader != nil, !done else {
            if metadata.isEmpty { return }
            throw MediaError(.state, "metadata must be given after addTrack and before the first packet", path: file.path)
        }
        information = Metadata(metadata.combined(track: 0), ffmpegMerge: metadata.tags.ffmpegMerge).ffmpegTags
    }

    /// The tags of the `info` chunk (``setMetadata(_:)``).
    private var information: [(key: String, value: String)] = []

    /// Writes the chunks kept by ``addTrack(_:timeBase:)``, the `info` chunk and the `data`
    /// chunk's header, once.
    private func writeHeader(_ s: inout Stream) throws {
        guard var header = s.pendingHeader else { return }
        if !information.isEmpty {
            var body = MetadataWriting.be32(information.count)
            for (key, value) in information { body += Array(key.utf8) + [0] + Array(value.utf8) + [0] }
            header += CAFChunks.header("info", size: Int64(body.count)) + body
        }
        s.dataHeader = Int64(header.count)
        header += CAFChunks.header("data", size: CAFChunks.unknownSize) + [0, 0, 0, 0]   // edit count 0
        try file.write(header)
        s.pendingHeader = nil
    }

    /// Adds a copied track; its edit list (one edit at rate 1, its media time the priming) or
    /// encoder delay and padding become the packet table's priming and remainder.
    func addTrack(from track: Track) throws -> Int {
        let index = try addTrack(track.parameters, timeBase: track.timeBase)
        let tb = track.timeBase
        let edits = track.editList.filter { !$0.isEmpty }
        if edits.count == 1, track.editList.count == 1, let e = edits.first, e.mediaRate == 1, e.mediaTime >= 0 {
            let priming = frames(ticks: e.mediaTime, timeBase: tb)
            stream?.priming = priming
            if e.segmentDuration > 0 && track.movieTimeScale > 0 {
                let valid = frames(ticks: e.segmentDuration, timeBase: Rational(1, track.movieTimeScale))
                stream?.valid = valid
            }
        } else if track.editList.isEmpty && (track.encoderDelay > 0 || track.encoderPadding > 0) {
            let rate = Rational(1, Int64(track.parameters.sampleRate))
            let priming = frames(ticks: Int64(max(0, track.encoderDelay)), timeBase: rate)
            let padding = frames(ticks: Int64(max(0, track.encoderPadding)), timeBase: rate)
            stream?.priming = priming
            stream?.padding = padding
        }
        return index
    }

    /// Adds an encoded track whose first `encoderDelay` ticks are priming.
    func addEncodedTrack(_ parameters: CodecParameters, timeBase: Rational, encoderDelay: Int) throws -> Int {
        let index = try addTrack(parameters, timeBase: timeBase)
        let priming = frames(ticks: Int64(max(0, encoderDelay)), timeBase: timeBase)
        stream?.priming = priming
        return index
    }

    /// States the signal's length after the priming: the rest of the last packets is remainder.
    func setGapless(track: Int, presentedDuration: Int64, padding: Int64) throws {
        guard track == 0, let s = stream else { throw MediaError(.invalidArgument, "track \(track) was not added", path: file.path) }
        let valid = frames(ticks: max(0, presentedDuration), timeBase: s.timeBase)
        stream?.valid = valid
    }

    /// Takes an encoder's final configuration (FLAC's STREAMINFO with its sample count and MD5)
    /// when its cookie has the size of the one written.
    func updateParameters(_ parameters: CodecParameters, track: Int) throws {
        guard track == 0, var s = stream, let old = s.cookie, parameters.codec == s.parameters.codec,
              let cookie = CAFCodec.cookie(for: parameters), cookie.count == old.bytes.count else { return }
        s.cookie = (old.offset, cookie)
        s.parameters.extradata = parameters.extradata
        stream = s
    }

    /// `ticks` of `timeBase` in frames of the track's rate.
    private func frames(ticks: Int64, timeBase: Rational) -> Int64 {
        guard let rate = stream?.parameters.sampleRate else { return 0 }
        return Rational.rescale(ticks, from: timeBase, to: Rational(1, Int64(rate)))
    }

    /// Appends a packet.
    /// - Throws: `.state` before the track was added or after finish, `.invalidArgument` for a
    ///   track other than 0, `.io`. An empty packet of a packetized codec is left out.
    func write(_ packet: Packet) throws {
        guard var s = stream, !done else { throw MediaError(.state, "write before addTrack or after finish", path: file.path) }
        guard packet.trackIndex == 0 else {
            throw MediaError(.invalidArgument, "track \(packet.trackIndex) was not added (a CAF file holds track 0)", path: file.path)
        }
        if s.pendingHeader != nil {
            try writeHeader(&s)
            stream = s
        }
        if let pcm = s.pcm {
            let bytes = pcm.source.convert(packet.data, to: pcm.stored)
            try file.write(bytes)
            s.dataBytes += Int64(bytes.count)
        } else {
            // An empty packet holds no audio (libavcodec's FLAC encoder ends with one carrying
            // the final STREAMINFO): a packet table has no place for it.
            guard !packet.data.isEmpty else { return }
            var length = packet.duration > 0 ? frames(ticks: packet.duration, timeBase: packet.timeBase.numerator > 0 ? packet.timeBase : s.timeBase) : 0
            // A duration no packet has (none, or beyond a 32-bit frame count): the one before.
            if length <= 0 || length > Int64(Int32.max) { length = s.lengths.last ?? defaultFrames(s.parameters) }
            length = min(Int64(Int32.max), max(1, length))
            var data = packet.data
            // An ADTS frame (from an .aac file or MPEG-TS) loses its header: the
            // AudioSpecificConfig is in the cookie (FFmpeg's aac_adtstoasc).
            if s.parameters.codecTag == "adts", let h = ADTSHeader(data) { data.removeFirst(min(data.count, h.headerSize)) }
            guard !data.isEmpty else { return }
            try file.write(data)
            s.dataBytes += Int64(data.count)
            s.sizes.append(Int64(data.count))
            s.lengths.append(length)
        }
        stream = s
    }

    /// Frames of a packet whose duration the caller did not give: the codec's usual frame.
    private func defaultFrames(_ p: CodecParameters) -> Int64 {
        switch p.codec {
        case "aac": return 1024
        case "opus": return Int64(max(1, p.sampleRate / 50))
        case "alac" where p.extradata.count >= 16:
            return Int64(CAFChunks.be32(p.extradata, 12))
        case "flac" where p.extradata.count >= 4:
            return Int64(p.extradata[0]) << 8 | Int64(p.extradata[1])
        default: return 1024
        }
    }

    /// Writes the packet table, fills in the sizes and renames the file into place.
    /// - Throws: `.state` when no track was added, `.invalidArgument` when a codec of varying
    ///   packets (AAC, ALAC, FLAC, Opus) had none, `.io`.
    func finish() throws {
        guard !done else { return }
        guard var s = stream else {
            cancel()
            throw MediaError(.state, "a CAF file needs its track before finish", path: file.path)
        }
        guard s.pcm != nil || !s.lengths.isEmpty else {
            // An empty packet table: readers (FFmpeg's) take the file for one without a table.
            cancel()
            throw MediaError(.invalidArgument, "no \(s.parameters.codec) packet was written: a CAF file of packets that vary needs at least one in its packet table",
                             path: file.path)
        }
        do {
            try writeHeader(&s)
            if s.pcm == nil {
                // Constant frames a packet when every packet but a shorter last one has the same.
                let n = s.lengths.count
                let first = s.lengths.first ?? 0
                let constant = n > 0 && first <= Int64(UInt32.max) && s.lengths.dropLast().allSatisfy { $0 == first } && (s.lengths.last ?? 0) <= first
                s.desc.framesPerPacket = constant ? UInt32(truncatingIfNeeded: first) : 0
                // Each length is 1 to 2^31 - 1 frames (write): the sums fit in 64 bits.
                let signal = s.lengths.reduce(0, +)
                let total = constant ? Int64(n) * first : signal
                var priming = max(0, min(s.priming, total))
                var valid = s.valid ?? (signal - priming - max(0, min(s.padding, total)))
                valid = max(0, min(valid, total - priming))
                var remainder = total - priming - valid
                if priming > Int64(Int32.max) || remainder > Int64(Int32.max) {
                    // Not sayable: the whole of the packets is the signal.
                    (priming, valid, remainder) = (0, total, 0)
                }
                var table = CAFChunks.PacketTableHeader(packets: Int64(n), validFrames: valid, primingFrames: Int32(truncatingIfNeeded: priming),
                                                        remainderFrames: Int32(truncatingIfNeeded: remainder)).bytes
                for (size, length) in zip(s.sizes, s.lengths) {
                    table += CAFChunks.varint(size)
                    if !constant { table += CAFChunks.varint(length) }
                }
                try file.write(CAFChunks.header("pakt", size: Int64(table.count)) + table)
            }
            try file.patch(s.desc.bytes, at: 20)
            if let cookie = s.cookie { try file.patch(cookie.bytes, at: cookie.offset) }
            try file.patch(CAFChunks.header("data", size: 4 + s.dataBytes), at: s.dataHeader)
            try file.commit()
            done = true
        } catch {
            cancel()
            throw error
        }
    }

    /// Abandons the file and removes what was written.
    func cancel() {
        done = true
        file.discard()
    }
}
