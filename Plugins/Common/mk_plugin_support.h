/*
 * mk_plugin_support.h — what every MediaKit codec plugin written in C shares: the
 * exported entry point, the factories over a static table, get_factory(), keeping
 * the host from init() and logging through it, formatting an error into the host's
 * buffer, and the argument checks that start every create(), send_packet() and
 * receive_frame(). Header-only (static functions, nothing exported but what
 * MKP_ENTRY defines); a plugin of several .c files includes it from each.
 */
#ifndef MK_PLUGIN_SUPPORT_H
#define MK_PLUGIN_SUPPORT_H

#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "mediakit/mediakit_plugin.h"

#if defined(__GNUC__) || defined(__clang__)
#define MKP_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define MKP_UNUSED __attribute__((unused))
#else
#define MKP_PRINTF(fmt, args)
#define MKP_UNUSED
#endif

#if defined(__GNUC__) || defined(__clang__)
#define MKP_EXPORT __attribute__((visibility("default")))
#else
#define MKP_EXPORT
#endif

/** Bytes of `type` up to and including `field`: the struct_size a reader needs. */
#define MKP_END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/** The exported entry point, returning `descriptor` (an mk_plugin_descriptor). */
#define MKP_ENTRY(descriptor)                                                        \
    MKP_EXPORT const mk_plugin_descriptor *mediakit_plugin_entry(void);              \
    MKP_EXPORT const mk_plugin_descriptor *mediakit_plugin_entry(void)               \
    {                                                                                \
        return &(descriptor);                                                        \
    }

/** A static decoder factory named `name` over the array `backends` whose first
 *  `count` entries are used (`count` may be a variable that init() sets). */
#define MKP_DECODER_FACTORY(name, backends, count)                                   \
    static uint32_t name##_count(void) { return (uint32_t)(count); }                 \
    static const mk_plugin_decoder_backend *name##_get(uint32_t index)               \
    {                                                                                \
        return index < (uint32_t)(count) ? &(backends)[index] : NULL;                \
    }                                                                                \
    static const mk_plugin_decoder_factory name = {                                  \
        sizeof(mk_plugin_decoder_factory), name##_count, name##_get,                 \
    }

/** A static picture converter factory named `name` over the array `converters`
 *  (every entry is used). */
#define MKP_PICTURE_CONVERTER_FACTORY(name, converters)                               \
    static uint32_t name##_count(void)                                               \
    {                                                                                \
        return (uint32_t)(sizeof(converters) / sizeof((converters)[0]));             \
    }                                                                                \
    static const mk_plugin_picture_converter *name##_get(uint32_t index)             \
    {                                                                                \
        return index < name##_count() ? &(converters)[index] : NULL;                 \
    }                                                                                \
    static const mk_plugin_picture_converter_factory name = {                        \
        sizeof(mk_plugin_picture_converter_factory), name##_count, name##_get,       \
    }

/** A static encoder factory named `name` over the array `backends` whose first `count`
 *  entries are used (`count` may be a variable that init() sets). */
#define MKP_ENCODER_FACTORY(name, backends, count)                                   \
    static uint32_t name##_count(void) { return (uint32_t)(count); }                 \
    static const mk_plugin_encoder_backend *name##_get(uint32_t index)               \
    {                                                                                \
        return index < (uint32_t)(count) ? &(backends)[index] : NULL;                \
    }                                                                                \
    static const mk_plugin_encoder_factory name = {                                  \
        sizeof(mk_plugin_encoder_factory), name##_count, name##_get,                 \
    }

/** get_factory()'s answer for a plugin with these factories (any may be NULL). */
static const void *mkp_pick_factories(const char *id, const mk_plugin_decoder_factory *decoders,
                                      const mk_plugin_picture_converter_factory *converters,
                                      const mk_plugin_encoder_factory *encoders) MKP_UNUSED;
static const void *mkp_pick_factories(const char *id, const mk_plugin_decoder_factory *decoders,
                                      const mk_plugin_picture_converter_factory *converters,
                                      const mk_plugin_encoder_factory *encoders)
{
    if (id == NULL)
        return NULL;
    if (decoders != NULL && strcmp(id, MK_PLUGIN_DECODER_FACTORY) == 0)
        return decoders;
    if (converters != NULL && strcmp(id, MK_PLUGIN_PICTURE_CONVERTER_FACTORY) == 0)
        return converters;
    if (encoders != NULL && strcmp(id, MK_PLUGIN_ENCODER_FACTORY) == 0)
        return encoders;
    return NULL;
}

/** get_factory()'s answer for a plugin with decoders and picture converters only. */
static const void *mkp_pick_factory(const char *id, const mk_plugin_decoder_factory *decoders,
                                    const mk_plugin_picture_converter_factory *converters) MKP_UNUSED;
static const void *mkp_pick_factory(const char *id, const mk_plugin_decoder_factory *decoders,
                                    const mk_plugin_picture_converter_factory *converters)
{
    return mkp_pick_factories(id, decoders, converters, NULL);
}

/**
 * Everything but the decoders of a plugin whose one factory is `factory` (a decoder
 * factory) and whose init() has nothing to set up but keeping the host in `host_slot` (a
 * `static const mk_host *` the plugin declared) and its version string, "<plugin_version>
 * (<library_prefix><library_version>)", `library_version` being evaluated in init() (the
 * library loaded at run time may be newer than its headers): init, deinit, get_factory,
 * the descriptor and the exported entry point.
 */
#define MKP_DECODER_PLUGIN(prefix, host_slot, plugin_name, plugin_version, library_prefix,     \
                           library_version, summary, factory)                                  \
    MKP_CODEC_PLUGIN(prefix, host_slot, plugin_name, plugin_version, library_prefix,           \
                     library_version, summary, &(factory), NULL)

/** As MKP_DECODER_PLUGIN, for a plugin with a decoder factory and an encoder factory
 *  (pointers; either may be NULL). */
#define MKP_CODEC_PLUGIN(prefix, host_slot, plugin_name, plugin_version, library_prefix,       \
                         library_version, summary, decoder_factory, encoder_factory)           \
    static char prefix##_version[128] = plugin_version;                                        \
    static int32_t prefix##_init(const mk_host *host)                                          \
    {                                                                                          \
        int32_t status = mkp_keep_host(host, &(host_slot));                                    \
        if (status == MK_OK)                                                                   \
            snprintf(prefix##_version, sizeof(prefix##_version), "%s (%s%s)", plugin_version,  \
                     library_prefix, library_version);                                         \
        return status;                                                                         \
    }                                                                                          \
    static void prefix##_deinit(void) { (host_slot) = NULL; }                                  \
    static const void *prefix##_get_factory(const char *id)                                    \
    {                                                                                          \
        return mkp_pick_factories(id, (decoder_factory), NULL, (encoder_factory));             \
    }                                                                                          \
    static const mk_plugin_descriptor prefix##_descriptor = {                                  \
        .abi = MK_PLUGIN_ABI_CURRENT,                                                          \
        .struct_size = sizeof(mk_plugin_descriptor),                                           \
        .name = plugin_name,                                                                   \
        .version = prefix##_version,                                                           \
        .init = prefix##_init,                                                                 \
        .deinit = prefix##_deinit,                                                             \
        .get_factory = prefix##_get_factory,                                                   \
        .description = summary,                                                                \
    };                                                                                         \
    MKP_ENTRY(prefix##_descriptor)

/** The fields of mk_host a v2.0 plugin uses. */
#define MKP_HOST_MIN_SIZE MKP_END_OF(mk_host, log)

/**
 * init()'s check of the host: returns MK_OK and stores `host` in *slot, or MK_EINVAL
 * for a NULL host, a host struct smaller than ABI 2.0's or another major version (then
 * nothing can be logged through it, and *slot is left NULL).
 */
static int32_t mkp_keep_host(const mk_host *host, const mk_host **slot) MKP_UNUSED;
static int32_t mkp_keep_host(const mk_host *host, const mk_host **slot)
{
    *slot = NULL;
    if (host == NULL || host->struct_size < MKP_HOST_MIN_SIZE || host->abi.major != MK_PLUGIN_ABI_MAJOR)
        return MK_EINVAL;
    *slot = host;
    return MK_OK;
}

/** The host's log level (MK_LOG_QUIET without a host). */
static int32_t mkp_log_level(const mk_host *host) MKP_UNUSED;
static int32_t mkp_log_level(const mk_host *host)
{
    return host != NULL && host->log != NULL ? host->log_level : MK_LOG_QUIET;
}

/** Formats a message and sends it to the host's log when the host wants `level`. */
static void mkp_log(const mk_host *host, int32_t level, const char *fmt, ...) MKP_PRINTF(3, 4) MKP_UNUSED;
static void mkp_log(const mk_host *host, int32_t level, const char *fmt, ...)
{
    if (level > mkp_log_level(host) || level <= MK_LOG_QUIET)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    host->log(host, level, line);
}

/** 1 when the host offers the packet's bytes to keep (retain, release and owner are
 *  set) with at least `min_padding` zero bytes after them, else 0. */
static int mkp_packet_can_keep(const mk_plugin_packet *packet, size_t min_padding) MKP_UNUSED;
static int mkp_packet_can_keep(const mk_plugin_packet *packet, size_t min_padding)
{
    return packet->struct_size >= MKP_END_OF(mk_plugin_packet, owner) && packet->retain != NULL &&
           packet->release != NULL && packet->padding >= min_padding;
}

/** Writes a formatted message into buf (NUL-terminated, at most size bytes). NULL buf: nothing. */
static void mkp_write_error(char *buf, size_t size, const char *fmt, ...) MKP_PRINTF(3, 4) MKP_UNUSED;
static void mkp_write_error(char *buf, size_t size, const char *fmt, ...)
{
    if (buf == NULL || size == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

/**
 * The checks at the start of a single-codec backend's create(): clears errbuf and the
 * outputs, then refuses NULL arguments, a config smaller than `min_size`, another codec
 * or media type, and extradata_size without extradata. `who` prefixes the messages
 * (e.g. "opus"). Returns MK_OK, or MK_EINVAL with the reason in errbuf.
 */
static int mkp_check_create(const char *who, const mk_plugin_codec_config *config, void **decoder,
                            const mk_plugin_decoder_vtable **vtable, char *errbuf, size_t errbuf_size,
                            size_t min_size, const char *codec, int32_t media_type) MKP_UNUSED;
static int mkp_check_create(const char *who, const mk_plugin_codec_config *config, void **decoder,
                            const mk_plugin_decoder_vtable **vtable, char *errbuf, size_t errbuf_size,
                            size_t min_size, const char *codec, int32_t media_type)
{
    if (errbuf != NULL && errbuf_size > 0)
        errbuf[0] = '\0';
    if (config == NULL || decoder == NULL || vtable == NULL) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: %s is NULL", who,
                        config == NULL ? "config" : decoder == NULL ? "decoder" : "vtable");
        return MK_EINVAL;
    }
    *decoder = NULL;
    *vtable = NULL;
    if (config->struct_size < min_size) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: config struct_size %u < %zu", who,
                        config->struct_size, min_size);
        return MK_EINVAL;
    }
    if (config->codec == NULL || strcmp(config->codec, codec) != 0) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: asked to decode codec \"%s\"", who,
                        config->codec != NULL ? config->codec : "(NULL)");
        return MK_EINVAL;
    }
    if (config->media_type != media_type) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: media type %d, expected %s", who,
                        config->media_type, media_type == MK_MEDIA_AUDIO ? "audio" : "video");
        return MK_EINVAL;
    }
    if (config->extradata_size > 0 && config->extradata == NULL) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: extradata is NULL but extradata_size is %zu",
                        who, config->extradata_size);
        return MK_EINVAL;
    }
    return MK_OK;
}

/** mkp_begin_send's answer when the packet is to be decoded. */
#define MKP_DECODE 1

/**
 * The start of a send_packet(): a NULL packet starts draining (MK_OK, or
 * MK_EOF when already draining); a packet whose struct is too small or that has
 * bytes but no data is MK_EINVAL with a message in err. Otherwise MKP_DECODE.
 */
static int mkp_begin_send(const char *who, const mk_plugin_packet *packet, int *draining,
                          size_t min_size, char *err, size_t err_size) MKP_UNUSED;
static int mkp_begin_send(const char *who, const mk_plugin_packet *packet, int *draining,
                          size_t min_size, char *err, size_t err_size)
{
    if (packet == NULL) {
        if (*draining)
            return MK_EOF;
        *draining = 1;
        return MK_OK;
    }
    if (packet->struct_size < min_size) {
        mkp_write_error(err, err_size, "%s: send_packet: packet struct_size %u < %zu", who,
                        packet->struct_size, min_size);
        return MK_EINVAL;
    }
    if (packet->size > 0 && packet->data == NULL) {
        mkp_write_error(err, err_size, "%s: send_packet: data is NULL but size is %zu", who, packet->size);
        return MK_EINVAL;
    }
    return MKP_DECODE;
}

/**
 * receive_frame() for a backend that holds at most one decoded frame: checks the host's
 * frame struct, then hands `ready` over (the host now owns its planes) or answers
 * MK_EAGAIN / MK_EOF (when draining) if there is none.
 */
static int mkp_hand_over(const char *who, mk_plugin_frame *ready, int *has_ready, int draining,
                         mk_plugin_frame *frame, size_t min_size, char *err, size_t err_size) MKP_UNUSED;
static int mkp_hand_over(const char *who, mk_plugin_frame *ready, int *has_ready, int draining,
                         mk_plugin_frame *frame, size_t min_size, char *err, size_t err_size)
{
    if (frame->struct_size < min_size) {
        mkp_write_error(err, err_size, "%s: receive_frame: frame struct_size %u < %zu", who,
                        frame->struct_size, min_size);
        return MK_EINVAL;
    }
    if (!*has_ready)
        return draining ? MK_EOF : MK_EAGAIN;
    /* filled up to the smaller of the host's struct and ours, which struct_size then says */
    uint32_t size = frame->struct_size < sizeof(*ready) ? frame->struct_size : (uint32_t)sizeof(*ready);
    ready->struct_size = size;
    memcpy(frame, ready, size);
    *has_ready = 0;
    return MK_OK;
}

/** The Vorbis channel order (Vorbis I spec 4.3.9; Opus mapping family 1) against the WAVE
 *  order FFmpeg uses: for n channels (3..8), WAVE-order channel i is Vorbis-order channel
 *  mkp_vorbis_to_wave[n-1][i]. 1 and 2 channels are the same in both. */
static const uint8_t mkp_vorbis_to_wave[8][8] MKP_UNUSED = {
    { 0 },
    { 0, 1 },
    { 0, 2, 1 },
    { 0, 1, 2, 3 },
    { 0, 2, 1, 3, 4 },
    { 0, 2, 1, 5, 3, 4 },
    { 0, 2, 1, 6, 5, 3, 4 },
    { 0, 2, 1, 7, 5, 6, 3, 4 },
};

/* ---- Encoders ---------------------------------------------------------------- */

/** The smallest encoder config a 2.1 encoder reads. */
#define MKP_ENCODER_CONFIG_MIN_SIZE MKP_END_OF(mk_plugin_encoder_config, thread_count)

/**
 * The checks at the start of an encoder backend's create(): clears errbuf and the outputs,
 * refuses NULL arguments, a config smaller than 2.1's, another codec or media type, a
 * channel count outside 1..max_channels and a sample format not in `formats` (0-terminated).
 * Returns MK_OK, or an error with the reason (naming what is accepted) in errbuf.
 */
static int mkp_check_encoder_create(const char *who, const mk_plugin_encoder_config *config, void **encoder,
                                    const mk_plugin_encoder_vtable **vtable, char *errbuf, size_t errbuf_size,
                                    const char *codec, int max_channels, const int32_t *formats) MKP_UNUSED;
static int mkp_check_encoder_create(const char *who, const mk_plugin_encoder_config *config, void **encoder,
                                    const mk_plugin_encoder_vtable **vtable, char *errbuf, size_t errbuf_size,
                                    const char *codec, int max_channels, const int32_t *formats)
{
    if (errbuf != NULL && errbuf_size > 0)
        errbuf[0] = '\0';
    if (config == NULL || encoder == NULL || vtable == NULL) {
        mkp_write_error(errbuf, errbuf_size, "%s encoder: create: %s is NULL", who,
                        config == NULL ? "config" : encoder == NULL ? "encoder" : "vtable");
        return MK_EINVAL;
    }
    *encoder = NULL;
    *vtable = NULL;
    if (config->struct_size < MKP_ENCODER_CONFIG_MIN_SIZE) {
        mkp_write_error(errbuf, errbuf_size, "%s encoder: create: config struct_size %u < %zu", who,
                        config->struct_size, (size_t)MKP_ENCODER_CONFIG_MIN_SIZE);
        return MK_EINVAL;
    }
    if (config->codec == NULL || strcmp(config->codec, codec) != 0 || config->media_type != MK_MEDIA_AUDIO) {
        mkp_write_error(errbuf, errbuf_size, "%s encoder: create: asked to encode %s codec \"%s\"", who,
                        config->media_type == MK_MEDIA_AUDIO ? "audio" : "non-audio",
                        config->codec != NULL ? config->codec : "(NULL)");
        return MK_EINVAL;
    }
    if (config->channels < 1 || config->channels > max_channels) {
        mkp_write_error(errbuf, errbuf_size, "%s encoder: %d channels: it accepts 1 to %d channels", who,
                        config->channels, max_channels);
        return MK_EUNSUPPORTED;
    }
    if (config->sample_rate <= 0) {
        mkp_write_error(errbuf, errbuf_size, "%s encoder: sample rate %d Hz", who, config->sample_rate);
        return MK_EINVAL;
    }
    int known = 0;
    for (const int32_t *f = formats; f != NULL && *f != 0; f++)
        known |= *f == config->sample_format;
    if (!known) {
        mkp_write_error(errbuf, errbuf_size, "%s encoder: sample format %d is not one it accepts", who,
                        config->sample_format);
        return MK_EUNSUPPORTED;
    }
    return MK_OK;
}

/** Writes "a, b and c" of a 0-terminated list of rates into buf (for error messages). */
static void mkp_format_rates(char *buf, size_t size, const int32_t *rates) MKP_UNUSED;
static void mkp_format_rates(char *buf, size_t size, const int32_t *rates)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; rates[i] != 0 && n < size; i++) {
        const char *sep = i == 0 ? "" : rates[i + 1] == 0 ? " and " : ", ";
        int w = snprintf(buf + n, size - n, "%s%d", sep, rates[i]);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

/** Copies `src` (the plugin's struct of `own_size` bytes) into the host's struct `dst`, up to
 *  the smaller of the two sizes, and sets dst's struct_size to that. For get_info and
 *  receive_packet, whose structs start with struct_size. */
static void mkp_fill_struct(void *dst, const void *src, size_t own_size) MKP_UNUSED;
static void mkp_fill_struct(void *dst, const void *src, size_t own_size)
{
    uint32_t host_size;
    memcpy(&host_size, dst, sizeof(host_size));
    uint32_t size = host_size < own_size ? host_size : (uint32_t)own_size;
    memcpy(dst, src, size);
    memcpy(dst, &size, sizeof(size));
}

#endif /* MK_PLUGIN_SUPPORT_H */
