/// The output a converter of decoded audio is asked for: a sample type and interleaving, and
/// a rate and a channel layout when they are to change (nil: the source's, as decoded).
public struct AudioOutputRequest: Sendable, Hashable {
    /// The sample type written.
    public var sampleType: SampleFormat
    /// One plane per channel (true) or interleaved frames (false, the default).
    public var planar: Bool
    /// The output rate; nil keeps the decoded rate.
    public var sampleRate: Int?
    /// The output channels and their order; nil keeps the decoded layout.
    public var layout: ChannelLayout?

    /// A request; unset fields keep the source's.
    public init(_ sampleType: SampleFormat, planar: Bool = false, sampleRate: Int? = nil, layout: ChannelLayout? = nil) {
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
