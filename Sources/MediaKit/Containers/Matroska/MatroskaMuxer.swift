import Foundation

/// Writes Matroska and WebM files (RFC 9559): SimpleBlocks in Clusters that start at video
/// key frames (or every 5 seconds), Cues for the Clusters' key frames, a SeekHead, and the
/// Segment size and Duration patched in place at the end. The file is written to a temporary
/// name and renamed by ``finish()`` (``OutputFile``).
///
/// Timestamps are written in milliseconds (TimecodeScale 1 000 000). Opus gets CodecDelay
/// (its pre-skip) and SeekPreRoll (80 ms) and packets with an end trim a BlockGroup with
/// DiscardPadding, so a gapless Opus stream stays gapless. WebM takes VP8, VP9, AV1, Opus
/// and Vorbis only.
///
/// Live mode, when the target is a pipe or a device (``OutputFile/isStream``): nothing is
/// written back: the Segment keeps its unknown size, Info has no Duration and there are no
/// Cues (what FFmpeg's `-live 1` WebM writes); each Cluster is written whole, with its size.
public final class MatroskaMuxer: Muxer, @unchecked Sendable {
    /// True for WebM (DocType "webm", its codecs only).
    public let isWebM: Bool
    private let file: OutputFile
    /// The tracks added, with their CodecID, Opus pre-skip and Language element.
    /// `annexB`: an H.264 / HEVC track given in Annex B form (``AnnexBConversion``), its
    /// packets length-prefixed; its extradata (the avcC / hvcC) empty until its first packet
    /// when it was given none.
    private var tracks: [(params: CodecParameters, timeBase: Rational, codecID: String, delay: Int64, language: String, annexB: Bool,
                          isDefault: Bool, isForced: Bool)] = []
    /// Text subtitle tracks converted on the way in (``addTrack(from:)``).
    private var converters: [Int: SubtitleConverter] = [:]
    private var headerWritten = false
    private var finished = false
    private var segmentData: Int64 = 0
    private var seekHeadAt: Int64 = 0
    private var durationAt: Int64 = 0
    private var infoAt: Int64 = 0, tracksAt: Int64 = 0
    private var cluster: [UInt8] = []
    private var clusterTime: Int64 = 0
    private var clusterOffset: Int64 = 0
    private var cues: [(time: Int64, track: Int, cluster: Int64)] = []
    private var cuedThisCluster = Set<Int>()
    /// End trims of encoded Opus tracks, for their next (last) packet (``setGapless(track:presentedDuration:padding:)``).
    private var pendingTrimEnd: [Int: Int] = [:]
    private var endTime: Int64 = 0
    private static let seekHeadRoom = 96
    /// Room for a SeekHead that also lists Chapters, Attachments and Tags.
    private static let seekHeadRoomWithMetadata = 192
    /// Tags, chapters and attachments (``setMetadata(_:)``), written with the header.
    private var metadata = MuxMetadata()
    /// Where Chapters, Attachments and Tags start (Segment-relative), for the SeekHead.
    private var metadataAt: [(id: UInt32, at: Int64)] = []
    private var seekRoom: Int { metadata.isEmpty ? Self.seekHeadRoom : Self.seekHeadRoomWithMetadata }

    /// Creates the file (a temporary name until ``finish()``); `webM` nil: from the extension.
    /// - Throws: `.io` when the file cannot be created.
    public init(path: String, webM: Bool? = nil) throws {
        isWebM = webM ?? ((path as NSString).pathExtension.lowercased() == "webm")
        file = try OutputFile(path: path)
    }

    /// Matroska's CodecID for each codec MediaKit writes into it.
    static let codecIDs: [String: String] = ["vp8": "V_VP8", "vp9": "V_VP9", "av1": "V_AV1", "opus": "A_OPUS", "vorbis": "A_VORBIS",
                                             "h264": "V_MPEG4/ISO/AVC", "hevc": "V_MPEGH/ISO/HEVC", "aac": "A_AAC", "flac": "A_FLAC",
                                             "mp3": "A_MPEG/L3", "ac3": "A_AC3", "eac3": "A_EAC3", "pcm_s16le": "A_PCM/INT/LIT",
                                             "mp2": "A_MPEG/L2", "dts": "A_DTS", "alac": "A_ALAC", "mpeg1video": "V_MPEG1", "mpeg2video": "V_MPEG2",
                                             // AAC in LATM (LOAS frames), as FFmpeg writes it: a WAVEFORMATEX of tag
                                             // 0x1602 for CodecPrivate (its extradata the AudioSpecificConfig).
                                             "aac_latm": "A_MS/ACM",
                                             "subrip": "S_TEXT/UTF8", "ass": "S_TEXT/ASS", "ssa": "S_TEXT/SSA",
                                             // FFmpeg 5.1 writes WebVTT as WebM's D_WEBVTT/SUBTITLES in Matroska too
                                             // (and cannot read S_TEXT/WEBVTT).
                                             "webvtt": "D_WEBVTT/SUBTITLES",
                                             // Bitmap subtitles, copied as packets: PGS, DVB (CodecPrivate: the
                                             // subtitling descriptor's pages), DVD (CodecPrivate: the .idx text).
                                             "hdmv_pgs_subtitle": "S_HDMV/PGS", "dvb_subtitle": "S_DVBSUB", "dvd_subtitle": "S_VOBSUB"]
    /// The WAV format tags of the codecs written as `A_MS/ACM` (FFmpeg's RIFF table).
    static let acmTags: [String: Int] = ["aac_latm": 0x1602]
    /// The codecs MediaKit writes into Matroska.
    public static let matroskaCodecs = codecIDs.keys.sorted().map { CodecID(rawValue: $0) }
    /// The codecs WebM takes.
    public static let webMCodecs: [CodecID] = ["av1", "opus", "vorbis", "vp8", "vp9", "webvtt"]
    /// Text subtitle codecs Matroska holds the content of, converted (``SubtitleConverter``):
    /// 3GPP timed text and plain text become SubRip (`S_TEXT/UTF8`).
    public static let matroskaConverted: [CodecID] = ["mov_text", "text"]
    /// Text subtitle codecs WebM holds the content of, converted to WebVTT as ffmpeg's webm
    /// muxer takes them (its default subtitle codec): SubRip, ASS / SSA, timed text, plain text.
    public static let webMConverted: [CodecID] = ["ass", "mov_text", "ssa", "subrip", "text"]

    /// Adds a track. An ADTS AAC track (codec tag "adts") is written as raw AAC (each frame
    /// loses its header; the AudioSpecificConfig is in the parameters, as FFmpeg's
    /// aac_adtstoasc does), an AV1 track's temporal units without the OBUs Matroska blocks do
    /// not hold (temporal delimiters, padding, tile lists, redundant frame headers). An H.264
    /// or HEVC track in Annex B form (extradata empty or starting with a start code) gets the
    /// avcC / hvcC CodecPrivate built from its parameter sets (from its first packet when the
    /// extradata is empty) and its packets' NAL units length-prefixed in 4 bytes, as FFmpeg's
    /// matroska muxer stores such a stream (``AnnexBConversion``).
    /// - Throws: `.unsupported` for a codec Matroska (or WebM) does not carry
    /// here, `.state` after the first packet, `.invalidData` for Annex B parameter sets that
    /// do not make a configuration record.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        guard !headerWritten else { throw MediaError(.state, "tracks must be added before the first packet", path: file.path) }
        let ids = Self.codecIDs
        let webmCodecs = Set(Self.webMCodecs.map(\.rawValue))
        guard let id = ids[parameters.codec.rawValue], !isWebM || webmCodecs.contains(parameters.codec.rawValue) else {
            let allowed = isWebM ? webmCodecs.sorted() : ids.keys.sorted()
            throw MediaError(.unsupported, "\(isWebM ? "WebM" : "Matroska") cannot carry \(parameters.codec.isUnknown ? "this codec" : parameters.codec.rawValue) here; MediaKit writes \(allowed.joined(separator: ", "))", path: file.path)
        }
        // Written as EBML unsigned integers: a negative size is the caller's error, not a trap.
        guard parameters.width >= 0, parameters.height >= 0, parameters.channels >= 0, parameters.sampleRate >= 0 else {
            throw MediaError(.invalidArgument, "track \(tracks.count): the size \(parameters.width)x\(parameters.height), \(parameters.sampleRate) Hz or \(parameters.channels) channels is negative", path: file.path)
        }
        var delay: Int64 = 0
        if parameters.codec == "opus", case .success(let h) = OpusHead.parse(parameters.extradata) { delay = Int64(h.preSkip) }
        var parameters = parameters
        let annexB = AnnexBConversion.applies(to: parameters)
        if annexB && !parameters.extradata.isEmpty {
            do {
                parameters.extradata = try AnnexBConversion.record(codec: parameters.codec, extradata: parameters.extradata, completeness: false, track: tracks.count)
            } catch let e as MediaError { throw e.at(path: file.path) }
        }
        tracks.append((parameters, timeBase, id, delay, "und", annexB, true, false))
        return tracks.count - 1
    }

    /// Adds a track copied from a demuxed ``Track``: its codec parameters, time base,
    /// language (the Language element, ISO 639-2; "und" for a language that is not three
    /// letters, as BCP 47 tags are not written here) and marks (``Track/isDefault`` as
    /// FlagDefault, ``Track/isForced`` as FlagForced, as FFmpeg's muxer writes them). A text
    /// subtitle track whose codec the file does not carry is converted (``SubtitleConverter``),
    /// as ffmpeg's `-c:s srt` / `-c:s webvtt` converts it: `mov_text` and `text` (and MP4's
    /// boxed WebVTT) into Matroska as SubRip, every text codec but WebVTT into WebM as WebVTT.
    /// SubRip, ASS / SSA (its header the CodecPrivate) and WebVTT are copied, and so are the
    /// bitmap subtitles PGS (`S_HDMV/PGS`), DVB (`S_DVBSUB`) and DVD (`S_VOBSUB`), their
    /// extradata the CodecPrivate.
    /// - Throws: as ``addTrack(_:timeBase:)`` (WebM refuses bitmap subtitles, as FFmpeg's webm
    ///   muxer does).
    public func addTrack(from track: Track) throws -> Int {
        var source = track.parameters
        var converter: SubtitleConverter?
        if source.mediaType == .subtitle, let target = subtitleTarget(source) {
            do { converter = try SubtitleConverter(from: source, to: target, track: track.index) } catch let e as MediaError { throw e.at(path: file.path) }
            source = converter?.parameters ?? source
        }
        let index = try addTrack(source, timeBase: track.timeBase)
        if let converter { converters[index] = converter }
        let code = track.language.lowercased()
        if code.count == 3 && code.allSatisfy({ ("a"..."z").contains($0) }) { tracks[index].language = code }
        tracks[index].isDefault = track.isDefault
        tracks[index].isForced = track.isForced
        return index
    }

    /// The codec a text subtitle of `p` is converted to here, nil when it is copied (or is not
    /// text: ``addTrack(_:timeBase:)`` then refuses it).
    private func subtitleTarget(_ p: CodecParameters) -> CodecID? {
        guard SubtitleDecoder.decodes(p.codec) else { return nil }
        let boxed = p.codec == "webvtt" && p.codecTag == "wvtt"
        if isWebM { return p.codec == "webvtt" && !boxed ? nil : "webvtt" }
        if boxed { return "webvtt" }
        return Self.matroskaConverted.contains(p.codec) ? "subrip" : nil
    }

    /// True for an H.264 / HEVC track with no extradata: its CodecPrivate is built from the
    /// parameter sets of its first packet, before the header is written.
    public func needsFirstPacket(_ track: Track) -> Bool {
        (track.parameters.codec == "h264" || track.parameters.codec == "hevc") && track.parameters.extradata.isEmpty
            && track.parameters.sampleEntry.isEmpty
    }

    /// ``addTrack(from:)``, an H.264 / HEVC track with no extradata taking its parameter sets
    /// from `firstPacket` (an Annex B stream with them in-band, as MPEG-TS carries it).
    /// - Throws: as ``addTrack(_:timeBase:)``; `.invalidArgument` when that packet has none.
    public func addTrack(from track: Track, firstPacket: [UInt8]?) throws -> Int {
        var t = track
        if needsFirstPacket(track), let firstPacket {
            do { t.parameters.extradata = try AnnexBConversion.parameterSets(codec: t.parameters.codec, firstPacket: firstPacket, track: tracks.count) }
            catch let e as MediaError { throw e.at(path: file.path) }
        }
        return try addTrack(from: t)
    }

    /// Cuts an encoded Opus track's end padding: the next packet written to it (its last)
    /// gets `padding` (48 kHz samples) as its end trim, a DiscardPadding. Other codecs have
    /// no way to state it here, as FFmpeg's muxer writes them.
    public func setGapless(track: Int, presentedDuration: Int64, padding: Int64) throws {
        guard track >= 0 && track < tracks.count else {
            throw MediaError(.invalidArgument, "track \(track) was not added", path: file.path)
        }
        if tracks[track].params.codec == "opus" { pendingTrimEnd[track] = Int(clamping: padding) }
    }

    /// Keeps the tags, chapters and attachments to write with the header: the container's
    /// title as Info's Title, each track's title and language as its Name and Language, the
    /// other tags as Tags (TargetTypeValue 50 for the container's, TagTrackUID for a track's),
    /// the chapters as one edition, the attachments as AttachedFiles
    /// (``MatroskaMetadataWriter``). - Throws: `.state` after the first packet.
    public func setMetadata(_ metadata: MuxMetadata) throws {
        guard !headerWritten else { throw MediaError(.state, "metadata must be given before the first packet", path: file.path) }
        self.metadata = metadata
        for (i, t) in metadata.trackTags where i >= 0 && i < tracks.count {
            if let code = t.first(where: { $0.ffmpegKey.lowercased() == "language" })?.value.lowercased(),
               code.count == 3, code.allSatisfy({ ("a"..."z").contains($0) }) {
                tracks[i].language = code
            }
        }
    }

    // MARK: - EBML writing

    static func vint(_ v: Int64, width: Int = 0) -> [UInt8] {
        let n = width > 0 ? width : (1...8).first { v < (Int64(1) << (7 * $0)) - 1 } ?? 8
        var out = [UInt8](repeating: 0, count: n)
        for i in 0..<n { out[n - 1 - i] = UInt8(truncatingIfNeeded: v >> (8 * i)) }
        out[0] |= UInt8(0x80 >> (n - 1))
        return out
    }

    static func element(_ id: UInt32, _ body: [UInt8]) -> [UInt8] {
        idBytes(id) + vint(Int64(body.count)) + body
    }

    static func idBytes(_ id: UInt32) -> [UInt8] {
        Array(withUnsafeBytes(of: id.bigEndian) { Array($0) }.drop { $0 == 0 })
    }

    static func uint(_ id: UInt32, _ v: UInt64) -> [UInt8] {
        let b = withUnsafeBytes(of: v.bigEndian) { Array($0) }.drop { $0 == 0 }
        return element(id, b.isEmpty ? [0] : Array(b))
    }

    static func float(_ id: UInt32, _ v: Double) -> [UInt8] {
        element(id, withUnsafeBytes(of: v.bitPattern.bigEndian) { Array($0) })
    }

    static func string(_ id: UInt32, _ s: String) -> [UInt8] { element(id, Array(s.utf8)) }

    private func writeHeader() throws {
        if let i = tracks.firstIndex(where: { $0.annexB && $0.params.extradata.isEmpty }) {
            throw MediaError(.invalidArgument, "track \(i) (\(tracks[i].params.codec)): no extradata, and the header (its CodecPrivate) is written at the first packet of any track, before this track's parameter sets; give them in extradata or write its first packet first", path: file.path)
        }
        headerWritten = true
        let ebml = Self.element(MKVID.ebml, Self.uint(0x4286, 1) + Self.uint(0x42F7, 1) + Self.uint(0x42F2, 4) + Self.uint(0x42F3, 8)
            + Self.string(MKVID.docType, isWebM ? "webm" : "matroska") + Self.uint(MKVID.docTypeVersion, 4) + Self.uint(0x4285, 2))
        try file.write(ebml)
        // Segment with an 8-byte size, patched at the end.
        try file.write(Self.idBytes(MKVID.segment) + [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        segmentData = file.bytesWritten
        // Room for the SeekHead, written at the end.
        seekHeadAt = file.bytesWritten
        try file.write(Self.voidElement(seekRoom))
        infoAt = file.bytesWritten - segmentData
        let title = metadata.tags.first { $0.ffmpegKey.lowercased() == "title" && !$0.value.isEmpty }.map { Self.string(MKVID.title, $0.value) } ?? []
        let info = Self.uint(MKVID.timecodeScale, 1_000_000) + title + Self.string(MKVID.muxingApp, "MediaKit")
            + Self.string(MKVID.writingApp, "MediaKit") + (file.isStream ? [] : Self.float(MKVID.duration, 0))
        let infoElement = Self.element(MKVID.info, info)
        durationAt = file.bytesWritten + Int64(infoElement.count - 8)
        try file.write(infoElement)
        tracksAt = file.bytesWritten - segmentData
        var entries: [UInt8] = []
        for (i, t) in tracks.enumerated() {
            let p = t.params
            var e = Self.uint(MKVID.trackNumber, UInt64(i + 1)) + Self.uint(MKVID.trackUID, UInt64(i + 1))
                + Self.uint(MKVID.flagLacing, 0) + Self.string(MKVID.codecID, t.codecID)
            // FlagDefault's default is 1: written only to clear it; FlagForced only when set (as FFmpeg).
            if !t.isDefault { e += Self.uint(MKVID.flagDefault, 0) }
            if t.isForced { e += Self.uint(MKVID.flagForced, 1) }
            e += Self.uint(MKVID.trackType, p.mediaType == .video ? 1 : p.mediaType == .audio ? 2 : 0x11)
            if let name = metadata.trackTags[i]?.first(where: { $0.ffmpegKey.lowercased() == "title" && !$0.value.isEmpty }) {
                e += Self.string(MKVID.name, name.value)
            }
            e += Self.string(MKVID.language, t.language)   // always: an absent Language means "eng"
            if t.codecID == "A_MS/ACM" {
                e += Self.element(MKVID.codecPrivate, WAVEFormatEx.compressed(tag: Self.acmTags[p.codec.rawValue] ?? 0, channels: p.channels, sampleRate: p.sampleRate,
                                                                              bitRate: p.bitRate, extradata: p.extradata))
            } else if !p.extradata.isEmpty {
                var priv = p.extradata
                if p.codec == "flac" && !priv.starts(with: Array("fLaC".utf8)) && priv.count == 34 {
                    priv = Array("fLaC".utf8) + [0x80, 0, 0, 34] + priv   // STREAMINFO as the last metadata block
                }
                if p.codec == "alac" && priv.count > 12 && priv[4..<8].elementsEqual(Array("alac".utf8)) {
                    priv = Array(priv[12...])   // the ALACSpecificConfig alone, without its atom header (as FFmpeg writes it)
                }
                e += Self.element(MKVID.codecPrivate, priv)
            }
            if t.delay > 0 {
                e += Self.uint(MKVID.codecDelay, UInt64(t.delay) * 1_000_000_000 / 48000)
                e += Self.uint(MKVID.seekPreRoll, 80_000_000)
            }
            switch p.mediaType {
            case .video:
                e += Self.element(MKVID.video, Self.uint(MKVID.pixelWidth, UInt64(p.width)) + Self.uint(MKVID.pixelHeight, UInt64(p.height)))
            case .audio:
                var a = Self.float(MKVID.samplingFrequency, Double(p.sampleRate)) + Self.uint(MKVID.channels, UInt64(max(1, p.channels)))
                if p.bitsPerCodedSample > 0 && p.codec.rawValue.hasPrefix("pcm") { a += Self.uint(MKVID.bitDepth, UInt64(p.bitsPerCodedSample)) }
                e += Self.element(MKVID.audio, a)
            default: break
            }
            entries += Self.element(MKVID.trackEntry, e)
        }
        try file.write(Self.element(MKVID.tracks, entries))
        let count = tracks.count
        for (id, bytes) in [(MKVID.chapters, MatroskaMetadataWriter.chapters(metadata.chapters)),
                            (MKVID.attachments, MatroskaMetadataWriter.attachments(metadata.attachments)),
                            (MKVID.tags, MatroskaMetadataWriter.tags(metadata, trackUID: { $0 >= 0 && $0 < count ? UInt64($0 + 1) : nil }))]
        where !bytes.isEmpty {
            metadataAt.append((id, file.bytesWritten - segmentData))
            try file.write(bytes)
        }
    }

    /// A Void element of exactly `size` bytes (a 1-byte ID and an 8-byte size field).
    static func voidElement(_ size: Int) -> [UInt8] {
        [0xEC] + vint(Int64(size - 9), width: 8) + [UInt8](repeating: 0, count: size - 9)
    }

    /// Writes one packet. - Throws: `.invalidArgument` for a track that was not added,
    /// `.state` after ``finish()``, `.io`.
    public func write(_ packet: Packet) throws {
        guard !finished else { throw MediaError(.state, "write after finish", path: file.path) }
        guard packet.trackIndex >= 0 && packet.trackIndex < tracks.count else {
            throw MediaError(.invalidArgument, "track \(packet.trackIndex) was not added", path: file.path)
        }
        guard let converter = converters[packet.trackIndex] else { return try writeBlock(packet) }
        let converted: [Packet]
        do { converted = try converter.convert(packet) } catch let e as MediaError { throw e.at(path: file.path) }
        for p in converted { try writeBlock(p) }
    }

    /// Writes one packet of a track as a block.
    private func writeBlock(_ packet: Packet) throws {
        var packet = packet
        let params = tracks[packet.trackIndex].params
        if params.codecTag == "adts", let h = ADTSHeader(packet.data) {
            packet.data.removeFirst(min(packet.data.count, h.headerSize))
        }
        if params.codec == "av1" { packet.data = AV1.mp4Sample(packet.data) }
        if tracks[packet.trackIndex].annexB {
            let i = packet.trackIndex
            do {
                if params.extradata.isEmpty && !headerWritten {
                    tracks[i].params.extradata = try AnnexBConversion.record(codec: params.codec, firstPacket: packet.data, completeness: false, track: i)
                }
                packet.data = try AnnexBConversion.sample(packet.data, track: i, codec: params.codec)
            } catch let e as MediaError { throw e.at(path: file.path) }
        }
        if let trim = pendingTrimEnd.removeValue(forKey: packet.trackIndex) { packet.trimEnd = trim }
        // Timestamps, durations and trims within MuxLimits: the sums below cannot overflow.
        try MuxLimits.check(packet, track: packet.trackIndex, path: file.path)
        if !headerWritten { try writeHeader() }
        let t = tracks[packet.trackIndex]
        let stamp = packet.pts != Packet.noTimestamp ? packet.pts : packet.dts
        guard stamp != Packet.noTimestamp else {
            // As FFmpeg's matroska muxer: "Can't write packet with unknown timestamp".
            throw MediaError(.invalidArgument, "track \(packet.trackIndex): a packet with neither pts nor dts cannot be placed in a Cluster", path: file.path)
        }
        var ms = Rational.rescale(stamp, from: packet.timeBase, to: Rational(1, 1000))
        if t.delay > 0 { ms += Rational.rescale(t.delay, from: Rational(1, 48000), to: Rational(1, 1000)) }
        let isVideo = t.params.mediaType == .video
        let hasVideo = tracks.contains { $0.params.mediaType == .video }
        if !cluster.isEmpty && ((isVideo && packet.isKeyframe) || ms - clusterTime > 5000 || ms - clusterTime < -32768 || ms - clusterTime > 32767) {
            try flushCluster()
        }
        if cluster.isEmpty {
            clusterTime = ms
            clusterOffset = file.bytesWritten
            cuedThisCluster = []
            cluster = Self.uint(MKVID.timecode, UInt64(max(0, ms)))
        }
        if packet.isKeyframe && (isVideo || !hasVideo) && !cuedThisCluster.contains(packet.trackIndex) {
            cuedThisCluster.insert(packet.trackIndex)
            cues.append((ms, packet.trackIndex, clusterOffset - segmentData))
        }
        let relative = Int16(clamping: ms - clusterTime)
        let head = Self.vint(Int64(packet.trackIndex + 1)) + [UInt8(UInt16(bitPattern: relative) >> 8), UInt8(UInt16(bitPattern: relative) & 0xFF)]
        let duration = packet.duration > 0 ? Rational.rescale(packet.duration, from: packet.timeBase, to: Rational(1, 1000)) : 0
        let isWebVTT = t.codecID.hasPrefix("D_WEBVTT")
        if t.params.mediaType == .subtitle && (isWebVTT || duration > 0) {
            // As FFmpeg's matroskaenc: a BlockGroup with the BlockDuration (a subtitle packet
            // without a duration, as PGS's, goes in a SimpleBlock below); WebVTT's block is
            // "identifier\nsettings\ntext" (its D_WEBVTT form), always in a BlockGroup.
            var data = packet.data
            if isWebVTT {
                data = WebVTTCue.webMBlock(identifier: packet.cueIdentifier, settings: packet.cueSettings, text: data)
            }
            cluster += Self.element(MKVID.blockGroup, Self.element(MKVID.block, head + [0] + data) + Self.uint(MKVID.blockDuration, UInt64(max(0, duration))))
        } else if packet.trimEnd > 0 && t.params.sampleRate > 0 {
            let padding = Int64(packet.trimEnd) * 1_000_000_000 / Int64(t.params.sampleRate)
            let block = Self.element(MKVID.block, head + [0] + packet.data)
            cluster += Self.element(MKVID.blockGroup, block + Self.element(MKVID.discardPadding, Array(withUnsafeBytes(of: padding.bigEndian) { Array($0) })))
        } else {
            cluster += Self.element(MKVID.simpleBlock, head + [packet.isKeyframe ? 0x80 : 0] + packet.data)
        }
        endTime = max(endTime, ms + duration)
    }

    private func flushCluster() throws {
        guard !cluster.isEmpty else { return }
        try file.write(Self.element(MKVID.cluster, cluster))
        cluster = []
        wroteCluster = true
    }

    /// True once a Cluster is in the file.
    private var wroteCluster = false

    /// Writes the last Cluster, the Cues, the SeekHead, the Segment size and Duration, and
    /// renames the file into place. - Throws: `.io`; the file is then left unfinished.
    public func finish() throws {
        guard !finished else { return }
        if !headerWritten { try writeHeader() }
        try flushCluster()
        // No packet: an empty Cluster (its Timecode only). FFmpeg 5.1 cannot open a Segment
        // without one (it resyncs past the end and reads the header as garbage; its own
        // muxer writes such files), and other readers expect one.
        if !wroteCluster { try file.write(Self.element(MKVID.cluster, Self.uint(MKVID.timecode, 0))) }
        finished = true
        if file.isStream {
            try file.commit()
            return
        }
        let cuesAt = file.bytesWritten - segmentData
        var points: [UInt8] = []
        for c in cues {
            points += Self.element(MKVID.cuePoint, Self.uint(MKVID.cueTime, UInt64(max(0, c.time)))
                + Self.element(MKVID.cueTrackPositions, Self.uint(MKVID.cueTrack, UInt64(c.track + 1)) + Self.uint(MKVID.cueClusterPosition, UInt64(c.cluster))))
        }
        if !points.isEmpty { try file.write(Self.element(MKVID.cues, points)) }
        let end = file.bytesWritten
        var seeks: [UInt8] = []
        for (id, at) in [(MKVID.info, infoAt), (MKVID.tracks, tracksAt)] + metadataAt + (points.isEmpty ? [] : [(MKVID.cues, cuesAt)]) {
            seeks += Self.element(MKVID.seek, Self.element(MKVID.seekID, Self.idBytes(id)) + Self.uint(MKVID.seekPosition, UInt64(at)))
        }
        let seekHead = Self.element(MKVID.seekHead, seeks)
        if seekHead.count + 9 <= seekRoom {
            try file.patch(seekHead + Self.voidElement(seekRoom - seekHead.count), at: seekHeadAt)
        }
        try file.patch(Self.vint(end - segmentData, width: 8), at: segmentData - 8)
        try file.patch(withUnsafeBytes(of: Double(endTime).bitPattern.bigEndian) { Array($0) }, at: durationAt)
        try file.commit()
    }

    /// Abandons the file and removes what was written.
    public func cancel() {
        finished = true
        file.discard()
    }
}

extension MuxerFormat {
    /// Matroska (``MatroskaMuxer``).
    public static let matroska = MuxerFormat(
        name: "matroska", description: "Matroska", extensions: ["mkv", "mka", "mk3d"], mimeTypes: ["video/x-matroska", "audio/x-matroska"],
        codecs: MatroskaMuxer.matroskaCodecs + MatroskaMuxer.matroskaConverted, defaultAudioCodec: "opus", make: { path, _ in try MatroskaMuxer(path: path, webM: false) })
    /// WebM: Matroska with VP8, VP9, AV1, Opus and Vorbis only (``MatroskaMuxer``).
    public static let webm = MuxerFormat(
        name: "webm", description: "WebM", extensions: ["webm"], mimeTypes: ["video/webm", "audio/webm"],
        codecs: MatroskaMuxer.webMCodecs + MatroskaMuxer.webMConverted, defaultAudioCodec: "opus", make: { path, _ in try MatroskaMuxer(path: path, webM: true) })
}
