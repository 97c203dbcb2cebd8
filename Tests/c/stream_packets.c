/*
 * stream_packets.c — pushes a file through the C stream parser opened with a file type hint
 * (mk_stream_parser_open_hint) in chunks of CHUNK bytes, for Tests/oracle/test_stream_containers.py.
 *
 *     stream_packets FILE CHUNK HINT
 *
 * Standard output, one line per event of these kinds, in order:
 *     format NAME
 *     data-format CODEC RATE CHANNELS
 *     cookie SIZE
 *     packet OFFSET SIZE FRAMES FNV1A64-OF-THE-BYTES
 *     error TEXT          (a push or the finish failed; exit status 1)
 */
#include <mediakit/mediakit.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a(const uint8_t *p, size_t n) {
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

static void drain(mk_stream_parser *sp) {
    mk_stream_event ev;
    memset(&ev, 0, sizeof ev);
    ev.struct_size = sizeof ev;
    while (mk_stream_parser_next_event(sp, &ev) == MK_OK) {
        switch (ev.kind) {
        case MK_STREAM_EVENT_FILE_FORMAT: printf("format %s\n", ev.text); break;
        case MK_STREAM_EVENT_DATA_FORMAT: printf("data-format %s %d %d\n", ev.text, ev.sample_rate, ev.channels); break;
        case MK_STREAM_EVENT_MAGIC_COOKIE: printf("cookie %zu\n", ev.size); break;
        case MK_STREAM_EVENT_PACKET:
            printf("packet %" PRId64 " %zu %d %016" PRIx64 "\n", ev.offset, ev.size, ev.frames, fnv1a(ev.data, ev.size));
            break;
        default: break;
        }
    }
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: stream_packets FILE CHUNK HINT\n"); return 2; }
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 2; }
    size_t chunk = (size_t)strtoul(argv[2], NULL, 10);
    if (chunk == 0) chunk = 1;
    uint8_t *buf = malloc(chunk);
    mk_stream_parser *sp = NULL;
    if (mk_stream_parser_open_hint(&sp, -1, argv[3]) != MK_OK) { printf("error %s\n", mk_last_error()); return 1; }
    size_t n;
    int status = 0;
    while ((n = fread(buf, 1, chunk, f)) > 0) {
        if (mk_stream_parser_push(sp, buf, n, 0) != MK_OK) { drain(sp); printf("error %s\n", mk_last_error()); status = 1; break; }
        drain(sp);
    }
    if (status == 0) {
        if (mk_stream_parser_finish(sp) != MK_OK) { printf("error %s\n", mk_last_error()); status = 1; }
        drain(sp);
    }
    mk_stream_parser_close(&sp);
    fclose(f);
    free(buf);
    return status;
}
