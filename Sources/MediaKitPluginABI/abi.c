/* The MediaKitPluginABI module is header-only; SwiftPM builds a C target from at least one
 * source file. This one checks that the header compiles as C on its own. */
#include "MediaKitPluginABI.h"
