/*
 * mediakit.h — the C API of MediaKit (libmediakit).
 *
 * Read a media file track by track, decode its audio to PCM and its video to
 * YUV through codec plugins, and write the results. Build with
 *
 *     cc app.c $(pkg-config --cflags --libs mediakit)
 *
 * Conventions (the same for every function):
 *
 *  - Handles are opaque (mk_demuxer, mk_packet, mk_decode_session, mk_frame). They are
 *    created by an mk_*_open / read / receive call and released by the matching
 *    mk_*_close / mk_*_free call, which takes the ADDRESS of the handle and sets it
 *    to NULL, so a second close is harmless.
 *  - Every call returns an mk_status: MK_OK (0) or a negative code. MK_EAGAIN and
 *    MK_EOF are flow control, not failures; MK_ETRUNCATED is a warning (the file is
 *    cut short; what it holds was returned or written). On any other error, nothing is
 *    allocated and nothing must be freed, and mk_last_error() describes the
 *    failure on the calling thread.
 *  - A NULL, closed or foreign handle is reported as MK_EINVAL, never a crash.
 *  - Strings and pointers returned in info structs are BORROWED: they stay valid
 *    until the handle they came from is closed or freed. Copy what you keep.
 *  - Threads: every function may be called from any thread, but one handle must
 *    not be used by two threads at the same time. Different handles are
 *    independent. Frames and packets may be freed on any thread.
 *
 * The whole decode loop:
 *
 *     mk_demuxer *dmx = NULL;
 *     mk_decode_session *dec = NULL;
 *     mk_packet *pkt = NULL;
 *     mk_frame *frm = NULL;
 *     if (mk_demuxer_open(&dmx, "movie.mp4") != MK_OK) { puts(mk_last_error()); return 1; }
 *     int32_t track = 0;                        // pick one with mk_demuxer_track()
 *     mk_decode_session_settings s;
 *     mk_decode_session_default_settings(&s);
 *     if (mk_decode_session_open(&dec, dmx, track, &s) != MK_OK) { ... }
 *     mk_status st;
 *     while ((st = mk_demuxer_read_track_packet(dmx, track, &pkt)) == MK_OK) {
 *         while ((st = mk_decode_session_send_packet(dec, pkt)) == MK_EAGAIN) {
 *             while (mk_decode_session_receive_frame(dec, &frm) == MK_OK) { ...; mk_frame_free(&frm); }
 *         }                                      // (never happens if you always receive)
 *         mk_packet_free(&pkt);
 *         if (st != MK_OK) break;
 *         while ((st = mk_decode_session_receive_frame(dec, &frm)) == MK_OK) {
 *             mk_frame_info fi;
 *             mk_frame_get_info(frm, &fi);       // planes, strides, format, pts ...
 *             mk_frame_free(&frm);
 *         }
 *         if (st != MK_EAGAIN) break;            // an error
 *     }
 *     if (st == MK_ETRUNCATED) {                 // the file is cut short: a warning, then
 *         fprintf(stderr, "warning: %s\n", mk_last_error());
 *         st = MK_EOF;                           // the end, as ffmpeg decodes it
 *     }
 *     if (st == MK_EOF) {                        // end of the track: drain
 *         mk_decode_session_send_packet(dec, NULL);
 *         while ((st = mk_decode_session_receive_frame(dec, &frm)) == MK_OK) {
 *             ...
 *             mk_frame_free(&frm);
 *         }
 *     }                                          // st == MK_EOF: fully drained
 *     mk_decode_session_close(&dec);
 *     mk_demuxer_close(&dmx);
 */
#ifndef MEDIAKIT_H
#define MEDIAKIT_H

/* The API is split per object (mediakit/<object>.h); each header compiles on its own. */
#include "base.h"
#include "registry.h"
#include "codec_params.h"
#include "demuxer.h"
#include "frame.h"
#include "decoder.h"
#include "muxer.h"
#include "session.h"
#include "stream_parser.h"
#include "audio_converter.h"
#include "encoder.h"
#include "video_encoder.h"
#include "writer.h"
#include "metadata.h"
#include "tags.h"

#endif /* MEDIAKIT_H */
