/*
 * pcm_variants.c — the 0.3 sample formats (big-endian, S8, 24 in 32, planar forms) through
 * mk_audio_converter, from C only.
 *
 *     pcm_variants CODE IN.s16 OUT     raw s16 stereo 48 kHz converted to MK_SAMPLES_<CODE>
 *                                      (e.g. MK_SAMPLES_S16BE), same rate and channels; OUT
 *                                      holds the one plane, or a planar format's planes one
 *                                      after the other
 *
 * The test (Tests/oracle/test_pcm_variants.py) compares OUT with ffmpeg's raw output.
 */
#include <mediakit/mediakit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name; int32_t code; int32_t width; int planar; } CODES[] = {
    {"MK_SAMPLES_S8", MK_SAMPLES_S8, 1, 0},             {"MK_SAMPLES_S8P", MK_SAMPLES_S8P, 1, 1},
    {"MK_SAMPLES_S16BE", MK_SAMPLES_S16BE, 2, 0},       {"MK_SAMPLES_S16BEP", MK_SAMPLES_S16BEP, 2, 1},
    {"MK_SAMPLES_S24BE", MK_SAMPLES_S24BE, 3, 0},       {"MK_SAMPLES_S24BEP", MK_SAMPLES_S24BEP, 3, 1},
    {"MK_SAMPLES_S32BE", MK_SAMPLES_S32BE, 4, 0},       {"MK_SAMPLES_S32BEP", MK_SAMPLES_S32BEP, 4, 1},
    {"MK_SAMPLES_F32BE", MK_SAMPLES_F32BE, 4, 0},       {"MK_SAMPLES_F32BEP", MK_SAMPLES_F32BEP, 4, 1},
    {"MK_SAMPLES_F64BE", MK_SAMPLES_F64BE, 8, 0},       {"MK_SAMPLES_F64BEP", MK_SAMPLES_F64BEP, 8, 1},
    {"MK_SAMPLES_S24IN32HI", MK_SAMPLES_S24IN32HI, 4, 0}, {"MK_SAMPLES_S24IN32HIP", MK_SAMPLES_S24IN32HIP, 4, 1},
    {"MK_SAMPLES_S24IN32LO", MK_SAMPLES_S24IN32LO, 4, 0}, {"MK_SAMPLES_S24IN32LOP", MK_SAMPLES_S24IN32LOP, 4, 1},
};

static int fail(const char *what) {
    fprintf(stderr, "%s: %s\n", what, mk_last_error());
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: pcm_variants MK_SAMPLES_CODE IN.s16 OUT\n");
        return 2;
    }
    int index = -1;
    for (size_t i = 0; i < sizeof CODES / sizeof CODES[0]; i++)
        if (strcmp(CODES[i].name, argv[1]) == 0) index = (int)i;
    if (index < 0) {
        fprintf(stderr, "unknown code %s\n", argv[1]);
        return 2;
    }
    FILE *in = fopen(argv[2], "rb");
    if (!in) return fail("open input");
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    int32_t frames = (int32_t)(size / 4);
    short *samples = malloc((size_t)frames * 4 + 4);
    if (!samples || fread(samples, 4, (size_t)frames, in) != (size_t)frames) return fail("read input");
    fclose(in);

    mk_audio_format from = {sizeof from, MK_SAMPLES_S16, 48000, 2, 0}, to = from;
    to.sample_format = CODES[index].code;
    mk_audio_converter *c = NULL;
    if (mk_audio_converter_open(&c, &from, &to, NULL) != MK_OK) return fail("mk_audio_converter_open");
    mk_audio_format got;
    got.struct_size = sizeof got;
    if (mk_audio_converter_output_format(c, &got) != MK_OK || got.sample_format != CODES[index].code) {
        fprintf(stderr, "output format %d, not %d\n", got.sample_format, CODES[index].code);
        return 1;
    }
    const void *ip[1] = {samples};
    if (mk_audio_converter_push(c, ip, frames) != MK_OK) return fail("push");
    if (mk_audio_converter_flush(c) != MK_OK) return fail("flush");
    size_t width = (size_t)CODES[index].width;
    int planar = CODES[index].planar;
    unsigned char *out = calloc((size_t)frames * 2, width);
    if (!out) return 1;
    void *planes[2] = {out, out + (size_t)frames * width};
    int32_t total = 0, n = 0;
    while (total < frames) {
        void *at[2] = {(unsigned char *)planes[0] + (size_t)total * width * (planar ? 1 : 2),
                       (unsigned char *)planes[1] + (size_t)total * width};
        if (mk_audio_converter_read(c, at, frames - total, &n) != MK_OK) break;
        total += n;
    }
    if (total != frames) {
        fprintf(stderr, "read %d frames of %d\n", total, frames);
        return 1;
    }
    mk_audio_converter_close(&c);
    FILE *o = fopen(argv[3], "wb");
    if (!o || fwrite(out, width * 2, (size_t)frames, o) != (size_t)frames || fclose(o) != 0) return fail("write output");
    free(out);
    free(samples);
    return 0;
}
