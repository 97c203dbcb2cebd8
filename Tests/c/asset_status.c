/*
 * asset_status.c — reader and writer status through the C API (issue 35, item 10):
 * mk_demuxer_get_status, mk_demuxer_track_ended, mk_demuxer_cancel, mk_muxer_get_status,
 * mk_muxer_end_track, mk_muxer_track_ended.
 *
 *     asset_status IN CUT OUT.mkv
 *
 * IN: a file of two tracks (read per track, then in file order); CUT: a file cut short; OUT:
 * written by copying IN's packets, track 1 marked finished after 20 packets. Prints
 * "track N packets K" for IN's tracks (compared with ffprobe's counts by the test), "written N
 * K" for OUT's, then "N failed".
 */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int fails = 0;
#define CHECK(cond, ...) do { if (!(cond)) { printf("FAIL line %d: ", __LINE__); printf(__VA_ARGS__); printf("\n"); fails++; } } while (0)

static int32_t status_of(mk_demuxer *d) {
    mk_asset_status st;
    st.struct_size = sizeof st;
    if (mk_demuxer_get_status(d, &st) != MK_OK) return -1;
    return st.status;
}

static int32_t ended(mk_demuxer *d, int32_t t) {
    int32_t e = -1;
    mk_demuxer_track_ended(d, t, &e);
    return e;
}

/* The failing source of an mk_io: the file's bytes until `armed`, then an I/O error past half. */
typedef struct { FILE *f; long size; int armed; } flaky;

static int64_t flaky_read(void *user, uint8_t *buffer, size_t size) {
    flaky *s = user;
    if (s->armed && ftell(s->f) > s->size / 2) return -1;
    return (int64_t)fread(buffer, 1, size, s->f);
}
static int64_t flaky_seek(void *user, int64_t offset) {
    flaky *s = user;
    return fseek(s->f, (long)offset, SEEK_SET) == 0 ? 0 : -1;
}
static int64_t flaky_size(void *user) { return ((flaky *)user)->size; }

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: asset_status IN CUT OUT.mkv\n"); return 2; }
    mk_demuxer *d = NULL;
    mk_packet *p = NULL;
    if (mk_demuxer_open(&d, argv[1]) != MK_OK) { fprintf(stderr, "open: %s\n", mk_last_error()); return 1; }
    int32_t count = 0;
    mk_demuxer_track_count(d, &count);
    CHECK(count == 2, "the file has %d tracks, not 2", count);
    CHECK(status_of(d) == MK_ASSET_UNKNOWN, "status before a read: %d", status_of(d));
    mk_asset_status small = {4, 0, 0, NULL};
    CHECK(mk_demuxer_get_status(d, &small) == MK_EINVAL, "a struct_size of 4 is refused");
    CHECK(mk_demuxer_track_ended(d, 7, &count) == MK_EINVAL, "track 7 does not exist");
    /* Track by track: track 0 ends, track 1 not; reading goes on; both end: completed. */
    for (int32_t t = 0; t < 2; t++) {
        int32_t n = 0;
        mk_status st;
        while ((st = mk_demuxer_read_track_packet(d, t, &p)) == MK_OK) {
            mk_packet_free(&p);
            n++;
        }
        CHECK(st == MK_EOF, "track %d ended with %d", t, st);
        printf("track %d packets %d\n", t, n);
        CHECK(ended(d, t) == 1, "track %d read to MK_EOF is not ended", t);
        if (t == 0) {
            CHECK(ended(d, 1) == 0, "track 1 ended before it was read");
            CHECK(status_of(d) == MK_ASSET_READING, "one track of two ended: status %d, not READING", status_of(d));
        }
    }
    CHECK(status_of(d) == MK_ASSET_COMPLETED, "both tracks ended: status %d, not COMPLETED", status_of(d));
    CHECK(mk_demuxer_seek(d, 0) == MK_OK, "seek");
    CHECK(status_of(d) == MK_ASSET_READING && ended(d, 0) == 0, "after a seek: status %d, track 0 ended %d", status_of(d), ended(d, 0));
    /* In file order to the end: completed, every track ended. */
    while (mk_demuxer_read_packet(d, &p) == MK_OK) mk_packet_free(&p);
    CHECK(status_of(d) == MK_ASSET_COMPLETED && ended(d, 0) == 1 && ended(d, 1) == 1, "read to MK_EOF in file order: status %d", status_of(d));
    mk_demuxer_close(&d);

    /* Cancel: later reads are MK_EOF. */
    if (mk_demuxer_open(&d, argv[1]) != MK_OK) return 1;
    CHECK(mk_demuxer_read_packet(d, &p) == MK_OK, "first read");
    mk_packet_free(&p);
    CHECK(mk_demuxer_cancel(d) == MK_OK && status_of(d) == MK_ASSET_CANCELLED, "cancel: status %d", status_of(d));
    CHECK(mk_demuxer_read_packet(d, &p) == MK_EOF && p == NULL, "a read after cancel is not MK_EOF");
    mk_demuxer_close(&d);

    /* A file cut short: MK_ETRUNCATED is the end (completed), with the warning. */
    if (mk_demuxer_open(&d, argv[2]) != MK_OK) return 1;
    mk_status st;
    while ((st = mk_demuxer_read_packet(d, &p)) == MK_OK) mk_packet_free(&p);
    CHECK(st == MK_ETRUNCATED, "the cut file ended with %d", st);
    CHECK(status_of(d) == MK_ASSET_COMPLETED, "a cut file read to its cut: status %d", status_of(d));
    mk_demuxer_close(&d);

    /* An I/O error mid-file: failed, with the error's status and message. */
    flaky src = {fopen(argv[1], "rb"), 0, 0};
    if (!src.f) return 1;
    fseek(src.f, 0, SEEK_END);
    src.size = ftell(src.f);
    fseek(src.f, 0, SEEK_SET);
    mk_io io;
    memset(&io, 0, sizeof io);
    io.struct_size = sizeof io;
    io.read = flaky_read;
    io.seek = flaky_seek;
    io.size = flaky_size;
    if (mk_demuxer_open_io(&d, &io, &src) != MK_OK) { fprintf(stderr, "open_io: %s\n", mk_last_error()); return 1; }
    src.armed = 1;
    while ((st = mk_demuxer_read_packet(d, &p)) == MK_OK) mk_packet_free(&p);
    mk_asset_status as;
    as.struct_size = sizeof as;
    mk_demuxer_get_status(d, &as);
    CHECK(st == MK_EIO && as.status == MK_ASSET_FAILED && as.error == MK_EIO && as.message && strstr(as.message, "read"),
          "an I/O error: read %d, status %d, error %d, message %s", st, as.status, as.error, as.message ? as.message : "(null)");
    mk_demuxer_close(&d);
    fclose(src.f);

    /* Writing: unknown, writing, a track marked finished refuses packets, completed. */
    if (mk_demuxer_open(&d, argv[1]) != MK_OK) return 1;
    mk_muxer *m = NULL;
    if (mk_muxer_open(&m, argv[3], NULL) != MK_OK) { fprintf(stderr, "muxer: %s\n", mk_last_error()); return 1; }
    int32_t index = -1;
    for (int32_t t = 0; t < 2; t++) CHECK(mk_muxer_add_track(m, d, t, &index) == MK_OK && index == t, "add track %d", t);
    as.struct_size = sizeof as;
    CHECK(mk_muxer_get_status(m, &as) == MK_OK && as.status == MK_ASSET_UNKNOWN, "muxer status before a packet: %d", as.status);
    int32_t written[2] = {0, 0}, refused = 0, e = -1;
    mk_packet_info pi;
    while (mk_demuxer_read_packet(d, &p) == MK_OK) {
        pi.struct_size = sizeof pi;
        mk_packet_get_info(p, &pi);
        if (pi.track == 1 && written[1] == 20) mk_muxer_end_track(m, 1);
        mk_muxer_track_ended(m, pi.track, &e);
        st = mk_muxer_write_packet(m, pi.track, p);
        if (e) {
            CHECK(st == MK_ESTATE, "a packet of a finished track: %d", st);
            refused++;
        } else {
            CHECK(st == MK_OK, "write: %d %s", st, mk_last_error());
            written[pi.track]++;
        }
        mk_packet_free(&p);
    }
    CHECK(refused > 0, "no packet came after the track was marked finished");
    mk_muxer_get_status(m, &as);
    CHECK(as.status == MK_ASSET_WRITING, "status while writing: %d", as.status);
    CHECK(mk_muxer_track_ended(m, 0, &e) == MK_OK && e == 0, "track 0 is not finished before the end");
    CHECK(mk_muxer_finish(m) == MK_OK, "finish: %s", mk_last_error());
    mk_muxer_get_status(m, &as);
    CHECK(as.status == MK_ASSET_COMPLETED, "status after finish: %d", as.status);
    CHECK(mk_muxer_track_ended(m, 0, &e) == MK_OK && e == 1, "every track ends with the file");
    printf("written %d %d\n", written[0], written[1]);
    mk_muxer_close(&m);
    mk_demuxer_close(&d);

    /* Cancelled. */
    char other[4096];
    snprintf(other, sizeof other, "%s.cancelled.mkv", argv[3]);
    if (mk_muxer_open(&m, other, NULL) != MK_OK) return 1;
    mk_muxer_cancel(m);
    mk_muxer_get_status(m, &as);
    CHECK(as.status == MK_ASSET_CANCELLED, "status after cancel: %d", as.status);
    mk_muxer_close(&m);
    printf("%d failed\n", fails);
    return fails != 0;
}
