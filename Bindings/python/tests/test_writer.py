"""mediakit.Writer (C mk_writer, Swift AssetWriter; issue 36 item 3): numpy pictures and PCM
written into an MP4 in a `with` block, checked by ffmpeg / ffprobe:
  - lossless (libx264 -qp 0, yuv444p given and coded): ffmpeg's and mediakit's decode give the
    pictures back exactly;
  - B-frames (-qp 20 -bf 2) with AAC audio: both streams, video start_time 0 (the edit list),
    every picture decoded at its pts, both durations 1.2 s; mediakit decodes exactly the samples
    written (the priming and padding cut by the edit list), ffmpeg 5.1 those plus the rest of
    the last AAC frame (it cuts only the priming);
  - variable frame rate: pts in a 1/1000 time base come back as ffprobe's pts_time;
  - a real file of ../shared/media (H.264 640x360 with ctts), decoded by mediakit and its Frames
    written (-crf 28 -threads 1): packets byte-identical (size, MD5) to ffmpeg's libx264 encode
    of ffmpeg's decode of the same 30 pictures (`-fps_mode passthrough -f rawvideo`);
  - all pictures written first, then all the audio (300 frames: more than the 256 packets the
    writer holds back for interleaving), and all the audio first: both streams whole, with
    their durations;
  - an exception inside the `with` block, or an unknown extension, leaves no file at all."""
from __future__ import annotations

import json
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
import mediakit  # noqa: E402
from bindings_lib import frame_times, raw_testsrc  # noqa: E402

W, H, N = 64, 48, 30


pytestmark = pytest.mark.usefixtures("oracle_tools")   # ffmpeg / ffprobe missing: a failure, not a skip

def pictures(fmt: str) -> list[Any]:
    """N pictures of testsrc2 in `fmt`, one flat uint8 array each."""
    return list(np.frombuffer(raw_testsrc(fmt, W, H, N), dtype=np.uint8).reshape(N, -1))


def streams(path: Path) -> list[dict[str, Any]]:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name,start_time,duration",
                          "-of", "json", str(path)], check=True, capture_output=True, text=True).stdout
    return list(json.loads(out)["streams"])




def test_lossless_yuv444p_comes_back_exactly(tmp_path: Path) -> None:
    flats = pictures("yuv444p")
    out = tmp_path / "lossless.mp4"
    with mediakit.Writer(out, video=dict(codec="libx264", width=W, height=H, fps=25, qp=0, threads=1,
                                         format="yuv444p", pixel_format="yuv444p")) as w:
        for flat in flats:
            w.write_video(flat.reshape(3, H, W))
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", str(out), "-f", "rawvideo", "-pix_fmt", "yuv444p", "-"],
                         check=True, capture_output=True).stdout
    assert raw == b"".join(f.tobytes() for f in flats)
    with mediakit.open(out) as demuxer:
        track = demuxer.streams.video[0]
        with mediakit.DecodeSession(track) as dec:
            got = [np.concatenate([np.array(p)[:, :W].reshape(-1) for p in f.planes]) for f in dec.frames(demuxer.packets(track))]
    assert len(got) == N and all(np.array_equal(g, f) for g, f in zip(got, flats)), "mediakit's decode differs"


def test_bframes_and_audio(tmp_path: Path) -> None:
    rate, per_frame = 48000, 1920
    t = np.arange(N * per_frame) / rate
    pcm = (0.25 * np.stack([np.sin(2 * np.pi * 440 * t), np.sin(2 * np.pi * 660 * t)], axis=1)).astype(np.float32)
    out = tmp_path / "av.mp4"
    with mediakit.Writer(out, video=dict(codec="h264", width=W, height=H, fps=25, qp=20, bframes=2, threads=1, format="rgb24"),
                         audio=dict(codec="aac", sample_rate=rate, channels=2, bitrate=128000)) as w:
        for i, rgb in enumerate(pictures("rgb24")):
            w.write_video(rgb.reshape(H, W, 3))
            w.write_audio(pcm[i * per_frame:(i + 1) * per_frame])
    s = {x["codec_type"]: x for x in streams(out)}
    assert s["video"]["codec_name"] == "h264" and s["audio"]["codec_name"] == "aac"
    assert float(s["video"]["start_time"]) == 0.0
    assert float(s["video"]["duration"]) == pytest.approx(N / 25, abs=1e-3)
    assert float(s["audio"]["duration"]) == pytest.approx(N * per_frame / rate, abs=1e-3)
    types = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pict_type", "-of", "csv=p=0",
                            str(out)], check=True, capture_output=True, text=True).stdout
    assert "B" in types
    assert frame_times(out) == [i / 25 for i in range(N)]
    decoded = subprocess.run(["ffmpeg", "-v", "error", "-i", str(out), "-map", "0:a", "-f", "f32le", "-"],
                             check=True, capture_output=True).stdout
    # FFmpeg 5.1 cuts the priming by the edit list but decodes the last AAC frame whole.
    written, priming = N * per_frame, 1024
    assert len(decoded) // 8 == -(-(written + priming) // 1024) * 1024 - priming, "ffmpeg decodes another sample count"
    with mediakit.open(out) as demuxer:
        track = demuxer.streams.audio[0]
        with mediakit.DecodeSession(track) as dec:   # trim="gapless": the edit list's end too
            assert sum(f.sample_count for f in dec.frames(demuxer.packets(track))) == written


def test_variable_frame_rate_by_pts(tmp_path: Path) -> None:
    pts = [0, 40, 100, 120, 200, 260, 270, 400]
    out = tmp_path / "vfr.mp4"
    with mediakit.Writer(out, video=dict(codec="h264", width=W, height=H, fps=25, crf=30, threads=1, format="gray",
                                         time_base=Fraction(1, 1000))) as w:
        for i, p in enumerate(pts):
            w.write_video(np.full((H, W), i * 30, dtype=np.uint8), pts=p)
    assert frame_times(out) == [p / 1000 for p in pts]


def test_nothing_is_left_on_error(tmp_path: Path) -> None:
    out = tmp_path / "broken.mp4"
    with pytest.raises(RuntimeError):
        with mediakit.Writer(out, video=dict(codec="h264", width=W, height=H, fps=25, format="rgb24")) as w:
            for _ in range(5):
                w.write_video(np.zeros((H, W, 3), dtype=np.uint8))
            raise RuntimeError("the caller's own error")
    with pytest.raises(ValueError, match="bytes"):
        with mediakit.Writer(out, video=dict(codec="h264", width=W, height=H, fps=25, format="rgb24")) as w:
            w.write_video(np.zeros((H, W, 4), dtype=np.uint8))
    with pytest.raises(mediakit.UnsupportedError):
        mediakit.Writer(tmp_path / "out.xyz", video=dict(codec="h264", width=W, height=H, fps=25))
    with pytest.raises(ValueError, match="fps"):
        mediakit.Writer(out, video=dict(codec="h264", width=W, height=H))
    assert list(tmp_path.iterdir()) == [], "a failed or cancelled writer left files behind"


def test_real_file_frames_give_ffmpegs_packets(shared_media: Path, tmp_path: Path) -> None:
    src = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"
    out, raw, ref = tmp_path / "ours.mp4", tmp_path / "src.yuv", tmp_path / "ref.mp4"
    settings = ["-c:v", "libx264", "-preset", "veryfast", "-crf", "28", "-threads", "1"]
    with mediakit.open(src) as demuxer, mediakit.Writer(out, video=dict(codec="libx264", width=640, height=360, fps=30, crf=28,
                                                                        preset="veryfast", threads=1)) as w:
        track = demuxer.streams.video[0]
        with mediakit.DecodeSession(track) as dec:
            for i, frame in enumerate(dec.frames(demuxer.packets(track))):
                if i == 30:
                    break
                w.write_video(frame)
    subprocess.run(["ffmpeg", "-v", "error", "-i", str(src), "-frames:v", "30", "-fps_mode", "passthrough", "-f", "rawvideo",
                    "-pix_fmt", "yuv420p", str(raw)], check=True)
    subprocess.run(["ffmpeg", "-v", "error", "-f", "rawvideo", "-pix_fmt", "yuv420p", "-s", "640x360", "-r", "30", "-i", str(raw),
                    *settings, str(ref)], check=True)

    def packets(path: Path) -> list[str]:
        text = subprocess.run(["ffmpeg", "-v", "error", "-i", str(path), "-c", "copy", "-f", "framemd5", "-"],
                              check=True, capture_output=True, text=True).stdout
        return [",".join(line.split(",")[4:]).strip() for line in text.splitlines() if line and not line.startswith("#")]

    ours, theirs = packets(out), packets(ref)
    assert len(ours) == len(theirs) == 30
    assert ours == theirs, "the packets differ from ffmpeg's encode of the same pictures"


def test_video_first_then_audio(tmp_path: Path) -> None:
    frames, rate, per_frame = 300, 48000, 1920
    out = tmp_path / "late-audio.mp4"
    with mediakit.Writer(out, video=dict(codec="h264", width=32, height=32, fps=25, crf=35, threads=1, format="gray"),
                         audio=dict(codec="aac", sample_rate=rate, channels=1)) as w:
        for i in range(frames):
            w.write_video(np.full((32, 32), i % 256, dtype=np.uint8))
        w.write_audio(np.zeros((frames * per_frame, 1), dtype=np.float32))
    s = {x["codec_type"]: x for x in streams(out)}
    assert float(s["video"]["duration"]) == pytest.approx(frames / 25, abs=1e-3)
    assert float(s["audio"]["duration"]) == pytest.approx(frames * per_frame / rate, abs=1e-3)
    assert len(frame_times(out)) == frames


def test_audio_first_then_video(tmp_path: Path) -> None:
    """Audio far ahead of the first picture (more than the writer holds back): H.264 into MP4 does
    not need the first video packet to open the file, so it is written whole."""
    frames, rate, per_frame = 300, 48000, 1920
    out = tmp_path / "late-video.mp4"
    with mediakit.Writer(out, video=dict(codec="h264", width=32, height=32, fps=25, crf=35, threads=1, format="gray"),
                         audio=dict(codec="aac", sample_rate=rate, channels=1)) as w:
        w.write_audio(np.zeros((frames * per_frame, 1), dtype=np.float32))
        for i in range(frames):
            w.write_video(np.full((32, 32), i % 256, dtype=np.uint8))
    s = {x["codec_type"]: x for x in streams(out)}
    assert float(s["video"]["duration"]) == pytest.approx(frames / 25, abs=1e-3)
    assert float(s["audio"]["duration"]) == pytest.approx(frames * per_frame / rate, abs=1e-3)
    assert float(s["video"]["start_time"]) == 0.0
    assert len(frame_times(out)) == frames
