/// Frame-accurate access: the frame presented at a time or at an index, one at a time or in
/// a batch that decodes each group of pictures (GOP) at most once.
///
/// These read the track's packets from `demuxer` themselves (``Demuxer/read(track:)``, after
/// a ``Demuxer/seek(to:)``), so they leave the demuxer and the session positioned after the
/// last frame returned: to decode on from somewhere else, seek both again
/// (``DecodeSession/seek(to:)``).
///
/// "The frame presented at `t`" is the one `ffmpeg -ss t -i IN -frames:v 1` outputs: the first
/// frame whose presentation time, rounded to the track's time base, is at or after `t` (0 is
/// the track's first presented frame); for audio, the decoded frame cut to start at the exact
/// sample (as ``DecodeSession/seek(to:)`` cuts it). A time after the last frame gives nil.
///
/// ```swift
/// let demuxer = try MediaRegistry.shared.makeDemuxer(path: path)
/// let session = try DecodeSession(track: demuxer.tracks[0])
/// let thumbnails = try session.frames(at: [12.5, 3.0, 40.25], from: demuxer)   // caller's order
/// let tenth = try session.frame(at: 9, from: demuxer)                          // by index
/// ```
extension DecodeSession {
    /// Between two targets further apart than this (seconds), the demuxer seeks; closer, the
    /// packets in between are read (not decoded, unless a target needs them), which costs
    /// less than a seek that may land on a key frame already passed.
    public static let forwardReadLimit = 30.0

    /// The frame presented at `seconds` (see the extension's notes), or nil when the track
    /// ends before it.
    /// - Throws: `.invalidArgument` for a negative or non-finite time; the demuxer's and the
    ///   decoder's errors (a recoverable decoder error is recovered from as in decoding).
    public func frame(atTime seconds: Double, from demuxer: Demuxer) throws -> Frame? {
        try frames(at: [seconds], from: demuxer)[0]
    }

    /// The frames presented at `times`, in the order given (a time after the track's end
    /// gives nil). The times are sorted internally and the track decoded forward once:
    /// video from the key frame at or before each target, each GOP decoded at most once,
    /// and the GOPs between targets read but not decoded; audio from the pre-roll
    /// (``DecodeSession/seekPreroll``) before each target. Inside a GOP, H.264 and HEVC
    /// pictures presented before a target that no other picture refers to (B-frames outside
    /// a pyramid's references) are not decoded either (as after ``DecodeSession/seek(to:)``).
    /// - Throws: as ``frame(atTime:from:)``.
    public func frames(at times: [Double], from demuxer: Demuxer) throws -> [Frame?] {
        for t in times where !t.isFinite || t < 0 {
            throw MediaError(.invalidArgument, "cannot seek to \(t) s", context: "track \(track.index) decode session")
        }
        return try frames(atTicks: times.map { presentationTicks(seconds: $0) }, from: demuxer)
    }

    /// The frame at `index` of the track's presented frames in presentation order (0 is the
    /// first presented: after the edit list, as ffmpeg's `select=eq(n\,index)` counts; in a
    /// video stream cut before its first key frame, from that key frame on).
    /// The first call reads the track's packet times once (no decoding) and keeps them.
    /// - Throws: `.invalidArgument` for an index outside the track's frames (naming their
    ///   count); the demuxer's and the decoder's errors.
    public func frame(at index: Int, from demuxer: Demuxer) throws -> Frame {
        guard let frame = try frames(atIndices: [index], from: demuxer)[0] else {
            throw MediaError(.invalidData, "frame \(index) is listed by the container but the decoder gave none at its time",
                             context: "track \(track.index) decode session")
        }
        return frame
    }

    /// The frames at `indices` (see ``frame(at:from:)``), in the order given, decoding each
    /// GOP at most once (as ``frames(at:from:)``). A frame the decoder does not output
    /// (damaged data) is nil.
    /// - Throws: as ``frame(at:from:)``.
    public func frames(atIndices indices: [Int], from demuxer: Demuxer) throws -> [Frame?] {
        var results = [Frame?](repeating: nil, count: indices.count)
        try frames(atIndices: indices, from: demuxer) { results[$0] = $1 }
        return results
    }

    /// The frames at `indices` (see ``frame(at:from:)``) handed to `deliver` one at a time, with
    /// the position in `indices` each answers: in presentation order (not the order given; a
    /// duplicate index is delivered once per position), each GOP decoded at most once, so that
    /// only the frames between two deliveries are held (memory flat in the number of indices).
    /// A frame the decoder does not output (damaged data) is delivered as nil.
    ///
    /// With `resuming`, a batch whose first frame comes after the last frame of the previous
    /// batch (on the same demuxer, one that ran to its end) decodes on from where that one
    /// stopped instead of seeking, when nothing else used the session in between
    /// (``send(_:)``, ``receiveOutput()``, ``flush()``, ``reset()``, ``seek(to:)`` and the
    /// rest each end the resumption) and the frame is at most ``forwardReadLimit`` seconds
    /// later: so a file read in consecutive batches (`[0, 32)`, `[32, 64)` ...) decodes each
    /// frame once, as one batch of them all would. The caller vouches that the demuxer was
    /// not moved in between (neither read nor seeked); else pass false (the default), and
    /// every batch starts with a seek.
    /// - Throws: as ``frame(at:from:)``, and what `deliver` throws (which stops the batch).
    public func frames(atIndices indices: [Int], from demuxer: Demuxer, resuming: Bool = false,
                       deliver: (Int, Frame?) throws -> Void) throws {
        let times = try presentationTimes(from: demuxer)
        for i in indices where i < 0 || i >= times.count {
            throw MediaError(.invalidArgument, "frame index \(i) is out of range: the track presents \(times.count) frames",
                             context: "track \(track.index) decode session")
        }
        // Each index asks for the frame presented exactly at its time: the next one is later.
        try frames(atTicks: indices.map { times[$0] }, from: demuxer, resuming: resuming) { position, frame in
            try deliver(position, frame.flatMap { $0.pts == times[indices[position]] ? $0 : nil })
        }
    }

    /// The track's presented frames, as ``frame(at:from:)`` counts them: their media times
    /// (track time base) in presentation order, and the indices among them of the key frames
    /// (the container's sync samples). The first call reads them, then they are kept: from
    /// the sample table where the container has one (the demuxer does not move), else by
    /// reading the track's packets without decoding them (the demuxer is left at the end).
    /// - Throws: the demuxer's errors.
    public func presentedFrames(from demuxer: Demuxer) throws -> (times: [Int64], keyFrames: [Int]) {
        let times = try presentationTimes(from: demuxer)
        return (times, presentedKeyIndices)
    }

    /// How many of the track's first packets ``estimatedFrames(from:)`` reads for the first
    /// time and the frame duration.
    static let estimateHeadPackets = 64

    /// The track's presented frames as a constant rate would place them, estimated without
    /// reading every packet (``presentedFrames(from:)`` reads them all where the container has
    /// no sample table: MPEG-TS, Matroska ...): the first presented time and the frame duration
    /// from the track's first ``estimateHeadPackets`` packets (the duration of one frame at the
    /// container's frame rate where it states one, else the median step between their times),
    /// the end from the packets after the last key frame (a seek past the end: on MPEG-TS a
    /// bisection of the file, on Matroska the last Cue's Clusters; formats without an index
    /// read their packets to get there), `end` the last time found plus one frame and `count`
    /// the frames of that duration between `first` and `end`. On a constant-rate track that is
    /// the exact list's first time and count. Where the list is known or cheap (a sample
    /// table), where the head reaches the track's end, or where no frame duration comes out,
    /// it is the exact list's (`end`: its last time plus the frame duration). The demuxer is
    /// left anywhere: seek before decoding on.
    /// - Throws: the demuxer's errors.
    public func estimatedFrames(from demuxer: Demuxer) throws -> (first: Int64, end: Int64, count: Int) {
        if presentedTimes == nil, !(demuxer is SampleTableDemuxer) {
            frameBatchResume = nil   // the demuxer moves
            try demuxer.seek(to: 0)
            var head: [Int64] = []
            var ended = false
            var presented = PresentedFrameFilter(track: track, window: window)
            for _ in 0..<Self.estimateHeadPackets {
                guard let p = try readToCut(demuxer) else { ended = true; break }
                if let t = presented.time(of: p) { head.append(t) }
            }
            head.sort()
            // Packets without timestamps give the end no time: the exact list counts them.
            if !ended, !presented.isUntimed, let step = frameTicks(head), let first = head.first, var last = head.last {
                try demuxer.seek(to: Self.pastTheEnd)
                var tail = 0
                while let p = try readToCut(demuxer) {
                    if p.pts != Packet.noTimestamp && window.contains(p.pts) { last = max(last, p.pts) }
                    tail += 1
                }
                if tail > 0 {
                    let end = last + Int64(step.rounded())
                    return (first, end, max(head.count, Int((Double(end - first) / step).rounded())))
                }
            }
        }
        let times = try presentationTimes(from: demuxer)
        guard let first = times.first, let last = times.last else { return (0, 0, 0) }
        let step = frameTicks(times) ?? 1
        return (first, last + Int64(step.rounded()), times.count)
    }

    /// A time past any track's end, for ``estimatedFrames(from:)``'s seek: 10^7 s (116 days).
    static let pastTheEnd = 1e7

    /// One frame's duration in track ticks: the container's frame rate's, else the median step
    /// between the rising `times`; nil when neither gives one.
    private func frameTicks(_ times: [Int64]) -> Double? {
        let rate = track.frameRate.doubleValue, tb = track.timeBase.doubleValue
        if rate > 0 && rate.isFinite && tb > 0 { return 1 / (rate * tb) }
        var steps: [Int64] = []
        for i in times.indices.dropFirst() where times[i] > times[i - 1] { steps.append(times[i] - times[i - 1]) }
        guard !steps.isEmpty else { return nil }
        steps.sort()
        return Double(steps[steps.count / 2])
    }

    /// The track's next packet, nil at its end or where the file is cut.
    func readToCut(_ demuxer: Demuxer) throws -> Packet? {
        do {
            return try demuxer.read(track: track.index)
        } catch let e as MediaError where e.kind == .truncated {
            return nil
        }
    }

    /// Gives the session the list ``presentedFrames(from:)`` returned earlier for the same
    /// track of the same file (kept by the caller, e.g. in a cache beside a file without a
    /// sample table, where making the list reads every packet): later calls by index use it
    /// and read nothing to make it. The caller vouches that it is that file's list; what can
    /// be checked is: the times rise strictly and lie in the track's presentation window (its
    /// edit list), the key frames are indices of them in rising order.
    /// - Throws: `.invalidArgument` naming the first entry that breaks one of those rules.
    public func usePresentedFrames(times: [Int64], keyFrames: [Int]) throws {
        let context = "track \(track.index) decode session"
        for (i, t) in times.enumerated() {
            guard window.contains(t) else {
                throw MediaError(.invalidArgument, "frame \(i)'s time \(t) is outside the track's presentation window", context: context)
            }
            guard i == 0 || times[i - 1] < t else {
                throw MediaError(.invalidArgument, "frame \(i)'s time \(t) does not follow frame \(i - 1)'s (\(times[i - 1]))", context: context)
            }
        }
        for (k, i) in keyFrames.enumerated() {
            guard i >= 0, i < times.count, k == 0 || keyFrames[k - 1] < i else {
                throw MediaError(.invalidArgument, "key frame index \(i) is not a frame index above the previous one (of \(times.count) frames)",
                                 context: context)
            }
        }
        presentedTimes = times
        presentedKeyIndices = keyFrames
        untimedKeyTimes = [:]
        frameBatchResume = nil
    }

    /// The media times (track time base) of the presented frames, in presentation order:
    /// the packets' times inside the presentation window, from the first key frame in decoding
    /// order on (video: the pictures before it refer to pictures the file does not hold, and
    /// the decoder gives no frame for them, as ffmpeg's gives none). Read once, then kept.
    func presentationTimes(from demuxer: Demuxer) throws -> [Int64] {
        if let known = presentedTimes { return known }
        var times: [Int64] = [], keys: Set<Int64> = []
        var presented = PresentedFrameFilter(track: track, window: window)
        // Untimed packets (raw streams), aligned with `times`: key frames' positions, and
        // HEVC pictures' places against the key frame before them.
        var untimed: [(keyPosition: Int64?, place: LeadingPictures.Place)] = []
        var leading = LeadingPictures(codec: track.parameters.codec)
        if let table = demuxer as? SampleTableDemuxer {
            // The sample table has them: no sample data is read.
            var i = 0
            while let s = table.sampleInfo(track: track.index, index: i) {
                if let t = presented.time(pts: s.pts, isKeyframe: s.isKeyframe, duration: 0) {
                    times.append(t)
                    if s.isKeyframe { keys.insert(t) }
                }
                i += 1
            }
        } else {
            frameBatchResume = nil   // the demuxer moves: no batch goes on from where it stood
            try demuxer.seek(to: 0)
            while let packet = try readToCut(demuxer) {   // a file cut short: the frames before the cut
                if let t = presented.time(of: packet) {
                    times.append(t)
                    if presented.isUntimed {
                        let picture = leading.next(packet.data, isKeyframe: packet.isKeyframe)
                        untimed.append((picture.start ? packet.position : nil, picture.place))
                    } else if packet.isKeyframe {
                        keys.insert(t)
                    }
                }
            }
        }
        untimedKeyTimes = [:]
        if !untimed.isEmpty {
            // Counted in decoding order (one frame per packet at the packets' rate, rising), so
            // the times are also those of presentation order. The key frames listed are those
            // whose place in presentation order is known (``LeadingPictures``). A key frame
            // followed by L leading pictures is presented L frames after its place in decoding
            // order; decoding that starts at it drops the skipped ones, which are presented
            // before the decodable ones (H.265 7.4.2.2, the constraints on leading pictures;
            // H.264's are all skipped), so the first frame it outputs is presented at its place
            // plus L minus the decodable count.
            for (d, u) in untimed.enumerated() {
                guard let position = u.keyPosition else { continue }
                var end = d + 1, decodable = 0
                while end < untimed.count && untimed[end].place != .trailing {
                    if untimed[end].place == .decodableLeading { decodable += 1 }
                    end += 1
                }
                let leading = end - d - 1
                keys.insert(times[d + leading])
                untimedKeyTimes[position] = times[d + leading - decodable]
            }
        }
        times.sort()
        var unique: [Int64] = []
        unique.reserveCapacity(times.count)
        for t in times where unique.last != t { unique.append(t) }
        presentedTimes = unique
        presentedKeyIndices = unique.indices.filter { keys.contains(unique[$0]) }
        return unique
    }

    /// Presentation seconds of media time `ticks` (the inverse of ``presentationTicks(seconds:)``).
    private func presentationSeconds(ticks: Int64) -> Double {
        Double(ticks - presentationBase) * track.timeBase.doubleValue
    }

    /// The first presented frame at or after each media time in `targets` (track time base),
    /// in the order given.
    func frames(atTicks targets: [Int64], from demuxer: Demuxer) throws -> [Frame?] {
        var results = [Frame?](repeating: nil, count: targets.count)
        try frames(atTicks: targets, from: demuxer) { results[$0] = $1 }
        return results
    }

    /// The first presented frame at or after each media time in `targets` (the track's time
    /// base, as packets' and frames' pts), handed to `deliver` with its position in `targets`,
    /// in the order of the times (the earliest first; a time after the track's end gives nil).
    /// As ``frames(at:from:)``, each GOP is decoded at most once; unlike the calls by index it
    /// needs no list of the frames (no read of every packet on files without a sample table):
    /// with ``estimatedFrames(from:)`` it finds frames by their nominal times.
    /// `resuming`: see ``frames(atIndices:from:resuming:deliver:)`` (video only).
    /// - Throws: as ``frames(at:from:)``, and what `deliver` throws (which stops the batch).
    public func frames(atTicks targets: [Int64], from demuxer: Demuxer, resuming: Bool = false,
                       deliver: (Int, Frame?) throws -> Void) throws {
        let order = targets.indices.sorted { targets[$0] < targets[$1] }
        // Taken whatever comes next: a batch that fails or does not resume leaves none.
        let resume = frameBatchResume
        frameBatchResume = nil
        if track.mediaType == .audio {
            // Every audio packet is a sync point: each target is a seek with its pre-roll.
            for i in order {
                let seconds = presentationSeconds(ticks: targets[i])
                try demuxer.seek(to: max(0, seconds - Self.seekPreroll))
                try seek(to: seconds)
                var cursor = ForwardCursor()
                try deliver(i, try cursor.next(atOrAfter: targets[i], session: self, demuxer: demuxer))
            }
            return
        }
        var cursor = ForwardCursor()
        var last: Int64?
        if resuming, let resume, resume.demuxer === demuxer, let first = order.first, targets[first] > resume.last {
            // Decoding goes on from the previous batch's last frame (the loop seeks when the
            // first target is further than forwardReadLimit).
            cursor = resume.cursor
            last = resume.last
        }
        for i in order {
            let target = targets[i]
            if last.map({ presentationSeconds(ticks: target) - presentationSeconds(ticks: $0) > Self.forwardReadLimit }) ?? true {
                let seconds = presentationSeconds(ticks: target)
                try demuxer.seekForDecoding(to: seconds)
                try seek(to: seconds)
                seekFloor = target   // exactly, whatever the round trip through seconds gave
                cursor = ForwardCursor()
            }
            try deliver(i, try cursor.next(atOrAfter: target, session: self, demuxer: demuxer))
            last = target
        }
        if let last {
            frameBatchResume = FrameBatchResume(cursor: cursor, last: last, demuxer: demuxer)
        }
    }
}

/// Which packets (or samples), taken in decoding order, are the track's presented frames, and
/// their times: the rule of ``DecodeSession/presentationTimes(from:)``, shared by the frame
/// list, its estimate and the sample-table read. Video counts from the first key frame on (the
/// pictures before it refer to pictures the file does not hold: the decoder gives no frame
/// for them, as ffmpeg's gives none); a frame counts with its time inside the presentation
/// window. Video whose first counted packet has no timestamp (raw H.264 / HEVC streams) is
/// timed as ffmpeg's tool times it: one frame per packet, at the packets' duration from 0.
struct PresentedFrameFilter {
    private var keySeen: Bool
    private let window: PresentationWindow
    private let isVideo: Bool
    /// The time of the next packet of an untimed track; nil while the track is timed (or
    /// before its first counted packet).
    private var clock: Int64?
    /// The track's packets carry no timestamps: the times are counted.
    var isUntimed: Bool { clock != nil }

    init(track: Track, window: PresentationWindow) {
        isVideo = track.mediaType == .video
        keySeen = !isVideo
        self.window = window
    }

    /// The presented time of the next packet, nil when it is not a presented frame.
    mutating func time(of packet: Packet) -> Int64? {
        time(pts: packet.pts, isKeyframe: packet.isKeyframe, duration: packet.duration)
    }

    /// The presented time of the next packet or sample (`duration`: its duration in the track
    /// time base, for untimed tracks), nil when it is not a presented frame.
    mutating func time(pts: Int64, isKeyframe: Bool, duration: Int64) -> Int64? {
        if isVideo && !keySeen && isKeyframe {
            keySeen = true
            if pts == Packet.noTimestamp { clock = 0 }
        }
        guard keySeen else { return nil }
        if let t = clock {
            clock = t + max(1, duration)
            return t
        }
        return pts != Packet.noTimestamp && window.contains(pts) ? pts : nil
    }
}

/// Where a batch of ``DecodeSession/frames(atIndices:from:resuming:deliver:)`` stopped: its
/// cursor (the frames received after its last target, the packets read and not yet sent), its
/// last target and the demuxer it read (held weakly: a demuxer freed since is never taken for
/// a new one at the same address).
struct FrameBatchResume {
    var cursor: ForwardCursor
    var last: Int64
    weak var demuxer: Demuxer?
}

/// Decodes one track forward from where the demuxer stands, for ``DecodeSession/frames(atTicks:from:)``:
/// hands out the first presented frame at or after each (rising) target, keeping the frames
/// already received for the next target, and skipping (reading, not decoding) the GOPs that
/// end before a target.
struct ForwardCursor {
    /// Frames received and not yet handed out, in presentation order.
    var received: [Frame] = []
    /// Packets read but not sent yet: the current GOP's, kept until it is known whether the
    /// next target needs them (a later key frame at or before the target makes them useless).
    var pending: [Packet] = []
    var pendingBytes = 0
    /// Indices in `pending` of its key frames presented at or before the target, oldest first
    /// (at most the last two are kept: see ``trimPending(_:_:)``).
    var pendingKeys: [Int] = []
    /// A packet was sent to the decoder since the last reset.
    var sent = false
    /// The session was flushed at the end of the track: no more frames after `received`.
    var ended = false
    static let pendingLimit = (packets: 600, bytes: 64 << 20)

    /// The first presented frame at or after `target` (video; audio: the next frame, which the
    /// session cut at the sample it was seeked to).
    mutating func next(atOrAfter target: Int64, session: DecodeSession, demuxer: Demuxer) throws -> Frame? {
        let isVideo = session.track.mediaType == .video
        if isVideo {
            // Later targets are decoded on from here: frames before the new one are not wanted.
            if !ended && (session.seekFloor ?? .min) < target { session.seekFloor = target }
            received.removeAll { $0.pts < target }
        }
        if let f = received.first { return f }
        while !ended {
            guard let packet = try session.readToCut(demuxer) else {
                // The end: pending packets all presented before the target give nothing wanted.
                if isVideo && pending.allSatisfy({ $0.pts != Packet.noTimestamp && $0.pts < target }) {
                    pending = []
                    pendingBytes = 0
                    pendingKeys = []
                }
                try sendPending(session, target)
                let video = isVideo
                try session.finish { if !video || $0.pts >= target { received.append($0) } }
                ended = true
                break
            }
            if isVideo && (packet.pts == Packet.noTimestamp || packet.pts <= target)
                && pending.count < Self.pendingLimit.packets && pendingBytes + packet.size <= Self.pendingLimit.bytes {
                // Maybe not needed: a later key frame at or before the target may still come.
                if packet.isKeyframe && packet.pts != Packet.noTimestamp {
                    pendingKeys.append(pending.count)
                    // Never more than the GOP before the newest key frame is needed.
                    if pendingKeys.count > 2 { dropPending(before: pendingKeys[pendingKeys.count - 2], session, target) }
                }
                pending.append(packet)
                pendingBytes += packet.size
                continue
            }
            try sendPending(session, target)
            try send(packet, session, target)
            if let f = received.first { return f }
        }
        return received.first
    }

    private mutating func sendPending(_ session: DecodeSession, _ target: Int64) throws {
        trimPending(session, target)
        let packets = pending
        pending = []
        pendingBytes = 0
        pendingKeys = []
        for p in packets { try send(p, session, target) }
    }

    /// Before the pending packets are decoded: decoding can start at the newest pending key
    /// frame at or before the target, so what comes before it (and what the decoder holds) is
    /// not needed, unless that key frame opens a GOP with leading pictures (a picture after it
    /// in decoding order presented before it: an open GOP, whose pictures may refer to the GOP
    /// before), the rule of `Demuxer.seekForDecoding`: then decoding starts one key frame
    /// earlier, as the demuxer's seek did.
    private mutating func trimPending(_ session: DecodeSession, _ target: Int64) {
        guard let newest = pendingKeys.last else { return }
        let keyPts = pending[newest].pts
        let leading = pending[(newest + 1)...].contains { $0.pts != Packet.noTimestamp && $0.pts < keyPts }
        if !leading {
            dropPending(before: newest, session, target)
        } else if pendingKeys.count >= 2 {
            dropPending(before: pendingKeys[pendingKeys.count - 2], session, target)
        }
        // Else the GOP before is already in the decoder, or pending starts where the demuxer's
        // seek put it: keep everything.
    }

    /// Forgets the pending packets before index `start` (a key frame), and restarts the decoder
    /// when it was fed before them: decoding then starts at that key frame.
    private mutating func dropPending(before start: Int, _ session: DecodeSession, _ target: Int64) {
        if start > 0 {
            pendingBytes -= pending[..<start].reduce(0) { $0 + $1.size }
            pending.removeFirst(start)
            pendingKeys = pendingKeys.compactMap { $0 >= start ? $0 - start : nil }
        }
        if sent {
            received = []
            session.reset()
            session.seekFloor = target
            sent = false
        }
    }

    private mutating func send(_ packet: Packet, _ session: DecodeSession, _ target: Int64) throws {
        sent = true
        let video = session.track.mediaType == .video
        try session.decode(packet) { if !video || $0.pts >= target { received.append($0) } }
    }
}
