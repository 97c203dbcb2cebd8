/*
 * frame_pool_alloc.c — decodes one track through the C API and packs every frame into ONE
 * reused buffer with mk_frame_pack (NV12 for video: a 10-bit or 4:4:4 picture goes through the
 * FFmpeg plugin's picture converter; s16 for audio), counting the heap blocks of at least half a
 * packed frame that the process allocates after a warm-up: steady-state decoding must allocate
 * no new frame buffers (the decoders' pictures are pooled by libavcodec and dav1d, the
 * converter's by its own pool, packing writes into the caller's buffer). For
 * Tests/oracle/test_capi.py; the counting is stream_alloc.c's (ELF interposition of malloc & co.).
 *
 *     frame_pool_alloc FILE TRACK WARMUP
 *
 * Standard output:
 *     frames N
 *     frame-bytes B                 (the packed size of the last frame)
 *     large-allocations K           (blocks >= B/2 allocated after frame WARMUP)
 *     large-bytes L                 (their total)
 *     status OK|ERROR-TEXT
 */
#define _GNU_SOURCE
#include <mediakit/mediakit.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static volatile int counting;
static volatile size_t threshold = (size_t)-1;
static volatile long large_count, large_bytes;

static void *noted(void *p, size_t n) {
    if (p && counting && n >= threshold) {
        __atomic_add_fetch(&large_count, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&large_bytes, (long)n, __ATOMIC_RELAXED);
    }
    return p;
}

void *malloc(size_t n) { return noted(__libc_malloc(n), n); }
void *calloc(size_t a, size_t b) { return noted(__libc_calloc(a, b), a * b); }
void free(void *p) { __libc_free(p); }
void *realloc(void *p, size_t n) { return noted(__libc_realloc(p, n), n); }
void *memalign(size_t align, size_t n) { return noted(__libc_memalign(align, n), n); }
void *aligned_alloc(size_t align, size_t n) { return noted(__libc_memalign(align, n), n); }
int posix_memalign(void **out, size_t align, size_t n) {
    void *p = __libc_memalign(align, n);
    if (!p) return 12; /* ENOMEM */
    *out = noted(p, n);
    return 0;
}

static long frames;
static int warmup;
static int layout;
static unsigned char *buffer;
static size_t capacity, last_size;

static int take(mk_frame *f) {
    size_t size = 0;
    if (mk_frame_pack(f, layout, NULL, 0, &size) != MK_OK) return -1;
    if (size > capacity) {                      /* the caller's one buffer, grown once */
        counting = 0;
        free(buffer);
        buffer = malloc(size);
        capacity = size;
    }
    last_size = size;
    if (mk_frame_pack(f, layout, buffer, capacity, &size) != MK_OK) return -1;
    frames++;
    if (frames == warmup) {
        threshold = size / 2;
        counting = 1;
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: frame_pool_alloc FILE TRACK WARMUP\n");
        return 2;
    }
    int32_t track = atoi(argv[2]);
    warmup = atoi(argv[3]);
    mk_demuxer *dmx = NULL;
    mk_decode_session *dec = NULL;
    mk_packet *pkt = NULL;
    mk_frame *frm = NULL;
    const char *failure = NULL;
    mk_track_info ti;
    ti.struct_size = sizeof ti;
    if (mk_demuxer_open(&dmx, argv[1]) != MK_OK || mk_demuxer_track(dmx, track, &ti) != MK_OK
        || mk_decode_session_open(&dec, dmx, track, NULL) != MK_OK) {
        printf("status %s\n", mk_last_error());
        return 1;
    }
    layout = ti.media_type == MK_MEDIA_VIDEO ? MK_PACK_NV12 : MK_PACK_S16;
    mk_status st;
    while (!failure && (st = mk_demuxer_read_track_packet(dmx, track, &pkt)) == MK_OK) {
        while (!failure && mk_decode_session_send_packet(dec, pkt) == MK_EAGAIN)
            while (!failure && mk_decode_session_receive_frame(dec, &frm) == MK_OK) {
                if (take(frm) != 0) failure = mk_last_error();
                mk_frame_free(&frm);
            }
        mk_packet_free(&pkt);
        while (!failure && mk_decode_session_receive_frame(dec, &frm) == MK_OK) {
            if (take(frm) != 0) failure = mk_last_error();
            mk_frame_free(&frm);
        }
    }
    if (!failure) {
        mk_decode_session_send_packet(dec, NULL);
        while (!failure && mk_decode_session_receive_frame(dec, &frm) == MK_OK) {
            if (take(frm) != 0) failure = mk_last_error();
            mk_frame_free(&frm);
        }
    }
    counting = 0;
    printf("frames %ld\nframe-bytes %zu\nlarge-allocations %ld\nlarge-bytes %ld\nstatus %s\n", frames, last_size,
           large_count, large_bytes, failure ? failure : "OK");
    mk_decode_session_close(&dec);
    mk_demuxer_close(&dmx);
    free(buffer);
    return failure ? 1 : 0;
}
