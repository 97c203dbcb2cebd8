"""mediakit.VideoDecoder over every video file of ../shared/media and ../shared/media/breadth
(MP4 / MOV / fragmented MP4, Matroska / WebM, Ogg, IVF, MPEG-TS, AVI, 3GP, AV1 OBU; H.264, HEVC,
AV1, VP8, VP9, H.263, MPEG-4 part 2, MPEG-2, Theora, raw H.264 / HEVC; B-frames, edit lists,
rotation, VFR, 10-bit): the frame count is ffprobe's (-show_frames), and the first, middle and last
frames by index are the pictures `ffmpeg -noautorotate -i IN -vf select=eq(n\\,I) -pix_fmt rgb24`
gives, bit-exact, and the pts ffprobe gives them (streams without timestamps: the pts ffmpeg's
tool makes up, bindings_lib.decoded_stamps). Both sides decode with one thread: on damaged streams libavcodec's
error concealment with frame threads is not deterministic (ffmpeg's own output of frame 8 of
ts_Vanilagy_4c8570_no-aud.ts changes from run to run with -threads 2), so the oracle would not
be one; the threaded path is checked by test_video_decoder.py.

Files left out, each for a stated reason (see NOT_COVERED); files with no video track are
skipped by the manifest's ffprobe column."""
from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
import mediakit  # noqa: E402
from bindings_lib import decoded_stamps  # noqa: E402

pytestmark = pytest.mark.usefixtures("oracle_tools")

#: Files whose frame list differs from ffmpeg's for a known reason, not compared here.
NOT_COVERED = {
    # Damaged throughout (ffmpeg's own decode: 12 packets rejected, 17 frames flagged corrupt,
    # libavcodec's error concealment filling them from whatever it decoded before): the
    # container lists 182 frames, ffmpeg decodes 170, and a frame concealed from other pictures
    # than a full decode's is not ffmpeg's. Not a file a frame-exact oracle exists for.
    "broken_fmp4_no_timescale_truncated.mp4": "damaged: concealment depends on the pictures decoded before",
    # An attached picture (cover art) that ffprobe does not mark attached_pic.
    "mpc_Borewit_539382_apev2.sv7.mpc": "cover picture only",
    # Checked by test_damaged_packet_raises and test_fuzzed_hevc_undefined_picture below.
    "broken_mp4_h264_invalid_nalu.mp4": "one packet the decoder rejects: its own test",
    "broken_fuzz_mp4ff_decodebox_e913a4e273a4e987.mp4": "a picture libavcodec leaves undefined: its own test",
}


#: Files whose pts differ from ffprobe's by a constant, and why (the pictures are compared).
PTS_OFFSET = {
    # The edit list starts at 2.5 s of the media, inside the frame at 2.0 s (which lasts to 3.0 s):
    # that frame is cut and the next is presented 0.5 s after the edit's start (0.5 s here);
    # ffmpeg's mov demuxer shifts the timestamps so that this first kept frame is at 0.
    "mp4_h264_bframes_iibbibb_elst_offset.mp4": 0.5,
    # A raw H.264 stream of one picture (no timestamps: ffmpeg's tool makes them up, from the
    # dts it guesses per packet). With one frame it knows no average frame rate, so its guess
    # does not start at minus the stream's B-frame delay (has_b_frames=2) as for longer
    # streams, and the picture, output when decoding is drained after the packet, is stamped
    # one frame (1/25 s) later than the first: ours is at 0 (the first presented frame).
    "264_Eyevinn_54e476_blackframe.264": -0.04,
}


def _video_files(root: Path) -> list[Path]:
    files = []
    for folder in (root, root / "breadth"):
        manifest = folder / "MANIFEST.tsv"
        if not manifest.exists():
            continue
        for line in manifest.read_text().splitlines()[1:]:
            name = line.split("\t")[0]
            if "codec_type=video" in line and name not in NOT_COVERED:
                files.append(folder / name)
    return files


#: ../shared/media beside the checkout (conftest's SHARED); absent, the list is empty and the
#: shared_media fixture of the other tests fails under CI=true.
FILES = _video_files(Path(__file__).resolve().parents[3].parent / "shared" / "media")


def _rgb_frames(path: Path, width: int, height: int, *options: str, filters: str = "") -> Any:
    """The pictures ffmpeg's tool decodes from the first video stream (one thread, timestamps
    passed through, no autorotation; `options` before the input, `filters` as -vf), as rgb24."""
    vf = ["-vf", filters] if filters else []
    raw = subprocess.run(["ffmpeg", "-v", "error", "-threads", "1", *options, "-noautorotate", "-i", str(path), "-map", "0:v:0",
                          *vf, "-fps_mode", "passthrough", "-pix_fmt", "rgb24", "-f", "rawvideo", "-"], capture_output=True).stdout
    return np.frombuffer(raw, dtype="u1").reshape(-1, height, width, 3)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_frames_by_index_are_ffmpegs(path: Path, shared_media: Path) -> None:
    probe = subprocess.run(["ffprobe", "-v", "error", "-threads", "1", "-select_streams", "v:0", "-show_entries",
                            "frame=pts_time", "-of", "json", str(path)], capture_output=True, text=True)
    times = [float(f.get("pts_time", "nan")) for f in json.loads(probe.stdout or "{}").get("frames", [])]
    if times and all(math.isnan(t) for t in times):
        # Packets without timestamps (raw streams): the times ffmpeg's tool gives the frames.
        times = decoded_stamps(path)
    try:
        dec = mediakit.VideoDecoder(path, threads=1)
    except mediakit.UnsupportedError as e:
        assert "encrypted" in str(e), f"{path.name}: {e}"
        return
    except ValueError as e:
        # A cover picture (ffprobe: a video stream with the attached_pic disposition) is
        # metadata here (Demuxer.attached_pictures), not a video track.
        cover = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                "stream_disposition=attached_pic", "-of", "csv=p=0", str(path)], capture_output=True, text=True)
        assert "no video track" in str(e) and cover.stdout.strip() == "1", f"{path.name}: {e} (ffprobe: {cover.stdout!r})"
        return
    with dec:
        n = len(dec)
        assert n == len(times), f"{path.name}: {n} frames listed, ffprobe decodes {len(times)}"
        if n == 0:
            return
        m = dec.metadata
        indices = sorted({0, n // 2, n - 1})
        chain = "select='" + "+".join(f"eq(n,{i})" for i in indices) + "'"
        ref = _rgb_frames(path, m.width, m.height, filters=chain)
        assert len(ref) == len(indices), f"{path.name}: ffmpeg gave {len(ref)} frames for {indices}"
        batch = dec.get_frames_at(indices)
        for k, i in enumerate(indices):
            assert np.array_equal(batch.data[k], ref[k]), f"{path.name}: frame {i} differs from ffmpeg's"
            assert batch.pts_seconds[k] == pytest.approx(times[i] + PTS_OFFSET.get(path.name, 0.0), abs=1e-3), \
                f"{path.name}: frame {i}'s pts"




def test_damaged_packet_raises(shared_media: Path) -> None:
    """broken_mp4_h264_invalid_nalu.mp4: its sample table lists 30 frames; libavcodec rejects
    one packet ("Error splitting the input into NAL units"), so ffmpeg decodes 29. Every listed
    frame that ffprobe also gives (the same time) is ffmpeg's picture, in one batch that decodes
    through the damaged packet; asking for the rejected one raises, naming it, and so does a
    batch that holds it (before, the callback's failure status was MK_EAGAIN's -1, the call
    returned without an exception and the pictures after it were left as np.empty made them)."""
    path = shared_media / "broken_mp4_h264_invalid_nalu.mp4"
    probe = subprocess.run(["ffprobe", "-v", "error", "-threads", "1", "-select_streams", "v:0", "-show_entries",
                            "frame=pts_time", "-of", "json", str(path)], capture_output=True, text=True)
    times = [float(f["pts_time"]) for f in json.loads(probe.stdout)["frames"]]
    with mediakit.VideoDecoder(path, threads=1) as dec:
        m = dec.metadata
        ref = _rgb_frames(path, m.width, m.height)
        assert len(ref) == len(times) == len(dec) - 1, (len(ref), len(times), len(dec))
        kept: dict[int, int] = {}
        missing: list[int] = []
        for i, t in enumerate(dec._seconds):   # the listed frames' times (no decode)
            j = min(range(len(times)), key=lambda j: abs(times[j] - t))
            if abs(times[j] - t) < 1e-3:
                kept[i] = j
            else:
                missing.append(i)
        assert len(missing) == 1, missing
        batch = dec.get_frames_at(list(kept))
        for k, (i, j) in enumerate(kept.items()):
            assert np.array_equal(batch.data[k], ref[j]), f"frame {i} differs from ffmpeg's frame {j}"
        with pytest.raises(ValueError, match=f"no picture for frame {missing[0]} "):
            dec.get_frames_at([missing[0]])
        with pytest.raises(ValueError, match=f"no picture for frame {missing[0]} "):
            dec.get_frames_in_range(0, len(dec))


def test_fuzzed_hevc_undefined_picture(shared_media: Path) -> None:
    """broken_fuzz_mp4ff_decodebox_e913a4e273a4e987.mp4 (fuzzed HEVC): the picture presented
    as frame 11 (a reference picture, POC 11) stops part-way through its slice data without
    an error from libavcodec, which outputs it with the rest of its buffer as the buffer pool
    left it: those bytes depend on which pictures were decoded before, not on the stream.
    Shown with ffmpeg alone: its decode of every picture and its decode with libavcodec's own
    `-skip_frame noref` (non-reference pictures left out, as DecodeSession leaves them out
    before a wanted frame) give different pictures for frame 11. Ours, asked for frame 11
    alone, is the second (the same libavcodec, the same pictures decoded); frame 13 refers to
    frame 11 and has no oracle (`-skip_frame noref` does not output it). Every other frame,
    asked for alone, is ffmpeg's full decode's."""
    path = shared_media / "broken_fuzz_mp4ff_decodebox_e913a4e273a4e987.mp4"
    with mediakit.VideoDecoder(path, threads=1) as dec:
        m = dec.metadata
        full = _rgb_frames(path, m.width, m.height)
        noref = _rgb_frames(path, m.width, m.height, "-skip_frame", "noref")
        stamps = subprocess.run(["ffmpeg", "-v", "quiet", "-threads", "1", "-skip_frame", "noref", "-i", str(path),
                                 "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "framemd5", "-"],
                                capture_output=True, text=True).stdout
        # The stream's time base is its frame period: a picture's pts is its index.
        noref_index = [int(line.split(",")[2]) for line in stamps.splitlines() if line and not line.startswith("#")]
        assert len(full) == len(dec) == 27 and len(noref) == len(noref_index)
        at11 = noref[noref_index.index(11)]
        assert not np.array_equal(full[11], at11), "ffmpeg's two decodes agree on frame 11 now: compare it with the full decode"
        assert np.array_equal(dec.get_frames_at([11]).data[0], at11)
        for i in range(len(dec)):
            if i not in (11, 13):
                assert np.array_equal(dec.get_frames_at([i]).data[0], full[i]), f"frame {i} differs from ffmpeg's"
