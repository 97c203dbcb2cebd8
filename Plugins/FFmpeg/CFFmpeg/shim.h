#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
