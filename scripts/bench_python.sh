#!/usr/bin/env bash
# Python benchmark (issue 5): the mediakit bindings against PyAV 18.1.0 (the library a
# Python user would otherwise use), in the same run, on the 1080p 60 s file that
# scripts/bench.sh generates: (a) iterating every packet, (b) decoding every video
# frame to an NV12 numpy array (PyAV with its default settings:
# frame.to_ndarray(format="nv12")). PyAV is installed into bench-work/pyav-venv.
# Median of 3 runs each; writes its own section of BENCHMARKS.md.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

die() { printf 'bench_python: error: %s\n' "$*" >&2; exit 1; }
WORK=${BENCH_WORK:-bench-work}
MD=${BENCHMARKS_MD:-BENCHMARKS.md}
RUNS=${BENCH_RUNS:-3}
MK_BIN=${MK_BIN:-$(swift build -c release --show-bin-path)}
IN=$(ls "$WORK"/h264_1920x1080_60s_*.mp4 2>/dev/null | head -n 1)
[ -n "$IN" ] || die "no benchmark input in $WORK: run scripts/bench.sh first (make bench does)"

VENV="$WORK/pyav-venv"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import av, numpy' 2>/dev/null; then
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q av==18.1.0 numpy || die "could not install PyAV 18.1.0"
fi
PY="$VENV/bin/python"
export MEDIAKIT_LIBRARY="$MK_BIN/libmediakit.so" PYTHONPATH="$PWD/Bindings/python"

SCRIPT="$WORK/bench_python.py"
cat >"$SCRIPT" <<'PY'
import sys, time
import numpy as np
which, task, path = sys.argv[1:4]
t0 = time.perf_counter()
n = 0
if which == "pyav":
    import av
    with av.open(path) as c:
        if task == "packets":
            for p in c.demux():
                n += 1
        else:
            for f in c.decode(video=0):
                a = f.to_ndarray(format="nv12"); n += 1
else:
    import mediakit
    with mediakit.open(path) as d:
        if task == "packets":
            for p in d:
                n += 1
        else:
            v = next(t for t in d.tracks if t.media_type == "video")
            with mediakit.DecodeSession(v) as dec:
                for p in d.packets(v):
                    for f in dec.decode(p):
                        a = f.to_numpy(); n += 1
                for f in dec.flush():
                    a = f.to_numpy(); n += 1
print(f"{time.perf_counter() - t0:.3f} {n}")
PY

declare -A T N
for task in packets nv12; do
    for which in pyav mediakit; do
        times=()
        n_runs=$RUNS
        [ "$task" = packets ] && n_runs=$((RUNS > 11 ? RUNS : 11))   # ~60 ms a run: more runs against noise
        for _ in $(seq "$n_runs"); do
            read -r t n < <("$PY" "$SCRIPT" "$which" "$task" "$IN")
            times+=("$t"); N[$which-$task]=$n
        done
        T[$which-$task]=$(printf '%s\n' "${times[@]}" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}')
    done
done

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
{
    echo '<!-- bench_python.sh:begin -->'
    echo "## Python: mediakit against PyAV 18.1.0 (scripts/bench_python.sh, $(date -u +%Y-%m-%d))"
    echo
    echo "Input: \`$IN\`. Machine: $(nproc) cores. Median of $RUNS runs (11 for packet iteration), wall seconds measured in the"
    echo "Python process (time.perf_counter around the loop; interpreter start-up excluded)."
    echo
    echo '| task | PyAV s | mediakit s | PyAV / mediakit | target |'
    echo '|---|---:|---:|---:|---|'
    p=$(ratio "${T[pyav-packets]}" "${T[mediakit-packets]}")
    echo "| iterate every packet (${N[mediakit-packets]} packets) | ${T[pyav-packets]} | ${T[mediakit-packets]} | ${p}x | >= 1x: $(awk -v r="$p" 'BEGIN{print (r>=1)?"met":"missed"}') |"
    d=$(ratio "${T[pyav-nv12]}" "${T[mediakit-nv12]}")
    echo "| decode every frame to an NV12 numpy array (${N[mediakit-nv12]} frames) | ${T[pyav-nv12]} | ${T[mediakit-nv12]} | ${d}x | >= 2x: $(awk -v r="$d" 'BEGIN{print (r>=2)?"met":"missed"}') |"
    echo
    echo "PyAV: \`for p in container.demux()\` and \`for f in container.decode(video=0): f.to_ndarray(format=\"nv12\")\`;"
    echo "mediakit: \`for p in demuxer\` and \`Decoder(track).decode(packet)\` -> \`frame.to_numpy()\`."
    echo '<!-- bench_python.sh:end -->'
} >"$SECTION"
cat "$SECTION"
[ "${N[pyav-nv12]}" = "${N[mediakit-nv12]}" ] || die "frame counts differ: PyAV ${N[pyav-nv12]}, mediakit ${N[mediakit-nv12]}"
write_section "$MD" bench_python.sh "$SECTION"
