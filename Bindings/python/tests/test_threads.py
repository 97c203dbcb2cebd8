"""mediakit.set_threads / MEDIAKIT_THREADS: the thread budget bounds the decoders' threads. The
oracle is the kernel's list of a process's threads (/proc/self/task) while a decoder is open:
libavcodec starts frame threads for "every core" (threads=0) and none for one thread."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import mediakit


# Run in a process of its own: the test process's other threads come and go on their own (an idle
# Dispatch worker left by an earlier test exits after a few seconds, Ray's client threads), which
# changed a count of all threads (one such exit during the decode read as -1 threads). The new
# thread ids that appear while the decoder holds its frames are the decoder's.
_COUNT = """
import os, sys, mediakit
def tids(): return set(os.listdir("/proc/self/task"))
mediakit.set_threads(int(sys.argv[2]))
before = tids()
with mediakit.open(sys.argv[1]) as demuxer:
    track = next(t for t in demuxer.tracks if t.media_type == "video")
    decoder = mediakit.DecodeSession(track, threads=0)
    frames = []
    for frame in decoder.frames(demuxer.packets(track)):
        frames.append(frame)
        if len(frames) == 8:
            break
    print(len(tids() - before))
    decoder.close()
"""


def _threads_while_decoding(sample: Path, budget: int) -> int:
    """Threads that appear in a new process, under `mediakit.set_threads(budget)`, while a decoder
    asked for every core holds a few decoded frames."""
    package = str(Path(mediakit.__file__).resolve().parents[1])
    env = dict(os.environ, PYTHONPATH=package + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _COUNT, str(sample), str(budget)], env=env, check=True,
                         capture_output=True, text=True, timeout=120).stdout
    return int(out.strip())


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux's /proc")
def test_budget_bounds_decoder_threads(sample: Path) -> None:
    try:
        mediakit.set_threads(1)
        assert mediakit.get_threads() == 1
        assert _threads_while_decoding(sample, 1) == 0, "a decoder started threads under a budget of 1"
        mediakit.set_threads(0)
        if (os.cpu_count() or 1) > 1:
            assert _threads_while_decoding(sample, 0) > 0, "without a budget, libavcodec should start frame threads"
        with pytest.raises(mediakit.InvalidArgumentError, match="-2 threads"):
            mediakit.set_threads(-2)
    finally:
        mediakit.set_threads(0)


def test_environment_sets_the_budget() -> None:
    package = str(Path(mediakit.__file__).resolve().parents[1])
    env = dict(os.environ, MEDIAKIT_THREADS="3", PYTHONPATH=package + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", "import mediakit; print(mediakit.get_threads())"], env=env,
                         check=True, capture_output=True, text=True).stdout
    assert out.strip() == "3"
