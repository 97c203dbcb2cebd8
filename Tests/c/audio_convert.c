/*
 * audio_convert.c — MediaKit's audio converter through the C API only.
 *
 *     audio_convert track IN OUT.f32       first audio track of IN, decoded and converted to
 *                                          48 kHz mono f32 (push packets, read)
 *     audio_convert push CHUNK IN OUT      raw s16 stereo 44.1 kHz -> f32 stereo 48 kHz, pushed
 *                                          in CHUNK-frame pieces and read
 *     audio_convert pull CHUNK IN OUT      the same through mk_audio_converter_fill, the input
 *                                          callback giving CHUNK frames at a time
 *     audio_convert starved CHUNK IN OUT   the same, the callback answering MK_EAGAIN ("no
 *                                          data now") every other call: fill returns what it
 *                                          has with MK_EAGAIN and goes on at the next call
 *     audio_convert track-pull IN OUT.f32  as track, through mk_audio_converter_fill_packets
 *                                          (a first call of 0 frames, then the callback
 *                                          answering MK_EAGAIN every other call)
 *     audio_convert track-demuxer SKIP IN OUT.f32
 *                                          as track from frame SKIP on, through
 *                                          mk_audio_converter_fill_demuxer (a first call of 0
 *                                          frames, a skip of SKIP frames, fills of 777 frames)
 *     audio_convert kept                   frames waiting from a push are not lost when the
 *                                          input callback fails or has no data (issue 35)
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

/* Opens `in` and a converter of its first audio track to 48 kHz mono f32; returns the track,
 * or -1 (with a message) when something fails. */
static int32_t open_track_converter(const char *in, mk_demuxer **dmx, mk_audio_converter **c) {
    if (mk_demuxer_open(dmx, in) != MK_OK) { fail("open"); return -1; }
    int32_t count = 0, track = -1;
    mk_demuxer_track_count(*dmx, &count);
    for (int32_t i = 0; i < count && track < 0; i++) {
        mk_track_info ti;
        ti.struct_size = sizeof ti;
        if (mk_demuxer_track(*dmx, i, &ti) == MK_OK && ti.media_type == MK_MEDIA_AUDIO) track = i;
    }
    if (track < 0) { fprintf(stderr, "no audio track\n"); return -1; }
    mk_audio_format to = {sizeof to, MK_SAMPLES_F32, 48000, 1, 0};
    if (mk_audio_converter_open_track(c, *dmx, track, &to, NULL) != MK_OK) { fail("open_track"); return -1; }
    return track;
}

static int track_mode(const char *in, const char *outpath) {
    mk_demuxer *dmx = NULL;
    mk_audio_converter *c = NULL;
    int32_t track = open_track_converter(in, &dmx, &c);
    if (track < 0) return 1;
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

typedef struct { const int16_t *data; size_t frames, pos, chunk; int starve, calls; } source;

static int32_t give(void *user, int32_t wanted, const void *const **planes) {
    static const void *p[1];
    source *s = user;
    (void)wanted;
    if (s->starve && s->calls++ % 2 == 0) return MK_EAGAIN;
    size_t n = s->frames - s->pos < s->chunk ? s->frames - s->pos : s->chunk;
    p[0] = s->data + s->pos * 2;
    *planes = p;
    s->pos += n;
    return (int32_t)n;
}

static int pcm_mode(int pull, int starve, size_t chunk, const char *in, const char *outpath) {
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
        source s = {data, frames, 0, chunk, starve, 0};
        static float buf[1000 * 2];
        void *planes[1] = {buf};
        int32_t filled = 0, starved = 0;
        mk_status st;
        do {
            st = mk_audio_converter_fill(c, planes, 1000, give, &s, &filled);
            if (st != MK_OK && !(starve && st == MK_EAGAIN)) return fail("fill");
            if (st == MK_EAGAIN) starved++;
            if (fwrite(buf, 8, (size_t)filled, out) != (size_t)filled) return 1;
        } while (filled == 1000 || st == MK_EAGAIN);
        if (starve && starved == 0) { fprintf(stderr, "the callback starved the fill, which never said MK_EAGAIN\n"); return 1; }
        if (mk_audio_converter_read(c, planes, 1000, &filled) != MK_EOF) return fail("read after the pull ended: not MK_EOF");
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

typedef struct { mk_demuxer *dmx; int32_t track; int calls, starved; } packet_source;

static int32_t give_packet(void *user, int32_t wanted, mk_packet **packet) {
    packet_source *s = user;
    (void)wanted;
    if (s->calls++ % 2 == 1) { s->starved++; return MK_EAGAIN; }
    mk_status st = mk_demuxer_read_track_packet(s->dmx, s->track, packet);
    if (st == MK_EOF) return 0;
    return st == MK_OK ? 1 : st;
}

/* The track mode's output through the pull model for packets. */
static int track_pull_mode(const char *in, const char *outpath) {
    mk_demuxer *dmx = NULL;
    mk_audio_converter *c = NULL;
    int32_t track = open_track_converter(in, &dmx, &c);
    if (track < 0) return 1;
    packet_source s = {dmx, track, 0, 0};
    int32_t filled = -1;
    mk_audio_format f = {sizeof f, 0, 0, 0, 0};
    if (mk_audio_converter_output_format(c, &f) != MK_EAGAIN) return fail("output format known before a frame");
    mk_status st;
    do {    /* frames 0: decode up to the first frame (MK_EAGAIN: the callback starved it first) */
        st = mk_audio_converter_fill_packets(c, NULL, 0, give_packet, &s, &filled);
    } while (st == MK_EAGAIN && filled == 0);
    if (st != MK_OK || filled != 0) return fail("fill_packets of 0 frames");
    if (mk_audio_converter_output_format(c, &f) != MK_OK || f.sample_rate != 48000 || f.channels != 1) return fail("output format");
    FILE *out = fopen(outpath, "wb");
    if (!out) { perror(outpath); return 1; }
    float *buf = malloc(sizeof(float) * 777 * (size_t)f.channels);
    void *planes[1] = {buf};
    do {
        st = mk_audio_converter_fill_packets(c, planes, 777, give_packet, &s, &filled);
        if (st != MK_OK && st != MK_EAGAIN) return fail("fill_packets");
        if (fwrite(buf, sizeof(float) * (size_t)f.channels, (size_t)filled, out) != (size_t)filled) return 1;
    } while (filled == 777 || st == MK_EAGAIN);
    if (s.starved == 0) { fprintf(stderr, "the callback never starved the fill\n"); return 1; }
    printf("channels %d starved %d\n", f.channels, s.starved);
    free(buf);
    mk_audio_converter_close(&c);
    mk_demuxer_close(&dmx);
    return fclose(out) != 0;
}

/* The track mode's output from frame `skip` on, the library reading the packets. */
static int track_demuxer_mode(long skip, const char *in, const char *outpath) {
    mk_demuxer *dmx = NULL;
    mk_audio_converter *c = NULL;
    if (open_track_converter(in, &dmx, &c) < 0) return 1;
    int32_t filled = -1;
    mk_audio_format f = {sizeof f, 0, 0, 0, 0};
    if (mk_audio_converter_fill_demuxer(c, dmx, NULL, 0, &filled) != MK_OK || filled != 0) return fail("fill_demuxer of 0 frames");
    if (mk_audio_converter_output_format(c, &f) != MK_OK || f.sample_rate != 48000 || f.channels != 1) return fail("output format");
    if (skip > 0) {
        if (mk_audio_converter_fill_demuxer(c, dmx, NULL, (int32_t)skip, &filled) != MK_OK) return fail("skip");
        if (filled != skip) { fprintf(stderr, "skipped %d frames, not %ld\n", filled, skip); return 1; }
    }
    FILE *out = fopen(outpath, "wb");
    if (!out) { perror(outpath); return 1; }
    float *buf = malloc(sizeof(float) * 777 * (size_t)f.channels);
    void *planes[1] = {buf};
    mk_status st;
    do {
        st = mk_audio_converter_fill_demuxer(c, dmx, planes, 777, &filled);
        if (st != MK_OK) return fail("fill_demuxer");
        if (fwrite(buf, sizeof(float) * (size_t)f.channels, (size_t)filled, out) != (size_t)filled) return 1;
    } while (filled == 777);
    if (mk_audio_converter_fill_demuxer(c, dmx, planes, 777, &filled) != MK_OK || filled != 0) return fail("a fill after the end");
    printf("channels %d\n", f.channels);
    free(buf);
    mk_audio_converter_close(&c);
    mk_demuxer_close(&dmx);
    return fclose(out) != 0;
}

typedef struct { int mode; } failing_source;     /* 0: fails, 1: no data now */

static int32_t fail_or_starve(void *user, int32_t wanted, const void *const **planes) {
    (void)wanted; (void)planes;
    return ((failing_source *)user)->mode == 0 ? -5 : MK_EAGAIN;
}

/* Issue 35: 500 frames waiting from a push came back as 0 when the callback failed. */
static int kept_mode(void) {
    int fails = 0;
    for (int mode = 0; mode < 2; mode++) {
        for (int resample = 0; resample < 2; resample++) {
            mk_audio_format from = {sizeof from, MK_SAMPLES_S16, 44100, 2, 0};
            mk_audio_format to = {sizeof to, MK_SAMPLES_F32, resample ? 48000 : 44100, 2, 0};
            static int16_t in[2 * 2000];
            for (int i = 0; i < 2 * 2000; i++) in[i] = (int16_t)((i * 7919) % 20000 - 10000);
            const void *ip[1] = {in};
            mk_audio_converter *pushed = NULL, *c = NULL;
            if (mk_audio_converter_open(&pushed, &from, &to, NULL) != MK_OK) return fail("open");
            if (mk_audio_converter_open(&c, &from, &to, NULL) != MK_OK) return fail("open");
            static float want[2 * 4000], got[2 * 4000];
            void *wp[1] = {want}, *gp[1] = {got};
            int32_t waiting = 0, n = 0, filled = -1;
            /* the oracle: the same input pushed, everything read */
            if (mk_audio_converter_push(pushed, ip, 500) != MK_OK) return fail("push");
            if (mk_audio_converter_read(pushed, wp, 4000, &n) != MK_OK) return fail("read");
            if (mk_audio_converter_push(c, ip, 500) != MK_OK) return fail("push");
            if (mk_audio_converter_read(c, NULL, 0, &waiting) != MK_OK || waiting != n) return fail("waiting");
            failing_source fs = {mode};
            mk_status st = mk_audio_converter_fill(c, gp, 1000, fail_or_starve, &fs, &filled);
            mk_status expected = mode == 0 ? MK_EFAIL : MK_EAGAIN;
            if (st != expected || filled != waiting || memcmp(got, want, sizeof(float) * 2 * (size_t)filled) != 0) {
                printf("FAIL %s, %s: status %d (want %d), %d of %d waiting frames returned%s\n", mode == 0 ? "callback error" : "no data now",
                       resample ? "resampling" : "same rate", st, expected, filled, waiting,
                       filled == waiting ? ", different samples" : "");
                fails++;
            }
            if (mode == 0 && !strstr(mk_last_error(), "-5")) { printf("FAIL the message does not name the callback's -5: %s\n", mk_last_error()); fails++; }
            /* the stream goes on: the rest equals the rest of the push */
            if (mk_audio_converter_push(pushed, (const void *[]){in + 1000}, 1500) != MK_OK || mk_audio_converter_flush(pushed) != MK_OK) return fail("push rest");
            int32_t total = 0;
            while (mk_audio_converter_read(pushed, (void *[]){want + 2 * total}, 4000 - total, &n) == MK_OK) total += n;
            source rest = {in + 1000, 1500, 0, 300, 0, 0};
            int32_t pulled = 0;
            do {
                if (mk_audio_converter_fill(c, (void *[]){got + 2 * pulled}, 700, give, &rest, &filled) != MK_OK) return fail("fill rest");
                pulled += filled;
            } while (filled == 700);
            if (pulled != total || memcmp(got, want, sizeof(float) * 2 * (size_t)total) != 0) {
                printf("FAIL %s, %s: after it, %d frames pulled, the push gave %d%s\n", mode == 0 ? "callback error" : "no data now",
                       resample ? "resampling" : "same rate", pulled, total, pulled == total ? " (different samples)" : "");
                fails++;
            }
            mk_audio_converter_close(&pushed);
            mk_audio_converter_close(&c);
        }
    }
    printf("%d failed\n", fails);
    return fails != 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "track") == 0) return track_mode(argv[2], argv[3]);
    if (argc == 5 && (strcmp(argv[1], "push") == 0 || strcmp(argv[1], "pull") == 0 || strcmp(argv[1], "starved") == 0))
        return pcm_mode(strcmp(argv[1], "push") != 0, strcmp(argv[1], "starved") == 0, (size_t)atol(argv[2]), argv[3], argv[4]);
    if (argc == 4 && strcmp(argv[1], "track-pull") == 0) return track_pull_mode(argv[2], argv[3]);
    if (argc == 5 && strcmp(argv[1], "track-demuxer") == 0) return track_demuxer_mode(atol(argv[2]), argv[3], argv[4]);
    if (argc == 2 && strcmp(argv[1], "kept") == 0) return kept_mode();
    fprintf(stderr, "usage: audio_convert track IN OUT | push|pull CHUNK IN OUT\n");
    return 2;
}
