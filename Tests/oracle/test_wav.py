"""WAV files (RIFF, RF64, WAVE_FORMAT_EXTENSIBLE) through WAVDemuxer.

Oracles: `ffprobe -show_entries packet=pos,size` (every packet's offset and size equal) and
`ffmpeg -i FILE -f s16le -` (the decoded samples byte-identical: PCM decoding is exact), on
files ffmpeg writes in every sample format the demuxer reads, 1, 2 and 6 channels, RF64, a
file cut inside its data chunk (read as far as it goes, as ffmpeg does), and from a pipe.
"""
from __future__ import annotations

import subprocess

import pytest

import oracle_lib as lib

CASES = [("pcm_s16le", 2, []), ("pcm_s24le", 2, []), ("pcm_s32le", 1, []), ("pcm_f32le", 2, []),
         ("pcm_f64le", 1, []), ("pcm_u8", 1, []), ("pcm_alaw", 1, []), ("pcm_mulaw", 2, []),
         ("pcm_s16le", 6, []), ("pcm_s24le", 6, []), ("pcm_s16le", 2, ["-rf64", "always"])]


def _make(tmp_path, codec: str, channels: int, extra: list):
    path = tmp_path / f"{codec}_{channels}{'_rf64' if extra else ''}.wav"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2.3:sample_rate=44100",
           "-ac", str(channels), "-c:a", codec, *extra, path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _packets(cmd: list, stdin=None) -> list[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, stdin=stdin, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return [l for l in proc.stdout.decode().splitlines() if l.strip()]


def _compare(path, mk_probe, mk_decode, tmp_path):
    ref = [",".join(reversed(l.split(",")[:2])) for l in _packets(["ffprobe", "-v", "error", "-show_entries", "packet=pos,size", "-of", "csv=p=0", path])]
    ours = [",".join(l.split(",")[5:3:-1]) for l in _packets([mk_probe, "--packets", path])]
    assert ours == ref, lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    out = tmp_path / "out.pcm"
    lib.check_ok(lib.run([mk_decode, path, "--audio-out", out, "-q"]), [mk_decode, path])
    want = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-f", "s16le", "-"], capture_output=True).stdout
    assert out.read_bytes() == want


@pytest.mark.parametrize("codec,channels,extra", CASES, ids=[f"{c}-{n}{'-rf64' if e else ''}" for c, n, e in CASES])
def test_wav_like_ffmpeg(codec, channels, extra, mk_probe, mk_decode, tmp_path):
    _compare(_make(tmp_path, codec, channels, extra), mk_probe, mk_decode, tmp_path)


def test_wav_cut_inside_its_data(mk_probe, mk_decode, tmp_path):
    full = _make(tmp_path, "pcm_s16le", 2, [])
    cut = tmp_path / "cut.wav"
    cut.write_bytes(full.read_bytes()[:150_001])   # mid-frame, mid-packet
    _compare(cut, mk_probe, mk_decode, tmp_path)


def test_wav_from_a_pipe(mk_probe, tmp_path):
    path = _make(tmp_path, "pcm_s24le", 2, [])
    with open(path, "rb") as f:
        piped = _packets([mk_probe, "--packets", "-"], stdin=f)
    assert piped == _packets([mk_probe, "--packets", path])


def test_wav_unsupported_format_is_named(mk_probe, tmp_path):
    path = tmp_path / "adpcm.wav"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "adpcm_ms", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    proc = lib.run([mk_probe, path])
    assert proc.returncode != 0 and b"format tag 2" in proc.stderr, proc.stderr


@pytest.mark.parametrize("codec", ["pcm_s16le", "pcm_s24le", "pcm_f32le"])
def test_wav_remux_into_mp4(codec, mk_bin, tmp_path):
    """`mk-remux in.wav out.mp4`: the PCM samples as they were (ffmpeg decodes both to the same bytes)."""
    path = _make(tmp_path, codec, 2, [])
    out = tmp_path / "out.mp4"
    lib.check_ok(lib.run([mk_bin / "mk-remux", path, out]), [mk_bin / "mk-remux", path, out])

    def pcm(p):
        return subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(p), "-f", "s32le", "-"], capture_output=True).stdout
    assert pcm(out) == pcm(path)
