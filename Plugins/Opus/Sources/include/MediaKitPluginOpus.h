/* The Opus plugin exports only mediakit_plugin_entry (see mediakit/mediakit_plugin.h). */
#include "../../../../Include/mediakit/mediakit_plugin.h"
