/* MediaKit C API: the tag editor (mk-tag, issue 33): tags set and removed, a front cover put
 * in, pictures removed, all tags cleared, in a media file without re-encoding it.
 *
 * The file is written as mk-tag writes it (the same bytes for the same edits): in place where
 * the format leaves room (ID3 padding, FLAC PADDING, MP4 free space next to the moov), else
 * through a temporary file beside it, synced and renamed over it; the file is never left
 * half-written. To read the tags, open the file with mk_demuxer_open and use metadata.h.
 *
 * Ownership: nothing is returned that the caller frees; every input is borrowed for the call
 * only (the strings, the lists and the cover's path are not kept). Threads: any thread; two
 * edits of the same file at once are not supported. */
#ifndef MEDIAKIT_TAGS_H
#define MEDIAKIT_TAGS_H
#include "base.h"
#ifdef __cplusplus
extern "C" {
#endif

/** How mk_tag_edit wrote the file (*method). */
#define MK_TAG_WRITTEN_IN_PLACE 0       /**< inside the file (the same inode): one write as the commit */
#define MK_TAG_WRITTEN_TEMPORARY_FILE 1 /**< written again beside itself (media bytes copied), renamed over it */
#define MK_TAG_WRITTEN_REMUX 2          /**< the packets copied by the format's muxer into a new file, renamed over it */
#define MK_TAG_UNCHANGED 3              /**< the file already held these tags: nothing written */

/** mk_tag_edit's flags: write through a temporary file even when the edit fits in place
 *  (mk-tag --no-in-place). */
#define MK_TAG_EDIT_NO_IN_PLACE 1u

/** The edits (TagEdits). All borrowed for the call. */
typedef struct mk_tag_edits {
    uint32_t struct_size;        /**< set by the caller: sizeof(mk_tag_edits) */
    int32_t set_count;           /**< entries at set */
    const char *const *set;      /**< "KEY=VALUE" tags set (an empty VALUE removes the key; a key
                                      given twice keeps the last value), as mk-tag --set */
    int32_t remove_count;        /**< entries at remove */
    const char *const *remove;   /**< keys removed, as mk-tag --remove */
    const char *cover_path;      /**< a JPEG, PNG, GIF, BMP or WebP file put in as the front cover
                                      (replacing the front covers), or NULL, as mk-tag --cover */
    int32_t remove_pictures;     /**< 1: remove every picture first (mk-tag --remove-cover) */
    int32_t clear;               /**< 1: remove every tag before the set ones (mk-tag --clear) */
} mk_tag_edits;

/** Fills *edits with no edits and struct_size. Errors: MK_EINVAL (NULL). */
mk_status mk_tag_edits_default(mk_tag_edits *edits);

/** Applies `edits` to the file at `path` (UTF-8); flags: 0 or MK_TAG_EDIT_NO_IN_PLACE. *method
 *  (may be NULL) is set to one of MK_TAG_WRITTEN_* / MK_TAG_UNCHANGED. On an error the file is as
 *  it was; mk_last_error() names the problem (a tag the format does not store, a picture that is
 *  no image, a file that is not a regular file ...). Errors: MK_EINVAL (NULL path / edits, a
 *  struct_size other than sizeof(mk_tag_edits), a count out of 0...65536 or with a NULL list or
 *  entry, a setting without "=", a key both set and removed, a flag unknown), and the
 *  statuses of the file's errors (MK_ENOTFOUND, MK_EIO, MK_EUNSUPPORTED, MK_EDATA ...). */
mk_status mk_tag_edit(const char *path, const mk_tag_edits *edits, uint32_t flags, int32_t *method);

#ifdef __cplusplus
}
#endif
#endif
