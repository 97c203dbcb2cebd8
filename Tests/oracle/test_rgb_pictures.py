"""mk-decode --pix-fmt rgb24 / bgr24 / gray / rgba / rgb48le: the raw pictures are byte-identical
to ffmpeg's for the same pixel format (the FFmpeg plugin's libswscale set up as the ffmpeg
tool's scale filter: bicubic, the colour matrix and range the stream names), on the bundled
sample (BT.601 untagged), an HEVC file tagged BT.709 limited range (B-frames, an edit list) and
a 10-bit AV1 file tagged BT.2020 (ffmpeg decoding with libdav1d, as our Dav1d plugin does).
A few frames each (`--frames N`, ffmpeg's `-frames:v N`).

Oracle: `ffmpeg -v error [-c:v libdav1d] -i IN -map 0:v:0 -fps_mode passthrough -frames:v N
-pix_fmt F -f rawvideo -`.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

CASES = [  # file (in Samples/media or ../shared/media), frames, ffmpeg decoder options
    ("sample.mp4", 12, []),
    ("mp4_hevc_hvc1_aac_ctts_elst.mp4", 27, []),
    ("mp4_av1_10bit_hdr10_aac_720x1280.mp4", 3, ["-c:v", "libdav1d"]),
]
FORMATS = ["rgb24", "bgr24", "gray", "rgba", "rgb48le"]


@pytest.mark.parametrize("name,frames,decoder", CASES, ids=[c[0] for c in CASES])
def test_mk_decode_rgb_equals_ffmpeg(name, frames, decoder, mk_decode, request, tmp_path):
    path = lib.REPO / "Samples" / "media" / name
    if not path.exists():
        path = request.getfixturevalue("shared_media") / name
    problems = []
    for fmt in FORMATS:
        out = tmp_path / f"out.{fmt}"
        cmd = [str(mk_decode), str(path), "--video-out", str(out), "--pix-fmt", fmt, "--frames", str(frames), "-q"]
        proc = subprocess.run(cmd, capture_output=True, timeout=lib.CMD_TIMEOUT)
        lib.check_ok(proc, cmd)
        ref_cmd = ["ffmpeg", "-v", "error", *decoder, "-i", str(path), "-map", "0:v:0", "-fps_mode", "passthrough",
                   "-frames:v", str(frames), "-pix_fmt", fmt, "-f", "rawvideo", "-"]
        ref = lib.run(ref_cmd)
        lib.oracle_ok(ref, ref_cmd)
        ours = out.read_bytes()
        if ours != ref.stdout:
            first = next((i for i, (a, b) in enumerate(zip(ours, ref.stdout)) if a != b), min(len(ours), len(ref.stdout)))
            problems.append(f"`{lib.shell_line(cmd)}` is not byte-identical to `{lib.shell_line(ref_cmd)}` "
                            f"({len(ours)} vs {len(ref.stdout)} bytes, first difference at byte {first})")
        out.unlink()
    if problems:
        pytest.fail(f"{name}:\n  " + "\n  ".join(problems), pytrace=False)
