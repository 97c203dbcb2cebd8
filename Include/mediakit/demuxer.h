/*
 * mediakit/demuxer.h - part of the C API of MediaKit (libmediakit): mk_demuxer: reading a container track by track (files, memory, callbacks, pipes), packets.
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_DEMUXER_H
#define MEDIAKIT_DEMUXER_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/** mk_demuxer_open, mk_demuxer_open_memory and mk_demuxer_open_io with the demuxer chosen by
 *  name instead of by probing the bytes: a built-in format's name as
 *  mk_container_get_info lists it ("mp4", "matroska", "mpegts" ...) or a plugin's
 *  (mk_container_info.plugin set: "ffmpeg:avi", or "avi" when no other format has that name).
 *  `demuxer` is BORROWED for the call; NULL or "" probes as the functions without _as do. The
 *  other arguments, ownership and the result are theirs. Errors: theirs, and MK_ENOTFOUND for
 *  a name no loaded format has (the message lists the built-in names and says how many plugin
 *  formats there are); the named demuxer's own refusal (MK_EDATA, MK_EUNSUPPORTED ...) when the
 *  bytes are not its format. */
mk_status mk_demuxer_open_as(mk_demuxer **out, const char *path, const char *demuxer);
mk_status mk_demuxer_open_memory_as(mk_demuxer **out, const uint8_t *data, size_t size, const char *demuxer);
mk_status mk_demuxer_open_io_as(mk_demuxer **out, const mk_io *io, void *user, const char *demuxer);

/** Closes *demuxer and sets it to NULL. NULL or an already NULL handle is harmless.
 *  Packets already read stay valid (free them with mk_packet_free). */
void mk_demuxer_close(mk_demuxer **demuxer);

/** Sets *count to the number of tracks. The count can grow while reading: an MPEG-TS program
 *  whose PMT adds a stream that opening did not find (a pipe read through mk_demuxer_open_io)
 *  adds a track at the end before the first packet of it is read; earlier tracks keep their
 *  index. A packet whose track is not among those a caller counted is such a track: count again
 *  and call mk_demuxer_track for it. Errors: MK_EINVAL. */
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
    /* Added later (filled only when struct_size covers it): */
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
    /* Added later (filled only when struct_size covers them): */
    int32_t is_default;        /**< 0 when the container marks the track as not one to present by
                                    default (Matroska FlagDefault 0, MP4 tkhd without track_enabled:
                                    FFmpeg's `default` disposition), else 1 (also where the
                                    container has no such mark); a remux keeps it */
    int32_t forced;            /**< 1 when the container marks the track forced (Matroska FlagForced) */
} mk_track_info;

/** Fills *info for track `index`, up to info->struct_size bytes (a caller built against an
 *  older header, whose struct ends before `reflected` or before `matrix`, still works: nothing
 *  past its struct_size is written). The strings and buffers it points into belong to the
 *  demuxer and stay valid until it is closed. A track added while reading (see
 *  mk_demuxer_track_count) may have its parameters (sample rate, extradata ...) only once its
 *  first packet was read: ask again then.
 *  Errors: MK_EINVAL (NULL, struct_size smaller than the struct's first layout, out of range). */
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

/** Where reading or writing stands, as AVAssetReader.Status / AVAssetWriter.Status: a
 *  demuxer goes UNKNOWN -> READING (first read) -> COMPLETED (MK_EOF or a cut:
 *  MK_ETRUNCATED) or FAILED (a read error); a muxer UNKNOWN -> WRITING (first packet) ->
 *  COMPLETED (mk_muxer_finish) or FAILED (a write or finish error other than MK_EINVAL) or
 *  CANCELLED (mk_muxer_cancel, mk_demuxer_cancel). */
#define MK_ASSET_UNKNOWN   0
#define MK_ASSET_READING   1
#define MK_ASSET_WRITING   2
#define MK_ASSET_COMPLETED 3
#define MK_ASSET_FAILED    4
#define MK_ASSET_CANCELLED 5

/** A demuxer's or muxer's status (mk_demuxer_get_status, mk_muxer_get_status). */
typedef struct mk_asset_status {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_asset_status) */
    int32_t status;            /**< MK_ASSET_* */
    mk_status error;           /**< MK_ASSET_FAILED: the failure's status (MK_EDATA, MK_EIO ...); else MK_OK */
    const char *message;       /**< MK_ASSET_FAILED: its message, BORROWED until the next call on the
                                    object or its close; else NULL */
} mk_asset_status;

/** Fills *status with where reading stands (see MK_ASSET_*). Reads stay possible after a
 *  failure (a demuxer may read on past damage), the status stays MK_ASSET_FAILED.
 *  Errors: MK_EINVAL (NULL, small struct_size). */
mk_status mk_demuxer_get_status(mk_demuxer *demuxer, mk_asset_status *status);

/** Sets *ended to 1 once `track` reached its end (AVAssetReaderOutput's end of data):
 *  mk_demuxer_read_track_packet returned MK_EOF for it, or mk_demuxer_read_packet returned
 *  MK_EOF (every selected track ends then) or MK_ETRUNCATED; else 0. A seek clears it.
 *  Errors: MK_EINVAL (NULL, no such track). */
mk_status mk_demuxer_track_ended(mk_demuxer *demuxer, int32_t track, int32_t *ended);

/** Stops reading (AVAssetReader's cancelReading): the status becomes MK_ASSET_CANCELLED (unless
 *  completed or failed) and later reads return MK_EOF. The demuxer must still be closed.
 *  Errors: MK_EINVAL. */
mk_status mk_demuxer_cancel(mk_demuxer *demuxer);

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
    /* Added later (filled, and read by mk_packet_create, only when struct_size covers them): */
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

/** Fills *info, up to info->struct_size bytes (a caller built against the first layout, whose struct ends at
 *  `size`, still works). Errors: MK_EINVAL. */
mk_status mk_packet_get_info(const mk_packet *packet, mk_packet_info *info);

/** Creates a packet from bytes the caller parsed itself (a network protocol, an Annex B
 *  stream, its own demuxer), to send to a decoder opened with mk_decode_session_open_params or to
 *  write with mk_muxer_write_packet. Reads info->data[0 .. info->size) (COPIED: the caller's
 *  buffer may be reused as soon as this returns), info->track, pts, dts, duration (in the
 *  decoder's or the muxer track's time base; MK_NOPTS_VALUE for none) and is_keyframe, and
 *  from a struct that has them time_base_num / den, duration_stated, trim_start, trim_end, truncated and
 *  discard; `position` and `parameters_changed` are ignored. On success *out (OWNED by the
 *  caller) must be freed with mk_packet_free(). Errors: MK_EINVAL (NULL out or info, a
 *  struct_size smaller than the struct's first layout, NULL data with a size, a size over 256 MiB, a
 *  negative track, time base or trim). */
mk_status mk_packet_create(mk_packet **out, const mk_packet_info *info);

/** Frees *packet and sets it to NULL. Harmless on NULL. */
void mk_packet_free(mk_packet **packet);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_DEMUXER_H */
