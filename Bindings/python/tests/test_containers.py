"""Ogg and IVF through the Python API, with no special case: the same open/Decoder calls.
Oracles: ffprobe's packet count, and ffmpeg's decode with the same libraries
(`-c:a libopus` / `-c:v libdav1d`), as ORACLES.md says."""
import subprocess

import numpy as np
import pytest

import mediakit


def ffprobe_packet_count(path):
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "packet=stream_index", "-of", "csv=p=0", str(path)],
                         check=True, capture_output=True, text=True).stdout
    return len([l for l in out.splitlines() if l.strip()])


def decode_all(path, media_type, layout):
    with mediakit.open(path) as d:
        track = next(t for t in d.tracks if t.media_type == media_type)
        with mediakit.Decoder(track) as dec:
            frames = [f.to_numpy(layout) for p in d.packets(track) for f in dec.decode(p)]
            frames += [f.to_numpy(layout) for f in dec.flush()]
    return frames


@pytest.mark.parametrize("name", ["ogg_opus_stereo_tiny_155b.opus", "ogg_vorbis_48k_stereo_bear.ogg", "ivf_av1_320x180_1s.ivf"])
def test_packets_like_ffprobe(name, shared_media):
    path = shared_media / name
    with mediakit.open(path) as d:
        assert sum(1 for _ in d) == ffprobe_packet_count(path)


def test_ogg_opus_decodes_like_ffmpeg_libopus(shared_media):
    path = shared_media / "ogg_opus_stereo_tiny_155b.opus"
    ours = np.concatenate(decode_all(path, "audio", "s16")).astype(np.int32).ravel()
    ref = np.frombuffer(subprocess.run(["ffmpeg", "-v", "error", "-c:a", "libopus", "-i", str(path), "-f", "s16le", "-"],
                                       check=True, capture_output=True).stdout, "<i2").astype(np.int32)
    assert ours.size == ref.size and int(np.abs(ours - ref).max()) <= 1


def test_ivf_av1_decodes_like_ffmpeg_libdav1d(shared_media):
    path = shared_media / "ivf_av1_320x180_1s.ivf"
    ours = b"".join(f.tobytes() for f in decode_all(path, "video", "i420"))
    ref = subprocess.run(["ffmpeg", "-v", "error", "-c:v", "libdav1d", "-i", str(path), "-fps_mode", "passthrough",
                          "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"], check=True, capture_output=True).stdout
    assert ours == ref
