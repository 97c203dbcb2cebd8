"""Reading: ``Demuxer`` (mk_demuxer) over a path, bytes or a file object, its ``Track``s,
``Packet``s and ``CodecParameters``."""

from __future__ import annotations

import ctypes
import os
import weakref
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterator, Optional, Sequence, Union

from . import _ffi, _metadata
from ._ffi import lib
from .errors import MediaKitError, StateError, OK, EOF, ESTATE, ETRUNCATED
from ._common import _MEDIA_TYPES, _Owned, _asset_status, _closed, _path, _text, _warn_truncated

if TYPE_CHECKING:  # annotations only: ._session builds on this module (a session reads a demuxer)
    from ._session import AsyncDecodeSession

#: Makes the AsyncDecodeSession of ``Demuxer.decode()``: ``AsyncDecodeSession`` itself, set by ._session
#: when the package imports it, so that this module does not import the one built on it.
_make_session: Optional[Callable[..., "AsyncDecodeSession"]] = None


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
    #: False when the container marks the track as not one to present by default (Matroska
    #: FlagDefault 0, MP4 tkhd without track_enabled: FFmpeg's ``default`` disposition)
    is_default: bool = True
    forced: bool = False            #: the container marks the track forced (Matroska FlagForced)

    @property
    def duration_seconds(self) -> float:
        """The duration in seconds (``duration * time_base``)."""
        return float(self.duration * self.time_base)

    @property
    def metadata(self) -> "_metadata.Metadata":
        """The track's tags (docs/metadata.md), as ``Demuxer.metadata``. Needs the demuxer open."""
        if self._demuxer is None:
            raise StateError(ESTATE, "metadata needs the track's demuxer", "Track.metadata")
        return _metadata.read_tags(self._demuxer._handle(), self.index)

    @property
    def presentation_offset(self) -> int:
        """Ticks that place this track's timestamps on the presentation timeline as FFmpeg's
        demuxer gives them (its edit list: a first empty edit's duration minus the media time
        where the first media edit starts; 0 without one): a frame at ``pts`` is presented at
        ``pts + presentation_offset``, the pts ``ffprobe -show_frames`` shows. Needs the
        demuxer open."""
        if self._demuxer is None:
            raise StateError(ESTATE, "presentation_offset needs the track's demuxer", "Track.presentation_offset")
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
        """The track's codec parameters, e.g. to describe it to a Muxer or a DecodeSession without its demuxer."""
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
    encodes its own compressed packets gives ``Muxer.add_track`` and ``DecodeSession``::

        params = mediakit.CodecParameters("h264", "video", extradata=avcc, width=1920, height=1080,
                                          time_base=Fraction(1, 90000))

    ``codec`` is FFmpeg's name ("h264", "hevc", "av1", "aac", "opus" ...); ``extradata`` the codec
    configuration as MP4 stores it (avcC, hvcC, av1C payload, AudioSpecificConfig, OpusHead ...;
    for H.264 / HEVC into MP4 or Matroska also Annex B parameter sets with start codes, or b""
    with them in the first packet, the packets then with start codes: the muxer builds the avcC /
    hvcC and length-prefixes the samples, as ``ffmpeg -c copy`` stores such a stream);
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
        write with ``Muxer.write`` or decode with a ``DecodeSession`` made from ``CodecParameters``
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
    if status == OK:
        return True
    if status == EOF:
        return False
    if status == ETRUNCATED:
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

    Use ``mediakit.open(source)``; close it (or use ``with``) when done. ``demuxer`` names the
    reader instead of probing the bytes (C ``mk_demuxer_open_as``): a built-in format's name
    ("mp4", "matroska" ...) or a plugin's ("ffmpeg:avi", or "avi"), as ``containers()`` lists
    them; an unknown name raises NotFoundError.
    """

    _free = staticmethod(lib.mk_demuxer_close)
    _what = "demuxer"

    def __init__(self, source: Source, *, demuxer: Optional[str] = None):
        h = ctypes.c_void_p()
        self._reader: Optional[_Reader] = None
        named = demuxer.encode() if demuxer else None
        if isinstance(source, (bytes, bytearray, memoryview)):
            data = bytes(source) if not isinstance(source, bytes) else source
            lib.mk_demuxer_open_memory_as(ctypes.byref(h), data, len(data), named)
            self.path = "memory"
        elif hasattr(source, "read"):
            self._reader = _Reader(source)  # type: ignore[arg-type]
            try:
                lib.mk_demuxer_open_io_as(ctypes.byref(h), ctypes.byref(self._reader.io), None, named)
            except MediaKitError:
                if self._reader.error is not None:
                    raise self._reader.error
                raise
            self.path = self._reader.io.name.decode()
        else:
            if not isinstance(source, (str, os.PathLike)):
                raise TypeError(f"expected a path (str or os.PathLike), bytes, a memoryview or a binary "
                                f"file object, got {type(source).__name__}")
            lib.mk_demuxer_open_as(ctypes.byref(h), _path(source), named)
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
        #: The tracks, in file order. An MPEG-TS program whose PMT adds a stream that opening did
        #: not find (read from a pipe) adds its track here while reading, before its first packet
        #: comes out of ``read()``; the tracks before it do not change.
        self.tracks: list[Track] = [self._track(i) for i in range(n.value)]
        #: The tracks by kind, as PyAV's ``container.streams``: ``streams.video[0]``, ``streams.audio[0]``.
        self.streams = Streams(self.tracks)
        self._session: Optional[weakref.ref[AsyncDecodeSession]] = None  # the AsyncDecodeSession reading this demuxer, if any
        # An MPEG-TS PMT may add tracks while reading (from a pipe): ``tracks`` grows, and each
        # new track is read again at its first packet, which tells its parameters.
        self._grows = self.container == "mpegts"
        self._unsettled: set[int] = set()

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
                     is_default=bool(t.is_default), forced=bool(t.forced), _demuxer=self)

    def _busy(self) -> None:
        """Raises when a AsyncDecodeSession reads this demuxer (on its own thread)."""
        session = self._session() if self._session is not None else None
        if session is not None and not session.closed:
            raise MediaKitError(ESTATE, "a AsyncDecodeSession (from decode()) reads this demuxer: close it first, "
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
        packet = Packet(p, self.tracks)
        if self._grows:
            self._follow_tracks(packet)
        return packet

    def _follow_tracks(self, packet: Packet) -> None:
        """Appends the tracks the library added while reading (``tracks`` and ``streams``) once a
        packet of one comes, and reads a track added so again at its first packet, when its
        parameters are known (a track added beside it may have had none yet)."""
        track = packet.track
        if track < len(self.tracks) and track not in self._unsettled:
            return
        if track >= len(self.tracks):
            n = ctypes.c_int32()
            lib.mk_demuxer_track_count(self._h, ctypes.byref(n))
            added = range(len(self.tracks), n.value)
            self.tracks.extend(self._track(i) for i in added)
            self._unsettled.update(added)
        if track in self._unsettled:
            self.tracks[track] = self._track(track)
            self._unsettled.discard(track)
        self.streams = Streams(self.tracks)

    def read_track(self, track: Union[int, Track]) -> Optional[Packet]:
        """The next packet of one track (independent of read()), or None at its end."""
        index = track.index if isinstance(track, Track) else int(track)
        self._busy()
        p = ctypes.c_void_p()
        if not _check_read(_raw_read_track(self._handle(), index, ctypes.byref(p)), "mk_demuxer_read_track_packet"):
            return None
        packet = Packet(p, self.tracks)
        if self._grows:
            self._follow_tracks(packet)
        return packet

    def _track_of_type(self, media_type: str, stream_index: Optional[int]) -> Track:
        """The track `stream_index` (or, when None, the first track) of `media_type`; a ValueError
        naming what is missing otherwise (VideoDecoder and AudioDecoder choose their track so)."""
        tracks = self.tracks
        if stream_index is None:
            found = next((t for t in tracks if t.media_type == media_type), None)
            if found is None:
                raise ValueError(f"the file has no {media_type} track")
            return found
        if not 0 <= stream_index < len(tracks) or tracks[stream_index].media_type != media_type:
            raise ValueError(f"stream_index {stream_index} is not a {media_type} track of the file")
        return tracks[stream_index]

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
    def metadata(self) -> "_metadata.Metadata":
        """The container's tags (docs/metadata.md): a read-only mapping from normalised key to
        the first value, in file order; ``.raw`` lists every tag with its native key."""
        return _metadata.read_tags(self._handle())

    @property
    def chapters(self) -> list["_metadata.Chapter"]:
        """The chapters, in time order (exact start / end ticks and time base, title)."""
        return _metadata.read_chapters(self._handle())

    @property
    def markers(self) -> list["_metadata.Marker"]:
        """Named places in the sound (an AIFF file's ``MARK`` chunk), in file order: frame
        position, identifier, name. FFmpeg does not read them; empty for other formats."""
        return _metadata.read_markers(self._handle())

    @property
    def instrument(self) -> Optional["_metadata.Instrument"]:
        """How a sampler plays the sound (an AIFF file's ``INST`` chunk: base note, detune, note
        and velocity ranges, gain, sustain and release loops with their markers' frames), or
        None. FFmpeg does not read it."""
        return _metadata.read_instrument(self._handle())

    @property
    def attachments(self) -> list["_metadata.Attachment"]:
        """Cover art and attached files (bytes, MIME type, picture type, description, name)."""
        return _metadata.read_attachments(self._handle())

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

    def _status(self) -> tuple[str, Optional[MediaKitError]]:
        return _asset_status(lib.mk_demuxer_get_status, self._handle(), "read")

    @property
    def status(self) -> str:
        """Where reading stands, as AVAssetReader's status: "unknown" (nothing read yet),
        "reading", "completed" (every track read to its end, or a cut file read up to its cut),
        "failed" (a read raised: ``error``), "cancelled" (cancel())."""
        return self._status()[0]

    @property
    def error(self) -> Optional[MediaKitError]:
        """The error that made ``status`` "failed" (the class a read raised), else None."""
        return self._status()[1]

    def track_ended(self, track: Union[int, Track]) -> bool:
        """True once `track` was read to its end (AVAssetReaderOutput's end of data): reading it
        alone returned nothing more, or reading every track did. A seek clears it."""
        ended = ctypes.c_int32(0)
        lib.mk_demuxer_track_ended(self._handle(), track.index if isinstance(track, Track) else int(track), ctypes.byref(ended))
        return ended.value != 0

    def cancel(self) -> None:
        """Stops reading (AVAssetReader's cancelReading): ``status`` becomes "cancelled" (unless
        completed or failed) and reading yields nothing more. The demuxer still needs closing."""
        lib.mk_demuxer_cancel(self._handle())

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
               **options: Any) -> "AsyncDecodeSession":
        """Decodes one track, as PyAV's ``container.decode(video=0)``: ``video=N`` / ``audio=N``
        pick the N-th video / audio track, a Track (or a track index) picks that one. Returns a
        AsyncDecodeSession, which yields the presented frames (``for frame in ...``, or ``async for``),
        decoded ahead on the library's thread; ``options`` are AsyncDecodeSession's (trim, threads,
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
        assert _make_session is not None, "mediakit._session sets it on import"
        session = _make_session(picked[0], **options)
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
