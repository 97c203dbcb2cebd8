"""The C API's video encoder (mk_video_encoder_*, issue 36 item 2) used from C only:
Tests/c/video_encode.c reads raw pictures, encodes them with libx264 -qp 0 (lossless) or -qp 20
(x264 codes no B-frames at -qp 0, so the B-frame cases are lossy) through
mk_video_encoder_send_planes, forcing every 7th picture to a key frame, and muxes the packets
with mk_muxer_add_track_params from mk_video_encoder_get_params.

Input: 20 pictures of testsrc2, 64x64 at 25 fps, as `ffmpeg -f rawvideo -pix_fmt F` writes them.

Oracles:
  ffmpeg's encode   ffmpeg -f rawvideo -pix_fmt F -s 64x64 -r 25 -i IN -c:v libx264 -qp 0
                    -preset veryfast -g 12 -bf B -threads 1 -force_key_frames (every 7th)
                    -pix_fmt CODED: the video packets of both MP4s byte-identical (size and MD5
                    of each packet, `ffmpeg -c copy -f framemd5`), the same timestamps and the
                    same avcC; for RGB24 input this also says the RGB -> yuv420p conversion is
                    ffmpeg's (libswscale as the ffmpeg tool sets it up).
  exact frames      lossless: `ffmpeg -i ours.mp4 -f rawvideo -pix_fmt F` gives back the input
                    bytes exactly (yuv420p, yuv444p; NV12 coded as yuv420p).
  B-frames          the packets have B-frames (ffprobe pict_type), ffprobe start_time is 0 (the
                    edit list) and every picture is decoded, at the time of its pts.
  writer            `video_encode writer` (mk_writer): 30 yuv420p pictures (-qp 0) and an s16
                    tone into an MP4: ffprobe shows h264 and aac, both 1.2 s, video start_time
                    0; ffmpeg's decode gives the pictures back exactly; closing an unfinished
                    writer leaves no file (and nothing else in the folder).
  misuse            `video_encode misuse`: NULL, unknown codec, small struct, refused pixel
                    format, short stride, send after flush, closed handle: each status as
                    the header says; no handle left by a refused open.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import oracle_lib as lib
from test_capi import _build, _libdir
from test_video_encode import decoded_frames, video_packets, video_stream

VIDEO_ENCODE_C = lib.REPO / "Tests" / "c" / "video_encode.c"
W, H, N = 64, 64, 20

# id: (input pixel format, coded pixel format, B-frames, qp)
CASES = {
    "yuv420p-lossless": ("yuv420p", "yuv420p", 2, 0),
    "yuv444p-lossless": ("yuv444p", "yuv444p", 0, 0),
    "nv12-lossless": ("nv12", "yuv420p", 0, 0),
    "yuv420p-bframes": ("yuv420p", "yuv420p", 3, 20),
    "rgb24-bframes": ("rgb24", "yuv420p", 2, 20),
}


@pytest.fixture(scope="module")
def program(mk_bin, tmp_path_factory) -> Path:
    return _build(VIDEO_ENCODE_C, tmp_path_factory.mktemp("venc") / "video_encode", _libdir(mk_bin))


def _raw(path: Path, fmt: str) -> bytes:
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate=25", "-frames:v", str(N),
           "-f", "rawvideo", "-pix_fmt", fmt, path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path.read_bytes()


@pytest.mark.parametrize("case", list(CASES))
def test_packets_are_ffmpegs_and_frames_come_back(case, program, tmp_path):
    fmt, coded, bf, qp = CASES[case]
    raw = tmp_path / f"in.{fmt}"
    data = _raw(raw, fmt)
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ref.mp4"
    cmd = [program, raw, fmt, coded, str(W), str(H), "25", str(bf), str(qp), ours]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="video_encode")
    out = proc.stdout.decode()
    assert f"frames {N} packets {N}" in out, out[-2000:]
    info = out.splitlines()[0].split()
    assert info[:5] == ["info", "libx264", f"{W}x{H}", "tb", "1/25"], out[:200]
    assert (int(info[6]) > 0) == (bf > 0), f"reorder delay {info[6]} with {bf} B-frames"
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", fmt, "-s", f"{W}x{H}", "-r", "25", "-i", raw,
           "-c:v", "libx264", "-qp", str(qp), "-preset", "veryfast", "-g", "12", "-bf", str(bf), "-threads", "1",
           "-force_key_frames", "expr:gt(n,0)*not(mod(n,7))", "-pix_fmt", coded, ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    a, b = video_packets(ours), video_packets(ref)
    assert len(a) == len(b) == N, f"{len(a)} packets, ffmpeg {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        assert x[2:] == y[2:], f"packet {i}: size/md5 {x[2:]} against ffmpeg's {y[2:]}"
        assert x[:2] == y[:2], f"packet {i}: dts/pts {x[:2]} s against ffmpeg's {y[:2]} s"
    sa, sb = video_stream(ours), video_stream(ref)
    assert sa["extradata_hash"] == sb["extradata_hash"], "the avcC differs from ffmpeg's"
    assert float(sa["start_time"]) == 0.0, f"start_time {sa['start_time']}"
    assert decoded_frames(ours) == [f"{i / 25:.4f}" for i in range(N)]
    types = lib.run(["ffprobe", "-v", "error", "-show_entries", "frame=pict_type", "-of", "csv=p=0", ours]).stdout.decode()
    assert ("B" in types) == (qp > 0 and bf > 0), f"picture types {types.split()}"
    if qp == 0:   # lossless: the pictures come back exactly
        cmd = ["ffmpeg", "-v", "error", "-i", ours, "-f", "rawvideo", "-pix_fmt", fmt, "-"]
        proc = lib.run(cmd)
        lib.oracle_ok(proc, cmd)
        assert proc.stdout == data, "the decoded pictures differ from the input"


def test_misuse(program):
    proc = lib.run([program, "misuse"])
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "misuse ok" in out, out + lib.tail(proc.stderr)
    assert "unknown-codec MK_ENOTFOUND" in out and "no-such-encoder" in out, out
    assert "send-after-flush MK_ESTATE" in out, out


def test_writer(program, tmp_path):
    raw = tmp_path / "in.yuv"
    data = _raw(raw, "yuv420p")
    out = tmp_path / "out.mp4"
    proc = lib.run([program, "writer", raw, str(W), str(H), "25", out])
    lib.check_ok(proc, [program, "writer"], who="video_encode writer")
    assert f"writer frames {N} samples {N * 1920}" in proc.stdout.decode()
    cmd = ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,start_time,duration", "-of", "json", out]
    probe = lib.run(cmd)
    lib.oracle_ok(probe, cmd)
    streams = {s["codec_name"]: s for s in json.loads(probe.stdout)["streams"]}
    assert set(streams) == {"h264", "aac"}
    assert float(streams["h264"]["start_time"]) == 0.0
    for s in streams.values():
        assert abs(float(s["duration"]) - N / 25) < 1e-3, streams
    cmd = ["ffmpeg", "-v", "error", "-i", out, "-map", "0:v", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]
    dec = lib.run(cmd)
    lib.oracle_ok(dec, cmd)
    assert dec.stdout == data
    cancelled = tmp_path / "cancelled.mp4"
    proc = lib.run([program, "writer", raw, str(W), str(H), "25", cancelled, "cancel"])
    lib.check_ok(proc, [program, "writer", "cancel"], who="video_encode writer cancel")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.yuv", "out.mp4"], "an unfinished writer left a file"
