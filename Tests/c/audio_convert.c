/*
 * audio_convert.c — MediaKit's audio converter through the C API only.
 *
 *     audio_convert track IN OUT.f32       first audio track of IN, decoded and converted to
 *                                          48 kHz mono f32 (push packets, read)
 *     audio_convert push CHUNK IN OUT      raw s16 stereo 44.1 kHz -> f32 stereo 48 kHz, pushed
 *                                          in CHUNK-frame pieces and read
 *     audio_convert pull CHUNK IN OUT      the same through mk_audio_converter_fill, the input
 *                                          callback giving CHUNK frames at a time
 */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, mk_last_error());
    return 1;
}

/* Reads everything waiting into out. Returns the last status (MK_EAGAIN or MK_EOF when all went well). */
static mk_status drain(mk_audio_converter *c, FILE *out, size_t bytes_per_frame) {
    static float buf[4096 * 8];
    void *planes[1] = {buf};
    int32_t n = 0;
    mk_status st;
    while ((st = mk_audio_converter_read(c, planes, (int32_t)(sizeof buf / bytes_per_frame), &n)) == MK_OK) {
        if (fwrite(buf, bytes_per_frame, (size_t)n, out) != (size_t)n) return MK_EIO;
    }
    return st;
}

static int track_mode(const char *in, const char *outpath) {
    mk_demuxer *dmx = NULL;
    if (mk_demuxer_open(&dmx, in) != MK_OK) return fail("open");
    int32_t count = 0, track = -1;
    mk_demuxer_track_count(dmx, &count);
    for (int32_t i = 0; i < count && track < 0; i++) {
        mk_track_info ti;
        ti.struct_size = sizeof ti;
        if (mk_demuxer_track(dmx, i, &ti) == MK_OK && ti.media_type == MK_MEDIA_AUDIO) track = i;
    }
    if (track < 0) { fprintf(stderr, "no audio track\n"); return 1; }
    mk_audio_format to = {sizeof to, MK_SAMPLES_F32, 48000, 1, 0};
    mk_audio_converter *c = NULL;
    if (mk_audio_converter_open_track(&c, dmx, track, &to, NULL) != MK_OK) return fail("open_track");
    FILE *out = fopen(outpath, "wb");
    if (!out) { perror(outpath); return 1; }
    mk_packet *pkt = NULL;
    mk_status st;
    while ((st = mk_demuxer_read_track_packet(dmx, track, &pkt)) == MK_OK) {
        st = mk_audio_converter_push_packet(c, pkt);
        mk_packet_free(&pkt);
        if (st != MK_OK) return fail("push_packet");
        if (drain(c, out, 4) != MK_EAGAIN) return fail("read");
    }
    if (st != MK_EOF) return fail("read packet");
    if (mk_audio_converter_flush(c) != MK_OK) return fail("flush");
    if (drain(c, out, 4) != MK_EOF) return fail("read tail");
    mk_audio_format f = {sizeof f, 0, 0, 0, 0};
    if (mk_audio_converter_output_format(c, &f) != MK_OK || f.sample_format != MK_SAMPLES_F32 || f.sample_rate != 48000 || f.channels != 1) {
        fprintf(stderr, "output format %d %d %d\n", f.sample_format, f.sample_rate, f.channels);
        return 1;
    }
    mk_audio_converter_close(&c);
    mk_demuxer_close(&dmx);
    return fclose(out) != 0;
}

typedef struct { const int16_t *data; size_t frames, pos, chunk; } source;

static int32_t give(void *user, int32_t wanted, const void *const **planes) {
    static const void *p[1];
    source *s = user;
    (void)wanted;
    size_t n = s->frames - s->pos < s->chunk ? s->frames - s->pos : s->chunk;
    p[0] = s->data + s->pos * 2;
    *planes = p;
    s->pos += n;
    return (int32_t)n;
}

static int pcm_mode(int pull, size_t chunk, const char *in, const char *outpath) {
    FILE *f = fopen(in, "rb");
    if (!f) { perror(in); return 1; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    int16_t *data = malloc((size_t)size + 4);
    if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) return 1;
    fclose(f);
    size_t frames = (size_t)size / 4;
    mk_audio_format from = {sizeof from, MK_SAMPLES_S16, 44100, 2, 0}, to = {sizeof to, MK_SAMPLES_F32, 48000, 2, 0};
    mk_audio_converter *c = NULL;
    if (mk_audio_converter_open(&c, &from, &to, NULL) != MK_OK) return fail("open");
    FILE *out = fopen(outpath, "wb");
    if (!out) { perror(outpath); return 1; }
    if (pull) {
        source s = {data, frames, 0, chunk};
        static float buf[1000 * 2];
        void *planes[1] = {buf};
        int32_t filled = 0;
        do {
            if (mk_audio_converter_fill(c, planes, 1000, give, &s, &filled) != MK_OK) return fail("fill");
            if (fwrite(buf, 8, (size_t)filled, out) != (size_t)filled) return 1;
        } while (filled == 1000);
    } else {
        for (size_t pos = 0; pos < frames; pos += chunk) {
            const void *planes[1] = {data + pos * 2};
            int32_t n = (int32_t)(frames - pos < chunk ? frames - pos : chunk);
            if (mk_audio_converter_push(c, planes, n) != MK_OK) return fail("push");
            if (drain(c, out, 8) != MK_EAGAIN) return fail("read");
        }
        if (mk_audio_converter_flush(c) != MK_OK) return fail("flush");
        if (drain(c, out, 8) != MK_EOF) return fail("read tail");
    }
    mk_audio_converter_close(&c);
    free(data);
    return fclose(out) != 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "track") == 0) return track_mode(argv[2], argv[3]);
    if (argc == 5 && (strcmp(argv[1], "push") == 0 || strcmp(argv[1], "pull") == 0))
        return pcm_mode(strcmp(argv[1], "pull") == 0, (size_t)atol(argv[2]), argv[3], argv[4]);
    fprintf(stderr, "usage: audio_convert track IN OUT | push|pull CHUNK IN OUT\n");
    return 2;
}
