/*
 * dav1d_plugin.c — MediaKit codec plugin: the AV1 decoder of libdav1d behind
 * the C ABI of mediakit/mediakit_plugin.h.
 *
 * Exports exactly one symbol, mediakit_plugin_entry(); everything else is
 * static. One backend: codec "av1", name "dav1d", priority 200 (the FFmpeg
 * plugin's AV1 backend has 50, so this one wins unless the caller asks for
 * "ffmpeg" by name).
 *
 * Output is meant to be bit-identical to `ffmpeg -c:v libdav1d`: the same
 * settings that change pictures are used (film grain applied, operating point
 * 0, only the highest spatial layer: FFmpeg's "alllayers" option defaults to
 * 0 while dav1d's all_layers defaults to 1), and the same picture fields are
 * reported (size p.w x p.h, sample aspect ratio from the render size, colour
 * description and chroma position from the sequence header).
 *
 * Extradata: the av1C box payload (AV1-ISOBMFF 2.3: marker/version byte 0x81,
 * three bytes of profile/level/flags, then configOBUs, possibly empty). Every
 * sync sample carries its own sequence header, so configOBUs are only checked
 * (dav1d_parse_sequence_header), not fed to the decoder; libdav1d in FFmpeg
 * does not feed them either. Extradata that does not start with the av1C
 * marker bit is taken as raw OBUs (as FFmpeg does) and checked the same way.
 * A configOBUs blob dav1d cannot parse is not fatal: the stream's own
 * sequence headers decide.
 *
 * Threads: dav1d's own frame and tile threads. n_threads = config thread_count,
 * or 0 = dav1d's choice (one per logical core); max_frame_delay = 0 = dav1d's
 * choice (ceil(sqrt(n_threads))), the throughput setting the dav1d tool uses.
 * MEDIAKIT_DAV1D_MAX_FRAME_DELAY overrides the latter (1 = lowest latency).
 * Pictures above 16384x16384 pixels are refused (frame_size_limit).
 *
 * Send/receive model
 *   dav1d_send_data() may take only part of a packet (DAV1D_ERR(EAGAIN): get
 *   a picture first). The plugin keeps at most one such partly consumed packet
 *   ("pending"): send_packet() takes the packet (MK_OK) even when dav1d
 *   kept a remainder, and returns MK_EAGAIN (packet NOT taken) only
 *   while a remainder is still pending. receive_frame() first feeds the
 *   remainder, then asks dav1d for one picture.
 *   dav1d treats two dav1d_get_picture() calls with no data in between as
 *   "drain": the second blocks until the oldest frame in flight is done. To
 *   keep frame threads busy, receive_frame() asks for at most one picture per
 *   packet fed while not draining (as the dav1d tool and FFmpeg's wrapper do);
 *   pictures that are not ready yet come out after later packets or in the
 *   drain. After send_packet(NULL) every call drains: MK_EOF once dav1d
 *   has no picture left.
 *
 * Frames are zero-copy: each mk_plugin_frame holds its own Dav1dPicture
 * reference (heap-allocated); release() calls dav1d_picture_unref() and frees
 * it. dav1d's picture pool is reference counted, so a frame stays valid after
 * destroy() (dav1d_close) until it is released.
 *
 * Pixel formats: 8-bit I400/I420/I422/I444 -> MK_PIXEL_GRAY8/YUV420P/YUV422P/
 * YUV444P; 10-bit -> GRAY10/YUV420P10/YUV422P10/YUV444P10 (low 10 bits of
 * little-endian 16-bit words, as dav1d stores them); 12-bit 4:2:0 ->
 * YUV420P12. Other 12-bit layouts: MK_EUNSUPPORTED for that frame.
 * Full-range streams keep the plain formats with color_range = 2 (as FFmpeg's
 * libdav1d wrapper does: it never uses the yuvj formats).
 *
 * Timestamps: the packet's pts travels as Dav1dData.m.timestamp (duration as
 * m.duration) and comes back on the picture it produced.
 *
 * Packets: the bytes are copied into a dav1d buffer, unless the host offers
 * them to keep (mk_plugin_packet.retain): they are then wrapped as they are
 * (dav1d_data_wrap) and released when dav1d is done with them.
 *
 * Logging: dav1d's messages go to the host's log (mk_host.log) at
 * MK_LOG_ERROR when the host's log_level asks for errors; otherwise dav1d's
 * logger is off.
 *
 * Threads: as tagged in mediakit_plugin.h (one instance is used by one thread
 * at a time; create() and release() from any thread).
 */

#include "mediakit/mediakit_plugin.h"
#include "../../Common/mk_plugin_support.h"

#include <dav1d/dav1d.h>

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if DAV1D_API_VERSION_MAJOR < 6
#error "MediaKitPluginDav1d needs dav1d 1.0 or newer (API version 6)"
#endif

#define DVP_PLUGIN_VERSION "1.0.0"
#define DVP_ERROR_SIZE 512
/* Bound on feed/get rounds in one receive_frame() call: dav1d always makes
 * progress within two, so hitting this means something is badly wrong. */
#define DVP_MAX_ROUNDS 64

#define DVP_CONFIG_MIN_SIZE MKP_END_OF(mk_plugin_codec_config, thread_count)
#define DVP_PACKET_MIN_SIZE MKP_END_OF(mk_plugin_packet, duration)
#define DVP_FRAME_MIN_SIZE MKP_END_OF(mk_plugin_frame, release_opaque)

static const mk_host *dvp_host;

typedef struct dvp_decoder {
    Dav1dContext *ctx;
    Dav1dData pending;    /* the part of the last packet dav1d has not taken */
    int draining;         /* send_packet(NULL) seen */
    int drained;          /* EOF reported */
    int may_poll;         /* data was fed since the last dav1d_get_picture() */
    int drain_armed;      /* the last dav1d call was dav1d_get_picture(): the
                             next one drains (may block for frames in flight) */
    char last_error[DVP_ERROR_SIZE];
} dvp_decoder;

/* Error formatting and create() checks shared by the C plugins. */
#define dvp_write_error mkp_write_error

#define dvp_set_error(dec, ...) \
    dvp_write_error((dec)->last_error, sizeof((dec)->last_error), __VA_ARGS__)

/* dav1d returns DAV1D_ERR(errno value). */
static int dvp_map_error(int err)
{
    if (err == DAV1D_ERR(EAGAIN))
        return MK_EAGAIN;
    if (err == DAV1D_ERR(ENOMEM))
        return MK_ENOMEM;
    if (err == DAV1D_ERR(EINVAL) || err == DAV1D_ERR(ERANGE))
        return MK_EDATA; /* dav1d reports bitstream errors as EINVAL */
    if (err == DAV1D_ERR(ENOPROTOOPT) || err == DAV1D_ERR(ENOSYS))
        return MK_EUNSUPPORTED;
    return MK_EFAIL;
}

static int dvp_fail(dvp_decoder *dec, const char *what, int err)
{
    int e = err < 0 ? -err : err;
    if (err == DAV1D_ERR(EINVAL) || err == DAV1D_ERR(ERANGE))
        dvp_set_error(dec, "dav1d av1: %s: invalid or damaged AV1 data (dav1d error %d, %s)",
                      what, err, strerror(e));
    else
        dvp_set_error(dec, "dav1d av1: %s: %s (dav1d error %d)", what, strerror(e), err);
    return dvp_map_error(err);
}

/* ------------------------------------------------------------------------ */
/* Pictures -> frames                                                         */
/* ------------------------------------------------------------------------ */

static void dvp_release_picture(void *opaque)
{
    Dav1dPicture *pic = opaque;
    if (pic == NULL)
        return;
    dav1d_picture_unref(pic);
    free(pic);
}

static int32_t dvp_pixel_format(const Dav1dPicture *p, int *planes)
{
    *planes = p->p.layout == DAV1D_PIXEL_LAYOUT_I400 ? 1 : 3;
    switch (p->p.bpc) {
    case 8:
        switch (p->p.layout) {
        case DAV1D_PIXEL_LAYOUT_I400: return MK_PIXEL_GRAY8;
        case DAV1D_PIXEL_LAYOUT_I420: return MK_PIXEL_YUV420P;
        case DAV1D_PIXEL_LAYOUT_I422: return MK_PIXEL_YUV422P;
        case DAV1D_PIXEL_LAYOUT_I444: return MK_PIXEL_YUV444P;
        }
        break;
    case 10:
        switch (p->p.layout) {
        case DAV1D_PIXEL_LAYOUT_I400: return MK_PIXEL_GRAY10;
        case DAV1D_PIXEL_LAYOUT_I420: return MK_PIXEL_YUV420P10;
        case DAV1D_PIXEL_LAYOUT_I422: return MK_PIXEL_YUV422P10;
        case DAV1D_PIXEL_LAYOUT_I444: return MK_PIXEL_YUV444P10;
        }
        break;
    case 12:
        if (p->p.layout == DAV1D_PIXEL_LAYOUT_I420)
            return MK_PIXEL_YUV420P12;
        break;
    }
    return 0;
}

static const char *dvp_layout_name(enum Dav1dPixelLayout layout)
{
    switch (layout) {
    case DAV1D_PIXEL_LAYOUT_I400: return "4:0:0";
    case DAV1D_PIXEL_LAYOUT_I420: return "4:2:0";
    case DAV1D_PIXEL_LAYOUT_I422: return "4:2:2";
    case DAV1D_PIXEL_LAYOUT_I444: return "4:4:4";
    }
    return "unknown layout";
}

static void dvp_reduce(int64_t num, int64_t den, int32_t *out_num, int32_t *out_den)
{
    int64_t a = num, b = den;
    while (b != 0) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    if (a == 0 || num <= 0 || den <= 0 || num / a > INT32_MAX || den / a > INT32_MAX) {
        *out_num = 0;
        *out_den = 1;
        return;
    }
    *out_num = (int32_t)(num / a);
    *out_den = (int32_t)(den / a);
}

/* Fills *out (struct_size set by the host) from *pic and takes ownership of
 * pic (a heap copy of the reference) on success. */
static int dvp_fill_frame(dvp_decoder *dec, Dav1dPicture *pic, mk_plugin_frame *frame)
{
    int planes = 0;
    int32_t format = dvp_pixel_format(pic, &planes);
    if (format == 0) {
        dvp_set_error(dec, "dav1d av1: %d-bit %s pictures are not supported by the "
                      "MediaKit plugin ABI", pic->p.bpc, dvp_layout_name(pic->p.layout));
        return MK_EUNSUPPORTED;
    }
    if (pic->p.w <= 0 || pic->p.h <= 0 || pic->seq_hdr == NULL || pic->frame_hdr == NULL) {
        dvp_set_error(dec, "dav1d av1: dav1d returned a %dx%d picture without headers",
                      pic->p.w, pic->p.h);
        return MK_EFAIL;
    }
    for (int i = 0; i < planes; i++) {
        if (pic->data[i] == NULL) {
            dvp_set_error(dec, "dav1d av1: picture plane %d is missing", i);
            return MK_EFAIL;
        }
    }

    mk_plugin_frame out;
    memset(&out, 0, sizeof(out));
    out.struct_size = frame->struct_size < sizeof(out) ? frame->struct_size : (uint32_t)sizeof(out);
    out.media_type = MK_MEDIA_VIDEO;
    out.format = format;
    out.flags = pic->frame_hdr->frame_type == DAV1D_FRAME_TYPE_KEY ? MK_PACKET_FLAG_KEY : 0;
    out.pts = pic->m.timestamp; /* INT64_MIN (unknown) == MK_NOPTS_VALUE */
    out.duration = pic->m.duration > 0 ? pic->m.duration : 0;
    out.width = pic->p.w;
    out.height = pic->p.h;

    const Dav1dSequenceHeader *seq = pic->seq_hdr;
    out.color_range = seq->color_range ? 2 : 1;
    /* AV1's colour code points are those of ISO/IEC 23091-4 (H.273). */
    out.color_primaries = (int32_t)seq->pri;
    out.color_trc = (int32_t)seq->trc;
    out.color_space = (int32_t)seq->mtrx;
    /* As FFmpeg's wrapper: render size / coded size gives the aspect ratio. */
    dvp_reduce((int64_t)pic->p.h * pic->frame_hdr->render_width,
               (int64_t)pic->p.w * pic->frame_hdr->render_height, &out.sar_num, &out.sar_den);
    if (out.struct_size >= MKP_END_OF(mk_plugin_frame, chroma_location)) {
        /* AVChromaLocation values; AV1 only signals it for 4:2:0. */
        int32_t loc = 0;
        if (seq->layout == DAV1D_PIXEL_LAYOUT_I420) {
            if (seq->chr == DAV1D_CHR_VERTICAL)
                loc = 1; /* left */
            else if (seq->chr == DAV1D_CHR_COLOCATED)
                loc = 3; /* top-left */
        }
        out.chroma_location = loc;
    }

    out.plane_count = planes;
    for (int i = 0; i < planes; i++) {
        out.planes[i] = pic->data[i];
        out.strides[i] = (int64_t)pic->stride[i == 0 ? 0 : 1];
    }
    out.release = dvp_release_picture;
    out.release_opaque = pic;

    size_t n = frame->struct_size < sizeof(out) ? frame->struct_size : sizeof(out);
    memcpy(frame, &out, n);
    return MK_OK;
}

/* ------------------------------------------------------------------------ */
/* Decoder instance                                                           */
/* ------------------------------------------------------------------------ */

/* Offers the pending remainder to dav1d. OK (taken, or dav1d still busy:
 * EAGAIN is not an error here) or the error of a damaged packet (dropped). */
static int dvp_feed_pending(dvp_decoder *dec)
{
    if (dec->pending.sz == 0)
        return MK_OK;
    int ret = dav1d_send_data(dec->ctx, &dec->pending);
    dec->may_poll = 1;
    dec->drain_armed = 0;
    if (ret == 0 || ret == DAV1D_ERR(EAGAIN))
        return MK_OK;
    dav1d_data_unref(&dec->pending);
    return dvp_fail(dec, "decoding a packet", ret);
}

/* A packet's bytes the host let the plugin keep (see "Packets" in mediakit_plugin.h). */
typedef struct dvp_kept {
    void (*release)(void *owner);
    void *owner;
} dvp_kept;

/* dav1d's free callback for wrapped packet bytes. */
static void dvp_release_kept(const uint8_t *data, void *cookie)
{
    (void)data;
    dvp_kept *kept = cookie;
    kept->release(kept->owner);
    free(kept);
}

static int32_t dvp_send_packet(void *decoder, const mk_plugin_packet *packet)
{
    dvp_decoder *dec = decoder;
    if (dec == NULL)
        return MK_EINVAL;
    int begun = mkp_begin_send("dav1d av1", packet, &dec->draining, DVP_PACKET_MIN_SIZE,
                               dec->last_error, sizeof(dec->last_error));
    if (begun != MKP_DECODE)
        return begun;
    if (dec->draining) {
        dvp_set_error(dec, "dav1d av1: send_packet after the end of stream; flush first");
        return MK_EOF;
    }
    if (dec->pending.sz > 0)
        return MK_EAGAIN; /* receive first: the last packet is not all in */
    if (packet->size == 0)
        return MK_OK;     /* an empty sample carries nothing to decode */

    if (mkp_packet_can_keep(packet, 0)) {
        /* the host's bytes, kept without a copy until dav1d lets them go */
        dvp_kept *kept = malloc(sizeof(*kept));
        if (kept == NULL) {
            dvp_set_error(dec, "dav1d av1: send_packet: out of memory");
            return MK_ENOMEM;
        }
        kept->release = packet->release;
        kept->owner = packet->owner;
        int ret = dav1d_data_wrap(&dec->pending, packet->data, packet->size, dvp_release_kept, kept);
        if (ret < 0) {
            free(kept);
            return dvp_fail(dec, "wrapping a packet", ret);
        }
        packet->retain(packet->owner);
    } else {
        uint8_t *buf = dav1d_data_create(&dec->pending, packet->size);
        if (buf == NULL) {
            dvp_set_error(dec, "dav1d av1: send_packet: out of memory copying %zu bytes",
                          packet->size);
            return MK_ENOMEM;
        }
        memcpy(buf, packet->data, packet->size);
    }
    dec->pending.m.timestamp = packet->pts; /* MK_NOPTS_VALUE == INT64_MIN == unknown */
    dec->pending.m.duration = packet->duration > 0 ? packet->duration : 0;
    return dvp_feed_pending(dec);
}

static int32_t dvp_receive_frame(void *decoder, mk_plugin_frame *frame)
{
    dvp_decoder *dec = decoder;
    if (dec == NULL || frame == NULL)
        return MK_EINVAL;
    if (frame->struct_size < DVP_FRAME_MIN_SIZE) {
        dvp_set_error(dec, "dav1d av1: receive_frame: frame struct_size %u < %zu",
                      frame->struct_size, (size_t)DVP_FRAME_MIN_SIZE);
        return MK_EINVAL;
    }
    if (dec->drained)
        return MK_EOF;

    for (int round = 0; round < DVP_MAX_ROUNDS; round++) {
        int status = dvp_feed_pending(dec);
        if (status != MK_OK)
            return status;
        if (!dec->draining && !dec->may_poll)
            return MK_EAGAIN; /* one picture per packet fed; see the top */

        Dav1dPicture pic;
        memset(&pic, 0, sizeof(pic));
        int was_armed = dec->drain_armed;
        int ret = dav1d_get_picture(dec->ctx, &pic);
        dec->may_poll = 0;
        dec->drain_armed = 1;
        if (ret == 0) {
            Dav1dPicture *held = malloc(sizeof(*held));
            if (held == NULL) {
                dav1d_picture_unref(&pic);
                dvp_set_error(dec, "dav1d av1: receive_frame: out of memory");
                return MK_ENOMEM;
            }
            *held = pic; /* moves the reference */
            status = dvp_fill_frame(dec, held, frame);
            if (status != MK_OK)
                dvp_release_picture(held); /* dropped; the next call goes on */
            return status;
        }
        if (ret != DAV1D_ERR(EAGAIN))
            return dvp_fail(dec, "decoding", ret);
        if (dec->pending.sz > 0)
            continue; /* dav1d has room now: feed the rest of the packet */
        if (!dec->draining)
            return MK_EAGAIN;
        if (was_armed) {
            dec->drained = 1; /* a draining get_picture found nothing left */
            return MK_EOF;
        }
        /* the first get_picture after data does not wait; the next one drains */
    }
    dvp_set_error(dec, "dav1d av1: receive_frame: dav1d made no progress in %d rounds",
                  DVP_MAX_ROUNDS);
    return MK_EFAIL;
}

static void dvp_flush(void *decoder)
{
    dvp_decoder *dec = decoder;
    if (dec == NULL)
        return;
    dav1d_data_unref(&dec->pending);
    dav1d_flush(dec->ctx);
    dec->draining = 0;
    dec->drained = 0;
    dec->may_poll = 0;
    dec->drain_armed = 0;
}

static void dvp_destroy(void *decoder)
{
    dvp_decoder *dec = decoder;
    if (dec == NULL)
        return;
    dav1d_data_unref(&dec->pending);
    dav1d_close(&dec->ctx); /* pictures still held by the host stay valid */
    free(dec);
}

static const char *dvp_last_error(void *decoder)
{
    dvp_decoder *dec = decoder;
    if (dec == NULL)
        return "dav1d av1: NULL decoder";
    return dec->last_error;
}

static const mk_plugin_decoder_vtable dvp_vtable = {
    sizeof(mk_plugin_decoder_vtable),
    dvp_send_packet,
    dvp_receive_frame,
    dvp_flush,
    dvp_destroy,
    dvp_last_error,
};

/* Checks the av1C payload (or raw OBUs). Writes errbuf and returns an error
 * only for a header that is certainly broken; unparseable configOBUs are left
 * to the in-band sequence headers. */
static int dvp_check_extradata(const uint8_t *data, size_t size, char *errbuf, size_t errbuf_size)
{
    if (size == 0)
        return MK_OK;
    const uint8_t *obus = data;
    size_t obus_size = size;
    if (data[0] & 0x80) { /* av1C: marker(1) version(7) = 0x81 */
        if ((data[0] & 0x7f) != 1) {
            dvp_write_error(errbuf, errbuf_size,
                            "dav1d av1: av1C version %u is not 1", (unsigned)(data[0] & 0x7f));
            return MK_EUNSUPPORTED;
        }
        if (size < 4) {
            dvp_write_error(errbuf, errbuf_size,
                            "dav1d av1: av1C is %zu bytes, at least 4 expected", size);
            return MK_EDATA;
        }
        obus = data + 4;
        obus_size = size - 4;
    }
    if (obus_size > 0) {
        Dav1dSequenceHeader seq;
        (void)dav1d_parse_sequence_header(&seq, obus, obus_size);
    }
    return MK_OK;
}

static int dvp_env_int(const char *name, int lo, int hi, int fallback)
{
    const char *v = getenv(name);
    if (v == NULL || v[0] == '\0')
        return fallback;
    char *end = NULL;
    long n = strtol(v, &end, 10);
    if (end == v || *end != '\0' || n < lo || n > hi)
        return fallback;
    return (int)n;
}

/* dav1d's logger: each message to the host's log, without its trailing newline. */
static void dvp_log(void *cookie, const char *format, va_list ap)
{
    (void)cookie;
    char line[512];
    vsnprintf(line, sizeof(line), format, ap);
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == '\n')
        line[--n] = '\0';
    if (n > 0)
        mkp_log(dvp_host, MK_LOG_ERROR, "dav1d: %s", line);
}

static int32_t dvp_create(const mk_plugin_codec_config *config, void **decoder,
                          const mk_plugin_decoder_vtable **vtable, char *errbuf,
                          size_t errbuf_size)
{
    int checked = mkp_check_create("dav1d av1", config, decoder, vtable, errbuf, errbuf_size,
                                   DVP_CONFIG_MIN_SIZE, "av1", MK_MEDIA_VIDEO);
    if (checked != MK_OK)
        return checked;
    int status = dvp_check_extradata(config->extradata, config->extradata_size, errbuf,
                                     errbuf_size);
    if (status != MK_OK)
        return status;

    Dav1dSettings s;
    dav1d_default_settings(&s);
    s.n_threads = config->thread_count > 0
                      ? (config->thread_count < DAV1D_MAX_THREADS ? config->thread_count
                                                                  : DAV1D_MAX_THREADS)
                      : 0;
    s.max_frame_delay = dvp_env_int("MEDIAKIT_DAV1D_MAX_FRAME_DELAY", 0, DAV1D_MAX_FRAME_DELAY, 0);
    s.all_layers = 0;     /* as FFmpeg's libdav1d ("alllayers" defaults to 0) */
    /* A bound on what a damaged or hostile header can make dav1d allocate: the
     * largest picture any AV1 level allows (level 7.x: 16384x8704) fits. */
    s.frame_size_limit = 16384u * 16384u;
    s.apply_grain = 1;
    s.operating_point = 0;
    if (mkp_log_level(dvp_host) >= MK_LOG_ERROR) {
        s.logger.cookie = NULL;
        s.logger.callback = dvp_log;
    } else {
        s.logger.callback = NULL;
    }

    dvp_decoder *dec = calloc(1, sizeof(*dec));
    if (dec == NULL) {
        dvp_write_error(errbuf, errbuf_size, "dav1d av1: create: out of memory");
        return MK_ENOMEM;
    }
    int ret = dav1d_open(&dec->ctx, &s);
    if (ret < 0) {
        int e = -ret;
        dvp_write_error(errbuf, errbuf_size, "dav1d av1: dav1d_open failed: %s (error %d)",
                        strerror(e), ret);
        free(dec);
        return ret == DAV1D_ERR(ENOMEM) ? MK_ENOMEM : MK_EFAIL;
    }
    *decoder = dec;
    *vtable = &dvp_vtable;
    return MK_OK;
}

/* ------------------------------------------------------------------------ */
/* Descriptor                                                                 */
/* ------------------------------------------------------------------------ */

static const mk_plugin_decoder_backend dvp_backends[] = {
    {
        sizeof(mk_plugin_decoder_backend),
        MK_MEDIA_VIDEO,
        "av1",
        "dav1d",
        200,
        dvp_create,
    },
};

MKP_DECODER_FACTORY(dvp_decoder_factory, dvp_backends, 1);

MKP_DECODER_PLUGIN(dvp, dvp_host, "dav1d", DVP_PLUGIN_VERSION, "libdav1d ", dav1d_version(),
                   "AV1 decoder from VideoLAN's libdav1d", dvp_decoder_factory)
