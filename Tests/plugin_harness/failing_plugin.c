/*
 * failing_plugin.c — a test-only MediaKit codec plugin (ABI v2) that fails on demand and
 * logs what it is sent: for checking DecodeSession's recovery (issue 14) through the real
 * path, the registry loading a plugin from MEDIAKIT_PLUGIN_PATH. Never installed; built by
 * Tests/oracle/test_recovery_plugin.py:
 *
 *   cc -std=c11 -shared -fPIC -Wall -Wextra -Werror -IInclude -o DIR/libMediaKitTestFailing.so \
 *      Tests/plugin_harness/failing_plugin.c
 *
 * One backend: codec "h264", video, name "failtest", priority 1 (below every real decoder:
 * it is used only when asked for by name, `mk-decode --backend failtest`). It does not
 * decode: each packet not flagged MK_PACKET_FLAG_DISCARD gives one NV12 picture of the
 * config's size whose first 8 bytes are the packet's ordinal (below, little-endian) and the
 * rest 16 (Y) / 128 (chroma); a discarded packet gives nothing. One picture waits at most
 * (send returns MK_EAGAIN meanwhile), as libavcodec's send / receive model has it.
 *
 * A packet's ordinal is its place in the stream, 0 first: the number of distinct dts values
 * seen before it, so a packet sent again (the GOP re-fed to a rebuilt decoder) keeps the
 * ordinal it had the first time. Set in the environment (read at each create()):
 *
 *   MK_TESTPLUGIN_LOG           file the plugin appends its log lines to (none: no log)
 *   MK_TESTPLUGIN_FAIL_PACKETS  ordinals whose send_packet fails with MK_EDATA
 *   MK_TESTPLUGIN_FAIL_REBUILDS rebuilds whose create() fails with MK_EFAIL (1 is the first
 *                               decoder created after the first one, 2 the next ...)
 *   MK_TESTPLUGIN_FAIL_DECODERS the decoders (their N, below) that MK_TESTPLUGIN_FAIL_PACKETS
 *                               applies to (unset: every one)
 *   MK_TESTPLUGIN_LOSE_DEVICE   ordinals at which the decoder's "device" goes away: that
 *                               send_packet and every later call of the same decoder fail with
 *                               MK_EINVALIDATED (a decoder created afterwards works)
 *
 * Lists are comma-separated numbers and ranges: "5", "5,6", "10-14", "30-" (30 and after).
 * Log lines (one per call, appended and flushed at once):
 *
 *   create N ok | create N failed     N: 0 the first decoder, then the rebuild number
 *   send D ORDINAL PTS key|- discard|- ok|failed    D: the decoder's N
 *   flush D | drain D
 *
 * Frames are heap buffers freed by their release(), valid after destroy(). The counters
 * are process-wide (a test runs one decode per process).
 */
#include "mediakit/mediakit_plugin.h"
#include "../../Plugins/Common/mk_plugin_support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FT_MAX_ORDINALS 65536

typedef struct ft_decoder {
    int id;                 /* 0: the first decoder created; then the rebuild number */
    int width, height;
    int draining;
    int lost;               /* the device went away (MK_TESTPLUGIN_LOSE_DEVICE) */
    int has_ready;
    mk_plugin_frame ready;
    char last_error[256];
} ft_decoder;

static const mk_host *ft_host;
static int ft_created;                      /* create() calls so far */
static int64_t ft_dts[FT_MAX_ORDINALS];     /* the dts of each ordinal */
static int ft_ordinals;

/* 1 when `n` is in the list `spec` ("1,3-5,9-"). */
static int ft_listed(const char *spec, long n)
{
    if (spec == NULL)
        return 0;
    const char *p = spec;
    while (*p != '\0') {
        char *end;
        long a = strtol(p, &end, 10);
        if (end == p)
            return 0;
        long b = a;
        p = end;
        if (*p == '-') {
            p++;
            b = strtol(p, &end, 10);
            if (end == p)
                b = -1; /* open range */
            p = end;
        }
        if (n >= a && (b < 0 || n <= b))
            return 1;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return 0;
    }
    return 0;
}

static void ft_log(const char *fmt, ...) MKP_PRINTF(1, 2);
static void ft_log(const char *fmt, ...)
{
    const char *path = getenv("MK_TESTPLUGIN_LOG");
    if (path == NULL || *path == '\0')
        return;
    FILE *f = fopen(path, "a");
    if (f == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

/* The ordinal of a packet with this dts: the one it had, or the next one. */
static long ft_ordinal(int64_t dts)
{
    for (int i = ft_ordinals - 1; i >= 0; i--)
        if (ft_dts[i] == dts)
            return i;
    if (ft_ordinals == FT_MAX_ORDINALS)
        return -1;
    ft_dts[ft_ordinals] = dts;
    return ft_ordinals++;
}

static void ft_release(void *opaque) { free(opaque); }

static void ft_drop_ready(ft_decoder *dec)
{
    if (dec->has_ready)
        dec->ready.release(dec->ready.release_opaque);
    dec->has_ready = 0;
}

static int32_t ft_send_packet(void *decoder, const mk_plugin_packet *packet)
{
    ft_decoder *dec = decoder;
    if (dec == NULL)
        return MK_EINVAL;
    int begun = mkp_begin_send("failtest", packet, &dec->draining, MKP_END_OF(mk_plugin_packet, duration),
                               dec->last_error, sizeof(dec->last_error));
    if (begun != MKP_DECODE) {
        if (packet == NULL)
            ft_log("drain %d", dec->id);
        return begun;
    }
    if (dec->draining)
        return MK_EOF;
    if (dec->has_ready)
        return MK_EAGAIN;
    long ordinal = ft_ordinal(packet->dts);
    int discard = (packet->flags & MK_PACKET_FLAG_DISCARD) != 0;
    const char *only = getenv("MK_TESTPLUGIN_FAIL_DECODERS");
    int fail = ft_listed(getenv("MK_TESTPLUGIN_FAIL_PACKETS"), ordinal)
               && (only == NULL || *only == '\0' || ft_listed(only, dec->id));
    if (!dec->lost && ft_listed(getenv("MK_TESTPLUGIN_LOSE_DEVICE"), ordinal)) {
        /* The first decoder to reach this packet loses its device; a later one (made after it
           went) has a device again. */
        static long lost_at = -1;
        if (lost_at != ordinal) {
            lost_at = ordinal;
            dec->lost = 1;
        }
    }
    ft_log("send %d %ld %lld %s %s %s", dec->id, ordinal, (long long)packet->pts,
           (packet->flags & MK_PACKET_FLAG_KEY) ? "key" : "-", discard ? "discard" : "-",
           dec->lost ? "invalidated" : fail ? "failed" : "ok");
    if (dec->lost) {
        snprintf(dec->last_error, sizeof(dec->last_error), "failtest: the device went away at packet %ld", ordinal);
        return MK_EINVALIDATED;
    }
    if (fail) {
        snprintf(dec->last_error, sizeof(dec->last_error), "failtest: packet %ld fails on demand", ordinal);
        return MK_EDATA;
    }
    if (discard)
        return MK_OK;
    size_t luma = (size_t)dec->width * (size_t)dec->height;
    uint8_t *pic = malloc(luma + luma / 2);
    if (pic == NULL)
        return MK_ENOMEM;
    memset(pic, 16, luma);
    memset(pic + luma, 128, luma / 2);
    for (int i = 0; i < 8; i++)
        pic[i] = (uint8_t)((uint64_t)ordinal >> (8 * i));
    mk_plugin_frame *f = &dec->ready;
    memset(f, 0, sizeof(*f));
    f->media_type = MK_MEDIA_VIDEO;
    f->format = MK_PIXEL_NV12;
    f->flags = packet->flags & MK_PACKET_FLAG_KEY;
    f->pts = packet->pts;
    f->duration = packet->duration;
    f->width = dec->width;
    f->height = dec->height;
    f->color_primaries = 2;
    f->color_trc = 2;
    f->color_space = 2;
    f->sar_den = 1;
    f->plane_count = 2;
    f->planes[0] = pic;
    f->strides[0] = dec->width;
    f->planes[1] = pic + luma;
    f->strides[1] = dec->width;
    f->release = ft_release;
    f->release_opaque = pic;
    dec->has_ready = 1;
    return MK_OK;
}

static int32_t ft_receive_frame(void *decoder, mk_plugin_frame *frame)
{
    ft_decoder *dec = decoder;
    if (dec == NULL || frame == NULL)
        return MK_EINVAL;
    if (dec->lost && !dec->has_ready)
        return MK_EINVALIDATED;
    return mkp_hand_over("failtest", &dec->ready, &dec->has_ready, dec->draining, frame,
                         MKP_END_OF(mk_plugin_frame, release_opaque), dec->last_error, sizeof(dec->last_error));
}

static void ft_flush(void *decoder)
{
    ft_decoder *dec = decoder;
    if (dec == NULL)
        return;
    ft_log("flush %d", dec->id);
    ft_drop_ready(dec);
    dec->draining = 0;
}

static void ft_destroy(void *decoder)
{
    ft_decoder *dec = decoder;
    if (dec == NULL)
        return;
    ft_drop_ready(dec);
    free(dec);
}

static const char *ft_last_error(void *decoder)
{
    ft_decoder *dec = decoder;
    return dec == NULL ? "failtest: no decoder" : dec->last_error;
}

static const mk_plugin_decoder_vtable ft_vtable = {
    sizeof(mk_plugin_decoder_vtable), ft_send_packet, ft_receive_frame, ft_flush, ft_destroy, ft_last_error,
};

static int32_t ft_create(const mk_plugin_codec_config *config, void **decoder,
                         const mk_plugin_decoder_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    int checked = mkp_check_create("failtest", config, decoder, vtable, errbuf, errbuf_size,
                                   MKP_END_OF(mk_plugin_codec_config, height), "h264", MK_MEDIA_VIDEO);
    if (checked != MK_OK)
        return checked;
    int id = ft_created++;
    if (id > 0 && ft_listed(getenv("MK_TESTPLUGIN_FAIL_REBUILDS"), id)) {
        ft_log("create %d failed", id);
        mkp_write_error(errbuf, errbuf_size, "failtest: rebuild %d fails on demand", id);
        return MK_EFAIL;
    }
    if (config->width <= 0 || config->height <= 0 || config->width > 8192 || config->height > 8192
        || config->width % 2 || config->height % 2) {
        mkp_write_error(errbuf, errbuf_size, "failtest: needs an even size up to 8192, got %dx%d", config->width, config->height);
        return MK_EUNSUPPORTED;
    }
    ft_decoder *dec = calloc(1, sizeof(*dec));
    if (dec == NULL)
        return MK_ENOMEM;
    dec->id = id;
    dec->width = config->width;
    dec->height = config->height;
    ft_log("create %d ok", id);
    *decoder = dec;
    *vtable = &ft_vtable;
    return MK_OK;
}

static const mk_plugin_decoder_backend ft_backends[] = {
    { sizeof(mk_plugin_decoder_backend), MK_MEDIA_VIDEO, "h264", "failtest", 1, ft_create },
};

MKP_DECODER_FACTORY(ft_decoder_factory, ft_backends, 1);

MKP_DECODER_PLUGIN(ft, ft_host, "failtest", "1.0.0", "", "test only",
                   "Test plugin: fails on demand and logs what it is sent (Tests/oracle/test_recovery_plugin.py)",
                   ft_decoder_factory)
