"""Probe, decode to frames, remux and transcode every media file of a folder on a Ray cluster, with progress.

    python3 Samples/python/ray_batch.py FOLDER OUT_DIR [--address ADDR] [--cpus N] [--split-seconds S]
                                        [--size WxH] [--fps R] [--transcode SUFFIX]

Without --address a local cluster is started (--cpus CPUs, default all); with one (e.g.
"auto" on a node of a running cluster) the job runs there: FOLDER and OUT_DIR must then be
paths every node sees (a shared file system). Prints one line per probed file, the decode's
progress (frames, frames per second; --size and --fps scale the pictures and pick them at a
frame rate, as ffmpeg's scale and fps filters), one line per remuxed file and, with
--transcode .m4a (or .opus, .flac ...), one per file whose audio was transcoded into
OUT_DIR/audio; a file that cannot be read is reported and the job goes on. Needs `pip install mediakit[ray]` (or a checkout:
PYTHONPATH=Bindings/python MEDIAKIT_LIBRARY=.build/release/libmediakit.so).
"""
import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Optional

import ray
import ray.data

import mediakit.ray as mkray

MEDIA = {".mp4", ".m4a", ".mov", ".m4v", ".mkv", ".webm", ".ogg", ".opus", ".ivf", ".mp3", ".aac", ".wav", ".flac"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder")
    ap.add_argument("out_dir")
    ap.add_argument("--address", help="a running Ray cluster (default: start a local one)")
    ap.add_argument("--cpus", type=int, default=None, help="CPUs of the local cluster (default: all)")
    ap.add_argument("--split-seconds", type=float, default=None,
                    help="decode files longer than this in key-frame-aligned parts, in parallel")
    ap.add_argument("--size", default=None, help="scale the pictures to WxH (bicubic), e.g. 224x224")
    ap.add_argument("--fps", default=None, help="pictures at this frame rate (ffmpeg's fps filter), e.g. 2 or 30000/1001")
    ap.add_argument("--transcode", default=None, metavar="SUFFIX",
                    help="also transcode each file's audio to OUT_DIR/audio with this suffix (.m4a, .opus, .flac ...)")
    args = ap.parse_args()
    width: Optional[int] = None
    height: Optional[int] = None
    if args.size:
        w, _, h = args.size.lower().partition("x")
        width, height = int(w), int(h)

    paths = sorted(str(p) for p in Path(args.folder).rglob("*") if p.suffix.lower() in MEDIA and p.is_file())
    if not paths:
        sys.exit(f"no media files under {args.folder}")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if args.address:
        ray.init(address=args.address, runtime_env=mkray.runtime_env())
    else:
        ray.init(num_cpus=args.cpus, include_dashboard=False, runtime_env=mkray.runtime_env(), log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    cpus = ray.cluster_resources().get("CPU", 0)  # type: ignore[no-untyped-call]  # Ray's own function has no annotations
    print(f"{len(paths)} files; cluster: {cpus:.0f} CPUs", flush=True)

    # 1. Probe: a row per file.
    t0 = time.perf_counter()
    for row in mkray.read_media(paths, "probe").iter_rows():
        if row["error"]:
            print(f"probe  {row['path']}: ERROR {row['error']}", flush=True)
        else:
            print(f"probe  {row['path']}: {row['duration']:.2f} s, {row['codecs']}, "
                  f"{row['width']}x{row['height']}", flush=True)
    print(f"probe: {time.perf_counter() - t0:.2f} s", flush=True)

    # 2. Decode every video track to NV12 frames (here only counted: a real job would feed a model).
    per_file: Counter[str] = Counter()
    t0, frames, errors, last = time.perf_counter(), 0, 0, 0.0
    ds = mkray.read_media(paths, "frames", split_seconds=args.split_seconds, frame_rate=args.fps, width=width,
                          height=height)
    for batch in ds.iter_batches(batch_size=64, batch_format="numpy"):
        for path, error in zip(batch["path"], batch["error"]):
            if not error:
                per_file[path] += 1
                frames += 1
            else:
                errors += 1
        now = time.perf_counter() - t0
        if now - last >= 1.0:
            print(f"frames: {frames} decoded in {now:.1f} s ({frames / now:.1f} fps), {len(per_file)} files", flush=True)
            last = now
    took = time.perf_counter() - t0
    print(f"frames: {frames} from {len(per_file)} files in {took:.2f} s ({frames / max(took, 1e-9):.1f} fps), "
          f"{errors} files without a decodable video track", flush=True)

    # 3. Remux into OUT_DIR (same relative paths, .mp4), each file written atomically.
    t0, done = time.perf_counter(), 0
    items = ray.data.from_items([{"path": p} for p in paths])
    # (Ray's annotation of map_batches cannot say that fn_kwargs gives remux_batch's target_dir.)
    out = items.map_batches(mkray.remux_batch,  # type: ignore[arg-type]
                            fn_kwargs={"target_dir": args.out_dir, "relative_to": args.folder}, batch_size=1)
    for row in out.iter_rows():
        done += 1
        result = f"-> {row['output']} ({row['size_bytes']} bytes)" if not row["error"] else f"ERROR {row['error']}"
        print(f"remux [{done}/{len(paths)}] {row['path']} {result}", flush=True)
    print(f"remux: {time.perf_counter() - t0:.2f} s", flush=True)

    # 4. Transcode the audio into OUT_DIR/audio (same relative paths), each file written atomically.
    if args.transcode:
        t0, done = time.perf_counter(), 0
        # (fn_kwargs gives transcode_batch's target_dir, which Ray's annotation cannot say either.)
        out = items.map_batches(mkray.transcode_batch, batch_size=1,  # type: ignore[arg-type]
                                fn_kwargs={"target_dir": os.path.join(args.out_dir, "audio"),
                                           "relative_to": args.folder, "suffix": args.transcode})
        for row in out.iter_rows():
            done += 1
            result = f"-> {row['output']} ({row['size_bytes']} bytes)" if not row["error"] else f"ERROR {row['error']}"
            print(f"transcode [{done}/{len(paths)}] {row['path']} {result}", flush=True)
        print(f"transcode: {time.perf_counter() - t0:.2f} s", flush=True)
    ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
