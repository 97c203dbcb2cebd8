"""Tests of the Python bindings, against the checkout's package and library.

The library: MEDIAKIT_LIBRARY if set, else MK_BIN/libmediakit.so (make test sets MK_BIN),
else the package's own search. Real files come from ../shared/media: skipped when a
clone has none, a failure under CI=true.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
SAMPLES = REPO / "Samples" / "python"
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(SAMPLES))   # the samples' functions (mux_h264's Annex B parser) are tested too
if "MEDIAKIT_LIBRARY" not in os.environ and os.environ.get("MK_BIN"):
    os.environ["MEDIAKIT_LIBRARY"] = str(Path(os.environ["MK_BIN"]) / "libmediakit.so")

SHARED = REPO.parent / "shared" / "media"

# Ray lowers its worker processes' priority (nice 15). `make test` runs these tests beside the
# oracle suite's workers (nice 0) on every core, and there a nice-15 worker got a few percent of
# a core: ray_batch.py's test took 82 s in `make test` against 10 s alone (123 s beside three
# busy loops; 27 s there with this). The tests' clusters (test_ray.py's, the one ray_batch.py
# starts) run their workers at the tests' own priority; the environment passes to both.
os.environ.setdefault("RAY_worker_niceness", "0")

sys.path.insert(0, str(REPO / "Tests" / "oracle"))
import quick_ffmpeg  # noqa: E402  (ffmpeg / ffprobe without the libraries they do not use: Tests/oracle)


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    quick_ffmpeg.configure(config, REPO / "Samples" / "media" / "sample.mp4")


def pytest_report_header(config: pytest.Config) -> str:
    return str(quick_ffmpeg.STATE[0])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The Ray tests (a cluster per module, a minute of one worker under `--dist loadfile`) and
    the samples' (ray_batch.py starts its own) first: drawn last they ran alone at the end."""
    first = ("test_ray.py::", "test_samples.py::")
    items.sort(key=lambda item: next((i for i, name in enumerate(first) if name in item.nodeid), len(first)))


@pytest.fixture(scope="session")
def oracle_tools() -> None:
    """ffmpeg and ffprobe, the oracle of the tests that use this fixture (scripts/deps.sh installs
    them): their absence fails those tests, never skips them."""
    missing = [tool for tool in ("ffmpeg", "ffprobe") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{' and '.join(missing)} needed as the oracle (scripts/deps.sh installs them)")


@pytest.fixture(scope="session")
def shared_media() -> Path:
    if not SHARED.is_dir():
        msg = f"{SHARED} is missing: these tests read real files from ../shared/media"
        if os.environ.get("CI") == "true":
            pytest.fail(msg + " (CI=true)")
        pytest.skip(msg)
    return SHARED


@pytest.fixture(scope="session")
def sample() -> Path:
    return REPO / "Samples" / "media" / "sample.mp4"


@pytest.fixture(scope="session")
def h264_stream(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(raw H.264 Annex B stream, the MP4 it came from): 60 frames of 320x240 at 25 fps coded by
    libx264 with 3 B-frames (B-pyramid: pictures presented out of decoding order) into an MP4 by
    ffmpeg, then copied out of it as Annex B (`-c copy -bsf:v h264_mp4toannexb -f h264`). The MP4
    holds the encoder's own timestamps; the raw stream has none."""
    folder = tmp_path_factory.mktemp("h264")
    mp4, raw = folder / "x264.mp4", folder / "x264.h264"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-frames:v", "60",
                    "-c:v", "libx264", "-bf", "3", "-g", "30", "-pix_fmt", "yuv420p", str(mp4)], check=True)
    subprocess.run(["ffmpeg", "-v", "error", "-i", str(mp4), "-c", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264",
                    str(raw)], check=True)
    return raw, mp4
