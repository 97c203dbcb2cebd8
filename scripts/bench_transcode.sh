#!/usr/bin/env bash
# Transcoding benchmark (issue 15): mk-transcode against ffmpeg doing the same encode with the
# same library, in the same run, on the same input (5 minutes of stereo s16 WAV at 48 kHz,
# mixed sines and pink noise; at 48 kHz so that no case resamples, Opus included):
#
#   WAV -> AAC 128k .m4a      mk-transcode IN out.m4a --bitrate 128k              vs  ffmpeg -c:a aac -b:a 128k
#   WAV -> Opus 96k .mka      mk-transcode IN out.mka --codec opus --bitrate 96k  vs  ffmpeg -c:a libopus -b:a 96k
#   WAV -> Vorbis q5 .webm    mk-transcode IN out.webm --codec vorbis --quality 5 vs  ffmpeg -c:a libvorbis -q:a 5
#   MP3 -> AAC 128k .m4a      (the MP3 made once from the WAV by ffmpeg -c:a libmp3lame -b:a 192k)
#
# Each command runs BENCH_RUNS times (default 3, pairs alternating) under GNU time; the median is
# reported. Target: mk-transcode's wall time at most 1.05x ffmpeg's. Untimed check: mk-decode of
# each MP4 / Matroska output gives exactly the input's sample count (gapless).
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_transcode.sh)
# Environment: MK_BIN, BENCH_RUNS, BENCH_WORK, BENCHMARKS_MD as for scripts/bench.sh.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
MK="$MK_BIN/mk-transcode"
[ -x "$MK" ] || die "mk-transcode not found in $MK_BIN; run 'make build' first"
MK_SHOWN=${MK#"$REPO"/}
DEC="$MK_BIN/mk-decode"

mkdir -p "$WORK"
SECONDS_IN=300
IN="$WORK/music_s16_48k_stereo_${SECONDS_IN}s.wav"
GEN_CMD=(ffmpeg -v error -nostdin -y
    -f lavfi -i "aevalsrc='0.2*sin(2*PI*220*t)+0.15*sin(2*PI*277.18*t+0.3*sin(2*PI*5*t))+0.1*sin(2*PI*659.26*t)|0.18*sin(2*PI*220*t+0.5)+0.15*sin(2*PI*415.3*t)':s=48000:d=$SECONDS_IN"
    -f lavfi -i "anoisesrc=c=pink:a=0.08:r=48000:d=$SECONDS_IN:seed=7"
    -filter_complex "[1]pan=stereo|c0=c0|c1=c0[n];[0][n]amix=inputs=2:normalize=0"
    -c:a pcm_s16le -f wav)
make_input "$IN" "${GEN_CMD[@]}"
IN_MP3="$WORK/music_48k_stereo_${SECONDS_IN}s_192k.mp3"
GEN_MP3=(ffmpeg -v error -nostdin -y -i "$IN" -c:a libmp3lame -b:a 192k -f mp3)
make_input "$IN_MP3" "${GEN_MP3[@]}"
cat "$IN" "$IN_MP3" >/dev/null  # same page-cache state for every run
FRAMES=$(( SECONDS_IN * 48000 ))

if [ -d /dev/shm ] && [ -w /dev/shm ]; then OUT=/dev/shm/mediakit-bench; else OUT=$WORK; fi
mkdir -p "$OUT"
CASES=(ff_aac mk_aac ff_opus mk_opus ff_vorbis mk_vorbis ff_mp3aac mk_mp3aac)
declare -A CMD DST
DST[ff_aac]=$OUT/t.m4a;     CMD[ff_aac]="ffmpeg -v error -nostdin -y -i ${IN@Q} -c:a aac -b:a 128k"
DST[mk_aac]=$OUT/t.m4a;     CMD[mk_aac]="${MK@Q} ${IN@Q} ${DST[mk_aac]@Q} --quiet --bitrate 128k"
DST[ff_opus]=$OUT/t.mka;    CMD[ff_opus]="ffmpeg -v error -nostdin -y -i ${IN@Q} -c:a libopus -b:a 96k"
DST[mk_opus]=$OUT/t.mka;    CMD[mk_opus]="${MK@Q} ${IN@Q} ${DST[mk_opus]@Q} --quiet --codec opus --bitrate 96k"
DST[ff_vorbis]=$OUT/t.webm; CMD[ff_vorbis]="ffmpeg -v error -nostdin -y -i ${IN@Q} -c:a libvorbis -q:a 5"
DST[mk_vorbis]=$OUT/t.webm; CMD[mk_vorbis]="${MK@Q} ${IN@Q} ${DST[mk_vorbis]@Q} --quiet --codec vorbis --quality 5"
DST[ff_mp3aac]=$OUT/m.m4a;  CMD[ff_mp3aac]="ffmpeg -v error -nostdin -y -i ${IN_MP3@Q} -c:a aac -b:a 128k"
DST[mk_mp3aac]=$OUT/m.m4a;  CMD[mk_mp3aac]="${MK@Q} ${IN_MP3@Q} ${DST[mk_mp3aac]@Q} --quiet --bitrate 128k"
for c in ff_aac ff_opus ff_vorbis ff_mp3aac; do CMD[$c]+=" ${DST[$c]@Q}"; done

LOAD_START=$(cut -d" " -f1-3 /proc/loadavg)
rm -f "$WORK"/transcode_*.times
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    for ((i = 0; i < ${#CASES[@]}; i += 2)); do
        pair=("${CASES[i]}" "${CASES[i + 1]}")
        (( run % 2 )) || pair=("${CASES[i + 1]}" "${CASES[i]}")
        for c in "${pair[@]}"; do eval "measure transcode_$c \"\${DST[$c]}\" ${CMD[$c]}"; done
    done
done

note "checking the outputs (untimed)"
status=0
declare -A CHECK
for c in mk_aac mk_opus mk_vorbis mk_mp3aac; do
    eval "${CMD[$c]}" || die "$c failed"
    "$DEC" "${DST[$c]}" --audio-out "$OUT/check.pcm" >/dev/null 2>&1 || die "mk-decode ${DST[$c]} failed"
    n=$(( $(stat -c %s "$OUT/check.pcm") / 4 ))
    want=$FRAMES
    [ "$c" = mk_mp3aac ] && want=$(ffmpeg -v error -i "$IN_MP3" -f s16le - | wc -c | awk '{ print $1 / 4 }')
    if [ "$c" = mk_vorbis ]; then CHECK[$c]="$n samples (Vorbis in WebM: no end trim)"
    elif [ "$n" -eq "$want" ]; then CHECK[$c]="$n samples = input (gapless)"
    else CHECK[$c]="WRONG LENGTH: $n samples, input $want"; status=1; fi
    rm -f "$OUT/check.pcm" "${DST[$c]}"
done

W() { median "$WORK/transcode_$1.times" 1; }
R() { median "$WORK/transcode_$1.times" 2; }
met() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= 1.05 * b) ? "met" : "NOT met" }'; }
HEAD="| case | tool | wall s | peak MiB | wall vs ffmpeg | decoded length | target (<= 1.05x) |"
RULE="|---|---|---:|---:|---:|---|---|"
ROWS=()
for pair in "aac:WAV -> AAC 128k .m4a" "opus:WAV -> Opus 96k .mka" "vorbis:WAV -> Vorbis q5 .webm" "mp3aac:MP3 -> AAC 128k .m4a"; do
    k=${pair%%:*} label=${pair#*:}
    ROWS+=("| $label | ffmpeg | $(W ff_$k) | $(mib "$(R ff_$k)") | 1.00x | reference | |")
    ROWS+=("| $label | mk-transcode | $(W mk_$k) | $(mib "$(R mk_$k)") | $(ratio "$(W mk_$k)" "$(W ff_$k)") | ${CHECK[mk_$k]} | $(met "$(W mk_$k)" "$(W ff_$k)") |")
done
echo; echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"; echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_transcode:begin -->"
    echo "## Transcoding: mk-transcode vs ffmpeg with the same encoder library"
    echo
    echo "Written by \`scripts/bench_transcode.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo "Machine: $(nproc) cores, $CPU (shared: other jobs may run); $(ffmpeg -version | head -n 1); MediaKit $REV (release build); load average $LOAD_START at the start, $(cut -d" " -f1-3 /proc/loadavg) at the end (above 2, other work competed for the cores)."
    echo "Inputs (made once): \`$IN\` ($FRAMES frames, $SECONDS_IN s of stereo s16 at 48 kHz) by"
    echo "\`$(q "${GEN_CMD[@]}" "$IN")\`, and \`$IN_MP3\` by \`$(q "${GEN_MP3[@]}" "$IN_MP3")\`."
    echo "Method: each command $RUNS times, pairs alternating, under GNU time after \`sync\`, writing the same"
    echo "path in \`$OUT/\`; the median is shown. Untimed check: mk-decode's length of each output."
    echo
    echo '```sh'
    for c in "${CASES[@]}"; do s=${CMD[$c]//"$MK"/"$MK_SHOWN"}; echo "${s//\'/}"; done
    echo '```'
    echo
    echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"
    echo "<!-- bench_transcode:end -->"
} >"$SECTION"
write_section "$MD" bench_transcode "$SECTION"
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "a check failed (see the table)"
