/*
 * mediakit/audio_converter.h - part of the C API of MediaKit (libmediakit): mk_audio_converter: sample formats, channel layouts, sample rates.
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_AUDIO_CONVERTER_H
#define MEDIAKIT_AUDIO_CONVERTER_H

#include "base.h"
#include "demuxer.h"
#include "frame.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Converts PCM between sample formats, channel layouts and rates (MediaKit's AudioConverter:
 *  libswresample's rounding, ITU-R BS.775 downmix as `ffmpeg -ac 2`, a band-limited
 *  resampler), or decodes a track's packets and converts them in one object. One handle is
 *  used by one thread at a time. */
typedef struct mk_audio_converter mk_audio_converter;

/** A PCM format. */
typedef struct mk_audio_format {
    uint32_t struct_size;      /**< sizeof(mk_audio_format) */
    int32_t sample_format;     /**< MK_SAMPLES_* (interleaved, or planar *P: one plane per channel) */
    int32_t sample_rate;       /**< frames per second; in a track converter's target 0 keeps the decoded rate */
    int32_t channels;          /**< in a track converter's target 0 keeps the decoded channels */
    uint64_t channel_mask;     /**< WAVE channel mask (channels in mask order); 0: FFmpeg's default
                                    layout for `channels` */
} mk_audio_format;

/** Resampler presets (mk_audio_converter_settings.quality). */
#define MK_RESAMPLE_LOW    0
#define MK_RESAMPLE_MEDIUM 1   /**< the default: at least libswresample's default */
#define MK_RESAMPLE_HIGH   2   /**< soxr-like */

/** How to create an audio converter. Fill with mk_audio_converter_default_settings() first. */
typedef struct mk_audio_converter_settings {
    uint32_t struct_size;      /**< sizeof(mk_audio_converter_settings) */
    int32_t quality;           /**< MK_RESAMPLE_*. Default MK_RESAMPLE_MEDIUM */
    int32_t dither;            /**< 1: TPDF dither from float to integer samples. Default 0 */
    const double *mix_matrix;  /**< NULL (default): the standard downmix / upmix. Otherwise
                                    out_channels x in_channels gains, row by row (borrowed for
                                    the open call: copied) */
    int32_t trim;              /**< track converters: MK_TRIM_* (default MK_TRIM_GAPLESS) */
    int32_t threads;           /**< track converters: decoder threads; 0 = every core. Default 0 */
    const char *backend;       /**< track converters: a backend or plugin name; NULL: by priority */
    /* Added later (read only when struct_size covers them): */
    int64_t prime_leading;     /**< input frames dropped at the start (an encoder's priming); they
                                    still feed the filter as history. Default 0 */
    int64_t prime_trailing;    /**< input frames dropped at the end (an encoder's padding). Default 0 */
    /* Added later (read only when struct_size covers them): */
    const int32_t *channel_map; /**< NULL (default) or one entry per output channel: output channel i
                                    is input channel channel_map[i], or silence for -1 (picks,
                                    reorders, duplicates channels: kAudioConverterChannelMap);
                                    not with mix_matrix. Borrowed for the open call (copied) */
    int32_t prime_method;      /**< MK_PRIME_NORMAL (default), MK_PRIME_PRE or MK_PRIME_NONE: how the
                                    resampler's edges are handled (kAudioConverterPrimeMethod) */
} mk_audio_converter_settings;

/** How a resampling converter treats the input before the first frame and after the last
 *  (mk_audio_converter_settings.prime_method; AudioConverter's kAudioConverterPrimeMethod).
 *  The filter computing an output at an input time reads mk_audio_converter_stats.prime_leading_frames
 *  input frames before it and prime_trailing_frames after it (0 and 0 without a rate change). */
#define MK_PRIME_NORMAL 0  /**< input before the start is silence; no latency at the output (the
                                converter reads prime_trailing_frames ahead: they wait in it) */
#define MK_PRIME_PRE    1  /**< the caller gives prime_leading_frames real frames before the start
                                (from before a cut or seek point): they are history, not output */
#define MK_PRIME_NONE   2  /**< latency mode (live input): nothing waits for later input; the output
                                is delayed by prime_trailing_frames input frames (the first outputs
                                are the filter ramping up from silence) */

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_audio_converter_default_settings(mk_audio_converter_settings *settings);

/** Creates a PCM converter from `from` to `to`. settings may be NULL (defaults). On success
 *  *out must be closed with mk_audio_converter_close(). Errors: MK_EINVAL (NULL or small
 *  structs, an unknown sample format, a zero rate or channel count, a mask whose channel
 *  count differs from `channels`, a matrix of the wrong shape), with a message naming it. */
mk_status mk_audio_converter_open(mk_audio_converter **out, const mk_audio_format *from, const mk_audio_format *to,
                                  const mk_audio_converter_settings *settings);

/** Creates a converter that takes the compressed packets of `track` of `demuxer` (AAC, MP3,
 *  Opus, Vorbis, FLAC ...), decodes them through the registry's plugin with the track's
 *  trims, and converts to `to` (whose zero rate or channels keep the decoded ones). The
 *  converter does not keep the demuxer. Errors: as mk_audio_converter_open, MK_ENOTFOUND
 *  (no plugin decodes the codec), MK_EINVAL (not an audio track). */
mk_status mk_audio_converter_open_track(mk_audio_converter **out, const mk_demuxer *demuxer, int32_t track,
                                        const mk_audio_format *to, const mk_audio_converter_settings *settings);

/** Closes *converter and sets it to NULL; NULL is harmless. */
void mk_audio_converter_close(mk_audio_converter **converter);

/** Fills *format with the output format. MK_EAGAIN: a track converter knows it only once a
 *  frame was decoded (after a push that produced output). Errors: MK_EINVAL. */
mk_status mk_audio_converter_output_format(mk_audio_converter *converter, mk_audio_format *format);

/** Push (PCM converters): converts `frames` frames at planes (one pointer for interleaved
 *  input, one per channel for planar; BORROWED for the call). The output waits in the
 *  converter until read with mk_audio_converter_read. Errors: MK_EINVAL (NULL planes with
 *  frames, a track converter), MK_ESTATE (after mk_audio_converter_flush). */
mk_status mk_audio_converter_push(mk_audio_converter *converter, const void *const *planes, int32_t frames);

/** Push (track converters): decodes one packet of the track (BORROWED for the call) and
 *  converts it. Errors: MK_EINVAL (a PCM converter, a packet of another track), MK_ESTATE
 *  (after flush), the decoder's MK_EDATA / MK_EFAIL. */
mk_status mk_audio_converter_push_packet(mk_audio_converter *converter, const mk_packet *packet);

/** Ends the input: the resampler's tail (and a track's delayed frames) become readable. */
mk_status mk_audio_converter_flush(mk_audio_converter *converter);

/** Forgets the stream (after a seek, or to convert another one): what waits to be read and
 *  what the resampler holds are dropped, the next input starts a new stream (silent history,
 *  priming cut again), and pushing is allowed again after mk_audio_converter_flush. Track
 *  converters also drop what their decoder holds. Errors: MK_EINVAL. */
mk_status mk_audio_converter_reset(mk_audio_converter *converter);

/** A PCM converter's counts since it was opened or reset. */
typedef struct mk_audio_converter_stats {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_audio_converter_stats) */
    int64_t input_frames;      /**< frames pushed (or pulled by mk_audio_converter_fill) */
    int64_t output_frames;     /**< frames converted (read or waiting to be read) */
    int32_t latency;           /**< input frames that wait, before a flush, for later input: an
                                    input frame's output comes once this many frames follow it */
    /* Added later (filled when struct_size covers them): kAudioConverterPrimeInfo and
     * kAudioConverterPropertyMaximumOutputPacketSize. */
    int32_t prime_leading_frames;  /**< input frames before an output's time its filter reads */
    int32_t prime_trailing_frames; /**< input frames after an output's time its filter reads */
    int32_t max_output_packet_size; /**< bytes of one output frame (PCM's packet; per plane when planar) */
} mk_audio_converter_stats;

/** kAudioConverterPropertyCalculateOutputBufferSize (PCM converters): sets
 *  *output_bytes to the most bytes of output (per plane when planar) one mk_audio_converter_push
 *  of `input_bytes` bytes of input (per plane when planar; whole frames) can give: as many
 *  frames without a rate change, else ceil(frames * out_rate / in_rate) (some pushes give
 *  that many; a flush's tail is not counted). Errors: MK_EINVAL (NULL, a track converter,
 *  negative bytes). */
mk_status mk_audio_converter_output_buffer_size(mk_audio_converter *converter, int64_t input_bytes, int64_t *output_bytes);

/** kAudioConverterPropertyCalculateInputBufferSize (PCM converters): sets
 *  *input_bytes to the bytes of input (per plane when planar) one push needs to give
 *  `output_bytes` bytes of output (rounded up to whole frames), once the converter holds its
 *  latency: as many frames without a rate change, else ceil(frames * in_rate / out_rate)
 *  (one frame fewer gives less at some point of the stream). Errors: as
 *  mk_audio_converter_output_buffer_size. */
mk_status mk_audio_converter_input_buffer_size(mk_audio_converter *converter, int64_t output_bytes, int64_t *input_bytes);

/** Fills *stats for a PCM converter. Errors: MK_EINVAL (NULL, small struct_size, a track
 *  converter: its input is packets). */
mk_status mk_audio_converter_get_stats(mk_audio_converter *converter, mk_audio_converter_stats *stats);

/** Copies up to `capacity` converted frames into planes (one buffer for interleaved output,
 *  one per channel for planar, each room for capacity frames; owned by the caller) and sets
 *  *frames to the count. planes NULL: only sets *frames to the frames waiting. MK_OK with
 *  *frames > 0; MK_EAGAIN: nothing waiting (push more); MK_EOF: flushed and everything
 *  read. Errors: MK_EINVAL. */
mk_status mk_audio_converter_read(mk_audio_converter *converter, void *const *planes, int32_t capacity, int32_t *frames);

/** Parses a channel layout name (FFmpeg's: "mono", "stereo", "2.1", "quad", "5.0", "5.1",
 *  "7.1" ..., a channel count, or positions such as "FL+FR+LFE") into its WAVE channel mask
 *  (0 when the positions are not in mask order) and channel count; either output may be
 *  NULL. Errors: MK_EINVAL (unknown name, with a message listing the known ones). */
mk_status mk_channel_layout(const char *name, uint64_t *mask, int32_t *channels);

/** The pull model's input (AudioConverterFillComplexBuffer): asked for about `wanted`
 *  frames, sets *planes to the caller's input (one pointer interleaved, one per channel
 *  planar; valid until the next call) and returns the frames given: fewer or more than
 *  wanted is fine; 0 is the end of the stream; MK_EAGAIN is "no data now" (an
 *  AudioConverterComplexInputDataProc's error with zero packets): the fill returns what it
 *  converted so far with MK_EAGAIN and the converter keeps its state for the next call;
 *  another negative value is an error that mk_audio_converter_fill returns as MK_EFAIL. */
typedef int32_t (*mk_audio_input_callback)(void *user, int32_t wanted, const void *const **planes);

/** Pull (PCM converters): fills planes with `frames` output frames, calling `input` for
 *  source frames as needed. Output waiting from mk_audio_converter_push comes first. *filled
 *  is set on every return, errors included: frames written to planes are never lost (an input error
 *  does not drop the frames that waited from a push). MK_OK: *filled is
 *  `frames`, or less only at the end of the stream (0 once everything was returned; the
 *  converter is then flushed). MK_EAGAIN: the callback said "no data now"; *filled (maybe 0)
 *  frames were written and the next call goes on where this one stopped: the frames of
 *  every call together equal those of one push of the whole input. Errors: MK_EINVAL,
 *  MK_EFAIL (the callback failed: the *filled frames converted before it were written; what
 *  else was converted waits for the next fill or mk_audio_converter_read). */
mk_status mk_audio_converter_fill(mk_audio_converter *converter, void *const *planes, int32_t frames,
                                  mk_audio_input_callback input, void *user, int32_t *filled);

/** The compressed pull model's input (AudioConverterFillComplexBuffer decoding: packets with
 *  their descriptions in): asked for packets that give about `wanted` output frames, sets
 *  *packet to one packet of the converter's track (mk_demuxer_read_track_packet's, or made
 *  with mk_packet_create: its data, size, times and duration are the description) and
 *  returns 1; the converter takes OWNERSHIP of *packet (it frees it). Returns 0 at the end of
 *  the stream, MK_EAGAIN for "no data now", another negative value for an error (as
 *  mk_audio_input_callback). */
typedef int32_t (*mk_audio_packet_callback)(void *user, int32_t wanted, mk_packet **packet);

/** Pull (track converters): fills planes (one buffer interleaved, one per channel
 *  planar, each room for `frames` frames of the output format) with decoded and converted
 *  frames, calling `input` for packets of the track as needed. Statuses and *filled as
 *  mk_audio_converter_fill (MK_EAGAIN: "no data now"; the output of all calls equals pushing
 *  the same packets with mk_audio_converter_push_packet then mk_audio_converter_flush). When
 *  the target format leaves the channels open, call it first with frames 0 (planes may be
 *  NULL): it decodes up to the first frame, keeps it waiting, and
 *  mk_audio_converter_output_format then tells the format to size planes for.
 *  Errors: MK_EINVAL (a PCM converter, a packet of another track), MK_EFAIL, the decoder's. */
mk_status mk_audio_converter_fill_packets(mk_audio_converter *converter, void *const *planes, int32_t frames,
                                          mk_audio_packet_callback input, void *user, int32_t *filled);

/** Pull (track converters) with the packets read by the library: as
 *  mk_audio_converter_fill_packets, the track's packets read from `demuxer` (the one the
 *  converter was opened on, or another of the same file: its position moves as
 *  mk_demuxer_read_track_packet moves it), with no callback: one call decodes as many
 *  packets as `frames` needs. Planes are the caller's (room for `frames` frames of the output
 *  format); planes NULL with frames 0 decodes up to the first frame (the output format is
 *  then known); planes NULL with frames > 0 decodes and drops that many frames (a skip to a
 *  sample: *filled counts those dropped). MK_OK: *filled is `frames`, or less only at the end
 *  of the track (0 once everything was given; the converter is then flushed). A file cut
 *  short is read as far as it goes: the frames before the cut are written and the call
 *  returns MK_ETRUNCATED (a warning, mk_last_error() naming the cut) with *filled set; the
 *  converter is then flushed. Errors: MK_EINVAL (NULL handles or filled, a PCM converter, a
 *  demuxer without the converter's track, a negative count), the demuxer's and the decoder's.
 *  Borrows both handles for the call; not thread-safe on either. */
mk_status mk_audio_converter_fill_demuxer(mk_audio_converter *converter, mk_demuxer *demuxer, void *const *planes,
                                          int32_t frames, int32_t *filled);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_AUDIO_CONVERTER_H */
