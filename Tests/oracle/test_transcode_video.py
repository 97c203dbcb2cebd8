"""mk-transcode for movies (issue 36 item 4) against FFmpeg 5.1 doing the same.

Input: 2 s of testsrc2, 320x240 at 25 fps, coded by libx264 with B-frames and a mono AAC track
(the source of test_video_encode.py), and real files of ../shared/media.

  --fps / --scale       mk-transcode SRC out.mp4 --video-codec libx264 --threads 1 ... --fps R
                        --scale W:H [--scale-filter F] against
                        ffmpeg -i SRC -an -vf fps=R,scale=W:H[:flags=F] -c:v libx264 -threads 1 ...:
                        the video packets byte-identical (size and MD5 of each packet of
                        `ffmpeg -c copy -f framemd5`), the same count and the same timestamps in
                        seconds, the same avcC; rates that repeat pictures (25 -> 30, 30000/1001)
                        and that drop them (25 -> 10), -1 / -2 / 0 sizes, lanczos. A variable
                        frame rate file of ../shared/media (63 pictures over 8.7 s, 3026x1386) put
                        on 10 fps at 640:-2, a 10-bit HLG AV1 Matroska file and a VP9 WebM (1/1000
                        time base; see REAL for its aspect-ratio difference): ffmpeg's encode with
                        `-fps_mode passthrough` (the fps filter's grid as it is; mk-transcode does
                        not fill a late start).
                        ffmpeg's decode of our output equals mk-decode's (the MD5 of every picture).
  tracks                --audio-codec copy: the audio packets of the output are the source's
                        (ffmpeg -c copy framemd5 of both); --no-audio: one video stream
                        (ffprobe); --no-audio --copy-video: the source's video packets only;
                        --no-video: one audio stream. Contradicting options are refused with a
                        message naming them, and nothing is written.
  progress, cancel      a video-only encode prints its progress on a terminal, rising to 100 %;
                        SIGINT while the output is being written exits 130 and leaves nothing
                        (not even the hidden partial file) in the output folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import pty
import re
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

import oracle_lib as lib
from test_video_encode import decoded_frames, video_packets, video_stream

X264 = ["--video-codec", "libx264", "--preset", "veryfast", "--crf", "28", "--threads", "1"]
FF_X264 = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "28", "-threads", "1"]


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("movie") / "src.mp4"
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi",
           "-i", "sine=f=440:sample_rate=44100", "-t", "2", "-c:v", "libx264", "-bf", "2", "-g", "25",
           "-c:a", "aac", "-ac", "1", "-shortest", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


def text(data: bytes | str) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def ffmpeg_picture_md5s(path: Path) -> list[str]:
    """The MD5 of each picture ffmpeg decodes from PATH's video, as yuv420p."""
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-pix_fmt", "yuv420p",
           "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [line.rsplit(",", 1)[1].strip() for line in text(proc.stdout).splitlines() if line.strip() and not line.startswith("#")]


def our_picture_md5s(path: Path, mk_decode: Path, tmp: Path) -> list[str]:
    """The MD5 of each picture mk-decode writes from PATH's video, as I420."""
    raw = tmp / (path.stem + ".yuv")
    cmd = [mk_decode, path, "--video-out", raw, "--pixel-format", "i420", "--quiet"]
    lib.check_ok(lib.run(cmd), cmd)
    w, h = (int(video_stream(path)[k]) for k in ("width", "height"))
    size = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
    data = raw.read_bytes()
    raw.unlink()
    assert len(data) % size == 0, f"{len(data)} bytes is not a whole number of {w}x{h} pictures"
    return [hashlib.md5(data[i:i + size]).hexdigest() for i in range(0, len(data), size)]


def compare_encodes(ours: Path, ref: Path, expect_size: tuple[int, int] | None = None) -> None:
    a, b = video_packets(ours), video_packets(ref)
    assert len(a) == len(b), f"{len(a)} packets, ffmpeg's encode {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        assert x[2:] == y[2:], f"packet {i}: size/md5 {x[2:]} against ffmpeg's {y[2:]}"
        assert x[:2] == y[:2], f"packet {i}: dts/pts {x[:2]} s against ffmpeg's {y[:2]} s"
    sa, sb = video_stream(ours), video_stream(ref)
    for key in ("extradata_hash", "width", "height", "pix_fmt", "r_frame_rate"):
        assert sa.get(key) == sb.get(key), f"{key}: {sa.get(key)} against ffmpeg's {sb.get(key)}"
    if expect_size:
        assert (sa["width"], sa["height"]) == expect_size


# (our options, ffmpeg's -vf, the size expected from 320x240)
CASES = {
    "fps30_scale160x-2": (["--fps", "30", "--scale", "160:-2"], "fps=30,scale=160:-2", (160, 120)),
    "fps10_lanczos": (["--fps", "10", "--scale", "200:150", "--scale-filter", "lanczos"], "fps=10,scale=200:150:flags=lanczos", (200, 150)),
    "ntsc_only": (["--fps", "30000/1001"], "fps=30000/1001", (320, 240)),
    "scale_-2x100_only": (["--scale", "-2:100"], "scale=-2:100", (134, 100)),
    "scale_0x-2_bilinear": (["--scale", "0:-2", "--scale-filter", "bilinear"], "scale=0:-2:flags=bilinear", (320, 240)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_fps_and_scale_give_ffmpegs_packets(case, source, mk_transcode, mk_decode, tmp_path):
    ours_args, vf, size = CASES[case]
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ref.mp4"
    cmd = [mk_transcode, source, ours, "--quiet", *X264, *ours_args]
    lib.check_ok(lib.run(cmd), cmd)
    cmd = ["ffmpeg", "-v", "error", "-y", "-i", source, "-an", "-vf", vf, *FF_X264, ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    compare_encodes(ours, ref, size)
    assert ffmpeg_picture_md5s(ours) == our_picture_md5s(ours, mk_decode, tmp_path)


# (file, --fps, --scale, what ffmpeg's -vf adds, the size expected)
REAL = {
    "vfr_mp4": ("mp4_h264_vfr_odd_size_3026x1386_no_elst.mp4", "10", "640:-2", "", (640, 294)),
    "av1_10bit_hlg_mkv": ("mkv_av1_720x1280_tiny.mkv", "24", "360:-2", "", (360, 640)),
    # Known difference, in our Matroska demuxer: ffmpeg's states a sample aspect ratio of 1:1 for
    # a video track without DisplayWidth / DisplayHeight, ours states none, and VP9 pictures carry
    # none: libx264 then writes no aspect ratio into the SPS. setsar=0 takes ffmpeg's away so that
    # the rest (fps on a 1/1000 time base, scaling) is compared byte for byte.
    "vp9_webm": ("webm_vp9_1080x1080_3s.webm", "24", "480:-2", ",setsar=0", (480, 480)),
}


@pytest.mark.parametrize("case", list(REAL))
def test_real_files_onto_a_grid_and_scaled(case, shared_media, mk_transcode, mk_decode, tmp_path):
    name, fps, scale, extra, size = REAL[case]
    src = shared_media / name
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ref.mp4"
    cmd = [mk_transcode, src, ours, "--quiet", *X264, "--fps", fps, "--scale", scale]
    lib.check_ok(lib.run(cmd), cmd)
    cmd = ["ffmpeg", "-v", "error", "-y", "-i", src, "-an", "-vf", f"fps={fps},scale={scale}{extra}", "-fps_mode", "passthrough",
           *FF_X264, ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    compare_encodes(ours, ref, size)
    assert ffmpeg_picture_md5s(ours) == our_picture_md5s(ours, mk_decode, tmp_path)


def stream_kinds(path: Path) -> list[str]:
    cmd = ["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name", "-of", "json", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [f"{s['codec_type']}:{s['codec_name']}" for s in json.loads(proc.stdout)["streams"]]


def packet_md5s(path: Path, stream: str) -> list[str]:
    """(size, md5) of each packet of PATH's first `stream` ("a" or "v") track, by ffmpeg -c copy."""
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", f"0:{stream}:0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [",".join(f.strip() for f in line.split(",")[4:]) for line in text(proc.stdout).splitlines()
            if line.strip() and not line.startswith("#")]


def test_audio_copied_beside_an_encoded_video(source, mk_transcode, tmp_path):
    out = tmp_path / "acopy.mp4"
    cmd = [mk_transcode, source, out, *X264, "--audio-codec", "copy", "--scale", "160:120"]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    assert "audio aac copied" in text(proc.stdout), text(proc.stdout)
    assert sorted(stream_kinds(out)) == ["audio:aac", "video:h264"]
    assert packet_md5s(out, "a") == packet_md5s(source, "a")
    assert (video_stream(out)["width"], video_stream(out)["height"]) == (160, 120)


def test_no_audio_and_video_copy(source, mk_transcode, tmp_path):
    out = tmp_path / "vcopy.mp4"
    cmd = [mk_transcode, source, out, "--quiet", "--no-audio", "--video-codec", "copy"]
    lib.check_ok(lib.run(cmd), cmd)
    assert stream_kinds(out) == ["video:h264"]
    assert packet_md5s(out, "v") == packet_md5s(source, "v")
    out = tmp_path / "audio.m4a"
    cmd = [mk_transcode, source, out, "--quiet", "--no-video"]
    lib.check_ok(lib.run(cmd), cmd)
    assert stream_kinds(out) == ["audio:aac"]


def test_video_encode_without_audio_reports_progress(source, mk_transcode, tmp_path):
    """On a terminal the video-only encode prints its progress (by the video's time) up to 100 %."""
    out = tmp_path / "silent.mp4"
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(mk_transcode), str(source), str(out), *X264, "--no-audio"], stdout=subprocess.PIPE,
                            stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    seen = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(master)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0, text(seen)
    assert stream_kinds(out) == ["video:h264"]
    assert "video libx264, 50 pictures" in text(stdout)
    values = [float(v) for v in re.findall(rb"\r\s*([0-9.]+)%", seen)]
    assert len(values) >= 10, f"progress lines: {values}"
    assert values == sorted(values) and values[-1] == 100.0 and values[0] < 10, values


REFUSED = [
    (["--no-audio", "--audio-codec", "copy", "--video-codec", "libx264"], ["--no-audio", "--audio-codec copy"]),
    (["--no-audio", "--bitrate", "96k", "--video-codec", "libx264"], ["--bitrate", "--no-audio"]),
    (["--audio-codec", "copy", "--codec", "aac"], ["--codec", "--audio-codec"]),
    (["--no-video", "--video-codec", "libx264"], ["--no-video", "--video-codec"]),
    (["--copy-video", "--video-codec", "libx264"], ["--copy-video", "--video-codec libx264"]),
    (["--video-codec", "copy", "--scale", "160:120"], ["--scale", "copied video"]),
    (["--video-codec", "copy", "--crf", "20"], ["--crf", "copied video is not encoded"]),
    (["--fps", "30"], ["--fps", "--video-codec"]),
    (["--no-audio"], ["--no-audio", "nothing to write"]),
    (["--video-codec", "libx264", "--fps", "0"], ["--fps 0"]),
    (["--video-codec", "libx264", "--scale", "big"], ["--scale big"]),
    (["--video-codec", "libx264", "--scale", "160:120", "--scale-filter", "sharp"], ["--scale-filter sharp", "lanczos"]),
]


@pytest.mark.parametrize("args,words", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_contradicting_options_are_refused(args, words, source, mk_transcode, tmp_path):
    out = tmp_path / "out.mp4"
    proc = lib.run([mk_transcode, source, out, *args])
    err = text(proc.stderr)
    assert proc.returncode != 0, err
    for w in words:
        assert w in err, f"{w!r} not in: {err}"
    assert list(tmp_path.iterdir()) == []


def test_sigint_mid_transcode_leaves_nothing(mk_transcode, tmp_path):
    src = tmp_path / "long.mp4"
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi",
           "-i", "sine=f=440:sample_rate=48000", "-t", "60", "-c:v", "libx264", "-preset", "ultrafast",
           "-c:a", "aac", "-shortest", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    outdir = tmp_path / "out"
    outdir.mkdir()
    out = outdir / "movie.mp4"
    proc = subprocess.Popen([str(mk_transcode), str(src), str(out), "--quiet", "--video-codec", "libx264", "--preset", "veryslow",
                             "--threads", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    # The muxer's hidden partial file appears once the encoders have their first packets.
    while time.monotonic() < deadline and proc.poll() is None and not list(outdir.iterdir()):
        time.sleep(0.05)
    partial = [p.name for p in outdir.iterdir()]
    assert proc.poll() is None, f"mk-transcode ended (status {proc.returncode}) before the signal: {text(proc.stderr.read())}"
    assert partial and partial[0].startswith(".movie.mp4.partial"), partial
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, f"status {proc.returncode}: {text(err)}"
    assert "cancelled" in text(err), text(err)
    assert list(outdir.iterdir()) == [], [p.name for p in outdir.iterdir()]
