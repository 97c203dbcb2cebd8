"""MediaKit inside Ray: read a folder (or a bucket's worth) of media as a Ray Dataset, and
remux files from ``map_batches``. Install with ``pip install mediakit[ray]``.

    import ray, mediakit.ray as mkray
    ray.init()
    probes = mkray.read_media(paths, mode="probe").take_all()           # one row per file
    frames = mkray.read_media(paths, mode="frames", pixel_format="nv12",
                              split_seconds=60)                          # one row per frame
    pcm = mkray.read_media(paths, mode="audio", sample_format="f32", rate=16000, layout="mono")
    packets = mkray.read_media(paths, mode="packets")                    # one row per packet
    done = ray.data.from_items([{"path": p} for p in paths]).map_batches(
        mkray.remux_batch, fn_kwargs={"target_dir": "out/"}, batch_size=4)

Rows (every mode has ``path``, ``part`` and ``error``: "" when the file was read, else the
message of what failed for it; a file that cannot be read gives an error row, with the other
columns None or empty, and the job goes on; a string rather than None so that every block's
column has one type, whatever the batch format):

- probe: ``size_bytes``, ``duration``, ``track_count``, ``codecs`` ("h264,aac"), ``width``,
  ``height`` (first video track), ``sample_rate``, ``channels`` (first audio track),
  ``tracks`` (a list of dicts: index, media_type, codec, codec_tag, width, height,
  sample_rate, channels, frame_rate, duration, language, unsupported).
- frames: ``track``, ``pts`` (track time base), ``time`` (seconds), ``duration``, ``width``,
  ``height``, ``pixel_format``, ``frame`` (numpy uint8: NV12 (height * 3 // 2, width), or
  I420 flat, as ``Frame.to_numpy``).
- audio: ``track``, ``offset`` (first sample of the chunk, counted at the output rate),
  ``sample_rate``, ``channels``, ``samples`` (numpy (frames, channels), or (channels, frames)
  for a planar format), about ``chunk_seconds`` per row.
- packets: ``track``, ``pts``, ``dts``, ``duration``, ``position``, ``keyframe``, ``size``
  and, with ``include_data=True``, ``data`` (bytes).

Work is split by file, and (frames mode, ``split_seconds``) a long file's video track into
key-frame-aligned time ranges: part i starts at a key frame k_i (the demuxer seeks there) and
gives the frames with k_i <= pts < k_(i+1), so the parts together give exactly the frames of
one whole-file decode, none twice and none missing.

Workers: each Ray worker process loads libmediakit (and its plugins, lazily, on first use) for
itself; a job is a small picklable ``MediaJob``; rows are built and handed on in blocks of
about ``block_bytes`` (default: Ray's target block size) as the file is read (no file is held in memory whole). A library used
from a checkout (not installed with pip) is found in the workers through
``runtime_env()``: ``ray.init(runtime_env=mediakit.ray.runtime_env())``.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Sequence, Union

import numpy as np

import mediakit

try:
    import ray
    from ray.data.block import BlockAccessor, BlockMetadata
    from ray.data.datasource import Datasource, ReadTask
except ImportError as _e:  # pragma: no cover - depends on the environment
    raise ImportError("mediakit.ray needs Ray Data: pip install 'mediakit[ray]' (or pip install 'ray[data]')") from _e

__all__ = ["MediaJob", "MediaDatasource", "read_media", "plan_jobs", "read_job", "remux_batch", "remux_file",
           "runtime_env", "frame_digest", "MODES"]

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
    "probe": ("path", "part", "size_bytes", "duration", "track_count", "codecs", "width", "height", "sample_rate",
              "channels", "tracks", "error"),
    "frames": ("path", "part", "track", "pts", "time", "duration", "width", "height", "pixel_format", "frame", "error"),
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
        return {"path": path, "part": 0, "size_bytes": size, "duration": d.duration,
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


def _frame_rows(job: MediaJob) -> Iterator[Row]:
    layout = job.option("pixel_format", "nv12")
    threads = int(job.option("threads", 1))
    with _opened(job.path) as (d, _):
        v = _pick_track(d, job.track, "video")
        d.select([v])
        packets = d.packets(v) if job.start_pts is None else _seek_to(d, v, job.start_pts)
        with mediakit.Decoder(v, threads=threads) as dec:
            for frame in dec.frames(packets):
                pts = frame.pts
                if job.start_pts is not None and pts < job.start_pts:
                    continue                     # before this part (a leading picture of an open GOP)
                if job.end_pts is not None and pts >= job.end_pts:
                    break                        # frames come in pts order: the rest is the next part's
                arr = frame.to_numpy(layout)
                yield {"path": job.path, "part": job.part, "track": v.index, "pts": pts,
                       "time": float(pts * frame.time_base), "duration": frame.duration, "width": frame.width,
                       "height": frame.height, "pixel_format": layout, "frame": arr, "error": ""}
                frame.close()


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
        yield from {"frames": _frame_rows, "audio": _audio_rows, "packets": _packet_rows}[job.mode](job)
    except Exception as e:  # noqa: BLE001 - any failure of one file is that file's row, never the job's end
        yield _error_row(job, e, columns)


def read_job(jobs: Sequence[MediaJob], block_bytes: Optional[int] = None) -> Iterator[Any]:
    """The Ray blocks of some jobs, built as the files are read (the read task's function).
    block_bytes None: Ray's target block size (DataContext.target_max_block_size, 128 MiB by
    default), so that Ray passes the blocks on as they are instead of joining small ones."""
    if block_bytes is None:
        block_bytes = getattr(ray.data.DataContext.get_current(), "target_max_block_size", None) or 128 << 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mediakit.TruncatedWarning)  # a cut file reads as far as it goes
        blocks = _Blocks(block_bytes)
        for job in jobs:
            for row in iter_rows(job):
                arr = row.get("frame") if row.get("frame") is not None else row.get("samples")
                nbytes = arr.nbytes if isinstance(arr, np.ndarray) else 256 + len(row.get("data") or b"")
                key = None if arr is None else (arr.ndim, arr.dtype.str)
                out = blocks.add(row, nbytes, key)
                for b in (out if isinstance(out, tuple) else (out,)):
                    if b is not None:
                        yield b
        last = blocks.build()
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
        self.block_bytes = block_bytes

    def get_name(self) -> str:
        return "MediaKit"

    def estimate_inmemory_data_size(self) -> Optional[int]:
        return None

    def get_read_tasks(self, parallelism: int, per_task_row_limit: Optional[int] = None,  # type: ignore[override]
                       **_kw: Any) -> list[ReadTask]:
        n = len(self.jobs) if parallelism is None or parallelism <= 0 else max(1, min(parallelism, len(self.jobs)))
        groups = [self.jobs[i::n] for i in range(n)]            # round robin: long and short files mix
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
               include_data: bool = False, threads: int = 1, block_bytes: Optional[int] = None,
               **read_args: Any) -> "ray.data.Dataset":
    """A Ray Dataset of media rows (see the module's documentation for the columns).

    mode: "probe" (a row per file), "frames" (a row per decoded picture of the video track,
    ``pixel_format`` "nv12" or "i420"), "audio" (rows of about ``chunk_seconds`` of the audio
    track converted to ``sample_format`` / ``rate`` / ``layout``, None keeping the track's),
    "packets" (a row per packet, its bytes with ``include_data``).
    track: the track index (default: the first video track for frames, audio for audio, every
    track for packets). split_seconds (frames): cut files longer than this into key-frame
    aligned ranges read in parallel. threads: decoder threads per worker (1: Ray's parallelism
    is by task). read_args go to ``ray.data.read_datasource`` (``override_num_blocks``,
    ``ray_remote_args``, ...)."""
    if mode == "frames" and pixel_format not in ("nv12", "i420"):
        raise ValueError(f"pixel_format is 'nv12' or 'i420' (what Frame.to_numpy packs), not {pixel_format!r}")
    by_mode: dict[str, dict[str, Any]] = {
        "frames": {"pixel_format": pixel_format, "threads": threads},
        "audio": {"sample_format": sample_format, "rate": rate, "layout": layout, "chunk_seconds": chunk_seconds},
        "packets": {"include_data": include_data}}
    options = by_mode.get(mode, {})
    source = MediaDatasource(paths, mode, split_seconds=split_seconds, track=track, block_bytes=block_bytes, **options)
    # One read task per job. Left to itself Ray asks for more blocks than jobs and splits
    # each task's output, which also keeps it from fusing the read with a map_batches that
    # follows (the frames would then cross the object store between the two).
    read_args.setdefault("override_num_blocks", max(1, len(source.jobs)))
    dataset: ray.data.Dataset = ray.data.read_datasource(source, **read_args)
    return dataset


# -- remux (map_batches) ------------------------------------------------------------------------

def remux_file(path: PathLike, target_dir: PathLike, *, relative_to: Optional[PathLike] = None,
               suffix: str = ".mp4", overwrite: bool = True, **options: Any) -> Row:
    """Remuxes one file (mediakit.remux: every track copied, MP4 out) to target_dir/<name><suffix>
    (or its path under `relative_to`, kept under target_dir). mediakit.remux writes a temporary
    file and renames it when complete, so the output name never holds a partial file. Returns
    {path, output, size_bytes, error}; a failure is the row's error, never an exception."""
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
            mediakit.remux(path, out, **options)
        row["size_bytes"] = out.stat().st_size
    except Exception as e:  # noqa: BLE001 - a file's failure is its row
        row["output"], row["error"] = "", f"{type(e).__name__}: {e}"
    return row


def remux_batch(batch: Any, *, target_dir: PathLike, relative_to: Optional[PathLike] = None,
                suffix: str = ".mp4", overwrite: bool = True, **options: Any) -> dict[str, np.ndarray[Any, Any]]:
    """``map_batches``-ready remux: takes a batch with a ``path`` column (any batch format:
    numpy, pandas, pyarrow), remuxes every file (remux_file) and returns the columns path, output, size_bytes,
    error. Options (faststart, fragment, hybrid) go to mediakit.remux::

        ds.map_batches(mediakit.ray.remux_batch, fn_kwargs={"target_dir": "out"}, batch_size=4)
    """
    paths = list(batch["path"])
    rows = [remux_file(p, target_dir, relative_to=relative_to, suffix=suffix, overwrite=overwrite, **options)
            for p in paths]
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
