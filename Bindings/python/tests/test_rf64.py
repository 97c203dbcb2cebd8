"""RF64 writing (EBU Tech 3306) from Python and C: ``rf64=`` of ``mediakit.Muxer``,
``mediakit.remux`` and ``mediakit.transcode`` (C ``mk_muxer_settings.rf64`` and
``mk_transcode_settings.rf64``, MK_RF64_*), as ``mk-remux --rf64`` / ``mk-transcode --rf64``.

Oracle: ffmpeg's wav muxer with the same ``-rf64`` mode (``-fflags +bitexact``) writes the same
file byte for byte; the switch of "auto" past 4 GiB is WAVRF64Tests' (Swift), where the limit is
a parameter.
"""
from __future__ import annotations

import ctypes
import os
import subprocess
from pathlib import Path

import pytest

import mediakit
from mediakit import _ffi


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", *args], check=True)


@pytest.fixture()
def wav(tmp_path: Path, oracle_tools: None) -> Path:
    """A 16-bit stereo WAV of 1001 samples, as ffmpeg writes it."""
    path = tmp_path / "in.wav"
    _ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000", "-af", "atrim=end_sample=1001", "-ac", "2",
            "-c:a", "pcm_s16le", "-fflags", "+bitexact", str(path))
    return path


def _ffmpeg_copy(src: Path, mode: str, out: Path) -> bytes:
    _ffmpeg("-i", str(src), "-c", "copy", "-rf64", mode, "-fflags", "+bitexact", str(out))
    return out.read_bytes()


@pytest.mark.parametrize("mode", ["always", "auto", "never"])
def test_remux_and_muxer_write_ffmpegs_rf64(wav: Path, tmp_path: Path, mode: str) -> None:
    """``remux(rf64=MODE)`` and ``Muxer(rf64=MODE)`` fed the demuxer's packets write what
    ``ffmpeg -c copy -rf64 MODE`` writes: RF64 with its ds64 chunk, RIFF with the JUNK chunk
    reserved, plain RIFF."""
    ref = _ffmpeg_copy(wav, mode, tmp_path / "ffmpeg.wav")
    assert ref[:4] == (b"RF64" if mode == "always" else b"RIFF")
    by_remux, by_muxer = tmp_path / "remux.wav", tmp_path / "muxer.wav"
    mediakit.remux(wav, by_remux, rf64=mode)
    with mediakit.open(wav) as d, mediakit.Muxer(by_muxer, rf64=mode) as mux:
        t = mux.add_track(d.tracks[0])
        for p in d.packets():
            mux.write(t, p)
        mux.finish()
    for out in (by_remux, by_muxer):
        got = out.read_bytes()
        assert got == ref, f"{out.name}: {got[:80].hex()}\nffmpeg: {ref[:80].hex()}"


def test_transcode_writes_rf64_as_mk_transcode_and_ffmpeg(wav: Path, tmp_path: Path) -> None:
    """``transcode(rf64="always")`` into WAV (16-bit PCM from 16-bit PCM: the samples unchanged)
    gives ``ffmpeg -c:a pcm_s16le -rf64 always``'s bytes, and mk-transcode --rf64 always the same."""
    out, ref, cli = tmp_path / "out.wav", tmp_path / "ffmpeg.wav", tmp_path / "cli.wav"
    mediakit.transcode(wav, out, rf64="always")
    _ffmpeg("-i", str(wav), "-c:a", "pcm_s16le", "-rf64", "always", "-fflags", "+bitexact", str(ref))
    assert out.read_bytes()[:4] == b"RF64"
    assert out.read_bytes() == ref.read_bytes()
    # The tools sit beside the library (MK_BIN, or the folder of MEDIAKIT_LIBRARY: conftest sets one).
    mk_transcode = Path(os.environ.get("MK_BIN") or Path(os.environ["MEDIAKIT_LIBRARY"]).parent) / "mk-transcode"
    subprocess.run([str(mk_transcode), "--quiet", str(wav), str(cli), "--rf64", "always"], check=True, capture_output=True)
    assert cli.read_bytes() == ref.read_bytes()


def test_rf64_refusals(wav: Path, tmp_path: Path) -> None:
    """A mode that is not one of ffmpeg's is a ValueError; RF64 for a format other than WAV is
    refused by the library (InvalidArgumentError naming the option) and nothing is written."""
    with pytest.raises(ValueError, match="rf64"):
        mediakit.remux(wav, tmp_path / "bad.wav", rf64="sometimes")
    with pytest.raises(mediakit.InvalidArgumentError, match="(?i)rf64"):
        mediakit.remux(wav, tmp_path / "bad.mka", rf64="always")
    with pytest.raises(mediakit.InvalidArgumentError, match="(?i)rf64"):
        mediakit.transcode(wav, tmp_path / "bad.flac", rf64="auto")
    with pytest.raises(mediakit.InvalidArgumentError, match="(?i)rf64"):
        mediakit.Muxer(tmp_path / "bad.caf", rf64="always")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.wav"]


def test_c_rf64_field_checked_and_read_only_when_covered(wav: Path, tmp_path: Path) -> None:
    """mk_remux and mk_transcode_with refuse an rf64 other than MK_RF64_* (MK_EINVAL, naming the
    field), and a settings struct whose struct_size stops before rf64 leaves it at RIFF (the
    struct_size rule)."""
    src, out = str(wav).encode(), tmp_path / "c.wav"
    s = _ffi.MuxerSettings()
    mediakit.lib.mk_muxer_default_settings(ctypes.byref(s))
    assert s.rf64 == 0
    s.rf64 = 3
    with pytest.raises(mediakit.InvalidArgumentError, match="rf64 is 3"):
        mediakit.lib.mk_remux(src, str(out).encode(), ctypes.byref(s))
    t = _ffi.TranscodeSettings()
    mediakit.lib.mk_transcode_default_settings(ctypes.byref(t))
    assert t.rf64 == 0
    t.rf64 = -1
    with pytest.raises(mediakit.InvalidArgumentError, match="rf64 is -1"):
        mediakit.lib.mk_transcode_with(src, str(out).encode(), ctypes.byref(t))
    assert not out.exists()
    s.rf64 = 2    # beyond the stated size: not read
    s.struct_size = _ffi.MuxerSettings.rf64.offset
    mediakit.lib.mk_remux(src, str(out).encode(), ctypes.byref(s))
    assert out.read_bytes()[:4] == b"RIFF"
