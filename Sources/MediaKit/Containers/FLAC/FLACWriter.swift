/// Writes a native FLAC file (`fLaC`, one STREAMINFO metadata block, then the frames an
/// encoder made), as FFmpeg's flac muxer does without tags. The STREAMINFO is written from
/// the encoder's first magic cookie and rewritten in place by ``finish(streamInfo:)`` with the
/// final one (total samples, MD5). The file is written to a temporary name and renamed on
/// success (``OutputFile``).
public final class FLACWriter {
    private let file: OutputFile
    private var done = false

    /// Starts `path` with `streamInfo` (the 34-byte STREAMINFO body).
    /// - Throws: `.invalidArgument` for a STREAMINFO that is not 34 bytes; `.io`.
    public init(path: String, streamInfo: [UInt8]) throws {
        guard streamInfo.count == 34 else {
            throw MediaError(.invalidArgument, "a FLAC file needs the 34-byte STREAMINFO, got \(streamInfo.count) bytes", path: path)
        }
        file = try OutputFile(path: path)
        try file.write(Array("fLaC".utf8) + [0x80, 0, 0, 34] + streamInfo)
    }

    deinit { if !done { file.discard() } }

    /// Writes one encoded FLAC frame.
    public func write(_ packet: Packet) throws {
        try file.write(packet.data)
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
