"""The writers as one catalogue (issue 29, item 1): `mk-remux --list-formats`, and the writers
that became muxers (native FLAC, MP3, Ogg Opus; WAV, AIFF and CAF, issue 30) reached by remux through it.

Oracles (ORACLES.md):
  listing     the formats listed are the ones whose files ffprobe recognises after a remux into
              each of their extensions, by ffprobe's format name (mp4 -> mov,mp4,..., matroska,
              webm, ogg, flac, mp3, wav, aiff, caf, mpegts, hls)
  FLAC, MP3,  ffmpeg's decode (s16le, md5) of our remux equals ffmpeg's decode of the source:
  Opus        nothing lost, and the MP3's LAME delay and padding (gapless) carried over
Inputs are made with ffmpeg in the test (libmp3lame, flac, libopus); one MP3 of ../shared/media
(written by LAME, from tinytag's samples) is used when ../shared is present.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib


def listing(mk_remux: Path, section: int = 0) -> dict[str, list[str]]:
    """Format name -> extensions, from `mk-remux --list-formats`: its first section (the
    built-in muxers; the plugins' ones, marked "[plugin NAME]", are test_plugin_mux.py's), or
    with `section` 1 the second (the raw outputs mk-decode writes)."""
    out = subprocess.run([mk_remux, "--list-formats"], capture_output=True, check=True, text=True).stdout
    blocks = out.split("\n\n")
    assert len(blocks) == 2, out
    formats: dict[str, list[str]] = {}
    name: str | None = ""
    for line in blocks[section].splitlines()[1:]:
        if not line.startswith(" "):
            name = None if "[plugin " in line else line.split(":", 1)[0]
            if name is not None:
                formats[name] = []
        elif name is not None and line.strip().startswith("extensions:"):
            formats[name] = [e.lstrip(".") for e in line.split(":", 1)[1].split()]
    return formats


def test_list_formats_names_the_raw_outputs_of_mk_decode(mk_remux: Path) -> None:
    """The frame sinks follow the muxers, with the extensions mk-decode's outputs customarily
    have (what each writes is checked in Bindings/python's test_registry)."""
    assert listing(mk_remux, 1) == {"pcm": ["pcm", "raw"], "wav": ["wav"], "rawvideo": ["yuv", "nv12", "i420"], "y4m": ["y4m"]}


def decoded_md5(path: Path) -> str:
    pcm = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", "0:a:0", "-f", "s16le", "-"],
                         capture_output=True, check=True).stdout
    assert pcm, f"ffmpeg decoded nothing from {path}"
    return hashlib.md5(pcm).hexdigest()


def ffprobe_format(path: Path) -> str:
    return subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=format_name", "-of", "default=nw=1:nk=1", str(path)],
                          capture_output=True, check=True, text=True).stdout.strip()


def make(tmp_path: Path, name: str, *codec: str) -> Path:
    out = tmp_path / name
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=1.3:sample_rate=44100",
                    "-ac", "2", *codec, str(out)], check=True)
    return out


FFPROBE_NAME = {"mp4": "mov,mp4,m4a,3gp,3g2,mj2", "matroska": "matroska,webm", "webm": "matroska,webm", "ogg": "ogg",
                "opus": "ogg", "flac": "flac", "mp3": "mp3", "wav": "wav", "aiff": "aiff", "caf": "caf", "mpegts": "mpegts",
                "hls": "hls", "srt": "srt", "webvtt": "webvtt"}


def test_list_formats_names_every_writer_and_each_writes_what_ffprobe_reads(mk_remux: Path, tmp_path: Path) -> None:
    formats = listing(mk_remux)
    assert set(formats) == set(FFPROBE_NAME), formats
    opus = make(tmp_path, "in.ogg", "-c:a", "libopus")
    flac = make(tmp_path, "in.flac", "-c:a", "flac")
    mp3 = make(tmp_path, "in.mp3", "-c:a", "libmp3lame")
    pcm = make(tmp_path, "in.aiff", "-c:a", "pcm_s16be")
    srt = tmp_path / "in.srt"   # the subtitle writers (issue 33 item 4) take a text track
    srt.write_text("1\n00:00:00,500 --> 00:00:01,000\nHello\n")
    # One source per format that carries it, remuxed into every extension the listing gives.
    source = {"mp4": opus, "matroska": opus, "webm": opus, "ogg": opus, "opus": opus, "flac": flac, "mp3": mp3,
              "wav": pcm, "aiff": pcm, "caf": pcm, "mpegts": opus, "hls": mp3, "srt": srt, "webvtt": srt}
    for name, extensions in formats.items():
        assert extensions, f"{name} lists no extension"
        for ext in extensions:
            out = tmp_path / f"out-{name}.{ext}"
            lib.check_ok(lib.run([mk_remux, source[name], out, "--quiet"]), [mk_remux, source[name], out])
            assert ffprobe_format(out) == FFPROBE_NAME[name], (name, ext)


@pytest.mark.parametrize("kind", ["flac", "mp3", "opus"])
def test_remux_into_the_single_stream_writers_decodes_as_the_source(mk_remux: Path, tmp_path: Path, kind: str) -> None:
    codec = {"flac": ["-c:a", "flac"], "mp3": ["-c:a", "libmp3lame"], "opus": ["-c:a", "libopus"]}[kind]
    source = make(tmp_path, f"in.{'ogg' if kind == 'opus' else kind}", *codec)
    out = tmp_path / f"out.{kind}"
    lib.check_ok(lib.run([mk_remux, source, out, "--quiet"]), [mk_remux, source, out])
    assert decoded_md5(out) == decoded_md5(source)


def test_remux_of_a_lame_mp3_from_shared_media_keeps_its_gapless_length(mk_remux: Path, shared_media: Path, tmp_path: Path) -> None:
    """../shared/media: an MP3 written by LAME (Xing + LAME tag), from tinytag's samples."""
    source = shared_media / "mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3"
    out = tmp_path / "out.mp3"
    lib.check_ok(lib.run([mk_remux, source, out, "--quiet"]), [mk_remux, source, out])
    assert decoded_md5(out) == decoded_md5(source)


def test_options_a_format_does_not_take_are_refused(mk_remux: Path, tmp_path: Path) -> None:
    source = make(tmp_path, "in.flac", "-c:a", "flac")
    got = lib.run([mk_remux, source, tmp_path / "out.flac", "--faststart"])
    assert got.returncode == 1
    assert "FLAC files take no layout option" in got.stderr.decode(), got.stderr.decode()
    assert not (tmp_path / "out.flac").exists()


def packet_hashes(path: Path, stream: str) -> list[str]:
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", stream, "-show_packets", "-show_data_hash", "md5",
                          "-show_entries", "packet=data_hash", "-of", "default=nw=1:nk=1", str(path)],
                         capture_output=True, check=True, text=True).stdout
    return out.split()


def test_transcode_copies_video_into_any_format_that_carries_it(mk_bin: Path, tmp_path: Path) -> None:
    """--copy-video was MP4 only (Transcoder's own rule); the muxer now decides: Matroska takes
    H.264. Oracle: ffprobe's packet data hashes of the video equal the source's."""
    source = tmp_path / "in.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25:duration=2",
                    "-f", "lavfi", "-i", "sine=frequency=330:duration=2:sample_rate=48000",
                    "-c:v", "libx264", "-g", "10", "-c:a", "aac", "-shortest", str(source)], check=True)
    out = tmp_path / "out.mkv"
    cmd = [mk_bin / "mk-transcode", source, out, "--copy-video"]
    lib.check_ok(lib.run(cmd), cmd)
    assert packet_hashes(out, "v:0") == packet_hashes(source, "v:0")
    got = lib.run([mk_bin / "mk-transcode", source, tmp_path / "out.flac", "--copy-video"])
    assert got.returncode != 0 and "FLAC" in got.stderr.decode(), got.stderr.decode()
    assert not (tmp_path / "out.flac").exists()
