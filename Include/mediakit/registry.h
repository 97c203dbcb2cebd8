/*
 * mediakit/registry.h - part of the C API of MediaKit (libmediakit): codec plugins, their backends, and the containers MediaKit reads and writes.
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_REGISTRY_H
#define MEDIAKIT_REGISTRY_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Loads a codec plugin file, or every plugin in a directory, in addition to the
 *  default locations (MEDIAKIT_PLUGIN_PATH, the library's own directory,
 *  <prefix>/lib/mediakit/plugins), which are searched on first use.
 *  Errors: MK_EINVAL (NULL), MK_ENOTFOUND (nothing there), MK_EPLUGIN (not a
 *  plugin, or built for another plugin ABI). Thread-safe. */
mk_status mk_plugins_load(const char *path);

/** Number of loaded plugins (searching the default locations first). Thread-safe. */
int32_t mk_plugin_count(void);

/** One loaded plugin. Strings are static for the life of the process. */
typedef struct mk_plugin_info {
    uint32_t struct_size;     /**< set by the caller: sizeof(mk_plugin_info) */
    const char *name;         /**< "ffmpeg" */
    const char *version;      /**< the plugin's version string */
    const char *path;         /**< the file it was loaded from */
    const char *codecs;       /**< comma-separated "codec:priority" list, e.g. "h264:100,aac:100" */
} mk_plugin_info;

/** Fills *info for plugin `index` (0 <= index < mk_plugin_count()).
 *  Errors: MK_EINVAL (NULL, small struct_size, index out of range). Thread-safe. */
mk_status mk_plugin_get_info(int32_t index, mk_plugin_info *info);

/** Kinds of backends (mk_backend_info.kind). */
#define MK_BACKEND_DECODER            1
#define MK_BACKEND_ENCODER            2
#define MK_BACKEND_PICTURE_CONVERTER  3

/** One backend a loaded plugin registered: a decoder or encoder for a codec, or a picture
 *  converter. Strings are static for the life of the process. */
typedef struct mk_backend_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_backend_info) */
    int32_t kind;              /**< MK_BACKEND_* */
    const char *codec;         /**< FFmpeg's codec name ("h264"); "" for a picture converter */
    const char *name;          /**< the backend's name, as decoder and encoder settings' `backend` take it */
    int32_t media_type;        /**< MK_MEDIA_* of the codec; 0 for a picture converter */
    int32_t priority;          /**< the higher is chosen first among those of a codec */
    const char *plugin;        /**< the plugin's name ("ffmpeg") */
    const char *plugin_path;   /**< the file it was loaded from */
    /* Added later (filled only when struct_size covers them). What an encoder takes (all zero
     * / NULL for the other kinds); arrays are static for the life of the process: */
    const int32_t *sample_formats; /**< MK_SAMPLES_* it takes, preferred first */
    int32_t sample_format_count;
    const int32_t *sample_rates;   /**< the rates it takes (Hz); NULL (count 0): any rate from
                                        min_sample_rate to max_sample_rate */
    int32_t sample_rate_count;
    int32_t min_sample_rate;   /**< with sample_rate_count 0, the range of rates it takes */
    int32_t max_sample_rate;
    int32_t max_channels;      /**< channels it takes: 1 to this */
    const uint64_t *channel_masks; /**< WAVE channel masks it takes (one per channel count);
                                        NULL (count 0): the default order of each count */
    int32_t channel_mask_count;
    int64_t min_bit_rate;      /**< bit rates (bits per second) it can be asked for; both 0 when */
    int64_t max_bit_rate;      /**< it takes none (a lossless codec) */
    int32_t scales;            /**< picture converter: 1 when it also changes the picture size
                                    (what mk_frame_pack_scaled needs); 0 otherwise */
} mk_backend_info;

/** Number of backends of every loaded plugin (searching the default locations first): the
 *  decoders, then the encoders, then the picture converters, each by priority, highest first.
 *  Thread-safe. */
int32_t mk_backend_count(void);

/** Fills *info for backend `index` (0 <= index < mk_backend_count()). Errors: MK_EINVAL (NULL,
 *  small struct_size, index out of range). Thread-safe. */
mk_status mk_backend_get_info(int32_t index, mk_backend_info *info);

/** Sets *supported to 1 when picture converter `index` (a backend of kind
 *  MK_BACKEND_PICTURE_CONVERTER) takes `source` pictures and returns `target` ones (MK_PIXEL_*
 *  codes), else 0. Errors: MK_EINVAL (NULL, index out of range, not a picture converter).
 *  Thread-safe. */
mk_status mk_backend_converts(int32_t index, int32_t source, int32_t target, int32_t *supported);

/** Kinds of container formats (mk_container_info.kind). */
#define MK_CONTAINER_DEMUXER  1   /**< read by mk_demuxer_open (chosen by probing the bytes) */
#define MK_CONTAINER_MUXER    2   /**< written by mk_muxer_open / mk_remux (chosen by the extension) */
#define MK_CONTAINER_FRAME_SINK 3 /**< a raw output of decoded frames written by
                                       mk_decode_file ("pcm", "wav", "rawvideo", "y4m": chosen by
                                       mk_decode_settings.wav / .y4m; its extensions are the
                                       customary ones); codecs and options are "" */

/** One container format of the library's catalogue. Strings are static for the life of the
 *  process. */
typedef struct mk_container_info {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_container_info) */
    int32_t kind;              /**< MK_CONTAINER_DEMUXER, MK_CONTAINER_MUXER or MK_CONTAINER_FRAME_SINK */
    const char *name;          /**< "mp4", "matroska", "webm", "ogg" ... */
    const char *description;   /**< "MP4/MOV (ISO BMFF)" */
    const char *extensions;    /**< comma-separated, without dots: "mp4,m4a,m4v,mov,3gp" (a
                                    muxer's: the extensions that choose it) */
    const char *mime_types;    /**< comma-separated MIME types */
    /* Added later (a caller built against an older header passes the smaller struct_size and
       gets the fields above only): */
    const char *codecs;        /**< a muxer's: the codecs it carries, comma-separated ("aac,ac3,...");
                                    "" for a demuxer */
    const char *options;       /**< a muxer's: the options it takes, comma-separated ("layout,
                                    time-scale,..."; see mk_muxer_settings); "" for a demuxer */
    /* Added later (filled only when struct_size covers it): */
    const char *plugin;        /**< "" for a format built into the library; for a plugin's
                                    demuxer (the FFmpeg plugin's libavformat formats) the
                                    plugin's name ("ffmpeg"), and `name` is "plugin:format"
                                    ("ffmpeg:avi"), the name mk_demuxer_open_as takes. A
                                    plugin's format may list no extensions or MIME types */
} mk_container_info;

/** Number of container formats: the built-in demuxers (in the order they are probed), then
 *  the plugins' demuxers (asked only when no built-in one claims the bytes, or
 *  when named: mk_demuxer_open_as), then the muxers, then the frame sinks. The
 *  first call loads the plugins (as the first decoder does). Thread-safe. */
int32_t mk_container_count(void);

/** Fills *info for container format `index` (0 <= index < mk_container_count()), as far as
 *  info->struct_size reaches (the shorter struct, up to mime_types, is accepted). The strings are
 *  the library's (static; do not free). Errors: MK_EINVAL (NULL, struct_size below that shorter
 *  struct, index out of range). Thread-safe. */
mk_status mk_container_get_info(int32_t index, mk_container_info *info);

/** Number of plugin files the registry found but refused (not a plugin, another plugin ABI, a
 *  failed entry point). Thread-safe. */
int32_t mk_plugin_failure_count(void);

/** Sets *message to failure `index` (0 <= index < mk_plugin_failure_count()): a sentence naming
 *  the file and why it was refused, and *path to that file (either may be NULL). Strings are
 *  static for the life of the process. Errors: MK_EINVAL (index out of range). Thread-safe. */
mk_status mk_plugin_failure(int32_t index, const char **path, const char **message);

/** Number of places the registry searched for plugins (MEDIAKIT_PLUGIN_PATH entries, the
 *  library's own directory, <prefix>/lib/mediakit/plugins, and those of mk_plugins_load).
 *  Thread-safe. */
int32_t mk_plugin_search_count(void);

/** Sets *path to searched place `index` (0 <= index < mk_plugin_search_count()), a directory
 *  or file; static for the life of the process. Errors: MK_EINVAL (NULL, index out of range).
 *  Thread-safe. */
mk_status mk_plugin_search_path(int32_t index, const char **path);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_REGISTRY_H */
