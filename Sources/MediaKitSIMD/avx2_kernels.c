// AVX2 + FMA resampler loops (see include/MediaKitSIMD.h). Each function carries its own
// target attribute, so this file builds with the package's ordinary flags.
#include "MediaKitSIMD.h"

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>

#define MK_AVX2 __attribute__((target("avx2,fma")))

int mediakit_simd_avx2_available(void) { return 1; }

// Lanes summed in order (as Swift's SIMD sum() does), after adding the two accumulators.
MK_AVX2 static inline float sum_f32(__m256 a0, __m256 a1) {
    float v[8];
    _mm256_storeu_ps(v, _mm256_add_ps(a0, a1));
    float r = v[0];
    for (int i = 1; i < 8; i++) r += v[i];
    return r;
}

MK_AVX2 static inline double sum_f64(__m256d a0, __m256d a1) {
    double v[4];
    _mm256_storeu_pd(v, _mm256_add_pd(a0, a1));
    return ((v[0] + v[1]) + v[2]) + v[3];
}

MK_AVX2 void mediakit_simd_resample_f32(const float *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                                  const float *x, intptr_t start, intptr_t phase, intptr_t count, float *out) {
    intptr_t b = start, p = phase;
    for (intptr_t i = 0; i < count; i++) {
        const float *c = coefs + p * taps, *s = x + b;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
        intptr_t o = 0;
        for (; o + 16 <= taps; o += 16) {
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(c + o), _mm256_loadu_ps(s + o), a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(c + o + 8), _mm256_loadu_ps(s + o + 8), a1);
        }
        if (o < taps) a0 = _mm256_fmadd_ps(_mm256_loadu_ps(c + o), _mm256_loadu_ps(s + o), a0);
        out[i] = sum_f32(a0, a1);
        b += step_int;
        p += step_frac;
        if (p >= up) { p -= up; b += 1; }
    }
}

MK_AVX2 void mediakit_simd_resample2_f32(const float *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                                   const float *x0, const float *x1, intptr_t start, intptr_t phase, intptr_t count,
                                   float *out0, float *out1) {
    intptr_t b = start, p = phase;
    for (intptr_t i = 0; i < count; i++) {
        const float *c = coefs + p * taps, *s0 = x0 + b, *s1 = x1 + b;
        __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps(), b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps();
        intptr_t o = 0;
        for (; o + 16 <= taps; o += 16) {
            __m256 c0 = _mm256_loadu_ps(c + o), c1 = _mm256_loadu_ps(c + o + 8);
            a0 = _mm256_fmadd_ps(c0, _mm256_loadu_ps(s0 + o), a0);
            a1 = _mm256_fmadd_ps(c1, _mm256_loadu_ps(s0 + o + 8), a1);
            b0 = _mm256_fmadd_ps(c0, _mm256_loadu_ps(s1 + o), b0);
            b1 = _mm256_fmadd_ps(c1, _mm256_loadu_ps(s1 + o + 8), b1);
        }
        if (o < taps) {
            __m256 c0 = _mm256_loadu_ps(c + o);
            a0 = _mm256_fmadd_ps(c0, _mm256_loadu_ps(s0 + o), a0);
            b0 = _mm256_fmadd_ps(c0, _mm256_loadu_ps(s1 + o), b0);
        }
        out0[i] = sum_f32(a0, a1);
        out1[i] = sum_f32(b0, b1);
        b += step_int;
        p += step_frac;
        if (p >= up) { p -= up; b += 1; }
    }
}

MK_AVX2 void mediakit_simd_resample_f64(const double *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                                  const double *x, intptr_t start, intptr_t phase, intptr_t count, double *out) {
    intptr_t b = start, p = phase;
    for (intptr_t i = 0; i < count; i++) {
        const double *c = coefs + p * taps, *s = x + b;
        __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
        for (intptr_t o = 0; o < taps; o += 8) {
            a0 = _mm256_fmadd_pd(_mm256_loadu_pd(c + o), _mm256_loadu_pd(s + o), a0);
            a1 = _mm256_fmadd_pd(_mm256_loadu_pd(c + o + 4), _mm256_loadu_pd(s + o + 4), a1);
        }
        out[i] = sum_f64(a0, a1);
        b += step_int;
        p += step_frac;
        if (p >= up) { p -= up; b += 1; }
    }
}

MK_AVX2 void mediakit_simd_resample2_f64(const double *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                                   const double *x0, const double *x1, intptr_t start, intptr_t phase, intptr_t count,
                                   double *out0, double *out1) {
    intptr_t b = start, p = phase;
    for (intptr_t i = 0; i < count; i++) {
        const double *c = coefs + p * taps, *s0 = x0 + b, *s1 = x1 + b;
        __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd(), b0 = _mm256_setzero_pd(), b1 = _mm256_setzero_pd();
        for (intptr_t o = 0; o < taps; o += 8) {
            __m256d c0 = _mm256_loadu_pd(c + o), c1 = _mm256_loadu_pd(c + o + 4);
            a0 = _mm256_fmadd_pd(c0, _mm256_loadu_pd(s0 + o), a0);
            a1 = _mm256_fmadd_pd(c1, _mm256_loadu_pd(s0 + o + 4), a1);
            b0 = _mm256_fmadd_pd(c0, _mm256_loadu_pd(s1 + o), b0);
            b1 = _mm256_fmadd_pd(c1, _mm256_loadu_pd(s1 + o + 4), b1);
        }
        out0[i] = sum_f64(a0, a1);
        out1[i] = sum_f64(b0, b1);
        b += step_int;
        p += step_frac;
        if (p >= up) { p -= up; b += 1; }
    }
}

#else

int mediakit_simd_avx2_available(void) { return 0; }

// Never called where mediakit_simd_avx2_available() is 0 (MediaKit checks it first).
void mediakit_simd_resample_f32(const float *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                          const float *x, intptr_t start, intptr_t phase, intptr_t count, float *out) {
    (void)coefs; (void)taps; (void)up; (void)step_int; (void)step_frac; (void)x; (void)start; (void)phase; (void)count; (void)out;
    __builtin_trap();
}
void mediakit_simd_resample2_f32(const float *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                           const float *x0, const float *x1, intptr_t start, intptr_t phase, intptr_t count,
                           float *out0, float *out1) {
    (void)coefs; (void)taps; (void)up; (void)step_int; (void)step_frac; (void)x0; (void)x1; (void)start; (void)phase;
    (void)count; (void)out0; (void)out1;
    __builtin_trap();
}
void mediakit_simd_resample_f64(const double *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                          const double *x, intptr_t start, intptr_t phase, intptr_t count, double *out) {
    (void)coefs; (void)taps; (void)up; (void)step_int; (void)step_frac; (void)x; (void)start; (void)phase; (void)count; (void)out;
    __builtin_trap();
}
void mediakit_simd_resample2_f64(const double *coefs, intptr_t taps, intptr_t up, intptr_t step_int, intptr_t step_frac,
                           const double *x0, const double *x1, intptr_t start, intptr_t phase, intptr_t count,
                           double *out0, double *out1) {
    (void)coefs; (void)taps; (void)up; (void)step_int; (void)step_frac; (void)x0; (void)x1; (void)start; (void)phase;
    (void)count; (void)out0; (void)out1;
    __builtin_trap();
}

#endif
