/*
 * ffmpeg_video_encoder.c — the FFmpeg plugin's video encoders (MK_PLUGIN_ENCODER_FACTORY, plugin
 * ABI 2.3): every video encoder av_codec_iterate() finds in the libavcodec loaded (libx264,
 * libx265, libvpx-vp9, libaom-av1, libsvtav1, mpeg4, mjpeg, ffv1 ...) that takes a pixel format
 * the ABI has, one backend each, named after the encoder ("libx264") and listed under its codec
 * ("h264"). ffmpeg_encoder.c appends them to the factory after the audio encoders.
 *
 * Priorities: the encoder avcodec_find_encoder() gives for the codec (the one `ffmpeg -c:v h264`
 * picks) 110, other software encoders 100, hardware ones (AV_CODEC_CAP_HARDWARE, which need a
 * device) 50.
 *
 * Each encoder is opened as the ffmpeg tool (5.1) opens it for `-c:v NAME [-preset P] [-crf C |
 * -qp Q | -b:v B] [-profile:v X] [-g N] [-bf N] [-threads N]` from constant-rate input into MP4,
 * so that the same settings give the same bitstream: time_base = 1/frame rate and framerate set
 * (ffmpeg's CFR choice), pix_fmt, size, sample aspect ratio and the colour fields of the
 * frames, AV_CODEC_FLAG_GLOBAL_HEADER (the parameter sets go into extradata, the magic cookie,
 * not into the packets), and preset / crf / qp / profile handed to avcodec_open2 as the private
 * options ffmpeg passes them as. An option the encoder does not know is an error naming it (as
 * ffmpeg's "Unrecognized option").
 *
 * Ownership
 *   - Backends, pixel format lists and vtable: static storage, filled by ffv_init_backends().
 *   - create(): config (and its preset / profile strings) borrowed for the call. On failure
 *     nothing stays allocated and errbuf says why.
 *   - send_frame(): the frame's planes are borrowed for the call: the picture is copied into an
 *     AVFrame libavcodec keeps; or, when the host offers them (mk_plugin_frame.retain, 2.5) and
 *     they are laid out as libavcodec's own, wrapped in an AVBuffer that holds one retain of the
 *     host's frame and releases it when libavcodec lets go (no copy, as the ffmpeg tool passes
 *     decoded pictures).
 *   - receive_packet(): the packet's bytes are the instance's AVPacket, valid until the next
 *     call on the instance.
 *   - get_info(): extradata points into the AVCodecContext, valid until the next call.
 */
#include "ffmpeg_internal.h"

#include <libavutil/imgutils.h>
#include <libavutil/opt.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/** The most video encoders listed (create() needs one trampoline per backend). */
#define FFV_MAX 160
/** Pixel formats listed per encoder at most, plus the terminator. */
#define FFV_FORMATS_MAX 16

typedef struct ffv_codec {
    const AVCodec *encoder;
    int32_t formats[FFV_FORMATS_MAX + 1];
} ffv_codec;

static ffv_codec ffv_codecs[FFV_MAX];
static uint32_t ffv_count;

static int32_t ffv_create(uint32_t index, const mk_plugin_encoder_config *config, void **encoder,
                          const mk_plugin_encoder_vtable **vtable, char *errbuf, size_t errbuf_size);

/* One create() per backend slot: the ABI's create has no argument saying which backend. */
#define FFV_TRAMPOLINE(i)                                                                              \
    static int32_t ffv_create_##i(const mk_plugin_encoder_config *c, void **e,                         \
                                  const mk_plugin_encoder_vtable **v, char *b, size_t n)               \
    {                                                                                                  \
        return ffv_create(i, c, e, v, b, n);                                                           \
    }
#define FFV_T10(d) FFV_TRAMPOLINE(d##0) FFV_TRAMPOLINE(d##1) FFV_TRAMPOLINE(d##2) FFV_TRAMPOLINE(d##3) \
    FFV_TRAMPOLINE(d##4) FFV_TRAMPOLINE(d##5) FFV_TRAMPOLINE(d##6) FFV_TRAMPOLINE(d##7)                \
    FFV_TRAMPOLINE(d##8) FFV_TRAMPOLINE(d##9)
FFV_TRAMPOLINE(0) FFV_TRAMPOLINE(1) FFV_TRAMPOLINE(2) FFV_TRAMPOLINE(3) FFV_TRAMPOLINE(4)
FFV_TRAMPOLINE(5) FFV_TRAMPOLINE(6) FFV_TRAMPOLINE(7) FFV_TRAMPOLINE(8) FFV_TRAMPOLINE(9)
FFV_T10(1) FFV_T10(2) FFV_T10(3) FFV_T10(4) FFV_T10(5) FFV_T10(6) FFV_T10(7) FFV_T10(8) FFV_T10(9)
FFV_T10(10) FFV_T10(11) FFV_T10(12) FFV_T10(13) FFV_T10(14) FFV_T10(15)
#undef FFV_T10
#undef FFV_TRAMPOLINE

typedef int32_t (*ffv_create_fn)(const mk_plugin_encoder_config *, void **, const mk_plugin_encoder_vtable **,
                                 char *, size_t);
#define FFV_F10(d) ffv_create_##d##0, ffv_create_##d##1, ffv_create_##d##2, ffv_create_##d##3, ffv_create_##d##4, \
    ffv_create_##d##5, ffv_create_##d##6, ffv_create_##d##7, ffv_create_##d##8, ffv_create_##d##9,
static const ffv_create_fn ffv_create_fns[FFV_MAX] = {
    ffv_create_0, ffv_create_1, ffv_create_2, ffv_create_3, ffv_create_4,
    ffv_create_5, ffv_create_6, ffv_create_7, ffv_create_8, ffv_create_9,
    FFV_F10(1) FFV_F10(2) FFV_F10(3) FFV_F10(4) FFV_F10(5) FFV_F10(6) FFV_F10(7) FFV_F10(8) FFV_F10(9)
    FFV_F10(10) FFV_F10(11) FFV_F10(12) FFV_F10(13) FFV_F10(14) FFV_F10(15)
};
#undef FFV_F10

/* A video backend's empty sample format list (a 2.2 host reads it and finds nothing to send). */
static const int32_t ffv_no_samples[] = { 0 };

uint32_t ffv_init_backends(const mk_host *host, mk_plugin_encoder_backend *out, uint32_t room)
{
    uint32_t count = 0;
    void *it = NULL;
    const AVCodec *c;
    while ((c = av_codec_iterate(&it)) != NULL) {
        if (c->type != AVMEDIA_TYPE_VIDEO || !av_codec_is_encoder(c))
            continue;
        const AVCodecDescriptor *desc = avcodec_descriptor_get(c->id);
        if (desc == NULL)
            continue;
        if (count >= room || count >= FFV_MAX) {
            mkp_log(host, MK_LOG_DEBUG, "ffmpeg: more than %u video encoders; %s is not listed", count, c->name);
            continue;
        }
        ffv_codec *v = &ffv_codecs[count];
        v->encoder = c;
        int n = 0;
        for (const enum AVPixelFormat *f = c->pix_fmts; f != NULL && *f != AV_PIX_FMT_NONE && n < FFV_FORMATS_MAX; f++) {
            const ffp_pix_map *m = ffp_find_pix(*f);
            if (m != NULL)
                v->formats[n++] = m->mk;
        }
        v->formats[n] = 0;
        if (n == 0) {
            mkp_log(host, MK_LOG_DEBUG, "ffmpeg: the %s encoder takes no pixel format the plugin ABI has", c->name);
            continue;
        }
        mk_plugin_encoder_backend *b = &out[count];
        memset(b, 0, sizeof(*b));
        b->struct_size = sizeof(*b);
        b->media_type = MK_MEDIA_VIDEO;
        b->codec = desc->name;
        b->name = c->name;
        b->priority = (c->capabilities & AV_CODEC_CAP_HARDWARE) ? 50 : avcodec_find_encoder(c->id) == c ? 110 : 100;
        b->sample_formats = ffv_no_samples;
        b->create = ffv_create_fns[count];
        b->pixel_formats = v->formats;
        count++;
    }
    ffv_count = count;
    return count;
}

/* ------------------------------------------------------------------------ */
/* Encoder instance                                                          */
/* ------------------------------------------------------------------------ */

typedef struct ffv_encoder {
    AVCodecContext *ctx;
    AVPacket *packet;          /* the packet handed out last (valid until the next call) */
    const AVCodec *codec;
    char who[64];              /* "ffmpeg libx264 encoder": the prefix of its messages */
    AVRational in_time_base;   /* of the frames sent */
    int64_t frame_ticks;       /* one frame in ctx->time_base when the frame rate is known, else 0 */
    int draining;
    AVFrame *input;            /* the picture buffers of the last send_frame, reused when the
                                  encoder no longer holds them (no 3 MB allocation, page
                                  faults and zeroing per 1080p picture) */
    char last_error[FFP_ERROR_SIZE];
} ffv_encoder;

static int32_t ffv_fail_av(ffv_encoder *enc, const char *what, int err)
{
    return ffp_encoder_failure(enc->last_error, sizeof(enc->last_error), enc->who, what, err);
}

static int32_t ffv_get_info(void *encoder, mk_plugin_encoder_info *info)
{
    ffv_encoder *enc = encoder;
    if (enc == NULL || info == NULL || info->struct_size < sizeof(uint32_t))
        return MK_EINVAL;
    const AVCodecContext *ctx = enc->ctx;
    mk_plugin_encoder_info own;
    memset(&own, 0, sizeof(own));
    own.struct_size = sizeof(own);
    own.bit_rate = ctx->bit_rate;
    if (ctx->extradata_size > 0) {
        own.extradata = ctx->extradata;
        own.extradata_size = (size_t)ctx->extradata_size;
    }
    own.packet_time_base_num = ctx->time_base.num;
    own.packet_time_base_den = ctx->time_base.den;
    own.reorder_delay = ctx->has_b_frames;
    mkp_fill_struct(info, &own, sizeof(own));
    return MK_OK;
}

/* The host's frame, for one AVBuffer over one of its planes. */
typedef struct ffv_held {
    void (*release)(void *release_opaque);
    void *release_opaque;
} ffv_held;

static void ffv_release_host(void *opaque, uint8_t *data)
{
    (void)data;
    ffv_held *held = opaque;
    held->release(held->release_opaque);
    av_free(held);
}

/* The host's picture as a reference-counted AVFrame, without copying it (ABI 2.5: the host
 * offers its planes through mk_plugin_frame.retain): what the ffmpeg tool hands an encoder, the
 * decoder's own buffers. Only planes laid out as libavcodec lays out its own (every plane and
 * stride 64-byte aligned) are taken; NULL means copy (not offered, another alignment, or out
 * of memory). Each plane's AVBuffer holds one retain of the host's frame; libavcodec's last
 * unref of it releases that, on whatever thread that happens. */
static AVFrame *ffv_borrow(ffv_encoder *enc, const mk_plugin_frame *frame, int planes, const AVPixFmtDescriptor *desc)
{
    if (frame->struct_size < MKP_END_OF(mk_plugin_frame, retain) || frame->retain == NULL || frame->release == NULL)
        return NULL;
    for (int i = 0; i < planes; i++)
        if (((uintptr_t)frame->planes[i] & 63) != 0 || (frame->strides[i] & 63) != 0)
            return NULL;
    AVFrame *f = av_frame_alloc();
    if (f == NULL)
        return NULL;
    f->format = enc->ctx->pix_fmt;
    f->width = enc->ctx->width;
    f->height = enc->ctx->height;
    for (int i = 0; i < planes; i++) {
        int rows = i == 0 || (desc->flags & AV_PIX_FMT_FLAG_PAL) ? f->height : AV_CEIL_RSHIFT(f->height, desc->log2_chroma_h);
        ffv_held *held = av_malloc(sizeof(*held));
        if (held != NULL) {
            held->release = frame->release;
            held->release_opaque = frame->release_opaque;
            f->buf[i] = av_buffer_create(frame->planes[i], (size_t)frame->strides[i] * (size_t)rows, ffv_release_host, held,
                                         AV_BUFFER_FLAG_READONLY);
        }
        if (f->buf[i] == NULL) {
            av_free(held);
            av_frame_free(&f);   /* releases the planes retained so far */
            return NULL;
        }
        frame->retain(frame->release_opaque);
        f->data[i] = frame->planes[i];
        f->linesize[i] = (int)frame->strides[i];
    }
    return f;
}

static int32_t ffv_send_frame(void *encoder, const mk_plugin_frame *frame)
{
    ffv_encoder *enc = encoder;
    if (enc == NULL)
        return MK_EINVAL;
    enc->last_error[0] = '\0';
    if (frame == NULL)
        return ffp_encoder_drain(enc->ctx, &enc->draining, enc->last_error, sizeof(enc->last_error), enc->who);
    if (enc->draining) {
        mkp_write_error(enc->last_error, sizeof(enc->last_error), "ffmpeg %s encoder: send_frame after draining",
                        enc->codec->name);
        return MK_EOF;
    }
    const ffp_pix_map *map = ffp_find_mk_pix(frame->format);
    if (frame->struct_size < FFP_FRAME_MIN_SIZE || frame->media_type != MK_MEDIA_VIDEO || map == NULL ||
        map->av != enc->ctx->pix_fmt || frame->width != enc->ctx->width || frame->height != enc->ctx->height) {
        mkp_write_error(enc->last_error, sizeof(enc->last_error),
                        "ffmpeg %s encoder: send_frame: a picture of format %d, %dx%d; the encoder was opened for %s, %dx%d",
                        enc->codec->name, frame->format, frame->width, frame->height,
                        av_get_pix_fmt_name(enc->ctx->pix_fmt), enc->ctx->width, enc->ctx->height);
        return MK_EINVAL;
    }
    const AVPixFmtDescriptor *desc = av_pix_fmt_desc_get(enc->ctx->pix_fmt);
    if (frame->plane_count < map->planes) {
        mkp_write_error(enc->last_error, sizeof(enc->last_error), "ffmpeg %s encoder: send_frame: %d planes for %d",
                        enc->codec->name, frame->plane_count, map->planes);
        return MK_EINVAL;
    }
    for (int i = 0; i < map->planes; i++) {
        int row = av_image_get_linesize(enc->ctx->pix_fmt, enc->ctx->width, i);
        if (frame->planes[i] == NULL || row < 0 || frame->strides[i] < row || frame->strides[i] > INT_MAX) {
            mkp_write_error(enc->last_error, sizeof(enc->last_error),
                            "ffmpeg %s encoder: send_frame: plane %d is NULL or its stride %lld is below %d bytes",
                            enc->codec->name, i, (long long)frame->strides[i], row);
            return MK_EINVAL;
        }
    }
    int ret = 0;
    AVFrame *f = ffv_borrow(enc, frame, map->planes, desc);
    int borrowed = f != NULL;
    if (!borrowed) {
        /* The last picture's buffers when only this encoder instance refers to them (the
         * encoder copied the picture, as libx264, libx265, libvpx and SVT-AV1 do, or gave it
         * back); else new ones (an encoder that keeps references to its input keeps them
         * alive). */
        f = enc->input;
        enc->input = NULL;
        if (f != NULL && !av_frame_is_writable(f))
            av_frame_free(&f);
        if (f == NULL) {
            f = av_frame_alloc();
            if (f == NULL)
                return MK_ENOMEM;
            f->format = enc->ctx->pix_fmt;
            f->width = enc->ctx->width;
            f->height = enc->ctx->height;
            ret = av_frame_get_buffer(f, 0);
            if (ret < 0) {
                av_frame_free(&f);
                return ffv_fail_av(enc, "allocating a picture", ret);
            }
        }
        for (int i = 0; i < map->planes; i++) {
            int row = av_image_get_linesize(enc->ctx->pix_fmt, f->width, i);
            int rows = i == 0 ? f->height : AV_CEIL_RSHIFT(f->height, desc->log2_chroma_h);
            for (int y = 0; y < rows; y++)
                memcpy(f->data[i] + (ptrdiff_t)y * f->linesize[i], frame->planes[i] + (ptrdiff_t)y * frame->strides[i], (size_t)row);
        }
    }
    f->pts = frame->pts == MK_NOPTS_VALUE ? AV_NOPTS_VALUE
           : av_rescale_q_rnd(frame->pts, enc->in_time_base, enc->ctx->time_base, AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
    f->pict_type = (frame->flags & MK_FRAME_FLAG_FORCE_KEY) ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
    f->sample_aspect_ratio = enc->ctx->sample_aspect_ratio;
    f->color_range = enc->ctx->color_range;
    f->color_primaries = enc->ctx->color_primaries;
    f->color_trc = enc->ctx->color_trc;
    f->colorspace = enc->ctx->colorspace;
    f->chroma_location = enc->ctx->chroma_sample_location;
    ret = avcodec_send_frame(enc->ctx, f);
    if (borrowed)
        av_frame_free(&f);   /* the host's picture: libavcodec holds its own reference if it kept it */
    else
        enc->input = f;      /* kept: reused by the next call when the encoder let go of it */
    if (ret == AVERROR(EAGAIN))
        return MK_EAGAIN;
    return ret < 0 ? ffv_fail_av(enc, "encoding a picture", ret) : MK_OK;
}

static int32_t ffv_receive_packet(void *encoder, mk_plugin_encoded_packet *packet)
{
    ffv_encoder *enc = encoder;
    if (enc == NULL || packet == NULL || packet->struct_size < MKP_END_OF(mk_plugin_encoded_packet, duration))
        return MK_EINVAL;
    int32_t status = ffp_encoder_receive(enc->ctx, enc->packet, enc->last_error, sizeof(enc->last_error), enc->who);
    if (status != MK_OK)
        return status;
    mk_plugin_encoded_packet own;
    memset(&own, 0, sizeof(own));
    own.struct_size = sizeof(own);
    own.flags = (enc->packet->flags & AV_PKT_FLAG_KEY) ? MK_PACKET_FLAG_KEY : 0;
    own.data = enc->packet->data;
    own.size = (size_t)enc->packet->size;
    own.pts = enc->packet->pts == AV_NOPTS_VALUE ? MK_NOPTS_VALUE : enc->packet->pts;
    own.dts = enc->packet->dts == AV_NOPTS_VALUE ? own.pts : enc->packet->dts;
    own.duration = enc->packet->duration > 0 ? enc->packet->duration : enc->frame_ticks;
    mkp_fill_struct(packet, &own, sizeof(own));
    return MK_OK;
}

static void ffv_destroy(void *encoder)
{
    ffv_encoder *enc = encoder;
    if (enc == NULL)
        return;
    avcodec_free_context(&enc->ctx);
    av_packet_free(&enc->packet);
    av_frame_free(&enc->input);
    free(enc);
}

static const char *ffv_last_error(void *encoder)
{
    ffv_encoder *enc = encoder;
    return enc != NULL ? enc->last_error : "";
}

static const mk_plugin_encoder_vtable ffv_vtable = {
    sizeof(mk_plugin_encoder_vtable), ffv_get_info, ffv_send_frame, ffv_receive_packet, ffv_destroy, ffv_last_error,
};

/* Sets `name` in the options handed to avcodec_open2 (as the ffmpeg tool hands `-name value`). */
static int ffv_dict_number(AVDictionary **opts, const char *name, double value)
{
    char text[64];
    snprintf(text, sizeof(text), "%.17g", value);
    return av_dict_set(opts, name, text, 0);
}

static int32_t ffv_create(uint32_t index, const mk_plugin_encoder_config *config, void **encoder,
                          const mk_plugin_encoder_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    if (errbuf != NULL && errbuf_size > 0)
        errbuf[0] = '\0';
    if (config == NULL || encoder == NULL || vtable == NULL) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg video encoder: create: a NULL argument");
        return MK_EINVAL;
    }
    *encoder = NULL;
    *vtable = NULL;
    if (index >= ffv_count) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg video encoder: create: backend %u is not listed", index);
        return MK_EINVAL;
    }
    const ffv_codec *codec = &ffv_codecs[index];
    const char *who = codec->encoder->name;
    if (config->struct_size < MKP_END_OF(mk_plugin_encoder_config, chroma_location)) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg %s encoder: create: config struct_size %u is short of the video "
                        "fields of plugin ABI 2.3 (%zu)", who, config->struct_size,
                        (size_t)MKP_END_OF(mk_plugin_encoder_config, chroma_location));
        return MK_EINVAL;
    }
    const AVCodecDescriptor *desc = avcodec_descriptor_get(codec->encoder->id);
    if (config->media_type != MK_MEDIA_VIDEO || config->codec == NULL || desc == NULL || strcmp(config->codec, desc->name) != 0) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg %s encoder: create: asked to encode %s codec \"%s\"", who,
                        config->media_type == MK_MEDIA_VIDEO ? "video" : "non-video", config->codec ? config->codec : "(NULL)");
        return MK_EINVAL;
    }
    int known = 0;
    for (const int32_t *f = codec->formats; *f != 0; f++)
        known |= *f == config->pixel_format;
    const ffp_pix_map *map = ffp_find_mk_pix(config->pixel_format);
    if (!known || map == NULL) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg %s encoder: pixel format %d is not one it takes", who, config->pixel_format);
        return MK_EUNSUPPORTED;
    }
    if (config->width <= 0 || config->height <= 0 || config->width > 65536 || config->height > 65536) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg %s encoder: a picture size of %dx%d", who, config->width, config->height);
        return MK_EINVAL;
    }
    int has_rate = config->frame_rate_num > 0 && config->frame_rate_den > 0;
    if (!has_rate && (config->time_base_num <= 0 || config->time_base_den <= 0)) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg %s encoder: neither a frame rate nor a time base (%d/%d)", who,
                        config->time_base_num, config->time_base_den);
        return MK_EINVAL;
    }

    ffv_encoder *enc = calloc(1, sizeof(*enc));
    if (enc == NULL) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg %s encoder: create: out of memory", who);
        return MK_ENOMEM;
    }
    enc->codec = codec->encoder;
    snprintf(enc->who, sizeof(enc->who), "ffmpeg %s encoder", who);
    enc->ctx = avcodec_alloc_context3(codec->encoder);
    enc->packet = av_packet_alloc();
    if (enc->ctx == NULL || enc->packet == NULL) {
        ffv_destroy(enc);
        mkp_write_error(errbuf, errbuf_size, "ffmpeg %s encoder: create: out of memory", who);
        return MK_ENOMEM;
    }
    AVCodecContext *ctx = enc->ctx;
    ctx->pix_fmt = map->av;
    ctx->width = config->width;
    ctx->height = config->height;
    enc->in_time_base = config->time_base_num > 0 && config->time_base_den > 0
                      ? (AVRational){ config->time_base_num, config->time_base_den }
                      : (AVRational){ config->frame_rate_den, config->frame_rate_num };
    if (has_rate) {
        /* ffmpeg 5.1 (init_output_stream_encode): time_base = 1 / frame rate, framerate set. */
        ctx->framerate = (AVRational){ config->frame_rate_num, config->frame_rate_den };
        ctx->time_base = av_inv_q(ctx->framerate);
        enc->frame_ticks = 1;
    } else {
        ctx->time_base = enc->in_time_base;
    }
    if (config->sar_num > 0 && config->sar_den > 0)
        ctx->sample_aspect_ratio = (AVRational){ config->sar_num, config->sar_den };
    ctx->color_range = config->color_range == 2 ? AVCOL_RANGE_JPEG : config->color_range == 1 ? AVCOL_RANGE_MPEG
                     : map->full_range ? AVCOL_RANGE_JPEG : AVCOL_RANGE_UNSPECIFIED;
    if (config->color_primaries > 0)
        ctx->color_primaries = (enum AVColorPrimaries)config->color_primaries;
    if (config->color_trc > 0)
        ctx->color_trc = (enum AVColorTransferCharacteristic)config->color_trc;
    if (config->color_space > 0)
        ctx->colorspace = (enum AVColorSpace)config->color_space;
    ctx->chroma_sample_location = (enum AVChromaLocation)(config->chroma_location > 0 ? config->chroma_location : 0);
    ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    ctx->thread_count = config->thread_count > 0 ? config->thread_count : 0;
    if (config->gop_size >= 0)
        ctx->gop_size = config->gop_size;
    if (config->max_b_frames >= 0)
        ctx->max_b_frames = config->max_b_frames;

    AVDictionary *opts = NULL;
    int ret = 0;
    if (config->preset != NULL && config->preset[0] != '\0')
        ret = av_dict_set(&opts, "preset", config->preset, 0);
    if (ret >= 0 && config->profile != NULL && config->profile[0] != '\0')
        ret = av_dict_set(&opts, "profile", config->profile, 0);
    switch (config->rate_control) {
    case MK_ENCODER_RC_BITRATE:
        ctx->bit_rate = config->bit_rate;
        break;
    case MK_ENCODER_RC_CRF:
        ret = ret < 0 ? ret : ffv_dict_number(&opts, "crf", config->quality);
        break;
    case MK_ENCODER_RC_QP:
        /* `-qp` where the encoder has that option (libx264, libx265 ...), else `-q:v`. */
        if (codec->encoder->priv_class != NULL &&
            av_opt_find((void *)&codec->encoder->priv_class, "qp", NULL, 0, AV_OPT_SEARCH_FAKE_OBJ) != NULL) {
            ret = ret < 0 ? ret : ffv_dict_number(&opts, "qp", config->quality);
        } else {
            ctx->flags |= AV_CODEC_FLAG_QSCALE;
            ctx->global_quality = (int)(FF_QP2LAMBDA * config->quality + 0.5);
        }
        break;
    default:
        if (config->bit_rate > 0)
            ctx->bit_rate = config->bit_rate;
        break;
    }
    if (ret >= 0)
        ret = avcodec_open2(ctx, codec->encoder, &opts);
    if (ret >= 0 && av_dict_count(opts) > 0) {
        const AVDictionaryEntry *e = av_dict_get(opts, "", NULL, AV_DICT_IGNORE_SUFFIX);
        mkp_write_error(errbuf, errbuf_size, "ffmpeg %s encoder: it has no option '%s' (asked for %s %s)", who, e->key,
                        e->key, e->value);
        av_dict_free(&opts);
        ffv_destroy(enc);
        return MK_EUNSUPPORTED;
    }
    av_dict_free(&opts);
    if (ret < 0) {
        char what[96];
        snprintf(what, sizeof(what), "avcodec_open2 failed for %s %dx%d", av_get_pix_fmt_name(ctx->pix_fmt), ctx->width,
                 ctx->height);
        int32_t status = ffp_encoder_failure(errbuf, errbuf_size, enc->who, what, ret);
        ffv_destroy(enc);
        return status;
    }
    *encoder = enc;
    *vtable = &ffv_vtable;
    return MK_OK;
}
