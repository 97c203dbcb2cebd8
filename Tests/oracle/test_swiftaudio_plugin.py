"""The SwiftAudio plugin (Plugins/SwiftAudio, written in Swift): G.711 A-law and mu-law and IMA
ADPCM in its QuickTime ('ima4') and WAV (format tag 0x11) flavours, against FFmpeg's decoders.

Inputs: files ffmpeg writes here from a lavfi signal (a tone with noise on one channel, a loud
chirp on the other, so the ADPCM step index sweeps its range and the predictor clips), mono and
stereo, 8 to 48 kHz, lengths that end inside a block or packet, in .wav and .mov; IMA ADPCM WAV
with 256- and 2048-byte blocks as well as the default 1024, and a WAV file cut inside a block.

Oracles (ORACLES.md, "Decoders: bit-exact output"):
  - `ffmpeg -i FILE -f s16le -` (libavcodec's pcm_alaw, pcm_mulaw, adpcm_ima_qt, adpcm_ima_wav)
    against `mk-decode FILE --audio-out OUT`: byte-identical, with the default backend (the
    registry's choice by priority: SwiftAudio's 200 above FFmpeg's 100) and with
    `--backend swiftaudio` and `--backend ffmpeg` (choice by name: both give the same bytes).
  - `mk-probe --plugins`: swiftaudio, priority 200, is the highest for each of its codecs.
  - `ffprobe -show_entries packet=pts,duration,size,pos` against `mk-probe --packets` for IMA
    ADPCM in WAV (packets of whole blocks, timestamps in samples).
  - `nm -D --defined-only` (the library exports mediakit_plugin_entry only) and `ldd` (it
    links no codec library).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

PLUGIN = "libMediaKitPluginSwiftAudio.so"
CODECS = ("pcm_alaw", "pcm_mulaw", "adpcm_ima_qt", "adpcm_ima_wav")

SIGNAL = "0.5*sin(2*PI*440*t)+0.4*(random(0)-0.5)|0.8*sin(2*PI*(200+3000*t)*t)"

# (codec, container, channels, rate, seconds, extra ffmpeg output options)
CASES = [
    ("pcm_alaw", "wav", 1, 8000, 1.0007, []),
    ("pcm_alaw", "mov", 2, 44100, 0.731, []),
    ("pcm_mulaw", "wav", 2, 16000, 0.9001, []),
    ("pcm_mulaw", "mov", 1, 8000, 1.3, []),
    ("adpcm_ima_qt", "mov", 1, 11025, 1.01, []),
    ("adpcm_ima_qt", "mov", 2, 44100, 0.77, []),
    ("adpcm_ima_qt", "mov", 2, 48000, 0.333, []),
    ("adpcm_ima_wav", "wav", 1, 22050, 1.23, []),
    ("adpcm_ima_wav", "wav", 2, 48000, 0.61, []),
    ("adpcm_ima_wav", "wav", 2, 8000, 0.333, ["-block_size", "256"]),
    ("adpcm_ima_wav", "wav", 1, 44100, 0.71, ["-block_size", "2048"]),
]


def _case_id(case) -> str:
    codec, container, channels, rate, _, extra = case
    return f"{codec}-{container}-{channels}ch-{rate}" + ("-" + "".join(extra[1:]) if extra else "")


def _make(tmp_path: Path, case) -> Path:
    codec, container, channels, rate, seconds, extra = case
    exprs = SIGNAL if channels == 2 else SIGNAL.split("|")[0]
    path = tmp_path / f"{_case_id(case)}.{container}"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi",
           "-i", f"aevalsrc=exprs='{exprs}':s={rate}:d={seconds}", "-c:a", codec, *extra, path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _ffmpeg_pcm(path: Path) -> bytes:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-f", "s16le", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    assert proc.stdout, f"the oracle decoded nothing: `{lib.shell_line(cmd)}`"
    return proc.stdout


def _ours(mk_decode: Path, path: Path, out: Path, backend: str | None) -> bytes:
    cmd = [mk_decode, "-q", path, "--audio-out", out] + (["--backend", backend] if backend else [])
    lib.check_ok(lib.run(cmd), cmd, who="mk-decode")
    return out.read_bytes()


def _first_difference(ours: bytes, ref: bytes, channels: int) -> str:
    n = min(len(ours), len(ref))
    i = next((k for k in range(n) if ours[k] != ref[k]), n)
    sample = i // 2
    return (f"{len(ours)} bytes against {len(ref)}; first difference at byte {i} "
            f"(sample frame {sample // channels}, channel {sample % channels})")


@pytest.mark.parametrize("case", CASES, ids=[_case_id(c) for c in CASES])
def test_decodes_bit_exactly_as_ffmpeg(case, mk_decode, tmp_path):
    """The default backend (SwiftAudio by priority), SwiftAudio by name and FFmpeg by name all
    give `ffmpeg -f s16le`'s bytes."""
    path = _make(tmp_path, case)
    ref = _ffmpeg_pcm(path)
    for backend in (None, "swiftaudio", "ffmpeg"):
        ours = _ours(mk_decode, path, tmp_path / f"{backend}.pcm", backend)
        assert ours == ref, f"{path.name}, backend {backend or '(default)'}: " + _first_difference(ours, ref, case[2])


def test_wav_cut_inside_a_block(mk_decode, tmp_path):
    """An IMA ADPCM WAV file cut inside its last block: the block's header and whole 4-byte
    groups decode (as FFmpeg's decoder does with a short block), then the cut is reported."""
    full = _make(tmp_path, ("adpcm_ima_wav", "wav", 2, 22050, 1.0, []))
    data = full.read_bytes()
    start = data.index(b"data") + 8
    cut = tmp_path / "cut.wav"
    cut.write_bytes(data[:start + 5 * 1024 + 301])   # 5 blocks, then 301 bytes of the sixth
    ref = _ffmpeg_pcm(cut)
    ours = _ours(mk_decode, cut, tmp_path / "cut.pcm", None)
    assert ours == ref, _first_difference(ours, ref, 2)


def test_wav_adpcm_packets_like_ffprobe(mk_probe, tmp_path):
    """`mk-probe --packets` lists ffprobe's packets of an IMA ADPCM WAV file: same offsets, sizes,
    and pts / duration in samples (whole 1017-sample blocks, four to a 4096-byte packet)."""
    path = _make(tmp_path, ("adpcm_ima_wav", "wav", 2, 22050, 1.23, []))
    cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=pts,duration,pos,size", "-of", "csv=p=0", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    ref = [tuple(l.split(",")) for l in proc.stdout.decode().split()]   # pts,duration,size,pos
    cmd = [mk_probe, "--packets", path]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    ours = [l.split(",") for l in proc.stdout.decode().split()]
    # mk-probe --packets: track,pts,dts,duration,size,pos,key
    ours = [(o[1], o[3], o[4], o[5]) for o in ours]
    assert ours == ref, lib.diff_lines([",".join(o) for o in ours], [",".join(r) for r in ref], "mk-probe", "ffprobe")


def test_swiftaudio_wins_by_priority(mk_probe):
    """`mk-probe --plugins`: swiftaudio decodes each of its codecs at priority 200, the highest."""
    table = lib.plugin_priorities(mk_probe)
    for codec in CODECS:
        owners = table.get(codec, {})
        assert owners.get("swiftaudio") == 200, f"{codec}: {owners}"
        assert max(owners, key=owners.get) == "swiftaudio", f"{codec}: {owners}"
        assert owners.get("ffmpeg", 0) < 200, f"{codec}: {owners}"


def test_exports_only_the_entry_point_and_links_no_codec_library(mk_bin):
    """Oracle: `nm -D --defined-only` lists mediakit_plugin_entry as the one symbol (no Swift
    symbol crosses the boundary); `ldd` shows no libav*, libopus, libvorbis, libdav1d."""
    path = mk_bin / PLUGIN
    if not path.is_file():
        pytest.fail(f"{PLUGIN} not found in {mk_bin}; run `make build`", pytrace=False)
    proc = lib.run(["nm", "-D", "--defined-only", path])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    names = [l.split()[-1] for l in proc.stdout.decode().splitlines() if len(l.split()) == 3]
    names = [n for n in names if not n.startswith("_")]
    assert names == ["mediakit_plugin_entry"], f"{PLUGIN} exports {names}"
    ldd = subprocess.run(["ldd", str(path)], capture_output=True, text=True).stdout
    bad = [l.strip() for l in ldd.splitlines() if re.search(r"lib(avcodec|avutil|avformat|swscale|swresample|opus|vorbis|dav1d)\b", l)]
    assert not bad, f"{PLUGIN} links codec libraries: {bad}"
