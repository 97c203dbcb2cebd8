"""Matroska / WebM (MatroskaDemuxer) against FFmpeg 5.1 (issue 16, demuxer part).

Inputs: every .webm / .mkv / .mka of ../shared/media (the broken_* ones only for "no crash"),
and files made here:
  ffmpeg   VP8 + Vorbis, VP9 + Opus, VP9 10-bit, AV1 (libaom) + Opus, H.264 + AAC (B-frames),
           HEVC, FLAC, Opus 5.1, MP3, AC-3, PCM in Matroska; a live WebM (`-live 1 -f webm`
           written to a pipe: Segment and Clusters of unknown size)
  mkvmerge the same audio remuxed by mkvtoolnix, which laces frames: Xiph, EBML and fixed-size
           lacing (the test checks each kind occurs, by walking the files' blocks)
  cut      generated files cut at 20 points

Oracles (ORACLES.md):
  packets  ffprobe -v error -nofind_stream_info -show_entries
           packet=stream_index,pts,dts,duration,size,pos,flags -of csv=p=0 FILE.
           -nofind_stream_info: with the probing pass, ffprobe prints N/A as the duration of
           the video packets it reads while probing and, for the packets after them, a duration
           guessed from the frame rate the probe estimated (33 for 30000/1001 fps) where the
           file states none (webm_vp9_192x144_2s.webm: packets 0-41 N/A, 42-61 33); that guess
           is the probe's, not the file's. The parsers FFmpeg's Matroska demuxer runs (Opus,
           Vorbis, FLAC, AC-3 and MPEG audio durations, VP8 / VP9 / AV1 key frames) run either way.
  facts    ffprobe -show_streams: codec, type, sample rate, channels, width, height
  decode   ffmpeg -c:a libopus|libvorbis / -c:v libdav1d (the plugins' libraries) -i FILE
           -f s16le | -fps_mode passthrough -f rawvideo -pix_fmt nv12: identical (audio |diff| <= 1)
  sources  the same file read by path (mk-probe), from a pipe (`mk-probe --packets -`) and from
           memory (Python mediakit.open(bytes), i.e. the C API's mk_demuxer_open_memory): identical
  seek     Python Demuxer.seek(t) at 20 times: the first video packet is the one ffmpeg
           `-seek_timestamp 1 -noaccurate_seek -ss t -copyts -i FILE -c copy` copies first, and the
           last key frame at or before t in ffprobe's packet list
  damage   cut files give ffprobe's packets of the cut file then a warning naming the offset;
           a damaged element header inside a Cluster gives ffprobe's packets of the damaged file
           (both resync at the next Cluster) and a warning naming the element path and offset;
           broken and byte-flipped files exit 0 or 1 with a message naming the file, no crash
           or hang (timeout 60 s)
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import pytest

import oracle_lib as lib

V = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25"]


def _sine(rate: int) -> list[str]:
    return ["-f", "lavfi", "-i", f"sine=f=440:sample_rate={rate}"]


# name -> ffmpeg arguments (after "ffmpeg -v error -y -nostdin"), the output file last.
FFMPEG: dict[str, list] = {
    "vp8_vorbis.webm": [*V, *_sine(44100), "-t", "2", "-c:v", "libvpx", "-g", "10", "-c:a", "libvorbis"],
    "vp9_opus.webm": [*V, *_sine(48000), "-t", "2.3", "-c:v", "libvpx-vp9", "-g", "10", "-deadline", "realtime",
                      "-cpu-used", "8", "-c:a", "libopus"],
    "vp9_10bit.webm": [*V, "-t", "1", "-c:v", "libvpx-vp9", "-pix_fmt", "yuv420p10le", "-deadline", "realtime",
                       "-cpu-used", "8", "-g", "10"],
    "av1_opus.webm": [*V, *_sine(48000), "-t", "1.5", "-c:v", "libaom-av1", "-cpu-used", "8", "-g", "10", "-c:a", "libopus"],
    "h264_aac.mkv": [*V, *_sine(44100), "-t", "2", "-c:v", "libx264", "-g", "12", "-bf", "2", "-c:a", "aac"],
    "hevc.mkv": [*V, "-t", "1", "-c:v", "libx265", "-x265-params", "log-level=none", "-g", "10", "-bf", "0"],
    "hevc_bframes.mkv": [*V, "-t", "1", "-c:v", "libx265", "-x265-params", "log-level=none:bframes=3", "-g", "12"],
    "flac.mka": [*_sine(44100), "-t", "1.3", "-c:a", "flac"],
    "opus_51.mka": [*_sine(48000), "-t", "1.7", "-af", "aformat=channel_layouts=5.1", "-c:a", "libopus"],
    "mp3.mka": [*_sine(44100), "-t", "1", "-c:a", "libmp3lame"],
    "ac3.mka": [*_sine(44100), "-t", "1", "-c:a", "ac3"],
    "pcm.mka": [*_sine(44100), "-t", "1", "-c:a", "pcm_s16le"],
    # A_MS/ACM: codecs Matroska has no ID for, named by the WAVEFORMATEX in CodecPrivate.
    "acm_adpcm_ms.mka": [*_sine(22050), "-t", "1.2", "-ac", "2", "-c:a", "adpcm_ms"],
    "acm_gsm_ms.mka": [*_sine(8000), "-t", "1.2", "-c:a", "libgsm_ms"],
    "acm_g726.mka": [*_sine(8000), "-t", "1.2", "-c:a", "g726"],
}
# Names, languages, flags and tags (kept: no -map_metadata -1 for this one).
TAGGED = {"tagged.mka": [*_sine(48000), *_sine(44100), "-t", "1", "-map", "0", "-map", "1", "-c:a", "libopus",
                         "-metadata", "title=A film", "-metadata", "ARTIST=Someone",
                         "-metadata:s:a:0", "title=Main", "-metadata:s:a:0", "language=ger",
                         "-metadata:s:a:1", "title=Commentary", "-metadata:s:a:1", "language=fre",
                         "-metadata:s:a:1", "comment=hello", "-disposition:a:0", "default", "-disposition:a:1", "forced"]}
# Written to a pipe: unknown sizes (live WebM).
LIVE = {"live.webm": [*V, *_sine(48000), "-t", "2", "-c:v", "libvpx", "-deadline", "realtime", "-g", "10",
                      "-c:a", "libopus", "-live", "1", "-f", "webm", "-"]}
# mkvmerge (mkvtoolnix) output: laced audio. name -> (source file made by ffmpeg, its arguments).
MKVMERGE = {
    "laced_vorbis.mka": ("src.ogg", [*_sine(44100), "-t", "2", "-c:a", "libvorbis"]),
    "laced_aac.mka": ("src.m4a", [*_sine(44100), "-t", "2", "-c:a", "aac"]),
    "laced_opus.mka": ("src.opus", [*_sine(48000), "-t", "2", "-c:a", "libopus"]),
    "laced_ac3.mka": ("src.ac3", [*_sine(44100), "-t", "2", "-c:a", "ac3"]),
    "laced_mp3.mka": ("src.mp3", [*_sine(44100), "-t", "2", "-c:a", "libmp3lame"]),
}
# live.webm with every Cluster's size field rewritten to "unknown" (all value bits 1, same
# length), as browsers' MediaRecorder writes WebM: Clusters end where the next one starts.
UNKNOWN_CLUSTERS = "live_unknown_clusters.webm"
# MP4 sources for the muxer tests (made by ffmpeg; not Matroska, so not in GENERATED).
MP4_SOURCES = {"vp9_opus.mp4": FFMPEG["vp9_opus.webm"]}
# vp9_opus.webm rewritten with a TrackTimestampScale on each track (see _track_scaled).
TRACK_SCALED = "track_scaled.mkv"
TRACK_SCALES = {1: 0.5, 2: 2.0}                 # TrackNumber -> TrackTimestampScale
TRACK_SCALED_DEFAULT_DURATION = {1: 40_000_000}  # TrackNumber -> DefaultDuration (ns)
# An ffmpeg file rewritten with its Tracks after the Clusters, as writers that finish the header
# last lay it out (see _tracks_last): name -> the ffmpeg file it is made from.
TRACKS_LAST = {"tracks_last.mkv": "h264_aac.mkv", "tracks_last.webm": "vp9_opus.webm"}
GENERATED = [*FFMPEG, *TAGGED, *LIVE, UNKNOWN_CLUSTERS, *MKVMERGE]
MKV_EXTS = (".webm", ".mkv", ".mka")


def _shared(broken: bool = False) -> list[str]:
    if not lib.SHARED_MEDIA.is_dir():
        return []
    return sorted(p.name for p in lib.SHARED_MEDIA.iterdir()
                  if p.suffix.lower() in MKV_EXTS and p.name.startswith("broken_") == broken)


@pytest.fixture(scope="session")
def gen_dir(tmp_path_factory) -> Path:
    return lib.shared_tmp(tmp_path_factory, "matroska")


def _ffmpeg(args: list, out: Path | None) -> None:
    cmd = ["ffmpeg", "-v", "error", "-y", "-nostdin", *args] + ([out] if out else [])
    proc = lib.run(cmd)
    if proc.returncode != 0:
        pytest.fail(f"could not generate {out}: `{lib.shell_line(cmd)}`\n{lib.tail(proc.stderr)}")
    return proc


def _vint_length(first: int) -> int:
    return next(n for n in range(1, 9) if first & (0x80 >> (n - 1)))


def _ebml_vint(data: bytes, i: int) -> tuple[int, int]:
    """The value and length of the EBML variable-size integer at data[i]."""
    n = _vint_length(data[i])
    v = data[i] & (0xFF >> n)
    for k in range(1, n):
        v = v << 8 | data[i + k]
    return v, n


def _ebml_children(data: bytes, start: int, end: int):
    """(ID bytes, data start, data end) of each element in data[start:end] (unknown sizes reach `end`)."""
    while start < end:
        n = _vint_length(data[start])
        ident = bytes(data[start:start + n])
        size, m = _ebml_vint(data, start + n)
        body = start + n + m
        if size == (1 << (7 * m)) - 1:
            size = end - body
        yield ident, body, min(end, body + size)
        start = body + size


def _ebml(ident: bytes, body: bytes) -> bytes:
    return ident + (1 << 56 | len(body)).to_bytes(8, "big") + body


def _track_scaled(data: bytes) -> bytes:
    """A copy of a Matroska file whose tracks count in their own ticks (RFC 9559 section 11.1, Track
    Ticks = TimestampScale x TrackTimestampScale ns): a TrackTimestampScale (TRACK_SCALES) and a
    DefaultDuration (TRACK_SCALED_DEFAULT_DURATION) in the TrackEntries, every block timestamp
    (Cluster Timestamp + block x TrackTimestampScale) and BlockDuration rewritten in track ticks.
    Kept: the EBML header, Info, Tracks, Clusters (SeekHead, Cues and Tags are left out: their
    positions would be wrong)."""
    import struct
    out = bytearray()
    for ident, b, e in _ebml_children(data, 0, len(data)):
        if ident != b"\x18\x53\x80\x67":
            out += _ebml(ident, data[b:e])
            continue
        seg = bytearray()
        for sid, sb, se in _ebml_children(data, b, e):
            if sid == b"\x15\x49\xa9\x66":                              # Info
                seg += _ebml(sid, data[sb:se])
            elif sid == b"\x16\x54\xae\x6b":                            # Tracks
                tracks = bytearray()
                for tid, tb, te in _ebml_children(data, sb, se):
                    body, number = bytearray(), None
                    for cid, cb, ce in _ebml_children(data, tb, te):
                        if cid == b"\xd7":
                            number = int.from_bytes(data[cb:ce], "big")
                        if cid != b"\x23\xe3\x83":                        # DefaultDuration: replaced
                            body += _ebml(cid, data[cb:ce])
                    if number in TRACK_SCALES:
                        body += _ebml(b"\x23\x31\x4f", struct.pack(">d", TRACK_SCALES[number]))
                    if number in TRACK_SCALED_DEFAULT_DURATION:
                        ns = TRACK_SCALED_DEFAULT_DURATION[number]
                        body += _ebml(b"\x23\xe3\x83", ns.to_bytes(4, "big"))
                    tracks += _ebml(tid, bytes(body))
                seg += _ebml(sid, bytes(tracks))
            elif sid == b"\x1f\x43\xb6\x75":                            # Cluster
                cluster, ct = bytearray(), 0

                def block(raw: bytes) -> bytes:
                    number, n = _ebml_vint(raw, 0)
                    scale = TRACK_SCALES.get(number, 1.0)
                    rel = struct.unpack(">h", raw[n:n + 2])[0]
                    rel = round((ct + rel) / scale) - int(ct / scale)
                    return raw[:n] + struct.pack(">h", rel) + raw[n + 2:]
                for cid, cb, ce in _ebml_children(data, sb, se):
                    if cid == b"\xe7":
                        ct = int.from_bytes(data[cb:ce], "big")
                        cluster += _ebml(cid, data[cb:ce])
                    elif cid == b"\xa3":
                        cluster += _ebml(cid, block(data[cb:ce]))
                    elif cid == b"\xa0":
                        group, number = bytearray(), None
                        for gid, gb, ge in _ebml_children(data, cb, ce):
                            if gid == b"\xa1":
                                number = _ebml_vint(data, gb)[0]
                                group += _ebml(gid, block(data[gb:ge]))
                            elif gid == b"\x9b":
                                ticks = round(int.from_bytes(data[gb:ge], "big") / TRACK_SCALES.get(number, 1.0))
                                group += _ebml(gid, ticks.to_bytes(8, "big"))
                            else:
                                group += _ebml(gid, data[gb:ge])
                        cluster += _ebml(cid, bytes(group))
                seg += _ebml(sid, bytes(cluster))
        out += _ebml(ident, bytes(seg))
    return bytes(out)


SEGMENT_ID, SEEKHEAD_ID, TRACKS_ID, VOID_ID = b"\x18\x53\x80\x67", b"\x11\x4d\x9b\x74", b"\x16\x54\xae\x6b", b"\xec"


def _void(total: int) -> bytes:
    """A Void element of `total` bytes (at least 9), its size written in 8 bytes."""
    assert total >= 9, total
    return VOID_ID + (1 << 56 | (total - 9)).to_bytes(8, "big") + bytes(total - 9)


def _tracks_last(data: bytes) -> bytes:
    """A copy of an ffmpeg Matroska file whose Tracks element comes after the Clusters (at the end
    of the Segment), as writers that finalise the header last place it: the Tracks element is
    replaced by a Void of its length (so every Cluster and Cue keeps its position) and appended
    at the end of the Segment; the SeekHead is rewritten over its own room and the Void ffmpeg
    reserves after it, each SeekPosition in 8 bytes, the Tracks entry pointing to the new place."""
    seg = data.find(SEGMENT_ID)
    size_len = _vint_length(data[seg + 4])
    assert size_len == 8, "ffmpeg writes the Segment size in 8 bytes"
    base = seg + 4 + size_len
    elements = list(_ebml_children(data, base, len(data)))
    ids = [e[0] for e in elements]
    assert ids[0] == SEEKHEAD_ID and ids[1] == VOID_ID and TRACKS_ID in ids, ids
    head = lambda i: (elements[i - 1][2] if i else base)   # noqa: E731  where element i starts
    # The targets of the old SeekHead (ID -> position), the Tracks one moved to the end.
    targets = []
    for ident, b, e in _ebml_children(data, elements[0][1], elements[0][2]):
        if ident != b"\x4d\xbb":   # a CRC-32 (Matroska's ffmpeg writes one) is left out
            continue
        kids = {k: data[kb:ke] for k, kb, ke in _ebml_children(data, b, e)}
        targets.append((kids[b"\x53\xab"], int.from_bytes(kids[b"\x53\xac"], "big")))
    t = ids.index(TRACKS_ID)
    tracks = data[head(t):elements[t][2]]
    assert head(t) < data.find(CLUSTER_ID), "the ffmpeg file's Tracks already follow a Cluster"
    moved = len(data) - base
    def small(ident: bytes, body: bytes) -> bytes:   # an element with a 1-byte size
        assert len(body) < 127
        return ident + bytes([0x80 | len(body)]) + body
    seek = b"".join(small(b"\x4d\xbb", small(b"\x53\xab", i) + small(b"\x53\xac", (moved if i == TRACKS_ID else p).to_bytes(8, "big")))
                    for i, p in targets)
    seek_head = SEEKHEAD_ID + (1 << 56 | len(seek)).to_bytes(8, "big") + seek
    room = elements[1][2] - base
    out = bytearray(data[:seg + 4]) + (1 << 56 | (moved + len(tracks))).to_bytes(8, "big")
    out += seek_head + _void(room - len(seek_head))
    out += data[elements[1][2]:head(t)] + _void(len(tracks)) + data[elements[t][2]:] + tracks
    return bytes(out)


@lib.generated_once
def make(name: str, folder: Path) -> Path:
    out = folder / name
    if out.exists():
        return out
    if name in FFMPEG or name in MP4_SOURCES:
        _ffmpeg([*(FFMPEG.get(name) or MP4_SOURCES[name]), "-map_metadata", "-1"], out)
    elif name in TAGGED:
        _ffmpeg(TAGGED[name], out)
    elif name in LIVE:
        proc = _ffmpeg(LIVE[name], None)
        out.write_bytes(proc.stdout)
    elif name == UNKNOWN_CLUSTERS:
        data = bytearray(make("live.webm", folder).read_bytes())
        seg = data.find(b"\x18\x53\x80\x67")
        pos = seg + 4 + _vint_length(data[seg + 4])
        count = 0
        while pos + 4 < len(data):
            ident = bytes(data[pos:pos + _vint_length(data[pos])])
            n = _vint_length(data[pos + len(ident)])
            size = int.from_bytes(data[pos + len(ident):pos + len(ident) + n], "big") & ((1 << (7 * n)) - 1)
            if ident == b"\x1f\x43\xb6\x75":
                data[pos + 4:pos + 4 + n] = ((1 << (7 * n + 1)) - 1).to_bytes(n, "big")   # marker + all ones
                count += 1
            pos += len(ident) + n + size
        assert count > 1, "live.webm has no Clusters to rewrite"
        out.write_bytes(bytes(data))
    elif name in TRACKS_LAST:
        out.write_bytes(_tracks_last(make(TRACKS_LAST[name], folder).read_bytes()))
    elif name == TRACK_SCALED:
        out.write_bytes(_track_scaled(make("vp9_opus.webm", folder).read_bytes()))
    elif name in MKVMERGE:
        src_name, args = MKVMERGE[name]
        src = folder / f"{Path(name).stem}-{src_name}"
        _ffmpeg(args, src)
        cmd = ["mkvmerge", "-q", "-o", out, src]
        proc = lib.run(cmd)
        if proc.returncode not in (0, 1) or not out.is_file():   # 1: warnings only
            pytest.fail(f"could not generate {name}: `{lib.shell_line(cmd)}`\n{lib.tail(proc.stdout + proc.stderr)}")
    else:
        raise KeyError(name)
    return out


MEDIA = ([pytest.param(f"gen:{n}", id=n) for n in GENERATED]
         + [pytest.param(f"shared:{n}", id=n) for n in _shared()])


@pytest.fixture
def file(request, gen_dir) -> Path:
    return lib.media_param_file(request.param, gen_dir, make)


def _ffprobe_rows(path: Path, probe: bool) -> list[list[str]]:
    cmd = ["ffprobe", "-v", "error", *([] if probe else ["-nofind_stream_info"]), "-show_entries",
           "packet=stream_index,pts,dts,duration,size,pos,flags", "-of", "csv=p=0", path]
    rows = []
    for line in lib.run(cmd).stdout.decode().splitlines():
        f = line.split(",")
        while len(f) > 7 and f[-1] == "":
            f.pop()
        if len(f) == 7:
            rows.append(f[:6] + ["K" if f[6].startswith("K") else "_"])
    return rows


def ffprobe_packets(path: Path, dts_from: Path | None = None) -> list[str]:
    """ffprobe's packets without the probing pass; the dts of H.264 / HEVC (which Matroska
    does not store) from the run with it, where FFmpeg's decoder has given libavformat the
    stream's reorder depth (has_b_frames, from the SPS) that its dts guess needs. `dts_from`:
    take those dts from this file's run instead, by packet position (a cut copy of it, whose
    own probing pass may end before the decoder has opened)."""
    rows = _ffprobe_rows(path, probe=False)
    source = dts_from or path
    streams = _streams(source) if rows else {}
    video = streams.get("video")
    if video and video["codec_name"] in ("h264", "hevc"):
        probed = {(p[0], p[5]): p[2] for p in _ffprobe_rows(source, probe=True)}
        for r in rows:
            if int(r[0]) == video["index"] and (r[0], r[5]) in probed:
                r[2] = probed[(r[0], r[5])]
    return [",".join(r) for r in rows]


def probe_packets(mk_probe, path) -> tuple[subprocess.CompletedProcess, list[str]]:
    proc = lib.run([mk_probe, "--packets", path])
    return proc, [l for l in proc.stdout.decode().splitlines() if l.strip()]


@pytest.mark.parametrize("file", MEDIA, indirect=True)
def test_packets_equal_ffprobe(file, mk_probe):
    """`mk-probe --packets` equals ffprobe's packets line for line: track, pts, dts, duration,
    size, byte position, key flag (Opus CodecDelay, laced frames, BlockGroups, unknown sizes)."""
    proc, ours = probe_packets(mk_probe, file)
    lib.check_ok(proc, [mk_probe, "--packets", file])
    diff = lib.diff_lines(ours, ffprobe_packets(file), "mk-probe", "ffprobe -nofind_stream_info")
    if diff:
        pytest.fail(f"{file.name}: packets differ\ncolumns: track,pts,dts,duration,size,offset,flags\n{diff}", pytrace=False)


def _lacing_kinds(data: bytes) -> set[str]:
    """The lacing kinds (RFC 9559 section 10.3) of every SimpleBlock / Block of a file."""
    def vint(i: int) -> tuple[int, int]:
        n = 1
        while n <= 8 and not data[i] & (0x80 >> (n - 1)):
            n += 1
        v = data[i] & (0xFF >> n)
        for k in range(1, n):
            v = v << 8 | data[i + k]
        return v, n
    kinds: set[str] = set()

    def walk(start: int, end: int) -> None:
        while start < end:
            _, n = vint(start)
            ident = int.from_bytes(data[start:start + n], "big")
            size, m = vint(start + n)
            body = start + n + m
            if size == (1 << (7 * m)) - 1:
                size = end - body
            if ident in (0x18538067, 0x1F43B675, 0xA0):   # Segment, Cluster, BlockGroup
                walk(body, min(end, body + size))
            elif ident in (0xA3, 0xA1):                    # SimpleBlock, Block
                _, k = vint(body)
                kinds.add(["none", "xiph", "fixed", "ebml"][(data[body + k + 2] >> 1) & 3])
            start = body + size
    walk(0, len(data))
    return kinds


def test_mkvmerge_files_cover_every_lacing_kind(gen_dir):
    """The laced inputs hold Xiph, EBML and fixed-size lacing (else the packet test above
    would not cover them)."""
    kinds = set()
    for name in MKVMERGE:
        kinds |= _lacing_kinds(make(name, gen_dir).read_bytes())
    assert {"xiph", "ebml", "fixed"} <= kinds, f"lacing kinds found: {sorted(kinds)}"


def test_live_files_have_unknown_sizes(gen_dir):
    """The live WebM's Segment has an unknown size (all value bits 1); so have the Clusters of
    its rewritten copy."""
    for name in ("live.webm", UNKNOWN_CLUSTERS):
        data = make(name, gen_dir).read_bytes()
        seg = data.find(b"\x18\x53\x80\x67")
        assert data[seg + 4:seg + 12] == b"\x01\xff\xff\xff\xff\xff\xff\xff", f"{name}: the Segment size is not unknown"
    cl = data.find(b"\x1f\x43\xb6\x75")
    n = _vint_length(data[cl + 4])
    assert int.from_bytes(data[cl + 4:cl + 4 + n], "big") == (1 << (7 * n + 1)) - 1, "the Cluster size is not unknown"


@pytest.mark.parametrize("file", MEDIA, indirect=True)
def test_track_facts_match_ffprobe(file, mk_probe):
    """Codec, type, sample rate, channels, width, height as ffprobe's streams."""
    proc = lib.run([mk_probe, "--json", file])
    lib.check_ok(proc, [mk_probe, "--json", file])
    ours = json.loads(proc.stdout)["tracks"]
    streams = lib.track_streams(lib.ffprobe_json(file))
    problems = lib.track_identity_problems(ours, streams)
    for i, (t, s) in enumerate(zip(ours, streams)):
        keys = ("sample_rate", "channels") if s["codec_type"] == "audio" else ("width", "height")
        for k in keys:
            if int(t[k]) != int(s[k]):
                problems.append(f"track {i}: {k} {t[k]}, ffprobe {s[k]}")
    if problems:
        pytest.fail(f"{file.name}: " + "; ".join(problems), pytrace=False)


@pytest.mark.parametrize("file", MEDIA, indirect=True)
def test_names_languages_flags_and_tags_match_ffprobe(file, mk_probe):
    """Track name, language (Matroska's default "eng"; FFmpeg omits "und"), default and forced
    flags, track tags (with ffprobe's "title" from Name and "language") and the Segment's tags
    (with its title, muxing application as "encoder" and DateUTC as "creation_time") as ffprobe's
    streams and format."""
    proc = lib.run([mk_probe, "--json", file])
    lib.check_ok(proc, [mk_probe, "--json", file])
    ours = json.loads(proc.stdout)
    info = lib.ffprobe_json(file)
    problems = []
    for t, s in zip(ours["tracks"], lib.track_streams(info)):
        tags = dict(s.get("tags", {}))
        want = {"name": tags.get("title", ""), "language": tags.get("language", "und"),
                "default": bool(s["disposition"]["default"]), "forced": bool(s["disposition"]["forced"]), "tags": tags}
        got = {k: t[k] for k in want}
        if got["language"] != want["language"] and t["tags"].get("language") == want["language"]:
            got["language"] = want["language"]    # Track.language prefers LanguageBCP47; the tag is FFmpeg 5.1's Language
        if got != want:
            problems.append(f"track {t['index']}: ours {got}, ffprobe {want}")
    want = info.get("format", {}).get("tags", {})
    got = ours["format"]["tags"]
    if got != want:
        problems.append(f"format: ours {got}, ffprobe {want}")
    assert not problems, f"{file.name}:\n" + "\n".join(problems)


def test_track_timestamp_scale_matches_ffprobe_and_the_spec(gen_dir, mk_probe):
    """TrackTimestampScale 0.5 (video) and 2.0 (Opus, with its CodecDelay): the time bases
    (TimestampScale x TrackTimestampScale ns) and every packet's track, pts, dts, size, position
    and key flag equal ffprobe's (FFmpeg 5.1 reads the scale: Cluster Timestamp / scale + block
    timestamp). The durations equal ffprobe's too, except those that come from DefaultDuration:
    there FFmpeg divides the nanoseconds by TimestampScale alone (40 ms prints as 40 ticks of
    0.5 ms), and the check is RFC 9559 section 11.1 instead: DefaultDuration is in nanoseconds,
    so 40 ms is 80 ticks of 0.5 ms."""
    path = make(TRACK_SCALED, gen_dir)
    proc = lib.run([mk_probe, "--json", path])
    lib.check_ok(proc, [mk_probe, "--json", path])
    ours = json.loads(proc.stdout)["tracks"]
    streams = lib.track_streams(lib.ffprobe_json(path))
    assert [t["time_base"] for t in ours] == [s["time_base"] for s in streams] == ["1/2000", "1/500"]
    proc, packets = probe_packets(mk_probe, path)
    lib.check_ok(proc, [mk_probe, "--packets", path])
    ref = [l.split(",") for l in ffprobe_packets(path)]
    got = [l.split(",") for l in packets]
    assert len(got) == len(ref), f"{len(got)} packets, ffprobe {len(ref)}"
    tick_ns = {0: 1_000_000 * TRACK_SCALES[1]}
    problems = []
    for i, (a, b) in enumerate(zip(got, ref)):
        if a[:3] + a[4:] != b[:3] + b[4:]:
            problems.append(f"packet {i}: {a}, ffprobe {b}")
        want = str(round(TRACK_SCALED_DEFAULT_DURATION[1] / tick_ns[0])) if a[0] == "0" else b[3]
        if a[3] != want:
            problems.append(f"packet {i}: duration {a[3]}, expected {want} (ffprobe {b[3]})")
    assert not problems, "\n".join(problems[:8])


# --------------------------------------------------------------------------- decoding

DECODER = {"opus": ["-c:a", "libopus"], "vorbis": ["-c:a", "libvorbis"], "av1": ["-c:v", "libdav1d"]}


def _streams(path: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for s in lib.ffprobe_json(path).get("streams", []):
        out.setdefault(s["codec_type"], s)
    return out


AUDIO = [n for n in GENERATED if n not in ("vp9_10bit.webm", "hevc.mkv", "hevc_bframes.mkv")]
VIDEO = [n for n in FFMPEG if Path(n).suffix != ".mka"] + list(LIVE)


@pytest.mark.parametrize("file", [pytest.param(f"gen:{n}", id=n) for n in AUDIO]
                         + [pytest.param(f"shared:{n}", id=n) for n in _shared() if "vp9" not in n and "av1" not in n],
                         indirect=True)
def test_decoded_audio_equals_ffmpeg(file, mk_decode, tmp_path):
    """mk-decode's audio (gapless: Opus pre-skip and DiscardPadding applied) equals ffmpeg's
    decode with the same library: same sample count, |diff| <= 1 (float to s16 rounding)."""
    stream = _streams(file)["audio"]
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", *DECODER.get(stream["codec_name"], []), "-i", file,
               "-map", "0:a:0", "-f", "s16le", "-"]
    ref = lib.run(ref_cmd)
    lib.oracle_ok(ref, ref_cmd)
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, "-q", file, "--audio-out", out]
    lib.check_ok(lib.run(cmd), cmd)
    diff = lib.compare_pcm_s16(out.read_bytes(), ref.stdout, int(stream["channels"]))
    assert diff is None, f"{file.name}: `{lib.shell_line(cmd)}` vs `{lib.shell_line(ref_cmd)}`:\n{diff}"


@pytest.mark.parametrize("file", [pytest.param(f"gen:{n}", id=n) for n in VIDEO]
                         + [pytest.param(f"shared:{n}", id=n) for n in _shared() if "vp9" in n or "av1" in n],
                         indirect=True)
def test_decoded_video_equals_ffmpeg(file, mk_decode, tmp_path):
    """mk-decode's NV12 equals ffmpeg's `-fps_mode passthrough -f rawvideo -pix_fmt nv12`, byte for byte."""
    stream = _streams(file)["video"]
    out = tmp_path / "out.nv12"
    cmd = [mk_decode, "-q", file, "--video-out", out, "--pixel-format", "nv12"]
    lib.check_ok(lib.run(cmd), cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", *DECODER.get(stream["codec_name"], []), "-i", file,
               "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12", "-"]
    w, h = int(stream["width"]), int(stream["height"])
    with open(out, "rb") as ours, subprocess.Popen([str(c) for c in ref_cmd], stdout=subprocess.PIPE) as ref:
        diff = lib.compare_video_stream(ours, ref.stdout, lib.yuv420_frame_size(w, h), w, h, "nv12")
    assert diff is None, f"{file.name}: `{lib.shell_line(cmd)}` vs `{lib.shell_line(ref_cmd)}`:\n{diff}"


# --------------------------------------------------------------------------- sources

PY_PACKETS = r"""
import sys, mediakit
data = open(sys.argv[1], "rb").read()
d = mediakit.open(data)
for p in d.packets():
    print(f"{p.track},{p.pts},{p.dts},{p.duration},{p.size},{p.position},{'K' if p.is_keyframe else '_'}")
"""


def _python(mk_bin: Path, script: str, *args) -> subprocess.CompletedProcess:
    env = dict(os.environ, MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"),
               PYTHONPATH=str(lib.REPO / "Bindings" / "python"))
    return lib.run([sys.executable, "-c", script, *args], env=env)


def _na(line: str) -> str:
    """mk-probe prints an unknown pts/dts and a zero duration as N/A, Python gives numbers."""
    f = line.split(",")
    for i in (1, 2):
        if f[i] == str(-(1 << 63)):
            f[i] = "N/A"
    if f[3] == "0":
        f[3] = "N/A"
    return ",".join(f)


@pytest.mark.parametrize("file", MEDIA, indirect=True)
def test_file_memory_and_pipe_give_the_same_packets(file, mk_probe, mk_bin):
    """The same packets from a path, from a pipe (not seekable: `mk-probe --packets -`) and
    from memory (Python mediakit.open(bytes) over the C API)."""
    ref = lib.run([mk_probe, "--packets", file])
    lib.check_ok(ref, [mk_probe, "--packets", file])
    with open(file, "rb") as f:
        piped = subprocess.run([str(mk_probe), "--packets", "-"], stdin=f, capture_output=True, timeout=lib.CMD_TIMEOUT)
    assert piped.returncode == 0, f"{file.name} from a pipe: {lib.tail(piped.stderr)}"
    assert piped.stdout == ref.stdout, f"{file.name}: the pipe gives other packets:\n" + (
        lib.diff_lines(piped.stdout.decode().splitlines(), ref.stdout.decode().splitlines(), "pipe", "file") or "")
    mem = _python(mk_bin, PY_PACKETS, file)
    assert mem.returncode == 0, f"{file.name} from memory: {lib.tail(mem.stderr)}"
    lines = [_na(l) for l in mem.stdout.decode().splitlines()]
    diff = lib.diff_lines(lines, ref.stdout.decode().splitlines(), "memory", "file")
    assert diff is None, f"{file.name}: memory gives other packets:\n{diff}"


PY_SEEK = r"""
import sys, mediakit
d = mediakit.open(sys.argv[1])
video = next(t.index for t in d.tracks if t.media_type == "video")
for s in sys.argv[2:]:
    d.seek(float(s))
    p = next(p for p in d.packets() if p.track == video)
    print(p.pts, int(p.is_keyframe))
"""

SEEK = ["vp9_opus.webm", "h264_aac.mkv", "vp8_vorbis.webm", "av1_opus.webm", TRACK_SCALED, *TRACKS_LAST]


def ffmpeg_seek_landing(path: Path, seconds: float, tb: Fraction, reordered: bool) -> int | None:
    """The pts (in the video stream's ticks) of the first video packet ffmpeg copies after
    `-seek_timestamp 1 -noaccurate_seek -ss T -copyts -i FILE` (the time is a timestamp, not an
    offset from the file's start time; -copyts keeps the file's timestamps), None when none.
    `reordered`: a stream of the file has B-frames (ffprobe's has_b_frames), for which ffmpeg's
    command line seeks 3/23 s (130434 us) before -ss (its "dts heuristic" in open_input_file, for
    formats that do not seek by pts); -ss is then given that much later, so that libavformat's
    seek target is T itself."""
    us = round(seconds * 1_000_000) + (3 * 1_000_000 // 23 if reordered else 0)
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-seek_timestamp", "1", "-noaccurate_seek", "-ss", f"{us}us", "-copyts",
           "-i", path, "-map", "0:v:0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    out_tb = None
    for line in proc.stdout.decode().splitlines():
        if line.startswith("#tb 0:"):
            num, den = line.split(":")[1].strip().split("/")
            out_tb = Fraction(int(num), int(den))
        elif line and not line.startswith("#"):
            pts = Fraction(int(line.split(",")[2])) * out_tb
            return int(pts / tb)
    return None


@pytest.mark.parametrize("file", [pytest.param(f"gen:{n}", id=n) for n in SEEK]
                         + [pytest.param(f"shared:{n}", id=n) for n in _shared() if "vp9" in n or "av1" in n],
                         indirect=True)
def test_seek_lands_on_the_key_frame_before(file, mk_bin):
    """Seeking to 20 random times (Cues, or a scan without them) lands where ffmpeg's `-ss T`
    before `-i` with `-noaccurate_seek` does (see ffmpeg_seek_landing for the 3/23 s its command
    line takes off with B-frames): the first video packet is ffmpeg's first copied video packet
    (same pts) and a key frame at or before T (or the first key frame when T is before it) in
    ffprobe's packet list."""
    path, name = file, file.name
    lines = [l.split(",") for l in ffprobe_packets(path)]
    info = _streams(path)["video"]
    tb = Fraction(info["time_base"])
    keys = sorted(int(f[1]) for f in lines if int(f[0]) == info["index"] and f[6] == "K")
    last = max(int(f[1]) for f in lines if int(f[0]) == info["index"])
    rng = random.Random(16)
    times = [round(rng.uniform(0, float(last * tb)), 3) for _ in range(20)]
    reordered = any(int(s.get("has_b_frames", 0)) > 0 for s in lib.track_streams(lib.ffprobe_json(path)))
    proc = _python(mk_bin, PY_SEEK, path, *map(str, times))
    assert proc.returncode == 0, lib.tail(proc.stderr)
    got = [tuple(map(int, l.split())) for l in proc.stdout.decode().splitlines()]
    problems = []
    for t, (pts, key) in zip(times, got):
        ffmpeg = ffmpeg_seek_landing(path, t, tb, reordered)
        target = int(Fraction(t).limit_denominator(1000) / tb)
        before = max([k for k in keys if k <= target], default=keys[0])
        if pts != ffmpeg or not key or pts != before:
            problems.append(f"seek {t} s: first video packet pts {pts} (key {key}); ffmpeg -noaccurate_seek lands on {ffmpeg}, "
                            f"the key frame at or before is {before}")
    assert len(got) == len(times) and not problems, f"{name}:\n" + "\n".join(problems)


# --------------------------------------------------------------------------- Tracks after the Clusters


def _element_offsets(data: bytes) -> dict[bytes, int]:
    """The first offset of each top-level element ID of the Segment."""
    seg = data.find(SEGMENT_ID)
    base = seg + 4 + _vint_length(data[seg + 4])
    found: dict[bytes, int] = {}
    for ident, b, e in _ebml_children(data, base, len(data)):
        found.setdefault(ident, b)
    return found


@pytest.mark.parametrize("name", TRACKS_LAST)
def test_tracks_after_the_clusters_are_found_through_the_seekhead(name, gen_dir, mk_probe, mk_decode, tmp_path):
    """A file whose Tracks come after its Clusters (found through the SeekHead, as FFmpeg does):
    mk-probe's packets equal ffprobe's on that file, the decode equals ffmpeg's (audio, |diff|
    <= 1) and the video frames ffmpeg's NV12 bytes."""
    path = make(name, gen_dir)
    offsets = _element_offsets(path.read_bytes())
    assert offsets[TRACKS_ID] > offsets[CLUSTER_ID], "the rewritten file's Tracks should follow its first Cluster"
    proc, ours = probe_packets(mk_probe, path)
    lib.check_ok(proc, [mk_probe, "--packets", path])
    reference = ffprobe_packets(path)
    assert len(reference) > 50, f"ffprobe reads {len(reference)} packets of {name}"
    diff = lib.diff_lines(ours, reference, "mk-probe", "ffprobe -nofind_stream_info")
    assert diff is None, f"{name}: packets differ\n{diff}"
    stream = _streams(path)["audio"]
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", *DECODER.get(stream["codec_name"], []), "-i", path,
               "-map", "0:a:0", "-f", "s16le", "-"]
    ref = lib.run(ref_cmd)
    lib.oracle_ok(ref, ref_cmd)
    pcm = tmp_path / "out.pcm"
    cmd = [mk_decode, "-q", path, "--audio-out", pcm]
    lib.check_ok(lib.run(cmd), cmd)
    diff = lib.compare_pcm_s16(pcm.read_bytes(), ref.stdout, int(stream["channels"]))
    assert diff is None, f"{name}: `{lib.shell_line(cmd)}` vs `{lib.shell_line(ref_cmd)}`:\n{diff}"
    video = _streams(path)["video"]
    nv12 = tmp_path / "out.nv12"
    cmd = [mk_decode, "-q", path, "--video-out", nv12, "--pixel-format", "nv12"]
    lib.check_ok(lib.run(cmd), cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", *DECODER.get(video["codec_name"], []), "-i", path,
               "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12", "-"]
    w, h = int(video["width"]), int(video["height"])
    with open(nv12, "rb") as ours, subprocess.Popen([str(c) for c in ref_cmd], stdout=subprocess.PIPE) as ref_proc:
        diff = lib.compare_video_stream(ours, ref_proc.stdout, lib.yuv420_frame_size(w, h), w, h, "nv12")
    assert diff is None, f"{name}: `{lib.shell_line(cmd)}` vs `{lib.shell_line(ref_cmd)}`:\n{diff}"


@pytest.mark.parametrize("name", TRACKS_LAST)
def test_tracks_after_the_clusters_from_a_pipe_say_the_file_needs_seeking(name, gen_dir, mk_probe):
    """From a pipe (`cat f | mk-probe --packets -`) the Tracks cannot be reached before the
    packets: exit 1 with an error saying that the Tracks come after the Clusters and that the file
    needs a seekable source; no packet printed."""
    path = make(name, gen_dir)
    with open(path, "rb") as f:
        proc = subprocess.run([str(mk_probe), "--packets", "-"], stdin=f, capture_output=True, timeout=lib.CMD_TIMEOUT)
    err = proc.stderr.decode()
    assert proc.returncode == 1, f"{name} from a pipe: exit {proc.returncode}\n{lib.tail(proc.stderr)}"
    assert "Tracks come after its Clusters" in err and "seekable source" in err, err
    assert not proc.stdout.strip(), proc.stdout[:200]


# --------------------------------------------------------------------------- damage

CUT = ["vp9_opus.webm", "h264_aac.mkv", "laced_vorbis.mka", "live.webm", UNKNOWN_CLUSTERS, "opus_51.mka"]


@pytest.mark.parametrize("file", [pytest.param(f"gen:{n}", id=n) for n in CUT]
                         + [pytest.param(f"shared:{n}", id=n) for n in _shared()], indirect=True)
def test_cut_files_give_ffprobes_packets_then_a_warning(file, mk_probe, tmp_path):
    """Cut at 20 points: exit 0, the packets ffprobe gives for the cut file (a block the cut goes
    through is dropped, as FFmpeg drops it), and a warning naming the offset of the cut. Where
    the cut goes through the header (ffprobe fails: "End of file", no packets): exit 1 with an
    error naming the file, the offset and the element, or, when the header is whole and the file
    ends before the first Cluster, exit 0 with no packets and the warning. Generated files and
    every shared one."""
    full, name = file, file.name
    data = full.read_bytes()
    total = len(ffprobe_packets(full))
    problems = []
    for k in range(1, 21):
        n = len(data) * k // 21
        cut = tmp_path / f"cut{k}{Path(name).suffix}"
        cut.write_bytes(data[:n])
        proc, ours = probe_packets(mk_probe, cut)
        ref = ffprobe_packets(cut, dts_from=full)
        err = proc.stderr.decode(errors="replace")
        if not ref and lib.run(["ffprobe", "-v", "error", "-show_packets", cut]).returncode != 0:
            # The header read, the file ending before the first Cluster: no packets and a warning
            # about the cut (FFmpeg opens or not depending on where its resync lands: the corpus's
            # broken_webm_init_segment_only_281b.webm, a file that ends there too, opens with no packets).
            header_only = proc.returncode == 0 and not ours and "truncated at offset" in err
            if not header_only and (proc.returncode != 1 or "at offset" not in err or " in Segment" not in err) \
                    or cut.name not in err:
                problems.append(f"cut at {n} (ffprobe fails): exit {proc.returncode}: {lib.tail(err, 300)}")
            continue
        if proc.returncode != 0:
            problems.append(f"cut at {n}: exit {proc.returncode}: {lib.tail(err, 300)}")
            continue
        if ours != ref:
            problems.append(f"cut at {n}: " + (lib.diff_lines(ours, ref, "mk-probe", "ffprobe") or ""))
        if "truncated at offset" not in err and len(ours) < total and n not in _seamless_ends(data):
            problems.append(f"cut at {n}: no warning about the cut: {lib.tail(err, 300)}")
    assert not problems, f"{name}:\n" + "\n".join(problems[:5])


CLUSTER_ID, BLOCK_IDS = b"\x1f\x43\xb6\x75", (b"\xa3", b"\xa0")


def _segment_elements(data: bytes) -> Iterator[tuple[int, bytes, int, int, int, int | None, str | None]]:
    """The Segment's children and, inside each Cluster, the Cluster's: (offset, ID, offset of the
    size field, its length, offset of the body, size or None when unknown, the enclosing
    Cluster's size "known" / "unknown", None for a child of the Segment). A Cluster of unknown
    size holds what follows up to the next Cluster."""
    seg = data.find(b"\x18\x53\x80\x67")
    pos = seg + 4 + _vint_length(data[seg + 4])
    cluster_end, cluster_kind = None, None
    while pos + 2 <= len(data):
        id_len = _vint_length(data[pos])
        ident = bytes(data[pos:pos + id_len])
        size, m = _ebml_vint(data, pos + id_len)
        body = pos + id_len + m
        known = size != (1 << (7 * m)) - 1
        if ident == CLUSTER_ID:
            yield pos, ident, pos + id_len, m, body, size if known else None, None
            cluster_end, cluster_kind = (body + size, "known") if known else (len(data), "unknown")
            pos = body
            continue
        inside = cluster_kind if cluster_end is not None and pos < cluster_end else None
        yield pos, ident, pos + id_len, m, body, size if known else None, inside
        pos = body + (size if known else 0)


def _seamless_ends(data: bytes) -> set[int]:
    """Offsets where a cut leaves nothing to notice: the end of a whole element whose every open
    parent (the Segment, a Cluster) has an unknown size, as in a live stream that ended there.
    (live.webm's encoder runs in libvpx's realtime mode, so its frame sizes follow the load and
    one of the 20 cut points can land on such an end.)"""
    seg = data.find(b"\x18\x53\x80\x67")
    size, m = _ebml_vint(data, seg + 4)
    if size != (1 << (7 * m)) - 1:
        return set()
    ends: set[int] = set()
    for _, ident, _, _, body, size, inside in _segment_elements(data):
        if size is None:
            if ident == CLUSTER_ID:
                continue
            break
        if inside != "known" and body + size <= len(data):
            ends.add(body + size)
    return ends


def _cluster_blocks(data: bytes) -> list[list[tuple[int, int, int]]]:
    """Per Cluster, its SimpleBlocks and BlockGroups as (offset, offset of the size field, length
    of the size field), walking the Segment's children (Clusters of unknown size included)."""
    clusters: list[list[tuple[int, int, int]]] = []
    for pos, ident, size_at, m, _, _, inside in _segment_elements(data):
        if ident == CLUSTER_ID:
            clusters.append([])
        elif inside is not None and ident in BLOCK_IDS:
            clusters[-1].append((pos, size_at, m))
    return clusters


def damaged(data: bytes, kind: str, cluster: int, block: int) -> tuple[bytes, int]:
    """A copy of `data` with one element header inside a Cluster damaged, and the damaged
    element's offset: "id" makes the first byte of block `block` of Cluster `cluster` 0x00 (not
    an EBML ID); "grow" makes its size 100 bytes larger (past the end of its Cluster when it is
    the Cluster's last block)."""
    pos, size_at, m = _cluster_blocks(data)[cluster][block]
    b = bytearray(data)
    if kind == "id":
        b[pos] = 0
    else:
        size, _ = _ebml_vint(data, size_at)
        b[size_at:size_at + m] = (1 << (7 * m) | (size + 100)).to_bytes(m, "big")
    return bytes(b), pos


# (file, damage kind, Cluster, block): a bad ID in the middle and at the start of a Cluster, a
# block larger than its Cluster (known sizes only).
RESYNC = [(n, "id", 0, 7) for n in ("vp9_opus.webm", "h264_aac.mkv", "av1_opus.webm", UNKNOWN_CLUSTERS)] \
    + [(n, "id", 1, 0) for n in ("vp9_opus.webm", "h264_aac.mkv", UNKNOWN_CLUSTERS)] \
    + [(n, "grow", c, -1) for n in ("vp9_opus.webm", "h264_aac.mkv", "av1_opus.webm") for c in (0, 1)]


@pytest.mark.parametrize("name,kind,cluster,block", RESYNC, ids=[f"{n}-{k}-{c}.{b}" for n, k, c, b in RESYNC])
def test_bad_element_header_resyncs_at_the_next_cluster(name, kind, cluster, block, gen_dir, mk_probe, tmp_path):
    """An element header damaged inside a Cluster (an invalid ID, or a size past the Cluster's
    end): as FFmpeg's Matroska demuxer resyncs to the next top-level element, mk-probe exits 0
    with ffprobe's packets of the damaged file (the rest of the damaged Cluster is skipped) and
    a warning naming the element path and the damaged element's offset."""
    full = make(name, gen_dir)
    data, at = damaged(full.read_bytes(), kind, cluster, block)
    path = tmp_path / f"damaged{Path(name).suffix}"
    path.write_bytes(data)
    proc, ours = probe_packets(mk_probe, path)
    err = proc.stderr.decode(errors="replace")
    assert proc.returncode == 0, f"exit {proc.returncode}: {lib.tail(err)}"
    ref = ffprobe_packets(path)
    assert len(ref) < len(ffprobe_packets(full)), "the damage did not cost ffmpeg any packet"
    diff = lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    assert diff is None, f"{name} damaged ({kind}) at {at}:\n{diff}"
    assert f"at offset {at} in Segment/Cluster" in err and "resumes at the next Cluster" in err, lib.tail(err)


@pytest.mark.parametrize("name", ["vp9_opus.webm", "laced_opus.mka"])
def test_cut_files_decode_like_ffmpeg(name, gen_dir, mk_decode, tmp_path):
    """Cut at 6 points past the header: mk-decode exits 0 with a warning and writes what ffmpeg
    decodes from the cut file (audio |diff| <= 1; video byte for byte)."""
    data = make(name, gen_dir).read_bytes()
    problems = []
    for k in range(2, 8):
        n = len(data) * k // 8
        cut = tmp_path / f"cut{k}{Path(name).suffix}"
        cut.write_bytes(data[:n])
        streams = _streams(cut)
        a, v = tmp_path / "a.pcm", tmp_path / "v.nv12"
        cmd = [mk_decode, cut, "--audio-out", a] + (["--video-out", v, "--pixel-format", "nv12"] if "video" in streams else [])
        proc = lib.run(cmd)
        if proc.returncode != 0 or b"truncated" not in proc.stderr:
            problems.append(f"cut at {n}: exit {proc.returncode}: {lib.tail(proc.stderr, 300)}")
            continue
        s = streams["audio"]
        ref = lib.run(["ffmpeg", "-v", "error", "-nostdin", *DECODER[s["codec_name"]], "-i", cut, "-map", "0:a:0", "-f", "s16le", "-"])
        diff = lib.compare_pcm_s16(a.read_bytes(), ref.stdout, int(s["channels"]))
        if diff:
            problems.append(f"cut at {n}: audio: {diff}")
        if "video" in streams:
            ref = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", cut, "-map", "0:v:0", "-fps_mode", "passthrough",
                           "-f", "rawvideo", "-pix_fmt", "nv12", "-"])
            if v.read_bytes() != ref.stdout:
                problems.append(f"cut at {n}: video: ours {v.stat().st_size} bytes, ffmpeg {len(ref.stdout)}")
    assert not problems, f"{name}:\n" + "\n".join(problems[:5])


@pytest.mark.parametrize("name", _shared(broken=True) or ["<none>"])
def test_broken_files_fail_cleanly(name, mk_probe):
    """The corpus's broken Matroska / WebM files: exit 0 or 1, a message naming the file."""
    if name == "<none>":
        pytest.skip("no broken Matroska files in ../shared/media")
    path = lib.SHARED_MEDIA / name
    proc = lib.run([mk_probe, "--packets", path], timeout=60)
    assert proc.returncode in (0, 1), f"{name}: exit {proc.returncode}: {lib.tail(proc.stderr)}"
    if proc.stderr:
        assert name in proc.stderr.decode(), f"{name}: the message does not name the file: {lib.tail(proc.stderr)}"


FLIP = ["vp9_opus.webm", "h264_aac.mkv", "laced_aac.mka", UNKNOWN_CLUSTERS]


@pytest.mark.parametrize("file", [pytest.param(f"gen:{n}", id=n) for n in FLIP]
                         + [pytest.param(f"shared:{n}", id=n) for n in _shared()], indirect=True)
def test_byte_flips_never_crash(file, mk_probe, tmp_path):
    """30 copies with 8 random bytes changed each (generated files and every shared one): exit
    0 or 1 (an error naming the file, an offset and the element), never a crash or a hang."""
    name = file.name
    data = file.read_bytes()
    rng = random.Random(name)
    problems = []
    for k in range(30):
        b = bytearray(data)
        for _ in range(8):
            b[rng.randrange(len(b))] = rng.randrange(256)
        path = tmp_path / f"flip{k}{Path(name).suffix}"
        path.write_bytes(bytes(b))
        proc = lib.run([mk_probe, "--packets", path], timeout=60)
        err = proc.stderr.decode(errors="replace")
        if proc.returncode not in (0, 1):
            problems.append(f"copy {k}: exit {proc.returncode}: {lib.tail(err, 300)}")
        elif proc.returncode == 1 and not ("at offset" in err and path.name in err):
            problems.append(f"copy {k}: the error names no file and offset: {lib.tail(err, 300)}")
    assert not problems, f"{name}:\n" + "\n".join(problems[:5])


# --------------------------------------------------------------------------- remux

def _framemd5_payloads(path: Path) -> list[str]:
    """`ffmpeg -f framemd5` lines without the timestamps and side data: stream, size, payload
    MD5 (a Matroska file counts in milliseconds, the MP4 in samples; a Matroska block's
    DiscardPadding is skip-samples side data, which MP4 has not)."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    rows = [[f.strip() for f in l.split(",")] for l in proc.stdout.decode().splitlines() if l and not l.startswith("#")]
    return [",".join((r[0], r[4], r[5])) for r in rows]


REMUX = ["flac.mka", "mp3.mka", "pcm.mka", "laced_aac.mka", "laced_mp3.mka"]


@pytest.mark.parametrize("name", REMUX)
def test_remux_to_mp4_keeps_every_frame(name, gen_dir, mk_bin, tmp_path):
    """`mk-remux IN.mka OUT.mp4` for the codecs MP4 carries from packet containers: ffmpeg's
    framemd5 of the output lists the input's frames (stream, size, payload MD5)."""
    src, out = make(name, gen_dir), tmp_path / "out.mp4"
    cmd = [mk_bin / "mk-remux", "--quiet", src, out]
    lib.check_ok(lib.run(cmd), cmd)
    assert _framemd5_payloads(out) == _framemd5_payloads(src), f"{name}: the remuxed frames differ"


def test_remux_mpeg4_part2_to_mp4_is_ffmpegs(mk_bin, tmp_path):
    """MPEG-4 Part 2 with B-frames, and AAC, in Matroska (no decoding times stored) copied into
    MP4: framemd5 of ours equals that of `ffmpeg -c copy`'s copy: decoding times derived with the
    reorder depth FFmpeg's decoder takes from the VOL header (low_delay 0: one frame), FFmpeg's
    track time scales (1/16000, 1/44100; AAC on its sample grid), and ffmpeg's mp4v entry."""
    src, ours, theirs = tmp_path / "mpeg4_bframes.mkv", tmp_path / "ours.mp4", tmp_path / "theirs.mp4"
    _ffmpeg(["-f", "lavfi", "-i", "testsrc2=d=1:s=320x240:r=25", "-f", "lavfi", "-i", "sine=d=1",
             "-c:v", "mpeg4", "-bf", "2", "-c:a", "aac", "-shortest"], src)
    cmd = [mk_bin / "mk-remux", "--quiet", src, ours]
    lib.check_ok(lib.run(cmd), cmd)
    _ffmpeg(["-i", src, "-map", "0", "-c", "copy"], theirs)
    a, b = tmp_path / "ours.framemd5", tmp_path / "theirs.framemd5"
    _ffmpeg(["-i", ours, "-i", theirs, "-map", "0", "-c", "copy", "-f", "framemd5", a,
             "-map", "1", "-c", "copy", "-f", "framemd5", b], None)
    ref = [l for l in b.read_text().splitlines() if not l.startswith("#software")]
    got = [l for l in a.read_text().splitlines() if not l.startswith("#software")]
    assert "#codec_id 0: mpeg4" in ref and "#tb 0: 1/16000" in ref, ref[:16]
    assert got == ref, lib.diff_lines(got, ref, "ours", "ffmpeg's")


def _framemd5_rows(path: Path) -> list[tuple]:
    """`ffmpeg -copyts -f framemd5` rows as (stream, dts, pts, duration in seconds, size, MD5, tick
    in seconds): -copyts keeps each file's own timestamps (without it ffmpeg shifts a file by its
    start time, which for Opus in WebM is the CodecDelay rounded to the millisecond and in MP4
    the exact pre-skip)."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-copyts", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    tb, rows = {}, []
    for line in proc.stdout.decode().splitlines():
        if line.startswith("#tb "):
            k, v = line[4:].split(":")
            num, den = v.strip().split("/")
            tb[int(k)] = Fraction(int(num), int(den))
        elif line and not line.startswith("#"):
            f = [x.strip() for x in line.split(",")]
            st = int(f[0])
            rows.append((st, *(Fraction(int(x)) * tb[st] for x in f[1:4]), f[4], f[5], tb[st]))
    return rows


# Generated files and the shared corpus (Vorbis refused, see below) remuxed into MP4.
TO_MP4 = ([f"gen:{n}" for n in ["vp9_opus.webm", "vp9_10bit.webm", "av1_opus.webm", "h264_aac.mkv", "hevc.mkv",
                               "hevc_bframes.mkv", "ac3.mka", "laced_ac3.mka", "laced_opus.mka", "opus_51.mka"]]
          + [f"shared:{n}" for n in _shared() if "vorbis" not in n]
          # The same packet path from Ogg Opus (time base already 1/48000) and IVF VP9 (no CodecPrivate).
          + ["shared:ogg_opus_stereo_tiny_155b.opus", "shared:ogg_opus_stereo_truncated_10000b_no_eos.opus",
             "shared:ivf_vp9_320x180_1s.ivf"])


@pytest.mark.parametrize("spec", TO_MP4, ids=[s.partition(":")[2] for s in TO_MP4])
def test_remux_video_and_opus_to_mp4(spec, gen_dir, mk_bin, tmp_path):
    """`mk-remux IN.webm|mkv|mka OUT.mp4` (H.264, HEVC, AV1, VP9, Opus, AC-3, AAC): ffmpeg's
    framemd5 of the output lists the input's frames, stream, size and payload MD5 exactly, pts
    and duration to the coarser tick (the last packet's duration aside: ffmpeg clips it to the
    edit list's end; an MP4 counts Opus in 48 kHz samples where Matroska rounds to the
    millisecond), and dts too, with B-frames as well (the MP4 keeps pts - dts as composition
    offsets and its edit list starts the media at the input's time 0, or at its first frame's
    time after an empty edit, as FFmpeg's mov muxer writes it). ffprobe's codec,
    size, rate and channels are the input's; video decodes to the same frames; Opus decodes
    to the input's samples (pre-skip in dOps and the edit list) and the edit list ends where
    the input's DiscardPadding does (ffprobe's stream duration); ffprobe, gst-discoverer-1.0
    and mediainfo open the output."""
    src, out = _source(spec, gen_dir), tmp_path / "out.mp4"
    cmd = [mk_bin / "mk-remux", "--quiet", src, out]
    lib.check_ok(lib.run(cmd), cmd)
    problems = []
    a, b = _framemd5_rows(src), _framemd5_rows(out)
    if len(a) != len(b):
        problems.append(f"{len(a)} frames in, {len(b)} out")
    a, b = sorted(a, key=lambda r: (r[0], r[1])), sorted(b, key=lambda r: (r[0], r[1]))
    for i, (x, y) in enumerate(zip(a, b)):
        tick = max(x[6], y[6])
        # A stream's last packet: ffmpeg clips its duration to the MP4 edit list's end (Opus:
        # the DiscardPadding, which Matroska gives as side data; ffmpeg's own -c copy to MP4
        # shortens the last video frame the same way), so its duration is not compared.
        last = i + 1 == len(a) or a[i + 1][0] != x[0]
        fields = [(1, "dts"), (2, "pts")] + ([] if last else [(3, "duration")])
        bad = [n for k, n in fields if abs(x[k] - y[k]) > tick]
        if x[0] != y[0] or x[4:6] != y[4:6] or bad:
            problems.append(f"frame {i} of stream {x[0]}: {bad or 'payload'} in {[float(v) for v in x[1:4]]} {x[4]} "
                            f"out {[float(v) for v in y[1:4]]} {y[4]}")
        if len(problems) > 5:
            break
    keys = ("codec_name", "codec_type", "width", "height", "sample_rate", "channels", "pix_fmt")
    sa, sb = (lib.track_streams(lib.ffprobe_json(f)) for f in (src, out))
    if [{k: s.get(k) for k in keys} for s in sa] != [{k: s.get(k) for k in keys} for s in sb]:
        problems.append(f"ffprobe streams differ: {[{k: s.get(k) for k in keys} for s in sa]} vs {[{k: s.get(k) for k in keys} for s in sb]}")
    for s in sa:
        kind, n = s.get("codec_type"), sum(1 for t in sa[:sa.index(s)] if t.get("codec_type") == s.get("codec_type"))
        if kind == "video":
            d = [lib.run(["ffmpeg", "-v", "error", "-i", f, "-map", f"0:v:{n}", "-f", "framemd5", "-"]).stdout.decode()
                 for f in (src, out)]
            d = [[",".join(l.split(",")[4:]) for l in x.splitlines() if l and not l.startswith("#")] for x in d]
            if d[0] != d[1] or not d[0]:
                problems.append(f"video {n} decodes differently ({len(d[0])} vs {len(d[1])} frames)")
        elif s.get("codec_name") == "opus":
            pcm = [lib.run(["ffmpeg", "-v", "error", "-c:a", "libopus", "-i", f, "-map", f"0:a:{n}", "-f", "s16le", "-"]).stdout
                   for f in (src, out)]
            if not pcm[0] or pcm[1][:len(pcm[0])] != pcm[0]:
                problems.append(f"Opus decodes differently: {len(pcm[0])} vs {len(pcm[1])} bytes")
            text = lib.run(["ffprobe", "-v", "error", "-select_streams", f"a:{n}", "-show_entries", "stream=duration",
                            "-of", "csv=p=0", out]).stdout.decode().strip()
            secs = len(pcm[0]) / 2 / int(s["channels"]) / 48000
            if abs(float(text if text not in ("", "N/A") else "nan") - secs) > 0.001:
                problems.append(f"Opus edit list lasts {text} s, the input decodes to {secs} s")
    tools = [["ffprobe", "-v", "error", out], ["gst-discoverer-1.0", out], ["mediainfo", out]]
    for tool in tools:
        if shutil.which(tool[0]) is None:
            continue
        proc = lib.run(tool)
        text = (proc.stdout + proc.stderr).decode(errors="replace")
        if proc.returncode != 0 or (tool[0] == "ffprobe" and text.strip()) or "rror" in text:
            problems.append(f"`{lib.shell_line(tool)}` failed: {lib.tail(proc.stdout + proc.stderr, 300)}")
    assert not problems, f"{src.name} -> mp4:\n" + "\n".join(problems)


@pytest.mark.parametrize("spec", ["gen:vp8_vorbis.webm", *[f"shared:{n}" for n in _shared() if "vorbis" in n]])
def test_remux_names_the_unsupported_pair(spec, gen_dir, mk_bin, tmp_path):
    """Vorbis (and VP8) in MP4 is not standard: an unsupported error naming the codec, the
    source container and MP4, and no output file."""
    out = tmp_path / "out.mp4"
    proc = lib.run([mk_bin / "mk-remux", _source(spec, gen_dir), out])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "Matroska" in err and "MP4" in err and "not supported" in err and \
        ("vorbis" in err or "vp8" in err), err
    assert not out.exists()


# --------------------------------------------------------------------------- muxer (issue 16 part 4)

INTO_MATROSKA = [
    ("gen:vp9_opus.webm", "webm"), ("gen:vp8_vorbis.webm", "webm"), ("gen:av1_opus.webm", "webm"),
    ("gen:h264_aac.mkv", "mkv"), ("gen:hevc_bframes.mkv", "mkv"), ("gen:flac.mka", "mka"), ("gen:laced_aac.mka", "mka"),
    ("shared:mp4_h264_aac_moov_at_start_ctts_8s.mp4", "mkv"), ("gen:vp9_opus.mp4", "webm"), ("shared:ogg_opus_stereo_tiny_155b.opus", "webm"),
    ("shared:ogg_vorbis_48k_stereo_bear.ogg", "webm"),
]


def _source(spec: str, gen_dir: Path) -> Path:
    return lib.media_param_file(spec, gen_dir, make)


@pytest.mark.parametrize("spec,ext", INTO_MATROSKA, ids=[f"{s.partition(':')[2]}->{e}" for s, e in INTO_MATROSKA])
def test_remux_into_matroska(spec, ext, gen_dir, mk_bin, tmp_path):
    """`mk-remux IN OUT.webm|mkv|mka` (MatroskaMuxer): ffmpeg's framemd5 of the output lists the
    input's frames (stream, size, payload MD5; from an input in milliseconds, as MediaKit
    writes, the whole lines, time stamps and skip-samples side data included); mkvinfo --all
    (mkvtoolnix; Debian has no mkvalidator), gst-discoverer-1.0 and mediainfo read it without an
    error or warning, and mediainfo lists the input's video and audio tracks; ffprobe's codecs, sizes, rates and channels are the input's; Opus
    decodes (libopus) to the input's samples (gapless: CodecDelay and DiscardPadding)."""
    src, out = _source(spec, gen_dir), tmp_path / f"out.{ext}"
    cmd = [mk_bin / "mk-remux", "--quiet", src, out]
    lib.check_ok(lib.run(cmd), cmd)
    problems = []
    # Stream by stream: the interleaving may differ (a Matroska file orders blocks by time; an
    # MP4's chunks by the order its muxer wrote them).
    def by_stream(rows: list[str]) -> list[str]:
        return sorted(rows, key=lambda r: int(r.split(",")[0]))
    if by_stream(_framemd5_payloads(out)) != by_stream(_framemd5_payloads(src)):
        problems.append("framemd5 payloads differ")
    if all(st.get("time_base") == "1/1000" for st in lib.track_streams(lib.ffprobe_json(src))):
        full = [lib.run(["ffmpeg", "-v", "error", "-i", f, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]).stdout.decode().splitlines()
                for f in (src, out)]
        if [l for l in full[0] if not l.startswith("#")] != [l for l in full[1] if not l.startswith("#")]:
            problems.append("framemd5 lines (with timestamps) differ")
    # Debian has no mkvalidator: mkvinfo (mkvtoolnix) reads the whole file instead.
    for tool in (["mkvinfo", "--all", out], ["gst-discoverer-1.0", out], ["mediainfo", out]):
        proc = lib.run(tool)
        text = (proc.stdout + proc.stderr).decode(errors="replace")
        if proc.returncode != 0 or "rror" in text or "arning" in text:
            problems.append(f"`{lib.shell_line(tool)}` failed: {lib.tail(proc.stdout + proc.stderr, 300)}")
    keys = ("codec_name", "codec_type", "width", "height", "sample_rate", "channels")
    a, b = (lib.track_streams(lib.ffprobe_json(f)) for f in (src, out))
    info = json.loads(lib.run(["mediainfo", "--Output=JSON", out]).stdout or b"{}")
    kinds = [t.get("@type") for t in info.get("media", {}).get("track", []) if t.get("@type") in ("Video", "Audio")]
    if sorted(kinds) != sorted(s["codec_type"].capitalize() for s in a):   # mediainfo groups tracks by kind
        problems.append(f"mediainfo lists the tracks {kinds}, the input has {[s['codec_type'] for s in a]}")
    if [{k: s.get(k) for k in keys} for s in a] != [{k: s.get(k) for k in keys} for s in b]:
        problems.append(f"ffprobe streams differ: {[{k: s.get(k) for k in keys} for s in a]} vs {[{k: s.get(k) for k in keys} for s in b]}")
    if any(s.get("codec_name") == "opus" for s in a):
        pcm = [lib.run(["ffmpeg", "-v", "error", "-c:a", "libopus", "-i", f, "-map", "0:a:0", "-f", "s16le", "-"]).stdout for f in (src, out)]
        if pcm[0] != pcm[1]:
            problems.append(f"Opus decodes differently: {len(pcm[0])} vs {len(pcm[1])} bytes")
    assert not problems, f"{src.name} -> {out.name}:\n" + "\n".join(problems)


def test_webm_refuses_codecs_outside_webm(gen_dir, mk_bin, tmp_path):
    """H.264 into .webm: an unsupported error naming WebM and the codec, no output file."""
    out = tmp_path / "out.webm"
    proc = lib.run([mk_bin / "mk-remux", make("h264_aac.mkv", gen_dir), out])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "WebM" in err and "h264" in err, err
    assert not out.exists()


def test_remux_into_a_fifo_writes_a_live_webm(gen_dir, mk_bin, tmp_path):
    """A FIFO as the output: a live WebM (Segment of unknown size, nothing written back) that
    ffmpeg reads to the input's frames (whole framemd5 lines)."""
    src, fifo, captured = make("vp9_opus.webm", gen_dir), tmp_path / "live.webm", tmp_path / "captured.webm"
    os.mkfifo(fifo)
    with open(captured, "wb") as sink:
        reader = subprocess.Popen(["cat", str(fifo)], stdout=sink)
        proc = lib.run([mk_bin / "mk-remux", "--quiet", src, fifo])
        reader.wait(timeout=60)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    data = captured.read_bytes()
    seg = data.find(b"\x18\x53\x80\x67")
    assert data[seg + 4:seg + 12] == b"\x01\xff\xff\xff\xff\xff\xff\xff", "the Segment size is not unknown"
    lines = [[l for l in lib.run(["ffmpeg", "-v", "error", "-i", f, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]).stdout.decode().splitlines()
              if not l.startswith("#")] for f in (src, captured)]
    assert lines[0] == lines[1], "the live WebM's frames differ from the input's"
