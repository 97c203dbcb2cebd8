/*
 * progress_test.c — the long calls' progress callbacks and cancel (mk_remux, mk_decode_file,
 * mk_transcode), mk_remux's track choice and the registry listings, from C. Prints one JSON
 * object per line for the oracle suite (Tests/oracle/test_capi_progress.py), which compares them
 * with ffprobe and with what is left in WORKDIR.
 *
 *     progress_test SRC.mp4 WORKDIR TRACK
 *
 * TRACK is the one source track mk_remux copies into WORKDIR/chosen.mp4 (and .mkv).
 */
#include <mediakit/mediakit.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int calls, stop_after, monotonic;
    double last_fraction;
    int64_t last_done, last_total;
} progress_state;

static int32_t on_progress(void *user, double fraction, int64_t done, int64_t total) {
    progress_state *p = user;
    if (fraction < p->last_fraction || (done >= 0 && done < p->last_done)) p->monotonic = 0;
    p->calls++;
    p->last_fraction = fraction;
    p->last_done = done;
    p->last_total = total;
    return p->stop_after > 0 && p->calls >= p->stop_after;
}

static void report(const char *what, mk_status st, const progress_state *p) {
    printf("{\"call\":\"%s\",\"status\":\"%s\",\"calls\":%d,\"monotonic\":%s,\"fraction\":%.6f,\"done\":%lld,\"total\":%lld}\n", what,
           mk_status_name(st), p->calls, p->monotonic ? "true" : "false", p->last_fraction, (long long)p->last_done,
           (long long)p->last_total);
}

static void path_in(char *out, size_t size, const char *dir, const char *name) { snprintf(out, size, "%s/%s", dir, name); }

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: progress_test SRC.mp4 WORKDIR TRACK\n"); return 2; }
    const char *src = argv[1], *dir = argv[2];
    int32_t track = atoi(argv[3]);
    char out[4096], audio[4096], video[4096];

    /* mk_remux: one chosen track, with progress, into MP4 and Matroska; then cancelled. */
    const char *names[2] = {"chosen.mp4", "chosen.mkv"};
    for (int k = 0; k < 2; k++) {
        progress_state p = {0, 0, 1, 0, 0, 0};
        mk_muxer_settings s;
        mk_muxer_default_settings(&s);
        s.tracks = &track;
        s.track_count = 1;
        s.progress = on_progress;
        s.progress_user = &p;
        path_in(out, sizeof out, dir, names[k]);
        report(names[k], mk_remux(src, out, &s), &p);
    }
    {
        progress_state p = {0, 3, 1, 0, 0, 0};
        mk_muxer_settings s;
        mk_muxer_default_settings(&s);
        s.progress = on_progress;
        s.progress_user = &p;
        path_in(out, sizeof out, dir, "cancelled.mp4");
        report("remux-cancel", mk_remux(src, out, &s), &p);
        int32_t bad = 99;
        s.progress = NULL;
        s.tracks = &bad;
        s.track_count = 1;
        path_in(out, sizeof out, dir, "bad-track.mp4");
        report("remux-bad-track", mk_remux(src, out, &s), &p);
        /* A caller of the 0.1 header: its struct ends at fragment_seconds. */
        mk_muxer_settings old;
        mk_muxer_default_settings(&old);
        old.struct_size = (uint32_t)offsetof(mk_muxer_settings, tracks);
        old.tracks = &bad;                     /* past its struct: never read */
        path_in(out, sizeof out, dir, "old-settings.mp4");
        report("remux-old-struct", mk_remux(src, out, &old), &p);
        s.tracks = NULL;
        s.track_count = 0;
        s.progress = on_progress;
        path_in(out, sizeof out, dir, "muxer-open.mp4");
        mk_muxer *mux = NULL;
        report("muxer-open-with-progress", mk_muxer_open(&mux, out, &s), &p);
    }

    /* mk_decode_file: the whole file with progress, then cancelled. */
    {
        progress_state p = {0, 0, 1, 0, 0, 0};
        mk_decode_settings s;
        mk_decode_default_settings(&s);
        s.progress = on_progress;
        s.progress_user = &p;
        path_in(audio, sizeof audio, dir, "decoded.pcm");
        path_in(video, sizeof video, dir, "decoded.nv12");
        report("decode", mk_decode_file(src, audio, video, &s), &p);
        progress_state q = {0, 2, 1, 0, 0, 0};
        s.progress_user = &q;
        path_in(audio, sizeof audio, dir, "cancelled.pcm");
        path_in(video, sizeof video, dir, "cancelled.nv12");
        report("decode-cancel", mk_decode_file(src, audio, video, &s), &q);
    }

    /* mk_transcode: to FLAC with progress, then cancelled. */
    {
        progress_state p = {0, 0, 1, 0, 0, 0};
        mk_encoder_settings s;
        mk_encoder_default_settings(&s);
        s.progress = on_progress;
        s.progress_user = &p;
        path_in(out, sizeof out, dir, "transcoded.flac");
        report("transcode", mk_transcode(src, out, &s), &p);
        progress_state q = {0, 1, 1, 0, 0, 0};
        s.progress_user = &q;
        path_in(out, sizeof out, dir, "cancelled.flac");
        report("transcode-cancel", mk_transcode(src, out, &s), &q);
        mk_audio_format f = {sizeof f, MK_SAMPLES_S16, 44100, 2, 0};
        mk_encoder *enc = NULL;
        s.codec = "flac";
        report("encoder-open-with-progress", mk_encoder_open(&enc, &f, &s), &q);
    }

    /* The registry, as structured data; and the plugins' "codec:priority" lists. */
    for (int32_t i = 0; i < mk_plugin_count(); i++) {
        mk_plugin_info pl;
        pl.struct_size = sizeof pl;
        mk_plugin_get_info(i, &pl);
        printf("{\"plugin\":\"%s\",\"path\":\"%s\",\"codecs\":\"%s\"}\n", pl.name, pl.path, pl.codecs);
    }
    int32_t n = mk_backend_count();
    for (int32_t i = 0; i < n; i++) {
        mk_backend_info b;
        b.struct_size = sizeof b;
        if (mk_backend_get_info(i, &b) != MK_OK) { printf("{\"error\":\"%s\"}\n", mk_last_error()); return 1; }
        printf("{\"backend\":%d,\"kind\":%d,\"codec\":\"%s\",\"name\":\"%s\",\"media_type\":%d,\"priority\":%d,\"plugin\":\"%s\",\"plugin_path\":\"%s\"}\n",
               i, b.kind, b.codec, b.name, b.media_type, b.priority, b.plugin, b.plugin_path);
    }
    mk_backend_info small;
    small.struct_size = 4;
    printf("{\"call\":\"backend-small-struct\",\"status\":\"%s\"}\n", mk_status_name(mk_backend_get_info(0, &small)));
    printf("{\"call\":\"backend-out-of-range\",\"status\":\"%s\"}\n", mk_status_name(mk_backend_get_info(n, NULL)));
    for (int32_t i = 0; i < mk_plugin_failure_count(); i++) {
        const char *path = NULL, *message = NULL;
        mk_plugin_failure(i, &path, &message);
        printf("{\"failure\":%d,\"path\":\"%s\",\"message_length\":%zu}\n", i, path, strlen(message));
    }
    for (int32_t i = 0; i < mk_plugin_search_count(); i++) {
        const char *path = NULL;
        mk_plugin_search_path(i, &path);
        printf("{\"searched\":\"%s\"}\n", path);
    }
    printf("{\"call\":\"search-out-of-range\",\"status\":\"%s\"}\n", mk_status_name(mk_plugin_search_path(mk_plugin_search_count(), NULL)));
    return 0;
}
