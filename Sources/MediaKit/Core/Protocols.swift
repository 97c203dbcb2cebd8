/// Reads a container: lists its tracks and hands out compressed packets.
///
/// `read()` returns packets in file order; `nil` is the end of the input and a
/// thrown ``MediaError`` is damage or an I/O failure (the packets before it were good).
///
/// A file cut short (it ends inside a packet, page or frame) is not a failure of the packets
/// before the cut: `read()` and `read(track:)` return every packet the file holds (the one
/// the cut goes through partial, marked ``Packet/isTruncated``, where FFmpeg's demuxer returns
/// it partial too), then throw one error of kind `.truncated` naming the offset of the cut,
/// then return nil.
/// A decoder takes `.truncated` as the end of the input with a warning (``FileDecoder``,
/// `mk_decode_file`, `mk-decode`); a file cut inside its index (an MP4 `moov`) still fails to open.
/// A demuxer whose packets' bytes can be read again from the seekable file they came from (at
/// ``Packet/position``): a ``DecodeSession`` fed from it on its own thread keeps the video packets
/// a rebuild needs (the GOP since the last key frame) as positions and a hash instead of bytes,
/// and reads them again only when damage makes it rebuild its decoder.
protocol PacketRereading: AnyObject {
    /// `count` bytes at `position` of the file, or nil when this demuxer cannot read them again
    /// (a stream read once).
    func rereadBytes(at position: Int64, count: Int) throws -> [UInt8]?
}

public protocol Demuxer: AnyObject {
    /// The tracks, in container order. A demuxer may add tracks at the end while reading (an
    /// MPEG-TS program whose PMT adds a stream, read from a pipe): a track's index and the tracks
    /// before it never change, and a track is listed, with its parameters, before ``read()``
    /// returns its first packet. Readers that fix their tracks at the start pass over the
    /// packets of tracks they do not know (``select(tracks:)`` does).
    var tracks: [Track] { get }
    /// The container's duration in seconds, if known.
    var duration: Double? { get }
    /// The next packet of any track in file order, or nil at the end.
    func read() throws -> Packet?
    /// The next packet of one track, or nil at that track's end. Independent of `read()`'s position.
    func read(track: Int) throws -> Packet?
    /// Moves every track to the key frame at or before `seconds` (presentation time).
    func seek(to seconds: Double) throws
    /// Moves every track to where a decoder must start to give every frame presented at or
    /// after `seconds`: ``seek(to:)``'s key frame, or an earlier one where that key frame does
    /// not start cleanly (the default is ``seek(to:)``; see ``MP4Demuxer/seekForDecoding(to:)``).
    func seekForDecoding(to seconds: Double) throws
    /// Limits `read()` to these tracks (nil: all), so unwanted data is never read.
    func select(tracks: Set<Int>?)
    /// Damage the demuxer stepped over without failing (for example Ogg pages with a bad CRC
    /// that were skipped while the following good pages were read), oldest first. Empty by default.
    var warnings: [MediaError] { get }
    /// Container-level tags (track-level ones are ``Track/metadata``). Empty by default.
    var metadata: Metadata { get }
    /// Chapters, in time order. Empty by default.
    var chapters: [Chapter] { get }
    /// Markers: named places in the sound (an AIFF file's `MARK` chunk), in file order. Empty by default.
    var markers: [Marker] { get }
    /// How a sampler plays the sound (an AIFF file's `INST` chunk), or nil (the default).
    var instrument: Instrument? { get }
    /// Cover art and attached files, in file order. Empty by default.
    var attachments: [Attachment] { get }
}

extension Demuxer {
    /// No warnings unless a demuxer reports some.
    public var warnings: [MediaError] { [] }
    /// No tags unless a demuxer reads some.
    public var metadata: Metadata { Metadata() }
    /// No chapters unless a demuxer reads some.
    public var chapters: [Chapter] { [] }
    /// No markers unless a demuxer reads some.
    public var markers: [Marker] { [] }
    /// No instrument unless a demuxer reads one.
    public var instrument: Instrument? { nil }
    /// No attachments unless a demuxer reads some.
    public var attachments: [Attachment] { [] }

    /// ``seek(to:)``: every key frame of the container starts cleanly, as far as it can tell.
    public func seekForDecoding(to seconds: Double) throws { try seek(to: seconds) }

    /// The next packet in file order, or nil at the end of the input or at a cut: the
    /// `.truncated` error of a file cut short ends the input and is kept in `cut` (to report
    /// as a warning, as ffmpeg does), every other error is thrown.
    public func read(untilCut cut: inout MediaError?) throws -> Packet? {
        do {
            return try read()
        } catch let e as MediaError where e.kind == .truncated {
            cut = e
            return nil
        }
    }
}

/// A demuxer opened on a ``ByteSource`` (every built-in one); opening a path comes with it.
public protocol SourceDemuxer: Demuxer {
    /// Opens the container in `source`, read from offset 0. A source that cannot seek works
    /// for the layouts that never go back; others are refused with `.unsupported` naming the layout.
    /// - Throws: ``MediaError``: `.invalidData` naming the structure and offset for a damaged
    ///   header, `.unsupported`, `.limit`, or the source's own errors.
    init(source: ByteSource) throws
}

extension SourceDemuxer {
    /// Opens `path` (`"-"`: standard input; a FIFO is read as a stream, as it comes).
    /// - Throws: `.notFound` / `.io` for the file, then as ``init(source:)``.
    public init(path: String) throws {
        try self.init(source: ByteSources.open(path: path))
    }
}

/// What ``Decoder/send(_:)`` did with a packet.
public enum SendResult: Sendable, Equatable {
    /// The decoder took the packet.
    case accepted
    /// The decoder has output waiting and did not take the packet (libavcodec's and dav1d's
    /// EAGAIN): call ``Decoder/receiveOutput()`` until it says ``DecoderOutput/needsInput``,
    /// then send the same packet again.
    case receiveFirst
}

/// What ``Decoder/receiveOutput()`` gives: a frame, or why there is none (dav1d's and
/// libavcodec's EAGAIN and EOF).
public enum DecoderOutput: Sendable {
    /// The next decoded frame.
    case frame(Frame)
    /// No frame until more input is sent (EAGAIN); after ``Decoder/flush()`` a decoder says
    /// ``endOfStream`` instead once it has given every frame.
    case needsInput
    /// ``Decoder/flush()`` was called and every frame was received (EOF): nothing more comes
    /// until ``Decoder/reset()``. Said again on every later call.
    case endOfStream

    /// The frame, nil for the other two.
    public var frame: Frame? {
        if case .frame(let f) = self { return f }
        return nil
    }
}

/// Turns packets of one stream into frames, with libavcodec's (and dav1d's) send / receive
/// model: every decoder in MediaKit has this one shape, from a plugin's vtable up to
/// ``DecodeSession`` and the C `mk_decode_session_*` functions.
///
/// ```swift
/// for packet in packets {
///     while try decoder.send(packet) == .receiveFirst {
///         while let frame = try decoder.receive() { use(frame) }
///     }
///     while let frame = try decoder.receive() { use(frame) }
/// }
/// try decoder.flush()                               // end of stream: drain
/// while case .frame(let frame) = try decoder.receiveOutput() { use(frame) }   // then .endOfStream
/// ```
/// ``decode(_:_:)`` and ``finish(_:)`` write that loop once, for callers that take frames
/// as they come.
public protocol Decoder: AnyObject {
    /// What the decoder was created for.
    var parameters: CodecParameters { get }
    /// Feeds one packet. Returns ``SendResult/receiveFirst`` (the packet not taken) when
    /// output is waiting: call ``receiveOutput()`` until it says ``DecoderOutput/needsInput``,
    /// then send it again.
    /// A packet marked ``Packet/isDiscarded`` is decoded (it may be a reference) but its
    /// frames are not returned.
    /// - Throws: ``MediaError``: `.invalidData` for a packet the decoder rejects, `.state`
    ///   after ``flush()``, the backend's own failures.
    func send(_ packet: Packet) throws -> SendResult
    /// The next decoded frame (``DecoderOutput/frame(_:)``), ``DecoderOutput/needsInput``
    /// when the decoder needs more input, or ``DecoderOutput/endOfStream`` after ``flush()``
    /// once every frame was received. Where the stream ends is known here only: wrappers
    /// pass the answer on rather than keep their own.
    func receiveOutput() throws -> DecoderOutput
    /// Signals the end of the stream: the decoder releases its delayed frames
    /// through ``receiveOutput()``, then says ``DecoderOutput/endOfStream``.
    func flush() throws
    /// Drops all buffered packets and frames (after a seek) and accepts input again.
    func reset()
}

extension Decoder {
    /// The next decoded frame, or nil when there is none: the decoder needs more input or,
    /// after ``flush()``, is drained (``receiveOutput()`` tells the two apart).
    public func receive() throws -> Frame? {
        try receiveOutput().frame
    }

    /// Sends `packet` and passes every frame that becomes ready to `output`, receiving first
    /// whenever the decoder asks for it.
    /// - Throws: what ``send(_:)``, ``receiveOutput()`` or `output` throw; `.state` if the decoder
    ///   keeps refusing the packet while it has no output to give (a broken decoder).
    public func decode(_ packet: Packet, _ output: (Frame) throws -> Void) throws {
        // A wrapper (a DecodeSession) may take the waiting frames itself (trimmed away) and
        // give none: one round without frames is allowed, two in a row is a broken decoder.
        var idle = 0
        while try send(packet) == .receiveFirst {
            var received = 0
            while let frame = try receive() {
                received += 1
                try output(frame)
            }
            idle = received == 0 ? idle + 1 : 0
            if idle > 1 {
                throw MediaError(.state, "the decoder refused the packet at pts \(packet.pts) (receive first) but had no frame to give",
                                 context: "\(parameters.codec) decoder")
            }
        }
        while let frame = try receive() { try output(frame) }
    }

    /// Ends the stream: flushes the decoder and passes its delayed frames to `output`.
    public func finish(_ output: (Frame) throws -> Void) throws {
        try flush()
        while let frame = try receive() { try output(frame) }
    }
}

/// Writes packets into a new container file.
///
/// Writes go to a temporary file beside the target; ``finish()`` renames it
/// into place, ``cancel()`` removes it, so a failed write never leaves a half
/// file under the target name.
public protocol Muxer: AnyObject {
    /// Adds a track and returns its index.
    func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int
    /// Adds a track copied from a demuxed ``Track`` (remux): a muxer that can keeps
    /// its language, transform matrix, edit list and source sample entry. The default
    /// implementation keeps only the codec parameters and time base.
    func addTrack(from track: Track) throws -> Int
    /// True when ``addTrack(from:firstPacket:)`` needs `track`'s first packet to describe it
    /// (MP4: VP9's vpcC, AC-3's dac3, an AV1 stream's av1C are built from the first frame).
    /// The pipeline then reads ahead until it has one.
    func needsFirstPacket(_ track: Track) -> Bool
    /// ``addTrack(from:)`` with the track's first packet when ``needsFirstPacket(_:)`` asked for
    /// it. The muxer installs there the conversions the track needs on the way in (ADTS to raw
    /// AAC, AV1 temporal units to samples, retiming) and refuses, naming itself and the codec,
    /// a codec it cannot carry.
    func addTrack(from track: Track, firstPacket: [UInt8]?) throws -> Int
    /// Adds a track an encoder writes: the packets' timestamps count from the first coded
    /// sample, the first `encoderDelay` ticks (of `timeBase`) of which are the encoder's
    /// priming. A container that can say so cuts the priming (MP4 edit list, Ogg Opus
    /// timestamps at minus the pre-skip, MP3's LAME tag).
    func addEncodedTrack(_ parameters: CodecParameters, timeBase: Rational, encoderDelay: Int) throws -> Int
    /// States an encoded track's end, known once the encoder has drained: `presentedDuration`
    /// ticks after the priming are the signal, `padding` ticks after them the encoder's end
    /// padding. Called before the track's last packet is written.
    func setGapless(track: Int, presentedDuration: Int64, padding: Int64) throws
    /// Replaces a track's codec configuration with the one an encoder has at its end (FLAC's
    /// STREAMINFO with the total samples and MD5), where the container can take it.
    func updateParameters(_ parameters: CodecParameters, track: Int) throws
    /// Gives the tags, chapters and attachments to write (track tags keyed by the indexes
    /// `addTrack` returned), after the tracks are added and before the first packet. The
    /// muxer writes what its container can hold and leaves out the rest (docs/metadata.md,
    /// "Writing"); the default implementation writes nothing.
    func setMetadata(_ metadata: MuxMetadata) throws
    /// Writes one packet (its `trackIndex` is a value `addTrack` returned).
    func write(_ packet: Packet) throws
    /// Completes the file and moves it to its final name.
    func finish() throws
    /// Abandons the file and removes what was written.
    func cancel()
}

extension Muxer {
    /// Default: `addTrack(track.parameters, timeBase: track.timeBase)`.
    public func addTrack(from track: Track) throws -> Int {
        try addTrack(track.parameters, timeBase: track.timeBase)
    }
}

/// Where one reading position of a demuxer stands with respect to a cut at the end of the file:
/// the contract of ``Demuxer/read()`` for truncated files, in one place for every container.
/// The reader calls ``cut(_:)`` when it finds the file ends early (after returning a partial
/// packet, or before returning nothing); ``check()`` then throws that `.truncated` error
/// once, and reports the end ever after.
struct TruncationState {
    private var pending: MediaError?
    /// True once the cut was thrown: reading has ended.
    private(set) var ended = false

    /// Records the cut (the first one counts); ``check()`` throws it next.
    mutating func cut(_ error: MediaError) {
        if !ended && pending == nil { pending = error }
    }

    /// Throws the recorded cut once; afterwards returns true (reading has ended), and false
    /// while no cut was found.
    mutating func check() throws -> Bool {
        if let e = pending {
            pending = nil
            ended = true
            throw e
        }
        return ended
    }

    /// Forgets the cut (after a seek: reading starts again before it).
    mutating func reset() {
        pending = nil
        ended = false
    }
}

/// What an ``Encoder`` is asked for: the codec and how to spend bits. Every field but the
/// codec is optional (nil: the backend's default, as `ffmpeg -c:a NAME` has it).
public struct EncoderSettings: Sendable, Hashable {
    /// Opus's tuning (`OPUS_SET_APPLICATION`).
    public enum Application: Int32, Sendable, Hashable {
        /// General audio (music): the default.
        case audio = 1
        /// Speech.
        case voip = 2
        /// The lowest delay, no speech mode.
        case lowDelay = 3
    }

    /// The codec to write ("aac", "opus", "vorbis", "mp3", "flac").
    public var codec: CodecID
    /// Target bits per second (`ffmpeg -b:a`).
    public var bitRate: Int?
    /// Variable bit rate on the codec's own scale (`ffmpeg -q:a`): Vorbis -1...10, MP3 9...0
    /// (LAME -V), AAC 0.1...2. Wins over ``bitRate`` for codecs that take both.
    public var quality: Double?
    /// Encoder effort: Opus 0...10, FLAC compression level 0...12.
    public var complexity: Int?
    /// Opus application.
    public var application: Application?
    /// Opus frame duration in seconds (0.0025, 0.005, 0.01, 0.02, 0.04, 0.06).
    public var frameDuration: Double?
    /// Ask for one backend by its name or its plugin's name; nil picks by priority.
    public var backend: String?

    /// Settings for `codec`; the rest default.
    public init(codec: CodecID, bitRate: Int? = nil, quality: Double? = nil, complexity: Int? = nil,
                application: Application? = nil, frameDuration: Double? = nil, backend: String? = nil) {
        self.codec = codec
        self.bitRate = bitRate
        self.quality = quality
        self.complexity = complexity
        self.application = application
        self.frameDuration = frameDuration
        self.backend = backend
    }
}

/// What ``Encoder/receiveOutput()`` gives: a packet, or why there is none (libavcodec's
/// EAGAIN and EOF).
public enum EncoderOutput: Sendable {
    /// The next packet.
    case packet(Packet)
    /// No packet until more input is sent (EAGAIN).
    case needsInput
    /// ``Encoder/flush()`` was called and every packet was received (EOF); said again on
    /// every later call.
    case endOfStream

    /// The packet, nil for the other two.
    public var packet: Packet? {
        if case .packet(let p) = self { return p }
        return nil
    }
}

/// Turns PCM frames into packets of one compressed stream, with libavcodec's send / receive
/// model: the mirror of ``Decoder``.
///
/// ```swift
/// let encoder = try MediaRegistry.shared.makeEncoder(EncoderSettings(codec: "aac", bitRate: 128_000),
///                                                    input: AudioFormat(.f32, planar: true, sampleRate: 48000, channels: 2))
/// for frame in frames {
///     _ = try encoder.send(frame)
///     while let packet = try encoder.receive() { write(packet) }
/// }
/// try encoder.flush()                               // end of stream: drain
/// while case .packet(let packet) = try encoder.receiveOutput() { write(packet) }   // then .endOfStream
/// ```
///
/// Frames may hold any number of samples: the encoder cuts them into the frame size its
/// codec needs (AAC 1024, Opus 20 ms ...). The first packet's output starts with
/// ``encoderDelay`` priming samples; a muxer cuts them (MP4 edit list, Opus pre-skip, Ogg
/// granules) together with the end padding, from ``inputSampleCount``.
public protocol Encoder: AnyObject {
    /// The coded stream: codec, rate, channels, bit rate and magic cookie (``CodecParameters/extradata``:
    /// AudioSpecificConfig, OpusHead, Vorbis headers, STREAMINFO). After draining it may hold a
    /// newer cookie (FLAC: STREAMINFO with the sample count and MD5).
    var parameters: CodecParameters { get }
    /// The PCM the encoder takes (``send(_:)`` frames and ``send(buffer:)`` buffers).
    var inputFormat: AudioFormat { get }
    /// Samples per channel the codec codes at a time (0: any count).
    var frameSize: Int { get }
    /// Priming samples at the start of the decoded output, from the backend (Opus: at 48 kHz,
    /// the OpusHead pre-skip), in ``timeBase`` ticks.
    var encoderDelay: Int { get }
    /// The time base of the packets' timestamps (1/48000 for Opus, else 1/rate).
    var timeBase: Rational { get }
    /// Input samples (per channel) sent so far.
    var inputSampleCount: Int64 { get }
    /// Feeds one frame of PCM in ``inputFormat``. Never refuses (the encoder queues packets);
    /// returns ``SendResult/accepted``.
    /// - Throws: `.invalidArgument` for a frame in another format, `.state` after ``flush()``,
    ///   the backend's own failures.
    func send(_ frame: Frame) throws -> SendResult
    /// Feeds PCM in ``inputFormat`` (as ``send(_:)``).
    func send(buffer: AudioBuffer) throws
    /// The next packet (``EncoderOutput/packet(_:)``), ``EncoderOutput/needsInput`` when the
    /// encoder needs more input, or ``EncoderOutput/endOfStream`` after ``flush()`` once every
    /// packet was received.
    func receiveOutput() throws -> EncoderOutput
    /// Signals the end of the input: the encoder codes what it holds and releases its last
    /// packets through ``receiveOutput()``, then says ``EncoderOutput/endOfStream``.
    func flush() throws
}

extension Encoder {
    /// The next packet, or nil when there is none: the encoder needs more input or, after
    /// ``flush()``, is drained (``receiveOutput()`` tells the two apart).
    public func receive() throws -> Packet? {
        try receiveOutput().packet
    }

    /// Sends `buffer` and passes every packet that becomes ready to `output`.
    public func encode(_ buffer: AudioBuffer, _ output: (Packet) throws -> Void) throws {
        try send(buffer: buffer)
        while let p = try receive() { try output(p) }
    }

    /// Ends the input: flushes the encoder and passes its last packets to `output`.
    public func finish(_ output: (Packet) throws -> Void) throws {
        try flush()
        while let p = try receive() { try output(p) }
    }
}

/// A demuxer whose index lists every sample before any is read (MP4's sample tables): the
/// timestamps of a track are known without reading its data.
public protocol SampleTableDemuxer: Demuxer {
    /// Sample `index` of `track` in decode order (timestamps in the track's time base), or nil
    /// past the last one or for a track that does not exist.
    func sampleInfo(track: Int, index: Int) -> (pts: Int64, dts: Int64, duration: Int64, size: Int, offset: Int64, isKeyframe: Bool)?
}
