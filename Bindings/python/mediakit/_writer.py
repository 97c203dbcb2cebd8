"""``Writer`` (mk_writer): numpy pictures and PCM encoded into a new movie."""

from __future__ import annotations

import ctypes
from fractions import Fraction
from types import TracebackType
from typing import TYPE_CHECKING, Any, Optional, Union

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    from typing_extensions import Self
    from ._common import Array

from . import _ffi
from ._ffi import lib
from ._common import PathLike, _Owned, _asset_status, _path
from .errors import MediaKitError
from ._audio import _audio_format, _pcm_pointers
from ._encode import _encoder_settings
from ._frame import Frame
from ._venc import Picture, _FORCE_KEYFRAME, _canonical, _frame_handle, _picture_pointers, _pixel_code, _video_settings

_VIDEO_KEYS = {"codec", "width", "height", "fps", "format", "pixel_format", "crf", "qp", "bitrate", "preset", "profile",
               "gop", "bframes", "threads", "time_base"}
_AUDIO_KEYS = {"codec", "sample_rate", "channels", "format", "layout", "bitrate", "quality", "out_sample_rate",
               "out_channels", "complexity", "application", "frame_duration", "backend"}


def _check_keys(what: str, given: dict[str, Any], known: set[str], required: set[str]) -> None:
    unknown = sorted(set(given) - known)
    if unknown:
        raise ValueError(f"unknown {what} setting(s) {', '.join(unknown)}: the settings are {', '.join(sorted(known))}")
    missing = sorted(required - set(given))
    if missing:
        raise ValueError(f"the {what} settings need {', '.join(missing)}")


class Writer(_Owned):
    """Writes pictures and PCM into a new movie, encoding them (C ``mk_writer``, Swift
    ``AssetWriter``: AVAssetWriter with output settings)::

        with mediakit.Writer("out.mp4", video=dict(codec="h264", width=640, height=480, fps=25, crf=23,
                                                   format="rgb24"),
                             audio=dict(codec="aac", sample_rate=48000, channels=2)) as w:
            for rgb in pictures:                     # numpy (480, 640, 3) uint8
                w.write_video(rgb)                   # pts None: the next frame
            w.write_audio(samples)                   # numpy (frames, 2) float32

    The container comes from the extension (.mp4, .mov, .mkv, .webm ...). ``video`` takes
    VideoEncoder's settings (codec, width, height, fps required; format: the pixel format of the
    arrays given, "rgb24", "nv12", "yuv420p" ...; pixel_format, crf, qp, bitrate, preset,
    profile, gop, bframes, threads; time_base: the unit of the pts given, for a variable frame
    rate, default 1 / fps). ``audio`` takes codec, sample_rate and channels (or layout) of the
    PCM given, its sample format ``format`` (default "f32": numpy (frames, channels) float32),
    and Encoder's options (bitrate, quality ...; out_sample_rate / out_channels for the coded
    stream). The tracks are interleaved by time; an MP4 gets the edit lists that present the
    first picture at 0 despite B-frames and cut the audio encoder's priming.

    The file is written under a temporary name and appears under ``path`` when the ``with``
    block ends (``finish()``); an exception inside the block, ``cancel()`` or a failed write
    leave nothing there."""

    _free = staticmethod(lib.mk_writer_close)
    _what = "writer"

    def __init__(self, path: PathLike, *, video: Optional[dict[str, Any]] = None, audio: Optional[dict[str, Any]] = None):
        s = _ffi.WriterSettings()
        lib.mk_writer_default_settings(ctypes.byref(s))
        self._video_format: Optional[str] = None
        self._video_code = 0
        self._size = (0, 0)
        if video is not None:
            v = dict(video)
            _check_keys("video", v, _VIDEO_KEYS, {"codec", "width", "height", "fps"})
            fmt = str(v.pop("format", "yuv420p"))
            self._video_code = _pixel_code(fmt)
            self._video_format = _canonical(fmt)
            self._size = (int(v["width"]), int(v["height"]))
            vs = _video_settings(str(v["codec"]), self._size[0], self._size[1], v["fps"], v.get("pixel_format"), v.get("crf"),
                                 v.get("qp"), v.get("bitrate"), v.get("preset"), v.get("profile"), v.get("gop"),
                                 v.get("bframes"), int(v.get("threads", 0)),
                                 Fraction(v["time_base"]) if v.get("time_base") is not None else None)
            s.video = ctypes.pointer(vs)
        self._audio_format: Optional[str] = None
        self._channels = 0
        if audio is not None:
            a = dict(audio)
            _check_keys("audio", a, _AUDIO_KEYS, {"codec", "sample_rate"})
            layout = a.get("layout", a.get("channels"))
            if layout is None:
                raise ValueError("the audio settings need channels (or layout)")
            self._audio_format = str(a.get("format", "f32"))
            pcm = _audio_format(self._audio_format, int(a["sample_rate"]), layout)
            self._channels = int(pcm.channels)
            es = _encoder_settings(str(a["codec"]), a.get("bitrate"), a.get("quality"), a.get("out_sample_rate"),
                                   a.get("out_channels"), a.get("complexity"), a.get("application"), a.get("frame_duration"),
                                   a.get("backend"))
            s.audio = ctypes.pointer(es)
            s.audio_input = ctypes.pointer(pcm)
        h = ctypes.c_void_p()
        lib.mk_writer_open(ctypes.byref(h), _path(path), ctypes.byref(s))
        super().__init__(h)
        #: The path the file appears under on finish().
        self.path: str = str(path)

    def write_video(self, picture: Union[Picture, Frame], pts: Optional[int] = None, *, keyframe: bool = False) -> None:
        """Encodes and writes one picture: a numpy array (or bytes) in the video ``format`` at the
        video size, packed as ``ffmpeg -f rawvideo`` writes it, or one 2-D array per plane; or a
        decoded ``Frame`` (any format and size: converted; at its own pts). ``pts`` is in the
        video time base (default 1 / fps); None: the previous picture's plus one frame (with a
        ``time_base`` of its own, one tick of it: give every picture its pts)."""
        if self._video_format is None:
            raise ValueError("the writer has no video track")
        flags = _FORCE_KEYFRAME if keyframe else 0
        if isinstance(picture, Frame):
            lib.mk_writer_write_video_frame(self._handle(), _frame_handle(picture, pts), flags)
            return
        ptrs, strides, keep = _picture_pointers(picture, self._video_format, self._size[0], self._size[1])
        lib.mk_writer_write_video_planes(self._handle(), self._video_code, ptrs, strides,
                                         _ffi.NOPTS_VALUE if pts is None else int(pts), flags)
        del keep

    def write_audio(self, samples: Union["Array", bytes, bytearray, memoryview]) -> None:
        """Encodes and writes PCM in the audio ``format`` (numpy (frames, channels) interleaved, or
        (channels, frames) for a planar format; or bytes of interleaved samples)."""
        if self._audio_format is None:
            raise ValueError("the writer has no audio track")
        ptrs, frames, keep = _pcm_pointers(samples, self._audio_format, self._channels, convert=True)
        lib.mk_writer_write_audio(self._handle(), ptrs, frames)
        del keep

    def finish(self) -> None:
        """Flushes the encoders, writes the rest and gives the file its name."""
        lib.mk_writer_finish(self._handle())

    def cancel(self) -> None:
        """Stops and removes what was written."""
        lib.mk_writer_cancel(self._handle())

    @property
    def status(self) -> str:
        """Where writing stands, as AVAssetWriter's status: "unknown" (nothing written yet),
        "writing", "completed" (finish() named the file), "failed" (an error cancelled the
        writer: ``error``), "cancelled"."""
        return _asset_status(lib.mk_writer_get_status, self._handle(), "write")[0]

    @property
    def error(self) -> Optional[MediaKitError]:
        """The error that made ``status`` "failed", else None."""
        return _asset_status(lib.mk_writer_get_status, self._handle(), "write")[1]

    def mark_finished(self, track: str) -> None:
        """Marks the "video" or "audio" track finished (AVAssetWriterInput's markAsFinished):
        writing more to it raises StateError."""
        codes = {"video": 2, "audio": 1}
        if track not in codes:
            raise ValueError(f"track is 'video' or 'audio', not {track!r}")
        lib.mk_writer_end_track(self._handle(), codes[track])

    def __enter__(self) -> Self:
        self._handle()
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        try:
            if exc_type is None:
                self.finish()
            else:
                self.cancel()
        finally:
            self.close()

    def __repr__(self) -> str:
        return f"<mediakit.Writer {self.path!r}{' closed' if self.closed else ''}>"
