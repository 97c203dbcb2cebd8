/// The little of AV1 (AV1 bitstream specification, sections 5.3-5.9) MediaKit reads: OBU
/// headers, the sequence header (its `reduced_still_picture_header`, and what an MP4 `av1C`
/// states), and each frame header's `show_existing_frame`, `frame_type` and `show_frame`.
enum AV1 {
    /// What carries over from one temporal unit to the next.
    struct State: Sendable {
        /// From the last sequence header: frame headers are reduced (always key frames).
        var reducedStillPicture = false
    }

    /// OBU types.
    static let sequenceHeader = 1, frameHeader = 3, frame = 6

    /// One OBU of a temporal unit (AV1 specification section 5.3): its type, spatial layer, the
    /// bytes of the whole OBU (header included) and of its payload.
    struct OBU {
        var type: Int
        var spatial: Int
        var bytes: Range<Int>
        var payload: Range<Int>
    }

    /// The OBUs of `data` in order, up to the first one whose header or size does not fit
    /// (an OBU without a size field lasts to the end of `data`).
    static func obus(_ data: [UInt8]) -> [OBU] {
        var out: [OBU] = []
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
            guard size >= 0, size <= data.count - p else { break }
            out.append(OBU(type: type, spatial: spatial, bytes: i..<p + size, payload: p..<p + size))
            i = p + size
        }
        return out
    }

    /// The key-frame flag as FFmpeg's AV1 parser sets it: over the frame headers of
    /// spatial layer 0 that are shown or showable, the last one decides; it is a key frame
    /// when its frame_type is KEY_FRAME and show_frame is set. A temporal unit with only
    /// `show_existing_frame` headers is not a key frame.
    static func isKeyframe(_ data: [UInt8], state: inout State) -> Bool {
        var key = false
        for obu in obus(data) {
            let payload = data[obu.payload]
            if obu.type == sequenceHeader, payload.count >= 1 {
                // seq_profile (3), still_picture (1), reduced_still_picture_header (1)
                state.reducedStillPicture = (payload[payload.startIndex] >> 3) & 1 == 1
            } else if (obu.type == frameHeader || obu.type == frame) && obu.spatial == 0, let first = payload.first {
                if state.reducedStillPicture {
                    key = true
                } else if first & 0x80 == 0 {       // show_existing_frame == 0
                    let frameType = Int(first >> 5) & 3
                    let showFrame = (first >> 4) & 1 == 1
                    let showable = showFrame ? frameType != 0 : (first >> 3) & 1 == 1
                    if showFrame || showable { key = frameType == 0 && showFrame }
                }
            }
        }
        return key
    }

    /// OBU types an MP4 sample leaves out (AV1-ISOBMFF section 2.4; FFmpeg's mov muxer drops
    /// them, ff_av1_filter_obus): temporal delimiter, redundant frame header, tile list, padding.
    static let droppedInMP4: Set<Int> = [2, 7, 8, 15]

    /// `data` (a temporal unit) without the OBUs an MP4 sample leaves out; `data` itself when
    /// it has none (or its OBUs do not parse).
    static func mp4Sample(_ data: [UInt8]) -> [UInt8] {
        let all = obus(data)
        guard all.contains(where: { droppedInMP4.contains($0.type) }), all.last?.bytes.upperBound == data.count else { return data }
        var out: [UInt8] = []
        out.reserveCapacity(data.count)
        for obu in all where !droppedInMP4.contains(obu.type) { out.append(contentsOf: data[obu.bytes]) }
        return out
    }

    /// What an `av1C` record states of a sequence header (AV1 specification section 5.5).
    struct SequenceHeader: Equatable {
        var profile = 0, level = 0, tier = 0, bitDepth = 8
        var monochrome = false
        var subsamplingX = 1, subsamplingY = 1, chromaSamplePosition = 0
        /// max_frame_width_minus_1 + 1 and max_frame_height_minus_1 + 1: the picture size.
        var maxWidth = 0, maxHeight = 0

        /// Parses a sequence header OBU's payload; nil when it is cut short or malformed.
        init?(_ payload: ArraySlice<UInt8>) {
            var r = BitReader(Array(payload.prefix(256)))
            func f(_ n: Int) -> Int? { r.read(n) }
            func uvlc() -> Int? {
                var zeros = 0
                while true {
                    guard let b = r.read(1) else { return nil }
                    if b == 1 { break }
                    zeros += 1
                    if zeros >= 32 { return nil }
                }
                guard let v = r.read(zeros) else { return nil }
                return v + (1 << zeros) - 1
            }
            guard let profile = f(3), let _ = f(1), let reduced = f(1) else { return nil }
            self.profile = profile
            if reduced == 1 {
                guard let level = f(5) else { return nil }
                self.level = level
            } else {
                guard let timing = f(1) else { return nil }
                var decoderModel = 0, bufferDelayLength = 0
                if timing == 1 {
                    guard f(32) != nil, f(32) != nil, let equal = f(1) else { return nil }
                    if equal == 1 { guard uvlc() != nil else { return nil } }
                    guard let present = f(1) else { return nil }
                    decoderModel = present
                    if present == 1 {
                        guard let d = f(5), f(32) != nil, f(5) != nil, f(5) != nil else { return nil }
                        bufferDelayLength = d + 1
                    }
                }
                guard let displayDelay = f(1), let count = f(5) else { return nil }
                for i in 0...count {
                    guard f(12) != nil, let level = f(5) else { return nil }
                    var tier = 0
                    if level > 7 { guard let t = f(1) else { return nil }; tier = t }
                    if decoderModel == 1 {
                        guard let present = f(1) else { return nil }
                        if present == 1 { guard f(bufferDelayLength) != nil, f(bufferDelayLength) != nil, f(1) != nil else { return nil } }
                    }
                    if displayDelay == 1 {
                        guard let present = f(1) else { return nil }
                        if present == 1 { guard f(4) != nil else { return nil } }
                    }
                    if i == 0 { self.level = level; self.tier = tier }
                }
            }
            guard let widthBits = f(4), let heightBits = f(4), let w = f(widthBits + 1), let h = f(heightBits + 1) else { return nil }
            (maxWidth, maxHeight) = (w + 1, h + 1)
            if reduced == 0 {
                guard let frameIDs = f(1) else { return nil }
                if frameIDs == 1 { guard f(4) != nil, f(3) != nil else { return nil } }
            }
            guard f(3) != nil else { return nil }   // use_128x128_superblock, enable_filter_intra, enable_intra_edge_filter
            if reduced == 0 {
                guard f(4) != nil, let orderHint = f(1) else { return nil }   // interintra, masked, warped, dual filter
                if orderHint == 1 { guard f(2) != nil else { return nil } }  // jnt_comp, ref_frame_mvs
                guard let chooseScreen = f(1) else { return nil }
                var forceScreen = 2
                if chooseScreen == 0 { guard let v = f(1) else { return nil }; forceScreen = v }
                if forceScreen > 0 {
                    guard let chooseMV = f(1) else { return nil }
                    if chooseMV == 0 { guard f(1) != nil else { return nil } }
                }
                if orderHint == 1 { guard f(3) != nil else { return nil } }
            }
            guard f(3) != nil else { return nil }   // enable_superres, enable_cdef, enable_restoration
            // color_config (section 5.5.2)
            guard let high = f(1) else { return nil }
            bitDepth = high == 1 ? 10 : 8
            if profile == 2 && high == 1 { guard let twelve = f(1) else { return nil }; bitDepth = twelve == 1 ? 12 : 10 }
            var mono = 0
            if profile != 1 { guard let m = f(1) else { return nil }; mono = m }
            monochrome = mono == 1
            guard let described = f(1) else { return nil }
            var primaries = 2, transfer = 2, matrix = 2
            if described == 1 {
                guard let p = f(8), let t = f(8), let m = f(8) else { return nil }
                (primaries, transfer, matrix) = (p, t, m)
            }
            if mono == 1 {
                (subsamplingX, subsamplingY, chromaSamplePosition) = (1, 1, 0)
            } else if primaries == 1 && transfer == 13 && matrix == 0 {
                (subsamplingX, subsamplingY) = (0, 0)
            } else {
                guard f(1) != nil else { return nil }   // color_range
                switch profile {
                case 0: (subsamplingX, subsamplingY) = (1, 1)
                case 1: (subsamplingX, subsamplingY) = (0, 0)
                default:
                    if bitDepth == 12 {
                        guard let x = f(1) else { return nil }
                        subsamplingX = x
                        if x == 1 { guard let y = f(1) else { return nil }; subsamplingY = y } else { subsamplingY = 0 }
                    } else {
                        (subsamplingX, subsamplingY) = (1, 0)
                    }
                }
                if subsamplingX == 1 && subsamplingY == 1 {
                    guard let position = f(2) else { return nil }
                    chromaSamplePosition = position
                }
            }
        }
    }
}
