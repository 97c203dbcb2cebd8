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
    /* Added later (read only when struct_size covers them). Deprecated: they are
     * mk_transcode_settings' fields. Read by mk_transcode only; mk_encoder_open and
     * mk_transcode_with refuse them set here (MK_EINVAL). */
    mk_progress_callback progress; /**< NULL (default) or called now and then with the fraction
                                    done (done and total -1); non-zero cancels (MK_ECANCELLED) */
    void *progress_user;       /**< passed to progress. Default NULL */
    /* Added later (read only when struct_size covers it): */
    int32_t adjustable_sample_rate; /**< mk_encoder_open: 1: a sample_rate the encoder does not take
                                    is replaced by the closest it takes (the lowest above it, else
                                    the highest below: MP3 asked for 96000 codes at 48000, Opus
                                    asked for 44100 at 48000) and the PCM resampled to it
                                    (kAudioConverterEncodeAdjustableSampleRate); 0 (default): such
                                    a rate is refused (MK_EUNSUPPORTED) */
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
    /* Added later (filled only when struct_size covers it): */
    int64_t input_samples;     /**< samples per channel the encoder itself was given so far (in
                                    `input`'s rate): with encoder_delay and the packets' durations,
                                    it says the end padding */
    /* Added later (filled only when struct_size covers it): */
    int64_t max_packet_size;   /**< bytes of the largest packet the encoder can give where the codec
                                    bounds it (kAudioConverterPropertyMaximumOutputPacketSize): MP3's
                                    padded frame at its bit rate (at the highest legal one when
                                    coded at a variable rate); AAC's 6144 bits a channel; FLAC's
                                    verbatim frame; ALAC's cookie maxFrameBytes; Opus's 1275 bytes
                                    a frame with its framing; PCM's packet; 0 for Vorbis */
} mk_encoder_info;

/** Opens an encoder for PCM in `format` (interleaved or planar, any rate and channels: it is
 *  converted to what the encoder takes). Errors: MK_EINVAL (NULL, bad format),
 *  MK_ENOTFOUND (no plugin encodes the codec; the message names the places searched),
 *  MK_EUNSUPPORTED (a rate, channel count or bit rate the encoder refuses: the message
 *  names what it accepts). */
mk_status mk_encoder_open(mk_encoder **out, const mk_audio_format *format, const mk_encoder_settings *settings);

/** Fills *info. Errors: MK_EINVAL. */
mk_status mk_encoder_get_info(mk_encoder *encoder, mk_encoder_info *info);

/** The bit rates (bits per second) the encoder may be asked for where the codec has a fixed
 *  set (kAudioConverterApplicableEncodeBitRates), lowest first: MP3's at the coded rate
 *  (ISO/IEC 11172-3: 32000 ... 320000 at 32, 44.1 and 48 kHz; ISO/IEC 13818-3: 8000 ... 160000
 *  at 16, 22.05 and 24 kHz; MPEG 2.5's 8, 11.025 and 12 kHz: 8000 ... 64000, as LAME codes them). Copies up to `capacity` of them into `rates` (owned by the caller; NULL with
 *  capacity 0 only counts) and sets *count to how many there are: 0 when the codec takes any
 *  rate in its backend's range (mk_backend_info.min_bit_rate ... max_bit_rate).
 *  Errors: MK_EINVAL (NULL encoder or count, negative capacity, NULL rates with a capacity). */
mk_status mk_encoder_applicable_bit_rates(mk_encoder *encoder, int64_t *rates, int32_t capacity, int32_t *count);

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

/** Pull (AudioConverterFillComplexBuffer encoding): sets packets[0 ..
 *  *filled - 1] to up to `capacity` packets (OWNED by the caller: free each with
 *  mk_packet_free), calling `input` for PCM in the open format as needed (the callback of
 *  mk_audio_converter_fill: frames, 0 at the end of the input, MK_EAGAIN for "no data now").
 *  *filled is set on every return. MK_OK: *filled is `capacity`, or less only at the end
 *  (0 once every packet was returned). MK_EAGAIN: the callback said "no data now"; the
 *  packets ready so far were returned and the next call goes on: the packets of all calls
 *  equal those of pushing the same PCM, flushing and receiving. Errors: MK_EINVAL, MK_ESTATE
 *  (an encoder fed by mk_encoder_push), MK_EFAIL (the callback failed: the packets ready
 *  before it were returned). */
mk_status mk_encoder_fill(mk_encoder *encoder, mk_packet **packets, int32_t capacity, mk_audio_input_callback input,
                          void *user, int32_t *filled);

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
 *  whole-file call only (the video copy or re-encode, the tracks, the progress callback). Fill
 *  with mk_transcode_default_settings() first.
 *
 *      mk_encoder_settings enc; mk_encoder_default_settings(&enc);
 *      enc.bit_rate = 96000;                           // codec NULL: from dst's extension
 *      mk_transcode_settings t; mk_transcode_default_settings(&t);
 *      t.encoder = &enc;
 *      t.copy_video = 1;
 *      mk_transcode_with("in.mp4", "out.mp4", &t);
 *
 *  Re-encoding the video too, as `mk-transcode in.mkv out.mp4 --video-codec h264 --crf 23
 *  --scale 1280:-2 --fps 30 --audio-codec copy` (the same output):
 *
 *      mk_transcode_settings t; mk_transcode_default_settings(&t);
 *      t.video_codec = "h264"; t.crf = 23;
 *      t.scale_width = 1280; t.scale_height = -2;
 *      t.fps_num = 30; t.fps_den = 1;
 *      t.copy_audio = 1;
 *      mk_transcode_with("in.mkv", "out.mp4", &t);
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
    /* Added later (read only when struct_size covers them; an older, shorter struct keeps
     * their defaults): the tracks written and the video re-encode, as mk-transcode's options
     * (--video-codec ... --no-video). Options that contradict each other are refused
     * (MK_EINVAL, the message names them) and nothing is written. */
    const char *video_codec;   /**< re-encode the first video track (decode -> [fps] -> [scale] ->
                                    encode, as mk-transcode --video-codec): a codec ("h264", "hevc",
                                    "av1", "vp9": the encoder `ffmpeg -c:v CODEC` picks), an
                                    encoder's name ("libx264", "libsvtav1"), or "copy" (the same as
                                    copy_video = 1). NULL (default): the video is copied (copy_video)
                                    or left out. BORROWED for the call */
    double crf;                /**< video constant rate factor (-crf); < 0 (default): not set */
    double qp;                 /**< video constant quantiser (-qp); < 0 (default): not set */
    int64_t video_bit_rate;    /**< video bits per second (-b:v); 0 (default): not set */
    const char *preset;        /**< -preset ("veryfast", SVT-AV1 "8"); NULL (default): the encoder's.
                                    BORROWED for the call */
    const char *profile;       /**< -profile:v ("high"); NULL (default). BORROWED for the call */
    int32_t gop_size;          /**< frames between video key frames at most (-g); -1 (default) */
    int32_t max_b_frames;      /**< B-frames in a row at most (-bf); -1 (default); 0: none */
    int32_t threads;           /**< video encoder and decoder threads; 0 (default): every core. 1
                                    makes libx264 deterministic */
    int32_t scale_width;       /**< scale the re-encoded pictures to scale_width x scale_height (as
                                    `ffmpeg -vf scale=W:H`): -1 keeps the aspect ratio, -2 too with
                                    an even size, 0 the input's side. 0 and 0 (default): the decoded
                                    size. Needs video_codec */
    int32_t scale_height;
    int32_t scale_filter;      /**< how scaling resamples: MK_SCALE_* (mediakit_types.h);
                                    MK_SCALE_DEFAULT (0, default) is MK_SCALE_BICUBIC, ffmpeg's.
                                    Another value needs scale_width / scale_height set */
    int32_t fps_num;           /**< put the re-encoded pictures on the constant rate fps_num /
                                    fps_den first (as `ffmpeg -vf fps=R`, before the scaling);
                                    0/0 (default): the decoded times. Needs video_codec */
    int32_t fps_den;
    int32_t no_video;          /**< 1: no video track written (the default without video_codec and
                                    copy_video; refused beside them). Default 0 */
    int32_t no_audio;          /**< 1: the audio is left out (a video-only output; needs video_codec
                                    or copy_video, and encoder's settings left at their defaults).
                                    Default 0 */
    int32_t copy_audio;        /**< 1: the first audio track's packets are copied, not re-encoded
                                    (as --audio-codec copy; encoder's settings left at their
                                    defaults). Default 0 */
    /* The input's tags, chapters and attachments are copied into what the output holds (as
     * ffmpeg -map_metadata 0 -map_chapters 0; docs/metadata.md), as mk_remux copies them: */
    int32_t no_metadata;       /**< 1: copy none of them (mk-transcode --no-metadata). Default 0 */
    int32_t metadata_count;    /**< entries at metadata. Default 0 */
    const char *const *metadata; /**< "KEY=VALUE" container tags set after the copy (an empty
                                    VALUE removes the tag; mk-transcode --metadata), BORROWED for
                                    the call. Default NULL */
    int32_t id3v2_version;     /**< an MP3 output's tag: 3 (ID3v2.3, as ffmpeg -id3v2_version 3)
                                    or 4; 0 (default) is 4. Refused for outputs without ID3 */
    int32_t write_id3v2;       /**< 1: a WAV or AIFF output also gets its tags as an ID3v2 chunk
                                    (mk-transcode --write-id3v2). Default 0 */
    int32_t rf64;              /**< a WAV output: MK_RF64_* (muxer.h; mk-transcode --rf64), RIFF or
                                    RF64 as ffmpeg -rf64. Default MK_RF64_NEVER; refused for
                                    other outputs */
} mk_transcode_settings;

/** Fills *settings with the defaults (encoder NULL, video_codec NULL, crf and qp -1, gop_size
 *  and max_b_frames -1, the rest 0). Harmless on NULL. */
void mk_transcode_default_settings(mk_transcode_settings *settings);

/** mk_transcode with the transcode-only settings apart from the encoder's: the same output
 *  for the same settings. With video_codec the first video track is re-encoded as well (the
 *  Transcoder of the mk-transcode sample: the same options give the same file; libx264 at
 *  threads 1 gives the packets of `ffmpeg -vf fps=R,scale=W:H -c:v libx264 -threads 1`).
 *  `src`, `dst` and `settings` (with what it points to) are BORROWED for the call; nothing is
 *  allocated for the caller. settings may be NULL (the defaults).
 *  Errors: those of mk_transcode and mk_video_encoder_open, and MK_EINVAL for a NULL src or
 *  dst, a settings->struct_size other than the shorter mk_transcode_settings' (up to
 *  progress_user) and below this header's sizeof(mk_transcode_settings), deprecated fields set
 *  in settings->encoder, or settings that contradict each other (the message names the fields). */
mk_status mk_transcode_with(const char *src, const char *dst, const mk_transcode_settings *settings);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_ENCODER_H */
