/* MediaKit C API: tags, chapters, markers, instrument settings and attachments of a demuxer (issue 33).
 *
 * Ownership: every string and byte pointer these calls return is BORROWED from the demuxer and
 * stays valid until mk_demuxer_close() on it (the metadata does not change after opening). The
 * caller frees nothing. On an error the outputs are NULL / untouched and nothing must be freed.
 * Threads: the same rule as the demuxer's other calls (one thread at a time per demuxer).
 *
 * A tag has three names in the Swift model; C gives the normalised key ("title", "artist",
 * "album_artist", "track", "date", ... see docs/metadata.md) and the native key as the file
 * stores it ("TIT2", "TITLE", "INAM" ...). Tags come in file order; a key may repeat. */
#ifndef MEDIAKIT_METADATA_H
#define MEDIAKIT_METADATA_H
#include "base.h"
#include "demuxer.h"
#ifdef __cplusplus
extern "C" {
#endif

/** Sets *count to the number of container-level tags. Errors: MK_EINVAL. */
mk_status mk_demuxer_tag_count(mk_demuxer *demuxer, int32_t *count);
/** Tag `index` (0 <= index < count): *key the normalised key, *native_key the key as stored
 *  (native_key may be NULL when not wanted), *value its text (UTF-8). Borrowed (see above).
 *  Errors: MK_EINVAL (NULL key / value, index out of range). */
mk_status mk_demuxer_tag_at(mk_demuxer *demuxer, int32_t index, const char **key, const char **native_key, const char **value);
/** Sets *count to the number of tags of track `track`. Errors: MK_EINVAL (no such track). */
mk_status mk_track_tag_count(mk_demuxer *demuxer, int32_t track, int32_t *count);
/** Tag `index` of track `track`, as mk_demuxer_tag_at. Errors: MK_EINVAL. */
mk_status mk_track_tag_at(mk_demuxer *demuxer, int32_t track, int32_t index, const char **key, const char **native_key, const char **value);

/** Sets *count to the number of chapters (in time order). Errors: MK_EINVAL. */
mk_status mk_demuxer_chapter_count(mk_demuxer *demuxer, int32_t *count);
/** Chapter `index`: start and end in ticks of time_base_num / time_base_den seconds (exact),
 *  *title its title ("" when none; borrowed). Errors: MK_EINVAL (a NULL output, index out of range). */
mk_status mk_demuxer_chapter_at(mk_demuxer *demuxer, int32_t index, int64_t *start, int64_t *end,
                                int64_t *time_base_num, int64_t *time_base_den, const char **title);

/** Sets *count to the number of markers: named places in the sound (an AIFF file's MARK chunk;
 *  0 for other formats; FFmpeg does not read them). Errors: MK_EINVAL. */
mk_status mk_demuxer_marker_count(mk_demuxer *demuxer, int32_t *count);
/** Marker `index` (0 <= index < count, in file order): *frame its position in sample frames from
 *  the start of the sound, *id the file's identifier for it (AIFF's MarkerId; id may be NULL when
 *  not wanted), *name its name (UTF-8, "" when none; borrowed, see above).
 *  Errors: MK_EINVAL (NULL frame / name, index out of range). */
mk_status mk_demuxer_marker_at(mk_demuxer *demuxer, int32_t index, int64_t *frame, int32_t *id, const char **name);

/** How a sampler plays the sound (an AIFF file's INST chunk; FFmpeg does not read it). Sets
 *  *present to 1 when the file has the chunk, else to 0 and leaves the other outputs alone. The
 *  others (each may be NULL when not wanted): *base_note the MIDI note (0-127) that plays the
 *  sound at its recorded pitch, *detune in cents, *low_note / *high_note and *low_velocity /
 *  *high_velocity the ranges it is played for, *gain in dB. Plain values: nothing to free.
 *  Errors: MK_EINVAL (NULL present). */
mk_status mk_demuxer_instrument(mk_demuxer *demuxer, int32_t *present, int32_t *base_note, int32_t *detune, int32_t *low_note,
                                int32_t *high_note, int32_t *low_velocity, int32_t *high_velocity, int32_t *gain);
/** Loop `loop` of the instrument (0: the sustain loop, 1: the release loop): *play_mode (0 no
 *  looping, 1 forward, 2 forward then backward; another value as the file stores it),
 *  *begin_marker / *end_marker the ids of the markers it runs between (see
 *  mk_demuxer_marker_at), *begin_frame / *end_frame those markers' frames, -1 where the file has
 *  no marker with the id. Outputs other than play_mode may be NULL. Plain values: nothing to free.
 *  Errors: MK_EINVAL (NULL play_mode, loop not 0 or 1, a demuxer without an instrument). */
mk_status mk_demuxer_instrument_loop(mk_demuxer *demuxer, int32_t loop, int32_t *play_mode, int32_t *begin_marker, int32_t *end_marker,
                                     int64_t *begin_frame, int64_t *end_frame);

/** Sets *count to the number of attachments (cover art, attached files). Errors: MK_EINVAL. */
mk_status mk_demuxer_attachment_count(mk_demuxer *demuxer, int32_t *count);
/** Attachment `index`: *data and *size its bytes, *mime its MIME type ("" when unknown),
 *  *picture_type the ID3 APIC picture type (3: front cover) or -1 for a file that is not a
 *  picture; *description and *file_name ("" when none; these two outputs may be NULL). All
 *  borrowed. Errors: MK_EINVAL (NULL data / size / mime / picture_type, index out of range). */
mk_status mk_demuxer_attachment_at(mk_demuxer *demuxer, int32_t index, const uint8_t **data, int64_t *size, const char **mime,
                                   int32_t *picture_type, const char **description, const char **file_name);

#ifdef __cplusplus
}
#endif
#endif
