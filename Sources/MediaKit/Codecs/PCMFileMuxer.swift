/// How one single-track PCM file format lays out its header (``PCMFileMuxer``): WAV and AIFF
/// each give one (`PCMFileLayout.wavLayout(rf64:limit:)`, `.aiff`).
struct PCMFileLayout: Sendable {
    /// What a person calls the format, for messages ("WAV").
    let name: String
    /// The codec the file stores for samples of `codec` (itself, or the same samples in the
    /// format's byte order or sign), and the format's name for it (AIFF-C's compression type).
    let storage: @Sendable (_ codec: PCMCodec) -> PCMCodec?
    /// Why a rate and channel count of samples stored as `codec` cannot be written (nil: they can).
    let refusal: @Sendable (_ codec: PCMCodec, _ rate: Int, _ channels: Int) -> String?
    /// The header for `dataBytes` bytes of samples; its length must not depend on `dataBytes`
    /// (it is written first with 0 and overwritten by ``PCMFileMuxer/finish()``).
    let header: @Sendable (_ stored: PCMCodec, _ rate: Int, _ channels: Int, _ channelMask: UInt64, _ dataBytes: Int64) -> [UInt8]
    /// Bytes of samples the format's size fields hold.
    let maxDataBytes: Int64
    /// The header with chunks for `tags` put in (WAV: a LIST/INFO chunk before `data`); nil:
    /// the format holds no tags here.
    var withTags: (@Sendable (_ header: [UInt8], _ tags: [MetadataEntry]) -> [UInt8])? = nil
    /// The header with chunks for markers and instrument settings put in (AIFF: `MARK` and
    /// `INST` before `COMM`); nil: the format holds none here.
    var withMarkers: (@Sendable (_ header: [UInt8], _ markers: [Marker], _ instrument: Instrument?) -> [UInt8])? = nil
    /// The id of the chunk holding an ID3v2 tag after the samples (WAV "id3 ", AIFF "ID3 "),
    /// written when the muxer is asked for one (``MuxerOptions/writeID3v2``); its size field
    /// and the file's (bytes 4-7) are big-endian for IFF, little-endian for RIFF.
    var id3Chunk: (id: String, bigEndian: Bool)? = nil

    /// Adds `n` bytes to the file size `header` states: bytes 4-7 (big-endian for IFF), or an
    /// RF64 header's `ds64` RIFF size (bytes 20-27, EBU Tech 3306). False, the header
    /// unchanged, when the size would pass 32 bits (64 for RF64).
    static func growFileSize(_ header: inout [UInt8], by n: Int64, bigEndian: Bool) -> Bool {
        let rf64 = header.count >= 28 && header[0..<4].elementsEqual("RF64".utf8)
        let at = rf64 ? Array((20..<28).reversed()) : bigEndian ? [4, 5, 6, 7] : [7, 6, 5, 4]
        let old = at.reduce(Int64(0)) { $0 << 8 | Int64(header[$1]) }
        let (size, overflow) = old.addingReportingOverflow(n)
        guard !overflow, rf64 || size <= Int64(UInt32.max) else { return false }
        for (k, i) in at.enumerated() { header[i] = UInt8(truncatingIfNeeded: size >> Int64(8 * (at.count - 1 - k))) }
        return true
    }
}

/// Writes a file of one PCM track from packets, in a ``PCMFileLayout``: a header, the samples
/// (rewritten to the stored byte order or sign, a lossless change of storage), a pad byte to an
/// even size (RIFF and IFF chunks), and the header again with the final sizes. It takes
/// ``PCMCodec/plainCodecs``. The file is written under a temporary name and renamed by
/// ``finish()`` (``OutputFile``): nothing is under the target name before.
final class PCMFileMuxer: Muxer, @unchecked Sendable {
    private let file: OutputFile
    private let layout: PCMFileLayout
    private var done = false
    private var stream: (source: PCMCodec, stored: PCMCodec, rate: Int, channels: Int, mask: UInt64)?
    private var dataBytes: Int64 = 0
    /// Tags for ``PCMFileLayout/withTags`` (``setMetadata(_:)``).
    private var tags: [MetadataEntry] = []
    /// The ID3v2 version of the tag chunk after the samples (``PCMFileLayout/id3Chunk``); nil: none.
    private let id3v2Version: Int?
    /// What that chunk holds (``setMetadata(_:)``).
    private var id3Metadata = MuxMetadata()
    /// Markers and instrument settings for ``PCMFileLayout/withMarkers`` (``setMetadata(_:)``).
    private var markers: [Marker] = []
    private var instrument: Instrument?
    /// True once the header is in the file (at the first packet or at ``finish()``).
    private var headerWritten = false

    /// Starts `path`; with `id3v2Version` (3 or 4) and a layout that has an
    /// ``PCMFileLayout/id3Chunk``, the tags also go into an ID3v2 tag chunk after the samples.
    /// - Throws: `.io` when the file cannot be created.
    init(path: String, layout: PCMFileLayout, id3v2Version: Int? = nil) throws {
        file = try OutputFile(path: path)
        self.layout = layout
        self.id3v2Version = layout.id3Chunk == nil ? nil : id3v2Version
    }

    /// The muxer the catalogue makes for `layout` with `options` (``MuxerOptions/writeID3v2``,
    /// ``MuxerOptions/id3v2Version``). - Throws: `.invalidArgument` for an ID3v2 version other
    /// than 3 or 4; `.io`.
    static func make(path: String, layout: PCMFileLayout, options: MuxerOptions) throws -> PCMFileMuxer {
        let version = try options.checkedID3v2Version(path: path)
        return try PCMFileMuxer(path: path, layout: layout, id3v2Version: options.writeID3v2 ? version : nil)
    }

    deinit { if !done { file.discard() } }

    /// Adds the file's one track.
    /// - Throws: `.unsupported` for a second track or a codec that is not plain PCM (naming
    ///   it); `.invalidArgument` for a sample rate or channel count the header cannot hold; `.io`.
    func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        guard stream == nil, !done else { throw MediaError(.unsupported, "a \(layout.name) file holds one track", path: file.path) }
        guard let source = PCMCodec(parameters.codec), PCMCodec.plainCodecs.contains(source.codec), let stored = layout.storage(source) else {
            let name = parameters.codec.isUnknown ? "an unknown codec" : parameters.codec.rawValue
            throw MediaError(.unsupported, "\(layout.name) files written by MediaKit carry PCM (integer, float, A-law, mu-law), not \(name)", path: file.path)
        }
        let rate = parameters.sampleRate, channels = parameters.channels
        if let why = layout.refusal(stored, rate, channels) {
            throw MediaError(.invalidArgument, "PCM at \(rate) Hz with \(channels) channels cannot be written as \(layout.name): \(why)", path: file.path)
        }
        stream = (source, stored, rate, channels, parameters.channelMask)
        return 0
    }

    /// Keeps the tags to write with the header where the format holds them (WAV: a LIST/INFO
    /// chunk; AIFF: NAME, AUTH, `(c) ` and ANNO chunks; ``PCMFileLayout/withTags``): the
    /// container's tags, then the track's that it does not have; markers and instrument
    /// settings where the format holds them (AIFF: `MARK` and `INST` chunks,
    /// ``PCMFileLayout/withMarkers``); and when an ID3v2 chunk was asked for, the tags, pictures
    /// and chapters for it. - Throws: `.state` after the first packet.
    func setMetadata(_ metadata: MuxMetadata) throws {
        let holdsMarkers = layout.withMarkers != nil
        guard layout.withTags != nil || holdsMarkers || id3v2Version != nil else { return }
        guard !headerWritten else {
            if metadata.isEmpty && (!holdsMarkers || metadata.markers.isEmpty && metadata.instrument == nil) { return }
            throw MediaError(.state, "metadata must be given before the first packet", path: file.path)
        }
        tags = metadata.combined(track: 0)
        id3Metadata = metadata
        if holdsMarkers { (markers, instrument) = (metadata.markers, metadata.instrument) }
    }

    /// The ID3v2 chunk written after the samples (with its pad byte), or nothing; as FFmpeg's
    /// aiff muxer writes it (its tag padded with 10 zero bytes).
    private func id3ChunkBytes() -> [UInt8] {
        guard let version = id3v2Version, let chunk = layout.id3Chunk, !id3Metadata.isEmpty else { return [] }
        let tag = MetadataWriting.id3v2(version: version, tags: id3Metadata.combined(track: 0), pictures: id3Metadata.pictures,
                                        chapters: id3Metadata.chapters, padding: 10)
        guard !tag.isEmpty else { return [] }
        let n = tag.count
        let size = chunk.bigEndian ? MetadataWriting.be32(n) : MetadataWriting.le32(n)
        return Array(chunk.id.utf8) + size + tag + (n & 1 == 1 ? [0] : [])
    }

    private func header() -> [UInt8] {
        guard let s = stream else { return [] }
        var h = layout.header(s.stored, s.rate, s.channels, s.mask, dataBytes)
        if !tags.isEmpty, let withTags = layout.withTags { h = withTags(h, tags) }
        if !markers.isEmpty || instrument != nil, let withMarkers = layout.withMarkers { h = withMarkers(h, markers, instrument) }
        return h
    }

    private func writeHeader() throws {
        guard !headerWritten else { return }
        headerWritten = true
        try file.write(header())
    }

    /// Appends a packet's samples (rewritten to the stored byte order or sign).
    /// - Throws: `.state` before the track was added or after finish, `.invalidArgument` for a
    ///   track other than 0, `.limit` past what the format's sizes hold, `.io`.
    func write(_ packet: Packet) throws {
        guard let s = stream, !done else { throw MediaError(.state, "write before addTrack or after finish", path: file.path) }
        guard packet.trackIndex == 0 else {
            throw MediaError(.invalidArgument, "track \(packet.trackIndex) was not added (a \(layout.name) file holds track 0)", path: file.path)
        }
        try writeHeader()
        let bytes = s.source.convert(packet.data, to: s.stored)
        guard dataBytes + Int64(bytes.count) <= layout.maxDataBytes else {
            throw MediaError(.limit, "more than \(layout.maxDataBytes) bytes of audio do not fit in a \(layout.name) file (4 GiB); write Matroska or raw PCM instead (or WAV as RF64)",
                             path: file.path)
        }
        try file.write(bytes)
        dataBytes += Int64(bytes.count)
    }

    /// Pads the samples to an even size, fills in the header's sizes and renames the file into place.
    /// - Throws: `.state` when no track was added, `.io`.
    func finish() throws {
        guard !done else { return }
        guard stream != nil else {
            cancel()
            throw MediaError(.state, "a \(layout.name) file needs its track before finish", path: file.path)
        }
        do {
            try writeHeader()
            if dataBytes % 2 == 1 { try file.write([0]) }
            var h = header()
            let trailer = id3ChunkBytes()
            if !trailer.isEmpty, h.count >= 8, let chunk = layout.id3Chunk {
                // The file's size (RIFF / FORM, or RF64's ds64) counts the chunk after the samples.
                guard PCMFileLayout.growFileSize(&h, by: Int64(trailer.count), bigEndian: chunk.bigEndian) else {
                    throw MediaError(.limit, "the ID3v2 chunk (\(trailer.count) bytes) does not fit in the \(layout.name) file's 4 GiB", path: file.path)
                }
                try file.write(trailer)
            }
            try file.patch(h, at: 0)
            try file.commit()
            done = true
        } catch {
            cancel()
            throw error
        }
    }

    /// Abandons the file and removes what was written.
    func cancel() {
        done = true
        file.discard()
    }
}
