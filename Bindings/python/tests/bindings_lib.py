"""Helpers the Python binding tests share: ffmpeg / ffprobe as oracles, and running a sample.
(Named so that it never resolves to a module of Tests/oracle, which test_decode puts on sys.path.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import REPO, SAMPLES


def framemd5(path: Path, streams: str = "0") -> list[str]:
    """ffmpeg's lines for the packets of `streams` (a -map specifier) read from `path`
    (`ffmpeg -i F -map S -c copy -f framemd5 -`), without the #software line."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", streams, "-c", "copy", "-f", "framemd5", "-"],
                         check=True, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if not line.startswith("#software")]


def ffprobe_json(path: Path, *options: str) -> dict[str, Any]:
    """ffprobe's JSON output for `path` with `options` (-show_streams ...)."""
    out = subprocess.run(["ffprobe", "-v", "error", *options, "-of", "json", str(path)], check=True,
                         capture_output=True, text=True).stdout
    result: dict[str, Any] = json.loads(out)
    return result


def sample_env() -> dict[str, str]:
    """The environment a sample runs in: the checkout's package first on PYTHONPATH, the library
    under test (MEDIAKIT_LIBRARY, set by conftest) inherited."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "Bindings" / "python"), env.get("PYTHONPATH")) if p)
    return env


def run_sample(name: str, *args: object, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Runs Samples/python/<name> with this interpreter as a user would; fails with its stderr
    when it exits with an error."""
    run = subprocess.run([sys.executable, str(SAMPLES / name), *map(str, args)], capture_output=True, text=True,
                         env=sample_env(), timeout=timeout)
    assert run.returncode == 0, f"{name} failed ({run.returncode}): {run.stderr[-3000:]}"
    return run


def raw_testsrc(fmt: str, width: int, height: int, frames: int) -> bytes:
    """`frames` pictures of ffmpeg's testsrc2 at 25 fps as `ffmpeg -f rawvideo -pix_fmt FMT` writes
    them (the pictures the encoder and writer tests feed in)."""
    return subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", f"testsrc2=size={width}x{height}:rate=25",
                           "-frames:v", str(frames), "-f", "rawvideo", "-pix_fmt", fmt, "-"], check=True, capture_output=True).stdout


def frame_times(path: Path) -> list[float]:
    """pts_time of each picture ffprobe decodes from the first video stream."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time",
                          "-of", "csv=p=0", str(path)], check=True, capture_output=True, text=True).stdout
    return [float(x.strip(",")) for x in out.split()]


def decoded_stamps(path: Path) -> list[float]:
    """The presentation time (seconds) ffmpeg's tool gives each picture it decodes from the
    first video stream, one thread, timestamps passed through
    (`ffmpeg -threads 1 -i F -map 0:v:0 -fps_mode passthrough -f framemd5 -`): for a stream
    whose packets carry none (raw H.264 / HEVC; ffprobe's pts_time is N/A), the times it makes
    up at the stream's frame rate."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-threads", "1", "-i", str(path), "-map", "0:v:0", "-fps_mode", "passthrough",
                          "-f", "framemd5", "-"], check=True, capture_output=True, text=True).stdout
    tb = 0.0
    times = []
    for line in out.splitlines():
        if line.startswith("#tb 0:"):
            num, den = line.split(":")[1].strip().split("/")
            tb = int(num) / int(den)
        elif line and not line.startswith("#"):
            times.append(int(line.split(",")[2]) * tb)
    return times
