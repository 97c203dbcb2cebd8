"""One contender of scripts/bench_ml_audio.sh: 1 s audio files to float32 tensors.

    python bench_ml_audio.py CONTENDER FILE RATE|native REPEATS REF.f32 CHANNELS OUT.json
    python bench_ml_audio.py report DIR REPEATS REV CPU DAY EXT:RATE... -- CONTENDER...

CONTENDER: mediakit, torchcodec, soundfile, pyav, soundfile+soxr. Opens and decodes FILE to
float32 (channels, samples) REPEATS times in this process (imports not timed; each repeat opens
the file, as a data loader does per sample), at the file's rate or resampled to RATE Hz (soxr:
soundfile's decode, then soxr.resample at its default quality, "HQ"). Writes the median and the
fastest time of one open + decode, and how the last output differs from the oracle REF.f32
(ffmpeg's decode, `-f f32le`, resampled by ffmpeg's swresample when RATE is given): its length,
and the largest difference in s16 steps (1/32768) over the common length.
"""
from __future__ import annotations

import json
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

from bench_ml import load_results, versus_fastest_peer


def run_mediakit(path: str, rate: int | None) -> Any:
    import mediakit
    with mediakit.AudioDecoder(path, sample_rate=rate) as dec:
        return dec.get_all_samples().data


def run_torchcodec(path: str, rate: int | None) -> Any:
    from torchcodec.decoders import AudioDecoder
    return AudioDecoder(path, sample_rate=rate).get_all_samples().data.numpy()


def run_soundfile(path: str, rate: int | None) -> Any:
    import soundfile
    data, sr = soundfile.read(path, dtype="float32", always_2d=True)
    if rate is not None and rate != sr:
        import soxr
        data = soxr.resample(data, sr, rate)
    return data.T


def run_pyav(path: str, rate: int | None) -> Any:
    import av
    with av.open(path) as c:
        s = c.streams.audio[0]
        resampler = av.AudioResampler(format="fltp", layout=s.layout, rate=rate or s.rate)
        parts = []
        for frame in c.decode(s):
            for f in resampler.resample(frame):
                parts.append(f.to_ndarray())
        for f in resampler.resample(None):
            parts.append(f.to_ndarray())
        return np.concatenate(parts, axis=1)


CONTENDERS: dict[str, Callable[[str, int | None], Any]] = {
    "mediakit": run_mediakit, "torchcodec": run_torchcodec, "soundfile": run_soundfile, "pyav": run_pyav}


def report(argv: list[str]) -> int:
    """The Markdown section of BENCHMARKS.md from DIR/EXT.RATE.CONTENDER.json, on standard output."""
    au, repeats, rev, cpu, day = argv[:5]
    rest = argv[5:]
    rows, contenders = rest[:rest.index("--")], rest[rest.index("--") + 1:]
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
    print("| file | rate | " + " | ".join(f"{c} ms" for c in contenders) + " | fastest peer / mediakit | "
          + " | ".join(f"{c} diff" for c in contenders) + " |")
    print("|---|---|" + "---:|" * len(contenders) + "---:|" + "---|" * len(contenders))
    met = total = 0
    for row in rows:
        ext, rate = row.split(":")
        res = load_results(f"{au}/{ext}.{rate}", contenders)
        cells, diffs, valid = [], [], {}
        for c in contenders:
            r = res[c]
            if "error" in r:
                cells.append("fails")
                diffs.append(r["error"].split(":")[0])
                continue
            valid[c] = r["ms"]
            cells.append(f"{r['ms']:.2f}")
            d = f"{r['max_diff_s16']:.1f}"
            if r["samples"] != r["ref_samples"]:
                d += f" ({r['samples']} samples, ffmpeg {r['ref_samples']})"
            diffs.append(d)
        ratio = versus_fastest_peer(valid)
        if ratio is not None:
            total += 1
            met += ratio >= 2
        print(f"| {ext} | {rate} | " + " | ".join(cells) + f" | {'n/a' if ratio is None else f'{ratio:.2f}x'} | "
              + " | ".join(diffs) + " |")
    print()
    print(f"Goal (issue 32): at least 2x the fastest peer. Met on {met} of {total} rows.")
    print("<!-- bench_ml_audio.sh:end -->")
    return 0


def main() -> int:
    if sys.argv[1] == "report":
        return report(sys.argv[2:])
    who, path, rate_arg, repeats, ref_path, channels, out_path = sys.argv[1:8]
    rate = None if rate_arg == "native" else int(rate_arg)
    ref = np.fromfile(ref_path, dtype="<f4").reshape(-1, int(channels)).T
    fn = CONTENDERS[who]
    if who == "torchcodec":
        import torch
        torch.set_num_threads(1)
    times: list[float] = []
    result: dict[str, Any] = {}
    try:
        fn(path, rate)   # warm: the first call loads codec libraries / plugins
        for _ in range(int(repeats)):
            t0 = time.perf_counter()
            data = fn(path, rate)
            times.append(time.perf_counter() - t0)
        data = np.asarray(data, dtype=np.float32)
        n = min(data.shape[1], ref.shape[1])
        diff = float(np.max(np.abs(data[:, :n] - ref[:, :n]))) * 32768 if n and data.shape[0] == ref.shape[0] else float("inf")
        result = {"ms": statistics.median(times) * 1000, "best_ms": min(times) * 1000, "samples": int(data.shape[1]),
                  "channels": int(data.shape[0]), "ref_samples": int(ref.shape[1]), "max_diff_s16": diff}
    except Exception as e:      # a contender that cannot read the file: reported, not fatal
        result = {"error": f"{type(e).__name__}: {e}"[:160]}
    with open(out_path, "w") as f:
        json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
