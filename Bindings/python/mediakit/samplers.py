"""Clip samplers for training (torchcodec.samplers' names and rules): clips of frames at regular or
random frame indices or presentation times, from one ``VideoDecoder``, decoded as one batch (each
group of pictures once for all the clips)."""

from __future__ import annotations

import bisect
import math
import random
from typing import TYPE_CHECKING, Optional, Sequence, TypeVar, Union

from ._video import FrameBatch, VideoDecoder

if TYPE_CHECKING:
    from ._common import Array

#: What a clip does with frames past the end of the range it may use (torchcodec's policies):
#: "repeat_last" repeats its last frame, "wrap" starts over from its first, "error" raises.
POLICIES = ("repeat_last", "wrap", "error")

_T = TypeVar("_T", int, float)


def _complete(values: list[_T], count: int, policy: str) -> list[_T]:
    """A clip's frames (indices or times) that ran out before `count`, completed by the policy."""
    if len(values) >= count:
        return values
    if policy == "error":
        raise ValueError(f"a clip would need {count} frames but the video has only {len(values)} from its start "
                         f"(policy='error'; 'repeat_last' or 'wrap' complete it)")
    if policy == "wrap":
        return [values[i % len(values)] for i in range(count)]
    return values + [values[-1]] * (count - len(values))


def _rng(seed: Union[int, random.Random, None]) -> random.Random:
    return seed if isinstance(seed, random.Random) else random.Random(seed)


def _check_common(decoder: VideoDecoder, num_clips: Optional[int], num_frames_per_clip: int, policy: str) -> None:
    if len(decoder) < 1:
        raise ValueError("the video has no frames to sample")
    if num_clips is not None and num_clips <= 0:
        raise ValueError(f"num_clips must be at least 1, not {num_clips}")
    if num_frames_per_clip <= 0:
        raise ValueError(f"num_frames_per_clip must be at least 1, not {num_frames_per_clip}")
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}: one of {', '.join(POLICIES)}")


def _as_clips(decoder: VideoDecoder, indices: list[int], num_clips: int, per_clip: int) -> FrameBatch:
    """The frames at `indices` (clip after clip) decoded in one batch, shaped (clips, frames, ...)."""
    batch = decoder.get_frames_at(indices)
    data: Array = batch.data.reshape(num_clips, per_clip, *batch.data.shape[1:])
    return FrameBatch(data=data, pts_seconds=batch.pts_seconds.reshape(num_clips, per_clip),
                      duration_seconds=batch.duration_seconds.reshape(num_clips, per_clip))


def _index_range(n: int, span: int, start: int, end: Optional[int]) -> tuple[int, int]:
    """[start, end) of the indices a clip may start at (negative values count from the end; by
    default up to the last start whose clip fits in the video)."""
    if start < 0:
        start += n
    if not 0 <= start < n:
        raise ValueError(f"sampling_range_start {start} is outside the video's {n} frames")
    if end is None:
        end = max(n - span + 1, 1)
    else:
        end = min(end + n if end < 0 else end, n)
    if start >= end:
        raise ValueError(f"sampling_range_start ({start}) must be below sampling_range_end ({end})"
                         + (f": clips of {span} frames need a shorter clip or a longer video" if end == max(n - span + 1, 1) else ""))
    return start, end


def _index_clips(decoder: VideoDecoder, starts: Sequence[int], num_frames_per_clip: int,
                 num_indices_between_frames: int, policy: str) -> FrameBatch:
    n = len(decoder)
    indices: list[int] = []
    for s in starts:
        clip = list(range(s, min(s + num_indices_between_frames * (num_frames_per_clip - 1) + 1, n), num_indices_between_frames))
        indices += _complete(clip, num_frames_per_clip, policy)
    return _as_clips(decoder, indices, len(starts), num_frames_per_clip)


def clips_at_random_indices(decoder: VideoDecoder, *, num_clips: int = 1, num_frames_per_clip: int = 1,
                            num_indices_between_frames: int = 1, sampling_range_start: int = 0,
                            sampling_range_end: Optional[int] = None, policy: str = "repeat_last",
                            seed: Union[int, random.Random, None] = None) -> FrameBatch:
    """``num_clips`` clips starting at random frame indices in [sampling_range_start,
    sampling_range_end) (by default every start whose clip fits), each of ``num_frames_per_clip``
    frames ``num_indices_between_frames`` apart: a FrameBatch with data (clips, frames, H, W, C)
    (or (clips, frames, C, H, W) for NCHW) and pts / durations (clips, frames). ``seed`` (an int
    or a ``random.Random``) makes the draw repeatable. torchcodec: ``clips_at_random_indices``."""
    _check_common(decoder, num_clips, num_frames_per_clip, policy)
    if num_indices_between_frames <= 0:
        raise ValueError(f"num_indices_between_frames must be at least 1, not {num_indices_between_frames}")
    span = num_indices_between_frames * (num_frames_per_clip - 1) + 1
    lo, hi = _index_range(len(decoder), span, sampling_range_start, sampling_range_end)
    rng = _rng(seed)
    return _index_clips(decoder, [rng.randrange(lo, hi) for _ in range(num_clips)], num_frames_per_clip,
                        num_indices_between_frames, policy)


def clips_at_regular_indices(decoder: VideoDecoder, *, num_clips: int = 1, num_frames_per_clip: int = 1,
                             num_indices_between_frames: int = 1, sampling_range_start: int = 0,
                             sampling_range_end: Optional[int] = None, policy: str = "repeat_last") -> FrameBatch:
    """``num_clips`` clips starting at equally spaced frame indices from sampling_range_start to
    sampling_range_end - 1 (both included, rounded down; more clips than starts repeat starts).
    torchcodec: ``clips_at_regular_indices``."""
    _check_common(decoder, num_clips, num_frames_per_clip, policy)
    if num_indices_between_frames <= 0:
        raise ValueError(f"num_indices_between_frames must be at least 1, not {num_indices_between_frames}")
    span = num_indices_between_frames * (num_frames_per_clip - 1) + 1
    lo, hi = _index_range(len(decoder), span, sampling_range_start, sampling_range_end)
    last = hi - 1
    starts = [lo + (last - lo) * k // (num_clips - 1) if num_clips > 1 else lo for k in range(num_clips)]
    return _index_clips(decoder, starts, num_frames_per_clip, num_indices_between_frames, policy)


def _time_range(decoder: VideoDecoder, num_frames_per_clip: int, between: float, start: Optional[float],
                end: Optional[float]) -> tuple[float, float]:
    begin, stop = decoder.metadata.begin_stream_seconds, decoder.metadata.end_stream_seconds
    if start is None:
        start = begin
    elif not begin <= start < stop:
        raise ValueError(f"sampling_range_start {start} s is outside the video's [{begin}, {stop}) s")
    if end is None:
        end = stop - (num_frames_per_clip - 1) * between
    elif end <= begin:
        raise ValueError(f"sampling_range_end {end} s is not after the video's start ({begin} s)")
    end = min(end, stop)
    if start >= end:
        raise ValueError(f"sampling_range_start ({start} s) must be before sampling_range_end ({end} s)")
    return start, end


def _time_clips(decoder: VideoDecoder, starts: Sequence[float], num_frames_per_clip: int, between: float,
                policy: str) -> FrameBatch:
    """Each clip's times, completed by the policy, mapped to the frame played at each time (the
    last frame whose pts is at or before it: variable frame rates are sampled by time)."""
    stop = decoder.metadata.end_stream_seconds
    times = decoder._seconds
    indices: list[int] = []
    for s in starts:
        clip = [t for t in (s + i * between for i in range(num_frames_per_clip)) if t < stop]
        for t in _complete(clip, num_frames_per_clip, policy):
            indices.append(max(bisect.bisect_right(times, t) - 1, 0))
    return _as_clips(decoder, indices, len(starts), num_frames_per_clip)


def _between(decoder: VideoDecoder, seconds_between_frames: Optional[float]) -> float:
    if seconds_between_frames is None:
        if not decoder.metadata.average_fps > 0:
            raise ValueError("the video's frame rate is unknown: give seconds_between_frames, or sample by index")
        return 1 / decoder.metadata.average_fps
    if not seconds_between_frames > 0:
        raise ValueError(f"seconds_between_frames must be above 0, not {seconds_between_frames}")
    return float(seconds_between_frames)


def clips_at_random_timestamps(decoder: VideoDecoder, *, num_clips: int = 1, num_frames_per_clip: int = 1,
                               seconds_between_frames: Optional[float] = None,
                               sampling_range_start: Optional[float] = None,
                               sampling_range_end: Optional[float] = None, policy: str = "repeat_last",
                               seed: Union[int, random.Random, None] = None) -> FrameBatch:
    """``num_clips`` clips starting at random presentation times in [sampling_range_start,
    sampling_range_end) (by default the whole stream, less the last clip's length), each the
    frames played at ``num_frames_per_clip`` times ``seconds_between_frames`` apart (by default
    one average frame duration). torchcodec: ``clips_at_random_timestamps``."""
    _check_common(decoder, num_clips, num_frames_per_clip, policy)
    between = _between(decoder, seconds_between_frames)
    lo, hi = _time_range(decoder, num_frames_per_clip, between, sampling_range_start, sampling_range_end)
    rng = _rng(seed)
    return _time_clips(decoder, [lo + rng.random() * (hi - lo) for _ in range(num_clips)], num_frames_per_clip,
                       between, policy)


def clips_at_regular_timestamps(decoder: VideoDecoder, *, seconds_between_clip_starts: float,
                                num_frames_per_clip: int = 1, seconds_between_frames: Optional[float] = None,
                                sampling_range_start: Optional[float] = None,
                                sampling_range_end: Optional[float] = None, policy: str = "repeat_last") -> FrameBatch:
    """Clips starting every ``seconds_between_clip_starts`` from sampling_range_start, before
    sampling_range_end. torchcodec: ``clips_at_regular_timestamps``."""
    _check_common(decoder, None, num_frames_per_clip, policy)
    if not seconds_between_clip_starts > 0:
        raise ValueError(f"seconds_between_clip_starts must be above 0, not {seconds_between_clip_starts}")
    between = _between(decoder, seconds_between_frames)
    lo, hi = _time_range(decoder, num_frames_per_clip, between, sampling_range_start, sampling_range_end)
    count = max(math.ceil((hi - lo) / seconds_between_clip_starts), 1)
    starts = [s for s in (lo + k * seconds_between_clip_starts for k in range(count)) if s < hi]
    return _time_clips(decoder, starts, num_frames_per_clip, between, policy)
