/*
 * mediakit/writer.h - part of the C API of MediaKit (libmediakit): mk_writer: pictures and PCM encoded and written into a new movie (AVAssetWriter with output settings).
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_WRITER_H
#define MEDIAKIT_WRITER_H

#include "base.h"
#include "frame.h"
#include "encoder.h"
#include "video_encoder.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Writes pictures and PCM into a new file, encoding them (Swift's AssetWriter): the container
 *  from the path's extension (.mp4, .mov, .mkv, .webm ... through the muxer catalogue), the
 *  video through mk_video_encoder's encoders and converter, the audio through mk_encoder's;
 *  the two tracks' packets interleaved by time; an MP4 gets the edit lists that present the
 *  first picture at 0 despite B-frames and cut the audio priming and padding. Pictures are
 *  timed by their pts (a variable frame rate with a time base of its own).
 *
 *      mk_video_encoder_settings v; mk_video_encoder_default_settings(&v);
 *      v.codec = "h264"; v.width = 640; v.height = 480; v.frame_rate_num = 25; v.frame_rate_den = 1; v.crf = 23;
 *      mk_encoder_settings a; mk_encoder_default_settings(&a); a.codec = "aac";
 *      mk_audio_format pcm = { sizeof pcm, MK_SAMPLES_F32, 48000, 2, 0 };
 *      mk_writer_settings s; mk_writer_default_settings(&s);
 *      s.video = &v; s.audio = &a; s.audio_input = &pcm;
 *      mk_writer *w = NULL;
 *      mk_writer_open(&w, "out.mp4", &s);
 *      mk_writer_write_video_planes(w, MK_PIXEL_RGB24, planes, strides, MK_NOPTS_VALUE, 0);  // frame after frame
 *      mk_writer_write_audio(w, pcm_planes, frames);
 *      mk_writer_finish(w);                            // the file appears under its name
 *      mk_writer_close(&w);
 *
 *  Until mk_writer_finish() succeeds, nothing is under `path` (the muxer writes a temporary
 *  file); a failed call, mk_writer_cancel() or mk_writer_close() of an unfinished writer
 *  removes what was written. One thread at a time. */
typedef struct mk_writer mk_writer;

/** The tracks to write. Fill with mk_writer_default_settings() first. */
typedef struct mk_writer_settings {
    uint32_t struct_size;      /**< sizeof(mk_writer_settings) */
    const mk_video_encoder_settings *video; /**< the video track (codec, width, height and frame rate
                                    required; a time_base of its own: the pts given are kept in it,
                                    for a variable frame rate; else pts count frames), or NULL (default):
                                    none. BORROWED for the call */
    const mk_encoder_settings *audio; /**< the audio track's encoder (codec, bit rate ...; its
                                    mk_transcode fields unset), or NULL (default): none. BORROWED */
    const mk_audio_format *audio_input; /**< the PCM given to mk_writer_write_audio (any format:
                                    converted); required with audio. BORROWED */
} mk_writer_settings;

/** Fills *settings with the defaults (no tracks). Harmless on NULL. */
void mk_writer_default_settings(mk_writer_settings *settings);

/** Opens a writer for `path` (BORROWED). On error *out is NULL, nothing is written and nothing
 *  must be freed. Errors: MK_EINVAL (NULL, no track, a missing size or frame rate, audio without
 *  audio_input), MK_EUNSUPPORTED (an extension no muxer writes, a codec the container cannot
 *  carry: the message says why), MK_ENOTFOUND (no encoder), and those of mk_video_encoder_open
 *  and mk_encoder_open. */
mk_status mk_writer_open(mk_writer **out, const char *path, const mk_writer_settings *settings);

/** Encodes and writes one picture from the caller's planes (COPIED; as
 *  mk_video_encoder_send_planes: `format` MK_PIXEL_*, at the video track's width x height,
 *  converted when needed). pts in the video settings' time base; MK_NOPTS_VALUE: the previous
 *  picture's plus one frame (0 for the first; with a time_base of its own in the video settings,
 *  plus one tick of it: give every picture its pts there). flags: 0 or MK_ENCODE_FORCE_KEYFRAME.
 *  Errors: MK_EINVAL, MK_ESTATE (no video track; finished or cancelled), and the encoder's and
 *  muxer's; after an error other than MK_EINVAL the writer is cancelled. */
mk_status mk_writer_write_video_planes(mk_writer *writer, int32_t format, const uint8_t *const *planes,
                                       const int64_t *strides, int64_t pts, int32_t flags);

/** Encodes and writes a decoded picture (only read; any format and size: converted) at its own
 *  pts (MK_NOPTS_VALUE: the next frame). Errors: as mk_writer_write_video_planes. */
mk_status mk_writer_write_video_frame(mk_writer *writer, const mk_frame *frame, int32_t flags);

/** Encodes and writes `frames` frames of PCM in the settings' audio_input format (one pointer for
 *  interleaved input, one per channel for planar; BORROWED for the call). Errors: MK_EINVAL,
 *  MK_ESTATE (no audio track; finished or cancelled), and the encoder's and muxer's; after an
 *  error other than MK_EINVAL the writer is cancelled. */
mk_status mk_writer_write_audio(mk_writer *writer, const void *const *planes, int32_t frames);

/** Flushes the encoders, writes the rest, the edit lists and the index, and renames the file to
 *  its path. Errors: MK_ESTATE (a track was given nothing; already finished or cancelled), the
 *  encoders' and muxer's (nothing is then left under the path). */
mk_status mk_writer_finish(mk_writer *writer);

/** Stops writing and removes what was written. Harmless after finish. Errors: MK_EINVAL. */
mk_status mk_writer_cancel(mk_writer *writer);

/** Fills *status with where writing stands (AVAssetWriter's status, MK_ASSET_*: UNKNOWN until
 *  the first picture or samples, WRITING, COMPLETED after mk_writer_finish, FAILED after an
 *  error that cancelled the writer, with its status and message, CANCELLED).
 *  Errors: MK_EINVAL (NULL, small struct_size). */
mk_status mk_writer_get_status(mk_writer *writer, mk_asset_status *status);

/** Marks the video (media_type MK_MEDIA_VIDEO) or audio (MK_MEDIA_AUDIO) track finished, as
 *  AVAssetWriterInput's markAsFinished: later pictures or samples of it are MK_ESTATE.
 *  Errors: MK_EINVAL (NULL, another media type, a track the writer does not have). */
mk_status mk_writer_end_track(mk_writer *writer, int32_t media_type);

/** Frees *writer (cancelling it when unfinished) and sets it to NULL; NULL is harmless. */
void mk_writer_close(mk_writer **writer);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_WRITER_H */
