/// Reads MPEG transport streams (ISO/IEC 13818-1): 188-byte packets, or the 192-byte packets
/// of M2TS (Blu-ray, AVCHD) whose first 4 bytes are a time code. The first program of the PAT
/// is read: its PMT lists the tracks, in PMT order (ffprobe's stream order). Packets come in
/// the order and with the timestamps ffprobe lists them, FFmpeg's parsers included:
///
/// - H.264 (stream type 0x1B) and HEVC (0x24): one access unit per PES, key frames IDR (H.264)
///   or IRAP (HEVC), durations from the SPS / VPS timing when stated; each comes out when the
///   next PES of its stream is complete, as from FFmpeg's h264 / hevc parsers. Extradata is the
///   first parameter sets in Annex B form, each behind a 3-byte start code, as FFmpeg's
///   extract_extradata writes them.
/// - MPEG-1/2 video (0x01, 0x02): one picture per PES, key frames I pictures, durations from
///   the sequence header's frame rate, handed out one PES late as from FFmpeg's mpegvideo parser.
/// - AAC in ADTS (0x0F), MPEG audio (0x03 / 0x04), AC-3 (0x81, or 0x06 with descriptor 0x6A or
///   an "AC-3" registration) and E-AC-3 (0x87, or 0x06 with descriptor 0x7A or "EAC3"): one
///   packet per frame (an E-AC-3 independent frame with its dependent ones), whatever PES
///   it comes in. The first frame starting in a PES takes its timestamps and position; the
///   others follow by the frame's duration (FFmpeg's `cur_dts`).
/// - AAC in LATM (0x11): `aac_latm`, one packet per LOAS frame with its sync header (bytes
///   before a sync word stay in the packet), as FFmpeg's latm parser cuts them; rate, channels
///   and extradata (the AudioSpecificConfig) from the first StreamMuxConfig, durations of
///   1024 (or 960) samples at the core's rate. FFmpeg's `aac_latm` decoder reads them.
/// - Opus (0x06 with an "Opus" registration and the extension descriptor 0x7F / 0x80): one
///   packet per access unit, control headers removed, an OpusHead built from the channel
///   configuration as FFmpeg builds it.
/// - DTS (0x82, 0x85, 0x86, 0x8A, or 0x06 with descriptor 0x7B or a "DTS1/2/3" registration):
///   one packet per PES, the duration from the core or extension substream header.
/// - PGS subtitles (0x90 in a program with an "HDMV" registration, as Blu-ray M2TS files have):
///   `hdmv_pgs_subtitle`, one key-frame packet per PES.
/// - Timed ID3 (0x15, or any stream type FFmpeg does not name, with a metadata descriptor of
///   format "ID3 " or an "ID3 " registration, as HLS writes it): a data track `timed_id3`, one
///   key-frame packet per PES. Of a stream type 0x15 PES (timed ID3 or not) the first 5 bytes
///   go, as FFmpeg drops them: it takes them for the metadata AU cell header of ISO/IEC
///   13818-1 2.12.4, which HLS does not write (its tags lose "ID3" and the version there too).
/// - Anything else: a data track (``CodecID/unknown``, the stream type as codec tag, e.g.
///   "0x86"), one packet per PES.
///
/// Timestamps are in 1/90000 s, the 33-bit PTS / DTS unwrapped into one rising timeline (a
/// first timestamp within 60 s of the wrap makes the ones before it negative, as FFmpeg's).
/// Damage is a warning (``warnings``), never fatal: lost sync (the reader finds the next
/// run of sync bytes), continuity-counter jumps (lost packets), the transport error
/// indicator, scrambled packets (their payload is not readable and is dropped, named with
/// its PID), PES larger than ``maxPESBytes`` (dropped), a section with a bad CRC. A file
/// that ends inside a packet gives what it holds, then `.truncated`.
///
/// The source is read forward, in chunks: a pipe works (without seeking). Opening reads ahead until
/// every track's first frame told its parameters (at most ``probeBytes``), and on through
/// ``rateProbeSeconds`` of an H.264 / HEVC stream whose SPS states no timing, whose packets
/// then last one frame of the rate its timestamps show (``FrameRateGuess``, FFmpeg's
/// `r_frame_rate`); those packets are kept and returned first. A new PMT version (or the same version with other contents,
/// as where two captures were joined) adds the PIDs it brings as tracks after the first ones,
/// as FFmpeg adds them as new streams. The tracks are known once open, so on a seekable source
/// opening also looks for later PMT versions (``scanWhole``, ``scanWindows``) and learns the
/// parameters of the streams they add from where they come; their packets come from the
/// transport packet where the version listing them is read, as in FFmpeg. A later version that
/// adds a stream opening did not find (from a pipe, or a version between the places looked at)
/// adds its track while reading, at the end of ``tracks``, its parameters filled in by the time
/// ``read()`` returns its first packet, with a warning naming its PID (a reader that chose its
/// tracks before, as a remux, leaves it out, as ffmpeg's command line does).
public final class MPEGTSDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The tracks of the first program, in PMT order (then the ones later PMT versions add, in
    /// the order they come). Grows while reading when a PMT version opening did not find adds
    /// streams (see the type's description).
    public private(set) var tracks: [Track] = []
    /// Seconds from the earliest track start to the latest track end, as FFmpeg estimates them
    /// for a seekable transport stream (see ``estimateDurations()``; each track's ``Track/duration``
    /// too); nil from a pipe, or when no timestamp near the end tells it.
    public private(set) var duration: Double?
    /// The source's name.
    public let path: String
    /// 188 (MPEG-TS) or 192 (M2TS).
    public let packetSize: Int
    /// Damage stepped over, oldest first (at most ``maxWarnings``, then one that counts the rest).
    public var warnings: [MediaError] {
        dropped == 0 ? warningList
            : warningList + [MediaError(.invalidData, "\(dropped) more warnings like the ones above", path: path)]
    }

    /// The largest PES a track may have (a PES above it is dropped with a warning): 16 MiB.
    public static let maxPESBytes = 16 << 20
    /// How far opening reads to learn the tracks' parameters: 16 MiB.
    public static let probeBytes: Int64 = 16 << 20
    /// How much of an H.264 / HEVC stream without timing in its SPS opening reads to guess its
    /// frame rate from the timestamps: 5 s (FFmpeg's `max_analyze_duration`).
    static let rateProbeSeconds = 5
    /// How far from the start opening reads for that at most: 5,000,000 bytes (FFmpeg's `probesize`).
    static let rateProbeBytes: Int64 = 5_000_000
    /// On a seekable source, opening looks through the rest of the file after what it read for
    /// later PMT versions, ``scanWindow`` bytes at a time: all of the rest when it is at most
    /// ``scanWhole``, else ``scanWindows`` places spread evenly through it, the first where
    /// opening stopped, the last at the end (a PMT repeats every 0.1 to 0.5 s in broadcasts and
    /// FFmpeg's output). 16 places.
    public static let scanWindows = 16
    /// The bytes read at a time, and at each of the ``scanWindows`` places: 512 KiB.
    public static let scanWindow = 512 << 10
    /// The longest rest of a file looked through whole: as many bytes as the ``scanWindows``
    /// places hold (8 MiB).
    public static let scanWhole = Int64(scanWindows * scanWindow)
    /// How many later PMT versions opening learns streams of (each reading at most
    /// ``laterProbeBytes`` from where it was found): 4.
    static let maxLaterVersions = 4
    /// How far opening reads from a later PMT version to learn the parameters of its streams: 4 MiB.
    static let laterProbeBytes: Int64 = 4 << 20
    /// How much of a file's end ``estimateDurations()`` reads first: 250,000 bytes (FFmpeg's
    /// DURATION_MAX_READ_SIZE).
    static let durationTail: Int64 = 250_000
    /// How many times it doubles that when a video or audio track had no timestamp there (FFmpeg's
    /// DURATION_MAX_RETRY): 6.
    static let durationRetries = 6
    /// How many warnings are kept: 200.
    public static let maxWarnings = 200
    /// FFmpeg's MAX_PES_PAYLOAD: the part of an unbounded PES its mpegts reader passes on at once.
    static let parserChunk = 200 * 1024
    /// Timestamp ticks per second.
    static let clock = MPEGTS.clock

    private let source: ByteSource
    /// The source's chunks, read ahead on a thread of their own while the reads are sequential.
    private let chunks: ReadAhead
    private let startOffset: Int64
    // The state read per transport packet has no dynamic exclusivity check (see
    // TSElementaryStream): like every demuxer, this one is used by one thread at a time, and
    // no access to these properties spans a call that could reach them again.
    @exclusivity(unchecked) private var offset: Int64
    @exclusivity(unchecked) private var chunk: [UInt8] = []
    @exclusivity(unchecked) private var chunkStart: Int64 = 0
    @exclusivity(unchecked) private var queue: [Packet] = []
    @exclusivity(unchecked) private var queueHead = 0
    @exclusivity(unchecked) private var streams: [TSElementaryStream] = []
    /// The stream of each PID (13 bits: 8192 entries), nil for PIDs not in the PMT. Unretained:
    /// ``streams`` holds them (and is reset with this table), so the per-packet look-up takes
    /// no reference count (a fifth of a read's time when it did).
    @exclusivity(unchecked) private var byPID = [Unmanaged<TSElementaryStream>?](repeating: nil, count: 8192)
    private var sectionBuffers: [Int: [UInt8]] = [:]
    private var sectionCC: [Int: Int] = [:]
    @exclusivity(unchecked) private var pmtPID: Int?
    private var programNumber: Int?
    private var pmtVersion: Int?
    /// The CRC of the PMT section read last: the same version with another CRC is a change too (FFmpeg's skip_identical).
    private var pmtCRC: UInt32?
    private var pmtChangeReported = false
    /// True while opening reads ahead (``learnTracks()``): a new PMT version still adds tracks.
    private var learning = false
    /// The streams later PMT versions add (found at open by ``scanLaterPMTs()``): tracks from
    /// the start, read once a PMT listing them is (``byPID`` has them from then on).
    private var laterStreams: [TSElementaryStream] = []
    /// A reader that learns later streams' parameters (``init(learning:at:pids:)``): the PIDs
    /// whose parameters it waits for, and how far it reads.
    private var wantedPIDs: Set<Int>?
    /// The tracks a PMT added while reading (``readPMT(_:at:)``) whose parameters are not
    /// known yet: each is made again from its stream when ``read()`` returns its first packet.
    private var unsettled: Set<Int> = []
    private var learnLimit = MPEGTSDemuxer.probeBytes
    /// A per-track reader (``init(copyOf:track:)``): the frame durations and whether the
    /// parameter sets stated them, per PID, as the reader it copies found them at open, taken
    /// instead of reading ahead again to guess the same rates.
    private var ratesFound: [Int: (ticks: Int64, stated: Bool)]?
    private var scrambledPIDs: Set<Int> = []
    @exclusivity(unchecked) private var ended = false
    private var cut: TruncationState = TruncationState()
    @exclusivity(unchecked) private var lastTimestamp: Int64?
    @exclusivity(unchecked) private var selected: Set<Int>?
    private var warningList: [MediaError] = []
    private var dropped = 0
    private var trackReaders: [Int: MPEGTSDemuxer] = [:]
    /// Where the last ``seek(to:)`` put the reading (the transport packet and the timestamp
    /// to unwrap near), nil for the start: the track readers made after it start there too.
    private var seekPoint: (offset: Int64, near: Int64)?
    @exclusivity(unchecked) private var onlyTrack: Int?

    /// Finds where packets start in `head`: the packet size (188 or 192) and the offset of the
    /// first packet (below one packet), when five packets in a row from there have their sync
    /// byte (or, when `atEnd` says the source ends with `head`, all of them, two at least).
    static func findSync(_ head: [UInt8], atEnd: Bool) -> (size: Int, start: Int, packets: Int)? {
        for size in [188, 192] {
            let lead = size - 188
            for start in 0..<size {
                var n = 0
                var at = start + lead
                while at < head.count, head[at] == 0x47 { n += 1; at += size }
                let whole = (head.count - start) / size
                if n >= 5 || (atEnd && n >= 2 && n >= whole) { return (size, start, n) }
                if start == 0 && head.count < size * 2 { break }
            }
        }
        return nil
    }

    /// Reads the PAT, the first program's PMT, and ahead until each track's first frame.
    /// - Throws: `.invalidData` when the first bytes hold no run of sync bytes (naming what
    ///   they hold), or when no PAT / PMT comes in the first ``probeBytes``.
    public init(source: ByteSource) throws {
        self.source = source
        chunks = ReadAhead(source: source)
        path = source.name
        let head = try source.readUpTo(at: 0, count: 192 * 8)
        guard let sync = Self.findSync(head, atEnd: head.count < 192 * 8) else {
            let hex = head.prefix(8).map { String(($0 < 16 ? "0" : "") + String($0, radix: 16)) }.joined(separator: " ")
            throw MediaError(.invalidData, "no MPEG-TS sync byte 0x47 every 188 or 192 bytes (the file begins \(hex.isEmpty ? "empty" : hex))",
                             path: path, offset: 0, context: "transport packet")
        }
        packetSize = sync.size
        startOffset = Int64(sync.start)
        offset = startOffset
        try learnTracks()
        scanLaterPMTs()
        try estimateDurations()
    }

    private init(copyOf other: MPEGTSDemuxer, track: Int) throws {
        source = other.source
        chunks = ReadAhead(source: other.source)
        path = other.path
        packetSize = other.packetSize
        startOffset = other.startOffset
        offset = startOffset
        onlyTrack = track
        laterStreams = other.laterStreams.map { $0.definition() }
        ratesFound = Dictionary(other.streams.map { ($0.pid, ($0.frameTicks, $0.rateStated)) }, uniquingKeysWith: { a, _ in a })
        try learnTracks()
    }

    /// A reader of `other`'s source from `offset` (a transport packet's start) that reads until
    /// the streams of `pids` told their parameters, at most ``laterProbeBytes``.
    private init(learning other: MPEGTSDemuxer, at offset: Int64, pids: Set<Int>) throws {
        source = other.source
        chunks = ReadAhead(source: other.source)
        path = other.path
        packetSize = other.packetSize
        startOffset = offset
        self.offset = offset
        pmtPID = other.pmtPID   // a PMT before the next PAT counts
        programNumber = other.programNumber
        wantedPIDs = pids
        learnLimit = Self.laterProbeBytes
        try learnTracks()
    }

    /// True once the streams opening waits for told their parameters (all of them, or those of
    /// ``wantedPIDs``).
    private var parametersLearned: Bool {
        let waiting = wantedPIDs.map { pids in streams.filter { pids.contains($0.pid) } } ?? streams
        guard !waiting.isEmpty, waiting.count >= wantedPIDs?.count ?? 0 else { return false }
        return waiting.allSatisfy { $0.parametersKnown || $0.framing == .whole && $0.sawPacket }
    }

    private func learnTracks() throws {
        learning = true
        defer { learning = false }
        while !ended && offset - startOffset < learnLimit {
            try step()
            if parametersLearned { break }
        }
        guard pmtPID != nil else {
            throw MediaError(.invalidData, "no PAT (program association table, PID 0) in the first \(offset - startOffset) bytes",
                             path: path, offset: startOffset, context: "PAT")
        }
        guard pmtVersion != nil else {
            throw MediaError(.invalidData, "no PMT for program \(programNumber ?? 0) (PID \(pmtPID ?? 0)) in the first \(offset - startOffset) bytes",
                             path: path, offset: startOffset, context: "PMT")
        }
        if wantedPIDs == nil { try guessFrameRates() }
        // FFmpeg gives the packets its stream-info pass read before the first one with a
        // duration that duration too (update_initial_durations): the frames before the
        // first SPS with timing.
        for s in streams where s.frameTicks > 0 {
            for i in queue.indices where queue[i].trackIndex == s.index && queue[i].duration == 0 { queue[i].duration = s.frameTicks }
            if s.held?.duration == 0 { s.held?.duration = s.frameTicks }
        }
        // The streams of later PMT versions follow, not read until such a version comes.
        for s in laterStreams where !streams.contains(where: { $0 === s }) {
            s.restart(); s.sawPacket = false
            streams.append(s)
        }
        tracks = streams.map(track)
    }

    /// H.264 and HEVC streams whose SPS states no timing (segments of live streams): reads on
    /// until ``rateProbeSeconds`` of their decoding timestamps were seen (more than 30 packets;
    /// at most ``rateProbeBytes`` from the start, or the end), as FFmpeg's stream-info pass
    /// reads, and gives each the frame duration of the rate ``FrameRateGuess`` makes of them
    /// (FFmpeg's `r_frame_rate`, which its packets without a duration are given). An SPS with
    /// timing found meanwhile wins (even a rate too high to give a duration: FFmpeg's then
    /// gives none).
    private func guessFrameRates() throws {
        let untimed = streams.filter { ($0.framing == .h264 || $0.framing == .hevc) && !$0.rateStated }
        guard !untimed.isEmpty else { return }
        if let ratesFound {
            for s in untimed { if let r = ratesFound[s.pid] { (s.frameTicks, s.rateStated) = r } }
            return
        }
        var guesses = [Int: FrameRateGuess]()
        var first = [Int: Int64](), counts = [Int: Int](), done = Set<Int>()
        for s in untimed { guesses[s.index] = FrameRateGuess(timeBase: Rational(1, Self.clock)) }
        var seen = queueHead
        let span = Int64(Self.rateProbeSeconds) * Self.clock
        func enough() -> Bool {
            while seen < queue.count {
                let p = queue[seen]
                seen += 1
                let t = p.trackIndex
                guard guesses[t] != nil, !done.contains(t), p.dts != Packet.noTimestamp else { continue }
                if first[t] == nil { first[t] = p.dts }
                counts[t, default: 0] += 1
                // FFmpeg stops at the packet that reaches the span, without taking it.
                if counts[t]! > 30 && p.dts - first[t]! >= span { done.insert(t) } else { guesses[t]!.add(p.dts) }
            }
            return untimed.allSatisfy { $0.rateStated || done.contains($0.index) }
        }
        while !ended && offset - startOffset < Self.rateProbeBytes && !enough() { try step() }
        for s in untimed where !s.rateStated { s.frameTicks = guesses[s.index]?.frameTicks ?? 0 }
    }

    /// The track of a stream.
    private func track(_ s: TSElementaryStream) -> Track {
        var t = Track(index: s.index, id: s.pid, parameters: s.parameters, timeBase: Rational(1, Self.clock), duration: 0,
                      unsupportedReason: s.unsupportedReason)
        // ffprobe's stream tag: the PMT's ISO 639 language descriptor.
        if let language = s.language {
            t.metadata.appendTrackField(key: "language", nativeKey: "ISO_639_language_descriptor", ffmpegKey: "language", value: language)
        }
        if s.framing == .whole && t.unsupportedReason == nil {
            t.unsupportedReason = "stream type \(TSElementaryStream.tag(s.streamType)) is not a codec MediaKit reads from MPEG-TS"
        }
        return t
    }

    /// On a seekable source, looks for PMT versions after the part opening read (all of it up to
    /// ``scanWhole``, else ``scanWindows`` places): the streams they add become tracks after the
    /// others, their parameters learned by reading from where the version was found. Damage
    /// there is passed over (reading itself reports it).
    private func scanLaterPMTs() {
        guard source.isSeekable, let size = source.knownSize, !ended, let pmtPID, let programNumber, let pmtCRC else { return }
        let rest = size - offset
        guard rest > Int64(packetSize) else { return }
        let window = Int64(Self.scanWindow)
        var places: [Int64] = []
        if rest <= Self.scanWhole {
            // Windows in a row, each overlapping the one before by 8 packets, so a section (at
            // most 1024 bytes) that crosses a window's end is whole in the next one.
            let overlap = 8 * Int64(packetSize)
            var at = offset
            while true {
                places.append(at)
                if at + window >= size { break }
                at += window - overlap
            }
        } else {
            let last = Int64(Self.scanWindows - 1)
            places = (0...last).map { offset + (rest - window) * $0 / last }
        }
        var seen: Set<UInt32> = [pmtCRC]
        var versions = 0
        for place in places {
            guard let bytes = try? source.readUpTo(at: place, count: Self.scanWindow) else { continue }
            for s in Self.sections(in: bytes, packetSize: packetSize, pid: pmtPID) {
                guard s[0] == 2, Int(s[3]) << 8 | Int(s[4]) == programNumber, seen.insert(Self.sectionCRC(s)).inserted else { continue }
                let pmt = pmtEntries(s)
                let new = pmt.streams.filter { e in byPID[e.pid] == nil && !laterStreams.contains { $0.pid == e.pid } }
                guard !new.isEmpty, versions < Self.maxLaterVersions else { continue }
                versions += 1
                // From the window's start: the version is read within its 512 KiB.
                let learner = try? MPEGTSDemuxer(learning: self, at: place, pids: Set(new.map(\.pid)))
                for e in new {
                    let stream = Self.stream(e, index: streams.count, programRegistration: pmt.registration)
                    if let learned = learner?.streams.first(where: { $0.pid == e.pid && $0.framing == stream.framing }) {
                        stream.learn(from: learned)
                    }
                    laterStreams.append(stream)
                    streams.append(stream)
                }
            }
        }
        tracks = streams.map(track)
    }

    /// The PSI sections of `pid` that `bytes` (transport packets from any offset) hold whole,
    /// to be read (``readable(_:)``). Out of sync, the next run of two packets is looked for.
    static func sections(in bytes: [UInt8], packetSize: Int, pid: Int) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var buffer: [UInt8] = []
        let lead = packetSize - 188
        var i = 0
        while i + packetSize <= bytes.count {
            let b = i + lead
            guard bytes[b] == 0x47, b + packetSize >= bytes.count || bytes[b + packetSize] == 0x47 else {
                buffer = []
                i += 1
                continue
            }
            defer { i += packetSize }
            guard Int(bytes[b + 1] & 0x1F) << 8 | Int(bytes[b + 2]) == pid, bytes[b + 1] & 0x80 == 0, bytes[b + 3] & 0xC0 == 0 else { continue }
            let afc = Int(bytes[b + 3] >> 4) & 3
            guard afc & 1 != 0 else { continue }
            let start = b + 4 + (afc & 2 != 0 ? 1 + Int(bytes[b + 4]) : 0)
            guard start < b + 188 else { continue }
            addPSIPayload(bytes[start..<(b + 188)], start: bytes[b + 1] & 0x40 != 0, to: &buffer) { section in
                if readable(section) == true { out.append(section) }
            }
        }
        return out
    }

    /// A section's CRC_32 field (its last 4 bytes).
    private static func sectionCRC(_ s: [UInt8]) -> UInt32 {
        s.suffix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }

    // MARK: reading

    /// The next packet of the selected tracks in ffprobe's order; nil at the end (after the
    /// `.truncated` error of a file cut inside a transport packet).
    public func read() throws -> Packet? {
        while true {
            if queueHead < queue.count {
                let p = queue[queueHead]
                queueHead += 1
                if queueHead > 256 && queueHead * 2 > queue.count { queue.removeFirst(queueHead); queueHead = 0 }
                if let only = onlyTrack, p.trackIndex != only { continue }
                if let selected, !selected.contains(p.trackIndex) { continue }
                if !unsettled.isEmpty, unsettled.contains(p.trackIndex) { settle(p.trackIndex, from: streams[p.trackIndex]) }
                return p
            }
            if ended {
                _ = try cut.check()   // a file cut inside a packet: `.truncated`, once
                return nil
            }
            try step(batch: true)
        }
    }

    /// The next packet of one track, read by a reader of its own (the source must seek).
    public func read(track: Int) throws -> Packet? {
        guard tracks.indices.contains(track) else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (the file has \(tracks.count))", path: path)
        }
        guard source.isSeekable else {
            throw MediaError(.unsupported, "reading one track on its own needs a seekable source (a file or memory)", path: path)
        }
        if trackReaders[track] == nil {
            let reader = try MPEGTSDemuxer(copyOf: self, track: track)
            if let p = seekPoint { reader.restartStreams(at: p.offset, near: p.near) }
            trackReaders[track] = reader
        }
        let p = try trackReaders[track]!.read()
        if p != nil, unsettled.contains(track), let reader = trackReaders[track], reader.streams.indices.contains(track) {
            settle(track, from: reader.streams[track])
        }
        return p
    }

    /// Makes a track a PMT added while reading again from its stream, once its parameters
    /// are known (its first packet told them).
    private func settle(_ index: Int, from s: TSElementaryStream) {
        tracks[index] = track(s)
        if s.parametersKnown || s.framing == .whole { unsettled.remove(index) }
    }

    /// Moves to the key frame at or before `seconds` (a PTS in seconds, as the packets'
    /// `pts * timeBase`) of the first video track (else the first track), then goes on from the
    /// transport packet where that frame's PES begins, every track from there (each from its
    /// next PES start). A transport stream has no index: on a file larger than two
    /// ``seekWindow``s the reader bisects the file by the PES timestamps of that track (the
    /// 33-bit values unwrapped against the bracket's lower end, so a file may cross the wrap
    /// but not span more than half of its 26.5 hours between two probes), then reads forward
    /// from one window before the place found, doubling the distance back until a key frame
    /// comes (on smaller files, and when none does, it reads from the start). The frame found
    /// is the one a read from the start would find: the last key frame at or before the time.
    /// A time before the first key frame moves to the start.
    /// - Throws: `.unsupported` for a source that cannot seek.
    public func seek(to seconds: Double) throws {
        guard source.isSeekable else { throw MediaError(.unsupported, "seeking needs a seekable source (a file or memory)", path: path) }
        let saved = tracks
        resetState()
        try learnTracks()
        tracks = saved
        guard seconds > 0, !seconds.isNaN, !tracks.isEmpty, streams.count == tracks.count else { return }
        let target = Int64(min(seconds, 1e12) * Double(Self.clock))
        let reference = tracks.first { $0.mediaType == .video }?.index ?? 0
        let pid = streams[reference].pid
        // Where reading forward starts: the start, or one window before the last PES of the
        // reference track whose timestamp is at or before the target.
        var back: (offset: Int64, timestamp: Int64)?
        if let size = source.knownSize, size - startOffset > 2 * Self.seekWindow, let near = lastTimestamp,
           let first = try pesTimestamp(pid: pid, from: startOffset, before: size) {
            var lo = (offset: first.offset, timestamp: Self.nearest(first.raw, to: near))
            var hi = size
            while lo.timestamp <= target && hi - lo.offset > Self.seekWindow {
                let mid = lo.offset + (hi - lo.offset) / 2 / Int64(packetSize) * Int64(packetSize)
                guard let probe = try pesTimestamp(pid: pid, from: mid, before: hi) else { hi = mid; continue }
                let t = Self.nearest(probe.raw, to: lo.timestamp)
                if t <= target { lo = (probe.offset, t) } else { hi = mid }
            }
            if lo.timestamp <= target && lo.offset - startOffset > Self.seekWindow { back = lo }
        }
        var distance = Self.seekWindow
        var fresh = true   // the state is the one opening left (the bisection reads on its own)
        while true {
            var best: (offset: Int64, pts: Int64)?
            var from = startOffset
            if let back {
                from = max(startOffset, back.offset - distance)
                from -= (from - startOffset) % Int64(packetSize)
            }
            if from > startOffset {
                restartStreams(at: from, near: back?.timestamp)
            } else if !fresh {
                resetState()
                try learnTracks()
                tracks = saved
            }
            fresh = false
            var cut: MediaError?
            while let p = try read(untilCut: &cut) {
                guard p.trackIndex == reference, p.pts != Packet.noTimestamp else { continue }
                if p.isKeyframe && p.position >= 0 && p.pts <= target { best = (p.position, p.pts) }
                if (p.dts == Packet.noTimestamp ? p.pts : p.dts) > target { break }
            }
            if let best {
                restartStreams(at: best.offset, near: best.pts)
                seekPoint = (best.offset, best.pts)
                return
            }
            if from == startOffset { break }
            distance *= 2
        }
        resetState()
        try learnTracks()
        tracks = saved
    }

    /// How close the bisection of ``seek(to:)`` brings the place it reads forward from: 1 MiB.
    public static let seekWindow: Int64 = 1 << 20

    /// Goes on reading at the transport packet at `offset` with the tracks as they are: the
    /// streams' partial PES and held frames go, timestamps unwrap near `near`.
    private func restartStreams(at offset: Int64, near: Int64?) {
        queue = []; queueHead = 0
        for s in streams { s.restart() }
        sectionBuffers = [:]
        sectionCC = [:]
        ended = false
        cut.reset()
        lastTimestamp = near
        self.offset = offset
    }

    /// The first PES start of `pid` at or after `from` (and before `before`) with a timestamp:
    /// the offset of its transport packet and its DTS (else PTS), 33 bits as written.
    private func pesTimestamp(pid: Int, from: Int64, before: Int64) throws -> (offset: Int64, raw: Int64)? {
        var found: (offset: Int64, raw: Int64)?
        try forEachPESStart(from: from, before: before) { offset, at, pts, dts in
            guard at == pid else { return true }
            found = (offset, dts ?? pts)
            return false
        }
        return found
    }

    /// Calls `visit` for each PES start at or after `from` (and before `before`) whose header
    /// has a PTS, in file order, with the offset of its transport packet, its PID, its PTS and
    /// its DTS (nil when absent), 33 bits as written, until `visit` returns false. Reads only
    /// transport packet and PES headers, 64 KiB at a time, finding the packets' sync again
    /// after damage.
    private func forEachPESStart(from: Int64, before: Int64,
                                 _ visit: (_ offset: Int64, _ pid: Int, _ pts: Int64, _ dts: Int64?) -> Bool) throws {
        let lead = packetSize - 188
        var at = from
        var aligned = false
        while at < before {
            let chunk = try source.readUpTo(at: at, count: min(Int(before - at), 1 << 16))
            guard chunk.count >= packetSize else { return }
            var i = 0
            if !aligned || chunk[lead] != 0x47 {
                guard let sync = Self.findSync(chunk, atEnd: at + Int64(chunk.count) >= before), sync.size == packetSize else {
                    at += Int64(max(1, chunk.count - 6 * packetSize))   // a run of packets may begin in the last ones
                    aligned = false
                    continue
                }
                i = sync.start
                aligned = true
            }
            while i + packetSize <= chunk.count {
                let b = i + lead
                if chunk[b] != 0x47 { aligned = false; break }
                let header = Int(chunk[b + 1]) << 16 | Int(chunk[b + 2]) << 8 | Int(chunk[b + 3])
                let afc = header >> 4 & 3
                // payload_unit_start_indicator, a payload, not scrambled.
                if header & 0x40_0000 != 0 && afc & 1 != 0 && header & 0xC0 == 0 {
                    let p = b + 4 + (afc & 2 != 0 ? 1 + Int(chunk[b + 4]) : 0)
                    if p + 14 <= b + 188, chunk[p] == 0, chunk[p + 1] == 0, chunk[p + 2] == 1, chunk[p + 7] & 0x80 != 0 {
                        let hasDTS = chunk[p + 7] >> 6 == 3 && chunk[p + 8] >= 10 && p + 19 <= b + 188
                        if !visit(at + Int64(i), header >> 8 & 0x1FFF, Self.timestamp(chunk, p + 9),
                                  hasDTS ? Self.timestamp(chunk, p + 14) : nil) { return }
                    }
                }
                i += packetSize
            }
            at += Int64(i)
            if !aligned { at += 1 }
        }
    }

    /// Each track's ``Track/duration`` and the file's ``duration`` on a seekable source, as
    /// FFmpeg estimates them for a transport stream (estimate_timings_from_pts, then
    /// update_stream_timings). A track starts at its first packet's PTS (in the packets opening
    /// read, else its first PES start there); it ends one frame (the video frame duration, an
    /// audio codec frame, nothing for other tracks) after the largest PTS of a PES that starts
    /// in the last ``durationTail`` bytes, a PES whose end lies 60 s or more from the one before
    /// of its track not raising it. A video track whose parameter sets give no frame duration
    /// takes that of the rate ``FrameRateGuess`` makes of those PES' decoding timestamps (FFmpeg
    /// uses its `r_frame_rate`, guessed from the first ones). When a video or audio track has
    /// no PES there, the reading starts twice as far from the end, as far as ``durationTail``
    /// bytes from there (FFmpeg counts PES bytes), and only once more when the first reading
    /// found any. The file runs from the earliest start to the latest end of the audio and
    /// video tracks (of the subtitle and data tracks when they are all there are, or within a
    /// second of them). As FFmpeg's, the values are estimates: within one frame of the
    /// packets' own end on intact files.
    private func estimateDurations() throws {
        guard source.isSeekable, let size = source.knownSize, !tracks.isEmpty, streams.count == tracks.count else { return }
        var start = [Int: Int64]()
        for p in queue[queueHead...] where start[p.trackIndex] == nil && p.pts != Packet.noTimestamp { start[p.trackIndex] = p.pts }
        for s in streams where start[s.index] == nil { if let pts = s.held?.pts, pts != Packet.noTimestamp { start[s.index] = pts } }
        if streams.contains(where: { start[$0.index] == nil }) {
            // A stream whose first PES opening read is still open (a data track): its PTS.
            let near = lastTimestamp ?? start.values.min()
            try forEachPESStart(from: startOffset, before: min(size, offset)) { _, pid, pts, _ in
                if let s = streams.first(where: { $0.pid == pid }), start[s.index] == nil { start[s.index] = near.map { Self.nearest(pts, to: $0) } ?? pts }
                return streams.contains { start[$0.index] == nil }
            }
        }
        var byPID = [Int: TSElementaryStream]()
        for s in streams where start[s.index] != nil { byPID[s.pid] = s }
        guard !byPID.isEmpty else { return }
        var durations = [Int: Int64](), lastDuration = [Int: Int64]()
        var found = false, retry = 0
        while true {
            let isEnd = found
            let from = max(startOffset, size - (Self.durationTail << retry))
            let limit = min(size, from + (Self.durationTail << max(retry - 1, 0)))   // the first time: the end
            // The PES starts of the tracks, in file order: track, PTS and DTS on the tracks' timeline.
            var seen: [(index: Int, pts: Int64, dts: Int64)] = []
            try forEachPESStart(from: from, before: size) { offset, pid, pts, dts in
                guard offset < limit else { return false }
                if let s = byPID[pid], let first = start[s.index] {
                    let p = Self.nearest(pts, to: first)
                    seen.append((s.index, p, dts.map { Self.nearest($0, to: p) } ?? p))
                }
                return true
            }
            var frame = [Int: Int64]()
            for s in byPID.values {
                switch tracks[s.index].mediaType {
                case .video where s.frameTicks > 0: frame[s.index] = s.frameTicks
                case .video:
                    var guess = FrameRateGuess(timeBase: Rational(1, Self.clock))
                    for e in seen where e.index == s.index { guess.add(e.dts) }
                    frame[s.index] = guess.frameTicks
                case .audio where s.audioFrame.rate > 0:
                    frame[s.index] = Int64(s.audioFrame.samples) * Self.clock / Int64(s.audioFrame.rate)
                default: break
                }
            }
            for e in seen {
                found = true
                let d = e.pts + (frame[e.index] ?? 0) - start[e.index]!
                guard d > 0 else { continue }
                let last = lastDuration[e.index] ?? 0
                if durations[e.index] == nil || last <= 0 || (durations[e.index]! < d && abs(d - last) < 60 * Self.clock) {
                    durations[e.index] = d
                }
                lastDuration[e.index] = d
            }
            let done = isEnd || tracks.allSatisfy { ($0.mediaType != .video && $0.mediaType != .audio) || durations[$0.index] != nil }
            retry += 1
            if done || from == startOffset || retry > Self.durationRetries { break }
        }
        // update_stream_timings, in microseconds: the text (subtitle, data) tracks count
        // when there is nothing else, or within a second of it.
        var begin = Int64.max, beginText = Int64.max, end = Int64.min, endText = Int64.min
        for (index, d) in durations {
            guard let first = start[index] else { continue }
            tracks[index].duration = d
            let text = tracks[index].mediaType != .video && tracks[index].mediaType != .audio
            let s = Rational.rescale(first, from: Rational(1, Self.clock), to: Rational(1, 1_000_000))
            let e = s + Rational.rescale(d, from: Rational(1, Self.clock), to: Rational(1, 1_000_000))
            if text { beginText = min(beginText, s); endText = max(endText, e) } else { begin = min(begin, s); end = max(end, e) }
        }
        if begin == .max || (begin > beginText && begin - beginText < 1_000_000) { begin = beginText }
        if end == .min || (end < endText && endText - end < 1_000_000) { end = endText }
        if begin != .max && end != .min && end > begin { duration = Double(end - begin) / 1e6 }
    }

    private func resetState() {
        offset = startOffset
        queue = []; queueHead = 0
        streams = []; byPID = [Unmanaged<TSElementaryStream>?](repeating: nil, count: 8192)
        sectionBuffers = [:]; sectionCC = [:]
        pmtPID = nil; programNumber = nil; pmtVersion = nil; pmtChangeReported = false
        scrambledPIDs = []
        ended = false
        cut.reset()
        lastTimestamp = nil
        trackReaders = [:]
        seekPoint = nil
    }

    /// Limits ``read()`` to these tracks (nil: all). The others are still parsed (their PES
    /// share the transport stream), only not returned.
    public func select(tracks: Set<Int>?) { selected = tracks }

    private func warn(_ message: String, at offset: Int64?, _ context: String) {
        guard warningList.count < Self.maxWarnings else { dropped += 1; return }
        warningList.append(MediaError(.invalidData, message, path: path, offset: offset, context: context))
    }

    // MARK: transport packets

    /// `count` bytes at `at` from the chunk (refilled as needed); fewer at the end. A regular
    /// file is read 2048 transport packets (376 or 384 KiB) at a time, ahead on a thread
    /// (``ReadAhead``): against 512, a quarter of the hand-overs between the threads (a 1 GB
    /// TS -> MP4 remux went from 0.47x to 0.39x of ffmpeg's wall time, medians of 7); a pipe
    /// or other stream 512 (96 KiB), so that a slow live stream's packets are not held back.
    private func bytes(at: Int64, count: Int) throws -> ArraySlice<UInt8> {
        let end = chunkStart + Int64(chunk.count)
        if at >= chunkStart && at + Int64(count) <= end {
            let s = Int(at - chunkStart)
            return chunk[s..<(s + count)]
        }
        chunk = try chunks.read(at: at, count: max(count, packetSize * (chunks.readsAhead ? 2048 : 512)))
        chunkStart = at
        return chunk[0..<min(count, chunk.count)]
    }

    /// Reads and handles one transport packet; at the end, flushes what the streams hold.
    /// With `batch`, the whole packets in sync that the read chunk holds are handled in a row,
    /// until one gives a packet (``read()``: no copy or reference count per transport packet).
    private func step(batch: Bool = false) throws {
        if batch && offset >= chunkStart && offset + Int64(packetSize) <= chunkStart + Int64(chunk.count) {
            let queued = queue.count
            let lead = packetSize - 188
            var at = Int(offset - chunkStart)
            var handled = false
            chunk.withUnsafeBufferPointer { buffer in
                while at + packetSize <= buffer.count && buffer[at + lead] == 0x47 {
                    let start = at + lead
                    offset = chunkStart + Int64(at + packetSize)
                    handle(UnsafeBufferPointer(rebasing: buffer[start..<(start + 188)]), at: chunkStart + Int64(at))
                    handled = true
                    at += packetSize
                    if queue.count > queued { break }
                }
            }
            if handled { return }   // else: out of sync here, the way below finds it again
        }
        let unit = try bytes(at: offset, count: packetSize)
        if unit.count < packetSize {
            if !unit.isEmpty {
                cut.cut(MediaError(.truncated, "the file ends inside a transport packet (\(unit.count) of \(packetSize) bytes)",
                                   path: path, offset: offset, context: "transport packet"))
            }
            finish()
            return
        }
        let b = unit.startIndex + packetSize - 188
        guard unit[b] == 0x47 else {
            try resync()
            return
        }
        let at = offset
        offset += Int64(packetSize)
        unit.withUnsafeBufferPointer { handle(UnsafeBufferPointer(rebasing: $0[(packetSize - 188)...]), at: at) }
    }

    /// Finds the next place where two packets in a row start with 0x47 (or one does, just
    /// before the end), with a warning saying what was skipped.
    private func resync() throws {
        let lost = offset
        var at = offset + 1
        let lead = Int64(packetSize - 188)
        while true {
            let here = try bytes(at: at + lead, count: 1)
            if here.isEmpty { break }
            if here.first == 0x47 {
                let next = try bytes(at: at + lead + Int64(packetSize), count: 1)
                if next.isEmpty || next.first == 0x47 { break }
            }
            at += 1
        }
        warn("lost sync (no 0x47 where a transport packet should start); \(at - lost) bytes skipped to the next run of packets",
             at: lost, "transport packet")
        offset = at
    }

    private func handle(_ p: UnsafeBufferPointer<UInt8>, at: Int64) {
        // p: the packet in the read chunk (no copy per packet)
        let pid = Int(p[1] & 0x1F) << 8 | Int(p[2])
        if pid == 0x1FFF { return }
        // The stream, unretained (see byPID): used through _withUnsafeGuaranteedRef only.
        let stream = byPID[pid]
        guard stream != nil || pid == 0 || pid == pmtPID else { return }
        let pusi = p[1] & 0x40 != 0
        let scrambling = Int(p[3] >> 6)
        let afc = Int(p[3] >> 4) & 3
        let cc = Int(p[3] & 0xF)
        if p[1] & 0x80 != 0 {
            warn("the transport error indicator is set on PID \(pid): the packet is damaged", at: at, "transport packet")
        }
        guard afc != 0 else { return }   // reserved: no payload, no adaptation field
        var start = 4
        var discontinuity = false
        if afc & 2 != 0 {
            let length = Int(p[4])
            guard length <= 183 else {
                warn("an adaptation field of \(length) bytes on PID \(pid) is longer than the packet; packet skipped", at: at, "adaptation field")
                return
            }
            if length > 0 { discontinuity = p[5] & 0x80 != 0 }
            start = 5 + length
        }
        guard afc & 1 != 0 else { return }
        // Continuity: each packet with a payload counts on by one (mod 16).
        let last = stream?._withUnsafeGuaranteedRef { $0.lastCC } ?? sectionCC[pid] ?? -1
        if last >= 0 && !discontinuity && cc != (last + 1) & 15 {
            warn(cc == last ? "continuity counter on PID \(pid) repeats \(cc): a duplicate packet"
                            : "continuity counter on PID \(pid) jumps from \(last) to \(cc): \((cc - last - 1 + 32) % 16) packets lost",
                 at: at, "transport packet")
        }
        if discontinuity && last >= 0 {
            warn("discontinuity indicator on PID \(pid): the counter and time base may restart", at: at, "adaptation field")
        }
        if let stream { stream._withUnsafeGuaranteedRef { $0.lastCC = cc } } else { sectionCC[pid] = cc }
        if scrambling != 0 {
            if scrambledPIDs.insert(pid).inserted {
                warn("PID \(pid) is scrambled (transport_scrambling_control \(scrambling)): its payload cannot be read and is dropped",
                     at: at, "transport packet")
            }
            stream?._withUnsafeGuaranteedRef { $0.dropPES() }
            return
        }
        let payload = p[(start)...]
        if let stream {
            stream._withUnsafeGuaranteedRef { pesData($0, payload, start: pusi, at: at) }
        } else {
            sectionData(pid, ArraySlice(payload), start: pusi, at: at)
        }
    }

    // MARK: sections (PAT, PMT)

    private func sectionData(_ pid: Int, _ payload: ArraySlice<UInt8>, start: Bool, at: Int64) {
        var buffer = sectionBuffers[pid] ?? []
        Self.addPSIPayload(payload, start: start, to: &buffer) { section in
            switch Self.readable(section) {
            case nil: break
            case false?:
                warn("a section of table \(section[0]) on PID \(pid) has a bad CRC; ignored", at: at, pid == 0 ? "PAT" : "PMT")
            case true?:
                if pid == 0 && section[0] == 0 { readPAT(section, at: at) }
                if pid == pmtPID && section[0] == 2 { readPMT(section, at: at) }
            }
        }
        sectionBuffers[pid] = buffer.isEmpty ? nil : buffer
    }

    /// Adds a transport packet's payload on a PSI PID to `buffer` (the section being put together
    /// there) and hands each section it completes, whole, to `section`. With `start`
    /// (payload_unit_start_indicator) the pointer field says where the section before ends and
    /// the next begins; without it the payload goes on with the section begun before (and is
    /// dropped when none was). A stuffing byte (0xFF) where a section would begin ends the packet's sections.
    static func addPSIPayload(_ payload: ArraySlice<UInt8>, start: Bool, to buffer: inout [UInt8], _ section: ([UInt8]) -> Void) {
        func complete() {
            while buffer.count >= 3 {
                if buffer[0] == 0xFF { buffer = []; return }
                let length = 3 + (Int(buffer[1] & 0x0F) << 8 | Int(buffer[2]))
                guard buffer.count >= length else { return }
                let whole = Array(buffer[0..<length])
                buffer.removeFirst(length)
                section(whole)
            }
        }
        var rest = payload
        if start {
            guard let pointer = rest.first, rest.count > Int(pointer) else { buffer = []; return }
            rest = rest.dropFirst()
            if !buffer.isEmpty { buffer += rest.prefix(Int(pointer)); complete() }
            buffer = Array(rest.dropFirst(Int(pointer)))
        } else {
            guard !buffer.isEmpty else { return }
            buffer += rest
        }
        complete()
    }

    /// Whether a section put together is one to read: true for the long form (at least 12 bytes,
    /// section_syntax_indicator set) with a good CRC_32 and current_next_indicator set; false for a
    /// bad CRC (a warning); nil for one passed over silently (short form, or not current yet).
    static func readable(_ section: [UInt8]) -> Bool? {
        guard section.count >= 12, section[1] & 0x80 != 0 else { return nil }
        guard MPEGTS.crc32(section) == 0 else { return false }
        return section[5] & 1 == 1 ? true : nil
    }

    private func readPAT(_ s: [UInt8], at: Int64) {
        guard pmtPID == nil else { return }
        var i = 8
        while i + 4 <= s.count - 4 {
            let program = Int(s[i]) << 8 | Int(s[i + 1])
            let pid = Int(s[i + 2] & 0x1F) << 8 | Int(s[i + 3])
            i += 4
            if program != 0 && pid != 0 && pid != 0x1FFF { programNumber = program; pmtPID = pid; return }
        }
    }

    /// Reads the program's PMT: its first version makes the tracks. A new version (or the same
    /// with another CRC) that comes while opening reads ahead adds its new PIDs as tracks after
    /// the others, as FFmpeg adds them as new streams (a PID already read keeps its codec, as in
    /// FFmpeg); once the tracks are out, a new version starts the streams of its PIDs that
    /// opening found further on (``laterStreams``), and any other PID it adds becomes a track
    /// at the end of ``tracks`` (``unsettled`` until its first packet), with a warning.
    private func readPMT(_ s: [UInt8], at: Int64) {
        guard Int(s[3]) << 8 | Int(s[4]) == programNumber else { return }   // another program's PMT on the same PID
        let version = Int(s[5] >> 1) & 0x1F
        let crc = Self.sectionCRC(s)
        let previous = pmtVersion
        if let pmtVersion {
            guard version != pmtVersion || crc != pmtCRC else { return }
        }
        pmtVersion = version
        pmtCRC = crc
        let pmt = pmtEntries(s)
        if let previous, !learning {
            var added: [String] = []
            var problems: [String] = []
            for e in pmt.streams {
                if let known = byPID[e.pid] {
                    let type = known._withUnsafeGuaranteedRef { $0.streamType }
                    if type != e.type {
                        problems.append("PID \(e.pid) is stream type \(TSElementaryStream.tag(e.type)) now, still read as \(TSElementaryStream.tag(type))")
                    }
                } else if let later = laterStreams.first(where: { $0.pid == e.pid }) {
                    byPID[e.pid] = Unmanaged.passUnretained(later)
                } else {
                    // Opening did not find this version (a pipe, or a version between the
                    // places looked at): the stream becomes a track now, as FFmpeg adds it.
                    let stream = Self.stream(e, index: streams.count, programRegistration: pmt.registration)
                    streams.append(stream)
                    laterStreams.append(stream)   // a seek or a reader of one track finds it at this PMT again
                    byPID[e.pid] = Unmanaged.passUnretained(stream)
                    tracks.append(track(stream))
                    unsettled.insert(stream.index)
                    added.append("PID \(e.pid) as track \(stream.index)")
                }
            }
            let change = "the PMT changed (" + (previous == version ? "version \(version), other contents" : "version \(previous) to \(version)")
                + ") after the tracks were read; "
            if !added.isEmpty {
                // Not damage: said because a reader that chose its tracks at the start (a remux)
                // leaves these out, as ffmpeg's "New stream ... ignored" does.
                warn(change + "it adds " + added.joined(separator: ", ") + " from here on", at: at, "PMT")
            }
            if !problems.isEmpty && !pmtChangeReported {
                warn(change + problems.joined(separator: "; "), at: at, "PMT")
                pmtChangeReported = true
            }
            return
        }
        for e in pmt.streams where byPID[e.pid] == nil {
            let stream = Self.stream(e, index: streams.count, programRegistration: pmt.registration)
            streams.append(stream)
            byPID[e.pid] = Unmanaged.passUnretained(stream)
        }
    }

    /// One elementary stream of a PMT: its stream type, PID and descriptors.
    typealias PMTEntry = (type: UInt8, pid: Int, descriptors: [(tag: UInt8, body: [UInt8])])

    /// A PMT section's streams (not those on PID 0, the PMT's own or the null PID) and the
    /// program's registration descriptor.
    private func pmtEntries(_ s: [UInt8]) -> (registration: String?, streams: [PMTEntry]) {
        let end = s.count - 4
        let programInfo = Int(s[10] & 0x0F) << 8 | Int(s[11])
        var i = 12 + programInfo
        let registration = Self.registration(Self.descriptors(s, 12, min(i, end)))
        var out: [PMTEntry] = []
        while i + 5 <= end {
            let type = s[i]
            let pid = Int(s[i + 1] & 0x1F) << 8 | Int(s[i + 2])
            let infoLength = Int(s[i + 3] & 0x0F) << 8 | Int(s[i + 4])
            let descriptors = Self.descriptors(s, i + 5, min(i + 5 + infoLength, end))
            i += 5 + infoLength
            guard pid != 0, pid != pmtPID, pid < 0x1FFF, !out.contains(where: { $0.pid == pid }) else { continue }
            out.append((type, pid, descriptors))
        }
        return (registration, out)
    }

    /// The stream a PMT entry makes, as track `index`.
    private static func stream(_ e: PMTEntry, index: Int, programRegistration: String?) -> TSElementaryStream {
        let (framing, parameters) = TSElementaryStream.classify(streamType: e.type, descriptors: e.descriptors,
                                                                registration: registration(e.descriptors),
                                                                programRegistration: programRegistration)
        let stream = TSElementaryStream(pid: e.pid, index: index, streamType: e.type, framing: framing, parameters: parameters)
        stream.language = language(e.descriptors)
        if framing == .pgs || framing == .timedID3 { stream.parametersKnown = true }   // nothing to learn from the stream
        if framing == .dvbSubtitle, let d = e.descriptors.first(where: { $0.tag == 0x59 }) {
            stream.parametersKnown = true   // all from the descriptor
            if stream.language == nil { stream.language = TSElementaryStream.dvbSubtitleLanguages(d.body) }
        }
        return stream
    }

    private static func descriptors(_ s: [UInt8], _ from: Int, _ to: Int) -> [(tag: UInt8, body: [UInt8])] {
        var out: [(tag: UInt8, body: [UInt8])] = []
        var i = from
        while i + 2 <= to {
            let n = Int(s[i + 1])
            guard i + 2 + n <= to else { break }
            out.append((s[i], Array(s[(i + 2)..<(i + 2 + n)])))
            i += 2 + n
        }
        return out
    }

    /// The ISO 639 language descriptor's (tag 0x0A) languages as FFmpeg's mpegts demuxer gives
    /// them (ff_parse_mpeg2_descriptor): each 4-byte entry's 3 letters, joined with ","; the first
    /// such descriptor counts (later ones do not overwrite); nil when its first letter is NUL.
    static func language(_ d: [(tag: UInt8, body: [UInt8])]) -> String? {
        guard let l = d.first(where: { $0.tag == 0x0A && $0.body.count >= 4 }) else { return nil }
        var codes: [String] = []
        var i = 0
        while i + 4 <= l.body.count {
            codes.append(String(decoding: l.body[i..<i + 3].prefix(while: { $0 != 0 }), as: UTF8.self))
            i += 4
        }
        guard l.body[0] != 0 else { return nil }
        return codes.joined(separator: ",")
    }

    private static func registration(_ d: [(tag: UInt8, body: [UInt8])]) -> String? {
        guard let r = d.first(where: { $0.tag == 0x05 && $0.body.count >= 4 }) else { return nil }
        return String(decoding: r.body[0..<4], as: UTF8.self)
    }

    // MARK: PES

    /// The stream ids whose PES have no optional header (ISO/IEC 13818-1 2.4.3.7).
    private static func hasPESHeader(_ id: UInt8) -> Bool { ![0xBC, 0xBE, 0xBF, 0xF0, 0xF1, 0xFF, 0xF2, 0xF8].contains(id) }

    private func pesData(_ s: TSElementaryStream, _ payload: Slice<UnsafeBufferPointer<UInt8>>, start: Bool, at: Int64) {
        s.sawPacket = true
        if start {
            if s.pesActive && s.pesCount > 0 { finishPES(s, atEnd: false) }
            // A header whole in the first packet is kept apart, so the payload gathers on its own
            // and goes out without a copy; otherwise the PES gathers whole (finishPES sorts it).
            let o = payload.startIndex
            let headerBytes = payload.count >= 9 ? 9 + Int(payload[o + 8]) : Int.max
            let length = payload.count >= 6 ? Int(payload[o + 4]) << 8 | Int(payload[o + 5]) : 0
            if headerBytes <= payload.count && payload[o] == 0 && payload[o + 1] == 0 && payload[o + 2] == 1
                && Self.hasPESHeader(payload[o + 3]) && (length == 0 || headerBytes <= 6 + length) {
                s.pesHead = Array(payload.prefix(headerBytes))
                s.pes = []
                s.pes.reserveCapacity(length > 0 ? 6 + length - headerBytes : s.pesCapacityHint)
                s.pes += UnsafeBufferPointer(rebasing: payload.dropFirst(headerBytes))
                s.pesFirstPayload = payload.count - headerBytes
            } else {
                s.pesHead = []
                s.pes = Array(payload)
                s.pesFirstPayload = Int.max
            }
            s.pesFedEarly = false
            s.pesPosition = at
            s.pesActive = true
            s.learnPESEnd()
        } else {
            guard s.pesActive else { return }   // the middle of a PES whose start was not seen
            guard s.pesCount + payload.count <= Self.maxPESBytes else {
                warn("a PES on PID \(s.pid) is larger than \(Self.maxPESBytes) bytes; dropped", at: s.pesPosition, "PES")
                s.dropPES()
                return
            }
            // FFmpeg hands an unbounded PES to its parser in parts of 200 KiB (MAX_PES_PAYLOAD):
            // the first part of a video PES lets the parser give out the access unit before it.
            // (Checked once the PES has 200 KiB: the header's bytes are not looked at per packet.)
            if !s.pesFedEarly && s.pesEnd == 0 && s.pesCount + payload.count > Self.parserChunk
                && (s.framing == .h264 || s.framing == .hevc || s.framing == .mpegVideo) {
                let head = s.pesHeader
                if head.count >= 9 {
                    let collected = s.pesCount - 9 - Int(head[8])
                    if collected > 0 && collected + payload.count > Self.parserChunk {
                        s.pesFedEarly = true
                        if s.prefix == nil, let held = s.held { emit(held); s.held = nil }
                    }
                }
            }
            s.pes += UnsafeBufferPointer(rebasing: payload)
            if s.pesEnd < 0 { s.learnPESEnd() }
        }
        if s.pesEnd > 0 && s.pesCount >= s.pesEnd { finishPES(s, atEnd: false) }
    }

    /// Reads a whole PES's header and hands its payload to the stream's framing.
    private func finishPES(_ s: TSElementaryStream, atEnd: Bool) {
        // `head`: the header bytes (the PES itself when its header was not kept apart, `apart`
        // 0); `count`: the PES's bytes in all; the payload is `body` after `apart` bytes.
        var body = s.pes
        let head = s.pesHeader
        let apart = s.pesHead.count
        let count = s.pesCount
        let position = s.pesPosition
        // ISO/IEC 13818-1 2.12.4's metadata AU cell header (service id, sequence number, flags,
        // length: 5 bytes), which FFmpeg takes every stream type 0x15 PES to begin with when the
        // transport packet its header ends in holds 5 more bytes, and drops; HLS's timed ID3,
        // written without it, loses the tag's first 5 bytes ("ID3", version) there as here.
        let metadataCell = s.streamType == MPEGTS.StreamType.metadata && s.pesFirstPayload >= 5 ? 5 : 0
        s.dropPES()
        guard head.count >= 6, head[0] == 0, head[1] == 0, head[2] == 1 else {
            warn("a PES on PID \(s.pid) does not start with 00 00 01 (\(count) bytes); dropped", at: position, "PES")
            return
        }
        let id = head[3]
        let length = Int(head[4]) << 8 | Int(head[5])
        var end = count
        if length != 0 {
            if count < 6 + length {
                warn("a PES on PID \(s.pid) says \(length) bytes but \(count - 6) came before " + (atEnd ? "the end of the file" : "the next one"),
                     at: position, "PES")
            } else {
                end = 6 + length
            }
        }
        var pts = Packet.noTimestamp, dts = Packet.noTimestamp
        var payloadStart = 6
        if Self.hasPESHeader(id) {
            guard head.count >= 9, 9 + Int(head[8]) <= end else {
                warn("a PES header on PID \(s.pid) is cut short (\(count) bytes); dropped", at: position, "PES")
                return
            }
            let headerLength = Int(head[8])
            let flags = head[7] >> 6
            if flags & 2 != 0 && headerLength >= 5 { pts = unwrap(Self.timestamp(head, 9)) }
            if flags == 3 && headerLength >= 10 { dts = unwrap(Self.timestamp(head, 14)) } else { dts = pts }
            payloadStart = 9 + headerLength
        }
        if apart > 0 {
            // The header was kept apart (payloadStart == apart): the body is the payload.
            if end - apart < body.count { body.removeSubrange((end - apart)...) }
            if metadataCell > 0 { body.removeFirst(min(metadataCell, body.count)) }
            deliver(s, body, pts: pts, dts: dts, position: position)
        } else {
            deliver(s, Array(body[min(payloadStart + metadataCell, end)..<end]), pts: pts, dts: dts, position: position)
        }
    }

    private static func timestamp(_ b: [UInt8], _ i: Int) -> Int64 {
        Int64(b[i] >> 1 & 7) << 30 | Int64(b[i + 1]) << 22 | Int64(b[i + 2] >> 1) << 15 | Int64(b[i + 3]) << 7 | Int64(b[i + 4] >> 1)
    }

    /// A 33-bit timestamp placed on the timeline: the one of its 2^33-periodic values nearest
    /// the last timestamp read. The first, within 60 s of the wrap, counts as before it.
    private func unwrap(_ raw: Int64) -> Int64 {
        let period: Int64 = 1 << 33
        guard let last = lastTimestamp else {
            let v = raw >= period - 60 * Self.clock ? raw - period : raw
            lastTimestamp = v
            return v
        }
        let best = Self.nearest(raw, to: last)
        lastTimestamp = best
        return best
    }

    /// The one of the 2^33-periodic values of the timestamp `raw` nearest `near`.
    static func nearest(_ raw: Int64, to near: Int64) -> Int64 {
        let period: Int64 = 1 << 33
        let base = near - ((near % period) + period) % period
        var best = base + raw
        for c in [base - period + raw, base + period + raw] where abs(c - near) < abs(best - near) { best = c }
        return best
    }

    /// At the end of the input: the PES still open, by PID (as FFmpeg's mpegts), then what
    /// each stream's framing holds, by track.
    private func finish() {
        guard !ended else { return }
        ended = true
        for s in streams.sorted(by: { $0.pid < $1.pid }) where s.pesActive && s.pesCount > 0 {
            finishPES(s, atEnd: true)
        }
        for s in streams { flushFraming(s) }
    }

    // MARK: framing

    private func emit(_ p: Packet) { queue.append(p) }

    private func deliver(_ s: TSElementaryStream, _ payload: [UInt8], pts: Int64, dts: Int64, position: Int64) {
        switch s.framing {
        case .whole:
            // Not a key frame: FFmpeg flags none for a stream it has no parser for.
            emit(Packet(trackIndex: s.index, pts: pts, dts: dts, duration: 0, isKeyframe: false, position: position,
                        data: payload, timeBase: Rational(1, Self.clock)))
        case .timedID3:
            // An ID3 tag as the PES carries it; a key frame, no duration.
            emit(Packet(trackIndex: s.index, pts: pts, dts: dts, duration: 0, isKeyframe: true, position: position,
                        data: payload, timeBase: Rational(1, Self.clock)))
        case .pgs:
            // A display set's segments as the PES carries them; a key frame, no duration.
            emit(Packet(trackIndex: s.index, pts: pts, dts: dts, duration: 0, isKeyframe: true, position: position,
                        data: payload, timeBase: Rational(1, Self.clock)))
        case .dvbSubtitle:
            // Every packet a key frame, no duration (the page time-out is in the segments).
            emit(Packet(trackIndex: s.index, pts: pts, dts: dts, duration: 0, isKeyframe: true, position: position,
                        data: TSElementaryStream.dvbSubtitleSegments(payload), timeBase: Rational(1, Self.clock)))
        case .dts:
            // One frame per PES, each handed out when the next begins (FFmpeg's dca parser
            // finds a frame's end at the next sync word).
            let header = DTSHeader(payload)
            if let header, !s.parametersKnown { s.parameters.sampleRate = header.sampleRate; s.parametersKnown = true }
            let duration = header.map { Int64($0.samples) * Self.clock / Int64($0.sampleRate) } ?? 0
            if let held = s.held { emit(held) }
            s.held = Packet(trackIndex: s.index, pts: pts, dts: dts, duration: duration, isKeyframe: true, position: position,
                            data: payload, timeBase: Rational(1, Self.clock))
        case .opus:
            opusPackets(s, payload, pts: pts, dts: dts, position: position)
        case .h264, .hevc, .mpegVideo:
            guard !payload.isEmpty else { return }
            var data = payload
            if s.held != nil || s.prefix != nil {
                // The bytes before the PES's first start code end the access unit before it, as
                // FFmpeg's parsers cut: the h264 parser before a 4-byte start code, the hevc
                // parser before its last 3 bytes (a 4-byte start code's first zero stays behind).
                var cut = data.count
                var i = 0
                while i + 2 < data.count {
                    if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1 { cut = i; break }
                    i += 1
                }
                if s.framing == .h264 && cut > 0 && cut < data.count && data[cut - 1] == 0 { cut -= 1 }   // hevc, MPEG video: 3 bytes
                if cut > 0 {
                    if s.prefix != nil { s.prefix?.data += data[0..<cut] } else { s.held?.data += data[0..<cut] }
                    data.removeFirst(cut)
                }
                if data.isEmpty { return }
            }
            accessUnit(s, data, pts: pts, dts: dts, position: position)
        case .adts, .mpegAudio, .ac3, .latm:
            let startOffset = s.pendingBase + Int64(s.pending.count)
            s.pending += payload
            s.starts.append((startOffset, startOffset + Int64(payload.count), pts, dts, position))
            if s.framing == .latm { cutLOAS(s, flushing: false) } else { cutFrames(s, flushing: false) }
        }
    }

    private func accessUnit(_ s: TSElementaryStream, _ data: [UInt8], pts: Int64, dts: Int64, position: Int64) {
        let units = s.framing == .mpegVideo ? AnnexB.nalUnits(in: data) : []   // H.264 / HEVC: accessUnitFacts
        var key = false
        var sets: [ArraySlice<UInt8>] = []
        var pictures = false
        if s.framing == .mpegVideo {
            // MPEG-1/2 video (ISO/IEC 13818-2 6.2): a picture start code (00) is a picture, an
            // I picture (coding type 1) a key frame; the sequence header (B3) gives the rate.
            for u in units where !u.isEmpty {
                let code = data[u.lowerBound]
                if code == 0x00 && !pictures && u.count >= 3 {
                    pictures = true
                    key = (data[u.lowerBound + 2] >> 3) & 7 == 1
                }
                if code == 0xB3 && u.count >= 5 && s.frameTicks == 0 {
                    let rates: [(Int64, Int64)] = [(0, 1), (24000, 1001), (24, 1), (25, 1), (30000, 1001), (30, 1), (50, 1), (60000, 1001), (60, 1)]
                    let index = Int(data[u.lowerBound + 4] & 0x0F)
                    if index > 0 && index < rates.count { s.frameTicks = Self.clock * rates[index].1 / rates[index].0 }
                    let b = u.lowerBound
                    s.parameters.width = Int(data[b + 1]) << 4 | Int(data[b + 2] >> 4)
                    s.parameters.height = Int(data[b + 2] & 0x0F) << 8 | Int(data[b + 3])
                    // MPEG-2 has a sequence extension (B5, extension id 1); MPEG-1 none (FFmpeg's
                    // parser names the codec by it, whatever the stream type).
                    let mpeg2 = units.contains { $0.count >= 2 && data[$0.lowerBound] == 0xB5 && data[$0.lowerBound + 1] >> 4 == 1 }
                    if !s.parametersKnown {
                        s.parameters.codec = mpeg2 ? "mpeg2video" : "mpeg1video"
                        // FFmpeg's extract_extradata: from the packet's start to the first start
                        // code after the sequence header that is not an extension.
                        if let k = units.firstIndex(where: { $0.lowerBound > b && !$0.isEmpty && data[$0.lowerBound] != 0xB3 && data[$0.lowerBound] != 0xB5 }) {
                            s.parameters.extradata = Array(data[0..<(units[k].lowerBound - 3)])
                        }
                    }
                    s.parametersKnown = true
                }
            }
        }
        if s.framing != .mpegVideo {
            // Once the parameter sets, timing and size are known, only the units up to the first
            // slice are read (its type makes the key frame, as in FFmpeg's parsers).
            let timing = s.frameTicks == 0, size = s.parameters.width == 0
            let facts = AnnexB.accessUnitFacts(data, hevc: s.framing == .hevc, clock: Self.clock, timing: timing, size: size,
                                               firstPicture: s.parametersKnown && s.prefix == nil && !timing && !size)
            key = facts.isKeyframe
            pictures = facts.hasPicture
            sets = facts.parameterSets.map { data[$0] }
            if s.frameTicks == 0, let ticks = facts.frameTicks { s.frameTicks = ticks; s.rateStated = true }
            if s.parameters.width == 0, let size = facts.size { (s.parameters.width, s.parameters.height) = size }
        }
        if var prefix = s.prefix {
            // A PES of parameter sets only: the parser makes it part of the access unit that
            // follows (with the first PES's timestamps and position).
            s.prefix = nil
            prefix.data += data
            prefix.isKeyframe = prefix.isKeyframe || key
            prefix.duration = s.frameTicks
            if !s.parametersKnown && s.framing != .mpegVideo { learnParameterSets(s, prefix.data) }
            if let held = s.held { emit(held) }
            s.held = prefix
            return
        }
        if pictures && !s.parametersKnown && !sets.isEmpty {
            s.parameters.extradata = sets.flatMap { [0, 0, 1] + $0 }
            s.parametersKnown = true
        }
        let p = Packet(trackIndex: s.index, pts: pts, dts: dts, duration: s.frameTicks, isKeyframe: key, position: position,
                       data: data, timeBase: Rational(1, Self.clock))
        guard pictures else { s.prefix = p; return }
        if let held = s.held { emit(held) }
        s.held = p
    }

    /// Opus access units, each behind its control header (0x7FE0 | trim and extension flags,
    /// the size as a run of 0xFF bytes and a last one, the trims, the extension), one packet each
    /// as from FFmpeg's opus parser; the trims are stepped over, as it does.
    private func opusPackets(_ s: TSElementaryStream, _ payload: [UInt8], pts: Int64, dts: Int64, position: Int64) {
        let base = s.pendingBase
        s.starts.append((base, base + Int64(payload.count), pts, dts, position))
        s.parametersKnown = true
        var i = 0
        while i < payload.count {
            guard i + 2 <= payload.count, payload[i] == 0x7F, payload[i + 1] & 0xE0 == 0xE0 else {
                warn("no Opus control header (0x7FE) where an access unit should start on PID \(s.pid); the rest of the PES is skipped",
                     at: position, "PES")
                break
            }
            let flags = payload[i + 1]
            var j = i + 2, size = 0
            while j < payload.count {
                let b = payload[j]
                j += 1
                size += Int(b)
                if b != 0xFF { break }
            }
            if flags & 0x10 != 0 { j += 2 }
            if flags & 0x08 != 0 { j += 2 }
            if flags & 0x04 != 0, j < payload.count { j += 1 + Int(payload[j]) }
            guard j + size <= payload.count, size > 0 else {
                warn("an Opus access unit on PID \(s.pid) says \(size) bytes but the PES holds \(max(0, payload.count - j))", at: position, "PES")
                break
            }
            let unit = Array(payload[j..<(j + size)])
            frame(s, unit, start: base + Int64(i), samples: OpusHead.packetDuration(unit[...]) ?? 0, rate: 48000)
            i = j + size
        }
        s.pendingBase += Int64(payload.count)
    }

    /// The extradata of an H.264 / HEVC access unit: its parameter sets as FFmpeg's
    /// extract_extradata writes them (see ``accessUnit``).
    private func learnParameterSets(_ s: TSElementaryStream, _ data: [UInt8]) {
        let sets = AnnexB.accessUnitFacts(data, hevc: s.framing == .hevc, clock: Self.clock, timing: false, size: false).parameterSets
        if !sets.isEmpty { s.parameters.extradata = AnnexB.extradata(data, sets); s.parametersKnown = true }
    }

    /// A frame header at `i` of `b`: (size in bytes, samples, sample rate, whether it starts
    /// a packet); nil when none is there.
    private func frameHeader(_ s: TSElementaryStream, _ b: [UInt8], _ i: Int) -> (size: Int, samples: Int, rate: Int, independent: Bool)? {
        switch s.framing {
        case .adts:
            guard let h = ADTSHeader(b, at: i) else { return nil }
            return (h.frameLength, h.samplesPerFrame, h.sampleRate, true)
        case .mpegAudio:
            guard let h = MPEGAudioHeader(b, at: i), h.frameSize > 0 else { return nil }
            return (h.frameSize, h.samplesPerFrame, h.sampleRate, true)
        case .ac3:
            guard let h = AC3Header(b, at: i) else { return nil }
            return (h.frameSize, h.samplesPerFrame, h.sampleRate, h.streamType != 1)
        default:
            return nil
        }
    }

    private func learnAudio(_ s: TSElementaryStream, _ b: [UInt8], _ i: Int) {
        guard !s.parametersKnown else { return }
        switch s.framing {
        case .adts:
            guard let h = ADTSHeader(b, at: i) else { return }
            s.parameters.sampleRate = h.sampleRate
            s.parameters.channels = h.channels
            // MediaKit's ADTS convention (as AudioStreamDemuxer's): packets keep their ADTS
            // headers, the tag says so, the AudioSpecificConfig they imply is the extradata;
            // a muxer into MP4 / Matroska strips the headers by it.
            s.parameters.codecTag = "adts"
            s.parameters.extradata = h.audioSpecificConfig
        case .mpegAudio:
            guard let h = MPEGAudioHeader(b, at: i) else { return }
            s.parameters.sampleRate = h.sampleRate
            s.parameters.channels = h.channels
            s.parameters.codec = h.codec
        case .ac3:
            guard let h = AC3Header(b, at: i) else { return }
            s.parameters.sampleRate = h.sampleRate
            s.parameters.channels = h.channels
            s.parameters.codec = h.codec
        default: return
        }
        if let h = frameHeader(s, b, i) { s.audioFrame = (h.samples, h.rate) }
        s.parametersKnown = true
    }

    /// Cuts the whole frames out of the stream's pending bytes (at the end, what is left too).
    /// ADTS and MPEG audio frames come out once whole; an AC-3 / E-AC-3 frame once the next
    /// independent frame's header is there (FFmpeg's ac3 parser waits for it: the dependent
    /// frames and any bytes before it belong to the packet).
    private func cutFrames(_ s: TSElementaryStream, flushing: Bool) {
        dropPending(s, cutFrames(s, s.pending, flushing: flushing))
    }

    /// The work of ``cutFrames(_:flushing:)`` on `b` (the stream's pending bytes): returns how
    /// many of them were used. `b` is a parameter so that no copy of the bytes is held when the
    /// caller removes them (which then needs no copy of its own).
    private func cutFrames(_ s: TSElementaryStream, _ b: [UInt8], flushing: Bool) -> Int {
        var i = 0
        var consumed = 0
        var skipped = 0
        while i < b.count {
            guard let h = frameHeader(s, b, i) else {
                if !flushing && b.count - i < 16 { break }   // perhaps a header the next PES completes
                i += 1
                skipped += 1
                if flushing && i == b.count { consumed = i }
                continue
            }
            var end = i + h.size
            if s.framing == .ac3 {
                var found = false
                while end + 7 <= b.count {
                    if let next = frameHeader(s, b, end) {
                        if next.independent { found = true; break }
                        end += next.size
                    } else {
                        end += 1
                    }
                }
                if !found {
                    guard flushing else { break }
                    end = b.count
                }
            } else if end > b.count {
                guard flushing else { break }
                end = b.count
            }
            if skipped > 0 {
                warn("\(skipped) bytes of PID \(s.pid) are not \(s.parameters.codec) frames; skipped", at: nil, "elementary stream")
                skipped = 0
            }
            learnAudio(s, b, i)
            frame(s, Array(b[i..<end]), start: s.pendingBase + Int64(i), samples: h.samples, rate: h.rate)
            i = end
            consumed = i
        }
        return consumed
    }

    /// Junk with no LOAS sync word kept for the frame that may follow it: 64 KiB (beyond it the
    /// bytes are dropped with a warning, so a stream of no LOAS frames cannot grow without end).
    static let loasJunkLimit = 64 << 10

    /// Cuts LOAS frames (AAC in LATM) as FFmpeg's latm parser does: each packet runs from the
    /// end of the one before to the end of the next frame (its 3-byte sync header and the
    /// length it states), so bytes before a sync word belong to the packet; at the end, a frame
    /// cut short is given as far as it goes, bytes with no sync word are dropped. Each
    /// StreamMuxConfig read sets the frame duration (and, the first, the track's parameters).
    private func cutLOAS(_ s: TSElementaryStream, flushing: Bool) {
        dropPending(s, cutLOAS(s, s.pending, flushing: flushing))
    }

    /// The work of ``cutLOAS(_:flushing:)`` on `b` (the stream's pending bytes, a parameter for
    /// the reason ``cutFrames(_:_:flushing:)`` gives): returns how many of them were used.
    private func cutLOAS(_ s: TSElementaryStream, _ b: [UInt8], flushing: Bool) -> Int {
        var consumed = 0
        while consumed < b.count {
            var at = consumed
            while at + 2 < b.count && !(b[at] == 0x56 && b[at + 1] & 0xE0 == 0xE0) { at += 1 }
            guard let size = LATMMuxConfig.frameSize(b, at: at) else {
                if flushing || b.count - consumed > Self.loasJunkLimit {
                    let keep = flushing ? 0 : 2   // perhaps the start of a sync header
                    warn("\(b.count - consumed - keep) bytes of PID \(s.pid) hold no LOAS sync word (0x2B7); dropped",
                         at: pesPosition(s, s.pendingBase + Int64(consumed)), "elementary stream")
                    consumed = b.count - keep
                }
                break
            }
            var end = at + size
            if end > b.count {
                guard flushing else { break }
                warn("the last LOAS frame of PID \(s.pid) is cut short (\(b.count - at) of \(size) bytes)",
                     at: pesPosition(s, s.pendingBase + Int64(at)), "elementary stream")
                end = b.count
            } else if size > 3, b[at + 3] & 0x80 == 0, let config = LATMMuxConfig(loasFrame: b, at: at, size: size) {
                s.audioFrame = (config.samplesPerFrame, config.config.sampleRate)
                if !s.parametersKnown {
                    s.parameters.sampleRate = config.config.outputSampleRate
                    s.parameters.channels = config.config.outputChannels
                    s.parameters.extradata = config.audioSpecificConfig
                    s.parametersKnown = true
                }
            }
            frame(s, Array(b[consumed..<end]), start: s.pendingBase + Int64(consumed), samples: s.audioFrame.samples, rate: s.audioFrame.rate)
            consumed = end
        }
        return consumed
    }

    /// Removes the first `consumed` pending bytes of `s`, which have been cut into packets.
    private func dropPending(_ s: TSElementaryStream, _ consumed: Int) {
        guard consumed > 0 else { return }
        s.pending.removeFirst(consumed)
        s.pendingBase += Int64(consumed)
    }

    /// The offset in the file of the transport packet that began the PES holding the stream's
    /// byte `offset` (nil when it is not known any more).
    private func pesPosition(_ s: TSElementaryStream, _ offset: Int64) -> Int64? {
        s.starts.last(where: { $0.offset <= offset && offset < $0.end })?.position
    }

    /// One audio frame of the stream that begins at `start` (offset in the stream's bytes),
    /// timestamped as FFmpeg's parser does (`fetch_timestamp`, then `compute_pkt_fields`).
    private func frame(_ s: TSElementaryStream, _ data: [UInt8], start: Int64, samples: Int, rate: Int) {
        var pts = Packet.noTimestamp, dts = Packet.noTimestamp, position: Int64 = -1
        if let k = s.starts.lastIndex(where: { $0.offset <= start && start < $0.end }) {
            let e = s.starts[k]
            if e.offset > s.previousFrameStart || s.previousFrameStart < 0 { pts = e.pts; dts = e.dts; position = e.position }
            s.starts.removeFirst(k)
        }
        s.previousFrameStart = start
        if pts == Packet.noTimestamp { pts = dts }
        if pts == Packet.noTimestamp { pts = s.nextTimestamp }
        let duration = rate > 0 ? Int64(samples) * Self.clock / Int64(rate) : 0
        if pts != Packet.noTimestamp && rate > 0 {
            // AAC's rate is not known to FFmpeg's parser, so its cur_dts moves by the exact
            // 1024 / rate s (av_add_stable); the others' by the rounded-down duration.
            s.nextTimestamp = s.framing == .adts || s.framing == .latm ? Self.addStable(pts, samples: Int64(samples), rate: Int64(rate)) : pts + duration
        }
        emit(Packet(trackIndex: s.index, pts: pts, dts: pts, duration: duration, isKeyframe: true, position: position,
                    data: data, timeBase: Rational(1, Self.clock)))
    }

    /// FFmpeg's `av_add_stable(1/90000, ts, samples/rate, 1)`: `ts` plus one frame, on the
    /// frame grid, so that the rounding does not drift.
    static func addStable(_ ts: Int64, samples: Int64, rate: Int64) -> Int64 {
        // m / d = ticks per frame.
        let m = samples * clock, d = rate
        if m % d == 0 { return ts + m / d }
        func rescale(_ a: Int64, _ b: Int64, _ c: Int64) -> Int64 {
            // a * b / c rounded to nearest, halves away from zero (av_rescale_rnd NEAR_INF).
            let (hi, lo) = a.magnitude.multipliedFullWidth(by: b.magnitude)
            let (q, r) = c.magnitude.dividingFullWidth((hi, lo))
            let up = r * 2 >= c.magnitude ? q + 1 : q
            return a < 0 ? -Int64(up) : Int64(up)
        }
        let old = rescale(ts, d, m)           // ts in frames
        let oldTS = rescale(old, m, d)        // back in ticks
        return rescale(old + 1, m, d) + (ts - oldTS)
    }

    private func flushFraming(_ s: TSElementaryStream) {
        switch s.framing {
        case .h264, .hevc, .mpegVideo:
            if let held = s.held { emit(held); s.held = nil }
            if let prefix = s.prefix { emit(prefix); s.prefix = nil }
        case .adts, .mpegAudio, .ac3:
            if !s.pending.isEmpty { cutFrames(s, flushing: true) }
        case .latm:
            if !s.pending.isEmpty { cutLOAS(s, flushing: true) }
        case .dts:
            if let held = s.held { emit(held); s.held = nil }
        case .whole, .opus, .dvbSubtitle, .pgs, .timedID3:
            break
        }
    }
}
