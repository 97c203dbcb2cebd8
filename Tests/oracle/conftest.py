"""Fixtures of the oracle suite: where our binaries are, the shared media, generated media.

The suite runs MediaKit's command-line samples (mk-probe, mk-decode) and compares what
they print or write with FFmpeg 5.1's ffprobe/ffmpeg on the same input (ORACLES.md).

Environment:
  MK_BIN   folder holding mk-probe, mk-decode and the plugins (default: the output of
           `swift build -c release --show-bin-path` run in the repository root)
  CI       when "true", a missing ../shared/media is a failure, not a skip
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

import oracle_lib as lib
import quick_ffmpeg


@pytest.hookimpl(trylast=True)
def pytest_configure(config) -> None:
    quick_ffmpeg.configure(config, lib.REPO / "Samples" / "media" / "sample.mp4")


def pytest_report_header(config) -> str:
    return quick_ffmpeg.STATE[0]


# The suite's longest single tests (15 to 50 s each: a Swift package built, debs and a wheel
# installed, valgrind runs, long seek sweeps). xdist hands tests out in collection order; one of
# these drawn last kept a worker busy alone at the end of the run, so they go first, longest first.
LONG_TESTS = (
    "test_package.py::", "test_install.py::", "test_wheel.py::", "test_capi.py::test_misuse_under_valgrind",
    "test_capi.py::test_session_c_api_under_valgrind", "test_seek.py::test_twenty_random_seeks",
    "test_seek.py::test_frames_by_index_in_the_1080p_file", "test_flac.py::test_flac_corpus",
    "test_writing_a_plugin.py::",
)


def pytest_collection_modifyitems(config, items) -> None:
    def rank(item) -> int:
        return next((i for i, name in enumerate(LONG_TESTS) if name in item.nodeid), len(LONG_TESTS))
    items.sort(key=rank)


def _bin_dir() -> tuple[Path | None, str]:
    """(bin dir or None, how it was found or why not)."""
    env = os.environ.get("MK_BIN")
    if env:
        return Path(env), f"MK_BIN={env}"
    swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
    try:
        proc = subprocess.run([swift, "build", "-c", "release", "--show-bin-path"],
                              cwd=lib.REPO, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"`swift build -c release --show-bin-path` could not run: {e}"
    if proc.returncode != 0 or not proc.stdout.strip():
        return None, ("`swift build -c release --show-bin-path` failed: "
                      + lib.tail(proc.stderr, 500))
    path = proc.stdout.strip().splitlines()[-1]
    return Path(path), f"swift build -c release --show-bin-path -> {path}"


@pytest.fixture(scope="session")
def mk_bin() -> Path:
    """The folder of our release binaries and plugins."""
    path, how = _bin_dir()
    if path is None:
        pytest.fail(f"cannot find MediaKit's bin dir: {how}; set MK_BIN or run `make build`",
                    pytrace=False)
    if not path.is_dir():
        pytest.fail(f"bin dir {path} does not exist ({how}); run `make build`", pytrace=False)
    return path


def _tool(mk_bin: Path, name: str) -> Path:
    path = mk_bin / name
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"{name} not found in BIN ({mk_bin}); run `make build` or set MK_BIN",
                    pytrace=False)
    return path


@pytest.fixture(scope="session")
def mk_probe(mk_bin: Path) -> Path:
    return _tool(mk_bin, "mk-probe")


@pytest.fixture(scope="session")
def mk_decode(mk_bin: Path) -> Path:
    return _tool(mk_bin, "mk-decode")


@pytest.fixture(scope="session")
def mk_remux(mk_bin: Path) -> Path:
    return _tool(mk_bin, "mk-remux")


@pytest.fixture(scope="session")
def mk_transcode(mk_bin: Path) -> Path:
    return _tool(mk_bin, "mk-transcode")


@pytest.fixture(scope="session")
def mk_stream(mk_bin: Path) -> Path:
    return _tool(mk_bin, "mk-stream")


@pytest.fixture(scope="session", autouse=True)
def oracle_cache(tmp_path_factory) -> None:
    """Turns on the oracle cache (oracle_lib.run) for this run, in a folder the xdist workers
    share (the run's base folder); MK_ORACLE_CACHE=0 turns it off."""
    if os.environ.get("MK_ORACLE_CACHE", "1") == "0":
        return
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent          # pytest-N/, holding every worker's popen-gwK/
    lib.ORACLE_CACHE_DIR = base / "oracle-cache"


@pytest.fixture(scope="session")
def shared_media() -> Path:
    """../shared/media (real files written by other tools; see its MANIFEST.tsv)."""
    if not lib.SHARED_MEDIA.is_dir():
        msg = (f"shared media folder {lib.SHARED_MEDIA} is missing: the tests on real files "
               f"need ../shared beside the repository")
        if os.environ.get("CI") == "true":
            pytest.fail(msg + " (CI=true: failing instead of skipping)", pytrace=False)
        pytest.skip(msg)
    return lib.SHARED_MEDIA


class GeneratedMedia:
    """Test inputs made once per session with ffmpeg's lavfi generators (lib.GENERATED)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._lock = threading.Lock()
        self._made: dict[str, Path] = {}

    def path(self, name: str) -> Path:
        with self._lock:
            if name not in self._made:
                self._made[name] = lib.generated_once(self._generate)(name, self.folder)
            return self._made[name]

    @staticmethod
    def _generate(name: str, folder: Path) -> Path:
        out = folder / name
        if out.exists():        # made by the other xdist worker
            return out
        encoded = out.with_name("encoded-" + name) if name in lib.GENERATED_ROTATION else out
        cmd = lib.generate_cmd(name, encoded)
        proc = lib.run(cmd)
        if proc.returncode != 0 or not encoded.is_file():
            pytest.fail(f"could not generate {name}: `{lib.shell_line(cmd)}`\n"
                        f"{lib.tail(proc.stderr)}")
        if encoded != out:
            lib.rotate_copy(encoded, out, lib.GENERATED_ROTATION[name])
        return out


@pytest.fixture(scope="session")
def generated_media(tmp_path_factory) -> GeneratedMedia:
    """Made once per run, in a folder the xdist workers share."""
    return GeneratedMedia(lib.shared_tmp(tmp_path_factory, "generated-media"))


@pytest.fixture
def media(request, generated_media: GeneratedMedia) -> Path:
    """An input file named by the param: "gen:NAME" (generated), "repo:PATH" (in this
    repository) or "shared:NAME" (../shared/media)."""
    kind, _, name = request.param.partition(":")
    if kind == "gen":
        return generated_media.path(name)
    if kind == "repo":
        path = lib.REPO / name
        if not path.is_file():
            pytest.fail(f"{path} is missing from the repository", pytrace=False)
        return path
    folder = request.getfixturevalue("shared_media")  # skips, or fails in CI, if missing
    path = folder / name
    if not path.is_file():
        pytest.fail(f"{path} disappeared during the session")
    return path
