"""mediakit.VideoEncoder (C mk_video_encoder, issue 36 item 2): a numpy frame loop encoded with
libx264 -qp 0 (lossless; -qp 20 for B-frames, which x264 does not code at -qp 0) and muxed with mediakit.Muxer into an MP4, which
  - ffmpeg decodes back to the input bytes exactly (`ffmpeg -i F -f rawvideo -pix_fmt FMT`),
  - mediakit's own Decoder decodes back to the input planes exactly,
  - with B-frames starts at 0 (ffprobe start_time: the muxer's edit list cuts the delay) and
    decodes to every picture at its pts (ffprobe -show_frames),
for yuv420p given as one packed array and as strided plane views, and yuv444p given as planes;
an NV12 input coded as yuv420p (the converter deinterleaves, exactly). Errors: a picture of
the wrong size, an unknown encoder, a send after flush."""
from __future__ import annotations

import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
import mediakit  # noqa: E402
from bindings_lib import frame_times, raw_testsrc  # noqa: E402

W, H, N = 64, 48, 24


pytestmark = pytest.mark.usefixtures("oracle_tools")   # ffmpeg / ffprobe missing: a failure, not a skip

def pictures(fmt: str) -> list[Any]:
    """N pictures of testsrc2 in `fmt`, one flat uint8 array each."""
    return list(np.frombuffer(raw_testsrc(fmt, W, H, N), dtype=np.uint8).reshape(N, -1))


def split(fmt: str, flat: Any) -> list[Any]:
    """The planes of a packed picture as 2-D arrays."""
    shapes = mediakit._venc.plane_shapes(fmt, W, H)
    out, offset = [], 0
    for rows, row_bytes in shapes:
        out.append(flat[offset:offset + rows * row_bytes].reshape(rows, row_bytes))
        offset += rows * row_bytes
    return out


def write_mp4(path: Path, enc: mediakit.VideoEncoder, inputs: list[Any]) -> None:
    with mediakit.Muxer(path) as mux:
        track = mux.add_track(enc.parameters)
        for i, picture in enumerate(inputs):
            for p in enc.encode(picture, pts=i):
                mux.write(track, p)
        for p in enc.flush():
            mux.write(track, p)
        mux.finish()


def ffmpeg_raw(path: Path, fmt: str) -> bytes:
    return subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-f", "rawvideo", "-pix_fmt", fmt, "-"],
                          check=True, capture_output=True).stdout


def mediakit_planes(path: Path) -> list[list[Any]]:
    """Each decoded picture's planes (rows cut to the picture's bytes), through mediakit."""
    out = []
    with mediakit.open(path) as demuxer:
        track = demuxer.streams.video[0]
        with mediakit.Decoder(track) as dec:
            for frame in dec.frames(demuxer.packets(track)):
                out.append([np.array(p) for p in frame.planes])
                frame.close()
    return out




def start_time(path: Path) -> float:
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=start_time",
                          "-of", "csv=p=0", str(path)], check=True, capture_output=True, text=True).stdout
    return float(out.strip())


# id: (pixel format given and coded, as planes, B-frames, qp). x264 codes no B-frames at -qp 0,
# so the B-frame case is lossy: its pictures are checked against ffmpeg's decode of the same file.
CASES = {"yuv420p-packed": ("yuv420p", False, 0, 0), "yuv444p-planes": ("yuv444p", True, 2, 0),
         "yuv420p-planes-bframes": ("yuv420p", True, 3, 20)}


def pict_types(path: Path) -> str:
    out = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pict_type",
                          "-of", "csv=p=0", str(path)], check=True, capture_output=True, text=True).stdout
    return "".join(x.strip(",") for x in out.split())


@pytest.mark.parametrize("case", list(CASES))
def test_frames_come_back(case: str, tmp_path: Path) -> None:
    """Lossless: the input exactly, by ffmpeg's and mediakit's decode; with B-frames: start_time 0,
    every picture at its pts, and mediakit's decode equal to ffmpeg's."""
    fmt, as_planes, bf, qp = CASES[case]
    flats = pictures(fmt)
    inputs: list[Any] = []
    for flat in flats:
        if not as_planes:
            inputs.append(flat)
            continue
        # Planes as strided views: each row inside a wider buffer, as a crop of a bigger picture.
        views = []
        for p in split(fmt, flat):
            wide = np.zeros((p.shape[0], p.shape[1] + 16), dtype=np.uint8)
            wide[:, 8:8 + p.shape[1]] = p
            views.append(wide[:, 8:8 + p.shape[1]])
        inputs.append(views)
    enc = mediakit.VideoEncoder("libx264", W, H, fps=25, format=fmt, pixel_format=fmt, qp=qp, preset="veryfast",
                                bframes=bf, threads=1)
    assert (enc.backend, enc.codec, enc.pixel_format, enc.time_base) == ("libx264", "h264", fmt, Fraction(1, 25))
    assert (enc.reorder_delay > 0) == (bf > 0)
    nal_types = {b & 0x1F for b in (enc.extradata.split(b"\x00\x00\x01")[i][0] for i in range(1, enc.extradata.count(b"\x00\x00\x01") + 1))}
    assert {7, 8} <= nal_types, "libx264's extradata holds the SPS and PPS (Annex B; the muxer builds the avcC)"
    out = tmp_path / "out.mp4"
    write_mp4(out, enc, inputs)
    assert enc.frames_sent == N
    ffmpeg_decoded = ffmpeg_raw(out, fmt)
    if qp == 0:
        assert ffmpeg_decoded == b"".join(f.tobytes() for f in flats), "ffmpeg's decode differs from the input"
    else:
        assert "B" in pict_types(out), pict_types(out)
        flats = list(np.frombuffer(ffmpeg_decoded, dtype=np.uint8).reshape(N, -1))
    decoded = mediakit_planes(out)
    assert len(decoded) == N
    for i, (planes, flat) in enumerate(zip(decoded, flats)):
        for k, (got, want) in enumerate(zip(planes, split(fmt, flat))):
            assert np.array_equal(got[:, :want.shape[1]], want), f"picture {i} plane {k} differs (mediakit's decode)"
    assert start_time(out) == 0.0
    assert frame_times(out) == [i / 25 for i in range(N)]
    enc.close()


def test_nv12_coded_as_yuv420p_and_decoded_frames_reencoded(tmp_path: Path) -> None:
    """NV12 planes coded as yuv420p come back as ffmpeg's yuv420p of the same pictures; the
    decoded Frames of that file, encoded again (mk_video_encoder_send_frame, each at its own
    pts), come back the same again."""
    nv12, i420 = pictures("nv12"), pictures("yuv420p")
    expected = b"".join(f.tobytes() for f in i420)
    with mediakit.VideoEncoder("h264", W, H, fps=25, format="nv12", qp=0, threads=1) as enc:
        assert enc.pixel_format == "yuv420p"
        out = tmp_path / "nv12.mp4"
        write_mp4(out, enc, [split("nv12", f) for f in nv12])
    assert ffmpeg_raw(out, "yuv420p") == expected
    again = tmp_path / "again.mp4"
    with mediakit.open(out) as demuxer, mediakit.VideoEncoder("h264", W, H, fps=25, qp=0, threads=1) as enc, \
            mediakit.Muxer(again) as mux:
        track = demuxer.streams.video[0]
        v = mux.add_track(enc.parameters)
        with mediakit.Decoder(track) as dec:
            for frame in dec.frames(demuxer.packets(track)):
                for p in enc.encode(frame):
                    mux.write(v, p)
        for p in enc.flush():
            mux.write(v, p)
        mux.finish()
    assert ffmpeg_raw(again, "yuv420p") == expected
    assert frame_times(again) == [i / 25 for i in range(N)]


def test_refusals() -> None:
    with pytest.raises(mediakit.NotFoundError, match="no-such-encoder"):
        mediakit.VideoEncoder("no-such-encoder", W, H, fps=25)
    with pytest.raises(ValueError, match="pixel format"):
        mediakit.VideoEncoder("h264", W, H, fps=25, format="yuv9000")
    with mediakit.VideoEncoder("h264", W, H, fps=25, format="rgb24", qp=0) as enc:
        with pytest.raises(ValueError, match="bytes"):
            enc.encode(np.zeros((H, W + 1, 3), dtype=np.uint8))
        with pytest.raises(ValueError, match="planes"):
            enc.encode([np.zeros((H, W * 3), dtype=np.uint8)] * 2)
        assert enc.encode(np.zeros((H, W, 3), dtype=np.uint8)) == []
        packets = enc.flush()
        assert len(packets) == 1 and packets[0].is_keyframe
        with pytest.raises(mediakit.StateError):
            enc.encode(np.zeros((H, W, 3), dtype=np.uint8))
