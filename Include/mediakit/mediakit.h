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
 *  - Handles are opaque (mk_demuxer, mk_packet, mk_decoder, mk_frame). They are
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
 *     mk_decoder *dec = NULL;
 *     mk_packet *pkt = NULL;
 *     mk_frame *frm = NULL;
 *     if (mk_demuxer_open(&dmx, "movie.mp4") != MK_OK) { puts(mk_last_error()); return 1; }
 *     int32_t track = 0;                        // pick one with mk_demuxer_track()
 *     mk_decoder_settings s;
 *     mk_decoder_default_settings(&s);
 *     if (mk_decoder_open(&dec, dmx, track, &s) != MK_OK) { ... }
 *     mk_status st;
 *     while ((st = mk_demuxer_read_track_packet(dmx, track, &pkt)) == MK_OK) {
 *         while ((st = mk_decoder_send_packet(dec, pkt)) == MK_EAGAIN) {
 *             while (mk_decoder_receive_frame(dec, &frm) == MK_OK) { ...; mk_frame_free(&frm); }
 *         }                                      // (never happens if you always receive)
 *         mk_packet_free(&pkt);
 *         if (st != MK_OK) break;
 *         while ((st = mk_decoder_receive_frame(dec, &frm)) == MK_OK) {
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
 *         mk_decoder_send_packet(dec, NULL);
 *         while ((st = mk_decoder_receive_frame(dec, &frm)) == MK_OK) {
 *             ...
 *             mk_frame_free(&frm);
 *         }
 *     }                                          // st == MK_EOF: fully drained
 *     mk_decoder_close(&dec);
 *     mk_demuxer_close(&dmx);
 */
#ifndef MEDIAKIT_H
#define MEDIAKIT_H

#include <stddef.h>
#include <stdint.h>

#include "mediakit_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes (mk_status, MK_OK and the negative MK_E* codes), media types
 * (MK_MEDIA_*), pixel formats (MK_PIXEL_*) and sample formats (MK_SAMPLES_*) are
 * in mediakit_types.h, shared with the plugin ABI. */

/** The ABI version of this header; mk_abi_version() returns the library's. */
#define MK_ABI_VERSION 1

/** The library version, e.g. "0.1.0". Static string; never NULL. Thread-safe. */
const char *mk_version(void);

/** The library's ABI version; equal to MK_ABI_VERSION for a matching header. Thread-safe. */
int32_t mk_abi_version(void);

/** A message for the last failed call on the calling thread ("" if none).
 *  Owned by the library; valid until the next failing call on this thread. Never NULL. */
const char *mk_last_error(void);

/** A short name for a status ("MK_EINVAL", ...). Static string; never NULL. */
const char *mk_status_name(mk_status status);

/** Progress of a long call (mk_decode_file, mk_remux, mk_transcode), called on the calling
 *  thread now and then: `fraction` done in [0, 1]; `done` and `total` in the call's unit
 *  (mk_decode_file: milliseconds of media; mk_remux: packets; mk_transcode: -1, unknown);
 *  `user` is the settings' progress_user. Return 0 to go on, non-zero to cancel: the call then
 *  stops, removes what it wrote (nothing is left under the target names) and returns
 *  MK_ECANCELLED. */
typedef int32_t (*mk_progress_callback)(void *user, double fraction, int64_t done, int64_t total);

/* ------------------------------------------------------------------ plugins */

/** Loads a codec plugin file, or every plugin in a directory, in addition to the
 *  default locations (MEDIAKIT_PLUGIN_PATH, the library's own directory,
 *  <prefix>/lib/mediakit/plugins), which are searched on first use.
 *  Errors: MK_EINVAL (NULL), MK_ENOTFOUND (nothing there), MK_EPLUGIN (not a
 *  plugin, or built for another plugin ABI). Thread-safe. */
mk_status mk_plugins_load(const char *path);

/** Number of loaded plugins (searching the default locations first). Thread-safe. */
int32_t mk_plugin_count(void);

/** One loaded plugin. Strings are static for the life of the process. */
typedef struct mk_plugin_info {
    uint32_t struct_size;     /**< set by the caller: sizeof(mk_plugin_info) */
    const char *name;         /**< "ffmpeg" */
    const char *version;      /**< the plugin's version string */
    const char *path;         /**< the file it was loaded from */
    const char *codecs;       /**< comma-separated "codec:priority" list, e.g. "h264:100,aac:100" */
} mk_plugin_info;

/** Fills *info for plugin `index` (0 <= index < mk_plugin_count()).
 *  Errors: MK_EINVAL (NULL, small struct_size, index out of range). Thread-safe. */
mk_status mk_plugin_get_info(int32_t index, mk_plugin_info *info);

/** Kinds of backends (mk_backend_info.kind). */
#define MK_BACKEND_DECODER            1
#define MK_BACKEND_ENCODER            2
#define MK_BACKEND_PICTURE_CONVERTER  3

/** One backend a loaded plugin registered: a decoder or encoder for a codec, or a picture
 *  converter. Strings are static for the life of the process. */
typedef struct mk_backend_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_backend_info) */
    int32_t kind;              /**< MK_BACKEND_* */
    const char *codec;         /**< FFmpeg's codec name ("h264"); "" for a picture converter */
    const char *name;          /**< the backend's name, as decoder and encoder settings' `backend` take it */
    int32_t media_type;        /**< MK_MEDIA_* of the codec; 0 for a picture converter */
    int32_t priority;          /**< the higher is chosen first among those of a codec */
    const char *plugin;        /**< the plugin's name ("ffmpeg") */
    const char *plugin_path;   /**< the file it was loaded from */
    /* Added in 0.2 (filled only when struct_size covers them). What an encoder takes (all zero
     * / NULL for the other kinds); arrays are static for the life of the process: */
    const int32_t *sample_formats; /**< MK_SAMPLES_* it takes, preferred first */
    int32_t sample_format_count;
    const int32_t *sample_rates;   /**< the rates it takes (Hz); NULL (count 0): any rate from
                                        min_sample_rate to max_sample_rate */
    int32_t sample_rate_count;
    int32_t min_sample_rate;   /**< with sample_rate_count 0, the range of rates it takes */
    int32_t max_sample_rate;
    int32_t max_channels;      /**< channels it takes: 1 to this */
    const uint64_t *channel_masks; /**< WAVE channel masks it takes (one per channel count);
                                        NULL (count 0): the default order of each count */
    int32_t channel_mask_count;
    int64_t min_bit_rate;      /**< bit rates (bits per second) it can be asked for; both 0 when */
    int64_t max_bit_rate;      /**< it takes none (a lossless codec) */
    int32_t scales;            /**< picture converter: 1 when it also changes the picture size
                                    (what mk_frame_pack_scaled needs); 0 otherwise */
} mk_backend_info;

/** Number of backends of every loaded plugin (searching the default locations first): the
 *  decoders, then the encoders, then the picture converters, each by priority, highest first.
 *  Thread-safe. */
int32_t mk_backend_count(void);

/** Fills *info for backend `index` (0 <= index < mk_backend_count()). Errors: MK_EINVAL (NULL,
 *  small struct_size, index out of range). Thread-safe. */
mk_status mk_backend_get_info(int32_t index, mk_backend_info *info);

/** Sets *supported to 1 when picture converter `index` (a backend of kind
 *  MK_BACKEND_PICTURE_CONVERTER) takes `source` pictures and returns `target` ones (MK_PIXEL_*
 *  codes), else 0. Errors: MK_EINVAL (NULL, index out of range, not a picture converter).
 *  Thread-safe. */
mk_status mk_backend_converts(int32_t index, int32_t source, int32_t target, int32_t *supported);

/** Kinds of container formats (mk_container_info.kind). */
#define MK_CONTAINER_DEMUXER  1   /**< read by mk_demuxer_open (chosen by probing the bytes) */
#define MK_CONTAINER_MUXER    2   /**< written by mk_muxer_open / mk_remux (chosen by the extension) */

/** One container format of the library's catalogue. Strings are static for the life of the
 *  process. */
typedef struct mk_container_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_container_info) */
    int32_t kind;              /**< MK_CONTAINER_DEMUXER or MK_CONTAINER_MUXER */
    const char *name;          /**< "mp4", "matroska", "webm", "ogg" ... */
    const char *description;   /**< "MP4/MOV (ISO BMFF)" */
    const char *extensions;    /**< comma-separated, without dots: "mp4,m4a,m4v,mov,3gp" (a
                                    muxer's: the extensions that choose it) */
    const char *mime_types;    /**< comma-separated MIME types; "" for a muxer */
} mk_container_info;

/** Number of container formats: the demuxers (in the order they are probed), then the
 *  muxers. Thread-safe. */
int32_t mk_container_count(void);

/** Fills *info for container format `index` (0 <= index < mk_container_count()). Errors:
 *  MK_EINVAL (NULL, small struct_size, index out of range). Thread-safe. */
mk_status mk_container_get_info(int32_t index, mk_container_info *info);

/** Number of plugin files the registry found but refused (not a plugin, another plugin ABI, a
 *  failed entry point). Thread-safe. */
int32_t mk_plugin_failure_count(void);

/** Sets *message to failure `index` (0 <= index < mk_plugin_failure_count()): a sentence naming
 *  the file and why it was refused, and *path to that file (either may be NULL). Strings are
 *  static for the life of the process. Errors: MK_EINVAL (index out of range). Thread-safe. */
mk_status mk_plugin_failure(int32_t index, const char **path, const char **message);

/** Number of places the registry searched for plugins (MEDIAKIT_PLUGIN_PATH entries, the
 *  library's own directory, <prefix>/lib/mediakit/plugins, and those of mk_plugins_load).
 *  Thread-safe. */
int32_t mk_plugin_search_count(void);

/** Sets *path to searched place `index` (0 <= index < mk_plugin_search_count()), a directory
 *  or file; static for the life of the process. Errors: MK_EINVAL (NULL, index out of range).
 *  Thread-safe. */
mk_status mk_plugin_search_path(int32_t index, const char **path);

/* ------------------------------------------------------------------ demuxer */

/** An open container file. */
typedef struct mk_demuxer mk_demuxer;
/** A compressed packet read from a demuxer. */
typedef struct mk_packet mk_packet;

/* Media types: MK_MEDIA_AUDIO, MK_MEDIA_VIDEO, MK_MEDIA_SUBTITLE, MK_MEDIA_DATA
 * (mediakit_types.h). */

/** Opens a media file (MP4, MOV, M4A ...) and reads its track list.
 *  On success *out is a new demuxer: close it with mk_demuxer_close().
 *  Errors: MK_EINVAL (NULL), MK_ENOTFOUND (no such file), MK_EIO, MK_EDATA
 *  (damaged; the message names the box and offset), MK_EUNSUPPORTED, MK_ELIMIT. */
mk_status mk_demuxer_open(mk_demuxer **out, const char *path);

/** Opens a media file held in memory (`size` bytes at `data`). The bytes are copied: the
 *  caller may free `data` as soon as this returns. Same result and errors as mk_demuxer_open. */
mk_status mk_demuxer_open_memory(mk_demuxer **out, const uint8_t *data, size_t size);

/** Read callbacks for mk_demuxer_open_io(). Every callback gets the `user` pointer given there. */
typedef struct mk_io {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_io) */
    /** Reads up to `size` bytes into `buffer` from the current position. Returns the count
     *  read, 0 at the end of the input, or a negative number on failure. Required. */
    int64_t (*read)(void *user, uint8_t *buffer, size_t size);
    /** Moves the position to the absolute `offset`. Returns 0, or a negative number on
     *  failure. NULL when the input cannot seek (a pipe, a socket): it is then read once, front
     *  to back; Ogg, IVF, Matroska / WebM, MP4 files whose moov comes first and fragmented MP4
     *  (read one fragment at a time; mk_demuxer_seek then fails with MK_EUNSUPPORTED) open that
     *  way, other layouts fail with MK_EUNSUPPORTED naming the layout. */
    int64_t (*seek)(void *user, int64_t offset);
    /** Returns the total size in bytes, or a negative number when unknown. May be NULL. */
    int64_t (*size)(void *user);
    /** The input's name in messages ("socket", a URL ...). May be NULL. */
    const char *name;
} mk_io;

/** Opens a media file read through `io`'s callbacks. The callbacks (and `user`) must stay
 *  valid until mk_demuxer_close(); they are called on the thread that calls the demuxer, one at a
 *  time. `io` itself is copied. Errors: those of mk_demuxer_open, MK_EINVAL (NULL io or read,
 *  small struct_size), MK_EIO when a callback fails. */
mk_status mk_demuxer_open_io(mk_demuxer **out, const mk_io *io, void *user);

/** Closes *demuxer and sets it to NULL. NULL or an already NULL handle is harmless.
 *  Packets already read stay valid (free them with mk_packet_free). */
void mk_demuxer_close(mk_demuxer **demuxer);

/** Sets *count to the number of tracks. Errors: MK_EINVAL. */
mk_status mk_demuxer_track_count(const mk_demuxer *demuxer, int32_t *count);

/** Container duration in seconds (0 if unknown). Errors: MK_EINVAL. */
mk_status mk_demuxer_duration(const mk_demuxer *demuxer, double *seconds);

/** Sets *name to the short name of the container format the demuxer reads: "mp4" (also
 *  MOV, M4A, 3GP), "matroska" (also WebM), "ogg", "ivf", "mp3", "aac" (ADTS), "wav",
 *  "flac": FFmpeg's demuxer names, one of those ffprobe lists in format_name. The string is
 *  BORROWED from the demuxer (valid until mk_demuxer_close). Errors: MK_EINVAL. */
mk_status mk_demuxer_container(const mk_demuxer *demuxer, const char **name);

/** Sets *offset to the ticks (of the track's time base) that place the track's timestamps
 *  on the presentation timeline, as FFmpeg's demuxer gives them: a first empty edit's
 *  duration minus the media time where the edit list's first media edit starts; 0 without
 *  an edit list. A frame at pts is presented at pts + *offset (what `ffprobe -show_frames`
 *  shows). Errors: MK_EINVAL (NULL, track out of range). */
mk_status mk_demuxer_presentation_offset(const mk_demuxer *demuxer, int32_t track, int64_t *offset);

/** One entry of a track's edit list (how media time maps to presentation time; MP4 elst).
 *  Fixed layout: it never grows (a new type would be added instead). */
typedef struct mk_edit {
    int64_t segment_duration;  /**< length of the span, in mk_track_info.movie_time_scale ticks */
    int64_t media_time;        /**< where the span starts in the media, in the track's time base;
                                    -1 for an empty edit (a gap) */
    double media_rate;         /**< 1 for normal play, 0 for a dwell */
} mk_edit;

/** Everything about one track. Strings, extradata, edits and the sample entry are borrowed from
 *  the demuxer (valid until mk_demuxer_close). */
typedef struct mk_track_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_track_info) */
    int32_t index;             /**< position in the container, from 0 */
    int32_t id;                /**< container track ID */
    int32_t media_type;        /**< MK_MEDIA_* */
    const char *codec;         /**< FFmpeg-style codec name ("h264"), "" if unknown */
    const char *codec_tag;     /**< sample entry type ("avc1") */
    const uint8_t *extradata;  /**< codec configuration (avcC, AudioSpecificConfig ...) */
    size_t extradata_size;
    int32_t time_base_num;     /**< seconds per timestamp tick = num / den */
    int32_t time_base_den;
    int64_t duration;          /**< in time-base ticks */
    int64_t sample_count;      /**< packets in the track */
    int32_t width, height;     /**< video */
    int32_t sample_rate;       /**< audio */
    int32_t channels;          /**< audio */
    double rotation;           /**< display rotation in degrees, counter-clockwise (ffprobe's sign) */
    const char *language;      /**< ISO 639-2/T code, "und" if unknown */
    int32_t frame_rate_num;    /**< video: nominal frame rate, 0/1 if unknown */
    int32_t frame_rate_den;
    int32_t encoder_delay;     /**< audio: priming samples to drop at the start */
    int32_t encoder_padding;   /**< audio: padding samples to drop at the end */
    const char *unsupported;   /**< why the track cannot be decoded, or NULL */
    /* Added in 0.2 (filled only when struct_size covers it): */
    int32_t reflected;         /**< 1 when the display matrix also mirrors the picture (negative
                                    determinant, e.g. [0 1; 1 0]); `rotation` alone then does not
                                    say how to show it: mk-decode turns it as ffmpeg does */
    int32_t matrix[9];         /**< the display matrix (MP4 tkhd), row-major (a b u c d v x y w): a b c
                                    d x y in 16.16 fixed point, u v w in 2.30; identity if none */
    const mk_edit *edits;      /**< the edit list, edit_count entries; NULL when none */
    int32_t edit_count;
    int64_t movie_time_scale;  /**< ticks per second of the edits' segment_duration (MP4 mvhd) */
    int64_t bit_rate;          /**< average bits per second the container states, 0 if none */
    int32_t sample_aspect_num; /**< video: pixel aspect ratio the container states (pasp), 0/1 if none */
    int32_t sample_aspect_den;
    int32_t color_range;       /**< video, as the container states it (MP4 colr): 0 unknown, 1 limited, 2 full */
    int32_t color_primaries;   /**< ISO/IEC 23091-2 code points; 2: unspecified */
    int32_t color_transfer;
    int32_t color_space;       /**< the matrix coefficients code point */
    uint64_t channel_mask;     /**< audio: WAVE channel mask the container states, 0 if none */
    int32_t bits_per_coded_sample; /**< from the sample entry, 0 if unknown */
    int32_t block_align;       /**< audio: bytes per packet of constant-size codecs, 0 if unknown */
    int32_t reorder_depth;     /**< video: frames of B-frame reordering (from the timestamps), 0 if none */
    int32_t encrypted;         /**< 1 for an encrypted track (encv / enca) */
    int32_t trims_on_packets;  /**< 1 when the cuts are on the packets (mk_packet_info trim_start /
                                    trim_end: Ogg); encoder_delay / padding are then informative */
    const uint8_t *sample_entry; /**< the whole source sample entry (MP4 stsd entry), NULL if none */
    size_t sample_entry_size;
} mk_track_info;

/** Fills *info for track `index`, up to info->struct_size bytes (a caller built against an
 *  older header, whose struct ends before `reflected` or before `matrix`, still works: nothing
 *  past its struct_size is written).
 *  Errors: MK_EINVAL (NULL, struct_size smaller than the 0.1 struct, out of range). */
mk_status mk_demuxer_track(const mk_demuxer *demuxer, int32_t index, mk_track_info *info);

/** Reads the next packet in file order into *out (a new packet: free it with
 *  mk_packet_free). Returns MK_EOF at the end (and *out stays NULL).
 *  A file cut short: every packet the file holds is returned (the last one with only the
 *  bytes the file has, where FFmpeg returns it partial too: decoding it may fail, which the
 *  decoder reports as a warning, not an error), then MK_ETRUNCATED once (*out NULL,
 *  mk_last_error() names the offset of the cut, mk_demuxer_warning() lists it), then MK_EOF.
 *  Take MK_ETRUNCATED as the end with a warning, as ffmpeg does.
 *  Errors: MK_EINVAL, MK_EDATA (damage; the packets before it were good), MK_EIO. */
mk_status mk_demuxer_read_packet(mk_demuxer *demuxer, mk_packet **out);

/** Reads the next packet of one track, independently of mk_demuxer_read_packet().
 *  Same ownership and statuses; also MK_EUNSUPPORTED on a fragmented MP4 opened from a stream
 *  (mk_io without seek), which is read in one pass: by mk_demuxer_read_packet, or by this
 *  function for one track only. */
mk_status mk_demuxer_read_track_packet(mk_demuxer *demuxer, int32_t track, mk_packet **out);

/** Moves every track to the key frame at or before `seconds`. Errors: MK_EINVAL;
 *  MK_EUNSUPPORTED when the input cannot seek (a fragmented MP4 from a stream). */
mk_status mk_demuxer_seek(mk_demuxer *demuxer, double seconds);
/** Sets *count to the number of warnings so far: damage the demuxer stepped over (an Ogg
 *  page with a bad CRC, skipped) and the cut of a file cut short, once MK_ETRUNCATED was
 *  returned. Errors: MK_EINVAL. */
mk_status mk_demuxer_warning_count(mk_demuxer *demuxer, int32_t *count);
/** Sets *message to warning `index` (0 <= index < count, oldest first), a sentence naming the
 *  file, the offset and what was found. The string is BORROWED from the demuxer: valid until
 *  the next mk_demuxer_warning_count / mk_demuxer_warning / read call on it or its close.
 *  Errors: MK_EINVAL (NULL, index out of range). */
mk_status mk_demuxer_warning(mk_demuxer *demuxer, int32_t index, const char **message);

/** Limits mk_demuxer_read_packet() to `count` tracks (count 0: all tracks again),
 *  so the data of the others is never read. Errors: MK_EINVAL. */
mk_status mk_demuxer_select_tracks(mk_demuxer *demuxer, const int32_t *tracks, int32_t count);

/** A packet's fields. `data` is borrowed from the packet. */
typedef struct mk_packet_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_packet_info) */
    int32_t track;             /**< track index */
    int64_t pts, dts;          /**< in the track's time base, as stored; MK_NOPTS_VALUE if none */
    int64_t duration;          /**< 0 when unknown (see duration_stated) */
    int64_t position;          /**< byte offset in the file, -1 if none */
    int32_t is_keyframe;       /**< 1 for a sync sample */
    const uint8_t *data;
    size_t size;
    /* Added in 0.2 (filled, and read by mk_packet_create, only when struct_size covers them): */
    int32_t time_base_num;     /**< the timestamps' unit (the track's time base); 0/0 from a caller:
                                    unknown (mk_packet_create) */
    int32_t time_base_den;
    int32_t duration_stated;   /**< 1 when the container states the duration, 0 included (an MP4 stts
                                    entry of 0); 0: unknown. mk_packet_create: 1 keeps a duration of
                                    0 as stated (0 default: a zero duration is unknown) */
    int32_t trim_start;        /**< audio: samples to drop from the start of the decoded packet
                                    (FFmpeg's skip_samples side data; Ogg Opus pre-skip) */
    int32_t trim_end;          /**< audio: samples to drop from its end */
    int32_t truncated;         /**< 1 when the file ends inside this packet (data holds what it has) */
    int32_t discard;           /**< 1: decode but do not output its frames (AV_PKT_FLAG_DISCARD) */
    int32_t parameters_changed; /**< 1 on the first packet after the codec parameters changed (a chained
                                    Ogg link); the decoders of this library follow it themselves.
                                    Ignored by mk_packet_create */
} mk_packet_info;

/** Fills *info, up to info->struct_size bytes (a caller of the 0.1 header, whose struct ends at
 *  `size`, still works). Errors: MK_EINVAL. */
mk_status mk_packet_get_info(const mk_packet *packet, mk_packet_info *info);

/** Creates a packet from bytes the caller parsed itself (a network protocol, an Annex B
 *  stream, its own demuxer), to send to a decoder opened with mk_decoder_open_params or to
 *  write with mk_muxer_write_packet. Reads info->data[0 .. info->size) (COPIED: the caller's
 *  buffer may be reused as soon as this returns), info->track, pts, dts, duration (in the
 *  decoder's or the muxer track's time base; MK_NOPTS_VALUE for none) and is_keyframe, and
 *  from a 0.2 struct time_base_num / den, duration_stated, trim_start, trim_end, truncated and
 *  discard; `position` and `parameters_changed` are ignored. On success *out (OWNED by the
 *  caller) must be freed with mk_packet_free(). Errors: MK_EINVAL (NULL out or info, a
 *  struct_size smaller than the 0.1 struct, NULL data with a size, a size over 256 MiB, a
 *  negative track, time base or trim). */
mk_status mk_packet_create(mk_packet **out, const mk_packet_info *info);

/** Frees *packet and sets it to NULL. Harmless on NULL. */
void mk_packet_free(mk_packet **packet);

/* ------------------------------------------------------------------ decoder */

/** A decoder for one track. */
typedef struct mk_decoder mk_decoder;
/** A decoded picture or run of audio samples. */
typedef struct mk_frame mk_frame;

/** Values of the `trim` settings: how a track is cut to what the file presents. */
#define MK_TRIM_NONE    0   /**< every decoded frame and sample (ffmpeg -ignore_editlist 1) */
#define MK_TRIM_GAPLESS 1   /**< the edit list applied as FFmpeg applies it (priming and B-frame
                                 delay dropped); audio ends exactly where the edit list, iTunSMPB
                                 or the Ogg end granule says (the default) */
#define MK_TRIM_FFMPEG  2   /**< as FFmpeg 5.1: as MK_TRIM_GAPLESS, but the last audio frame that
                                 starts before the end is kept whole */

/** How to create a decoder. Fill with mk_decoder_default_settings() first. */
typedef struct mk_decoder_settings {
    uint32_t struct_size;      /**< sizeof(mk_decoder_settings) */
    const char *backend;       /**< a backend or plugin name to insist on; NULL: by priority. Default NULL */
    int32_t threads;           /**< decoder threads; 0 = every core. Default 0 */
    int32_t trim;              /**< MK_TRIM_GAPLESS (default), MK_TRIM_FFMPEG or MK_TRIM_NONE */
} mk_decoder_settings;

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_decoder_default_settings(mk_decoder_settings *settings);

/** Creates a decoder for track `track` of `demuxer`, through the highest-priority
 *  plugin backend for its codec. The decoder does not keep the demuxer: it may be
 *  closed first. settings may be NULL (defaults). On success *out must be closed
 *  with mk_decoder_close(). Errors: MK_EINVAL, MK_ENOTFOUND (no plugin decodes the
 *  codec; the message lists every place searched), MK_EUNSUPPORTED (unknown or
 *  encrypted track), MK_EFAIL (the backend refused). */
mk_status mk_decoder_open(mk_decoder **out, const mk_demuxer *demuxer, int32_t track,
                          const mk_decoder_settings *settings);

/** A stream's codec parameters, for decoding packets that no MediaKit demuxer read (see
 *  mk_packet_create). Fill with mk_codec_params_default() first, then set what you know. */
typedef struct mk_codec_params {
    uint32_t struct_size;      /**< sizeof(mk_codec_params) */
    int32_t media_type;        /**< MK_MEDIA_AUDIO or MK_MEDIA_VIDEO (required) */
    const char *codec;         /**< FFmpeg's codec name: "h264", "hevc", "av1", "aac", "opus" ...
                                    (required; borrowed for the call) */
    const uint8_t *extradata;  /**< the codec configuration as MP4 stores it (avcC, hvcC, av1C
                                    payload, AudioSpecificConfig, OpusHead ...) or NULL; COPIED */
    size_t extradata_size;     /**< bytes at extradata (at most 16 MiB). Default 0 */
    int32_t width, height;     /**< video, 0 if unknown. Default 0 */
    int32_t sample_rate;       /**< audio, 0 if unknown. Default 0 */
    int32_t channels;          /**< audio, 0 if unknown. Default 0 */
    int32_t time_base_num;     /**< the unit of packet and frame timestamps. Default 1 */
    int32_t time_base_den;     /**< Default 90000 */
    int32_t reorder_depth;     /**< video: frames of B-frame reordering when known (the MP4
                                    ctts depth); 0: as the bitstream says. Default 0 */
    /* Added in 0.2 (read only when struct_size covers them; a caller built against the 0.1
     * header, whose struct ends at reorder_depth, passes its smaller struct unchanged and gets
     * the defaults below). Set by mk_codec_params_default(). */
    const char *codec_tag;     /**< the container's tag to write: "avc1" or "avc3" (H.264), "hvc1" or
                                    "hev1" (HEVC); NULL (default): the codec's usual one. Borrowed for the call */
    const char *language;      /**< muxer: ISO 639-2/T code ("eng"); NULL (default): "und". MP4 writes
                                    it (mdhd); Matroska and Ogg do not. Borrowed for the call */
    int32_t matrix[9];         /**< muxer: the display matrix, row-major (a b u c d v x y w), a b c d x y
                                    in 16.16 fixed point, u v w in 2.30, as MP4's tkhd and
                                    mk_track_info.matrix; all zero (default): identity. MP4 only */
    int32_t encoder_delay;     /**< audio: priming samples (at sample_rate) to drop at the start.
                                    Default 0. A decoder from these parameters drops them from its
                                    output. A muxer: MP4 writes delay and padding as an edit list (the
                                    samples between them are presented, as FFmpeg and Apple apply it);
                                    Matroska and Ogg take them only where the codec states them
                                    (the Opus pre-skip of extradata): other values are MK_EUNSUPPORTED */
    int32_t encoder_padding;   /**< audio: padding samples (at sample_rate) to drop at the end. Default 0 */
    int64_t bit_rate;          /**< average bits per second, 0 (default) if unknown */
    int32_t sample_aspect_num; /**< video: pixel aspect ratio (MP4 pasp), 0/1 (default) if not stated */
    int32_t sample_aspect_den;
    int32_t color_range;       /**< video: 0 unknown (default), 1 limited, 2 full */
    int32_t color_primaries;   /**< video: ISO/IEC 23091-2 code points; 2 (default) or 0: unspecified.
                                    Pictures whose bitstream does not say take these */
    int32_t color_transfer;
    int32_t color_space;       /**< the matrix coefficients code point */
    int32_t bits_per_coded_sample; /**< bits per coded sample (PCM: 16, 24 ...); 0 (default) if unknown */
    int32_t block_align;       /**< audio: bytes per packet of constant-size codecs; 0 (default) */
    uint64_t channel_mask;     /**< audio: WAVE channel mask of the speakers, 0 (default): none stated */
} mk_codec_params;

/** Fills *params with the defaults (no codec, time base 1/90000). Harmless on NULL. */
void mk_codec_params_default(mk_codec_params *params);

/** Creates a decoder from codec parameters rather than a demuxer's track, for packets made
 *  with mk_packet_create (their `track` is ignored). No edit list applies: settings->trim
 *  only matters for per-packet trims, which such packets do not carry. settings may be
 *  NULL (defaults). On success *out must be closed with mk_decoder_close(). Errors:
 *  MK_EINVAL (NULL out or params, a small struct_size, no codec, a media_type that is not
 *  audio or video, NULL extradata with a size, a non-positive time base), MK_ENOTFOUND (no
 *  plugin decodes the codec; the message lists every place searched), MK_EFAIL (the
 *  backend refused the parameters). */
mk_status mk_decoder_open_params(mk_decoder **out, const mk_codec_params *params,
                                 const mk_decoder_settings *settings);

/** Closes *decoder and sets it to NULL. Frames already received stay valid. */
void mk_decoder_close(mk_decoder **decoder);

/** Sends a packet of the decoder's track (borrowed for the call); NULL starts
 *  draining at the end of the stream. The model is libavcodec's: MK_OK means the packet
 *  was taken; MK_EAGAIN means frames are waiting and the packet was NOT taken: receive
 *  until mk_decoder_receive_frame returns MK_EAGAIN, then send the same packet again.
 *  Receiving every frame after each send avoids MK_EAGAIN here. Packets whose frames are
 *  not presented (outside the edit list) are decoded as references without output.
 *  Errors: MK_EINVAL (NULL decoder, packet of another track), MK_ESTATE (a packet after
 *  draining started), MK_EDATA (the decoder rejects the data), MK_EFAIL. */
mk_status mk_decoder_send_packet(mk_decoder *decoder, const mk_packet *packet);

/** Receives the next decoded frame into *out (free it with mk_frame_free), decoding as
 *  needed: nothing is queued on the host side. MK_EAGAIN: send another packet; MK_EOF:
 *  drained after a NULL send. Errors: MK_EINVAL, MK_EDATA, MK_EFAIL. */
mk_status mk_decoder_receive_frame(mk_decoder *decoder, mk_frame **out);

/** Drops buffered packets and frames (after mk_demuxer_seek) and accepts packets
 *  again, also after draining. Errors: MK_EINVAL. */
mk_status mk_decoder_reset(mk_decoder *decoder);

/** Sample-accurate seek: moves `demuxer` (the one the decoder's track came from) to the key
 *  frame at or before `seconds` (one second earlier for audio, to prime the decoder; the key
 *  frame before that one where it opens an open GOP, e.g. an H.264 I frame that is not an
 *  IDR, so that no frame from `seconds` on is lost), drops
 *  what the decoder holds, and makes the first frame it then returns the one presented at
 *  `seconds` (audio: from that exact sample). Then read the track's packets and decode as
 *  usual. Neither handle is kept. Errors: MK_EINVAL (NULL, a negative or non-finite time, a
 *  decoder opened with mk_decoder_open_params), the demuxer's seek errors. */
mk_status mk_decoder_seek(mk_decoder *decoder, mk_demuxer *demuxer, double seconds);

/* Frame formats: MK_PIXEL_* (video) and MK_SAMPLES_* (audio), in mediakit_types.h. */

/** A frame's fields. Plane pointers are borrowed from the frame. */
typedef struct mk_frame_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_frame_info) */
    int32_t media_type;        /**< MK_MEDIA_AUDIO or MK_MEDIA_VIDEO */
    int32_t format;            /**< MK_PIXEL_* or MK_SAMPLES_* */
    int64_t pts;               /**< presentation time in the track's time base */
    int64_t duration;
    int32_t time_base_num, time_base_den;
    int32_t width, height;     /**< video */
    int32_t sample_rate;       /**< audio */
    int32_t channels;          /**< audio */
    int32_t sample_count;      /**< audio: samples per channel */
    int32_t plane_count;
    const uint8_t *planes[8];
    int64_t strides[8];        /**< video: bytes per row; audio: bytes in the plane */
    int64_t plane_sizes[8];    /**< bytes that may be read from each plane */
    /* Added in 0.2 (filled only when struct_size covers them): */
    int32_t is_keyframe;       /**< video: 1 for a key frame */
    int32_t color_range;       /**< video: 0 unknown, 1 limited, 2 full */
    int32_t color_primaries;   /**< video: ISO/IEC 23091-2 code points; 2: unspecified */
    int32_t color_transfer;
    int32_t color_space;       /**< the matrix coefficients code point */
    int32_t chroma_location;   /**< video: 0 unspecified, 1 left, 2 center, 3 top-left, 4 top,
                                    5 bottom-left, 6 bottom (FFmpeg's AVChromaLocation) */
    int32_t sample_aspect_num; /**< video: the shape of one pixel, 0/1 when unknown */
    int32_t sample_aspect_den;
    uint64_t channel_mask;     /**< audio: WAVE channel mask, 0 if unknown */
} mk_frame_info;

/** Fills *info, up to info->struct_size bytes (a caller of the 0.1 header, whose struct ends at
 *  plane_sizes, still works). Errors: MK_EINVAL. */
mk_status mk_frame_get_info(const mk_frame *frame, mk_frame_info *info);

/** Packed layouts for mk_frame_pack(). */
#define MK_PACK_NV12     1   /**< video: Y plane, then interleaved UV, chroma halved both ways */
#define MK_PACK_I420     2   /**< video: Y, U, V planes without padding */
#define MK_PACK_S16      3   /**< audio: interleaved signed 16-bit little-endian */
#define MK_PACK_F32      4   /**< audio: interleaved 32-bit float little-endian */

/** Writes the frame in a packed layout into `buffer` (capacity bytes) and sets
 *  *size to the bytes written. With buffer NULL, only sets *size to the bytes
 *  needed. Errors: MK_EINVAL (NULL, layout does not fit the media type, buffer
 *  too small: *size still says what is needed), MK_EUNSUPPORTED (pictures
 *  that need a conversion, e.g. 10-bit or 4:4:4 to NV12, when no loaded plugin
 *  has a picture converter; the FFmpeg plugin's converts them as ffmpeg's
 *  -pix_fmt does, with libswscale). */
mk_status mk_frame_pack(const mk_frame *frame, int32_t layout, uint8_t *buffer, size_t capacity, size_t *size);

/** As mk_frame_pack() for MK_PACK_NV12 / MK_PACK_I420, with the picture scaled to
 *  `width` x `height` (each 1 to 16384) by a plugin's picture converter first, resampled
 *  with `filter` (MK_SCALE_*, mediakit_types.h; MK_SCALE_DEFAULT is MK_SCALE_BICUBIC). The
 *  FFmpeg plugin's converter (libswscale) writes the bytes of
 *  `ffmpeg -vf scale=W:H:flags=bicubic -pix_fmt nv12|yuv420p`; a picture already of that
 *  size is packed as mk_frame_pack() packs it, as ffmpeg's scale filter passes it on.
 *  *size is set to width * height plus the chroma planes. Errors: those of
 *  mk_frame_pack(), MK_EINVAL (an audio layout, a size out of range, an unknown filter),
 *  MK_EUNSUPPORTED (no loaded plugin has a converter that scales). Thread-safe (calls are
 *  serialised per layout, size and filter). */
mk_status mk_frame_pack_scaled(const mk_frame *frame, int32_t layout, int32_t width, int32_t height, int32_t filter,
                               uint8_t *buffer, size_t capacity, size_t *size);

/** A packed layout's planes for one frame, and whether the frame's memory already holds
 *  them (mk_frame_view()). */
typedef struct mk_frame_view_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_frame_view_info) */
    int32_t plane_count;       /**< the layout's planes: MK_PACK_NV12 2 (Y, UV), MK_PACK_I420 3
                                    (Y, U, V); 0 for the audio layouts */
    int32_t in_place;          /**< 1: planes[] point into the frame's memory; 0: the frame must
                                    be converted or packed (mk_frame_pack writes the planes one
                                    after the other, rows of row_bytes) and planes[] are NULL */
    const uint8_t *planes[4];  /**< when in_place: borrowed from the frame, valid until mk_frame_free() */
    int64_t strides[4];        /**< when in_place: bytes from one row to the next (>= row_bytes:
                                    rows may be padded); else row_bytes */
    int64_t row_bytes[4];      /**< bytes of one row of the plane in the layout */
    int64_t rows[4];           /**< rows of the plane */
} mk_frame_view_info;

/** Describes `layout`'s planes for this frame and says whether the frame's memory already
 *  holds them, so that they can be read in place instead of packed: an NV12 picture as
 *  MK_PACK_NV12, a yuv420p picture as MK_PACK_I420 (the bytes are
 *  then those mk_frame_pack() writes, row for row). A picture that needs a conversion or its
 *  chroma interleaved or split gives in_place 0. Nothing is copied or allocated.
 *  Errors: MK_EINVAL (NULL, struct_size too small, unknown layout or one that does not fit
 *  the media type). Thread-safe. */
mk_status mk_frame_view(const mk_frame *frame, int32_t layout, mk_frame_view_info *view);

/** Frees *frame and sets it to NULL. Harmless on NULL. Thread-safe. */
void mk_frame_free(mk_frame **frame);

/** How a picture is turned for display: any of the eight quarter-turn rotations and
 *  reflections. Applied as: swap rows and columns when `transposed` (the width becomes the
 *  height), then mirror left-right when `hflip`, then top-bottom when `vflip`; so a clockwise
 *  quarter turn is {1, 1, 0}, a half turn {0, 1, 1}, upright {0, 0, 0}. Each field is 0 or 1.
 *  Fixed layout: it never grows (a new type would be added instead). */
typedef struct mk_orientation {
    int32_t transposed;        /**< rows become columns (ffmpeg's transpose) */
    int32_t hflip;             /**< mirrored left-right, after the transpose (ffmpeg's hflip) */
    int32_t vflip;             /**< mirrored top-bottom, after the transpose (ffmpeg's vflip) */
} mk_orientation;

/** Sets *out to how a track whose display matrix is `matrix` (9 values, as
 *  mk_track_info.matrix) is turned upright, as FFmpeg's autorotation turns it: the angle of
 *  the matrix rounded to whole degrees, its signs choosing among transpose / hflip / vflip. A
 *  matrix whose angle is not a multiple of 90 degrees gives upright. Writes nothing else;
 *  nothing to free. Errors: MK_EINVAL (NULL). Thread-safe. */
mk_status mk_orientation_from_matrix(const int32_t matrix[9], mk_orientation *out);

/** Sets *out to a clockwise turn by `degrees` (0, 90, 180 or 270). Nothing to free.
 *  Errors: MK_EINVAL (NULL, another angle). Thread-safe. */
mk_status mk_orientation_clockwise(int32_t degrees, mk_orientation *out);

/** Sets *out to a NEW frame (OWNED by the caller: free it with mk_frame_free) holding
 *  `frame`'s picture turned by `orientation`, in its own memory and the same pixel format:
 *  what ffmpeg's transpose / hflip / vflip filters give. Every planar format, NV12 / P010 and
 *  gray can be turned; a transpose needs the same chroma subsampling both ways (4:2:0, 4:4:4).
 *  An upright orientation gives a new reference to the same picture (still to be freed).
 *  `frame` is only read (it stays the caller's). On error *out is NULL.
 *  Errors: MK_EINVAL (NULL, an audio frame, a field other than 0 or 1), MK_EUNSUPPORTED (a
 *  transpose of 4:2:2 pictures). */
mk_status mk_frame_orient(const mk_frame *frame, const mk_orientation *orientation, mk_frame **out);

/* ------------------------------------------------------------------ muxer */

/** A container file being written: MP4, Matroska / WebM or Ogg, by the extension. */
typedef struct mk_muxer mk_muxer;

/** MP4 layouts. */
#define MK_LAYOUT_PROGRESSIVE 0   /**< moov at the end (default) */
#define MK_LAYOUT_FASTSTART   1   /**< moov at the front, for progressive download */
#define MK_LAYOUT_FRAGMENTED  2   /**< moof + mdat fragments: a crash leaves a playable file */
#define MK_LAYOUT_HYBRID      3   /**< fragmented while written, progressive once finished */

/** How to write. Fill with mk_muxer_default_settings() first. */
typedef struct mk_muxer_settings {
    uint32_t struct_size;      /**< sizeof(mk_muxer_settings) */
    int32_t layout;            /**< MK_LAYOUT_*. Default MK_LAYOUT_PROGRESSIVE */
    double fragment_seconds;   /**< fragment length for FRAGMENTED / HYBRID. Default 2.0 */
    /* Added in 0.2 (read only when struct_size covers them), for mk_remux only: mk_muxer_open
     * refuses them (MK_EINVAL). */
    const int32_t *tracks;     /**< the source tracks to copy, in this order (borrowed for the call);
                                    NULL (default): every track */
    int32_t track_count;       /**< entries at tracks. Default 0 */
    mk_progress_callback progress; /**< NULL (default) or called after each packet with packets
                                    written and packets in all; non-zero cancels (MK_ECANCELLED) */
    void *progress_user;       /**< passed to progress. Default NULL */
    /* Added in 0.2 (read only when struct_size covers them), for mk_muxer_open of MP4 files only:
     * mk_remux (which takes them from its source) and the other containers refuse values other
     * than the defaults (MK_EINVAL). */
    double chunk_seconds;      /**< progressive / fast-start: target chunk duration in seconds
                                    (0.001 to 3600). Default 0.5 */
    int64_t movie_time_scale;  /**< ticks per second of the movie (mvhd; the unit of edit list
                                    durations), 1 to 4294967295. Default 1000 */
    int64_t reserved_moov_bytes; /**< fast-start: bytes reserved before the media data for the moov
                                    (a `free` box); when the moov fits, mk_muxer_finish copies
                                    nothing. 0 (default): copy; at most 256 MiB */
    int32_t write_mfra;        /**< fragmented / hybrid: 1 (default) writes an mfra random-access
                                    index at the end; 0 does not */
    const uint8_t *user_data;  /**< a whole `udta` box (its size and type first) written verbatim
                                    into the moov (metadata, chapters ...); borrowed for the
                                    mk_muxer_open call. NULL (default): none */
    size_t user_data_size;     /**< bytes at user_data (at most 16 MiB). Default 0 */
} mk_muxer_settings;

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_muxer_default_settings(mk_muxer_settings *settings);

/** Starts writing a file at `path`, in the container its extension names (as the Swift
 *  core's ContainerCatalog.makeMuxer): MP4 (.mp4 .m4a .m4v .mov .3gp), Matroska (.mkv .mka
 *  .mk3d), WebM (.webm: VP8, VP9, AV1, Opus, Vorbis) or Ogg (.ogg .oga; .opus: Opus only).
 *  Progressive and fast-start files are written to a temporary file beside `path` and renamed
 *  by mk_muxer_finish(); fragmented and hybrid MP4 files are written to "<path>.partial" (what
 *  a crash leaves behind) and renamed at the end. The layouts other than
 *  MK_LAYOUT_PROGRESSIVE are MP4's. settings may be NULL. On success *out (OWNED by the
 *  caller) must be closed with mk_muxer_close().
 *  Errors: MK_EINVAL (NULL, bad settings, a layout other than progressive for Matroska or
 *  Ogg), MK_EUNSUPPORTED (an extension no muxer writes: the message lists those that are
 *  written), MK_EIO (the directory cannot be written). */
mk_status mk_muxer_open(mk_muxer **out, const char *path, const mk_muxer_settings *settings);

/** Adds a copy of a demuxer's track (codec configuration, language, rotation, edit list,
 *  an unknown sample entry verbatim) and sets *index to its index in the new file.
 *  Call before the first mk_muxer_write_packet(). Errors: MK_EINVAL, MK_ESTATE (after
 *  writing started or after finish), MK_EUNSUPPORTED (an encrypted track). */
mk_status mk_muxer_add_track(mk_muxer *muxer, const mk_demuxer *demuxer, int32_t track, int32_t *index);

/** Adds a track described by codec parameters, for compressed samples that no MediaKit demuxer
 *  read (the program's own parser, a network depacketiser, an encoder), and sets *index to its
 *  index in the new file. `params` is BORROWED for the call (strings and extradata are copied).
 *  Its time base is the track's: the packets written to it carry timestamps in it (an MP4
 *  track's time scale is its denominator). What the container needs: H.264 / HEVC / AV1 their
 *  avcC / hvcC / av1C in extradata and a width and height; AAC its AudioSpecificConfig, Opus
 *  its OpusHead, FLAC its STREAMINFO, with the rate and channels; Matroska also takes the codec
 *  private data as extradata. Also reads (0.2 struct) codec_tag, language, matrix, encoder delay
 *  and padding, sample aspect ratio, bit rate, colour, channel mask; see mk_codec_params.
 *  Call before the first mk_muxer_write_packet(). Errors: MK_EINVAL (NULL, a small struct_size,
 *  no codec, a media type other than audio or video, a non-positive time base, a missing
 *  configuration, size, rate or channel count the container needs: the message names it),
 *  MK_ESTATE (after writing started, or after finish), MK_EUNSUPPORTED (a codec the container
 *  does not carry, a trim it cannot state). */
mk_status mk_muxer_add_track_params(mk_muxer *muxer, const mk_codec_params *params, int32_t *index);

/** Writes a packet into track `index` of the new file: one read from a demuxer, or one made
 *  with mk_packet_create() (its `track` field is ignored). The packet stays the caller's
 *  (BORROWED for the call). Its pts, dts and duration are in the track's time base (that of
 *  the demuxer's track or of mk_codec_params); a dts of MK_NOPTS_VALUE is taken as the pts
 *  (right for audio and for video without reordering), a duration of 0 as unknown (the
 *  container derives it from the next packet). Packets of each track must come in decoding
 *  order. Errors: MK_EINVAL (bad index or handle, no timestamp at all, a dts going back),
 *  MK_ESTATE (after finish), MK_EIO. */
mk_status mk_muxer_write_packet(mk_muxer *muxer, int32_t index, const mk_packet *packet);

/** Completes the file and moves it to its final name. Errors: MK_EINVAL, MK_ESTATE
 *  (finished twice), MK_EIO (the target name is then left untouched). */
mk_status mk_muxer_finish(mk_muxer *muxer);

/** Sets *path to the file an MP4 muxer is writing now: "<path>.partial" for the fragmented and
 *  hybrid layouts (what a crash leaves behind, playable up to its last fragment), a hidden
 *  temporary file beside the target for the others; the target path once finished. BORROWED:
 *  valid until the next call on the muxer or its close. Errors: MK_EINVAL (NULL),
 *  MK_EUNSUPPORTED (a Matroska or Ogg muxer). */
mk_status mk_muxer_in_progress_path(mk_muxer *muxer, const char **path);

/** Abandons the file and removes what was written. Errors: MK_EINVAL. */
mk_status mk_muxer_cancel(mk_muxer *muxer);

/** Closes *muxer (cancelling it if it was not finished) and sets it to NULL. Harmless on NULL. */
void mk_muxer_close(mk_muxer **muxer);

/* ------------------------------------------------------------------ session */

/** A decode session: one track of a demuxer decoded on a thread the library owns, as the
 *  iOS video decoder (VTDecompressionSession) decodes on its own queue. The frames come out in
 *  presentation order, trimmed as mk_decoder's are (edit list, gapless audio), either one at a
 *  time from mk_session_read_frame() or through callbacks (mk_session_start()). Decoding runs
 *  ahead of the consumer by at most `queue_frames` frames (then the session's thread waits:
 *  back-pressure, memory stays flat). Damaged data is stepped over: the decoder is rebuilt
 *  and the packets of the current GOP sent to it again, their output discarded; the session
 *  gives up (an error) after `max_failed_packets` consecutive rejected packets or
 *  `max_rebuilds` consecutive failed rebuilds. mk_session_seek() is sample-accurate.
 *
 *      mk_session *s = NULL;
 *      if (mk_session_open(&s, dmx, track, NULL) != MK_OK) { puts(mk_last_error()); ... }
 *      mk_frame *f = NULL;
 *      mk_status st;
 *      while ((st = mk_session_read_frame(s, &f)) == MK_OK) { ...; mk_frame_free(&f); }
 *      if (st != MK_EOF) puts(mk_last_error());  // a decoding error
 *      mk_session_close(&s);
 *
 *  Threads: the functions below may be called from any thread, also from the session's
 *  callbacks (except mk_session_close). */
typedef struct mk_session mk_session;

/** How to create a session. Fill with mk_session_default_settings() first. */
typedef struct mk_session_settings {
    uint32_t struct_size;      /**< sizeof(mk_session_settings) */
    const char *backend;       /**< a backend or plugin name to insist on; NULL: by priority
                                    (default). Borrowed for the open call */
    int32_t threads;           /**< decoder threads; 0 = every core. Default 0 */
    int32_t trim;              /**< MK_TRIM_GAPLESS (default), MK_TRIM_FFMPEG or MK_TRIM_NONE */
    int32_t recovery;          /**< 1: step over damaged data (default); 0: the decoder's first
                                    error ends the session */
    int32_t max_failed_packets;/**< consecutive rejected packets before giving up. Default 20 */
    int32_t max_rebuilds;      /**< consecutive failed decoder rebuilds before giving up. Default 5 */
    int32_t queue_frames;      /**< frames decoded ahead of the consumer at most (>= 1). Default 8 */
} mk_session_settings;

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_session_default_settings(mk_session_settings *settings);

/** Creates a session decoding track `track` of `demuxer`. The session reads the demuxer on
 *  its own thread from now on: do not call mk_demuxer_* functions on it (other than
 *  mk_demuxer_close) until the session is closed. Closing the demuxer first is allowed: the
 *  session keeps what it needs. Nothing is decoded before the first mk_session_read_frame()
 *  or mk_session_start(). settings may be NULL (defaults). On success *out must be closed with
 *  mk_session_close(). Errors: those of mk_decoder_open, MK_EINVAL (bad settings: a zero
 *  queue_frames, negative limits, an unknown trim). */
mk_status mk_session_open(mk_session **out, mk_demuxer *demuxer, int32_t track, const mk_session_settings *settings);

/** One recovery from damaged data, as the recovery callback gets it (borrowed for the call) or
 *  mk_session_get_recovery() gives it. */
typedef struct mk_recovery_info {
    uint32_t struct_size;      /**< sizeof(mk_recovery_info): of the library in a callback; set by
                                    the caller for mk_session_get_recovery() */
    int64_t pts;               /**< the rejected packet's pts (track time base), MK_NOPTS_VALUE for
                                    an error while receiving a frame */
    int64_t position;          /**< the rejected packet's byte offset in the file, -1 if unknown */
    int32_t rebuilt;           /**< 1 when the decoder was rebuilt and primed with the GOP */
    int32_t frames_lost;       /**< frames not output because of it */
    mk_status status;          /**< the decoder's error (MK_EDATA, MK_EFAIL ...) */
    const char *message;       /**< the decoder's message */
} mk_recovery_info;

/** The callbacks of mk_session_start(). They are called one at a time, in order (frames in
 *  presentation order, each recovery where it happened, then `end` or `error` last), on a
 *  thread the library owns, never on the caller's. `user` is mk_session_start's. */
typedef struct mk_session_callbacks {
    uint32_t struct_size;      /**< sizeof(mk_session_callbacks) */
    /** Required. A presented frame. *frame is the callee's: free it with mk_frame_free(), on
     *  any thread, now or later (a frame kept holds the decoder's memory). At most
     *  queue_frames callbacks wait at a time: a slow callback slows the decoding. */
    void (*frame)(void *user, mk_frame *frame);
    /** Optional (NULL). A recovery from damaged data; `info` is borrowed for the call. */
    void (*recovery)(void *user, const mk_recovery_info *info);
    /** Optional. The decoding failed (the session gives up: nothing follows but what a
     *  mk_session_seek() starts again); `message` is borrowed for the call. */
    void (*error)(void *user, mk_status status, const char *message);
    /** Optional. The end of the track: every frame was delivered. */
    void (*end)(void *user);
} mk_session_callbacks;

/** Starts decoding and delivering frames through `callbacks` (copied; `user` is passed to
 *  each and must stay valid until mk_session_close). Errors: MK_EINVAL (NULL, small
 *  struct_size, no frame callback), MK_ESTATE (already started, or mk_session_read_frame
 *  was used). */
mk_status mk_session_start(mk_session *session, const mk_session_callbacks *callbacks, void *user);

/** Waits for the next presented frame and sets *out to it (a new frame: free it with
 *  mk_frame_free). Returns MK_EOF at the end of the track (*out NULL), or the error that
 *  ended the decoding (MK_EDATA with a message naming the packets and rebuilds, ...).
 *  Errors: MK_EINVAL, MK_ESTATE (the session delivers through callbacks). */
mk_status mk_session_read_frame(mk_session *session, mk_frame **out);

/** Sample-accurate seek: frames not yet delivered are dropped, and the next frame delivered
 *  is the one presented at `seconds` (audio: from that exact sample). Also after the end of
 *  the track or an error: decoding starts again. Errors: MK_EINVAL (NULL, negative or not
 *  finite). */
mk_status mk_session_seek(mk_session *session, double seconds);

/** Mid-stream flush (the iOS decoder's): the decoder's delayed frames are delivered, then
 *  `completion(user)` is called (may be NULL), and decoding goes on with the next packet;
 *  this is not the end of the stream. With callbacks, `completion` runs on their thread after
 *  the last drained frame's callback; with mk_session_read_frame, on the session's thread
 *  once the drained frames are queued (ahead of later frames). After the end (or close)
 *  it is called at once. Errors: MK_EINVAL. */
mk_status mk_session_flush(mk_session *session, void (*completion)(void *user), void *user);

/** What a session did so far. */
typedef struct mk_session_stats {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_session_stats) */
    int64_t frames;            /**< frames delivered (not those dropped by a seek) */
    int32_t recoveries;        /**< recoveries from damaged data */
    int32_t rebuilds;          /**< decoder rebuilds */
    int32_t frames_lost;       /**< frames lost to damaged data */
    int32_t warnings;          /**< damage stepped over without failing (recoveries, a cut) */
} mk_session_stats;

/** Fills *stats. Errors: MK_EINVAL (NULL, small struct_size). */
mk_status mk_session_get_stats(mk_session *session, mk_session_stats *stats);

/** Fills *info with recovery `index` of the session (0 <= index < mk_session_stats.recoveries,
 *  oldest first): the same record the recovery callback gets, for a session read with
 *  mk_session_read_frame() too. Set info->struct_size to sizeof(mk_recovery_info) first.
 *  info->message is BORROWED from the session: valid until mk_session_close(). Nothing to free.
 *  Errors: MK_EINVAL (NULL, small struct_size, index out of range). */
mk_status mk_session_get_recovery(mk_session *session, int32_t index, mk_recovery_info *info);

/** Stops the session and sets *session to NULL: its thread ends, frames not yet delivered are
 *  freed, and no callback runs once this returns (so never call it from a callback). Frames
 *  already handed out stay valid. Harmless on NULL. */
void mk_session_close(mk_session **session);

/* ------------------------------------------------------------------ one call */

/** How mk_decode_file() writes. Fill with mk_decode_default_settings() first. */
typedef struct mk_decode_settings {
    uint32_t struct_size;      /**< sizeof(mk_decode_settings) */
    int32_t video_layout;      /**< MK_PACK_NV12 (default) or MK_PACK_I420 */
    int32_t audio_layout;      /**< MK_PACK_S16 (default) or MK_PACK_F32 */
    int32_t wav;               /**< 1: write the audio as WAV. Default 0 */
    int32_t y4m;               /**< 1: write the video as YUV4MPEG2. Default 0 */
    int32_t trim;              /**< MK_TRIM_GAPLESS (default), MK_TRIM_FFMPEG or MK_TRIM_NONE */
    int32_t autorotate;        /**< 1: turn pictures upright as ffmpeg does (default) */
    int32_t threads;           /**< decoder threads, 0 = every core (default) */
    const char *backend;       /**< backend or plugin name; NULL: by priority (default) */
    /* Added in 0.2 (read only when struct_size covers them): */
    mk_progress_callback progress; /**< NULL (default) or called with milliseconds decoded of the
                                    longest track's; non-zero from it cancels (MK_ECANCELLED) */
    void *progress_user;       /**< passed to progress. Default NULL */
    /* Added in 0.2 as well (read only when struct_size covers them): mk-decode's choices. */
    int32_t sample_format;     /**< an interleaved MK_SAMPLES_* type to write the audio in (u8, s16,
                                    s24, s32, f32, f64); 0 (default): audio_layout's */
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
 *  Errors: those of mk_demuxer_open and mk_decoder_open, MK_ENOTFOUND (the file
 *  lacks the track), MK_EUNSUPPORTED, MK_ECANCELLED, MK_EIO. */
mk_status mk_decode_file(const char *path, const char *audio_out, const char *video_out,
                         const mk_decode_settings *settings);

/** Copies the tracks of `src` (any container MediaKit reads; settings->tracks chooses them,
 *  NULL: every track) into a new file at `dst` without decoding, as the mk-remux sample does:
 *  MP4 (any layout), Matroska / WebM or Ogg, by dst's extension. settings may be NULL
 *  (progressive, every track). settings->progress is called after each packet. A failure or a
 *  cancel leaves nothing under `dst`. Errors: those of mk_demuxer_open and mk_muxer_open,
 *  MK_EINVAL (a track that does not exist), MK_EUNSUPPORTED (an encrypted track, a codec the
 *  container does not carry), MK_ECANCELLED, MK_EIO (the target name is then left untouched). */
mk_status mk_remux(const char *src, const char *dst, const mk_muxer_settings *settings);

/* ------------------------------------------------------------------ stream parser */

/** A push parser for MP3 (MPEG audio Layer I/II/III) and ADTS AAC that arrive in pieces, as
 *  iOS's AudioFileStream: hand it bytes in any chunking with mk_stream_parser_push(), then take
 *  the events that became known with mk_stream_parser_next_event() until it returns MK_EAGAIN.
 *  Bytes that do not complete a frame are kept: never push them again. One thread at a time.
 *
 *      mk_stream_parser *sp = NULL;
 *      mk_stream_parser_open(&sp, -1);
 *      while ((n = read(fd, buf, sizeof buf)) > 0) {
 *          mk_stream_parser_push(sp, buf, n, 0);
 *          mk_stream_event ev; ev.struct_size = sizeof ev;
 *          while (mk_stream_parser_next_event(sp, &ev) == MK_OK)
 *              if (ev.kind == MK_STREAM_EVENT_PACKET) use(ev.data, ev.size, ev.offset);
 *      }
 *      mk_stream_parser_finish(sp);   ... then drain the events again
 *      mk_stream_parser_close(&sp);
 */
typedef struct mk_stream_parser mk_stream_parser;

#define MK_STREAM_EVENT_FILE_FORMAT   1  /**< text: "mp3" or "adts" */
#define MK_STREAM_EVENT_DATA_FORMAT   2  /**< text: codec ("mp3", "aac" ...); sample_rate, channels, frames_per_packet */
#define MK_STREAM_EVENT_MAGIC_COOKIE  3  /**< data/size: the decoder configuration (ADTS: AudioSpecificConfig) */
#define MK_STREAM_EVENT_DATA_OFFSET   4  /**< offset: the first audio frame */
#define MK_STREAM_EVENT_BYTE_COUNT    5  /**< value: audio bytes a Xing / VBRI header states */
#define MK_STREAM_EVENT_PACKET_COUNT  6  /**< value: audio packets a Xing / VBRI header states */
#define MK_STREAM_EVENT_BIT_RATE      7  /**< value: bits per second; flags & 1: exact (constant bit rate) */
#define MK_STREAM_EVENT_DURATION      8  /**< seconds; flags & 1: estimated */
#define MK_STREAM_EVENT_GAPLESS       9  /**< value: encoder delay, value2: padding (samples, from LAME's tag) */
#define MK_STREAM_EVENT_TAGS         10  /**< text: the title read so far (all tags: through Swift / Python) */
#define MK_STREAM_EVENT_READY        11  /**< the format is known: packets follow */
#define MK_STREAM_EVENT_PACKET       12  /**< offset, data/size, frames; flags & 1: the stream ends inside it */
#define MK_STREAM_EVENT_WARNING      13  /**< text: damage skipped (the message names the offset) */

/** One event. Pointers (text, data) are borrowed from the parser and valid until the next
 *  call on it. */
typedef struct mk_stream_event {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_stream_event) */
    int32_t kind;              /**< MK_STREAM_EVENT_* */
    const char *text;          /**< see the kinds; "" when none */
    const uint8_t *data;       /**< packet bytes or magic cookie; NULL when none */
    size_t size;
    int64_t offset;            /**< byte offset in the stream (packets, data offset) */
    int64_t value, value2;     /**< see the kinds */
    double seconds;            /**< duration */
    int32_t sample_rate, channels, frames_per_packet;
    int32_t frames;            /**< packet: samples per channel */
    int32_t flags;             /**< see the kinds */
} mk_stream_event;

/** Creates a parser. `total_bytes` is the stream's length when known (for duration estimates),
 *  else -1. On success *out is new: close it with mk_stream_parser_close(). Errors: MK_EINVAL. */
mk_status mk_stream_parser_open(mk_stream_parser **out, int64_t total_bytes);

/** Parses the next `size` bytes (copied; `data` may be freed on return). A nonzero
 *  `discontinuity` (after a seek or a gap) drops what is kept and looks for a confirmed frame
 *  again; the bytes then start at the offset mk_stream_parser_seek() returned.
 *  Errors: MK_EINVAL, MK_EUNSUPPORTED (ADIF AAC). */
mk_status mk_stream_parser_push(mk_stream_parser *parser, const uint8_t *data, size_t size, int32_t discontinuity);

/** Ends the input: the last frame and the bit rate become events. Errors: MK_EINVAL. */
mk_status mk_stream_parser_finish(mk_stream_parser *parser);

/** Takes the oldest event not taken yet into *event. Returns MK_EAGAIN when there is none (push
 *  more bytes). Errors: MK_EINVAL (NULL, small struct_size). */
mk_status mk_stream_parser_next_event(mk_stream_parser *parser, mk_stream_event *event);

/** Where to push from for `seconds`: the byte offset, the packet index, and *exact = 1 when the
 *  offset is that packet's start (else estimated: parsing resynchronises). Any output pointer may
 *  be NULL. Errors: MK_EINVAL, MK_ESTATE (nothing parsed yet to seek with). */
mk_status mk_stream_parser_seek(mk_stream_parser *parser, double seconds, int64_t *offset, int64_t *packet, int32_t *exact);

/** Closes *parser and sets it to NULL; NULL is harmless. */
void mk_stream_parser_close(mk_stream_parser **parser);

/* ---------------------------------------------------------- audio converter */

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
    /* Added in 0.2 (read only when struct_size covers them): */
    int64_t prime_leading;     /**< input frames dropped at the start (an encoder's priming); they
                                    still feed the filter as history. Default 0 */
    int64_t prime_trailing;    /**< input frames dropped at the end (an encoder's padding). Default 0 */
} mk_audio_converter_settings;

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
} mk_audio_converter_stats;

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
 *  wanted is fine, 0 is the end of the stream, a negative value an error that
 *  mk_audio_converter_fill returns as MK_EFAIL. */
typedef int32_t (*mk_audio_input_callback)(void *user, int32_t wanted, const void *const **planes);

/** Pull (PCM converters): fills planes with `frames` output frames, calling `input` for
 *  source frames as needed; *filled is less than `frames` only at the end of the stream
 *  (0 once everything was returned). Output waiting from mk_audio_converter_push comes
 *  first. Errors: MK_EINVAL, MK_EFAIL (the callback failed). */
mk_status mk_audio_converter_fill(mk_audio_converter *converter, void *const *planes, int32_t frames,
                                  mk_audio_input_callback input, void *user, int32_t *filled);

/* ------------------------------------------------------------------ encoder */

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
    int32_t copy_video;        /**< mk_transcode: 1 copies the video tracks into an MP4 output (default 0) */
    /* Added in 0.2 (read only when struct_size covers them), for mk_transcode only:
     * mk_encoder_open refuses them (MK_EINVAL). */
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
 *  settings may be NULL. Errors: those of mk_demuxer_open and mk_encoder_open, MK_ENOTFOUND
 *  (no audio track), MK_EUNSUPPORTED (an output or codec MediaKit does not write),
 *  MK_ECANCELLED, MK_EIO. */
mk_status mk_transcode(const char *src, const char *dst, const mk_encoder_settings *settings);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_H */
