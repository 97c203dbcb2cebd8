"""mediakit.ray on a local Ray cluster (2 CPUs, loopback only) against the single-process
result (issue 19): every row of every mode equals what a plain loop over the mediakit API
gives in this process; frame hashes also equal ffmpeg's framemd5 of the decoded NV12
pictures (scaled: of `-vf scale=W:H:flags=F`, same libswscale; at a frame rate: the pts and
hashes of `-vf fps=R`), probe rows' container is one of ffprobe's format names, remuxed files
equal ffmpeg's framemd5 of the source (an MP4) or of its remux to MP4 (-c copy), transcoded files the single-process
transcode (packets, ffmpeg's decoded length; the gapless length is the source's); a file split into
key frame aligned time ranges gives the frames of a whole-file decode; a corrupt file gives
an error row and the job completes.

Ray is installed by scripts/deps.sh: without it these tests skip, and fail under CI=true.
One cluster serves the module (its start is most of the time these tests take).
"""
import hashlib
import os
import subprocess
import warnings
from collections import defaultdict
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar, Union

import numpy as np
import pytest

import mediakit

from bindings_lib import framemd5

T = TypeVar("T")

try:
    import ray
    import ray.data
    import mediakit.ray as mkray
    from ray.data.block import BlockAccessor
except ImportError as e:  # pragma: no cover - depends on the environment
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(f"Ray is not installed ({e}): scripts/deps.sh installs it", allow_module_level=True)

SHARED_FILES = ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mp4_hevc_hvc1_aac_ctts_elst.mp4", "webm_vp9_192x144_2s.webm",
                "ivf_av1_320x180_1s.ivf", "ogg_vorbis_stereo_1s.ogg", "mp3_vbr_xing_mono_44k_4s.mp3",
                "broken_mp3_3_bytes.mp3"]


def ffmpeg(*args: object) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-y", *map(str, args)], check=True)


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory, shared_media: Path) -> dict[str, Any]:
    """Generated files (H.264 with B-frames and a key frame a second, closed and open GOP;
    AAC), part of ../shared/media, a file of garbage and a cut copy."""
    d = tmp_path_factory.mktemp("ray-media")
    closed, opened = d / "gen_h264_closed_gop.mp4", d / "gen_h264_open_gop.mp4"
    common = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=6", "-f", "lavfi",
              "-i", "sine=frequency=440:sample_rate=48000:duration=6", "-c:v", "libx264", "-preset", "veryfast",
              "-bf", "2", "-g", "25", "-keyint_min", "25", "-sc_threshold", "0", "-c:a", "aac", "-movflags", "+faststart",
              "-shortest"]
    ffmpeg(*common, closed)
    ffmpeg(*common, "-x264-params", "open-gop=1", opened)
    bad = d / "garbage.mp4"
    bad.write_bytes(bytes(range(256)) * 64)
    cut = d / "gen_h264_cut.mp4"
    cut.write_bytes(closed.read_bytes()[: closed.stat().st_size * 2 // 3])
    return {"generated": [closed, opened], "shared": [shared_media / n for n in SHARED_FILES], "bad": bad, "cut": cut,
            "all": [closed, opened, *[shared_media / n for n in SHARED_FILES], bad, cut]}


@pytest.fixture(scope="module")
def cluster() -> Iterator[None]:
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")     # no reporting: loopback only
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", runtime_env=mkray.runtime_env(),
             log_to_driver=False, configure_logging=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    yield
    ray.shutdown()


def digest(array: np.ndarray[Any, Any]) -> str:
    return hashlib.md5(np.ascontiguousarray(array).tobytes()).hexdigest()


def quietly(fn: Callable[..., T], *args: Any) -> T:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", mediakit.TruncatedWarning)
        return fn(*args)


# -- the single-process results, written directly over the mediakit API ------------------------

def local_probe(path: str) -> tuple[float, list[tuple[int, str, str, int, int, int, int]]]:
    with mediakit.open(path) as d:
        return (d.duration, [(t.index, t.media_type, t.codec, t.width, t.height, t.sample_rate, t.channels)
                             for t in d.tracks])


def local_probe_row(path: str) -> dict[str, Any]:
    """Every column of a probe row, from a plain read of the file in this process."""
    with mediakit.open(path) as d:
        video = [t for t in d.tracks if t.media_type == "video"]
        audio = [t for t in d.tracks if t.media_type == "audio"]
        return {"path": str(path), "part": 0, "container": d.container, "size_bytes": os.path.getsize(path),
                "duration": d.duration, "track_count": len(d.tracks),
                "codecs": ",".join(t.codec or t.codec_tag for t in d.tracks),
                "width": video[0].width if video else 0, "height": video[0].height if video else 0,
                "sample_rate": audio[0].sample_rate if audio else 0, "channels": audio[0].channels if audio else 0,
                "tracks": [{"index": t.index, "media_type": t.media_type, "codec": t.codec, "codec_tag": t.codec_tag,
                            "width": t.width, "height": t.height, "sample_rate": t.sample_rate,
                            "channels": t.channels, "frame_rate": float(t.frame_rate),
                            "duration": t.duration_seconds, "language": t.language,
                            "unsupported": t.unsupported or ""} for t in d.tracks],
                "error": ""}


def ffprobe_format_names(path: str) -> list[str]:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=format_name", "-of", "default=nw=1:nk=1", str(path)],
                         capture_output=True, text=True).stdout.strip()
    return out.split(",") if out else []


def local_frames(path: str) -> list[tuple[int, str]]:
    with mediakit.open(path) as d:
        v = next(t for t in d.tracks if t.media_type == "video")
        return [(f.pts, digest(f.to_numpy("nv12"))) for f in mediakit.DecodeSession(v, threads=1).frames(d.packets(v))]


def local_audio(path: str) -> np.ndarray[Any, Any]:
    with mediakit.open(path) as d:
        a = next(t for t in d.tracks if t.media_type == "audio")
        with mediakit.AudioConverter.for_track(a, "f32", 16000, "mono") as conv:
            parts = [conv.convert_packet(p) for p in d.packets(a)] + [conv.flush()]
    return np.concatenate(parts)


def local_packets(path: str) -> list[tuple[int, int, int, int, int, bool, int]]:
    with mediakit.open(path) as d:
        return [(p.track, p.pts, p.dts, p.duration, p.position, p.is_keyframe, p.size) for p in d]


def outcome(fn: Callable[[str], T], path: str) -> tuple[bool, Optional[T]]:
    """(True, result) or (False, None) when the file cannot be read (the error row's case)."""
    try:
        return True, quietly(fn, path)
    except (mediakit.MediaError, StopIteration):
        return False, None


def succeeds(fn: Callable[..., Any], *args: Any) -> bool:
    """True when a single-process call goes through; False when it raises MediaError (the
    error row's case)."""
    try:
        quietly(fn, *args)
        return True
    except mediakit.MediaError:
        return False


def by_path(rows: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r["path"]].append(r)
    return out


# -- the tests ----------------------------------------------------------------------------------

def test_probe_rows_equal_the_single_process_probe(media: dict[str, Any], cluster: None) -> None:
    paths = [str(p) for p in media["all"]]
    rows = by_path(mkray.read_media(paths, "probe").take_all())
    assert sorted(rows) == sorted(paths)
    for path in paths:
        (row,) = rows[path]
        ok, expected = outcome(local_probe, path)
        assert (row["error"] == "") == ok, (path, row["error"])
        if not ok:
            assert path in row["error"] or "MK_E" in row["error"]
            continue
        assert expected is not None
        duration, tracks = expected
        assert row["duration"] == duration
        assert row["size_bytes"] == os.path.getsize(path)
        assert [(t["index"], t["media_type"], t["codec"], t["width"], t["height"], t["sample_rate"], t["channels"])
                for t in row["tracks"]] == tracks
        assert row["codecs"] == ",".join(t[2] for t in tracks)
        assert {k: (list(v) if k == "tracks" else v) for k, v in row.items()} == quietly(local_probe_row, path), path
        assert row["container"] in ffprobe_format_names(path), (path, row["container"])   # FFmpeg's name for it
    (bad,) = rows[str(media["bad"])]
    assert bad["error"] and "MK_E" in bad["error"]


def ffmpeg_nv12_md5s(path: Path) -> list[str]:
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", "0:v:0", "-fps_mode", "passthrough",
                          "-pix_fmt", "nv12", "-f", "framemd5", "-"], check=True, capture_output=True, text=True).stdout
    return [line.split(",")[-1].strip() for line in out.splitlines() if line and not line.startswith("#")]


def test_frames_split_by_key_frames_equal_a_whole_file_decode(media: dict[str, Any], cluster: None) -> None:
    videos = [*media["generated"], media["shared"][0], media["shared"][1], media["shared"][2], media["shared"][3],
              media["cut"], media["bad"]]
    paths = [str(p) for p in videos]
    jobs = mkray.plan_jobs(paths, "frames", split_seconds=1.0)
    parts: dict[str, int] = defaultdict(int)
    for j in jobs:
        parts[j.path] += 1
    assert parts[str(media["generated"][0])] >= 5 and parts[str(media["generated"][1])] >= 5
    assert parts[str(media["shared"][0])] >= 5                       # 8 s, a key frame a second
    rows = by_path(mkray.read_media(paths, "frames", split_seconds=1.0).take_all())
    for path in paths:
        ok, expected = outcome(local_frames, path)
        got = rows[path]
        errors = [r["error"] for r in got if r["error"] != ""]
        assert (not errors) == ok, (path, errors)
        if not ok:
            continue
        frames = sorted((r["pts"], mkray.frame_digest(r["frame"])) for r in got)
        assert frames == expected, path                             # none twice, none missing, same pixels
        if path != str(media["cut"]):                               # (past the cut, parts are empty)
            assert len({r["part"] for r in got}) == parts[path], path  # every part gave frames
    for gen in media["generated"]:                                  # the pixels are ffmpeg's
        assert [h for _, h in sorted((r["pts"], mkray.frame_digest(r["frame"])) for r in rows[str(gen)])] \
            == ffmpeg_nv12_md5s(gen)


# MP4 files with edit lists: a start trimmed away (the first picture before the edit), an
# empty edit then the media, HEVC with ctts; the first also has I frames that are not IDRs
# marked as sync samples, with B frames after them that refer to pictures before them.
EDIT_LISTS = ["mp4_h264_bframes_iibbibb_elst_offset.mp4", "mp4_h264_aac_elst_video_empty_edit_1s_then_media.mp4",
              "mp4_hevc_hvc1_aac_ctts_elst.mp4", "mp4_h264_aac_elst_media_time_offsets_moov_first.mp4"]


def test_edit_list_files_give_ffmpegs_frames_whole_and_split(cluster: None, shared_media: Path) -> None:
    """The frames of an MP4 with an edit list are ffmpeg's (none from the trimmed window),
    read whole or split into key frame ranges; a part starting at a sync sample the decoder
    cannot start at cleanly (a non-IDR I frame) still gives every picture of its range."""
    for name in EDIT_LISTS:
        path = str(shared_media / name)
        expected = ffmpeg_nv12_md5s(Path(path))
        for split in (None, 0.2):
            parts = len(mkray.plan_jobs([path], "frames", split_seconds=split))
            assert split is None or parts > 1 or name == "mp4_hevc_hvc1_aac_ctts_elst.mp4", name
            rows = mkray.read_media([path], "frames", split_seconds=split).take_all()
            assert all(r["error"] == "" for r in rows), name
            got = sorted((r["pts"], mkray.frame_digest(r["frame"])) for r in rows)
            assert [h for _, h in got] == expected, (name, split, len(got), len(expected))
            assert got == local_frames(path), (name, split)


def local_frame_rows(path: str) -> list[dict[str, Any]]:
    """Every column of the frames mode's rows of a whole file, from a plain decode loop in
    this process."""
    with mediakit.open(path) as d:
        v = next(t for t in d.tracks if t.media_type == "video")
        return [{"path": path, "part": 0, "track": v.index, "pts": f.pts, "source_pts": f.pts,
                 "time": float(f.pts * f.time_base), "duration": f.duration, "width": f.width, "height": f.height,
                 "pixel_format": "nv12", "frame": f.to_numpy("nv12"), "error": ""}
                for f in mediakit.DecodeSession(v, threads=1).frames(d.packets(v))]


def assert_same_rows(got: list[dict[str, Any]], expected: list[dict[str, Any]], what: str) -> None:
    assert len(got) == len(expected), what
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g.keys() == e.keys(), (what, i)
        for name, value in e.items():
            if isinstance(value, np.ndarray):
                assert g[name].dtype == value.dtype and g[name].shape == value.shape, (what, i, name)
                assert np.array_equal(g[name], value), (what, i, name)
            else:
                assert g[name] == value and type(g[name]) is type(value), (what, i, name, g[name], value)


def test_frame_rows_in_shared_blocks_equal_the_single_process_rows(media: dict[str, Any], cluster: None,
                                                                    shared_media: Path) -> None:
    """Pictures are packed straight into their block's frame column, blocks span files and
    end inside them, memory of blocks that are gone is used again: every column of every row
    still equals the plain loop's (an error row in between), and pictures that frame_rate
    repeats across a block's end still equal ffmpeg's fps output."""
    files = [media["generated"][0], shared_media / "webm_vp9_192x144_2s.webm", media["bad"], media["shared"][0]]
    paths = [str(p) for p in files]
    expected: list[dict[str, Any]] = []
    for path in paths:
        ok, rows = outcome(local_frame_rows, path)
        expected += rows if ok and rows is not None else \
            [{"path": path, "part": 0, "track": None, "pts": None, "source_pts": None, "time": None, "duration": None,
              "width": None, "height": None, "pixel_format": None, "frame": np.zeros((0, 0), np.uint8), "error": ""}]

    def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The error row's message is checked apart (the plain loop raises it)."""
        out = []
        for r in rows:
            r = dict(r)
            if r["path"] == str(media["bad"]):
                assert "MK_E" in r["error"], r["error"]
                r["error"] = ""
            out.append(r)
        return out

    small = 1 << 20                                  # a few pictures a block: blocks end inside files
    one_task = mkray.read_media(paths, "frames", block_bytes=small, override_num_blocks=1).take_all()
    assert_same_rows(comparable(one_task), expected, "one read task")
    jobs = mkray.plan_jobs(paths, "frames")
    held = list(mkray.read_job(jobs, small))         # every block alive at once
    assert len(held) > 10

    def block_rows(block: Any) -> list[dict[str, Any]]:
        rows: Iterable[dict[str, Any]] = BlockAccessor.for_block(block).iter_rows(public_row_format=True)
        return [dict(r) for r in rows]

    assert_same_rows(comparable([r for b in held for r in block_rows(b)]), expected, "blocks held")
    streamed: list[dict[str, Any]] = []              # each block dropped before the next is made
    for b in mkray.read_job(jobs, small):
        streamed += [{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in r.items()} for r in block_rows(b)]
        del b
    assert_same_rows(comparable(streamed), expected, "blocks streamed")
    path = str(media["generated"][0])
    repeated = mkray.read_media([path], "frames", frame_rate=50, block_bytes=small, override_num_blocks=1).take_all()
    assert [(r["pts"], mkray.frame_digest(r["frame"])) for r in repeated] == ffmpeg_frames(path, "fps=50", copyts=True)


def test_the_next_read_task_packs_into_the_memory_of_the_last_ones_blocks(media: dict[str, Any],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ray worker runs one read task per file. Frame blocks come from one memory pool per
    process (mkray._SLABS), so once a task's blocks are gone the next task packs its pictures
    into their memory instead of faulting in and zeroing fresh pages for its first blocks."""
    import math
    jobs = mkray.plan_jobs([str(media["generated"][0])], "frames")
    small = 1 << 20                                  # a few pictures a block
    for b in mkray.read_job(jobs, small):
        del b
    assert mkray._SLABS.free, "the first task's blocks are gone, but no memory came back to the pool"
    found: list[bool] = []
    take = mkray._Slabs.take

    def spy(self: Any, shape: tuple[int, ...], dtype: np.dtype[Any]) -> np.ndarray[Any, Any]:
        found.append(any(s.nbytes == math.prod(shape) * dtype.itemsize for s in self.free))
        return take(self, shape, dtype)

    monkeypatch.setattr(mkray._Slabs, "take", spy)
    for b in mkray.read_job(jobs, small):
        del b
    assert len(found) > 3 and all(found), f"blocks of the second task on fresh memory: {found}"


def test_audio_rows_equal_the_single_process_conversion(media: dict[str, Any], cluster: None) -> None:
    audio = [media["generated"][0], media["shared"][0], media["shared"][4], media["shared"][5], media["shared"][6]]
    paths = [str(p) for p in audio]
    rows = by_path(mkray.read_media(paths, "audio", sample_format="f32", rate=16000, layout="mono",
                                    chunk_seconds=0.5).take_all())
    for path in paths:
        ok, expected = outcome(local_audio, path)
        got = sorted(rows[path], key=lambda r: r["offset"] if r["offset"] is not None else -1)
        assert (all(r["error"] == "" for r in got)) == ok, path
        if not ok:
            continue
        offsets = [r["offset"] for r in got]
        assert offsets == list(np.cumsum([0] + [len(r["samples"]) for r in got[:-1]]))
        assert all(r["sample_rate"] == 16000 and r["channels"] == 1 for r in got)
        assert expected is not None and np.array_equal(np.concatenate([r["samples"] for r in got]), expected), path


def test_packet_rows_equal_the_single_process_read(media: dict[str, Any], cluster: None) -> None:
    paths = [str(p) for p in media["all"]]
    rows = by_path(mkray.read_media(paths, "packets").take_all())
    for path in paths:
        ok, expected = outcome(local_packets, path)
        got = rows[path]
        assert (all(r["error"] == "" for r in got)) == ok, path
        if ok:
            assert [(r["track"], r["pts"], r["dts"], r["duration"], r["position"], r["keyframe"], r["size"])
                    for r in got] == expected, path


def packet_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if not line.startswith("#")]


def test_remux_batches_equal_the_single_process_remux(media: dict[str, Any], cluster: None, tmp_path: Path) -> None:
    inputs = [*media["generated"], media["shared"][0], media["shared"][1], media["shared"][2], media["bad"]]
    paths = [str(p) for p in inputs]
    remuxed = ray.data.from_items([{"path": p} for p in paths]).map_batches(
        mkray.remux_batch,  # type: ignore[arg-type]  # fn_kwargs gives target_dir, which Ray's annotation cannot say
        fn_kwargs={"target_dir": str(tmp_path / "ray")}, batch_size=2).take_all()
    rows = {r["path"]: r for r in remuxed}
    assert sorted(rows) == sorted(paths)
    for path in paths:
        local = tmp_path / "local" / (Path(path).stem + ".mp4")
        local.parent.mkdir(exist_ok=True)
        ok = succeeds(mediakit.remux, path, local)
        row = rows[path]
        assert (row["error"] == "") == ok, (path, row["error"])
        if not ok:
            assert row["output"] == "" and not (tmp_path / "ray" / (Path(path).stem + ".mp4")).exists()
            continue
        assert row["output"] == str(tmp_path / "ray" / (Path(path).stem + ".mp4"))
        assert row["size_bytes"] == os.path.getsize(row["output"])
        assert framemd5(Path(row["output"])) == framemd5(local), path
        # The packets are the source's: an MP4 source's lines exactly (its time scales kept);
        # from another container, the lines of ffmpeg's own remux to MP4 (`-c copy`: the mov
        # muxer's time scales, which ours chooses too). The header's sample aspect ratio aside:
        # a WebM source's 1/1 comes out as 0/1, a remuxer matter reported to the lead, not Ray's.
        source = Path(path)
        if source.suffix not in (".mp4", ".m4a", ".mov"):
            source = tmp_path / "ffmpeg" / (Path(path).stem + ".mp4")
            source.parent.mkdir(exist_ok=True)
            subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", path, "-map", "0", "-c", "copy", str(source)], check=True)
        assert packet_lines(framemd5(Path(row["output"]))) == packet_lines(framemd5(source)), path
    leftovers = [p.name for p in (tmp_path / "ray").iterdir() if p.suffix != ".mp4"]
    assert leftovers == []                                       # no temporary file stays behind


def test_a_corrupt_file_is_an_error_row_and_the_job_completes(media: dict[str, Any], cluster: None) -> None:
    paths = [str(media["generated"][0]), str(media["bad"]), str(media["shared"][6])]
    for mode in mkray.MODES:
        rows = by_path(mkray.read_media(paths, mode).take_all())
        for bad in paths[1:]:
            (row,) = rows[bad]
            assert row["error"] and "MK_E" in row["error"], (mode, row)
        assert rows[paths[0]] and all(r["error"] == "" for r in rows[paths[0]]), mode


def test_jobs_are_picklable_and_small(media: dict[str, Any]) -> None:
    import pickle
    jobs = mkray.plan_jobs([str(p) for p in media["generated"]], "frames", split_seconds=2.0)
    assert all(len(pickle.dumps(j)) < 1024 for j in jobs)
    assert pickle.loads(pickle.dumps(jobs)) == jobs


def test_jobs_are_grouped_into_tasks_of_about_equal_bytes(tmp_path: Path) -> None:
    """_balanced_groups: every job in exactly one group, in the jobs' own order within it, the
    groups' bytes within one job of each other (the greedy bound), the largest group first;
    20 equal files in 8 groups: 3 files in each of the first 4, 2 in the others."""
    sizes = [7, 1, 1, 30, 2, 9, 9, 5, 3, 3, 12, 1, 4, 6]
    paths = []
    for i, size in enumerate(sizes):
        f = tmp_path / f"f{i:02}.bin"
        f.write_bytes(b"x" * size * 1000)
        paths.append(str(f))
    jobs = [mkray.MediaJob(p, "frames") for p in paths]
    for n in (1, 3, 5, len(jobs), len(jobs) + 3):
        groups = mkray._balanced_groups(jobs, n)
        assert len(groups) == min(n, len(jobs))
        assert sorted(j.path for g in groups for j in g) == paths
        assert all([j.path for j in g] == sorted(j.path for j in g) for g in groups)
        loads = [sum(mkray._job_bytes(j) for j in g) for g in groups]
        assert loads == sorted(loads, reverse=True)
        assert max(loads) - min(loads) <= max(mkray._job_bytes(j) for j in jobs), (n, loads)
    equal = [mkray.MediaJob(paths[1], "frames", part=i) for i in range(20)]
    assert [len(g) for g in mkray._balanced_groups(equal, 8)] == [3, 3, 3, 3, 2, 2, 2, 2]
    parts = [mkray.MediaJob(paths[3], "frames", part=i, parts=4) for i in range(4)]
    assert [mkray._job_bytes(j) for j in parts] == [30000 // 4] * 4


def test_task_count_is_at_most_four_per_cpu_unless_the_bytes_ask_for_more(media: dict[str, Any],
                                                                          cluster: None) -> None:
    """With the test cluster's 2 CPUs: 8 tasks at most for small files, one per job below that;
    a job list whose bytes are more than 8 x TASK_BYTES gets one task per TASK_BYTES."""
    path = str(media["generated"][0])
    assert mkray._task_count([mkray.MediaJob(path, "frames")] * 3) == 3
    assert mkray._task_count([mkray.MediaJob(path, "frames")] * 50) == 8
    size = os.path.getsize(path)
    many = (9 * mkray.TASK_BYTES) // size + 1        # just over 9 x TASK_BYTES of input
    assert mkray._task_count([mkray.MediaJob(path, "frames")] * many) == 10


def test_urls_are_read_through_the_byte_source(media: dict[str, Any], cluster: None) -> None:
    """A URL (here file://, as s3:// or gs:// would be) is read through fsspec's file object and
    mediakit.open's read / seek callbacks: the same rows as the local path."""
    path = str(media["generated"][1])
    url = "file://" + path
    (probe,) = mkray.read_media([url], "probe").take_all()
    assert probe["error"] == "" and probe["size_bytes"] == os.path.getsize(path)
    assert [(t["index"], t["media_type"], t["codec"], t["width"], t["height"], t["sample_rate"], t["channels"])
            for t in probe["tracks"]] == local_probe(path)[1]
    assert len(mkray.plan_jobs([url], "frames", split_seconds=1.0)) >= 5
    rows = mkray.read_media([url], "frames", split_seconds=1.0).take_all()
    assert sorted((r["pts"], mkray.frame_digest(r["frame"])) for r in rows) == local_frames(path)


# -- frames at a requested size and frame rate ---------------------------------------------------

def ffmpeg_frames(path: str, vf: str, pix_fmt: str = "nv12", passthrough: bool = False,
                  copyts: bool = False) -> list[tuple[int, str]]:
    """(pts, md5) of ffmpeg's framemd5 of the first video track through the filters `vf`
    (copyts: on the demuxer's timeline, not moved to start at 0)."""
    sync = ["-fps_mode", "passthrough"] if passthrough else []
    out = subprocess.run(["ffmpeg", "-v", "error", *(["-copyts"] if copyts else []), "-i", str(path), "-map", "0:v:0", "-vf", vf, *sync, "-pix_fmt", pix_fmt,
                          "-f", "framemd5", "-"], check=True, capture_output=True, text=True).stdout
    rows = [line.split(",") for line in out.splitlines() if line and not line.startswith("#")]
    return [(int(r[2]), r[-1].strip()) for r in rows]


def local_scaled(path: str, width: int, height: int, layout: str = "nv12",
                 interpolation: Optional[str] = None) -> list[tuple[int, str]]:
    """(pts, md5) of every picture scaled in this process (Frame.to_numpy, mk_frame_pack_scaled)."""
    with mediakit.open(path) as d:
        v = next(t for t in d.tracks if t.media_type == "video")
        return [(f.pts, digest(f.to_numpy(layout, width=width, height=height, interpolation=interpolation)))
                for f in mediakit.DecodeSession(v, threads=1).frames(d.packets(v))]


# (file, width, height, interpolation, layout): H.264 with a key frame a second (split),
# HEVC, VP9 in WebM, 10-bit AV1 (converted and scaled by one libswscale call), odd sizes.
SCALED = [("generated", 160, 90, "bicubic", "nv12"), ("mp4_hevc_hvc1_aac_ctts_elst.mp4", 322, 181, "bilinear", "nv12"),
          ("webm_vp9_192x144_2s.webm", 400, 300, "lanczos", "i420"),
          ("mp4_av1_10bit_hdr10_aac_720x1280.mp4", 180, 320, "bicubic", "nv12"),
          ("mp4_h264_pasp_sar_2x1.mp4", 96, 54, "area", "i420")]


def test_scaled_frames_equal_ffmpeg_scale(media: dict[str, Any], cluster: None, shared_media: Path) -> None:
    """read_media(width=, height=, interpolation=) gives the bytes of ffmpeg's
    `-vf scale=W:H:flags=F` (same libswscale), split into key-frame ranges or not, and the
    same rows as a whole-file loop in this process."""
    for name, w, h, flags, layout in SCALED:
        path = str(media["generated"][0] if name == "generated" else shared_media / name)
        rows = mkray.read_media([path], "frames", width=w, height=h, interpolation=flags, pixel_format=layout,
                                split_seconds=1.0).take_all()
        assert rows and all(r["error"] == "" and (r["width"], r["height"]) == (w, h) for r in rows), name
        got = sorted((r["pts"], mkray.frame_digest(r["frame"])) for r in rows)
        assert got == local_scaled(path, w, h, layout, flags), name                # the single-process result
        expected = ffmpeg_frames(path, f"scale={w}:{h}:flags={flags}", "nv12" if layout == "nv12" else "yuv420p",
                                 passthrough=True)
        assert [hsh for _, hsh in got] == [hsh for _, hsh in expected], name       # ffmpeg's pixels
    with pytest.raises(ValueError):
        mkray.read_media([path], "frames", width=16)                              # a width needs a height
    with pytest.raises(ValueError):
        mkray.read_media([path], "frames", width=16, height=16, interpolation="sharp")


def ffprobe_first_pts(path: str) -> int:
    """The least pts of the first pictures ffprobe decodes from the first video track."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-read_intervals", "%+#4", "-show_entries",
                          "frame=pts", "-of", "csv=p=0", str(path)], check=True, capture_output=True, text=True).stdout
    return min(int(x.strip(",")) for x in out.split() if x.strip(","))


# (file, frame rate, scaled size or None): fewer, more and a non-integer ratio of pictures;
# a variable-frame-rate file (and its odd 3026x1386 pictures scaled down).
RATES: list[tuple[str, Union[int, Fraction], Optional[tuple[int, int]]]] = [("generated", 7, None), ("generated_open", Fraction(30000, 1001), (160, 120)),
         ("mp4_h264_aac_moov_at_start_ctts_8s.mp4", 12, None), ("webm_vp9_192x144_2s.webm", 50, None),
         ("mp4_h264_vfr_odd_size_3026x1386_no_elst.mp4", 10, (302, 138))]


def test_frame_rate_equals_ffmpeg_fps(media: dict[str, Any], cluster: None, shared_media: Path) -> None:
    """read_media(frame_rate=R) picks and repeats pictures as ffmpeg's `-vf fps=R` (with
    -copyts: on the presentation timeline, not moved to start at 0): the same output pts
    (time base 1/R) and the same pictures, also when the file is split into key frame ranges
    read by different workers."""
    for name, rate, size in RATES:
        path = str({"generated": media["generated"][0], "generated_open": media["generated"][1]}.get(name)
                   or shared_media / name)
        width, height = (None, None) if size is None else size
        vf = f"fps={rate}" + ("" if size is None else f",scale={size[0]}:{size[1]}:flags=bicubic")
        expected = ffmpeg_frames(path, vf, copyts=True)
        whole = mkray.read_media([path], "frames", frame_rate=rate, width=width, height=height).take_all()
        split = mkray.read_media([path], "frames", frame_rate=rate, split_seconds=1.0, width=width,
                                 height=height).take_all()
        if name.startswith("generated"):
            assert len({r["part"] for r in split}) >= 5, name            # a key frame a second: read in parts
        for rows in (whole, split):
            assert all(r["error"] == "" and r["duration"] == 1 for r in rows), name
            got = sorted((r["pts"], mkray.frame_digest(r["frame"])) for r in rows)
            assert got == expected, (name, len(got), len(expected))
            assert all(r["time"] == float(Fraction(r["pts"]) / Fraction(rate)) for r in rows)
        # The pictures are decoded ones, each repeated or dropped, never made up.
        decoded = dict(local_scaled(path, *size)) if size else dict(local_frames(path))
        # The presentation timeline is ffprobe's: the first picture's pts, moved by the edit list.
        with mediakit.open(path) as d:
            offset = next(t for t in d.tracks if t.media_type == "video").presentation_offset
        assert min(decoded) + offset == ffprobe_first_pts(path), name
        assert all(decoded[r["source_pts"]] == mkray.frame_digest(r["frame"]) for r in whole), name


# -- transcode (map_batches) ---------------------------------------------------------------------

def decoded_samples(path: Union[str, Path]) -> int:
    """Sample frames ffmpeg decodes from the first audio track (its gapless trimming applied)."""
    out = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", "0:a:0", "-ac", "1", "-f", "s16le", "-"],
                         check=True, capture_output=True).stdout
    return len(out) // 2


def gapless_samples(path: Union[str, Path]) -> int:
    """Sample frames of MediaKit's gapless decode of the first audio track (the oracle suite
    checks its lengths against ffmpeg's; ffmpeg itself keeps an MP4's last AAC frame whole)."""
    with mediakit.open(path) as d:
        a = next(t for t in d.tracks if t.media_type == "audio")
        return sum(f.sample_count for f in mediakit.AsyncDecodeSession(a, trim="gapless"))


def test_transcode_batches_equal_the_single_process_transcode(media: dict[str, Any], cluster: None, tmp_path: Path,
                                                             shared_media: Path) -> None:
    inputs = [media["generated"][0], shared_media / "mp3_vbr_xing_mono_44k_4s.mp3", shared_media / "ogg_vorbis_stereo_1s.ogg",
              shared_media / "ivf_av1_320x180_1s.ivf", media["bad"]]       # no audio track; garbage
    paths = [str(p) for p in inputs]
    rows = {r["path"]: r for r in ray.data.from_items([{"path": p} for p in paths]).map_batches(
        mkray.transcode_batch,  # type: ignore[arg-type]  # fn_kwargs gives target_dir, which Ray's annotation cannot say
        fn_kwargs={"target_dir": str(tmp_path / "ray"), "bitrate": 96000}, batch_size=2).take_all()}
    assert sorted(rows) == sorted(paths)
    for path in paths:
        out = tmp_path / "ray" / (Path(path).stem + ".m4a")
        local = tmp_path / "local" / (Path(path).stem + ".m4a")
        local.parent.mkdir(exist_ok=True)
        ok = succeeds(mediakit.transcode, path, local, None, 96000)
        row = rows[path]
        assert (row["error"] == "") == ok, (path, row["error"])
        if not ok:
            assert row["output"] == "" and row["size_bytes"] == 0 and not out.exists(), path
            continue
        assert row["output"] == str(out) and row["size_bytes"] == out.stat().st_size
        assert framemd5(out) == framemd5(local), path                      # the same packets
        assert decoded_samples(out) == decoded_samples(local), path        # ffmpeg's decode of both
        assert gapless_samples(out) == gapless_samples(path), path         # the source's length, gapless
    assert not [p for p in paths[3:] if rows[p]["error"] == ""]              # both give error rows
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == sorted(Path(p).stem + ".m4a" for p in paths[:3])


def test_a_lease_freed_under_the_pool_lock_on_the_same_thread_is_given_back() -> None:
    """A lease's last array can die while its own thread holds the pool's lock (a garbage
    collection started by an allocation inside _Slabs.take frees an Arrow table over an old
    block): give_back then runs on that thread, under that lock. With a non-reentrant lock the
    thread waited for itself forever (a Ray read task hung in a rehearsal of the test suite);
    here the lease dies under the lock on purpose, and its slab must come back to the pool."""
    import threading

    pool = mkray._Slabs(keep=1)
    holder = [pool.take((4096,), np.dtype("u1"))]
    done = threading.Event()

    def under_the_lock() -> None:
        with pool.lock:
            holder.clear()   # the last reference: the lease's __del__ calls pool.give_back here
        done.set()

    threading.Thread(target=under_the_lock, daemon=True).start()
    assert done.wait(20), "give_back waited for the pool lock its own thread held"
    assert len(pool.free) == 1 and pool.free[0].nbytes == 4096
