"""``AsyncDecodeSession`` (C mk_async_decode_session, Swift AsyncDecodeSession; ``DecodeSession`` before
0.2): one track decoded ahead on the library's thread."""

from __future__ import annotations

import asyncio
import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Union

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    from typing_extensions import Self

from . import _demux, _ffi
from ._ffi import lib
from .errors import MediaKitError, EOF
from ._common import _Owned, _text
from ._demux import Track
from ._frame import Frame
from ._decode import _decoding_settings, _track_demuxer


@dataclass(frozen=True)
class Recovery:
    """One recovery of an AsyncDecodeSession from damaged data (C ``mk_recovery_info``, Swift
    ``DecodeSession.Recovery``)."""
    pts: Optional[int]              #: the rejected packet's pts (track time base); None for an error while receiving
    position: int                   #: the rejected packet's byte offset in the file, -1 if unknown
    rebuilt: bool                   #: the decoder was rebuilt and primed with the current GOP
    frames_lost: int                #: frames not output because of it
    status: str                     #: the decoder's error ("MK_EDATA", "MK_EFAIL" ...)
    message: str                    #: the decoder's message


class AsyncDecodeSession(_Owned):
    """One track decoded on the library's thread (C mk_async_decode_session, Swift
    AsyncDecodeSession; the name ``DecodeSession`` before 0.2 is a deprecated alias), ahead of the consumer by at most
    ``queue_frames`` frames. Iterate it for the presented frames, in presentation order, with
    ``for`` or ``async for`` (the async iterator waits in a worker thread, never blocking the
    event loop)::

        with mediakit.open("movie.mp4") as container:
            for frame in container.decode(video=0):
                ...
            container.seek(12.345)                       # sample-accurate
            frame = next(iter(container.decode(video=0)))

        async for frame in mediakit.open("movie.mp4").decode(audio=0):
            ...

    Damaged data is stepped over (``recovery``: the decoder is rebuilt, once per damage, and the
    packets of the current GOP sent to it again), giving up at the ``max_failed_packets``th
    consecutive rejected packet counted from the first key frame among them (damage between key
    frames costs its GOP, as in ffmpeg) or the ``max_rebuilds``th consecutive failed rebuild (each
    tried on a later packet); a decoder invalidated for another reason than the data (its device
    went away: ``SessionInvalidatedError``'s status) is rebuilt at once, not counted as damage.
    ``stats`` counts them and
    ``recoveries`` lists them. ``on_recovery`` (optional) is called with each ``Recovery``, oldest
    first, on the thread that reads: inside ``read()`` (so also ``next()``; for ``async for``, its
    worker thread), before the next frame is handed out, for the recoveries the session's thread
    made meanwhile (it decodes ahead by up to ``queue_frames`` frames). No Python code runs on the
    library's thread. An exception raised by the callback comes out of that ``read()`` (the
    frame read is kept and returned by the next one); the session itself goes on. Usually made by
    ``Demuxer.decode()``; it reads the track's demuxer until closed.
    """

    _free = staticmethod(lib.mk_async_decode_session_close)
    _what = "decode session"

    def __init__(self, track: Track, *, backend: Optional[str] = None, threads: int = 0, trim: Union[bool, str] = True,
                 recovery: bool = True, max_failed_packets: int = 20, max_rebuilds: int = 5, queue_frames: int = 8,
                 on_recovery: Optional[Callable[[Recovery], None]] = None):
        demuxer = _track_demuxer("AsyncDecodeSession", track)
        s = _decoding_settings(_ffi.SessionSettings(), lib.mk_async_decode_session_default_settings, backend, threads, trim)
        s.recovery = 1 if recovery else 0
        s.max_failed_packets = int(max_failed_packets)
        s.max_rebuilds = int(max_rebuilds)
        s.queue_frames = int(queue_frames)
        h = ctypes.c_void_p()
        lib.mk_async_decode_session_open(ctypes.byref(h), demuxer._handle(), track.index, ctypes.byref(s))
        super().__init__(h)
        self.track = track
        self._demuxer = demuxer  # keeps the demuxer object (and its handle) alive
        #: Called with each Recovery on the reading thread (see the class); may be set later.
        self.on_recovery: Optional[Callable[[Recovery], None]] = on_recovery
        self._reported = 0                       # recoveries handed to on_recovery
        self._pending: Optional[Frame] = None    # a frame read when on_recovery raised

    def read(self) -> Optional[Frame]:
        """The next frame, waiting for it (the GIL is released meanwhile); None at the end.
        Calls ``on_recovery`` for the recoveries made since the last call first."""
        if self._pending is not None:
            kept, self._pending = self._pending, None
            return kept
        f = ctypes.c_void_p()
        try:
            end = lib.mk_async_decode_session_read_frame(self._handle(), ctypes.byref(f)) == EOF
        except MediaKitError:
            self._report_recoveries()
            raise
        frame = None if end else Frame(f)
        try:
            self._report_recoveries()
        except BaseException:
            self._pending = frame
            raise
        return frame

    def _recovery(self, index: int) -> Recovery:
        r = _ffi.RecoveryInfo(struct_size=ctypes.sizeof(_ffi.RecoveryInfo))
        lib.mk_async_decode_session_get_recovery(self._handle(), index, ctypes.byref(r))
        return Recovery(None if r.pts == _ffi.NOPTS_VALUE else int(r.pts), int(r.position), r.rebuilt == 1, int(r.frames_lost),
                        _text(lib.mk_status_name(r.status)), _text(r.message))

    def _report_recoveries(self) -> None:
        """Hands on_recovery the recoveries it has not had yet, oldest first."""
        if self.on_recovery is None:
            return
        count = self.stats["recoveries"]
        while self._reported < count:
            r = self._recovery(self._reported)
            self._reported += 1
            self.on_recovery(r)

    @property
    def recoveries(self) -> list[Recovery]:
        """Every recovery from damaged data so far, oldest first."""
        return [self._recovery(i) for i in range(self.stats["recoveries"])]

    def __iter__(self) -> Self:
        return self

    def __next__(self) -> Frame:
        frame = self.read()
        if frame is None:
            raise StopIteration
        return frame

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Frame:
        frame = await asyncio.get_running_loop().run_in_executor(None, self.read)
        if frame is None:
            raise StopAsyncIteration
        return frame

    def seek(self, seconds: float) -> None:
        """Sample-accurate: frames not yet taken are dropped, the next one is the frame
        presented at `seconds` (audio: from that exact sample). Also after the end."""
        lib.mk_async_decode_session_seek(self._handle(), float(seconds))

    def frame_at(self, seconds: float) -> Optional[Frame]:
        """seek(seconds), then the next frame (None past the end); iteration goes on after it."""
        self.seek(seconds)
        return self.read()

    def flush(self) -> None:
        """Mid-stream flush (the iOS decoder's): the decoder's delayed frames come next, then
        decoding goes on with the next packet (this is not the end of the stream)."""
        lib.mk_async_decode_session_flush(self._handle(), _ffi.SESSION_COMPLETION(), None)

    @property
    def stats(self) -> dict[str, int]:
        """Frames delivered, packets sent to the decoder, recoveries from damaged data, decoder
        rebuilds, frames lost, warnings, and invalidations (the decoder stopped for a reason other
        than the data, e.g. its device went away, and was rebuilt: not counted as damage)."""
        st = _ffi.SessionStats(struct_size=ctypes.sizeof(_ffi.SessionStats))
        lib.mk_async_decode_session_get_stats(self._handle(), ctypes.byref(st))
        return {"frames": st.frames, "packets": st.packets, "recoveries": st.recoveries, "rebuilds": st.rebuilds,
                "frames_lost": st.frames_lost, "warnings": st.warnings, "invalidations": st.invalidations}

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"track {self.track.index} {self.track.media_type} {self.track.codec}"
        return f"<mediakit.AsyncDecodeSession {state}>"


_demux._make_session = AsyncDecodeSession
