/// The size, duration and channels of a DTS frame, from its core header (ETSI TS 102 114 5.3: the 7FFE8001 sync
/// word, NBLKS, FSIZE, AMODE, SFREQ, LFF) or, for a stream without a core (DTS Express, DTS-HD only), from the
/// extension substream header (7.4: the 64582025 sync word, the reference clock and the frame
/// duration code).
public struct DTSHeader: Sendable, Hashable {
    /// Samples per channel in the frame.
    public let samples: Int
    /// Samples per second (the core's rate, or the substream's reference clock).
    public let sampleRate: Int
    /// Bytes in the frame: the core's FSIZE + 1, or the extension substream's nuExtSSFsize + 1
    /// (a core frame's extension substreams follow it and are not counted here).
    public let frameSize: Int
    /// Channels of the core (AMODE, plus one for an LFE channel), or of an extension substream's
    /// first asset (nuTotalNumChs: 8 for DTS-HD MA 7.1 over a 5.1 core); 0 when the substream
    /// header has no static fields or is not all in the bytes given.
    public let channels: Int
    /// True for a core frame (7FFE8001), false for an extension substream (64582025).
    public let isCore: Bool

    private static let coreRates = [0, 8000, 16000, 32000, 0, 0, 11025, 22050, 44100, 0, 0, 12000, 24000, 48000, 0, 0]
    private static let referenceClocks = [32000, 44100, 48000, 0]
    // AMODE -> channels (ETSI TS 102 114 table 5-4); 16 and above are user defined.
    private static let amodeChannels = [1, 2, 2, 2, 2, 3, 3, 4, 4, 5, 6, 6, 6, 7, 8, 8]

    /// Reads the header at the start of `b`; nil when `b` starts with neither sync word or the
    /// header states a reserved rate.
    public init?(_ b: [UInt8]) { self.init(b, at: 0) }

    /// Reads the header at `index` of `b`; nil when there is neither sync word, the header
    /// states a reserved rate or a frame smaller than its header, or fewer than 12 bytes remain.
    public init?(_ b: [UInt8], at index: Int) {
        guard index >= 0, index + 12 <= b.count else { return nil }
        var r = BitReader(Array(b[index..<min(b.count, index + 16)]))
        guard let sync = r.read(32) else { return nil }
        if sync == 0x7FFE_8001 {
            guard r.read(7) != nil, let blocks = r.read(7), let fsize = r.read(14), let amode = r.read(6), let rate = r.read(4),
                  Self.coreRates[rate] > 0, blocks >= 5, fsize >= 95 else { return nil }
            // RATE, the fixed bit, DYNF, TIMEF, AUXF, HDCD, EXT_AUDIO_ID, EXT_AUDIO, ASPF, then LFF.
            guard r.read(5 + 1 + 1 + 1 + 1 + 1 + 3 + 1 + 1) != nil, let lff = r.read(2) else { return nil }
            samples = (blocks + 1) * 32
            sampleRate = Self.coreRates[rate]
            frameSize = fsize + 1
            channels = (amode < 16 ? Self.amodeChannels[amode] : 0) + (lff != 0 ? 1 : 0)
            isCore = true
        } else if sync == 0x6458_2025 {
            guard r.read(8) != nil, let ssIndex = r.read(2), let longHeader = r.read(1) else { return nil }
            guard let headerSize = r.read(longHeader == 1 ? 12 : 8), let fsize = r.read(longHeader == 1 ? 20 : 16),
                  r.read(1) == 1, let clock = r.read(2), let code = r.read(3), Self.referenceClocks[clock] > 0,
                  fsize >= headerSize else { return nil }
            samples = 512 * (code + 1)
            sampleRate = Self.referenceClocks[clock]
            frameSize = fsize + 1
            var whole = BitReader(Array(b[index..<min(b.count, index + headerSize + 1)]))
            channels = Self.firstAssetChannels(&whole, substreamIndex: ssIndex, longHeader: longHeader == 1) ?? 0
            isCore = false
        } else {
            return nil
        }
    }

    /// nuTotalNumChs of the first asset descriptor of an extension substream header whose
    /// static fields are present (ETSI TS 102 114 7.5.1 and 7.5.2), read from its sync word on;
    /// nil when the bytes end first.
    private static func firstAssetChannels(_ r: inout BitReader, substreamIndex: Int, longHeader: Bool) -> Int? {
        // Sync, user bits, index, header size type, header and frame sizes, static fields flag.
        guard r.read(32 + 8 + 2 + 1) != nil, r.read(longHeader ? 32 : 24) != nil, r.read(1) == 1 else { return nil }
        guard r.read(2 + 3) != nil, let hasTimeStamp = r.read(1) else { return nil }
        if hasTimeStamp == 1 { guard r.read(36) != nil else { return nil } }
        guard let presentations = r.read(3).map({ $0 + 1 }), let assets = r.read(3).map({ $0 + 1 }) else { return nil }
        var masks: [Int] = []
        for _ in 0..<presentations {
            guard let m = r.read(substreamIndex + 1) else { return nil }
            masks.append(m)
        }
        for m in masks {
            for ss in 0...substreamIndex where m >> ss & 1 == 1 { guard r.read(8) != nil else { return nil } }
        }
        guard let mixing = r.read(1) else { return nil }
        if mixing == 1 {
            guard r.read(2) != nil, let bits = r.read(2).map({ ($0 + 1) << 2 }), let configs = r.read(2).map({ $0 + 1 }) else { return nil }
            for _ in 0..<configs { guard r.read(bits) != nil else { return nil } }
        }
        for _ in 0..<assets { guard r.read(longHeader ? 20 : 16) != nil else { return nil } }
        // The first asset descriptor: its size and index, then the static fields.
        guard r.read(9 + 3) != nil, let typed = r.read(1) else { return nil }
        if typed == 1 { guard r.read(4) != nil else { return nil } }
        guard let language = r.read(1) else { return nil }
        if language == 1 { guard r.read(24) != nil else { return nil } }
        guard let hasText = r.read(1) else { return nil }
        if hasText == 1 {
            guard let n = r.read(10) else { return nil }
            guard r.read(8 * (n + 1)) != nil else { return nil }
        }
        guard r.read(5 + 4) != nil, let total = r.read(8) else { return nil }
        return total + 1
    }
}
