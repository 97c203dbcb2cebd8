"""Issue 36 item 4: "outputs play in ffplay". mk-transcode's video outputs played by ffplay
(FFmpeg 5.1's player) headless, to the end.

Input: 1 s of testsrc2 (320x240, 25 fps) with a 440 Hz tone, re-encoded by mk-transcode into
  - MP4: H.264 (libx264) with B-frames (ffprobe finds B pictures; the edit list cuts the delay)
    and AAC,
  - WebM: VP9 (libvpx-vp9) and Opus.

Oracle: `ffplay -autoexit -loglevel error -i OUT` with SDL's dummy video and audio drivers
(SDL_VIDEODRIVER=dummy SDL_AUDIODRIVER=dummy) exits 0 with no error line, and takes at least
about the media's length (it played in real time rather than giving up). Not `-nodisp`: with it
ffplay refuses a video-only file ("Failed to open file ... or configure filtergraph", and still
exits 0); the dummy video driver makes it decode and "show" every picture of any file.
ffplay exits 0 even for a file it cannot open, so the check is the error lines: a control copy
of the MP4 with damaged picture data must make ffplay print errors (the check can fail).
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

import oracle_lib as lib

SECONDS = 1.0


@pytest.fixture(scope="module")
def ffplay() -> str:
    path = shutil.which("ffplay")
    if path is None:
        pytest.fail("ffplay is missing: scripts/deps.sh installs it (Debian's ffmpeg package)", pytrace=False)
    return path


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("play") / "src.mp4"
    cmd = ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25", "-f", "lavfi",
           "-i", "sine=f=440:sample_rate=48000", "-t", str(SECONDS), "-c:v", "libx264", "-c:a", "aac", "-shortest", out]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


def play(ffplay: str, path: Path) -> tuple[int, list[str], float]:
    """(exit status, error lines, seconds taken) of ffplay playing PATH headless."""
    env = dict(os.environ, SDL_VIDEODRIVER="dummy", SDL_AUDIODRIVER="dummy")
    start = time.monotonic()
    proc = lib.run([ffplay, "-autoexit", "-loglevel", "error", "-i", path], env=env, timeout=60)
    took = time.monotonic() - start
    text = (proc.stdout + proc.stderr).decode(errors="replace")
    return proc.returncode, [line for line in text.splitlines() if line.strip()], took


# (output, mk-transcode's options, the codecs ffprobe must find)
OUTPUTS = {
    "mp4_h264_bframes_aac": ("out.mp4", ["--video-codec", "libx264", "--bframes", "3", "--crf", "28", "--preset", "veryfast"],
                             {"h264", "aac"}),
    "webm_vp9_opus": ("out.webm", ["--video-codec", "vp9", "--crf", "40", "--threads", "1"], {"vp9", "opus"}),
}


@pytest.mark.parametrize("case", list(OUTPUTS))
def test_our_encoded_output_plays_in_ffplay(case, ffplay, source, mk_transcode, tmp_path):
    name, options, codecs = OUTPUTS[case]
    out = tmp_path / name
    cmd = [mk_transcode, source, out, "--quiet", *options]
    lib.check_ok(lib.run(cmd), cmd)
    probe = lib.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name:frame=pict_type", "-of", "csv=p=0", out])
    lib.oracle_ok(probe, ["ffprobe", out])
    fields = probe.stdout.decode().split()
    assert codecs <= set(fields), f"{name}: ffprobe finds {sorted(set(fields) - {'B', 'I', 'P'})}, not {sorted(codecs)}"
    if "bframes" in case:
        assert "B" in fields, f"no B picture in {name}: {fields[:40]}"
    status, errors, took = play(ffplay, out)
    assert status == 0 and not errors, f"ffplay {name}: exit {status}\n" + "\n".join(errors[:20])
    assert took >= 0.7 * SECONDS, f"ffplay ended after {took:.2f} s on {SECONDS} s of media: it did not play it"


def test_ffplay_check_sees_damaged_pictures(ffplay, source, mk_transcode, tmp_path):
    """The control: the same check on an MP4 whose picture data is overwritten fails."""
    out = tmp_path / "video.mp4"
    cmd = [mk_transcode, source, out, "--quiet", "--no-audio", *OUTPUTS["mp4_h264_bframes_aac"][1]]
    lib.check_ok(lib.run(cmd), cmd)
    data = bytearray(out.read_bytes())
    mdat = data.find(b"mdat")
    assert mdat > 0, "no mdat box"
    for k in range(mdat + 2000, min(mdat + 2600, len(data))):
        data[k] = 0x55
    damaged = tmp_path / "damaged.mp4"
    damaged.write_bytes(bytes(data))
    _, errors, _ = play(ffplay, damaged)
    assert errors, "ffplay printed no error for damaged pictures: the check above could not fail"
