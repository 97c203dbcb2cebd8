/*
 * mediakit/encoder.h - part of the C API of MediaKit (libmediakit): mk_encoder: encoding audio through plugins; mk_transcode, mk_transcode_with.
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_ENCODER_H
#define MEDIAKIT_ENCODER_H

#include "base.h"
#include "codec_params.h"
#include "demuxer.h"
#include "frame.h"
#include "audio_converter.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An encoder of PCM into one compressed audio stream (AAC, Opus, Vorbis, MP3, FLAC) from
 *  the plugins' encoder backends, with the conversion to what the encoder takes in front
 *  (sample format, channels, rate): push PCM in any format, take packets out.
 *
 *      mk_encoder *enc = NULL;
 *      mk_encoder_settings s; mk_encoder_default_settings(&s);
 *      s.codec = "aac"; s.bit_rate = 128000;
 *      mk_encoder_open(&enc, &pcm_format, &s);
 *      mk_encoder_push(enc, planes, frames);           // as often as needed
 *      mk_packet *p;
 *      while (mk_encoder_receive_packet(enc, &p) == MK_OK) { ...; mk_packet_free(&p); }
 *      mk_encoder_flush(enc);                          // then receive until MK_EOF
 *      mk_encoder_close(&enc);
 *
 *  One thread at a time. */
typedef struct mk_encoder mk_encoder;

/** Opus applications (mk_encoder_settings.application). */
#define MK_APPLICATION_DEFAULT  0
#define MK_APPLICATION_AUDIO    1
#define MK_APPLICATION_VOIP     2
#define MK_APPLICATION_LOWDELAY 3

/** What to encode to. Fill with mk_encoder_default_settings() first. */
typedef struct mk_encoder_settings {
    uint32_t struct_size;      /**< sizeof(mk_encoder_settings) */
    const char *codec;         /**< "aac", "opus", "vorbis", "mp3", "flac"; borrowed for the call.
                                    NULL: from the output's extension (mk_transcode only) */
    int64_t bit_rate;          /**< bits per second; 0: the encoder's default (default) */
    int32_t has_quality;       /**< 1: variable bit rate at `quality` (default 0) */
    double quality;            /**< on the codec's scale, as ffmpeg -q:a: Vorbis -1..10, MP3 9..0, AAC 0.1..2 */
    int32_t complexity;        /**< Opus 0..10, FLAC 0..12; -1: the default (default) */
    int32_t application;       /**< MK_APPLICATION_* (Opus); default MK_APPLICATION_DEFAULT */
    double frame_duration;     /**< Opus frame in seconds (0.0025 ... 0.06); 0: 20 ms (default) */
    int32_t sample_rate;       /**< coded rate; 0: the input's when the encoder takes it (default) */
    int32_t channels;          /**< coded channels; 0: the input's (default) */
    const char *backend;       /**< backend or plugin name; NULL: by priority (default) */
    int32_t copy_video;        /**< Deprecated: mk_transcode_settings.copy_video. Read by
                                    mk_transcode only: 1 copies the video tracks into an MP4
                                    output (default 0); mk_transcode_with refuses it set here */
    /* Added in 0.2 (read only when struct_size covers them). Deprecated: they are
     * mk_transcode_settings' fields. Read by mk_transcode only; mk_encoder_open and
     * mk_transcode_with refuse them set here (MK_EINVAL). */
    mk_progress_callback progress; /**< NULL (default) or called now and then with the fraction
                                    done (done and total -1); non-zero cancels (MK_ECANCELLED) */
    void *progress_user;       /**< passed to progress. Default NULL */
} mk_encoder_settings;

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_encoder_default_settings(mk_encoder_settings *settings);

/** What an open encoder makes. Pointers are borrowed from the encoder, valid until the
 *  next call on it. */
typedef struct mk_encoder_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_encoder_info) */
    const char *codec;         /**< the codec written */
    int32_t sample_rate;       /**< the coded stream's rate */
    int32_t channels;          /**< the coded stream's channels */
    int64_t bit_rate;          /**< nominal bits per second, 0 if none */
    int32_t frame_size;        /**< samples per channel the codec codes at a time (0: any) */
    int32_t encoder_delay;     /**< priming samples at the start of the decoded output, in the
                                    packets' time base (Opus: the OpusHead pre-skip, at 48 kHz) */
    int32_t time_base_num;     /**< the packets' time base */
    int32_t time_base_den;
    const uint8_t *extradata;  /**< the magic cookie: AudioSpecificConfig, OpusHead, Vorbis
                                    headers (Xiph lacing), STREAMINFO; after draining FLAC's
                                    holds the sample count and MD5. NULL when none */
    size_t extradata_size;
    mk_audio_format input;     /**< the PCM the encoder itself takes (after the conversion) */
    /* Added in 0.2 (filled only when struct_size covers it): */
    int64_t input_samples;     /**< samples per channel the encoder itself was given so far (in
                                    `input`'s rate): with encoder_delay and the packets' durations,
                                    it says the end padding */
} mk_encoder_info;

/** Opens an encoder for PCM in `format` (interleaved or planar, any rate and channels: it is
 *  converted to what the encoder takes). Errors: MK_EINVAL (NULL, bad format),
 *  MK_ENOTFOUND (no plugin encodes the codec; the message names the places searched),
 *  MK_EUNSUPPORTED (a rate, channel count or bit rate the encoder refuses: the message
 *  names what it accepts). */
mk_status mk_encoder_open(mk_encoder **out, const mk_audio_format *format, const mk_encoder_settings *settings);

/** Fills *info. Errors: MK_EINVAL. */
mk_status mk_encoder_get_info(mk_encoder *encoder, mk_encoder_info *info);

/** Encodes `frames` frames at planes (one pointer for interleaved input, one per channel for
 *  planar; BORROWED for the call). Packets that became ready wait for
 *  mk_encoder_receive_packet. Errors: MK_EINVAL, MK_ESTATE (after flush), MK_EFAIL. */
mk_status mk_encoder_push(mk_encoder *encoder, const void *const *planes, int32_t frames);

/** Ends the input: the encoder codes what it holds; receive its last packets. */
mk_status mk_encoder_flush(mk_encoder *encoder);

/** Sets *out to the next packet (free it with mk_packet_free; pts, dts and duration in the
 *  info's time base, counting the priming from 0). MK_EAGAIN: push more; MK_EOF: flushed and
 *  everything received. Errors: MK_EINVAL. */
mk_status mk_encoder_receive_packet(mk_encoder *encoder, mk_packet **out);

/** Closes *encoder and sets it to NULL; NULL is harmless. */
void mk_encoder_close(mk_encoder **encoder);

/** Decodes the first audio track of `src` (any input MediaKit reads) and encodes it into a new
 *  file at `dst`, as the mk-transcode sample does: .m4a / .mp4 (AAC, MP3 in .mp4, Opus, FLAC;
 *  gapless by an edit list, plus iTunSMPB for AAC), .flac, .mp3 (LAME tag), .mka / .mkv /
 *  .webm. The codec
 *  comes from settings->codec or the extension. The output is written to a temporary file and
 *  renamed at the end: a failure or a cancel (settings->progress) leaves nothing under `dst`.
 *  A source cut short is transcoded as far as it goes, as ffmpeg does: `dst` is written and the
 *  status is MK_ETRUNCATED, a warning (mk_last_error() names the offset of the cut; check for it
 *  with `st == MK_OK || st == MK_ETRUNCATED`).
 *  settings may be NULL. Errors: those of mk_demuxer_open and mk_encoder_open, MK_ENOTFOUND
 *  (no audio track), MK_EUNSUPPORTED (an output or codec MediaKit does not write),
 *  MK_ECANCELLED, MK_EIO. `src`, `dst` and `settings` are BORROWED for the call. New code:
 *  mk_transcode_with, which takes the video copy and the progress apart from the encoder's
 *  settings (the same output for the same settings). */
mk_status mk_transcode(const char *src, const char *dst, const mk_encoder_settings *settings);

/** How mk_transcode_with transcodes: the audio encoder's settings, and what belongs to the
 *  whole-file call only (the video copy, the progress callback). Fill with
 *  mk_transcode_default_settings() first. Added in 0.2.
 *
 *      mk_encoder_settings enc; mk_encoder_default_settings(&enc);
 *      enc.bit_rate = 96000;                           // codec NULL: from dst's extension
 *      mk_transcode_settings t; mk_transcode_default_settings(&t);
 *      t.encoder = &enc;
 *      t.copy_video = 1;
 *      mk_transcode_with("in.mp4", "out.mp4", &t);
 */
typedef struct mk_transcode_settings {
    uint32_t struct_size;      /**< sizeof(mk_transcode_settings) */
    const mk_encoder_settings *encoder; /**< the audio encoder, BORROWED for the call (and its
                                    strings); NULL: mk_encoder_default_settings' (default).
                                    Its codec NULL: from dst's extension. Its deprecated
                                    copy_video, progress and progress_user must keep their
                                    defaults (MK_EINVAL): they are set here */
    int32_t copy_video;        /**< 1 copies the video tracks into an MP4 output (default 0) */
    mk_progress_callback progress; /**< NULL (default) or called now and then on the calling
                                    thread with the fraction done (done and total -1);
                                    non-zero cancels (MK_ECANCELLED) */
    void *progress_user;       /**< passed to progress, never read. Default NULL */
} mk_transcode_settings;

/** Fills *settings with the defaults (encoder NULL). Harmless on NULL. */
void mk_transcode_default_settings(mk_transcode_settings *settings);

/** mk_transcode with the transcode-only settings apart from the encoder's: the same output
 *  for the same settings. `src`, `dst` and `settings` (with what it points to) are BORROWED
 *  for the call; nothing is allocated for the caller. settings may be NULL (the defaults).
 *  Errors: those of mk_transcode, and MK_EINVAL for a NULL src or dst, a
 *  settings->struct_size smaller than this library's mk_transcode_settings, or deprecated
 *  fields set in settings->encoder (the message names the field). */
mk_status mk_transcode_with(const char *src, const char *dst, const mk_transcode_settings *settings);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_ENCODER_H */
