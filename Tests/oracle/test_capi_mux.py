"""The C API's muxer from codec parameters (mk_muxer_add_track_params, mk_packet_create), used
by Tests/c/annexb_mux.c: a C program that parses an H.264 Annex B stream itself (start codes,
SPS / PPS into avcC, access units into length-prefixed samples, key frames from IDR pictures,
timestamps from the picture order count at a given frame rate) and muxes it into MP4.

Oracles:
  encoder's MP4   the stream comes from ffmpeg + libx264 writing MP4 directly (the encoder's own
                  timestamps), copied out with h264_mp4toannexb. Our MP4 of that Annex B stream,
                  in the time scale FFmpeg's mov muxer picks, gives the same
                  `ffmpeg -i F -c copy -f framemd5 -` (extradata, every packet's dts, pts,
                  duration, size and MD5), the same key flags (ffprobe), the same decoded
                  `-f framemd5` and the same mediainfo facts.
  -c copy         `ffmpeg -i S.h264 -c copy S.mp4` (the issue's oracle): for a stream without
                  B-frames our decoded framemd5 equals that file's. With B-frames FFmpeg 5.1's
                  raw H.264 demuxer gives no presentation times (pts = dts in its MP4, and its
                  decode then drops pictures: `ffmpeg -i raw.h264 -c copy` of a 50-frame
                  x264 stream decodes to 48 frames), so there the encoder's MP4 is the oracle,
                  and our pictures also equal `ffmpeg -f h264 -i S.h264`'s decode, in order.
  real files      H.264 tracks of ../shared/media copied out as Annex B and muxed back at their
                  frame rate: the decoded framemd5 equals the source's; the 2:1 pixel aspect
                  ratio of mp4_h264_pasp_sar_2x1.mp4 comes back as a `pasp` box (0.2 struct),
                  absent when the program passes the 0.1 struct (an old caller still works).
  valgrind        the program under valgrind: no definite leak, no invalid read or write.
"""

from __future__ import annotations

import json
import re
import shutil
from fractions import Fraction
from pathlib import Path

import pytest

import oracle_lib as lib
from test_capi import _build, _libdir, _stripped_libdir

ANNEXB_MUX_C = lib.REPO / "Tests" / "c" / "annexb_mux.c"

# name -> (frame rate, ffmpeg encoding options): libx264 writing MP4 itself.
ENCODED = {
    "bframes": ("25/1", ["-bf", "3", "-g", "24"]),
    "no-bframes": ("25/1", ["-bf", "0", "-g", "30"]),
    "sliced-aud": ("25/1", ["-bf", "3", "-x264-params", "slices=4:aud=1"]),
    "interlaced-mbaff": ("25/1", ["-bf", "2", "-flags", "+ildct+ilme", "-x264-params", "tff=1"]),
    "ntsc-high10": ("30000/1001", ["-bf", "2", "-pix_fmt", "yuv420p10le"]),
}

REAL = ["mp4_h264_b_pyramid_3b_800x640_4s.mp4", "mp4_h264_pasp_sar_2x1.mp4", "mp4_h264_white_10s_ctts.mp4"]


def _mov_timescale(rate: Fraction) -> int:
    """The time scale FFmpeg's mov muxer gives a video track of an encoder whose time base is
    1/rate.numerator: the denominator, doubled until it reaches 10000 (movenc.c)."""
    scale = rate.numerator
    while scale < 10000:
        scale *= 2
    return scale


def _run(cmd: list) -> bytes:
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout


def _framemd5(path: Path, copy: bool) -> list[str]:
    cmd = ["ffmpeg", "-v", "error", "-i", path] + (["-c", "copy"] if copy else []) + ["-f", "framemd5", "-"]
    return [l for l in _run(cmd).decode().splitlines() if not l.startswith("#software")]


def _hashes(lines: list[str]) -> list[str]:
    return [l.split(",")[-1].strip() for l in lines if not l.startswith("#")]


def _key_flags(path: Path) -> list[str]:
    out = _run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=flags", "-of", "csv=p=0", path])
    return [l[:1] for l in out.decode().split()]


def _stream(path: Path) -> dict:
    info = json.loads(_run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", path]))
    return info["streams"][0]


def _mediainfo(path: Path) -> dict:
    if not shutil.which("mediainfo"):
        pytest.fail("mediainfo is not installed (scripts/deps.sh installs it)", pytrace=False)
    tracks = json.loads(_run(["mediainfo", "--Output=JSON", path]))["media"]["track"]
    video = next(t for t in tracks if t.get("@type") == "Video")
    return {k: video.get(k) for k in ("Format", "Format_Profile", "CodecID", "Width", "Height", "PixelAspectRatio",
                                      "FrameRate", "FrameCount", "ScanType", "BitDepth")}


def _pasp(path: Path) -> tuple[int, int] | None:
    """The (hSpacing, vSpacing) of the file's pasp box, None when it has none."""
    data = path.read_bytes()
    at = data.find(b"pasp")
    if at < 4:
        return None
    return int.from_bytes(data[at + 4:at + 8], "big"), int.from_bytes(data[at + 8:at + 12], "big")


@pytest.fixture(scope="module")
def annexb_mux(mk_bin, tmp_path_factory) -> Path:
    return _build(ANNEXB_MUX_C, tmp_path_factory.mktemp("annexb-mux") / "annexb_mux", _libdir(mk_bin))


def _mux(program: Path, stream: Path, out: Path, rate: Fraction, *extra) -> None:
    cmd = [program, stream, out, rate.numerator, rate.denominator, *extra]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="annexb_mux")


def _encoded(name: str, folder: Path) -> tuple[Path, Path, Fraction]:
    """(the encoder's MP4, its Annex B stream, the frame rate) for ENCODED[name]."""
    rate, options = ENCODED[name]
    ref, stream = folder / f"{name}.mp4", folder / f"{name}.h264"
    _run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size=320x240:rate={rate}", "-frames:v", "50",
          "-c:v", "libx264", "-pix_fmt", "yuv420p", *options, ref])
    _run(["ffmpeg", "-v", "error", "-y", "-i", ref, "-c", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", stream])
    return ref, stream, Fraction(rate)


@pytest.mark.parametrize("name", list(ENCODED))
def test_annexb_mux_equals_the_encoders_mp4(name, annexb_mux, tmp_path):
    """Packets (framemd5 -c copy), key flags, decoded frames and mediainfo facts of our MP4 equal
    those of the MP4 the encoder wrote itself; the pictures equal ffmpeg's decode of the raw
    stream, in order."""
    ref, stream, rate = _encoded(name, tmp_path)
    ours = tmp_path / f"{name}-ours.mp4"
    _mux(annexb_mux, stream, ours, rate, _mov_timescale(rate))
    problem = lib.diff_lines(_framemd5(ours, copy=True), _framemd5(ref, copy=True), "ours", "encoder's MP4")
    assert problem is None, problem
    assert _key_flags(ours) == _key_flags(ref), "the key frames differ from the encoder's"
    decoded = _framemd5(ours, copy=False)
    problem = lib.diff_lines(decoded, _framemd5(ref, copy=False), "ours", "encoder's MP4")
    assert problem is None, problem
    raw = [l for l in _run(["ffmpeg", "-v", "error", "-f", "h264", "-i", stream, "-f", "framemd5", "-"]).decode().splitlines()]
    assert _hashes(decoded) == _hashes(raw), "the decoded pictures differ from ffmpeg's decode of the raw stream"
    assert _mediainfo(ours) == _mediainfo(ref)
    facts = ("codec_name", "profile", "width", "height", "pix_fmt", "field_order", "sample_aspect_ratio",
             "r_frame_rate", "avg_frame_rate", "nb_frames", "has_b_frames")
    ours_s, ref_s = _stream(ours), _stream(ref)
    assert {k: ours_s.get(k) for k in facts} == {k: ref_s.get(k) for k in facts}


def test_annexb_mux_equals_ffmpeg_copy_without_bframes(annexb_mux, tmp_path):
    """The issue's oracle, where FFmpeg 5.1 can be one: `ffmpeg -i S.h264 -c copy S.mp4` of a
    stream without B-frames decodes to the same frames and timestamps as our MP4 (at the frame
    rate ffmpeg's raw demuxer assumes, 25)."""
    _, stream, rate = _encoded("no-bframes", tmp_path)
    ours, copied = tmp_path / "ours.mp4", tmp_path / "copied.mp4"
    _mux(annexb_mux, stream, ours, rate)
    _run(["ffmpeg", "-v", "error", "-y", "-i", stream, "-c", "copy", copied])
    problem = lib.diff_lines(_framemd5(ours, copy=False), _framemd5(copied, copy=False), "ours", "ffmpeg -c copy")
    assert problem is None, problem
    ours_s, copied_s = _stream(ours), _stream(copied)
    for k in ("codec_name", "profile", "width", "height", "nb_frames", "avg_frame_rate"):
        assert ours_s.get(k) == copied_s.get(k), f"{k}: ours {ours_s.get(k)}, ffmpeg -c copy {copied_s.get(k)}"


@pytest.mark.parametrize("name", REAL)
def test_annexb_mux_of_real_h264_decodes_like_the_source(name, annexb_mux, shared_media, tmp_path):
    """A real file's H.264 track copied out as Annex B and muxed back by the C program at the
    track's frame rate and time scale decodes to the source's frames (framemd5, timestamps
    included); its pixel aspect ratio (the VUI's, ffprobe's sample_aspect_ratio) comes back as a
    pasp box (0.2 struct) and the 0.1 struct still muxes (no pasp: that field is not in it)."""
    src = shared_media / name
    stream = tmp_path / "track.h264"
    _run(["ffmpeg", "-v", "error", "-y", "-i", src, "-map", "0:v:0", "-c", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", stream])
    s = _stream(src)
    rate = Fraction(s["r_frame_rate"])
    scale = Fraction(s["time_base"]).denominator
    ours, old = tmp_path / "ours.mp4", tmp_path / "old.mp4"
    _mux(annexb_mux, stream, ours, rate, scale)
    problem = lib.diff_lines(_framemd5(ours, copy=False), _framemd5(src, copy=False), "ours", name)
    assert problem is None, problem
    sar = s.get("sample_aspect_ratio", "0:1")
    stated = tuple(int(v) for v in sar.split(":")) if sar not in ("0:1", "N/A") else None
    assert _pasp(ours) == stated, f"pasp: ours {_pasp(ours)}, the stream's aspect ratio (ffprobe) {sar}"
    _mux(annexb_mux, stream, old, rate, scale, "v01")
    assert _pasp(old) is None, "the 0.1 struct has no sample aspect ratio, yet a pasp box was written"
    assert _hashes(_framemd5(old, copy=False)) == _hashes(_framemd5(src, copy=False))


def test_annexb_mux_under_valgrind(mk_bin, tmp_path):
    """annexb_mux on a B-frame stream under valgrind: "definitely lost: 0 bytes", no invalid read
    or write (the library stripped of debug info, as test_capi's valgrind runs)."""
    if not shutil.which("valgrind"):
        pytest.fail("valgrind is missing: scripts/deps.sh installs it", pytrace=False)
    libdir = _stripped_libdir(mk_bin, tmp_path)
    program = _build(ANNEXB_MUX_C, tmp_path / "annexb_mux", libdir)
    _, stream, rate = _encoded("bframes", tmp_path)
    supp = lib.REPO / "Tests" / "c" / "valgrind.supp"
    out = tmp_path / "ours.mp4"
    proc = lib.run(["valgrind", "--leak-check=full", f"--suppressions={supp}", "--error-exitcode=3",
                    program, stream, out, rate.numerator, rate.denominator], timeout=600)
    err = proc.stderr.decode()
    assert "definitely lost: 0 bytes" in err or "no leaks are possible" in err, err[-3000:]
    assert "Invalid read" not in err and "Invalid write" not in err, err[-5000:]
    assert re.search(r"50 samples", err), err[-2000:]
    assert out.is_file()


def test_annexb_mux_refuses_a_damaged_stream(annexb_mux, tmp_path):
    """A stream whose SPS is cut to its first bytes: an error naming the file and the offset, and
    no output file."""
    _, stream, rate = _encoded("bframes", tmp_path)
    data = bytearray(stream.read_bytes())
    sps = data.find(b"\x00\x00\x01\x67")
    damaged = tmp_path / "damaged.h264"
    damaged.write_bytes(bytes(data[:sps + 6]) + b"\x00\x00\x01" + bytes(data[sps + 6:]))
    out = tmp_path / "out.mp4"
    proc = lib.run([annexb_mux, damaged, out, rate.numerator, rate.denominator])
    assert proc.returncode != 0
    assert f"damaged SPS at offset {sps + 3}".encode() in proc.stderr, lib.tail(proc.stderr)
    assert not out.exists()


def test_c_muxer_writes_a_plugin_format(mk_bin, shared_media, tmp_path):
    """Tests/c/plugin_mux.c: mk_muxer_open of an .avi (no built-in writer: the FFmpeg plugin's
    libavformat muxer, plugin ABI 2.5) copies every track of an MP4 as `ffmpeg -c copy` does
    (framemd5 of both read back), and a cancelled one leaves nothing behind."""
    program = _build(lib.REPO / "Tests" / "c" / "plugin_mux.c", tmp_path / "plugin_mux", _libdir(mk_bin))
    src = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"
    ours, theirs = tmp_path / "ours.avi", tmp_path / "theirs.avi"
    proc = lib.run([program, src, ours])
    lib.check_ok(proc, [program, src, ours], who="plugin_mux")
    ref = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0", "-c", "copy", theirs]
    lib.oracle_ok(lib.run(ref), ref)

    def framemd5(path):
        cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
        p = lib.run(cmd)
        lib.oracle_ok(p, cmd)
        return [l for l in p.stdout.decode().splitlines() if not l.startswith("#software")]

    assert framemd5(ours) == framemd5(theirs)
    assert sorted(p.name for p in tmp_path.iterdir() if "partial" in p.name or "cancelled" in p.name) == []


def test_c_muxer_and_remux_choose_a_muxer_by_name(mk_bin, shared_media, tmp_path):
    """mk_muxer_settings.format (issue 31): "ffmpeg:avi" writes an AVI under a .mkv name, through
    mk_muxer_open and mk_remux, as `ffmpeg -f avi -c copy` does (framemd5 of both read back, and
    ffprobe names the format avi); an unknown name is MK_ENOTFOUND naming it, nothing written
    (checked inside Tests/c/plugin_mux.c)."""
    program = _build(lib.REPO / "Tests" / "c" / "plugin_mux.c", tmp_path / "plugin_mux", _libdir(mk_bin))
    src = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"
    ours, theirs = tmp_path / "ours.mkv", tmp_path / "theirs.avi"
    proc = lib.run([program, src, ours, "ffmpeg:avi"])
    lib.check_ok(proc, [program, src, ours, "ffmpeg:avi"], who="plugin_mux")
    ref = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0", "-c", "copy", theirs]
    lib.oracle_ok(lib.run(ref), ref)

    def framemd5(path):
        cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
        p = lib.run(cmd)
        lib.oracle_ok(p, cmd)
        return [l for l in p.stdout.decode().splitlines() if not l.startswith("#software")]

    expected = framemd5(theirs)
    for out in (ours, tmp_path / "ours.mkv.remux.mkv"):
        assert lib.ffprobe_json(out)["format"]["format_name"] == "avi", out
        assert framemd5(out) == expected, out
    assert not (tmp_path / "ours.mkv.unknown.mkv").exists()
