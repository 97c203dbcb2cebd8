/// The old name of the two interleaved ``SampleFormat``s decoded audio was written in
/// (``SampleFormat/s16`` and ``SampleFormat/f32``; every interleaved format is taken now).
@available(*, deprecated, renamed: "SampleFormat")
public typealias PCMFormat = SampleFormat

/// Converts decoded audio frames (any ``SampleFormat``, planar or interleaved)
/// to interleaved PCM bytes, sample for sample (no mixing, no resampling: see ``AudioConverter``).
///
/// Conversions are libswresample's (`audioconvert.c`): integer to integer by shifting,
/// integer to float by scaling (s16: `x / 32768`), float to integer rounded to nearest
/// (ties to even) and clipped (s16: `clip(lrintf(x * 32768))`).
public enum AudioSampleConverter {
    /// Appends samples `[from, from + count)` of `frame`, converted to the interleaved form of `type`, to `output`.
    public static func append(_ frame: Frame, from: Int = 0, count: Int? = nil, as type: SampleFormat, to output: inout [UInt8]) {
        guard frame.sampleFormat != nil, frame.channels > 0 else { return }
        let channels = frame.channels
        let n = max(0, min(count ?? frame.sampleCount - from, frame.sampleCount - from))
        if n == 0 { return }
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: n * channels * type.bytesPerSample))
        output.withUnsafeMutableBytes { out in
            _ = write(frame, from: from, count: n, as: type, into: UnsafeMutableRawBufferPointer(rebasing: out[start...]))
        }
    }

    /// Writes samples `[from, from + count)` of `frame`, converted to the interleaved form of `type`, at the
    /// start of `output` (a caller's buffer, reused from frame to frame: nothing is allocated)
    /// and returns the bytes written; none when `output` cannot hold them all.
    public static func write(_ frame: Frame, from: Int = 0, count: Int? = nil, as type: SampleFormat,
                             into output: UnsafeMutableRawBufferPointer) -> Int {
        guard let src = frame.sampleFormat, frame.channels > 0, let dst = output.baseAddress else { return 0 }
        let channels = frame.channels
        let n = max(0, min(count ?? frame.sampleCount - from, frame.sampleCount - from))
        let type = type.interleaved
        let bytes = n * channels * type.bytesPerSample
        guard n > 0, output.count >= bytes else { return 0 }
        let st = src.interleaved
        withExtendedLifetime(frame.storage) {
            for c in 0..<channels {
                let plane = src.isPlanar ? frame.planes[c].base : frame.planes[0].base
                let first = src.isPlanar ? from : from * channels + c
                SampleKernels.convert(plane + first * st.bytesPerSample, st, stride: src.isPlanar ? 1 : channels,
                                      to: dst + c * type.bytesPerSample, type, stride: channels, count: n)
            }
        }
        return bytes
    }
}

/// The float types the converter computes in.
protocol PCMFloat: BinaryFloatingPoint, Sendable {
    /// The sum of `a[i] * b[i]` for `i < n` (`n` a multiple of 8).
    static func dot(_ a: UnsafePointer<Self>, _ b: UnsafePointer<Self>, _ n: Int) -> Self
    /// The sums of `c[i] * x0[i]` and of `c[i] * x1[i]` for `i < n` (`n` a multiple of 8): two
    /// channels through the same filter phase, each coefficient loaded once.
    static func dot2(_ c: UnsafePointer<Self>, _ x0: UnsafePointer<Self>, _ x1: UnsafePointer<Self>, _ n: Int) -> (Self, Self)
    /// 1.5 * 2^(significand bits): `(x + m) - m` rounds `x` to an integer, ties to even, for |x| < m / 3.
    static var roundingMagic: Self { get }
    /// The value, integral and within Int32's range, as Int32 (a plain conversion, no generic path).
    var int32: Int32 { get }
    /// The low 32 bits of the value's bit pattern (after adding ``roundingMagic``: the integer).
    var lowBits: Int32 { get }
    /// The value converted from an Int32 (a plain conversion, no generic path).
    init(int32 v: Int32)
    /// Plain conversions from and to the two float types.
    init(float v: Float)
    init(double v: Double)
    var float: Float { get }
    var double: Double { get }
}

extension Float: PCMFloat {
    static var roundingMagic: Float { 12_582_912 }
    @inline(__always) var int32: Int32 { Int32(self) }
    @inline(__always) var lowBits: Int32 { Int32(truncatingIfNeeded: bitPattern) }
    @inline(__always) init(int32 v: Int32) { self.init(v) }
    @inline(__always) init(float v: Float) { self.init(v) }
    @inline(__always) init(double v: Double) { self.init(v) }
    @inline(__always) var float: Float { Float(self) }
    @inline(__always) var double: Double { Double(self) }

    @inline(__always)
    static func dot(_ a: UnsafePointer<Float>, _ b: UnsafePointer<Float>, _ n: Int) -> Float {
        let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
        var s0 = SIMD4<Float>(), s1 = SIMD4<Float>(), s2 = SIMD4<Float>(), s3 = SIMD4<Float>()
        var i = 0
        while i + 16 <= n {
            let o = i * 4
            s0 += ra.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self) * rb.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
            s1 += ra.loadUnaligned(fromByteOffset: o + 16, as: SIMD4<Float>.self) * rb.loadUnaligned(fromByteOffset: o + 16, as: SIMD4<Float>.self)
            s2 += ra.loadUnaligned(fromByteOffset: o + 32, as: SIMD4<Float>.self) * rb.loadUnaligned(fromByteOffset: o + 32, as: SIMD4<Float>.self)
            s3 += ra.loadUnaligned(fromByteOffset: o + 48, as: SIMD4<Float>.self) * rb.loadUnaligned(fromByteOffset: o + 48, as: SIMD4<Float>.self)
            i += 16
        }
        if i < n {
            let o = i * 4
            s0 += ra.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self) * rb.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
            s1 += ra.loadUnaligned(fromByteOffset: o + 16, as: SIMD4<Float>.self) * rb.loadUnaligned(fromByteOffset: o + 16, as: SIMD4<Float>.self)
        }
        return ((s0 + s1) + (s2 + s3)).sum()
    }

    @inline(__always)
    static func dot2(_ c: UnsafePointer<Float>, _ x0: UnsafePointer<Float>, _ x1: UnsafePointer<Float>, _ n: Int) -> (Float, Float) {
        let rc = UnsafeRawPointer(c), r0 = UnsafeRawPointer(x0), r1 = UnsafeRawPointer(x1)
        var a0 = SIMD4<Float>(), a1 = SIMD4<Float>(), b0 = SIMD4<Float>(), b1 = SIMD4<Float>()
        var o = 0
        let end = n * 4
        while o < end {
            let c0 = rc.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
            let c1 = rc.loadUnaligned(fromByteOffset: o + 16, as: SIMD4<Float>.self)
            a0 += c0 * r0.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
            a1 += c1 * r0.loadUnaligned(fromByteOffset: o + 16, as: SIMD4<Float>.self)
            b0 += c0 * r1.loadUnaligned(fromByteOffset: o, as: SIMD4<Float>.self)
            b1 += c1 * r1.loadUnaligned(fromByteOffset: o + 16, as: SIMD4<Float>.self)
            o += 32
        }
        return ((a0 + a1).sum(), (b0 + b1).sum())
    }
}

extension Double: PCMFloat {
    static var roundingMagic: Double { 6_755_399_441_055_744 }
    @inline(__always) var int32: Int32 { Int32(self) }
    @inline(__always) var lowBits: Int32 { Int32(truncatingIfNeeded: bitPattern) }
    @inline(__always) init(int32 v: Int32) { self.init(v) }
    @inline(__always) init(float v: Float) { self.init(v) }
    @inline(__always) init(double v: Double) { self.init(v) }
    @inline(__always) var float: Float { Float(self) }
    @inline(__always) var double: Double { Double(self) }

    @inline(__always)
    static func dot(_ a: UnsafePointer<Double>, _ b: UnsafePointer<Double>, _ n: Int) -> Double {
        let ra = UnsafeRawPointer(a), rb = UnsafeRawPointer(b)
        var s0 = SIMD2<Double>(), s1 = SIMD2<Double>(), s2 = SIMD2<Double>(), s3 = SIMD2<Double>()
        var i = 0
        while i + 8 <= n {
            let o = i * 8
            s0 += ra.loadUnaligned(fromByteOffset: o, as: SIMD2<Double>.self) * rb.loadUnaligned(fromByteOffset: o, as: SIMD2<Double>.self)
            s1 += ra.loadUnaligned(fromByteOffset: o + 16, as: SIMD2<Double>.self) * rb.loadUnaligned(fromByteOffset: o + 16, as: SIMD2<Double>.self)
            s2 += ra.loadUnaligned(fromByteOffset: o + 32, as: SIMD2<Double>.self) * rb.loadUnaligned(fromByteOffset: o + 32, as: SIMD2<Double>.self)
            s3 += ra.loadUnaligned(fromByteOffset: o + 48, as: SIMD2<Double>.self) * rb.loadUnaligned(fromByteOffset: o + 48, as: SIMD2<Double>.self)
            i += 8
        }
        return ((s0 + s1) + (s2 + s3)).sum()
    }

    @inline(__always)
    static func dot2(_ c: UnsafePointer<Double>, _ x0: UnsafePointer<Double>, _ x1: UnsafePointer<Double>, _ n: Int) -> (Double, Double) {
        let rc = UnsafeRawPointer(c), r0 = UnsafeRawPointer(x0), r1 = UnsafeRawPointer(x1)
        var a0 = SIMD2<Double>(), a1 = SIMD2<Double>(), b0 = SIMD2<Double>(), b1 = SIMD2<Double>()
        var o = 0
        let end = n * 8
        while o < end {
            let c0 = rc.loadUnaligned(fromByteOffset: o, as: SIMD2<Double>.self)
            let c1 = rc.loadUnaligned(fromByteOffset: o + 16, as: SIMD2<Double>.self)
            a0 += c0 * r0.loadUnaligned(fromByteOffset: o, as: SIMD2<Double>.self)
            a1 += c1 * r0.loadUnaligned(fromByteOffset: o + 16, as: SIMD2<Double>.self)
            b0 += c0 * r1.loadUnaligned(fromByteOffset: o, as: SIMD2<Double>.self)
            b1 += c1 * r1.loadUnaligned(fromByteOffset: o + 16, as: SIMD2<Double>.self)
            o += 32
        }
        return ((a0 + a1).sum(), (b0 + b1).sum())
    }
}

/// Triangular (TPDF) dither: the difference of two uniform variables, spanning ±1 LSB of the
/// integer format written. One generator per channel, so the noise does not depend on how the
/// input was cut into buffers.
struct TPDFDither: Sendable {
    private var state: UInt64

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    /// The next noise value in (-1, 1) LSB.
    @inline(__always)
    mutating func next<T: PCMFloat>() -> T {
        // xorshift64*: two 24-bit uniforms from one step.
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        let r = state &* 0x2545_F491_4F6C_DD1D
        let a = T(int32: Int32(truncatingIfNeeded: r >> 40)), b = T(int32: Int32(truncatingIfNeeded: (r >> 16) & 0xFF_FFFF))
        return (a - b) * T(1.0 / 16_777_216.0)
    }
}

/// The sample loops: libswresample's conversions, on raw memory with strides counted in samples.
enum SampleKernels {
    /// Converts `count` samples from `src` (type `st`, every `ss`-th sample) to `dst` (type `dt`,
    /// every `ds`-th sample), as libswresample converts one format to the other.
    static func convert(_ src: UnsafeRawPointer, _ st: SampleFormat, stride ss: Int,
                        to dst: UnsafeMutableRawPointer, _ dt: SampleFormat, stride ds: Int, count: Int) {
        let st = st.interleaved, dt = dt.interleaved
        if st == dt && !st.isNative {
            // A variant to itself: its bytes, as they are.
            let b = st.bytesPerSample
            if ss == 1 && ds == 1 { dst.copyMemory(from: src, byteCount: b * count); return }
            for i in 0..<count { (dst + i * ds * b).copyMemory(from: src + i * ss * b, byteCount: b) }
            return
        }
        if !st.isNative || !dt.isNative {
            // Through the native types: the variant's bytes moved to (or from) its native type, a
            // lossless step, around the native conversion (whose rounding rules then hold).
            let sn = st.native, dn = dt.native
            viaNative(count, src: st, dst: dt) { at, m, a, b in
                var s = src + at * ss * st.bytesPerSample, sStride = ss
                if let a {
                    rewrite(s, st, stride: ss, to: a, sn, stride: 1, count: m)
                    s = UnsafeRawPointer(a)
                    sStride = 1
                }
                let d = dst + at * ds * dt.bytesPerSample
                if let b {
                    convert(s, sn, stride: sStride, to: b, dn, stride: 1, count: m)
                    rewrite(UnsafeRawPointer(b), dn, stride: 1, to: d, dt, stride: ds, count: m)
                } else {
                    convert(s, sn, stride: sStride, to: d, dn, stride: ds, count: m)
                }
            }
            return
        }
        switch (st, dt) {
        case (_, .f32):
            load(src, st, stride: ss, into: dst.assumingMemoryBound(to: Float.self), stride: ds, count: count)
        case (_, .f64):
            load(src, st, stride: ss, into: dst.assumingMemoryBound(to: Double.self), stride: ds, count: count)
        case (.f32, _):
            var none: TPDFDither?
            store(src.assumingMemoryBound(to: Float.self), stride: ss, to: dst, dt, stride: ds, count: count, dither: &none)
        case (.f64, _):
            var none: TPDFDither?
            store(src.assumingMemoryBound(to: Double.self), stride: ss, to: dst, dt, stride: ds, count: count, dither: &none)
        default:
            integerToInteger(src, st, stride: ss, to: dst, dt, stride: ds, count: count)
        }
    }

    /// An integer sample as a 32-bit value (u8 and s16 shifted up, s24 shifted up by 8).
    @inline(__always)
    static func readInt(_ p: UnsafeRawPointer, _ t: SampleFormat, _ i: Int) -> Int32 {
        switch t {
        case .u8: return (Int32(p.load(fromByteOffset: i, as: UInt8.self)) - 0x80) << 24
        case .s16: return Int32(Int16(littleEndian: p.loadUnaligned(fromByteOffset: 2 * i, as: Int16.self))) << 16
        case .s24:
            let b = p + 3 * i
            let u = UInt32(b.load(as: UInt8.self)) << 8 | UInt32(b.load(fromByteOffset: 1, as: UInt8.self)) << 16
                | UInt32(b.load(fromByteOffset: 2, as: UInt8.self)) << 24
            return Int32(bitPattern: u)
        default: return Int32(littleEndian: p.loadUnaligned(fromByteOffset: 4 * i, as: Int32.self))
        }
    }

    /// Writes a 32-bit value as integer type `t` (shifted down: the low bits are dropped, as
    /// libswresample's `>>` and FFmpeg's 24-bit PCM encoder drop them).
    @inline(__always)
    static func writeInt(_ v: Int32, _ p: UnsafeMutableRawPointer, _ t: SampleFormat, _ i: Int) {
        switch t {
        case .u8: p.storeBytes(of: UInt8(truncatingIfNeeded: (v >> 24) + 0x80), toByteOffset: i, as: UInt8.self)
        case .s16: p.storeBytes(of: Int16(truncatingIfNeeded: v >> 16).littleEndian, toByteOffset: 2 * i, as: Int16.self)
        case .s24:
            let u = UInt32(bitPattern: v)
            p.storeBytes(of: UInt8(truncatingIfNeeded: u >> 8), toByteOffset: 3 * i, as: UInt8.self)
            p.storeBytes(of: UInt8(truncatingIfNeeded: u >> 16), toByteOffset: 3 * i + 1, as: UInt8.self)
            p.storeBytes(of: UInt8(truncatingIfNeeded: u >> 24), toByteOffset: 3 * i + 2, as: UInt8.self)
        default: p.storeBytes(of: v.littleEndian, toByteOffset: 4 * i, as: Int32.self)
        }
    }

    static func integerToInteger(_ src: UnsafeRawPointer, _ st: SampleFormat, stride ss: Int,
                                 to dst: UnsafeMutableRawPointer, _ dt: SampleFormat, stride ds: Int, count: Int) {
        if st == dt {
            let b = st.bytesPerSample
            if ss == 1 && ds == 1 { dst.copyMemory(from: src, byteCount: b * count); return }
            for i in 0..<count { (dst + i * ds * b).copyMemory(from: src + i * ss * b, byteCount: b) }
            return
        }
        if st == .s16 && dt == .s32 {
            let s = src.assumingMemoryBound(to: Int16.self), d = dst.assumingMemoryBound(to: Int32.self)
            for i in 0..<count { d[i * ds] = Int32(s[i * ss]) << 16 }
            return
        }
        if st == .s32 && dt == .s16 {
            let s = src.assumingMemoryBound(to: Int32.self), d = dst.assumingMemoryBound(to: Int16.self)
            for i in 0..<count { d[i * ds] = Int16(truncatingIfNeeded: s[i * ss] >> 16) }
            return
        }
        for i in 0..<count { writeInt(readInt(src, st, i * ss), dst, dt, i * ds) }
    }

    /// Reads `count` samples of type `st` as float (integers scaled to [-1, 1): s16 by 1/32768,
    /// s32 by 1/2^31, as libswresample scales them).
    static func load<T: PCMFloat>(_ src: UnsafeRawPointer, _ st: SampleFormat, stride ss: Int,
                                  into dst: UnsafeMutablePointer<T>, stride ds: Int, count: Int) {
        if !st.interleaved.isNative {
            let st = st.interleaved, sn = st.native
            viaNative(count, src: st, dst: sn) { at, m, a, _ in
                rewrite(src + at * ss * st.bytesPerSample, st, stride: ss, to: a!, sn, stride: 1, count: m)
                load(UnsafeRawPointer(a!), sn, stride: 1, into: dst + at * ds, stride: ds, count: m)
            }
            return
        }
        // Indexes wrap (`&*`): `i * stride` stays inside the caller's buffers, and the overflow
        // checks were most of the loop (perf: 13 instructions a sample).
        switch st.interleaved {
        case .f32:
            let s = src.assumingMemoryBound(to: Float.self)
            if T.self == Float.self && ss == 1 && ds == 1 {
                UnsafeMutableRawPointer(dst).copyMemory(from: src, byteCount: 4 * count)
                return
            }
            for i in 0..<count { dst[i &* ds] = T(float: s[i &* ss]) }
        case .f64:
            let s = src.assumingMemoryBound(to: Double.self)
            for i in 0..<count { dst[i &* ds] = T(double: s[i &* ss]) }
        case .s16:
            let s = src.assumingMemoryBound(to: Int16.self)
            let k = T(1.0 / 32768.0)
            if ss == 1 && ds == 1 {
                for i in 0..<count { dst[i] = T(int32: Int32(s[i])) * k }
            } else if ds == 1 && ss == 2 {           // a channel of stereo into a plane
                for i in 0..<count { dst[i] = T(int32: Int32(s[2 &* i])) * k }
            } else {
                for i in 0..<count { dst[i &* ds] = T(int32: Int32(s[i &* ss])) * k }
            }
        case .s32:
            let s = src.assumingMemoryBound(to: Int32.self)
            let k = T(1.0 / 2_147_483_648.0)
            for i in 0..<count { dst[i &* ds] = T(int32: s[i &* ss]) * k }
        case .u8:
            let s = src.assumingMemoryBound(to: UInt8.self)
            let k = T(1.0 / 128.0)
            for i in 0..<count { dst[i &* ds] = T(int32: Int32(s[i &* ss]) - 0x80) * k }
        default:  // s24 (the planar forms became interleaved above, the variants native)
            let k = T(1.0 / 2_147_483_648.0)
            for i in 0..<count { dst[i * ds] = T(int32: readInt(src, .s24, i * ss)) * k }
        }
    }

    /// Writes `count` float samples as type `dt`: floats converted, integers as
    /// `clip(rint(x * 2^(bits-1)))` (u8 offset by 0x80; s24 as s32 shifted down by 8, the way
    /// FFmpeg writes 24-bit PCM). With `dither`, TPDF noise of ±1 LSB of `dt` is added before
    /// rounding. NaN becomes the lowest value, as `lrintf` then clipping gives.
    static func store<T: PCMFloat>(_ src: UnsafePointer<T>, stride ss: Int, to dst: UnsafeMutableRawPointer, _ dt: SampleFormat,
                                   stride ds: Int, count: Int, dither: inout TPDFDither?) {
        let dt = dt.interleaved
        if !dt.isNative {
            let dn = dt.native
            viaNative(count, src: dn, dst: dt) { at, m, _, b in
                store(src + at * ss, stride: ss, to: b!, dn, stride: 1, count: m, dither: &dither)
                rewrite(UnsafeRawPointer(b!), dn, stride: 1, to: dst + at * ds * dt.bytesPerSample, dt, stride: ds, count: m)
            }
            return
        }
        switch dt {
        case .f32:
            let d = dst.assumingMemoryBound(to: Float.self)
            if T.self == Float.self && ss == 1 && ds == 1 {
                dst.copyMemory(from: UnsafeRawPointer(src), byteCount: 4 * count)
                return
            }
            for i in 0..<count { d[i * ds] = src[i * ss].float }
        case .f64:
            let d = dst.assumingMemoryBound(to: Double.self)
            for i in 0..<count { d[i * ds] = src[i * ss].double }
        case .s16:
            let d = dst.assumingMemoryBound(to: Int16.self)
            if dither != nil {
                for i in 0..<count { d[i * ds] = clip16(src[i * ss] * 32768 + dither!.next()) }
            } else if ss == 1 && ds == 1 {
                for i in 0..<count { d[i] = clip16(src[i] * 32768) }
            } else {
                for i in 0..<count { d[i * ds] = clip16(src[i * ss] * 32768) }
            }
        case .s32, .s24:
            let scale: T = 2_147_483_648
            let lsb: T = dt == .s24 ? 256 : 1
            for i in 0..<count {
                var v = src[i * ss] * scale
                if dither != nil { v += lsb * dither!.next() }
                writeInt(clip32(v), dst, dt, i * ds)
            }
        default:  // u8 (the planar forms became interleaved above, the variants native)
            let d = dst.assumingMemoryBound(to: UInt8.self)
            for i in 0..<count {
                var v = src[i * ss] * 128
                if dither != nil { v += dither!.next() }
                let r = v.rounded(.toNearestOrEven) + 128
                d[i * ds] = r > 0 ? (r < 255 ? UInt8(truncatingIfNeeded: r.int32) : 255) : 0
            }
        }
    }

    /// `clip(rint(v))` to Int16: clipped first (NaN to the lowest value), then rounded to
    /// nearest even by adding the magic number, whose sum holds the integer in its low
    /// significand bits (no conversion instruction, no library call: the loop vectorises).
    @inline(__always)
    static func clip16<T: PCMFloat>(_ v: T) -> Int16 {
        let c: T = v > -32768 ? (v < 32767 ? v : 32767) : -32768
        return Int16(truncatingIfNeeded: (c + T.roundingMagic).lowBits)
    }

    @inline(__always)
    static func clip32<T: PCMFloat>(_ v: T) -> Int32 {
        let r = v.rounded(.toNearestOrEven)
        return r > -2_147_483_648 ? (r < 2_147_483_647 ? r.int32 : Int32.max) : Int32.min
    }

    /// Samples per step when a conversion goes through the native types.
    static let nativeChunk = 1024

    /// Calls `body(first, count, a, b)` for each run of up to ``nativeChunk`` of `count` samples,
    /// with `a` scratch for the run in `src`'s native type when `src` is a variant and `b` in
    /// `dst`'s native type when `dst` is one (nil otherwise); the scratch lives on the stack.
    static func viaNative(_ count: Int, src: SampleFormat, dst: SampleFormat,
                          _ body: (Int, Int, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Void) {
        let bytes = 8 * nativeChunk
        withUnsafeTemporaryAllocation(byteCount: 2 * bytes, alignment: 16) { scratch in
            let a = src.isNative ? nil : scratch.baseAddress!
            let b = dst.isNative ? nil : scratch.baseAddress! + bytes
            var at = 0
            while at < count {
                let m = min(nativeChunk, count - at)
                body(at, m, a, b)
                at += m
            }
        }
    }

    /// Moves `count` samples between a variant type and its native type (``SampleFormat/native``),
    /// either way: the same values, bytes reordered (byte order), the top bit flipped (s8 and
    /// u8), or 3 bytes placed in (or taken from) a 32-bit word (24 in 32). Lossless.
    static func rewrite(_ src: UnsafeRawPointer, _ st: SampleFormat, stride ss: Int,
                        to dst: UnsafeMutableRawPointer, _ dt: SampleFormat, stride ds: Int, count: Int) {
        let variant = st.isNative ? dt : st
        let toVariant = st.isNative
        switch variant {
        case .s8:
            for i in 0..<count { dst.storeBytes(of: src.load(fromByteOffset: i * ss, as: UInt8.self) ^ 0x80, toByteOffset: i * ds, as: UInt8.self) }
        case .s16be:
            for i in 0..<count {
                dst.storeBytes(of: src.loadUnaligned(fromByteOffset: 2 * i * ss, as: UInt16.self).byteSwapped, toByteOffset: 2 * i * ds, as: UInt16.self)
            }
        case .s32be, .f32be:
            for i in 0..<count {
                dst.storeBytes(of: src.loadUnaligned(fromByteOffset: 4 * i * ss, as: UInt32.self).byteSwapped, toByteOffset: 4 * i * ds, as: UInt32.self)
            }
        case .f64be:
            for i in 0..<count {
                dst.storeBytes(of: src.loadUnaligned(fromByteOffset: 8 * i * ss, as: UInt64.self).byteSwapped, toByteOffset: 8 * i * ds, as: UInt64.self)
            }
        case .s24be:
            for i in 0..<count {
                let s = src + 3 * i * ss, d = dst + 3 * i * ds
                let b0 = s.load(as: UInt8.self), b2 = s.load(fromByteOffset: 2, as: UInt8.self)
                d.storeBytes(of: b2, as: UInt8.self)
                d.storeBytes(of: s.load(fromByteOffset: 1, as: UInt8.self), toByteOffset: 1, as: UInt8.self)
                d.storeBytes(of: b0, toByteOffset: 2, as: UInt8.self)
            }
        case .s24In32High, .s24In32Low:
            // The 24-bit value's 3 bytes sit at offset 1 (aligned high) or 0 (aligned low).
            let high = variant == .s24In32High
            if toVariant {
                for i in 0..<count {
                    let s = src + 3 * i * ss
                    let u = UInt32(s.load(as: UInt8.self)) | UInt32(s.load(fromByteOffset: 1, as: UInt8.self)) << 8
                        | UInt32(s.load(fromByteOffset: 2, as: UInt8.self)) << 16
                    let v = Int32(bitPattern: u << 8)
                    dst.storeBytes(of: (high ? v : v >> 8).littleEndian, toByteOffset: 4 * i * ds, as: Int32.self)
                }
            } else {
                let skip = high ? 1 : 0
                for i in 0..<count {
                    let s = src + 4 * i * ss + skip, d = dst + 3 * i * ds
                    d.storeBytes(of: s.load(as: UInt8.self), as: UInt8.self)
                    d.storeBytes(of: s.load(fromByteOffset: 1, as: UInt8.self), toByteOffset: 1, as: UInt8.self)
                    d.storeBytes(of: s.load(fromByteOffset: 2, as: UInt8.self), toByteOffset: 2, as: UInt8.self)
                }
            }
        default:
            preconditionFailure("rewrite moves between a variant sample type and its native type, not \(st) to \(dt)")
        }
    }
}

extension SampleFormat {
    /// True for the interleaved types the sample loops compute with: ``u8``, ``s16``, ``s24``,
    /// ``s32``, ``f32``, ``f64`` (and their planar forms).
    var isNative: Bool { interleaved.rawValue <= 5 || interleaved == .s24 }

    /// The interleaved native type holding the same values: ``s16be`` gives ``s16``, ``s8``
    /// ``u8``, the 24-in-32 forms ``s24``; a native type gives its interleaved self.
    var native: SampleFormat {
        switch interleaved {
        case .s8: return .u8
        case .s16be: return .s16
        case .s24be, .s24In32High, .s24In32Low: return .s24
        case .s32be: return .s32
        case .f32be: return .f32
        case .f64be: return .f64
        default: return interleaved
        }
    }
}
