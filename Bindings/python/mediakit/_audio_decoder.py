"""``AudioDecoder``: an audio track as float32 samples (channels, samples), whole or by time
range, gapless and sample-exact (torchcodec's ``AudioDecoder``)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ._common import Array

from ._common import Layout, PathLike, _Closing, _closed
from ._demux import Demuxer
from ._audio import AudioConverter
from ._video import _numpy

#: The most frames one array holds before another is started (below the C call's int32 count).
_CHUNK = 1 << 22


@dataclass(frozen=True)
class AudioSamples:
    """Samples with their place on the timeline (torchcodec's AudioSamples): ``data`` is float32
    (channels, samples); ``pts_seconds`` the time of its first sample (seconds from the track's
    first presented sample), ``duration_seconds`` its length, ``sample_rate`` its rate."""
    data: "Array"
    pts_seconds: float
    duration_seconds: float
    sample_rate: int


class AudioDecoder(_Closing):
    """One audio track as float32 in [-1, 1], (channels, samples) (torchcodec's
    ``AudioDecoder``; PyAV: ``container.decode(audio=0)`` + ``frame.to_ndarray()``).

    ``AudioDecoder(path, stream_index=None, sample_rate=None, layout=None)``: the decoded track
    resampled to ``sample_rate`` and mixed to ``layout`` (a name such as "mono", "stereo",
    "5.1" or a channel count, mixed as ``ffmpeg -ac`` mixes) when given; the decoder's trims
    (the edit list, the encoder's priming and padding) applied, so sample 0 is the first sample
    the file presents and the last is its last (gapless). ``threads``: the decoder's threads (0:
    as many as ``mediakit.set_threads`` allows; 1 for many short files: a 1 s FLAC file costs
    ~0.5 ms less without the start and join of libavcodec's frame threads).

    ``get_all_samples()`` and ``get_samples_played_in_range(start_seconds, stop_seconds)``: the
    samples from ``round(start * rate)`` up to ``round(stop * rate)`` (the end by default), exact
    to the sample. A range is decoded from the start of the track up to its end (no seek: a
    range late in a long file costs the decoding before it, not the memory: only the range's
    samples are kept).
    """

    def __init__(self, source: PathLike, *, stream_index: Optional[int] = None, sample_rate: Optional[int] = None,
                 layout: Optional[Layout] = None, quality: str = "medium", threads: int = 0):
        if sample_rate is not None and not 0 < sample_rate <= 768_000:
            raise ValueError(f"sample_rate is 1 to 768000, not {sample_rate}")
        if threads < 0:
            raise ValueError(f"threads is 0 (as many as allowed) or a count, not {threads}")
        self._demuxer: Optional[Demuxer] = Demuxer(source)
        try:
            track = self._demuxer._track_of_type("audio", stream_index)
        except BaseException:
            self.close()
            raise
        self._track = track
        self._rate = sample_rate
        self._layout = layout
        self._quality = quality
        self._threads = threads
        self._read = False
        #: The track decoded.
        self.stream_index: int = track.index

    def _decode(self, start_seconds: float, stop_seconds: Optional[float]) -> tuple[Any, int, int]:
        """Samples [round(start * rate), round(stop * rate)) of the converted track (stop None: to
        the end), the rate and the first sample's index. One C call decodes many packets
        (mk_audio_converter_fill_demuxer), into the array returned when its length was foreseen."""
        np = _numpy()
        if self._demuxer is None:
            raise _closed("audio decoder")
        if self._read:
            self._demuxer.seek(0)
        self._read = True
        conv = AudioConverter.for_track(self._track, "f32p", self._rate, self._layout, quality=self._quality,
                                         threads=self._threads)
        try:
            conv._fill_demuxer(None, 0)                 # up to the first frame: the output format
            fmt = conv.output_format
            rate = fmt[1] if fmt else (self._rate or self._track.sample_rate)
            channels = fmt[2] if fmt else 0
            first = round(start_seconds * rate) if rate else 0
            stop = None if stop_seconds is None or not rate else round(stop_seconds * rate)
            if fmt is None or (stop is not None and stop <= first):
                return np.zeros((channels, 0), dtype=np.float32), rate, first
            if first:
                conv.skip_track(first)
            # An array as long as the range (to the end: as the track's duration says), at most
            # _CHUNK frames; more follow while the range goes on.
            left = None if stop is None else stop - first
            want = min(left if left is not None else max(round(self._track.duration_seconds * rate) - first, 1), _CHUNK)
            parts: list[Any] = []
            while want > 0:
                out = np.empty((channels, want), dtype=np.float32)
                row = want * out.itemsize
                ptrs = (ctypes.c_void_p * channels)(*[out.ctypes.data + c * row for c in range(channels)])
                got = conv._fill_demuxer(ptrs, want)
                if got:
                    parts.append(out if got == want else out[:, :got])
                if got < want:
                    break
                if left is not None:
                    left -= got
                want = min(_CHUNK, left) if left is not None else _CHUNK
        finally:
            conv.close()
        if len(parts) == 1 and parts[0].flags.c_contiguous:
            return parts[0], rate, first
        data = np.concatenate(parts, axis=1) if parts else np.zeros((channels, 0), dtype=np.float32)
        return np.ascontiguousarray(data), rate, first

    def get_all_samples(self) -> AudioSamples:
        """Every sample of the track."""
        return self.get_samples_played_in_range(0.0, None)

    def get_samples_played_in_range(self, start_seconds: float = 0.0, stop_seconds: Optional[float] = None) -> AudioSamples:
        """The samples played from ``start_seconds`` up to ``stop_seconds`` (the end when None):
        sample ``round(start * rate)`` to ``round(stop * rate)`` exclusive, fewer where the track
        ends first."""
        if start_seconds < 0 or (stop_seconds is not None and stop_seconds < start_seconds):
            raise ValueError(f"the range is [{start_seconds}, {stop_seconds}): start at 0 or later, stop at start or later")
        data, rate, first = self._decode(start_seconds, stop_seconds)
        return AudioSamples(data=data, pts_seconds=first / rate if rate else 0.0,
                            duration_seconds=data.shape[1] / rate if rate else 0.0, sample_rate=rate)

    def close(self) -> None:
        """Closes the file (also done by ``with``); closing twice is fine."""
        if self._demuxer is not None:
            self._demuxer.close()
            self._demuxer = None

    @property
    def closed(self) -> bool:
        return self._demuxer is None

    def __repr__(self) -> str:
        return f"<mediakit.AudioDecoder track {self.stream_index} ({self._track.codec}){' closed' if self.closed else ''}>"
