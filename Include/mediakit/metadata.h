/* MediaKit C API: tags, chapters, markers and attachments of a demuxer (issue 33).
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
