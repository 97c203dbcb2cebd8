"""A file cut short is decoded as far as it goes, as ffmpeg decodes it (issue 10, defect 5).

Oracle: ffmpeg 5.1 on the same cut file, with the decoder libraries of ORACLES.md —
`ffmpeg -v error [-c:a libopus|libvorbis] -i F -map 0:a:0 -f s16le -` (the same length,
|diff| <= 1 per sample: float-to-s16 rounding) and `ffmpeg -v error [-c:v libdav1d] -i F
-map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt nv12 -` (byte-identical). FFmpeg's
demuxers return the packet the cut goes through with the bytes there are (MP4, IVF; Ogg
drops the incomplete page) and its decoders decode or reject it; mk-decode must do the same,
exit 0, and print a warning naming the offset of the cut (exit 3 with --strict, the
outputs still written).

Inputs:
- shared: every file of ../shared/media in a container MediaKit reads whose end is cut off —
  Ogg: the file ends inside a page; IVF and MP4/MOV/M4A: `ffprobe -v warning -fflags
  +discardcorrupt -show_packets` reports "partial file" (a sample past the end) or "Packet
  corrupt" (a packet the end cuts short) — and whose only damage is the cut: ffmpeg with `-fflags +discardcorrupt` (the cut packet
  dropped) decodes it without a decoder error. (Files damaged elsewhere too are the subject of
  damage recovery, not of this check.)
- generated: H.264/AAC MP4 with the moov at the start cut inside mdat (three places),
  fragmented MP4 cut inside an mdat and inside the last moof, AV1 and VP9 IVF cut inside a frame
  and inside a frame header, Ogg Opus and Vorbis cut inside a page.
- a file cut inside its index (moov at the end, cut off; moov at the start, cut inside it)
  stays an error, as in ffmpeg: exit 1, a message naming the moov, no output.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import oracle_lib as lib
import truncation_lib as cut_lib
from truncation_lib import ffmpeg_decode_cmd, shared_cut_files, streams, top_level_boxes


def _shared_params() -> list:
    if not lib.SHARED_MEDIA.is_dir():
        return [pytest.param("<missing>", "audio", id="shared-media-missing")]
    return [pytest.param(n, k, id=f"{n}-{k}") for n, k in shared_cut_files()]


def check_like_ffmpeg(path: Path, kind: str, mk_decode: Path, tmp_path: Path, strict: bool = False) -> None:
    """mk-decode of one track of the cut file equals ffmpeg's, with a warning about the cut."""
    stream = streams(path).get(kind)
    assert stream is not None, f"{path.name}: ffprobe finds no {kind} stream"
    ref_cmd = ffmpeg_decode_cmd(path, stream)
    ref = lib.run(ref_cmd)
    lib.oracle_ok(ref, ref_cmd)
    out = tmp_path / ("out.pcm" if kind == "audio" else "out.nv12")
    cmd = [mk_decode, "-q", path, "--audio-out" if kind == "audio" else "--video-out", out]
    if strict:
        cmd.append("--strict")
    proc = lib.run(cmd)
    if strict:
        assert proc.returncode == 3, f"`{lib.shell_line(cmd)}` exited {proc.returncode}, --strict on a cut file must exit 3\n{lib.tail(proc.stderr)}"
    else:
        lib.check_ok(proc, cmd, who="mk-decode")
    err = proc.stderr.decode("utf-8", "replace")
    assert re.search(r"warning: .*truncated at offset \d+", err), \
        f"`{lib.shell_line(cmd)}` must warn that the file is cut short, naming the offset; stderr:\n{lib.tail(err)}"
    assert out.is_file(), f"`{lib.shell_line(cmd)}` wrote no {out.name}"
    ours = out.read_bytes()
    if kind == "audio":
        diff = lib.compare_pcm_s16(ours, ref.stdout, int(stream.get("channels") or 1))
    else:
        diff = lib.compare_bytes_exact(ours, ref.stdout, "NV12")
    assert diff is None, f"{path.name}: `{lib.shell_line(cmd)}` vs `{lib.shell_line(ref_cmd)}`:\n{diff}"


@pytest.mark.parametrize("name,kind", _shared_params())
def test_shared_cut_file_decodes_like_ffmpeg(name, kind, shared_media, mk_decode, tmp_path):
    check_like_ffmpeg(shared_media / name, kind, mk_decode, tmp_path)


def test_the_issue_files_are_in_the_shared_set(shared_media):
    """The two files of issue 10 (defect 5) are found by the rules above."""
    names = {n for n, _ in shared_cut_files()}
    for n in ("ogg_opus_stereo_truncated_10000b_no_eos.opus", "ogg_vorbis_large_cover_multipage_comment_no_eos.ogg"):
        assert n in names, f"{n} should be found as a file cut short whose only damage is the cut"


# --------------------------------------------------------------------------- generated

@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    folder = lib.shared_tmp(tmp_path_factory, "cut-sources")     # made once per run, not per worker
    made: dict[str, Path] = {}

    def make(file_name: str, folder: Path, name: str) -> Path:
        path = folder / file_name
        if not path.exists():
            cut_lib.make_source(name, path)
        return path

    def get(name: str) -> Path:
        if name not in made:
            made[name] = lib.generated_once(make)(name + cut_lib.source_suffix(name), folder, name)
        return made[name]
    return get


GENERATED = [
    ("mp4_faststart", "mdat-early", "audio"), ("mp4_faststart", "mdat-early", "video"),
    ("mp4_faststart", "mdat", "audio"), ("mp4_faststart", "mdat", "video"),
    ("mp4_faststart", "mdat-late", "audio"), ("mp4_faststart", "mdat-late", "video"),
    ("fmp4", "mdat", "audio"), ("fmp4", "mdat", "video"),
    ("fmp4", "moof", "audio"), ("fmp4", "moof", "video"),
    ("ivf_av1", "frame", "video"), ("ivf_av1", "frame-header", "video"),
    ("ivf_vp9", "frame", "video"), ("ivf_vp9", "frame-header", "video"),
    ("ogg_opus", "page", "audio"), ("ogg_vorbis", "page", "audio"),
]


@pytest.mark.parametrize("name,where,kind", GENERATED, ids=[f"{n}-{w}-{k}" for n, w, k in GENERATED])
def test_generated_cut_file_decodes_like_ffmpeg(name, where, kind, sources, mk_decode, tmp_path):
    src = sources(name)
    cut = cut_lib.cut_copy(src, name, where, tmp_path / f"cut{src.suffix}")
    check_like_ffmpeg(cut, kind, mk_decode, tmp_path)


def test_strict_exits_3_and_still_writes(sources, mk_decode, tmp_path):
    """--strict: the distinct exit status 3 for a cut file; the output is ffmpeg's all the same."""
    cut = cut_lib.cut_copy(sources("mp4_faststart"), "mp4_faststart", "mdat", tmp_path / "cut.mp4")
    check_like_ffmpeg(cut, "audio", mk_decode, tmp_path, strict=True)


@pytest.mark.parametrize("name,where", [("mp4_moov_at_end", "mdat"), ("mp4_faststart", "moov")])
def test_cut_inside_the_index_stays_an_error(name, where, sources, mk_decode, tmp_path):
    """No moov, or a moov cut short: ffmpeg cannot read the file either; mk-decode exits 1
    naming the moov and leaves no output."""
    src = sources(name)
    data = src.read_bytes()
    boxes = top_level_boxes(data)
    if where == "moov":
        _, o, s = next(b for b in boxes if b[0] == b"moov")
    else:
        _, o, s = next(b for b in boxes if b[0] == b"mdat")
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[:o + s // 2])
    ref = lib.run(["ffmpeg", "-v", "error", "-i", cut, "-f", "null", "-"])
    assert ref.returncode != 0, "the oracle: ffmpeg must fail on a file without its whole moov"
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, "-q", cut, "--audio-out", out]
    proc = lib.run(cmd)
    assert proc.returncode == 1, f"`{lib.shell_line(cmd)}` exited {proc.returncode}, expected 1\n{lib.tail(proc.stderr)}"
    assert b"moov" in proc.stderr, f"the error must name the moov box: {lib.tail(proc.stderr)}"
    assert not out.exists(), "no output is left after an error"
