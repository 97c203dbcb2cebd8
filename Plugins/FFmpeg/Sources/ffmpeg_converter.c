/*
 * ffmpeg_converter.c — the FFmpeg plugin's picture converter: "swscale"
 * (priority 100), from libswscale. The plugin's decoders, descriptor and
 * entry point are in ffmpeg_decoder.c; ffmpeg_internal.h is what both share.
 *
 * It changes the pixel format of a picture (yuv420p10 -> nv12, yuv444p ->
 * yuv420p ...) and, when the config asks for another size (ABI 2.2,
 * MK_PLUGIN_CONVERTER_SCALES), its size, set up as the ffmpeg tool sets up its
 * scale filter (the one it inserts for `-pix_fmt`, or `-vf scale=W:H:flags=F`):
 * the filter asked for (SWS_BICUBIC by default, the tool's default), the
 * library's default dithering, and a full-range source scaled to the limited
 * range of a YUV destination. Same library, same calls, same destination
 * alignment (av_frame_get_buffer), so the bytes equal
 * `ffmpeg -i IN -vf scale=W:H:flags=bicubic -pix_fmt nv12 ...`.
 *
 * Ownership: convert() borrows the source planes for the call; each converted
 * picture is its own AVFrame, given back by release() (any thread, also after
 * destroy()). Threads: as tagged in mediakit_plugin.h.
 *
 * Pool: a released picture goes back to its converter's free list (up to
 * FFC_POOL_MAX) and the next convert() writes into it, so steady-state
 * conversion allocates no picture buffers. The list is shared by the converter
 * and its pictures (reference counted, under a mutex): a picture released after
 * destroy() is freed, and the list with the last of them.
 */

#include "ffmpeg_internal.h"

#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Picture converter (libswscale)                                            */
/* ------------------------------------------------------------------------ */

#define FFC_CONFIG_MIN_SIZE MKP_END_OF(mk_plugin_converter_config, color_space)
/* A config that covers the scaling fields (2.2). */
#define FFC_CONFIG_SCALE_SIZE MKP_END_OF(mk_plugin_converter_config, scale_filter)

#define FFC_POOL_MAX 16

/* The converted pictures of one converter that are free for reuse. Each picture's
 * AVFrame.opaque points here. */
typedef struct ffc_pool {
    pthread_mutex_t lock;
    int refs;                     /* the converter's (while alive) + one per picture out */
    int alive;                    /* the converter is not destroyed yet */
    int nfree;
    AVFrame *free[FFC_POOL_MAX];
} ffc_pool;

static void ffc_pool_unref_locked_and_unlock(ffc_pool *p)
{
    int last = --p->refs == 0;
    pthread_mutex_unlock(&p->lock);
    if (last) {
        for (int i = 0; i < p->nfree; i++)
            av_frame_free(&p->free[i]);
        pthread_mutex_destroy(&p->lock);
        free(p);
    }
}

/* mk_plugin_frame.release of a converted picture: back to the pool, or freed. */
static void ffc_release_picture(void *opaque)
{
    AVFrame *f = opaque;
    ffc_pool *p = f->opaque;
    pthread_mutex_lock(&p->lock);
    if (p->alive && p->nfree < FFC_POOL_MAX) {
        p->free[p->nfree++] = f;
        f = NULL;
    }
    ffc_pool_unref_locked_and_unlock(p);
    av_frame_free(&f);
}

typedef struct ffc_converter {
    ffc_pool *pool;
    struct SwsContext *sws;
    const ffp_pix_map *src, *dst;
    int width, height;            /* of the pictures taken */
    int dst_width, dst_height;    /* of the pictures returned */
    int out_range;            /* color_range written on converted frames */
    char last_error[FFP_ERROR_SIZE];
} ffc_converter;

static int32_t ffc_supports(int32_t src_format, int32_t dst_format)
{
    const ffp_pix_map *s = ffp_find_mk_pix(src_format), *d = ffp_find_mk_pix(dst_format);
    return s != NULL && d != NULL && sws_isSupportedInput(s->av) > 0 && sws_isSupportedOutput(d->av) > 0;
}

/* The libswscale flags of an MK_SCALE_* filter (the scale filter's flag of the same name);
 * 0 for an unknown one. */
static int ffc_sws_flags(int32_t filter)
{
    switch (filter) {
    case MK_SCALE_DEFAULT:
    case MK_SCALE_BICUBIC: return SWS_BICUBIC;
    case MK_SCALE_FAST_BILINEAR: return SWS_FAST_BILINEAR;
    case MK_SCALE_BILINEAR: return SWS_BILINEAR;
    case MK_SCALE_NEIGHBOR: return SWS_POINT;
    case MK_SCALE_AREA: return SWS_AREA;
    case MK_SCALE_LANCZOS: return SWS_LANCZOS;
    default: return 0;
    }
}

static int32_t ffc_convert(void *converter, const mk_plugin_frame *src, mk_plugin_frame *dst)
{
    ffc_converter *c = converter;
    if (c == NULL || src == NULL || dst == NULL)
        return MK_EINVAL;
    if (src->struct_size < FFP_FRAME_MIN_SIZE || dst->struct_size < FFP_FRAME_MIN_SIZE) {
        mkp_write_error(c->last_error, sizeof(c->last_error),
                        "swscale: convert: frame struct_size %u / %u < %zu",
                        src->struct_size, dst->struct_size, (size_t)FFP_FRAME_MIN_SIZE);
        return MK_EINVAL;
    }
    if (src->format != c->src->mk || src->width != c->width || src->height != c->height) {
        mkp_write_error(c->last_error, sizeof(c->last_error),
                        "swscale: convert: the converter was made for %dx%d %s pictures, got %dx%d format %d",
                        c->width, c->height, av_get_pix_fmt_name(c->src->av), src->width, src->height,
                        src->format);
        return MK_EINVAL;
    }
    const uint8_t *in[4] = { NULL };
    int in_stride[4] = { 0 };
    for (int i = 0; i < c->src->planes; i++) {
        if (src->planes[i] == NULL || src->strides[i] <= 0 || src->strides[i] > INT_MAX) {
            mkp_write_error(c->last_error, sizeof(c->last_error),
                            "swscale: convert: source plane %d is missing or has stride %lld", i,
                            (long long)src->strides[i]);
            return MK_EINVAL;
        }
        in[i] = src->planes[i];
        in_stride[i] = (int)src->strides[i];
    }
    /* A picture from the pool (its buffers made by av_frame_get_buffer, as ffmpeg's), or a new one. */
    pthread_mutex_lock(&c->pool->lock);
    AVFrame *out = c->pool->nfree > 0 ? c->pool->free[--c->pool->nfree] : NULL;
    pthread_mutex_unlock(&c->pool->lock);
    int ret = 0;
    if (out == NULL) {
        out = av_frame_alloc();
        if (out == NULL)
            return MK_ENOMEM;
        out->format = c->dst->av;
        out->width = c->dst_width;
        out->height = c->dst_height;
        ret = av_frame_get_buffer(out, 0);
    }
    if (ret >= 0)
        ret = sws_scale(c->sws, in, in_stride, 0, c->height, out->data, out->linesize);
    if (ret < 0) {
        char text[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(ret, text, sizeof(text));
        mkp_write_error(c->last_error, sizeof(c->last_error), "swscale: %s -> %s: %s",
                        av_get_pix_fmt_name(c->src->av), av_get_pix_fmt_name(c->dst->av), text);
        av_frame_free(&out);
        return ffp_map_averror(ret);
    }
    out->opaque = c->pool;
    pthread_mutex_lock(&c->pool->lock);
    c->pool->refs++;
    pthread_mutex_unlock(&c->pool->lock);
    mk_plugin_frame f;
    size_t n = src->struct_size < sizeof(f) ? src->struct_size : sizeof(f);
    memset(&f, 0, sizeof(f));
    memcpy(&f, src, n);
    f.struct_size = dst->struct_size < sizeof(f) ? dst->struct_size : (uint32_t)sizeof(f);
    f.format = c->dst->mk;
    f.width = c->dst_width;
    f.height = c->dst_height;
    f.color_range = c->out_range;
    memset(f.planes, 0, sizeof(f.planes));
    memset(f.strides, 0, sizeof(f.strides));
    for (int i = 0; i < c->dst->planes; i++) {
        f.planes[i] = out->data[i];
        f.strides[i] = out->linesize[i];
    }
    f.plane_count = c->dst->planes;
    f.release = ffc_release_picture;
    f.release_opaque = out;
    n = dst->struct_size < sizeof(f) ? dst->struct_size : sizeof(f);
    memcpy(dst, &f, n);
    return MK_OK;
}

static void ffc_destroy(void *converter)
{
    ffc_converter *c = converter;
    if (c == NULL)
        return;
    sws_freeContext(c->sws);
    pthread_mutex_lock(&c->pool->lock);
    c->pool->alive = 0;
    ffc_pool_unref_locked_and_unlock(c->pool);
    free(c);
}

static const char *ffc_last_error(void *converter)
{
    ffc_converter *c = converter;
    return c != NULL ? c->last_error : "";
}

static const mk_plugin_converter_vtable ffc_vtable = {
    sizeof(mk_plugin_converter_vtable), ffc_convert, ffc_destroy, ffc_last_error,
};

static int32_t ffc_create(const mk_plugin_converter_config *config, void **converter,
                          const mk_plugin_converter_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    if (errbuf != NULL && errbuf_size > 0)
        errbuf[0] = '\0';
    if (config == NULL || converter == NULL || vtable == NULL) {
        mkp_write_error(errbuf, errbuf_size, "swscale: create: a NULL argument");
        return MK_EINVAL;
    }
    *converter = NULL;
    *vtable = NULL;
    if (config->struct_size < FFC_CONFIG_MIN_SIZE) {
        mkp_write_error(errbuf, errbuf_size, "swscale: create: config struct_size %u < %zu",
                        config->struct_size, (size_t)FFC_CONFIG_MIN_SIZE);
        return MK_EINVAL;
    }
    if (!ffc_supports(config->src_format, config->dst_format)) {
        mkp_write_error(errbuf, errbuf_size, "swscale: cannot convert pixel format %d to %d",
                        config->src_format, config->dst_format);
        return MK_EUNSUPPORTED;
    }
    if (config->width <= 0 || config->height <= 0 || config->width > 16384 || config->height > 16384) {
        mkp_write_error(errbuf, errbuf_size, "swscale: create: picture size %dx%d out of range",
                        config->width, config->height);
        return MK_EINVAL;
    }
    int dst_width = config->width, dst_height = config->height, filter = MK_SCALE_DEFAULT;
    if (config->struct_size >= FFC_CONFIG_SCALE_SIZE) {
        dst_width = config->dst_width > 0 ? config->dst_width : config->width;
        dst_height = config->dst_height > 0 ? config->dst_height : config->height;
        filter = config->scale_filter;
    }
    int sws_flags = ffc_sws_flags(filter);
    if (sws_flags == 0) {
        mkp_write_error(errbuf, errbuf_size, "swscale: create: unknown scale filter %d (MK_SCALE_*)", filter);
        return MK_EINVAL;
    }
    if (dst_width <= 0 || dst_height <= 0 || dst_width > 16384 || dst_height > 16384) {
        mkp_write_error(errbuf, errbuf_size, "swscale: create: destination size %dx%d out of range",
                        dst_width, dst_height);
        return MK_EINVAL;
    }
    ffc_converter *c = calloc(1, sizeof(*c));
    if (c == NULL) {
        mkp_write_error(errbuf, errbuf_size, "swscale: create: out of memory");
        return MK_ENOMEM;
    }
    c->pool = calloc(1, sizeof(*c->pool));
    if (c->pool == NULL || pthread_mutex_init(&c->pool->lock, NULL) != 0) {
        free(c->pool);
        free(c);
        mkp_write_error(errbuf, errbuf_size, "swscale: create: out of memory");
        return MK_ENOMEM;
    }
    c->pool->refs = 1;
    c->pool->alive = 1;
    c->src = ffp_find_mk_pix(config->src_format);
    c->dst = ffp_find_mk_pix(config->dst_format);
    c->width = config->width;
    c->height = config->height;
    c->dst_width = dst_width;
    c->dst_height = dst_height;
    /* As the ffmpeg tool's scale filter sets libswscale up: the flags of the filter asked for
     * (bicubic, the tool's default, for the one it inserts for -pix_fmt); the range
     * the frames name (if any) as the "src_range" option BEFORE sws_init_context (vf_scale's
     * config_props), then again through sws_setColorspaceDetails (its scale_frame). Both are
     * needed: setColorspaceDetails alone does not set up the range conversion of YUV
     * sources of more than 8 bits (full-range 10-bit pictures came out unconverted), and the
     * option alone cannot make a gray source limited (init ORs in gray's full range). An
     * unnamed range (0) keeps libswscale's default for the format (full for yuvj*), as in
     * ffmpeg; the destination keeps libswscale's default range for its format. */
    int src_full = config->color_range == 2 || (config->color_range == 0 && c->src->full_range);
    int dst_full = c->dst->full_range;
    c->sws = sws_alloc_context();
    int ret = c->sws != NULL ? 0 : AVERROR(ENOMEM);
    if (ret >= 0) ret = av_opt_set_int(c->sws, "srcw", c->width, 0);
    if (ret >= 0) ret = av_opt_set_int(c->sws, "srch", c->height, 0);
    if (ret >= 0) ret = av_opt_set_int(c->sws, "src_format", c->src->av, 0);
    if (ret >= 0) ret = av_opt_set_int(c->sws, "dstw", c->dst_width, 0);
    if (ret >= 0) ret = av_opt_set_int(c->sws, "dsth", c->dst_height, 0);
    if (ret >= 0) ret = av_opt_set_int(c->sws, "dst_format", c->dst->av, 0);
    if (ret >= 0) ret = av_opt_set_int(c->sws, "sws_flags", sws_flags, 0);
    if (ret >= 0 && (config->color_range == 1 || config->color_range == 2))
        ret = av_opt_set_int(c->sws, "src_range", src_full, 0);
    if (ret >= 0)
        ret = sws_init_context(c->sws, NULL, NULL);
    if (ret < 0) {
        char text[AV_ERROR_MAX_STRING_SIZE];
        av_strerror(ret, text, sizeof(text));
        mkp_write_error(errbuf, errbuf_size, "swscale: cannot set up %s %dx%d -> %s %dx%d: %s",
                        av_get_pix_fmt_name(c->src->av), c->width, c->height,
                        av_get_pix_fmt_name(c->dst->av), c->dst_width, c->dst_height, text);
        sws_freeContext(c->sws);
        pthread_mutex_destroy(&c->pool->lock);
        free(c->pool);
        free(c);
        return ret == AVERROR(ENOMEM) ? MK_ENOMEM : MK_EUNSUPPORTED;
    }
    /* Then as vf_scale's scale_frame (FFmpeg 5.1) with its defaults (in_color_matrix "auto",
     * no out_color_matrix): always sws_setColorspaceDetails, with the YCbCr matrix the frames
     * name (parse_yuv_type: an unnamed or unknown one, outside 1..10 or 8, is BT.601 /
     * BT470BG) for both the source and the destination table, and the source range when the
     * frames name one. The matrix matters for YUV <-> RGB (bt709 files give other RGB bytes
     * than bt601 ones); YUV -> YUV keeps its samples' matrix. */
    int *inv_table, *table, src_range, dst_range, brightness, contrast, saturation;
    if (sws_getColorspaceDetails(c->sws, &inv_table, &src_range, &table, &dst_range, &brightness,
                                 &contrast, &saturation) >= 0) {
        int space = config->color_space;
        if (space < 1 || space > 10 || space == 8)
            space = SWS_CS_ITU601;   /* AVCOL_SPC_BT470BG */
        const int *coefficients = sws_getCoefficients(space);
        if (config->color_range == 1 || config->color_range == 2)
            src_range = src_full;
        sws_setColorspaceDetails(c->sws, coefficients, src_range, coefficients, dst_range, brightness,
                                 contrast, saturation);
    }
    /* ffmpeg's scale filter marks what it converts with the destination's range, also when
     * the source's was unspecified (its Y4M output then says XCOLORRANGE=LIMITED). */
    c->out_range = dst_full ? 2 : 1;
    *converter = c;
    *vtable = &ffc_vtable;
    return MK_OK;
}

static const mk_plugin_picture_converter ffc_converters[] = {
    { sizeof(mk_plugin_picture_converter), "swscale", 100, ffc_supports, ffc_create, MK_PLUGIN_CONVERTER_SCALES },
};

MKP_PICTURE_CONVERTER_FACTORY(ffc_factory_impl, ffc_converters);

const mk_plugin_picture_converter_factory *ffc_factory(void)
{
    return &ffc_factory_impl;
}
