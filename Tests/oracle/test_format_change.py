"""Format changes mid-stream (issue 14 item 4): the session re-creates the decoder from a chained
Ogg link's own headers (Packet.newParameters) and the frames say their new format; a new H.264
SPS with another size is taken by the decoder itself; writers that cannot change format
mid-file (raw PCM / WAV, raw video / Y4M) say so and leave no output.

Inputs are made here: two streams of different formats, one after the other (`cat` of two Ogg
files: a chained stream; two Annex B H.264 streams of different sizes, one after the other, put
in MP4 and Matroska with `ffmpeg -c copy`).

Oracles (ORACLES.md: ffmpeg, and the same input fed another way):
  - Vorbis 44.1 kHz mono then 48 kHz stereo, Opus mono then stereo: with `--sample-rate 48000
    --channels 2` (one output format) the output is the first link's decode converted the same
    way (`mk-decode` of the first file alone, with the same options) followed by ffmpeg's decode
    of the second file alone (|diff| <= 1, as test_ogg_decode allows), sample for sample: the
    second link is decoded from its own headers. (ffmpeg's own decode of the chained file is no
    oracle here: it resamples the second link to the first's format, and for Opus keeps the first
    link's channel count: its ffprobe -show_frames gives mono frames throughout.)
  - without a conversion, `mk-decode` exits 1 naming both formats, and writes no output file;
  - H.264: the pictures before the change are ffmpeg's (`-frames:v 50`), those after it are
    ffmpeg's with `-autoscale 0` (its decoder's own size, not scaled to the first) from the same
    seek, and the raw / Y4M writers refuse the whole stream naming both sizes.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import oracle_lib as lib


def _ffmpeg(*args) -> None:
    proc = lib.run(["ffmpeg", "-v", "error", "-y", *map(str, args)])
    assert proc.returncode == 0, lib.tail(proc.stderr)


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("format-change")
    _ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=2:sample_rate=44100", "-c:a", "libvorbis", d / "v1.ogg")
    # The stereo links have a different tone per channel: decoded as mono they would not pass.
    stereo = ["-filter_complex", "[0:a][1:a]amerge=inputs=2[a]", "-map", "[a]"]
    _ffmpeg("-f", "lavfi", "-i", "sine=frequency=880:duration=1.5:sample_rate=48000",
            "-f", "lavfi", "-i", "sine=frequency=1320:duration=1.5:sample_rate=48000", *stereo, "-c:a", "libvorbis", d / "v2.ogg")
    _ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=1.3:sample_rate=48000", "-c:a", "libopus", d / "o1.opus")
    _ffmpeg("-f", "lavfi", "-i", "sine=frequency=660:duration=1.7:sample_rate=48000",
            "-f", "lavfi", "-i", "sine=frequency=990:duration=1.7:sample_rate=48000", *stereo, "-c:a", "libopus", d / "o2.opus")
    (d / "vorbis_chained.ogg").write_bytes((d / "v1.ogg").read_bytes() + (d / "v2.ogg").read_bytes())
    (d / "opus_chained.opus").write_bytes((d / "o1.opus").read_bytes() + (d / "o2.opus").read_bytes())
    _ffmpeg("-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-t", "2", "-c:v", "libx264", "-bf", "0", "-g", "25",
            "-pix_fmt", "yuv420p", "-f", "h264", d / "a.h264")
    _ffmpeg("-f", "lavfi", "-i", "testsrc=size=176x144:rate=25", "-t", "2", "-c:v", "libx264", "-bf", "0", "-g", "25",
            "-pix_fmt", "yuv420p", "-f", "h264", d / "b.h264")
    (d / "ab.h264").write_bytes((d / "a.h264").read_bytes() + (d / "b.h264").read_bytes())
    for ext in ("mp4", "mkv"):
        _ffmpeg("-fflags", "+genpts", "-r", "25", "-i", d / "ab.h264", "-c", "copy", d / f"sps_change.{ext}")
    return d


@pytest.mark.parametrize("name,first,second", [("vorbis_chained.ogg", "v1.ogg", "v2.ogg"),
                                               ("opus_chained.opus", "o1.opus", "o2.opus")])
def test_chained_link_is_decoded_from_its_own_headers(name, first, second, mk_decode, media, tmp_path):
    out, part = tmp_path / "chained.pcm", tmp_path / "first.pcm"
    convert = ["--sample-rate", "48000", "--channels", "2", "-q"]
    for src, dst in ((media / name, out), (media / first, part)):
        cmd = [mk_decode, src, "--audio-out", dst, *convert]
        lib.check_ok(lib.run(cmd), cmd)
    ref = lib.run(["ffmpeg", "-v", "error", "-i", media / second, "-f", "s16le", "-"])
    assert ref.returncode == 0 and ref.stdout, lib.tail(ref.stderr)
    ours, head = out.read_bytes(), part.read_bytes()
    assert len(ours) == len(head) + len(ref.stdout), \
        f"{len(ours) // 4} samples; the first link alone gives {len(head) // 4}, ffmpeg's second {len(ref.stdout) // 4}"
    assert ours[:len(head)] == head, "the first link differs from its decode alone"
    diff = lib.compare_pcm_s16(ours[len(head):], ref.stdout, 2)
    assert diff is None, f"the second link differs from ffmpeg's decode of {second} alone: {diff}"


@pytest.mark.parametrize("name,was,now", [("vorbis_chained.ogg", "44100 Hz 1 ch", "48000 Hz 2 ch"),
                                          ("opus_chained.opus", "48000 Hz 1 ch", "48000 Hz 2 ch")])
@pytest.mark.parametrize("wav", [False, True])
def test_pcm_writers_refuse_a_format_change_by_name(name, was, now, wav, mk_decode, media, tmp_path):
    out = tmp_path / ("out.wav" if wav else "out.pcm")
    proc = lib.run([mk_decode, media / name, "--audio-out", out, "-q"] + (["--wav"] if wav else []))
    err = proc.stderr.decode()
    assert proc.returncode == 1, f"exit {proc.returncode}: {lib.tail(err)}"
    assert f"the audio changed from {was} to {now} mid-stream" in err, lib.tail(err)
    assert not out.exists(), "a refused decode left its output"


def _video(path: Path, *args) -> bytes:
    proc = lib.run(["ffmpeg", "-v", "error", *args[:-1], "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                    *args[-1], "-f", "rawvideo", "-pix_fmt", "nv12", "-"])
    assert proc.returncode == 0 and proc.stdout, lib.tail(proc.stderr)
    return proc.stdout


@pytest.mark.parametrize("ext", ["mp4", "mkv"])
def test_h264_new_sps_frames_say_their_size(ext, mk_decode, media, tmp_path):
    path, out = media / f"sps_change.{ext}", tmp_path / "v.nv12"
    cmd = [mk_decode, path, "--video-out", out, "--frames", "50"]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    assert "50 frames 320x240" in proc.stdout.decode(), proc.stdout.decode()
    assert out.read_bytes() == _video(path, ["-frames:v", "50"])
    cmd = [mk_decode, path, "--video-out", out, "--seek", "2.4", "--frames", "10"]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    assert "10 frames 176x144" in proc.stdout.decode(), proc.stdout.decode()
    assert out.read_bytes() == _video(path, "-ss", "2.4", ["-autoscale", "0", "-frames:v", "10"])
    for y4m in (False, True):
        target = tmp_path / ("all.y4m" if y4m else "all.nv12")
        proc = lib.run([mk_decode, path, "--video-out", target, "-q"] + (["--y4m"] if y4m else []))
        err = proc.stderr.decode()
        assert proc.returncode == 1 and "the picture size changed from 320x240 to 176x144 mid-stream" in err, lib.tail(err)
        assert not target.exists()
