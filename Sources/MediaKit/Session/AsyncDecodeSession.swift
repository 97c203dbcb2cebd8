import Foundation

/// Decodes one track on a thread of its own, reading its demuxer or taking the packets the
/// caller hands over (``decode(_:)``, made with ``init(track:registry:backend:threads:trim:recovery:bufferLimit:packetLimit:)``),
/// and delivers the presented frames
/// asynchronously, as the iOS video decoder (a VTDecompressionSession on its serial queue) does:
/// either as an `AsyncSequence` (``frames``), or through callbacks on a serial `DispatchQueue`
/// the caller chooses (``start(on:frame:recovery:error:end:)``), or one at a time from a
/// blocking call (``nextFrame()``, for C and Python).
///
/// The work is a ``DecodeSession`` (edit lists, gapless audio, recovery from damaged data,
/// sample-accurate ``seek(to:)``) fed from the demuxer by the session's thread. Decoding runs
/// ahead of the consumer by at most ``bufferLimit`` frames (plus the frames the decoder itself
/// holds): when that many wait, the session's thread waits too (back-pressure, not an
/// unbounded queue).
///
/// ```swift
/// let session = try AsyncDecodeSession(path: "movie.mp4", track: 0)
/// for try await frame in session.frames { ... }              // Swift concurrency
///
/// try session.start(on: myQueue) { frame in ... }             // or callbacks on myQueue
/// session.flush { print("delayed frames delivered") }         // mid-stream flush
///
/// let fed = try AsyncDecodeSession(track: demuxer.tracks[0]) // packets from the caller
/// try fed.start(on: myQueue, frame: { frame in ... }, error: { error in ... })
/// while let packet = try demuxer.read(track: 0) { try fed.decode(packet) }   // returns at once
/// try fed.finish()                                            // the end of the stream
/// fed.waitForAsynchronousFrames()                             // every frame delivered
/// ```
///
/// Threads: every method may be called from any thread (``decode(_:)`` from one at a time, for
/// its packets' order). The demuxer is the session's from
/// ``init(demuxer:track:registry:backend:threads:trim:recovery:bufferLimit:)`` on: it is read
/// on the session's thread only, so the caller must not use it while the session is alive.
/// Frames are ``Sendable``: their memory (the plugin's) is released on whatever thread drops
/// the last copy, which the plugin ABI allows (`release` is thread-safe, also after the
/// decoder is destroyed). Dropping the last reference to the session (or ``cancel()``) stops
/// its thread.
public final class AsyncDecodeSession: @unchecked Sendable {
    /// The track being decoded.
    public var track: Track { core.session.track }
    /// Frames decoded ahead of the consumer at most (default 8).
    public var bufferLimit: Int { core.capacity }
    let core: AsyncDecodeCore

    /// A session over `demuxer`'s track `track` (an index into ``Demuxer/tracks``); the demuxer
    /// becomes the session's (see the type's threads note). Decoding starts with the first
    /// consumer (``frames``, ``start(on:frame:recovery:error:end:)`` or ``nextFrame()``).
    /// - Parameters:
    ///   - recovery: how damaged data is stepped over (``DecodeSession/RecoveryPolicy``).
    ///   - bufferLimit: frames decoded ahead of the consumer at most (at least 1).
    /// - Throws: `.invalidArgument` for a track index out of range; what
    ///   ``DecodeSession/init(track:registry:backend:threads:trim:)`` throws.
    public init(demuxer: Demuxer, track: Int, registry: MediaRegistry = .shared, backend: String? = nil, threads: Int = 0,
                trim: TrimMode = .gapless, recovery: DecodeSession.RecoveryPolicy = .init(), bufferLimit: Int = 8) throws {
        guard demuxer.tracks.indices.contains(track) else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (the file has \(demuxer.tracks.count))", context: "async decode session")
        }
        let session = try DecodeSession(track: demuxer.tracks[track], registry: registry, backend: backend, threads: threads, trim: trim)
        session.recoveryPolicy = recovery
        core = AsyncDecodeCore(demuxer: demuxer, session: session, capacity: max(1, bufferLimit))
    }

    /// A session over a ``DecodeSession`` already set up (its recovery policy set, perhaps
    /// seeked, with `demuxer` seeked to match), reading the session's track from `demuxer`:
    /// both become this session's (see the type's threads note) until its thread has ended
    /// (``wait()`` after the end of the track or ``cancel()``).
    public init(demuxer: Demuxer, session: DecodeSession, bufferLimit: Int = 8) {
        core = AsyncDecodeCore(demuxer: demuxer, session: session, capacity: max(1, bufferLimit))
    }

    /// A session that decodes the packets the caller gives it (``decode(_:)``), as
    /// `VTDecompressionSessionDecodeFrame` with the asynchronous flag: `track` says what they
    /// are (a ``Demuxer``'s track, or one made from codec parameters); no demuxer is read.
    /// The frames come out as from any session (``frames``, callbacks, ``nextFrame()``), in
    /// presentation order; ``finish()`` ends the stream.
    /// - Parameters:
    ///   - recovery: how damaged data is stepped over (``DecodeSession/RecoveryPolicy``).
    ///   - bufferLimit: frames decoded ahead of the consumer at most (at least 1).
    ///   - packetLimit: packets waiting to be decoded at most (at least 1; default 8):
    ///     ``decode(_:)`` waits beyond it.
    /// - Throws: what ``DecodeSession/init(track:registry:backend:threads:trim:)`` throws.
    public init(track: Track, registry: MediaRegistry = .shared, backend: String? = nil, threads: Int = 0,
                trim: TrimMode = .gapless, recovery: DecodeSession.RecoveryPolicy = .init(), bufferLimit: Int = 8,
                packetLimit: Int = 8) throws {
        let session = try DecodeSession(track: track, registry: registry, backend: backend, threads: threads, trim: trim)
        session.recoveryPolicy = recovery
        core = AsyncDecodeCore(demuxer: nil, session: session, capacity: max(1, bufferLimit), packetLimit: packetLimit)
    }

    /// Packets waiting to be decoded at most, for a session made from a track
    /// (``init(track:registry:backend:threads:trim:recovery:bufferLimit:packetLimit:)``):
    /// ``decode(_:)`` waits while that many wait.
    public var packetLimit: Int { core.packetLimit }

    /// Hands one packet of the track over and returns once it is queued (the asynchronous
    /// `VTDecompressionSessionDecodeFrame`): the session's thread decodes it (recovery rules
    /// included) and its frames reach the consumer in presentation order. Waits only while
    /// ``packetLimit`` packets wait to be decoded; no consumer started yet, nothing is decoded,
    /// so the ``packetLimit``th packet then waits for one (``frames``, ``start(on:frame:recovery:error:end:)``
    /// or ``nextFrame()``). A decoding error goes to the consumer (the `error` callback, or
    /// thrown by ``frames`` / ``nextFrame()``), and the next call throws it too.
    /// - Throws: `.state` for a session that reads its own demuxer, after ``finish()`` or
    ///   ``cancel()``; the error that stopped the decoding (until ``seek(to:)``).
    public func decode(_ packet: Packet) throws {
        try core.submit(packet)
    }

    /// The end of the caller's stream: after the frames of every packet given, the decoder's
    /// delayed frames are delivered, then the end (``frames`` ends, the `end` callback, nil
    /// from ``nextFrame()``). Returns at once. A ``seek(to:)`` starts a new stream.
    /// - Throws: as ``decode(_:)``.
    public func finish() throws {
        try core.submit(nil)
    }

    /// Waits until every packet (and ``flush(completion:)``, ``finish()``) given so far is decoded and
    /// its frames handed over (`VTDecompressionSessionWaitForAsynchronousFrames`): with
    /// callbacks, until their callbacks (and the flush completions, `end`, `error` queued
    /// meanwhile) have returned; with ``frames`` or ``nextFrame()``, until they are queued for
    /// the consumer (which must take them meanwhile when more than ``bufferLimit`` come).
    /// Returns at once without a consumer, or after ``cancel()``, or called from one of the
    /// session's callbacks (it would wait for that callback).
    public func waitForAsynchronousFrames() {
        core.waitForAsynchronousFrames()
    }

    /// A session over track `track` of the file at `path` (opened through `registry`).
    /// - Throws: the demuxer's errors, then as ``init(demuxer:track:registry:backend:threads:trim:recovery:bufferLimit:)``.
    public convenience init(path: String, track: Int, registry: MediaRegistry = .shared, backend: String? = nil, threads: Int = 0,
                            trim: TrimMode = .gapless, recovery: DecodeSession.RecoveryPolicy = .init(), bufferLimit: Int = 8) throws {
        try self.init(demuxer: registry.makeDemuxer(path: path), track: track, registry: registry, backend: backend, threads: threads,
                      trim: trim, recovery: recovery, bufferLimit: bufferLimit)
    }

    deinit { core.cancel() }

    /// The presented frames in presentation order, decoded on the session's thread: the end of
    /// the track ends the sequence, a decoding error is thrown from it. Cancelling the task that
    /// iterates stops the session (its thread ends; `next()` throws `CancellationError`).
    /// Use one iterator at a time; it cannot be combined with callbacks.
    public var frames: Frames { Frames(session: self) }

    /// The frames of an ``AsyncDecodeSession`` as an `AsyncSequence`.
    public struct Frames: AsyncSequence, Sendable {
        /// A frame.
        public typealias Element = Frame
        let session: AsyncDecodeSession

        /// An iterator over the session's frames.
        public func makeAsyncIterator() -> Iterator { Iterator(session: session) }

        /// Takes the session's frames one by one, waiting for the next.
        public struct Iterator: AsyncIteratorProtocol {
            let session: AsyncDecodeSession

            /// The next frame; nil at the end of the track.
            /// - Throws: the decoding error that ended the session; `CancellationError` when
            ///   the task was cancelled (or the session was).
            public mutating func next() async throws -> Frame? {
                try await session.core.next()
            }
        }
    }

    /// Starts decoding and delivers every presented frame to `frame` on `queue` (which must be
    /// serial for the frames to arrive in order), then `end` (the end of the track) or `error`
    /// (a decoding error, which ends the session). `recovery` reports each recovery from damaged
    /// data (``DecodeSession/Recovery``) on the same queue, in order with the frames.
    /// At most ``bufferLimit`` frames wait on `queue` at a time: the decoding waits for the
    /// callbacks (back-pressure).
    /// - Throws: `.state` when the session already delivers frames (callbacks, ``frames`` or
    ///   ``nextFrame()``).
    public func start(on queue: DispatchQueue, frame: @escaping @Sendable (Frame) -> Void,
                      recovery: (@Sendable (DecodeSession.Recovery) -> Void)? = nil,
                      error: (@Sendable (Error) -> Void)? = nil, end: (@Sendable () -> Void)? = nil) throws {
        try core.start(.callbacks(AsyncDecodeCore.Callbacks(queue: queue, frame: frame, recovery: recovery, error: error, end: end)))
    }

    /// The next presented frame, waiting for it on the calling thread; nil at the end of the
    /// track (for callers without Swift concurrency: the C API and Python). Not for use on a
    /// Swift concurrency task (it blocks): iterate ``frames`` there.
    /// - Throws: the decoding error that ended the session; `CancellationError` after ``cancel()``;
    ///   `.state` when callbacks deliver the frames.
    public func nextFrame() throws -> Frame? {
        try core.nextBlocking()
    }

    /// Sample-accurate seek (``DecodeSession/seek(to:)``): frames not yet delivered are
    /// dropped, the demuxer is moved to the key frame at or before the time (with
    /// ``DecodeSession/seekPreroll`` for audio) and the next frame delivered is the one
    /// presented at `seconds`. Also after the end of the track or an error: decoding starts again.
    /// A session made from a track (packets from the caller) drops the packets not decoded yet
    /// and readies the decoder (``DecodeSession/seek(to:)``): send the packets from the key
    /// frame at or before the time on (``Demuxer/seekForDecoding(to:)`` finds it; audio
    /// ``DecodeSession/seekPreroll`` before); a ``finish()`` or an error before is forgotten.
    /// - Throws: `.invalidArgument` for a negative or non-finite time.
    public func seek(to seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.invalidArgument, "cannot seek to \(seconds) s", context: "track \(track.index) async decode session")
        }
        core.command(.seek(seconds), dropQueued: true)
    }

    /// Mid-stream flush (the iOS flush, ``DecodeSession/drainDelayed(_:)``): the decoder's
    /// delayed frames are delivered after the frames before them, then `completion` is called,
    /// and decoding goes on with the next packet (the session stays usable; this is not the
    /// end of the stream). With callbacks, `completion` runs on their queue after the last
    /// drained frame's callback; otherwise on the session's thread once the drained frames are
    /// queued, ahead of every frame decoded after the flush. After the end of the track (or a
    /// failure, or ``cancel()``) `completion` is called at once (on the callbacks' queue when set).
    public func flush(completion: @escaping @Sendable () -> Void) {
        core.command(.flush(completion), dropQueued: false)
    }

    /// Stops decoding: the session's thread ends, frames not yet delivered are dropped, a
    /// waiting ``nextFrame()`` or `next()` throws `CancellationError`, and the callbacks given
    /// to ``start(on:frame:recovery:error:end:)`` are released. Harmless twice.
    ///
    /// Until then the session keeps its callbacks, as `URLSession` keeps its delegate, so that a
    /// ``seek(to:)`` after the end can deliver again: a callback that captures the session makes
    /// a reference cycle, which `cancel()` breaks (or capture the session `weak`).
    public func cancel() { core.cancel() }

    /// Waits until the session's thread has ended (after the end of the track, an error or
    /// ``cancel()``); returns at once when it never started.
    public func wait() { core.waitForExit() }

    /// The recoveries from damaged data so far, oldest first (see ``DecodeSession/recoveries``).
    public var recoveries: [DecodeSession.Recovery] { core.stats().recoveries }
    /// Decoder rebuilds so far.
    public var rebuilds: Int { core.stats().rebuilds }
    /// What was stepped over without failing, oldest first: the decode session's warnings and
    /// the cut of a file cut short (``FileDecodeResult/warnings`` has the same).
    public var warnings: [MediaError] { core.stats().warnings }
    /// Where the input was cut short (a `.truncated` error naming the offset), once the
    /// session reached the cut; it is also in ``warnings``.
    public var truncation: MediaError? { core.stats().truncation }
    /// Frames delivered so far (dropped ones, after a ``seek(to:)``, not counted).
    public var framesDelivered: Int { core.stats().delivered }
    /// Packets sent to the decode session so far (``DecodeSession/packetsSent``).
    public var packetsSent: Int { core.stats().packetsSent }
    /// Times the decoder was invalidated and rebuilt (``DecodeSession/invalidations``).
    public var invalidations: Int { core.stats().invalidations }
}

/// Thrown through a decode call to unwind the session's thread after ``AsyncDecodeCore/cancel()``.
private struct Interrupted: Error {}

/// The state an ``AsyncDecodeSession`` shares with its thread, under one condition lock.
final class AsyncDecodeCore: @unchecked Sendable {
    /// The callback consumer.
    struct Callbacks: Sendable {
        let queue: DispatchQueue
        let frame: @Sendable (Frame) -> Void
        let recovery: (@Sendable (DecodeSession.Recovery) -> Void)?
        let error: (@Sendable (Error) -> Void)?
        let end: (@Sendable () -> Void)?

        /// The same queue with no callbacks (what a cancelled session keeps).
        var released: Callbacks { Callbacks(queue: queue, frame: { _ in }, recovery: nil, error: nil, end: nil) }
    }

    enum Mode { case pull, callbacks(Callbacks) }

    enum Command {
        case seek(Double)
        case flush(@Sendable () -> Void)
        /// A packet from the caller (a session without a demuxer).
        case packet(Packet)
        /// The caller's end of the stream: the delayed frames, then the end.
        case end
    }

    /// What the pull consumer takes.
    enum Event {
        case frame(Frame)
        case end
        case failure(Error)
    }

    struct Stats {
        var recoveries: [DecodeSession.Recovery] = []
        var rebuilds = 0
        var warnings: [MediaError] = []
        var delivered = 0
        var truncation: MediaError?
        var packetsSent = 0
        var invalidations = 0
    }

    // Owned by the session's thread (never touched elsewhere once it runs).
    let session: DecodeSession
    /// Where the packets come from; nil: from the caller (``AsyncDecodeSession/decode(_:)``).
    private let demuxer: Demuxer?
    private let trackIndex: Int
    /// The generation the thread decodes for (see `generation`).
    private var workerGeneration = 0
    private var truncation: MediaError?
    /// The track's end (or a failure) was delivered; only a seek decodes again.
    private var ended = false
    /// The one pipeline (``MediaPipeline``) over the demuxer with this track's decode stage,
    /// stepped one packet at a time between commands; made on the thread's first read.
    private var pipeline: MediaPipeline?

    // Under `cond`.
    let capacity: Int
    private let cond = NSCondition()
    private var mode: Mode?
    private var commands: [Command] = []
    /// Bumped by every seek: frames of an older generation are dropped, not delivered.
    private var generation = 0
    private var cancelled = false
    /// Pull mode: events not yet taken, oldest first (`head` is the next; the slots before it
    /// are nil, so a taken frame is not kept alive by the queue).
    private var events: [Event?] = []
    private var head = 0
    /// Callback mode: frames handed to the queue whose callback has not returned yet.
    private var inFlight = 0
    /// Callback mode: the thread running one of the callbacks now (they run one at a time).
    private var callbackThread: pthread_t?
    private var waiter: CheckedContinuation<Event?, Never>?
    /// Pull mode: the end of the track or the failure, given again to every later call once
    /// the queued events are taken (until a seek decodes again).
    private var terminal: Event?
    private var thread: Thread?
    private var running = false
    private var stats_ = Stats()
    private var peakWaiting_ = 0
    /// Packets from the caller: at most this many wait in `commands` (back-pressure).
    let packetLimit: Int
    /// Packets from the caller waiting in `commands`.
    private var queuedPackets = 0
    /// Commands given / done by the thread (for ``waitForAsynchronousFrames()``).
    private var submitted = 0
    private var completed = 0
    /// Packets from the caller: the error that ended the decoding (what ``decode(_:)`` throws
    /// until a seek), or the end of the stream the caller gave.
    private var stopReason: Error?
    private var endGiven = false

    /// The most frames that waited for the consumer at once (for the back-pressure test).
    var peakWaiting: Int {
        cond.lock()
        defer { cond.unlock() }
        return peakWaiting_
    }

    init(demuxer: Demuxer?, session: DecodeSession, capacity: Int, packetLimit: Int = 0) {
        self.demuxer = demuxer
        self.session = session
        self.trackIndex = session.track.index
        self.capacity = capacity
        self.packetLimit = max(1, packetLimit)
    }

    /// True when the caller supplies the packets.
    var takesPackets: Bool { demuxer == nil }

    private var what: String { "track \(trackIndex) async decode session" }

    /// Queues one packet from the caller, waiting while `packetLimit` packets wait.
    func submit(_ packet: Packet?) throws {
        cond.lock()
        defer { cond.unlock() }
        guard takesPackets else {
            throw MediaError(.state, "this session reads its own demuxer: decode(_:) and finish() are for a session made from a track", context: what)
        }
        while !cancelled && stopReason == nil && !endGiven && packet != nil && queuedPackets >= packetLimit { cond.wait() }
        if cancelled { throw MediaError(.state, "the session was cancelled", context: what) }
        if let stopReason { throw stopReason }
        if endGiven {
            throw MediaError(.state, packet == nil ? "finish() was called twice" : "a packet after finish(): the stream has ended (seek(to:) to decode again)", context: what)
        }
        if let packet {
            commands.append(.packet(packet))
            queuedPackets += 1
        } else {
            commands.append(.end)
            endGiven = true
        }
        submitted += 1
        if mode != nil { launchLocked() }
        cond.broadcast()
    }

    /// Waits until every command given so far is done and its frames handed over (with
    /// callbacks: their callbacks have returned), or the session stopped.
    func waitForAsynchronousFrames() {
        cond.lock()
        if let t = callbackThread, pthread_equal(t, pthread_self()) != 0 {
            cond.unlock()   // called by a callback: what it would wait for includes itself
            return
        }
        let target = submitted
        // Without a consumer nothing is decoded: return rather than wait for ever.
        while !cancelled && mode != nil && (completed < target || (mode?.callbacks != nil && inFlight > 0)) { cond.wait() }
        let cb = mode?.callbacks
        cond.unlock()
        cb?.queue.sync {}   // the flush completions, end and error callbacks queued meanwhile
    }

    // MARK: consumer side

    func start(_ m: Mode) throws {
        cond.lock()
        defer { cond.unlock() }
        if let mode {
            switch (mode, m) {
            case (.pull, .pull): return
            default:
                throw MediaError(.state, "the session already delivers its frames (through \(mode.isPull ? "its frame sequence or nextFrame()" : "callbacks")); use one consumer",
                                 context: "track \(trackIndex) async decode session")
            }
        }
        mode = m
        guard !cancelled else { return }
        launchLocked()
    }

    /// Starts the thread (under `cond`).
    private func launchLocked() {
        guard !running else { return }
        running = true
        let t = Thread { [self] in run() }
        t.name = "mediakit.decode-session"
        t.stackSize = 1 << 20
        thread = t
        t.start()
    }

    func command(_ c: Command, dropQueued: Bool) {
        cond.lock()
        if cancelled {
            cond.unlock()
            if case .flush(let done) = c { deliverDirect(done) }
            return
        }
        if dropQueued {
            generation += 1
            events.removeAll()
            head = 0
            terminal = nil
            if takesPackets {
                // The packets not decoded yet belong to the old place: the caller sends those
                // of the new one after the seek.
                let before = commands.count
                commands.removeAll { if case .packet = $0 { return true } else if case .end = $0 { return true } else { return false } }
                completed += before - commands.count
                queuedPackets = 0
                stopReason = nil
                endGiven = false
            }
        }
        commands.append(c)
        submitted += 1
        if mode != nil { launchLocked() }
        cond.broadcast()
        cond.unlock()
    }

    func cancel() {
        cond.lock()
        cancelled = true
        // A cancelled session delivers nothing more: let go of the callbacks (and what they
        // capture, often the session itself), keeping only the queue a late flush completes on.
        if let cb = mode?.callbacks { mode = .callbacks(cb.released) }
        commands.removeAll()
        events.removeAll()
        head = 0
        let w = waiter
        waiter = nil
        cond.broadcast()
        cond.unlock()
        w?.resume(returning: nil)
    }

    /// Runs a recovery, error, end or flush callback on the callbacks' queue, marked as running
    /// on this thread (``waitForAsynchronousFrames()`` must not wait for the callback that
    /// calls it). After ``cancel()`` only flush completions run (each is called once).
    private func callback(always: Bool = false, _ body: () -> Void) {
        cond.lock()
        let run = always || !cancelled
        if run { callbackThread = pthread_self() }
        cond.unlock()
        guard run else { return }
        body()
        cond.lock()
        callbackThread = nil
        cond.unlock()
    }

    func waitForExit() {
        cond.lock()
        while running { cond.wait() }
        cond.unlock()
    }

    func stats() -> Stats {
        cond.lock()
        defer { cond.unlock() }
        return stats_
    }

    /// Takes the next pull event (under `cond`), nil when none waits.
    private func popLocked() -> Event? {
        guard head < events.count, let e = events[head] else { return nil }
        events[head] = nil
        head += 1
        if head == events.count {
            events.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 {
            events.removeFirst(head)
            head = 0
        }
        if case .frame = e { stats_.delivered += 1 }
        cond.broadcast()   // room for the thread
        return e
    }

    /// The next pull event, or the terminal one again once the thread has stopped with
    /// nothing left to do (under `cond`); nil: wait.
    private func takeLocked() -> Event? {
        if let e = popLocked() { return e }
        if let t = terminal, !running, commands.isEmpty { return t }
        return nil
    }

    private func result(_ e: Event?) throws -> Frame? {
        switch e {
        case .frame(let f): return f
        case .end: return nil
        case .failure(let error): throw error
        case nil: throw CancellationError()
        }
    }

    func next() async throws -> Frame? {
        try start(.pull)
        let event: Event? = await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Event?, Never>) in
                cond.lock()
                if let e = takeLocked() {
                    cond.unlock()
                    c.resume(returning: e)
                } else if cancelled || Task.isCancelled {
                    cond.unlock()
                    c.resume(returning: nil)
                } else {
                    waiter = c
                    cond.unlock()
                }
            }
        } onCancel: {
            cancel()
        }
        return try result(event)
    }

    func nextBlocking() throws -> Frame? {
        try start(.pull)
        cond.lock()
        var e = takeLocked()
        while e == nil && !cancelled {
            cond.wait()
            e = takeLocked()
        }
        cond.unlock()
        return try result(e)
    }

    // MARK: the session's thread

    private func run() {
        session.onRecovery = { [unowned self] r in
            cond.lock()
            stats_.recoveries.append(r)
            stats_.rebuilds = session.rebuilds
            stats_.packetsSent = session.packetsSent
            stats_.invalidations = session.invalidations
            let cb = mode?.callbacks
            cond.unlock()
            if let cb, let f = cb.recovery { cb.queue.async { [self] in callback { f(r) } } }
        }
        while true {
            cond.lock()
            // Packets from the caller: wait for the next (the thread ends with the stream).
            while takesPackets && !cancelled && commands.isEmpty && !ended { cond.wait() }
            if cancelled || (commands.isEmpty && ended) {
                // The end of the track (or cancel): the thread ends; a seek or flush starts another.
                running = false
                thread = nil
                cond.broadcast()
                let w = waiter, e = w == nil ? nil : takeLocked()
                if e != nil { waiter = nil }
                cond.unlock()
                if let w, let e { w.resume(returning: e) }
                return
            }
            let c = commands.isEmpty ? nil : commands.removeFirst()
            if case .seek = c { workerGeneration = generation }
            if case .packet = c {
                queuedPackets -= 1
                cond.broadcast()   // room for the caller's next packet
            }
            cond.unlock()
            do {
                switch c {
                case .seek(let t)?:
                    if let demuxer {
                        try demuxer.seekForDecoding(to: max(0, t - (session.track.mediaType == .audio ? DecodeSession.seekPreroll : 0)))
                    }
                    try session.seek(to: t)
                    truncation = nil
                    ended = false
                case .flush(let done)?:
                    if !ended { try session.drainDelayed(emit) }
                    deliverDirect(done)
                case .packet(let p)?:
                    if !ended { try session.decode(p, emit) }
                case .end?:
                    if !ended {
                        try session.finish(emit)
                        ended = true
                        finishEvent(.end)
                    }
                case nil:
                    if try step() == nil {
                        try pipeline?.finishStages()
                        ended = true
                        finishEvent(.end)
                    }
                }
            } catch is Interrupted {
                continue   // cancelled: the check above ends the thread
            } catch {
                ended = true
                if takesPackets {
                    cond.lock()
                    stopReason = error
                    cond.unlock()
                }
                finishEvent(.failure(error))
            }
            noteStats()
            if c != nil {
                cond.lock()
                completed += 1
                cond.broadcast()
                cond.unlock()
            }
        }
    }

    /// One step of the pipeline: the track's next packet decoded (its frames emitted); nil
    /// at its end or at the cut of a file cut short (kept as a warning, as ``FileDecoder``
    /// keeps it).
    private func step() throws -> Packet? {
        guard let demuxer else { return nil }
        if pipeline == nil {
            demuxer.select(tracks: [trackIndex])
            pipeline = MediaPipeline(demuxer: demuxer, stages: [(trackIndex, DecodeStage(session: session) { [unowned self] in try emit($0) })])
        }
        return try pipeline!.advance(truncation: &truncation)
    }

    private func noteStats() {
        cond.lock()
        stats_.recoveries = session.recoveries   // a rebuilt decoder may have output a frame counted lost
        stats_.rebuilds = session.rebuilds
        stats_.packetsSent = session.packetsSent
        stats_.invalidations = session.invalidations
        stats_.warnings = session.warnings + (truncation.map { [$0] } ?? [])
        stats_.truncation = truncation
        cond.unlock()
    }

    /// Hands one frame to the consumer, waiting while `capacity` frames wait; drops it when
    /// a seek came since it was decoded.
    private func emit(_ frame: Frame) throws {
        cond.lock()
        while !cancelled && workerGeneration == generation && pendingLocked() >= capacity { cond.wait() }
        if cancelled {
            cond.unlock()
            throw Interrupted()
        }
        guard workerGeneration == generation else {
            cond.unlock()
            return
        }
        peakWaiting_ = max(peakWaiting_, pendingLocked() + 1)
        switch mode {
        case .callbacks(let cb)?:
            inFlight += 1
            let gen = generation
            cond.unlock()
            cb.queue.async { [self] in
                cond.lock()
                let live = !cancelled && gen == generation
                if live {
                    stats_.delivered += 1
                    callbackThread = pthread_self()
                }
                cond.unlock()
                if live { cb.frame(frame) }
                cond.lock()
                callbackThread = nil
                inFlight -= 1
                cond.broadcast()
                cond.unlock()
            }
        default:
            pushLocked(.frame(frame))
        }
    }

    private func pendingLocked() -> Int {
        switch mode {
        case .callbacks?: return inFlight
        default: return events.count - head
        }
    }

    /// Queues a pull event and wakes a waiting consumer (called under `cond`, returns unlocked).
    private func pushLocked(_ e: Event) {
        if let w = waiter {
            waiter = nil
            if head < events.count {
                events.append(e)
                let first = popLocked()
                cond.unlock()
                w.resume(returning: first)
                return
            }
            if case .frame = e { stats_.delivered += 1 }
            cond.unlock()
            w.resume(returning: e)
            return
        }
        events.append(e)
        cond.broadcast()
        cond.unlock()
    }

    /// The end of the track or a failure, delivered after the frames before it.
    private func finishEvent(_ e: Event) {
        noteStats()
        cond.lock()
        switch mode {
        case .callbacks(let cb)?:
            cond.unlock()
            switch e {
            case .failure(let error): if let f = cb.error { cb.queue.async { [self] in callback { f(error) } } }
            default: if let f = cb.end { cb.queue.async { [self] in callback { f() } } }
            }
        default:
            terminal = e
            pushLocked(e)
        }
    }

    /// Calls a flush completion on the callbacks' queue (after the frames queued before it), or here.
    private func deliverDirect(_ done: @escaping @Sendable () -> Void) {
        cond.lock()
        let cb = mode?.callbacks
        cond.unlock()
        if let cb { cb.queue.async { [self] in callback(always: true) { done() } } } else { done() }
    }
}

extension AsyncDecodeCore.Mode {
    var isPull: Bool { if case .pull = self { return true } else { return false } }
    var callbacks: AsyncDecodeCore.Callbacks? { if case .callbacks(let c) = self { return c } else { return nil } }
}
