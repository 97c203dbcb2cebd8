/// The sync frame header of AC-3 (ATSC A/52 5.3 `syncinfo` / `bsi`) and E-AC-3 (A/52 annex E):
/// what a reader that splits a stream into frames needs (size, rate, channels, samples).
public struct AC3Header: Sendable, Hashable {
    /// True for E-AC-3 (bsid 11 to 16), false for AC-3 (bsid up to 10).
    public let isEAC3: Bool
    /// The frame's size in bytes, sync word included.
    public let frameSize: Int
    /// Samples per second: for AC-3 the `fscod` rate halved by `bsid` 9 and quartered by 10
    /// (reduced-rate AC-3, as FFmpeg's parser reads it: its `sr_shift`).
    public let sampleRate: Int
    /// Channels, the LFE included.
    public let channels: Int
    /// Audio blocks of 256 samples in the frame (6 for AC-3; 1, 2, 3 or 6 for E-AC-3).
    public let blocks: Int
    /// E-AC-3: the stream type (0 independent, 1 dependent, 2 AC-3 converted); 0 for AC-3.
    public let streamType: Int
    /// E-AC-3: the substream id; 0 for AC-3.
    public let substreamID: Int
    /// The speakers as WAVE channel-mask bits, as FFmpeg lays out `acmod` and `lfeon` (A/52
    /// table 5.8: 1+1 and 2/0 stereo, 1/0 centre, 3/0, 2/1 with a back centre, 3/1, 2/2 and 3/2
    /// with side channels; LFE 0x8).
    public let channelMask: UInt64
    /// The bit stream identification (`bsid`): up to 10 for AC-3 (9 and 10 at half and
    /// quarter rates), 11 to 16 for E-AC-3.
    public let bitstreamID: Int
    /// The sample rate code (`fscod`): 0 48 kHz, 1 44.1 kHz, 2 32 kHz; 3 for an E-AC-3 frame at
    /// a reduced rate (`fscod2`).
    public let sampleRateCode: Int
    /// The bit stream mode (`bsmod`, the service type); 0 for E-AC-3, whose `bsmod` sits in
    /// the optional information FFmpeg's parser does not read.
    public let bitstreamMode: Int
    /// The audio coding mode (`acmod`, 0 for 1+1 to 7 for 3/2).
    public let audioCodingMode: Int
    /// True when the frame carries the LFE channel (`lfeon`).
    public let hasLFE: Bool
    /// Bits per second, as FFmpeg's parser states it: AC-3's `frmsizecod` rate (halved by
    /// `bsid` 9, quartered by 10); E-AC-3's frame size over its duration.
    public let bitRate: Int
    /// E-AC-3 dependent frame: its custom channel map (`chanmap`, 16 bits, A/52 table E.1.4)
    /// when `chanmape` is set; nil otherwise.
    public let channelMap: Int?

    /// Samples per channel in the frame.
    public var samplesPerFrame: Int { 256 * blocks }
    /// The codec: ``CodecID/ac3`` or ``CodecID/eac3``.
    public var codec: CodecID { isEAC3 ? .eac3 : .ac3 }

    private static let rates = [48000, 44100, 32000]
    // Words (16 bits) per frame at 48 kHz for frmsizecod / 2 (A/52 table 5.18); 44.1 kHz and
    // 32 kHz scale by the rate, 44.1 kHz adding one word for odd frmsizecod.
    private static let kbps = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640]
    // acmod -> full-band channels.
    private static let acmodChannels = [2, 1, 2, 3, 3, 4, 4, 5]
    // acmod -> speakers (FFmpeg's ff_ac3_channel_layout_tab).
    private static let acmodMasks: [UInt64] = [0x3, 0x4, 0x3, 0x7, 0x103, 0x107, 0x603, 0x607]

    /// Parses the header at `index` of `b`; nil when it is not one (no 0x0B77 sync word, a
    /// reserved rate or frame size code, an unknown bsid, too few bytes to tell).
    public init?(_ b: [UInt8], at index: Int = 0) {
        guard index >= 0, index + 7 <= b.count, b[index] == 0x0B, b[index + 1] == 0x77 else { return nil }
        let bsid = Int(b[index + 5] >> 3)
        var r = BitReader(Array(b[(index + 2)..<min(b.count, index + 16)]))
        if bsid <= 10 {
            guard let _ = r.read(16), let fscod = r.read(2), let frmsizecod = r.read(6),
                  fscod < 3, frmsizecod < 38 else { return nil }
            _ = r.read(5)                  // bsid, read above
            guard let bsmod = r.read(3), let acmod = r.read(3) else { return nil }
            if acmod & 1 == 1 && acmod != 1 { _ = r.read(2) }   // cmixlev
            if acmod & 4 == 4 { _ = r.read(2) }                  // surmixlev
            if acmod == 2 { _ = r.read(2) }                      // dsurmod
            guard let lfe = r.read(1) else { return nil }
            let shift = max(bsid, 8) - 8
            let rate = Self.rates[fscod]
            let kbits = Self.kbps[frmsizecod / 2]
            let words: Int
            switch fscod {
            case 0: words = kbits * 2
            case 1: words = kbits * 320 / 147 + (frmsizecod & 1)
            default: words = kbits * 3
            }
            isEAC3 = false
            frameSize = words * 2
            sampleRate = rate >> shift
            channels = Self.acmodChannels[acmod] + lfe
            channelMask = Self.acmodMasks[acmod] | (lfe == 1 ? 0x8 : 0)
            blocks = 6
            streamType = 0
            substreamID = 0
            bitstreamID = bsid
            sampleRateCode = fscod
            bitstreamMode = bsmod
            audioCodingMode = acmod
            hasLFE = lfe == 1
            bitRate = (kbits * 1000) >> shift
            channelMap = nil
        } else if bsid <= 16 {
            guard let strmtyp = r.read(2), let substreamid = r.read(3), let frmsiz = r.read(11),
                  let fscod = r.read(2) else { return nil }
            guard strmtyp != 3 else { return nil }
            let rate: Int, numblkscod: Int
            if fscod == 3 {
                guard let fscod2 = r.read(2), fscod2 < 3 else { return nil }
                rate = Self.rates[fscod2] / 2
                numblkscod = 3
            } else {
                guard let n = r.read(2) else { return nil }
                rate = Self.rates[fscod]
                numblkscod = n
            }
            guard let acmod = r.read(3), let lfe = r.read(1) else { return nil }
            // A dependent frame's custom channel map follows the volume fields (A/52 E.1.2.2:
            // bsid, dialnorm, compre / compr, again for 1+1, then chanmape / chanmap).
            var map: Int? = nil
            if strmtyp == 1 {
                _ = r.read(5)
                for _ in 0..<(acmod == 0 ? 2 : 1) {
                    _ = r.read(5)
                    if r.read(1) == 1 { _ = r.read(8) }
                }
                if r.read(1) == 1 { map = r.read(16) }
            }
            let size = (frmsiz + 1) * 2
            isEAC3 = true
            frameSize = size
            bitstreamID = bsid
            sampleRateCode = fscod
            bitstreamMode = 0
            audioCodingMode = acmod
            hasLFE = lfe == 1
            bitRate = 8 * size * rate / ([1, 2, 3, 6][numblkscod] * 256)
            channelMap = map
            sampleRate = rate
            channels = Self.acmodChannels[acmod] + lfe
            channelMask = Self.acmodMasks[acmod] | (lfe == 1 ? 0x8 : 0)
            blocks = [1, 2, 3, 6][numblkscod]
            streamType = strmtyp
            substreamID = substreamid
        } else {
            return nil
        }
        guard frameSize >= 7 else { return nil }
    }
}
