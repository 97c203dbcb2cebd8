"""Byte sources and container probing, end to end through the sample tools.

- A pipe (`cat FILE | mk-probe --packets -`) gives the packets of the file itself, for the
  layouts that can be read once front to back (Ogg, IVF, MP4 with its moov first, fragmented
  MP4: test_fragmented_pipe.py); the other
  MP4 layouts are refused with an error naming the layout. Oracle: the same file read by path.
- `mk-decode -` (standard input) writes what `mk-decode FILE` writes.
- `mk-decode` opens its input once (strace counts the openat calls on the input's path).
- `mk-remux` names the unsupported pair when the input is not MP4 or the output extension
  has no muxer.
"""
from __future__ import annotations

import subprocess

import pytest

import oracle_lib as lib

STREAMABLE = ["ogg_vorbis_48k_stereo_bear.ogg", "ogg_opus_stereo_tiny_155b.opus", "ivf_av1_320x180_1s.ivf",
              "mp4_h264_aac_moov_at_start_ctts_8s.mp4", "fmp4_aac_single_file_sidx.mp4"]
NOT_STREAMABLE = {"mp4_hevc_hvc1_aac_ctts_elst.mp4": "moov box comes after the media data"}


def _piped(cmd: list, path) -> subprocess.CompletedProcess:
    with open(path, "rb") as f:
        return subprocess.run([str(c) for c in cmd], stdin=f, capture_output=True, timeout=lib.CMD_TIMEOUT)


@pytest.mark.parametrize("name", STREAMABLE)
def test_pipe_gives_the_files_packets(name, shared_media, mk_probe):
    path = shared_media / name
    ref = lib.run([mk_probe, "--packets", path])
    lib.check_ok(ref, [mk_probe, "--packets", path])
    got = _piped([mk_probe, "--packets", "-"], path)
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout == ref.stdout


@pytest.mark.parametrize("name", sorted(NOT_STREAMABLE))
def test_pipe_refuses_layouts_that_go_back(name, shared_media, mk_probe):
    got = _piped([mk_probe, "--packets", "-"], shared_media / name)
    assert got.returncode != 0
    assert NOT_STREAMABLE[name] in got.stderr.decode(), got.stderr.decode()


def test_decode_from_standard_input(shared_media, mk_decode, tmp_path):
    path = shared_media / "ogg_vorbis_48k_stereo_bear.ogg"
    ref, out = tmp_path / "ref.pcm", tmp_path / "out.pcm"
    lib.check_ok(lib.run([mk_decode, path, "--audio-out", ref, "-q"]), [mk_decode, path])
    got = _piped([mk_decode, "-", "--audio-out", out, "-q"], path)
    assert got.returncode == 0, got.stderr.decode()
    assert out.read_bytes() == ref.read_bytes()


def test_decode_opens_its_input_once(shared_media, mk_decode, tmp_path):
    path = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"
    trace = tmp_path / "trace.txt"
    cmd = ["strace", "-f", "-e", "trace=open,openat", "-o", trace, mk_decode, path,
           "--audio-out", tmp_path / "a.pcm", "--video-out", tmp_path / "v.nv12", "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    opens = [l for l in trace.read_text().splitlines() if path.name in l and "open" in l]
    assert len(opens) == 1, "mk-decode opened its input more than once:\n" + "\n".join(opens)


def test_remux_names_the_unsupported_pair(shared_media, mk_bin, tmp_path):
    remux = mk_bin / "mk-remux"
    got = lib.run([remux, shared_media / "ogg_vorbis_48k_stereo_bear.ogg", tmp_path / "out.mp4"])
    assert got.returncode != 0
    message = got.stderr.decode()
    assert "Ogg" in message and "MP4" in message and "not supported" in message, message
    assert not (tmp_path / "out.mp4").exists()
    got = lib.run([remux, shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4", tmp_path / "out.ogg"])
    assert got.returncode != 0
    message = got.stderr.decode()
    assert "Ogg cannot carry track 0 (aac)" in message and "Opus, Vorbis and FLAC" in message, message
    assert not (tmp_path / "out.ogg").exists()
    # An extension no muxer writes (AVI now has libavformat's, through the FFmpeg plugin).
    got = lib.run([remux, shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4", tmp_path / "out.xyz"])
    assert got.returncode != 0
    assert "no muxer writes .xyz" in got.stderr.decode(), got.stderr.decode()
