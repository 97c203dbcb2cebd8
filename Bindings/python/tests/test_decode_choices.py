"""mediakit.decode's mk-decode choices through mk_decode_settings (C 0.2 fields; Swift
FileDecodeOptions): seek, frame and duration limits, sample type, channels and rate.

Oracles (ORACLES.md: ffmpeg):
  video   `ffmpeg -ss T -i F -map 0:v:0 -fps_mode passthrough -frames:v N -f rawvideo -pix_fmt nv12 -`:
          byte-identical (sample-accurate seek, as ffmpeg's -ss before -i).
  audio   `ffmpeg -i F -map 0:a:0 -ac 1 -f s32le -` (mixed as ffmpeg -ac mixes): the first
          round(D * rate) frames, each within 64 of 2^31 (float rounding); and (cut as FFmpeg 5.1 cuts,
          trim="ffmpeg") the length ffmpeg's
          `-ar 22050` resampling gives for the whole track.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

import mediakit


def ffmpeg(path: Path, *args: str, before: tuple[str, ...] = ()) -> bytes:
    return subprocess.run(["ffmpeg", "-v", "error", *before, "-i", str(path), *args, "-"], check=True,
                          capture_output=True).stdout


@pytest.mark.parametrize("async_video", [False, True])
def test_seek_and_max_video_frames_equal_ffmpeg_ss(sample: Path, tmp_path: Path, async_video: bool) -> None:
    out = tmp_path / "v.nv12"
    mediakit.decode(sample, video_out=out, seek=1.5, max_video_frames=5, async_video=async_video)
    ref = ffmpeg(sample, "-map", "0:v:0", "-fps_mode", "passthrough", "-frames:v", "5", "-f", "rawvideo",
                 "-pix_fmt", "nv12", before=("-ss", "1.5"))
    assert len(ref) > 0 and out.read_bytes() == ref


def test_mono_s32_and_max_audio_seconds_equal_ffmpeg(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "a.pcm"
    mediakit.decode(sample, audio_out=out, sample_format="s32", channels="mono", max_audio_seconds=1.0)
    with mediakit.open(sample) as demuxer:
        rate = demuxer.streams.audio[0].sample_rate
    ours = np.frombuffer(out.read_bytes(), dtype="<i4").astype(np.int64)
    assert len(ours) == round(1.0 * rate), f"{len(ours)} frames for 1 s at {rate} Hz"
    ref = np.frombuffer(ffmpeg(sample, "-map", "0:a:0", "-ac", "1", "-f", "s32le"), dtype="<i4").astype(np.int64)[:len(ours)]
    # Both mix in float and round to s32; the float decoders' last bits differ (measured: 16 of 2^31).
    assert np.abs(ours - ref).max() <= 64, "the mono mix differs from ffmpeg -ac 1"


def test_sample_rate_gives_ffmpeg_resampled_length(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.pcm"
    mediakit.decode(sample, audio_out=out, sample_rate=22050, resample_quality="high", trim="ffmpeg")
    ref = ffmpeg(sample, "-map", "0:a:0", "-ar", "22050", "-f", "s16le")
    assert len(out.read_bytes()) == len(ref)


def test_bad_choices_are_refused(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.pcm"
    with pytest.raises(mediakit.InvalidArgumentError, match="planar"):
        mediakit.decode(sample, audio_out=out, sample_format="s16p")
    with pytest.raises(mediakit.InvalidArgumentError, match="max_video_frames"):
        mediakit.decode(sample, video_out=out, max_video_frames=-2)
    with pytest.raises(mediakit.InvalidArgumentError, match="max_audio_seconds"):
        mediakit.decode(sample, audio_out=out, max_audio_seconds=float("inf"))
    assert not out.exists()
