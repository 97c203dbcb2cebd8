/*
 * mediakit/muxer.h - part of the C API of MediaKit (libmediakit): mk_muxer: writing MP4 / Matroska / WebM / Ogg from packets; mk_remux.
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_MUXER_H
#define MEDIAKIT_MUXER_H

#include "base.h"
#include "codec_params.h"
#include "demuxer.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A container file being written: MP4, Matroska / WebM or Ogg, by the extension. */
typedef struct mk_muxer mk_muxer;

/** MP4 layouts. */
#define MK_LAYOUT_PROGRESSIVE 0   /**< moov at the end (default) */
#define MK_LAYOUT_FASTSTART   1   /**< moov at the front, for progressive download */
#define MK_LAYOUT_FRAGMENTED  2   /**< moof + mdat fragments: a crash leaves a playable file */
#define MK_LAYOUT_HYBRID      3   /**< fragmented while written, progressive once finished */

/** WAV outputs: RIFF or RF64 (EBU Tech 3306), as ffmpeg's wav muxer -rf64 never / auto / always. */
#define MK_RF64_NEVER  0   /**< RIFF only: more than 4 GiB of samples is an error (default, as ffmpeg) */
#define MK_RF64_AUTO   1   /**< a JUNK chunk reserved after the header, made a ds64 chunk (RF64)
                                when the file passes 4 GiB */
#define MK_RF64_ALWAYS 2   /**< RF64 with its ds64 chunk whatever the size */

/** A warning of mk_remux (mk_muxer_settings.warning): `message` names what and where, borrowed
 *  for the call (copy it to keep it); `user` is mk_muxer_settings.warning_user. */
typedef void (*mk_warning_callback)(void *user, const char *message);

/** How to write. Fill with mk_muxer_default_settings() first. */
typedef struct mk_muxer_settings {
    uint32_t struct_size;      /**< sizeof(mk_muxer_settings) */
    int32_t layout;            /**< MK_LAYOUT_*. Default MK_LAYOUT_PROGRESSIVE */
    double fragment_seconds;   /**< fragment length for FRAGMENTED / HYBRID. Default 2.0 */
    /* Added later (read only when struct_size covers them), for mk_remux only: mk_muxer_open
     * refuses them (MK_EINVAL). */
    const int32_t *tracks;     /**< the source tracks to copy, in this order (borrowed for the call);
                                    NULL (default): every audio and video track, and the
                                    subtitle and data tracks the output format carries */
    int32_t track_count;       /**< entries at tracks. Default 0 */
    mk_progress_callback progress; /**< NULL (default) or called after each packet with packets
                                    written and packets in all; non-zero cancels (MK_ECANCELLED) */
    void *progress_user;       /**< passed to progress. Default NULL */
    /* Added later (read only when struct_size covers them), for mk_muxer_open of MP4 files only:
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
    /* Added later (read only when struct_size covers it), for HLS outputs (.m3u8) of
     * mk_muxer_open and mk_remux: the other containers refuse a value (MK_EINVAL). */
    const char *segment_format; /**< the segments' format: "ts" (MPEG-TS seg0.ts ...) or "fmp4"
                                    (fragmented MP4 / CMAF: init.mp4 and seg0.m4s ...; the
                                    playlist version 7 with #EXT-X-MAP); borrowed for the call.
                                    NULL (default): "ts" */
    /* Added later (read only when struct_size covers them), for mk_remux only: mk_muxer_open
     * refuses them (MK_EINVAL). mk_remux copies the input's tags, chapters and cover art into
     * what the output holds (as ffmpeg -map_metadata 0 -map_chapters 0; docs/metadata.md). */
    int32_t no_metadata;       /**< 1: copy none of them (mk-remux --no-metadata). Default 0 */
    int32_t metadata_count;    /**< entries at metadata. Default 0 */
    const char *const *metadata; /**< "KEY=VALUE" container tags set after the copy (an empty
                                    VALUE removes the tag; MK_EINVAL for an entry without "=");
                                    the array and its strings borrowed for the call. NULL (default): none */
    /* Added later (read only when struct_size covers them), for mk_muxer_open and mk_remux of
     * MP3 (.mp3), WAV (.wav) and AIFF (.aiff .aif .aifc) files; the other containers refuse
     * values other than the defaults (MK_EINVAL). */
    int32_t id3v2_version;     /**< the ID3v2 version of the tags written: 3 (ID3v2.3: TYER / TDAT,
                                    ISO-8859-1 or UTF-16 text, as ffmpeg -id3v2_version 3) or 4
                                    (ID3v2.4, UTF-8 text); 0 (default): 4. MP3: the tag in front;
                                    WAV / AIFF: the chunk of write_id3v2 */
    int32_t write_id3v2;       /**< WAV / AIFF: 1 also writes the tags, cover art and chapters as
                                    an ID3v2 tag in a chunk after the samples (WAV "id3 ", AIFF
                                    "ID3 ", as ffmpeg's aiff muxer -write_id3v2 1). Default 0 */
    /* Added later (read only when struct_size covers it), for mk_muxer_open and mk_remux. */
    const char *format;        /**< the muxer to write with, by name instead of the extension (as
                                    mk-remux --format): a built-in one ("mp4", "matroska", "webm",
                                    "mpegts" ...: mk_container_info.name of an MK_CONTAINER_MUXER)
                                    or a plugin's ("ffmpeg:avi", or "avi" where no built-in muxer
                                    has that name); borrowed for the call. A name no muxer has is
                                    MK_ENOTFOUND naming it, and nothing is written. NULL (default):
                                    the muxer the path's extension names */
    /* Added later (read only when struct_size covers it), for mk_muxer_open and mk_remux of
     * WAV files (.wav); the other containers refuse a value other than the default (MK_EINVAL). */
    int32_t rf64;              /**< MK_RF64_*: RIFF or RF64 (mk-remux --rf64). Default MK_RF64_NEVER */
    /* Added later (read only when struct_size covers them), for mk_remux only: mk_muxer_open
     * refuses a callback (MK_EINVAL). */
    mk_warning_callback warning; /**< NULL (default) or called once the output is written, on the
                                    thread that called mk_remux and before it returns, with each
                                    warning: the damage the demuxer read past (an MPEG-TS
                                    continuity-counter jump, lost sync, scrambled packets ...: what
                                    mk_demuxer_warning lists for the input) and each track the
                                    input added while it was read, whose packets are not in the
                                    output. The message is borrowed for the call only */
    void *warning_user;        /**< passed to warning. Default NULL */
} mk_muxer_settings;

/** Fills *settings with the defaults. Harmless on NULL. */
void mk_muxer_default_settings(mk_muxer_settings *settings);

/** Starts writing a file at `path`, in the container settings->format names or else the one
 *  its extension names (as the Swift core's ContainerCatalog.makeMuxer): MP4 (.mp4 .m4a .m4v .mov .3gp), Matroska (.mkv .mka
 *  .mk3d), WebM (.webm: VP8, VP9, AV1, Opus, Vorbis), Ogg (.ogg .oga; .opus: Opus only), FLAC
 *  (.flac), MP3 (.mp3), WAV (.wav), AIFF (.aiff .aif .aifc: one PCM track, stored in the
 *  format's byte order), CAF (.caf: one track of AAC, ALAC, FLAC, Opus or PCM; the priming and
 *  remainder frames in its packet table), MPEG-TS (.ts) or HLS (.m3u8: a VOD playlist and
 *  MPEG-TS segments seg0.ts ... beside it, or with settings->segment_format "fmp4" init.mp4
 *  and fragmented MP4 segments seg0.m4s ..., cut at key frames every settings->fragment_seconds
 *  with MK_LAYOUT_FRAGMENTED, 2 s by default).
 *  Progressive and fast-start files are written to a temporary file beside `path` and renamed
 *  by mk_muxer_finish(); fragmented and hybrid MP4 files are written to "<path>.partial" (what
 *  a crash leaves behind) and renamed at the end. The layouts other than
 *  MK_LAYOUT_PROGRESSIVE are MP4's. settings may be NULL. On success *out (OWNED by the
 *  caller) must be closed with mk_muxer_close().
 *  Errors: MK_EINVAL (NULL, bad settings, a layout other than progressive for Matroska or
 *  Ogg), MK_EUNSUPPORTED (an extension no muxer writes: the message lists those that are
 *  written), MK_ENOTFOUND (a settings->format no muxer has: the message names it and the
 *  built-in muxers), MK_EIO (the directory cannot be written). */
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
 *  avcC / hvcC / av1C in extradata and a width and height (MP4 and Matroska also take H.264 /
 *  HEVC in Annex B form: extradata the parameter sets with start codes, or empty with them in
 *  the first packet, and packets with start codes; the muxer builds the avcC / hvcC and
 *  length-prefixes the samples, as `ffmpeg -c copy` stores such a stream; a fragmented MP4 or
 *  a Matroska file then needs that track's first packet before any other's when the
 *  extradata is empty, the header being written at the first packet); AAC its AudioSpecificConfig, Opus
 *  its OpusHead, FLAC its STREAMINFO, with the rate and channels; Matroska also takes the codec
 *  private data as extradata. Also reads (from a struct that has them) codec_tag, language, matrix, encoder delay
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


/** Copies the tracks of `src` (any container MediaKit reads; settings->tracks chooses them,
 *  NULL: every audio and video track, and the subtitle and data tracks the output format
 *  carries) into a new file at `dst` without decoding, as the mk-remux sample does:
 *  MP4 (any layout), Matroska / WebM, Ogg, FLAC, MP3, WAV, AIFF, CAF, MPEG-TS (.ts) or HLS (.m3u8,
 *  segments of settings->fragment_seconds with MK_LAYOUT_FRAGMENTED), by dst's extension, or any
 *  muxer (a plugin's too) by settings->format (MK_ENOTFOUND for a name no muxer has, before
 *  anything is read or written). settings may be NULL
 *  (progressive, the default tracks). settings->progress is called after each packet. A failure or a
 *  cancel leaves nothing under `dst`. A source cut short is copied as far as it goes, as ffmpeg's
 *  stream copy is: `dst` is written and the status is MK_ETRUNCATED, a warning (mk_last_error()
 *  names the offset of the cut; check for it with `st == MK_OK || st == MK_ETRUNCATED`). Errors: those of mk_demuxer_open and mk_muxer_open,
 *  MK_EINVAL (a track that does not exist), MK_EUNSUPPORTED (an encrypted track, a codec the
 *  container does not carry), MK_ECANCELLED, MK_EIO (the target name is then left untouched). */
mk_status mk_remux(const char *src, const char *dst, const mk_muxer_settings *settings);

/** Fills *status with where writing stands (MK_ASSET_UNKNOWN, WRITING, COMPLETED, FAILED,
 *  CANCELLED: see demuxer.h). A packet refused with MK_EINVAL leaves it as it was.
 *  Errors: MK_EINVAL (NULL, small struct_size). */
mk_status mk_muxer_get_status(mk_muxer *muxer, mk_asset_status *status);

/** Marks `track` finished, its end of stream (AVAssetWriterInput's markAsFinished): later
 *  packets of it are MK_ESTATE. Errors: MK_EINVAL (NULL, no such track). */
mk_status mk_muxer_end_track(mk_muxer *muxer, int32_t track);

/** Sets *ended to 1 once `track` was marked finished (mk_muxer_end_track) or the file finished,
 *  else 0. Errors: MK_EINVAL. */
mk_status mk_muxer_track_ended(mk_muxer *muxer, int32_t track, int32_t *ended);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_MUXER_H */
