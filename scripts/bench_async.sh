#!/usr/bin/env bash
# Asynchronous decoding: `mk-decode --async` (the video decoded by an AsyncDecodeSession on a
# thread of its own, frames handed to the writer by the main thread) against the synchronous
# `mk-decode`, both writing the 1080p30 H.264 bench input (bench.sh's) as raw NV12, in the
# same run, alternating, to the same place (tmpfs when it has room).
#
# Target (issue 14): the async wall time at most 1.0x the synchronous one, the same bytes, and
# peak memory flat: the async run's peak RSS on the whole input within 10% of its peak on the
# first third of it (frames are decoded ahead by a bounded number, not queued without end), and
# flat over an hour: the input looped to BENCH_ASYNC_LONG_MINUTES (default 60; 0 skips it) by a
# stream copy, decoded once with --async to /dev/null, its peak RSS within 10% of the first third's.
#
# Usage: make bench   (or: MK_BIN=DIR scripts/bench_async.sh)
# Environment: MK_BIN, BENCH_RUNS (default 3), BENCH_WORK, BENCHMARKS_MD, BENCH_SECONDS,
# BENCH_SIZE (see bench.sh).
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
DURATION=${BENCH_SECONDS:-60}
LONG_MINUTES=${BENCH_ASYNC_LONG_MINUTES:-60}
SIZE=${BENCH_SIZE:-1920x1080}

MK="$MK_BIN/mk-decode"
[ -x "$MK" ] || die "mk-decode not found in $MK_BIN; run 'make build' first"
MK_SHOWN=${MK#"$REPO"/}

h264_bench_input "$SIZE" "$DURATION"
# The first third of the input (stream copy), for the flat-memory check.
THIRD="$WORK/$(basename "$IN" .mp4)_first_third.mp4"
[ -s "$THIRD" ] || ffmpeg -v error -nostdin -y -i "$IN" -map 0:v -c copy -t $((DURATION / 3)) "$THIRD"
cat "$IN" "$THIRD" >/dev/null

if [ -n "${BENCH_OUT:-}" ]; then
    OUT=$BENCH_OUT
elif [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((7 * 1024 * 1024)) ]; then
    OUT=/dev/shm/mediakit-bench-async
else
    OUT=$WORK
fi
mkdir -p "$OUT"
SYNC=("$MK" "$IN" --video-out "$OUT/video.out" -q)
ASYNC=("$MK" "$IN" --video-out "$OUT/video.out" -q --async)
ASYNC_THIRD=("$MK" "$THIRD" --video-out "$OUT/video.out" -q --async)

rm -f "$WORK"/mk_sync.times "$WORK"/mk_async.times "$WORK"/mk_async_third.times
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    if (( run % 2 )); then
        measure mk_sync "$OUT/video.out" "${SYNC[@]}"
        measure mk_async "$OUT/video.out" "${ASYNC[@]}"
    else
        measure mk_async "$OUT/video.out" "${ASYNC[@]}"
        measure mk_sync "$OUT/video.out" "${SYNC[@]}"
    fi
    measure mk_async_third "$OUT/video.out" "${ASYNC_THIRD[@]}"
done
rm -f "$OUT/video.out"

note "checking the outputs (untimed)"
"$MK" "$IN" --video-out "$OUT/sync.nv12" -q && "$MK" "$IN" --video-out "$OUT/async.nv12" -q --async || die "an output run failed"
status=0
if cmp -s "$OUT/sync.nv12" "$OUT/async.nv12"; then
    CHECK="identical to the synchronous output (cmp, $(stat -c %s "$OUT/async.nv12") bytes; bench.sh checks that one against ffmpeg)"
else
    CHECK="DIFFERS from the synchronous output ($(cmp "$OUT/sync.nv12" "$OUT/async.nv12" 2>&1 | head -n 1))"
    status=1
fi
rm -f "$OUT/sync.nv12" "$OUT/async.nv12"

# The hour-long input: the video of IN looped (ffmpeg's -stream_loop keeps the timestamps rising).
LONG_ROW=""
if (( LONG_MINUTES > 0 )); then
    LOOPS=$(( (LONG_MINUTES * 60 + DURATION - 1) / DURATION ))
    LONG="$WORK/$(basename "$IN" .mp4)_video_x${LOOPS}.mp4"
    make_input "$LONG" ffmpeg -v error -nostdin -y -stream_loop $((LOOPS - 1)) -i "$IN" -map 0:v -c copy -f mp4
    LONG_SECONDS=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$LONG")
    LONG_FRAMES=$(ffprobe -v error -select_streams v:0 -show_entries stream=nb_frames -of csv=p=0 "$LONG")
    ASYNC_LONG=("$MK" "$LONG" --video-out /dev/null --async)
    note "decoding the ${LONG_SECONDS} s input once (untimed against anything; peak memory)"
    rm -f "$WORK/mk_async_long.times"
    measure mk_async_long "" "${ASYNC_LONG[@]}"   # "": measure must not remove /dev/null
    LONG_WALL=$(median "$WORK/mk_async_long.times" 1)
    LONG_RSS=$(median "$WORK/mk_async_long.times" 2)
    FRAMES_OUT=$(grep -o '^video: [0-9]* frames' "$WORK/mk_async_long.log" | grep -o '[0-9]*' || echo "?")
    [ "$FRAMES_OUT" = "$LONG_FRAMES" ] || { echo "bench_async: the looped input gave $FRAMES_OUT frames, ffprobe counts $LONG_FRAMES" >&2; status=1; }
fi

declare -A WALL RSS
for key in mk_sync mk_async mk_async_third; do
    WALL[$key]=$(median "$WORK/$key.times" 1)
    RSS[$key]=$(median "$WORK/$key.times" 2)
done
SPEED=$(awk -v a="${WALL[mk_async]}" -v s="${WALL[mk_sync]}" 'BEGIN { print (a <= 1.0 * s) ? "met" : "missed" }')
if (( LONG_MINUTES > 0 )); then
    FLAT_LONG=$(awk -v a="$LONG_RSS" -v t="${RSS[mk_async_third]}" 'BEGIN { print (a <= 1.10 * t) ? "met" : "missed" }')
    LONG_ROW="| the video looped ${LOOPS} times (${LONG_SECONDS%.*} s) | mk-decode --async to /dev/null (1 run) | ${LONG_WALL} | $(mib "$LONG_RSS") | ${FRAMES_OUT} (ffprobe: ${LONG_FRAMES}) | peak within 10% of the first $((DURATION / 3)) s (${WALL[mk_async_third]:+$(mib "${RSS[mk_async_third]}") MiB}): $FLAT_LONG |"
fi
FLAT=$(awk -v a="${RSS[mk_async]}" -v t="${RSS[mk_async_third]}" 'BEGIN { print (a <= 1.10 * t) ? "met" : "missed" }')

TABLE_HEAD="| case | command | wall s | peak MiB | wall vs sync | output | target |"
TABLE_RULE="|---|---|---:|---:|---:|---|---|"
ROWS=(
    "| H.264 $SIZE -> NV12, ${DURATION} s | mk-decode | ${WALL[mk_sync]} | $(mib "${RSS[mk_sync]}") | 1.00x | reference | |"
    "| H.264 $SIZE -> NV12, ${DURATION} s | mk-decode --async | ${WALL[mk_async]} | $(mib "${RSS[mk_async]}") | $(ratio "${WALL[mk_async]}" "${WALL[mk_sync]}") | $CHECK | wall <= 1.0x: $SPEED |"
    "| the first $((DURATION / 3)) s of it | mk-decode --async | ${WALL[mk_async_third]} | $(mib "${RSS[mk_async_third]}") | | | peak of the whole within 10% of this: $FLAT |"
)

echo
echo "$TABLE_HEAD"
echo "$TABLE_RULE"
printf '%s\n' "${ROWS[@]}"
echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_async.sh:decode:begin -->"
    echo "## Asynchronous decode: mk-decode --async vs mk-decode"
    echo
    echo "Written by \`scripts/bench_async.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo
    echo "- Machine: $(nproc) cores, $CPU; MediaKit $REV (release build); load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- Input: bench.sh's \`$IN\` (video only is decoded) and its first $((DURATION / 3)) s (\`-c copy -t\`)"
    echo "- Method: each command $RUNS times, alternating, under GNU time (wall seconds, peak RSS), median shown."
    echo "  \`--async\`: an AsyncDecodeSession decodes on its own thread, at most 8 frames ahead of the main"
    echo "  thread, which hands them to the picture writer. Targets (issue 14): wall <= 1.0x the"
    echo "  synchronous mk-decode; peak memory flat (the whole input's peak within 10% of the first third's)."
    echo
    echo '```sh'
    shown "${SYNC[@]}"
    shown "${ASYNC[@]}"
    echo '```'
    echo
    echo "$TABLE_HEAD"
    echo "$TABLE_RULE"
    printf '%s\n' "${ROWS[@]}"
    echo "<!-- bench_async.sh:decode:end -->"
} >"$SECTION"
write_section "$MD" bench_async.sh:decode "$SECTION"
if [ -n "$LONG_ROW" ]; then
    {
        echo "<!-- bench_async.sh:long:begin -->"
        echo "### Peak memory over an hour of 1080p (bench_async.sh, $(date -u '+%Y-%m-%d %H:%M UTC'))"
        echo
        echo "MediaKit $REV; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). The input: the video of \\`$IN\\`"
        echo "looped by a stream copy (\\`ffmpeg -stream_loop $((LOOPS - 1)) -c copy\\`), decoded once; GNU time's peak RSS. A"
        echo "quick re-run of the section above (\\`BENCH_ASYNC_LONG_MINUTES=0\\`) leaves this one as it is."
        echo
        echo '```sh'
        shown "${ASYNC_LONG[@]}"
        echo '```'
        echo
        echo "| case | command | wall s | peak MiB | frames | target |"
        echo "|---|---|---:|---:|---|---|"
        echo "$LONG_ROW"
        echo "<!-- bench_async.sh:long:end -->"
    } >"$SECTION"
    write_section "$MD" bench_async.sh:long "$SECTION"
fi
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "the async output differs from the synchronous one"
