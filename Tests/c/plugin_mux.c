/*
 * plugin_mux.c — copies every track of a file into a container only a plugin writes, through the
 * C muxer (mk_muxer_open chooses the FFmpeg plugin's libavformat muxer by the extension: .avi,
 * .flv, .nut ...), then checks that a cancelled muxer leaves nothing behind.
 * Tests/oracle/test_capi_mux.py compares the output with `ffmpeg -c copy` (framemd5).
 *
 *   plugin_mux IN OUT.EXT
 *
 * Exit 0 on success; 1 with the library's message on stderr otherwise.
 */
#define _POSIX_C_SOURCE 200809L
#include "mediakit/mediakit.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fail(const char *what)
{
    fprintf(stderr, "plugin_mux: %s: %s\n", what, mk_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: plugin_mux IN OUT.EXT\n");
        return 2;
    }
    mk_demuxer *d = NULL;
    mk_muxer *m = NULL;
    if (mk_demuxer_open(&d, argv[1]) != MK_OK)
        return fail("mk_demuxer_open");
    if (mk_muxer_open(&m, argv[2], NULL) != MK_OK)
        return fail("mk_muxer_open");
    int32_t count = 0;
    mk_demuxer_track_count(d, &count);
    int32_t map[64];
    for (int32_t t = 0; t < count && t < 64; t++)
        if (mk_muxer_add_track(m, d, t, &map[t]) != MK_OK)
            return fail("mk_muxer_add_track");
    mk_packet *p = NULL;
    mk_status s;
    while ((s = mk_demuxer_read_packet(d, &p)) == MK_OK) {
        mk_packet_info info = { .struct_size = sizeof(info) };
        mk_packet_get_info(p, &info);
        if (info.track < 64 && mk_muxer_write_packet(m, map[info.track], p) != MK_OK)
            return fail("mk_muxer_write_packet");
        mk_packet_free(&p);
    }
    if (s != MK_EOF)
        return fail("mk_demuxer_read_packet");
    if (mk_muxer_finish(m) != MK_OK)
        return fail("mk_muxer_finish");
    mk_muxer_close(&m);
    mk_demuxer_close(&d);

    /* A second output, cancelled after one packet: nothing under its name. */
    char cancelled[4096];
    snprintf(cancelled, sizeof(cancelled), "%s.cancelled.%s", argv[2], strrchr(argv[2], '.') ? strrchr(argv[2], '.') + 1 : "avi");
    if (mk_demuxer_open(&d, argv[1]) != MK_OK || mk_muxer_open(&m, cancelled, NULL) != MK_OK)
        return fail("reopening");
    for (int32_t t = 0; t < count && t < 64; t++)
        if (mk_muxer_add_track(m, d, t, &map[t]) != MK_OK)
            return fail("mk_muxer_add_track (second output)");
    if (mk_demuxer_read_packet(d, &p) != MK_OK)
        return fail("mk_demuxer_read_packet (second output)");
    mk_packet_info info = { .struct_size = sizeof(info) };
    mk_packet_get_info(p, &info);
    if (mk_muxer_write_packet(m, map[info.track], p) != MK_OK)
        return fail("mk_muxer_write_packet (second output)");
    mk_packet_free(&p);
    if (mk_muxer_cancel(m) != MK_OK)
        return fail("mk_muxer_cancel");
    mk_muxer_close(&m);
    mk_demuxer_close(&d);
    if (access(cancelled, F_OK) == 0) {
        fprintf(stderr, "plugin_mux: %s exists after mk_muxer_cancel\n", cancelled);
        return 1;
    }
    return 0;
}
