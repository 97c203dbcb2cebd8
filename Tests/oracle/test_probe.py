"""mk-probe (our MP4 demuxer) against ffprobe on the same file.

Inputs: the generated files (conftest/oracle_lib.GENERATED) and every progressive
MP4/MOV/M4A/QTA/3GP of ../shared/media (not broken_*, not fragmented).

Oracles (ORACLES.md):
  packets      ffprobe -v error -ignore_editlist 1 \\
                 -show_entries packet=stream_index,pts,dts,duration,size,pos,flags -of csv=p=0 FILE
  track facts  ffprobe -v error -ignore_editlist 1 -show_streams -show_format -of json FILE

Cover art that ffmpeg turns into extra "attached_pic" streams (udta/covr, not a trak)
is not a track: those streams and their packets are left out of the reference, and
the remaining streams are numbered 0, 1, ... in ffprobe's order.
"""

from __future__ import annotations

import json
import math

import pytest

import oracle_lib as lib

MEDIA = lib.media_params()


def _known(request, media, test: str) -> None:
    reason = lib.known_difference(media.name, test)
    if reason:
        request.applymarker(pytest.mark.xfail(reason=f"ffprobe is wrong here: {reason}",
                                              strict=True))


@pytest.mark.parametrize("media", MEDIA, indirect=True)
def test_packets_equal_ffprobe(media, mk_probe, request):
    """`mk-probe --packets FILE` equals ffprobe's packets with -ignore_editlist 1.

    Oracle: `ffprobe -v error -ignore_editlist 1 -show_entries
    packet=stream_index,pts,dts,duration,size,pos,flags -of csv=p=0 FILE`, its flags
    mapped to K (first flag K) or _ . Every line is compared, in file order:
    track, pts, dts, duration, size, byte offset, key flag.
    """
    _known(request, media, "packets")
    cmd = [mk_probe, "--packets", media]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    ours = [l.strip() for l in proc.stdout.decode("utf-8", "replace").splitlines() if l.strip()]
    ref = lib.expected_packets(media)
    notes = []
    silent = lib.TRACKS_WITHOUT_FFPROBE_PACKETS.get(media.name)
    if silent:
        track, why = silent
        ours = [l for l in ours if l.split(",")[0] != str(track)]
        notes.append(f"track {track} left out: {why}")
    # Tracks with a ctts box: FFmpeg 5.1's mov demuxer sets no packet duration there, so
    # ffprobe prints libavformat's guess (from the frame rate, or N/A). The sample-table
    # duration is checked against ffprobe's own dts instead: duration = next dts - dts.
    ctts = lib.box_summary(str(media)).get("ctts", [])
    guessed = {i for i, has in enumerate(ctts) if has}
    if guessed:
        ours, ref = lib.check_durations_against_dts(ours, ref, guessed, media.name)
        notes.append(f"tracks {sorted(guessed)} (ctts): duration checked as ffprobe's next dts - dts")
    if media.name in lib.PARSER_DELAYED_ORDER:
        ours = sorted(ours, key=lambda l: int(l.split(",")[0]))
        ref = sorted(ref, key=lambda l: int(l.split(",")[0]))
        notes.append("compared track by track: " + lib.PARSER_DELAYED_ORDER[media.name])
    diff = lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    if diff and notes:
        diff += "\n(" + "; ".join(notes) + ")"
    if diff:
        pytest.fail(f"{media.name}: `mk-probe --packets` differs from "
                    f"`{lib.shell_line(lib.ffprobe_packets_cmd(media))}`\n"
                    f"columns: track,pts,dts,duration,size,offset,flags\n{diff}",
                    pytrace=False)


def _rotation_close(a: float, b: float) -> bool:
    """Same angle, same sign convention (90 and -270 are equal; 90 and -90 are not)."""
    return abs((a - b + 180.0) % 360.0 - 180.0) < 0.5


@pytest.mark.parametrize("media", MEDIA, indirect=True)
def test_track_facts_match_ffprobe(media, mk_probe, request):
    """`mk-probe --json FILE` gives ffprobe's track facts.

    Oracle: `ffprobe -v error -ignore_editlist 1 -show_streams -show_format -of json FILE`.
    Per track: type, codec (ffprobe codec_name, or the sample entry fourcc when ffprobe
    has no name; for tracks that are neither audio nor video either is accepted),
    width/height (video), sample_rate/channels (audio), rotation (side_data_list Display
    Matrix, same sign as ffprobe, 0 if none), reflected (the sign of the determinant of
    ffprobe's display matrix), language (tags.language, "und" if absent),
    duration within max(1 ms, the track's longest packet per ffprobe's packets).
    Container: format.duration within max(1 ms, the longest packet of any track).
    """
    _known(request, media, "json")
    cmd = [mk_probe, "--json", media]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    try:
        ours = json.loads(proc.stdout)
    except ValueError as e:
        pytest.fail(f"`mk-probe --json` did not print JSON ({e}):\n{lib.tail(proc.stdout)}",
                    pytrace=False)

    info = lib.ffprobe_json(media)
    streams = lib.track_streams(info)
    longest = lib.max_packet_seconds(media)
    problems: list[str] = []

    tracks = ours.get("tracks") if isinstance(ours, dict) else None
    if not isinstance(tracks, list):
        pytest.fail(f"`mk-probe --json`: no \"tracks\" list in {lib.tail(proc.stdout, 300)}",
                    pytrace=False)
    if len(tracks) != len(streams):
        problems.append(f"{len(tracks)} tracks, ffprobe has {len(streams)} "
                        f"({', '.join(lib.codec_of(s) or '?' for s in streams)})")

    def field(track: dict, key: str, kind, where: str):
        value = track.get(key)
        if value is None or (kind is float and not isinstance(value, (int, float))) \
                or (kind is int and not isinstance(value, int)) \
                or (kind is str and not isinstance(value, str)) \
                or (kind is bool and not isinstance(value, bool)):
            problems.append(f"{where}: \"{key}\" missing or not {kind.__name__}: {value!r}")
            return None
        return value

    silent = lib.TRACKS_WITHOUT_FFPROBE_PACKETS.get(media.name)
    for rank, (t, s) in enumerate(zip(tracks, streams)):
        where = f"track {rank} ({lib.codec_of(s) or s.get('codec_type')})"
        if silent and rank == silent[0]:
            # FFmpeg turns this track into chapters and describes it as a bin_data stream
            # (see TRACKS_WITHOUT_FFPROBE_PACKETS); only its place in the list is compared.
            continue
        if not isinstance(t, dict):
            problems.append(f"{where}: not an object: {t!r}")
            continue
        if t.get("index") != rank:
            problems.append(f"{where}: index {t.get('index')!r}, expected {rank}")
        ref_type = s.get("codec_type", "")
        our_type = field(t, "type", str, where)
        if our_type is not None:
            if ref_type in ("video", "audio") and our_type != ref_type:
                problems.append(f"{where}: type {our_type!r}, ffprobe {ref_type!r}")
            if ref_type not in ("video", "audio") and our_type in ("video", "audio"):
                problems.append(f"{where}: type {our_type!r}, ffprobe {ref_type!r}")

        codec = field(t, "codec", str, where)
        if codec is not None:
            expected = lib.codec_of(s)
            accepted = {expected}
            if ref_type not in ("video", "audio"):
                accepted |= {s.get("codec_name"), s.get("codec_tag_string")} - {None}
            if codec not in accepted:
                problems.append(f"{where}: codec {codec!r}, ffprobe {expected!r}")

        if ref_type == "video":
            for key in ("width", "height"):
                v = field(t, key, int, where)
                if v is not None and v != s.get(key):
                    problems.append(f"{where}: {key} {v}, ffprobe {s.get(key)}")
        if ref_type == "audio":
            v = field(t, "sample_rate", int, where)
            if v is not None and v != int(s.get("sample_rate", 0)):
                problems.append(f"{where}: sample_rate {v}, ffprobe {s.get('sample_rate')}")
            v = field(t, "channels", int, where)
            if v is not None and v != s.get("channels"):
                problems.append(f"{where}: channels {v}, ffprobe {s.get('channels')}")

        rot = field(t, "rotation", float, where)
        if rot is not None and not _rotation_close(float(rot), lib.rotation_of(s)):
            problems.append(f"{where}: rotation {rot}, ffprobe {lib.rotation_of(s)}")
        refl = field(t, "reflected", bool, where)
        if refl is not None and refl != lib.reflected_of(s):
            problems.append(f"{where}: reflected {refl}, ffprobe's display matrix "
                            f"{lib.display_matrix_of(s)} says {lib.reflected_of(s)}")

        lang = field(t, "language", str, where)
        ref_lang = (s.get("tags") or {}).get("language", "und")
        if lang is not None and lang != ref_lang:
            problems.append(f"{where}: language {lang!r}, ffprobe {ref_lang!r}")

        dur = field(t, "duration", float, where)
        if dur is not None and "duration" in s:
            tol = max(0.001, float(longest.get(rank, 0)))
            ref_dur = float(s["duration"])
            if s.get("nb_frames", "N/A") in ("N/A", "0") and lib.mdhd_duration(media, s["index"]) == 0:
                # A track with no samples whose mdhd states a duration of 0: libavformat
                # gives such a stream the container's duration (fill_all_stream_timings, even
                # with -fflags +nofillin); the file's statement is the oracle.
                ref_dur = 0.0
            if not math.isfinite(dur) or abs(dur - ref_dur) > tol + 1e-6:
                problems.append(f"{where}: duration {dur} s, ffprobe {ref_dur} s "
                                f"(allowed +-{tol:.6f} s)")

    fmt = ours.get("format") if isinstance(ours, dict) else None
    ref_fmt_dur = (info.get("format") or {}).get("duration")
    if not isinstance(fmt, dict) or not isinstance(fmt.get("duration"), (int, float)):
        problems.append(f"format: no numeric \"duration\" in {fmt!r}")
    elif ref_fmt_dur is not None:
        tol = max([0.001] + [float(v) for v in longest.values()])
        if abs(float(fmt["duration"]) - float(ref_fmt_dur)) > tol + 1e-6:
            problems.append(f"format: duration {fmt['duration']} s, ffprobe {ref_fmt_dur} s "
                            f"(allowed +-{tol:.6f} s)")

    if problems:
        pytest.fail(f"{media.name}: `mk-probe --json` differs from `ffprobe -ignore_editlist 1 "
                    f"-show_streams -show_format`:\n  " + "\n  ".join(problems), pytrace=False)
