"""MediaKit inside Ray: read a folder (or a bucket's worth) of media as a Ray Dataset, and
remux files from ``map_batches``. Install with ``pip install mediakit[ray]``.

    import ray, mediakit.ray as mkray
    ray.init()
    probes = mkray.read_media(paths, mode="probe").take_all()           # one row per file
    frames = mkray.read_media(paths, mode="frames", pixel_format="nv12",
                              split_seconds=60)                          # one row per frame
    small = mkray.read_media(paths, mode="frames", width=224, height=224,
                             frame_rate=2)                               # 224x224, 2 frames a second
    pcm = mkray.read_media(paths, mode="audio", sample_format="f32", rate=16000, layout="mono")
    packets = mkray.read_media(paths, mode="packets")                    # one row per packet
    done = ray.data.from_items([{"path": p} for p in paths]).map_batches(
        mkray.remux_batch, fn_kwargs={"target_dir": "out/"}, batch_size=4)
    aac = ray.data.from_items([{"path": p} for p in paths]).map_batches(
        mkray.transcode_batch, fn_kwargs={"target_dir": "m4a/", "bitrate": 96000}, batch_size=4)

Rows (every mode has ``path``, ``part`` and ``error``: "" when the file was read, else the
message of what failed for it; a file that cannot be read gives an error row, with the other
columns None or empty, and the job goes on; a string rather than None so that every block's
column has one type, whatever the batch format):

- probe: ``container`` (MediaKit's name of the container format, which is FFmpeg's demuxer
  name: "mp4" for MP4 / MOV / M4A, "matroska" for Matroska and WebM, "ogg", "ivf", "mp3",
  "aac", "wav", "flac"; always one of the names ffprobe lists in ``format_name``, e.g.
  "mov,mp4,m4a,3gp,3g2,mj2"), ``size_bytes``, ``duration``, ``track_count``, ``codecs`` ("h264,aac"), ``width``,
  ``height`` (first video track), ``sample_rate``, ``channels`` (first audio track),
  ``tracks`` (a list of dicts: index, media_type, codec, codec_tag, width, height,
  sample_rate, channels, frame_rate, duration, language, unsupported).
- frames: ``track``, ``pts`` (track time base; with ``frame_rate``, the output frame's number,
  time base 1 / frame_rate), ``source_pts`` (the decoded picture's pts, track time base),
  ``time`` (seconds), ``duration`` (in the time base of ``pts``), ``width``, ``height`` (as
  packed), ``pixel_format``, ``frame`` (numpy uint8: NV12 (height * 3 // 2, width), or I420
  flat, as ``Frame.to_numpy``). ``width`` / ``height`` scale every picture (libswscale, the
  ``interpolation`` filter, "bicubic" by default: the bytes of ``ffmpeg -vf
  scale=W:H:flags=bicubic``); ``frame_rate`` picks and repeats pictures as ffmpeg's ``fps``
  filter does (``-vf fps=R``, its defaults: round to nearest, no start time, the end at the
  last picture's end), a row per output frame, on the presentation timeline (the pictures'
  pts moved by the edit list, ``Track.presentation_offset``, as FFmpeg's demuxer gives
  them: the output of ``ffmpeg -copyts -i IN -vf fps=R``, which is that of ``ffmpeg -i IN
  -vf fps=R`` when the file's presentation starts at 0, as most do).
- audio: ``track``, ``offset`` (first sample of the chunk, counted at the output rate),
  ``sample_rate``, ``channels``, ``samples`` (numpy (frames, channels), or (channels, frames)
  for a planar format), about ``chunk_seconds`` per row.
- packets: ``track``, ``pts``, ``dts``, ``duration``, ``position``, ``keyframe``, ``size``
  and, with ``include_data=True``, ``data`` (bytes).

Work is split by file, and (frames mode, ``split_seconds``) a long file's video track into
key-frame-aligned time ranges: part i starts at a key frame k_i (the demuxer seeks there) and
gives the frames with k_i <= pts < k_(i+1), so the parts together give exactly the frames of
one whole-file decode, none twice and none missing (a part whose key frame the decoder cannot
start at cleanly, e.g. a non-IDR I frame with B frames after it that refer to pictures before
it, decodes again from further back: see _part_frames). With ``frame_rate``, part i gives the
output frames n with round(k_i) <= n < round(k_(i+1)) (the fps filter's rounding of the cut
points to the output time base): each is the latest picture whose rounded pts is <= n, which
lies in the same part, so the parts again give the whole-file output. The jobs (files and
parts) go to Ray Data's read tasks one each, or grouped by size into about 4 tasks per CPU of
the cluster when there are more (_task_count: a task costs Ray Data about 0.2 s of a worker).

Workers: each Ray worker process loads libmediakit (and its plugins, lazily, on first use) for
itself; a job is a small picklable ``MediaJob``; rows are built and handed on in blocks of
about ``block_bytes`` (default: Ray's target block size) as the file is read (no file is held in memory whole).
Frames are packed once, straight from the decoder's planes into their block's frame column
(one (rows, height, width) array per block, which Ray takes without a copy; see
_FrameBlocks), and a block's memory is used again once nothing refers to it. A library used
from a checkout (not installed with pip) is found in the workers through
``runtime_env()``: ``ray.init(runtime_env=mediakit.ray.runtime_env())``.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import heapq
import inspect
import math
import os
import threading
import warnings
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, Union

import numpy as np

import mediakit

try:
    import ray
    from ray.data.block import BlockAccessor, BlockMetadata
    from ray.data.datasource import Datasource, ReadTask
except ImportError as _e:  # pragma: no cover - depends on the environment
    raise ImportError("mediakit.ray needs Ray Data: pip install 'mediakit[ray]' (or pip install 'ray[data]')") from _e

__all__ = ["MediaJob", "MediaDatasource", "read_media", "plan_jobs", "read_job", "remux_batch", "remux_file",
           "transcode_batch", "transcode_file", "FrameRateSelector", "runtime_env", "frame_digest", "MODES"]

MODES = ("probe", "frames", "audio", "packets")
PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class MediaJob:
    """One unit of work, small and picklable: a file (or one time range of its video track)
    and what to read from it. ``start_pts`` / ``end_pts`` (track time base, None: open) bound
    the frames given: start_pts <= pts < end_pts; ``start_pts`` is a key frame's pts."""
    path: str
    mode: str
    part: int = 0
    parts: int = 1
    track: Optional[int] = None
    start_pts: Optional[int] = None
    end_pts: Optional[int] = None
    options: tuple[tuple[str, Any], ...] = ()   #: (name, value) pairs: pixel_format, sample_format, rate, layout, ...

    def option(self, name: str, default: Any = None) -> Any:
        """The value of one option, `default` when not given."""
        return dict(self.options).get(name, default)


#: A row of a dataset: column name -> value.
Row = dict[str, Any]


def runtime_env(extra: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """A Ray ``runtime_env`` that lets worker processes import this ``mediakit`` and load the
    libmediakit this process loaded (needed when running from a checkout rather than a pip
    install; harmless otherwise). Pass it to ``ray.init(runtime_env=...)``."""
    package_parent = str(Path(mediakit.__file__).resolve().parent.parent)
    path = os.environ.get("PYTHONPATH", "")
    env = {"MEDIAKIT_LIBRARY": mediakit.LIBRARY_PATH,
           "PYTHONPATH": package_parent + (os.pathsep + path if path else "")}
    out: dict[str, Any] = {"env_vars": env}
    if extra:
        out.update(extra)
    return out


def frame_digest(array: np.ndarray[Any, Any]) -> str:
    """md5 of an array's bytes, in C order (the hash the tests compare with ffmpeg's framemd5)."""
    return hashlib.md5(np.ascontiguousarray(array).tobytes()).hexdigest()


@contextlib.contextmanager
def _opened(path: str) -> Iterator[tuple[mediakit.Demuxer, int]]:
    """A demuxer over a local path, or over a URL (s3://, gs://, http://, file:// ... any
    protocol fsspec knows) through mediakit.open's byte source: the demuxer reads the fsspec
    file object through its read / seek callbacks, as it needs the bytes, never the whole file.
    Gives (demuxer, size of the file in bytes, -1 if unknown); closes the file with it."""
    if "://" not in path:
        with mediakit.open(path) as d:
            yield d, os.path.getsize(path)
        return
    import fsspec  # type: ignore[import-untyped]  # installed with ray[data]
    with fsspec.open(path, "rb") as f, mediakit.open(f) as d:
        yield d, f.size if isinstance(getattr(f, "size", None), int) else -1


def _pick_track(demuxer: mediakit.Demuxer, track: Optional[int], media_type: str) -> mediakit.Track:
    if track is not None:
        if not 0 <= track < len(demuxer.tracks):
            raise ValueError(f"{demuxer.path}: no track {track} (the file has {len(demuxer.tracks)})")
        return demuxer.tracks[track]
    for t in demuxer.tracks:
        if t.media_type == media_type:
            return t
    kinds = ", ".join(f"{t.index}: {t.media_type} {t.codec}" for t in demuxer.tracks) or "none"
    raise ValueError(f"{demuxer.path}: no {media_type} track (tracks: {kinds})")


# -- planning (driver side) ---------------------------------------------------------------------

def _key_frames_for(path: str, track: Optional[int], every: float) -> list[int]:
    """The pts of the video key frames the demuxer seeks to for every `every` seconds, after
    the first key frame, each once and increasing (the cut points of a split)."""
    with _opened(path) as (d, _):
        v = _pick_track(d, track, "video")
        d.select([v])
        first = d.read_track(v)
        cuts = [] if first is None else [first.pts]
        for i in range(1, int(math.ceil(d.duration / every))):
            d.seek(i * every)
            p = d.read_track(v)
            if p is not None and cuts and p.pts > cuts[-1]:
                cuts.append(p.pts)
        return cuts[1:]


def plan_jobs(paths: Sequence[PathLike], mode: str = "probe", *, split_seconds: Optional[float] = None,
              track: Optional[int] = None, **options: Any) -> list[MediaJob]:
    """The jobs read_media runs: one per file; in frames mode with ``split_seconds``, a file
    longer than that is cut at the key frames the demuxer seeks to for every
    ``split_seconds`` (one part per distinct key frame). A file that cannot be opened here
    stays one job (its worker reports the error as a row)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}: one of {', '.join(MODES)}")
    opts = tuple(sorted(options.items()))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mediakit.TruncatedWarning)  # a cut file is planned as far as it goes
        return _plan(paths, mode, split_seconds, track, opts)


def _plan(paths: Sequence[PathLike], mode: str, split_seconds: Optional[float], track: Optional[int],
          opts: tuple[tuple[str, Any], ...]) -> list[MediaJob]:
    jobs = []
    for p in paths:
        path = os.fspath(p)
        whole = MediaJob(path, mode, track=track, options=opts)
        if mode != "frames" or not split_seconds:
            jobs.append(whole)
            continue
        try:
            cuts = _key_frames_for(path, track, split_seconds)
        except (mediakit.MediaKitError, ValueError, OSError):
            jobs.append(whole)
            continue
        bounds: list[Optional[int]] = [None, *cuts, None]
        n = len(bounds) - 1
        jobs += [MediaJob(path, mode, part=i, parts=n, track=track, start_pts=bounds[i], end_pts=bounds[i + 1],
                          options=opts) for i in range(n)]
    return jobs


# -- reading (worker side; also usable in one process) -----------------------------------------

class _Blocks:
    """Collects rows and hands them on as Ray blocks of about `limit` bytes (a new block also
    when an array column changes rank or dtype; arrays of one shape are stacked, others kept
    as a ragged tensor column)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.rows: list[Row] = []
        self.bytes = 0
        self.key: Optional[tuple[int, str]] = None

    def add(self, row: Row, nbytes: int, key: Optional[tuple[int, str]] = None) -> Optional[Any]:
        out = None
        if self.rows and key != self.key:
            out = self.build()
        self.key = key
        self.rows.append(row)
        self.bytes += nbytes
        if self.bytes >= self.limit:
            out2 = self.build()
            return out2 if out is None else (out, out2)
        return out

    def build(self) -> Optional[Any]:
        rows, self.rows, self.bytes = self.rows, [], 0
        if not rows:
            return None
        return BlockAccessor.batch_to_block(_columns(rows))


def _columns(rows: Sequence[Row]) -> dict[str, np.ndarray[Any, Any]]:
    """The rows as numpy columns, one per key: arrays of one shape stacked, numbers as a
    numeric array, anything else (strings, None, arrays of several shapes) as objects."""
    columns: dict[str, np.ndarray[Any, Any]] = {}
    for name in rows[0]:
        values = [r[name] for r in rows]
        first = values[0]
        if isinstance(first, np.ndarray) and all(v.shape == first.shape for v in values):
            columns[name] = np.stack(values)
        elif isinstance(first, (bool, int, float, np.integer, np.floating)) and all(v is not None for v in values):
            columns[name] = np.array(values)
        else:
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
            columns[name] = arr
    return columns


class _Slabs:
    """Memory for _FrameBlocks' frame columns, used again once nothing refers to it. A column
    is a numpy array over a lease: a ctypes array over a slab's memory (as Frame.planes views
    the decoder's). When the last array made from it is gone (the block, the batches Ray made
    of it, the Arrow buffers over it), the lease's __del__ gives the slab back, and the next
    block packs its pictures there, which spares the kernel faulting in and zeroing a block's
    worth of fresh pages (about half a millisecond per 1080p picture). At most `keep` free
    slabs are kept; the others are freed with their last lease. One pool serves the whole
    process (_SLABS): a Ray worker runs one read task per file, and a pool per task started
    each file on fresh pages (measured: 2 of the 7 blocks of a 10 s 1080p file)."""

    def __init__(self, keep: int = 2):
        self.keep = keep
        self.free: list[np.ndarray[Any, Any]] = []
        # give_back runs wherever the last lease dies, and that can be inside take on the same
        # thread: an allocation under the lock may start a garbage collection that frees a lease
        # (an Arrow table's buffers). With a plain Lock that thread waited for itself (seen: a
        # Ray read task hung in the rehearsal); reentrant, the nested give_back goes through.
        self.lock = threading.RLock()

    def take(self, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
        """A new array of that shape and dtype (its contents undefined)."""
        nbytes = math.prod(shape) * dtype.itemsize
        with self.lock:
            # By position: list.remove would compare the arrays element by element.
            i = next((k for k, s in enumerate(self.free) if s.nbytes == nbytes), None)
            slab = None if i is None else self.free.pop(i)
        if slab is None:
            slab = np.empty(max(nbytes, 1), dtype=np.uint8)
        lease = _lease_type(slab.nbytes).from_address(slab.ctypes.data)
        lease.slab, lease.slabs = slab, self
        return np.frombuffer(lease, dtype=dtype, count=math.prod(shape)).reshape(shape)

    def give_back(self, slab: np.ndarray[Any, Any]) -> None:
        with self.lock:
            if len(self.free) < self.keep:
                self.free.append(slab)


_SLABS = _Slabs()
# A forked child starts with an empty pool and a fresh lock (the parent's slabs are not its to
# reuse, and another thread may have held the lock at the fork).
def _fresh_pool_after_fork() -> None:
    _SLABS.free, _SLABS.lock = [], threading.RLock()


os.register_at_fork(after_in_child=_fresh_pool_after_fork)


@functools.lru_cache(maxsize=16)
def _lease_type(nbytes: int) -> Any:
    """The ctypes array type of _Slabs' leases of `nbytes` bytes."""
    def release(lease: Any) -> None:
        lease.slabs.give_back(lease.slab)
    return type("_Lease", (ctypes.c_uint8 * nbytes,), {"__del__": release})


class _FrameBlocks:
    """The frames mode's blocks, with each picture packed once, straight into its row of the
    block's frame column: one (rows, *picture shape) uint8 array per block (from _Slabs), so that
    a picture's bytes are copied once, from the decoder's planes (mk_frame_pack /
    mk_frame_pack_scaled), and Ray takes the column as it is (a C-contiguous array becomes its
    tensor column without a copy). A picture repeated by ``frame_rate`` is copied from the row
    that holds it. A block ends when it holds more than `limit` bytes of pictures (more, so
    that Ray passes it on whole instead of waiting to join it with the next one), when the
    picture size changes, and at an error row (a block of its own, built by _columns)."""

    def __init__(self, limit: int, job: MediaJob):
        self.limit, self.options, self.pack = limit, job.options, _packer(job)   # for the jobs with these options
        width, height = job.option("width"), job.option("height")
        self.size: Optional[tuple[int, int]] = None if width is None or height is None else (width, height)
        self.rows: list[Row] = []
        self.frames: Optional[np.ndarray[Any, Any]] = None     # the block's frame column, rows not yet filled
        self.key: Optional[tuple[int, int]] = None             # the picture size of its rows
        self.last: tuple[Optional[mediakit.Frame], Optional[np.ndarray[Any, Any]]] = (None, None)
        self.slabs = _SLABS

    def add(self, row: Row) -> list[Any]:
        """Adds one row of _frame_rows (its "frame" a mediakit.Frame, or an error row's empty
        array) and returns the blocks that are complete."""
        frame = row["frame"]
        if not isinstance(frame, mediakit.Frame):
            error = _columns([row])
            return [b for b in (self.build(), BlockAccessor.batch_to_block(error)) if b is not None]
        out: list[Any] = []
        key = self.size or (frame.width, frame.height)
        repeat = frame is self.last[0]
        if self.frames is not None and key == self.key and len(self.rows) < len(self.frames):
            slot = self.frames[len(self.rows)]
            if repeat and self.last[1] is not None:
                np.copyto(slot, self.last[1])
            else:
                self.pack(frame, slot)
        else:
            first = self.last[1] if repeat else self.pack(frame, None)
            assert first is not None                            # a repeat's array was packed before
            block = self.build()
            if block is not None:
                out.append(block)
            self.frames = self.slabs.take((self.limit // max(first.nbytes, 1) + 1, *first.shape), first.dtype)
            self.key = key
            slot = self.frames[0]
            slot[...] = first
        self.last = (frame, slot)
        self.rows.append(row)
        if len(self.rows) == len(self.frames):
            out.append(self.build())
        return out

    def build(self) -> Optional[Any]:
        """The block of the rows added since the last one (None if there are none)."""
        rows, frames, self.rows, self.frames = self.rows, self.frames, [], None
        if not rows or frames is None:
            return None
        columns = _columns([{k: v for k, v in r.items() if k != "frame"} for r in rows])
        columns = {name: (frames[:len(rows)] if name == "frame" else columns[name]) for name in rows[0]}
        return BlockAccessor.batch_to_block(columns)


def _empty_array(job: MediaJob) -> Optional[np.ndarray[Any, Any]]:
    """The array column's value in an error row: empty, of the dtype and rank the mode's rows
    have (Ray joins a block's tensor column only with tensors of one dtype and rank)."""
    if job.mode == "frames":
        return np.zeros((0, 0) if job.option("pixel_format", "nv12") == "nv12" else (0,), dtype=np.uint8)
    if job.mode == "audio":
        fmt = job.option("sample_format", "f32")
        base = fmt[:-1] if fmt.endswith("p") else fmt
        return np.zeros((0, 0), dtype=mediakit._NUMPY_TYPES.get(base, "<f4"))
    return None


def _error_row(job: MediaJob, error: BaseException, columns: Sequence[str]) -> Row:
    row: Row = {name: None for name in columns}
    row.update(path=job.path, part=job.part, error=f"{type(error).__name__}: {error}")
    if job.mode == "probe":
        row["tracks"] = []
    for name in ("frame", "samples"):
        if name in row:
            row[name] = _empty_array(job)
    return row


_COLUMNS = {
    "probe": ("path", "part", "container", "size_bytes", "duration", "track_count", "codecs", "width", "height",
              "sample_rate", "channels", "tracks", "error"),
    "frames": ("path", "part", "track", "pts", "source_pts", "time", "duration", "width", "height", "pixel_format",
               "frame", "error"),
    "audio": ("path", "part", "track", "offset", "sample_rate", "channels", "samples", "error"),
    "packets": ("path", "part", "track", "pts", "dts", "duration", "position", "keyframe", "size", "data", "error"),
}


def probe_row(path: PathLike) -> Row:
    """The probe row of one file (raises on a file that cannot be opened)."""
    path = os.fspath(path)
    with _opened(path) as (d, size):
        tracks = [{"index": t.index, "media_type": t.media_type, "codec": t.codec, "codec_tag": t.codec_tag,
                   "width": t.width, "height": t.height, "sample_rate": t.sample_rate, "channels": t.channels,
                   "frame_rate": float(t.frame_rate), "duration": t.duration_seconds, "language": t.language,
                   "unsupported": t.unsupported or ""} for t in d.tracks]
        video = next((t for t in d.tracks if t.media_type == "video"), None)
        audio = next((t for t in d.tracks if t.media_type == "audio"), None)
        return {"path": path, "part": 0, "container": d.container, "size_bytes": size, "duration": d.duration,
                "track_count": len(d.tracks), "codecs": ",".join(t.codec or t.codec_tag for t in d.tracks),
                "width": video.width if video else 0, "height": video.height if video else 0,
                "sample_rate": audio.sample_rate if audio else 0, "channels": audio.channels if audio else 0,
                "tracks": tracks, "error": ""}


def _seek_to(d: mediakit.Demuxer, v: mediakit.Track, start_pts: int) -> Iterator[mediakit.Packet]:
    """The packets of `v` from a key frame at or before `start_pts`: the demuxer seeks to its
    time; if it lands later (rounding, an edit list), it seeks earlier, down to the start."""
    seconds = float(start_pts * v.time_base)
    while True:
        d.seek(max(seconds, 0.0))
        first = d.read_track(v)
        if first is None or (first.is_keyframe and first.pts <= start_pts) or seconds <= 0:
            break
        seconds = seconds - 1.0 if seconds > 1.0 else 0.0
    if first is None:
        return
    yield first
    yield from d.packets(v)


def _round_near_inf(x: Fraction) -> int:
    """To the nearest integer, halves away from zero (FFmpeg's AV_ROUND_NEAR_INF)."""
    n = math.floor(abs(x) + Fraction(1, 2))
    return n if x >= 0 else -n


def _rescale(value: int, src: Fraction, dst: Fraction) -> int:
    """``value`` ticks of time base ``src`` in ticks of ``dst`` (FFmpeg's av_rescale_q)."""
    return _round_near_inf(value * src / dst)


def _frame_rate(value: Union[int, float, str, Fraction]) -> Fraction:
    """A frame rate as a Fraction: an int, a Fraction, or a string / float as ffmpeg's fps
    option reads it ("25", "30000/1001", 29.97 as "29.97")."""
    rate = Fraction(str(value)) if isinstance(value, (float, str)) else Fraction(value)
    if rate <= 0:
        raise ValueError(f"frame_rate must be positive, not {value!r}")
    return rate


class FrameRateSelector:
    """Picks the pictures of a constant-rate output from a stream of decoded pictures as
    FFmpeg's fps filter does with its defaults (round=near, eof_action=round, no start_time):
    output frame n (time base 1 / rate) is the latest picture whose pts, rounded to the
    output time base, is <= n, for n from the first picture's rounded pts up to the rounded
    end; pictures that no n picks are dropped, a picture that several pick is repeated.

    ``push(pts, picture)`` and ``finish(end_pts)`` return the (n, picture) pairs that are
    decided; ``end_pts`` (the input time base) is where the input ends: for a whole stream,
    ``ffmpeg_end_pts`` of its last picture, for a part of one, the next part's first pts."""

    def __init__(self, rate: Union[int, float, str, Fraction], time_base: Fraction):
        self.rate = _frame_rate(rate)
        self.scale = Fraction(time_base) * self.rate     # input ticks -> output frames
        self.next: Optional[int] = None                  # the next output frame's number
        self.held: Any = None                            # the picture output frames repeat

    def out_pts(self, pts: int) -> int:
        """A pts of the input in the output time base, rounded to nearest."""
        return _round_near_inf(pts * self.scale)

    def push(self, pts: int, picture: Any) -> list[tuple[int, Any]]:
        r = self.out_pts(pts)
        out: list[tuple[int, Any]] = []
        if self.held is None:
            if self.next is None:
                self.next = r
        else:
            assert self.next is not None                # set with the first picture held
            while r > self.next:                        # the held picture until this one's time
                out.append((self.next, self.held))
                self.next += 1
        self.held = picture
        return out

    def finish(self, end_pts: Optional[int]) -> list[tuple[int, Any]]:
        out: list[tuple[int, Any]] = []
        if self.held is not None and end_pts is not None:
            assert self.next is not None                # set with the first picture held
            end = self.out_pts(end_pts)
            while end > self.next:
                out.append((self.next, self.held))
                self.next += 1
        self.held = None
        return out

    @staticmethod
    def ffmpeg_end_pts(pts: int, duration: int, time_base: Fraction, frame_rate: Fraction) -> int:
        """Where the ffmpeg tool ends a decoded video stream for its filters (ffmpeg.c's
        send_filter_eof): the last picture's pts plus its duration (or, without one, a frame
        at the track's frame rate), added in microseconds and rounded back to the time base."""
        us = Fraction(1, 1_000_000)
        end = _rescale(pts, time_base, us)
        if duration > 0:
            end += _rescale(duration, time_base, us)
        elif frame_rate:
            end += 1_000_000 * frame_rate.denominator // frame_rate.numerator
        return _rescale(end, us, time_base)


def _part_frames(job: MediaJob, d: mediakit.Demuxer, v: mediakit.Track) -> Iterator[mediakit.Frame]:
    """The decoded pictures of the job's part, in pts order: start_pts <= pts < end_pts, those
    of a whole-file decode. A part decodes from its key frame on. A key frame (a sync sample)
    that is not a clean random access point (an H.264 I frame that is not an IDR, whose
    followers refer to pictures before it) leaves the decoder unable to give some of the
    part's pictures: a packet of the part whose picture has not come out when a later one does
    (or when the part ends) says so. The decoding then starts again further back (twice as far
    each time, down to the file's start, which is the whole-file decode) and goes on after the
    last picture given."""
    threads = int(job.option("threads", 1))
    start, end = job.start_pts, job.end_pts
    if start is None:
        with mediakit.DecodeSession(v, threads=threads) as dec:
            for frame in dec.frames(d.packets(v)):
                if end is not None and frame.pts >= end:
                    break                    # frames come in pts order: the rest is the next part's
                yield frame
        return
    given: Optional[int] = None              # the pts of the last picture given
    back = 0                                 # ticks decoded before start
    while True:
        origin = start - back
        whole = origin * v.time_base <= 0    # _seek_to goes to the file's start
        waiting: set[int] = set()            # pts of the part's packets sent whose picture has not come
        lost = False

        def sent(packets: Iterator[mediakit.Packet]) -> Iterator[mediakit.Packet]:
            for packet in packets:
                if packet.pts >= start and (end is None or packet.pts < end) and (given is None or packet.pts > given):
                    waiting.add(packet.pts)
                yield packet

        with mediakit.DecodeSession(v, threads=threads) as dec:
            for frame in dec.frames(sent(_seek_to(d, v, origin))):
                if frame.pts < start or (given is not None and frame.pts <= given):
                    continue                 # before this part (or given before a new start)
                if end is not None and frame.pts >= end:
                    break
                waiting.discard(frame.pts)
                if not whole and waiting and min(waiting) < frame.pts:
                    lost = True
                    break
                yield frame
                given = frame.pts
        if whole or not (lost or waiting):
            return
        back = max(2 * back, (end - start) if end is not None else start - origin, 1)


def _packer(job: MediaJob) -> Callable[[mediakit.Frame, Optional[np.ndarray[Any, Any]]], np.ndarray[Any, Any]]:
    """pack(frame, out): the frame's picture as the job's rows hold it (Frame.to_numpy in the
    job's pixel format, scaled to its size if it has one), in a new array or packed into `out`."""
    layout = job.option("pixel_format", "nv12")
    width: Optional[int] = job.option("width")
    height: Optional[int] = job.option("height")
    interpolation: Optional[str] = None if width is None else job.option("interpolation", "bicubic")

    def pack(frame: mediakit.Frame, out: Optional[np.ndarray[Any, Any]] = None) -> np.ndarray[Any, Any]:
        return frame.to_numpy(layout, width=width, height=height, interpolation=interpolation, out=out)
    return pack


def _frame_rows(job: MediaJob) -> Iterator[Row]:
    """The frames mode's rows with the picture not packed yet: their "frame" is the decoded
    mediakit.Frame (a picture that ``frame_rate`` repeats is the same Frame in each of its
    rows), packed by _packer(job) as the rows are used (iter_rows, _FrameBlocks)."""
    layout = job.option("pixel_format", "nv12")
    width: Optional[int] = job.option("width")
    height: Optional[int] = job.option("height")
    rate = job.option("frame_rate")

    def row(v: mediakit.Track, frame: mediakit.Frame, pts: int, time: float, duration: int) -> Row:
        return {"path": job.path, "part": job.part, "track": v.index, "pts": pts, "source_pts": frame.pts,
                "time": time, "duration": duration, "width": width or frame.width, "height": height or frame.height,
                "pixel_format": layout, "frame": frame, "error": ""}

    with _opened(job.path) as (d, _):
        v = _pick_track(d, job.track, "video")
        d.select([v])
        if rate is None:
            for frame in _part_frames(job, d, v):
                yield row(v, frame, frame.pts, float(frame.pts * frame.time_base), frame.duration)
                frame.close()
            return
        selector = FrameRateSelector(rate, v.time_base)
        shift = v.presentation_offset           # the fps filter sees presentation times (after the edit list)

        def rows(decided: list[tuple[int, mediakit.Frame]]) -> Iterator[Row]:
            for n, frame in decided:
                yield row(v, frame, n, float(n / selector.rate), 1)

        last: Optional[mediakit.Frame] = None
        for frame in _part_frames(job, d, v):
            yield from rows(selector.push(frame.pts + shift, frame))
            last = frame
        end = None if job.end_pts is None else job.end_pts + shift
        if end is None and last is not None:
            end = FrameRateSelector.ffmpeg_end_pts(last.pts + shift, last.duration, v.time_base, v.frame_rate)
        yield from rows(selector.finish(end))


def _packed_frame_rows(job: MediaJob) -> Iterator[Row]:
    """_frame_rows with each picture packed into a new array (a repeated picture's rows share
    one array)."""
    pack = _packer(job)
    packed: tuple[Any, Any] = (None, None)      # the last picture packed and its array
    for row in _frame_rows(job):
        if packed[0] is not row["frame"]:
            packed = (row["frame"], pack(row["frame"], None))
        row["frame"] = packed[1]
        yield row


def _audio_rows(job: MediaJob) -> Iterator[Row]:
    fmt = job.option("sample_format", "f32")
    chunk_seconds = float(job.option("chunk_seconds", 1.0))
    planar = fmt.endswith("p")
    with _opened(job.path) as (d, _):
        a = _pick_track(d, job.track, "audio")
        d.select([a])
        with mediakit.AudioConverter.for_track(a, fmt, job.option("rate"), job.option("layout")) as conv:
            pending: list[np.ndarray[Any, Any]] = []
            held, offset = 0, 0

            def output_rate() -> int:
                out = conv.output_format
                return out[1] if out is not None else 0

            def emit(parts: list[np.ndarray[Any, Any]]) -> Row:
                samples = np.concatenate(parts, axis=1 if planar else 0)
                out = conv.output_format
                rate, channels = (out[1], out[2]) if out is not None else (0, 0)
                return {"path": job.path, "part": job.part, "track": a.index, "offset": offset,
                        "sample_rate": rate, "channels": channels, "samples": samples, "error": ""}

            def length(pcm: np.ndarray[Any, Any]) -> int:
                """Sample frames in a converted array."""
                return int(pcm.shape[1] if planar else pcm.shape[0])

            for packet in d.packets(a):
                pcm = conv.convert_packet(packet)
                if length(pcm):
                    pending.append(pcm)
                    held += length(pcm)
                if held and held >= chunk_seconds * output_rate():   # a full chunk at the output rate
                    yield emit(pending)
                    offset += held
                    pending, held = [], 0
            tail = conv.flush()
            if length(tail):
                pending.append(tail)
                held += length(tail)
            if held:
                yield emit(pending)


def _packet_rows(job: MediaJob) -> Iterator[Row]:
    include = bool(job.option("include_data", False))
    with _opened(job.path) as (d, _):
        if job.track is not None:
            d.select([_pick_track(d, job.track, "video")])
        for p in d.packets(None if job.track is None else job.track):
            yield {"path": job.path, "part": job.part, "track": p.track, "pts": p.pts, "dts": p.dts,
                   "duration": p.duration, "position": p.position, "keyframe": p.is_keyframe, "size": p.size,
                   "data": p.data if include else None, "error": ""}


def iter_rows(job: MediaJob) -> Iterator[Row]:
    """The rows of one job, as plain dicts, ending in an error row if the file fails."""
    columns = _COLUMNS[job.mode]
    try:
        if job.mode == "probe":
            yield probe_row(job.path)
            return
        yield from {"frames": _packed_frame_rows, "audio": _audio_rows, "packets": _packet_rows}[job.mode](job)
    except Exception as e:  # noqa: BLE001 - any failure of one file is that file's row, never the job's end
        yield _error_row(job, e, columns)


def _frame_blocks(job: MediaJob, blocks: _FrameBlocks) -> Iterator[Any]:
    """The blocks complete after each row of a frames job (the rows of iter_rows, their
    pictures packed into the blocks' frame columns), ending in an error row if the file fails."""
    try:
        for row in _frame_rows(job):
            yield from blocks.add(row)
    except Exception as e:  # noqa: BLE001 - as in iter_rows: a file's failure is its row
        yield from blocks.add(_error_row(job, e, _COLUMNS[job.mode]))


def read_job(jobs: Sequence[MediaJob], block_bytes: Optional[int] = None) -> Iterator[Any]:
    """The Ray blocks of some jobs, built as the files are read (the read task's function).
    block_bytes None: Ray's target block size (DataContext.target_max_block_size, 128 MiB by
    default), so that Ray passes the blocks on as they are instead of joining small ones.
    Frames jobs pack each picture straight into its block (_FrameBlocks)."""
    if block_bytes is None:
        block_bytes = getattr(ray.data.DataContext.get_current(), "target_max_block_size", None) or 128 << 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mediakit.TruncatedWarning)  # a cut file reads as far as it goes
        blocks = _Blocks(block_bytes)
        frames: Optional[_FrameBlocks] = None
        for job in jobs:
            if job.mode == "frames":
                if frames is None or frames.options != job.options:
                    done = frames.build() if frames is not None else None
                    if done is not None:
                        yield done
                    frames = _FrameBlocks(block_bytes, job)
                yield from _frame_blocks(job, frames)
                continue
            for row in iter_rows(job):
                arr = row.get("frame") if row.get("frame") is not None else row.get("samples")
                nbytes = arr.nbytes if isinstance(arr, np.ndarray) else 256 + len(row.get("data") or b"")
                key = None if arr is None else (arr.ndim, arr.dtype.str)
                out = blocks.add(row, nbytes, key)
                for b in (out if isinstance(out, tuple) else (out,)):
                    if b is not None:
                        yield b
        for last in (frames.build() if frames else None, blocks.build()):
            if last is not None:
                yield last


def _metadata(n_rows: Optional[int], size: Optional[int], files: tuple[str, ...]) -> BlockMetadata:
    """BlockMetadata for this Ray version (its fields changed across releases)."""
    wanted: dict[str, Any] = {"num_rows": n_rows, "size_bytes": size, "schema": None, "input_files": list(files),
              "exec_stats": None}
    params = inspect.signature(BlockMetadata).parameters
    return BlockMetadata(**{k: v for k, v in wanted.items() if k in params})


class MediaDatasource(Datasource):
    """A Ray Data datasource over media files (see the module's documentation)."""

    def __init__(self, paths: Union[PathLike, Sequence[PathLike]], mode: str = "probe", *,
                 split_seconds: Optional[float] = None, track: Optional[int] = None, block_bytes: Optional[int] = None,
                 **options: Any):
        super().__init__()  # type: ignore[no-untyped-call]  # Ray's own __init__ has no annotations
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        self.jobs = plan_jobs(paths, mode, split_seconds=split_seconds, track=track, **options)
        self.sizes = [_job_bytes(j) for j in self.jobs]         # one stat per job, for read_media and the tasks
        self.block_bytes = block_bytes

    def get_name(self) -> str:
        return "MediaKit"

    def estimate_inmemory_data_size(self) -> Optional[int]:
        return None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: Optional[int] = None,  # type: ignore[override]
                       **_kw: Any) -> list[ReadTask]:
        n = len(self.jobs) if parallelism is None or parallelism <= 0 else max(1, min(parallelism, len(self.jobs)))
        groups = _balanced_groups(self.jobs, n, self.sizes)
        tasks = []
        for group in groups:
            if not group:
                continue
            files = tuple(dict.fromkeys(j.path for j in group))
            size = sum(os.path.getsize(f) for f in files if os.path.isfile(f))
            fn = _ReadFn(tuple(group), self.block_bytes)
            kwargs: dict[str, Any] = {}
            if per_task_row_limit is not None and "per_task_row_limit" in inspect.signature(ReadTask).parameters:
                kwargs["per_task_row_limit"] = per_task_row_limit
            tasks.append(ReadTask(fn, _metadata(None, size, files), **kwargs))
        return tasks


#: Bytes of input per read task above which read_media makes more tasks than 4 per CPU.
TASK_BYTES = 512 << 20


def _job_bytes(job: MediaJob) -> int:
    """A job's share of its file's size (1 when the size is unknown: a URL, a missing file),
    the measure of its work that _balanced_groups and _task_count go by."""
    try:
        return max(1, os.path.getsize(job.path) // max(1, job.parts))
    except OSError:
        return 1


def _balanced_groups(jobs: Sequence[MediaJob], n: int, sizes: Optional[Sequence[int]] = None) -> list[list[MediaJob]]:
    """The jobs in n groups of about equal bytes (largest job first, each into the group with
    the fewest bytes so far), the largest group first, each in the jobs' own order. Ray Data
    starts tasks in this order, so the big ones do not come last. sizes: the jobs' _job_bytes,
    if known."""
    if sizes is None:
        sizes = [_job_bytes(j) for j in jobs]
    largest_first = sorted(range(len(jobs)), key=lambda k: -sizes[k])
    if n >= len(jobs):
        return [[jobs[k]] for k in largest_first]
    loads = [(0, i) for i in range(n)]                          # (bytes, group) as a heap
    members: list[list[int]] = [[] for _ in range(n)]
    for k in largest_first:
        load, g = heapq.heappop(loads)
        members[g].append(k)
        heapq.heappush(loads, (load + sizes[k], g))
    totals = dict((g, load) for load, g in loads)
    order = sorted(range(n), key=lambda g: -totals[g])
    return [[jobs[k] for k in sorted(members[g])] for g in order if members[g]]


def _task_count(jobs: Sequence[MediaJob], sizes: Optional[Sequence[int]] = None) -> int:
    """How many read tasks read_media asks Ray for: one per job, but no more than 4 per CPU of
    the cluster (or one per TASK_BYTES of input, if that is more). Each task costs about 0.2 s
    of a worker's time in Ray Data's scheduling (measured: a 2-CPU cluster idled 450 CPU ticks
    in a 20-file decode job with 20 tasks and 300 with 4; the 20-task job took 8% longer), a tenth
    of a 10 s 1080p file's decode. 4 tasks per CPU keep the cores busy to the end (the last
    task is at most a quarter of a core's share). Ray not started yet, or no CPU listed: one
    task per job."""
    try:
        resources = ray.cluster_resources() if ray.is_initialized() else {}  # type: ignore[no-untyped-call]
        cpus = int(resources.get("CPU", 0))
    except Exception:  # noqa: BLE001 - a cluster that cannot say: one task per job, as before
        cpus = 0
    if cpus <= 0:
        return max(1, len(jobs))
    total = sum(sizes) if sizes is not None else sum(_job_bytes(j) for j in jobs)
    by_size = -(-total // TASK_BYTES)
    return max(1, min(len(jobs), max(4 * cpus, by_size)))


@dataclass(frozen=True)
class _ReadFn:
    """The picklable read function of one task: its jobs and the block size."""
    jobs: tuple[MediaJob, ...]
    block_bytes: Optional[int]

    def __call__(self) -> Iterable[Any]:
        return read_job(self.jobs, self.block_bytes)


def read_media(paths: Sequence[PathLike], mode: str = "probe", *, split_seconds: Optional[float] = None,
               track: Optional[int] = None, pixel_format: str = "nv12", sample_format: str = "f32",
               rate: Optional[int] = None, layout: Optional[mediakit.Layout] = None, chunk_seconds: float = 1.0,
               include_data: bool = False, threads: int = 1, width: Optional[int] = None, height: Optional[int] = None,
               interpolation: str = "bicubic", frame_rate: Union[int, float, str, Fraction, None] = None,
               block_bytes: Optional[int] = None, **read_args: Any) -> "ray.data.Dataset":
    """A Ray Dataset of media rows (see the module's documentation for the columns).

    mode: "probe" (a row per file), "frames" (a row per decoded picture of the video track,
    ``pixel_format`` "nv12" or "i420", scaled to ``width`` x ``height`` (both, or neither:
    the decoded size) with ``interpolation`` (mediakit.SCALE_FILTERS; default "bicubic", as the
    ffmpeg tool), at ``frame_rate`` (an int, Fraction or "30000/1001"; default None: every
    decoded picture) as ffmpeg's fps filter; the bytes of ``ffmpeg -vf
    fps=R,scale=W:H:flags=bicubic -pix_fmt nv12``), "audio" (rows of about ``chunk_seconds`` of the audio
    track converted to ``sample_format`` / ``rate`` / ``layout``, None keeping the track's),
    "packets" (a row per packet, its bytes with ``include_data``).
    track: the track index (default: the first video track for frames, audio for audio, every
    track for packets). split_seconds (frames): cut files longer than this into key-frame
    aligned ranges read in parallel. threads: decoder threads per worker (1: Ray's parallelism
    is by task). read_args go to ``ray.data.read_datasource`` (``override_num_blocks``,
    ``ray_remote_args``, ...). Tasks: one per file (or part), but files are grouped, by size,
    into about 4 tasks per CPU of the cluster when there are more (each task costs Ray Data
    about 0.2 s of a worker's time; see _task_count); on a cluster that will grow
    (autoscaling), pass ``override_num_blocks=len(paths)`` for one task per file."""
    if mode == "frames" and pixel_format not in ("nv12", "i420"):
        raise ValueError(f"pixel_format is 'nv12' or 'i420' (what Frame.to_numpy packs), not {pixel_format!r}")
    frames: dict[str, Any] = {"pixel_format": pixel_format, "threads": threads}
    if (width is None) != (height is None):
        raise ValueError("give both width and height (or neither: the decoded size)")
    if width is not None and height is not None:
        if int(width) <= 0 or int(height) <= 0:
            raise ValueError(f"width and height must be positive, not {width}x{height}")
        if interpolation not in mediakit.SCALE_FILTERS:
            raise ValueError(f"unknown interpolation {interpolation!r}: one of {', '.join(mediakit.SCALE_FILTERS)}")
        frames.update(width=int(width), height=int(height), interpolation=interpolation)
    if frame_rate is not None:
        frames["frame_rate"] = _frame_rate(frame_rate)
    options: dict[str, Any] = {"frames": frames,
               "audio": {"sample_format": sample_format, "rate": rate, "layout": layout, "chunk_seconds": chunk_seconds},
               "packets": {"include_data": include_data}}.get(mode, {})
    source = MediaDatasource(paths, mode, split_seconds=split_seconds, track=track, block_bytes=block_bytes, **options)
    # At most one read task per job, and jobs grouped so that there are no more than about 4
    # tasks per CPU (_task_count). Left to itself Ray asks for more blocks than jobs and splits
    # each task's output, which also keeps it from fusing the read with a map_batches that
    # follows (the frames would then cross the object store between the two).
    read_args.setdefault("override_num_blocks", _task_count(source.jobs, source.sizes))
    dataset: ray.data.Dataset = ray.data.read_datasource(source, **read_args)
    return dataset


# -- remux and transcode (map_batches) -----------------------------------------------------------

def _write_output(path: PathLike, target_dir: PathLike, relative_to: Optional[PathLike], suffix: str,
                  overwrite: bool, write: Callable[[str, Path], None]) -> Row:
    """Runs ``write(path, output)`` for one file's output under target_dir (its name with
    ``suffix``, or its path under ``relative_to``, kept under target_dir) and returns
    {path, output, size_bytes, error}; a failure is the row's error, never an exception.
    ``write`` is mediakit.remux or mediakit.transcode, which write a temporary file beside
    the output and rename it when complete, so the output name never holds a partial file."""
    path = os.fspath(path)
    rel = Path(os.path.relpath(path, relative_to)) if relative_to is not None else Path(Path(path).name)
    if rel.is_absolute() or ".." in rel.parts:
        rel = Path(Path(path).name)
    out = Path(target_dir) / rel.with_suffix(suffix)
    row: Row = {"path": path, "output": str(out), "size_bytes": 0, "error": ""}
    try:
        if out.exists() and not overwrite:
            row["size_bytes"] = out.stat().st_size
            return row
        out.parent.mkdir(parents=True, exist_ok=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", mediakit.TruncatedWarning)
            write(path, out)
        row["size_bytes"] = out.stat().st_size
    except Exception as e:  # noqa: BLE001 - a file's failure is its row
        row["output"], row["error"] = "", f"{type(e).__name__}: {e}"
    return row


def _output_columns(rows: list[Row]) -> dict[str, np.ndarray[Any, Any]]:
    """The columns path, output, size_bytes, error of some _write_output rows (a numpy batch)."""
    cols: dict[str, np.ndarray[Any, Any]] = {}
    for name in ("path", "output", "size_bytes", "error"):
        values = [r[name] for r in rows]
        if name == "size_bytes":
            cols[name] = np.array(values, dtype=np.int64)
        else:
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
            cols[name] = arr
    return cols


def remux_file(path: PathLike, target_dir: PathLike, *, relative_to: Optional[PathLike] = None,
               suffix: str = ".mp4", overwrite: bool = True, **options: Any) -> Row:
    """Remuxes one file (mediakit.remux: its default tracks copied, MP4 out) to target_dir/<name><suffix>
    (or its path under `relative_to`, kept under target_dir), atomically (see _write_output).
    Returns {path, output, size_bytes, error}; a failure is the row's error, never an exception."""
    return _write_output(path, target_dir, relative_to, suffix, overwrite,
                         lambda src, dst: mediakit.remux(src, dst, **options))


def remux_batch(batch: Any, *, target_dir: PathLike, relative_to: Optional[PathLike] = None, suffix: str = ".mp4",
                overwrite: bool = True, **options: Any) -> dict[str, np.ndarray[Any, Any]]:
    """``map_batches``-ready remux: takes a batch with a ``path`` column (numpy or pandas batch
    format), remuxes every file (remux_file) and returns the columns path, output, size_bytes,
    error. Options (faststart, fragment, hybrid) go to mediakit.remux::

        ds.map_batches(mediakit.ray.remux_batch, fn_kwargs={"target_dir": "out"}, batch_size=4)
    """
    return _output_columns([remux_file(p, target_dir, relative_to=relative_to, suffix=suffix, overwrite=overwrite,
                                       **options) for p in list(batch["path"])])


def transcode_file(path: PathLike, target_dir: PathLike, *, relative_to: Optional[PathLike] = None,
                   suffix: str = ".m4a", overwrite: bool = True, **options: Any) -> Row:
    """Transcodes one file's first audio track (mediakit.transcode, gapless) to
    target_dir/<name><suffix> (or its path under `relative_to`, kept under target_dir),
    atomically (see _write_output); the suffix picks the container and the default codec as
    for mediakit.transcode (.m4a AAC, .opus / .ogg Opus, .flac, .mp3, .mka ...). Returns
    {path, output, size_bytes, error}; a failure (no audio track, a damaged file) is the row's
    error, never an exception."""
    return _write_output(path, target_dir, relative_to, suffix, overwrite,
                         lambda src, dst: mediakit.transcode(src, dst, **options))


def transcode_batch(batch: Any, *, target_dir: PathLike, relative_to: Optional[PathLike] = None,
                    suffix: str = ".m4a", overwrite: bool = True, **options: Any) -> dict[str, np.ndarray[Any, Any]]:
    """``map_batches``-ready transcode: takes a batch with a ``path`` column (numpy or pandas
    batch format), transcodes every file (transcode_file) and returns the columns path,
    output, size_bytes, error. Options (codec, bitrate, quality, sample_rate, channels,
    copy_video, backend) go to mediakit.transcode::

        ds.map_batches(mediakit.ray.transcode_batch,
                       fn_kwargs={"target_dir": "out", "suffix": ".opus", "bitrate": 64000}, batch_size=4)
    """
    return _output_columns([transcode_file(p, target_dir, relative_to=relative_to, suffix=suffix,
                                           overwrite=overwrite, **options) for p in list(batch["path"])])
