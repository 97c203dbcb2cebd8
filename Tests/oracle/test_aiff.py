"""AIFF and AIFF-C files through AIFFDemuxer.

Oracles: ffprobe's packet lines (track, pts, dts, duration, size, offset, key flag: FFmpeg's
aiff demuxer reads runs of whole sample frames of at most 4096 bytes, one 34-byte-per-channel
block of ima4) and `ffmpeg -i FILE -f s16le -`, byte for byte (PCM, G.711 and IMA ADPCM decode
exactly), on files ffmpeg writes with `-f aiff` in every codec its muxer takes, 1, 2 and 6
channels, with an ID3 chunk, with their AIFF-C compression type rewritten (the other spellings
FFmpeg's table maps: FL32, ALAW, twos, NONE, raw ...), with COMM after SSND, cut short (read as
far as ffmpeg reads), from a pipe, and the AIFF files of ../shared/media/breadth. A damaged COMM
chunk is an error naming the chunk and its offset where ffprobe refuses the file too; seeking
lands on ffprobe's packet holding the time.
"""
from __future__ import annotations

import os
import random
import struct
import subprocess
import sys

import pytest

import oracle_lib as lib


def _make(tmp_path, codec: str, channels: int = 2, extra: list | None = None, seconds: float = 1.3, rate: int = 44100):
    path = tmp_path / f"{codec}_{channels}.aiff"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}:sample_rate={rate}",
           "-ac", str(channels), "-c:a", codec, *(extra or []), "-f", "aiff", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _lines(cmd: list, stdin=None) -> list[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, stdin=stdin, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return [l for l in proc.stdout.decode().splitlines() if l.strip()]


def _compare_track(path, mk_probe):
    """mk-probe --json's track: codec, sample rate, channels, duration in samples and (AIFF-C)
    compression type as ffprobe's stream has them."""
    import json
    ours = json.loads(lib.run([mk_probe, "--json", path]).stdout)["tracks"]
    streams = lib.track_streams(lib.ffprobe_json(path))
    assert not lib.track_identity_problems(ours, streams), lib.track_identity_problems(ours, streams)
    t, s = ours[0], streams[0]
    assert (t["sample_rate"], t["channels"]) == (int(s["sample_rate"]), s["channels"])
    if "duration_ts" in s:
        assert t["duration_ts"] == s["duration_ts"]
    tag = s["codec_tag_string"]
    assert t["codec_tag"] == ("" if tag == "[0][0][0][0]" else tag)


def _compare(path, mk_probe, mk_decode, tmp_path):
    """The track and packets equal ffprobe's; the decode equals `ffmpeg -f s16le`, byte for byte."""
    _compare_track(path, mk_probe)
    ours = _lines([mk_probe, "--packets", path])
    ref = lib.expected_packets(path)
    assert ref, "ffprobe lists packets"
    assert ours == ref, f"{path.name}: packets differ (track,pts,dts,duration,size,offset,flags)\n" + str(lib.diff_lines(ours, ref, "mk-probe", "ffprobe"))
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, path, "--audio-out", out, "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a", "-f", "s16le", "-"]
    want = lib.run(ref_cmd)
    assert want.stdout, lib.tail(want.stderr)
    got = out.read_bytes()
    assert got == want.stdout, f"{path.name}: `{lib.shell_line(cmd)}` ({len(got)} bytes) differs from `{lib.shell_line(ref_cmd)}` ({len(want.stdout)} bytes)"


CASES = [("pcm_s16be", 2), ("pcm_s16be", 1), ("pcm_s16be", 6), ("pcm_s24be", 2), ("pcm_s24be", 6), ("pcm_s32be", 1),
         ("pcm_f32be", 2), ("pcm_f64be", 2), ("pcm_alaw", 1), ("pcm_mulaw", 2), ("adpcm_ima_qt", 1), ("adpcm_ima_qt", 2),
         ("pcm_s8", 2), ("pcm_s16le", 2)]


@pytest.mark.parametrize("codec,channels", CASES, ids=[f"{c}-{n}ch" for c, n in CASES])
def test_aiff_like_ffmpeg(codec, channels, mk_probe, mk_decode, tmp_path):
    """Every codec ffmpeg's aiff muxer writes (plain AIFF for big-endian integer PCM, AIFF-C
    fl32 / fl64 / alaw / ulaw / ima4 / sowt for the others)."""
    _compare(_make(tmp_path, codec, channels), mk_probe, mk_decode, tmp_path)


def test_aiff_with_an_id3_chunk(mk_probe, mk_decode, tmp_path):
    """`-write_id3v2 1`: a NAME chunk before COMM and an ID3 chunk after the sound (where
    ffmpeg writes it), stepped over; and with the ID3 chunk moved in front of COMM."""
    path = _make(tmp_path, "pcm_s24be", 2, ["-write_id3v2", "1", "-metadata", "title=Sine", "-metadata", "artist=Someone"])
    kind, chunks = _chunks(path.read_bytes())
    assert [c for c, _ in chunks] == [b"NAME", b"COMM", b"SSND", b"ID3 "]
    _compare(path, mk_probe, mk_decode, tmp_path)
    moved = tmp_path / "id3_first.aiff"
    moved.write_bytes(_form(kind, [chunks[3]] + chunks[:3]))
    _compare(moved, mk_probe, mk_decode, tmp_path)


def _chunks(data: bytes) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """The FORM type and its chunks (id, body without the pad byte)."""
    assert data[:4] == b"FORM"
    kind, at, out = data[8:12], 12, []
    while at + 8 <= len(data):
        cid, size = data[at:at + 4], struct.unpack(">I", data[at + 4:at + 8])[0]
        out.append((cid, data[at + 8:at + 8 + size]))
        at += 8 + size + (size & 1)
    return kind, out


def _form(kind: bytes, chunks: list[tuple[bytes, bytes]]) -> bytes:
    body = b"".join(cid + struct.pack(">I", len(b)) + b + (b"\0" if len(b) & 1 else b"") for cid, b in chunks)
    return b"FORM" + struct.pack(">I", 4 + len(body)) + kind + body


def _retyped(tmp_path, codec: str, new_type: bytes):
    """An AIFF-C file of `codec` whose COMM compression type is rewritten to `new_type`."""
    kind, chunks = _chunks(_make(tmp_path, codec, 2).read_bytes())
    assert kind == b"AIFC"
    comm = next(b for c, b in chunks if c == b"COMM")
    chunks = [(c, comm[:18] + new_type + comm[22:] if c == b"COMM" else b) for c, b in chunks]
    out = tmp_path / f"{codec}_{new_type.decode().strip()}.aifc"
    out.write_bytes(_form(kind, chunks))
    return out


RETYPED = [("pcm_f32be", b"FL32"), ("pcm_f64be", b"FL64"), ("pcm_alaw", b"ALAW"), ("pcm_mulaw", b"ULAW"),
           ("pcm_s16le", b"twos"), ("pcm_s16le", b"NONE"), ("pcm_alaw", b"raw "), ("pcm_f32be", b"in32"), ("pcm_s16le", b"SOWT")]


@pytest.mark.parametrize("codec,new_type", RETYPED, ids=[f"{c}-as-{t.decode().strip()}" for c, t in RETYPED])
def test_aifc_compression_types_as_ffmpeg_maps_them(codec, new_type, mk_probe, mk_decode, tmp_path):
    """The other spellings of FFmpeg's AIFF-C table: upper case (FL32, ALAW, ULAW, SOWT, looked
    up case-blind), twos and NONE (big-endian PCM by the sample size), raw (unsigned 8-bit), in32.
    The samples are then read as that codec: whatever ffprobe and ffmpeg make of it, we must too."""
    _compare(_retyped(tmp_path, codec, new_type), mk_probe, mk_decode, tmp_path)


def _ext80(rate: int) -> bytes:
    """An integer as an 80-bit IEEE extended float (the COMM chunk's sample rate)."""
    e = rate.bit_length() - 1
    return struct.pack(">HQ", e + 16383, rate << (63 - e))


def _aifc(path, ctype: bytes, channels: int, frames: int, rate: int, data: bytes):
    """An AIFF-C file as the spec lays it out: FVER, COMM (compression type and an empty
    name), SSND (offset 0, block size 0)."""
    comm = struct.pack(">hIh", channels, frames, 16) + _ext80(rate) + ctype + b"\0\0"
    path.write_bytes(_form(b"AIFC", [(b"FVER", struct.pack(">I", 0xA2805140)), (b"COMM", comm),
                                     (b"SSND", struct.pack(">II", 0, 0) + data)]))
    return path


# (compression type, ffmpeg's raw stream of that codec or None for random bytes, channels, rate,
# bytes per block, samples per block)
RAW = [(b"GSM ", ["-c:a", "libgsm", "-f", "gsm"], 1, 8000, 33, 160), (b"G722", ["-c:a", "g722", "-f", "g722"], 1, 16000, 1, 2),
       (b"MAC3", None, 2, 22050, 4, 6), (b"MAC6", None, 1, 22050, 1, 6)]


@pytest.mark.parametrize("ctype,encode,channels,rate,block,samples", RAW, ids=[r[0].decode().strip() for r in RAW])
def test_aifc_gsm_mace_and_g722(ctype, encode, channels, rate, block, samples, mk_probe, mk_decode, tmp_path):
    """AIFF-C of GSM 06.10 (one 33-byte frame a packet), G.722 and MACE 3:1 / 6:1 (runs of 4096
    bytes), which ffmpeg's aiff muxer does not write: the codec's stream (ffmpeg's encoder, or
    random bytes for MACE, which has no encoder: any bytes decode) put in an AIFF-C file here;
    whole and cut inside a block, packets and decode as ffprobe's and ffmpeg's."""
    if encode:
        raw = tmp_path / "stream.raw"
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"sine=frequency=440:duration=1.3:sample_rate={rate}",
               *encode, raw]
        lib.oracle_ok(lib.run(cmd), cmd)
        data = raw.read_bytes()
    else:
        data = random.Random(30).randbytes(9001)
    path = _aifc(tmp_path / "x.aifc", ctype, channels, len(data) // block, rate, data)
    _compare(path, mk_probe, mk_decode, tmp_path)
    cut = tmp_path / "cut.aifc"
    cut.write_bytes(path.read_bytes()[:len(path.read_bytes()) - len(data) // 2 - 1])
    _compare(cut, mk_probe, mk_decode, tmp_path)


@pytest.mark.parametrize("ctype,says", [(b"G726", "(adpcm_g726le) is not read"), (b"QDM2", "(qdm2) is not read"),
                                        (b"ABCD", "names no codec")])
def test_compression_types_not_read_are_refused_by_name(ctype, says, mk_probe, tmp_path):
    """A compression type FFmpeg names but whose packets this reader does not frame, or one FFmpeg's
    table does not list: an error (exit 1) naming the type, the codec FFmpeg gives it, and COMM."""
    path = _aifc(tmp_path / "x.aifc", ctype, 1, 100, 8000, bytes(100))
    proc = lib.run([mk_probe, "--packets", path])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and f'"{ctype.decode()}"' in err and says in err and "COMM" in err, err


def test_comm_after_ssnd(mk_probe, mk_decode, tmp_path):
    """COMM after SSND (allowed by the spec): read from a file as ffmpeg reads it; from a pipe,
    where it cannot be read back, an error naming the layout."""
    kind, chunks = _chunks(_make(tmp_path, "pcm_s16be", 2).read_bytes())
    chunks.sort(key=lambda c: c[0] != b"SSND")
    path = tmp_path / "ssnd_first.aiff"
    path.write_bytes(_form(kind, chunks))
    _compare(path, mk_probe, mk_decode, tmp_path)
    with open(path, "rb") as f:
        proc = subprocess.run([str(mk_probe), "--packets", "-"], stdin=f, capture_output=True, timeout=60)
    assert proc.returncode == 1 and "SSND chunk comes before COMM" in proc.stderr.decode(), proc.stderr.decode()


CUTS = [("pcm_s16be", 150_001), ("pcm_s16be", 54 + 4096 * 3 + 3), ("pcm_s24be", 40_003), ("adpcm_ima_qt", 30_001),
        ("adpcm_ima_qt", 72 + 68 * 5 + 30), ("pcm_f32be", 72 + 4096 * 2 + 5)]


@pytest.mark.parametrize("codec,size", CUTS, ids=[f"{c}-{n}" for c, n in CUTS])
def test_aiff_cut_inside_its_sound(codec, size, mk_probe, mk_decode, tmp_path):
    """A file cut inside SSND (mid-packet, mid-sample-frame, mid-ima4-block, a last packet shorter
    than one sample frame: no timestamps, as ffprobe prints it): the packets ffprobe lists, then a
    warning naming the cut; the decode as far as ffmpeg's."""
    full = _make(tmp_path, codec, 2)
    cut = tmp_path / "cut.aiff"
    cut.write_bytes(full.read_bytes()[:size])
    _compare(cut, mk_probe, mk_decode, tmp_path)
    err = lib.run([mk_probe, "--packets", cut]).stderr.decode()
    assert "truncated" in err and "SSND" in err, err


@pytest.mark.parametrize("codec", ["pcm_s24be", "adpcm_ima_qt"])
def test_aiff_from_a_pipe(codec, mk_probe, tmp_path):
    path = _make(tmp_path, codec, 2)
    with open(path, "rb") as f:
        piped = _lines([mk_probe, "--packets", "-"], stdin=f)
    assert piped == lib.expected_packets(path)


def _damaged(tmp_path, how: str):
    data = bytearray(_make(tmp_path, "pcm_s16be", 2).read_bytes())
    at = data.find(b"COMM")
    if how == "short-comm":
        data[at + 4:at + 8] = (10).to_bytes(4, "big")
    elif how == "rate-exponent":
        data[at + 16] = 0x7F
    elif how == "zero-rate":
        data[at + 16:at + 26] = bytes(10)
    elif how == "no-comm":
        data[at:at + 4] = b"XXXX"
    elif how == "ssnd-too-short":
        s = data.find(b"SSND")
        data[s + 4:s + 8] = (4).to_bytes(4, "big")
    elif how == "cut-in-comm":
        data = data[:at + 14]
    out = tmp_path / f"{how}.aiff"
    out.write_bytes(bytes(data))
    return out, at


@pytest.mark.parametrize("how,chunk", [("short-comm", "COMM"), ("rate-exponent", "COMM"), ("zero-rate", "COMM"),
                                       ("no-comm", "COMM"), ("ssnd-too-short", "SSND"), ("cut-in-comm", "COMM")])
def test_damaged_header_is_an_error_naming_the_chunk(how, chunk, mk_probe, tmp_path):
    """A COMM chunk too short, a sample rate whose exponent is out of range or that is zero, no
    COMM, an SSND too short for its header, a file ending inside COMM: ffprobe refuses each, and
    mk-probe fails (exit 1, no crash) naming the chunk and an offset."""
    path, _ = _damaged(tmp_path, how)
    assert lib.run(["ffprobe", "-v", "error", "-show_packets", path]).returncode != 0, "ffprobe refuses it too"
    proc = lib.run([mk_probe, "--packets", path])
    err = proc.stderr.decode()
    assert proc.returncode == 1, f"exit {proc.returncode}: {err}"
    assert f"in {chunk}" in err and "offset" in err, err


def test_flipped_header_bytes_never_crash(mk_probe, tmp_path):
    """Bytes flipped in the header (FORM, COMM, SSND and the chunk sizes): every copy opens or is
    an error (exit 0 or 1), never a crash or a hang."""
    data = _make(tmp_path, "adpcm_ima_qt", 2, seconds=0.2).read_bytes()
    rng = random.Random(30)
    for i in range(40):
        bad = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            bad[rng.randrange(0, 100)] = rng.randrange(256)
        path = tmp_path / f"flip{i}.aiff"
        path.write_bytes(bytes(bad))
        proc = lib.run([mk_probe, "--packets", path], timeout=30)
        assert proc.returncode in (0, 1), f"{path.name}: exit {proc.returncode}: {lib.tail(proc.stderr)}"


def _breadth_aiffs() -> list:
    names = sorted(p.name for p in (lib.SHARED_MEDIA / "breadth").glob("*")
                   if p.suffix.lower() in (".aif", ".aiff", ".aifc"))
    # Without ../shared: one case that skips (fails under CI=true) in media_param_file.
    return [pytest.param(f"shared:breadth/{n}", id=n) for n in names] or [pytest.param("shared:breadth/<none>.aiff", id="none")]


@pytest.mark.parametrize("spec", _breadth_aiffs())
def test_breadth_aiff_files_like_ffmpeg(spec, mk_probe, mk_decode, tmp_path):
    """Every AIFF of ../shared/media/breadth (real files of other tools: AIFF-C A-law, float, an
    ID3 chunk with cover art (ffprobe's attached picture is not a track), a file whose SSND holds
    no sound): packets equal ffprobe's, decode equals ffmpeg's."""
    path = lib.media_param_file(spec, tmp_path, None)
    _compare_track(path, mk_probe)
    ours = _lines([mk_probe, "--packets", path])
    ref = lib.expected_packets(path)
    assert ours == ref, lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    if ref:
        _compare(path, mk_probe, mk_decode, tmp_path)


PY_SEEK = r"""
import sys, mediakit
d = mediakit.open(sys.argv[1])
for s in sys.argv[2:]:
    d.seek(float(s))
    p = next(iter(d.packets()))
    print(p.pts, p.duration, p.size, p.position)
"""


@pytest.mark.parametrize("codec", ["adpcm_ima_qt", "pcm_s16be"])
def test_aiff_seek_lands_on_the_packet_holding_the_time(codec, mk_bin, tmp_path):
    """Python Demuxer.seek(t): the first packet starts at the block holding t. For ima4 (one
    block per packet) it is ffprobe's packet holding t; for PCM the packet starts at t's
    sample frame (ff_pcm_read_seek) and runs as ffprobe's do (4096 bytes, or to the end)."""
    rate = 22050
    path = _make(tmp_path, codec, 2, seconds=3, rate=rate)
    rows = [tuple(int(x) for x in l.split(",")[1:6]) for l in lib.expected_packets(path)]
    times = [0.0, 0.37, 1.0, 1.5, 2.2, 2.99]
    env = dict(os.environ, MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"), PYTHONPATH=str(lib.REPO / "Bindings" / "python"))
    proc = lib.run([sys.executable, "-c", PY_SEEK, path, *map(str, times)], env=env)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    first, last = rows[0], rows[-1]
    end = last[4] + last[3]
    for t, line in zip(times, proc.stdout.decode().splitlines()):
        pts, duration, size, pos = map(int, line.split())
        target = int(t * rate)
        if codec == "adpcm_ima_qt":
            want = next(r for r in rows if r[0] <= target < r[0] + r[2])
            assert (pts, duration, size, pos) == (want[0], want[2], want[3], want[4]), f"seek {t} s: {line}; ffprobe's packet: {want}"
        else:
            frame = 4   # 2 channels of 16 bits
            want_size = min(first[3], end - (first[4] + target * frame))
            assert (pts, duration, size, pos) == (target, want_size // frame, want_size, first[4] + target * frame), f"seek {t} s: {line}"
