/*
 * muxer_harness.c — the contract test of a plugin's muxer factory (plugin ABI 2.5), with no host:
 * reads FILE with the plugin's own demuxer factory (2.4) and writes its tracks with the muxer
 * factory's format FORMAT through the ABI's output callbacks
 * (Tests/oracle/test_plugin_harness.py runs it over the FFmpeg plugin and checks the outputs
 * with ffprobe).
 *
 *   muxer_harness PLUGIN.so FILE FORMAT OUT_PREFIX
 *
 * Writes OUT_PREFIX.seek (a seekable output) and OUT_PREFIX.pipe (an output with seek NULL).
 * What is checked (each failure is printed as FAIL with the reason):
 *  - Loading: the factory's struct size, get_format out of range, every format's struct size,
 *    name, carries and create; carries of NULL or an unknown codec name is 0; FORMAT's name
 *    is listed once (the host names formats "plugin:name").
 *  - Arguments: create with a NULL io, muxer or vtable, or an io struct too small, is an error
 *    with a message, never a crash; add_track with a NULL track or index, write_packet with a
 *    NULL packet, a track never added or NULL data with a size: MK_EINVAL with a message.
 *  - Order: write_header without tracks, write_packet before write_header, add_track after it,
 *    finish twice: errors with a message, never a crash; destroy right after create.
 *  - struct_size growth: tracks described with a SMALLER struct (the fields up to the sample
 *    aspect ratio: the rest absent) and a LARGER one (the plugin's fields, then bytes it must
 *    not read past) are taken; packets with a LARGER struct too.
 *  - A whole write to a seekable output and to a pipe: every packet the demuxer gives written,
 *    finish MK_OK; the seekable output's callbacks never seek past what was written.
 *  - Cancel: after a header and one packet, cancel; nothing is written after it and a later
 *    write_packet or finish is an error; destroy frees it.
 *  - Threads: two instances writing the same tracks on two threads at once give the same bytes
 *    as one instance on its own (for a format whose output is deterministic: avi, nut).
 *
 * Prints the format, the track and packet counts and the output sizes; exit 0 when every check
 * holds.
 *
 * Build: cc -std=c11 -Wall -Wextra -I../../Include muxer_harness.c -ldl -lpthread
 */
#define _POSIX_C_SOURCE 200809L
#include "mediakit/mediakit_plugin.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))
#define MAX_TRACKS 16

static int failures;

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

/* ---- Input: the plugin's demuxer over a FILE*, packets copied into memory ---- */

typedef struct in_io {
    FILE *f;
    int64_t size;
} in_io;

static int64_t in_read(void *opaque, uint8_t *buf, size_t size)
{
    in_io *io = opaque;
    size_t n = fread(buf, 1, size, io->f);
    return ferror(io->f) ? MK_EFAIL : (int64_t)n;
}

static int32_t in_seek(void *opaque, int64_t offset)
{
    return fseeko(((in_io *)opaque)->f, (off_t)offset, SEEK_SET) == 0 ? MK_OK : MK_EFAIL;
}

static int64_t in_size(void *opaque)
{
    return ((in_io *)opaque)->size;
}

typedef struct packet {
    mk_plugin_mux_packet p;
    uint8_t *bytes;
} packet;

typedef struct input {
    uint32_t tracks;
    mk_plugin_mux_track track[MAX_TRACKS];
    char codec[MAX_TRACKS][64], tag[MAX_TRACKS][16], language[MAX_TRACKS][16];
    uint8_t *extradata[MAX_TRACKS];
    packet *packets;
    size_t count;
} input;

/* ---- Output: a FILE* (seekable or not) or a memory buffer ---- */

typedef struct out_io {
    FILE *f;              /* NULL: memory */
    uint8_t *mem;
    int64_t position, end, capacity;
    int seek_beyond;      /* a seek past what was written */
    long writes;
} out_io;

static int32_t out_write(void *opaque, const uint8_t *buf, size_t size)
{
    out_io *o = opaque;
    o->writes++;
    if (o->f) {
        if (fwrite(buf, 1, size, o->f) != size)
            return MK_EFAIL;
    } else {
        if (o->position + (int64_t)size > o->capacity) {
            int64_t cap = (o->position + (int64_t)size) * 2;
            uint8_t *grown = realloc(o->mem, (size_t)cap);
            if (grown == NULL)
                return MK_ENOMEM;
            o->mem = grown;
            o->capacity = cap;
        }
        memcpy(o->mem + o->position, buf, size);
    }
    o->position += (int64_t)size;
    if (o->position > o->end)
        o->end = o->position;
    return MK_OK;
}

static int32_t out_seek(void *opaque, int64_t offset)
{
    out_io *o = opaque;
    if (offset < 0 || offset > o->end) {
        o->seek_beyond = 1;
        return MK_EINVAL;
    }
    if (o->f && fseeko(o->f, (off_t)offset, SEEK_SET) != 0)
        return MK_EFAIL;
    o->position = offset;
    return MK_OK;
}

static int64_t out_tell(void *opaque)
{
    return ((out_io *)opaque)->position;
}

static mk_plugin_output_io make_io(out_io *o, int seekable)
{
    mk_plugin_output_io io = { sizeof(mk_plugin_output_io), o, out_write, seekable ? out_seek : NULL, out_tell };
    return io;
}

/* ---- One whole write ---- */

typedef struct job {
    const mk_plugin_muxer_format *format;
    const input *in;
    out_io out;
    int seekable;
    int32_t status;
    char message[256];
} job;

static void *write_all(void *arg)
{
    job *j = arg;
    mk_plugin_output_io io = make_io(&j->out, j->seekable);
    void *m = NULL;
    const mk_plugin_muxer_vtable *v = NULL;
    j->status = j->format->create(j->format, &io, &m, &v, j->message, sizeof(j->message));
    if (j->status != MK_OK)
        return NULL;
    for (uint32_t t = 0; t < j->in->tracks && j->status == MK_OK; t++) {
        int32_t index = -1;
        j->status = v->add_track(m, &j->in->track[t], &index);
        if (j->status == MK_OK && index != (int32_t)t) {
            snprintf(j->message, sizeof(j->message), "track %u numbered %d", t, index);
            j->status = MK_EFAIL;
        }
    }
    if (j->status == MK_OK)
        j->status = v->write_header(m);
    for (size_t i = 0; i < j->in->count && j->status == MK_OK; i++)
        j->status = v->write_packet(m, &j->in->packets[i].p);
    if (j->status == MK_OK)
        j->status = v->finish(m);
    if (j->status != MK_OK && j->message[0] == '\0')
        snprintf(j->message, sizeof(j->message), "%s", v->last_error(m));
    v->destroy(m);
    return NULL;
}

static int read_input(const mk_plugin_descriptor *desc, const char *path, input *in)
{
    const mk_plugin_demuxer_factory *df = desc->get_factory(MK_PLUGIN_DEMUXER_FACTORY);
    if (df == NULL) {
        printf("FAIL: the plugin has no demuxer factory to read the input with\n");
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    fseeko(f, 0, SEEK_END);
    in_io src = { f, (int64_t)ftello(f) };
    fseeko(f, 0, SEEK_SET);
    uint8_t head[4096 + 64] = { 0 };
    size_t got = fread(head, 1, 4096, f);
    fseeko(f, 0, SEEK_SET);
    const mk_plugin_demuxer_format *best = NULL;
    int32_t best_score = 0;
    for (uint32_t i = 0; i < df->format_count(); i++) {
        const mk_plugin_demuxer_format *fmt = df->get_format(i);
        int32_t s = fmt->score(fmt, head, got, src.size);
        if (s > best_score) {
            best_score = s;
            best = fmt;
        }
    }
    mk_plugin_io io = { sizeof(mk_plugin_io), &src, in_read, in_seek, in_size };
    void *d = NULL;
    const mk_plugin_demuxer_vtable *v = NULL;
    char err[256] = "";
    if (best == NULL || best->create(best, &io, &d, &v, err, sizeof(err)) != MK_OK) {
        printf("FAIL: the plugin's demuxer does not read %s: %s\n", path, err);
        fclose(f);
        return -1;
    }
    in->tracks = v->track_count(d);
    if (in->tracks > MAX_TRACKS)
        in->tracks = MAX_TRACKS;
    for (uint32_t t = 0; t < in->tracks; t++) {
        mk_plugin_track_info info = { .struct_size = sizeof(info) };
        v->get_track(d, t, &info);
        mk_plugin_mux_track *mt = &in->track[t];
        snprintf(in->codec[t], sizeof(in->codec[t]), "%s", info.codec);
        snprintf(in->tag[t], sizeof(in->tag[t]), "%s", info.codec_tag);
        snprintf(in->language[t], sizeof(in->language[t]), "%s", info.language);
        if (info.extradata_size > 0) {
            in->extradata[t] = malloc(info.extradata_size);
            memcpy(in->extradata[t], info.extradata, info.extradata_size);
        }
        *mt = (mk_plugin_mux_track){
            .struct_size = sizeof(mk_plugin_mux_track), .media_type = info.media_type, .codec = in->codec[t],
            .codec_tag = in->tag[t], .extradata = in->extradata[t], .extradata_size = info.extradata_size,
            .time_base_num = info.time_base_num, .time_base_den = info.time_base_den, .sample_rate = info.sample_rate,
            .channels = info.channels, .channel_mask = info.channel_mask, .width = info.width, .height = info.height,
            .sar_num = info.sar_num, .sar_den = info.sar_den, .frame_rate_num = info.frame_rate_num,
            .frame_rate_den = info.frame_rate_den, .bits_per_coded_sample = info.bits_per_coded_sample,
            .block_align = info.block_align, .bit_rate = info.bit_rate, .video_delay = info.video_delay,
            .disposition = info.disposition, .language = in->language[t], .title = "",
        };
    }
    size_t room = 0;
    for (;;) {
        mk_plugin_demuxed_packet p = { .struct_size = sizeof(p) };
        int32_t s = v->read_packet(d, &p);
        if (s != MK_OK)
            break;
        if (p.track < 0 || (uint32_t)p.track >= in->tracks)
            continue;
        if (in->count == room) {
            room = room ? room * 2 : 256;
            in->packets = realloc(in->packets, room * sizeof(packet));
        }
        packet *q = &in->packets[in->count++];
        q->bytes = malloc(p.size ? p.size : 1);
        memcpy(q->bytes, p.data, p.size);
        q->p = (mk_plugin_mux_packet){ sizeof(mk_plugin_mux_packet), p.flags & (MK_PACKET_FLAG_KEY | MK_PACKET_FLAG_DISCARD),
                                        p.track, q->bytes, p.size, p.pts, p.dts, p.duration };
    }
    v->destroy(d);
    fclose(f);
    return 0;
}

static void free_input(input *in)
{
    for (size_t i = 0; i < in->count; i++)
        free(in->packets[i].bytes);
    free(in->packets);
    for (uint32_t t = 0; t < in->tracks; t++)
        free(in->extradata[t]);
}

/* ---- Checks on one instance ---- */

static void check_arguments(const mk_plugin_muxer_format *format, const input *in)
{
    out_io o = { 0 };
    mk_plugin_output_io io = make_io(&o, 1);
    void *m = NULL;
    const mk_plugin_muxer_vtable *v = NULL;
    char err[256];

    err[0] = '\0';
    CHECK(format->create(format, NULL, &m, &v, err, sizeof(err)) != MK_OK && err[0], "create with a NULL io");
    err[0] = '\0';
    CHECK(format->create(format, &io, NULL, &v, err, sizeof(err)) != MK_OK && err[0], "create with a NULL muxer");
    err[0] = '\0';
    CHECK(format->create(format, &io, &m, NULL, err, sizeof(err)) != MK_OK && err[0], "create with a NULL vtable");
    mk_plugin_output_io small = io;
    small.struct_size = (uint32_t)offsetof(mk_plugin_output_io, write);
    err[0] = '\0';
    CHECK(format->create(format, &small, &m, &v, err, sizeof(err)) != MK_OK && err[0], "create with an io struct too small");
    CHECK(format->create(format, &io, &m, &v, NULL, 0) == MK_OK, "create (errbuf NULL)");
    v->destroy(m);   /* right after create */

    CHECK(format->create(format, &io, &m, &v, err, sizeof(err)) == MK_OK, "create: %s", err);
    CHECK(v->struct_size >= END_OF(mk_plugin_muxer_vtable, destroy), "vtable struct_size %u", v->struct_size);
    int32_t index = -1;
    CHECK(v->add_track(m, NULL, &index) == MK_EINVAL && v->last_error(m)[0], "add_track with a NULL track");
    CHECK(v->add_track(m, &in->track[0], NULL) == MK_EINVAL && v->last_error(m)[0], "add_track with a NULL index");
    CHECK(v->write_header(m) != MK_OK && v->last_error(m)[0], "write_header without a track");
    CHECK(v->write_packet(m, &in->packets[0].p) != MK_OK && v->last_error(m)[0], "write_packet before write_header");
    mk_plugin_mux_track bad = in->track[0];
    bad.codec = "no-such-codec";
    CHECK(v->add_track(m, &bad, &index) != MK_OK && v->last_error(m)[0], "add_track of an unknown codec");
    /* struct_size growth: a smaller track struct (the fields up to sar_den), then a larger one. */
    for (uint32_t t = 0; t < in->tracks; t++) {
        if (t % 2 == 0) {
            mk_plugin_mux_track smaller = in->track[t];
            smaller.struct_size = (uint32_t)END_OF(mk_plugin_mux_track, sar_den);
            CHECK(v->add_track(m, &smaller, &index) == MK_OK && index == (int32_t)t, "add_track with a smaller struct: %s",
                  v->last_error(m));
        } else {
            struct { mk_plugin_mux_track t; uint8_t more[64]; } larger;
            memset(&larger, 0x5A, sizeof(larger));
            larger.t = in->track[t];
            larger.t.struct_size = sizeof(larger);
            CHECK(v->add_track(m, &larger.t, &index) == MK_OK && index == (int32_t)t, "add_track with a larger struct: %s",
                  v->last_error(m));
        }
    }
    CHECK(v->write_header(m) == MK_OK, "write_header: %s", v->last_error(m));
    CHECK(v->add_track(m, &in->track[0], &index) == MK_EINVAL && v->last_error(m)[0], "add_track after write_header");
    CHECK(v->write_header(m) != MK_OK, "write_header twice");
    CHECK(v->write_packet(m, NULL) == MK_EINVAL && v->last_error(m)[0], "write_packet(NULL)");
    mk_plugin_mux_packet p = in->packets[0].p;
    p.track = (int32_t)in->tracks;
    CHECK(v->write_packet(m, &p) == MK_EINVAL && v->last_error(m)[0], "write_packet of a track never added");
    p = in->packets[0].p;
    p.data = NULL;
    CHECK(p.size == 0 || (v->write_packet(m, &p) == MK_EINVAL && v->last_error(m)[0]), "write_packet with NULL data and a size");
    struct { mk_plugin_mux_packet p; uint8_t more[32]; } larger;
    memset(&larger, 0x5A, sizeof(larger));
    larger.p = in->packets[0].p;
    larger.p.struct_size = sizeof(larger);
    CHECK(v->write_packet(m, &larger.p) == MK_OK, "write_packet with a larger struct: %s", v->last_error(m));
    /* Cancel: nothing written after it, later calls refused. */
    long writes = o.writes;
    v->cancel(m);
    CHECK(v->write_packet(m, &in->packets[0].p) != MK_OK, "write_packet after cancel");
    CHECK(v->finish(m) != MK_OK, "finish after cancel");
    v->destroy(m);
    CHECK(o.writes == writes, "%ld writes after cancel", o.writes - writes);
    free(o.mem);
}

static int same_output(const out_io *a, const out_io *b)
{
    return a->end == b->end && memcmp(a->mem, b->mem, (size_t)a->end) == 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s PLUGIN.so FILE FORMAT OUT_PREFIX\n", argv[0]);
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
    const mk_plugin_muxer_factory *factory = desc->get_factory(MK_PLUGIN_MUXER_FACTORY);
    if (factory == NULL) {
        printf("FAIL: the plugin has no muxer factory\n");
        return 1;
    }
    CHECK(factory->struct_size >= END_OF(mk_plugin_muxer_factory, get_format), "factory struct_size %u", factory->struct_size);
    uint32_t n = factory->format_count();
    CHECK(n > 0, "no formats");
    CHECK(factory->get_format(n) == NULL, "get_format(count) is not NULL");
    const mk_plugin_muxer_format *format = NULL;
    for (uint32_t i = 0; i < n; i++) {
        const mk_plugin_muxer_format *f = factory->get_format(i);
        CHECK(f != NULL && f->struct_size >= END_OF(mk_plugin_muxer_format, create) && f->name && f->name[0] &&
              f->long_name && f->extensions && f->mime_types && f->carries && f->create, "format %u is malformed", i);
        if (f == NULL || f->carries == NULL)
            continue;
        CHECK(f->carries(f, MK_MEDIA_AUDIO, NULL) == 0 && f->carries(f, MK_MEDIA_VIDEO, "no-such-codec") == 0,
              "format %s: carries of NULL or an unknown codec is not 0", f->name);
        CHECK(format == NULL || f->name == NULL || strcmp(f->name, format->name) != 0, "two formats named %s", format ? format->name : "");
        if (format == NULL && f->name && strcmp(f->name, argv[3]) == 0)
            format = f;
    }
    if (format == NULL) {
        printf("FAIL: no muxer format named %s\n", argv[3]);
        return 1;
    }
    input in = { 0 };
    if (read_input(desc, argv[2], &in) != 0 || in.tracks == 0 || in.count == 0) {
        printf("FAIL: no tracks or packets read from %s\n", argv[2]);
        return 1;
    }
    for (uint32_t t = 0; t < in.tracks; t++)
        CHECK(format->carries(format, in.track[t].media_type, in.track[t].codec) != 0, "%s does not carry %s", format->name,
              in.track[t].codec);

    check_arguments(format, &in);

    /* Whole writes: a seekable file and a pipe (seek NULL). */
    const char *kinds[2] = { "seek", "pipe" };
    long sizes[2] = { 0, 0 };
    for (int k = 0; k < 2; k++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s.%s", argv[4], kinds[k]);
        job j = { .format = format, .in = &in, .seekable = k == 0 };
        j.out.f = fopen(path, "wb");
        if (j.out.f == NULL) {
            fprintf(stderr, "cannot write %s\n", path);
            return 2;
        }
        write_all(&j);
        fclose(j.out.f);
        CHECK(j.status == MK_OK, "writing %s (%s): status %d: %s", path, kinds[k], j.status, j.message);
        CHECK(!j.out.seek_beyond, "%s: a seek past the bytes written", path);
        sizes[k] = (long)j.out.end;
    }

    /* Threads: one instance alone, then two at once on two threads, into memory. */
    job alone = { .format = format, .in = &in, .seekable = 1 };
    write_all(&alone);
    job pair[2] = { { .format = format, .in = &in, .seekable = 1 }, { .format = format, .in = &in, .seekable = 1 } };
    pthread_t threads[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&threads[i], NULL, write_all, &pair[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(threads[i], NULL);
    CHECK(alone.status == MK_OK && pair[0].status == MK_OK && pair[1].status == MK_OK, "writing into memory: %s %s %s",
          alone.message, pair[0].message, pair[1].message);
    CHECK(same_output(&alone.out, &pair[0].out) && same_output(&alone.out, &pair[1].out), "two instances on two threads wrote other bytes than one alone");
    free(alone.out.mem);
    free(pair[0].out.mem);
    free(pair[1].out.mem);

    printf("format %s tracks %u packets %zu seekable %ld bytes pipe %ld bytes\n", format->name, in.tracks, in.count, sizes[0],
           sizes[1]);
    free_input(&in);
    desc->deinit();
    return failures ? 1 : 0;
}
