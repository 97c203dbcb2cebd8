#!/usr/bin/env bash
# Audio conversion benchmark (issue 13): MediaKit's AudioConverter (through mk-audioconv,
# raw PCM in and out) against ffmpeg's libswresample in the same run, on the same input,
# 10 minutes of stereo f32 at 44.1 kHz:
#
#   44.1 -> 48 kHz, default presets:  mk-audioconv --sample-rate 48000   vs  -af aresample=48000
#   44.1 -> 48 kHz, high quality:     mk-audioconv --quality high        vs  -af aresample=48000:resampler=soxr
#   f32 -> s16 and s16 -> f32:        mk-audioconv --sample-format ...   vs  -af aformat=s16 / -f f32le
#
# Each command runs BENCH_RUNS times (default 3, alternating) under GNU time; the median is
# reported. mk-audioconv also prints the time spent inside the converter (--time), from which
# the sample-format rows give the converter's own output rate (target: 2 GB/s). Untimed checks:
# the sample-format outputs must be identical to ffmpeg's (cmp), the resampled outputs must hold
# exactly round(N * 48000 / 44100) frames. The input is generated once and kept in bench-work/
# (git-ignored). Results go to the terminal and to BENCHMARKS.md (between the bench_audioconv markers).
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_audioconv.sh)
# Environment: MK_BIN, BENCH_RUNS, BENCH_WORK, BENCHMARKS_MD as for scripts/bench.sh.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
MK="$MK_BIN/mk-audioconv"
[ -x "$MK" ] || die "mk-audioconv not found in $MK_BIN; run 'make build' first"
MK_SHOWN=${MK#"$REPO"/}

mkdir -p "$WORK"
SECONDS_IN=600
IN="$WORK/pcm_f32_44k_stereo_${SECONDS_IN}s.f32"
GEN_CMD=(ffmpeg -v error -nostdin -y
    -f lavfi -i "sine=frequency=440:sample_rate=44100"
    -f lavfi -i "anoisesrc=color=pink:sample_rate=44100:amplitude=0.3"
    -filter_complex "[0:a][1:a]join=inputs=2:channel_layout=stereo[a]"
    -map "[a]" -t "$SECONDS_IN" -f f32le)
make_input "$IN" "${GEN_CMD[@]}"
IN16="$WORK/pcm_s16_44k_stereo_${SECONDS_IN}s.s16"
GEN16_CMD=(ffmpeg -v error -nostdin -y -f f32le -ar 44100 -ac 2 -i "$IN" -af aformat=s16 -f s16le)
make_input "$IN16" "${GEN16_CMD[@]}"
cat "$IN" "$IN16" >/dev/null  # same page-cache state for every run
FRAMES=$(( $(stat -c %s "$IN") / 8 ))
EXPECTED=$(( (2 * FRAMES * 160 + 147) / 294 ))   # round(N * 48000 / 44100)

# Outputs on tmpfs when it has room, as in the other benchmarks; the same path for both tools.
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((2 * 1024 * 1024)) ]; then
    OUT=/dev/shm/mediakit-bench
else
    OUT=$WORK
fi
mkdir -p "$OUT"
O="$OUT/audioconv.out"
FFI=(ffmpeg -v error -nostdin -y -f f32le -ar 44100 -ac 2 -i "$IN")
FFI16=(ffmpeg -v error -nostdin -y -f s16le -ar 44100 -ac 2 -i "$IN16")
CASES=(swr mk_medium soxr mk_high ff_f32s16 mk_f32s16 ff_s16f32 mk_s16f32)
declare -A CMD
CMD[swr]="${FFI[*]@Q} -af aresample=48000 -f f32le ${O@Q}"
CMD[mk_medium]="${MK@Q} --time ${IN@Q} ${O@Q} --sample-rate 48000"
CMD[soxr]="${FFI[*]@Q} -af aresample=48000:resampler=soxr -f f32le ${O@Q}"
CMD[mk_high]="${MK@Q} --time ${IN@Q} ${O@Q} --sample-rate 48000 --quality high"
CMD[ff_f32s16]="${FFI[*]@Q} -af aformat=s16 -f s16le ${O@Q}"
CMD[mk_f32s16]="${MK@Q} --time ${IN@Q} ${O@Q} --sample-format s16"
CMD[ff_s16f32]="${FFI16[*]@Q} -f f32le ${O@Q}"
CMD[mk_s16f32]="${MK@Q} --time --in-format s16 ${IN16@Q} ${O@Q} --sample-format f32"

rm -f "$WORK"/audioconv_*.times "$WORK"/audioconv_*.convert
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    for ((i = 0; i < ${#CASES[@]}; i += 2)); do
        pair=("${CASES[i]}" "${CASES[i + 1]}")
        (( run % 2 )) || pair=("${CASES[i + 1]}" "${CASES[i]}")
        for c in "${pair[@]}"; do
            eval "measure audioconv_$c \"\$O\" ${CMD[$c]}"
            if [[ $c == mk_* ]]; then
                sed -n 's/.*convert \([0-9.]*\) s.*/\1/p' "$WORK/audioconv_$c.log" >>"$WORK/audioconv_$c.convert"
            fi
        done
    done
done

note "checking the outputs (untimed)"
status=0
check_same() {  # check_same FF_CASE MK_CASE
    eval "${CMD[$1]/"${O@Q}"/"${O@Q}.ff"}" && eval "${CMD[$2]/"${O@Q}"/"${O@Q}.mk"}" 2>/dev/null \
        || die "a command of $1 / $2 failed"
    if cmp -s "$O.ff" "$O.mk"; then
        echo "identical to ffmpeg's (cmp, $(stat -c %s "$O.mk") bytes)"
    else
        echo "DIFFERS from ffmpeg's ($(cmp "$O.ff" "$O.mk" 2>&1 | head -n 1))"
    fi
    rm -f "$O.ff" "$O.mk"
}
check_length() {  # check_length MK_CASE FF_CASE
    eval "${CMD[$1]/"${O@Q}"/"${O@Q}.mk"}" 2>/dev/null && eval "${CMD[$2]/"${O@Q}"/"${O@Q}.ff"}" || die "$1 or $2 failed"
    local n=$(( $(stat -c %s "$O.mk") / 8 )) f=$(( $(stat -c %s "$O.ff") / 8 ))
    rm -f "$O.ff" "$O.mk"
    if [ "$n" -eq "$EXPECTED" ]; then echo "$n frames = round($FRAMES * 48000 / 44100) (ffmpeg: $f)"; else echo "WRONG LENGTH: $n frames, expected $EXPECTED"; fi
}
CHECK_mk_medium=$(check_length mk_medium swr)
CHECK_mk_high=$(check_length mk_high soxr)
CHECK_mk_f32s16=$(check_same ff_f32s16 mk_f32s16)
CHECK_mk_s16f32=$(check_same ff_s16f32 mk_s16f32)
for c in mk_medium mk_high mk_f32s16 mk_s16f32; do
    v="CHECK_$c"
    if [[ ${!v} == DIFFERS* || ${!v} == WRONG* ]]; then status=1; fi
done
rm -f "$O"

W() { median "$WORK/audioconv_$1.times" 1; }
R() { median "$WORK/audioconv_$1.times" 2; }
C() { median "$WORK/audioconv_$1.convert" 1; }
met() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? "met" : "NOT met" }'; }
OUT_RS=$(( EXPECTED * 8 )); OUT_S16=$(( FRAMES * 4 )); OUT_F32=$(( FRAMES * 8 ))
gbs() { awk -v bytes="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.1f GB/s", bytes / s / 1e9; else print "n/a" }'; }
rt() { awk -v s="$1" -v a="$SECONDS_IN" 'BEGIN { if (s > 0) printf "%.0fx real time", a / s; else print "n/a" }'; }

HEAD="| case | tool | wall s | peak MiB | wall vs ffmpeg | converter alone | output | target |"
RULE="|---|---|---:|---:|---:|---|---|---|"
ROWS=("| 44.1 -> 48 kHz, default | ffmpeg aresample (swr) | $(W swr) | $(mib "$(R swr)") | 1.00x |  | reference |  |"
      "| 44.1 -> 48 kHz, default | mk-audioconv (medium) | $(W mk_medium) | $(mib "$(R mk_medium)") | $(ratio "$(W mk_medium)" "$(W swr)") | $(C mk_medium) s, $(rt "$(C mk_medium)") | $CHECK_mk_medium | wall <= swr's: $(met "$(W mk_medium)" "$(W swr)") |"
      "| 44.1 -> 48 kHz, high | ffmpeg aresample (soxr) | $(W soxr) | $(mib "$(R soxr)") | 1.00x |  | reference |  |"
      "| 44.1 -> 48 kHz, high | mk-audioconv (high) | $(W mk_high) | $(mib "$(R mk_high)") | $(ratio "$(W mk_high)" "$(W soxr)") | $(C mk_high) s, $(rt "$(C mk_high)") | $CHECK_mk_high | wall <= soxr's: $(met "$(W mk_high)" "$(W soxr)") |"
      "| f32 -> s16 | ffmpeg -af aformat=s16 | $(W ff_f32s16) | $(mib "$(R ff_f32s16)") | 1.00x |  | reference |  |"
      "| f32 -> s16 | mk-audioconv | $(W mk_f32s16) | $(mib "$(R mk_f32s16)") | $(ratio "$(W mk_f32s16)" "$(W ff_f32s16)") | $(C mk_f32s16) s, $(gbs "$OUT_S16" "$(C mk_f32s16)") out | $CHECK_mk_f32s16 | >= 2 GB/s: $(met 2 "$(awk -v b="$OUT_S16" -v s="$(C mk_f32s16)" 'BEGIN { print (s > 0) ? b / s / 1e9 : 0 }')") |"
      "| s16 -> f32 | ffmpeg -f f32le | $(W ff_s16f32) | $(mib "$(R ff_s16f32)") | 1.00x |  | reference |  |"
      "| s16 -> f32 | mk-audioconv | $(W mk_s16f32) | $(mib "$(R mk_s16f32)") | $(ratio "$(W mk_s16f32)" "$(W ff_s16f32)") | $(C mk_s16f32) s, $(gbs "$OUT_F32" "$(C mk_s16f32)") out | $CHECK_mk_s16f32 | >= 2 GB/s: $(met 2 "$(awk -v b="$OUT_F32" -v s="$(C mk_s16f32)" 'BEGIN { print (s > 0) ? b / s / 1e9 : 0 }')") |")
echo
echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"; echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_audioconv:begin -->"
    echo "## Audio conversion: AudioConverter (mk-audioconv) vs libswresample (ffmpeg)"
    echo
    echo "Written by \`scripts/bench_audioconv.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo "Machine: $(nproc) cores, $CPU (shared: other jobs may run); $(ffmpeg -version | head -n 1); MediaKit $REV (release build)."
    echo "Inputs (made once): \`$IN\` ($FRAMES frames, $SECONDS_IN s of stereo f32 at 44.1 kHz) by"
    echo "\`$(q "${GEN_CMD[@]}" "$IN")\`, and its s16 copy \`$IN16\` by \`$(q "${GEN16_CMD[@]}" "$IN16")\`."
    echo "Method: each command $RUNS times, pairs alternating, under GNU time after \`sync\`, writing the same"
    echo "path in \`$OUT/\`; the median is shown. \"converter alone\" is the time mk-audioconv spent inside"
    echo "AudioConverter (its \`--time\` line; the rest is reading and writing); the GB/s figures count output bytes"
    echo "converted in 64k-frame buffers that mk-audioconv reuses (so they stay in cache)."
    echo "Untimed checks: the sample-format outputs against ffmpeg's (cmp); the resampled lengths against"
    echo "round(N * 48000 / 44100). On processors with AVX2 and FMA the resampler runs its AVX2 loops."
    echo
    echo '```sh'
    for c in "${CASES[@]}"; do
        s=${CMD[$c]//"$MK"/"$MK_SHOWN"}
        echo "${s//\'/}"
    done
    echo '```'
    echo
    echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"
    echo "<!-- bench_audioconv:end -->"
} >"$SECTION"
write_section "$MD" bench_audioconv "$SECTION"
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "a check failed (see the table)"
