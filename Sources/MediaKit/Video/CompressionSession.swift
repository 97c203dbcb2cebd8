import Dispatch
import Foundation

/// Encodes pictures asynchronously, in the shape of VideoToolbox's `VTCompressionSession`:
/// ``encodeFrame(_:pts:duration:forceKeyFrame:)`` hands a picture over and returns; the
/// conversion and encoding run on the session's own queue, and every packet is passed to the
/// output handler, called on a serial queue of its own, in decoding order.
///
/// ```swift
/// let session = try CompressionSession(VideoEncoderSettings(codec: "h264", crf: 23),
///                                      output: VideoFormat(pixelFormat: .yuv420p, width: 1280, height: 720,
///                                                          timeBase: Rational(1, 30), frameRate: Rational(30, 1))) { result in
///     switch result {
///     case .success(let packet): write(packet)
///     case .failure(let error): print(error)
///     }
/// }
/// for (i, picture) in pictures.enumerated() { try session.encodeFrame(picture, pts: Int64(i)) }
/// session.completeFrames()       // every packet has been passed to the handler
/// session.invalidate()
/// ```
///
/// Pictures may be of any pixel format and size a plugin's picture converter takes (as
/// ``VideoEncodingConverter``). At most ``maxFramesInFlight`` pictures wait for the encoder:
/// ``encodeFrame(_:pts:duration:forceKeyFrame:)`` blocks until one is done beyond that, so memory
/// stays bounded. Its methods may be called from any thread.
public final class CompressionSession: @unchecked Sendable {
    /// Pictures handed over and not yet encoded, at most, before
    /// ``encodeFrame(_:pts:duration:forceKeyFrame:)`` waits. 8.
    public static let maxFramesInFlight = 8

    /// The coded stream: codec, size, colour, the parameter sets (for a muxer's track).
    public let parameters: CodecParameters
    /// The time base of the packets' timestamps (1 / frame rate when that was given).
    public let timeBase: Rational
    /// Frames by which decoding runs ahead of presentation (B-frames).
    public let reorderDelay: Int
    /// What the encoder codes; the pts given to ``encodeFrame(_:pts:duration:forceKeyFrame:)`` are in its time base.
    public let output: VideoFormat

    private let converter: VideoEncodingConverter
    private let handler: @Sendable (Result<Packet, MediaError>) -> Void
    private let work = DispatchQueue(label: "mediakit.compression-session.encode")
    private let callbacks = DispatchQueue(label: "mediakit.compression-session.output")
    private let slots = DispatchSemaphore(value: CompressionSession.maxFramesInFlight)
    private let lock = NSLock()
    /// Under `lock`: set by invalidate(), by completeFrames() ending the stream, or by a failure.
    private var closed: MediaError?
    /// Under `lock`: invalidate() was called; queued pictures are skipped.
    private var invalidated = false
    /// Confined to `work`: a failure stops the encoding; the handler heard of it.
    private var failed = false
    /// Under `lock`: invalidate() was called from the handler, which it cannot wait for; the
    /// handler calls queued after that one are skipped.
    private var silenced = false
    /// Under `lock`: `closed` says that completeFrames() ended the stream (a failure of the
    /// pictures before the end replaces that reason).
    private var streamEnded = false
    /// Marks `callbacks` with this session's identity: ``invalidate()`` and
    /// ``completeFrames(untilPresentationTimeStamp:)`` called by the handler must not wait for
    /// the queue they run on (libdispatch stops the process on such a `sync`).
    private static let handlerQueue = DispatchSpecificKey<ObjectIdentifier>()
    /// True on the handler's queue (inside a handler call).
    private var inHandler: Bool { DispatchQueue.getSpecific(key: Self.handlerQueue) == ObjectIdentifier(self) }

    /// Opens the encoder `settings` name for pictures coded as `output` (see
    /// ``VideoEncodingConverter/init(_:output:registry:)``); `outputHandler` receives each
    /// packet, or the error that stopped the session, on the session's output queue.
    /// - Throws: the encoder's errors (`.notFound`, `.unsupported` naming what it takes).
    public init(_ settings: VideoEncoderSettings, output: VideoFormat, registry: MediaRegistry = .shared,
                outputHandler: @escaping @Sendable (Result<Packet, MediaError>) -> Void) throws {
        converter = try VideoEncodingConverter(settings, output: output, registry: registry)
        parameters = converter.encoder.parameters
        timeBase = converter.encoder.timeBase
        reorderDelay = converter.encoder.reorderDelay
        self.output = output
        handler = outputHandler
        callbacks.setSpecific(key: Self.handlerQueue, value: ObjectIdentifier(self))
    }

    /// Passes `result` to the handler on its queue, unless the handler invalidated the session meanwhile.
    private func call(_ result: Result<Packet, MediaError>) {
        let h = handler
        callbacks.async { [self] in
            if !lock.withLock({ silenced }) { h(result) }
        }
    }

    /// Hands `frame` over for encoding at `pts` (in ``output``'s time base; its own pts and
    /// time base are not read) lasting `duration` (0: one frame at the frame rate), as a key
    /// frame when `forceKeyFrame`; returns once it is queued.
    /// - Throws: `.state` after ``invalidate()``, after ``completeFrames(untilPresentationTimeStamp:)``
    ///   ended the stream, or after a failure (the handler was given the error);
    ///   `.invalidArgument` for an audio frame.
    public func encodeFrame(_ frame: Frame, pts: Int64, duration: Int64 = 0, forceKeyFrame: Bool = false) throws {
        guard frame.mediaType == .video, frame.pixelFormat != nil else {
            throw MediaError(.invalidArgument, "an audio frame was given to a compression session")
        }
        if let why = lock.withLock({ closed }) { throw why }
        slots.wait()
        var picture = frame
        picture.pts = pts
        picture.duration = duration
        picture.timeBase = output.timeBase
        let queued = picture
        // Queued under `lock`, so a picture is never queued behind the flush of a stream that
        // completeFrames() ended meanwhile (on another thread, or in the handler): it is refused.
        let refused = lock.withLock { () -> MediaError? in
            if let why = closed { return why }
            work.async { [self] in
                defer { slots.signal() }
                guard !failed, !lock.withLock({ invalidated }) else { return }
                do {
                    try converter.send(queued, forceKeyFrame: forceKeyFrame)
                    try deliverReady()
                } catch {
                    fail(error)
                }
            }
            return nil
        }
        if let refused {
            slots.signal()
            throw refused
        }
    }

    /// On `work`: passes every packet the encoder has ready to the handler.
    private func deliverReady() throws {
        while case .packet(let p) = try converter.receiveOutput() { call(.success(p)) }
    }

    /// On `work`: stops the session after an error and tells the handler.
    private func fail(_ error: Error) {
        failed = true
        let e = error as? MediaError ?? MediaError(.backend, "\(error)")
        lock.withLock {
            // A failure on a picture before the end is the better reason to give later calls.
            if closed == nil || streamEnded { closed = MediaError(.state, "the compression session stopped: \(e.description)") }
        }
        call(.failure(e))
    }

    /// Waits until the pictures handed over so far are encoded and their packets passed to the
    /// handler. With `pts` nil (the default) the stream ends: the encoder releases the packets
    /// it holds back (B-frames), every one is delivered before this returns, and the session
    /// takes no more pictures (as after `VTCompressionSessionCompleteFrames` with an invalid
    /// time, before `VTCompressionSessionInvalidate`). With a `pts`, the session goes on: the
    /// pictures presented up to `pts` are all encoded, and their packets delivered as far as
    /// the encoder releases them without ending the stream (libavcodec's encoders hold B-frame
    /// and look-ahead pictures until they see later ones or the end). Called by the handler, it
    /// returns once the pictures are encoded: their packets are passed to the handler after the
    /// call that made this one returns.
    public func completeFrames(untilPresentationTimeStamp pts: Int64? = nil) {
        // The end closes the stream before its flush is queued: pictures handed over later are
        // refused (encodeFrame queues under `lock`), so none follows the flush.
        let ends = pts == nil && lock.withLock { () -> Bool in
            if closed != nil { return false }
            closed = MediaError(.state, "the compression session's stream was ended by completeFrames()")
            streamEnded = true
            return true
        }
        work.sync {
            guard ends, !failed, !lock.withLock({ invalidated }) else { return }
            do {
                try converter.flush()
                try deliverReady()
            } catch {
                fail(error)
            }
        }
        if !inHandler { callbacks.sync {} }
    }

    /// Ends the session: pictures not encoded yet are dropped, and the handler is not called
    /// after this returns (called by the handler: not after that call returns; the packets
    /// queued behind it are dropped). Later calls of ``encodeFrame(_:pts:duration:forceKeyFrame:)``
    /// throw `.state`. A second call does nothing more.
    public func invalidate() {
        let fromHandler = inHandler
        lock.withLock {
            invalidated = true
            if fromHandler { silenced = true }
            if closed == nil { closed = MediaError(.state, "the compression session was invalidated") }
        }
        work.sync { failed = true }   // after the picture being encoded, if any; the queued ones are skipped
        if !fromHandler { callbacks.sync {} }
    }
}
