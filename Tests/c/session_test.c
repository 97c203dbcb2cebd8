/*
 * session_test.c — the C decode session (mk_async_decode_session_*): frames pulled and through callbacks on the
 * library's thread, mid-stream flush with completion, sample-accurate seek, stats, close with
 * frames in flight, misuse. Run normally and under valgrind by Tests/oracle/test_capi.py.
 *
 *     session_test FILE.mp4
 *
 * FILE's first track is video, its second audio (Samples/media/sample.mp4). The reference for
 * every count and pts is the synchronous mk_decode_session over the same file (checked against ffmpeg
 * by test_capi.py's decode tests). Prints one line per failed check, then "N passed, M failed".
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

#define MAX_FRAMES 4096

/* The pts of every frame of `track` through the synchronous decoder. */
static int sync_pts(const char *path, int32_t track, int64_t *pts) {
    mk_demuxer *dmx = NULL;
    mk_decode_session *dec = NULL;
    mk_packet *pkt = NULL;
    mk_frame *frm = NULL;
    mk_frame_info fi;
    int n = 0;
    if (mk_demuxer_open(&dmx, path) != MK_OK || mk_decode_session_open(&dec, dmx, track, NULL) != MK_OK) return -1;
    mk_status st;
    while ((st = mk_demuxer_read_track_packet(dmx, track, &pkt)) == MK_OK) {
        while (mk_decode_session_send_packet(dec, pkt) == MK_EAGAIN)
            while (mk_decode_session_receive_frame(dec, &frm) == MK_OK) {
                fi.struct_size = sizeof fi;
                mk_frame_get_info(frm, &fi);
                if (n < MAX_FRAMES) pts[n++] = fi.pts;
                mk_frame_free(&frm);
            }
        mk_packet_free(&pkt);
        while (mk_decode_session_receive_frame(dec, &frm) == MK_OK) {
            fi.struct_size = sizeof fi;
            mk_frame_get_info(frm, &fi);
            if (n < MAX_FRAMES) pts[n++] = fi.pts;
            mk_frame_free(&frm);
        }
    }
    mk_decode_session_send_packet(dec, NULL);
    while (mk_decode_session_receive_frame(dec, &frm) == MK_OK) {
        fi.struct_size = sizeof fi;
        mk_frame_get_info(frm, &fi);
        if (n < MAX_FRAMES) pts[n++] = fi.pts;
        mk_frame_free(&frm);
    }
    mk_decode_session_close(&dec);
    mk_demuxer_close(&dmx);
    return n;
}

static int64_t frame_pts(mk_frame *f, double *seconds) {
    mk_frame_info fi;
    fi.struct_size = sizeof fi;
    mk_frame_get_info(f, &fi);
    if (seconds) *seconds = (double)fi.pts * fi.time_base_num / fi.time_base_den;
    return fi.pts;
}

/* Pull: the same frames as the synchronous decoder, in order; the demuxer may be closed first. */
static void pull(const char *path, int32_t track, const int64_t *ref, int nref) {
    mk_demuxer *dmx = NULL;
    mk_async_decode_session *s = NULL;
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open");
    mk_async_decode_session_settings set;
    mk_async_decode_session_default_settings(&set);
    set.queue_frames = 2;
    CHECK(mk_async_decode_session_open(&s, dmx, track, &set) == MK_OK, "mk_async_decode_session_open");
    mk_demuxer_close(&dmx);                       /* the session keeps what it needs */
    mk_frame *f = NULL;
    int n = 0, same = 1;
    mk_status st;
    while ((st = mk_async_decode_session_read_frame(s, &f)) == MK_OK) {
        if (n >= nref || frame_pts(f, NULL) != ref[n]) same = 0;
        n++;
        mk_frame_free(&f);
    }
    CHECK(st == MK_EOF, "the end is MK_EOF");
    CHECK(n == nref && same, "pulled frames equal the synchronous decoder's");
    if (n != nref) printf("     track %d: %d frames, the synchronous decoder %d\n", track, n, nref);
    mk_async_decode_session_stats stats;
    stats.struct_size = sizeof stats;
    CHECK(mk_async_decode_session_get_stats(s, &stats) == MK_OK && stats.frames == nref && stats.recoveries == 0, "stats");
    CHECK(mk_async_decode_session_read_frame(s, &f) == MK_EOF && f == NULL, "MK_EOF again after the end");
    mk_async_decode_session_start(s, NULL, NULL);              /* misuse: an error, no crash */
    mk_async_decode_session_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = sizeof cb;
    CHECK(mk_async_decode_session_start(s, &cb, NULL) == MK_EINVAL, "no frame callback: MK_EINVAL");
    mk_async_decode_session_close(&s);
    CHECK(s == NULL, "close sets the handle to NULL");
    mk_async_decode_session_close(&s);                         /* harmless twice */
}

/* Callbacks: on the library's thread, in order, a mid-stream flush with completion. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    pthread_t caller;
    mk_async_decode_session *session;
    int frames, flushes, flushed_at, ended, errors, on_caller_thread, out_of_order;
    int64_t last_pts;
    const int64_t *ref;
    int nref;
    int seen[MAX_FRAMES];
} state;

static void on_flushed(void *user) {
    state *st = user;
    pthread_mutex_lock(&st->lock);
    st->flushes++;
    st->flushed_at = st->frames;
    pthread_mutex_unlock(&st->lock);
}

static void on_frame(void *user, mk_frame *frame) {
    state *st = user;
    if (pthread_equal(pthread_self(), st->caller)) st->on_caller_thread++;
    int64_t pts = frame_pts(frame, NULL);
    mk_frame_free(&frame);
    pthread_mutex_lock(&st->lock);
    for (int i = 0; i < st->nref; i++)
        if (st->ref[i] == pts) st->seen[i]++;
    if (st->flushes > 0 && st->frames > st->flushed_at && pts <= st->last_pts) st->out_of_order++;
    st->last_pts = pts;
    st->frames++;
    int n = st->frames;
    pthread_mutex_unlock(&st->lock);
    if (n == 40) mk_async_decode_session_flush(st->session, on_flushed, st);   /* allowed from a callback */
}

static void on_end(void *user) {
    state *st = user;
    pthread_mutex_lock(&st->lock);
    st->ended++;
    pthread_cond_broadcast(&st->cond);
    pthread_mutex_unlock(&st->lock);
}

static void on_error(void *user, mk_status status, const char *message) {
    state *st = user;
    printf("     error callback: %s %s\n", mk_status_name(status), message);
    pthread_mutex_lock(&st->lock);
    st->errors++;
    st->ended++;
    pthread_cond_broadcast(&st->cond);
    pthread_mutex_unlock(&st->lock);
}

static void callbacks(const char *path, const int64_t *ref, int nref) {
    static state st;
    memset(&st, 0, sizeof st);
    pthread_mutex_init(&st.lock, NULL);
    pthread_cond_init(&st.cond, NULL);
    st.caller = pthread_self();
    st.ref = ref;
    st.nref = nref;
    mk_demuxer *dmx = NULL;
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open");
    CHECK(mk_async_decode_session_open(&st.session, dmx, 0, NULL) == MK_OK, "mk_async_decode_session_open");
    mk_async_decode_session_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = sizeof cb;
    cb.frame = on_frame;
    cb.end = on_end;
    cb.error = on_error;
    CHECK(mk_async_decode_session_start(st.session, &cb, &st) == MK_OK, "mk_async_decode_session_start");
    CHECK(mk_async_decode_session_start(st.session, &cb, &st) == MK_ESTATE, "started twice: MK_ESTATE");
    mk_frame *f = NULL;
    CHECK(mk_async_decode_session_read_frame(st.session, &f) == MK_ESTATE && f == NULL, "read_frame with callbacks: MK_ESTATE");
    pthread_mutex_lock(&st.lock);
    while (!st.ended) pthread_cond_wait(&st.cond, &st.lock);
    pthread_mutex_unlock(&st.lock);
    mk_async_decode_session_close(&st.session);                /* waits for the callbacks still queued */
    mk_demuxer_close(&dmx);
    int once = 1;
    for (int i = 0; i < nref; i++)
        if (st.seen[i] != 1) once = 0;
    CHECK(st.frames == nref && once, "every frame exactly once, through a mid-stream flush");
    if (st.frames != nref) printf("     %d frames, the synchronous decoder %d\n", st.frames, nref);
    CHECK(st.flushes == 1, "the flush completion was called once");
    CHECK(st.flushed_at >= 40, "the flush completed after the frames before it");
    CHECK(st.out_of_order == 0, "frames after the flush go on in order");
    CHECK(st.on_caller_thread == 0, "callbacks run on the library's thread");
    CHECK(st.ended == 1 && st.errors == 0, "end once, no error");
    pthread_mutex_destroy(&st.lock);
    pthread_cond_destroy(&st.cond);
}

/* A callback session closed while frames are in flight: nothing leaks, no callback after close. */
static int late_calls;
static int closing;
static void slow_frame(void *user, mk_frame *frame) {
    (void)user;
    if (__atomic_load_n(&closing, __ATOMIC_SEQ_CST) == 2) __atomic_add_fetch(&late_calls, 1, __ATOMIC_SEQ_CST);
    mk_frame_free(&frame);
}

static void close_in_flight(const char *path) {
    mk_demuxer *dmx = NULL;
    mk_async_decode_session *s = NULL;
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open");
    CHECK(mk_async_decode_session_open(&s, dmx, 0, NULL) == MK_OK, "mk_async_decode_session_open");
    mk_async_decode_session_callbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.struct_size = sizeof cb;
    cb.frame = slow_frame;
    CHECK(mk_async_decode_session_start(s, &cb, NULL) == MK_OK, "mk_async_decode_session_start");
    __atomic_store_n(&closing, 1, __ATOMIC_SEQ_CST);
    mk_async_decode_session_close(&s);
    __atomic_store_n(&closing, 2, __ATOMIC_SEQ_CST);
    CHECK(late_calls == 0, "no callback after mk_async_decode_session_close returned");
    mk_demuxer_close(&dmx);
}

/* Seek: the first frame after it is the one presented at the time; the session goes on. */
static void seek(const char *path, const int64_t *ref, int nref) {
    mk_demuxer *dmx = NULL;
    mk_async_decode_session *s = NULL;
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open");
    CHECK(mk_async_decode_session_open(&s, dmx, 0, NULL) == MK_OK, "mk_async_decode_session_open");
    mk_frame *f = NULL;
    CHECK(mk_async_decode_session_read_frame(s, &f) == MK_OK, "first frame");
    double t0 = 0;
    frame_pts(f, &t0);
    mk_frame_free(&f);
    CHECK(mk_async_decode_session_seek(s, -1.0) == MK_EINVAL, "negative seek: MK_EINVAL");
    CHECK(mk_async_decode_session_seek(s, 2.0) == MK_OK, "seek 2.0");
    CHECK(mk_async_decode_session_read_frame(s, &f) == MK_OK, "a frame after the seek");
    double t = 0;
    int64_t pts = frame_pts(f, &t);
    mk_frame_free(&f);
    /* The reference: the first frame presented at or after 2.0 s in the full decode. */
    int k = 0;
    int64_t tb_num = 0, tb_den = 1;
    {
        mk_track_info ti;
        ti.struct_size = sizeof ti;
        mk_demuxer_track(dmx, 0, &ti);
        tb_num = ti.time_base_num;
        tb_den = ti.time_base_den;
    }
    int64_t first = ref[0];
    while (k < nref && (double)(ref[k] - first) * tb_num / tb_den < 2.0 - 1e-9) k++;
    CHECK(k < nref && pts == ref[k], "the first frame after seek(2.0) is the one presented at 2.0 s");
    if (k < nref && pts != ref[k]) printf("     got pts %lld (%.3f s), expected %lld\n", (long long)pts, t, (long long)ref[k]);
    int n = 1;
    while (mk_async_decode_session_read_frame(s, &f) == MK_OK) { n++; mk_frame_free(&f); }
    CHECK(n == nref - k, "every frame after the seek point follows");
    mk_async_decode_session_close(&s);
    mk_demuxer_close(&dmx);
}

static void misuse(void) {
    mk_async_decode_session *s = (mk_async_decode_session *)0x1;
    CHECK(mk_async_decode_session_open(&s, NULL, 0, NULL) == MK_EINVAL && s == NULL, "open on NULL demuxer: MK_EINVAL, *out NULL");
    CHECK(mk_async_decode_session_open(NULL, NULL, 0, NULL) == MK_EINVAL, "NULL out: MK_EINVAL");
    mk_frame *f = NULL;
    CHECK(mk_async_decode_session_read_frame(NULL, &f) == MK_EINVAL, "read on NULL: MK_EINVAL");
    CHECK(mk_async_decode_session_seek(NULL, 1) == MK_EINVAL, "seek on NULL: MK_EINVAL");
    CHECK(mk_async_decode_session_flush(NULL, NULL, NULL) == MK_EINVAL, "flush on NULL: MK_EINVAL");
    mk_async_decode_session_stats stats;
    stats.struct_size = 4;
    CHECK(mk_async_decode_session_get_stats(NULL, &stats) == MK_EINVAL, "stats on NULL: MK_EINVAL");
    mk_async_decode_session_close(NULL);
}

static void bad_settings(const char *path) {
    mk_demuxer *dmx = NULL;
    mk_async_decode_session *s = NULL;
    CHECK(mk_demuxer_open(&dmx, path) == MK_OK, "open");
    mk_async_decode_session_settings set;
    mk_async_decode_session_default_settings(&set);
    set.queue_frames = 0;
    CHECK(mk_async_decode_session_open(&s, dmx, 0, &set) == MK_EINVAL && s == NULL, "queue_frames 0: MK_EINVAL");
    mk_async_decode_session_default_settings(&set);
    CHECK(mk_async_decode_session_open(&s, dmx, 9, &set) == MK_EINVAL && s == NULL, "no such track: MK_EINVAL");
    mk_async_decode_session_default_settings(&set);
    set.struct_size = 8;
    CHECK(mk_async_decode_session_open(&s, dmx, 0, &set) == MK_EINVAL && s == NULL, "small struct_size: MK_EINVAL");
    mk_demuxer_close(&dmx);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: session_test FILE.mp4\n");
        return 2;
    }
    static int64_t video[MAX_FRAMES], audio[MAX_FRAMES];
    int nv = sync_pts(argv[1], 0, video), na = sync_pts(argv[1], 1, audio);
    CHECK(nv > 50 && na > 50, "the synchronous reference decodes");
    pull(argv[1], 0, video, nv);
    pull(argv[1], 1, audio, na);
    callbacks(argv[1], video, nv);
    close_in_flight(argv[1]);
    seek(argv[1], video, nv);
    misuse();
    bad_settings(argv[1]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
