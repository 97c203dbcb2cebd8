"""``StreamParser`` (mk_stream_parser): a stream's bytes pushed in, its events out."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional, Union

from . import _ffi
from ._ffi import P, _declare, c_handle, c_status, lib
from ._common import _Owned
from ._metadata import Attachment, Chapter, Metadata, Tag
from .errors import check


class _Properties(ctypes.Structure):
    """mk_stream_properties."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("ready", ctypes.c_int32), ("file_format", ctypes.c_char_p),
                ("codec", ctypes.c_char_p), ("profile", ctypes.c_char_p), ("sample_rate", ctypes.c_int32),
                ("channels", ctypes.c_int32), ("frames_per_packet", ctypes.c_int32), ("channel_mask", ctypes.c_uint64),
                ("magic_cookie", ctypes.POINTER(ctypes.c_uint8)), ("magic_cookie_size", ctypes.c_size_t),
                ("data_offset", ctypes.c_int64), ("audio_data_byte_count", ctypes.c_int64), ("byte_count_estimated", ctypes.c_int32),
                ("audio_data_packet_count", ctypes.c_int64), ("packet_count_estimated", ctypes.c_int32),
                ("maximum_packet_size", ctypes.c_int32), ("packet_size_upper_bound", ctypes.c_int32),
                ("average_bytes_per_packet", ctypes.c_double), ("bit_rate", ctypes.c_int64), ("bit_rate_exact", ctypes.c_int32),
                ("duration", ctypes.c_double), ("duration_estimated", ctypes.c_int32), ("priming_frames", ctypes.c_int64),
                ("remainder_frames", ctypes.c_int64), ("valid_frames", ctypes.c_int64), ("packets_parsed", ctypes.c_int64),
                ("bytes_parsed", ctypes.c_int64), ("format_count", ctypes.c_int32)]


class _Format(ctypes.Structure):
    """mk_stream_format."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("codec", ctypes.c_char_p), ("profile", ctypes.c_char_p),
                ("sample_rate", ctypes.c_int32), ("channels", ctypes.c_int32), ("frames_per_packet", ctypes.c_int32)]


_CSTR = P(ctypes.c_char_p)
_NEW = {
    "mk_stream_parser_properties": [c_handle, P(_Properties)],
    "mk_stream_parser_format_at": [c_handle, ctypes.c_int32, P(_Format)],
    "mk_stream_parser_packet_to_frame": [c_handle, ctypes.c_int64, P(ctypes.c_int64)],
    "mk_stream_parser_frame_to_packet": [c_handle, ctypes.c_int64, P(ctypes.c_int64), P(ctypes.c_int32)],
    "mk_stream_parser_packet_to_byte": [c_handle, ctypes.c_int64, P(ctypes.c_int64), P(ctypes.c_int32)],
    "mk_stream_parser_byte_to_packet": [c_handle, ctypes.c_int64, P(ctypes.c_int64), P(ctypes.c_int32), P(ctypes.c_int32)],
    "mk_stream_parser_tag_count": [c_handle, P(ctypes.c_int32)],
    "mk_stream_parser_tag_at": [c_handle, ctypes.c_int32, _CSTR, _CSTR, _CSTR],
    "mk_stream_parser_attachment_count": [c_handle, P(ctypes.c_int32)],
    "mk_stream_parser_attachment_at": [c_handle, ctypes.c_int32, P(ctypes.POINTER(ctypes.c_uint8)), P(ctypes.c_int64), _CSTR,
                                       P(ctypes.c_int32), _CSTR, _CSTR],
    "mk_stream_parser_chapter_count": [c_handle, P(ctypes.c_int32)],
    "mk_stream_parser_chapter_at": [c_handle, ctypes.c_int32, P(ctypes.c_int64), P(ctypes.c_int64), P(ctypes.c_int64), P(ctypes.c_int64),
                                    _CSTR],
}
for _name, _args in _NEW.items():
    _declare(_name, c_status, _args, True)
    getattr(lib, _name).errcheck = check   # errors.py set the others' before this module declared these


def _text(p: Any) -> str:
    return (p or b"").decode("utf-8", "replace")


@dataclass(frozen=True)
class StreamFormat:
    """What a stream holds (one layer of ``StreamParser.format_list``): codec ("mp3", "aac" ...),
    samples per second, channels, samples per channel in a packet, and the profile ("LC",
    "HE-AAC", "HE-AACv2" for AAC; "" otherwise)."""
    codec: str
    sample_rate: int
    channels: int
    frames_per_packet: int
    profile: str = ""


@dataclass(frozen=True)
class PacketTableInfo:
    """Priming and remainder samples (per channel) from a LAME tag, and the samples left between
    them (None unless the packet count is exact)."""
    priming_frames: int
    remainder_frames: int
    valid_frames: Optional[int]


_EVENT_KINDS = {1: "file_format", 2: "data_format", 3: "magic_cookie", 4: "data_offset", 5: "byte_count",
                6: "packet_count", 7: "bit_rate", 8: "duration", 9: "gapless", 10: "tags", 11: "ready",
                12: "packet", 13: "warning", 14: "discontinuity"}


@dataclass(frozen=True)
class StreamEvent:
    """One thing a StreamParser learned. ``kind`` says which fields mean something:
    "file_format" (text), "data_format" (text = codec, sample_rate, channels, frames_per_packet),
    "magic_cookie" (data), "data_offset" (offset), "byte_count" / "packet_count" (value),
    "bit_rate" (value; exact), "duration" (seconds; estimated), "gapless" (value = delay,
    value2 = padding), "tags" (text = title; every tag: ``StreamParser.metadata``), "ready",
    "packet" (offset, data, frames; truncated), "warning" (text), "discontinuity" (offset of the
    first frame after a push with discontinuity=True, value = bytes passed over before it)."""
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
    """A push parser for MP3, ADTS AAC, AC-3 / E-AC-3, DTS and AMR, and for WAV / RF64, AIFF,
    CAF, FLAC, Ogg, M4A / MP4 with its ``moov`` first and MPEG-TS (their first audio track, packets
    as the container's demuxer reads them), arriving in pieces (iOS's AudioFileStream)::

        with mediakit.StreamParser() as parser:
            for chunk in chunks:
                for event in parser.push(chunk):
                    if event.kind == "packet": ...
            for event in parser.finish(): ...

    Bytes that do not complete a frame are kept: never push them again. What is known so far is
    readable at any time as attributes (``data_format``, ``bit_rate``, ``duration``,
    ``data_offset`` ...), None until known; ``metadata`` holds every tag read.

    ``file_type_hint`` (Apple's ``inFileTypeHint``) is what the caller believes the stream is: a
    format's name or a file name extension ("wav", "m4a", "aac", "ts" ...). The bytes decide: a
    wrong hint is overridden by them; an unknown one is ignored."""

    _free = staticmethod(lib.mk_stream_parser_close)
    _what = "stream parser"

    def __init__(self, total_bytes: Optional[int] = None, file_type_hint: Optional[str] = None):
        h = ctypes.c_void_p()
        total = -1 if total_bytes is None else int(total_bytes)
        if file_type_hint is None:
            lib.mk_stream_parser_open(ctypes.byref(h), total)
        else:
            lib.mk_stream_parser_open_hint(ctypes.byref(h), total, file_type_hint.encode())
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

    def _props(self) -> _Properties:
        p = _Properties(struct_size=ctypes.sizeof(_Properties))
        lib.mk_stream_parser_properties(self._handle(), ctypes.byref(p))
        return p

    @property
    def ready(self) -> bool:
        """True once the format is known and packets follow."""
        return bool(self._props().ready)

    @property
    def file_format(self) -> Optional[str]:
        """The container: "mp3", "adts", "ac3", "dts" or "amr"; None until known."""
        return _text(self._props().file_format) or None

    @property
    def data_format(self) -> Optional[StreamFormat]:
        """The stream's format as its headers state it; None until known."""
        p = self._props()
        if not p.codec:
            return None
        return StreamFormat(_text(p.codec), p.sample_rate, p.channels, p.frames_per_packet,
                            self.format_list[-1].profile if p.format_count else "")

    @property
    def format_list(self) -> list[StreamFormat]:
        """The format's layers, outermost first (HE-AAC v2: PS, SBR, the AAC LC core); an ADTS
        stream's SBR / PS are found by decoding its first frame. Empty until known."""
        out = []
        for i in range(self._props().format_count):
            f = _Format(struct_size=ctypes.sizeof(_Format))
            lib.mk_stream_parser_format_at(self._handle(), i, ctypes.byref(f))
            out.append(StreamFormat(_text(f.codec), f.sample_rate, f.channels, f.frames_per_packet, _text(f.profile)))
        return out

    @property
    def magic_cookie(self) -> Optional[bytes]:
        """The decoder configuration (ADTS: the AudioSpecificConfig; b"" for MPEG audio); None until known."""
        p = self._props()
        if not p.codec:
            return None
        return ctypes.string_at(p.magic_cookie, p.magic_cookie_size) if p.magic_cookie_size else b""

    @property
    def channel_mask(self) -> Optional[int]:
        """The speakers as WAVE channel-mask bits; None when unknown."""
        return self._props().channel_mask or None

    @property
    def data_offset(self) -> Optional[int]:
        """Offset of the first audio frame; None until known."""
        v = self._props().data_offset
        return None if v < 0 else int(v)

    @property
    def audio_data_byte_count(self) -> Optional[int]:
        """Bytes of audio data (Xing / VBRI's, exact after finish(), else the stream's length less
        data_offset: see audio_data_byte_count_estimated); None when unknown."""
        v = self._props().audio_data_byte_count
        return None if v < 0 else int(v)

    @property
    def audio_data_byte_count_estimated(self) -> bool:
        """True when audio_data_byte_count is an estimate."""
        return bool(self._props().byte_count_estimated)

    @property
    def audio_data_packet_count(self) -> Optional[int]:
        """Audio packets (Xing / VBRI's, exact after finish(), else estimated from the byte count);
        None when unknown."""
        v = self._props().audio_data_packet_count
        return None if v < 0 else int(v)

    @property
    def audio_data_packet_count_estimated(self) -> bool:
        """True when audio_data_packet_count is an estimate."""
        return bool(self._props().packet_count_estimated)

    @property
    def maximum_packet_size(self) -> Optional[int]:
        """The largest packet so far; None before the first."""
        return self._props().maximum_packet_size or None

    @property
    def packet_size_upper_bound(self) -> Optional[int]:
        """The largest packet the format allows; None until known."""
        return self._props().packet_size_upper_bound or None

    @property
    def average_bytes_per_packet(self) -> Optional[float]:
        """The packets' average size so far; None before the first."""
        return self._props().average_bytes_per_packet or None

    @property
    def bit_rate(self) -> Optional[int]:
        """Bits per second: the average of the packets so far (see bit_rate_exact); None until known."""
        v = self._props().bit_rate
        return None if v < 0 else int(v)

    @property
    def bit_rate_exact(self) -> bool:
        """True while every packet had the same bit rate."""
        return bool(self._props().bit_rate_exact)

    @property
    def duration(self) -> Optional[float]:
        """Seconds (Xing / VBRI, ID3 TLEN, exact after finish(), else estimated from the length and
        the bit rate so far: see duration_estimated); None until known."""
        v = self._props().duration
        return None if v < 0 else float(v)

    @property
    def duration_estimated(self) -> bool:
        """True when duration is an estimate."""
        return bool(self._props().duration_estimated)

    @property
    def packet_table_info(self) -> Optional[PacketTableInfo]:
        """Priming and remainder samples from a LAME tag; None without one."""
        p = self._props()
        if p.priming_frames < 0:
            return None
        return PacketTableInfo(int(p.priming_frames), int(p.remainder_frames), None if p.valid_frames < 0 else int(p.valid_frames))

    @property
    def packets_parsed(self) -> int:
        """Packets reported so far."""
        return int(self._props().packets_parsed)

    def packet_to_frame(self, packet: int) -> int:
        """The first sample (per channel) of packet ``packet``."""
        out = ctypes.c_int64()
        lib.mk_stream_parser_packet_to_frame(self._handle(), int(packet), ctypes.byref(out))
        return out.value

    def frame_to_packet(self, frame: int) -> tuple[int, int]:
        """(the packet holding sample ``frame``, the sample's place in it)."""
        packet, offset = ctypes.c_int64(), ctypes.c_int32()
        lib.mk_stream_parser_frame_to_packet(self._handle(), int(frame), ctypes.byref(packet), ctypes.byref(offset))
        return packet.value, offset.value

    def packet_to_byte(self, packet: int) -> tuple[int, bool]:
        """(where packet ``packet`` starts, estimated)."""
        offset, estimated = ctypes.c_int64(), ctypes.c_int32()
        lib.mk_stream_parser_packet_to_byte(self._handle(), int(packet), ctypes.byref(offset), ctypes.byref(estimated))
        return offset.value, bool(estimated.value)

    def byte_to_packet(self, offset: int) -> tuple[int, int, bool]:
        """(the packet holding byte ``offset``, the byte's place in it, estimated)."""
        packet, within, estimated = ctypes.c_int64(), ctypes.c_int32(), ctypes.c_int32()
        lib.mk_stream_parser_byte_to_packet(self._handle(), int(offset), ctypes.byref(packet), ctypes.byref(within), ctypes.byref(estimated))
        return packet.value, within.value, bool(estimated.value)

    @property
    def metadata(self) -> Metadata:
        """Every tag read so far (ID3v2 frames, or the ID3v1 tag), as ``Demuxer.metadata``."""
        n = ctypes.c_int32()
        lib.mk_stream_parser_tag_count(self._handle(), ctypes.byref(n))
        tags = []
        for i in range(n.value):
            k, native, v = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
            lib.mk_stream_parser_tag_at(self._handle(), i, ctypes.byref(k), ctypes.byref(native), ctypes.byref(v))
            tags.append(Tag(_text(k.value), _text(native.value), _text(v.value)))
        return Metadata(tags)

    @property
    def attachments(self) -> list[Attachment]:
        """The ID3v2 tags' pictures (bytes copied out), as ``Demuxer.attachments``."""
        n = ctypes.c_int32()
        lib.mk_stream_parser_attachment_count(self._handle(), ctypes.byref(n))
        out = []
        for i in range(n.value):
            data = ctypes.POINTER(ctypes.c_uint8)()
            size, kind = ctypes.c_int64(), ctypes.c_int32()
            mime, description, name = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
            lib.mk_stream_parser_attachment_at(self._handle(), i, ctypes.byref(data), ctypes.byref(size), ctypes.byref(mime),
                                               ctypes.byref(kind), ctypes.byref(description), ctypes.byref(name))
            out.append(Attachment(ctypes.string_at(data, size.value) if size.value else b"", _text(mime.value),
                                  None if kind.value < 0 else kind.value, _text(description.value), _text(name.value)))
        return out

    @property
    def chapters(self) -> list[Chapter]:
        """The ID3v2 tags' chapters (CHAP), as ``Demuxer.chapters``."""
        n = ctypes.c_int32()
        lib.mk_stream_parser_chapter_count(self._handle(), ctypes.byref(n))
        out = []
        for i in range(n.value):
            start, end, num, den = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
            title = ctypes.c_char_p()
            lib.mk_stream_parser_chapter_at(self._handle(), i, ctypes.byref(start), ctypes.byref(end), ctypes.byref(num),
                                            ctypes.byref(den), ctypes.byref(title))
            out.append(Chapter(start.value, end.value, Fraction(num.value, den.value or 1), _text(title.value)))
        return out
