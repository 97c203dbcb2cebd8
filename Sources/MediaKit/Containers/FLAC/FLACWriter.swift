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
        try file.write(Array("fLaC".utf8) + [0x80, 0, 0, 34] + streamInfo)
        hasTrack = true
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
        try start(si)
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
        done = true
        do {
            if streamInfo.count == 34 { try file.patch(streamInfo, at: 8) }
            try file.commit()
        } catch {
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
