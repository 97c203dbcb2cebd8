/// Reads CAF files (Apple's Core Audio Format, the file format of the iOS / macOS AudioFile API):
/// the `desc` chunk (format, rate, channels, bytes and frames per packet), `kuki` (the magic
/// cookie: AAC's ES descriptor, ALAC's config in either of Apple's two forms, FLAC's `dfLa`),
/// `pakt` (the sizes and frame counts of packets that vary, the priming and remainder frames),
/// `chan` (the speaker layout, as a WAV-style ``CodecParameters/channelMask``), `info` (text
/// pairs, ``information``) and `data`; `free` and unknown chunks are stepped over.
/// Codecs: see `CAFCodec` (FFmpeg's CAF table; `lpcm` of either byte order, integer or float).
///
/// One track. Packets are as FFmpeg's caf demuxer cuts them, so `ffprobe -show_packets` lists
/// the same ones: linear PCM, A-law and mu-law (one frame a packet in the file) in runs of whole
/// frames of at most 4096 bytes, other constant-size packets one by one, variable ones by the
/// packet table. Timestamps count frames from the first packet's 0.
///
/// Gapless: the packet table's priming and remainder frames are the track's
/// ``Track/encoderDelay`` and ``Track/encoderPadding`` (as an MP4's `iTunSMPB`), so decoding cuts
/// them and a copy into MP4 turns them into an edit list (FFmpeg 5.1 reads them but cuts neither).
///
/// A `data` chunk of unknown size (-1: a recording still being written, or never closed) runs to
/// the end of the file. A `data` chunk that says more than the file holds is read to the file's
/// end, the last packet holding the bytes there are, then a `.truncated` error. From a source
/// that cannot seek, everything up to the audio is read as it comes; a packet table after the
/// audio (where FFmpeg and MediaKit write it) cannot be, so such a file of variable packets is
/// refused from a pipe, naming why.
public final class CAFDemuxer: SourceDemuxer, @unchecked Sendable {
    /// The one track.
    public let tracks: [Track]
    /// Seconds: the frames of every packet (priming and remainder included) over the rate; nil
    /// when the audio runs to the end of a source whose size is not known.
    public let duration: Double?
    /// The source's name.
    public let path: String
    /// The `info` chunk's pairs (key, value: "title", "artist", "encoder" ...), in file order.
    public let information: [(key: String, value: String)]
    /// The `info` chunk as ``Metadata``: keys as stored (FFmpeg shows them so), normalised by name.
    public var metadata: Metadata {
        Metadata(information.map { MetadataEntry(key: MetadataKeys.key($0.key), nativeKey: $0.key, value: $0.value) })
    }

    private let source: ByteSource
    private let dataStart: Int64
    /// Where the audio ends; nil: at the end of the source (size -1 on a source of unknown size).
    private let dataEnd: Int64?
    /// True when the `data` chunk's size was -1 (its end is the file's: not a cut).
    private let openEnded: Bool
    private let desc: CAFChunks.Description
    /// Bytes of a grouped run of one-frame packets (linear PCM, G.711); 0 when packets are not grouped.
    private let runBytes: Int
    /// Variable packets: the byte offset (from `dataStart`) and first frame of each, with one
    /// more entry for the end. Empty for constant packets.
    private let offsets: [Int64]
    private let frames: [Int64]
    private var position = Cursor()
    private var trackPosition = Cursor()

    private struct Cursor {
        var offset: Int64 = 0
        var frame: Int64 = 0
        var index = 0
        var cut = TruncationState()
    }

    /// FFmpeg's packet size for runs of one-frame packets (cafdec.c CAF_MAX_PKT_SIZE).
    static let runLimit = 4096
    /// The largest magic cookie, `chan` or `info` chunk read (bigger ones are a `.limit` error or skipped).
    static let chunkLimit = 1 << 24
    /// The largest packet table read (64 MiB: hundreds of hours of AAC).
    static let packetTableLimit: Int64 = 1 << 26
    /// The largest packet read.
    static let packetLimit: Int64 = 1 << 26

    /// Reads the chunks up to the audio (and, from a seekable source, the ones after it).
    /// - Throws: `.invalidData` naming the chunk and offset for a malformed file (no `caff`
    ///   header, `desc` not first or not 32 bytes, no `data`, packets that vary with no packet
    ///   table, a packet table shorter than its count); `.unsupported` for variable packets whose
    ///   table a source that cannot seek has not seen before the audio; `.limit` for chunks
    ///   larger than MediaKit reads.
    public init(source: ByteSource) throws {
        self.source = source
        let path = source.name
        self.path = path
        let head = try source.readUpTo(at: 0, count: 8 + 12 + 32)
        guard head.count >= 8, head[0..<4].elementsEqual(Array("caff".utf8)) else {
            throw MediaError(.invalidData, "expected \"caff\"", path: path, offset: 0, context: "CAF header")
        }
        guard head[4] == 0, head[5] == 1 else {
            throw MediaError(.unsupported, "CAF version \(Int(head[4]) << 8 | Int(head[5])); version 1 is the only one", path: path, offset: 4, context: "CAF header")
        }
        guard head.count >= 20, head[8..<12].elementsEqual(Array("desc".utf8)) else {
            throw MediaError(.invalidData, "the first chunk is not \"desc\" (the spec puts the audio description first)", path: path, offset: 8, context: "desc")
        }
        guard Int64(bitPattern: CAFChunks.be64(Array(head), 12)) == 32 else {
            throw MediaError(.invalidData, "the desc chunk is \(Int64(bitPattern: CAFChunks.be64(Array(head), 12))) bytes; it has 32", path: path, offset: 8, context: "desc")
        }
        guard head.count == 52, let desc = CAFChunks.Description(Array(head[20..<52])) else {
            throw MediaError(.invalidData, "the file ends inside the desc chunk", path: path, offset: Int64(head.count), context: "desc")
        }
        let rate = desc.sampleRate
        guard rate.isFinite, rate >= 1, rate <= Double(Int32.max) else {
            throw MediaError(.invalidData, "a sample rate of \(rate)", path: path, offset: 20, context: "desc")
        }
        guard desc.channels > 0, desc.channels <= 1024, Int64(desc.bytesPerPacket) <= Self.packetLimit, desc.framesPerPacket <= UInt32(Int32.max) else {
            throw MediaError(.invalidData, "\(desc.channels) channels, \(desc.bytesPerPacket) bytes and \(desc.framesPerPacket) frames a packet",
                             path: path, offset: 20, context: "desc")
        }
        self.desc = desc

        var offset: Int64 = 52
        var cookie: (offset: Int64, body: [UInt8])?
        var pakt: (offset: Int64, body: [UInt8])?
        var chan: [UInt8]?
        var info: [(key: String, value: String)] = []
        var data: (offset: Int64, start: Int64, end: Int64?)?
        let fileSize = source.knownSize
        func body(_ type: String, at offset: Int64, size: Int64, limit: Int64) throws -> [UInt8] {
            guard size <= limit else {
                throw MediaError(.limit, "a \(type) chunk of \(size) bytes (MediaKit reads up to \(limit))", path: path, offset: offset, context: type)
            }
            let b = try source.readUpTo(at: offset + 12, count: Int(size))
            guard b.count == Int(size) else {
                throw MediaError(.invalidData, "the file ends inside the \(type) chunk (\(b.count) of \(size) bytes)", path: path,
                                 offset: offset + 12 + Int64(b.count), context: type)
            }
            return b
        }
        scan: while true {
            let header = try source.readUpTo(at: offset, count: 12)
            guard header.count == 12 else { break }
            let type = CAFChunks.fourCC(header[0..<4])
            let size = Int64(bitPattern: CAFChunks.be64(header, 4))
            switch type {
            case "data":
                guard size < 0 || size >= 4 else {
                    throw MediaError(.invalidData, "the data chunk is \(size) bytes; it starts with a 4-byte edit count", path: path, offset: offset, context: "data")
                }
                let start = offset + 16
                guard size >= 0 else {
                    // Unknown size: the audio runs to the end; nothing can follow it.
                    data = (offset, start, nil)
                    break scan
                }
                let (end, overflow) = start.addingReportingOverflow(size - 4)
                guard !overflow else {
                    throw MediaError(.invalidData, "a data chunk of \(size) bytes", path: path, offset: offset, context: "data")
                }
                data = (offset, start, end)
                // A pipe cannot come back for chunks after the audio.
                if !source.isSeekable { break scan }
            case "kuki" where size >= 0:
                cookie = (offset, try body(type, at: offset, size: size, limit: Int64(Self.chunkLimit)))
            case "pakt" where size >= 0:
                guard size >= 24 else {
                    throw MediaError(.invalidData, "the pakt chunk is \(size) bytes; its header has 24", path: path, offset: offset, context: "pakt")
                }
                pakt = (offset, try body(type, at: offset, size: size, limit: Self.packetTableLimit))
            case "chan" where size >= 0 && size <= Int64(Self.chunkLimit):
                chan = try body(type, at: offset, size: size, limit: Int64(Self.chunkLimit))
            case "info" where size >= 0 && size <= Int64(Self.chunkLimit):
                info = CAFChunks.information(try body(type, at: offset, size: size, limit: Int64(Self.chunkLimit)))
            default:
                guard size >= 0 else {
                    // Another chunk of unknown size: only after the audio does it end the file.
                    if data != nil { break scan }
                    throw MediaError(.invalidData, "a \(type) chunk of size \(size) (only the data chunk's size may be unknown)",
                                     path: path, offset: offset, context: type)
                }
            }
            let (next, overflow) = offset.addingReportingOverflow(12 &+ size)
            guard !overflow, size < Int64.max - 12 else { break }
            if let fileSize, next >= fileSize { break }
            offset = next
        }
        guard let data else {
            throw MediaError(.invalidData, "no data chunk found", path: path, offset: offset, context: "data")
        }
        information = info
        dataStart = data.start
        openEnded = data.end == nil
        dataEnd = data.end ?? fileSize
        let dataBytes = dataEnd.map { max(0, $0 - data.start) }

        let codec = CAFCodec.codec(of: desc)
        let bpp = Int(desc.bytesPerPacket), fpp = Int64(desc.framesPerPacket)
        var unsupported: String?
        if codec.isUnknown {
            unsupported = desc.formatID == Array("lpcm".utf8)
                ? "linear PCM of \(desc.bitsPerChannel)-bit \(desc.formatFlags & CAFChunks.Description.float != 0 ? "floats" : "integers") has no PCM codec"
                : "the CAF format ID \"\(desc.formatName)\" names no codec MediaKit knows (FFmpeg's CAF table has none either)"
        }
        var extradata: [UInt8] = []
        if let cookie, !codec.isUnknown {
            switch CAFCodec.extradata(codec: codec, cookie: cookie.body) {
            case .success(let e): extradata = e
            case .failure(.invalid(let why)):
                unsupported = "its magic cookie (the kuki chunk at offset \(cookie.offset)) cannot be read: \(why)"
            }
        }
        if codec == "opus" && desc.channels > 2 && extradata.isEmpty {
            unsupported = "Opus with \(desc.channels) channels needs a channel mapping, which this file's magic cookie does not give (FFmpeg refuses it too)"
        }

        // Packet framing.
        var offsets: [Int64] = [], frames: [Int64] = []
        var runBytes = 0
        var total: Int64 = 0
        var count = 0
        var trims: (priming: Int64, remainder: Int64)?
        var tableHeader: CAFChunks.PacketTableHeader?
        if let pakt {
            tableHeader = CAFChunks.PacketTableHeader(pakt.body)
        }
        if bpp > 0 && fpp > 0 {
            if fpp == 1 {
                runBytes = Self.runLimit / bpp * bpp
                guard runBytes > 0 else {
                    throw MediaError(.unsupported, "a frame of \(bpp) bytes is larger than a packet (\(Self.runLimit) bytes, as FFmpeg reads CAF)",
                                     path: path, offset: 20, context: "desc")
                }
            }
            if let dataBytes {
                total = (dataBytes / Int64(bpp)).multipliedReportingOverflow(by: fpp).partialValue
                if (dataBytes / Int64(bpp)).multipliedReportingOverflow(by: fpp).overflow { total = .max }
                count = fpp == 1 ? Int((dataBytes + Int64(runBytes) - 1) / Int64(runBytes)) : Int(dataBytes / Int64(bpp))
            }
            if let h = tableHeader, h.packets >= 0, h.packets <= Int64(Int32.max) {
                // As FFmpeg: the table's packet count says the duration.
                total = h.packets * fpp
            }
        } else {
            guard let pakt, let h = tableHeader else {
                if !source.isSeekable {
                    throw MediaError(.unsupported, "the packets vary in \(bpp == 0 ? "size" : "frames") and no packet table (pakt) came before the audio: a packet table after it cannot be read from a source that cannot seek (read the file instead)",
                                     path: path, offset: data.offset, context: "pakt")
                }
                throw MediaError(.invalidData, "the packets vary in \(bpp == 0 ? "size" : "frames") but the file has no packet table (pakt)",
                                 path: path, offset: data.offset, context: "pakt")
            }
            // Every description takes at least one byte: a count the chunk cannot hold is damage.
            guard h.packets >= 0, h.packets <= Int64(pakt.body.count - 24) else {
                throw MediaError(.invalidData, "the packet table says \(h.packets) packets in \(pakt.body.count - 24) bytes of descriptions",
                                 path: path, offset: pakt.offset + 12, context: "pakt")
            }
            let n = Int(h.packets)
            offsets.reserveCapacity(n + 1)
            frames.reserveCapacity(n + 1)
            var i = 24, at: Int64 = 0, t: Int64 = 0
            for k in 0..<n {
                offsets.append(at)
                frames.append(t)
                let size = bpp > 0 ? Int64(bpp) : CAFChunks.readVarint(pakt.body, &i)
                let length = fpp > 0 ? fpp : CAFChunks.readVarint(pakt.body, &i)
                guard let size, let length else {
                    throw MediaError(.invalidData, "packet description \(k) of \(n) runs past the end of the packet table", path: path,
                                     offset: pakt.offset + 12 + Int64(i), context: "pakt")
                }
                guard size <= Self.packetLimit, length <= Int64(Int32.max) else {
                    throw MediaError(.limit, "packet \(k) is \(size) bytes of \(length) frames (MediaKit reads packets up to \(Self.packetLimit) bytes)",
                                     path: path, offset: pakt.offset + 12 + Int64(i), context: "pakt")
                }
                at += size
                t += length
            }
            offsets.append(at)
            frames.append(t)
            total = t
            count = n
        }
        if let h = tableHeader, h.primingFrames >= 0, h.remainderFrames >= 0,
           Int64(h.primingFrames) + Int64(h.remainderFrames) <= total, h.primingFrames > 0 || h.remainderFrames > 0 {
            trims = (Int64(h.primingFrames), Int64(h.remainderFrames))
        }
        self.offsets = offsets
        self.frames = frames
        self.runBytes = runBytes

        let sampleRate = Int(rate.rounded())
        var bitRate = 0
        if bpp > 0 && fpp > 0 {
            bitRate = Int(clamping: Int64(min(9e18, Double(sampleRate) * Double(bpp) * 8 / Double(fpp))))
        } else if total > 0, let dataBytes {
            // FFmpeg's integer rule: the bytes per frame rounded down first.
            bitRate = Int(clamping: Int64(min(9e18, Double(sampleRate) * 8 * Double(dataBytes / total))))
        }
        var p = CodecParameters(mediaType: .audio, codec: codec, codecTag: desc.formatName, extradata: extradata, sampleRate: sampleRate,
                                channels: Int(desc.channels), bitsPerCodedSample: Int(desc.bitsPerChannel), blockAlign: bpp, bitRate: bitRate)
        if let chan { p.channelMask = CAFChunks.ChannelLayout.mask(chan) }
        var track = Track(index: 0, id: 0, parameters: p, timeBase: Rational(1, Int64(sampleRate)), duration: total,
                          sampleCount: count, unsupportedReason: unsupported)
        if let trims {
            track.encoderDelay = Int(trims.priming)
            track.encoderPadding = Int(trims.remainder)
        }
        tracks = [track]
        duration = total > 0 || dataBytes != nil ? Double(total) / rate : nil
    }

    private func packet(_ c: inout Cursor) throws -> Packet? {
        if try c.cut.check() { return nil }
        let bpp = Int64(desc.bytesPerPacket)
        let left = dataEnd.map { $0 - dataStart - c.offset }
        if let left, left <= 0 { return nil }
        var size: Int64, length: Int64
        if runBytes > 0 {
            size = min(Int64(runBytes), left ?? Int64(runBytes))
            length = size / bpp
        } else if offsets.isEmpty {
            size = bpp
            length = Int64(desc.framesPerPacket)
        } else {
            guard c.index + 1 < offsets.count else { return nil }
            size = offsets[c.index + 1] - offsets[c.index]
            length = frames[c.index + 1] - frames[c.index]
        }
        // A packet the data chunk does not hold whole: FFmpeg stops there (a run is cut to it).
        if let left, size > left, !openEnded { return nil }
        let start = dataStart + c.offset
        let bytes = try source.readUpTo(at: start, count: Int(size))
        var truncated = false
        if bytes.count < Int(size) {
            if bytes.isEmpty && openEnded { return nil }
            if openEnded {
                // The end of a recording of unknown length: what is there is the last packet
                // (whole frames of a run, else a packet cut short).
                truncated = runBytes == 0 || Int64(bytes.count) % bpp != 0
            } else {
                c.cut.cut(MediaError(.truncated, "the data chunk says \((dataEnd ?? 0) - dataStart) bytes of audio but the file ends after \(c.offset + Int64(bytes.count))",
                                     path: path, offset: start + Int64(bytes.count), context: "data"))
                if bytes.isEmpty { _ = try c.cut.check(); return nil }
                truncated = true
            }
            if runBytes > 0 { length = Int64(bytes.count) / bpp }
        }
        var pts = c.frame
        if length == 0 { pts = Packet.noTimestamp }
        var p = Packet(trackIndex: 0, pts: pts, dts: pts, duration: length, isKeyframe: true, position: start, data: bytes, timeBase: tracks[0].timeBase)
        p.isTruncated = truncated
        c.offset += Int64(bytes.count)
        c.frame += length
        c.index += 1
        return p
    }

    public func read() throws -> Packet? { try packet(&position) }

    public func read(track: Int) throws -> Packet? {
        guard track == 0 else { throw MediaError(.invalidArgument, "track \(track) does not exist (the file has 1)", path: path) }
        return try packet(&trackPosition)
    }

    /// Moves to the packet holding the frame at `seconds` (for linear PCM the frame itself),
    /// clamped to the end of the audio.
    public func seek(to seconds: Double) throws {
        guard source.isSeekable else { throw MediaError(.unsupported, "seeking needs a seekable source (a file or memory)", path: path) }
        let wanted = seconds * desc.sampleRate
        let target = wanted > 0 ? Int64(min(wanted, 9e15)) : 0
        var c = Cursor()
        let bpp = Int64(desc.bytesPerPacket), fpp = Int64(desc.framesPerPacket)
        if offsets.isEmpty {
            var index = target / max(1, fpp)
            if let end = dataEnd { index = min(index, max(0, end - dataStart) / max(1, bpp)) }
            // Below the data's size over bpp, and the target over fpp: the products fit.
            c.offset = index.multipliedReportingOverflow(by: bpp).partialValue
            c.frame = index.multipliedReportingOverflow(by: fpp).partialValue
        } else {
            // The last packet starting at or before the target.
            var lo = 0, hi = offsets.count - 2
            if hi < 0 { hi = 0 }
            while lo < hi {
                let mid = (lo + hi + 1) / 2
                if frames[mid] <= target { lo = mid } else { hi = mid - 1 }
            }
            c.index = lo
            c.offset = offsets[lo]
            c.frame = frames[lo]
        }
        position = c
        trackPosition = c
    }

    public func select(tracks: Set<Int>?) {}
}
