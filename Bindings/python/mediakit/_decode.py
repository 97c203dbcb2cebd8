"""``DecodeSession`` (C mk_decode_session, Swift DecodeSession): one track's packets in, frames out, on the
calling thread."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar, Union

from . import _ffi
from ._ffi import lib
from .errors import MediaKitError, OK, EINVAL, ESTATE
from ._common import _Owned, _closed, _trim_setting
from ._demux import CodecParameters, Demuxer, Packet, Track
from ._frame import Frame


_Settings = TypeVar("_Settings", _ffi.DecoderSettings, _ffi.SessionSettings)


def _track_demuxer(who: str, track: object) -> "Demuxer":
    """The open demuxer of `track` (a Track), or TypeError / InvalidArgumentError saying what is wrong."""
    if not isinstance(track, Track):
        raise TypeError(f"{who} needs a mediakit.Track (from Demuxer.tracks), got {type(track).__name__}")
    if track._demuxer is None or track._demuxer.closed:
        raise _closed("demuxer this track belongs to")
    return track._demuxer


def _decoding_settings(settings: _Settings, fill: Callable[[Any], None], backend: Optional[str], threads: int,
                       trim: Union[bool, str]) -> _Settings:
    """Fills a DecodeSession's or AsyncDecodeSession's settings struct: the defaults from `fill`, then
    backend, threads and trim."""
    fill(ctypes.byref(settings))
    settings.backend = backend.encode() if backend else None
    settings.threads = int(threads)
    settings.trim = _trim_setting(trim)
    return settings


class DecodeSession(_Owned):
    """Decodes one track through the highest-priority plugin for its codec, on the calling thread
    (C ``mk_decode_session``, Swift ``DecodeSession``; ``mediakit.Decoder`` up to 0.2, a deprecated
    alias now. Up to 0.2 ``mediakit.DecodeSession`` was ``AsyncDecodeSession``'s old name).

    The model is libavcodec's send / receive, as in C: ``send(packet)`` returns False when
    frames are waiting (the packet was not taken: ``receive()`` them, then send it again);
    ``receive()`` returns the next frame or None when more input is needed (or, after
    ``flush()``, at the end). The iterators build on it and decode lazily, one frame at a
    time: ``decode(packet)`` sends the packet and yields the frames as they are asked for,
    ``flush()`` ends the stream and yields the delayed ones, and ``frames(packets)`` does
    the whole loop::

        for frame in decoder.frames(demuxer.packets(track)):
            ...

    trim: "gapless" (default; True means the same) applies the track's edit list as FFmpeg
    does and ends audio exactly where the file says; "ffmpeg" keeps the last audio frame
    whole, as FFmpeg 5.1 does; "none" (or False) keeps every decoded frame and sample.
    """

    _free = staticmethod(lib.mk_decode_session_close)
    _what = "decoder"

    def __init__(self, track: Union[Track, "CodecParameters"], *, backend: Optional[str] = None, threads: int = 0,
                 trim: Union[bool, str] = True):
        s = _decoding_settings(_ffi.DecoderSettings(), lib.mk_decode_session_default_settings, backend, threads, trim)
        h = ctypes.c_void_p()
        if isinstance(track, CodecParameters):
            params, keep = track._c()
            lib.mk_decode_session_open_params(ctypes.byref(h), ctypes.byref(params), ctypes.byref(s))
            del keep
            self.track: Optional[Track] = None
            self.parameters: CodecParameters = track
        else:
            demuxer = _track_demuxer("DecodeSession", track)
            lib.mk_decode_session_open(ctypes.byref(h), demuxer._handle(), track.index, ctypes.byref(s))
            self.track = track
            self.parameters = track.parameters
        super().__init__(h)
        # A packet decode() took whose send the decoder refused (frames were waiting): it is
        # sent as soon as those frames are received. Frames received early to send it (when
        # a decode() iterator was left unfinished) wait in _backlog, oldest first.
        self._pending: Optional[Packet] = None
        self._backlog: list[Frame] = []

    def send(self, packet: Packet) -> bool:
        """Sends one packet of this decoder's track. True: taken; False: frames are waiting,
        the packet was not taken (receive() until None, then send it again)."""
        if not isinstance(packet, Packet):
            raise TypeError(f"send() takes a mediakit.Packet, got {type(packet).__name__}")
        return bool(lib.mk_decode_session_send_packet(self._handle(), packet._handle()) == OK)

    def receive(self) -> Optional[Frame]:
        """The next decoded frame, or None when the decoder needs another packet (or, after
        flush(), when it is drained)."""
        f = ctypes.c_void_p()
        if lib.mk_decode_session_receive_frame(self._handle(), ctypes.byref(f)) == OK:
            return Frame(f)
        return None

    def _settle(self) -> None:
        """Sends the packet an unfinished decode() iterator left, keeping the frames that
        had to be received first."""
        idle = 0
        while self._pending is not None:
            if self.send(self._pending):
                self._pending = None
                return
            frame = self.receive()
            if frame is None:
                idle += 1                          # the session may have trimmed the waiting frame away
                if idle > 1:
                    raise MediaKitError(ESTATE, "the decoder refused a packet but had no frame to give", "decode")
                continue
            idle = 0
            self._backlog.append(frame)

    def _frames(self) -> Iterator[Frame]:
        while self._backlog:
            yield self._backlog.pop(0)
        idle = 0
        while True:
            frame = self.receive()
            if frame is not None:
                idle = 0
                yield frame
                continue
            if self._pending is None:
                return
            if self.send(self._pending):
                self._pending = None
                idle = 0
                continue
            idle += 1                                  # the session may have trimmed the waiting frame away
            if idle > 1:
                raise MediaKitError(ESTATE, "the decoder refused a packet but had no frame to give", "decode")

    def decode(self, packet: Packet) -> Iterator[Frame]:
        """Sends one packet of this decoder's track now and returns an iterator over the frames
        that become ready, decoded as the iterator is advanced (``list(...)`` for all at once)."""
        if not isinstance(packet, Packet):
            raise TypeError(f"decode() takes a mediakit.Packet, got {type(packet).__name__}")
        self._settle()
        if not self.send(packet):
            self._pending = packet
        return self._frames()

    def flush(self) -> Iterator[Frame]:
        """Ends the stream now and returns an iterator over the decoder's delayed frames."""
        self._settle()
        lib.mk_decode_session_send_packet(self._handle(), None)
        return self._frames()

    def frames(self, packets: Iterable[Packet]) -> Iterator[Frame]:
        """Decodes `packets` (an iterable of this track's packets, e.g. Demuxer.packets(track))
        and then flushes: yields every presented frame, lazily."""
        for packet in packets:
            yield from self.decode(packet)
        yield from self.flush()

    def reset(self) -> None:
        """Drops buffered frames (after Demuxer.seek) and accepts packets again."""
        lib.mk_decode_session_reset(self._handle())
        self._pending = None
        self._backlog = []

    def seek(self, seconds: float) -> None:
        """Sample-accurate seek: moves the track's demuxer to the key frame at or before
        `seconds` (or the one before it, where that key frame opens an open GOP: an H.264 I
        frame that is not an IDR) and drops what the decoder holds; the first frame decoded from the
        demuxer's next packets of this track is the one presented at `seconds` (audio: from
        that exact sample). Needs a decoder made from a Track (one made from CodecParameters
        has no demuxer to move: send it the packets from the new place and call reset())."""
        if self.track is None:
            raise MediaKitError(EINVAL, "this decoder was made from CodecParameters: it has no demuxer to seek "
                                "(send it the packets from the new place after reset())", "seek")
        demuxer = _track_demuxer("seek()", self.track)
        demuxer._busy()
        lib.mk_decode_session_seek(self._handle(), demuxer._handle(), float(seconds))
        self._pending = None
        self._backlog = []

    def frame_at(self, seconds: float) -> Optional[Frame]:
        """The frame presented at `seconds` (audio: starting at that exact sample), or None past
        the end: seek(seconds), then the first frame decoded from the track's packets. The
        demuxer is left after the packets that were read; call seek() or frame_at() again, or
        reset() and Demuxer.seek(), before decoding on."""
        self.seek(seconds)
        demuxer = _track_demuxer("frame_at()", self.track)
        for packet in demuxer.packets(self.track):
            for frame in self.decode(packet):
                return frame
        for frame in self.flush():
            return frame
        return None
