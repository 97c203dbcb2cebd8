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

/** mkp_begin_send's answer when the packet is to be decoded. */
#define MKP_DECODE 1

/**
 * The start of a send_packet(): a NULL packet starts draining (MK_PLUGIN_OK, or
 * MK_PLUGIN_EOF when already draining); a packet whose struct is too small or that has
 * bytes but no data is MK_PLUGIN_EINVAL with a message in err. Otherwise MKP_DECODE.
 */
static int mkp_begin_send(const char *who, const mk_plugin_packet *packet, int *draining,
                          size_t min_size, char *err, size_t err_size) MKP_UNUSED;
static int mkp_begin_send(const char *who, const mk_plugin_packet *packet, int *draining,
                          size_t min_size, char *err, size_t err_size)
{
    if (packet == NULL) {
        if (*draining)
            return MK_PLUGIN_EOF;
        *draining = 1;
        return MK_PLUGIN_OK;
    }
    if (packet->struct_size < min_size) {
        mkp_write_error(err, err_size, "%s: send_packet: packet struct_size %u < %zu", who,
                        packet->struct_size, min_size);
        return MK_PLUGIN_EINVAL;
    }
    if (packet->size > 0 && packet->data == NULL) {
        mkp_write_error(err, err_size, "%s: send_packet: data is NULL but size is %zu", who, packet->size);
        return MK_PLUGIN_EINVAL;
    }
    return MKP_DECODE;
}

/**
 * receive_frame() for a backend that holds at most one decoded frame: checks the host's
 * frame struct, then hands `ready` over (the host now owns its planes) or answers
 * MK_PLUGIN_EAGAIN / MK_PLUGIN_EOF (when draining) if there is none.
 */
static int mkp_hand_over(const char *who, mk_plugin_frame *ready, int *has_ready, int draining,
                         mk_plugin_frame *frame, size_t min_size, char *err, size_t err_size) MKP_UNUSED;
static int mkp_hand_over(const char *who, mk_plugin_frame *ready, int *has_ready, int draining,
                         mk_plugin_frame *frame, size_t min_size, char *err, size_t err_size)
{
    if (frame->struct_size < min_size) {
        mkp_write_error(err, err_size, "%s: receive_frame: frame struct_size %u < %zu", who,
                        frame->struct_size, min_size);
        return MK_PLUGIN_EINVAL;
    }
    if (!*has_ready)
        return draining ? MK_PLUGIN_EOF : MK_PLUGIN_EAGAIN;
    uint32_t size = frame->struct_size;
    ready->struct_size = size;
    memcpy(frame, ready, size < sizeof(*ready) ? size : sizeof(*ready));
    *has_ready = 0;
    return MK_PLUGIN_OK;
}

#endif /* MK_PLUGIN_SUPPORT_H */
