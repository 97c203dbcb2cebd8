"""Turning pictures upright from Python: ``Track.orientation`` (C mk_orientation_from_matrix),
``Frame.oriented()`` / ``Frame.rotated()`` (C mk_frame_orient) and ``Orientation.clockwise()``.

Oracles (ORACLES.md: ffmpeg):
  - ``frame.oriented(track.orientation)`` for every frame of a rotated file equals ffmpeg's
    autorotated decode, `ffmpeg -i F -map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt nv12 -`
    (FFmpeg 5.1 turns with transpose / hflip / vflip before any conversion): on a generated clip
    with each of the eight quarter-turn display matrices, and on the rotated files of
    ../shared/media. This checks the orientation FFmpeg's autorotation chose and the turn itself.
  - ``frame.oriented(o)`` for each of the eight orientations, and ``frame.rotated(90/180/270)``,
    equal ffmpeg's `-noautorotate -vf <filter>` output, the filter named from ffmpeg's
    documentation of transpose (cclock_flip: rows become columns; clock; cclock; clock_flip).
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Callable, Union

import pytest

import mediakit

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "Tests" / "oracle"))
import oracle_lib  # noqa: E402  (the quarter-turn matrices, shared with the oracle suite's autorotation test)

MATRICES = oracle_lib.QUARTER_TURN_MATRICES

# Each orientation and ffmpeg's filter chain for it (ffmpeg-filters: transpose=cclock_flip turns
# rows into columns, clock / cclock turn by a quarter, clock_flip is clock with a vertical flip).
FILTERS = {(False, False, False): "null", (True, False, False): "transpose=cclock_flip",
           (True, True, False): "transpose=clock", (True, False, True): "transpose=cclock",
           (True, True, True): "transpose=clock_flip", (False, True, False): "hflip",
           (False, False, True): "vflip", (False, True, True): "hflip,vflip"}

# The rotated files of ../shared/media (MANIFEST.tsv: a tkhd matrix other than the identity).
ROTATED = ["mp4_h264_rotation90_matrix.mp4", "mp4_h264_aac_matrix_rotate90_and_reflect.mp4",
           "mov_iphone_hevc_dolbyvision_rotation90_mebx_tracks.mov", "fmp4_h264_aac_5p1_rotation_minus90_mfra.mp4"]


def ffmpeg_nv12(path: Path, *, autorotate: bool = True, vf: str = "", frames: int = 0) -> bytes:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", *([] if autorotate else ["-noautorotate"]), "-i", str(path),
           "-map", "0:v:0", "-fps_mode", "passthrough", *(["-vf", vf] if vf else []),
           *(["-frames:v", str(frames)] if frames else []), "-f", "rawvideo", "-pix_fmt", "nv12", "-"]
    return subprocess.run(cmd, check=True, capture_output=True).stdout


def turned_nv12(path: Path, turn: Union[mediakit.Orientation, Callable[[mediakit.Frame], mediakit.Frame]], frames: int = 0) -> tuple[bytes, mediakit.Track]:
    """Every frame (or the first `frames`) of the first video track, turned by `turn` (an
    Orientation, or a callable Frame -> Frame), packed as NV12."""
    out = bytearray()
    with mediakit.open(path) as container:
        track = container.streams.video[0]
        for n, frame in enumerate(container.decode(video=0)):
            if frames and n == frames:
                break
            turned = frame.oriented(turn) if isinstance(turn, mediakit.Orientation) else turn(frame)
            out += turned.to_numpy().tobytes()
    return bytes(out), track


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A 3-frame 96x64 H.264 clip (testsrc: no symmetry), video only, made by ffmpeg."""
    out = tmp_path_factory.mktemp("orientation") / "clip.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", "testsrc=size=96x64:rate=25",
                    "-frames:v", "3", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-bf", "0", str(out)], check=True)
    return out.read_bytes()


def with_matrix(clip: bytes, name: str, folder: Path) -> Path:
    """The clip with its tkhd matrix set to MATRICES[name]."""
    path = folder / f"{name}.mp4"
    path.write_bytes(oracle_lib.with_display_matrix(clip, name)[0])
    return path


@pytest.mark.parametrize("name", list(MATRICES))
def test_track_orientation_turns_as_ffmpeg_autorotation(name: str, clip: bytes, tmp_path: Path) -> None:
    media = with_matrix(clip, name, tmp_path)
    ref = ffmpeg_nv12(media)
    with mediakit.open(media) as container:
        orientation = container.streams.video[0].orientation
    ours, track = turned_nv12(media, orientation)
    assert list(track.matrix) == oracle_lib.with_display_matrix(clip, name)[1], f"{name}: the patched matrix was not read"
    assert (orientation == mediakit.Orientation()) == (name == "identity")
    assert ours == ref, f"{name}: pictures turned by {orientation} differ from ffmpeg's autorotated decode"


@pytest.mark.parametrize("name", ROTATED)
def test_rotated_files_turn_as_ffmpeg_autorotation(name: str, shared_media: Path) -> None:
    media = shared_media / name
    frames = 5   # the first few frames: the 1080p ones are large
    with mediakit.open(media) as container:
        orientation = container.streams.video[0].orientation
    assert not orientation.is_upright, f"{name}: a rotated file, yet the orientation is upright"
    ours, _ = turned_nv12(media, orientation, frames)
    ref = ffmpeg_nv12(media, frames=frames)
    assert len(ours) == len(ref), f"{name}: {len(ours)} bytes turned, ffmpeg's autorotated decode has {len(ref)}"
    assert ours == ref, f"{name}: turned by {orientation} differs from ffmpeg's autorotated decode"


@pytest.mark.parametrize("steps", list(FILTERS))
def test_oriented_equals_ffmpeg_filters(steps: tuple[bool, bool, bool], clip: bytes, tmp_path: Path) -> None:
    media = with_matrix(clip, "identity", tmp_path)
    o = mediakit.Orientation(*steps)
    ours, track = turned_nv12(media, o)
    ref = ffmpeg_nv12(media, autorotate=False, vf=FILTERS[steps])
    assert ours == ref, f"{o} differs from ffmpeg's -vf {FILTERS[steps]}"


@pytest.mark.parametrize("degrees,vf", [(0, "null"), (90, "transpose=clock"), (180, "hflip,vflip"), (270, "transpose=cclock")])
def test_rotated_equals_ffmpeg_transpose(degrees: int, vf: str, shared_media: Path) -> None:
    media = shared_media / "mp4_h264_aac_matrix_rotate90_and_reflect.mp4"   # 1080x720: 4:2:0, no symmetry
    ours, track = turned_nv12(media, lambda f: f.rotated(degrees), frames=3)
    ref = ffmpeg_nv12(media, autorotate=False, vf=vf, frames=3)
    assert ours == ref, f"rotated({degrees}) differs from ffmpeg's -noautorotate -vf {vf}"


def test_orientation_errors(sample: Path) -> None:
    with pytest.raises(mediakit.InvalidArgumentError, match="45"):
        mediakit.Orientation.clockwise(45)
    with mediakit.open(sample) as container:
        frame = next(iter(container.decode(audio=0)))
        with pytest.raises(mediakit.InvalidArgumentError):
            frame.rotated(90)
    with mediakit.open(sample) as container:
        video = next(iter(container.decode(video=0)))
        turned = video.rotated(90)
        assert (turned.width, turned.height) == (video.height, video.width)
        video.close()
        assert turned.to_numpy().size == video.width * video.height * 3 // 2, "the turned frame outlives its source"
