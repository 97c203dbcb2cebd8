"""mk-remux of a 3-frame MP3 whose LAME delay + padding exceed its samples (issue 28, item 1).

A LAME encode of a very short sound: MPEG-2 Layer III, 3 frames x 576 samples at 24 kHz,
LAME delay 576 and padding 1452 (576 + 1452 > 1728). mk-remux trapped (SIGILL) writing the
MP4: the gapless edit list had a negative duration and MovieWriter converted it with UInt32().
FFmpeg's libmp3lame wrapper writes the exact padding (672 here), so the test makes the file
with ffmpeg and then sets the tag's padding to 1452, as LAME itself writes it.

Oracles (ORACLES.md):
  readable        ffprobe -v error -show_streams OUT exits 0 with the one audio stream
  MP4 (4 layouts) ffmpeg's decode of OUT equals ffmpeg's decode of FFmpeg's own remux of the
                  source into the same layout (`ffmpeg -c copy`, `-movflags frag_keyframe+empty_moov`
                  for fragments): FFmpeg's rule for a tag it cannot honour, the edit from the
                  delay to the end of the media
  Matroska        the packets (ffmpeg -c copy -f framemd5) equal the source's; the decode is not
                  compared: FFmpeg stores the MP3 end padding as DiscardPadding, MediaKit's
                  Matroska muxer does not (reported, not this item)
  WebM, Ogg       refused with exit status 1 and a message naming mp3 (neither carries MP3)
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

SAMPLES_PER_FRAME = 576
DELAY, PADDING = 576, 1452


@pytest.fixture(scope="module")
def mk_remux(mk_bin: Path) -> Path:
    path = mk_bin / "mk-remux"
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.fail(f"mk-remux not found in {mk_bin}; run `make build` or set MK_BIN", pytrace=False)
    return path


@pytest.fixture(scope="module")
def short_mp3(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("short_mp3")
    path = folder / "short.mp3"
    lib.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=0.02:sample_rate=24000",
             "-c:a", "libmp3lame", "-q:a", "9", str(path)]).check_returncode()
    data = bytearray(path.read_bytes())
    # The LAME tag follows the Xing/Info fields its flags announce (frames, bytes, TOC, quality).
    xing = max(data.find(b"Xing"), data.find(b"Info"))
    assert xing > 0, "no Xing/Info frame in the ffmpeg encode"
    flags = int.from_bytes(data[xing + 4:xing + 8], "big")
    at = xing + 8 + 4 * (flags & 1) + 4 * (flags >> 1 & 1) + 100 * (flags >> 2 & 1) + 4 * (flags >> 3 & 1)
    assert data[at:at + 4] in (b"Lavc", b"LAME"), "no LAME tag after the Info fields"
    pair = DELAY << 12 | PADDING
    data[at + 21:at + 24] = pair.to_bytes(3, "big")
    path.write_bytes(bytes(data))
    # The file the issue describes: 3 frames of 576 samples, delay + padding beyond them.
    # (ffprobe lists the 3 packets and then exits 1: the last frame, 48 bytes, is where the
    # file ends, and it cannot seek to the next.)
    frames = [line for line in subprocess.run(
        ["ffprobe", "-v", "quiet", "-show_entries", "packet=size", "-of", "compact", str(path)],
        capture_output=True, text=True).stdout.split("\n") if line.startswith("packet|")]
    assert len(frames) == 3
    tag = data[at + 21:at + 24]
    delay, padding = tag[0] << 4 | tag[1] >> 4, (tag[1] & 0xF) << 8 | tag[2]
    assert delay + padding > len(frames) * SAMPLES_PER_FRAME
    return path


def _pcm_md5(path: Path) -> str:
    proc = lib.run(["ffmpeg", "-v", "error", "-i", str(path), "-f", "s16le", "-"])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return hashlib.md5(proc.stdout).hexdigest()


def _readable(path: Path) -> None:
    proc = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name", "-of", "csv=p=0", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert proc.stdout.split() == ["mp3,audio"], proc.stdout


LAYOUTS = {
    "progressive": ([], []),
    "faststart": (["--faststart"], ["-movflags", "faststart"]),
    "fragment": (["--fragment", "1"], ["-movflags", "frag_keyframe+empty_moov"]),
    "hybrid": (["--hybrid", "1"], []),   # a progressive file when done
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_short_mp3_to_mp4_decodes_as_ffmpeg_remux(mk_remux: Path, short_mp3: Path, tmp_path: Path, layout: str) -> None:
    ours, theirs = tmp_path / "ours.mp4", tmp_path / "ffmpeg.mp4"
    flags, ffmpeg_flags = LAYOUTS[layout]
    proc = lib.run([str(mk_remux), str(short_mp3), str(ours), *flags])
    assert proc.returncode == 0, f"mk-remux exit {proc.returncode}: {lib.tail(proc.stderr)}"
    _readable(ours)
    lib.run(["ffmpeg", "-v", "error", "-y", "-i", str(short_mp3), "-c", "copy", *ffmpeg_flags, str(theirs)]).check_returncode()
    assert _pcm_md5(ours) == _pcm_md5(theirs)
    # MPEG-2 audio (24 kHz): Object Type 0x69 (ISO 13818-3) in the esds, as FFmpeg writes it.
    assert _esds_object_type(ours) == _esds_object_type(theirs) == 0x69


def _esds_object_type(path: Path) -> int:
    """The objectTypeIndication of the first esds's DecoderConfigDescriptor."""
    data = path.read_bytes()
    at = data.find(b"esds")
    assert at > 0, f"{path.name}: no esds"
    i = at + 8                                   # box type, version and flags

    def descriptor(i: int, tag: int) -> int:     # offset of the body of descriptor `tag` at i
        assert data[i] == tag, f"{path.name}: descriptor {data[i]:#x} where {tag:#x} was expected"
        i += 1
        while data[i] & 0x80:
            i += 1
        return i + 1
    i = descriptor(i, 3) + 3                     # ES_ID, flags (no dependsOn / URL / OCR in either writer)
    return data[descriptor(i, 4)]


def test_short_mp3_to_matroska_keeps_the_packets(mk_remux: Path, short_mp3: Path, tmp_path: Path) -> None:
    ours = tmp_path / "ours.mkv"
    proc = lib.run([str(mk_remux), str(short_mp3), str(ours)])
    assert proc.returncode == 0, f"mk-remux exit {proc.returncode}: {lib.tail(proc.stderr)}"
    _readable(ours)

    def packets(path: Path) -> list[str]:
        out = lib.run(["ffmpeg", "-v", "error", "-i", str(path), "-map", "0", "-c", "copy", "-f", "framemd5", "-"])
        assert out.returncode == 0, lib.tail(out.stderr)
        # Size and hash of each packet (side data, after them, aside).
        return [",".join(f.strip() for f in line.split(",")[4:6]) for line in out.stdout.decode().splitlines() if line and not line.startswith("#")]

    assert packets(ours) == packets(short_mp3)


@pytest.mark.parametrize("extension", ["webm", "ogg"])
def test_short_mp3_to_formats_without_mp3_is_refused(mk_remux: Path, short_mp3: Path, tmp_path: Path, extension: str) -> None:
    out = tmp_path / f"ours.{extension}"
    proc = lib.run([str(mk_remux), str(short_mp3), str(out)])
    assert proc.returncode == 1, f"exit {proc.returncode}: {lib.tail(proc.stderr)}"
    assert "mp3" in proc.stderr.decode(), proc.stderr
    assert not out.exists()
