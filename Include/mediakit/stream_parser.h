/*
 * mediakit/stream_parser.h - part of the C API of MediaKit (libmediakit): mk_stream_parser: MP3, ADTS, AC-3, DTS and AMR bytes pushed in any chunking.
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_STREAM_PARSER_H
#define MEDIAKIT_STREAM_PARSER_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A push parser for MP3 (MPEG audio Layer I/II/III), ADTS AAC, AC-3 / E-AC-3, DTS and AMR
 *  (storage format, "#!AMR") that arrive in pieces, as
 *  iOS's AudioFileStream: hand it bytes in any chunking with mk_stream_parser_push(), then take
 *  the events that became known with mk_stream_parser_next_event() until it returns MK_EAGAIN.
 *  Bytes that do not complete a frame are kept: never push them again. One thread at a time.
 *
 *      mk_stream_parser *sp = NULL;
 *      mk_stream_parser_open(&sp, -1);
 *      while ((n = read(fd, buf, sizeof buf)) > 0) {
 *          mk_stream_parser_push(sp, buf, n, 0);
 *          mk_stream_event ev; ev.struct_size = sizeof ev;
 *          while (mk_stream_parser_next_event(sp, &ev) == MK_OK)
 *              if (ev.kind == MK_STREAM_EVENT_PACKET) use(ev.data, ev.size, ev.offset);
 *      }
 *      mk_stream_parser_finish(sp);   ... then drain the events again
 *      mk_stream_parser_close(&sp);
 */
typedef struct mk_stream_parser mk_stream_parser;

#define MK_STREAM_EVENT_FILE_FORMAT   1  /**< text: "mp3", "adts", "ac3" (AC-3 or E-AC-3), "dts" or "amr" */
#define MK_STREAM_EVENT_DATA_FORMAT   2  /**< text: codec ("mp3", "aac" ...); sample_rate, channels, frames_per_packet */
#define MK_STREAM_EVENT_MAGIC_COOKIE  3  /**< data/size: the decoder configuration (ADTS: AudioSpecificConfig) */
#define MK_STREAM_EVENT_DATA_OFFSET   4  /**< offset: the first audio frame */
#define MK_STREAM_EVENT_BYTE_COUNT    5  /**< value: audio bytes a Xing / VBRI header states */
#define MK_STREAM_EVENT_PACKET_COUNT  6  /**< value: audio packets a Xing / VBRI header states */
#define MK_STREAM_EVENT_BIT_RATE      7  /**< value: bits per second; flags & 1: exact (constant bit rate) */
#define MK_STREAM_EVENT_DURATION      8  /**< seconds; flags & 1: estimated */
#define MK_STREAM_EVENT_GAPLESS       9  /**< value: encoder delay, value2: padding (samples, from LAME's tag) */
#define MK_STREAM_EVENT_TAGS         10  /**< text: the title read so far (all tags: through Swift / Python) */
#define MK_STREAM_EVENT_READY        11  /**< the format is known: packets follow */
#define MK_STREAM_EVENT_PACKET       12  /**< offset, data/size, frames; flags & 1: the stream ends inside it */
#define MK_STREAM_EVENT_WARNING      13  /**< text: damage skipped (the message names the offset) */

/** One event. Pointers (text, data) are borrowed from the parser and valid until the next
 *  call on it. */
typedef struct mk_stream_event {
    uint32_t struct_size;      /**< set by the caller: sizeof(mk_stream_event) */
    int32_t kind;              /**< MK_STREAM_EVENT_* */
    const char *text;          /**< see the kinds; "" when none */
    const uint8_t *data;       /**< packet bytes or magic cookie; NULL when none */
    size_t size;
    int64_t offset;            /**< byte offset in the stream (packets, data offset) */
    int64_t value, value2;     /**< see the kinds */
    double seconds;            /**< duration */
    int32_t sample_rate, channels, frames_per_packet;
    int32_t frames;            /**< packet: samples per channel */
    int32_t flags;             /**< see the kinds */
} mk_stream_event;

/** Creates a parser. `total_bytes` is the stream's length when known (for duration estimates),
 *  else -1. On success *out is new: close it with mk_stream_parser_close(). Errors: MK_EINVAL. */
mk_status mk_stream_parser_open(mk_stream_parser **out, int64_t total_bytes);

/** Parses the next `size` bytes (copied; `data` may be freed on return). A nonzero
 *  `discontinuity` (after a seek or a gap) drops what is kept and looks for a confirmed frame
 *  again; the bytes then start at the offset mk_stream_parser_seek() returned.
 *  Errors: MK_EINVAL, MK_EUNSUPPORTED (ADIF AAC). */
mk_status mk_stream_parser_push(mk_stream_parser *parser, const uint8_t *data, size_t size, int32_t discontinuity);

/** Ends the input: the last frame and the bit rate become events. Errors: MK_EINVAL. */
mk_status mk_stream_parser_finish(mk_stream_parser *parser);

/** Takes the oldest event not taken yet into *event. Returns MK_EAGAIN when there is none (push
 *  more bytes). Errors: MK_EINVAL (NULL, small struct_size). */
mk_status mk_stream_parser_next_event(mk_stream_parser *parser, mk_stream_event *event);

/** Where to push from for `seconds`: the byte offset, the packet index, and *exact = 1 when the
 *  offset is that packet's start (else estimated: parsing resynchronises). Any output pointer may
 *  be NULL. Errors: MK_EINVAL, MK_ESTATE (nothing parsed yet to seek with). */
mk_status mk_stream_parser_seek(mk_stream_parser *parser, double seconds, int64_t *offset, int64_t *packet, int32_t *exact);

/** Closes *parser and sets it to NULL; NULL is harmless. */
void mk_stream_parser_close(mk_stream_parser **parser);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_STREAM_PARSER_H */
