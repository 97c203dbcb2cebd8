"""Helpers of the remux / fragmented-MP4 oracle tests (test_remux.py, test_fragmented_demux.py)."""

from __future__ import annotations

import csv
import functools
import os
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

MANIFEST = lib.SHARED_MEDIA / "MANIFEST.tsv"

# Files our demuxer cannot match ffprobe on, and why (strict xfail).
DEMUX_KNOWN: dict[str, str] = {}

# Tracks whose packet sizes ffprobe does not report as stored: compared on everything
# but the size column. Key: file name; value: (track, why).
SIZE_NOT_AS_STORED: dict[str, tuple[int, str]] = {
    "fmp4_h264_c608_cbcs_decrypted.mp4":
        (1, "FFmpeg rewrites each c608 sample (cdat/cdt2 boxes of byte pairs) into EIA-608 "
            "cc_data triplets, so ffprobe's sizes are not the stored sample sizes"),
}


def _pairs() -> dict[str, str]:
    """media segment name -> init segment name, from MANIFEST.tsv ("pair with X")."""
    out = {}
    if not MANIFEST.is_file():
        return out
    with open(MANIFEST, newline="") as f:
        for row in csv.reader(f, delimiter="\t"):
            if len(row) < 7:
                continue
            note = row[6]
            if "pair with " in note:
                init = note.split("pair with ", 1)[1].split()[0]
                out[row[0]] = init
    return out


def fragmented_params() -> list:
    """One param per fragmented input: "shared:NAME" or "pair:INIT+SEG"."""
    if not lib.SHARED_MEDIA.is_dir():
        return [pytest.param("missing", id="shared-media-missing")]
    pairs = _pairs()
    inits = set(pairs.values())
    params = []
    for p in sorted(lib.SHARED_MEDIA.iterdir()):
        n = p.name
        if not n.startswith(lib.FRAGMENTED_PREFIXES) or not p.is_file():
            continue
        if n in pairs:
            params.append(lib.file_param(f"pair:{pairs[n]}+{n}", f"{pairs[n]}+{n}"))
        elif n in inits or p.suffix == ".m4s" or "init" in n:
            continue   # used through its pair; a lone init or segment has no samples to compare
        else:
            params.append(lib.file_param(f"shared:{n}", n))
    return params


def materialize(case: str, tmp_path: Path, request) -> Path:
    """The file a case names; an init+media pair is concatenated into tmp_path."""
    if case == "missing":
        if os.environ.get("CI") == "true":
            pytest.fail(f"{lib.SHARED_MEDIA} is missing (CI=true)", pytrace=False)
        pytest.skip(f"{lib.SHARED_MEDIA} is missing")
    kind, _, name = case.partition(":")
    if kind == "shared":
        return lib.SHARED_MEDIA / name
    init, seg = name.split("+")
    out = tmp_path / (Path(seg).stem + "_with_init.mp4")
    with open(out, "wb") as f:
        for part in (init, seg):
            f.write((lib.SHARED_MEDIA / part).read_bytes())
    return out


def blank_na_durations(ours: list[str], ref: list[str]) -> tuple[list[str], list[str], str]:
    """Where ffprobe's duration is N/A, blank the duration column on both sides."""
    if len(ours) != len(ref) or not any(l.split(",")[3] == "N/A" for l in ref):
        return ours, ref, ""
    o2, r2, n = [], [], 0
    for a, b in zip(ours, ref):
        fa, fb = a.split(","), b.split(",")
        if fb[3] == "N/A":
            fa[3] = fb[3] = "*"
            n += 1
        o2.append(",".join(fa))
        r2.append(",".join(fb))
    return o2, r2, f"{n} packets with ffprobe duration N/A compared without duration"


# --------------------------------------------------------------------------- remux inputs

LAYOUTS = {
    "progressive": [],
    "faststart": ["--faststart"],
    "fragmented": ["--fragment", "1"],
    "hybrid": ["--hybrid", "1"],
}

_LAVFI_V = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25"]
_LAVFI_A = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000"]
_BITEXACT = ["-fflags", "+bitexact", "-flags:v", "+bitexact", "-flags:a", "+bitexact", "-map_metadata", "-1"]
_X264 = ["-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "25", "-pix_fmt", "yuv420p"]

# name -> ffmpeg arguments after `ffmpeg -v error -y -nostdin` (the output path is appended).
REMUX_GENERATED: dict[str, list] = {
    "h264_bframes_aac.mp4": [*_LAVFI_V, *_LAVFI_A, "-t", "2", *_X264, "-c:a", "aac", *_BITEXACT],
    "hevc_aac.mp4": [*_LAVFI_V, *_LAVFI_A, "-t", "2", "-c:v", "libx265", "-preset", "fast",
                     "-x265-params", "log-level=error:bframes=3:keyint=25", "-pix_fmt", "yuv420p",
                     "-c:a", "aac", *_BITEXACT],
    "av1_svt.mp4": [*_LAVFI_V, "-t", "1", "-c:v", "libsvtav1", "-preset", "12", "-g", "10",
                    "-pix_fmt", "yuv420p", *_BITEXACT],
    "opus.mp4": [*_LAVFI_A, "-t", "2", "-c:a", "libopus", "-b:a", "64k", *_BITEXACT],
    # Rotated by REMUX_ROTATION after encoding (FFmpeg 5.1 drops the rotate tag when encoding).
    "h264_rotated90.mp4": [*_LAVFI_V, "-t", "1", *_X264, "-fflags", "+bitexact"],
    "two_audio_languages.mp4": [*_LAVFI_V, *_LAVFI_A, "-f", "lavfi", "-i", "sine=frequency=660:sample_rate=44100",
                                "-map", "0:v", "-map", "1:a", "-map", "2:a", "-t", "2", *_X264, "-c:a", "aac",
                                "-metadata:s:a:0", "language=eng", "-metadata:s:a:1", "language=fra",
                                "-fflags", "+bitexact"],
    # Video with negative composition offsets (ctts version 1) beside a video without: a
    # fragmented copy must keep the two in sync as FFmpeg reads them (MP4Muxer.announceTimestamps).
    "h264_negative_cts_two_videos.mp4": [*_LAVFI_V, "-f", "lavfi", "-i", "testsrc=size=160x120:rate=25",
                                         "-map", "0:v", "-map", "1:v", "-t", "2", *_X264, "-bf:v:1", "0",
                                         "-movflags", "+negative_cts_offsets", *_BITEXACT],
    "fragmented_h264_aac.mp4": [*_LAVFI_V, *_LAVFI_A, "-t", "3", *_X264, "-c:a", "aac",
                                "-movflags", "+frag_keyframe+empty_moov+default_base_moof", *_BITEXACT],
    # Uncompressed audio (stts counts PCM frames; FFmpeg reads packets of up to 1024 frames
    # cut per chunk): sowt beside video; in24 (+enda) whose 1000-frame packets make chunks
    # that are not multiples of 1024; a 96 kHz track, which FFmpeg writes as a version 2
    # `lpcm` sound description.
    "h264_pcm_s16le.mov": [*_LAVFI_V, *_LAVFI_A, "-t", "2", *_X264, "-c:a", "pcm_s16le", *_BITEXACT],
    "h264_pcm_s24le_odd_chunks.mov": [*_LAVFI_V, "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:samples_per_frame=1000",
                                      "-t", "2", *_X264, "-c:a", "pcm_s24le", "-ac", "2", *_BITEXACT],
    "lpcm_s24le_96k.mov": ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=96000", "-t", "2",
                           "-c:a", "pcm_s24le", *_BITEXACT],
}


REMUX_ROTATION: dict[str, int] = {"h264_rotated90.mp4": 90}


def make_generated(name: str, folder: Path) -> Path:
    out = folder / name
    if not out.is_file():
        encoded = out.with_name("encoded-" + name) if name in REMUX_ROTATION else out
        cmd = ["nice", "-n", "5", "ffmpeg", "-v", "error", "-y", "-nostdin", *REMUX_GENERATED[name], encoded]
        proc = lib.run(cmd)
        if proc.returncode != 0 or not encoded.is_file():
            pytest.fail(f"could not generate {name}: `{lib.shell_line(cmd)}`\n{lib.tail(proc.stderr)}")
        if encoded != out:
            lib.rotate_copy(encoded, out, REMUX_ROTATION[name])
    return out


def remux_params() -> list:
    """Every remux input: generated, progressive shared files, fragmented shared files."""
    params = [lib.file_param(f"gen:{n}", f"gen:{n}") for n in REMUX_GENERATED]
    names = lib.progressive_shared_media()
    if names is None:
        params.append(pytest.param("missing", id="shared-media-missing"))
        return params
    params += [lib.file_param(f"shared:{n}", n) for n in names]
    params += [p for p in fragmented_params()]
    return params


FFMPEG_FRAGMENTED_EDITS = (
    "FFmpeg 5.1 reads the edit list of a fragmented file only as a start offset: it does not "
    "mark priming/pre-roll samples for discard or trim the last sample to the edit's end as it "
    "does for a progressive file, so the framemd5 of any fragmented copy differs (ffmpeg's own "
    "`-movflags frag_keyframe+empty_moov` copy of this file differs from it the same way, stream "
    "by stream: Tests/oracle/check_fragmented_reasons.py)")

# (input name, layout) -> why the output cannot give the same framemd5 (strict xfail).
# Input name "*" matches every input.
REMUX_KNOWN: dict[tuple[str, str], str] = {}

FFMPEG_FRAGMENTED_INPUT_EDITS = (
    "the input is fragmented and has an edit list: FFmpeg 5.1 applies it there only as a start "
    "offset, while on the progressive copy it applies it fully (priming marked for discard, end "
    "trimmed), so the two framemd5s differ although the samples and edit list are the same "
    "(fmp4_opus_dOps: the copy keeps the elst (media time 312); its framemd5 has the first packet "
    "marked for skip (S=1) and every pts 312 ticks earlier than the input's)")

# Checked for each file with Tests/oracle/check_fragmented_reasons.py: ffmpeg's own fragmented
# copy differs from the input on the same packet lines as ours (the 3GP file copied with
# `-f 3gp`, the AC-3 file with `delay_moov`; for the chapter file on the audio and video streams,
# as ffmpeg's copy adds a chapter stream of its own).
for _n in ["gen:h264_bframes_aac.mp4", "gen:hevc_aac.mp4", "gen:opus.mp4", "gen:two_audio_languages.mp4",
           "3gp_amr_nb_1frame_unsupported.3gp", "m4a_aac_mono_afconvert_apple_elst.mp4",
           "mp4_h264_aac_elst_media_time_offsets_moov_first.mp4", "mp4_h264_aac_elst_starts_after_only_sync_sample.mp4",
           "mp4_h264_aac_elst_video_empty_edit_1s_then_media.mp4", "mp4_h264_aac_minimal_moov_first.mp4",
           "mp4_h264_aac_text_chapter_track_chpl.mp4", "mp4_h264_bframes_iibbibb_elst_offset.mp4",
           "mp4_hevc_hvc1_aac_ctts_elst.mp4", "mp4_opus_progressive_elst_preskip_1p5s.mp4",
           "mp4_two_audio_tracks_ac3_5p1_and_aac.mp4"]:
    REMUX_KNOWN[(_n.removeprefix("gen:"), "fragmented")] = FFMPEG_FRAGMENTED_EDITS
# Sources whose video has negative composition offsets (ctts entries below 0) are copied with
# non-negative trun offsets and the edit list's media time moved by the most negative offset
# (MP4Muxer.announceTimestamps): FFmpeg 5.1 then reads the fragmented video with IN's decode and
# presentation times (mp4_h264_2byte_nal_length_co64_aac_empty_edit.mp4 passes). For these the
# claim of FFMPEG_FRAGMENTED_EDITS does NOT hold (ffmpeg's own fragmented copy differs in another way).
REMUX_KNOWN[("mov_h264_aac_quicktime_audio_empty_edit_bt601.mov", "fragmented")] = (
    "the audio's edit list ends (1320 + 29259 ticks of 1/30000: 1.0193 s) before its media does "
    "(45124 samples from 0.044 s). FFmpeg 5.1 trims a progressive file's audio packet that crosses the "
    "edit's end and drops the packets after it (framemd5 of IN: `0, 44948, ..., 3, 235` is the last "
    "audio line); reading a fragmented file it applies the edit list only as a start offset, so the "
    "copy also lists `0, 45972` and `0, 46996` (every other line is equal; the video's negative "
    "composition offsets are stored non-negative with the edit list at media time 1001). ffmpeg's own "
    "fragmented copy (check_fragmented_reasons.py) moves the video's edit list the same way and leaves "
    "out the two packets it did not read, but writes the audio's empty edit in its 1/1000 movie time "
    "scale (43 ms), so every audio line starts at 1896 instead of 1940 (86 lines differ)")
REMUX_KNOWN[("mov_iphone_hevc_dolbyvision_rotation90_mebx_tracks.mov", "fragmented")] = (
    "two causes. (1) the video's ctts (version 0: 0, 60, 0, -40, -20) is negative only in its last two "
    "entries, which FFmpeg 5.1 leaves out when it computes the progressive file's decode-time shift: it "
    "reads IN's last two samples with pts before dts (dts 60, pts 20; dts 80, pts 60) and `ffmpeg -c copy` "
    "repairs them (framemd5: dts = pts = 41, then 60). Offsets in a trun always count, so from any "
    "fragmented copy FFmpeg reads the presentation times the file states (pts 0, 80, 40, 20, 60) with "
    "decode times 40 ticks earlier (ours: non-negative trun offsets, edit list at media time 40). "
    "(2) the audio's edit list starts at media time 2112 (priming), which a fragmented file's reader "
    "applies only as a start offset: the priming packets are not marked for discard, the file starts "
    "2112/44100 s earlier and every stream's framemd5 line moves by that much (streams 1-4 differ from "
    "IN exactly as in ffmpeg's own `-f mov -movflags frag_keyframe+empty_moov+delay_moov` copy; its "
    "video carries the repaired timestamps instead, like mov_mvhevc_spatial_video_5frames.mov)")
REMUX_KNOWN[("mov_mvhevc_spatial_video_5frames.mov", "fragmented")] = (
    "the input's ctts (version 0) has negative offsets (-256, -128: the 4th sample, decoded at 384, is "
    "presented at 128). FFmpeg 5.1 reads the progressive input without shifting decode times and then "
    "repairs the packet whose dts exceeds its pts (framemd5: dts = pts = 257 instead of pts 128); from our "
    "fragmented copy (offsets made non-negative in the trun, edit list at media time 256) it reads the "
    "presentation times the file states (pts 0, 512, 256, 128, 384) with decode times shifted by -256. "
    "ffmpeg's own fragmented copy equals the input only because it writes its repaired timestamps "
    "(pts 257), i.e. changes the presentation")
for _l in ("progressive", "faststart", "hybrid"):
    REMUX_KNOWN[("fmp4_opus_dOps_single_file.mp4", _l)] = FFMPEG_FRAGMENTED_INPUT_EDITS
REMUX_KNOWN[("mp4_h264_aac_text_chapter_track_chpl.mp4", "hybrid")] = (
    "FFmpeg 5.1 sets a QuickTime chapter track (tref/chap) to discard while it reads the chapter titles, "
    "probes the file (here 27 packets, up to byte 4821) with that discard in force, and only then does "
    "`ffmpeg -map 0` enable the stream: whether framemd5 lists the chapter sample depends only on whether "
    "that sample lies among the probed packets. The input (and our progressive copy, which keeps the "
    "source's chunk order) has it first in the mdat (byte 48); the hybrid copy has it after the first "
    "fragment's audio and video (byte ~7474). Shown: copying those 24 bytes into the hybrid file's free "
    "space at byte 44 and pointing its stco there makes its framemd5 equal the input's; with "
    "`-ignore_chapters 1` FFmpeg lists the packet for the input, the progressive and the hybrid file alike")


def remux_known(name: str, layout: str) -> str | None:
    return REMUX_KNOWN.get((name, layout)) or REMUX_KNOWN.get(("*", layout))


def source_framemd5(path: Path) -> list[str]:
    """framemd5 of an input, computed once per worker for its four layouts (the key holds the
    file's size and modification time, so a file rewritten under the same name is read again)."""
    st = path.stat()
    return list(_framemd5_of(str(path), st.st_size, st.st_mtime_ns))


@functools.lru_cache(maxsize=None)
def _framemd5_of(path: str, size: int, mtime_ns: int) -> tuple[str, ...]:
    return tuple(framemd5(Path(path)))


def framemd5(path: Path) -> list[str]:
    cmd = ["ffmpeg", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lines = proc.stdout.decode("utf-8", "replace").splitlines()
    err = proc.stderr.decode("utf-8", "replace").strip()
    out = [l for l in lines if not l.startswith("#software")]
    if proc.returncode != 0:
        out.append(f"<ffmpeg exited {proc.returncode}: {lib.tail(err, 300)}>")
    return out


# (input name, layout) -> why ffprobe's facts on OUT cannot equal IN's (strict xfail).
FACTS_KNOWN: dict[tuple[str, str], str] = {}

_DECLARED_LONGER = ("the init segment declares the length of the whole stream (mehd/mvhd: "
                    "{} s) but only its first media segment(s) are in the corpus; the copy "
                    "lasts as long as the samples it has")
_MVHD_CONTRADICTS = ("IN's mvhd duration ({} s) disagrees with its own edit lists ({} s), "
                     "which ffprobe does not check; the copy's mvhd is computed from the edit lists")
_MVHD_CONTRADICTS_FRAGMENTED = ("IN's mvhd duration ({} s) disagrees with its own edit lists ({} s), "
                                "which ffprobe does not check; for the fragmented copy (mvhd duration 0) "
                                "ffprobe computes the duration from the streams, which follow the edit lists")
_FRAG_DURATION = ("ffprobe's duration of a fragmented file ignores its edit list (composition "
                  "delay / priming / media past the edit's end stay in), so it exceeds IN's by more "
                  "than one frame")
for _l in ("progressive", "faststart", "fragmented", "hybrid"):
    for _n, _d in [("fmp4_aac_seg1_with_init.mp4", "3900.089"), ("fmp4_aac_sintel_seg_with_init.mp4", "888.05"),
                   ("fmp4_h264_seg1_with_init.mp4", "3900"), ("fmp4_h264_sintel_seg_with_init.mp4", "888"),
                   ("fmp4_h264_styp_multiple_segments.mp4", "3900")]:
        FACTS_KNOWN[(_n, _l)] = _DECLARED_LONGER.format(_d)
    # Both: the audio's tkhd and the mvhd say 1024 ms, its edit list 44 ms empty + 1024 ms.
    for _n in ("mp4_h264_aac_moov_first_audio_empty_edit.mp4", "mp4_h264_aac_matrix_rotate90_and_reflect.mp4"):
        FACTS_KNOWN[(_n, _l)] = _MVHD_CONTRADICTS.format("1.024", "1.068")
for _l in ("progressive", "faststart", "hybrid"):
    FACTS_KNOWN[("mp4_h264_2byte_nal_length_co64_aac_empty_edit.mp4", _l)] = _MVHD_CONTRADICTS.format("1.0453", "1.0893")
    FACTS_KNOWN[("mp4_opus_progressive_elst_preskip_1p5s.mp4", _l)] = _MVHD_CONTRADICTS.format("1.46", "1.003")
    FACTS_KNOWN[("fmp4_opus_dOps_single_file.mp4", _l)] = FFMPEG_FRAGMENTED_INPUT_EDITS
    FACTS_KNOWN[("fmp4_h264_c608_cbcs_decrypted.mp4", _l)] = (
        "the c608 track's last caption sample lasts 9.438 s (trun), so the captions end at 23.706 s "
        "(ffprobe's own stream duration for IN's c608 stream is 23.706 s). The copy's mvhd duration is "
        "the longest track's, 23.706 s, which ffprobe reports for a progressive file. For the fragmented "
        "IN (mvhd duration 0) FFmpeg 5.1 computes the format duration from the stream ends and leaves out "
        "a subtitle stream that ends more than 1 s after the audio/video ones: 17.63 s, the video's")
FACTS_KNOWN[("mp4_h264_2byte_nal_length_co64_aac_empty_edit.mp4", "fragmented")] = \
    _MVHD_CONTRADICTS_FRAGMENTED.format("1.0453", "1.0893")
for _n in ["m4a_aac_mono_afconvert_apple_elst.mp4", "mov_iphone_hevc_dolbyvision_rotation90_mebx_tracks.mov",
           "mov_h264_aac_quicktime_audio_empty_edit_bt601.mov",
           "mp4_h264_aac_elst_media_time_offsets_moov_first.mp4", "mp4_h264_aac_moov_at_start_ctts_8s.mp4",
           "fmp4_muxed_h264_aac_seg_two_sidx_with_init.mp4"]:
    FACTS_KNOWN[(_n, "fragmented")] = _FRAG_DURATION


FRAGMENT_DURATIONS = (
    "duration column not compared: for the samples of movie fragments FFmpeg 5.1 does not "
    "read the trun durations into packets; framemd5 prints libavformat's guess (the codec "
    "frame size, the frame rate) instead")


def without_duration(lines: list[str]) -> list[str]:
    """framemd5 packet lines with the duration column (4th) blanked."""
    out = []
    for l in lines:
        if l.startswith("#") or l.count(",") < 5:
            out.append(l)
            continue
        f = l.split(",")
        f[3] = " *"
        out.append(",".join(f))
    return out


def discover(path: Path) -> tuple[bool, str]:
    """gst-discoverer-1.0 PATH: (opened without error, its output)."""
    proc = lib.run(["gst-discoverer-1.0", path])
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    ok = proc.returncode == 0 and "Done discovering" in text and "An error" not in text
    return ok, text


def discover_many(paths: list[Path]) -> list[tuple[bool, str]]:
    """discover() of each path, from one gst-discoverer-1.0 run over all of them when that run
    is a clean success for every one (its start-up, loading GStreamer's plugin registry, is
    most of the time a small file takes). The tool discovers its arguments in order, each in a
    section starting with an "Analyzing URI" line; but a failing file's messages can come out
    after the next file's section has begun, so any error, or any doubt about the sections,
    sends every path to discover() on its own: a failure is always what discover() says."""
    if len(paths) < 2:
        return [discover(p) for p in paths]
    proc = lib.run(["stdbuf", "-oL", "-eL", "gst-discoverer-1.0", *paths], stderr=subprocess.STDOUT)
    text = proc.stdout.decode("utf-8", "replace")
    sections: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("Analyzing file://") or not sections:
            sections.append([])
        sections[-1].append(line)
    clean = (proc.returncode == 0 and "An error" not in text and len(sections) == len(paths)
             and text.count("Done discovering") == len(paths)
             and all(lines[0].startswith("Analyzing file://") and any("Done discovering" in l for l in lines)
                     for lines in sections))
    if not clean:
        return [discover(p) for p in paths]
    return [(True, "\n".join(lines)) for lines in sections]


def last_line(text: str) -> str:
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    return lines[-1] if lines else ""


# (input name, layout) -> (why gst-discoverer cannot open OUT, the GST_DEBUG setting that
# shows the cause, and the line of that debug log naming it). The test xfails only when the
# log shows the cause; it passes if GStreamer opens the file.
PARSERS_KNOWN: dict[tuple[str, str], tuple[str, str, str]] = {
    ("fmp4_muxed_h264_aac_seg_two_sidx_with_init.mp4", _l): ((
        "GStreamer's qtdemux skips, in a file that is not fragmented, every track whose mdhd duration is "
        "below 20% of the mvhd duration ('Track shorter than 20% ... assuming preview image or something; "
        "skipping track' with GST_DEBUG=qtdemux:3). The input is a single media segment whose samples start "
        "at 29.9 s; the copy keeps that start as an empty edit, so mvhd says 30.94 s against 1.0 s of media "
        "per track, and both tracks are skipped. Shown: the same file with the edit lists removed (mvhd "
        "unchanged) is still refused; ffmpeg's own `-c copy` to MP4 is accepted only because it moves the "
        "presentation to start at 0 (mvhd 1.012 s), which loses the segment's start time"),
        "qtdemux:3", "Track shorter than 20%")
    for _l in ("progressive", "faststart", "hybrid")
}


# --------------------------------------------------------------------------- stated durations

def _full_box_body(f, box) -> tuple[int, int, bytes]:
    """(version, flags, payload after them) of a full box."""
    _, pos, hs, size = box
    f.seek(pos + hs)
    body = f.read(size - hs)
    return body[0], int.from_bytes(body[1:4], "big"), body[4:]


def track_timing(path: Path) -> list[dict]:
    """Per track (in `trak` order, ffprobe's stream order): the mdhd time scale and duration,
    and the sample durations the file states, read from the boxes by ISO/IEC 14496-12:
    `stts` entries expanded, then for each `moof` in file order the `trun` sample durations
    (or the `tfhd` default, or the `trex` default). A stated 0 stays 0: this is what the file
    says, where ffprobe prints N/A (and without `-fflags +nofillin` invents a value)."""
    import struct
    end = os.path.getsize(path)
    tracks: list[dict] = []
    by_id: dict[int, dict] = {}
    with open(path, "rb") as f:
        top = list(lib.iter_boxes(f, 0, end))
        for moov in (b for b in top if b[0] == "moov"):
            for trak in lib._child(f, moov, "trak"):
                t = {"id": None, "timescale": None, "mdhd": None, "durations": [], "trex": 0}
                for tkhd in lib._child(f, trak, "tkhd"):
                    v, _, body = _full_box_body(f, tkhd)
                    t["id"] = struct.unpack(">I", body[16:20] if v == 1 else body[8:12])[0]
                for mdia in lib._child(f, trak, "mdia"):
                    for mdhd in lib._child(f, mdia, "mdhd"):
                        v, _, body = _full_box_body(f, mdhd)
                        if v == 1:
                            t["timescale"], t["mdhd"] = struct.unpack(">IQ", body[16:28])
                        else:
                            t["timescale"], t["mdhd"] = struct.unpack(">II", body[8:16])
                    for minf in lib._child(f, mdia, "minf"):
                        for stbl in lib._child(f, minf, "stbl"):
                            for stts in lib._child(f, stbl, "stts"):
                                _, _, body = _full_box_body(f, stts)
                                (n,) = struct.unpack(">I", body[:4])
                                for i in range(n):
                                    count, delta = struct.unpack(">II", body[4 + 8 * i:12 + 8 * i])
                                    t["durations"] += [delta] * count
                tracks.append(t)
                by_id[t["id"]] = t
            for mvex in lib._child(f, moov, "mvex"):
                for trex in lib._child(f, mvex, "trex"):
                    _, _, body = _full_box_body(f, trex)
                    tid, _, duration = struct.unpack(">III", body[:12])
                    if tid in by_id:
                        by_id[tid]["trex"] = duration
        for moof in (b for b in top if b[0] == "moof"):
            for traf in lib._child(f, moof, "traf"):
                t, default = None, None
                for tfhd in lib._child(f, traf, "tfhd"):
                    _, flags, body = _full_box_body(f, tfhd)
                    (tid,) = struct.unpack(">I", body[:4])
                    t = by_id.get(tid)
                    at = 4 + (8 if flags & 0x01 else 0) + (4 if flags & 0x02 else 0)
                    if flags & 0x08:
                        (default,) = struct.unpack(">I", body[at:at + 4])
                if t is None:
                    continue
                if default is None:
                    default = t["trex"]
                for trun in lib._child(f, traf, "trun"):
                    _, flags, body = _full_box_body(f, trun)
                    (n,) = struct.unpack(">I", body[:4])
                    at = 4 + (4 if flags & 0x01 else 0) + (4 if flags & 0x04 else 0)
                    step = 4 * bin(flags & 0xF00).count("1")
                    for i in range(n):
                        if flags & 0x100:
                            (d,) = struct.unpack(">I", body[at + i * step:at + i * step + 4])
                        else:
                            d = default
                        t["durations"].append(d)
    return tracks


def ffprobe_stated_durations(path: Path) -> dict[int, list[str]]:
    """Per stream, "dts,duration" of each packet as the file states them:
    `ffprobe -fflags +nofillin -ignore_editlist 1` (without +nofillin ffprobe fills in a
    duration, and may move a dts, where a sample's duration is 0; it prints a 0 duration as
    N/A, here 0). Only for a file without movie fragments: FFmpeg 5.1 does not read trun
    durations into packets."""
    cmd = ["ffprobe", "-v", "error", "-fflags", "+nofillin", "-ignore_editlist", "1",
           "-show_entries", "packet=stream_index,dts,duration", "-of", "csv=p=0", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    out: dict[int, list[str]] = {}
    for line in proc.stdout.decode().splitlines():
        f = line.split(",")
        if len(f) >= 3:
            out.setdefault(int(f[0]), []).append(f"{f[1]},{0 if f[2] == 'N/A' else f[2]}")
    return out


# --------------------------------------------------------------------------- an edit to the end

# 79 AAC frames at 22050 Hz whose first 1024 samples are the encoder's priming: the edit
# presents 79872 samples, 3622.31 ms. Rounded to the nearest (or down to the) millisecond,
# the edit would end 7 samples before the media does.
EDIT_TO_END_RATE = 22050
EDIT_TO_END_FRAMES = 79


def make_fragmented_edit_to_end(folder: Path) -> Path:
    """A fragmented AAC file (22050 Hz) whose one edit says "from the priming's end to the
    end of the media": an elst segment duration of 0, which a remux to a file with a
    progressive moov must turn into an explicit duration (issue 10, defect 4).

    FFmpeg writes it with `-movflags frag_keyframe+empty_moov+delay_moov`: an edit at media
    time 1024 (AAC priming) whose duration is 0, the length being unknown when the moov is
    written. Another FFmpeg that writes a nonzero duration gets it patched to 0."""
    import struct
    out = folder / "fragmented_aac_22050_elst_to_end.mp4"
    if out.is_file():
        return out
    raw = folder / "encoded-fragmented_aac_22050_elst_to_end.mp4"
    cmd = ["nice", "-n", "5", "ffmpeg", "-v", "error", "-y", "-nostdin", "-f", "lavfi", "-i",
           f"sine=frequency=440:sample_rate={EDIT_TO_END_RATE}:samples_per_frame=1024",
           "-frames:a", str(EDIT_TO_END_FRAMES), "-c:a", "aac",
           "-movflags", "frag_keyframe+empty_moov+delay_moov", *_BITEXACT, raw]
    proc = lib.run(cmd)
    if proc.returncode != 0 or not raw.is_file():
        pytest.fail(f"could not generate {out.name}: `{lib.shell_line(cmd)}`\n{lib.tail(proc.stderr)}")
    data = bytearray(raw.read_bytes())
    with open(raw, "rb") as f:
        top = list(lib.iter_boxes(f, 0, len(data)))
    edits = edit_lists(raw)
    if len(edits) != 1 or len(edits[0]) != 1 or edits[0][0][1] <= 0 or "moof" not in [b[0] for b in top]:
        pytest.fail(f"`{lib.shell_line(cmd)}` wrote no fragmented file with one track whose one edit "
                    f"starts after the priming (boxes {[b[0] for b in top]}, edits {edits})")
    if edits[0][0][0] != 0:
        with open(raw, "rb") as f:
            _, pos, hs, _ = next(e for moov in top if moov[0] == "moov" for trak in lib._child(f, moov, "trak")
                                 for edts in lib._child(f, trak, "edts") for e in lib._child(f, edts, "elst"))
        # version (1 byte), flags (3), entry count (4), then segment_duration (4 or 8 bytes).
        if data[pos + hs] == 1:
            struct.pack_into(">Q", data, pos + hs + 8, 0)
        else:
            struct.pack_into(">I", data, pos + hs + 8, 0)
    out.write_bytes(bytes(data))
    return out


def edit_lists(path: Path) -> list[list[tuple[int, int]]]:
    """Per track (trak order), the (segment_duration, media_time) entries of its elst."""
    import struct
    out = []
    with open(path, "rb") as f:
        top = list(lib.iter_boxes(f, 0, os.path.getsize(path)))
        for moov in (b for b in top if b[0] == "moov"):
            for trak in lib._child(f, moov, "trak"):
                entries = []
                for edts in lib._child(f, trak, "edts"):
                    for elst in lib._child(f, edts, "elst"):
                        v, _, body = _full_box_body(f, elst)
                        (n,) = struct.unpack(">I", body[:4])
                        size = 20 if v == 1 else 12
                        for i in range(n):
                            e = body[4 + i * size:4 + (i + 1) * size]
                            entries.append(struct.unpack(">Qq", e[:16]) if v == 1 else struct.unpack(">Ii", e[:8]))
                out.append(entries)
    return out


def movie_time_scale(path: Path) -> int:
    """The mvhd time scale (the unit of edit durations)."""
    import struct
    with open(path, "rb") as f:
        top = list(lib.iter_boxes(f, 0, os.path.getsize(path)))
        for moov in (b for b in top if b[0] == "moov"):
            for mvhd in lib._child(f, moov, "mvhd"):
                v, _, body = _full_box_body(f, mvhd)
                return struct.unpack(">I", body[16:20] if v == 1 else body[8:12])[0]
    raise AssertionError(f"{path.name} has no mvhd")


def ogg_tool_report(tool: str, path: Path) -> tuple[int, set[str]]:
    """(exit status, the WARNING / ERROR lines and the complaints ogginfo prints without
    that word) of opusinfo / ogginfo on `path`, with the file name taken out."""
    proc = lib.run([tool, path])
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").replace(str(path), "FILE")
    bad = {l.strip() for l in text.splitlines()
           if any(w in l.upper() for w in ("WARNING", "ERROR", "BUGGY", "CORRUPT", "INVALID"))}
    return proc.returncode, bad


def ogg_tool_problems(out: Path, streams: list[dict], src: Path | None = None) -> list[str]:
    """What opusinfo / ogginfo / gst-discoverer-1.0 say against `out` and not against `src`
    (an Ogg input) too."""
    problems = []
    tools = ["ogginfo"] + (["opusinfo"] if any(s.get("codec_name") == "opus" for s in streams) else [])
    for tool in tools:
        status, bad = ogg_tool_report(tool, out)
        if src is not None and src.suffix in (".ogg", ".opus"):
            src_status, src_bad = ogg_tool_report(tool, src)
            bad -= src_bad
            if status != 0 and src_status != 0 and not bad:
                status = 0
        if status != 0 or bad:
            problems.append(f"`{tool} {out.name}` exit {status}: {sorted(bad)[:5]}")
    ok, text = discover(out)
    if not ok and (src is None or discover(src)[0]):
        problems.append(f"gst-discoverer-1.0 failed: {lib.tail(text, 300)}")
    return problems
