"""Sample-accurate seek (`mk-decode --seek T`, DecodeSession.seek(to:); issue 14 item 2).

Oracles:
  video  `ffmpeg -ss T -i IN -map 0:v:0 -frames:v 3 -fps_mode passthrough -f rawvideo
         -pix_fmt nv12 -`: our first three pictures from T are byte-identical to ffmpeg's
         (its accurate seek keeps the frames at or after T rounded to the stream time base).
         Times between a key frame's dts and its pts are not drawn: there ffmpeg's mov demuxer,
         which seeks by dts, starts at that key frame and misses the frames presented before
         it (we start at the key frame whose pts is at or before T).
  audio  the same input fed another way: our full gapless decode (itself checked against
         ffmpeg by test_decode / test_ogg_decode / test_audio_streams) cut at sample
         round(T * rate): `--seek T --duration 0.5` gives exactly those samples (|diff| <= 1),
         for AAC in MP4 and ADTS, MP3, Opus and Vorbis in Ogg, at times between packets.
"""
from __future__ import annotations

import random
from fractions import Fraction
from pathlib import Path

import pytest

import oracle_lib as lib

SAMPLE = lib.REPO / "Samples" / "media" / "sample.mp4"
VIDEO_SHARED = ["mp4_h264_b_pyramid_3b_800x640_4s.mp4", "mp4_hevc_hvc1_aac_ctts_elst.mp4",
                "mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mp4_av1_aac_1080x720_progressive_audio_empty_edit.mp4"]


def _dts_gaps(path: Path) -> list[tuple[float, float]]:
    """Where ffmpeg's -ss is not sample-accurate: its mov demuxer seeks by dts, so for a time
    between a key frame's dts and its pts it starts at that key frame and skips the frames
    presented before it. These (dts, pts) spans of the video key frames are not drawn."""
    info = lib.ffprobe_json(path)
    video = [s for s in info["streams"] if s["codec_type"] == "video"]
    if not video:
        return []
    tb = Fraction(video[0]["time_base"])
    proc = lib.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,dts,flags",
                    "-of", "csv=p=0", path])
    spans = []
    for line in proc.stdout.decode().split():
        pts, dts, flags = line.split(",")[:3]
        if "K" in flags and pts != "N/A" and dts != "N/A" and int(dts) < int(pts):
            spans.append((float(int(dts) * tb) - 0.001, float(int(pts) * tb) + 0.001))
    return spans


def _times(path: Path, n: int = 4) -> list[float]:
    duration = float(lib.ffprobe_json(path)["format"]["duration"])
    gaps = _dts_gaps(path)
    rng = random.Random(path.name)
    times: list[float] = []
    while len(times) < n:
        t = round(rng.uniform(0.2, max(0.3, duration - 0.6)), 4)
        if not any(a <= t <= b for a, b in gaps):
            times.append(t)
    return times


def _check_video(mk_bin: Path, path: Path, tmp: Path) -> None:
    for t in _times(path):
        out = tmp / "seek.nv12"
        cmd = [mk_bin / "mk-decode", path, "--video-out", out, "--seek", str(t), "--frames", "3", "-q"]
        lib.check_ok(lib.run(cmd), cmd)
        ref = lib.run(["ffmpeg", "-v", "error", "-ss", str(t), "-i", path, "-map", "0:v:0", "-frames:v", "3",
                       "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12", "-"])
        assert ref.returncode == 0, lib.tail(ref.stderr)
        assert ref.stdout, f"{path.name} at {t} s: ffmpeg wrote nothing"
        ours = out.read_bytes()
        assert len(ours) == len(ref.stdout), f"{path.name} at {t} s: {len(ours)} bytes, ffmpeg's {len(ref.stdout)}"
        assert ours == ref.stdout, f"{path.name} at {t} s: the pictures differ from ffmpeg -ss {t}'s"


def test_video_seek_bundled_sample(mk_bin, tmp_path):
    _check_video(mk_bin, SAMPLE, tmp_path)


@pytest.mark.parametrize("name", VIDEO_SHARED)
def test_video_seek_like_ffmpeg(name, mk_bin, shared_media, tmp_path):
    _check_video(mk_bin, shared_media / name, tmp_path)


AUDIO_GENERATED = {
    "opus.ogg": ["-ar", "48000", "-c:a", "libopus"],
    "vorbis.ogg": ["-ar", "44100", "-c:a", "libvorbis"],
    "lame.mp3": ["-ar", "44100", "-c:a", "libmp3lame"],
    "aac.aac": ["-ar", "44100", "-c:a", "aac", "-aac_pns", "0", "-f", "adts"],
    "aac.m4a": ["-ar", "48000", "-c:a", "aac", "-aac_pns", "0"],
}


@pytest.mark.parametrize("kind", sorted(AUDIO_GENERATED))
def test_audio_seek_is_the_full_decode_cut_at_the_sample(kind, mk_bin, tmp_path):
    src = tmp_path / f"src.{kind}"
    # Tones, not noise, and AAC without noise substitution (PNS): its decoder draws PNS noise
    # from a generator whose state runs from the start of the stream, so after any seek
    # (ffmpeg's too) those bands differ from a full decode's (measured: up to 2 here with PNS on, 0 off).
    proc = lib.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=6", "-f", "lavfi",
                    "-i", "sine=frequency=1234:duration=6", "-filter_complex", "[0:a][1:a]amerge=inputs=2[a]",
                    "-map", "[a]", *AUDIO_GENERATED[kind], src])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    stream = next(s for s in lib.ffprobe_json(src)["streams"] if s["codec_type"] == "audio")
    rate, channels = int(stream["sample_rate"]), int(stream["channels"])
    full = tmp_path / "full.pcm"
    cmd = [mk_bin / "mk-decode", src, "--audio-out", full, "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    everything = full.read_bytes()
    frame = 2 * channels
    for t in _times(src, 5):
        out = tmp_path / "seek.pcm"
        cmd = [mk_bin / "mk-decode", src, "--audio-out", out, "--seek", str(t), "--duration", "0.5", "-q"]
        lib.check_ok(lib.run(cmd), cmd)
        start = round(t * rate)
        ref = everything[start * frame:(start + round(0.5 * rate)) * frame]
        ours = out.read_bytes()
        assert len(ours) == len(ref), f"{kind} at {t} s: {len(ours) // frame} samples, the cut full decode has {len(ref) // frame}"
        diff = lib.compare_pcm_s16(ours, ref, channels)
        assert diff is None, f"{kind} at {t} s (sample {start}): {diff}"
