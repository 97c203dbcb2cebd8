/*
 * ffmpeg_common.c — what the FFmpeg plugin's decoders, encoders and picture converter share:
 * the pixel and sample format maps between libav* and the ABI, the AVERROR -> MK_* status
 * map, the release of an AVFrame handed to the host, and the plugin's version string.
 * It calls nothing in the plugin's other files.
 */
#include "ffmpeg_internal.h"

#include <libavutil/samplefmt.h>

#include <stdio.h>

char ffp_version_text[96] = FFP_PLUGIN_VERSION;

const char *ffp_version_string(void)
{
    static int filled;
    if (!filled) {
        unsigned v = avcodec_version();
        snprintf(ffp_version_text, sizeof(ffp_version_text), "%s (libavcodec %u.%u.%u)",
                 FFP_PLUGIN_VERSION, v >> 16, (v >> 8) & 0xffu, v & 0xffu);
        filled = 1;
    }
    return ffp_version_text;
}

/* ------------------------------------------------------------------------ */
/* Format maps                                                               */
/* ------------------------------------------------------------------------ */

static const ffp_pix_map ffp_pix_maps[] = {
    { AV_PIX_FMT_YUV420P,     MK_PIXEL_YUV420P,    3, 0 },
    { AV_PIX_FMT_YUVJ420P,    MK_PIXEL_YUVJ420P,   3, 1 },
    { AV_PIX_FMT_YUV422P,     MK_PIXEL_YUV422P,    3, 0 },
    { AV_PIX_FMT_YUVJ422P,    MK_PIXEL_YUVJ422P,   3, 1 },
    { AV_PIX_FMT_YUV444P,     MK_PIXEL_YUV444P,    3, 0 },
    { AV_PIX_FMT_YUVJ444P,    MK_PIXEL_YUVJ444P,   3, 1 },
    { AV_PIX_FMT_NV12,        MK_PIXEL_NV12,       2, 0 },
    { AV_PIX_FMT_YUV420P10LE, MK_PIXEL_YUV420P10,  3, 0 },
    { AV_PIX_FMT_YUV422P10LE, MK_PIXEL_YUV422P10,  3, 0 },
    { AV_PIX_FMT_YUV444P10LE, MK_PIXEL_YUV444P10,  3, 0 },
    { AV_PIX_FMT_P010LE,      MK_PIXEL_P010,       2, 0 },
    { AV_PIX_FMT_GRAY8,       MK_PIXEL_GRAY8,      1, 0 },
    { AV_PIX_FMT_GRAY10LE,    MK_PIXEL_GRAY10,     1, 0 },
    { AV_PIX_FMT_YUV420P12LE, MK_PIXEL_YUV420P12,  3, 0 },
    { AV_PIX_FMT_RGB24,       MK_PIXEL_RGB24,      1, 0 },
    { AV_PIX_FMT_BGR24,       MK_PIXEL_BGR24,      1, 0 },
    { AV_PIX_FMT_RGBA,        MK_PIXEL_RGBA,       1, 0 },
    { AV_PIX_FMT_BGRA,        MK_PIXEL_BGRA,       1, 0 },
    { AV_PIX_FMT_GRAY16LE,    MK_PIXEL_GRAY16,     1, 0 },
    { AV_PIX_FMT_RGB48LE,     MK_PIXEL_RGB48,      1, 0 },
};

const ffp_pix_map *ffp_find_pix(int format)
{
    for (size_t i = 0; i < sizeof(ffp_pix_maps) / sizeof(ffp_pix_maps[0]); i++)
        if ((int)ffp_pix_maps[i].av == format)
            return &ffp_pix_maps[i];
    return NULL;
}

const ffp_pix_map *ffp_find_mk_pix(int32_t format)
{
    for (size_t i = 0; i < sizeof(ffp_pix_maps) / sizeof(ffp_pix_maps[0]); i++)
        if (ffp_pix_maps[i].mk == format)
            return &ffp_pix_maps[i];
    return NULL;
}

int32_t ffp_map_sample_fmt(int format)
{
    switch (format) {
    case AV_SAMPLE_FMT_U8:   return MK_SAMPLES_U8;
    case AV_SAMPLE_FMT_S16:  return MK_SAMPLES_S16;
    case AV_SAMPLE_FMT_S32:  return MK_SAMPLES_S32;
    case AV_SAMPLE_FMT_FLT:  return MK_SAMPLES_F32;
    case AV_SAMPLE_FMT_DBL:  return MK_SAMPLES_F64;
    case AV_SAMPLE_FMT_U8P:  return MK_SAMPLES_U8P;
    case AV_SAMPLE_FMT_S16P: return MK_SAMPLES_S16P;
    case AV_SAMPLE_FMT_S32P: return MK_SAMPLES_S32P;
    case AV_SAMPLE_FMT_FLTP: return MK_SAMPLES_F32P;
    case AV_SAMPLE_FMT_DBLP: return MK_SAMPLES_F64P;
    default:                 return 0;
    }
}

int32_t ffp_map_averror(int err)
{
    if (err == AVERROR(EAGAIN))
        return MK_EAGAIN;
    if (err == AVERROR_EOF)
        return MK_EOF;
    if (err == AVERROR_INVALIDDATA)
        return MK_EDATA;
    if (err == AVERROR(ENOMEM))
        return MK_ENOMEM;
    if (err == AVERROR(EINVAL))
        return MK_EINVAL;
    if (err == AVERROR_PATCHWELCOME || err == AVERROR(ENOSYS) ||
        err == AVERROR_DECODER_NOT_FOUND || err == AVERROR_EXPERIMENTAL)
        return MK_EUNSUPPORTED;
    return MK_EFAIL;
}

void ffp_release_frame(void *opaque)
{
    AVFrame *frame = opaque;
    av_frame_free(&frame);
}

int32_t ffp_encoder_failure(char *buf, size_t size, const char *prefix, const char *what, int err)
{
    char text[AV_ERROR_MAX_STRING_SIZE + 32];
    if (av_strerror(err, text, sizeof(text)) < 0)
        snprintf(text, sizeof(text), "error %d", err);
    mkp_write_error(buf, size, "%s: %s: %s", prefix, what, text);
    int32_t status = ffp_map_averror(err);
    return status == MK_EAGAIN || status == MK_EOF ? MK_EFAIL : status;
}

int32_t ffp_encoder_drain(AVCodecContext *ctx, int *draining, char *buf, size_t size, const char *prefix)
{
    if (*draining)
        return MK_EOF;
    int ret = avcodec_send_frame(ctx, NULL);
    if (ret == AVERROR(EAGAIN))
        return MK_EAGAIN;
    *draining = 1;
    return ret < 0 && ret != AVERROR_EOF ? ffp_encoder_failure(buf, size, prefix, "draining", ret) : MK_OK;
}

int32_t ffp_encoder_receive(AVCodecContext *ctx, AVPacket *packet, char *buf, size_t size, const char *prefix)
{
    av_packet_unref(packet);
    int ret = avcodec_receive_packet(ctx, packet);
    if (ret == AVERROR(EAGAIN))
        return MK_EAGAIN;
    if (ret == AVERROR_EOF)
        return MK_EOF;
    return ret < 0 ? ffp_encoder_failure(buf, size, prefix, "receiving a packet", ret) : MK_OK;
}
