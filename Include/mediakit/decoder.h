/*
 * mediakit/decoder.h - part of the C API of MediaKit (libmediakit): mk_decode_session: decoding one track (send packets, receive frames, seek); mk_decode_file.
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_DECODER_H
#define MEDIAKIT_DECODER_H

#include "base.h"
#include "codec_params.h"
#include "demuxer.h"
#include "frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A decode session: one track decoded on the caller's thread, packets sent and frames received
 *  (Swift DecodeSession; Python mediakit.DecodeSession, mediakit.Decoder up to 0.2). Named
 *  mk_decoder before 0.2 (see the end of this header). */
typedef struct mk_decode_session mk_decode_session;

/** Values of the `trim` settings: how a track is cut to what the file presents. */
#define MK_TRIM_NONE    0   /**< every decoded frame and sample (ffmpeg -ignore_editlist 1) */
#define MK_TRIM_GAPLESS 1   /**< the edit list applied as FFmpeg applies it (priming and B-frame
                                 delay dropped); audio ends exactly where the edit list, iTunSMPB
                                 or the Ogg end granule says (the default) */
#define MK_TRIM_FFMPEG  2   /**< as FFmpeg 5.1: as MK_TRIM_GAPLESS, but the last audio frame that
                                 starts before the end is kept whole */

/** How to create a decoder. Fill with mk_decode_session_default_settings() first. */
typedef struct mk_decode_session_settings {
    uint32_t struct_size;      /**< sizeof(mk_decode_session_settings) */
    const char *backend;       /**< a backend or plugin name to insist on; NULL: by priority. Default NULL */
    int32_t threads;           /**< decoder threads; 0 = every core. Default 0 */
    int32_t trim;              /**< MK_TRIM_GAPLESS (default), MK_TRIM_FFMPEG or MK_TRIM_NONE */
} mk_decode_session_settings;

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_decode_session_default_settings(mk_decode_session_settings *settings);

/** Creates a decoder for track `track` of `demuxer`, through the highest-priority
 *  plugin backend for its codec. The decoder does not keep the demuxer: it may be
 *  closed first. settings may be NULL (defaults). On success *out must be closed
 *  with mk_decode_session_close(). Errors: MK_EINVAL, MK_ENOTFOUND (no plugin decodes the
 *  codec; the message lists every place searched), MK_EUNSUPPORTED (unknown or
 *  encrypted track), MK_EFAIL (the backend refused). */
mk_status mk_decode_session_open(mk_decode_session **out, const mk_demuxer *demuxer, int32_t track,
                                 const mk_decode_session_settings *settings);


/** Creates a decoder from codec parameters rather than a demuxer's track, for packets made
 *  with mk_packet_create (their `track` is ignored). No edit list applies: settings->trim
 *  only matters for per-packet trims, which such packets do not carry. settings may be
 *  NULL (defaults). On success *out must be closed with mk_decode_session_close(). Errors:
 *  MK_EINVAL (NULL out or params, a small struct_size, no codec, a media_type that is not
 *  audio or video, NULL extradata with a size, a non-positive time base), MK_ENOTFOUND (no
 *  plugin decodes the codec; the message lists every place searched), MK_EFAIL (the
 *  backend refused the parameters). */
mk_status mk_decode_session_open_params(mk_decode_session **out, const mk_codec_params *params,
                                        const mk_decode_session_settings *settings);

/** Closes *decoder and sets it to NULL. Frames already received stay valid. */
void mk_decode_session_close(mk_decode_session **decoder);

/** Sends a packet of the decoder's track (borrowed for the call); NULL starts
 *  draining at the end of the stream. The model is libavcodec's: MK_OK means the packet
 *  was taken; MK_EAGAIN means frames are waiting and the packet was NOT taken: receive
 *  until mk_decode_session_receive_frame returns MK_EAGAIN, then send the same packet again.
 *  Receiving every frame after each send avoids MK_EAGAIN here. Packets whose frames are
 *  not presented (outside the edit list) are decoded as references without output, except
 *  H.264 / HEVC pictures no other picture refers to, which are not decoded at all.
 *  Errors: MK_EINVAL (NULL decoder, packet of another track), MK_ESTATE (a packet after
 *  draining started), MK_EDATA (the decoder rejects the data), MK_EFAIL. */
mk_status mk_decode_session_send_packet(mk_decode_session *decoder, const mk_packet *packet);

/** Receives the next decoded frame into *out (free it with mk_frame_free), decoding as
 *  needed: nothing is queued on the host side. MK_EAGAIN: send another packet; MK_EOF:
 *  drained after a NULL send. Errors: MK_EINVAL, MK_EDATA, MK_EFAIL. */
mk_status mk_decode_session_receive_frame(mk_decode_session *decoder, mk_frame **out);

/** Drops buffered packets and frames (after mk_demuxer_seek) and accepts packets
 *  again, also after draining. Errors: MK_EINVAL. */
mk_status mk_decode_session_reset(mk_decode_session *decoder);

/** Sample-accurate seek: moves `demuxer` (the one the decoder's track came from) to the key
 *  frame at or before `seconds` (one second earlier for audio, to prime the decoder; the key
 *  frame before that one where it opens an open GOP, e.g. an H.264 I frame that is not an
 *  IDR, so that no frame from `seconds` on is lost), drops
 *  what the decoder holds, and makes the first frame it then returns the one presented at
 *  `seconds` (audio: from that exact sample). Then read the track's packets and decode as
 *  usual. Neither handle is kept. Errors: MK_EINVAL (NULL, a negative or non-finite time, a
 *  decoder opened with mk_decode_session_open_params), the demuxer's seek errors. */
mk_status mk_decode_session_seek(mk_decode_session *decoder, mk_demuxer *demuxer, double seconds);

/** The presented frames of the decoder's track, as `ffmpeg -vf select=eq(n\,I)` counts them
 *  (presentation order, after the edit list; video from the first key frame in decoding order
 *  on: pictures before it, in a stream cut before its first key frame, give no frame): writes up to `capacity` of their media times
 *  (the track's time base, as the frames' pts; add mk_demuxer_presentation_offset for the
 *  presentation timeline) to `pts` and 1 / 0 for key frame (sync sample) / not to `is_key`
 *  (either may be NULL), and sets *count to how many frames there are (so a first call with
 *  capacity 0 sizes the arrays). The first call reads them, then the decoder keeps them: from
 *  the sample table where the container has one (MP4: nothing else is read and the demuxer
 *  does not move), else by reading the track's packets without decoding (the demuxer is left
 *  at the end: seek before decoding on). Nothing is allocated for the caller.
 *  Errors: MK_EINVAL (NULL decoder, demuxer or count, a negative capacity, a decoder opened
 *  with mk_decode_session_open_params), the demuxer's read errors. */
mk_status mk_decode_session_frame_index(mk_decode_session *decoder, mk_demuxer *demuxer, int64_t *pts, int32_t *is_key,
                                        int64_t capacity, int64_t *count);

/** Gives the decoder the list mk_decode_session_frame_index() returned earlier for the same track of
 *  the same file (`count` frames: their `pts` and `is_key` flags, as that call wrote them), so
 *  that mk_decode_session_frames_at() and mk_decode_session_frame_index() use it and read no packet to make
 *  it: a caller that saved the list of a file without a sample table (MPEG-TS, Matroska, raw
 *  streams ...: there the list costs a read of every packet) opens it again without that read.
 *  The caller vouches that the list is that file's; what is checked: the times rise strictly
 *  and lie inside the track's edit list. Both arrays are borrowed for the call (copied).
 *  Errors: MK_EINVAL (NULL decoder, NULL arrays with a count, a negative count, a time out of
 *  order or outside the track's window: the message names the frame; a decoder opened with
 *  mk_decode_session_open_params); the decoder's list is then unchanged. */
mk_status mk_decode_session_set_frame_index(mk_decode_session *decoder, const int64_t *pts, const int32_t *is_key, int64_t count);

/** Receives one frame of mk_decode_session_frames_at(): `position` is the place in the caller's
 *  `indices` it answers; `frame` is a NEW frame OWNED by the callback (free it with
 *  mk_frame_free, now or later), or NULL when the decoder gave none for that index (damaged
 *  data). Return MK_OK to go on; a negative status stops the batch, which then returns it:
 *  return an error (MK_ECANCELLED, say), not MK_EAGAIN (-1), which a caller takes for "try
 *  again" (the Python binding did, and handed out a batch left half written). */
typedef int32_t (*mk_frame_callback)(void *user, int64_t position, mk_frame *frame);   /* returns an mk_status */

/** Decodes the frames at `indices[0 .. count)` (indices into mk_decode_session_frame_index's list; in
 *  any order, duplicates allowed) and hands each to `callback` with `user`, sorted by index
 *  (a duplicate is handed once per position, each a new frame). Each group of pictures is
 *  decoded at most once for the whole batch: from the key frame at or before the first
 *  wanted frame of the GOP (the one before it for an open GOP), forward; GOPs with no wanted
 *  frame are read, not decoded; frames between the wanted ones are decoded but never
 *  converted or handed out, except H.264 / HEVC pictures no other picture refers to (most
 *  B-frames), which are not decoded at all. Only the frames between two hand-outs are held.
 *  The demuxer is left after the last frame handed out (seek it and the decoder before
 *  decoding on). A batch whose first frame comes after the last frame of the previous batch
 *  of this decoder (one that returned MK_OK, on the same demuxer, with no other call on that
 *  demuxer or on this decoder in between) decodes on from where that batch stopped, without
 *  a seek: a file read in consecutive batches decodes each frame once.
 *  `indices` is borrowed for the call. Errors: MK_EINVAL (NULL decoder, demuxer or callback,
 *  NULL indices with a count, a negative count, an index out of range: the message names it
 *  and the frame count, a decoder opened with mk_decode_session_open_params), what the callback
 *  returns, the demuxer's and the decoder's errors. Not thread-safe on one decoder. */
mk_status mk_decode_session_frames_at(mk_decode_session *decoder, mk_demuxer *demuxer, const int64_t *indices, int64_t count,
                                      mk_frame_callback callback, void *user);

/** Decodes, for each media time `pts[0 .. count)` (the track's time base, as frames' pts; any
 *  order, duplicates allowed), the first presented frame whose pts is at or after it, and hands
 *  it to `callback` as mk_decode_session_frames_at() does (sorted by time; NULL for a time after the
 *  track's last frame), each group of pictures decoded at most once, resuming after a batch as
 *  mk_decode_session_frames_at() does. Unlike it, it needs no frame list: on a file without a sample
 *  table nothing but the GOPs around the times is read (with mk_decode_session_estimate_frames(), the
 *  frames at nominal times: approximate access). `pts` is borrowed for the call. Errors:
 *  MK_EINVAL (NULL decoder, demuxer or callback, NULL pts with a count, a negative count, a
 *  decoder opened with mk_decode_session_open_params), what the callback returns, the demuxer's and
 *  the decoder's errors. Not thread-safe on one decoder. */
mk_status mk_decode_session_frames_at_pts(mk_decode_session *decoder, mk_demuxer *demuxer, const int64_t *pts, int64_t count,
                                          mk_frame_callback callback, void *user);

/** The track's presented frames as a constant rate would place them, without the read of every
 *  packet that mk_decode_session_frame_index() makes on a file without a sample table: *first_pts the
 *  first presented frame's time (track time base), *end_pts the end of the last frame, *count the
 *  frames; frame i's nominal time is first + i * (end - first) / count. From the track's first 64
 *  packets (the first time; the frame duration: the container's frame rate's, else their median
 *  step) and the packets after its last key frame (a seek past the end: a bisection on MPEG-TS,
 *  the last Cue on Matroska; formats without an index read their packets to get there). Exact
 *  on a constant-rate track; where the list is known or the container has a sample table (MP4),
 *  or the track is too short or untimed for an estimate, the exact list's values. The demuxer is
 *  left anywhere: seek before decoding on. Errors: MK_EINVAL (a NULL argument, a decoder opened
 *  with mk_decode_session_open_params), the demuxer's errors. */
mk_status mk_decode_session_estimate_frames(mk_decode_session *decoder, mk_demuxer *demuxer, int64_t *first_pts, int64_t *end_pts,
                                            int64_t *count);



/** How mk_decode_file() writes. Fill with mk_decode_default_settings() first. */
typedef struct mk_decode_settings {
    uint32_t struct_size;      /**< sizeof(mk_decode_settings) */
    int32_t video_layout;      /**< MK_PACK_NV12 (default), MK_PACK_I420, or any picture
                                    layout of mk_frame_pack (MK_PACK_BGRA, MK_PACK_P010, MK_PACK_RGB24 ...:
                                    the bytes of ffmpeg -pix_fmt bgra, p010le ...; y4m writes I420) */
    int32_t audio_layout;      /**< MK_PACK_S16 (default) or MK_PACK_F32 */
    int32_t wav;               /**< 1: write the audio as WAV. Default 0 */
    int32_t y4m;               /**< 1: write the video as YUV4MPEG2. Default 0 */
    int32_t trim;              /**< MK_TRIM_GAPLESS (default), MK_TRIM_FFMPEG or MK_TRIM_NONE */
    int32_t autorotate;        /**< 1: turn pictures upright as ffmpeg does (default) */
    int32_t threads;           /**< decoder threads, 0 = every core (default) */
    const char *backend;       /**< backend or plugin name; NULL: by priority (default) */
    /* Added later (read only when struct_size covers them): */
    mk_progress_callback progress; /**< NULL (default) or called with milliseconds decoded of the
                                    longest track's; non-zero from it cancels (MK_ECANCELLED) */
    void *progress_user;       /**< passed to progress. Default NULL */
    /* Added later as well (read only when struct_size covers them): mk-decode's choices. */
    int32_t sample_format;     /**< an interleaved MK_SAMPLES_* type to write the audio in (u8, s16,
                                    s24, s32, f32, f64; raw output also the storage variants: S8,
                                    S16BE ... F64BE, S24IN32HI / LO); 0 (default): audio_layout's */
    int32_t sample_rate;       /**< resample the audio to this rate (MediaKit's resampler); 0
                                    (default): the source's */
    int32_t channels;          /**< mix the audio to this many channels (as ffmpeg -ac mixes); 0
                                    (default): the source's */
    uint64_t channel_mask;     /**< with channels: the WAVE mask of the layout (channels in mask
                                    order); 0 (default): FFmpeg's default layout of `channels` */
    int32_t resample_quality;  /**< MK_RESAMPLE_* when sample_rate changes the rate. Default
                                    MK_RESAMPLE_MEDIUM */
    double seek_seconds;       /**< start at this presentation time, sample-accurately (as
                                    ffmpeg -ss T -i); negative (default -1): the start */
    int64_t max_video_frames;  /**< write at most this many pictures; 0 (default): all */
    double max_audio_seconds;  /**< write at most this many seconds of audio (round(seconds *
                                    rate) sample frames); 0 (default): all */
    int32_t async_video;       /**< 1: when only video is decoded, decode it on a thread of its own
                                    (same output). Default 0 */
    /* Added later (read only when struct_size covers full_range): */
    int32_t reserved;          /**< ignored: where the struct up to async_video had its tail padding,
                                    which a caller built against it may have left uninitialised */
    int32_t full_range;        /**< 1: full-range 8-bit pictures written as NV12 / I420 stay full range
                                    (VideoToolbox's kCVPixelFormatType_420YpCbCr8BiPlanarFullRange,
                                    ffmpeg -vf scale=out_range=full; mk-decode --range full);
                                    limited-range ones stay limited. Default 0: full range is
                                    brought to limited, as ffmpeg -pix_fmt */
} mk_decode_settings;

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_decode_default_settings(mk_decode_settings *settings);

/** Decodes the first audio track of `path` to `audio_out` and the first video
 *  track to `video_out` (either may be NULL, not both), as the mk-decode sample
 *  does. Outputs are written to temporary files and renamed at the end, so a
 *  failure leaves no partial file under their names. settings may be NULL.
 *  A file cut short is decoded as far as it goes, as ffmpeg does: the outputs ARE
 *  written, and MK_ETRUNCATED is returned with mk_last_error() naming the offset of the
 *  cut (a warning: check for it with `st == MK_OK || st == MK_ETRUNCATED`).
 *  settings->progress may cancel: nothing is then left under the output names.
 *  Errors: those of mk_demuxer_open and mk_decode_session_open, MK_ENOTFOUND (the file
 *  lacks the track), MK_EUNSUPPORTED, MK_ECANCELLED, MK_EIO. */
mk_status mk_decode_file(const char *path, const char *audio_out, const char *video_out,
                         const mk_decode_settings *settings);

/* ------------------------------------------------------------ the names before 0.2 */

/* mk_decoder_* became mk_decode_session_* in 0.2, so that one name means one thing in Swift
 * (DecodeSession), C and Python (mediakit.DecodeSession from 0.3).
 * The old names stay for one release: the same types (typedefs) and the same functions, still
 * exported by libmediakit (programs built against them keep running); compiling against them
 * warns (MK_DEPRECATED). */
typedef mk_decode_session mk_decoder;
typedef mk_decode_session_settings mk_decoder_settings;

MK_DEPRECATED("mk_decode_session_default_settings")
void mk_decoder_default_settings(mk_decoder_settings *settings);
MK_DEPRECATED("mk_decode_session_open")
mk_status mk_decoder_open(mk_decoder **out, const mk_demuxer *demuxer, int32_t track, const mk_decoder_settings *settings);
MK_DEPRECATED("mk_decode_session_open_params")
mk_status mk_decoder_open_params(mk_decoder **out, const mk_codec_params *params, const mk_decoder_settings *settings);
MK_DEPRECATED("mk_decode_session_close")
void mk_decoder_close(mk_decoder **decoder);
MK_DEPRECATED("mk_decode_session_send_packet")
mk_status mk_decoder_send_packet(mk_decoder *decoder, const mk_packet *packet);
MK_DEPRECATED("mk_decode_session_receive_frame")
mk_status mk_decoder_receive_frame(mk_decoder *decoder, mk_frame **out);
MK_DEPRECATED("mk_decode_session_reset")
mk_status mk_decoder_reset(mk_decoder *decoder);
MK_DEPRECATED("mk_decode_session_seek")
mk_status mk_decoder_seek(mk_decoder *decoder, mk_demuxer *demuxer, double seconds);
MK_DEPRECATED("mk_decode_session_frame_index")
mk_status mk_decoder_frame_index(mk_decoder *decoder, mk_demuxer *demuxer, int64_t *pts, int32_t *is_key,
                                 int64_t capacity, int64_t *count);
MK_DEPRECATED("mk_decode_session_set_frame_index")
mk_status mk_decoder_set_frame_index(mk_decoder *decoder, const int64_t *pts, const int32_t *is_key, int64_t count);
MK_DEPRECATED("mk_decode_session_frames_at")
mk_status mk_decoder_frames_at(mk_decoder *decoder, mk_demuxer *demuxer, const int64_t *indices, int64_t count,
                               mk_frame_callback callback, void *user);
MK_DEPRECATED("mk_decode_session_frames_at_pts")
mk_status mk_decoder_frames_at_pts(mk_decoder *decoder, mk_demuxer *demuxer, const int64_t *pts, int64_t count,
                                   mk_frame_callback callback, void *user);
MK_DEPRECATED("mk_decode_session_estimate_frames")
mk_status mk_decoder_estimate_frames(mk_decoder *decoder, mk_demuxer *demuxer, int64_t *first_pts, int64_t *end_pts,
                                     int64_t *count);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_DECODER_H */
