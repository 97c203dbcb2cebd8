/*
 * mediakit/frame.h - part of the C API of MediaKit (libmediakit): mk_frame: decoded pictures and audio, packing them, orienting pictures.
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_FRAME_H
#define MEDIAKIT_FRAME_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A decoded picture or run of audio samples. */
typedef struct mk_frame mk_frame;

/* Frame formats: MK_PIXEL_* (video) and MK_SAMPLES_* (audio), in mediakit_types.h. */

/** A frame's fields. Plane pointers are borrowed from the frame. */
typedef struct mk_frame_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_frame_info) */
    int32_t media_type;        /**< MK_MEDIA_AUDIO or MK_MEDIA_VIDEO */
    int32_t format;            /**< MK_PIXEL_* or MK_SAMPLES_* */
    int64_t pts;               /**< presentation time in the track's time base */
    int64_t duration;
    int32_t time_base_num, time_base_den;
    int32_t width, height;     /**< video */
    int32_t sample_rate;       /**< audio */
    int32_t channels;          /**< audio */
    int32_t sample_count;      /**< audio: samples per channel */
    int32_t plane_count;
    const uint8_t *planes[8];
    int64_t strides[8];        /**< video: bytes per row; audio: bytes in the plane */
    int64_t plane_sizes[8];    /**< bytes that may be read from each plane */
    /* Added later (filled only when struct_size covers them): */
    int32_t is_keyframe;       /**< video: 1 for a key frame */
    int32_t color_range;       /**< video: 0 unknown, 1 limited, 2 full */
    int32_t color_primaries;   /**< video: ISO/IEC 23091-2 code points; 2: unspecified */
    int32_t color_transfer;
    int32_t color_space;       /**< the matrix coefficients code point */
    int32_t chroma_location;   /**< video: 0 unspecified, 1 left, 2 center, 3 top-left, 4 top,
                                    5 bottom-left, 6 bottom (FFmpeg's AVChromaLocation) */
    int32_t sample_aspect_num; /**< video: the shape of one pixel, 0/1 when unknown */
    int32_t sample_aspect_den;
    uint64_t channel_mask;     /**< audio: WAVE channel mask, 0 if unknown */
} mk_frame_info;

/** Fills *info, up to info->struct_size bytes (a caller built against the first layout, whose struct ends at
 *  plane_sizes, still works). Errors: MK_EINVAL. */
mk_status mk_frame_get_info(const mk_frame *frame, mk_frame_info *info);

/** Packed layouts for mk_frame_pack(). */
#define MK_PACK_NV12     1   /**< video: Y plane, then interleaved UV, chroma halved both ways */
#define MK_PACK_I420     2   /**< video: Y, U, V planes without padding */
#define MK_PACK_S16      3   /**< audio: interleaved signed 16-bit little-endian */
#define MK_PACK_F32      4   /**< audio: interleaved 32-bit float little-endian */
/* Packed pictures for models (0.9): one plane, rows without padding, the bytes of
 * `ffmpeg -i IN -f rawvideo -pix_fmt rgb24` (bgr24, rgba, bgra, gray, gray16le, rgb48le): the
 * FFmpeg plugin's converter (libswscale) set up as the ffmpeg tool's scale filter, bicubic,
 * with the colour matrix (BT.601 when unnamed) and range the frames name. */
#define MK_PACK_RGB24    5   /**< video: R G B, 3 bytes a pixel */
#define MK_PACK_BGR24    6   /**< video: B G R, 3 bytes a pixel */
#define MK_PACK_RGBA     7   /**< video: R G B A (A = 255), 4 bytes a pixel */
#define MK_PACK_BGRA     8   /**< video: B G R A (A = 255), 4 bytes a pixel */
#define MK_PACK_GRAY8    9   /**< video: luma, 1 byte a pixel (full range, as ffmpeg's gray) */
#define MK_PACK_GRAY16  10   /**< video: luma, little-endian uint16 a pixel (gray16le) */
#define MK_PACK_RGB48   11   /**< video: R G B, little-endian uint16 each (rgb48le), 6 bytes a pixel */
/* Added later: the 10-bit biplanar layout (VideoToolbox's kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange),
 * the bytes of `ffmpeg -pix_fmt p010le` (10-bit pictures converted by the FFmpeg plugin's libswscale). */
#define MK_PACK_P010    12   /**< video: Y plane, then interleaved UV (chroma halved both ways), each
                                  sample in the high 10 bits of a little-endian uint16 (p010le) */

/** The name of packed layout `layout` ("nv12", "i420", "s16", "f32", "rgb24", "bgr24", "rgba",
 *  "bgra", "gray", "gray16le", "rgb48le", "p010le": ffmpeg's -pix_fmt / -f names), or NULL for a value
 *  that is not one. The layouts are the values from 1 up to the first that gives NULL, so a
 *  caller lists them with a loop. The string is static (never freed). Thread-safe. */
const char *mk_pack_layout_name(int32_t layout);

/** Writes the frame in a packed layout into `buffer` (capacity bytes) and sets
 *  *size to the bytes written. With buffer NULL, only sets *size to the bytes
 *  needed. Errors: MK_EINVAL (NULL, layout does not fit the media type, buffer
 *  too small: *size still says what is needed), MK_EUNSUPPORTED (pictures
 *  that need a conversion, e.g. 10-bit or 4:4:4 to NV12, when no loaded plugin
 *  has a picture converter; the FFmpeg plugin's converts them as ffmpeg's
 *  -pix_fmt does, with libswscale). */
mk_status mk_frame_pack(const mk_frame *frame, int32_t layout, uint8_t *buffer, size_t capacity, size_t *size);

/** As mk_frame_pack() for a picture layout (MK_PACK_NV12, MK_PACK_I420, MK_PACK_RGB24 ...), with the picture scaled to
 *  `width` x `height` (each 1 to 16384) by a plugin's picture converter first, resampled
 *  with `filter` (MK_SCALE_*, mediakit_types.h; MK_SCALE_DEFAULT is MK_SCALE_BICUBIC). The
 *  FFmpeg plugin's converter (libswscale) writes the bytes of
 *  `ffmpeg -vf scale=W:H:flags=bicubic -pix_fmt nv12|yuv420p|rgb24...`; a picture already of that
 *  size is packed as mk_frame_pack() packs it, as ffmpeg's scale filter passes it on.
 *  *size is set to the layout's bytes at width x height. Errors: those of
 *  mk_frame_pack(), MK_EINVAL (an audio layout, a size out of range, an unknown filter),
 *  MK_EUNSUPPORTED (no loaded plugin has a converter that scales). Thread-safe (calls are
 *  serialised per layout, size and filter). */
mk_status mk_frame_pack_scaled(const mk_frame *frame, int32_t layout, int32_t width, int32_t height, int32_t filter,
                               uint8_t *buffer, size_t capacity, size_t *size);

/** A packed layout's planes for one frame, and whether the frame's memory already holds
 *  them (mk_frame_view()). */
typedef struct mk_frame_view_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_frame_view_info) */
    int32_t plane_count;       /**< the layout's planes: MK_PACK_NV12 and MK_PACK_P010 2 (Y, UV), MK_PACK_I420 3
                                    (Y, U, V), the packed RGB / gray layouts 1; 0 for the audio
                                    layouts */
    int32_t in_place;          /**< 1: planes[] point into the frame's memory; 0: the frame must
                                    be converted or packed (mk_frame_pack writes the planes one
                                    after the other, rows of row_bytes) and planes[] are NULL */
    const uint8_t *planes[4];  /**< when in_place: borrowed from the frame, valid until mk_frame_free() */
    int64_t strides[4];        /**< when in_place: bytes from one row to the next (>= row_bytes:
                                    rows may be padded); else row_bytes */
    int64_t row_bytes[4];      /**< bytes of one row of the plane in the layout */
    int64_t rows[4];           /**< rows of the plane */
} mk_frame_view_info;

/** Describes `layout`'s planes for this frame and says whether the frame's memory already
 *  holds them, so that they can be read in place instead of packed: an NV12 picture as
 *  MK_PACK_NV12, a yuv420p picture as MK_PACK_I420 (the bytes are
 *  then those mk_frame_pack() writes, row for row). A picture that needs a conversion or its
 *  chroma interleaved or split gives in_place 0. Nothing is copied or allocated.
 *  Errors: MK_EINVAL (NULL, struct_size too small, unknown layout or one that does not fit
 *  the media type). Thread-safe. */
mk_status mk_frame_view(const mk_frame *frame, int32_t layout, mk_frame_view_info *view);

/** Frees *frame and sets it to NULL. Harmless on NULL. Thread-safe. */
void mk_frame_free(mk_frame **frame);

/** How a picture is turned for display: any of the eight quarter-turn rotations and
 *  reflections. Applied as: swap rows and columns when `transposed` (the width becomes the
 *  height), then mirror left-right when `hflip`, then top-bottom when `vflip`; so a clockwise
 *  quarter turn is {1, 1, 0}, a half turn {0, 1, 1}, upright {0, 0, 0}. Each field is 0 or 1.
 *  Fixed layout: it never grows (a new type would be added instead). */
typedef struct mk_orientation {
    int32_t transposed;        /**< rows become columns (ffmpeg's transpose) */
    int32_t hflip;             /**< mirrored left-right, after the transpose (ffmpeg's hflip) */
    int32_t vflip;             /**< mirrored top-bottom, after the transpose (ffmpeg's vflip) */
} mk_orientation;

/** Sets *out to how a track whose display matrix is `matrix` (9 values, as
 *  mk_track_info.matrix) is turned upright, as FFmpeg's autorotation turns it: the angle of
 *  the matrix rounded to whole degrees, its signs choosing among transpose / hflip / vflip. A
 *  matrix whose angle is not a multiple of 90 degrees gives upright. Writes nothing else;
 *  nothing to free. Errors: MK_EINVAL (NULL). Thread-safe. */
mk_status mk_orientation_from_matrix(const int32_t matrix[9], mk_orientation *out);

/** Sets *out to a clockwise turn by `degrees` (0, 90, 180 or 270). Nothing to free.
 *  Errors: MK_EINVAL (NULL, another angle). Thread-safe. */
mk_status mk_orientation_clockwise(int32_t degrees, mk_orientation *out);

/** Sets *out to a NEW frame (OWNED by the caller: free it with mk_frame_free) holding
 *  `frame`'s picture turned by `orientation`, in its own memory and the same pixel format:
 *  what ffmpeg's transpose / hflip / vflip filters give. Every planar format, NV12 / P010 and
 *  gray can be turned; a transpose needs the same chroma subsampling both ways (4:2:0, 4:4:4).
 *  An upright orientation gives a new reference to the same picture (still to be freed).
 *  `frame` is only read (it stays the caller's). On error *out is NULL.
 *  Errors: MK_EINVAL (NULL, an audio frame, a field other than 0 or 1), MK_EUNSUPPORTED (a
 *  transpose of 4:2:2 pictures). */
mk_status mk_frame_orient(const mk_frame *frame, const mk_orientation *orientation, mk_frame **out);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_FRAME_H */
