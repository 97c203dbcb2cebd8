/*
 * ffmpeg_decoder.c — MediaKit codec plugin: video and audio decoders from
 * FFmpeg's libavcodec, behind the C ABI of mediakit/mediakit_plugin.h. The
 * plugin's descriptor is in ffmpeg_plugin.c, its picture converter
 * (libswscale) in ffmpeg_converter.c, what they share in ffmpeg_common.c.
 *
 * Exports exactly one symbol, mediakit_plugin_entry(). The plugin links
 * libavcodec, libavutil and libswscale only (never libavformat: demuxing is
 * the host's job).
 *
 * Factories: MK_PLUGIN_DECODER_FACTORY (below),
 * MK_PLUGIN_PICTURE_CONVERTER_FACTORY (ffmpeg_converter.c) and
 * MK_PLUGIN_ENCODER_FACTORY (ffmpeg_encoder.c: AAC, FLAC, ALAC, MP3 through libmp3lame).
 *
 * Backends
 *   One backend per codec that the libavcodec loaded at run time decodes, audio or video:
 *   init() walks av_codec_iterate() once and lists, per codec id, the decoder
 *   avcodec_find_decoder() picks (the first one that is not experimental, i.e. the one the
 *   `ffmpeg` command-line tool uses by default, so the output is bit-identical to
 *   `ffmpeg -i IN -f rawvideo ...`), under FFmpeg's codec name ("h264", "amr_nb", "gsm_ms",
 *   "adpcm_ima_wav" ...), backend name "ffmpeg", priority 100, so a dedicated plugin at 200
 *   (dav1d, opus, vorbis, swiftaudio) wins where it decodes. A codec with experimental
 *   decoders only is left out, and so are subtitle decoders (mk_plugin_frame carries audio
 *   and video only). The one exception is AV1 (priority 50): libavcodec's native "av1"
 *   decoder only drives hardware accelerators, so only the libdav1d (or libaom-av1) wrapper
 *   is accepted. Every backend shares one create(), which serves config->codec.
 *
 * Ownership
 *   - Descriptor, factories, vtable: static storage; the backend list: built by init(),
 *     unchanged until deinit() frees it.
 *   - create(): config (and its extradata) is borrowed for the call; extradata
 *     is copied (with AV_INPUT_BUFFER_PADDING_SIZE zero bytes). On failure
 *     nothing stays allocated and errbuf holds the reason.
 *   - send_packet(): the packet is borrowed for the call; its payload is copied
 *     into a padded, reference-counted AVPacket buffer, unless the host offers
 *     the bytes to keep (mk_plugin_packet.retain) with at least
 *     AV_INPUT_BUFFER_PADDING_SIZE bytes of zero padding: libavcodec then uses
 *     them in place and the host's reference is released when it is done.
 *   - receive_frame(): each frame is returned in its own AVFrame (no pixel or
 *     sample is copied: the mk_plugin_frame planes point into the decoder's
 *     reference-counted buffers). frame->release(frame->release_opaque) frees
 *     that AVFrame; it must be called exactly once, from any thread, and may
 *     be called after destroy(): the buffers are reference counted and outlive
 *     the AVCodecContext.
 *   - last_error(): a per-instance buffer, never NULL, valid until the next
 *     call on the instance.
 *
 * Status codes (libavcodec semantics, passed through)
 *   - send_packet() returning MK_EAGAIN: the packet was NOT taken;
 *     receive frames, then send it again. Any other error (EDATA ...): the
 *     packet WAS consumed and decoding it (or data sent earlier) failed; do
 *     not resend it, go on with the next packet. A zero-size packet is a
 *     no-op (libavcodec would take it for end of stream).
 *   - send_packet(NULL) returns OK once draining has started, even when
 *     decoding the data still buffered failed (that error is kept for
 *     last_error()); MK_EOF if already draining.
 *   - receive_frame(): a picture in a layout the ABI has no format for, but
 *     whose samples another layout holds unchanged (ARGB / ABGR -> RGBA,
 *     big-endian 16-bit -> little-endian: uncompressed QuickTime layouts
 *     libavcodec's rawvideo decoder gives), is repacked by libswscale into a
 *     frame of its own first (ffp_repack_target); the same sample values, and
 *     a conversion after it gives what ffmpeg's from the original layout gives.
 *   - receive_frame() returning MK_EUNSUPPORTED: that frame had a
 *     pixel/sample format (or > 8 planar channels) the ABI cannot describe; it
 *     has been dropped, the decoder is still usable.
 *   - av errors map: EAGAIN, EOF, INVALIDDATA -> EDATA, ENOMEM, EINVAL,
 *     PATCHWELCOME / ENOSYS / DECODER_NOT_FOUND / EXPERIMENTAL -> EUNSUPPORTED,
 *     anything else -> EFAIL; last_error() holds the av_strerror text.
 *
 * Decoded output is what libavcodec gives with its defaults, like the ffmpeg
 * tool, with three things to know on the host side: (0) config.video_delay
 * (the container's reorder depth) becomes AVCodecContext.has_b_frames; for
 * H.264 without VUI reorder info, leaving it 0 loses a frame; (1) packets marked
 * MK_PACKET_FLAG_DISCARD are decoded but their frames dropped (whole packets
 * only; there is no way to pass "skip N samples" side data, so partial trims
 * are the host's); (2) backends output every decoded sample and the host trims
 * (see "Trimming" in mediakit_plugin.h): libavcodec's Opus decoders (native
 * and libopus) would drop the OpusHead pre-skip themselves, at the start and
 * again after every avcodec_flush_buffers(), and advance the frame pts by it;
 * the plugin opens them with AV_CODEC_FLAG2_SKIP_MANUAL so they do not. That
 * flag changes nothing else the plugin relies on: libavcodec then also keeps
 * frames flagged AV_FRAME_FLAG_DISCARD (the plugin drops those itself, below)
 * and attaches AV_FRAME_DATA_SKIP_SAMPLES side data (ignored); the plugin
 * never sends skip/discard-padding packet side data, and no other decoder in
 * the table sets a decoder-side skip at open.
 *
 * Logging
 *   init() sets libavcodec's log level from the host's log_level (MK_LOG_QUIET:
 *   AV_LOG_QUIET; MK_LOG_ERROR ... MK_LOG_TRACE: AV_LOG_ERROR ... AV_LOG_TRACE)
 *   and, unless the host is quiet, sends libav* messages to the host's log
 *   (av_log_set_callback). Note that the av_log level and callback are
 *   process-wide; deinit() puts libavutil's defaults back.
 *
 * Threads
 *   As tagged in mediakit_plugin.h: one instance is used by one thread at a
 *   time (the host serialises calls); create() may be called from any thread.
 *
 * Requires FFmpeg 5.1 or newer (AVChannelLayout API).
 */

#include "ffmpeg_internal.h"

#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/mem.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/samplefmt.h>
#include <libswscale/swscale.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FFP_BACKEND_NAME "ffmpeg"

/* The smallest struct_size accepted for each host struct: everything up to
 * and including the last field this plugin needs (ABI 2.0; FFP_FRAME_MIN_SIZE
 * is in ffmpeg_internal.h). */
#define FFP_CONFIG_MIN_SIZE MKP_END_OF(mk_plugin_codec_config, block_align)
#define FFP_PACKET_MIN_SIZE MKP_END_OF(mk_plugin_packet, duration)

/* ------------------------------------------------------------------------ */
/* Backends: every decoder of the libavcodec loaded                           */
/* ------------------------------------------------------------------------ */

typedef struct ffp_codec {
    const char *name;       /* FFmpeg's codec descriptor name = the MediaKit codec name */
    int32_t media_type;     /* MK_MEDIA_* */
    const AVCodec *decoder; /* the one avcodec_find_decoder() picks (AV1: see below) */
} ffp_codec;

static const mk_host *ffp_host;
/* Built once by init() (ffd_init_backends), read-only afterwards; freed by deinit(). Entry i
 * of ffp_codecs is the codec of backend i. */
static ffp_codec *ffp_codecs;
static mk_plugin_decoder_backend *ffp_backends;
static uint32_t ffp_backend_count;

static int32_t ffp_create(const mk_plugin_codec_config *config, void **decoder,
                          const mk_plugin_decoder_vtable **vtable, char *errbuf, size_t errbuf_size);

/* AV1: libavcodec's native "av1" decoder only drives hardware accelerators, so only the
 * libdav1d (or libaom-av1) wrapper is taken, at priority 50 so a dedicated dav1d plugin wins. */
static const AVCodec *ffp_av1_decoder(void)
{
    static const char *const av1_decoders[] = { "libdav1d", "libaom-av1" };
    for (size_t i = 0; i < sizeof(av1_decoders) / sizeof(av1_decoders[0]); i++) {
        const AVCodec *c = avcodec_find_decoder_by_name(av1_decoders[i]);
        if (c != NULL && c->id == AV_CODEC_ID_AV1)
            return c;
    }
    return NULL;
}

static int ffp_is_experimental(const AVCodec *c)
{
    return (c->capabilities & AV_CODEC_CAP_EXPERIMENTAL) != 0;
}

/* One pass over av_codec_iterate: per codec id, the first decoder that is not experimental,
 * which is avcodec_find_decoder()'s rule (an id with experimental decoders only is left out:
 * avcodec_open2 refuses them, as the ffmpeg tool does). Subtitle, data and attachment
 * decoders are left out: mk_plugin_frame carries audio and video only. Returns the count,
 * or -1 when out of memory. */
static int ffp_list_decoders(ffp_codec *out, size_t room)
{
    size_t count = 0;
    void *it = NULL;
    const AVCodec *c;
    while ((c = av_codec_iterate(&it)) != NULL) {
        if (!av_codec_is_decoder(c) || (c->type != AVMEDIA_TYPE_AUDIO && c->type != AVMEDIA_TYPE_VIDEO))
            continue;
        size_t i = 0;
        while (i < count && out[i].decoder->id != c->id)
            i++;
        if (i < count) {
            if (ffp_is_experimental(out[i].decoder) && !ffp_is_experimental(c) && c->id != AV_CODEC_ID_AV1)
                out[i].decoder = c;
            continue;
        }
        const AVCodecDescriptor *desc = avcodec_descriptor_get(c->id);
        const AVCodec *chosen = c->id == AV_CODEC_ID_AV1 ? ffp_av1_decoder() : c;
        if (desc == NULL || chosen == NULL || count == room)
            continue;
        out[count++] = (ffp_codec){ desc->name, c->type == AVMEDIA_TYPE_VIDEO ? MK_MEDIA_VIDEO : MK_MEDIA_AUDIO, chosen };
    }
    return (int)count;
}

void ffd_init_backends(const mk_host *host)
{
    ffp_host = host;
    if (ffp_codecs != NULL)
        return; /* init() after init() without deinit(): the list stands */
    size_t room = 0;
    void *it = NULL;
    const AVCodec *c;
    while ((c = av_codec_iterate(&it)) != NULL)
        room += av_codec_is_decoder(c) != 0;
    ffp_codecs = calloc(room > 0 ? room : 1, sizeof(*ffp_codecs));
    if (ffp_codecs == NULL) {
        mkp_log(ffp_host, MK_LOG_ERROR, "ffmpeg: out of memory listing %zu decoders; no decoder offered", room);
        return;
    }
    uint32_t listed = 0;
    int found = ffp_list_decoders(ffp_codecs, room);
    ffp_backends = calloc(found > 0 ? (size_t)found : 1, sizeof(*ffp_backends));
    if (ffp_backends == NULL) {
        mkp_log(ffp_host, MK_LOG_ERROR, "ffmpeg: out of memory listing %d decoders; no decoder offered", found);
        free(ffp_codecs);
        ffp_codecs = NULL;
        return;
    }
    for (int i = 0; i < found; i++) {
        const ffp_codec *fc = &ffp_codecs[i];
        if (ffp_is_experimental(fc->decoder)) {
            mkp_log(ffp_host, MK_LOG_DEBUG, "ffmpeg: %s has only experimental decoders (%s); left out",
                    fc->name, fc->decoder->name);
            continue;
        }
        ffp_codecs[listed] = *fc;
        mk_plugin_decoder_backend *b = &ffp_backends[listed++];
        b->struct_size = sizeof(*b);
        b->media_type = fc->media_type;
        b->codec = fc->name;
        b->name = FFP_BACKEND_NAME;
        b->priority = fc->decoder->id == AV_CODEC_ID_AV1 ? 50 : 100;
        b->create = ffp_create;
    }
    ffp_backend_count = listed;
    mkp_log(ffp_host, MK_LOG_DEBUG, "ffmpeg: %u decoders offered (%s)", listed, ffp_version_string());
}

void ffd_deinit_backends(void)
{
    ffp_backend_count = 0;
    free(ffp_backends);
    free(ffp_codecs);
    ffp_backends = NULL;
    ffp_codecs = NULL;
}

MKP_DECODER_FACTORY(ffp_decoder_factory, ffp_backends, ffp_backend_count);

const mk_plugin_decoder_factory *ffd_factory(void)
{
    return &ffp_decoder_factory;
}

/* The entry for the codec called `name`, or NULL. */
static const ffp_codec *ffp_find_codec(const char *name)
{
    for (uint32_t i = 0; name != NULL && i < ffp_backend_count; i++)
        if (strcmp(ffp_codecs[i].name, name) == 0)
            return &ffp_codecs[i];
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Decoder instance                                                          */
/* ------------------------------------------------------------------------ */

typedef struct ffp_decoder {
    AVCodecContext *ctx;
    AVPacket *packet;        /* reused for each send_packet */
    AVFrame *spare;          /* the next frame to hand out; allocated before
                                receiving so a failed allocation loses nothing */
    const ffp_codec *codec;
    struct SwsContext *sws;  /* repacks pictures the ABI has no format for (ffp_repack) */
    char last_error[FFP_ERROR_SIZE];
} ffp_decoder;


#define ffp_write_error mkp_write_error

#define ffp_set_error(dec, ...) \
    ffp_write_error((dec)->last_error, sizeof((dec)->last_error), __VA_ARGS__)


/* Store "ffmpeg <codec> (<decoder>): <what>: <av_strerror>" and map the code. */
static int ffp_fail_av(ffp_decoder *dec, const char *what, int err)
{
    char text[AV_ERROR_MAX_STRING_SIZE + 32];
    if (av_strerror(err, text, sizeof(text)) < 0)
        snprintf(text, sizeof(text), "error %d", err);
    ffp_set_error(dec, "ffmpeg %s (decoder %s): %s: %s", dec->codec->name,
                  dec->ctx->codec != NULL ? dec->ctx->codec->name : "?", what, text);
    return ffp_map_averror(err);
}

/* A packet's bytes the host let the plugin keep (see "Packets" in mediakit_plugin.h). */
typedef struct ffp_kept {
    void (*release)(void *owner);
    void *owner;
} ffp_kept;

/* AVBuffer's free callback for kept packet bytes: gives them back to the host. */
static void ffp_release_kept(void *opaque, uint8_t *data)
{
    (void)data;
    ffp_kept *kept = opaque;
    kept->release(kept->owner);
    free(kept);
}

static int32_t ffp_send_packet(void *decoder, const mk_plugin_packet *packet)
{
    ffp_decoder *dec = decoder;
    if (dec == NULL)
        return MK_EINVAL;

    if (packet == NULL) {
        int ret = avcodec_send_packet(dec->ctx, NULL);
        if (ret == AVERROR_EOF || ret == AVERROR(EAGAIN) || ret == AVERROR(EINVAL) ||
            ret == AVERROR(ENOMEM))
            return ffp_fail_av(dec, "drain", ret);
        if (ret < 0) {
            /* libavcodec has entered draining; the error comes from decoding
             * data sent earlier. The drain request itself succeeded: keep the
             * message for last_error() and report success. */
            ffp_fail_av(dec, "decoding before drain", ret);
        }
        return MK_OK;
    }

    if (packet->struct_size < FFP_PACKET_MIN_SIZE) {
        ffp_set_error(dec, "ffmpeg %s: send_packet: packet struct_size %u < %zu",
                      dec->codec->name, packet->struct_size,
                      (size_t)FFP_PACKET_MIN_SIZE);
        return MK_EINVAL;
    }
    if (packet->size > 0 && packet->data == NULL) {
        ffp_set_error(dec, "ffmpeg %s: send_packet: data is NULL but size is %zu",
                      dec->codec->name, packet->size);
        return MK_EINVAL;
    }
    if (packet->size > (size_t)(INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE)) {
        ffp_set_error(dec, "ffmpeg %s: send_packet: packet of %zu bytes is too large",
                      dec->codec->name, packet->size);
        return MK_EINVAL;
    }
    if (packet->size == 0) {
        /* libavcodec would take an empty packet for end of stream (or reject
         * it); an empty sample carries nothing to decode, so it is a no-op. */
        return MK_OK;
    }

    AVPacket *pkt = dec->packet;
    av_packet_unref(pkt);
    int ret;
    if (mkp_packet_can_keep(packet, AV_INPUT_BUFFER_PADDING_SIZE)) {
        /* the host's padded bytes, used in place (see "Packets" in mediakit_plugin.h) */
        ffp_kept *kept = malloc(sizeof(*kept));
        if (kept == NULL)
            return ffp_fail_av(dec, "keeping packet", AVERROR(ENOMEM));
        kept->release = packet->release;
        kept->owner = packet->owner;
        pkt->buf = av_buffer_create((uint8_t *)packet->data, packet->size + AV_INPUT_BUFFER_PADDING_SIZE,
                                    ffp_release_kept, kept, AV_BUFFER_FLAG_READONLY);
        if (pkt->buf == NULL) {
            free(kept);
            return ffp_fail_av(dec, "keeping packet", AVERROR(ENOMEM));
        }
        packet->retain(packet->owner);
        pkt->data = (uint8_t *)packet->data;
        pkt->size = (int)packet->size;
    } else {
        ret = av_new_packet(pkt, (int)packet->size); /* padded, ref-counted, zeroed padding */
        if (ret < 0)
            return ffp_fail_av(dec, "allocating packet", ret);
        memcpy(pkt->data, packet->data, packet->size);
    }
    pkt->pts = packet->pts == MK_NOPTS_VALUE ? AV_NOPTS_VALUE : packet->pts;
    pkt->dts = packet->dts == MK_NOPTS_VALUE ? AV_NOPTS_VALUE : packet->dts;
    pkt->duration = packet->duration > 0 ? packet->duration : 0;
    if (packet->flags & MK_PACKET_FLAG_KEY)
        pkt->flags |= AV_PKT_FLAG_KEY;
    if (packet->flags & MK_PACKET_FLAG_DISCARD)
        pkt->flags |= AV_PKT_FLAG_DISCARD;

    ret = avcodec_send_packet(dec->ctx, pkt);
    av_packet_unref(pkt); /* libavcodec holds its own reference */
    if (ret < 0)
        return ffp_fail_av(dec, "send_packet", ret);
    return MK_OK;
}


/* The layout with an ABI format that holds the samples of `format` unchanged (packed to
 * planar 4:2:2, a reordered alpha, big- to little-endian words), or AV_PIX_FMT_NONE. */
static enum AVPixelFormat ffp_repack_target(int format)
{
    /* Not packed 4:2:2 (UYVY, YUYV): libswscale converts those to 4:2:0 or RGB by a path of
     * their own, so a conversion after a repack to planar 4:2:2 would not give ffmpeg's
     * pictures; they stay unsupported until the ABI has a packed 4:2:2 format. */
    switch (format) {
    case AV_PIX_FMT_ARGB:
    case AV_PIX_FMT_ABGR:     return AV_PIX_FMT_RGBA;
    case AV_PIX_FMT_RGB48BE:  return AV_PIX_FMT_RGB48LE;
    case AV_PIX_FMT_GRAY16BE: return AV_PIX_FMT_GRAY16LE;
    default:                  return AV_PIX_FMT_NONE;
    }
}

/* Replaces `f`'s picture by the same samples in ffp_repack_target's layout (its properties
 * kept). MK_OK when there was nothing to do or it was done. */
static int ffp_repack(ffp_decoder *dec, AVFrame *f)
{
    enum AVPixelFormat target = ffp_repack_target(f->format);
    if (target == AV_PIX_FMT_NONE || ffp_find_pix(f->format) != NULL)
        return MK_OK;
    AVFrame *g = av_frame_alloc();
    if (g == NULL) {
        ffp_set_error(dec, "ffmpeg %s: repacking a picture: out of memory", dec->codec->name);
        return MK_ENOMEM;
    }
    g->format = target;
    g->width = f->width;
    g->height = f->height;
    int ret = av_frame_get_buffer(g, 64);
    if (ret >= 0)
        ret = av_frame_copy_props(g, f);
    if (ret >= 0) {
        dec->sws = sws_getCachedContext(dec->sws, f->width, f->height, (enum AVPixelFormat)f->format,
                                        f->width, f->height, target, SWS_POINT, NULL, NULL, NULL);
        ret = dec->sws == NULL ? AVERROR(EINVAL)
                               : sws_scale(dec->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height,
                                           g->data, g->linesize);
    }
    if (ret < 0) {
        av_frame_free(&g);
        return ffp_fail_av(dec, "repack the picture", ret);
    }
    av_frame_unref(f);
    av_frame_move_ref(f, g);
    av_frame_free(&g);
    return MK_OK;
}

static int ffp_fill_video(ffp_decoder *dec, const AVFrame *f, mk_plugin_frame *out)
{
    const ffp_pix_map *map = ffp_find_pix(f->format);
    if (map == NULL) {
        const char *name = av_get_pix_fmt_name((enum AVPixelFormat)f->format);
        ffp_set_error(dec, "ffmpeg %s (decoder %s): pixel format %s (%d) is not "
                      "supported by the MediaKit plugin ABI",
                      dec->codec->name, dec->ctx->codec->name,
                      name != NULL ? name : "unknown", f->format);
        return MK_EUNSUPPORTED;
    }
    if (f->width <= 0 || f->height <= 0) {
        ffp_set_error(dec, "ffmpeg %s: decoder returned a %dx%d frame",
                      dec->codec->name, f->width, f->height);
        return MK_EFAIL;
    }
    for (int i = 0; i < map->planes; i++) {
        if (f->data[i] == NULL) {
            ffp_set_error(dec, "ffmpeg %s: frame plane %d is missing", dec->codec->name, i);
            return MK_EFAIL;
        }
        out->planes[i] = f->data[i];
        out->strides[i] = f->linesize[i];
    }
    out->plane_count = map->planes;
    out->format = map->mk;
    out->width = f->width;
    out->height = f->height;
    if (f->color_range == AVCOL_RANGE_MPEG)
        out->color_range = 1;
    else if (f->color_range == AVCOL_RANGE_JPEG || map->full_range)
        out->color_range = 2;
    else
        out->color_range = 0;
    /* FFmpeg's AVColorPrimaries / AVColorTransferCharacteristic / AVColorSpace
     * values are the ISO/IEC 23091-4 (H.273) code points. */
    out->color_primaries = (int32_t)f->color_primaries;
    out->color_trc = (int32_t)f->color_trc;
    out->color_space = (int32_t)f->colorspace;
    if (f->sample_aspect_ratio.num > 0 && f->sample_aspect_ratio.den > 0) {
        out->sar_num = f->sample_aspect_ratio.num;
        out->sar_den = f->sample_aspect_ratio.den;
    } else {
        out->sar_num = 0;
        out->sar_den = 1;
    }
    if (out->struct_size >= MKP_END_OF(mk_plugin_frame, chroma_location))
        out->chroma_location = (int32_t)f->chroma_location;
    return MK_OK;
}

static int ffp_fill_audio(ffp_decoder *dec, const AVFrame *f, mk_plugin_frame *out)
{
    int32_t format = ffp_map_sample_fmt(f->format);
    if (format == 0) {
        const char *name = av_get_sample_fmt_name((enum AVSampleFormat)f->format);
        ffp_set_error(dec, "ffmpeg %s (decoder %s): sample format %s (%d) is not "
                      "supported by the MediaKit plugin ABI",
                      dec->codec->name, dec->ctx->codec->name,
                      name != NULL ? name : "unknown", f->format);
        return MK_EUNSUPPORTED;
    }
    int channels = f->ch_layout.nb_channels;
    int bps = av_get_bytes_per_sample((enum AVSampleFormat)f->format);
    if (channels <= 0 || f->sample_rate <= 0 || f->nb_samples < 0 || bps <= 0 ||
        f->extended_data == NULL) {
        ffp_set_error(dec, "ffmpeg %s: decoder returned an audio frame with %d "
                      "channels, %d Hz, %d samples",
                      dec->codec->name, channels, f->sample_rate, f->nb_samples);
        return MK_EFAIL;
    }
    int planar = av_sample_fmt_is_planar((enum AVSampleFormat)f->format);
    int planes = planar ? channels : 1;
    int max_planes = (int)(sizeof(out->planes) / sizeof(out->planes[0]));
    if (planes > max_planes) {
        ffp_set_error(dec, "ffmpeg %s: %d-channel planar audio (%s) needs %d planes; "
                      "the plugin ABI frame has %d",
                      dec->codec->name, channels,
                      av_get_sample_fmt_name((enum AVSampleFormat)f->format),
                      planes, max_planes);
        return MK_EUNSUPPORTED;
    }
    int64_t stride = (int64_t)f->nb_samples * bps * (planar ? 1 : channels);
    for (int i = 0; i < planes; i++) {
        /* extended_data == data for <= AV_NUM_DATA_POINTERS planes */
        if (f->extended_data[i] == NULL) {
            ffp_set_error(dec, "ffmpeg %s: audio plane %d is missing", dec->codec->name, i);
            return MK_EFAIL;
        }
        out->planes[i] = f->extended_data[i];
        out->strides[i] = stride;
    }
    out->plane_count = planes;
    out->format = format;
    out->sample_rate = f->sample_rate;
    out->channels = channels;
    out->channel_mask = 0;
    if (f->ch_layout.order == AV_CHANNEL_ORDER_NATIVE) {
        /* FFmpeg's first 18 channel bits are the WAVE speaker bits; any other
         * bit (stereo downmix, wide, surround direct, LFE2 ...) has no WAVE
         * equivalent, so such a layout is reported as unknown. */
        uint64_t mask = f->ch_layout.u.mask;
        if ((mask & ~(uint64_t)0x3FFFF) == 0)
            out->channel_mask = mask;
    }
    out->nb_samples = f->nb_samples;
    return MK_OK;
}

static int32_t ffp_receive_frame(void *decoder, mk_plugin_frame *frame)
{
    ffp_decoder *dec = decoder;
    if (dec == NULL || frame == NULL)
        return MK_EINVAL;
    if (frame->struct_size < FFP_FRAME_MIN_SIZE) {
        ffp_set_error(dec, "ffmpeg %s: receive_frame: frame struct_size %u < %zu",
                      dec->codec->name, frame->struct_size, (size_t)FFP_FRAME_MIN_SIZE);
        return MK_EINVAL;
    }

    for (;;) {
        if (dec->spare == NULL) {
            dec->spare = av_frame_alloc();
            if (dec->spare == NULL) {
                ffp_set_error(dec, "ffmpeg %s: receive_frame: out of memory",
                              dec->codec->name);
                return MK_ENOMEM;
            }
        }
        AVFrame *f = dec->spare;
        int ret = avcodec_receive_frame(dec->ctx, f);
        if (ret < 0)
            return ffp_fail_av(dec, "receive_frame", ret);
        if (f->flags & AV_FRAME_FLAG_DISCARD) {
            /* from a packet sent with MK_PACKET_FLAG_DISCARD */
            av_frame_unref(f);
            continue;
        }

        mk_plugin_frame out;
        memset(&out, 0, sizeof(out));
        out.struct_size = frame->struct_size < sizeof(out) ? frame->struct_size : (uint32_t)sizeof(out);
        out.media_type = dec->codec->media_type;
        int status = dec->codec->media_type == MK_MEDIA_VIDEO
                         ? ffp_repack(dec, f)
                         : MK_OK;
        if (status == MK_OK)
            status = dec->codec->media_type == MK_MEDIA_VIDEO
                         ? ffp_fill_video(dec, f, &out)
                         : ffp_fill_audio(dec, f, &out);
        if (status != MK_OK) {
            av_frame_unref(f); /* this frame is dropped; the next call goes on */
            return status;
        }

        int64_t pts = f->best_effort_timestamp;
        if (pts == AV_NOPTS_VALUE)
            pts = f->pts;
        out.pts = pts == AV_NOPTS_VALUE ? MK_NOPTS_VALUE : pts;
#if LIBAVUTIL_VERSION_INT >= AV_VERSION_INT(57, 30, 100)
        int64_t duration = f->duration;
#else
        int64_t duration = f->pkt_duration;
#endif
        if (duration <= 0 && out.media_type == MK_MEDIA_AUDIO &&
            f->nb_samples > 0 && f->sample_rate > 0 &&
            dec->ctx->pkt_timebase.num > 0 && dec->ctx->pkt_timebase.den > 0)
            duration = av_rescale_q(f->nb_samples, (AVRational){ 1, f->sample_rate },
                                    dec->ctx->pkt_timebase);
        out.duration = duration > 0 ? duration : 0;
#ifdef AV_FRAME_FLAG_KEY
        int key = (f->flags & AV_FRAME_FLAG_KEY) != 0;
#else
        int key = f->key_frame != 0;
#endif
        out.flags = key ? MK_PACKET_FLAG_KEY : 0;
        out.release = ffp_release_frame;
        out.release_opaque = f;
        dec->spare = NULL; /* now owned by the host until release() */

        size_t n = frame->struct_size < sizeof(out) ? frame->struct_size : sizeof(out);
        memcpy(frame, &out, n);
        return MK_OK;
    }
}

static void ffp_flush(void *decoder)
{
    ffp_decoder *dec = decoder;
    if (dec == NULL)
        return;
    avcodec_flush_buffers(dec->ctx);
}

static void ffp_free(ffp_decoder *dec)
{
    if (dec == NULL)
        return;
    avcodec_free_context(&dec->ctx); /* also frees the extradata copy */
    av_packet_free(&dec->packet);
    av_frame_free(&dec->spare);
    sws_freeContext(dec->sws);
    free(dec);
}

static void ffp_destroy(void *decoder)
{
    ffp_free(decoder);
}

static const char *ffp_last_error(void *decoder)
{
    ffp_decoder *dec = decoder;
    if (dec == NULL)
        return "ffmpeg: NULL decoder";
    return dec->last_error;
}

static const mk_plugin_decoder_vtable ffp_vtable = {
    sizeof(mk_plugin_decoder_vtable),
    ffp_send_packet,
    ffp_receive_frame,
    ffp_flush,
    ffp_destroy,
    ffp_last_error,
};

/* The config's codec_tag (ABI 2.5) as libavcodec's number: four characters, each printable or
 * written "[N]" (av_fourcc_make_string's form, which the demuxer side uses); 0 for anything else
 * (none, a WAVE "0x0001" or MPEG-TS "0x1b" number, a Matroska codec ID) and for a config
 * without the field. */
static unsigned ffp_codec_tag(const mk_plugin_codec_config *config)
{
    if (config->struct_size < MKP_END_OF(mk_plugin_codec_config, codec_tag) || config->codec_tag == NULL)
        return 0;
    const char *p = config->codec_tag;
    if (p[0] == '0' && p[1] == 'x')
        return 0; /* a number the host writes in hex, not a FourCC */
    unsigned tag = 0;
    for (int i = 0; i < 4; i++) {
        unsigned byte;
        if (*p == '[') {
            char *end = NULL;
            unsigned long n = strtoul(p + 1, &end, 10);
            if (end == p + 1 || *end != ']' || n > 255)
                return 0;
            byte = (unsigned)n;
            p = end + 1;
        } else if (*p >= 0x20 && *p < 0x7f) {
            byte = (unsigned char)*p++;
        } else {
            return 0;
        }
        tag |= byte << (8 * i);
    }
    return *p == '\0' ? tag : 0;
}

/* Every backend's create: the backend is the one of config->codec (the host asks a backend
 * for its own codec; a name this plugin does not list is refused like a wrong one). */
static int32_t ffp_create(const mk_plugin_codec_config *config, void **decoder,
                          const mk_plugin_decoder_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    const ffp_codec *codec = ffp_find_codec(config != NULL ? config->codec : NULL);
    const char *name = codec != NULL ? codec->name : config != NULL && config->codec != NULL ? config->codec : "?";
    char who[64];
    snprintf(who, sizeof(who), "ffmpeg %s", name);
    int32_t checked = mkp_check_create(who, config, decoder, vtable, errbuf, errbuf_size, FFP_CONFIG_MIN_SIZE,
                                       codec != NULL ? codec->name : "", codec != NULL ? codec->media_type : 0);
    if (checked != MK_OK)
        return checked;
    if (codec == NULL) {
        ffp_write_error(errbuf, errbuf_size, "%s: create: asked to decode codec \"%s\"", who, name);
        return MK_EINVAL;
    }
    if (config->extradata_size > (size_t)(INT_MAX - AV_INPUT_BUFFER_PADDING_SIZE)) {
        ffp_write_error(errbuf, errbuf_size,
                        "ffmpeg %s: create: extradata of %zu bytes is too large",
                        codec->name, config->extradata_size);
        return MK_EINVAL;
    }

    ffp_decoder *dec = calloc(1, sizeof(*dec));
    if (dec == NULL) {
        ffp_write_error(errbuf, errbuf_size, "ffmpeg %s: create: out of memory", codec->name);
        return MK_ENOMEM;
    }
    dec->codec = codec;
    dec->ctx = avcodec_alloc_context3(codec->decoder);
    dec->packet = av_packet_alloc();
    if (dec->ctx == NULL || dec->packet == NULL) {
        ffp_free(dec);
        ffp_write_error(errbuf, errbuf_size, "ffmpeg %s: create: out of memory", codec->name);
        return MK_ENOMEM;
    }
    AVCodecContext *ctx = dec->ctx;

    if (config->extradata_size > 0) {
        ctx->extradata = av_mallocz(config->extradata_size + AV_INPUT_BUFFER_PADDING_SIZE);
        if (ctx->extradata == NULL) {
            ffp_free(dec);
            ffp_write_error(errbuf, errbuf_size,
                            "ffmpeg %s: create: out of memory copying %zu bytes of extradata",
                            codec->name, config->extradata_size);
            return MK_ENOMEM;
        }
        memcpy(ctx->extradata, config->extradata, config->extradata_size);
        ctx->extradata_size = (int)config->extradata_size;
    }
    if (config->time_base_num > 0 && config->time_base_den > 0)
        ctx->pkt_timebase = (AVRational){ config->time_base_num, config->time_base_den };
    if (codec->media_type == MK_MEDIA_VIDEO) {
        if (config->width > 0 && config->height > 0) {
            ctx->width = config->width;
            ctx->height = config->height;
        }
        /* The reorder depth the container shows (as FFmpeg's demuxers set
         * AVCodecParameters.video_delay). Without it, H.264 streams that lack
         * VUI bitstream_restriction can lose a frame when the decoder
         * discovers the reordering late. Appended field: check struct_size. */
        if (config->struct_size >= MKP_END_OF(mk_plugin_codec_config, video_delay) &&
            config->video_delay > 0)
            ctx->has_b_frames = config->video_delay < 16 ? config->video_delay : 16;
    } else {
        if (config->sample_rate > 0)
            ctx->sample_rate = config->sample_rate;
        if (config->channels > 0)
            av_channel_layout_default(&ctx->ch_layout, config->channels);
        if (config->block_align > 0)
            ctx->block_align = config->block_align;
    }
    if (config->bits_per_coded_sample > 0)
        ctx->bits_per_coded_sample = config->bits_per_coded_sample;
    ctx->codec_tag = ffp_codec_tag(config);
    /* Opus pre-skip stays in the output: the host trims (see the top). */
    if (strcmp(codec->name, "opus") == 0)
        ctx->flags2 |= AV_CODEC_FLAG2_SKIP_MANUAL;
    /* Same threading as the ffmpeg tool ("threads auto"); libavcodec's
     * threaded decoders produce bit-identical output for any thread count. */
    ctx->thread_count = config->thread_count > 0 ? config->thread_count : 0;
    ctx->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;

    int ret = avcodec_open2(ctx, codec->decoder, NULL);
    if (ret < 0) {
        char text[AV_ERROR_MAX_STRING_SIZE + 32];
        if (av_strerror(ret, text, sizeof(text)) < 0)
            snprintf(text, sizeof(text), "error %d", ret);
        int status = ffp_map_averror(ret);
        if (status == MK_EAGAIN || status == MK_EOF)
            status = MK_EFAIL;
        ffp_write_error(errbuf, errbuf_size,
                        "ffmpeg %s (decoder %s): avcodec_open2 failed: %s",
                        codec->name, codec->decoder->name, text);
        ffp_free(dec);
        return status;
    }

    *decoder = dec;
    *vtable = &ffp_vtable;
    return MK_OK;
}
