import Foundation

/// Hard limits of the raw video reader.
enum RawVideoLimits {
    /// The largest access unit (temporal unit) accepted: 256 MiB.
    static let maxUnitBytes = 256 << 20
    /// How far opening reads ahead for the first picture and its parameter sets: 16 MiB.
    static let probeBytes: Int64 = 16 << 20
    /// Bytes read from the source at a time.
    static let chunkBytes = 1 << 18
}

/// Reads raw video elementary streams: H.264 and HEVC byte streams (Annex B: `.h264`,
/// `.264`, `.avc`, `.h265`, `.265`, `.hevc`) and AV1 low-overhead OBU streams (`.obu`).
///
/// One track; its packets are what `ffprobe -show_packets` lists for the stream, in order:
///
/// - H.264 / HEVC: one access unit per packet, cut where FFmpeg's h264 / hevc parsers cut the
///   stream (``AnnexBFrameSplitter``: at an AUD, parameter set or SEI after a picture, or at
///   the next picture's first slice), the bytes before the first cut in the first packet.
///   Key frames are IDR pictures and pictures after a recovery point SEI (H.264), IRAP pictures
///   (HEVC). The codec parameters come from the first access unit with a picture and
///   parameter sets: the picture size from its SPS, the extradata its parameter sets in Annex
///   B form (each behind a 3-byte start code, as FFmpeg's extract_extradata writes them, and
///   as the packets are: decoders and muxers take both forms, and an MP4 or Matroska muxer
///   writes the `avcC` / `hvcC` record from them).
///   Timestamps: as ffprobe lists them, none (pts and dts are ``Packet/noTimestamp``: the
///   stream has none and FFmpeg's raw demuxer makes none up); the duration is one frame at
///   the rate the first SPS (HEVC: VPS or SPS) states in its timing information, else at 25
///   frames per second (FFmpeg's default `-framerate`), or at ``frameRate`` when set. A muxer
///   places such packets one after the other in decoding order (``Remuxer``); a
///   ``DecodeSession`` times the decoded frames one after the other in presentation order.
/// - AV1: one temporal unit per packet (from a temporal delimiter OBU to the next), key
///   frames as FFmpeg's AV1 parser flags them (``AV1/isKeyframe(_:state:)``). The picture
///   size comes from the first sequence header; there is no extradata (decoders read the
///   sequence header in band). Timestamps as FFmpeg's `obu` demuxer gives them: pts = dts =
///   the unit's index times one frame at 25 frames per second (or ``frameRate``).
///
/// Times are in 1/1200000 s, FFmpeg's time base for these streams. The source is read front to
/// back in chunks (a pipe works; memory holds one access unit and one chunk). A file cut short
/// gives the access units it holds, the last one as far as it goes, as FFmpeg does: a raw
/// stream has no sizes to say that bytes are missing. An OBU header without its size field
/// (not the low-overhead format) is an `.invalidData` error naming its offset.
public final class RawVideoDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The byte stream syntaxes read.
    public enum Syntax: String, Sendable {
        /// H.264 Annex B byte stream.
        case h264
        /// HEVC Annex B byte stream.
        case hevc
        /// AV1 low-overhead bitstream format (OBUs with size fields).
        case av1

        /// The codec of the stream.
        public var codec: CodecID {
            switch self {
            case .h264: return .h264
            case .hevc: return .hevc
            case .av1: return .av1
            }
        }
    }

    /// The time base of every packet: 1/1200000 s, as FFmpeg's raw video demuxers.
    public static let timeBase = Rational(1, 1_200_000)
    /// FFmpeg's default frame rate for raw video: 25/1.
    public static let defaultFrameRate = Rational(25, 1)

    /// The one track.
    public private(set) var tracks: [Track]
    /// Unknown without reading the whole stream: nil.
    public var duration: Double? { nil }
    /// The source's name.
    public let path: String
    /// The syntax of the stream.
    public let syntax: Syntax
    /// The frame rate the packets are timed with: set, or the one the first SPS / VPS states
    /// (H.264 / HEVC), else 25/1. Setting it (as ffmpeg's `-r` before `-i`) retimes every
    /// packet not read yet and the track's ``Track/frameRate``; a rate that is not positive
    /// is ignored.
    public var frameRate: Rational {
        get { chosenRate ?? statedRate ?? Self.defaultFrameRate }
        set {
            guard newValue.numerator > 0, newValue.denominator > 0 else { return }
            chosenRate = newValue
            tracks[0].frameRate = newValue
        }
    }

    private let source: ByteSource
    private var chosenRate: Rational?
    private var statedRate: Rational?
    private var main: Cursor
    private var side: Cursor?
    private var ahead: [(data: [UInt8], position: Int64, key: Bool)] = []
    private var selected: Set<Int>?
    /// Where a seek may start: a key frame's offset, its index in decoding order, and the AV1
    /// state before it.
    private typealias Start = (offset: Int64, index: Int64, av1: AV1.State)
    /// The key frames earlier seeks passed, in stream order, each with the leading-picture
    /// state before it and the frame it is presented as: a seek scans from the last one
    /// presented at or before its target, not from the start of the stream again.
    private var passedStarts: [(start: Start, pictures: LeadingPictures, presented: Int64)] = []

    /// Opens the stream in `source`, its syntax found by the content (``probe(_:)``; H.264
    /// when nothing matches).
    /// - Throws: as ``init(source:syntax:)``.
    public convenience init(source: ByteSource) throws {
        let head = try source.readUpTo(at: 0, count: ContainerCatalog.probeSize)
        let syntax: Syntax = Self.probeHEVC(head) > 0 ? .hevc : Self.probeOBU(head) > 0 ? .av1 : .h264
        try self.init(source: source, syntax: syntax)
    }

    /// Opens the stream in `source` as `syntax`, reading ahead (at most 16 MiB) to the first
    /// picture for the codec parameters; the units read are kept and returned first.
    /// - Throws: `.invalidData` when no picture with its parameter sets (H.264 / HEVC) or no
    ///   sequence header (AV1) is found in the first 16 MiB, or for an OBU without a size
    ///   field; `.limit` for a unit above 256 MiB; the source's errors.
    public init(source: ByteSource, syntax: Syntax) throws {
        self.source = source
        self.path = source.name
        self.syntax = syntax
        self.main = Cursor(syntax: syntax)
        var params = CodecParameters(mediaType: .video, codec: syntax.codec)
        let what = syntax == .h264 ? "H.264" : syntax == .hevc ? "HEVC" : "AV1"
        tracks = []
        var found = false
        while !found, main.consumed < RawVideoLimits.probeBytes, let unit = try main.next(source, path: source.name) {
            ahead.append(unit)
            if syntax == .av1 {
                if let seq = AV1.obus(unit.data).first(where: { $0.type == AV1.sequenceHeader }),
                   let h = AV1.SequenceHeader(unit.data[seq.payload]) {
                    (params.width, params.height) = (h.maxWidth, h.maxHeight)
                    found = true
                }
            } else {
                let facts = AnnexB.accessUnitFacts(unit.data, hevc: syntax == .hevc, clock: Self.timeBase.denominator,
                                                   timing: statedRate == nil, size: params.width == 0)
                if statedRate == nil, let ticks = facts.frameTicks, ticks > 0 { statedRate = Track.reduced(Self.timeBase.denominator, ticks) }
                if params.width == 0, let size = facts.size { (params.width, params.height) = size }
                if facts.hasPicture && !facts.parameterSets.isEmpty {
                    params.extradata = AnnexB.extradata(unit.data, facts.parameterSets)
                    found = true
                }
            }
        }
        guard found else {
            let looked = syntax == .av1 ? "a sequence header" : "a picture with its parameter sets"
            throw MediaError(.invalidData, "no \(what) \(looked) in the first \(main.consumed) bytes", path: source.name, offset: 0,
                             context: "raw \(what) stream")
        }
        var track = Track(index: 0, id: 1, parameters: params, timeBase: Self.timeBase, duration: 0)
        track.frameRate = statedRate ?? Self.defaultFrameRate
        tracks = [track]
    }

    /// The next access unit (temporal unit), or nil at the end.
    /// - Throws: `.invalidData` for an OBU without a size field, `.limit` for a unit above
    ///   256 MiB, the source's errors.
    public func read() throws -> Packet? {
        if let selected, !selected.contains(0) { return nil }
        if !ahead.isEmpty {
            let u = ahead.removeFirst()
            main.handedOut += 1
            return packet(u, index: main.handedOut - 1)
        }
        guard let u = try main.next(source, path: path) else { return nil }
        main.handedOut += 1
        return packet(u, index: main.handedOut - 1)
    }

    /// The next unit of `track` (only 0), independent of `read()`: from the start of the
    /// stream (read again: a pipe cannot), or after a ``seek(to:)`` from where it landed.
    public func read(track: Int) throws -> Packet? {
        guard track == 0 else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (a raw video stream has 1)", path: path)
        }
        var c = side ?? Cursor(syntax: syntax)
        defer { side = c }
        guard let u = try c.next(source, path: path) else { return nil }
        c.handedOut += 1
        return packet(u, index: c.handedOut - 1)
    }

    /// Limits `read()` to these tracks (nil: all).
    public func select(tracks: Set<Int>?) { selected = tracks }

    /// Moves to the last key frame presented at or before `seconds`: frame `seconds * frameRate`,
    /// frames counted in presentation order from the first key frame, which for a key frame is
    /// its place in decoding order plus the leading pictures that follow it (decoded after it,
    /// presented before: HEVC RASL / RADL, H.264 pictures after a recovery point with a lower
    /// order count). Only on key frames whose leading pictures ``LeadingPictures`` can count
    /// (H.264: IDR pictures, and recovery points in streams of POC type 0 or 2). The stream is
    /// read from the last key frame an earlier seek passed that is presented at or before the
    /// time (from the start the first time).
    /// - Throws: `.invalidArgument` for a negative or non-finite time, `.unsupported` on a
    ///   source that cannot seek.
    public func seek(to seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.invalidArgument, "cannot seek to \(seconds) s", path: path)
        }
        guard source.isSeekable else {
            throw MediaError(.unsupported, "a raw video stream read from a pipe cannot seek", path: path)
        }
        // A millionth of a frame over: the time of frame k, computed in floating point, is frame k.
        let target = Int64((seconds * frameRate.doubleValue + 1e-6).rounded(.down))
        var scan = Cursor(syntax: syntax)
        var pictures = LeadingPictures(codec: syntax.codec)
        var chosen: Start = (0, 0, AV1.State())
        if let known = passedStarts.last(where: { $0.presented <= target }) {
            chosen = known.start
            scan = Cursor(syntax: syntax, at: known.start.offset, index: known.start.index, av1: known.start.av1)
            pictures = known.pictures
        }
        // The last key frame read, until its leading pictures (decoded after it, presented
        // before it) are counted: it is presented `leading` frames later than it is decoded.
        var open: (start: Start, leading: Int64, pictures: LeadingPictures)?
        func close(_ o: (start: Start, leading: Int64, pictures: LeadingPictures)) {
            if o.start.index + o.leading <= target { chosen = o.start }
            if o.start.index > passedStarts.last?.start.index ?? -1 {
                passedStarts.append((o.start, o.pictures, o.start.index + o.leading))
            }
        }
        while scan.handedOut <= target || open != nil {
            let before = (av1: scan.av1, pictures: pictures)
            guard let u = try scan.next(source, path: path) else { break }
            let index = scan.handedOut
            scan.handedOut += 1
            let picture = pictures.next(u.data, isKeyframe: u.key)
            if let o = open {
                if picture.place != .trailing {
                    open?.leading += 1
                    continue
                }
                close(o)
                open = nil
            }
            if picture.start && index <= target {
                open = ((u.position, index, before.av1), 0, before.pictures)
            }
        }
        if let o = open { close(o) }
        ahead.removeAll()
        main = Cursor(syntax: syntax, at: chosen.offset, index: chosen.index, av1: chosen.av1)
        side = main
    }

    private func packet(_ u: (data: [UInt8], position: Int64, key: Bool), index: Int64) -> Packet {
        let ticks = Rational.rescale(1, from: Rational(frameRate.denominator, frameRate.numerator), to: Self.timeBase)
        let stamp = syntax == .av1 ? index * ticks : Packet.noTimestamp
        return Packet(trackIndex: 0, pts: stamp, dts: stamp, duration: ticks, isKeyframe: u.key, position: u.position,
                      data: u.data, timeBase: Self.timeBase)
    }

    /// Where one reading of the stream stands: the bytes not handed out yet and the splitter.
    private struct Cursor {
        let syntax: Syntax
        var buffer: [UInt8] = []
        /// Offset in the source of `buffer[0]`.
        var base: Int64
        /// Where the unit being cut starts in `buffer`, and where cutting goes on.
        var start = 0
        var scanned = 0
        var atEnd = false
        var splitter: AnnexBFrameSplitter
        var av1 = AV1.State()
        var handedOut: Int64
        /// An OBU the end of the file cut: reported once the units before it are handed out.
        var cutShort: MediaError?
        /// Bytes read from the source.
        var consumed: Int64 { base + Int64(buffer.count) }

        init(syntax: Syntax, at offset: Int64 = 0, index: Int64 = 0, av1: AV1.State = AV1.State()) {
            self.syntax = syntax
            self.base = offset
            self.handedOut = index
            self.av1 = av1
            splitter = AnnexBFrameSplitter(hevc: syntax == .hevc)
            if offset > 0 { splitter.restart() }
        }

        mutating func next(_ source: ByteSource, path: String) throws -> (data: [UInt8], position: Int64, key: Bool)? {
            while true {
                if let cut = try findCut(path: path) {
                    return take(upTo: cut)
                }
                if atEnd {
                    if start < buffer.count { return take(upTo: buffer.count) }
                    if let e = cutShort { cutShort = nil; throw e }
                    return nil
                }
                if start > 0 && start >= buffer.count / 2 {
                    buffer.removeFirst(start)
                    base += Int64(start)
                    scanned -= start
                    start = 0
                }
                guard buffer.count <= RawVideoLimits.maxUnitBytes else {
                    throw MediaError(.limit, "an access unit runs over \(RawVideoLimits.maxUnitBytes) bytes without an end",
                                     path: path, offset: base + Int64(start), context: "raw \(syntax.rawValue) stream")
                }
                let chunk = try source.readUpTo(at: consumed, count: RawVideoLimits.chunkBytes)
                if chunk.isEmpty { atEnd = true } else { buffer += chunk }
            }
        }

        private mutating func take(upTo cut: Int) -> (data: [UInt8], position: Int64, key: Bool) {
            let data = Array(buffer[start..<cut])
            let position = base + Int64(start)
            start = cut
            scanned = max(scanned, cut)
            let key: Bool
            switch syntax {
            case .av1: key = AV1.isKeyframe(data, state: &av1)
            case .h264, .hevc: key = AnnexB.accessUnitFacts(data, hevc: syntax == .hevc, clock: 1, timing: false, size: false).isKeyframe
            }
            return (data, position, key)
        }

        /// The end of the unit at `start` in the bytes there are, or nil.
        private mutating func findCut(path: String) throws -> Int? {
            if syntax == .av1 { return try findTemporalUnitEnd(path: path) }
            while scanned < buffer.count {
                let from = scanned
                let found = buffer.withUnsafeBufferPointer { splitter.scan($0, from: from) }
                guard let (cut, resume) = found else { scanned = buffer.count; return nil }
                splitter.restart()
                if cut > start {
                    scanned = cut
                    return cut
                }
                scanned = resume   // a cut before the unit's start (a stream starting mid start code): none
            }
            return nil
        }

        /// An OBU at `i` the end of the file cuts: FFmpeg's obu demuxer leaves it out, so the unit
        /// ends before it (or there is none), and a `.truncated` error follows.
        private mutating func dropCutOBU(at i: Int, path: String, _ what: String) -> Int? {
            cutShort = MediaError(.truncated, "the file ends inside an OBU (\(what)); it is left out", path: path,
                                  offset: base + Int64(i), context: "AV1 OBU")
            buffer.removeSubrange(i...)
            scanned = buffer.count
            return i > start ? i : nil
        }

        /// AV1: the next temporal delimiter OBU after `start`; OBUs are stepped over by their sizes.
        private mutating func findTemporalUnitEnd(path: String) throws -> Int? {
            while scanned < buffer.count {
                let i = scanned
                let header = buffer[i]
                var p = i + 1
                if header & 4 != 0 { p += 1 }
                guard header & 2 != 0 else {
                    throw MediaError(.invalidData, "an OBU (type \(Int(header >> 3) & 15)) has no obu_size field; an .obu stream (the low-overhead format) needs one in every OBU",
                                     path: path, offset: base + Int64(i), context: "AV1 OBU header")
                }
                var size = 0, shift = 0, complete = false
                while p < buffer.count && shift < 56 {
                    let b = buffer[p]
                    p += 1
                    size |= Int(b & 0x7F) << shift
                    shift += 7
                    if b & 0x80 == 0 { complete = true; break }
                }
                if !complete {
                    if shift >= 56 {
                        throw MediaError(.invalidData, "an OBU's obu_size (leb128) runs over 8 bytes", path: path, offset: base + Int64(i), context: "AV1 OBU header")
                    }
                    if atEnd { return dropCutOBU(at: i, path: path, "its obu_size") }
                    return nil
                }
                let type = Int(header >> 3) & 15
                if type == 2 && i > start { return i }   // OBU_TEMPORAL_DELIMITER
                guard size <= RawVideoLimits.maxUnitBytes else {
                    throw MediaError(.limit, "an OBU declares \(size) bytes, above the limit of \(RawVideoLimits.maxUnitBytes)",
                                     path: path, offset: base + Int64(i), context: "AV1 OBU header")
                }
                if p + size > buffer.count {
                    if atEnd { return dropCutOBU(at: i, path: path, "\(size) bytes of payload, \(buffer.count - p) there") }
                    return nil
                }
                scanned = p + size
            }
            return nil
        }
    }
}
