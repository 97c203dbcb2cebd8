/*
 * ffmpeg_plugin.c — the FFmpeg plugin's descriptor: init() (logging, the version strings, the
 * backend lists of the decoders and encoders), deinit() and get_factory(), which hands out the
 * four factories: MK_PLUGIN_DECODER_FACTORY (ffmpeg_decoder.c), MK_PLUGIN_ENCODER_FACTORY
 * (ffmpeg_encoder.c), MK_PLUGIN_PICTURE_CONVERTER_FACTORY (ffmpeg_converter.c) and, since
 * plugin ABI 2.4, MK_PLUGIN_DEMUXER_FACTORY (libavformat's input formats, ffmpeg_demuxer.c) and, since
 * 2.5, MK_PLUGIN_MUXER_FACTORY (libavformat's output formats, ffmpeg_muxer.c). What the
 * three use alike (format maps, error codes) is in ffmpeg_common.c; the calls go one way:
 * this file -> decoder / encoder / converter -> common.
 *
 * Exports exactly one symbol, mediakit_plugin_entry(). See ffmpeg_decoder.c for the plugin's
 * rules (backends, ownership, status codes, logging, threads).
 */
#include "ffmpeg_internal.h"

#include <libavutil/log.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Host, logging                                                              */
/* ------------------------------------------------------------------------ */

static const mk_host *ffp_host;
static char ffp_description[160] = "Video and audio decoders from FFmpeg libavcodec";

/* The av_log level for a host log level (MK_LOG_*). */
static int ffp_av_level(int32_t mk_level)
{
    switch (mk_level) {
    case MK_LOG_QUIET:   return AV_LOG_QUIET;
    case MK_LOG_ERROR:   return AV_LOG_ERROR;
    case MK_LOG_WARNING: return AV_LOG_WARNING;
    case MK_LOG_INFO:    return AV_LOG_INFO;
    case MK_LOG_DEBUG:   return AV_LOG_DEBUG;
    default:             return mk_level > MK_LOG_DEBUG ? AV_LOG_TRACE : AV_LOG_QUIET;
    }
}

/* av_log's callback: each message, formatted as libavutil's own callback does
 * ("[h264 @ 0x...] ..."), to the host's log. */
static void ffp_av_log(void *avcl, int level, const char *fmt, va_list vl)
{
    if (level > av_log_get_level())
        return;
    char line[1024];
    int print_prefix = 1;
    av_log_format_line2(avcl, level, fmt, vl, line, sizeof(line), &print_prefix);
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    if (n == 0)
        return;
    int32_t mk = level <= AV_LOG_ERROR ? MK_LOG_ERROR : level <= AV_LOG_WARNING ? MK_LOG_WARNING
               : level <= AV_LOG_INFO ? MK_LOG_INFO : level <= AV_LOG_DEBUG ? MK_LOG_DEBUG : MK_LOG_TRACE;
    mkp_log(ffp_host, mk, "%s", line);
}

static int32_t ffp_init(const mk_host *host)
{
    int32_t status = mkp_keep_host(host, &ffp_host);
    if (status != MK_OK)
        return status;
    int32_t level = mkp_log_level(ffp_host);
    av_log_set_level(ffp_av_level(level));
    if (level > MK_LOG_QUIET)
        av_log_set_callback(ffp_av_log);

    (void)ffp_version_string();
    snprintf(ffp_description, sizeof(ffp_description),
             "Video and audio decoders from FFmpeg libavcodec, pixel format "
             "conversion from libswscale (built against libavcodec %d.%d.%d)",
             LIBAVCODEC_VERSION_MAJOR, LIBAVCODEC_VERSION_MINOR,
             LIBAVCODEC_VERSION_MICRO);

    ffd_init_backends(ffp_host);
    ffe_init_backends(ffp_host);
    ffx_init_formats(ffp_host);
    ffm_init_formats(ffp_host);
    return MK_OK;
}

static void ffp_deinit(void)
{
    if (mkp_log_level(ffp_host) > MK_LOG_QUIET)
        av_log_set_callback(av_log_default_callback);
    av_log_set_level(AV_LOG_INFO);
    ffd_deinit_backends();
    ffp_host = NULL;
}

static const void *ffp_get_factory(const char *id)
{
    if (id != NULL && strcmp(id, MK_PLUGIN_DEMUXER_FACTORY) == 0)
        return ffx_factory();
    if (id != NULL && strcmp(id, MK_PLUGIN_MUXER_FACTORY) == 0)
        return ffm_factory();
    return mkp_pick_factories(id, ffd_factory(), ffc_factory(), ffe_factory());
}

static const mk_plugin_descriptor ffp_descriptor = {
    .abi = MK_PLUGIN_ABI_CURRENT,
    .struct_size = sizeof(mk_plugin_descriptor),
    .name = "ffmpeg",
    .version = ffp_version_text, /* filled in by init() (ffp_version_string) */
    .init = ffp_init,
    .deinit = ffp_deinit,
    .get_factory = ffp_get_factory,
    .description = ffp_description,
};

MKP_ENTRY(ffp_descriptor)
