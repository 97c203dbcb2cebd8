/// Writes a native FLAC file (`fLaC`, one STREAMINFO metadata block, then the frames an
/// encoder made), as FFmpeg's flac muxer does without tags. The STREAMINFO is written from
/// the encoder's first magic cookie and rewritten in place by ``finish(streamInfo:)`` with the
/// final one (total samples, MD5). The file is written to a temporary name and renamed on
/// success (``OutputFile``).
///
/// As a ``Muxer`` (made by the catalogue for `.flac`): one FLAC track, its STREAMINFO from the
/// track's extradata (34 bytes, or "fLaC" and the metadata blocks as the Ogg and Matroska
/// demuxers give them), rewritten on ``finish()`` with the one ``updateParameters(_:track:)`` gave.
public final class FLACWriter: Muxer, @unchecked Sendable {
    private let file: OutputFile
    private var done = false
    private var hasTrack = false
    private var finalStreamInfo: [UInt8] = []
    /// The STREAMINFO of a track added as a ``Muxer``, written with the metadata blocks
    /// (``setMetadata(_:)``) at the first packet or at ``finish()``.
    private var pendingStreamInfo: [UInt8]?
    private var metadataBlocks: [(type: UInt8, body: [UInt8])] = []

    /// Starts `path` with `streamInfo` (the 34-byte STREAMINFO body).
    /// - Throws: `.invalidArgument` for a STREAMINFO that is not 34 bytes; `.io`.
    public convenience init(path: String, streamInfo: [UInt8]) throws {
        guard streamInfo.count == 34 else {
            throw MediaError(.invalidArgument, "a FLAC file needs the 34-byte STREAMINFO, got \(streamInfo.count) bytes", path: path)
        }
        try self.init(path: path)
        try start(streamInfo)
    }

    /// Starts `path`; the STREAMINFO comes with ``addTrack(_:timeBase:)``.
    /// - Throws: `.io` when the file cannot be created.
    public init(path: String) throws {
        file = try OutputFile(path: path)
    }

    deinit { if !done { file.discard() } }

    private func start(_ streamInfo: [UInt8]) throws {
        var header = Array("fLaC".utf8) + [metadataBlocks.isEmpty ? 0x80 : 0, 0, 0, 34] + streamInfo
        for (i, b) in metadataBlocks.enumerated() {
            let last: UInt8 = i == metadataBlocks.count - 1 ? 0x80 : 0
            header += [last | b.type, UInt8(truncatingIfNeeded: b.body.count >> 16), UInt8(truncatingIfNeeded: b.body.count >> 8),
                       UInt8(truncatingIfNeeded: b.body.count)] + b.body
        }
        try file.write(header)
        hasTrack = true
    }

    /// Writes the header of a track added as a ``Muxer``, once.
    private func startPending() throws {
        if let si = pendingStreamInfo {
            pendingStreamInfo = nil
            try start(si)
        }
    }

    /// The largest metadata block body (a 24-bit length).
    static let maxBlockBytes = (1 << 24) - 1

    /// Keeps the tags and pictures to write after the STREAMINFO: a VORBIS_COMMENT block (the
    /// container's tags, then the track's that it does not have, then the chapters as
    /// CHAPTERnnn fields; vendor "MediaKit") and a PICTURE block for each picture, as FFmpeg's
    /// flac muxer writes them. Attachments that are not pictures are not held by FLAC. - Throws: `.state` once the header is written (after
    /// the first packet, or for a writer made with its STREAMINFO); `.invalidArgument` for a
    /// block over 16 MiB.
    public func setMetadata(_ metadata: MuxMetadata) throws {
        guard pendingStreamInfo != nil else {
            if metadata.isEmpty { return }
            throw MediaError(.state, "metadata must be given after addTrack and before the first packet", path: file.path)
        }
        metadataBlocks = []
        let tags = metadata.combined(track: 0)
        if !tags.isEmpty || !metadata.chapters.isEmpty {
            metadataBlocks.append((4, MetadataWriting.vorbisComment(vendor: "MediaKit", tags: tags, chapters: metadata.chapters)))
        }
        for p in metadata.pictures { metadataBlocks.append((6, MetadataWriting.flacPicture(p))) }
        if let big = metadataBlocks.first(where: { $0.body.count > Self.maxBlockBytes }) {
            metadataBlocks = []
            throw MediaError(.invalidArgument, "a FLAC metadata block (type \(big.type)) of \(big.body.count) bytes is over the format's 16 MiB", path: file.path)
        }
    }

    /// The 34-byte STREAMINFO body of `extradata` (itself, or after "fLaC" and a block header), or nil.
    static func streamInfo(_ extradata: [UInt8]) -> [UInt8]? {
        if extradata.count == 34 { return extradata }
        if extradata.starts(with: Array("fLaC".utf8)), extradata.count >= 42, extradata[4] & 0x7F == 0 { return Array(extradata[8..<42]) }
        return nil
    }

    /// Adds the file's one track.
    /// - Throws: `.unsupported` for a second track or a codec other than FLAC,
    ///   `.invalidArgument` for extradata without a STREAMINFO, `.io`.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        guard !hasTrack, !done else {
            throw MediaError(.unsupported, "a FLAC file holds one track", path: file.path)
        }
        guard parameters.codec == "flac" else {
            throw MediaError(.unsupported, "FLAC files cannot carry \(parameters.codec.isUnknown ? "an unknown codec" : parameters.codec.rawValue): they hold one FLAC stream",
                             path: file.path)
        }
        guard let si = Self.streamInfo(parameters.extradata) else {
            throw MediaError(.invalidArgument, "a FLAC file needs the 34-byte STREAMINFO, got \(parameters.extradata.count) bytes of extradata", path: file.path)
        }
        pendingStreamInfo = si
        hasTrack = true
        return 0
    }

    /// Keeps the encoder's final STREAMINFO (total samples, MD5) for ``finish()``.
    public func updateParameters(_ parameters: CodecParameters, track: Int) throws {
        if let si = Self.streamInfo(parameters.extradata) { finalStreamInfo = si }
    }

    /// Writes one encoded FLAC frame.
    /// - Throws: `.invalidArgument` for a track other than 0, `.state` before the track was added.
    public func write(_ packet: Packet) throws {
        guard hasTrack, !done else { throw MediaError(.state, "write before addTrack or after finish", path: file.path) }
        guard packet.trackIndex == 0 else {
            throw MediaError(.invalidArgument, "track \(packet.trackIndex) was not added (a FLAC file holds track 0)", path: file.path)
        }
        try startPending()
        try file.write(packet.data)
    }

    /// Rewrites the STREAMINFO with the one ``updateParameters(_:track:)`` gave, if any, and
    /// renames the file into place.
    /// - Throws: `.state` when no track was added; `.io`.
    public func finish() throws {
        guard hasTrack else {
            cancel()
            throw MediaError(.state, "finish before addTrack: a FLAC file without its STREAMINFO cannot be read", path: file.path)
        }
        try finish(streamInfo: finalStreamInfo)
    }

    /// Rewrites the STREAMINFO (when `streamInfo` is 34 bytes) and renames the file into place.
    public func finish(streamInfo: [UInt8]) throws {
        do {
            try startPending()
            done = true
            if streamInfo.count == 34 { try file.patch(streamInfo, at: 8) }
            try file.commit()
        } catch {
            done = true
            file.discard()
            throw error
        }
    }

    /// Abandons the file and removes what was written.
    public func cancel() {
        done = true
        file.discard()
    }
}

extension MuxerFormat {
    /// Native FLAC (``FLACWriter``): one FLAC track.
    public static let flac = MuxerFormat(name: "flac", description: "FLAC", extensions: ["flac"], mimeTypes: ["audio/flac"],
                                         codecs: ["flac"], defaultAudioCodec: "flac", make: { path, _ in try FLACWriter(path: path) })
}
