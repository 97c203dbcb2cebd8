/// The MPEG-4 Elementary Stream Descriptor (ISO/IEC 14496-1 7.2.6.5) that carries an MPEG-4
/// audio or visual stream's decoder configuration: an ES_Descriptor (tag 3) holding a
/// DecoderConfigDescriptor (tag 4: object type, stream type, bit rates) holding the
/// DecoderSpecificInfo (tag 5: for AAC the AudioSpecificConfig), then an SLConfigDescriptor (tag 6).
///
/// Two containers store it: MP4's `esds` box (after the box's version and flags) and CAF's
/// magic cookie (`kuki`) of an AAC stream, where Apple writes the ES_Descriptor alone. Both
/// read and write it through this type.
enum ESDescriptor {
    /// What a decoder needs from the descriptor.
    struct Config: Equatable {
        /// The DecoderConfigDescriptor's objectTypeIndication (0x40: MPEG-4 audio).
        var objectType: UInt8
        /// The DecoderSpecificInfo (the AudioSpecificConfig for AAC); empty when there is none.
        var specificInfo: [UInt8]
        /// The DecoderConfigDescriptor's average bit rate (0: variable or unknown).
        var averageBitRate: Int
    }

    /// Reads the descriptors of `b`, which starts with the ES_Descriptor (or, as some writers
    /// leave it out, directly with the DecoderConfigDescriptor). nil when there is no
    /// DecoderConfigDescriptor with an object type. A descriptor whose length runs past the end
    /// is read as far as the bytes go.
    static func parse(_ b: [UInt8]) -> Config? {
        var i = 0
        func u8() -> UInt8? {
            guard i < b.count else { return nil }
            defer { i += 1 }
            return b[i]
        }
        func skip(_ n: Int) { i = min(b.count, i + max(0, n)) }
        // A tag and its length: up to four bytes of 7 bits, the top bit saying another follows.
        func descriptor() -> (tag: UInt8, length: Int)? {
            guard let tag = u8() else { return nil }
            var length = 0
            for _ in 0..<4 {
                guard let c = u8() else { return nil }
                length = length << 7 | Int(truncatingIfNeeded: c & 0x7F)
                if c & 0x80 == 0 { break }
            }
            return (tag, length)
        }
        let start = i
        guard let es = descriptor() else { return nil }
        switch es.tag {
        case 3:
            skip(2)                                        // ES_ID
            guard let flags = u8() else { return nil }
            if flags & 0x80 != 0 { skip(2) }               // dependsOn_ES_ID
            if flags & 0x40 != 0 { skip(Int(truncatingIfNeeded: u8() ?? 0)) }  // URL
            if flags & 0x20 != 0 { skip(2) }               // OCR_ES_Id
        case 4:
            i = start
        default:
            return nil
        }
        var config = Config(objectType: 0, specificInfo: [], averageBitRate: 0)
        while i < b.count, let d = descriptor() {
            switch d.tag {
            case 4:
                guard let o = u8() else { return nil }
                config.objectType = o
                skip(1 + 3 + 4)                            // stream type, buffer size, max bit rate
                if i + 4 <= b.count {
                    config.averageBitRate = Int(truncatingIfNeeded: be32(b, i))
                }
                skip(4)
                continue                                   // the DecoderSpecificInfo is nested inside
            case 5:
                config.specificInfo = Array(b[i..<min(b.count, i + d.length)])
                return config.objectType == 0 ? nil : config
            default:
                skip(d.length)
            }
        }
        return config.objectType == 0 ? nil : config
    }

    /// A descriptor: `tag`, the length in four bytes (the form every writer uses, and the one
    /// FFmpeg's CAF reader needs), `body`.
    static func descriptor(_ tag: UInt8, _ body: [UInt8]) -> [UInt8] {
        let n = body.count
        return [tag, UInt8(truncatingIfNeeded: 0x80 | ((n >> 21) & 0x7F)), UInt8(truncatingIfNeeded: 0x80 | ((n >> 14) & 0x7F)),
                UInt8(truncatingIfNeeded: 0x80 | ((n >> 7) & 0x7F)), UInt8(truncatingIfNeeded: n & 0x7F)] + body
    }

    /// An ES_Descriptor with `esID`, no flags, a DecoderConfigDescriptor of object type
    /// `objectType` (stream type audio, or visual when `video`) with `bitRate` as its average and
    /// `maxBitRate` (nil: `bitRate`) as its maximum, `specificInfo` as its DecoderSpecificInfo
    /// when not empty, and an SLConfigDescriptor of the predefined MP4 type (2).
    static func build(objectType: UInt8, specificInfo: [UInt8], bitRate: Int, maxBitRate: Int? = nil, esID: Int, video: Bool = false) -> [UInt8] {
        var dcd: [UInt8] = [objectType, video ? 0x11 : 0x15, 0, 0, 0]   // visual or audio stream, bufferSizeDB
        for v in [UInt32(clamping: maxBitRate ?? bitRate), UInt32(clamping: bitRate)] {
            dcd += [UInt8(truncatingIfNeeded: v >> 24), UInt8(truncatingIfNeeded: (v >> 16) & 0xFF),
                    UInt8(truncatingIfNeeded: (v >> 8) & 0xFF), UInt8(truncatingIfNeeded: v & 0xFF)]
        }
        if !specificInfo.isEmpty { dcd += descriptor(5, specificInfo) }
        let es: [UInt8] = [UInt8(truncatingIfNeeded: (esID >> 8) & 0xFF), UInt8(truncatingIfNeeded: esID & 0xFF), 0]
            + descriptor(4, dcd) + descriptor(6, [2])
        return descriptor(3, es)
    }
}
