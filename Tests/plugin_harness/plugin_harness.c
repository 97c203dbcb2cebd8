/*
 * plugin_harness.c — the contract test every MediaKit codec plugin must pass: drives one
 * plugin through its C ABI, with no host (`make test` runs it over every plugin:
 * Tests/oracle/test_plugin_harness.py; run_valgrind.sh runs it under valgrind).
 *
 *   plugin_harness PLUGIN.so CODEC audio|video PACKETS.pk
 *
 * PACKETS.pk comes from make_packets.py (the stream's configuration, extradata and packets as
 * ffprobe reads them). What is checked (each failure is printed as FAIL with the reason):
 *
 *  - Loading: the ABI version, the descriptor's and factories' struct sizes cover ABI 2.0,
 *    init() with a host struct LARGER than this header's (a newer host: the plugin ignores the
 *    rest), unknown factory ids, get_backend out of range.
 *  - Arguments: NULL config / decoder / vtable / frame, a tiny config, another codec, extradata
 *    NULL with a size, garbage and truncated extradata, a packet with a size but no data: each
 *    an error (with a message where there is a buffer), never a crash.
 *  - A clean decode (the reference): a new decoder, every packet, a drain; frame and sample
 *    counts and a hash of every output byte in order.
 *  - Order: the stream in two halves with a damaged packet and a flush() between them, a drain
 *    (MK_EOF, then MK_EOF again from receive and from a second drain), then flush() after the
 *    end and the whole stream again: the same output as the reference (flush is a reset).
 *  - EAGAIN: a send answered MK_EAGAIN took nothing; the host receives and sends it again.
 *  - Ownership: every other packet is offered for the plugin to keep (retain/release, 64 zero
 *    bytes of padding); each must be released as often as retained by the end. Some frames are
 *    held past destroy() and read and released afterwards (frames outlive the decoder), the
 *    last ones after deinit().
 *  - struct_size growth: a decoder created from a 2.4 host's config (no codec_tag: the field
 *    past its struct_size holds a pointer that crashes if followed); from a config struct larger than this header's,
 *    fed packets of a 2.0 host (struct_size short of the optional ownership fields, which then
 *    hold traps that must never be called), asked for frames into a struct larger than this
 *    header's (filled up to the plugin's own size, struct_size set to that, the rest untouched):
 *    the same output as the reference.
 *  - Threads: four decoders decoding the stream at once on four threads, and one decoder handed
 *    from one thread to another half-way ([instance-thread]: one thread at a time, not always
 *    the same one); frames released on a thread other than the one that received them. Each
 *    decode gives the reference output.
 *
 * Prints frame/sample counts and the hash; exit 0 when every check holds.
 *
 * Build: cc -std=c11 -Wall -Wextra -I../../Include plugin_harness.c -ldl -lpthread
 * Under valgrind, set HARNESS_DAV1D_C_ONLY=1 for the dav1d plugin (see run_valgrind.sh).
 */
#define _POSIX_C_SOURCE 200809L
#include "mediakit/mediakit_plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Bytes of `type` up to and including `field`. */
#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

#define HELD_MAX 64
#define PADDING 64 /* zero bytes after each packet's data, as libavcodec wants */

static atomic_int failures;

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
    int damaged;        /* the harness's junk: receive may answer an error after it */
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

/* A packet's retain / release when the host did not offer them (struct_size short of them):
 * never to be called. */
static void forbidden_retain(void *owner)
{
    (void)owner;
    fprintf(stderr, "FAIL: retain() read from beyond the packet's struct_size and called\n");
    failures++;
}

typedef struct stream {
    int32_t config[8]; /* sample rate, channels, block align, bits, tb num, tb den, width, height */
    int has_config;
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
    int ok = fread(magic, 1, 4, f) == 4 && (memcmp(magic, "MKPK", 4) == 0 || memcmp(magic, "MKP2", 4) == 0);
    if (ok && memcmp(magic, "MKP2", 4) == 0) {
        uint32_t size;
        ok = fread(&size, 4, 1, f) == 1 && size >= sizeof(s->config) && size < 4096 &&
             fread(s->config, sizeof(s->config), 1, f) == 1 && fseek(f, (long)(size - sizeof(s->config)), SEEK_CUR) == 0;
        s->has_config = ok;
    }
    ok = ok && fread(&s->extradata_size, 4, 1, f) == 1;
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
    uint64_t hash;      /* FNV-1a over every output byte, in order */
    mk_plugin_frame held[HELD_MAX];
    int nheld;
    int hold_every;     /* hold every Nth frame past destroy (0: none) */
    size_t frame_size;  /* the frame struct_size to ask with; 0: sizeof(mk_plugin_frame) */
} tally;

/* Reads every byte the frame says it has, in order (valgrind sees bad planes): adds each to
 * *sum and, when hash is not NULL, folds it into the FNV-1a hash *hash. */
static void scan(const mk_plugin_frame *f, uint64_t *sum, uint64_t *hash)
{
    uint64_t s = *sum, h = hash != NULL ? *hash : 0;
#define SCAN_BYTE(b) (s += (b), h = (h ^ (b)) * 1099511628211ull)
    if (f->media_type == MK_MEDIA_AUDIO) {
        for (int p = 0; p < f->plane_count; p++)
            for (int64_t i = 0; i < f->strides[p]; i++)
                SCAN_BYTE(f->planes[p][i]);
    } else {
        int bytes = f->format >= MK_PIXEL_YUV420P10 && f->format != MK_PIXEL_GRAY8 ? 2 : 1;
        for (int p = 0; p < f->plane_count; p++) {
            int w = f->width, rows = f->height;
            if (p > 0 && (f->format == MK_PIXEL_YUV420P || f->format == MK_PIXEL_YUV420P10 ||
                          f->format == MK_PIXEL_YUV420P12)) {
                w = (w + 1) / 2;
                rows = (rows + 1) / 2;
            }
            for (int y = 0; y < rows; y++)
                for (int x = 0; x < w * bytes; x++)
                    SCAN_BYTE(f->planes[p][(int64_t)y * f->strides[p] + x]);
        }
    }
#undef SCAN_BYTE
    *sum = s;
    if (hash != NULL)
        *hash = h;
}

/* The sum of the bytes the frame says it has. */
static uint64_t touch(const mk_plugin_frame *f)
{
    uint64_t sum = 0;
    scan(f, &sum, NULL);
    return sum;
}

#define CANARY 0x5A
#define GROWTH 64 /* bytes a "newer host" adds to the structs it hands over */

static int receive_all(void *dec, const mk_plugin_decoder_vtable *vt, tally *t)
{
    for (;;) {
        /* A frame struct followed by room a newer host would have: the plugin fills at most
         * its own size and says so in struct_size; the rest stays as the host left it. */
        union {
            mk_plugin_frame f;
            uint8_t bytes[sizeof(mk_plugin_frame) + GROWTH];
        } u;
        memset(&u, 0xAB, sizeof(u)); /* the plugin must not rely on zeroed memory */
        size_t asked = t->frame_size ? t->frame_size : sizeof(mk_plugin_frame);
        memset(u.bytes + sizeof(mk_plugin_frame), CANARY, GROWTH);
        u.f.struct_size = (uint32_t)asked;
        int r = vt->receive_frame(dec, &u.f);
        if (r != MK_OK)
            return r;
        mk_plugin_frame f = u.f;
        CHECK(f.struct_size >= END_OF(mk_plugin_frame, release_opaque) && f.struct_size <= asked,
              "receive_frame set struct_size %u (asked with %zu)", f.struct_size, asked);
        for (size_t i = sizeof(mk_plugin_frame); i < sizeof(u.bytes); i++)
            if (u.bytes[i] != CANARY) {
                CHECK(0, "receive_frame wrote beyond its own mk_plugin_frame (byte %zu of a %zu-byte struct)", i, asked);
                break;
            }
        CHECK(f.release != NULL, "frame without release");
        t->frames++;
        t->samples += f.media_type == MK_MEDIA_AUDIO ? (uint64_t)f.nb_samples : 0;
        scan(&f, &t->checksum, &t->hash);
        if (t->hold_every && t->frames % (uint64_t)t->hold_every == 0 && t->nheld < HELD_MAX)
            t->held[t->nheld++] = f; /* released after destroy(), maybe on another thread */
        else
            f.release(f.release_opaque);
    }
}

/* offer: 1 offers the bytes to keep (retain/release), 0 lends them, -1 sends the packet as a
 * 2.0 host would (struct_size short of the ownership fields, which hold traps). */
static int send(void *dec, const mk_plugin_decoder_vtable *vt, packet *p, tally *t, int offer)
{
    mk_plugin_packet pk;
    memset(&pk, 0, sizeof(pk));
    pk.struct_size = offer < 0 ? (uint32_t)END_OF(mk_plugin_packet, duration) : sizeof(pk);
    pk.data = p->data;
    pk.size = p->size;
    pk.pts = p->pts;
    pk.dts = MK_NOPTS_VALUE;
    if (offer > 0) {
        pk.padding = PADDING;
        pk.retain = packet_retain;
        pk.release = packet_release;
        pk.owner = p;
    } else if (offer < 0) {
        pk.padding = PADDING;
        pk.retain = forbidden_retain;
        pk.release = forbidden_retain;
        pk.owner = p;
    }
    for (int tries = 0; tries < 100; tries++) {
        int r = vt->send_packet(dec, &pk);
        if (r != MK_EAGAIN) {
            int rr = receive_all(dec, vt, t);
            CHECK(rr == MK_EAGAIN || rr == MK_OK || p->damaged, "receive after send: %d (%s)", rr,
                  vt->last_error(dec));
            return r;
        }
        int rr = receive_all(dec, vt, t);
        CHECK(rr == MK_EAGAIN, "receive while send says EAGAIN: %d", rr);
    }
    CHECK(0, "send_packet keeps returning EAGAIN");
    return MK_EFAIL;
}

/* Releases the frames a tally holds. */
static void release_held(tally *t)
{
    for (int i = 0; i < t->nheld; i++) {
        touch(&t->held[i]);
        t->held[i].release(t->held[i].release_opaque);
    }
    t->nheld = 0;
}

/* Sends packets [from, to) of the stream to dec, receiving as it goes (offer: as send()). */
static int feed(void *dec, const mk_plugin_decoder_vtable *vt, stream *s, size_t from, size_t to, tally *t,
                int offer)
{
    int errors = 0;
    for (size_t i = from; i < to; i++)
        errors += send(dec, vt, &s->packets[i], t, offer < 0 ? -1 : offer ? (int)(i & 1) : 0) != MK_OK;
    return errors;
}

/* Drains dec into t; the drain must end with MK_EOF. */
static void drain(void *dec, const mk_plugin_decoder_vtable *vt, tally *t, const char *who)
{
    CHECK(vt->send_packet(dec, NULL) == MK_OK, "%s: drain", who);
    int r = receive_all(dec, vt, t);
    CHECK(r == MK_EOF, "%s: drain ends with %d, not EOF (%s)", who, r, vt->last_error(dec));
}

typedef struct run {
    const mk_plugin_decoder_backend *b;
    const mk_plugin_codec_config *cfg;
    stream *s;
    tally t;
    void *dec;                          /* for a decoder handed between threads */
    const mk_plugin_decoder_vtable *vt;
    size_t from, to;                    /* packets this leg sends */
    int finish;                         /* drain and destroy at the end of the leg */
    const char *who;
} run;

/* A whole decode with a new decoder (or a leg of one: run->dec set), frames held past destroy
 * every 5th. Returns NULL; the outcome is in run->t. */
static void *decode_run(void *arg)
{
    run *r = arg;
    if (r->dec == NULL) {
        char err[256];
        int c = r->b->create(r->cfg, &r->dec, &r->vt, err, sizeof(err));
        CHECK(c == MK_OK, "%s: create: %d: %s", r->who, c, err);
        if (c != MK_OK)
            return NULL;
    }
    r->t.hold_every = 5;
    int errors = feed(r->dec, r->vt, r->s, r->from, r->to, &r->t, 1);
    CHECK(errors == 0, "%s: %d packets failed", r->who, errors);
    if (r->finish) {
        drain(r->dec, r->vt, &r->t, r->who);
        r->vt->destroy(r->dec);
        r->dec = NULL;
    }
    return NULL;
}

static void expect_same(const tally *got, const tally *ref, const char *who)
{
    CHECK(got->frames == ref->frames && got->samples == ref->samples && got->hash == ref->hash,
          "%s: %llu frames, %llu samples, hash %016llx; the reference decode gave %llu, %llu, %016llx", who,
          (unsigned long long)got->frames, (unsigned long long)got->samples, (unsigned long long)got->hash,
          (unsigned long long)ref->frames, (unsigned long long)ref->samples, (unsigned long long)ref->hash);
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
    CHECK(entry() == d, "the entry point returns the same descriptor each time");
    CHECK(d->name != NULL && d->version != NULL && d->init != NULL && d->deinit != NULL && d->get_factory != NULL,
          "descriptor fields missing");
    /* A newer host: its struct is larger than this header's (the plugin ignores the rest). */
    static struct {
        mk_host host;
        uint8_t newer[GROWTH];
    } big_host = {
        { sizeof(big_host), MK_PLUGIN_ABI_CURRENT, "plugin_harness", "0", NULL, MK_LOG_WARNING, host_log },
        { 0 },
    };
    memset(big_host.newer, 0xEE, sizeof(big_host.newer));
    CHECK(d->init(&big_host.host) == MK_OK, "init with a host struct larger than the plugin's");
    CHECK(d->get_factory("no.such-factory") == NULL, "an unknown factory id gives NULL");
    CHECK(d->get_factory(NULL) == NULL, "get_factory(NULL)");
    const mk_plugin_decoder_factory *factory = d->get_factory(MK_PLUGIN_DECODER_FACTORY);
    CHECK(factory == NULL || factory->struct_size >= END_OF(mk_plugin_decoder_factory, get_backend),
          "decoder factory struct_size %u", factory ? factory->struct_size : 0);
    const mk_plugin_decoder_backend *b = NULL;
    uint32_t count = factory != NULL ? factory->backend_count() : 0;
    for (uint32_t i = 0; i < count; i++) {
        const mk_plugin_decoder_backend *e = factory->get_backend(i);
        CHECK(e != NULL && e->struct_size >= END_OF(mk_plugin_decoder_backend, create) && e->codec && e->name &&
              e->create, "backend %u incomplete", i);
        if (e != NULL && e->codec != NULL && strcmp(e->codec, argv[2]) == 0)
            b = e;
    }
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
    if (s.has_config) {
        cfg.sample_rate = s.config[0];
        cfg.channels = s.config[1];
        cfg.block_align = s.config[2];
        cfg.bits_per_coded_sample = s.config[3];
        if (s.config[4] > 0 && s.config[5] > 0) {
            cfg.time_base_num = s.config[4];
            cfg.time_base_den = s.config[5];
        }
        cfg.width = s.config[6];
        cfg.height = s.config[7];
    }

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

    /* The reference: a clean decode with a new decoder. */
    run ref = { .b = b, .cfg = &cfg, .s = &s, .from = 0, .to = s.count, .finish = 1, .who = "reference" };
    ref.t.hash = 14695981039346656037ull;
    decode_run(&ref);
    release_held(&ref.t);
    CHECK(ref.t.frames > 0, "the reference decode gave no frame");

    int r = b->create(&cfg, &dec, &vt, err, sizeof(err));
    if (r != MK_OK) {
        fprintf(stderr, "create: %d: %s\n", r, err);
        free_stream(&s);
        return 1;
    }
    CHECK(vt->struct_size >= END_OF(mk_plugin_decoder_vtable, last_error), "vtable struct_size %u", vt->struct_size);
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
    t.hold_every = 7;
    size_t half = s.count / 2;
    int errors = feed(dec, vt, &s, 0, half, &t, 1);
    /* a damaged packet: an error or nothing, never a crash; then flush (a "seek") */
    static uint8_t junk[97];
    for (size_t i = 0; i < sizeof(junk); i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    packet jp = { junk, sizeof(junk), 0, 0, 0, 1 };
    int jr = send(dec, vt, &jp, &t, 0);
    printf("damaged packet: status %d%s%s\n", jr, jr ? ": " : "", jr ? vt->last_error(dec) : "");
    vt->flush(dec);
    uint64_t frames_first_half = t.frames;
    errors += feed(dec, vt, &s, 0, s.count, &t, 1); /* the whole stream again after the flush */
    drain(dec, vt, &t, "decode after a flush");
    mk_plugin_frame f;
    memset(&f, 0, sizeof(f));
    f.struct_size = sizeof(f);
    CHECK(vt->receive_frame(dec, &f) == MK_EOF, "EOF again after EOF");
    CHECK(vt->send_packet(dec, NULL) == MK_EOF, "second drain says EOF");
    CHECK(errors == 0, "%d packets of the stream failed", errors);

    /* flush after the end resets: the whole stream again gives the reference output */
    vt->flush(dec);
    tally again;
    memset(&again, 0, sizeof(again));
    again.hash = 14695981039346656037ull;
    CHECK(feed(dec, vt, &s, 0, s.count, &again, 1) == 0, "packets failed after flush at the end");
    drain(dec, vt, &again, "decode after flush at the end");
    expect_same(&again, &ref.t, "flush after the end, then the stream again");

    vt->destroy(dec);
    /* frames outlive the decoder */
    uint64_t late = 0;
    int held_past_destroy = t.nheld;
    for (int i = 0; i < t.nheld; i++) {
        late += touch(&t.held[i]);
        t.held[i].release(t.held[i].release_opaque);
    }

    /* struct_size growth: a newer host's config (larger than this header's, garbage after it),
     * a 2.0 host's packets, a newer host's frame structs; the same output */
    struct {
        mk_plugin_codec_config cfg;
        uint8_t newer[GROWTH];
    } big_cfg;
    memset(&big_cfg, 0xEE, sizeof(big_cfg));
    big_cfg.cfg = cfg;
    big_cfg.cfg.struct_size = sizeof(big_cfg);
    tally grown;
    memset(&grown, 0, sizeof(grown));
    grown.hash = 14695981039346656037ull;
    grown.frame_size = sizeof(mk_plugin_frame) + GROWTH;
    r = b->create(&big_cfg.cfg, &dec, &vt, err, sizeof(err));
    CHECK(r == MK_OK, "create with a config struct larger than the plugin's: %d: %s", r, err);
    if (r == MK_OK) {
        CHECK(feed(dec, vt, &s, 0, s.count, &grown, -1) == 0, "2.0 packets failed: %s", vt->last_error(dec));
        drain(dec, vt, &grown, "struct_size growth");
        vt->destroy(dec);
        expect_same(&grown, &ref.t, "larger config and frame structs, 2.0 packets");
    }
    /* A 2.4 host's config: it ends at video_delay; codec_tag (2.5) is past its struct_size and
     * holds a pointer no plugin may follow (reading it crashes the harness). */
    {
        mk_plugin_codec_config old_cfg = cfg;
        old_cfg.struct_size = (uint32_t)(offsetof(mk_plugin_codec_config, video_delay) + sizeof(old_cfg.video_delay));
        old_cfg.codec_tag = (const char *)(uintptr_t)1;
        r = b->create(&old_cfg, &dec, &vt, err, sizeof(err));
        CHECK(r == MK_OK, "create with a 2.4 host's config (no codec_tag): %d: %s", r, err);
        if (r == MK_OK)
            vt->destroy(dec);
    }

    /* threads: four decoders at once; one decoder handed from a thread to another */
    enum { NTHREADS = 4 };
    run runs[NTHREADS];
    pthread_t threads[NTHREADS];
    mk_plugin_codec_config thread_cfg = cfg;
    thread_cfg.thread_count = 1; /* the plugins' own threads are exercised by the other runs */
    for (int i = 0; i < NTHREADS; i++) {
        runs[i] = (run){ .b = b, .cfg = &thread_cfg, .s = &s, .from = 0, .to = s.count, .finish = 1,
                         .who = "one of four decoders on four threads" };
        runs[i].t.hash = 14695981039346656037ull;
        CHECK(pthread_create(&threads[i], NULL, decode_run, &runs[i]) == 0, "pthread_create");
    }
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(threads[i], NULL);
        release_held(&runs[i].t); /* frames released on another thread than the one that got them */
        expect_same(&runs[i].t, &ref.t, runs[i].who);
    }
    run leg = { .b = b, .cfg = &thread_cfg, .s = &s, .from = 0, .to = half, .finish = 0,
                .who = "a decoder handed between threads" };
    leg.t.hash = 14695981039346656037ull;
    pthread_t a, c;
    CHECK(pthread_create(&a, NULL, decode_run, &leg) == 0, "pthread_create");
    pthread_join(a, NULL);
    leg.from = half;
    leg.to = s.count;
    leg.finish = 1;
    if (leg.dec != NULL) {
        CHECK(pthread_create(&c, NULL, decode_run, &leg) == 0, "pthread_create");
        pthread_join(c, NULL);
    }
    expect_same(&leg.t, &ref.t, leg.who);

    long kept = 0;
    for (size_t i = 0; i < s.count; i++) {
        kept += atomic_load(&s.packets[i].retains);
        CHECK(atomic_load(&s.packets[i].refs) == 0, "packet %zu: %d references never released", i,
              atomic_load(&s.packets[i].refs));
    }
    d->deinit();
    release_held(&leg.t); /* frames outlive deinit() too */
    printf("reference: frames %llu, samples %llu, hash %016llx; with a flush: frames %llu (first half %llu), "
           "checksum %llu, held past destroy %d (sum %llu); packets kept without a copy %ld\n",
           (unsigned long long)ref.t.frames, (unsigned long long)ref.t.samples, (unsigned long long)ref.t.hash,
           (unsigned long long)t.frames, (unsigned long long)frames_first_half, (unsigned long long)t.checksum,
           held_past_destroy, (unsigned long long)late, kept);
    free_stream(&s);
    dlclose(so);
    int failed = atomic_load(&failures);
    if (failed)
        fprintf(stderr, "%d checks failed\n", failed);
    return failed ? 1 : 0;
}
