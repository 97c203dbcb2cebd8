/// Converts PCM from one ``AudioFormat`` to another: sample type, interleaving, channels
/// (``ChannelMix``) and sample rate (a band-limited polyphase resampler, ``ResampleQuality``),
/// in one object, as AudioToolbox's AudioConverter does on Apple platforms.
///
/// Two ways to drive it, which give the same samples:
/// - push: ``convert(_:)-(AudioBuffer)`` with buffers of any size, then ``flush()`` at the end;
/// - pull: ``fill(frames:input:)``, which asks a callback for input as it needs it.
///
/// Timing is exact: output frame `j` is the input at time `primeLeading + j * inRate / outRate`
/// (with the default ``PrimeMethod/normal``), and after ``flush()`` the output holds exactly
/// ``outputFrames(forInputFrames:)`` frames, `round((n - primeLeading - primeTrailing) * outRate / inRate)`
/// for `n` input frames, however the input was cut. Before the flush, the last ``latency`` input frames wait for the frames
/// after them.
///
/// Sample types convert as libswresample converts them (float to s16: `clip(lrintf(x * 32768))`);
/// a conversion that neither mixes nor resamples is exact sample for sample (s16 -> s32 -> s16,
/// planar <-> interleaved, reorderings are lossless). The storage variants of ``SampleFormat``
/// (big-endian, ``SampleFormat/s8``, 24 bits in 32) convert as their native type does, their
/// bytes moved losslessly on the way in and out: ``SampleFormat/s16be`` to ``SampleFormat/f32``
/// gives the floats ``SampleFormat/s16`` gives. Not thread-safe: one thread at a time.
public final class AudioConverter {
    /// How a converter works. Every field has a default.
    public struct Options: Sendable {
        /// Resampler preset. Default: ``ResampleQuality/medium``.
        public var quality: ResampleQuality = .medium
        /// How output channels are made from input channels. Default: ``ChannelMix/standard``
        /// (by position, as `ffmpeg -ac` mixes).
        public var channelMix: ChannelMix = .standard
        /// Add triangular (TPDF) dither of ±1 LSB before rounding float to an integer type.
        /// Default: false (plain rounding, as libswresample).
        public var dither = false
        /// Input frames dropped at the start (an encoder's priming, `kAudioConverterPrimeInfo`
        /// `leadingFrames`); they still feed the filter as history. Default: 0.
        public var primeLeading = 0
        /// Input frames dropped at the end (an encoder's remainder padding); they still feed the
        /// filter. Default: 0.
        public var primeTrailing = 0
        /// How the resampler's edges are handled (`kAudioConverterPrimeMethod`): see
        /// ``AudioConverter/PrimeMethod``. Default: ``AudioConverter/PrimeMethod/normal``.
        public var primeMethod: PrimeMethod = .normal
        /// Options with every default.
        public init() {}
    }

    /// How a resampling converter treats the input before the first frame and after the last
    /// (AudioConverter's `kAudioConverterPrimeMethod`). The filter computing the output at an
    /// input time reads ``PrimeInfo/leadingFrames`` input frames before that time and
    /// ``PrimeInfo/trailingFrames`` after it (``AudioConverter/primeInfo``). Without a rate
    /// change both are 0 and the methods give the same output.
    public enum PrimeMethod: String, Sendable, CaseIterable {
        /// `kConverterPrimeMethod_Pre`: the caller gives ``PrimeInfo/leadingFrames`` real input
        /// frames before the start (frames from before a cut or seek point); they are the
        /// filter's history, not output: output frame `j` is the input at time
        /// `leadingFrames + primeLeading + j * inRate / outRate`. The output then equals, sample
        /// for sample, that of the uncut input from the cut on.
        case pre
        /// `kConverterPrimeMethod_Normal` (the default): the input before the first frame is
        /// silence and there is no latency at the output: output frame `j` is the input at time
        /// `primeLeading + j * inRate / outRate`; the converter reads ``PrimeInfo/trailingFrames``
        /// ahead (they wait in it until they come, or until ``flush()``).
        case normal
        /// `kConverterPrimeMethod_None`, latency mode (live input): the input before the first
        /// frame and after the last is silence and nothing waits for later input: the output is
        /// delayed by ``PrimeInfo/trailingFrames`` input frames (output frame `j` is the input at
        /// time `primeLeading + j * inRate / outRate - trailingFrames`: the first outputs are
        /// the filter ramping up from silence), exactly the ``normal`` output of the input
        /// preceded by `trailingFrames` silent frames; after ``flush()`` the whole ramp down is out.
        case none
    }

    /// The input frames a resampling converter's filter reads around an output's time
    /// (`kAudioConverterPrimeInfo`): ``leadingFrames`` before it, ``trailingFrames`` after it.
    public struct PrimeInfo: Sendable, Equatable {
        /// Input frames before an output's time that its filter reads (what
        /// ``PrimeMethod/pre`` takes before the start).
        public var leadingFrames: Int
        /// Input frames after an output's time that its filter reads (what ``PrimeMethod/normal``
        /// reads ahead, and ``PrimeMethod/none``'s latency).
        public var trailingFrames: Int
        /// Prime info of `leadingFrames` and `trailingFrames`.
        public init(leadingFrames: Int, trailingFrames: Int) {
            self.leadingFrames = leadingFrames
            self.trailingFrames = trailingFrames
        }
    }

    /// The input format.
    public let source: AudioFormat
    /// The output format.
    public let destination: AudioFormat
    /// The options in force.
    public let options: Options
    /// The mixing matrix used, `[output channel][input channel]`.
    public let mixMatrix: [[Double]]

    private let matrix: ChannelMatrix
    private var engine: any ConverterEngine
    private var pending: AudioBuffer
    private var pullEnded = false
    private var flushed = false

    /// Input frames given so far.
    public private(set) var inputFrames: Int64 = 0
    /// Output frames returned so far (push and pull).
    public private(set) var outputFrames: Int64 = 0

    /// A converter from `source` to `destination`.
    /// - Throws: ``MediaError``: `.invalidArgument` for a rate or channel count that is zero or
    ///   negative, a channel map or matrix of the wrong shape, negative priming; `.limit` for
    ///   rates or counts above the limits, or a rate pair whose filter would be too large (such
    ///   as 6 MHz to 1 Hz); `.unsupported` when the automatic mix cannot place a source channel.
    public init(from source: AudioFormat, to destination: AudioFormat, options: Options = Options()) throws {
        try source.validate(role: "source")
        try destination.validate(role: "destination")
        guard options.primeLeading >= 0, options.primeTrailing >= 0 else {
            throw MediaError(.invalidArgument, "priming frames must not be negative (leading \(options.primeLeading), trailing \(options.primeTrailing))")
        }
        let ratio = RateRatio(from: source.sampleRate, to: destination.sampleRate)
        if !ratio.isIdentity {
            let shape = PolyphaseFilter<Float>.shape(ratio, options.quality)
            guard shape.rows * shape.taps <= PolyphaseFilter<Float>.maxCoefficients else {
                throw MediaError(.limit, "resampling \(source.sampleRate) Hz to \(destination.sampleRate) Hz needs a filter of \(shape.rows) x \(shape.taps) coefficients, above the \(PolyphaseFilter<Float>.maxCoefficients) limit; convert in steps")
            }
        }
        let matrix = try ChannelMatrix(options.channelMix, from: source.layout, to: destination.layout, dstType: destination.sampleType)
        self.source = source
        self.destination = destination
        self.options = options
        self.matrix = matrix
        mixMatrix = matrix.coefficients
        primeInfo = Self.reach(ratio, options.quality)
        pending = AudioBuffer(empty: destination)
        engine = Self.makeEngine(source, destination, options, matrix, primeInfo)
    }

    /// The input frames the filter reads around an output's time (``PrimeInfo``): it spans
    /// inputs `t - half + 1 ... t + half` for an output at time `t`; 0 and 0 without a rate change.
    public let primeInfo: PrimeInfo

    private static func reach(_ ratio: RateRatio, _ quality: ResampleQuality) -> PrimeInfo {
        guard !ratio.isIdentity else { return PrimeInfo(leadingFrames: 0, trailingFrames: 0) }
        let half = PolyphaseFilter<Float>.shape(ratio, quality).half
        return PrimeInfo(leadingFrames: half - 1, trailingFrames: half)
    }

    /// Input frames cut at the start: the options' priming, and with ``PrimeMethod/pre`` the
    /// filter's leading frames.
    private var leadCut: Int { Self.leadCut(options, primeInfo) }
    private static func leadCut(_ options: Options, _ info: PrimeInfo) -> Int {
        options.primeLeading + (options.primeMethod == .pre ? info.leadingFrames : 0)
    }
    /// Silent input frames put before the first (``PrimeMethod/none``'s latency).
    private var silentLead: Int { options.primeMethod == .none ? primeInfo.trailingFrames : 0 }

    private static func makeEngine(_ source: AudioFormat, _ destination: AudioFormat, _ options: Options, _ matrix: ChannelMatrix,
                                   _ info: PrimeInfo) -> any ConverterEngine {
        let ratio = RateRatio(from: source.sampleRate, to: destination.sampleRate)
        let floatToInt = source.sampleType.isFloat && !destination.sampleType.isFloat
        let lead = leadCut(options, info)
        if ratio.isIdentity, lead == 0, options.primeTrailing == 0, let sel = matrix.selection,
           !(options.dither && floatToInt) {
            return DirectEngine(source, destination, selection: sel)
        }
        let engine = makeFloatEngine(source, destination, options, matrix, ratio, lead: lead)
        if options.primeMethod == .none && info.trailingFrames > 0 {
            // Latency mode: the stream starts with trailingFrames of silence. No output is ready
            // after them (the filter holds at least `half` frames and the first output's time is
            // not before 0), so nothing is dropped here.
            let n = info.trailingFrames
            let silence = [UInt8](repeating: source.sampleType.interleaved == .u8 ? 0x80 : 0, count: n * source.bytesPerFrame)
            var out = AudioBuffer(empty: destination)
            silence.withUnsafeBytes { p in
                engine.push(Array(repeating: p.baseAddress!, count: source.planeCount), frames: n, into: &out)
            }
            assert(out.frames == 0, "latency-mode silence gave output")
        }
        return engine
    }

    private static func makeFloatEngine(_ source: AudioFormat, _ destination: AudioFormat, _ options: Options, _ matrix: ChannelMatrix,
                                        _ ratio: RateRatio, lead: Int) -> any ConverterEngine {
        // Computed in f64 when either side has more than 24 bits (s32, f64 and their
        // big-endian forms), else in f32.
        let wide: Set<SampleFormat> = [.s32, .f64]
        if wide.contains(source.sampleType.native) || wide.contains(destination.sampleType.native) {
            return FloatEngine<Double>(source, destination, options, matrix, ratio, lead: lead)
        }
        return FloatEngine<Float>(source, destination, options, matrix, ratio, lead: lead)
    }

    /// Input frames that wait, before ``flush()``, for later input: outputs for an input frame
    /// come out once this many frames follow it (0 when neither resampling nor trimming, and
    /// with ``PrimeMethod/none`` unless frames are trimmed at the end).
    public var latency: Int { max(0, engine.latency - silentLead) }

    /// The output frames that `n` input frames give in all, after ``flush()``:
    /// `round((n + s - primeLeading - p - primeTrailing) * outRate / inRate)`, halves rounded
    /// up, at least 0, where `p` is ``PrimeInfo/leadingFrames`` with ``PrimeMethod/pre`` (else
    /// 0) and `s` is ``PrimeInfo/trailingFrames`` with ``PrimeMethod/none`` (else 0).
    public func outputFrames(forInputFrames n: Int) -> Int {
        let ratio = RateRatio(from: source.sampleRate, to: destination.sampleRate)
        return Int(ratio.outputFrames(for: Int64(n) + Int64(silentLead) - Int64(leadCut) - Int64(options.primeTrailing)))
    }

    // MARK: buffer sizes (kAudioConverterPropertyCalculateInputBufferSize / ...OutputBufferSize)

    /// The most output frames one push (``convert(_:)-(AudioBuffer)``) of `n` input frames can
    /// give, whatever came before it: `n` without a rate change, else `ceil(n * outRate / inRate)`
    /// (the outputs whose times fall among `n` consecutive input frames). Some pushes give
    /// this many (it is not larger than needed); the tail of ``flush()`` is not counted.
    public func maximumOutputFrames(forInputFrames n: Int) -> Int {
        let ratio = RateRatio(from: source.sampleRate, to: destination.sampleRate)
        guard n > 0 else { return 0 }
        return ratio.isIdentity ? n : Int((Int64(n) * Int64(ratio.up) + Int64(ratio.down) - 1) / Int64(ratio.down))
    }

    /// The input frames one push needs to give at least `m` output frames once the converter
    /// holds its ``latency`` (and `Options.primeLeading`'s frames) from earlier input: `m` without a
    /// rate change, else `ceil(m * inRate / outRate)`; one frame fewer gives fewer than `m` for
    /// some position in the stream (it is not larger than needed).
    public func inputFrames(forOutputFrames m: Int) -> Int {
        let ratio = RateRatio(from: source.sampleRate, to: destination.sampleRate)
        guard m > 0 else { return 0 }
        return ratio.isIdentity ? m : Int((Int64(m) * Int64(ratio.down) + Int64(ratio.up) - 1) / Int64(ratio.up))
    }

    /// `kAudioConverterPropertyCalculateOutputBufferSize`: the bytes (per plane when the
    /// destination is planar) of output that `bytes` bytes of input (per plane when the source
    /// is planar; whole frames only) can give in one push: ``maximumOutputFrames(forInputFrames:)``.
    public func outputBufferSize(forInputBytes bytes: Int) -> Int {
        maximumOutputFrames(forInputFrames: max(0, bytes) / source.bytesPerFrame) * destination.bytesPerFrame
    }

    /// `kAudioConverterPropertyCalculateInputBufferSize`: the bytes of input (per plane when
    /// the source is planar) one push needs to give `bytes` bytes of output (per plane when the
    /// destination is planar; rounded up to whole frames): ``inputFrames(forOutputFrames:)``.
    public func inputBufferSize(forOutputBytes bytes: Int) -> Int {
        let frames = (max(0, bytes) + destination.bytesPerFrame - 1) / destination.bytesPerFrame
        return inputFrames(forOutputFrames: frames) * source.bytesPerFrame
    }

    /// `kAudioConverterPropertyMaximumOutputPacketSize`: the bytes of the largest output
    /// packet. PCM's packet is one frame: ``AudioFormat/bytesPerFrame`` of the destination.
    public var maximumOutputPacketSize: Int { destination.bytesPerFrame }

    /// Converts `input` (in ``source`` format) and returns what can be output so far.
    /// - Throws: ``MediaError`` `.invalidArgument` when the buffer's format is not ``source``;
    ///   `.state` after ``flush()`` (call ``reset()`` first).
    public func convert(_ input: AudioBuffer) throws -> AudioBuffer {
        guard input.format == source else {
            throw MediaError(.invalidArgument, "the converter takes \(source); a buffer of \(input.format) was given")
        }
        guard !flushed else { throw MediaError(.state, "convert after flush: call reset() to start a new stream") }
        var out = AudioBuffer(empty: destination)
        var planes: [UnsafeRawPointer] = []
        Self.withPlanes(input.planes, 0, &planes) { engine.push($0, frames: input.frames, into: &out) }
        inputFrames += Int64(input.frames)
        outputFrames += Int64(out.frames)
        return out
    }

    /// Converts a decoded audio frame (whose format must be ``source``: see ``AudioFormat/init(of:)``).
    /// - Throws: ``MediaError`` `.invalidArgument` when the frame is not audio of the source format.
    public func convert(_ frame: Frame) throws -> AudioBuffer {
        guard let sf = frame.sampleFormat, sf == source.sampleFormat,
              frame.channels == source.channels, frame.sampleRate == source.sampleRate else {
            throw MediaError(.invalidArgument, "the converter takes \(source); a frame of \(frame.sampleFormat?.name ?? "video") \(frame.sampleRate) Hz \(frame.channels) ch was given")
        }
        guard !flushed else { throw MediaError(.state, "convert after flush: call reset() to start a new stream") }
        let needed = frame.sampleCount * source.bytesPerFrame
        guard frame.planes.count >= source.planeCount, frame.planes.prefix(source.planeCount).allSatisfy({ $0.length >= needed }) else {
            throw MediaError(.invalidArgument, "the frame's planes hold fewer than \(frame.sampleCount) samples")
        }
        var out = AudioBuffer(empty: destination)
        withExtendedLifetime(frame.storage) {
            engine.push(frame.planes.prefix(source.planeCount).map { UnsafeRawPointer($0.base) }, frames: frame.sampleCount, into: &out)
        }
        inputFrames += Int64(frame.sampleCount)
        outputFrames += Int64(out.frames)
        return out
    }

    /// Converts `frames` frames from raw memory: one pointer per plane of ``source``, each
    /// valid for `frames * source.bytesPerFrame` bytes for the call (the converter keeps no pointer).
    public func convert(planes: [UnsafeRawPointer], frames: Int) throws -> AudioBuffer {
        var out = AudioBuffer(empty: destination)
        try convert(planes: planes, frames: frames, appendingTo: &out)
        return out
    }

    /// As ``convert(planes:frames:)``, appending to `output` (a buffer of ``destination`` format),
    /// whose memory is reused: empty it with ``AudioBuffer/removeAll()`` between calls to convert
    /// without allocating.
    public func convert(planes: [UnsafeRawPointer], frames: Int, appendingTo output: inout AudioBuffer) throws {
        guard planes.count == source.planeCount, frames >= 0 else {
            throw MediaError(.invalidArgument, "the converter takes \(source.planeCount) plane(s) of \(source); \(planes.count) given for \(frames) frames")
        }
        guard output.format == destination else {
            throw MediaError(.invalidArgument, "the converter writes \(destination); an output buffer of \(output.format) was given")
        }
        guard !flushed else { throw MediaError(.state, "convert after flush: call reset() to start a new stream") }
        let before = output.frames
        engine.push(planes, frames: frames, into: &output)
        inputFrames += Int64(frames)
        outputFrames += Int64(output.frames - before)
    }

    /// Ends the stream: returns the frames still held (the filter's tail, cut as priming asks).
    /// Later calls return nothing until ``reset()``.
    public func flush() -> AudioBuffer {
        var out = AudioBuffer(empty: destination)
        if !flushed { engine.flush(into: &out) }
        flushed = true
        outputFrames += Int64(out.frames)
        return out
    }

    /// Forgets the stream: the next input starts a new one (history silent, priming cut again).
    public func reset() {
        engine = Self.makeEngine(source, destination, options, matrix, primeInfo)
        pending = AudioBuffer(empty: destination)
        pullEnded = false
        flushed = false
        inputFrames = 0
        outputFrames = 0
    }

    /// Pull model (AudioConverterFillComplexBuffer): returns `frames` output frames, calling
    /// `input` for source frames as needed. `input` is passed a number of frames that would
    /// do; it may return fewer (or more), and returns nil or an empty buffer at the end of the
    /// stream, after which the converter flushes itself. The result is shorter than `frames`
    /// only at the end of the stream (empty once everything has been returned). The form with
    /// "no data now": ``fill(frames:pull:)``.
    /// - Throws: what `input` throws (the frames converted before it stay for the next call),
    ///   or ``MediaError`` `.invalidArgument` for a buffer in another format than ``source``.
    public func fill(frames: Int, input: (Int) throws -> AudioBuffer?) throws -> AudioBuffer {
        try fill(frames: frames, pull: { want in
            guard let b = try input(want), b.frames > 0 else { return .endOfStream }
            return .data(b)
        })
    }

    /// Pull model with "no data now", as AudioConverterFillComplexBuffer with an input proc
    /// that returns an error and zero packets: returns up to `frames` output frames, calling
    /// `input` (passed a number of source frames that would do) as needed.
    /// - `.data(buffer)`: source frames (fewer or more than asked is fine; an empty buffer is
    ///   the end of the stream);
    /// - `.noDataNow`: nothing more for now: the frames converted so far are returned (possibly
    ///   none) and the converter keeps its state: the next call goes on where this one stopped,
    ///   and the output equals one push of the whole input;
    /// - `.endOfStream`: the converter flushes itself (the resampler's tail); later calls
    ///   return what is left, then empty buffers until ``reset()``.
    ///
    /// The result is shorter than `frames` only after `.noDataNow` or at the end of the stream.
    /// - Throws: what `input` throws: the frames converted before it are not lost, they come
    ///   first from the next call; ``MediaError`` `.invalidArgument` for a buffer in another
    ///   format than ``source``.
    public func fill(frames: Int, pull input: (Int) throws -> AudioConverterInput<AudioBuffer>) throws -> AudioBuffer {
        let ratio = RateRatio(from: source.sampleRate, to: destination.sampleRate)
        // Frames converted into `pending` are counted as output once returned.
        let counted = outputFrames
        var returned = 0
        defer { outputFrames = counted + Int64(returned) }
        pull: while pending.frames < frames && !pullEnded {
            let missing = Int64(frames - pending.frames)
            let want = Int(min(1 << 20, max(1, missing * Int64(ratio.down) / Int64(ratio.up) + 1)))
            switch try input(want) {
            case .data(let b) where b.frames > 0:
                pending.append(try convert(b))
            case .data, .endOfStream:
                pending.append(flush())
                pullEnded = true
            case .noDataNow:
                break pull
            }
        }
        let out = pending.removeFirst(min(max(0, frames), pending.frames))
        returned = out.frames
        return out
    }

    /// Frames converted by ``fill(frames:pull:)`` and not returned yet (what the next call
    /// returns first).
    public var pendingFrames: Int { pending.frames }

    private static func withPlanes(_ arrays: [[UInt8]], _ i: Int, _ acc: inout [UnsafeRawPointer], _ body: ([UnsafeRawPointer]) -> Void) {
        if i == arrays.count { return body(acc) }
        arrays[i].withUnsafeBytes { p in
            acc.append(p.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!)
            withPlanes(arrays, i + 1, &acc, body)
        }
    }
}

extension AudioBuffer {
    /// Removes every frame, keeping the memory for reuse.
    public mutating func removeAll() {
        for p in planes.indices { planes[p].removeAll(keepingCapacity: true) }
        frames = 0
    }

    /// Appends the frames of `other` (same format).
    public mutating func appendFrames(_ other: AudioBuffer) { append(other) }

    /// The first `n` frames (all when fewer), as a new buffer.
    public func prefixFrames(_ n: Int) -> AudioBuffer {
        var copy = self
        return copy.removeFirstFrames(n)
    }

    /// Removes the first `n` frames and returns them.
    public mutating func removeFirstFrames(_ n: Int) -> AudioBuffer { removeFirst(min(max(0, n), frames)) }

    /// Appends the frames of `other` (same format).
    mutating func append(_ other: AudioBuffer) {
        guard other.frames > 0 else { return }
        let bytes = other.frames * format.bytesPerFrame
        for p in planes.indices { planes[p].append(contentsOf: other.planes[p].prefix(bytes)) }
        frames += other.frames
    }

    /// Removes and returns the first `n` frames.
    mutating func removeFirst(_ n: Int) -> AudioBuffer {
        let bytes = n * format.bytesPerFrame
        var out = AudioBuffer(empty: format)
        out.frames = n
        for p in planes.indices {
            out.planes[p] = Array(planes[p].prefix(bytes))
            planes[p].removeFirst(bytes)
        }
        frames -= n
        return out
    }

    /// What ``grow(_:)`` appends its zero bytes from.
    private static let zeros = [UInt8](repeating: 0, count: 1 << 16)

    /// Grows every plane by `n` frames (zero bytes) and returns the byte offset where they start.
    mutating func grow(_ n: Int) -> Int {
        let start = frames * format.bytesPerFrame
        let total = (frames + n) * format.bytesPerFrame
        for p in planes.indices {
            planes[p].reserveCapacity(max(total, planes[p].count * 3 / 2))
            // Copied from a slab of zeros: no allocation per call, and not the generic
            // iteration per byte of `repeatElement`, which a debug build (`make sanitize`) runs
            // as such.
            var missing = total - planes[p].count
            while missing > 0 {
                let k = min(missing, Self.zeros.count)
                planes[p].append(contentsOf: Self.zeros[..<k])
                missing -= k
            }
        }
        frames += n
        return start
    }
}

/// The work behind an ``AudioConverter``.
protocol ConverterEngine: AnyObject {
    var latency: Int { get }
    func push(_ planes: [UnsafeRawPointer], frames: Int, into out: inout AudioBuffer)
    func flush(into out: inout AudioBuffer)
}

extension AudioFormat {
    /// Where channel `c` starts in `planes` and the stride between its samples.
    @inline(__always)
    func channel(_ c: Int, frame: Int, in planes: [UnsafeRawPointer]) -> (UnsafeRawPointer, Int) {
        let b = sampleType.bytesPerSample
        return isPlanar ? (planes[c] + frame * b, 1) : (planes[0] + (frame * channels + c) * b, channels)
    }
}

extension AudioBuffer {
    /// Calls `body` with where channel `c` of frame `frame` is and the stride between its samples.
    @inline(__always)
    mutating func withChannel(_ c: Int, frame: Int, _ body: (UnsafeMutableRawPointer, Int) -> Void) {
        let f = format, b = f.sampleType.bytesPerSample
        planes[f.isPlanar ? c : 0].withUnsafeMutableBytes { p in
            if f.isPlanar { body(p.baseAddress! + frame * b, 1) } else { body(p.baseAddress! + (frame * f.channels + c) * b, f.channels) }
        }
    }
}

/// Sample-type and channel selection only: each output channel is one input channel converted
/// sample for sample, or silence.
final class DirectEngine: ConverterEngine {
    let src: AudioFormat, dst: AudioFormat, selection: [Int?]
    init(_ src: AudioFormat, _ dst: AudioFormat, selection: [Int?]) {
        self.src = src
        self.dst = dst
        self.selection = selection
    }
    var latency: Int { 0 }

    func push(_ planes: [UnsafeRawPointer], frames n: Int, into out: inout AudioBuffer) {
        guard n > 0 else { return }
        let start = out.grow(n) / dst.bytesPerFrame
        if !src.isPlanar && !dst.isPlanar && src.channels == dst.channels && selection.enumerated().allSatisfy({ $0.offset == $0.element }) {
            // Same channels, both interleaved: one run of samples, converted in place order.
            let ch = dst.channels
            out.withChannel(0, frame: start) { d, _ in
                SampleKernels.convert(planes[0], src.sampleType, stride: 1, to: d, dst.sampleType, stride: 1, count: n * ch)
            }
            return
        }
        for (o, k) in selection.enumerated() {
            out.withChannel(o, frame: start) { d, ds in
                if let k {
                    let (s, ss) = src.channel(k, frame: 0, in: planes)
                    SampleKernels.convert(s, src.sampleType, stride: ss, to: d, dst.sampleType, stride: ds, count: n)
                } else if dst.sampleType == .u8 {
                    for i in 0..<n { d.storeBytes(of: 0x80, toByteOffset: i * ds, as: UInt8.self) }
                }
            }
        }
    }

    func flush(into out: inout AudioBuffer) {}
}

/// The general path: input to planar float, mix, resample or trim, float to output.
final class FloatEngine<T: PCMFloat>: ConverterEngine {
    let src: AudioFormat, dst: AudioFormat
    let rows: [[T]]
    let selection: [Int?]?
    let stage: TimeStage<T>
    var dithers: [TPDFDither?]
    private var inScratch: [UnsafeMutablePointer<T>] = []
    private var outScratch: [UnsafeMutablePointer<T>] = []
    private var outCapacity = 0
    static var block: Int { 4096 }

    init(_ src: AudioFormat, _ dst: AudioFormat, _ options: AudioConverter.Options, _ matrix: ChannelMatrix, _ ratio: RateRatio, lead: Int) {
        self.src = src
        self.dst = dst
        rows = matrix.coefficients.map { $0.map { T($0) } }
        selection = matrix.selection
        stage = TimeStage<T>(ratio: ratio, channels: dst.channels, quality: options.quality,
                             lead: lead, trail: options.primeTrailing)
        let ditherOn = options.dither && !dst.sampleType.isFloat
        dithers = (0..<dst.channels).map { ditherOn ? TPDFDither(seed: UInt64($0 + 1)) : nil }
        if selection == nil {
            inScratch = (0..<src.channels).map { _ in .allocate(capacity: Self.block) }
        }
    }

    deinit {
        for p in inScratch { p.deallocate() }
        for p in outScratch { p.deallocate() }
    }

    var latency: Int { Int(stage.hold) }

    // Generic class methods are reached through the protocol unspecialised; these attributes
    // make them jump to Float and Double copies, where the sample loops are inlined.
    @_specialize(where T == Float)
    @_specialize(where T == Double)
    func push(_ planes: [UnsafeRawPointer], frames n: Int, into out: inout AudioBuffer) {
        var done = 0
        while done < n {
            let m = min(Self.block, n - done)
            let targets = stage.reserve(m)
            if let selection {
                for (o, k) in selection.enumerated() {
                    if let k {
                        let (s, ss) = src.channel(k, frame: done, in: planes)
                        SampleKernels.load(s, src.sampleType, stride: ss, into: targets[o], stride: 1, count: m)
                    } else {
                        targets[o].update(repeating: 0, count: m)
                    }
                }
            } else {
                for k in 0..<src.channels {
                    let (s, ss) = src.channel(k, frame: done, in: planes)
                    SampleKernels.load(s, src.sampleType, stride: ss, into: inScratch[k], stride: 1, count: m)
                }
                for o in 0..<dst.channels {
                    ChannelMatrix.mix(rows, inScratch, into: targets[o], row: o, count: m)
                }
            }
            stage.commit(m)
            drain(into: &out)
            done += m
        }
    }

    @_specialize(where T == Float)
    @_specialize(where T == Double)
    func flush(into out: inout AudioBuffer) {
        stage.finish()
        drain(into: &out)
    }

    private func drain(into out: inout AudioBuffer) {
        var r = stage.ready
        while r > 0 {
            let m = min(r, Self.block)
            if outCapacity < m {
                for p in outScratch { p.deallocate() }
                outScratch = (0..<dst.channels).map { _ in .allocate(capacity: Self.block) }
                outCapacity = Self.block
            }
            stage.produce(m, into: outScratch)
            let start = out.grow(m) / dst.bytesPerFrame
            for o in 0..<dst.channels {
                out.withChannel(o, frame: start) { d, ds in
                    SampleKernels.store(outScratch[o], stride: 1, to: d, dst.sampleType, stride: ds, count: m, dither: &dithers[o])
                }
            }
            r -= m
        }
    }
}

/// What a pull converter's input callback answers (``AudioConverter/fill(frames:pull:)``,
/// ``PacketAudioConverter/fill(frames:pull:)``, ``AudioEncodingConverter/fill(packets:pull:)``),
/// as an AudioConverterComplexInputDataProc answers: data, "no data now" (its error with zero
/// packets), or the end of the stream (zero packets and no error).
public enum AudioConverterInput<Data> {
    /// Input: PCM in the converter's source format, or compressed packets (each carrying its
    /// size, time and duration: AudioStreamPacketDescription's fields).
    case data(Data)
    /// Nothing more for now: the fill returns what it produced so far and the converter keeps
    /// its state for the next call.
    case noDataNow
    /// The end of the input: the converter drains (resampler tail, decoder's or encoder's
    /// delayed output).
    case endOfStream
}

extension AudioConverterInput: Sendable where Data: Sendable {}
