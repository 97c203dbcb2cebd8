#!/usr/bin/env bash
# WebM benchmark (issue 16): reading every packet of a 1080p 60 s VP9 + Opus WebM
# (`mk-probe --count`) against `ffmpeg -i IN -map 0 -c copy -f null -`, and WebM -> MP4 remux
# (`mk-remux IN OUT.mp4`) against `ffmpeg -i IN -map 0 -c copy OUT.mp4`, in the same run.
#
# Each command runs BENCH_RUNS times (default 7, the tools alternating), after sync, wall time
# and peak RSS from GNU time; the medians are reported. The packet count of mk-probe must equal
# ffprobe's, and the remuxed MP4's frames (ffmpeg framemd5: stream, size, payload MD5) the
# input's. Peak memory is also measured on a 120 s copy (the input looped twice, -c copy) to
# show whether it grows with the file's length. Results go to BENCHMARKS.md between the
# bench_webm.sh markers.
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_webm.sh)
# Environment: MK_BIN, BENCH_RUNS, BENCH_WORK, BENCHMARKS_MD as scripts/bench.sh.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-7}
PROBE="$MK_BIN/mk-probe" REMUX="$MK_BIN/mk-remux"
[ -x "$PROBE" ] && [ -x "$REMUX" ] || die "mk-probe / mk-remux not found in $MK_BIN; run 'make build' first"
MK=$MK_BIN
MK_SHOWN=${MK_BIN#"$REPO"/}

mkdir -p "$WORK"
IN="$WORK/vp9_1920x1080_60s_30fps_opus48k_stereo.webm"
GEN_CMD=(ffmpeg -v error -nostdin -y
    -f lavfi -i "testsrc2=size=1920x1080:rate=30"
    -f lavfi -i "sine=frequency=440:sample_rate=48000"
    -map 0:v -map 1:a -t 60 -ac 2
    -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -row-mt 1 -b:v 4M -g 60
    -c:a libopus -b:a 128k -map_metadata -1 -f webm)
make_input "$IN" "${GEN_CMD[@]}"
IN2="$WORK/vp9_1920x1080_120s_looped.webm"
if [ ! -s "$IN2" ]; then
    ffmpeg -v error -nostdin -y -stream_loop 1 -i "$IN" -map 0 -c copy "$IN2.part.webm" && mv "$IN2.part.webm" "$IN2"
fi
cat "$IN" "$IN2" >/dev/null

OUT="$WORK/webm"
FF_READ=(ffmpeg -v error -nostdin -i "$IN" -map 0 -c copy -f null -)
MK_READ=("$PROBE" --count "$IN")
FF_REMUX=(ffmpeg -v error -nostdin -y -i "$IN" -map 0 -c copy "$OUT.ffmpeg.mp4")
MK_REMUX=("$REMUX" --quiet "$IN" "$OUT.mk.mp4")
FF_READ2=(ffmpeg -v error -nostdin -i "$IN2" -map 0 -c copy -f null -)
MK_READ2=("$PROBE" --count "$IN2")
MK_REMUX2=("$REMUX" --quiet "$IN2" "$OUT.mk-120s.mp4")
KEYS=(ff_read mk_read ff_remux mk_remux ff_read2 mk_read2 mk_remux2)

rm -f "$WORK"/{ff_read,mk_read,ff_remux,mk_remux,ff_read2,mk_read2,mk_remux2}.times
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    measure ff_read "" "${FF_READ[@]}"
    measure mk_read "" "${MK_READ[@]}"
    measure ff_remux "$OUT.ffmpeg.mp4" "${FF_REMUX[@]}"
    measure mk_remux "$OUT.mk.mp4" "${MK_REMUX[@]}"
    measure ff_read2 "" "${FF_READ2[@]}"
    measure mk_read2 "" "${MK_READ2[@]}"
    measure mk_remux2 "$OUT.mk-120s.mp4" "${MK_REMUX2[@]}"
done

status=0
packets=$(ffprobe -v error -count_packets -show_entries stream=nb_read_packets -of csv=p=0 "$IN" | awk '{n += $1} END {print n}')
if grep -q "\b$packets\b" "$WORK/mk_read.log"; then READ_CHECK="$packets packets = ffprobe's"; else READ_CHECK="packet count DIFFERS from ffprobe's $packets"; status=1; fi
# Per stream (stable sort): MP4 Opus times are exact 48 kHz samples, WebM's rounded to the ms,
# so packets of the two streams at (nearly) the same time may interleave the other way round.
frames() { ffmpeg -v error -i "$1" -map 0 -c copy -f framemd5 - | grep -v '^#' | awk -F, '{print $1 $5 $6}' | sort -s -k1,1n; }
if [ "$(frames "$OUT.mk.mp4")" = "$(frames "$IN")" ]; then REMUX_CHECK="framemd5 payloads = input's (per stream)"; else REMUX_CHECK="framemd5 DIFFERS"; status=1; fi
rm -f "$OUT".*.mp4

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
    row "mk-probe --count (read)" mk_read ff_read "$READ_CHECK" "2x faster: $(met "${WALL[mk_read]}" "${WALL[ff_read]}" 0.5)"
    row "ffmpeg -c copy out.mp4 (remux)" ff_remux ff_remux "reference" ""
    row "mk-remux out.mp4 (remux)" mk_remux ff_remux "$REMUX_CHECK" "<= 0.5x: $(met "${WALL[mk_remux]}" "${WALL[ff_remux]}" 0.5)"
    row "ffmpeg read, 120 s input" ff_read2 ff_read "memory growth" ""
    row "mk-probe --count, 120 s input" mk_read2 mk_read "memory growth" ""
    row "mk-remux, 120 s input" mk_remux2 mk_remux "memory growth" ""
)
echo; echo "$TABLE"; echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_webm.sh:begin -->"
    echo "## WebM: reading packets and remuxing to MP4 vs ffmpeg"
    echo
    echo "Written by \`scripts/bench_webm.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo
    echo "- Machine: $(nproc) cores, $CPU; shared with other jobs, so single figures are noisy"
    echo "- $(ffmpeg -version | head -n 1); MediaKit $REV (release build)"
    echo "- Input: \`$IN\` ($(du -h "$IN" | cut -f1)); the 120 s rows use \`$IN2\` (looped twice, \`-c copy\`)"
    echo "- Method: each command $RUNS times, alternating, after \`sync\`; wall time and peak memory from \`/usr/bin/time -f '%e %M'\`; medians."
    echo "  Targets (issue 16): reading at least 2x faster than ffmpeg's, remux at most 0.5x ffmpeg's time. The 120 s rows' ratio column is vs the 60 s row of the same tool."
    echo
    echo '```sh'
    for c in FF_READ MK_READ FF_REMUX MK_REMUX; do declare -n a=$c; shown "${a[@]}"; done
    echo '```'
    echo
    echo "$TABLE"
    echo "<!-- bench_webm.sh:end -->"
} >"$SECTION"
write_section "$MD" bench_webm.sh "$SECTION"
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "a check failed (see the table)"
