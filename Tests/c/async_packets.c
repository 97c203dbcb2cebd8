/*
 * async_packets.c — the C decode session fed by the caller (issue 35 item 7:
 * mk_async_decode_session_open_packets / _open_params, mk_async_decode_session_decode,
 * mk_async_decode_session_wait_frames, the flush completion) and its error callback (item 10).
 * Run normally and under valgrind by Tests/oracle/test_async_packets.py.
 *
 *     async_packets FILE TRACK LAYOUT RAW [FLUSH_AT]
 *
 * Reads track TRACK of FILE on this thread and hands each packet to a session made with
 * mk_async_decode_session_open_packets, whose frames come to the frame callback on the library's
 * thread; after packet FLUSH_AT (if given) a mid-stream flush with a completion. Each frame is
 * packed with mk_frame_pack(LAYOUT: an MK_PACK_* value) and appended to RAW, and a line
 * "frame PTS TIMEBASE BYTES" is printed in callback order: the test compares the frames with
 * `ffmpeg -f framemd5` (per-frame md5 and pts). Then, on the same track: the frames read with
 * mk_async_decode_session_read_frame on another thread while this one decodes, a session made
 * from codec parameters, an error that reaches the error callback and the next decode call, and
 * misuse. Prints one line per failed check, then "N passed, M failed".
 */
#include <mediakit/mediakit.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond, what) do { \
    if (cond) passed++; \
    else { failed++; printf("FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, what, mk_last_error()); } \
} while (0)

/* What the callbacks record; touched on the library's thread only, read after wait_frames. */
typedef struct {
    FILE *raw;
    int32_t layout;
    int frames;
    int ends;
    int errors;
    mk_status error_status;
    int flushes;
    int frames_at_flush;
    pthread_t caller;
    int on_caller_thread;
    char lines[1 << 16];
    size_t used;
} record;

static void on_frame(void *user, mk_frame *frame) {
    record *r = user;
    if (pthread_equal(pthread_self(), r->caller)) r->on_caller_thread++;
    mk_frame_info fi;
    fi.struct_size = sizeof fi;
    mk_frame_get_info(frame, &fi);
    if (r->raw) {
        size_t size = 0;
        mk_frame_pack(frame, r->layout, NULL, 0, &size);
        uint8_t *buf = malloc(size ? size : 1);
        if (buf && mk_frame_pack(frame, r->layout, buf, size, &size) == MK_OK) fwrite(buf, 1, size, r->raw);
        free(buf);
        int n = snprintf(r->lines + r->used, sizeof r->lines - r->used, "frame %lld %d/%d %zu\n", (long long)fi.pts,
                         (int)fi.time_base_num, (int)fi.time_base_den, size);
        if (n > 0 && r->used + (size_t)n < sizeof r->lines) r->used += (size_t)n;
    }
    r->frames++;
    mk_frame_free(&frame);
}

static void on_error(void *user, mk_status status, const char *message) {
    record *r = user;
    r->errors++;
    r->error_status = status;
    if (!message || !*message) r->error_status = MK_EFAIL;   /* a message is promised */
}

static void on_end(void *user) { ((record *)user)->ends++; }

static void on_flushed(void *user) {
    record *r = user;
    r->flushes++;
    r->frames_at_flush = r->frames;
}

static mk_async_decode_session_callbacks callbacks(void) {
    mk_async_decode_session_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = sizeof cb;
    cb.frame = on_frame;
    cb.error = on_error;
    cb.end = on_end;
    return cb;
}

/* The main run: every packet through the callbacks, frames written for the oracle. */
static int feed_callbacks(const char *path, int32_t track, int32_t layout, const char *raw, int flush_at) {
    static record r;
    memset(&r, 0, sizeof r);
    r.layout = layout;
    r.caller = pthread_self();
    r.raw = fopen(raw, "wb");
    CHECK(r.raw != NULL, "open the raw output");
    mk_demuxer *dmx = NULL;
    mk_async_decode_session *s = NULL;
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open the file");
    CHECK(mk_async_decode_session_open_packets(&s, dmx, track, NULL) == MK_OK, "open a session for packets");
    mk_async_decode_session_callbacks cb = callbacks();
    CHECK(mk_async_decode_session_start(s, &cb, &r) == MK_OK, "start the callbacks");
    mk_packet *p = NULL;
    int packets = 0, flushed_requested = 0;
    mk_status st;
    while ((st = mk_demuxer_read_track_packet(dmx, track, &p)) == MK_OK) {
        CHECK(mk_async_decode_session_decode(s, p) == MK_OK, "decode a packet");
        mk_packet_free(&p);   /* the session copied it */
        if (++packets == flush_at) {
            CHECK(mk_async_decode_session_flush(s, on_flushed, &r) == MK_OK, "flush");
            flushed_requested = 1;
        }
    }
    CHECK(st == MK_EOF, "read the track to its end");
    mk_demuxer_close(&dmx);   /* the session does not need it */
    CHECK(mk_async_decode_session_decode(s, NULL) == MK_OK, "end the stream");
    CHECK(mk_async_decode_session_wait_frames(s) == MK_OK, "wait for the frames");
    /* After wait_frames every callback has run: nothing changes any more. */
    CHECK(r.ends == 1, "the end callback, once");
    CHECK(r.errors == 0, "no error callback");
    CHECK(r.on_caller_thread == 0, "the callbacks run on the library's thread, not the caller's");
    CHECK(r.flushes == flushed_requested, "the flush completion was called");
    if (flushed_requested) CHECK(r.frames_at_flush > 0 && r.frames_at_flush < r.frames, "the completion came mid-stream");
    mk_async_decode_session_stats stats;
    stats.struct_size = sizeof stats;
    CHECK(mk_async_decode_session_get_stats(s, &stats) == MK_OK, "stats");
    CHECK(stats.packets == packets, "every packet went to the decoder");
    CHECK(stats.frames == r.frames, "the stats count the frames delivered");
    CHECK(mk_async_decode_session_decode(s, NULL) == MK_ESTATE, "a second end is MK_ESTATE");
    mk_async_decode_session_close(&s);
    CHECK(s == NULL, "close sets NULL");
    fclose(r.raw);
    fputs(r.lines, stdout);
    printf("frames %d packets %d flushes %d\n", r.frames, packets, r.flushes);
    return r.frames;
}

/* Pull: another thread reads the frames while this one decodes. */
typedef struct {
    mk_async_decode_session *s;
    int frames;
    mk_status last;
} reader;

static void *read_all(void *arg) {
    reader *rd = arg;
    mk_frame *f = NULL;
    while ((rd->last = mk_async_decode_session_read_frame(rd->s, &f)) == MK_OK) {
        rd->frames++;
        mk_frame_free(&f);
    }
    return NULL;
}

static void pull(const char *path, int32_t track, int expected) {
    mk_demuxer *dmx = NULL;
    reader rd = {NULL, 0, MK_OK};
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open the file");
    mk_async_decode_session_settings set;
    mk_async_decode_session_default_settings(&set);
    set.queue_frames = 2;   /* the reader must keep up: back-pressure both ways */
    CHECK(mk_async_decode_session_open_packets(&rd.s, dmx, track, &set) == MK_OK, "open a session for packets");
    pthread_t t;
    pthread_create(&t, NULL, read_all, &rd);
    mk_packet *p = NULL;
    while (mk_demuxer_read_track_packet(dmx, track, &p) == MK_OK) {
        if (mk_async_decode_session_decode(rd.s, p) != MK_OK) CHECK(0, "decode a packet");
        mk_packet_free(&p);
    }
    CHECK(mk_async_decode_session_decode(rd.s, NULL) == MK_OK, "end the stream");
    pthread_join(t, NULL);
    CHECK(rd.last == MK_EOF, "the reader got MK_EOF at the end");
    CHECK(rd.frames == expected, "the reader got every frame");
    mk_async_decode_session_close(&rd.s);
    mk_demuxer_close(&dmx);
}

/* A session made from the track's codec parameters, fed mk_packet_create packets. */
static void from_params(const char *path, int32_t track, int expected_min) {
    mk_demuxer *dmx = NULL;
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open the file");
    mk_track_info ti;
    ti.struct_size = sizeof ti;
    CHECK(mk_demuxer_track(dmx, track, &ti) == MK_OK, "track info");
    mk_codec_params cp;
    mk_codec_params_default(&cp);
    cp.codec = ti.codec;
    cp.media_type = ti.media_type;
    cp.extradata = ti.extradata;
    cp.extradata_size = ti.extradata_size;
    cp.width = ti.width;
    cp.height = ti.height;
    cp.sample_rate = ti.sample_rate;
    cp.channels = ti.channels;
    cp.time_base_num = ti.time_base_num;
    cp.time_base_den = ti.time_base_den;
    static record r;
    memset(&r, 0, sizeof r);
    r.caller = pthread_self();
    mk_async_decode_session *s = NULL;
    CHECK(mk_async_decode_session_open_params(&s, &cp, NULL) == MK_OK, "open a session from codec parameters");
    mk_async_decode_session_callbacks cb = callbacks();
    CHECK(mk_async_decode_session_start(s, &cb, &r) == MK_OK, "start");
    mk_packet *p = NULL;
    while (mk_demuxer_read_track_packet(dmx, track, &p) == MK_OK) {
        mk_packet_info pi;
        pi.struct_size = sizeof pi;
        mk_packet_get_info(p, &pi);
        mk_packet *copy = NULL;
        pi.track = 5;   /* ignored by a session made from codec parameters */
        if (mk_packet_create(&copy, &pi) != MK_OK) CHECK(0, "mk_packet_create");
        if (mk_async_decode_session_decode(s, copy) != MK_OK) CHECK(0, "decode a created packet");
        mk_packet_free(&copy);
        mk_packet_free(&p);
    }
    CHECK(mk_async_decode_session_decode(s, NULL) == MK_OK, "end the stream");
    CHECK(mk_async_decode_session_wait_frames(s) == MK_OK, "wait");
    CHECK(r.ends == 1 && r.errors == 0, "the end, no error");
    CHECK(r.frames >= expected_min, "the frames came (no edit list applies: at least as many)");
    mk_async_decode_session_close(&s);
    mk_demuxer_close(&dmx);
}

/* Damaged data with recovery off: the error comes to the error callback (as an error, not
 * only as a later return code), and the next decode call returns it too. */
static void error_callback(const char *path, int32_t track) {
    mk_demuxer *dmx = NULL;
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open the file");
    mk_async_decode_session_settings set;
    mk_async_decode_session_default_settings(&set);
    set.recovery = 0;
    set.threads = 1;   /* the error is reported on the packet that causes it */
    mk_async_decode_session *s = NULL;
    CHECK(mk_async_decode_session_open_packets(&s, dmx, track, &set) == MK_OK, "open");
    static record r;
    memset(&r, 0, sizeof r);
    mk_async_decode_session_callbacks cb = callbacks();
    CHECK(mk_async_decode_session_start(s, &cb, &r) == MK_OK, "start");
    mk_packet *p = NULL;
    for (int i = 0; i < 3 && mk_demuxer_read_track_packet(dmx, track, &p) == MK_OK; i++) {
        CHECK(mk_async_decode_session_decode(s, p) == MK_OK, "decode a good packet");
        mk_packet_free(&p);
    }
    CHECK(mk_demuxer_read_track_packet(dmx, track, &p) == MK_OK, "read another packet");
    mk_packet_info pi;
    pi.struct_size = sizeof pi;
    mk_packet_get_info(p, &pi);
    uint8_t garbage[64];
    memset(garbage, 0xff, sizeof garbage);
    mk_packet *bad = NULL;
    pi.data = garbage;
    pi.size = sizeof garbage;
    CHECK(mk_packet_create(&bad, &pi) == MK_OK, "a damaged packet");
    CHECK(mk_async_decode_session_decode(s, bad) == MK_OK, "decode returns before the damage is found");
    CHECK(mk_async_decode_session_wait_frames(s) == MK_OK, "wait");
    CHECK(r.errors == 1 && r.error_status == MK_EDATA, "the error callback got MK_EDATA with a message");
    CHECK(r.ends == 0, "no end after an error");
    CHECK(mk_async_decode_session_decode(s, p) == MK_EDATA, "the next decode returns the error");
    CHECK(strlen(mk_last_error()) > 0, "with a message");
    CHECK(mk_async_decode_session_decode(s, NULL) == MK_EDATA, "the end too");
    mk_packet_free(&bad);
    mk_packet_free(&p);
    mk_async_decode_session_close(&s);
    mk_demuxer_close(&dmx);
}

static void misuse(const char *path, int32_t track) {
    mk_demuxer *dmx = NULL;
    mk_async_decode_session *s = NULL;
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open the file");
    mk_packet *p = NULL;
    CHECK(mk_demuxer_read_track_packet(dmx, track, &p) == MK_OK, "a packet");
    CHECK(mk_async_decode_session_open_packets(NULL, dmx, track, NULL) == MK_EINVAL, "NULL out");
    CHECK(mk_async_decode_session_open_packets(&s, dmx, 99, NULL) == MK_EINVAL && s == NULL, "a track that does not exist");
    CHECK(mk_async_decode_session_open_params(&s, NULL, NULL) == MK_EINVAL && s == NULL, "NULL params");
    CHECK(mk_async_decode_session_decode(NULL, p) == MK_EINVAL, "NULL session");
    CHECK(mk_async_decode_session_wait_frames(NULL) == MK_EINVAL, "wait on NULL");
    /* A session that reads its own demuxer takes no packets. */
    CHECK(mk_async_decode_session_open(&s, dmx, track, NULL) == MK_OK, "open a demuxer session");
    CHECK(mk_async_decode_session_decode(s, p) == MK_ESTATE, "decode on a demuxer session is MK_ESTATE");
    mk_async_decode_session_close(&s);
    /* A packet of another track. */
    int32_t count = 0;
    mk_demuxer_track_count(dmx, &count);
    CHECK(mk_async_decode_session_open_packets(&s, dmx, track, NULL) == MK_OK, "open");
    if (count > 1) {
        mk_packet_info pi;
        pi.struct_size = sizeof pi;
        mk_packet_get_info(p, &pi);
        pi.track = track == 0 ? 1 : 0;
        mk_packet *other = NULL;
        mk_packet_create(&other, &pi);
        CHECK(mk_async_decode_session_decode(s, other) == MK_EINVAL, "a packet of another track is MK_EINVAL");
        mk_packet_free(&other);
    }
    /* No consumer: nothing is decoded; wait_frames returns at once; close drops the queue. */
    CHECK(mk_async_decode_session_decode(s, p) == MK_OK, "queued without a consumer");
    CHECK(mk_async_decode_session_wait_frames(s) == MK_OK, "wait without a consumer returns");
    mk_async_decode_session_close(&s);
    mk_async_decode_session_close(&s);   /* harmless twice */
    mk_packet_free(&p);
    mk_demuxer_close(&dmx);
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: async_packets FILE TRACK LAYOUT RAW [FLUSH_AT]\n");
        return 2;
    }
    int32_t track = atoi(argv[2]);
    int frames = feed_callbacks(argv[1], track, atoi(argv[3]), argv[4], argc > 5 ? atoi(argv[5]) : 0);
    CHECK(frames > 0, "frames came");
    pull(argv[1], track, frames);
    from_params(argv[1], track, frames);
    error_callback(argv[1], track);
    misuse(argv[1], track);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
