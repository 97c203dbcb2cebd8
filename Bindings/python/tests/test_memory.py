"""Opening and closing 10,000 demuxers keeps memory flat (RSS from /proc/self/status):
every handle is freed exactly once."""
import gc
from pathlib import Path

import mediakit


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def cycle(path: Path, n: int) -> None:
    for _ in range(n):
        with mediakit.open(path) as d:
            p = d.read()
            assert p is not None
            p.close()


def test_ten_thousand_demuxers_keep_memory_flat(sample: Path) -> None:
    cycle(sample, 500)            # warm up caches and allocator pools
    gc.collect()
    before = rss_kib()
    cycle(sample, 10_000)
    gc.collect()
    grown = rss_kib() - before
    # a leak of even one 1 KiB object per open would grow RSS by ~10 MB
    assert grown < 4 * 1024, f"RSS grew by {grown} KiB over 10,000 open/close cycles"
