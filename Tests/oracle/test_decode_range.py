"""Decode sessions' output pixel formats (issue 35 item 9). `mk-decode --range full`: full-range
pictures written as NV12 / I420 stay full range, as VideoToolbox's
kCVPixelFormatType_420YpCbCr8BiPlanarFullRange output; the default (`--range limited`) is
unchanged: full range brought to limited, as `ffmpeg -pix_fmt`. `--pixel-format bgra` and
`--pixel-format p010le` (kCVPixelFormatType_32BGRA, kCVPixelFormatType_420YpCbCr10BiPlanarVideoRange).

Oracles (ORACLES.md: ffmpeg's decode):
  - a full-range H.264 file (the corpus has none: made here by libx264 from yuvj420p, the stream
    flagged full range): `--range full` equals `ffmpeg -vf scale=in_range=full:out_range=full
    -pix_fmt nv12|yuv420p`, byte for byte; the default equals `ffmpeg -pix_fmt nv12` (limited),
    and the two differ (the test exercises the range);
  - a limited-range real file of ../shared/media: `--range full` equals `ffmpeg -pix_fmt nv12`
    (limited pictures stay limited);
  - BGRA and P010 of real files of ../shared/media (an 8-bit H.264, a 10-bit AV1): byte for byte
    `ffmpeg -pix_fmt bgra|p010le` (the 8-bit file's P010 and the 10-bit file's BGRA are converted,
    the 10-bit file's P010 only re-laid).
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import oracle_lib as lib

FRAMES = 12


@pytest.fixture(scope="module")
def full_range(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("range") / "full.mp4"
    proc = lib.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=176x144:rate=25", "-frames:v", str(FRAMES),
                    "-vf", "scale=out_range=full", "-pix_fmt", "yuvj420p", "-c:v", "libx264", "-color_range", "pc", out])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    info = lib.ffprobe_json(out)
    assert info["streams"][0].get("color_range") == "pc", info["streams"][0]
    return out


def _ffmpeg(path: Path, pix_fmt: str, full: bool) -> bytes:
    vf = ["-vf", "scale=in_range=full:out_range=full"] if full else []
    proc = lib.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-frames:v", str(FRAMES), *vf,
                    "-pix_fmt", pix_fmt,
                    "-f", "rawvideo", "-"])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return proc.stdout


def _ours(mk_decode: Path, path: Path, tmp: Path, layout: str, *extra: str) -> bytes:
    out = tmp / f"out-{layout}-{'-'.join(extra) or 'default'}.yuv"
    cmd = [mk_decode, path, "--video-out", out, "--pixel-format", layout, "--frames", str(FRAMES), "-q", *extra]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    return out.read_bytes()


@pytest.mark.parametrize("layout,pix_fmt", [("nv12", "nv12"), ("i420", "yuv420p")])
def test_full_range_kept_when_asked(layout, pix_fmt, mk_decode, full_range, tmp_path):
    full = _ours(mk_decode, full_range, tmp_path, layout, "--range", "full")
    expected_full = _ffmpeg(full_range, pix_fmt, full=True)
    assert len(expected_full) == FRAMES * 176 * 144 * 3 // 2
    assert hashlib.md5(full).hexdigest() == hashlib.md5(expected_full).hexdigest(), "--range full differs from ffmpeg's full-range output"
    default = _ours(mk_decode, full_range, tmp_path, layout)
    assert default == _ffmpeg(full_range, pix_fmt, full=False), "the default (limited) output changed"
    assert default != full, "full and limited range gave the same bytes: the test does not exercise the range"


def test_limited_range_file_stays_limited(mk_decode, shared_media, tmp_path):
    path = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"
    if not path.is_file():
        pytest.fail(f"{path} is missing from the shared media", pytrace=False)
    video = next(s for s in lib.ffprobe_json(path)["streams"] if s["codec_type"] == "video")
    assert video.get("color_range") != "pc", "the file is meant to be limited range"
    ours = _ours(mk_decode, path, tmp_path, "nv12", "--range", "full")
    assert ours == _ffmpeg(path, "nv12", full=False)


def test_a_bad_range_is_refused(mk_decode, full_range, tmp_path):
    proc = lib.run([mk_decode, full_range, "--video-out", tmp_path / "x.yuv", "--range", "pc"])
    assert proc.returncode != 0 and "--range" in proc.stderr.decode() and not (tmp_path / "x.yuv").exists()


@pytest.mark.parametrize("name,frames", [("mp4_h264_aac_moov_at_start_ctts_8s.mp4", FRAMES),
                                         ("mp4_av1_10bit_hdr10_aac_720x1280.mp4", 3)])
@pytest.mark.parametrize("layout,bytes_per_pixel", [("bgra", 4.0), ("p010le", 3.0)])
def test_bgra_and_p010_equal_ffmpeg(name, frames, layout, bytes_per_pixel, mk_decode, shared_media, tmp_path):
    path = shared_media / name
    if not path.is_file():
        pytest.fail(f"{path} is missing from the shared media", pytrace=False)
    video = next(s for s in lib.ffprobe_json(path)["streams"] if s["codec_type"] == "video")
    out = tmp_path / f"out.{layout}"
    cmd = [mk_decode, path, "--video-out", out, "--pixel-format", layout, "--frames", str(frames), "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    proc = lib.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-frames:v", str(frames),
                    "-pix_fmt", layout, "-f", "rawvideo", "-"])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    assert len(proc.stdout) == frames * int(video["width"] * video["height"] * bytes_per_pixel)
    ours = out.read_bytes()
    assert len(ours) == len(proc.stdout), f"{len(ours)} bytes, ffmpeg {len(proc.stdout)}"
    assert hashlib.md5(ours).hexdigest() == hashlib.md5(proc.stdout).hexdigest(), f"{layout} differs from ffmpeg -pix_fmt {layout}"
