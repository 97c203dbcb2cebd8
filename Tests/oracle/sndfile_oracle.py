"""libsndfile as an oracle for AIFF chunks FFmpeg does not read (the `INST` chunk), through
ctypes over Debian's libsndfile1 (scripts/deps.sh), and AIFF files that carry such a chunk.

libsndfile reads an `INST` chunk (`SFC_GET_INSTRUMENT`: base note, detune, key and velocity
ranges, gain, and each looping loop's frames, taken from the `MARK` chunk's positions) but no
longer writes one, so the files are Python's aifc module's (COMM, SSND, MARK) with an `INST`
chunk laid out by Audio IFF 1.3's table spliced in. Used by Tests/oracle/test_metadata_api.py
and Bindings/python/tests/test_metadata.py."""
from __future__ import annotations

import ctypes
import importlib
import struct
import warnings
from pathlib import Path
from typing import Any, Optional

SFM_READ = 0x10
SFC_GET_INSTRUMENT = 0x10D0
SF_LOOP_NONE = 800


class _Info(ctypes.Structure):
    _fields_ = [("frames", ctypes.c_int64), ("samplerate", ctypes.c_int), ("channels", ctypes.c_int),
                ("format", ctypes.c_int), ("sections", ctypes.c_int), ("seekable", ctypes.c_int)]


class _Loop(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int), ("start", ctypes.c_uint32), ("end", ctypes.c_uint32), ("count", ctypes.c_uint32)]


class _Instrument(ctypes.Structure):
    # sndfile.h's SF_INSTRUMENT: the notes and velocities are `char` (signed on x86-64).
    _fields_ = [("gain", ctypes.c_int), ("basenote", ctypes.c_byte), ("detune", ctypes.c_byte),
                ("velocity_lo", ctypes.c_byte), ("velocity_hi", ctypes.c_byte), ("key_lo", ctypes.c_byte),
                ("key_hi", ctypes.c_byte), ("loop_count", ctypes.c_int), ("loops", _Loop * 16)]


def _sndfile() -> Any:
    sf = ctypes.CDLL("libsndfile.so.1")
    sf.sf_open.restype = ctypes.c_void_p
    sf.sf_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_Info)]
    sf.sf_command.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
    sf.sf_close.argtypes = [ctypes.c_void_p]
    return sf


def instrument(path: Path) -> Optional[dict[str, Any]]:
    """libsndfile's reading of the file's INST chunk, or None when it finds none: the notes,
    velocities and gain, and the (start, end) frames of each loop it counts (a sustain loop
    that does not loop ends its count; libsndfile calls every loop mode forward)."""
    sf = _sndfile()
    info = _Info()
    handle = sf.sf_open(str(path).encode(), SFM_READ, ctypes.byref(info))
    assert handle, f"libsndfile cannot open {path}"
    try:
        got = _Instrument()
        if not sf.sf_command(handle, SFC_GET_INSTRUMENT, ctypes.byref(got), ctypes.sizeof(got)):
            return None
        return {"base_note": got.basenote, "detune": got.detune, "low_note": got.key_lo, "high_note": got.key_hi,
                "low_velocity": got.velocity_lo, "high_velocity": got.velocity_hi, "gain": got.gain,
                "loops": [(got.loops[k].start, got.loops[k].end) for k in range(got.loop_count)]}
    finally:
        sf.sf_close(handle)


def inst_chunk(base_note: int, detune: int, notes: tuple[int, int], velocities: tuple[int, int], gain: int,
               sustain: tuple[int, int, int], release: tuple[int, int, int]) -> bytes:
    """An INST chunk by Audio IFF 1.3's table: six signed bytes (base note, detune, low and high
    note, low and high velocity), a 16-bit gain, then the sustain and release loops (play mode,
    begin marker id, end marker id; 16 bits each), 20 bytes in all."""
    body = struct.pack(">6bh3h3h", base_note, detune, *notes, *velocities, gain, *sustain, *release)
    return b"INST" + struct.pack(">I", len(body)) + body


def aiff_with_chunk(path: Path, markers: list[tuple[int, int, bytes]], chunk: bytes, before_comm: bool) -> None:
    """A 16-bit mono AIFF of 1 s at 8 kHz that Python's aifc module writes with `markers`
    (id, frame, name; it puts MARK after SSND), `chunk` then put in front of COMM or at the
    end, and FORM's size set to match."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        aifc: Any = importlib.import_module("aifc")   # scripts/deps.sh installs standard-aifc on Python 3.13+
    w = aifc.open(str(path), "wb")
    w.setnchannels(1)
    w.setsampwidth(2)
    w.setframerate(8000)
    for marker in markers:
        w.setmark(*marker)
    w.writeframes(bytes(2 * 8000))
    w.close()
    b = path.read_bytes()
    assert b[:4] == b"FORM" and b[8:12] in (b"AIFF", b"AIFC")
    body = b[12:12 + int.from_bytes(b[4:8], "big") - 4]
    comm = body.index(b"COMM")
    body = body[:comm] + chunk + body[comm:] if before_comm else body + chunk
    path.write_bytes(b"FORM" + struct.pack(">I", len(body) + 4) + b[8:12] + body)
