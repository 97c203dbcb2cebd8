#!/usr/bin/env bash
# Opening and probing 1,000 small files in containers only the FFmpeg plugin's libavformat reads
# (issue 31's bench): MediaKit in one process (Python `mediakit.open` on each file: the plugins
# load once) against `ffprobe` run once per file, as a shell loop over a folder runs it; and, for
# the start-up cost alone, `mk-probe` run once per file. Writes its section of BENCHMARKS.md.
#
# Inputs, made once in $WORK/probe1000/: 250 copies each of four 0.2 s files ffmpeg writes:
# FLV (H.264 + AAC), AVI (MPEG-4 part 2 + MP3), ASF (WMV2 + WMA v2) and Sun AU (PCM).
# Every run reads the same bytes from the page cache (a first untimed pass warms it).
# Untimed check: MediaKit finds the track count ffprobe finds in each of the four templates.
# Environment: MK_BIN (release binaries), BENCH_RUNS (pairs, default 3), BENCH_WORK, BENCHMARKS_MD.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
DIR="$WORK/probe1000"
export MEDIAKIT_LIBRARY="$MK_BIN/libmediakit.so" PYTHONPATH="$REPO/Bindings/python"
command -v ffprobe >/dev/null || die "ffprobe not found (run scripts/deps.sh)"
[ -f "$MEDIAKIT_LIBRARY" ] || die "no $MEDIAKIT_LIBRARY: build first (make bench does)"

mkdir -p "$DIR"
if [ "$(ls "$DIR" | wc -l)" -ne 1000 ]; then
    rm -rf "$DIR" && mkdir -p "$DIR"
    src="-f lavfi -i testsrc2=d=0.2:s=160x120:r=25 -f lavfi -i sine=d=0.2:sample_rate=22050"
    ffmpeg -v error -nostdin -y $src -c:v libx264 -c:a aac "$WORK/probe-t.flv"
    ffmpeg -v error -nostdin -y $src -c:v mpeg4 -c:a libmp3lame "$WORK/probe-t.avi"
    ffmpeg -v error -nostdin -y $src -c:v wmv2 -c:a wmav2 "$WORK/probe-t.asf"
    ffmpeg -v error -nostdin -y -f lavfi -i sine=d=0.2:sample_rate=22050 -c:a pcm_s16be "$WORK/probe-t.au"
    for ext in flv avi asf au; do
        for i in $(seq -w 0 249); do cp "$WORK/probe-t.$ext" "$DIR/f$i.$ext"; done
    done
fi

PROBE_PY="$WORK/probe_many.py"
cat >"$PROBE_PY" <<'PY'
import os, sys
import mediakit
folder = sys.argv[1]
tracks = 0
for name in sorted(os.listdir(folder)):
    with mediakit.open(os.path.join(folder, name)) as d:
        tracks += len(d.tracks)
        _ = d.duration, d.container, [(t.codec, t.media_type) for t in d.tracks]
print(tracks)
PY
FFPROBE_SH="$WORK/ffprobe_many.sh"
cat >"$FFPROBE_SH" <<'SH'
for f in "$1"/*; do ffprobe -v error -show_format -show_streams "$f" >/dev/null || exit 1; done
SH
MKPROBE_SH="$WORK/mkprobe_many.sh"
cat >"$MKPROBE_SH" <<'SH'
for f in "$1"/*; do "$2/mk-probe" "$f" >/dev/null || exit 1; done
SH

# The untimed check: the same track counts as ffprobe's for each template.
for ext in flv avi asf au; do
    want=$(ffprobe -v error -show_entries stream=index -of csv=p=0 "$WORK/probe-t.$ext" | wc -l)
    got=$(python3 -c "import mediakit,sys; d=mediakit.open(sys.argv[1]); print(len(d.tracks))" "$WORK/probe-t.$ext")
    [ "$want" = "$got" ] || die "$ext: MediaKit finds $got tracks, ffprobe $want"
done
total=$(python3 "$PROBE_PY" "$DIR")
note "check: 1000 files, $total tracks found (ffprobe's counts per template agree)"

cat "$DIR"/* >/dev/null   # the page cache
rm -f "$WORK"/probe_{mk,ff,mkp}.times
for _ in $(seq "$RUNS"); do
    measure probe_mk "" python3 "$PROBE_PY" "$DIR"
    measure probe_ff "" bash "$FFPROBE_SH" "$DIR"
    measure probe_mkp "" bash "$MKPROBE_SH" "$DIR" "$MK_BIN"
done
mk=$(median "$WORK/probe_mk.times" 1); ff=$(median "$WORK/probe_ff.times" 1); mkp=$(median "$WORK/probe_mkp.times" 1)
mkm=$(median "$WORK/probe_mk.times" 2); ffm=$(median "$WORK/probe_ff.times" 2); mkpm=$(median "$WORK/probe_mkp.times" 2)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

SECTION="$WORK/bench_probe_fallback.md"
{
    echo "<!-- bench_probe_fallback:begin -->"
    echo "## Opening 1,000 small files through the fallback demuxer (issue 31)"
    echo
    echo "Written by \`scripts/bench_probe_fallback.sh\` (\`make bench\`) on $(date -u '+%Y-%m-%d %H:%M') UTC, MediaKit"
    echo "$(git -C "$REPO" rev-parse --short HEAD), $(ffprobe -version | head -n 1 | cut -d' ' -f1-3); load average $(cut -d' ' -f1-3 /proc/loadavg) at the end."
    echo "Input: \`$DIR\`, 250 copies each of 0.2 s FLV (H.264 + AAC), AVI (MPEG-4 + MP3), ASF (WMV2 + WMA v2) and"
    echo "AU (PCM) files made by ffmpeg: containers no built-in reader takes, so every open goes through"
    echo "the FFmpeg plugin's libavformat. Each command $RUNS times, in turn, under GNU time; medians."
    echo
    table "| Command | wall | vs ffprobe per file | peak RSS |" "|---|---|---|---|" \
        "| \`python3 probe_many.py DIR\` (one process: \`mediakit.open\` on each file, tracks and duration read) | $mk s | $(ratio "$mk" "$ff")x | $((mkm / 1024)) MiB |" \
        "| \`for f in DIR/*; do ffprobe -v error -show_format -show_streams \$f; done\` | $ff s | 1x | $((ffm / 1024)) MiB |" \
        "| \`for f in DIR/*; do mk-probe \$f; done\` (start-up and plugin load per file) | $mkp s | $(ratio "$mkp" "$ff")x | $((mkpm / 1024)) MiB |"
    echo
    echo "The issue's goal is at most 0.5x ffprobe per file for the one-process case."
    echo "<!-- bench_probe_fallback:end -->"
} >"$SECTION"
write_section "$MD" bench_probe_fallback "$SECTION"
note "one process $mk s, ffprobe per file $ff s, mk-probe per file $mkp s (wrote $MD)"
