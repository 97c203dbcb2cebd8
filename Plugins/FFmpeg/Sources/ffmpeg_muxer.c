/*
 * ffmpeg_muxer.c — the FFmpeg plugin's muxer factory (plugin ABI 2.5): every output format of
 * the libavformat loaded, written through the host's output callbacks (an AVIOContext over
 * them), as MediaKit's writer for the containers it does not write itself (AVI, FLV, NUT ...).
 *
 * Formats. init() lists av_muxer_iterate()'s formats that have a name, but those that open
 * files by name themselves (AVFMT_NOFILE: image sequences, devices, tee) and a second format
 * of a name already listed (libavformat's "Matroska Audio" is named "matroska" too), at
 * priority 0.
 * carries() is avformat_query_codec() (1, 0, or -1 when the format keeps no list).
 *
 * Tracks. add_track maps the host's description onto AVCodecParameters: the codec by FFmpeg's
 * name (avcodec_descriptor_get_by_name, the inverse of the demuxer's avcodec_get_name), the
 * extradata as it is, the codec tag kept where the format takes it for that codec (the rule
 * of ffmpeg's stream copy), the frame rate as the stream's r/avg_frame_rate. The stream's
 * time base is the track's, as ffmpeg's stream copy sets it, but for constant-rate video
 * where stream copy takes the frame rate's (avformat_transfer_internal_stream_timing_info,
 * which needs an input stream: its rule is copied in ffm_copy_time_base). The muxer may still
 * choose its own in avformat_write_header (FLV: 1/1000); packets are rescaled to it.
 *
 * Header. write_header does not write yet: libavformat wants an audio stream's frame_size,
 * which stream copy knows from ffprobe-like parsing of the first packets. The header is
 * written when every track has had a packet (its first packet's duration giving an audio
 * track's frame_size), when 256 packets or 32 MiB wait, or at finish; the packets held meanwhile
 * are then written in order. A codec the format refuses fails there (the message says so).
 *
 * Packets go through av_interleaved_write_frame, as ffmpeg's stream copy writes them (with
 * libavformat's automatic bitstream filters, its interleaving and its negative timestamp
 * shift). Timestamps: av_packet_rescale_ts from the track's time base to the stream's.
 *
 * Determinism: no AVFMT_FLAG_BITEXACT (as ffmpeg -c copy without -fflags +bitexact): a format
 * that stamps the libavformat version (Matroska's MuxingApp, AVI's ISFT) stamps it; ffmpeg's
 * command line's own "encoder" tag is not added.
 *
 * Output IO: write_packet and seek callbacks over the host's write / seek / tell; seek is NULL
 * (the AVIOContext not seekable) for an output the host cannot seek (a pipe), where formats
 * that must go back fail or write their streamable form, as with ffmpeg writing to a pipe.
 */
#include "ffmpeg_internal.h"

#include <libavformat/avformat.h>
#include <libavutil/avstring.h>
#include <libavutil/channel_layout.h>
#include <libavutil/mathematics.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define FFM_MAX_FORMATS 512
#define FFM_IO_BUFFER 65536
#define FFM_HOLD_PACKETS 256
#define FFM_HOLD_BYTES (32 << 20)
#define FFM_MAX_TRACKS 1024

static mk_plugin_muxer_format ffm_formats[FFM_MAX_FORMATS];
static const AVOutputFormat *ffm_outputs[FFM_MAX_FORMATS];
static uint32_t ffm_count;

static int32_t ffm_carries(const mk_plugin_muxer_format *format, int32_t media_type, const char *codec);
static int32_t ffm_create(const mk_plugin_muxer_format *format, const mk_plugin_output_io *io, void **muxer,
                          const mk_plugin_muxer_vtable **vtable, char *errbuf, size_t errbuf_size);

void ffm_init_formats(const mk_host *host)
{
    void *it = NULL;
    const AVOutputFormat *out;
    ffm_count = 0;
    while ((out = av_muxer_iterate(&it)) != NULL) {
        if ((out->flags & AVFMT_NOFILE) || out->name == NULL || out->name[0] == '\0')
            continue;
        /* Names are unique in the factory: libavformat has two "matroska" muxers (the second
         * one, "Matroska Audio", for .mka); the first of a name is kept, as av_guess_format's
         * choice by name keeps it. */
        int known = 0;
        for (uint32_t i = 0; i < ffm_count && !known; i++)
            known = strcmp(ffm_outputs[i]->name, out->name) == 0;
        if (known)
            continue;
        if (ffm_count == FFM_MAX_FORMATS) {
            mkp_log(host, MK_LOG_WARNING, "libavformat has more than %d output formats; the rest are not offered",
                    FFM_MAX_FORMATS);
            break;
        }
        ffm_outputs[ffm_count] = out;
        ffm_formats[ffm_count] = (mk_plugin_muxer_format){
            .struct_size = sizeof(mk_plugin_muxer_format),
            .name = out->name,
            .long_name = out->long_name ? out->long_name : "",
            .extensions = out->extensions ? out->extensions : "",
            .mime_types = out->mime_type ? out->mime_type : "",
            .priority = 0,
            .carries = ffm_carries,
            .create = ffm_create,
        };
        ffm_count++;
    }
}

static uint32_t ffm_format_count(void) { return ffm_count; }

static const mk_plugin_muxer_format *ffm_get_format(uint32_t index)
{
    return index < ffm_count ? &ffm_formats[index] : NULL;
}

static const mk_plugin_muxer_factory ffm_factory_struct = {
    sizeof(mk_plugin_muxer_factory), ffm_format_count, ffm_get_format,
};

const mk_plugin_muxer_factory *ffm_factory(void)
{
    return &ffm_factory_struct;
}

/* The AVOutputFormat of one of our format entries, or NULL for a pointer that is not one. */
static const AVOutputFormat *ffm_output_of(const mk_plugin_muxer_format *format)
{
    if (format < ffm_formats || format >= ffm_formats + ffm_count)
        return NULL;
    return ffm_outputs[format - ffm_formats];
}

/* The AVCodecID of FFmpeg's codec name, AV_CODEC_ID_NONE when libavcodec knows no such name. */
static enum AVCodecID ffm_codec_id(const char *name)
{
    if (name == NULL || name[0] == '\0')
        return AV_CODEC_ID_NONE;
    const AVCodecDescriptor *d = avcodec_descriptor_get_by_name(name);
    return d ? d->id : AV_CODEC_ID_NONE;
}

static int32_t ffm_carries(const mk_plugin_muxer_format *format, int32_t media_type, const char *codec)
{
    (void)media_type;
    const AVOutputFormat *out = ffm_output_of(format);
    enum AVCodecID id = ffm_codec_id(codec);
    if (out == NULL || id == AV_CODEC_ID_NONE)
        return 0;
    int r = avformat_query_codec(out, id, FF_COMPLIANCE_NORMAL);
    return r > 0 ? 1 : r == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Instance                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct ffm_track {
    AVRational time_base;      /* the host's, of the packets handed in */
    int seen;                  /* a packet came (before the header) */
} ffm_track;

typedef struct ffm_muxer {
    const AVOutputFormat *format;
    AVFormatContext *fmt;
    AVIOContext *avio;
    const mk_plugin_output_io *io;
    int64_t position;          /* where the host's output stands */
    int64_t end;               /* bytes written so far (the furthest position) */
    int io_failed;             /* a host write or seek failed */
    ffm_track *tracks;
    uint32_t track_count;
    int started;               /* write_header was called */
    int header_written;        /* avformat_write_header succeeded */
    int failed;                /* a call failed: only destroy (and cancel) from now on */
    int done;                  /* finish or cancel was called */
    AVPacket **held;           /* packets waiting for the header */
    uint32_t held_count;
    size_t held_bytes;
    AVPacket *packet;
    char error[FFP_ERROR_SIZE];
} ffm_muxer;

#if LIBAVFORMAT_VERSION_MAJOR >= 61
static int ffm_io_write(void *opaque, const uint8_t *buf, int size)
#else
static int ffm_io_write(void *opaque, uint8_t *buf, int size)
#endif
{
    ffm_muxer *m = opaque;
    if (size <= 0)
        return 0;
    if (m->io->write(m->io->opaque, buf, (size_t)size) != MK_OK) {
        m->io_failed = 1;
        return AVERROR(EIO);
    }
    m->position += size;
    if (m->position > m->end)
        m->end = m->position;
    return size;
}

static int64_t ffm_io_seek(void *opaque, int64_t offset, int whence)
{
    ffm_muxer *m = opaque;
    whence &= ~AVSEEK_FORCE;
    if (whence == AVSEEK_SIZE)
        return m->end;
    int64_t target;
    switch (whence) {
    case SEEK_SET: target = offset; break;
    case SEEK_CUR: target = m->position + offset; break;
    case SEEK_END: target = m->end + offset; break;
    default: return AVERROR(EINVAL);
    }
    if (target < 0 || target > m->end)   /* the ABI's seek goes only where bytes are */
        return AVERROR(EINVAL);
    if (m->io->seek == NULL)
        return AVERROR(ENOSYS);
    if (m->io->seek(m->io->opaque, target) != MK_OK) {
        m->io_failed = 1;
        return AVERROR(EIO);
    }
    m->position = target;
    return target;
}

static void ffm_drop_held(ffm_muxer *m)
{
    for (uint32_t i = 0; i < m->held_count; i++)
        av_packet_free(&m->held[i]);
    m->held_count = 0;
    m->held_bytes = 0;
}

static void ffm_free(ffm_muxer *m)
{
    if (m == NULL)
        return;
    ffm_drop_held(m);
    free(m->held);
    if (m->fmt) {
        m->fmt->pb = NULL;   /* ours: freed below */
        avformat_free_context(m->fmt);
    }
    if (m->avio) {
        av_freep(&m->avio->buffer);
        avio_context_free(&m->avio);
    }
    av_packet_free(&m->packet);
    free(m->tracks);
    free(m);
}

/* Records "WHAT: libavformat's text" (or the output's write failure) and returns the status. */
static int32_t ffm_fail(ffm_muxer *m, const char *what, int err)
{
    char text[AV_ERROR_MAX_STRING_SIZE];
    if (av_strerror(err, text, sizeof(text)) < 0)
        snprintf(text, sizeof(text), "error %d", err);
    if (m->io_failed)
        snprintf(m->error, sizeof(m->error), "ffmpeg muxer '%s': %s: writing the output failed (%s)",
                 m->format->name, what, text);
    else
        snprintf(m->error, sizeof(m->error), "ffmpeg muxer '%s': %s: %s", m->format->name, what, text);
    m->failed = 1;
    int32_t status = m->io_failed ? MK_EFAIL : ffp_map_averror(err);
    return status == MK_EAGAIN || status == MK_EOF ? MK_EFAIL : status;
}

/* An ABI misuse (order of calls, arguments): MK_EINVAL with the message. */
static int32_t ffm_misuse(ffm_muxer *m, const char *message)
{
    snprintf(m->error, sizeof(m->error), "ffmpeg muxer '%s': %s", m->format->name, message);
    return MK_EINVAL;
}

static const mk_plugin_muxer_vtable ffm_vtable;

static int32_t ffm_create(const mk_plugin_muxer_format *format, const mk_plugin_output_io *io, void **muxer,
                          const mk_plugin_muxer_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    const AVOutputFormat *output = ffm_output_of(format);
    if (output == NULL || io == NULL || muxer == NULL || vtable == NULL) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg muxer: %s", output == NULL ? "a format this plugin does not list"
                        : "io, muxer and vtable must not be NULL");
        return MK_EINVAL;
    }
    if (io->struct_size < MKP_END_OF(mk_plugin_output_io, tell) || io->write == NULL || io->tell == NULL) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg muxer: the output io struct (%u bytes) lacks write or tell",
                        (unsigned)io->struct_size);
        return MK_EINVAL;
    }
    ffm_muxer *m = calloc(1, sizeof(*m));
    if (m == NULL) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg muxer: out of memory");
        return MK_ENOMEM;
    }
    m->format = output;
    m->io = io;
    m->position = m->end = io->tell(io->opaque);
    uint8_t *buffer = av_malloc(FFM_IO_BUFFER);
    m->packet = av_packet_alloc();
    m->held = calloc(FFM_HOLD_PACKETS, sizeof(AVPacket *));
    int ret = avformat_alloc_output_context2(&m->fmt, output, NULL, NULL);
    if (buffer)
        m->avio = avio_alloc_context(buffer, FFM_IO_BUFFER, 1, m, NULL, ffm_io_write, io->seek ? ffm_io_seek : NULL);
    if (m->avio == NULL)
        av_free(buffer);
    if (ret < 0 || m->avio == NULL || m->packet == NULL || m->fmt == NULL || m->held == NULL) {
        ffm_free(m);
        mkp_write_error(errbuf, errbuf_size, "ffmpeg muxer '%s': out of memory", output->name);
        return MK_ENOMEM;
    }
    m->avio->seekable = io->seek ? AVIO_SEEKABLE_NORMAL : 0;
    m->fmt->pb = m->avio;
    m->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    *muxer = m;
    *vtable = &ffm_vtable;
    return MK_OK;
}

/* The "XVID" text of a tag as libavformat's 32-bit value, 0 for anything but 4 characters. */
static uint32_t ffm_tag(const char *text)
{
    if (text == NULL || strlen(text) != 4)
        return 0;
    return MKTAG(text[0], text[1], text[2], text[3]);
}

/* The time base ffmpeg's stream copy gives a video stream of this format: the input's, but
 * for constant-rate video timed finer than 1/500 s, where avi takes half a frame and a format
 * without variable frame rates (not mov / mp4) a frame
 * (avformat_transfer_internal_stream_timing_info with AVFMT_TBCF_AUTO, for a stream whose
 * r_frame_rate is its average rate). */
static AVRational ffm_copy_time_base(const AVOutputFormat *out, AVRational in, AVRational rate)
{
    if (rate.num <= 0 || rate.den <= 0 || av_q2d(in) >= 1.0 / 500)
        return in;
    if (strcmp(out->name, "avi") == 0) {
        if (0.5 / av_q2d(rate) > av_q2d(in))
            return (AVRational){ rate.den, 2 * rate.num };
        return in;
    }
    if (!(out->flags & AVFMT_VARIABLE_FPS) && !av_match_name(out->name, "mov,mp4,3gp,3g2,psp,ipod,ismv,f4v")) {
        if (1.0 / av_q2d(rate) > av_q2d(in))
            return (AVRational){ rate.den, rate.num };
    }
    return in;
}

static int32_t ffm_add_track(void *muxer, const mk_plugin_mux_track *track, int32_t *index)
{
    ffm_muxer *m = muxer;
    if (m == NULL)
        return MK_EINVAL;
    if (track == NULL || index == NULL)
        return ffm_misuse(m, "add_track: track and index must not be NULL");
    if (track->struct_size < MKP_END_OF(mk_plugin_mux_track, time_base_den) || track->codec == NULL)
        return ffm_misuse(m, "add_track: the track struct is too small or has no codec");
    if (m->started || m->done || m->failed)
        return ffm_misuse(m, "add_track after write_header, finish or cancel");
    if (m->track_count >= FFM_MAX_TRACKS)
        return ffm_misuse(m, "add_track: more than 1024 tracks");
    size_t have = track->struct_size;
#define FFM_HAS(field) (have >= MKP_END_OF(mk_plugin_mux_track, field))
    enum AVCodecID id = ffm_codec_id(track->codec);
    if (id == AV_CODEC_ID_NONE) {
        snprintf(m->error, sizeof(m->error), "ffmpeg muxer '%s': libavcodec knows no codec named '%s'",
                 m->format->name, track->codec);
        return MK_EUNSUPPORTED;
    }
    if (avformat_query_codec(m->format, id, FF_COMPLIANCE_NORMAL) == 0) {
        snprintf(m->error, sizeof(m->error), "ffmpeg muxer '%s' (%s) does not carry %s", m->format->name,
                 m->format->long_name ? m->format->long_name : m->format->name, track->codec);
        return MK_EUNSUPPORTED;
    }
    if (track->time_base_num <= 0 || track->time_base_den <= 0)
        return ffm_misuse(m, "add_track: the time base must be positive");
    ffm_track *grown = realloc(m->tracks, (m->track_count + 1) * sizeof(ffm_track));
    if (grown == NULL)
        return ffm_misuse(m, "add_track: out of memory"), MK_ENOMEM;
    m->tracks = grown;
    AVStream *st = avformat_new_stream(m->fmt, NULL);
    if (st == NULL)
        return ffm_misuse(m, "add_track: out of memory"), MK_ENOMEM;
    AVCodecParameters *par = st->codecpar;
    switch (track->media_type) {
    case MK_MEDIA_AUDIO: par->codec_type = AVMEDIA_TYPE_AUDIO; break;
    case MK_MEDIA_VIDEO: par->codec_type = AVMEDIA_TYPE_VIDEO; break;
    case MK_MEDIA_SUBTITLE: par->codec_type = AVMEDIA_TYPE_SUBTITLE; break;
    default: par->codec_type = AVMEDIA_TYPE_DATA; break;
    }
    par->codec_id = id;
    AVRational tb = { track->time_base_num, track->time_base_den };
    if (FFM_HAS(extradata_size) && track->extradata != NULL && track->extradata_size > 0) {
        if (track->extradata_size > (1 << 28))
            return ffm_misuse(m, "add_track: extradata larger than 256 MiB");
        par->extradata = av_mallocz(track->extradata_size + AV_INPUT_BUFFER_PADDING_SIZE);
        if (par->extradata == NULL)
            return ffm_misuse(m, "add_track: out of memory"), MK_ENOMEM;
        memcpy(par->extradata, track->extradata, track->extradata_size);
        par->extradata_size = (int)track->extradata_size;
    }
    /* The source's tag, where this format takes it for this codec (ffmpeg's stream copy rule). */
    uint32_t tag = FFM_HAS(codec_tag) ? ffm_tag(track->codec_tag) : 0;
    unsigned int own = 0;
    if (tag != 0 && (!m->format->codec_tag || av_codec_get_id(m->format->codec_tag, tag) == id ||
                     !av_codec_get_tag2(m->format->codec_tag, id, &own)))
        par->codec_tag = tag;
    if (par->codec_type == AVMEDIA_TYPE_AUDIO) {
        par->sample_rate = FFM_HAS(sample_rate) ? track->sample_rate : 0;
        int channels = FFM_HAS(channels) ? track->channels : 0;
        uint64_t mask = FFM_HAS(channel_mask) ? track->channel_mask : 0;
        if (mask != 0 && av_popcount64(mask) == channels)
            av_channel_layout_from_mask(&par->ch_layout, mask);
        else if (channels > 0)
            av_channel_layout_default(&par->ch_layout, channels);
        par->block_align = FFM_HAS(block_align) ? track->block_align : 0;
    }
    AVRational rate = { 0, 1 };
    if (par->codec_type == AVMEDIA_TYPE_VIDEO) {
        par->width = FFM_HAS(width) ? track->width : 0;
        par->height = FFM_HAS(height) ? track->height : 0;
        if (FFM_HAS(sar_den) && track->sar_num > 0 && track->sar_den > 0)
            par->sample_aspect_ratio = st->sample_aspect_ratio = (AVRational){ track->sar_num, track->sar_den };
        if (FFM_HAS(frame_rate_den) && track->frame_rate_num > 0 && track->frame_rate_den > 0) {
            rate = (AVRational){ track->frame_rate_num, track->frame_rate_den };
            st->avg_frame_rate = st->r_frame_rate = rate;
        }
        par->video_delay = FFM_HAS(video_delay) ? track->video_delay : 0;
    }
    if (FFM_HAS(bits_per_coded_sample))
        par->bits_per_coded_sample = track->bits_per_coded_sample;
    if (FFM_HAS(bit_rate))
        par->bit_rate = track->bit_rate;
    if (FFM_HAS(disposition))
        st->disposition = (int)track->disposition;
    if (FFM_HAS(language) && track->language != NULL && track->language[0] != '\0' && strcmp(track->language, "und") != 0)
        av_dict_set(&st->metadata, "language", track->language, 0);
    if (FFM_HAS(title) && track->title != NULL && track->title[0] != '\0')
        av_dict_set(&st->metadata, "title", track->title, 0);
#undef FFM_HAS
    st->time_base = par->codec_type == AVMEDIA_TYPE_VIDEO ? ffm_copy_time_base(m->format, tb, rate) : tb;
    m->tracks[m->track_count] = (ffm_track){ .time_base = tb };
    *index = (int32_t)m->track_count;
    m->track_count++;
    return MK_OK;
}

static int32_t ffm_write_header(void *muxer)
{
    ffm_muxer *m = muxer;
    if (m == NULL)
        return MK_EINVAL;
    if (m->started || m->done || m->failed)
        return ffm_misuse(m, "write_header twice, or after finish, cancel or a failure");
    if (m->track_count == 0)
        return ffm_misuse(m, "write_header: no track was added");
    m->started = 1;
    return MK_OK;
}

/* Writes one packet whose timestamps are in its track's time base. */
static int32_t ffm_send(ffm_muxer *m, AVPacket *pkt)
{
    AVStream *st = m->fmt->streams[pkt->stream_index];
    av_packet_rescale_ts(pkt, m->tracks[pkt->stream_index].time_base, st->time_base);
    int ret = av_interleaved_write_frame(m->fmt, pkt);   /* takes the packet's reference */
    if (ret < 0) {
        char what[96];
        snprintf(what, sizeof(what), "writing a packet of track %d", pkt->stream_index);
        return ffm_fail(m, what, ret);
    }
    return MK_OK;
}

/* Writes the header (an audio stream without frame_size takes its first held packet's
 * duration), then the packets held until now. */
static int32_t ffm_start(ffm_muxer *m)
{
    for (uint32_t t = 0; t < m->track_count; t++) {
        AVCodecParameters *par = m->fmt->streams[t]->codecpar;
        if (par->codec_type != AVMEDIA_TYPE_AUDIO || par->frame_size > 0 || par->sample_rate <= 0)
            continue;
        for (uint32_t i = 0; i < m->held_count; i++) {
            const AVPacket *p = m->held[i];
            if (p->stream_index != (int)t)
                continue;
            int samples = av_get_audio_frame_duration2(par, p->size);
            if (samples <= 0 && p->duration > 0)
                samples = (int)av_rescale_q(p->duration, m->tracks[t].time_base, (AVRational){ 1, par->sample_rate });
            if (samples > 0)
                par->frame_size = samples;
            break;
        }
    }
    int ret = avformat_write_header(m->fmt, NULL);
    if (ret < 0) {
        ffm_drop_held(m);
        return ffm_fail(m, "writing the header (avformat_write_header)", ret);
    }
    m->header_written = 1;
    int32_t status = MK_OK;
    for (uint32_t i = 0; i < m->held_count && status == MK_OK; i++)
        status = ffm_send(m, m->held[i]);
    ffm_drop_held(m);
    return status;
}

static int32_t ffm_write_packet(void *muxer, const mk_plugin_mux_packet *packet)
{
    ffm_muxer *m = muxer;
    if (m == NULL)
        return MK_EINVAL;
    if (packet == NULL || packet->struct_size < MKP_END_OF(mk_plugin_mux_packet, duration))
        return ffm_misuse(m, "write_packet: a NULL packet or one too small");
    if (!m->started || m->done || m->failed)
        return ffm_misuse(m, "write_packet before write_header, or after finish, cancel or a failure");
    if (packet->track < 0 || (uint32_t)packet->track >= m->track_count)
        return ffm_misuse(m, "write_packet: a track that was not added");
    if (packet->size > 0 && packet->data == NULL)
        return ffm_misuse(m, "write_packet: NULL data with a size");
    if (packet->size > INT32_MAX - AV_INPUT_BUFFER_PADDING_SIZE)
        return ffm_misuse(m, "write_packet: a packet larger than 2 GiB");
    AVPacket *pkt = av_packet_alloc();
    if (pkt == NULL || av_new_packet(pkt, (int)packet->size) < 0) {
        av_packet_free(&pkt);
        snprintf(m->error, sizeof(m->error), "ffmpeg muxer '%s': out of memory", m->format->name);
        return MK_ENOMEM;
    }
    if (packet->size > 0)
        memcpy(pkt->data, packet->data, packet->size);
    pkt->stream_index = packet->track;
    pkt->pts = packet->pts;
    pkt->dts = packet->dts;
    pkt->duration = packet->duration > 0 ? packet->duration : 0;
    pkt->pos = -1;
    if (packet->flags & MK_PACKET_FLAG_KEY)
        pkt->flags |= AV_PKT_FLAG_KEY;
    if (packet->flags & MK_PACKET_FLAG_DISCARD)
        pkt->flags |= AV_PKT_FLAG_DISCARD;
    if (m->header_written) {
        int32_t status = ffm_send(m, pkt);
        av_packet_free(&pkt);
        return status;
    }
    m->held[m->held_count++] = pkt;
    m->held_bytes += packet->size;
    m->tracks[packet->track].seen = 1;
    int all = 1;
    for (uint32_t t = 0; t < m->track_count; t++)
        all &= m->tracks[t].seen;
    if (all || m->held_count == FFM_HOLD_PACKETS || m->held_bytes >= FFM_HOLD_BYTES)
        return ffm_start(m);
    return MK_OK;
}

static int32_t ffm_finish(void *muxer)
{
    ffm_muxer *m = muxer;
    if (m == NULL)
        return MK_EINVAL;
    if (!m->started || m->done || m->failed)
        return ffm_misuse(m, "finish before write_header, or after finish, cancel or a failure");
    if (!m->header_written) {
        int32_t status = ffm_start(m);
        if (status != MK_OK)
            return status;
    }
    m->done = 1;
    int ret = av_write_trailer(m->fmt);
    if (ret < 0)
        return ffm_fail(m, "writing the trailer (av_write_trailer)", ret);
    avio_flush(m->avio);
    if (m->io_failed || m->avio->error < 0)
        return ffm_fail(m, "flushing the output", m->avio->error < 0 ? m->avio->error : AVERROR(EIO));
    return MK_OK;
}

static void ffm_cancel(void *muxer)
{
    ffm_muxer *m = muxer;
    if (m == NULL)
        return;
    m->done = 1;
    ffm_drop_held(m);
}

static const char *ffm_last_error(void *muxer)
{
    ffm_muxer *m = muxer;
    return m ? m->error : "";
}

static void ffm_destroy(void *muxer)
{
    ffm_free(muxer);
}

static const mk_plugin_muxer_vtable ffm_vtable = {
    .struct_size = sizeof(mk_plugin_muxer_vtable),
    .add_track = ffm_add_track,
    .write_header = ffm_write_header,
    .write_packet = ffm_write_packet,
    .finish = ffm_finish,
    .cancel = ffm_cancel,
    .last_error = ffm_last_error,
    .destroy = ffm_destroy,
};
