"""Writing: ``Muxer`` (mk_muxer), MP4, Matroska / WebM or Ogg files from tracks or codec
parameters and packets."""

from __future__ import annotations

import ctypes
import os
from types import TracebackType
from typing import Optional, Union

from . import _ffi
from ._ffi import lib
from .errors import MediaKitError
from ._common import PathLike, _Owned, _asset_status, _closed, _path
from ._demux import CodecParameters, Packet, Track


def _muxer_settings(faststart: bool, fragment: Optional[float], hybrid: Optional[float]) -> _ffi.MuxerSettings:
    """The C mk_muxer_settings for one of the layouts (progressive when none is chosen)."""
    if sum(1 for x in (faststart or None, fragment, hybrid) if x is not None) > 1:
        raise ValueError("choose one of faststart, fragment and hybrid")
    s = _ffi.MuxerSettings()
    lib.mk_muxer_default_settings(ctypes.byref(s))
    if faststart:
        s.layout = 1
    elif fragment is not None:
        s.layout, s.fragment_seconds = 2, float(fragment)
    elif hybrid is not None:
        s.layout, s.fragment_seconds = 3, float(hybrid)
    return s


#: mk_muxer_settings' and mk_transcode_settings' ``rf64`` values (MK_RF64_*), by the names
#: ffmpeg's ``-rf64`` takes.
RF64_MODES = {"never": 0, "auto": 1, "always": 2}


def _rf64_mode(rf64: Optional[str]) -> int:
    """A WAV output's ``rf64`` choice as its MK_RF64_* value (None: "never")."""
    if rf64 is None:
        return 0
    if rf64 not in RF64_MODES:
        raise ValueError(f"rf64 is one of {', '.join(RF64_MODES)} (or None: never), not {rf64!r}")
    return RF64_MODES[rf64]


class Muxer(_Owned):
    """Writes a media file from compressed packets (C ``mk_muxer_*``), without decoding: MP4
    (.mp4 .m4a .m4v .mov .3gp), Matroska (.mkv .mka .mk3d), WebM (.webm), Ogg (.ogg .oga
    .opus), FLAC (.flac), MP3 (.mp3), WAV (.wav), AIFF (.aiff .aif .aifc; WAV and AIFF: one
    PCM track, stored in the format's byte order), CAF (.caf: one track of AAC, ALAC, FLAC, Opus
    or PCM, gapless through its packet table), MPEG-TS (.ts) or HLS (.m3u8: a playlist and
    MPEG-TS or, with segment_format="fmp4", fragmented MP4 segments beside it), chosen by `path`'s
    extension (UnsupportedError for another), or by name with ``format`` (as mk-remux --format):
    a built-in muxer ("mp4", "matroska", "webm", "mpegts" ...) or a plugin's ("ffmpeg:avi"), whatever
    the extension (NotFoundError naming it for a name no muxer has; nothing is written). Tracks
    are copies of a demuxer's (a ``Track``: codec configuration, language, rotation, edit list
    kept) or described by ``CodecParameters`` (packets from the caller's own parser, a network,
    an encoder); packets are a demuxer's or made from bytes::

        with mediakit.Muxer("out.mp4") as mux:
            v = mux.add_track(mediakit.CodecParameters("h264", "video", extradata=avcc,
                                                       width=1280, height=720, time_base=Fraction(1, 90000)))
            for data, pts, dts, key in access_units:                 # avcC-style (length-prefixed) NAL units
                mux.write(v, data, pts=pts, dts=dts, duration=3600, is_keyframe=key)

    Leaving the ``with`` block finishes the file; an exception inside it cancels instead. Until
    ``finish()`` the bytes go to a hidden temporary file beside `path` (fragmented and hybrid:
    ``<path>.partial``, a playable file up to its last fragment after a crash): `path` itself
    never holds a half-written file. ``cancel()``, a failed ``finish()``, ``close()`` or the
    object's collection before ``finish()`` remove what was written.

    The layouts are MP4's: faststart=True puts the moov at the front; fragment=SECONDS writes
    a fragmented MP4; hybrid=SECONDS writes fragmented and turns the file progressive when done.
    So are the other options (C ``mk_muxer_settings``; None keeps the default): ``chunk_seconds``
    (progressive / fast-start chunk duration, 0.5), ``movie_time_scale`` (mvhd ticks per second,
    1000), ``reserved_moov_bytes`` (fast-start: room kept for the moov so that finishing copies
    nothing), ``write_mfra`` (fragmented: the mfra index, True) and ``user_data`` (a whole
    ``udta`` box written into the moov, e.g. metadata). HLS takes ``segment_format``: "ts"
    (default) or "fmp4" (init.mp4 and fragmented MP4 segments seg0.m4s ...). WAV takes ``rf64``:
    "never" (default, as ffmpeg: RIFF, at most 4 GiB), "auto" (a JUNK chunk reserved, made a
    ds64 chunk past 4 GiB) or "always" (RF64 whatever the size), as ``ffmpeg -rf64``; other
    formats refuse it (InvalidArgumentError).
    """

    _free = staticmethod(lib.mk_muxer_close)
    _what = "muxer"

    def __init__(self, path: PathLike, *, faststart: bool = False, fragment: Optional[float] = None,
                 hybrid: Optional[float] = None, chunk_seconds: Optional[float] = None,
                 movie_time_scale: Optional[int] = None, reserved_moov_bytes: Optional[int] = None,
                 write_mfra: Optional[bool] = None, user_data: Optional[bytes] = None,
                 segment_format: Optional[str] = None, format: Optional[str] = None, rf64: Optional[str] = None):
        s = _muxer_settings(faststart, fragment, hybrid)
        s.rf64 = _rf64_mode(rf64)
        if format is not None:
            s.format = format.encode()
        if segment_format is not None:
            s.segment_format = segment_format.encode()
        if chunk_seconds is not None:
            s.chunk_seconds = float(chunk_seconds)
        if movie_time_scale is not None:
            s.movie_time_scale = int(movie_time_scale)
        if reserved_moov_bytes is not None:
            s.reserved_moov_bytes = int(reserved_moov_bytes)
        if write_mfra is not None:
            s.write_mfra = 1 if write_mfra else 0
        udta = ctypes.create_string_buffer(bytes(user_data), len(user_data)) if user_data else None
        if udta is not None:
            s.user_data, s.user_data_size = ctypes.cast(udta, ctypes.c_void_p), len(udta)
        h = ctypes.c_void_p()
        lib.mk_muxer_open(ctypes.byref(h), _path(path), ctypes.byref(s))
        super().__init__(h)
        self.path: str = os.fsdecode(path)
        #: "writing", then "finished" or "cancelled".
        self.state: str = "writing"
        self._tracks = 0

    def add_track(self, source: Union[Track, CodecParameters]) -> int:
        """Adds a track before the first write() and returns its index in the new file: a copy of
        a demuxer's Track (its demuxer must be open), or one described by CodecParameters
        (packets' timestamps in its ``time_base``)."""
        h = self._handle()
        index = ctypes.c_int32()
        if isinstance(source, Track):
            demuxer = source._demuxer
            if demuxer is None or demuxer.closed:
                raise _closed("demuxer this track belongs to")
            lib.mk_muxer_add_track(h, demuxer._handle(), source.index, ctypes.byref(index))
        elif isinstance(source, CodecParameters):
            params, keep = source._c()
            lib.mk_muxer_add_track_params(h, ctypes.byref(params), ctypes.byref(index))
            del keep
        else:
            raise TypeError(f"add_track() takes a mediakit.Track or mediakit.CodecParameters, "
                            f"got {type(source).__name__}")
        self._tracks += 1
        return index.value

    def write(self, track: int, packet: Union[Packet, bytes, bytearray, memoryview], *, pts: Optional[int] = None,
              dts: Optional[int] = None, duration: int = 0, is_keyframe: bool = False) -> None:
        """Writes one packet into track `track` (an index add_track returned). `packet` is a Packet
        (read from a demuxer: its timestamps are kept; or made with Packet.create), or the bytes
        of one, with pts, dts (None: the pts, right for audio and for video without reordering),
        duration (0: unknown, taken from the next packet) and is_keyframe, in the track's time
        base. Each track's packets come in decoding order; tracks may interleave in any way."""
        h = self._handle()
        if isinstance(packet, Packet):
            lib.mk_muxer_write_packet(h, int(track), packet._handle())
            return
        if not isinstance(packet, (bytes, bytearray, memoryview)):
            raise TypeError(f"write() takes a mediakit.Packet or bytes, got {type(packet).__name__}")
        if pts is None:
            raise ValueError("write(track, bytes) needs the packet's pts")
        p = Packet.create(packet, pts=pts, dts=dts, duration=duration, is_keyframe=is_keyframe, track=int(track))
        try:
            lib.mk_muxer_write_packet(h, int(track), p._handle())
        finally:
            p.close()

    def finish(self) -> None:
        """Completes the file and moves it to `path`. On failure (StateError when already
        finished or cancelled, MediaIOError) `path` is left untouched."""
        h = self._handle()
        try:
            lib.mk_muxer_finish(h)
        except MediaKitError:
            self.state = "cancelled"     # the library removed what was written
            raise
        self.state = "finished"

    @property
    def in_progress_path(self) -> str:
        """MP4: the file being written now ("<path>.partial" for fragment= and hybrid=, which a
        crash leaves playable up to its last fragment; a hidden temporary file otherwise); the
        target path once finished. UnsupportedError for Matroska and Ogg."""
        path = ctypes.c_char_p()
        lib.mk_muxer_in_progress_path(self._handle(), ctypes.byref(path))
        return os.fsdecode(path.value or b"")

    def cancel(self) -> None:
        """Abandons the file and removes what was written (harmless after finish() or twice)."""
        if self._h is None:
            return
        lib.mk_muxer_cancel(self._h)
        if self.state == "writing":
            self.state = "cancelled"

    def _status(self) -> tuple[str, Optional[MediaKitError]]:
        return _asset_status(lib.mk_muxer_get_status, self._handle(), "write")

    @property
    def status(self) -> str:
        """Where writing stands, as AVAssetWriter's status: "unknown" (no packet yet),
        "writing", "completed" (finish() named the file), "failed" (a write or finish() raised:
        ``error``; a packet refused as invalid leaves it "writing"), "cancelled"."""
        return self._status()[0]

    @property
    def error(self) -> Optional[MediaKitError]:
        """The error that made ``status`` "failed", else None."""
        return self._status()[1]

    def end_track(self, track: int) -> None:
        """Marks `track` finished, its end of stream (AVAssetWriterInput's markAsFinished):
        writing another packet of it raises StateError."""
        lib.mk_muxer_end_track(self._handle(), int(track))

    def track_ended(self, track: int) -> bool:
        """True once end_track(track) was called or the file was finished."""
        ended = ctypes.c_int32(0)
        lib.mk_muxer_track_ended(self._handle(), int(track), ctypes.byref(ended))
        return ended.value != 0

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        """Finishes the file when the block ended normally, cancels it when it raised; closes."""
        try:
            if self._h is not None and self.state == "writing":
                if exc_type is None:
                    self.finish()
                else:
                    self.cancel()
        finally:
            self.close()

    def __repr__(self) -> str:
        return f"<mediakit.Muxer {self.path!r} {self.state if not self.closed else 'closed'}, {self._tracks} tracks>"
