/* Small host-side helpers the Swift core needs from C (not part of any ABI). */
#ifndef MK_HOST_SUPPORT_H
#define MK_HOST_SUPPORT_H
#include <stddef.h>
/** Writes the path of the loaded image (executable or shared library) that
 *  contains `address` into buf. Returns 0 on success, -1 if unknown. */
int mkhost_image_path(const void *address, char *buf, size_t size);
#endif
