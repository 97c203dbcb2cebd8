/*
 * annexb_mux.c — muxes a raw H.264 Annex B stream (as `ffmpeg -f h264` or x264 write it) into
 * a file with samples this program parses itself: no MediaKit demuxer is involved, only
 * mk_muxer_open, mk_muxer_add_track_params, mk_packet_create and mk_muxer_write_packet.
 *
 *     annexb_mux IN.h264 OUT.mp4 FPS_NUM FPS_DEN [TIMESCALE] [v01]
 *
 * With annexb.h it splits the stream into NAL units and access units, builds the avcC record
 * from the first SPS and PPS (which then leave the samples: MP4's avc1 keeps them out of band;
 * parameter sets that differ stay in band), rewrites each access unit with 4-byte lengths,
 * pairs the two fields of a field-coded frame into one sample, and marks IDR pictures as key
 * frames. Timestamps at FPS_NUM/FPS_DEN frames per second, in the time base 1/TIMESCALE
 * (default FPS_NUM; a frame must last a whole number of its ticks, d = TIMESCALE * FPS_DEN /
 * FPS_NUM): the presentation order is the picture order count's (8.2.1, reset at each IDR
 * picture), so with B-frames pts = (place in presentation order) * d and dts = (place in
 * decoding order - delay) * d, the delay being the reorder depth the SPS declares
 * (max_num_reorder_frames, as x264 shifts its decoding times) or, when it declares none or
 * less, the least that keeps every dts at or before its pts. The VUI's aspect ratio and colour
 * description go into the codec parameters.
 * "v01" passes mk_codec_params with the size of the 0.1 header (no sample aspect ratio), as a
 * program built against that header does.
 */
#include <mediakit/mediakit.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annexb.h"

typedef struct {
    unit u;                 /* the sample */
    int64_t poc;
    int period;             /* IDR pictures seen before it, this one included */
    int field, bottom, frame_num, paired;
    int64_t order;          /* place in presentation order */
} picture;

static int by_period_then_poc(const void *a, const void *b) {
    const picture *x = *(const picture *const *)a, *y = *(const picture *const *)b;
    if (x->period != y->period) return x->period < y->period ? -1 : 1;
    return x->poc < y->poc ? -1 : x->poc > y->poc;
}

static int same(const nal *a, const nal *b) { return a->n == b->n && memcmp(a->p, b->p, a->n) == 0; }

int main(int argc, char **argv) {
    int old_struct = argc > 5 && strcmp(argv[argc - 1], "v01") == 0;
    if (argc < 5 || argc > 6 + old_struct) {
        fprintf(stderr, "usage: annexb_mux IN.h264 OUT.mp4 FPS_NUM FPS_DEN [TIMESCALE] [v01]\n");
        return 2;
    }
    long fps_num = atol(argv[3]), fps_den = atol(argv[4]);
    long timescale = argc - old_struct > 5 ? atol(argv[5]) : fps_num;
    if (fps_num <= 0 || fps_den <= 0 || timescale <= 0 || timescale > INT32_MAX || (timescale * fps_den) % fps_num != 0) {
        fprintf(stderr, "the frame rate %s/%s is not positive, or a frame is not a whole number of 1/%ld s\n", argv[3], argv[4], timescale);
        return 2;
    }
    int64_t tick = timescale * fps_den / fps_num;
    size_t size = 0;
    uint8_t *data = read_whole_file(argv[1], &size);
    if (!data) return 1;

    static sps_info spss[32];
    static pps_info ppss[256];
    nal x, sps = {0}, pps = {0};
    size_t pos = 0;
    picture *pics = NULL;
    size_t count = 0, cap = 0;
    picture cur;
    memset(&cur, 0, sizeof cur);
    poc_state poc = {0, 0, 0, 0};
    int period = 0, ok = 1;
    sps_info first;
    memset(&first, 0, sizeof first);
    while (ok && next_nal(data, size, &pos, &x)) {
        long offset = (long)(x.p - data);
        int type = nal_type(&x);
        if (starts_unit(&x) && cur.u.has_slice) {
            if (count == cap) {
                cap = cap ? cap * 2 : 256;
                picture *g = realloc(pics, cap * sizeof *pics);
                if (!g) { ok = 0; break; }
                pics = g;
            }
            pics[count++] = cur;
            memset(&cur, 0, sizeof cur);
        }
        if (type == 7) {
            sps_info s;
            if (!sps_parse(&x, &s) || s.id >= 32) { fprintf(stderr, "%s: a damaged SPS at offset %ld\n", argv[1], offset); ok = 0; break; }
            spss[s.id] = s;
            if (!sps.n) { sps = x; first = s; }
            if (same(&x, &sps)) continue;
        } else if (type == 8) {
            pps_info p;
            if (!pps_parse(&x, &p)) { fprintf(stderr, "%s: a damaged PPS at offset %ld\n", argv[1], offset); ok = 0; break; }
            ppss[p.id] = p;
            if (!pps.n) pps = x;
            if (same(&x, &pps)) continue;
        } else if (nal_is_slice(&x) && !cur.u.has_slice) {
            slice_info s;
            const sps_info *sp = NULL;
            if (!slice_parse(&x, spss, ppss, &s, &sp)) {
                fprintf(stderr, "%s: a slice at offset %ld is damaged or names a parameter set not seen\n", argv[1], offset);
                ok = 0;
                break;
            }
            if (s.idr) period++;
            cur.poc = poc_compute(&poc, sp, &s);
            cur.period = period;
            cur.field = s.field;
            cur.bottom = s.bottom;
            cur.frame_num = s.frame_num;
            cur.u.key = s.idr;
        }
        if (!unit_append(&cur.u, &x)) { ok = 0; break; }
        if (nal_is_slice(&x)) cur.u.has_slice = 1;
    }
    if (ok && cur.u.has_slice) {
        if (count == cap) {
            picture *g = realloc(pics, (cap + 1) * sizeof *pics);
            if (!g) ok = 0; else pics = g;
        }
        if (ok) pics[count++] = cur; else free(cur.u.b);
    } else {
        free(cur.u.b);
    }
    if (ok && (!sps.n || !pps.n || count == 0)) { fprintf(stderr, "%s: no SPS, PPS or picture\n", argv[1]); ok = 0; }

    if (!ok) {
        for (size_t i = 0; i < count; i++) free(pics[i].u.b);
        count = 0;
    }
    /* The second field of a field-coded frame joins the first in one sample. */
    size_t samples = 0;
    for (size_t i = 0; ok && i < count; i++) {
        picture *p = &pics[i];
        if (samples > 0) {
            picture *prev = &pics[samples - 1];
            if (p->field && prev->field && !prev->paired && p->bottom != prev->bottom && p->frame_num == prev->frame_num) {
                for (size_t at = 0; at < p->u.n;) {
                    nal part = {p->u.b + at + 4, (size_t)p->u.b[at] << 24 | (size_t)p->u.b[at + 1] << 16 | (size_t)p->u.b[at + 2] << 8 | p->u.b[at + 3]};
                    if (!unit_append(&prev->u, &part)) { ok = 0; break; }
                    at += 4 + part.n;
                }
                if (p->poc < prev->poc) prev->poc = p->poc;
                prev->paired = 1;
                free(p->u.b);
                continue;
            }
        }
        pics[samples++] = *p;
    }

    /* Presentation order: by picture order count within each IDR period. */
    picture **order = ok ? malloc(samples * sizeof *order) : NULL;
    if (ok && !order) ok = 0;
    int64_t delay = 0;
    if (ok) {
        for (size_t i = 0; i < samples; i++) order[i] = &pics[i];
        qsort(order, samples, sizeof *order, by_period_then_poc);
        for (size_t i = 0; i < samples; i++) order[i]->order = (int64_t)i;
        delay = first.max_num_reorder_frames > 0 ? first.max_num_reorder_frames : 0;
        for (size_t i = 0; i < samples; i++)
            if ((int64_t)i - pics[i].order > delay) delay = (int64_t)i - pics[i].order;
    }
    free(order);

    mk_muxer *mux = NULL;
    int32_t track = -1;
    if (ok) {
        size_t avcc_n = 0;
        uint8_t *avcc = avcc_build(&sps, &pps, &avcc_n);
        mk_codec_params params;
        mk_codec_params_default(&params);
        if (old_struct) params.struct_size = (uint32_t)offsetof(mk_codec_params, codec_tag);
        params.media_type = MK_MEDIA_VIDEO;
        params.codec = "h264";
        params.extradata = avcc;
        params.extradata_size = avcc_n;
        params.width = first.width;
        params.height = first.height;
        params.time_base_num = 1;
        params.time_base_den = (int32_t)timescale;
        if (first.sar_num > 0 && first.sar_den > 0) {
            params.sample_aspect_num = first.sar_num;
            params.sample_aspect_den = first.sar_den;
        }
        params.reorder_depth = (int32_t)delay;
        if (first.colour_primaries) {
            params.color_range = first.full_range ? 2 : 1;
            params.color_primaries = first.colour_primaries;
            params.color_transfer = first.transfer_characteristics;
            params.color_space = first.matrix_coefficients;
        }
        if (!avcc) { fprintf(stderr, "%s: the SPS is too short for an avcC record\n", argv[1]); ok = 0; }
        else if (mk_muxer_open(&mux, argv[2], NULL) != MK_OK) { fprintf(stderr, "open: %s\n", mk_last_error()); ok = 0; }
        else if (mk_muxer_add_track_params(mux, &params, &track) != MK_OK) { fprintf(stderr, "track: %s\n", mk_last_error()); ok = 0; }
        free(avcc);
    }
    for (size_t i = 0; ok && i < samples; i++) {
        mk_packet_info info;
        memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        info.pts = pics[i].order * tick;
        info.dts = ((int64_t)i - delay) * tick;
        info.duration = tick;
        info.is_keyframe = pics[i].u.key;
        info.data = pics[i].u.b;
        info.size = pics[i].u.n;
        mk_packet *pkt = NULL;
        if (mk_packet_create(&pkt, &info) != MK_OK) { fprintf(stderr, "packet %zu: %s\n", i, mk_last_error()); ok = 0; break; }
        if (mk_muxer_write_packet(mux, track, pkt) != MK_OK) { fprintf(stderr, "write %zu: %s\n", i, mk_last_error()); ok = 0; }
        mk_packet_free(&pkt);
    }
    if (ok && mk_muxer_finish(mux) != MK_OK) { fprintf(stderr, "finish: %s\n", mk_last_error()); ok = 0; }
    mk_muxer_close(&mux);   /* cancels an unfinished file: nothing is left under OUT */
    for (size_t i = 0; i < samples; i++) free(pics[i].u.b);
    free(pics);
    free(data);
    fprintf(stderr, "%zu samples, reorder delay %lld\n", samples, (long long)delay);
    return ok ? 0 : 1;
}
