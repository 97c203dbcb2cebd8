/* MediaKit's public C API (Include/mediakit/mediakit.h) as a Swift module for the C API fuzz target. */
#include "../../../../../Include/mediakit/mediakit.h"
