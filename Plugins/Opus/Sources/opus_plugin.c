/*
 * opus_plugin.c — MediaKit codec plugin: the Opus decoder of libopus behind
 * the C ABI of mediakit/mediakit_plugin.h.
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
 *   - opus_multistream_decoder at 48 kHz, the header's output gain applied
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
static const uint8_t opp_vorbis_to_wave[8][8] = {
    { 0 },
    { 0, 1 },
    { 0, 2, 1 },
    { 0, 1, 2, 3 },
    { 0, 2, 1, 3, 4 },
    { 0, 2, 1, 5, 3, 4 },
    { 0, 2, 1, 6, 5, 3, 4 },
    { 0, 2, 1, 7, 5, 6, 3, 4 },
};

/* WAVE channel masks of those orders: mono (FC), stereo, 3.0, quad, 5.0,
 * 5.1, 6.1, 7.1. */
static const uint64_t opp_wave_masks[8] = {
    0x4, 0x3, 0x7, 0x33, 0x37, 0x3f, 0x70f, 0x63f,
};

typedef struct opp_decoder {
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
    int got = opus_multistream_decode_float(dec->ms, packet->data, (opus_int32)packet->size,
                                            pcm, nb, 0);
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
    opus_multistream_decoder_ctl(dec->ms, OPUS_RESET_STATE);
    dec->draining = 0;
}

static void opp_destroy(void *decoder)
{
    opp_decoder *dec = decoder;
    if (dec == NULL)
        return;
    opp_drop_ready(dec);
    opus_multistream_decoder_destroy(dec->ms);
    free(dec);
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
    dec->ms = opus_multistream_decoder_create(OPP_RATE, head.channels, head.streams,
                                              head.coupled, mapping, &err);
    if (dec->ms == NULL || err != OPUS_OK) {
        opp_write_error(errbuf, errbuf_size,
                        "opus: opus_multistream_decoder_create (%d channels, %d streams, "
                        "%d coupled) failed: %s", head.channels, head.streams, head.coupled,
                        opus_strerror(err));
        if (dec->ms != NULL)
            opus_multistream_decoder_destroy(dec->ms);
        free(dec);
        return err == OPUS_ALLOC_FAIL ? MK_ENOMEM : MK_EDATA;
    }
    if (head.gain_q8 != 0) {
        err = opus_multistream_decoder_ctl(dec->ms, OPUS_SET_GAIN(head.gain_q8));
        if (err != OPUS_OK) {
            opp_write_error(errbuf, errbuf_size, "opus: output gain %d/256 dB: %s",
                            head.gain_q8, opus_strerror(err));
            opus_multistream_decoder_destroy(dec->ms);
            free(dec);
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

MKP_DECODER_PLUGIN(opp, opp_host, "opus", OPP_PLUGIN_VERSION, "", opus_get_version_string(),
                   "Opus decoder from Xiph's libopus", opp_decoder_factory)
