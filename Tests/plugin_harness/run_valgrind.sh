#!/usr/bin/env bash
# Builds the dav1d, Opus, Vorbis and FFmpeg plugins and the guide's MKDEMO demuxer (mkdemo.c)
# from source with gcc (-Wall -Wextra -Werror, C11), builds plugin_harness.c,
# demuxer_harness.c and muxer_harness.c, and runs each plugin under valgrind on real streams
# (packets extracted with make_packets.py); the demuxer factories (FFmpeg's libavformat, MKDEMO)
# on breadth-corpus files only libavformat reads and on a file of make_mkdemo.py; the muxer
# factory writing what the plugin reads from a breadth AVI as AVI and NUT. Fails on any warning, valgrind error or
# definite/indirect leak (valgrind.supp: the leaks of libavcodec's own dependencies at
# dlopen, which a bare dlopen of libavcodec shows too). Not part of `make test`
# (valgrind makes dav1d slow).
#
# Usage: Tests/plugin_harness/run_valgrind.sh [WORKDIR]   (default: a temporary folder)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
MEDIA=../shared/media
W=${1:-$(mktemp -d)}
mkdir -p "$W"
CFLAGS=(-std=c11 -Wall -Wextra -Werror -O1 -g -fPIC -IInclude)
for p in Dav1d:dav1d Opus:opus "Vorbis:vorbis vorbisenc" "FFmpeg:libavcodec libavformat libavutil libswscale"; do
    name=${p%%:*} lib=${p##*:}
    # shellcheck disable=SC2086  # several pkg-config names
    gcc "${CFLAGS[@]}" -shared -o "$W/libMediaKitPlugin$name.so" Plugins/"$name"/Sources/*.c $(pkg-config --libs $lib)
done
gcc "${CFLAGS[@]}" -shared -fvisibility=hidden -o "$W/libmkdemo.so" Tests/plugin_harness/mkdemo.c
gcc -std=c11 -Wall -Wextra -Werror -g -O1 -IInclude Tests/plugin_harness/plugin_harness.c -ldl -lpthread -o "$W/harness"
gcc -std=c11 -Wall -Wextra -Werror -g -O1 -IInclude Tests/plugin_harness/muxer_harness.c -ldl -lpthread -o "$W/muxer_harness"
gcc -std=c11 -Wall -Wextra -Werror -g -O1 -IInclude Tests/plugin_harness/demuxer_harness.c -ldl -lpthread -o "$W/demuxer_harness"
python3 Tests/plugin_harness/make_mkdemo.py "$W/demo.mkdemo" "$W/demo.pcm"
# Matroska with an attached file and an attached picture (plugin ABI 2.5: tags, attachment bytes).
ffmpeg -v error -nostdin -y -i "$MEDIA/breadth/mpc_Borewit_539382_apev2.sv7.mpc" -map 0:v -c copy -f image2 "$W/cover.jpg"
ffmpeg -v error -nostdin -y -f lavfi -i "sine=d=1" -c:a libopus -attach "$MEDIA/breadth/vtt_shaka-proj_034a2c_chapters.vtt" \
    -metadata:s:t:0 mimetype=text/vtt -attach "$W/cover.jpg" -metadata:s:t:1 mimetype=image/jpeg "$W/attachments.mka"

ffmpeg -v error -nostdin -y -f lavfi -i "sine=frequency=440:sample_rate=44100" -t 2 -ac 2 \
    -c:a libvorbis -strict experimental "$W/vorbis.mp4"
ffmpeg -v error -nostdin -y -f lavfi -i "sine=frequency=440:sample_rate=48000" -t 2 -ac 6 \
    -c:a libopus "$W/opus51.mp4"
ffmpeg -v error -nostdin -y -f lavfi -i "testsrc=size=96x64:rate=25" -t 1 -c:v libx264 -bf 2 \
    -pix_fmt yuv420p "$W/h264.mp4"
mk() { python3 Tests/plugin_harness/make_packets.py "$1" "$2" "$W/$3.pk"; }
mk "$MEDIA/mp4_av1_aac_1080x720_progressive_audio_empty_edit.mp4" v av1_8bit
mk "$MEDIA/mp4_av1_av1c_1s_tiny.mp4" v av1_10bit
mk "$MEDIA/mp4_opus_progressive_elst_preskip_1p5s.mp4" a opus
mk "$W/opus51.mp4" a opus51
mk "$W/vorbis.mp4" a vorbis
mk "$W/h264.mp4" v h264

status=0
run() {  # run PLUGIN CODEC TYPE PACKETS
    echo "== $1 $4"
    local env=()
    [ "$1" = Dav1d ] && env=(HARNESS_DAV1D_C_ONLY=1)
    if ! env "${env[@]}" valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
            --suppressions=Tests/plugin_harness/valgrind.supp \
            --errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
            "$W/harness" "$W/libMediaKitPlugin$1.so" "$2" "$3" "$W/$4.pk"; then
        status=1
    fi
}
run Dav1d av1 video av1_8bit
run Dav1d av1 video av1_10bit
run Opus opus audio opus
run Opus opus audio opus51
run Vorbis vorbis audio vorbis
run FFmpeg h264 video h264
run FFmpeg vorbis audio vorbis
# The muxer factory (plugin ABI 2.5): the breadth AVI read by the plugin's demuxer, written as AVI and NUT.
for fmt in avi nut; do
    echo "== FFmpeg muxer $fmt"
    if ! valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
            --suppressions=Tests/plugin_harness/valgrind.supp \
            --errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
            "$W/muxer_harness" "$W/libMediaKitPluginFFmpeg.so" "$MEDIA/breadth/avi_meta-pytor_133ba9_testsrc2_mpeg4.avi" \
            "$fmt" "$W/mux_$fmt"; then
        status=1
    fi
done
demux() {  # demux PLUGIN.so FILE
    echo "== demuxer $(basename "$1") $(basename "$2")"
    if ! valgrind -q --leak-check=full --show-leak-kinds=definite,indirect \
            --suppressions=Tests/plugin_harness/valgrind.supp \
            --errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
            "$W/demuxer_harness" "$1" "$2"; then
        status=1
    fi
}
for f in avi_meta-pytor_133ba9_testsrc2_mpeg4.avi mpc_Borewit_539382_apev2.sv7.mpc vtt_shaka-proj_034a2c_chapters.vtt; do
    demux "$W/libMediaKitPluginFFmpeg.so" "$MEDIA/breadth/$f"
done
demux "$W/libMediaKitPluginFFmpeg.so" "$W/attachments.mka"
demux "$W/libmkdemo.so" "$W/demo.mkdemo"
[ "$status" -eq 0 ] && echo "valgrind: all clean" || echo "valgrind: FAILURES above"
exit "$status"
