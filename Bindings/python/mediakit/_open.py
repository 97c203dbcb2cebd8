"""``mediakit.open``: a ``Demuxer`` to read or a ``Muxer`` to write, as ``av.open``."""

from __future__ import annotations

import os
from typing import Literal, Optional, Union, overload

from ._common import PathLike
from ._demux import Demuxer, Source
from ._mux import Muxer


@overload
def open(source: Source, mode: Literal["r"] = "r", *, demuxer: Optional[str] = None) -> Demuxer: ...


@overload
def open(source: PathLike, mode: Literal["w"], *, faststart: bool = False, fragment: Optional[float] = None,
         hybrid: Optional[float] = None) -> "Muxer": ...


def open(source: Union[Source, PathLike], mode: str = "r", *, faststart: bool = False,  # noqa: A001 - av.open
         fragment: Optional[float] = None, hybrid: Optional[float] = None,
         demuxer: Optional[str] = None) -> Union[Demuxer, "Muxer"]:
    """Opens a media file to read (``mode="r"``, the default: a Demuxer) or an MP4 file to write
    (``mode="w"``: a Muxer, as ``av.open(path, "w")``; faststart, fragment and hybrid as Muxer's).
    Use either as a context manager.

    Reads MP4 / MOV / M4A (fragmented or not), Ogg (Opus, Vorbis, FLAC), IVF (AV1, VP8, VP9),
    Matroska / WebM, MP3, ADTS AAC, WAV and FLAC files, chosen by their content (not their name).
    `source` is a path (str or os.PathLike), the file's bytes (bytes, bytearray, memoryview:
    copied once into the library), or a binary file object (anything with read() and, to be
    seekable, seek()/tell()/seekable(): io.BufferedReader, io.BytesIO, a socket's makefile('rb')).
    A file object that cannot seek is read once, front to back: Ogg, IVF, Matroska / WebM, MP3,
    ADTS, WAV and MP4 files whose moov comes first open that way; other layouts raise
    UnsupportedError naming the layout. Content no reader recognises raises UnsupportedError,
    damaged content InvalidDataError, a missing file NotFoundError. Containers MediaKit does not
    read itself (AVI, FLV, APE ...) are read through a plugin's demuxer (the FFmpeg plugin's
    libavformat) when no built-in reader claims the bytes. ``demuxer`` names the reader instead
    of probing (as ``av.open(..., format=)``): a built-in format's name ("mp4", "matroska" ...)
    or a plugin's ("ffmpeg:avi", or "avi"), as ``containers()`` lists them; an unknown name
    raises NotFoundError."""
    if mode == "r":
        if faststart or fragment is not None or hybrid is not None:
            raise ValueError("faststart, fragment and hybrid are for writing (mode='w')")
        return Demuxer(source, demuxer=demuxer)
    if mode == "w":
        if not isinstance(source, (str, bytes, os.PathLike)):
            raise TypeError(f"mode 'w' writes to a path (str, bytes or os.PathLike), not {type(source).__name__}")
        if demuxer is not None:
            raise ValueError("demuxer is for reading (mode='r')")
        return Muxer(source, faststart=faststart, fragment=fragment, hybrid=hybrid)
    raise ValueError(f"mode is 'r' (read) or 'w' (write an MP4), not {mode!r}")
