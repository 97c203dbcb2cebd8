/// How one single-track PCM file format lays out its header (``PCMFileMuxer``): WAV and AIFF
/// each give one (`PCMFileLayout.wav`, `.aiff`).
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
    /// True once the header is in the file (at the first packet or at ``finish()``).
    private var headerWritten = false

    /// Starts `path`.
    /// - Throws: `.io` when the file cannot be created.
    init(path: String, layout: PCMFileLayout) throws {
        file = try OutputFile(path: path)
        self.layout = layout
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
    /// chunk, ``PCMFileLayout/withTags``): the container's tags, then the track's that it does
    /// not have. - Throws: `.state` after the first packet.
    func setMetadata(_ metadata: MuxMetadata) throws {
        guard layout.withTags != nil else { return }
        guard !headerWritten else {
            if metadata.isEmpty { return }
            throw MediaError(.state, "metadata must be given before the first packet", path: file.path)
        }
        tags = metadata.combined(track: 0)
    }

    private func header() -> [UInt8] {
        guard let s = stream else { return [] }
        let h = layout.header(s.stored, s.rate, s.channels, s.mask, dataBytes)
        guard !tags.isEmpty, let withTags = layout.withTags else { return h }
        return withTags(h, tags)
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
            throw MediaError(.limit, "more than \(layout.maxDataBytes) bytes of audio do not fit in a \(layout.name) file (4 GiB); write Matroska or raw PCM instead",
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
            try file.patch(header(), at: 0)
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
