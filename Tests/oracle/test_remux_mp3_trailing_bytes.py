"""mk-remux into MP3 of a stream whose last packet is shorter than a frame header.

FFmpeg's MP3 parser makes a packet of a file's trailing bytes (here one byte appended to a real
MP3 of ../shared/media), and `ffmpeg -c copy` keeps it in the Matroska file it writes. MP3Writer
refused it ("not an MPEG audio Layer III frame"), so the remux of that MKA back into MP3 failed
at its last packet. FFmpeg's mp3 muxer writes a packet of fewer than 4 bytes as it is, without
counting it in the Info frame.

Oracle: `ffmpeg -i MKA -c copy ref.mp3`: the packets of our MP3 (ffmpeg -c copy -f framemd5: size
and MD5 of each, timestamps aside: the Info frames differ) are those of ffmpeg's, the one-byte
packet last; ffprobe reads ours without an error.
"""

from __future__ import annotations

from pathlib import Path

import oracle_lib as lib

SOURCE = "mp3_mpeg25_11k_stereo_vbr_xing_9s.mp3"


def _packets(path: Path) -> list[tuple[str, str]]:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    rows = [line.split(",") for line in proc.stdout.decode().splitlines() if line and not line.startswith("#")]
    return [(r[4].strip(), r[5].strip()) for r in rows]


def test_a_packet_shorter_than_a_header_is_written_as_ffmpeg_writes_it(shared_media, mk_remux, tmp_path):
    src = tmp_path / "src.mp3"
    src.write_bytes((shared_media / SOURCE).read_bytes() + b"X")
    mka, ours, ref = tmp_path / "in.mka", tmp_path / "ours.mp3", tmp_path / "ref.mp3"
    for cmd in (["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0:a", "-c", "copy", mka],
                ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", mka, "-c", "copy", ref]):
        lib.oracle_ok(lib.run(cmd), cmd)
    expected = _packets(ref)
    assert expected[-1][0] == "1", f"test input: the MKA's last packet is {expected[-1][0]} bytes, not the trailing byte"
    cmd = [mk_remux, "--quiet", mka, ours]
    lib.check_ok(lib.run(cmd), cmd)
    assert _packets(ours) == expected
    probe = lib.run(["ffprobe", "-v", "error", "-show_streams", ours])
    assert probe.returncode == 0 and not probe.stderr.strip(), lib.tail(probe.stderr)
