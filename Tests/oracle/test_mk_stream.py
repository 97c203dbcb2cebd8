"""mk-stream: MP3 / ADTS AAC pushed through AudioStreamParser in chunks, as a socket delivers it.

Oracles (ORACLES.md):
- packets: `ffprobe -show_entries packet=pos,size`, by the rules of test_audio_streams.py
  (imported, not restated), for chunk sizes 1 and 2 (files up to 120 KB), 7, 4096 and the
  whole file in one push, and through a
  pipe (`cat FILE | mk-stream - --packets`). The parser is told the format (no probing), so a
  file whose frame ffprobe's probing refuses is checked frame by frame against the headers;
- decoded PCM: `ffmpeg -f s16le` (same length, |diff| <= 1, FFmpeg's gapless rules);
- seek to 30.0 s in generated 10-minute files (ffmpeg + libmp3lame, ID3v2 in front as ffmpeg
  writes it by default): the packet that holds 30.0 s is the one whose [pts, pts + duration)
  in ffprobe's packet list holds it (and, the same, by the cumulative frames of a full parse).
  CBR: the seek is exact and lands on that packet's offset. VBR with a Xing table: flagged
  estimated, and the packet it lands on is within 1% of the duration of the true one. In
  both, the packets from the landing point on equal ffprobe's from there to the end.
"""
from __future__ import annotations

import json
import subprocess
from fractions import Fraction

import pytest

import oracle_lib as lib
from test_audio_streams import FILES, _pcm, check_packets_like_ffprobe

PACKET_FILES = [n for n in FILES if "free_format" not in n]   # ffprobe cannot demux free format


def _stream_packets(mk_stream, path, *args, stdin=None) -> tuple[list[tuple[int, int, int]], str, int]:
    """(offset, size, frames) per packet line, stderr, exit status."""
    cmd = [str(mk_stream), str(path), "--packets", *map(str, args)]
    proc = subprocess.run(cmd, stdin=stdin if stdin is not None else subprocess.DEVNULL, capture_output=True, timeout=300)
    rows = []
    for line in proc.stdout.decode().splitlines():
        if not line.startswith("seek,"):
            o, s, f = line.split(",")
            rows.append((int(o), int(s), int(f)))
    return rows, proc.stderr.decode(), proc.returncode


def _small(name: str) -> bool:
    return (lib.SHARED_MEDIA / name).stat().st_size <= 120_000


# Chunks of 1 and 2 bytes on the files up to 120 KB only (time); 1 << 26 (the largest --chunk,
# above every corpus file): the whole file in one push.
@pytest.mark.parametrize("name,chunk", [(n, c) for n in PACKET_FILES for c in (1, 2, 7, 4096, 1 << 26) if c > 2 or _small(n)])
def test_packets_equal_ffprobe(name, chunk, shared_media, mk_stream):
    path = shared_media / name
    rows, err, status = _stream_packets(mk_stream, path, "--chunk", chunk)
    assert status in (0, 1) and "Fatal error" not in err, err
    if status == 1:
        assert not rows and err.startswith("mk-stream: "), err
    check_packets_like_ffprobe(path, [(o, s) for o, s, _ in rows], err, pushed=True)


@pytest.mark.parametrize("name", PACKET_FILES)
def test_standard_input_equals_the_file(name, shared_media, mk_stream):
    """`cat FILE | mk-stream - --packets`: the same packets as from the file (a pipe has no
    known size, which changes only the duration estimate, not a packet)."""
    path = shared_media / name
    from_file, _, status_file = _stream_packets(mk_stream, path)
    cat = subprocess.Popen(["cat", str(path)], stdout=subprocess.PIPE)
    try:
        from_pipe, err, status_pipe = _stream_packets(mk_stream, "-", stdin=cat.stdout)
    finally:
        cat.stdout.close()
        cat.wait()
    assert (from_pipe, status_pipe) == (from_file, status_file), err


@pytest.mark.parametrize("name", ["mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", "mp3_cbr_56k_mono_no_xing.mp3",
                                  "mp3_mpeg2_24k_lame_vbr_v2_xing_38s.mp3", "mp3_vbr_vbri_header_48k_stereo_complete.mp3"])
def test_events_like_ffprobe(name, shared_media, mk_stream):
    """The event lines (all but the packet summaries, which follow the chunking) are the same
    for chunks of 1, 2, 7 and 4096 bytes and the whole file in one push; the format is ffprobe's codec, rate and channels, and
    the duration is within one frame of ffprobe's."""
    path = shared_media / name
    runs = []
    for chunk in (1, 2, 7, 4096, 1 << 26):
        proc = lib.run([mk_stream, path, "--chunk", chunk])
        lib.check_ok(proc, [mk_stream, path, "--chunk", chunk])
        runs.append([l for l in proc.stdout.decode().splitlines() if not l.startswith("packets ")])
    assert all(run == runs[0] for run in runs[1:])
    cmd = ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_streams", "-show_format", "-of", "json", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lib.oracle_ok(proc, cmd)
    info = json.loads(proc.stdout)
    st = info["streams"][0]
    fields = dict(f.split("=") for f in next(l for l in runs[0] if l.startswith("data-format ")).split()[1:])
    assert (fields["codec"], int(fields["rate"]), int(fields["channels"])) == (st["codec_name"], int(st["sample_rate"]), st["channels"])
    seconds = float(next(l for l in runs[0] if l.startswith("duration ")).split()[1])
    assert abs(seconds - float(info["format"]["duration"])) <= int(fields["frames-per-packet"]) / int(st["sample_rate"]) + 0.001


@pytest.mark.parametrize("name", FILES)
def test_events_identical_for_every_chunking(name, shared_media, mk_stream):
    """On every .mp3 / .aac file, the event lines but the packet summaries (which follow the
    chunking), the standard error and the exit status are the same for chunks of 1 and 2 bytes
    (files up to 120 KB), 7, 4096 and the whole file; the packets were compared with ffprobe's
    for each chunking above."""
    path = shared_media / name
    runs = []
    for chunk in [c for c in (1, 2, 7, 4096, 1 << 26) if c > 2 or _small(name)]:
        proc = subprocess.run([str(mk_stream), str(path), "--chunk", str(chunk)], capture_output=True, timeout=300)
        assert proc.returncode in (0, 1) and b"Fatal error" not in proc.stderr, proc.stderr
        runs.append(([l for l in proc.stdout.decode().splitlines() if not l.startswith("packets ")], proc.stderr, proc.returncode))
    assert all(run == runs[0] for run in runs[1:]), [r[0][:3] for r in runs]


def _ffmpeg_pcm(path) -> bytes:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-map", "0:a:0", "-f", "s16le", "-"]
    proc = subprocess.run(cmd, capture_output=True, timeout=300)
    lib.oracle_ok(proc, cmd)
    return proc.stdout


@pytest.mark.parametrize("name,chunk", [("mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", 4096),
                                        ("mp3_cbr_lame_info_header_pcut.mp3", 7),
                                        ("mp3_cbr_56k_mono_no_xing.mp3", 4096),
                                        ("mp3_mpeg2_24k_lame_vbr_v2_xing_38s.mp3", 4096),
                                        ("mp3_id3v2_apic_1400px_48k.mp3", 4096),
                                        ("aac_adts_lc_with_id3v2_prefix.aac", 7),
                                        ("broken_aac_adts_truncated_frames.aac", 4096)])
def test_pcm_equals_ffmpeg(name, chunk, shared_media, mk_stream, tmp_path):
    path = shared_media / name
    out = tmp_path / "out.pcm"
    cmd = [mk_stream, path, "--chunk", chunk, "--pcm-out", out]
    lib.check_ok(lib.run(cmd), cmd)
    ours, ref = out.read_bytes(), _ffmpeg_pcm(path)
    assert len(ours) == len(ref), f"{name}: {len(ours)} bytes, ffmpeg {len(ref)}"
    worst = max((abs(x - y) for x, y in zip(_pcm(ours), _pcm(ref))), default=0)
    assert worst <= 1, f"{name}: max |diff| {worst}"


def test_errors_exit_1_with_a_message(mk_stream, tmp_path):
    garbage = tmp_path / "garbage.mp3"
    garbage.write_bytes(bytes(range(256)) * 40)
    for cmd in ([mk_stream, tmp_path / "missing.mp3"], [mk_stream, garbage], [mk_stream, garbage, "--chunk", "0"], [mk_stream, garbage, "--chunk", str(1 << 40)],
                [mk_stream, "-", "--seek", "1"]):
        proc = lib.run(cmd)
        assert proc.returncode == 1 and proc.stderr.startswith(b"mk-stream: "), (cmd, proc.returncode, proc.stderr)


# ----------------------------------------------------------------------------------- seek

SEEK_TO = Fraction(30)


@pytest.fixture(scope="module")
def ten_minute_files(tmp_path_factory) -> dict:
    """A 10-minute CBR 128 kbit/s MP3 and a VBR (-q:a 4, Xing table) one of a signal whose
    loudness and spectrum vary (so the bit rate does), both with ffmpeg's default ID3v2 tag."""
    folder = lib.shared_tmp(tmp_path_factory, "seek")     # made once per run, not per worker
    files = {}
    for kind, source, args in [
        ("cbr", ["-f", "lavfi", "-i", "sine=frequency=440:duration=600:sample_rate=44100"], ["-b:a", "128k"]),
        ("vbr", ["-f", "lavfi", "-i", "anoisesrc=d=600:c=pink:a=0.3:r=44100",
                 "-af", "volume='0.05+0.95*abs(sin(t/7))':eval=frame"], ["-q:a", "4"]),
    ]:
        def make(name: str, folder: Path, source=source, args=args) -> Path:
            path = folder / name
            if not path.exists():
                cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *source, "-c:a", "libmp3lame", *args, str(path)]
                lib.oracle_ok(lib.run(cmd), cmd)
            return path
        path = lib.generated_once(make)(f"{kind}.mp3", folder)
        assert path.read_bytes()[:3] == b"ID3"
        files[kind] = path
    return files


def _ffprobe_timed_packets(path) -> list[tuple[Fraction, Fraction, int, int]]:
    """(pts s, duration s, pos, size) per packet, exact from the stream's time base."""
    cmd = ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=time_base:packet=pts,duration,pos,size",
           "-of", "json", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lib.oracle_ok(proc, cmd)
    info = json.loads(proc.stdout)
    tb = Fraction(info["streams"][0]["time_base"])
    return [(int(p["pts"]) * tb, int(p["duration"]) * tb, int(p["pos"]), int(p["size"])) for p in info["packets"]]


@pytest.mark.parametrize("kind", ["cbr", "vbr"])
def test_seek_to_30_seconds(kind, ten_minute_files, mk_stream):
    path = ten_minute_files[kind]
    ref = _ffprobe_timed_packets(path)
    holder = next(i for i, (pts, dur, _, _) in enumerate(ref) if pts <= SEEK_TO < pts + dur)
    # The same packet by the cumulative frames of a full parse (which must list ffprobe's packets).
    full, err, status = _stream_packets(mk_stream, path)
    assert status == 0, err
    assert [(o, s) for o, s, _ in full] == [(pos, size) for _, _, pos, size in ref]
    samples, by_frames = 0, None
    for i, (_, _, frames) in enumerate(full):
        if samples + frames > SEEK_TO * 44100:
            by_frames = i
            break
        samples += frames
    assert by_frames == holder

    proc = lib.run([mk_stream, path, "--packets", "--seek", "30.0"])
    lib.check_ok(proc, [mk_stream, path, "--seek", "30.0"])
    lines = proc.stdout.decode().splitlines()
    _, seconds, packet, offset, how = lines[0].split(",")
    packet, offset = int(packet), int(offset)
    after = [tuple(map(int, line.split(","))) for line in lines[1:]]
    assert after, "packets follow the seek"
    landed = next((i for i, (_, _, pos, _) in enumerate(ref) if pos == after[0][0]), None)
    assert landed is not None, f"the first packet after the seek (offset {after[0][0]}) is not one of ffprobe's"
    assert [(o, s) for o, s, _ in after] == [(pos, size) for _, _, pos, size in ref[landed:]], \
        "after the seek, the packets are a full parse's from there on"
    if kind == "cbr":
        assert how == "exact"
        assert (packet, offset) == (holder, ref[holder][2])
        assert landed == holder
    else:
        assert how == "estimated"
        duration = ref[-1][0] + ref[-1][1]
        true_offset = ref[holder][2]
        # The estimated offset and the true one are within 1% of the duration of each other:
        # the packet the estimate lands in (or right after) is that close to the true packet.
        assert abs(ref[landed][0] - ref[holder][0]) <= duration / 100, (offset, true_offset, landed, holder)
        # Parsing resynchronised at the first frame at or after the offset, skipping none.
        assert landed == next(i for i, (_, _, pos, _) in enumerate(ref) if pos >= offset)


def test_pcm_after_an_exact_seek_ends_like_ffmpeg(ten_minute_files, mk_stream, tmp_path):
    """`--seek 30 --pcm-out` on the 10-minute CBR file decodes from the packet sought to as FFmpeg
    decodes after a seek: no start trim there, the gapless end trim kept. Oracle: ffmpeg's
    decode of the whole file (gapless), and ffprobe's start_time (LAME's delay plus the
    decoder's 529 samples, which FFmpeg cuts from the start). The output must be the last
    (samples - (P * 1152 - start_time * rate)) samples of ffmpeg's decode, P being the packet
    sought to: that many samples, and equal to them (|diff| <= 1) but for its first three
    frames' worth: a decoder started mid-stream has neither the bit reservoir nor the overlap
    of the frames before, which shows in the output of the first two frames, 529 samples
    (the decoder's delay) later."""
    path = ten_minute_files["cbr"]
    out = tmp_path / "seek.pcm"
    proc = lib.run([mk_stream, path, "--packets", "--seek", "30.0", "--pcm-out", out])
    lib.check_ok(proc, [mk_stream, path, "--seek", "30.0", "--pcm-out", out])
    _, _, packet, _, how = proc.stdout.decode().splitlines()[0].split(",")
    assert how == "exact"
    cmd = ["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=start_time,sample_rate,channels", "-of", "json", str(path)]
    probe = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    lib.oracle_ok(probe, cmd)
    st = json.loads(probe.stdout)["streams"][0]
    rate, channels = int(st["sample_rate"]), int(st["channels"])
    skip = round(float(st["start_time"]) * rate)
    full = _pcm(_ffmpeg_pcm(path))
    ours = _pcm(out.read_bytes())
    expected = len(full) // channels - (int(packet) * 1152 - skip)
    assert len(ours) // channels == expected, (len(ours) // channels, expected)
    settled = 3 * 1152 * channels
    tail = full[len(full) - len(ours) + settled:]
    worst = max((abs(x - y) for x, y in zip(ours[settled:], tail)), default=0)
    assert worst <= 1, f"max |diff| {worst} against ffmpeg's decode from the same sample"


def _lyrics3(version: int) -> bytes:
    """A Lyrics3 tag (id3.org's Lyrics3 v1 and v2 specifications): v1 ends with LYRICSEND; v2
    holds fields (3-byte id, 5-digit size) and ends with its 6-digit size and LYRICS200."""
    if version == 1:
        return b"LYRICSBEGIN" + b"[00:01]la la la\r\n" * 40 + b"LYRICSEND"
    fields = b"IND00002" + b"11" + b"LYR" + b"%05d" % 720 + b"[00:01]la la la\r\n" * 40
    body = b"LYRICSBEGIN" + fields
    return body + b"%06d" % len(body) + b"LYRICS200"


@pytest.mark.parametrize("version", [1, 2])
def test_lyrics3_tag_after_the_frames_is_skipped_at_every_chunking(version, shared_media, mk_stream, tmp_path):
    """A Lyrics3 tag between the last frame and an ID3v1 tag (where taggers put it) is not
    audio: fed in chunks of 1, 7, 4096 bytes and in one push, the file gives exactly the packets
    ffprobe lists for the same file without the tag, and no warning. (Chunks of 1 byte also
    guard against a scan for the tag's end that starts over at every push: a 9 KB tag without
    an end took 25 s at one byte per push.)"""
    source = shared_media / "mp3_cbr_56k_mono_no_xing.mp3"
    id3v1 = b"TAG" + b"Title".ljust(30, b"\0") + b"\0" * 95
    path = tmp_path / "lyrics.mp3"
    path.write_bytes(source.read_bytes() + _lyrics3(version) + id3v1)
    for chunk in (1, 7, 4096, 1 << 26):
        rows, err, status = _stream_packets(mk_stream, path, "--chunk", chunk)
        assert status == 0 and "warning" not in err.lower(), (chunk, err)
        check_packets_like_ffprobe(source, [(o, s) for o, s, _ in rows], err, pushed=True)
