/*
 * encode.c — MediaKit's encoders through the C API only.
 *
 *     encode flac CHUNK IN.s16 OUT.flac   raw s16 stereo 48 kHz pushed in CHUNK-frame pieces
 *                                         through mk_encoder (FLAC); OUT is "fLaC", the
 *                                         encoder's final STREAMINFO and the packets
 *     encode flac-pull CHUNK IN.s16 OUT.flac   the same through mk_encoder_fill (the pull
 *                                         model), the input callback giving CHUNK frames and
 *                                         answering MK_EAGAIN ("no data now") every other call
 *     encode transcode IN OUT CODEC BITRATE [COPYVIDEO]   mk_transcode (CODEC "-": from OUT's
 *                                         extension) with every setting in mk_encoder_settings
 *     encode transcode-with IN OUT CODEC BITRATE [COPYVIDEO]   the same through mk_transcode_with
 *                                         (copy_video and progress in mk_transcode_settings)
 *         both print "progress-calls N" (a counting progress callback)
 *     encode refuse                       opens Opus at 44.1 kHz and prints the refusal
 *     encode refuse-transcode IN OUT      mk_transcode_with with a short struct_size and with
 *                                         copy_video / progress set in the encoder settings:
 *                                         prints each status and message, OUT is never written
 */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, mk_last_error());
    return 1;
}

/* Receives every packet waiting and appends its bytes to out. Returns the last status. */
static mk_status drain(mk_encoder *enc, FILE *out) {
    mk_packet *p = NULL;
    mk_status st;
    while ((st = mk_encoder_receive_packet(enc, &p)) == MK_OK) {
        mk_packet_info pi;
        pi.struct_size = sizeof pi;
        mk_packet_get_info(p, &pi);
        if (fwrite(pi.data, 1, pi.size, out) != pi.size) st = MK_EIO;
        mk_packet_free(&p);
        if (st != MK_OK) return st;
    }
    return st;
}

typedef struct { FILE *f; int16_t *buf; int chunk, calls, starved; int64_t given; } pcm_source;

static int32_t give_pcm(void *user, int32_t wanted, const void *const **planes) {
    static const void *p[1];
    pcm_source *s = user;
    (void)wanted;
    if (s->calls++ % 2 == 0) { s->starved++; return MK_EAGAIN; }
    size_t n = fread(s->buf, 4, (size_t)s->chunk, s->f);
    p[0] = s->buf;
    *planes = p;
    s->given += (int64_t)n;
    return (int32_t)n;
}

/* Writes the bytes of `count` packets to out and frees them. */
static int write_packets(mk_packet **packets, int32_t count, FILE *out) {
    for (int32_t i = 0; i < count; i++) {
        mk_packet_info pi;
        pi.struct_size = sizeof pi;
        if (mk_packet_get_info(packets[i], &pi) != MK_OK || fwrite(pi.data, 1, pi.size, out) != pi.size) return 1;
        mk_packet_free(&packets[i]);
    }
    return 0;
}

static int flac_mode(int pull, int chunk, const char *in, const char *outpath) {
    FILE *f = fopen(in, "rb");
    if (!f) { perror(in); return 1; }
    mk_audio_format fmt = {sizeof fmt, MK_SAMPLES_S16, 48000, 2, 0};
    mk_encoder_settings s;
    mk_encoder_default_settings(&s);
    s.codec = "flac";
    mk_encoder *enc = NULL;
    if (mk_encoder_open(&enc, &fmt, &s) != MK_OK) return fail("mk_encoder_open");
    mk_encoder_info info;
    info.struct_size = sizeof info;
    if (mk_encoder_get_info(enc, &info) != MK_OK || info.extradata_size != 34 || strcmp(info.codec, "flac") != 0)
        return fail("mk_encoder_get_info");
    FILE *frames = tmpfile();
    if (!frames) { perror("tmpfile"); return 1; }
    int16_t *buf = malloc((size_t)chunk * 4);
    size_t n;
    int64_t given = 0;
    mk_status st = MK_OK;
    if (pull) {
        pcm_source src = {f, buf, chunk, 0, 0, 0};
        mk_packet *packets[3];
        int32_t filled = 0;
        do {
            st = mk_encoder_fill(enc, packets, 3, give_pcm, &src, &filled);
            if (st != MK_OK && st != MK_EAGAIN) return fail("mk_encoder_fill");
            if (write_packets(packets, filled, frames)) return 1;
        } while (filled == 3 || st == MK_EAGAIN);
        if (src.starved == 0) { fprintf(stderr, "the callback never starved the fill\n"); return 1; }
        const void *none[1] = {buf};
        if (mk_encoder_push(enc, none, 1) != MK_ESTATE) return fail("mk_encoder_push on a pulled encoder is not MK_ESTATE");
        given = src.given;
    }
    while (!pull && buf && (n = fread(buf, 4, (size_t)chunk, f)) > 0) {
        const void *planes[1] = {buf};
        given += (int64_t)n;
        if (mk_encoder_push(enc, planes, (int32_t)n) != MK_OK) return fail("mk_encoder_push");
        if ((st = drain(enc, frames)) != MK_EAGAIN) return fail("receive");
    }
    if (!pull && mk_encoder_flush(enc) != MK_OK) return fail("mk_encoder_flush");
    if (!pull && (st = drain(enc, frames)) != MK_EOF) return fail("drain");
    if (mk_encoder_get_info(enc, &info) != MK_OK) return fail("mk_encoder_get_info after flush");
    if (info.input_samples != given) return fail("mk_encoder_info.input_samples is not the frames pushed");
    FILE *out = fopen(outpath, "wb");
    if (!out) { perror(outpath); return 1; }
    const unsigned char head[8] = {'f', 'L', 'a', 'C', 0x80, 0, 0, 34};
    fwrite(head, 1, 8, out);
    fwrite(info.extradata, 1, info.extradata_size, out);
    rewind(frames);
    char copy[65536];
    while ((n = fread(copy, 1, sizeof copy, frames)) > 0) fwrite(copy, 1, n, out);
    fclose(out);
    fclose(frames);
    fclose(f);
    free(buf);
    mk_encoder_close(&enc);
    mk_encoder_close(&enc);   /* harmless on NULL */
    return 0;
}

static int progress_calls;

static int32_t count_progress(void *user, double fraction, int64_t done, int64_t total) {
    (void)user; (void)fraction; (void)done; (void)total;
    progress_calls++;
    return 0;
}

/* mk_transcode (old) or mk_transcode_with (new) with the same settings. */
static int transcode_mode(int with, char **argv, int copy_video) {
    mk_encoder_settings s;
    mk_encoder_default_settings(&s);
    s.codec = strcmp(argv[4], "-") == 0 ? NULL : argv[4];
    s.bit_rate = atoi(argv[5]);
    mk_status st;
    if (with) {
        mk_transcode_settings t;
        mk_transcode_default_settings(&t);
        t.encoder = &s;
        t.copy_video = copy_video;
        t.progress = count_progress;
        st = mk_transcode_with(argv[2], argv[3], &t);
    } else {
        s.copy_video = copy_video;
        s.progress = count_progress;
        st = mk_transcode(argv[2], argv[3], &s);
    }
    if (st != MK_OK) return fail(with ? "mk_transcode_with" : "mk_transcode");
    printf("progress-calls %d\n", progress_calls);
    return 0;
}

/* Prints "NAME: STATUS: message" for one refused mk_transcode_with. */
static int refused(const char *name, const char *src, const char *dst, const mk_transcode_settings *t) {
    mk_status st = mk_transcode_with(src, dst, t);
    printf("%s: %s: %s\n", name, mk_status_name(st), mk_last_error());
    return st == MK_EINVAL ? 0 : 1;
}

static int refuse_transcode(const char *src, const char *dst) {
    int bad = 0;
    mk_encoder_settings s;
    mk_encoder_default_settings(&s);
    mk_transcode_settings t;
    mk_transcode_default_settings(&t);
    t.encoder = &s;
    t.struct_size = sizeof t - 1;
    bad |= refused("short-size", src, dst, &t);
    t.struct_size = 0;
    bad |= refused("zero-size", src, dst, &t);
    mk_transcode_default_settings(&t);
    t.encoder = &s;
    s.copy_video = 1;
    bad |= refused("encoder-copy-video", src, dst, &t);
    s.copy_video = 0;
    s.progress = count_progress;
    bad |= refused("encoder-progress", src, dst, &t);
    bad |= progress_calls != 0;
    return bad;
}

int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "flac") == 0) return flac_mode(0, atoi(argv[2]), argv[3], argv[4]);
    if (argc == 5 && strcmp(argv[1], "flac-pull") == 0) return flac_mode(1, atoi(argv[2]), argv[3], argv[4]);
    if ((argc == 6 || argc == 7) && strcmp(argv[1], "transcode") == 0)
        return transcode_mode(0, argv, argc == 7 ? atoi(argv[6]) : 0);
    if ((argc == 6 || argc == 7) && strcmp(argv[1], "transcode-with") == 0)
        return transcode_mode(1, argv, argc == 7 ? atoi(argv[6]) : 0);
    if (argc == 4 && strcmp(argv[1], "refuse-transcode") == 0) return refuse_transcode(argv[2], argv[3]);
    if (argc == 2 && strcmp(argv[1], "refuse") == 0) {
        mk_audio_format fmt = {sizeof fmt, MK_SAMPLES_F32, 44100, 2, 0};
        mk_encoder_settings s;
        mk_encoder_default_settings(&s);
        s.codec = "opus";
        s.sample_rate = 44100;
        mk_encoder *enc = NULL;
        mk_status st = mk_encoder_open(&enc, &fmt, &s);
        printf("%s: %s\n", mk_status_name(st), mk_last_error());
        return st == MK_EUNSUPPORTED && enc == NULL ? 0 : 1;
    }
    fprintf(stderr, "usage: encode flac CHUNK IN.s16 OUT.flac | transcode[-with] IN OUT CODEC BITRATE [COPYVIDEO] | refuse"
                    " | refuse-transcode IN OUT\n");
    return 2;
}
