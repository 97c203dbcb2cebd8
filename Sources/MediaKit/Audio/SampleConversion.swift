/// Interleaved PCM layouts that decoded audio can be converted to.
public enum PCMFormat: String, Sendable, CaseIterable {
    /// Signed 16-bit little-endian, interleaved (the default, as in the iOS decode sample).
    case s16
    /// 32-bit float little-endian, interleaved.
    case f32

    /// Bytes per sample of one channel.
    public var bytesPerSample: Int { self == .s16 ? 2 : 4 }
}

/// Converts decoded audio frames (any ``SampleFormat``, planar or interleaved)
/// to interleaved ``PCMFormat`` bytes.
///
/// Float to 16-bit conversion rounds to nearest (ties to even) and clips, as
/// libswresample does: `clip(lrintf(x * 32768))`.
public enum AudioSampleConverter {
    /// Appends samples `[from, from + count)` of `frame`, converted, to `output`.
    public static func append(_ frame: Frame, from: Int = 0, count: Int? = nil, as format: PCMFormat, to output: inout [UInt8]) {
        guard let src = frame.sampleFormat, frame.channels > 0 else { return }
        let channels = frame.channels
        let n = max(0, min(count ?? frame.sampleCount - from, frame.sampleCount - from))
        if n == 0 { return }
        let start = output.count
        let bytes = n * channels * format.bytesPerSample
        output.reserveCapacity(start + bytes)
        output.append(contentsOf: repeatElement(0, count: bytes))
        withExtendedLifetime(frame.storage) {
            output.withUnsafeMutableBytes { out in
                let dst = out.baseAddress! + start
                for c in 0..<channels {
                    let plane = src.isPlanar ? frame.planes[c].base : frame.planes[0].base
                    let step = src.isPlanar ? 1 : channels
                    let first = (src.isPlanar ? from : from * channels + c)
                    switch format {
                    case .s16:
                        let d = dst.assumingMemoryBound(to: Int16.self) + c
                        convert(plane, src, first: first, step: step, count: n) { i, v in d[i * channels] = v.littleEndian }
                    case .f32:
                        let d = dst.assumingMemoryBound(to: UInt32.self) + c
                        convertFloat(plane, src, first: first, step: step, count: n) { i, v in d[i * channels] = v.bitPattern.littleEndian }
                    }
                }
            }
        }
    }

    @inline(__always)
    private static func convert(_ p: UnsafeRawPointer, _ f: SampleFormat, first: Int, step: Int, count: Int, _ put: (Int, Int16) -> Void) {
        switch f {
        case .s16, .s16Planar:
            let s = p.assumingMemoryBound(to: Int16.self)
            for i in 0..<count { put(i, s[first + i * step]) }
        case .f32, .f32Planar:
            let s = p.assumingMemoryBound(to: Float.self)
            for i in 0..<count { put(i, clip16((s[first + i * step] * 32768).rounded(.toNearestOrEven))) }
        case .f64, .f64Planar:
            let s = p.assumingMemoryBound(to: Double.self)
            for i in 0..<count { put(i, clip16(Float((s[first + i * step] * 32768).rounded(.toNearestOrEven)))) }
        case .s32, .s32Planar:
            let s = p.assumingMemoryBound(to: Int32.self)
            for i in 0..<count { put(i, Int16(truncatingIfNeeded: s[first + i * step] >> 16)) }
        case .u8, .u8Planar:
            let s = p.assumingMemoryBound(to: UInt8.self)
            for i in 0..<count { put(i, Int16(Int(s[first + i * step]) - 128) << 8) }
        }
    }

    @inline(__always)
    private static func convertFloat(_ p: UnsafeRawPointer, _ f: SampleFormat, first: Int, step: Int, count: Int, _ put: (Int, Float) -> Void) {
        switch f {
        case .f32, .f32Planar:
            let s = p.assumingMemoryBound(to: Float.self)
            for i in 0..<count { put(i, s[first + i * step]) }
        case .f64, .f64Planar:
            let s = p.assumingMemoryBound(to: Double.self)
            for i in 0..<count { put(i, Float(s[first + i * step])) }
        case .s16, .s16Planar:
            let s = p.assumingMemoryBound(to: Int16.self)
            for i in 0..<count { put(i, Float(s[first + i * step]) * (1.0 / 32768)) }
        case .s32, .s32Planar:
            let s = p.assumingMemoryBound(to: Int32.self)
            for i in 0..<count { put(i, Float(s[first + i * step]) * (1.0 / 2147483648)) }
        case .u8, .u8Planar:
            let s = p.assumingMemoryBound(to: UInt8.self)
            for i in 0..<count { put(i, Float(Int(s[first + i * step]) - 128) * (1.0 / 128)) }
        }
    }

    @inline(__always)
    private static func clip16(_ v: Float) -> Int16 {
        v >= 32767 ? 32767 : (v <= -32768 ? -32768 : Int16(v))
    }
}
