"""The push stream parser (AudioStreamParser through mk-stream, and the C API through
Tests/c/stream_packets.c with a file type hint) over the containers it reads front to back:
WAV / RF64, AIFF-C, CAF, FLAC, Ogg (Vorbis, Opus), MP4 / M4A with its moov first (AAC, ALAC)
and MPEG-TS (MP2, E-AC-3), the first audio track; and the elementary streams AudioFileStream
also takes (raw AC-3, E-AC-3, AMR-NB), their format named as FFmpeg's raw demuxers are.

Oracles (ORACLES.md): ffprobe's packets of the first audio stream (`-select_streams a:0
-show_packets`): the same count, each the same size, at the same byte offset (`pos`) where
ffprobe gives one, holding the same samples (`duration`, in the stream's time base) where
ffprobe gives a duration. The pull demuxer's packets (and their bytes) and chunk invariance are
checked in Tests/MediaKitTests/AudioStreamParserContainerTests.swift; the bytes' MD5 against
ffprobe's `-show_data_hash` in Bindings/python/tests/test_stream_parser.py.

Real files of ../shared/media, and two made here from one of them by ffmpeg (CAF holds PCM copied
from a real WAV; an ALAC M4A with `-movflags +faststart`), as ../shared has neither. An M4A whose
moov follows its media data is refused with an error that says so.
"""
from __future__ import annotations

import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

import oracle_lib as lib
from test_capi import _build, _libdir

ROOT = Path(__file__).resolve().parents[2]

FILES = [
    ("breadth/wav_androidx_b4e52e_bbb_2ch_44kHz.wav", "wav"),
    ("breadth/wav_androidx_5dbe0f_sample_rf64.wav", "rf64"),
    ("breadth/aifc_Borewit_638bb0_M1F1-AlawC-AFsp.aif", "aiff"),
    ("breadth/flac_tinytag_a3f1bf_flac1sMono.flac", "flac"),
    ("breadth/flac_androidx_af3fe8_bear_with_picture.flac", "flac"),
    ("ogg_vorbis_stereo_1s.ogg", "ogg"),
    ("ogg_vorbis_48k_stereo_bear.ogg", "ogg"),
    ("ogg_opus_stereo_tiny_155b.opus", "opus"),
    ("mp4_h264_aac_moov_at_start_ctts_8s.mp4", "m4a"),
    ("breadth/ts_androidx_a24d4d_sample_h264_mpeg_audio.ts", "ts"),
    ("breadth/ts_Vanilagy_00bbd7_eac3.ts", "ts"),
    ("breadth/ac3_shaka-proj_2318c7_fileSequence0.ac3", "ac3"),
    ("breadth/eac3_androidx_f910db_sample.eac3", "eac3"),
    ("breadth/amr_androidx_b844f5_sample_nb.amr", "amr"),
    ("made:caf", "caf"),
    ("made:alac_faststart.m4a", "m4a"),
]
FORMATS = {"wav": "wav", "rf64": "wav", "aiff": "aiff", "flac": "flac", "ogg": "ogg", "opus": "ogg", "m4a": "mp4",
           "ts": "mpegts", "caf": "caf", "ac3": "ac3", "eac3": "eac3", "amr": "amr"}
MADE_FROM = "breadth/wav_androidx_b4e52e_bbb_2ch_44kHz.wav"


def _path(spec: str, tmp_path_factory) -> Path:
    if not spec.startswith("made:"):
        return lib.SHARED_MEDIA / spec
    src = lib.SHARED_MEDIA / MADE_FROM
    out = tmp_path_factory.mktemp("made") / spec[5:].replace("caf", "pcm.caf")
    codec = ["-c:a", "copy"] if spec == "made:caf" else ["-c:a", "alac", "-movflags", "+faststart"]
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", src, "-map_metadata", "-1", *codec, out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    cache: dict[str, Path] = {}

    def get(spec: str) -> Path:
        if spec not in cache:
            cache[spec] = _path(spec, tmp_path_factory)
        return cache[spec]
    return get


@pytest.fixture(scope="module")
def driver(mk_bin, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("stream_packets") / "stream_packets"
    return _build(ROOT / "Tests/c/stream_packets.c", out, _libdir(Path(mk_bin)))


def _ffprobe(path: Path) -> tuple[list[tuple[str, int, str]], Fraction, int]:
    """ffprobe's packets of the first audio stream (pos, size, duration), its time base and rate."""
    cmd = ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
           "stream=time_base,sample_rate:packet=pos,size,duration_ts", "-of", "compact=p=0:nk=0", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    packets, tb, rate = [], Fraction(1), 0
    for line in proc.stdout.decode().splitlines():
        f = dict(kv.split("=", 1) for kv in line.split("|") if "=" in kv)
        if "time_base" in f:
            tb, rate = Fraction(f["time_base"]), int(f["sample_rate"])
        elif "size" in f:
            packets.append((f.get("pos", "N/A"), int(f["size"]), f.get("duration_ts", "N/A")))
    return packets, tb, rate


def _pushed(mk_stream: Path, path: Path, chunk: int) -> list[tuple[int, int, int]]:
    proc = subprocess.run([str(mk_stream), str(path), "--packets", "--chunk", str(chunk)], capture_output=True, timeout=300)
    assert proc.returncode == 0, f"{path.name}: mk-stream failed: {proc.stderr.decode()}"
    return [tuple(int(x) for x in line.split(",")) for line in proc.stdout.decode().splitlines()]  # type: ignore[misc]


@pytest.mark.parametrize("spec,hint", FILES, ids=[s for s, _ in FILES])
def test_packets_equal_ffprobe(spec, hint, shared_media, mk_stream, driver, made):
    path = made(spec)
    want, tb, rate = _ffprobe(path)
    assert want, f"{spec}: ffprobe gives no audio packet"
    got = _pushed(mk_stream, path, 4096)
    assert len(got) == len(want), f"{spec}: {len(got)} packets pushed out, ffprobe {len(want)}"
    for i, ((offset, size, frames), (pos, fsize, dur)) in enumerate(zip(got, want)):
        assert size == fsize, f"{spec}: packet {i} is {size} bytes, ffprobe's {fsize}"
        if pos != "N/A":
            assert offset == int(pos), f"{spec}: packet {i} at {offset}, ffprobe's at {pos}"
        if dur != "N/A" and int(dur) > 0 and frames > 0:
            assert frames == round(int(dur) * tb * rate), f"{spec}: packet {i} holds {frames} samples, ffprobe's {dur} x {tb}"
    # The whole file in one push gives the same packets.
    assert _pushed(mk_stream, path, 1 << 26) == got, f"{spec}: the whole file in one push gives other packets"
    # The C API with the file type hint, in chunks of 1000: the same packets, the format named.
    proc = subprocess.run([str(driver), str(path), "1000", hint], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{spec}: {proc.stdout[-500:]}{proc.stderr}"
    lines = proc.stdout.splitlines()
    assert f"format {FORMATS[hint]}" in lines, f"{spec}: {lines[:3]}"
    c_packets = [tuple(int(x) for x in l.split()[1:4]) for l in lines if l.startswith("packet ")]
    assert c_packets == got, f"{spec}: the C API's packets differ from mk-stream's"


def test_a_wrong_hint_is_overridden(shared_media, driver):
    """A FLAC file with an MP3 hint is read as FLAC (the bytes decide, as Apple's)."""
    path = shared_media / "breadth/flac_tinytag_a3f1bf_flac1sMono.flac"
    want, _, _ = _ffprobe(path)
    proc = subprocess.run([str(driver), str(path), "777", "mp3"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout[-500:]
    assert "format flac" in proc.stdout.splitlines()
    assert [int(l.split()[2]) for l in proc.stdout.splitlines() if l.startswith("packet ")] == [s for _, s, _ in want]


def test_moov_at_the_end_is_refused_with_a_reason(shared_media, driver):
    """An M4A whose moov follows its mdat cannot be read front to back: an error that says so."""
    path = shared_media / "m4a_aac_8k_mono.m4a"
    proc = subprocess.run([str(driver), str(path), "512", "m4a"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stdout
    error = next(l for l in proc.stdout.splitlines() if l.startswith("error "))
    assert "moov" in error and "unsupported" in error.lower(), error
    assert not any(l.startswith("packet ") for l in proc.stdout.splitlines())
