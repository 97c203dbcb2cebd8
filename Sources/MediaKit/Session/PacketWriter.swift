/// A muxer that says where writing stands, as AVAssetWriter does: ``status`` (unknown, writing,
/// completed, failed, cancelled), the ``error`` that failed it, and which tracks were marked
/// finished (``markAsFinished(track:)``, AVAssetWriterInput's `markAsFinished()`: later packets
/// of that track are refused). It is itself a ``Muxer``: every call goes to the muxer it wraps;
/// an error thrown by a write or by ``finish()`` cancels the muxer (nothing is left under the
/// file's name) and makes the status `.failed`.
///
/// ```swift
/// let writer = PacketWriter(try ContainerCatalog.shared.makeMuxer(path: "out.mkv"))
/// let t = try writer.addTrack(from: track)
/// try writer.write(packet)                      // status: .writing
/// writer.markAsFinished(track: t)
/// try writer.finish()                           // status: .completed
/// ```
/// Not thread-safe: one thread at a time.
public final class PacketWriter: Muxer {
    /// The muxer written to.
    public let muxer: Muxer
    /// Where writing stands. Starts `.unknown`.
    public private(set) var status: AssetStatus = .unknown
    /// The error that made ``status`` `.failed`; nil otherwise.
    public private(set) var error: MediaError?
    private var finishedTracks: Set<Int> = []

    /// A writer into `muxer` (which it owns from now on: write through the writer).
    public init(_ muxer: Muxer) {
        self.muxer = muxer
    }

    /// Marks `track` finished: its end of stream. Later packets of it are refused with `.state`.
    public func markAsFinished(track: Int) {
        finishedTracks.insert(track)
    }

    /// True once ``markAsFinished(track:)`` was called for `track`, or the file was finished.
    public func isFinished(track: Int) -> Bool {
        status == .completed || finishedTracks.contains(track)
    }

    /// Adds a track (see ``Muxer/addTrack(_:timeBase:)``).
    /// - Throws: `.state` once writing ended; the muxer's refusal (the writer stays usable).
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        try run(failing: false) { try muxer.addTrack(parameters, timeBase: timeBase) }
    }

    /// Adds a track copied from a demuxed one (see ``Muxer/addTrack(from:)``).
    public func addTrack(from track: Track) throws -> Int {
        try run(failing: false) { try muxer.addTrack(from: track) }
    }

    /// Whether the muxer needs `track`'s first packet to describe it.
    public func needsFirstPacket(_ track: Track) -> Bool { muxer.needsFirstPacket(track) }

    /// Adds a track described with its first packet (see ``Muxer/addTrack(from:firstPacket:)``).
    public func addTrack(from track: Track, firstPacket: [UInt8]?) throws -> Int {
        try run(failing: false) { try muxer.addTrack(from: track, firstPacket: firstPacket) }
    }

    /// Adds a track an encoder writes (see ``Muxer/addEncodedTrack(_:timeBase:encoderDelay:)``).
    public func addEncodedTrack(_ parameters: CodecParameters, timeBase: Rational, encoderDelay: Int) throws -> Int {
        try run(failing: false) { try muxer.addEncodedTrack(parameters, timeBase: timeBase, encoderDelay: encoderDelay) }
    }

    /// States an encoded track's end (see ``Muxer/setGapless(track:presentedDuration:padding:)``).
    public func setGapless(track: Int, presentedDuration: Int64, padding: Int64) throws {
        try run { try muxer.setGapless(track: track, presentedDuration: presentedDuration, padding: padding) }
    }

    /// Replaces a track's codec configuration (see ``Muxer/updateParameters(_:track:)``).
    public func updateParameters(_ parameters: CodecParameters, track: Int) throws {
        try run { try muxer.updateParameters(parameters, track: track) }
    }

    /// Gives the tags, chapters and attachments to write (see ``Muxer/setMetadata(_:)``).
    public func setMetadata(_ metadata: MuxMetadata) throws {
        try run { try muxer.setMetadata(metadata) }
    }

    /// Writes one packet: ``status`` becomes `.writing`.
    /// - Throws: `.state` for a track marked finished or once writing ended, `.invalidArgument`
    ///   for a packet the muxer refuses (the writer stays as it was); the muxer's other errors
    ///   (the muxer is cancelled, ``status`` `.failed`).
    public func write(_ packet: Packet) throws {
        if finishedTracks.contains(packet.trackIndex) {
            throw MediaError(.state, "track \(packet.trackIndex) was marked finished: no packet may follow")
        }
        try run {
            if status == .unknown { status = .writing }
            try muxer.write(packet)
        }
    }

    /// Completes the file: ``status`` becomes `.completed` (every track finished).
    /// - Throws: `.state` once writing ended; the muxer's errors (``status`` `.failed`, nothing
    ///   left under the file's name).
    public func finish() throws {
        try run { try muxer.finish() }
        status = .completed
    }

    /// Abandons the file: ``status`` becomes `.cancelled` (unless already final).
    public func cancel() {
        guard !status.isFinal else { return }
        muxer.cancel()
        status = .cancelled
    }

    /// Runs `body` unless writing ended; its error fails the writer (cancelling the muxer), but
    /// for a refusal of the call (`.invalidArgument`: a packet out of order, a bad value) or a
    /// track the muxer refuses to add (not `failing`), which leave the writer as it was.
    private func run<T>(failing: Bool = true, _ body: () throws -> T) throws -> T {
        guard !status.isFinal else {
            throw MediaError(.state, "the writer is \(status == .completed ? "finished" : status == .failed ? "failed" : "cancelled"): nothing more can be written")
        }
        do {
            return try body()
        } catch let e as MediaError where !failing || e.kind == .invalidArgument {
            throw e                               // a refusal of the call: the file is intact
        } catch {
            muxer.cancel()
            self.error = error as? MediaError ?? MediaError(.io, "\(error)")
            status = .failed
            throw error
        }
    }
}
