"""Opus and Vorbis in Ogg, decoded with trimming (the default), against ffmpeg with the same
decoder libraries (ORACLES.md): `ffmpeg -v error -c:a libopus|libvorbis -i FILE -map 0:a:0
-f s16le -` — the same sample count (FFmpeg trims Ogg Opus pre-skip and both codecs' end
granules as MediaKit does) and |diff| <= 1 per sample.

Inputs: every .ogg / .opus in ../shared/media that has audio packets, and generated files:
Opus and Vorbis stereo and 5.1 (libopus / libvorbis), and chained files made by `cat` of
two Ogg files (each link with its own pre-skip and end).
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

SHARED = sorted(p.name for p in lib.SHARED_MEDIA.glob("*") if p.suffix in (".ogg", ".opus")
                and not p.name.startswith("broken_")) if lib.SHARED_MEDIA.is_dir() else []
GENERATED = ["opus_stereo", "opus_51", "vorbis_stereo", "vorbis_51", "opus_chained", "vorbis_chained"]


def _generate(name: str, folder: Path) -> Path:
    codec = "libopus" if name.startswith("opus") else "libvorbis"
    ext = "opus" if codec == "libopus" else "ogg"
    def make(out: Path, seconds: str, freq: int, layout: str) -> None:
        src = f"sine=f={freq}:sample_rate=48000:duration={seconds}"
        cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", src]
        if layout == "5.1":
            cmd += ["-af", "pan=5.1|c0=c0|c1=0.5*c0|c2=0.3*c0|c3=0.2*c0|c4=0.7*c0|c5=0.6*c0"]
        else:
            cmd += ["-ac", "2"]
        subprocess.run(cmd + ["-c:a", codec, out], check=True)
    out = folder / f"{name}.{ext}"
    if name.endswith("chained"):
        a, b = folder / f"{name}_a.{ext}", folder / f"{name}_b.{ext}"
        make(a, "1.377", 440, "stereo")
        make(b, "0.911", 660, "stereo")
        out.write_bytes(a.read_bytes() + b.read_bytes())
    else:
        make(out, "2.345", 440, "5.1" if name.endswith("51") else "stereo")
    return out


@pytest.fixture(scope="module")
def gen_folder(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ogg-gen")


def _audio_codec(path: Path) -> str | None:
    proc = lib.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                    "stream=codec_name", "-of", "csv=p=0", path])
    return proc.stdout.decode().strip() or None


def _check(path: Path, mk_decode, tmp_path) -> None:
    codec = _audio_codec(path)
    if codec not in ("opus", "vorbis"):
        pytest.skip(f"{path.name}: first audio stream is {codec}, not opus/vorbis")
    ref_cmd = ["ffmpeg", "-v", "error", "-c:a", f"lib{codec}", "-i", path, "-map", "0:a:0", "-f", "s16le", "-"]
    ref = lib.run(ref_cmd)
    lib.oracle_ok(ref, ref_cmd)
    if not ref.stdout:
        pytest.skip(f"{path.name}: ffmpeg decodes no audio from it (no audio packets)")
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, "-q", path, "--audio-out", out]
    lib.check_ok(lib.run(cmd), cmd)
    channels = int(lib.ffprobe_json(path)["streams"][0].get("channels") or 2)
    diff = lib.compare_pcm_s16(out.read_bytes(), ref.stdout, channels)
    assert diff is None, f"{path.name}: `{lib.shell_line(cmd)}` vs `{lib.shell_line(ref_cmd)}`:\n{diff}"


@pytest.mark.parametrize("name", SHARED)
def test_shared_ogg_trimmed_like_ffmpeg(name, shared_media, mk_decode, tmp_path):
    _check(shared_media / name, mk_decode, tmp_path)


@pytest.mark.parametrize("name", GENERATED)
def test_generated_ogg_trimmed_like_ffmpeg(name, gen_folder, mk_decode, tmp_path):
    _check(_generate(name, gen_folder), mk_decode, tmp_path)
