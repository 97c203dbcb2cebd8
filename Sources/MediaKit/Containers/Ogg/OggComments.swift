/// The comment header of an Ogg logical stream (Vorbis, Theora, Opus `OpusTags`, Speex, FLAC's
/// VORBIS_COMMENT block) read as the stream's tags, pictures and OGM chapters.
struct OggComments {
    /// The stream's tags (FFmpeg shows them as the stream's, not the format's).
    var metadata = Metadata(ffmpegMerge: .join(";"))
    /// METADATA_BLOCK_PICTURE fields.
    var pictures: [Attachment] = []
    /// CHAPTERnnn fields, their ends not yet known.
    var chapters: [Chapter] = []

    /// The comments in the second header packet of a stream of `codec`; empty when there is none.
    static func read(codec: OggCodec, headers: [[UInt8]]) -> OggComments {
        guard headers.count >= 2 else { return OggComments() }
        let h = headers[1]
        func starts(_ magic: [UInt8]) -> Bool { h.count >= magic.count && h.prefix(magic.count).elementsEqual(magic) }
        let body: ArraySlice<UInt8>
        switch codec {
        case .vorbis where starts([0x03] + Array("vorbis".utf8)): body = h.dropFirst(7)
        case .theora where starts([0x81] + Array("theora".utf8)): body = h.dropFirst(7)
        case .opus where starts(Array("OpusTags".utf8)): body = h.dropFirst(8)
        case .flac where h.count >= 4 && h[0] & 0x7F == 4: body = h.dropFirst(4)
        case .speex: body = h[...]
        default: return OggComments()
        }
        let m = VorbisComment.metadata(Array(body))
        return OggComments(metadata: m.metadata, pictures: m.pictures, chapters: m.chapters)
    }
}
