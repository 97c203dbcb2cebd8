/*
 * annexb.h — a small H.264 Annex B parser for the C test programs (annexb_decode.c,
 * annexb_mux.c): what a program that has its own compressed video does before it hands
 * packets to MediaKit. Header-only (static inline functions); ISO/IEC 14496-10 and 14496-15.
 *
 *  - read_whole_file(): the stream in memory.
 *  - next_nal(): the NAL units of a byte stream, split at start codes.
 *  - starts_unit(): whether a NAL unit begins a new access unit (7.4.1.2.3, simplified: an
 *    access unit delimiter, SPS, PPS, SEI or types 14..18, or a slice whose
 *    first_mb_in_slice is 0, once the current unit holds a slice).
 *  - unit_append(): an access unit rewritten with 4-byte big-endian NAL lengths (avc1 samples).
 *  - sps_parse(), pps_parse(), slice_parse(): the fields that size the picture and order it
 *    (picture order count type 0, 1 and 2; frame or field pictures; the VUI's aspect ratio,
 *    colour and reorder depth), and poc_compute() (8.2.1).
 *  - avcc_build(): the avcC configuration record from one SPS and one PPS (5.3.3.1).
 *
 * Not handled (the programs report them): memory_management_control_operation 5 (a POC reset
 * without an IDR picture) is not looked for.
 */
#ifndef MK_TEST_ANNEXB_H
#define MK_TEST_ANNEXB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { const uint8_t *p; size_t n; } nal;

/* Next NAL unit of data[*pos .. size) after a start code; 0 at the end. */
static inline int next_nal(const uint8_t *data, size_t size, size_t *pos, nal *out) {
    for (;;) {
        size_t i = *pos;
        while (i + 3 <= size && !(data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 1)) i++;
        if (i + 3 > size) return 0;
        size_t start = i + 3, end = start;
        while (end + 3 <= size && !(data[end] == 0 && data[end + 1] == 0 && (data[end + 2] == 1 || (data[end + 2] == 0 && end + 3 < size && data[end + 3] == 1)))) end++;
        if (end + 3 > size) end = size;
        while (end > start && data[end - 1] == 0) end--;   /* trailing zero bytes belong to the next start code */
        out->p = data + start;
        out->n = end - start;
        *pos = end;
        if (out->n > 0) return 1;
    }
}

/* The whole file at `path`, malloc'ed (the caller frees it), *size set; NULL with a message on
 * stderr when it cannot be read. */
static inline uint8_t *read_whole_file(const char *path, size_t *size) {
    FILE *in = fopen(path, "rb");
    if (!in) { perror(path); return NULL; }
    fseek(in, 0, SEEK_END);
    long n = ftell(in);
    fseek(in, 0, SEEK_SET);
    uint8_t *data = n >= 0 ? malloc(n > 0 ? (size_t)n : 1) : NULL;
    if (!data || fread(data, 1, (size_t)n, in) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        free(data);
        fclose(in);
        return NULL;
    }
    fclose(in);
    *size = (size_t)n;
    return data;
}

static inline int nal_type(const nal *x) { return x->p[0] & 0x1f; }
static inline int nal_is_slice(const nal *x) { int t = nal_type(x); return t >= 1 && t <= 5; }

/* Whether x begins a new access unit, given that the current one already holds a slice. */
static inline int starts_unit(const nal *x) {
    int type = nal_type(x);
    return type == 9 || type == 7 || type == 8 || type == 6 || (type >= 14 && type <= 18)
           || (nal_is_slice(x) && x->n > 1 && (x->p[1] & 0x80));   /* first_mb_in_slice == 0 */
}

/* An access unit as an avc1 sample: NAL units with 4-byte big-endian lengths. */
typedef struct { uint8_t *b; size_t n, cap; int has_slice, key; } unit;

/* Appends x with its length; 0 when out of memory. */
static inline int unit_append(unit *u, const nal *x) {
    if (u->n + x->n + 4 > u->cap) {
        size_t cap = (u->n + x->n + 4) * 2;
        uint8_t *g = realloc(u->b, cap);
        if (!g) return 0;
        u->b = g;
        u->cap = cap;
    }
    u->b[u->n] = (uint8_t)(x->n >> 24); u->b[u->n + 1] = (uint8_t)(x->n >> 16);
    u->b[u->n + 2] = (uint8_t)(x->n >> 8); u->b[u->n + 3] = (uint8_t)x->n;
    memcpy(u->b + u->n + 4, x->p, x->n);
    u->n += x->n + 4;
    return 1;
}

/* ---------------------------------------------------------------- bit reading */

/* An RBSP reader: the NAL unit's bytes with emulation prevention (00 00 03) removed. */
typedef struct { uint8_t buf[512]; size_t n, bit; int overrun; } bits;

/* Up to 512 bytes of the RBSP of x after its one-byte header (enough for every header field). */
static inline void bits_init(bits *b, const nal *x) {
    b->n = 0; b->bit = 0; b->overrun = 0;
    int zeros = 0;
    for (size_t i = 1; i < x->n && b->n < sizeof b->buf; i++) {
        if (zeros >= 2 && x->p[i] == 3) { zeros = 0; continue; }
        zeros = x->p[i] == 0 ? zeros + 1 : 0;
        b->buf[b->n++] = x->p[i];
    }
}

static inline uint32_t bits_u(bits *b, int count) {
    uint32_t v = 0;
    for (int i = 0; i < count; i++) {
        if (b->bit >= b->n * 8) { b->overrun = 1; return 0; }
        v = (v << 1) | ((b->buf[b->bit >> 3] >> (7 - (b->bit & 7))) & 1);
        b->bit++;
    }
    return v;
}

static inline uint32_t bits_ue(bits *b) {
    int zeros = 0;
    while (bits_u(b, 1) == 0) {
        if (b->overrun || ++zeros > 31) { b->overrun = 1; return 0; }
    }
    return zeros ? ((1u << zeros) - 1) + bits_u(b, zeros) : 0;
}

static inline int32_t bits_se(bits *b) {
    uint32_t k = bits_ue(b);
    return (k & 1) ? (int32_t)((k + 1) / 2) : -(int32_t)(k / 2);
}

/* ---------------------------------------------------------------- parameter sets */

typedef struct {
    int valid, id, profile_idc, chroma_format_idc, separate_colour_plane, bit_depth_luma_minus8, bit_depth_chroma_minus8;
    int log2_max_frame_num, poc_type, log2_max_poc_lsb;
    int delta_pic_order_always_zero, offset_for_non_ref_pic, offset_for_top_to_bottom_field;
    int num_ref_frames_in_poc_cycle, offset_for_ref_frame[256];
    int frame_mbs_only, width, height, sar_num, sar_den;
    int full_range, colour_primaries, transfer_characteristics, matrix_coefficients;   /* VUI; 0 when absent */
    int max_num_reorder_frames;                       /* VUI bitstream restriction; -1 when absent */
} sps_info;

typedef struct { int valid, id, sps_id, bottom_field_pic_order_in_frame_present; } pps_info;

static inline void skip_scaling_list(bits *b, int size) {
    int last = 8, next = 8;
    for (int j = 0; j < size; j++) {
        if (next != 0) next = (last + bits_se(b) + 256) % 256;
        last = next == 0 ? last : next;
    }
}

/* Skips hrd_parameters() (E.1.2). */
static inline void skip_hrd(bits *b) {
    int count = (int)bits_ue(b) + 1;
    bits_u(b, 8);                                     /* bit_rate_scale, cpb_size_scale */
    for (int i = 0; i < count && !b->overrun && i < 32; i++) { bits_ue(b); bits_ue(b); bits_u(b, 1); }
    bits_u(b, 20);                                    /* four 5-bit lengths */
}

/* Parses an SPS (7.3.2.1.1) and its VUI up to the bitstream restriction (E.1.1); 0 when it is
 * damaged. */
static inline int sps_parse(const nal *x, sps_info *s) {
    /* Table E-1: the sample aspect ratios of aspect_ratio_idc 1..16. */
    static const int sar_table[17][2] = {{0, 1}, {1, 1}, {12, 11}, {10, 11}, {16, 11}, {40, 33}, {24, 11}, {20, 11}, {32, 11},
                                         {80, 33}, {18, 11}, {15, 11}, {64, 33}, {160, 99}, {4, 3}, {3, 2}, {2, 1}};
    bits b;
    bits_init(&b, x);
    memset(s, 0, sizeof *s);
    s->profile_idc = (int)bits_u(&b, 8);
    bits_u(&b, 16);                                   /* constraint flags, level_idc */
    s->id = (int)bits_ue(&b);
    s->chroma_format_idc = 1;
    int p = s->profile_idc;
    if (p == 100 || p == 110 || p == 122 || p == 244 || p == 44 || p == 83 || p == 86 || p == 118 || p == 128 || p == 138
        || p == 139 || p == 134 || p == 135) {
        s->chroma_format_idc = (int)bits_ue(&b);
        if (s->chroma_format_idc == 3) s->separate_colour_plane = (int)bits_u(&b, 1);
        s->bit_depth_luma_minus8 = (int)bits_ue(&b);
        s->bit_depth_chroma_minus8 = (int)bits_ue(&b);
        bits_u(&b, 1);                                /* qpprime_y_zero_transform_bypass_flag */
        if (bits_u(&b, 1)) {                          /* seq_scaling_matrix_present_flag */
            for (int i = 0; i < (s->chroma_format_idc != 3 ? 8 : 12); i++)
                if (bits_u(&b, 1)) skip_scaling_list(&b, i < 6 ? 16 : 64);
        }
    }
    s->log2_max_frame_num = (int)bits_ue(&b) + 4;
    s->poc_type = (int)bits_ue(&b);
    if (s->poc_type == 0) {
        s->log2_max_poc_lsb = (int)bits_ue(&b) + 4;
    } else if (s->poc_type == 1) {
        s->delta_pic_order_always_zero = (int)bits_u(&b, 1);
        s->offset_for_non_ref_pic = bits_se(&b);
        s->offset_for_top_to_bottom_field = bits_se(&b);
        s->num_ref_frames_in_poc_cycle = (int)bits_ue(&b);
        if (s->num_ref_frames_in_poc_cycle > 255) return 0;
        for (int i = 0; i < s->num_ref_frames_in_poc_cycle; i++) s->offset_for_ref_frame[i] = bits_se(&b);
    } else if (s->poc_type != 2) {
        return 0;
    }
    bits_ue(&b); bits_u(&b, 1);                       /* max_num_ref_frames, gaps_in_frame_num_value_allowed_flag */
    int width_mbs = (int)bits_ue(&b) + 1, height_units = (int)bits_ue(&b) + 1;
    s->frame_mbs_only = (int)bits_u(&b, 1);
    if (!s->frame_mbs_only) bits_u(&b, 1);            /* mb_adaptive_frame_field_flag */
    bits_u(&b, 1);                                    /* direct_8x8_inference_flag */
    int crop[4] = {0, 0, 0, 0};
    if (bits_u(&b, 1))
        for (int i = 0; i < 4; i++) crop[i] = (int)bits_ue(&b);
    int chroma = s->separate_colour_plane ? 0 : s->chroma_format_idc;
    int sub_w = chroma == 1 || chroma == 2 ? 2 : 1, sub_h = chroma == 1 ? 2 : 1;
    int unit_x = chroma == 0 ? 1 : sub_w, unit_y = (chroma == 0 ? 1 : sub_h) * (2 - s->frame_mbs_only);
    s->width = width_mbs * 16 - unit_x * (crop[0] + crop[1]);
    s->height = (2 - s->frame_mbs_only) * height_units * 16 - unit_y * (crop[2] + crop[3]);
    s->max_num_reorder_frames = -1;
    if (bits_u(&b, 1)) {                              /* vui_parameters_present_flag (E.1.1) */
        if (bits_u(&b, 1)) {                          /* aspect_ratio_info_present_flag */
            int idc = (int)bits_u(&b, 8);
            if (idc == 255) {
                s->sar_num = (int)bits_u(&b, 16);
                s->sar_den = (int)bits_u(&b, 16);
            } else if (idc <= 16) {
                s->sar_num = sar_table[idc][0];
                s->sar_den = sar_table[idc][1];
            }
        }
        if (bits_u(&b, 1)) bits_u(&b, 1);             /* overscan_info_present_flag, overscan_appropriate_flag */
        if (bits_u(&b, 1)) {                          /* video_signal_type_present_flag */
            bits_u(&b, 3);                            /* video_format */
            s->full_range = (int)bits_u(&b, 1);
            if (bits_u(&b, 1)) {                      /* colour_description_present_flag */
                s->colour_primaries = (int)bits_u(&b, 8);
                s->transfer_characteristics = (int)bits_u(&b, 8);
                s->matrix_coefficients = (int)bits_u(&b, 8);
            }
        }
        if (bits_u(&b, 1)) { bits_ue(&b); bits_ue(&b); }   /* chroma_loc_info_present_flag */
        if (bits_u(&b, 1)) { bits_u(&b, 32); bits_u(&b, 32); bits_u(&b, 1); }   /* timing_info_present_flag */
        int nal_hrd = (int)bits_u(&b, 1);
        if (nal_hrd) skip_hrd(&b);
        int vcl_hrd = (int)bits_u(&b, 1);
        if (vcl_hrd) skip_hrd(&b);
        if (nal_hrd || vcl_hrd) bits_u(&b, 1);        /* low_delay_hrd_flag */
        bits_u(&b, 1);                                /* pic_struct_present_flag */
        if (bits_u(&b, 1)) {                          /* bitstream_restriction_flag */
            bits_u(&b, 1);
            for (int i = 0; i < 4; i++) bits_ue(&b);  /* max_bytes_per_pic_denom ... log2_max_mv_length_vertical */
            s->max_num_reorder_frames = (int)bits_ue(&b);
            bits_ue(&b);                              /* max_dec_frame_buffering */
        }
    }
    s->valid = !b.overrun && s->width > 0 && s->height > 0 && s->log2_max_frame_num <= 16 && s->log2_max_poc_lsb <= 16;
    return s->valid;
}

/* Parses the start of a PPS (7.3.2.2); 0 when it is damaged. */
static inline int pps_parse(const nal *x, pps_info *p) {
    bits b;
    bits_init(&b, x);
    memset(p, 0, sizeof *p);
    p->id = (int)bits_ue(&b);
    p->sps_id = (int)bits_ue(&b);
    bits_u(&b, 1);                                    /* entropy_coding_mode_flag */
    p->bottom_field_pic_order_in_frame_present = (int)bits_u(&b, 1);
    p->valid = !b.overrun && p->id < 256 && p->sps_id < 32;
    return p->valid;
}

/* ---------------------------------------------------------------- slices and order */

typedef struct {
    int idr, ref, first_mb, pps_id, frame_num, field, bottom;
    int poc_lsb, delta_poc_bottom, delta_poc[2];
} slice_info;

/* Parses a slice header up to the picture order count fields (7.3.3); 0 when it is damaged
 * or names a parameter set not seen. */
static inline int slice_parse(const nal *x, const sps_info *spss, const pps_info *ppss, slice_info *s, const sps_info **sps_out) {
    bits b;
    bits_init(&b, x);
    memset(s, 0, sizeof *s);
    s->idr = nal_type(x) == 5;
    s->ref = (x->p[0] >> 5) & 3;
    s->first_mb = (int)bits_ue(&b);
    bits_ue(&b);                                      /* slice_type */
    s->pps_id = (int)bits_ue(&b);
    if (s->pps_id >= 256 || !ppss[s->pps_id].valid) return 0;
    const pps_info *pps = &ppss[s->pps_id];
    const sps_info *sps = &spss[pps->sps_id];
    if (!sps->valid) return 0;
    if (sps->separate_colour_plane) bits_u(&b, 2);
    s->frame_num = (int)bits_u(&b, sps->log2_max_frame_num);
    if (!sps->frame_mbs_only) {
        s->field = (int)bits_u(&b, 1);
        if (s->field) s->bottom = (int)bits_u(&b, 1);
    }
    if (s->idr) bits_ue(&b);                          /* idr_pic_id */
    if (sps->poc_type == 0) {
        s->poc_lsb = (int)bits_u(&b, sps->log2_max_poc_lsb);
        if (pps->bottom_field_pic_order_in_frame_present && !s->field) s->delta_poc_bottom = bits_se(&b);
    } else if (sps->poc_type == 1 && !sps->delta_pic_order_always_zero) {
        s->delta_poc[0] = bits_se(&b);
        if (pps->bottom_field_pic_order_in_frame_present && !s->field) s->delta_poc[1] = bits_se(&b);
    }
    *sps_out = sps;
    return !b.overrun;
}

/* The decoder's picture order count state between pictures (8.2.1). */
typedef struct { int prev_msb, prev_lsb, prev_frame_num, prev_offset; } poc_state;

/* The picture order count of a picture (the least of its fields' for a frame), 8.2.1.1 to
 * 8.2.1.3; `s` is its first slice. */
static inline int64_t poc_compute(poc_state *st, const sps_info *sps, const slice_info *s) {
    int64_t top = 0, bottom = 0;
    int max_frame_num = 1 << sps->log2_max_frame_num;
    if (sps->poc_type == 0) {
        if (s->idr) { st->prev_msb = 0; st->prev_lsb = 0; }
        int max_lsb = 1 << sps->log2_max_poc_lsb, msb;
        if (s->poc_lsb < st->prev_lsb && st->prev_lsb - s->poc_lsb >= max_lsb / 2) msb = st->prev_msb + max_lsb;
        else if (s->poc_lsb > st->prev_lsb && s->poc_lsb - st->prev_lsb > max_lsb / 2) msb = st->prev_msb - max_lsb;
        else msb = st->prev_msb;
        top = msb + s->poc_lsb;
        bottom = s->field ? msb + s->poc_lsb : top + s->delta_poc_bottom;
        if (s->ref) { st->prev_msb = msb; st->prev_lsb = s->poc_lsb; }
    } else {
        int offset = s->idr ? 0 : st->prev_frame_num > s->frame_num ? st->prev_offset + max_frame_num : st->prev_offset;
        if (sps->poc_type == 1) {
            int64_t abs_frame = sps->num_ref_frames_in_poc_cycle ? offset + s->frame_num : 0, expected = 0;
            if (!s->ref && abs_frame > 0) abs_frame--;
            if (abs_frame > 0) {
                int64_t delta = 0;
                for (int i = 0; i < sps->num_ref_frames_in_poc_cycle; i++) delta += sps->offset_for_ref_frame[i];
                int64_t cycle = (abs_frame - 1) / sps->num_ref_frames_in_poc_cycle, in_cycle = (abs_frame - 1) % sps->num_ref_frames_in_poc_cycle;
                expected = cycle * delta;
                for (int i = 0; i <= in_cycle; i++) expected += sps->offset_for_ref_frame[i];
            }
            if (!s->ref) expected += sps->offset_for_non_ref_pic;
            top = expected + s->delta_poc[0];
            bottom = s->field ? expected + sps->offset_for_top_to_bottom_field + s->delta_poc[0]
                              : top + sps->offset_for_top_to_bottom_field + s->delta_poc[1];
        } else {
            top = bottom = s->idr ? 0 : s->ref ? 2 * ((int64_t)offset + s->frame_num) : 2 * ((int64_t)offset + s->frame_num) - 1;
        }
        st->prev_offset = offset;
        st->prev_frame_num = s->frame_num;
    }
    if (s->field) return s->bottom ? bottom : top;
    return top < bottom ? top : bottom;
}

/* The avcC record for one SPS and one PPS (4-byte NAL lengths), malloc'ed (the caller frees
 * it); *size set. High profiles (100, 110, 122, 144) get the chroma format and bit depths after
 * the PPS, as FFmpeg's ff_isom_write_avcc writes them (5.3.3.1.2). NULL when out of memory or
 * the SPS is damaged. */
static inline uint8_t *avcc_build(const nal *sps, const nal *pps, size_t *size) {
    sps_info info;
    if (sps->n < 4 || sps->n > 0xFFFF || pps->n > 0xFFFF || !sps_parse(sps, &info)) return NULL;
    int p = info.profile_idc, ext = p == 100 || p == 110 || p == 122 || p == 144;
    size_t n = 11 + sps->n + pps->n + (ext ? 4 : 0);
    uint8_t *a = malloc(n);
    if (!a) return NULL;
    a[0] = 1; a[1] = sps->p[1]; a[2] = sps->p[2]; a[3] = sps->p[3];
    a[4] = 0xFF;                                   /* 4-byte NAL lengths */
    a[5] = 0xE1;                                   /* one SPS */
    a[6] = (uint8_t)(sps->n >> 8); a[7] = (uint8_t)sps->n;
    memcpy(a + 8, sps->p, sps->n);
    a[8 + sps->n] = 1;                             /* one PPS */
    a[9 + sps->n] = (uint8_t)(pps->n >> 8); a[10 + sps->n] = (uint8_t)pps->n;
    memcpy(a + 11 + sps->n, pps->p, pps->n);
    if (ext) {
        uint8_t *e = a + 11 + sps->n + pps->n;
        e[0] = (uint8_t)(0xFC | info.chroma_format_idc);
        e[1] = (uint8_t)(0xF8 | info.bit_depth_luma_minus8);
        e[2] = (uint8_t)(0xF8 | info.bit_depth_chroma_minus8);
        e[3] = 0;                                  /* no SPS extensions */
    }
    *size = n;
    return a;
}

#endif /* MK_TEST_ANNEXB_H */
