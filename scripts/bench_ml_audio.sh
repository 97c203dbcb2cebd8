#!/usr/bin/env bash
# Audio for machine learning (issue 32 item 4): 1 s files of WAV, FLAC, Opus, MP3 and AAC opened
# and decoded to float32 (channels, samples) by mediakit.AudioDecoder against torchcodec's
# AudioDecoder, soundfile and PyAV, at the file's rate and resampled to 16 kHz (soundfile's
# samples through soxr.resample), each output compared with ffmpeg's decode (scripts/
# bench_ml_audio.py). Contenders come from bench_ml.sh's venv ($WORK/ml-venv; soundfile and
# soxr are added to it); BENCH_REPEATS (default 50) opens + decodes per contender and file, the
# median kept. Writes its own section of BENCHMARKS.md.
set -euo pipefail
# shellcheck source=bench_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/bench_lib.sh"

REPEATS=${BENCH_REPEATS:-50}
VENV="$WORK/ml-venv"
AU="$WORK/ml-audio"
mkdir -p "$AU"
PY=$(venv_with "$VENV" 'import av, numpy, soundfile, soxr' av==18.1.0 numpy soundfile soxr)
CONTENDERS=(mediakit soundfile pyav)
"$PY" -c 'import torchcodec.decoders' 2>/dev/null && CONTENDERS+=(torchcodec)
export PYTHONPATH="$REPO/Bindings/python" MEDIAKIT_LIBRARY="$MK_BIN/libmediakit.so"

# name, ffmpeg's encoding options (1 s of two tones, stereo, 44.1 kHz; Opus at 48 kHz)
INPUTS=("wav|-c:a pcm_s16le" "flac|-c:a flac" "opus|-c:a libopus -b:a 96k -ar 48000" "mp3|-c:a libmp3lame -b:a 192k" "m4a|-c:a aac -b:a 128k")
for spec in "${INPUTS[@]}"; do
    IFS='|' read -r ext opts <<<"$spec"
    f="$AU/tone_1s.$ext"
    [ -s "$f" ] && continue
    # shellcheck disable=SC2086  # the options are words
    ffmpeg -v error -nostdin -y -f lavfi -i "aevalsrc=0.4*sin(2*PI*440*t)|0.3*sin(2*PI*660*t):s=44100:d=1" $opts "$f.tmp.$ext" \
        || die "could not make $f"
    mv "$f.tmp.$ext" "$f"
done

rows=()
for spec in "${INPUTS[@]}"; do
    ext=${spec%%|*}
    f="$AU/tone_1s.$ext"
    for rate in native 16000; do
        ref="$AU/tone_1s.$ext.$rate.f32"
        ar=(); [ "$rate" = native ] || ar=(-ar "$rate")
        ffmpeg -v error -nostdin -y -i "$f" "${ar[@]}" -f f32le "$ref" || die "no reference for $f"
        for c in "${CONTENDERS[@]}"; do
            "$PY" scripts/bench_ml_audio.py "$c" "$f" "$rate" "$REPEATS" "$ref" 2 "$AU/$ext.$rate.$c.json" || die "$c failed on $f"
        done
        rows+=("$ext:$rate")
    done
done

SECTION=$(mktemp)
trap 'rm -f "$SECTION"' EXIT
"$PY" scripts/bench_ml_audio.py report "$AU" "$REPEATS" "$REV" "$CPU" "$(date -u +%Y-%m-%d)" "${rows[@]}" -- \
    "${CONTENDERS[@]}" >"$SECTION" || die "no report"
cat "$SECTION"
write_section "$MD" bench_ml_audio.sh "$SECTION"
