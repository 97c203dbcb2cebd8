/// An audio converter whose input is compressed packets of one track: it decodes them through
/// the registry's decoder for the track's codec (with its magic cookie and the track's trims,
/// as a ``DecodeSession``) and converts the PCM to the format asked for. One object from AAC,
/// MP3, Opus, Vorbis ... packets to the PCM a program needs, as AudioToolbox's AudioConverter
/// decodes and converts in one.
public final class PacketAudioConverter {
    /// The decoding half.
    public let session: DecodeSession
    /// The converting half.
    public let converter: FrameAudioConverter

    /// A converter for `track`'s packets.
    /// - Parameters:
    ///   - request: the output; its nil rate or layout keep the decoded ones.
    ///   - options: resampler quality, mixing and dither.
    ///   - registry, backend, threads, trim: as for ``DecodeSession``.
    /// - Throws: `.invalidArgument` for a track that is not audio; the session's errors (no
    ///   decoder for the codec names it and every place searched).
    public init(track: Track, to request: AudioOutputRequest, options: AudioConverter.Options = .init(),
                registry: MediaRegistry = .shared, backend: String? = nil, threads: Int = 0, trim: TrimMode = .gapless) throws {
        guard track.mediaType == .audio else {
            throw MediaError(.invalidArgument, "track \(track.index) is \(track.mediaType.rawValue), not audio: an audio converter decodes audio packets")
        }
        session = try DecodeSession(track: track, registry: registry, backend: backend, threads: threads, trim: trim)
        converter = FrameAudioConverter(to: request, options: options)
    }

    /// The output format: nil until the first frame was decoded.
    public var destination: AudioFormat? { converter.destination }

    /// Decodes one packet of the track and returns the PCM that can be output so far.
    public func convert(_ packet: Packet) throws -> AudioBuffer {
        var out: AudioBuffer?
        try session.decode(packet) { frame in
            let b = try converter.convert(frame)
            if out == nil { out = b } else { out!.append(b) }
        }
        return out ?? AudioBuffer(empty: converter.destination ?? converter.request.resolved(for: trackFormat))
    }

    /// Ends the stream: the decoder's delayed frames and the resampler's tail.
    public func flush() throws -> AudioBuffer {
        var out: AudioBuffer?
        try session.finish { frame in
            let b = try converter.convert(frame)
            if out == nil { out = b } else { out!.append(b) }
        }
        let tail = converter.flush(fallback: trackFormat)
        guard var o = out else { return tail }
        o.append(tail)
        return o
    }

    /// Drops what is buffered (after a seek) and accepts packets again.
    public func reset() {
        session.reset()
        converter.reset()
    }

    /// The track's stated format (before any frame tells the decoded one).
    private var trackFormat: AudioFormat {
        let p = session.track.parameters
        return AudioFormat(.f32, sampleRate: max(1, p.sampleRate), channels: max(1, p.channels))
    }
}

extension AudioConverter {
    /// A converter from compressed packets of `track` (AAC, MP3, Opus, Vorbis, FLAC ...) to
    /// `request`: decoding through the registry, then converting (see ``PacketAudioConverter``).
    public static func decoding(track: Track, to request: AudioOutputRequest, options: Options = .init(),
                                registry: MediaRegistry = .shared) throws -> PacketAudioConverter {
        try PacketAudioConverter(track: track, to: request, options: options, registry: registry)
    }
}
