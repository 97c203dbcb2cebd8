"""mediakit.VideoDecoder against ffmpeg: every frame returned by index equals the one
`ffmpeg -i IN -vf "select=eq(n\\,I)+..." -fps_mode passthrough -pix_fmt F -f rawvideo -` gives, bit-exact
(one ffmpeg run for all the indices of a file), on the bundled sample (H.264 with B-frames)
and two files of ../shared/media (H.264 640x360 with ctts; HEVC with B-frames, an edit list and
BT.709 tagged); pts against ffprobe -show_frames; one resize case (scale=W:H:flags=bilinear);
float32 / NCHW against the rgb24 oracle transformed by numpy."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
import mediakit  # noqa: E402


pytestmark = pytest.mark.usefixtures("oracle_tools")   # ffmpeg / ffprobe missing: a failure, not a skip

SHARED_FILES = ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mp4_hevc_hvc1_aac_ctts_elst.mp4"]


def ffmpeg_frames(path: Path, indices: list[int], pix_fmt: str, channels: int, width: int, height: int,
                  scale: str = "", dtype: str = "u1", threads: int = 0) -> dict[int, Any]:
    """The frames at `indices` (sorted, unique) as ffmpeg selects and converts them, by index
    (decoded with `threads` threads; 0: ffmpeg's default)."""
    wanted = sorted(set(indices))
    chain = "select='" + "+".join(f"eq(n,{i})" for i in wanted) + "'" + (f",{scale}" if scale else "")
    raw = subprocess.run(["ffmpeg", "-v", "error", "-threads", str(threads), "-i", str(path), "-map", "0:v:0", "-vf", chain, "-fps_mode", "passthrough",
                          "-pix_fmt", pix_fmt, "-f", "rawvideo", "-"], check=True, capture_output=True).stdout
    frames = np.frombuffer(raw, dtype=dtype).reshape(-1, height, width, channels)
    assert len(frames) == len(wanted), f"ffmpeg gave {len(frames)} frames for {len(wanted)} indices"
    return dict(zip(wanted, frames))


def ffprobe_frames(path: Path) -> tuple[list[float], list[int]]:
    """pts_time of every presented frame and the key frames' indices, as ffprobe decodes them."""
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time,key_frame",
                          "-of", "csv=p=0", str(path)], check=True, capture_output=True, text=True).stdout
    rows = [line.split(",") for line in out.split()]
    return [float(r[1]) for r in rows], [i for i, r in enumerate(rows) if r[0] == "1"]


@pytest.fixture(scope="module")
def files(sample: Path, shared_media: Path) -> list[Path]:
    return [sample] + [shared_media / f for f in SHARED_FILES]


def test_frames_by_index_equal_ffmpeg_select(files: list[Path]) -> None:
    for path in files:
        with mediakit.VideoDecoder(path) as dec:
            n = len(dec)
            times, keys = ffprobe_frames(path)
            assert n == len(times), f"{path.name}: {n} frames, ffprobe decodes {len(times)}"
            assert dec.metadata.key_frame_indices[0] == 0 and set(dec.metadata.key_frame_indices) <= set(keys)
            # Out of order, a duplicate, both ends, one inside a later GOP.
            indices = [n - 1, 3, 0, min(17, n - 2), 3, n // 2]
            batch = dec.get_frames_at(indices)
            ref = ffmpeg_frames(path, indices, "rgb24", 3, dec.metadata.width, dec.metadata.height)
            assert batch.data.shape == (len(indices), dec.metadata.height, dec.metadata.width, 3)
            for k, i in enumerate(indices):
                assert np.array_equal(batch.data[k], ref[i]), f"{path.name}: frame {i} differs from ffmpeg's"
                assert batch.pts_seconds[k] == pytest.approx(times[i], abs=1e-6)
                assert batch.duration_seconds[k] > 0
            # The frame played at a time inside frame 3's interval is frame 3.
            played = dec.get_frames_played_at([(times[3] + times[4]) / 2, times[0]])
            assert np.array_equal(played.data[0], ref[3]) and np.array_equal(played.data[1], ref[0])


def test_consecutive_batches_equal_ffmpeg(files: list[Path]) -> None:
    """Batches that go on from the previous one (mk_decode_session_frames_at resumes without a seek):
    chunks of 7 frames, then rising single frames, then a chunk behind them (a seek) and one
    ahead again, each frame equal to ffmpeg's decode of every frame."""
    for path in files[:1] + files[2:]:
        with mediakit.VideoDecoder(path) as dec:
            n, h, w = len(dec), dec.metadata.height, dec.metadata.width
            raw = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", "0:v:0", "-fps_mode", "passthrough",
                                  "-pix_fmt", "rgb24", "-f", "rawvideo", "-"], check=True, capture_output=True).stdout
            ref = np.frombuffer(raw, dtype="u1").reshape(-1, h, w, 3)
            assert len(ref) == n, f"{path.name}: ffmpeg decodes {len(ref)} frames, the decoder lists {n}"
            for start in range(0, n, 7):
                batch = dec.get_frames_in_range(start, min(n, start + 7)).data
                for k in range(batch.shape[0]):
                    assert np.array_equal(batch[k], ref[start + k]), f"{path.name}: frame {start + k} differs from ffmpeg's"
            for i in sorted({0, 1, 5, 6, n // 2, n - 4}):
                assert np.array_equal(dec[i], ref[i]), f"{path.name}: frame {i} differs from ffmpeg's"
            for chunk in ([2, 3, 4], [n - 3, n - 2, n - 1]):
                batch = dec.get_frames_at(chunk).data
                for k, i in enumerate(chunk):
                    assert np.array_equal(batch[k], ref[i]), f"{path.name}: frame {i} differs from ffmpeg's"


def test_out_array_is_filled_and_checked(sample: Path) -> None:
    """out=: the pictures written into the caller's array (ffmpeg's, as without it), the batch's
    data is that array; a wrong shape, dtype or layout is a ValueError naming it."""
    with mediakit.VideoDecoder(sample, dimension_order="NCHW") as dec:
        h, w = dec.metadata.height, dec.metadata.width
        ref = ffmpeg_frames(sample, [4, 40, 90], "rgb24", 3, w, h)
        out = np.zeros((3, 3, h, w), dtype=np.uint8)
        for _ in range(2):   # the same array again: a loop that reuses it
            batch = dec.get_frames_at([90, 4, 40], out=out)
            assert batch.data is out
            for k, i in enumerate([90, 4, 40]):
                assert np.array_equal(out[k], ref[i].transpose(2, 0, 1)), f"frame {i} differs from ffmpeg's"
        dec.get_frames_in_range(4, 5, out=out[:1])   # a view of the array: its first picture
        assert np.array_equal(out[0], ref[4].transpose(2, 0, 1))
        for bad, what in [(np.zeros((3, 3, h, w + 1), np.uint8), "needs uint8"), (np.zeros((3, 3, h, w), np.float32), "needs uint8"),
                          (np.zeros((3, h, w, 3), np.uint8).transpose(0, 3, 1, 2), "C-contiguous"), ([0] * 3, "numpy array")]:
            with pytest.raises(ValueError, match=what):
                dec.get_frames_at([1, 2, 3], out=bad)


def test_large_batch_array(sample: Path) -> None:
    """A batch of 4 MiB or more lies over a map of its own (not numpy's allocation, which asks
    for huge pages): the same pictures as ffmpeg's, writeable, C-contiguous, handed over by
    DLPack without a copy. Its pages are given to a later batch of the same size only once no
    array refers to them: batches and views still alive keep their pictures while later
    batches are made, and a batch dropped gives its pages to the next one (the same address)."""
    with mediakit.VideoDecoder(sample) as dec:
        h, w = dec.metadata.height, dec.metadata.width
        per = -(-(4 << 20) // (h * w * 3))    # pictures in a 4 MiB batch
        starts = [0, per, 2 * per, 3 * per, 4 * per]
        assert starts[-1] + per <= len(dec)
        ref = ffmpeg_frames(sample, list(range(starts[-1] + per)), "rgb24", 3, w, h)
        first = dec.get_frames_in_range(0, per).data                    # kept whole
        second_view = dec.get_frames_in_range(per, 2 * per).data[1]     # only a view kept
        third = dec.get_frames_in_range(2 * per, 3 * per).data
        address = third.__array_interface__["data"][0]
        assert np.array_equal(third[0], ref[2 * per])
        del third                                                        # dropped: its pages free
        fourth = dec.get_frames_in_range(3 * per, 4 * per).data
        assert fourth.__array_interface__["data"][0] == address, "a dropped batch's pages were not reused"
        fifth = dec.get_frames_in_range(4 * per, 5 * per).data
        small = dec.get_frames_at([0, 1]).data                           # under 4 MiB: numpy's own array
    assert small.base is None and first.base is not None
    for k in range(per):
        assert np.array_equal(first[k], ref[k]), f"frame {k} (first batch, kept) differs from ffmpeg's"
        assert np.array_equal(fourth[k], ref[3 * per + k]), f"frame {3 * per + k} differs from ffmpeg's"
        assert np.array_equal(fifth[k], ref[4 * per + k]), f"frame {4 * per + k} differs from ffmpeg's"
    assert np.array_equal(second_view, ref[per + 1]), "a view's picture changed under a later batch"
    assert first.flags.writeable and first.flags.c_contiguous
    view = np.from_dlpack(first)
    assert np.shares_memory(view, first)
    first[0] = 7
    assert int(view[0].max()) == 7


def test_formats_and_layouts_equal_ffmpeg(sample: Path) -> None:
    indices = [5, 60, 2]
    for fmt, pix_fmt, channels, dtype in [("bgr24", "bgr24", 3, "u1"), ("gray", "gray", 1, "u1"),
                                          ("rgba", "rgba", 4, "u1"), ("rgb48le", "rgb48le", 3, "<u2")]:
        with mediakit.VideoDecoder(sample, format=fmt) as dec:
            w, h = dec.metadata.width, dec.metadata.height
            ref = ffmpeg_frames(sample, indices, pix_fmt, channels, w, h, dtype=dtype)
            got = dec.get_frames_at(indices).data
            for k, i in enumerate(indices):
                assert np.array_equal(got[k], ref[i]), f"{fmt}: frame {i} differs from ffmpeg's"
    # NCHW, float32 with mean / std: the rgb24 oracle transposed and normalised.
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    with mediakit.VideoDecoder(sample, dimension_order="NCHW", format="float32", mean=mean, std=std) as dec:
        got = dec.get_frames_at(indices).data
        ref = ffmpeg_frames(sample, indices, "rgb24", 3, dec.metadata.width, dec.metadata.height)
        assert got.dtype == np.float32 and got.shape == (3, 3, dec.metadata.height, dec.metadata.width)
        for k, i in enumerate(indices):
            want = (ref[i].astype(np.float32) / 255 - np.float32(mean)) / np.float32(std)
            np.testing.assert_allclose(got[k], want.transpose(2, 0, 1), rtol=0, atol=1e-5)
    with mediakit.VideoDecoder(sample, dimension_order="NCHW") as dec:
        assert np.array_equal(dec[60], ref[60].transpose(2, 0, 1))


def test_resize_equals_ffmpeg_scale(sample: Path) -> None:
    indices = [1, 40]
    with mediakit.VideoDecoder(sample, width=160, height=90, interpolation="bilinear") as dec:
        got = dec.get_frames_at(indices).data
    ref = ffmpeg_frames(sample, indices, "rgb24", 3, 160, 90, scale="scale=160:90:flags=bilinear")
    for k, i in enumerate(indices):
        assert np.array_equal(got[k], ref[i]), f"scaled frame {i} differs from ffmpeg's"


def test_len_slices_and_errors(sample: Path) -> None:
    with mediakit.VideoDecoder(sample) as dec:
        n = len(dec)
        assert dec[2:9:3].shape[0] == 3
        assert np.array_equal(dec[2:9:3], dec.get_frames_in_range(2, 9, 3).data)
        assert np.array_equal(dec[-1], dec.get_frames_at([n - 1]).data[0])
        assert dec.get_frames_at([]).data.shape[0] == 0
        with pytest.raises(IndexError, match=f"out of range: the track has {n} frames"):
            dec.get_frames_at([n])
        with pytest.raises(IndexError, match="no frame is played at"):
            dec.get_frames_played_at([dec.metadata.end_stream_seconds + 1])
    with pytest.raises(ValueError, match="unknown format"):
        mediakit.VideoDecoder(sample, format="yuv9")
    with pytest.raises(ValueError, match="give both or neither"):
        mediakit.VideoDecoder(sample, width=100)
    dec = mediakit.VideoDecoder(sample)
    dec.close()
    dec.close()
    with pytest.raises(mediakit.InvalidArgumentError, match="closed"):
        dec.get_frames_at([0])


def test_pack_layout_listing_names_ffmpeg_formats() -> None:
    """mk_pack_layout_name lists the layouts from 1 up to the first NULL; every picture layout
    but i420 (raw-video tools' name of yuv420p) is named as `ffmpeg -pix_fmts` names it."""
    names: list[str] = []
    while (name := mediakit.lib.mk_pack_layout_name(len(names) + 1)) is not None:
        names.append(name.decode())
    assert names[:4] == ["nv12", "i420", "s16", "f32"]
    ffmpeg_formats = {line.split()[1] for line in subprocess.run(["ffmpeg", "-v", "error", "-pix_fmts"], check=True,
                                                                 capture_output=True, text=True).stdout.splitlines()
                      if len(line.split()) > 2 and line[:5].strip(".IOHPB") == ""}
    for name in [names[0]] + names[4:]:
        assert name in ffmpeg_formats, f"{name} is not one of ffmpeg's pixel formats"
    assert set(names[4:]) >= {"rgb24", "bgr24", "rgba", "bgra", "gray", "gray16le", "rgb48le"}


def test_index_cache_is_reused_and_refreshed(shared_media: Path, sample: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """index_cache= on files without a sample table (an MPEG-TS file of ../shared/media/breadth
    and a WebM file of ../shared/media): the first open reads the packets and writes the cache;
    a second open takes the index from it without reading them (mk_decode_session_frame_index is then
    not called) and gives the same metadata and ffmpeg's frames; a source with another
    modification time, or a damaged cache, is read again and the cache rewritten; MP4 (its sample
    table is the index) writes none; an unwritable cache is a warning."""
    from mediakit._ffi import lib

    real = lib.mk_decode_session_frame_index
    reads: list[int] = []

    def counting(*args: Any) -> Any:
        reads.append(1)
        return real(*args)

    monkeypatch.setattr(lib, "mk_decode_session_frame_index", counting)
    folder = tmp_path / "cache"
    for path in (shared_media / "breadth" / "ts_shaka-proj_fa8d9d_1.ts", shared_media / "webm_vp9_192x144_2s.webm"):
        with mediakit.VideoDecoder(path) as plain:
            expected = plain.metadata
        reads.clear()
        with mediakit.VideoDecoder(path, index_cache=folder) as first:
            assert first.metadata == expected
        assert reads, "the first open reads the index"
        written = sorted(folder.glob(f"*.{expected.stream_index}.mkindex"))
        assert written, f"{path.name}: no cache file written in {folder}"
        reads.clear()
        with mediakit.VideoDecoder(path, index_cache=folder) as second:
            assert not reads, f"{path.name}: the second open read the packets again"
            assert second.metadata == expected
            n = len(second)
            indices = [n - 1, 0, n // 2, 5]
            ref = ffmpeg_frames(path, indices, "rgb24", 3, expected.width, expected.height)
            batch = second.get_frames_at(indices)
            for k, i in enumerate(indices):
                assert np.array_equal(batch.data[k], ref[i]), f"{path.name}: frame {i} differs from ffmpeg's (index from the cache)"
        for f in written:
            f.unlink()

    # Beside the file, on a copy whose modification time then changes: read again, rewritten.
    copy = tmp_path / "copy.ts"
    copy.write_bytes((shared_media / "breadth" / "ts_shaka-proj_fa8d9d_1.ts").read_bytes())
    beside = tmp_path / "copy.ts.0.mkindex"
    reads.clear()
    with mediakit.VideoDecoder(copy, index_cache=True) as dec:
        expected = dec.metadata
    assert beside.exists() and len(reads) > 0
    st = copy.stat()
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    reads.clear()
    with mediakit.VideoDecoder(copy, index_cache=True) as dec:
        assert reads and dec.metadata == expected, "a source with another modification time is read again"
    reads.clear()
    with mediakit.VideoDecoder(copy, index_cache=True) as dec:
        assert not reads, "the rewritten cache is used"
    # A damaged cache (cut short, then pts out of order with a valid length): read again.
    data = beside.read_bytes()
    beside.write_bytes(data[:-5])
    reads.clear()
    with mediakit.VideoDecoder(copy, index_cache=True) as dec:
        assert reads and dec.metadata == expected
    damaged = bytearray(beside.read_bytes())
    header_end = damaged.index(b"\n", damaged.index(b"\n") + 1) + 1
    damaged[header_end:header_end + 16] = damaged[header_end + 8:header_end + 16] + damaged[header_end:header_end + 8]
    beside.write_bytes(bytes(damaged))
    reads.clear()
    with mediakit.VideoDecoder(copy, index_cache=True) as dec:
        assert reads and dec.metadata == expected, "a list the decoder refuses is read again"
    assert not list(tmp_path.glob("*.tmp")), "no temporary file is left behind"

    # MP4: the sample table is the index; no cache.
    with mediakit.VideoDecoder(sample, index_cache=folder):
        pass
    assert not list(folder.glob("*.mkindex"))
    # A cache that cannot be written (its folder's parent is a file): a warning, the frames still come.
    blocker = tmp_path / "a-file"
    blocker.write_bytes(b"")
    with pytest.warns(RuntimeWarning, match="index_cache: cannot write"):
        with mediakit.VideoDecoder(copy, index_cache=blocker / "sub") as dec:
            assert dec.metadata == expected
    with pytest.raises(ValueError, match="index_cache"):
        mediakit.VideoDecoder(copy.read_bytes(), index_cache=folder)


APPROXIMATE_FILES = ["breadth/ts_Vanilagy_b46e09_0.ts", "breadth/ts_shaka-proj_fa8d9d_1.ts", "webm_vp9_1080x1080_3s.webm",
                     "breadth/ts_Vanilagy_4c8570_no-aud.ts"]


def test_approximate_mode_is_the_frame_at_the_nominal_time(shared_media: Path, sample: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """seek_mode="approximate" on files without a sample table (MPEG-TS files of
    ../shared/media/breadth, a WebM file of ../shared/media): the frame list is not read
    (mk_decode_session_frame_index is not called); frame i is, as the docstring states, the first of
    ffprobe's frames presented at or after begin + (i - 1/2) / fps, its picture ffmpeg's
    (select) and its pts that frame's. On the three constant-rate files that is frame i and the
    count is ffprobe's; on the variable-rate one (frames at 0.125 and 0.129 s) it is not frame i
    everywhere, and the rule is what is checked. On MP4 both modes give the same metadata. One
    decoding thread on both sides: the variable-rate file is damaged, and libavcodec's error
    concealment with frame threads differs from run to run there (ffmpeg's own output too)."""
    from mediakit._ffi import lib

    def forbidden(*args: Any) -> Any:
        raise AssertionError("approximate mode read the frame list")

    for name in APPROXIMATE_FILES:
        path = shared_media / name
        times, _keys = ffprobe_frames(path)
        monkeypatch.setattr(lib, "mk_decode_session_frame_index", forbidden)
        with mediakit.VideoDecoder(path, seek_mode="approximate", threads=1) as dec:
            monkeypatch.undo()
            m = dec.metadata
            assert m.key_frame_indices == ()
            assert m.begin_stream_seconds == pytest.approx(times[0], abs=1e-6), name
            constant = not name.endswith("no-aud.ts")
            if constant:
                assert m.num_frames == len(times), f"{name}: {m.num_frames} frames estimated, ffprobe decodes {len(times)}"
            n = len(dec)
            indices = sorted({0, 1, 2, n // 3, n // 2, n - 2, n - 1})
            step = (m.end_stream_seconds - m.begin_stream_seconds) / n
            expected = [next(j for j, t in enumerate(times) if t >= m.begin_stream_seconds + (i - 0.5) * step - 1e-6)
                        for i in indices]
            if constant:
                assert expected == indices, f"{name}: a constant-rate file's nominal times are its frames'"
            ref = ffmpeg_frames(path, expected, "rgb24", 3, m.width, m.height, threads=1)
            batch = dec.get_frames_at(indices)
            for k, (i, j) in enumerate(zip(indices, expected)):
                assert np.array_equal(batch.data[k], ref[j]), f"{name}: approximate frame {i} is not ffmpeg's frame {j}"
                assert batch.pts_seconds[k] == pytest.approx(times[j], abs=1e-6), f"{name}: frame {i}'s pts"
            if not constant:
                assert expected != indices, "the variable-rate file no longer tests the rule"
    with mediakit.VideoDecoder(sample) as exact, mediakit.VideoDecoder(sample, seek_mode="approximate") as approx:
        assert approx.metadata == exact.metadata
        assert np.array_equal(approx[7], exact[7])


@pytest.mark.parametrize("codec", ["h264", "h264-open-gop", "hevc"])
def test_raw_stream_frames_are_ffmpegs(codec: str, tmp_path: Path) -> None:
    """A raw Annex B stream (no timestamps in the stream: ffmpeg's tool makes them up at the
    stream's rate; ffprobe's pts are N/A) with B-frames and a key frame every 12 pictures, made
    by libx264 (closed GOPs: IDR pictures; open GOPs: recovery points with leading B-frames) and
    libx265 (open GOPs: CRA pictures with RASL ones) at 25 fps: the frame count, key frames and
    pts are those of ffmpeg's decode (`-fps_mode passthrough -f framemd5`; the key frames are
    ffprobe's, H.264 recovery points included: their leading pictures are counted by picture
    order count), frames by index in any order are its pictures (each batch seeks inside the
    stream, so decoding starts at a later key frame), and the same holds on a second open that
    takes the index from index_cache= (no packet positions)."""
    from bindings_lib import decoded_stamps
    encoders = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True, text=True).stdout
    lib = "libx265" if codec == "hevc" else "libx264"
    if lib not in encoders:
        # Debian's ffmpeg, which scripts/deps.sh installs, has both: a missing one is a broken
        # oracle install, a failure (as a missing ffmpeg is), not a reason to skip.
        pytest.fail(f"this ffmpeg has no {lib} encoder to make a raw {codec} stream with")
    syntax = "hevc" if codec == "hevc" else "h264"
    path = tmp_path / f"clip.{syntax}"
    params = {"h264": ["-bf", "2", "-g", "12", "-x264-params", "scenecut=0"],
              "h264-open-gop": ["-bf", "2", "-g", "12", "-x264-params", "scenecut=0:open-gop=1"],
              "hevc": ["-x265-params", "log-level=error:bframes=3:keyint=12:min-keyint=12:scenecut=0"]}[codec]
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x120:rate=25", "-frames:v", "61",
                    "-c:v", lib, *params, "-pix_fmt", "yuv420p", "-f", syntax, str(path)], check=True)
    times = decoded_stamps(path)
    probe = subprocess.run(["ffprobe", "-v", "error", "-threads", "1", "-select_streams", "v:0", "-show_entries",
                            "frame=key_frame,coded_picture_number", "-of", "csv=p=0", str(path)],
                           check=True, capture_output=True, text=True).stdout
    fields = [line.split(",") for line in probe.split()]   # a frame's side data adds a field
    keys = [f[0] for f in fields]
    # Key frames presented later than they are decoded: open GOPs with leading pictures, which
    # the key frame list must count (libx265's CRA pictures, libx264's open-gop recovery points).
    late = [i for i, f in enumerate(fields) if f[0] == "1" and int(f[1]) < i]
    assert (len(late) > 0) == (codec != "h264"), f"{codec}: key frames presented after their decoding place: {late}"
    assert len(times) == 61 and times[:3] == pytest.approx([0, 0.04, 0.08])
    cache = tmp_path / "cache"
    cache.mkdir()
    for attempt in ("scanned", "cached"):
        with mediakit.VideoDecoder(path, threads=1, index_cache=cache) as dec:
            assert len(dec) == len(times), f"{attempt}: {len(dec)} frames, ffmpeg decodes {len(times)}"
            listed = [i for i, k in enumerate(keys) if k == "1"]
            assert list(dec.metadata.key_frame_indices) == listed and len(listed) > 1, listed
            indices = [60, 13, 0, 30, 13, 25, 59]
            ref = ffmpeg_frames(path, indices, "rgb24", 3, 160, 120, threads=1)
            for order in (indices, indices[::-1]):
                batch = dec.get_frames_at(order)
                for k, i in enumerate(order):
                    assert np.array_equal(batch.data[k], ref[i]), f"{attempt}: frame {i} differs from ffmpeg's"
                    assert batch.pts_seconds[k] == pytest.approx(times[i], abs=1e-6), f"{attempt}: frame {i}'s pts"
            assert np.array_equal(dec[37], ffmpeg_frames(path, [37], "rgb24", 3, 160, 120, threads=1)[37])
        assert any(cache.iterdir()), "the first open wrote no index cache"
