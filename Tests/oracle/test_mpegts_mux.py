"""MPEG-TS written by MPEGTSMuxer and HLS presentations written by HLSMuxer (issue 30, item 2):
`mk-remux IN out.ts`, `mk-remux IN DIR --hls SECONDS [--segment-format fmp4]`, and the same through the C and Python
catalogue calls (mk_remux, mediakit.remux).

Oracles (ORACLES.md, MPEG-TS):
  packets   ffprobe's packets of our .ts equal those of ffmpeg's own `ffmpeg -i IN -map 0 -c copy
            out.ts`, track by track: size, key flag, duration, pts and dts relative to the
            track's first (ffprobe's parsers cut the audio PES back into frames);
  frames    `ffmpeg -i X -map 0 -c copy -f framemd5` of our .ts equals it of ffmpeg's, track by
            track: the same bytes per frame (Annex B with AUDs and parameter sets, ADTS, the
            Opus control header stripped back);
  bytes     where ffmpeg's layout is matched packet for packet, our file is ffmpeg's byte for
            byte apart from the SDT (PID 0x11: our provider name);
  HLS       framemd5 of DIR/index.m3u8 equals that of ffmpeg's .ts of the whole source (every
            packet once, in order: no gap or overlap at segment edges); the segment durations
            and ffprobe's packets (timestamps included) those of `ffmpeg -f hls -hls_time S` of
            the same source (the same cuts, the audio PES cut where ffmpeg cuts them); the
            playlist's tags; each segment a TS ffprobe reads on its own, starting with a key
            frame.
  HLS fMP4  (`--segment-format fmp4`) framemd5 and ffprobe's packets of DIR/index.m3u8 equal
            those of ffmpeg's own MP4 copy of the source (`ffmpeg -i IN -map 0 -c copy out.mp4`);
            the segment durations those of `ffmpeg -f hls -hls_segment_type fmp4`, adding up to
            the cut track's length; init.mp4 is ftyp + moov; each segment (styp, moof + mdat)
            read after init.mp4 starts with a key frame and gives the packets, at the
            timestamps, that the whole playlist gives there.
Sources: ../shared/media (MP4 with H.264 / HEVC + AAC, AC-3 + AAC, MP3, Opus in MP4 and
Matroska, MP2) and streams ffmpeg makes in the test (E-AC-3 in Matroska with B-frames, MPEG-2
video + AC-3, TS to TS, a raw H.264 stream).
"""
from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

import oracle_lib as lib

SHARED = {
    "h264_aac": "mp4_h264_aac_moov_at_start_ctts_8s.mp4",
    "hevc_aac_elst": "mp4_hevc_hvc1_aac_ctts_elst.mp4",
    "hev1": "mp4_hevc_hev1_1080p_1s.mp4",
    "ac3_aac": "mp4_two_audio_tracks_ac3_5p1_and_aac.mp4",
    "mp3": "mp3_mpeg2_22k_mono_cbr_no_xing.mp3",
    "opus_mp4": "fmp4_opus_mono_10s.mp4",
    "opus_51_mka": "mka_opus_5p1.mka",
    "mp2": "mp2_mpeg1_layer2_44k_unsupported.mp2",
}
# name -> (output file, ffmpeg arguments after the inputs: video testsrc2 then audio sine, 3 s each)
GENERATED = {
    "h264_eac3_mkv": ("src.mkv", ["-c:v", "libx264", "-bf", "2", "-g", "25", "-c:a", "eac3", "-ar", "48000"]),
    "mpeg2_ac3_mp4": ("src.mp4", ["-c:v", "mpeg2video", "-bf", "2", "-c:a", "ac3", "-ar", "48000"]),
    "ts_h264_aac": ("src.ts", ["-c:v", "libx264", "-bf", "2", "-g", "25", "-c:a", "aac"]),
    "raw_h264": ("src.h264", ["-an", "-c:v", "libx264", "-bf", "0"]),
    # 2.1 AAC: FFmpeg's encoder states it in a program config element (channel configuration 0).
    "aac_pce": ("src.m4a", ["-map", "1:a", "-af", "pan=2.1|FL=c0|FR=0.5*c0|LFE=0.25*c0", "-c:a", "aac"]),
}
# The files that are ffmpeg's byte for byte (the SDT aside).
BYTE_EXACT = {"h264_aac", "hevc_aac_elst", "hev1", "ac3_aac", "opus_mp4", "ts_h264_aac", "h264_eac3_mkv", "aac_pce"}


def _source(name: str, shared_media: Path | None, tmp_path_factory) -> Path:
    if name in SHARED:
        assert shared_media is not None
        return shared_media / SHARED[name]
    out_name, args = GENERATED[name]
    out = tmp_path_factory.getbasetemp() / f"tsmux-{name}-{out_name}"
    if not out.exists():
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=d=3:s=320x240:r=25",
               "-f", "lavfi", "-i", "sine=d=3", *args, str(out)]
        lib.oracle_ok(lib.run(cmd), cmd)
    return out


@pytest.fixture
def source(request, tmp_path_factory) -> Path:
    name = request.param
    shared = request.getfixturevalue("shared_media") if name in SHARED else None
    return _source(name, shared, tmp_path_factory)


def _ffmpeg_ts(src: Path, out: Path) -> Path:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", str(src), "-map", "0", "-c", "copy", "-f", "mpegts", str(out)]
    lib.oracle_ok(lib.run(cmd), cmd)
    return out


def packets_by_track(path: Path) -> dict[str, list[tuple]]:
    """ffprobe's packets per stream: (pts, dts relative to the stream's first; duration, size, flags)."""
    cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts,dts,duration,size,flags", "-of", "csv=p=0", str(path)]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    tracks: dict[str, list[tuple]] = {}
    first: dict[str, tuple[int, int]] = {}
    for line in proc.stdout.decode().splitlines():
        f = line.split(",")
        if len(f) < 6:
            continue
        s, pts, dts, duration, size, flags = f[:6]
        p = int(pts) if pts != "N/A" else None
        d = int(dts) if dts != "N/A" else None
        first.setdefault(s, (p or 0, d or 0))
        tracks.setdefault(s, []).append((None if p is None else p - first[s][0], None if d is None else d - first[s][1],
                                         duration, int(size), flags))
    return tracks


def framemd5_by_track(path: Path, *before: str) -> dict[str, list[tuple]]:
    """`ffmpeg -f framemd5` per stream: (duration, size, md5) of each packet, in order."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", *before, "-i", str(path), "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    tracks: dict[str, list[tuple]] = {}
    for line in proc.stdout.decode().splitlines():
        if line.startswith("#"):
            continue
        f = [x.strip() for x in line.split(",")]
        tracks.setdefault(f[0], []).append((f[3], f[4], f[5]))
    return tracks


def without_sdt(data: bytes) -> bytes:
    """The transport packets of `data` but those of PID 0x11 (the SDT)."""
    assert len(data) % 188 == 0
    return b"".join(data[i:i + 188] for i in range(0, len(data), 188) if ((data[i + 1] & 0x1F) << 8 | data[i + 2]) != 0x11)


def _first_difference(ours: dict, ref: dict) -> str:
    for s in sorted(set(ours) | set(ref)):
        a, b = ours.get(s, []), ref.get(s, [])
        if len(a) != len(b):
            return f"stream {s}: {len(a)} packets, ffmpeg's .ts {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return f"stream {s}, packet {i}: ours {x}, ffmpeg's {y}"
    return "no difference"


@pytest.mark.parametrize("source", list(SHARED) + list(GENERATED), indirect=True)
def test_ts_reads_back_like_ffmpegs_copy(source: Path, mk_remux: Path, tmp_path: Path, request) -> None:
    name = request.node.callspec.params["source"]
    ours, ref = tmp_path / "ours.ts", _ffmpeg_ts(source, tmp_path / "ffmpeg.ts")
    cmd = [mk_remux, str(source), str(ours), "--quiet"]
    lib.check_ok(lib.run(cmd), cmd)
    mine, theirs = packets_by_track(ours), packets_by_track(ref)
    assert mine and mine == theirs, f"{name}: ffprobe's packets differ: {_first_difference(mine, theirs)}"
    mine, theirs = framemd5_by_track(ours), framemd5_by_track(ref)
    assert mine == theirs, f"{name}: framemd5 differs: {_first_difference(mine, theirs)}"
    if name in BYTE_EXACT:
        assert without_sdt(ours.read_bytes()) == without_sdt(ref.read_bytes()), f"{name}: not ffmpeg's file byte for byte (SDT aside)"


def _playlist(path: Path) -> tuple[dict[str, str], list[tuple[float, str]]]:
    lines = path.read_text().splitlines()
    assert lines[0] == "#EXTM3U" and lines[-1] == "#EXT-X-ENDLIST", lines
    tags = {l.split(":", 1)[0]: (l.split(":", 1)[1] if ":" in l else "") for l in lines if l.startswith("#EXT") and not l.startswith("#EXTINF")}
    segments = [(float(l.split(":", 1)[1].rstrip(",")), lines[i + 1]) for i, l in enumerate(lines) if l.startswith("#EXTINF:")]
    return tags, segments


@pytest.mark.parametrize("source,seconds", [("h264_aac", 2), ("hevc_aac_elst", 0.5), ("ts_h264_aac", 1), ("mp3", 0.3)],
                         indirect=["source"])
def test_hls_reads_back_whole_and_cuts_like_ffmpeg(source: Path, seconds: float, mk_remux: Path, tmp_path: Path) -> None:
    out = tmp_path / "hls"
    cmd = [mk_remux, str(source), str(out), "--hls", str(seconds), "--quiet"]
    lib.check_ok(lib.run(cmd), cmd)
    playlist = out / "index.m3u8"
    tags, segments = _playlist(playlist)
    assert tags["#EXT-X-VERSION"] == "3" and tags["#EXT-X-PLAYLIST-TYPE"] == "VOD", tags
    assert int(tags["#EXT-X-TARGETDURATION"]) == max(1, math.ceil(max(d for d, _ in segments))), (tags, segments)
    assert sorted(p.name for p in out.iterdir()) == sorted(["index.m3u8"] + [n for _, n in segments]), "no file but the playlist's"
    # Every packet once, in order: the playlist's frames are those of ffmpeg's .ts of the whole
    # source; its packets (timestamps included) those of ffmpeg's own HLS presentation.
    ref = _ffmpeg_ts(source, tmp_path / "ffmpeg.ts")
    mine, theirs = framemd5_by_track(playlist), framemd5_by_track(ref)
    assert mine == theirs, f"framemd5 through the playlist differs: {_first_difference(mine, theirs)}"
    ff = tmp_path / "ff"
    ff.mkdir()
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(source), "-map", "0", "-c", "copy", "-f", "hls", "-hls_time", str(seconds),
               "-hls_playlist_type", "vod", str(ff / "index.m3u8")]
    lib.oracle_ok(lib.run(ref_cmd), ref_cmd)
    _, theirs_segments = _playlist(ff / "index.m3u8")
    assert [round(d, 3) for d, _ in segments] == [round(d, 3) for d, _ in theirs_segments], (segments, theirs_segments)
    mine, theirs = packets_by_track(playlist), packets_by_track(ff / "index.m3u8")
    assert mine == theirs, f"packets through the playlist differ from ffmpeg's HLS: {_first_difference(mine, theirs)}"
    # Each segment plays on its own: ffprobe reads it, its first packet of the cut track is a key frame.
    for _, name in segments:
        info = lib.ffprobe_json(out / name)
        assert info["format"]["format_name"] == "mpegts", name
        first = packets_by_track(out / name)
        video = [s for s in info["streams"] if s.get("codec_type") == "video"]
        key_stream = str(video[0]["index"]) if video else "0"
        assert first[key_stream][0][4].startswith("K"), f"{name} starts with a non-key frame"


def test_refusals_name_the_codec_and_leave_nothing(mk_remux: Path, tmp_path: Path) -> None:
    """A codec MPEG-TS does not carry here (Vorbis) is refused naming it; nothing is left."""
    src = tmp_path / "in.ogg"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", "sine=d=0.5", "-c:a", "libvorbis", str(src)]
    lib.oracle_ok(lib.run(cmd), cmd)
    for out in (tmp_path / "out.ts", tmp_path / "hls"):
        extra = ["--hls", "1"] if out.suffix == "" else []
        proc = lib.run([mk_remux, str(src), str(out), *extra])
        assert proc.returncode != 0 and b"vorbis" in proc.stderr, proc.stderr
        leftovers = [p.name for p in tmp_path.iterdir() if p.name not in ("in.ogg", "hls")]
        assert not leftovers, leftovers
    assert not any((tmp_path / "hls").iterdir()), list((tmp_path / "hls").iterdir())


C_REMUX = r'''
#include <stdio.h>
#include <string.h>
#include "mediakit/mediakit.h"
int main(int argc, char **argv) {
    /* argv: src, out.ts, out.m3u8, segment seconds */
    if (argc != 5) return 2;
    if (mk_remux(argv[1], argv[2], NULL) != MK_OK) { fprintf(stderr, "ts: %s\n", mk_last_error()); return 1; }
    mk_muxer_settings s;
    mk_muxer_default_settings(&s);
    s.layout = MK_LAYOUT_FRAGMENTED;
    s.fragment_seconds = 0;
    sscanf(argv[4], "%lf", &s.fragment_seconds);
    if (mk_remux(argv[1], argv[3], &s) != MK_OK) { fprintf(stderr, "hls: %s\n", mk_last_error()); return 1; }
    return 0;
}
'''


def test_c_and_python_reach_ts_and_hls_through_the_catalogue(mk_bin: Path, shared_media: Path, tmp_path: Path) -> None:
    """mk_remux (C) and mediakit.remux (Python) into .ts and .m3u8 (with a segment duration:
    the fragmented layout's seconds) read back as ffmpeg's .ts of the source does."""
    from test_capi import _build, _libdir
    src = shared_media / SHARED["h264_aac"]
    ref = _ffmpeg_ts(src, tmp_path / "ffmpeg.ts")
    want = framemd5_by_track(ref)
    c_file = tmp_path / "remux.c"
    c_file.write_text(C_REMUX)
    program = _build(c_file, tmp_path / "remux", _libdir(mk_bin))
    (tmp_path / "c").mkdir()
    cmd = [program, str(src), str(tmp_path / "c.ts"), str(tmp_path / "c" / "index.m3u8"), "2"]
    lib.check_ok(lib.run(cmd), cmd, who="remux.c")
    script = ("import sys, mediakit\n"
              "mediakit.remux(sys.argv[1], sys.argv[2])\n"
              "mediakit.remux(sys.argv[1], sys.argv[3], fragment=2.0)\n")
    (tmp_path / "py").mkdir()
    env = dict(__import__("os").environ, PYTHONPATH=str(lib.REPO / "Bindings" / "python"),
               MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"))
    cmd = [sys.executable, "-c", script, str(src), str(tmp_path / "py.ts"), str(tmp_path / "py" / "index.m3u8")]
    lib.check_ok(lib.run(cmd, env=env), cmd, who="python")
    for out in ("c.ts", "c/index.m3u8", "py.ts", "py/index.m3u8"):
        got = framemd5_by_track(tmp_path / out)
        assert got == want, f"{out}: {_first_difference(got, want)}"
    for d in ("c", "py"):
        _, segments = _playlist(tmp_path / d / "index.m3u8")
        assert len(segments) > 1, f"{d}: one segment for 8 s at 2 s"


# --- HLS with fragmented MP4 (CMAF) segments: `mk-remux IN DIR --hls S --segment-format fmp4` ---

def _top_boxes(data: bytes) -> list[str]:
    """The types of the top-level ISO BMFF boxes of `data` (sizes followed, 64-bit ones too)."""
    types, at = [], 0
    while at + 8 <= len(data):
        size, kind = int.from_bytes(data[at:at + 4], "big"), data[at + 4:at + 8].decode("latin-1")
        if size == 1:
            size = int.from_bytes(data[at + 8:at + 16], "big")
        assert size >= 8 and at + size <= len(data), f"box {kind} at {at}: size {size} of {len(data)}"
        types.append(kind)
        at += size
    assert at == len(data), f"{len(data) - at} bytes after the last box"
    return types


def _sizes_and_hashes(path: Path) -> dict[str, list[tuple]]:
    """framemd5's (size, md5) per stream, in order (durations are in each file's time base)."""
    return {s: [(size, md5) for _, size, md5 in packets] for s, packets in framemd5_by_track(path).items()}


def _relative_times(path: Path) -> dict[str, list[tuple[float, float]]]:
    """ffprobe's (pts, dts) per stream in seconds, relative to the stream's first packet's."""
    cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts_time,dts_time", "-of", "csv=p=0", str(path)]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    rows: dict[str, list[tuple[float, float]]] = {}
    for line in proc.stdout.decode().splitlines():
        if line.count(",") < 2:
            continue   # a packet's side data
        s, pts, dts = line.split(",")[:3]
        rows.setdefault(s, []).append((float(pts), float(dts if dts != "N/A" else pts)))
    return {s: [(p - r[0][0], d - r[0][1]) for p, d in r] for s, r in rows.items()}


def _absolute_packets(path: Path) -> dict[str, list[tuple]]:
    """ffprobe's packets per stream with their own timestamps: (pts, dts, size, key)."""
    cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts,dts,size,flags", "-of", "csv=p=0", str(path)]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    tracks: dict[str, list[tuple]] = {}
    for line in proc.stdout.decode().splitlines():
        s, pts, dts, size, flags = line.split(",")[:5]
        tracks.setdefault(s, []).append((pts, dts, int(size), flags.startswith("K")))
    return tracks


@pytest.mark.parametrize("source,seconds", [("h264_aac", 2), ("hevc_aac_elst", 0.5), ("ts_h264_aac", 1), ("mp3", 0.3)],
                         indirect=["source"])
def test_hls_fmp4_reads_back_whole(source: Path, seconds: float, mk_remux: Path, tmp_path: Path) -> None:
    """The fMP4 playlist read by ffmpeg's HLS reader is the source's stream copied into MP4
    (ffmpeg's own `-c copy out.mp4`): every packet once, in order, same bytes (framemd5), same
    timestamps relative to each track's first (no gap or overlap at segment edges); the cuts are
    those of `ffmpeg -f hls -hls_segment_type fmp4`; init.mp4 is ftyp + moov (mvex, no sample);
    each segment, read after init.mp4, starts with a key frame at the decode time (tfdt) the
    whole read gives it."""
    out = tmp_path / "hls"
    cmd = [mk_remux, str(source), str(out), "--hls", str(seconds), "--segment-format", "fmp4", "--quiet"]
    lib.check_ok(lib.run(cmd), cmd)
    playlist = out / "index.m3u8"
    tags, segments = _playlist(playlist)
    assert tags["#EXT-X-VERSION"] == "7" and tags["#EXT-X-PLAYLIST-TYPE"] == "VOD", tags
    assert tags["#EXT-X-MAP"] == 'URI="init.mp4"', tags
    assert int(tags["#EXT-X-TARGETDURATION"]) == max(1, math.ceil(max(d for d, _ in segments))), (tags, segments)
    assert all(n.endswith(".m4s") for _, n in segments), segments
    assert sorted(p.name for p in out.iterdir()) == sorted(["index.m3u8", "init.mp4"] + [n for _, n in segments]), "no file but the playlist's"
    init = (out / "init.mp4").read_bytes()
    assert _top_boxes(init) == ["ftyp", "moov"] and b"mvex" in init, _top_boxes(init)
    ref = tmp_path / "ffmpeg.mp4"
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(source), "-map", "0", "-c", "copy", str(ref)]
    lib.oracle_ok(lib.run(ref_cmd), ref_cmd)
    # Every packet once, in order, with the bytes MP4 stores (framemd5's size and hash).
    mine, theirs = _sizes_and_hashes(playlist), _sizes_and_hashes(ref)
    assert mine == theirs, f"framemd5 through the playlist differs from ffmpeg's MP4 copy: {_first_difference(mine, theirs)}"
    # At the source's times (relative to each track's first, in seconds: MP4 may count them in
    # another time base): no gap or overlap where the segments meet.
    mine, theirs = _relative_times(playlist), _relative_times(source)
    assert mine.keys() == theirs.keys() and all(len(mine[k]) == len(theirs[k]) for k in mine), {k: len(v) for k, v in mine.items()}
    for k in mine:
        for i, (a, b) in enumerate(zip(mine[k], theirs[k])):
            assert all(abs(x - y) < 2e-5 for x, y in zip(a, b)), f"stream {k}, packet {i}: (pts, dts) {a}, the source's {b}"
    # The cuts: those of ffmpeg's own fMP4 HLS; the EXTINFs add up to the cut track's length.
    ff = tmp_path / "ff"
    ff.mkdir()
    adts = ["-bsf:a", "aac_adtstoasc"] if source.suffix == ".ts" else []   # FFmpeg 5.1's mp4 muxer wants it; ours strips ADTS itself
    ff_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(source), "-map", "0", "-c", "copy", *adts, "-f", "hls", "-hls_time", str(seconds),
              "-hls_segment_type", "fmp4", "-hls_playlist_type", "vod", str(ff / "index.m3u8")]
    lib.oracle_ok(lib.run(ff_cmd), ff_cmd)
    _, theirs_segments = _playlist(ff / "index.m3u8")
    assert [round(d, 3) for d, _ in segments] == [round(d, 3) for d, _ in theirs_segments], (segments, theirs_segments)
    ref_info = lib.ffprobe_json(ref, ignore_editlist=False)
    cut_index = next((s["index"] for s in ref_info["streams"] if s.get("codec_type") == "video"), 0)
    length = float(ref_info["streams"][cut_index]["duration"])
    assert abs(sum(d for d, _ in segments) - length) < 0.05, (segments, length)
    # Each segment after init.mp4: styp, then moof + mdat; its packets are the whole read's, in
    # order, at the same timestamps (tfdt), and the cut track's first is a key frame.
    whole = _absolute_packets(playlist)
    video = [s for s in lib.ffprobe_json(playlist)["streams"] if s.get("codec_type") == "video"]
    cut = str(video[0]["index"]) if video else "0"
    joined: dict[str, list[tuple]] = {}
    for _, name in segments:
        data = (out / name).read_bytes()
        boxes = _top_boxes(data)
        assert boxes[0] == "styp" and boxes[1:] and all(b == "moof" for b in boxes[1::2]) and all(b == "mdat" for b in boxes[2::2]), (name, boxes)
        alone = tmp_path / f"alone-{name}.mp4"
        alone.write_bytes(init + data)
        got = _absolute_packets(alone)
        assert got[cut][0][3], f"{name} starts with a non-key frame"
        for s, packets in got.items():
            joined.setdefault(s, []).extend(packets)
    assert joined == whole, f"segments read one by one differ from the playlist: {_first_difference(joined, whole)}"


C_REMUX_FMP4 = r'''
#include <stdio.h>
#include "mediakit/mediakit.h"
int main(int argc, char **argv) {
    /* argv: src, out.m3u8; fMP4 segments of 2 s */
    if (argc != 3) return 2;
    mk_muxer_settings s;
    mk_muxer_default_settings(&s);
    s.layout = MK_LAYOUT_FRAGMENTED;
    s.segment_format = "fmp4";
    if (mk_remux(argv[1], argv[2], &s) != MK_OK) { fprintf(stderr, "hls: %s\n", mk_last_error()); return 1; }
    s.segment_format = "webm";
    if (mk_remux(argv[1], argv[2], &s) == MK_OK) { fprintf(stderr, "segment_format webm was taken\n"); return 1; }
    return 0;
}
'''


def test_c_and_python_write_hls_fmp4_through_the_catalogue(mk_bin: Path, shared_media: Path, tmp_path: Path) -> None:
    """mk_remux with mk_muxer_settings.segment_format "fmp4" (C) and mediakit.remux(...,
    segment_format="fmp4") (Python) write init.mp4 and .m4s segments whose playlist reads back
    as ffmpeg's MP4 copy of the source; another segment format is refused."""
    from test_capi import _build, _libdir
    src = shared_media / SHARED["h264_aac"]
    ref = tmp_path / "ffmpeg.mp4"
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(src), "-map", "0", "-c", "copy", str(ref)]
    lib.oracle_ok(lib.run(ref_cmd), ref_cmd)
    want = framemd5_by_track(ref)
    c_file = tmp_path / "remux.c"
    c_file.write_text(C_REMUX_FMP4)
    program = _build(c_file, tmp_path / "remux", _libdir(mk_bin))
    (tmp_path / "c").mkdir()
    cmd = [program, str(src), str(tmp_path / "c" / "index.m3u8")]
    lib.check_ok(lib.run(cmd), cmd, who="remux.c")
    script = ("import sys, mediakit\n"
              "mediakit.remux(sys.argv[1], sys.argv[2], fragment=2.0, segment_format='fmp4')\n"
              "try:\n"
              "    mediakit.Muxer(sys.argv[3], segment_format='fmp4')\n"
              "except mediakit.InvalidArgumentError as e:\n"
              "    assert 'segment-format' in str(e), e\n"
              "else:\n"
              "    raise SystemExit('an MP4 file took segment_format')\n")
    (tmp_path / "py").mkdir()
    env = dict(__import__("os").environ, PYTHONPATH=str(lib.REPO / "Bindings" / "python"),
               MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"))
    cmd = [sys.executable, "-c", script, str(src), str(tmp_path / "py" / "index.m3u8"), str(tmp_path / "x.mp4")]
    lib.check_ok(lib.run(cmd, env=env), cmd, who="python")
    for d in ("c", "py"):
        tags, segments = _playlist(tmp_path / d / "index.m3u8")
        assert tags["#EXT-X-MAP"] == 'URI="init.mp4"' and len(segments) > 1, (d, tags, segments)
        assert (tmp_path / d / "init.mp4").exists() and all(n.endswith(".m4s") for _, n in segments), (d, segments)
        got = framemd5_by_track(tmp_path / d / "index.m3u8")
        assert got == want, f"{d}: {_first_difference(got, want)}"
