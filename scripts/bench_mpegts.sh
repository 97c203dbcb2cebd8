#!/usr/bin/env bash
# MPEG-TS benchmark (issue 30): reading every packet of a ~1 GB 1080p H.264 + AAC transport
# stream (`mk-probe --count`) against `ffmpeg -i IN -map 0 -c copy -f null -`, TS -> MP4
# remux (`mk-remux IN OUT.mp4`) against `ffmpeg -i IN -map 0 -c copy OUT.mp4`, and the writing
# side from a 240 s MP4 of the same content: MP4 -> TS (`mk-remux MP4 OUT.ts` against `ffmpeg
# -c copy OUT.ts`) and HLS segmenting (`mk-remux MP4 DIR --hls 4` against `ffmpeg -f hls
# -hls_time 4 -hls_playlist_type vod`), in the same run. Outputs are new files (each run's
# output is deleted before it, outside the timing), as a user writes them.
#
# The input: 60 s of 1080p30 H.264 (libx264 ultrafast, 8 Mb/s, a key frame every 2 s) and
# stereo AAC, written by ffmpeg's mpegts muxer, then looped 16 times with `-c copy` into one
# ~1 GB file (the timestamps run on, as in a long capture). Each command runs BENCH_RUNS times
# (default 3, the tools alternating), after sync, wall time and peak RSS from GNU time; the
# medians are reported. mk-probe's packet count must equal ffprobe's, and the remuxed MP4's,
# TS's and HLS playlist's frames (ffmpeg framemd5: stream, size, payload MD5, per stream)
# ffmpeg's own remux's. Peak
# memory is also measured on the 60 s file, to show whether it grows with the input's length.
# Results go to BENCHMARKS.md between the bench_mpegts.sh markers.
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_mpegts.sh)
# Environment: MK_BIN, BENCH_RUNS, BENCH_WORK, BENCHMARKS_MD as scripts/bench.sh.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
PROBE="$MK_BIN/mk-probe" REMUX="$MK_BIN/mk-remux"
[ -x "$PROBE" ] && [ -x "$REMUX" ] || die "mk-probe / mk-remux not found in $MK_BIN; run 'make build' first"
MK=$MK_BIN
MK_SHOWN=${MK_BIN#"$REPO"/}

mkdir -p "$WORK"
SMALL="$WORK/h264_1920x1080_60s_30fps_aac48k_stereo.ts"
GEN_CMD=(ffmpeg -v error -nostdin -y
    -f lavfi -i "testsrc2=size=1920x1080:rate=30"
    -f lavfi -i "sine=frequency=440:sample_rate=48000"
    -map 0:v -map 1:a -t 60 -ac 2
    -c:v libx264 -preset ultrafast -b:v 8M -maxrate 8M -bufsize 16M -g 60 -pix_fmt yuv420p
    -c:a aac -b:a 128k -map_metadata -1 -f mpegts)
make_input "$SMALL" "${GEN_CMD[@]}"
IN="$WORK/h264_1920x1080_16min_looped.ts"
make_input "$IN" ffmpeg -v error -nostdin -y -stream_loop 15 -i "$SMALL" -map 0 -c copy -f mpegts
MP4IN="$WORK/h264_1920x1080_240s_looped.mp4"
make_input "$MP4IN" ffmpeg -v error -nostdin -y -stream_loop 3 -i "$SMALL" -map 0 -c copy -f mp4
cat "$SMALL" "$IN" "$MP4IN" >/dev/null

OUT="$WORK/mpegts"
FF_READ=(ffmpeg -v error -nostdin -i "$IN" -map 0 -c copy -f null -)
MK_READ=("$PROBE" --count "$IN")
FF_REMUX=(ffmpeg -v error -nostdin -y -i "$IN" -map 0 -c copy "$OUT.ffmpeg.mp4")
MK_REMUX=("$REMUX" --quiet "$IN" "$OUT.mk.mp4")
MK_READ_SMALL=("$PROBE" --count "$SMALL")
MK_REMUX_SMALL=("$REMUX" --quiet "$SMALL" "$OUT.mk-60s.mp4")
FF_TS=(ffmpeg -v error -nostdin -y -i "$MP4IN" -map 0 -c copy "$OUT.ffmpeg.ts")
MK_TS=("$REMUX" --quiet "$MP4IN" "$OUT.mk.ts")
FF_HLS=(ffmpeg -v error -nostdin -y -i "$MP4IN" -map 0 -c copy -f hls -hls_time 4 -hls_playlist_type vod "$OUT.ffmpeg-hls/index.m3u8")
MK_HLS=("$REMUX" --quiet "$MP4IN" "$OUT.mk-hls" --hls 4)
KEYS=(ff_read mk_read ff_remux mk_remux mk_read_small mk_remux_small ff_ts mk_ts ff_hls mk_hls)

# measure_dir KEY DIR CMD...: measure with DIR emptied (made anew) first.
measure_dir() {
    local key=$1 dir=$2
    shift 2
    rm -rf "$dir" && mkdir -p "$dir"
    measure "$key" "" "$@"
}

for k in "${KEYS[@]}"; do rm -f "$WORK/$k.times"; done
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    measure ff_read "" "${FF_READ[@]}"
    measure mk_read "" "${MK_READ[@]}"
    measure ff_remux "$OUT.ffmpeg.mp4" "${FF_REMUX[@]}"
    measure mk_remux "$OUT.mk.mp4" "${MK_REMUX[@]}"
    measure mk_read_small "" "${MK_READ_SMALL[@]}"
    measure mk_remux_small "$OUT.mk-60s.mp4" "${MK_REMUX_SMALL[@]}"
    measure ff_ts "$OUT.ffmpeg.ts" "${FF_TS[@]}"
    measure mk_ts "$OUT.mk.ts" "${MK_TS[@]}"
    measure_dir ff_hls "$OUT.ffmpeg-hls" "${FF_HLS[@]}"
    measure_dir mk_hls "$OUT.mk-hls" "${MK_HLS[@]}"
done

status=0
packets=$(ffprobe -v error -count_packets -show_entries stream=index,nb_read_packets -of csv=p=0 "$IN" | sort -u | awk -F, '{n += $2} END {print n}')  # a TS lists its streams twice (in the program too)
if grep -q "\b$packets\b" "$WORK/mk_read.log"; then READ_CHECK="$packets packets = ffprobe's"; else READ_CHECK="packet count DIFFERS from ffprobe's $packets"; status=1; fi
frames() { ffmpeg -v error -i "$1" -map 0 -c copy -f framemd5 - | grep -v '^#' | awk -F, '{print $1 $5 $6}' | sort -s -k1,1n; }
if [ "$(frames "$OUT.mk.mp4")" = "$(frames "$OUT.ffmpeg.mp4")" ]; then REMUX_CHECK="framemd5 payloads = ffmpeg's remux's (per stream)"; else REMUX_CHECK="framemd5 DIFFERS from ffmpeg's remux"; status=1; fi
if [ "$(frames "$OUT.mk.ts")" = "$(frames "$OUT.ffmpeg.ts")" ]; then TS_CHECK="framemd5 payloads = ffmpeg's (per stream)"; else TS_CHECK="framemd5 DIFFERS from ffmpeg's"; status=1; fi
if [ "$(frames "$OUT.mk-hls/index.m3u8")" = "$(frames "$OUT.ffmpeg-hls/index.m3u8")" ]; then HLS_CHECK="playlist read whole: framemd5 payloads = ffmpeg's (per stream)"; else HLS_CHECK="framemd5 of the playlist DIFFERS from ffmpeg's"; status=1; fi
rm -rf "$OUT".*.mp4 "$OUT".*.ts "$OUT".*-hls

declare -A WALL RSS
for k in "${KEYS[@]}"; do WALL[$k]=$(median "$WORK/$k.times" 1); RSS[$k]=$(median "$WORK/$k.times" 2); done
row() {  # row LABEL KEY REFERENCE_KEY CHECK TARGET
    echo "| $1 | ${WALL[$2]} | $(mib "${RSS[$2]}") | $(ratio "${WALL[$2]}" "${WALL[$3]}") | $4 | $5 |"
}
met() { awk -v w="$1" -v f="$2" -v x="$3" 'BEGIN { print (w <= x * f ? "met" : "missed") }'; }
TABLE=$(
    echo "| command | wall s | peak MiB | wall vs ffmpeg | output | target |"
    echo "|---|---:|---:|---:|---|---|"
    row "ffmpeg -c copy -f null (read)" ff_read ff_read "reference" ""
    row "mk-probe --count (read)" mk_read ff_read "$READ_CHECK" "<= 0.5x: $(met "${WALL[mk_read]}" "${WALL[ff_read]}" 0.5)"
    row "ffmpeg -c copy out.mp4 (remux)" ff_remux ff_remux "reference" ""
    row "mk-remux out.mp4 (remux)" mk_remux ff_remux "$REMUX_CHECK" "<= 0.5x: $(met "${WALL[mk_remux]}" "${WALL[ff_remux]}" 0.5)"
    row "mk-probe --count, 60 s input" mk_read_small mk_read "memory vs the 16x input" ""
    row "mk-remux, 60 s input" mk_remux_small mk_remux "memory vs the 16x input" ""
    row "ffmpeg -c copy out.ts (MP4 -> TS)" ff_ts ff_ts "reference" ""
    row "mk-remux out.ts (MP4 -> TS)" mk_ts ff_ts "$TS_CHECK" ""
    row "ffmpeg -f hls -hls_time 4 (HLS)" ff_hls ff_hls "reference" ""
    row "mk-remux DIR --hls 4 (HLS)" mk_hls ff_hls "$HLS_CHECK" "<= 0.5x: $(met "${WALL[mk_hls]}" "${WALL[ff_hls]}" 0.5)"
)
echo; echo "$TABLE"; echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_mpegts.sh:begin -->"
    echo "## MPEG-TS: reading packets and remuxing to MP4 vs ffmpeg"
    echo
    echo "Written by \`scripts/bench_mpegts.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo
    echo "- Machine: $(nproc) cores, $CPU; shared with other jobs, so single figures are noisy"
    echo "- $(ffmpeg -version | head -n 1); MediaKit $REV (release build)"
    echo "- Input: \`$IN\` ($(du -h "$IN" | cut -f1)): \`$SMALL\` ($(du -h "$SMALL" | cut -f1)) looped 16 times with \`-c copy\`;"
    echo "  for MP4 -> TS and HLS, \`$MP4IN\` ($(du -h "$MP4IN" | cut -f1)): the same looped 4 times into MP4"
    echo "- Method: each command $RUNS times, alternating, after \`sync\`, its output deleted first (a new file, as a user writes one); wall time and peak memory from \`/usr/bin/time -f '%e %M'\`; medians."
    echo "  Targets (issue 30): reading, remuxing and HLS segmenting at most 0.5x ffmpeg's wall time. The 60 s rows' ratio column is vs the 16x row of the same tool."
    echo
    echo '```sh'
    for c in FF_READ MK_READ FF_REMUX MK_REMUX FF_TS MK_TS FF_HLS MK_HLS; do declare -n a=$c; shown "${a[@]}"; done
    echo '```'
    echo
    echo "$TABLE"
    echo "<!-- bench_mpegts.sh:end -->"
} >"$SECTION"
write_section "$MD" bench_mpegts.sh "$SECTION"
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "a check failed (see the table)"
