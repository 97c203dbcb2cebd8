/*
 * annexb_decode.c — decodes a raw H.264 Annex B stream (as `ffmpeg -f h264` writes it) with
 * packets this program parses itself: no MediaKit demuxer is involved.
 *
 *     annexb_decode IN.h264 OUT.yuv      (I420 frames, as `ffmpeg -f h264 -i IN.h264
 *                                          -fps_mode passthrough -f rawvideo -pix_fmt yuv420p`)
 *
 * It splits the byte stream into NAL units at start codes, groups them into access units
 * (a new one starts at an access unit delimiter, SPS, PPS or SEI, or at a slice whose
 * first_mb_in_slice is 0, once the current one holds a slice), builds the avcC
 * configuration record from the first SPS and PPS by hand (ISO/IEC 14496-15, 5.3.3.1),
 * rewrites each access unit with 4-byte lengths (all in annexb.h), and sends them through
 * mk_decode_session_open_params / mk_packet_create, with libavcodec's send / receive loop.
 */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "annexb.h"

static long frames_out = 0;

/* Receives every waiting frame into out as I420. Returns the receive status (MK_EAGAIN or MK_EOF when all went well). */
static mk_status drain(mk_decode_session *dec, FILE *out) {
    static uint8_t *buf = NULL;
    static size_t cap = 0;
    mk_frame *frm = NULL;
    mk_status st;
    while ((st = mk_decode_session_receive_frame(dec, &frm)) == MK_OK) {
        size_t need = 0;
        if (mk_frame_pack(frm, MK_PACK_I420, NULL, 0, &need) != MK_OK) { mk_frame_free(&frm); return MK_EFAIL; }
        if (need > cap) {
            uint8_t *g = realloc(buf, need);
            if (!g) { mk_frame_free(&frm); return MK_ENOMEM; }
            buf = g;
            cap = need;
        }
        st = mk_frame_pack(frm, MK_PACK_I420, buf, cap, &need);
        mk_frame_free(&frm);
        if (st != MK_OK) return st;
        if (fwrite(buf, 1, need, out) != need) return MK_EIO;
        frames_out++;
    }
    return st;
}

/* Sends one access unit, receiving first when the decoder asks for it. */
static int send_unit(mk_decode_session *dec, unit *u, int64_t index, FILE *out) {
    mk_packet_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.pts = MK_NOPTS_VALUE;      /* Annex B carries no timestamps */
    info.dts = index;
    info.is_keyframe = u->key;
    info.data = u->b;
    info.size = u->n;
    mk_packet *pkt = NULL;
    if (mk_packet_create(&pkt, &info) != MK_OK) { fprintf(stderr, "packet: %s\n", mk_last_error()); return 0; }
    mk_status st;
    while ((st = mk_decode_session_send_packet(dec, pkt)) == MK_EAGAIN) {
        if (drain(dec, out) != MK_EAGAIN) break;
    }
    mk_packet_free(&pkt);
    if (st != MK_OK) { fprintf(stderr, "send: %s\n", mk_last_error()); return 0; }
    if (drain(dec, out) != MK_EAGAIN) { fprintf(stderr, "receive: %s\n", mk_last_error()); return 0; }
    u->n = 0;
    u->has_slice = 0;
    u->key = 0;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: annexb_decode IN.h264 OUT.yuv\n"); return 2; }
    size_t size = 0;
    uint8_t *data = read_whole_file(argv[1], &size);
    if (!data) return 1;

    /* avcC from the first SPS and PPS. */
    nal x, sps = {0}, pps = {0};
    size_t pos = 0;
    while (next_nal(data, size, &pos, &x) && (!sps.n || !pps.n)) {
        if ((x.p[0] & 0x1f) == 7 && !sps.n) sps = x;
        if ((x.p[0] & 0x1f) == 8 && !pps.n) pps = x;
    }
    size_t avcc_n = 0;
    uint8_t *avcc = sps.n && pps.n ? avcc_build(&sps, &pps, &avcc_n) : NULL;
    if (!avcc) { fprintf(stderr, "no usable SPS/PPS in %s\n", argv[1]); return 1; }

    mk_codec_params params;
    mk_codec_params_default(&params);
    params.media_type = MK_MEDIA_VIDEO;
    params.codec = "h264";
    params.extradata = avcc;
    params.extradata_size = avcc_n;
    mk_decode_session *dec = NULL;
    if (mk_decode_session_open_params(&dec, &params, NULL) != MK_OK) { fprintf(stderr, "decoder: %s\n", mk_last_error()); return 1; }
    free(avcc);

    FILE *out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 1; }
    unit u = {0};
    int64_t index = 0;
    int ok = 1;
    pos = 0;
    while (ok && next_nal(data, size, &pos, &x)) {
        int type = nal_type(&x), vcl = nal_is_slice(&x);
        if (starts_unit(&x) && u.has_slice) ok = send_unit(dec, &u, index++, out);
        if (!ok) break;
        if (!unit_append(&u, &x)) { ok = 0; break; }
        if (vcl) u.has_slice = 1;
        if (type == 5) u.key = 1;
    }
    if (ok && u.has_slice) ok = send_unit(dec, &u, index++, out);
    if (ok) {
        if (mk_decode_session_send_packet(dec, NULL) != MK_OK || drain(dec, out) != MK_EOF) {
            fprintf(stderr, "drain: %s\n", mk_last_error());
            ok = 0;
        }
    }
    mk_decode_session_close(&dec);
    free(u.b);
    free(data);
    if (fclose(out) != 0) ok = 0;
    fprintf(stderr, "%lld access units, %ld frames\n", (long long)index, frames_out);
    return ok ? 0 : 1;
}
