"""Files with an ID3v2 tag in front, as taggers write them (issue 28, item 3).

FFmpeg skips a leading ID3v2 tag before probing and before every format's header, whatever
the format; MediaKit probed only its first 4096 bytes, so a tag longer than that (real FLAC
files carry 4 KB and 13 KB ones; cover art makes them longer) hid the format.

Inputs: files ffmpeg writes (FLAC, MP3, ADTS, WAV, Ogg Vorbis, Matroska Opus), each given a
mutagen `ID3()` tag with a 20 KB `APIC` frame (and one with two tags in a row, and one with a
tag shorter than the probe bytes).
Oracles: ffprobe's audio packets (`-select_streams a:0 -show_entries packet=pts,duration,size,pos`)
and ffmpeg's PCM (`ffmpeg -i FILE -map 0:a -f s16le -`): byte for byte for FLAC and WAV, within
1 LSB for the float decoders (MP3, AAC, Vorbis, Opus: the float-to-s16 rounding differs).

MP4 after a tag is left out: FFmpeg opens it but reads its chunk offsets as if the file began
at the tag, so its packets point into the tag and decode to noise; there is no oracle to match.
"""
from __future__ import annotations

import json
import os
import subprocess
from fractions import Fraction

import pytest

import oracle_lib as lib

# extension -> ffmpeg encoder options
FORMATS = {"flac": ["-c:a", "flac"], "mp3": ["-c:a", "libmp3lame"], "aac": ["-c:a", "aac"],
           "wav": ["-c:a", "pcm_s16le"], "ogg": ["-c:a", "libvorbis"], "mka": ["-c:a", "libopus"]}


def _encode(tmp_path, ext: str):
    path = tmp_path / f"plain.{ext}"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=440:beep_factor=3:duration=1.3",
           "-ac", "2", *FORMATS[ext], path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path.read_bytes()


def _tag(picture_bytes: int) -> bytes:
    import mutagen.id3
    tag = mutagen.id3.ID3()
    tag.add(mutagen.id3.TIT2(encoding=3, text="in front"))
    if picture_bytes:
        tag.add(mutagen.id3.APIC(encoding=3, mime="image/jpeg", type=3, desc="cover", data=os.urandom(picture_bytes)))
    import io
    out = io.BytesIO()
    tag.save(out, padding=lambda info: 0)
    return out.getvalue()


def _lines(cmd: list) -> list[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return [l for l in proc.stdout.decode().splitlines() if l.strip()]


def _time_base(text: str) -> Fraction:
    num, den = text.split("/")
    return Fraction(int(num), int(den))


def _compare(path, mk_probe, mk_decode, tmp_path):
    # Packets as (pts, duration) in seconds, size, pos: ffprobe counts in the stream's time base
    # (1/14112000 for MP3), MediaKit in the track's.
    ref_tb = _time_base(_lines(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=time_base",
                                "-of", "csv=p=0", path])[0])
    ref = [tuple(Fraction(int(v)) * ref_tb for v in l.split(",")[:2]) + tuple(int(v) for v in l.split(",")[2:4])
           for l in _lines(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries",
                            "packet=pts,duration,size,pos", "-of", "csv=p=0", path])]
    our_tb = _time_base(json.loads(subprocess.run([str(mk_probe), "--json", str(path)], capture_output=True,
                                                  check=True).stdout)["tracks"][0]["time_base"])
    # mk-probe: track,pts,dts,duration,size,offset,flags
    ours = [(Fraction(int(f[1])) * our_tb, Fraction(int(f[3])) * our_tb, int(f[4]), int(f[5]))
            for f in (l.split(",") for l in _lines([mk_probe, "--packets", path]))]
    assert ours and ours == ref, lib.diff_lines([str(r) for r in ours], [str(r) for r in ref], "mk-probe", "ffprobe")
    out = tmp_path / "out.pcm"
    lib.check_ok(lib.run([mk_decode, path, "--audio-out", out, "--sample-format", "s16", "-q"]), [mk_decode, path])
    # Opus and Vorbis: ffmpeg with the libraries MediaKit's plugins use (as test_matroska.py does).
    decoder = {".mka": ["-c:a", "libopus"], ".ogg": ["-c:a", "libvorbis"]}.get(path.suffix, [])
    want = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", *decoder, "-i", str(path), "-map", "0:a", "-f", "s16le", "-"],
                          capture_output=True, check=True).stdout
    got = out.read_bytes()
    if path.suffix in (".flac", ".wav"):   # integer decoders: byte for byte
        assert len(got) == len(want) and got == want, f"{len(got)} bytes decoded, ffmpeg {len(want)}"
    else:   # float decoders: ffmpeg's float-to-s16 conversion and ours may round 1 LSB apart
        problem = lib.compare_pcm_s16(got, want, 2, tolerance=1)
        assert problem is None, problem


@pytest.mark.parametrize("ext", list(FORMATS))
def test_long_id3v2_tag_in_front(ext, mk_probe, mk_decode, tmp_path):
    """A 20 KB tag (five times the probe bytes) in front of each format FFmpeg reads after one."""
    tag = _tag(20000)
    assert len(tag) > 20000
    path = tmp_path / f"tagged.{ext}"
    path.write_bytes(tag + _encode(tmp_path, ext))
    _compare(path, mk_probe, mk_decode, tmp_path)


@pytest.mark.parametrize("ext", ["flac", "mp3"])
def test_two_id3v2_tags_in_front(ext, mk_probe, mk_decode, tmp_path):
    """Two tags in a row, the first 13 KB, the second short: FFmpeg's probing looks past the
    first only (a WAV behind two is not recognised), then, for FLAC and MP3, opens the file by
    its extension, and skips both before the header."""
    path = tmp_path / f"two.{ext}"
    path.write_bytes(_tag(13000) + _tag(0) + _encode(tmp_path, ext))
    _compare(path, mk_probe, mk_decode, tmp_path)


def test_flac_tagged_by_mutagen(mk_probe, mk_decode, tmp_path):
    """mutagen's own ID3() saved onto a FLAC file (what taggers do), with a 20 KB picture."""
    import mutagen.id3
    path = tmp_path / "mutagen.flac"
    path.write_bytes(_encode(tmp_path, "flac"))
    tag = mutagen.id3.ID3()
    tag.add(mutagen.id3.APIC(encoding=3, mime="image/png", type=3, desc="front", data=os.urandom(20000)))
    tag.save(str(path))
    assert path.read_bytes()[:3] == b"ID3" and path.read_bytes().find(b"fLaC") > 20000
    _compare(path, mk_probe, mk_decode, tmp_path)
