"""``VideoDecoder``: frames by index or time as one numpy batch (torchcodec's shape), each GOP
decoded once per batch (mk_decode_session_frame_index / mk_decode_session_frames_at underneath)."""

from __future__ import annotations

import bisect
import ctypes
import hashlib
import json
import mmap
import os
import tempfile
import threading
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Iterable, Optional, Sequence, Union

if TYPE_CHECKING:  # annotations only (typing_extensions comes with mypy): no import at run time
    from ._common import Array

from . import _ffi
from ._ffi import lib
from ._common import PathLike, SCALE_FILTERS, _Closing, _closed
from ._decode import DecodeSession
from ._demux import Demuxer, Track
from .errors import ECANCELLED, MediaKitError

#: Picture formats of ``VideoDecoder(format=)``: the MK_PACK_* layout, the channels and the
#: numpy dtype of each (ffmpeg's -pix_fmt names; "gray8" and "gray16" are accepted too).
#: "float32" is rgb24 scaled to [0, 1] (and normalised by ``mean`` / ``std`` when given).
PICTURE_FORMATS: dict[str, tuple[int, int, str]] = {
    "rgb24": (5, 3, "u1"), "bgr24": (6, 3, "u1"), "rgba": (7, 4, "u1"), "bgra": (8, 4, "u1"),
    "gray": (9, 1, "u1"), "gray16le": (10, 1, "<u2"), "rgb48le": (11, 3, "<u2"), "float32": (5, 3, "<f4"),
}
_ALIASES = {"gray8": "gray", "gray16": "gray16le", "rgb48": "rgb48le", "f32": "float32"}

_FRAME_CALLBACK = _ffi.FRAME_CALLBACK

#: An index cache file: this line, a JSON header line (what the index belongs to and its frame
#: count N), then N pts as little-endian int64 and N key frame flags as bytes.
_INDEX_MAGIC = b"mediakit frame index 1\n"
#: Containers whose index is their sample table (read at open): no cache is written for them.
_INDEXED_CONTAINERS = frozenset({"mp4"})


def _numpy() -> Any:
    try:
        import numpy
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("mediakit.VideoDecoder returns numpy arrays: pip install numpy") from e
    return numpy


#: Batches of at least this many bytes get pages of their own (``_BatchMaps``): numpy's own
#: threshold for asking for huge pages.
_MAPPED_BATCH_BYTES = 4 << 20


class _BatchMaps:
    """The memory of batch arrays of 4 MiB or more.

    Pages of their own: for an array that large numpy asks the kernel for transparent huge
    pages (``madvise(MADV_HUGEPAGE)``); where the kernel then compacts memory to find them when
    the array is first written (``transparent_hugepage/defrag`` set to ``madvise``, Debian's
    default), a process that decodes 100 1080p pictures into a fresh batch took 0.73-1.99 s
    (median 1.05) against 0.87-0.99 s (median 0.91) with pages mapped without that advice
    (BENCHMARKS.md, "A batch's own pages"). So a batch that large is an anonymous map made
    without advice, the array over it (the map lives as long as the array and its views).

    Kept for the next batches: the kernel zeroes every fresh page on its first write, which for
    a loop over a file in batches of eight 1080p pictures was ~30 % of its time (glibc reuses
    freed memory below 32 MiB, so a decoder that hands out one picture at a time never pays
    it; a batch of eight is 50 MB). The last ``KEPT`` maps of at most ``KEPT_BYTES`` each stay
    here, and one whose array (the one array every view of it refers to) is gone is handed out
    again for a batch of its size: a loop that drops each batch before the one after next
    writes into the same pages. At most ``KEPT`` x ``KEPT_BYTES`` stay mapped when no batch is
    alive: the last two batches' memory, as a loop over them held."""

    KEPT = 2
    KEPT_BYTES = 256 << 20

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: list[tuple[mmap.mmap, "weakref.ref[Any]"]] = []   # oldest first

    def array(self, shape: tuple[int, ...], dtype: Any) -> Any:
        """A new array of `shape` and `dtype` (contents undefined)."""
        np = _numpy()
        dt = np.dtype(dtype)
        size = dt.itemsize
        for n in shape:
            size *= n
        if size < _MAPPED_BATCH_BYTES:
            return np.empty(shape, dtype=dt)
        if size > self.KEPT_BYTES:
            return np.frombuffer(mmap.mmap(-1, size), dtype=dt).reshape(shape)
        with self._lock:
            for k, (m, owner) in enumerate(self._kept):
                if len(m) == size and owner() is None:
                    del self._kept[k]
                    break
            else:
                m = mmap.mmap(-1, size)
            flat = np.frombuffer(m, dtype=dt)   # every view of the batch refers to this array
            self._kept.append((m, weakref.ref(flat)))
            del self._kept[:-self.KEPT]
        return flat.reshape(shape)

    def after_fork(self) -> None:
        """In a forked child (data-loader workers): a new lock, in case another thread of the
        parent held this one when it forked. The maps are the child's copies (private pages)."""
        self._lock = threading.Lock()


_batch_maps = _BatchMaps()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_batch_maps.after_fork)


@dataclass(frozen=True)
class VideoMetadata:
    """What ``VideoDecoder.metadata`` says about the track (torchcodec's VideoStreamMetadata
    names). Times are on the presentation timeline (ffprobe's ``-show_frames`` pts)."""
    num_frames: int                 #: presented frames (as ffmpeg's select=eq(n\\,I) counts them)
    average_fps: float              #: num_frames / (end_stream_seconds - begin_stream_seconds)
    duration_seconds: float         #: end_stream_seconds - begin_stream_seconds
    begin_stream_seconds: float     #: the first frame's pts
    end_stream_seconds: float       #: the last frame's pts plus its duration
    key_frame_indices: tuple[int, ...]  #: indices of the key frames (sync samples)
    width: int                      #: of the decoded pictures (before width= / height=)
    height: int
    codec: str                      #: FFmpeg's codec name ("h264" ...)
    stream_index: int               #: the track decoded


@dataclass(frozen=True)
class FrameBatch:
    """Frames as one array with their times (torchcodec's FrameBatch): ``data`` is (N, H, W, C)
    for dimension_order "NHWC", (N, C, H, W) for "NCHW"; ``pts_seconds`` and
    ``duration_seconds`` are float64 arrays of N."""
    data: "Array"
    pts_seconds: "Array"
    duration_seconds: "Array"


class _IndexCache:
    """The file keeping one track's frame index (``VideoDecoder(index_cache=)``): valid while
    the source has the size and modification time it had when the index was read."""

    def __init__(self, source: Path, track: Track, where: Union[bool, str, "os.PathLike[str]"]):
        source = source.resolve()
        if isinstance(where, bool):
            self.file = source.with_name(f"{source.name}.{track.index}.mkindex")
        else:
            digest = hashlib.sha256(os.fsencode(source)).hexdigest()[:32]
            self.file = Path(os.fsdecode(where)) / f"{digest}.{track.index}.mkindex"
        st = source.stat()   # before the packets are read: a file changed meanwhile is read again next time
        self.header = {"source": os.fsdecode(source), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                       "track": track.index, "codec": track.codec, "time_base": str(track.time_base)}

    def load(self) -> Optional[tuple["Array", "Array"]]:
        """The cached pts (int64) and key flags (int32), or None when there is no valid cache."""
        np = _numpy()
        try:
            data = self.file.read_bytes()
        except OSError:
            return None
        end = data.find(b"\n", len(_INDEX_MAGIC))
        if not data.startswith(_INDEX_MAGIC) or end < 0:
            return None
        try:
            header = json.loads(data[len(_INDEX_MAGIC):end])
        except ValueError:
            return None
        n = header.get("count") if isinstance(header, dict) else None
        body = memoryview(data)[end + 1:]
        if any(header.get(k) != v for k, v in self.header.items()) or not isinstance(n, int) or n < 0 or len(body) != 9 * n:
            return None
        pts = np.frombuffer(body, dtype="<i8", count=n).astype(np.int64)
        keys = np.frombuffer(body, dtype="u1", count=n, offset=8 * n).astype(np.int32)
        return pts, keys

    def save(self, pts: "Array", keys: "Array") -> None:
        """Writes the index under a temporary name in the cache's folder, then renames it."""
        header = json.dumps({**self.header, "count": len(pts)}).encode()
        tmp: Optional[str] = None
        try:
            self.file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.file.parent, prefix=self.file.name + ".", suffix=".tmp")
            with os.fdopen(fd, "wb") as f:
                f.write(_INDEX_MAGIC + header + b"\n")
                f.write(pts.astype("<i8").tobytes())
                f.write(keys.astype("u1").tobytes())
            os.replace(tmp, self.file)
        except OSError as e:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            warnings.warn(f"index_cache: cannot write {self.file}: {e}", RuntimeWarning, stacklevel=4)


class VideoDecoder(_Closing):
    """Frames of one video track by index or time, as numpy arrays in RGB / gray (torchcodec's
    ``VideoDecoder``; PyAV users: ``container.decode(video=0)`` + ``frame.to_ndarray(format=)``).

    ``VideoDecoder(path, seek_mode="exact", dimension_order="NHWC", format="rgb24", width=None,
    height=None)``: ``len(decoder)`` frames, ``decoder[i]`` one picture (H, W, C), ``decoder[a:b:s]``
    a batch, ``get_frames_at(indices)``, ``get_frames_played_at(seconds)``,
    ``get_frames_in_range(start, stop, step)``. Indices count the presented frames in
    presentation order after the edit list, as ``ffmpeg -vf select=eq(n\\,I) -vsync 0`` counts
    them, and each picture's bytes are those of ``ffmpeg -i IN -vf select=... -pix_fmt rgb24``
    (the FFmpeg plugin's libswscale set up as the ffmpeg tool sets it: bicubic, the stream's
    colour matrix and range). Pictures are not turned by the track's rotation (ffmpeg's
    autorotation; see ``Frame.oriented``).

    A batch is decoded in one pass in frame order: each group of pictures once, from the key
    frame before its first wanted frame; frames between the wanted ones are decoded but not
    converted; the results come back in the order asked (duplicates allowed).

    format: "rgb24" (default), "bgr24", "rgba", "bgra", "gray", "gray16le", "rgb48le" (uint8 /
    uint16), or "float32": rgb24 / 255 in [0, 1], then ``(x - mean) / std`` per channel when
    ``mean`` / ``std`` (three floats each) are given. width / height (both): every picture
    scaled, as ``-vf scale=W:H:flags=<interpolation>`` (default "bicubic"). seek_mode: "exact"
    (the index is read from the container's sample table, or by reading the packets once where
    there is none) or "approximate": on files without a sample table (MP4 / MOV have one, and
    there both modes are exact), the packets are not all read: the metadata is estimated from
    the track's first packets and its last GOP (``mk_decode_session_estimate_frames``: the count and
    the times as a constant frame rate places them, ``key_frame_indices`` empty) and frame i is
    the first frame presented at or after half a frame before its nominal time ``begin + i /
    fps``. On a constant-rate track (the frame rate the container states or the first frames'
    step) that is frame i; where the rate varies, the frame nearest that nominal time (not
    frame i), and a count that differs from the frames decoded; the returned ``pts_seconds``
    are the frames' own. With a valid ``index_cache`` the index is exact in both modes. threads:
    decoder threads (0: every core).

    Raw H.264 / HEVC streams carry no timestamps (ffprobe's are N/A): their frames are timed as
    ffmpeg's tool times them, one frame after the other at the stream's rate (the SPS / VPS
    timing, else 25 fps) from 0, and the index is made by reading the packets once (both modes);
    ``key_frame_indices`` lists their key frames as ffprobe flags them (IDR pictures and
    recovery points; IRAP pictures), except H.264 recovery points whose open GOP's leading
    pictures cannot be counted (POC type 1 or interlaced streams), where a seek starts at the
    IDR picture before them.

    index_cache: where the index of a file without a sample table (MPEG-TS, Matroska / WebM,
    Ogg, IVF, raw streams: every container but MP4 / MOV) is kept, so that opening the file again
    does not read all its packets: a folder (created if missing; one file per source and track,
    named by a hash of the source's absolute path), or True for a file beside the source
    (``NAME.TRACK.mkindex``). A cache is used only while the source has the size and
    modification time it had when the cache was written (else the packets are read again and
    the cache rewritten); it is written whole under a temporary name, then renamed. A cache
    that cannot be written is a RuntimeWarning, not an error. Needs a path (not bytes or a
    file object).
    """

    def __init__(self, source: PathLike, *, stream_index: Optional[int] = None, seek_mode: str = "exact",
                 dimension_order: str = "NHWC", format: str = "rgb24", width: Optional[int] = None,
                 height: Optional[int] = None, interpolation: str = "bicubic",
                 mean: Optional[Sequence[float]] = None, std: Optional[Sequence[float]] = None, threads: int = 0,
                 index_cache: Union[None, bool, str, "os.PathLike[str]"] = None):
        if seek_mode not in ("exact", "approximate"):
            raise ValueError(f"seek_mode is 'exact' or 'approximate', not {seek_mode!r}")
        if dimension_order not in ("NHWC", "NCHW"):
            raise ValueError(f"dimension_order is 'NHWC' or 'NCHW', not {dimension_order!r}")
        name = _ALIASES.get(format, format)
        if name not in PICTURE_FORMATS:
            raise ValueError(f"unknown format {format!r}: one of {', '.join(PICTURE_FORMATS)}")
        if (width is None) != (height is None):
            raise ValueError("width and height scale the pictures together: give both or neither")
        if width is not None and height is not None and not (0 < width <= 16384 and 0 < height <= 16384):
            raise ValueError(f"width and height are 1 to 16384, not {width}x{height}")
        if interpolation not in SCALE_FILTERS:
            raise ValueError(f"unknown interpolation {interpolation!r}: one of {', '.join(SCALE_FILTERS)}")
        if (mean is not None or std is not None) and name != "float32":
            raise ValueError("mean / std normalise float32 pictures: use format='float32'")
        if index_cache not in (None, False) and not isinstance(source, (str, os.PathLike)):
            raise ValueError("index_cache= keeps the index of a file: give the source as a path")
        np = _numpy()
        self._format, self._order = name, dimension_order
        self._layout, self._channels, self._dtype = PICTURE_FORMATS[name]
        self._filter = SCALE_FILTERS[interpolation]
        self._scale: Optional[tuple[int, int]] = (int(width), int(height)) if width is not None and height is not None else None
        self._mean = np.zeros(3, dtype=np.float32) if mean is None else np.asarray(mean, dtype=np.float32)
        self._std = np.ones(3, dtype=np.float32) if std is None else np.asarray(std, dtype=np.float32)
        if self._mean.shape != (3,) or self._std.shape != (3,) or not (self._std != 0).all():
            raise ValueError("mean and std are three numbers each (R, G, B), std without a zero")
        self._demuxer: Optional[Demuxer] = Demuxer(source)
        try:
            track = self._demuxer._track_of_type("video", stream_index)
            self._track = track
            self._decoder: Optional[DecodeSession] = DecodeSession(track, threads=threads)
            cache = None
            indexed = self._demuxer.container in _INDEXED_CONTAINERS
            if index_cache not in (None, False) and not indexed:
                cache = _IndexCache(Path(os.fsdecode(source)), track, index_cache)
            self._index(cache, seek_mode == "approximate" and not indexed)
        except BaseException:
            self.close()
            raise

    # -- the index ------------------------------------------------------------------------

    def _handles(self) -> tuple[ctypes.c_void_p, ctypes.c_void_p]:
        if self._decoder is None or self._demuxer is None:
            raise _closed("video decoder")
        return self._decoder._handle(), self._demuxer._handle()

    def _index(self, cache: Optional["_IndexCache"], approximate: bool) -> None:
        """Reads the presented frames' times and key flags (mk_decode_session_frame_index), or gives
        the decoder those of the cache (mk_decode_session_set_frame_index) when it has them; with
        ``approximate`` and no cache, estimates them (mk_decode_session_estimate_frames)."""
        np = _numpy()
        dec, dmx = self._handles()
        i64, i32 = ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int32)
        cached = cache.load() if cache is not None else None
        if cached is not None:
            pts, keys = cached
            try:
                lib.mk_decode_session_set_frame_index(dec, pts.ctypes.data_as(i64), keys.ctypes.data_as(i32), len(pts))
            except MediaKitError:
                cached = None   # a list the decoder refuses (another file's?): read the packets
        #: Approximate access: frame i is the first frame at or after _first + (i - 1/2) * _step (ticks).
        self._step: Optional[float] = None
        self._first = 0
        if cached is None and approximate:
            first, end, count = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
            lib.mk_decode_session_estimate_frames(dec, dmx, ctypes.byref(first), ctypes.byref(end), ctypes.byref(count))
            n = count.value
            self._first, self._step = first.value, (end.value - first.value) / n if n else 0.0
            self._set_times(first.value + np.arange(n, dtype=np.float64) * self._step, np.zeros(0, dtype=np.int32))
            return
        if cached is None:
            count = ctypes.c_int64()
            lib.mk_decode_session_frame_index(dec, dmx, None, None, 0, ctypes.byref(count))
            n = count.value
            pts = np.zeros(n, dtype=np.int64)
            keys = np.zeros(n, dtype=np.int32)
            lib.mk_decode_session_frame_index(dec, dmx, pts.ctypes.data_as(i64), keys.ctypes.data_as(i32), n, ctypes.byref(count))
            if cache is not None:
                cache.save(pts, keys)
        self._set_times(pts, keys)

    def _set_times(self, pts: "Array", keys: "Array") -> None:
        """The frames' times (track ticks, the nominal ones in approximate mode) and key flags
        made seconds, durations and ``metadata``."""
        np = _numpy()
        n = len(pts)
        tb: Fraction = self._track.time_base
        offset = self._track.presentation_offset
        seconds = (pts + offset).astype(np.float64) * float(tb)
        durations = np.diff(seconds)
        if self._step is not None:
            last = self._step * float(tb)
        else:
            last = float(1 / self._track.frame_rate) if self._track.frame_rate else (float(durations[-1]) if n > 1 else 0.0)
        self._durations = np.append(durations, last) if n else np.zeros(0)
        self._seconds = seconds
        begin = float(seconds[0]) if n else 0.0
        end = float(seconds[-1] + self._durations[-1]) if n else 0.0
        span = end - begin
        self.metadata = VideoMetadata(
            num_frames=n, average_fps=n / span if span > 0 else 0.0, duration_seconds=span, begin_stream_seconds=begin,
            end_stream_seconds=end, key_frame_indices=tuple(int(i) for i in np.flatnonzero(keys)),
            width=self._track.width, height=self._track.height, codec=self._track.codec, stream_index=self._track.index)

    # -- access ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.metadata.num_frames

    def _check(self, indices: Iterable[int]) -> list[int]:
        n = len(self)
        out = []
        for i in indices:
            j = int(i)
            if j < 0:
                j += n
            if not 0 <= j < n:
                raise IndexError(f"frame index {i} is out of range: the track has {n} frames")
            out.append(j)
        return out

    def __getitem__(self, key: Union[int, slice]) -> "Array":
        """``decoder[i]``: one picture, (H, W, C) or (C, H, W); ``decoder[a:b:s]``: (N, ...)."""
        if isinstance(key, slice):
            return self.get_frames_in_range(*key.indices(len(self))).data
        picture: Array = self.get_frames_at([int(key)]).data[0]
        return picture

    def get_frame_at(self, index: int) -> FrameBatch:
        """One frame as a batch of one (``data[0]`` is the picture)."""
        return self.get_frames_at([index])

    def get_frames_in_range(self, start: int, stop: int, step: int = 1, *, out: Optional["Array"] = None) -> FrameBatch:
        """Frames ``start, start + step, ...`` before ``stop`` (as ``range``; negative values
        count from the end as in a slice). ``out``: as in ``get_frames_at``."""
        if step == 0:
            raise ValueError("step must not be 0")
        return self.get_frames_at(list(range(*slice(start, stop, step).indices(len(self)))), out=out)

    def get_frames_played_at(self, seconds: Sequence[float], *, out: Optional["Array"] = None) -> FrameBatch:
        """The frames on screen at each time (presentation seconds): the last frame whose pts is
        at or before it (torchcodec's rule). IndexError for a time before the first frame or at
        or after ``metadata.end_stream_seconds``. ``out``: as in ``get_frames_at``."""
        indices = []
        for t in seconds:
            t = float(t)
            if not self.metadata.begin_stream_seconds <= t < self.metadata.end_stream_seconds:
                raise IndexError(f"no frame is played at {t} s: the track spans "
                                 f"[{self.metadata.begin_stream_seconds}, {self.metadata.end_stream_seconds}) s")
            indices.append(bisect.bisect_right(self._seconds, t) - 1)
        return self.get_frames_at(indices, out=out)

    def _picture_shape(self) -> tuple[int, int]:
        return self._scale if self._scale is not None else (self._track.width, self._track.height)

    def get_frames_at(self, indices: Sequence[int], *, out: Optional["Array"] = None) -> FrameBatch:
        """The frames at ``indices`` (any order, duplicates allowed, negative from the end) as one
        array in that order, with their pts and durations in seconds. Each GOP is decoded once.

        ``out``: a numpy array to write the pictures into instead of a new one (the batch's
        ``data`` is then ``out``): C-contiguous, writeable, of the batch's shape and dtype
        (ValueError naming what differs). A loop that reuses one array skips the allocation and
        the kernel's zeroing of fresh pages, which for large batches can cost more than the
        decoding (BENCHMARKS.md, scripts/bench_ml.sh). Without it, a batch of 4 MiB or more is
        made over pages kept from the last two batches of its size when no array refers to
        them any more (at most two batches of up to 256 MiB each stay mapped after use)."""
        np = _numpy()
        wanted = self._check(indices)
        w, h = self._picture_shape()
        c = self._channels
        shape = (len(wanted), h, w, c) if self._order == "NHWC" else (len(wanted), c, h, w)
        if out is None:
            data = _batch_maps.array(shape, self._dtype)
        else:
            if not isinstance(out, np.ndarray):
                raise ValueError(f"out must be a numpy array, not {type(out).__name__}")
            if out.shape != shape or out.dtype != np.dtype(self._dtype):
                raise ValueError(f"out is {out.dtype}{list(out.shape)}; this batch needs {np.dtype(self._dtype)}{list(shape)}")
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError("out must be C-contiguous and writeable")
            data = out
        durations = np.empty(len(wanted), dtype=np.float64)
        pts_out = np.empty(len(wanted), dtype=np.float64)
        # Approximate mode reports the frames' own times (made presentation times here).
        offset_seconds = float(self._track.presentation_offset * self._track.time_base) if self._step is not None else 0.0
        float_out = self._format == "float32"
        item = np.dtype("u1" if float_out else self._dtype)
        scratch = None if self._order == "NHWC" and not float_out else np.empty((h, w, c), dtype=item)
        need = h * w * c * item.itemsize
        scale = (1.0 / (255.0 * self._std)).astype(np.float32)
        bias = (-self._mean / self._std).astype(np.float32)
        size = ctypes.c_size_t()
        failure: list[BaseException] = []

        def deliver(_user: Optional[int], position: int, frame: Optional[int]) -> int:
            handle = ctypes.c_void_p(frame)
            try:
                if not frame and self._step is not None:
                    raise IndexError(f"no frame at or after frame {wanted[position]}'s nominal time: the track ends "
                                     f"before the {len(self)} frames its estimate counts (seek_mode='approximate')")
                if not frame:
                    raise ValueError(f"the decoder gave no picture for frame {wanted[position]} (damaged data?)")
                target = data[position] if scratch is None else scratch
                if self._scale is None:
                    lib.mk_frame_pack(handle, self._layout, target.ctypes.data, need, ctypes.byref(size))
                else:
                    lib.mk_frame_pack_scaled(handle, self._layout, w, h, self._filter, target.ctypes.data, need,
                                             ctypes.byref(size))
                if size.value != need:
                    raise ValueError(f"frame {wanted[position]} packs to {size.value} bytes, not the {need} of a "
                                     f"{w}x{h} {self._format} picture: its size differs from the track's")
                info = _ffi.FrameInfo(struct_size=ctypes.sizeof(_ffi.FrameInfo))
                lib.mk_frame_get_info(handle, ctypes.byref(info))
                d = info.duration * info.time_base_num / info.time_base_den if info.time_base_den else 0.0
                durations[position] = d if d > 0 else self._durations[wanted[position]]
                if self._step is not None:   # approximate: the frame's own time, not the nominal one
                    pts_out[position] = (info.pts * info.time_base_num / info.time_base_den + offset_seconds
                                         if info.time_base_den else self._seconds[wanted[position]])
                if scratch is not None:
                    src = scratch if self._order == "NHWC" else scratch.transpose(2, 0, 1)
                    if float_out:
                        sc, bi = (scale, bias) if self._order == "NHWC" else (scale[:, None, None], bias[:, None, None])
                        np.multiply(src, sc, out=data[position], casting="unsafe")
                        np.add(data[position], bi, out=data[position])
                    else:
                        np.copyto(data[position], src)
                return 0
            except BaseException as e:  # noqa: BLE001 - carried out of the C call and raised there
                failure.append(e)
                # Stops the batch. Not -1: that is MK_EAGAIN, which the call's errcheck takes for
                # no error, and the pictures after this one would be left unwritten.
                return ECANCELLED
            finally:
                lib.mk_frame_free(ctypes.byref(handle))

        dec, dmx = self._handles()
        callback = _FRAME_CALLBACK(deliver)
        try:
            if self._step is None:
                lib.mk_decode_session_frames_at(dec, dmx, (ctypes.c_int64 * len(wanted))(*wanted), len(wanted), callback, None)
            else:
                # Frame i: the first frame at or after half a frame before its nominal time.
                targets = [self._first + max(0, round((i - 0.5) * self._step)) for i in wanted]
                lib.mk_decode_session_frames_at_pts(dec, dmx, (ctypes.c_int64 * len(wanted))(*targets), len(wanted), callback, None)
        except BaseException:
            if failure:
                raise failure[0] from None
            raise
        if failure:   # what the callback raised, whatever status the call returned
            raise failure[0]
        return FrameBatch(data, pts_out if self._step is not None else self._seconds[wanted] if wanted else np.zeros(0),
                          durations)

    # -- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the decoder and the file (harmless twice)."""
        decoder, self._decoder = getattr(self, "_decoder", None), None
        demuxer, self._demuxer = getattr(self, "_demuxer", None), None
        if decoder is not None:
            decoder.close()
        if demuxer is not None:
            demuxer.close()

    @property
    def closed(self) -> bool:
        """True once close() was called."""
        return self._decoder is None

    def __repr__(self) -> str:
        m = self.metadata
        return f"<mediakit.VideoDecoder {m.codec} {m.width}x{m.height} {m.num_frames} frames {self._format} {self._order}>"
