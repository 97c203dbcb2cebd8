/* Exposes the public C API's types (Include/mediakit/mediakit.h) to the Swift
 * implementation in Sources/MediaKitC, plus the internal error setter. */
#include "../../../Include/mediakit/mediakit.h"

/** Internal: records the calling thread's last error message (copied). Not exported. */
void mkc_set_last_error(const char *message);
