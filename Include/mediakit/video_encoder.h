/*
 * mediakit/video_encoder.h - part of the C API of MediaKit (libmediakit): mk_video_encoder: encoding pictures through the plugins' video encoders (H.264, HEVC, AV1, VP9 ...);
 * mk_compression_session: the same encoder run on a thread of its own, packets through a callback (VTCompressionSession's shape).
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_VIDEO_ENCODER_H
#define MEDIAKIT_VIDEO_ENCODER_H

#include "base.h"
#include "codec_params.h"
#include "demuxer.h"
#include "frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An encoder of pictures into one compressed video stream from the plugins' video encoders
 *  (the FFmpeg plugin's: libx264, libx265, libvpx-vp9, libsvtav1 ... set up as the `ffmpeg`
 *  tool sets them up: the same settings give the same packets as `ffmpeg -c:v libx264`), with
 *  a picture converter in front: send decoded frames or your own planes in any MK_PIXEL_*
 *  format and size; they are converted (libswscale, as `ffmpeg -pix_fmt` / `-vf scale`) to the
 *  encoder's pixel format and size. Packets come out in decoding order (B-frames: dts below pts).
 *
 *      mk_video_encoder_settings s; mk_video_encoder_default_settings(&s);
 *      s.codec = "h264"; s.width = 640; s.height = 480;
 *      s.frame_rate_num = 25; s.frame_rate_den = 1;  // time base 1/25: pts count frames
 *      s.crf = 23;
 *      mk_video_encoder *enc = NULL;
 *      mk_video_encoder_open(&enc, &s);
 *      mk_codec_params cp; cp.struct_size = sizeof cp;
 *      mk_video_encoder_get_params(enc, &cp);           // for mk_muxer_add_track_params
 *      for (...) {
 *          mk_video_encoder_send_planes(enc, MK_PIXEL_RGB24, planes, strides, pts, 0);
 *          mk_packet *p;
 *          while (mk_video_encoder_receive_packet(enc, &p) == MK_OK) { ...; mk_packet_free(&p); }
 *      }
 *      mk_video_encoder_flush(enc);                    // then receive until MK_EOF
 *      mk_video_encoder_close(&enc);
 *
 *  One thread at a time. */
typedef struct mk_video_encoder mk_video_encoder;

/** mk_video_encoder_send_frame / _send_planes flags: code this picture as a key frame. */
#define MK_ENCODE_FORCE_KEYFRAME 1

/** What to encode to. Fill with mk_video_encoder_default_settings() first. */
typedef struct mk_video_encoder_settings {
    uint32_t struct_size;      /**< sizeof(mk_video_encoder_settings) */
    const char *codec;         /**< a codec ("h264", "hevc", "av1", "vp9", "mpeg4" ...: the encoder
                                    `ffmpeg -c:v CODEC` picks) or an encoder's name ("libx264",
                                    "libsvtav1"). Required; borrowed for the call */
    int32_t width, height;     /**< the coded size (1 to 16384). Required */
    int32_t pixel_format;      /**< the MK_PIXEL_* format coded; 0 (default): the encoder's first
                                    (yuv420p for libx264). Pictures sent in another format are
                                    converted to it */
    int32_t time_base_num;     /**< the unit of the pts given to send; 0/0 (default): 1 / frame rate */
    int32_t time_base_den;
    int32_t frame_rate_num;    /**< the nominal frame rate; 0/0 (default): unknown (then a time base
                                    is required). With a rate the packets' time base is 1 / rate,
                                    as the ffmpeg tool sets it */
    int32_t frame_rate_den;
    double crf;                /**< constant rate factor (-crf); < 0 (default): not set. Wins over qp
                                    and bit_rate */
    double qp;                 /**< constant quantiser (-qp, -q:v); < 0 (default): not set. 0 with
                                    libx264 is lossless. Wins over bit_rate */
    int64_t bit_rate;          /**< average bits per second (-b:v); 0 (default): not set */
    const char *preset;        /**< -preset ("medium", SVT-AV1 "8"); NULL (default): the encoder's.
                                    Borrowed for the call */
    const char *profile;       /**< -profile:v ("high", "main10"); NULL (default). Borrowed for the call */
    int32_t gop_size;          /**< frames between key frames at most (-g); -1 (default): the encoder's */
    int32_t max_b_frames;      /**< B-frames in a row at most (-bf); -1 (default): the encoder's; 0: none */
    int32_t threads;           /**< encoder threads (-threads); 0 (default): the encoder's choice. 1
                                    makes libx264, libx265 and libvpx deterministic */
    int32_t sample_aspect_num; /**< the pixel aspect ratio written; 0/1 (default): not stated */
    int32_t sample_aspect_den;
    int32_t color_range;       /**< written into the stream: 0 unknown (default), 1 limited, 2 full */
    int32_t color_primaries;   /**< ISO/IEC 23091-2 code points; 2 (default): unspecified */
    int32_t color_transfer;    /**< 2 (default): unspecified */
    int32_t color_space;       /**< the matrix coefficients; 2 (default): unspecified */
} mk_video_encoder_settings;

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_video_encoder_default_settings(mk_video_encoder_settings *settings);

/** Opens an encoder. On error *out is NULL and nothing must be freed. `settings` and its
 *  strings are BORROWED for the call. Errors: MK_EINVAL (NULL, a size out of range, no time
 *  base and no frame rate, a negative bit rate, a small struct_size), MK_ENOTFOUND (no plugin
 *  has the encoder: the message names what was looked for), MK_EUNSUPPORTED (a pixel format
 *  or setting the encoder refuses: the message names what it takes), MK_EFAIL. */
mk_status mk_video_encoder_open(mk_video_encoder **out, const mk_video_encoder_settings *settings);

/** What an open encoder makes. Pointers are BORROWED from the encoder, valid until the next
 *  call on it. */
typedef struct mk_video_encoder_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_video_encoder_info) */
    const char *codec;         /**< the codec written ("h264") */
    const char *backend;       /**< the encoder that codes ("libx264") */
    int32_t width, height;     /**< the coded size */
    int32_t pixel_format;      /**< the MK_PIXEL_* format coded */
    int32_t time_base_num;     /**< the packets' time base */
    int32_t time_base_den;
    int32_t reorder_delay;     /**< frames by which decoding runs ahead of presentation (B-frames) */
    int64_t bit_rate;          /**< nominal bits per second, 0 if none */
    const uint8_t *extradata;  /**< the parameter sets as the encoder states them (libx264, libx265:
                                    SPS / PPS (/ VPS) in Annex B, which MediaKit's muxers turn into
                                    the avcC / hvcC; AV1: the sequence header OBU); NULL when none (VP9) */
    size_t extradata_size;
    int64_t frames_sent;       /**< pictures sent so far */
} mk_video_encoder_info;

/** Fills *info (up to info->struct_size bytes). Errors: MK_EINVAL. */
mk_status mk_video_encoder_get_info(mk_video_encoder *encoder, mk_video_encoder_info *info);

/** Fills *params (its struct_size set by the caller; the other fields are overwritten) with
 *  the coded stream's parameters for mk_muxer_add_track_params or mk_decode_session_open_params:
 *  codec, size, the packets' time base, extradata (the parameter sets), reorder depth, aspect
 *  ratio and colour. codec and extradata are BORROWED from the encoder, valid until the next
 *  call on it (mk_muxer_add_track_params copies them). Errors: MK_EINVAL. */
mk_status mk_video_encoder_get_params(mk_video_encoder *encoder, mk_codec_params *params);

/** Encodes a decoded picture (from mk_decode_session_receive_frame ...; only read, it stays the
 *  caller's), converted first when its format or size differ from the encoder's. Its pts is
 *  in its own time base (rescaled); MK_NOPTS_VALUE: the previous picture's plus one frame.
 *  flags: 0 or MK_ENCODE_FORCE_KEYFRAME. Packets that became ready wait for
 *  mk_video_encoder_receive_packet. Errors: MK_EINVAL (NULL, an audio frame), MK_ESTATE
 *  (after flush), MK_ENOTFOUND (no plugin converts the picture's format), MK_EFAIL. */
mk_status mk_video_encoder_send_frame(mk_video_encoder *encoder, const mk_frame *frame, int32_t flags);

/** Encodes a picture of the encoder's width x height from the caller's planes in `format`
 *  (MK_PIXEL_*: NV12 Y then UV; I420 / yuv420p, yuv444p ... Y, U, V; RGB24, RGBA ... one plane),
 *  `strides[i]` bytes from one row of plane i to the next. The planes are COPIED (BORROWED for
 *  the call), then converted when `format` is not the encoder's. pts is in the settings' time
 *  base; MK_NOPTS_VALUE: the previous picture's plus one frame (0 for the first).
 *  Errors: MK_EINVAL (NULL, an unknown format, a stride shorter than a row), MK_ESTATE (after
 *  flush), MK_ENOTFOUND (no converter for `format`), MK_EFAIL. */
mk_status mk_video_encoder_send_planes(mk_video_encoder *encoder, int32_t format, const uint8_t *const *planes,
                                       const int64_t *strides, int64_t pts, int32_t flags);

/** Ends the input: the encoder codes what it holds (B-frames); receive its last packets.
 *  A second call does nothing. Errors: MK_EINVAL, MK_EFAIL. */
mk_status mk_video_encoder_flush(mk_video_encoder *encoder);

/** Sets *out to the next packet, OWNED by the caller (free it with mk_packet_free; pts, dts and
 *  duration in the info's time base, in decoding order, is_keyframe set on key frames).
 *  MK_EAGAIN: send more; MK_EOF: flushed and everything received. On error *out is NULL.
 *  Errors: MK_EINVAL, MK_EFAIL. */
mk_status mk_video_encoder_receive_packet(mk_video_encoder *encoder, mk_packet **out);

/** Closes *encoder (packets not received are dropped) and sets it to NULL; NULL is harmless. */
void mk_video_encoder_close(mk_video_encoder **encoder);

/* ------------------------------------------------------------ mk_compression_session */

/** The asynchronous video encoder, in the shape of VideoToolbox's VTCompressionSession (Swift's
 *  CompressionSession, Python's mediakit.CompressionSession). mk_compression_session_encode_frame
 *  and _encode_planes hand a picture over and return once it is queued; the conversion and the
 *  encoding run on the session's own thread, and every packet is passed to the packet
 *  callback, in decoding order, one call at a time, on a thread the library owns (never the
 *  caller's). For the same settings and pictures the packets are mk_video_encoder's, in the same
 *  order. At most 8 pictures wait for the encoder: beyond that an encode call waits until one is
 *  done (memory stays bounded).
 *
 *      static void on_packet(void *user, mk_packet *p) { ...; mk_packet_free(&p); }
 *
 *      mk_compression_session_callbacks cb; memset(&cb, 0, sizeof cb);
 *      cb.struct_size = sizeof cb; cb.packet = on_packet;
 *      mk_compression_session *cs = NULL;
 *      mk_compression_session_open(&cs, &settings, &cb, my_state);    // settings as mk_video_encoder_open's
 *      for (...) mk_compression_session_encode_planes(cs, MK_PIXEL_I420, planes, strides, pts, 0);
 *      mk_compression_session_complete_frames(cs, MK_NOPTS_VALUE);   // the end: every packet delivered
 *      mk_compression_session_close(&cs);
 *
 *  Threads: the functions may be called from any thread. encode_frame / encode_planes may also
 *  be called from the callbacks; complete_frames, flush and close may not (they wait for the
 *  callback thread). */
typedef struct mk_compression_session mk_compression_session;

/** The callbacks of a compression session, called on the session's callback thread. */
typedef struct mk_compression_session_callbacks {
    uint32_t struct_size;      /**< sizeof(mk_compression_session_callbacks) */
    /** Required. The next packet in decoding order (pts, dts and duration in the time base of
     *  mk_compression_session_get_params, is_keyframe set on key frames). *packet is OWNED by
     *  the callee: free it with mk_packet_free(), on any thread, now or later. */
    void (*packet)(void *user, mk_packet *packet);
    /** Optional (NULL). The encoding failed and the session stopped: no packet follows.
     *  `message` is BORROWED for the call. */
    void (*error)(void *user, mk_status status, const char *message);
} mk_compression_session_callbacks;

/** Opens a session encoding as mk_video_encoder_open does with `settings` (BORROWED for the
 *  call, its strings too). `callbacks` is copied; `user` is passed to each callback, never
 *  read, and must stay valid until mk_compression_session_close. On success *out must be
 *  closed with mk_compression_session_close(); on error it is NULL. Errors: those of
 *  mk_video_encoder_open, MK_EINVAL (NULL, a small struct_size, no packet callback). */
mk_status mk_compression_session_open(mk_compression_session **out, const mk_video_encoder_settings *settings,
                                      const mk_compression_session_callbacks *callbacks, void *user);

/** Fills *params (its struct_size set by the caller) as mk_video_encoder_get_params does: the
 *  coded stream's parameters for mk_muxer_add_track_params. codec and extradata are BORROWED
 *  from the session, valid until the next call on it. Errors: MK_EINVAL. */
mk_status mk_compression_session_get_params(mk_compression_session *session, mk_codec_params *params);

/** Hands a decoded picture over for encoding (converted first when its format or size differ
 *  from the encoder's) and returns once it is queued. The frame is only read: it stays the
 *  caller's (the session keeps a reference to its memory). pts is in the settings' time base;
 *  MK_NOPTS_VALUE: the frame's own pts, rescaled to it. flags: 0 or MK_ENCODE_FORCE_KEYFRAME.
 *  Errors: MK_EINVAL (NULL, an audio frame, unknown flags), MK_ESTATE (after the stream was
 *  ended by complete_frames / flush, or after a failure: the message names it). */
mk_status mk_compression_session_encode_frame(mk_compression_session *session, const mk_frame *frame, int64_t pts,
                                              int32_t flags);

/** Hands a picture of the encoder's width x height over from the caller's planes in `format`
 *  (as mk_video_encoder_send_planes: the planes are COPIED before this returns, BORROWED for the
 *  call) at `pts` in the settings' time base (MK_NOPTS_VALUE is refused: give each picture's
 *  time). Errors: those of mk_compression_session_encode_frame, MK_EINVAL (a NULL plane, an
 *  unknown format, a stride shorter than a row, MK_NOPTS_VALUE). */
mk_status mk_compression_session_encode_planes(mk_compression_session *session, int32_t format,
                                               const uint8_t *const *planes, const int64_t *strides, int64_t pts,
                                               int32_t flags);

/** Waits until the pictures handed over so far are encoded and their packets delivered to the
 *  callback (every callback has returned). until_pts MK_NOPTS_VALUE ends the stream: the
 *  encoder releases the packets it holds back (B-frames, look-ahead), every one is delivered
 *  before this returns, and the session takes no more pictures (VTCompressionSessionCompleteFrames
 *  with an invalid time). Another until_pts: the session goes on; the pictures presented up to
 *  it are encoded, and their packets delivered as far as the encoder releases them without the
 *  end of the stream (the packets mk_video_encoder_receive_packet would give by then).
 *  Returns MK_OK, or the error that stopped the session (the error callback had it).
 *  From a callback it returns once the pictures are encoded, and their packets are delivered
 *  after that callback returns. Errors: MK_EINVAL, the session's failure. */
mk_status mk_compression_session_complete_frames(mk_compression_session *session, int64_t until_pts);

/** mk_compression_session_complete_frames(session, MK_NOPTS_VALUE): ends the stream, every
 *  packet delivered when this returns (from a callback: after that callback returns). */
mk_status mk_compression_session_flush(mk_compression_session *session);

/** Ends the session and sets *session to NULL: pictures not encoded yet are dropped, and no
 *  callback runs once this returns (called from a callback: once that callback returns; the
 *  packets queued behind it are freed, not delivered). Packets already handed to the callback
 *  stay the callee's. Harmless on NULL. */
void mk_compression_session_close(mk_compression_session **session);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_VIDEO_ENCODER_H */
