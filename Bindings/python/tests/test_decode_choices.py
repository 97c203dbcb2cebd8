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


# Output pixel formats through mk_decode_settings (0.3: any picture layout, full_range; issue 35 item 9).

@pytest.fixture(scope="module")
def full_range_h264(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A full-range H.264 file (the shared media has none): libx264 from yuvj420p, flagged pc."""
    out = tmp_path_factory.mktemp("range") / "full.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=176x144:rate=25", "-frames:v", "6",
                    "-vf", "scale=out_range=full", "-pix_fmt", "yuvj420p", "-c:v", "libx264", "-color_range", "pc", str(out)],
                   check=True)
    return out


@pytest.mark.parametrize("pixel_format,pix_fmt", [("nv12", "nv12"), ("i420", "yuv420p")])
def test_full_range_equals_ffmpeg_out_range_full(full_range_h264: Path, tmp_path: Path, pixel_format: str, pix_fmt: str) -> None:
    full, limited = tmp_path / "full.yuv", tmp_path / "limited.yuv"
    mediakit.decode(full_range_h264, video_out=full, pixel_format=pixel_format, full_range=True)
    mediakit.decode(full_range_h264, video_out=limited, pixel_format=pixel_format)
    ref_full = ffmpeg(full_range_h264, "-map", "0:v:0", "-vf", "scale=in_range=full:out_range=full", "-pix_fmt", pix_fmt,
                      "-f", "rawvideo")
    ref_limited = ffmpeg(full_range_h264, "-map", "0:v:0", "-pix_fmt", pix_fmt, "-f", "rawvideo")
    assert len(ref_full) == 6 * 176 * 144 * 3 // 2 and ref_full != ref_limited
    assert full.read_bytes() == ref_full, "full_range=True differs from ffmpeg's full-range output"
    assert limited.read_bytes() == ref_limited, "the default (limited) output differs from ffmpeg -pix_fmt"


def test_full_range_is_not_read_from_a_0_2_struct(full_range_h264: Path, tmp_path: Path) -> None:
    """A 0.2 caller's mk_decode_settings ends where full_range now is (its tail padding, maybe
    uninitialised): with that struct_size the field is ignored and the output is limited range."""
    import ctypes
    from mediakit import _ffi
    s = _ffi.DecodeSettings()
    mediakit.lib.mk_decode_default_settings(ctypes.byref(s))
    s.struct_size = _ffi.DecodeSettings.reserved.offset   # the 0.2 size, without its padding
    s.reserved, s.full_range = -1, 1
    out = tmp_path / "old.nv12"
    mediakit.lib.mk_decode_file(str(full_range_h264).encode(), None, str(out).encode(), ctypes.byref(s))
    assert out.read_bytes() == ffmpeg(full_range_h264, "-map", "0:v:0", "-pix_fmt", "nv12", "-f", "rawvideo")


@pytest.mark.parametrize("name,frames", [("mp4_h264_aac_moov_at_start_ctts_8s.mp4", 4),
                                         ("mp4_av1_10bit_hdr10_aac_720x1280.mp4", 2)])
@pytest.mark.parametrize("pixel_format", ["bgra", "p010le"])
def test_bgra_and_p010_equal_ffmpeg(shared_media: Path, tmp_path: Path, name: str, frames: int, pixel_format: str) -> None:
    path = shared_media / name
    out = tmp_path / f"v.{pixel_format}"
    mediakit.decode(path, video_out=out, pixel_format=pixel_format, max_video_frames=frames)
    ref = ffmpeg(path, "-map", "0:v:0", "-fps_mode", "passthrough", "-frames:v", str(frames), "-pix_fmt", pixel_format,
                 "-f", "rawvideo")
    assert len(ref) > 0 and out.read_bytes() == ref, f"{pixel_format} differs from ffmpeg -pix_fmt {pixel_format}"
    if pixel_format == "p010le":
        # Frame.to_numpy("p010le"): the same bytes, as (rows, width) uint16.
        with mediakit.open(path) as demuxer:
            frame = next(iter(mediakit.DecodeSession(demuxer.streams.video[0]).frames(demuxer.packets(demuxer.streams.video[0]))))
            arr = frame.to_numpy("p010le")
        assert arr.dtype == np.dtype("<u2") and arr.shape == (frame.height * 3 // 2, frame.width)
        assert arr.tobytes() == ref[:arr.nbytes]


def test_an_audio_layout_is_not_a_pixel_format(sample: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="pixel_format"):
        mediakit.decode(sample, video_out=tmp_path / "x", pixel_format="s16")
