/*
 * ffmpeg_internal.h — what the FFmpeg plugin's files share. The descriptor (ffmpeg_plugin.c)
 * calls the decoders (ffmpeg_decoder.c), the encoders (ffmpeg_encoder.c) and the libswscale
 * picture converter (ffmpeg_converter.c); those three call only ffmpeg_common.c (format and
 * status maps, the version string). Nothing here is exported from the plugin (hidden
 * visibility); only mediakit_plugin_entry is.
 */
#ifndef MK_FFMPEG_INTERNAL_H
#define MK_FFMPEG_INTERNAL_H

#include "mediakit/mediakit_plugin.h"
#include "../../Common/mk_plugin_support.h"

#include <libavcodec/avcodec.h>
#include <libavutil/frame.h>
#include <libavutil/pixfmt.h>

#if LIBAVCODEC_VERSION_INT < AV_VERSION_INT(59, 37, 100) || \
    LIBAVUTIL_VERSION_INT < AV_VERSION_INT(57, 28, 100)
#error "MediaKitPluginFFmpeg needs FFmpeg 5.1 or newer (libavcodec >= 59.37, libavutil >= 57.28)"
#endif

#if defined(__GNUC__) || defined(__clang__)
#define FFP_HIDDEN __attribute__((visibility("hidden")))
#else
#define FFP_HIDDEN
#endif

/** The plugin's own version (the descriptor adds libavcodec's). */
#define FFP_PLUGIN_VERSION "1.0.0"

/** Size of each instance's last_error buffer. */
#define FFP_ERROR_SIZE 512

/** The smallest mk_plugin_frame struct_size accepted (ABI 2.0: up to release_opaque). */
#define FFP_FRAME_MIN_SIZE MKP_END_OF(mk_plugin_frame, release_opaque)

/** One pixel format both libav* and the ABI know. */
typedef struct ffp_pix_map {
    enum AVPixelFormat av;
    int32_t mk;     /* MK_PIXEL_* */
    int planes;
    int full_range; /* a yuvj* format: full range even if the frame says nothing */
} ffp_pix_map;

/** The entry for an AVPixelFormat, or NULL when the ABI has no such format. */
FFP_HIDDEN const ffp_pix_map *ffp_find_pix(int format);
/** The entry for an MK_PIXEL_* value, or NULL. */
FFP_HIDDEN const ffp_pix_map *ffp_find_mk_pix(int32_t format);
/** The MK_* status for an AVERROR code. */
FFP_HIDDEN int32_t ffp_map_averror(int err);
/** mk_plugin_frame.release for a frame whose release_opaque is an AVFrame: frees it. */
FFP_HIDDEN void ffp_release_frame(void *opaque);
/** The MK_* status for the libavcodec error `err` (never MK_EAGAIN / MK_EOF: those become
 *  MK_EFAIL), with "PREFIX: WHAT: av_strerror text" written into buf (the audio and video
 *  encoders' failures of create, send and receive). */
FFP_HIDDEN int32_t ffp_encoder_failure(char *buf, size_t size, const char *prefix, const char *what, int err);
/** An encoder's send_frame(NULL): enters draining once (MK_OK), MK_EOF when already
 *  draining, MK_EAGAIN when libavcodec wants packets received first. */
FFP_HIDDEN int32_t ffp_encoder_drain(AVCodecContext *ctx, int *draining, char *buf, size_t size, const char *prefix);
/** An encoder's receive_packet into `packet` (unreferenced first): MK_OK, MK_EAGAIN, MK_EOF or
 *  an error with its message in buf. */
FFP_HIDDEN int32_t ffp_encoder_receive(AVCodecContext *ctx, AVPacket *packet, char *buf, size_t size, const char *prefix);
/** The MK_SAMPLES_* value for an AVSampleFormat, 0 when the ABI has none. */
FFP_HIDDEN int32_t ffp_map_sample_fmt(int format);
/** "1.0.0 (libavcodec X.Y.Z)", the descriptor's version (ffmpeg_common.c); its buffer is
 *  ffp_version_text, filled in by the first call (init()). */
FFP_HIDDEN const char *ffp_version_string(void);
FFP_HIDDEN extern char ffp_version_text[96];
/** Lists the input formats of the libavformat loaded (ffmpeg_demuxer.c); called by init(). */
FFP_HIDDEN void ffx_init_formats(const mk_host *host);
/** The demuxer factory, plugin ABI 2.4 (ffmpeg_demuxer.c). */
FFP_HIDDEN const mk_plugin_demuxer_factory *ffx_factory(void);
/** Lists the output formats of the libavformat loaded (ffmpeg_muxer.c); called by init(). */
FFP_HIDDEN void ffm_init_formats(const mk_host *host);
/** The muxer factory, plugin ABI 2.5 (ffmpeg_muxer.c). */
FFP_HIDDEN const mk_plugin_muxer_factory *ffm_factory(void);
/** Lists every audio and video decoder of the libavcodec loaded as a backend
 *  (ffmpeg_decoder.c); called by init(). */
FFP_HIDDEN void ffd_init_backends(const mk_host *host);
/** Frees the decoder backend list (ffmpeg_decoder.c); called by deinit(). */
FFP_HIDDEN void ffd_deinit_backends(void);
/** The decoder factory (ffmpeg_decoder.c). */
FFP_HIDDEN const mk_plugin_decoder_factory *ffd_factory(void);
/** Builds the encoder backend list from the libavcodec loaded (ffmpeg_encoder.c); called
 *  by init(). */
FFP_HIDDEN void ffe_init_backends(const mk_host *host);
/** Lists the video encoders of the libavcodec loaded into out[0 ..< room] and returns how
 *  many (ffmpeg_video_encoder.c); called by ffe_init_backends. */
FFP_HIDDEN uint32_t ffv_init_backends(const mk_host *host, mk_plugin_encoder_backend *out, uint32_t room);
/** The encoder factory (ffmpeg_encoder.c). */
FFP_HIDDEN const mk_plugin_encoder_factory *ffe_factory(void);
/** The picture converter factory (ffmpeg_converter.c). */
FFP_HIDDEN const mk_plugin_picture_converter_factory *ffc_factory(void);

#endif /* MK_FFMPEG_INTERNAL_H */
