"""Tags, chapters, markers, instrument settings and attachments of a demuxer (issue 33):
``Demuxer.metadata``, ``Demuxer.chapters``, ``Demuxer.markers``, ``Demuxer.instrument``,
``Demuxer.attachments``, ``Track.metadata``."""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterator, Mapping, Optional

from ._ffi import P, _declare, c_handle, c_status, lib
from .errors import check

_declare("mk_demuxer_tag_count", c_status, [c_handle, P(ctypes.c_int32)], True)
_declare("mk_demuxer_tag_at", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_char_p), P(ctypes.c_char_p), P(ctypes.c_char_p)], True)
_declare("mk_track_tag_count", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_int32)], True)
_declare("mk_track_tag_at", c_status,
         [c_handle, ctypes.c_int32, ctypes.c_int32, P(ctypes.c_char_p), P(ctypes.c_char_p), P(ctypes.c_char_p)], True)
_declare("mk_demuxer_chapter_count", c_status, [c_handle, P(ctypes.c_int32)], True)
_declare("mk_demuxer_chapter_at", c_status,
         [c_handle, ctypes.c_int32, P(ctypes.c_int64), P(ctypes.c_int64), P(ctypes.c_int64), P(ctypes.c_int64), P(ctypes.c_char_p)], True)
_declare("mk_demuxer_marker_count", c_status, [c_handle, P(ctypes.c_int32)], True)
_declare("mk_demuxer_marker_at", c_status, [c_handle, ctypes.c_int32, P(ctypes.c_int64), P(ctypes.c_int32), P(ctypes.c_char_p)], True)
_declare("mk_demuxer_instrument", c_status, [c_handle] + [P(ctypes.c_int32)] * 8, True)
_declare("mk_demuxer_instrument_loop", c_status,
         [c_handle, ctypes.c_int32, P(ctypes.c_int32), P(ctypes.c_int32), P(ctypes.c_int32), P(ctypes.c_int64), P(ctypes.c_int64)], True)
_declare("mk_demuxer_attachment_count", c_status, [c_handle, P(ctypes.c_int32)], True)
_declare("mk_demuxer_attachment_at", c_status,
         [c_handle, ctypes.c_int32, P(ctypes.POINTER(ctypes.c_uint8)), P(ctypes.c_int64), P(ctypes.c_char_p), P(ctypes.c_int32),
          P(ctypes.c_char_p), P(ctypes.c_char_p)], True)

for _name in ("mk_demuxer_tag_count", "mk_demuxer_tag_at", "mk_track_tag_count", "mk_track_tag_at", "mk_demuxer_chapter_count",
              "mk_demuxer_chapter_at", "mk_demuxer_marker_count", "mk_demuxer_marker_at", "mk_demuxer_instrument", "mk_demuxer_instrument_loop",
              "mk_demuxer_attachment_count",
              "mk_demuxer_attachment_at"):
    getattr(lib, _name).errcheck = check   # errors.py set the others' before this module declared these


def _text(p: ctypes.c_char_p) -> str:
    return (p.value or b"").decode("utf-8", "replace")


@dataclass(frozen=True)
class Tag:
    """One tag: its normalised key ("title", "album_artist" ...; see docs/metadata.md), the key as
    the file stores it ("TIT2", "TITLE", "INAM" ...), and its value."""
    key: str
    native_key: str
    value: str


class Metadata(Mapping[str, str]):
    """Tags as an ordered, read-only mapping from normalised key (any case) to the first value;
    ``raw`` is every tag in file order (a key may repeat), ``values(key)`` all values of a key."""

    def __init__(self, tags: list[Tag]):
        self.raw: list[Tag] = tags
        self._first: dict[str, str] = {}
        self._keys: list[str] = []
        for t in tags:
            k = t.key.lower()
            if k not in self._first:
                self._first[k] = t.value
                self._keys.append(t.key)

    def __getitem__(self, key: str) -> str:
        return self._first[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)

    def values_for(self, key: str) -> list[str]:
        """Every value of ``key`` (any case), in file order."""
        return [t.value for t in self.raw if t.key.lower() == key.lower()]

    def __repr__(self) -> str:
        return f"Metadata({dict(self)!r})"


@dataclass(frozen=True)
class Chapter:
    """A chapter: start and end in ticks of ``time_base`` seconds (exact), and its title."""
    start: int
    end: int
    time_base: Fraction
    title: str

    @property
    def start_seconds(self) -> float:
        """``start * time_base``."""
        return float(self.start * self.time_base)

    @property
    def end_seconds(self) -> float:
        """``end * time_base``."""
        return float(self.end * self.time_base)


@dataclass(frozen=True)
class Marker:
    """A named place in the sound (an AIFF ``MARK`` chunk's marker): its position in sample
    frames from the start, the file's identifier for it (which AIFF's ``INST`` loops name),
    and its name ("" when none)."""
    frame: int
    id: int
    name: str


@dataclass(frozen=True)
class InstrumentLoop:
    """A loop of an ``Instrument`` between two markers: AIFF's play mode (0 no looping, 1
    forward, 2 forward then backward), the ids of its begin and end markers, and those markers'
    frames (None where the file has no marker with the id)."""
    play_mode: int
    begin_marker: int
    end_marker: int
    begin_frame: Optional[int]
    end_frame: Optional[int]


@dataclass(frozen=True)
class Instrument:
    """How a sampler plays the sound (an AIFF ``INST`` chunk; FFmpeg does not read it): the MIDI
    note that plays it at its recorded pitch, detune in cents, the note and velocity ranges it
    answers, gain in dB, and the sustain and release loops."""
    base_note: int
    detune: int
    low_note: int
    high_note: int
    low_velocity: int
    high_velocity: int
    gain: int
    sustain_loop: InstrumentLoop
    release_loop: InstrumentLoop


@dataclass(frozen=True)
class Attachment:
    """Cover art or an attached file: its bytes, MIME type, ID3 picture type (3: front cover;
    None for a file that is not a picture), description and file name."""
    data: bytes
    mime_type: str
    picture_type: Optional[int]
    description: str
    file_name: str


def read_tags(handle: Any, track: Optional[int] = None) -> Metadata:
    """The container's tags (``track`` None) or a track's, from an open mk_demuxer handle."""
    n = ctypes.c_int32()
    if track is None:
        lib.mk_demuxer_tag_count(handle, ctypes.byref(n))
    else:
        lib.mk_track_tag_count(handle, track, ctypes.byref(n))
    tags = []
    for i in range(n.value):
        k, native, v = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
        if track is None:
            lib.mk_demuxer_tag_at(handle, i, ctypes.byref(k), ctypes.byref(native), ctypes.byref(v))
        else:
            lib.mk_track_tag_at(handle, track, i, ctypes.byref(k), ctypes.byref(native), ctypes.byref(v))
        tags.append(Tag(_text(k), _text(native), _text(v)))
    return Metadata(tags)


def read_chapters(handle: Any) -> list[Chapter]:
    """The chapters of an open mk_demuxer handle, in time order."""
    n = ctypes.c_int32()
    lib.mk_demuxer_chapter_count(handle, ctypes.byref(n))
    out = []
    for i in range(n.value):
        start, end, num, den = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        title = ctypes.c_char_p()
        lib.mk_demuxer_chapter_at(handle, i, ctypes.byref(start), ctypes.byref(end), ctypes.byref(num), ctypes.byref(den),
                                  ctypes.byref(title))
        out.append(Chapter(start.value, end.value, Fraction(num.value, den.value or 1), _text(title)))
    return out


def read_markers(handle: Any) -> list[Marker]:
    """The markers of an open mk_demuxer handle, in file order."""
    n = ctypes.c_int32()
    lib.mk_demuxer_marker_count(handle, ctypes.byref(n))
    out = []
    for i in range(n.value):
        frame, marker_id, name = ctypes.c_int64(), ctypes.c_int32(), ctypes.c_char_p()
        lib.mk_demuxer_marker_at(handle, i, ctypes.byref(frame), ctypes.byref(marker_id), ctypes.byref(name))
        out.append(Marker(frame.value, marker_id.value, _text(name)))
    return out


def read_instrument(handle: Any) -> Optional[Instrument]:
    """The instrument settings of an open mk_demuxer handle, or None."""
    present, *values = (ctypes.c_int32() for _ in range(8))
    lib.mk_demuxer_instrument(handle, ctypes.byref(present), *(ctypes.byref(v) for v in values))
    if not present.value:
        return None
    loops = []
    for loop in (0, 1):
        mode, begin, end = ctypes.c_int32(), ctypes.c_int32(), ctypes.c_int32()
        begin_frame, end_frame = ctypes.c_int64(), ctypes.c_int64()
        lib.mk_demuxer_instrument_loop(handle, loop, ctypes.byref(mode), ctypes.byref(begin), ctypes.byref(end),
                                       ctypes.byref(begin_frame), ctypes.byref(end_frame))
        loops.append(InstrumentLoop(mode.value, begin.value, end.value, begin_frame.value if begin_frame.value >= 0 else None,
                                    end_frame.value if end_frame.value >= 0 else None))
    note, detune, low_note, high_note, low_velocity, high_velocity, gain = (v.value for v in values)
    return Instrument(note, detune, low_note, high_note, low_velocity, high_velocity, gain, loops[0], loops[1])


def read_attachments(handle: Any) -> list[Attachment]:
    """The attachments of an open mk_demuxer handle (bytes copied out), in file order."""
    n = ctypes.c_int32()
    lib.mk_demuxer_attachment_count(handle, ctypes.byref(n))
    out = []
    for i in range(n.value):
        data = ctypes.POINTER(ctypes.c_uint8)()
        size, kind = ctypes.c_int64(), ctypes.c_int32()
        mime, description, name = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
        lib.mk_demuxer_attachment_at(handle, i, ctypes.byref(data), ctypes.byref(size), ctypes.byref(mime), ctypes.byref(kind),
                                     ctypes.byref(description), ctypes.byref(name))
        out.append(Attachment(ctypes.string_at(data, size.value) if size.value else b"", _text(mime),
                              None if kind.value < 0 else kind.value, _text(description), _text(name)))
    return out
