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

Also here: the MP4 QuickTime chapter track in every layout (ffprobe's chapters and stream list
against ffmpeg's file with the matching -movflags; FFmpeg 5.1 has no hybrid layout, whose file
ends progressive: ffmpeg's progressive file is its reference), the round trip MP4 chapters ->
MKV -> MP4, and bitmap subtitles (PGS, DVD, DVB) copied into Matroska, compared with
`ffmpeg -map 0 -c copy` packet for packet (pts, dts, duration, size, flags, data hash) and the
stream's extradata hash.
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
    return proc.stdout.decode().split()[0]   # an MPEG-TS lists the stream under its program too


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


# (layout, mk-remux options, ffmpeg's -movflags for the same layout). FFmpeg 5.1 has no hybrid
# layout: a hybrid file ends up progressive, so its reference is ffmpeg's progressive file.
LAYOUTS = [("progressive", [], []), ("faststart", ["--faststart"], ["-movflags", "+faststart"]),
           ("fragmented", ["--fragment", "1"], ["-movflags", "frag_keyframe+empty_moov"]),
           ("hybrid", ["--hybrid", "1"], [])]


def _chapter_probe(path: Path) -> tuple[list, dict, list]:
    """ffprobe's chapters, the chapter stream's facts, and every stream as -show_streams lists
    it (type, codec, tag, default disposition, extradata size)."""
    cmd = ["ffprobe", "-v", "error", "-show_chapters", "-show_streams", "-of", "json", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    info = json.loads(proc.stdout)
    chapter_stream = [s for s in info["streams"] if s["codec_type"] == "data"]
    assert len(chapter_stream) == 1, info["streams"]
    keys = ("codec_name", "codec_tag_string", "time_base", "duration", "nb_frames")
    shown = {k: chapter_stream[0].get(k) for k in keys}
    shown["language"] = chapter_stream[0].get("tags", {}).get("language")
    streams = [(s["codec_type"], s["codec_name"], s["codec_tag_string"], s["disposition"]["default"], s.get("extradata_size"))
               for s in info["streams"]]
    return info["chapters"], shown, sorted(streams)


@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
@pytest.mark.parametrize("ext", [".mp4", ".mov"])
def test_mp4_chapter_track_is_ffmpegs(mk_remux: Path, mk_probe: Path, tmp_path: Path, ext: str, layout: tuple) -> None:
    """Chapters into MP4 / MOV in every layout: a QuickTime chapter track next to the chpl, as
    `ffmpeg -c copy` writes it (with `-movflags frag_keyframe+empty_moov` its samples are in the
    first fragment): ffprobe's chapters, the chapter stream's codec, tag, time base, duration,
    frame count and packets, and the streams -show_streams lists (the chapter track a data
    stream, not default: a disabled track) equal; our reader still reads the chapters."""
    _, ours_options, movflags = layout
    meta = tmp_path / "chapters.txt"
    meta.write_text(CHAPTERS)
    src = tmp_path / "in.mkv"
    _ffmpeg("-f", "lavfi", "-i", "sine=d=3", "-i", meta, "-map_metadata", "1", "-map_chapters", "1", "-c:a", "aac", src)
    ours, ref = tmp_path / f"ours{ext}", tmp_path / f"ref{ext}"
    cmd = [mk_remux, src, ours, *ours_options]
    lib.check_ok(lib.run(cmd), cmd)
    _ffmpeg("-i", src, "-c", "copy", *movflags, ref)
    assert _chapter_probe(ours) == _chapter_probe(ref)
    # With -ignore_chapters FFmpeg lists the chapter track as a mov_text stream and gives its packets.
    packets = ["ffprobe", "-v", "error", "-ignore_chapters", "1", "-select_streams", "1", "-show_entries",
               "packet=pts_time,duration_time,size", "-show_data_hash", "md5", "-of", "compact"]
    mine, theirs = lib.run(packets + [ours]), lib.run(packets + [ref])
    assert theirs.stdout and mine.stdout == theirs.stdout
    info = json.loads(lib.run([mk_probe, "--json", ours]).stdout)
    assert [(c["start_time"], c["end_time"], c["tags"]["title"]) for c in info["chapters"]] == \
        [("0.000000", "1.500000", "Intro"), ("1.500000", "3.000000", "Part two \u00e9")]


@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
def test_chapters_of_a_real_file_in_every_mp4_layout(shared_media: Path, mk_remux: Path, tmp_path: Path, layout: tuple) -> None:
    """A real H.264 + AAC file (B-frames, ../shared/media) given chapters by ffmpeg (ffmetadata,
    one title in UTF-8, times not on a frame) into every MP4 layout: ffprobe's chapters (times
    to the 1/1000 time base, titles) and the streams it lists equal ffmpeg's file's."""
    _, ours_options, movflags = layout
    meta = tmp_path / "chapters.txt"
    meta.write_text(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=2500\ntitle=Intro\n"
                    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=2500\nEND=5001\ntitle=Middle \u00fcn\u00ef\n"
                    "[CHAPTER]\nTIMEBASE=1/1000\nSTART=5001\nEND=8000\ntitle=End\n")
    src = tmp_path / "in.mkv"
    _ffmpeg("-i", shared_media / "mp4_h264_aac_moov_at_start_ctts_8s.mp4", "-i", meta, "-map", "0", "-map_chapters", "1", "-c", "copy", src)
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ref.mp4"
    cmd = [mk_remux, src, ours, *ours_options]
    lib.check_ok(lib.run(cmd), cmd)
    _ffmpeg("-i", src, "-map", "0", "-c", "copy", *movflags, ref)
    mine, theirs = _chapter_probe(ours), _chapter_probe(ref)
    assert [(c["start"], c["end"], c["time_base"], c["tags"]["title"]) for c in theirs[0]] == \
        [(0, 2500, "1/1000", "Intro"), (2500, 5001, "1/1000", "Middle \u00fcn\u00ef"), (5001, 8000, "1/1000", "End")]
    assert mine == theirs


@pytest.fixture(scope="module")
def bitmap_inputs(tmp_path_factory, shared_media: Path) -> dict[str, Path]:
    """Bitmap subtitle tracks made by ffmpeg from the real PGS track of ../shared/media/breadth:
    the source itself (its PGS frames compressed with zlib, which the reader inflates), its
    stream copy into Matroska (FFmpeg writes it without the compression), and its pictures encoded as DVD subtitles (Matroska
    S_VOBSUB, MP4 `mp4s`) and DVB subtitles (Matroska S_DVBSUB, MPEG-TS private data with a
    subtitling descriptor); `-fix_sub_duration`: each lasts to the next."""
    d = tmp_path_factory.mktemp("bitmaps")
    src = shared_media / MKV_PGS
    out = {"pgs_zlib": src, "pgs": d / "pgs.mkv", "dvd": d / "dvd.mkv", "dvb": d / "dvb.mkv", "dvb_ts": d / "dvb.ts", "dvd_mp4": d / "dvd.mp4"}
    _ffmpeg("-i", src, "-map", "0", "-c", "copy", out["pgs"])
    for name, codec in (("dvd", "dvdsub"), ("dvb", "dvbsub"), ("dvb_ts", "dvbsub"), ("dvd_mp4", "dvdsub")):
        _ffmpeg("-fix_sub_duration", "-i", src, "-map", "0:v", "-map", "0:s", "-c:v", "copy", "-c:s", codec, out[name])
    return out


def _bitmap_facts(path: Path) -> tuple[list[str], list[str]]:
    """The subtitle stream as ffprobe shows it (codec, size, extradata hash) and its packets
    (pts, dts, duration, size, flags, data hash)."""
    cmd = ["ffprobe", "-v", "error", "-select_streams", "s:0", "-show_data_hash", "md5", "-show_entries",
           "stream=codec_name,width,height,extradata_size,extradata_hash:stream_tags=language:"
           "packet=pts,dts,duration,size,flags,data_hash", "-of", "compact", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    lines = proc.stdout.decode().splitlines()
    return [line for line in lines if line.startswith("stream")], [line for line in lines if line.startswith("packet")]


@pytest.mark.parametrize("name,ext", [("pgs_zlib", ".mkv"), ("pgs", ".mkv"), ("dvd", ".mkv"), ("dvb", ".mkv"), ("dvb_ts", ".mkv"), ("dvd_mp4", ".mkv"),
                                      ("dvd_mp4", ".mp4")])
def test_bitmap_subtitles_into_matroska_are_ffmpegs_copy(bitmap_inputs: dict[str, Path], mk_remux: Path, tmp_path: Path, name: str,
                                                         ext: str) -> None:
    """PGS (S_HDMV/PGS), DVD (S_VOBSUB, the .idx text its CodecPrivate: from an MP4's `mp4s`
    palette as FFmpeg rewrites it) and DVB (S_DVBSUB; from MPEG-TS the PES's segments, the
    subtitling descriptor's pages the CodecPrivate) tracks remuxed into Matroska, and an MP4's
    `mp4s` track copied into MP4: the subtitle stream and its packets (timestamps, durations,
    sizes, key flags, bytes) equal `ffmpeg -map 0 -c copy`'s; the default track choice keeps them.
    MP4 into MP4 keeps the source's `esds` palette: the stream as ffprobe shows it is the
    source's (ffmpeg's copy rewrites the palette through its .idx text, YCrCb -> RGB -> YCrCb,
    and its colours move by a step or two)."""
    src = bitmap_inputs[name]
    ours, ref = tmp_path / f"ours{ext}", tmp_path / f"ref{ext}"
    cmd = [mk_remux, src, ours]
    lib.check_ok(lib.run(cmd), cmd)
    _ffmpeg("-i", src, "-map", "0", "-c", "copy", ref)
    mine, theirs = _bitmap_facts(ours), _bitmap_facts(ref)
    assert theirs[1], f"ffmpeg's copy of {name} has no subtitle packets"
    if src.suffix == ext == ".mp4":
        assert mine[0] == _bitmap_facts(src)[0]
        assert mine[1] == theirs[1]
    else:
        assert mine == theirs


@pytest.mark.parametrize("name", ["dvd", "dvb", "dvb_ts"])
def test_generated_bitmap_subtitles_are_refused_by_text_targets(bitmap_inputs: dict[str, Path], mk_remux: Path, tmp_path: Path,
                                                               name: str) -> None:
    """DVD and DVB subtitles into .srt, .vtt, MP4 and WebM: an error naming the track and the
    codec, and no output file."""
    src = bitmap_inputs[name]
    track = _subtitle_index(src)
    codec = _codec(src)
    for ext in (".srt", ".vtt", ".mp4", ".webm"):
        out = tmp_path / f"o{ext}"
        proc = lib.run([mk_remux, src, out, "--track", str(track)])
        assert proc.returncode != 0 and codec.encode() in proc.stderr, (ext, lib.tail(proc.stderr))
        assert not out.exists()


@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
def test_mp4_chapters_through_matroska_back_to_every_mp4_layout(shared_media: Path, mk_remux: Path, tmp_path: Path, layout: tuple) -> None:
    """The issue's round trip MP4 chapters -> MKV -> MP4 on a real file with a QuickTime chapter
    track and a chpl (../shared/media): the MP4 written in each layout has the source's chapters
    as ffprobe reads them (times in 1/1000 s, titles), read from our chapter track."""
    src = shared_media / "mp4_h264_aac_text_chapter_track_chpl.mp4"
    mkv, back = tmp_path / "mid.mkv", tmp_path / "back.mp4"
    for cmd in ([mk_remux, src, mkv], [mk_remux, mkv, back, *layout[1]]):
        lib.check_ok(lib.run(cmd), cmd)

    def chapters(path: Path) -> list:
        cmd = ["ffprobe", "-v", "error", "-show_chapters", "-of", "json", path]
        proc = lib.run(cmd)
        lib.oracle_ok(proc, cmd)
        return [(c["time_base"], c["start"], c["end"], c["tags"].get("title")) for c in json.loads(proc.stdout)["chapters"]]

    source = chapters(src)
    assert source and chapters(back) == source
    # Read from the chapter track (1/1000 s), not the chpl (1/10000000 s) alone.
    assert all(c[0] == "1/1000" for c in chapters(back))


@pytest.mark.parametrize("layout", LAYOUTS, ids=[layout[0] for layout in LAYOUTS])
def test_copied_mp4_chapter_track_is_listed_as_ffmpegs(shared_media: Path, mk_remux: Path, tmp_path: Path, layout: tuple) -> None:
    """MP4 -> MP4 of the real chapter-track file in each layout: the source's chapter track is
    copied, and ffprobe lists the streams (the chapter track a data stream, not default) and
    the chapters as on ffmpeg's copy in that layout (which writes its own chapter track)."""
    src = shared_media / "mp4_h264_aac_text_chapter_track_chpl.mp4"
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ref.mp4"
    cmd = [mk_remux, src, ours, *layout[1]]
    lib.check_ok(lib.run(cmd), cmd)
    _ffmpeg("-i", src, "-c", "copy", *layout[2], ref)

    def listed(path: Path) -> tuple[list, list]:
        cmd = ["ffprobe", "-v", "error", "-show_chapters", "-show_streams", "-of", "json", path]
        proc = lib.run(cmd)
        lib.oracle_ok(proc, cmd)
        info = json.loads(proc.stdout)
        streams = sorted((s["codec_type"], s["codec_name"], s["codec_tag_string"], s["disposition"]["default"]) for s in info["streams"])
        return streams, [(c["time_base"], c["start"], c["end"], c["tags"].get("title")) for c in info["chapters"]]

    assert listed(ours) == listed(ref)
