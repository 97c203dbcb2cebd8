// The resampler's inner loops compiled for x86-64-v3 (AVX2 and FMA: 8 floats or 4 doubles
// per instruction, fused multiply-add). This module alone is built with that target CPU;
// MediaKit calls it only after checking that the processor has both features, and uses
// its own SSE loops otherwise.

/// Polyphase filter loops: output `i` is the dot product of coefficient row `p_i` with the
/// `taps` inputs starting at `x + b_i`, where `(b, p)` advance by `(stepInt, stepFrac)` per
/// output and `p` wraps at `up` (carrying 1 into `b`). `taps` is a multiple of 8.
public enum AVX2Kernels {
    /// One channel, 32-bit float.
    public static func resample(_ coefs: UnsafePointer<Float>, taps: Int, up: Int, stepInt: Int, stepFrac: Int,
                                _ x: UnsafePointer<Float>, start: Int, phase: Int, count: Int, into out: UnsafeMutablePointer<Float>) {
        var b = start, p = phase
        for i in 0..<count {
            let c = UnsafeRawPointer(coefs + p * taps), s = UnsafeRawPointer(x + b)
            var a0 = SIMD8<Float>(), a1 = SIMD8<Float>()
            var o = 0
            let end = taps * 4
            while o + 64 <= end {
                a0.addProduct(c.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self), s.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self))
                a1.addProduct(c.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self), s.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self))
                o += 64
            }
            if o < end {
                a0.addProduct(c.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self), s.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self))
            }
            out[i] = (a0 + a1).sum()
            b += stepInt
            p += stepFrac
            if p >= up { p -= up; b += 1 }
        }
    }

    /// Two channels through the same phases, 32-bit float.
    public static func resample2(_ coefs: UnsafePointer<Float>, taps: Int, up: Int, stepInt: Int, stepFrac: Int,
                                 _ x0: UnsafePointer<Float>, _ x1: UnsafePointer<Float>, start: Int, phase: Int, count: Int,
                                 into out0: UnsafeMutablePointer<Float>, _ out1: UnsafeMutablePointer<Float>) {
        var b = start, p = phase
        for i in 0..<count {
            let c = UnsafeRawPointer(coefs + p * taps), s0 = UnsafeRawPointer(x0 + b), s1 = UnsafeRawPointer(x1 + b)
            var a0 = SIMD8<Float>(), a1 = SIMD8<Float>(), b0 = SIMD8<Float>(), b1 = SIMD8<Float>()
            var o = 0
            let end = taps * 4
            while o + 64 <= end {
                let c0 = c.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                let c1 = c.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self)
                a0.addProduct(c0, s0.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self))
                a1.addProduct(c1, s0.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self))
                b0.addProduct(c0, s1.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self))
                b1.addProduct(c1, s1.loadUnaligned(fromByteOffset: o + 32, as: SIMD8<Float>.self))
                o += 64
            }
            if o < end {
                let c0 = c.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self)
                a0.addProduct(c0, s0.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self))
                b0.addProduct(c0, s1.loadUnaligned(fromByteOffset: o, as: SIMD8<Float>.self))
            }
            out0[i] = (a0 + a1).sum()
            out1[i] = (b0 + b1).sum()
            b += stepInt
            p += stepFrac
            if p >= up { p -= up; b += 1 }
        }
    }

    /// One channel, 64-bit float.
    public static func resample(_ coefs: UnsafePointer<Double>, taps: Int, up: Int, stepInt: Int, stepFrac: Int,
                                _ x: UnsafePointer<Double>, start: Int, phase: Int, count: Int, into out: UnsafeMutablePointer<Double>) {
        var b = start, p = phase
        for i in 0..<count {
            let c = UnsafeRawPointer(coefs + p * taps), s = UnsafeRawPointer(x + b)
            var a0 = SIMD4<Double>(), a1 = SIMD4<Double>()
            var o = 0
            let end = taps * 8
            while o < end {
                a0.addProduct(c.loadUnaligned(fromByteOffset: o, as: SIMD4<Double>.self), s.loadUnaligned(fromByteOffset: o, as: SIMD4<Double>.self))
                a1.addProduct(c.loadUnaligned(fromByteOffset: o + 32, as: SIMD4<Double>.self), s.loadUnaligned(fromByteOffset: o + 32, as: SIMD4<Double>.self))
                o += 64
            }
            out[i] = (a0 + a1).sum()
            b += stepInt
            p += stepFrac
            if p >= up { p -= up; b += 1 }
        }
    }

    /// Two channels through the same phases, 64-bit float.
    public static func resample2(_ coefs: UnsafePointer<Double>, taps: Int, up: Int, stepInt: Int, stepFrac: Int,
                                 _ x0: UnsafePointer<Double>, _ x1: UnsafePointer<Double>, start: Int, phase: Int, count: Int,
                                 into out0: UnsafeMutablePointer<Double>, _ out1: UnsafeMutablePointer<Double>) {
        var b = start, p = phase
        for i in 0..<count {
            let c = UnsafeRawPointer(coefs + p * taps), s0 = UnsafeRawPointer(x0 + b), s1 = UnsafeRawPointer(x1 + b)
            var a0 = SIMD4<Double>(), a1 = SIMD4<Double>(), b0 = SIMD4<Double>(), b1 = SIMD4<Double>()
            var o = 0
            let end = taps * 8
            while o < end {
                let c0 = c.loadUnaligned(fromByteOffset: o, as: SIMD4<Double>.self)
                let c1 = c.loadUnaligned(fromByteOffset: o + 32, as: SIMD4<Double>.self)
                a0.addProduct(c0, s0.loadUnaligned(fromByteOffset: o, as: SIMD4<Double>.self))
                a1.addProduct(c1, s0.loadUnaligned(fromByteOffset: o + 32, as: SIMD4<Double>.self))
                b0.addProduct(c0, s1.loadUnaligned(fromByteOffset: o, as: SIMD4<Double>.self))
                b1.addProduct(c1, s1.loadUnaligned(fromByteOffset: o + 32, as: SIMD4<Double>.self))
                o += 64
            }
            out0[i] = (a0 + a1).sum()
            out1[i] = (b0 + b1).sum()
            b += stepInt
            p += stepFrac
            if p >= up { p -= up; b += 1 }
        }
    }
}
