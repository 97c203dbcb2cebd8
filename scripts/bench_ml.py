"""One contender of scripts/bench_ml.sh: frames for machine learning, torchcodec's workloads.

    python bench_ml.py CONTENDER FILE WxH|full RUNS REF.npz OUT.json
    python bench_ml.py ref FILE WxH|full REF.npz
    python bench_ml.py report DIR RUNS REV CPU VERSIONS DAY SKIPPED NAME:SIZE... -- CONTENDER...

CONTENDER: mediakit, pyav, opencv, decord or torchcodec. Runs each workload RUNS times in this
process (the interpreter's start and the imports are not timed; opening the file is, in every
run, as a data loader opens a file per sample) and writes, per workload, the times and the
frames' identity to OUT.json:

- all: every frame, in order (iterated, 8 at a time where the library takes batches)
- first100: frames 0 .. 99
- uniform10: 10 frames evenly spaced over the file
- random10: 10 random frames (seeded; asked in increasing order)
- clips8x16: a clip sampler's frames: 8 clips of 16 consecutive frames at random starts

Pictures are RGB, 8 bits, HWC (torchcodec's NCHW tensors are made HWC numpy arrays after the
clock stops), at the file's size or scaled to WxH with each library's own scaler. The oracle
(REF.npz, made by bench_ml.sh from `ffmpeg -vsync 0 -pix_fmt rgb24 [-vf scale=W:H:flags=bicubic]`
over every frame) holds an md5 and a small signature per frame: a frame counts "exact" when its
bytes are ffmpeg's, else "same" when its signature is nearest the asked frame's among the
frames around it (another RGB conversion or scaler, the same picture), else "wrong".
"""
from __future__ import annotations

import hashlib
import json
import statistics
import sys
import time
from typing import Any, Callable, Iterator

import numpy as np

WORKLOADS = ("all", "first100", "uniform10", "random10", "clips8x16")
BATCH = 8


def indices_of(workload: str, n: int) -> list[int]:
    if workload == "all":
        return list(range(n))
    if workload == "first100":
        return list(range(min(100, n)))
    if workload == "uniform10":
        return [int(round(x)) for x in np.linspace(0, n - 1, 10)]
    if workload == "random10":
        return sorted(int(i) for i in np.random.default_rng(0).choice(n, size=min(10, n), replace=False))
    if workload == "clips8x16":
        starts = sorted(int(s) for s in np.random.default_rng(1).integers(0, max(1, n - 16), size=8))
        return [s + k for s in starts for k in range(16)]
    raise ValueError(workload)


def signature(rgb: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A coarse sample of an HWC picture (about 135 x 240 points): enough to tell neighbouring
    frames of a moving test pattern apart, cheap enough to take inside the timed loop."""
    h, w = rgb.shape[:2]
    return np.ascontiguousarray(rgb[:: max(1, h // 135), :: max(1, w // 240)]).astype(np.int16)


# -- the contenders: each yields (index asked, HWC uint8 picture) for the indices asked ------------

def batched(dec: Any, wanted: list[int], everything: bool) -> Iterator[tuple[int, Any]]:
    """For the decoders with torchcodec's calls (mediakit's and torchcodec's): every frame
    through get_frames_in_range, BATCH at a time, or the wanted ones in one get_frames_at."""
    if everything:
        n = len(dec)
        for start in range(0, n, BATCH):
            batch = dec.get_frames_in_range(start, min(n, start + BATCH)).data
            for k in range(batch.shape[0]):
                yield start + k, batch[k]
    else:
        batch = dec.get_frames_at(wanted).data
        for k, i in enumerate(wanted):
            yield i, batch[k]


def run_mediakit(path: str, size: tuple[int, int] | None, wanted: list[int], everything: bool) -> Iterator[tuple[int, Any]]:
    import mediakit
    kw: dict[str, Any] = {"width": size[0], "height": size[1]} if size else {}
    with mediakit.VideoDecoder(path, format="rgb24", **kw) as dec:
        yield from batched(dec, wanted, everything)


def run_pyav(path: str, size: tuple[int, int] | None, wanted: list[int], everything: bool) -> Iterator[tuple[int, Any]]:
    """PyAV as its users seek exactly: to each wanted frame's time (from the stream's frame
    rate), back to the key frame, then decoding on to the first frame at or after it; frames
    a few ahead are reached by decoding on. Threads on (thread_type AUTO)."""
    import av
    kw: dict[str, Any] = {"width": size[0], "height": size[1], "interpolation": "BICUBIC"} if size else {}
    with av.open(path) as c:
        s = c.streams.video[0]
        s.thread_type = "AUTO"
        if everything or wanted == list(range(len(wanted))):
            last = len(wanted) - 1 if not everything else None
            for i, frame in enumerate(c.decode(s)):
                yield i, frame.to_ndarray(format="rgb24", **kw)
                if last is not None and i >= last:
                    return
            return
        assert s.average_rate is not None and s.time_base is not None
        start = s.start_time or 0
        step = 1 / (s.average_rate * s.time_base)     # pts per frame
        frames: Iterator[Any] | None = None
        at = -1
        for i in wanted:
            target = start + int(round(i * step))
            if frames is None or i <= at or i - at > 16:
                c.seek(target, stream=s, backward=True, any_frame=False)
                frames = c.decode(s)
            for frame in frames:
                if frame.pts is not None and frame.pts >= target:
                    at = i
                    yield i, frame.to_ndarray(format="rgb24", **kw)
                    break


def run_opencv(path: str, size: tuple[int, int] | None, wanted: list[int], everything: bool) -> Iterator[tuple[int, Any]]:
    """OpenCV's VideoCapture: reads on where the next frame is the wanted one, else
    CAP_PROP_POS_FRAMES; BGR made RGB (cvtColor), scaled with cv2.resize (INTER_CUBIC)."""
    import cv2
    cap = cv2.VideoCapture(path)
    try:
        pos = 0
        todo = range(int(cap.get(cv2.CAP_PROP_FRAME_COUNT))) if everything else wanted
        for i in todo:
            if i != pos:
                cap.set(cv2.CAP_PROP_POS_FRAMES, i)
            ok, bgr = cap.read()
            if not ok:
                return
            pos = i + 1
            rgb = cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
            yield i, (cv2.resize(rgb, size, interpolation=cv2.INTER_CUBIC) if size else rgb)
    finally:
        cap.release()


def run_decord(path: str, size: tuple[int, int] | None, wanted: list[int], everything: bool) -> Iterator[tuple[int, Any]]:
    import decord
    kw: dict[str, Any] = {"width": size[0], "height": size[1]} if size else {}
    vr = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=0, **kw)
    todo = list(range(len(vr))) if everything else wanted
    for start in range(0, len(todo), BATCH):
        part = todo[start:start + BATCH]
        batch = vr.get_batch(part).asnumpy()
        for k, i in enumerate(part):
            yield i, batch[k]


def run_torchcodec(path: str, size: tuple[int, int] | None, wanted: list[int], everything: bool) -> Iterator[tuple[int, Any]]:
    """torchcodec on the CPU, exact seek mode, FFmpeg threads on (num_ffmpeg_threads=0);
    scaled by its own Resize transform (bilinear, antialiased: the only one it has)."""
    from torchcodec.decoders import VideoDecoder
    from torchcodec.transforms import Resize
    kw: dict[str, Any] = {"transforms": [Resize((size[1], size[0]))]} if size else {}
    yield from batched(VideoDecoder(path, seek_mode="exact", num_ffmpeg_threads=0, dimension_order="NHWC", **kw),
                       wanted, everything)


CONTENDERS: dict[str, Callable[..., Iterator[tuple[int, Any]]]] = {
    "mediakit": run_mediakit, "pyav": run_pyav, "opencv": run_opencv, "decord": run_decord, "torchcodec": run_torchcodec}


def judge(got: list[tuple[int, Any, Any]], md5s: np.ndarray[Any, Any], sigs: np.ndarray[Any, Any]) -> dict[str, int]:
    """Counts exact / same / wrong frames against the oracle (see the module's doc)."""
    out = {"exact": 0, "same": 0, "wrong": 0}
    n = len(md5s)
    for i, sig, digest in got:
        if digest is not None and digest == md5s[i]:
            out["exact"] += 1
            continue
        window = range(max(0, i - 5), min(n, i + 6))
        if sig.shape != sigs.shape[1:]:
            out["wrong"] += 1
            continue
        best = min(window, key=lambda j: float(np.mean((sigs[j] - sig).astype(np.float32) ** 2)))
        out["same" if best == i else "wrong"] += 1
    return out


def make_reference(path: str, size_arg: str, out_path: str) -> int:
    """The oracle: ffmpeg's RGB pictures of every frame (bicubic when scaled, as ffmpeg's scale
    filter by default), an md5 and a signature each."""
    import subprocess
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height",
                            "-of", "csv=p=0", path], capture_output=True, text=True, check=True)
    w, h = (int(x) for x in probe.stdout.strip().split(","))
    vf = []
    if size_arg != "full":
        w, h = (int(x) for x in size_arg.split("x"))
        vf = ["-vf", f"scale={w}:{h}:flags=bicubic"]
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:v:0", *vf, "-vsync", "0",
           "-pix_fmt", "rgb24", "-f", "rawvideo", "-"]
    md5s, sigs = [], []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE) as proc:
        assert proc.stdout is not None
        frame = w * h * 3
        while True:
            data = proc.stdout.read(frame)
            if len(data) < frame:
                break
            md5s.append(hashlib.md5(data).hexdigest())
            sigs.append(signature(np.frombuffer(data, dtype=np.uint8).reshape(h, w, 3)))
    if proc.returncode != 0 or not md5s:
        sys.exit(f"bench_ml.py: {' '.join(cmd)} failed")
    np.savez(out_path, md5=np.array(md5s), sig=np.stack(sigs))
    return 0


def load_results(stem: str, contenders: list[str]) -> dict[str, Any]:
    """Each contender's OUT.json of one case: STEM.CONTENDER.json."""
    res = {}
    for c in contenders:
        with open(f"{stem}.{c}.json") as f:
            res[c] = json.load(f)
    return res


def versus_fastest_peer(seconds: dict[str, float]) -> float | None:
    """The fastest peer's time over mediakit's (>= 2: the issue's goal), from the times of the
    contenders that did the work; None when mediakit or every peer failed."""
    peers = [t for c, t in seconds.items() if c != "mediakit"]
    return min(peers) / seconds["mediakit"] if peers and "mediakit" in seconds else None


def report(argv: list[str]) -> int:
    """The Markdown section of BENCHMARKS.md from the contenders' OUT.json files in DIR
    (DIR/NAME.SIZE.CONTENDER.json), on standard output."""
    ml, runs, rev, cpu, versions, day, skipped = argv[:7]
    rest = argv[7:]
    cases, contenders = rest[:rest.index("--")], rest[rest.index("--") + 1:]
    print("<!-- bench_ml.sh:begin -->")
    print(f"## Frames for models: mediakit against PyAV, OpenCV, decord and torchcodec (scripts/bench_ml.sh, {day})")
    print()
    print(f"Revision {rev}; {cpu}. {versions}. Median of {runs} runs of each workload, wall seconds measured")
    print("in each contender's process (interpreter start and imports not timed; opening the file timed in")
    print("every run). RGB, 8 bits; `224x224`: each library's own scaler (mediakit and PyAV bicubic, OpenCV")
    print("INTER_CUBIC, decord its own, torchcodec's Resize: bilinear, antialiased). Every returned frame is")
    print("checked against ffmpeg's decode of every frame (`-pix_fmt rgb24`, `scale=...:flags=bicubic`): the")
    print("`wrong` column counts frames that are not the one asked for (by picture, whatever the RGB")
    print("conversion) and frames missing; `exact` names the contenders that gave ffmpeg's bytes for every")
    print("frame of the workload (`all` is checked by picture only). A contender that fails or returns")
    print("fewer frames than asked is not counted as the fastest peer.")
    if skipped.strip("; "):
        print(f"Not measured: {skipped.strip('; ')}.")
    print()
    print("| input | size | workload | " + " | ".join(f"{c} s" for c in contenders)
          + " | fastest peer / mediakit | wrong frames | exact |")
    print("|" + "---|" * 3 + "---:|" * len(contenders) + "---:|---|---|")
    met = missed = 0
    for case in cases:
        name, size = case.split(":")
        res = load_results(f"{ml}/{name}.{size}", contenders)
        for w in WORKLOADS:
            cells, wrong, exact, valid = [], [], [], {}
            for c in contenders:
                r = res[c][w]
                if "error" in r:
                    cells.append("fails")
                    wrong.append(f"{c} fails ({r['error'].split(':')[0]})")
                    continue
                if r["missing"]:
                    cells.append(f"{r['seconds']:.3f} ({r['returned']} frames)")
                    wrong.append(f"{c} returns {r['returned']} of {r['asked']}")
                    continue
                cells.append(f"{r['seconds']:.3f}")
                valid[c] = r["seconds"]
                bad = r["wrong"] + (0 if r["order_ok"] else 1)
                if bad:
                    wrong.append(f"{c} {bad}/{r['asked']}")
                if w != "all" and r["exact"] == r["asked"]:
                    exact.append(c)
            ratio = versus_fastest_peer(valid)
            verdict = "n/a" if ratio is None else f"{ratio:.2f}x"
            if ratio is not None:
                met, missed = (met + 1, missed) if ratio >= 2 else (met, missed + 1)
            print(f"| {name} | {size} | {w} | " + " | ".join(cells) + f" | {verdict} | {', '.join(wrong) or 'none'} | "
                  f"{', '.join(exact) if w != 'all' else '-'} |")
    print()
    print("Goal (issue 32): mediakit at least 2x as fast as the fastest peer on every workload, never a wrong")
    print(f"frame. Met on {met} of {met + missed} rows.")
    print("<!-- bench_ml.sh:end -->")
    return 0


def main() -> int:
    if sys.argv[1] == "ref":
        return make_reference(*sys.argv[2:5])
    if sys.argv[1] == "report":
        return report(sys.argv[2:])
    who, path, size_arg, runs_arg, ref_path, out_path = sys.argv[1:7]
    size = None if size_arg == "full" else tuple(int(x) for x in size_arg.split("x"))
    ref = np.load(ref_path)
    md5s, sigs = ref["md5"], ref["sig"]
    n = len(md5s)
    fn = CONTENDERS[who]
    if who == "torchcodec":
        import torch
        torch.set_num_threads(2)
    result: dict[str, Any] = {}
    for workload in WORKLOADS:
        wanted = indices_of(workload, n)
        times: list[float] = []
        got: list[tuple[int, Any, Any]] = []
        error = None
        for run in range(int(runs_arg)):
            last = run == int(runs_arg) - 1
            got = []
            t0 = time.perf_counter()
            try:
                for i, picture in fn(path, size, wanted, workload == "all"):
                    a = picture.numpy() if hasattr(picture, "numpy") else picture
                    # The signature is taken in every run (every contender pays it); the md5 of
                    # the last run's pictures after the clock stops, below.
                    got.append((i, signature(a), a if last and workload != "all" else None))
            except Exception as e:     # a contender that cannot read the file: reported, not fatal
                error = f"{type(e).__name__}: {e}"[:200]
                break
            times.append(time.perf_counter() - t0)
        if error is not None:
            result[workload] = {"error": error}
            continue
        judged = [(i, sig, hashlib.md5(np.ascontiguousarray(a).tobytes()).hexdigest() if a is not None else None)
                  for i, sig, a in got]
        verdict = judge(judged, md5s, sigs)
        asked = len(wanted)
        result[workload] = {"seconds": statistics.median(times), "times": times, "asked": asked,
                            "returned": len(got), "missing": asked - len(got),
                            "order_ok": [i for i, _, _ in got] == wanted, **verdict}
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
