/* mk_tag_edit from C (include/mediakit/tags.h), for Tests/oracle/test_metadata_api.py:
 *   tag_edit FILE COVER|- [KEY=VALUE ...] [-- KEY ...]
 * sets the KEY=VALUE tags, removes the keys after "--", puts COVER in as the front cover
 * ("-": none) and prints how the file was written (the MK_TAG_* number). Also checks that bad
 * arguments are refused with MK_EINVAL and leave the file alone. */
#include <stdio.h>
#include <string.h>
#include "mediakit/mediakit.h"

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: tag_edit FILE COVER|- [KEY=VALUE ...] [-- KEY ...]\n"); return 2; }
    const char *set[64], *removed[64];
    int32_t n_set = 0, n_removed = 0, after = 0;
    for (int i = 3; i < argc && n_set < 64 && n_removed < 64; i++) {
        if (strcmp(argv[i], "--") == 0) { after = 1; continue; }
        if (after) removed[n_removed++] = argv[i]; else set[n_set++] = argv[i];
    }
    mk_tag_edits e;
    if (mk_tag_edits_default(&e) != MK_OK) return 3;
    /* Refused: a NULL path, a wrong struct_size, a count without a list, an unknown flag. */
    if (mk_tag_edit(NULL, &e, 0, NULL) != MK_EINVAL) return 4;
    e.struct_size = 4;
    if (mk_tag_edit(argv[1], &e, 0, NULL) != MK_EINVAL) return 5;
    mk_tag_edits_default(&e);
    e.set_count = 1;
    if (mk_tag_edit(argv[1], &e, 0, NULL) != MK_EINVAL) return 6;
    mk_tag_edits_default(&e);
    if (mk_tag_edit(argv[1], &e, 0x80, NULL) != MK_EINVAL) return 7;

    e.set_count = n_set;
    e.set = set;
    e.remove_count = n_removed;
    e.remove = removed;
    e.cover_path = strcmp(argv[2], "-") == 0 ? NULL : argv[2];
    int32_t method = -1;
    mk_status s = mk_tag_edit(argv[1], &e, 0, &method);
    if (s != MK_OK) { fprintf(stderr, "mk_tag_edit: %s\n", mk_last_error()); return 1; }
    printf("%d\n", (int)method);
    return 0;
}
