"""PGS subtitles in M2TS (Blu-ray: stream type 0x90 in a program with an "HDMV" registration
descriptor; issue 33 item 4), read as FFmpeg reads them: codec `hdmv_pgs_subtitle`, one packet
per PES, every packet a key frame.

Input: the corpus has no M2TS (../shared/media and breadth/MANIFEST.tsv list none), so the PGS
track of breadth/mkv_androidx_230cec_sample_with_pgs_subtitles.mkv (with its H.264 and AC-3) is
copied into one by FFmpeg: `ffmpeg -map 0 -c copy -mpegts_m2ts_mode 1 OUT.m2ts` (192-byte
packets, the HDMV registration, stream type 0x90). FFmpeg 5.1's plain MPEG-TS (188-byte) output
carries PGS as private data (0x06) with no registration, which FFmpeg itself reads back as
`bin_data`; that file is checked to stay a data track here too.

Oracles (ORACLES.md):
- streams: `ffprobe -show_streams` codec name and type of every stream;
- packets: `mk-probe --packets` = `ffprobe -show_entries packet=...` (pts, dts, duration, size,
  position, key flag), track by track (FFmpeg's parsers hand some audio / video frames out later
  than the PES they come in, so the interleaving across tracks is ffprobe's own);
- bytes: `mk-remux IN.m2ts OUT.mkv` and `ffmpeg -i IN.m2ts -map 0:s -c copy OUT.mkv`: ffprobe's
  subtitle stream facts and packets with their data hashes, equal.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import oracle_lib as lib

MKV_PGS = "breadth/mkv_androidx_230cec_sample_with_pgs_subtitles.mkv"


def _ffmpeg(*args: object) -> None:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *args]
    lib.oracle_ok(lib.run(cmd), cmd)


@pytest.fixture(scope="module")
def m2ts(tmp_path_factory, shared_media: Path) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("pgsts")
    out = {"m2ts": d / "pgs.m2ts", "ts": d / "pgs.ts"}
    _ffmpeg("-i", shared_media / MKV_PGS, "-map", "0", "-c", "copy", "-mpegts_m2ts_mode", "1", out["m2ts"])
    _ffmpeg("-i", shared_media / MKV_PGS, "-map", "0", "-c", "copy", out["ts"])
    return out


def _ffprobe_streams(path: Path) -> list[tuple[str, str]]:
    return [(s.get("codec_type", ""), s.get("codec_name", "")) for s in lib.ffprobe_json(path)["streams"]]


@pytest.mark.parametrize("kind", ["m2ts", "ts"])
def test_streams_are_ffprobes(m2ts: dict[str, Path], mk_probe: Path, kind: str) -> None:
    path = m2ts[kind]
    cmd = [mk_probe, "--json", path]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    ours = [(t["type"], t["codec"]) for t in json.loads(proc.stdout)["tracks"]]
    theirs = _ffprobe_streams(path)
    expected_sub = ("subtitle", "hdmv_pgs_subtitle") if kind == "m2ts" else ("data", "bin_data")
    assert theirs[2] == expected_sub, theirs
    if kind == "m2ts":
        assert ours == theirs
    else:
        # FFmpeg's bin_data is a data stream of no codec: ours is a data track of an unknown codec.
        assert ours[:2] == theirs[:2] and ours[2][0] == "data", ours


def test_packets_are_ffprobes(m2ts: dict[str, Path], mk_probe: Path) -> None:
    path = m2ts["m2ts"]
    cmd = [mk_probe, "--packets", path]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    track = lambda line: int(line.split(",")[0])   # noqa: E731
    ours = sorted(proc.stdout.decode().splitlines(), key=track)
    ref = sorted(lib.ffprobe_packet_lines(path), key=track)
    assert sum(1 for line in ref if line.startswith("2,")) >= 2, "ffprobe lists no PGS packets"
    problem = lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    assert problem is None, problem


def _subtitle_facts(path: Path) -> list[str]:
    cmd = ["ffprobe", "-v", "error", "-select_streams", "s:0", "-show_data_hash", "md5", "-show_entries",
           "stream=codec_name,extradata_size:packet=pts,dts,duration,size,flags,data_hash", "-of", "compact", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout.decode().splitlines()


def test_remux_to_matroska_is_ffmpegs_copy(m2ts: dict[str, Path], mk_remux: Path, tmp_path: Path) -> None:
    ours, ref = tmp_path / "ours.mkv", tmp_path / "ref.mkv"
    cmd = [mk_remux, m2ts["m2ts"], ours]
    lib.check_ok(lib.run(cmd), cmd)
    _ffmpeg("-i", m2ts["m2ts"], "-map", "0", "-c", "copy", ref)
    theirs = _subtitle_facts(ref)
    assert sum(1 for line in theirs if line.startswith("packet")) >= 2
    assert _subtitle_facts(ours) == theirs
