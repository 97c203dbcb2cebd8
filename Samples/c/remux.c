/*
 * remux.c — copy every track of an MP4/MOV into a new MP4 through MediaKit's C API
 * only: packets go from the demuxer to the muxer, compressed, no decoder involved.
 *
 *     cc remux.c $(pkg-config --cflags --libs mediakit) -o mk-remux-c
 *     ./mk-remux-c in.mp4 out.mp4 [progressive|faststart|fragmented|hybrid]
 */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s IN OUT [progressive|faststart|fragmented|hybrid]\n", argv[0]);
        return 2;
    }
    mk_muxer_settings settings;
    mk_muxer_default_settings(&settings);
    if (argc == 4) {
        const char *names[] = { "progressive", "faststart", "fragmented", "hybrid" };
        settings.layout = -1;
        for (int i = 0; i < 4; i++) if (strcmp(argv[3], names[i]) == 0) settings.layout = i;
        if (settings.layout < 0) { fprintf(stderr, "unknown layout %s\n", argv[3]); return 2; }
    }
    mk_demuxer *dmx = NULL;
    mk_muxer *mux = NULL;
    mk_packet *pkt = NULL;
    int32_t count = 0, map[64];
    if (mk_demuxer_open(&dmx, argv[1]) != MK_OK || mk_muxer_open(&mux, argv[2], &settings) != MK_OK) {
        fprintf(stderr, "%s\n", mk_last_error());
        mk_demuxer_close(&dmx);
        return 1;
    }
    int rc = 0;
    mk_demuxer_track_count(dmx, &count);
    for (int32_t t = 0; t < count && t < 64 && rc == 0; t++)
        if (mk_muxer_add_track(mux, dmx, t, &map[t]) != MK_OK) rc = 1;
    mk_status st = MK_OK;
    long written = 0;
    while (rc == 0 && (st = mk_demuxer_read_packet(dmx, &pkt)) == MK_OK) {
        mk_packet_info info;
        info.struct_size = sizeof info;
        mk_packet_get_info(pkt, &info);
        if (info.track < 64 && mk_muxer_write_packet(mux, map[info.track], pkt) != MK_OK) rc = 1;
        mk_packet_free(&pkt);
        written++;
    }
    if (rc == 0 && st != MK_EOF) rc = 1;                 /* a read error */
    if (rc == 0 && mk_muxer_finish(mux) != MK_OK) rc = 1;
    if (rc != 0) {
        fprintf(stderr, "remux: %s\n", mk_last_error());
        mk_muxer_cancel(mux);                            /* nothing is left under OUT */
    } else {
        printf("%ld packets, %d tracks -> %s\n", written, count, argv[2]);
    }
    mk_muxer_close(&mux);
    mk_demuxer_close(&dmx);
    return rc;
}
