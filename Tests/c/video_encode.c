/*
 * video_encode.c — MediaKit's video encoder and muxer through the C API only.
 *
 *     video_encode IN.raw INFMT CODEDFMT W H FPS BFRAMES QP OUT.mp4
 *         reads raw pictures of INFMT (yuv420p, yuv444p, nv12, rgb24: the bytes of
 *         `ffmpeg -f rawvideo -pix_fmt INFMT`) from IN.raw, encodes them with libx264 -qp QP
 *         (0: lossless) -preset veryfast -g 12 -bf BFRAMES -threads 1 coding CODEDFMT (the encoder converts),
 *         every 7th picture forced to a key frame, and muxes the packets into OUT.mp4 with
 *         mk_muxer_add_track_params (the parameters from mk_video_encoder_get_params). Prints
 *         "info BACKEND WxH tb N/D reorder R extradata BYTES", then "packet PTS DTS KEY SIZE"
 *         for each packet, then "frames N packets M".
 *     video_encode writer IN.yuv W H FPS OUT [cancel]
 *         mk_writer: the yuv420p pictures of IN.yuv (libx264 -qp 0, pts counting frames) and a
 *         440 Hz s16 stereo 48 kHz tone of the same length (AAC) written into OUT, interleaved;
 *         with "cancel" the writer is closed unfinished after the pictures (OUT must not exist).
 *         Prints "writer frames N samples M".
 *     video_encode misuse
 *         the refusals: prints "STEP STATUS MESSAGE" for each, and "misuse ok" at the end.
 */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, mk_last_error());
    return 1;
}

struct layout { const char *name; int32_t code; int planes; int rowmul[3]; int xshift, yshift; };
static const struct layout LAYOUTS[] = {
    {"yuv420p", MK_PIXEL_YUV420P, 3, {1, 1, 1}, 1, 1},
    {"yuv444p", MK_PIXEL_YUV444P, 3, {1, 1, 1}, 0, 0},
    {"nv12", MK_PIXEL_NV12, 2, {1, 2, 0}, 1, 1},
    {"rgb24", MK_PIXEL_RGB24, 1, {3, 0, 0}, 0, 0},
};

static const struct layout *find_layout(const char *name) {
    for (size_t i = 0; i < sizeof LAYOUTS / sizeof LAYOUTS[0]; i++)
        if (strcmp(LAYOUTS[i].name, name) == 0) return &LAYOUTS[i];
    return NULL;
}

/* Row bytes and rows of plane i of a w x h picture. */
static void plane_size(const struct layout *l, int i, int w, int h, int64_t *row, int64_t *rows) {
    int cw = (w + (1 << l->xshift) - 1) >> l->xshift, ch = (h + (1 << l->yshift) - 1) >> l->yshift;
    *row = (int64_t)(i == 0 ? w : cw) * l->rowmul[i];
    *rows = i == 0 ? h : ch;
}

/* Receives every packet waiting, prints it and writes it to the muxer. */
static mk_status drain(mk_video_encoder *enc, mk_muxer *mux, int32_t track, int *packets) {
    mk_packet *p = NULL;
    mk_status st;
    while ((st = mk_video_encoder_receive_packet(enc, &p)) == MK_OK) {
        mk_packet_info pi;
        pi.struct_size = sizeof pi;
        mk_packet_get_info(p, &pi);
        printf("packet %lld %lld %d %zu\n", (long long)pi.pts, (long long)pi.dts, pi.is_keyframe, pi.size);
        st = mk_muxer_write_packet(mux, track, p);
        mk_packet_free(&p);
        if (st != MK_OK) return st;
        (*packets)++;
    }
    return st;
}

static int encode(int argc, char **argv) {
    if (argc != 10) {
        fprintf(stderr, "usage: video_encode IN.raw INFMT CODEDFMT W H FPS BFRAMES QP OUT.mp4\n");
        return 2;
    }
    const struct layout *in = find_layout(argv[2]), *coded = find_layout(argv[3]);
    if (!in || !coded) { fprintf(stderr, "unknown format\n"); return 2; }
    int w = atoi(argv[4]), h = atoi(argv[5]), fps = atoi(argv[6]), bf = atoi(argv[7]), qp = atoi(argv[8]);
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }

    mk_video_encoder_settings s;
    mk_video_encoder_default_settings(&s);
    s.codec = "libx264";
    s.width = w;
    s.height = h;
    s.pixel_format = coded->code;
    s.frame_rate_num = fps;
    s.frame_rate_den = 1;
    s.qp = qp;
    s.preset = "veryfast";
    s.gop_size = 12;
    s.max_b_frames = bf;
    s.threads = 1;
    mk_video_encoder *enc = NULL;
    if (mk_video_encoder_open(&enc, &s) != MK_OK) return fail("mk_video_encoder_open");
    mk_video_encoder_info info;
    info.struct_size = sizeof info;
    if (mk_video_encoder_get_info(enc, &info) != MK_OK) return fail("mk_video_encoder_get_info");
    printf("info %s %dx%d tb %d/%d reorder %d extradata %zu\n", info.backend, info.width, info.height,
           info.time_base_num, info.time_base_den, info.reorder_delay, info.extradata_size);

    mk_muxer *mux = NULL;
    if (mk_muxer_open(&mux, argv[9], NULL) != MK_OK) return fail("mk_muxer_open");
    mk_codec_params cp;
    cp.struct_size = sizeof cp;
    if (mk_video_encoder_get_params(enc, &cp) != MK_OK) return fail("mk_video_encoder_get_params");
    int32_t track = -1;
    if (mk_muxer_add_track_params(mux, &cp, &track) != MK_OK) return fail("mk_muxer_add_track_params");

    int64_t sizes[3] = {0, 0, 0}, strides[3] = {0, 0, 0}, total = 0;
    for (int i = 0; i < in->planes; i++) {
        int64_t row, rows;
        plane_size(in, i, w, h, &row, &rows);
        strides[i] = row;
        sizes[i] = row * rows;
        total += sizes[i];
    }
    uint8_t *buf = malloc((size_t)total);
    int frames = 0, packets = 0;
    mk_status st = MK_OK;
    while (fread(buf, 1, (size_t)total, f) == (size_t)total) {
        const uint8_t *planes[3] = {buf, buf + sizes[0], buf + sizes[0] + sizes[1]};
        int32_t flags = frames > 0 && frames % 7 == 0 ? MK_ENCODE_FORCE_KEYFRAME : 0;
        if (mk_video_encoder_send_planes(enc, in->code, planes, strides, frames, flags) != MK_OK) return fail("mk_video_encoder_send_planes");
        frames++;
        if ((st = drain(enc, mux, track, &packets)) != MK_EAGAIN) return fail("receive");
    }
    fclose(f);
    free(buf);
    if (mk_video_encoder_flush(enc) != MK_OK) return fail("mk_video_encoder_flush");
    if ((st = drain(enc, mux, track, &packets)) != MK_EOF) return fail("drain");
    if (mk_muxer_finish(mux) != MK_OK) return fail("mk_muxer_finish");
    mk_muxer_close(&mux);
    mk_video_encoder_close(&enc);
    mk_video_encoder_close(&enc);   /* harmless a second time */
    printf("frames %d packets %d\n", frames, packets);
    return 0;
}

static int expect(const char *step, mk_status got, mk_status want) {
    printf("%s %s %s\n", step, mk_status_name(got), got == MK_OK ? "" : mk_last_error());
    if (got != want) {
        fprintf(stderr, "%s: %s, expected %s\n", step, mk_status_name(got), mk_status_name(want));
        return 1;
    }
    return 0;
}

static int misuse(void) {
    int bad = 0;
    mk_video_encoder *enc = NULL;
    mk_video_encoder_settings s;
    mk_video_encoder_default_settings(&s);
    bad |= expect("null-settings", mk_video_encoder_open(&enc, NULL), MK_EINVAL);
    bad |= expect("null-codec", mk_video_encoder_open(&enc, &s), MK_EINVAL);
    s.codec = "libx264";
    s.width = 64;
    s.height = 64;
    bad |= expect("no-rate", mk_video_encoder_open(&enc, &s), MK_EINVAL);
    s.frame_rate_num = 25;
    s.frame_rate_den = 1;
    s.codec = "no-such-encoder";
    bad |= expect("unknown-codec", mk_video_encoder_open(&enc, &s), MK_ENOTFOUND);
    s.codec = "libx264";
    s.width = 0;
    bad |= expect("zero-width", mk_video_encoder_open(&enc, &s), MK_EINVAL);
    s.width = 64;
    s.struct_size = 8;
    bad |= expect("small-struct", mk_video_encoder_open(&enc, &s), MK_EINVAL);
    s.struct_size = sizeof s;
    s.pixel_format = MK_PIXEL_RGB48;
    bad |= expect("format-refused", mk_video_encoder_open(&enc, &s), MK_EUNSUPPORTED);
    if (enc != NULL) { fprintf(stderr, "a refused open left a handle\n"); bad = 1; }
    s.pixel_format = 0;
    bad |= expect("open", mk_video_encoder_open(&enc, &s), MK_OK);
    static uint8_t y[64 * 64], u[32 * 32], v[32 * 32];
    const uint8_t *planes[3] = {y, u, v};
    int64_t strides[3] = {64, 32, 32}, short_strides[3] = {63, 32, 32};
    bad |= expect("short-stride", mk_video_encoder_send_planes(enc, MK_PIXEL_YUV420P, planes, short_strides, 0, 0), MK_EINVAL);
    bad |= expect("bad-format", mk_video_encoder_send_planes(enc, 999, planes, strides, 0, 0), MK_EINVAL);
    bad |= expect("bad-flags", mk_video_encoder_send_planes(enc, MK_PIXEL_YUV420P, planes, strides, 0, 8), MK_EINVAL);
    const uint8_t *missing[3] = {y, NULL, v};
    bad |= expect("null-plane", mk_video_encoder_send_planes(enc, MK_PIXEL_YUV420P, missing, strides, 0, 0), MK_EINVAL);
    bad |= expect("send", mk_video_encoder_send_planes(enc, MK_PIXEL_YUV420P, planes, strides, 0, 0), MK_OK);
    bad |= expect("send-frame-null", mk_video_encoder_send_frame(enc, NULL, 0), MK_EINVAL);
    bad |= expect("flush", mk_video_encoder_flush(enc), MK_OK);
    bad |= expect("send-after-flush", mk_video_encoder_send_planes(enc, MK_PIXEL_YUV420P, planes, strides, 1, 0), MK_ESTATE);
    mk_packet *p = NULL;
    mk_status st;
    int n = 0;
    while ((st = mk_video_encoder_receive_packet(enc, &p)) == MK_OK) { mk_packet_free(&p); n++; }
    bad |= expect("drained", st, MK_EOF);
    if (n != 1) { fprintf(stderr, "%d packets for one picture\n", n); bad = 1; }
    mk_video_encoder_close(&enc);
    bad |= expect("closed-handle", mk_video_encoder_flush(enc), MK_EINVAL);
    mk_video_encoder_close(NULL);
    if (!bad) printf("misuse ok\n");
    return bad;
}

static int writer(int argc, char **argv) {
    if (argc < 7) { fprintf(stderr, "usage: video_encode writer IN.yuv W H FPS OUT [cancel]\n"); return 2; }
    int w = atoi(argv[3]), h = atoi(argv[4]), fps = atoi(argv[5]);
    int cancel = argc > 7 && strcmp(argv[7], "cancel") == 0;
    mk_video_encoder_settings v;
    mk_video_encoder_default_settings(&v);
    v.codec = "libx264";
    v.width = w;
    v.height = h;
    v.frame_rate_num = fps;
    v.frame_rate_den = 1;
    v.qp = 0;
    v.threads = 1;
    mk_encoder_settings a;
    mk_encoder_default_settings(&a);
    a.codec = "aac";
    a.bit_rate = 128000;
    mk_audio_format pcm = {sizeof pcm, MK_SAMPLES_S16, 48000, 2, 0};
    mk_writer_settings s;
    mk_writer_default_settings(&s);
    s.video = &v;
    s.audio = &a;
    s.audio_input = &pcm;
    mk_writer *wr = NULL;
    if (mk_writer_open(&wr, argv[6], &s) != MK_OK) return fail("mk_writer_open");
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 1; }
    size_t ysize = (size_t)w * h, csize = (size_t)((w + 1) / 2) * ((h + 1) / 2);
    uint8_t *buf = malloc(ysize + 2 * csize);
    int per_frame = 48000 / fps, frames = 0;
    long samples = 0;
    int16_t *tone = malloc(sizeof(int16_t) * 2 * (size_t)per_frame);
    while (fread(buf, 1, ysize + 2 * csize, f) == ysize + 2 * csize) {
        const uint8_t *planes[3] = {buf, buf + ysize, buf + ysize + csize};
        int64_t strides[3] = {w, (w + 1) / 2, (w + 1) / 2};
        if (mk_writer_write_video_planes(wr, MK_PIXEL_YUV420P, planes, strides, MK_NOPTS_VALUE, 0) != MK_OK) return fail("write video");
        for (int i = 0; i < per_frame; i++, samples++) {
            int16_t x = (int16_t)(8000 * ((samples * 440 / 48000) % 2 ? 1 : -1));
            tone[2 * i] = tone[2 * i + 1] = x;
        }
        const void *ap[1] = {tone};
        if (mk_writer_write_audio(wr, ap, per_frame) != MK_OK) return fail("write audio");
        frames++;
    }
    fclose(f);
    free(buf);
    free(tone);
    if (cancel) {
        mk_writer_close(&wr);
        printf("writer cancelled\n");
        return 0;
    }
    if (mk_writer_finish(wr) != MK_OK) return fail("mk_writer_finish");
    mk_status st = mk_writer_write_audio(wr, NULL, 1);
    if (st != MK_EINVAL && st != MK_ESTATE) { fprintf(stderr, "a write after finish gave %s\n", mk_status_name(st)); return 1; }
    mk_writer_close(&wr);
    mk_writer_close(&wr);
    printf("writer frames %d samples %ld\n", frames, samples);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "misuse") == 0) return misuse();
    if (argc >= 2 && strcmp(argv[1], "writer") == 0) return writer(argc, argv);
    return encode(argc, argv);
}
