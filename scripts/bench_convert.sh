#!/usr/bin/env bash
# Conversion benchmark: decoding pictures that are not 8-bit 4:2:0 to NV12, where the
# pixel format must be converted (mk-decode: the FFmpeg plugin's libswscale converter, on
# the picture-writer thread; ffmpeg: its auto-inserted scale filter), against the ffmpeg
# command a user would otherwise run, in the same run, on the same input:
#
#   1080p30 HEVC Main 10 (yuv420p10le, 20 s) -> NV12
#
# Each command runs BENCH_RUNS times (default 3, alternating) under GNU time; the median
# is reported, and the outputs are compared with cmp in an untimed pass. The input is
# generated once and kept in bench-work/ (git-ignored). Results go to the terminal and to
# BENCHMARKS.md (between the bench_convert markers).
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_convert.sh)
# Environment: MK_BIN, BENCH_RUNS, BENCH_WORK, BENCHMARKS_MD as for scripts/bench.sh.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
MK="$MK_BIN/mk-decode"
[ -x "$MK" ] || die "mk-decode not found in $MK_BIN; run 'make build' first"
MK_SHOWN=${MK#"$REPO"/}

mkdir -p "$WORK"
IN="$WORK/hevc10_1920x1080_20s_30fps.mp4"
GEN_CMD=(ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=1920x1080:rate=30" -t 20
    -c:v libx265 -preset ultrafast -x265-params log-level=error -pix_fmt yuv420p10le
    -fflags +bitexact -flags:v +bitexact -map_metadata -1 -f mp4)
make_input "$IN" "${GEN_CMD[@]}"
cat "$IN" >/dev/null  # same page-cache state for every run

# Outputs on tmpfs when it has room (2 x 1.9 GB), as in bench.sh; the same path for both tools.
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((5 * 1024 * 1024)) ]; then
    OUT=/dev/shm/mediakit-bench
else
    OUT=$WORK
fi
mkdir -p "$OUT"
FF=(ffmpeg -v error -nostdin -y -i "$IN" -map 0:v -f rawvideo -pix_fmt nv12 "$OUT/convert.out")
MKD=("$MK" -q "$IN" --video-out "$OUT/convert.out")

rm -f "$WORK"/convert_*.times
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    if (( run % 2 )); then
        measure convert_ffmpeg "$OUT/convert.out" "${FF[@]}"
        measure convert_mk "$OUT/convert.out" "${MKD[@]}"
    else
        measure convert_mk "$OUT/convert.out" "${MKD[@]}"
        measure convert_ffmpeg "$OUT/convert.out" "${FF[@]}"
    fi
done
rm -f "$OUT/convert.out"

note "checking the outputs (untimed)"
"${FF[@]/%convert.out/convert.ffmpeg.nv12}" || die "ffmpeg failed"
"${MKD[@]/%convert.out/convert.mk.nv12}" || die "mk-decode failed"
status=0
if cmp -s "$OUT/convert.ffmpeg.nv12" "$OUT/convert.mk.nv12"; then
    CHECK="identical to ffmpeg's (cmp, $(stat -c %s "$OUT/convert.mk.nv12") bytes)"
else
    CHECK="DIFFERS from ffmpeg's ($(cmp "$OUT/convert.ffmpeg.nv12" "$OUT/convert.mk.nv12" 2>&1 | head -n 1))"
    status=1
fi
rm -f "$OUT/convert.ffmpeg.nv12" "$OUT/convert.mk.nv12"

FW=$(median "$WORK/convert_ffmpeg.times" 1); FR=$(median "$WORK/convert_ffmpeg.times" 2)
MW=$(median "$WORK/convert_mk.times" 1); MR=$(median "$WORK/convert_mk.times" 2)
HEAD="| case | tool | wall s | peak MiB | wall vs ffmpeg | peak vs ffmpeg | output |"
RULE="|---|---|---:|---:|---:|---:|---|"
ROWS=("| HEVC Main 10 1920x1080 -> NV12 | ffmpeg | $FW | $(mib "$FR") | 1.00x | 1.00x | reference |"
      "| HEVC Main 10 1920x1080 -> NV12 | mk-decode | $MW | $(mib "$MR") | $(ratio "$MW" "$FW") | $(ratio "$MR" "$FR") | $CHECK |")
echo
echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"; echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_convert:begin -->"
    echo "## Pixel format conversion: mk-decode vs ffmpeg (10-bit to NV12)"
    echo
    echo "Written by \`scripts/bench_convert.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo "Machine: $(nproc) cores, $CPU; $(ffmpeg -version | head -n 1); MediaKit $REV (release build)."
    echo "Input: \`$IN\` ($(ffprobe -v error -select_streams v:0 -show_entries stream=nb_frames -of csv=p=0 "$IN") frames), made by"
    echo "\`$(q "${GEN_CMD[@]}" "$IN")\`."
    echo "Method: each command $RUNS times, alternating, under GNU time after \`sync\`, writing the same"
    echo "path in \`$OUT/\`; the median is shown; the outputs are compared in an untimed pass. Both convert"
    echo "with libswscale (ffmpeg: its scale filter; mk-decode: the FFmpeg plugin's picture converter on"
    echo "the writer thread, beside decoding)."
    echo
    echo '```sh'
    shown "${FF[@]}"
    shown "${MKD[@]}"
    echo '```'
    echo
    echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"
    echo "<!-- bench_convert:end -->"
} >"$SECTION"
write_section "$MD" bench_convert "$SECTION"
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "mk-decode's output differs from ffmpeg's (see the table)"
