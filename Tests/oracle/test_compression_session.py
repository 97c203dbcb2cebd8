"""Issue 36 items 2 and 4 from C: mk_compression_session (the asynchronous video encoder) and
mk_transcode_with's video re-encode, through Tests/c/compression_session.c only.

Oracles:
  the synchronous encoder   `compression_session encode`: the same yuv420p pictures (testsrc2)
                            through mk_video_encoder and mk_compression_session set up alike
                            (libx264 -threads 1, B-frames, forced key frames): the packets the
                            callback gets are the synchronous encoder's, in its order (pts, dts,
                            key flag, size, a hash of the bytes); complete_frames(pts) halfway has
                            delivered what the synchronous encoder released by then, and the flush
                            the rest; every callback ran on a thread other than the caller's, one at a
                            time; an encode after the end is MK_ESTATE. (mk_video_encoder's packets
                            are ffmpeg's: test_capi_video_encode.py.)
  misuse                    `compression_session misuse`: each refusal's status as the header says,
                            no handle left by a refused open, no callback after close returns.
  mk-transcode, ffmpeg      `compression_session transcode SRC DST video_codec=libx264 ...` writes
                            the very file mk-transcode writes with the same options (byte for byte:
                            one code path), and its video packets are those of
                            `ffmpeg -vf fps=R,scale=W:H -c:v libx264 -threads 1` (size and MD5 of
                            each, the same timestamps and avcC); the copied audio is the source's
                            packets. Also on a real file of ../shared/media (variable frame rate).
  refusals                  contradicting fields are MK_EINVAL naming them, and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import oracle_lib as lib
from test_capi import INCLUDE, _cc, _libdir
from test_transcode_video import FF_X264, X264, compare_encodes, packet_md5s, stream_kinds

SESSION_C = lib.REPO / "Tests" / "c" / "compression_session.c"
W, H, N = 64, 48, 30
C_X264 = ["video_codec=libx264", "preset=veryfast", "crf=28", "threads=1"]


@pytest.fixture(scope="module")
def program(mk_bin, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("csession") / "compression_session"
    libdir = _libdir(mk_bin)
    _cc(["-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pthread", "-I", INCLUDE, SESSION_C,
         "-L", libdir, "-lmediakit", f"-Wl,-rpath,{libdir}", "-o", out], "building compression_session.c")
    return out


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    """2 s of testsrc2 at 320x240, 25 fps, libx264 with B-frames, and a mono AAC track."""
    out = tmp_path_factory.mktemp("csrc") / "src.mp4"
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi",
           "-i", "sine=f=440:sample_rate=44100", "-t", "2", "-c:v", "libx264", "-bf", "2", "-g", "25",
           "-c:a", "aac", "-ac", "1", "-shortest", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


@pytest.mark.parametrize("bframes,qp", [(3, 20), (0, 0)], ids=["bframes", "lossless-no-bframes"])
def test_session_packets_are_the_sync_encoders(bframes, qp, program, tmp_path):
    raw = tmp_path / "in.yuv"
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate=25", "-frames:v", str(N),
           "-f", "rawvideo", "-pix_fmt", "yuv420p", raw]
    lib.oracle_ok(lib.run(cmd), cmd)
    cmd = [program, "encode", raw, str(W), str(H), "25", str(bframes), str(qp)]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="compression_session encode")
    lines = proc.stdout.decode().splitlines()
    sync = [line.split(None, 1)[1] for line in lines if line.startswith("sync ")]
    delivered = [line.split(None, 1)[1] for line in lines if line.startswith("async ")]
    assert len(sync) == N, f"{len(sync)} packets from the synchronous encoder for {N} pictures"
    assert delivered == sync, "the session's packets differ from the synchronous encoder's:\n" + \
        "\n".join(f"{a!r} / {b!r}" for a, b in zip(delivered, sync) if a != b)[:2000]
    params = next(line for line in lines if line.startswith("params "))
    assert params.split()[1:3] == ["h264", "h264"] and params.endswith("extradata same"), params
    sync_delay, session_delay = params.split()[7].split("/")
    assert sync_delay == session_delay and (int(session_delay) > 0) == (bframes > 0), params
    mid = next(line for line in lines if line.startswith("mid ")).split()
    assert mid[2] == mid[4], f"complete_frames(pts) halfway delivered {mid[4]} packets; the sync encoder had released {mid[2]}"
    if bframes:
        assert int(mid[2]) < N // 2 + 1, "the encoder held nothing back halfway: the test says nothing about complete_frames"
    assert f"end sync {N} async {N} frames {N}" in lines
    assert "after-flush MK_ESTATE" in lines and "second-flush MK_OK" in lines
    assert "callback-thread other errors 0" in lines, [line for line in lines if line.startswith("callback-thread")]


def test_session_misuse(program):
    proc = lib.run([program, "misuse"])
    out = proc.stdout.decode()
    assert proc.returncode == 0 and "misuse ok" in out, out + lib.tail(proc.stderr)
    assert "unknown-codec MK_ENOTFOUND" in out and "no-such-encoder" in out, out
    assert "encode-after-flush MK_ESTATE" in out and "nopts MK_EINVAL" in out, out


def _c_transcode(program: Path, src: Path, dst: Path, *fields: str) -> str:
    cmd = [program, "transcode", src, dst, *fields]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="compression_session transcode")
    return proc.stdout.decode().strip()


def test_c_transcode_is_mk_transcodes_and_ffmpegs(program, source, mk_transcode, tmp_path):
    ours, tool, ref = tmp_path / "c.mp4", tmp_path / "tool.mp4", tmp_path / "ref.mp4"
    out = _c_transcode(program, source, ours, *C_X264, "fps_num=30", "fps_den=1", "scale_width=160", "scale_height=-2",
                       "max_b_frames=3", "copy_audio=1")
    assert out == "transcode MK_OK", out
    cmd = [mk_transcode, source, tool, "--quiet", *X264, "--fps", "30", "--scale", "160:-2", "--bframes", "3",
           "--audio-codec", "copy"]
    lib.check_ok(lib.run(cmd), cmd)
    assert ours.read_bytes() == tool.read_bytes(), "mk_transcode_with wrote another file than mk-transcode with the same options"
    cmd = ["ffmpeg", "-v", "error", "-y", "-i", source, "-an", "-vf", "fps=30,scale=160:-2", *FF_X264, "-bf", "3", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    compare_encodes(ours, ref, (160, 120))
    assert sorted(stream_kinds(ours)) == ["audio:aac", "video:h264"]
    assert packet_md5s(ours, "a") == packet_md5s(source, "a")


def test_c_transcode_real_file_lanczos_video_only(program, shared_media, mk_transcode, tmp_path):
    src = shared_media / "mp4_h264_vfr_odd_size_3026x1386_no_elst.mp4"
    ours, tool, ref = tmp_path / "c.mp4", tmp_path / "tool.mp4", tmp_path / "ref.mp4"
    out = _c_transcode(program, src, ours, *C_X264, "fps_num=10", "fps_den=1", "scale_width=640", "scale_height=-2",
                       "scale_filter=6", "no_audio=1")
    assert out == "transcode MK_OK", out
    cmd = [mk_transcode, src, tool, "--quiet", *X264, "--fps", "10", "--scale", "640:-2", "--scale-filter", "lanczos", "--no-audio"]
    lib.check_ok(lib.run(cmd), cmd)
    assert ours.read_bytes() == tool.read_bytes(), "mk_transcode_with wrote another file than mk-transcode with the same options"
    cmd = ["ffmpeg", "-v", "error", "-y", "-i", src, "-an", "-vf", "fps=10,scale=640:-2:flags=lanczos", "-fps_mode", "passthrough",
           *FF_X264, ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    compare_encodes(ours, ref, (640, 294))
    assert stream_kinds(ours) == ["video:h264"]


# (fields, words the message must hold)
REFUSALS = {
    "copy-and-encode": (["video_codec=libx264", "copy_video=1"], ["copy_video", "video_codec"]),
    "no-video-and-encode": (["video_codec=libx264", "no_video=1"], ["no_video", "video_codec"]),
    "crf-without-codec": (["crf=23", "gop_size=12"], ["crf", "gop_size", "video_codec"]),
    "scale-on-copy": (["video_codec=copy", "scale_width=160", "scale_height=-2"], ["scale_width", "copied"]),
    "filter-without-scale": (["video_codec=libx264", "scale_filter=6"], ["scale_filter"]),
    "bad-filter": (["video_codec=libx264", "scale_width=160", "scale_height=-2", "scale_filter=99"], ["scale_filter", "MK_SCALE_"]),
    "half-fps": (["video_codec=libx264", "fps_num=30"], ["fps"]),
    "copy-and-drop-audio": (["video_codec=libx264", "copy_audio=1", "no_audio=1"], ["copied", "left out"]),
    "audio-settings-on-copy": (["video_codec=libx264", "copy_audio=1", "audio_bit_rate=96000"], ["bit rate", "copied"]),
    "old-struct-too-small": (["struct_size=16"], ["struct_size"]),
    "struct-size-cuts-a-field": (["struct_size=44"], ["struct_size is 44"]),
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_c_transcode_refuses_contradictions(case, program, source, tmp_path):
    fields, words = REFUSALS[case]
    dst = tmp_path / "out.mp4"
    out = _c_transcode(program, source, dst, *fields)
    assert out.startswith("transcode MK_EINVAL"), out
    for w in words:
        assert w in out, f"the message does not name {w!r}: {out}"
    assert list(tmp_path.iterdir()) == [], "a refused transcode left a file"


def test_c_transcode_0_2_struct_size_keeps_the_audio_path(program, source, tmp_path):
    """A caller built against the 0.2 header (struct_size 40: up to progress_user) still
    transcodes the audio; the 0.3 fields keep their defaults."""
    dst = tmp_path / "audio.m4a"
    out = _c_transcode(program, source, dst, "struct_size=40", "video_codec=libx264")
    assert out == "transcode MK_OK", out
    assert stream_kinds(dst) == ["audio:aac"]
