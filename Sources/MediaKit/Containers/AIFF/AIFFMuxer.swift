extension PCMFileLayout {
    /// AIFF and AIFF-C, laid out as FFmpeg's aiff muxer lays them out: `FORM`, for AIFF-C an
    /// `FVER` chunk, the text chunks of the tags (NAME, AUTH, `(c) `, ANNO), `COMM` (channels,
    /// sample frames, sample size, the rate as an 80-bit float and for AIFF-C the compression
    /// type with an empty name), then `SSND` (offset and block size 0, the samples), and when
    /// asked for an `ID3 ` chunk. Markers and instrument settings (which FFmpeg does not write)
    /// go into `MARK` and `INST` chunks before `COMM` (``aiffMarkChunk(_:)``, ``aiffInstChunk(_:)``).
    ///
    /// Codecs, by FFmpeg's AIFF table (`ff_codec_aiff_tags`): big-endian integer PCM (`pcm_s8`,
    /// `pcm_s16be`, `pcm_s24be`, `pcm_s32be`) as plain AIFF; `pcm_u8` (`raw `), `pcm_f32be`
    /// (`fl32`), `pcm_f64be` (`fl64`), A-law (`alaw`), mu-law (`ulaw`) and `pcm_s16le` (`sowt`)
    /// as AIFF-C. Other little-endian PCM (WAV's 24 and 32-bit integers and floats) is
    /// byte-swapped to its big-endian codec on the way in: the samples are the same, only their
    /// storage changes (ffmpeg refuses that copy into AIFF).
    static let aiff = PCMFileLayout(
        name: "AIFF",
        storage: { codec in
            switch codec.kind {
            case .alaw, .mulaw: return codec
            case .signed where codec.bytes == 2 && !codec.bigEndian: return codec
            case .unsigned: return codec.bytes == 1 ? codec : nil
            default: return codec.with(bigEndian: true)
            }
        },
        refusal: { _, rate, channels in
            rate > 0 && rate <= Int(Int32.max) && (1...32767).contains(channels) ? nil : "1 to 32767 channels, a positive 32-bit rate"
        },
        header: { stored, rate, channels, _, dataBytes in
            func be32(_ v: Int64) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> Int64(24 - 8 * $0)) } }
            let compression: String?
            switch (stored.kind, stored.bytes) {
            case (.alaw, _): compression = "alaw"
            case (.mulaw, _): compression = "ulaw"
            case (.unsigned, _): compression = "raw "
            case (.ieeeFloat, 4): compression = "fl32"
            case (.ieeeFloat, _): compression = "fl64"
            case (.signed, 2) where !stored.bigEndian: compression = "sowt"
            default: compression = nil
            }
            let frames = dataBytes / Int64(channels * stored.bytes)
            var comm = be16(channels) + be32(frames) + be16(stored.bits) + ExtendedFloat.bytes(UInt64(rate))
            var chunks: [UInt8] = []
            if let type = compression {
                chunks += Array("FVER".utf8) + be32(4) + be32(Int64(AIFFDemuxer.aifcVersion1))
                comm += Array(type.utf8) + [0, 0]      // the type and an empty name (its count byte and pad)
            }
            chunks += Array("COMM".utf8) + be32(Int64(comm.count)) + comm
            chunks += Array("SSND".utf8) + be32(8 + dataBytes) + be32(0) + be32(0)
            let formSize = 4 + Int64(chunks.count) + dataBytes + dataBytes % 2
            return Array("FORM".utf8) + be32(formSize) + Array((compression == nil ? "AIFF" : "AIFC").utf8) + chunks
        },
        maxDataBytes: Int64(UInt32.max) - 128,
        withTags: { header, tags in
            // FFmpeg's aiffenc.c put_meta: the title, author, copyright and comment (by the name
            // libavformat gives them) as NAME, AUTH, "(c) " and ANNO chunks before COMM, the
            // size an even count of bytes (an odd text takes its NUL as the pad).
            var chunks: [UInt8] = []
            for (key, id) in [("title", "NAME"), ("author", "AUTH"), ("copyright", "(c) "), ("comment", "ANNO")] {
                guard let e = tags.first(where: { $0.ffmpegKey.lowercased() == key }) else { continue }
                var text = Array(e.value.utf8)
                if text.count & 1 == 1 { text.append(0) }
                chunks += Array(id.utf8) + MetadataWriting.be32(text.count) + text
            }
            return aiffInserting(chunks, beforeCOMMOf: header)
        },
        withMarkers: { header, markers, instrument in
            aiffInserting(aiffMarkChunk(markers) + (instrument.map(aiffInstChunk) ?? []), beforeCOMMOf: header)
        },
        id3Chunk: ("ID3 ", true))

    /// `header` (an AIFF or AIFF-C header up to `SSND`) with `chunks` put in front of `COMM` and
    /// the `FORM` size grown by their length; unchanged for no chunks or a header without `COMM`.
    static func aiffInserting(_ chunks: [UInt8], beforeCOMMOf header: [UInt8]) -> [UInt8] {
        guard !chunks.isEmpty, header.count >= 12, let comm = header.indices.dropLast(3).first(where: { Array(header[$0..<($0 + 4)]) == Array("COMM".utf8) })
        else { return header }
        var h = Array(header[..<comm]) + chunks + Array(header[comm...])
        _ = growFileSize(&h, by: Int64(chunks.count), bigEndian: true)
        return h
    }

    /// The low 16 bits of `v`, big-endian.
    private static func be16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v)] }
    /// `v` clamped to a signed 16-bit field, big-endian.
    private static func s16(_ v: Int) -> [UInt8] { be16(min(max(v, Int(Int16.min)), Int(Int16.max))) }

    /// A `MARK` chunk (Audio IFF 1.3: a 16-bit count, then per marker its 16-bit id, its 32-bit
    /// position in sample frames and its name as a Pascal string padded to an even length)
    /// holding the markers whose id and position fit those fields (at most 65,535), a name
    /// cut to its first 255 bytes at a character's end; nothing when none fits.
    static func aiffMarkChunk(_ markers: [Marker]) -> [UInt8] {
        let kept = markers.filter { (Int(Int16.min)...Int(Int16.max)).contains($0.id) && (0...Int64(UInt32.max)).contains($0.frame) }.prefix(65535)
        guard !kept.isEmpty else { return [] }
        var body = be16(kept.count)
        for m in kept {
            var name: [UInt8] = []
            for c in m.name.unicodeScalars {
                guard name.count + c.utf8.count <= 255 else { break }
                name += c.utf8
            }
            body += be16(m.id) + MetadataWriting.be32(Int(truncatingIfNeeded: m.frame)) + [UInt8(truncatingIfNeeded: name.count)] + name + (name.count % 2 == 0 ? [0] : [])
        }
        return Array("MARK".utf8) + MetadataWriting.be32(body.count) + body
    }

    /// An `INST` chunk (Audio IFF 1.3: base note, detune, low and high note, low and high
    /// velocity as signed bytes, a 16-bit gain, then the sustain and release loops, each a
    /// 16-bit play mode and two marker ids), each value clamped to its field.
    static func aiffInstChunk(_ i: Instrument) -> [UInt8] {
        var body = [i.baseNote, i.detune, i.lowNote, i.highNote, i.lowVelocity, i.highVelocity].map { UInt8(bitPattern: Int8(clamping: $0)) }
        body += s16(i.gain)
        for l in [i.sustainLoop, i.releaseLoop] { body += s16(l.playMode) + s16(l.beginMarker) + s16(l.endMarker) }
        return Array("INST".utf8) + MetadataWriting.be32(body.count) + body
    }
}

extension MuxerFormat {
    /// AIFF / AIFF-C: one PCM track, stored big-endian or as AIFF-C names it (``PCMFileLayout/aiff``),
    /// its title, author, copyright and comment in NAME, AUTH, `(c) ` and ANNO chunks; with
    /// ``MuxerOptions/writeID3v2`` also an `ID3 ` chunk after the samples (every tag, the cover
    /// art and chapters, ``MuxerOptions/id3v2Version``), as FFmpeg's aiff muxer `-write_id3v2 1`.
    public static let aiff = MuxerFormat(name: "aiff", description: "AIFF / AIFF-C", extensions: ["aiff", "aif", "aifc"],
                                         mimeTypes: ["audio/aiff", "audio/x-aiff"], codecs: PCMCodec.plainCodecs,
                                         options: [.writeID3v2, .id3v2Version], defaultAudioCodec: "pcm_s16be",
                                         make: { path, o in try PCMFileMuxer.make(path: path, layout: .aiff, options: o) })
}
