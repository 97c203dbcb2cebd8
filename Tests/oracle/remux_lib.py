"""Helpers of the remux / fragmented-MP4 oracle tests (test_remux.py, test_fragmented_demux.py)."""

from __future__ import annotations

import csv
import os
from pathlib import Path

import pytest

import oracle_lib as lib

MANIFEST = lib.SHARED_MEDIA / "MANIFEST.tsv"

# Files our demuxer cannot match ffprobe on, and why (strict xfail).
DEMUX_KNOWN: dict[str, str] = {}

# Tracks whose packet sizes ffprobe does not report as stored: compared on everything
# but the size column. Key: file name; value: (track, why).
SIZE_NOT_AS_STORED: dict[str, tuple[int, str]] = {
    "fmp4_h264_c608_cbcs_decrypted.mp4":
        (1, "FFmpeg rewrites each c608 sample (cdat/cdt2 boxes of byte pairs) into EIA-608 "
            "cc_data triplets, so ffprobe's sizes are not the stored sample sizes"),
}


def _pairs() -> dict[str, str]:
    """media segment name -> init segment name, from MANIFEST.tsv ("pair with X")."""
    out = {}
    if not MANIFEST.is_file():
        return out
    with open(MANIFEST, newline="") as f:
        for row in csv.reader(f, delimiter="\t"):
            if len(row) < 7:
                continue
            note = row[6]
            if "pair with " in note:
                init = note.split("pair with ", 1)[1].split()[0]
                out[row[0]] = init
    return out


def fragmented_params() -> list:
    """One param per fragmented input: "shared:NAME" or "pair:INIT+SEG"."""
    if not lib.SHARED_MEDIA.is_dir():
        return [pytest.param("missing", id="shared-media-missing")]
    pairs = _pairs()
    inits = set(pairs.values())
    params = []
    for p in sorted(lib.SHARED_MEDIA.iterdir()):
        n = p.name
        if not n.startswith(lib.FRAGMENTED_PREFIXES) or not p.is_file():
            continue
        if n in pairs:
            params.append(pytest.param(f"pair:{pairs[n]}+{n}", id=f"{pairs[n]}+{n}"))
        elif n in inits or p.suffix == ".m4s" or "init" in n:
            continue   # used through its pair; a lone init or segment has no samples to compare
        else:
            params.append(pytest.param(f"shared:{n}", id=n))
    return params


def materialize(case: str, tmp_path: Path, request) -> Path:
    """The file a case names; an init+media pair is concatenated into tmp_path."""
    if case == "missing":
        if os.environ.get("CI") == "true":
            pytest.fail(f"{lib.SHARED_MEDIA} is missing (CI=true)", pytrace=False)
        pytest.skip(f"{lib.SHARED_MEDIA} is missing")
    kind, _, name = case.partition(":")
    if kind == "shared":
        return lib.SHARED_MEDIA / name
    init, seg = name.split("+")
    out = tmp_path / (Path(seg).stem + "_with_init.mp4")
    with open(out, "wb") as f:
        for part in (init, seg):
            f.write((lib.SHARED_MEDIA / part).read_bytes())
    return out


def blank_na_durations(ours: list[str], ref: list[str]) -> tuple[list[str], list[str], str]:
    """Where ffprobe's duration is N/A, blank the duration column on both sides."""
    if len(ours) != len(ref) or not any(l.split(",")[3] == "N/A" for l in ref):
        return ours, ref, ""
    o2, r2, n = [], [], 0
    for a, b in zip(ours, ref):
        fa, fb = a.split(","), b.split(",")
        if fb[3] == "N/A":
            fa[3] = fb[3] = "*"
            n += 1
        o2.append(",".join(fa))
        r2.append(",".join(fb))
    return o2, r2, f"{n} packets with ffprobe duration N/A compared without duration"
