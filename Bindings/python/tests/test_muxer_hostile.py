"""The C muxer API (mk_muxer_*, through mediakit.Muxer) handed values a caller can give (issue 28):
negative and huge durations, timestamps beyond 32 bits and near the 64-bit limits, dts going
backwards, empty packets, encoder delay and padding beyond the track (the trims become an MP4 edit
list at mk_muxer_finish). Each run must end in a MediaKitError with a message, or in a file that
ffprobe reads (exit 0, no error, one stream); a trap would kill the interpreter.
"""
import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest

import mediakit

pytestmark = pytest.mark.skipif(shutil.which("ffprobe") is None, reason="ffprobe is not installed")

OPUS_HEAD = b"OpusHead" + bytes([1, 2, 0x38, 0x01, 0x80, 0xBB, 0, 0, 0, 0, 0])


def _params(ogg: bool, extra: dict[str, int]) -> mediakit.CodecParameters:
    """Stereo AAC at 44.1 kHz (Opus at 48 kHz for Ogg), with the case's delay and padding."""
    codec, extradata, rate = ("opus", OPUS_HEAD, 48000) if ogg else ("aac", bytes([0x12, 0x10]), 44100)
    return mediakit.CodecParameters(codec=codec, media_type="audio", extradata=extradata, sample_rate=rate, channels=2,
                                    time_base=Fraction(1, rate), encoder_delay=extra.get("encoder_delay", 0),
                                    encoder_padding=extra.get("encoder_padding", 0))

STEP = 1024
NORMAL = [i * STEP for i in range(4)]

# name -> (track parameters beyond the codec's, [(pts, dts, duration, size)])
CASES = {
    "negative duration": ({}, [(t, t, -5000, 200) for t in NORMAL]),
    "duration of 2^62": ({}, [(t, t, 1 << 62, 200) for t in NORMAL]),
    "duration beyond 32 bits": ({}, [(t, t, 1 << 33, 200) for t in NORMAL]),
    "timestamps beyond 32 bits": ({}, [(t + (1 << 33), t + (1 << 33), 0, 200) for t in NORMAL]),
    "timestamps near 2^63": ({}, [((1 << 63) - 10_000 + t, (1 << 63) - 10_000 + t, 0, 200) for t in NORMAL]),
    "timestamps near -2^63": ({}, [(-(1 << 63) + 1 + t, -(1 << 63) + 1 + t, 0, 200) for t in NORMAL]),
    "a gap beyond 32 bits": ({}, [(0, 0, 0, 200), (1 << 40, 1 << 40, 0, 200)]),
    "dts going backwards": ({}, [(0, 0, 0, 200), (2 * STEP, 2 * STEP, 0, 200), (STEP, STEP, 0, 200)]),
    "empty packets": ({}, [(t, t, 0, 0) for t in NORMAL]),
    "pts far from dts": ({}, [(1 << 40, 0, 0, 100), (-(1 << 40), STEP, 0, 100)]),
    "delay and padding beyond the track": ({"encoder_delay": 1105, "encoder_padding": 4000}, [(t, t, 0, 200) for t in NORMAL]),
    "delay of 2^31-1": ({"encoder_delay": (1 << 31) - 1, "encoder_padding": 0}, [(t, t, 0, 200) for t in NORMAL]),
    "padding of 2^31-1": ({"encoder_delay": 0, "encoder_padding": (1 << 31) - 1}, [(t, t, 0, 200) for t in NORMAL]),
}


def _ffprobe_problem(path: Path) -> str | None:
    proc = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=index", "-of", "csv=p=0", str(path)],
                          capture_output=True, text=True)
    if proc.returncode != 0 or proc.stdout.split() != ["0"]:
        return f"ffprobe exit {proc.returncode}, streams {proc.stdout.split()}: {proc.stderr.strip()}"
    return None


@pytest.mark.parametrize("layout", ["progressive", "fragment", "mkv", "ogg"])
@pytest.mark.parametrize("case", list(CASES))
def test_c_muxer_answers_hostile_values_with_an_error_or_a_readable_file(tmp_path: Path, layout: str, case: str) -> None:
    extra, packets = CASES[case]
    out = tmp_path / ("out.ogg" if layout == "ogg" else "out.mkv" if layout == "mkv" else "out.mp4")
    fill = 0x55
    try:
        with mediakit.Muxer(out, fragment=0.5 if layout == "fragment" else None) as mux:
            track = mux.add_track(_params(layout == "ogg", extra))
            for pts, dts, duration, size in packets:
                data = (bytes([0xFC]) + bytes([fill]) * (size - 1)) if size else b""
                mux.write(track, data, pts=pts, dts=dts, duration=duration, is_keyframe=True)
    except mediakit.MediaKitError as e:
        assert str(e).strip(), "an error without a message"
        assert not out.exists(), f"{e} but {out} exists"
        return
    problem = _ffprobe_problem(out)
    assert problem is None, problem
