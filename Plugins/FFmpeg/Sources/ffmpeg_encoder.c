/*
 * ffmpeg_encoder.c — the FFmpeg plugin's encoder factory (MK_PLUGIN_ENCODER_FACTORY, plugin
 * ABI 2.1; the video encoders of ffmpeg_video_encoder.c follow the audio ones since 2.3) and
 * its audio encoders: AAC-LC from libavcodec's native "aac" encoder, FLAC and ALAC from its "flac" and
 * "alac" encoders, MP3 from "libmp3lame" when the libavcodec loaded has it, and PCM (8 to
 * 32-bit integer of either byte order, 32 and 64-bit float, A-law, mu-law: what WAV and AIFF
 * files hold) from its pcm_* encoders, which take frames of any length. An encoder the loaded libavcodec
 * lacks is omitted from the factory (the host then reports no encoder for the codec).
 *
 * Each backend is opened as the ffmpeg tool opens it for `-c:a NAME -b:a RATE` (or `-q:a Q`,
 * `-compression_level N`) into a container that wants global headers, so its packets and
 * magic cookie are the same bytes.
 *
 * Ownership
 *   - Backends and vtable: static storage.
 *   - create(): config borrowed for the call. On failure nothing stays allocated and errbuf
 *     names what the encoder accepts (rates, channel counts, bit rates).
 *   - send_frame(): the frame's planes are borrowed for the call: the samples are copied into
 *     an AVFrame libavcodec keeps.
 *   - receive_packet(): the packet's bytes are the instance's AVPacket, valid until the next
 *     call on the instance.
 *   - get_info(): extradata points into the instance (AVCodecContext.extradata, or the FLAC
 *     STREAMINFO the encoder sent with its last packet), valid until the next call.
 *
 * Timing: libavcodec's audio encoders give packets pts = input pts - initial_padding; the ABI
 * counts decoded samples from 0 with the priming included, so initial_padding is added back,
 * and it is the encoder_delay get_info() states.
 */
#include "ffmpeg_internal.h"

#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* X(MediaKit codec name, libavcodec encoder name, priority, min bit rate, max bit rate) */
#define FFE_CODECS(X)                               \
    X(aac, "aac", 100, 8000, 576000)                \
    X(flac, "flac", 100, 0, 0)                      \
    X(alac, "alac", 100, 0, 0)                      \
    X(mp3, "libmp3lame", 100, 8000, 320000)         \
    X(pcm_u8, "pcm_u8", 100, 0, 0)                  \
    X(pcm_s8, "pcm_s8", 100, 0, 0)                  \
    X(pcm_s16le, "pcm_s16le", 100, 0, 0)            \
    X(pcm_s16be, "pcm_s16be", 100, 0, 0)            \
    X(pcm_s24le, "pcm_s24le", 100, 0, 0)            \
    X(pcm_s24be, "pcm_s24be", 100, 0, 0)            \
    X(pcm_s32le, "pcm_s32le", 100, 0, 0)            \
    X(pcm_s32be, "pcm_s32be", 100, 0, 0)            \
    X(pcm_f32le, "pcm_f32le", 100, 0, 0)            \
    X(pcm_f32be, "pcm_f32be", 100, 0, 0)            \
    X(pcm_f64le, "pcm_f64le", 100, 0, 0)            \
    X(pcm_f64be, "pcm_f64be", 100, 0, 0)            \
    X(pcm_alaw, "pcm_alaw", 100, 0, 0)              \
    X(pcm_mulaw, "pcm_mulaw", 100, 0, 0)

enum {
#define FFE_ENUM(name, encoder, prio, lo, hi) FFE_IDX_##name,
    FFE_CODECS(FFE_ENUM)
#undef FFE_ENUM
    FFE_CODEC_COUNT
};

/** Rates, formats and masks are lists of up to this many entries plus the terminator. */
#define FFE_LIST_MAX 32

typedef struct ffe_codec {
    const char *name;            /* MediaKit / FFmpeg codec name */
    const char *encoder_name;    /* libavcodec encoder */
    int32_t priority;
    int64_t min_bit_rate, max_bit_rate;
    const AVCodec *encoder;      /* resolved in init; NULL if missing */
    int32_t formats[FFE_LIST_MAX + 1];
    int32_t rates[FFE_LIST_MAX + 1];
    uint64_t masks[FFE_LIST_MAX + 1];
    int max_channels;
} ffe_codec;

static int32_t ffe_create(int index, const mk_plugin_encoder_config *config, void **encoder,
                          const mk_plugin_encoder_vtable **vtable, char *errbuf, size_t errbuf_size);

#define FFE_CREATE_FN(name, encoder_name, prio, lo, hi)                                            \
    static int32_t ffe_create_##name(const mk_plugin_encoder_config *config, void **encoder,       \
                                     const mk_plugin_encoder_vtable **vtable, char *errbuf,       \
                                     size_t errbuf_size)                                           \
    {                                                                                              \
        return ffe_create(FFE_IDX_##name, config, encoder, vtable, errbuf, errbuf_size);           \
    }
FFE_CODECS(FFE_CREATE_FN)
#undef FFE_CREATE_FN

static ffe_codec ffe_codecs[FFE_CODEC_COUNT] = {
#define FFE_ENTRY(name, encoder_name, prio, lo, hi) { #name, encoder_name, prio, lo, hi, NULL, {0}, {0}, {0}, 0 },
    FFE_CODECS(FFE_ENTRY)
#undef FFE_ENTRY
};

static int32_t (*const ffe_create_fns[FFE_CODEC_COUNT])(const mk_plugin_encoder_config *, void **,
                                                        const mk_plugin_encoder_vtable **, char *, size_t) = {
#define FFE_FN(name, encoder_name, prio, lo, hi) ffe_create_##name,
    FFE_CODECS(FFE_FN)
#undef FFE_FN
};

/** Room for the video encoders ffmpeg_video_encoder.c lists after the audio ones. */
#define FFE_VIDEO_ROOM 160
static mk_plugin_encoder_backend ffe_backends[FFE_CODEC_COUNT + FFE_VIDEO_ROOM];
static uint32_t ffe_backend_count;

MKP_ENCODER_FACTORY(ffe_encoder_factory, ffe_backends, ffe_backend_count);

const mk_plugin_encoder_factory *ffe_factory(void) { return &ffe_encoder_factory; }

/* The AVSampleFormat for an MK_SAMPLES_* value, AV_SAMPLE_FMT_NONE if none. */
static enum AVSampleFormat ffe_av_sample_fmt(int32_t mk)
{
    for (int f = 0; f < AV_SAMPLE_FMT_NB; f++)
        if (ffp_map_sample_fmt(f) == mk && mk != 0)
            return (enum AVSampleFormat)f;
    return AV_SAMPLE_FMT_NONE;
}

void ffe_init_backends(const mk_host *host)
{
    uint32_t count = 0;
    for (int i = 0; i < FFE_CODEC_COUNT; i++) {
        ffe_codec *c = &ffe_codecs[i];
        c->encoder = avcodec_find_encoder_by_name(c->encoder_name);
        if (c->encoder == NULL) {
            mkp_log(host, MK_LOG_DEBUG, "ffmpeg: this libavcodec has no %s encoder (for %s)", c->encoder_name, c->name);
            continue;
        }
        int n = 0;
        for (const enum AVSampleFormat *f = c->encoder->sample_fmts; f != NULL && *f != AV_SAMPLE_FMT_NONE && n < FFE_LIST_MAX; f++)
            if (ffp_map_sample_fmt(*f) != 0)
                c->formats[n++] = ffp_map_sample_fmt(*f);
        c->formats[n] = 0;
        n = 0;
        for (const int *r = c->encoder->supported_samplerates; r != NULL && *r != 0 && n < FFE_LIST_MAX; r++)
            c->rates[n++] = *r;
        c->rates[n] = 0;
        n = 0;
        c->max_channels = 8;
        if (c->encoder->ch_layouts != NULL) {
            c->max_channels = 0;
            for (const AVChannelLayout *l = c->encoder->ch_layouts; l->nb_channels != 0 && n < FFE_LIST_MAX; l++) {
                if (l->order == AV_CHANNEL_ORDER_NATIVE)
                    c->masks[n++] = l->u.mask;
                if (l->nb_channels > c->max_channels)
                    c->max_channels = l->nb_channels;
            }
        }
        c->masks[n] = 0;
        if (c->formats[0] == 0)
            continue; /* no format the ABI can send */
        mk_plugin_encoder_backend *b = &ffe_backends[count++];
        memset(b, 0, sizeof(*b));
        b->struct_size = sizeof(*b);
        b->media_type = MK_MEDIA_AUDIO;
        b->codec = c->name;
        b->name = "ffmpeg";
        b->priority = c->priority;
        b->sample_formats = c->formats;
        b->sample_rates = c->rates[0] != 0 ? c->rates : NULL;
        b->min_sample_rate = c->rates[0] != 0 ? 0 : 1;
        b->max_sample_rate = c->rates[0] != 0 ? 0 : (strcmp(c->name, "flac") == 0 ? 655350 : 0);
        b->max_channels = c->max_channels;
        b->channel_masks = n > 0 ? c->masks : NULL;
        b->min_bit_rate = c->min_bit_rate;
        b->max_bit_rate = c->max_bit_rate;
        b->create = ffe_create_fns[i];
    }
    count += ffv_init_backends(host, &ffe_backends[count], FFE_VIDEO_ROOM);
    ffe_backend_count = count;
}

/* ------------------------------------------------------------------------ */
/* Encoder instance                                                          */
/* ------------------------------------------------------------------------ */

typedef struct ffe_encoder {
    AVCodecContext *ctx;
    AVPacket *packet;          /* the packet handed out last (valid until the next call) */
    AVFrame *frame;            /* reused for each send_frame */
    const ffe_codec *codec;
    uint8_t *new_extradata;    /* a cookie the encoder sent with a packet (FLAC STREAMINFO) */
    size_t new_extradata_size;
    int draining;
    char last_error[FFP_ERROR_SIZE];
} ffe_encoder;

/* "ffmpeg aac (encoder aac)": the prefix of the instance's messages. */
static void ffe_who(const ffe_encoder *enc, char *who, size_t size)
{
    snprintf(who, size, "ffmpeg %s (encoder %s)", enc->codec->name, enc->codec->encoder_name);
}

static int32_t ffe_fail_av(ffe_encoder *enc, const char *what, int err)
{
    char who[96];
    ffe_who(enc, who, sizeof(who));
    return ffp_encoder_failure(enc->last_error, sizeof(enc->last_error), who, what, err);
}

static int32_t ffe_get_info(void *encoder, mk_plugin_encoder_info *info)
{
    ffe_encoder *enc = encoder;
    if (enc == NULL || info == NULL || info->struct_size < sizeof(uint32_t))
        return MK_EINVAL;
    const AVCodecContext *ctx = enc->ctx;
    mk_plugin_encoder_info own;
    memset(&own, 0, sizeof(own));
    own.struct_size = sizeof(own);
    own.frame_size = (enc->codec->encoder->capabilities & AV_CODEC_CAP_VARIABLE_FRAME_SIZE) ? 0 : ctx->frame_size;
    own.encoder_delay = ctx->initial_padding;
    own.sample_rate = ctx->sample_rate;
    own.channels = ctx->ch_layout.nb_channels;
    own.bit_rate = ctx->bit_rate;
    if (enc->new_extradata != NULL) {
        own.extradata = enc->new_extradata;
        own.extradata_size = enc->new_extradata_size;
    } else if (ctx->extradata_size > 0) {
        own.extradata = ctx->extradata;
        own.extradata_size = (size_t)ctx->extradata_size;
    }
    own.packet_time_base_num = 1;
    own.packet_time_base_den = ctx->sample_rate;
    mkp_fill_struct(info, &own, sizeof(own));
    return MK_OK;
}

static int32_t ffe_send_frame(void *encoder, const mk_plugin_frame *frame)
{
    ffe_encoder *enc = encoder;
    if (enc == NULL)
        return MK_EINVAL;
    enc->last_error[0] = '\0';
    if (frame == NULL) {
        char who[96];
        ffe_who(enc, who, sizeof(who));
        return ffp_encoder_drain(enc->ctx, &enc->draining, enc->last_error, sizeof(enc->last_error), who);
    }
    if (enc->draining) {
        mkp_write_error(enc->last_error, sizeof(enc->last_error), "ffmpeg %s: send_frame after draining", enc->codec->name);
        return MK_EOF;
    }
    if (frame->struct_size < FFP_FRAME_MIN_SIZE || frame->media_type != MK_MEDIA_AUDIO ||
        frame->channels != enc->ctx->ch_layout.nb_channels || frame->sample_rate != enc->ctx->sample_rate ||
        ffe_av_sample_fmt(frame->format) != enc->ctx->sample_fmt || frame->nb_samples <= 0) {
        mkp_write_error(enc->last_error, sizeof(enc->last_error),
                        "ffmpeg %s: send_frame: a frame of format %d, %d Hz, %d channels, %d samples; the encoder was "
                        "opened for %s, %d Hz, %d channels",
                        enc->codec->name, frame->format, frame->sample_rate, frame->channels, frame->nb_samples,
                        av_get_sample_fmt_name(enc->ctx->sample_fmt), enc->ctx->sample_rate,
                        enc->ctx->ch_layout.nb_channels);
        return MK_EINVAL;
    }
    AVFrame *f = enc->frame;
    av_frame_unref(f);
    f->format = enc->ctx->sample_fmt;
    f->sample_rate = enc->ctx->sample_rate;
    f->nb_samples = frame->nb_samples;
    int ret = av_channel_layout_copy(&f->ch_layout, &enc->ctx->ch_layout);
    if (ret >= 0)
        ret = av_frame_get_buffer(f, 0);
    if (ret < 0)
        return ffe_fail_av(enc, "allocating a frame", ret);
    int planar = av_sample_fmt_is_planar(enc->ctx->sample_fmt);
    int planes = planar ? frame->channels : 1;
    size_t bytes = (size_t)frame->nb_samples * (size_t)av_get_bytes_per_sample(enc->ctx->sample_fmt) *
                   (size_t)(planar ? 1 : frame->channels);
    if (frame->plane_count < planes) {
        mkp_write_error(enc->last_error, sizeof(enc->last_error), "ffmpeg %s: send_frame: %d planes for %d",
                        enc->codec->name, frame->plane_count, planes);
        return MK_EINVAL;
    }
    for (int i = 0; i < planes; i++) {
        if (frame->planes[i] == NULL || frame->strides[i] < (int64_t)bytes) {
            mkp_write_error(enc->last_error, sizeof(enc->last_error),
                            "ffmpeg %s: send_frame: plane %d is NULL or shorter than %zu bytes", enc->codec->name, i, bytes);
            return MK_EINVAL;
        }
        memcpy(f->extended_data[i], frame->planes[i], bytes);
    }
    f->pts = frame->pts;
    ret = avcodec_send_frame(enc->ctx, f);
    if (ret == AVERROR(EAGAIN))
        return MK_EAGAIN;
    return ret < 0 ? ffe_fail_av(enc, "encoding a frame", ret) : MK_OK;
}

static int32_t ffe_receive_packet(void *encoder, mk_plugin_encoded_packet *packet)
{
    ffe_encoder *enc = encoder;
    if (enc == NULL || packet == NULL || packet->struct_size < MKP_END_OF(mk_plugin_encoded_packet, duration))
        return MK_EINVAL;
    char who[96];
    ffe_who(enc, who, sizeof(who));
    int32_t status = ffp_encoder_receive(enc->ctx, enc->packet, enc->last_error, sizeof(enc->last_error), who);
    if (status != MK_OK)
        return status;
    size_t side_size = 0;
    const uint8_t *side = av_packet_get_side_data(enc->packet, AV_PKT_DATA_NEW_EXTRADATA, &side_size);
    if (side != NULL && side_size > 0) {
        uint8_t *copy = malloc(side_size);
        if (copy == NULL)
            return MK_ENOMEM;
        memcpy(copy, side, side_size);
        free(enc->new_extradata);
        enc->new_extradata = copy;
        enc->new_extradata_size = side_size;
    }
    int64_t delay = enc->ctx->initial_padding;
    mk_plugin_encoded_packet own;
    memset(&own, 0, sizeof(own));
    own.struct_size = sizeof(own);
    own.flags = (enc->packet->flags & AV_PKT_FLAG_KEY) ? MK_PACKET_FLAG_KEY : 0;
    own.data = enc->packet->data;
    own.size = (size_t)enc->packet->size;
    own.pts = enc->packet->pts == AV_NOPTS_VALUE ? MK_NOPTS_VALUE : enc->packet->pts + delay;
    own.dts = enc->packet->dts == AV_NOPTS_VALUE ? own.pts : enc->packet->dts + delay;
    own.duration = enc->packet->duration;
    mkp_fill_struct(packet, &own, sizeof(own));
    return MK_OK;
}

static void ffe_destroy(void *encoder)
{
    ffe_encoder *enc = encoder;
    if (enc == NULL)
        return;
    avcodec_free_context(&enc->ctx);
    av_packet_free(&enc->packet);
    av_frame_free(&enc->frame);
    free(enc->new_extradata);
    free(enc);
}

static const char *ffe_last_error(void *encoder)
{
    ffe_encoder *enc = encoder;
    return enc != NULL ? enc->last_error : "";
}

static const mk_plugin_encoder_vtable ffe_vtable = {
    sizeof(mk_plugin_encoder_vtable), ffe_get_info, ffe_send_frame, ffe_receive_packet, ffe_destroy, ffe_last_error,
};

static int32_t ffe_create(int index, const mk_plugin_encoder_config *config, void **encoder,
                          const mk_plugin_encoder_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    const ffe_codec *codec = &ffe_codecs[index];
    char who[64];
    snprintf(who, sizeof(who), "ffmpeg %s (%s)", codec->name, codec->encoder_name);
    int32_t checked = mkp_check_encoder_create(who, config, encoder, vtable, errbuf, errbuf_size, codec->name,
                                               codec->max_channels, codec->formats);
    if (checked != MK_OK)
        return checked;
    if (codec->encoder == NULL) {
        mkp_write_error(errbuf, errbuf_size, "%s: this libavcodec has no %s encoder", who, codec->encoder_name);
        return MK_EUNSUPPORTED;
    }
    if (codec->rates[0] != 0) {
        int known = 0;
        for (const int32_t *r = codec->rates; *r != 0; r++)
            known |= *r == config->sample_rate;
        if (!known) {
            char list[FFE_LIST_MAX * 10];
            mkp_format_rates(list, sizeof(list), codec->rates);
            mkp_write_error(errbuf, errbuf_size, "%s encoder: %d Hz is not a rate it accepts: %s Hz", who,
                            config->sample_rate, list);
            return MK_EUNSUPPORTED;
        }
    } else if (strcmp(codec->name, "flac") == 0 && config->sample_rate > 655350) {
        mkp_write_error(errbuf, errbuf_size, "%s encoder: %d Hz: it accepts 1 to 655350 Hz", who, config->sample_rate);
        return MK_EUNSUPPORTED;
    }
    if (config->bit_rate != 0 && codec->max_bit_rate > 0 &&
        (config->bit_rate < codec->min_bit_rate || config->bit_rate > codec->max_bit_rate)) {
        mkp_write_error(errbuf, errbuf_size, "%s encoder: %lld bit/s: it accepts %lld to %lld bit/s", who,
                        (long long)config->bit_rate, (long long)codec->min_bit_rate, (long long)codec->max_bit_rate);
        return MK_EUNSUPPORTED;
    }

    ffe_encoder *enc = calloc(1, sizeof(*enc));
    if (enc == NULL) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: out of memory", who);
        return MK_ENOMEM;
    }
    enc->codec = codec;
    enc->ctx = avcodec_alloc_context3(codec->encoder);
    enc->packet = av_packet_alloc();
    enc->frame = av_frame_alloc();
    if (enc->ctx == NULL || enc->packet == NULL || enc->frame == NULL) {
        ffe_destroy(enc);
        mkp_write_error(errbuf, errbuf_size, "%s: create: out of memory", who);
        return MK_ENOMEM;
    }
    AVCodecContext *ctx = enc->ctx;
    ctx->sample_fmt = ffe_av_sample_fmt(config->sample_format);
    ctx->sample_rate = config->sample_rate;
    if (config->channel_mask != 0 && av_popcount64(config->channel_mask) == config->channels)
        av_channel_layout_from_mask(&ctx->ch_layout, config->channel_mask);
    else
        av_channel_layout_default(&ctx->ch_layout, config->channels);
    ctx->time_base = (AVRational){ 1, config->sample_rate };
    /* As the ffmpeg tool opens an encoder for MP4 (and for FLAC/MP3 files): global headers. */
    ctx->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    if (config->has_quality) {
        ctx->flags |= AV_CODEC_FLAG_QSCALE;
        ctx->global_quality = (int)(config->quality * FF_QP2LAMBDA + 0.5);
    } else if (config->bit_rate > 0) {
        ctx->bit_rate = config->bit_rate;
    }
    if (config->complexity >= 0 && strcmp(codec->name, "flac") == 0)
        ctx->compression_level = config->complexity > 12 ? 12 : config->complexity;
    ctx->thread_count = config->thread_count > 0 ? config->thread_count : 1;

    int ret = avcodec_open2(ctx, codec->encoder, NULL);
    if (ret < 0) {
        char what[96];
        snprintf(what, sizeof(what), "avcodec_open2 failed for %d Hz, %d channels", config->sample_rate, config->channels);
        int32_t status = ffp_encoder_failure(errbuf, errbuf_size, who, what, ret);
        ffe_destroy(enc);
        return status;
    }
    *encoder = enc;
    *vtable = &ffe_vtable;
    return MK_OK;
}
