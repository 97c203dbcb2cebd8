/*
 * MediaKitPluginABI — the plugin ABI header (Include/mediakit/mediakit_plugin.h, with
 * mediakit_types.h) as a SwiftPM module, for plugins written in Swift or built by SwiftPM.
 * It declares types and constants only: nothing to link. Ownership and threading rules are
 * those of mediakit_plugin.h; docs/writing-a-plugin.md walks through writing a plugin.
 */
#include "../../../Include/mediakit/mediakit_plugin.h"
