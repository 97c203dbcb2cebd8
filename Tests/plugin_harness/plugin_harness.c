/*
 * plugin_harness.c — drives one MediaKit codec plugin through its C ABI, with no host:
 * for running plugins under valgrind (leaks, invalid reads) and checking their
 * argument checks and send/receive/flush/drain behaviour.
 *
 *   plugin_harness PLUGIN.so CODEC audio|video PACKETS.pk
 *
 * PACKETS.pk comes from make_packets.py (extradata + packets as ffprobe reads them).
 * The run: the ABI version, init() with a host struct whose log prints to stderr, the
 * decoder factory; bad-argument calls (each must return an error, not crash), bad
 * extradata, then the stream decoded in two halves with a flush() between them (after a
 * deliberately damaged packet), a drain, and a destroy() while some frames are still
 * held by the "host"; those are read and released afterwards (frames must outlive the
 * decoder), then deinit(). Every other packet is offered for the plugin to keep
 * (mk_plugin_packet.retain, with 64 bytes of zero padding); each must have been released
 * as often as it was retained by the end. Prints frame/sample counts and a checksum;
 * exit 0 when every check holds.
 *
 * Build: cc -std=c11 -Wall -Wextra -I../../Include plugin_harness.c -ldl
 * Under valgrind, set HARNESS_DAV1D_C_ONLY=1 for the dav1d plugin (see run_valgrind.sh).
 */
#define _POSIX_C_SOURCE 200809L
#include "mediakit/mediakit_plugin.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HELD_MAX 64
#define PADDING 64 /* zero bytes after each packet's data, as libavcodec wants */

static int failures;

#define CHECK(cond, ...)                                               \
    do {                                                               \
        if (!(cond)) {                                                 \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                              \
            fputc('\n', stderr);                                       \
            failures++;                                                \
        }                                                              \
    } while (0)

typedef struct packet {
    uint8_t *data;
    uint32_t size;
    int64_t pts;
    atomic_int refs;    /* references the plugin took with retain() and has not released */
    atomic_int retains; /* retain() calls in all */
} packet;

/* mk_plugin_packet.retain / release: owner is the packet. */
static void packet_retain(void *owner)
{
    packet *p = owner;
    atomic_fetch_add(&p->refs, 1);
    atomic_fetch_add(&p->retains, 1);
}

static void packet_release(void *owner)
{
    packet *p = owner;
    int before = atomic_fetch_sub(&p->refs, 1);
    if (before <= 0)
        fprintf(stderr, "FAIL: a packet released more often than retained\n");
}

/* The host's log: one line on stderr. */
static void host_log(const mk_host *host, int32_t level, const char *message)
{
    (void)host;
    fprintf(stderr, "plugin log (level %d): %s\n", level, message);
}

typedef struct stream {
    uint8_t *extradata;
    uint32_t extradata_size;
    packet *packets;
    size_t count;
} stream;

static int read_stream(const char *path, stream *s)
{
    memset(s, 0, sizeof(*s));
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    char magic[4];
    int ok = fread(magic, 1, 4, f) == 4 && memcmp(magic, "MKPK", 4) == 0 &&
             fread(&s->extradata_size, 4, 1, f) == 1;
    if (ok && s->extradata_size > 0) {
        s->extradata = malloc(s->extradata_size);
        ok = s->extradata != NULL && fread(s->extradata, 1, s->extradata_size, f) == s->extradata_size;
    }
    size_t cap = 0;
    while (ok) {
        uint32_t size;
        int64_t pts;
        if (fread(&size, 4, 1, f) != 1)
            break;
        if (fread(&pts, 8, 1, f) != 1 || size > (64u << 20)) {
            ok = 0;
            break;
        }
        if (s->count == cap) {
            cap = cap ? cap * 2 : 64;
            packet *p = realloc(s->packets, cap * sizeof(*p));
            if (p == NULL) {
                ok = 0;
                break;
            }
            s->packets = p;
        }
        packet *p = &s->packets[s->count];
        p->data = calloc(1, (size_t)size + PADDING);
        p->size = size;
        p->pts = pts;
        atomic_init(&p->refs, 0);
        atomic_init(&p->retains, 0);
        if (p->data == NULL || fread(p->data, 1, size, f) != size) {
            free(p->data);
            ok = 0;
            break;
        }
        s->count++;
    }
    fclose(f);
    return ok ? 0 : -1;
}

static void free_stream(stream *s)
{
    for (size_t i = 0; i < s->count; i++)
        free(s->packets[i].data);
    free(s->packets);
    free(s->extradata);
}

typedef struct tally {
    uint64_t frames, samples, checksum;
    mk_plugin_frame held[HELD_MAX];
    int nheld;
} tally;

/* Reads every byte the frame says it has (valgrind sees bad planes), sums them. */
static uint64_t touch(const mk_plugin_frame *f)
{
    uint64_t sum = 0;
    if (f->media_type == MK_MEDIA_AUDIO) {
        for (int p = 0; p < f->plane_count; p++)
            for (int64_t i = 0; i < f->strides[p]; i++)
                sum += f->planes[p][i];
        return sum;
    }
    int bytes = f->format >= MK_PIXEL_YUV420P10 && f->format != MK_PIXEL_GRAY8 ? 2 : 1;
    for (int p = 0; p < f->plane_count; p++) {
        int w = f->width, h = f->height;
        if (p > 0 && (f->format == MK_PIXEL_YUV420P || f->format == MK_PIXEL_YUV420P10 ||
                      f->format == MK_PIXEL_YUV420P12)) {
            w = (w + 1) / 2;
            h = (h + 1) / 2;
        }
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w * bytes; x++)
                sum += f->planes[p][(int64_t)y * f->strides[p] + x];
    }
    return sum;
}

static int receive_all(void *dec, const mk_plugin_decoder_vtable *vt, tally *t)
{
    for (;;) {
        mk_plugin_frame f;
        memset(&f, 0xAB, sizeof(f)); /* the plugin must not rely on zeroed memory */
        f.struct_size = sizeof(f);
        int r = vt->receive_frame(dec, &f);
        if (r != MK_OK)
            return r;
        CHECK(f.release != NULL, "frame without release");
        t->frames++;
        t->samples += f.media_type == MK_MEDIA_AUDIO ? (uint64_t)f.nb_samples : 0;
        t->checksum += touch(&f);
        if (t->frames % 7 == 0 && t->nheld < HELD_MAX)
            t->held[t->nheld++] = f; /* released after destroy() */
        else
            f.release(f.release_opaque);
    }
}

static int send(void *dec, const mk_plugin_decoder_vtable *vt, packet *p, tally *t, int offer)
{
    mk_plugin_packet pk;
    memset(&pk, 0, sizeof(pk));
    pk.struct_size = sizeof(pk);
    pk.data = p->data;
    pk.size = p->size;
    pk.pts = p->pts;
    pk.dts = MK_NOPTS_VALUE;
    if (offer) {
        pk.padding = PADDING;
        pk.retain = packet_retain;
        pk.release = packet_release;
        pk.owner = p;
    }
    for (int tries = 0; tries < 100; tries++) {
        int r = vt->send_packet(dec, &pk);
        if (r != MK_EAGAIN) {
            int rr = receive_all(dec, vt, t);
            CHECK(rr == MK_EAGAIN || rr == MK_OK, "receive after send: %d (%s)", rr,
                  vt->last_error(dec));
            return r;
        }
        int rr = receive_all(dec, vt, t);
        CHECK(rr == MK_EAGAIN, "receive while send says EAGAIN: %d", rr);
    }
    CHECK(0, "send_packet keeps returning EAGAIN");
    return MK_EFAIL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s PLUGIN.so CODEC audio|video PACKETS.pk\n", argv[0]);
        return 2;
    }
    void *so = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (so == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 2;
    }
    if (getenv("HARNESS_DAV1D_C_ONLY") != NULL) {
        /* dav1d's hand-written SIMD confuses valgrind (reads of deliberately
         * uninitialised padding, VEX running out of space): use its C code. */
        void *lib = dlopen("libdav1d.so.6", RTLD_NOW | RTLD_NOLOAD);
        void (*set_mask)(unsigned) = NULL;
        if (lib != NULL)
            *(void **)&set_mask = dlsym(lib, "dav1d_set_cpu_flags_mask");
        if (set_mask != NULL)
            set_mask(0);
        else
            fprintf(stderr, "HARNESS_DAV1D_C_ONLY: dav1d_set_cpu_flags_mask not found\n");
        if (lib != NULL)
            dlclose(lib);
    }
    mk_plugin_entry_fn entry;
    *(void **)&entry = dlsym(so, MK_PLUGIN_ENTRY_SYMBOL);
    if (entry == NULL) {
        fprintf(stderr, "no %s\n", MK_PLUGIN_ENTRY_SYMBOL);
        return 2;
    }
    const mk_plugin_descriptor *d = entry();
    if (d == NULL || d->abi.major != MK_PLUGIN_ABI_MAJOR ||
        d->struct_size < offsetof(mk_plugin_descriptor, get_factory) + sizeof(d->get_factory)) {
        fprintf(stderr, "descriptor missing, of another ABI version or too small\n");
        return 2;
    }
    static const mk_host host = {
        sizeof(mk_host), MK_PLUGIN_ABI_CURRENT, "plugin_harness", "0", NULL, MK_LOG_WARNING, host_log,
    };
    CHECK(d->init(&host) == MK_OK, "init");
    CHECK(d->get_factory("no.such-factory") == NULL, "an unknown factory id gives NULL");
    CHECK(d->get_factory(NULL) == NULL, "get_factory(NULL)");
    const mk_plugin_decoder_factory *factory = d->get_factory(MK_PLUGIN_DECODER_FACTORY);
    const mk_plugin_decoder_backend *b = NULL;
    uint32_t count = factory != NULL ? factory->backend_count() : 0;
    for (uint32_t i = 0; i < count; i++)
        if (strcmp(factory->get_backend(i)->codec, argv[2]) == 0)
            b = factory->get_backend(i);
    if (b == NULL) {
        fprintf(stderr, "no backend for %s\n", argv[2]);
        return 2;
    }
    CHECK(factory->get_backend(count) == NULL, "get_backend out of range gives NULL");
    printf("plugin %s %s, backend %s for %s, priority %d\n", d->name, d->version, b->name,
           b->codec, b->priority);

    stream s;
    if (read_stream(argv[4], &s) != 0) {
        fprintf(stderr, "cannot read %s\n", argv[4]);
        free_stream(&s);
        return 2;
    }

    mk_plugin_codec_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.struct_size = sizeof(cfg);
    cfg.media_type = strcmp(argv[3], "audio") == 0 ? MK_MEDIA_AUDIO : MK_MEDIA_VIDEO;
    cfg.codec = argv[2];
    cfg.time_base_num = 1;
    cfg.time_base_den = 48000;
    cfg.channels = 2;

    char err[256];
    void *dec = NULL;
    const mk_plugin_decoder_vtable *vt = NULL;

    /* argument checks: errors with messages, nothing allocated */
    CHECK(b->create(NULL, &dec, &vt, err, sizeof(err)) == MK_EINVAL && err[0], "NULL config");
    CHECK(b->create(&cfg, NULL, &vt, err, sizeof(err)) == MK_EINVAL, "NULL decoder");
    CHECK(b->create(&cfg, &dec, NULL, NULL, 0) == MK_EINVAL, "NULL vtable, no errbuf");
    mk_plugin_codec_config bad = cfg;
    bad.struct_size = 8;
    CHECK(b->create(&bad, &dec, &vt, err, sizeof(err)) == MK_EINVAL, "tiny struct_size");
    bad = cfg;
    bad.codec = "no-such-codec";
    CHECK(b->create(&bad, &dec, &vt, err, sizeof(err)) == MK_EINVAL, "wrong codec");
    bad = cfg;
    bad.extradata = NULL;
    bad.extradata_size = 10;
    CHECK(b->create(&bad, &dec, &vt, err, sizeof(err)) == MK_EINVAL, "NULL extradata");
    static const uint8_t garbage[] = { 0x02, 0xff, 0xff, 0xff, 0x4f, 0x70, 0x75, 0x73 };
    bad = cfg;
    bad.extradata = garbage;
    bad.extradata_size = sizeof(garbage);
    int gr = b->create(&bad, &dec, &vt, err, sizeof(err));
    printf("garbage extradata: status %d: %s\n", gr, gr == MK_OK ? "(accepted)" : err);
    if (gr == MK_OK)
        vt->destroy(dec);
    /* truncated extradata: every prefix must be an error or a working decoder */
    for (uint32_t n = 1; n < s.extradata_size; n += 1 + n / 4) {
        bad = cfg;
        bad.extradata = s.extradata;
        bad.extradata_size = n;
        if (b->create(&bad, &dec, &vt, err, sizeof(err)) == MK_OK)
            vt->destroy(dec);
    }

    cfg.extradata = s.extradata;
    cfg.extradata_size = s.extradata_size;
    int r = b->create(&cfg, &dec, &vt, err, sizeof(err));
    if (r != MK_OK) {
        fprintf(stderr, "create: %d: %s\n", r, err);
        free_stream(&s);
        return 1;
    }
    CHECK(vt->send_packet(NULL, NULL) == MK_EINVAL, "send_packet(NULL decoder)");
    CHECK(vt->receive_frame(dec, NULL) == MK_EINVAL, "receive_frame(NULL frame)");
    mk_plugin_frame small;
    memset(&small, 0, sizeof(small));
    small.struct_size = 16;
    CHECK(vt->receive_frame(dec, &small) == MK_EINVAL, "receive_frame small struct");
    mk_plugin_packet nodata;
    memset(&nodata, 0, sizeof(nodata));
    nodata.struct_size = sizeof(nodata);
    nodata.size = 5;
    CHECK(vt->send_packet(dec, &nodata) == MK_EINVAL, "packet with size but no data");
    vt->flush(NULL);
    CHECK(vt->last_error(NULL) != NULL, "last_error(NULL)");

    tally t;
    memset(&t, 0, sizeof(t));
    size_t half = s.count / 2;
    int errors = 0;
    for (size_t i = 0; i < half; i++)
        errors += send(dec, vt, &s.packets[i], &t, (int)(i & 1)) != MK_OK;
    /* a damaged packet: an error or nothing, never a crash; then flush (a "seek") */
    static uint8_t junk[97];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    packet jp = { junk, sizeof(junk), 0, 0, 0 };
    int jr = send(dec, vt, &jp, &t, 0);
    printf("damaged packet: status %d%s%s\n", jr, jr ? ": " : "", jr ? vt->last_error(dec) : "");
    vt->flush(dec);
    uint64_t frames_first_half = t.frames;
    for (size_t i = 0; i < s.count; i++) /* the whole stream again after the flush */
        errors += send(dec, vt, &s.packets[i], &t, (int)(i & 1)) != MK_OK;
    CHECK(vt->send_packet(dec, NULL) == MK_OK, "drain");
    int dr = receive_all(dec, vt, &t);
    CHECK(dr == MK_EOF, "drain ends with %d, not EOF (%s)", dr, vt->last_error(dec));
    mk_plugin_frame f;
    memset(&f, 0, sizeof(f));
    f.struct_size = sizeof(f);
    CHECK(vt->receive_frame(dec, &f) == MK_EOF, "EOF again after EOF");
    CHECK(vt->send_packet(dec, NULL) == MK_EOF, "second drain says EOF");
    CHECK(errors == 0, "%d packets of the stream failed", errors);

    vt->destroy(dec);
    /* frames outlive the decoder */
    uint64_t late = 0;
    for (int i = 0; i < t.nheld; i++) {
        late += touch(&t.held[i]);
        t.held[i].release(t.held[i].release_opaque);
    }
    long kept = 0;
    for (size_t i = 0; i < s.count; i++) {
        kept += atomic_load(&s.packets[i].retains);
        CHECK(atomic_load(&s.packets[i].refs) == 0, "packet %zu: %d references never released", i,
              atomic_load(&s.packets[i].refs));
    }
    d->deinit();
    printf("frames %llu (first half %llu), samples %llu, checksum %llu, held past destroy %d "
           "(sum %llu), packets kept without a copy %ld\n", (unsigned long long)t.frames,
           (unsigned long long)frames_first_half, (unsigned long long)t.samples,
           (unsigned long long)t.checksum, t.nheld, (unsigned long long)late, kept);
    free_stream(&s);
    dlclose(so);
    if (failures)
        fprintf(stderr, "%d checks failed\n", failures);
    return failures ? 1 : 0;
}
