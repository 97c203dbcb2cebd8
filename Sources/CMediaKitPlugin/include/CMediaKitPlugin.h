/* Exposes the plugin ABI (Include/mediakit/mediakit_plugin.h) to the Swift core. */
#include "../../../Include/mediakit/mediakit_plugin.h"
#include "mk_host_support.h"
