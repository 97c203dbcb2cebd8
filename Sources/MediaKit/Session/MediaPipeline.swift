/// What happens to the packets of one track in a ``MediaPipeline``: copied into a muxer
/// (``CopyStage``), decoded and handed on as frames (``DecodeStage``: to a raw writer, an
/// audio converter, an encoder feeding a muxer), or, for a track with no stage, dropped.
public protocol PacketStage: AnyObject {
    /// Takes one packet of the stage's track, in file order.
    func take(_ packet: Packet) throws
    /// True once the stage wants no more packets (a limit reached); its track's packets are
    /// then skipped and it is not finished.
    var isDone: Bool { get }
    /// The end of the input: drains what the stage holds.
    func finish() throws
}

/// Copies a track's packets into a muxer track; a packet cut short by the end of the file is
/// left out (a part of a coded frame), except for PCM (``keepsCutPackets``), whose every
/// whole sample is audio: FFmpeg's stream copy of a cut WAV or AIFF keeps that last run. A stage made before its muxer exists
/// (a transcode opens the muxer once the encoder is known) holds the packets until
/// ``bind(to:track:)``.
public final class CopyStage: PacketStage {
    private var muxer: Muxer?
    private var track: Int
    private var held: [Packet] = []
    private var shift: Int64
    /// Where a packet without timestamps goes: the previous packet's dts plus its duration.
    private var nextDts: Int64 = 0
    /// Packets written.
    public private(set) var written = 0
    /// True to copy a packet cut short by the end of the file too (set for PCM tracks: the
    /// muxer keeps the packet's whole samples).
    public var keepsCutPackets = false

    /// Copies into track `track` of `muxer` (a value its `addTrack` returned), `shift` (in the
    /// track's time base) subtracted from every timestamp (a remux from MPEG-TS starts at zero).
    public init(into muxer: Muxer, track: Int, shift: Int64 = 0) {
        self.muxer = muxer
        self.track = track
        self.shift = shift
    }

    /// Holds the packets until ``bind(to:track:)``.
    public init() {
        self.track = -1
        self.shift = 0
    }

    /// Writes into track `track` of `muxer` from now on, the packets held first, `shift` (in
    /// the track's time base) subtracted from every timestamp.
    public func bind(to muxer: Muxer, track: Int, shift: Int64 = 0) throws {
        self.muxer = muxer
        self.track = track
        self.shift = shift
        let waiting = held
        held = []
        for p in waiting { try take(p) }
    }

    public var isDone: Bool { false }

    public func take(_ packet: Packet) throws {
        guard !packet.isTruncated || keepsCutPackets else { return }
        guard let muxer else {
            held.append(packet)
            return
        }
        var p = packet
        p.trackIndex = track
        if shift != 0 {
            if p.pts != Packet.noTimestamp { p.pts -= shift }
            if p.dts != Packet.noTimestamp { p.dts -= shift }
        }
        // A packet with neither time (a raw H.264 / HEVC stream's, RawVideoDemuxer) is placed
        // after the one before it, in decoding order, as ffmpeg's stream copy places it.
        if p.pts == Packet.noTimestamp && p.dts == Packet.noTimestamp { p.dts = nextDts }
        if p.dts != Packet.noTimestamp { nextDts = p.dts + p.duration }
        try muxer.write(p)
        written += 1
    }

    public func finish() throws {}
}

/// Decodes a track with a ``DecodeSession`` and hands every frame to `output` (a raw writer,
/// a converter, an encoder); done when `isDone` says so (a limit on what is written).
public final class DecodeStage: PacketStage {
    /// The session that decodes the track.
    public let session: DecodeSession
    private let output: (Frame) throws -> Void
    private let done: () -> Bool

    /// Decodes with `session` into `output`; `isDone` (default: never) stops it early.
    public init(session: DecodeSession, isDone: @escaping () -> Bool = { false }, output: @escaping (Frame) throws -> Void) {
        self.session = session
        self.output = output
        self.done = isDone
    }

    public var isDone: Bool { done() }

    public func take(_ packet: Packet) throws { try session.decode(packet, output) }

    public func finish() throws { try session.finish(output) }
}

/// The one pipeline of decode, remux and transcode: a demuxer read once in file order, each
/// packet handed to its track's ``PacketStage`` (tracks without one are dropped; the caller
/// selects the demuxer's tracks so that their data is not even read), one
/// progress and cancel path, the cut of a truncated file kept as a warning, the stages
/// finished at the end in the order given. `mk-decode` / `mk_decode_file` (``FileDecoder``),
/// `mk-remux` / `mk_remux` (``Remuxer``) and `mk-transcode` / `mk_transcode` (``Transcoder``)
/// are front ends that choose the stages and the outputs; an ``AsyncDecodeSession`` runs the
/// same pipeline on its own thread, one packet at a time (``advance(truncation:)``), between
/// the seeks and flushes it is asked for.
public struct MediaPipeline {
    /// The demuxer read.
    public let demuxer: Demuxer
    /// The stages by track index, in the order they are finished.
    public var stages: [(track: Int, stage: PacketStage)] {
        didSet { byTrack = Self.index(stages) }
    }
    /// Packets already read (looked ahead), handed on first.
    public var ahead: [Packet] = [] {
        didSet { aheadTaken = 0 }
    }
    private var byTrack: [Int: PacketStage]
    private var aheadTaken = 0

    /// A pipeline reading `demuxer` into `stages`.
    public init(demuxer: Demuxer, stages: [(track: Int, stage: PacketStage)]) {
        self.demuxer = demuxer
        self.stages = stages
        self.byTrack = Self.index(stages)
    }

    private static func index(_ stages: [(track: Int, stage: PacketStage)]) -> [Int: PacketStage] {
        var byTrack: [Int: PacketStage] = [:]
        for (t, s) in stages { byTrack[t] = s }
        return byTrack
    }

    /// True once every stage wants no more packets.
    public var isDone: Bool { stages.allSatisfy { $0.stage.isDone } }

    /// One step: reads packets (the looked-ahead ones first) until one belongs to a stage that
    /// is not done, and hands it to that stage.
    /// - Parameter truncation: set to the `.truncated` error when the file is cut short (the
    ///   packets before the cut were handed on; the step then gives nil).
    /// - Returns: the packet handed on; nil at the end of the input (the stages are not
    ///   finished: see ``finishStages()``).
    /// - Throws: the demuxer's and the stage's errors.
    public mutating func advance(truncation: inout MediaError?) throws -> Packet? {
        while true {
            let next: Packet?
            if aheadTaken < ahead.count {
                next = ahead[aheadTaken]
                aheadTaken += 1
            } else {
                next = try demuxer.read(untilCut: &truncation)
            }
            guard let packet = next else { return nil }
            guard let stage = byTrack[packet.trackIndex], !stage.isDone else { continue }
            try stage.take(packet)
            return packet
        }
    }

    /// Finishes (drains) the stages that are not done, in the order given.
    public func finishStages() throws {
        for (_, stage) in stages where !stage.isDone { try stage.finish() }
    }

    /// Runs the pipeline to the end of the input (or until every stage is done), then
    /// finishes the stages that are not done. `progress` is called after each packet a stage
    /// took (not after the one that completes every stage); an error it throws stops the run
    /// and is rethrown (the caller cancels its outputs).
    /// - Returns: the `.truncated` error of a file cut short (the packets before the cut were
    ///   handed on), nil otherwise.
    /// - Throws: the demuxer's, the stages' and `progress`'s errors.
    @discardableResult
    public func run(progress: ((Packet) throws -> Void)? = nil) throws -> MediaError? {
        var cursor = self
        var truncation: MediaError?
        while let packet = try cursor.advance(truncation: &truncation) {
            if cursor.isDone { break }
            try progress?(packet)
        }
        try cursor.finishStages()
        return truncation
    }
}
