"""WAV and AIFF / AIFF-C written from packets (issue 30, item 3): `mk-remux x.aiff x.wav`,
`mk-remux x.wav x.aiff` and every PCM codec the two muxers take.

Oracles (ORACLES.md):
  samples   ffmpeg's decode of our file, as 64-bit float (`-f f64le`, exact for every PCM
            width and for G.711), equals ffmpeg's decode of the source byte for byte: the
            copy keeps every sample, whatever byte order the target stores;
  facts     ffprobe reads our file as `wav` / `aiff` with the codec the target stores (WAV
            little-endian, AIFF big-endian or AIFF-C `sowt` / `raw ` / `fl32` ...), the source's
            rate, channels and sample count;
  layout    for a codec ffmpeg's aiff muxer takes as it is, our AIFF file is byte for byte the
            file `ffmpeg -c copy -fflags +bitexact` writes (FORM, FVER for AIFF-C, COMM with its
            80-bit rate, SSND);
Sources are made by ffmpeg in the test; the AIFF files of ../shared/media/breadth and the WAV
files of ../shared/media are copied too (skipped without ../shared, a failure under CI).
"""
from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

# codec -> (container ffmpeg writes it in, codec ffprobe names in our WAV, in our AIFF)
CODECS = {
    "pcm_u8": ("wav", "pcm_u8", "pcm_u8"),
    "pcm_s8": ("aiff", "pcm_u8", "pcm_s8"),
    "pcm_s16le": ("wav", "pcm_s16le", "pcm_s16le"),
    "pcm_s16be": ("aiff", "pcm_s16le", "pcm_s16be"),
    "pcm_s24le": ("wav", "pcm_s24le", "pcm_s24be"),
    "pcm_s24be": ("aiff", "pcm_s24le", "pcm_s24be"),
    "pcm_s32le": ("wav", "pcm_s32le", "pcm_s32be"),
    "pcm_s32be": ("aiff", "pcm_s32le", "pcm_s32be"),
    "pcm_f32le": ("wav", "pcm_f32le", "pcm_f32be"),
    "pcm_f32be": ("aiff", "pcm_f32le", "pcm_f32be"),
    "pcm_f64le": ("wav", "pcm_f64le", "pcm_f64be"),
    "pcm_f64be": ("aiff", "pcm_f64le", "pcm_f64be"),
    "pcm_alaw": ("wav", "pcm_alaw", "pcm_alaw"),
    "pcm_mulaw": ("aiff", "pcm_mulaw", "pcm_mulaw"),
}


def _make(tmp_path: Path, codec: str, container: str, channels: int, seconds: float = 1.3, rate: int = 44100) -> Path:
    path = tmp_path / f"src_{codec}_{channels}.{container}"
    # FLAC from 16-bit samples (from the float sine ffmpeg would write 24-bit FLAC).
    extra = ["-sample_fmt", "s16"] if codec == "flac" else []
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi",
           "-i", f"sine=frequency=440:duration={seconds}:sample_rate={rate},volume=0.9",
           "-ac", str(channels), "-c:a", codec, *extra, "-f", container, str(path)]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _samples_md5(path: Path) -> str:
    """ffmpeg's decode as interleaved 64-bit floats (every PCM sample exactly)."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:a:0", "-c:a", "pcm_f64le", "-f", "f64le", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    # Empty only for a source without samples (tinytag's test.aiff: a COMM of 0 frames).
    assert proc.stdout or "breadth" in str(path) or path.parent.name.startswith("test_breadth"), f"ffmpeg decoded nothing from {path}"
    return hashlib.md5(proc.stdout).hexdigest()


def _samples_md5s(paths: list[Path], folder: Path) -> list[str]:
    """_samples_md5 of several files from one ffmpeg run (each input decoded to its own f64le
    file: the same decode as _samples_md5's, one process start instead of len(paths))."""
    cmd: list = ["ffmpeg", "-v", "error", "-nostdin", "-y"]
    for path in paths:
        cmd += ["-i", str(path)]
    outs = [folder / f"samples{i}.f64" for i in range(len(paths))]
    for i, out in enumerate(outs):
        cmd += ["-map", f"{i}:a:0", "-c:a", "pcm_f64le", "-f", "f64le", str(out)]
    lib.oracle_ok(lib.run(cmd), cmd)
    digests = []
    for path, out in zip(paths, outs):
        data = out.read_bytes()
        assert data, f"ffmpeg decoded nothing from {path}"
        digests.append(hashlib.md5(data).hexdigest())
        out.unlink()
    return digests


def _stream(path: Path) -> tuple[dict, dict]:
    info = lib.ffprobe_json(path, ignore_editlist=False)
    return info["format"], info["streams"][0]


def _remux(mk_remux: Path, src: Path, out: Path) -> None:
    cmd = [mk_remux, str(src), str(out)]
    lib.check_ok(lib.run(cmd), cmd)


def _check_facts(src: Path, out: Path, format_name: str, codec: str) -> None:
    """`out` is read by ffprobe as `format_name` with `codec`, the source's rate and channels."""
    fmt, s = _stream(out)
    _, ref = _stream(src)
    assert fmt["format_name"] == format_name, fmt
    assert s["codec_name"] == codec, s
    assert (s["sample_rate"], s["channels"]) == (ref["sample_rate"], ref["channels"])


def _check_copy(src: Path, out: Path, format_name: str, codec: str) -> None:
    """_check_facts, and `out` decodes to the source's samples."""
    _check_facts(src, out, format_name, codec)
    assert _samples_md5(out) == _samples_md5(src), f"{out.name}: the samples differ from {src.name}'s"


# Stereo for every codec; 6 channels (WAVE_FORMAT_EXTENSIBLE in WAV) and mono for a few
# widths: the header is the only part that depends on the channel count.
CASES = [(c, 2) for c in sorted(CODECS)] + [("pcm_s24le", 6), ("pcm_f32be", 6), ("pcm_s16be", 1), ("pcm_alaw", 1)]


@pytest.mark.parametrize("codec,channels", CASES)
def test_every_pcm_codec_into_wav_and_aiff_keeps_every_sample(codec: str, channels: int, mk_remux: Path, tmp_path: Path) -> None:
    container, in_wav, in_aiff = CODECS[codec]
    src = _make(tmp_path, codec, container, channels)
    outs = {target: tmp_path / f"out.{target}" for target in ("wav", "aiff")}
    for target, stored in (("wav", in_wav), ("aiff", in_aiff)):
        _remux(mk_remux, src, outs[target])
        _check_facts(src, outs[target], target, stored)
    # And back: AIFF -> WAV of our own AIFF keeps the samples too.
    back = tmp_path / "back.wav"
    _remux(mk_remux, outs["aiff"], back)
    want, *got = _samples_md5s([src, outs["wav"], outs["aiff"], back], tmp_path)
    for path, digest in zip([outs["wav"], outs["aiff"], back], got):
        assert digest == want, f"{path.name}: the samples differ from {src.name}'s"


# The codecs ffmpeg's aiff muxer stores as they are (its `-c copy` writes the same codec).
FFMPEG_AIFF = ["pcm_s8", "pcm_s16be", "pcm_s24be", "pcm_s32be", "pcm_f32be", "pcm_f64be", "pcm_alaw", "pcm_mulaw", "pcm_s16le"]


@pytest.mark.parametrize("codec", FFMPEG_AIFF)
@pytest.mark.parametrize("rate", [8000, 44100, 96000])
def test_aiff_layout_is_ffmpegs_byte_for_byte(codec: str, rate: int, mk_remux: Path, tmp_path: Path) -> None:
    """Our AIFF equals ffmpeg's -c copy of the same samples (mono and stereo: ffmpeg adds a
    CHAN chunk for more channels, which we do not write)."""
    for channels in (1, 2):
        src = _make(tmp_path, codec, "aiff", channels, seconds=0.7, rate=rate)
        ref = tmp_path / "ref.aiff"
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(src), "-c", "copy", "-fflags", "+bitexact",
               "-map_metadata", "-1", str(ref)]
        lib.oracle_ok(lib.run(cmd), cmd)
        ours = tmp_path / "ours.aiff"
        _remux(mk_remux, src, ours)
        a, b = ours.read_bytes(), ref.read_bytes()
        assert a == b, lib.compare_bytes_exact(a, b, f"{codec} {channels} ch {rate} Hz AIFF") or "differ"


def test_odd_byte_count_is_padded_and_reads_back(mk_remux: Path, tmp_path: Path) -> None:
    """An odd number of 8-bit mono samples: the data chunk is padded to an even size and the
    RIFF / FORM sizes count the pad, as both specs say; ffprobe reads every sample."""
    src = _make(tmp_path, "pcm_u8", "wav", 1, seconds=0.5, rate=8001)   # 4000.5 -> 4001 samples
    for target, name, codec in (("wav", "wav", "pcm_u8"), ("aiff", "aiff", "pcm_u8")):
        out = tmp_path / f"odd.{target}"
        _remux(mk_remux, src, out)
        data = out.read_bytes()
        assert len(data) % 2 == 0
        size = int.from_bytes(data[4:8], "little" if target == "wav" else "big")
        assert size == len(data) - 8, f"{target}: the container size {size} is not the file's {len(data)} - 8"
        _check_copy(src, out, name, codec)


def test_cut_file_is_copied_as_far_as_it_goes(mk_remux: Path, tmp_path: Path) -> None:
    """A WAV and an AIFF cut short: the copy holds every whole sample there is, as ffmpeg's
    `-c copy` of the cut file does (its last, shorter run of samples included)."""
    for container, codec in (("wav", "pcm_s16le"), ("aiff", "pcm_s24be")):
        whole = _make(tmp_path, codec, container, 2, seconds=1.0)
        cut = tmp_path / f"cut.{container}"
        data = whole.read_bytes()
        cut.write_bytes(data[:len(data) * 2 // 3 + 1])
        for target in ("wav", "aiff"):
            out = tmp_path / f"cut-out.{target}"
            _remux(mk_remux, cut, out)
            ref = tmp_path / f"cut-ref.{target}"
            cmd = ["ffmpeg", "-v", "quiet", "-nostdin", "-y", "-i", str(cut), "-c:a", "pcm_f64le", "-f", "f64le", str(ref)]
            lib.run(cmd)   # exit status 1: ffmpeg reports the cut after writing what it read
            assert ref.stat().st_size > 0
            assert _samples_md5(out) == hashlib.md5(ref.read_bytes()).hexdigest(), f"{container} -> {target}"


def test_non_pcm_track_is_refused_naming_the_codec(mk_remux: Path, tmp_path: Path) -> None:
    src = _make(tmp_path, "flac", "flac", 2, seconds=0.3)
    for target in ("wav", "aiff"):
        out = tmp_path / f"x.{target}"
        proc = lib.run([mk_remux, str(src), str(out)])
        assert proc.returncode != 0
        assert "flac" in proc.stderr.decode(), proc.stderr
        assert not out.exists(), "nothing is left under the target name"


def _breadth(names: str) -> list:
    folder = lib.SHARED_MEDIA / "breadth"
    if not folder.is_dir():
        return [pytest.param(None, id="no-shared-media")]
    return [pytest.param(p, id=p.name) for p in sorted(folder.glob(names))]


def _require(src: Path | None) -> Path:
    """The breadth file, or a skip without ../shared (a failure under CI)."""
    if src is None:
        if os.environ.get("CI") == "true":
            pytest.fail("../shared/media/breadth is missing under CI")
        pytest.skip("../shared/media/breadth is not beside this checkout")
    return src


@pytest.mark.parametrize("src", _breadth("aif*"))
def test_breadth_aiff_files_into_wav(src: Path | None, mk_remux: Path, tmp_path: Path) -> None:
    """The AIFF files of the breadth corpus (written by other tools) copied into WAV keep every sample."""
    src = _require(src)
    _, s = _stream(src)
    out = tmp_path / "out.wav"
    _remux(mk_remux, src, out)
    stored = {"pcm_s8": "pcm_u8"}.get(s["codec_name"], s["codec_name"].replace("be", "le"))
    _check_copy(src, out, "wav", stored)


@pytest.mark.parametrize("src", _breadth("wav_*.wav"))
def test_breadth_wav_files_into_aiff(src: Path | None, mk_remux: Path, tmp_path: Path) -> None:
    """The PCM WAV files of the breadth corpus copied into AIFF keep every sample (the others,
    ADPCM and GSM, are refused naming their codec)."""
    src = _require(src)
    _, s = _stream(src)
    out = tmp_path / "out.aiff"
    if s["codec_name"] not in CODECS:
        proc = lib.run([mk_remux, str(src), str(out)])
        assert proc.returncode != 0 and s["codec_name"] in proc.stderr.decode(), proc.stderr
        return
    _remux(mk_remux, src, out)
    _check_copy(src, out, "aiff", CODECS[s["codec_name"]][2])


@pytest.mark.parametrize("target,codec,stored", [("wav", None, "pcm_s16le"), ("aiff", None, "pcm_s16be"),
                                                 ("aif", "pcm_f32be", "pcm_f32be"), ("wav", "pcm_s24le", "pcm_s24le"),
                                                 ("wav", "pcm_mulaw", "pcm_mulaw")])
def test_transcode_into_wav_and_aiff(target: str, codec: str | None, stored: str, mk_transcode: Path, tmp_path: Path) -> None:
    """mk-transcode writes WAV and AIFF through the PCM encoders (16-bit by default, as ffmpeg's
    wav and aiff muxers): from 16-bit FLAC every sample is kept (G.711 is compared with ffmpeg's
    own encode of the same samples)."""
    src = _make(tmp_path, "flac", "flac", 2)
    out = tmp_path / f"out.{target}"
    cmd = [mk_transcode, str(src), str(out), "--quiet", *(["--codec", codec] if codec else [])]
    lib.check_ok(lib.run(cmd), cmd)
    fmt, s = _stream(out)
    assert fmt["format_name"] == ("aiff" if target.startswith("aif") else "wav") and s["codec_name"] == stored, (fmt, s)
    if stored == "pcm_mulaw":
        ref = tmp_path / "ref.wav"
        make = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(src), "-c:a", "pcm_mulaw", str(ref)]
        lib.oracle_ok(lib.run(make), make)
        assert _samples_md5(out) == _samples_md5(ref)
    else:
        assert _samples_md5(out) == _samples_md5(src)


def test_transcode_mp3_into_wav_is_ffmpegs_decode(mk_transcode: Path, tmp_path: Path) -> None:
    """A lossy source: the WAV holds ffmpeg's decode of it (±1 LSB: float to 16-bit rounding),
    gapless (the LAME delay and padding cut, the same sample count)."""
    src = _make(tmp_path, "libmp3lame", "mp3", 2)
    out = tmp_path / "out.wav"
    cmd = [mk_transcode, str(src), str(out), "--quiet"]
    lib.check_ok(lib.run(cmd), cmd)
    def s16(path: Path) -> bytes:
        c = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-f", "s16le", "-"]
        p = lib.run(c)
        lib.oracle_ok(p, c)
        return p.stdout
    ours, ref = s16(out), s16(src)
    assert len(ours) == len(ref), f"{len(ours) // 4} sample frames, ffmpeg decodes {len(ref) // 4}"
    problem = lib.compare_pcm_s16(ours, ref, 2)
    assert problem is None, problem
