import CMediaKitPlugin

/// One encoder instance of a plugin (plugin ABI 2.1's encoder vtable) and the send / receive
/// / drain bookkeeping that audio (``PluginEncoder``) and video (``PluginVideoEncoder``) share:
/// a frame refused with EAGAIN is sent again after the waiting packets are received (they are
/// handed out first), the end of stream is sent again while the plugin refuses it, and EOF
/// marks the end. Destroys the instance on deinit.
final class PluginEncoderInstance: @unchecked Sendable {
    let instance: UnsafeMutableRawPointer
    let vtable: UnsafePointer<mk_plugin_encoder_vtable>
    /// "ffmpeg h264 encoder": the context of every error.
    let context: String
    /// The time base of the packets (from get_info).
    var timeBase = Rational(1, 1)
    /// Packets received while a frame was refused (EAGAIN), handed out first.
    private var ready: [Packet] = []
    /// Where the stream stands: the one record of draining between the plugin and the
    /// layers above (they pass ``EncoderOutput/endOfStream`` on).
    private(set) var stage = DrainStage.decoding
    /// Called once when the plugin says EOF after draining (the audio side reads the final cookie).
    var onEnd: (() -> Void)?

    init(instance: UnsafeMutableRawPointer, vtable: UnsafePointer<mk_plugin_encoder_vtable>, context: String) {
        self.instance = instance
        self.vtable = vtable
        self.context = context
    }

    deinit { vtable.pointee.destroy(instance) }

    /// Checks the vtable `create` returned (2.1's functions all set); destroys the instance and
    /// throws `.pluginABI` when one is missing.
    static func checkVtable(_ vt: UnsafePointer<mk_plugin_encoder_vtable>, instance: UnsafeMutableRawPointer,
                            _ b: MediaRegistry.EncoderBackend) throws {
        guard vt.pointee.struct_size >= PluginLoader.endOf(\mk_plugin_encoder_vtable.last_error),
              vt.pointee.get_info != nil, vt.pointee.send_frame != nil, vt.pointee.receive_packet != nil,
              vt.pointee.destroy != nil, vt.pointee.last_error != nil else {
            vt.pointee.destroy?(instance)
            throw MediaError(.pluginABI, "the \(b.plugin.name) \(b.codec) encoder returned an incomplete vtable", path: b.plugin.path)
        }
    }

    /// The plugin's get_info, with this header's struct size; nil when it fails.
    func info() -> mk_plugin_encoder_info? {
        var info = mk_plugin_encoder_info()
        info.struct_size = UInt32(MemoryLayout<mk_plugin_encoder_info>.size)
        return vtable.pointee.get_info(instance, &info) == MK_OK ? info : nil
    }

    /// The plugin's message for its last failure with `status` and `what` as a ``MediaError``.
    func failure(_ status: Int32, _ what: String) -> MediaError {
        let detail = vtable.pointee.last_error.flatMap { $0(instance) }.map { String(cString: $0) } ?? ""
        return MediaError(pluginStatus: status, what, detail: detail, context: context)
    }

    /// Sends `frame`; on EAGAIN receives the waiting packets (kept for ``receiveOutput()``) and
    /// sends it again. `what` names the frame in errors.
    func send(_ frame: inout mk_plugin_frame, what: @autoclosure () -> String) throws {
        if stage != .decoding { throw MediaError(.state, "send after flush(): an encoder codes one stream", context: context) }
        while true {
            let status = vtable.pointee.send_frame(instance, &frame)
            switch status {
            case MK_OK: return
            case MK_EAGAIN:
                let before = ready.count
                while let p = try receivePlugin() { ready.append(p) }
                if ready.count == before {
                    throw MediaError(.backend, "the encoder refuses a frame (EAGAIN) but has no packet to give", context: context)
                }
            default: throw failure(status, "encoding \(what())")
            }
        }
    }

    /// Enters draining: sends the end-of-stream (NULL) frame once; later calls do nothing.
    func flush() throws {
        guard stage == .decoding else { return }
        stage = .draining(endOfStreamSent: false)
        try sendEndOfStream()
    }

    /// Sends the end-of-stream frame; an encoder with packets waiting refuses it (EAGAIN), and
    /// ``receiveOutput()`` sends it again once they are received.
    private func sendEndOfStream() throws {
        let status = vtable.pointee.send_frame(instance, nil)
        if status == MK_EAGAIN { return }
        stage = .draining(endOfStreamSent: true)
        if status != MK_OK && status != MK_EOF { throw failure(status, "draining") }
    }

    /// The next packet, ``EncoderOutput/needsInput`` or, drained, ``EncoderOutput/endOfStream``.
    func receiveOutput() throws -> EncoderOutput {
        if !ready.isEmpty { return .packet(ready.removeFirst()) }
        if stage == .ended { return .endOfStream }
        if let p = try receivePlugin() { return .packet(p) }
        if stage == .draining(endOfStreamSent: false) {
            try sendEndOfStream()
            if stage == .draining(endOfStreamSent: false) {
                throw MediaError(.backend, "the encoder refuses the end of the stream (EAGAIN) but has no packet to give", context: context)
            }
            if let p = try receivePlugin() { return .packet(p) }
        }
        return stage == .ended ? .endOfStream : .needsInput
    }

    /// One packet from the plugin, nil on EAGAIN or EOF (which, while draining, marks the
    /// encoder ended).
    private func receivePlugin() throws -> Packet? {
        var p = mk_plugin_encoded_packet()
        p.struct_size = UInt32(MemoryLayout<mk_plugin_encoded_packet>.size)
        let status = vtable.pointee.receive_packet(instance, &p)
        switch status {
        case MK_OK:
            let data = Self.bytes(p.data, p.size)
            return Packet(trackIndex: 0, pts: p.pts, dts: p.dts, duration: p.duration, isKeyframe: p.flags & MK_PACKET_FLAG_KEY != 0,
                          data: data, timeBase: timeBase)
        case MK_EAGAIN: return nil
        case MK_EOF:
            if stage != .decoding && stage != .ended {
                stage = .ended
                onEnd?()
            }
            return nil
        default: throw failure(status, "receiving a packet")
        }
    }

    /// A copy of `n` bytes at `p` ([] for none).
    static func bytes(_ p: UnsafePointer<UInt8>?, _ n: Int) -> [UInt8] {
        guard let p, n > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: p, count: n))
    }
}
