/// What a Matroska TrackEntry says beyond the common ``Track`` facts: flags, name, the
/// Matroska codec ID, display and colour elements. One per track, in track order.
public struct MatroskaTrackInfo: Sendable, Hashable {
    /// The TrackNumber blocks refer to.
    public var number: UInt64
    /// The TrackUID (tags refer to it).
    public var uid: UInt64
    /// The Matroska codec ID ("V_VP9", "A_OPUS" ...).
    public var codecID: String
    /// The track's name (Name element), empty when none.
    public var name: String
    /// The Language element as stored ("eng" when absent), before LanguageBCP47 replaces it:
    /// FFmpeg 5.1's stream `language` tag.
    var iso639Language = "eng"
    /// FlagDefault (default 1), FlagForced (default 0), FlagEnabled (default 1).
    public var isDefault = true, isForced = false, isEnabled = true
    /// DefaultDuration in nanoseconds, 0 when not stated.
    public var defaultDuration: UInt64 = 0
    /// CodecDelay and SeekPreRoll in nanoseconds (Opus), 0 when not stated.
    public var codecDelay: UInt64 = 0, seekPreRoll: UInt64 = 0
    /// Video: DisplayWidth / DisplayHeight (0 when not stated) and DisplayUnit (0: pixels).
    public var displayWidth = 0, displayHeight = 0, displayUnit = 0
    /// Video: StereoMode (0: mono) and FlagInterlaced (0: undetermined).
    public var stereoMode = 0, interlaced = 0
    /// Video: ProjectionType (0: rectangular) when a Projection element is present.
    public var projectionType = 0
    /// Audio: BitDepth (0 when not stated).
    public var bitDepth = 0
    /// The ContentEncoding applied: header stripping bytes put back in front of every frame.
    public var strippedHeader: [UInt8] = []
    /// The ContentCompression undone on every frame (ContentEncodingScope bit 1), nil when none.
    var frameCompression: MatroskaCompression?
    /// TrackTimestampScale: the track's ticks (block timestamps, BlockDuration) are
    /// TimestampScale x this many nanoseconds. Default: 1.0 (also for values below 0.01, as FFmpeg reads them).
    public var timestampScale = 1.0
}

/// A Matroska ContentCompression FFmpeg's reader (and so MediaKit's) undoes.
enum MatroskaCompression: Sendable, Hashable {
    /// ContentCompAlgo 0: each frame is a zlib stream.
    case zlib
    /// ContentCompAlgo 3: these bytes were stripped from the front of each frame.
    case headerStripping([UInt8])

    /// The most bytes one frame may inflate to: about what FFmpeg's matroskadec allows (it grows
    /// its buffer threefold while below 10,000,000 bytes), so that what ffprobe reads reads here.
    static let inflateLimit = 32 << 20

    /// The frame (or CodecPrivate) as stored before compression.
    func apply(_ stored: ArraySlice<UInt8>) -> Result<[UInt8], Inflate.Failure> {
        switch self {
        case .zlib: return Inflate.zlib(stored, limit: Self.inflateLimit)
        case .headerStripping(let header): return .success(header + stored)
        }
    }
}

/// One Matroska track as the demuxer uses it.
struct MatroskaTrackConfig {
    var info: MatroskaTrackInfo
    var track: Track
    /// How packet durations are computed where ffprobe's parsers compute them.
    var durations: DurationRule = .container
    /// Packets are always key frames (audio codecs FFmpeg marks intra-only, subtitles).
    var alwaysKey = false
    /// The key-frame flag comes from the bitstream, as FFmpeg's parsers set it.
    var keyFromBitstream: BitstreamKey = .none
    /// CodecDelay in the track's time base (subtracted from every timestamp, as FFmpeg does).
    var codecDelayTicks: Int64 = 0

    enum DurationRule {
        /// BlockDuration / DefaultDuration, or none.
        case container
        /// From the Opus TOC byte (48 kHz samples).
        case opus
        /// From the Vorbis mode of the packet (FFmpeg's vorbis parser).
        case vorbis(VorbisInfo)
        /// From the FLAC frame header.
        case flac
        /// From the (E-)AC-3 sync frame header: 256 samples per audio block.
        case ac3
        /// From the MPEG audio frame header.
        case mpegAudio
        /// PCM: the packet's bytes over the bytes per sample frame.
        case pcm(bytesPerFrame: Int)
        /// A_MS/ACM: the WAV codec's rule (libavcodec's av_get_audio_frame_duration2), where the
        /// block states no duration.
        case wav(WAVCodec, blockAlign: Int, byteRate: Int)

        /// The sample frames of a packet of `bytes` by the ``wav(_:blockAlign:byteRate:)`` rule;
        /// nil for another rule or a size the codec cannot time. (A function of its own: binding
        /// this case's payload inside MatroskaPacketReader.block crashes Swift 6.3.1's optimizer,
        /// OwnershipModelEliminator's verifier, in release builds.)
        @inline(never)
        func wavSamples(bytes: Int, channels: Int, sampleRate: Int) -> Int64? {
            guard case .wav(let codec, let align, let byteRate) = self else { return nil }
            return codec.samples(bytes: bytes, align: align, channels: channels, sampleRate: sampleRate, byteRate: byteRate)
        }
    }

    enum BitstreamKey {
        case none, vp8, vp9, av1
    }

    /// A Cluster Timestamp (Segment ticks) in this track's ticks: divided by TrackTimestampScale
    /// and truncated, as FFmpeg's Matroska demuxer computes it.
    func trackTicks(clusterTime ct: Int64) -> Int64 {
        let scale = info.timestampScale
        guard scale != 1 else { return ct }
        let v = (Double(ct) / scale).rounded(.towardZero)
        return v >= 9.2e18 ? Int64.max / 2 : v <= -9.2e18 ? Int64.min / 2 : Int64(v)
    }

    /// DefaultDuration x `laces` (nanoseconds, RFC 9559 "Matroska ticks") in this track's ticks,
    /// 0 when there is none or it overflows. With a TrackTimestampScale other than 1 this follows the
    /// specification; FFmpeg 5.1 divides by TimestampScale alone (its durations are then off by the scale).
    func defaultDurationTicks(laces: UInt64, timecodeScale: UInt64) -> UInt64 {
        guard info.defaultDuration > 0, timecodeScale > 0 else { return 0 }
        let (product, overflow) = info.defaultDuration.multipliedReportingOverflow(by: laces)
        if overflow { return 0 }
        guard info.timestampScale != 1 else { return product / timecodeScale }
        let v = (Double(product) / (Double(timecodeScale) * info.timestampScale)).rounded(.down)
        return v.isFinite && v >= 0 && v < 9.2e18 ? UInt64(v) : 0
    }
}

extension MatroskaTrackConfig {
    /// Builds a track from a TrackEntry.
    /// - Throws: `.invalidData` naming the path and offset for malformed elements.
    static func parse(_ w: EBMLWalker, index: Int, timecodeScale: UInt64, segmentDuration: Double?) throws -> MatroskaTrackConfig {
        var w = w
        var info = MatroskaTrackInfo(number: 0, uid: 0, codecID: "", name: "")
        var type: UInt64 = 0
        var language = "eng", bcp47 = ""
        var codecPrivate: [UInt8] = []
        var width = 0, height = 0, channels = 1
        var rate = 8000.0, outputRate = 0.0
        var colour = (range: 0, primaries: 2, transfer: 2, matrix: 2)
        var reasons: [String] = []
        var encrypted = false
        var compression: MatroskaCompression?
        var compressionScope: UInt64 = 0
        var compressionOffset: Int64 = 0
        while let e = try w.next() {
            switch e.id {
            case MKVID.trackNumber: info.number = try w.uint(e)
            case MKVID.trackUID: info.uid = try w.uint(e)
            case MKVID.trackType: type = try w.uint(e)
            case MKVID.flagEnabled: info.isEnabled = try w.uint(e) != 0
            case MKVID.flagDefault: info.isDefault = try w.uint(e) != 0
            case MKVID.flagForced: info.isForced = try w.uint(e) != 0
            case MKVID.defaultDuration: info.defaultDuration = try w.uint(e)
            case MKVID.name: info.name = w.string(e)
            case MKVID.language: language = w.string(e)
            case MKVID.languageBCP47: bcp47 = w.string(e)
            case MKVID.codecID: info.codecID = w.string(e)
            case MKVID.codecPrivate: codecPrivate = w.binary(e)
            case MKVID.codecDelay: info.codecDelay = try w.uint(e)
            case MKVID.seekPreRoll: info.seekPreRoll = try w.uint(e)
            case MKVID.trackTimestampScale:
                let s = try w.float(e)
                // FFmpeg reads values below 0.01 (0 included: an old muxer's "not set") as 1.0.
                guard s.isFinite else { throw w.error("TrackTimestampScale \(s) is not a number", at: e.offset) }
                info.timestampScale = s < 0.01 ? 1 : s
            case MKVID.video:
                var v = w.children(of: e)
                while let c = try v.next() {
                    switch c.id {
                    case MKVID.pixelWidth: width = Int(clamping: try v.uint(c))
                    case MKVID.pixelHeight: height = Int(clamping: try v.uint(c))
                    case MKVID.displayWidth: info.displayWidth = Int(clamping: try v.uint(c))
                    case MKVID.displayHeight: info.displayHeight = Int(clamping: try v.uint(c))
                    case MKVID.displayUnit: info.displayUnit = Int(clamping: try v.uint(c))
                    case MKVID.stereoMode: info.stereoMode = Int(clamping: try v.uint(c))
                    case MKVID.flagInterlaced: info.interlaced = Int(clamping: try v.uint(c))
                    case MKVID.colour:
                        var col = v.children(of: c)
                        while let k = try col.next() {
                            switch k.id {
                            case MKVID.range: colour.range = Int(clamping: try col.uint(k))
                            case MKVID.primaries: colour.primaries = Int(clamping: try col.uint(k))
                            case MKVID.transferCharacteristics: colour.transfer = Int(clamping: try col.uint(k))
                            case MKVID.matrixCoefficients: colour.matrix = Int(clamping: try col.uint(k))
                            default: break
                            }
                        }
                    case MKVID.projection:
                        var p = v.children(of: c)
                        while let k = try p.next() { if k.id == MKVID.projectionType { info.projectionType = Int(clamping: try p.uint(k)) } }
                    default: break
                    }
                }
            case MKVID.audio:
                var a = w.children(of: e)
                while let c = try a.next() {
                    switch c.id {
                    case MKVID.samplingFrequency: rate = try a.float(c)
                    case MKVID.outputSamplingFrequency: outputRate = try a.float(c)
                    case MKVID.channels: channels = Int(clamping: try a.uint(c))
                    case MKVID.bitDepth: info.bitDepth = Int(clamping: try a.uint(c))
                    default: break
                    }
                }
            case MKVID.contentEncodings:
                // FFmpeg's matroskadec applies one ContentEncoding: several combined are not
                // supported (their frames pass as stored), nor encryption, nor bzlib / LZO here.
                var encodings = w.children(of: e)
                var count = 0
                var kind: UInt64 = 0, scope: UInt64 = 1
                var algo: UInt64 = 0, settings: [UInt8] = []
                while let c = try encodings.next() {
                    guard c.id == MKVID.contentEncoding else { continue }
                    count += 1
                    var enc = encodings.children(of: c)
                    kind = 0
                    scope = 1
                    algo = 0
                    settings = []
                    while let k = try enc.next() {
                        switch k.id {
                        case MKVID.contentEncodingType: kind = try enc.uint(k)
                        case MKVID.contentEncodingScope: scope = try enc.uint(k)
                        case MKVID.contentCompression:
                            var comp = enc.children(of: k)
                            while let x = try comp.next() {
                                if x.id == MKVID.contentCompAlgo { algo = try comp.uint(x) }
                                if x.id == MKVID.contentCompSettings { settings = comp.binary(x) }
                            }
                        case MKVID.contentEncryption: kind = 1
                        default: break
                        }
                    }
                }
                if kind == 1 {
                    encrypted = true
                    reasons.append("the track is encrypted (ContentEncryption), which MediaKit does not support")
                } else if count > 1 {
                    reasons.append("the track has \(count) combined ContentEncodings, which MediaKit (like FFmpeg) does not support")
                } else if count == 1 {
                    switch algo {
                    case 0: compression = .zlib
                    case 3: compression = .headerStripping(settings)
                    default:
                        let names = [1: "bzlib", 2: "lzo1x"]
                        reasons.append("the track is compressed with \(names[Int(algo)] ?? "algorithm \(algo)") (ContentCompression), which MediaKit does not support; only zlib and header stripping are")
                    }
                    compressionScope = scope
                    compressionOffset = e.offset
                }
            default: break
            }
        }
        guard info.number > 0 else { throw w.error("a TrackEntry has no TrackNumber (or 0)") }
        // ContentEncodingScope bit 1: every frame; bit 2: CodecPrivate (decoded here, as FFmpeg
        // decodes it when the track is read).
        if let compression, compressionScope & 1 != 0 {
            if case .headerStripping(let header) = compression { info.strippedHeader = header }
            info.frameCompression = compression
        }
        if let compression, compressionScope & 2 != 0, !codecPrivate.isEmpty {
            switch compression.apply(codecPrivate[...]) {
            case .success(let bytes): codecPrivate = bytes
            case .failure(let f):
                reasons.append("track \(info.number): its zlib-compressed CodecPrivate (ContentEncodings at offset \(compressionOffset)) does not inflate: \(f.reason) (byte \(f.offset) of it)")
                codecPrivate = []
            }
        }
        info.iso639Language = language
        if !bcp47.isEmpty && language == "eng" { language = bcp47 }

        // A track tick is TimestampScale x TrackTimestampScale ns (RFC 9559 section 11.1), truncated
        // to whole nanoseconds as FFmpeg's time base is.
        let tick = info.timestampScale == 1 ? Double(timecodeScale) : (Double(timecodeScale) * info.timestampScale).rounded(.down)
        guard tick >= 1, tick <= Double(UInt32.max) else {
            throw w.error("TimestampScale \(timecodeScale) x TrackTimestampScale \(info.timestampScale) (\(tick) ns per tick) is out of range")
        }
        let timeBase = Track.reduced(Int64(tick), 1_000_000_000)
        var (codec, mediaType) = codecName(info.codecID, type: type, bitDepth: info.bitDepth)
        // A_MS/ACM: CodecPrivate is a WAVEFORMATEX whose format tag names the codec, by the WAV
        // table (as FFmpeg's matroskadec reads it with ff_get_wav_header).
        let acm = info.codecID == "A_MS/ACM" ? WAVEFormatEx(codecPrivate) : nil
        if let acm {
            codec = acm.codec.codec.rawValue
            mediaType = .audio
            if codec.isEmpty { reasons.append(String(format: "the A_MS/ACM WAV format tag 0x%04X names no codec MediaKit knows", acm.tag)) }
        }
        // V_MS/VFW/FOURCC: CodecPrivate is a BITMAPINFOHEADER whose compression fourcc names the
        // codec, by the VFW table (as FFmpeg's matroskadec reads it); the codec's own extradata
        // follows its 40 bytes.
        let vfw = info.codecID == "V_MS/VFW/FOURCC" ? BitmapInfoHeader(codecPrivate) : nil
        if let vfw {
            codec = vfw.codec.rawValue
            mediaType = .video
            if codec.isEmpty { reasons.append("the V_MS/VFW/FOURCC fourcc \(vfw.fourccText) names no codec MediaKit knows") }
        }
        var params = CodecParameters(mediaType: mediaType, codec: CodecID(codec), codecTag: info.codecID, extradata: vfw?.extradata ?? codecPrivate)
        var cfg = MatroskaTrackConfig(info: info, track: Track(index: index, id: Int(clamping: info.number), parameters: params, timeBase: timeBase, duration: 0))
        switch mediaType {
        case .video:
            params.width = width > 0 || vfw == nil ? width : vfw!.width
            params.height = height > 0 || vfw == nil ? height : vfw!.height
            if let vfw { params.bitsPerCodedSample = vfw.bitCount }
            params.colorRange = ColorRange(code: colour.range)
            params.colorPrimaries = ColorPrimaries(rawValue: colour.primaries)
            params.colorTransfer = ColorTransfer(rawValue: colour.transfer)
            params.colorSpace = ColorMatrix(rawValue: colour.matrix)
            if info.displayUnit == 0, info.displayWidth > 0, info.displayHeight > 0, width > 0, height > 0 {
                let sar = Track.reduced(Int64(info.displayWidth) * Int64(height), Int64(info.displayHeight) * Int64(width))
                if sar != Rational(1, 1) { params.sampleAspectRatio = sar }
            }
            switch codec {
            case "vp8": cfg.keyFromBitstream = .vp8
            case "vp9": cfg.keyFromBitstream = .vp9
            case "av1": cfg.keyFromBitstream = .av1
            default: break
            }
        case .audio:
            // A rate read from the file as a float: one that is not a finite, positive rate
            // an Int holds (NaN, infinite, 1e300 ...) is unknown (0), never a trap.
            let stated = outputRate > 0 && codec == "aac" ? outputRate : rate
            params.sampleRate = stated.isFinite && stated >= 1 && stated <= Double(Int32.max) ? Int(stated) : 0
            params.channels = channels
            params.bitsPerCodedSample = info.bitDepth
            cfg.alwaysKey = Self.intraOnlyAudio.contains(codec) || codec.hasPrefix("pcm_")
            if let acm, !codec.isEmpty {
                // The WAVEFORMATEX's block size, bits and extension are what the decoder needs;
                // packet durations follow its codec's rule where the blocks state none.
                if params.sampleRate == 0 { params.sampleRate = acm.sampleRate }
                if params.channels == 0 { params.channels = acm.channels }
                params.blockAlign = acm.blockAlign
                params.bitsPerCodedSample = acm.bitsPerSample
                params.bitRate = acm.byteRate * 8
                params.extradata = acm.extradata
                cfg.alwaysKey = true
                if !codec.hasPrefix("pcm_"), !["mp3", "mp2", "mp1"].contains(codec) {
                    cfg.durations = .wav(acm.codec, blockAlign: max(1, acm.blockAlign), byteRate: acm.byteRate)
                }
            }
        case .subtitle, .data:
            cfg.alwaysKey = true
        }
        switch codec {
        case "opus":
            params.sampleRate = 48000
            cfg.durations = .opus
            switch OpusHead.parse(codecPrivate) {
            case .success(let h):
                params.channels = h.channels
                cfg.track.encoderDelay = h.preSkip
            case .failure(let why): reasons.append("CodecPrivate is not an OpusHead: \(why.reason)")
            }
            cfg.track.trimsOnPackets = true
        case "vorbis":
            switch Self.xiphHeaders(codecPrivate) {
            case .some(let headers) where headers.count == 3:
                switch VorbisInfo.parseIdentification(headers[0]) {
                case .success(var v):
                    if let modes = VorbisInfo.modes(fromSetup: headers[2]) {
                        v.modeLong = modes
                        cfg.durations = .vorbis(v)
                    }
                    params.sampleRate = v.sampleRate
                    params.channels = v.channels
                    params.bitRate = v.nominalBitrate
                case .failure(let why): reasons.append(why.reason)
                }
            default:
                reasons.append("CodecPrivate does not hold the three Xiph-laced Vorbis headers")
            }
        case "flac":
            // CodecPrivate: "fLaC" and the metadata blocks; decoders take the STREAMINFO.
            if codecPrivate.count >= 42, codecPrivate.starts(with: Array("fLaC".utf8)), codecPrivate[4] & 0x7F == 0,
               let si = FLACStreamInfo(Array(codecPrivate[8..<42])) {
                params.extradata = si.bytes
                params.sampleRate = si.sampleRate
                params.channels = si.channels
                params.bitsPerCodedSample = si.bitsPerSample
                cfg.durations = .flac
            } else {
                reasons.append("CodecPrivate does not start with \"fLaC\" and a STREAMINFO block")
            }
        case "alac" where !codecPrivate.isEmpty:
            // CodecPrivate is the ALACSpecificConfig alone; the decoder takes it as MP4 stores it,
            // inside an 'alac' atom (size, type, version and flags), which FFmpeg's Matroska
            // reader builds the same way.
            let size = 12 + codecPrivate.count
            params.extradata = [UInt8(truncatingIfNeeded: size >> 24), UInt8(truncatingIfNeeded: size >> 16),
                                UInt8(truncatingIfNeeded: size >> 8), UInt8(truncatingIfNeeded: size)]
                + Array("alac".utf8) + [0, 0, 0, 0] + codecPrivate
        case "ac3", "eac3":
            cfg.durations = .ac3
        case "mp3", "mp2", "mp1":
            cfg.durations = .mpegAudio
        case _ where codec.hasPrefix("pcm_"):
            let bits = codec.hasSuffix("u8") ? 8 : info.bitDepth > 0 ? info.bitDepth : codec.contains("64") ? 64 : codec.contains("32") ? 32 : codec.contains("24") ? 24 : 16
            cfg.durations = .pcm(bytesPerFrame: max(1, bits / 8 * max(1, channels)))
        case "h264":
            params.reorderDepth = ReorderDepth.h264(avcC: params.extradata) ?? 0
        case "hevc":
            params.reorderDepth = ReorderDepth.hevc(hvcC: params.extradata) ?? 0
        case "mpeg4":
            params.reorderDepth = ReorderDepth.mpeg4(config: params.extradata) ?? 0
        case "aac" where codecPrivate.isEmpty:
            params.extradata = Self.audioSpecificConfig(info.codecID, sampleRate: params.sampleRate, channels: channels)
        default:
            break
        }
        if codec.isEmpty && acm == nil && vfw == nil { reasons.append("the codec \(info.codecID.isEmpty ? "(no CodecID)" : info.codecID) is not one MediaKit knows") }
        if info.codecDelay > 0 && params.sampleRate > 0 {
            cfg.codecDelayTicks = Rational.rescale(Int64(clamping: info.codecDelay), from: Rational(1, 1_000_000_000), to: timeBase)
        }
        cfg.track.parameters = params
        cfg.track.language = language
        cfg.track.isDefault = info.isDefault
        cfg.track.isForced = info.isForced
        cfg.track.unsupportedReason = reasons.isEmpty ? nil : reasons.joined(separator: "; ")
        cfg.track.isEncrypted = encrypted
        // The segment's Duration is a float the file states: one that is not a count of this
        // track's ticks (infinite, or beyond 2^63 of them) leaves the duration unknown.
        if let d = segmentDuration, d > 0 {
            let ticks = (d / timeBase.doubleValue).rounded()
            if ticks.isFinite && ticks < Double(Int64.max) { cfg.track.duration = Int64(ticks) }
        }
        if mediaType == .video && info.defaultDuration > 0 {
            cfg.track.frameRate = Track.reduced(1_000_000_000, Int64(clamping: info.defaultDuration))
        }
        return cfg
    }

    /// Audio codecs FFmpeg's descriptors mark intra-only: every packet is a key frame.
    static let intraOnlyAudio: Set<String> = ["aac", "mp3", "mp2", "mp1", "vorbis", "opus", "flac", "ac3", "eac3", "dts",
                                              "alac", "truehd", "mlp", "wavpack", "tta"]

    /// The codec name (FFmpeg's) and media type of a Matroska CodecID (RFC 9559 codec
    /// mappings, as FFmpeg's `ff_mkv_codec_tags`).
    static func codecName(_ id: String, type: UInt64, bitDepth: Int) -> (String, MediaType) {
        let typeGuess: MediaType = type == 1 ? .video : type == 2 ? .audio : type == 0x11 ? .subtitle : .data
        let exact: [String: (String, MediaType)] = [
            "V_VP8": ("vp8", .video), "V_VP9": ("vp9", .video), "V_AV1": ("av1", .video),
            "V_MPEG4/ISO/AVC": ("h264", .video), "V_MPEGH/ISO/HEVC": ("hevc", .video), "V_THEORA": ("theora", .video),
            "V_MPEG4/ISO/SP": ("mpeg4", .video), "V_MPEG4/ISO/ASP": ("mpeg4", .video), "V_MPEG4/ISO/AP": ("mpeg4", .video),
            "V_MPEG1": ("mpeg1video", .video), "V_MPEG2": ("mpeg2video", .video), "V_MJPEG": ("mjpeg", .video),
            "V_PRORES": ("prores", .video), "V_FFV1": ("ffv1", .video), "V_UNCOMPRESSED": ("rawvideo", .video),
            "A_OPUS": ("opus", .audio), "A_VORBIS": ("vorbis", .audio), "A_FLAC": ("flac", .audio),
            "A_MPEG/L3": ("mp3", .audio), "A_MPEG/L2": ("mp2", .audio), "A_MPEG/L1": ("mp1", .audio),
            "A_AC3": ("ac3", .audio), "A_EAC3": ("eac3", .audio), "A_DTS": ("dts", .audio), "A_ALAC": ("alac", .audio),
            "A_TRUEHD": ("truehd", .audio), "A_MLP": ("mlp", .audio), "A_TTA1": ("tta", .audio), "A_WAVPACK4": ("wavpack", .audio),
            "A_PCM/FLOAT/IEEE": (bitDepth == 64 ? "pcm_f64le" : "pcm_f32le", .audio),
            "S_TEXT/UTF8": ("subrip", .subtitle), "S_TEXT/ASCII": ("text", .subtitle), "S_TEXT/ASS": ("ass", .subtitle),
            "S_TEXT/SSA": ("ass", .subtitle), "S_ASS": ("ass", .subtitle), "S_SSA": ("ass", .subtitle),
            "S_TEXT/WEBVTT": ("webvtt", .subtitle), "D_WEBVTT/SUBTITLES": ("webvtt", .subtitle), "D_WEBVTT/CAPTIONS": ("webvtt", .subtitle),
            "S_VOBSUB": ("dvd_subtitle", .subtitle), "S_HDMV/PGS": ("hdmv_pgs_subtitle", .subtitle), "S_DVBSUB": ("dvb_subtitle", .subtitle),
        ]
        if let hit = exact[id] { return hit }
        if id.hasPrefix("A_AAC") { return ("aac", .audio) }
        if id == "A_PCM/INT/LIT" {
            return ([8: "pcm_u8", 24: "pcm_s24le", 32: "pcm_s32le"][bitDepth] ?? "pcm_s16le", .audio)
        }
        if id == "A_PCM/INT/BIG" {
            return ([8: "pcm_u8", 24: "pcm_s24be", 32: "pcm_s32be"][bitDepth] ?? "pcm_s16be", .audio)
        }
        return ("", typeGuess)
    }

    /// Samples in an AC-3 or E-AC-3 sync frame (ATSC A/52 section 5.4.1 and annex E): 6 audio
    /// blocks of 256 samples, or E-AC-3's numblkscod; nil when `p` is not a sync frame.
    static func ac3FrameSamples(_ p: ArraySlice<UInt8>) -> Int? {
        guard p.count >= 6, p[p.startIndex] == 0x0B, p[p.startIndex + 1] == 0x77 else { return nil }
        let bsid = Int(p[p.startIndex + 5] >> 3)
        guard bsid > 10 else { return 1536 }
        let b4 = p[p.startIndex + 4]
        let fscod = Int(b4 >> 6)
        return 256 * (fscod == 3 ? 6 : [1, 2, 3, 6][Int(b4 >> 4) & 3])
    }

    /// The packets of a Xiph-laced CodecPrivate (RFC 9559 section 5.1.4.1.28, as Vorbis
    /// and Theora store their three headers); nil when the lacing does not fit.
    static func xiphHeaders(_ p: [UInt8]) -> [[UInt8]]? { xiphUnlacing(p) }

    /// An AudioSpecificConfig for the old AAC codec IDs without CodecPrivate
    /// ("A_AAC/MPEG4/LC/SBR" ...), as FFmpeg builds it: object type, sample-rate index, channels.
    static func audioSpecificConfig(_ id: String, sampleRate: Int, channels: Int) -> [UInt8] {
        let profile: Int
        if id.hasSuffix("/MAIN") { profile = 1 } else if id.hasSuffix("/SSR") { profile = 3 } else if id.hasSuffix("/LTP") { profile = 4 } else { profile = 2 }
        let rates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
        let sbr = id.contains("SBR")
        func index(_ r: Int) -> Int { rates.firstIndex { $0 <= r } ?? 11 }
        let base = sbr ? sampleRate / 2 : sampleRate
        let i = index(base)
        var out = [UInt8(profile << 3 | i >> 1), UInt8((i & 1) << 7 | (channels & 15) << 3)]
        if sbr {
            let j = index(sampleRate)
            out += [0x56, 0xE5, UInt8(0x80 | j << 3)]
        }
        return out
    }
}
