"""One contender of scripts/bench_ml_audio.sh: 1 s audio files to float32 tensors.

    python bench_ml_audio.py CONTENDER FILE RATE|native REPEATS REF.f32 CHANNELS OUT.json

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


def main() -> int:
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
