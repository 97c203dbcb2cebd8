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
    /// Whether a coded rate the encoder does not take was replaced by the closest one it takes
    /// (AudioConverter's `kAudioConverterEncodeAdjustableSampleRate`); see ``init(from:to:sampleRate:channels:adjustsSampleRate:options:registry:)``.
    public let adjustsSampleRate: Bool
    /// The bit rates (bits per second) the encoder may be asked for when they form a fixed set
    /// (`kAudioConverterApplicableEncodeBitRates`): MP3's, for the coded rate, from ISO/IEC
    /// 11172-3 / 13818-3 (``MPEGAudioHeader/layerIIIBitRates(sampleRate:)``; at MPEG 2.5's rates,
    /// below 16 kHz, those up to 64 kbit/s, which LAME codes); empty when the codec takes any
    /// rate in ``applicableBitRateRange``.
    public let applicableBitRates: [Int]
    /// The bit rates (bits per second) the encoder's backend says it takes, lowest to highest;
    /// nil when it takes none.
    public let applicableBitRateRange: ClosedRange<Int>?
    /// The bytes of the largest packet the encoder can give (`kAudioConverterPropertyMaximumOutputPacketSize`)
    /// where the codec bounds it: MP3's padded frame at its bit rate (or at the highest legal
    /// one when coded at a variable rate, ``MPEGAudioHeader/layerIIIMaximumFrameSize(bitRate:sampleRate:)``);
    /// AAC's 6144 bits a channel (ISO/IEC 14496-3 4.5.3.2); FLAC's frame coded verbatim at the
    /// encoder's block size; ALAC's `maxFrameBytes` from its magic cookie; Opus's 1275 bytes a
    /// frame, with the packet's framing, in every stream (RFC 6716 3.2); PCM's frames of a
    /// packet. Nil for the codecs without a bound (Vorbis).
    public var maximumOutputPacketSize: Int? {
        let p = encoder.parameters
        switch p.codec {
        case "mp3":
            guard let top = applicableBitRates.last else { return nil }
            let cbr = applicableBitRates.contains(p.bitRate) && encoderSettingsQuality == nil
            return MPEGAudioHeader.layerIIIMaximumFrameSize(bitRate: cbr ? p.bitRate : top, sampleRate: p.sampleRate)
        case "aac":
            return AudioPacketBounds.aac(channels: p.channels)
        case "flac":
            guard encoder.frameSize > 0 else { return nil }
            let bits = p.bitsPerCodedSample > 0 ? p.bitsPerCodedSample : encoder.inputFormat.sampleFormat.bytesPerSample * 8
            return AudioPacketBounds.flac(blockSize: encoder.frameSize, channels: p.channels, bitsPerSample: bits)
        case "alac":
            return AudioPacketBounds.alac(cookie: p.extradata)
        case "opus":
            // Frames of 20 ms at most (RFC 6716 2.1.4) in a packet of the encoder's duration
            // (its frame size, at the input rate); 60 ms, the longest it codes, when not stated.
            let rate = encoder.inputFormat.sampleRate
            let frames = encoder.frameSize > 0 && rate > 0 ? (encoder.frameSize * 50 + rate - 1) / rate : 3
            return AudioPacketBounds.opus(frames: frames, streams: AudioPacketBounds.opusStreams(head: p.extradata))
        default:
            return AudioPacketBounds.pcm(codec: p.codec.rawValue, frames: encoder.frameSize, channels: p.channels)
        }
    }
    private let encoderSettingsQuality: Double?

    /// A converter from `source` PCM to `settings`' codec.
    /// - Parameters:
    ///   - sampleRate: the coded rate; nil keeps the source's when the encoder takes it, else
    ///     the closest rate it takes (Opus: 48 kHz).
    ///   - channels: the coded channel count; nil keeps the source's (up to the encoder's maximum).
    ///   - adjustsSampleRate: `kAudioConverterEncodeAdjustableSampleRate`: true, a `sampleRate`
    ///     the encoder does not take is replaced by the closest one it takes (the lowest it
    ///     takes above it, else the highest below: MP3 asked for 96 kHz codes at 48 kHz, Opus
    ///     asked for 44.1 kHz at 48 kHz) and the PCM resampled to it; false (the default), it
    ///     is refused.
    ///   - options: resampler quality, mixing, dither.
    /// - Throws: the registry's `.notFound` when no plugin encodes the codec; `.unsupported`
    ///   naming what the encoder takes when it refuses the rate, channels or settings.
    public init(from source: AudioFormat, to settings: EncoderSettings, sampleRate: Int? = nil, channels: Int? = nil,
                adjustsSampleRate: Bool = false, options: AudioConverter.Options = .init(), registry: MediaRegistry = .shared) throws {
        guard let backend = registry.encoderBackends(for: settings.codec, backend: settings.backend).first else {
            _ = try registry.makeEncoder(settings, input: source)   // throws the registry's .notFound
            throw MediaError(.notFound, "no encoder for \(settings.codec)")
        }
        var sampleRate = sampleRate
        if adjustsSampleRate, let r = sampleRate, !backend.accepts(sampleRate: r) {
            sampleRate = settings.codec == "opus" ? 48000 : backend.closestSampleRate(to: r)
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
        self.adjustsSampleRate = adjustsSampleRate
        encoder = try registry.makeEncoder(settings, input: target)
        if settings.codec == "mp3" {
            let coded = encoder.parameters.sampleRate
            // MPEG 2.5's rates (below 16 kHz; Fraunhofer's extension, no ISO table) keep 13818-3's
            // bit rates, of which LAME, the encoder the plugins use, codes up to 64 kbit/s.
            applicableBitRates = MPEGAudioHeader.layerIIIBitRates(sampleRate: coded).filter { coded >= 16000 || $0 <= 64000 }
        } else {
            applicableBitRates = []
        }
        applicableBitRateRange = backend.bitRateRange
        encoderSettingsQuality = settings.quality
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

    /// Send / receive form, as ``Encoder``'s (the C `mk_encoder_push` / `mk_encoder_flush` /
    /// `mk_encoder_receive_packet`): PCM in ``source`` format is converted and encoded, its
    /// packets wait for ``receiveOutput()``.
    /// - Throws: `.state` after ``flushOutput()``; the conversion's and the encoder's errors.
    public func send(_ buffer: AudioBuffer) throws {
        guard !ended else { throw MediaError(.state, "the encoder was flushed") }
        waiting += try encode(buffer)
    }

    /// Ends the input of the send / receive form: the last packets wait for ``receiveOutput()``.
    /// A second call does nothing.
    public func flushOutput() throws {
        waiting += try finish()
    }

    /// The next packet of the send / receive form: `.packet`, `.needsInput` while the input has
    /// not ended, `.endOfStream` once ``flushOutput()`` was called and every packet received.
    public func receiveOutput() -> EncoderOutput {
        if !waiting.isEmpty { return .packet(waiting.removeFirst()) }
        return ended ? .endOfStream : .needsInput
    }
    private var waiting: [Packet] = []

    /// True once the input ended (``finish()`` or ``flushOutput()``).
    public var isFlushed: Bool { ended }

    /// Pull form: returns up to `packets` packets, asking `input` for PCM in ``source`` format
    /// as needed; `input` returns nil at the end of the input, an empty buffer for "no data
    /// now" (see ``fill(packets:pull:)``, whose `.noDataNow` it is). Fewer than `packets` only
    /// then or at the end.
    public func fill(packets: Int, input: () throws -> AudioBuffer?) throws -> [Packet] {
        try fill(packets: packets, pull: {
            guard let b = try input() else { return .endOfStream }
            return b.frames > 0 ? .data(b) : .noDataNow
        })
    }
    private var pullQueue: [Packet] = []

    /// Pull form with "no data now" (AudioConverterFillComplexBuffer encoding: PCM in through
    /// the callback, packets with their descriptions out): returns up to `packets` packets,
    /// asking `input` for PCM in ``source`` format as needed: `.data(buffer)` (an empty buffer
    /// is the end of the input), `.noDataNow` (the fill returns the packets ready so far and
    /// keeps its state: the packets of every call together equal one ``encode(_:)-(AudioBuffer)``
    /// of the whole input then ``finish()``), `.endOfStream` (the encoder drains; later calls
    /// return the rest, then nothing). Fewer than `packets` only after `.noDataNow` or at the end.
    /// - Throws: what `input` throws (packets encoded before it come first from the next call);
    ///   the conversion's and the encoder's errors.
    public func fill(packets: Int, pull input: () throws -> AudioConverterInput<AudioBuffer>) throws -> [Packet] {
        var out: [Packet] = []
        do {
            pull: while out.count < packets && !(ended && pullQueue.isEmpty) {
                if !pullQueue.isEmpty { out.append(pullQueue.removeFirst()); continue }
                switch try input() {
                case .data(let b) where b.frames > 0: pullQueue += try encode(b)
                case .data, .endOfStream: pullQueue += try finish()
                case .noDataNow: break pull
                }
            }
        } catch {
            pullQueue.insert(contentsOf: out, at: 0)      // not lost: the next call returns them first
            throw error
        }
        return out
    }
}

extension AudioConverter {
    /// A converter from `source` PCM to compressed packets of `settings`' codec (see
    /// ``AudioEncodingConverter``): the encoding counterpart of ``decoding(track:to:options:registry:)``.
    public static func encoding(from source: AudioFormat, to settings: EncoderSettings, sampleRate: Int? = nil,
                                channels: Int? = nil, adjustsSampleRate: Bool = false, options: Options = .init(),
                                registry: MediaRegistry = .shared) throws -> AudioEncodingConverter {
        try AudioEncodingConverter(from: source, to: settings, sampleRate: sampleRate, channels: channels, adjustsSampleRate: adjustsSampleRate,
                                   options: options, registry: registry)
    }
}
