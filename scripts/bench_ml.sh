#!/usr/bin/env bash
# Frames for machine learning (issue 32): torchcodec's published workloads (every frame, the
# first 100, 10 evenly spaced, 10 random, a clip sampler of 8 clips x 16 frames) to RGB, at the
# file's size and at 224x224, with mediakit.VideoDecoder against PyAV 18.1.0 (threads on),
# OpenCV (opencv-python-headless), decord and torchcodec (CPU), all in the same run, each
# checked for frame exactness against ffmpeg as well as timed (scripts/bench_ml.py).
#
# Inputs (made here with ffmpeg, in $WORK/ml): 5 s of testsrc2 at 30 fps (150 frames), H.264
# 1920x1080 with a key frame every 75 frames and every 15, H.264 960x540 every 75, HEVC and AV1
# 1920x1080 every 75. The contenders are installed into $WORK/ml-venv from PyPI: PyAV,
# OpenCV and numpy are required; decord and torch + torchcodec are measured when they install
# and import (torch's wheel pulls ~5 GB of CUDA libraries, used or not; BENCH_ML_TORCH=0 skips
# it). BENCH_RUNS (default 3) runs of each workload, the median kept. Writes its own section of
# BENCHMARKS.md.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

RUNS=${BENCH_RUNS:-3}
VENV="$WORK/ml-venv"
ML="$WORK/ml"
mkdir -p "$ML"

PY=$(venv_with "$VENV" 'import av, cv2, numpy' av==18.1.0 opencv-python-headless numpy)
CONTENDERS=(mediakit pyav opencv)
SKIPPED=()
if "$PY" -c 'import decord' 2>/dev/null || { "$VENV/bin/pip" install -q decord && "$PY" -c 'import decord'; } 2>/dev/null; then
    CONTENDERS+=(decord)
else
    SKIPPED+=("decord (its wheel does not install or import here)")
fi
if [ "${BENCH_ML_TORCH:-1}" = 1 ] && { "$PY" -c 'import torchcodec.decoders' 2>/dev/null \
        || { note "installing torch and torchcodec into $VENV (~5 GB)"; "$VENV/bin/pip" install -q torch torchcodec \
             && "$PY" -c 'import torchcodec.decoders'; } 2>/dev/null; }; then
    CONTENDERS+=(torchcodec)
else
    SKIPPED+=("torchcodec (BENCH_ML_TORCH=0, or torch / torchcodec do not install or import here)")
fi
export PYTHONPATH="$REPO/Bindings/python" MEDIAKIT_LIBRARY="$MK_BIN/libmediakit.so"
VERSIONS=$("$PY" - "${CONTENDERS[@]}" <<'PY'
import importlib, sys
names = {"mediakit": "mediakit", "pyav": "av", "opencv": "cv2", "decord": "decord", "torchcodec": "torchcodec"}
out = []
for c in sys.argv[1:]:
    m = importlib.import_module(names[c])
    v = m.version() if c == "mediakit" else getattr(m, "__version__", "?")
    out.append(f"{c} {v}")
if "torchcodec" in sys.argv[1:]:
    import torch
    out.append(f"torch {torch.__version__}")
print(", ".join(out))
PY
)

# name, then ffmpeg's encoding options
INPUTS=(
    "h264_1080p_gop75|-s 1920x1080|-c:v libx264 -preset veryfast -bf 2 -g 75 -keyint_min 75 -sc_threshold 0"
    "h264_1080p_gop15|-s 1920x1080|-c:v libx264 -preset veryfast -bf 2 -g 15 -keyint_min 15 -sc_threshold 0"
    "h264_540p_gop75|-s 960x540|-c:v libx264 -preset veryfast -bf 2 -g 75 -keyint_min 75 -sc_threshold 0"
    "hevc_1080p_gop75|-s 1920x1080|-c:v libx265 -preset ultrafast -x265-params keyint=75:min-keyint=75:scenecut=0:log-level=error -tag:v hvc1"
    "av1_1080p_gop75|-s 1920x1080|-c:v libsvtav1 -preset 12 -g 75"
)
# (input, size) pairs measured: every input at its own size, the two 1080p H.264 ones at 224x224
CASES=(h264_1080p_gop75:full h264_1080p_gop15:full h264_540p_gop75:full hevc_1080p_gop75:full av1_1080p_gop75:full
       h264_1080p_gop75:224x224 h264_1080p_gop15:224x224)

for spec in "${INPUTS[@]}"; do
    IFS='|' read -r name size opts <<<"$spec"
    f="$ML/$name.mp4"
    [ -s "$f" ] && continue
    note "making $f"
    # shellcheck disable=SC2086  # the options are words
    ffmpeg -v error -nostdin -y -f lavfi -i "testsrc2=$(echo "$size" | cut -d' ' -f2):rate=30" -t 5 -pix_fmt yuv420p $opts "$f.tmp.mp4" \
        || die "could not make $f"
    mv "$f.tmp.mp4" "$f"
done

for case in "${CASES[@]}"; do
    name=${case%%:*}; size=${case##*:}
    f="$ML/$name.mp4"
    ref="$ML/$name.$size.ref.npz"
    [ -s "$ref" ] || "$PY" scripts/bench_ml.py ref "$f" "$size" "$ref" || die "no reference for $case"
    for c in "${CONTENDERS[@]}"; do
        note "$case: $c"
        "$PY" scripts/bench_ml.py "$c" "$f" "$size" "$RUNS" "$ref" "$ML/$name.$size.$c.json" \
            || die "$c failed on $case"
    done
done

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
"$PY" scripts/bench_ml.py report "$ML" "$RUNS" "$REV" "$CPU" "$VERSIONS" "$(date -u +%Y-%m-%d)" \
    "$(printf '%s; ' "${SKIPPED[@]}")" "${CASES[@]}" -- "${CONTENDERS[@]}" >"$SECTION" || die "no report"
cat "$SECTION"
write_section "$MD" bench_ml.sh "$SECTION"

# The floor under the goal's every-frame rows (scripts/bench_ml_floor.py): the least CPU a
# one-thread decode takes, spread over every core, plus storing the RGB bytes, against half
# of PyAV's time for the same frames.
FULL=()
for case in "${CASES[@]}"; do [ "${case##*:}" = full ] && FULL+=("$ML/${case%%:*}.mp4"); done
note "floor of the every-frame workload"
FLOOR_RUNS=$(( RUNS > 5 ? RUNS : 5 ))
{
    echo "<!-- bench_ml_floor:begin -->"
    echo "## Frames for models: the floor under the every-frame workload (scripts/bench_ml_floor.py, $(date -u +%Y-%m-%d))"
    echo
    echo "Revision $REV; $CPU, $(nproc) cores; pyav $("$PY" -c 'import av; print(av.__version__, "(libavcodec", ".".join(map(str, av.library_versions["libavcodec"])) + ")")'), median of $FLOOR_RUNS runs,"
    echo "in-process times (see the script's docstring). Command: \`$(q "$PY" scripts/bench_ml_floor.py "$FLOOR_RUNS" "${FULL[@]}")\`"
    echo "(PYTHONPATH=Bindings/python, MEDIAKIT_LIBRARY=\$MK_BIN/libmediakit.so)."
    echo
    "$PY" scripts/bench_ml_floor.py "$FLOOR_RUNS" "${FULL[@]}" || die "the floor script failed"
    echo "<!-- bench_ml_floor:end -->"
} >"$SECTION"
cat "$SECTION"
write_section "$MD" bench_ml_floor "$SECTION"
