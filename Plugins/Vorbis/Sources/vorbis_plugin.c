/*
 * vorbis_plugin.c — MediaKit codec plugin: the Vorbis decoder of libvorbis and
 * the encoder of libvorbisenc (ABI 2.1, see "Encoder" below) behind the C ABI of
 * mediakit/mediakit_plugin.h.
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
#include <vorbis/vorbisenc.h>

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
/* Encoder (plugin ABI 2.1)                                                    */
/* ------------------------------------------------------------------------ */
/*
 * libvorbisenc, set up as FFmpeg's libvorbis wrapper sets it up: with a quality
 * (`-q:a Q`) vorbis_encode_setup_vbr(Q / 10), with a bit rate (`-b:a B`) managed ABR at B,
 * with neither quality 3. Input: planar float in WAVE order, any rate, 1-8 channels
 * (3-8 reordered to Vorbis order as the wrapper does, 9-255 passed as they come). Frame
 * size: any. Magic cookie: the three header packets in Xiph lacing. Delay: 0, the granule
 * positions say everything: a packet's pts is the previous packet's granule position and
 * its duration the difference (the first audio packet decodes to nothing), so pts +
 * duration of the last packet is the input length.
 */

static const int32_t vbe_formats[] = { MK_SAMPLES_F32P, 0 };

typedef struct vbe_encoder {
    vorbis_info vi;
    vorbis_dsp_state vd;
    vorbis_block vb;
    int have_dsp, have_block;
    int channels, rate;
    int64_t last_granule;
    ogg_packet op;
    int has_op, draining, eos;
    uint8_t *head;
    size_t head_size;
    char last_error[VBP_ERROR_SIZE];
} vbe_encoder;

/* Moves libvorbis' next packet, if any, into e->op. */
static int32_t vbe_next_packet(vbe_encoder *e)
{
    for (;;) {
        if (vorbis_bitrate_flushpacket(&e->vd, &e->op) == 1) {
            e->has_op = 1;
            return MK_OK;
        }
        int r = vorbis_analysis_blockout(&e->vd, &e->vb);
        if (r == 0)
            return MK_OK;
        if (r < 0 || vorbis_analysis(&e->vb, NULL) < 0 || vorbis_bitrate_addblock(&e->vb) < 0) {
            mkp_write_error(e->last_error, sizeof(e->last_error), "vorbis encoder: libvorbis failed to analyse a block");
            return MK_EFAIL;
        }
    }
}

static int32_t vbe_get_info(void *encoder, mk_plugin_encoder_info *info)
{
    vbe_encoder *e = encoder;
    if (e == NULL || info == NULL || info->struct_size < sizeof(uint32_t))
        return MK_EINVAL;
    mk_plugin_encoder_info own;
    memset(&own, 0, sizeof(own));
    own.struct_size = sizeof(own);
    own.sample_rate = e->rate;
    own.channels = e->channels;
    own.bit_rate = e->vi.bitrate_nominal > 0 ? e->vi.bitrate_nominal : 0;
    own.extradata = e->head;
    own.extradata_size = e->head_size;
    own.packet_time_base_num = 1;
    own.packet_time_base_den = e->rate;
    mkp_fill_struct(info, &own, sizeof(own));
    return MK_OK;
}

static int32_t vbe_send_frame(void *encoder, const mk_plugin_frame *frame)
{
    vbe_encoder *e = encoder;
    if (e == NULL)
        return MK_EINVAL;
    e->last_error[0] = '\0';
    if (frame == NULL) {
        if (e->draining)
            return MK_EOF;
        e->draining = 1;
        vorbis_analysis_wrote(&e->vd, 0);
        return MK_OK;
    }
    if (e->draining)
        return MK_EOF;
    int n = e->channels;
    if (frame->struct_size < VBP_FRAME_MIN_SIZE || frame->format != MK_SAMPLES_F32P || frame->channels != n ||
        frame->sample_rate != e->rate || frame->nb_samples <= 0 || frame->plane_count < (n < 8 ? n : 8) || n > 8) {
        mkp_write_error(e->last_error, sizeof(e->last_error),
                        "vorbis encoder: send_frame: a frame of format %d, %d Hz, %d channels, %d samples; it was "
                        "opened for planar float (%d), %d Hz, %d channels",
                        frame->format, frame->sample_rate, frame->channels, frame->nb_samples, MK_SAMPLES_F32P, e->rate,
                        n);
        return MK_EINVAL;
    }
    float **buf = vorbis_analysis_buffer(&e->vd, frame->nb_samples);
    const uint8_t *order = n > 2 ? mkp_vorbis_to_wave[n - 1] : NULL;
    size_t bytes = (size_t)frame->nb_samples * sizeof(float);
    for (int c = 0; c < n; c++) {
        if (frame->planes[c] == NULL || frame->strides[c] < (int64_t)bytes) {
            mkp_write_error(e->last_error, sizeof(e->last_error), "vorbis encoder: plane %d is NULL or short", c);
            return MK_EINVAL;
        }
        memcpy(buf[order != NULL ? order[c] : c], frame->planes[c], bytes);
    }
    if (vorbis_analysis_wrote(&e->vd, frame->nb_samples) < 0) {
        mkp_write_error(e->last_error, sizeof(e->last_error), "vorbis encoder: vorbis_analysis_wrote failed");
        return MK_EFAIL;
    }
    return MK_OK;
}

static int32_t vbe_receive_packet(void *encoder, mk_plugin_encoded_packet *packet)
{
    vbe_encoder *e = encoder;
    if (e == NULL || packet == NULL || packet->struct_size < MKP_END_OF(mk_plugin_encoded_packet, duration))
        return MK_EINVAL;
    e->has_op = 0;
    if (e->eos)
        return MK_EOF;
    int32_t status = vbe_next_packet(e);
    if (status != MK_OK)
        return status;
    if (!e->has_op)
        return e->draining ? (e->eos = 1, MK_EOF) : MK_EAGAIN;
    if (e->op.e_o_s)
        e->eos = 1;
    mk_plugin_encoded_packet own;
    memset(&own, 0, sizeof(own));
    own.struct_size = sizeof(own);
    own.flags = MK_PACKET_FLAG_KEY;
    own.data = e->op.packet;
    own.size = (size_t)e->op.bytes;
    int64_t granule = e->op.granulepos >= 0 ? e->op.granulepos : e->last_granule;
    own.pts = e->last_granule;
    own.dts = e->last_granule;
    own.duration = granule - e->last_granule;
    e->last_granule = granule;
    mkp_fill_struct(packet, &own, sizeof(own));
    return MK_OK;
}

static void vbe_destroy(void *encoder)
{
    vbe_encoder *e = encoder;
    if (e == NULL)
        return;
    if (e->have_block)
        vorbis_block_clear(&e->vb);
    if (e->have_dsp)
        vorbis_dsp_clear(&e->vd);
    vorbis_info_clear(&e->vi);
    free(e->head);
    free(e);
}

static const char *vbe_last_error(void *encoder)
{
    vbe_encoder *e = encoder;
    return e != NULL ? e->last_error : "";
}

static const mk_plugin_encoder_vtable vbe_vtable = {
    sizeof(mk_plugin_encoder_vtable), vbe_get_info, vbe_send_frame, vbe_receive_packet, vbe_destroy, vbe_last_error,
};

/* Appends a Xiph lacing value for `size` to p; returns the bytes written. */
static size_t vbe_lace(uint8_t *p, long size)
{
    size_t n = 0;
    for (; size >= 255; size -= 255)
        p[n++] = 255;
    p[n++] = (uint8_t)size;
    return n;
}

static int32_t vbe_create(const mk_plugin_encoder_config *config, void **encoder,
                          const mk_plugin_encoder_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    int32_t checked = mkp_check_encoder_create("vorbis", config, encoder, vtable, errbuf, errbuf_size, "vorbis", 8,
                                               vbe_formats);
    if (checked != MK_OK)
        return checked;
    if (config->has_quality && (config->quality < -1 || config->quality > 10)) {
        mkp_write_error(errbuf, errbuf_size, "vorbis encoder: quality %g: it accepts -1 to 10", config->quality);
        return MK_EUNSUPPORTED;
    }
    vbe_encoder *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        mkp_write_error(errbuf, errbuf_size, "vorbis encoder: create: out of memory");
        return MK_ENOMEM;
    }
    e->channels = config->channels;
    e->rate = config->sample_rate;
    vorbis_info_init(&e->vi);
    int r;
    if (config->has_quality || config->bit_rate <= 0)
        r = vorbis_encode_setup_vbr(&e->vi, e->channels, e->rate, (float)(config->has_quality ? config->quality : 3.0) / 10.0f);
    else
        r = vorbis_encode_setup_managed(&e->vi, e->channels, e->rate, -1, (long)config->bit_rate, -1);
    if (r == 0)
        r = vorbis_encode_setup_init(&e->vi);
    if (r != 0) {
        if (config->has_quality || config->bit_rate <= 0)
            mkp_write_error(errbuf, errbuf_size, "vorbis encoder: libvorbisenc has no mode for %d Hz, %d channels at quality %g",
                            e->rate, e->channels, config->has_quality ? config->quality : 3.0);
        else
            mkp_write_error(errbuf, errbuf_size, "vorbis encoder: libvorbisenc has no mode for %d Hz, %d channels at %lld bit/s",
                            e->rate, e->channels, (long long)config->bit_rate);
        vbe_destroy(e);
        return MK_EUNSUPPORTED;
    }
    if (vorbis_analysis_init(&e->vd, &e->vi) != 0) {
        mkp_write_error(errbuf, errbuf_size, "vorbis encoder: vorbis_analysis_init failed");
        vbe_destroy(e);
        return MK_EFAIL;
    }
    e->have_dsp = 1;
    vorbis_block_init(&e->vd, &e->vb);
    e->have_block = 1;
    vorbis_comment vc;
    vorbis_comment_init(&vc);
    vorbis_comment_add_tag(&vc, "ENCODER", "MediaKit");
    ogg_packet h[3];
    r = vorbis_analysis_headerout(&e->vd, &vc, &h[0], &h[1], &h[2]);
    if (r == 0) {
        size_t total = 1 + (size_t)h[0].bytes / 255 + 1 + (size_t)h[1].bytes / 255 + 1 +
                       (size_t)h[0].bytes + (size_t)h[1].bytes + (size_t)h[2].bytes;
        e->head = malloc(total);
        if (e->head != NULL) {
            uint8_t *p = e->head;
            *p++ = 2;
            p += vbe_lace(p, h[0].bytes);
            p += vbe_lace(p, h[1].bytes);
            for (int i = 0; i < 3; i++) {
                memcpy(p, h[i].packet, (size_t)h[i].bytes);
                p += h[i].bytes;
            }
            e->head_size = (size_t)(p - e->head);
        }
    }
    vorbis_comment_clear(&vc);
    if (r != 0 || e->head == NULL) {
        mkp_write_error(errbuf, errbuf_size, "vorbis encoder: writing the headers failed");
        vbe_destroy(e);
        return r != 0 ? MK_EFAIL : MK_ENOMEM;
    }
    *encoder = e;
    *vtable = &vbe_vtable;
    return MK_OK;
}

static const mk_plugin_encoder_backend vbe_backends[] = {
    {
        .struct_size = sizeof(mk_plugin_encoder_backend),
        .media_type = MK_MEDIA_AUDIO,
        .codec = "vorbis",
        .name = "vorbis",
        .priority = 200,
        .sample_formats = vbe_formats,
        .sample_rates = NULL,
        .min_sample_rate = 1,
        .max_sample_rate = 0,
        .max_channels = 8,
        .channel_masks = NULL,
        .min_bit_rate = 32000,
        .max_bit_rate = 500000,
        .create = vbe_create,
    },
};

MKP_ENCODER_FACTORY(vbe_encoder_factory, vbe_backends, 1);

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

MKP_CODEC_PLUGIN(vbp, vbp_host, "vorbis", VBP_PLUGIN_VERSION, "", vorbis_version_string(),
                 "Vorbis decoder from Xiph's libvorbis, encoder from libvorbisenc", &vbp_decoder_factory,
                 &vbe_encoder_factory)
