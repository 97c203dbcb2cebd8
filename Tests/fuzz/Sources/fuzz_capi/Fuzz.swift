import CMediaKitAPI
import Foundation

/// Decode too (set MK_FUZZ_DECODE=1, with the plugins where mk_plugins_load finds them): every
/// packet of each track through mk_decode_session_open's backend, as mk_decode_file does.
private let decode = ProcessInfo.processInfo.environment["MK_FUZZ_DECODE"] == "1"

/// libFuzzer's entry point: the C API on one memory file: mk_demuxer_open_memory, every track's
/// info, every packet in file order, seeks, every packet of each track, the warnings, and
/// (with MK_FUZZ_DECODE=1) decoding.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    var dmx: OpaquePointer?
    guard mk_demuxer_open_memory(&dmx, data, size) == MK_OK, dmx != nil else { return 0 }
    defer { mk_demuxer_close(&dmx) }
    var count: Int32 = 0
    _ = mk_demuxer_track_count(dmx, &count)
    var seconds = 0.0
    _ = mk_demuxer_duration(dmx, &seconds)
    for t in 0..<count {
        var info = mk_track_info()
        info.struct_size = UInt32(MemoryLayout<mk_track_info>.size)
        if mk_demuxer_track(dmx, t, &info) == MK_OK, info.extradata_size > 0 {
            _ = info.extradata[info.extradata_size - 1]
        }
    }
    readAll(dmx, limit: 1 << 17) { mk_demuxer_read_packet(dmx, &$0) }
    for target in [0, seconds / 2, 1e9, -1, .nan] {
        _ = mk_demuxer_seek(dmx, target)
        readAll(dmx, limit: 16) { mk_demuxer_read_packet(dmx, &$0) }
    }
    for t in 0..<count {
        _ = mk_demuxer_seek(dmx, 0)
        readAll(dmx, limit: 1 << 17) { mk_demuxer_read_track_packet(dmx, t, &$0) }
        if decode { decodeTrack(dmx, t) }
    }
    var warnings: Int32 = 0
    _ = mk_demuxer_warning_count(dmx, &warnings)
    for w in 0..<warnings {
        var message: UnsafePointer<CChar>?
        if mk_demuxer_warning(dmx, w, &message) == MK_OK, let message { _ = strlen(message) }
    }
    return 0
}

/// Reads packets with `read` until it fails or `limit` were read, touching each one's bytes.
private func readAll(_ dmx: OpaquePointer?, limit: Int, _ read: (inout OpaquePointer?) -> mk_status) {
    for _ in 0..<limit {
        var pkt: OpaquePointer?
        guard read(&pkt) == MK_OK else { return }
        var info = mk_packet_info()
        info.struct_size = UInt32(MemoryLayout<mk_packet_info>.size)
        if mk_packet_get_info(pkt, &info) == MK_OK, info.size > 0 { _ = info.data[info.size - 1] }
        mk_packet_free(&pkt)
    }
}

/// Decodes track `track` from the start, receiving every frame; stops at the first error.
private func decodeTrack(_ dmx: OpaquePointer?, _ track: Int32) {
    var dec: OpaquePointer?
    guard mk_decode_session_open(&dec, dmx, track, nil) == MK_OK else { return }
    defer { mk_decode_session_close(&dec) }
    _ = mk_demuxer_seek(dmx, 0)
    func drainFrames() {
        var frame: OpaquePointer?
        while mk_decode_session_receive_frame(dec, &frame) == MK_OK { mk_frame_free(&frame) }
    }
    for _ in 0..<256 {
        var pkt: OpaquePointer?
        guard mk_demuxer_read_track_packet(dmx, track, &pkt) == MK_OK else { break }
        let status = mk_decode_session_send_packet(dec, pkt)
        mk_packet_free(&pkt)
        guard status == MK_OK else { return }
        drainFrames()
    }
    _ = mk_decode_session_send_packet(dec, nil)
    drainFrames()
}
