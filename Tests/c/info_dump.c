/*
 * info_dump.c — prints what the C API says of a file, one JSON object per line, for the oracle
 * suite to compare with ffprobe: every track (mk_track_info, all fields), every packet
 * (mk_packet_info), and the first FRAMES frames of each audio and video track
 * (mk_decode_session, mk_frame_info).
 *
 *     info_dump FILE [FRAMES]
 *
 * Also checks the struct_size rules from the caller's side: each info struct is asked for once
 * more with the 0.1 size, in a buffer filled with 0xA5, and the bytes past that size must come
 * back untouched (the line "old_structs" says whether they did).
 */
#include <mediakit/mediakit.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_string(const char *key, const char *value) {
    printf("\"%s\":\"", key);
    for (const char *c = value ? value : ""; *c; c++) {
        if (*c == '"' || *c == '\\') printf("\\%c", *c);
        else if ((unsigned char)*c < 0x20) printf("\\u%04x", *c);
        else putchar(*c);
    }
    printf("\"");
}

static unsigned char buffer[sizeof(mk_track_info) + sizeof(mk_packet_info) + sizeof(mk_frame_info)];

/* The buffer filled with 0xA5, as a struct of a caller of an older header: struct_size `old`. */
static void *old_struct(size_t old) {
    memset(buffer, 0xA5, sizeof buffer);
    uint32_t size = (uint32_t)old;
    memcpy(buffer, &size, sizeof size);
    return buffer;
}

/* Whether the buffer's bytes from `old` to `full` stayed 0xA5 (nothing written past the struct). */
static int untouched(size_t old, size_t full) {
    for (size_t i = old; i < full; i++)
        if (buffer[i] != 0xA5) return 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) { fprintf(stderr, "usage: info_dump FILE [FRAMES]\n"); return 2; }
    int max_frames = argc == 3 ? atoi(argv[2]) : 5;
    mk_demuxer *dmx = NULL;
    if (mk_demuxer_open(&dmx, argv[1]) != MK_OK) { fprintf(stderr, "%s\n", mk_last_error()); return 1; }
    int32_t count = 0;
    mk_demuxer_track_count(dmx, &count);
    int old_ok = 1;
    for (int32_t t = 0; t < count; t++) {
        mk_track_info ti;
        ti.struct_size = sizeof ti;
        if (mk_demuxer_track(dmx, t, &ti) != MK_OK) { fprintf(stderr, "%s\n", mk_last_error()); return 1; }
        printf("{\"kind\":\"track\",\"index\":%d,\"id\":%d,\"media_type\":%d,", ti.index, ti.id, ti.media_type);
        print_string("codec", ti.codec); printf(","); print_string("codec_tag", ti.codec_tag); printf(",");
        print_string("language", ti.language);
        printf(",\"extradata_size\":%zu,\"time_base\":\"%d/%d\",\"duration\":%lld,\"sample_count\":%lld,\"width\":%d,\"height\":%d,"
               "\"sample_rate\":%d,\"channels\":%d,\"rotation\":%g,\"frame_rate\":\"%d/%d\",\"encoder_delay\":%d,\"encoder_padding\":%d,"
               "\"reflected\":%d,\"matrix\":[%d,%d,%d,%d,%d,%d,%d,%d,%d],\"movie_time_scale\":%lld,\"edits\":[",
               (size_t)ti.extradata_size, ti.time_base_num, ti.time_base_den, (long long)ti.duration, (long long)ti.sample_count,
               ti.width, ti.height, ti.sample_rate, ti.channels, ti.rotation, ti.frame_rate_num, ti.frame_rate_den,
               ti.encoder_delay, ti.encoder_padding, ti.reflected, ti.matrix[0], ti.matrix[1], ti.matrix[2], ti.matrix[3],
               ti.matrix[4], ti.matrix[5], ti.matrix[6], ti.matrix[7], ti.matrix[8], (long long)ti.movie_time_scale);
        for (int32_t e = 0; e < ti.edit_count; e++)
            printf("%s[%lld,%lld,%g]", e ? "," : "", (long long)ti.edits[e].segment_duration, (long long)ti.edits[e].media_time,
                   ti.edits[e].media_rate);
        printf("],\"bit_rate\":%lld,\"sample_aspect\":\"%d:%d\",\"color_range\":%d,\"color_primaries\":%d,\"color_transfer\":%d,"
               "\"color_space\":%d,\"channel_mask\":%llu,\"bits_per_coded_sample\":%d,\"block_align\":%d,\"reorder_depth\":%d,"
               "\"encrypted\":%d,\"trims_on_packets\":%d,\"sample_entry_size\":%zu,\"is_default\":%d,\"forced\":%d,"
               "\"unsupported\":%s}\n",
               (long long)ti.bit_rate, ti.sample_aspect_num, ti.sample_aspect_den, ti.color_range, ti.color_primaries,
               ti.color_transfer, ti.color_space, (unsigned long long)ti.channel_mask, ti.bits_per_coded_sample, ti.block_align,
               ti.reorder_depth, ti.encrypted, ti.trims_on_packets, ti.sample_entry_size, ti.is_default, ti.forced,
               ti.unsupported ? "true" : "false");
        /* A caller of the 0.1 header: its struct ends before `reflected`. */
        mk_track_info *old = old_struct(offsetof(mk_track_info, reflected));
        old_ok &= mk_demuxer_track(dmx, t, old) == MK_OK && old->index == t && untouched(offsetof(mk_track_info, reflected), sizeof ti);
    }

    mk_packet *pkt = NULL;
    mk_status st;
    int first_packet = 1;
    while ((st = mk_demuxer_read_packet(dmx, &pkt)) == MK_OK) {
        mk_packet_info pi;
        pi.struct_size = sizeof pi;
        mk_packet_get_info(pkt, &pi);
        printf("{\"kind\":\"packet\",\"track\":%d,\"pts\":%lld,\"dts\":%lld,\"duration\":%lld,\"position\":%lld,\"key\":%d,\"size\":%zu,"
               "\"time_base\":\"%d/%d\",\"duration_stated\":%d,\"trim_start\":%d,\"trim_end\":%d,\"truncated\":%d,\"discard\":%d,"
               "\"parameters_changed\":%d}\n",
               pi.track, (long long)pi.pts, (long long)pi.dts, (long long)pi.duration, (long long)pi.position, pi.is_keyframe, pi.size,
               pi.time_base_num, pi.time_base_den, pi.duration_stated, pi.trim_start, pi.trim_end, pi.truncated, pi.discard,
               pi.parameters_changed);
        if (first_packet) {
            mk_packet_info *old = old_struct(offsetof(mk_packet_info, time_base_num));
            old_ok &= mk_packet_get_info(pkt, old) == MK_OK && old->size == pi.size && untouched(offsetof(mk_packet_info, time_base_num), sizeof pi);
            first_packet = 0;
        }
        mk_packet_free(&pkt);
    }
    if (st != MK_EOF && st != MK_ETRUNCATED) { fprintf(stderr, "%s\n", mk_last_error()); return 1; }

    int first_frame = 1;
    for (int32_t t = 0; t < count; t++) {
        mk_track_info ti;
        ti.struct_size = sizeof ti;
        mk_demuxer_track(dmx, t, &ti);
        if ((ti.media_type != MK_MEDIA_AUDIO && ti.media_type != MK_MEDIA_VIDEO) || ti.unsupported) continue;
        mk_decode_session *dec = NULL;
        if (mk_decode_session_open(&dec, dmx, t, NULL) != MK_OK) continue;   /* no plugin: no frames to print */
        mk_demuxer_seek(dmx, 0);
        int frames = 0;
        mk_frame *frm = NULL;
        int eof = 0;
        while (frames < max_frames && !eof) {
            st = mk_demuxer_read_track_packet(dmx, t, &pkt);
            if (st == MK_OK) { st = mk_decode_session_send_packet(dec, pkt); mk_packet_free(&pkt); }
            else { mk_decode_session_send_packet(dec, NULL); eof = 1; }
            while (frames < max_frames && mk_decode_session_receive_frame(dec, &frm) == MK_OK) {
                mk_frame_info fi;
                fi.struct_size = sizeof fi;
                mk_frame_get_info(frm, &fi);
                printf("{\"kind\":\"frame\",\"track\":%d,\"pts\":%lld,\"key\":%d,\"color_range\":%d,\"color_primaries\":%d,"
                       "\"color_transfer\":%d,\"color_space\":%d,\"chroma_location\":%d,\"sample_aspect\":\"%d:%d\",\"channel_mask\":%llu,"
                       "\"channels\":%d}\n",
                       t, (long long)fi.pts, fi.is_keyframe, fi.color_range, fi.color_primaries, fi.color_transfer, fi.color_space,
                       fi.chroma_location, fi.sample_aspect_num, fi.sample_aspect_den, (unsigned long long)fi.channel_mask, fi.channels);
                if (first_frame) {
                    mk_frame_info *old = old_struct(offsetof(mk_frame_info, is_keyframe));
                    old_ok &= mk_frame_get_info(frm, old) == MK_OK && old->pts == fi.pts && untouched(offsetof(mk_frame_info, is_keyframe), sizeof fi);
                    first_frame = 0;
                }
                mk_frame_free(&frm);
                frames++;
            }
        }
        mk_decode_session_close(&dec);
    }
    printf("{\"kind\":\"old_structs\",\"untouched\":%s}\n", old_ok ? "true" : "false");
    mk_demuxer_close(&dmx);
    return 0;
}
