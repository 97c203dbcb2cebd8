/* Prints a file's tags, chapters, markers and attachments through the C API, one JSON object a line
 * ({"kind":"tag"|"track_tag"|"chapter"|"marker"|"instrument"|"attachment", ...}); attachment bytes are written to
 * ATTACH_DIR/N when a third argument names a folder. Used by Tests/oracle/test_metadata_api.py. */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <string.h>

static void json_string(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

static void tag(const char *kind, int track, const char *key, const char *native, const char *value) {
    printf("{\"kind\":\"%s\",\"track\":%d,\"key\":", kind, track);
    json_string(key);
    printf(",\"native_key\":");
    json_string(native);
    printf(",\"value\":");
    json_string(value);
    printf("}\n");
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: metadata_dump FILE [ATTACH_DIR]\n"); return 2; }
    mk_demuxer *d = NULL;
    if (mk_demuxer_open(&d, argv[1]) != MK_OK) { fprintf(stderr, "open: %s\n", mk_last_error()); return 1; }
    int32_t n = 0, tracks = 0;
    const char *key, *native, *value;
    mk_demuxer_tag_count(d, &n);
    for (int32_t i = 0; i < n; i++) {
        if (mk_demuxer_tag_at(d, i, &key, &native, &value) != MK_OK) return 1;
        tag("tag", -1, key, native, value);
    }
    mk_demuxer_track_count(d, &tracks);
    for (int32_t t = 0; t < tracks; t++) {
        mk_track_tag_count(d, t, &n);
        for (int32_t i = 0; i < n; i++) {
            if (mk_track_tag_at(d, t, i, &key, NULL, &value) != MK_OK) return 1;
            tag("track_tag", t, key, "", value);
        }
    }
    mk_demuxer_chapter_count(d, &n);
    for (int32_t i = 0; i < n; i++) {
        int64_t start, end, num, den;
        const char *title;
        if (mk_demuxer_chapter_at(d, i, &start, &end, &num, &den, &title) != MK_OK) return 1;
        printf("{\"kind\":\"chapter\",\"start\":%lld,\"end\":%lld,\"num\":%lld,\"den\":%lld,\"title\":",
               (long long)start, (long long)end, (long long)num, (long long)den);
        json_string(title);
        printf("}\n");
    }
    mk_demuxer_marker_count(d, &n);
    for (int32_t i = 0; i < n; i++) {
        int64_t frame;
        int32_t id;
        const char *name;
        if (mk_demuxer_marker_at(d, i, &frame, &id, &name) != MK_OK) return 1;
        printf("{\"kind\":\"marker\",\"frame\":%lld,\"id\":%d,\"name\":", (long long)frame, id);
        json_string(name);
        printf("}\n");
    }
    int32_t present, note, detune, low_note, high_note, low_velocity, high_velocity, gain;
    if (mk_demuxer_instrument(d, &present, &note, &detune, &low_note, &high_note, &low_velocity, &high_velocity, &gain) != MK_OK) return 1;
    if (present) {
        printf("{\"kind\":\"instrument\",\"base_note\":%d,\"detune\":%d,\"low_note\":%d,\"high_note\":%d,"
               "\"low_velocity\":%d,\"high_velocity\":%d,\"gain\":%d", note, detune, low_note, high_note, low_velocity, high_velocity, gain);
        for (int32_t l = 0; l < 2; l++) {
            int32_t mode, begin, end;
            int64_t begin_frame, end_frame;
            if (mk_demuxer_instrument_loop(d, l, &mode, &begin, &end, &begin_frame, &end_frame) != MK_OK) return 1;
            printf(",\"%s\":{\"play_mode\":%d,\"begin_marker\":%d,\"end_marker\":%d,\"begin_frame\":%lld,\"end_frame\":%lld}",
                   l == 0 ? "sustain_loop" : "release_loop", mode, begin, end, (long long)begin_frame, (long long)end_frame);
        }
        printf("}\n");
    }
    mk_demuxer_attachment_count(d, &n);
    for (int32_t i = 0; i < n; i++) {
        const uint8_t *data;
        int64_t size;
        const char *mime, *description;
        int32_t type;
        if (mk_demuxer_attachment_at(d, i, &data, &size, &mime, &type, &description, NULL) != MK_OK) return 1;
        printf("{\"kind\":\"attachment\",\"size\":%lld,\"picture_type\":%d,\"mime\":", (long long)size, type);
        json_string(mime);
        printf(",\"description\":");
        json_string(description);
        printf("}\n");
        if (argc > 2) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%d", argv[2], (int)i);
            FILE *f = fopen(path, "wb");
            if (!f || fwrite(data, 1, (size_t)size, f) != (size_t)size) return 1;
            fclose(f);
        }
    }
    /* Bad arguments are statuses, never crashes. */
    if (mk_demuxer_tag_at(d, 1 << 30, &key, NULL, &value) != MK_EINVAL || key || value) return 3;
    if (mk_demuxer_tag_count(NULL, &n) != MK_EINVAL) return 3;
    if (mk_track_tag_count(d, -1, &n) != MK_EINVAL) return 3;
    mk_demuxer_close(&d);
    return 0;
}
