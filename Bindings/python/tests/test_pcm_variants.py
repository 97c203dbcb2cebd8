"""mediakit.AudioConverter's 0.3 sample formats (big-endian, "s8", 24 in 32, planar forms)
against ffmpeg: s16 stereo converted to each equals `ffmpeg -f s16le -i IN -f FMT -`; numpy
arrays come out in the format's own dtype (">i2" for s16be ...) and go back losslessly."""
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import mediakit

# Our name, ffmpeg's raw format, numpy's dtype of the output.
CASES = [("s8", "s8", "i1"), ("s16be", "s16be", ">i2"), ("s32be", "s32be", ">i4"), ("f32be", "f32be", ">f4"),
         ("f64be", "f64be", ">f8"), ("s24be", "s24be", "u1"), ("s24in32hi", "s32le", "<i4")]


@pytest.fixture(scope="module")
def s16() -> np.ndarray:
    return np.random.default_rng(4).integers(-32768, 32768, (2400, 2)).astype("<i2")


def _ffmpeg(s16: np.ndarray, fmt: str) -> bytes:
    if shutil.which("ffmpeg") is None:
        pytest.fail("ffmpeg is needed as the oracle")
    proc = subprocess.run(["ffmpeg", "-v", "error", "-f", "s16le", "-ar", "48000", "-ac", "2", "-i", "-", "-f", fmt, "-"],
                          input=s16.tobytes(), capture_output=True, check=True)
    return proc.stdout


@pytest.mark.parametrize("name,fmt,dtype", CASES)
def test_variants_equal_ffmpegs_bytes_interleaved_and_planar(name: str, fmt: str, dtype: str, s16: np.ndarray) -> None:
    ref = _ffmpeg(s16, fmt)
    conv = mediakit.AudioConverter("s16", 48000, "stereo", name, 48000, "stereo")
    first = conv.convert(s16)
    assert conv.output_format == (name, 48000, 2)
    assert first.dtype == np.dtype(dtype)
    # numpy's concatenate gives native byte order: back to the format's dtype for the bytes.
    out = np.concatenate([first, conv.flush()]).astype(dtype)
    assert out.tobytes() == ref
    planar = mediakit.AudioConverter("s16", 48000, "stereo", name + "p", 48000, "stereo")
    planes = np.concatenate([planar.convert(s16), planar.flush()], axis=1).astype(dtype)
    assert planar.output_format == (name + "p", 48000, 2)
    width = len(ref) // s16.size
    per_channel = np.frombuffer(ref, dtype="u1").reshape(-1, 2, width).transpose(1, 0, 2).reshape(2, -1)
    assert planes.view("u1").reshape(2, -1).tobytes() == per_channel.tobytes()
    # Back to s16 (an array in native byte order is taken as well: numpy's concatenate gives one).
    back = mediakit.AudioConverter(name + "p", 48000, "stereo", "s16", 48000, "stereo")
    expected = s16 if width > 1 else (s16 >> 8) << 8          # s8 keeps the top 8 bits
    assert np.array_equal(np.concatenate([back.convert(planes), back.flush()]), expected)
    if width > 1 and width != 3:
        back.reset()
        assert np.array_equal(back.convert(planes.astype(planes.dtype.newbyteorder("="))), expected)


def test_24_in_32_low_is_ffmpegs_s24_sign_extended(s16: np.ndarray) -> None:
    raw = np.frombuffer(_ffmpeg(s16, "s24le"), dtype="u1").reshape(-1, 3).astype(np.int64)
    v = raw[:, 0] | (raw[:, 1] << 8) | (raw[:, 2] << 16)
    ref = np.where(v >= 1 << 23, v - (1 << 24), v).reshape(-1, 2)
    conv = mediakit.AudioConverter("s16", 48000, "stereo", "s24in32lo", 48000, "stereo")
    out = np.concatenate([conv.convert(s16), conv.flush()])
    assert out.dtype == np.dtype("<i4") and np.array_equal(out, ref)


def test_unknown_variant_names_raise() -> None:
    with pytest.raises(ValueError, match="s16be"):
        mediakit.AudioConverter("s16", 48000, "stereo", "s16xe", 48000, "stereo")


def test_decode_writes_an_aiffs_big_endian_samples_as_ffmpeg(tmp_path: Path) -> None:
    """mediakit.decode(sample_format="s24be") on a 24-bit AIFF writes `ffmpeg -i X -f s24be -`."""
    aiff = tmp_path / "in.aiff"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "anoisesrc=duration=0.2:sample_rate=44100:seed=9",
                    "-ac", "2", "-c:a", "pcm_s24be", str(aiff)], check=True, capture_output=True)
    ref = subprocess.run(["ffmpeg", "-v", "error", "-i", str(aiff), "-f", "s24be", "-"], check=True, capture_output=True).stdout
    out = tmp_path / "out.s24be"
    mediakit.decode(aiff, audio_out=out, sample_format="s24be")
    assert len(ref) > 10_000 and out.read_bytes() == ref
    with pytest.raises(mediakit.MediaError, match="WAV holds little-endian"):
        mediakit.decode(aiff, audio_out=tmp_path / "out.wav", sample_format="s24be", wav=True)


def test_frame_and_registry_names_of_the_codes_are_the_converters() -> None:
    """Frame.format and the registry's sample_formats name codes 11-28 (a plugin's frames or
    lists) as the converter names them: FFmpeg's raw-format names, "p" for planar."""
    from mediakit._audio import _code_name
    from mediakit._common import _SAMPLE_FORMATS

    for code in range(11, 29):
        assert _SAMPLE_FORMATS[code] == _code_name(code)
    assert _SAMPLE_FORMATS[16] == "s16bep" and _SAMPLE_FORMATS[27] == "s24in32lo"
