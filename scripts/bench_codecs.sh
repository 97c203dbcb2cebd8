#!/usr/bin/env bash
# Codec plugin benchmarks (issue 6): mk-decode with the dav1d, Opus and Vorbis plugins
# against the tools a user would otherwise run, in the same run, on the same inputs,
# writing to the same disk.
#
#   (a) AV1 1280x720 30 fps, 600 frames -> raw I420:
#       mk-decode (dav1d plugin) vs `dav1d` (the dav1d command-line tool, IVF copy of the
#       same stream) vs `ffmpeg -c:v libdav1d`. The dav1d tool also runs once more per
#       round with `--muxer null` (decode only, nothing written) as a reference.
#   (b) Opus stereo 48 kHz -> s16le: mk-decode (opus plugin) vs `ffmpeg -c:a libopus`.
#   (c) Vorbis stereo 44.1 kHz -> s16le: mk-decode (vorbis plugin) vs `ffmpeg -c:a libvorbis`.
#
# Audio inputs are MP4 (the Ogg demuxer is not in this build; Vorbis in MP4 is written
# by ffmpeg with -strict experimental). Audio is decoded untrimmed on both sides
# (mk-decode --no-trim; ffmpeg -ignore_editlist 1, and -flags2 +skip_manual for Opus so
# libopus keeps the pre-skip), so the outputs can be compared sample for sample.
#
# Each command runs BENCH_RUNS times (default 3, order alternating) under GNU time
# (-f '%e %M': wall seconds, peak RSS KiB); the median is reported. Inputs are made
# once and kept in bench-work/ (git-ignored). Results are printed and written to
# BENCHMARKS.md, between the bench_codecs.sh markers (replaced, or appended).
# Never point an output at /dev/null: mk-decode writes a temporary file beside its
# output and renames it into place.
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_codecs.sh)
# Environment:
#   MK_BIN         folder of mk-decode and the plugins (default: `swift build -c release --show-bin-path`)
#   BENCH_RUNS     runs per command (default 3)
#   BENCH_WORK     work folder (default bench-work)
#   BENCHMARKS_MD  report file (default BENCHMARKS.md)
#   BENCH_AUDIO_SECONDS  length of the audio inputs (default 300)
#   KEEP_OUTPUTS=1 keep the decoded outputs instead of deleting them
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
ASECONDS=${BENCH_AUDIO_SECONDS:-300}

command -v dav1d >/dev/null || die "the dav1d tool is not installed (Debian package dav1d; run scripts/deps.sh)"
MK="$MK_BIN/mk-decode"
[ -x "$MK" ] || die "mk-decode not found in $MK_BIN; run 'make build' first"
for p in Dav1d Opus Vorbis; do
    [ -f "$MK_BIN/libMediaKitPlugin$p.so" ] || die "libMediaKitPlugin$p.so not found in $MK_BIN; run 'make build' first"
done
MK_SHOWN=${MK#"$REPO"/}

mkdir -p "$WORK"

# ---------------------------------------------------------------- inputs (made once)
# The AV1 encoder: whichever this ffmpeg has, fastest first.
AV1_ENC=()
ENCODERS=$(ffmpeg -hide_banner -encoders 2>/dev/null)
if grep -q ' libsvtav1 ' <<<"$ENCODERS"; then
    AV1_ENC=(-c:v libsvtav1 -preset 10 -g 120)
    AV1_NAME=libsvtav1
elif grep -q ' libaom-av1 ' <<<"$ENCODERS"; then
    AV1_ENC=(-c:v libaom-av1 -cpu-used 8 -row-mt 1 -g 120)
    AV1_NAME=libaom-av1
else
    die "this ffmpeg has no AV1 encoder (libsvtav1 or libaom-av1)"
fi
AV1_MP4="$WORK/av1_1280x720_600f_30fps_$AV1_NAME.mp4"
AV1_IVF="${AV1_MP4%.mp4}.ivf"
OPUS_MP4="$WORK/opus_48k_stereo_${ASECONDS}s.mp4"
VORBIS_MP4="$WORK/vorbis_44k_stereo_${ASECONDS}s.mp4"

GEN_AV1=(ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=size=1280x720:rate=30" -frames:v 600
    "${AV1_ENC[@]}" -pix_fmt yuv420p -fflags +bitexact -map_metadata -1 -f mp4)
GEN_AUDIO=(ffmpeg -v error -nostdin -y
    -f lavfi -i "sine=frequency=440:sample_rate=48000" -f lavfi -i "anoisesrc=color=pink:sample_rate=48000:amplitude=0.3"
    -filter_complex "[0:a][1:a]join=inputs=2:channel_layout=stereo[a]" -map "[a]" -t "$ASECONDS")
GEN_OPUS=("${GEN_AUDIO[@]}" -c:a libopus -b:a 128k -map_metadata -1 -f mp4)
GEN_VORBIS=("${GEN_AUDIO[@]}" -ar 44100 -c:a libvorbis -q:a 5 -strict experimental -map_metadata -1 -f mp4)

export SVT_LOG=1   # the SVT-AV1 encoder prints only its errors (make_input: bench_lib.sh)
make_input "$AV1_MP4" "${GEN_AV1[@]}"
if [ ! -s "$AV1_IVF" ]; then
    ffmpeg -v error -nostdin -y -i "$AV1_MP4" -map 0:v -c copy -f ivf "$AV1_IVF.part" \
        || die "could not copy $AV1_MP4 to IVF"
    mv "$AV1_IVF.part" "$AV1_IVF"
fi
make_input "$OPUS_MP4" "${GEN_OPUS[@]}"
make_input "$VORBIS_MP4" "${GEN_VORBIS[@]}"
cat "$AV1_MP4" "$AV1_IVF" "$OPUS_MP4" "$VORBIS_MP4" >/dev/null  # same page-cache state for every run

# ---------------------------------------------------------------- measuring

O=$WORK/codecs
MK_V=("$MK" -q "$AV1_MP4" --video-out "$O.mk.i420" --pixel-format i420)
DAV1D_V=(dav1d -q -i "$AV1_IVF" --muxer yuv -o "$O.dav1d.i420")
DAV1D_NULL=(dav1d -q -i "$AV1_IVF" --muxer null)
FF_V=(ffmpeg -v error -nostdin -y -c:v libdav1d -i "$AV1_MP4" -map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt yuv420p "$O.ffmpeg.i420")
MK_O=("$MK" -q "$OPUS_MP4" --no-trim --audio-out "$O.mk.opus.pcm")
FF_O=(ffmpeg -v error -nostdin -y -ignore_editlist 1 -flags2 +skip_manual -c:a libopus -i "$OPUS_MP4" -map 0:a:0 -f s16le "$O.ffmpeg.opus.pcm")
MK_VB=("$MK" -q "$VORBIS_MP4" --no-trim --audio-out "$O.mk.vorbis.pcm")
FF_VB=(ffmpeg -v error -nostdin -y -ignore_editlist 1 -c:a libvorbis -i "$VORBIS_MP4" -map 0:a:0 -f s16le "$O.ffmpeg.vorbis.pcm")

KEYS=(mk_av1 dav1d_av1 dav1dnull_av1 ffmpeg_av1 mk_opus ffmpeg_opus mk_vorbis ffmpeg_vorbis)
for k in "${KEYS[@]}"; do rm -f "$WORK/$k.times"; done
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    if (( run % 2 )); then
        measure dav1d_av1 "$O.dav1d.i420" "${DAV1D_V[@]}"
        measure mk_av1 "$O.mk.i420" "${MK_V[@]}"
        measure ffmpeg_av1 "$O.ffmpeg.i420" "${FF_V[@]}"
        measure dav1dnull_av1 "" "${DAV1D_NULL[@]}"
        measure ffmpeg_opus "$O.ffmpeg.opus.pcm" "${FF_O[@]}"
        measure mk_opus "$O.mk.opus.pcm" "${MK_O[@]}"
        measure ffmpeg_vorbis "$O.ffmpeg.vorbis.pcm" "${FF_VB[@]}"
        measure mk_vorbis "$O.mk.vorbis.pcm" "${MK_VB[@]}"
    else
        measure mk_av1 "$O.mk.i420" "${MK_V[@]}"
        measure dav1d_av1 "$O.dav1d.i420" "${DAV1D_V[@]}"
        measure dav1dnull_av1 "" "${DAV1D_NULL[@]}"
        measure ffmpeg_av1 "$O.ffmpeg.i420" "${FF_V[@]}"
        measure mk_opus "$O.mk.opus.pcm" "${MK_O[@]}"
        measure ffmpeg_opus "$O.ffmpeg.opus.pcm" "${FF_O[@]}"
        measure mk_vorbis "$O.mk.vorbis.pcm" "${MK_VB[@]}"
        measure ffmpeg_vorbis "$O.ffmpeg.vorbis.pcm" "${FF_VB[@]}"
    fi
done

# ---------------------------------------------------------------- checking the outputs
status=0
check_same() {  # check_same OURS REF WHAT: "identical to WHAT's" or a difference (sets status)
    if cmp -s "$1" "$2"; then
        echo "identical to $3's ($(stat -c %s "$1") bytes)"
    else
        echo "DIFFERS from $3's ($(cmp "$1" "$2" 2>&1 | head -n 1))"
        status=1
    fi
}
check_pcm() {  # check_pcm OURS REF: same length and |diff| <= 1 per s16 sample
    python3 - "$1" "$2" <<'EOF' || status=1
import sys
try:
    import numpy as np
    a = np.fromfile(sys.argv[1], "<i2").astype(np.int32)
    b = np.fromfile(sys.argv[2], "<i2").astype(np.int32)
    n = min(len(a), len(b))
    worst = int(np.abs(a[:n] - b[:n]).max()) if n else 0
except ImportError:
    import array
    a, b = array.array("h"), array.array("h")
    a.frombytes(open(sys.argv[1], "rb").read()); b.frombytes(open(sys.argv[2], "rb").read())
    worst = max((abs(x - y) for x, y in zip(a, b)), default=0)
if len(a) != len(b) or worst > 1:
    print(f"DIFFERS from ffmpeg's: {len(a)} vs {len(b)} samples, max abs diff {worst}")
    sys.exit(1)
print(f"within 1 of ffmpeg's ({len(a)} samples, max abs diff {worst})")
EOF
}
CHECK_AV1_FF=$(check_same "$O.mk.i420" "$O.ffmpeg.i420" "ffmpeg -c:v libdav1d")
CHECK_AV1_DAV1D=$(check_same "$O.mk.i420" "$O.dav1d.i420" "the dav1d tool")
CHECK_OPUS=$(check_pcm "$O.mk.opus.pcm" "$O.ffmpeg.opus.pcm")
CHECK_VORBIS=$(check_pcm "$O.mk.vorbis.pcm" "$O.ffmpeg.vorbis.pcm")
case "$CHECK_AV1_FF$CHECK_AV1_DAV1D$CHECK_OPUS$CHECK_VORBIS" in *DIFFERS*) status=1 ;; esac
if [ "${KEEP_OUTPUTS:-0}" != 1 ]; then
    rm -f "$O".*.i420 "$O".*.pcm
fi

# ---------------------------------------------------------------- report
declare -A WALL RSS
for key in "${KEYS[@]}"; do
    WALL[$key]=$(median "$WORK/$key.times" 1)
    RSS[$key]=$(median "$WORK/$key.times" 2)
done
AV1_TARGET=$(awk -v m="${WALL[mk_av1]}" -v d="${WALL[dav1d_av1]}" 'BEGIN { print (m <= 1.1 * d ? "met" : "missed") }')

row() {  # row CASE TOOL KEY REFKEY OUTPUT TARGET
    echo "| $1 | $2 | ${WALL[$3]} | $(mib "${RSS[$3]}") | $(ratio "${WALL[$3]}" "${WALL[$4]}") | $(ratio "${RSS[$3]}" "${RSS[$4]}") | $5 | $6 |"
}
ROWS=(
    "$(row "AV1 720p -> I420" "dav1d tool" dav1d_av1 dav1d_av1 "reference" "")"
    "$(row "AV1 720p -> I420" "mk-decode (dav1d plugin)" mk_av1 dav1d_av1 "$CHECK_AV1_DAV1D" "wall <= 1.1x dav1d: $AV1_TARGET")"
    "$(row "AV1 720p -> I420" "ffmpeg -c:v libdav1d" ffmpeg_av1 dav1d_av1 "mk-decode's is $CHECK_AV1_FF" "")"
    "$(row "AV1 720p, decode only" "dav1d tool --muxer null" dav1dnull_av1 dav1d_av1 "nothing written" "")"
    "$(row "Opus ${ASECONDS} s -> s16le" "ffmpeg -c:a libopus" ffmpeg_opus ffmpeg_opus "reference" "")"
    "$(row "Opus ${ASECONDS} s -> s16le" "mk-decode (opus plugin)" mk_opus ffmpeg_opus "$CHECK_OPUS" "")"
    "$(row "Vorbis ${ASECONDS} s -> s16le" "ffmpeg -c:a libvorbis" ffmpeg_vorbis ffmpeg_vorbis "reference" "")"
    "$(row "Vorbis ${ASECONDS} s -> s16le" "mk-decode (vorbis plugin)" mk_vorbis ffmpeg_vorbis "$CHECK_VORBIS" "")"
)
TABLE_HEAD="| case | tool | wall s | peak MiB | wall vs ref | peak vs ref | output | target |"
TABLE_RULE="|---|---|---:|---:|---:|---:|---|---|"
echo
echo "$TABLE_HEAD"
echo "$TABLE_RULE"
printf '%s\n' "${ROWS[@]}"
echo


SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo "<!-- bench_codecs.sh:begin -->"
    echo "## Codec plugins: AV1 (dav1d), Opus, Vorbis"
    echo
    echo "Written by \`scripts/bench_codecs.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC')."
    echo
    echo "- Machine: $(nproc) cores, $CPU, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo) RAM (shared: other jobs may run)"
    echo "- Tools: $(ffmpeg -version | head -n 1); dav1d tool $(dav1d --version 2>&1 | head -n 1); MediaKit $REV (release build)"
    echo "- Inputs (made once): \`$AV1_MP4\` (600 frames 1280x720 30 fps, $AV1_NAME) and its IVF copy"
    echo "  \`$AV1_IVF\` for the dav1d tool; \`$OPUS_MP4\` (libopus 128 kb/s); \`$VORBIS_MP4\` (libvorbis q5). Made by:"
    echo "  \`$(q "${GEN_AV1[@]}" "$AV1_MP4")\`,"
    echo "  \`$(q "${GEN_OPUS[@]}" "$OPUS_MP4")\`,"
    echo "  \`$(q "${GEN_VORBIS[@]}" "$VORBIS_MP4")\`"
    echo "- Method: each command $RUNS times, order alternating, under GNU time (\`/usr/bin/time -f '%e %M'\`:"
    echo "  wall seconds, peak RSS); the median is shown. Every decoder writes the same raw output to"
    echo "  \`$WORK/\` on the same disk; the dav1d tool's \`--muxer null\` row writes nothing (decode"
    echo "  cost alone). \"vs ref\" is against the first row of each case. Target (issue 6): AV1 wall"
    echo "  <= 1.1x the dav1d tool's (both writing the I420 file). Audio is decoded untrimmed on both"
    echo "  sides so that the outputs compare sample for sample."
    echo
    echo "Commands:"
    echo
    echo '```sh'
    for c in DAV1D_V MK_V FF_V DAV1D_NULL FF_O MK_O FF_VB MK_VB; do
        declare -n arr=$c
        shown "${arr[@]}"
    done
    echo '```'
    echo
    echo "$TABLE_HEAD"
    echo "$TABLE_RULE"
    printf '%s\n' "${ROWS[@]}"
    echo "<!-- bench_codecs.sh:end -->"
} >"$SECTION"

write_section "$MD" bench_codecs.sh "$SECTION"
note "wrote the results to $MD"
[ "$status" -eq 0 ] || die "an output differs from the reference (see the table)"
