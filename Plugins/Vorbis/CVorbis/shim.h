#include <vorbis/codec.h>
