/// How a track demuxed from another container becomes an MP4 track (``MP4Muxer/addTrack(from:firstPacket:)``):
/// the codecs MP4 carries, why it refuses others, and the sample entry facts built from the
/// codec configuration or the track's first frame.
enum MP4TrackAdapter {
    /// Codecs an MP4 carries from the containers that are not MP4 (MP3, ADTS AAC, FLAC, WAV
    /// PCM, Matroska / WebM, Ogg, IVF, MPEG-TS) and from encoders.
    static let codecs: [CodecID] = ["aac", "ac3", "alac", "av1", "dts", "eac3", "flac", "h264", "hevc", "mp2", "mp3", "mpeg1video", "mpeg2video", "mpeg4", "opus",
                                    "pcm_alaw", "pcm_f32le", "pcm_f64le", "pcm_mulaw", "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_u8", "vp9"]
                                    + textCodecs

    /// Text subtitle codecs an MP4 holds as 3GPP timed text (`tx3g`, FFmpeg's `mov_text`),
    /// converted as `ffmpeg -c:s mov_text` converts them (``SubtitleConverter``).
    static let textCodecs: [CodecID] = ["ass", "mov_text", "ssa", "subrip", "text", "webvtt"]

    /// True for a text subtitle track from another container: converted to `tx3g`.
    static func isConvertedText(_ track: Track) -> Bool {
        !isMP4(track) && track.parameters.mediaType == .subtitle && textCodecs.contains(track.parameters.codec)
    }

    /// Why a codec is refused in MP4 when there is more to say than "not supported".
    static let refusals: [CodecID: String] = [
        "vorbis": "Vorbis in MP4 is not standard (no registered sample entry; players do not read it)",
        "vp8": "VP8 in MP4 is not standard (no registered sample entry; players do not read it)",
        "hdmv_pgs_subtitle": "MP4 has no sample entry for PGS bitmap subtitles (FFmpeg's mov muxer refuses them too)",
        "dvb_subtitle": "MP4 has no sample entry for DVB bitmap subtitles (FFmpeg's mov muxer refuses them too)",
        "dvd_subtitle": "MediaKit does not write DVD bitmap subtitles (mp4s) into MP4 yet: write Matroska or keep them out (--track)",
    ]

    /// The time base of the MP4 track made from `track` of another container, as FFmpeg's mov
    /// muxer chooses its time scale (movenc.c `mov_init`): audio counts samples (1 / the sample
    /// rate; Opus 1/48000); video takes the stream time base's denominator, doubled until it is at least
    /// 10000 (1/1000 gives 1/16000, an AVI's 1/30 gives 1/15360); other tracks keep their time
    /// base. The packets are rescaled to it on the way in (``PacketRetimer``).
    static func trackTimeBase(_ track: Track) -> Rational {
        let tb = track.timeBase
        guard tb.numerator > 0, tb.denominator > 0 else { return tb }
        switch track.mediaType {
        case .audio where track.parameters.codec == "opus":
            return Rational(1, 48000)                 // Opus counts 48 kHz samples whatever the input rate
        case .audio where track.parameters.sampleRate > 0:
            return Rational(1, Int64(track.parameters.sampleRate))
        case .video:
            var scale = tb.denominator
            while scale < 10000 { scale *= 2 }
            return scale == tb.denominator && tb.numerator == 1 ? tb : Rational(1, scale)
        default:
            return tb
        }
    }

    /// True for a track that comes from an MP4 (its sample entry kept as it is) rather than
    /// from another container.
    static func isMP4(_ track: Track) -> Bool { !track.parameters.sampleEntry.isEmpty }

    /// True when the sample entry is built from the first frame: VP9's vpcC, AC-3's dac3, E-AC-3's
    /// dec3 (completed from the later frames by the muxer, ``EAC3Track``), and
    /// an AV1 stream's av1C, an H.264 / HEVC stream's avcC / hvcC when the source states none
    /// (IVF, OBU streams; Annex B streams with their parameter sets in-band).
    static func needsFirstPacket(_ track: Track) -> Bool {
        guard !isMP4(track) else { return false }
        let p = track.parameters
        return p.codec == "vp9" || p.codec == "ac3" || p.codec == "eac3" || ((p.codec == "av1" || p.codec == "h264" || p.codec == "hevc") && p.extradata.isEmpty)
    }

    /// The track as MP4 writes it: refused (`.unsupported`, naming MP4 and the codec) when MP4
    /// does not carry its codec or the source states no configuration MediaKit needs; otherwise
    /// with the sample entry facts built (`.invalidArgument` when the first frame does not
    /// give them). An encoder delay and padding (MP3's LAME tag) become an edit list, as
    /// FFmpeg's muxer writes it, in the track's own time scale so that it is exact to the
    /// sample: a tag whose delay and padding add up to more than the track (a LAME encode of a
    /// very short sound) gives an edit from the delay to the end of the media (duration 0), as
    /// `ffmpeg -c copy` writes such a file, never a negative duration. Opus is retimed in
    /// 48 kHz samples, its pre-skip the edit's media time (the end is set by ``MP4Muxer`` after
    /// the last packet).
    static func adapt(_ track: Track, firstPacket: [UInt8]?, path: String) throws -> Track {
        var t = track
        let codec = t.parameters.codec
        let i = track.index
        guard codecs.contains(codec) else {
            let why = refusals[codec] ?? "MP4 carries \(codecs.map(\.rawValue).joined(separator: ", ")) from other containers"
            throw MediaError(.unsupported, "MP4 cannot carry track \(i) (\(codec.isUnknown ? "an unknown codec" : codec.rawValue)): \(why)", path: path)
        }
        if (codec == "h264" || codec == "hevc") && t.parameters.extradata.isEmpty, let firstPacket {
            // An Annex B stream with its parameter sets in-band (MPEG-TS): they become the
            // extradata the muxer builds the avcC / hvcC from (``AnnexBConversion``).
            do { t.parameters.extradata = try AnnexBConversion.parameterSets(codec: codec, firstPacket: firstPacket, track: i) }
            catch let e as MediaError { throw e.at(path: path) }
        }
        let timeBase = trackTimeBase(track)
        if timeBase != t.timeBase {
            // The track's own scale (the packets are rescaled by ``PacketRetimer``): its
            // duration and edits' media times with it.
            t.duration = Rational.rescale(t.duration, from: t.timeBase, to: timeBase)
            for e in t.editList.indices where !t.editList[e].isEmpty {
                t.editList[e].mediaTime = Rational.rescale(t.editList[e].mediaTime, from: t.timeBase, to: timeBase)
            }
            t.timeBase = timeBase
        }
        if t.editList.isEmpty && !t.trimsOnPackets && t.duration > 0 && t.encoderDelay >= 0 && t.encoderPadding >= 0
            && (t.encoderDelay > 0 || t.encoderPadding > 0) {
            t.movieTimeScale = t.timeBase.denominator / max(1, t.timeBase.numerator)
            // Both trims are at least 0 and the duration positive: the difference cannot overflow.
            let kept = t.duration - Int64(t.encoderDelay) - Int64(t.encoderPadding)
            t.editList = [EditListEntry(segmentDuration: max(0, kept), mediaTime: Int64(t.encoderDelay), mediaRate: 1)]
        }
        switch codec {
        case "vp9":
            guard let vpcC = CodecConfigRecords.vpcC(t.parameters, codecPrivate: t.parameters.extradata, keyFrame: firstPacket,
                                                     frameRate: t.frameRate) else {
                throw MediaError(.invalidArgument, "track \(i) (vp9): neither its CodecPrivate nor its first frame (not a key frame) states the VP9 profile for the MP4 vpcC box",
                                 path: path)
            }
            t.parameters.extradata = vpcC
        case "av1" where t.parameters.extradata.isEmpty:
            guard let av1C = firstPacket.flatMap({ CodecConfigRecords.av1C(temporalUnit: $0) }) else {
                throw MediaError(.invalidArgument, "track \(i) (av1): its first temporal unit has no sequence header OBU (or one that does not parse) to build the MP4 av1C from",
                                 path: path)
            }
            t.parameters.extradata = av1C
        case "ac3":
            guard let dac3 = firstPacket.flatMap(CodecConfigRecords.dac3) else {
                throw MediaError(.invalidArgument, "track \(i) (ac3): its first packet is not an AC-3 syncframe (0x0B77, bsid <= 10), so there is no dac3 for MP4",
                                 path: path)
            }
            t.parameters.extradata = dac3
        case "eac3":
            var e = EAC3Track()
            do { _ = try firstPacket.map { try e.read($0, track: i) } } catch let x as MediaError { throw x.at(path: path) }
            guard let dec3 = e.dec3 else {
                throw MediaError(.invalidArgument, "track \(i) (eac3): its first packet is not an E-AC-3 frame (0x0B77), so there is no dec3 for MP4",
                                 path: path)
            }
            t.parameters.extradata = dec3
        case "opus":
            t.timeBase = Rational(1, 48000)
            t.movieTimeScale = 0
            t.editList = t.encoderDelay > 0 ? [EditListEntry(segmentDuration: 0, mediaTime: Int64(t.encoderDelay), mediaRate: 1)] : []
        default: break
        }
        return t
    }
}
