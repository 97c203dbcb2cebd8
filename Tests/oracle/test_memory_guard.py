"""The memory guard (issue 17, item 3): every size a file states is checked against the bytes
left before anything is allocated, so no file, intact or damaged, makes MediaKit reserve more
than a small bound.

Each file of ../shared/media (these tests read real files; they skip when a clone has no
../shared, and fail under CI=true), and three copies of it with 16 random bytes overwritten each
(fixed seed, so a failure repeats), are opened and read to the last packet by `mk-probe --count`
under a 256 MiB address-space limit (RLIMIT_AS, which also bounds the Swift runtime, the plugins
loaded at start and every thread's stack) and a 1 s CPU limit (RLIMIT_CPU). The oracle is the
rule itself: the process must end by itself with status 0 (read) or 1 (a MediaError, printed
with the file's name), never by a signal (SIGKILL / SIGXCPU for a limit crossed, SIGSEGV,
SIGTRAP for a Swift runtime trap such as a failed allocation).

The largest corpus file is 3 MB; a healthy read of any of them needs a few MB beyond the
runtime, so 256 MiB only fails on a size taken from the file without a check.
"""

from __future__ import annotations

import random
import resource
import signal
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

ADDRESS_SPACE = 256 << 20
CPU_SECONDS = 1
COPIES = 3
BYTES_PER_COPY = 16


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _corpus() -> list[str]:
    if not lib.SHARED_MEDIA.is_dir():
        return ["shared:MANIFEST.tsv"]  # media_param_file skips (or fails under CI=true)
    return ["shared:" + p.name for p in sorted(lib.SHARED_MEDIA.iterdir())
            if p.is_file() and p.suffix not in {".tsv", ".md", ".txt"}]


def _run_limited(mk_probe: Path, path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(mk_probe), "--count", str(path)], capture_output=True,
                          preexec_fn=_limits, timeout=60)


def _check(proc: subprocess.CompletedProcess, what: str) -> None:
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name
        pytest.fail(f"{what}: mk-probe --count was killed by {name} under a "
                    f"{ADDRESS_SPACE >> 20} MiB address-space / {CPU_SECONDS} s CPU limit; "
                    f"stderr: {lib.tail(proc.stderr, 600)}", pytrace=False)
    assert proc.returncode in (0, 1), f"{what}: exit status {proc.returncode}: {lib.tail(proc.stderr, 600)}"
    if proc.returncode == 1:
        err = proc.stderr.decode(errors="replace")
        assert err.startswith("mk-probe: ") and "Fatal error" not in err, \
            f"{what}: not a clear MediaError: {lib.tail(err, 600)}"


@pytest.mark.parametrize("param", _corpus())
def test_reading_stays_within_256_mib_and_1_s(param, mk_probe, tmp_path):
    path = lib.media_param_file(param, tmp_path, None)
    _check(_run_limited(mk_probe, path), path.name)
    data = path.read_bytes()
    if not data:
        return
    rng = random.Random(path.name)
    for copy in range(COPIES):
        damaged = bytearray(data)
        for _ in range(BYTES_PER_COPY):
            damaged[rng.randrange(len(damaged))] = rng.randrange(256)
        out = tmp_path / f"damaged{copy}{path.suffix}"
        out.write_bytes(bytes(damaged))
        _check(_run_limited(mk_probe, out), f"{path.name} damaged copy {copy} (seed: the file name)")
