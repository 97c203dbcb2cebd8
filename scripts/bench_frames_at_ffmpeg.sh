#!/bin/sh
# The baseline of scripts/bench_frames_at.py for a 900-frame input: the same 10 uniformly spaced
# frames (i * 900 // 10) as rgb24, selected by ffmpeg (which decodes every frame to select them).
#     sh scripts/bench_frames_at_ffmpeg.sh IN > /dev/null
exec ffmpeg -v error -i "$1" -vf "select=eq(n\,0)+eq(n\,90)+eq(n\,180)+eq(n\,270)+eq(n\,360)+eq(n\,450)+eq(n\,540)+eq(n\,630)+eq(n\,720)+eq(n\,810)" -fps_mode passthrough -pix_fmt rgb24 -f rawvideo -
