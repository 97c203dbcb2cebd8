/// The output a converter of decoded audio is asked for: a sample type and interleaving, and
/// a rate and a channel layout when they are to change (nil: the source's, as decoded).
public struct AudioOutputRequest: Sendable, Hashable {
    /// The sample type written.
    public var sampleType: AudioSampleType
    /// One plane per channel (true) or interleaved frames (false, the default).
    public var planar: Bool
    /// The output rate; nil keeps the decoded rate.
    public var sampleRate: Int?
    /// The output channels and their order; nil keeps the decoded layout.
    public var layout: ChannelLayout?

    /// A request; unset fields keep the source's.
    public init(_ sampleType: AudioSampleType, planar: Bool = false, sampleRate: Int? = nil, layout: ChannelLayout? = nil) {
        self.sampleType = sampleType
        self.planar = planar
        self.sampleRate = sampleRate
        self.layout = layout
    }

    /// The full output format for audio decoded as `source`.
    public func resolved(for source: AudioFormat) -> AudioFormat {
        AudioFormat(sampleType, planar: planar, sampleRate: sampleRate ?? source.sampleRate, layout: layout ?? source.layout)
    }
}

/// Converts decoded audio frames into one output format, for a whole stream: the output
/// format is fixed by the first frame (and the request); when the decoded format changes
/// mid-stream (a new Ogg link, an AAC stream switching rate), the converter for the old
/// format is drained and a new one converts the rest to the same output.
public final class FrameAudioConverter {
    /// What was asked for.
    public let request: AudioOutputRequest
    /// How the converters work (resampler quality, mixing, dither).
    public let options: AudioConverter.Options
    /// The output format: nil until the first frame.
    public private(set) var destination: AudioFormat?
    private var converter: AudioConverter?

    /// A converter to `request` with `options`.
    public init(to request: AudioOutputRequest, options: AudioConverter.Options = .init()) {
        self.request = request
        self.options = options
    }

    /// Converts one decoded frame and returns what can be output so far.
    /// - Throws: ``MediaError`` `.invalidArgument` for a video frame or a format the converter
    ///   refuses (zero rate or channels, a layout it cannot mix to).
    public func convert(_ frame: Frame) throws -> AudioBuffer {
        guard frame.mediaType == .audio, frame.sampleFormat != nil else {
            throw MediaError(.invalidArgument, "an audio converter was given a \(frame.mediaType.rawValue) frame")
        }
        let source = AudioFormat(of: frame)
        var out: AudioBuffer?
        if let c = converter, c.source != source {
            out = c.flush()
            converter = nil
        }
        if converter == nil {
            let d = destination ?? request.resolved(for: source)
            converter = try AudioConverter(from: source, to: d, options: options)
            destination = d
        }
        let converted = try converter!.convert(frame)
        guard var o = out else { return converted }
        o.append(converted)
        return o
    }

    /// Ends the stream: the frames the resampler still holds. Empty (in `fallback`'s resolved
    /// format) when no frame ever came.
    public func flush(fallback source: AudioFormat) -> AudioBuffer {
        if let c = converter { return c.flush() }
        return AudioBuffer(empty: destination ?? request.resolved(for: source))
    }

    /// Forgets the stream (after a seek): the next frame starts a new one in the same output format.
    public func reset() {
        converter?.reset()
    }
}

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

/// An audio converter whose output is compressed packets: PCM in any format is converted to
/// what the encoder takes (sample type, interleaving, channels, rate) and encoded, in one
/// object, as AudioToolbox's AudioConverter encodes when its destination format is AAC. Push
/// (``encode(_:)-(Frame)``, ``encode(_:)-(AudioBuffer)``, then ``finish()``) or pull
/// (``fill(packets:input:)``). The encoder's magic cookie, frame size and priming are on
/// ``encoder``.
public final class AudioEncodingConverter {
    /// The PCM given to ``encode(_:)-(AudioBuffer)`` and ``fill(packets:input:)``.
    public let source: AudioFormat
    /// The encoder (its ``Encoder/inputFormat`` is the conversion's destination).
    public let encoder: Encoder
    private let frames: FrameAudioConverter
    private var buffers: AudioConverter?
    private var ended = false

    /// A converter from `source` PCM to `settings`' codec.
    /// - Parameters:
    ///   - sampleRate: the coded rate; nil keeps the source's when the encoder takes it, else
    ///     the closest rate it takes (Opus: 48 kHz).
    ///   - channels: the coded channel count; nil keeps the source's (up to the encoder's maximum).
    ///   - options: resampler quality, mixing, dither.
    /// - Throws: the registry's `.notFound` when no plugin encodes the codec; `.unsupported`
    ///   naming what the encoder takes when it refuses the rate, channels or settings.
    public init(from source: AudioFormat, to settings: EncoderSettings, sampleRate: Int? = nil, channels: Int? = nil,
                options: AudioConverter.Options = .init(), registry: MediaRegistry = .shared) throws {
        guard let backend = registry.encoderBackends(for: settings.codec, backend: settings.backend).first else {
            _ = try registry.makeEncoder(settings, input: source)   // throws the registry's .notFound
            throw MediaError(.notFound, "no encoder for \(settings.codec)")
        }
        if let r = sampleRate, !backend.accepts(sampleRate: r) {
            let list = backend.sampleRates.isEmpty ? "\(backend.sampleRateRange.lowerBound) to \(backend.sampleRateRange.upperBound) Hz"
                : backend.sampleRates.sorted().map(String.init).joined(separator: ", ") + " Hz"
            throw MediaError(.unsupported, "the \(settings.codec) encoder does not take \(r) Hz; it takes \(list)")
        }
        if let c = channels, c < 1 || c > backend.maxChannels {
            throw MediaError(.unsupported, "the \(settings.codec) encoder takes 1 to \(backend.maxChannels) channels, not \(c)")
        }
        var rate = sampleRate
        if rate == nil, !backend.accepts(sampleRate: source.sampleRate) {
            rate = settings.codec == "opus" ? 48000 : backend.closestSampleRate(to: source.sampleRate)
        }
        let target = backend.inputFormat(for: source, sampleRate: rate, channels: channels)
        self.source = source
        encoder = try registry.makeEncoder(settings, input: target)
        frames = FrameAudioConverter(to: AudioOutputRequest(target.sampleType, planar: target.isPlanar,
                                                            sampleRate: target.sampleRate, layout: target.layout), options: options)
        if source != target { buffers = try AudioConverter(from: source, to: target, options: options) }
    }

    /// Converts and encodes one decoded frame (any format: a change mid-stream is converted to
    /// the same output); returns the packets that became ready.
    public func encode(_ frame: Frame) throws -> [Packet] {
        var out: [Packet] = []
        try encoder.encode(frames.convert(frame)) { out.append($0) }
        return out
    }

    /// Converts and encodes PCM in ``source`` format; returns the packets that became ready.
    public func encode(_ buffer: AudioBuffer) throws -> [Packet] {
        var out: [Packet] = []
        try encoder.encode(buffers?.convert(buffer) ?? buffer) { out.append($0) }
        return out
    }

    /// Ends the input: the resampler's tail and the encoder's last packets.
    public func finish() throws -> [Packet] {
        guard !ended else { return [] }
        ended = true
        var out: [Packet] = []
        if let b = buffers { try encoder.encode(b.flush()) { out.append($0) } }
        try encoder.encode(frames.flush(fallback: encoder.inputFormat)) { out.append($0) }
        try encoder.finish { out.append($0) }
        return out
    }

    /// Pull form: returns up to `packets` packets (fewer only at the end), asking `input` for
    /// PCM in ``source`` format as needed; `input` returns nil at the end of the input.
    public func fill(packets: Int, input: () throws -> AudioBuffer?) throws -> [Packet] {
        var out: [Packet] = []
        while out.count < packets && !(ended && pullQueue.isEmpty) {
            if !pullQueue.isEmpty { out.append(pullQueue.removeFirst()); continue }
            if let b = try input() { pullQueue += try encode(b) } else { pullQueue += try finish() }
        }
        return out
    }
    private var pullQueue: [Packet] = []
}

extension AudioConverter {
    /// A converter from `source` PCM to compressed packets of `settings`' codec (see
    /// ``AudioEncodingConverter``): the encoding counterpart of ``decoding(track:to:options:registry:)``.
    public static func encoding(from source: AudioFormat, to settings: EncoderSettings, sampleRate: Int? = nil,
                                channels: Int? = nil, options: Options = .init(), registry: MediaRegistry = .shared) throws -> AudioEncodingConverter {
        try AudioEncodingConverter(from: source, to: settings, sampleRate: sampleRate, channels: channels, options: options, registry: registry)
    }
}
