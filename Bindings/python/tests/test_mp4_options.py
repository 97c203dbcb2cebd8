"""MP4 muxer options through the C API (mk_muxer_settings chunk_seconds, movie_time_scale,
reserved_moov_bytes, write_mfra, user_data; Swift MP4Muxer.Options) from ``mediakit.Muxer``.

Oracles: the written file's boxes read as ISO/IEC 14496-12 defines them (mvhd timescale, stsc
samples per chunk and stco chunk count, the order and sizes of the top-level boxes, mfra),
ffprobe's reading of the udta metadata (its format tags), and stream identity: ffmpeg's
`-c copy -f framemd5` of the output equals that of the source (#software aside).
"""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

import mediakit

from bindings_lib import ffprobe_json, framemd5
from test_muxer import per_stream


def boxes(data: bytes, start: int = 0, end: int = -1) -> Iterator[tuple[str, int, int]]:
    """(type, offset, size) of the boxes in data[start:end] (ISO/IEC 14496-12 4.2)."""
    end = len(data) if end < 0 else end
    at = start
    while at + 8 <= end:
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        if size == 1:
            size = struct.unpack(">Q", data[at + 8:at + 16])[0]
        elif size == 0:
            size = end - at
        yield kind.decode("latin-1"), at, size
        at += size


def child(data: bytes, path: list[str], start: int = 0, end: int = -1) -> tuple[int, int]:
    """(offset, size) of the box at `path` (first match at each level)."""
    for kind, at, size in boxes(data, start, end):
        if kind == path[0]:
            if len(path) == 1:
                return at, size
            return child(data, path[1:], at + 8, at + size)
    raise AssertionError(f"no {path[0]} box")


def write_copy(source: Path, out: Path, video_only: bool = False, **options: Any) -> None:
    with mediakit.open(source) as demuxer, mediakit.Muxer(out, **options) as mux:
        tracks = [t for t in demuxer.tracks if not video_only or t.media_type == "video"]
        index = {t.index: mux.add_track(t) for t in tracks}
        for packet in demuxer:
            if packet.track in index:
                mux.write(index[packet.track], packet)


def test_movie_time_scale_and_chunks(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "scaled.mp4"
    write_copy(sample, out, video_only=True, movie_time_scale=600, chunk_seconds=0.2)
    data = out.read_bytes()
    at, _ = child(data, ["moov", "mvhd"])
    version = data[at + 8]
    timescale = struct.unpack(">I", data[at + 8 + (20 if version == 1 else 12):][:4])[0]
    assert timescale == 600, f"mvhd timescale {timescale}"
    stbl = ["moov", "trak", "mdia", "minf", "stbl"]
    at, size = child(data, stbl + ["stco"])
    chunks = struct.unpack(">I", data[at + 12:at + 16])[0]
    stream = ffprobe_json(out, "-show_streams")["streams"][0]
    frames, rate = int(stream["nb_frames"]), eval(stream["avg_frame_rate"])
    per_chunk = frames / chunks / rate          # seconds of media per chunk, on average
    assert 0.2 - 1 / rate <= per_chunk <= 0.2 + 2 / rate, f"{chunks} chunks for {frames} frames: {per_chunk:.3f} s each, asked 0.2"
    default = tmp_path / "default.mp4"
    write_copy(sample, default, video_only=True)
    d = default.read_bytes()
    at, _ = child(d, stbl + ["stco"])
    assert struct.unpack(">I", d[at + 12:at + 16])[0] < chunks, "0.2-second chunks must be more than the default 0.5-second ones"
    assert framemd5(out, "0:v") == framemd5(sample, "0:v")


def test_reserved_moov_bytes_keeps_the_moov_in_front(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "reserved.mp4"
    write_copy(sample, out, faststart=True, reserved_moov_bytes=256 * 1024)
    data = out.read_bytes()
    top = [(kind, at, size) for kind, at, size in boxes(data)]
    kinds = [k for k, _, _ in top]
    assert kinds[:2] == ["ftyp", "moov"] and "mdat" in kinds and kinds.index("moov") < kinds.index("mdat"), kinds
    mdat_at = next(at for k, at, _ in top if k == "mdat")
    ftyp_end = top[0][1] + top[0][2]
    assert mdat_at - ftyp_end == 256 * 1024, f"{mdat_at - ftyp_end} bytes between ftyp and mdat, 262144 reserved"
    assert kinds[2] == "free", f"the room left after the moov is a free box: {kinds}"
    assert framemd5(out) == framemd5(sample)


def test_write_mfra(shared_media: Path, tmp_path: Path) -> None:
    source = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"   # as test_muxer's fragmented copies
    with_index, without = tmp_path / "mfra.mp4", tmp_path / "no_mfra.mp4"
    write_copy(source, with_index, fragment=1.0)
    write_copy(source, without, fragment=1.0, write_mfra=False)
    assert [k for k, _, _ in boxes(with_index.read_bytes())][-1] == "mfra"
    assert "mfra" not in [k for k, _, _ in boxes(without.read_bytes())]
    assert per_stream(framemd5(without)) == per_stream(framemd5(with_index)) == per_stream(framemd5(source))


def udta_title(title: str) -> bytes:
    """A udta box holding a QuickTime '\u00a9nam' text item (size, language, text)."""
    text = title.encode()
    item = struct.pack(">I4sHH", 12 + len(text), b"\xa9nam", len(text), 0x55C4) + text
    return struct.pack(">I4s", 8 + len(item), b"udta") + item


def test_user_data_is_read_by_ffprobe(sample: Path, tmp_path: Path) -> None:
    out = tmp_path / "titled.mp4"
    write_copy(sample, out, user_data=udta_title("MediaKit parity"))
    tags = ffprobe_json(out, "-show_format")["format"].get("tags", {})
    assert tags.get("title") == "MediaKit parity", f"ffprobe's format tags: {tags}"
    assert framemd5(out) == framemd5(sample)


def test_bad_options_are_refused(sample: Path, tmp_path: Path) -> None:
    with pytest.raises(mediakit.InvalidArgumentError, match="chunk_seconds"):
        mediakit.Muxer(tmp_path / "a.mp4", chunk_seconds=0)
    with pytest.raises(mediakit.InvalidArgumentError, match="movie_time_scale"):
        mediakit.Muxer(tmp_path / "a.mp4", movie_time_scale=0)
    with pytest.raises(mediakit.InvalidArgumentError, match="reserved_moov_bytes"):
        mediakit.Muxer(tmp_path / "a.mp4", faststart=True, reserved_moov_bytes=1 << 40)
    with pytest.raises(mediakit.InvalidArgumentError, match="udta"):
        mediakit.Muxer(tmp_path / "a.mp4", user_data=b"\x00\x00\x00\x0cmeta\x00\x00\x00\x00")
    with pytest.raises(mediakit.InvalidArgumentError, match="MP4's"):
        mediakit.Muxer(tmp_path / "a.mkv", chunk_seconds=1.0)
    assert not list(tmp_path.iterdir()), "a refused open leaves no file"


def test_in_progress_path_is_a_playable_partial_file(shared_media: Path, tmp_path: Path) -> None:
    """Fragmented: while writing, the bytes are in "<path>.partial", which ffprobe reads up to
    its last complete fragment (what a crash leaves); once finished the path is the target."""
    source, out = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4", tmp_path / "frag.mp4"
    with mediakit.open(source) as demuxer, mediakit.Muxer(out, fragment=1.0) as mux:
        index = {t.index: mux.add_track(t) for t in demuxer.tracks}
        for n, packet in enumerate(demuxer):
            mux.write(index[packet.track], packet)
            if n == 300:
                partial = Path(mux.in_progress_path)
                assert partial == Path(str(out) + ".partial") and partial.is_file() and not out.exists()
                read = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "packet=pts", "-of", "csv=p=0",
                                       str(partial)], capture_output=True, text=True)
                assert read.returncode == 0 and 0 < len(read.stdout.split()) <= 301, read.stderr
        mux.finish()
        assert mux.in_progress_path == str(out) and out.is_file()
    with mediakit.Muxer(tmp_path / "x.mkv") as mkv:
        with pytest.raises(mediakit.UnsupportedError):
            mkv.in_progress_path
        mkv.cancel()
