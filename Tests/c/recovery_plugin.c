/*
 * recovery_plugin.c: the decode session's recovery rules (issue 35 item 8) through the C API,
 * mk_async_decode_session over the failtest plugin (Tests/plugin_harness/failing_plugin.c,
 * loaded from MEDIAKIT_PLUGIN_PATH; the failures are chosen by its environment variables, set
 * by Tests/oracle/test_recovery_plugin.py, which builds and runs this program).
 *
 *   recovery_plugin FILE EXPECT_FRAMES EXPECT_PACKETS EXPECT_REBUILDS EXPECT_INVALIDATIONS EXPECT_STATUS
 *
 * Decodes video track 0 of FILE with backend "failtest" through mk_async_decode_session_read_frame
 * and prints one line: "frames F packets P rebuilds R invalidations I lost L status S: MESSAGE";
 * exits 0 when F, P, R, I and the final status (MK_EOF, or the error name) are those expected.
 */
#include <mediakit/mediakit.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "usage: %s FILE FRAMES PACKETS REBUILDS INVALIDATIONS STATUS\n", argv[0]);
        return 2;
    }
    mk_demuxer *dmx = NULL;
    if (mk_demuxer_open(&dmx, argv[1]) != MK_OK) {
        fprintf(stderr, "open: %s\n", mk_last_error());
        return 2;
    }
    mk_async_decode_session_settings settings;
    mk_async_decode_session_default_settings(&settings);
    settings.backend = "failtest";
    settings.threads = 1;
    if (settings.max_failed_packets != 20 || settings.max_rebuilds != 5) {
        fprintf(stderr, "the default limits are %d and %d, not the seed's 20 and 5\n", settings.max_failed_packets,
                settings.max_rebuilds);
        return 1;
    }
    mk_async_decode_session *s = NULL;
    if (mk_async_decode_session_open(&s, dmx, 0, &settings) != MK_OK) {
        fprintf(stderr, "session: %s\n", mk_last_error());
        return 2;
    }
    long frames = 0;
    mk_frame *f = NULL;
    mk_status st;
    while ((st = mk_async_decode_session_read_frame(s, &f)) == MK_OK) {
        frames++;
        mk_frame_free(&f);
    }
    char message[1024] = "";
    if (st != MK_EOF)
        snprintf(message, sizeof message, "%s", mk_last_error());
    mk_async_decode_session_stats stats;
    memset(&stats, 0, sizeof stats);
    stats.struct_size = sizeof stats;
    if (mk_async_decode_session_get_stats(s, &stats) != MK_OK) {
        fprintf(stderr, "stats: %s\n", mk_last_error());
        return 2;
    }
    /* A caller built against the 0.1 struct (ending at `warnings`) still gets its fields. */
    mk_async_decode_session_stats old;
    memset(&old, 0xff, sizeof old);
    old.struct_size = (uint32_t)offsetof(mk_async_decode_session_stats, packets);
    int old_ok = mk_async_decode_session_get_stats(s, &old) == MK_OK && old.frames == stats.frames
                 && old.rebuilds == stats.rebuilds && old.packets == -1 && old.invalidations == -1;
    printf("frames %ld packets %lld rebuilds %d invalidations %d lost %d status %s: %s\n", frames,
           (long long)stats.packets, stats.rebuilds, stats.invalidations, stats.frames_lost, mk_status_name(st), message);
    mk_async_decode_session_close(&s);
    mk_demuxer_close(&dmx);
    int ok = frames == atol(argv[2]) && stats.frames == frames && stats.packets == atoll(argv[3])
             && stats.rebuilds == atoi(argv[4]) && stats.invalidations == atoi(argv[5])
             && strcmp(mk_status_name(st), argv[6]) == 0 && old_ok;
    if (!old_ok)
        printf("a struct_size of the 0.1 struct was not filled as it should be\n");
    return ok ? 0 : 1;
}
