/*
 * test_capi.c — misuse of the C API must give an error status with a message,
 * never a crash: NULL handles for every function, closed (stale) handles, calls
 * in the wrong order, missing and corrupt files. Run under valgrind by the test
 * suite (no leak, no invalid access).
 *
 *     test_capi GOOD.mp4 CORRUPT.mp4 SCRATCH_OUT.mp4
 *
 * Prints one line per failed check and ends with "N passed, M failed".
 */
#include <stddef.h>
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond, what) do { \
    if (cond) passed++; \
    else { failed++; printf("FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__, what, mk_last_error()); } \
} while (0)

/* An error status must come with a message. */
#define EXPECT(call, status) do { \
    mk_status got_ = (call); \
    CHECK(got_ == (status) && (got_ >= 0 || mk_last_error()[0] != 0), #call " == " #status); \
    if (got_ != (status)) printf("     got %s\n", mk_status_name(got_)); \
} while (0)

/* mk_frame_callback of the misuse tests: counts the frames, frees them, stops at the first
 * (position 1 first: frames come in index order, so the batch {1, 0} hands index 0 first). */
static int32_t stop_at_first(void *user, int64_t position, mk_frame *frame) {
    int *calls = user;
    (*calls)++;
    CHECK(frame != NULL && position == 1, "the first frame handed out is the lowest index");
    mk_frame_free(&frame);
    return MK_ECANCELLED;
}

static void null_handles(void) {
    int32_t n = 0;
    double d = 0;
    mk_track_info ti; ti.struct_size = sizeof ti;
    mk_packet_info pi; pi.struct_size = sizeof pi;
    mk_frame_info fi; fi.struct_size = sizeof fi;
    mk_plugin_info pl; pl.struct_size = sizeof pl;
    mk_packet *pkt = NULL;
    mk_frame *frm = NULL;
    mk_decode_session *dec = NULL;
    size_t size = 0;

    EXPECT(mk_demuxer_open(NULL, "x.mp4"), MK_EINVAL);
    mk_demuxer *dmx = (mk_demuxer *)0x1;   /* must be reset to NULL on failure */
    EXPECT(mk_demuxer_open(&dmx, NULL), MK_EINVAL);
    CHECK(dmx == NULL, "a failed open sets *out to NULL");
    EXPECT(mk_demuxer_track_count(NULL, &n), MK_EINVAL);
    EXPECT(mk_demuxer_duration(NULL, &d), MK_EINVAL);
    const char *container = NULL;
    EXPECT(mk_demuxer_container(NULL, &container), MK_EINVAL);
    EXPECT(mk_demuxer_track(NULL, 0, &ti), MK_EINVAL);
    EXPECT(mk_demuxer_read_packet(NULL, &pkt), MK_EINVAL);
    EXPECT(mk_demuxer_read_packet(NULL, NULL), MK_EINVAL);
    EXPECT(mk_demuxer_read_track_packet(NULL, 0, &pkt), MK_EINVAL);
    EXPECT(mk_demuxer_warning_count(NULL, &n), MK_EINVAL);
    EXPECT(mk_demuxer_warning(NULL, 0, NULL), MK_EINVAL);
    EXPECT(mk_demuxer_seek(NULL, 1.0), MK_EINVAL);
    EXPECT(mk_demuxer_select_tracks(NULL, NULL, 0), MK_EINVAL);
    EXPECT(mk_packet_get_info(NULL, &pi), MK_EINVAL);
    EXPECT(mk_decode_session_open(&dec, NULL, 0, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_open(NULL, NULL, 0, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_send_packet(NULL, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_receive_frame(NULL, &frm), MK_EINVAL);
    EXPECT(mk_decode_session_receive_frame(NULL, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_reset(NULL), MK_EINVAL);
    EXPECT(mk_frame_get_info(NULL, &fi), MK_EINVAL);
    EXPECT(mk_frame_pack(NULL, MK_PACK_NV12, NULL, 0, &size), MK_EINVAL);
    EXPECT(mk_frame_pack_scaled(NULL, MK_PACK_NV12, 16, 16, MK_SCALE_DEFAULT, NULL, 0, &size), MK_EINVAL);
    mk_frame_view_info vi; vi.struct_size = sizeof vi;
    EXPECT(mk_frame_view(NULL, MK_PACK_NV12, &vi), MK_EINVAL);
    EXPECT(mk_plugin_get_info(-1, &pl), MK_EINVAL);
    EXPECT(mk_plugin_get_info(0, NULL), MK_EINVAL);
    EXPECT(mk_plugins_load(NULL), MK_EINVAL);
    EXPECT(mk_plugins_load("/nonexistent/plugins"), MK_ENOTFOUND);
    EXPECT(mk_decode_file(NULL, "a.pcm", NULL, NULL), MK_EINVAL);
    EXPECT(mk_decode_file("x.mp4", NULL, NULL, NULL), MK_EINVAL);
    /* close and free take the address and are harmless on NULL */
    mk_demuxer_close(NULL);
    mk_demuxer_close(&dmx);
    mk_decode_session_close(NULL);
    mk_decode_session_close(&dec);
    mk_packet_free(NULL);
    mk_packet_free(&pkt);
    mk_frame_free(NULL);
    mk_frame_free(&frm);
    mk_decode_session_default_settings(NULL);
    mk_decode_default_settings(NULL);
    CHECK(strcmp(mk_status_name(MK_EINVAL), "MK_EINVAL") == 0, "status names");
    CHECK(mk_abi_version() == MK_ABI_VERSION, "the library's ABI version matches the header");
    CHECK(mk_version()[0] != 0, "a version string");
}

static void missing_and_corrupt(const char *corrupt) {
    mk_demuxer *dmx = NULL;
    EXPECT(mk_demuxer_open(&dmx, "/nonexistent/file.mp4"), MK_ENOTFOUND);
    CHECK(strstr(mk_last_error(), "/nonexistent/file.mp4") != NULL, "the message names the file");
    CHECK(dmx == NULL, "nothing allocated on error");
    mk_status st = mk_demuxer_open(&dmx, corrupt);
    CHECK(st == MK_EDATA || st == MK_OK, "a corrupt file opens with MK_EDATA (or its intact part reads)");
    if (st == MK_OK) {
        mk_packet *pkt = NULL;
        while ((st = mk_demuxer_read_packet(dmx, &pkt)) == MK_OK) mk_packet_free(&pkt);
        CHECK(st == MK_EDATA || st == MK_EOF || st == MK_ETRUNCATED,
              "reading a corrupt file ends in MK_EDATA, MK_ETRUNCATED or MK_EOF");
        int32_t warnings = -1;
        EXPECT(mk_demuxer_warning_count(dmx, &warnings), MK_OK);
        if (st == MK_ETRUNCATED) {
            CHECK(strstr(mk_last_error(), "truncated at offset") != NULL, "MK_ETRUNCATED names the offset of the cut");
            CHECK(mk_demuxer_read_packet(dmx, &pkt) == MK_EOF && pkt == NULL, "after MK_ETRUNCATED, reading gives MK_EOF");
            CHECK(warnings >= 1, "the cut is listed by mk_demuxer_warning_count");
        }
        const char *message = NULL;
        if (warnings > 0) {
            EXPECT(mk_demuxer_warning(dmx, warnings - 1, &message), MK_OK);
            CHECK(message != NULL && message[0] != 0, "a warning is a message");
        }
        EXPECT(mk_demuxer_warning(dmx, warnings, &message), MK_EINVAL);
        CHECK(message == NULL, "a failed mk_demuxer_warning sets *message to NULL");
        EXPECT(mk_demuxer_warning(dmx, 0, NULL), MK_EINVAL);
        mk_demuxer_close(&dmx);
    }
    EXPECT(mk_decode_file("/nonexistent/file.mp4", "/tmp/never.pcm", NULL, NULL), MK_ENOTFOUND);
}

static void wrong_order(const char *good) {
    mk_demuxer *dmx = NULL;
    mk_decode_session *dec = NULL;
    mk_packet *pkt = NULL;
    mk_frame *frm = NULL;
    int32_t n = 0;
    EXPECT(mk_demuxer_open(&dmx, good), MK_OK);
    EXPECT(mk_demuxer_track_count(dmx, &n), MK_OK);
    CHECK(n >= 2, "the sample has video and audio");
    const char *container = NULL;
    EXPECT(mk_demuxer_container(dmx, NULL), MK_EINVAL);
    EXPECT(mk_demuxer_container(dmx, &container), MK_OK);
    CHECK(container != NULL && strcmp(container, "mp4") == 0, "the sample's container is mp4");

    mk_track_info small; small.struct_size = 8;
    EXPECT(mk_demuxer_track(dmx, 0, &small), MK_EINVAL);
    mk_track_info ti; ti.struct_size = sizeof ti;
    EXPECT(mk_demuxer_track(dmx, n, &ti), MK_EINVAL);
    /* A caller built against the 0.1 header (struct ending before `reflected`) still works,
     * and the bytes past its struct are left alone. */
    memset(&ti, 0xAB, sizeof ti);
    ti.struct_size = (uint32_t)offsetof(mk_track_info, reflected);
    EXPECT(mk_demuxer_track(dmx, 0, &ti), MK_OK);
    CHECK(ti.reflected == (int32_t)0xABABABAB, "a 0.1-sized mk_track_info is filled only up to its struct_size");
    ti.struct_size = sizeof ti;
    EXPECT(mk_demuxer_track(dmx, 0, &ti), MK_OK);
    CHECK(ti.reflected == 0, "the sample's video is not mirrored");
    EXPECT(mk_demuxer_read_track_packet(dmx, n, &pkt), MK_EINVAL);
    int32_t bad = 99;
    EXPECT(mk_demuxer_select_tracks(dmx, &bad, 1), MK_EINVAL);
    EXPECT(mk_decode_session_open(&dec, dmx, n, NULL), MK_EINVAL);
    mk_decode_session_settings s;
    mk_decode_session_default_settings(&s);
    s.backend = "no-such-backend";
    EXPECT(mk_decode_session_open(&dec, dmx, 0, &s), MK_ENOTFOUND);

    EXPECT(mk_decode_session_open(&dec, dmx, 0, NULL), MK_OK);
    EXPECT(mk_decode_session_receive_frame(dec, &frm), MK_EAGAIN);   /* receive before send */
    EXPECT(mk_demuxer_read_track_packet(dmx, 1, &pkt), MK_OK);
    EXPECT(mk_decode_session_send_packet(dec, pkt), MK_EINVAL);      /* a packet of another track */
    mk_packet_free(&pkt);
    CHECK(pkt == NULL, "free sets the handle to NULL");

    mk_packet_info pi; pi.struct_size = sizeof pi;
    EXPECT(mk_demuxer_read_track_packet(dmx, 0, &pkt), MK_OK);
    EXPECT(mk_packet_get_info(pkt, &pi), MK_OK);
    CHECK(pi.track == 0 && pi.size > 0 && pi.data != NULL && pi.is_keyframe == 1, "the first video packet");
    EXPECT(mk_decode_session_send_packet(dec, pkt), MK_OK);
    mk_packet *stale = pkt;
    mk_packet_free(&pkt);
    EXPECT(mk_packet_get_info(stale, &pi), MK_EINVAL);       /* a freed packet */
    EXPECT(mk_decode_session_send_packet(dec, stale), MK_EINVAL);

    EXPECT(mk_decode_session_send_packet(dec, NULL), MK_OK);         /* drain */
    mk_status st;
    int frames = 0;
    while ((st = mk_decode_session_receive_frame(dec, &frm)) == MK_OK) {
        mk_frame_info fi; fi.struct_size = sizeof fi;
        size_t need = 0, small_size = 0;
        uint8_t tiny[16];
        EXPECT(mk_frame_get_info(frm, &fi), MK_OK);
        CHECK(fi.media_type == MK_MEDIA_VIDEO && fi.width > 0 && fi.planes[0] != NULL, "frame info");
        EXPECT(mk_frame_pack(frm, MK_PACK_S16, NULL, 0, &need), MK_EINVAL);      /* audio layout, video frame */
        EXPECT(mk_frame_pack(frm, 77, NULL, 0, &need), MK_EINVAL);
        EXPECT(mk_frame_pack(frm, MK_PACK_NV12, NULL, 0, &need), MK_OK);
        CHECK(need == (size_t)fi.width * fi.height * 3 / 2, "NV12 size");
        EXPECT(mk_frame_pack(frm, MK_PACK_NV12, tiny, sizeof tiny, &small_size), MK_EINVAL);
        CHECK(small_size == need, "a too-small buffer still reports the size needed");
        EXPECT(mk_frame_pack(frm, MK_PACK_RGB24, NULL, 0, &need), MK_OK);
        CHECK(need == (size_t)fi.width * fi.height * 3, "RGB24 size");
        EXPECT(mk_frame_pack(frm, MK_PACK_RGB24, tiny, sizeof tiny, &small_size), MK_EINVAL);
        CHECK(small_size == need, "a too-small buffer still reports the RGB24 size needed");
        /* Scaled: bad sizes, filters and layouts are refused; an odd size has rounded-up chroma. */
        EXPECT(mk_frame_pack_scaled(frm, MK_PACK_NV12, 0, 16, MK_SCALE_DEFAULT, NULL, 0, &need), MK_EINVAL);
        EXPECT(mk_frame_pack_scaled(frm, MK_PACK_NV12, 16, 100000, MK_SCALE_DEFAULT, NULL, 0, &need), MK_EINVAL);
        EXPECT(mk_frame_pack_scaled(frm, MK_PACK_NV12, 16, 16, 99, NULL, 0, &need), MK_EINVAL);
        EXPECT(mk_frame_pack_scaled(frm, MK_PACK_S16, 16, 16, MK_SCALE_DEFAULT, NULL, 0, &need), MK_EINVAL);
        EXPECT(mk_frame_pack_scaled(frm, MK_PACK_I420, 33, 17, MK_SCALE_BILINEAR, NULL, 0, &need), MK_OK);
        CHECK(need == 33 * 17 + 2 * 17 * 9, "scaled I420 size");
        EXPECT(mk_frame_pack_scaled(frm, MK_PACK_I420, 33, 17, MK_SCALE_BILINEAR, tiny, sizeof tiny, &small_size), MK_EINVAL);
        CHECK(small_size == need, "a too-small buffer still reports the scaled size needed");
        uint8_t *scaled = malloc(need);
        EXPECT(mk_frame_pack_scaled(frm, MK_PACK_I420, 33, 17, MK_SCALE_BILINEAR, scaled, need, &small_size), MK_OK);
        CHECK(small_size == need, "scaled I420 written");
        free(scaled);
        /* The sample's pictures are yuv420p: I420 is read in place, NV12 is packed. */
        mk_frame_view_info vi; vi.struct_size = sizeof vi;
        EXPECT(mk_frame_view(frm, MK_PACK_I420, &vi), MK_OK);
        CHECK(vi.plane_count == 3 && vi.in_place == 1 && vi.planes[0] == fi.planes[0] && vi.planes[2] == fi.planes[2]
              && vi.strides[1] == fi.strides[1] && vi.row_bytes[0] == fi.width && vi.rows[0] == fi.height
              && vi.row_bytes[1] == (fi.width + 1) / 2 && vi.rows[2] == (fi.height + 1) / 2,
              "I420 views of a yuv420p picture");
        EXPECT(mk_frame_view(frm, MK_PACK_NV12, &vi), MK_OK);
        CHECK(vi.plane_count == 2 && vi.in_place == 0 && vi.planes[0] == NULL && vi.strides[1] == vi.row_bytes[1]
              && vi.row_bytes[1] == 2 * ((fi.width + 1) / 2), "NV12 of a yuv420p picture must be packed");
        EXPECT(mk_frame_view(frm, MK_PACK_S16, &vi), MK_EINVAL);                 /* audio layout, video frame */
        EXPECT(mk_frame_view(frm, 77, &vi), MK_EINVAL);
        EXPECT(mk_frame_view(frm, MK_PACK_I420, NULL), MK_EINVAL);
        vi.struct_size = 4;
        EXPECT(mk_frame_view(frm, MK_PACK_I420, &vi), MK_EINVAL);
        mk_frame *stale_frame = frm;
        mk_frame_free(&frm);
        mk_frame_free(&frm);                                   /* twice: harmless */
        EXPECT(mk_frame_get_info(stale_frame, &fi), MK_EINVAL);
        vi.struct_size = sizeof vi;
        EXPECT(mk_frame_view(stale_frame, MK_PACK_I420, &vi), MK_EINVAL);
        frames++;
    }
    EXPECT(st, MK_EOF);
    CHECK(frames == 1, "one key frame decodes to one frame");
    EXPECT(mk_decode_session_send_packet(dec, NULL), MK_ESTATE);     /* send after drain */
    EXPECT(mk_decode_session_reset(dec), MK_OK);
    EXPECT(mk_decode_session_receive_frame(dec, &frm), MK_EAGAIN);

    /* Frames by index: bad arguments are statuses; a callback's negative status stops the batch. */
    int64_t frame_count = 0, index[2] = { 1, 0 };
    int calls = 0;
    EXPECT(mk_decode_session_frame_index(dec, dmx, NULL, NULL, 0, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_frame_index(dec, dmx, NULL, NULL, -1, &frame_count), MK_EINVAL);
    EXPECT(mk_decode_session_frame_index(dec, dmx, NULL, NULL, 0, &frame_count), MK_OK);
    CHECK(frame_count > 2, "the sample's video has frames");
    /* The list given back (a caller's cache): checked, refused out of order, taken as read. */
    int64_t *times = calloc((size_t)frame_count, sizeof *times);
    int32_t *keys = calloc((size_t)frame_count, sizeof *keys);
    CHECK(times && keys, "allocation");
    EXPECT(mk_decode_session_frame_index(dec, dmx, times, keys, frame_count, &frame_count), MK_OK);
    EXPECT(mk_decode_session_set_frame_index(NULL, times, keys, frame_count), MK_EINVAL);
    EXPECT(mk_decode_session_set_frame_index(dec, NULL, keys, frame_count), MK_EINVAL);
    EXPECT(mk_decode_session_set_frame_index(dec, times, keys, -1), MK_EINVAL);
    int64_t swap = times[0]; times[0] = times[1]; times[1] = swap;
    EXPECT(mk_decode_session_set_frame_index(dec, times, keys, frame_count), MK_EINVAL);
    CHECK(strstr(mk_last_error(), "frame 1") != NULL, "the first time out of order is named");
    swap = times[0]; times[0] = times[1]; times[1] = swap;
    EXPECT(mk_decode_session_set_frame_index(dec, times, keys, frame_count), MK_OK);
    int64_t again = 0;
    EXPECT(mk_decode_session_frame_index(dec, dmx, NULL, NULL, 0, &again), MK_OK);
    CHECK(again == frame_count, "the list given back is the decoder's");
    /* The estimate (exact on MP4: the sample table) and frames by time. */
    int64_t first_pts = -1, end_pts = -1, estimated = -1;
    EXPECT(mk_decode_session_estimate_frames(dec, dmx, &first_pts, &end_pts, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_estimate_frames(NULL, dmx, &first_pts, &end_pts, &estimated), MK_EINVAL);
    EXPECT(mk_decode_session_estimate_frames(dec, dmx, &first_pts, &end_pts, &estimated), MK_OK);
    CHECK(estimated == frame_count && first_pts == times[0] && end_pts > times[frame_count - 1],
          "on MP4 the estimate is the sample table's list");
    int64_t at[2] = { times[1], times[0] };
    calls = 0;
    EXPECT(mk_decode_session_frames_at_pts(dec, dmx, at, 2, NULL, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_frames_at_pts(dec, dmx, NULL, 2, stop_at_first, &calls), MK_EINVAL);
    EXPECT(mk_decode_session_frames_at_pts(dec, dmx, at, -1, stop_at_first, &calls), MK_EINVAL);
    EXPECT(mk_decode_session_frames_at_pts(dec, dmx, at, 2, stop_at_first, &calls), MK_ECANCELLED);
    CHECK(calls == 1, "frames by time: the earliest first, the batch stops at the callback's status");
    calls = 0;
    free(times);
    free(keys);
    EXPECT(mk_decode_session_frames_at(dec, dmx, index, 2, NULL, NULL), MK_EINVAL);
    EXPECT(mk_decode_session_frames_at(dec, dmx, NULL, 2, stop_at_first, &calls), MK_EINVAL);
    index[0] = frame_count;
    EXPECT(mk_decode_session_frames_at(dec, dmx, index, 2, stop_at_first, &calls), MK_EINVAL);
    CHECK(strstr(mk_last_error(), "out of range") != NULL && calls == 0, "an index past the end is named, nothing decoded");
    index[0] = 1;
    EXPECT(mk_decode_session_frames_at(dec, dmx, index, 2, stop_at_first, &calls), MK_ECANCELLED);
    CHECK(calls == 1, "the batch stops at the callback's negative status");
    CHECK(mk_pack_layout_name(MK_PACK_RGB24) != NULL && strcmp(mk_pack_layout_name(MK_PACK_RGB24), "rgb24") == 0
          && mk_pack_layout_name(0) == NULL && mk_pack_layout_name(99) == NULL, "mk_pack_layout_name");
    EXPECT(mk_set_thread_limit(-1), MK_EINVAL);

    /* A decoder handle is not a demuxer handle, and a closed one is no handle. */
    int32_t count = 0;
    EXPECT(mk_demuxer_track_count((mk_demuxer *)dec, &count), MK_EINVAL);
    mk_decode_session *stale_dec = dec;
    mk_decode_session_close(&dec);
    CHECK(dec == NULL, "close sets the handle to NULL");
    mk_decode_session_close(&dec);                                   /* twice: harmless */
    EXPECT(mk_decode_session_send_packet(stale_dec, NULL), MK_EINVAL);
    mk_demuxer *stale_dmx = dmx;
    mk_demuxer_close(&dmx);
    EXPECT(mk_demuxer_read_packet(stale_dmx, &pkt), MK_EINVAL);
    EXPECT(mk_decode_session_open(&dec, stale_dmx, 0, NULL), MK_EINVAL);
}

static void muxer_misuse(const char *good, const char *out) {
    mk_muxer *mux = NULL;
    mk_demuxer *dmx = NULL;
    mk_packet *pkt = NULL;
    int32_t index = -1;
    mk_muxer_settings s;
    mk_muxer_default_settings(&s);
    EXPECT(mk_muxer_open(NULL, out, NULL), MK_EINVAL);
    EXPECT(mk_muxer_open(&mux, NULL, NULL), MK_EINVAL);
    s.layout = 42;
    EXPECT(mk_muxer_open(&mux, out, &s), MK_EINVAL);
    s.layout = MK_LAYOUT_FRAGMENTED;
    s.fragment_seconds = 0;
    EXPECT(mk_muxer_open(&mux, out, &s), MK_EINVAL);
    EXPECT(mk_muxer_open(&mux, "/nonexistent-dir/out.mp4", NULL), MK_EIO);
    EXPECT(mk_muxer_add_track(NULL, NULL, 0, &index), MK_EINVAL);
    EXPECT(mk_muxer_write_packet(NULL, 0, NULL), MK_EINVAL);
    EXPECT(mk_muxer_finish(NULL), MK_EINVAL);
    EXPECT(mk_muxer_cancel(NULL), MK_EINVAL);
    EXPECT(mk_remux(NULL, out, NULL), MK_EINVAL);
    EXPECT(mk_remux("/nonexistent/in.mp4", out, NULL), MK_ENOTFOUND);
    mk_muxer_close(NULL);
    mk_muxer_close(&mux);

    EXPECT(mk_demuxer_open(&dmx, good), MK_OK);
    EXPECT(mk_muxer_open(&mux, out, NULL), MK_OK);
    EXPECT(mk_muxer_add_track(mux, dmx, 99, &index), MK_EINVAL);
    EXPECT(mk_muxer_add_track(mux, dmx, 0, NULL), MK_EINVAL);
    EXPECT(mk_muxer_add_track(mux, dmx, 0, &index), MK_OK);
    CHECK(index == 0, "the first track added is track 0");
    EXPECT(mk_demuxer_read_track_packet(dmx, 0, &pkt), MK_OK);
    EXPECT(mk_muxer_write_packet(mux, 5, pkt), MK_EINVAL);     /* no such output track */
    EXPECT(mk_muxer_write_packet(mux, 0, NULL), MK_EINVAL);
    EXPECT(mk_muxer_write_packet(mux, 0, pkt), MK_OK);
    EXPECT(mk_muxer_finish(mux), MK_OK);
    EXPECT(mk_muxer_finish(mux), MK_ESTATE);                   /* finish twice */
    EXPECT(mk_muxer_write_packet(mux, 0, pkt), MK_ESTATE);     /* write after finish */
    EXPECT(mk_muxer_add_track(mux, dmx, 1, &index), MK_ESTATE);
    mk_packet_free(&pkt);
    mk_muxer *stale = mux;
    mk_muxer_close(&mux);
    CHECK(mux == NULL, "close sets the muxer to NULL");
    EXPECT(mk_muxer_finish(stale), MK_EINVAL);
    FILE *f = fopen(out, "rb");
    CHECK(f != NULL, "a finished muxer leaves its file");
    if (f) fclose(f);
    remove(out);

    /* A cancelled (or closed unfinished) muxer leaves nothing under the name. */
    EXPECT(mk_muxer_open(&mux, out, NULL), MK_OK);
    EXPECT(mk_muxer_add_track(mux, dmx, 0, &index), MK_OK);
    mk_muxer_close(&mux);
    f = fopen(out, "rb");
    CHECK(f == NULL, "an unfinished muxer leaves no file under the target name");
    if (f) fclose(f);
    mk_demuxer_close(&dmx);
}

/* Tracks from codec parameters and packets from caller bytes (mk_muxer_add_track_params,
 * mk_packet_create), and the container chosen by the extension. */
static void muxer_params_misuse(const char *out) {
    char path[4096];
    mk_muxer *mux = NULL;
    int32_t index = -1;
    static const uint8_t asc[2] = {0x12, 0x10};   /* AAC LC, 44.1 kHz, stereo */
    mk_codec_params p;
    mk_codec_params_default(&p);
    p.media_type = MK_MEDIA_AUDIO;
    p.codec = "aac";
    p.extradata = asc;
    p.extradata_size = sizeof asc;
    p.sample_rate = 44100;
    p.channels = 2;
    p.time_base_den = 44100;

    EXPECT(mk_muxer_add_track_params(NULL, &p, &index), MK_EINVAL);
    snprintf(path, sizeof path, "%s.xyz", out);
    EXPECT(mk_muxer_open(&mux, path, NULL), MK_EUNSUPPORTED);
    CHECK(strstr(mk_last_error(), ".mkv") && strstr(mk_last_error(), ".ogg"), "the message lists the extensions written");
    CHECK(mux == NULL, "a failed open sets *out to NULL");
    mk_muxer_settings s;
    mk_muxer_default_settings(&s);
    s.layout = MK_LAYOUT_FRAGMENTED;
    snprintf(path, sizeof path, "%s.mkv", out);
    EXPECT(mk_muxer_open(&mux, path, &s), MK_EINVAL);          /* fragments are MP4's */

    EXPECT(mk_muxer_open(&mux, out, NULL), MK_OK);
    EXPECT(mk_muxer_add_track_params(mux, NULL, &index), MK_EINVAL);
    EXPECT(mk_muxer_add_track_params(mux, &p, NULL), MK_EINVAL);
    mk_codec_params bad = p;
    bad.struct_size = 8;
    EXPECT(mk_muxer_add_track_params(mux, &bad, &index), MK_EINVAL);
    bad = p; bad.codec = NULL;
    EXPECT(mk_muxer_add_track_params(mux, &bad, &index), MK_EINVAL);
    bad = p; bad.time_base_den = 0;
    EXPECT(mk_muxer_add_track_params(mux, &bad, &index), MK_EINVAL);
    bad = p; bad.language = "english";
    EXPECT(mk_muxer_add_track_params(mux, &bad, &index), MK_EINVAL);
    CHECK(strstr(mk_last_error(), "english") != NULL, "the message names the language");
    bad = p; bad.sample_rate = 0; bad.encoder_delay = 1024;
    EXPECT(mk_muxer_add_track_params(mux, &bad, &index), MK_EINVAL);
    bad = p; bad.media_type = MK_MEDIA_VIDEO; bad.codec = "h264"; bad.extradata = NULL; bad.extradata_size = 0;
    EXPECT(mk_muxer_add_track_params(mux, &bad, &index), MK_EINVAL);   /* no avcC (nor a size to wait for the first packet's) */
    CHECK(strstr(mk_last_error(), "avcC") != NULL, "the message names the missing avcC");
    bad = p;
    bad.struct_size = (uint32_t)offsetof(mk_codec_params, codec_tag);  /* a caller of the 0.1 header */
    bad.language = (const char *)0x1;                                  /* past its struct: never read */
    EXPECT(mk_muxer_add_track_params(mux, &bad, &index), MK_OK);
    CHECK(index == 0, "the first track added is track 0");
    p.language = "eng";
    p.encoder_delay = 2112;
    EXPECT(mk_muxer_add_track_params(mux, &p, &index), MK_OK);
    CHECK(index == 1, "the second track added is track 1");

    uint8_t frame[6] = {0x21, 0x10, 0x04, 0x60, 0x8c, 0x1c};
    mk_packet_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.pts = info.dts = MK_NOPTS_VALUE;
    info.duration = 1024;
    info.is_keyframe = 1;
    info.data = frame;
    info.size = sizeof frame;
    mk_packet *pkt = NULL;
    EXPECT(mk_packet_create(&pkt, &info), MK_OK);
    EXPECT(mk_muxer_write_packet(mux, 0, pkt), MK_EINVAL);     /* no timestamp at all */
    mk_packet_free(&pkt);
    for (int i = 0; i < 4; i++) {
        info.pts = i * 1024;                                  /* dts: taken as the pts */
        EXPECT(mk_packet_create(&pkt, &info), MK_OK);
        EXPECT(mk_muxer_write_packet(mux, i % 2, pkt), MK_OK);
        mk_packet_free(&pkt);
    }
    EXPECT(mk_muxer_write_packet(mux, 2, pkt), MK_EINVAL);     /* NULL packet */
    EXPECT(mk_muxer_add_track_params(mux, &p, &index), MK_ESTATE);   /* after the first write */
    EXPECT(mk_muxer_finish(mux), MK_OK);
    EXPECT(mk_muxer_add_track_params(mux, &p, &index), MK_ESTATE);
    mk_muxer_close(&mux);
    FILE *f = fopen(out, "rb");
    CHECK(f != NULL, "a finished muxer leaves its file");
    if (f) fclose(f);
    remove(out);

    /* Matroska states no encoder padding: refused, not dropped; a closed unfinished muxer leaves nothing. */
    EXPECT(mk_muxer_open(&mux, path, NULL), MK_OK);
    p.encoder_delay = 0;
    p.encoder_padding = 100;
    EXPECT(mk_muxer_add_track_params(mux, &p, &index), MK_EUNSUPPORTED);
    p.encoder_padding = 0;
    EXPECT(mk_muxer_add_track_params(mux, &p, &index), MK_OK);
    mk_muxer_close(&mux);
    f = fopen(path, "rb");
    CHECK(f == NULL, "an unfinished Matroska muxer leaves no file under the target name");
    if (f) fclose(f);
}

static void plugins(void) {
    int32_t n = mk_plugin_count();
    CHECK(n >= 1, "the FFmpeg plugin is found beside libmediakit");
    for (int32_t i = 0; i < n; i++) {
        mk_plugin_info p; p.struct_size = sizeof p;
        EXPECT(mk_plugin_get_info(i, &p), MK_OK);
        CHECK(p.name && p.path && p.codecs && p.version, "plugin strings");
    }
    EXPECT(mk_plugins_load("/etc/hostname"), MK_EPLUGIN);
}

/* Every packet's (track, pts, dts, size, first byte) folded into one checksum, and the count. */
static unsigned long long packet_digest(mk_demuxer *dmx, int *count) {
    unsigned long long h = 1469598103934665603ULL;
    mk_packet *pkt = NULL;
    *count = 0;
    while (mk_demuxer_read_packet(dmx, &pkt) == MK_OK) {
        mk_packet_info pi; pi.struct_size = sizeof pi;
        if (mk_packet_get_info(pkt, &pi) == MK_OK) {
            long long v[4] = { pi.track, pi.pts, pi.dts, (long long)pi.size };
            for (int i = 0; i < 4; i++) h = (h ^ (unsigned long long)v[i]) * 1099511628211ULL;
            for (size_t i = 0; i < pi.size; i++) h = (h ^ pi.data[i]) * 1099511628211ULL;
        }
        (*count)++;
        mk_packet_free(&pkt);
    }
    return h;
}

/* mk_io over a FILE *, seekable or not (fread in small pieces, as a pipe gives them). */
static int64_t io_read(void *user, uint8_t *buffer, size_t size) {
    return (int64_t)fread(buffer, 1, size > 777 ? 777 : size, (FILE *)user);
}
static int64_t io_seek(void *user, int64_t offset) { return fseek((FILE *)user, (long)offset, SEEK_SET) == 0 ? 0 : -1; }
static int64_t io_size(void *user) {
    FILE *f = user; long at = ftell(f); fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, at, SEEK_SET); return n;
}
static int64_t io_fail(void *user, uint8_t *buffer, size_t size) { (void)user; (void)buffer; (void)size; return -5; }

/* The same file by path, from memory and through callbacks (seekable, and read once) gives the
 * same packets; bad arguments are statuses with messages. */
static void sources(const char *good) {
    mk_demuxer *dmx = NULL;
    int n_ref = 0, n = 0;
    EXPECT(mk_demuxer_open(&dmx, good), MK_OK);
    unsigned long long ref = packet_digest(dmx, &n_ref);
    mk_demuxer_close(&dmx);
    CHECK(n_ref > 0, "the sample has packets");

    FILE *f = fopen(good, "rb");
    CHECK(f != NULL, "the sample opens");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *bytes = malloc((size_t)size);
    CHECK(bytes && fread(bytes, 1, (size_t)size, f) == (size_t)size, "the sample reads");
    EXPECT(mk_demuxer_open_memory(&dmx, bytes, (size_t)size), MK_OK);
    memset(bytes, 0, (size_t)size);            /* the library copied them */
    free(bytes);
    CHECK(packet_digest(dmx, &n) == ref && n == n_ref, "memory: the file's packets");
    mk_demuxer_close(&dmx);

    /* The demuxer chosen by name: the built-in one gives the probed one's packets, "" probes,
       an unknown name or a format the bytes are not is refused with no handle. */
    EXPECT(mk_demuxer_open_as(&dmx, good, "mp4"), MK_OK);
    CHECK(packet_digest(dmx, &n) == ref && n == n_ref, "open_as mp4: the file's packets");
    mk_demuxer_close(&dmx);
    EXPECT(mk_demuxer_open_as(&dmx, good, ""), MK_OK);
    CHECK(packet_digest(dmx, &n) == ref && n == n_ref, "open_as \"\": probed");
    mk_demuxer_close(&dmx);
    EXPECT(mk_demuxer_open_as(&dmx, good, "no-such-demuxer"), MK_ENOTFOUND);
    CHECK(dmx == NULL && strstr(mk_last_error(), "no-such-demuxer") != NULL, "an unknown demuxer name is named in the error");
    CHECK(mk_demuxer_open_as(&dmx, good, "matroska") != MK_OK && dmx == NULL, "the named demuxer refuses bytes of another format");
    EXPECT(mk_demuxer_open_as(NULL, good, "mp4"), MK_EINVAL);
    EXPECT(mk_demuxer_open_memory_as(&dmx, NULL, 10, "mp4"), MK_EINVAL);
    EXPECT(mk_demuxer_open_io_as(&dmx, NULL, NULL, "mp4"), MK_EINVAL);
    {
        /* A plugin's reader of the same file (libavformat's mov demuxer), when the FFmpeg plugin is loaded. */
        int plugin_formats = 0;
        mk_container_info ci; ci.struct_size = sizeof ci;
        for (int32_t i = 0; i < mk_container_count(); i++)
            if (mk_container_get_info(i, &ci) == MK_OK && ci.plugin[0]) plugin_formats++;
        if (plugin_formats > 0) {
            EXPECT(mk_demuxer_open_as(&dmx, good, "ffmpeg:mp4"), MK_OK);
            const char *name = NULL;
            EXPECT(mk_demuxer_container(dmx, &name), MK_OK);
            CHECK(name && strstr(name, "mp4") != NULL, "the plugin's mov,mp4 demuxer read it");
            packet_digest(dmx, &n);
            CHECK(n == n_ref, "the plugin's demuxer gives as many packets as the built-in one");
            mk_demuxer_close(&dmx);
        }
    }

    mk_io io; memset(&io, 0, sizeof io);
    io.struct_size = sizeof io;
    io.read = io_read; io.seek = io_seek; io.size = io_size; io.name = "callbacks";
    fseek(f, 0, SEEK_SET);
    EXPECT(mk_demuxer_open_io(&dmx, &io, f), MK_OK);
    CHECK(packet_digest(dmx, &n) == ref && n == n_ref, "seekable callbacks: the file's packets");
    mk_demuxer_close(&dmx);

    /* A stream read once: the sample's moov follows its media data, a layout that needs to go
     * back, so the open fails naming it (streams of other layouts: Tests/oracle/test_sources.py). */
    io.seek = NULL; io.size = NULL; io.name = NULL;
    fseek(f, 0, SEEK_SET);
    EXPECT(mk_demuxer_open_io(&dmx, &io, f), MK_EUNSUPPORTED);
    CHECK(strstr(mk_last_error(), "moov box comes after the media data") != NULL, "the error names the layout");
    CHECK(dmx == NULL, "a failed open sets *out to NULL");
    fclose(f);

    io.read = io_fail;
    EXPECT(mk_demuxer_open_io(&dmx, &io, NULL), MK_EIO);
    CHECK(dmx == NULL, "a failed open sets *out to NULL");
    io.read = NULL;
    EXPECT(mk_demuxer_open_io(&dmx, &io, NULL), MK_EINVAL);
    EXPECT(mk_demuxer_open_io(&dmx, NULL, NULL), MK_EINVAL);
    io.read = io_read; io.struct_size = 4;
    EXPECT(mk_demuxer_open_io(&dmx, &io, NULL), MK_EINVAL);
    EXPECT(mk_demuxer_open_memory(&dmx, NULL, 10), MK_EINVAL);
    EXPECT(mk_demuxer_open_memory(NULL, (const uint8_t *)"x", 1), MK_EINVAL);
    EXPECT(mk_demuxer_open_memory(&dmx, (const uint8_t *)"", 0), MK_EUNSUPPORTED);
}

/* The stream parser: misuse is a status; a pushed MPEG audio stream gives packets. */
static void stream_parser(void) {
    mk_stream_parser *sp = NULL;
    mk_stream_event ev; ev.struct_size = sizeof ev;
    EXPECT(mk_stream_parser_open(NULL, -1), MK_EINVAL);
    EXPECT(mk_stream_parser_push(NULL, (const uint8_t *)"x", 1, 0), MK_EINVAL);
    EXPECT(mk_stream_parser_next_event(NULL, &ev), MK_EINVAL);
    EXPECT(mk_stream_parser_finish(NULL), MK_EINVAL);
    EXPECT(mk_stream_parser_seek(NULL, 1.0, NULL, NULL, NULL), MK_EINVAL);
    EXPECT(mk_stream_parser_open(&sp, -1), MK_OK);
    EXPECT(mk_stream_parser_next_event(sp, &ev), MK_EAGAIN);
    EXPECT(mk_stream_parser_seek(sp, 1.0, NULL, NULL, NULL), MK_ESTATE);
    EXPECT(mk_stream_parser_push(sp, NULL, 5, 0), MK_EINVAL);
    mk_stream_event small; small.struct_size = 8;
    EXPECT(mk_stream_parser_next_event(sp, &small), MK_EINVAL);
    /* Ten MPEG-1 Layer III frames of 417 bytes (128 kbit/s, 44.1 kHz), silence after the header. */
    static uint8_t stream[417 * 10];
    memset(stream, 0, sizeof stream);
    for (int i = 0; i < 10; i++) {
        stream[i * 417] = 0xFF; stream[i * 417 + 1] = 0xFB; stream[i * 417 + 2] = 0x90; stream[i * 417 + 3] = 0x64;
    }
    for (size_t i = 0; i < sizeof stream; i += 100)
        EXPECT(mk_stream_parser_push(sp, stream + i, sizeof stream - i < 100 ? sizeof stream - i : 100, 0), MK_OK);
    EXPECT(mk_stream_parser_finish(sp), MK_OK);
    int packets = 0, bad = 0;
    while (mk_stream_parser_next_event(sp, &ev) == MK_OK)
        if (ev.kind == MK_STREAM_EVENT_PACKET) {
            if (ev.offset != packets * 417 || ev.size != 417 || ev.frames != 1152 || ev.data[0] != 0xFF) bad++;
            packets++;
        }
    CHECK(packets == 10 && bad == 0, "ten 417-byte frames come back as ten packets at their offsets");
    mk_stream_parser_close(&sp);
    CHECK(sp == NULL, "close sets the handle to NULL");
    mk_stream_parser_close(&sp);   /* harmless */

    /* Properties, conversions and every tag (issue 35): an ID3v2.3 tag (TIT2 "Hello", TPE1
     * "World") then the ten frames. Oracles: ISO/IEC 11172-3 (a 128 kbit/s 44.1 kHz Layer III
     * frame is 144 * 128000 / 44100 = 417 bytes unpadded, 1152 samples; the largest at that rate
     * is 320 kbit/s padded: 1045 bytes; mode 01 is joint stereo) and the ID3v2.3 frame layout. */
    static const uint8_t tag[] = { 'I', 'D', '3', 3, 0, 0, 0, 0, 0, 32,
        'T', 'I', 'T', '2', 0, 0, 0, 6, 0, 0, 0, 'H', 'e', 'l', 'l', 'o',
        'T', 'P', 'E', '1', 0, 0, 0, 6, 0, 0, 0, 'W', 'o', 'r', 'l', 'd' };
    mk_stream_properties props; memset(&props, 0, sizeof props); props.struct_size = sizeof props;
    EXPECT(mk_stream_parser_properties(NULL, &props), MK_EINVAL);
    EXPECT(mk_stream_parser_open(&sp, (int64_t)(sizeof tag + sizeof stream)), MK_OK);
    EXPECT(mk_stream_parser_properties(sp, NULL), MK_EINVAL);
    mk_stream_properties tiny; tiny.struct_size = 4;
    EXPECT(mk_stream_parser_properties(sp, &tiny), MK_EINVAL);
    EXPECT(mk_stream_parser_properties(sp, &props), MK_OK);
    CHECK(props.ready == 0 && props.data_offset == -1 && props.bit_rate == -1 && props.duration < 0 && props.codec[0] == 0
          && props.format_count == 0 && props.magic_cookie == NULL, "nothing is known before the first byte");
    int64_t v64 = 0; int32_t v32 = 0, est = 0;
    EXPECT(mk_stream_parser_packet_to_frame(sp, 1, &v64), MK_ESTATE);
    EXPECT(mk_stream_parser_byte_to_packet(sp, 100, &v64, NULL, NULL), MK_ESTATE);
    EXPECT(mk_stream_parser_push(sp, tag, sizeof tag, 0), MK_OK);
    int32_t ntags = -1;
    EXPECT(mk_stream_parser_tag_count(sp, NULL), MK_EINVAL);
    EXPECT(mk_stream_parser_tag_count(sp, &ntags), MK_OK);
    const char *key = NULL, *native = NULL, *value = NULL;
    CHECK(ntags == 2, "both text frames of the ID3v2 tag are tags (not only the title)");
    EXPECT(mk_stream_parser_tag_at(sp, 1, &key, &native, &value), MK_OK);
    CHECK(key && native && value && !strcmp(key, "artist") && !strcmp(native, "TPE1") && !strcmp(value, "World"), "the second tag is TPE1 = World");
    EXPECT(mk_stream_parser_tag_at(sp, 2, &key, &native, &value), MK_EINVAL);
    EXPECT(mk_stream_parser_attachment_count(sp, &v32), MK_OK);
    CHECK(v32 == 0, "no pictures");
    EXPECT(mk_stream_parser_chapter_count(sp, &v32), MK_OK);
    CHECK(v32 == 0, "no chapters");
    EXPECT(mk_stream_parser_push(sp, stream, sizeof stream, 0), MK_OK);
    EXPECT(mk_stream_parser_finish(sp), MK_OK);
    while (mk_stream_parser_next_event(sp, &ev) == MK_OK) {}
    EXPECT(mk_stream_parser_properties(sp, &props), MK_OK);
    CHECK(props.ready == 1 && !strcmp(props.file_format, "mp3") && !strcmp(props.codec, "mp3") && props.sample_rate == 44100
          && props.channels == 2 && props.frames_per_packet == 1152 && props.channel_mask == 0x3, "the format, as the header states it");
    CHECK(props.data_offset == (int64_t)sizeof tag, "the data starts after the tag");
    CHECK(props.audio_data_byte_count == 4170 && !props.byte_count_estimated && props.audio_data_packet_count == 10
          && !props.packet_count_estimated, "every packet parsed: exact counts");
    CHECK(props.maximum_packet_size == 417 && props.packet_size_upper_bound == 1045 && props.average_bytes_per_packet == 417.0,
          "packet sizes: 417 seen, 1045 allowed");
    CHECK(props.bit_rate == 128000 && props.bit_rate_exact == 1, "128 kbit/s, constant");
    CHECK(props.duration > 11520.0 / 44100 - 1e-9 && props.duration < 11520.0 / 44100 + 1e-9 && !props.duration_estimated,
          "ten frames of 1152 samples");
    CHECK(props.priming_frames == -1 && props.packets_parsed == 10 && props.format_count == 1, "no LAME tag, one layer");
    mk_stream_format fmt; memset(&fmt, 0, sizeof fmt); fmt.struct_size = sizeof fmt;
    EXPECT(mk_stream_parser_format_at(sp, 0, &fmt), MK_OK);
    CHECK(!strcmp(fmt.codec, "mp3") && fmt.sample_rate == 44100 && fmt.channels == 2, "the one layer is the data format");
    EXPECT(mk_stream_parser_format_at(sp, 1, &fmt), MK_EINVAL);
    EXPECT(mk_stream_parser_packet_to_frame(sp, 3, &v64), MK_OK);
    CHECK(v64 == 3 * 1152, "packet 3 starts at sample 3456");
    EXPECT(mk_stream_parser_frame_to_packet(sp, 3 * 1152 + 7, &v64, &v32), MK_OK);
    CHECK(v64 == 3 && v32 == 7, "sample 3463 is the 8th of packet 3");
    EXPECT(mk_stream_parser_packet_to_byte(sp, 4, &v64, &est), MK_OK);
    CHECK(v64 == (int64_t)sizeof tag + 4 * 417 && est == 0, "packet 4 is at its offset, exactly");
    EXPECT(mk_stream_parser_byte_to_packet(sp, (int64_t)sizeof tag + 5 * 417 + 10, &v64, &v32, &est), MK_OK);
    CHECK(v64 == 5 && v32 == 10 && est == 0, "a byte inside packet 5");
    EXPECT(mk_stream_parser_byte_to_packet(sp, 3, &v64, NULL, NULL), MK_ESTATE);   /* inside the tag */
    EXPECT(mk_stream_parser_packet_to_frame(sp, 1, NULL), MK_EINVAL);
    mk_stream_parser_close(&sp);
}

/* The container catalogue and the grown backend listing, the orientation calls and the session's
 * recovery records: refused arguments, old struct sizes, frames that must be freed. */
static void listings_and_orientation(const char *good) {
    mk_container_info ci; ci.struct_size = sizeof ci;
    int32_t nc = mk_container_count(), muxers = 0, sinks = 0, plugin_demuxers = 0, plugin_muxers = 0, last_kind = MK_CONTAINER_DEMUXER;
    CHECK(nc >= 8, "the catalogue lists the demuxers and the muxers");
    for (int32_t i = 0; i < nc; i++) {
        EXPECT(mk_container_get_info(i, &ci), MK_OK);
        CHECK(ci.name && ci.name[0] && ci.description && ci.extensions && ci.mime_types && ci.plugin, "container strings");
        CHECK(ci.codecs && ci.options, "the 0.3 fields are set");
        if (ci.plugin[0]) {
            /* A plugin's demuxer or muxer (plugin ABI 2.4 / 2.5): after the built-in ones of its
             * kind, named "plugin:format". */
            if (ci.kind == MK_CONTAINER_DEMUXER) plugin_demuxers++; else plugin_muxers++;
            CHECK((ci.kind == MK_CONTAINER_DEMUXER || ci.kind == MK_CONTAINER_MUXER) && strncmp(ci.name, ci.plugin, strlen(ci.plugin)) == 0
                  && ci.name[strlen(ci.plugin)] == ':', "a plugin format is a demuxer or a muxer named plugin:format");
            if (strcmp(ci.name, "ffmpeg:avi") == 0) CHECK(strstr(ci.extensions, "avi") != NULL, "libavformat's avi lists .avi");
        } else {
            CHECK(ci.extensions[0], "a built-in format lists its extensions");
            CHECK(plugin_demuxers == 0 || ci.kind != MK_CONTAINER_DEMUXER, "the built-in demuxers come before the plugins'");
            CHECK(plugin_muxers == 0 || ci.kind != MK_CONTAINER_MUXER, "the built-in muxers come before the plugins'");
        }
        CHECK(ci.kind >= last_kind, "demuxers, then muxers, then frame sinks");
        last_kind = ci.kind;
        if (ci.kind == MK_CONTAINER_FRAME_SINK) {
            sinks++;
            CHECK(ci.codecs[0] == 0 && ci.options[0] == 0, "a frame sink lists no codecs or options");
            CHECK(strcmp(ci.name, "pcm") == 0 || strcmp(ci.name, "wav") == 0 || strcmp(ci.name, "rawvideo") == 0
                  || strcmp(ci.name, "y4m") == 0, "the frame sinks are pcm, wav, rawvideo and y4m");
            if (strcmp(ci.name, "y4m") == 0) CHECK(strcmp(ci.extensions, "y4m") == 0, "y4m is written as .y4m");
        } else if (ci.kind == MK_CONTAINER_MUXER) {
            muxers++;
            /* A plugin muxer answers per codec when a track is added (its list may be empty). */
            CHECK(ci.plugin[0] || ci.codecs[0], "a built-in muxer lists the codecs it carries");
            if (strcmp(ci.name, "webm") == 0) CHECK(strstr(ci.codecs, "aac") == NULL, "WebM carries no AAC");
            if (strcmp(ci.name, "mp4") == 0) CHECK(strstr(ci.options, "layout") != NULL, "MP4 takes the layouts");
        } else {
            CHECK(ci.kind == MK_CONTAINER_DEMUXER, "a container is a demuxer or a muxer");
            CHECK(ci.codecs[0] == 0 && ci.options[0] == 0, "a demuxer lists no codecs or options");
        }
    }
    CHECK(muxers >= 4, "mp4, matroska, webm and ogg are written");
    CHECK(sinks == 4, "the four raw outputs of mk_decode_file are listed");
    {
        /* The FFmpeg plugin (loaded for these tests) adds libavformat's demuxers to the listing. */
        int ffmpeg_loaded = 0;
        for (int32_t i = 0; i < mk_plugin_count(); i++) {
            mk_plugin_info pi; pi.struct_size = sizeof pi;
            if (mk_plugin_get_info(i, &pi) == MK_OK && strcmp(pi.name, "ffmpeg") == 0) ffmpeg_loaded = 1;
        }
        CHECK(!ffmpeg_loaded || plugin_demuxers > 100, "the FFmpeg plugin's libavformat demuxers are listed");
        CHECK(!ffmpeg_loaded || plugin_muxers > 50, "the FFmpeg plugin's libavformat muxers are listed");
    }
    /* A caller built against the 0.2 header (up to mime_types) gets those fields, nothing past them. */
    {
        unsigned char raw[sizeof(mk_container_info) + 16];
        memset(raw, 0xAB, sizeof raw);
        mk_container_info *old = (mk_container_info *)raw;
        old->struct_size = (uint32_t)offsetof(mk_container_info, codecs);
        EXPECT(mk_container_get_info(0, old), MK_OK);
        CHECK(old->name && old->mime_types, "the 0.2 fields are filled");
        CHECK(raw[offsetof(mk_container_info, codecs)] == 0xAB, "nothing is written past a 0.2 struct");
    }
    EXPECT(mk_container_get_info(nc, &ci), MK_EINVAL);
    EXPECT(mk_container_get_info(-1, &ci), MK_EINVAL);
    EXPECT(mk_container_get_info(0, NULL), MK_EINVAL);
    ci.struct_size = 4;
    EXPECT(mk_container_get_info(0, &ci), MK_EINVAL);

    /* mk_backend_info grew in 0.2: a 0.1-sized struct is filled only up to its struct_size. */
    int32_t nb = mk_backend_count(), encoders = 0, converter = -1, decoder = -1;
    for (int32_t i = 0; i < nb; i++) {
        mk_backend_info bi;
        memset(&bi, 0xAB, sizeof bi);
        bi.struct_size = (uint32_t)offsetof(mk_backend_info, sample_formats);
        EXPECT(mk_backend_get_info(i, &bi), MK_OK);
        CHECK(bi.max_channels == (int32_t)0xABABABAB && bi.scales == (int32_t)0xABABABAB,
              "a 0.1-sized mk_backend_info is filled only up to its struct_size");
        bi.struct_size = sizeof bi;
        EXPECT(mk_backend_get_info(i, &bi), MK_OK);
        if (bi.kind == MK_BACKEND_ENCODER && bi.media_type == MK_MEDIA_VIDEO) {
            /* a video encoder (plugin ABI 2.3): no audio capabilities */
            CHECK(bi.sample_format_count == 0 && bi.max_channels == 0, "a video encoder lists no sample formats");
        } else if (bi.kind == MK_BACKEND_ENCODER) {
            encoders++;
            CHECK(bi.sample_format_count > 0 && bi.sample_formats != NULL && bi.max_channels >= 1
                  && (bi.sample_rate_count == 0) == (bi.sample_rates == NULL)
                  && (bi.channel_mask_count == 0) == (bi.channel_masks == NULL)
                  && bi.min_bit_rate <= bi.max_bit_rate, "what an encoder takes");
        } else {
            CHECK(bi.sample_format_count == 0 && bi.sample_formats == NULL && bi.max_channels == 0,
                  "only encoders list what they take");
        }
        if (bi.kind == MK_BACKEND_PICTURE_CONVERTER && converter < 0) converter = i;
        if (bi.kind == MK_BACKEND_DECODER && decoder < 0) decoder = i;
    }
    CHECK(encoders >= 1 && converter >= 0 && decoder >= 0, "the plugins register encoders, a decoder and a converter");
    int32_t yes = -1;
    EXPECT(mk_backend_converts(converter, MK_PIXEL_YUV420P, MK_PIXEL_NV12, &yes), MK_OK);
    CHECK(yes == 1, "swscale converts yuv420p to nv12");
    EXPECT(mk_backend_converts(converter, 9999, MK_PIXEL_NV12, &yes), MK_OK);
    CHECK(yes == 0, "an unknown pixel format is not converted");
    EXPECT(mk_backend_converts(decoder, MK_PIXEL_YUV420P, MK_PIXEL_NV12, &yes), MK_EINVAL);
    EXPECT(mk_backend_converts(nb, MK_PIXEL_YUV420P, MK_PIXEL_NV12, &yes), MK_EINVAL);
    EXPECT(mk_backend_converts(converter, MK_PIXEL_YUV420P, MK_PIXEL_NV12, NULL), MK_EINVAL);

    /* Orientations. */
    mk_orientation o;
    const int32_t identity[9] = {0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000};
    EXPECT(mk_orientation_from_matrix(NULL, &o), MK_EINVAL);
    EXPECT(mk_orientation_from_matrix(identity, NULL), MK_EINVAL);
    EXPECT(mk_orientation_from_matrix(identity, &o), MK_OK);
    CHECK(o.transposed == 0 && o.hflip == 0 && o.vflip == 0, "the identity matrix is upright");
    EXPECT(mk_orientation_clockwise(45, &o), MK_EINVAL);
    EXPECT(mk_orientation_clockwise(90, NULL), MK_EINVAL);
    EXPECT(mk_orientation_clockwise(90, &o), MK_OK);
    CHECK(o.transposed == 1 && o.hflip == 1 && o.vflip == 0, "a clockwise quarter turn is {1, 1, 0}");

    /* mk_frame_orient: a new frame the caller frees; the source stays the caller's. */
    mk_demuxer *dmx = NULL;
    mk_async_decode_session *video = NULL, *audio = NULL;
    mk_frame *frm = NULL, *turned = NULL;
    EXPECT(mk_demuxer_open(&dmx, good), MK_OK);
    EXPECT(mk_async_decode_session_open(&video, dmx, 0, NULL), MK_OK);
    EXPECT(mk_async_decode_session_read_frame(video, &frm), MK_OK);
    EXPECT(mk_frame_orient(frm, &o, NULL), MK_EINVAL);
    EXPECT(mk_frame_orient(frm, NULL, &turned), MK_EINVAL);
    CHECK(turned == NULL, "a failed orient sets *out to NULL");
    EXPECT(mk_frame_orient(NULL, &o, &turned), MK_EINVAL);
    mk_orientation bad = {2, 0, 0};
    EXPECT(mk_frame_orient(frm, &bad, &turned), MK_EINVAL);
    EXPECT(mk_frame_orient(frm, &o, &turned), MK_OK);
    mk_frame_info a, b; a.struct_size = b.struct_size = sizeof a;
    EXPECT(mk_frame_get_info(frm, &a), MK_OK);
    mk_frame_free(&frm);                                      /* the turned frame has its own memory */
    EXPECT(mk_frame_get_info(turned, &b), MK_OK);
    CHECK(b.width == a.height && b.height == a.width && b.format == a.format && b.pts == a.pts, "a quarter turn swaps the sides");
    size_t need = 0;
    EXPECT(mk_frame_pack(turned, MK_PACK_NV12, NULL, 0, &need), MK_OK);
    uint8_t *buf = malloc(need);
    EXPECT(mk_frame_pack(turned, MK_PACK_NV12, buf, need, &need), MK_OK);
    free(buf);
    mk_frame_free(&turned);
    CHECK(turned == NULL, "free sets the turned frame to NULL");

    /* The MP4 muxer options: checked, MP4's only, mk_muxer_open's only. */
    mk_muxer *mux = NULL;
    mk_muxer_settings ms;
    mk_muxer_default_settings(&ms);
    CHECK(ms.chunk_seconds == 0.5 && ms.movie_time_scale == 1000 && ms.write_mfra == 1 && ms.user_data == NULL,
          "the MP4 options' defaults");
    ms.chunk_seconds = 0;
    EXPECT(mk_muxer_open(&mux, "/tmp/mk-capi-options.mp4", &ms), MK_EINVAL);
    mk_muxer_default_settings(&ms);
    ms.reserved_moov_bytes = (int64_t)1 << 40;
    EXPECT(mk_muxer_open(&mux, "/tmp/mk-capi-options.mp4", &ms), MK_EINVAL);
    mk_muxer_default_settings(&ms);
    static const uint8_t not_udta[12] = {0, 0, 0, 12, 'm', 'e', 't', 'a', 0, 0, 0, 0};
    ms.user_data = not_udta;
    ms.user_data_size = sizeof not_udta;
    EXPECT(mk_muxer_open(&mux, "/tmp/mk-capi-options.mp4", &ms), MK_EINVAL);
    CHECK(strstr(mk_last_error(), "udta") != NULL, "the message names the udta box");
    ms.user_data_size = 0;
    ms.user_data = NULL;
    ms.movie_time_scale = 600;
    EXPECT(mk_muxer_open(&mux, "/tmp/mk-capi-options.mkv", &ms), MK_EINVAL);
    EXPECT(mk_remux(good, "/tmp/mk-capi-options.mp4", &ms), MK_EINVAL);
    CHECK(mux == NULL, "nothing opened");
    EXPECT(mk_muxer_open(&mux, "/tmp/mk-capi-options.mp4", &ms), MK_OK);
    const char *writing = NULL;
    EXPECT(mk_muxer_in_progress_path(mux, NULL), MK_EINVAL);
    EXPECT(mk_muxer_in_progress_path(mux, &writing), MK_OK);
    CHECK(writing != NULL && strstr(writing, "mk-capi-options.mp4") != NULL && strcmp(writing, "/tmp/mk-capi-options.mp4") != 0,
          "an unfinished progressive MP4 is written under a temporary name beside the target");
    mk_muxer_close(&mux);                                     /* unfinished: nothing is left */
    EXPECT(mk_muxer_in_progress_path(NULL, &writing), MK_EINVAL);
    mk_muxer_default_settings(&ms);
    EXPECT(mk_muxer_open(&mux, "/tmp/mk-capi-options.mkv", &ms), MK_OK);
    EXPECT(mk_muxer_in_progress_path(mux, &writing), MK_EUNSUPPORTED);
    mk_muxer_close(&mux);

    /* Audio converter reset and counts. */
    mk_audio_converter *ac = NULL;
    mk_audio_format af; memset(&af, 0, sizeof af);
    af.struct_size = sizeof af; af.sample_format = MK_SAMPLES_S16; af.sample_rate = 44100; af.channels = 2;
    mk_audio_format bf = af; bf.sample_rate = 48000;
    mk_audio_converter_settings as; mk_audio_converter_default_settings(&as);
    as.prime_leading = -1;
    EXPECT(mk_audio_converter_open(&ac, &af, &bf, &as), MK_EINVAL);
    as.prime_leading = 0;
    EXPECT(mk_audio_converter_open(&ac, &af, &bf, &as), MK_OK);
    int16_t pcm[2 * 441]; memset(pcm, 0, sizeof pcm);
    const void *in[1] = {pcm};
    EXPECT(mk_audio_converter_push(ac, in, 441), MK_OK);
    mk_audio_converter_stats st; st.struct_size = sizeof st;
    EXPECT(mk_audio_converter_get_stats(ac, &st), MK_OK);
    CHECK(st.input_frames == 441 && st.latency > 0 && st.output_frames < 480, "the counts before a flush");
    EXPECT(mk_audio_converter_flush(ac), MK_OK);
    EXPECT(mk_audio_converter_push(ac, in, 441), MK_ESTATE);
    EXPECT(mk_audio_converter_reset(ac), MK_OK);
    int32_t waiting = -1;
    EXPECT(mk_audio_converter_read(ac, NULL, 0, &waiting), MK_EAGAIN);
    EXPECT(mk_audio_converter_get_stats(ac, &st), MK_OK);
    CHECK(st.input_frames == 0 && st.output_frames == 0, "reset clears the counts and what waited");
    EXPECT(mk_audio_converter_push(ac, in, 441), MK_OK);
    st.struct_size = 4;
    EXPECT(mk_audio_converter_get_stats(ac, &st), MK_EINVAL);
    EXPECT(mk_audio_converter_get_stats(ac, NULL), MK_EINVAL);
    mk_audio_converter_close(&ac);
    EXPECT(mk_audio_converter_reset(NULL), MK_EINVAL);

    /* mk_decode_file's mk-decode choices: refused values name the field. */
    mk_decode_settings ds;
    mk_decode_default_settings(&ds);
    CHECK(ds.seek_seconds < 0 && ds.max_video_frames == 0 && ds.sample_format == 0 && ds.resample_quality == MK_RESAMPLE_MEDIUM,
          "mk-decode's choices default to none");
    ds.sample_format = MK_SAMPLES_S16P;
    EXPECT(mk_decode_file(good, "/tmp/mk-capi-choices.pcm", NULL, &ds), MK_EINVAL);
    CHECK(strstr(mk_last_error(), "planar") != NULL, "a planar sample format is refused by name");
    mk_decode_default_settings(&ds);
    ds.max_video_frames = -1;
    EXPECT(mk_decode_file(good, NULL, "/tmp/mk-capi-choices.nv12", &ds), MK_EINVAL);
    mk_decode_default_settings(&ds);
    ds.resample_quality = 9;
    EXPECT(mk_decode_file(good, "/tmp/mk-capi-choices.pcm", NULL, &ds), MK_EINVAL);
    FILE *left = fopen("/tmp/mk-capi-choices.pcm", "rb");
    CHECK(left == NULL, "a refused decode writes nothing");
    if (left) fclose(left);

    /* Recovery records: none in an undamaged file. */
    mk_recovery_info ri; ri.struct_size = sizeof ri;
    EXPECT(mk_async_decode_session_get_recovery(video, 0, &ri), MK_EINVAL);
    EXPECT(mk_async_decode_session_get_recovery(video, -1, &ri), MK_EINVAL);
    EXPECT(mk_async_decode_session_get_recovery(video, 0, NULL), MK_EINVAL);
    EXPECT(mk_async_decode_session_get_recovery(NULL, 0, &ri), MK_EINVAL);
    ri.struct_size = 4;
    EXPECT(mk_async_decode_session_get_recovery(video, 0, &ri), MK_EINVAL);
    mk_async_decode_session_close(&video);

    /* An audio frame cannot be turned. */
    EXPECT(mk_async_decode_session_open(&audio, dmx, 1, NULL), MK_OK);
    EXPECT(mk_async_decode_session_read_frame(audio, &frm), MK_OK);
    EXPECT(mk_frame_orient(frm, &o, &turned), MK_EINVAL);
    CHECK(turned == NULL, "nothing to free after an error");
    mk_frame_free(&frm);
    mk_async_decode_session_close(&audio);
    mk_demuxer_close(&dmx);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s GOOD.mp4 CORRUPT.mp4 SCRATCH_OUT.mp4\n", argv[0]);
        return 2;
    }
    null_handles();
    missing_and_corrupt(argv[2]);
    wrong_order(argv[1]);
    muxer_misuse(argv[1], argv[3]);
    muxer_params_misuse(argv[3]);
    plugins();
    sources(argv[1]);
    stream_parser();
    listings_and_orientation(argv[1]);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
