/*
 * demuxer_harness.c — the contract test of a plugin's demuxer factory (plugin ABI 2.4), with no
 * host: drives the plugin's MK_PLUGIN_DEMUXER_FACTORY over one file through the ABI's IO
 * callbacks (Tests/oracle/test_plugin_harness.py runs it over the FFmpeg plugin).
 *
 *   demuxer_harness PLUGIN.so FILE
 *
 * What is checked (each failure is printed as FAIL with the reason):
 *  - Loading: the factory's struct size, get_format out of range, every format's struct size,
 *    name, score and create.
 *  - Arguments: score of NULL / empty heads is 0; create with a NULL io, demuxer or vtable,
 *    or an io struct too small, is an error with a message, never a crash; the file's own
 *    format on 64 bytes of garbage is an error with a message, or (text formats such as
 *    libavformat's webvtt take any bytes) opens and reads to MK_EOF without a crash.
 *  - Tags and attachments (2.5): each track's tags are key / value pairs ending in NULL; an
 *    attachment (MK_DISPOSITION_ATTACHMENT) is MK_MEDIA_DATA with bytes and no packets; only
 *    attachments and covers have attachment bytes; every tag and byte is read (valgrind).
 *  - A clean read (the reference): the best-scoring format opens the file (seekable io); every
 *    track described (get_track out of range is MK_EINVAL); every packet read to MK_EOF, then
 *    MK_EOF again; a hash of each packet's track, timestamps, size, flags and bytes.
 *  - struct_size growth: a track info and a packet struct SMALLER than this header's (the
 *    fields of the smaller struct filled, the bytes after it untouched, struct_size set to it)
 *    and LARGER (filled up to the plugin's size).
 *  - Seek: seek to 0 and a second read gives the reference's packets again (track, size,
 *    flags, bytes; timestamps may differ: libavformat times a re-queued cover picture). Seek
 *    to the time of a key packet in the middle of the reference: MK_OK, the first packet of
 *    that track read after it is at or before that time, the read goes on to MK_EOF with no
 *    error and no more packets than the whole file (libavformat's mpc7 goes back to the
 *    start, as ffprobe -read_intervals shows); that first packet read into a packet
 *    struct SMALLER than this header's is filled up to it and nothing after it is written.
 *  - A pipe (seek NULL): the file reads front to back with no error; seek is MK_EUNSUPPORTED.
 *  - Cut short: the file's first half, opened as a source of its own, opens and reads to
 *    MK_EOF, or fails (create or read_packet) with a message; never a crash (valgrind's
 *    run, Tests/plugin_harness/run_valgrind.sh, checks the memory use too).
 *  - Threads: four instances, each on its own source, read the whole file at once on four
 *    threads, each giving the reference's packets (track, size, flags, bytes).
 *
 * Prints the format, track and packet counts and the hash; exit 0 when every check holds.
 *
 * Build: cc -std=c11 -Wall -Wextra -I../../Include demuxer_harness.c -ldl -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include "mediakit/mediakit_plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

static int failures; /* counted on the main thread only: the threads report through their result */
static uint8_t attachment_track[256]; /* tracks (of the first 256) with MK_DISPOSITION_ATTACHMENT */

#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            printf("FAIL: ");                                          \
            printf(__VA_ARGS__);                                       \
            printf("\n");                                              \
            failures++;                                                \
        }                                                              \
    } while (0)

static void host_log(const mk_host *host, int32_t level, const char *message)
{
    (void)host;
    (void)level;
    (void)message;
}

/* An io over a FILE*, seekable or not. */
typedef struct file_io {
    FILE *f;
    int64_t size;
} file_io;

static int64_t io_read(void *opaque, uint8_t *buf, size_t size)
{
    file_io *io = opaque;
    size_t n = fread(buf, 1, size, io->f);
    return ferror(io->f) ? MK_EFAIL : (int64_t)n;
}

static int32_t io_seek(void *opaque, int64_t offset)
{
    file_io *io = opaque;
    return fseeko(io->f, (off_t)offset, SEEK_SET) == 0 ? MK_OK : MK_EFAIL;
}

static int64_t io_size(void *opaque)
{
    return ((file_io *)opaque)->size;
}

static int64_t pipe_size(void *opaque)
{
    (void)opaque;
    return -1;
}

static uint64_t mix(uint64_t h, const void *data, size_t size)
{
    const uint8_t *p = data;
    for (size_t i = 0; i < size; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* Reads every packet; returns the count, the hash of every field in *hash and of the bytes
 * alone (track, size, flags, data) in *content; -1 on an error. */
static long read_all(void *d, const mk_plugin_demuxer_vtable *vt, uint32_t tracks, uint64_t *hash, uint64_t *content,
                     const char *who)
{
    uint64_t h = 1469598103934665603ull, c = h;
    long count = 0;
    for (;;) {
        mk_plugin_demuxed_packet p;
        memset(&p, 0, sizeof(p));
        p.struct_size = sizeof(p);
        int32_t status = vt->read_packet(d, &p);
        if (status == MK_EOF)
            break;
        if (status != MK_OK) {
            CHECK(0, "%s: read_packet %ld: status %d: %s", who, count, status, vt->last_error(d));
            return -1;
        }
        CHECK(p.struct_size > 0 && p.struct_size <= sizeof(p), "%s: packet struct_size %u", who, p.struct_size);
        CHECK(p.track >= 0 && (uint32_t)p.track < tracks, "%s: packet of track %d (%u tracks)", who, p.track, tracks);
        CHECK(p.track < 0 || p.track >= 256 || !attachment_track[p.track], "%s: a packet of track %d, an attachment", who, p.track);
        CHECK(p.size == 0 || p.data != NULL, "%s: a packet of %zu bytes with no data", who, p.size);
        h = mix(h, &p.track, sizeof(p.track));
        h = mix(h, &p.pts, sizeof(p.pts));
        h = mix(h, &p.dts, sizeof(p.dts));
        h = mix(h, &p.size, sizeof(p.size));
        h = mix(h, &p.flags, sizeof(p.flags));
        if (p.size)
            h = mix(h, p.data, p.size);
        c = mix(c, &p.track, sizeof(p.track));
        c = mix(c, &p.size, sizeof(p.size));
        c = mix(c, &p.flags, sizeof(p.flags));
        if (p.size)
            c = mix(c, p.data, p.size);
        count++;
    }
    mk_plugin_demuxed_packet again = { .struct_size = sizeof(again) };
    CHECK(vt->read_packet(d, &again) == MK_EOF, "%s: read_packet after MK_EOF is not MK_EOF", who);
    *hash = h;
    *content = c;
    return count;
}

/* One reader thread: its own FILE and io, its own instance, the whole file. */
typedef struct reader {
    const mk_plugin_demuxer_format *format;
    const char *path;
    long count;
    uint64_t content;
    char error[300];
} reader;

static void *reader_main(void *arg)
{
    reader *r = arg;
    r->count = -1;
    FILE *f = fopen(r->path, "rb");
    if (f == NULL) {
        snprintf(r->error, sizeof(r->error), "cannot open the file");
        return NULL;
    }
    fseeko(f, 0, SEEK_END);
    file_io fio = { f, (int64_t)ftello(f) };
    fseeko(f, 0, SEEK_SET);
    mk_plugin_io io = { sizeof(io), &fio, io_read, io_seek, io_size };
    void *d = NULL;
    const mk_plugin_demuxer_vtable *vt = NULL;
    if (r->format->create(r->format, &io, &d, &vt, r->error, sizeof(r->error)) == MK_OK) {
        uint64_t c = 1469598103934665603ull;
        long count = 0;
        for (;;) {
            mk_plugin_demuxed_packet p = { .struct_size = sizeof(p) };
            int32_t status = vt->read_packet(d, &p);
            if (status != MK_OK) {
                if (status != MK_EOF) {
                    snprintf(r->error, sizeof(r->error), "read_packet %ld: status %d: %s", count, status, vt->last_error(d));
                    count = -1;
                }
                break;
            }
            c = mix(c, &p.track, sizeof(p.track));
            c = mix(c, &p.size, sizeof(p.size));
            c = mix(c, &p.flags, sizeof(p.flags));
            if (p.size)
                c = mix(c, p.data, p.size);
            count++;
        }
        r->count = count;
        r->content = c;
        vt->destroy(d);
    }
    fclose(f);
    return NULL;
}

/* The first half of the file as a source of its own: opens and reads to MK_EOF, or fails with a
 * message. */
static void check_cut_short(const mk_plugin_demuxer_format *format, FILE *f, int64_t size)
{
    char path[] = "/tmp/demuxer-harness-cut-XXXXXX";
    int fd = mkstemp(path);
    FILE *g = fd >= 0 ? fdopen(fd, "w+b") : NULL;
    if (g == NULL) {
        CHECK(0, "cut short: cannot make a temporary file");
        return;
    }
    fseeko(f, 0, SEEK_SET);
    uint8_t buf[65536];
    for (int64_t left = size / 2; left > 0;) {
        size_t n = fread(buf, 1, left < (int64_t)sizeof(buf) ? (size_t)left : sizeof(buf), f);
        if (n == 0)
            break;
        fwrite(buf, 1, n, g);
        left -= (int64_t)n;
    }
    fflush(g);
    fseeko(g, 0, SEEK_SET);
    file_io gio = { g, size / 2 };
    mk_plugin_io io = { sizeof(io), &gio, io_read, io_seek, io_size };
    void *d = NULL;
    const mk_plugin_demuxer_vtable *vt = NULL;
    char err[256];
    err[0] = 0;
    int32_t status = format->create(format, &io, &d, &vt, err, sizeof(err));
    CHECK(status == MK_OK || err[0], "cut short: create fails (%d) with no message", status);
    if (status == MK_OK) {
        long count = 0;
        for (;; count++) {
            mk_plugin_demuxed_packet p = { .struct_size = sizeof(p) };
            status = vt->read_packet(d, &p);
            if (status != MK_OK)
                break;
        }
        const char *message = vt->last_error(d);
        CHECK(status == MK_EOF || (message != NULL && message[0]), "cut short: read_packet %ld fails (%d) with no message",
              count, status);
        vt->destroy(d);
    }
    fclose(g);
    remove(path);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s PLUGIN.so FILE\n", argv[0]);
        return 2;
    }
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (so == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    mk_plugin_entry_fn entry = (mk_plugin_entry_fn)dlsym(so, MK_PLUGIN_ENTRY_SYMBOL);
    const mk_plugin_descriptor *desc = entry ? entry() : NULL;
    if (desc == NULL || desc->abi.major != MK_PLUGIN_ABI_MAJOR) {
        fprintf(stderr, "not a plugin of ABI %u\n", MK_PLUGIN_ABI_MAJOR);
        return 2;
    }
    static mk_host host = { sizeof(mk_host), MK_PLUGIN_ABI_CURRENT, "harness", "0", NULL, MK_LOG_QUIET, host_log };
    if (desc->init(&host) != MK_OK) {
        fprintf(stderr, "init failed\n");
        return 2;
    }
    const mk_plugin_demuxer_factory *factory = desc->get_factory(MK_PLUGIN_DEMUXER_FACTORY);
    if (factory == NULL) {
        printf("FAIL: the plugin has no demuxer factory\n");
        return 1;
    }
    CHECK(factory->struct_size >= END_OF(mk_plugin_demuxer_factory, get_format), "factory struct_size %u", factory->struct_size);
    uint32_t n = factory->format_count();
    CHECK(n > 0, "no formats");
    CHECK(factory->get_format(n) == NULL, "get_format(count) is not NULL");

    FILE *f = fopen(argv[2], "rb");
    if (f == NULL) {
        fprintf(stderr, "cannot open %s\n", argv[2]);
        return 2;
    }
    fseeko(f, 0, SEEK_END);
    file_io fio = { f, (int64_t)ftello(f) };
    fseeko(f, 0, SEEK_SET);
    uint8_t head[4096 + 64];
    memset(head, 0, sizeof(head));
    size_t head_size = fread(head, 1, 4096, f);
    fseeko(f, 0, SEEK_SET);

    const mk_plugin_demuxer_format *best = NULL;
    int32_t best_score = 0;
    for (uint32_t i = 0; i < n; i++) {
        const mk_plugin_demuxer_format *fmt = factory->get_format(i);
        CHECK(fmt != NULL && fmt->struct_size >= END_OF(mk_plugin_demuxer_format, create) && fmt->name != NULL &&
              fmt->long_name != NULL && fmt->extensions != NULL && fmt->mime_types != NULL && fmt->score != NULL &&
              fmt->create != NULL, "format %u is malformed", i);
        if (fmt == NULL || fmt->score == NULL)
            continue;
        CHECK(fmt->score(fmt, NULL, 0, -1) == 0, "%s: score of a NULL head is not 0", fmt->name);
        CHECK(fmt->score(fmt, head, 0, 0) == 0, "%s: score of an empty head is not 0", fmt->name);
        int32_t s = fmt->score(fmt, head, head_size, fio.size);
        CHECK(s >= 0 && s <= 100, "%s: score %d out of 0...100", fmt->name, s);
        if (s > best_score) {
            best_score = s;
            best = fmt;
        }
    }
    if (best == NULL) {
        printf("FAIL: no format scores %s\n", argv[2]);
        return 1;
    }

    /* Arguments. */
    mk_plugin_io io = { sizeof(io), &fio, io_read, io_seek, io_size };
    void *d = NULL;
    const mk_plugin_demuxer_vtable *vt = NULL;
    char err[256];
    err[0] = 0;
    CHECK(best->create(best, NULL, &d, &vt, err, sizeof(err)) != MK_OK && err[0], "create with a NULL io");
    err[0] = 0;
    CHECK(best->create(best, &io, NULL, &vt, err, sizeof(err)) != MK_OK && err[0], "create with a NULL demuxer");
    err[0] = 0;
    CHECK(best->create(best, &io, &d, NULL, err, sizeof(err)) != MK_OK && err[0], "create with a NULL vtable");
    mk_plugin_io tiny = { 4, &fio, io_read, io_seek, io_size };
    err[0] = 0;
    CHECK(best->create(best, &tiny, &d, &vt, NULL, 0) != MK_OK, "create with a 4-byte io struct");
    {
        char path[] = "/tmp/demuxer-harness-XXXXXX";
        int fd = mkstemp(path);
        FILE *g = fd >= 0 ? fdopen(fd, "w+b") : NULL;
        if (g != NULL) {
            for (int i = 0; i < 64; i++)
                fputc((i * 37 + 11) & 0xff, g);
            fflush(g);
            fseeko(g, 0, SEEK_SET);
            file_io gio = { g, 64 };
            mk_plugin_io garbage = { sizeof(garbage), &gio, io_read, io_seek, io_size };
            err[0] = 0;
            void *gd = NULL;
            const mk_plugin_demuxer_vtable *gvt = NULL;
            int32_t status = best->create(best, &garbage, &gd, &gvt, err, sizeof(err));
            CHECK(status == MK_OK || err[0], "%s refuses 64 bytes of garbage with no message", best->name);
            if (status == MK_OK) {
                uint64_t h, c;
                (void)read_all(gd, gvt, gvt->track_count(gd), &h, &c, "garbage");
                gvt->destroy(gd);
            }
            fclose(g);
            remove(path);
        }
    }

    int32_t mid_track = -1; /* the track of the packet sought to in the middle, -1: none */

    /* The clean read. */
    fseeko(f, 0, SEEK_SET);
    err[0] = 0;
    int32_t status = best->create(best, &io, &d, &vt, err, sizeof(err));
    if (status != MK_OK) {
        printf("FAIL: %s does not open %s: %s\n", best->name, argv[2], err);
        return 1;
    }
    CHECK(vt->struct_size >= END_OF(mk_plugin_demuxer_vtable, destroy), "vtable struct_size %u", vt->struct_size);
    CHECK(vt->last_error(d) != NULL, "last_error is NULL");
    uint32_t tracks = vt->track_count(d);
    for (uint32_t i = 0; i < tracks; i++) {
        mk_plugin_track_info t;
        memset(&t, 0, sizeof(t));
        t.struct_size = sizeof(t);
        CHECK(vt->get_track(d, i, &t) == MK_OK, "get_track %u", i);
        CHECK(t.codec != NULL && t.codec_tag != NULL && t.language != NULL && t.title != NULL, "track %u: a NULL string", i);
        CHECK(t.time_base_num > 0 && t.time_base_den > 0, "track %u: time base %d/%d", i, t.time_base_num, t.time_base_den);
        /* 2.5: the tags (key, value, ..., NULL) and an attachment's bytes, every byte read. */
        if (t.struct_size >= END_OF(mk_plugin_track_info, attachment_size)) {
            int pairs = 0;
            for (const char *const *tag = t.tags; tag != NULL && *tag != NULL; tag += 2, pairs++) {
                CHECK(tag[1] != NULL, "track %u: tag %s has no value", i, tag[0]);
                if (tag[1] == NULL)
                    break;
                (void)mix(0, tag[0], strlen(tag[0]));
                (void)mix(0, tag[1], strlen(tag[1]));
            }
            int attached = (t.disposition & MK_DISPOSITION_ATTACHMENT) != 0;
            CHECK(!attached || (t.attachment != NULL && t.attachment_size > 0 && t.media_type == MK_MEDIA_DATA),
                  "track %u: an attachment with no bytes, or not MK_MEDIA_DATA", i);
            CHECK(t.attachment == NULL || attached || (t.disposition & MK_DISPOSITION_ATTACHED_PIC),
                  "track %u: attachment bytes on a track that is neither an attachment nor a cover", i);
            CHECK(t.attachment_size == 0 || t.attachment != NULL, "track %u: %zu attachment bytes at NULL", i, t.attachment_size);
            if (t.attachment != NULL)
                (void)mix(0, t.attachment, t.attachment_size);
            if (i < 256)
                attachment_track[i] = (uint8_t)attached;
        }
        /* Smaller: up to `codec`; the bytes after it stay as they were. */
        struct { mk_plugin_track_info t; uint8_t guard[64]; } small;
        memset(&small, 0xAB, sizeof(small));
        small.t.struct_size = (uint32_t)END_OF(mk_plugin_track_info, codec);
        CHECK(vt->get_track(d, i, &small.t) == MK_OK, "get_track %u into a small struct", i);
        CHECK(small.t.struct_size == END_OF(mk_plugin_track_info, codec), "small track struct_size %u", small.t.struct_size);
        const uint8_t *after = (const uint8_t *)&small.t + END_OF(mk_plugin_track_info, codec);
        int untouched = 1;
        for (size_t k = 0; k < sizeof(small) - END_OF(mk_plugin_track_info, codec); k++)
            untouched &= after[k] == 0xAB;
        CHECK(untouched, "get_track %u wrote past a small struct_size", i);
        /* Larger: filled up to the plugin's size. */
        struct { mk_plugin_track_info t; uint8_t later[64]; } big;
        memset(&big, 0, sizeof(big));
        big.t.struct_size = sizeof(big);
        CHECK(vt->get_track(d, i, &big.t) == MK_OK && big.t.struct_size <= sizeof(big) &&
              big.t.struct_size >= END_OF(mk_plugin_track_info, title), /* a 2.4 plugin's size at least */
              "get_track %u into a larger struct (struct_size %u)", i, big.t.struct_size);
    }
    mk_plugin_track_info none = { .struct_size = sizeof(none) };
    CHECK(vt->get_track(d, tracks, &none) == MK_EINVAL, "get_track(track_count) is not MK_EINVAL");
    CHECK(vt->get_track(d, 0, NULL) == MK_EINVAL, "get_track with a NULL info is not MK_EINVAL");
    CHECK(vt->read_packet(d, NULL) == MK_EINVAL, "read_packet(NULL) is not MK_EINVAL");
    uint64_t ref_hash = 0, ref_content = 0;
    long ref = read_all(d, vt, tracks, &ref_hash, &ref_content, "clean read");

    /* Seek to 0, and read it all again. */
    CHECK(vt->seek(d, 0, 0) == MK_OK, "seek to 0: %s", vt->last_error(d));
    uint64_t again_hash = 0, again_content = 0;
    long again = read_all(d, vt, tracks, &again_hash, &again_content, "after seek to 0");
    CHECK(again == ref && again_content == ref_content, "after seek to 0: %ld packets (hash %016llx), the clean read %ld (%016llx)",
          again, (unsigned long long)again_content, ref, (unsigned long long)ref_content);

    /* Seek to a key packet in the middle: find one (track, time) in a third read. */
    CHECK(vt->seek(d, 0, 0) == MK_OK, "seek to 0 (again): %s", vt->last_error(d));
    int64_t mid_us = 0;
    for (long i = 0; ref > 2 && i < ref; i++) {
        mk_plugin_demuxed_packet p = { .struct_size = sizeof(p) };
        if (vt->read_packet(d, &p) != MK_OK)
            break;
        mk_plugin_track_info t = { .struct_size = sizeof(t) };
        if (i >= ref / 2 && (p.flags & MK_PACKET_FLAG_KEY) && p.pts != MK_NOPTS_VALUE && p.pts > 0 &&
            vt->get_track(d, (uint32_t)p.track, &t) == MK_OK && t.media_type != MK_MEDIA_SUBTITLE) {
            mid_track = p.track;
            mid_us = (int64_t)((double)p.pts * 1e6 * t.time_base_num / t.time_base_den);
            break;
        }
    }
    if (mid_track >= 0) {
        int32_t status = vt->seek(d, mid_us, 0);
        CHECK(status == MK_OK, "seek to %lld us: %s", (long long)mid_us, vt->last_error(d));
        long after = 0;
        int first = 1;
        for (; status == MK_OK; after++) {
            /* The first packet into a smaller struct (up to `duration`), with a guard after it. */
            struct { mk_plugin_demuxed_packet p; uint8_t guard[64]; } small;
            memset(&small, 0xAB, sizeof(small));
            small.p.struct_size = (uint32_t)END_OF(mk_plugin_demuxed_packet, duration);
            mk_plugin_demuxed_packet full = { .struct_size = sizeof(full) };
            mk_plugin_demuxed_packet *p = after == 0 ? &small.p : &full;
            status = vt->read_packet(d, p);
            if (status != MK_OK)
                break;
            if (after == 0) {
                CHECK(small.p.struct_size == END_OF(mk_plugin_demuxed_packet, duration), "a small packet struct: struct_size %u",
                      small.p.struct_size);
                const uint8_t *past = (const uint8_t *)&small.p + END_OF(mk_plugin_demuxed_packet, duration);
                int untouched = 1;
                for (size_t k = 0; k < sizeof(small) - END_OF(mk_plugin_demuxed_packet, duration); k++)
                    untouched &= past[k] == 0xAB;
                CHECK(untouched, "read_packet wrote past a small packet struct_size");
            }
            mk_plugin_track_info t = { .struct_size = sizeof(t) };
            if (first && p->track == mid_track && p->pts != MK_NOPTS_VALUE && vt->get_track(d, (uint32_t)p->track, &t) == MK_OK) {
                double us = (double)p->pts * 1e6 * t.time_base_num / t.time_base_den;
                CHECK(us <= (double)mid_us + 1, "seek to %lld us: track %d's first packet is at %.0f us, after it",
                      (long long)mid_us, mid_track, us);
                first = 0;
            }
        }
        CHECK(status == MK_EOF, "after seek to %lld us: read_packet %ld: status %d: %s", (long long)mid_us, after, status,
              vt->last_error(d));
        CHECK(after > 0 && after <= ref, "after seek to %lld us: %ld packets (the whole file: %ld)", (long long)mid_us, after, ref);
    }
    vt->destroy(d);

    /* Cut short. */
    check_cut_short(best, f, fio.size);

    /* Threads. */
    {
        enum { THREADS = 4 };
        reader readers[THREADS];
        pthread_t threads[THREADS];
        int started[THREADS];
        for (int i = 0; i < THREADS; i++) {
            readers[i] = (reader){ .format = best, .path = argv[2] };
            started[i] = pthread_create(&threads[i], NULL, reader_main, &readers[i]) == 0;
            CHECK(started[i], "thread %d: pthread_create", i);
        }
        for (int i = 0; i < THREADS; i++) {
            if (!started[i])
                continue;
            pthread_join(threads[i], NULL);
            CHECK(readers[i].count == ref && readers[i].content == ref_content,
                  "thread %d: %ld packets (hash %016llx), the clean read %ld (%016llx) %s", i, readers[i].count,
                  (unsigned long long)readers[i].content, ref, (unsigned long long)ref_content, readers[i].error);
        }
    }

    /* A pipe. */
    fseeko(f, 0, SEEK_SET);
    mk_plugin_io pipe = { sizeof(pipe), &fio, io_read, NULL, pipe_size };
    err[0] = 0;
    status = best->create(best, &pipe, &d, &vt, err, sizeof(err));
    CHECK(status == MK_OK, "%s does not open %s as a pipe: %s", best->name, argv[2], err);
    if (status == MK_OK) {
        uint64_t pipe_hash = 0, pipe_content = 0;
        long piped = read_all(d, vt, vt->track_count(d), &pipe_hash, &pipe_content, "pipe");
        CHECK(piped > 0, "pipe: %ld packets", piped);
        CHECK(vt->seek(d, 0, 0) == MK_EUNSUPPORTED, "seek on a pipe is not MK_EUNSUPPORTED");
        vt->destroy(d);
    }
    fclose(f);
    desc->deinit();
    printf("format %s tracks %u packets %ld hash %016llx seek %s\n", best->name, tracks, ref, (unsigned long long)ref_hash,
           mid_track >= 0 ? "to the middle" : "to 0 only");
    return failures ? 1 : 0;
}
