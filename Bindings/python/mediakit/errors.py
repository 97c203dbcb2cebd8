"""MediaKit's exceptions: one ``MediaKitError`` base, a subclass per kind of failure.

Every failure libmediakit reports (a negative ``mk_status``) raises the subclass of its
status, so a caller catches what it can handle and lets the rest through::

    try:
        container = mediakit.open(path)
    except mediakit.NotFoundError:        # no such file
        ...
    except mediakit.InvalidDataError:     # damaged, or not a media file
        ...
    except mediakit.MediaKitError as e:   # anything else from the library
        print(e.name, e.message)

Where a built-in exception means the same thing the subclass derives from it too, as
PyAV's do: ``InvalidArgumentError`` and ``InvalidDataError`` are ``ValueError``\\ s,
``MediaIOError`` is an ``OSError``, ``OutOfMemoryError`` a ``MemoryError``, ``StateError``
a ``RuntimeError``. ``MediaError`` is the older name of ``MediaKitError`` and stays an alias.

A file cut short is not an error: what it holds is read or decoded (as ffmpeg does) and a
``TruncatedWarning`` is issued; ``warnings.simplefilter("error", mediakit.TruncatedWarning)``
turns it into an exception.

This module also holds the status codes (``OK``, ``EOF``, ``EINVAL`` ...) and ``check``, the
ctypes ``errcheck`` it gives every function ``_ffi`` declares as returning a status to check:
it builds on ``_ffi`` (``mk_status_name``, ``mk_last_error``), which imports nothing of the package.
"""

from __future__ import annotations

from typing import Any, ClassVar

from . import _ffi

# Status codes (mk_status, mediakit_types.h). EAGAIN and EOF are flow control.
OK, EAGAIN, EOF = 0, -1, -2
EINVAL, ENOMEM, EUNSUPPORTED, EDATA, EIO, ENOTFOUND, ESTATE, EPLUGIN, ELIMIT, EFAIL = range(-3, -13, -1)
# A warning, not a failure: the file is cut short; what it holds was returned or written.
ETRUNCATED = -13
# The caller's progress callback asked to stop (nothing was left under the target names).
ECANCELLED = -14
# The decoder stopped for a reason other than the data (its device went away): make it again.
EINVALIDATED = -15

__all__ = ["MediaKitError", "MediaError", "InvalidArgumentError", "OutOfMemoryError", "UnsupportedError",
           "InvalidDataError", "MediaIOError", "NotFoundError", "StateError", "PluginError", "LimitError",
           "BackendError", "CancelledError", "SessionInvalidatedError", "TruncatedWarning", "error_class"]


class MediaKitError(Exception):
    """A failure reported by libmediakit (or a closed object used).

    Constructing ``MediaKitError(status, message)`` gives the subclass of `status`.
    Attributes: ``status`` (the negative mk_status), ``name`` (e.g. "MK_EDATA"), ``message``
    (the library's message, naming the file, offset and what was expected) and ``function``
    (the C function that failed, when known).
    """

    #: The mk_status a subclass stands for (0 on the base).
    status_code: ClassVar[int] = 0

    status: int
    name: str
    message: str
    function: str

    def __new__(cls, status: int = 0, message: str = "", function: str = "") -> "MediaKitError":
        if cls is MediaKitError:
            cls = _BY_STATUS.get(status, MediaKitError)
        # The __new__ of the instance's C layout: OSError's for MediaIOError, BaseException's
        # for the others (MemoryError's own refuses subclasses that have other bases).
        layout: type[BaseException] = OSError if issubclass(cls, OSError) else Exception
        return layout.__new__(cls)

    def __init__(self, status: int = 0, message: str = "", function: str = "") -> None:
        self.status = status
        self.name = _ffi.lib.mk_status_name(status).decode()
        self.message = message
        self.function = function
        super().__init__(str(self))
        self.args = (str(self),)  # OSError and its kin keep no args when constructed this way

    def __str__(self) -> str:
        return f"{self.name}: {self.message}"

    def __reduce__(self) -> tuple[type["MediaKitError"], tuple[int, str, str]]:
        # Pickled with its fields (Ray sends exceptions between processes), not with args.
        return (type(self), (self.status, self.message, self.function))


#: The older name of MediaKitError: ``except mediakit.MediaError`` catches every library error.
MediaError = MediaKitError


class InvalidArgumentError(MediaKitError, ValueError):
    """MK_EINVAL: a bad argument (out of range, a track of another file) or a closed object used."""
    status_code = EINVAL


class OutOfMemoryError(MediaKitError, MemoryError):
    """MK_ENOMEM: an allocation failed."""
    status_code = ENOMEM


class UnsupportedError(MediaKitError):
    """MK_EUNSUPPORTED: a format, codec, profile, layout or feature MediaKit does not handle
    (an encrypted track, an MP4 read from a pipe whose moov comes last ...)."""
    status_code = EUNSUPPORTED


class InvalidDataError(MediaKitError, ValueError):
    """MK_EDATA: the input is damaged or not what it claims to be; the message names the file,
    the offset and the structure."""
    status_code = EDATA


class MediaIOError(MediaKitError, OSError):
    """MK_EIO: an operating-system read or write failed (a full disk, a folder that cannot be
    written, a file object's callback that failed)."""
    status_code = EIO


class NotFoundError(MediaKitError):
    """MK_ENOTFOUND: a file, track, plugin or decoder was not found (for a decoder, the message
    lists every place searched)."""
    status_code = ENOTFOUND


class StateError(MediaKitError, RuntimeError):
    """MK_ESTATE: a call in the wrong order (a packet after the end of the stream, a track added
    after writing started, a muxer finished twice)."""
    status_code = ESTATE


class PluginError(MediaKitError):
    """MK_EPLUGIN: a codec plugin was refused (another ABI version, broken)."""
    status_code = EPLUGIN


class LimitError(MediaKitError):
    """MK_ELIMIT: a size or count above MediaKit's hard limits."""
    status_code = ELIMIT


class BackendError(MediaKitError):
    """MK_EFAIL: a codec backend (FFmpeg, dav1d, libopus ...) failed; the message is its own."""
    status_code = EFAIL


class CancelledError(MediaKitError):
    """MK_ECANCELLED: a progress callback asked a long call (remux, decode, transcode) to stop;
    nothing was left under the target names."""
    status_code = ECANCELLED


class SessionInvalidatedError(MediaKitError):
    """MK_EINVALIDATED: a decoder stopped for a reason other than the data it was given (a device
    plugin lost its device; VideoToolbox's kVTInvalidSessionErr). Decode sessions rebuild the
    decoder themselves; a caller sees it only where no rebuild is possible."""
    status_code = EINVALIDATED


class TruncatedWarning(UserWarning):
    """The file is cut short: everything before the cut was read or decoded (as ffmpeg does),
    the rest is missing. The message names the file and the offset of the cut."""


_BY_STATUS: dict[int, type[MediaKitError]] = {
    c.status_code: c for c in (InvalidArgumentError, OutOfMemoryError, UnsupportedError, InvalidDataError,
                               MediaIOError, NotFoundError, StateError, PluginError, LimitError, BackendError,
                               CancelledError, SessionInvalidatedError)}


def error_class(status: int) -> type[MediaKitError]:
    """The exception class raised for an mk_status (MediaKitError itself for a status without one)."""
    return _BY_STATUS.get(status, MediaKitError)


def check(result: int, func: Any, args: tuple[Any, ...]) -> int:
    """errcheck: a negative status other than flow control (and the ETRUNCATED warning, which
    the caller turns into a TruncatedWarning) raises the MediaKitError subclass of the status."""
    if result < 0 and result not in (EAGAIN, EOF, ETRUNCATED):
        raise MediaKitError(result, _ffi.lib.mk_last_error().decode("utf-8", "replace"), str(func.__name__))
    return result


for _name in _ffi.CHECKED:  # every mk_status function _ffi declared as checked
    getattr(_ffi.lib, _name).errcheck = check
