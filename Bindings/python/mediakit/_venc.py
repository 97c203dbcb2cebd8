"""``VideoEncoder`` (mk_video_encoder): pictures (numpy arrays or decoded frames) in, packets out;
``CompressionSession`` (mk_compression_session): the same encoder on a thread of its own, packets
through a callback."""

from __future__ import annotations

import ctypes
from fractions import Fraction
import threading
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    from ._common import Array

from . import _ffi
from ._ffi import lib
from .errors import OK, MediaKitError
from ._common import _Owned, _PIXEL_FORMATS, _text
from ._demux import CodecParameters, Packet
from ._frame import Frame

try:  # numpy is optional: without it, pictures are bytes.
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the environment
    _np = None  # type: ignore[assignment]

#: MK_PIXEL_* codes by FFmpeg's name, the packed RGB / gray formats included.
_PIXEL_CODES = {name: code for code, name in _PIXEL_FORMATS.items()}
_PIXEL_CODES.update({"rgb24": 15, "bgr24": 16, "rgba": 17, "bgra": 18, "gray16le": 19, "rgb48le": 20,
                     "i420": 1, "gray8": 12})
_FORCE_KEYFRAME = 1  # MK_ENCODE_FORCE_KEYFRAME

# (bytes per component, components per pixel in plane 0, planes, chroma shift x, chroma shift y)
_GEOMETRY = {"yuv420p": (1, 1, 3, 1, 1), "yuvj420p": (1, 1, 3, 1, 1), "yuv422p": (1, 1, 3, 1, 0),
             "yuvj422p": (1, 1, 3, 1, 0), "yuv444p": (1, 1, 3, 0, 0), "yuvj444p": (1, 1, 3, 0, 0),
             "nv12": (1, 1, 2, 1, 1), "yuv420p10le": (2, 1, 3, 1, 1), "yuv422p10le": (2, 1, 3, 1, 0),
             "yuv444p10le": (2, 1, 3, 0, 0), "p010le": (2, 1, 2, 1, 1), "gray": (1, 1, 1, 0, 0),
             "gray10le": (2, 1, 1, 0, 0), "yuv420p12le": (2, 1, 3, 1, 1), "rgb24": (1, 3, 1, 0, 0),
             "bgr24": (1, 3, 1, 0, 0), "rgba": (1, 4, 1, 0, 0), "bgra": (1, 4, 1, 0, 0), "gray16le": (2, 1, 1, 0, 0),
             "rgb48le": (2, 3, 1, 0, 0)}


def _pixel_code(name: str) -> int:
    code = _PIXEL_CODES.get(name.lower())
    if code is None:
        raise ValueError(f"unknown pixel format {name!r}: one of {', '.join(sorted(_GEOMETRY))}")
    return code


def _canonical(name: str) -> str:
    """FFmpeg's name of a pixel format given by any of its names ("i420" is "yuv420p")."""
    return _PIXEL_FORMATS.get(_pixel_code(name)) or {15: "rgb24", 16: "bgr24", 17: "rgba", 18: "bgra", 19: "gray16le",
                                                      20: "rgb48le"}[_pixel_code(name)]


def plane_shapes(fmt: str, width: int, height: int) -> list[tuple[int, int]]:
    """(rows, bytes per row) of each plane of a ``width`` x ``height`` picture of ``fmt`` packed
    without padding, as ``ffmpeg -f rawvideo -pix_fmt FMT`` writes it."""
    b, comps, planes, sx, sy = _GEOMETRY[_canonical(fmt)]
    cw, ch = (width + (1 << sx) - 1) >> sx, (height + (1 << sy) - 1) >> sy
    if planes == 1:
        return [(height, width * comps * b)]
    if planes == 2:
        return [(height, width * b), (ch, 2 * cw * b)]
    return [(height, width * b), (ch, cw * b), (ch, cw * b)]


def _video_settings(codec: str, width: int, height: int, fps: Union[int, float, Fraction, None], pixel_format: Optional[str],
                    crf: Optional[float], qp: Optional[float], bitrate: Optional[int], preset: Optional[str],
                    profile: Optional[str], gop: Optional[int], bframes: Optional[int], threads: int,
                    time_base: Optional[Fraction]) -> _ffi.VideoEncoderSettings:
    """The C mk_video_encoder_settings of VideoEncoder's and Writer's keyword arguments."""
    s = _ffi.VideoEncoderSettings()
    lib.mk_video_encoder_default_settings(ctypes.byref(s))
    s.codec = codec.encode()
    s.width, s.height = int(width), int(height)
    s.pixel_format = _pixel_code(pixel_format) if pixel_format else 0
    if fps is not None:
        rate = Fraction(fps).limit_denominator(1001000) if isinstance(fps, float) else Fraction(fps)
        s.frame_rate_num, s.frame_rate_den = rate.numerator, rate.denominator
    if time_base is not None:
        tb = Fraction(time_base)
        s.time_base_num, s.time_base_den = tb.numerator, tb.denominator
    s.crf = -1.0 if crf is None else float(crf)
    s.qp = -1.0 if qp is None else float(qp)
    s.bit_rate = int(bitrate or 0)
    s.preset = preset.encode() if preset else None
    s.profile = profile.encode() if profile else None
    s.gop_size = -1 if gop is None else int(gop)
    s.max_b_frames = -1 if bframes is None else int(bframes)
    s.threads = int(threads)
    return s


def _picture_pointers(picture: Union["Array", bytes, bytearray, memoryview, Sequence["Array"]], fmt: str, width: int,
                      height: int) -> tuple["ctypes.Array[ctypes.c_void_p]", "ctypes.Array[ctypes.c_int64]", list[object]]:
    """The C plane pointers and strides of a picture given in `fmt` at width x height (a whole
    picture packed as ffmpeg's rawvideo, as an array or bytes; or one 2-D array per plane), and
    the objects to keep alive while the C call reads them. ValueError for another size."""
    shapes = plane_shapes(fmt, width, height)
    n = len(shapes)
    ptrs = (ctypes.c_void_p * 4)()
    strides = (ctypes.c_int64 * 4)()
    keep: list[object] = []
    if isinstance(picture, (bytes, bytearray, memoryview)) or (_np is not None and isinstance(picture, _np.ndarray)):
        need = sum(r * b for r, b in shapes)
        if isinstance(picture, (bytes, bytearray, memoryview)):
            view = memoryview(picture).cast("B")
            size = view.nbytes
            raw = (ctypes.c_uint8 * max(1, size)).from_buffer_copy(view) if size == need else None
            base = ctypes.addressof(raw) if raw is not None else 0
            keep.append(raw)
        else:
            a = _np.ascontiguousarray(picture)
            size, base = int(a.nbytes), int(a.ctypes.data)
            keep.append(a)
        if size != need:
            raise ValueError(f"a {width}x{height} {fmt} picture is {need} bytes; {size} given")
        offset = 0
        for i, (rows, row_bytes) in enumerate(shapes):
            ptrs[i], strides[i] = base + offset, row_bytes
            offset += rows * row_bytes
        return ptrs, strides, keep
    planes = list(picture)
    if len(planes) != n:
        raise ValueError(f"a {fmt} picture has {n} planes; {len(planes)} given")
    if _np is None:
        raise ValueError("planes as arrays need numpy")
    for i, ((rows, row_bytes), p) in enumerate(zip(shapes, planes)):
        a = _np.asarray(p)
        if a.ndim == 1 or (a.ndim >= 2 and not a[0].flags.c_contiguous):
            a = _np.ascontiguousarray(a)
        if a.shape[0] != rows or a[0].nbytes != row_bytes:
            raise ValueError(f"plane {i} of a {width}x{height} {fmt} picture is {rows} rows of "
                             f"{row_bytes} bytes; given shape {a.shape} of {a.dtype}")
        keep.append(a)
        ptrs[i], strides[i] = a.ctypes.data, a.strides[0]
    return ptrs, strides, keep


def _frame_handle(frame: Frame, pts: Optional[int]) -> ctypes.c_void_p:
    """The C handle of a decoded frame given to an encoder or writer (which use its own pts)."""
    fh = frame._mem.h if frame._mem is not None else None
    if fh is None or not fh.value:
        raise ValueError("the frame is closed")
    if pts is not None:
        raise ValueError("a Frame is encoded at its own pts: pass pts=None (or an array with a pts)")
    return fh


Picture = Union["Array", bytes, bytearray, memoryview, Sequence["Array"], Frame]


class VideoEncoder(_Owned):
    """Encodes pictures into one compressed video stream (H.264, HEVC, AV1, VP9 ...) through the
    plugins' video encoders (C ``mk_video_encoder``, Swift ``VideoEncodingConverter``), set up
    as the ``ffmpeg`` tool sets them up::

        enc = mediakit.VideoEncoder("h264", 640, 480, fps=25, crf=23, format="rgb24")
        packets = enc.encode(rgb)             # numpy (480, 640, 3) uint8
        packets += enc.flush()
        muxer.add_track(enc.parameters)       # codec, size, time base, avcC

    ``codec`` is a codec ("h264", "hevc", "av1", "vp9": the encoder ``ffmpeg -c:v CODEC`` picks) or
    an encoder's name ("libx264"). ``format`` is the pixel format of the pictures given to
    ``encode`` (ffmpeg's names: "rgb24", "nv12", "yuv420p" / "i420", "yuv444p" ...);
    ``pixel_format`` the one coded (None: the encoder's first, yuv420p for libx264); pictures
    are converted between them by the plugin's converter (libswscale, as ``ffmpeg -pix_fmt``).
    ``crf`` wins over ``qp``, which wins over ``bitrate``; None leaves each to the encoder, as
    ``ffmpeg`` without the option. ``time_base`` is the unit of the pts given to ``encode``
    (None: 1 / fps). Packets come in decoding order, pts and dts in ``time_base`` of the
    encoder (1 / fps when fps is given)."""

    _free = staticmethod(lib.mk_video_encoder_close)
    _what = "video encoder"

    def __init__(self, codec: str, width: int, height: int, *, fps: Union[int, float, Fraction, None] = None,
                 format: str = "yuv420p", pixel_format: Optional[str] = None, crf: Optional[float] = None,
                 qp: Optional[float] = None, bitrate: Optional[int] = None, preset: Optional[str] = None,
                 profile: Optional[str] = None, gop: Optional[int] = None, bframes: Optional[int] = None,
                 threads: int = 0, time_base: Optional[Fraction] = None):
        self._in_code = _pixel_code(format)
        #: The pixel format of the pictures encode() takes (FFmpeg's name).
        self.format: str = _canonical(format)
        s = _video_settings(codec, width, height, fps, pixel_format, crf, qp, bitrate, preset, profile, gop, bframes,
                            threads, time_base)
        h = ctypes.c_void_p()
        lib.mk_video_encoder_open(ctypes.byref(h), ctypes.byref(s))
        super().__init__(h)
        #: The coded picture size.
        self.width: int = int(width)
        self.height: int = int(height)

    def _info(self) -> _ffi.VideoEncoderInfo:
        i = _ffi.VideoEncoderInfo(struct_size=ctypes.sizeof(_ffi.VideoEncoderInfo))
        lib.mk_video_encoder_get_info(self._handle(), ctypes.byref(i))
        return i

    @property
    def codec(self) -> str:
        """The codec coded ("h264" ...)."""
        return _text(self._info().codec)

    @property
    def backend(self) -> str:
        """The encoder that codes ("libx264" ...)."""
        return _text(self._info().backend)

    @property
    def pixel_format(self) -> str:
        """The pixel format coded (FFmpeg's name)."""
        return _PIXEL_FORMATS.get(self._info().pixel_format, "unknown")

    @property
    def time_base(self) -> Fraction:
        """The packets' time base."""
        i = self._info()
        return Fraction(i.time_base_num, i.time_base_den)

    @property
    def reorder_delay(self) -> int:
        """Frames by which decoding runs ahead of presentation (B-frames)."""
        return int(self._info().reorder_delay)

    @property
    def extradata(self) -> bytes:
        """The parameter sets as the encoder states them (libx264: SPS and PPS in Annex B, which
        the muxers turn into the avcC; b"" for VP9)."""
        i = self._info()
        return ctypes.string_at(i.extradata, i.extradata_size) if i.extradata_size else b""

    @property
    def frames_sent(self) -> int:
        """Pictures encoded so far."""
        return int(self._info().frames_sent)

    @property
    def parameters(self) -> CodecParameters:
        """The coded stream's parameters, for ``Muxer.add_track`` or a ``DecodeSession``."""
        p = _ffi.CodecParams(struct_size=ctypes.sizeof(_ffi.CodecParams))
        lib.mk_video_encoder_get_params(self._handle(), ctypes.byref(p))
        extradata = ctypes.string_at(p.extradata, p.extradata_size) if p.extradata_size else b""
        return CodecParameters(_text(p.codec), "video", extradata=extradata, width=int(p.width), height=int(p.height),
                               time_base=Fraction(p.time_base_num, p.time_base_den), reorder_depth=int(p.reorder_depth),
                               bit_rate=int(p.bit_rate),
                               sample_aspect_ratio=Fraction(p.sample_aspect_num, p.sample_aspect_den) if p.sample_aspect_num else Fraction(0),
                               color_range=int(p.color_range), color_primaries=int(p.color_primaries),
                               color_transfer=int(p.color_transfer), color_space=int(p.color_space))

    def _packets(self) -> list[Packet]:
        out: list[Packet] = []
        while True:
            h = ctypes.c_void_p()
            if lib.mk_video_encoder_receive_packet(self._handle(), ctypes.byref(h)) != OK:
                return out
            out.append(Packet(h))

    def send(self, picture: Picture, pts: Optional[int] = None, *, keyframe: bool = False) -> None:
        """Encodes one picture without taking packets out (``receive`` them, or use ``encode``).

        ``picture`` is a decoded ``Frame`` (any pixel format and size: converted; its own pts
        is used when ``pts`` is None), or in ``format`` at the encoder's size: a numpy array
        holding the whole picture packed as ``ffmpeg -f rawvideo`` writes it ((height, width,
        3) for rgb24, (height * 3 // 2, width) or flat for yuv420p / nv12 ...), bytes of that,
        or a sequence of one 2-D array per plane (Y, U, V; Y, UV for nv12), rows possibly
        strided. ``pts`` is in the encoder's input time base (None: the previous picture's plus
        one frame). ``keyframe`` codes it as a key frame."""
        flags = _FORCE_KEYFRAME if keyframe else 0
        if isinstance(picture, Frame):
            lib.mk_video_encoder_send_frame(self._handle(), _frame_handle(picture, pts), flags)
            return
        ptrs, strides, keep = _picture_pointers(picture, self.format, self.width, self.height)
        lib.mk_video_encoder_send_planes(self._handle(), self._in_code, ptrs, strides,
                                         _ffi.NOPTS_VALUE if pts is None else int(pts), flags)
        del keep

    def receive(self) -> list[Packet]:
        """The packets ready (decoding order)."""
        return self._packets()

    def encode(self, picture: Picture, pts: Optional[int] = None, *, keyframe: bool = False) -> list[Packet]:
        """``send`` then ``receive``: encodes one picture and returns the packets ready."""
        self.send(picture, pts, keyframe=keyframe)
        return self._packets()

    def flush(self) -> list[Packet]:
        """Ends the input: returns the last packets (B-frames the encoder held)."""
        lib.mk_video_encoder_flush(self._handle())
        return self._packets()

    def __repr__(self) -> str:
        if self.closed:
            return "<mediakit.VideoEncoder closed>"
        return f"<mediakit.VideoEncoder {self.backend} {self.width}x{self.height} {self.pixel_format} from {self.format}>"


class _Delivery:
    """What a CompressionSession's C callbacks call, apart from the session (no reference cycle
    through the C function objects, so the session is never collected on the callback thread)."""

    def __init__(self, on_packet: Callable[[Packet], None], on_error: Optional[Callable[[MediaKitError], None]]):
        self.on_packet = on_packet
        self.on_error = on_error
        #: The first exception raised by a callback: complete_frames raises it.
        self.raised: Optional[BaseException] = None
        self.lock = threading.Lock()
        self.c_packet = _ffi.COMPRESSION_PACKET(self._packet)
        self.c_error = _ffi.COMPRESSION_ERROR(self._error) if on_error is not None else _ffi.COMPRESSION_ERROR()

    def _packet(self, _user: Optional[int], handle: Optional[int]) -> None:
        packet = Packet(ctypes.c_void_p(handle))
        if self.raised is not None:   # a callback failed: the rest are freed, not delivered
            packet.close()
            return
        try:
            self.on_packet(packet)
        except BaseException as e:  # kept, raised again by complete_frames
            with self.lock:
                self.raised = self.raised or e

    def _error(self, _user: Optional[int], status: int, message: Optional[bytes]) -> None:
        if self.on_error is None:
            return
        try:
            self.on_error(MediaKitError(status, (message or b"").decode("utf-8", "replace"), "CompressionSession"))
        except BaseException as e:  # kept, raised again by complete_frames
            with self.lock:
                self.raised = self.raised or e


class CompressionSession(_Owned):
    """Encodes pictures asynchronously, in the shape of VideoToolbox's VTCompressionSession (C
    ``mk_compression_session``, Swift ``CompressionSession``): ``encode_frame`` hands a picture
    over and returns once it is queued; the encoding runs on the session's own thread, and each
    packet is passed to ``on_packet``, in decoding order, on a thread of the library's (one call
    at a time)::

        packets = []
        with mediakit.CompressionSession("h264", 640, 480, fps=25, crf=23, format="rgb24",
                                         on_packet=packets.append) as session:
            for i, rgb in enumerate(pictures):
                session.encode_frame(rgb, i)
            session.complete_frames()          # the end: every packet was passed to on_packet

    The settings are ``VideoEncoder``'s, and so are the packets for the same pictures.
    ``on_error`` (optional) is called with the ``MediaKitError`` that stopped the session. An
    exception raised by a callback is raised again by ``complete_frames`` (later packets are
    dropped). At most 8 pictures wait for the encoder: ``encode_frame`` then waits.
    Called from ``on_packet``, ``close`` ends the session without waiting for that call (the
    packets queued behind it are dropped), and ``complete_frames`` returns once the pictures are
    encoded (their packets come after that call returns)."""

    _free = staticmethod(lib.mk_compression_session_close)
    _what = "compression session"

    def __init__(self, codec: str, width: int, height: int, *, on_packet: Callable[[Packet], None],
                 on_error: Optional[Callable[[MediaKitError], None]] = None, fps: Union[int, float, Fraction, None] = None,
                 format: str = "yuv420p", pixel_format: Optional[str] = None, crf: Optional[float] = None,
                 qp: Optional[float] = None, bitrate: Optional[int] = None, preset: Optional[str] = None,
                 profile: Optional[str] = None, gop: Optional[int] = None, bframes: Optional[int] = None,
                 threads: int = 0, time_base: Optional[Fraction] = None):
        self._in_code = _pixel_code(format)
        #: The pixel format of the pictures encode_frame() takes (FFmpeg's name).
        self.format: str = _canonical(format)
        s = _video_settings(codec, width, height, fps, pixel_format, crf, qp, bitrate, preset, profile, gop, bframes,
                            threads, time_base)
        self._delivery = _Delivery(on_packet, on_error)
        cb = _ffi.CompressionSessionCallbacks(struct_size=ctypes.sizeof(_ffi.CompressionSessionCallbacks),
                                              packet=self._delivery.c_packet, error=self._delivery.c_error)
        h = ctypes.c_void_p()
        lib.mk_compression_session_open(ctypes.byref(h), ctypes.byref(s), ctypes.byref(cb), None)
        super().__init__(h)
        #: The coded picture size.
        self.width: int = int(width)
        self.height: int = int(height)

    @property
    def parameters(self) -> CodecParameters:
        """The coded stream's parameters (codec, size, the packets' time base, the parameter
        sets), for ``Muxer.add_track``."""
        p = _ffi.CodecParams(struct_size=ctypes.sizeof(_ffi.CodecParams))
        lib.mk_compression_session_get_params(self._handle(), ctypes.byref(p))
        extradata = ctypes.string_at(p.extradata, p.extradata_size) if p.extradata_size else b""
        return CodecParameters(_text(p.codec), "video", extradata=extradata, width=int(p.width), height=int(p.height),
                               time_base=Fraction(p.time_base_num, p.time_base_den), reorder_depth=int(p.reorder_depth),
                               bit_rate=int(p.bit_rate),
                               sample_aspect_ratio=Fraction(p.sample_aspect_num, p.sample_aspect_den) if p.sample_aspect_num else Fraction(0),
                               color_range=int(p.color_range), color_primaries=int(p.color_primaries),
                               color_transfer=int(p.color_transfer), color_space=int(p.color_space))

    @property
    def time_base(self) -> Fraction:
        """The packets' time base."""
        p = self.parameters
        return p.time_base

    @property
    def reorder_delay(self) -> int:
        """Frames by which decoding runs ahead of presentation (B-frames)."""
        return self.parameters.reorder_depth

    def encode_frame(self, picture: Picture, pts: Optional[int] = None, *, keyframe: bool = False) -> None:
        """Hands one picture over for encoding and returns once it is queued (the caller's
        pictures are copied first). ``picture`` is as for ``VideoEncoder.send``; ``pts`` is in
        the encoder's input time base (required for arrays and bytes; None for a ``Frame``: its
        own pts, rescaled). ``keyframe`` codes it as a key frame. StateError once the stream was
        ended or the session stopped."""
        flags = _FORCE_KEYFRAME if keyframe else 0
        if isinstance(picture, Frame):
            fh = picture._mem.h if picture._mem is not None else None
            if fh is None or not fh.value:
                raise ValueError("the frame is closed")
            lib.mk_compression_session_encode_frame(self._handle(), fh, _ffi.NOPTS_VALUE if pts is None else int(pts), flags)
            return
        if pts is None:
            raise ValueError("give the picture's pts (in the encoder's time base)")
        ptrs, strides, keep = _picture_pointers(picture, self.format, self.width, self.height)
        lib.mk_compression_session_encode_planes(self._handle(), self._in_code, ptrs, strides, int(pts), flags)
        del keep

    def complete_frames(self, until_pts: Optional[int] = None) -> None:
        """Waits until the pictures handed over so far are encoded and their packets passed to
        ``on_packet``. With ``until_pts`` None the stream ends: the encoder's held-back packets
        (B-frames) are delivered too before this returns, and no more pictures are taken. With
        a pts the session goes on (the packets the encoder releases so far are delivered).
        Raises the error that stopped the session, or what a callback raised."""
        lib.mk_compression_session_complete_frames(self._handle(), _ffi.NOPTS_VALUE if until_pts is None else int(until_pts))
        raised = self._delivery.raised
        if raised is not None:
            self._delivery.raised = None
            raise raised

    def __repr__(self) -> str:
        if self.closed:
            return "<mediakit.CompressionSession closed>"
        return f"<mediakit.CompressionSession {self.width}x{self.height} from {self.format}>"
