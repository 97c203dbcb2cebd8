"""Raw video elementary streams (RawVideoDemuxer): H.264 / HEVC Annex B byte streams and AV1
low-overhead OBU streams, read as FFmpeg 5.1's h264 / hevc / obu demuxers and parsers read them.

Oracles (../shared/ORACLES.md), on the same input:
  - packets: `ffprobe -show_entries packet=pts,dts,duration,size,pos,flags` line for line
    (pts / dts N/A for H.264 / HEVC, as ffprobe prints them), and the packets' MD5s
    (`ffprobe -show_data_hash md5`) against the bytes of ours (Python bindings);
  - decode: `ffmpeg -i X -fps_mode passthrough -f rawvideo -pix_fmt yuv420p` against
    `mk-decode --pixel-format i420`, bit-exact;
  - remux: ffmpeg's decode of our MP4 / MKV equals its decode of the raw stream, and the
    MP4's packets (`ffmpeg -c copy -f framemd5` of the MP4 against ffmpeg's own
    `-c copy` MP4 of the raw stream) are the raw stream's access units;
  - --frame-rate: ffprobe's `-framerate` for the obu demuxer (ffprobe ignores it for h264,
    whose durations follow the SPS or 25), ffmpeg's `-r R -i` for the MP4's frame durations;
  - a pipe gives the packets a file gives; a file cut short gives what ffprobe gives of it.

Inputs: the breadth corpus' 264_* / 265_* files (../shared/media/breadth: skipped when missing,
failed under CI=true) and streams made here with libx264 (B-frames), libx265 and libaom.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oracle_lib as lib

BREADTH = ["264_Eyevinn_54e476_blackframe.264", "264_Eyevinn_8b9069_4pics.264",
           "265_Eyevinn_304cf2_deblocking_offsets.265", "265_Eyevinn_b1c471_blackframe.265"]
GENERATED = ["x264_bframes.h264", "x264_slices.264", "x264_main41", "x265.hevc", "aom.obu"]
ALL = [f"shared:breadth/{n}" for n in BREADTH] + [f"gen:{n}" for n in GENERATED]


def _encoders() -> str:
    return subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True).stdout


@lib.generated_once
def _make(name: str, folder: Path) -> Path:
    out = folder / name
    if out.is_file():
        return out
    src = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "2"]
    if name == "x264_bframes.h264":
        cmd = src + ["-c:v", "libx264", "-bf", "2", "-g", "12", "-pix_fmt", "yuv420p", "-f", "h264", str(out)]
    elif name == "x264_slices.264":   # 4 slices a picture, AUDs, 30000/1001 in the SPS
        cmd = src + ["-r", "30000/1001", "-c:v", "libx264", "-bf", "3", "-x264-params", "slices=4:aud=1",
                     "-pix_fmt", "yuv420p", "-f", "h264", str(out)]
    elif name == "x264_main41":   # no extension; starts 00 00 00 01 "gM@)": the MP4 probe must not take it
        cmd = src + ["-c:v", "libx264", "-profile:v", "main", "-level", "4.1", "-bf", "0", "-pix_fmt", "yuv420p",
                     "-f", "h264", str(out)]
    elif name == "x265.hevc":
        if "libx265" not in _encoders():
            pytest.skip("this ffmpeg has no libx265 encoder to make an HEVC stream with")
        cmd = src + ["-c:v", "libx265", "-x265-params", "log-level=error:bframes=3:keyint=12",
                     "-pix_fmt", "yuv420p", "-f", "hevc", str(out)]
    elif name == "aom.obu":
        if "libaom-av1" not in _encoders():
            pytest.skip("this ffmpeg has no libaom-av1 encoder to make an AV1 stream with")
        cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-t", "1",
               "-c:v", "libaom-av1", "-cpu-used", "8", "-f", "obu", str(out)]
    else:
        raise AssertionError(name)
    proc = lib.run(cmd)
    assert proc.returncode == 0 and out.is_file(), f"could not make {name}: {proc.stderr[-800:]}"
    return out


@pytest.fixture(scope="module")
def gen_dir(tmp_path_factory) -> Path:
    return lib.shared_tmp(tmp_path_factory, "raw-video")


@pytest.fixture
def stream(request, gen_dir) -> Path:
    return lib.media_param_file(request.param, gen_dir, _make)


def _ffprobe_packets(path: Path, *pre: str) -> list[str]:
    out = subprocess.run(["ffprobe", "-v", "error", *pre, "-show_entries", "packet=pts,dts,duration,size,pos,flags",
                          "-of", "csv=p=0", str(path)], capture_output=True, text=True, check=True).stdout
    return [line.replace(",K_", ",K").replace(",__", ",_") for line in out.splitlines()]


def _our_packets(mk_bin: Path, path: str, *extra: str, stdin: bytes | None = None) -> list[str]:
    proc = subprocess.run([str(mk_bin / "mk-probe"), "--packets", *extra, path], input=stdin, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    # track,pts,dts,duration,size,offset,flags: ffprobe's columns after the track index
    return [line.split(",", 1)[1] for line in proc.stdout.decode().splitlines()]


def _first_difference(ours: list[str], theirs: list[str]) -> str:
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            return f"packet {i}: ours {a!r}, ffprobe {b!r}"
    return f"ours has {len(ours)} packets, ffprobe {len(theirs)}"


@pytest.mark.parametrize("stream", ALL, indirect=True)
def test_packets_equal_ffprobe(mk_bin, stream):
    ours, theirs = _our_packets(mk_bin, str(stream)), _ffprobe_packets(stream)
    assert ours == theirs, _first_difference(ours, theirs)


@pytest.mark.parametrize("stream", ALL, indirect=True)
def test_packet_bytes_equal_ffprobe(mk_bin, stream):
    os.environ["MEDIAKIT_LIBRARY"] = str(mk_bin / "libmediakit.so")
    sys.path.insert(0, str(lib.REPO / "Bindings" / "python"))
    import mediakit as mk
    with mk.open(str(stream)) as demuxer:
        ours = [hashlib.md5(p.data).hexdigest() for p in demuxer.packets()]
    out = subprocess.run(["ffprobe", "-v", "error", "-show_data_hash", "md5", "-show_entries", "packet=data_hash",
                          "-of", "csv=p=0", str(stream)], capture_output=True, text=True, check=True).stdout
    theirs = [line.split(":", 1)[1].lower() for line in out.split()]
    assert ours == theirs, _first_difference(ours, theirs)


def _ffmpeg_decode(path: Path, *pre: str) -> str:
    out = subprocess.run(["ffmpeg", "-v", "error", *pre, "-i", str(path), "-map", "0:v:0", "-fps_mode", "passthrough",
                          "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"], capture_output=True, check=True).stdout
    assert out, f"ffmpeg decoded nothing of {path}"
    return hashlib.md5(out).hexdigest()


@pytest.mark.parametrize("stream", ALL, indirect=True)
def test_decode_equals_ffmpeg(mk_bin, stream, tmp_path):
    out = tmp_path / "ours.yuv"
    proc = lib.run([mk_bin / "mk-decode", "-q", "--video-out", out, "--pixel-format", "i420", stream])
    assert proc.returncode == 0, proc.stderr[-1500:].decode(errors="replace")
    assert hashlib.md5(out.read_bytes()).hexdigest() == _ffmpeg_decode(stream)


@pytest.mark.parametrize("ext", ["mp4", "mkv"])
@pytest.mark.parametrize("stream", ALL, indirect=True)
def test_remux_decodes_as_the_raw_stream(mk_bin, stream, tmp_path, ext):
    out = tmp_path / f"ours.{ext}"
    proc = lib.run([mk_bin / "mk-remux", "--quiet", stream, out])
    assert proc.returncode == 0, proc.stderr[-1500:].decode(errors="replace")
    assert _ffmpeg_decode(out) == _ffmpeg_decode(stream)


def _framemd5(path: Path) -> list[str]:
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", "0:v:0", "-c", "copy", "-f", "framemd5", "-"],
                         capture_output=True, text=True, check=True).stdout
    # stream, dts, pts, duration, size, hash: the sizes and hashes are the access units
    return [",".join(f.strip() for f in line.split(",")[4:]) for line in out.splitlines() if not line.startswith("#")]


@pytest.mark.parametrize("stream", [f"gen:{n}" for n in GENERATED if not n.endswith(".obu")], indirect=True)
def test_mp4_packets_are_the_access_units(mk_bin, stream, tmp_path):
    """ffmpeg's own -c copy MP4 of the raw stream holds the access units ffmpeg's parser cut;
    ours must hold the same bytes (the avcC / hvcC length-prefixed form of both)."""
    ours, theirs = tmp_path / "ours.mp4", tmp_path / "theirs.mp4"
    assert lib.run([mk_bin / "mk-remux", "--quiet", stream, ours]).returncode == 0
    subprocess.run(["ffmpeg", "-v", "error", "-r", "25", "-i", str(stream), "-c", "copy", str(theirs)], check=True)
    a, b = _framemd5(ours), _framemd5(theirs)
    assert a == b, _first_difference(a, b)


def test_frame_rate_option_obu_equals_ffprobe_framerate(mk_bin, gen_dir):
    stream = _make("aom.obu", gen_dir)
    for rate in ["30", "24000/1001"]:
        ours, theirs = _our_packets(mk_bin, str(stream), "--frame-rate", rate), _ffprobe_packets(stream, "-framerate", rate)
        assert ours == theirs, f"--frame-rate {rate}: " + _first_difference(ours, theirs)


def test_frame_rate_option_h264_times_the_mp4_as_ffmpeg_r(mk_bin, gen_dir, tmp_path):
    """ffmpeg -r 30 -i raw.h264 -c copy: 30 frames a second; ours the same frame durations."""
    stream = _make("x264_bframes.h264", gen_dir)
    ours, theirs = tmp_path / "ours.mp4", tmp_path / "theirs.mp4"
    proc = lib.run([mk_bin / "mk-remux", "--quiet", "--frame-rate", "30", stream, ours])
    assert proc.returncode == 0, proc.stderr
    subprocess.run(["ffmpeg", "-v", "error", "-r", "30", "-i", str(stream), "-c", "copy", str(theirs)], check=True)

    def rate(p):
        return subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=r_frame_rate",
                               "-of", "csv=p=0", str(p)], capture_output=True, text=True, check=True).stdout.strip()
    assert rate(ours) == rate(theirs) == "30/1"
    assert _our_packets(mk_bin, str(stream), "--frame-rate", "30")[0].split(",")[2] == "40000"
    bad = lib.run([mk_bin / "mk-probe", "--packets", "--frame-rate", "0", stream])
    assert bad.returncode != 0 and "--frame-rate" in bad.stderr.decode()


@pytest.mark.parametrize("stream", ALL, indirect=True)
def test_pipe_equals_file(mk_bin, stream):
    assert _our_packets(mk_bin, "-", stdin=stream.read_bytes()) == _our_packets(mk_bin, str(stream))


@pytest.mark.parametrize("stream", [f"gen:{n}" for n in GENERATED], indirect=True)
def test_truncated_stream_reads_as_far_as_it_goes(mk_bin, stream, tmp_path):
    data = stream.read_bytes()
    for cut in [len(data) * 2 // 3, len(data) // 2 + 7]:
        short = tmp_path / ("cut" + (stream.suffix or ".h264"))
        short.write_bytes(data[:cut])
        ours, theirs = _our_packets(mk_bin, str(short)), _ffprobe_packets(short)
        assert ours == theirs, f"cut at {cut}: " + _first_difference(ours, theirs)


def test_probe_finds_raw_streams_without_extension(mk_bin, gen_dir, tmp_path):
    for name, codec in [("x264_bframes.h264", "h264"), ("x265.hevc", "hevc"), ("aom.obu", "av1")]:
        try:
            src = _make(name, gen_dir)
        except pytest.skip.Exception:
            continue
        plain = tmp_path / ("stream-" + codec)
        plain.write_bytes(src.read_bytes())
        proc = lib.run([mk_bin / "mk-probe", plain])
        assert proc.returncode == 0 and f"video {codec}" in proc.stdout.decode(), proc.stdout + proc.stderr


def test_obu_without_size_field_names_the_offset(mk_bin, gen_dir, tmp_path):
    data = bytearray(_make("aom.obu", gen_dir).read_bytes())
    # The second temporal unit's TD: clear obu_has_size_field of the OBU after it.
    bad = tmp_path / "bad.obu"
    second = _ffprobe_packets(_make("aom.obu", gen_dir))[1].split(",")[4]
    at = int(second) + 2
    data[at] &= ~2
    bad.write_bytes(bytes(data))
    proc = lib.run([mk_bin / "mk-probe", "--packets", bad])
    assert proc.returncode != 0
    err = proc.stderr.decode()
    assert "obu_size" in err and f"offset {at}" in err.replace(",", ""), err
