#!/usr/bin/env python3
"""Checks the claim behind remux_lib.FFMPEG_FRAGMENTED_EDITS for every input it is given to.

The claim: our fragmented copy's framemd5 differs from the input's only because FFmpeg 5.1
reads fragmented edit lists differently. If so, ffmpeg's OWN fragmented copy
(`-c copy -movflags frag_keyframe+empty_moov`) differs from the input on the same packet
lines. For each input this prints SAME (claim holds), OURS-ONLY (ffmpeg's copy equals the
input: our muxer has a real bug) or OTHER (both differ, differently: another cause), with the
first differing lines. Lines are compared stream by stream (packet order between streams is
the writer's choice) with the duration column blanked, as test_remux does for fragmented files.

    MK_BIN=$(swift build -c release --show-bin-path) python3 Tests/oracle/check_fragmented_reasons.py [NAME ...]
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import oracle_lib as lib  # noqa: E402
import remux_lib as rlib  # noqa: E402


def per_stream(path: Path, streams: str | None) -> dict[str, list[str]]:
    maps = ["-map", "0"] if streams is None else [a for s in streams.split(",") for a in ("-map", f"0:{s}")]
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", path, *maps, "-c", "copy", "-f", "framemd5", "-"],
                         capture_output=True).stdout.decode("utf-8", "replace").splitlines()
    lines = rlib.without_duration([l for l in out if not l.startswith("#software")])
    d: dict[str, list[str]] = {}
    for l in lines:
        d.setdefault("#" if l.startswith("#") else l.split(",")[0], []).append(l)
    return d


def delta(a: dict, b: dict) -> list[str]:
    out = []
    for k in sorted(set(a) | set(b)):
        out += [f"{k}: {l}" for l in difflib.unified_diff(a.get(k, []), b.get(k, []), lineterm="", n=0)
                if not l.startswith(("---", "+++", "@@"))]
    return out


def main() -> int:
    mk = Path(os.environ.get("MK_BIN", lib.REPO / ".build" / "release")) / "mk-remux"
    names = sys.argv[1:] or sorted(n for (n, l), r in rlib.REMUX_KNOWN.items()
                                   if l == "fragmented" and r == rlib.FFMPEG_FRAGMENTED_EDITS)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for name in names:
            src = rlib.make_generated(name, work) if name in rlib.REMUX_GENERATED else lib.SHARED_MEDIA / name
            fmt = {".mov": ["-f", "mov"], ".3gp": ["-f", "3gp"]}.get(src.suffix, [])
            ff, ours = work / f"{src.name}.ffmpeg.mp4", work / f"{src.name}.ours.mp4"
            p1 = subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", src, "-map", "0", "-c", "copy", *fmt,
                                 "-movflags", "frag_keyframe+empty_moov+delay_moov", ff], capture_output=True)
            p2 = subprocess.run([mk, src, ours, "--fragment", "1"], capture_output=True)
            if p1.returncode or p2.returncode:
                print(f"ERROR     {name}: ffmpeg {p1.returncode}, mk-remux {p2.returncode}")
                bad += 1
                continue
            # A QuickTime chapter track comes back from ffmpeg as an extra stream: compare A/V only.
            streams = None
            if len(per_stream(ff, None).get("#", [])) != len(per_stream(src, None).get("#", [])):
                streams = ",".join(str(i) for i, s in enumerate(lib.ffprobe_json(src, ignore_editlist=False)["streams"])
                                   if s.get("codec_type") in ("audio", "video"))
            ref = per_stream(src, streams)
            d_ff, d_us = delta(ref, per_stream(ff, streams)), delta(ref, per_stream(ours, streams))
            verdict = "SAME" if d_ff == d_us else ("OURS-ONLY" if not d_ff else "OTHER")
            note = f" (streams {streams})" if streams else ""
            print(f"{verdict:9s} {name}{note}: ffmpeg's copy differs on {len(d_ff)} lines, ours on {len(d_us)}")
            if verdict != "SAME":
                bad += 1
                for l in d_ff[:4]:
                    print(f"    ffmpeg {l[:140]}")
                for l in d_us[:4]:
                    print(f"    ours   {l[:140]}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
