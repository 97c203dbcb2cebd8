#include <vorbis/vorbisenc.h>
