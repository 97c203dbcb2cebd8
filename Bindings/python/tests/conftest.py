"""Tests of the Python bindings, against the checkout's package and library.

The library: MEDIAKIT_LIBRARY if set, else MK_BIN/libmediakit.so (make test sets MK_BIN),
else the package's own search. Real files come from ../shared/media: skipped when a
clone has none, a failure under CI=true.
"""
import os
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))
if "MEDIAKIT_LIBRARY" not in os.environ and os.environ.get("MK_BIN"):
    os.environ["MEDIAKIT_LIBRARY"] = str(Path(os.environ["MK_BIN"]) / "libmediakit.so")

SHARED = REPO.parent / "shared" / "media"


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
