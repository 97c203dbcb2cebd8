/*
 * mediakit_plugin.h — the C ABI between the MediaKit host and codec plugins.
 *
 * A plugin is a shared library that exports exactly one symbol:
 *
 *     const mk_plugin_descriptor *mediakit_plugin_entry(void);
 *
 * The host dlopen()s the library, calls the entry point, and reads
 * `abi_version` FIRST. If it is not MK_PLUGIN_ABI_VERSION the host refuses the
 * plugin with an error naming both versions and touches no other field.
 *
 * The descriptor lists codec backends by index. Each backend carries static
 * metadata (codec name, media type, backend name, priority) and a `create`
 * function that returns an opaque decoder instance plus its vtable. One shared
 * library may carry many backends.
 *
 * Growth rules: every struct starts with `struct_size` (or, for the
 * descriptor, `abi_version` then `struct_size`) and ends with reserved space.
 * A new field is only ever appended; a reader checks `struct_size` before it
 * reads a field that a smaller struct would not have.
 *
 * Codec names are the lower-case names FFmpeg uses ("h264", "hevc", "aac",
 * "mp3", "av1", "opus", "vorbis", "flac", "alac", "ac3", "eac3", "vp8",
 * "vp9", "mpeg4", "mp2", "pcm_s16le", ...).
 *
 * Decoding follows libavcodec's send/receive model:
 *
 *     send_packet(dec, pkt)      -> MK_PLUGIN_OK, or MK_PLUGIN_EAGAIN when
 *                                   output must be received first
 *     send_packet(dec, NULL)     -> enter draining (end of stream)
 *     receive_frame(dec, &frame) -> MK_PLUGIN_OK (a frame), MK_PLUGIN_EAGAIN
 *                                   (send more input), MK_PLUGIN_EOF (drained)
 *     flush(dec)                 -> drop every buffered packet and frame and
 *                                   leave draining; used after a seek
 *
 * Frames cross the boundary without a copy: plane pointers into the plugin's
 * own buffers plus a release callback that the host calls exactly once when it
 * no longer needs the planes. A released frame may outlive its decoder: the
 * plugin must keep the planes valid until `release` is called even after
 * `destroy`.
 *
 * Trimming: backends output every decoded sample; the host trims. A backend
 * never drops samples on its own account (Opus pre-skip, AAC/MP3 priming,
 * end padding) and never shifts frame timestamps to hide them: the host
 * trims by the track's encoder delay, edit list and end position, so every
 * backend for a codec gives the same raw output. (Packets the host marks
 * MK_PACKET_FLAG_DISCARD are the one exception: their frames are dropped.)
 *
 * Threads: a decoder instance is used by one thread at a time (the host
 * serialises calls). `create` and the descriptor may be used from any thread.
 * `release` may be called from any thread.
 */
#ifndef MEDIAKIT_PLUGIN_H
#define MEDIAKIT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. Bumped on any incompatible change. */
#define MK_PLUGIN_ABI_VERSION 1u

/** Name of the one symbol a plugin exports. */
#define MK_PLUGIN_ENTRY_SYMBOL "mediakit_plugin_entry"

/* ---- Status codes (negative = error) ---------------------------------- */
#define MK_PLUGIN_OK           0
#define MK_PLUGIN_EAGAIN      (-1)  /**< flow control: receive output / send input first */
#define MK_PLUGIN_EOF         (-2)  /**< the decoder is fully drained */
#define MK_PLUGIN_EINVAL      (-3)  /**< a bad argument (NULL, wrong struct size ...) */
#define MK_PLUGIN_ENOMEM      (-4)  /**< allocation failed */
#define MK_PLUGIN_EUNSUPPORTED (-5) /**< codec, profile or format not supported */
#define MK_PLUGIN_EDATA       (-6)  /**< the input is invalid */
#define MK_PLUGIN_EFAIL       (-7)  /**< any other failure; see last_error */

/* ---- Media types --------------------------------------------------------- */
#define MK_PLUGIN_MEDIA_AUDIO 1u
#define MK_PLUGIN_MEDIA_VIDEO 2u

/* ---- Sample formats (audio frames) -------------------------------------- */
/* Interleaved formats have one plane; planar ("P") formats one per channel. */
#define MK_SAMPLE_U8    1
#define MK_SAMPLE_S16   2
#define MK_SAMPLE_S32   3
#define MK_SAMPLE_FLT   4
#define MK_SAMPLE_DBL   5
#define MK_SAMPLE_U8P   6
#define MK_SAMPLE_S16P  7
#define MK_SAMPLE_S32P  8
#define MK_SAMPLE_FLTP  9
#define MK_SAMPLE_DBLP 10

/* ---- Pixel formats (video frames) --------------------------------------- */
/* Planar YUV: plane 0 = Y, 1 = U (Cb), 2 = V (Cr). Semi-planar: 0 = Y, 1 = UV.
 * "10" formats store each sample in the low 10 bits of a little-endian uint16;
 * P010 stores it in the high 10 bits. */
#define MK_PIX_YUV420P     1
#define MK_PIX_YUVJ420P    2   /* yuv420p, full range (JPEG) */
#define MK_PIX_YUV422P     3
#define MK_PIX_YUVJ422P    4
#define MK_PIX_YUV444P     5
#define MK_PIX_YUVJ444P    6
#define MK_PIX_NV12        7
#define MK_PIX_YUV420P10   8
#define MK_PIX_YUV422P10   9
#define MK_PIX_YUV444P10  10
#define MK_PIX_P010       11
#define MK_PIX_GRAY8      12
#define MK_PIX_GRAY10     13
#define MK_PIX_YUV420P12  14

/* ---- Packet flags --------------------------------------------------------- */
#define MK_PACKET_FLAG_KEY     0x1u  /**< random access point */
#define MK_PACKET_FLAG_DISCARD 0x2u  /**< decode (as a reference) but drop its output */

/** "Unknown timestamp", as AV_NOPTS_VALUE. */
#define MK_NOPTS_VALUE ((int64_t)INT64_MIN)

/** What the host tells a backend about the stream it is to decode. */
typedef struct mk_plugin_codec_config {
    uint32_t struct_size;      /**< sizeof(mk_plugin_codec_config) of the host */
    uint32_t media_type;       /**< MK_PLUGIN_MEDIA_* */
    const char *codec;         /**< codec name, e.g. "h264"; never NULL */
    const uint8_t *extradata;  /**< codec configuration ("magic cookie"): avcC, hvcC,
                                    av1C, AudioSpecificConfig, OpusHead, Vorbis
                                    headers (Xiph lacing); NULL if none. Borrowed:
                                    valid only during create(); copy it. */
    size_t extradata_size;
    int32_t time_base_num;     /**< time base of packet and frame timestamps */
    int32_t time_base_den;
    int32_t width;             /**< video: coded width, 0 if unknown */
    int32_t height;            /**< video: coded height, 0 if unknown */
    int32_t sample_rate;       /**< audio: Hz, 0 if unknown */
    int32_t channels;          /**< audio: channel count, 0 if unknown */
    int32_t bits_per_coded_sample; /**< 0 if unknown */
    int32_t thread_count;      /**< 0 = the backend's choice (all cores) */
    uint32_t flags;            /**< reserved for future use; 0 */
    int32_t block_align;       /**< audio: bytes per packet for PCM-like codecs, 0 if unknown */
    int32_t video_delay;       /**< video: frames the decoder must hold back to output in
                                    presentation order (B-frame reorder depth), as the
                                    container's timestamps show it; 0 if none or unknown.
                                    libavcodec: AVCodecContext.has_b_frames. */
    void *reserved[8];
} mk_plugin_codec_config;

/** A compressed packet handed to send_packet. Borrowed for the call only:
 *  the backend copies what it keeps. */
typedef struct mk_plugin_packet {
    uint32_t struct_size;
    uint32_t flags;            /**< MK_PACKET_FLAG_* */
    const uint8_t *data;
    size_t size;
    int64_t pts;               /**< in the config's time base, or MK_NOPTS_VALUE */
    int64_t dts;
    int64_t duration;          /**< 0 if unknown */
    int64_t reserved[4];
} mk_plugin_packet;

/** A decoded frame filled in by receive_frame. The planes belong to the
 *  plugin until the host calls release(release_opaque), exactly once. */
typedef struct mk_plugin_frame {
    uint32_t struct_size;      /**< set by the host before receive_frame */
    uint32_t media_type;       /**< MK_PLUGIN_MEDIA_* */
    int32_t format;            /**< MK_PIX_* for video, MK_SAMPLE_* for audio */
    uint32_t flags;            /**< MK_PACKET_FLAG_KEY for a key frame */
    int64_t pts;               /**< best-effort presentation time, config time base */
    int64_t duration;          /**< 0 if unknown */
    /* video */
    int32_t width, height;
    int32_t color_range;       /**< 0 unknown, 1 limited (MPEG), 2 full (JPEG) */
    int32_t color_primaries;   /**< ISO/IEC 23091-4 code points; 2 = unspecified */
    int32_t color_trc;
    int32_t color_space;
    int32_t sar_num, sar_den;  /**< sample aspect ratio, 0/1 if unknown */
    int32_t chroma_location;   /**< 0 unspecified, 1 left (MPEG-2), 2 center (JPEG), 3 top-left,
                                    4 top, 5 bottom-left, 6 bottom (AVChromaLocation values) */
    /* audio */
    int32_t sample_rate;
    int32_t channels;
    uint64_t channel_mask;     /**< WAVE channel mask, 0 if unknown */
    int32_t nb_samples;        /**< samples per channel */
    /* planes */
    int32_t plane_count;
    uint8_t *planes[8];
    int64_t strides[8];        /**< video: bytes per row; audio: bytes per plane */
    void (*release)(void *release_opaque);
    void *release_opaque;
    void *reserved[8];
} mk_plugin_frame;

/** Operations on one decoder instance. */
typedef struct mk_plugin_decoder_vtable {
    uint32_t struct_size;
    /** Feed a packet; NULL enters draining. Returns MK_PLUGIN_OK, MK_PLUGIN_EAGAIN
     *  (receive first), MK_PLUGIN_EOF (already draining) or an error. */
    int (*send_packet)(void *decoder, const mk_plugin_packet *packet);
    /** Fill *frame (whose struct_size the host set). MK_PLUGIN_OK, EAGAIN, EOF or
     *  an error. On anything but OK the frame is untouched and nothing must be released. */
    int (*receive_frame)(void *decoder, mk_plugin_frame *frame);
    /** Drop buffered state (after a seek) and leave draining. */
    void (*flush)(void *decoder);
    /** Free the instance. Frames already handed out stay valid until released. */
    void (*destroy)(void *decoder);
    /** A message for the last failure on this instance; owned by the instance,
     *  valid until the next call on it. Never NULL (may be ""). */
    const char *(*last_error)(void *decoder);
    void *reserved[8];
} mk_plugin_decoder_vtable;

/** Static description of one codec backend. */
typedef struct mk_plugin_backend {
    uint32_t struct_size;
    uint32_t media_type;       /**< MK_PLUGIN_MEDIA_* */
    const char *codec;         /**< codec name this backend decodes */
    const char *name;          /**< backend name, unique in the plugin, e.g. "ffmpeg" */
    int32_t priority;          /**< higher wins when several backends decode a codec;
                                    generic libraries use 100, dedicated ones 200 */
    /** Create a decoder. On success *decoder and *vtable are set and MK_PLUGIN_OK
     *  returned. On failure nothing is allocated, a message is written into
     *  errbuf (NUL-terminated, at most errbuf_size bytes) and an error returned. */
    int (*create)(const mk_plugin_codec_config *config,
                  void **decoder,
                  const mk_plugin_decoder_vtable **vtable,
                  char *errbuf, size_t errbuf_size);
    void *reserved[8];
} mk_plugin_backend;

/* ---- Picture converters ----------------------------------------------------
 *
 * A plugin may also offer picture converters: they change a decoded picture's
 * pixel format (bit depth, chroma subsampling, planar/semi-planar layout) without
 * changing its size, e.g. yuv420p10 -> nv12 or yuv444p -> yuv420p. The host uses
 * one when a caller asks for a layout that the decoded pictures cannot be packed
 * into by copying samples. Converters appeared after the first release of ABI 1:
 * the host reads `converter_count` and `converters` only from a descriptor whose
 * struct_size covers them.
 *
 * Ownership: convert() borrows the source frame's planes for the call only. The
 * destination planes belong to the plugin until the host calls
 * dst->release(dst->release_opaque), exactly once, from any thread; they stay
 * valid after destroy(). Threads: one converter instance is used by one thread
 * at a time; create() may be called from any thread.
 */

/** What the host asks a converter to do. */
typedef struct mk_plugin_converter_config {
    uint32_t struct_size;      /**< sizeof(mk_plugin_converter_config) of the host */
    int32_t src_format;        /**< MK_PIX_* of the pictures that will be sent */
    int32_t dst_format;        /**< MK_PIX_* wanted */
    int32_t width;             /**< picture size, the same on both sides */
    int32_t height;
    int32_t color_range;       /**< of the source, as in mk_plugin_frame; kept as it is */
    int32_t color_space;       /**< of the source (ISO/IEC 23091-4 matrix); kept as it is */
    uint32_t flags;            /**< reserved for future use; 0 */
    void *reserved[8];
} mk_plugin_converter_config;

/** Operations on one converter instance. */
typedef struct mk_plugin_converter_vtable {
    uint32_t struct_size;
    /** Converts `src` (a picture in the config's src_format and size; borrowed for the
     *  call) into *dst (whose struct_size the host set): format, size, planes, strides
     *  and release are filled in, and every other field of src is carried over.
     *  Returns MK_PLUGIN_OK; on an error *dst is untouched and nothing must be released. */
    int (*convert)(void *converter, const mk_plugin_frame *src, mk_plugin_frame *dst);
    /** Frees the instance. Pictures already handed out stay valid until released. */
    void (*destroy)(void *converter);
    /** A message for the last failure on this instance; owned by the instance,
     *  valid until the next call on it. Never NULL (may be ""). */
    const char *(*last_error)(void *converter);
    void *reserved[8];
} mk_plugin_converter_vtable;

/** Static description of one picture converter. */
typedef struct mk_plugin_converter {
    uint32_t struct_size;
    const char *name;          /**< converter name, unique in the plugin, e.g. "swscale" */
    int32_t priority;          /**< higher wins when several converters can do a conversion */
    /** 1 when create() accepts converting src_format to dst_format, else 0. */
    int (*supports)(int32_t src_format, int32_t dst_format);
    /** Create a converter. On success *converter and *vtable are set and MK_PLUGIN_OK
     *  returned. On failure nothing is allocated, a message is written into errbuf
     *  (NUL-terminated, at most errbuf_size bytes) and an error returned. */
    int (*create)(const mk_plugin_converter_config *config,
                  void **converter,
                  const mk_plugin_converter_vtable **vtable,
                  char *errbuf, size_t errbuf_size);
    void *reserved[8];
} mk_plugin_converter;

/** What mediakit_plugin_entry returns. Static storage; the host never frees it. */
typedef struct mk_plugin_descriptor {
    uint32_t abi_version;      /**< MK_PLUGIN_ABI_VERSION the plugin was built for; read first */
    uint32_t struct_size;      /**< sizeof(mk_plugin_descriptor) of the plugin */
    const char *name;          /**< plugin name, e.g. "ffmpeg" */
    const char *version;       /**< plugin version, e.g. "1.0.0 (libavcodec 59.37.100)" */
    const char *description;
    uint32_t backend_count;
    const mk_plugin_backend *backends; /**< backend_count entries */
    void *reserved[8];
    /* Appended: read only when struct_size covers them (see "Picture converters"). */
    uint32_t converter_count;
    const mk_plugin_converter *converters; /**< converter_count entries; NULL if none */
} mk_plugin_descriptor;

/** Signature of the entry point. */
typedef const mk_plugin_descriptor *(*mk_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_PLUGIN_H */
