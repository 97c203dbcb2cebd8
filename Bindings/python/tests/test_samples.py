"""The Python samples (Samples/python) run as a user runs them, their outputs checked against
ffmpeg / ffprobe (ORACLES.md), not only their exit status: decode.py's NV12 and PCM against
ffmpeg's decode, remux.py's file against ffmpeg's stream identity (framemd5 of -c copy),
ray_batch.py's probe, frame count and remuxed files against ffprobe and framemd5, dataset.py's
worker processes against one process (mux_h264.py is run by test_muxer.py)."""
from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mediakit

from bindings_lib import ffprobe_json, framemd5, run_sample, sample_env
from conftest import SAMPLES
from test_decode import reference_pcm


def payloads(lines: list[str]) -> list[tuple[str, ...]]:
    """(stream, size, payload MD5) of each packet line of a framemd5: what a remux into another
    container keeps (timestamps are retimed, side data such as Opus's trims moves to the edit list)."""
    return [(f[0], f[4].strip(), f[5].strip()) for f in (line.split(",") for line in lines if not line.startswith("#"))]


def test_decode_py_writes_ffmpegs_pictures_and_samples(sample: Path, tmp_path: Path) -> None:
    video, audio = tmp_path / "out.nv12", tmp_path / "out.pcm"
    run = run_sample("decode.py", sample, video, audio)
    stream = ffprobe_json(sample, "-show_streams", "-select_streams", "v:0")["streams"][0]
    a = ffprobe_json(sample, "-show_streams", "-select_streams", "a:0")["streams"][0]
    assert run.stdout.startswith(f"{stream['width']}x{stream['height']} NV12 -> {video}; "
                                 f"{a['sample_rate']} Hz {a['channels']} ch s16le -> {audio}")
    ref_video = subprocess.run(["ffmpeg", "-v", "error", "-i", str(sample), "-map", "0:v:0", "-fps_mode", "passthrough",
                                "-f", "rawvideo", "-pix_fmt", "nv12", "-"], check=True, capture_output=True).stdout
    assert video.read_bytes() == ref_video
    ours = np.frombuffer(audio.read_bytes(), dtype="<i2").astype(np.int32)
    ref = reference_pcm(sample, int(str(a["channels"])), int(str(a["sample_rate"])))
    assert ours.size == ref.size and int(np.abs(ours - ref).max(initial=0)) <= 1


@pytest.mark.parametrize("options", [[], ["--faststart"], ["--fragment", "1"]], ids=["progressive", "faststart", "fragmented"])
def test_remux_py_keeps_the_streams(options: list[str], shared_media: Path, tmp_path: Path) -> None:
    src, dst = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4", tmp_path / "out.mp4"
    run = run_sample("remux.py", src, dst, *options)
    assert framemd5(dst) == framemd5(src)
    streams = ffprobe_json(dst, "-show_streams")["streams"]
    assert run.stdout.strip() == f"{dst}: " + ", ".join(f"{s['codec_type']} {s['codec_name']}" for s in streams)
    packets = len(ffprobe_json(src, "-show_packets")["packets"])
    assert run.stderr.endswith(f"100 % ({packets}/{packets} packets)\n")
    if options == ["--faststart"]:
        data = dst.read_bytes()
        assert data.index(b"moov") < data.index(b"mdat")


def test_remux_py_copies_the_tracks_chosen(shared_media: Path, tmp_path: Path) -> None:
    """--tracks 1: only the source's stream 1 (its packets, framemd5 of -c copy), into Matroska."""
    src, dst = shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4", tmp_path / "video.mkv"
    run_sample("remux.py", src, dst, "--tracks", "1")
    streams = ffprobe_json(dst, "-show_streams")["streams"]
    assert [s["codec_name"] for s in streams] == [ffprobe_json(src, "-show_streams")["streams"][1]["codec_name"]]
    assert payloads(framemd5(dst)) == [("0",) + p[1:] for p in payloads(framemd5(src, "0:1"))]


def test_remux_py_reports_a_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"\x00\x00\x00\x18ftypisom" + bytes(range(256)) * 4)
    run = subprocess.run([sys.executable, str(SAMPLES / "remux.py"), str(bad), str(tmp_path / "o.mp4")],
                         capture_output=True, text=True, env=sample_env())
    assert run.returncode == 1 and run.stderr.startswith("remux: MK_E") and str(bad) in run.stderr
    assert not (tmp_path / "o.mp4").exists()


def test_ray_batch_py_probes_decodes_and_remuxes(shared_media: Path, tmp_path: Path) -> None:
    """ray_batch.py on a folder of three files (MP4 H.264 + AAC, WebM VP9, Ogg Opus) and one
    that is not media: the probe lines say ffprobe's duration, codecs and size, the frame count
    is ffprobe's count of the video frames, each readable file is remuxed to an MP4 holding the
    source's packets, and the bad file is reported without stopping the job."""
    pytest.importorskip("ray")
    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    names = ["mp4_h264_aac_moov_at_start_ctts_8s.mp4", "webm_vp9_192x144_2s.webm", "ogg_opus_stereo_tiny_155b.opus"]
    for name in names:
        shutil.copy(shared_media / name, folder / name)
    (folder / "not_media.mp4").write_bytes(bytes(range(256)) * 16)
    run = run_sample("ray_batch.py", folder, out, "--cpus", "2", timeout=600)
    lines = run.stdout.splitlines()

    frames = 0
    for name in names:
        path = folder / name
        probe = ffprobe_json(path, "-show_format", "-show_streams")
        fmt = probe["format"][0] if isinstance(probe["format"], list) else probe["format"]
        streams = probe["streams"]
        line = next(line for line in lines if line.startswith(f"probe  {path}: "))
        duration, codecs, size = re.fullmatch(r"probe  .*: ([\d.]+) s, (.*), (\d+x\d+)", line).groups()  # type: ignore[union-attr]
        assert abs(float(duration) - float(str(fmt["duration"]))) < 0.03, line
        assert codecs.split(",") == [str(s["codec_name"]) for s in streams], line
        video = [s for s in streams if s["codec_type"] == "video"]
        assert size == (f"{video[0]['width']}x{video[0]['height']}" if video else "0x0"), line
        if video:
            counted = ffprobe_json(path, "-select_streams", "v:0", "-count_frames", "-show_entries",
                                   "stream=nb_read_frames", "-show_streams")["streams"][0]
            frames += int(str(counted["nb_read_frames"]))
        remuxed = out / (path.stem + ".mp4")
        assert any(line.startswith("remux [") and f"{path} -> {remuxed}" in line for line in lines)
        if name.endswith(".mp4"):
            assert framemd5(remuxed) == framemd5(path)
        else:   # another container: the same packets (stream, size, payload hash), retimed for MP4
            assert payloads(framemd5(remuxed)) == payloads(framemd5(path))
    assert any(line.startswith(f"probe  {folder / 'not_media.mp4'}: ERROR ") for line in lines)
    assert any(f"{folder / 'not_media.mp4'} ERROR " in line for line in lines if line.startswith("remux ["))
    total = next(line for line in lines if line.startswith("frames: ") and " from " in line)
    assert total.startswith(f"frames: {frames} from 2 files"), total


def test_dataset_py_workers_give_the_single_process_clips(sample: Path, shared_media: Path) -> None:
    """dataset.py's clips, read by two worker processes, are the ones one process draws and
    decodes for the same items (the same input fed another way; the sampler's frames are checked
    against ffmpeg in test_samplers.py)."""
    files = [sample, shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4"]
    run = run_sample("dataset.py", "--workers", "2", "--clips", "2", "--frames", "3", "--size", "64x36", "--no-torch", *files)
    assert "4 clips by 2 worker processes" in run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 4
    for i, line in enumerate(lines):
        item, path, *_ = line.split(" ")
        with mediakit.VideoDecoder(path, format="float32", dimension_order="NCHW", width=64, height=36) as dec:
            clip = mediakit.samplers.clips_at_random_indices(dec, num_clips=1, num_frames_per_clip=3, seed=i)
        pts = ",".join(f"{float(t):.6f}" for t in clip.pts_seconds[0])
        assert line == f"{i} {files[i // 2]} (3, 3, 36, 64) {pts} {hashlib.md5(clip.data[0].tobytes()).hexdigest()}"
        assert int(item) == i and path == str(files[i // 2])


def test_batches_hand_over_by_dlpack_without_a_copy(sample: Path) -> None:
    """What VideoDecoder and AudioDecoder return goes to any DLPack consumer (torch.from_dlpack,
    jax, cupy ...) without a copy: numpy's own consumer shares the memory."""
    with mediakit.VideoDecoder(sample) as dec:
        pictures = dec.get_frames_at([0, 5]).data
    with mediakit.AudioDecoder(sample) as adec:
        samples = adec.get_samples_played_in_range(0.0, 0.5).data
    for array in (pictures, samples):
        view = np.from_dlpack(array)
        assert np.shares_memory(view, array) and view.shape == array.shape and view.dtype == array.dtype
