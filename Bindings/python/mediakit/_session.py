"""``AsyncDecodeSession`` (C mk_async_decode_session, Swift AsyncDecodeSession): one track decoded
on the library's thread, read from its demuxer or from the packets the caller hands over."""

from __future__ import annotations

import asyncio
import ctypes
import threading
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
    """The C settings of an AsyncDecodeSession (mk_async_decode_session_settings)."""
    s = _decoding_settings(_ffi.SessionSettings(), lib.mk_async_decode_session_default_settings, backend, threads, trim)
    s.recovery = 1 if recovery else 0
    s.max_failed_packets = int(max_failed_packets)
    s.max_rebuilds = int(max_rebuilds)
    s.queue_frames = int(queue_frames)
    return s


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
    """What an AsyncDecodeSession's C callbacks call, apart from the session (no reference cycle
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
            self.on_error(MediaKitError(status, (message or b"").decode("utf-8", "replace"), "AsyncDecodeSession"))
        except BaseException as e:  # kept, raised by the session's next call
            self.completions.keep(e)

    def _end(self, _user: Optional[int]) -> None:
        pass   # the end: wait() returns after it


_UNSET: Any = object()


class AsyncDecodeSession(_Owned):
    """One track decoded on the library's thread (C mk_async_decode_session, Swift
    AsyncDecodeSession; named ``DecodeSession`` in 0.1, a deprecated alias in 0.2; from 0.3 that name
    is the session that decodes on the caller's thread). It is made
    one of two ways, as in C and Swift:

    ``AsyncDecodeSession(track)`` reads the track's demuxer itself (C ``mk_async_decode_session_open``,
    Swift ``AsyncDecodeSession(demuxer:track:)``), ahead of the consumer by at most
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

    Usually made by ``Demuxer.decode()``; it reads the track's demuxer until closed.

    ``AsyncDecodeSession(track, on_frame=...)`` (``on_frame=None`` to read the frames), or one made
    from ``CodecParameters`` (for ``Packet.create`` packets; no edit list applies), decodes the
    packets the caller hands over, as VideoToolbox's VTDecompressionSessionDecodeFrame with the
    asynchronous flag (C ``mk_async_decode_session_open_packets`` / ``_open_params`` and
    ``mk_async_decode_session_decode``; Swift ``AsyncDecodeSession(track:)``): ``decode(packet)``
    returns once the packet is queued, and the frames come out in presentation order, trimmed as
    the same-thread session's are (the track's demuxer is not read: the caller reads it)::

        frames = []
        with mediakit.open("movie.mp4") as demuxer:
            track = demuxer.tracks[0]
            with mediakit.AsyncDecodeSession(track, on_frame=frames.append) as session:
                for packet in demuxer.packets(track):
                    session.decode(packet)          # returns at once
                session.finish()                    # the end: the delayed frames, then on_end
                session.wait()                      # every frame was passed to on_frame

    ``on_frame`` is called with each frame, one call at a time, on a thread of the library's
    (not the caller's); ``on_error`` (optional) with the ``MediaKitError`` that stopped the
    decoding, on the same thread, after the frames before it. An exception raised by a callback is
    kept and raised by the session's next call (``decode``, ``flush``, ``finish``, ``wait``,
    ``close``); later frames are dropped. The error that stopped the decoding is raised by the
    next ``decode`` or ``finish`` too. With ``on_frame=None`` the frames are read instead:
    ``read()``, ``for`` or ``async for`` on another thread or task than the one that decodes, or
    ``frames(packets)``, which does both. At most ``queue_frames`` packets wait to be decoded:
    ``decode`` then waits (and as many frames wait for the consumer). ``decode``, ``finish``,
    ``wait`` and ``frames`` are for this way only (``StateError`` on a session that reads its
    demuxer), ``frame_at`` for the other.

    Either way, damaged data is stepped over (``recovery``: the decoder is rebuilt, once per
    damage, and the packets of the current GOP sent to it again), giving up at the
    ``max_failed_packets``th consecutive rejected packet counted from the first key frame among
    them (damage between key frames costs its GOP, as in ffmpeg) or the ``max_rebuilds``th
    consecutive failed rebuild (each tried on a later packet); a decoder invalidated for another
    reason than the data (its device went away: ``SessionInvalidatedError``'s status) is rebuilt
    at once, not counted as damage. ``stats`` counts them and ``recoveries`` lists them.
    ``on_recovery`` (optional; not with ``on_frame``) is called with each ``Recovery``, oldest
    first, on the thread that reads: inside ``read()`` (so also ``next()``; for ``async for``, its
    worker thread), before the next frame is handed out, for the recoveries the session's thread
    made meanwhile. No Python code runs on the library's thread but ``on_frame`` / ``on_error``.
    An exception raised by ``on_recovery`` comes out of that ``read()`` (the frame read is kept
    and returned by the next one); the session itself goes on. ``flush(completion)`` is the
    mid-stream flush (VTDecompressionSessionFinishDelayedFrames), ``wait()``
    VTDecompressionSessionWaitForAsynchronousFrames, ``close()`` ends the session (called from a
    callback, without waiting for it: no frame, error or end callback runs after that one returns).
    """

    _free = staticmethod(lib.mk_async_decode_session_close)
    _what = "decode session"

    def __init__(self, track: Union[Track, CodecParameters], *, backend: Optional[str] = None, threads: int = 0,
                 trim: Union[bool, str] = True, recovery: bool = True, max_failed_packets: int = 20, max_rebuilds: int = 5,
                 queue_frames: int = 8, on_recovery: Optional[Callable[[Recovery], None]] = None,
                 on_frame: Optional[Callable[[Frame], None]] = _UNSET,
                 on_error: Optional[Callable[[MediaKitError], None]] = None):
        #: True for a session that decodes the caller's packets; False for one that reads its demuxer.
        self.takes_packets = isinstance(track, CodecParameters) or on_frame is not _UNSET
        if on_frame is _UNSET:
            on_frame = None
        if on_frame is None and on_error is not None:
            raise TypeError("on_error needs on_frame: without callbacks, read() raises the error that stopped the decoding")
        if on_frame is not None and on_recovery is not None:
            raise TypeError("on_recovery is called by read(); with on_frame, the recoveries are in `recoveries`")
        s = _session_settings(backend, threads, trim, recovery, max_failed_packets, max_rebuilds, queue_frames)
        h = ctypes.c_void_p()
        self._demuxer = None
        if isinstance(track, CodecParameters):
            params, keep = track._c()
            lib.mk_async_decode_session_open_params(ctypes.byref(h), ctypes.byref(params), ctypes.byref(s))
            del keep
            #: The track decoded (None for a session made from CodecParameters).
            self.track: Optional[Track] = None
            #: What the packets are.
            self.parameters: CodecParameters = track
        else:
            demuxer = _track_demuxer("AsyncDecodeSession", track)
            if self.takes_packets:
                lib.mk_async_decode_session_open_packets(ctypes.byref(h), demuxer._handle(), track.index, ctypes.byref(s))
            else:
                lib.mk_async_decode_session_open(ctypes.byref(h), demuxer._handle(), track.index, ctypes.byref(s))
                self._demuxer = demuxer  # keeps the demuxer object (and its handle) alive
            self.track = track
            self.parameters = track.parameters
        super().__init__(h)
        #: Called with each Recovery on the reading thread (see the class); may be set later.
        self.on_recovery: Optional[Callable[[Recovery], None]] = on_recovery
        self._reported = 0                       # recoveries handed to on_recovery
        self._pending: Optional[Frame] = None    # a frame read when on_recovery raised
        self._completions = _Completions()
        self._delivery: Optional[_Delivery] = None
        if on_frame is not None:
            self._delivery = _Delivery(on_frame, on_error, self._completions)
            cb = _ffi.SessionCallbacks(struct_size=ctypes.sizeof(_ffi.SessionCallbacks), frame=self._delivery.c_frame,
                                       recovery=_ffi.SESSION_RECOVERY(), error=self._delivery.c_error,
                                       end=self._delivery.c_end)
            lib.mk_async_decode_session_start(h, ctypes.byref(cb), None)

    def _packets_session(self, what: str) -> ctypes.c_void_p:
        if not self.takes_packets:
            raise MediaKitError(ESTATE, "this AsyncDecodeSession reads its track's demuxer and takes no packets; make it "
                                "with on_frame= (None to read the frames) to hand packets over", what)
        return self._handle()

    def read(self) -> Optional[Frame]:
        """The next frame, waiting for it (the GIL is released meanwhile); None at the end (for a
        session that takes packets: after ``finish()``). Calls ``on_recovery`` for the recoveries
        made since the last call first. Raises the error that stopped the decoding."""
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

    def wait(self) -> None:
        """Waits until every packet handed over so far is decoded and its frames passed to
        ``on_frame`` (the completions and ``on_error`` queued meanwhile called too; with
        ``read()``, queued for it) (VTDecompressionSessionWaitForAsynchronousFrames). The GIL is
        released meanwhile. Raises what a callback raised. From a callback (which it would wait
        for) it raises ``StateError`` at once."""
        lib.mk_async_decode_session_wait_frames(self._packets_session("wait"))
        self._completions.raise_kept()

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

        feeder = threading.Thread(target=feed, name="mediakit.AsyncDecodeSession.frames", daemon=True)
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
        """Sample-accurate: frames not yet taken are dropped, the next one is the frame presented
        at `seconds` (audio: from that exact sample). Also after the end. A session that takes
        packets also drops the packets not decoded yet: hand over the packets from the key frame
        at or before `seconds` on (``Demuxer.seek``); it starts a new stream after ``finish()`` or
        an error."""
        lib.mk_async_decode_session_seek(self._handle(), float(seconds))

    def frame_at(self, seconds: float) -> Optional[Frame]:
        """seek(seconds), then the next frame (None past the end); iteration goes on after it. For
        a session that reads its demuxer (one that takes packets would wait for them)."""
        if self.takes_packets:
            raise MediaKitError(ESTATE, "this AsyncDecodeSession takes the caller's packets: seek(), hand over the "
                                "packets from the key frame before the time, then read()", "frame_at")
        self.seek(seconds)
        return self.read()

    def flush(self, completion: Optional[Callable[[], None]] = None) -> None:
        """Mid-stream flush (VTDecompressionSessionFinishDelayedFrames): the decoder's delayed
        frames are delivered after the frames before them (queued for ``read()``, or passed to
        ``on_frame``), then ``completion()`` is called (on the library's thread; at once after the
        end), and decoding goes on with the next packet (this is not the end of the stream). What
        it raises is raised by the session's next call. Returns at once."""
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

    def close(self) -> None:
        """Ends the session: packets not decoded yet and frames not delivered are dropped, and no
        callback runs once this returns (called from a callback: once that one returns).
        Raises what a callback raised and was not raised yet. Harmless twice."""
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
        if self.closed:
            return "<mediakit.AsyncDecodeSession closed>"
        p = self.parameters
        where = "packets from the caller" if self.takes_packets else f"reads track {self.track.index if self.track else '?'}"
        return f"<mediakit.AsyncDecodeSession {p.media_type} {p.codec}, {where}>"


_demux._make_session = AsyncDecodeSession
