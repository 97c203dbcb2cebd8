/*
 * recovery_threads.c — decodes the first video track of a (damaged) file to NV12 through the
 * C API with a given number of decoder threads, for Tests/oracle/test_recovery_threads.py
 * (issue 28 item 2: recovery from damaged data with libavcodec's frame threads on).
 *
 *     recovery_threads FILE THREADS decoder|session OUT.nv12
 *
 * decoder: mk_decode_session (send / receive); session: mk_async_decode_session (mk_async_decode_session_read_frame). Prints
 * "frames N rebuilds R recoveries C" (R and C are -1 for mk_decode_session, which does not count
 * them) and exits 0, or prints the error on standard error and exits 1.
 */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { FILE *out; uint8_t *buf; size_t cap; long frames; } writer;

/* Packs `frm` to NV12 and appends it to the output; frees the frame. 0 on success. */
static int put(writer *w, mk_frame **frm) {
    size_t need = 0;
    int ok = mk_frame_pack(*frm, MK_PACK_NV12, NULL, 0, &need) == MK_OK;
    if (ok && need > w->cap) {
        uint8_t *grown = realloc(w->buf, need);
        if (grown == NULL) ok = 0; else { w->buf = grown; w->cap = need; }
    }
    ok = ok && mk_frame_pack(*frm, MK_PACK_NV12, w->buf, w->cap, &need) == MK_OK
            && fwrite(w->buf, 1, need, w->out) == need;
    mk_frame_free(frm);
    if (ok) w->frames++;
    return ok ? 0 : 1;
}

static int with_decoder(mk_demuxer *dmx, int32_t track, int32_t threads, writer *w) {
    mk_decode_session_settings s;
    mk_decode_session_default_settings(&s);
    s.threads = threads;
    mk_decode_session *dec = NULL;
    if (mk_decode_session_open(&dec, dmx, track, &s) != MK_OK) return 1;
    mk_packet *pkt = NULL;
    mk_frame *frm = NULL;
    mk_status st;
    int failed = 0;
    while (!failed && (st = mk_demuxer_read_track_packet(dmx, track, &pkt)) == MK_OK) {
        while (!failed && (st = mk_decode_session_send_packet(dec, pkt)) == MK_EAGAIN)
            while (!failed && mk_decode_session_receive_frame(dec, &frm) == MK_OK) failed = put(w, &frm);
        mk_packet_free(&pkt);
        if (st != MK_OK) failed = 1;
        while (!failed && (st = mk_decode_session_receive_frame(dec, &frm)) == MK_OK) failed = put(w, &frm);
        if (!failed && st != MK_EAGAIN) failed = 1;
    }
    if (!failed && st != MK_EOF) failed = 1;
    if (!failed && mk_decode_session_send_packet(dec, NULL) != MK_OK) failed = 1;
    while (!failed && (st = mk_decode_session_receive_frame(dec, &frm)) == MK_OK) failed = put(w, &frm);
    if (!failed && st != MK_EOF) failed = 1;
    mk_packet_free(&pkt);
    mk_decode_session_close(&dec);
    if (!failed) printf("frames %ld rebuilds -1 recoveries -1\n", w->frames);
    return failed;
}

static int with_session(mk_demuxer *dmx, int32_t track, int32_t threads, writer *w) {
    mk_async_decode_session_settings s;
    mk_async_decode_session_default_settings(&s);
    s.threads = threads;
    mk_async_decode_session *session = NULL;
    if (mk_async_decode_session_open(&session, dmx, track, &s) != MK_OK) return 1;
    mk_frame *frm = NULL;
    mk_status st;
    int failed = 0;
    while (!failed && (st = mk_async_decode_session_read_frame(session, &frm)) == MK_OK) failed = put(w, &frm);
    if (!failed && st != MK_EOF) failed = 1;
    mk_async_decode_session_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.struct_size = sizeof stats;
    if (!failed && mk_async_decode_session_get_stats(session, &stats) != MK_OK) failed = 1;
    mk_async_decode_session_close(&session);
    if (!failed) printf("frames %ld rebuilds %d recoveries %d\n", w->frames, (int)stats.rebuilds, (int)stats.recoveries);
    return failed;
}

int main(int argc, char **argv) {
    if (argc != 5 || (strcmp(argv[3], "decoder") != 0 && strcmp(argv[3], "session") != 0)) {
        fprintf(stderr, "usage: %s FILE THREADS decoder|session OUT.nv12\n", argv[0]);
        return 2;
    }
    mk_demuxer *dmx = NULL;
    if (mk_demuxer_open(&dmx, argv[1]) != MK_OK) { fprintf(stderr, "error: %s\n", mk_last_error()); return 1; }
    int32_t track = -1, count = 0;
    mk_demuxer_track_count(dmx, &count);
    for (int32_t i = 0; i < count && track < 0; i++) {
        mk_track_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        if (mk_demuxer_track(dmx, i, &info) == MK_OK && info.media_type == MK_MEDIA_VIDEO) track = i;
    }
    writer w = { fopen(argv[4], "wb"), NULL, 0, 0 };
    int failed = track < 0 || w.out == NULL;
    if (!failed)
        failed = strcmp(argv[3], "decoder") == 0 ? with_decoder(dmx, track, atoi(argv[2]), &w)
                                                 : with_session(dmx, track, atoi(argv[2]), &w);
    if (failed) fprintf(stderr, "error: %s\n", track < 0 ? "no video track" : mk_last_error());
    if (w.out != NULL && fclose(w.out) != 0) failed = 1;
    free(w.buf);
    mk_demuxer_close(&dmx);
    return failed;
}
