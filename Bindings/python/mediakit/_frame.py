"""``Frame``: a decoded picture or block of audio (mk_frame) and its conversions to arrays."""

from __future__ import annotations

import ctypes
from fractions import Fraction
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, Optional, Union, cast, overload

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    from typing_extensions import Self
    from ._common import Array

from . import _ffi
from ._ffi import lib
from .errors import MediaKitError, EINVAL
from ._common import Layout, SCALE_FILTERS, _MEDIA_TYPES, _PACK, _PACKED_PICTURES, _PIXEL_FORMATS, _SAMPLE_DTYPES, _SAMPLE_FORMATS, _closed
from ._demux import Orientation
from ._audio import AudioConverter, _SAMPLE_CODES

try:  # numpy is optional: without it, arrays are bytes and planes are memoryviews.
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None  # type: ignore[assignment]


def _layout_dtype(layout: str) -> str:
    """numpy's dtype of a packed layout's samples."""
    if layout in _PACKED_PICTURES:
        return _PACKED_PICTURES[layout][1]
    return {"s16": "<i2", "f32": "<f4", "p010le": "<u2"}.get(layout, "u1")


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
        """The frame in a packed layout: video as "nv12" (default), "i420" or "p010le" (10-bit
        biplanar, uint16 samples in their high 10 bits: ``ffmpeg -pix_fmt p010le``), or for models as
        "rgb24", "bgr24", "rgba", "bgra", "gray", "gray16le" or "rgb48le" (an (H, W, C) array,
        uint16 for the last two: the bytes of ``ffmpeg -pix_fmt rgb24`` ..., libswscale set up
        as the ffmpeg tool sets it, with the stream's colour matrix and range); audio as "s16"
        (default) or "f32". Pictures that are not 8-bit 4:2:0 (10-bit, 4:4:4, 4:2:2, full
        range) are converted first by a plugin's picture converter (the FFmpeg plugin's:
        libswscale, as ``ffmpeg -pix_fmt`` converts); UnsupportedError when no plugin has one.

        Video at another size: ``width`` and ``height`` (both; as PyAV's ``to_ndarray``),
        resampled with ``interpolation``, one of SCALE_FILTERS (default "bicubic", the ffmpeg
        tool's): the bytes of ``ffmpeg -vf scale=W:H:flags=bicubic -pix_fmt nv12`` (through
        mk_frame_pack_scaled; a picture already of that size is packed as it is).

        Audio through an AudioConverter: ``format`` (any sample format: "u8", "s16", "s24",
        "s32", "f32", "f64", the big-endian "s16be" ... "f64be", "s8", "s24in32hi",
        "s24in32lo" (see AudioConverter), "p" suffix for planar), ``rate``, and a channel layout as
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
            raise ValueError(f"unknown layout {layout!r}: {', '.join(_PACK)}")
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
        dtype = _np.dtype(_layout_dtype(layout))
        arr = _np.empty(size.value // dtype.itemsize, dtype=dtype)
        lib.mk_frame_pack(mem.h, _PACK[layout], arr.ctypes.data, size.value, ctypes.byref(size))
        if layout in _PACKED_PICTURES:
            return arr.reshape(-1, self.width, _PACKED_PICTURES[layout][0])
        if layout in ("nv12", "p010le"):
            return arr.reshape(-1, self.width)
        if layout in ("s16", "f32"):
            return arr.reshape(-1, self.channels)
        return arr

    def _scaled(self, mem: _FrameMemory, layout: str, width: Optional[int], height: Optional[int],
                interpolation: Optional[str], planes: bool, out: Optional[Array]) -> Array:
        """to_numpy(width=, height=): the picture scaled and packed by mk_frame_pack_scaled."""
        if self.media_type != "video" or layout in ("s16", "f32"):
            raise ValueError(f"width / height / interpolation are for pictures, not {layout!r}")
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
        dtype = _np.dtype(_layout_dtype(layout))
        if out is None:
            out = _np.empty(size.value // dtype.itemsize, dtype=dtype)
        elif not isinstance(out, _np.ndarray) or out.dtype != dtype or not out.flags.c_contiguous \
                or not out.flags.writeable or out.nbytes < size.value:
            raise ValueError(f"out must be a writable C-contiguous {dtype.name} numpy array of at least {size.value} bytes")
        lib.mk_frame_pack_scaled(*args, out.ctypes.data, out.nbytes, ctypes.byref(size))
        flat = out.reshape(-1)[: size.value // dtype.itemsize]
        if layout in _PACKED_PICTURES:
            return flat.reshape(-1, int(width), _PACKED_PICTURES[layout][0])
        return flat.reshape(-1, int(width)) if layout == "nv12" else flat

    def _pack_into(self, mem: _FrameMemory, layout: str, needed: int, out: Array) -> Array:
        """to_numpy(out=...): packs into the caller's array and returns a view of it."""
        if _np is None:
            raise MediaKitError(EINVAL, "to_numpy(out=...) needs numpy", "to_numpy")
        dtype = _np.dtype(_layout_dtype(layout))
        if not isinstance(out, _np.ndarray) or out.dtype != dtype or not out.flags.c_contiguous or not out.flags.writeable:
            raise ValueError(f"out must be a writable C-contiguous numpy array of {_np.dtype(dtype).name} for {layout!r}")
        if out.nbytes < needed:
            raise ValueError(f"out holds {out.nbytes} bytes; a {layout} frame of this size needs {needed}")
        lib.mk_frame_pack(mem.h, _PACK[layout], out.ctypes.data, out.nbytes, ctypes.byref(ctypes.c_size_t()))
        flat = out.reshape(-1)[: needed // out.itemsize]
        if layout in _PACKED_PICTURES:
            return flat.reshape(-1, self.width, _PACKED_PICTURES[layout][0])
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
