/*
 * decode.c — decode the first video track to NV12 and the first audio track to
 * s16le PCM through MediaKit's C API only.
 *
 *     cc decode.c $(pkg-config --cflags --libs mediakit) -o mk-decode-c
 *     ./mk-decode-c movie.mp4 out.nv12 out.pcm      (either output may be "-" to skip it)
 */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Decodes one track into `out`, packing frames with `layout`. Returns 0 on success. */
static int decode_track(mk_demuxer *dmx, int32_t track, int32_t layout, FILE *out, long *count) {
    mk_decode_session *dec = NULL;
    mk_packet *pkt = NULL;
    mk_frame *frm = NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    int failed = 0;
    mk_status st;

    if (mk_decode_session_open(&dec, dmx, track, NULL) != MK_OK) {
        fprintf(stderr, "decoder: %s\n", mk_last_error());
        return 1;
    }
    for (int draining = 0; !failed;) {
        st = MK_OK;
        if (!draining && pkt == NULL) {
            st = mk_demuxer_read_track_packet(dmx, track, &pkt);
            if (st == MK_ETRUNCATED) {                     /* the file is cut short: the end, */
                fprintf(stderr, "warning: %s\n", mk_last_error());   /* with a warning */
                st = MK_EOF;
            }
            if (st == MK_EOF) {
                draining = 1;
                st = mk_decode_session_send_packet(dec, NULL);    /* end of stream: drain */
            }
        }
        if (st == MK_OK && pkt != NULL) {
            st = mk_decode_session_send_packet(dec, pkt);         /* MK_EAGAIN: frames are waiting; */
            if (st == MK_OK) mk_packet_free(&pkt);         /* receive them, then send it again */
        }
        if (st != MK_OK && st != MK_EAGAIN) { fprintf(stderr, "decode: %s\n", mk_last_error()); failed = 1; break; }
        while ((st = mk_decode_session_receive_frame(dec, &frm)) == MK_OK) {
            size_t need = 0;
            if (mk_frame_pack(frm, layout, NULL, 0, &need) != MK_OK) { failed = 1; }
            if (!failed && need > cap) {
                uint8_t *grown = realloc(buf, need);
                if (!grown) { failed = 1; } else { buf = grown; cap = need; }
            }
            if (!failed && mk_frame_pack(frm, layout, buf, cap, &need) != MK_OK) failed = 1;
            if (failed) fprintf(stderr, "pack: %s\n", mk_last_error());
            else if (fwrite(buf, 1, need, out) != need) { perror("write"); failed = 1; }
            mk_frame_free(&frm);
            (*count)++;
            if (failed) break;
        }
        if (st == MK_EOF) break;                          /* drained */
        if (st != MK_EAGAIN && !failed) { fprintf(stderr, "decode: %s\n", mk_last_error()); failed = 1; }
    }
    free(buf);
    mk_packet_free(&pkt);
    mk_decode_session_close(&dec);
    return failed;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s INPUT VIDEO_OUT.nv12|- AUDIO_OUT.pcm|-\n", argv[0]);
        return 2;
    }
    mk_demuxer *dmx = NULL;
    if (mk_demuxer_open(&dmx, argv[1]) != MK_OK) {
        fprintf(stderr, "%s\n", mk_last_error());
        return 1;
    }
    int32_t n = 0, video = -1, audio = -1;
    mk_demuxer_track_count(dmx, &n);
    for (int32_t i = 0; i < n; i++) {
        mk_track_info t;
        t.struct_size = sizeof t;
        if (mk_demuxer_track(dmx, i, &t) != MK_OK) continue;
        printf("track %d: %s %s", i, t.media_type == MK_MEDIA_VIDEO ? "video" : t.media_type == MK_MEDIA_AUDIO ? "audio" : "other", t.codec);
        if (t.media_type == MK_MEDIA_VIDEO) printf(" %dx%d", t.width, t.height);
        if (t.media_type == MK_MEDIA_AUDIO) printf(" %d Hz %d ch", t.sample_rate, t.channels);
        printf("\n");
        if (t.media_type == MK_MEDIA_VIDEO && video < 0) video = i;
        if (t.media_type == MK_MEDIA_AUDIO && audio < 0) audio = i;
    }
    int rc = 0;
    struct { int32_t track; const char *path; int32_t layout; const char *what; } jobs[2] = {
        { video, argv[2], MK_PACK_NV12, "frames" }, { audio, argv[3], MK_PACK_S16, "audio frames" } };
    for (int j = 0; j < 2 && rc == 0; j++) {
        if (strcmp(jobs[j].path, "-") == 0) continue;
        if (jobs[j].track < 0) { fprintf(stderr, "no such track for %s\n", jobs[j].path); rc = 1; break; }
        FILE *f = fopen(jobs[j].path, "wb");
        if (!f) { perror(jobs[j].path); rc = 1; break; }
        long count = 0;
        rc = decode_track(dmx, jobs[j].track, jobs[j].layout, f, &count);
        if (fclose(f) != 0) rc = 1;
        printf("%ld %s -> %s\n", count, jobs[j].what, jobs[j].path);
    }
    mk_demuxer_close(&dmx);
    return rc;
}
