"""CAF through the Python catalogue calls (issue 30, item 4): ``mediakit.open`` of a path, bytes
and a file object that cannot seek, ``mediakit.remux`` and ``mediakit.Muxer`` writing ``.caf``.

Oracles: ffprobe's packets (pts, size, position) of the same file; ffprobe reading what we
wrote (codec, packet sizes and payload hashes equal to the source's); the packet table's
priming and remainder (the spec's CAFPacketTableHeader, read here) equal to the source M4A's
edit list (delay 1024, the signal's length), and ``Track.encoder_delay`` / ``encoder_padding``
read back from them.
"""
from __future__ import annotations

import io
import re
import struct
import subprocess
from pathlib import Path
from typing import Any

import mediakit


def _ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", *args], check=True)


def _ffprobe_packets(path: Path) -> list[tuple[int, int, int]]:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "packet=pts,size,pos", "-of", "csv=p=0", str(path)],
                         capture_output=True, check=True, text=True).stdout
    return [tuple(int(v) for v in line.split(",")) for line in out.split()]  # type: ignore[misc]


def _hashes(path: Path) -> list[str]:
    out = subprocess.run(["ffprobe", "-v", "error", "-show_data_hash", "md5", "-show_entries", "packet=data_hash", "-of", "csv=p=0",
                          str(path)], capture_output=True, check=True, text=True).stdout
    return re.findall(r"MD5:[0-9a-f]+", out)   # an M4A's first packet has a side-data column too


def _ours(demuxer: mediakit.Demuxer) -> list[tuple[int, int, int]]:
    return [(p.pts, p.size, p.position) for p in demuxer.packets()]


def _pakt(path: Path) -> tuple[int, int, int, int]:
    """mNumberPackets, mNumberValidFrames, mPrimingFrames, mRemainderFrames."""
    data = path.read_bytes()
    at = 8
    while at + 12 <= len(data):
        ctype, size = data[at:at + 4], struct.unpack(">q", data[at + 4:at + 12])[0]
        if ctype == b"pakt":
            packets, valid, priming, remainder = struct.unpack(">qqii", data[at + 12:at + 36])
            return packets, valid, priming, remainder
        at += 12 + size
    raise AssertionError("no pakt chunk")


class _Pipe(io.RawIOBase):
    """A binary file object that cannot seek, as a pipe or a socket."""

    def __init__(self, data: bytes):
        self._data, self._at = data, 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, b: Any) -> int:
        n = min(len(b), len(self._data) - self._at)
        b[:n] = self._data[self._at:self._at + n]
        self._at += n
        return n


def test_open_caf_from_a_path_bytes_and_a_pipe(tmp_path: Path) -> None:
    """An ALAC CAF (ffmpeg's: packet table after the audio) from a path and from bytes; a PCM
    CAF also from a file object that cannot seek. The packets are ffprobe's."""
    alac, pcm = tmp_path / "a.caf", tmp_path / "p.caf"
    for out, codec in ((alac, "alac"), (pcm, "pcm_s24le")):
        _ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=0.7:sample_rate=44100", "-ac", "2", "-c:a", codec, str(out))
    for path in (alac, pcm):
        want = _ffprobe_packets(path)
        with mediakit.open(path) as d:
            assert d.container == "caf" and _ours(d) == want
        with mediakit.open(path.read_bytes()) as d:
            assert _ours(d) == want
    with mediakit.open(io.BufferedReader(_Pipe(pcm.read_bytes()))) as d:
        assert _ours(d) == _ffprobe_packets(pcm)


def test_remux_and_muxer_write_caf_with_the_m4a_gapless_facts(tmp_path: Path) -> None:
    """M4A (AAC, ffmpeg's edit list from 1024) -> ``mediakit.remux`` -> CAF, and the same through
    ``mediakit.Muxer`` with the demuxer's track: ffprobe reads the source's packets; the packet
    table says priming 1024 and the 0.7 s signal; reading it back gives those as the track's
    encoder delay and padding."""
    src = tmp_path / "src.m4a"
    _ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=0.7:sample_rate=44100", "-ac", "2", "-c:a", "aac", str(src))
    by_remux, by_muxer = tmp_path / "remux.caf", tmp_path / "muxer.caf"
    mediakit.remux(src, by_remux)
    with mediakit.open(src) as d, mediakit.Muxer(by_muxer) as mux:
        t = mux.add_track(d.tracks[0])
        for p in d.packets():
            mux.write(t, p)
        mux.finish()
    valid = round(0.7 * 44100)
    for out in (by_remux, by_muxer):
        assert _hashes(out) == _hashes(src)
        packets, frames, priming, remainder = _pakt(out)
        assert (frames, priming) == (valid, 1024)
        assert packets * 1024 - priming - remainder == frames
        with mediakit.open(out) as d:
            track = d.tracks[0]
            assert (track.codec, track.encoder_delay, track.encoder_padding) == ("aac", 1024, remainder)
