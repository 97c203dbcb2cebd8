// The H.264 / HEVC Annex B start-code scan (see include/MediaKitSIMD.h). SSE2 is part of the
// x86-64 baseline, so this needs no target attribute; other architectures get the plain loop.
#include "MediaKitSIMD.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

intptr_t mediakit_find_start_code(const uint8_t *bytes, intptr_t count) {
    intptr_t i = 0;
#if defined(__SSE2__)
    // 16 candidate positions at a time: the bytes at i, i + 1 and i + 2 compared with 00, 00
    // and 01 in three overlapping loads; a hit is rare (a start code), so the loop streams.
    const __m128i zero = _mm_setzero_si128(), one = _mm_set1_epi8(1);
    for (; i + 18 <= count; i += 16) {
        __m128i a = _mm_loadu_si128((const __m128i *)(bytes + i));
        __m128i b = _mm_loadu_si128((const __m128i *)(bytes + i + 1));
        __m128i c = _mm_loadu_si128((const __m128i *)(bytes + i + 2));
        __m128i m = _mm_and_si128(_mm_and_si128(_mm_cmpeq_epi8(a, zero), _mm_cmpeq_epi8(b, zero)), _mm_cmpeq_epi8(c, one));
        int mask = _mm_movemask_epi8(m);
        if (mask != 0) return i + __builtin_ctz((unsigned)mask);
    }
#endif
    for (; i + 2 < count; i++) {
        if (bytes[i] == 0 && bytes[i + 1] == 0 && bytes[i + 2] == 1) return i;
    }
    return count;
}
