"""``AsyncDecodeSession`` (C mk_async_decode_session, Swift AsyncDecodeSession): one track decoded
ahead on the library's thread; ``DecodeSession``: the caller's packets decoded on the library's
thread (C mk_async_decode_session_open_packets, Swift ``AsyncDecodeSession(track:)``)."""

from __future__ import annotations

import asyncio
import ctypes
import threading
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Optional, Union

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    from typing_extensions import Self

from . import _demux, _ffi
from ._ffi import lib
from .errors import MediaKitError, EOF, ESTATE
from ._common import _Owned, _text
from ._demux import CodecParameters, Packet, Track
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


def _session_settings(backend: Optional[str], threads: int, trim: Union[bool, str], recovery: bool,
                      max_failed_packets: int, max_rebuilds: int, queue_frames: int) -> _ffi.SessionSettings:
    """The C settings of an AsyncDecodeSession or DecodeSession (mk_async_decode_session_settings)."""
    s = _decoding_settings(_ffi.SessionSettings(), lib.mk_async_decode_session_default_settings, backend, threads, trim)
    s.recovery = 1 if recovery else 0
    s.max_failed_packets = int(max_failed_packets)
    s.max_rebuilds = int(max_rebuilds)
    s.queue_frames = int(queue_frames)
    return s


class _FrameReader:
    """Iteration (``for``, ``async for``) over a session's ``read()``: the frames until the end."""

    def read(self) -> Optional[Frame]:
        raise NotImplementedError

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


class AsyncDecodeSession(_FrameReader, _Owned):
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
        s = _session_settings(backend, threads, trim, recovery, max_failed_packets, max_rebuilds, queue_frames)
        h = ctypes.c_void_p()
        lib.mk_async_decode_session_open(ctypes.byref(h), demuxer._handle(), track.index, ctypes.byref(s))
        super().__init__(h)
        self.track = track
        self._demuxer = demuxer  # keeps the demuxer object (and its handle) alive
        #: Called with each Recovery on the reading thread (see the class); may be set later.
        self.on_recovery: Optional[Callable[[Recovery], None]] = on_recovery
        self._reported = 0                       # recoveries handed to on_recovery
        self._pending: Optional[Frame] = None    # a frame read when on_recovery raised
        self._completions = _Completions()

    def read(self) -> Optional[Frame]:
        """The next frame, waiting for it (the GIL is released meanwhile); None at the end.
        Calls ``on_recovery`` for the recoveries made since the last call first."""
        if self._pending is not None:
            kept, self._pending = self._pending, None
            return kept
        self._completions.raise_kept()
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

    def seek(self, seconds: float) -> None:
        """Sample-accurate: frames not yet taken are dropped, the next one is the frame
        presented at `seconds` (audio: from that exact sample). Also after the end."""
        lib.mk_async_decode_session_seek(self._handle(), float(seconds))

    def frame_at(self, seconds: float) -> Optional[Frame]:
        """seek(seconds), then the next frame (None past the end); iteration goes on after it."""
        self.seek(seconds)
        return self.read()

    def flush(self, completion: Optional[Callable[[], None]] = None) -> None:
        """Mid-stream flush (the iOS decoder's): the decoder's delayed frames come next, then
        decoding goes on with the next packet (this is not the end of the stream).
        ``completion`` (optional) is called once the delayed frames are queued for reading,
        on the library's thread (or at once after the end); what it raises is raised by the
        next ``read()``."""
        self._completions.flush(self._handle(), completion)
        self._completions.raise_kept()

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


class _Completions:
    """Flush completions waiting for the library's thread: each C function object is kept until
    it has been called; what a completion raises is kept for the session's next call."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.waiting: dict[int, Any] = {}
        self.next = 0
        self.raised: Optional[BaseException] = None
        self.failed = False   # a callback raised: stays set after the exception was raised

    def keep(self, e: BaseException) -> None:
        with self.lock:
            self.raised = self.raised or e
            self.failed = True

    def raise_kept(self) -> None:
        with self.lock:
            raised, self.raised = self.raised, None
        if raised is not None:
            raise raised

    def flush(self, handle: ctypes.c_void_p, completion: Optional[Callable[[], None]]) -> None:
        if completion is None:
            lib.mk_async_decode_session_flush(handle, _ffi.SESSION_COMPLETION(), None)
            return
        with self.lock:
            key = self.next
            self.next += 1

        def done(_user: Optional[int]) -> None:
            with self.lock:
                self.waiting.pop(key, None)
            try:
                completion()
            except BaseException as e:  # kept, raised by the session's next call
                self.keep(e)

        c = _ffi.SESSION_COMPLETION(done)
        with self.lock:
            self.waiting[key] = c
        lib.mk_async_decode_session_flush(handle, c, None)


class _Delivery:
    """What a DecodeSession's C callbacks call, apart from the session (no reference cycle
    through the C function objects, so the session is not collected on the callback thread)."""

    def __init__(self, on_frame: Optional[Callable[[Frame], None]], on_error: Optional[Callable[[MediaKitError], None]],
                 completions: _Completions):
        self.on_frame = on_frame
        self.on_error = on_error
        self.completions = completions
        self.c_frame = _ffi.SESSION_FRAME(self._frame)
        self.c_error = _ffi.SESSION_ERROR(self._error)
        self.c_end = _ffi.SESSION_END(self._end)

    def _frame(self, _user: Optional[int], handle: Optional[int]) -> None:
        frame = Frame(ctypes.c_void_p(handle))
        if self.completions.failed or self.on_frame is None:   # a callback failed: the rest are freed
            frame.close()
            return
        try:
            self.on_frame(frame)
        except BaseException as e:  # kept, raised by the session's next call
            self.completions.keep(e)

    def _error(self, _user: Optional[int], status: int, message: Optional[bytes]) -> None:
        if self.on_error is None:
            return   # the next call returns the error (C's status)
        try:
            self.on_error(MediaKitError(status, (message or b"").decode("utf-8", "replace"), "DecodeSession"))
        except BaseException as e:  # kept, raised by the session's next call
            self.completions.keep(e)

    def _end(self, _user: Optional[int]) -> None:
        pass   # the end: wait() returns after it


_UNSET: Any = object()


class DecodeSession(_FrameReader, _Owned):
    """Decodes the packets the caller hands over on the library's thread, as VideoToolbox's
    VTDecompressionSessionDecodeFrame with the asynchronous flag (C
    ``mk_async_decode_session_open_packets`` / ``_open_params`` and
    ``mk_async_decode_session_decode``; Swift ``AsyncDecodeSession(track:)``): ``decode(packet)``
    returns once the packet is queued, and the frames come out in presentation order, trimmed
    as ``Decoder``'s are, with ``AsyncDecodeSession``'s recovery from damaged data::

        frames = []
        with mediakit.open("movie.mp4") as demuxer:
            track = demuxer.tracks[0]
            with mediakit.DecodeSession(track, on_frame=frames.append) as session:
                for packet in demuxer.packets(track):
                    session.decode(packet)          # returns at once
                session.finish()                    # the end: the delayed frames, then on_end
                session.wait()                      # every frame was passed to on_frame

    ``track`` is a ``Track`` (its demuxer is not read: the caller reads it) or
    ``CodecParameters`` (for ``Packet.create`` packets; no edit list applies).

    ``on_frame`` is called with each frame, one call at a time, on a thread of the library's
    (not the caller's); ``on_error`` (optional) with the ``MediaKitError`` that stopped the
    decoding, on the same thread, after the frames before it. An exception raised by a callback is
    kept and raised by the session's next call (``decode``, ``flush``, ``finish``, ``wait``,
    ``close``); later frames are dropped. The error that stopped the decoding is raised by the
    next ``decode`` or ``finish`` too. With ``on_frame=None`` the frames are read instead:
    ``read()``, ``for`` or ``async for`` on another thread or task than the one that decodes, or
    ``frames(packets)``, which does both.

    At most ``queue_frames`` packets wait to be decoded: ``decode`` then waits (and as many
    frames wait for the consumer). ``flush(completion)`` is the mid-stream flush
    (VTDecompressionSessionFinishDelayedFrames), ``wait()`` VTDecompressionSessionWaitForAsynchronousFrames,
    ``close()`` ends the session (called from a callback, without waiting for it: no frame,
    error or end callback runs after that one returns).

    ``DecodeSession(track)`` with a Track and neither ``on_frame`` nor ``on_error`` keeps the
    name's old meaning (deprecated: it warns): an ``AsyncDecodeSession`` that reads the
    track's demuxer itself, to which every call is handed. Give ``on_frame`` (``None`` to read
    the frames) for this class; the old meaning goes in the next release.
    """

    _free = staticmethod(lib.mk_async_decode_session_close)
    _what = "decode session"

    def __init__(self, track: Union[Track, CodecParameters], *, on_frame: Optional[Callable[[Frame], None]] = _UNSET,
                 on_error: Optional[Callable[[MediaKitError], None]] = None, backend: Optional[str] = None,
                 threads: int = 0, trim: Union[bool, str] = True, recovery: bool = True, max_failed_packets: int = 20,
                 max_rebuilds: int = 5, queue_frames: int = 8, **legacy: Any):
        self._legacy: Optional[AsyncDecodeSession] = None
        if isinstance(track, Track) and on_frame is _UNSET and on_error is None:
            warnings.warn("mediakit.DecodeSession(track) without on_frame is the old name of mediakit.AsyncDecodeSession "
                          "(it reads the track's demuxer); that meaning goes in the next release. Use AsyncDecodeSession, "
                          "or DecodeSession(track, on_frame=...) to decode packets you hand over", DeprecationWarning, stacklevel=2)
            self._legacy = AsyncDecodeSession(track, backend=backend, threads=threads, trim=trim, recovery=recovery,
                                              max_failed_packets=max_failed_packets, max_rebuilds=max_rebuilds,
                                              queue_frames=queue_frames, **legacy)
            super().__init__(ctypes.c_void_p())
            self.track: Optional[Track] = track
            return
        if legacy:
            raise TypeError(f"DecodeSession() got unexpected keyword arguments {sorted(legacy)}")
        if on_frame is _UNSET:
            on_frame = None
        if on_frame is None and on_error is not None:
            raise TypeError("on_error needs on_frame: without callbacks, read() raises the error that stopped the decoding")
        s = _session_settings(backend, threads, trim, recovery, max_failed_packets, max_rebuilds, queue_frames)
        h = ctypes.c_void_p()
        if isinstance(track, CodecParameters):
            params, keep = track._c()
            lib.mk_async_decode_session_open_params(ctypes.byref(h), ctypes.byref(params), ctypes.byref(s))
            del keep
            self.track = None
            #: What the packets are.
            self.parameters: CodecParameters = track
        else:
            demuxer = _track_demuxer("DecodeSession", track)
            lib.mk_async_decode_session_open_packets(ctypes.byref(h), demuxer._handle(), track.index, ctypes.byref(s))
            self.track = track
            self.parameters = track.parameters
        super().__init__(h)
        self._completions = _Completions()
        self._delivery: Optional[_Delivery] = None
        if on_frame is not None:
            self._delivery = _Delivery(on_frame, on_error, self._completions)
            cb = _ffi.SessionCallbacks(struct_size=ctypes.sizeof(_ffi.SessionCallbacks), frame=self._delivery.c_frame,
                                       recovery=_ffi.SESSION_RECOVERY(), error=self._delivery.c_error,
                                       end=self._delivery.c_end)
            lib.mk_async_decode_session_start(h, ctypes.byref(cb), None)

    def __getattr__(self, name: str) -> Any:
        # The old meaning: what AsyncDecodeSession has and this class has not (frame_at, recoveries ...).
        legacy = self.__dict__.get("_legacy")
        if legacy is None:
            raise AttributeError(f"'DecodeSession' object has no attribute {name!r}")
        return getattr(legacy, name)

    def _packets_session(self, what: str) -> ctypes.c_void_p:
        if self._legacy is not None:
            raise MediaKitError(ESTATE, "this DecodeSession was made the old way (a Track without on_frame): it reads "
                                "its demuxer and takes no packets; give on_frame (None to read the frames)", what)
        return self._handle()

    def decode(self, packet: Packet) -> None:
        """Hands one packet over and returns once it is queued (waiting only while
        ``queue_frames`` packets wait); its frames come to ``on_frame`` (or ``read()``) in
        presentation order. Raises what a callback raised, or the error that stopped the
        decoding (StateError after ``finish()``)."""
        if not isinstance(packet, Packet):
            raise TypeError(f"decode() takes a mediakit.Packet, got {type(packet).__name__}")
        h = self._packets_session("decode")
        self._completions.raise_kept()
        lib.mk_async_decode_session_decode(h, packet._handle())

    def finish(self) -> None:
        """The end of the stream: after the frames of every packet, the decoder's delayed frames
        are delivered, then the end (``read()`` returns None). Returns at once; ``wait()``
        waits for the frames. ``seek()`` starts a new stream."""
        h = self._packets_session("finish")
        self._completions.raise_kept()
        lib.mk_async_decode_session_decode(h, None)

    def flush(self, completion: Optional[Callable[[], None]] = None) -> None:
        """Mid-stream flush (VTDecompressionSessionFinishDelayedFrames): the decoder's delayed
        frames are delivered after the frames before them, then ``completion()`` is called (on
        the library's thread, after their on_frame calls; with ``read()``, once they are queued),
        and decoding goes on with the next packet (not the end of the stream). Returns at once."""
        if self._legacy is not None:
            self._legacy.flush(completion)
            return
        self._completions.flush(self._handle(), completion)
        self._completions.raise_kept()

    def wait(self) -> None:
        """Waits until every packet handed over so far is decoded and its frames passed to
        ``on_frame`` (the completions and ``on_error`` queued meanwhile called too; with
        ``read()``, queued for it) (VTDecompressionSessionWaitForAsynchronousFrames). The GIL is
        released meanwhile. Raises what a callback raised. From a callback (which it would wait
        for) it raises ``StateError`` at once."""
        lib.mk_async_decode_session_wait_frames(self._packets_session("wait"))
        self._completions.raise_kept()

    def read(self) -> Optional[Frame]:
        """Without on_frame: the next frame, waiting for it (the GIL is released meanwhile); None
        after the end (``finish()``). Raises the error that stopped the decoding."""
        if self._legacy is not None:
            return self._legacy.read()
        h = self._handle()
        self._completions.raise_kept()
        f = ctypes.c_void_p()
        if lib.mk_async_decode_session_read_frame(h, ctypes.byref(f)) == EOF:
            return None
        return Frame(f)

    def frames(self, packets: Iterable[Packet]) -> Iterator[Frame]:
        """Without on_frame: decodes `packets` (fed on a thread of their own, then ``finish()``)
        and yields every frame as it comes, in presentation order."""
        self._packets_session("frames")
        failure: list[BaseException] = []

        def feed() -> None:
            try:
                for p in packets:
                    self.decode(p)
            except BaseException as e:  # raised by the reader below
                failure.append(e)
            try:
                self.finish()   # the reader gets the end (or the error that stopped the decoding)
            except BaseException:
                pass

        feeder = threading.Thread(target=feed, name="mediakit.DecodeSession.frames", daemon=True)
        feeder.start()
        try:
            while True:
                frame = self.read()
                if frame is None:
                    break
                yield frame
        finally:
            if feeder.is_alive():
                _Owned.close(self)   # the reader stopped early: wakes a feeder waiting for room
            feeder.join()
        if failure:
            raise failure[0]

    def seek(self, seconds: float) -> None:
        """Sample-accurate: the packets not decoded yet and the frames not yet delivered are
        dropped, and the frames given next start at the one presented at `seconds`: hand over the
        packets from the key frame at or before it on (``Demuxer.seek``). Starts a new stream
        after ``finish()`` or an error."""
        if self._legacy is not None:
            self._legacy.seek(seconds)
            return
        lib.mk_async_decode_session_seek(self._handle(), float(seconds))

    @property
    def stats(self) -> dict[str, int]:
        """As ``AsyncDecodeSession.stats``: frames delivered, packets sent to the decoder,
        recoveries, rebuilds, frames lost, warnings, invalidations."""
        if self._legacy is not None:
            return self._legacy.stats
        st = _ffi.SessionStats(struct_size=ctypes.sizeof(_ffi.SessionStats))
        lib.mk_async_decode_session_get_stats(self._handle(), ctypes.byref(st))
        return {"frames": st.frames, "packets": st.packets, "recoveries": st.recoveries, "rebuilds": st.rebuilds,
                "frames_lost": st.frames_lost, "warnings": st.warnings, "invalidations": st.invalidations}

    @property
    def recoveries(self) -> list[Recovery]:
        """Every recovery from damaged data so far, oldest first (as ``AsyncDecodeSession.recoveries``)."""
        if self._legacy is not None:
            return self._legacy.recoveries
        h = self._handle()
        out = []
        for i in range(self.stats["recoveries"]):
            r = _ffi.RecoveryInfo(struct_size=ctypes.sizeof(_ffi.RecoveryInfo))
            lib.mk_async_decode_session_get_recovery(h, i, ctypes.byref(r))
            out.append(Recovery(None if r.pts == _ffi.NOPTS_VALUE else int(r.pts), int(r.position), r.rebuilt == 1,
                                int(r.frames_lost), _text(lib.mk_status_name(r.status)), _text(r.message)))
        return out

    def close(self) -> None:
        """Ends the session: packets not decoded yet and frames not delivered are dropped, and no
        callback runs once this returns (called from a callback: once that one returns).
        Raises what a callback raised and was not raised yet. Harmless twice."""
        if self.__dict__.get("_legacy") is not None:
            self._legacy.close()   # type: ignore[union-attr]
        super().close()
        completions = self.__dict__.get("_completions")
        if completions is not None:
            completions.raise_kept()

    def __del__(self) -> None:
        try:
            _Owned.close(self)
        except Exception:  # pragma: no cover - interpreter shutdown
            pass

    def __repr__(self) -> str:
        if self._legacy is not None:
            return f"<mediakit.DecodeSession (old meaning) {self._legacy!r}>"
        if self.closed:
            return "<mediakit.DecodeSession closed>"
        p = self.parameters
        return f"<mediakit.DecodeSession {p.media_type} {p.codec}, packets from the caller>"
