/*
 * mediakit/codec_params.h - part of the C API of MediaKit (libmediakit): mk_codec_params: a stream's codec parameters (for packets no demuxer read, and for muxers).
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_CODEC_PARAMS_H
#define MEDIAKIT_CODEC_PARAMS_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A stream's codec parameters, for decoding packets that no MediaKit demuxer read (see
 *  mk_packet_create). Fill with mk_codec_params_default() first, then set what you know. */
typedef struct mk_codec_params {
    uint32_t struct_size;      /**< sizeof(mk_codec_params) */
    int32_t media_type;        /**< MK_MEDIA_AUDIO or MK_MEDIA_VIDEO (required) */
    const char *codec;         /**< FFmpeg's codec name: "h264", "hevc", "av1", "aac", "opus" ...
                                    (required; borrowed for the call) */
    const uint8_t *extradata;  /**< the codec configuration as MP4 stores it (avcC, hvcC, av1C
                                    payload, AudioSpecificConfig, OpusHead ...) or NULL; COPIED */
    size_t extradata_size;     /**< bytes at extradata (at most 16 MiB). Default 0 */
    int32_t width, height;     /**< video, 0 if unknown. Default 0 */
    int32_t sample_rate;       /**< audio, 0 if unknown. Default 0 */
    int32_t channels;          /**< audio, 0 if unknown. Default 0 */
    int32_t time_base_num;     /**< the unit of packet and frame timestamps. Default 1 */
    int32_t time_base_den;     /**< Default 90000 */
    int32_t reorder_depth;     /**< video: frames of B-frame reordering when known (the MP4
                                    ctts depth); 0: as the bitstream says. Default 0 */
    /* Added later (read only when struct_size covers them; a caller built against the
     * first layout, whose struct ends at reorder_depth, passes its smaller struct unchanged and gets
     * the defaults below). Set by mk_codec_params_default(). */
    const char *codec_tag;     /**< the container's tag to write: "avc1" or "avc3" (H.264), "hvc1" or
                                    "hev1" (HEVC); NULL (default): the codec's usual one. Borrowed for the call */
    const char *language;      /**< muxer: ISO 639-2/T code ("eng"); NULL (default): "und". MP4 writes
                                    it (mdhd); Matroska and Ogg do not. Borrowed for the call */
    int32_t matrix[9];         /**< muxer: the display matrix, row-major (a b u c d v x y w), a b c d x y
                                    in 16.16 fixed point, u v w in 2.30, as MP4's tkhd and
                                    mk_track_info.matrix; all zero (default): identity. MP4 only */
    int32_t encoder_delay;     /**< audio: priming samples (at sample_rate) to drop at the start.
                                    Default 0. A decoder from these parameters drops them from its
                                    output. A muxer: MP4 writes delay and padding as an edit list (the
                                    samples between them are presented, as FFmpeg and Apple apply it);
                                    Matroska and Ogg take them only where the codec states them
                                    (the Opus pre-skip of extradata): other values are MK_EUNSUPPORTED */
    int32_t encoder_padding;   /**< audio: padding samples (at sample_rate) to drop at the end. Default 0 */
    int64_t bit_rate;          /**< average bits per second, 0 (default) if unknown */
    int32_t sample_aspect_num; /**< video: pixel aspect ratio (MP4 pasp), 0/1 (default) if not stated */
    int32_t sample_aspect_den;
    int32_t color_range;       /**< video: 0 unknown (default), 1 limited, 2 full */
    int32_t color_primaries;   /**< video: ISO/IEC 23091-2 code points; 2 (default) or 0: unspecified.
                                    Pictures whose bitstream does not say take these */
    int32_t color_transfer;
    int32_t color_space;       /**< the matrix coefficients code point */
    int32_t bits_per_coded_sample; /**< bits per coded sample (PCM: 16, 24 ...); 0 (default) if unknown */
    int32_t block_align;       /**< audio: bytes per packet of constant-size codecs; 0 (default) */
    uint64_t channel_mask;     /**< audio: WAVE channel mask of the speakers, 0 (default): none stated */
} mk_codec_params;

/** Fills *params with the defaults (no codec, time base 1/90000). Harmless on NULL. */
void mk_codec_params_default(mk_codec_params *params);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_CODEC_PARAMS_H */
