/*
 * opus_plugin.c — MediaKit codec plugin: the Opus decoder and encoder of libopus
 * behind the C ABI of mediakit/mediakit_plugin.h (the encoder: ABI 2.1, see "Encoder"
 * below).
 *
 * Exports exactly one symbol, mediakit_plugin_entry(); everything else is
 * static. One backend: codec "opus", name "opus", priority 200 (above the
 * FFmpeg plugin's 100).
 *
 * Extradata: the OpusHead packet (RFC 7845, 5.1): "OpusHead", version,
 * channel count, pre-skip, input sample rate, output gain (Q7.8 dB), mapping
 * family; for families other than 0, stream count, coupled count and one
 * mapping byte per channel. Families 0 (mono/stereo), 1 (Vorbis order, up to
 * 8 channels), 2 (ambisonics, plain multistream) and 255 (no defined layout)
 * are decoded; family 3 (projection) and unknown families are refused. With
 * no extradata the stream is taken as family 0 with config.channels (1, else
 * 2) channels, as FFmpeg does.
 *
 * Output is meant to match `ffmpeg -c:a libopus` (FFmpeg's libopus wrapper):
 *   - opus_multistream_decoder at 48 kHz (a plain opus_decoder for one stream in stream
 *     order: the same samples, see opp_decoder), the header's output gain applied
 *     with OPUS_SET_GAIN;
 *   - interleaved float (MK_SAMPLES_F32), from opus_multistream_decode_float.
 *     FFmpeg's wrapper decodes to s16 unless float is requested; libopus makes
 *     that s16 from the same float output with lrintf(x * 32768) and clipping,
 *     exactly the host's float-to-s16 conversion, so s16 from either side is
 *     identical except where libopus soft-clips output beyond full scale
 *     (its s16 path only);
 *   - channel order: for 3 to 8 channels, the Vorbis order of the stream is
 *     turned into FFmpeg's (WAVE) order by permuting the mapping table, as the
 *     wrapper does (in every mapping family); channel_mask is the matching
 *     WAVE mask for family 0 and 1, 0 (unknown) otherwise.
 *   - Pre-skip is NOT dropped: every decoded sample is output and frame pts is
 *     the packet's pts. Trimming (pre-skip, end trim) is the host's job; see
 *     "Trimming" in mediakit_plugin.h.
 *
 * Send/receive model: each packet decodes at once into one frame that waits
 * for receive_frame(); send_packet() returns MK_EAGAIN (packet not
 * taken) while a frame waits. There is no decoder delay: draining only
 * returns the waiting frame, then MK_EOF. An undecodable packet is
 * consumed and reported as MK_EDATA; the next packet decodes normally.
 * A zero-size packet is a no-op.
 *
 * Frames: each has its own heap buffer; release() frees it. Frames outlive the
 * decoder. Threads: as tagged in mediakit_plugin.h (one instance is used by
 * one thread at a time; create() and release() from any thread).
 */

#include "mediakit/mediakit_plugin.h"
#include "../../Common/mk_plugin_support.h"

#include <opus/opus.h>
#include <opus/opus_multistream.h>

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPP_PLUGIN_VERSION "1.0.0"
#define OPP_ERROR_SIZE 512
#define OPP_RATE 48000
#define OPP_MAX_FRAME 5760 /* 120 ms at 48 kHz: the longest Opus packet */
#define OPP_HEAD_SIZE 19

#define OPP_CONFIG_MIN_SIZE MKP_END_OF(mk_plugin_codec_config, channels)
#define OPP_PACKET_MIN_SIZE MKP_END_OF(mk_plugin_packet, duration)
#define OPP_FRAME_MIN_SIZE MKP_END_OF(mk_plugin_frame, release_opaque)

/* For n channels (3..8), output channel i is Vorbis-order channel
 * opp_vorbis_to_wave[n-1][i] (the order FFmpeg outputs). */
#define opp_vorbis_to_wave mkp_vorbis_to_wave

/* WAVE channel masks of those orders: mono (FC), stereo, 3.0, quad, 5.0,
 * 5.1, 6.1, 7.1. */
static const uint64_t opp_wave_masks[8] = {
    0x4, 0x3, 0x7, 0x33, 0x37, 0x3f, 0x70f, 0x63f,
};

typedef struct opp_decoder {
    /* One of the two: `single` for a stream of one Opus stream whose channels are in stream
     * order (mono, stereo: every family 0 file), `ms` for the rest. The output is the same
     * (libopus's multistream decoder runs the same decoder per stream, then copies channels),
     * but libopus 1.3's multistream calls recompute the decoders' sizes on every packet, and
     * that runs CPUID, which a virtual machine traps: measured here, 50 stereo packets took
     * 7 ms through opus_multistream_decode_float and 2.5 ms through opus_decode_float. */
    OpusDecoder *single;
    OpusMSDecoder *ms;
    int channels;
    uint64_t channel_mask;
    int32_t tb_num, tb_den;  /* packet time base; 0/0 if unknown */
    mk_plugin_frame ready;   /* a decoded frame waiting for receive_frame */
    int has_ready;
    int draining;
    char last_error[OPP_ERROR_SIZE];
} opp_decoder;

/* Error formatting and create() checks shared by the C plugins. */
#define opp_write_error mkp_write_error

#define opp_set_error(dec, ...) \
    opp_write_error((dec)->last_error, sizeof((dec)->last_error), __VA_ARGS__)

static int opp_map_error(int err)
{
    switch (err) {
    case OPUS_BAD_ARG:        return MK_EINVAL;
    case OPUS_ALLOC_FAIL:     return MK_ENOMEM;
    case OPUS_UNIMPLEMENTED:  return MK_EUNSUPPORTED;
    case OPUS_BUFFER_TOO_SMALL:
    case OPUS_INVALID_PACKET:
    case OPUS_INTERNAL_ERROR: return MK_EDATA;
    default:                  return MK_EFAIL;
    }
}

static void opp_release(void *opaque)
{
    free(opaque);
}

static void opp_drop_ready(opp_decoder *dec)
{
    if (dec->has_ready) {
        dec->ready.release(dec->ready.release_opaque);
        dec->has_ready = 0;
    }
}

/* ------------------------------------------------------------------------ */
/* OpusHead                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct opp_head {
    int channels;
    int pre_skip;
    int gain_q8;       /* output gain, Q7.8 dB */
    int family;
    int streams;
    int coupled;
    uint8_t mapping[255];
} opp_head;

static int opp_parse_head(const uint8_t *d, size_t n, int config_channels, opp_head *h,
                          char *errbuf, size_t errbuf_size)
{
    memset(h, 0, sizeof(*h));
    if (n == 0) {
        h->channels = config_channels == 1 ? 1 : 2;
        if (config_channels > 2) {
            opp_write_error(errbuf, errbuf_size,
                            "opus: %d channels but no OpusHead (extradata) to map them",
                            config_channels);
            return MK_EDATA;
        }
        h->streams = 1;
        h->coupled = h->channels - 1;
        h->mapping[0] = 0;
        h->mapping[1] = 1;
        return MK_OK;
    }
    if (n < OPP_HEAD_SIZE || memcmp(d, "OpusHead", 8) != 0) {
        opp_write_error(errbuf, errbuf_size,
                        "opus: extradata is not an OpusHead (%zu bytes%s)", n,
                        n >= 8 && memcmp(d, "OpusHead", 8) != 0 ? ", no \"OpusHead\" magic" : "");
        return MK_EDATA;
    }
    if ((d[8] >> 4) != 0) {
        opp_write_error(errbuf, errbuf_size, "opus: OpusHead version %u is not supported "
                        "(major version must be 0)", d[8]);
        return MK_EUNSUPPORTED;
    }
    h->channels = d[9];
    h->pre_skip = d[10] | (d[11] << 8);
    h->gain_q8 = (int16_t)(uint16_t)(d[16] | (d[17] << 8));
    h->family = d[18];
    if (h->channels == 0) {
        opp_write_error(errbuf, errbuf_size, "opus: OpusHead says 0 channels");
        return MK_EDATA;
    }
    if (h->family == 0) {
        if (h->channels > 2) {
            opp_write_error(errbuf, errbuf_size,
                            "opus: OpusHead mapping family 0 with %d channels (at most 2)",
                            h->channels);
            return MK_EDATA;
        }
        h->streams = 1;
        h->coupled = h->channels - 1;
        h->mapping[0] = 0;
        h->mapping[1] = 1;
        return MK_OK;
    }
    if (h->family != 1 && h->family != 2 && h->family != 255) {
        opp_write_error(errbuf, errbuf_size,
                        "opus: OpusHead channel mapping family %d is not supported "
                        "(0, 1, 2 and 255 are)", h->family);
        return MK_EUNSUPPORTED;
    }
    if (h->family == 1 && h->channels > 8) {
        opp_write_error(errbuf, errbuf_size,
                        "opus: OpusHead mapping family 1 with %d channels (at most 8)",
                        h->channels);
        return MK_EDATA;
    }
    if (n < (size_t)OPP_HEAD_SIZE + 2 + (size_t)h->channels) {
        opp_write_error(errbuf, errbuf_size,
                        "opus: OpusHead of %zu bytes is too short for the channel mapping "
                        "table of %d channels (%d bytes needed)", n, h->channels,
                        OPP_HEAD_SIZE + 2 + h->channels);
        return MK_EDATA;
    }
    h->streams = d[19];
    h->coupled = d[20];
    if (h->streams == 0 || h->coupled > h->streams || h->streams + h->coupled > 255) {
        opp_write_error(errbuf, errbuf_size,
                        "opus: OpusHead has %d streams, %d of them coupled", h->streams,
                        h->coupled);
        return MK_EDATA;
    }
    for (int i = 0; i < h->channels; i++) {
        uint8_t m = d[21 + i];
        if (m != 255 && m >= h->streams + h->coupled) {
            opp_write_error(errbuf, errbuf_size,
                            "opus: OpusHead maps channel %d to decoded channel %u; "
                            "there are %d", i, m, h->streams + h->coupled);
            return MK_EDATA;
        }
        h->mapping[i] = m;
    }
    return MK_OK;
}

/* ------------------------------------------------------------------------ */
/* Decoder instance                                                           */
/* ------------------------------------------------------------------------ */

/* Frees the libopus decoder and `dec` (not a waiting frame: opp_drop_ready first). */
static void opp_free_decoders(opp_decoder *dec)
{
    if (dec->single != NULL)
        opus_decoder_destroy(dec->single);
    if (dec->ms != NULL)
        opus_multistream_decoder_destroy(dec->ms);
    free(dec);
}

static int32_t opp_send_packet(void *decoder, const mk_plugin_packet *packet)
{
    opp_decoder *dec = decoder;
    if (dec == NULL)
        return MK_EINVAL;
    int begun = mkp_begin_send("opus", packet, &dec->draining, OPP_PACKET_MIN_SIZE,
                               dec->last_error, sizeof(dec->last_error));
    if (begun != MKP_DECODE)
        return begun;
    if (dec->draining) {
        opp_set_error(dec, "opus: send_packet after the end of stream; flush first");
        return MK_EOF;
    }
    if (dec->has_ready)
        return MK_EAGAIN;
    if (packet->size == 0)
        return MK_OK;
    if (packet->size > INT32_MAX) {
        opp_set_error(dec, "opus: send_packet: packet of %zu bytes is too large", packet->size);
        return MK_EDATA;
    }

    /* Size the buffer from the first stream's TOC; every stream of a
     * multistream packet has the same duration. */
    int nb = opus_packet_get_nb_samples(packet->data, (opus_int32)packet->size, OPP_RATE);
    if (nb <= 0 || nb > OPP_MAX_FRAME)
        nb = OPP_MAX_FRAME;
    size_t bytes = (size_t)nb * (size_t)dec->channels * sizeof(float);
    float *pcm = malloc(bytes);
    if (pcm == NULL) {
        opp_set_error(dec, "opus: send_packet: out of memory (%zu bytes)", bytes);
        return MK_ENOMEM;
    }
    int got = dec->single != NULL
        ? opus_decode_float(dec->single, packet->data, (opus_int32)packet->size, pcm, nb, 0)
        : opus_multistream_decode_float(dec->ms, packet->data, (opus_int32)packet->size, pcm, nb, 0);
    if (got < 0) {
        free(pcm);
        opp_set_error(dec, "opus: decoding a packet of %zu bytes (pts %lld): %s",
                      packet->size, (long long)packet->pts, opus_strerror(got));
        return opp_map_error(got);
    }
    if (got == 0) {
        free(pcm);
        return MK_OK;
    }

    mk_plugin_frame *f = &dec->ready;
    memset(f, 0, sizeof(*f));
    f->media_type = MK_MEDIA_AUDIO;
    f->format = MK_SAMPLES_F32;
    f->pts = packet->pts;
    f->duration = 0;
    if (dec->tb_num > 0 && dec->tb_den > 0)
        f->duration = ((int64_t)got * dec->tb_den) / ((int64_t)OPP_RATE * dec->tb_num);
    if (f->duration <= 0)
        f->duration = packet->duration > 0 ? packet->duration : 0;
    f->sample_rate = OPP_RATE;
    f->channels = dec->channels;
    f->channel_mask = dec->channel_mask;
    f->nb_samples = got;
    f->plane_count = 1;
    f->planes[0] = (uint8_t *)pcm;
    f->strides[0] = (int64_t)got * dec->channels * (int64_t)sizeof(float);
    f->release = opp_release;
    f->release_opaque = pcm;
    dec->has_ready = 1;
    return MK_OK;
}

static int32_t opp_receive_frame(void *decoder, mk_plugin_frame *frame)
{
    opp_decoder *dec = decoder;
    if (dec == NULL || frame == NULL)
        return MK_EINVAL;
    return mkp_hand_over("opus", &dec->ready, &dec->has_ready, dec->draining, frame,
                         OPP_FRAME_MIN_SIZE, dec->last_error, sizeof(dec->last_error));
}

static void opp_flush(void *decoder)
{
    opp_decoder *dec = decoder;
    if (dec == NULL)
        return;
    opp_drop_ready(dec);
    if (dec->single != NULL)
        opus_decoder_ctl(dec->single, OPUS_RESET_STATE);
    else
        opus_multistream_decoder_ctl(dec->ms, OPUS_RESET_STATE);
    dec->draining = 0;
}

static void opp_destroy(void *decoder)
{
    opp_decoder *dec = decoder;
    if (dec == NULL)
        return;
    opp_drop_ready(dec);
    opp_free_decoders(dec);
}

static const char *opp_last_error(void *decoder)
{
    opp_decoder *dec = decoder;
    if (dec == NULL)
        return "opus: NULL decoder";
    return dec->last_error;
}

static const mk_plugin_decoder_vtable opp_vtable = {
    sizeof(mk_plugin_decoder_vtable),
    opp_send_packet,
    opp_receive_frame,
    opp_flush,
    opp_destroy,
    opp_last_error,
};

static int32_t opp_create(const mk_plugin_codec_config *config, void **decoder,
                          const mk_plugin_decoder_vtable **vtable, char *errbuf,
                          size_t errbuf_size)
{
    int checked = mkp_check_create("opus", config, decoder, vtable, errbuf, errbuf_size,
                                   OPP_CONFIG_MIN_SIZE, "opus", MK_MEDIA_AUDIO);
    if (checked != MK_OK)
        return checked;

    opp_head head;
    int status = opp_parse_head(config->extradata, config->extradata_size, config->channels,
                                &head, errbuf, errbuf_size);
    if (status != MK_OK)
        return status;

    /* FFmpeg's order: output channel i takes the stream channel that Vorbis
     * order puts at opp_vorbis_to_wave[n-1][i]. */
    uint8_t mapping[255];
    memcpy(mapping, head.mapping, sizeof(mapping));
    uint64_t mask = 0;
    if (head.channels <= 8) {
        if (head.channels > 2)
            for (int i = 0; i < head.channels; i++)
                mapping[i] = head.mapping[opp_vorbis_to_wave[head.channels - 1][i]];
        if (head.family <= 1)
            mask = opp_wave_masks[head.channels - 1];
    }

    opp_decoder *dec = calloc(1, sizeof(*dec));
    if (dec == NULL) {
        opp_write_error(errbuf, errbuf_size, "opus: create: out of memory");
        return MK_ENOMEM;
    }
    int err = OPUS_OK;
    int in_order = head.streams == 1 && head.coupled == head.channels - 1;
    for (int i = 0; in_order && i < head.channels; i++)
        in_order = mapping[i] == i;
    if (in_order)
        dec->single = opus_decoder_create(OPP_RATE, head.channels, &err);
    else
        dec->ms = opus_multistream_decoder_create(OPP_RATE, head.channels, head.streams,
                                                  head.coupled, mapping, &err);
    if ((dec->single == NULL && dec->ms == NULL) || err != OPUS_OK) {
        opp_write_error(errbuf, errbuf_size,
                        "opus: %s (%d channels, %d streams, %d coupled) failed: %s",
                        in_order ? "opus_decoder_create" : "opus_multistream_decoder_create",
                        head.channels, head.streams, head.coupled, opus_strerror(err));
        opp_free_decoders(dec);
        return err == OPUS_ALLOC_FAIL ? MK_ENOMEM : MK_EDATA;
    }
    if (head.gain_q8 != 0) {
        err = dec->single != NULL ? opus_decoder_ctl(dec->single, OPUS_SET_GAIN(head.gain_q8))
                                  : opus_multistream_decoder_ctl(dec->ms, OPUS_SET_GAIN(head.gain_q8));
        if (err != OPUS_OK) {
            opp_write_error(errbuf, errbuf_size, "opus: output gain %d/256 dB: %s",
                            head.gain_q8, opus_strerror(err));
            opp_free_decoders(dec);
            return MK_EDATA;
        }
    }
    dec->channels = head.channels;
    dec->channel_mask = mask;
    if (config->time_base_num > 0 && config->time_base_den > 0) {
        dec->tb_num = config->time_base_num;
        dec->tb_den = config->time_base_den;
    }
    *decoder = dec;
    *vtable = &opp_vtable;
    return MK_OK;
}


/* ------------------------------------------------------------------------ */
/* Encoder (plugin ABI 2.1)                                                    */
/* ------------------------------------------------------------------------ */
/*
 * opus_multistream_surround_encoder (mapping family 0 for 1-2 channels, 1 for 3-8), set up
 * as FFmpeg's libopus wrapper sets it up for `-c:a libopus -b:a B` (VBR, complexity 10,
 * application audio, 20 ms frames, bit rate 64 kbit/s per stream + 32 per coupled one when
 * none is given), so the packets are the same. Input: interleaved float or s16 in WAVE
 * order at 8, 12, 16, 24 or 48 kHz; 3-8 channels are reordered to Vorbis order as the
 * wrapper does. Frame size: the frame duration at the input rate; the last frame may be
 * short (zero-padded here). Draining encodes silent frames until every input sample plus
 * the encoder's lookahead is covered, as the wrapper does. Delay: OPUS_GET_LOOKAHEAD at
 * 48 kHz, written as the OpusHead pre-skip. Packets are timed at 48 kHz.
 */

static const int32_t ope_rates[] = { 48000, 24000, 16000, 12000, 8000, 0 };
static const int32_t ope_formats[] = { MK_SAMPLES_F32, MK_SAMPLES_S16, 0 };
#define OPE_MAX_PACKET 4000 /* per stream; libopus' recommended maximum */

typedef struct ope_encoder {
    OpusMSEncoder *ms;
    int channels, rate, frame_size, streams, coupled, s16;
    int lookahead;               /* at the input rate */
    int64_t samples_in;          /* input samples sent */
    int64_t samples_coded;       /* input-rate samples encoded (frames * frame_size) */
    int64_t next_pts;            /* 48 kHz */
    float *pcm;                  /* one frame, interleaved, Vorbis order */
    uint8_t *out;                /* the packet handed out last, or waiting */
    int32_t out_size, has_out;
    int64_t out_pts;
    int draining, done;
    uint8_t head[19 + 2 + 8];
    size_t head_size;
    char last_error[OPP_ERROR_SIZE];
} ope_encoder;

/* Encodes the frame in e->pcm into e->out. */
static int32_t ope_encode_frame(ope_encoder *e)
{
    int32_t n = opus_multistream_encode_float(e->ms, e->pcm, e->frame_size, e->out,
                                               OPE_MAX_PACKET * e->streams);
    if (n < 0) {
        mkp_write_error(e->last_error, sizeof(e->last_error), "opus encoder: opus_multistream_encode_float: %s",
                        opus_strerror(n));
        return MK_EFAIL;
    }
    e->out_size = n;
    e->has_out = 1;
    e->out_pts = e->next_pts;
    e->next_pts += (int64_t)e->frame_size * OPP_RATE / e->rate;
    e->samples_coded += e->frame_size;
    return MK_OK;
}

static int32_t ope_get_info(void *encoder, mk_plugin_encoder_info *info)
{
    ope_encoder *e = encoder;
    if (e == NULL || info == NULL || info->struct_size < sizeof(uint32_t))
        return MK_EINVAL;
    mk_plugin_encoder_info own;
    memset(&own, 0, sizeof(own));
    own.struct_size = sizeof(own);
    own.frame_size = e->frame_size;
    own.encoder_delay = e->lookahead * (OPP_RATE / e->rate);
    own.sample_rate = OPP_RATE; /* what decoders output; OpusHead keeps the input rate */
    own.channels = e->channels;
    opus_int32 rate = 0;
    if (opus_multistream_encoder_ctl(e->ms, OPUS_GET_BITRATE(&rate)) == OPUS_OK)
        own.bit_rate = rate;
    own.extradata = e->head;
    own.extradata_size = e->head_size;
    own.packet_time_base_num = 1;
    own.packet_time_base_den = OPP_RATE;
    mkp_fill_struct(info, &own, sizeof(own));
    return MK_OK;
}

static int32_t ope_send_frame(void *encoder, const mk_plugin_frame *frame)
{
    ope_encoder *e = encoder;
    if (e == NULL)
        return MK_EINVAL;
    e->last_error[0] = '\0';
    if (e->has_out)
        return MK_EAGAIN;
    if (frame == NULL) {
        if (e->draining)
            return MK_EOF;
        e->draining = 1;
        return MK_OK;
    }
    if (e->draining)
        return MK_EOF;
    int32_t want = e->s16 ? MK_SAMPLES_S16 : MK_SAMPLES_F32;
    if (frame->struct_size < OPP_FRAME_MIN_SIZE || frame->format != want || frame->channels != e->channels ||
        frame->sample_rate != e->rate || frame->nb_samples <= 0 || frame->nb_samples > e->frame_size ||
        frame->plane_count < 1 || frame->planes[0] == NULL ||
        frame->strides[0] < (int64_t)frame->nb_samples * e->channels * (e->s16 ? 2 : 4)) {
        mkp_write_error(e->last_error, sizeof(e->last_error),
                        "opus encoder: send_frame: a frame of format %d, %d Hz, %d channels, %d samples; it was opened "
                        "for format %d, %d Hz, %d channels, frames of %d samples",
                        frame->format, frame->sample_rate, frame->channels, frame->nb_samples, want, e->rate,
                        e->channels, e->frame_size);
        return MK_EINVAL;
    }
    int n = e->channels;
    const uint8_t *order = n > 2 ? mkp_vorbis_to_wave[n - 1] : NULL;
    for (int s = 0; s < frame->nb_samples; s++)
        for (int c = 0; c < n; c++) {
            float v = e->s16 ? ((const int16_t *)frame->planes[0])[s * n + c] / 32768.0f
                             : ((const float *)frame->planes[0])[s * n + c];
            e->pcm[s * n + (order != NULL ? order[c] : c)] = v;
        }
    if (frame->nb_samples < e->frame_size)
        memset(e->pcm + (size_t)frame->nb_samples * n, 0,
               (size_t)(e->frame_size - frame->nb_samples) * n * sizeof(float));
    e->samples_in += frame->nb_samples;
    return ope_encode_frame(e);
}

static int32_t ope_receive_packet(void *encoder, mk_plugin_encoded_packet *packet)
{
    ope_encoder *e = encoder;
    if (e == NULL || packet == NULL || packet->struct_size < MKP_END_OF(mk_plugin_encoded_packet, duration))
        return MK_EINVAL;
    if (!e->has_out && e->draining && !e->done) {
        /* Silent frames until the lookahead after the last input sample is coded too. */
        if (e->samples_coded < e->samples_in + e->lookahead) {
            memset(e->pcm, 0, (size_t)e->frame_size * e->channels * sizeof(float));
            int32_t status = ope_encode_frame(e);
            if (status != MK_OK)
                return status;
        } else {
            e->done = 1;
        }
    }
    if (!e->has_out)
        return e->done ? MK_EOF : MK_EAGAIN;
    mk_plugin_encoded_packet own;
    memset(&own, 0, sizeof(own));
    own.struct_size = sizeof(own);
    own.flags = MK_PACKET_FLAG_KEY;
    own.data = e->out;
    own.size = (size_t)e->out_size;
    own.pts = e->out_pts;
    own.dts = e->out_pts;
    own.duration = (int64_t)e->frame_size * OPP_RATE / e->rate;
    mkp_fill_struct(packet, &own, sizeof(own));
    e->has_out = 0;
    return MK_OK;
}

static void ope_destroy(void *encoder)
{
    ope_encoder *e = encoder;
    if (e == NULL)
        return;
    if (e->ms != NULL)
        opus_multistream_encoder_destroy(e->ms);
    free(e->pcm);
    free(e->out);
    free(e);
}

static const char *ope_last_error(void *encoder)
{
    ope_encoder *e = encoder;
    return e != NULL ? e->last_error : "";
}

static const mk_plugin_encoder_vtable ope_vtable = {
    sizeof(mk_plugin_encoder_vtable), ope_get_info, ope_send_frame, ope_receive_packet, ope_destroy, ope_last_error,
};

static int32_t ope_create(const mk_plugin_encoder_config *config, void **encoder,
                          const mk_plugin_encoder_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    int32_t checked = mkp_check_encoder_create("opus", config, encoder, vtable, errbuf, errbuf_size, "opus", 8,
                                               ope_formats);
    if (checked != MK_OK)
        return checked;
    int rate_ok = 0;
    for (const int32_t *r = ope_rates; *r != 0; r++)
        rate_ok |= *r == config->sample_rate;
    if (!rate_ok) {
        mkp_write_error(errbuf, errbuf_size,
                        "opus encoder: %d Hz is not a rate it accepts: 8000, 12000, 16000, 24000 and 48000 Hz",
                        config->sample_rate);
        return MK_EUNSUPPORTED;
    }
    if (config->bit_rate != 0 && (config->bit_rate < 500 || config->bit_rate > 256000 * config->channels)) {
        mkp_write_error(errbuf, errbuf_size, "opus encoder: %lld bit/s: it accepts 500 to %d bit/s for %d channels",
                        (long long)config->bit_rate, 256000 * config->channels, config->channels);
        return MK_EUNSUPPORTED;
    }
    int duration = config->frame_duration_us != 0 ? config->frame_duration_us : 20000;
    if (duration != 2500 && duration != 5000 && duration != 10000 && duration != 20000 && duration != 40000 &&
        duration != 60000) {
        mkp_write_error(errbuf, errbuf_size,
                        "opus encoder: frame duration %d us: it accepts 2500, 5000, 10000, 20000, 40000 and 60000 us",
                        duration);
        return MK_EUNSUPPORTED;
    }
    int application = OPUS_APPLICATION_AUDIO;
    if (config->application == MK_ENCODER_APPLICATION_VOIP)
        application = OPUS_APPLICATION_VOIP;
    else if (config->application == MK_ENCODER_APPLICATION_LOWDELAY)
        application = OPUS_APPLICATION_RESTRICTED_LOWDELAY;

    ope_encoder *e = calloc(1, sizeof(*e));
    if (e == NULL) {
        mkp_write_error(errbuf, errbuf_size, "opus encoder: create: out of memory");
        return MK_ENOMEM;
    }
    e->channels = config->channels;
    e->rate = config->sample_rate;
    e->s16 = config->sample_format == MK_SAMPLES_S16;
    e->frame_size = (int)((int64_t)duration * e->rate / 1000000);
    unsigned char mapping[8];
    int err = OPUS_OK;
    e->ms = opus_multistream_surround_encoder_create(e->rate, e->channels, e->channels > 2 ? 1 : 0, &e->streams,
                                                     &e->coupled, mapping, application, &err);
    if (e->ms == NULL || err != OPUS_OK) {
        mkp_write_error(errbuf, errbuf_size, "opus encoder: %d Hz, %d channels: %s", e->rate, e->channels,
                        opus_strerror(err));
        ope_destroy(e);
        return MK_EUNSUPPORTED;
    }
    int64_t bit_rate = config->bit_rate > 0 ? config->bit_rate : 64000 * e->streams + 32000 * e->coupled;
    int complexity = config->complexity >= 0 ? (config->complexity > 10 ? 10 : config->complexity) : 10;
    if (config->has_quality) {
        mkp_write_error(errbuf, errbuf_size, "opus encoder: takes a bit rate, not a quality");
        ope_destroy(e);
        return MK_EUNSUPPORTED;
    }
    if ((err = opus_multistream_encoder_ctl(e->ms, OPUS_SET_BITRATE((opus_int32)bit_rate))) != OPUS_OK ||
        (err = opus_multistream_encoder_ctl(e->ms, OPUS_SET_COMPLEXITY(complexity))) != OPUS_OK ||
        (err = opus_multistream_encoder_ctl(e->ms, OPUS_SET_VBR(1))) != OPUS_OK ||
        (err = opus_multistream_encoder_ctl(e->ms, OPUS_SET_VBR_CONSTRAINT(0))) != OPUS_OK ||
        (err = opus_multistream_encoder_ctl(e->ms, OPUS_SET_PACKET_LOSS_PERC(0))) != OPUS_OK ||
        (err = opus_multistream_encoder_ctl(e->ms, OPUS_SET_INBAND_FEC(0))) != OPUS_OK ||
        (err = opus_multistream_encoder_ctl(e->ms, OPUS_GET_LOOKAHEAD(&e->lookahead))) != OPUS_OK) {
        mkp_write_error(errbuf, errbuf_size, "opus encoder: setting it up: %s", opus_strerror(err));
        ope_destroy(e);
        return MK_EFAIL;
    }
    e->pcm = calloc((size_t)e->frame_size * e->channels, sizeof(float));
    e->out = malloc((size_t)OPE_MAX_PACKET * e->streams);
    if (e->pcm == NULL || e->out == NULL) {
        mkp_write_error(errbuf, errbuf_size, "opus encoder: create: out of memory");
        ope_destroy(e);
        return MK_ENOMEM;
    }
    /* OpusHead (RFC 7845 5.1), as FFmpeg's wrapper writes it. */
    uint8_t *h = e->head;
    memcpy(h, "OpusHead", 8);
    h[8] = 1;
    h[9] = (uint8_t)e->channels;
    int pre_skip = e->lookahead * (OPP_RATE / e->rate);
    h[10] = (uint8_t)(pre_skip & 0xFF);
    h[11] = (uint8_t)(pre_skip >> 8);
    h[12] = (uint8_t)(e->rate & 0xFF);
    h[13] = (uint8_t)((e->rate >> 8) & 0xFF);
    h[14] = (uint8_t)((e->rate >> 16) & 0xFF);
    h[15] = (uint8_t)((e->rate >> 24) & 0xFF);
    h[16] = 0;
    h[17] = 0;
    h[18] = e->channels > 2 ? 1 : 0;
    e->head_size = 19;
    if (e->channels > 2) {
        h[19] = (uint8_t)e->streams;
        h[20] = (uint8_t)e->coupled;
        memcpy(h + 21, mapping, (size_t)e->channels);
        e->head_size = 21 + (size_t)e->channels;
    }
    *encoder = e;
    *vtable = &ope_vtable;
    return MK_OK;
}

static const mk_plugin_encoder_backend ope_backends[] = {
    {
        .struct_size = sizeof(mk_plugin_encoder_backend),
        .media_type = MK_MEDIA_AUDIO,
        .codec = "opus",
        .name = "opus",
        .priority = 200,
        .sample_formats = ope_formats,
        .sample_rates = ope_rates,
        .max_channels = 8,
        .channel_masks = NULL,
        .min_bit_rate = 500,
        .max_bit_rate = 512000,
        .create = ope_create,
    },
};

MKP_ENCODER_FACTORY(ope_encoder_factory, ope_backends, 1);

/* ------------------------------------------------------------------------ */
/* Descriptor                                                                 */
/* ------------------------------------------------------------------------ */

static const mk_plugin_decoder_backend opp_backends[] = {
    {
        sizeof(mk_plugin_decoder_backend),
        MK_MEDIA_AUDIO,
        "opus",
        "opus",
        200,
        opp_create,
    },
};

MKP_DECODER_FACTORY(opp_decoder_factory, opp_backends, 1);

static const mk_host *opp_host;

MKP_CODEC_PLUGIN(opp, opp_host, "opus", OPP_PLUGIN_VERSION, "", opus_get_version_string(),
                 "Opus decoder and encoder from Xiph's libopus", &opp_decoder_factory, &ope_encoder_factory)
