/// One frame of the raw audio streams ``AudioStreamParser`` reads besides MPEG audio and ADTS:
/// AC-3 and E-AC-3 (ATSC A/52, ``AC3Header``), DTS (ETSI TS 102 114, ``DTSHeader``; 16-bit
/// big-endian words) and the AMR-NB / AMR-WB storage format (RFC 4867 section 5).
///
/// A packet is what FFmpeg's parsers make of the stream: an AC-3 / E-AC-3 frame with the
/// E-AC-3 dependent frames after it (a 7.1 stream's extra channels), a DTS core frame with the
/// extension substreams after it (DTS-HD), an AMR frame (its table-of-contents byte, then the
/// size its frame type gives).
struct RawAudioFrame: Hashable {
    /// The codec family of a stream; it does not change within one.
    enum Family: Hashable {
        case ac3, dts, amrNB, amrWB

        /// The storage format's name, as FFmpeg's demuxers are named.
        var fileFormat: String {
            switch self {
            case .ac3: return "ac3"
            case .dts: return "dts"
            case .amrNB, .amrWB: return "amr"
            }
        }
    }

    let family: Family
    /// "ac3", "eac3", "dts", "amr_nb" or "amr_wb".
    let codec: CodecID
    /// Bytes of the frame its header states (without what ``attachment(_:at:to:)`` adds).
    let size: Int
    /// Samples per channel it decodes to.
    let samples: Int
    let sampleRate: Int
    /// 0 when the header does not say. DTS: the core's, or those of the extension substream's
    /// first asset (see ``AudioStreamParser``, which reads them once the packet is whole).
    var channels: Int
    /// AC-3 / E-AC-3: its header (dependent frames are told by it).
    let ac3: AC3Header?
    /// DTS: its header (a core frame or an extension substream).
    let dts: DTSHeader?

    /// The storage format's name, as FFmpeg's demuxers are named: "eac3" for a stream whose first
    /// frame is E-AC-3 (FFmpeg's raw `eac3`), else the family's.
    var fileFormat: String { codec == "eac3" ? "eac3" : family.fileFormat }

    /// Bytes needed at a frame's start to read its header (and to tell an attachment).
    static let headerBytes = 16

    /// RFC 4867 section 5.3 (and FFmpeg's amr demuxer): bytes of an AMR-NB storage frame, its
    /// table-of-contents byte included, by frame type: the speech modes 0 to 7, SID (8), the
    /// reserved types and NO_DATA (15) as the ToC byte alone.
    static let amrNBSizes = [13, 14, 16, 18, 20, 21, 27, 32, 6, 1, 1, 1, 1, 1, 1, 1]
    /// The same for AMR-WB: the modes 0 to 8, SID (9), the rest the ToC byte alone.
    static let amrWBSizes = [18, 24, 33, 37, 41, 47, 51, 59, 61, 6, 1, 1, 1, 1, 1, 1]
    /// The storage format's magic numbers (RFC 4867 section 5.1), single channel.
    static let amrNBMagic = Array("#!AMR\n".utf8)
    static let amrWBMagic = Array("#!AMR-WB\n".utf8)

    /// The frame at `index` of `b` in a stream of `family` (nil: any family with a sync word,
    /// AC-3 / E-AC-3 or DTS; AMR has none, its family comes from the magic number). Nil when no
    /// header is there or too few bytes remain to read it.
    init?(_ b: [UInt8], at index: Int, family: Family?) {
        guard index >= 0, index < b.count else { return nil }
        switch family {
        case .amrNB?, .amrWB?:
            let wide = family == .amrWB
            let type = Int(b[index] >> 3) & 0x0F
            self.init(family: wide ? .amrWB : .amrNB, codec: wide ? "amr_wb" : "amr_nb",
                      size: (wide ? Self.amrWBSizes : Self.amrNBSizes)[type], samples: wide ? 320 : 160,
                      sampleRate: wide ? 16000 : 8000, channels: 1, ac3: nil, dts: nil)
        case .ac3?:
            guard let h = AC3Header(b, at: index) else { return nil }
            self.init(ac3: h)
        case .dts?:
            guard let h = DTSHeader(b, at: index) else { return nil }
            self.init(dts: h)
        case nil:
            if let h = AC3Header(b, at: index) {
                self.init(ac3: h)
            } else if let h = DTSHeader(b, at: index) {
                self.init(dts: h)
            } else {
                return nil
            }
        }
    }

    private init(family: Family, codec: CodecID, size: Int, samples: Int, sampleRate: Int, channels: Int, ac3: AC3Header?, dts: DTSHeader?) {
        self.family = family
        self.codec = codec
        self.size = size
        self.samples = samples
        self.sampleRate = sampleRate
        self.channels = channels
        self.ac3 = ac3
        self.dts = dts
    }

    private init(ac3 h: AC3Header) {
        self.init(family: .ac3, codec: h.codec, size: h.frameSize, samples: h.samplesPerFrame, sampleRate: h.sampleRate,
                  channels: h.channels, ac3: h, dts: nil)
    }

    private init(dts h: DTSHeader) {
        self.init(family: .dts, codec: "dts", size: h.frameSize, samples: h.samples, sampleRate: h.sampleRate,
                  channels: h.channels, ac3: nil, dts: h)
    }

    /// Bits per second the frame's size and duration make.
    var bitRate: Int { samples > 0 ? size * 8 * sampleRate / samples : 0 }

    /// True when `next` belongs to the same stream: the same codec and sample rate (the channels
    /// of AC-3 may change from one programme to the next, as in a broadcast).
    func continues(_ next: RawAudioFrame) -> Bool {
        family == next.family && codec == next.codec && sampleRate == next.sampleRate
    }

    /// The size of the part at `index` of `b` that belongs to the packet of `first` (FFmpeg's
    /// parsers join them): an E-AC-3 dependent frame, a DTS extension substream after a core
    /// frame. Nil when the bytes there start the next packet (or are no frame).
    static func attachment(_ b: [UInt8], at index: Int, to first: RawAudioFrame) -> Int? {
        switch first.family {
        case .ac3:
            guard first.codec == .eac3, let h = AC3Header(b, at: index), h.isEAC3, h.streamType == 1 else { return nil }
            return h.frameSize
        case .dts:
            // Substreams join a core frame; in a stream without a core each substream is a packet.
            guard first.dts?.isCore == true, let h = DTSHeader(b, at: index), !h.isCore else { return nil }
            return h.frameSize
        case .amrNB, .amrWB:
            return nil
        }
    }
}
