"""mediakit.samplers (torchcodec.samplers' clip samplers) against ffmpeg and ffprobe: every clip's
frames are the ones ffprobe lists at the indices (or, by time, the frames on screen at the
times: the last whose pts is at or before each, from `ffprobe -show_frames`) that torchcodec's
rules give, and their pictures are `ffmpeg -vf select=...` 's, bit-exact. By time on a variable
frame rate file (63 frames, pts gaps from 5 ms to 0.5 s), scaled as `scale=W:H:flags=bicubic`."""
from __future__ import annotations

import bisect
import random
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
import mediakit  # noqa: E402
from mediakit import samplers  # noqa: E402
from test_video_decoder import ffmpeg_frames, ffprobe_frames  # noqa: E402

CTTS = "mp4_h264_aac_moov_at_start_ctts_8s.mp4"          # H.264 with B-frames, 640x360, 25 fps
VFR = "mp4_h264_vfr_odd_size_3026x1386_no_elst.mp4"      # variable frame rate


pytestmark = pytest.mark.usefixtures("oracle_tools")   # ffmpeg / ffprobe missing: a failure, not a skip

def check_pictures(batch: Any, path: Path, indices: list[list[int]], width: int, height: int, scale: str = "") -> None:
    """The clips' pictures are ffmpeg's frames at `indices` (one list per clip)."""
    flat = [i for clip in indices for i in clip]
    ref = ffmpeg_frames(path, flat, "rgb24", 3, width, height, scale=scale)
    assert batch.data.shape == (len(indices), len(indices[0]), height, width, 3)
    for c, clip in enumerate(indices):
        for k, i in enumerate(clip):
            assert np.array_equal(batch.data[c, k], ref[i]), f"{path.name}: clip {c} frame {k} (index {i}) is not ffmpeg's"


def test_index_clips_are_ffmpegs_frames(shared_media: Path) -> None:
    path = shared_media / CTTS
    times, _ = ffprobe_frames(path)
    n = len(times)
    with mediakit.VideoDecoder(path) as dec:
        w, h = dec.metadata.width, dec.metadata.height
        # Random: 3 clips of 4 frames 2 apart; each clip is 4 frames of ffprobe's list 2 apart, its
        # start where a whole clip fits ([0, n - 7 + 1)); the same seed draws the same clips.
        batch = samplers.clips_at_random_indices(dec, num_clips=3, num_frames_per_clip=4, num_indices_between_frames=2, seed=7)
        again = samplers.clips_at_random_indices(dec, num_clips=3, num_frames_per_clip=4, num_indices_between_frames=2,
                                                 seed=random.Random(7))
        assert np.array_equal(batch.pts_seconds, again.pts_seconds)
        starts = [bisect.bisect_left(times, float(clip[0]) - 1e-6) for clip in batch.pts_seconds]
        indices = [[s + 2 * k for k in range(4)] for s in starts]
        for s, clip, row in zip(starts, indices, batch.pts_seconds):
            assert 0 <= s < n - 6
            assert row == pytest.approx([times[i] for i in clip], abs=1e-6)
        # Regular: torchcodec's starts, linspace(0, n - span, 4) rounded down (span 3: 3 frames 1 apart).
        regular = samplers.clips_at_regular_indices(dec, num_clips=4, num_frames_per_clip=3)
        last = n - 3
        regular_indices = [[last * k // 3 + j for j in range(3)] for k in range(4)]
        for clip, row in zip(regular_indices, regular.pts_seconds):
            assert row == pytest.approx([times[i] for i in clip], abs=1e-6)
        # Past the end: repeat_last repeats, wrap starts over, error raises.
        tail = samplers.clips_at_regular_indices(dec, num_frames_per_clip=3, num_indices_between_frames=5,
                                                 sampling_range_start=n - 6, sampling_range_end=n - 5)
        assert tail.pts_seconds[0] == pytest.approx([times[n - 6], times[n - 1], times[n - 1]], abs=1e-6)
        wrap = samplers.clips_at_regular_indices(dec, num_frames_per_clip=3, num_indices_between_frames=5, policy="wrap",
                                                 sampling_range_start=n - 6, sampling_range_end=n - 5)
        assert wrap.pts_seconds[0] == pytest.approx([times[n - 6], times[n - 1], times[n - 6]], abs=1e-6)
        with pytest.raises(ValueError, match="policy='error'"):
            samplers.clips_at_regular_indices(dec, num_frames_per_clip=3, num_indices_between_frames=5, policy="error",
                                              sampling_range_start=n - 6, sampling_range_end=n - 5)
        with pytest.raises(ValueError, match="clips of"):
            samplers.clips_at_random_indices(dec, num_frames_per_clip=4, sampling_range_start=n - 2)
    check_pictures(batch, path, indices, w, h)
    check_pictures(regular, path, regular_indices, w, h)


def test_time_clips_on_a_variable_frame_rate_file(shared_media: Path) -> None:
    """By time, not by index: each clip frame is the one on screen at its time."""
    path = shared_media / VFR
    times, _ = ffprobe_frames(path)
    w, h = 378, 172
    with mediakit.VideoDecoder(path, width=w, height=h) as dec:
        end = dec.metadata.end_stream_seconds
        batch = samplers.clips_at_regular_timestamps(dec, seconds_between_clip_starts=0.4, num_frames_per_clip=3,
                                                     seconds_between_frames=0.1, sampling_range_start=1.0,
                                                     sampling_range_end=2.1)
        rand = samplers.clips_at_random_timestamps(dec, num_clips=2, num_frames_per_clip=2, seconds_between_frames=0.25, seed=3)
    starts = [1.0, 1.4, 1.8]
    indices = [[bisect.bisect_right(times, s + 0.1 * k) - 1 for k in range(3)] for s in starts]
    assert batch.pts_seconds.shape == (3, 3)
    for clip, row in zip(indices, batch.pts_seconds):
        assert row == pytest.approx([times[i] for i in clip], abs=1e-6)
    # The first clip's times (1.0, 1.1, 1.2 s) fall in a 1.1 s gap after the first frame: by time
    # it is the first frame twice, then the one at 1.18 s (by index it would be three frames).
    assert indices[0][0] == indices[0][1] == 0 and indices[0][2] > 0
    for row in rand.pts_seconds:
        assert times[0] <= row[0] < end - 0.25 and row[1] >= row[0]
    check_pictures(batch, path, indices, w, h, scale=f"scale={w}:{h}:flags=bicubic")
