// IMA ADPCM (Interactive Multimedia Association, "Recommended Practices for Enhancing Digital
// Audio Compatibility in Multimedia Systems", 1992): 4 bits per sample against an adaptive step.
// Two containers' flavours, each bit-exact with FFmpeg's decoder of the same name:
//
//   adpcm_ima_qt   Apple's 'ima4': per channel, 34-byte blocks of 64 samples: a big-endian
//                  16-bit header (top 9 bits: predictor, low 7 bits: step index), then 32 bytes,
//                  low nibble first. Blocks of the channels follow one another (block 0 of
//                  channel 0, of channel 1, ...). A header whose step index equals the decoder's
//                  and whose predictor is within 127 of it keeps the decoder's full-precision
//                  predictor (as QuickTime and FFmpeg do), so the state carries across blocks and
//                  packets. The difference is summed from shifted steps (step>>3 + ...).
//   adpcm_ima_wav  Microsoft's WAVE_FORMAT_IMA_ADPCM (0x11), 4 bits: blocks of block_align bytes;
//                  per channel a 4-byte header (little-endian 16-bit predictor, which is also the
//                  first sample; step index byte; a reserved byte, which FFmpeg reads as the
//                  step index's high byte), then groups of 4 bytes per channel in turn, each
//                  8 samples, low nibble first: 1 + (block_align - 4 * channels) / (4 * channels) * 8
//                  samples per block. The difference is ((2 * |nibble| + 1) * step) >> 3. A last
//                  block cut short decodes to the groups it holds.
//
// The inner loops keep each channel's predictor and step index in registers and read and write
// through raw pointers: no allocation, no bounds checks.

/// One channel's decoder state.
struct IMAChannel {
    var predictor: Int32 = 0
    var stepIndex: Int32 = 0
}

/// The IMA ADPCM decoders.
enum IMAADPCM {
    /// Bytes of one QuickTime block (one channel) and the samples it holds.
    static let qtBlockBytes = 34
    static let qtBlockSamples = 64

    /// The IMA step sizes, by step index 0...88.
    nonisolated(unsafe) static let steps: UnsafePointer<Int32> = {
        let values: [Int32] = [
            7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 19, 21, 23, 25, 28, 31, 34, 37, 41, 45,
            50, 55, 60, 66, 73, 80, 88, 97, 107, 118, 130, 143, 157, 173, 190, 209, 230, 253, 279, 307,
            337, 371, 408, 449, 494, 544, 598, 658, 724, 796, 876, 963, 1060, 1166, 1282, 1411, 1552, 1707, 1878, 2066,
            2272, 2499, 2749, 3024, 3327, 3660, 4026, 4428, 4871, 5358, 5894, 6484, 7132, 7845, 8630, 9493, 10442, 11487, 12635, 13899,
            15289, 16818, 18500, 20350, 22385, 24623, 27086, 29794, 32767,
        ]
        let t = UnsafeMutablePointer<Int32>.allocate(capacity: values.count)
        t.initialize(from: values, count: values.count)
        return UnsafePointer(t)
    }()

    /// The step index change for a nibble's magnitude (its low 3 bits): -1 for 0...3, then 2, 4, 6, 8.
    @inline(__always)
    static func indexChange(_ magnitude: Int32) -> Int32 { magnitude < 4 ? -1 : magnitude &* 2 &- 6 }

    @inline(__always)
    static func clampSample(_ v: Int32) -> Int32 { min(max(v, -32768), 32767) }

    /// One nibble, WAV flavour (FFmpeg's adpcm_ima_expand_nibble with shift 3).
    @inline(__always)
    static func expandWAV(_ nibble: Int32, _ predictor: inout Int32, _ stepIndex: inout Int32, _ steps: UnsafePointer<Int32>) -> Int16 {
        let step = steps[Int(stepIndex)]
        let magnitude = nibble & 7
        stepIndex = min(max(stepIndex &+ indexChange(magnitude), 0), 88)
        let diff = ((2 &* magnitude &+ 1) &* step) >> 3
        predictor = clampSample(nibble & 8 != 0 ? predictor &- diff : predictor &+ diff)
        return Int16(truncatingIfNeeded: predictor)
    }

    /// One nibble, QuickTime flavour (FFmpeg's adpcm_ima_qt_expand_nibble).
    @inline(__always)
    static func expandQT(_ nibble: Int32, _ predictor: inout Int32, _ stepIndex: inout Int32, _ steps: UnsafePointer<Int32>) -> Int16 {
        let step = steps[Int(stepIndex)]
        stepIndex = min(max(stepIndex &+ indexChange(nibble & 7), 0), 88)
        var diff = step >> 3
        if nibble & 4 != 0 { diff &+= step }
        if nibble & 2 != 0 { diff &+= step >> 1 }
        if nibble & 1 != 0 { diff &+= step >> 2 }
        predictor = clampSample(nibble & 8 != 0 ? predictor &- diff : predictor &+ diff)
        return Int16(truncatingIfNeeded: predictor)
    }

    /// Decodes `blocks` QuickTime blocks of every channel (34 * channels bytes each) into
    /// interleaved samples (64 per channel and block), carrying `state` across. Returns the blocks
    /// decoded: all of them, or those before the first whose step index is above 88 (as FFmpeg,
    /// that block is an error; the state keeps its header, as FFmpeg's does).
    static func decodeQT(_ source: UnsafePointer<UInt8>, blocks: Int, channels: Int,
                         state: UnsafeMutablePointer<IMAChannel>, into out: UnsafeMutablePointer<Int16>) -> Int {
        let steps = Self.steps
        for b in 0..<blocks {
            for c in 0..<channels {
                let block = source + (b &* channels &+ c) &* qtBlockBytes
                let header = Int32(Int16(bitPattern: UInt16(block[0]) << 8 | UInt16(block[1])))
                let headerIndex = header & 0x7F
                let headerPredictor = header & ~0x7F
                var predictor = state[c].predictor, stepIndex = state[c].stepIndex
                if stepIndex != headerIndex || abs(headerPredictor &- predictor) > 0x7F {
                    predictor = headerPredictor
                    stepIndex = headerIndex
                    state[c] = IMAChannel(predictor: predictor, stepIndex: stepIndex)
                }
                if stepIndex > 88 { return b }
                var o = out + ((b &* qtBlockSamples) &* channels &+ c)
                for i in 2..<qtBlockBytes {
                    let byte = Int32(block[i])
                    o.pointee = expandQT(byte & 0x0F, &predictor, &stepIndex, steps)
                    o += channels
                    o.pointee = expandQT(byte >> 4, &predictor, &stepIndex, steps)
                    o += channels
                }
                state[c] = IMAChannel(predictor: predictor, stepIndex: stepIndex)
            }
        }
        return blocks
    }

    /// Samples per channel that a packet of `packetBytes` bytes of `blockAlign`-byte blocks decodes
    /// to: whole blocks, and a last block cut short to the groups it holds (0 when not even its
    /// headers are there).
    static func wavSamples(packetBytes: Int, blockAlign: Int, channels: Int) -> Int {
        var total = 0, left = packetBytes
        while left >= 4 * channels {
            total += 1 + (min(left, blockAlign) - 4 * channels) / (4 * channels) * 8
            left -= blockAlign
        }
        return total
    }

    /// Decodes the blocks of a WAV packet into interleaved samples. Returns the samples per channel
    /// written, and the packet offset of a block whose step index is above 88 (decoding stops there).
    static func decodeWAV(_ source: UnsafePointer<UInt8>, count: Int, blockAlign: Int, channels: Int,
                          into out: UnsafeMutablePointer<Int16>) -> (samples: Int, badBlockOffset: Int?) {
        let steps = Self.steps
        var offset = 0, written = 0
        let headerBytes = 4 * channels
        while count - offset >= headerBytes {
            let block = source + offset
            let size = min(count - offset, blockAlign)
            let groups = (size - headerBytes) / headerBytes
            let o = out + written &* channels
            for c in 0..<channels {
                let h = block + 4 * c
                var predictor = Int32(Int16(bitPattern: UInt16(h[0]) | UInt16(h[1]) << 8))
                var stepIndex = Int32(Int16(bitPattern: UInt16(h[2]) | UInt16(h[3]) << 8))
                guard (0...88).contains(stepIndex) else { return (written, offset) }
                o[c] = Int16(truncatingIfNeeded: predictor)
                var p = block + headerBytes + 4 * c
                var q = o + channels + c
                for _ in 0..<groups {
                    for k in 0..<4 {
                        let byte = Int32(p[k])
                        q.pointee = expandWAV(byte & 0x0F, &predictor, &stepIndex, steps)
                        q += channels
                        q.pointee = expandWAV(byte >> 4, &predictor, &stepIndex, steps)
                        q += channels
                    }
                    p += headerBytes
                }
            }
            written += 1 + groups * 8
            offset += blockAlign
        }
        return (written, nil)
    }
}
