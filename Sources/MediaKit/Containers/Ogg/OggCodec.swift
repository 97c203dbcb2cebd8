/// The codecs the Ogg demuxer recognises from a stream's first packet (its magic, as FFmpeg's
/// oggdec matches them).
enum OggCodec: Equatable {
    case opus, vorbis, theora, flac, speex, unknown

    /// Identifies a codec from the first bytes of a stream's first packet (its BOS page).
    static func identify(_ p: ArraySlice<UInt8>) -> OggCodec {
        func starts(_ magic: [UInt8]) -> Bool { p.count >= magic.count && p.prefix(magic.count).elementsEqual(magic) }
        if starts(Array("OpusHead".utf8)) { return .opus }
        if starts([1] + Array("vorbis".utf8)) { return .vorbis }
        if starts([0x80] + Array("theora".utf8)) { return .theora }
        if starts([0x7F] + Array("FLAC".utf8)) { return .flac }
        if starts(SpeexHeader.magic) { return .speex }
        return .unknown
    }

    /// FFmpeg's codec name.
    var name: String {
        switch self {
        case .opus: return "opus"
        case .vorbis: return "vorbis"
        case .theora: return "theora"
        case .flac: return "flac"
        case .speex: return "speex"
        case .unknown: return ""
        }
    }
}
