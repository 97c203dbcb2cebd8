/*
 * vorbis_plugin.c — MediaKit codec plugin: the Vorbis decoder of libvorbis
 * behind the C ABI of mediakit/mediakit_plugin.h.
 *
 * Exports exactly one symbol, mediakit_plugin_entry(); everything else is
 * static. One backend: codec "vorbis", name "vorbis", priority 200 (above the
 * FFmpeg plugin's 100).
 *
 * Extradata: the three header packets (identification, comment, setup) in
 * Xiph lacing, as FFmpeg and the Ogg/Matroska/MP4 demuxers give them: a byte
 * 0x02 (packet count - 1), the sizes of the first two packets as lacing values
 * (runs of 255 plus a final byte < 255), then the three packets back to back
 * (the third takes the rest). The older layout of three 16-bit big-endian
 * sizes each before its packet (first size 30, the identification header's)
 * is accepted too, as FFmpeg accepts it.
 *
 * Output: interleaved signed 16-bit (MK_SAMPLES_S16), converted here exactly as
 * FFmpeg's libvorbis wrapper does (`ffmpeg -c:a libvorbis`): each float
 * sample times 32767, truncated toward zero, clipped to int16. Why not float:
 * the host's float-to-s16 conversion is round(x * 32768); against the
 * wrapper's trunc(x * 32767) that differs by up to 2 near full scale (the
 * scale alone moves a sample by |x| < 1, the rounding by up to 1 more), which
 * would break the "within 1 per sample" comparison with ffmpeg. Converting
 * the wrapper's way makes s16 output bit-identical to it, at the cost of the
 * sub-LSB precision of float output (f32 output from the host is these s16
 * values / 32768, as `ffmpeg -c:a libvorbis -f f32le` gives too).
 *
 * Channel order: Vorbis order, unchanged, as FFmpeg's libvorbis wrapper
 * outputs it (it does not reorder). channel_mask is mono/stereo for 1 and 2
 * channels and 0 (unknown, not WAVE order) for more.
 *
 * Send/receive model: each packet goes through vorbis_synthesis and
 * vorbis_synthesis_blockin at once, and every sample libvorbis then releases
 * becomes one frame that waits for receive_frame(); send_packet() returns
 * MK_EAGAIN (packet not taken) while a frame waits. The first audio
 * packet yields no samples (it only primes the overlap), like libvorbis
 * always does. Header packets met in the stream are skipped (as FFmpeg's
 * wrapper does); a packet libvorbis rejects is consumed and reported as
 * MK_EDATA, the next packet decodes normally. Draining returns the
 * waiting frame, then MK_EOF. No sample is trimmed here: see
 * "Trimming" in mediakit_plugin.h. Frame pts is the pts of the packet whose
 * decoding released the samples.
 *
 * Frames: each has its own heap buffer; release() frees it. Frames outlive the
 * decoder. Threads: as tagged in mediakit_plugin.h (one instance is used by
 * one thread at a time; create() and release() from any thread).
 */

#include "mediakit/mediakit_plugin.h"
#include "../../Common/mk_plugin_support.h"

#include <vorbis/codec.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VBP_PLUGIN_VERSION "1.0.0"
#define VBP_ERROR_SIZE 512

#define VBP_CONFIG_MIN_SIZE MKP_END_OF(mk_plugin_codec_config, channels)
#define VBP_PACKET_MIN_SIZE MKP_END_OF(mk_plugin_packet, duration)
#define VBP_FRAME_MIN_SIZE MKP_END_OF(mk_plugin_frame, release_opaque)

typedef struct vbp_decoder {
    vorbis_info vi;
    vorbis_comment vc;
    vorbis_dsp_state vd;
    vorbis_block vb;
    int dsp_ready;            /* vd and vb initialised */
    int channels;
    int rate;
    int32_t tb_num, tb_den;
    ogg_int64_t packetno;
    mk_plugin_frame ready;    /* a decoded frame waiting for receive_frame */
    int has_ready;
    int draining;
    char last_error[VBP_ERROR_SIZE];
} vbp_decoder;

/* Error formatting and create() checks shared by the C plugins. */
#define vbp_write_error mkp_write_error

#define vbp_set_error(dec, ...) \
    vbp_write_error((dec)->last_error, sizeof((dec)->last_error), __VA_ARGS__)

static const char *vbp_strerror(int err)
{
    switch (err) {
    case OV_ENOTVORBIS: return "not Vorbis data";
    case OV_EBADHEADER: return "invalid Vorbis header";
    case OV_EVERSION:   return "unsupported Vorbis version";
    case OV_ENOTAUDIO:  return "not an audio packet";
    case OV_EBADPACKET: return "invalid packet";
    case OV_EFAULT:     return "internal libvorbis error";
    case OV_EIMPL:      return "feature not implemented by libvorbis";
    case OV_EINVAL:     return "invalid argument";
    default:            return "libvorbis error";
    }
}

static void vbp_release(void *opaque)
{
    free(opaque);
}

static void vbp_drop_ready(vbp_decoder *dec)
{
    if (dec->has_ready) {
        dec->ready.release(dec->ready.release_opaque);
        dec->has_ready = 0;
    }
}

static void vbp_free(vbp_decoder *dec)
{
    if (dec == NULL)
        return;
    vbp_drop_ready(dec);
    if (dec->dsp_ready) {
        vorbis_block_clear(&dec->vb);
        vorbis_dsp_clear(&dec->vd);
    }
    vorbis_comment_clear(&dec->vc);
    vorbis_info_clear(&dec->vi);
    free(dec);
}

/* ------------------------------------------------------------------------ */
/* Headers                                                                    */
/* ------------------------------------------------------------------------ */

/* Splits the extradata into the three header packets. */
static int vbp_split_headers(const uint8_t *d, size_t n, const uint8_t *hdr[3], size_t len[3],
                             char *errbuf, size_t errbuf_size)
{
    if (n == 0 || d == NULL) {
        vbp_write_error(errbuf, errbuf_size,
                        "vorbis: no extradata: the three Vorbis header packets are needed");
        return MK_EDATA;
    }
    if (n >= 2 && d[0] == 0 && d[1] == 30) {
        /* three times: 16-bit big-endian size, packet */
        size_t pos = 0;
        for (int i = 0; i < 3; i++) {
            if (n - pos < 2) {
                vbp_write_error(errbuf, errbuf_size,
                                "vorbis: extradata ends before the size of header %d", i + 1);
                return MK_EDATA;
            }
            size_t size = ((size_t)d[pos] << 8) | d[pos + 1];
            pos += 2;
            if (size > n - pos) {
                vbp_write_error(errbuf, errbuf_size,
                                "vorbis: header %d of %zu bytes runs past the %zu-byte extradata",
                                i + 1, size, n);
                return MK_EDATA;
            }
            hdr[i] = d + pos;
            len[i] = size;
            pos += size;
        }
        return MK_OK;
    }
    if (d[0] != 2) {
        vbp_write_error(errbuf, errbuf_size,
                        "vorbis: extradata starts with 0x%02x; expected 0x02 (three packets "
                        "in Xiph lacing)", d[0]);
        return MK_EDATA;
    }
    size_t pos = 1;
    for (int i = 0; i < 2; i++) {
        size_t size = 0;
        for (;;) {
            if (pos >= n) {
                vbp_write_error(errbuf, errbuf_size,
                                "vorbis: extradata ends inside the lacing of header %d", i + 1);
                return MK_EDATA;
            }
            uint8_t b = d[pos++];
            size += b;
            if (b != 255)
                break;
        }
        len[i] = size;
    }
    if (len[0] > n - pos || len[1] > n - pos - len[0] || n - pos - len[0] - len[1] == 0) {
        vbp_write_error(errbuf, errbuf_size,
                        "vorbis: header sizes %zu + %zu do not leave a setup header in the "
                        "%zu-byte extradata", len[0], len[1], n);
        return MK_EDATA;
    }
    hdr[0] = d + pos;
    hdr[1] = hdr[0] + len[0];
    hdr[2] = hdr[1] + len[1];
    len[2] = n - pos - len[0] - len[1];
    return MK_OK;
}

/* ------------------------------------------------------------------------ */
/* Decoder instance                                                           */
/* ------------------------------------------------------------------------ */

/* float -> s16 as FFmpeg's libvorbis wrapper: trunc(x * 32767), clipped. */
static inline int16_t vbp_to_s16(float x)
{
    float v = x * 32767.f;
    if (v >= 32767.f)
        return 32767;
    if (v <= -32768.f)
        return -32768;
    return (int16_t)v; /* truncation toward zero, as C's float -> int */
}

static int32_t vbp_send_packet(void *decoder, const mk_plugin_packet *packet)
{
    vbp_decoder *dec = decoder;
    if (dec == NULL)
        return MK_EINVAL;
    int begun = mkp_begin_send("vorbis", packet, &dec->draining, VBP_PACKET_MIN_SIZE,
                               dec->last_error, sizeof(dec->last_error));
    if (begun != MKP_DECODE)
        return begun;
    if (dec->draining) {
        vbp_set_error(dec, "vorbis: send_packet after the end of stream; flush first");
        return MK_EOF;
    }
    if (dec->has_ready)
        return MK_EAGAIN;
    if (packet->size == 0)
        return MK_OK;
    if (packet->size > LONG_MAX) {
        vbp_set_error(dec, "vorbis: send_packet: packet of %zu bytes is too large", packet->size);
        return MK_EDATA;
    }

    ogg_packet op;
    memset(&op, 0, sizeof(op));
    op.packet = (unsigned char *)packet->data; /* libvorbis only reads it */
    op.bytes = (long)packet->size;
    op.granulepos = -1;
    op.packetno = dec->packetno++;
    int ret = vorbis_synthesis(&dec->vb, &op);
    if (ret == OV_ENOTAUDIO)
        return MK_OK; /* a header packet in the stream: nothing to decode */
    if (ret != 0) {
        vbp_set_error(dec, "vorbis: decoding a packet of %zu bytes (pts %lld): %s",
                      packet->size, (long long)packet->pts, vbp_strerror(ret));
        return MK_EDATA;
    }
    ret = vorbis_synthesis_blockin(&dec->vd, &dec->vb);
    if (ret != 0) {
        vbp_set_error(dec, "vorbis: vorbis_synthesis_blockin: %s", vbp_strerror(ret));
        return MK_EDATA;
    }

    float **pcm = NULL;
    int available = vorbis_synthesis_pcmout(&dec->vd, NULL);
    if (available <= 0)
        return MK_OK; /* the first packet only primes the overlap */
    size_t bytes = (size_t)available * (size_t)dec->channels * sizeof(int16_t);
    int16_t *out = malloc(bytes);
    if (out == NULL) {
        vbp_set_error(dec, "vorbis: out of memory (%zu bytes)", bytes);
        return MK_ENOMEM;
    }
    int total = 0, n;
    while (total < available && (n = vorbis_synthesis_pcmout(&dec->vd, &pcm)) > 0) {
        if (n > available - total)
            n = available - total;
        for (int c = 0; c < dec->channels; c++) {
            const float *src = pcm[c];
            int16_t *dst = out + (size_t)total * dec->channels + c;
            for (int i = 0; i < n; i++)
                dst[(size_t)i * dec->channels] = vbp_to_s16(src[i]);
        }
        vorbis_synthesis_read(&dec->vd, n);
        total += n;
    }
    if (total == 0) {
        free(out);
        return MK_OK;
    }

    mk_plugin_frame *f = &dec->ready;
    memset(f, 0, sizeof(*f));
    f->media_type = MK_MEDIA_AUDIO;
    f->format = MK_SAMPLES_S16;
    f->pts = packet->pts;
    if (dec->tb_num > 0 && dec->tb_den > 0)
        f->duration = ((int64_t)total * dec->tb_den) / ((int64_t)dec->rate * dec->tb_num);
    f->sample_rate = dec->rate;
    f->channels = dec->channels;
    f->channel_mask = dec->channels == 1 ? 0x4 : dec->channels == 2 ? 0x3 : 0;
    f->nb_samples = total;
    f->plane_count = 1;
    f->planes[0] = (uint8_t *)out;
    f->strides[0] = (int64_t)total * dec->channels * (int64_t)sizeof(int16_t);
    f->release = vbp_release;
    f->release_opaque = out;
    dec->has_ready = 1;
    return MK_OK;
}

static int32_t vbp_receive_frame(void *decoder, mk_plugin_frame *frame)
{
    vbp_decoder *dec = decoder;
    if (dec == NULL || frame == NULL)
        return MK_EINVAL;
    return mkp_hand_over("vorbis", &dec->ready, &dec->has_ready, dec->draining, frame,
                         VBP_FRAME_MIN_SIZE, dec->last_error, sizeof(dec->last_error));
}

static void vbp_flush(void *decoder)
{
    vbp_decoder *dec = decoder;
    if (dec == NULL)
        return;
    vbp_drop_ready(dec);
    vorbis_synthesis_restart(&dec->vd); /* forget the overlap: the next packet primes again */
    dec->draining = 0;
}

static void vbp_destroy(void *decoder)
{
    vbp_free(decoder);
}

static const char *vbp_last_error(void *decoder)
{
    vbp_decoder *dec = decoder;
    if (dec == NULL)
        return "vorbis: NULL decoder";
    return dec->last_error;
}

static const mk_plugin_decoder_vtable vbp_vtable = {
    sizeof(mk_plugin_decoder_vtable),
    vbp_send_packet,
    vbp_receive_frame,
    vbp_flush,
    vbp_destroy,
    vbp_last_error,
};

static int32_t vbp_create(const mk_plugin_codec_config *config, void **decoder,
                          const mk_plugin_decoder_vtable **vtable, char *errbuf,
                          size_t errbuf_size)
{
    int checked = mkp_check_create("vorbis", config, decoder, vtable, errbuf, errbuf_size,
                                   VBP_CONFIG_MIN_SIZE, "vorbis", MK_MEDIA_AUDIO);
    if (checked != MK_OK)
        return checked;
    const uint8_t *hdr[3];
    size_t len[3];
    int status = vbp_split_headers(config->extradata, config->extradata_size, hdr, len,
                                   errbuf, errbuf_size);
    if (status != MK_OK)
        return status;

    vbp_decoder *dec = calloc(1, sizeof(*dec));
    if (dec == NULL) {
        vbp_write_error(errbuf, errbuf_size, "vorbis: create: out of memory");
        return MK_ENOMEM;
    }
    vorbis_info_init(&dec->vi);
    vorbis_comment_init(&dec->vc);
    static const char *const names[3] = { "identification", "comment", "setup" };
    for (int i = 0; i < 3; i++) {
        if (len[i] > LONG_MAX) {
            vbp_write_error(errbuf, errbuf_size, "vorbis: %s header too large", names[i]);
            vbp_free(dec);
            return MK_EDATA;
        }
        ogg_packet op;
        memset(&op, 0, sizeof(op));
        op.packet = (unsigned char *)hdr[i];
        op.bytes = (long)len[i];
        op.b_o_s = i == 0;
        op.granulepos = -1;
        op.packetno = i;
        int ret = vorbis_synthesis_headerin(&dec->vi, &dec->vc, &op);
        if (ret != 0) {
            vbp_write_error(errbuf, errbuf_size, "vorbis: the %s header (%zu bytes) is "
                            "rejected by libvorbis: %s", names[i], len[i], vbp_strerror(ret));
            vbp_free(dec);
            return ret == OV_EVERSION || ret == OV_EIMPL ? MK_EUNSUPPORTED
                                                         : MK_EDATA;
        }
    }
    if (dec->vi.channels <= 0 || dec->vi.rate <= 0 || dec->vi.rate > INT32_MAX) {
        vbp_write_error(errbuf, errbuf_size, "vorbis: the header says %d channels at %ld Hz",
                        dec->vi.channels, dec->vi.rate);
        vbp_free(dec);
        return MK_EDATA;
    }
    if (vorbis_synthesis_init(&dec->vd, &dec->vi) != 0) {
        vbp_write_error(errbuf, errbuf_size, "vorbis: vorbis_synthesis_init failed");
        vbp_free(dec);
        return MK_EFAIL;
    }
    if (vorbis_block_init(&dec->vd, &dec->vb) != 0) {
        vorbis_dsp_clear(&dec->vd);
        vbp_write_error(errbuf, errbuf_size, "vorbis: vorbis_block_init failed");
        vbp_free(dec);
        return MK_EFAIL;
    }
    dec->dsp_ready = 1;
    dec->channels = dec->vi.channels;
    dec->rate = (int)dec->vi.rate;
    dec->packetno = 3;
    if (config->time_base_num > 0 && config->time_base_den > 0) {
        dec->tb_num = config->time_base_num;
        dec->tb_den = config->time_base_den;
    }
    *decoder = dec;
    *vtable = &vbp_vtable;
    return MK_OK;
}

/* ------------------------------------------------------------------------ */
/* Descriptor                                                                 */
/* ------------------------------------------------------------------------ */

static const mk_plugin_decoder_backend vbp_backends[] = {
    {
        sizeof(mk_plugin_decoder_backend),
        MK_MEDIA_AUDIO,
        "vorbis",
        "vorbis",
        200,
        vbp_create,
    },
};

MKP_DECODER_FACTORY(vbp_decoder_factory, vbp_backends, 1);

static const mk_host *vbp_host;

MKP_DECODER_PLUGIN(vbp, vbp_host, "vorbis", VBP_PLUGIN_VERSION, "", vorbis_version_string(),
                   "Vorbis decoder from Xiph's libvorbis", vbp_decoder_factory)
