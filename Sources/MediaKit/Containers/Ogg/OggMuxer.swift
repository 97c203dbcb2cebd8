import Foundation

/// Writes Ogg files (RFC 3533): Opus (RFC 7845), Vorbis (Vorbis I specification, appendix A)
/// and FLAC (the Ogg FLAC mapping) streams, one logical stream per track, grouped (every
/// stream's first page before any data, as RFC 3533 section 4 asks). The file is written to
/// a temporary name and renamed by ``finish()`` (``OutputFile``); nothing is ever written
/// back, so a pipe works as the target too.
///
/// - Header pages: the identification header alone on the beginning-of-stream page (OpusHead,
///   Vorbis identification, the Ogg FLAC header with STREAMINFO), then the other headers
///   (OpusTags; Vorbis comment and setup from the Xiph-laced extradata; a FLAC VORBIS_COMMENT)
///   on pages of their own, so that audio data starts on a fresh page.
/// - Data pages end at 255 lacing values (a longer packet continues on the next page) or once
///   they span ``pageDuration`` seconds.
/// - Granule positions count samples at the stream's rate (48 kHz for Opus, its pre-skip
///   included): each packet lasts what its own bytes say (the Opus TOC, the Vorbis block sizes
///   from the setup header's modes, the FLAC frame header), starting where the previous one
///   ended (``SampleClock``: a packet's timestamp only counts for the first packet and for a gap).
///   Packet timestamps follow FFmpeg's convention: an Opus stream starts at -pre-skip, a Vorbis
///   stream at minus its first packet's duration (the packet that decodes to nothing).
/// - Gapless: the pre-skip stays in the OpusHead, and a packet's ``Packet/trimEnd`` (the Ogg
///   and Matroska demuxers set it on the last packet) lowers the last page's granule position,
///   so decoders cut the end as the source said. A packet with an end trim must be its track's
///   last (a chained source cannot be written as one link): a later one is refused.
public final class OggMuxer: Muxer, @unchecked Sendable {
    /// The longest span of a data page, in seconds (FFmpeg's `page_duration` default).
    public static let pageDuration = 1.0
    /// Bytes of pages held back to interleave several streams in time order before the
    /// earliest is written anyway.
    static let interleaveBytes = 4 << 20

    private struct Stream {
        let codec: OggCodec
        let rate: Int
        let preSkip: Int
        let headers: [[UInt8]]
        var writer: OggPageWriter
        var clock: SampleClock
        var vorbis: VorbisDurationParser?
        /// Presentation time (seconds) and position where the current page started.
        var pageTime = 0.0, pageStart: Int64 = 0
        var packets = 0
        /// The end trim of a packet already written (it must be the last one).
        var trimmedAt: Int64?
        /// Completed pages not yet in the file, with their start times.
        var queue: [(page: OggPage, time: Double)] = []
    }

    /// True for a `.opus` file: Opus tracks only (RFC 7845 section 9).
    public let isOpusOnly: Bool
    private let file: OutputFile
    private var streams: [Stream] = []
    private var headerWritten = false
    private var finished = false
    private var queuedBytes = 0

    /// Creates the file (a temporary name until ``finish()``); `opusOnly` nil: true for a
    /// `.opus` file name.
    /// - Throws: `.io` when the file cannot be created.
    public init(path: String, opusOnly: Bool? = nil) throws {
        isOpusOnly = opusOnly ?? ((path as NSString).pathExtension.lowercased() == "opus")
        file = try OutputFile(path: path)
    }

    /// Adds a track: Opus (`extradata` an OpusHead), Vorbis (`extradata` the three headers,
    /// Xiph-laced, as the Ogg and Matroska demuxers give them) or FLAC (`extradata` the 34-byte
    /// STREAMINFO, or "fLaC" and the metadata blocks). `timeBase` is not used: packets carry theirs.
    /// - Throws: `.unsupported` for another codec, `.invalidArgument` for unusable extradata,
    ///   `.state` after the first packet.
    public func addTrack(_ parameters: CodecParameters, timeBase: Rational) throws -> Int {
        guard !headerWritten else { throw MediaError(.state, "tracks must be added before the first packet", path: file.path) }
        let index = streams.count
        let what = "track \(index) (\(parameters.codec.isUnknown ? "unknown codec" : parameters.codec.rawValue))"
        func bad(_ why: String) -> MediaError { MediaError(.invalidArgument, "\(what): \(why)", path: file.path, context: "Ogg muxer") }
        var serial = UInt32.random(in: 1...UInt32.max)
        while streams.contains(where: { $0.writer.serial == serial }) { serial = UInt32.random(in: 1...UInt32.max) }
        if isOpusOnly && parameters.codec != "opus" {
            throw MediaError(.unsupported, "a .opus file carries Opus only, \(what) is not; name the output .ogg or .oga",
                             path: file.path, context: "Ogg muxer")
        }
        let stream: Stream
        switch parameters.codec {
        case "opus":
            guard case .success(let head) = OpusHead.parse(parameters.extradata) else {
                if case .failure(let why) = OpusHead.parse(parameters.extradata) { throw bad("the extradata is not an OpusHead: \(why.reason)") }
                throw bad("the extradata is not an OpusHead")
            }
            stream = Stream(codec: .opus, rate: 48000, preSkip: head.preSkip, headers: [parameters.extradata, Self.opusTags()],
                            writer: OggPageWriter(serial: serial), clock: SampleClock(rate: 48000, offset: Int64(head.preSkip)))
        case "vorbis":
            guard let headers = MatroskaTrackConfig.xiphHeaders(parameters.extradata), headers.count == 3 else {
                throw bad("the extradata (\(parameters.extradata.count) bytes) is not the three Vorbis headers, Xiph-laced")
            }
            var info: VorbisInfo
            switch VorbisInfo.parseIdentification(headers[0]) {
            case .success(let v): info = v
            case .failure(let why): throw bad(why.reason)
            }
            guard headers[1].starts(with: [3] + Array("vorbis".utf8)), headers[2].starts(with: [5] + Array("vorbis".utf8)) else {
                throw bad("the second and third Vorbis headers are not the comment and setup headers")
            }
            guard let modes = VorbisInfo.modes(fromSetup: headers[2]) else {
                throw bad("the Vorbis setup header's modes could not be read, so packet durations (granule positions) are unknown")
            }
            info.modeLong = modes
            stream = Stream(codec: .vorbis, rate: info.sampleRate, preSkip: 0, headers: headers, writer: OggPageWriter(serial: serial),
                            clock: SampleClock(rate: info.sampleRate), vorbis: VorbisDurationParser(info: info))
        case "flac":
            var e = parameters.extradata
            if e.starts(with: Array("fLaC".utf8)) && e.count >= 42 { e = Array(e[8..<42]) }
            guard let si = FLACStreamInfo(e), si.sampleRate > 0 else {
                throw bad("the extradata (\(parameters.extradata.count) bytes) is not a FLAC STREAMINFO with a sample rate")
            }
            stream = Stream(codec: .flac, rate: si.sampleRate, preSkip: 0, headers: Self.flacHeaders(si), writer: OggPageWriter(serial: serial),
                            clock: SampleClock(rate: si.sampleRate))
        default:
            throw MediaError(.unsupported, "Ogg cannot carry \(what) here; MediaKit writes Opus, Vorbis and FLAC into Ogg",
                             path: file.path, context: "Ogg muxer")
        }
        streams.append(stream)
        return index
    }

    /// An OpusTags header (RFC 7845 section 5.2) with MediaKit as the vendor and no comments.
    static func opusTags() -> [UInt8] {
        Array("OpusTags".utf8) + vorbisCommentBody()
    }

    /// A Vorbis comment body: the vendor string ("MediaKit") and no user comments.
    static func vorbisCommentBody() -> [UInt8] {
        let vendor = Array("MediaKit".utf8)
        return le32(vendor.count) + vendor + le32(0)
    }

    static func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }

    /// The Ogg FLAC mapping's headers: 0x7F "FLAC", version 1.0, one more header packet, "fLaC"
    /// and STREAMINFO; then a VORBIS_COMMENT metadata block flagged last.
    static func flacHeaders(_ si: FLACStreamInfo) -> [[UInt8]] {
        let first = [0x7F] + Array("FLAC".utf8) + [1, 0, 0, 1] + Array("fLaC".utf8) + [0, 0, 0, 34] + si.bytes
        let comment = vorbisCommentBody()
        let second = [0x84, UInt8(comment.count >> 16), UInt8((comment.count >> 8) & 0xFF), UInt8(comment.count & 0xFF)] + comment
        return [first, second]
    }

    private func writeHeader() throws {
        headerWritten = true
        // Every stream's beginning-of-stream page first, then the other headers.
        for i in streams.indices {
            streams[i].writer.append(streams[i].headers[0], granule: 0)
            streams[i].writer.endPage()
            for page in streams[i].writer.takePages() { try file.write(page.serialized()) }
        }
        for i in streams.indices {
            for h in streams[i].headers.dropFirst() { streams[i].writer.append(h, granule: 0) }
            streams[i].writer.endPage()
            for page in streams[i].writer.takePages() { try file.write(page.serialized()) }
        }
    }

    /// Writes one packet.
    /// - Throws: `.invalidArgument` for a track that was not added or a packet whose duration
    ///   cannot be read from its bytes, `.unsupported` for a packet after one with an end trim
    ///   or a Vorbis header packet among the audio (a chained Ogg source), `.state` after
    ///   ``finish()``, `.io`.
    public func write(_ packet: Packet) throws {
        guard !finished else { throw MediaError(.state, "write after finish", path: file.path) }
        let t = packet.trackIndex
        guard t >= 0 && t < streams.count else {
            throw MediaError(.invalidArgument, "track \(t) was not added", path: file.path, context: "Ogg muxer")
        }
        if !headerWritten { try writeHeader() }
        var s = streams[t]
        defer { streams[t] = s }
        let context = "Ogg muxer, track \(t), packet \(s.packets)"
        if s.trimmedAt != nil {
            throw MediaError(.unsupported, "a packet follows one whose end was trimmed (the end of a chained link?); MediaKit writes one Ogg link per track",
                             path: file.path, context: context)
        }
        let samples: Int
        switch s.codec {
        case .opus:
            guard let d = OpusHead.packetDuration(packet.data[...]) else {
                throw MediaError(.invalidArgument, "an Opus packet of \(packet.data.count) bytes has no valid TOC, so its duration is unknown", path: file.path, context: context)
            }
            if packet.trimStart > 0 && s.packets > 0 {
                throw MediaError(.unsupported, "a packet in the middle of the stream has a start trim of \(packet.trimStart) samples (a chained link's pre-skip?); MediaKit writes one Ogg link per track",
                                 path: file.path, context: context)
            }
            samples = d
        case .vorbis:
            if let b = packet.data.first, b & 1 == 1 {
                throw MediaError(.unsupported, "a Vorbis header packet (type \(b)) among the audio packets (a chained link?); MediaKit writes one Ogg link per track",
                                 path: file.path, context: context)
            }
            guard let b = packet.data.first, let d = s.vorbis?.duration(firstByte: b) else {
                throw MediaError(.invalidArgument, "a Vorbis packet of \(packet.data.count) bytes names no mode of the setup header, so its duration is unknown", path: file.path, context: context)
            }
            samples = d
        case .flac:
            guard let d = FlacInfo.frameDuration(packet.data[...]) else {
                throw MediaError(.invalidArgument, "a FLAC packet of \(packet.data.count) bytes does not start with a frame header", path: file.path, context: context)
            }
            samples = d
        case .theora, .unknown:
            return
        }
        let start: Int64 = s.codec == .vorbis ? -Int64(samples) : 0
        let at = s.clock.place(pts: packet.pts, timeBase: packet.timeBase, samples: Int64(samples), start: start)
        let end = at + Int64(samples)
        var granule = end
        if packet.trimEnd > 0 {
            granule = end - Int64(packet.trimEnd)
            s.trimmedAt = granule
        }
        let time = Double(at - Int64(s.preSkip)) / Double(s.rate)
        if s.writer.pageIsEmpty {
            s.pageTime = time
            s.pageStart = at
        }
        s.writer.append(packet.data, granule: granule)
        s.packets += 1
        if end - s.pageStart >= Int64(Self.pageDuration * Double(s.rate)) { s.writer.endPage() }
        enqueue(&s, newPageTime: time, newPageStart: at)
        streams[t] = s
        try drain(all: false)
        s = streams[t]
    }

    /// Moves the stream's completed pages to its queue: the first keeps the current page's
    /// start; pages started inside the packet just written start with it.
    private func enqueue(_ s: inout Stream, newPageTime: Double, newPageStart: Int64) {
        for page in s.writer.takePages() {
            s.queue.append((page, s.pageTime))
            queuedBytes += page.body.count + page.segments.count + 27
            s.pageTime = newPageTime
            s.pageStart = newPageStart
        }
    }

    /// Writes queued pages in time order: while every stream has one queued (or, with `all`,
    /// until none is left), or while more than ``interleaveBytes`` are held.
    private func drain(all: Bool) throws {
        while true {
            let ready = streams.indices.filter { !streams[$0].queue.isEmpty }
            guard let i = ready.min(by: { streams[$0].queue[0].time < streams[$1].queue[0].time }) else { return }
            if !all && ready.count < streams.count && queuedBytes < Self.interleaveBytes { return }
            let page = streams[i].queue.removeFirst().page
            queuedBytes -= page.body.count + page.segments.count + 27
            try file.write(page.serialized())
        }
    }

    /// Writes every stream's last page (flagged end-of-stream; its granule position carries
    /// the end trim) and renames the file into place. - Throws: `.io`; the file is then removed.
    public func finish() throws {
        guard !finished else { return }
        do {
            if !headerWritten { try writeHeader() }
            for i in streams.indices {
                var s = streams[i]
                s.writer.finish()
                enqueue(&s, newPageTime: s.pageTime, newPageStart: s.pageStart)
                streams[i] = s
            }
            try drain(all: true)
            finished = true
            try file.commit()
        } catch {
            cancel()
            throw error
        }
    }

    /// Abandons the file and removes what was written.
    public func cancel() {
        finished = true
        file.discard()
    }
}
