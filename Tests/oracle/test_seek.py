"""Sample-accurate seek (`mk-decode --seek T`, DecodeSession.seek(to:); issue 14 item 2) and
frame-accurate access (`mk-decode --at T1,T2,...` / `--at-frame N1,N2,...`,
DecodeSession.frames(at:from:) / frames(atIndices:from:)).

The issue's check: 20 random times (seeded by the file's name) in the 1080p file (H.264 with
B-frames, as the bench input, shorter), in an AAC track, in Opus and Vorbis Ogg files and in
AV1 IVF files (a generated one and the corpus's): the first frame after the seek is ffmpeg's.

Oracles:
  video  `ffmpeg -ss T -i IN -map 0:v:0 -frames:v N -fps_mode passthrough -f rawvideo
         -pix_fmt nv12 -`: our first N pictures from T are byte-identical to ffmpeg's
         (its accurate seek keeps the frames at or after T rounded to the stream time base).
         The batch (--at, the times in a shuffled order, one process) gives the same pictures
         as ffmpeg's -ss T -frames:v 1 for each, in the order asked; --at-frame gives the
         pictures ffmpeg's `select=eq(n,N)` filter picks (n counts the frames ffmpeg's decode
         outputs, after the edit list), in the order asked.
         Times between a key frame's dts and its pts are not drawn: there ffmpeg's mov demuxer,
         which seeks by dts, starts at that key frame and misses the frames presented before
         it (we start at the key frame whose pts is at or before T).
  audio  the same input fed another way: our full gapless decode (itself checked against
         ffmpeg by test_decode / test_ogg_decode / test_audio_streams) cut at sample
         T * rate rounded half away from zero (as ffmpeg's trim rounds): `--seek T --duration
         0.5` gives exactly those samples (|diff| <= 1), at 20 random times per file, for AAC
         in MP4 and ADTS, MP3, Opus and Vorbis in Ogg, at times between packets. (ffmpeg's own
         -ss is not that oracle: on ADTS it does not land on the sample, measured up to 2149
         off its full decode at 2.125 s.)
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


def _ffmpeg_at(path: Path, t: float, frames: int) -> bytes:
    ref = lib.run(["ffmpeg", "-v", "error", "-ss", str(t), "-i", path, "-map", "0:v:0", "-frames:v", str(frames),
                   "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12", "-"])
    assert ref.returncode == 0, lib.tail(ref.stderr)
    assert ref.stdout, f"{path.name} at {t} s: ffmpeg wrote nothing"
    return ref.stdout


def _check_video(mk_bin: Path, path: Path, tmp: Path, n: int = 4, frames: int = 3) -> list[tuple[float, bytes]]:
    """Seeks to n times one by one; returns (time, ffmpeg's first picture) for each."""
    firsts = []
    for t in _times(path, n):
        out = tmp / "seek.nv12"
        cmd = [mk_bin / "mk-decode", path, "--video-out", out, "--seek", str(t), "--frames", str(frames), "-q"]
        lib.check_ok(lib.run(cmd), cmd)
        ref = _ffmpeg_at(path, t, frames)
        ours = out.read_bytes()
        assert len(ours) == len(ref), f"{path.name} at {t} s: {len(ours)} bytes, ffmpeg's {len(ref)}"
        assert ours == ref, f"{path.name} at {t} s: the pictures differ from ffmpeg -ss {t}'s"
        firsts.append((t, ref[:len(ref) // frames]))
    return firsts


def _check_batch(mk_bin: Path, path: Path, tmp: Path, firsts: list[tuple[float, bytes]]) -> None:
    """`--at` with the times of `firsts` shuffled: ffmpeg's picture at each, in that order."""
    asked = list(firsts)
    random.Random(path.name + "batch").shuffle(asked)
    asked.append(asked[0])   # a time asked twice gives its picture twice
    out = tmp / "at.nv12"
    cmd = [mk_bin / "mk-decode", path, "--video-out", out, "--at", ",".join(str(t) for t, _ in asked), "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    ours = out.read_bytes()
    size = len(asked[0][1])
    assert len(ours) == size * len(asked), f"{path.name}: {len(ours) // size} pictures for {len(asked)} times"
    for i, (t, ref) in enumerate(asked):
        assert ours[i * size:(i + 1) * size] == ref, f"{path.name}: --at picture {i} (at {t} s) differs from ffmpeg -ss {t}'s"


def _check_indices(mk_bin: Path, path: Path, tmp: Path, n: int = 20) -> None:
    """`--at-frame` with n random indices (some repeated, unsorted) against ffmpeg's select."""
    count = len(lib.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts",
                         "-of", "csv=p=0", path]).stdout.split())
    assert count > 0
    rng = random.Random(path.name + "index")
    indices = [rng.randrange(count) for _ in range(n)] + [0, count - 1]
    picked = sorted(set(indices))
    expr = "+".join(f"eq(n\\,{i})" for i in picked)
    ref = lib.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-vf", f"select={expr}", "-fps_mode", "passthrough",
                   "-f", "rawvideo", "-pix_fmt", "nv12", "-"])
    assert ref.returncode == 0, lib.tail(ref.stderr)
    size = len(ref.stdout) // len(picked)
    assert size * len(picked) == len(ref.stdout) and size > 0, f"{path.name}: ffmpeg selected an unexpected amount"
    by_index = {i: ref.stdout[k * size:(k + 1) * size] for k, i in enumerate(picked)}
    out = tmp / "index.nv12"
    cmd = [mk_bin / "mk-decode", path, "--video-out", out, "--at-frame", ",".join(map(str, indices)), "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    ours = out.read_bytes()
    assert len(ours) == size * len(indices), f"{path.name}: {len(ours) // size} pictures for {len(indices)} indices"
    for k, i in enumerate(indices):
        assert ours[k * size:(k + 1) * size] == by_index[i], f"{path.name}: --at-frame picture {k} (frame {i}) differs from ffmpeg's select"
    bad = lib.run([mk_bin / "mk-decode", path, "--video-out", out, "--at-frame", str(count), "-q"])
    assert bad.returncode == 1 and f"the track presents {count} frames" in bad.stderr.decode(), lib.tail(bad.stderr)


def test_video_seek_bundled_sample(mk_bin, tmp_path):
    _check_video(mk_bin, SAMPLE, tmp_path)


@pytest.mark.parametrize("name", VIDEO_SHARED)
def test_video_seek_like_ffmpeg(name, mk_bin, shared_media, tmp_path):
    _check_batch(mk_bin, shared_media / name, tmp_path, _check_video(mk_bin, shared_media / name, tmp_path))


@pytest.mark.parametrize("name", ["mp4_h264_b_pyramid_3b_800x640_4s.mp4", "mp4_hevc_hvc1_aac_ctts_elst.mp4",
                                  "mp4_h264_aac_elst_media_time_offsets_moov_first.mp4", "webm_vp9_1080x1080_3s.webm",
                                  "ivf_av1_320x180_1s.ivf"])
def test_frames_by_index_like_ffmpeg_select(name, mk_bin, shared_media, tmp_path):
    _check_indices(mk_bin, shared_media / name, tmp_path)


def test_each_frame_asked_alone_in_an_open_gop_file(mk_bin, shared_media, tmp_path):
    """`--at-frame I` alone (one run per frame) for every frame of a file whose non-IDR I frames
    are key frames opening GOPs with leading pictures (pictures after them in decoding order,
    presented before them, that refer to the GOP before): each is ffmpeg's frame I. A lone
    request starts at the key frame before it and must step back one more GOP where that key
    frame has leading pictures (a batch of every index decodes through and never showed it).

    Oracle: `ffmpeg -i FILE -map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt nv12 -`, every
    frame, cut into pictures (the frame n that select=eq(n,I) gives)."""
    path = shared_media / "mp4_h264_bframes_iibbibb_elst_offset.mp4"
    ref = lib.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                   "-f", "rawvideo", "-pix_fmt", "nv12", "-"])
    assert ref.returncode == 0, lib.tail(ref.stderr)
    stream = lib.track_streams(lib.ffprobe_json(path, ignore_editlist=False))[0]
    size = lib.yuv420_frame_size(int(stream["width"]), int(stream["height"]))
    count = len(ref.stdout) // size
    assert count > 1 and count * size == len(ref.stdout), f"ffmpeg gave {len(ref.stdout)} bytes"
    out = tmp_path / "one.nv12"
    wrong = []
    for i in range(count):
        cmd = [mk_bin / "mk-decode", path, "--video-out", out, "--at-frame", str(i), "-q"]
        proc = lib.run(cmd)
        if proc.returncode != 0:
            wrong.append(f"frame {i}: exit {proc.returncode}: {lib.tail(proc.stderr, 300)}")
        elif out.read_bytes() != ref.stdout[i * size:(i + 1) * size]:
            wrong.append(f"frame {i}: differs from ffmpeg's ({out.stat().st_size} bytes)")
    assert not wrong, f"{path.name}, each frame asked alone:\n  " + "\n  ".join(wrong)


# The inputs, made here: the 1080p file as the bench's (scripts/bench_lib.sh
# h264_bench_input: testsrc2, x264 veryfast with 3 B-frames, AAC), 6 s with a key frame every
# second (the bench's 60 s file has one every 250 frames: 20 seeks there decode minutes; each seek
# here decodes half a second on average, ours and ffmpeg's), and AV1
# in IVF (SVT-AV1, a key frame every second).
GENERATED_VIDEO = {
    "h264_1080p_bf3.mp4": ["-f", "lavfi", "-i", "testsrc2=size=1920x1080:rate=30", "-f", "lavfi",
                           "-i", "sine=frequency=440:sample_rate=48000", "-t", "6", "-c:v", "libx264", "-preset", "veryfast",
                           "-bf", "3", "-g", "30", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "128k"],
    "av1.ivf": ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "4", "-c:v", "libsvtav1", "-g", "25",
                "-pix_fmt", "yuv420p"],
}


@pytest.fixture(scope="module")
def generated_video(tmp_path_factory):
    folder = tmp_path_factory.mktemp("seek-media")
    made = {}

    def make(name: str) -> Path:
        if name not in made:
            out = folder / name
            proc = lib.run(["ffmpeg", "-v", "error", "-y", *GENERATED_VIDEO[name], out])
            assert proc.returncode == 0, lib.tail(proc.stderr)
            made[name] = out
        return made[name]
    return make


@pytest.mark.parametrize("name", sorted(GENERATED_VIDEO))
def test_twenty_random_seeks_first_frame_is_ffmpegs(name, mk_bin, generated_video, tmp_path):
    path = generated_video(name)
    _check_batch(mk_bin, path, tmp_path, _check_video(mk_bin, path, tmp_path, n=20, frames=1))


def test_twenty_random_seeks_in_the_corpus_av1_ivf(mk_bin, shared_media, tmp_path):
    path = shared_media / "ivf_av1_320x180_1s.ivf"
    _check_batch(mk_bin, path, tmp_path, _check_video(mk_bin, path, tmp_path, n=20, frames=1))


def test_frames_by_index_in_the_1080p_file(mk_bin, generated_video, tmp_path):
    _check_indices(mk_bin, generated_video("h264_1080p_bf3.mp4"), tmp_path)


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
    for t in _times(src, 20):
        out = tmp_path / "seek.pcm"
        cmd = [mk_bin / "mk-decode", src, "--audio-out", out, "--seek", str(t), "--duration", "0.5", "-q"]
        lib.check_ok(lib.run(cmd), cmd)
        # The sample ffmpeg's trim starts at: T rounded to the nearest sample, halves away from
        # zero (av_rescale_q's AV_ROUND_NEAR_INF), not Python's round-half-to-even.
        start = int(Fraction(str(t)) * rate + Fraction(1, 2))
        ref = everything[start * frame:(start + round(0.5 * rate)) * frame]
        ours = out.read_bytes()
        assert len(ours) == len(ref), f"{kind} at {t} s: {len(ours) // frame} samples, the cut full decode has {len(ref) // frame}"
        diff = lib.compare_pcm_s16(ours, ref, channels)
        assert diff is None, f"{kind} at {t} s (sample {start}): {diff}"
