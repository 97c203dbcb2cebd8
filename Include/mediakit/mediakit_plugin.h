/*
 * mediakit_plugin.h — the C ABI between the MediaKit host and codec plugins, version 2.
 *
 * Modelled on CLAP (free-audio/clap: entry.h, version.h, factories by id, a host
 * struct, thread tags). The whole contract:
 *
 * Entry. A plugin is a shared library that exports exactly one symbol:
 *
 *     const mk_plugin_descriptor *mediakit_plugin_entry(void);
 *
 * The host dlopen()s the library, calls the entry point and reads `abi` FIRST.
 * A plugin whose major version is not MK_PLUGIN_ABI_MAJOR is refused with an
 * error naming both versions, and no other field is touched (a version-1 plugin,
 * whose descriptor started with `uint32_t abi_version = 1`, is refused the same
 * way: the first 32 bits are the major version in both layouts). Any minor version
 * of the same major is accepted: a minor version only appends fields.
 *
 * Life cycle. After the version check the host calls `init(host)` once, then reads
 * the descriptor's strings and asks `get_factory(id)` for the factories it knows:
 * MK_PLUGIN_DECODER_FACTORY, MK_PLUGIN_PICTURE_CONVERTER_FACTORY and, since 2.1,
 * MK_PLUGIN_ENCODER_FACTORY (MK_PLUGIN_AUDIO_CONVERTER_FACTORY is reserved for audio
 * converters). A 2.0 plugin answers NULL for the encoder factory: it has none. Since 2.3
 * the encoder factory may list video encoders too (see "Video encoders"). Since 2.4 the host
 * also asks for MK_PLUGIN_DEMUXER_FACTORY (container formats the plugin reads, see
 * "Demuxers"); a plugin of 2.3 or older answers NULL for it and loads as before. Since 2.5 the
 * host also asks for MK_PLUGIN_MUXER_FACTORY (container formats the plugin writes, see
 * "Muxers"); a plugin of 2.4 or older answers NULL for it. A factory lists its entries by index; each
 * entry has static metadata and a `create` that returns an instance plus the
 * instance's vtable. `deinit()` is called once, after every instance has been
 * destroyed, when the host gives the plugin up; the frames a plugin handed out
 * may still be alive then (see Frames). MediaKit never unloads a plugin it uses,
 * so today `deinit` runs only for a plugin refused after its init (e.g. a second
 * plugin with the same name).
 *
 * Host. `init` receives an mk_host (static for the life of the process): the
 * host's name and version, a log callback with a level, the most detailed level
 * the host wants (log_level) and a pointer for the host's own use. Plugins log
 * through it and never read the environment for a log level or print to stderr.
 *
 * Growth rules. Every struct starts with `struct_size` (the descriptor: with `abi`,
 * then `struct_size`). New fields are only ever appended, with a minor version,
 * and are optional: the side that reads a struct the other side filled reads a
 * field only when struct_size covers it, and takes a field beyond it as absent
 * (NULL / 0). The fields of 2.0 are required unless marked optional (the
 * descriptor's `description`; the packet's ownership fields). So a plugin built
 * for an older minor version (smaller structs) loads and works, and a host struct
 * may be larger than the plugin knows (the plugin ignores the rest). A struct the
 * host hands over for the plugin to fill (mk_plugin_frame) is filled up to the
 * smaller of the two sizes, and its struct_size set to that.
 *
 * Status codes, media types, pixel and sample formats are those of
 * mediakit_types.h (MK_OK, MK_EAGAIN, MK_EOF, MK_EINVAL, MK_ENOMEM,
 * MK_EUNSUPPORTED, MK_EDATA, MK_EFAIL, MK_EINVALIDATED; MK_MEDIA_*; MK_PIXEL_*; MK_SAMPLES_*), the
 * same values the C API gives applications.
 *
 * Codec names are the lower-case names FFmpeg uses ("h264", "hevc", "aac",
 * "mp3", "av1", "opus", "vorbis", "flac", "alac", "ac3", "eac3", "vp8",
 * "vp9", "mpeg4", "mp2", "pcm_s16le", ...).
 *
 * Decoding follows libavcodec's send/receive model:
 *
 *     send_packet(dec, pkt)      -> MK_OK, or MK_EAGAIN when output must be
 *                                   received first (the packet was NOT taken)
 *     send_packet(dec, NULL)     -> enter draining (end of stream)
 *     receive_frame(dec, &frame) -> MK_OK (a frame), MK_EAGAIN (send more
 *                                   input), MK_EOF (drained)
 *     flush(dec)                 -> drop every buffered packet and frame and
 *                                   leave draining; used after a seek
 *
 * Packets. A packet's bytes are borrowed for the send_packet call: the plugin
 * copies what it keeps. When the host sets `retain` (with `release` and `owner`),
 * the plugin may instead keep the bytes without a copy: it calls retain(owner)
 * during send_packet and release(owner) exactly once per retain when done, from
 * any thread, also after destroy. `padding` says how many zero bytes after the
 * data may be read (libavcodec needs 64 to use the bytes in place). A plugin
 * works either way; MediaKit's host offers every non-empty packet to keep (retain
 * set, padding 0: dav1d keeps them, libavcodec copies).
 *
 * Frames cross the boundary without a copy: plane pointers into the plugin's
 * own buffers plus a release callback that the host calls exactly once when it
 * no longer needs the planes. A released frame may outlive its decoder: the
 * plugin keeps the planes valid until `release` is called even after `destroy`
 * (and after `deinit`).
 *
 * Trimming: backends output every decoded sample; the host trims. A backend
 * never drops samples on its own account (Opus pre-skip, AAC/MP3 priming,
 * end padding) and never shifts frame timestamps to hide them: the host
 * trims by the track's encoder delay, edit list and end position, so every
 * backend for a codec gives the same raw output. (Packets the host marks
 * MK_PACKET_FLAG_DISCARD are the one exception: their frames are dropped.)
 *
 * Threads. Each function below carries one of these tags:
 *   [thread-safe]    may be called from any thread, concurrently with anything.
 *   [main-thread]    called by the host with no other call into the plugin running
 *                    (init / deinit); not necessarily the process's first thread.
 *   [instance-thread] called on one instance by one thread at a time (the host
 *                    serialises the calls on an instance); different instances may
 *                    be used on different threads at once.
 */
#ifndef MEDIAKIT_PLUGIN_H
#define MEDIAKIT_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "mediakit_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Versions ------------------------------------------------------------ */

/** The ABI major version this header describes. Bumped on an incompatible change. */
#define MK_PLUGIN_ABI_MAJOR 2u
/** The ABI minor version this header describes. Bumped when fields are appended. */
#define MK_PLUGIN_ABI_MINOR 5u

/** An ABI version: major.minor. */
typedef struct mk_plugin_abi {
    uint32_t major;
    uint32_t minor;
} mk_plugin_abi;

/** Initialiser for the descriptor's `abi` field. */
#define MK_PLUGIN_ABI_CURRENT { MK_PLUGIN_ABI_MAJOR, MK_PLUGIN_ABI_MINOR }

/** Name of the one symbol a plugin exports. */
#define MK_PLUGIN_ENTRY_SYMBOL "mediakit_plugin_entry"

/* ---- Factory ids ------------------------------------------------------------ */

/** get_factory(MK_PLUGIN_DECODER_FACTORY) returns a const mk_plugin_decoder_factory *. */
#define MK_PLUGIN_DECODER_FACTORY "mediakit.decoder-factory"
/** get_factory(MK_PLUGIN_PICTURE_CONVERTER_FACTORY) returns a
 *  const mk_plugin_picture_converter_factory *. */
#define MK_PLUGIN_PICTURE_CONVERTER_FACTORY "mediakit.picture-converter-factory"
/** get_factory(MK_PLUGIN_ENCODER_FACTORY) returns a const mk_plugin_encoder_factory *
 *  (ABI 2.1). */
#define MK_PLUGIN_ENCODER_FACTORY "mediakit.encoder-factory"
/** get_factory(MK_PLUGIN_DEMUXER_FACTORY) returns a const mk_plugin_demuxer_factory *
 *  (ABI 2.4). */
#define MK_PLUGIN_DEMUXER_FACTORY "mediakit.demuxer-factory"
/** get_factory(MK_PLUGIN_MUXER_FACTORY) returns a const mk_plugin_muxer_factory *
 *  (ABI 2.5). */
#define MK_PLUGIN_MUXER_FACTORY "mediakit.muxer-factory"
/** Reserved for audio converters (a later minor version defines the factory struct). */
#define MK_PLUGIN_AUDIO_CONVERTER_FACTORY "mediakit.audio-converter-factory"

/* ---- Packet flags --------------------------------------------------------- */
#define MK_PACKET_FLAG_KEY     0x1u  /**< random access point */
#define MK_PACKET_FLAG_DISCARD 0x2u  /**< decode (as a reference) but drop its output */
/** mk_plugin_frame.flags of a frame sent to a video encoder (2.3): code this picture as a key
 *  frame (an IDR / random access point). Decoders never set it; an encoder of an older
 *  minor version ignores it. */
#define MK_FRAME_FLAG_FORCE_KEY 0x4u


/* ---- Host ------------------------------------------------------------------ */

/** Log levels, most severe first. A message is worth sending when its level is at
 *  most the host's log_level. */
#define MK_LOG_QUIET   0   /**< log_level only: the host wants no messages */
#define MK_LOG_ERROR   1
#define MK_LOG_WARNING 2
#define MK_LOG_INFO    3
#define MK_LOG_DEBUG   4
#define MK_LOG_TRACE   5

/** What the host tells a plugin about itself; passed to init(). Owned by the host,
 *  valid (and unchanged) for the life of the process: the plugin may keep the pointer. */
typedef struct mk_host {
    uint32_t struct_size;      /**< sizeof(mk_host) of the host */
    mk_plugin_abi abi;         /**< the plugin ABI version the host implements */
    const char *name;          /**< "MediaKit" */
    const char *version;       /**< the host library's version, e.g. "0.2.0" */
    void *host_data;           /**< the host's own; the plugin never touches it */
    int32_t log_level;         /**< MK_LOG_*: the most detailed level the host wants; a
                                    plugin may set its library's verbosity from it */
    /** [thread-safe] Logs one message (a line, no trailing newline needed) at `level`
     *  (MK_LOG_ERROR ... MK_LOG_TRACE). `message` is borrowed for the call. */
    void (*log)(const struct mk_host *host, int32_t level, const char *message);
} mk_host;

/* ---- Decoders ----------------------------------------------------------------- */

/** What the host tells a backend about the stream it is to decode. */
typedef struct mk_plugin_codec_config {
    uint32_t struct_size;      /**< sizeof(mk_plugin_codec_config) of the host */
    int32_t media_type;        /**< MK_MEDIA_AUDIO or MK_MEDIA_VIDEO */
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
    int32_t block_align;       /**< audio: bytes per packet for PCM-like codecs, 0 if unknown */
    int32_t video_delay;       /**< video: frames the decoder must hold back to output in
                                    presentation order (B-frame reorder depth), as the
                                    container's timestamps show it; 0 if none or unknown.
                                    libavcodec: AVCodecContext.has_b_frames. */
    /* ABI 2.5 (read only when struct_size covers it; a 2.4 host's config ends above). */
    const char *codec_tag;     /**< the container's tag for the stream as text, as
                                    mk_plugin_track_info.codec_tag: a FourCC ("UYVY",
                                    "2vuy", "raw ", "DX50"), a byte that is not printable
                                    written "[N]" ("[0][0][0][0]"); "" or NULL when none.
                                    Other tags (a WAVE format tag "0x0001", a Matroska
                                    codec ID) are the container's names, not FourCCs.
                                    Borrowed: valid only during create(). libavcodec:
                                    AVCodecContext.codec_tag (rawvideo picks its pixel
                                    format by it; mpeg4 its DivX / XviD workarounds). */
} mk_plugin_codec_config;

/** A compressed packet handed to send_packet. The struct itself is borrowed for the
 *  call; for the bytes see "Packets" above. */
typedef struct mk_plugin_packet {
    uint32_t struct_size;      /**< sizeof(mk_plugin_packet) of the host */
    uint32_t flags;            /**< MK_PACKET_FLAG_* */
    const uint8_t *data;
    size_t size;
    int64_t pts;               /**< in the config's time base, or MK_NOPTS_VALUE */
    int64_t dts;
    int64_t duration;          /**< 0 if unknown */
    /* Optional (see "Packets"): a plugin reads them only when struct_size covers them. */
    size_t padding;            /**< zero bytes readable after data + size; 0 if none */
    /** NULL: the bytes are borrowed for the call. Otherwise [thread-safe]: takes one
     *  reference to the bytes (they stay valid and unchanged until the matching
     *  release). Call it during send_packet only. */
    void (*retain)(void *owner);
    /** [thread-safe] Drops one reference taken with retain; any thread, also after
     *  destroy() and deinit(). Set whenever retain is. */
    void (*release)(void *owner);
    void *owner;               /**< the argument of retain and release */
} mk_plugin_packet;

/** A decoded frame filled in by receive_frame (or a picture by convert). The planes
 *  belong to the plugin until the host calls release(release_opaque), exactly once. */
typedef struct mk_plugin_frame {
    uint32_t struct_size;      /**< set by the host before the call; the plugin fills the
                                    struct up to the smaller of this and its own size and
                                    sets struct_size to that */
    int32_t media_type;        /**< MK_MEDIA_AUDIO or MK_MEDIA_VIDEO */
    int32_t format;            /**< MK_PIXEL_* for video, MK_SAMPLES_* for audio (an older
                                    host refuses the values 13 and up: S8, the
                                    big-endian and 24-in-32 formats) */
    uint32_t flags;            /**< MK_PACKET_FLAG_KEY for a key frame; on a frame sent to a
                                    video encoder, MK_FRAME_FLAG_FORCE_KEY (2.3) */
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
    /** [thread-safe] Frees the planes; called exactly once, from any thread, also
     *  after destroy() and deinit(). On a frame sent to an encoder: see retain. */
    void (*release)(void *release_opaque);
    void *release_opaque;
    /** (2.5) [thread-safe] On a frame sent to an encoder, when the host sets it (NULL
     *  otherwise, and always NULL on frames a plugin fills in): the encoder may keep the
     *  planes, read-only, after send_frame returns instead of copying them, by calling
     *  retain(release_opaque) before send_frame returns; it then calls
     *  release(release_opaque) once for each retain, from any thread, when it no longer
     *  reads them (also after destroy()). The host does not change or free the planes
     *  while a retain is outstanding. An encoder that never calls retain copies what it
     *  keeps, as before 2.5. */
    void (*retain)(void *release_opaque);
} mk_plugin_frame;

/** Operations on one decoder instance. Static storage in the plugin. */
typedef struct mk_plugin_decoder_vtable {
    uint32_t struct_size;      /**< sizeof(mk_plugin_decoder_vtable) of the plugin */
    /** [instance-thread] Feeds a packet; NULL enters draining. MK_OK, MK_EAGAIN
     *  (receive first; the packet was not taken), MK_EOF (already draining) or an
     *  error (the packet was consumed; go on with the next one): MK_EDATA for damaged
     *  data, MK_EINVALIDATED when the decoder cannot go on for another reason (its
     *  device is gone: the host destroys it and creates another, which it sends the
     *  packets from the last key frame and this packet again). */
    int32_t (*send_packet)(void *decoder, const mk_plugin_packet *packet);
    /** [instance-thread] Fills *frame (whose struct_size the host set). MK_OK, MK_EAGAIN,
     *  MK_EOF or an error. On anything but MK_OK the frame is untouched and nothing
     *  must be released. */
    int32_t (*receive_frame)(void *decoder, mk_plugin_frame *frame);
    /** [instance-thread] Drops buffered state (after a seek) and leaves draining. */
    void (*flush)(void *decoder);
    /** [instance-thread] Frees the instance. Frames already handed out stay valid
     *  until released. */
    void (*destroy)(void *decoder);
    /** [instance-thread] A message for the last failure on this instance; owned by the
     *  instance, valid until the next call on it. Never NULL (may be ""). */
    const char *(*last_error)(void *decoder);
} mk_plugin_decoder_vtable;

/** Static description of one codec backend (a decoder for one codec). */
typedef struct mk_plugin_decoder_backend {
    uint32_t struct_size;      /**< sizeof(mk_plugin_decoder_backend) of the plugin */
    int32_t media_type;        /**< MK_MEDIA_AUDIO or MK_MEDIA_VIDEO */
    const char *codec;         /**< codec name this backend decodes */
    const char *name;          /**< backend name, unique in the plugin, e.g. "ffmpeg" */
    int32_t priority;          /**< higher wins when several backends decode a codec;
                                    generic libraries use 100, dedicated ones 200 */
    /** [thread-safe] Creates a decoder. On success *decoder and *vtable are set and
     *  MK_OK returned. On failure nothing is allocated, a message is written into
     *  errbuf (NUL-terminated, at most errbuf_size bytes; errbuf may be NULL) and an
     *  error returned. `config` is borrowed for the call. */
    int32_t (*create)(const mk_plugin_codec_config *config,
                      void **decoder,
                      const mk_plugin_decoder_vtable **vtable,
                      char *errbuf, size_t errbuf_size);
} mk_plugin_decoder_backend;

/** The decoder factory (MK_PLUGIN_DECODER_FACTORY). Static storage in the plugin. */
typedef struct mk_plugin_decoder_factory {
    uint32_t struct_size;      /**< sizeof(mk_plugin_decoder_factory) of the plugin */
    /** [thread-safe] The number of backends; constant after init(). */
    uint32_t (*backend_count)(void);
    /** [thread-safe] Backend `index` (0 <= index < backend_count()), static storage;
     *  NULL for an index out of range. */
    const mk_plugin_decoder_backend *(*get_backend)(uint32_t index);
} mk_plugin_decoder_factory;


/* ---- Encoders (ABI 2.1) -------------------------------------------------------
 *
 * Encoding mirrors decoding (libavcodec's send/receive model, the other way round):
 *
 *     send_frame(enc, frame)        -> MK_OK, or MK_EAGAIN when packets must be
 *                                      received first (the frame was NOT taken)
 *     send_frame(enc, NULL)         -> enter draining (end of stream)
 *     receive_packet(enc, &packet)  -> MK_OK (a packet), MK_EAGAIN (send more
 *                                      frames), MK_EOF (drained)
 *
 * Frames. A frame sent is an mk_plugin_frame of audio in the config's sample format,
 * rate and channels; its planes are borrowed for the call (the encoder copies what it
 * keeps) and its release callback is never called by the plugin, unless the host offers
 * the frame's planes to be kept (mk_plugin_frame.retain, 2.5: a video encoder then
 * passes a decoded picture to its library without copying it). When the encoder
 * states a frame size (mk_plugin_encoder_info.frame_size > 0), every frame but the last
 * before draining holds exactly that many samples per channel, and the last at most that
 * many; with frame_size 0 any count is accepted. Frame pts are in the config's time
 * base, counting samples from 0 (the host sends 1/sample_rate).
 *
 * Packets. receive_packet fills an mk_plugin_encoded_packet whose bytes belong to the
 * instance and stay valid until the next call on it (the host copies them). Packet
 * timestamps are in the packet time base get_info() states and count decoded samples
 * from 0, priming included: the first packet starts at 0 and its output begins with the
 * encoder_delay priming samples (the host cuts them with an edit list, an Opus pre-skip
 * or Ogg granules; the end padding by the input length it knows).
 *
 * Priming. After create() the encoder states in get_info(): its magic cookie
 * (AudioSpecificConfig for AAC, OpusHead for Opus, the three Vorbis headers in Xiph
 * lacing, the 34-byte STREAMINFO for FLAC, none for MP3), its frame size and its delay:
 * the number of samples (at the coded rate; Opus: at 48 kHz) that decoding the packets
 * gives before the first input sample. The host never assumes a delay of its own. After
 * draining, get_info() may answer a newer cookie (FLAC: STREAMINFO with the total sample
 * count and MD5), which a muxer that can rewrite its header uses.
 *
 * Video encoders (2.3). A backend whose media_type is MK_MEDIA_VIDEO lists the pixel
 * formats it takes (`pixel_formats`, appended in 2.3; its `sample_formats` is an empty list,
 * so a 2.2 host, which does not read media_type, finds no sample format to send it) and is
 * created with a config whose video fields (appended in 2.3: pixel format, size, frame rate,
 * aspect ratio, rate control, preset, profile, GOP, B-frames, colour description) are set;
 * a host sends a video config only to a backend whose struct_size covers pixel_formats.
 * Frames sent are mk_plugin_frame pictures in the config's pixel format and size, pts in the
 * config's time base, planes borrowed for the call; MK_FRAME_FLAG_FORCE_KEY asks for a key
 * frame. Packets come out in decoding order with pts AND dts in the packet time base
 * get_info() states (the encoder's own: 1/frame rate when the frame rate is known, as the
 * ffmpeg tool sets it), MK_PACKET_FLAG_KEY on random access points, dts <= pts; with
 * B-frames the first dts is below the first pts by the reorder delay, which get_info()
 * states in frames (`reorder_delay`: a muxer writes an edit list so that the first picture
 * is presented at its pts). The magic cookie is the codec's global header (avcC, hvcC,
 * av1C's configOBUs, VP9 none): the encoder puts its parameter sets there and not in the
 * packets (libavcodec's AV_CODEC_FLAG_GLOBAL_HEADER, as the ffmpeg tool sets it for MP4).
 */

/** mk_plugin_encoder_config.rate_control (2.3, video). */
#define MK_ENCODER_RC_DEFAULT 0  /**< the encoder's own default (libx264: CRF 23) */
#define MK_ENCODER_RC_BITRATE 1  /**< average bit_rate (`ffmpeg -b:v`) */
#define MK_ENCODER_RC_CRF     2  /**< constant rate factor `quality` (`-crf`) */
#define MK_ENCODER_RC_QP      3  /**< constant quantiser `quality` (`-qp`, or `-q:v` for
                                      encoders without a qp option) */

/** Opus application (mk_plugin_encoder_config.application). */
#define MK_ENCODER_APPLICATION_DEFAULT  0  /**< the backend's default (Opus: audio) */
#define MK_ENCODER_APPLICATION_AUDIO    1  /**< OPUS_APPLICATION_AUDIO */
#define MK_ENCODER_APPLICATION_VOIP     2  /**< OPUS_APPLICATION_VOIP */
#define MK_ENCODER_APPLICATION_LOWDELAY 3  /**< OPUS_APPLICATION_RESTRICTED_LOWDELAY */

/** What the host asks an encoder for. Borrowed for create(). */
typedef struct mk_plugin_encoder_config {
    uint32_t struct_size;      /**< sizeof(mk_plugin_encoder_config) of the host */
    int32_t media_type;        /**< MK_MEDIA_AUDIO, or MK_MEDIA_VIDEO (2.3, see "Video encoders") */
    const char *codec;         /**< codec name, e.g. "aac"; never NULL */
    int32_t sample_format;     /**< MK_SAMPLES_* of the frames that will be sent: one the
                                    backend lists in sample_formats */
    int32_t sample_rate;       /**< Hz of the frames sent (and of the coded stream) */
    int32_t channels;          /**< channel count of the frames sent */
    uint64_t channel_mask;     /**< WAVE channel mask of the frames; 0: the codec's default
                                    order for that many channels */
    int32_t time_base_num;     /**< time base of frame and packet timestamps */
    int32_t time_base_den;
    int64_t bit_rate;          /**< target bits per second; 0: the backend's default, or
                                    the quality below when has_quality is set */
    int32_t has_quality;       /**< 1: encode for `quality` (variable bit rate) */
    double quality;            /**< on the codec's own scale, as `ffmpeg -q:a` takes it:
                                    Vorbis -1..10, MP3 (LAME -V) 9..0, AAC 0.1..2 */
    int32_t complexity;        /**< encoder effort, 0..10 (Opus), -1: the default */
    int32_t application;       /**< MK_ENCODER_APPLICATION_* (Opus) */
    int32_t frame_duration_us; /**< Opus frame duration in microseconds (2500, 5000, 10000,
                                    20000, 40000, 60000); 0: the default (20000) */
    int32_t thread_count;      /**< 0 = the backend's choice */
    /* 2.3, video only (media_type MK_MEDIA_VIDEO); read only when struct_size covers them. The
     * audio fields above are 0 in a video config, but time_base, bit_rate, quality (with
     * rate_control) and thread_count. */
    int32_t pixel_format;      /**< MK_PIXEL_* of the frames sent: one the backend lists */
    int32_t width;             /**< of the frames sent and the coded pictures */
    int32_t height;
    int32_t frame_rate_num;    /**< nominal frame rate; 0/0: unknown (the encoder then works
                                    in the config's time base) */
    int32_t frame_rate_den;
    int32_t sar_num, sar_den;  /**< sample aspect ratio; 0/1 unknown */
    int32_t rate_control;      /**< MK_ENCODER_RC_*: bit_rate or `quality` (CRF or QP) */
    const char *preset;        /**< the encoder's preset ("medium", SVT-AV1 "8"); NULL: default.
                                    Borrowed for create() */
    const char *profile;       /**< "high", "main10" ...; NULL: default. Borrowed */
    int32_t gop_size;          /**< frames between key frames at most; -1: default */
    int32_t max_b_frames;      /**< B-frames in a row at most; -1: default, 0: none */
    int32_t color_range;       /**< as in mk_plugin_frame: written into the stream's VUI */
    int32_t color_primaries;
    int32_t color_trc;
    int32_t color_space;
    int32_t chroma_location;
} mk_plugin_encoder_config;

/** What an open encoder states (get_info). Filled by the plugin up to the smaller of the
 *  host's struct_size and its own, and struct_size set to that. */
typedef struct mk_plugin_encoder_info {
    uint32_t struct_size;      /**< set by the host before the call; see above */
    int32_t frame_size;        /**< samples per channel in each frame sent; 0: any */
    int32_t encoder_delay;     /**< priming samples at the start of the decoded output
                                    (Opus: at 48 kHz, the OpusHead pre-skip) */
    int32_t sample_rate;       /**< the coded stream's rate, as decoders output it (Opus:
                                    48000; OpusHead records the input rate) */
    int32_t channels;          /**< the coded stream's channels */
    int64_t bit_rate;          /**< the nominal bit rate, 0 if none (quality mode) */
    const uint8_t *extradata;  /**< the magic cookie; owned by the instance, valid until
                                    the next call on it; NULL when the codec has none */
    size_t extradata_size;
    int32_t packet_time_base_num; /**< time base of packet timestamps (Opus: 1/48000; video:
                                       the encoder's, 1/frame rate when that is known) */
    int32_t packet_time_base_den;
    /* 2.3, video (0 for audio and when struct_size ends before it) */
    int32_t reorder_delay;     /**< frames by which decoding runs ahead of presentation
                                    (B-frame delay: libavcodec's has_b_frames); the first
                                    packet's dts is that many frames below its pts */
} mk_plugin_encoder_info;

/** An encoded packet filled by receive_packet. Its bytes belong to the instance and stay
 *  valid until the next call on it. Filled up to the smaller of the host's struct_size and
 *  the plugin's, and struct_size set to that. */
typedef struct mk_plugin_encoded_packet {
    uint32_t struct_size;      /**< set by the host before the call */
    uint32_t flags;            /**< MK_PACKET_FLAG_KEY */
    const uint8_t *data;
    size_t size;
    int64_t pts;               /**< in info's packet time base; audio: the priming counts from 0;
                                    video: the pts of the frame it codes */
    int64_t dts;               /**< decoding time, <= pts (video: below the first pts by the
                                    reorder delay) */
    int64_t duration;          /**< audio: samples the packet decodes to; video: the frame's
                                    duration or 0; in the same time base */
} mk_plugin_encoded_packet;

/** Operations on one encoder instance. Static storage in the plugin. */
typedef struct mk_plugin_encoder_vtable {
    uint32_t struct_size;      /**< sizeof(mk_plugin_encoder_vtable) of the plugin */
    /** [instance-thread] Fills *info (whose struct_size the host set). MK_OK or an error. */
    int32_t (*get_info)(void *encoder, mk_plugin_encoder_info *info);
    /** [instance-thread] Feeds a frame (see "Frames"); NULL enters draining. MK_OK,
     *  MK_EAGAIN (receive first; the frame was not taken), MK_EOF (already draining) or an
     *  error (the frame was consumed). */
    int32_t (*send_frame)(void *encoder, const mk_plugin_frame *frame);
    /** [instance-thread] Fills *packet. MK_OK, MK_EAGAIN, MK_EOF or an error; on anything
     *  but MK_OK the packet is untouched. */
    int32_t (*receive_packet)(void *encoder, mk_plugin_encoded_packet *packet);
    /** [instance-thread] Frees the instance. */
    void (*destroy)(void *encoder);
    /** [instance-thread] A message for the last failure on this instance; owned by the
     *  instance, valid until the next call on it. Never NULL (may be ""). */
    const char *(*last_error)(void *encoder);
} mk_plugin_encoder_vtable;

/** Static description of one encoder backend (an encoder for one codec). Lists end with
 *  a 0 entry; a NULL list means "any". */
typedef struct mk_plugin_encoder_backend {
    uint32_t struct_size;      /**< sizeof(mk_plugin_encoder_backend) of the plugin */
    int32_t media_type;        /**< MK_MEDIA_AUDIO, or MK_MEDIA_VIDEO (2.3) */
    const char *codec;         /**< codec name this backend encodes ("aac", "h264") */
    const char *name;          /**< backend name, unique in the plugin per codec, e.g. "ffmpeg";
                                    for video the encoder library's name ("libx264") */
    int32_t priority;          /**< higher wins when several backends encode a codec */
    const int32_t *sample_formats; /**< MK_SAMPLES_* accepted, preferred first; never NULL.
                                        The host converts to one of them first: a backend is
                                        never sent a format it does not list (the values 13
                                        and up, only when it lists them; an older host
                                        skips them in this list) */
    const int32_t *sample_rates;   /**< Hz accepted, 0-terminated; NULL: any in
                                        [min_sample_rate, max_sample_rate] */
    int32_t min_sample_rate;   /**< with sample_rates NULL; 0: no lower bound */
    int32_t max_sample_rate;   /**< with sample_rates NULL; 0: no upper bound */
    int32_t max_channels;      /**< channels accepted: 1..max_channels */
    const uint64_t *channel_masks; /**< WAVE channel masks accepted (one per count), 0-terminated;
                                        NULL: the codec's default order for each count */
    int64_t min_bit_rate;      /**< bits per second per stream; 0: no bound / not settable */
    int64_t max_bit_rate;
    /** [thread-safe] Creates an encoder. On success *encoder and *vtable are set and MK_OK
     *  returned. On failure nothing is allocated, a message naming what the backend accepts
     *  is written into errbuf (NUL-terminated, at most errbuf_size bytes; errbuf may be NULL)
     *  and an error returned (MK_EUNSUPPORTED for a rate, channel count, format or bit rate
     *  it does not take). `config` is borrowed for the call. */
    int32_t (*create)(const mk_plugin_encoder_config *config,
                      void **encoder,
                      const mk_plugin_encoder_vtable **vtable,
                      char *errbuf, size_t errbuf_size);
    /* 2.3, optional (absent: an audio backend). */
    const int32_t *pixel_formats; /**< video: MK_PIXEL_* accepted, preferred first,
                                       0-terminated; the host converts frames to one of them */
} mk_plugin_encoder_backend;

/** The encoder factory (MK_PLUGIN_ENCODER_FACTORY, ABI 2.1). Static storage in the plugin. */
typedef struct mk_plugin_encoder_factory {
    uint32_t struct_size;      /**< sizeof(mk_plugin_encoder_factory) of the plugin */
    /** [thread-safe] The number of backends; constant after init(). */
    uint32_t (*backend_count)(void);
    /** [thread-safe] Backend `index` (0 <= index < backend_count()), static storage;
     *  NULL for an index out of range. */
    const mk_plugin_encoder_backend *(*get_backend)(uint32_t index);
} mk_plugin_encoder_factory;

/* ---- Picture converters -----------------------------------------------------
 *
 * A picture converter changes a decoded picture's pixel format (bit depth, chroma
 * subsampling, planar/semi-planar layout), e.g. yuv420p10 -> nv12 or yuv444p ->
 * yuv420p, and, since 2.2, its size. The host uses one when a caller asks for a
 * layout that the decoded pictures cannot be packed into by copying samples, or for
 * another picture size.
 *
 * Scaling (2.2). A converter that sets MK_PLUGIN_CONVERTER_SCALES in its `flags`
 * reads the config's dst_width, dst_height and scale_filter and returns pictures of
 * that size, resampled with that filter. The host asks only such a converter for a
 * size change or a filter other than the default (one of an older plugin, whose struct
 * ends before `flags`, never sees either), and checks the size of every picture it
 * gets back.
 *
 * Ownership: convert() borrows the source frame's planes for the call only. The
 * destination planes belong to the plugin until the host calls
 * dst->release(dst->release_opaque), exactly once, from any thread; they stay
 * valid after destroy().
 */

/** What the host asks a converter to do. */
typedef struct mk_plugin_converter_config {
    uint32_t struct_size;      /**< sizeof(mk_plugin_converter_config) of the host */
    int32_t src_format;        /**< MK_PIXEL_* of the pictures that will be sent */
    int32_t dst_format;        /**< MK_PIXEL_* wanted */
    int32_t width;             /**< size of the pictures that will be sent; also the size
                                    returned unless dst_width / dst_height say otherwise */
    int32_t height;
    int32_t color_range;       /**< of the source, as in mk_plugin_frame; kept as it is */
    int32_t color_space;       /**< of the source (ISO/IEC 23091-4 matrix); kept as it is */
    /* 2.2, optional: read only when struct_size covers them, and only by a converter that
     * sets MK_PLUGIN_CONVERTER_SCALES (the host sends other converters 0, 0, 0). */
    int32_t dst_width;         /**< size of the pictures returned; 0: width */
    int32_t dst_height;        /**< 0: height */
    int32_t scale_filter;      /**< MK_SCALE_* (mediakit_types.h): how the picture (and
                                    chroma of another subsampling) is resampled;
                                    MK_SCALE_DEFAULT (0) is MK_SCALE_BICUBIC */
} mk_plugin_converter_config;

/** Operations on one converter instance. Static storage in the plugin. */
typedef struct mk_plugin_converter_vtable {
    uint32_t struct_size;      /**< sizeof(mk_plugin_converter_vtable) of the plugin */
    /** [instance-thread] Converts `src` (a picture in the config's src_format and size;
     *  borrowed for the call) into *dst (whose struct_size the host set): format, size
     *  (dst_width x dst_height when set),
     *  planes, strides and release are filled in, and every other field of src is
     *  carried over. Returns MK_OK; on an error *dst is untouched and nothing must be
     *  released. */
    int32_t (*convert)(void *converter, const mk_plugin_frame *src, mk_plugin_frame *dst);
    /** [instance-thread] Frees the instance. Pictures already handed out stay valid
     *  until released. */
    void (*destroy)(void *converter);
    /** [instance-thread] A message for the last failure on this instance; owned by the
     *  instance, valid until the next call on it. Never NULL (may be ""). */
    const char *(*last_error)(void *converter);
} mk_plugin_converter_vtable;

/** Static description of one picture converter. */
typedef struct mk_plugin_picture_converter {
    uint32_t struct_size;      /**< sizeof(mk_plugin_picture_converter) of the plugin */
    const char *name;          /**< converter name, unique in the plugin, e.g. "swscale" */
    int32_t priority;          /**< higher wins when several converters can do a conversion */
    /** [thread-safe] 1 when create() accepts converting src_format to dst_format, else 0. */
    int32_t (*supports)(int32_t src_format, int32_t dst_format);
    /** [thread-safe] Creates a converter. On success *converter and *vtable are set and
     *  MK_OK returned. On failure nothing is allocated, a message is written into errbuf
     *  (NUL-terminated, at most errbuf_size bytes; errbuf may be NULL) and an error
     *  returned. `config` is borrowed for the call. */
    int32_t (*create)(const mk_plugin_converter_config *config,
                      void **converter,
                      const mk_plugin_converter_vtable **vtable,
                      char *errbuf, size_t errbuf_size);
    /* 2.2, optional (absent: 0). */
    uint32_t flags;            /**< MK_PLUGIN_CONVERTER_* */
} mk_plugin_picture_converter;

/** mk_plugin_picture_converter.flags: create() honours the config's dst_width, dst_height
 *  and scale_filter (see "Scaling" above). */
#define MK_PLUGIN_CONVERTER_SCALES 0x1u

/** The picture converter factory (MK_PLUGIN_PICTURE_CONVERTER_FACTORY). Static storage. */
typedef struct mk_plugin_picture_converter_factory {
    uint32_t struct_size;      /**< sizeof(mk_plugin_picture_converter_factory) of the plugin */
    /** [thread-safe] The number of converters; constant after init(). */
    uint32_t (*converter_count)(void);
    /** [thread-safe] Converter `index` (0 <= index < converter_count()), static storage;
     *  NULL for an index out of range. */
    const mk_plugin_picture_converter *(*get_converter)(uint32_t index);
} mk_plugin_picture_converter_factory;

/* ---- Demuxers (2.4) -----------------------------------------------------------
 *
 * A demuxer factory lists container formats the plugin reads. The host reads every
 * format it has built in first: a plugin format is only asked (score) for bytes that
 * no built-in format claims, or when the caller names it. Among plugin formats the
 * highest score wins, then the highest priority, then the load order.
 *
 * IO. The host hands create() an mk_plugin_io: callbacks that read the host's source
 * (a file, memory, a caller's callbacks, a pipe). `seek` is NULL for a source read once
 * (a pipe): the instance must then read front to back. The callbacks may be called only
 * from inside a call on the instance (create included), on that call's thread; the
 * struct and its opaque stay valid until destroy() returns.
 *
 * Ownership. Everything an instance hands out (track strings, extradata, packet bytes,
 * the info strings) belongs to the instance: track and info data until destroy(),
 * packet bytes until the next call on the instance.
 */

/** mk_plugin_demuxer_vtable.seek flags. Default (0): the key frame at or before the time. */
#define MK_DEMUX_SEEK_ANY 0x1u  /**< any packet at or before the time, key frame or not */

/** mk_plugin_track_info.disposition bits (FFmpeg's AV_DISPOSITION_* values). */
#define MK_DISPOSITION_DEFAULT          0x0001u
#define MK_DISPOSITION_FORCED           0x0040u
#define MK_DISPOSITION_HEARING_IMPAIRED 0x0080u
#define MK_DISPOSITION_VISUAL_IMPAIRED  0x0100u
#define MK_DISPOSITION_ATTACHED_PIC     0x0400u  /**< a cover picture: one packet (2.5: its bytes
                                                      also in mk_plugin_track_info.attachment) */
/** (2.5) Not a stream but a file the container carries (a Matroska attachment: a font, a
 *  picture): media_type MK_MEDIA_DATA, no packets, its bytes in mk_plugin_track_info.attachment,
 *  its name and type in the tags "filename" and "mimetype". A host of 2.5 lists it among the
 *  file's attachments, not its tracks. (FFmpeg has no such disposition bit: this one is above
 *  every AV_DISPOSITION_* value.) */
#define MK_DISPOSITION_ATTACHMENT       0x80000000u

/** mk_plugin_demuxed_packet.flags besides MK_PACKET_FLAG_KEY and MK_PACKET_FLAG_DISCARD. */
#define MK_PACKET_FLAG_CORRUPT 0x4u  /**< the container marks the bytes damaged or cut short */

/** The host's byte source, as callbacks (see "IO" above). Owned by the host. */
typedef struct mk_plugin_io {
    uint32_t struct_size;      /**< sizeof(mk_plugin_io) of the host */
    void *opaque;              /**< the first argument of every callback */
    /** Reads up to `size` bytes at the current position into `buf` and moves past them.
     *  Returns the count read (> 0), 0 at the end of the source, or a negative MK_* error
     *  (MK_EFAIL for a read failure; the host keeps its own message for it). */
    int64_t (*read)(void *opaque, uint8_t *buf, size_t size);
    /** Moves the position to the absolute `offset`. MK_OK or a negative MK_* error. NULL
     *  for a source that cannot seek (a pipe). */
    int32_t (*seek)(void *opaque, int64_t offset);
    /** The source's total size in bytes, or -1 when it is not known (a pipe). */
    int64_t (*size)(void *opaque);
} mk_plugin_io;

/** One track of an open demuxer, filled by get_track. The plugin fills it up to the smaller
 *  of the host's struct_size and its own, and sets struct_size to that. Pointers belong to
 *  the instance and stay valid until destroy(). */
typedef struct mk_plugin_track_info {
    uint32_t struct_size;      /**< set by the host before the call; see above */
    int32_t media_type;        /**< MK_MEDIA_AUDIO, _VIDEO, _SUBTITLE or _DATA (attachments too) */
    const char *codec;         /**< FFmpeg's codec name ("mpeg4", "musepack7", "webvtt"),
                                    also for codecs MediaKit has no name of its own for;
                                    "" when unknown; never NULL */
    const char *codec_tag;     /**< the container's tag as text ("XVID"), "" if none; never NULL */
    const uint8_t *extradata;  /**< codec configuration as FFmpeg's demuxer gives it; NULL if none */
    size_t extradata_size;
    int32_t time_base_num;     /**< time base of the track's packet timestamps (both > 0) */
    int32_t time_base_den;
    int64_t duration;          /**< in the time base; MK_NOPTS_VALUE when unknown */
    int64_t start_time;        /**< first presentation time, in the time base; MK_NOPTS_VALUE */
    int32_t sample_rate;       /**< audio: Hz, 0 if unknown */
    int32_t channels;          /**< audio: 0 if unknown */
    uint64_t channel_mask;     /**< audio: WAVE channel mask, 0 if unknown */
    int32_t width;             /**< video: 0 if unknown */
    int32_t height;
    int32_t sar_num, sar_den;  /**< video: sample aspect ratio, 0/1 if unknown */
    int32_t frame_rate_num;    /**< video: average frame rate, 0/1 if unknown */
    int32_t frame_rate_den;
    int32_t bits_per_coded_sample; /**< 0 if unknown */
    int32_t block_align;       /**< audio: bytes per packet of constant-size codecs, 0 if unknown */
    int64_t bit_rate;          /**< bits per second, 0 if unknown */
    int32_t video_delay;       /**< video: B-frame reorder depth, 0 if none or unknown */
    uint32_t disposition;      /**< MK_DISPOSITION_* */
    const char *language;      /**< ISO 639-2 code, "" if none; never NULL */
    const char *title;         /**< the track's name, "" if none; never NULL */
    /* ABI 2.5 (a 2.4 plugin fills the struct up to `title`: the host takes these as absent). */
    const char *const *tags;   /**< the track's tags as the container / FFmpeg names them
                                    ("title", "language", "filename", "mimetype", "comment",
                                    "ENCODER" ...): key, value, key, value, ..., NULL; NULL
                                    when none. Owned by the instance until destroy(). */
    const uint8_t *attachment; /**< the bytes of the file (MK_DISPOSITION_ATTACHMENT) or of the
                                    cover picture (MK_DISPOSITION_ATTACHED_PIC); NULL for other
                                    tracks. Owned by the instance until destroy(). */
    size_t attachment_size;
} mk_plugin_track_info;

/** What an open demuxer says of the whole file, filled by get_info (as mk_plugin_track_info:
 *  up to the smaller struct_size; strings owned by the instance until destroy()). */
typedef struct mk_plugin_demuxer_info {
    uint32_t struct_size;      /**< set by the host before the call */
    const char *format_name;   /**< the format actually read ("avi"); never NULL */
    int64_t duration_us;       /**< microseconds, MK_NOPTS_VALUE when unknown */
    int64_t start_time_us;     /**< microseconds, MK_NOPTS_VALUE when unknown */
    int64_t bit_rate;          /**< bits per second, 0 if unknown */
    /* ABI 2.5, appended (a plugin that stops at bit_rate gives no file tags). */
    const char *const *tags;   /**< the file's tags as the container / FFmpeg names them ("title",
                                    "artist", "encoder" ...): key, value, key, value, ..., NULL;
                                    NULL when none. Owned by the instance until destroy(). */
} mk_plugin_demuxer_info;

/** A packet filled by read_packet. Its bytes belong to the instance and stay valid until the
 *  next call on it. Filled up to the smaller of the host's struct_size and the plugin's, and
 *  struct_size set to that. */
typedef struct mk_plugin_demuxed_packet {
    uint32_t struct_size;      /**< set by the host before the call */
    uint32_t flags;            /**< MK_PACKET_FLAG_KEY, _DISCARD, _CORRUPT */
    int32_t track;             /**< index of its track (0 <= track < track_count) */
    const uint8_t *data;       /**< may be NULL when size is 0 */
    size_t size;
    int64_t pts;               /**< in the track's time base, or MK_NOPTS_VALUE */
    int64_t dts;               /**< in the track's time base, or MK_NOPTS_VALUE */
    int64_t duration;          /**< in the track's time base; 0 if unknown */
    int64_t position;          /**< byte offset in the source, -1 if unknown */
} mk_plugin_demuxed_packet;

/** Operations on one demuxer instance. Static storage in the plugin. */
typedef struct mk_plugin_demuxer_vtable {
    uint32_t struct_size;      /**< sizeof(mk_plugin_demuxer_vtable) of the plugin */
    /** [instance-thread] The number of tracks; constant for the instance. */
    uint32_t (*track_count)(void *demuxer);
    /** [instance-thread] Fills *info (whose struct_size the host set) for track `index`.
     *  MK_OK, or MK_EINVAL for an index out of range or a NULL info. */
    int32_t (*get_track)(void *demuxer, uint32_t index, mk_plugin_track_info *info);
    /** [instance-thread] Fills *info (whose struct_size the host set). MK_OK or MK_EINVAL. */
    int32_t (*get_info)(void *demuxer, mk_plugin_demuxer_info *info);
    /** [instance-thread] The next packet in file order into *packet. MK_OK, MK_EOF at the
     *  end, or an error (last_error says what and where); on anything but MK_OK the packet
     *  is untouched. After an error the instance may be asked for more (a damaged stretch
     *  skipped) or destroyed. */
    int32_t (*read_packet)(void *demuxer, mk_plugin_demuxed_packet *packet);
    /** [instance-thread] Moves to the key frame at or before `time_us` (microseconds from
     *  the start of the file's timeline; MK_DEMUX_SEEK_ANY: any packet). MK_OK, or an
     *  error (MK_EUNSUPPORTED for a source that cannot seek); after an error the position
     *  is unchanged or at the start. */
    int32_t (*seek)(void *demuxer, int64_t time_us, uint32_t flags);
    /** [instance-thread] A message for the last failure on this instance; owned by the
     *  instance, valid until the next call on it. Never NULL (may be ""). */
    const char *(*last_error)(void *demuxer);
    /** [instance-thread] Frees the instance; nothing it handed out stays valid. */
    void (*destroy)(void *demuxer);
} mk_plugin_demuxer_vtable;

/** Static description of one container format a plugin reads. */
typedef struct mk_plugin_demuxer_format {
    uint32_t struct_size;      /**< sizeof(mk_plugin_demuxer_format) of the plugin */
    const char *name;          /**< short name, unique in the plugin ("avi"; FFmpeg's names) */
    const char *long_name;     /**< what a person calls it; never NULL (may be "") */
    const char *extensions;    /**< comma-separated, lower case, no dots ("avi,divx"); "" if none */
    const char *mime_types;    /**< comma-separated; "" if none */
    int32_t priority;          /**< higher wins among plugin formats at equal scores */
    /** [thread-safe] How sure the format is that a source starting with head[0 ..< size]
     *  is its own: 0 (not this format) to 100. `total_size` is the source's size, -1 when
     *  unknown; size == total_size when the head is the whole source. `head` is borrowed
     *  for the call and is followed by at least 64 readable zero bytes. */
    int32_t (*score)(const struct mk_plugin_demuxer_format *format, const uint8_t *head,
                     size_t size, int64_t total_size);
    /** [thread-safe] Opens a demuxer of this format on `io` (read from offset 0; see "IO").
     *  On success *demuxer and *vtable are set and MK_OK returned. On failure nothing is
     *  allocated, a message naming what is wrong is written into errbuf (NUL-terminated,
     *  at most errbuf_size bytes; errbuf may be NULL) and an error returned (MK_EDATA for
     *  bytes that are not this format). `io` is borrowed until destroy(). */
    int32_t (*create)(const struct mk_plugin_demuxer_format *format, const mk_plugin_io *io,
                      void **demuxer, const mk_plugin_demuxer_vtable **vtable,
                      char *errbuf, size_t errbuf_size);
} mk_plugin_demuxer_format;

/** The demuxer factory (MK_PLUGIN_DEMUXER_FACTORY, ABI 2.4). Static storage in the plugin. */
typedef struct mk_plugin_demuxer_factory {
    uint32_t struct_size;      /**< sizeof(mk_plugin_demuxer_factory) of the plugin */
    /** [thread-safe] The number of formats; constant after init(). */
    uint32_t (*format_count)(void);
    /** [thread-safe] Format `index` (0 <= index < format_count()), static storage; NULL for
     *  an index out of range. */
    const mk_plugin_demuxer_format *(*get_format)(uint32_t index);
} mk_plugin_demuxer_factory;

/* ---- Muxers (2.5) -------------------------------------------------------------
 *
 * A muxer factory lists container formats the plugin writes. The host writes every format it
 * has built in itself: a plugin format is chosen only for an output extension no built-in
 * writer takes, or when the caller names it ("ffmpeg:avi"; a plugin format named like a
 * built-in one, "mp4", only by its qualified name). Among plugin formats for one extension the
 * highest priority wins, then the load order.
 *
 * Order of calls on an instance: add_track for every track, then write_header once (may fail:
 * a codec the format cannot carry, parameters it needs), then write_packet any number of times,
 * then finish (the file complete: trailer, index) or cancel (abandon it); then destroy. Any
 * call after a failure may be refused; destroy is always allowed, at any point, and without
 * finish it frees what the instance holds without writing more (the host then discards the
 * output). A call out of this order is MK_EINVAL with a message.
 *
 * Output IO. The host hands create() an mk_plugin_output_io: callbacks that write the host's
 * output (a temporary file the host renames into place after finish, or a pipe). `seek` is
 * NULL for an output written once, front to back (a pipe): the instance must then not go back
 * (a format that needs to, MP4's moov size, fails with a message, or writes what a stream
 * allows). A seek goes only to offsets already written (0 ... tell()); a write there
 * overwrites. The callbacks may be called only from inside a call on the instance (create
 * included), on that call's thread; the struct and its opaque stay valid until destroy()
 * returns.
 *
 * Ownership. Everything the host hands in (track descriptions, their strings and extradata,
 * packet bytes) is borrowed for the call: the instance copies what it keeps. What an instance
 * hands out (last_error) belongs to it.
 */

/** The host's output, as callbacks (see "Output IO" above). Owned by the host. */
typedef struct mk_plugin_output_io {
    uint32_t struct_size;      /**< sizeof(mk_plugin_output_io) of the host */
    void *opaque;              /**< the first argument of every callback */
    /** Writes `size` bytes of `buf` at the current position and moves past them (all of them,
     *  or an error). MK_OK, or a negative MK_* error (MK_EFAIL for a write failure: a full
     *  disk; the host keeps its own message for it). */
    int32_t (*write)(void *opaque, const uint8_t *buf, size_t size);
    /** Moves the position to the absolute `offset` (0 <= offset <= tell()). MK_OK or a
     *  negative MK_* error. NULL for an output that cannot seek (a pipe). */
    int32_t (*seek)(void *opaque, int64_t offset);
    /** The current position: bytes from the start of the output. */
    int64_t (*tell)(void *opaque);
} mk_plugin_output_io;

/** One track to write, handed to add_track; borrowed for the call (pointers too). Read by
 *  the plugin up to the host's struct_size: fields beyond it are absent (0 / NULL). */
typedef struct mk_plugin_mux_track {
    uint32_t struct_size;      /**< sizeof(mk_plugin_mux_track) of the host */
    int32_t media_type;        /**< MK_MEDIA_AUDIO, _VIDEO, _SUBTITLE or _DATA */
    const char *codec;         /**< FFmpeg's codec name ("h264", "aac"); never NULL */
    const char *codec_tag;     /**< the source container's tag as text ("XVID", "avc1"), "" if
                                    none; never NULL. A hint: the format may use its own */
    const uint8_t *extradata;  /**< codec configuration as an MP4 / Matroska file stores it
                                    (avcC, hvcC, AudioSpecificConfig, Xiph lacing for Vorbis);
                                    NULL if none */
    size_t extradata_size;
    int32_t time_base_num;     /**< time base of the packets' timestamps (both > 0) */
    int32_t time_base_den;
    int32_t sample_rate;       /**< audio: Hz, 0 if unknown */
    int32_t channels;          /**< audio: 0 if unknown */
    uint64_t channel_mask;     /**< audio: WAVE channel mask, 0 if unknown */
    int32_t width;             /**< video: 0 if unknown */
    int32_t height;
    int32_t sar_num, sar_den;  /**< video: sample aspect ratio, 0/1 if unknown */
    int32_t frame_rate_num;    /**< video: average frame rate, 0/1 if unknown */
    int32_t frame_rate_den;
    int32_t bits_per_coded_sample; /**< 0 if unknown */
    int32_t block_align;       /**< audio: bytes per packet of constant-size codecs, 0 if unknown */
    int64_t bit_rate;          /**< bits per second, 0 if unknown */
    int32_t video_delay;       /**< video: B-frame reorder depth, 0 if none or unknown */
    uint32_t disposition;      /**< MK_DISPOSITION_* */
    const char *language;      /**< ISO 639-2 code, "" if none; never NULL */
    const char *title;         /**< the track's name, "" if none; never NULL */
} mk_plugin_mux_track;

/** A packet to write, handed to write_packet; borrowed for the call (the bytes too). */
typedef struct mk_plugin_mux_packet {
    uint32_t struct_size;      /**< sizeof(mk_plugin_mux_packet) of the host */
    uint32_t flags;            /**< MK_PACKET_FLAG_KEY, _DISCARD */
    int32_t track;             /**< an index add_track returned */
    const uint8_t *data;       /**< may be NULL when size is 0 */
    size_t size;
    int64_t pts;               /**< in the track's time base, or MK_NOPTS_VALUE */
    int64_t dts;               /**< in the track's time base, or MK_NOPTS_VALUE */
    int64_t duration;          /**< in the track's time base; 0 if unknown */
} mk_plugin_mux_packet;

/** Operations on one muxer instance. Static storage in the plugin. */
typedef struct mk_plugin_muxer_vtable {
    uint32_t struct_size;      /**< sizeof(mk_plugin_muxer_vtable) of the plugin */
    /** [instance-thread] Adds a track (before write_header) and sets *index to its index
     *  (0, 1, ... in the order added). MK_OK, or an error (MK_EUNSUPPORTED for a codec the
     *  format does not carry, MK_EINVAL for a NULL or too small track or index, or a call after
     *  write_header) with last_error saying which. `track` is borrowed for the call. */
    int32_t (*add_track)(void *muxer, const mk_plugin_mux_track *track, int32_t *index);
    /** [instance-thread] Starts the file once every track is added (writes the header). MK_OK,
     *  or an error with last_error saying what (the host then cancels). */
    int32_t (*write_header)(void *muxer);
    /** [instance-thread] Writes one packet, after write_header; packets come in decoding order
     *  per track, tracks interleaved as the host reads them (the plugin may reorder across
     *  tracks). `packet` and its bytes are borrowed for the call. MK_OK or an error
     *  (MK_EINVAL for a track that does not exist or a NULL packet; MK_EFAIL when the output's
     *  write failed) with last_error. */
    int32_t (*write_packet)(void *muxer, const mk_plugin_mux_packet *packet);
    /** [instance-thread] Completes the file (what is buffered, the trailer, the index; seeks
     *  back where the output can). MK_OK or an error with last_error. Called once. */
    int32_t (*finish)(void *muxer);
    /** [instance-thread] Abandons the file: nothing more is written (the host discards what
     *  was). Allowed at any point before finish; never fails. */
    void (*cancel)(void *muxer);
    /** [instance-thread] A message for the last failure on this instance; owned by the
     *  instance, valid until the next call on it. Never NULL (may be ""). */
    const char *(*last_error)(void *muxer);
    /** [instance-thread] Frees the instance (after finish or cancel, or at any point). */
    void (*destroy)(void *muxer);
} mk_plugin_muxer_vtable;

/** Static description of one container format a plugin writes. */
typedef struct mk_plugin_muxer_format {
    uint32_t struct_size;      /**< sizeof(mk_plugin_muxer_format) of the plugin */
    const char *name;          /**< short name, unique among the plugin's muxers ("avi"; FFmpeg's) */
    const char *long_name;     /**< what a person calls it; never NULL (may be "") */
    const char *extensions;    /**< comma-separated, lower case, no dots ("avi"); "" if none */
    const char *mime_types;    /**< comma-separated; "" if none */
    int32_t priority;          /**< higher wins among plugin formats for one extension */
    /** [thread-safe] Whether the format carries `codec` (FFmpeg's name) as a track of
     *  `media_type`: 1 yes, 0 no, -1 not known (add_track decides). */
    int32_t (*carries)(const struct mk_plugin_muxer_format *format, int32_t media_type, const char *codec);
    /** [thread-safe] Opens a muxer of this format writing to `io` (from offset 0; see "Output
     *  IO"). On success *muxer and *vtable are set and MK_OK returned. On failure nothing is
     *  allocated, a message is written into errbuf (NUL-terminated, at most errbuf_size bytes;
     *  errbuf may be NULL) and an error returned. `io` is borrowed until destroy(). */
    int32_t (*create)(const struct mk_plugin_muxer_format *format, const mk_plugin_output_io *io,
                      void **muxer, const mk_plugin_muxer_vtable **vtable,
                      char *errbuf, size_t errbuf_size);
} mk_plugin_muxer_format;

/** The muxer factory (MK_PLUGIN_MUXER_FACTORY, ABI 2.5). Static storage in the plugin. */
typedef struct mk_plugin_muxer_factory {
    uint32_t struct_size;      /**< sizeof(mk_plugin_muxer_factory) of the plugin */
    /** [thread-safe] The number of formats; constant after init(). */
    uint32_t (*format_count)(void);
    /** [thread-safe] Format `index` (0 <= index < format_count()), static storage; NULL for
     *  an index out of range. */
    const mk_plugin_muxer_format *(*get_format)(uint32_t index);
} mk_plugin_muxer_factory;

/* ---- The descriptor ----------------------------------------------------------- */

/** What mediakit_plugin_entry returns. Static storage; the host never frees it. */
typedef struct mk_plugin_descriptor {
    mk_plugin_abi abi;         /**< MK_PLUGIN_ABI_CURRENT when built; read first */
    uint32_t struct_size;      /**< sizeof(mk_plugin_descriptor) of the plugin */
    /* The strings are read after init() succeeded (a plugin may fill them in there)
     * and must then stay valid for the life of the process. */
    const char *name;          /**< plugin name, e.g. "ffmpeg"; unique among loaded plugins */
    const char *version;       /**< plugin version, e.g. "1.0.0 (libavcodec 59.37.100)" */
    /** [main-thread] Called once, before any other function of the plugin but the
     *  entry point. `host` stays valid for the life of the process. Returns MK_OK, or
     *  an error (after logging why through host->log): the host then refuses the
     *  plugin and calls nothing else, deinit included. */
    int32_t (*init)(const mk_host *host);
    /** [main-thread] Called once after a successful init(), when the host gives the
     *  plugin up: every instance has been destroyed (frames may still be alive). */
    void (*deinit)(void);
    /** [thread-safe] The factory with id `factory_id` (MK_PLUGIN_*_FACTORY), static
     *  storage, or NULL when the plugin has none. Valid after init(). */
    const void *(*get_factory)(const char *factory_id);
    /* Everything above is required in every 2.x plugin; what follows is read only when
     * struct_size covers it. */
    const char *description;   /**< one line saying what the plugin offers; optional */
} mk_plugin_descriptor;

/** Signature of the entry point. [thread-safe]; it does no work beyond returning the
 *  static descriptor (set-up belongs in init()). */
typedef const mk_plugin_descriptor *(*mk_plugin_entry_fn)(void);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_PLUGIN_H */
