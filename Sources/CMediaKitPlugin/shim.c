/* Host-side C helpers; the module also exposes the plugin ABI header. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include "CMediaKitPlugin.h"
#include "mk_host_support.h"

int mkhost_image_path(const void *address, char *buf, size_t size) {
    Dl_info info;
    if (!buf || size == 0 || dladdr(address, &info) == 0 || !info.dli_fname) return -1;
    size_t n = strlen(info.dli_fname);
    if (n >= size) return -1;
    memcpy(buf, info.dli_fname, n + 1);
    return 0;
}
