/// Where reading or writing a file stands, as `AVAssetReader.Status` and `AVAssetWriter.Status`:
/// code written against those (`if reader.status == .completed { finish() }`) ports as is. A
/// reader goes unknown -> reading -> completed / failed / cancelled, a writer unknown -> writing
/// -> completed / failed / cancelled; the last three are final.
public enum AssetStatus: Sendable, Equatable {
    /// Nothing read or written yet.
    case unknown
    /// A reader has started reading (``AssetReader/startReading()`` or a first read).
    case reading
    /// A writer has started writing (a first packet or sample).
    case writing
    /// Every track was read to its end; a writer's file was finished under its name.
    case completed
    /// A read or write threw: the error is the object's `error`.
    case failed
    /// Stopped by `cancel` (a writer's file removed).
    case cancelled

    /// True for the final states: completed, failed, cancelled.
    public var isFinal: Bool { self == .completed || self == .failed || self == .cancelled }
}

/// A demuxer that says where reading stands, as AVAssetReader does: ``status`` (unknown,
/// reading, completed, failed, cancelled), the ``error`` that failed it, and which tracks reached
/// their end (``hasEnded(track:)``, AVAssetReaderOutput's end of data). It is itself a
/// ``Demuxer``: every call goes to the demuxer it wraps, and reads after the end, a failure or a
/// cancel return nil.
///
/// ```swift
/// let reader = try AssetReader(path: "in.mp4")
/// while let packet = try? reader.read() { use(packet) }
/// if reader.status == .completed { finish() } else if let error = reader.error { report(error) }
/// ```
///
/// A file cut short ends the reading as `.completed`, the cut kept in ``warnings`` (as ffmpeg
/// reads it: the end with a warning). Not thread-safe: one thread at a time.
public final class AssetReader: Demuxer {
    /// The demuxer read.
    public let demuxer: Demuxer
    /// Where reading stands. Starts `.unknown`.
    public private(set) var status: AssetStatus = .unknown
    /// The error that made ``status`` `.failed`; nil otherwise.
    public private(set) var error: MediaError?
    private var ended: Set<Int> = []
    private var selected: Set<Int>?
    private var cut: MediaError?

    /// A reader of `demuxer` (which it owns from now on: read through the reader).
    public init(_ demuxer: Demuxer) {
        self.demuxer = demuxer
    }

    /// Opens `path` through `registry` (as ``MediaRegistry/makeDemuxer(path:)``).
    /// - Throws: the demuxer's errors (no reader is made).
    public convenience init(path: String, registry: MediaRegistry = .shared) throws {
        self.init(try registry.makeDemuxer(path: path))
    }

    /// Starts reading (AVAssetReader's `startReading()`): `.unknown` becomes `.reading`. Returns
    /// false when the reader is in a final state (completed, failed, cancelled). A first read
    /// starts it too.
    @discardableResult
    public func startReading() -> Bool {
        if status == .unknown { status = .reading }
        return status == .reading
    }

    /// Stops reading (AVAssetReader's `cancelReading()`): ``status`` becomes `.cancelled` (unless
    /// already completed or failed) and reads return nil.
    public func cancelReading() {
        if !status.isFinal { status = .cancelled }
    }

    /// True once `track` reached its end: ``read(track:)`` returned nil for it, or ``read()``
    /// returned nil (every track it reads ends then), or reading completed.
    public func hasEnded(track: Int) -> Bool {
        status == .completed || ended.contains(track)
    }

    /// The tracks that reached their end, in index order.
    public var endedTracks: [Int] {
        status == .completed ? Array(tracks.indices) : ended.sorted()
    }

    /// The tracks, as the demuxer lists them.
    public var tracks: [Track] { demuxer.tracks }
    /// The demuxer's duration.
    public var duration: Double? { demuxer.duration }
    /// The demuxer's warnings, then the cut of a file cut short.
    public var warnings: [MediaError] { demuxer.warnings + (cut.map { [$0] } ?? []) }
    /// The demuxer's tags.
    public var metadata: Metadata { demuxer.metadata }
    /// The demuxer's chapters.
    public var chapters: [Chapter] { demuxer.chapters }
    /// The demuxer's markers (an AIFF file's `MARK` chunk).
    public var markers: [Marker] { demuxer.markers }
    /// The demuxer's sampler settings (an AIFF file's `INST` chunk), or nil.
    public var instrument: Instrument? { demuxer.instrument }
    /// The demuxer's attachments.
    public var attachments: [Attachment] { demuxer.attachments }

    /// The next packet in file order; nil at the end (``status`` `.completed`), and after a
    /// failure or a cancel.
    /// - Throws: the demuxer's error, once (``status`` becomes `.failed`, ``error`` holds it).
    public func read() throws -> Packet? {
        guard begin() else { return nil }
        let p = try observe { try demuxer.read() }
        if p == nil {
            ended.formUnion(selected ?? Set(tracks.indices))
            status = .completed
        }
        return p
    }

    /// The next packet of `track`; nil at its end (``hasEnded(track:)``; ``status`` becomes
    /// `.completed` once every track read ended), and after a failure or a cancel.
    /// - Throws: the demuxer's error, once (``status`` becomes `.failed`).
    public func read(track: Int) throws -> Packet? {
        guard begin() else { return nil }
        if ended.contains(track) { return nil }
        let p = try observe { try demuxer.read(track: track) }
        if p == nil {
            ended.insert(track)
            if (selected ?? Set(tracks.indices)).isSubset(of: ended) { status = .completed }
        }
        return p
    }

    /// Moves every track to the key frame at or before `seconds`; the tracks' ends are forgotten
    /// and a completed reader reads again (a failed or cancelled one stays so).
    public func seek(to seconds: Double) throws {
        try demuxer.seek(to: seconds)
        rewound()
    }

    /// As ``seek(to:)``, where a decoder must start (``Demuxer/seekForDecoding(to:)``).
    public func seekForDecoding(to seconds: Double) throws {
        try demuxer.seekForDecoding(to: seconds)
        rewound()
    }

    /// Limits ``read()`` to these tracks (nil: all): reading completes when they end.
    public func select(tracks: Set<Int>?) {
        selected = tracks
        demuxer.select(tracks: tracks)
    }

    private func rewound() {
        ended = []
        if status == .completed { status = .reading }
    }

    /// Whether a read may go to the demuxer (starting the reader when it had not started).
    private func begin() -> Bool {
        if status == .unknown { status = .reading }
        return status == .reading
    }

    private func observe(_ body: () throws -> Packet?) throws -> Packet? {
        do {
            return try body()
        } catch let e as MediaError where e.kind == .truncated {
            cut = e                               // the end, with a warning (as ffmpeg reads a cut file)
            return nil
        } catch let e as MediaError {
            error = e
            status = .failed
            throw e
        } catch {
            let e = MediaError(.io, "\(error)")
            self.error = e
            status = .failed
            throw error
        }
    }
}
