"""The container's codec tag reaches a plugin decoder (plugin ABI 2.5,
`mk_plugin_codec_config.codec_tag`), and the FFmpeg plugin gives it to libavcodec
(`AVCodecContext.codec_tag`), as ffmpeg does.

libavcodec's rawvideo decoder picks the pixel format by the tag: an AVI of raw I420 and one of
the same bytes tagged YV12 (chroma planes the other way round) decode only with it (without it
I420 is refused and the planes' order is lost). The files are ffmpeg's (`-c:v rawvideo`,
`-vtag YV12`), read by the FFmpeg plugin's AVI demuxer (MediaKit has no AVI reader).

Oracle: ffmpeg's decode of the same file, `-f framemd5 -pix_fmt yuv420p` (no conversion: the
pictures are 4:2:0 already), frame for frame against the MD5 of each picture mk-decode writes
with `--pixel-format i420`; and ffprobe's codec_tag_string, which `mk-probe --json` gives as the
track's codec_tag.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

import oracle_lib as lib

WIDTH, HEIGHT, FRAMES = 64, 48, 5
CASES = {  # name -> (ffmpeg output options, the tag ffprobe shows)
    "i420": (["-pix_fmt", "yuv420p"], "I420"),
    "yv12": (["-pix_fmt", "yuv420p", "-vtag", "YV12"], "YV12"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rawvideo_tag_decodes_as_ffmpeg(name: str, mk_bin: Path, mk_probe: Path, tmp_path: Path) -> None:
    options, tag = CASES[name]
    src = tmp_path / f"{name}.avi"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"testsrc=size={WIDTH}x{HEIGHT}:rate=5",
           "-frames:v", str(FRAMES), "-c:v", "rawvideo", *options, src]
    lib.oracle_ok(lib.run(cmd), cmd)
    probe = ["ffprobe", "-v", "error", "-show_entries", "stream=codec_tag_string", "-of", "csv=p=0", src]
    proc = lib.run(probe)
    lib.oracle_ok(proc, probe)
    assert proc.stdout.decode().strip() == tag, proc.stdout

    cmd = [mk_probe, "--json", src]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    track = json.loads(proc.stdout)["tracks"][0]
    assert (track["codec"], track["codec_tag"]) == ("rawvideo", tag), track

    out = tmp_path / "out.yuv"
    cmd = [mk_bin / "mk-decode", src, "--pixel-format", "i420", "--video-out", out]
    lib.check_ok(lib.run(cmd), cmd)
    size = WIDTH * HEIGHT * 3 // 2
    data = out.read_bytes()
    ours = [hashlib.md5(data[i:i + size]).hexdigest() for i in range(0, len(data), size)]

    ref = ["ffmpeg", "-v", "error", "-i", src, "-map", "0:v:0", "-pix_fmt", "yuv420p", "-f", "framemd5", "-"]
    proc = lib.run(ref)
    lib.oracle_ok(proc, ref)
    theirs = [line.split(",")[-1].strip() for line in proc.stdout.decode().splitlines() if line and not line.startswith("#")]
    assert len(theirs) == FRAMES, proc.stdout
    assert ours == theirs, f"{name}: frame MD5s differ:\nours   {ours}\nffmpeg {theirs}"
