/* mk_last_error(): a thread-local copy of the last failure's message. */
#include <string.h>
#include "CMediaKit.h"

static _Thread_local char last_error[2048];

void mkc_set_last_error(const char *message) {
    if (!message) message = "";
    size_t n = strlen(message);
    if (n >= sizeof last_error) n = sizeof last_error - 1;
    memcpy(last_error, message, n);
    last_error[n] = 0;
}

const char *mk_last_error(void) { return last_error; }
