/// How a ``DecodeSession`` cuts a track to what is presented.
public enum TrimMode: String, Sendable, CaseIterable {
    /// The default: the edit list is applied as FFmpeg applies it, and audio is gapless:
    /// it ends exactly where the edit list (or `iTunSMPB`, or the Ogg end granule) says,
    /// so it holds exactly the samples the encoder was given.
    case gapless
    /// Exactly as FFmpeg 5.1 (`ffmpeg -i IN ...`): the same start as ``gapless``, but
    /// audio keeps the whole last frame that begins before the edit's end (the AAC
    /// remainder samples), and `iTunSMPB` end padding stays. Vorbis in MP4 is not cut to the
    /// sample at the edit's start either: as FFmpeg's demuxer, the output of every packet
    /// that starts before it is dropped whole. Video is as in ``gapless``.
    case ffmpeg
    /// Nothing cut: every decoded frame and sample (as FFmpeg's `-ignore_editlist 1`; an
    /// `iTunSMPB` encoder delay is still removed, as FFmpeg does).
    case none
}

/// Decodes one track and hands out the frames that are presented: a ``Decoder`` that wraps
/// the plugin's decoder with trimming, the edit list and the colour and aspect facts of the
/// container, with the same send / receive shape.
///
/// A decode session owns a ``Decoder`` created from the registry for the
/// track's codec, applies the track's edit list (``PresentationWindow``) unless
/// asked not to, and returns frames in presentation order. Packets whose frames are not
/// presented (video outside the edit, Vorbis packets FFmpeg drops whole) are sent marked
/// ``Packet/isDiscarded`` (the plugin ABI's `MK_PACKET_FLAG_DISCARD`), so the decoder uses
/// them as references and returns none of their frames; H.264 / HEVC pictures among them that
/// no other picture refers to are not sent at all (``NonReferencePictures``).
///
/// Audio is gapless: it holds exactly the samples the encoder was given.
/// Decoding starts at the packet one second before the edit's media time (so the
/// decoder is primed, as FFmpeg does), the first `media time - that packet's time`
/// decoded samples are dropped (AAC priming), and the output ends exactly at the
/// edit's end (AAC remainder frames), where FFmpeg 5.1 keeps the whole last frame
/// (``TrimMode/ffmpeg`` does that too). Without an edit list, an encoder delay and padding the container states (iTunes
/// `iTunSMPB`, Ogg Opus pre-skip and end granule) are cut the same way.
///
/// A packet the end of the file cut short (``Packet/isTruncated``) is decoded as FFmpeg
/// decodes it; if the decoder rejects it (or the data before it, when the decoder reports
/// late), that is a warning in ``warnings``, not an error, and its frames are missing.
///
/// ```swift
/// let session = try DecodeSession(track: demuxer.tracks[0])
/// while let packet = try demuxer.read(track: 0) {
///     try session.decode(packet) { frame in ... }     // send, receiving first when asked
/// }
/// try session.finish { frame in ... }                 // flush and drain
/// ```
public final class DecodeSession: Decoder {
    /// The track being decoded.
    public let track: Track
    /// The decoder doing the work (a new one after a rebuild, see ``RecoveryPolicy``).
    public private(set) var decoder: Decoder

    /// How a session goes on after the decoder rejects damaged data.
    public struct RecoveryPolicy: Sendable {
        /// Go on after a packet the decoder rejects (skipping it, as ffmpeg does), rebuilding
        /// the decoder when it keeps failing. Default: true; false throws the first error.
        public var enabled = true
        /// The session gives up at this many consecutive rejected packets (the 20th by default,
        /// as the iOS sample decoder does), with an error that counts them, counted from the
        /// first key frame among them: damaged packets between two key frames cost only their
        /// GOP (as in ffmpeg, decoding starts again at the next key frame, however long the
        /// damage); a decoder that rejects a key frame and the packets after it is given up.
        /// Also the failed receives in a row (with no packet sent between them) at which it
        /// gives up. A decoder's ``MediaError/Kind/sessionInvalidated`` is not counted here.
        /// Default: 20.
        public var maxFailedPackets = 20
        /// The session gives up at this many consecutive failed decoder creations (default 5).
        /// A creation that fails is tried again on each later packet (kept, with the GOP, for
        /// the decoder that is finally made), not at once: a device that went away has time to
        /// come back.
        public var maxRebuilds = 5
        /// The defaults.
        public init() {}
    }

    /// One recovery from damage: what failed, what the session did and what it cost.
    public struct Recovery: Sendable {
        /// The rejected packet's pts (``Packet/noTimestamp`` for an error while receiving):
        /// the packet being sent when the decoder reported the error. A decoder with frame
        /// threads (libavcodec's, threads other than 1) reports it one or more packets after
        /// the packet that caused it; decode with 1 thread to name that packet exactly.
        public var pts: Int64
        /// The rejected packet's byte offset in the file, -1 if unknown (see ``pts``).
        public var position: Int64
        /// The decoder's error.
        public var error: MediaError
        /// True when the decoder was rebuilt and the packets of the current GOP (for audio,
        /// the last few packets) were sent to it again (those whose frames were already
        /// output, discarded; the failed packet itself, and those after the last frame output,
        /// not discarded: they are decoded again). False when creating the new decoder failed:
        /// it is tried again on the next packet (see ``RecoveryPolicy/maxRebuilds``).
        public var rebuilt: Bool
        /// Frames not output because of it: the rejected packet's (video: 1, audio: 1 frame
        /// of samples); 0 for an error while receiving (the frame is counted where known), and
        /// 0 for ``MediaError/Kind/sessionInvalidated`` (the packet is decoded again by the new
        /// decoder).
        public var framesLost: Int
    }

    /// The recovery rules (set before decoding; default ``RecoveryPolicy/init()``).
    public var recoveryPolicy = RecoveryPolicy()
    /// Called after each recovery, on the decoding thread.
    public var onRecovery: ((Recovery) -> Void)?
    /// Every recovery so far, oldest first. A rejected video packet's ``Recovery/framesLost``
    /// becomes 0 when a rebuilt decoder, sent it again, outputs its frame while it is primed
    /// (so it may be 0 here where ``onRecovery`` was told 1). With frame threads, where an
    /// error names a later packet than the damaged one (see ``Recovery/pts``), the count of
    /// frames lost is approximate; decode with 1 thread to make it exact.
    public private(set) var recoveries: [Recovery] = []
    /// Decoder rebuilds so far.
    public private(set) var rebuilds = 0
    /// Packets the session took so far (``send(_:)`` returned ``SendResult/accepted``; a
    /// packet sent again after ``SendResult/receiveFirst`` counts once): with
    /// ``AsyncDecodeSession/framesDelivered``, what went in against what came out.
    public private(set) var packetsSent = 0
    /// Times the decoder said it cannot go on for a reason other than the data
    /// (``MediaError/Kind/sessionInvalidated``: a device plugin that lost its device); each
    /// rebuilt it (at once, or on a later packet when creating it failed), not counted as damage.
    public private(set) var invalidations = 0
    /// The decoder failed (damage or an invalidation) and creating its replacement failed: a
    /// new one is tried on the next packet, which is kept for it meanwhile.
    private var decoderLost = false
    /// Makes a new decoder for the track (nil when the session wraps a caller's decoder: it
    /// can skip damaged packets but not rebuild).
    private let makeDecoder: (() throws -> Decoder)?
    /// Makes a decoder for other parameters: after a format change mid-stream, and for a
    /// rebuild after one (nil when the session wraps a caller's decoder).
    private let remakeDecoder: ((CodecParameters) throws -> Decoder)?
    /// Decoders re-created for a format change mid-stream (``Packet/newParameters``) so far.
    public private(set) var formatChanges = 0
    /// Video: the packets since the last key frame that the decoder took, those it rejected
    /// too (the GOP to send again after a rebuild: a decoder may report an error on a later
    /// packet than the one that caused it, see ``recover(from:packet:)``); audio: the last few
    /// packets (to prime a rebuilt decoder). Bounded by ``gopLimit`` (the bytes held: a video
    /// packet ``rereader`` can read again is kept without its bytes).
    private var gop: [KeptPacket] = []
    private var gopBytes = 0
    /// Reads kept video packets again from the file (set by an owner that reads the demuxer and
    /// feeds this session on one thread: ``Transcoder``, ``FileDecoder``): the GOP then costs
    /// positions, not a GOP of compressed video.
    var rereader: PacketRereading?
    /// A packet kept for a rebuild: whole, or (``hash`` set) without its bytes, which
    /// ``rereader`` gives back at its position and the hash checks.
    private struct KeptPacket {
        var packet: Packet
        var size: Int
        var hash: Int?
    }
    private var gopOverflow = false
    private static let gopLimit = (packets: 1200, bytes: 128 << 20)
    private var consecutiveFailures = 0
    /// Of ``consecutiveFailures``, those from the first key frame among them on (0 while
    /// none was a key frame): what ``RecoveryPolicy/maxFailedPackets`` limits.
    private var failuresFromKey = 0
    private var consecutiveRebuilds = 0
    /// The decoder was rebuilt for the damage being stepped over: it is rebuilt once per
    /// damage, never again until it has taken a key frame without an error (decoding starts
    /// again there; until then, damaged packets that the decoder takes between rejected ones,
    /// and the errors a threaded decoder reports late, are the same damage).
    private var rebuiltForThisDamage = false
    /// Video: the latest presentation time of a frame the decoder gave (output or dropped by
    /// the window); a rebuilt decoder is sent the GOP's later packets without the discard
    /// mark, so the frames the replaced decoder still held (reordering, frame threads) are
    /// not lost.
    private var lastDecodedPts = Int64.min
    /// Video: the pts of rejected packets whose frame counts as lost, with the index of their
    /// recovery: a rebuilt decoder sent the packet again may output it while it is primed
    /// (``prime(_:)``). Bounded: the oldest are forgotten past 256.
    private var lostFrames: [Int64: Int] = [:]
    /// What is presented; ``PresentationWindow/everything`` when trimming is off.
    public let window: PresentationWindow
    /// How the track is cut.
    public let trimMode: TrimMode
    /// The track's codec parameters (``Decoder`` conformance).
    public var parameters: CodecParameters { track.parameters }
    private let isAudio: Bool
    /// Audio: the last packet at or before this time is where decoding starts.
    private var audioStartTarget: Int64
    /// Audio: the media time where the presented audio starts (the edit's, or a seek's target).
    private var startMedia: Int64
    /// Video after ``seek(to:)``: frames presented before this media time are not returned
    /// (raised without a reset by ``frames(at:from:)``, which decodes forward between targets).
    var seekFloor: Int64?
    /// Video: whether the track's packets carry no timestamps (raw H.264 / HEVC streams),
    /// decided by the first packet sent; nil before. Only then are frames timed by
    /// ``untimedClock`` (a timed track's frame without a timestamp keeps none).
    private var untimedTrack: Bool?
    /// Video whose packets carry no timestamps: the presentation time given to the next frame
    /// the decoder outputs without one, frames counted in presentation order at the packets'
    /// duration from the first (0), as ffmpeg's tool times them. Nil after a reset until a key
    /// frame whose time the frame list knows is sent (``untimedKeyTimes``: where decoding that
    /// starts at it outputs its first frame); frames decoded while it is nil keep no timestamp.
    private var untimedClock: Int64? = 0
    /// One frame's duration for ``untimedClock``: the last untimed packet's.
    private var untimedStep: Int64 = 1
    /// The presentation times of such a track's key frames, by their packets' byte positions:
    /// read with the frame list (``presentationTimes(from:)``); empty for a list given by
    /// ``usePresentedFrames(times:keyFrames:)``.
    var untimedKeyTimes: [Int64: Int64] = [:]
    /// The presentation times of the track's presented frames, sorted, once
    /// ``frame(at:from:)`` has scanned them.
    var presentedTimes: [Int64]?
    /// The indices in ``presentedTimes`` of the key frames (sync samples), read with them.
    var presentedKeyIndices: [Int] = []
    /// Where the last batch of ``frames(atIndices:from:resuming:deliver:)`` stopped, for the
    /// next batch that resumes; dropped by every other use of the session (each public
    /// method that sends, receives, flushes or resets).
    var frameBatchResume: FrameBatchResume?
    /// Tells the packets whose picture no other picture refers to (H.264, HEVC; nil for other
    /// codecs): those sent discarded are not decoded at all. Made again for a packet's new
    /// codec parameters (a new avcC may change the length prefix).
    private lazy var nonReference = NonReferencePictures(track: track)
    /// Video packets left undecoded as discarded pictures nobody refers to (before a seek's
    /// target or outside the edit list's window).
    private(set) var skippedNonReference = 0
    /// Audio after ``seek(to:)``: the samples to skip are counted from the first decoded
    /// frame's pts (a decoder may output nothing for its first packets: Vorbis primes its
    /// overlap with the first one), not from the first packet's.
    private var skipFromFirstFrame = false
    private var held: Packet?
    private var started = false
    private var stopped = false
    /// A packet the session took that the decoder has not yet: the held start packet, when
    /// the decoder refused it (it had output waiting). ``receiveOutput()`` sends it when the
    /// decoder asks for input.
    private var queued: Packet?
    /// Frames of one packet with an end trim, cut and presented, not yet received.
    private var ready: [Frame] = []
    private var readyIndex = 0
    /// ``flush()`` was called; the decoder itself is flushed once it has no output waiting.
    private var flushed = false
    private var flushPending = false
    /// Audio: decoded samples (per channel) still to drop from the start.
    private var skipSamples: Int64 = 0
    /// Audio: samples (per channel) still to output before the presentation ends; nil: no limit.
    private var remaining: Int64?
    /// Audio: the rate ``skipSamples`` and ``remaining`` count in. They are computed at the
    /// track's stated rate; when the decoder outputs another (HE-AAC whose SBR only the
    /// audio data signals), both are converted to the decoded rate at the first frame.
    private var trimRate: Int
    /// Whether trimming is on at all.
    private let trim: Bool
    /// True once a packet carried its own trims (Ogg): they replace the track-level ones.
    private var packetTrims = false
    /// ``TrimMode/ffmpeg`` on a track whose container states FFmpeg's end discard
    /// (``Track/ffmpegEndDiscard``): each packet's share of it is cut from its output.
    private let ffmpegEndCut: Bool
    /// ``TrimMode/ffmpeg`` on Vorbis: FFmpeg's mov demuxer does not cut Vorbis audio to the
    /// sample at the edit's start; it drops every packet that starts before it, whole (the
    /// output of decoding it, which for the first Vorbis packet is nothing). Packets before
    /// this time are sent discarded; nil when not in use (or after a seek).
    private var discardBefore: Int64?
    /// Set once a packet that the end of the file cut short (``Packet/isTruncated``) was sent:
    /// from then on the decoder's `.invalidData` is FFmpeg's "error while decoding" on that
    /// packet, recorded in ``warnings``, not a failure.
    private var afterCut = false

    /// What the session stepped over without failing, oldest first: a packet cut short by the
    /// end of the file that the decoder rejected (its frames are missing, as in ffmpeg's output).
    public private(set) var warnings: [MediaError] = []

    /// Creates a session for `track`.
    /// - Parameters:
    ///   - registry: where decoders come from (default: ``MediaRegistry/shared``).
    ///   - backend: a backend or plugin name to insist on; nil picks by priority.
    ///   - threads: decoder threads, 0 (the default) for every core.
    ///   - trim: how the track is cut to what is presented (default ``TrimMode/gapless``).
    /// - Throws: `.unsupported` for a track MediaKit cannot decode (naming why), or the
    ///   registry's `.notFound` naming the codec and every place searched.
    public convenience init(track: Track, registry: MediaRegistry = .shared, backend: String? = nil, threads: Int = 0, trim: TrimMode = .gapless) throws {
        if let reason = track.unsupportedReason {
            throw MediaError(.unsupported, "track \(track.index) cannot be decoded: \(reason)")
        }
        let make = { (p: CodecParameters) in try registry.makeDecoder(for: p, timeBase: track.timeBase, backend: backend, threads: threads) }
        self.init(track: track, decoder: try make(track.parameters), trim: trim, rebuild: { try make(track.parameters) }, remake: make)
    }

    /// Wraps `decoder` (any ``Decoder`` for `track`'s codec: a plugin's, or one of your own)
    /// with the track's trimming, edit list and reordering rules.
    /// A session over a caller's decoder skips damaged packets but cannot rebuild it.
    public convenience init(track: Track, decoder: Decoder, trim: TrimMode = .gapless) {
        self.init(track: track, decoder: decoder, trim: trim, rebuild: nil)
    }

    /// A session that rebuilds its decoder with `rebuild` after repeated failures, and with
    /// `remake` from the new parameters a packet carries (``Packet/newParameters``).
    init(track: Track, decoder: Decoder, trim: TrimMode, rebuild: (() throws -> Decoder)?,
         remake: ((CodecParameters) throws -> Decoder)? = nil) {
        self.track = track
        self.decoder = decoder
        self.makeDecoder = rebuild
        self.remakeDecoder = remake
        self.window = trim != .none ? PresentationWindow(track: track) : .everything
        self.isAudio = track.mediaType == .audio
        self.trim = trim != .none
        self.trimMode = trim
        self.trimRate = track.parameters.sampleRate
        let oneSecond = track.timeBase.numerator > 0 ? track.timeBase.denominator / track.timeBase.numerator : 0
        self.audioStartTarget = window == .everything ? .min : window.start - oneSecond
        self.startMedia = window == .everything ? .min : window.start
        if !isAudio || window == .everything {
            started = true
            skipSamples = track.trimsOnPackets ? 0 : Int64(track.encoderDelay)
        }
        packetTrims = track.trimsOnPackets
        ffmpegEndCut = isAudio && trim == .ffmpeg && !track.trimsOnPackets && track.ffmpegEndDiscard != nil
            && track.parameters.sampleRate > 0
        if isAudio && trim == .ffmpeg && track.parameters.codec == "vorbis" && !track.trimsOnPackets
            && window != .everything && window.start > 0 {
            discardBefore = window.start
        }
        if isAudio && trim == .gapless && !track.trimsOnPackets {
            let rate = Int64(track.parameters.sampleRate)
            if let end = window.end {
                remaining = Rational.rescale(end - window.start, from: track.timeBase, to: Rational(1, max(1, rate)))
            } else if track.encoderPadding > 0 && track.duration > 0 {
                remaining = Rational.rescale(track.duration, from: track.timeBase, to: Rational(1, max(1, rate)))
                    - Int64(track.encoderDelay) - Int64(track.encoderPadding)
            }
        }
    }

    /// True between ``flush()`` and ``reset()`` (or the end of ``drainDelayed(_:)``): ``send(_:)``
    /// refuses packets. Whether every frame was received is ``receiveOutput()``'s
    /// ``DecoderOutput/endOfStream``, which the session passes on from its decoder.
    public var isDraining: Bool { flushed }

    /// Sends one packet of the track. ``SendResult/receiveFirst``: frames are waiting (the
    /// packet was not taken); receive them, then send it again. Packets after the presented
    /// audio ended are taken and dropped.
    /// - Throws: `.state` after ``flush()``; the decoder's errors (a packet cut short by the
    ///   end of the file that the decoder rejects is a warning instead, see ``warnings``).
    public func send(_ packet: Packet) throws -> SendResult {
        frameBatchResume = nil
        if flushed {
            throw MediaError(.state, "send after flush(): call reset() to decode more", context: "track \(track.index) decode session")
        }
        if queued != nil || readyIndex < ready.count { return .receiveFirst }
        if stopped {
            packetsSent += 1
            return .accepted
        }
        if !started {
            // Hold the latest packet at or before the start target; start with it.
            if held == nil || packet.dts <= audioStartTarget {
                held = packet
                packetsSent += 1
                return .accepted
            }
            if try begin() == .receiveFirst { return .receiveFirst }
        }
        let result = try submit(packet)
        if result == .accepted { packetsSent += 1 }
        return result
    }

    /// Ends the stream: the decoder's delayed frames come out of ``receiveOutput()``, which
    /// says ``DecoderOutput/endOfStream`` once every presented frame was received.
    public func flush() throws {
        frameBatchResume = nil
        if flushed { return }
        // Draining from here on, even when sending the held start packet fails below: the
        // caller said the stream ended (mk_decode_session_send_packet's NULL refuses packets after).
        flushed = true
        flushPending = true
        if !started { _ = try begin() }
        try flushIfIdle()
    }

    /// The mid-stream flush of the iOS decoder: passes the decoder's delayed frames to `output`
    /// (as ``finish(_:)``), then readies the session for the next packet of the same stream:
    /// the decoder is reset and sent the kept packets of the current GOP again (for audio, the
    /// last few packets), their output discarded, so decoding goes on without waiting for a key
    /// frame and no frame comes out twice. Unlike ``flush()``, no ``reset()`` is needed after it.
    /// - Throws: what ``finish(_:)`` throws; the decoder's error on the kept packets.
    public func drainDelayed(_ output: (Frame) throws -> Void) throws {
        frameBatchResume = nil
        try finish(output)
        flushed = false
        flushPending = false
        guard !decoderLost else { return }   // the next packet makes a decoder, primed then
        decoder.reset()
        try prime(decoder)
    }

    /// The next presented frame, ``DecoderOutput/needsInput`` when the session needs another
    /// packet, or ``DecoderOutput/endOfStream`` after ``flush()`` once its decoder said so and
    /// every presented frame was received.
    /// - Throws: the decoder's errors (after the cut of a truncated file, its rejections are
    ///   warnings and decoding goes on, as ffmpeg goes on after "error while decoding").
    public func receiveOutput() throws -> DecoderOutput {
        frameBatchResume = nil
        var rejected = 0
        var failedReceives = 0
        while true {
            if readyIndex < ready.count {
                let frame = ready[readyIndex]
                readyIndex += 1
                if readyIndex == ready.count {
                    ready = []
                    readyIndex = 0
                }
                return .frame(frame)
            }
            if decoderLost {
                // No decoder until one can be made again (on the next packet).
                guard flushed else { return .needsInput }
                if flushPending {
                    flushPending = false
                    if try rebuild(packet: nil) { continue }
                    warnings.append(MediaError(.backend, "track \(track.index): no decoder could be made again before the end of the stream; "
                                               + "the \(gop.count) packet(s) kept for it were not decoded", context: "track \(track.index) decode session"))
                }
                return .endOfStream
            }
            let output: DecoderOutput
            do {
                output = try decoder.receiveOutput()
            } catch where rejected < 8 && tolerated(error, packet: nil) {
                rejected += 1
                continue
            } catch let e as MediaError where recoverable(e) {
                failedReceives += 1
                try recover(from: e, packet: nil, stuck: failedReceives >= recoveryPolicy.maxFailedPackets)
                continue
            }
            switch output {
            case .frame(let frame):
                noteDecoded(frame)
                if let presented = present(frame) { return .frame(presented) }
                continue
            case .endOfStream:
                return .endOfStream
            case .needsInput:
                break
            }
            // The decoder wants input: what the session took and has not given it yet goes first.
            if let q = queued {
                queued = nil
                if try submit(q) == .receiveFirst {
                    throw MediaError(.state, "the decoder refused a packet (receive first) but had no frame to give",
                                     context: "track \(track.index) decode session")
                }
                continue
            }
            if flushPending {
                try flushIfIdle()
                if !flushPending { continue }
            }
            return .needsInput
        }
    }

    /// Drops everything buffered (after a seek) and accepts packets again. Decoding
    /// continues from the next packet sent: no start trimming is applied again; the video
    /// window still is, and audio stops after the packet that reaches the edit's end, but the
    /// exact end sample (the gapless cut) is not kept: ``seek(to:)`` keeps both ends exact.
    public func reset() {
        frameBatchResume = nil
        decoder.reset()
        gop = []
        gopBytes = 0
        gopOverflow = false
        lostFrames = [:]
        consecutiveFailures = 0
        failuresFromKey = 0
        consecutiveRebuilds = 0
        rebuiltForThisDamage = false
        if decoderLost, let make = makeDecoder, let fresh = try? remakeDecoder?(decoder.parameters) ?? make() {
            decoder = fresh
            decoderLost = false
            rebuilds += 1
        }
        lastDecodedPts = .min
        held = nil
        queued = nil
        ready = []
        readyIndex = 0
        flushed = false
        flushPending = false
        started = true
        stopped = false
        skipSamples = 0
        remaining = nil
        discardBefore = nil
        afterCut = false
        seekFloor = nil
        skipFromFirstFrame = false
        untimedClock = nil
    }

    /// The usual pre-roll before a seek target: seek the demuxer this many seconds before the
    /// time given to ``seek(to:)`` (audio decoders need the packets before to be primed).
    public static let seekPreroll = 1.0

    /// Prepares a sample-accurate start at `seconds` of presentation time (0 is the track's
    /// first presented frame or sample): drops everything buffered, then returns only the
    /// frames presented at or after that time, audio cut to the exact sample, the edit
    /// list's end and the container's end trims still applied. Seek the demuxer first to at
    /// least ``seekPreroll`` seconds before `seconds` (``Demuxer/seek(to:)`` lands on the key
    /// frame at or before it); the packets before the target are decoded as references
    /// (video: sent discarded) and their output dropped, except H.264 / HEVC pictures no
    /// other picture refers to, which are not decoded (``NonReferencePictures``).
    /// - Throws: `.invalidArgument` for a negative or non-finite time.
    public func seek(to seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.invalidArgument, "cannot seek to \(seconds) s", context: "track \(track.index) decode session")
        }
        reset()
        let tb = track.timeBase
        let rate = track.parameters.sampleRate
        let target = presentationTicks(seconds: seconds)
        guard isAudio else {
            seekFloor = target
            return
        }
        started = false
        skipFromFirstFrame = true
        startMedia = target
        audioStartTarget = target - (tb.numerator > 0 ? tb.denominator / tb.numerator : 0)
        if trimMode == .gapless && !track.trimsOnPackets && rate > 0 {
            if let end = window.end {
                remaining = max(0, Rational.rescale(end - target, from: tb, to: Rational(1, Int64(rate))))
            } else if track.encoderPadding > 0 && track.duration > 0 {
                remaining = max(0, Rational.rescale(track.duration - target, from: tb, to: Rational(1, Int64(rate))) - Int64(track.encoderPadding))
            }
        }
    }

    /// The media time (track time base) of presentation time 0: the edit's start, or for
    /// audio without an edit the container's encoder delay; 0 for video without an edit.
    var presentationBase: Int64 {
        let rate = track.parameters.sampleRate
        let delayTicks = rate > 0 && !track.trimsOnPackets
            ? Rational.rescale(Int64(track.encoderDelay), from: Rational(1, Int64(rate)), to: track.timeBase) : 0
        return window == .everything ? (isAudio ? delayTicks : 0) : window.start
    }

    /// The media time (track time base) presented at `seconds`: rounded to the nearest tick,
    /// as ffmpeg rounds `-ss T` to the stream time base (its trim filter).
    func presentationTicks(seconds: Double) -> Int64 {
        let tb = track.timeBase
        return presentationBase + Rational.ticks(seconds: seconds, perSecond: Double(tb.denominator) / Double(max(1, tb.numerator)),
                                                 rounding: .toNearestOrAwayFromZero)
    }

    /// Flushes the decoder if nothing the session took is still waiting to be sent.
    private func flushIfIdle() throws {
        guard flushPending, queued == nil, !decoderLost else { return }
        flushPending = false
        do {
            try decoder.flush()
        } catch where tolerated(error, packet: nil) {}
    }

    /// Starts decoding with the held packet (audio whose edit starts later), setting the
    /// samples to skip from its time.
    private func begin() throws -> SendResult {
        started = true
        guard let first = held else { return .accepted }
        held = nil
        let cut = startMedia - first.pts
        skipSamples = cut > 0 ? (discardBefore == nil ? ticksToSamples(cut, rate: track.parameters.sampleRate) : 0)
                              : Int64(track.encoderDelay)
        if try submit(first) == .receiveFirst {
            queued = first
            return .receiveFirst
        }
        return .accepted
    }

    /// For a frame list given by ``usePresentedFrames(times:keyFrames:)`` (no packet positions):
    /// the time of its last key frame at or before `floor`, the one a raw stream's demuxer
    /// seeks to for that time (``RawVideoDemuxer/seek(to:)``). Decoding that starts at an HEVC
    /// key frame followed by decodable leading pictures (RADL) outputs those first: their frames
    /// would be timed from the key frame's time, too late by their count (a list read from the
    /// packets knows it; x265 writes RASL pictures, dropped, unless asked for RADL).
    private func listedKeyTime(atOrBefore floor: Int64?) -> Int64? {
        guard untimedKeyTimes.isEmpty, let floor, let times = presentedTimes else { return nil }
        return presentedKeyIndices.last { times[$0] <= floor }.map { times[$0] }
    }

    /// Gives one packet to the decoder with the session's marks (discard) and its trims.
    private func submit(_ packet: Packet) throws -> SendResult {
        if stopped { return .accepted }
        if !isAudio && untimedTrack == nil { untimedTrack = packet.pts == Packet.noTimestamp }
        if untimedTrack == true && packet.pts == Packet.noTimestamp {
            if packet.duration > 0 { untimedStep = packet.duration }
            if untimedClock == nil && packet.isKeyframe {
                untimedClock = untimedKeyTimes[packet.position] ?? listedKeyTime(atOrBefore: seekFloor)
            }
        }
        var packet = packet
        if !isAudio && packet.pts != Packet.noTimestamp
            && ((trim && !window.contains(packet.pts)) || seekFloor.map { packet.pts < $0 } == true) {
            packet.isDiscarded = true
        }
        if let p = packet.newParameters { nonReference = NonReferencePictures(codec: p.codec, extradata: p.extradata) }
        // A picture whose frame is not output and that no other picture refers to changes
        // nothing the decoder gives: it is not decoded at all (libavcodec's skip_frame
        // "nonref"). One that brings new parameters or ends at a cut still goes to the decoder.
        if packet.isDiscarded && packet.newParameters == nil && !packet.isTruncated,
           nonReference?.isNonReference(packet.data) == true {
            skippedNonReference += 1
            return .accepted
        }
        let discardWhole = isAudio && discardBefore.map { packet.pts < $0 } == true
        if discardWhole { packet.isDiscarded = true }
        let perPacketTrims = isAudio && trim && (packet.trimStart > 0 || packet.trimEnd > 0)
        if packet.isTruncated { afterCut = true }
        if decoderLost {
            // Creating a decoder failed on an earlier packet: try again. A new one is sent the
            // kept packets (those taken meanwhile not discarded: their frames come out), then
            // this packet as usual; while none can be made, the packet is kept for it.
            if try !rebuild(packet: packet) {
                if packet.isKeyframe && !gop.isEmpty && !gopOverflow {
                    warnings.append(MediaError(.backend, "track \(track.index): no decoder could be made again before the key frame at pts \(packet.pts); "
                                               + "the \(gop.count) packet(s) kept since the last one will not be decoded",
                                               offset: packet.position, context: "track \(track.index) decode session"))
                }
                remember(packet)
                return .accepted
            }
        }
        if let p = packet.newParameters, p != decoder.parameters { try changeFormat(to: p) }
        let result: SendResult
        do {
            result = try decoder.send(packet)
        } catch where tolerated(error, packet: packet) {
            return .accepted
        } catch let e as MediaError where recoverable(e) {
            // The decoder took the packet (see the plugin ABI: an error may be its own or that
            // of data sent before it, as libavcodec's frame threads report it one or more
            // packets late): a rebuilt decoder is sent it again with the rest of the GOP.
            remember(packet)
            try recover(from: e, packet: packet)
            return .accepted
        }
        if result == .receiveFirst { return result }
        consecutiveFailures = 0
        failuresFromKey = 0
        consecutiveRebuilds = 0
        if packet.isKeyframe { rebuiltForThisDamage = false }
        remember(packet)
        if ffmpegEndCut, let cut = ffmpegEndCut(of: packet), cut > 0 {
            try cutEnd(of: packet, samples: cut)
        }
        if perPacketTrims {
            // The container states the cuts per packet (Ogg: pre-skip on a link's first
            // packet, the end granule on its last), as FFmpeg's skip-samples side data.
            if !packetTrims {
                packetTrims = true
                skipSamples = 0
                remaining = nil
            }
            skipSamples += Int64(packet.trimStart)
            if packet.trimEnd > 0 { try cutEnd(of: packet, samples: packet.trimEnd) }
        }
        if discardWhole {
            // A backend that does not honour the discard mark: its output is dropped here.
            while try decoder.receive() != nil {}
        }
        if isAudio, let end = window.end, packet.pts + packet.duration >= end { stopped = true }
        return .accepted
    }

    /// The frames of a packet with an end trim: received now, cut by `trimEnd` samples from
    /// the end, presented, and kept for ``receiveOutput()``.
    private func cutEnd(of packet: Packet, samples: Int) throws {
        var frames: [Frame] = []
        while let frame = try decoder.receive() { frames.append(frame) }
        var cut = samples
        while cut > 0, var last = frames.popLast() {
            if last.sampleCount > cut, let format = last.sampleFormat {
                last.sampleCount -= cut
                let bytes = last.sampleCount * format.bytesPerSample * (format.isPlanar ? 1 : last.channels)
                last.planes = last.planes.map { Plane(base: $0.base, stride: bytes, length: bytes) }
                frames.append(last)
                cut = 0
            } else {
                cut -= last.sampleCount
            }
        }
        ready += frames.compactMap { present($0) }
    }

    /// ``TrimMode/ffmpeg``: the samples at the end of `packet` that FFmpeg's decoding discards
    /// (``Track/ffmpegEndDiscard``), as libavformat computes its discard padding: a packet that
    /// starts before the last discard sample and ends at or after the first loses
    /// min(its end - the first, its duration) samples; nil when the track has no such range.
    private func ffmpegEndCut(of packet: Packet) -> Int? {
        guard let range = track.ffmpegEndDiscard, packet.pts != Packet.noTimestamp, trimRate > 0 else { return nil }
        let perSample = Rational(1, Int64(track.parameters.sampleRate))
        let sample = Rational.rescale(packet.pts, from: track.timeBase, to: perSample)
        let duration = Rational.rescale(packet.duration, from: track.timeBase, to: perSample)
        let end = sample + duration
        guard duration > 0, end >= range.lowerBound, sample < range.upperBound else { return nil }
        return Int(min(end - range.lowerBound, duration))
    }

    /// The stream's codec parameters change here (a chained Ogg link with another rate,
    /// channel count or setup): the current decoder's delayed frames are drained and kept for
    /// ``receiveOutput()``, then a decoder made from the new parameters takes over; the frames it
    /// gives say their new format. A session over a caller's decoder passes the packets on
    /// as they are.
    private func changeFormat(to parameters: CodecParameters) throws {
        guard let remake = remakeDecoder else { return }
        try decoder.flush()
        while let frame = try decoder.receive() {
            if let presented = present(frame) { ready.append(presented) }
        }
        decoder = try remake(parameters)
        formatChanges += 1
        gop = []
        gopBytes = 0
        gopOverflow = false
    }

    /// True for the errors a session recovers from: the decoder's rejection of data, or its
    /// backend's failure, when the policy allows it.
    private func recoverable(_ e: MediaError) -> Bool {
        recoveryPolicy.enabled && (e.kind == .invalidData || e.kind == .backend
                                   || (e.kind == .sessionInvalidated && makeDecoder != nil))
    }

    /// Keeps `packet` for a rebuilt decoder and for ``drainDelayed(_:)``: video from its last
    /// key frame, audio the last few.
    private func remember(_ packet: Packet) {
        if isAudio {
            if gop.count == 4 { gop.removeFirst() }
            gop.append(KeptPacket(packet: packet, size: packet.size, hash: nil))
            return
        }
        if packet.isKeyframe {
            gop = []
            gopBytes = 0
            gopOverflow = false
        }
        guard !gopOverflow else { return }
        var kept = KeptPacket(packet: packet, size: packet.size, hash: nil)
        if rereader != nil, packet.position >= 0, packet.size > 0, !packet.isTruncated {
            kept.hash = Self.hash(packet.data)
            kept.packet.data = []
        }
        let held = kept.hash == nil ? packet.size : 0
        if gop.count >= Self.gopLimit.packets || gopBytes + held > Self.gopLimit.bytes {
            gop = []
            gopBytes = 0
            gopOverflow = true   // too long to keep: a rebuild then starts at the next key frame
            return
        }
        gop.append(kept)
        gopBytes += held
    }

    private static func hash(_ bytes: [UInt8]) -> Int {
        var h = Hasher()
        bytes.withUnsafeBytes { h.combine(bytes: $0) }
        return h.finalize()
    }

    /// The kept packets with their bytes: those kept without them read again through
    /// ``rereader``; nil when one cannot be (the file changed or is gone): a rebuild then
    /// starts at the next key frame, as after a GOP too long to keep.
    private func restoredGOP() -> [Packet]? {
        var out: [Packet] = []
        out.reserveCapacity(gop.count)
        for k in gop {
            guard k.hash != nil else {
                out.append(k.packet)
                continue
            }
            guard let bytes = try? rereader?.rereadBytes(at: k.packet.position, count: k.size),
                  bytes.count == k.size, Self.hash(bytes) == k.hash else { return nil }
            var p = k.packet
            p.data = bytes
            out.append(p)
        }
        return out
    }

    /// Goes on after the decoder rejected `packet` (nil: an error while receiving): skips it,
    /// and when the decoder keeps failing, rebuilds it and sends it the kept packets again
    /// with their output discarded (the rejected packets themselves, and those after the last
    /// frame output, decoded again). An invalidated decoder (``MediaError/Kind/sessionInvalidated``)
    /// is rebuilt at once and not counted as damage. Throws when the policy's limits are
    /// reached: at the ``RecoveryPolicy/maxFailedPackets``th consecutive rejected packet.
    private func recover(from e: MediaError, packet: Packet?, stuck: Bool = false) throws {
        let invalidated = e.kind == .sessionInvalidated
        if invalidated {
            invalidations += 1
        } else {
            consecutiveFailures += 1
            if packet?.isKeyframe == true || failuresFromKey > 0 { failuresFromKey += 1 }
        }
        if stuck || failuresFromKey >= recoveryPolicy.maxFailedPackets { throw giveUp(e, packet: packet) }
        var lost = packet == nil || invalidated ? 0 : 1
        let lostPts = lost > 0 && !isAudio ? packet?.pts : nil
        if let pts = lostPts, pts != Packet.noTimestamp {
            // Noted before a rebuild: the new decoder may output this packet's frame at once.
            if lostFrames.count >= 256 { lostFrames.removeAll() }
            lostFrames[pts] = recoveries.count
        }
        var rebuilt = false
        if makeDecoder != nil, invalidated || (consecutiveFailures >= 2 && !rebuiltForThisDamage) {
            // The decoder itself may be in a bad state (or gone): a new one, primed with the kept packets.
            drainReplaced()
            rebuilt = try rebuild(packet: packet)
        }
        if let pts = lostPts, pts != Packet.noTimestamp, lostFrames[pts] == nil { lost = 0 }
        let event = Recovery(pts: packet?.pts ?? Packet.noTimestamp, position: packet?.position ?? -1, error: e, rebuilt: rebuilt, framesLost: lost)
        recoveries.append(event)
        if !invalidated {
            let which = packet.map { "the packet at pts \($0.pts)" + ($0.position >= 0 ? " (offset \($0.position))" : "") + " was skipped" }
                ?? "a frame could not be received"
            warnings.append(MediaError(e.kind, "track \(track.index): damaged data: \(which)\(rebuilt ? ", the decoder was rebuilt" : ""); "
                                       + "\(lost) frame(s) lost: \(e.message)", path: e.path, offset: packet?.position, context: e.context))
        }
        onRecovery?(event)
    }

    /// The error the session gives up with, counting the failures and rebuilds.
    private func giveUp(_ last: MediaError, packet: Packet?) -> MediaError {
        let policy = recoveryPolicy
        let counted = failuresFromKey >= policy.maxFailedPackets ? failuresFromKey : consecutiveFailures
        let from = consecutiveFailures > counted ? " (from the first key frame among \(consecutiveFailures))" : ""
        let at = packet.map { " at the packet at pts \($0.pts)" } ?? ""
        return MediaError(last.kind, "track \(track.index): gave up after \(counted) consecutive packets the decoder rejected\(from) "
                   + "and \(consecutiveRebuilds) failed rebuilds (limits \(policy.maxFailedPackets) and \(policy.maxRebuilds))\(at); "
                   + "\(recoveries.count) recoveries before: \(last.message)", path: last.path, offset: packet?.position, context: last.context)
    }

    /// One attempt at replacing the decoder: a new one, primed with the kept packets. True
    /// when it was made; false when making (or priming) it failed: the decoder is then owed
    /// (``decoderLost``) and tried again on the next packet.
    /// - Throws: the give-up error at the ``RecoveryPolicy/maxRebuilds``th consecutive failure.
    private func rebuild(packet: Packet?) throws -> Bool {
        guard let make = makeDecoder else { return false }
        do {
            let fresh = try remakeDecoder?(decoder.parameters) ?? make()
            try prime(fresh)
            decoder = fresh
            decoderLost = false
            rebuiltForThisDamage = true
            rebuilds += 1
            // Failed while draining at the end: the new decoder is drained too.
            if flushed { flushPending = true }
            return true
        } catch let failure as MediaError {
            consecutiveRebuilds += 1
            decoderLost = true
            if consecutiveRebuilds >= recoveryPolicy.maxRebuilds { throw giveUp(failure, packet: packet) }
            return false
        }
    }

    /// Video, before a rebuild: the frames the decoder about to be replaced still holds from
    /// before the kept GOP (reordering delay, frame threads: they come from packets the new
    /// decoder is not sent) are drained from it and kept for ``receiveOutput()``; its frames of the
    /// GOP's packets are dropped (the new decoder makes them again, in order with the rest).
    /// Its errors are the damage being stepped over: draining stops at the first one.
    private func drainReplaced() {
        guard !isAudio else { return }
        let before = gopOverflow ? Int64.max : (gop.first?.packet.pts ?? Int64.max)
        do {
            try decoder.flush()
            for _ in 0..<4096 {
                guard let frame = try decoder.receive() else { break }
                guard frame.pts == Packet.noTimestamp || frame.pts < before else { continue }
                noteDecoded(frame)
                if let presented = present(frame) { ready.append(presented) }
            }
        } catch {}
    }

    /// Notes a frame the decoder gave (see ``lastDecodedPts``).
    private func noteDecoded(_ frame: Frame) {
        if !isAudio && frame.pts != Packet.noTimestamp { lastDecodedPts = max(lastDecodedPts, frame.pts) }
    }

    /// Sends the kept packets to a new decoder. Audio: all marked discarded, their output
    /// dropped. Video: those whose frames the decoder before gave (or that were discarded
    /// already) marked discarded; the later ones are not, and their frames, which the replaced
    /// decoder still held (reordering delay, frame threads), are kept for ``receiveOutput()``.
    /// The decoder's rejection of data (`.invalidData`) is the damage already counted (the
    /// kept packets include the rejected ones), not a failure of the new decoder.
    private func prime(_ fresh: Decoder) throws {
        guard !gopOverflow, let packets = restoredGOP() else { return }
        var kept: [Frame] = []
        var last = lastDecodedPts   // committed with the kept frames once the new decoder took every packet
        func take() throws -> Bool {
            var any = false
            var rejected = 0
            while true {
                let frame: Frame?
                do {
                    frame = try fresh.receive()
                } catch let e as MediaError where e.kind == .invalidData {
                    rejected += 1
                    if rejected > recoveryPolicy.maxFailedPackets { throw e }
                    any = true
                    continue
                }
                guard let frame else { return any }
                any = true
                if !isAudio {
                    if frame.pts != Packet.noTimestamp {
                        last = max(last, frame.pts)
                        // (an index not yet in recoveries: recover(from:packet:) sees the removal)
                        if let i = lostFrames.removeValue(forKey: frame.pts), i < recoveries.count { recoveries[i].framesLost = 0 }
                    }
                    if let presented = present(frame) { kept.append(presented) }
                }
            }
        }
        for var p in packets {
            if isAudio || p.pts == Packet.noTimestamp || p.pts <= lastDecodedPts { p.isDiscarded = true }
            while true {
                let result: SendResult
                do {
                    result = try fresh.send(p)
                } catch let e as MediaError where e.kind == .invalidData {
                    break
                }
                if result == .accepted { break }
                if try !take() { throw MediaError(.backend, "a rebuilt decoder refused a packet with nothing to give") }
            }
            _ = try take()
        }
        lastDecodedPts = last
        ready += kept
    }

    /// True (and the error noted in ``warnings``) when `error` is a decoder's rejection of
    /// data after the cut of a truncated file.
    private func tolerated(_ error: Error, packet: Packet?) -> Bool {
        guard afterCut, let e = error as? MediaError, e.kind == .invalidData else { return false }
        let which = packet.map { "the packet at pts \($0.pts) (cut short by the end of the file)" } ?? "the data cut short by the end of the file"
        warnings.append(MediaError(.invalidData, "track \(track.index): \(which) could not be decoded; its frames are missing, as in ffmpeg's output: \(e.message)",
                                   path: e.path, offset: packet?.position, context: e.context))
        return true
    }

    /// The frame as presented (trimmed, completed from the container), or nil when none of it is.
    private func present(_ frame: Frame) -> Frame? {
        if !isAudio {
            var frame = frame
            if untimedTrack == true, frame.pts == Packet.noTimestamp, let t = untimedClock {
                frame.pts = t
                if frame.duration <= 0 { frame.duration = untimedStep }
                untimedClock = t + untimedStep
            }
            guard window.contains(frame.pts), seekFloor.map({ frame.pts >= $0 }) ?? true else { return nil }
            // What the bitstream leaves unsaid, the container's description says (FFmpeg's
            // decoders fill frames from the stream's parameters the same way).
            let p = track.parameters
            if frame.colorRange == .unspecified { frame.colorRange = p.colorRange }
            if frame.colorPrimaries == .unspecified { frame.colorPrimaries = p.colorPrimaries }
            if frame.colorTransfer == .unspecified { frame.colorTransfer = p.colorTransfer }
            if frame.colorSpace == .unspecified { frame.colorSpace = p.colorSpace }
            // A pixel aspect ratio the container states (MP4 `pasp`) is the one presented,
            // whatever the bitstream says: the ffmpeg tool gives its decoded frames the
            // stream's ratio the same way (decode_video in ffmpeg 5.1).
            if p.sampleAspectRatio.numerator > 0 && p.sampleAspectRatio.denominator > 0 {
                frame.sampleAspectRatio = p.sampleAspectRatio
            }
            return frame
        }
        var frame = frame
        if frame.sampleRate > 0 && frame.sampleRate != trimRate {
            if trimRate > 0 {
                let from = Rational(1, Int64(trimRate)), to = Rational(1, Int64(frame.sampleRate))
                skipSamples = Rational.rescale(skipSamples, from: from, to: to)
                remaining = remaining.map { Rational.rescale($0, from: from, to: to) }
            }
            trimRate = frame.sampleRate
        }
        if skipFromFirstFrame && frame.pts != Packet.noTimestamp && frame.sampleRate > 0 {
            skipFromFirstFrame = false
            skipSamples = max(0, Rational.rescale(startMedia - frame.pts, from: track.timeBase, to: Rational(1, Int64(frame.sampleRate))))
        }
        if skipSamples > 0 {
            if skipSamples >= Int64(frame.sampleCount) {
                skipSamples -= Int64(frame.sampleCount)
                return nil
            }
            let skip = Int(skipSamples)
            skipSamples = 0
            guard let format = frame.sampleFormat else { return nil }
            let bytes = skip * format.bytesPerSample * (format.isPlanar ? 1 : frame.channels)
            frame.planes = frame.planes.map { Plane(base: $0.base + bytes, stride: $0.stride - bytes, length: $0.length - bytes) }
            frame.sampleCount -= skip
            frame.pts += Rational.rescale(Int64(skip), from: Rational(1, Int64(max(1, frame.sampleRate))), to: track.timeBase)
        }
        if let left = remaining {
            if left <= 0 { return nil }
            if Int64(frame.sampleCount) > left {
                // The last frame: keep only the samples the encoder was given.
                let keep = Int(left)
                if let format = frame.sampleFormat {
                    let bytes = keep * format.bytesPerSample * (format.isPlanar ? 1 : frame.channels)
                    frame.planes = frame.planes.map { Plane(base: $0.base, stride: bytes, length: bytes) }
                }
                frame.sampleCount = keep
            }
            remaining = left - Int64(frame.sampleCount)
        }
        return frame
    }

    private func ticksToSamples(_ n: Int64, rate: Int) -> Int64 {
        rate > 0 ? Rational.rescale(n, from: track.timeBase, to: Rational(1, Int64(rate))) : n
    }
}
