/*
 * plugin_mux.c — copies every track of a file into a container only a plugin writes, through the
 * C muxer (mk_muxer_open chooses the FFmpeg plugin's libavformat muxer by the extension: .avi,
 * .flv, .nut ...), then checks that a cancelled muxer leaves nothing behind.
 * Tests/oracle/test_capi_mux.py compares the output with `ffmpeg -c copy` (framemd5).
 *
 *   plugin_mux IN OUT.EXT [FORMAT]
 *
 * With FORMAT (a muxer name, mk_muxer_settings.format): the muxer is chosen by that name instead
 * of the extension, mk_remux also copies IN into "OUT.EXT.remux.EXT" with that name, and an
 * unknown name is checked to be MK_ENOTFOUND naming it, for mk_muxer_open and mk_remux, with
 * nothing written.
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
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: plugin_mux IN OUT.EXT [FORMAT]\n");
        return 2;
    }
    mk_muxer_settings settings;
    mk_muxer_default_settings(&settings);
    settings.format = argc == 4 ? argv[3] : NULL;
    const char *ext = strrchr(argv[2], '.') ? strrchr(argv[2], '.') + 1 : "avi";
    if (argc == 4) {
        /* An unknown name: MK_ENOTFOUND naming it, nothing under the target name. */
        char unknown[4096];
        snprintf(unknown, sizeof(unknown), "%s.unknown.%s", argv[2], ext);
        mk_muxer_settings bad = settings;
        bad.format = "no-such-muxer";
        mk_muxer *none = NULL;
        if (mk_muxer_open(&none, unknown, &bad) != MK_ENOTFOUND || none != NULL || !strstr(mk_last_error(), "no-such-muxer")) {
            fprintf(stderr, "plugin_mux: mk_muxer_open with format \"no-such-muxer\": not MK_ENOTFOUND naming it (%s)\n", mk_last_error());
            return 1;
        }
        if (mk_remux(argv[1], unknown, &bad) != MK_ENOTFOUND || !strstr(mk_last_error(), "no-such-muxer")) {
            fprintf(stderr, "plugin_mux: mk_remux with format \"no-such-muxer\": not MK_ENOTFOUND naming it (%s)\n", mk_last_error());
            return 1;
        }
        if (access(unknown, F_OK) == 0) {
            fprintf(stderr, "plugin_mux: %s exists after an unknown muxer name\n", unknown);
            return 1;
        }
        /* mk_remux by the name. */
        char remuxed[4096];
        snprintf(remuxed, sizeof(remuxed), "%s.remux.%s", argv[2], ext);
        if (mk_remux(argv[1], remuxed, &settings) != MK_OK)
            return fail("mk_remux");
    }
    mk_demuxer *d = NULL;
    mk_muxer *m = NULL;
    if (mk_demuxer_open(&d, argv[1]) != MK_OK)
        return fail("mk_demuxer_open");
    if (mk_muxer_open(&m, argv[2], &settings) != MK_OK)
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
    snprintf(cancelled, sizeof(cancelled), "%s.cancelled.%s", argv[2], ext);
    if (mk_demuxer_open(&d, argv[1]) != MK_OK || mk_muxer_open(&m, cancelled, &settings) != MK_OK)
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
