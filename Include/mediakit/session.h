/*
 * mediakit/session.h - part of the C API of MediaKit (libmediakit): mk_async_decode_session, decoding
 * on its own thread, with callbacks: Swift's AsyncDecodeSession, Python's mediakit.AsyncDecodeSession
 * (mk_session before 0.2).
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_SESSION_H
#define MEDIAKIT_SESSION_H

#include "base.h"
#include "demuxer.h"
#include "decoder.h"
#include "frame.h"
#include "codec_params.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A decode session: one track of a demuxer (or the packets the caller hands over:
 *  mk_async_decode_session_open_packets) decoded on a thread the library owns, as the
 *  iOS video decoder (VTDecompressionSession) decodes on its own queue. The frames come out in
 *  presentation order, trimmed as mk_decode_session's are (edit list, gapless audio), either one at a
 *  time from mk_async_decode_session_read_frame() or through callbacks (mk_async_decode_session_start()). Decoding runs
 *  ahead of the consumer by at most `queue_frames` frames (then the session's thread waits:
 *  back-pressure, memory stays flat). Damaged data is stepped over: the decoder is rebuilt
 *  (once per damage) and the packets of the current GOP sent to it again, the output of
 *  those already output discarded; the session gives up (an error) after
 *  the `max_failed_packets`th consecutive rejected packet counted from a key frame (damage
 *  between key frames costs its GOP, as in ffmpeg) or the `max_rebuilds`th consecutive failed
 *  rebuild (a failed rebuild is tried again on each later packet). A decoder that reports
 *  MK_EINVALIDATED (a device lost) is rebuilt at once and sent the packet again: no damage.
 *  mk_async_decode_session_seek() is sample-accurate.
 *
 *      mk_async_decode_session *s = NULL;
 *      if (mk_async_decode_session_open(&s, dmx, track, NULL) != MK_OK) { puts(mk_last_error()); ... }
 *      mk_frame *f = NULL;
 *      mk_status st;
 *      while ((st = mk_async_decode_session_read_frame(s, &f)) == MK_OK) { ...; mk_frame_free(&f); }
 *      if (st != MK_EOF) puts(mk_last_error());  // a decoding error
 *      mk_async_decode_session_close(&s);
 *
 *  Threads: the functions below may be called from any thread, also from the session's
 *  callbacks (except mk_async_decode_session_close). */
typedef struct mk_async_decode_session mk_async_decode_session;

/** How to create a session. Fill with mk_async_decode_session_default_settings() first. */
typedef struct mk_async_decode_session_settings {
    uint32_t struct_size;      /**< sizeof(mk_async_decode_session_settings) */
    const char *backend;       /**< a backend or plugin name to insist on; NULL: by priority
                                    (default). Borrowed for the open call */
    int32_t threads;           /**< decoder threads; 0 = every core. Default 0 */
    int32_t trim;              /**< MK_TRIM_GAPLESS (default), MK_TRIM_FFMPEG or MK_TRIM_NONE */
    int32_t recovery;          /**< 1: step over damaged data (default); 0: the decoder's first
                                    error ends the session */
    int32_t max_failed_packets;/**< the session gives up at this many consecutive rejected packets,
                                    counted from the first key frame among them. Default 20 */
    int32_t max_rebuilds;      /**< the session gives up at this many consecutive failed decoder
                                    rebuilds (each tried on a later packet). Default 5 */
    int32_t queue_frames;      /**< frames decoded ahead of the consumer at most (>= 1). Default 8 */
} mk_async_decode_session_settings;

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_async_decode_session_default_settings(mk_async_decode_session_settings *settings);

/** Creates a session decoding track `track` of `demuxer`. The session reads the demuxer on
 *  its own thread from now on: do not call mk_demuxer_* functions on it (other than
 *  mk_demuxer_close) until the session is closed. Closing the demuxer first is allowed: the
 *  session keeps what it needs. Nothing is decoded before the first mk_async_decode_session_read_frame()
 *  or mk_async_decode_session_start(). settings may be NULL (defaults). On success *out must be closed with
 *  mk_async_decode_session_close(). Errors: those of mk_decode_session_open, MK_EINVAL (bad settings: a zero
 *  queue_frames, negative limits, an unknown trim). */
mk_status mk_async_decode_session_open(mk_async_decode_session **out, mk_demuxer *demuxer, int32_t track, const mk_async_decode_session_settings *settings);

/** Creates a session that decodes the packets the caller hands over with
 *  mk_async_decode_session_decode() (VTDecompressionSessionDecodeFrame with the asynchronous
 *  flag), of track `track` of `demuxer`: the track's facts are copied (codec, edit list, gapless
 *  trims); the demuxer is not kept or read (the caller reads it, on any thread, and may close
 *  it first). The frames come out as from mk_async_decode_session_open's session, in
 *  presentation order (mk_async_decode_session_read_frame or callbacks), with the same
 *  recovery rules. At most `queue_frames` packets wait to be decoded (and as many frames for
 *  the consumer). settings may be NULL (defaults). On success *out must be closed with
 *  mk_async_decode_session_close(). Errors: as mk_async_decode_session_open. */
mk_status mk_async_decode_session_open_packets(mk_async_decode_session **out, mk_demuxer *demuxer, int32_t track,
                                               const mk_async_decode_session_settings *settings);

/** The same for packets described by codec parameters rather than a demuxer's track (packets
 *  made with mk_packet_create; their `track` is ignored), as mk_decode_session_open_params: no edit
 *  list applies. `params` is borrowed for the call. On success *out must be closed with
 *  mk_async_decode_session_close(). Errors: those of mk_decode_session_open_params, MK_EINVAL (bad
 *  settings). */
mk_status mk_async_decode_session_open_params(mk_async_decode_session **out, const mk_codec_params *params,
                                              const mk_async_decode_session_settings *settings);

/** Hands one packet over to a session made with mk_async_decode_session_open_packets or
 *  _open_params and returns once it is queued: the session's thread decodes it and its frames
 *  reach the consumer in presentation order. `packet` is BORROWED for the call (copied: free it
 *  when you like). It waits only while `queue_frames` packets wait to be decoded; no consumer
 *  started yet (no mk_async_decode_session_start or _read_frame), nothing is decoded, so a call
 *  then waits for one once the queue is full. NULL ends the stream: the decoder's delayed
 *  frames, then the end (the `end` callback, MK_EOF from _read_frame); mk_async_decode_session_seek
 *  starts a new stream. Call it from one thread at a time (the packets' order). A decoding error
 *  goes to the consumer (the `error` callback, or _read_frame's status) and is returned by the
 *  next call too. Errors: MK_EINVAL (NULL session, a packet of another track), MK_ESTATE (a
 *  session that reads its own demuxer, after the NULL packet, after close), the error that
 *  stopped the decoding (MK_EDATA ...). */
mk_status mk_async_decode_session_decode(mk_async_decode_session *session, const mk_packet *packet);

/** Waits until every packet (and flush, and the end) handed over so far is decoded and its
 *  frames handed over (VTDecompressionSessionWaitForAsynchronousFrames): with callbacks, until
 *  they have returned (the flush completions, `end` and `error` queued meanwhile too); with
 *  mk_async_decode_session_read_frame, until the frames are queued for it (read them on another
 *  thread meanwhile when more than queue_frames come). Returns at once when no consumer was
 *  started. From one of the session's callbacks (which it would wait for) it returns MK_ESTATE
 *  at once. Errors: MK_EINVAL, MK_ESTATE. */
mk_status mk_async_decode_session_wait_frames(mk_async_decode_session *session);

/** One recovery from damaged data, as the recovery callback gets it (borrowed for the call) or
 *  mk_async_decode_session_get_recovery() gives it. */
typedef struct mk_recovery_info {
    uint32_t struct_size;      /**< sizeof(mk_recovery_info): of the library in a callback; set by
                                    the caller for mk_async_decode_session_get_recovery() */
    int64_t pts;               /**< the rejected packet's pts (track time base), MK_NOPTS_VALUE for
                                    an error while receiving a frame */
    int64_t position;          /**< the rejected packet's byte offset in the file, -1 if unknown */
    int32_t rebuilt;           /**< 1 when the decoder was rebuilt and primed with the GOP */
    int32_t frames_lost;       /**< frames not output because of it */
    mk_status status;          /**< the decoder's error (MK_EDATA, MK_EFAIL ...) */
    const char *message;       /**< the decoder's message */
} mk_recovery_info;

/** The callbacks of mk_async_decode_session_start(). They are called one at a time, in order (frames in
 *  presentation order, each recovery where it happened, then `end` or `error` last), on a
 *  thread the library owns, never on the caller's. `user` is mk_async_decode_session_start's. */
typedef struct mk_async_decode_session_callbacks {
    uint32_t struct_size;      /**< sizeof(mk_async_decode_session_callbacks) */
    /** Required. A presented frame. *frame is the callee's: free it with mk_frame_free(), on
     *  any thread, now or later (a frame kept holds the decoder's memory). At most
     *  queue_frames callbacks wait at a time: a slow callback slows the decoding. */
    void (*frame)(void *user, mk_frame *frame);
    /** Optional (NULL). A recovery from damaged data; `info` is borrowed for the call. */
    void (*recovery)(void *user, const mk_recovery_info *info);
    /** Optional. The decoding failed (the session gives up: nothing follows but what a
     *  mk_async_decode_session_seek() starts again); `message` is borrowed for the call. */
    void (*error)(void *user, mk_status status, const char *message);
    /** Optional. The end of the track: every frame was delivered. */
    void (*end)(void *user);
} mk_async_decode_session_callbacks;

/** Starts decoding and delivering frames through `callbacks` (copied; `user` is passed to
 *  each and must stay valid until mk_async_decode_session_close). Errors: MK_EINVAL (NULL, small
 *  struct_size, no frame callback), MK_ESTATE (already started, or mk_async_decode_session_read_frame
 *  was used). */
mk_status mk_async_decode_session_start(mk_async_decode_session *session, const mk_async_decode_session_callbacks *callbacks, void *user);

/** Waits for the next presented frame and sets *out to it (a new frame: free it with
 *  mk_frame_free). Returns MK_EOF at the end of the track (*out NULL), or the error that
 *  ended the decoding (MK_EDATA with a message naming the packets and rebuilds, ...).
 *  Errors: MK_EINVAL, MK_ESTATE (the session delivers through callbacks). */
mk_status mk_async_decode_session_read_frame(mk_async_decode_session *session, mk_frame **out);

/** Sample-accurate seek: frames not yet delivered are dropped, and the next frame delivered
 *  is the one presented at `seconds` (audio: from that exact sample). Also after the end of
 *  the track or an error: decoding starts again. Errors: MK_EINVAL (NULL, negative or not
 *  finite). */
mk_status mk_async_decode_session_seek(mk_async_decode_session *session, double seconds);

/** Mid-stream flush (the iOS decoder's): the decoder's delayed frames are delivered, then
 *  `completion(user)` is called (may be NULL), and decoding goes on with the next packet;
 *  this is not the end of the stream. With callbacks, `completion` runs on their thread after
 *  the last drained frame's callback; with mk_async_decode_session_read_frame, on the session's thread
 *  once the drained frames are queued (ahead of later frames). After the end (or close)
 *  it is called at once. Errors: MK_EINVAL. */
mk_status mk_async_decode_session_flush(mk_async_decode_session *session, void (*completion)(void *user), void *user);

/** What a session did so far. */
typedef struct mk_async_decode_session_stats {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_async_decode_session_stats) */
    int64_t frames;            /**< frames delivered (not those dropped by a seek) */
    int32_t recoveries;        /**< recoveries from damaged data */
    int32_t rebuilds;          /**< decoder rebuilds */
    int32_t frames_lost;       /**< frames lost to damaged data */
    int32_t warnings;          /**< damage stepped over without failing (recoveries, a cut) */
    /* Added later (a caller built against the shorter struct sets its smaller struct_size
     * and gets the fields above): */
    int64_t packets;           /**< packets sent to the decoder (what went in, against `frames`) */
    int32_t invalidations;     /**< times the decoder was invalidated (MK_EINVALIDATED: its device
                                    went away) and rebuilt; not counted as damage */
} mk_async_decode_session_stats;

/** Fills *stats, up to its struct_size (at least the size of the fields up to `warnings`).
 *  Errors: MK_EINVAL (NULL, small struct_size). */
mk_status mk_async_decode_session_get_stats(mk_async_decode_session *session, mk_async_decode_session_stats *stats);

/** Fills *info with recovery `index` of the session (0 <= index < mk_async_decode_session_stats.recoveries,
 *  oldest first): the same record the recovery callback gets, for a session read with
 *  mk_async_decode_session_read_frame() too. Set info->struct_size to sizeof(mk_recovery_info) first.
 *  info->message is BORROWED from the session: valid until mk_async_decode_session_close(). Nothing to free.
 *  Errors: MK_EINVAL (NULL, small struct_size, index out of range). */
mk_status mk_async_decode_session_get_recovery(mk_async_decode_session *session, int32_t index, mk_recovery_info *info);

/** Stops the session and sets *session to NULL: its thread ends, frames not yet delivered are
 *  freed, and no callback runs once this returns. Called from one of the session's callbacks,
 *  it does not wait for that callback: no frame, recovery, error or end callback runs after
 *  the calling one returns (a flush completion already queued still runs once, its `user`
 *  passed). Frames already handed out stay valid. Harmless on NULL. */
void mk_async_decode_session_close(mk_async_decode_session **session);

/* ------------------------------------------------------------ the names before 0.2 */

/* mk_session_* became mk_async_decode_session_* in 0.2, so that one name means one thing in
 * Swift, C and Python. The old names stay for one release: the same types (typedefs) and the
 * same functions, still exported by libmediakit (programs built against them keep running);
 * compiling against them warns (MK_DEPRECATED). */
typedef mk_async_decode_session mk_session;
typedef mk_async_decode_session_settings mk_session_settings;
typedef mk_async_decode_session_callbacks mk_session_callbacks;
typedef mk_async_decode_session_stats mk_session_stats;

MK_DEPRECATED("mk_async_decode_session_default_settings")
void mk_session_default_settings(mk_session_settings *settings);
MK_DEPRECATED("mk_async_decode_session_open")
mk_status mk_session_open(mk_session **out, mk_demuxer *demuxer, int32_t track, const mk_session_settings *settings);
MK_DEPRECATED("mk_async_decode_session_start")
mk_status mk_session_start(mk_session *session, const mk_session_callbacks *callbacks, void *user);
MK_DEPRECATED("mk_async_decode_session_read_frame")
mk_status mk_session_read_frame(mk_session *session, mk_frame **out);
MK_DEPRECATED("mk_async_decode_session_seek")
mk_status mk_session_seek(mk_session *session, double seconds);
MK_DEPRECATED("mk_async_decode_session_flush")
mk_status mk_session_flush(mk_session *session, void (*completion)(void *user), void *user);
MK_DEPRECATED("mk_async_decode_session_get_stats")
mk_status mk_session_get_stats(mk_session *session, mk_session_stats *stats);
MK_DEPRECATED("mk_async_decode_session_get_recovery")
mk_status mk_session_get_recovery(mk_session *session, int32_t index, mk_recovery_info *info);
MK_DEPRECATED("mk_async_decode_session_close")
void mk_session_close(mk_session **session);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_SESSION_H */
