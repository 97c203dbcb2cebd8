/* Exposes the plugin ABI (the MediaKitPluginABI module: Include/mediakit/mediakit_plugin.h)
 * to the Swift core, with the host's own C helpers. */
#include <MediaKitPluginABI.h>
#include "mk_host_support.h"
