"""mediakit.VideoEncoder (C mk_video_encoder, issue 36 item 2): a numpy frame loop encoded with
libx264 -qp 0 (lossless; -qp 20 for B-frames, which x264 does not code at -qp 0) and muxed with mediakit.Muxer into an MP4, which
  - ffmpeg decodes back to the input bytes exactly (`ffmpeg -i F -f rawvideo -pix_fmt FMT`),
  - mediakit's own DecodeSession decodes back to the input planes exactly,
  - with B-frames starts at 0 (ffprobe start_time: the muxer's edit list cuts the delay) and
    decodes to every picture at its pts (ffprobe -show_frames),
for yuv420p given as one packed array and as strided plane views, and yuv444p given as planes;
an NV12 input coded as yuv420p (the converter deinterleaves, exactly). Errors: a picture of
the wrong size, an unknown encoder, a send after flush."""
from __future__ import annotations

import os
import subprocess
import threading
import time
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
import mediakit  # noqa: E402
from bindings_lib import ffprobe_json, frame_times, framemd5, raw_testsrc  # noqa: E402

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
        with mediakit.DecodeSession(track) as dec:
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
        with mediakit.DecodeSession(track) as dec:
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


def _packet_record(p: mediakit.Packet) -> tuple[int, int, bool, bytes]:
    return (p.pts, p.dts, p.is_keyframe, bytes(p.data))


def test_compression_session_gives_the_video_encoders_packets() -> None:
    """mediakit.CompressionSession (C mk_compression_session): RGB pictures converted and coded
    with B-frames and forced key frames; the packets on_packet gets, on a thread other than
    the caller's, are VideoEncoder's for the same pictures, in its order. complete_frames(pts)
    halfway has delivered what the synchronous encoder released by then; the end delivers all."""
    rgb = pictures("rgb24")
    settings: dict[str, Any] = dict(fps=25, format="rgb24", qp=20, bframes=3, gop=12, preset="veryfast", threads=1)
    sync: list[tuple[int, int, bool, bytes]] = []
    released_halfway = 0
    with mediakit.VideoEncoder("libx264", W, H, **settings) as enc:
        for i, picture in enumerate(rgb):
            sync += [_packet_record(p) for p in enc.encode(picture, pts=i, keyframe=i > 0 and i % 7 == 0)]
            if i == N // 2:
                released_halfway = len(sync)
        sync += [_packet_record(p) for p in enc.flush()]
        sync_params = enc.parameters
    assert len(sync) == N and released_halfway < N // 2 + 1
    got: list[tuple[int, int, bool, bytes]] = []
    threads: set[int] = set()

    def on_packet(p: mediakit.Packet) -> None:
        threads.add(threading.get_ident())
        got.append(_packet_record(p))
        p.close()

    with mediakit.CompressionSession("libx264", W, H, on_packet=on_packet, **settings) as session:
        assert session.parameters.extradata == sync_params.extradata
        assert session.time_base == Fraction(1, 25) and session.reorder_delay == sync_params.reorder_depth > 0
        for i, picture in enumerate(rgb):
            session.encode_frame(picture, i, keyframe=i > 0 and i % 7 == 0)
            if i == N // 2:
                session.complete_frames(i)
                assert len(got) == released_halfway
        session.complete_frames()
        assert got == sync
        assert threading.get_ident() not in threads
        with pytest.raises(mediakit.StateError):
            session.encode_frame(rgb[0], N)
        with pytest.raises(ValueError, match="pts"):
            session.encode_frame(rgb[0])
    assert session.closed


def test_compression_session_raises_what_a_callback_raised() -> None:
    def on_packet(p: mediakit.Packet) -> None:
        raise RuntimeError("the callback failed")

    with mediakit.CompressionSession("h264", W, H, fps=25, qp=0, threads=1, on_packet=on_packet) as session:
        for i, picture in enumerate(pictures("yuv420p")[:3]):
            session.encode_frame(picture, i)
        with pytest.raises(RuntimeError, match="the callback failed"):
            session.complete_frames()
    with pytest.raises(mediakit.NotFoundError, match="no-such-encoder"):
        mediakit.CompressionSession("no-such-encoder", W, H, fps=25, on_packet=lambda p: None)


def test_compression_session_close_and_complete_frames_from_on_packet() -> None:
    """close() called by on_packet ends the session without waiting for that call (it waited for
    the queue it ran on, and libdispatch stopped the process), and no packet comes after it;
    complete_frames() called by on_packet ends the stream and returns, and the packets of the
    pictures taken until then come after that call: they are VideoEncoder's for those pictures."""
    yuv = pictures("yuv420p")
    settings: dict[str, Any] = dict(fps=25, qp=0, bframes=0, threads=1)
    calls: list[int] = []
    returned = threading.Event()
    box: list[mediakit.CompressionSession] = []

    def close_at_first(p: mediakit.Packet) -> None:
        calls.append(p.pts)
        p.close()
        box[0].close()
        calls.append(-1)
        returned.set()

    box.append(mediakit.CompressionSession("libx264", W, H, on_packet=close_at_first, **settings))
    for i, picture in enumerate(yuv):
        try:
            box[0].encode_frame(picture, i)
        except mediakit.MediaKitError:
            break       # closed by the callback meanwhile
    assert returned.wait(30), f"close() called by on_packet did not return: {calls}"
    time.sleep(0.3)     # room for a packet that should not come
    assert calls == [0, -1], calls
    with pytest.raises(mediakit.MediaKitError, match="is closed"):
        box[0].encode_frame(yuv[0], N)

    got: list[tuple[int, int, bool, bytes]] = []
    ended: list[str] = []

    def end_at_first(p: mediakit.Packet) -> None:
        got.append(_packet_record(p))
        p.close()
        if not ended:
            box[1].complete_frames()
            ended.append("returned")

    box.append(mediakit.CompressionSession("libx264", W, H, on_packet=end_at_first, **settings))
    with box[1] as session:
        taken = 0
        for i, picture in enumerate(yuv):
            try:
                session.encode_frame(picture, i)
            except mediakit.StateError:
                break
            taken += 1
        session.complete_frames()
    assert ended == ["returned"] and 0 < taken
    with mediakit.VideoEncoder("libx264", W, H, **settings) as enc:
        sync = [_packet_record(p) for i in range(taken) for p in enc.encode(yuv[i], pts=i)]
        sync += [_packet_record(p) for p in enc.flush()]
    assert len(got) >= 1 and got == sync[:len(got)], (len(got), len(sync), taken)


def test_compression_session_reports_an_encoder_failure_midway() -> None:
    """An encoder that fails on the session's thread (libavcodec's mpeg4 refuses a pts that does
    not increase: "Invalid pts <= last"): on_error gets the error once, naming the encoder and
    the picture, on the session's thread; the packets before it are the synchronous encoder's
    for the same pictures, which fails on the same picture; complete_frames raises the error and
    later pictures are refused (StateError)."""
    yuv = pictures("yuv420p")
    stamps = [0, 1, 2, 2, 3]
    sync: list[tuple[int, int, bool, bytes]] = []
    with mediakit.VideoEncoder("mpeg4", W, H, fps=25, threads=1) as enc:
        with pytest.raises(mediakit.MediaKitError, match="at pts 2") as sync_error:
            for picture, pts in zip(yuv, stamps):
                sync += [_packet_record(p) for p in enc.encode(picture, pts=pts)]
    got: list[tuple[int, int, bool, bytes]] = []
    errors: list[tuple[mediakit.MediaKitError, int]] = []

    def on_packet(p: mediakit.Packet) -> None:
        got.append(_packet_record(p))
        p.close()

    session = mediakit.CompressionSession("mpeg4", W, H, fps=25, threads=1, on_packet=on_packet,
                                          on_error=lambda e: errors.append((e, threading.get_ident())))
    with session:
        for picture, pts in zip(yuv, stamps):
            try:
                session.encode_frame(picture, pts)
            except mediakit.StateError:
                break   # the failure came first: the session takes no more pictures
        with pytest.raises(type(sync_error.value), match="ffmpeg mpeg4 encoder.*at pts 2"):
            session.complete_frames()
        assert [str(e) for e, _ in errors] == [str(sync_error.value)], errors
        assert errors[0][1] != threading.get_ident()
        assert got == sync and len(got) == 3
        with pytest.raises(mediakit.StateError, match="stopped"):
            session.encode_frame(yuv[0], 9)


def _video_packets_seconds(path: Path) -> list[tuple[float, float, str, str]]:
    """(dts s, pts s, size, md5) of each packet of the first video stream (ffmpeg -c copy framemd5)."""
    lines = framemd5(path, "0:v:0")
    tb = next(Fraction(line.split(":", 1)[1].strip()) for line in lines if line.startswith("#tb 0:"))
    out = []
    for line in lines:
        if line.startswith("#") or not line.strip():
            continue
        _, dts, pts, _, size, md5 = (f.strip() for f in line.split(","))
        out.append((round(float(int(dts) * tb), 4), round(float(int(pts) * tb), 4), size, md5))
    return out


def test_transcode_reencodes_video_as_mk_transcode_and_ffmpeg(tmp_path: Path) -> None:
    """mediakit.transcode(video_codec=...) over mk_transcode_with: the file mk-transcode writes
    with the same options, byte for byte, whose video packets are those of
    `ffmpeg -vf fps=R,scale=W:H -c:v libx264 -threads 1` and whose audio packets are the source's."""
    src = tmp_path / "src.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi",
                    "-i", "sine=f=440:sample_rate=44100", "-t", "1", "-c:v", "libx264", "-bf", "2", "-c:a", "aac", "-ac", "1",
                    "-shortest", str(src)], check=True)
    ours, tool, ref = tmp_path / "py.mp4", tmp_path / "tool.mp4", tmp_path / "ref.mp4"
    mediakit.transcode(src, ours, video_codec="libx264", preset="veryfast", crf=28, threads=1, bframes=2, gop=12,
                       fps="30000/1001", scale="160:-2", scale_filter="bilinear", audio_codec="copy")
    mk_transcode = Path(os.environ.get("MK_BIN") or Path(mediakit.LIBRARY_PATH).parent) / "mk-transcode"
    subprocess.run([str(mk_transcode), str(src), str(tool), "--quiet", "--video-codec", "libx264", "--preset", "veryfast",
                    "--crf", "28", "--threads", "1", "--bframes", "2", "--gop", "12", "--fps", "30000/1001", "--scale", "160:-2",
                    "--scale-filter", "bilinear", "--audio-codec", "copy"], check=True)
    assert ours.read_bytes() == tool.read_bytes()
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-i", str(src), "-an", "-vf", "fps=30000/1001,scale=160:-2:flags=bilinear",
                    "-c:v", "libx264", "-preset", "veryfast", "-crf", "28", "-threads", "1", "-bf", "2", "-g", "12", str(ref)],
                   check=True)
    a, b = _video_packets_seconds(ours), _video_packets_seconds(ref)
    assert len(a) == len(b) > 25 and a == b
    assert [line.split(",")[-1] for line in framemd5(ours, "0:a:0") if not line.startswith("#")] == \
        [line.split(",")[-1] for line in framemd5(src, "0:a:0") if not line.startswith("#")]
    info = ffprobe_json(ours, "-show_streams")
    video = next(s for s in info["streams"] if s["codec_type"] == "video")
    assert (video["width"], video["height"]) == (160, 120)


def test_transcode_refuses_contradictions(tmp_path: Path) -> None:
    src = tmp_path / "src.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=64x48:rate=25", "-t", "0.2",
                    "-c:v", "libx264", str(src)], check=True)
    out = tmp_path / "out.mp4"
    with pytest.raises(mediakit.InvalidArgumentError, match="crf"):
        mediakit.transcode(src, out, crf=23, no_audio=True, copy_video=True)
    with pytest.raises(mediakit.InvalidArgumentError, match="no_video"):
        mediakit.transcode(src, out, video_codec="libx264", no_video=True)
    with pytest.raises(mediakit.InvalidArgumentError, match="copied"):
        mediakit.transcode(src, out, video_codec="copy", scale=(32, -2))
    with pytest.raises(ValueError, match="codec and audio_codec"):
        mediakit.transcode(src, out, codec="aac", audio_codec="copy")
    with pytest.raises(ValueError, match="scale_filter"):
        mediakit.transcode(src, out, video_codec="libx264", scale="32:-2", scale_filter="sharpest")
    with pytest.raises(ValueError, match="fps"):
        mediakit.transcode(src, out, video_codec="libx264", fps="fast")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src.mp4"]
    mediakit.transcode(src, out, video_codec="libx264", no_audio=True, scale=(32, -2), threads=1)
    info = ffprobe_json(out, "-show_streams")
    assert [(s["codec_name"], s["width"], s["height"]) for s in info["streams"]] == [("h264", 32, 24)]


def test_compression_session_takes_decoded_frames_at_their_own_pts(tmp_path: Path) -> None:
    """Decoded Frames (C mk_compression_session_encode_frame with MK_NOPTS_VALUE: each at its
    own pts, rescaled) give VideoEncoder.send(frame)'s packets."""
    src = tmp_path / "src.mp4"
    with mediakit.VideoEncoder("h264", W, H, fps=25, qp=0, threads=1) as enc:
        write_mp4(src, enc, pictures("yuv420p"))

    def frames() -> list[mediakit.Frame]:
        with mediakit.open(src) as demuxer:
            track = demuxer.streams.video[0]
            with mediakit.DecodeSession(track) as dec:
                return list(dec.frames(demuxer.packets(track)))

    settings: dict[str, Any] = dict(fps=25, qp=20, bframes=2, threads=1, preset="veryfast")
    with mediakit.VideoEncoder("libx264", W, H, **settings) as enc:
        sync = []
        for f in frames():
            sync += [_packet_record(p) for p in enc.encode(f)]
        sync += [_packet_record(p) for p in enc.flush()]
    got: list[tuple[int, int, bool, bytes]] = []
    with mediakit.CompressionSession("libx264", W, H, on_packet=lambda p: got.append(_packet_record(p)), **settings) as s:
        for f in frames():
            s.encode_frame(f)
        s.complete_frames()
    assert len(sync) == N and got == sync
    assert [p[0] for p in sorted(got)] == list(range(N))
