/*
 * mediakit_types.h — the values MediaKit's two C interfaces share: status codes,
 * media types, pixel formats and sample formats.
 *
 * Included by mediakit.h (the C API for applications) and mediakit_plugin.h (the
 * ABI between the host and codec plugins), so a status, a pixel format or a sample
 * format has one spelling and one value on both sides: a frame's `format` goes from
 * a plugin to an application unchanged. Values never change; new ones are appended.
 * The Swift core's `PixelFormat` and `SampleFormat` raw values and the Python
 * bindings' format tables use the same numbers (a unit test checks the Swift side).
 */
#ifndef MEDIAKIT_TYPES_H
#define MEDIAKIT_TYPES_H

#include <stdint.h>

/* ------------------------------------------------------------------ status */

/** The result of every call: MK_OK or a negative code below. Plugins return the
 *  subset MK_OK, MK_EAGAIN, MK_EOF, MK_EINVAL, MK_ENOMEM, MK_EUNSUPPORTED, MK_EDATA,
 *  MK_EFAIL and (decoders) MK_EINVALIDATED. */
typedef int32_t mk_status;

#define MK_OK            0   /**< success */
#define MK_EAGAIN      (-1)  /**< flow control: receive frames / send more packets first */
#define MK_EOF         (-2)  /**< the end: no more packets, or the decoder is drained */
#define MK_EINVAL      (-3)  /**< a bad argument: NULL, closed or foreign handle, out of range,
                                  a struct_size too small */
#define MK_ENOMEM      (-4)  /**< out of memory */
#define MK_EUNSUPPORTED (-5) /**< a format, codec, profile or feature that is not supported */
#define MK_EDATA       (-6)  /**< the input is damaged or not what it claims to be */
#define MK_EIO         (-7)  /**< an operating-system I/O call failed */
#define MK_ENOTFOUND   (-8)  /**< a file, track, plugin or decoder was not found */
#define MK_ESTATE      (-9)  /**< a call in the wrong order (send after drain, ...) */
#define MK_EPLUGIN    (-10)  /**< a plugin was refused (wrong ABI version, broken) */
#define MK_ELIMIT     (-11)  /**< a size or count above MediaKit's hard limits */
#define MK_EFAIL      (-12)  /**< a decoder backend failed; see its message */
#define MK_ETRUNCATED (-13)  /**< the file is cut short (it ends inside a packet, page or frame):
                                  everything before the cut was returned or written; treat it as
                                  the end, with a warning. mk_last_error() names the offset. */
#define MK_ECANCELLED (-14)  /**< the caller's progress callback asked to stop; nothing was left
                                  under the target names (C API only: plugins never return it) */
#define MK_EINVALIDATED (-15) /**< the decoder stopped for a reason other than the data it was
                                  given (a device plugin lost its device): it must be made again.
                                  A decoder plugin's send_packet / receive_frame may return it; a
                                  decode session then rebuilds the decoder and sends the packet
                                  again without counting it as damaged data (as VideoToolbox's
                                  kVTInvalidSessionErr). A host that predates it treats it as
                                  MK_EFAIL */

/* ------------------------------------------------------------------ media types */

/** "Unknown timestamp", as AV_NOPTS_VALUE (packets, frames; both headers). */
#define MK_NOPTS_VALUE ((int64_t)INT64_MIN)

#define MK_MEDIA_AUDIO    1
#define MK_MEDIA_VIDEO    2
#define MK_MEDIA_SUBTITLE 3
#define MK_MEDIA_DATA     4

/* ------------------------------------------------------------------ pixel formats */

/* Video frames. Planar YUV: plane 0 = Y, 1 = U (Cb), 2 = V (Cr); semi-planar (NV12,
 * P010): 0 = Y, 1 = interleaved UV. "10" and "12" formats store each sample in the
 * low bits of a little-endian uint16; P010 stores it in the high 10 bits. The J
 * formats are full range (JPEG). FFmpeg's names: yuv420p, yuvj420p, ..., p010le,
 * gray, gray10le, yuv420p12le. */
#define MK_PIXEL_YUV420P     1
#define MK_PIXEL_YUVJ420P    2
#define MK_PIXEL_YUV422P     3
#define MK_PIXEL_YUVJ422P    4
#define MK_PIXEL_YUV444P     5
#define MK_PIXEL_YUVJ444P    6
#define MK_PIXEL_NV12        7
#define MK_PIXEL_YUV420P10   8
#define MK_PIXEL_YUV422P10   9
#define MK_PIXEL_YUV444P10  10
#define MK_PIXEL_P010       11
#define MK_PIXEL_GRAY8      12
#define MK_PIXEL_GRAY10     13
#define MK_PIXEL_YUV420P12  14
/* Packed RGB and 16-bit gray (appended in 2.3; a host only asks the FFmpeg plugin's converter
 * for them). One plane; 8-bit RGB samples in the order the name gives (rgb24: R G B, bgra: B G
 * R A); rgb48le and gray16le in little-endian uint16. FFmpeg's names: rgb24, bgr24, rgba,
 * bgra, gray16le, rgb48le. Conversions to them are full range, as ffmpeg's. */
#define MK_PIXEL_RGB24      15
#define MK_PIXEL_BGR24      16
#define MK_PIXEL_RGBA       17
#define MK_PIXEL_BGRA       18
#define MK_PIXEL_GRAY16     19
#define MK_PIXEL_RGB48      20

/* ------------------------------------------------------------------ scale filters */

/* How a picture is resampled when its size changes (mk_frame_pack_scaled, the picture
 * converter's scale_filter). The names are FFmpeg's scale-filter flags, and the FFmpeg
 * plugin's converter uses the libswscale filter of that name, so a picture scaled with
 * MK_SCALE_BICUBIC has the bytes of `ffmpeg -vf scale=W:H:flags=bicubic`. */
#define MK_SCALE_DEFAULT        0   /**< MK_SCALE_BICUBIC, the ffmpeg tool's default */
#define MK_SCALE_FAST_BILINEAR  1   /**< "fast_bilinear" */
#define MK_SCALE_BILINEAR       2   /**< "bilinear" */
#define MK_SCALE_BICUBIC        3   /**< "bicubic" */
#define MK_SCALE_NEIGHBOR       4   /**< "neighbor": nearest sample */
#define MK_SCALE_AREA           5   /**< "area": averaging, for shrinking */
#define MK_SCALE_LANCZOS        6   /**< "lanczos" */

/* ------------------------------------------------------------------ sample formats */

/* Audio frames. Interleaved formats have one plane; planar ("P") formats one per
 * channel. F32 / F64 are IEEE floats in [-1, 1] (FFmpeg's flt / dbl). */
#define MK_SAMPLES_U8    1
#define MK_SAMPLES_S16   2
#define MK_SAMPLES_S32   3
#define MK_SAMPLES_F32   4
#define MK_SAMPLES_F64   5
#define MK_SAMPLES_U8P   6
#define MK_SAMPLES_S16P  7
#define MK_SAMPLES_S32P  8
#define MK_SAMPLES_F32P  9
#define MK_SAMPLES_F64P 10
/** Signed 24-bit packed in 3 bytes, little-endian: audio converter formats only (no
 *  decoder outputs them). */
#define MK_SAMPLES_S24  11
#define MK_SAMPLES_S24P 12
/* Added later: storage variants, converter and raw-writer formats like S24 (the decoders
 * give the types above). Each interleaved type is odd and its planar ("P") form the next
 * value. A plugin is only given a format it lists (the host converts first); an older host
 * ignores these values in a plugin's lists. Moving between a variant and its
 * native type (S16BE and S16, S8 and U8, the 24-bit forms) is lossless. */
#define MK_SAMPLES_S8         13  /**< signed 8-bit; 0 is silence (FFmpeg's raw "s8") */
#define MK_SAMPLES_S8P        14
#define MK_SAMPLES_S16BE      15  /**< signed 16-bit big-endian (FFmpeg's "s16be", AIFF's) */
#define MK_SAMPLES_S16BEP     16
#define MK_SAMPLES_S24BE      17  /**< signed 24-bit big-endian in 3 bytes ("s24be") */
#define MK_SAMPLES_S24BEP     18
#define MK_SAMPLES_S32BE      19  /**< signed 32-bit big-endian ("s32be") */
#define MK_SAMPLES_S32BEP     20
#define MK_SAMPLES_F32BE      21  /**< 32-bit float big-endian ("f32be") */
#define MK_SAMPLES_F32BEP     22
#define MK_SAMPLES_F64BE      23  /**< 64-bit float big-endian ("f64be") */
#define MK_SAMPLES_F64BEP     24
#define MK_SAMPLES_S24IN32HI  25  /**< 24 bits in the high 3 bytes of a 32-bit little-endian
                                       word: S32 with a zero low byte (ignored when read) */
#define MK_SAMPLES_S24IN32HIP 26
#define MK_SAMPLES_S24IN32LO  27  /**< 24 bits in the low 3 bytes of a 32-bit little-endian
                                       word, sign-extended (the top byte ignored when read) */
#define MK_SAMPLES_S24IN32LOP 28

#endif /* MEDIAKIT_TYPES_H */
