// The resampler's inner loops for x86-64 processors with AVX2 and FMA (x86-64-v3), and the
// Annex B start-code scan (any processor; at the end).
//
// Each function is compiled for that instruction set alone (a per-function target attribute),
// so the rest of MediaKit keeps the baseline x86-64 target and the package needs no unsafe
// build flag. MediaKit calls them only after checking that the processor has both features
// (Audio/Resampler.swift, CPUFeatures); on any other processor, or on another architecture,
// `mediakit_simd_avx2_available()` is 0 and calling them is an error.
//
// Polyphase filter loops: output `i` is the dot product of coefficient row `p_i` (`taps`
// values at `coefs + p_i * taps`) with the `taps` inputs starting at `x + b_i`, where
// `(b_0, p_0) = (start, phase)`, `(b, p)` advance by `(step_int, step_frac)` per output and
// `p` wraps at `up`, carrying 1 into `b`. `taps` is a multiple of 8.
//
// Results are bit-identical to a loop that keeps two vector accumulators (8 floats or 4
// doubles each) over alternate blocks with fused multiply-adds, adds them, then sums the
// lanes in order.
//
// The names do not start with mk_: libmediakit exports only its C API (mk_*), not these.
//
// Ownership: every pointer is borrowed for the call; the caller keeps the coefficients and
// inputs readable for the rows and inputs the loop reaches and the outputs writable for
// `count` values. Thread-safety: none needed (no state).
#ifndef MEDIAKIT_SIMD_H
#define MEDIAKIT_SIMD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when these loops were compiled in (x86-64 with a compiler that has the target
/// attribute), 0 otherwise. It does not test the processor: the caller does.
int mediakit_simd_avx2_available(void);

/// One channel, 32-bit float.
void mediakit_simd_resample_f32(const float *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                          const float *x, intptr_t start, intptr_t phase, intptr_t count, float *out);

/// Two channels through the same phases, 32-bit float.
void mediakit_simd_resample2_f32(const float *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                           const float *x0, const float *x1, intptr_t start, intptr_t phase, intptr_t count,
                           float *out0, float *out1);

/// One channel, 64-bit float.
void mediakit_simd_resample_f64(const double *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                          const double *x, intptr_t start, intptr_t phase, intptr_t count, double *out);

/// Two channels through the same phases, 64-bit float.
void mediakit_simd_resample2_f64(const double *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                           const double *x0, const double *x1, intptr_t start, intptr_t phase, intptr_t count,
                           double *out0, double *out1);

/// The index of the first start code (the bytes 00 00 01) in `count` bytes at `bytes`, or
/// `count` when there is none. Any processor (SSE2 on x86-64, a plain loop elsewhere).
/// Ownership: `bytes` is borrowed for the call (readable for `count` bytes).
intptr_t mediakit_find_start_code(const uint8_t *bytes, intptr_t count);

#ifdef __cplusplus
}
#endif

#endif
