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

    /// Pull model for compressed input (AudioConverterFillComplexBuffer fed packets with their
    /// descriptions, as a decoder is fed): returns up to `frames` output frames, calling `input`
    /// (passed the output frames still missing) for packets of the track as needed:
    /// `.data(packets)` (one or more; none is the end of the stream), `.noDataNow` (the fill
    /// returns what it decoded so far and keeps its state: the output of every call together
    /// equals ``convert(_:)`` of the same packets then ``flush()``), `.endOfStream` (the
    /// decoder's delayed frames and the resampler's tail follow; later calls return the rest,
    /// then empty buffers until ``reset()``). Shorter than `frames` only after `.noDataNow` or
    /// at the end.
    /// - Throws: what `input` throws (the frames decoded before it come first from the next
    ///   call); the decoder's errors; `.invalidArgument` for a packet of another track.
    public func fill(frames: Int, pull input: (Int) throws -> AudioConverterInput<[Packet]>) throws -> AudioBuffer {
        while (pending?.frames ?? 0) < frames && !pullEnded {
            guard try pullOnce(max(1, frames - (pending?.frames ?? 0)), input, keep) else { break }
        }
        guard var p = pending else {
            return AudioBuffer(empty: converter.destination ?? converter.request.resolved(for: trackFormat))
        }
        let out = p.removeFirstFrames(frames)
        pending = p
        return out
    }

    /// ``fill(frames:pull:)`` into the caller's memory: decodes and writes output frames to
    /// `planes` (one pointer per plane of ``destination``, each with room for `frames` frames)
    /// from frame `written` on, until `written` is `frames`, the input said `.noDataNow`, or the
    /// stream ended; each packet's output is copied once, straight to its place (a surplus
    /// beyond `frames` waits for the next fill). `written` counts the frames in `planes` on
    /// every return, a throw included: frames written are never lost.
    /// - Throws: as ``fill(frames:pull:)``; `.invalidArgument` for a NULL plane.
    public func fill(into planes: UnsafePointer<UnsafeMutableRawPointer?>, frames: Int, written: inout Int,
                     pull input: (Int) throws -> AudioConverterInput<[Packet]>) throws {
        if pending != nil {
            let b = pending!
            pending = nil
            try place(b, planes, frames, &written)
        }
        while written < frames && !pullEnded {
            guard try pullOnce(frames - written, input, { try place($0, planes, frames, &written) }) else { return }
        }
    }

    /// One call of `input` for the pull fills (asked for `missing` frames): each packet it
    /// gives converted and handed to `take`, or at its end the decoder's delayed frames and the
    /// resampler's tail (the stream has then ended). False when the input has no data now.
    private func pullOnce(_ missing: Int, _ input: (Int) throws -> AudioConverterInput<[Packet]>,
                          _ take: (AudioBuffer) throws -> Void) throws -> Bool {
        switch try input(missing) {
        case .data(let packets) where !packets.isEmpty:
            for p in packets {
                guard p.trackIndex == session.track.index else {
                    throw MediaError(.invalidArgument, "a packet of track \(p.trackIndex) was given to the converter of track \(session.track.index)")
                }
                try take(try convert(p))
            }
        case .data, .endOfStream:
            let tail = try flush()
            pullEnded = true
            try take(tail)
        case .noDataNow:
            return false
        }
        return true
    }

    /// Copies what of `b` fits (up to frame `frames`) to `planes` at frame `written`; the rest waits.
    private func place(_ b: AudioBuffer, _ planes: UnsafePointer<UnsafeMutableRawPointer?>, _ frames: Int, _ written: inout Int) throws {
        var b = b
        let n = min(b.frames, frames - written)
        if n > 0 {
            let bpf = b.format.bytesPerFrame
            for p in 0..<b.format.planeCount {
                guard let dst = planes[p] else { throw MediaError(.invalidArgument, "plane \(p) of \(b.format.planeCount) is NULL") }
                b.planes[p].withUnsafeBytes { dst.advanced(by: written * bpf).copyMemory(from: $0.baseAddress!, byteCount: n * bpf) }
            }
            written += n
        }
        if n < b.frames {
            if n > 0 { _ = b.removeFirstFrames(n) }
            keep(b)
        }
    }

    /// Frames decoded by ``fill(frames:pull:)`` and not returned yet.
    public var pendingFrames: Int { pending?.frames ?? 0 }

    private var pending: AudioBuffer?
    private var pullEnded = false

    private func keep(_ b: AudioBuffer) {
        if pending == nil || pending!.frames == 0 { pending = b } else { pending!.append(b) }
    }

    /// Drops what is buffered (after a seek) and accepts packets again.
    public func reset() {
        session.reset()
        converter.reset()
        pending = nil
        pullEnded = false
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
