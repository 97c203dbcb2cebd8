"""Plugin muxers (plugin ABI 2.5, issue 31 items 1, 2 and 4, write side): the FFmpeg plugin's
libavformat writes the containers MediaKit does not write itself.

Oracles (ORACLES.md):
- `ffmpeg -i IN -map 0 -c copy OUT.EXT`, both outputs read back by `ffmpeg -c copy -f framemd5`
  (stream, dts, pts, duration, size and MD5 of every packet, and the stream headers), line for
  line: MP4 (H.264 + AAC) into AVI, FLV, NUT and ASF; its AAC track into ADTS (.aac); the
  breadth corpus's AVI (MPEG-4 part 2, read by the plugin's demuxer) into libavformat's own MP4
  and Matroska writers, named `--format ffmpeg:mp4` / `ffmpeg:matroska` (MediaKit's writers do
  not carry MPEG-4 part 2); the same NUT written to a pipe (`-`, the output cannot seek);
- a codec the format does not carry (PCM little-endian into Sun AU, which ffmpeg's copy also
  refuses): an error naming the codec, and nothing written, no temporary file left;
- `MEDIAKIT_NO_DEFAULT_PLUGINS=1`: an .avi output fails naming the plugin that writes it,
  nothing written;
- `mk-remux --list-formats`: the built-in writers first, then libavformat's marked
  `[plugin ffmpeg]` (its mp4 as "ffmpeg:mp4", its avi as "ffmpeg:avi").
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

import oracle_lib as lib

SOURCE = "mp4_h264_aac_moov_at_start_ctts_8s.mp4"
AVI = "breadth/avi_meta-pytor_133ba9_testsrc2_mpeg4.avi"


def _framemd5(path: Path) -> list[str]:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [l for l in proc.stdout.decode().splitlines() if not l.startswith("#software")]


def _ffmpeg_copy(src: Path, out: Path, *maps: str) -> None:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, *(maps or ("-map", "0")), "-c", "copy", out]
    lib.oracle_ok(lib.run(cmd), cmd)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".partial" in p.name)


@pytest.mark.parametrize("ext", ["avi", "flv", "nut", "asf"])
def test_remux_into_a_plugin_format(ext: str, shared_media: Path, mk_bin: Path, tmp_path: Path) -> None:
    """mk-remux IN out.EXT (a format only libavformat writes) carries ffmpeg -c copy's packets."""
    src = shared_media / SOURCE
    ours, theirs = tmp_path / f"ours.{ext}", tmp_path / f"theirs.{ext}"
    cmd = [mk_bin / "mk-remux", "--quiet", src, ours]
    lib.check_ok(lib.run(cmd), cmd)
    _ffmpeg_copy(src, theirs)
    assert _framemd5(ours) == _framemd5(theirs)
    assert _leftovers(tmp_path) == []


def test_remux_audio_into_adts(shared_media: Path, mk_bin: Path, tmp_path: Path) -> None:
    """The AAC track into .aac (ADTS, libavformat's adts muxer adds the headers), as ffmpeg -map 0:a."""
    src = shared_media / SOURCE
    probe = lib.ffprobe_json(src)
    audio = next(s["index"] for s in probe["streams"] if s["codec_type"] == "audio")
    ours, theirs = tmp_path / "ours.aac", tmp_path / "theirs.aac"
    cmd = [mk_bin / "mk-remux", "--quiet", src, ours, "--track", str(audio)]
    lib.check_ok(lib.run(cmd), cmd)
    _ffmpeg_copy(src, theirs, "-map", "0:a")
    assert _framemd5(ours) == _framemd5(theirs)
    assert ours.read_bytes() == theirs.read_bytes()   # a raw stream: nothing to differ but the packets


@pytest.mark.parametrize("name,ext", [("ffmpeg:mp4", "mp4"), ("ffmpeg:matroska", "mkv")])
def test_fallback_read_file_into_libavformat_writers(name: str, ext: str, shared_media: Path, mk_bin: Path,
                                                     tmp_path: Path) -> None:
    """The breadth AVI (read by the plugin's demuxer) into libavformat's MP4 / Matroska, named."""
    src = shared_media / AVI
    if not src.is_file():
        msg = f"{AVI} is not in the shared media"
        if os.environ.get("CI") == "true":
            pytest.fail(msg + " (CI=true: failing instead of skipping)", pytrace=False)
        pytest.skip(msg)
    ours, theirs = tmp_path / f"ours.{ext}", tmp_path / f"theirs.{ext}"
    cmd = [mk_bin / "mk-remux", "--quiet", src, ours, "--format", name]
    lib.check_ok(lib.run(cmd), cmd)
    _ffmpeg_copy(src, theirs)
    assert _framemd5(ours) == _framemd5(theirs)


def test_remux_to_a_pipe(shared_media: Path, mk_bin: Path, tmp_path: Path) -> None:
    """`mk-remux IN - --format ffmpeg:nut`: written front to back to standard output (no seek),
    the same packets as ffmpeg's NUT file."""
    src = shared_media / SOURCE
    cmd = [mk_bin / "mk-remux", "--quiet", src, "-", "--format", "ffmpeg:nut"]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    ours, theirs = tmp_path / "ours.nut", tmp_path / "theirs.nut"
    ours.write_bytes(proc.stdout)
    _ffmpeg_copy(src, theirs)
    assert _framemd5(ours) == _framemd5(theirs)


def test_a_codec_the_format_does_not_carry_is_refused(mk_bin: Path, tmp_path: Path) -> None:
    """PCM little-endian into .au (Sun AU: big-endian PCM, A-law, mu-law): ffmpeg's copy fails too;
    ours names the codec and leaves nothing behind."""
    wav = tmp_path / "in.wav"
    gen = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=d=0.2", "-c:a", "pcm_s16le", wav]
    lib.oracle_ok(lib.run(gen), gen)
    ref = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", wav, "-c", "copy", tmp_path / "theirs.au"])
    assert ref.returncode != 0, "ffmpeg's copy of pcm_s16le into AU succeeded: the oracle changed"
    out = tmp_path / "ours.au"
    proc = lib.run([mk_bin / "mk-remux", "--quiet", wav, out])
    err = proc.stderr.decode()
    assert proc.returncode != 0 and "pcm_s16le" in err and "au" in err, err
    assert not out.exists() and _leftovers(tmp_path) == []


def test_without_default_plugins_the_error_names_the_plugin(shared_media: Path, mk_bin: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "MEDIAKIT_PLUGIN_PATH"}
    env["MEDIAKIT_NO_DEFAULT_PLUGINS"] = "1"
    out = tmp_path / "out.avi"
    proc = lib.run([mk_bin / "mk-remux", "--quiet", shared_media / SOURCE, out], env=env)
    err = proc.stderr.decode()
    assert proc.returncode != 0 and "libMediaKitPluginFFmpeg.so" in err and ".avi" in err, err
    assert not out.exists() and _leftovers(tmp_path) == []
    # A built-in writer needs no plugin.
    mkv = tmp_path / "out.mkv"
    cmd = [mk_bin / "mk-remux", "--quiet", shared_media / SOURCE, mkv]
    lib.check_ok(lib.run(cmd, env=env), cmd)
    assert mkv.is_file()


def test_list_formats_marks_plugin_muxers(mk_bin: Path) -> None:
    cmd = [mk_bin / "mk-remux", "--list-formats"]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    lines = proc.stdout.decode().splitlines()
    writers = lines[1:lines.index("")]   # the muxer blocks, before the raw outputs
    heads = [l for l in writers if not l.startswith(" ")]
    names = [h.split(": ", 1)[0] for h in heads]
    assert names[0] == "mp4" and "ffmpeg:avi" in names and "ffmpeg:mp4" in names, names[:40]
    first_plugin = next(i for i, h in enumerate(heads) if "[plugin ffmpeg]" in h)
    assert all("[plugin " not in h for h in heads[:first_plugin])
    assert all(n.startswith("ffmpeg:") for n, h in zip(names, heads) if "[plugin ffmpeg]" in h)
    assert names.index("matroska") < first_plugin < names.index("ffmpeg:avi")
