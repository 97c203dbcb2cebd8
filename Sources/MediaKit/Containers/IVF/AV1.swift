/// The little of AV1 (AV1 bitstream specification, sections 5.3-5.9) the IVF demuxer reads:
/// OBU headers, the sequence header's `reduced_still_picture_header`, and each frame
/// header's `show_existing_frame`, `frame_type` and `show_frame`.
enum AV1 {
    /// What carries over from one temporal unit to the next.
    struct State: Sendable {
        /// From the last sequence header: frame headers are reduced (always key frames).
        var reducedStillPicture = false
    }

    /// OBU types.
    static let sequenceHeader = 1, frameHeader = 3, frame = 6

    /// The key-frame flag as FFmpeg's AV1 parser sets it: over the frame headers of
    /// spatial layer 0 that are shown or showable, the last one decides; it is a key frame
    /// when its frame_type is KEY_FRAME and show_frame is set. A temporal unit with only
    /// `show_existing_frame` headers is not a key frame.
    static func isKeyframe(_ data: [UInt8], state: inout State) -> Bool {
        var key = false
        var i = 0
        while i < data.count {
            let header = data[i]
            let type = Int(header >> 3) & 15
            let hasExtension = header & 4 != 0
            let hasSize = header & 2 != 0
            var p = i + 1
            var spatial = 0
            if hasExtension {
                guard p < data.count else { break }
                spatial = Int(data[p] >> 3) & 3
                p += 1
            }
            var size = data.count - p
            if hasSize {
                var value = 0, shift = 0
                var ok = false
                while p < data.count && shift < 56 {
                    let b = data[p]
                    p += 1
                    value |= Int(b & 0x7F) << shift
                    shift += 7
                    if b & 0x80 == 0 { ok = true; break }
                }
                guard ok else { break }
                size = value
            }
            guard size >= 0, p + size <= data.count else { break }
            let payload = data[p..<p + size]
            if type == sequenceHeader, payload.count >= 1 {
                // seq_profile (3), still_picture (1), reduced_still_picture_header (1)
                state.reducedStillPicture = (payload[payload.startIndex] >> 3) & 1 == 1
            } else if (type == frameHeader || type == frame) && spatial == 0, let first = payload.first {
                if state.reducedStillPicture {
                    key = true
                } else if first & 0x80 == 0 {       // show_existing_frame == 0
                    let frameType = Int(first >> 5) & 3
                    let showFrame = (first >> 4) & 1 == 1
                    let showable = showFrame ? frameType != 0 : (first >> 3) & 1 == 1
                    if showFrame || showable { key = frameType == 0 && showFrame }
                }
            }
            i = p + size
        }
        return key
    }
}
