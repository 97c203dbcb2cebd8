"""Matroska tracks compressed with zlib (ContentCompression, ContentCompAlgo 0; issue 33 item 4),
which mkvmerge writes by default for PGS and VobSub tracks and on request (`--compression 0:zlib`)
for any other. MediaKit's reader inflates every frame (and CodecPrivate under ContentEncodingScope 2)
as FFmpeg's matroskadec does.

Inputs: the PGS track of ../shared/media/breadth (mkvmerge v88, zlib), and files mkvmerge (mkvtoolnix)
makes here: a VobSub track (its pictures encoded by ffmpeg's dvdsub encoder from that PGS, then
remuxed by mkvmerge, which compresses VobSub with zlib by default), a SubRip and an ASS track with
`--compression 0:zlib`. Each is checked to really carry the compression (mkvinfo lists a
ContentCompression and no other algorithm than zlib's default).

Oracles (ORACLES.md):
- packets: `mk-probe --packets` = `ffprobe -show_entries packet=...` (pts, dts, duration, size of the
  inflated frame, position, key flag), track by track;
- bytes: the file remuxed by `mk-remux` into Matroska and `ffmpeg -i IN -map 0 -c copy OUT.mkv`
  (both write the frames uncompressed): ffprobe's stream facts (codec, extradata size and hash) and
  packets with their data hashes, every track, track by track; and `ffmpeg -map 0:s -f framemd5`
  of the subtitle (zlib) track. (Not of the PGS file's H.264 track: FFmpeg writes its DefaultDuration
  from the 600 fps the file states, MediaKit's Matroska muxer from the packets, and ffmpeg then
  derives that track's first dts differently on reading: a difference of the muxer's video
  DefaultDuration, outside the compression.)

Track by track: in the PGS file, FFmpeg's AC-3 parser holds the last frame of each laced block
until the stream's next block, so ffprobe lists it after packets of the other tracks that come
later in the file; each track's own packets are in the same order either way (the interleaving
is not the zlib track's, and `ffmpeg -c copy` writes its blocks in that delayed order).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

MKV_PGS = "breadth/mkv_androidx_230cec_sample_with_pgs_subtitles.mkv"

SRT = ("1\n00:00:00,500 --> 00:00:01,500\nHello <i>world</i>\n\n"
       "2\n00:00:02,000 --> 00:00:03,250\nSecond line\nand more, repeated more, repeated more\n\n")
ASS = """[Script Info]
ScriptType: v4.00+
PlayResX: 384
PlayResY: 288

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: Default,Arial,20,&H00FFFFFF,&H000000FF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2,2,2,10,10,10,1

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
Dialogue: 0,0:00:00.50,0:00:01.50,Default,,0,0,0,,Hello {\\i1}world{\\i0}
Dialogue: 0,0:00:02.00,0:00:03.25,Default,,0,0,0,,Second\\Nline, second line, second line
"""


def _by_track(lines: list[str], key) -> list[str]:
    """The lines grouped by track (stable: each track's lines in their order)."""
    return sorted(lines, key=key)


def _run_ok(cmd: list, ok: tuple[int, ...] = (0,)) -> None:
    proc = lib.run(cmd)
    if proc.returncode not in ok:
        pytest.fail(f"`{lib.shell_line(cmd)}` failed:\n{lib.tail(proc.stdout + proc.stderr)}")


def _mkvmerge(out: Path, *args: object) -> None:
    _run_ok(["mkvmerge", "-q", "-o", out, *args], ok=(0, 1))   # 1: warnings only


@pytest.fixture(scope="module")
def zlib_files(tmp_path_factory, shared_media: Path) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("mkvzlib")
    (d / "a.srt").write_text(SRT)
    (d / "a.ass").write_text(ASS)
    files = {"pgs": shared_media / MKV_PGS, "srt": d / "srt.mkv", "ass": d / "ass.mkv", "vobsub": d / "vobsub.mkv"}
    _mkvmerge(files["srt"], "--compression", "0:zlib", d / "a.srt")
    _mkvmerge(files["ass"], "--compression", "0:zlib", d / "a.ass")
    dvd = d / "dvd.mkv"
    _run_ok(["ffmpeg", "-v", "error", "-nostdin", "-y", "-fix_sub_duration", "-i", files["pgs"], "-map", "0:v", "-map", "0:s",
             "-c:v", "copy", "-c:s", "dvdsub", dvd])
    _mkvmerge(files["vobsub"], dvd)
    return files


FILES = ["pgs", "srt", "ass", "vobsub"]


@pytest.mark.parametrize("name", FILES)
def test_input_is_zlib_compressed(zlib_files: dict[str, Path], name: str) -> None:
    """The inputs test what they claim: a ContentCompression with the default algorithm (zlib;
    mkvinfo names any other: "Algorithm: 3 (header removal)" ...)."""
    proc = lib.run(["mkvinfo", "-v", zlib_files[name]])
    text = proc.stdout.decode(errors="replace")
    assert "Content compression" in text and "Algorithm" not in text, text[:3000]


@pytest.mark.parametrize("name", FILES)
def test_packets_are_ffprobes(zlib_files: dict[str, Path], mk_probe: Path, name: str) -> None:
    path = zlib_files[name]
    cmd = [mk_probe, "--packets", path]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    track = lambda line: int(line.split(",")[0])   # noqa: E731
    ours = _by_track(proc.stdout.decode().splitlines(), track)
    ref = _by_track(lib.ffprobe_packet_lines(path), track)
    assert ref, "ffprobe lists no packets"
    problem = lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    assert problem is None, problem


def _facts(path: Path) -> list[str]:
    cmd = ["ffprobe", "-v", "error", "-show_data_hash", "md5", "-show_entries",
           "stream=codec_name,extradata_size,extradata_hash:packet=stream_index,pts,dts,duration,size,flags,data_hash",
           "-of", "compact", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    lines = proc.stdout.decode().splitlines()
    return _by_track(lines, lambda line: (not line.startswith("stream"), line.split("|")[1] if line.startswith("packet") else ""))


def _framemd5(path: Path) -> list[str]:
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0:s", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    lines = [line for line in proc.stdout.decode().splitlines() if not line.startswith("#software")]
    return _by_track(lines, lambda line: (not line.startswith("#"), line.split(",")[0] if not line.startswith("#") else ""))


@pytest.mark.parametrize("name", FILES)
def test_remux_to_matroska_is_ffmpegs_copy(zlib_files: dict[str, Path], mk_remux: Path, tmp_path: Path, name: str) -> None:
    """Every track copied into Matroska: the packets' bytes (inflated) and timestamps, and the
    streams' extradata, equal ffmpeg's `-map 0 -c copy`."""
    src = zlib_files[name]
    ours, ref = tmp_path / "ours.mkv", tmp_path / "ref.mkv"
    cmd = [mk_remux, src, ours]
    lib.check_ok(lib.run(cmd), cmd)
    _run_ok(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0", "-c", "copy", ref])
    mine, theirs = _facts(ours), _facts(ref)
    assert any(line.startswith("packet") for line in theirs)
    assert mine == theirs
    assert _framemd5(ours) == _framemd5(ref)


def test_damaged_frame_is_a_warning_naming_track_and_offset(zlib_files: dict[str, Path], mk_probe: Path, tmp_path: Path) -> None:
    """A compressed frame whose bytes are damaged: a warning naming the track, the frame's offset
    and what is wrong; the other packets are read."""
    src = zlib_files["srt"].read_bytes()
    # The second frame's zlib stream: the last zlib header in the file (0x78, then a check byte
    # for one of the four levels).
    at = max(src.rfind(b"\x78" + bytes([flg])) for flg in (0x01, 0x5E, 0x9C, 0xDA))
    assert at > 0
    damaged = bytearray(src)
    damaged[at + 6] ^= 0xFF
    path = tmp_path / "damaged.mkv"
    path.write_bytes(bytes(damaged))
    proc = subprocess.run([str(mk_probe), "--packets", str(path)], capture_output=True, timeout=lib.CMD_TIMEOUT)
    err = proc.stderr.decode()
    assert len(proc.stdout.decode().splitlines()) == 1, proc.stdout.decode()
    assert "track 1: a zlib-compressed frame" in err and "does not inflate" in err and f"offset {at}" in err, err
