import Foundation

/// Writes Ogg files (RFC 3533): Opus (RFC 7845), Vorbis (Vorbis I specification, appendix A)
/// and FLAC (the Ogg FLAC mapping) streams, one logical stream per track, grouped (every
/// stream's first page before any data, as RFC 3533 section 4 asks). The file is written to
/// a temporary name and renamed by ``finish()`` (``OutputFile``); nothing is ever written
/// back, so a pipe works as the target too.
///
/// - Header pages: the identification header alone on the beginning-of-stream page (OpusHead,
///   Vorbis identification, the Ogg FLAC header with STREAMINFO), then the other headers
///   (OpusTags; Vorbis comment and setup from the Xiph-laced extradata; a FLAC VORBIS_COMMENT)
///   on pages of their own, so that audio data starts on a fresh page.
/// - Data pages end at 255 lacing values (a longer packet continues on the next page) or once
///   they span ``pageDuration`` seconds.
/// - Granule positions count samples at the stream's rate (48 kHz for Opus, its pre-skip
///   included): each packet lasts what its own bytes say (the Opus TOC, the Vorbis block sizes
///   from the setup header's modes, the FLAC frame header), starting where the previous one
///   ended (Opus, FLAC: ``SampleClock``, where a packet's timestamp only counts for the first
///   packet and for a gap; Vorbis: the timestamp only places the start). Packet timestamps
///   follow FFmpeg's convention: an Opus stream starts at -pre-skip, a Vorbis stream at minus
///   its first packet's duration (the packet that decodes to nothing). Vorbis positions count
///   what the block sizes complete (Vorbis I section A.2, what libvorbis writes), not FFmpeg's
///   packet durations, which differ from it at some block-size changes; its first data page
///   ends after the second packet.
/// - Gapless: the pre-skip stays in the OpusHead, and a packet's ``Packet/trimEnd`` (the Ogg
///   and Matroska demuxers set it on the last packet) lowers the last page's granule position,
///   so decoders cut the end as the source said; from an Ogg track (``addTrack(from:)``) the
///   last granule position is the source's own. A packet with an end trim must be its track's
///   last (a chained source cannot be written as one link): a later one is refused.
public final class OggMuxer: Muxer, @unchecked Sendable {
    /// The longest span of a data page, in seconds (FFmpeg's `page_duration` default).
    public static let pageDuration = 1.0
    /// Bytes of pages held back to interleave several streams in time order before the
    /// earliest is written anyway.
    static let interleaveBytes = 4 << 20

    private struct Stream {
        let codec: OggCodec
        let rate: Int
        let preSkip: Int
        var headers: [[UInt8]]
        var writer: OggPageWriter
        var clock: SampleClock
        var vorbis: VorbisDurationParser?
        /// Presentation time (seconds) and position where the current page started.
        var pageTime = 0.0, pageStart: Int64 = 0
        /// The current page spans ``pageDuration``: it ends before the next packet (never
        /// right away, so that the last packet's page is the end-of-stream page).
        var pageFull = false
        /// Vorbis: the previous packet's block size, where the first packet ends, where the next starts.
        var vorbisBlock: Int?
        var vorbisStart: Int64 = 0
        var vorbisNext: Int64?
        /// The last granule position, when known (the source's, ``addTrack(from:)``, or stated
        /// by ``setPresentedSamples(_:track:)``).
        var finalGranule: Int64?
        var packets = 0
        /// The packets written that hold bytes (empty ones carry no audio).
        var dataPackets = 0
        /// The end trim of a packet already written (it must be the last one).
        var trimmedAt: Int64?
        /// Completed pages not yet in the file, with their start times.
        var queue: [(page: OggPage, time: Double)] = []
        /// The beginning-of-stream page as written and its offset in the file (for
        /// ``OggMuxer/updateStreamInfo(_:track:)``).
        var firstPage: (page: OggPage, offset: Int64)?
    }

    /// True for a `.opus` file: Opus tracks only (RFC 7845 section 9).
    public let isOpusOnly: Bool
    private let file: OutputFile
    private var streams: [Stream] = []
    private var headerWritten = false
    private var finished = false
    private var queuedBytes = 0
    private var pendingStreamInfo: Set<Int> = []
    /// Opus tracks from an MP4 edit list (``addTrack(from:)``): the samples their packets move
    /// back, the presented end in 48 kHz samples (nil: to the end), the source's packet count,
    /// and what was written so far.
    private var opusEdits: [Int: (shift: Int64, end: Int64?, count: Int, packets: Int, samples: Int64)] = [:]
    /// Encoded Opus tracks: their pre-skip (the packets' timestamps start at 0, Ogg's at minus it).
    private var encodedOpusDelays: [Int: Int64] = [:]

    /// Creates the file (a temporary name until ``finish()``); `opusOnly` nil: true for a
    /// `.opus` file name.
    /// - Throws: `.io` when the file cannot be created.
    public init(path: String, opusOnly: Bool? = nil) throws {
        isOpusOnly = opusOnly ?? ((path as NSString).pathExtension.lowercased() == "opus")
        file = try OutputFile(path: path)
    }

    /// Adds a track: Opus (`extradata` an OpusHead), Vorbis (`extradata` the three headers,
    /// Xiph-laced, as the Ogg and Matroska demuxers give them) or FLAC (`extradata` the 34-byte
    /// STREAMINFO, or "fLaC" and the metadata blocks). `timeBase` is not used: packets carry theirs.
    /// - Throws: `.unsupported` for another codec, `.invalidArgument` for unusable extradata,
    ///   `.state` after the first packet.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        guard !headerWritten else { throw MediaError(.state, "tracks must be added before the first packet", path: file.path) }
        let index = streams.count
        let what = "track \(index) (\(parameters.codec.isUnknown ? "unknown codec" : parameters.codec.rawValue))"
        func bad(_ why: String) -> MediaError { MediaError(.invalidArgument, "\(what): \(why)", path: file.path, context: "Ogg muxer") }
        var serial = UInt32.random(in: 1...UInt32.max)
        while streams.contains(where: { $0.writer.serial == serial }) { serial = UInt32.random(in: 1...UInt32.max) }
        if isOpusOnly && parameters.codec != "opus" {
            throw MediaError(.unsupported, "a .opus file carries Opus only, \(what) is not; name the output .ogg or .oga",
                             path: file.path, context: "Ogg muxer")
        }
        let stream: Stream
        switch parameters.codec {
        case "opus":
            guard case .success(let head) = OpusHead.parse(parameters.extradata) else {
                if case .failure(let why) = OpusHead.parse(parameters.extradata) { throw bad("the extradata is not an OpusHead: \(why.reason)") }
                throw bad("the extradata is not an OpusHead")
            }
            stream = Stream(codec: .opus, rate: 48000, preSkip: head.preSkip, headers: [parameters.extradata, Self.opusTags()],
                            writer: OggPageWriter(serial: serial), clock: SampleClock(rate: 48000, offset: Int64(head.preSkip)))
        case "vorbis":
            guard let headers = xiphUnlacing(parameters.extradata), headers.count == 3 else {
                throw bad("the extradata (\(parameters.extradata.count) bytes) is not the three Vorbis headers, Xiph-laced")
            }
            var info: VorbisInfo
            switch VorbisInfo.parseIdentification(headers[0]) {
            case .success(let v): info = v
            case .failure(let why): throw bad(why.reason)
            }
            guard headers[1].starts(with: [3] + Array("vorbis".utf8)), headers[2].starts(with: [5] + Array("vorbis".utf8)) else {
                throw bad("the second and third Vorbis headers are not the comment and setup headers")
            }
            guard let modes = VorbisInfo.modes(fromSetup: headers[2]) else {
                throw bad("the Vorbis setup header's modes could not be read, so packet durations (granule positions) are unknown")
            }
            info.modeLong = modes
            stream = Stream(codec: .vorbis, rate: info.sampleRate, preSkip: 0, headers: headers, writer: OggPageWriter(serial: serial),
                            clock: SampleClock(rate: info.sampleRate), vorbis: VorbisDurationParser(info: info))
        case "flac":
            var e = parameters.extradata
            if e.starts(with: Array("fLaC".utf8)) && e.count >= 42 { e = Array(e[8..<42]) }
            guard let si = FLACStreamInfo(e), si.sampleRate > 0 else {
                throw bad("the extradata (\(parameters.extradata.count) bytes) is not a FLAC STREAMINFO with a sample rate")
            }
            stream = Stream(codec: .flac, rate: si.sampleRate, preSkip: 0, headers: Self.flacHeaders(si), writer: OggPageWriter(serial: serial),
                            clock: SampleClock(rate: si.sampleRate))
        default:
            throw MediaError(.unsupported, "Ogg cannot carry \(what) here; MediaKit writes Opus, Vorbis and FLAC into Ogg",
                             path: file.path, context: "Ogg muxer")
        }
        // Granule positions are sums of rescaled times at this rate: bounded (FLAC's own limit is
        // 2^20 - 1 Hz), so that times within MuxLimits cannot overflow them.
        guard stream.rate > 0, stream.rate <= 1 << 24 else { throw bad("a sample rate of \(stream.rate) Hz is beyond the 16 777 216 Hz MediaKit writes into Ogg") }
        streams.append(stream)
        return index
    }

    /// States how many samples track `track` presents in all (at the stream's rate: 48 kHz for
    /// Opus), for packets made by an encoder: the packet that ends past them is the last one,
    /// and its page's granule position cuts the stream there (pre-skip added for Opus), so a
    /// decoder outputs exactly `samples`. Call it before writing that last packet.
    /// - Throws: `.invalidArgument` for a track that was not added or a negative count.
    public func setPresentedSamples(_ samples: Int64, track: Int) throws {
        guard track >= 0 && track < streams.count, samples >= 0, samples <= MuxLimits.ticks else {
            throw MediaError(.invalidArgument, "track \(track) was not added, or \(samples) samples", path: file.path, context: "Ogg muxer")
        }
        streams[track].finalGranule = samples + Int64(streams[track].preSkip)
    }

    /// Adds a track copied from a demuxed ``Track``: as ``addTrack(_:timeBase:)``, and for an
    /// Ogg track (its cuts on its packets, a time base of samples) its duration, the last
    /// granule position, becomes the last page's, so the end trim is the source's exactly
    /// (FFmpeg's Vorbis packet durations, from which the demuxer measures the trim, are not
    /// always the samples the blocks complete).
    ///
    /// Ogg and Matroska state their start and end cuts on the packets (``Track/trimsOnPackets``)
    /// and are copied as they are; an MP4 Opus track's edit list becomes them: its media time
    /// is the pre-skip (written into the OpusHead when it differs from the stated one), the
    /// packets are moved back by it (FFmpeg's timestamps), and the samples after the edit's end
    /// are the last packet's end trim, so the Ogg file decodes to what the edit list presents.
    /// - Throws: `.unsupported` for an edit list that starts more than 65535 samples (an
    ///   OpusHead's pre-skip) into the media; as ``addTrack(_:timeBase:)``.
    public func addTrack(from source: Track) throws -> Int {
        var track = source
        let edit = Self.mp4OpusEdit(track)
        if let edit {
            guard edit.shift >= 0 && edit.shift <= Int64(UInt16.max) else {
                throw MediaError(.unsupported, "track \(track.index) (opus): its edit list starts \(edit.shift) samples into the media, more than an Ogg Opus pre-skip holds (65535)",
                                 path: file.path)
            }
            if case .success(let head) = OpusHead.parse(track.parameters.extradata), head.preSkip != Int(clamping: edit.shift) {
                track.parameters.extradata = OpusHead.replacingPreSkip(track.parameters.extradata, with: Int(clamping: edit.shift))
            }
        }
        let index = try addTrack(track.parameters, timeBase: track.timeBase)
        if let edit { opusEdits[index] = (edit.shift, edit.end, track.sampleCount, 0, 0) }
        let tb = track.timeBase
        if track.trimsOnPackets && track.duration > 0 && tb.numerator > 0 && tb.numerator <= Int64(Int32.max) && tb.denominator <= Int64(Int32.max)
            && SampleClock.countsSamples(tb, rate: Int64(streams[index].rate)) {
            streams[index].finalGranule = try MuxLimits.rescale(track.duration, from: tb, to: Rational(1, Int64(streams[index].rate)), track: index,
                                                                "the duration", path: file.path, context: "Ogg muxer")
        }
        return index
    }

    /// The cuts of an MP4 Opus track's edit list (``PresentationWindow``, the one reading of
    /// edit lists) in 48 kHz samples: the first presented sample (the pre-skip) and the end,
    /// nil when the edit runs to the media's end. Nil for a track without an edit list or
    /// whose cuts are on its packets.
    static func mp4OpusEdit(_ track: Track) -> (shift: Int64, end: Int64?)? {
        guard track.parameters.codec == "opus", !track.trimsOnPackets, !track.editList.isEmpty else { return nil }
        let window = PresentationWindow(track: track)
        guard window != .everything, window.start >= 0 else { return nil }
        let samples = Rational(1, 48000)
        return (Rational.rescale(window.start, from: track.timeBase, to: samples),
                window.end.map { Rational.rescale($0, from: track.timeBase, to: samples) })
    }

    /// Adds a track an encoder writes: for Opus, whose packets' timestamps then start at 0,
    /// they are moved back by the pre-skip (Ogg's convention, FFmpeg's: an Opus stream's
    /// timestamps start at minus the pre-skip). - Throws: as ``addTrack(_:timeBase:)``.
    public func addEncodedTrack(_ parameters: CodecParameters, timeBase: Rational, encoderDelay: Int) throws -> Int {
        let index = try addTrack(parameters, timeBase: timeBase)
        if parameters.codec == "opus" { encodedOpusDelays[index] = Int64(encoderDelay) }
        return index
    }

    /// Cuts an encoded track at its signal's end: the last page's granule position
    /// (``setPresentedSamples(_:track:)``). `presentedDuration` is in samples at the track's rate.
    public func setGapless(track: Int, presentedDuration: Int64, padding: Int64) throws {
        try setPresentedSamples(presentedDuration, track: track)
    }

    /// Takes a FLAC track's final STREAMINFO (``updateStreamInfo(_:track:)``); other codecs
    /// keep their first headers.
    public func updateParameters(_ parameters: CodecParameters, track: Int) throws {
        guard track >= 0 && track < streams.count, streams[track].codec == .flac else { return }
        try updateStreamInfo(parameters.extradata, track: track)
    }

    /// Replaces a FLAC track's STREAMINFO with the encoder's final one (total samples, MD5),
    /// as ``FLACWriter/finish(streamInfo:)`` does for a .flac file: FFmpeg's Ogg muxer leaves the
    /// first one (total samples 0, "unknown"), which players then cannot seek or time by. The
    /// header page keeps its size; it is rewritten in place, with its CRC, by ``finish()``
    /// (before the file is renamed), or left as first written when the output is a pipe.
    /// - Throws: `.invalidArgument` for a track that is not FLAC or bytes that are not a
    ///   STREAMINFO with the same rate and channels, `.state` after ``finish()``.
    public func updateStreamInfo(_ streamInfo: [UInt8], track: Int) throws {
        guard !finished else { throw MediaError(.state, "updateStreamInfo after finish", path: file.path) }
        guard track >= 0 && track < streams.count, streams[track].codec == .flac else {
            throw MediaError(.invalidArgument, "track \(track) is not a FLAC track", path: file.path, context: "Ogg muxer")
        }
        var e = streamInfo
        if e.starts(with: Array("fLaC".utf8)) && e.count >= 42 { e = Array(e[8..<42]) }
        guard let new = FLACStreamInfo(e), new.sampleRate == streams[track].rate else {
            throw MediaError(.invalidArgument, "track \(track): \(streamInfo.count) bytes are not a STREAMINFO at \(streams[track].rate) Hz",
                             path: file.path, context: "Ogg muxer")
        }
        streams[track].headers[0] = Self.flacHeaders(new)[0]
        pendingStreamInfo.insert(track)
    }

    /// Writes the tags into each stream's comment header (OpusTags, the Vorbis comment header,
    /// Ogg FLAC's VORBIS_COMMENT block), as FFmpeg's ogg muxer does: the container's tags, then
    /// the stream's own that the container's do not have, then the chapters (CHAPTERnnn
    /// fields) and, in the first stream's, the pictures as METADATA_BLOCK_PICTURE fields. A
    /// Vorbis header keeps its vendor string; the others name MediaKit. Nothing given leaves
    /// the headers as they are. - Throws: `.state` after the first packet.
    public func setMetadata(_ metadata: MuxMetadata) throws {
        guard !metadata.isEmpty else { return }
        guard !headerWritten else { throw MediaError(.state, "metadata must be given before the first packet", path: file.path, context: "Ogg muxer") }
        for i in streams.indices {
            let tags = metadata.combined(track: i, withTrackFields: true)
            let pictures = i == 0 ? metadata.pictures : []
            guard !tags.isEmpty || !pictures.isEmpty || !metadata.chapters.isEmpty, streams[i].headers.count >= 2 else { continue }
            switch streams[i].codec {
            case .opus:
                streams[i].headers[1] = Array("OpusTags".utf8)
                    + MetadataWriting.vorbisComment(vendor: "MediaKit", tags: tags, chapters: metadata.chapters, pictures: pictures)
            case .vorbis:
                let vendor = VorbisComment.fields(Array(streams[i].headers[1].dropFirst(7))).vendor
                streams[i].headers[1] = [3] + Array("vorbis".utf8)
                    + MetadataWriting.vorbisComment(vendor: vendor, tags: tags, chapters: metadata.chapters, pictures: pictures) + [1]
            case .flac:
                let c = MetadataWriting.vorbisComment(vendor: "MediaKit", tags: tags, chapters: metadata.chapters, pictures: pictures)
                guard c.count < 1 << 24 else {
                    throw MediaError(.invalidArgument, "track \(i): a VORBIS_COMMENT block of \(c.count) bytes is over FLAC's 16 MiB", path: file.path, context: "Ogg muxer")
                }
                streams[i].headers[1] = [0x84, UInt8(truncatingIfNeeded: c.count >> 16), UInt8(truncatingIfNeeded: c.count >> 8), UInt8(truncatingIfNeeded: c.count)] + c
            default:
                continue
            }
        }
    }

    /// Rewrites the beginning-of-stream page of each track given a new STREAMINFO.
    private func patchFirstPages() throws {
        for i in pendingStreamInfo.sorted() {
            guard let first = streams[i].firstPage, first.page.body.count == streams[i].headers[0].count else { continue }
            var page = first.page   // same layout, same size: only the STREAMINFO bytes differ
            page.body = streams[i].headers[0]
            try file.patch(page.serialized(), at: first.offset)
        }
        pendingStreamInfo.removeAll()
    }

    /// An OpusTags header (RFC 7845 section 5.2) with MediaKit as the vendor and no comments.
    static func opusTags() -> [UInt8] {
        Array("OpusTags".utf8) + vorbisCommentBody()
    }

    /// A Vorbis comment body: the vendor string ("MediaKit") and no user comments.
    static func vorbisCommentBody() -> [UInt8] {
        let vendor = Array("MediaKit".utf8)
        return le32(vendor.count) + vendor + le32(0)
    }

    static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// The Ogg FLAC mapping's headers: 0x7F "FLAC", version 1.0, one more header packet, "fLaC"
    /// and STREAMINFO; then a VORBIS_COMMENT metadata block flagged last.
    static func flacHeaders(_ si: FLACStreamInfo) -> [[UInt8]] {
        let first = [0x7F] + Array("FLAC".utf8) + [1, 0, 0, 1] + Array("fLaC".utf8) + [0, 0, 0, 34] + si.bytes
        let comment = vorbisCommentBody()
        let second = [0x84, UInt8(truncatingIfNeeded: comment.count >> 16), UInt8(truncatingIfNeeded: (comment.count >> 8) & 0xFF), UInt8(truncatingIfNeeded: comment.count & 0xFF)] + comment
        return [first, second]
    }

    private func writeHeader() throws {
        headerWritten = true
        // Every stream's beginning-of-stream page first, then the other headers.
        for i in streams.indices {
            streams[i].writer.append(streams[i].headers[0], granule: 0)
            streams[i].writer.endPage()
            for page in streams[i].writer.takePages() {
                if streams[i].firstPage == nil { streams[i].firstPage = (page, file.bytesWritten) }
                try file.write(page.serialized())
            }
        }
        // Held in the queues (before any data page): a stream without packets flags its last
        // header page end-of-stream at ``finish()``.
        for i in streams.indices {
            for h in streams[i].headers.dropFirst() { streams[i].writer.append(h, granule: 0) }
            streams[i].writer.endPage()
            for page in streams[i].writer.takePages() {
                streams[i].queue.append((page, -.infinity))
                queuedBytes += page.body.count + page.segments.count + 27
            }
        }
    }

    /// Writes one packet.
    /// - Throws: `.invalidArgument` for a track that was not added or a packet whose duration
    ///   cannot be read from its bytes, `.unsupported` for a packet after one with an end trim
    ///   or a Vorbis header packet among the audio (a chained Ogg source), `.state` after
    ///   ``finish()``, `.io`.
    public func write(_ packet: Packet) throws {
        guard !finished else { throw MediaError(.state, "write after finish", path: file.path) }
        let t = packet.trackIndex
        guard t >= 0 && t < streams.count else {
            throw MediaError(.invalidArgument, "track \(t) was not added", path: file.path, context: "Ogg muxer")
        }
        // Timestamps and trims within MuxLimits, times at the stream's rate within 2^60: the
        // granule arithmetic below cannot overflow (checked as given, and as moved below).
        func check(_ packet: Packet) throws {
            try MuxLimits.check(packet, track: t, path: file.path, context: "Ogg muxer")
            if packet.pts != Packet.noTimestamp {
                _ = try MuxLimits.rescale(packet.pts, from: packet.timeBase, to: Rational(1, Int64(streams[t].rate)), track: t, "pts",
                                          path: file.path, context: "Ogg muxer")
            }
        }
        try check(packet)
        if !headerWritten { try writeHeader() }
        var packet = packet
        /// `packet`'s pts moved back by `ticks`, or an error when that leaves 64 bits.
        func movedBack(_ ticks: Int64) throws -> Int64 {
            let (pts, overflow) = packet.pts.subtractingReportingOverflow(ticks)
            guard !overflow else {
                throw MediaError(.invalidArgument, "track \(t): pts \(packet.pts) moved back by \(ticks) leaves 64 bits", path: file.path, context: "Ogg muxer")
            }
            return pts
        }
        if let delay = encodedOpusDelays[t], packet.pts != Packet.noTimestamp {
            packet.pts = try movedBack(delay)
            packet.dts = packet.pts
        }
        if var edit = opusEdits[t] {
            edit.packets += 1
            edit.samples += Int64(OpusHead.packetDuration(packet.data[...]) ?? 0)
            opusEdits[t] = edit
            if packet.pts != Packet.noTimestamp {
                packet.pts = try movedBack(Rational.rescale(edit.shift, from: Rational(1, 48000), to: packet.timeBase))
            }
            packet.dts = packet.pts
            if edit.packets == edit.count, let end = edit.end, edit.samples > end {
                packet.trimEnd = Int(clamping: edit.samples - end)
            }
        }
        if encodedOpusDelays[t] != nil || opusEdits[t] != nil { try check(packet) }
        var s = streams[t]
        defer { streams[t] = s }
        let context = "Ogg muxer, track \(t), packet \(s.packets)"
        if s.trimmedAt != nil {
            throw MediaError(.unsupported, "a packet follows one whose end was trimmed (the end of a chained link?); MediaKit writes one Ogg link per track",
                             path: file.path, context: context)
        }
        let samples: Int
        /// The packet's duration as FFmpeg's parsers give it (the demuxers' end trims count from it).
        let parsedDuration: Int
        switch s.codec {
        case .opus:
            guard let d = OpusHead.packetDuration(packet.data[...]) else {
                throw MediaError(.invalidArgument, "an Opus packet of \(packet.data.count) bytes has no valid TOC, so its duration is unknown", path: file.path, context: context)
            }
            if packet.trimStart > 0 && s.packets > 0 {
                throw MediaError(.unsupported, "a packet in the middle of the stream has a start trim of \(packet.trimStart) samples (a chained link's pre-skip?); MediaKit writes one Ogg link per track",
                                 path: file.path, context: context)
            }
            samples = d
            parsedDuration = d
        case .vorbis:
            if let b = packet.data.first, b & 1 == 1 {
                throw MediaError(.unsupported, "a Vorbis header packet (type \(b)) among the audio packets (a chained link?); MediaKit writes one Ogg link per track",
                                 path: file.path, context: context)
            }
            if let b = packet.data.first, let info = s.vorbis?.info {
                guard let block = info.blockSize(firstByte: b) else {
                    throw MediaError(.invalidArgument, "a Vorbis packet of \(packet.data.count) bytes names no mode of the setup header, so its duration is unknown", path: file.path, context: context)
                }
                if s.packets == 0 { s.vorbisStart = vorbisStart(packet, info: info) }
                // Vorbis I section 4.3.8 / A.2: a packet completes the samples from the centre of
                // the previous block to the centre of its own; the first completes none.
                samples = s.vorbisBlock.map { ($0 + block) / 4 } ?? 0
                s.vorbisBlock = block
                parsedDuration = s.vorbis?.duration(firstByte: b) ?? 0
            } else {
                samples = 0   // an empty packet: no audio
                parsedDuration = 0
            }
        case .flac:
            if packet.data.isEmpty {
                samples = 0
            } else {
                guard let d = FlacInfo.frameDuration(packet.data[...]) else {
                    throw MediaError(.invalidArgument, "a FLAC packet of \(packet.data.count) bytes does not start with a frame header", path: file.path, context: context)
                }
                samples = d
            }
            parsedDuration = samples
        case .theora, .speex, .unknown:
            return
        }
        let at: Int64
        if s.codec == .vorbis {
            // Positions count the samples the blocks complete: the container's timestamps
            // (FFmpeg's, from its own packet durations) only place the stream's start.
            at = s.vorbisNext ?? s.vorbisStart
            s.vorbisNext = at + Int64(samples)
        } else {
            at = s.clock.place(pts: packet.pts, timeBase: packet.timeBase, samples: Int64(samples))
        }
        let end = at + Int64(samples)
        var granule = end
        // A packet that ends past the track's stated length (``setPresentedSamples(_:track:)``)
        // is its last one and carries the end trim, stated or not.
        if packet.trimEnd > 0 || s.finalGranule.map({ $0 < end }) == true {
            granule = end - Int64(packet.trimEnd)
            // In a time base of whole samples the trimmed end is where the demuxer measured
            // the trim from: the packet's time plus its parsed duration, less the trim. That is
            // the source's own last granule position (as FFmpeg's Ogg muxer writes it) even
            // where FFmpeg's Vorbis timestamps are off from the block sizes' count.
            if packet.pts != Packet.noTimestamp, SampleClock.countsSamples(packet.timeBase, rate: Int64(s.rate)) {
                granule = Rational.rescale(packet.pts, from: packet.timeBase, to: Rational(1, Int64(s.rate))) + Int64(s.preSkip)
                    + Int64(parsedDuration) - Int64(packet.trimEnd)
            }
            if let g = s.finalGranule, g <= end { granule = g }
            s.trimmedAt = granule
        }
        let time = Double(at - Int64(s.preSkip)) / Double(s.rate)
        if s.pageFull {
            s.writer.endPage()
            s.pageFull = false
            enqueue(&s, newPageTime: time, newPageStart: at)
        }
        if s.writer.pageIsEmpty {
            s.pageTime = time
            s.pageStart = at
        }
        s.writer.append(packet.data, granule: granule)
        s.packets += 1
        if !packet.data.isEmpty { s.dataPackets += 1 }
        if end - s.pageStart >= Int64(Self.pageDuration * Double(s.rate)) { s.pageFull = true }
        // Vorbis: the first data page ends after the second packet (the first to complete
        // samples), so that it is not the end-of-stream page even in a short file: FFmpeg
        // times a stream's first packets from its first page's granule position only then,
        // and otherwise misplaces the end trim.
        if s.codec == .vorbis && s.packets == 2 { s.pageFull = true }
        enqueue(&s, newPageTime: time, newPageStart: at)
        streams[t] = s
        try drain(all: false)
        s = streams[t]
    }

    /// Where a Vorbis stream's first packet ends (it completes no samples): 0, unless the
    /// packet's timestamp says the stream starts later by more than a long block's half (the
    /// margin of FFmpeg's first timestamp, which it derives from its own packet durations).
    private func vorbisStart(_ packet: Packet, info: VorbisInfo) -> Int64 {
        guard packet.pts != Packet.noTimestamp, let b = packet.data.first else { return 0 }
        var parser = VorbisDurationParser(info: info)
        let first = Int64(parser.duration(firstByte: b) ?? 0)
        let end = Rational.rescale(packet.pts, from: packet.timeBase, to: Rational(1, Int64(info.sampleRate))) + first
        return end > Int64(info.blocksize.1 / 2) ? end : 0
    }

    /// Moves the stream's completed pages to its queue: the first keeps the current page's
    /// start; pages started inside the packet just written start with it.
    private func enqueue(_ s: inout Stream, newPageTime: Double, newPageStart: Int64) {
        for page in s.writer.takePages() {
            s.queue.append((page, s.pageTime))
            queuedBytes += page.body.count + page.segments.count + 27
            s.pageTime = newPageTime
            s.pageStart = newPageStart
        }
    }

    /// Writes queued pages in time order: while every stream has one queued (or, with `all`,
    /// until none is left), or while more than ``interleaveBytes`` are held.
    private func drain(all: Bool) throws {
        while true {
            let ready = streams.indices.filter { !streams[$0].queue.isEmpty }
            guard let i = ready.min(by: { streams[$0].queue[0].time < streams[$1].queue[0].time }) else { return }
            if !all && ready.count < streams.count && queuedBytes < Self.interleaveBytes { return }
            let page = streams[i].queue.removeFirst().page
            queuedBytes -= page.body.count + page.segments.count + 27
            try file.write(page.serialized())
        }
    }

    /// Writes every stream's last page (flagged end-of-stream; its granule position carries
    /// the end trim) and renames the file into place. - Throws: `.invalidArgument` when a track
    /// has no packet, or only empty ones (no audio data: readers refuse the file), `.io`; the file is then removed.
    public func finish() throws {
        guard !finished else { return }
        do {
            // A stream of header pages only, or of empty packets only, is not a file readers
            // open (FFmpeg 5.1 refuses the one its own muxer writes; ffprobe ends with "End of
            // file" on empty FLAC packets: fuzz-mux's finding ogg-two-tracks-ffprobe-eof):
            // refused rather than left for them to fail on.
            if let empty = streams.indices.first(where: { streams[$0].dataPackets == 0 }) {
                let what = streams[empty].packets == 0 ? "no packet" : "only empty packets"
                throw MediaError(.invalidArgument, "track \(empty) has \(what): an Ogg stream without audio data cannot be read",
                                 path: file.path, context: "Ogg muxer")
            }
            if !headerWritten { try writeHeader() }
            for i in streams.indices {
                var s = streams[i]
                if s.packets == 0 && !s.queue.isEmpty {
                    s.queue[s.queue.count - 1].page.flags.insert(.end)
                } else {
                    s.writer.finish()
                    enqueue(&s, newPageTime: s.pageTime, newPageStart: s.pageStart)
                }
                streams[i] = s
            }
            try drain(all: true)
            try patchFirstPages()
            finished = true
            try file.commit()
        } catch {
            cancel()
            throw error
        }
    }

    /// Abandons the file and removes what was written.
    public func cancel() {
        finished = true
        file.discard()
    }
}

extension MuxerFormat {
    /// Ogg (``OggMuxer``): Opus, Vorbis and FLAC.
    public static let ogg = MuxerFormat(
        name: "ogg", description: "Ogg", extensions: ["ogg", "oga"], mimeTypes: ["audio/ogg", "application/ogg"],
        codecs: ["flac", "opus", "vorbis"], defaultAudioCodec: "vorbis", make: { path, _ in try OggMuxer(path: path, opusOnly: false) })
    /// Ogg Opus files (``OggMuxer``, `.opus`): Opus tracks only (RFC 7845 section 9).
    public static let opus = MuxerFormat(
        name: "opus", description: "Ogg Opus", extensions: ["opus"], mimeTypes: ["audio/opus"],
        codecs: ["opus"], defaultAudioCodec: "opus", make: { path, _ in try OggMuxer(path: path, opusOnly: true) })
}
