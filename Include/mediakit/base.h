/*
 * mediakit/base.h - part of the C API of MediaKit (libmediakit): the library's version, ABI version, last error, status names and the progress callback.
 *
 * Include <mediakit/mediakit.h> for the whole API; this header compiles on its own and
 * includes what it needs. The conventions (statuses, ownership, threads) are in mediakit.h.
 */
#ifndef MEDIAKIT_BASE_H
#define MEDIAKIT_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "mediakit_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes (mk_status, MK_OK and the negative MK_E* codes), media types
 * (MK_MEDIA_*), pixel formats (MK_PIXEL_*) and sample formats (MK_SAMPLES_*) are
 * in mediakit_types.h, shared with the plugin ABI. */

/** Marks a name kept for one release after its rename (still exported, the same ABI): using
 *  it warns, naming its replacement. Define MK_NO_DEPRECATION_WARNINGS to silence it. */
#if !defined(MK_NO_DEPRECATION_WARNINGS) && (defined(__GNUC__) || defined(__clang__))
#define MK_DEPRECATED(replacement) __attribute__((deprecated("renamed " replacement)))
#else
#define MK_DEPRECATED(replacement)
#endif

/** The ABI version of this header; mk_abi_version() returns the library's. */
#define MK_ABI_VERSION 1

/** The library version, e.g. "0.2.0". Static string; never NULL. Thread-safe. */
const char *mk_version(void);

/** The library's ABI version; equal to MK_ABI_VERSION for a matching header. Thread-safe. */
int32_t mk_abi_version(void);

/** Sets the process's thread budget for codec backends: each decoder made afterwards uses at most
 *  `threads` threads (one asked for 0, "every core", gets `threads`), so that the workers of a
 *  data loader do not each take every core. 0 removes the budget. Without a call, the
 *  environment variable MEDIAKIT_THREADS (a positive integer) sets it at first use. Picture
 *  conversions run on the caller's threads. Errors: MK_EINVAL (a negative count).
 *  Thread-safe. */
mk_status mk_set_thread_limit(int32_t threads);

/** The thread budget in force (0: none). Thread-safe. */
int32_t mk_thread_limit(void);

/** A message for the last failed call on the calling thread ("" if none).
 *  Owned by the library; valid until the next failing call on this thread. Never NULL. */
const char *mk_last_error(void);

/** A short name for a status ("MK_EINVAL", ...). Static string; never NULL. */
const char *mk_status_name(mk_status status);

/** Progress of a long call (mk_decode_file, mk_remux, mk_transcode), called on the calling
 *  thread now and then: `fraction` done in [0, 1]; `done` and `total` in the call's unit
 *  (mk_decode_file: milliseconds of media; mk_remux: packets, `total` -1 and `fraction` 0 when
 *  the input does not say how many it holds (MPEG-TS, Matroska, raw streams); mk_transcode:
 *  -1, unknown);
 *  `user` is the settings' progress_user. Return 0 to go on, non-zero to cancel: the call then
 *  stops, removes what it wrote (nothing is left under the target names) and returns
 *  MK_ECANCELLED. */
typedef int32_t (*mk_progress_callback)(void *user, double fraction, int64_t done, int64_t total);

#ifdef __cplusplus
}
#endif
#endif /* MEDIAKIT_BASE_H */
