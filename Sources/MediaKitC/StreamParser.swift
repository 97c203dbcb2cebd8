// The C API of AudioStreamParser: mk_stream_parser_* (Include/mediakit/mediakit.h).
import CMediaKit
import MediaKit

/// A parser and the events it reported that the caller has not taken yet.
final class StreamParserHandle: NamedHandle {
    static var kind: String { "stream parser" }
    let parser: AudioStreamParser
    /// Events as the parser reported them (a list of packets is one); the next to hand out is
    /// `events[head]`, and within a list of packets its packet `packet`.
    var events: [AudioStreamParser.Event] = []
    var head = 0
    var packet = 0
    /// Keeps the strings and bytes of the event last handed out alive until the next call.
    var text = CString("")
    private var held: UnsafeMutableBufferPointer<UInt8>?
    /// The strings mk_stream_parser_properties / _format_at lend (until the next call).
    var lent: [CString] = []
    var cookie: UnsafeMutableBufferPointer<UInt8>?
    /// The tags' strings, made on the first tag call after a push that changed them.
    private var strings: MetadataStrings?
    private var stringsOf: (Metadata, Int, Int)?

    /// The tags, attachments and chapters as C strings (kept until they change).
    var metadataStrings: MetadataStrings {
        let key = (parser.metadata, parser.attachments.count, parser.chapters.count)
        if let s = strings, let k = stringsOf, k == key { return s }
        let s = MetadataStrings(metadata: parser.metadata, tracks: [], chapters: parser.chapters, attachments: parser.attachments)
        strings = s
        stringsOf = key
        return s
    }

    /// A C string that stays put until the next properties call.
    func lend(_ s: String) -> UnsafePointer<CChar> {
        let c = CString(s)
        lent.append(c)
        return UnsafePointer(c.pointer)
    }

    init(totalBytes: Int64?, fileTypeHint: String? = nil) { parser = AudioStreamParser(totalBytes: totalBytes, fileTypeHint: fileTypeHint) }
    deinit { held?.deallocate(); cookie?.deallocate() }

    /// A copy of `bytes` that stays put until the next call (NULL for none).
    func hold(_ bytes: [UInt8]) -> UnsafePointer<UInt8>? {
        held?.deallocate()
        held = nil
        guard !bytes.isEmpty else { return nil }
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: bytes.count)
        _ = copy.initialize(from: bytes)
        held = copy
        return UnsafePointer(copy.baseAddress)
    }

    /// Queues events (no copy of their packets).
    func queue(_ new: [AudioStreamParser.Event]) {
        if head == events.count { events.removeAll(keepingCapacity: true); head = 0 }
        events += new
    }

    /// The next event to hand out and, for a list of packets, the one packet it gives now (a
    /// list gives one packet at a time); nil when none is left.
    func next() -> (event: AudioStreamParser.Event, packet: AudioStreamParser.Packet?)? {
        while head < events.count {
            let e = events[head]
            guard case .packets(let list) = e else {
                head += 1
                return (e, nil)
            }
            guard packet < list.count else {
                head += 1
                packet = 0
                continue
            }
            packet += 1
            return (e, list[packet - 1])
        }
        return nil
    }
}

@_cdecl("mk_stream_parser_open")
public func mk_stream_parser_open(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ totalBytes: Int64) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_stream_parser_open: out is NULL") }
    out.pointee = Handles.make(StreamParserHandle(totalBytes: totalBytes >= 0 ? totalBytes : nil))
    return MK_OK
}

@_cdecl("mk_stream_parser_open_hint")
public func mk_stream_parser_open_hint(_ out: UnsafeMutablePointer<OpaquePointer?>?, _ totalBytes: Int64, _ hint: UnsafePointer<CChar>?) -> Int32 {
    guard let out else { return fail(MK_EINVAL, "mk_stream_parser_open_hint: out is NULL") }
    let h = StreamParserHandle(totalBytes: totalBytes >= 0 ? totalBytes : nil, fileTypeHint: hint.map { String(cString: $0) })
    out.pointee = Handles.make(h)
    return MK_OK
}

@_cdecl("mk_stream_parser_push")
public func mk_stream_parser_push(_ p: OpaquePointer?, _ data: UnsafePointer<UInt8>?, _ size: Int, _ discontinuity: Int32) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_push") else { return MK_EINVAL }
    guard data != nil || size == 0 else { return fail(MK_EINVAL, "mk_stream_parser_push: data is NULL") }
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    return guarded {
        h.queue(try h.parser.push(bytes, discontinuity: discontinuity != 0))
        return MK_OK
    }
}

@_cdecl("mk_stream_parser_finish")
public func mk_stream_parser_finish(_ p: OpaquePointer?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_finish") else { return MK_EINVAL }
    h.queue(h.parser.finish())
    return MK_OK
}

@_cdecl("mk_stream_parser_next_event")
public func mk_stream_parser_next_event(_ p: OpaquePointer?, _ event: UnsafeMutablePointer<mk_stream_event>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_next_event") else { return MK_EINVAL }
    guard let event else { return fail(MK_EINVAL, "mk_stream_parser_next_event: event is NULL") }
    guard sizeOK(event.pointee.struct_size, MemoryLayout<mk_stream_event>.size, "mk_stream_event") else { return MK_EINVAL }
    guard let (e, onePacket) = h.next() else { return MK_EAGAIN }
    var out = mk_stream_event()
    out.struct_size = event.pointee.struct_size
    var text = ""
    var bytes: [UInt8] = []
    switch e {
    case .fileFormat(let f): out.kind = MK_STREAM_EVENT_FILE_FORMAT; text = f
    case .dataFormat(let f):
        out.kind = MK_STREAM_EVENT_DATA_FORMAT; text = f.codec.rawValue
        out.sample_rate = Int32(clamping: f.sampleRate); out.channels = Int32(clamping: f.channels)
        out.frames_per_packet = Int32(clamping: f.framesPerPacket)
    case .magicCookie(let c): out.kind = MK_STREAM_EVENT_MAGIC_COOKIE; bytes = c
    case .dataOffset(let o): out.kind = MK_STREAM_EVENT_DATA_OFFSET; out.offset = o
    case .audioDataByteCount(let n): out.kind = MK_STREAM_EVENT_BYTE_COUNT; out.value = n
    case .audioDataPacketCount(let n): out.kind = MK_STREAM_EVENT_PACKET_COUNT; out.value = n
    case .bitRate(let r, let exact): out.kind = MK_STREAM_EVENT_BIT_RATE; out.value = Int64(r); out.flags = exact ? 1 : 0
    case .duration(let d, let estimated): out.kind = MK_STREAM_EVENT_DURATION; out.seconds = d; out.flags = estimated ? 1 : 0
    case .encoderDelayAndPadding(let d, let pad): out.kind = MK_STREAM_EVENT_GAPLESS; out.value = Int64(d); out.value2 = Int64(pad)
    case .tags(let t): out.kind = MK_STREAM_EVENT_TAGS; text = t.title ?? ""
    case .readyToProducePackets: out.kind = MK_STREAM_EVENT_READY
    case .packets:
        guard let packet = onePacket else { return MK_EAGAIN }
        out.kind = MK_STREAM_EVENT_PACKET; out.offset = packet.offset; bytes = packet.data
        out.frames = Int32(clamping: packet.frames); out.flags = packet.isTruncated ? 1 : 0
    case .warning(let w): out.kind = MK_STREAM_EVENT_WARNING; text = w.description
    case .discontinuity(let at, let skipped): out.kind = MK_STREAM_EVENT_DISCONTINUITY; out.offset = at; out.value = skipped
    }
    h.text = CString(text)
    out.text = UnsafePointer(h.text.pointer)
    out.size = bytes.count
    out.data = h.hold(bytes)
    let count = min(Int(out.struct_size), MemoryLayout<mk_stream_event>.size)
    withUnsafeBytes(of: out) { UnsafeMutableRawPointer(event).copyMemory(from: $0.baseAddress!, byteCount: count) }
    return MK_OK
}

@_cdecl("mk_stream_parser_seek")
public func mk_stream_parser_seek(_ p: OpaquePointer?, _ seconds: Double, _ offset: UnsafeMutablePointer<Int64>?,
                                  _ packet: UnsafeMutablePointer<Int64>?, _ exact: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_seek") else { return MK_EINVAL }
    guard seconds.isFinite else { return fail(MK_EINVAL, "mk_stream_parser_seek: seconds is not a number") }
    guard let target = h.parser.seek(to: seconds) else {
        return fail(MK_ESTATE, "mk_stream_parser_seek: no frame parsed yet to seek with")
    }
    offset?.pointee = target.offset
    packet?.pointee = target.packet
    exact?.pointee = target.exact ? 1 : 0
    return MK_OK
}

@_cdecl("mk_stream_parser_close")
public func mk_stream_parser_close(_ p: UnsafeMutablePointer<OpaquePointer?>?) {
    Handles.release(p, as: StreamParserHandle.self)
}

@_cdecl("mk_stream_parser_properties")
public func mk_stream_parser_properties(_ p: OpaquePointer?, _ props: UnsafeMutablePointer<mk_stream_properties>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_properties") else { return MK_EINVAL }
    guard let props else { return fail(MK_EINVAL, "mk_stream_parser_properties: props is NULL") }
    guard sizeOK(props.pointee.struct_size, MemoryLayout<mk_stream_properties>.size, "mk_stream_properties") else { return MK_EINVAL }
    let sp = h.parser
    h.lent.removeAll()
    var out = mk_stream_properties()
    out.struct_size = props.pointee.struct_size
    let f = sp.dataFormat
    let list = sp.formatList
    out.ready = sp.dataOffset != nil ? 1 : 0
    out.file_format = h.lend(sp.fileFormat ?? "")
    out.codec = h.lend(f?.codec.rawValue ?? "")
    out.profile = h.lend(list.first?.profile ?? "")
    out.sample_rate = Int32(clamping: f?.sampleRate ?? 0)
    out.channels = Int32(clamping: f?.channels ?? 0)
    out.frames_per_packet = Int32(clamping: f?.framesPerPacket ?? 0)
    out.channel_mask = sp.channelMask ?? 0
    h.cookie?.deallocate()
    h.cookie = nil
    if let c = sp.magicCookie, !c.isEmpty {
        let copy = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: c.count)
        _ = copy.initialize(from: c)
        h.cookie = copy
        out.magic_cookie = UnsafePointer(copy.baseAddress)
        out.magic_cookie_size = c.count
    }
    out.data_offset = sp.dataOffset ?? -1
    out.audio_data_byte_count = sp.audioDataByteCount?.bytes ?? -1
    out.byte_count_estimated = sp.audioDataByteCount?.estimated == true ? 1 : 0
    out.audio_data_packet_count = sp.audioDataPacketCount?.packets ?? -1
    out.packet_count_estimated = sp.audioDataPacketCount?.estimated == true ? 1 : 0
    out.maximum_packet_size = Int32(clamping: sp.maximumPacketSize)
    out.packet_size_upper_bound = Int32(clamping: sp.packetSizeUpperBound ?? 0)
    out.average_bytes_per_packet = sp.averageBytesPerPacket ?? 0
    out.bit_rate = sp.bitRate.map { Int64($0.bitsPerSecond) } ?? -1
    out.bit_rate_exact = sp.bitRate?.exact == true ? 1 : 0
    out.duration = sp.duration?.seconds ?? -1
    out.duration_estimated = sp.duration?.estimated == true ? 1 : 0
    let table = sp.packetTableInfo
    out.priming_frames = table?.primingFrames ?? -1
    out.remainder_frames = table?.remainderFrames ?? -1
    out.valid_frames = table?.validFrames ?? -1
    out.packets_parsed = sp.packetCount
    out.bytes_parsed = sp.audioBytes
    out.format_count = Int32(clamping: list.count)
    let count = min(Int(out.struct_size), MemoryLayout<mk_stream_properties>.size)
    withUnsafeBytes(of: out) { UnsafeMutableRawPointer(props).copyMemory(from: $0.baseAddress!, byteCount: count) }
    return MK_OK
}

@_cdecl("mk_stream_parser_format_at")
public func mk_stream_parser_format_at(_ p: OpaquePointer?, _ index: Int32, _ format: UnsafeMutablePointer<mk_stream_format>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_format_at") else { return MK_EINVAL }
    guard let format else { return fail(MK_EINVAL, "mk_stream_parser_format_at: format is NULL") }
    guard sizeOK(format.pointee.struct_size, MemoryLayout<mk_stream_format>.size, "mk_stream_format") else { return MK_EINVAL }
    let list = h.parser.formatList
    guard index >= 0 && Int(index) < list.count else {
        return fail(MK_EINVAL, "mk_stream_parser_format_at: format \(index) does not exist (there are \(list.count))")
    }
    h.lent.removeAll()
    let f = list[Int(index)]
    var out = mk_stream_format()
    out.struct_size = format.pointee.struct_size
    out.codec = h.lend(f.codec.rawValue)
    out.profile = h.lend(f.profile ?? "")
    out.sample_rate = Int32(clamping: f.sampleRate)
    out.channels = Int32(clamping: f.channels)
    out.frames_per_packet = Int32(clamping: f.framesPerPacket)
    let count = min(Int(out.struct_size), MemoryLayout<mk_stream_format>.size)
    withUnsafeBytes(of: out) { UnsafeMutableRawPointer(format).copyMemory(from: $0.baseAddress!, byteCount: count) }
    return MK_OK
}

/// The parser of `p` once its format is known, else the failure status (MK_EINVAL / MK_ESTATE).
private func formatKnown(_ p: OpaquePointer?, _ name: String) -> Result<AudioStreamParser, MKStatusError> {
    guard let h = liveHandle(StreamParserHandle.self, p, name) else { return .failure(MKStatusError(status: MK_EINVAL)) }
    guard h.parser.dataFormat != nil else { return .failure(MKStatusError(status: fail(MK_ESTATE, "\(name): the format is not known yet"))) }
    return .success(h.parser)
}

/// A status already reported through fail().
struct MKStatusError: Error { let status: Int32 }

@_cdecl("mk_stream_parser_packet_to_frame")
public func mk_stream_parser_packet_to_frame(_ p: OpaquePointer?, _ packet: Int64, _ frame: UnsafeMutablePointer<Int64>?) -> Int32 {
    guard let frame else { return fail(MK_EINVAL, "mk_stream_parser_packet_to_frame: frame is NULL") }
    switch formatKnown(p, "mk_stream_parser_packet_to_frame") {
    case .failure(let e): return e.status
    case .success(let sp):
        guard packet >= 0, let f = sp.packetToFrame(packet) else { return fail(MK_EINVAL, "mk_stream_parser_packet_to_frame: packet \(packet) is negative") }
        frame.pointee = f
        return MK_OK
    }
}

@_cdecl("mk_stream_parser_frame_to_packet")
public func mk_stream_parser_frame_to_packet(_ p: OpaquePointer?, _ frame: Int64, _ packet: UnsafeMutablePointer<Int64>?,
                                             _ frameOffset: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let packet else { return fail(MK_EINVAL, "mk_stream_parser_frame_to_packet: packet is NULL") }
    switch formatKnown(p, "mk_stream_parser_frame_to_packet") {
    case .failure(let e): return e.status
    case .success(let sp):
        guard let r = sp.frameToPacket(frame) else { return fail(MK_EINVAL, "mk_stream_parser_frame_to_packet: frame \(frame) is negative") }
        packet.pointee = r.packet
        frameOffset?.pointee = Int32(r.frameOffset)
        return MK_OK
    }
}

@_cdecl("mk_stream_parser_packet_to_byte")
public func mk_stream_parser_packet_to_byte(_ p: OpaquePointer?, _ packet: Int64, _ offset: UnsafeMutablePointer<Int64>?,
                                            _ estimated: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let offset else { return fail(MK_EINVAL, "mk_stream_parser_packet_to_byte: offset is NULL") }
    switch formatKnown(p, "mk_stream_parser_packet_to_byte") {
    case .failure(let e): return e.status
    case .success(let sp):
        guard packet >= 0 else { return fail(MK_EINVAL, "mk_stream_parser_packet_to_byte: packet \(packet) is negative") }
        guard let r = sp.packetToByte(packet) else { return fail(MK_ESTATE, "mk_stream_parser_packet_to_byte: no packet parsed yet") }
        offset.pointee = r.offset
        estimated?.pointee = r.estimated ? 1 : 0
        return MK_OK
    }
}

@_cdecl("mk_stream_parser_byte_to_packet")
public func mk_stream_parser_byte_to_packet(_ p: OpaquePointer?, _ offset: Int64, _ packet: UnsafeMutablePointer<Int64>?,
                                            _ byteOffset: UnsafeMutablePointer<Int32>?, _ estimated: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let packet else { return fail(MK_EINVAL, "mk_stream_parser_byte_to_packet: packet is NULL") }
    switch formatKnown(p, "mk_stream_parser_byte_to_packet") {
    case .failure(let e): return e.status
    case .success(let sp):
        guard let r = sp.byteToPacket(offset) else {
            return fail(MK_ESTATE, "mk_stream_parser_byte_to_packet: no packet parsed yet, or offset \(offset) is before the audio data")
        }
        packet.pointee = r.packet
        byteOffset?.pointee = Int32(clamping: r.byteOffset)
        estimated?.pointee = r.estimated ? 1 : 0
        return MK_OK
    }
}

@_cdecl("mk_stream_parser_tag_count")
public func mk_stream_parser_tag_count(_ p: OpaquePointer?, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_tag_count") else { return MK_EINVAL }
    guard let count else { return fail(MK_EINVAL, "mk_stream_parser_tag_count: count is NULL") }
    count.pointee = Int32(clamping: h.metadataStrings.format.count)
    return MK_OK
}

@_cdecl("mk_stream_parser_tag_at")
public func mk_stream_parser_tag_at(_ p: OpaquePointer?, _ index: Int32, _ key: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                    _ native: UnsafeMutablePointer<UnsafePointer<CChar>?>?, _ value: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_tag_at") else { return MK_EINVAL }
    return lend(h.metadataStrings.format, index, "mk_stream_parser_tag_at", key, native, value)
}

@_cdecl("mk_stream_parser_attachment_count")
public func mk_stream_parser_attachment_count(_ p: OpaquePointer?, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_attachment_count") else { return MK_EINVAL }
    guard let count else { return fail(MK_EINVAL, "mk_stream_parser_attachment_count: count is NULL") }
    count.pointee = Int32(clamping: h.metadataStrings.attachments.count)
    return MK_OK
}

@_cdecl("mk_stream_parser_attachment_at")
public func mk_stream_parser_attachment_at(_ p: OpaquePointer?, _ index: Int32, _ data: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
                                           _ size: UnsafeMutablePointer<Int64>?, _ mime: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                           _ pictureType: UnsafeMutablePointer<Int32>?, _ description: UnsafeMutablePointer<UnsafePointer<CChar>?>?,
                                           _ fileName: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_attachment_at") else { return MK_EINVAL }
    return lendAttachment(h.metadataStrings, index, "mk_stream_parser_attachment_at", data, size, mime, pictureType, description, fileName)
}

@_cdecl("mk_stream_parser_chapter_count")
public func mk_stream_parser_chapter_count(_ p: OpaquePointer?, _ count: UnsafeMutablePointer<Int32>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_chapter_count") else { return MK_EINVAL }
    guard let count else { return fail(MK_EINVAL, "mk_stream_parser_chapter_count: count is NULL") }
    count.pointee = Int32(clamping: h.metadataStrings.chapters.count)
    return MK_OK
}

@_cdecl("mk_stream_parser_chapter_at")
public func mk_stream_parser_chapter_at(_ p: OpaquePointer?, _ index: Int32, _ start: UnsafeMutablePointer<Int64>?, _ end: UnsafeMutablePointer<Int64>?,
                                        _ timeBaseNum: UnsafeMutablePointer<Int64>?, _ timeBaseDen: UnsafeMutablePointer<Int64>?,
                                        _ title: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    guard let h = liveHandle(StreamParserHandle.self, p, "mk_stream_parser_chapter_at") else { return MK_EINVAL }
    return lendChapter(h.metadataStrings, index, "mk_stream_parser_chapter_at", start, end, timeBaseNum, timeBaseDen, title)
}
