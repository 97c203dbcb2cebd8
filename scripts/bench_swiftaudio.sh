#!/usr/bin/env bash
# The SwiftAudio plugin (issue 18: a plugin written in Swift, at least as fast as FFmpeg's
# decoders): mk-decode against ffmpeg, in the same run, on the same inputs, writing to the same
# disk, for each codec of the plugin:
#   G.711 A-law (WAV), G.711 mu-law (MOV), IMA ADPCM QuickTime ('ima4', MOV), IMA ADPCM WAV (0x11),
# each stereo 48 kHz (A-law / mu-law: 8 kHz is the telephone rate, but 48 kHz makes the run
# long enough to time), BENCH_SWIFTAUDIO_SECONDS long (default 600), decoded to s16le:
#   mk-decode IN --audio-out OUT            (the SwiftAudio plugin: the default by priority)
#   ffmpeg -i IN -map 0:a:0 -f s16le OUT    (libavcodec's decoder of the same name)
# The outputs must be byte-identical (checked after timing).
#
# Each command runs BENCH_RUNS times (default 5, order alternating) under GNU time; the median
# wall time and peak RSS are reported with mk-decode's ratio to ffmpeg's. The load average is
# printed and recorded before and after (the machine is shared: run it when it is quiet).
# Inputs are made once in bench-work/. Results are written to BENCHMARKS.md between the
# bench_swiftaudio.sh markers.
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_swiftaudio.sh)
# Environment: MK_BIN, BENCH_RUNS, BENCH_WORK, BENCHMARKS_MD, BENCH_SWIFTAUDIO_SECONDS, KEEP_OUTPUTS=1
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-5}
SECONDS_LONG=${BENCH_SWIFTAUDIO_SECONDS:-600}
MK="$MK_BIN/mk-decode"
[ -x "$MK" ] || die "mk-decode not found in $MK_BIN; run 'make build' first"
[ -f "$MK_BIN/libMediaKitPluginSwiftAudio.so" ] || die "libMediaKitPluginSwiftAudio.so not found in $MK_BIN; run 'make build' first"
MK_SHOWN=${MK#"$REPO"/}
mkdir -p "$WORK"

# ---------------------------------------------------------------- inputs (made once)
GEN=(ffmpeg -v error -nostdin -y
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -f lavfi -i "anoisesrc=color=pink:sample_rate=48000:amplitude=0.3"
    -filter_complex "[0:a][1:a]join=inputs=2:channel_layout=stereo[a]" -map "[a]" -t "$SECONDS_LONG" -map_metadata -1)
CASES=(alaw mulaw ima_qt ima_wav)
declare -A IN NAME GENC
IN[alaw]="$WORK/alaw_48k_stereo_${SECONDS_LONG}s.wav";      NAME[alaw]="G.711 A-law WAV";   GENC[alaw]="-c:a pcm_alaw -f wav"
IN[mulaw]="$WORK/mulaw_48k_stereo_${SECONDS_LONG}s.mov";    NAME[mulaw]="G.711 mu-law MOV"; GENC[mulaw]="-c:a pcm_mulaw -f mov"
IN[ima_qt]="$WORK/ima4_48k_stereo_${SECONDS_LONG}s.mov";    NAME[ima_qt]="IMA ADPCM QuickTime (ima4) MOV"; GENC[ima_qt]="-c:a adpcm_ima_qt -f mov"
IN[ima_wav]="$WORK/imawav_48k_stereo_${SECONDS_LONG}s.wav"; NAME[ima_wav]="IMA ADPCM WAV (0x11)"; GENC[ima_wav]="-c:a adpcm_ima_wav -f wav"
for c in "${CASES[@]}"; do
    # shellcheck disable=SC2086  # GENC holds several arguments
    make_input "${IN[$c]}" "${GEN[@]}" ${GENC[$c]}
done
cat "${IN[@]}" >/dev/null   # same page-cache state for every run

# ---------------------------------------------------------------- measuring
O=$WORK/swiftaudio
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
note "load average before: $LOAD_BEFORE"
for c in "${CASES[@]}"; do rm -f "$WORK/mk_$c.times" "$WORK/ff_$c.times"; done
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    for c in "${CASES[@]}"; do
        mk=("$MK" -q "${IN[$c]}" --audio-out "$O.mk.$c.pcm")
        ff=(ffmpeg -v error -nostdin -y -i "${IN[$c]}" -map 0:a:0 -f s16le "$O.ff.$c.pcm")
        if (( run % 2 )); then
            measure "mk_$c" "$O.mk.$c.pcm" "${mk[@]}"
            measure "ff_$c" "$O.ff.$c.pcm" "${ff[@]}"
        else
            measure "ff_$c" "$O.ff.$c.pcm" "${ff[@]}"
            measure "mk_$c" "$O.mk.$c.pcm" "${mk[@]}"
        fi
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
note "load average after: $LOAD_AFTER"

# ---------------------------------------------------------------- checking the outputs
status=0
declare -A CHECK
for c in "${CASES[@]}"; do
    if cmp -s "$O.mk.$c.pcm" "$O.ff.$c.pcm"; then
        CHECK[$c]="identical ($(stat -c %s "$O.mk.$c.pcm") bytes)"
    else
        CHECK[$c]="DIFFERS ($(cmp "$O.mk.$c.pcm" "$O.ff.$c.pcm" 2>&1 | head -n 1))"
        status=1
    fi
done
[ "${KEEP_OUTPUTS:-0}" = 1 ] || rm -f "$O".*.pcm

# ---------------------------------------------------------------- report
TABLE_HEAD="| case | ffmpeg wall s | mk-decode wall s | mk-decode / ffmpeg | ffmpeg peak MiB | mk-decode peak MiB | output | target |"
TABLE_RULE="|---|---:|---:|---:|---:|---:|---|---|"
ROWS=()
for c in "${CASES[@]}"; do
    mw=$(median "$WORK/mk_$c.times" 1) fw=$(median "$WORK/ff_$c.times" 1)
    mr=$(median "$WORK/mk_$c.times" 2) fr=$(median "$WORK/ff_$c.times" 2)
    target=$(awk -v m="$mw" -v f="$fw" 'BEGIN { print (m <= f ? "met" : "missed") }')
    ROWS+=("| ${NAME[$c]} | $fw | $mw | $(ratio "$mw" "$fw") | $(mib "$fr") | $(mib "$mr") | ${CHECK[$c]} | wall <= ffmpeg: $target |")
done
echo
table "$TABLE_HEAD" "$TABLE_RULE" "${ROWS[@]}"
echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_swiftaudio.sh:begin -->"
    echo "## SwiftAudio plugin (written in Swift): G.711 and IMA ADPCM against ffmpeg"
    echo
    echo "Written by \`scripts/bench_swiftaudio.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo
    echo "- Machine: $(nproc) cores, $CPU, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM (shared: other jobs may run);"
    echo "  load average (1, 5, 15 min) $LOAD_BEFORE before the runs, $LOAD_AFTER after"
    echo "- Tools: $(ffmpeg -version | head -n 1); MediaKit $REV (release build)"
    echo "- Inputs (made once): stereo 48 kHz, $SECONDS_LONG s (a tone and pink noise), each written by"
    echo "  \`$(q "${GEN[@]}") -c:a CODEC -f wav|mov OUT\`: $(for c in "${CASES[@]}"; do printf '`%s` ' "${IN[$c]}"; done)"
    echo "- Method: each command $RUNS times, order alternating, under GNU time (\`/usr/bin/time -f '%e %M'\`:"
    echo "  wall seconds, peak RSS); the median is shown. Both write s16le to \`$WORK/\`; the outputs are"
    echo "  compared byte for byte afterwards. Target (issue 18): mk-decode's wall time at most ffmpeg's."
    echo
    echo "Commands (IN and OUT per case):"
    echo
    echo '```sh'
    echo "$MK_SHOWN -q IN --audio-out OUT"
    echo "ffmpeg -v error -nostdin -y -i IN -map 0:a:0 -f s16le OUT"
    echo '```'
    echo
    table "$TABLE_HEAD" "$TABLE_RULE" "${ROWS[@]}"
    echo "<!-- bench_swiftaudio.sh:end -->"
} >"$SECTION"

write_section "$MD" bench_swiftaudio.sh "$SECTION"
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "an output differs from ffmpeg's (see the table)"
