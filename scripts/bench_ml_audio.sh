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
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PY="$VENV/bin/python"
if ! "$PY" -c 'import av, numpy, soundfile, soxr' 2>/dev/null; then
    "$VENV/bin/pip" install -q av==18.1.0 numpy soundfile soxr || die "could not install PyAV / soundfile / soxr"
fi
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
"$PY" - "$AU" "$REPEATS" "$REV" "$CPU" "$(date -u +%Y-%m-%d)" "${rows[@]}" -- "${CONTENDERS[@]}" >"$SECTION" <<'PY'
import json, sys
au, repeats, rev, cpu, day = sys.argv[1:6]
rest = sys.argv[6:]
rows, contenders = rest[:rest.index("--")], rest[rest.index("--") + 1:]
peers = [c for c in contenders if c != "mediakit"]
print("<!-- bench_ml_audio.sh:begin -->")
print(f"## Audio for models: 1 s files to float32 (scripts/bench_ml_audio.sh, {day})")
print()
print(f"Revision {rev}; {cpu}. Milliseconds per open + decode of the whole file to float32 (channels, samples),")
print(f"median of {repeats} in one process after a first call (imports and codec loading not timed). `16000`:")
print("resampled to 16 kHz (mediakit's resampler, torchcodec's and PyAV's swresample, soundfile's samples")
print("through `soxr.resample` at its default quality). `diff`: the largest difference from ffmpeg's decode")
print("(`-f f32le`; with `-ar 16000` for the resampled rows: ffmpeg's swresample, not a bit-exact oracle for")
print("another resampler) in s16 steps, and the sample count when it differs from ffmpeg's.")
print()
print("| file | rate | " + " | ".join(f"{c} ms" for c in contenders) + " | fastest peer / mediakit | " + " | ".join(f"{c} diff" for c in contenders) + " |")
print("|---|---|" + "---:|" * len(contenders) + "---:|" + "---|" * len(contenders))
met = total = 0
for row in rows:
    ext, rate = row.split(":")
    res = {}
    for c in contenders:
        with open(f"{au}/{ext}.{rate}.{c}.json") as f:
            res[c] = json.load(f)
    cells, diffs = [], []
    for c in contenders:
        r = res[c]
        if "error" in r:
            cells.append("fails")
            diffs.append(r["error"].split(":")[0])
            continue
        cells.append(f"{r['ms']:.2f}")
        d = f"{r['max_diff_s16']:.1f}"
        if r["samples"] != r["ref_samples"]:
            d += f" ({r['samples']} samples, ffmpeg {r['ref_samples']})"
        diffs.append(d)
    ok = [res[c]["ms"] for c in peers if "error" not in res[c]]
    if ok and "error" not in res["mediakit"]:
        ratio = min(ok) / res["mediakit"]["ms"]
        total += 1
        met += ratio >= 2
        verdict = f"{ratio:.2f}x"
    else:
        verdict = "n/a"
    print(f"| {ext} | {rate} | " + " | ".join(cells) + f" | {verdict} | " + " | ".join(diffs) + " |")
print()
print(f"Goal (issue 32): at least 2x the fastest peer. Met on {met} of {total} rows.")
print("<!-- bench_ml_audio.sh:end -->")
PY
cat "$SECTION"
write_section "$MD" bench_ml_audio.sh "$SECTION"
