import Foundation

/// Where one H.264 / HEVC access unit ends in an Annex B byte stream, found as FFmpeg's
/// h264 and hevc parsers find it (`h264_find_frame_end`, `hevc_find_frame_end` of FFmpeg
/// 5.1), so that the units cut from a raw `.h264` / `.hevc` stream are byte for byte the
/// packets ffprobe lists:
///
/// - H.264: a unit ends before an SEI, SPS, PPS or access unit delimiter (NAL types 6-9), or
///   before a slice (types 1, 2, 5) whose first_mb_in_slice is not above the previous
///   slice's, once the unit holds a slice. The cut is at the start code, a 4-byte start
///   code included whole (longer runs of zeros leave the extra zeros behind).
/// - HEVC: a unit ends before a VPS, SPS, PPS, AUD, EOS, EOB, prefix SEI or NAL types 41-44
///   and 48-55, or before a slice (types 0-9, 16-21) with first_slice_segment_in_pic_flag
///   set, once the unit holds such a slice. The cut is at the 3-byte start code: the first
///   zero of a 4-byte start code stays in the unit before.
///
/// The scanner is fed the stream's bytes in order, in pieces of any size; after a cut the
/// caller rescans from the cut with ``restart()`` (what FFmpeg's parser does with the bytes
/// after a frame end).
struct AnnexBFrameSplitter {
    /// The codec whose rules apply.
    let hevc: Bool
    // H.264: FFmpeg's `state` (7: looking for a zero; 2..0: zeros seen; 4/5: a start code of
    // 3 / 4 bytes seen, the next byte is a NAL header; 12/13: reading first_mb_in_slice).
    private var state: UInt32 = 0
    private var frameStartFound = false
    private var history: [UInt8] = []
    private var lastMB: UInt64 = 0
    // HEVC: the last 8 bytes seen.
    private var state64: UInt64 = 0

    /// A splitter at the start of a stream.
    init(hevc: Bool) { self.hevc = hevc }

    /// After a cut: look for the next unit's end from the cut on (FFmpeg resets its state
    /// to 7 and forgets the frame start; the HEVC byte window carries on).
    mutating func restart() {
        state = 7
        frameStartFound = false
        history.removeAll(keepingCapacity: true)
    }

    /// Scans `bytes[from..<bytes.count]` (continuing from the bytes fed before); returns the
    /// index of `bytes` where the current unit ends (it may be below `from`, at most 5 bytes
    /// plus the slice header bytes looked at) and the index after the byte that told, or nil
    /// when the unit does not end in these bytes.
    mutating func scan(_ bytes: UnsafeBufferPointer<UInt8>, from: Int) -> (cut: Int, resume: Int)? {
        hevc ? scanHEVC(bytes, from: from) : scanH264(bytes, from: from)
    }

    private mutating func scanH264(_ buf: UnsafeBufferPointer<UInt8>, from: Int) -> (cut: Int, resume: Int)? {
        if state > 13 { state = 7 }
        var i = from
        let n = buf.count
        while i < n {
            if state == 7 {
                // FFmpeg's startcode_find_candidate: the next zero byte.
                guard let hit = memchr(buf.baseAddress! + i, 0, n - i) else { return nil }
                i = buf.baseAddress!.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                state = 2
            } else if state <= 2 {
                let b = buf[i]
                if b == 1 { state ^= 5 } else if b != 0 { state = 7 } else { state >>= 1 }
            } else if state <= 5 {
                let type = buf[i] & 0x1F
                if type == 6 || type == 7 || type == 8 || type == 9 {
                    if frameStartFound {
                        let cut = i + 1 - Int(state & 5)
                        state = 7
                        frameStartFound = false
                        return (cut, i + 1)
                    }
                } else if type == 1 || type == 2 || type == 5 {
                    state += 8
                    i += 1
                    continue
                }
                state = 7
            } else {
                history.append(buf[i])
                if let mb = Self.firstMB(history) {
                    let last = lastMB
                    lastMB = mb
                    if frameStartFound && mb <= last {
                        let cut = i - (history.count - 1) - Int(state & 5)
                        history.removeAll(keepingCapacity: true)
                        state = 7
                        frameStartFound = false
                        return (cut, i + 1)
                    }
                    frameStartFound = true
                    history.removeAll(keepingCapacity: true)
                    state = 7
                }
            }
            i += 1
        }
        return nil
    }

    /// first_mb_in_slice (ue(v)) from the slice header's first bytes, once they hold it with
    /// a bit to spare (FFmpeg's `get_bits_left(&gb) > 0`), or after 6 bytes whatever they give.
    private static func firstMB(_ h: [UInt8]) -> UInt64? {
        var value: UInt64 = 0
        for b in h { value = value << 8 | UInt64(b) }
        let bits = h.count * 8
        // FFmpeg reads 32 bits (zero-padded) and counts the leading zeros.
        let window = h.count >= 4 ? UInt32(truncatingIfNeeded: value >> UInt64(bits - 32)) : UInt32(truncatingIfNeeded: value << UInt64(32 - bits))
        let zeros = window == 0 ? 32 : window.leadingZeroBitCount
        let used = 2 * zeros + 1
        if used < bits {
            let shifted = value >> UInt64(bits - used)
            return (shifted & ((1 << UInt64(zeros + 1)) - 1)) &- 1
        }
        if h.count > 5 { return zeros >= 32 ? UInt64(UInt32.max) : (1 << UInt64(zeros)) - 1 }
        return nil
    }

    private mutating func scanHEVC(_ buf: UnsafeBufferPointer<UInt8>, from: Int) -> (cut: Int, resume: Int)? {
        var i = from
        let n = buf.count
        while i < n {
            state64 = state64 << 8 | UInt64(buf[i])
            if (state64 >> 24) & 0xFFFFFF == 1 {
                let type = Int(state64 >> 17) & 0x3F
                if (32...37).contains(type) || type == 39 || (41...44).contains(type) || (48...55).contains(type) {
                    if frameStartFound {
                        frameStartFound = false
                        return (i - 5, i + 1)
                    }
                } else if type <= 9 || (16...21).contains(type) {
                    if buf[i] >> 7 == 1 {
                        if !frameStartFound {
                            frameStartFound = true
                        } else {
                            frameStartFound = false
                            return (i - 5, i + 1)
                        }
                    }
                }
            }
            i += 1
        }
        return nil
    }
}

extension AnnexB {
    /// What an H.264 / HEVC access unit (Annex B) says, as FFmpeg's parsers read it.
    struct AccessUnitFacts {
        /// A key frame: an IDR slice or a recovery point SEI before the first slice (H.264,
        /// FFmpeg's h264 parser), an IRAP picture (HEVC: NAL types 16-23).
        var isKeyframe = false
        /// The unit holds a picture (a slice NAL unit).
        var hasPicture = false
        /// The parameter sets (H.264 SPS / PPS, HEVC VPS / SPS / PPS), in order, each as FFmpeg's
        /// h2645 splitter keeps it for extradata: up to the next 3-byte start code (a 4-byte
        /// start code's first zero included).
        var parameterSets: [Range<Int>] = []
        /// The frame duration the first SPS (or HEVC VPS) with timing states, in `clock` ticks,
        /// when asked for.
        var frameTicks: Int64?
        /// The picture size of the first SPS that parses, when asked for.
        var size: (width: Int, height: Int)?
    }

    /// `sets` of `data` as extradata, each behind a 3-byte start code, as FFmpeg's
    /// extract_extradata writes them.
    static func extradata(_ data: [UInt8], _ sets: [Range<Int>]) -> [UInt8] { sets.flatMap { [0, 0, 1] + data[$0] } }

    /// The facts of the access unit `data` (Annex B); SPS / VPS are parsed only for what is
    /// asked: their timing (`timing`, in `clock` ticks) and the picture size (`size`). With
    /// `firstPicture`, the units after the first slice are not looked at (the key frame is the
    /// first slice's, as FFmpeg's h264 and hevc parsers decide it, and no scan of the slice
    /// data for start codes): for callers that need no parameter sets from the unit.
    static func accessUnitFacts(_ data: [UInt8], hevc: Bool, clock: Int64, timing: Bool, size wantSize: Bool,
                                firstPicture: Bool = false) -> AccessUnitFacts {
        let isPicture: (UInt8) -> Bool = hevc ? { hevcType($0) < 32 } : { (1...5).contains(h264Type($0)) }
        let units = nalUnits(in: data, stopAfter: firstPicture ? isPicture : nil)
        var f = AccessUnitFacts()
        var recoveryPoint = false
        var sliceSeen = false
        for (k, u) in units.enumerated() {
            let end = k + 1 < units.count ? units[k + 1].lowerBound - 3 : data.count
            if !hevc {
                let type = h264Type(data[u.lowerBound])
                if (1...5).contains(type) {
                    f.hasPicture = true
                    if type == 5 || (!sliceSeen && recoveryPoint) { f.isKeyframe = true }
                    sliceSeen = true
                }
                if type == 6 && !sliceSeen && !recoveryPoint { recoveryPoint = hasRecoveryPoint(data[u]) }
                if type == 7 || type == 8 { f.parameterSets.append(u.lowerBound..<end) }
                if type == 7, (timing && f.frameTicks == nil) || (wantSize && f.size == nil),
                   let sps = VideoTiming.h264(sps: Array(data[u]), clock: clock) {
                    if timing && f.frameTicks == nil { f.frameTicks = sps.frameTicks }
                    if wantSize && f.size == nil { f.size = (sps.width, sps.height) }
                }
            } else {
                guard u.count >= 2 else { continue }
                let type = hevcType(data[u.lowerBound])
                if (16...23).contains(type) { f.isKeyframe = true }
                if type < 32 { f.hasPicture = true }
                if (32...34).contains(type) { f.parameterSets.append(u.lowerBound..<end) }
                if type == 32 && timing && f.frameTicks == nil { f.frameTicks = VideoTiming.hevcFrameTicks(vps: Array(data[u]), clock: clock) }
                if type == 33, (timing && f.frameTicks == nil) || (wantSize && f.size == nil),
                   let sps = VideoTiming.hevc(sps: Array(data[u]), clock: clock) {
                    if timing && f.frameTicks == nil { f.frameTicks = sps.frameTicks }
                    if wantSize && f.size == nil { f.size = (sps.width, sps.height) }
                }
            }
        }
        return f
    }

    /// Whether an H.264 SEI NAL unit (header byte included) carries a recovery point message
    /// (payload type 6), which makes FFmpeg's h264 parser flag the picture after it a key frame.
    static func hasRecoveryPoint(_ nal: ArraySlice<UInt8>) -> Bool { recoveryPoint(nal) != nil }

    /// The recovery_frame_cnt of the recovery point message (H.264 D.1.8) in an SEI NAL unit
    /// (header byte included); nil without one, -1 when its payload cannot be read that far.
    static func recoveryFrameCount(_ nal: ArraySlice<UInt8>) -> Int? {
        guard let payload = recoveryPoint(nal) else { return nil }
        var r = BitReader(Array(payload))
        return r.ue() ?? -1
    }

    /// The payload of the first recovery point message in an SEI NAL unit, nil without one.
    private static func recoveryPoint(_ nal: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let b = unescape(nal.dropFirst())
        var i = 0
        while i + 1 < b.count {
            var type = 0, size = 0
            while i < b.count && b[i] == 0xFF { type += 255; i += 1 }
            guard i < b.count else { return nil }
            type += Int(b[i]); i += 1
            while i < b.count && b[i] == 0xFF { size += 255; i += 1 }
            guard i < b.count else { return nil }
            size += Int(b[i]); i += 1
            if type == 6 { return i < b.count ? b[i..<min(b.count, i + size)] : nil }
            i += size
        }
        return nil
    }
}
