/*
 * compression_session.c — mk_compression_session (the asynchronous video encoder) against
 * mk_video_encoder (the synchronous one), and mk_transcode_with's video re-encode, through the
 * C API only.
 *
 *     compression_session encode IN.yuv W H FPS BFRAMES QP
 *         reads the yuv420p pictures of IN.yuv (`ffmpeg -f rawvideo -pix_fmt yuv420p`) and
 *         encodes each with both encoders set up alike (libx264 -qp QP -preset veryfast -g 12
 *         -bf BFRAMES -threads 1, every 7th picture forced to a key frame). Halfway,
 *         mk_compression_session_complete_frames(pts of the last picture) must have delivered
 *         as many packets as mk_video_encoder_receive_packet gave by then; at the end
 *         mk_compression_session_flush delivers the rest. Prints "sync PTS DTS KEY SIZE HASH"
 *         for each packet of the synchronous encoder, "async ..." for each packet the callback
 *         got (in the order it got them), "mid sync N async M", "callback-thread other" when
 *         every callback ran on a thread other than the caller's and never two at once, and
 *         "after-flush STATUS" for an encode after the end.
 *     compression_session misuse
 *         the refusals: prints "STEP STATUS MESSAGE" for each, and "misuse ok" at the end.
 *     compression_session transcode SRC DST KEY=VALUE ...
 *         mk_transcode_with with mk_transcode_settings' fields set from KEY=VALUE (video_codec,
 *         crf, qp, video_bit_rate, preset, profile, gop_size, max_b_frames, threads, scale_width,
 *         scale_height, scale_filter, fps_num, fps_den, no_video, no_audio, copy_audio,
 *         copy_video; audio_codec, audio_bit_rate into mk_encoder_settings). Prints
 *         "transcode STATUS MESSAGE".
 */
#include <mediakit/mediakit.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, mk_last_error());
    return 1;
}

/* FNV-1a, 64 bits: enough to tell two packets' bytes apart. */
static unsigned long long hash(const uint8_t *data, size_t size) {
    unsigned long long h = 1469598103934665603ULL;
    for (size_t i = 0; i < size; i++) { h ^= data[i]; h *= 1099511628211ULL; }
    return h;
}

static void print_packet(const char *who, mk_packet *p) {
    mk_packet_info pi;
    memset(&pi, 0, sizeof pi);
    pi.struct_size = sizeof pi;
    mk_packet_get_info(p, &pi);
    printf("%s %lld %lld %d %zu %016llx\n", who, (long long)pi.pts, (long long)pi.dts, pi.is_keyframe, pi.size,
           hash(pi.data, pi.size));
}

/* What the callbacks share with the caller. */
struct delivery {
    pthread_mutex_t lock;
    pthread_t caller;
    int packets;
    int on_caller_thread;   /* callbacks run on the caller's thread */
    int overlapping;        /* a callback started while another ran */
    int inside;
    int errors;
};

static void on_packet(void *user, mk_packet *packet) {
    struct delivery *d = user;
    pthread_mutex_lock(&d->lock);
    if (d->inside) d->overlapping = 1;
    d->inside = 1;
    if (pthread_equal(pthread_self(), d->caller)) d->on_caller_thread = 1;
    pthread_mutex_unlock(&d->lock);
    print_packet("async", packet);   /* stdout is locked per call: the line stays whole */
    mk_packet_free(&packet);
    pthread_mutex_lock(&d->lock);
    d->packets++;
    d->inside = 0;
    pthread_mutex_unlock(&d->lock);
}

static void on_error(void *user, mk_status status, const char *message) {
    struct delivery *d = user;
    printf("error %s %s\n", mk_status_name(status), message);
    pthread_mutex_lock(&d->lock);
    d->errors++;
    pthread_mutex_unlock(&d->lock);
}

static void settings_for(mk_video_encoder_settings *s, int w, int h, int fps, int bf, int qp) {
    mk_video_encoder_default_settings(s);
    s->codec = "libx264";
    s->width = w;
    s->height = h;
    s->frame_rate_num = fps;
    s->frame_rate_den = 1;
    s->qp = qp;
    s->preset = "veryfast";
    s->gop_size = 12;
    s->max_b_frames = bf;
    s->threads = 1;
}

static int drain(mk_video_encoder *enc, int *packets, mk_status want) {
    mk_packet *p = NULL;
    mk_status st;
    while ((st = mk_video_encoder_receive_packet(enc, &p)) == MK_OK) {
        print_packet("sync", p);
        mk_packet_free(&p);
        (*packets)++;
    }
    if (st != want) return fail("mk_video_encoder_receive_packet");
    return 0;
}

static int encode(int argc, char **argv) {
    if (argc != 8) { fprintf(stderr, "usage: compression_session encode IN.yuv W H FPS BFRAMES QP\n"); return 2; }
    int w = atoi(argv[3]), h = atoi(argv[4]), fps = atoi(argv[5]), bf = atoi(argv[6]), qp = atoi(argv[7]);
    FILE *f = fopen(argv[2], "rb");
    if (!f) { perror(argv[2]); return 1; }
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    size_t frame_size = (size_t)w * h + 2 * (size_t)((w + 1) / 2) * ((h + 1) / 2);
    int total = (int)(bytes / (long)frame_size);

    mk_video_encoder_settings s;
    settings_for(&s, w, h, fps, bf, qp);
    mk_video_encoder *enc = NULL;
    if (mk_video_encoder_open(&enc, &s) != MK_OK) return fail("mk_video_encoder_open");
    struct delivery d;
    memset(&d, 0, sizeof d);
    pthread_mutex_init(&d.lock, NULL);
    d.caller = pthread_self();
    mk_compression_session_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = sizeof cb;
    cb.packet = on_packet;
    cb.error = on_error;
    mk_compression_session *cs = NULL;
    if (mk_compression_session_open(&cs, &s, &cb, &d) != MK_OK) return fail("mk_compression_session_open");
    mk_codec_params a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    a.struct_size = b.struct_size = sizeof a;
    if (mk_video_encoder_get_params(enc, &a) != MK_OK || mk_compression_session_get_params(cs, &b) != MK_OK) return fail("get_params");
    printf("params %s %s %dx%d tb %d/%d reorder %d/%d extradata %s\n", a.codec, b.codec, b.width, b.height, b.time_base_num,
           b.time_base_den, a.reorder_depth, b.reorder_depth,
           a.extradata_size == b.extradata_size && memcmp(a.extradata, b.extradata, a.extradata_size) == 0 ? "same" : "differ");

    uint8_t *buf = malloc(frame_size);
    const uint8_t *planes[3] = {buf, buf + (size_t)w * h, buf + (size_t)w * h + (size_t)((w + 1) / 2) * ((h + 1) / 2)};
    int64_t strides[3] = {w, (w + 1) / 2, (w + 1) / 2};
    int sync_packets = 0;
    for (int i = 0; i < total; i++) {
        if (fread(buf, 1, frame_size, f) != frame_size) return fail("fread");
        int32_t flags = i > 0 && i % 7 == 0 ? MK_ENCODE_FORCE_KEYFRAME : 0;
        if (mk_video_encoder_send_planes(enc, MK_PIXEL_YUV420P, planes, strides, i, flags) != MK_OK) return fail("send_planes");
        if (drain(enc, &sync_packets, MK_EAGAIN)) return 1;
        /* The picture is copied before this returns: the buffer is free to be refilled. */
        if (mk_compression_session_encode_planes(cs, MK_PIXEL_YUV420P, planes, strides, i, flags) != MK_OK) return fail("encode_planes");
        if (i == total / 2) {
            if (mk_compression_session_complete_frames(cs, i) != MK_OK) return fail("complete_frames");
            pthread_mutex_lock(&d.lock);
            printf("mid sync %d async %d\n", sync_packets, d.packets);
            pthread_mutex_unlock(&d.lock);
        }
    }
    fclose(f);
    if (mk_video_encoder_flush(enc) != MK_OK) return fail("mk_video_encoder_flush");
    if (drain(enc, &sync_packets, MK_EOF)) return 1;
    if (mk_compression_session_flush(cs) != MK_OK) return fail("mk_compression_session_flush");
    pthread_mutex_lock(&d.lock);
    int delivered = d.packets;
    pthread_mutex_unlock(&d.lock);
    printf("end sync %d async %d frames %d\n", sync_packets, delivered, total);
    mk_status st = mk_compression_session_encode_planes(cs, MK_PIXEL_YUV420P, planes, strides, total, 0);
    printf("after-flush %s\n", mk_status_name(st));
    printf("second-flush %s\n", mk_status_name(mk_compression_session_flush(cs)));
    mk_compression_session_close(&cs);
    mk_compression_session_close(&cs);   /* harmless a second time */
    mk_video_encoder_close(&enc);
    free(buf);
    printf("callback-thread %s%s errors %d\n", d.on_caller_thread ? "caller" : "other", d.overlapping ? " overlapping" : "", d.errors);
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

static void count_packet(void *user, mk_packet *packet) {
    (*(int *)user)++;
    mk_packet_free(&packet);
}

static int misuse(void) {
    int bad = 0, packets = 0;
    mk_compression_session *cs = NULL;
    mk_video_encoder_settings s;
    settings_for(&s, 64, 64, 25, 2, 20);
    mk_compression_session_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = sizeof cb;
    bad |= expect("null-out", mk_compression_session_open(NULL, &s, &cb, NULL), MK_EINVAL);
    bad |= expect("null-callbacks", mk_compression_session_open(&cs, &s, NULL, NULL), MK_EINVAL);
    bad |= expect("no-packet-callback", mk_compression_session_open(&cs, &s, &cb, NULL), MK_EINVAL);
    cb.packet = count_packet;
    cb.struct_size = 4;
    bad |= expect("small-callbacks", mk_compression_session_open(&cs, &s, &cb, &packets), MK_EINVAL);
    cb.struct_size = sizeof cb;
    bad |= expect("null-settings", mk_compression_session_open(&cs, NULL, &cb, &packets), MK_EINVAL);
    s.codec = "no-such-encoder";
    bad |= expect("unknown-codec", mk_compression_session_open(&cs, &s, &cb, &packets), MK_ENOTFOUND);
    if (cs != NULL) { fprintf(stderr, "a refused open left a handle\n"); bad = 1; }
    s.codec = "libx264";
    bad |= expect("open", mk_compression_session_open(&cs, &s, &cb, &packets), MK_OK);
    static uint8_t y[64 * 64], u[32 * 32], v[32 * 32];
    const uint8_t *planes[3] = {y, u, v};
    int64_t strides[3] = {64, 32, 32}, short_strides[3] = {63, 32, 32};
    bad |= expect("nopts", mk_compression_session_encode_planes(cs, MK_PIXEL_YUV420P, planes, strides, MK_NOPTS_VALUE, 0), MK_EINVAL);
    bad |= expect("short-stride", mk_compression_session_encode_planes(cs, MK_PIXEL_YUV420P, planes, short_strides, 0, 0), MK_EINVAL);
    bad |= expect("bad-format", mk_compression_session_encode_planes(cs, 999, planes, strides, 0, 0), MK_EINVAL);
    bad |= expect("bad-flags", mk_compression_session_encode_planes(cs, MK_PIXEL_YUV420P, planes, strides, 0, 8), MK_EINVAL);
    bad |= expect("null-frame", mk_compression_session_encode_frame(cs, NULL, 0, 0), MK_EINVAL);
    mk_codec_params p;
    p.struct_size = 4;
    bad |= expect("small-params", mk_compression_session_get_params(cs, &p), MK_EINVAL);
    bad |= expect("encode", mk_compression_session_encode_planes(cs, MK_PIXEL_YUV420P, planes, strides, 0, 0), MK_OK);
    bad |= expect("flush", mk_compression_session_flush(cs), MK_OK);
    if (packets != 1) { fprintf(stderr, "%d packets for one picture after the flush\n", packets); bad = 1; }
    bad |= expect("encode-after-flush", mk_compression_session_encode_planes(cs, MK_PIXEL_YUV420P, planes, strides, 1, 0), MK_ESTATE);
    mk_compression_session *stale = cs;
    mk_compression_session_close(&cs);
    if (cs != NULL) { fprintf(stderr, "close left the handle set\n"); bad = 1; }
    bad |= expect("closed-handle", mk_compression_session_complete_frames(stale, MK_NOPTS_VALUE), MK_EINVAL);
    bad |= expect("null-flush", mk_compression_session_flush(NULL), MK_EINVAL);
    mk_compression_session_close(NULL);
    /* Closing with pictures in flight: no callback after close returns. */
    packets = 0;
    bad |= expect("open-again", mk_compression_session_open(&cs, &s, &cb, &packets), MK_OK);
    for (int i = 0; i < 20; i++)
        bad |= expect("encode-in-flight", mk_compression_session_encode_planes(cs, MK_PIXEL_YUV420P, planes, strides, i, 0), MK_OK);
    mk_compression_session_close(&cs);
    int seen = packets;
    struct timespec pause = {0, 50 * 1000 * 1000};
    nanosleep(&pause, NULL);
    if (packets != seen) { fprintf(stderr, "a callback ran after close returned\n"); bad = 1; }
    if (!bad) printf("misuse ok\n");
    return bad;
}

static int transcode(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: compression_session transcode SRC DST KEY=VALUE ...\n"); return 2; }
    mk_encoder_settings enc;
    mk_encoder_default_settings(&enc);
    mk_transcode_settings t;
    mk_transcode_default_settings(&t);
    int audio_set = 0;
    for (int i = 4; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq) { fprintf(stderr, "%s: give KEY=VALUE\n", argv[i]); return 2; }
        *eq = 0;
        const char *k = argv[i], *v = eq + 1;
        if (!strcmp(k, "video_codec")) t.video_codec = v;
        else if (!strcmp(k, "crf")) t.crf = atof(v);
        else if (!strcmp(k, "qp")) t.qp = atof(v);
        else if (!strcmp(k, "video_bit_rate")) t.video_bit_rate = atoll(v);
        else if (!strcmp(k, "preset")) t.preset = v;
        else if (!strcmp(k, "profile")) t.profile = v;
        else if (!strcmp(k, "gop_size")) t.gop_size = atoi(v);
        else if (!strcmp(k, "max_b_frames")) t.max_b_frames = atoi(v);
        else if (!strcmp(k, "threads")) t.threads = atoi(v);
        else if (!strcmp(k, "scale_width")) t.scale_width = atoi(v);
        else if (!strcmp(k, "scale_height")) t.scale_height = atoi(v);
        else if (!strcmp(k, "scale_filter")) t.scale_filter = atoi(v);
        else if (!strcmp(k, "fps_num")) t.fps_num = atoi(v);
        else if (!strcmp(k, "fps_den")) t.fps_den = atoi(v);
        else if (!strcmp(k, "no_video")) t.no_video = atoi(v);
        else if (!strcmp(k, "no_audio")) t.no_audio = atoi(v);
        else if (!strcmp(k, "copy_audio")) t.copy_audio = atoi(v);
        else if (!strcmp(k, "copy_video")) t.copy_video = atoi(v);
        else if (!strcmp(k, "audio_codec")) { enc.codec = v; audio_set = 1; }
        else if (!strcmp(k, "audio_bit_rate")) { enc.bit_rate = atoll(v); audio_set = 1; }
        else if (!strcmp(k, "struct_size")) t.struct_size = (uint32_t)atoi(v);
        else { fprintf(stderr, "unknown key %s\n", k); return 2; }
    }
    if (audio_set) t.encoder = &enc;
    mk_status st = mk_transcode_with(argv[2], argv[3], &t);
    printf("transcode %s %s\n", mk_status_name(st), st == MK_OK ? "" : mk_last_error());
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "encode")) return encode(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "misuse")) return misuse();
    if (argc >= 2 && !strcmp(argv[1], "transcode")) return transcode(argc, argv);
    fprintf(stderr, "usage: compression_session encode|misuse|transcode ...\n");
    return 2;
}
