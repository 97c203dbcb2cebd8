"""Text subtitles (issue 33 item 4): SubRip and WebVTT files as containers, cues through the text
decoder, `mk-decode --subtitles-out`.

Oracles (ORACLES.md):
- cues: `ffmpeg -i IN -map 0:s:N -f srt -` / `-f webvtt -` (FFmpeg's decoders bring every text
  codec to ASS, its srt / webvtt encoders render that), byte for byte, for the subtitle tracks of
  the real files (breadth .vtt, Matroska SubRip) and of inputs ffmpeg writes (SubRip with tags,
  CRLF, a BOM, counters in the text, an X1..Y2 box; WebVTT with identifiers, settings, entities
  and voice tags; ASS with styles in Matroska; mov_text in MP4 with style boxes);
- the WebVTT track FFmpeg 5.1 cannot name (Matroska S_TEXT/WEBVTT): mkvextract's .vtt of the
  track, read by ffmpeg;
- packets of .srt / .vtt files: `ffprobe -show_entries packet=...`, line for line; the
  breadth folder's .vtt opens with the native reader (format.demuxer), not the fallback.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

BREADTH_VTT = "breadth/vtt_shaka-proj_034a2c_chapters.vtt"
MKV_SRT = "breadth/mkv_androidx_9d9030_full_blocks.mkv"
MKV_VTT = "breadth/mkv_androidx_9892c3_sample_with_vtt_subtitles.mkv"
MKV_PGS = "breadth/mkv_androidx_230cec_sample_with_pgs_subtitles.mkv"
MP4_608 = "fmp4_h264_c608_cbcs_decrypted.mp4"

SRT = (
    "\ufeff1\r\n00:00:01,000 --> 00:00:02,500\r\nHello <b>world</b> &amp; <i>all</i>\r\n\r\n"
    "2\n00:00:03,000 --> 00:00:04,000 X1:100 X2:300 Y1:50 Y2:90\nLine one\n\nLine two after a blank\n\n"
    "3\n00:00:05,250 --> 00:00:06,000\n{\\an8}Top <font color=\"#ff8000\" size=\"20\">orange</font> text\n42\n\n"
    "4\n00:00:06,500 --> 00:00:07,000\n<u>under</u> <s>struck</s> <unknown>tag</unknown> << guillemets >>\n\n"
    "this line has no timing 00:00:08,000 -> 00:00:09,000\n\n"
    "5\n00:00:09,000 --> 00:00:10,000\n   leading blanks   \n"
)

VTT = (
    # No STYLE or REGION block: FFmpeg 5.1 takes one for a cue with a broken timing line and
    # stops (FFmpeg 6 skips them, as we do; SwiftTests WebVTTParserTests checks that).
    "WEBVTT - a title\n\nNOTE a comment\nover two lines\n\n"
    "intro\n00:00.500 --> 00:02.000 align:start line:0\n<v Bob>Hello</v> <c.red>there</c> &lt;3 &amp; {braces}\n\n"
    "00:02.500 --> 00:03.000\n<b>bold</b> <i>it</i> <u>u</u>\nsecond line&nbsp;x\n\n"
    "01:00:00.000 --> 01:00:01.500 position:10%\nan hour in\n"
)

ASS = """[Script Info]
ScriptType: v4.00+
PlayResX: 384
PlayResY: 288

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: Default,Arial,16,&Hffffff,&Hffffff,&H0,&H0,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,0
Style: Big,Times,24,&H0000ff,&Hffffff,&H0,&H0,-1,0,0,0,100,100,0,0,1,1,0,8,10,10,10,0

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,Plain {\\i1}italic{\\i0} and {\\b1}bold
Dialogue: 0,0:00:03.00,0:00:04.00,Big,,0,0,0,,Styled, with comma\\Nsecond {\\c&H00FF00&}green{\\r} back
Dialogue: 1,0:00:03.50,0:00:05.00,Default,Bob,0,0,0,,{\\an7\\fs30}Top left {\\fnCourier}mono {\\u1}under{\\s1}struck
"""


def _ffmpeg(*args: object) -> None:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *args]
    lib.oracle_ok(lib.run(cmd), cmd)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """The generated inputs: each written by hand or by ffmpeg (never by us)."""
    d = tmp_path_factory.mktemp("subs")
    (d / "in.srt").write_bytes(SRT.encode())
    (d / "in.vtt").write_text(VTT)
    (d / "in.ass").write_text(ASS)
    out = {"srt": d / "in.srt", "vtt": d / "in.vtt"}
    _ffmpeg("-i", d / "in.ass", "-c:s", "copy", d / "ass.mkv")
    _ffmpeg("-i", d / "in.srt", "-c:s", "copy", d / "srt.mkv")
    _ffmpeg("-i", d / "in.ass", "-c:s", "mov_text", d / "ass_mov_text.mp4")
    _ffmpeg("-i", d / "in.srt", "-c:s", "mov_text", d / "srt_mov_text.mp4")
    for name in ("ass.mkv", "srt.mkv", "ass_mov_text.mp4", "srt_mov_text.mp4"):
        out[name] = d / name
    return out


def _ffmpeg_text(path: Path, fmt: str, index: int = 0) -> bytes:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", f"0:s:{index}", "-f", fmt, "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout


def _ours(mk_decode: Path, path: Path, out: Path, index: int = 0) -> bytes:
    cmd = [mk_decode, "-q", path, "--subtitles-out", out, "--subtitle-track", str(index)]
    lib.check_ok(lib.run(cmd), cmd)
    return out.read_bytes()


def _check_both_formats(mk_decode: Path, path: Path, tmp_path: Path) -> None:
    for fmt, ext in (("srt", "srt"), ("webvtt", "vtt")):
        ref = _ffmpeg_text(path, fmt)
        assert ref, f"ffmpeg wrote no {fmt} cues for {path.name}"
        ours = _ours(mk_decode, path, tmp_path / f"ours.{ext}")
        assert ours.decode() == ref.decode(), f"{path.name} as {fmt}"


@pytest.mark.parametrize("name", ["srt", "vtt", "ass.mkv", "srt.mkv", "ass_mov_text.mp4", "srt_mov_text.mp4"])
def test_generated_cues_are_ffmpegs(inputs: dict[str, Path], mk_decode: Path, tmp_path: Path, name: str) -> None:
    _check_both_formats(mk_decode, inputs[name], tmp_path)


@pytest.mark.parametrize("name", [BREADTH_VTT, MKV_SRT])
def test_real_file_cues_are_ffmpegs(shared_media: Path, mk_decode: Path, tmp_path: Path, name: str) -> None:
    _check_both_formats(mk_decode, shared_media / name, tmp_path)


def test_matroska_webvtt_cues_are_mkvextracts(shared_media: Path, mk_decode: Path, tmp_path: Path) -> None:
    """FFmpeg 5.1 cannot name Matroska's S_TEXT/WEBVTT: mkvextract's .vtt of the track, read by
    ffmpeg, is the reference."""
    extracted = tmp_path / "track.vtt"
    cmd = ["mkvextract", shared_media / MKV_VTT, "tracks", f"2:{extracted}"]
    lib.oracle_ok(lib.run(cmd), cmd)
    for fmt, ext in (("srt", "srt"), ("webvtt", "vtt")):
        assert _ours(mk_decode, shared_media / MKV_VTT, tmp_path / f"ours.{ext}") == _ffmpeg_text(extracted, fmt)


def _ffprobe_packets(path: Path) -> list[str]:
    return lib.ffprobe_packet_lines(path)


def _probe(mk_probe: Path, path: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [mk_probe, *args, path]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    return proc


def test_text_files_open_natively_with_ffprobes_packets(inputs: dict[str, Path], shared_media: Path, mk_probe: Path) -> None:
    for path, demuxer, codec in ((inputs["srt"], "srt", "subrip"), (inputs["vtt"], "webvtt", "webvtt"),
                                 (shared_media / BREADTH_VTT, "webvtt", "webvtt")):
        info = json.loads(_probe(mk_probe, path, "--json").stdout)
        assert info["format"]["demuxer"] == demuxer and not info["format"].get("demuxer_plugin"), info["format"]
        assert [t["codec"] for t in info["tracks"]] == [codec]
        assert _probe(mk_probe, path, "--packets").stdout.decode().splitlines() == _ffprobe_packets(path), path.name


def test_damaged_text_files(tmp_path: Path, mk_probe: Path, mk_decode: Path) -> None:
    """A WebVTT cue with a broken timing line ends the cues (FFmpeg stops there too), with a
    warning; a SubRip file cut inside a cue gives the cues up to the cut; a NUL byte ends the
    text as in FFmpeg; all as ffprobe and ffmpeg read them."""
    vtt = tmp_path / "broken.vtt"
    vtt.write_text("WEBVTT\n\n00:01.000 --> 00:02.000\nfine\n\n00:0x.000 --> 00:04.000\nbroken\n\n00:05.000 --> 00:06.000\nafter\n")
    cut = tmp_path / "cut.srt"
    cut.write_bytes(SRT.encode()[:300])
    nul = tmp_path / "nul.srt"
    nul.write_bytes(b"1\n00:00:01,000 --> 00:00:02,000\nbefore\n\n2\n00:00:03,000 --> 00:00:04,000\nhalf\x00way\n\n"
                    b"3\n00:00:05,000 --> 00:00:06,000\nafter\n")
    for path in (vtt, cut, nul):
        proc = lib.run([mk_probe, "--packets", path])
        assert proc.returncode == 0, lib.tail(proc.stderr)
        assert proc.stdout.decode().splitlines() == _ffprobe_packets(path), path.name
        assert _ours(mk_decode, path, tmp_path / "o.srt") == _ffmpeg_text(path, "srt"), path.name
    assert b"the cues end here" in lib.run([mk_probe, "--packets", vtt]).stderr


@pytest.mark.parametrize("name,codec", [(MKV_PGS, "hdmv_pgs_subtitle"), (MP4_608, "eia_608")])
def test_bitmap_and_caption_tracks_are_refused(shared_media: Path, mk_decode: Path, tmp_path: Path, name: str, codec: str) -> None:
    out = tmp_path / "o.srt"
    proc = lib.run([mk_decode, "-q", shared_media / name, "--subtitles-out", out])
    assert proc.returncode == 1 and codec.encode() in proc.stderr and b"can be copied" in proc.stderr, lib.tail(proc.stderr)
    assert not out.exists()
