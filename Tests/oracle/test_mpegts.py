"""MPEG transport streams (and M2TS) through MPEGTSDemuxer.

Oracles (../shared/ORACLES.md): ffprobe's packet lines (track, pts, dts, duration, size,
offset, key flag; FFmpeg's parsers cut audio PES into frames and hand video out one PES late,
so their order is part of the comparison), the codec names of `ffprobe -show_streams`, and
`ffmpeg` decodes (I420 video, s16le audio) compared byte for byte with mk-decode's, on files
ffmpeg writes (H.264 / HEVC / MPEG-1 and -2 video with AAC, AAC in LATM, MP2, MP3, AC-3, E-AC-3, Opus, M2TS, a PTS
wrap), on timed ID3 streams built here (no FFmpeg tool writes one from nothing), on the TS files of ../shared/media/breadth, cut short, from a pipe and damaged (lost sync, continuity
errors, scrambled packets: warnings, never a crash), and garbage (an error naming what it saw).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import oracle_lib as lib

# name -> ffmpeg arguments after the inputs (video testsrc2 then audio sine, 2 s each).
GENERATED = {
    "h264_aac.ts": ["-c:v", "libx264", "-bf", "2", "-g", "25", "-c:a", "aac", "-f", "mpegts"],
    "h264_aac_stereo_48k.ts": ["-c:v", "libx264", "-bf", "0", "-c:a", "aac", "-ac", "2", "-ar", "48000", "-f", "mpegts"],
    "hevc_ac3.ts": ["-c:v", "libx265", "-x265-params", "log-level=error", "-bf", "2", "-c:a", "ac3", "-ar", "48000", "-f", "mpegts"],
    "h264_mp2.ts": ["-c:v", "libx264", "-c:a", "mp2", "-f", "mpegts"],
    "mp3_only.ts": ["-vn", "-c:a", "libmp3lame", "-f", "mpegts"],
    "h264_eac3.m2ts": ["-c:v", "libx264", "-c:a", "eac3", "-ar", "48000", "-mpegts_m2ts_mode", "1", "-f", "mpegts"],
    "opus_stereo.ts": ["-vn", "-c:a", "libopus", "-ac", "2", "-ar", "48000", "-f", "mpegts"],
    "opus_5.1.ts": ["-vn", "-c:a", "libopus", "-ac", "6", "-ar", "48000", "-f", "mpegts"],
    "h264_opus_mono.ts": ["-c:v", "libx264", "-c:a", "libopus", "-ac", "1", "-ar", "48000", "-f", "mpegts"],
    "mpeg2video_mp2.ts": ["-c:v", "mpeg2video", "-bf", "2", "-c:a", "mp2", "-f", "mpegts"],
    "mpeg1video.ts": ["-an", "-c:v", "mpeg1video", "-f", "mpegts"],
    "h264_aac_wrap.ts": ["-c:v", "libx264", "-c:a", "aac", "-output_ts_offset", "95442", "-f", "mpegts"],
    # AAC in LOAS / LATM (stream type 0x11): FFmpeg's `aac_latm`, cut by its latm parser.
    "latm_stereo_48k.ts": ["-vn", "-c:a", "aac", "-ac", "2", "-ar", "48000", "-mpegts_flags", "latm", "-f", "mpegts"],
}


@lib.generated_once
def _make(name: str, folder: Path) -> Path:
    out = folder / name
    if not out.exists():
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=d=2:s=320x240:r=25",
               "-f", "lavfi", "-i", "sine=d=2", *GENERATED[name], out]
        lib.oracle_ok(lib.run(cmd), cmd)
    return out


def _generate(tmp_path_factory, name: str):
    return _make(name, lib.shared_tmp(tmp_path_factory, "mpegts"))     # once per run, not per worker


def _lines(cmd: list, stdin=None) -> list[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, stdin=stdin, timeout=lib.CMD_TIMEOUT)
    assert proc.returncode == 0, proc.stderr.decode()
    return [l for l in proc.stdout.decode().splitlines() if l.strip()]


def _codecs_like_ffprobe(path, mk_probe):
    """Each track's codec is ffprobe's stream's ('unknown' / '' for a stream neither names)."""
    ours = json.loads(lib.run([mk_probe, "--json", path]).stdout)["tracks"]
    streams = [s for s in lib.ffprobe_json(path)["streams"] if s.get("codec_type") != "data" or s.get("codec_name") != "epg"]
    assert len(ours) == len(streams), f"{path.name}: {len(ours)} tracks, ffprobe {len(streams)} streams"
    for t, s in zip(ours, streams):
        if t["type"] == "data":
            assert s.get("codec_name", "unknown") not in ("h264", "hevc", "aac", "ac3", "eac3", "mp2", "mp3"), (t, s)
        else:
            assert t["codec"] == s["codec_name"], (t, s)
            if t["type"] == "video" and "width" in s:
                assert (t["width"], t["height"]) == (s["width"], s["height"]), (t, s)
            if t["type"] == "audio":
                if t["codec"] == "aac" and int(s["sample_rate"]) == 2 * t["sample_rate"]:
                    # HE-AAC with implicit SBR: the ADTS header states the core rate, ffprobe
                    # the decoder's output rate (twice it); MediaKit's ADTS file reader
                    # (AudioStreamDemuxer) states the core rate too (checked on this stream).
                    continue
                if t["codec"] == "dts":
                    # DTSHeader reads the rate and frame length, not the channel layout (yet).
                    assert t["sample_rate"] == int(s["sample_rate"]), (t, s)
                    continue
                assert (t["sample_rate"], t["channels"]) == (int(s["sample_rate"]), s["channels"]), (t, s)


def _packets_like_ffprobe(path, mk_probe):
    ours = _lines([mk_probe, "--packets", path])
    ref = lib.expected_packets(path)
    assert ref, "ffprobe lists packets"
    assert ours == ref, f"{path.name}: packets differ (track,pts,dts,duration,size,offset,flags)\n" + str(lib.diff_lines(ours, ref, "mk-probe", "ffprobe"))


def _durations_like_ffprobe(path, mk_probe):
    """Each track's duration and the file's (`mk-probe --json`) are ffprobe's, which it
    estimates from the timestamps near the file's end (estimate_timings_from_pts): a track's
    within max(1 ms, its longest packet per ffprobe's packets), the file's within the longest
    packet of any track (test_probe's rule); none where ffprobe gives none. A track ffprobe
    reads no packet of (a cut file's audio) has none: ffprobe gives such a stream the file's
    start and duration (fill_all_stream_timings), which are not the track's."""
    ours = json.loads(lib.run([mk_probe, "--json", path]).stdout)
    info = lib.ffprobe_json(path)
    longest = lib.max_packet_seconds(path)
    with_packets = {int(l.split(",")[0]) for l in lib.expected_packets(path)}
    streams = [(rank, s) for rank, s in enumerate(lib.track_streams(info)) if s.get("codec_name") != "epg"]
    assert len(ours["tracks"]) == len(streams), f"{path.name}: {len(ours['tracks'])} tracks, ffprobe {len(streams)} streams"
    problems = []
    for t, (rank, s) in zip(ours["tracks"], streams):
        tol = max(0.001, float(longest.get(rank, 0)))
        ref = float(s.get("duration", 0)) if rank in with_packets else 0.0
        if abs(t["duration"] - ref) > tol + 1e-6:
            problems.append(f"track {rank}: duration {t['duration']} s, ffprobe {s.get('duration', 'N/A')} s (allowed +-{tol:.6f} s)")
    ref_fmt = info.get("format", {}).get("duration")
    tol = max([0.001] + [float(v) for v in longest.values()])
    fmt = ours["format"].get("duration")
    if (fmt is None) != (ref_fmt is None) or (fmt is not None and abs(fmt - float(ref_fmt)) > tol + 1e-6):
        problems.append(f"file: duration {fmt} s, ffprobe {ref_fmt} s (allowed +-{tol:.6f} s)")
    assert not problems, f"{path.name}: `mk-probe --json` durations differ from ffprobe's:\n  " + "\n  ".join(problems)


def _decode_like_ffmpeg(path, mk_decode, tmp_path, mk_probe=None):
    """First video track to I420 and first audio track to s16le, byte for byte with ffmpeg's
    decode of the same file (the same libavcodec decoders behind both), one decoder thread on
    both sides: a frame cut by the end of a file is concealed differently from run to run with
    frame threads (ts_Vanilagy_4c8570_no-aud.ts showed it). With `mk_probe`, a
    first track of a codec no loaded plugin decodes (a libavcodec built without that decoder)
    is left out: that is the plugin's catalogue, not the demuxer."""
    info = lib.ffprobe_json(path)
    kinds = {s.get("codec_type") for s in info["streams"]}
    if mk_probe is not None:
        decodable = lib.plugin_priorities(mk_probe)
        for kind in ("video", "audio"):
            first = next((s for s in info["streams"] if s.get("codec_type") == kind), None)
            if first is not None and first.get("codec_name") not in decodable:
                kinds.discard(kind)
    if "video" in kinds:
        out = tmp_path / "out.i420"
        cmd = [mk_decode, path, "--video-out", out, "--pixel-format", "i420", "--threads", "1", "-q"]
        lib.check_ok(lib.run(cmd), cmd)
        ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-threads", "1", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                   "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]
        want = lib.run(ref_cmd).stdout
        assert want and out.read_bytes() == want, f"{path.name}: `{lib.shell_line(cmd)}` differs from `{lib.shell_line(ref_cmd)}`"
    if "audio" in kinds:
        out = tmp_path / "out.pcm"
        cmd = [mk_decode, path, "--audio-out", out, "-q"]
        lib.check_ok(lib.run(cmd), cmd)
        # libopus on both sides for Opus (FFmpeg's native decoder differs in the last bit).
        first = next(s for s in info["streams"] if s.get("codec_type") == "audio")
        decoder = ["-c:a", "libopus"] if first.get("codec_name") == "opus" else []
        ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", *decoder, "-i", path, "-map", "0:a:0", "-f", "s16le", "-"]
        want = lib.run(ref_cmd).stdout
        assert want and out.read_bytes() == want, f"{path.name}: `{lib.shell_line(cmd)}` differs from `{lib.shell_line(ref_cmd)}`"


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_ts_like_ffmpeg(name, mk_probe, mk_decode, tmp_path_factory, tmp_path):
    """Packets, codecs and decodes of files ffmpeg's mpegts muxer writes; the wrap file's
    timestamps cross 2^33 (the first ones within 60 s of it: negative, as ffprobe shows them)."""
    path = _generate(tmp_path_factory, name)
    _codecs_like_ffprobe(path, mk_probe)
    _packets_like_ffprobe(path, mk_probe)
    _durations_like_ffprobe(path, mk_probe)
    _decode_like_ffmpeg(path, mk_decode, tmp_path, mk_probe)


def test_wrap_file_crosses_the_wrap(tmp_path_factory, mk_probe):
    """The wrap case is one: raw 33-bit timestamps fall back to near 0 in it, ours rise."""
    path = _generate(tmp_path_factory, "h264_aac_wrap.ts")
    pts = [int(l.split(",")[1]) for l in _lines([mk_probe, "--packets", path]) if l.split(",")[1] != "N/A"]
    assert min(pts) < 0 < max(pts)


def test_pipe_reads_as_the_file(tmp_path_factory, mk_probe):
    """`cat x.ts | mk-probe --packets -` gives the file's packets (the reader never goes back).
    From a pipe nothing tells the durations (the end cannot be read first): no track or file
    duration, as ffprobe gives none from a pipe."""
    path = _generate(tmp_path_factory, "h264_aac.ts")
    with open(path, "rb") as f:
        piped = _lines([mk_probe, "--packets", "-"], stdin=f)
    assert piped == _lines([mk_probe, "--packets", path])
    with open(path, "rb") as f:
        ours = json.loads("\n".join(_lines([mk_probe, "--json", "-"], stdin=f)))
    with open(path, "rb") as f:
        ref = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_entries", "format=duration:stream=duration", "-of", "json", "-"],
                                        stdin=f, capture_output=True, timeout=lib.CMD_TIMEOUT).stdout)
    assert "duration" not in ref["format"] and not any("duration" in s for s in ref["streams"]), ref
    assert "duration" not in ours["format"] and all(t["duration"] == 0 for t in ours["tracks"]), ours


@pytest.mark.parametrize("cut", [50001, 188 * 100, 188 * 100 + 4, 3000])
def test_cut_file_reads_as_far_as_ffprobe(cut, tmp_path_factory, mk_probe, tmp_path):
    """A file cut anywhere: the packets ffprobe reads from it, then a warning when the cut is
    inside a transport packet; exit status 0; the durations ffprobe estimates for it."""
    data = _generate(tmp_path_factory, "h264_aac.ts").read_bytes()
    path = tmp_path / "cut.ts"
    path.write_bytes(data[:cut])
    proc = lib.run([mk_probe, "--packets", path])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    ours = [l for l in proc.stdout.decode().splitlines() if l.strip()]
    assert ours == lib.expected_packets(path), lib.diff_lines(ours, lib.expected_packets(path), "mk-probe", "ffprobe")
    _durations_like_ffprobe(path, mk_probe)
    if cut % 188:
        assert b"ends inside a transport packet" in proc.stderr, lib.tail(proc.stderr)


PY_AUDIO_EXTRADATA = r"""
import sys, mediakit
with mediakit.open(sys.argv[1]) as d:
    print([t for t in d.tracks if t.media_type == "audio"][0].extradata.hex())
"""


def test_latm_extradata_is_ffmpegs(tmp_path_factory, mk_bin):
    """The LATM track's extradata (its StreamMuxConfig's AudioSpecificConfig) is the one the
    aac_latm decoder of ffprobe's stream-info pass sets."""
    path = _generate(tmp_path_factory, "latm_stereo_48k.ts")
    env = dict(os.environ, MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"), PYTHONPATH=str(lib.REPO / "Bindings" / "python"))
    proc = lib.run([sys.executable, "-c", PY_AUDIO_EXTRADATA, path], env=env)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    ref = _ffprobe_extradata(path, "a:0")
    assert ref and proc.stdout.decode().strip() == ref


def _ts_packet(pid: int, start: bool, payload: bytes, cc: dict) -> bytes:
    """One 188-byte transport packet (stuffed through an adaptation field)."""
    counter = cc.get(pid, 0)
    cc[pid] = (counter + 1) & 15
    head = bytes([0x47, (0x40 if start else 0) | pid >> 8, pid & 0xFF])
    stuffing = 184 - len(payload)
    if stuffing == 0:
        return head + bytes([0x10 | counter]) + payload
    field = bytes([stuffing - 1]) + (bytes([0]) + b"\xff" * (stuffing - 2) if stuffing > 1 else b"")
    return head + bytes([0x30 | counter]) + field + payload


def _ts_section(table: int, table_id: int, body: bytes, version: int = 0) -> bytes:
    """A PSI section with its CRC-32/MPEG-2."""
    length = 5 + len(body) + 4
    s = bytes([table, 0xB0 | length >> 8, length & 0xFF, table_id >> 8, table_id & 0xFF, 0xC1 | version << 1 & 0x3E, 0, 0]) + body
    crc = 0xFFFFFFFF
    for byte in s:
        crc ^= byte << 24
        for _ in range(8):
            crc = ((crc << 1) ^ 0x04C11DB7 if crc & 0x80000000 else crc << 1) & 0xFFFFFFFF
    return s + crc.to_bytes(4, "big")


def _ts_pes(pid: int, stream_id: int, pts: int, payload: bytes, cc: dict) -> bytes:
    """A PES with a PTS, in as many transport packets as it takes."""
    t = pts & ((1 << 33) - 1)
    stamp = bytes([0x21 | (t >> 29) & 0x0E, (t >> 22) & 0xFF, (t >> 14) & 0xFE | 1, (t >> 7) & 0xFF, (t << 1) & 0xFE | 1])
    body = bytes([0x80, 0x80, 5]) + stamp + payload
    data = bytes([0, 0, 1, stream_id]) + len(body).to_bytes(2, "big") + body
    return b"".join(_ts_packet(pid, i == 0, data[i:i + 184], cc) for i in range(0, len(data), 184))


def _adts_frames() -> list[bytes]:
    """The frames of 0.3 s of AAC in ADTS (44.1 kHz mono, 1024 samples: 2089.8 ticks each) by ffmpeg."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", "sine=d=0.3", "-c:a", "aac", "-f", "adts", "-"]
    adts = lib.run(cmd).stdout
    frames = []
    while len(adts) >= 7:
        size = (adts[3] & 3) << 11 | adts[4] << 3 | adts[5] >> 5
        frames.append(adts[:size])
        adts = adts[size:]
    assert len(frames) >= 12, cmd
    return frames


def _id3_tag(text: str) -> bytes:
    """An ID3v2.4 tag with one TXXX frame, as HLS timed metadata carries one."""
    value = b"\x03\x00" + text.encode()
    frame = b"TXXX" + len(value).to_bytes(4, "big") + b"\x00\x00" + value
    n = len(frame)
    return b"ID3\x04\x00\x00" + bytes([n >> 21 & 0x7F, n >> 14 & 0x7F, n >> 7 & 0x7F, n & 0x7F]) + frame


# ES descriptors that make stream type 0x15 timed ID3 for FFmpeg: HLS's metadata descriptor
# (format identifier "ID3 ", as Apple's segmenters and FFmpeg's mpegts muxer write it), or an
# "ID3 " registration; none leaves it a stream neither names.
ID3_DESCRIPTORS = {
    "metadata": bytes([0x26, 13, 0xFF, 0xFF]) + b"ID3 " + b"\xff" + b"ID3 " + bytes([0, 0x0F]),
    "registration": bytes([0x05, 4]) + b"ID3 ",
    "none": b"",
}


@pytest.mark.parametrize("kind", sorted(ID3_DESCRIPTORS))
def test_timed_id3_like_ffprobe(kind, mk_probe, tmp_path):
    """A transport stream of ADTS audio (PID 0x101) and timed ID3 (stream type 0x15, PID
    0x102, PES stream id 0xFC), built here: ffprobe's streams (`timed_id3` data, or unknown)
    and packets (one per PES, key frames when FFmpeg names the codec, no duration, the first
    5 bytes of each PES dropped: FFmpeg takes them for a metadata AU cell header)."""
    cc: dict = {}
    es = ID3_DESCRIPTORS[kind]
    pmt = bytes([0xE1, 0x01, 0xF0, 0x00, 0x0F, 0xE1, 0x01, 0xF0, 0x00,
                 0x15, 0xE1, 0x02, 0xF0 | len(es) >> 8, len(es) & 0xFF]) + es
    out = _ts_packet(0, True, b"\x00" + _ts_section(0, 1, bytes([0, 1, 0xF0, 0x00])), cc)
    out += _ts_packet(0x1000, True, b"\x00" + _ts_section(2, 1, pmt), cc)
    frames = _adts_frames()
    for i in range(6):   # two frames (2048 samples at 44.1 kHz: 4180 ticks) per PES
        out += _ts_pes(0x101, 0xC0, 90000 + i * 4180, frames[2 * i] + frames[2 * i + 1], cc)
        if i % 2 == 0:
            out += _ts_pes(0x102, 0xFC, 90000 + i * 4180, _id3_tag(f"cue {i} " + "x" * (150 * i)), cc)
    path = tmp_path / f"id3_{kind}.ts"
    path.write_bytes(out)
    streams = lib.ffprobe_json(path)["streams"]
    ours = json.loads(lib.run([mk_probe, "--json", path]).stdout)["tracks"]
    named = kind != "none"
    assert [s.get("codec_name", "unknown") for s in streams] == ["aac", "timed_id3" if named else "unknown"]
    assert ours[0]["codec"] == "aac" and ours[1]["type"] == "data" and (ours[1]["codec"] == "timed_id3") == named, ours
    _packets_like_ffprobe(path, mk_probe)


@pytest.mark.parametrize("when", ["opening", "later"])
def test_pmt_change_like_ffprobe(when, mk_probe, tmp_path):
    """PMT version 0 lists ADTS audio on PID 0x101; version 1 adds a second on PID 0x102.
    FFmpeg adds the new stream whenever it comes. When version 1 comes while the reader opens
    (inside the first PES) MediaKit lists the track at once; when it comes after, opening finds
    it by looking through the rest of the (seekable) file: either way the tracks and packets
    equal ffprobe's. From a pipe (no looking ahead) a later version adds the track while
    reading, as FFmpeg does, with a warning naming the PID: every packet equals ffprobe's."""
    cc: dict = {}
    frames = _adts_frames()

    def pmt(version: int) -> bytes:
        body = bytes([0xE1, 0x01, 0xF0, 0x00, 0x0F, 0xE1, 0x01, 0xF0, 0x00])
        if version:
            body += bytes([0x0F, 0xE1, 0x02, 0xF0, 0x00])
        return _ts_packet(0x1000, True, b"\x00" + _ts_section(2, 1, body, version), cc)
    out = _ts_packet(0, True, b"\x00" + _ts_section(0, 1, bytes([0, 1, 0xF0, 0x00])), cc) + pmt(0)
    change = 0 if when == "opening" else 3
    for i in range(6):
        pes = _ts_pes(0x101, 0xC0, 90000 + i * 4180, frames[2 * i] + frames[2 * i + 1], cc)
        if i == change:
            pes = pes[:188] + pmt(1) + pes[188:]
        out += pes
        if i >= change:
            out += _ts_pes(0x102, 0xC1, 90000 + i * 4180, frames[2 * i], cc)
    path = tmp_path / f"pmt_{when}.ts"
    path.write_bytes(out)
    assert len(lib.ffprobe_json(path)["streams"]) == 2
    _codecs_like_ffprobe(path, mk_probe)
    _packets_like_ffprobe(path, mk_probe)
    if when == "later":
        with open(path, "rb") as f:
            proc = subprocess.run([str(mk_probe), "--packets", "-"], stdin=f, capture_output=True, timeout=lib.CMD_TIMEOUT)
        assert proc.returncode == 0 and b"the PMT changed (version 0 to 1)" in proc.stderr and b"adds PID 258 as track 1" in proc.stderr, lib.tail(proc.stderr)
        ours = [l for l in proc.stdout.decode().splitlines() if l.strip()]
        assert ours == lib.expected_packets(path)


@pytest.mark.parametrize("size", ["short", "long"])
@pytest.mark.parametrize("version", [0, 1])
def test_joined_captures_like_ffprobe(size, version, mk_probe, mk_remux, tmp_path):
    """Two of FFmpeg's transport streams joined (`cat a.ts b.ts`, as captures and HLS segments
    are): H.264 + AAC, then H.264 + AAC + MP2 on a new PID, the second's PMT of version 1 or,
    as FFmpeg writes by default, the same version 0 with other contents (FFmpeg takes a new
    CRC for a change). The joined file is under MPEGTSDemuxer.scanWhole (8 MiB: the whole
    rest looked through, window after window) or over it (16 places in it). ffprobe lists the
    MP2 stream and its packets; so does MediaKit, whose tracks and packets equal ffprobe's (the
    continuity counters jump at the join: warnings); from a pipe too (the MP2 track is added
    while reading, with a warning naming its PID).

    FFmpeg learns a stream's codec and rate within its probe window (-probesize 5 MB by
    default). The long file's new stream starts past it, where ffprobe names stream type 0x03
    "mp3" with no sample rate and gives its first packet no duration (the parser had no rate);
    MediaKit learns the stream at open. ffprobe with a window over the whole file reads it so
    too, and is the oracle for the long file."""
    dims = "320x240" if size == "short" else "1280x720"
    common = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"testsrc2=d=3:s={dims}:r=25"]
    x264 = ["-c:v", "libx264", "-preset", "ultrafast", "-g", "25", "-qp", "0"]   # lossless: megabytes a second
    a, b = tmp_path / "a.ts", tmp_path / "b.ts"
    lib.run(common + ["-f", "lavfi", "-i", "sine=d=3", *x264, "-c:a", "aac", "-f", "mpegts", a])
    lib.run(common + ["-f", "lavfi", "-i", "sine=d=3:f=880", "-f", "lavfi", "-i", "sine=d=3:f=220", "-map", "0", "-map", "1",
                      "-map", "2", *x264, "-c:a:0", "aac", "-c:a:1", "mp2", "-tables_version", str(version), "-f", "mpegts", b])
    path = tmp_path / "joined.ts"
    path.write_bytes(a.read_bytes() + b.read_bytes())
    assert path.stat().st_size < 8 << 20 if size == "short" else path.stat().st_size > 9 << 20
    assert path.stat().st_size > 1 << 20   # more than one window
    probe = ["-probesize", "64M", "-analyzeduration", "100M"] if size == "long" else []
    streams = json.loads(lib.run(["ffprobe", "-v", "error", *probe, "-show_streams", "-of", "json", path]).stdout)["streams"]
    tracks = json.loads(lib.run([mk_probe, "--json", path]).stdout)["tracks"]
    assert [s["codec_name"] for s in streams] == [t["codec"] for t in tracks] == ["h264", "aac", "mp2"]
    assert [int(s["sample_rate"]) for s in streams[1:]] == [t["sample_rate"] for t in tracks[1:]]
    cmd = lib.ffprobe_packets_cmd(path)
    cmd[1:1] = probe
    ref = []
    for line in lib.run(cmd).stdout.decode().splitlines():
        if line.strip():
            f = line.split(",")
            ref.append(",".join(f[:6] + ["K" if f[6].startswith("K") else "_"]))
    assert len(ref) > 500
    ours = _lines([mk_probe, "--packets", path])
    assert ours == ref, str(lib.diff_lines(ours, ref, "mk-probe", "ffprobe"))
    with open(path, "rb") as f:
        proc = subprocess.run([str(mk_probe), "--packets", "-"], stdin=f, capture_output=True, timeout=lib.CMD_TIMEOUT)
    assert proc.returncode == 0 and b"adds PID 258 as track 2" in proc.stderr, lib.tail(proc.stderr)
    piped = [l for l in proc.stdout.decode().splitlines() if l.strip()]
    assert piped == ref, str(lib.diff_lines(piped, ref, "mk-probe from a pipe", "ffprobe"))
    if size == "long":
        # A remux from the pipe keeps the streams known at the start, as ffmpeg's does (which
        # warns "New audio stream"); mk-remux says which track it left out. (ffmpeg reads a
        # pipe's first 5 MB before it starts; the short file's MP2 stream comes within them,
        # and ffmpeg's remux keeps it: MediaKit starts once the first PMT's tracks are known.)
        ours_mkv, ref_mkv = tmp_path / "piped.mkv", tmp_path / "piped-ffmpeg.mkv"
        with open(path, "rb") as f:
            proc = subprocess.run([str(mk_remux), "--quiet", "-", str(ours_mkv)], stdin=f, capture_output=True, timeout=lib.CMD_TIMEOUT)
        assert proc.returncode == 0 and b"track 2 (audio mp2, id 258) was added while reading" in proc.stderr, lib.tail(proc.stderr)
        with open(path, "rb") as f:
            subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", "-", "-map", "0", "-c", "copy", str(ref_mkv)],
                           stdin=f, check=True, capture_output=True, timeout=lib.CMD_TIMEOUT)
        codecs = [[s["codec_name"] for s in lib.ffprobe_json(p)["streams"]] for p in (ours_mkv, ref_mkv)]
        assert codecs[0] == codecs[1] == ["h264", "aac"], codecs


def test_garbage_is_an_error_naming_what_it_saw(mk_probe, tmp_path):
    path = tmp_path / "junk.ts"
    path.write_bytes(bytes((i * 151 + 7) % 251 for i in range(5000)))
    proc = lib.run([mk_probe, "--packets", path])
    assert proc.returncode == 1 and b"MPEG-TS" in proc.stderr and b"no container" in proc.stderr, lib.tail(proc.stderr)


def test_sync_bytes_without_a_pat_are_an_error(mk_probe, tmp_path):
    """Packets in sync but no PAT on PID 0: an error saying so, with the offset."""
    packet = bytes([0x47, 0x01, 0x00, 0x10]) + bytes(184)
    path = tmp_path / "nopat.ts"
    path.write_bytes(packet * 50)
    proc = lib.run([mk_probe, "--packets", path])
    assert proc.returncode == 1 and b"no PAT" in proc.stderr, lib.tail(proc.stderr)


def _pids(data: bytes, size: int = 188) -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for at in range(0, len(data) - size + 1, size):
        out.setdefault((data[at + 1] & 0x1F) << 8 | data[at + 2], []).append(at)
    return out


def _damaged(tmp_path_factory, tmp_path):
    """A copy of h264_aac.ts with every audio packet after the first three scrambled, one video
    packet dropped in the middle and 50 bytes of junk inserted later."""
    data = bytearray(_generate(tmp_path_factory, "h264_aac.ts").read_bytes())
    pids = _pids(bytes(data))
    video_pid, audio_pid = 0x100, 0x101
    assert video_pid in pids and audio_pid in pids, sorted(pids)
    for at in pids[audio_pid][3:]:
        data[at + 3] |= 0x80
    drop = pids[video_pid][len(pids[video_pid]) // 2]
    damaged = bytes(data[:drop]) + bytes(data[drop + 188:])
    junk_at = 188 * 300
    damaged = damaged[:junk_at] + b"\x00" * 50 + damaged[junk_at:]
    path = tmp_path / "damaged.ts"
    path.write_bytes(damaged)
    return path


def _warnings(stderr: bytes) -> list[str]:
    return [l.split("warning: ", 1)[1] for l in stderr.decode().splitlines() if "warning: " in l]


def test_damage_is_a_warning_not_a_failure(tmp_path_factory, mk_probe, mk_remux, tmp_path):
    """A continuity-counter jump (a dropped packet), lost sync (bytes inserted) and scrambled
    packets on the audio PID: each named on standard error with its PID or offset; the file is
    still read to its end and the video track keeps its packets. A remux of it says the same:
    mk-remux prints the warnings mk-probe prints (the same file read another way), and the MP4
    holds the video packets mk-probe read (ffprobe's count of the MP4's)."""
    video_pid, audio_pid = 0x100, 0x101
    good = _lines([mk_probe, "--packets", _generate(tmp_path_factory, "h264_aac.ts")])
    path = _damaged(tmp_path_factory, tmp_path)
    proc = lib.run([mk_probe, "--packets", path])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    err = proc.stderr.decode()
    assert f"continuity counter on PID {video_pid} jumps" in err, err
    assert f"PID {audio_pid} is scrambled" in err, err
    assert f"lost sync at offset" in err or "lost sync" in err, err
    ours = [l for l in proc.stdout.decode().splitlines() if l.strip()]
    video = [l for l in ours if l.startswith("0,")]
    assert len(video) >= len([l for l in good if l.startswith("0,")]) - 2
    assert len([l for l in ours if l.startswith("1,")]) < len([l for l in good if l.startswith("1,")])

    # The video track (the audio one has no packet left to learn its rate from).
    out = tmp_path / "damaged.mp4"
    remux = lib.run([mk_remux, "--quiet", "--track", "0", path, out])
    assert remux.returncode == 0, lib.tail(remux.stderr)
    said = _warnings(proc.stderr)
    assert said, err
    assert _warnings(remux.stderr) == said, remux.stderr.decode()
    counts = lib.run(["ffprobe", "-v", "error", "-show_entries", "packet=stream_index", "-of", "csv=p=0", out])
    lib.oracle_ok(counts, ["ffprobe", out])
    assert len(counts.stdout.decode().split()) == len(video), "the MP4 does not hold the video packets mk-probe read"


C_REMUX_WARNINGS = r'''
#include <stdio.h>
#include "mediakit/mediakit.h"
static void told(void *user, const char *message) { ++*(int *)user; printf("%s\n", message); }
int main(int argc, char **argv) {
    if (argc != 3) return 2;
    mk_muxer_settings s;
    mk_muxer_default_settings(&s);
    int32_t video = 0, count = 0;
    s.tracks = &video;
    s.track_count = 1;
    s.warning = told;
    s.warning_user = &count;
    if (mk_remux(argv[1], argv[2], &s) != MK_OK) { fprintf(stderr, "%s\n", mk_last_error()); return 1; }
    /* mk_muxer_open takes no warning callback: it is mk_remux's */
    s.tracks = NULL;
    s.track_count = 0;
    mk_muxer *m = NULL;
    if (mk_muxer_open(&m, argv[2], &s) != MK_EINVAL || m != NULL) { fprintf(stderr, "mk_muxer_open took a warning callback\n"); return 1; }
    return count > 0 ? 0 : 3;
}
'''


def test_c_and_python_remux_tell_the_warnings_mk_probe_prints(tmp_path_factory, mk_bin, mk_probe, tmp_path):
    """mk_remux's warning callback (C) and mediakit.remux(warning=) (Python) are told the damage
    the demuxer read past, as mk-remux prints it: the same messages as mk-probe's warnings for the
    file (the same reading, another way), in order; without the callback, Python's remux says
    nothing."""
    from test_capi import _build, _libdir
    path = _damaged(tmp_path_factory, tmp_path)
    probe = lib.run([mk_probe, "--packets", path])
    assert probe.returncode == 0, lib.tail(probe.stderr)
    said = _warnings(probe.stderr)
    assert said, probe.stderr.decode()
    c_file = tmp_path / "remux_warnings.c"
    c_file.write_text(C_REMUX_WARNINGS)
    program = _build(c_file, tmp_path / "remux_warnings", _libdir(mk_bin))
    cmd = [program, str(path), str(tmp_path / "c.mp4")]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="remux_warnings.c")
    assert proc.stdout.decode().splitlines() == said, proc.stdout.decode()
    script = ("import sys, mediakit\n"
              "mediakit.remux(sys.argv[1], sys.argv[2], tracks=[0], warning=print)\n"
              "mediakit.remux(sys.argv[1], sys.argv[3], tracks=[0])\n")
    env = dict(os.environ, PYTHONPATH=str(lib.REPO / "Bindings" / "python"),
               MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"))
    cmd = [sys.executable, "-W", "error", "-c", script, str(path), str(tmp_path / "py.mp4"), str(tmp_path / "quiet.mp4")]
    proc = lib.run(cmd, env=env)
    lib.check_ok(proc, cmd, who="python")
    assert proc.stdout.decode().splitlines() == said, proc.stdout.decode()
    assert not proc.stderr, proc.stderr.decode()


def test_probe_does_not_take_other_formats(mk_probe, tmp_path):
    """A file that starts with 0x47 but has no sync byte 188 bytes on is not MPEG-TS."""
    path = tmp_path / "g.bin"
    path.write_bytes(b"\x47" + bytes(range(256)) * 20)
    proc = lib.run([mk_probe, path])
    assert proc.returncode == 1 and b"MPEG-TS" in proc.stderr and b"no container" in proc.stderr, lib.tail(proc.stderr)


# Breadth files whose packets cannot all equal ffprobe's yet, and why. Each names what is
# still compared: "no_duration:T" blanks the duration of track T on both sides (ffprobe's
# comes from somewhere MediaKit does not read), "tracks:T,.." compares only these tracks,
# "read" only asks the file to be read without an error.
BREADTH_DIFFERENCES: dict[str, tuple[str, str]] = {
    "ts_androidx_c83c1b_sample_ait.ts": (
        "tracks:0",
        "FFmpeg adds an 'epg' data stream of the DVB EIT sections (PID 0x12) that MediaKit does not "
        "list; the AIT (stream type 0x05) holds sections, not PES, and neither lists packets for it"),
    "ts_androidx_b47199_sample_mpegh_bl_cicp1_single.ts": (
        "read",
        "MPEG-H 3D audio (stream type 0x2D), which FFmpeg 5.1 has no type for: it probes the PES "
        "bytes, takes them for MP3 (sample rate 0) and its mpegaudio parser cuts them at false "
        "sync words; MediaKit keeps each PES as a packet of a data track"),
    "ts_androidx_c35ee4_sample_mpegh_bl_configchange_single.ts": (
        "read",
        "MPEG-H 3D audio (stream type 0x2D), which FFmpeg 5.1 has no type for: it probes the PES "
        "bytes, takes them for MP3 (sample rate 0) and its mpegaudio parser cuts them at false "
        "sync words; MediaKit keeps each PES as a packet of a data track"),
    "ts_androidx_c883fe_sample_mpegh_bl_cicp1_multi.ts": (
        "read",
        "MPEG-H 3D audio (stream type 0x2D), which FFmpeg 5.1 has no type for: it probes the PES "
        "bytes, takes them for MP3 (sample rate 0) and its mpegaudio parser cuts them at false "
        "sync words; MediaKit keeps each PES as a packet of a data track"),
    "ts_androidx_ee96c7_sample_mpegh_bl_cicp1_cont.ts": (
        "read",
        "MPEG-H 3D audio (stream type 0x2D), which FFmpeg 5.1 has no type for: it probes the PES "
        "bytes, takes them for MP3 (sample rate 0) and its mpegaudio parser cuts them at false "
        "sync words; MediaKit keeps each PES as a packet of a data track"),
}


def _breadth_ts() -> list:
    names = sorted(p.name for p in (lib.SHARED_MEDIA / "breadth").glob("*")
                   if p.suffix.lower() in (".ts", ".m2ts", ".mts"))
    return [pytest.param(f"shared:breadth/{n}", id=n) for n in names] or [pytest.param("shared:breadth/<none>.ts", id="none")]


@pytest.mark.parametrize("spec", _breadth_ts())
def test_breadth_ts_files_like_ffprobe(spec, mk_probe, mk_decode, tmp_path):
    """Every TS of ../shared/media/breadth (HLS segments of shaka-player and mediabunny,
    androidx's broadcast samples): packets equal ffprobe's, decode equals ffmpeg's; the files of
    BREADTH_DIFFERENCES compare what can be compared, for the reason given there."""
    path = lib.media_param_file(spec, tmp_path, None)
    how, _why = BREADTH_DIFFERENCES.get(path.name, ("all", ""))
    proc = lib.run([mk_probe, "--packets", path])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    ours = [l for l in proc.stdout.decode().splitlines() if l.strip()]
    ref = lib.expected_packets(path)
    if how == "read":
        assert ours, f"{path.name}: no packets"
        return
    if how.startswith("tracks:"):
        keep = set(how[7:].split(","))
        ours = [l for l in ours if l.split(",")[0] in keep]
        ref = [l for l in ref if l.split(",")[0] in keep]
    if how.startswith("no_duration:"):
        track = how.split(":")[1]

        def blank(lines):
            return [",".join(f[:3] + ["-"] + f[4:]) if f[0] == track else l for l, f in ((l, l.split(",")) for l in lines)]
        ours, ref = blank(ours), blank(ref)
    assert ours == ref, f"{path.name}: packets differ\n" + str(lib.diff_lines(ours, ref, "mk-probe", "ffprobe"))
    if how == "all":
        _codecs_like_ffprobe(path, mk_probe)
        _durations_like_ffprobe(path, mk_probe)
        _decode_like_ffmpeg(path, mk_decode, tmp_path, mk_probe)


# Decoding timestamps given to a segment whose SPS states no timing (setts expressions of N,
# the packet's number), and the rate ffprobe guesses from them (for the test's own reading).
RATE_GUESS_TIMESTAMPS = {
    "25_exact": "900000+N*3600",                                  # 25/1 by the steps' divisor
    "24000_1001_rounded": "900000+trunc(N*3753.75)",              # 24000/1001 by the grid fit
    "60000_1001_rounded": "900000+trunc(N*1501.5)",               # 60000/1001 by the grid fit
    "alternating": "900000+N*3000+(N-3*trunc(N/3))*700",          # 50/1: the divisor of 2300 / 3700 / 2300 ...
    "jittered_30000_1001": "900000+N*3003+trunc(random(0)*40)",   # 30000/1001 despite the jitter
    "one_per_second": "900000+N*90000",                           # 1/1: the reading stops after 5 s of it
}


@pytest.mark.parametrize("name", sorted(RATE_GUESS_TIMESTAMPS))
def test_rate_guessed_from_timestamps_like_ffprobe(name, tmp_path, mk_probe):
    """An H.264 segment without timing in its SPS (a breadth file of ../shared/media, re-timed
    by ffmpeg's setts filter): each packet lasts one frame of the rate FFmpeg's stream-info pass
    guesses from the decoding timestamps (r_frame_rate), so the packets equal ffprobe's,
    durations included; from a pipe, the same packets as from the file."""
    src = lib.media_param_file("shared:breadth/ts_shaka-proj_371ec3_6.ts", tmp_path, None)
    path = tmp_path / f"{name}.ts"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-c", "copy", "-bsf:v", f"setts=ts={RATE_GUESS_TIMESTAMPS[name]}",
           "-f", "mpegts", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    ours = _lines([mk_probe, "--packets", path])
    ref = lib.expected_packets(path)
    assert ours == ref, f"{name}: packets differ\n" + str(lib.diff_lines(ours, ref, "mk-probe", "ffprobe"))
    assert all(l.split(",")[3] != "N/A" for l in ours), ours[:3]
    with open(path, "rb") as f:
        assert _lines([mk_probe, "--packets", "-"], stdin=f) == ours


@lib.generated_once
def _make_long(name: str, folder: Path) -> Path:
    """16 s of noisy 320x240 H.264 (about 6.5 MB: above the reader's bisection threshold of
    two 1 MiB windows), a key frame every 4 s (about 1.6 MB apart), B-frames, AAC."""
    out = folder / name
    if not out.exists():
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=d=16:s=320x240:r=25,noise=alls=12:allf=t",
               "-f", "lavfi", "-i", "sine=d=16", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "26", "-bf", "2", "-g", "100",
               "-keyint_min", "100", "-sc_threshold", "0", "-c:a", "aac", "-f", "mpegts", out]
        lib.oracle_ok(lib.run(cmd), cmd)
    return out


@pytest.mark.parametrize("name", ["h264_aac.ts", "hevc_ac3.ts", "h264_long.ts"])
def test_seek_gives_the_frame_presented_at_the_time(name, tmp_path_factory, mk_decode, tmp_path):
    """`mk-decode --seek T --frames 1`: the picture ffmpeg's full decode presents first at or
    after T (a PTS in seconds, as the packets carry it: the file's timestamps start near 1.4 s).
    `ffmpeg -ss` is no oracle here: it is relative to the start time and lands on the byte
    position, decoding from a non-key frame. The long file is larger than the reader's
    bisection threshold: its seeks (mid-GOP, 2.5 s and about 1 MB after the key frame, and
    at the end) go through the bisection and the step back to the key frame."""
    long = name == "h264_long.ts"
    path = _make_long(name, lib.shared_tmp(tmp_path_factory, "mpegts")) if long else _generate(tmp_path_factory, name)
    cmd = ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts", "-of", "csv=p=0", path]
    pts = [int(l.strip(",")) for l in lib.run(cmd).stdout.decode().split() if l.strip(",").lstrip("-").isdigit()]
    assert len(pts) == (400 if long else 50), pts
    if long:
        assert path.stat().st_size > 3 << 20, path.stat().st_size
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-threads", "1", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
               "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]
    frames = lib.run(ref_cmd).stdout
    size = 320 * 240 * 3 // 2
    assert len(frames) == size * len(pts)
    times = (pts[0] / 90000 + 0.5, pts[0] / 90000 + 1.07, pts[-1] / 90000)
    if long:
        times = (pts[0] / 90000 + 0.5, pts[0] / 90000 + 10.52, pts[0] / 90000 + 12.0, pts[-1] / 90000)
    for seconds in times:
        k = next(i for i, p in enumerate(pts) if p >= seconds * 90000 - 1e-6)
        out = tmp_path / "seek.i420"
        cmd = [mk_decode, path, "--seek", f"{seconds:.6f}", "--frames", "1", "--video-out", out, "--pixel-format", "i420",
               "--threads", "1", "-q"]
        lib.check_ok(lib.run(cmd), cmd)
        assert out.read_bytes() == frames[k * size:(k + 1) * size], f"{name}: --seek {seconds:.6f} is not frame {k} (pts {pts[k]})"


PY_EXTRADATA = r"""
import sys, mediakit
with mediakit.open(sys.argv[1]) as d:
    video = [t for t in d.tracks if t.media_type == "video"]
    print(video[0].extradata.hex() if video else "")
"""


def _ffprobe_extradata(path, stream: str = "v:0") -> str:
    cmd = ["ffprobe", "-v", "error", "-select_streams", stream, "-show_streams", "-show_data", path]
    text = lib.run(cmd).stdout.decode()
    if "extradata=\n" not in text:
        return ""
    out = ""
    for line in text.split("extradata=\n", 1)[1].splitlines():
        if not line.startswith("0000"):
            break
        out += "".join(line.split(":", 1)[1].strip().split("  ")[0].split())
    return out


@pytest.mark.parametrize("spec", [f"gen:{n}" for n in sorted(GENERATED) if not n.startswith(("mp3", "opus"))]
                         + [p.values[0] for p in _breadth_ts()])
def test_video_extradata_is_ffmpegs(spec, mk_bin, tmp_path_factory, tmp_path):
    """The video track's extradata (Python's Track.extradata, through the C API) is the one
    ffprobe shows: H.264 / HEVC parameter sets behind 3-byte start codes, each up to the next
    3-byte start code, from the first access unit with pictures; MPEG-1/2 the sequence header
    and its extensions (FFmpeg's extract_extradata)."""
    kind, _, name = spec.partition(":")
    path = _generate(tmp_path_factory, name) if kind == "gen" else lib.media_param_file(spec, tmp_path, None)
    env = dict(os.environ, MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"), PYTHONPATH=str(lib.REPO / "Bindings" / "python"))
    proc = lib.run([sys.executable, "-c", PY_EXTRADATA, path], env=env)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    ours = proc.stdout.decode().strip()
    ref = _ffprobe_extradata(path)
    assert ours == ref, f"{path.name}: extradata\n ours {ours}\n ffprobe {ref}"   # both empty without video


def test_mk_remux_progress_of_a_ts_counts_samples(tmp_path_factory, mk_remux, tmp_path):
    """mk-remux shows progress for inputs of 64 MiB and more. A TS does not say how many
    packets it holds: the line counts samples every 1024 (no percentage over a made-up total,
    which printed "10000%" once per packet), and the output holds ffprobe's packet count."""
    small = _generate(tmp_path_factory, "h264_aac.ts")
    big = tmp_path / "big.ts"
    loops = (80 << 20) // small.stat().st_size + 1   # a copy is a little smaller than its input
    lib.oracle_ok(lib.run(["ffmpeg", "-v", "error", "-y", "-stream_loop", str(loops), "-i", small, "-map", "0", "-c", "copy",
                           "-f", "mpegts", big]), ["ffmpeg", "-stream_loop", big])
    assert big.stat().st_size >= 64 << 20
    out = tmp_path / "big.mp4"
    proc = lib.run([mk_remux, big, out])
    lib.check_ok(proc, [mk_remux, big, out])
    shown = proc.stderr.decode().split("\r")
    counts = [int(l.split()[1]) for l in shown if l.startswith("mk-remux: ") and l.endswith(" samples")]
    assert "%" not in "".join(l for l in shown if "wrote" not in l), shown[:5]
    packets = sum(int(n) for n in lib.run(["ffprobe", "-v", "error", "-count_packets", "-show_entries", "stream=nb_read_packets",
                                           "-of", "csv=p=0", out]).stdout.decode().split())
    assert counts and counts == list(range(1024, counts[-1] + 1, 1024)), counts[:3]
    assert packets - 1024 < counts[-1] <= packets, (counts[-1], packets)
    assert shown[-1].startswith("mk-remux: 100%, wrote ")


@pytest.mark.parametrize("ext", ["mp4", "mkv"])
def test_remux_to_mp4_and_matroska_keeps_the_streams(ext, tmp_path_factory, mk_remux, tmp_path):
    """mk-remux of a TS (H.264 + ADTS AAC): the AAC track is tagged "adts" with its
    AudioSpecificConfig, so the writer strips the ADTS headers: the audio payloads equal
    ffmpeg's `-bsf:a aac_adtstoasc` copy, frame for frame; the video decodes as the TS does."""
    src = _generate(tmp_path_factory, "h264_aac.ts")
    out = tmp_path / f"out.{ext}"
    cmd = [mk_remux, src, out]
    lib.check_ok(lib.run(cmd), cmd)

    def payloads(*args):
        lines = lib.run(["ffmpeg", "-v", "error", *args, "-f", "framemd5", "-"]).stdout.decode().splitlines()
        return [tuple(l.split(",")[4:6]) for l in lines if l and not l.startswith("#")]
    ours = payloads("-i", out, "-map", "0:a", "-c", "copy")
    ref = payloads("-i", src, "-map", "0:a", "-c:a", "copy", "-bsf:a", "aac_adtstoasc")
    assert ours and ours == ref, f"{out.name}: {len(ours)} audio payloads, ffmpeg {len(ref)}"

    def video(path):
        return lib.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0:v", "-fps_mode", "passthrough",
                        "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]).stdout
    v = video(out)
    assert v and v == video(src), f"{out.name}: the video does not decode as the TS's"


# Remux TS -> MP4 / Matroska against ffmpeg's own stream copy (`-c copy -copyinkf`: ffmpeg
# otherwise drops the video packets before the first key frame, which MediaKit keeps), of the
# audio and video streams (ffmpeg's -map 0 refuses the data streams it has no type for;
# MediaKit's default choice leaves them out too, Remuxer.tracksToCopy).
# (file, extension) -> the message MediaKit's refusal must hold; ffmpeg writes these.
# None today: LATM into Matroska, refused until A_MS/ACM was written, is compared below.
REMUX_REFUSED: dict = {}


def _codec_private(path, codec_id: bytes) -> bytes:
    """The CodecPrivate of the Matroska track whose CodecID is `codec_id` (of a one-track file:
    the first CodecPrivate element after that CodecID)."""
    data = path.read_bytes()
    at = data.find(b"\x63\xa2", data.find(codec_id))
    assert at > 0, f"{path}: no CodecPrivate"
    first = data[at + 2]
    width = 8 - first.bit_length() + 1
    size = first & (0xFF >> width)
    for b in data[at + 3:at + 2 + width]:
        size = size << 8 | b
    return data[at + 2 + width:at + 2 + width + size]


def test_latm_into_matroska_like_ffmpeg(mk_remux, tmp_path_factory, tmp_path):
    """AAC in LATM from a TS into Matroska: an A_MS/ACM track whose CodecPrivate is ffmpeg's
    WAVEFORMATEX byte for byte (tag 0x1602, 16 bits, cbSize and the AudioSpecificConfig), the
    LOAS frames as blocks (packets: test_remux_keeps_every_packet_like_ffmpeg), ffprobe reading
    it as aac_latm, and ffmpeg decoding it as it decodes the TS."""
    src = _generate(tmp_path_factory, "latm_stereo_48k.ts")
    ours, ref = tmp_path / "ours.mkv", tmp_path / "ffmpeg.mkv"
    lib.check_ok(lib.run([mk_remux, src, ours]), [mk_remux, src, ours])
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-c", "copy", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    a, b = _codec_private(ours, b"A_MS/ACM"), _codec_private(ref, b"A_MS/ACM")
    assert a == b and b[:2] == b"\x02\x16", f"ours {a.hex()}, ffmpeg {b.hex()}"
    assert [s["codec_name"] for s in lib.ffprobe_json(ours)["streams"]] == ["aac_latm"]
    pcm = ["-v", "error", "-nostdin", "-i"], ["-f", "s16le", "-"]
    decoded = [lib.run(["ffmpeg", *pcm[0], p, *pcm[1]]).stdout for p in (ours, src)]
    assert decoded[0] and decoded[0] == decoded[1]


def _stream_packets(path) -> dict:
    """stream -> [(pts s, dts s, size, key)] by ffprobe, and the payload md5s by ffmpeg's framemd5."""
    out = lib.run(["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts_time,dts_time,size,flags",
                   "-of", "csv=p=0", path]).stdout.decode()
    packets: dict = {}
    for line in out.splitlines():
        f = line.split(",")
        if len(f) < 5:
            continue
        t = lambda v: None if v == "N/A" else float(v)   # noqa: E731
        packets.setdefault(int(f[0]), []).append([t(f[1]), t(f[2]), int(f[3]), f[4][:1]])
    md5 = lib.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-copyinkf", "-f", "framemd5", "-"]).stdout.decode()
    hashes: dict = {}
    for line in md5.splitlines():
        if line and not line.startswith("#"):
            f = [x.strip() for x in line.split(",")]
            hashes.setdefault(int(f[0]), []).append(f[5])
    for s, lst in packets.items():
        assert len(hashes.get(s, [])) == len(lst), f"{path}: stream {s}: framemd5 and ffprobe disagree"
        for p, h in zip(lst, hashes[s]):
            p.append(h)
    return packets


def _same_packets(ours: dict, ref: dict, what: str, with_dts: bool) -> None:
    """Packet for packet: size, key flag and payload md5 equal, pts (and dts: MP4 stores it,
    Matroska does not, and what ffprobe shows for it there is its guess from the order it
    reads) within 1.5 ms (ffmpeg writes MP4 edit lists in a 1 ms movie time scale, Matroska
    times in 1 ms)."""
    assert sorted(ours) == sorted(ref), f"{what}: streams {sorted(ours)}, ffmpeg {sorted(ref)}"
    for s in ref:
        a, b = ours[s], ref[s]
        assert len(a) == len(b), f"{what}: stream {s}: {len(a)} packets, ffmpeg {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            times = zip(x[:2], y[:2]) if with_dts else zip(x[:1], y[:1])
            close = all((u is None) == (v is None) and (u is None or abs(u - v) <= 0.0015) for u, v in times)
            assert close and x[2:] == y[2:], f"{what}: stream {s} packet {i}: {x}, ffmpeg {y}"


def _remux_cases() -> list:
    cases = [pytest.param(f"gen:{n}", ext, id=f"{n}-{ext}") for n in GENERATED for ext in ("mp4", "mkv")]
    for p in _breadth_ts():
        for ext in ("mp4", "mkv"):
            cases.append(pytest.param(p.values[0], ext, id=f"{p.id}-{ext}"))
    return cases


@pytest.mark.parametrize("spec,ext", _remux_cases())
def test_remux_keeps_every_packet_like_ffmpeg(spec, ext, mk_remux, tmp_path_factory, tmp_path):
    """mk-remux of a TS into MP4 / Matroska keeps every audio and video packet as ffmpeg's
    stream copy does: timestamps from zero (the first track's start; the others keep their
    offset, MP4 as an empty edit), sizes, key flags, payloads (E-AC-3 in MP4: its dec3 built
    from the frames); a file neither can write is refused by both, and the cases of
    REMUX_REFUSED by MediaKit with the reason."""
    src = _generate(tmp_path_factory, spec[4:]) if spec.startswith("gen:") else lib.media_param_file(spec, tmp_path, None)
    ours, ref = tmp_path / f"ours.{ext}", tmp_path / f"ffmpeg.{ext}"
    streams = [s["index"] for s in lib.ffprobe_json(src)["streams"] if s.get("codec_type") in ("audio", "video")]
    ff = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src]
    for i in streams:
        ff += ["-map", f"0:{i}"]
    ff_proc = lib.run(ff + ["-c", "copy", "-copyinkf", ref])
    proc = lib.run([mk_remux, src, ours])
    refusal = REMUX_REFUSED.get((src.name, ext))
    if refusal:
        assert ff_proc.returncode == 0, lib.tail(ff_proc.stderr)
        assert proc.returncode != 0 and refusal in proc.stderr.decode() and not ours.exists(), lib.tail(proc.stderr)
        return
    if ff_proc.returncode != 0:
        # ffmpeg cannot write it either (MPEG-H audio, which FFmpeg 5.1 takes for MP3 at 0 Hz).
        assert proc.returncode != 0 and not ours.exists(), f"{src.name}: ffmpeg refuses, mk-remux wrote it"
        return
    lib.check_ok(proc, [mk_remux, src, ours])
    _same_packets(_stream_packets(ours), _stream_packets(ref), f"{src.name} -> .{ext}", with_dts=ext == "mp4")


@pytest.mark.parametrize("spec", ["gen:h264_aac.ts", "shared:breadth/ts_Vanilagy_b46e09_0.ts",
                                  "shared:breadth/ts_shaka-proj_fa8d9d_1.ts"])
def test_transcode_with_copied_video_keeps_the_offset(spec, mk_transcode, tmp_path_factory, tmp_path):
    """mk-transcode --copy-video of a TS: the encoded audio starts at 0, and the copied video
    moves with it, keeping its offset to the audio (it stayed at the TS clock, 10 s late, before
    the fix), as `ffmpeg -c:v copy -c:a aac` writes it: each stream's start within 1.5 ms of
    ffmpeg's, the video's packets ffmpeg's (sizes, key flags, payloads, pts and dts)."""
    src = _generate(tmp_path_factory, spec[4:]) if spec.startswith("gen:") else lib.media_param_file(spec, tmp_path, None)
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ffmpeg.mp4"
    lib.check_ok(lib.run([mk_transcode, src, ours, "--copy-video"]), [mk_transcode, src, ours, "--copy-video"])
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0:v:0", "-map", "0:a:0", "-c:v", "copy", "-c:a", "aac", ref]
    lib.oracle_ok(lib.run(cmd), cmd)

    def starts(path):
        return {s["codec_type"]: float(s["start_time"]) for s in lib.ffprobe_json(path)["streams"]}

    a, b = starts(ours), starts(ref)
    assert a.keys() == b.keys() and all(abs(a[k] - b[k]) <= 0.0015 for k in a), f"{src.name}: starts {a}, ffmpeg {b}"

    def video(path):
        index = next(s["index"] for s in lib.ffprobe_json(path)["streams"] if s["codec_type"] == "video")
        return {0: _stream_packets(path)[index]}
    _same_packets(video(ours), video(ref), f"{src.name}: copied video", with_dts=True)
