"""3GP files (ISO BMFF with 3GPP sample entries: `samr` AMR-NB, `sawb` AMR-WB, `s263` H.263)
of ../shared/media/breadth through MP4Demuxer and the FFmpeg plugin.

Oracles (ORACLES.md):
- packets: `ffprobe -ignore_editlist 1 -show_entries packet=...` (lib.expected_packets), every
  field equal;
- video: `ffmpeg -i FILE -map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt yuv420p`,
  byte for byte with `mk-decode --pixel-format i420`;
- audio: `ffmpeg -i FILE -map 0:a:0 -f s16le`, byte for byte with `mk-decode --trim ffmpeg`:
  FFmpeg 5.1 keeps the whole last AMR frame (160 or 320 samples) where the sample table gives
  it a shorter duration (the androidx AMR-NB file's last sample lasts 50), and mk-decode's
  `--trim ffmpeg` is that rule (its default, gapless, ends where the file says).
"""
from __future__ import annotations

import pytest

import oracle_lib as lib

BREADTH = lib.SHARED_MEDIA / "breadth"
NAMES = sorted(p.name for p in BREADTH.glob("3gp_*.3gp")) if BREADTH.is_dir() else []
PARAMS = [lib.file_param(f"shared:breadth/{n}", n) for n in NAMES] or [pytest.param("shared:breadth/<missing>", id="shared-media-missing")]


def _file(param: str, tmp_path):
    return lib.media_param_file(param, tmp_path, None)


@pytest.mark.parametrize("param", PARAMS)
def test_packets_like_ffprobe(param, mk_probe, tmp_path):
    path = _file(param, tmp_path)
    proc = lib.run([mk_probe, "--packets", path])
    lib.check_ok(proc, [mk_probe, "--packets", path])
    ours = [l for l in proc.stdout.decode().splitlines() if l.strip()]
    ref = lib.expected_packets(path)
    assert ref, "ffprobe lists packets"
    assert ours == ref, lib.diff_lines(ours, ref, "mk-probe", "ffprobe")


@pytest.mark.parametrize("param", PARAMS)
def test_decode_like_ffmpeg(param, mk_decode, tmp_path):
    lib.check_decode_like_ffmpeg(_file(param, tmp_path), mk_decode, tmp_path)
