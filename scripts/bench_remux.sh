#!/usr/bin/env bash
# Remux benchmark: mk-remux against `ffmpeg -c copy` and `cp`, in the same run, on the
# same input (the 1080p 60 s H.264 + AAC file of scripts/bench.sh, made once in bench-work/).
#
# Each command runs BENCH_RUNS times (default 11, the tools alternating), after sync, its wall
# time read from a nanosecond clock and its peak RSS from GNU time; the medians are reported. Every mk-remux output
# is checked: its framemd5 must equal the input's. Peak memory is also measured on a
# 120 s copy of the input (the input looped twice, -c copy) to show it does not grow
# with the input's length beyond the sample tables. The results are printed and written
# to BENCHMARKS.md between the bench_remux.sh markers.
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_remux.sh)
# Environment: MK_BIN, BENCH_RUNS, BENCH_WORK, BENCHMARKS_MD as scripts/bench.sh.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-11}
MK="$MK_BIN/mk-remux"
[ -x "$MK" ] || die "mk-remux not found in $MK_BIN; run 'make build' first"
MK_SHOWN=${MK#"$REPO"/}

# The same input as scripts/bench.sh, made here if that script has not run.
h264_bench_input 1920x1080 60
IN2="$WORK/h264_1920x1080_120s_looped.mp4"
if [ ! -s "$IN2" ]; then
    ffmpeg -v error -nostdin -y -stream_loop 1 -i "$IN" -map 0 -c copy "$IN2.part.mp4" && mv "$IN2.part.mp4" "$IN2"
fi
cat "$IN" "$IN2" >/dev/null

measure_ns() {  # measure_ns KEY OUTPUT CMD...: as bench_lib.sh's measure, wall time from a ns clock
    local key=$1 out=$2
    shift 2
    rm -f "$out"
    sync  # the previous run's dirty pages reach the disk before this run is timed
    # Wall time from a nanosecond clock (GNU time's %e has a 10 ms step, as long as cp
    # takes here); peak memory from GNU time.
    local t0 t1
    t0=$(date +%s.%N)
    if ! "$TIME" -f '%M' -o "$WORK/$key.time" "$@" >"$WORK/$key.log" 2>&1; then
        die "$key failed: $* (see $WORK/$key.log)"
    fi
    t1=$(date +%s.%N)
    echo "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') $(tail -n 1 "$WORK/$key.time")" >>"$WORK/$key.times"
}

OUT="$WORK/remux"
FF=(ffmpeg -v error -nostdin -y -i "$IN" -map 0 -c copy "$OUT.ffmpeg.mp4")
CP=(cp "$IN" "$OUT.cp.mp4")
MK_P=("$MK" --quiet "$IN" "$OUT.mk.mp4")
MK_F=("$MK" --quiet "$IN" "$OUT.mk-faststart.mp4" --faststart)
MK_G=("$MK" --quiet "$IN" "$OUT.mk-fragment.mp4" --fragment 2)
MK_H=("$MK" --quiet "$IN" "$OUT.mk-hybrid.mp4" --hybrid 2)
FF2=(ffmpeg -v error -nostdin -y -i "$IN2" -map 0 -c copy "$OUT.ffmpeg-120s.mp4")
MK2=("$MK" --quiet "$IN2" "$OUT.mk-120s.mp4")
KEYS=(ffmpeg cp mk mk_faststart mk_fragment mk_hybrid ffmpeg_120s mk_120s)

rm -f "$WORK"/*.times
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    measure_ns ffmpeg "$OUT.ffmpeg.mp4" "${FF[@]}"
    measure_ns mk "$OUT.mk.mp4" "${MK_P[@]}"
    measure_ns cp "$OUT.cp.mp4" "${CP[@]}"
    measure_ns mk_faststart "$OUT.mk-faststart.mp4" "${MK_F[@]}"
    measure_ns mk_fragment "$OUT.mk-fragment.mp4" "${MK_G[@]}"
    measure_ns mk_hybrid "$OUT.mk-hybrid.mp4" "${MK_H[@]}"
    measure_ns ffmpeg_120s "$OUT.ffmpeg-120s.mp4" "${FF2[@]}"
    measure_ns mk_120s "$OUT.mk-120s.mp4" "${MK2[@]}"
done

# Every output of ours carries the input's streams.
status=0
ref=$(ffmpeg -v error -i "$IN" -map 0 -c copy -f framemd5 - | grep -v '^#software')
declare -A CHECK
for k in mk mk-faststart mk-fragment mk-hybrid; do
    got=$(ffmpeg -v error -i "$OUT.$k.mp4" -map 0 -c copy -f framemd5 - | grep -v '^#software')
    r=$ref
    if [ "$k" = mk-fragment ]; then
        # FFmpeg 5.1 applies a fragmented file's edit list only as an offset and guesses fragment
        # durations (Tests/oracle/remux_lib.py): compare the raw sample tables, without durations.
        strip() { awk -F, 'BEGIN{OFS=","} /^#/ {print; next} {$4=" *"; print}'; }
        got=$(ffmpeg -v error -ignore_editlist 1 -i "$OUT.$k.mp4" -map 0 -c copy -f framemd5 - | grep -v '^#software' | strip)
        r=$(ffmpeg -v error -ignore_editlist 1 -i "$IN" -map 0 -c copy -f framemd5 - | grep -v '^#software' | strip)
    fi
    if [ "$got" = "$r" ]; then CHECK[$k]="framemd5 = input's"; else CHECK[$k]="framemd5 DIFFERS"; status=1; fi
done
rm -f "$OUT".*.mp4

declare -A WALL RSS
for k in "${KEYS[@]}"; do WALL[$k]=$(median "$WORK/$k.times" 1); RSS[$k]=$(median "$WORK/$k.times" 2); done
target() {  # wall <= 0.5x ffmpeg and <= 2x cp, RSS below ffmpeg's
    awk -v w="$1" -v r="$2" -v fw="${WALL[ffmpeg]}" -v cw="${WALL[cp]}" -v fr="${RSS[ffmpeg]}" 'BEGIN {
        print ((w <= 0.5 * fw && w <= 2 * cw && r < fr) ? "met" : "missed") }'
}
row() {  # row LABEL KEY CHECK TARGET
    echo "| $1 | ${WALL[$2]} | $(mib "${RSS[$2]}") | $(ratio "${WALL[$2]}" "${WALL[ffmpeg]}") | $(ratio "${WALL[$2]}" "${WALL[cp]}") | $3 | $4 |"
}
TABLE=$(
    echo "| command | wall s | peak MiB | wall vs ffmpeg | wall vs cp | output | target |"
    echo "|---|---:|---:|---:|---:|---|---|"
    row "ffmpeg -c copy" ffmpeg "reference" ""
    row "cp" cp "reference" ""
    row "mk-remux (progressive)" mk "${CHECK[mk]}" "$(target "${WALL[mk]}" "${RSS[mk]}")"
    row "mk-remux --faststart" mk_faststart "${CHECK[mk-faststart]}" ""
    row "mk-remux --fragment 2" mk_fragment "${CHECK[mk-fragment]}" ""
    row "mk-remux --hybrid 2" mk_hybrid "${CHECK[mk-hybrid]}" ""
    row "ffmpeg -c copy, 120 s input" ffmpeg_120s "memory growth" ""
    row "mk-remux, 120 s input" mk_120s "memory growth" ""
)
echo; echo "$TABLE"; echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_remux.sh:begin -->"
    echo "## Remux: mk-remux vs ffmpeg -c copy and cp"
    echo
    echo "Written by \`scripts/bench_remux.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo
    echo "- Machine: $(nproc) cores, $CPU; shared with other jobs, so single figures are noisy"
    echo "- $(ffmpeg -version | head -n 1); MediaKit $REV (release build)"
    echo "- Input: \`$IN\` ($(du -h "$IN" | cut -f1), the input of scripts/bench.sh); the 120 s rows use \`$IN2\`"
    echo "  (the same input looped twice with \`ffmpeg -stream_loop 1 -c copy\`)"
    echo "- Method: each command $RUNS times, alternating, after \`sync\`; wall time from \`date +%s.%N\` around \`/usr/bin/time -f '%M'\` (peak memory); medians."
    echo "  Target (issue 3): mk-remux wall <= 0.5x ffmpeg's and <= 2x cp's, peak RSS below ffmpeg's."
    echo
    echo '```sh'
    for c in FF CP MK_P MK_F MK_G MK_H; do declare -n a=$c; shown "${a[@]}"; done
    echo '```'
    echo
    echo "$TABLE"
    echo "<!-- bench_remux.sh:end -->"
} >"$SECTION"
write_section "$MD" bench_remux.sh "$SECTION"
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "an mk-remux output differs from the input (see the table)"
