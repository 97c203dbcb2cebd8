"""MediaKit for Python: read media files track by track and decode them through
MediaKit's codec plugins, over libmediakit's C API (ctypes).

    import mediakit
    with mediakit.open("movie.mp4") as demuxer:
        video = next(t for t in demuxer.tracks if t.media_type == "video")
        decoder = mediakit.Decoder(video)
        for packet in demuxer.packets(video):
            for frame in decoder.decode(packet):
                nv12 = frame.to_numpy()        # (height * 3 // 2, width) uint8
        for frame in decoder.flush():
            ...

Every object owns its C handle and frees it exactly once: call close() (twice is
harmless) or use it as a context manager; a finalizer is only a safety net. Errors from the
library raise the ``MediaKitError`` subclass of their kind (``NotFoundError``,
``InvalidDataError``, ``UnsupportedError`` ... see ``mediakit.errors``) with the status and the
library's message; using a closed object raises ``InvalidArgumentError``. ``MediaError`` is
the older name of ``MediaKitError``.

``Muxer`` writes MP4, Matroska / WebM or Ogg files from a demuxer's tracks or from
``CodecParameters`` and the caller's own packets (``Packet.create``).

A file cut short (it ends inside a packet, page or frame) is read and decoded as far as
it goes, as ffmpeg (and PyAV) do: iteration simply ends, and a ``TruncatedWarning``
naming the offset of the cut is issued through the ``warnings`` module (also listed in
``Demuxer.warnings``). To make it an error::

    import warnings
    warnings.simplefilter("error", mediakit.TruncatedWarning)
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import sys
import weakref
import warnings as _warnings
from dataclasses import dataclass, field
from fractions import Fraction
from types import FrameType, TracebackType
from typing import (Any, AsyncIterator, BinaryIO, Callable, ClassVar, Iterable, Iterator, Literal, Optional, Sequence,
                    TYPE_CHECKING, TypeVar, Union, cast, overload)

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    import numpy.typing as npt
    from typing_extensions import Self

    #: What the array-returning calls give: numpy arrays (bytes when numpy is not installed).
    Array = npt.NDArray[Any]

from . import _ffi
from ._ffi import lib
from .errors import (BackendError, CancelledError, InvalidArgumentError, InvalidDataError, LimitError, MediaError, MediaIOError,
                     MediaKitError, NotFoundError, OutOfMemoryError, PluginError, StateError, TruncatedWarning,
                     UnsupportedError)

try:  # numpy is optional: without it, arrays are bytes and planes are memoryviews.
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None  # type: ignore[assignment]

__all__ = ["MediaKitError", "MediaError", "InvalidArgumentError", "OutOfMemoryError", "UnsupportedError",
           "InvalidDataError", "MediaIOError", "NotFoundError", "StateError", "PluginError", "LimitError",
           "BackendError", "CancelledError", "TruncatedWarning",
           "Plugin", "Track", "Streams", "CodecParameters", "Packet", "Frame", "Demuxer", "Muxer", "Decoder",
           "DecodeSession", "AudioConverter", "Encoder", "StreamParser", "StreamEvent",
           "Backend", "PluginFailure", "Progress", "Orientation", "ContainerFormat", "Recovery",
           "open", "decode", "remux", "transcode", "plugins", "backends", "containers", "plugin_failures",
           "plugin_search_paths",
           "load_plugins", "version", "LIBRARY_PATH", "SCALE_FILTERS"]

#: The libmediakit this package loaded.
LIBRARY_PATH: str = _ffi.PATH

PathLike = Union[str, bytes, "os.PathLike[str]"]
#: A channel layout: a name ("mono", "stereo", "5.1" ...) or a channel count.
Layout = Union[str, int]

_MEDIA_TYPES = {1: "audio", 2: "video", 3: "subtitle", 4: "data"}
_PIXEL_FORMATS = {1: "yuv420p", 2: "yuvj420p", 3: "yuv422p", 4: "yuvj422p", 5: "yuv444p", 6: "yuvj444p",
                  7: "nv12", 8: "yuv420p10le", 9: "yuv422p10le", 10: "yuv444p10le", 11: "p010le",
                  12: "gray", 13: "gray10le", 14: "yuv420p12le"}
_SAMPLE_FORMATS = {1: "u8", 2: "s16", 3: "s32", 4: "flt", 5: "dbl", 6: "u8p", 7: "s16p", 8: "s32p",
                   9: "fltp", 10: "dblp"}
_SAMPLE_DTYPES = {"u8": "u1", "s16": "<i2", "s32": "<i4", "flt": "<f4", "dbl": "<f8"}
_PACK = {"nv12": 1, "i420": 2, "s16": 3, "f32": 4}
#: Scale filters of ``Frame.to_numpy(width=, height=, interpolation=)``: FFmpeg's scale-filter
#: flag names and their MK_SCALE_* values ("bicubic", the ffmpeg tool's, is the default).
SCALE_FILTERS = {"fast_bilinear": 1, "bilinear": 2, "bicubic": 3, "neighbor": 4, "area": 5, "lanczos": 6}
EINVAL = -3


def _warn_truncated() -> None:
    """Issues the last error (the cut) as a TruncatedWarning at the caller's line outside this package."""
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    frame: Optional[FrameType] = sys._getframe(0)
    level = 1
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == here:
        frame, level = frame.f_back, level + 1
    _warnings.warn(lib.mk_last_error().decode("utf-8", "replace"), TruncatedWarning, stacklevel=level)


def _closed(what: str) -> MediaKitError:
    """The error a closed object raises when used (an InvalidArgumentError)."""
    return MediaKitError(EINVAL, f"the {what} is closed")


def _text(b: Optional[bytes]) -> str:
    """A C string from the library as text ("" for NULL)."""
    return b.decode("utf-8", "replace") if b else ""


def _path(p: PathLike) -> bytes:
    if not isinstance(p, (str, bytes, os.PathLike)):
        raise TypeError(f"expected a path (str, bytes or os.PathLike), got {type(p).__name__}")
    return os.fsencode(p)


def version() -> str:
    """The library version, e.g. "0.1.0"."""
    return _text(lib.mk_version())


@dataclass(frozen=True)
class Plugin:
    """A codec plugin libmediakit loaded."""
    name: str
    version: str
    path: str
    codecs: dict[str, int] = field(default_factory=dict)  #: codec name -> priority


def plugins() -> list[Plugin]:
    """The codec plugins found (the default locations are searched on first use)."""
    out = []
    for i in range(lib.mk_plugin_count()):
        info = _ffi.PluginInfo(struct_size=ctypes.sizeof(_ffi.PluginInfo))
        lib.mk_plugin_get_info(i, ctypes.byref(info))
        codecs: dict[str, int] = {}
        for item in _text(info.codecs).split(","):
            if item:
                name, _, prio = item.partition(":")
                codecs[name] = int(prio)
        out.append(Plugin(_text(info.name), _text(info.version), _text(info.path), codecs))
    return out


_BACKEND_KINDS = {1: "decoder", 2: "encoder", 3: "picture_converter"}


@dataclass(frozen=True)
class Backend:
    """A decoder or encoder for a codec, or a picture converter, that a loaded plugin registered
    (C ``mk_backend_info``). ``name`` is what Decoder's / Encoder's ``backend=`` take; among the
    backends of a codec the highest ``priority`` is chosen first. An encoder also says what it
    takes (the other kinds leave those fields empty); a picture converter whether it ``scales``
    and, through ``converts()``, which conversions it makes."""
    kind: str                       #: "decoder", "encoder" or "picture_converter"
    codec: str                      #: FFmpeg's codec name; "" for a picture converter
    name: str
    media_type: str                 #: "audio" or "video"; "" for a picture converter
    priority: int
    plugin: str                     #: the plugin's name ("ffmpeg")
    plugin_path: str                #: the file it was loaded from
    #: Encoder: the sample formats it takes ("s16", "fltp" ...), preferred first.
    sample_formats: tuple[str, ...] = ()
    #: Encoder: the rates it takes (Hz); () means any rate in ``sample_rate_range``.
    sample_rates: tuple[int, ...] = ()
    #: Encoder: with ``sample_rates`` empty, the (lowest, highest) rate it takes.
    sample_rate_range: tuple[int, int] = (0, 0)
    max_channels: int = 0           #: encoder: channels it takes, 1 to this
    #: Encoder: the WAVE channel masks it takes (one per channel count); (): each count's default order.
    channel_masks: tuple[int, ...] = ()
    #: Encoder: the (lowest, highest) bit rate it can be asked for; None when it takes none.
    bit_rate_range: Optional[tuple[int, int]] = None
    scales: bool = False            #: picture converter: it also changes the picture size
    _index: int = field(repr=False, compare=False, default=-1)

    def converts(self, source: str, target: str) -> bool:
        """Picture converter: True when it takes ``source`` pictures and returns ``target`` ones
        (pixel format names as ``Frame.format``: "yuv420p", "nv12" ...). Valid until plugins are
        loaded again (the listing's order changes)."""
        if self.kind != "picture_converter":
            raise InvalidArgumentError(EINVAL, f"{self.name} is a {self.kind}, not a picture converter", "Backend.converts")
        codes = {name: code for code, name in _PIXEL_FORMATS.items()}
        for name in (source, target):
            if name not in codes:
                raise InvalidArgumentError(EINVAL, f"unknown pixel format {name!r} (one of {', '.join(codes)})", "Backend.converts")
        supported = ctypes.c_int32()
        lib.mk_backend_converts(self._index, codes[source], codes[target], ctypes.byref(supported))
        return supported.value == 1


def backends() -> list[Backend]:
    """Every backend of the loaded plugins (the default locations are searched first): the
    decoders, then the encoders, then the picture converters, each by priority, highest first."""
    out = []
    for i in range(lib.mk_backend_count()):
        b = _ffi.BackendInfo(struct_size=ctypes.sizeof(_ffi.BackendInfo))
        lib.mk_backend_get_info(i, ctypes.byref(b))
        out.append(Backend(_BACKEND_KINDS.get(b.kind, str(b.kind)), _text(b.codec), _text(b.name),
                           _MEDIA_TYPES.get(b.media_type, ""), int(b.priority), _text(b.plugin), _text(b.plugin_path),
                           sample_formats=tuple(_SAMPLE_FORMATS.get(b.sample_formats[k], str(b.sample_formats[k]))
                                                for k in range(b.sample_format_count)),
                           sample_rates=tuple(int(b.sample_rates[k]) for k in range(b.sample_rate_count)),
                           sample_rate_range=(int(b.min_sample_rate), int(b.max_sample_rate)),
                           max_channels=int(b.max_channels),
                           channel_masks=tuple(int(b.channel_masks[k]) for k in range(b.channel_mask_count)),
                           bit_rate_range=(int(b.min_bit_rate), int(b.max_bit_rate)) if b.max_bit_rate > 0 else None,
                           scales=b.scales == 1, _index=i))
    return out


@dataclass(frozen=True)
class ContainerFormat:
    """A container format of the library's catalogue (C ``mk_container_info``): one it reads
    (``kind`` "demuxer": ``open`` chooses it by probing the bytes) or writes ("muxer":
    ``Muxer`` and ``remux`` choose it by the target's extension)."""
    kind: str                       #: "demuxer" or "muxer"
    name: str                       #: "mp4", "matroska", "webm", "ogg" ...
    description: str
    extensions: tuple[str, ...]     #: without dots; a muxer's are those that choose it
    mime_types: tuple[str, ...]     #: () for a muxer


def containers() -> list[ContainerFormat]:
    """The container formats MediaKit reads (in the order they are probed), then those it writes."""
    out = []
    for i in range(lib.mk_container_count()):
        c = _ffi.ContainerInfo(struct_size=ctypes.sizeof(_ffi.ContainerInfo))
        lib.mk_container_get_info(i, ctypes.byref(c))
        out.append(ContainerFormat("demuxer" if c.kind == 1 else "muxer", _text(c.name), _text(c.description),
                                   tuple(x for x in _text(c.extensions).split(",") if x),
                                   tuple(x for x in _text(c.mime_types).split(",") if x)))
    return out


@dataclass(frozen=True)
class PluginFailure:
    """A file the plugin registry found but refused: ``message`` names it and says why."""
    path: str
    message: str


def plugin_failures() -> list[PluginFailure]:
    """The plugin files that were found but refused (not a plugin, another plugin ABI, a failed entry point)."""
    out = []
    for i in range(lib.mk_plugin_failure_count()):
        path, message = ctypes.c_char_p(), ctypes.c_char_p()
        lib.mk_plugin_failure(i, ctypes.byref(path), ctypes.byref(message))
        out.append(PluginFailure(_text(path.value), _text(message.value)))
    return out


def plugin_search_paths() -> list[str]:
    """The directories and files the registry searched for plugins: MEDIAKIT_PLUGIN_PATH's
    entries, the library's own directory, <prefix>/lib/mediakit/plugins, those of load_plugins()."""
    out = []
    for i in range(lib.mk_plugin_search_count()):
        path = ctypes.c_char_p()
        lib.mk_plugin_search_path(i, ctypes.byref(path))
        out.append(_text(path.value))
    return out


def load_plugins(path: PathLike) -> None:
    """Loads a plugin file, or every plugin in a directory."""
    lib.mk_plugins_load(_path(path))


@dataclass(frozen=True)
class Edit:
    """One entry of a track's edit list (MP4 elst): ``segment_duration`` in the movie time scale
    (Track.movie_time_scale), ``media_time`` where the span starts in the media (track time base;
    -1 for an empty edit, a gap), ``media_rate`` (1 normal play, 0 a dwell)."""
    segment_duration: int
    media_time: int
    media_rate: float = 1.0


@dataclass(frozen=True)
class Orientation:
    """How a picture is turned for display (C ``mk_orientation``, Swift ``PictureOrientation``):
    swap rows and columns when ``transposed`` (the width becomes the height), then mirror
    left-right when ``hflip``, then top-bottom when ``vflip`` — ffmpeg's ``transpose``, ``hflip``
    and ``vflip`` filters. ``Track.orientation`` is the one FFmpeg's autorotation applies;
    ``Frame.oriented()`` turns a picture by one."""
    transposed: bool = False
    hflip: bool = False
    vflip: bool = False

    @classmethod
    def clockwise(cls, degrees: int) -> "Orientation":
        """A clockwise turn by ``degrees`` (0, 90, 180 or 270; another angle raises InvalidArgumentError)."""
        o = _ffi.Orientation()
        lib.mk_orientation_clockwise(int(degrees), ctypes.byref(o))
        return cls._from_c(o)

    @classmethod
    def _from_c(cls, o: _ffi.Orientation) -> "Orientation":
        return cls(o.transposed == 1, o.hflip == 1, o.vflip == 1)

    @property
    def is_upright(self) -> bool:
        """True when nothing moves."""
        return not (self.transposed or self.hflip or self.vflip)


@dataclass(frozen=True)
class Track:
    """One track of a container (see Demuxer.tracks)."""
    index: int
    id: int
    media_type: str                 #: "audio", "video", "subtitle" or "data"
    codec: str                      #: FFmpeg-style name ("h264"), "" if unknown
    codec_tag: str                  #: sample entry type ("avc1")
    extradata: bytes                #: codec configuration (avcC, AudioSpecificConfig ...)
    time_base: Fraction             #: seconds per timestamp tick
    duration: int                   #: in time-base ticks
    sample_count: int
    width: int
    height: int
    sample_rate: int
    channels: int
    rotation: float                 #: display rotation, degrees counter-clockwise (ffprobe's sign)
    language: str
    frame_rate: Fraction
    encoder_delay: int
    encoder_padding: int
    unsupported: Optional[str]      #: why it cannot be decoded, or None
    reflected: bool = False         #: the display matrix also mirrors the picture (rotation + reflection)
    #: The display matrix (MP4 tkhd), row-major (a b u c d v x y w): a b c d x y in 16.16 fixed
    #: point, u v w in 2.30; the identity when the file has none.
    matrix: tuple[int, ...] = (0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000)
    edits: tuple["Edit", ...] = ()  #: the edit list (MP4 elst), () when none
    movie_time_scale: int = 0       #: ticks per second of the edits' segment_duration (MP4 mvhd)
    bit_rate: int = 0               #: average bits per second the container states, 0 if none
    sample_aspect_ratio: Fraction = Fraction(0)  #: video: pixel aspect ratio the container states (0: none)
    color_range: int = 0            #: video, as the container states: 0 unknown, 1 limited, 2 full
    color_primaries: int = 2        #: ISO/IEC 23091-2 code points; 2: unspecified
    color_transfer: int = 2
    color_space: int = 2            #: the matrix coefficients code point
    channel_mask: int = 0           #: audio: WAVE channel mask the container states, 0 if none
    bits_per_coded_sample: int = 0
    block_align: int = 0            #: audio: bytes per packet of constant-size codecs, 0 if unknown
    reorder_depth: int = 0          #: video: frames of B-frame reordering (from the timestamps)
    encrypted: bool = False         #: an encrypted track (encv / enca)
    trims_on_packets: bool = False  #: the cuts are on the packets (Packet.trim_start / trim_end: Ogg)
    sample_entry: bytes = b""       #: the whole source sample entry (MP4 stsd entry), b"" if none
    _demuxer: Optional["Demuxer"] = field(repr=False, compare=False, default=None)

    @property
    def duration_seconds(self) -> float:
        """The duration in seconds (``duration * time_base``)."""
        return float(self.duration * self.time_base)

    @property
    def presentation_offset(self) -> int:
        """Ticks that place this track's timestamps on the presentation timeline as FFmpeg's
        demuxer gives them (its edit list: a first empty edit's duration minus the media time
        where the first media edit starts; 0 without one): a frame at ``pts`` is presented at
        ``pts + presentation_offset``, the pts ``ffprobe -show_frames`` shows. Needs the
        demuxer open."""
        if self._demuxer is None:
            raise StateError(_ffi.ESTATE, "presentation_offset needs the track's demuxer", "Track.presentation_offset")
        offset = ctypes.c_int64()
        lib.mk_demuxer_presentation_offset(self._demuxer._handle(), self.index, ctypes.byref(offset))
        return offset.value

    @property
    def orientation(self) -> Orientation:
        """How this track's pictures are turned upright for display, as FFmpeg's autorotation
        turns them (from ``matrix``: rotation and reflection; upright for an angle that is not a
        multiple of 90 degrees). ``Frame.oriented(track.orientation)`` applies it."""
        o = _ffi.Orientation()
        lib.mk_orientation_from_matrix((ctypes.c_int32 * 9)(*self.matrix), ctypes.byref(o))
        return Orientation._from_c(o)

    @property
    def type(self) -> str:
        """PyAV's name for ``media_type``: "audio", "video", "subtitle" or "data"."""
        return self.media_type

    @property
    def frames(self) -> int:
        """PyAV's name for ``sample_count``: the packets (frames) the container lists, 0 if unknown."""
        return self.sample_count

    @property
    def average_rate(self) -> Fraction:
        """PyAV's name for ``frame_rate`` (video)."""
        return self.frame_rate

    @property
    def parameters(self) -> "CodecParameters":
        """The track's codec parameters, e.g. to describe it to a Muxer or a Decoder without its demuxer."""
        return CodecParameters(self.codec, self.media_type, extradata=self.extradata, width=self.width,
                               height=self.height, sample_rate=self.sample_rate, channels=self.channels,
                               time_base=self.time_base, reorder_depth=self.reorder_depth, codec_tag=self.codec_tag,
                               language=self.language, matrix=self.matrix, encoder_delay=self.encoder_delay,
                               encoder_padding=self.encoder_padding, bit_rate=self.bit_rate,
                               sample_aspect_ratio=self.sample_aspect_ratio, color_range=self.color_range,
                               color_primaries=self.color_primaries, color_transfer=self.color_transfer,
                               color_space=self.color_space, bits_per_coded_sample=self.bits_per_coded_sample,
                               block_align=self.block_align, channel_mask=self.channel_mask)


_MEDIA_CODES = {name: code for code, name in _MEDIA_TYPES.items()}


@dataclass(frozen=True)
class CodecParameters:
    """A stream described by its codec parameters rather than by a demuxer's track (C
    ``mk_codec_params``, Swift ``CodecParameters``): what a program that parses, receives or
    encodes its own compressed packets gives ``Muxer.add_track`` and ``Decoder``::

        params = mediakit.CodecParameters("h264", "video", extradata=avcc, width=1920, height=1080,
                                          time_base=Fraction(1, 90000))

    ``codec`` is FFmpeg's name ("h264", "hevc", "av1", "aac", "opus" ...); ``extradata`` the codec
    configuration as MP4 stores it (avcC, hvcC, av1C payload, AudioSpecificConfig, OpusHead ...);
    ``time_base`` the unit of the packets' timestamps (an MP4 track's time scale is its
    denominator); ``reorder_depth`` the frames of B-frame reordering when known (0: as the
    bitstream says).

    For a muxer also: ``codec_tag`` ("avc1" or "avc3", "hvc1" or "hev1"; "" for the codec's
    usual one), ``language`` (ISO 639-2/T, "" for "und"), ``matrix`` (the display matrix, 9
    integers row-major as MP4's tkhd: a b u c d v x y w, a b c d x y in 16.16 fixed point, u v w
    in 2.30; None for the identity), ``encoder_delay`` / ``encoder_padding`` (audio priming and
    padding samples, written as an edit list; a decoder drops the delay), ``bit_rate``,
    ``sample_aspect_ratio`` (0 when not stated), the colour code points of ISO/IEC 23091-2
    (``color_range`` 0 unknown, 1 limited, 2 full; ``color_primaries``, ``color_transfer``,
    ``color_space``: 2 unspecified), ``bits_per_coded_sample``, ``block_align`` and
    ``channel_mask`` (a WAVE speaker mask, 0 for none)."""
    codec: str
    media_type: str                 #: "audio" or "video"
    extradata: bytes = b""
    width: int = 0
    height: int = 0
    sample_rate: int = 0
    channels: int = 0
    time_base: Fraction = Fraction(1, 90000)
    reorder_depth: int = 0
    codec_tag: str = ""
    language: str = ""
    matrix: Optional[tuple[int, ...]] = None
    encoder_delay: int = 0
    encoder_padding: int = 0
    bit_rate: int = 0
    sample_aspect_ratio: Fraction = Fraction(0)
    color_range: int = 0
    color_primaries: int = 2
    color_transfer: int = 2
    color_space: int = 2
    bits_per_coded_sample: int = 0
    block_align: int = 0
    channel_mask: int = 0

    def _c(self) -> tuple[_ffi.CodecParams, "ctypes.Array[ctypes.c_uint8]"]:
        """The C struct, and the buffer its extradata points into (keep both alive for the call)."""
        if self.media_type not in ("audio", "video"):
            raise ValueError(f"media_type is 'audio' or 'video', not {self.media_type!r}")
        tb, sar = Fraction(self.time_base), Fraction(self.sample_aspect_ratio)
        for name, value in (("time base", tb.numerator), ("time base", tb.denominator),
                            ("sample aspect ratio", sar.numerator), ("sample aspect ratio", sar.denominator)):
            if not -(1 << 31) <= value < (1 << 31):
                raise ValueError(f"the {name} {value} does not fit the 32-bit fields of mk_codec_params")
        if self.matrix is not None and len(self.matrix) != 9:
            raise ValueError(f"matrix has 9 entries (a b u c d v x y w), not {len(self.matrix)}")
        extradata = (ctypes.c_uint8 * max(1, len(self.extradata))).from_buffer_copy(self.extradata or b"\0")
        p = _ffi.CodecParams()
        lib.mk_codec_params_default(ctypes.byref(p))
        p.media_type = _MEDIA_CODES[self.media_type]
        p.codec = self.codec.encode()
        p.extradata = ctypes.cast(extradata, ctypes.POINTER(ctypes.c_uint8)) if self.extradata else None
        p.extradata_size = len(self.extradata)
        p.width, p.height, p.sample_rate, p.channels = self.width, self.height, self.sample_rate, self.channels
        p.time_base_num, p.time_base_den = tb.numerator, tb.denominator
        p.reorder_depth = self.reorder_depth
        p.codec_tag = self.codec_tag.encode() if self.codec_tag else None
        p.language = self.language.encode() if self.language else None
        if self.matrix is not None:
            p.matrix[:] = list(self.matrix)
        p.encoder_delay, p.encoder_padding, p.bit_rate = self.encoder_delay, self.encoder_padding, self.bit_rate
        p.sample_aspect_num, p.sample_aspect_den = sar.numerator, sar.denominator
        p.color_range, p.color_primaries = self.color_range, self.color_primaries
        p.color_transfer, p.color_space = self.color_transfer, self.color_space
        p.bits_per_coded_sample, p.block_align, p.channel_mask = self.bits_per_coded_sample, self.block_align, self.channel_mask
        return p, extradata


class _Owned:
    """A C handle freed exactly once: by close(), or by the finalizer as a safety net."""

    #: The C function that frees (takes the handle's address).
    _free: ClassVar[Callable[[Any], None]]
    _what: ClassVar[str] = "object"

    def __init__(self, handle: ctypes.c_void_p):
        self._h: Optional[ctypes.c_void_p] = handle

    def _handle(self) -> ctypes.c_void_p:
        if self._h is None:
            raise _closed(self._what)
        return self._h

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._h is None

    def close(self) -> None:
        """Frees the C handle. Harmless when already closed."""
        h, self._h = self._h, None
        if h is not None and h.value:
            type(self)._free(ctypes.byref(h))

    def __enter__(self) -> Self:
        self._handle()
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


# The calls made once per packet, bound again without the errcheck wrapper (lib["name"]
# gives a new function object): their statuses are checked inline.
_raw_read = lib["mk_demuxer_read_packet"]
_raw_read.restype, _raw_read.argtypes = ctypes.c_int32, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
_raw_read_track = lib["mk_demuxer_read_track_packet"]
_raw_read_track.restype = ctypes.c_int32
_raw_read_track.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p)]
_raw_packet_free = lib["mk_packet_free"]
_raw_packet_free.restype, _raw_packet_free.argtypes = None, [ctypes.POINTER(ctypes.c_void_p)]
_PACKET_INFO_SIZE = ctypes.sizeof(_ffi.PacketInfo)


class Packet(_Owned):
    """A compressed packet: track, pts, dts, duration, position, is_keyframe, size, and
    ``data`` (a copy of the bytes). The fields are read from the library on first use."""

    _free = staticmethod(lib.mk_packet_free)
    _what = "packet"
    __slots__ = ("_h", "_info", "_tracks")

    def __init__(self, handle: ctypes.c_void_p, tracks: Optional[Sequence[Track]] = None):
        self._h = handle
        self._info: Optional[_ffi.PacketInfo] = None
        self._tracks = tracks  # the demuxer's tracks, for ``stream``

    @classmethod
    def create(cls, data: Union[bytes, bytearray, memoryview], *, pts: Optional[int] = None,
               dts: Optional[int] = None, duration: int = 0, is_keyframe: bool = False, track: int = 0,
               time_base: Optional[Fraction] = None, duration_stated: bool = False, trim_start: int = 0,
               trim_end: int = 0, discard: bool = False) -> "Packet":
        """A packet of compressed bytes the caller has (its own parser, a network, an encoder), to
        write with ``Muxer.write`` or decode with a ``Decoder`` made from ``CodecParameters``
        (C ``mk_packet_create``; the bytes are copied). Timestamps are in the stream's time base
        (``time_base``, None: not said); None is "no timestamp" (a muxer takes a missing dts as the
        pts). A duration of 0 is unknown unless ``duration_stated``. Audio: ``trim_start`` /
        ``trim_end`` samples to drop from the decoded packet; ``discard``: decode it but output
        nothing."""
        b = bytes(data)
        buf = (ctypes.c_uint8 * max(1, len(b))).from_buffer_copy(b or b"\0")
        tb = Fraction(time_base) if time_base is not None else None
        info = _ffi.PacketInfo(struct_size=_PACKET_INFO_SIZE, track=int(track),
                               pts=_ffi.NOPTS_VALUE if pts is None else int(pts),
                               dts=_ffi.NOPTS_VALUE if dts is None else int(dts), duration=int(duration),
                               position=-1, is_keyframe=int(bool(is_keyframe)),
                               data=ctypes.cast(buf, ctypes.POINTER(ctypes.c_uint8)), size=len(b),
                               time_base_num=tb.numerator if tb else 0, time_base_den=tb.denominator if tb else 0,
                               duration_stated=int(bool(duration_stated)), trim_start=int(trim_start),
                               trim_end=int(trim_end), discard=int(bool(discard)))
        h = ctypes.c_void_p()
        lib.mk_packet_create(ctypes.byref(h), ctypes.byref(info))
        return cls(h)

    def __del__(self) -> None:
        h = self._h
        if h is not None:
            self._h = None
            _raw_packet_free(ctypes.byref(h))

    def _fields(self) -> _ffi.PacketInfo:
        info = self._info
        if info is None:
            info = _ffi.PacketInfo(struct_size=_PACKET_INFO_SIZE)
            lib.mk_packet_get_info(self._handle(), ctypes.byref(info))
            self._info = info
        return info

    @property
    def track(self) -> int:
        """Index of the track."""
        return int(self._fields().track)

    @property
    def pts(self) -> int:
        """Presentation time, track time base."""
        return int(self._fields().pts)

    @property
    def dts(self) -> int:
        """Decoding time, track time base."""
        return int(self._fields().dts)

    @property
    def duration(self) -> int:
        """Duration, track time base."""
        return int(self._fields().duration)

    @property
    def position(self) -> int:
        """Byte offset in the file, -1 if none."""
        return int(self._fields().position)

    @property
    def is_keyframe(self) -> bool:
        """True for a sync sample."""
        return bool(self._fields().is_keyframe)

    @property
    def size(self) -> int:
        """Bytes of compressed data."""
        return int(self._fields().size)

    @property
    def duration_stated(self) -> bool:
        """The container states the duration, 0 included (an MP4 stts entry of 0); False: unknown."""
        return bool(self._fields().duration_stated)

    @property
    def trim_start(self) -> int:
        """Audio: samples to drop from the start of the decoded packet (Ogg Opus pre-skip ...)."""
        return int(self._fields().trim_start)

    @property
    def trim_end(self) -> int:
        """Audio: samples to drop from the end of the decoded packet."""
        return int(self._fields().trim_end)

    @property
    def truncated(self) -> bool:
        """The file ends inside this packet (``data`` holds what there is)."""
        return bool(self._fields().truncated)

    @property
    def discard(self) -> bool:
        """Decode it, but do not output its frames."""
        return bool(self._fields().discard)

    @property
    def parameters_changed(self) -> bool:
        """The first packet after the codec parameters changed (a chained Ogg link); MediaKit's
        decoders follow the change themselves."""
        return bool(self._fields().parameters_changed)

    @property
    def data(self) -> bytes:
        """The compressed bytes (a copy)."""
        info = self._fields()
        return ctypes.string_at(info.data, info.size) if info.size else b""

    def __bytes__(self) -> bytes:
        """``bytes(packet)``, as PyAV's packets: the compressed bytes."""
        return self.data

    @property
    def stream_index(self) -> int:
        """PyAV's name for ``track``."""
        return self.track

    @property
    def stream(self) -> Optional[Track]:
        """The Track this packet was read from (PyAV's ``packet.stream``); None for a packet made
        with ``Packet.create`` or an encoder's."""
        tracks = self._tracks
        return tracks[self.track] if tracks is not None and 0 <= self.track < len(tracks) else None

    @property
    def time_base(self) -> Optional[Fraction]:
        """The time base of pts, dts and duration: the track's; None when not known (a packet made
        with Packet.create without one)."""
        info = self._fields()
        if info.time_base_den > 0:
            return Fraction(info.time_base_num, info.time_base_den)
        track = self.stream
        return track.time_base if track is not None else None

    @property
    def time(self) -> Optional[float]:
        """The presentation time in seconds (``pts * time_base``), None when either is unknown."""
        tb = self.time_base
        pts = self.pts
        return float(pts * tb) if tb is not None and pts != _ffi.NOPTS_VALUE else None

    def __repr__(self) -> str:
        if self.closed:
            return "<mediakit.Packet closed>"
        return (f"Packet(track={self.track}, pts={self.pts}, dts={self.dts}, duration={self.duration}, "
                f"size={self.size}, position={self.position}, key={self.is_keyframe})")


def _check_read(status: int, function: str) -> bool:
    """True for a packet, False at the end (and at the cut of a file cut short, with a
    TruncatedWarning); raises the MediaKitError of the status on an error."""
    if status == _ffi.OK:
        return True
    if status == _ffi.EOF:
        return False
    if status == _ffi.ETRUNCATED:
        _warn_truncated()
        return False
    raise MediaKitError(status, lib.mk_last_error().decode("utf-8", "replace"), function)


Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO]


class _Reader:
    """mk_io callbacks over a Python binary file object (kept alive with the demuxer).

    An exception raised by the file object is kept and re-raised by the call that read."""

    def __init__(self, f: BinaryIO):
        self.f = f
        self.error: Optional[BaseException] = None
        seekable = bool(getattr(f, "seekable", lambda: False)())
        self.start = f.tell() if seekable else 0
        size = -1
        if seekable:
            end = f.seek(0, os.SEEK_END)
            f.seek(self.start)
            size = end - self.start
        self.size = size

        def read(_user: Optional[int], buffer: Any, n: int) -> int:
            try:
                address = ctypes.cast(buffer, ctypes.c_void_p).value or 0
                readinto = getattr(f, "readinto", None)
                if readinto is not None:
                    return int(readinto((ctypes.c_char * n).from_address(address)) or 0)
                chunk = f.read(n)
                ctypes.memmove(address, chunk, len(chunk))
                return len(chunk)
            except BaseException as e:  # kept, re-raised by the caller
                self.error = e
                return -1

        def seek(_user: Optional[int], offset: int) -> int:
            try:
                f.seek(self.start + offset)
                return 0
            except BaseException as e:
                self.error = e
                return -1

        name = getattr(f, "name", None)
        self.io = _ffi.IO(struct_size=ctypes.sizeof(_ffi.IO), read=_ffi.IO_READ(read),
                          seek=_ffi.IO_SEEK(seek) if seekable else _ffi.IO_SEEK(),
                          size=_ffi.IO_SIZE(lambda _u: self.size),
                          name=(name if isinstance(name, str) else "file object").encode())


class Demuxer(_Owned):
    """An open media file. Iterating it yields every packet in file order.

    Use ``mediakit.open(source)``; close it (or use ``with``) when done.
    """

    _free = staticmethod(lib.mk_demuxer_close)
    _what = "demuxer"

    def __init__(self, source: Source):
        h = ctypes.c_void_p()
        self._reader: Optional[_Reader] = None
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source) if not isinstance(source, bytes) else source
            lib.mk_demuxer_open_memory(ctypes.byref(h), data, len(data))
            self.path = "memory"
        elif hasattr(source, "read"):
            self._reader = _Reader(source)  # type: ignore[arg-type]
            try:
                lib.mk_demuxer_open_io(ctypes.byref(h), ctypes.byref(self._reader.io), None)
            except MediaKitError:
                if self._reader.error is not None:
                    raise self._reader.error
                raise
            self.path = self._reader.io.name.decode()
        else:
            if not isinstance(source, (str, os.PathLike)):
                raise TypeError(f"expected a path (str or os.PathLike), bytes, a memoryview or a binary "
                                f"file object, got {type(source).__name__}")
            lib.mk_demuxer_open(ctypes.byref(h), _path(source))
            self.path = os.fsdecode(source)
        super().__init__(h)
        n = ctypes.c_int32()
        lib.mk_demuxer_track_count(h, ctypes.byref(n))
        d = ctypes.c_double()
        lib.mk_demuxer_duration(h, ctypes.byref(d))
        self.duration: float = d.value
        name = ctypes.c_char_p()
        lib.mk_demuxer_container(h, ctypes.byref(name))
        #: The container format's short name, FFmpeg's demuxer name: "mp4" (also MOV, M4A),
        #: "matroska" (also WebM), "ogg", "ivf", "mp3", "aac", "wav", "flac"; one of the names
        #: ffprobe lists in format_name ("mov,mp4,m4a,3gp,3g2,mj2").
        self.container: str = (name.value or b"").decode()
        self.tracks: list[Track] = [self._track(i) for i in range(n.value)]
        #: The tracks by kind, as PyAV's ``container.streams``: ``streams.video[0]``, ``streams.audio[0]``.
        self.streams = Streams(self.tracks)
        self._session: Optional[weakref.ref[DecodeSession]] = None  # the DecodeSession reading this demuxer, if any

    def _track(self, i: int) -> Track:
        t = _ffi.TrackInfo(struct_size=ctypes.sizeof(_ffi.TrackInfo))
        lib.mk_demuxer_track(self._h, i, ctypes.byref(t))
        s = _text
        return Track(t.index, t.id, _MEDIA_TYPES.get(t.media_type, "data"), s(t.codec), s(t.codec_tag),
                     ctypes.string_at(t.extradata, t.extradata_size) if t.extradata_size else b"",
                     Fraction(t.time_base_num, t.time_base_den or 1), t.duration, t.sample_count,
                     t.width, t.height, t.sample_rate, t.channels, t.rotation, s(t.language),
                     Fraction(t.frame_rate_num, t.frame_rate_den or 1), t.encoder_delay, t.encoder_padding,
                     s(t.unsupported) or None, bool(t.reflected), matrix=tuple(t.matrix),
                     edits=tuple(Edit(e.segment_duration, e.media_time, e.media_rate)
                                 for e in (t.edits[i] for i in range(t.edit_count))),
                     movie_time_scale=t.movie_time_scale, bit_rate=t.bit_rate,
                     sample_aspect_ratio=Fraction(t.sample_aspect_num, t.sample_aspect_den or 1),
                     color_range=t.color_range, color_primaries=t.color_primaries, color_transfer=t.color_transfer,
                     color_space=t.color_space, channel_mask=t.channel_mask,
                     bits_per_coded_sample=t.bits_per_coded_sample, block_align=t.block_align,
                     reorder_depth=t.reorder_depth, encrypted=bool(t.encrypted),
                     trims_on_packets=bool(t.trims_on_packets),
                     sample_entry=ctypes.string_at(t.sample_entry, t.sample_entry_size) if t.sample_entry_size else b"",
                     _demuxer=self)

    def _busy(self) -> None:
        """Raises when a DecodeSession reads this demuxer (on its own thread)."""
        session = self._session() if self._session is not None else None
        if session is not None and not session.closed:
            raise MediaKitError(_ffi.ESTATE, "a DecodeSession (from decode()) reads this demuxer: close it first, "
                             "or use its seek()", "demuxer")

    def read(self) -> Optional[Packet]:
        """The next packet in file order, or None at the end."""
        h = self._h
        if h is None:
            raise _closed(self._what)
        if self._session is not None:
            self._busy()
        p = ctypes.c_void_p()
        status = _raw_read(h, ctypes.byref(p))
        if status:
            _check_read(status, "mk_demuxer_read_packet")
            return None
        return Packet(p, self.tracks)

    def read_track(self, track: Union[int, Track]) -> Optional[Packet]:
        """The next packet of one track (independent of read()), or None at its end."""
        index = track.index if isinstance(track, Track) else int(track)
        self._busy()
        p = ctypes.c_void_p()
        if not _check_read(_raw_read_track(self._handle(), index, ctypes.byref(p)), "mk_demuxer_read_track_packet"):
            return None
        return Packet(p, self.tracks)

    def packets(self, track: Union[int, Track, None] = None) -> Iterator[Packet]:
        """Every packet (of one track, or in file order)."""
        read = self.read if track is None else (lambda: self.read_track(track))
        while True:
            p = read()
            if p is None:
                return
            yield p

    def __iter__(self) -> Iterator[Packet]:
        return self.packets()

    def demux(self, *streams: Union[int, Track]) -> Iterator[Packet]:
        """PyAV's ``container.demux(stream)``: the packets of one track, or of several (or all,
        with none given) in file order."""
        if len(streams) == 1:
            return self.packets(streams[0])
        if not streams:
            return self.packets()
        wanted = {s.index if isinstance(s, Track) else int(s) for s in streams}
        return (p for p in self.packets() if p.track in wanted)

    @property
    def warnings(self) -> list[str]:
        """What reading stepped over so far, oldest first: damage the demuxer skipped (an Ogg
        page with a bad CRC) and, once reached, the cut of a file cut short."""
        h = self._handle()
        n = ctypes.c_int32()
        lib.mk_demuxer_warning_count(h, ctypes.byref(n))
        out = []
        for i in range(n.value):
            m = ctypes.c_char_p()
            lib.mk_demuxer_warning(h, i, ctypes.byref(m))
            out.append((m.value or b"").decode("utf-8", "replace"))
        return out

    def seek(self, seconds: float) -> None:
        """Moves every track to the key frame at or before `seconds`. While a decode() session
        reads this demuxer, that session seeks instead, sample-accurately: the next frame it
        yields is the one presented at `seconds` (audio: from that exact sample)."""
        session = self._session() if self._session is not None else None
        if session is not None and not session.closed:
            session.seek(seconds)
            return
        lib.mk_demuxer_seek(self._handle(), float(seconds))

    def decode(self, *streams: Union[int, Track], video: Optional[int] = None, audio: Optional[int] = None,
               **options: Any) -> "DecodeSession":
        """Decodes one track, as PyAV's ``container.decode(video=0)``: ``video=N`` / ``audio=N``
        pick the N-th video / audio track, a Track (or a track index) picks that one. Returns a
        DecodeSession, which yields the presented frames (``for frame in ...``, or ``async for``),
        decoded ahead on the library's thread; ``options`` are DecodeSession's (trim, threads,
        backend, recovery, queue_frames ...). The session reads this demuxer until it is closed
        (a new decode() closes the previous one); meanwhile ``seek(t)`` seeks it."""
        picked: list[Track] = []
        for s in streams:
            picked.append(s if isinstance(s, Track) else self.tracks[int(s)])
        if video is not None:
            picked.append(self.streams.video[video])
        if audio is not None:
            picked.append(self.streams.audio[audio])
        if len(picked) != 1:
            raise ValueError(f"decode() decodes one track at a time; {len(picked)} were given "
                             "(e.g. decode(video=0) or decode(audio=0))")
        previous = self._session() if self._session is not None else None
        if previous is not None:
            previous.close()
        session = DecodeSession(picked[0], **options)
        self._session = weakref.ref(session)
        return session

    def select(self, tracks: Optional[Sequence[Union[int, Track]]]) -> None:
        """Limits iteration to these tracks (None: all); the others' data is never read."""
        items = [t.index if isinstance(t, Track) else int(t) for t in (tracks or [])]
        arr = (ctypes.c_int32 * max(1, len(items)))(*items)
        lib.mk_demuxer_select_tracks(self._handle(), arr, len(items))

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"{len(self.tracks)} tracks"
        return f"<mediakit.Demuxer {self.path!r} {state}>"


class Streams:
    """A demuxer's tracks by kind, as PyAV's ``container.streams``."""

    def __init__(self, tracks: list[Track]):
        #: The video tracks, in file order.
        self.video: tuple[Track, ...] = tuple(t for t in tracks if t.media_type == "video")
        #: The audio tracks, in file order.
        self.audio: tuple[Track, ...] = tuple(t for t in tracks if t.media_type == "audio")
        #: The subtitle tracks, in file order.
        self.subtitles: tuple[Track, ...] = tuple(t for t in tracks if t.media_type == "subtitle")
        #: The data tracks (timed metadata, chapters ...), in file order.
        self.data: tuple[Track, ...] = tuple(t for t in tracks if t.media_type == "data")
        self._all = tuple(tracks)

    def __iter__(self) -> Iterator[Track]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)

    def __getitem__(self, i: int) -> Track:
        return self._all[i]


@overload
def open(source: Source, mode: Literal["r"] = "r") -> Demuxer: ...


@overload
def open(source: PathLike, mode: Literal["w"], *, faststart: bool = False, fragment: Optional[float] = None,
         hybrid: Optional[float] = None) -> "Muxer": ...


def open(source: Union[Source, PathLike], mode: str = "r", *, faststart: bool = False,  # noqa: A001 - av.open
         fragment: Optional[float] = None, hybrid: Optional[float] = None) -> Union[Demuxer, "Muxer"]:
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
    damaged content InvalidDataError, a missing file NotFoundError."""
    if mode == "r":
        if faststart or fragment is not None or hybrid is not None:
            raise ValueError("faststart, fragment and hybrid are for writing (mode='w')")
        return Demuxer(source)
    if mode == "w":
        if not isinstance(source, (str, bytes, os.PathLike)):
            raise TypeError(f"mode 'w' writes to a path (str, bytes or os.PathLike), not {type(source).__name__}")
        return Muxer(source, faststart=faststart, fragment=fragment, hybrid=hybrid)
    raise ValueError(f"mode is 'r' (read) or 'w' (write an MP4), not {mode!r}")


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


class Muxer(_Owned):
    """Writes a media file from compressed packets (C ``mk_muxer_*``), without decoding: MP4
    (.mp4 .m4a .m4v .mov .3gp), Matroska (.mkv .mka .mk3d), WebM (.webm) or Ogg (.ogg .oga
    .opus), chosen by `path`'s extension (UnsupportedError for another). Tracks
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
    ``udta`` box written into the moov, e.g. metadata).
    """

    _free = staticmethod(lib.mk_muxer_close)
    _what = "muxer"

    def __init__(self, path: PathLike, *, faststart: bool = False, fragment: Optional[float] = None,
                 hybrid: Optional[float] = None, chunk_seconds: Optional[float] = None,
                 movie_time_scale: Optional[int] = None, reserved_moov_bytes: Optional[int] = None,
                 write_mfra: Optional[bool] = None, user_data: Optional[bytes] = None):
        s = _muxer_settings(faststart, fragment, hybrid)
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


class _FrameMemory:
    """Keeps a decoded frame's memory alive for as long as a view of it exists."""

    __slots__ = ("h",)

    def __init__(self, h: ctypes.c_void_p):
        self.h: Optional[ctypes.c_void_p] = h

    def __del__(self) -> None:
        h = self.h
        if h is not None and h.value:
            lib.mk_frame_free(ctypes.byref(h))
            self.h = None


class Frame:
    """A decoded picture or run of audio samples.

    ``planes`` are views of the decoder's memory (no copy), which keep it alive;
    ``to_numpy()`` packs the frame into a new array (NV12 / I420 for video, interleaved
    s16 / f32 for audio) in one pass, and ``to_numpy(layout, planes=True)`` gives the
    layout's planes as views of the decoder's memory when it already holds them (no
    conversion or packing needed). close() releases the frame's reference; memory that a
    view still uses is freed when the last view goes.
    """

    __slots__ = ("_mem", "media_type", "format", "pts", "duration", "time_base", "width", "height",
                 "sample_rate", "channels", "sample_count", "_info", "__weakref__")

    def __init__(self, handle: ctypes.c_void_p):
        self._mem: Optional[_FrameMemory] = _FrameMemory(handle)
        info = _ffi.FrameInfo(struct_size=ctypes.sizeof(_ffi.FrameInfo))
        lib.mk_frame_get_info(handle, ctypes.byref(info))
        self._info = info
        #: "video" or "audio".
        self.media_type: str = _MEDIA_TYPES.get(info.media_type, "data")
        #: The decoder's pixel format ("yuv420p", "nv12", "yuv420p10le" ...) or sample format ("fltp", "s16" ...).
        self.format: str = (_PIXEL_FORMATS if info.media_type == 2 else _SAMPLE_FORMATS).get(info.format, "unknown")
        #: Presentation time, in time_base units.
        self.pts: int = int(info.pts)
        #: Duration, in time_base units.
        self.duration: int = int(info.duration)
        #: Seconds per pts tick.
        self.time_base: Fraction = Fraction(info.time_base_num, info.time_base_den or 1)
        #: Picture size in pixels (0 for audio).
        self.width: int = int(info.width)
        self.height: int = int(info.height)
        #: Audio: samples per second, channels, samples per channel (0 for pictures).
        self.sample_rate: int = int(info.sample_rate)
        self.channels: int = int(info.channels)
        self.sample_count: int = int(info.sample_count)

    def _memory(self) -> _FrameMemory:
        if self._mem is None:
            raise _closed("frame")
        return self._mem

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._mem is None

    def close(self) -> None:
        """Releases this frame (harmless twice); views taken earlier stay valid."""
        self._mem = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: Optional[type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    @property
    def planes(self) -> tuple[Array, ...]:
        """Read-only views of each plane, without a copy: numpy arrays (video: rows x bytes per
        row, audio: the plane's samples) when numpy is installed, memoryviews otherwise. They
        are read-only because the decoder may still read a picture as a reference."""
        mem = self._memory()
        info = self._info
        views: list[Any] = []
        for i in range(info.plane_count):
            size = info.plane_sizes[i]
            buf = (ctypes.c_uint8 * size).from_address(info.planes[i])
            setattr(buf, "_owner", mem)  # the view keeps the frame's memory alive
            if _np is None:
                views.append(memoryview(buf).toreadonly())
                continue
            if self.media_type == "video":
                stride = info.strides[i]
                view = _np.frombuffer(buf, dtype=_np.uint8).reshape(size // stride, stride)
            else:
                fmt = self.format.rstrip("p")
                view = _np.frombuffer(buf, dtype=_SAMPLE_DTYPES.get(fmt, "u1"))
            view.flags.writeable = False
            views.append(view)
        return tuple(views)

    @property
    def time(self) -> float:
        """The presentation time in seconds (``pts * time_base``), as PyAV's ``frame.time``."""
        return float(self.pts * self.time_base)

    @property
    def is_keyframe(self) -> bool:
        """Video: a key frame."""
        return bool(self._info.is_keyframe)

    @property
    def key_frame(self) -> bool:
        """PyAV's name for ``is_keyframe``."""
        return self.is_keyframe

    @property
    def color_range(self) -> int:
        """Video: 0 unknown, 1 limited (MPEG), 2 full (JPEG)."""
        return int(self._info.color_range)

    @property
    def color_primaries(self) -> int:
        """Video: ISO/IEC 23091-2 code point (1 BT.709, 2 unspecified, 9 BT.2020 ...)."""
        return int(self._info.color_primaries)

    @property
    def color_transfer(self) -> int:
        """Video: ISO/IEC 23091-2 transfer characteristics code point (2 unspecified)."""
        return int(self._info.color_transfer)

    @property
    def color_space(self) -> int:
        """Video: ISO/IEC 23091-2 matrix coefficients code point (1 BT.709, 2 unspecified, 6 BT.601 ...)."""
        return int(self._info.color_space)

    @property
    def chroma_location(self) -> int:
        """Video: 0 unspecified, 1 left, 2 center, 3 top-left, 4 top, 5 bottom-left, 6 bottom (FFmpeg's AVChromaLocation)."""
        return int(self._info.chroma_location)

    @property
    def sample_aspect_ratio(self) -> Fraction:
        """Video: the shape of one pixel; 0 when unknown."""
        return Fraction(self._info.sample_aspect_num, self._info.sample_aspect_den or 1)

    @property
    def channel_mask(self) -> int:
        """Audio: the WAVE channel mask of the speakers, 0 if unknown."""
        return int(self._info.channel_mask)

    @property
    def samples(self) -> int:
        """PyAV's name for ``sample_count`` (audio: samples per channel; 0 for a picture)."""
        return self.sample_count

    @property
    def rate(self) -> int:
        """PyAV's name for ``sample_rate`` (audio; 0 for a picture)."""
        return self.sample_rate

    @overload
    def to_ndarray(self, layout: Optional[str] = None, *, planes: Literal[False] = False, format: Optional[str] = None,
                   rate: Optional[int] = None, out: Optional[Array] = None, width: Optional[int] = None,
                   height: Optional[int] = None, interpolation: Optional[str] = None) -> Array: ...

    @overload
    def to_ndarray(self, layout: Optional[str] = None, *, planes: Literal[True], format: Optional[str] = None,
                   rate: Optional[int] = None, out: Optional[Array] = None, width: Optional[int] = None,
                   height: Optional[int] = None, interpolation: Optional[str] = None) -> tuple[Array, ...]: ...

    def to_ndarray(self, layout: Optional[str] = None, *, planes: bool = False, format: Optional[str] = None,
                   rate: Optional[int] = None, out: Optional[Array] = None, width: Optional[int] = None,
                   height: Optional[int] = None, interpolation: Optional[str] = None) -> Union[Array, tuple[Array, ...]]:
        """PyAV's name for ``to_numpy()``."""
        if planes:
            return self.to_numpy(layout, planes=True, format=format, rate=rate, out=out, width=width, height=height,
                                 interpolation=interpolation)
        return self.to_numpy(layout, format=format, rate=rate, out=out, width=width, height=height,
                             interpolation=interpolation)

    @overload
    def to_numpy(self, layout: Optional[str] = None, *, planes: Literal[False] = False, format: Optional[str] = None,
                 rate: Optional[int] = None, out: Optional[Array] = None, width: Optional[int] = None,
                 height: Optional[int] = None, interpolation: Optional[str] = None) -> Array: ...

    @overload
    def to_numpy(self, layout: Optional[str] = None, *, planes: Literal[True], format: Optional[str] = None,
                 rate: Optional[int] = None, out: Optional[Array] = None, width: Optional[int] = None,
                 height: Optional[int] = None, interpolation: Optional[str] = None) -> tuple[Array, ...]: ...

    def to_numpy(self, layout: Optional[str] = None, *, planes: bool = False, format: Optional[str] = None,
                 rate: Optional[int] = None, out: Optional[Array] = None, width: Optional[int] = None,
                 height: Optional[int] = None, interpolation: Optional[str] = None) -> Union[Array, tuple[Array, ...]]:
        """The frame in a packed layout: video as "nv12" (default) or "i420", audio as "s16"
        (default) or "f32". Pictures that are not 8-bit 4:2:0 (10-bit, 4:4:4, 4:2:2, full
        range) are converted first by a plugin's picture converter (the FFmpeg plugin's:
        libswscale, as ``ffmpeg -pix_fmt`` converts); UnsupportedError when no plugin has one.

        Video at another size: ``width`` and ``height`` (both; as PyAV's ``to_ndarray``),
        resampled with ``interpolation``, one of SCALE_FILTERS (default "bicubic", the ffmpeg
        tool's): the bytes of ``ffmpeg -vf scale=W:H:flags=bicubic -pix_fmt nv12`` (through
        mk_frame_pack_scaled; a picture already of that size is packed as it is).

        Audio through an AudioConverter: ``format`` (any sample format: "u8", "s16", "s24",
        "s32", "f32", "f64", "p" suffix for planar), ``rate``, and a channel layout as
        ``layout`` ("mono", "stereo", "5.1" ... or a count), e.g.
        ``frame.to_numpy(format="f32", rate=16000, layout="mono")``. The frame is converted on
        its own (the resampler's edges are this frame's): for a stream, use one
        ``AudioConverter`` for all its frames.

        By default the result is one new array: NV12 of shape (height + (height+1)//2, width),
        I420 flat, audio (samples, channels); bytes when numpy is not installed. ``out=`` packs
        into a caller's array instead (C-contiguous, writable, of the layout's dtype — uint8,
        int16 or float32 — and at least as large) and returns a view of it in that shape, so a
        loop over a stream reuses one buffer instead of allocating a frame's worth per frame.

        ``planes=True`` (video) returns a tuple of 2-D uint8 arrays, one per plane of the
        layout (NV12: Y, UV; I420: Y, U, V), each (rows, bytes per row). When the frame's
        memory already holds the layout plane by plane (an NV12 picture as "nv12", a yuv420p
        picture as "i420": nothing to convert, interleave or split), the arrays are read-only views of that memory with no copy (padded rows are
        stepped over by the strides); each keeps the frame's memory alive, also after
        ``close()``, until it and every array made from it are gone. They are read-only
        because the decoder may still read the picture as a reference. Otherwise the picture
        is converted and packed into one new buffer that the arrays share. Without numpy: a
        tuple of bytes."""
        mem = self._memory()
        if self.media_type == "audio" and (format is not None or rate is not None
                                           or (layout is not None and layout not in _PACK)):
            return self._converted_audio(mem, format or "s16", rate, None if layout in _PACK else layout)
        layout = layout or ("nv12" if self.media_type == "video" else "s16")
        if layout not in _PACK:
            raise ValueError(f"unknown layout {layout!r}: nv12, i420, s16 or f32")
        if width is not None or height is not None or interpolation is not None:
            return self._scaled(mem, layout, width, height, interpolation, planes, out)
        if planes:
            return self._layout_planes(mem, layout)
        size = ctypes.c_size_t()
        lib.mk_frame_pack(mem.h, _PACK[layout], None, 0, ctypes.byref(size))
        if out is not None:
            return self._pack_into(mem, layout, size.value, out)
        if _np is None:
            raw = ctypes.create_string_buffer(size.value)
            lib.mk_frame_pack(mem.h, _PACK[layout], raw, size.value, ctypes.byref(size))
            return cast(Any, raw.raw[: size.value])
        dtype = {"s16": _np.int16, "f32": _np.float32}.get(layout, _np.uint8)
        arr = _np.empty(size.value // _np.dtype(dtype).itemsize, dtype=dtype)
        lib.mk_frame_pack(mem.h, _PACK[layout], arr.ctypes.data, size.value, ctypes.byref(size))
        if layout == "nv12":
            return arr.reshape(-1, self.width)
        if layout in ("s16", "f32"):
            return arr.reshape(-1, self.channels)
        return arr

    def _scaled(self, mem: _FrameMemory, layout: str, width: Optional[int], height: Optional[int],
                interpolation: Optional[str], planes: bool, out: Optional[Array]) -> Array:
        """to_numpy(width=, height=): the picture scaled and packed by mk_frame_pack_scaled."""
        if self.media_type != "video" or layout not in ("nv12", "i420"):
            raise ValueError(f"width / height / interpolation are for pictures packed as nv12 or i420, not {layout!r}")
        if width is None or height is None:
            raise ValueError("to_numpy needs both width and height to scale a picture")
        name = interpolation or "bicubic"
        if name not in SCALE_FILTERS:
            raise ValueError(f"unknown interpolation {name!r}: one of {', '.join(SCALE_FILTERS)}")
        if planes or _np is None:
            raise ValueError("a scaled picture is packed into one numpy array (planes=True and no numpy are not supported)")
        args = (mem.h, _PACK[layout], int(width), int(height), SCALE_FILTERS[name])
        size = ctypes.c_size_t()
        lib.mk_frame_pack_scaled(*args, None, 0, ctypes.byref(size))
        if out is None:
            out = _np.empty(size.value, dtype=_np.uint8)
        elif not isinstance(out, _np.ndarray) or out.dtype != _np.uint8 or not out.flags.c_contiguous \
                or not out.flags.writeable or out.nbytes < size.value:
            raise ValueError(f"out must be a writable C-contiguous uint8 numpy array of at least {size.value} bytes")
        lib.mk_frame_pack_scaled(*args, out.ctypes.data, out.nbytes, ctypes.byref(size))
        flat = out.reshape(-1)[: size.value]
        return flat.reshape(-1, int(width)) if layout == "nv12" else flat

    def _pack_into(self, mem: _FrameMemory, layout: str, needed: int, out: Array) -> Array:
        """to_numpy(out=...): packs into the caller's array and returns a view of it."""
        if _np is None:
            raise MediaKitError(EINVAL, "to_numpy(out=...) needs numpy", "to_numpy")
        dtype = {"s16": _np.int16, "f32": _np.float32}.get(layout, _np.uint8)
        if not isinstance(out, _np.ndarray) or out.dtype != dtype or not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError(f"out must be a writable C-contiguous numpy array of {_np.dtype(dtype).name} for {layout!r}")
        if out.nbytes < needed:
            raise ValueError(f"out holds {out.nbytes} bytes; a {layout} frame of this size needs {needed}")
        lib.mk_frame_pack(mem.h, _PACK[layout], out.ctypes.data, out.nbytes, ctypes.byref(ctypes.c_size_t()))
        flat = out.reshape(-1)[: needed // out.itemsize]
        if layout == "nv12":
            return flat.reshape(-1, self.width)
        if layout in ("s16", "f32"):
            return flat.reshape(-1, self.channels)
        return flat

    def _converted_audio(self, mem: _FrameMemory, sample_format: str, rate: Optional[int],
                         channel_layout: Optional[Layout]) -> Array:
        """to_numpy with a sample format, rate or channel layout: one AudioConverter over this frame."""
        name = self.format
        planar = name.endswith("p")
        base = {"flt": "f32", "dbl": "f64"}.get(name.rstrip("p") if planar else name, name.rstrip("p") if planar else name)
        conv = AudioConverter(base + ("p" if planar else ""), self.sample_rate, self.channels, sample_format,
                              rate or self.sample_rate, channel_layout or self.channels)
        info = self._info
        count = self.channels if planar else 1
        ptrs = (ctypes.c_void_p * count)(*[info.planes[i] for i in range(count)])
        lib.mk_audio_converter_push(conv._handle(), ptrs, self.sample_count)
        head = conv._take()
        tail = conv.flush()
        conv.close()
        if _np is None:
            return cast(Any, head + tail)
        return _np.concatenate([head, tail], axis=1 if sample_format.endswith("p") and sample_format[:-1] in _SAMPLE_CODES else 0)

    def _layout_planes(self, mem: _FrameMemory, layout: str) -> tuple[Array, ...]:
        """to_numpy(layout, planes=True): views of the frame when mk_frame_view says it holds
        the layout, else the planes of one packed copy."""
        if self.media_type != "video":
            raise ValueError(f"planes=True is for pictures; this frame is {self.media_type}")
        view = _ffi.FrameViewInfo(struct_size=ctypes.sizeof(_ffi.FrameViewInfo))
        lib.mk_frame_view(mem.h, _PACK[layout], ctypes.byref(view))
        shapes = [(view.rows[i], view.row_bytes[i]) for i in range(view.plane_count)]
        if view.in_place and _np is not None:
            out = []
            for i, (rows, row_bytes) in enumerate(shapes):
                stride = view.strides[i]
                buf = (ctypes.c_uint8 * (stride * (rows - 1) + row_bytes)).from_address(view.planes[i])
                buf._owner = mem  # the array keeps the frame's memory alive
                arr = _np.ndarray((rows, row_bytes), dtype=_np.uint8, buffer=buf, strides=(stride, 1))
                arr.flags.writeable = False
                out.append(arr)
            return tuple(out)
        size = ctypes.c_size_t(sum(rows * row_bytes for rows, row_bytes in shapes))  # the planes, one after the other
        packed = _np.empty(size.value, dtype=_np.uint8) if _np is not None else ctypes.create_string_buffer(size.value)
        lib.mk_frame_pack(mem.h, _PACK[layout], packed.ctypes.data if _np is not None else packed, size.value, ctypes.byref(size))
        out, offset = [], 0
        for rows, row_bytes in shapes:
            n = rows * row_bytes
            out.append(packed[offset:offset + n].reshape(rows, row_bytes) if _np is not None else packed.raw[offset:offset + n])
            offset += n
        return tuple(out)

    def oriented(self, orientation: Orientation) -> "Frame":
        """A new frame holding this picture turned by ``orientation`` (e.g. ``track.orientation``),
        in its own memory and the same pixel format: what ffmpeg's ``transpose`` / ``hflip`` /
        ``vflip`` filters give. This frame is left as it is. Raises UnsupportedError for a
        transpose of 4:2:2 pictures, InvalidArgumentError for an audio frame."""
        o = _ffi.Orientation(int(orientation.transposed), int(orientation.hflip), int(orientation.vflip))
        out = ctypes.c_void_p()
        lib.mk_frame_orient(self._memory().h, ctypes.byref(o), ctypes.byref(out))
        return Frame(out)

    def rotated(self, clockwise: int) -> "Frame":
        """A new frame holding this picture turned clockwise by 90, 180 or 270 degrees (0: the same
        picture); see ``oriented()``."""
        return self.oriented(Orientation.clockwise(clockwise))

    def __repr__(self) -> str:
        if self.media_type == "video":
            return f"<mediakit.Frame video {self.width}x{self.height} {self.format} pts={self.pts}>"
        return f"<mediakit.Frame audio {self.sample_count} samples {self.sample_rate} Hz {self.channels} ch {self.format} pts={self.pts}>"


_TRIM = {"none": 0, "gapless": 1, "ffmpeg": 2}


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
    """Fills a Decoder's or DecodeSession's settings struct: the defaults from `fill`, then
    backend, threads and trim."""
    fill(ctypes.byref(settings))
    settings.backend = backend.encode() if backend else None
    settings.threads = int(threads)
    settings.trim = _trim_setting(trim)
    return settings


def _trim_setting(trim: Union[bool, str]) -> int:
    """The C trim value (MK_TRIM_*) for True / False / "gapless" / "ffmpeg" / "none"."""
    if isinstance(trim, bool):
        return 1 if trim else 0
    if trim not in _TRIM:
        raise ValueError(f"unknown trim {trim!r}: 'gapless', 'ffmpeg' or 'none' (or True / False)")
    return _TRIM[trim]


class Decoder(_Owned):
    """Decodes one track through the highest-priority plugin for its codec.

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

    _free = staticmethod(lib.mk_decoder_close)
    _what = "decoder"

    def __init__(self, track: Union[Track, "CodecParameters"], *, backend: Optional[str] = None, threads: int = 0,
                 trim: Union[bool, str] = True):
        s = _decoding_settings(_ffi.DecoderSettings(), lib.mk_decoder_default_settings, backend, threads, trim)
        h = ctypes.c_void_p()
        if isinstance(track, CodecParameters):
            params, keep = track._c()
            lib.mk_decoder_open_params(ctypes.byref(h), ctypes.byref(params), ctypes.byref(s))
            del keep
            self.track: Optional[Track] = None
            self.parameters: CodecParameters = track
        else:
            demuxer = _track_demuxer("Decoder", track)
            lib.mk_decoder_open(ctypes.byref(h), demuxer._handle(), track.index, ctypes.byref(s))
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
        return bool(lib.mk_decoder_send_packet(self._handle(), packet._handle()) == _ffi.OK)

    def receive(self) -> Optional[Frame]:
        """The next decoded frame, or None when the decoder needs another packet (or, after
        flush(), when it is drained)."""
        f = ctypes.c_void_p()
        if lib.mk_decoder_receive_frame(self._handle(), ctypes.byref(f)) == _ffi.OK:
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
                    raise MediaKitError(_ffi.ESTATE, "the decoder refused a packet but had no frame to give", "decode")
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
                raise MediaKitError(_ffi.ESTATE, "the decoder refused a packet but had no frame to give", "decode")

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
        lib.mk_decoder_send_packet(self._handle(), None)
        return self._frames()

    def frames(self, packets: Iterable[Packet]) -> Iterator[Frame]:
        """Decodes `packets` (an iterable of this track's packets, e.g. Demuxer.packets(track))
        and then flushes: yields every presented frame, lazily."""
        for packet in packets:
            yield from self.decode(packet)
        yield from self.flush()

    def reset(self) -> None:
        """Drops buffered frames (after Demuxer.seek) and accepts packets again."""
        lib.mk_decoder_reset(self._handle())
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
        lib.mk_decoder_seek(self._handle(), demuxer._handle(), float(seconds))
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


@dataclass(frozen=True)
class Recovery:
    """One recovery of a DecodeSession from damaged data (C ``mk_recovery_info``, Swift
    ``DecodeSession.Recovery``)."""
    pts: Optional[int]              #: the rejected packet's pts (track time base); None for an error while receiving
    position: int                   #: the rejected packet's byte offset in the file, -1 if unknown
    rebuilt: bool                   #: the decoder was rebuilt and primed with the current GOP
    frames_lost: int                #: frames not output because of it
    status: str                     #: the decoder's error ("MK_EDATA", "MK_EFAIL" ...)
    message: str                    #: the decoder's message


class DecodeSession(_Owned):
    """One track decoded on the library's thread (mk_session), ahead of the consumer by at most
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
    packets of the current GOP sent to it again), up to ``max_failed_packets`` consecutive
    rejected packets counted from the first key frame among them (damage between key frames
    costs its GOP, as in ffmpeg) and ``max_rebuilds`` consecutive failed rebuilds; ``stats`` counts them and
    ``recoveries`` lists them. ``on_recovery`` (optional) is called with each ``Recovery``, oldest
    first, on the thread that reads: inside ``read()`` (so also ``next()``; for ``async for``, its
    worker thread), before the next frame is handed out, for the recoveries the session's thread
    made meanwhile (it decodes ahead by up to ``queue_frames`` frames). No Python code runs on the
    library's thread. An exception raised by the callback comes out of that ``read()`` (the
    frame read is kept and returned by the next one); the session itself goes on. Usually made by
    ``Demuxer.decode()``; it reads the track's demuxer until closed.
    """

    _free = staticmethod(lib.mk_session_close)
    _what = "decode session"

    def __init__(self, track: Track, *, backend: Optional[str] = None, threads: int = 0, trim: Union[bool, str] = True,
                 recovery: bool = True, max_failed_packets: int = 20, max_rebuilds: int = 5, queue_frames: int = 8,
                 on_recovery: Optional[Callable[[Recovery], None]] = None):
        demuxer = _track_demuxer("DecodeSession", track)
        s = _decoding_settings(_ffi.SessionSettings(), lib.mk_session_default_settings, backend, threads, trim)
        s.recovery = 1 if recovery else 0
        s.max_failed_packets = int(max_failed_packets)
        s.max_rebuilds = int(max_rebuilds)
        s.queue_frames = int(queue_frames)
        h = ctypes.c_void_p()
        lib.mk_session_open(ctypes.byref(h), demuxer._handle(), track.index, ctypes.byref(s))
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
            end = lib.mk_session_read_frame(self._handle(), ctypes.byref(f)) == _ffi.EOF
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
        lib.mk_session_get_recovery(self._handle(), index, ctypes.byref(r))
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
        lib.mk_session_seek(self._handle(), float(seconds))

    def frame_at(self, seconds: float) -> Optional[Frame]:
        """seek(seconds), then the next frame (None past the end); iteration goes on after it."""
        self.seek(seconds)
        return self.read()

    def flush(self) -> None:
        """Mid-stream flush (the iOS decoder's): the decoder's delayed frames come next, then
        decoding goes on with the next packet (this is not the end of the stream)."""
        lib.mk_session_flush(self._handle(), _ffi.SESSION_COMPLETION(), None)

    @property
    def stats(self) -> dict[str, int]:
        """Frames delivered, recoveries from damaged data, decoder rebuilds, frames lost, warnings."""
        st = _ffi.SessionStats(struct_size=ctypes.sizeof(_ffi.SessionStats))
        lib.mk_session_get_stats(self._handle(), ctypes.byref(st))
        return {"frames": st.frames, "recoveries": st.recoveries, "rebuilds": st.rebuilds,
                "frames_lost": st.frames_lost, "warnings": st.warnings}

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"track {self.track.index} {self.track.media_type} {self.track.codec}"
        return f"<mediakit.DecodeSession {state}>"


_SAMPLE_CODES = {"u8": 1, "s16": 2, "s32": 3, "f32": 4, "f64": 5, "s24": 11}
_SAMPLE_NAMES = {v: k for k, v in _SAMPLE_CODES.items()}
_NUMPY_TYPES = {"u8": "u1", "s16": "<i2", "s24": "u1", "s32": "<i4", "f32": "<f4", "f64": "<f8"}
_QUALITY = {"low": 0, "medium": 1, "high": 2}


def _audio_format(sample_format: str, rate: int, layout: Optional[Layout], *, open_ended: bool = False) -> _ffi.AudioFormat:
    """The C mk_audio_format for a sample format name ("s16", "f32", "f32p" planar ...), a rate
    and a layout (a name such as "stereo" or "5.1", a channel count, or None when open)."""
    planar = sample_format.endswith("p") and sample_format[:-1] in _SAMPLE_CODES
    base = sample_format[:-1] if planar else sample_format
    if base not in _SAMPLE_CODES:
        raise ValueError(f"unknown sample format {sample_format!r}: one of {', '.join(_SAMPLE_CODES)} (+ 'p' for planar)")
    code = _SAMPLE_CODES[base] + (5 if planar and base != "s24" else 0) + (1 if planar and base == "s24" else 0)
    mask, channels = ctypes.c_uint64(0), ctypes.c_int32(0)
    if layout is not None:
        lib.mk_channel_layout(str(layout).encode(), ctypes.byref(mask), ctypes.byref(channels))
    elif not open_ended:
        raise ValueError("a channel layout is needed (a name such as 'stereo' or a channel count)")
    return _ffi.AudioFormat(struct_size=ctypes.sizeof(_ffi.AudioFormat), sample_format=code, sample_rate=int(rate or 0),
                            channels=channels.value, channel_mask=mask.value)


def _pcm_pointers(samples: Union[Array, bytes, bytearray, memoryview], sample_format: str, channels: int, *,
                  convert: bool) -> tuple["ctypes.Array[ctypes.c_void_p]", int, object]:
    """The C plane pointers and frame count of PCM given to AudioConverter.convert or
    Encoder.encode, and the object to keep alive while the C call reads them. `samples` is a
    numpy array in `sample_format` ((frames, channels) interleaved, (channels, frames) planar;
    converted to its dtype when `convert`, else TypeError for another dtype) or bytes of
    interleaved samples."""
    planar = sample_format.endswith("p") and sample_format[:-1] in _SAMPLE_CODES
    base = sample_format[:-1] if planar else sample_format
    width = {"u8": 1, "s16": 2, "s24": 3, "s32": 4, "f32": 4, "f64": 8}[base]
    per = 3 if base == "s24" else 1        # numpy holds s24 as 3 bytes per sample
    if _np is not None and isinstance(samples, _np.ndarray):
        dtype = _np.dtype(_NUMPY_TYPES[base])
        arr = _np.ascontiguousarray(samples, dtype=dtype if convert else None)
        if arr.dtype != dtype:
            raise TypeError(f"the input is {sample_format} samples ({_NUMPY_TYPES[base]}); the array is {arr.dtype}")
        if planar:
            if arr.ndim != 2 or arr.shape[0] != channels:
                raise ValueError(f"planar input is a ({channels}, frames) array; got shape {arr.shape}")
            return (ctypes.c_void_p * channels)(*[arr[c].ctypes.data for c in range(channels)]), arr.shape[1] // per, arr
        return (ctypes.c_void_p * 1)(arr.ctypes.data), arr.size // (channels * per), arr
    if planar:
        raise TypeError("planar input is a (channels, frames) numpy array")
    buf = ctypes.create_string_buffer(bytes(samples))
    return (ctypes.c_void_p * 1)(ctypes.addressof(buf)), (len(buf) - 1) // (width * channels), buf


class AudioConverter(_Owned):
    """Converts PCM between sample formats, channel layouts and rates (MediaKit's
    AudioConverter: libswresample's rounding, ``ffmpeg -ac 2``'s downmix, a band-limited
    resampler), or decodes a track's packets and converts them (``for_track``).

    Sample formats: "u8", "s16", "s24" (packed 3 bytes), "s32", "f32", "f64", with a "p"
    suffix for planar. numpy arrays go in and come out: interleaved as (frames, channels),
    planar as (channels, frames); an input array in the source format is used without a copy.

        conv = mediakit.AudioConverter("s16", 44100, "stereo", "f32", 48000, "mono")
        out = conv.convert(samples)          # (n, 1) float32
        tail = conv.flush()

    ``prime_leading`` / ``prime_trailing`` input frames are dropped at the start / end (an
    encoder's priming and padding; they still feed the filter). ``reset()`` starts a new stream
    (after a seek); ``input_frames``, ``output_frames`` and ``latency`` count a PCM converter's work.
    """

    _free = staticmethod(lib.mk_audio_converter_close)
    _what = "audio converter"

    def __init__(self, in_format: str, in_rate: int, in_layout: Optional[Layout], out_format: str, out_rate: int,
                 out_layout: Optional[Layout], *, quality: str = "medium", dither: bool = False,
                 _track: Optional[Track] = None, trim: Union[bool, str] = True, prime_leading: int = 0,
                 prime_trailing: int = 0):
        if quality not in _QUALITY:
            raise ValueError(f"unknown quality {quality!r}: low, medium or high")
        s = _ffi.AudioConverterSettings()
        lib.mk_audio_converter_default_settings(ctypes.byref(s))
        s.quality, s.dither, s.trim = _QUALITY[quality], int(bool(dither)), _trim_setting(trim)
        s.prime_leading, s.prime_trailing = int(prime_leading), int(prime_trailing)
        to = _audio_format(out_format, out_rate, out_layout, open_ended=_track is not None)
        h = ctypes.c_void_p()
        if _track is None:
            src = _audio_format(in_format, in_rate, in_layout)
            lib.mk_audio_converter_open(ctypes.byref(h), ctypes.byref(src), ctypes.byref(to), ctypes.byref(s))
        else:
            if _track._demuxer is None or _track._demuxer.closed:
                raise _closed("demuxer this track belongs to")
            lib.mk_audio_converter_open_track(ctypes.byref(h), _track._demuxer._handle(), _track.index, ctypes.byref(to), ctypes.byref(s))
        super().__init__(h)
        #: The track whose packets it decodes (for_track), else None.
        self.track: Optional[Track] = _track
        #: The input's sample format.
        self.in_format: str = in_format
        self._in_channels: int = 0 if _track is not None else (src.channels or 1)

    @classmethod
    def for_track(cls, track: Track, sample_format: str = "f32", rate: Optional[int] = None, layout: Optional[Layout] = None, *,
                  quality: str = "medium", dither: bool = False, trim: Union[bool, str] = True) -> "AudioConverter":
        """A converter that takes the compressed packets of an audio `track` (AAC, MP3, Opus,
        Vorbis, FLAC ...), decodes them with the track's trims and converts them; `rate` and
        `layout` left None keep the decoded ones."""
        if not isinstance(track, Track):
            raise TypeError(f"for_track needs a mediakit.Track, got {type(track).__name__}")
        return cls("", 0, None, sample_format, rate or 0, layout, quality=quality, dither=dither, _track=track, trim=trim)

    def reset(self) -> None:
        """Forgets the stream (after a seek, or for another one): what waits and what the
        resampler holds are dropped; converting (also after flush()) starts a new stream."""
        lib.mk_audio_converter_reset(self._handle())

    def _stats(self) -> _ffi.AudioConverterStats:
        st = _ffi.AudioConverterStats(struct_size=ctypes.sizeof(_ffi.AudioConverterStats))
        lib.mk_audio_converter_get_stats(self._handle(), ctypes.byref(st))
        return st

    @property
    def input_frames(self) -> int:
        """PCM converter: frames given since it was made or reset."""
        return int(self._stats().input_frames)

    @property
    def output_frames(self) -> int:
        """PCM converter: frames converted since it was made or reset."""
        return int(self._stats().output_frames)

    @property
    def latency(self) -> int:
        """PCM converter: input frames that wait, before flush(), for later input."""
        return int(self._stats().latency)

    @property
    def output_format(self) -> Optional[tuple[str, int, int]]:
        """(sample format, rate, channels) written; None for a track converter before its first frame."""
        f = _ffi.AudioFormat(struct_size=ctypes.sizeof(_ffi.AudioFormat))
        if lib.mk_audio_converter_output_format(self._handle(), ctypes.byref(f)) != _ffi.OK:
            return None
        code = f.sample_format
        planar = code in (6, 7, 8, 9, 10, 12)
        base = _SAMPLE_NAMES[code - 5 if planar and code != 12 else (11 if code == 12 else code)]
        return (base + ("p" if planar else ""), int(f.sample_rate), int(f.channels))

    def _take(self) -> Array:
        """Everything converted so far, as one numpy array (bytes without numpy)."""
        n = ctypes.c_int32(0)
        if lib.mk_audio_converter_read(self._h, None, 0, ctypes.byref(n)) != _ffi.OK or n.value == 0:
            n.value = 0

        def read(ptrs: "ctypes.Array[ctypes.c_void_p]", frames: int) -> int:
            got = ctypes.c_int32(0)
            if frames:
                lib.mk_audio_converter_read(self._h, ptrs, frames, ctypes.byref(got))
            return got.value

        return self._output(n.value, read)

    def _output(self, frames: int, produce: Callable[["ctypes.Array[ctypes.c_void_p]", int], int]) -> Array:
        """Room for `frames` output frames in the output format, filled by `produce(planes, frames)`
        (which returns the frames it wrote), as one numpy array of those (bytes without numpy)."""
        fmt, _, channels = self.output_format or ("f32", 0, 1)
        planar = fmt.endswith("p") and fmt != "p"
        base = fmt[:-1] if planar else fmt
        width = {"u8": 1, "s16": 2, "s24": 3, "s32": 4, "f32": 4, "f64": 8}[base]
        if _np is None:
            bufs = [ctypes.create_string_buffer(frames * width * (1 if planar else channels)) for _ in range(channels if planar else 1)]
            ptrs = (ctypes.c_void_p * len(bufs))(*[ctypes.addressof(b) for b in bufs])
            done = produce(ptrs, frames)
            size = done * width * (1 if planar else channels)
            return cast(Any, b"".join(b.raw[:size] for b in bufs))
        dtype = _np.dtype(_NUMPY_TYPES[base])
        per = 3 if base == "s24" else 1
        out = _np.empty((channels, frames * per) if planar else (frames, channels * per), dtype=dtype)
        if planar:
            ptrs = (ctypes.c_void_p * channels)(*[out[c].ctypes.data for c in range(channels)])
        else:
            ptrs = (ctypes.c_void_p * 1)(out.ctypes.data)
        done = produce(ptrs, frames)
        return out[:, :done * per] if planar else out[:done]

    def fill(self, frames: int, source: Callable[[int], Optional[Union[Array, bytes, bytearray, memoryview]]]) -> Array:
        """The pull model (iOS's AudioConverterFillComplexBuffer, C mk_audio_converter_fill):
        returns `frames` output frames, fewer only at the end of the stream, calling
        ``source(wanted)`` for input as it needs it. `source` returns samples in the input format,
        as convert() takes them (about `wanted` frames: fewer or more is fine), or None (or an
        empty array) at the end of the stream. Output waiting from convert() comes first. An
        exception raised by `source` stops the fill and comes out of it."""
        h = self._handle()
        if self.track is not None:
            raise MediaKitError(_ffi.EINVAL, "this converter takes the track's packets: use convert_packet()", "fill")
        if frames < 0:
            raise ValueError(f"frames is a count, not {frames}")
        held: list[object] = []              # the input given last: the C side reads it until the next call
        failed: list[BaseException] = []

        def pull(_user: Optional[int], wanted: int, planes: Any) -> int:
            try:
                samples = source(int(wanted))
                if samples is None or len(samples) == 0:
                    return 0
                ptrs, count, owner = _pcm_pointers(samples, self.in_format, self._in_channels, convert=False)
                held[:] = [ptrs, owner]
                planes[0] = ctypes.cast(ptrs, ctypes.c_void_p).value
                return count
            except BaseException as e:  # kept, raised again once the C call returns
                failed.append(e)
                return -1

        callback = _ffi.AUDIO_INPUT(pull)

        def run(ptrs: "ctypes.Array[ctypes.c_void_p]", count: int) -> int:
            filled = ctypes.c_int32(0)
            try:
                lib.mk_audio_converter_fill(h, ptrs, count, callback, None, ctypes.byref(filled))
            except MediaKitError:
                if failed:
                    raise failed[0] from None
                raise
            return filled.value

        return self._output(frames, run)

    def convert(self, samples: Union[Array, bytes, bytearray, memoryview]) -> Array:
        """Converts PCM (a numpy array in the source format: (frames, channels) interleaved or
        (channels, frames) planar; or bytes of interleaved samples) and returns what can be
        output so far. A C-contiguous array of the source's dtype is read in place."""
        h = self._handle()
        if self.track is not None:
            raise MediaKitError(_ffi.EINVAL, "this converter takes the track's packets: use convert_packet()", "convert")
        ptrs, frames, keep = _pcm_pointers(samples, self.in_format, self._in_channels, convert=False)
        lib.mk_audio_converter_push(h, ptrs, frames)
        del keep
        return self._take()

    def convert_packet(self, packet: Packet) -> Array:
        """Decodes one packet of the track and returns the PCM that can be output so far."""
        if not isinstance(packet, Packet):
            raise TypeError(f"convert_packet() takes a mediakit.Packet, got {type(packet).__name__}")
        lib.mk_audio_converter_push_packet(self._handle(), packet._handle())
        return self._take()

    def flush(self) -> Array:
        """Ends the input: returns the rest (the resampler's tail, a track's delayed frames)."""
        lib.mk_audio_converter_flush(self._handle())
        return self._take()


_APPLICATIONS = {None: 0, "audio": 1, "voip": 2, "lowdelay": 3}


def _encoder_settings(codec: Optional[str], bitrate: Optional[int], quality: Optional[float], sample_rate: Optional[int],
                      channels: Optional[int], complexity: Optional[int] = None, application: Optional[str] = None,
                      frame_duration: Optional[float] = None, backend: Optional[str] = None,
                      copy_video: bool = False) -> _ffi.EncoderSettings:
    if application not in _APPLICATIONS:
        raise ValueError(f"application is one of audio, voip, lowdelay, not {application!r}")
    s = _ffi.EncoderSettings()
    lib.mk_encoder_default_settings(ctypes.byref(s))
    s.codec = codec.encode() if codec else None
    s.bit_rate = int(bitrate or 0)
    s.has_quality, s.quality = (1, float(quality)) if quality is not None else (0, 0.0)
    s.complexity = -1 if complexity is None else int(complexity)
    s.application = _APPLICATIONS[application]
    s.frame_duration = float(frame_duration or 0)
    s.sample_rate, s.channels = int(sample_rate or 0), int(channels or 0)
    s.backend = backend.encode() if backend else None
    s.copy_video = int(bool(copy_video))
    return s


class Encoder(_Owned):
    """Encodes PCM into one compressed audio stream (AAC, Opus, Vorbis, MP3, FLAC) through the
    plugins' encoders, converting the PCM to what the encoder takes first::

        enc = mediakit.Encoder("aac", "f32", 48000, "stereo", bitrate=128_000)
        packets = enc.encode(samples)        # numpy (frames, channels), or bytes
        packets += enc.flush()
        enc.extradata                        # the magic cookie (AudioSpecificConfig ...)

    `sample_format`, `rate` and `layout` describe the PCM given to encode() (as for
    AudioConverter); `sample_rate` and `channels` the coded stream (None: the input's when the
    encoder takes them). A rate or channel count the encoder refuses raises UnsupportedError naming
    what it accepts."""

    _free = staticmethod(lib.mk_encoder_close)
    _what = "encoder"

    def __init__(self, codec: str, sample_format: str, rate: int, layout: Layout, *, bitrate: Optional[int] = None,
                 quality: Optional[float] = None, sample_rate: Optional[int] = None, channels: Optional[int] = None,
                 complexity: Optional[int] = None, application: Optional[str] = None,
                 frame_duration: Optional[float] = None, backend: Optional[str] = None):
        fmt = _audio_format(sample_format, rate, layout)
        s = _encoder_settings(codec, bitrate, quality, sample_rate, channels, complexity, application, frame_duration, backend)
        h = ctypes.c_void_p()
        lib.mk_encoder_open(ctypes.byref(h), ctypes.byref(fmt), ctypes.byref(s))
        super().__init__(h)
        #: The sample format encode() takes.
        self.in_format: str = sample_format
        self._in_channels: int = fmt.channels

    def _info(self) -> _ffi.EncoderInfo:
        i = _ffi.EncoderInfo(struct_size=ctypes.sizeof(_ffi.EncoderInfo))
        lib.mk_encoder_get_info(self._handle(), ctypes.byref(i))
        return i

    @property
    def codec(self) -> str:
        """The codec coded ("aac", "opus" ...)."""
        return _text(self._info().codec)

    @property
    def sample_rate(self) -> int:
        """The coded stream's rate."""
        return int(self._info().sample_rate)

    @property
    def channels(self) -> int:
        """The coded stream's channels."""
        return int(self._info().channels)

    @property
    def frame_size(self) -> int:
        """Samples per channel the codec codes at a time (0: any)."""
        return int(self._info().frame_size)

    @property
    def encoder_delay(self) -> int:
        """Priming samples at the start of the decoded output, in time_base ticks."""
        return int(self._info().encoder_delay)

    @property
    def input_samples(self) -> int:
        """Samples per channel the encoder itself was given so far (at its input rate)."""
        return int(self._info().input_samples)

    @property
    def time_base(self) -> tuple[int, int]:
        """The packets' time base (numerator, denominator)."""
        i = self._info()
        return int(i.time_base_num), int(i.time_base_den)

    @property
    def extradata(self) -> bytes:
        """The magic cookie: AudioSpecificConfig, OpusHead, Vorbis headers, FLAC STREAMINFO."""
        i = self._info()
        return ctypes.string_at(i.extradata, i.extradata_size) if i.extradata_size else b""

    def _packets(self) -> list[Packet]:
        out: list[Packet] = []
        while True:
            h = ctypes.c_void_p()
            if lib.mk_encoder_receive_packet(self._handle(), ctypes.byref(h)) != _ffi.OK:
                return out
            out.append(Packet(h))

    def encode(self, samples: Union[Array, bytes, bytearray, memoryview]) -> list[Packet]:
        """Encodes PCM in the input format (a numpy array: (frames, channels) interleaved or
        (channels, frames) planar; or bytes of interleaved samples); returns the packets ready."""
        ptrs, frames, keep = _pcm_pointers(samples, self.in_format, self._in_channels, convert=True)
        lib.mk_encoder_push(self._handle(), ptrs, frames)
        del keep
        return self._packets()

    def flush(self) -> list[Packet]:
        """Ends the input: returns the last packets."""
        lib.mk_encoder_flush(self._handle())
        return self._packets()


#: A progress callback: called with (fraction done in [0, 1], done, total) now and then, on the
#: calling thread; returning False (not None) stops the call, as an exception raised in it does.
Progress = Callable[[float, int, int], Optional[bool]]


class _ProgressHook:
    """The C mk_progress_callback of a long call (remux, decode, transcode) over a Python
    callable. False from it cancels the call (CancelledError); an exception raised in it (a
    KeyboardInterrupt too) cancels it and is raised again once the call has cleaned up."""

    def __init__(self, fn: Optional[Progress]):
        self.fn = fn
        self.error: Optional[BaseException] = None
        self.c = _ffi.PROGRESS(self._call) if fn is not None else _ffi.PROGRESS()

    def _call(self, _user: Optional[int], fraction: float, done: int, total: int) -> int:
        if self.fn is None or self.error is not None:
            return 1
        try:
            return 1 if self.fn(fraction, done, total) is False else 0
        except BaseException as e:  # kept, raised again after the C call returns
            self.error = e
            return 1

    def run(self, call: Callable[[], int]) -> int:
        """Makes the C call; raises what the callback raised when that is why it stopped."""
        try:
            return call()
        except CancelledError:
            if self.error is not None:
                raise self.error from None
            raise


def transcode(src: PathLike, dst: PathLike, codec: Optional[str] = None, bitrate: Optional[int] = None, *,
              quality: Optional[float] = None, sample_rate: Optional[int] = None, channels: Optional[int] = None,
              copy_video: bool = False, backend: Optional[str] = None, complexity: Optional[int] = None,
              application: Optional[str] = None, frame_duration: Optional[float] = None,
              progress: Optional[Progress] = None) -> None:
    """Decodes the first audio track of `src` and encodes it into `dst`, like the mk-transcode
    sample: .m4a / .mp4 (AAC; MP3, Opus, FLAC with codec=), .flac, .mp3, .mka / .mkv / .webm (Opus,
    Vorbis ...). Gapless; written to a temporary file and renamed at the end. `complexity` (Opus
    0..10, FLAC 0..12), `application` ("audio", "voip", "lowdelay") and `frame_duration` (seconds,
    Opus) as for Encoder. `progress` is called now and then with (fraction, -1, -1); False from it
    stops (CancelledError, nothing written)."""
    s = _encoder_settings(codec, bitrate, quality, sample_rate, channels, complexity, application, frame_duration,
                          backend=backend, copy_video=copy_video)
    hook = _ProgressHook(progress)
    s.progress = hook.c
    hook.run(lambda: int(lib.mk_transcode(_path(src), _path(dst), ctypes.byref(s))))


def decode(path: PathLike, audio_out: Optional[PathLike] = None, video_out: Optional[PathLike] = None, *,
           pixel_format: str = "nv12", sample_format: str = "s16", wav: bool = False, y4m: bool = False,
           trim: Union[bool, str] = True, autorotate: bool = True, threads: int = 0, backend: Optional[str] = None,
           progress: Optional[Progress] = None, sample_rate: Optional[int] = None, channels: Optional[Layout] = None,
           resample_quality: str = "medium", seek: Optional[float] = None, max_video_frames: Optional[int] = None,
           max_audio_seconds: Optional[float] = None, async_video: bool = False) -> None:
    """Decodes the first audio track to `audio_out` (raw PCM or WAV) and the first video
    track to `video_out` (raw NV12 / I420 or Y4M), like the mk-decode sample. `trim` is
    as for Decoder: "gapless" (default, or True), "ffmpeg" or "none" (or False).

    mk-decode's choices: `sample_format` ("u8", "s16", "s24", "s32", "f32", "f64"), `sample_rate`
    and `channels` (a layout name or a count, mixed as ffmpeg -ac mixes) with `resample_quality`;
    `seek` (seconds, sample-accurate as ffmpeg -ss T -i), `max_video_frames`,
    `max_audio_seconds`; `async_video` decodes a lone video track on a thread of its own.

    A file cut short is decoded as far as it goes (the outputs are written, as ffmpeg's)
    and a TruncatedWarning names the offset of the cut."""
    if audio_out is None and video_out is None:
        raise ValueError("give audio_out, video_out or both")
    if pixel_format not in ("nv12", "i420"):
        raise ValueError("pixel_format is nv12 or i420")
    if resample_quality not in _QUALITY:
        raise ValueError(f"unknown resample_quality {resample_quality!r}: low, medium or high")
    s = _ffi.DecodeSettings()
    lib.mk_decode_default_settings(ctypes.byref(s))
    s.video_layout = _PACK[pixel_format]
    if sample_format in ("s16", "f32"):
        s.audio_layout = _PACK[sample_format]
    if sample_format not in ("s16", "f32") or sample_rate is not None or channels is not None:
        f = _audio_format(sample_format, sample_rate or 0, channels, open_ended=True)
        s.sample_format, s.sample_rate, s.channels, s.channel_mask = f.sample_format, f.sample_rate, f.channels, f.channel_mask
    s.resample_quality = _QUALITY[resample_quality]
    if seek is not None:
        s.seek_seconds = float(seek)
    s.max_video_frames = int(max_video_frames or 0)
    s.max_audio_seconds = float(max_audio_seconds or 0)
    s.async_video = int(async_video)
    s.wav, s.y4m, s.autorotate, s.threads = int(wav), int(y4m), int(autorotate), int(threads)
    s.trim = _trim_setting(trim)
    s.backend = backend.encode() if backend else None
    hook = _ProgressHook(progress)
    s.progress = hook.c
    status = hook.run(lambda: int(lib.mk_decode_file(_path(path), _path(audio_out) if audio_out is not None else None,
                                                     _path(video_out) if video_out is not None else None,
                                                     ctypes.byref(s))))
    if status == _ffi.ETRUNCATED:
        _warn_truncated()


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


def remux(src: PathLike, dst: PathLike, faststart: bool = False, fragment: Optional[float] = None,
          hybrid: Optional[float] = None, *, tracks: Optional[Sequence[Union[int, Track]]] = None,
          progress: Optional[Progress] = None) -> None:
    """Copies the tracks of `src` (any file ``open`` reads) into a new file at `dst` without
    decoding, like the mk-remux sample. The output's format follows `dst`'s extension: MP4
    (.mp4, .m4a, .m4v, .mov), Matroska / WebM (.mkv, .mka, .webm) or Ogg (.ogg, .oga, .opus);
    UnsupportedError for a codec the output cannot carry.

    tracks: the source tracks to copy (indexes or Tracks), in that order; None: every track.
    faststart=True puts the moov at the front; fragment=SECONDS writes a fragmented MP4
    (a fragment about every SECONDS, playable up to the last complete one after a crash);
    hybrid=SECONDS writes fragmented and turns the file progressive when done. `progress` is
    called after each packet with (fraction, packets written, packets in all); False from it
    stops (CancelledError). The target name is only written when the whole file is complete:
    a failure or a cancel leaves nothing there.
    """
    s = _muxer_settings(faststart, fragment, hybrid)
    chosen = [t.index if isinstance(t, Track) else int(t) for t in tracks] if tracks is not None else None
    if chosen is not None:
        if not chosen:
            raise ValueError("tracks=[] copies nothing: give at least one track, or None for every track")
        s.tracks = (ctypes.c_int32 * len(chosen))(*chosen)
        s.track_count = len(chosen)
    hook = _ProgressHook(progress)
    s.progress = hook.c
    hook.run(lambda: int(lib.mk_remux(_path(src), _path(dst), ctypes.byref(s))))
