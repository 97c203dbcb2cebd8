"""Codec tags of the native containers mapped to FFmpeg's codec names (issue 31 item 3):
Matroska's V_MS/VFW/FOURCC, whose BITMAPINFOHEADER fourcc names the codec by the Video for
Windows table of Sources/MediaKit/Codecs/BitmapInfoHeader.swift, and the QuickTime video sample
entries of Sources/MediaKit/Containers/MP4/QuickTimeVideoTag.swift (ProRes, DV, HDV ...): each
entry written into a file ffmpeg made (a ProRes 422 MOV for the second) and read by ffmpeg; a ProRes
MOV decoded as ffmpeg decodes it.

Oracles: ffmpeg's own reading of the same file (`ffmpeg -i FILE`: "Video: NAME", one ffmpeg
process for every file) for each fourcc of the table, written into a Matroska file ffmpeg made
(msmpeg4v2, which the Matroska muxer stores as V_MS/VFW/FOURCC "MP42"); and ffmpeg's decode of
that file (`-f rawvideo -pix_fmt yuv420p`, byte for byte). Codecs the FFmpeg plugin offers since
it lists every libavcodec decoder, in files ffmpeg writes (TrueHD in Matroska, Theora as
V_THEORA, WMV2 as V_MS/VFW/FOURCC, Speex in Ogg): decoded as `ffmpeg -i` decodes them, byte for
byte (lib.check_decode_like_ffmpeg).
"""
from __future__ import annotations

import os
import re
import sys

import pytest

import oracle_lib as lib

TABLE = lib.REPO / "Sources" / "MediaKit" / "Codecs" / "BitmapInfoHeader.swift"
MOV_TABLE = lib.REPO / "Sources" / "MediaKit" / "Containers" / "MP4" / "QuickTimeVideoTag.swift"

PY_CODECS = r"""
import sys, mediakit
for path in sys.argv[1:]:
    with mediakit.open(path) as d:
        print(d.tracks[0].codec or "-", d.tracks[0].width, d.tracks[0].height)
"""


def _vfw_mkv(tmp_path, frames: int):
    path = tmp_path / f"msmpeg4v2_{frames}.mkv"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=5", "-frames:v", str(frames),
           "-c:v", "msmpeg4v2", "-write_crc32", "0", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _table(source) -> list[tuple[str, str]]:
    """(tag, codec) of every add("codec", ["tag" ...]) line of a Swift table."""
    return [(tag, codec) for codec, tags in re.findall(r'add\("([^"]+)", \[([^\]]*)\]\)', source.read_text())
            for tag in re.findall(r'"([^"]*)"', tags)]


def test_vfw_fourcc_table_like_ffmpeg(mk_bin, tmp_path):
    entries = _table(TABLE)
    assert len(entries) > 100, f"the table in {TABLE} was not found"
    _table_like_ffmpeg(entries, _vfw_mkv(tmp_path, 1).read_bytes(), b"MP42", mk_bin, tmp_path)


def test_quicktime_video_tags_like_ffmpeg(mk_bin, tmp_path):
    entries = _table(MOV_TABLE)
    assert len(entries) > 50, f"the table in {MOV_TABLE} was not found"
    path = _prores_mov(tmp_path, 1)
    _table_like_ffmpeg(entries, path.read_bytes(), b"apcn", mk_bin, tmp_path, ".mov")


def _table_like_ffmpeg(entries, base: bytes, tag0: bytes, mk_bin, tmp_path, ext: str = ".mkv") -> None:
    """Each entry's tag written over `tag0` in `base`: ffmpeg's "Video: NAME" (one process for
    every file) equals the table's codec and ours (Python, one process); the size is the file's."""
    at = base.find(tag0)
    assert at > 0 and base.count(tag0) == 1
    files = []
    for i, (tag, _) in enumerate(entries):
        f = tmp_path / f"t{i}{ext}"
        f.write_bytes(base[:at] + tag.encode("latin-1") + base[at + 4:])
        files.append(f)
    proc = lib.run(["ffmpeg", "-hide_banner", "-nostdin", *[a for f in files for a in ("-i", f)]])
    theirs = re.findall(r"Stream #\d+:0.*?: Video: ([a-z0-9_]+)", proc.stderr.decode())
    assert len(theirs) == len(files), f"ffmpeg read {len(theirs)} of {len(files)} files"
    env = dict(os.environ, MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"), PYTHONPATH=str(lib.REPO / "Bindings" / "python"))
    ours = lib.run([sys.executable, "-c", PY_CODECS, *files], env=env)
    assert ours.returncode == 0, lib.tail(ours.stderr)
    rows = ours.stdout.decode().split("\n")
    wrong = [(tag, codec, want, got) for (tag, codec), want, got in zip(entries, theirs, rows) if codec != want or got.split()[0] != want]
    assert not wrong, f"(fourcc, table, ffmpeg, ours): {wrong}"
    assert all(r.split()[1:] == ["64", "48"] for r in rows if r), "the picture size the entry states is the track's"


def _prores_mov(tmp_path, frames: int):
    path = tmp_path / f"prores_{frames}.mov"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=5", "-frames:v", str(frames),
           "-c:v", "prores", "-profile:v", "2", "-pix_fmt", "yuv422p10le", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def test_prores_mov_decodes_like_ffmpeg(mk_decode, tmp_path):
    lib.check_decode_like_ffmpeg(_prores_mov(tmp_path, 5), mk_decode, tmp_path)


def test_vfw_track_decodes_like_ffmpeg(mk_decode, tmp_path):
    path = _vfw_mkv(tmp_path, 10)
    out = tmp_path / "out.i420"
    cmd = [mk_decode, path, "--video-out", out, "--pixel-format", "i420", "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    ref = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]
    want = lib.run(ref).stdout
    assert want and out.read_bytes() == want, f"`{lib.shell_line(cmd)}` differs from `{lib.shell_line(ref)}`"


# Uncompressed QuickTime pictures, as ffmpeg's mov muxer stores each pixel format ('raw ' with its
# depth for rgb24 / argb, BGRA, RGBA, ABGR, b48r, b16g): libavcodec's rawvideo decoder through the
# plugin (ARGB / ABGR and big-endian 16-bit samples repacked into an ABI layout), I420 = ffmpeg's.
RAW_MOV = ["rgb24", "argb", "bgra", "rgba", "abgr", "rgb48be", "gray16be"]


def _raw_mov(tmp_path, pix_fmt: str):
    path = tmp_path / f"{pix_fmt}.mov"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=5", "-frames:v", "3",
           "-c:v", "rawvideo", "-pix_fmt", pix_fmt, path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


@pytest.mark.parametrize("pix_fmt", RAW_MOV)
def test_uncompressed_mov_decodes_like_ffmpeg(pix_fmt, mk_decode, tmp_path):
    lib.check_decode_like_ffmpeg(_raw_mov(tmp_path, pix_fmt), mk_decode, tmp_path)


def test_packed_422_mov_is_refused_naming_its_layout(mk_decode, tmp_path):
    """'2vuy' (UYVY): the track is rawvideo, but the plugin ABI has no packed 4:2:2 layout and a
    repack to planar 4:2:2 would convert to 4:2:0 / RGB unlike ffmpeg (libswscale has a path of
    its own for packed input): decoding fails with an error that names the layout."""
    path = _raw_mov(tmp_path, "uyvy422")
    proc = lib.run([mk_decode, path, "--video-out", tmp_path / "out.i420", "--pixel-format", "i420", "-q"])
    assert proc.returncode != 0 and b"uyvy422" in proc.stderr and b"not supported" in proc.stderr, lib.tail(proc.stderr)


_AUDIO = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1"]
_VIDEO = ["-f", "lavfi", "-i", "testsrc=size=128x96:rate=10:duration=1"]
NEW_DECODERS = {
    "truehd.mkv": [*_AUDIO, "-c:a", "truehd", "-strict", "-2"],
    "theora.mkv": [*_VIDEO, "-c:v", "libtheora"],
    "wmv2.mkv": [*_VIDEO, "-c:v", "wmv2"],
    "speex.ogg": ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=16000:duration=1", "-c:a", "libspeex"],
}


@pytest.mark.parametrize("name", sorted(NEW_DECODERS))
def test_new_decoders_decode_like_ffmpeg(name, mk_decode, tmp_path):
    path = tmp_path / name
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *NEW_DECODERS[name], path]
    lib.oracle_ok(lib.run(cmd), cmd)
    lib.check_decode_like_ffmpeg(path, mk_decode, tmp_path)
