/// The fields of an MPEG-4 AudioSpecificConfig (ISO/IEC 14496-3 1.6.2.1) that describe
/// what a decoder outputs.
///
/// HE-AAC is signalled three ways, and the output rate and channel count depend on which:
/// hierarchically (object type 5 = SBR or 29 = PS, then the extension rate and the core
/// object type), by a backward-compatible sync extension after the core's specific config
/// (0x2B7, then object type 5, the SBR flag and rate, then 0x548 and the PS flag), or not at
/// all (implicit: only the audio data tells, so only a decoder knows). The rules for what
/// the signalling means are FFmpeg's (`avpriv_mpeg4audio_get_config2` and the AAC decoder's
/// channel set-up), so the facts equal what `ffprobe` reports.
struct AudioSpecificConfig {
    /// The core's audio object type (2 for AAC LC) after any SBR / PS wrapper.
    var objectType = 0
    /// The core's sampling rate.
    var sampleRate = 0
    /// The SBR (output) sampling rate when SBR is signalled, else 0.
    var extensionSampleRate = 0
    /// The channel configuration (0: in a program config element).
    var channelConfig = 0
    /// SBR: 1 signalled present, 0 signalled absent, -1 not signalled (implicit).
    var sbr = -1
    /// Parametric stereo: 1 signalled, 0 absent, -1 not signalled (may be present).
    var ps = -1

    static let rates = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350]
    static let channelCounts = [0, 1, 2, 3, 4, 5, 6, 8, 0, 0, 0, 7, 8, 0, 8]

    /// Channels of the core, from the channel configuration (0 when a PCE states them).
    var channels: Int { channelConfig < Self.channelCounts.count ? Self.channelCounts[channelConfig] : 0 }

    /// The rate a decoder outputs: the SBR rate when SBR is signalled, else the core's.
    var outputSampleRate: Int { extensionSampleRate > 0 ? extensionSampleRate : sampleRate }

    /// The channels a decoder outputs: a mono core with SBR signalled and parametric stereo
    /// not ruled out decodes to stereo (FFmpeg's decoder assumes PS may follow).
    var outputChannels: Int { channels == 1 && sbr == 1 && ps != 0 ? 2 : channels }

    init?(_ b: [UInt8]) {
        var bits = BitReader(b)
        func readObjectType() -> Int? {
            guard let t = bits.read(5) else { return nil }
            if t == 31 { guard let e = bits.read(6) else { return nil }; return 32 + e }
            return t
        }
        func rate() -> Int? {
            guard let i = bits.read(4) else { return nil }
            if i == 15 { return bits.read(24) }
            return i < Self.rates.count ? Self.rates[i] : 0
        }
        guard let t = readObjectType(), let r = rate(), let c = bits.read(4) else { return nil }
        objectType = t
        sampleRate = r
        channelConfig = c
        var hierarchical = false
        // Object type 29 followed by these bit patterns is the MP3-on-MP4 draft, not PS.
        if t == 5 || (t == 29 && !((bits.peek(3) ?? 0) & 3 != 0 && (bits.peek(9) ?? 0) & 0x3F == 0)) {
            hierarchical = true
            if t == 29 { ps = 1 }
            sbr = 1
            extensionSampleRate = rate() ?? 0
            objectType = readObjectType() ?? t
        }
        if !hierarchical {
            // Sync extension, searched bit by bit after the core's header as FFmpeg does.
            while bits.remaining > 15 {
                guard bits.peek(11) == 0x2B7 else { bits.bit += 1; continue }
                bits.bit += 11
                if readObjectType() == 5, let flag = bits.read(1) {
                    sbr = flag
                    if flag == 1 {
                        extensionSampleRate = rate() ?? 0
                        if extensionSampleRate == sampleRate { sbr = -1 }
                    }
                }
                if bits.remaining > 11, bits.read(11) == 0x548, let flag = bits.read(1) { ps = flag }
                break
            }
        }
        if sbr == 0 { ps = 0 }
        // Implicit PS only for an AAC LC core; PS needs a mono core.
        if (ps == -1 && objectType != 2) || channels & ~1 != 0 { ps = 0 }
    }
}
