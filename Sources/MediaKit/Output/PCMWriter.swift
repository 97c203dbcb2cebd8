import Foundation

/// Writes interleaved PCM, raw (headerless) or as a WAV file. Raw PCM takes every
/// ``SampleFormat`` (big-endian, signed 8-bit and 24 bits in 32 as well: the bytes of
/// `ffmpeg -f s16be` ...); WAV the little-endian types it holds (u8, s16, s24, s32, f32, f64).
public final class PCMWriter: AudioFrameSink {
    /// The sample type written (interleaved: a planar type given is written interleaved).
    public let sampleType: SampleFormat
    /// Samples per second.
    public let sampleRate: Int
    /// Channels per sample frame.
    public let channels: Int
    /// True for a WAV file (RIFF header), false for raw PCM.
    public let wav: Bool
    private let channelMask: UInt64
    private let file: OutputFile
    private var scratch: [UInt8] = []
    /// Sample frames written so far.
    public private(set) var sampleFrames: Int64 = 0

    /// Starts writing `path` (through a temporary file, see ``OutputFile``).
    public convenience init(path: String, format: SampleFormat, sampleRate: Int, channels: Int, channelMask: UInt64 = 0, wav: Bool) throws {
        try self.init(path: path, sampleType: format, sampleRate: sampleRate, channels: channels, channelMask: channelMask, wav: wav)
    }

    /// Starts writing `path` (through a temporary file, see ``OutputFile``) in any sample type.
    /// `channelMask` goes into a WAV header (0: the default mask for the channel count).
    /// - Throws: `.invalidArgument` for a rate or channel count a WAV header cannot hold
    ///   (negative, more than 65535 channels, bytes per second beyond 32 bits) or a sample type
    ///   WAV does not hold (big-endian, ``SampleFormat/s8``, 24 in 32), `.io`.
    public init(path: String, sampleType: SampleFormat, sampleRate: Int, channels: Int, channelMask: UInt64 = 0, wav: Bool) throws {
        // Raw PCM has no header; 0 stays allowed in one (an output with no samples, rate unknown).
        guard !wav || sampleType.isNative else {
            throw MediaError(.invalidArgument, "WAV holds little-endian u8, s16, s24, s32, f32 or f64 samples, not \(sampleType.typeName); write raw PCM, or AIFF for big-endian samples", path: path)
        }
        guard !wav || WAVHeader.holds(rate: sampleRate, channels: channels, bytesPerSample: sampleType.bytesPerSample, minimum: 0) else {
            throw MediaError(.invalidArgument, "PCM at \(sampleRate) Hz with \(channels) channels cannot be written as WAV (0 to 65535 channels, a rate and bytes per second within 32 bits)", path: path)
        }
        self.sampleType = sampleType.interleaved
        self.sampleRate = sampleRate
        self.channels = channels
        self.wav = wav
        self.channelMask = channelMask
        file = try OutputFile(path: path)
        if wav { try file.write(Self.wavHeader(type: self.sampleType, rate: sampleRate, channels: channels, mask: channelMask, dataBytes: 0)) }
    }

    /// Appends every sample of an audio frame.
    public func write(_ frame: Frame) throws { try write(frame, from: 0, count: nil) }

    /// Appends samples `[from, from+count)` of an audio frame.
    public func write(_ frame: Frame, from: Int = 0, count: Int? = nil) throws {
        if frame.channels != channels || frame.sampleRate != sampleRate {
            throw MediaError(.unsupported, "the audio changed from \(sampleRate) Hz \(channels) ch to \(frame.sampleRate) Hz \(frame.channels) ch mid-stream; raw PCM output cannot hold both")
        }
        // Interleaved samples already in the written type (byte order and all): their bytes
        // go to the file as they are, with no conversion pass and no scratch copy.
        let n = max(0, min(count ?? frame.sampleCount - from, frame.sampleCount - from))
        let size = channels * sampleType.bytesPerSample
        if let format = frame.sampleFormat, !format.isPlanar, format == sampleType, 1.littleEndian == 1,
           n > 0, from >= 0, let plane = frame.planes.first, plane.length >= (from + n) * size {
            try frame.withPlane(0) { try file.write(UnsafeRawBufferPointer(rebasing: $0[(from * size)..<((from + n) * size)])) }
            sampleFrames += Int64(n)
            return
        }
        scratch.removeAll(keepingCapacity: true)
        AudioSampleConverter.append(frame, from: from, count: count, as: sampleType, to: &scratch)
        sampleFrames += Int64(scratch.count / (channels * sampleType.bytesPerSample))
        try file.write(scratch)
    }

    /// Appends converted samples (interleaved, of this writer's type, rate and channel count).
    public func write(_ buffer: AudioBuffer) throws {
        let f = buffer.format
        guard f.sampleType == sampleType, f.channels == channels, f.sampleRate == sampleRate else {
            throw MediaError(.invalidArgument, "a buffer of \(f) was given to a writer of \(sampleType.typeName) \(sampleRate) Hz \(channels) ch")
        }
        guard buffer.frames > 0 else { return }
        sampleFrames += Int64(buffer.frames)
        let bytes = buffer.interleavedBytes
        try file.write(bytes.count == buffer.frames * f.channels * sampleType.bytesPerSample ? bytes : Array(bytes.prefix(buffer.frames * f.channels * sampleType.bytesPerSample)))
    }

    /// Completes the header and moves the file into place.
    public func finish() throws {
        if wav {
            let data = sampleFrames * Int64(channels * sampleType.bytesPerSample)
            guard data <= Int64(UInt32.max) - 80 else {
                file.discard()
                throw MediaError(.limit, "\(data) bytes of audio do not fit in a WAV file (4 GiB); write raw PCM instead", path: file.path)
            }
            // RIFF chunks are padded to an even size (an odd count of 8-bit mono samples).
            if data % 2 == 1 { try file.write([0]) }
            try file.patch(Self.wavHeader(type: sampleType, rate: sampleRate, channels: channels, mask: channelMask, dataBytes: UInt32(data)), at: 0)
        }
        try file.commit()
    }

    /// Removes what was written.
    public func cancel() { file.discard() }

    /// The RIFF/WAVE header of samples of `type` (``WAVHeader``: format tag 1 or 3 with its
    /// `fact` chunk, WAVE_FORMAT_EXTENSIBLE with the channel mask for more than two channels,
    /// samples wider than 16 bits and rates above 48 kHz, as FFmpeg's wav muxer writes them).
    static func wavHeader(type: SampleFormat, rate: Int, channels: Int, mask: UInt64, dataBytes: UInt32) -> [UInt8] {
        let kind: PCMCodec.Kind = type.isFloat ? .ieeeFloat : type.bytesPerSample == 1 ? .unsigned : .signed
        let frames = Int64(dataBytes) / Int64(max(1, channels * type.bytesPerSample))
        return WAVHeader.bytes(codec: PCMCodec(kind: kind, bytes: type.bytesPerSample, bigEndian: false), rate: rate, channels: channels,
                               mask: mask, dataBytes: Int64(dataBytes), frames: frames)
    }
}
