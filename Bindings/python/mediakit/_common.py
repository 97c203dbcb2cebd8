"""What the modules of the package share: path and text helpers, the C enum tables, the
owner of a C handle (``_Owned``) and the trim setting of decoders and sessions."""

from __future__ import annotations

import abc
import ctypes
import os
import sys
import warnings as _warnings
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Optional, Union

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    from typing_extensions import Self
    import numpy.typing as npt

    #: What the array-returning calls give: numpy arrays (bytes when numpy is not installed).
    Array = npt.NDArray[Any]

from . import _ffi
from ._ffi import lib
from .errors import MediaKitError, TruncatedWarning, EINVAL


PathLike = Union[str, bytes, "os.PathLike[str]"]
#: A channel layout: a name ("mono", "stereo", "5.1" ...) or a channel count.
Layout = Union[str, int]

_MEDIA_TYPES = {1: "audio", 2: "video", 3: "subtitle", 4: "data"}
_PIXEL_FORMATS = {1: "yuv420p", 2: "yuvj420p", 3: "yuv422p", 4: "yuvj422p", 5: "yuv444p", 6: "yuvj444p",
                  7: "nv12", 8: "yuv420p10le", 9: "yuv422p10le", 10: "yuv444p10le", 11: "p010le",
                  12: "gray", 13: "gray10le", 14: "yuv420p12le"}
# MK_SAMPLES_* codes by FFmpeg's name (Swift's SampleFormat.name): 11 and up are the converter's
# and raw writers' formats (packed 24-bit, s8, big-endian, 24 in 32), odd codes interleaved and
# the next one up planar.
_SAMPLE_FORMATS = {1: "u8", 2: "s16", 3: "s32", 4: "flt", 5: "dbl", 6: "u8p", 7: "s16p", 8: "s32p",
                   9: "fltp", 10: "dblp", 11: "s24", 12: "s24p"}
_SAMPLE_FORMATS.update({13 + 2 * i + planar: name + ("p" if planar else "") for planar in (0, 1)
                        for i, name in enumerate(["s8", "s16be", "s24be", "s32be", "f32be", "f64be", "s24in32hi", "s24in32lo"])})
# numpy's dtype of a plane's samples (packed 24-bit ones are bytes: u1).
_SAMPLE_DTYPES = {"u8": "u1", "s16": "<i2", "s32": "<i4", "flt": "<f4", "dbl": "<f8", "s8": "i1", "s16be": ">i2",
                  "s32be": ">i4", "f32be": ">f4", "f64be": ">f8", "s24in32hi": "<i4", "s24in32lo": "<i4"}
_PACK = {"nv12": 1, "i420": 2, "s16": 3, "f32": 4, "rgb24": 5, "bgr24": 6, "rgba": 7, "bgra": 8, "gray": 9,
         "gray16le": 10, "rgb48le": 11, "p010le": 12}
#: The packed one-plane picture layouts (MK_PACK_RGB24 ...): their channels and numpy dtype.
_PACKED_PICTURES = {"rgb24": (3, "u1"), "bgr24": (3, "u1"), "rgba": (4, "u1"), "bgra": (4, "u1"), "gray": (1, "u1"),
                    "gray16le": (1, "<u2"), "rgb48le": (3, "<u2")}
#: Scale filters of ``Frame.to_numpy(width=, height=, interpolation=)``: FFmpeg's scale-filter
#: flag names and their MK_SCALE_* values ("bicubic", the ffmpeg tool's, is the default).
SCALE_FILTERS = {"fast_bilinear": 1, "bilinear": 2, "bicubic": 3, "neighbor": 4, "area": 5, "lanczos": 6}


def _warn_truncated() -> None:
    """Issues the last error (the cut) as a TruncatedWarning at the caller's line outside this package."""
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    frame: Optional[FrameType] = sys._getframe(0)
    level = 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame, level = frame.f_back, level + 1
    _warnings.warn(lib.mk_last_error().decode("utf-8", "replace"), TruncatedWarning, stacklevel=level)


def _closed(what: str) -> MediaKitError:
    """The error a closed object raises when used (an InvalidArgumentError)."""
    return MediaKitError(EINVAL, f"the {what} is closed")


def _text(b: Optional[bytes]) -> str:
    """A C string from the library as text ("" for NULL)."""
    return b.decode("utf-8", "replace") if b else ""


def _path(p: PathLike) -> bytes:
    if not isinstance(p, (str, bytes, os.PathLike)):
        raise TypeError(f"expected a path (str, bytes or os.PathLike), got {type(p).__name__}")
    return os.fsencode(p)


class _Closing(abc.ABC):
    """``with`` support for an object with a ``close()`` that holds other handles (the decoders
    of _video.py and _audio_decoder.py): ``with`` gives the object and closes it at the end."""

    @abc.abstractmethod
    def close(self) -> None:
        """Releases what the object holds; closing twice is fine."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()


class _Owned:
    """A C handle freed exactly once: by close(), or by the finalizer as a safety net."""

    #: The C function that frees (takes the handle's address).
    _free: ClassVar[Callable[[Any], None]]
    _what: ClassVar[str] = "object"

    def __init__(self, handle: ctypes.c_void_p):
        self._h: Optional[ctypes.c_void_p] = handle

    def _handle(self) -> ctypes.c_void_p:
        if self._h is None:
            raise _closed(self._what)
        return self._h

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._h is None

    def close(self) -> None:
        """Frees the C handle. Harmless when already closed."""
        h, self._h = self._h, None
        if h is not None and h.value:
            type(self)._free(ctypes.byref(h))

    def __enter__(self) -> Self:
        self._handle()
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


_TRIM = {"none": 0, "gapless": 1, "ffmpeg": 2}


def _trim_setting(trim: Union[bool, str]) -> int:
    """The C trim value (MK_TRIM_*) for True / False / "gapless" / "ffmpeg" / "none"."""
    if isinstance(trim, bool):
        return 1 if trim else 0
    if trim not in _TRIM:
        raise ValueError(f"unknown trim {trim!r}: 'gapless', 'ffmpeg' or 'none' (or True / False)")
    return _TRIM[trim]


def _asset_status(get: Callable[[Any, Any], Any], handle: Any, operation: str) -> tuple[str, Optional[MediaKitError]]:
    """A reader's or writer's status (mk_demuxer_get_status, mk_muxer_get_status,
    mk_writer_get_status as `get`) as its name ("reading", "failed" ...) and, when "failed",
    the error (raised by `operation`: "read", "write"), else None."""
    st = _ffi.AssetStatus(struct_size=ctypes.sizeof(_ffi.AssetStatus))
    get(handle, ctypes.byref(st))
    name = _ffi.ASSET_STATUS.get(int(st.status), "unknown")
    if name != "failed":
        return name, None
    return name, MediaKitError(int(st.error), (st.message or b"").decode("utf-8", "replace"), operation)
