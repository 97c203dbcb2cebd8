/*
 * stream_alloc.c — pushes a file through the C stream parser (mk_stream_parser_*) in chunks of
 * CHUNK bytes and measures the heap it uses, for the oracle test of bad inputs
 * (Tests/oracle/test_stream_bad_input.py): "never an allocation larger than the input".
 *
 *     stream_alloc FILE CHUNK
 *
 * The file is read into memory first. Then, from the first mk_stream_parser_open() to the last
 * mk_stream_parser_close(), every malloc / calloc / realloc / memalign / posix_memalign /
 * aligned_alloc of the process (this program, libmediakit, the Swift runtime) is counted: this
 * executable defines those functions, so the dynamic linker binds every library's calls to them
 * (ELF symbol interposition), and they forward to glibc's __libc_* entry points. Sizes are
 * malloc_usable_size() of the block, so frees subtract what allocations added.
 *
 * Standard output, one line each:
 *     warning OFFSET-TEXT       (each warning event's text; it names the byte offset)
 *     packets N bytes B
 *     status push|finish OK|ERROR-TEXT
 *     largest-allocation BYTES   (the largest single block while counting)
 *     peak-heap-growth BYTES     (the highest live heap minus the live heap when counting began)
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

static int counting;
static size_t largest;
static long long live, peak;

static void *noted(void *p) {
    if (p && counting) {
        size_t n = malloc_usable_size(p);
        if (n > largest) largest = n;
        live += (long long)n;
        if (live > peak) peak = live;
    }
    return p;
}

static void unnoted(void *p) {
    if (p && counting) live -= (long long)malloc_usable_size(p);
}

void *malloc(size_t n) { return noted(__libc_malloc(n)); }
void *calloc(size_t a, size_t b) { return noted(__libc_calloc(a, b)); }
void free(void *p) { unnoted(p); __libc_free(p); }
void *realloc(void *p, size_t n) {
    unnoted(p);
    return noted(__libc_realloc(p, n));
}
void *memalign(size_t align, size_t n) { return noted(__libc_memalign(align, n)); }
void *aligned_alloc(size_t align, size_t n) { return noted(__libc_memalign(align, n)); }
int posix_memalign(void **out, size_t align, size_t n) {
    void *p = __libc_memalign(align, n);
    if (!p) return 12; /* ENOMEM */
    *out = noted(p);
    return 0;
}

static long packets, packet_bytes;
static char status[512] = "OK";
static const char *where = "finish";

static void drain(mk_stream_parser *sp, int print) {
    mk_stream_event ev;
    memset(&ev, 0, sizeof ev);
    ev.struct_size = sizeof ev;
    while (mk_stream_parser_next_event(sp, &ev) == MK_OK) {
        if (ev.kind == MK_STREAM_EVENT_PACKET) {
            packets++;
            packet_bytes += (long)ev.size;
        } else if (ev.kind == MK_STREAM_EVENT_WARNING && print) {
            printf("warning %s\n", ev.text);
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s FILE CHUNK\n", argv[0]); return 2; }
    static char out[1 << 16];
    setvbuf(stdout, out, _IOFBF, sizeof out);   /* printing allocates nothing while counting */
    long chunk = atol(argv[2]);
    FILE *f = fopen(argv[1], "rb");
    if (!f || chunk <= 0) { fprintf(stderr, "cannot open %s (or a bad CHUNK)\n", argv[1]); return 2; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = __libc_malloc(size > 0 ? (size_t)size : 1);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) { fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    fclose(f);
    /* Pass 1 (not counted) warms the library up: the Swift runtime's one-time set-up (type
     * metadata, caches) and the C API's handle table are made on first use, whatever the input.
     * Pass 2 is counted. */
    for (int pass = 1; pass <= 2; pass++) {
        mk_stream_parser *sp = NULL;
        counting = pass == 2;
        packets = packet_bytes = 0;
        snprintf(status, sizeof status, "OK");
        where = "finish";
        if (mk_stream_parser_open(&sp, size) != MK_OK) { fprintf(stderr, "open: %s\n", mk_last_error()); return 2; }
        for (long at = 0; at < size; at += chunk) {
            long n = size - at < chunk ? size - at : chunk;
            if (mk_stream_parser_push(sp, data + at, (size_t)n, 0) != MK_OK) {
                snprintf(status, sizeof status, "%s", mk_last_error());
                where = "push";
                break;
            }
            drain(sp, pass == 2);
        }
        if (mk_stream_parser_finish(sp) != MK_OK && where[0] == 'f') snprintf(status, sizeof status, "%s", mk_last_error());
        drain(sp, pass == 2);
        mk_stream_parser_close(&sp);
        counting = 0;
    }

    printf("packets %ld bytes %ld\n", packets, packet_bytes);
    printf("status %s %s\n", where, status);
    printf("largest-allocation %zu\n", largest);
    printf("peak-heap-growth %lld\n", peak);
    __libc_free(data);
    return 0;
}
