"""The least time any library built on libavcodec / dav1d can take for bench_ml.sh's "every
frame" workload, against issue 32's goal (at least 2x the fastest peer): run by bench_ml.sh
after its table, or alone:

    python scripts/bench_ml_floor.py RUNS FILE...

For each FILE (bench_ml.sh's inputs, at their own size):

- the decoder's work: the CPU seconds (`time.process_time`, in-process, the file's opening
  included) of decoding every frame on ONE thread, with no conversion: PyAV (the libavcodec /
  libdav1d of its wheel) and mediakit (`mediakit.DecodeSession`, the system's libavcodec / libdav1d).
  One thread is the least work a decode takes (frame threads add synchronisation); spread
  perfectly over every core of the machine, with nothing else to do (no RGB conversion, no
  copy), it cannot end before `least CPU / cores` seconds: the floor;
- libavcodec's own fastest decode as it is: PyAV's decode of every frame with its threads on
  and no conversion, wall seconds (what frame threads make of the one-thread work here);
- mediakit's own least work for the workload: the same on one thread with its RGB conversion
  (`VideoDecoder(threads=1)`, batches of 8 into one reused array, as bench_ml.py's "all");
- the peer: PyAV's wall seconds for every frame to an RGB array (`thread_type = "AUTO"`,
  `to_ndarray(format="rgb24")`), measured as bench_ml.py measures (in the process, imports not
  timed; the file's opening timed). Half of it is the goal's time.

A floor above the goal's time means no decoder as fast as libavcodec's can meet the goal on
this machine. Medians of RUNS runs. Prints a Markdown table on standard output."""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

import av  # type: ignore[import-not-found]

import mediakit


def pyav_decode(path: str, threaded: bool = False) -> int:
    with av.open(path) as container:
        stream = container.streams.video[0]
        if threaded:
            stream.thread_type = "AUTO"
        else:
            stream.thread_type = "SLICE"
            stream.codec_context.thread_count = 1
        return sum(1 for _ in container.decode(stream))


def pyav_decode_threaded(path: str) -> int:
    return pyav_decode(path, threaded=True)


def mediakit_decode(path: str) -> int:
    with mediakit.open(path) as demuxer:
        track = next(t for t in demuxer.tracks if t.media_type == "video")
        decoder = mediakit.DecodeSession(track, threads=1)
        return sum(1 for _ in decoder.frames(p for p in demuxer.packets() if p.stream_index == track.index))


def store(frames: int, width: int, height: int) -> Callable[[str], int]:
    """Writes `frames` RGB pictures of width x height (a memset each) into one reused array:
    the least any conversion to RGB costs is storing its bytes."""
    import numpy as np
    out = np.empty((8, height, width, 3), dtype=np.uint8)

    def run(_path: str) -> int:
        for i in range(frames):
            out[i % 8].fill(i & 0xFF)
        return frames
    return run


def mediakit_rgb(path: str) -> int:
    with mediakit.VideoDecoder(path, threads=1) as decoder:
        out = None
        for start in range(0, len(decoder), 8):
            stop = min(len(decoder), start + 8)
            if out is None or len(out) != stop - start:
                out = decoder.get_frames_in_range(start, stop).data   # allocated once per size
            else:
                decoder.get_frames_in_range(start, stop, out=out)
        return len(decoder)


def pyav_rgb(path: str) -> int:
    with av.open(path) as container:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"
        n = 0
        for frame in container.decode(stream):
            frame.to_ndarray(format="rgb24")
            n += 1
        return n


def timed(run: Callable[[str], int], path: str, runs: int) -> tuple[float, float, int]:
    """Median wall and CPU seconds of `runs` runs (after one not counted), and the frames."""
    frames = run(path)
    walls, cpus = [], []
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        if run(path) != frames:
            raise SystemExit(f"{path}: the frame count changed between runs")
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), frames


def main() -> None:
    runs = int(sys.argv[1])
    cores = len(os.sched_getaffinity(0))
    print(f"| input | frames | least CPU to decode, 1 thread: PyAV s | mediakit s | storing the RGB pictures s | floor on {cores} cores s "
          f"| PyAV decode only, threads on, wall s | mediakit with RGB, 1 thread, CPU s | its floor s "
          f"| PyAV, every frame to RGB (threads on) s | goal: half of it s | floor / goal | threaded decode / goal | mediakit's floor / goal |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for path in sys.argv[2:]:
        _, pyav_cpu, n = timed(pyav_decode, path, runs)
        _, mk_cpu, n_mk = timed(mediakit_decode, path, runs)
        threaded, _, _ = timed(pyav_decode_threaded, path, runs)
        _, mk_rgb_cpu, n_mk_rgb = timed(mediakit_rgb, path, runs)
        peer, _, n_rgb = timed(pyav_rgb, path, runs)
        if not n == n_mk == n_rgb == n_mk_rgb:
            raise SystemExit(f"{path}: frame counts differ: PyAV {n}, mediakit {n_mk}, PyAV RGB {n_rgb}, mediakit RGB {n_mk_rgb}")
        with mediakit.VideoDecoder(path) as decoder:
            width, height = decoder.metadata.width, decoder.metadata.height
        _, store_cpu, _ = timed(store(n, width, height), path, runs)
        floor = (min(pyav_cpu, mk_cpu) + store_cpu) / cores
        goal = peer / 2
        print(f"| {Path(path).stem} | {n} | {pyav_cpu:.3f} | {mk_cpu:.3f} | {store_cpu:.3f} | {floor:.3f} | {threaded:.3f} | {mk_rgb_cpu:.3f} | "
              f"{mk_rgb_cpu / cores:.3f} | {peer:.3f} | {goal:.3f} | {floor / goal:.2f} | {threaded / goal:.2f} | "
              f"{mk_rgb_cpu / cores / goal:.2f} |")


if __name__ == "__main__":
    main()
