/// Hard limits of the IVF demuxer.
enum IVFLimits {
    /// The largest frame accepted (a 8K intra frame fits easily).
    static let maxFrameSize = 64 << 20
}

/// Reads IVF files: the 32-byte "DKIF" header, then frames of a 12-byte header (size,
/// 64-bit pts) and the frame data. AV1 ("AV01"), VP8 ("VP80") and VP9 ("VP90").
///
/// Packets equal `ffprobe -show_packets`: the position is the frame header's offset, the
/// duration one frame interval (the first two frames' pts difference, 1 when unknown), and
/// the key-frame flag comes from the frame itself as FFmpeg's parsers read it (VP8 frame
/// tag; VP9 uncompressed header; AV1 frame header of the shown frame, see ``AV1``).
/// The AV1 track has no extradata: decoders read the sequence header in band.
public final class IVFDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The one track of the file.
    public let tracks: [Track]
    /// Frame count times the time base, from the header (nil when the header says 0).
    public let duration: Double?
    /// The path the demuxer was opened on.
    public let path: String
    /// The header's fourcc ("AV01", "VP80", "VP90" ...).
    public let fourcc: String

    private let source: ByteSource
    private let headerSize: Int64
    private var nextOffset: Int64
    private var trackOffset: Int64
    private let frameStep: Int64
    private var selected: Set<Int>?
    private var av1 = AV1.State()
    private var av1Track = AV1.State()
    /// Where `read()` and `read(track:)` stand at a cut at the end of the file.
    private var cut = TruncationState()
    private var trackCut = TruncationState()

    /// Reads the header of the IVF stream in `source` (seekable or not: frames are read in order).
    /// - Throws: `.invalidData` naming the file and what was expected for a bad header,
    ///   `.endOfFile` when the file is shorter than the header.
    public init(source: ByteSource) throws {
        let path = source.name
        self.path = path
        self.source = source
        guard source.size >= 32 else {
            throw MediaError(.endOfFile, "the IVF header is 32 bytes, the file has \(source.size)", path: path, offset: 0, context: "IVF header")
        }
        let h = try source.read(at: 0, count: 32)
        guard h.starts(with: Array("DKIF".utf8)) else {
            throw MediaError(.invalidData, "expected the signature \"DKIF\"", path: path, offset: 0, context: "IVF header")
        }
        func le16(_ i: Int) -> Int { Int(h[i]) | Int(h[i + 1]) << 8 }
        func le32(_ i: Int) -> Int64 { Int64(le16(i)) | Int64(le16(i + 2)) << 16 }
        let fourcc = String(decoding: h[8..<12].map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
        self.fourcc = fourcc
        // FFmpeg ignores the header-size field and reads frames from byte 32; so do we,
        // unless the field says more (a longer header from a future version).
        let declared = Int64(le16(6))
        self.headerSize = declared > 32 && declared < source.size ? declared : 32
        let rate = le32(16), scale = le32(20), frames = le32(24)
        guard rate > 0, scale > 0 else {
            throw MediaError(.invalidData, "the time base \(scale)/\(rate) is invalid (both must be positive)", path: path, offset: 16, context: "IVF header")
        }
        let codec: String
        var reason: String?
        switch fourcc {
        case "AV01": codec = "av1"
        case "VP80": codec = "vp8"
        case "VP90": codec = "vp9"
        default:
            codec = ""
            reason = "the IVF fourcc '\(fourcc)' is not AV01, VP80 or VP90"
        }
        let params = CodecParameters(mediaType: .video, codec: CodecID(codec), codecTag: fourcc, width: le16(12), height: le16(14))
        let timeBase = Track.reduced(scale, rate)
        // Frame step: the first two frames' pts difference (FFmpeg guesses durations from the frame rate).
        var step: Int64 = 1
        if let a = try? source.read(at: headerSize, count: 12), let sizeA = Optional(Int64(Self.le32(a, 0))),
           let b = try? source.read(at: headerSize + 12 + sizeA, count: 12) {
            let d = Self.le64(b, 4) &- Self.le64(a, 4)
            // A step the duration or the frame rate cannot hold (a damaged second frame header) is no guess.
            if d > 0, !frames.multipliedReportingOverflow(by: d).overflow,
               !Int64(timeBase.numerator).multipliedReportingOverflow(by: d).overflow { step = d }
        }
        self.frameStep = step
        var track = Track(index: 0, id: 1, parameters: params, timeBase: timeBase, duration: frames * step,
                          sampleCount: Int(frames), unsupportedReason: reason)
        track.frameRate = Track.reduced(timeBase.denominator, timeBase.numerator * step)
        self.tracks = [track]
        self.duration = frames > 0 ? Double(frames * step) * timeBase.doubleValue : nil
        self.nextOffset = headerSize
        self.trackOffset = headerSize
    }

    static func le32(_ b: [UInt8], _ i: Int) -> UInt32 {
        UInt32(b[i]) | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2]) << 16 | UInt32(b[i + 3]) << 24
    }

    static func le64(_ b: [UInt8], _ i: Int) -> Int64 {
        Int64(bitPattern: UInt64(le32(b, i)) | UInt64(le32(b, i + 4)) << 32)
    }

    /// The next frame, or nil at the end.
    /// A frame the file cuts short is returned with the bytes the file has (marked
    /// ``Packet/isTruncated``), as FFmpeg's demuxer returns it.
    /// - Throws: `.truncated` after the last frame when the file ends inside a frame or its
    ///   header (later calls return nil), `.limit` for a frame above 64 MiB.
    public func read() throws -> Packet? {
        if let selected, !selected.contains(0) { return nil }
        return try frame(at: &nextOffset, state: &av1, cut: &cut)
    }

    /// The next frame of `track` (only 0), independent of `read()`.
    public func read(track: Int) throws -> Packet? {
        guard track == 0 else {
            throw MediaError(.invalidArgument, "track \(track) does not exist (an IVF file has 1)", path: path)
        }
        return try frame(at: &trackOffset, state: &av1Track, cut: &trackCut)
    }

    /// Limits `read()` to these tracks (nil: all).
    public func select(tracks: Set<Int>?) { selected = tracks }

    /// Moves to the last key frame whose pts is at or before `seconds` (scans frame headers from the start).
    public func seek(to seconds: Double) throws {
        guard seconds.isFinite, seconds >= 0 else {
            throw MediaError(.invalidArgument, "cannot seek to \(seconds) s", path: path)
        }
        var offset = headerSize
        var state = AV1.State()
        var chosen = headerSize
        var chosenState = AV1.State()
        var scanCut = TruncationState()
        let target = seconds / tracks[0].timeBase.doubleValue
        while true {
            let at = offset
            let before = state
            guard let p = try? frame(at: &offset, state: &state, cut: &scanCut) else { break }
            if Double(p.pts) > target + 1e-9 { break }
            if p.isKeyframe { chosen = at; chosenState = before }
        }
        nextOffset = chosen
        trackOffset = chosen
        av1 = chosenState
        av1Track = chosenState
        cut.reset()
        trackCut.reset()
    }

    private func frame(at offset: inout Int64, state: inout AV1.State, cut: inout TruncationState) throws -> Packet? {
        if try cut.check() { return nil }
        let left = try source.available(from: offset, upTo: 12)
        guard left > 0 else { return nil }
        guard left == 12 else {
            cut.cut(MediaError(.truncated, "the file ends \(left) bytes into a 12-byte frame header", path: path, offset: offset, context: "IVF frame header"))
            _ = try cut.check()
            return nil
        }
        let h = try source.read(at: offset, count: 12)
        let size = Int(Self.le32(h, 0))
        let pts = Self.le64(h, 4)
        guard size <= IVFLimits.maxFrameSize else {
            throw MediaError(.limit, "the frame declares \(size) bytes, above the limit of \(IVFLimits.maxFrameSize)", path: path, offset: offset, context: "IVF frame header")
        }
        let available = Int(try source.available(from: offset + 12, upTo: Int64(size)))
        if available < size {
            // As FFmpeg: the frame is returned with the bytes there are, then the cut is reported.
            cut.cut(MediaError(.truncated, "the frame declares \(size) bytes but the file ends after \(available)", path: path, offset: offset + 12, context: "IVF frame"))
            if available == 0 { _ = try cut.check() }
        }
        let data = try source.read(at: offset + 12, count: available)
        let key: Bool
        switch tracks[0].parameters.codec {
        case "vp8": key = !data.isEmpty && data[0] & 1 == 0
        case "vp9": key = Self.vp9IsKeyframe(data)
        case "av1": key = AV1.isKeyframe(data, state: &state)
        default: key = false
        }
        var packet = Packet(trackIndex: 0, pts: pts, dts: pts, duration: frameStep, isKeyframe: key,
                            position: offset, data: data, timeBase: tracks[0].timeBase)
        packet.isTruncated = available < size
        offset += 12 + Int64(available)
        return packet
    }

    /// Whether a VP9 packet starts with a key frame (``VP9Header/isKeyframe(_:)``).
    static func vp9IsKeyframe(_ d: [UInt8]) -> Bool { VP9Header.isKeyframe(d) }
}
