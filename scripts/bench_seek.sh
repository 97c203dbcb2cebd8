#!/usr/bin/env bash
# Seek benchmark (issue 14): 20 random sample-accurate seeks in the 1080p 60 s H.264 + AAC file
# of scripts/bench.sh (made once in bench-work/), the picture presented at each time written as
# NV12, in the same run:
#   - mk-decode --at T1,...,T20: one process, DecodeSession.frames(at:from:) (each GOP decoded
#     at most once, the GOPs between targets read but not decoded);
#   - 20 `mk-decode --seek T --frames 1` processes;
#   - 20 `ffmpeg -ss T -i IN -frames:v 1` processes (the issue's reference);
#   - PyAV 18.1.0 (as scripts/bench_python.sh installs it) in one process: for each time,
#     container.seek(pts, stream=video) then decode forward to the first frame at or after it,
#     frame.to_ndarray(format="nv12").
# The times come from a fixed seed, leaving out the spans between a key frame's dts and its pts
# (ffmpeg's mov demuxer seeks by dts and misses frames there; see Tests/oracle/test_seek.py).
# Every contender's pictures are checked against ffmpeg's, byte for byte.
# Median wall time of BENCH_RUNS runs (default 3, the contenders alternating).
#
# Usage: make bench        (or: MK_BIN=DIR scripts/bench_seek.sh)
# Environment: MK_BIN, BENCH_RUNS, BENCH_WORK, BENCHMARKS_MD as scripts/bench.sh.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
MK="$MK_BIN/mk-decode"
[ -x "$MK" ] || die "mk-decode not found in $MK_BIN; run 'make build' first"
MK_SHOWN=${MK#"$REPO"/}

h264_bench_input 1920x1080 60

VENV="$WORK/pyav-venv"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import av, numpy' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q av==18.1.0 numpy || die "could not install PyAV 18.1.0"
fi
PY="$VENV/bin/python"

# 20 times, seeded, outside the key frames' dts..pts spans.
TIMES=$(python3 - "$IN" <<'PY'
import random, subprocess, sys
from fractions import Fraction
path = sys.argv[1]
tb = Fraction(subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=time_base",
                              "-of", "csv=p=0", path], capture_output=True, text=True, check=True).stdout.strip())
duration = float(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path],
                                capture_output=True, text=True, check=True).stdout)
gaps = []
for line in subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,dts,flags",
                            "-of", "csv=p=0", path], capture_output=True, text=True, check=True).stdout.split():
    pts, dts, flags = line.split(",")[:3]
    if "K" in flags and int(dts) < int(pts):
        gaps.append((float(int(dts) * tb) - 0.001, float(int(pts) * tb) + 0.001))
rng = random.Random(14)
times = []
while len(times) < 20:
    t = round(rng.uniform(0.0, duration - 1.0), 3)
    if not any(a <= t <= b for a, b in gaps):
        times.append(t)
print(",".join(map(str, times)))
PY
)
IFS=, read -r -a T_LIST <<<"$TIMES"
note "times: $TIMES"

OUT="$WORK/seek"
cat >"$WORK/bench_seek_pyav.py" <<'PY'
import sys
from fractions import Fraction
import av
path, times, out = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
with av.open(path) as c, open(out, "wb") as f:
    v = c.streams.video[0]
    for t in times:
        target = int(Fraction(t) / v.time_base + Fraction(1, 2))   # as ffmpeg's trim rounds -ss
        c.seek(target, stream=v)                                   # the key frame at or before it
        for frame in c.decode(v):
            if frame.pts is not None and frame.pts >= target:
                f.write(frame.to_ndarray(format="nv12").tobytes())
                break
PY

FF_LOOP=$(printf 'ffmpeg -v error -nostdin -y -ss %s -i "$1" -map 0:v:0 -frames:v 1 -f rawvideo -pix_fmt nv12 - >>"$2"; ' "${T_LIST[@]}")
MK_LOOP=$(printf '"$3" "$1" --video-out "$2.one" --seek %s --frames 1 -q && cat "$2.one" >>"$2"; ' "${T_LIST[@]}")
KEYS=(mk_batch mk_processes ffmpeg_processes pyav)
rm -f "$WORK"/seek_*.times
for ((run = 1; run <= RUNS; run++)); do
    note "run $run/$RUNS"
    measure seek_mk_batch "$OUT.mk_batch.nv12" "$MK" "$IN" --video-out "$OUT.mk_batch.nv12" --at "$TIMES" -q
    measure seek_mk_processes "$OUT.mk_processes.nv12" bash -c "$MK_LOOP" _ "$IN" "$OUT.mk_processes.nv12" "$MK"
    measure seek_ffmpeg_processes "$OUT.ffmpeg_processes.nv12" bash -c "$FF_LOOP" _ "$IN" "$OUT.ffmpeg_processes.nv12"
    measure seek_pyav "$OUT.pyav.nv12" "$PY" "$WORK/bench_seek_pyav.py" "$IN" "$TIMES" "$OUT.pyav.nv12"
done

REF="$OUT.ffmpeg_processes.nv12"
FRAME=$((1920 * 1080 * 3 / 2))
[ "$(stat -c %s "$REF")" -eq $((20 * FRAME)) ] || die "ffmpeg wrote $(stat -c %s "$REF") bytes, not 20 pictures"
for k in mk_batch mk_processes pyav; do
    cmp -s "$OUT.$k.nv12" "$REF" || die "$k: the pictures differ from ffmpeg -ss T's (cmp $OUT.$k.nv12 $REF)"
done
note "every contender's 20 pictures are byte-identical to ffmpeg's"

declare -A W
for k in "${KEYS[@]}"; do W[$k]=$(median "$WORK/seek_$k.times" 1); done
met() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b) ? "met" : "missed" }'; }
SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
{
    echo '<!-- bench_seek.sh:begin -->'
    echo "## Seeking: 20 random sample-accurate seeks in the 1080p file (scripts/bench_seek.sh, $(date -u +%Y-%m-%d))"
    echo
    echo "Input: \`$IN\` (x264's default key frame interval, 250 frames: 8.3 s). Times (seed 14, outside the key frames'"
    echo "dts..pts spans): $TIMES. Each writes the picture presented at each time as NV12; all four outputs are byte-identical"
    echo "to ffmpeg's. Machine: $CPU, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg). Revision $REV. Median wall time of $RUNS runs."
    echo
    echo '| contender | wall s | vs ffmpeg processes | vs PyAV |'
    echo '|---|---:|---:|---:|'
    for k in "${KEYS[@]}"; do
        echo "| $k | ${W[$k]} | $(ratio "${W[$k]}" "${W[ffmpeg_processes]}") | $(ratio "${W[$k]}" "${W[pyav]}") |"
    done
    echo
    echo "Targets (issue 14): MediaKit's 20 seeks faster than 20 \`ffmpeg -ss T -i IN -frames:v 1\` processes:"
    echo "$(met "${W[mk_batch]}" "${W[ffmpeg_processes]}") (one process, \`mk-decode --at\`), $(met "${W[mk_processes]}" "${W[ffmpeg_processes]}") (20 \`mk-decode --seek T --frames 1\` processes);"
    echo "faster than PyAV's seek + decode-forward loop: $(met "${W[mk_batch]}" "${W[pyav]}") (\`mk-decode --at\`)."
    echo
    echo "Commands: \`$(shown "$MK" IN --video-out OUT --at T1,...,T20 -q)\`; \`$(shown "$MK" IN --video-out OUT --seek T --frames 1 -q)\` x 20;"
    echo "\`ffmpeg -ss T -i IN -map 0:v:0 -frames:v 1 -f rawvideo -pix_fmt nv12 -\` x 20; PyAV: \`container.seek(pts, stream=v)\`, then"
    echo "\`for frame in container.decode(v)\` up to the first frame at or after the time, \`frame.to_ndarray(format=\"nv12\")\`."
    echo '<!-- bench_seek.sh:end -->'
} >"$SECTION"
cat "$SECTION"
write_section "$MD" bench_seek.sh "$SECTION"
