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

    init(totalBytes: Int64?) { parser = AudioStreamParser(totalBytes: totalBytes) }
    deinit { held?.deallocate() }

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
