/// The part of a track's media timeline that is presented, from its edit list.
///
/// MediaKit applies edit lists the way FFmpeg does: empty edits only shift the
/// timeline (no frames or silence are made up); the first non-empty edit
/// selects media from its media time for its duration. Video frames whose
/// presentation time falls outside that window are decoded (they may be
/// references) but not output; audio is cut to the sample at the window's
/// start (AAC priming disappears this way) and whole frames starting at or
/// after its end are dropped.
public struct PresentationWindow: Sendable, Equatable {
    /// First presented media time, in the track's time base.
    public var start: Int64
    /// End of the presented media (exclusive), in the track's time base; nil for "to the end".
    public var end: Int64?

    /// Everything: no trimming.
    public static let everything = PresentationWindow(start: .min, end: nil)

    /// Creates a window.
    public init(start: Int64, end: Int64?) {
        self.start = start
        self.end = end
    }

    /// The window of `track`'s edit list (``everything`` when it has none).
    public init(track: Track) {
        guard let edit = track.editList.first(where: { !$0.isEmpty }), edit.mediaTime >= 0 else {
            self = .everything
            return
        }
        start = edit.mediaTime
        // Values no demuxer gives (a caller's hostile Track) saturate instead of trapping.
        let (scale, overflow) = track.movieTimeScale.multipliedReportingOverflow(by: track.timeBase.numerator)
        if edit.segmentDuration > 0 && track.movieTimeScale > 0 && !overflow && scale > 0 {
            let d = Rational.rescale(edit.segmentDuration, multiply: track.timeBase.denominator, divide: scale)
            let (sum, past) = start.addingReportingOverflow(d)
            var e = past ? Int64.max : sum
            // The edit's duration is in the movie time scale (often 1/1000 s), so it can
            // miss the media's true end by the rounding: within one movie tick, the media's
            // own end (the sum of its sample durations) is the exact one.
            let tick = Rational.rescale(1, multiply: track.timeBase.denominator, divide: scale)
            let (gap, wide) = e.subtractingReportingOverflow(track.duration)
            if track.duration > 0 && !wide && gap.magnitude <= max(1, tick).magnitude { e = track.duration }
            end = e
        } else {
            end = nil
        }
    }

    /// True when a frame at `pts` is presented.
    public func contains(_ pts: Int64) -> Bool {
        pts >= start && (end.map { pts < $0 } ?? true)
    }
}

extension Track {
    /// Ticks of ``timeBase`` that place a media timestamp on the presentation timeline, as
    /// FFmpeg's MP4 demuxer gives its timestamps: a first empty edit's duration (the
    /// presentation starts later) minus the media time where the first media edit starts
    /// (``PresentationWindow/start``); 0 without an edit list. `pts + presentationOffset` is
    /// the timestamp `ffprobe -show_frames` (and `ffmpeg -copyts`) shows for a frame at `pts`.
    public var presentationOffset: Int64 {
        let window = PresentationWindow(track: self)
        let start = window.start == PresentationWindow.everything.start ? 0 : window.start
        var empty: Int64 = 0
        let (scale, overflow) = movieTimeScale.multipliedReportingOverflow(by: timeBase.numerator)
        if let first = editList.first, first.isEmpty, movieTimeScale > 0, !overflow {
            empty = Rational.rescale(first.segmentDuration, multiply: timeBase.denominator, divide: scale)
        }
        let (offset, past) = empty.subtractingReportingOverflow(start)
        return past ? (start > 0 ? .min : .max) : offset
    }
}
