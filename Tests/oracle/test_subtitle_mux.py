"""Text subtitles written by remux (issue 33 item 4, the write side): subtitle tracks copied into
Matroska / WebM, converted into MP4 as 3GPP timed text (tx3g), written as .srt / .vtt files.

Oracles (ORACLES.md): ffmpeg run on the same input, the subtitle stream compared packet for packet
with `ffprobe -show_entries packet=pts_time,duration_time,size -show_data_hash md5` (times in
seconds: our MP4 track keeps the source's time scale, ffmpeg's encoder uses 1/1000000):
- .mkv: `ffmpeg -map 0:s:0 -c copy` for the codecs Matroska carries (SubRip, ASS, WebVTT), `-c:s srt`
  for 3GPP timed text (MediaKit converts it to SubRip: Matroska holds its content as S_TEXT/UTF8);
- .webm: `-c copy` for WebVTT, `-c:s webvtt` for the others (WebM carries WebVTT only);
- .mp4: `-c:s mov_text` (or `-c copy` from an MP4's tx3g), empty samples for the gaps included;
- .srt / .vtt: `ffmpeg -map 0:s:0 OUT.srt` (its default, the srt / webvtt encoder), byte for byte.
Inputs: SubRip, WebVTT and ASS files written here, made into Matroska and MP4 by ffmpeg, and the
subtitle tracks of ../shared/media/breadth (MANIFEST.tsv: a Matroska SubRip track, a .vtt file, a
Matroska S_TEXT/WEBVTT track, which FFmpeg 5.1 cannot read: mkvextract's .vtt of it is fed to
ffmpeg for the reference).
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

MKV_SRT = "breadth/mkv_androidx_9d9030_full_blocks.mkv"
MKV_VTT = "breadth/mkv_androidx_9892c3_sample_with_vtt_subtitles.mkv"
MKV_PGS = "breadth/mkv_androidx_230cec_sample_with_pgs_subtitles.mkv"
BREADTH_VTT = "breadth/vtt_shaka-proj_034a2c_chapters.vtt"

SRT = (
    "1\r\n00:00:01,000 --> 00:00:02,500\r\nHello <b>world</b> &amp; <i>all</i>\r\n\r\n"
    "2\n00:00:03,000 --> 00:00:04,000 X1:100 X2:300 Y1:50 Y2:90\nLine one\nLine two\n\n"
    "3\n00:00:05,250 --> 00:00:06,000\n{\\an8}Top <font color=\"#ff8000\" size=\"20\">orange</font> text\n\n"
    "4\n00:00:06,000 --> 00:00:07,000\n<u>under</u> <s>struck</s> <unknown>tag</unknown> caf\u00e9 \u00fcber\n\n"
    "5\n00:00:09,000 --> 00:00:10,000\n   leading blanks   \n"
)

VTT = (
    "WEBVTT\n\nNOTE a comment\n\n"
    "intro\n00:00.500 --> 00:02.000 align:start line:0\n<v Bob>Hello</v> <c.red>there</c> &lt;3 &amp; {braces}\n\n"
    "00:02.500 --> 00:03.000\n<b>bold</b> <i>it</i> <u>u</u>\nsecond line&nbsp;x\n\n"
    "00:04.000 --> 00:05.500 position:10%\nlast\n"
)

ASS = """[Script Info]
ScriptType: v4.00+
PlayResX: 384
PlayResY: 288

[V4+ Styles]
Format: Name, Fontname, Fontsize, PrimaryColour, SecondaryColour, OutlineColour, BackColour, Bold, Italic, Underline, StrikeOut, ScaleX, ScaleY, Spacing, Angle, BorderStyle, Outline, Shadow, Alignment, MarginL, MarginR, MarginV, Encoding
Style: Default,Arial,16,&Hffffff,&Hffffff,&H0,&H80000000,0,0,0,0,100,100,0,0,1,1,0,2,10,10,10,0
Style: Big,Times,24,&H0000ff,&Hffffff,&H0,&H0,-1,0,0,0,100,100,0,0,1,1,0,8,10,10,10,0

[Events]
Format: Layer, Start, End, Style, Name, MarginL, MarginR, MarginV, Effect, Text
Dialogue: 0,0:00:01.00,0:00:02.00,Default,,0,0,0,,Plain {\\i1}italic{\\i0} and {\\b1}bold
Dialogue: 0,0:00:03.00,0:00:04.00,Big,,0,0,0,,Styled, with comma\\Nsecond {\\1c&H00FF00&}green{\\r} back
Dialogue: 1,0:00:03.50,0:00:05.00,Default,Bob,0,0,0,,{\\an7\\fs30}Top left {\\fnTimes}mono {\\u1}under{\\s1}struck {\\1a&H80&}half{\\2c&HFF0000&}hl
"""


def _ffmpeg(*args: object) -> None:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *args]
    lib.oracle_ok(lib.run(cmd), cmd)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, Path]:
    """The generated inputs: written by hand or by ffmpeg (never by us)."""
    d = tmp_path_factory.mktemp("submux")
    (d / "in.srt").write_bytes(SRT.encode())
    (d / "in.vtt").write_text(VTT)
    (d / "in.ass").write_text(ASS)
    out = {"in.srt": d / "in.srt", "in.vtt": d / "in.vtt"}
    for src, name, codec in (("in.srt", "srt.mkv", "copy"), ("in.ass", "ass.mkv", "copy"), ("in.vtt", "vtt.mkv", "copy"),
                             ("in.srt", "srt.mp4", "mov_text"), ("in.ass", "ass.mp4", "mov_text")):
        _ffmpeg("-i", d / src, "-c:s", codec, d / name)
        out[name] = d / name
    return out


def _subtitle_index(path: Path) -> int:
    """The track index of the first subtitle stream, as ffprobe numbers the streams."""
    cmd = ["ffprobe", "-v", "error", "-show_entries", "stream=index,codec_type", "-of", "json", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return next(s["index"] for s in json.loads(proc.stdout)["streams"] if s["codec_type"] == "subtitle")


def _codec(path: Path) -> str:
    cmd = ["ffprobe", "-v", "error", "-select_streams", "s:0", "-show_entries", "stream=codec_name", "-of", "csv=p=0", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout.decode().strip()


def _packets(path: Path) -> list[str]:
    cmd = ["ffprobe", "-v", "error", "-select_streams", "s:0", "-show_entries", "packet=pts_time,duration_time,size",
           "-show_data_hash", "md5", "-of", "compact", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout.decode().splitlines()


def _reference(src: Path, source_codec: str, out: Path) -> None:
    """ffmpeg's output for `src`'s first subtitle track in the format of `out`."""
    ext = out.suffix
    if ext == ".mkv":
        codec = "srt" if source_codec == "mov_text" else "copy"
    elif ext == ".webm":
        codec = "copy" if source_codec == "webvtt" else "webvtt"
    elif ext == ".mp4":
        codec = "copy" if source_codec == "mov_text" else "mov_text"
    else:
        codec = "srt" if ext == ".srt" else "webvtt"
    _ffmpeg("-i", src, "-map", "0:s:0", "-c:s", codec, out)


def _ours(mk_remux: Path, src: Path, out: Path, track: int | None) -> None:
    cmd = [mk_remux, src, out] + (["--track", str(track)] if track is not None else [])
    lib.check_ok(lib.run(cmd), cmd)


def _check(mk_remux: Path, src: Path, tmp_path: Path, ext: str, *, reference_input: Path | None = None,
           source_codec: str | None = None) -> None:
    ref_in = reference_input or src
    codec = source_codec or _codec(ref_in)
    ours, ref = tmp_path / f"ours{ext}", tmp_path / f"ref{ext}"
    _reference(ref_in, codec, ref)
    _ours(mk_remux, src, ours, _subtitle_index(src) if src.suffix not in (".srt", ".vtt") else None)
    if ext in (".srt", ".vtt"):
        assert ours.read_bytes().decode() == ref.read_bytes().decode(), f"{src.name} -> {ext}"
        return
    mine, theirs = _packets(ours), _packets(ref)
    assert theirs, f"ffmpeg wrote no {ext} packets for {src.name}"
    diff = lib.diff_lines(mine, theirs, "ours", "ffmpeg")
    assert diff is None, f"{src.name} -> {ext}: {diff}"


TARGETS = [".mkv", ".webm", ".mp4", ".srt", ".vtt"]


@pytest.mark.parametrize("ext", TARGETS)
@pytest.mark.parametrize("name", ["in.srt", "in.vtt", "srt.mkv", "ass.mkv", "vtt.mkv", "srt.mp4", "ass.mp4"])
def test_generated_inputs_to_every_text_target(inputs: dict[str, Path], mk_remux: Path, tmp_path: Path, name: str, ext: str) -> None:
    _check(mk_remux, inputs[name], tmp_path, ext)


@pytest.mark.parametrize("ext", TARGETS)
@pytest.mark.parametrize("name", [MKV_SRT, BREADTH_VTT])
def test_real_files_to_every_text_target(shared_media: Path, mk_remux: Path, tmp_path: Path, name: str, ext: str) -> None:
    _check(mk_remux, shared_media / name, tmp_path, ext)


@pytest.mark.parametrize("ext", TARGETS)
def test_matroska_webvtt_track_to_every_text_target(shared_media: Path, mk_remux: Path, tmp_path: Path, ext: str) -> None:
    """FFmpeg 5.1 cannot read Matroska's S_TEXT/WEBVTT: the reference is ffmpeg's conversion of
    mkvextract's .vtt of the track (cue identifiers and settings are not in that track)."""
    extracted = tmp_path / "track.vtt"
    cmd = ["mkvextract", shared_media / MKV_VTT, "tracks", f"2:{extracted}"]
    lib.oracle_ok(lib.run(cmd), cmd)
    _check(mk_remux, shared_media / MKV_VTT, tmp_path, ext, reference_input=extracted, source_codec="webvtt")


def test_default_track_choice(inputs: dict[str, Path], shared_media: Path, mk_remux: Path, tmp_path: Path) -> None:
    """Without --track: a .srt takes the subtitle track alone (the video and audio left out with
    a note), MP4 and Matroska keep the subtitle track with the others, as ffmpeg's default
    stream choice keeps one of each kind the output takes."""
    src = shared_media / MKV_VTT
    out = tmp_path / "o.srt"
    proc = lib.run([mk_remux, src, out])
    lib.check_ok(proc, [mk_remux, src, out])
    assert b"track 0 left out" in proc.stderr and b"track 1 left out" in proc.stderr, lib.tail(proc.stderr)
    for ext, kinds in ((".mp4", ["video", "audio", "subtitle"]), (".mkv", ["video", "audio", "subtitle"])):
        out = tmp_path / f"o{ext}"
        cmd = [mk_remux, src, out]
        lib.check_ok(lib.run(cmd), cmd)
        probe = ["ffprobe", "-v", "error", "-show_entries", "stream=codec_type", "-of", "csv=p=0", out]
        proc = lib.run(probe)
        lib.oracle_ok(proc, probe)
        assert [line.split(",")[0] for line in proc.stdout.decode().split()] == kinds, ext


def test_bitmap_subtitles_are_refused_by_text_targets(shared_media: Path, mk_remux: Path, tmp_path: Path) -> None:
    src = shared_media / MKV_PGS
    track = _subtitle_index(src)
    for ext in (".srt", ".vtt", ".mp4"):
        out = tmp_path / f"o{ext}"
        proc = lib.run([mk_remux, src, out, "--track", str(track)])
        assert proc.returncode != 0 and b"hdmv_pgs_subtitle" in proc.stderr and f"track {track}".encode() in proc.stderr, \
            (ext, lib.tail(proc.stderr))
        assert not out.exists()


def test_our_mp4_timed_text_reads_back(inputs: dict[str, Path], mk_remux: Path, mk_decode: Path, tmp_path: Path) -> None:
    """Our MP4's tx3g track decodes (by ffmpeg and by us) to the cues ffmpeg's own mov_text MP4 gives."""
    ours = tmp_path / "o.mp4"
    _ours(mk_remux, inputs["srt.mkv"], ours, None)
    ref = tmp_path / "r.mp4"
    _ffmpeg("-i", inputs["srt.mkv"], "-c:s", "mov_text", ref)
    for path in (ours, ref):
        assert path.exists()
    def srt_of(path: Path) -> bytes:
        proc = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-f", "srt", "-"])
        lib.oracle_ok(proc, [path])
        return proc.stdout
    assert srt_of(ours) == srt_of(ref)
    mine = tmp_path / "mine.srt"
    cmd = [mk_decode, "-q", ours, "--subtitles-out", mine]
    lib.check_ok(lib.run(cmd), cmd)
    assert mine.read_bytes() == srt_of(ref)


def test_listing_shows_subtitle_writers(mk_remux: Path) -> None:
    proc = subprocess.run([mk_remux, "--list-formats"], capture_output=True, timeout=60)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    text = proc.stdout.decode()
    assert ".srt" in text and ".vtt" in text, text


C_REMUX = r"""
#include <stdio.h>
#include <mediakit/mediakit.h>
int main(int argc, char **argv) {
    if (argc != 3) return 2;
    mk_status st = mk_remux(argv[1], argv[2], NULL);
    if (st != MK_OK) { fprintf(stderr, "mk_remux: %d %s\n", (int)st, mk_last_error()); return 1; }
    return 0;
}
"""


def test_c_remux_keeps_a_subtitle_track(inputs: dict[str, Path], mk_bin: Path, tmp_path: Path) -> None:
    """`mk_remux` (C) writes the MP4 `-c:s mov_text` writes, packet for packet."""
    from test_capi import _build, _libdir
    source = tmp_path / "remux.c"
    source.write_text(C_REMUX)
    program = _build(source, tmp_path / "remux", _libdir(mk_bin))
    ours, ref = tmp_path / "c.mp4", tmp_path / "ref.mp4"
    cmd = [program, inputs["srt.mkv"], ours]
    lib.check_ok(lib.run(cmd), cmd, who="remux.c")
    _reference(inputs["srt.mkv"], "subrip", ref)
    assert _packets(ours) == _packets(ref)


CHAPTERS = (";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1500\ntitle=Intro\n"
            "[CHAPTER]\nTIMEBASE=1/1000\nSTART=1500\nEND=3000\ntitle=Part two \u00e9\n")


@pytest.mark.parametrize("ext", [".mp4", ".mov"])
def test_mp4_chapter_track_is_ffmpegs(mk_remux: Path, mk_probe: Path, tmp_path: Path, ext: str) -> None:
    """Chapters into MP4 / MOV: a QuickTime chapter track next to the chpl, as `ffmpeg -c copy`
    writes it (ffprobe's chapters, and the chapter stream's codec, tag, time base, duration, frame
    count and packets equal); our reader still reads the chapters."""
    meta = tmp_path / "chapters.txt"
    meta.write_text(CHAPTERS)
    src = tmp_path / "in.mkv"
    _ffmpeg("-f", "lavfi", "-i", "sine=d=3", "-i", meta, "-map_metadata", "1", "-map_chapters", "1", "-c:a", "aac", src)
    ours, ref = tmp_path / f"ours{ext}", tmp_path / f"ref{ext}"
    _ours(mk_remux, src, ours, None)
    _ffmpeg("-i", src, "-c", "copy", ref)

    def probe(path: Path) -> tuple[list, dict]:
        cmd = ["ffprobe", "-v", "error", "-show_chapters", "-show_streams", "-of", "json", path]
        proc = lib.run(cmd)
        lib.oracle_ok(proc, cmd)
        info = json.loads(proc.stdout)
        chapter_stream = [s for s in info["streams"] if s["codec_type"] == "data"]
        assert len(chapter_stream) == 1, info["streams"]
        keys = ("codec_name", "codec_tag_string", "time_base", "duration", "nb_frames")
        shown = {k: chapter_stream[0].get(k) for k in keys}
        shown["language"] = chapter_stream[0].get("tags", {}).get("language")
        return info["chapters"], shown

    assert probe(ours) == probe(ref)
    # With -ignore_chapters FFmpeg lists the chapter track as a mov_text stream and gives its packets.
    packets = ["ffprobe", "-v", "error", "-ignore_chapters", "1", "-select_streams", "1", "-show_entries",
               "packet=pts_time,duration_time,size", "-show_data_hash", "md5", "-of", "compact"]
    mine, theirs = lib.run(packets + [ours]), lib.run(packets + [ref])
    assert theirs.stdout and mine.stdout == theirs.stdout
    info = json.loads(lib.run([mk_probe, "--json", ours]).stdout)
    assert [(c["start_time"], c["end_time"], c["tags"]["title"]) for c in info["chapters"]] == \
        [("0.000000", "1.500000", "Intro"), ("1.500000", "3.000000", "Part two \u00e9")]
