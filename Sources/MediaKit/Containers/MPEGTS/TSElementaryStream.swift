/// One elementary stream of an MPEG-TS program: what the PMT says of it, its PES reassembly
/// state, and how its PES payloads become packets as FFmpeg's parsers cut them (video: one
/// access unit per PES, handed out one PES late as the h264 / hevc parsers do; audio: the
/// frames of ADTS, LOAS / LATM, MPEG audio and AC-3 / E-AC-3 streams, whatever PES they
/// straddle; other streams: one packet per PES).
final class TSElementaryStream {
    /// How the payload is cut into packets.
    enum Framing: Equatable {
        case h264, hevc, mpegVideo, adts, mpegAudio, ac3, dts, opus, whole
        /// AAC in LATM: one packet per LOAS frame, sync header included (FFmpeg's latm parser).
        case latm
        /// Timed ID3: one key-frame packet per PES, as it is, no duration (FFmpeg has no parser
        /// for it and flags its packets so).
        case timedID3
        /// DVB subtitles (EN 300 743): one packet per PES, its segments without the PES data
        /// field's data_identifier, stream id and end marker (FFmpeg's dvbsub parser).
        case dvbSubtitle
        /// Blu-ray PGS subtitles (stream type 0x90 of an HDMV program): one packet per PES, as it
        /// is (FFmpeg has no parser for them), every one a key frame (libavformat flags every
        /// subtitle packet so), no duration.
        case pgs
    }

    let pid: Int
    let index: Int
    let streamType: UInt8
    let framing: Framing
    var parameters: CodecParameters
    /// True once the first frame told the rate / channels (audio) or the parameter sets (video).
    @exclusivity(unchecked) var parametersKnown = false
    var unsupportedReason: String?
    /// The PMT's ISO 639 language descriptor, as FFmpeg gives it (see MPEGTSDemuxer.language).
    var language: String?

    // PES reassembly. The state touched per transport packet has no dynamic exclusivity
    // check (`@exclusivity(unchecked)`): a stream belongs to one demuxer, which is used from one
    // thread at a time and never holds an access across a call; the checks were a quarter
    // of the time of reading a transport stream.
    @exclusivity(unchecked) var pes: [UInt8] = []
    /// The open PES's header when it came whole in its first transport packet (`pes` then holds
    /// the payload only); empty when `pes` holds the PES from its first byte.
    @exclusivity(unchecked) var pesHead: [UInt8] = []
    @exclusivity(unchecked) var pesPosition: Int64 = -1
    /// The open PES's payload bytes in the transport packet its header ended in (`Int.max`
    /// when the header spanned packets): FFmpeg drops a stream type 0x15 PES's first 5 bytes
    /// only when that packet holds 5 (see `MPEGTSDemuxer.finishPES`).
    @exclusivity(unchecked) var pesFirstPayload = 0
    /// The open PES's header bytes: `pesHead`, or the PES itself when its header was not kept apart.
    var pesHeader: [UInt8] { pesHead.isEmpty ? pes : pesHead }
    /// The open PES's bytes in all, header and payload.
    var pesCount: Int { pesHead.count + pes.count }
    /// Where the open PES ends, in bytes from its first (6 + PES_packet_length), once its
    /// first 6 bytes came: 0 for a PES of unstated length, -1 before those bytes came.
    @exclusivity(unchecked) var pesEnd = -1
    /// The size of the PES before the open one: the capacity to reserve for the next, so an
    /// unbounded video PES does not grow (and copy) its buffer packet after packet.
    @exclusivity(unchecked) var pesCapacityHint = 0
    /// Forgets the open PES.
    func dropPES() {
        pesCapacityHint = pes.count
        pes = []; pesHead = []; pesActive = false; pesEnd = -1
    }
    /// Sets ``pesEnd`` from the header bytes once at least 6 came; stays -1 before.
    func learnPESEnd() {
        let head = pesHeader
        guard head.count >= 6 else { return }
        let length = Int(head[4]) << 8 | Int(head[5])
        pesEnd = length == 0 ? 0 : 6 + length
    }
    @exclusivity(unchecked) var pesActive = false
    /// True once the open PES passed 200 KiB (see `MPEGTSDemuxer.parserChunk`).
    @exclusivity(unchecked) var pesFedEarly = false
    @exclusivity(unchecked) var lastCC = -1
    @exclusivity(unchecked) var sawPacket = false

    // Framing state: bytes of the elementary stream not cut into frames yet, where each PES
    // began in them (offsets count from the stream's first byte), and the previous frame's start.
    @exclusivity(unchecked) var pending: [UInt8] = []
    @exclusivity(unchecked) var pendingBase: Int64 = 0
    @exclusivity(unchecked) var starts: [(offset: Int64, end: Int64, pts: Int64, dts: Int64, position: Int64)] = []
    @exclusivity(unchecked) var previousFrameStart: Int64 = -1
    /// The next timestamp FFmpeg would give a frame without one (its `cur_dts`).
    @exclusivity(unchecked) var nextTimestamp = Packet.noTimestamp
    var skippedBytes = 0
    /// Video: the access unit held back until the next one comes (the parsers' delay).
    @exclusivity(unchecked) var held: Packet?
    /// Video: a PES without pictures (parameter sets alone), joined to the next one.
    @exclusivity(unchecked) var prefix: Packet?
    /// Video: the frame duration from the parameter sets, or for H.264 / HEVC whose parameter
    /// sets state none, of the rate guessed from the timestamps at open (0 when neither).
    @exclusivity(unchecked) var frameTicks: Int64 = 0
    /// Video: the parameter sets state a rate (their timing), even one whose frame is under a
    /// tick of the 90 kHz clock (``frameTicks`` then stays 0, as FFmpeg gives no duration).
    var rateStated = false
    /// Audio: the samples per frame and the rate of the first frame header (LATM: of the last
    /// StreamMuxConfig, which cuts its frames); 0 before one.
    var audioFrame = (samples: 0, rate: 0)

    init(pid: Int, index: Int, streamType: UInt8, framing: Framing, parameters: CodecParameters) {
        self.pid = pid
        self.index = index
        self.streamType = streamType
        self.framing = framing
        self.parameters = parameters
    }

    /// Forgets what was read (the open PES, the bytes not cut into frames, the held access
    /// unit), keeping what was learned of the stream: reading goes on elsewhere.
    func restart() {
        dropPES(); lastCC = -1
        pending = []; pendingBase = 0; starts = []; previousFrameStart = -1
        nextTimestamp = Packet.noTimestamp; held = nil; prefix = nil
    }

    /// Takes what `other` (the same PID read by another reader) learned of the stream: its
    /// parameters and what comes with them.
    func learn(from other: TSElementaryStream) {
        parameters = other.parameters
        parametersKnown = other.parametersKnown
        unsupportedReason = other.unsupportedReason
        frameTicks = other.frameTicks
        rateStated = other.rateStated
        audioFrame = other.audioFrame
    }

    /// A new stream with what this one is and learned, nothing read yet.
    func definition() -> TSElementaryStream {
        let s = TSElementaryStream(pid: pid, index: index, streamType: streamType, framing: framing, parameters: parameters)
        s.language = language
        s.learn(from: self)
        return s
    }

    /// What PMT entry makes which stream: FFmpeg's stream type table (mpegts.c
    /// `ISO_types`, `HDMV_types`, the registration descriptors, descriptor 0x6A / 0x7A /
    /// 0x7A of DVB, and the metadata descriptor's format, `METADATA_types`); anything else (Opus's 'Opus' registration included: its control headers are
    /// not stripped yet) a data track that keeps its stream type as its tag.
    static func classify(streamType: UInt8, descriptors: [(tag: UInt8, body: [UInt8])], registration: String?,
                         programRegistration: String?) -> (Framing, CodecParameters) {
        func audio(_ c: CodecID) -> CodecParameters { CodecParameters(mediaType: .audio, codec: c, codecTag: tag(streamType)) }
        func video(_ c: CodecID) -> CodecParameters { CodecParameters(mediaType: .video, codec: c, codecTag: tag(streamType)) }
        switch streamType {
        case MPEGTS.StreamType.h264: return (.h264, video(.h264))
        case MPEGTS.StreamType.hevc: return (.hevc, video(.hevc))
        case 0x01, 0x02: return (.mpegVideo, video("mpeg2video"))   // FFmpeg reads MPEG-1 video as mpeg2video too
        case MPEGTS.StreamType.adtsAAC: return (.adts, audio(.aac))
        case MPEGTS.StreamType.latmAAC: return (.latm, audio(.aacLATM))
        case 0x03, 0x04: return (.mpegAudio, audio(streamType == 0x03 ? .mp2 : .mp3))
        case MPEGTS.StreamType.ac3: return (.ac3, audio(.ac3))
        case MPEGTS.StreamType.eac3: return (.ac3, audio(.eac3))
        case 0x84, 0xA1:   // Blu-ray's E-AC-3 (HDMV_types)
            if programRegistration == "HDMV" || programRegistration == "HDPR" { return (.ac3, audio(.eac3)) }
        case 0x82, 0x85, 0x86, 0x8A: return (.dts, audio("dts"))   // FFmpeg's MISC / HDMV DTS types
        case 0x90:   // Blu-ray's Presentation Graphics (HDMV_types)
            if programRegistration == "HDMV" || programRegistration == "HDPR" {
                return (.pgs, CodecParameters(mediaType: .subtitle, codec: "hdmv_pgs_subtitle", codecTag: tag(streamType)))
            }
        case 0x06:
            if let d = descriptors.first(where: { $0.tag == 0x59 }) { return (.dvbSubtitle, dvbSubtitle(d.body)) }
            if descriptors.contains(where: { $0.tag == 0x6A }) { return (.ac3, audio(.ac3)) }
            if descriptors.contains(where: { $0.tag == 0x7A }) { return (.ac3, audio(.eac3)) }
            if descriptors.contains(where: { $0.tag == 0x7B }) { return (.dts, audio("dts")) }
        default: break
        }
        // A registration descriptor names the codec of a stream type FFmpeg's tables leave
        // unknown (its REGD_types).
        switch registration {
        case "AC-3": return (.ac3, audio(.ac3))
        case "EAC3": return (.ac3, audio(.eac3))
        case "HEVC": return (.hevc, video(.hevc))
        case "DTS1", "DTS2", "DTS3": return (.dts, audio("dts"))
        case "ID3 ": return (.timedID3, CodecParameters(mediaType: .data, codec: .timedID3, codecTag: tag(streamType)))
        case "Opus" where streamType == 0x06:
            // ETSI TS 102 366-ish Opus in TS: the extension descriptor (0x7F, 0x80) gives the
            // channel configuration, from which FFmpeg builds an OpusHead (mpegts.c's tables).
            guard let ext = descriptors.first(where: { $0.tag == 0x7F && $0.body.count >= 2 && $0.body[0] == 0x80 }),
                  ext.body[1] <= 8 else { break }
            let code = Int(ext.body[1])
            let channels = code == 0 ? 2 : code
            let streamCounts = MPEGTS.opusStreamCounts, coupledCounts = MPEGTS.opusCoupledCounts, maps = MPEGTS.opusChannelMaps
            var head = Array("OpusHead".utf8) + [1, UInt8(channels), 0, 0, 0x80, 0xBB, 0, 0, 0, 0]
            head.append(code == 0 ? 255 : (channels > 2 ? 1 : 0))
            if channels > 2 { head += [UInt8(streamCounts[code]), UInt8(coupledCounts[code])] + maps[channels - 1] }
            var p = audio(.opus)
            p.sampleRate = 48000
            p.channels = channels
            p.extradata = head
            return (.opus, p)
        default: break
        }
        if metadataFormat(descriptors) == "ID3 " {
            return (.timedID3, CodecParameters(mediaType: .data, codec: .timedID3, codecTag: tag(streamType)))
        }
        return (.whole, CodecParameters(mediaType: .data, codec: .unknown, codecTag: tag(streamType)))
    }

    /// The metadata_format_identifier of a metadata descriptor (0x26, ISO/IEC 13818-1
    /// 2.6.60): after the application format (16 bits, and its 32-bit identifier when it is
    /// 0xFFFF), a format of 0xFF is followed by a 4-character identifier ("ID3 " for timed
    /// ID3, as HLS writes it); nil when the first such descriptor has none.
    static func metadataFormat(_ descriptors: [(tag: UInt8, body: [UInt8])]) -> String? {
        guard let d = descriptors.first(where: { $0.tag == 0x26 })?.body, d.count >= 2 else { return nil }
        let i = d[0] == 0xFF && d[1] == 0xFF ? 6 : 2
        guard i + 5 <= d.count, d[i] == 0xFF else { return nil }
        return String(decoding: d[(i + 1)..<(i + 5)], as: UTF8.self)
    }

    /// A DVB subtitle stream of private data (stream type 0x06) with a subtitling descriptor
    /// (0x59): its extradata is FFmpeg's (mpegts.c, SUBTITLING_DESCRIPTOR): for each 8-byte
    /// entry (ISO 639 language, subtitling_type, composition_page_id, ancillary_page_id) the two
    /// page ids then the subtitling type, 5 bytes.
    static func dvbSubtitle(_ descriptor: [UInt8]) -> CodecParameters {
        var p = CodecParameters(mediaType: .subtitle, codec: "dvb_subtitle", codecTag: tag(0x06))
        var i = 0
        while i + 8 <= descriptor.count {
            p.extradata += descriptor[(i + 4)..<(i + 8)] + [descriptor[i + 3]]
            i += 8
        }
        return p
    }

    /// The languages of a DVB subtitling descriptor (0x59), joined with "," as FFmpeg's
    /// mpegts demuxer sets the stream's language from it; nil when it has no entry.
    static func dvbSubtitleLanguages(_ descriptor: [UInt8]) -> String? {
        var codes: [String] = []
        var i = 0
        while i + 8 <= descriptor.count {
            codes.append(String(decoding: descriptor[i..<(i + 3)], as: UTF8.self))
            i += 8
        }
        return codes.isEmpty ? nil : codes.joined(separator: ",")
    }

    /// A DVB subtitle PES payload as FFmpeg's dvbsub parser hands it out: after the
    /// data_identifier (0x20) and subtitle_stream_id (0x00), the segments (sync byte 0x0F,
    /// type, page id, 16-bit length, data) up to the end marker (0xFF); a payload that does not
    /// start so is given whole.
    static func dvbSubtitleSegments(_ payload: [UInt8]) -> [UInt8] {
        guard payload.count >= 2, payload[0] == 0x20, payload[1] == 0x00 else { return payload }
        var i = 2
        while i + 6 <= payload.count, payload[i] == 0x0F {
            let length = Int(payload[i + 4]) << 8 | Int(payload[i + 5])
            guard i + 6 + length <= payload.count else { break }
            i += 6 + length
        }
        return Array(payload[2..<i])
    }

    /// The stream type as a tag: "0x1b".
    static func tag(_ t: UInt8) -> String { "0x" + String(t, radix: 16) }
}
