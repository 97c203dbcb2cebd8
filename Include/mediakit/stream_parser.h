/*
 * mediakit/stream_parser.h - part of the C API of MediaKit (libmediakit): mk_stream_parser: MP3, ADTS, AC-3, DTS, AMR and the audio containers read front to back (WAV, AIFF, CAF, FLAC, Ogg, M4A with moov first, MPEG-TS) pushed in any chunking.
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
 *  (storage format, "#!AMR"), and WAV / RF64, AIFF, CAF, FLAC, Ogg, MP4 / M4A with its moov
 *  first and MPEG-TS (the first audio track; packets as the container's demuxer reads them),
 *  that arrive in pieces, as
 *  iOS's AudioFileStream: hand it bytes in any chunking with mk_stream_parser_push(), then take
 *  the events that became known with mk_stream_parser_next_event() until it returns MK_EAGAIN.
 *  Bytes that do not complete a frame are kept: never push them again. One thread at a time.
 *  What is known so far (format, counts, estimates, tags) can be read at any time with
 *  mk_stream_parser_properties() and the calls after it.
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
#define MK_STREAM_EVENT_BIT_RATE      7  /**< value: bits per second; flags & 1: exact (constant bit rate). Refined at
                                              packets 1, 2, 4, 8 ... (the average so far) and at the end */
#define MK_STREAM_EVENT_DURATION      8  /**< seconds; flags & 1: estimated. Refined as the bit rate is; exact at the end */
#define MK_STREAM_EVENT_GAPLESS       9  /**< value: encoder delay, value2: padding (samples, from LAME's tag) */
#define MK_STREAM_EVENT_TAGS         10  /**< text: the title read so far; every tag: mk_stream_parser_tag_count / _tag_at */
#define MK_STREAM_EVENT_READY        11  /**< the format is known: packets follow */
#define MK_STREAM_EVENT_PACKET       12  /**< offset, data/size, frames; flags & 1: the stream ends inside it */
#define MK_STREAM_EVENT_WARNING      13  /**< text: damage skipped (the message names the offset) */
#define MK_STREAM_EVENT_DISCONTINUITY 14 /**< offset: the first frame after a push with discontinuity; value: bytes
                                              passed over before it (a seek to an estimated offset: not damage) */

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

/** mk_stream_parser_open() with a file type hint (Apple's inFileTypeHint): a format's name or a
 *  file name extension ("wav", "m4a", "aac", "ts" ...; NULL or an unknown one: no hint). The
 *  bytes decide the type: a wrong hint is overridden by them; the hint names the expected type
 *  in the error for bytes that are none of the types read. `file_type_hint` is borrowed for
 *  the call only. On success *out is new: close it with mk_stream_parser_close().
 *  Errors: MK_EINVAL. */
mk_status mk_stream_parser_open_hint(mk_stream_parser **out, int64_t total_bytes, const char *file_type_hint);

/** Parses the next `size` bytes (copied; `data` may be freed on return). A nonzero
 *  `discontinuity` (after a seek or a gap) drops what is kept and looks for a confirmed frame
 *  again; the bytes then start at the offset mk_stream_parser_seek() returned.
 *  Errors: MK_EINVAL, MK_EUNSUPPORTED (ADIF AAC; a container this parser does not read,
 *  Matroska, AVI, IVF ..., refused at its first bytes; 64 KiB without a frame or a signature;
 *  an MP4 whose moov follows its media data; a discontinuity in a container), a container
 *  demuxer's error for damage it cannot step over. */
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

/** What the parser knows now (Apple's AudioFileStreamGetProperty): unknown values are -1 (0 for
 *  sample_rate, channels, frames_per_packet, channel_mask, maximum_packet_size,
 *  packet_size_upper_bound, average_bytes_per_packet; "" / NULL for the strings and the cookie).
 *  Pointers are borrowed from the parser and valid until the next call on it. */
typedef struct mk_stream_properties {
    uint32_t struct_size;            /**< set by the caller: sizeof(mk_stream_properties) */
    int32_t ready;                   /**< 1 once the format is known and packets follow */
    const char *file_format;         /**< "mp3", "adts", "ac3", "dts", "amr"; "" until known */
    const char *codec;               /**< the data format's codec ("mp3", "aac" ...); "" until known */
    const char *profile;             /**< "LC", "HE-AAC", "HE-AACv2" ... for AAC (the outermost layer); "" otherwise */
    int32_t sample_rate, channels, frames_per_packet;  /**< the data format (the header's, see mk_stream_parser_format_at) */
    uint64_t channel_mask;           /**< speakers as WAVE channel-mask bits; 0 when unknown */
    const uint8_t *magic_cookie;     /**< the decoder configuration (ADTS: AudioSpecificConfig); NULL when none */
    size_t magic_cookie_size;
    int64_t data_offset;             /**< the first audio frame's offset */
    int64_t audio_data_byte_count;   /**< Xing / VBRI's, else the stream's length less data_offset (estimated) */
    int32_t byte_count_estimated;
    int64_t audio_data_packet_count; /**< Xing / VBRI's, else byte count / average packet size (estimated) */
    int32_t packet_count_estimated;
    int32_t maximum_packet_size;     /**< the largest packet so far */
    int32_t packet_size_upper_bound; /**< the largest packet the format allows */
    double average_bytes_per_packet; /**< over the packets so far */
    int64_t bit_rate;                /**< bits per second (the average so far) */
    int32_t bit_rate_exact;          /**< 1: every packet so far had this rate */
    double duration;                 /**< seconds */
    int32_t duration_estimated;
    int64_t priming_frames, remainder_frames;  /**< from a LAME tag (FFmpeg's skips); -1 without one */
    int64_t valid_frames;            /**< the packets' samples less priming and remainder; -1 unless the packet count is exact */
    int64_t packets_parsed, bytes_parsed;      /**< packets reported so far and their bytes */
    int32_t format_count;            /**< entries of mk_stream_parser_format_at (0 before the format is known) */
} mk_stream_properties;

/** Fills *props (struct_size set by the caller; a smaller, older struct gets its fields only).
 *  Errors: MK_EINVAL (NULL, small struct_size). */
mk_status mk_stream_parser_properties(mk_stream_parser *parser, mk_stream_properties *props);

/** One layer of the format list (Apple's kAudioFileStreamProperty_FormatList), outermost first:
 *  HE-AAC v2 gives three (PS, SBR, the AAC LC core). An ADTS header cannot say SBR / PS: the
 *  first frame is decoded with the registry's AAC decoder to find them (the first time this or
 *  mk_stream_parser_properties is called after the first frame). Strings borrowed until the
 *  next call on the parser. */
typedef struct mk_stream_format {
    uint32_t struct_size;            /**< set by the caller: sizeof(mk_stream_format) */
    const char *codec;
    const char *profile;             /**< "" when none */
    int32_t sample_rate, channels, frames_per_packet;
} mk_stream_format;

/** Layer `index` (0 <= index < props.format_count) into *format. Errors: MK_EINVAL (NULL, index out of range). */
mk_status mk_stream_parser_format_at(mk_stream_parser *parser, int32_t index, mk_stream_format *format);

/** The first sample (per channel) of packet `packet` into *frame. Errors: MK_EINVAL, MK_ESTATE (format not known yet). */
mk_status mk_stream_parser_packet_to_frame(mk_stream_parser *parser, int64_t packet, int64_t *frame);
/** The packet holding sample `frame` into *packet, the sample's place in it into *frame_offset (may be NULL).
 *  Errors: MK_EINVAL, MK_ESTATE. */
mk_status mk_stream_parser_frame_to_packet(mk_stream_parser *parser, int64_t frame, int64_t *packet, int32_t *frame_offset);
/** Where packet `packet` starts into *offset; *estimated (may be NULL) = 1 when it is a guess (a
 *  packet not parsed yet whose place the stream does not pin). Errors: MK_EINVAL, MK_ESTATE. */
mk_status mk_stream_parser_packet_to_byte(mk_stream_parser *parser, int64_t packet, int64_t *offset, int32_t *estimated);
/** The packet holding byte `offset` into *packet, the byte's place in it into *byte_offset, and
 *  *estimated = 1 outside the packets parsed so far (the last two may be NULL). Errors: MK_EINVAL,
 *  MK_ESTATE (no packet parsed yet, or `offset` before the data). */
mk_status mk_stream_parser_byte_to_packet(mk_stream_parser *parser, int64_t offset, int64_t *packet, int32_t *byte_offset, int32_t *estimated);

/** Every tag read so far, as mk_demuxer_tag_count / _tag_at give a demuxer's (metadata.h): the
 *  ID3v2 frames (or the ID3v1 tag). Strings borrowed until the next push / finish / close. */
mk_status mk_stream_parser_tag_count(mk_stream_parser *parser, int32_t *count);
/** Tag `index`: normalised key, native key (may be NULL), value. Errors: MK_EINVAL. */
mk_status mk_stream_parser_tag_at(mk_stream_parser *parser, int32_t index, const char **key, const char **native_key, const char **value);
/** The pictures of the ID3v2 tags, as mk_demuxer_attachment_count / _at (borrowed until the next push / finish / close). */
mk_status mk_stream_parser_attachment_count(mk_stream_parser *parser, int32_t *count);
/** Attachment `index`, as mk_demuxer_attachment_at. Errors: MK_EINVAL. */
mk_status mk_stream_parser_attachment_at(mk_stream_parser *parser, int32_t index, const uint8_t **data, int64_t *size, const char **mime,
                                         int32_t *picture_type, const char **description, const char **file_name);
/** The chapters of the ID3v2 tags (CHAP), as mk_demuxer_chapter_count / _at. */
mk_status mk_stream_parser_chapter_count(mk_stream_parser *parser, int32_t *count);
/** Chapter `index`, as mk_demuxer_chapter_at (title borrowed until the next push / finish / close). Errors: MK_EINVAL. */
mk_status mk_stream_parser_chapter_at(mk_stream_parser *parser, int32_t index, int64_t *start, int64_t *end,
                                      int64_t *time_base_num, int64_t *time_base_den, const char **title);

/** Closes *parser and sets it to NULL; NULL is harmless. */
void mk_stream_parser_close(mk_stream_parser **parser);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_STREAM_PARSER_H */
