/*
 * mk_plugin_support.h — helpers every MediaKit codec plugin written in C shares:
 * formatting an error into the host's buffer, and the argument checks that start
 * every backend's create(). Header-only (static functions); include it from one .c file.
 */
#ifndef MK_PLUGIN_SUPPORT_H
#define MK_PLUGIN_SUPPORT_H

#include <stdarg.h>
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

/** Bytes of `type` up to and including `field`: the struct_size a reader needs. */
#define MKP_END_OF(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

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
 * (e.g. "opus"). Returns MK_PLUGIN_OK, or MK_PLUGIN_EINVAL with the reason in errbuf.
 */
static int mkp_check_create(const char *who, const mk_plugin_codec_config *config, void **decoder,
                            const mk_plugin_decoder_vtable **vtable, char *errbuf, size_t errbuf_size,
                            size_t min_size, const char *codec, uint32_t media_type) MKP_UNUSED;
static int mkp_check_create(const char *who, const mk_plugin_codec_config *config, void **decoder,
                            const mk_plugin_decoder_vtable **vtable, char *errbuf, size_t errbuf_size,
                            size_t min_size, const char *codec, uint32_t media_type)
{
    if (errbuf != NULL && errbuf_size > 0)
        errbuf[0] = '\0';
    if (config == NULL || decoder == NULL || vtable == NULL) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: %s is NULL", who,
                        config == NULL ? "config" : decoder == NULL ? "decoder" : "vtable");
        return MK_PLUGIN_EINVAL;
    }
    *decoder = NULL;
    *vtable = NULL;
    if (config->struct_size < min_size) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: config struct_size %u < %zu", who,
                        config->struct_size, min_size);
        return MK_PLUGIN_EINVAL;
    }
    if (config->codec == NULL || strcmp(config->codec, codec) != 0) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: asked to decode codec \"%s\"", who,
                        config->codec != NULL ? config->codec : "(NULL)");
        return MK_PLUGIN_EINVAL;
    }
    if (config->media_type != media_type) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: media type %u, expected %s", who,
                        config->media_type, media_type == MK_PLUGIN_MEDIA_AUDIO ? "audio" : "video");
        return MK_PLUGIN_EINVAL;
    }
    if (config->extradata_size > 0 && config->extradata == NULL) {
        mkp_write_error(errbuf, errbuf_size, "%s: create: extradata is NULL but extradata_size is %zu",
                        who, config->extradata_size);
        return MK_PLUGIN_EINVAL;
    }
    return MK_PLUGIN_OK;
}

#endif /* MK_PLUGIN_SUPPORT_H */
