"""``StreamParser`` (mk_stream_parser): a stream's bytes pushed in, its events out."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Optional, Union

from . import _ffi
from ._ffi import lib
from ._common import _Owned


_EVENT_KINDS = {1: "file_format", 2: "data_format", 3: "magic_cookie", 4: "data_offset", 5: "byte_count",
                6: "packet_count", 7: "bit_rate", 8: "duration", 9: "gapless", 10: "tags", 11: "ready",
                12: "packet", 13: "warning"}


@dataclass(frozen=True)
class StreamEvent:
    """One thing a StreamParser learned. ``kind`` says which fields mean something:
    "file_format" (text), "data_format" (text = codec, sample_rate, channels, frames_per_packet),
    "magic_cookie" (data), "data_offset" (offset), "byte_count" / "packet_count" (value),
    "bit_rate" (value; exact), "duration" (seconds; estimated), "gapless" (value = delay,
    value2 = padding), "tags" (text = title), "ready", "packet" (offset, data, frames;
    truncated), "warning" (text)."""
    kind: str
    text: str = ""
    data: bytes = b""
    offset: int = 0
    value: int = 0
    value2: int = 0
    seconds: float = 0.0
    sample_rate: int = 0
    channels: int = 0
    frames_per_packet: int = 0
    frames: int = 0
    flags: int = 0

    @property
    def exact(self) -> bool:
        """bit_rate: constant bit rate."""
        return self.kind == "bit_rate" and bool(self.flags & 1)

    @property
    def estimated(self) -> bool:
        """duration: estimated rather than stated."""
        return self.kind == "duration" and bool(self.flags & 1)

    @property
    def truncated(self) -> bool:
        """packet: the stream ends inside it."""
        return self.kind == "packet" and bool(self.flags & 1)


class StreamParser(_Owned):
    """A push parser for MP3 and ADTS AAC arriving in pieces (iOS's AudioFileStream)::

        with mediakit.StreamParser() as parser:
            for chunk in chunks:
                for event in parser.push(chunk):
                    if event.kind == "packet": ...
            for event in parser.finish(): ...

    Bytes that do not complete a frame are kept: never push them again."""

    _free = staticmethod(lib.mk_stream_parser_close)
    _what = "stream parser"

    def __init__(self, total_bytes: Optional[int] = None):
        h = ctypes.c_void_p()
        lib.mk_stream_parser_open(ctypes.byref(h), -1 if total_bytes is None else int(total_bytes))
        super().__init__(h)

    def _events(self) -> list[StreamEvent]:
        out = []
        e = _ffi.StreamEventInfo(struct_size=ctypes.sizeof(_ffi.StreamEventInfo))
        while lib.mk_stream_parser_next_event(self._handle(), ctypes.byref(e)) == 0:
            out.append(StreamEvent(_EVENT_KINDS.get(e.kind, str(e.kind)), (e.text or b"").decode("utf-8", "replace"),
                                   ctypes.string_at(e.data, e.size) if e.size else b"", e.offset, e.value, e.value2,
                                   e.seconds, e.sample_rate, e.channels, e.frames_per_packet, e.frames, e.flags))
        return out

    def push(self, data: Union[bytes, bytearray, memoryview], discontinuity: bool = False) -> list[StreamEvent]:
        """Parses the next bytes; returns the events that became known (packets last)."""
        b = bytes(data)
        lib.mk_stream_parser_push(self._handle(), b, len(b), 1 if discontinuity else 0)
        return self._events()

    def finish(self) -> list[StreamEvent]:
        """Ends the input: the last frame and the bit rate."""
        lib.mk_stream_parser_finish(self._handle())
        return self._events()

    def seek(self, seconds: float) -> tuple[int, int, bool]:
        """(byte offset to push from with discontinuity=True, packet index, exact)."""
        offset, packet, exact = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int32()
        lib.mk_stream_parser_seek(self._handle(), float(seconds), ctypes.byref(offset), ctypes.byref(packet), ctypes.byref(exact))
        return offset.value, packet.value, bool(exact.value)
