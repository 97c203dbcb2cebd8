"""Every video file of ../shared/media decoded through the synchronous decoder and through the
asynchronous decode session (mk_async_decode_session: decoding on the library's thread, frames pulled with
`for` and with `async for`), through libmediakit's Python bindings.

Inputs: the progressive MP4 family (oracle_lib.progressive_shared_media), the fragmented MP4s
(fmp4_*, cmaf_* .mp4), Matroska / WebM, IVF and Ogg files of ../shared/media, minus broken_*
and the files MANIFEST.tsv lists without a video stream; a file whose first video track
ffprobe does not find (cover art only) or that is encrypted is skipped saying so. A track
without samples (an init segment) must give 0 frames, as ffprobe counts 0 packets.

Oracle (ORACLES.md, decoders): ffmpeg's frame count for the same track
  ffmpeg -v error -nostdin -i FILE -map 0:STREAM -fps_mode passthrough -f framecrc -
(one line per output frame; STREAM is ffprobe's first video track stream, as in test_decode.py),
and presentation order: each path's frame pts strictly increase. The frames' bytes are the
synchronous path's (test_decode.py compares those with ffmpeg); here the async paths must give
the same pts sequence as the synchronous one, frame for frame.
"""

from __future__ import annotations

import asyncio
import os
import sys

import pytest

import oracle_lib as lib

VIDEO_EXTS = lib.PROGRESSIVE_EXTS | {".mkv", ".webm", ".ivf", ".ogg", ".ogv"}


def _audio_only() -> set:
    """Files MANIFEST.tsv's ffprobe summary lists with streams but no video stream."""
    out = set()
    manifest = lib.SHARED_MEDIA / "MANIFEST.tsv"
    for line in manifest.read_text().splitlines()[1:] if manifest.is_file() else []:
        cols = line.split("\t")
        if len(cols) > 5 and "codec_type=" in cols[5] and "codec_type=video" not in cols[5]:
            out.add(cols[0])
    return out


def _video_files() -> list:
    if not lib.SHARED_MEDIA.is_dir():
        return [pytest.param("<missing>", id="shared-media-missing")]
    progressive = set(lib.progressive_shared_media() or [])
    audio_only = _audio_only()
    names = []
    for p in sorted(lib.SHARED_MEDIA.iterdir()):
        if not p.is_file() or p.name.startswith("broken_") or p.suffix.lower() not in VIDEO_EXTS:
            continue
        if p.suffix.lower() in lib.PROGRESSIVE_EXTS and p.name not in progressive and not p.name.startswith(lib.FRAGMENTED_PREFIXES):
            continue
        if p.name not in audio_only:
            names.append(p.name)
    return [pytest.param(n, id=n) for n in names]


@pytest.fixture(scope="module")
def mediakit(mk_bin):
    """The Python bindings over the libmediakit under test."""
    os.environ["MEDIAKIT_LIBRARY"] = str(mk_bin / "libmediakit.so")
    sys.path.insert(0, str(lib.REPO / "Bindings" / "python"))
    import mediakit as mk
    return mk


def _video_stream(path) -> dict:
    s = next((s for s in lib.track_streams(lib.ffprobe_json(path, ignore_editlist=False))
              if s.get("codec_type") == "video"), None)
    if s is None:
        pytest.skip(f"{path.name}: ffprobe finds no video track")
    if lib.is_encrypted(path):
        pytest.skip(f"{path.name}: encrypted (encv sample entries); no keys to decode")
    return s


def _ffmpeg_frame_count(path, stream: dict) -> int:
    probe = ["ffprobe", "-v", "error", "-select_streams", str(stream["index"]), "-count_packets",
             "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path]
    proc = lib.run(probe)
    lib.oracle_ok(proc, probe)
    if proc.stdout.decode().strip() in ("0", "N/A"):   # N/A: ffprobe read no packet at all
        return 0   # an init segment: no samples (ffmpeg then decodes nothing and fails)
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", f"0:{stream['index']}", "-fps_mode", "passthrough",
           "-f", "framecrc", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return sum(1 for line in proc.stdout.decode().splitlines() if line and not line.startswith("#"))


def _increasing(pts: list) -> str | None:
    bad = next((i for i in range(1, len(pts)) if pts[i] <= pts[i - 1]), None)
    return None if bad is None else f"frame {bad} has pts {pts[bad]} after {pts[bad - 1]}"


@pytest.mark.parametrize("name", _video_files())
def test_frames_in_pts_order_and_count_equals_ffmpeg_sync_and_async(name, mediakit, shared_media):
    path = shared_media / name
    stream = _video_stream(path)
    expected = _ffmpeg_frame_count(path, stream)
    with mediakit.open(path) as demuxer:
        track = demuxer.streams.video[0]
        if track.unsupported:
            pytest.fail(f"{name}: ffmpeg decodes {expected} frames, MediaKit says: {track.unsupported}", pytrace=False)
        with mediakit.DecodeSession(track) as decoder:
            sync = [f.pts for f in decoder.frames(demuxer.packets(track))]
    with mediakit.open(path) as container:
        pulled = [f.pts for f in container.decode(video=0, queue_frames=4)]

    async def collect():
        with mediakit.open(path) as c:
            return [f.pts async for f in c.decode(video=0)]

    awaited = asyncio.run(collect())
    for what, pts in (("synchronous", sync), ("session, for", pulled), ("session, async for", awaited)):
        assert len(pts) == expected, f"{name}: {what}: {len(pts)} frames, ffmpeg {expected}"
        problem = _increasing(pts)
        assert problem is None, f"{name}: {what}: not in presentation order: {problem}"
    assert pulled == sync and awaited == sync, f"{name}: the async paths' pts differ from the synchronous path's"
