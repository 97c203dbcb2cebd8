/*
 * ffmpeg_demuxer.c — the FFmpeg plugin's demuxer factory (plugin ABI 2.4): every input format
 * of the libavformat loaded, read through the host's IO callbacks (an AVIOContext over them),
 * as MediaKit's fallback for the containers it does not read itself.
 *
 * Formats. init() lists av_demuxer_iterate()'s formats, but those that open files by name
 * themselves (AVFMT_NOFILE: image sequences, devices), at priority 0. The host asks them only
 * for bytes no native container claims.
 *
 * Probing. score() runs av_probe_input_format3() once per head (the answer is kept per thread
 * for the next format's call with the same bytes) and answers the score for the one format
 * it names, 0 for the others. As av_probe_input_buffer2() does, a score at or below
 * AVPROBE_SCORE_RETRY counts only when the head is the whole source (4 KB is the host's head:
 * a weak guess on part of a file is no claim).
 *
 * Instances. create() opens the format the host chose (forced: no second probe) and runs
 * avformat_find_stream_info(), as ffprobe does, so packets and parameters are ffprobe's. The
 * track count is fixed after that: packets of streams a format adds later are skipped.
 * Packets keep libavformat's timestamps, durations, positions and flags. Track, info and
 * packet data belong to the instance (see mediakit_plugin.h).
 */
#include "ffmpeg_internal.h"

#include <libavformat/avformat.h>
#include <libavutil/avstring.h>
#include <libavutil/channel_layout.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#if LIBAVFORMAT_VERSION_INT < AV_VERSION_INT(59, 27, 100)
#error "MediaKitPluginFFmpeg needs libavformat >= 59.27 (FFmpeg 5.1)"
#endif

/* ------------------------------------------------------------------------ */
/* The format list                                                           */
/* ------------------------------------------------------------------------ */

#define FFX_MAX_FORMATS 1024
#define FFX_HEAD_MAX 65536
#define FFX_IO_BUFFER 32768

static mk_plugin_demuxer_format ffx_formats[FFX_MAX_FORMATS];
static const AVInputFormat *ffx_inputs[FFX_MAX_FORMATS];
static uint32_t ffx_count;

static int32_t ffx_score(const mk_plugin_demuxer_format *format, const uint8_t *head, size_t size, int64_t total);
static int32_t ffx_create(const mk_plugin_demuxer_format *format, const mk_plugin_io *io, void **demuxer,
                          const mk_plugin_demuxer_vtable **vtable, char *errbuf, size_t errbuf_size);

void ffx_init_formats(const mk_host *host)
{
    void *it = NULL;
    const AVInputFormat *in;
    ffx_count = 0;
    while ((in = av_demuxer_iterate(&it)) != NULL) {
        if (in->flags & AVFMT_NOFILE)
            continue;
        if (ffx_count == FFX_MAX_FORMATS) {
            mkp_log(host, MK_LOG_WARNING, "libavformat has more than %d input formats; the rest are not offered",
                    FFX_MAX_FORMATS);
            break;
        }
        ffx_inputs[ffx_count] = in;
        ffx_formats[ffx_count] = (mk_plugin_demuxer_format){
            .struct_size = sizeof(mk_plugin_demuxer_format),
            .name = in->name,
            .long_name = in->long_name ? in->long_name : "",
            .extensions = in->extensions ? in->extensions : "",
            .mime_types = in->mime_type ? in->mime_type : "",
            .priority = 0,
            .score = ffx_score,
            .create = ffx_create,
        };
        ffx_count++;
    }
}

static uint32_t ffx_format_count(void) { return ffx_count; }

static const mk_plugin_demuxer_format *ffx_get_format(uint32_t index)
{
    return index < ffx_count ? &ffx_formats[index] : NULL;
}

static const mk_plugin_demuxer_factory ffx_factory_struct = {
    sizeof(mk_plugin_demuxer_factory), ffx_format_count, ffx_get_format,
};

const mk_plugin_demuxer_factory *ffx_factory(void)
{
    return &ffx_factory_struct;
}

/* The AVInputFormat of one of our format entries, or NULL for a pointer that is not one. */
static const AVInputFormat *ffx_input_of(const mk_plugin_demuxer_format *format)
{
    if (format < ffx_formats || format >= ffx_formats + ffx_count)
        return NULL;
    return ffx_inputs[format - ffx_formats];
}

/* ------------------------------------------------------------------------ */
/* Probing                                                                   */
/* ------------------------------------------------------------------------ */

/* The last head probed on this thread and libavformat's answer for it. */
static _Thread_local struct {
    uint8_t bytes[FFX_HEAD_MAX + AVPROBE_PADDING_SIZE];
    size_t size;
    int64_t total;
    int valid;
    const AVInputFormat *best;
    int score;
} ffx_probe_cache;

static int32_t ffx_score(const mk_plugin_demuxer_format *format, const uint8_t *head, size_t size, int64_t total)
{
    const AVInputFormat *mine = ffx_input_of(format);
    if (mine == NULL || head == NULL || size == 0)
        return 0;
    if (size > FFX_HEAD_MAX)
        size = FFX_HEAD_MAX;
    if (!(ffx_probe_cache.valid && ffx_probe_cache.size == size && ffx_probe_cache.total == total &&
          memcmp(ffx_probe_cache.bytes, head, size) == 0)) {
        memcpy(ffx_probe_cache.bytes, head, size);
        memset(ffx_probe_cache.bytes + size, 0, AVPROBE_PADDING_SIZE);
        AVProbeData pd = { .filename = "", .buf = ffx_probe_cache.bytes, .buf_size = (int)size, .mime_type = NULL };
        int score = 0;
        const AVInputFormat *best = av_probe_input_format3(&pd, 1, &score);
        int whole = total >= 0 && (int64_t)size >= total;
        if (best != NULL && best->flags & AVFMT_NOFILE)
            best = NULL;
        if (!whole && score <= AVPROBE_SCORE_RETRY)
            best = NULL;
        ffx_probe_cache.size = size;
        ffx_probe_cache.total = total;
        ffx_probe_cache.best = best;
        ffx_probe_cache.score = best ? score : 0;
        ffx_probe_cache.valid = 1;
    }
    if (ffx_probe_cache.best != mine)
        return 0;
    int score = ffx_probe_cache.score;
    return score < 0 ? 0 : score > 100 ? 100 : score;
}

/* ------------------------------------------------------------------------ */
/* Instance                                                                  */
/* ------------------------------------------------------------------------ */

/* A copy of `metadata` as key, value, ..., NULL (NULL for none); -1 when out of memory. The
 * copy stays valid until destroy, whatever libavformat does to its dictionary while reading. */
static int ffx_copy_tags(const AVDictionary *metadata, char ***out);
static void ffx_free_tags(char **tags);
static char *ffx_strdup(const char *s);

typedef struct ffx_track_text {
    char tag[AV_FOURCC_MAX_STRING_SIZE];
    char **tags;               /* the stream's metadata at create: key, value, ..., NULL (2.5) */
} ffx_track_text;

typedef struct ffx_demuxer {
    AVFormatContext *fmt;
    AVIOContext *avio;
    const mk_plugin_io *io;
    int64_t position;          /* where the host's source stands (for SEEK_CUR) */
    int io_failed;             /* a host read or seek failed: an error, not the end */
    AVPacket *packet;
    uint32_t tracks;           /* streams after find_stream_info; later ones are skipped */
    ffx_track_text *texts;
    char **file_tags;          /* the file's metadata at create: key, value, ..., NULL (2.5) */
    char error[FFP_ERROR_SIZE];
} ffx_demuxer;

static int ffx_io_read(void *opaque, uint8_t *buf, int size)
{
    ffx_demuxer *d = opaque;
    if (size <= 0)
        return 0;
    int64_t n = d->io->read(d->io->opaque, buf, (size_t)size);
    if (n < 0) {
        d->io_failed = 1;
        return AVERROR(EIO);
    }
    if (n == 0)
        return AVERROR_EOF;
    if (n > size)
        n = size;
    d->position += n;
    return (int)n;
}

static int64_t ffx_io_seek(void *opaque, int64_t offset, int whence)
{
    ffx_demuxer *d = opaque;
    int64_t size = d->io->size ? d->io->size(d->io->opaque) : -1;
    whence &= ~AVSEEK_FORCE;
    if (whence == AVSEEK_SIZE)
        return size >= 0 ? size : AVERROR(ENOSYS);
    int64_t target;
    switch (whence) {
    case SEEK_SET: target = offset; break;
    case SEEK_CUR: target = d->position + offset; break;
    case SEEK_END:
        if (size < 0)
            return AVERROR(ENOSYS);
        target = size + offset;
        break;
    default: return AVERROR(EINVAL);
    }
    if (target < 0)
        return AVERROR(EINVAL);
    if (d->io->seek == NULL)
        return AVERROR(ENOSYS);
    if (d->io->seek(d->io->opaque, target) != MK_OK) {
        d->io_failed = 1;
        return AVERROR(EIO);
    }
    d->position = target;
    return target;
}

static void ffx_free(ffx_demuxer *d)
{
    if (d == NULL)
        return;
    avformat_close_input(&d->fmt);   /* custom IO: closes nothing of ours */
    if (d->avio) {
        av_freep(&d->avio->buffer);
        avio_context_free(&d->avio);
    }
    av_packet_free(&d->packet);
    for (uint32_t i = 0; d->texts != NULL && i < d->tracks; i++)
        ffx_free_tags(d->texts[i].tags);
    free(d->texts);
    ffx_free_tags(d->file_tags);
    free(d);
}

static void ffx_free_tags(char **tags)
{
    for (char **t = tags; t != NULL && *t != NULL; t++)
        free(*t);
    free(tags);
}

static int ffx_copy_tags(const AVDictionary *metadata, char ***out)
{
    *out = NULL;
    int count = av_dict_count(metadata);
    if (count <= 0)
        return 0;
    char **tags = calloc((size_t)count * 2 + 1, sizeof(char *));
    if (tags == NULL)
        return -1;
    const AVDictionaryEntry *e = NULL;
    int n = 0;
    while (n < count * 2 && (e = av_dict_get(metadata, "", e, AV_DICT_IGNORE_SUFFIX)) != NULL) {
        if ((tags[n] = ffx_strdup(e->key)) == NULL || (tags[n + 1] = ffx_strdup(e->value)) == NULL) {
            ffx_free_tags(tags);
            return -1;
        }
        n += 2;
    }
    *out = tags;
    return 0;
}

/* "WHAT: libavformat's text" (and "the source's read failed" when the host's IO did). */
static int32_t ffx_fail(ffx_demuxer *d, char *buf, size_t size, const char *what, int err)
{
    char text[AV_ERROR_MAX_STRING_SIZE];
    if (av_strerror(err, text, sizeof(text)) < 0)
        snprintf(text, sizeof(text), "error %d", err);
    if (d->io_failed)
        mkp_write_error(buf, size, "%s: reading the source failed (%s)", what, text);
    else
        mkp_write_error(buf, size, "%s: %s", what, text);
    int32_t status = d->io_failed ? MK_EFAIL : ffp_map_averror(err);
    return status == MK_EAGAIN || status == MK_EOF ? MK_EDATA : status;
}

static const mk_plugin_demuxer_vtable ffx_vtable;

/* A malloc'ed copy of `text` (NULL: ""), or NULL when out of memory (strdup is POSIX, not C11). */
static char *ffx_strdup(const char *text)
{
    size_t size = text != NULL ? strlen(text) + 1 : 1;
    char *copy = malloc(size);
    if (copy != NULL)
        memcpy(copy, text != NULL ? text : "", size);
    return copy;
}

static int32_t ffx_create(const mk_plugin_demuxer_format *format, const mk_plugin_io *io, void **demuxer,
                          const mk_plugin_demuxer_vtable **vtable, char *errbuf, size_t errbuf_size)
{
    const AVInputFormat *input = ffx_input_of(format);
    if (input == NULL || io == NULL || demuxer == NULL || vtable == NULL) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg demuxer: %s", input == NULL ? "a format this plugin does not list"
                        : "io, demuxer and vtable must not be NULL");
        return MK_EINVAL;
    }
    if (io->struct_size < MKP_END_OF(mk_plugin_io, size) || io->read == NULL || io->size == NULL) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg demuxer: the io struct (%u bytes) lacks read or size",
                        (unsigned)io->struct_size);
        return MK_EINVAL;
    }
    ffx_demuxer *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        mkp_write_error(errbuf, errbuf_size, "ffmpeg demuxer: out of memory");
        return MK_ENOMEM;
    }
    d->io = io;
    uint8_t *buffer = av_malloc(FFX_IO_BUFFER);
    d->packet = av_packet_alloc();
    d->fmt = avformat_alloc_context();
    if (buffer)
        d->avio = avio_alloc_context(buffer, FFX_IO_BUFFER, 0, d, ffx_io_read, NULL, io->seek ? ffx_io_seek : NULL);
    if (d->avio == NULL)
        av_free(buffer);
    if (d->avio == NULL || d->packet == NULL || d->fmt == NULL) {
        ffx_free(d);
        mkp_write_error(errbuf, errbuf_size, "ffmpeg demuxer: out of memory");
        return MK_ENOMEM;
    }
    d->avio->seekable = io->seek ? AVIO_SEEKABLE_NORMAL : 0;
    d->fmt->pb = d->avio;
    d->fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
    char what[160];
    snprintf(what, sizeof(what), "ffmpeg demuxer '%s': opening the input", input->name);
    int ret = avformat_open_input(&d->fmt, "", input, NULL);
    if (ret < 0) {   /* d->fmt is freed and NULL */
        int32_t status = ffx_fail(d, errbuf, errbuf_size, what, ret);
        ffx_free(d);
        return status;
    }
    snprintf(what, sizeof(what), "ffmpeg demuxer '%s': reading the stream parameters", input->name);
    ret = avformat_find_stream_info(d->fmt, NULL);
    if (ret < 0) {
        int32_t status = ffx_fail(d, errbuf, errbuf_size, what, ret);
        ffx_free(d);
        return status;
    }
    d->tracks = d->fmt->nb_streams;
    d->texts = calloc(d->tracks ? d->tracks : 1, sizeof(ffx_track_text));
    if (d->texts == NULL) {
        ffx_free(d);
        mkp_write_error(errbuf, errbuf_size, "ffmpeg demuxer: out of memory");
        return MK_ENOMEM;
    }
    for (uint32_t i = 0; i < d->tracks; i++) {
        uint32_t tag = d->fmt->streams[i]->codecpar->codec_tag;
        if (tag != 0)
            av_fourcc_make_string(d->texts[i].tag, tag);
        if (ffx_copy_tags(d->fmt->streams[i]->metadata, &d->texts[i].tags) < 0) {
            ffx_free(d);
            mkp_write_error(errbuf, errbuf_size, "ffmpeg demuxer: out of memory");
            return MK_ENOMEM;
        }
    }
    if (ffx_copy_tags(d->fmt->metadata, &d->file_tags) < 0) {
        ffx_free(d);
        mkp_write_error(errbuf, errbuf_size, "ffmpeg demuxer: out of memory");
        return MK_ENOMEM;
    }
    *demuxer = d;
    *vtable = &ffx_vtable;
    return MK_OK;
}

static uint32_t ffx_track_count(void *demuxer)
{
    ffx_demuxer *d = demuxer;
    return d ? d->tracks : 0;
}

static int32_t ffx_media_type(enum AVMediaType type)
{
    switch (type) {
    case AVMEDIA_TYPE_AUDIO:    return MK_MEDIA_AUDIO;
    case AVMEDIA_TYPE_VIDEO:    return MK_MEDIA_VIDEO;
    case AVMEDIA_TYPE_SUBTITLE: return MK_MEDIA_SUBTITLE;
    default:                    return MK_MEDIA_DATA;
    }
}

static const char *ffx_tag(const AVDictionary *metadata, const char *key)
{
    const AVDictionaryEntry *e = av_dict_get(metadata, key, NULL, 0);
    return e && e->value ? e->value : "";
}

static int32_t ffx_get_track(void *demuxer, uint32_t index, mk_plugin_track_info *info)
{
    ffx_demuxer *d = demuxer;
    if (d == NULL || info == NULL || index >= d->tracks || info->struct_size < sizeof(uint32_t)) {
        if (d)
            snprintf(d->error, sizeof(d->error), "get_track: track %u of %u, or a NULL or empty info", index,
                     d->tracks);
        return MK_EINVAL;
    }
    const AVStream *st = d->fmt->streams[index];
    const AVCodecParameters *par = st->codecpar;
    mk_plugin_track_info t = {0};
    t.struct_size = info->struct_size < sizeof(t) ? info->struct_size : (uint32_t)sizeof(t);
    t.media_type = ffx_media_type(par->codec_type);
    t.codec = par->codec_id == AV_CODEC_ID_NONE ? "" : avcodec_get_name(par->codec_id);
    t.codec_tag = d->texts[index].tag;
    t.extradata = par->extradata_size > 0 ? par->extradata : NULL;
    t.extradata_size = par->extradata_size > 0 ? (size_t)par->extradata_size : 0;
    t.time_base_num = st->time_base.num > 0 ? st->time_base.num : 1;
    t.time_base_den = st->time_base.den > 0 ? st->time_base.den : 1;
    t.duration = st->duration;
    t.start_time = st->start_time;
    t.sample_rate = par->sample_rate;
    t.channels = par->ch_layout.nb_channels;
    t.channel_mask = par->ch_layout.order == AV_CHANNEL_ORDER_NATIVE ? par->ch_layout.u.mask : 0;
    t.width = par->width;
    t.height = par->height;
    t.sar_num = par->sample_aspect_ratio.num;
    t.sar_den = par->sample_aspect_ratio.den > 0 ? par->sample_aspect_ratio.den : 1;
    t.frame_rate_num = st->avg_frame_rate.den > 0 ? st->avg_frame_rate.num : 0;
    t.frame_rate_den = st->avg_frame_rate.den > 0 ? st->avg_frame_rate.den : 1;
    t.bits_per_coded_sample = par->bits_per_coded_sample;
    t.block_align = par->block_align;
    t.bit_rate = par->bit_rate;
    t.video_delay = par->video_delay;
    t.disposition = (uint32_t)st->disposition;
    t.language = ffx_tag(st->metadata, "language");
    t.title = ffx_tag(st->metadata, "title");
    t.tags = (const char *const *)d->texts[index].tags;
    if (par->codec_type == AVMEDIA_TYPE_ATTACHMENT) {   /* the file is the extradata */
        t.disposition |= MK_DISPOSITION_ATTACHMENT;
        t.attachment = t.extradata;
        t.attachment_size = t.extradata_size;
    } else if ((st->disposition & AV_DISPOSITION_ATTACHED_PIC) && st->attached_pic.size > 0) {
        t.attachment = st->attached_pic.data;
        t.attachment_size = (size_t)st->attached_pic.size;
    }
    memcpy(info, &t, t.struct_size);
    return MK_OK;
}

static int32_t ffx_get_info(void *demuxer, mk_plugin_demuxer_info *info)
{
    ffx_demuxer *d = demuxer;
    if (d == NULL || info == NULL || info->struct_size < sizeof(uint32_t))
        return MK_EINVAL;
    mk_plugin_demuxer_info i = {0};
    i.struct_size = info->struct_size < sizeof(i) ? info->struct_size : (uint32_t)sizeof(i);
    i.format_name = d->fmt->iformat->name;
    i.duration_us = d->fmt->duration;
    i.start_time_us = d->fmt->start_time;
    i.bit_rate = d->fmt->bit_rate;
    i.tags = (const char *const *)d->file_tags;
    memcpy(info, &i, i.struct_size);
    return MK_OK;
}

static int32_t ffx_read_packet(void *demuxer, mk_plugin_demuxed_packet *packet)
{
    ffx_demuxer *d = demuxer;
    if (d == NULL || packet == NULL || packet->struct_size < MKP_END_OF(mk_plugin_demuxed_packet, duration)) {
        if (d)
            snprintf(d->error, sizeof(d->error), "read_packet: a NULL packet or one of %u bytes (at least %zu)",
                     packet ? (unsigned)packet->struct_size : 0u, MKP_END_OF(mk_plugin_demuxed_packet, duration));
        return MK_EINVAL;
    }
    for (;;) {
        av_packet_unref(d->packet);
        int ret = av_read_frame(d->fmt, d->packet);
        if (ret == AVERROR_EOF && !d->io_failed)
            return MK_EOF;
        if (ret < 0) {
            char what[96];
            snprintf(what, sizeof(what), "reading a packet near byte %" PRId64, avio_tell(d->fmt->pb));
            return ffx_fail(d, d->error, sizeof(d->error), what, ret);
        }
        if (d->packet->stream_index >= 0 && (uint32_t)d->packet->stream_index < d->tracks)
            break;
    }
    mk_plugin_demuxed_packet p = {0};
    p.struct_size = packet->struct_size < sizeof(p) ? packet->struct_size : (uint32_t)sizeof(p);
    if (d->packet->flags & AV_PKT_FLAG_KEY)
        p.flags |= MK_PACKET_FLAG_KEY;
    if (d->packet->flags & AV_PKT_FLAG_DISCARD)
        p.flags |= MK_PACKET_FLAG_DISCARD;
    if (d->packet->flags & AV_PKT_FLAG_CORRUPT)
        p.flags |= MK_PACKET_FLAG_CORRUPT;
    p.track = d->packet->stream_index;
    p.data = d->packet->data;
    p.size = d->packet->size > 0 ? (size_t)d->packet->size : 0;
    p.pts = d->packet->pts;
    p.dts = d->packet->dts;
    p.duration = d->packet->duration;
    p.position = d->packet->pos;
    memcpy(packet, &p, p.struct_size);
    return MK_OK;
}

static int32_t ffx_seek(void *demuxer, int64_t time_us, uint32_t flags)
{
    ffx_demuxer *d = demuxer;
    if (d == NULL)
        return MK_EINVAL;
    if (d->io->seek == NULL) {
        snprintf(d->error, sizeof(d->error), "seek: the source cannot seek (a stream read once)");
        return MK_EUNSUPPORTED;
    }
    int ret = avformat_seek_file(d->fmt, -1, INT64_MIN, time_us, time_us,
                                 (flags & MK_DEMUX_SEEK_ANY) ? AVSEEK_FLAG_ANY : 0);
    if (ret < 0) {
        char what[96];
        snprintf(what, sizeof(what), "seeking to %" PRId64 " us", time_us);
        return ffx_fail(d, d->error, sizeof(d->error), what, ret);
    }
    return MK_OK;
}

static const char *ffx_last_error(void *demuxer)
{
    ffx_demuxer *d = demuxer;
    return d ? d->error : "";
}

static void ffx_destroy(void *demuxer)
{
    ffx_free(demuxer);
}

static const mk_plugin_demuxer_vtable ffx_vtable = {
    .struct_size = sizeof(mk_plugin_demuxer_vtable),
    .track_count = ffx_track_count,
    .get_track = ffx_get_track,
    .get_info = ffx_get_info,
    .read_packet = ffx_read_packet,
    .seek = ffx_seek,
    .last_error = ffx_last_error,
    .destroy = ffx_destroy,
};
