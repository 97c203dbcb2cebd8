/// The duration of a DTS frame, from its core header (ETSI TS 102 114 5.3: the 7FFE8001 sync
/// word, NBLKS and SFREQ) or, for a stream without a core (DTS Express, DTS-HD only), from the
/// extension substream header (7.4: the 64582025 sync word, the reference clock and the frame
/// duration code).
public struct DTSHeader: Sendable, Hashable {
    /// Samples per channel in the frame.
    public let samples: Int
    /// Samples per second (the core's rate, or the substream's reference clock).
    public let sampleRate: Int

    private static let coreRates = [0, 8000, 16000, 32000, 0, 0, 11025, 22050, 44100, 0, 0, 12000, 24000, 48000, 0, 0]
    private static let referenceClocks = [32000, 44100, 48000, 0]

    /// Reads the header at the start of `b`; nil when `b` starts with neither sync word or the
    /// header states a reserved rate.
    public init?(_ b: [UInt8]) {
        guard b.count >= 12 else { return nil }
        var r = BitReader(Array(b.prefix(16)))
        guard let sync = r.read(32) else { return nil }
        if sync == 0x7FFE_8001 {
            guard r.read(7) != nil, let blocks = r.read(7), r.read(14) != nil, r.read(6) != nil, let rate = r.read(4),
                  Self.coreRates[rate] > 0, blocks >= 5 else { return nil }
            samples = (blocks + 1) * 32
            sampleRate = Self.coreRates[rate]
        } else if sync == 0x6458_2025 {
            guard r.read(10) != nil, let longHeader = r.read(1) else { return nil }
            guard r.read(longHeader == 1 ? 32 : 24) != nil, r.read(1) == 1,
                  let clock = r.read(2), let code = r.read(3), Self.referenceClocks[clock] > 0 else { return nil }
            samples = 512 * (code + 1)
            sampleRate = Self.referenceClocks[clock]
        } else {
            return nil
        }
    }
}
