#!/usr/bin/env bash
# Video encoding benchmark (issue 36): mk-transcode re-encoding a movie's video against ffmpeg
# doing the same encode with the same library, in the same run, on the same input (the 60 s
# 1080p30 H.264 + AAC file bench_remux.sh and bench_seek.sh share, made by h264_bench_input):
#
#   H.264 -> H.264  mk-transcode IN out.mp4 --no-audio --video-codec libx264 --preset medium --crf 23
#                   vs  ffmpeg -i IN -an -c:v libx264 -preset medium -crf 23 out.mp4
#   H.264 -> AV1    mk-transcode IN out.mp4 --no-audio --video-codec libsvtav1 --preset 8
#                   vs  ffmpeg -i IN -an -c:v libsvtav1 -preset 8 out.mp4
#
# The video only (the audio is a second's work beside a minute of 1080p encoding); both tools
# choose their threads (decoder and encoder: every core). Each command runs BENCH_RUNS times
# (default 3, pairs alternating) under GNU time; the median is reported. Targets (issue 36):
# wall time at most 1.05x ffmpeg's, peak memory at most ffmpeg's. Untimed check: both outputs
# of a case hold the same number of video packets and the same duration (ffprobe).
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_video_encode.sh)
# Environment: MK_BIN, BENCH_RUNS, BENCH_WORK, BENCHMARKS_MD as for scripts/bench.sh.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
MK="$MK_BIN/mk-transcode"
[ -x "$MK" ] || die "mk-transcode not found in $MK_BIN; run 'make build' first"
MK_SHOWN=${MK#"$REPO"/}
ENCODERS=$(ffmpeg -hide_banner -encoders 2>/dev/null)
[[ $ENCODERS == *" libsvtav1 "* ]] || die "this ffmpeg has no libsvtav1 encoder"

h264_bench_input 1920x1080 60
cat "$IN" >/dev/null  # same page-cache state for every run

if [ -d /dev/shm ] && [ -w /dev/shm ]; then OUT=/dev/shm/mediakit-bench; else OUT=$WORK; fi
mkdir -p "$OUT"
CASES=(ff_x264 mk_x264 ff_svt mk_svt)
declare -A CMD DST
DST[ff_x264]=$OUT/ff_x264.mp4; CMD[ff_x264]="ffmpeg -v error -nostdin -y -i ${IN@Q} -an -c:v libx264 -preset medium -crf 23"
DST[mk_x264]=$OUT/mk_x264.mp4; CMD[mk_x264]="${MK@Q} ${IN@Q} ${DST[mk_x264]@Q} --quiet --no-audio --video-codec libx264 --preset medium --crf 23"
DST[ff_svt]=$OUT/ff_svt.mp4;   CMD[ff_svt]="ffmpeg -v error -nostdin -y -i ${IN@Q} -an -c:v libsvtav1 -preset 8"
DST[mk_svt]=$OUT/mk_svt.mp4;   CMD[mk_svt]="${MK@Q} ${IN@Q} ${DST[mk_svt]@Q} --quiet --no-audio --video-codec libsvtav1 --preset 8"
for c in ff_x264 ff_svt; do CMD[$c]+=" ${DST[$c]@Q}"; done

LOAD_START=$(cut -d" " -f1-3 /proc/loadavg)
rm -f "$WORK"/video_encode_*.times
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    for ((i = 0; i < ${#CASES[@]}; i += 2)); do
        pair=("${CASES[i]}" "${CASES[i + 1]}")
        (( run % 2 )) || pair=("${CASES[i + 1]}" "${CASES[i]}")
        for c in "${pair[@]}"; do
            # The last run's outputs are kept for the check below.
            eval "measure video_encode_$c \"\${DST[$c]}\" ${CMD[$c]}"
        done
    done
done

note "checking the outputs (untimed)"
status=0
declare -A CHECK
probe() {
    ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets:format=duration \
        -of default=nw=1:nk=1 "$1" | paste -sd' '
}
for k in x264 svt; do
    a=$(probe "${DST[mk_$k]}") b=$(probe "${DST[ff_$k]}")
    if [ "$a" = "$b" ]; then CHECK[$k]="same packets / duration: $a"
    else CHECK[$k]="DIFFERENT: ours $a, ffmpeg $b"; status=1; fi
    rm -f "${DST[mk_$k]}" "${DST[ff_$k]}"
done

W() { median "$WORK/video_encode_$1.times" 1; }
R() { median "$WORK/video_encode_$1.times" 2; }
met() {
    awk -v a="$1" -v b="$2" -v ra="$3" -v rb="$4" 'BEGIN {
        w = (a <= 1.05 * b) ? "met" : "NOT met"; m = (ra <= rb) ? "met" : "NOT met"
        print "wall " w ", memory " m }'
}
HEAD="| case | tool | wall s | peak MiB | wall vs ffmpeg | check | target (wall <= 1.05x, memory <= ffmpeg's) |"
RULE="|---|---|---:|---:|---:|---|---|"
ROWS=()
for pair in "x264:H.264 1080p30 60 s -> H.264 libx264 medium crf 23" "svt:H.264 1080p30 60 s -> AV1 libsvtav1 preset 8"; do
    k=${pair%%:*} label=${pair#*:}
    ROWS+=("| $label | ffmpeg | $(W ff_$k) | $(mib "$(R ff_$k)") | 1.00x | reference | |")
    ROWS+=("| $label | mk-transcode | $(W mk_$k) | $(mib "$(R mk_$k)") | $(ratio "$(W mk_$k)" "$(W ff_$k)") | ${CHECK[$k]} | $(met "$(W mk_$k)" "$(W ff_$k)" "$(R mk_$k)" "$(R ff_$k)") |")
done
echo; echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"; echo

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_video_encode:begin -->"
    echo "## Video encoding: mk-transcode vs ffmpeg with the same encoder library"
    echo
    echo "Written by \`scripts/bench_video_encode.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo "Machine: $(nproc) cores, $CPU (shared: other jobs may run); $(ffmpeg -version | head -n 1); MediaKit $REV (release build); load average $LOAD_START at the start, $(cut -d" " -f1-3 /proc/loadavg) at the end (above 2, other work competed for the cores)."
    echo "Input (made once): \`$IN\` (60 s of 1920x1080 testsrc2 at 30 fps, H.264 with 3 B-frames, and AAC) by"
    echo "\`$(q "${GEN_CMD[@]}" "$IN")\`."
    echo "Method: each command $RUNS times, pairs alternating, under GNU time after \`sync\`, writing to"
    echo "\`$OUT/\`; the median is shown. The video only (\`-an\` / \`--no-audio\`); threads: each tool's default"
    echo "(every core, decoder and encoder). Untimed check: ffprobe's packet count and duration of both outputs."
    echo
    echo '```sh'
    for c in "${CASES[@]}"; do s=${CMD[$c]//"$MK"/"$MK_SHOWN"}; echo "${s//\'/}"; done
    echo '```'
    echo
    echo "$HEAD"; echo "$RULE"; printf '%s\n' "${ROWS[@]}"
    echo "<!-- bench_video_encode:end -->"
} >"$SECTION"
write_section "$MD" bench_video_encode "$SECTION"
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "a check failed (see the table)"
