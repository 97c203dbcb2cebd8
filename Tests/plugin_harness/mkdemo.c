/* mkdemo.c: a MediaKit container plugin reading MKDEMO, the made-up format of
 * docs/writing-a-plugin.md ("A container plugin"). All numbers are little-endian:
 *
 *   header   "MKDEMO1\n", u32 track count (1 to 8)
 *   track    u8 kind ('A': pcm_s16le audio, 'T': UTF-8 text subtitles), u8 channels (audio:
 *            1 to 8, text: 0), u16 zero, u32 rate (audio: samples per second; text: 1000, its
 *            time base is milliseconds)
 *   packet   u32 size, u16 track, u16 flags (bit 0: key), i64 pts and u32 duration in the
 *            track's time base, then `size` bytes; to the end of the file
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mediakit/mediakit_plugin.h"

/* The struct_size a reader needs to read `field` of `type`. */
#define END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

#define DEMO_MAGIC "MKDEMO1\n"
#define DEMO_MAX_TRACKS 8
#define DEMO_TRACK_SIZE 8
#define DEMO_PACKET_HEADER 20
#define DEMO_MAX_PACKET (16u << 20) /* a bigger size is damage, not a packet to allocate */

typedef struct demo_track {
    int kind; /* 'A' or 'T' */
    int channels, rate;
} demo_track;

typedef struct demo_demuxer {
    const mk_plugin_io *io; /* the host's, borrowed until destroy */
    int64_t position;       /* where the next read starts */
    int64_t data_start;     /* the first packet */
    uint32_t track_count;
    demo_track tracks[DEMO_MAX_TRACKS];
    uint8_t *buffer; /* the last packet's bytes: ours until the next call */
    size_t capacity;
    int at_end;
    char error[256];
} demo_demuxer;

static uint32_t le16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t le32(const uint8_t *p) { return le16(p) | le16(p + 2) << 16; }
static int64_t le64(const uint8_t *p) { return (int64_t)((uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32); }

/* Reads exactly `size` bytes: 1, 0 at the very end (nothing read), -1 when the bytes stop
 * short or the host's read fails (the message is in d->error). */
static int demo_read(demo_demuxer *d, uint8_t *buf, size_t size, const char *what)
{
    size_t done = 0;
    while (done < size) {
        int64_t n = d->io->read(d->io->opaque, buf + done, size - done);
        if (n < 0) {
            snprintf(d->error, sizeof(d->error), "mkdemo: %s at byte %lld: the source's read failed", what,
                     (long long)(d->position + (int64_t)done));
            return -1;
        }
        if (n == 0)
            break;
        done += (size_t)n;
    }
    d->position += (int64_t)done;
    if (done == size)
        return 1;
    if (done == 0)
        return 0;
    snprintf(d->error, sizeof(d->error), "mkdemo: %s at byte %lld: %zu of %zu bytes, then the end",
             what, (long long)(d->position - (int64_t)done), done, size);
    return -1;
}

static int32_t demo_score(const mk_plugin_demuxer_format *format, const uint8_t *head, size_t size,
                          int64_t total_size)
{
    (void)format;
    (void)total_size;
    return head != NULL && size >= 8 && memcmp(head, DEMO_MAGIC, 8) == 0 ? 100 : 0;
}

static uint32_t demo_track_count(void *demuxer)
{
    return demuxer != NULL ? ((demo_demuxer *)demuxer)->track_count : 0;
}

static int32_t demo_get_track(void *demuxer, uint32_t index, mk_plugin_track_info *info)
{
    demo_demuxer *d = demuxer;
    if (d == NULL || info == NULL || index >= d->track_count || info->struct_size < sizeof(uint32_t)) {
        if (d != NULL)
            snprintf(d->error, sizeof(d->error), "mkdemo: get_track %u of %u, or a NULL info", index, d->track_count);
        return MK_EINVAL;
    }
    const demo_track *t = &d->tracks[index];
    mk_plugin_track_info i;
    memset(&i, 0, sizeof(i));
    i.struct_size = info->struct_size < sizeof(i) ? info->struct_size : (uint32_t)sizeof(i);
    i.media_type = t->kind == 'A' ? MK_MEDIA_AUDIO : MK_MEDIA_SUBTITLE;
    i.codec = t->kind == 'A' ? "pcm_s16le" : "subrip"; /* FFmpeg's names; SubRip's packets are plain text */
    i.codec_tag = "";
    i.time_base_num = 1;
    i.time_base_den = t->rate;
    i.duration = MK_NOPTS_VALUE;
    i.start_time = MK_NOPTS_VALUE;
    i.sample_rate = t->kind == 'A' ? t->rate : 0;
    i.channels = t->channels;
    i.sar_den = 1;
    i.frame_rate_den = 1;
    i.bits_per_coded_sample = t->kind == 'A' ? 16 : 0;
    i.block_align = t->kind == 'A' ? 2 * t->channels : 0;
    i.bit_rate = t->kind == 'A' ? 16LL * t->channels * t->rate : 0;
    i.disposition = index == 0 ? MK_DISPOSITION_DEFAULT : 0;
    i.language = "";
    i.title = "";
    memcpy(info, &i, i.struct_size); /* up to the smaller of the two sizes */
    return MK_OK;
}

static int32_t demo_get_info(void *demuxer, mk_plugin_demuxer_info *info)
{
    if (demuxer == NULL || info == NULL || info->struct_size < sizeof(uint32_t))
        return MK_EINVAL;
    mk_plugin_demuxer_info i = { 0 };
    i.struct_size = info->struct_size < sizeof(i) ? info->struct_size : (uint32_t)sizeof(i);
    i.format_name = "mkdemo";
    i.duration_us = MK_NOPTS_VALUE; /* known only by reading every packet */
    i.start_time_us = 0;
    memcpy(info, &i, i.struct_size);
    return MK_OK;
}

/* Reads a packet header at the current position: 1, 0 at the end, -1 on damage. */
static int demo_packet_header(demo_demuxer *d, uint32_t *size, uint32_t *track, uint32_t *flags, int64_t *pts,
                              uint32_t *duration)
{
    uint8_t h[DEMO_PACKET_HEADER];
    int r = demo_read(d, h, sizeof(h), "a packet header");
    if (r <= 0)
        return r;
    *size = le32(h);
    *track = le16(h + 4);
    *flags = le16(h + 6);
    *pts = le64(h + 8);
    *duration = le32(h + 16);
    if (*track >= d->track_count || *size > DEMO_MAX_PACKET) {
        snprintf(d->error, sizeof(d->error), "mkdemo: the packet at byte %lld: track %u of %u, %u bytes (at most %u)",
                 (long long)(d->position - DEMO_PACKET_HEADER), *track, d->track_count, *size, DEMO_MAX_PACKET);
        return -1;
    }
    return 1;
}

static int32_t demo_read_packet(void *demuxer, mk_plugin_demuxed_packet *packet)
{
    demo_demuxer *d = demuxer;
    if (d == NULL || packet == NULL || packet->struct_size < END_OF(mk_plugin_demuxed_packet, duration)) {
        if (d != NULL)
            snprintf(d->error, sizeof(d->error), "mkdemo: read_packet: a NULL or too small packet struct");
        return MK_EINVAL;
    }
    if (d->at_end)
        return MK_EOF;
    int64_t start = d->position;
    uint32_t size, track, flags, duration;
    int64_t pts;
    int r = demo_packet_header(d, &size, &track, &flags, &pts, &duration);
    if (r == 0) {
        d->at_end = 1;
        return MK_EOF;
    }
    if (r < 0)
        return MK_EDATA;
    if (size > d->capacity) {
        uint8_t *bigger = realloc(d->buffer, size);
        if (bigger == NULL) {
            snprintf(d->error, sizeof(d->error), "mkdemo: out of memory for a packet of %u bytes", size);
            return MK_ENOMEM;
        }
        d->buffer = bigger;
        d->capacity = size;
    }
    r = size > 0 ? demo_read(d, d->buffer, size, "a packet's bytes") : 1;
    if (r <= 0) {
        if (r == 0) /* the header, then nothing */
            snprintf(d->error, sizeof(d->error), "mkdemo: the packet at byte %lld: %u bytes, then the end",
                     (long long)start, size);
        return MK_EDATA;
    }
    mk_plugin_demuxed_packet p;
    memset(&p, 0, sizeof(p));
    p.struct_size = packet->struct_size < sizeof(p) ? packet->struct_size : (uint32_t)sizeof(p);
    p.flags = (flags & 1) ? MK_PACKET_FLAG_KEY : 0;
    p.track = (int32_t)track;
    p.data = size > 0 ? d->buffer : NULL;
    p.size = size;
    p.pts = pts;
    p.dts = pts;
    p.duration = duration;
    p.position = start;
    memcpy(packet, &p, p.struct_size);
    return MK_OK;
}

/* Moves to the last key packet whose time is at or before time_us (the first of the packets
 * of that time; the first packet when none is), reading the packet headers from the start:
 * MKDEMO has no index. */
static int32_t demo_seek(void *demuxer, int64_t time_us, uint32_t flags)
{
    demo_demuxer *d = demuxer;
    if (d == NULL)
        return MK_EINVAL;
    if (d->io->seek == NULL) {
        snprintf(d->error, sizeof(d->error), "mkdemo: seek: the source cannot seek (a stream read once)");
        return MK_EUNSUPPORTED;
    }
    int64_t target = d->data_start, at = d->data_start;
    double target_us = -1.0;
    for (;;) {
        if (d->io->seek(d->io->opaque, at) != MK_OK)
            break;
        d->position = at;
        uint32_t size, track, pflags, duration;
        int64_t pts;
        int r = demo_packet_header(d, &size, &track, &pflags, &pts, &duration);
        if (r <= 0)
            break; /* the end, or damage: stop at the last good packet */
        double us = (double)pts * 1e6 / d->tracks[track].rate; /* pts / rate seconds */
        if (us > (double)time_us)
            break;
        if (((pflags & 1) || (flags & MK_DEMUX_SEEK_ANY)) && us > target_us) { /* the first packet of that time */
            target = at;
            target_us = us;
        }
        at += DEMO_PACKET_HEADER + (int64_t)size;
    }
    d->error[0] = '\0';
    if (d->io->seek(d->io->opaque, target) != MK_OK) {
        snprintf(d->error, sizeof(d->error), "mkdemo: seek: the source cannot seek to byte %lld", (long long)target);
        return MK_EFAIL;
    }
    d->position = target;
    d->at_end = 0;
    return MK_OK;
}

static const char *demo_last_error(void *demuxer)
{
    return demuxer != NULL ? ((demo_demuxer *)demuxer)->error : "";
}

static void demo_destroy(void *demuxer)
{
    demo_demuxer *d = demuxer;
    if (d != NULL)
        free(d->buffer);
    free(d); /* the packet bytes and track strings handed out end with it */
}

static const mk_plugin_demuxer_vtable demo_vtable = {
    .struct_size = sizeof(mk_plugin_demuxer_vtable),
    .track_count = demo_track_count,
    .get_track = demo_get_track,
    .get_info = demo_get_info,
    .read_packet = demo_read_packet,
    .seek = demo_seek,
    .last_error = demo_last_error,
    .destroy = demo_destroy,
};

static int32_t demo_create(const mk_plugin_demuxer_format *format, const mk_plugin_io *io, void **demuxer,
                           const mk_plugin_demuxer_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    (void)format;
    if (errbuf != NULL && errbuf_size > 0)
        errbuf[0] = '\0';
    if (io == NULL || demuxer == NULL || vtable == NULL || io->struct_size < END_OF(mk_plugin_io, size) ||
        io->read == NULL) {
        if (errbuf != NULL)
            snprintf(errbuf, errbuf_size, "mkdemo: create: a NULL argument or an io struct without read");
        return MK_EINVAL;
    }
    *demuxer = NULL;
    *vtable = NULL;
    demo_demuxer *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        if (errbuf != NULL)
            snprintf(errbuf, errbuf_size, "mkdemo: out of memory");
        return MK_ENOMEM;
    }
    d->io = io;
    uint8_t h[12];
    int r = demo_read(d, h, sizeof(h), "the header");
    const char *bad = NULL;
    if (r <= 0)
        bad = r == 0 ? "mkdemo: an empty source" : d->error;
    else if (memcmp(h, DEMO_MAGIC, 8) != 0)
        bad = "mkdemo: no MKDEMO1 magic at byte 0";
    else if (le32(h + 8) < 1 || le32(h + 8) > DEMO_MAX_TRACKS)
        bad = "mkdemo: the track count at byte 8 is not 1 to 8";
    d->track_count = bad == NULL ? le32(h + 8) : 0;
    for (uint32_t i = 0; i < d->track_count && bad == NULL; i++) {
        uint8_t t[DEMO_TRACK_SIZE];
        if (demo_read(d, t, sizeof(t), "a track") <= 0) {
            bad = d->error[0] ? d->error : "mkdemo: the track table ends early";
            break;
        }
        demo_track *track = &d->tracks[i];
        track->kind = t[0];
        track->channels = t[1];
        track->rate = (int)le32(t + 4);
        int audio_ok = t[0] == 'A' && t[1] >= 1 && t[1] <= 8 && track->rate >= 1 && track->rate <= 384000;
        int text_ok = t[0] == 'T' && t[1] == 0 && track->rate == 1000;
        if (!audio_ok && !text_ok) {
            snprintf(d->error, sizeof(d->error), "mkdemo: track %u at byte %u: kind 0x%02x, %d channels, rate %d", i,
                     12 + i * DEMO_TRACK_SIZE, t[0], t[1], track->rate);
            bad = d->error;
        }
    }
    if (bad != NULL) {
        if (errbuf != NULL)
            snprintf(errbuf, errbuf_size, "%s", bad);
        free(d);
        return MK_EDATA;
    }
    d->data_start = d->position;
    *demuxer = d;
    *vtable = &demo_vtable;
    return MK_OK;
}

static const mk_plugin_demuxer_format demo_format = {
    .struct_size = sizeof(mk_plugin_demuxer_format),
    .name = "mkdemo",
    .long_name = "MKDEMO (docs/writing-a-plugin.md)",
    .extensions = "mkdemo",
    .mime_types = "",
    .priority = 50,
    .score = demo_score,
    .create = demo_create,
};

static uint32_t demo_format_count(void) { return 1; }

static const mk_plugin_demuxer_format *demo_get_format(uint32_t index)
{
    return index == 0 ? &demo_format : NULL;
}

static const mk_plugin_demuxer_factory demo_factory = {
    sizeof(mk_plugin_demuxer_factory), demo_format_count, demo_get_format,
};

static int32_t demo_init(const mk_host *host)
{
    return host != NULL && host->abi.major == MK_PLUGIN_ABI_MAJOR ? MK_OK : MK_EINVAL;
}

static void demo_deinit(void) {}

static const void *demo_get_factory(const char *id)
{
    return id != NULL && strcmp(id, MK_PLUGIN_DEMUXER_FACTORY) == 0 ? &demo_factory : NULL;
}

static const mk_plugin_descriptor demo_descriptor = {
    .abi = MK_PLUGIN_ABI_CURRENT,
    .struct_size = sizeof(mk_plugin_descriptor),
    .name = "mkdemo-c",
    .version = "1.0.0",
    .init = demo_init,
    .deinit = demo_deinit,
    .get_factory = demo_get_factory,
    .description = "MKDEMO demuxer from docs/writing-a-plugin.md (C)",
};

__attribute__((visibility("default"))) const mk_plugin_descriptor *mediakit_plugin_entry(void)
{
    return &demo_descriptor;
}
