"""CAF (Core Audio Format) read and write: CAFDemuxer, CAFMuxer (issue 30, item 4).

Oracles (ORACLES.md):
  packets   ffprobe's packet lines (FFmpeg's caf demuxer: runs of whole frames of at most 4096
            bytes for linear PCM / G.711, one packet per constant-size packet (ima4), the packet
            table for the rest). ffprobe prints no duration for packets of the packet table
            (ALAC, FLAC, Opus, AAC): there ours is checked against ffprobe's dts deltas
            (`check_durations_against_dts`).
  decode    `ffmpeg -i FILE -f s16le`, byte for byte (Opus through libopus on both sides).
            FFmpeg 5.1 reads the packet table's priming and remainder frames but cuts neither
            (cafdec.c adds them to nb_frames); our decode cuts them (gapless), so it equals the
            part of ffmpeg's decode after the priming, `valid frames` long.
  layout    our files parsed here, independently of MediaKit, by the tables of Apple's Core Audio
            Format Specification: the `caff` header, `desc` (CAFAudioFormat: rate as a float64,
            format ID, flags, bytes / frames per packet, channels, bits), `pakt`
            (CAFPacketTableHeader; the rule "packets x frames per packet (or the sum of each
            packet's frames) - priming - remainder = valid frames"; the sum of the packet sizes is
            the data), `kuki` (AAC: an ES_Descriptor whose DecoderSpecificInfo is the
            AudioSpecificConfig ffprobe reports as the stream's extradata), `data` (its edit count).
  remux     M4A -> CAF -> M4A: the same `ffmpeg -f framemd5` lines, the same ffprobe start_time and
            duration, and the same decode as the source (delay, padding and every sample kept).
  seek      Demuxer.seek(t) lands on ffprobe's packet holding t (PCM: on t's frame).
  C         mk_remux into .caf and mk_demuxer_open_io without seek (Tests/c/io_packets.c), by the
            oracles above.
Inputs: ffmpeg writes CAF for every codec but AAC (its caf muxer refuses AAC); AAC CAF files are
ours, checked by ffprobe reading them.
"""
from __future__ import annotations

import os
import random
import re
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import oracle_lib as lib

SECONDS = 1.3
RATE = 44100


def _source(tmp_path: Path, channels: int = 2, rate: int = RATE, name: str = "src.wav") -> Path:
    path = tmp_path / name
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"sine=frequency=440:duration={SECONDS}:sample_rate={rate}",
           "-ac", str(channels), "-c:a", "pcm_s16le", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _ffmpeg_caf(tmp_path: Path, codec: str, channels: int = 2) -> Path:
    rate = 48000 if codec == "libopus" else RATE
    path = tmp_path / f"{codec}_{channels}.caf"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"sine=frequency=440:duration={SECONDS}:sample_rate={rate}",
           "-ac", str(channels), "-c:a", codec, "-f", "caf", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _lines(cmd: list, stdin=None) -> list[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, stdin=stdin, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return [line for line in proc.stdout.decode().splitlines() if line.strip()]


def chunks(data: bytes) -> list[tuple[bytes, int, bytes]]:
    """The spec's file layout: `caff`, version 1, flags; then chunks of a 4-byte type and a signed
    64-bit size (-1 only for `data`: to the end of the file). (type, offset, body)."""
    assert data[:4] == b"caff" and struct.unpack(">HH", data[4:8]) == (1, 0), data[:8]
    out, at = [], 8
    while at + 12 <= len(data):
        ctype, size = data[at:at + 4], struct.unpack(">q", data[at + 4:at + 12])[0]
        end = len(data) if size == -1 else at + 12 + size
        out.append((ctype, at, data[at + 12:end]))
        at = end
    assert at == len(data), "bytes after the last chunk"
    return out


def desc_fields(body: bytes) -> dict:
    """CAFAudioFormat (the spec's desc table)."""
    assert len(body) == 32
    rate, fid, flags, bpp, fpp, ch, bits = struct.unpack(">d4sIIIII", body)
    return {"rate": rate, "format": fid, "flags": flags, "bytes_per_packet": bpp, "frames_per_packet": fpp, "channels": ch, "bits": bits}


def varint(b: bytes, i: int) -> tuple[int, int]:
    v = 0
    while True:
        c = b[i]
        i += 1
        v = v << 7 | (c & 0x7F)
        if not c & 0x80:
            return v, i


def pakt_fields(body: bytes, desc: dict) -> dict:
    """CAFPacketTableHeader and its packet descriptions (sizes when bytes per packet is 0,
    frames when frames per packet is 0)."""
    packets, valid, priming, remainder = struct.unpack(">qqii", body[:24])
    sizes, frames, i = [], [], 24
    for _ in range(packets):
        if desc["bytes_per_packet"] == 0:
            s, i = varint(body, i)
            sizes.append(s)
        else:
            sizes.append(desc["bytes_per_packet"])
        if desc["frames_per_packet"] == 0:
            f, i = varint(body, i)
            frames.append(f)
        else:
            frames.append(desc["frames_per_packet"])
    assert i == len(body), "bytes after the packet descriptions"
    return {"packets": packets, "valid": valid, "priming": priming, "remainder": remainder, "sizes": sizes, "frames": frames}


def check_layout(path: Path) -> dict:
    """Our file against the spec's tables; returns desc, pakt (or None) and kuki."""
    data = path.read_bytes()
    cs = chunks(data)
    types = [c[0] for c in cs]
    assert types[0] == b"desc", types
    assert types.count(b"data") == 1 and types.count(b"desc") == 1, types
    desc = desc_fields(cs[0][2])
    body = {c[0]: c[2] for c in cs}
    assert body[b"data"][:4] == b"\0\0\0\0", "the data chunk starts with an edit count of 0"
    audio = len(body[b"data"]) - 4
    pakt = None
    if b"pakt" in body:
        pakt = pakt_fields(body[b"pakt"], desc)
        total = pakt["packets"] * desc["frames_per_packet"] if desc["frames_per_packet"] else sum(pakt["frames"])
        assert total - pakt["priming"] - pakt["remainder"] == pakt["valid"], pakt
        assert sum(pakt["sizes"]) == audio, (sum(pakt["sizes"]), audio)
        assert min(pakt["priming"], pakt["remainder"]) >= 0
    else:
        assert desc["bytes_per_packet"] > 0 and desc["frames_per_packet"] > 0, "no packet table for packets that vary"
        assert audio % desc["bytes_per_packet"] == 0
    return {"desc": desc, "pakt": pakt, "kuki": body.get(b"kuki"), "chan": body.get(b"chan"), "types": types}


def _decode_ours(mk_decode: Path, path, tmp_path: Path) -> bytes:
    out = tmp_path / "ours.pcm"
    cmd = [mk_decode, path, "--audio-out", out, "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    return out.read_bytes()


def _decode_ffmpeg(path, codec: str = "") -> bytes:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", *(["-c:a", "libopus"] if codec == "opus" else []), "-i", path, "-map", "0:a", "-f", "s16le", "-"]
    got = lib.run(cmd)
    assert got.returncode == 0 and got.stdout, lib.tail(got.stderr)
    return got.stdout


def _compare_packets(path: Path, mk_probe: Path, ours: list[str] | None = None) -> None:
    ours = ours if ours is not None else _lines([mk_probe, "--packets", path])
    ref = lib.expected_packets(path)
    assert ref, "ffprobe lists packets"
    if any(line.split(",")[3] == "N/A" for line in ref):
        ours, ref = lib.check_durations_against_dts(ours, ref, {0}, path.name)
    assert ours == ref, f"{path.name}: packets differ\n" + str(lib.diff_lines(ours, ref, "mk-probe", "ffprobe"))


def _compare_track(path: Path, mk_probe: Path) -> dict:
    import json
    ours = json.loads(lib.run([mk_probe, "--json", path]).stdout)["tracks"]
    streams = lib.track_streams(lib.ffprobe_json(path))
    assert not lib.track_identity_problems(ours, streams), lib.track_identity_problems(ours, streams)
    t, s = ours[0], streams[0]
    assert (t["sample_rate"], t["channels"]) == (int(s["sample_rate"]), s["channels"])
    assert t["codec_tag"] == s["codec_tag_string"]
    return t


FFMPEG_CASES = [("pcm_s16le", 2), ("pcm_s16be", 1), ("pcm_s24be", 6), ("pcm_s32le", 2), ("pcm_f32le", 2), ("pcm_f64be", 1),
                ("pcm_s8", 2), ("pcm_alaw", 1), ("pcm_mulaw", 2), ("adpcm_ima_qt", 2), ("alac", 2), ("flac", 2), ("libopus", 2)]


@pytest.mark.parametrize("codec,channels", FFMPEG_CASES, ids=[f"{c}-{n}ch" for c, n in FFMPEG_CASES])
def test_caf_written_by_ffmpeg(codec, channels, mk_probe, mk_decode, tmp_path):
    """Every codec ffmpeg's caf muxer writes: track, packets and decode as ffprobe / ffmpeg
    (ffmpeg writes no priming: the decodes are whole on both sides)."""
    path = _ffmpeg_caf(tmp_path, codec, channels)
    _compare_track(path, mk_probe)
    _compare_packets(path, mk_probe)
    name = "opus" if codec == "libopus" else codec
    assert _decode_ours(mk_decode, path, tmp_path) == _decode_ffmpeg(path, name)


def _transcode(mk_transcode: Path, src: Path, out: Path, codec: str) -> None:
    cmd = [mk_transcode, src, out, "--codec", codec, "--quiet"]
    lib.check_ok(lib.run(cmd), cmd)


@pytest.mark.parametrize("codec", ["aac", "alac", "opus", "pcm_s16le", "flac"])
def test_transcode_into_caf(codec, mk_transcode, mk_probe, mk_decode, tmp_path):
    """`mk-transcode in.wav out.caf --codec X`: the layout by the spec's tables; ffprobe reads the
    codec, rate and channels we wrote and the same packets; ffmpeg's decode, less the priming and
    remainder it keeps, is ours; ours is the source's length (gapless)."""
    src = _source(tmp_path)
    out = tmp_path / f"out_{codec}.caf"
    _transcode(mk_transcode, src, out, codec)
    layout = check_layout(out)
    desc, pakt = layout["desc"], layout["pakt"]
    info = lib.ffprobe_json(out)
    stream = info["streams"][0]
    assert stream["codec_name"] == codec and stream["channels"] == 2
    assert desc["channels"] == 2 and desc["rate"] == float(stream["sample_rate"])
    assert layout["chan"] == struct.pack(">III", (101 << 16) | 2, 0, 0), "stereo: kCAFChannelLayoutTag_Stereo"
    _compare_packets(out, mk_probe)
    ours = _decode_ours(mk_decode, out, tmp_path)
    theirs = _decode_ffmpeg(out, codec)
    source_frames = round(SECONDS * RATE)
    frame = 4
    if pakt is None:
        assert desc["format"] == b"lpcm" and desc["flags"] == 2 and desc["bits"] == 16 and desc["bytes_per_packet"] == 4
        assert ours == theirs == _decode_ffmpeg(src)
        return
    if codec == "opus":
        # 48 kHz: the source's length at the Opus rate.
        source_frames = round(SECONDS * 48000)
    assert pakt["valid"] == source_frames, pakt
    assert len(ours) == source_frames * frame
    assert ours == theirs[pakt["priming"] * frame:(pakt["priming"] + pakt["valid"]) * frame]
    if codec == "aac":
        assert desc["format"] == b"aac " and desc["frames_per_packet"] == 1024 and pakt["priming"] == 1024
        kuki = layout["kuki"]
        # ES_Descriptor (tag 3) > DecoderConfigDescriptor (tag 4, object type 0x40) > DecoderSpecificInfo (tag 5).
        assert kuki[0] == 3 and kuki[5:8] == b"\0\0\0" and kuki[8] == 4 and kuki[13] == 0x40
        asc_at = kuki.index(b"\x05\x80\x80\x80") + 5
        asc = kuki[asc_at:asc_at + kuki[asc_at - 1]]
        assert asc.hex() == extradata_hex(out), "ffmpeg read the AudioSpecificConfig of our cookie"
    elif codec == "alac":
        assert desc["format"] == b"alac" and desc["frames_per_packet"] == 4096 and desc["flags"] == 1   # 16-bit source
        assert len(layout["kuki"]) == 24 and struct.unpack(">I", layout["kuki"][:4])[0] == 4096
    elif codec == "flac":
        assert layout["kuki"][4:8] == b"dfLa" and len(layout["kuki"]) == 50
    elif codec == "opus":
        assert desc["format"] == b"opus" and pakt["priming"] == 312 and layout["kuki"] is None


def extradata_hex(path: Path) -> str:
    """The stream's extradata as ffprobe prints it (hex, from `-show_data`'s dump)."""
    out = subprocess.run(["ffprobe", "-v", "error", "-show_streams", "-show_data", "-of", "json", str(path)],
                         capture_output=True, check=True, text=True).stdout
    import json
    dump = json.loads(out)["streams"][0]["extradata"]
    return "".join(line.split(":", 1)[1].strip().split("  ")[0].replace(" ", "") for line in dump.strip().splitlines())


def test_m4a_caf_m4a_keeps_delay_padding_and_every_sample(mk_remux, mk_decode, tmp_path):
    """M4A (ffmpeg's AAC: an edit list from 1024) -> CAF -> M4A: the CAF's priming is 1024 and
    its valid frames the edit's length; the M4A made from it has the source's packets
    (framemd5), start time, duration and decode; ours of the CAF is that decode, gapless."""
    src = tmp_path / "src.m4a"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", f"sine=frequency=440:duration={SECONDS}:sample_rate={RATE}",
           "-ac", "2", "-c:a", "aac", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    caf, back = tmp_path / "mid.caf", tmp_path / "back.m4a"
    for a, b in ((src, caf), (caf, back)):
        lib.check_ok(lib.run([mk_remux, a, b, "--quiet"]), [mk_remux, a, b])
    pakt = check_layout(caf)["pakt"]
    assert (pakt["priming"], pakt["valid"]) == (1024, round(SECONDS * RATE)), pakt

    def framemd5(p: Path) -> list[str]:
        out = lib.run(["ffmpeg", "-v", "error", "-i", p, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]).stdout.decode()
        return [line for line in out.splitlines() if not line.startswith("#")]

    assert framemd5(back) == framemd5(src)

    def timing(p: Path) -> str:
        # The presentation (edit list applied): start and duration as ffprobe prints them.
        return subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=start_time,duration", "-of", "csv=p=0", str(p)],
                              capture_output=True, check=True, text=True).stdout

    assert timing(back) == timing(src)
    ref = _decode_ffmpeg(src)
    assert _decode_ffmpeg(back) == ref
    ours = _decode_ours(mk_decode, caf, tmp_path)
    # FFmpeg 5.1 keeps the MP4's remainder frames (its decode runs to the whole last frame).
    assert len(ours) == pakt["valid"] * 4 and ref.startswith(ours)


def test_wav_to_caf_keeps_every_sample(mk_remux, tmp_path):
    """PCM remux: pcm_u8 becomes CAF's signed 8-bit (a change of storage), s24le stays
    little-endian (desc flag 2); ffmpeg's decode of ours equals the source's."""
    for codec in ["pcm_u8", "pcm_s24le", "pcm_f32be"]:
        src = tmp_path / f"{codec}.{'aiff' if codec == 'pcm_f32be' else 'wav'}"
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.5:sample_rate=22050",
               "-c:a", codec, src]
        lib.oracle_ok(lib.run(cmd), cmd)
        out = tmp_path / f"{codec}.caf"
        lib.check_ok(lib.run([mk_remux, src, out, "--quiet"]), [mk_remux, src, out])
        desc = check_layout(out)["desc"]
        assert desc["format"] == b"lpcm"
        want = {"pcm_u8": (0, 8), "pcm_s24le": (2, 24), "pcm_f32be": (1, 32)}[codec]
        assert (desc["flags"], desc["bits"]) == want, desc
        f64 = ["-f", "f64le", "-"]
        a = lib.run(["ffmpeg", "-v", "error", "-i", out, *f64]).stdout
        b = lib.run(["ffmpeg", "-v", "error", "-i", src, *f64]).stdout
        assert a and a == b, codec


def test_adts_to_caf_drops_the_adts_headers(mk_remux, tmp_path):
    """An ADTS .aac file into CAF: raw AAC frames (the headers dropped, the AudioSpecificConfig in
    the cookie); ffmpeg decodes it as it decodes the .aac."""
    src = tmp_path / "in.aac"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.5:sample_rate=44100", "-c:a", "aac", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    out = tmp_path / "out.caf"
    lib.check_ok(lib.run([mk_remux, src, out, "--quiet"]), [mk_remux, src, out])
    assert check_layout(out)["pakt"]["priming"] == 0
    data = next(body for t, _, body in chunks(out.read_bytes()) if t == b"data")[4:]
    assert not (data[0] == 0xFF and data[1] & 0xF0 == 0xF0), "the first packet starts with an ADTS sync word"
    assert _decode_ffmpeg(out) == _decode_ffmpeg(src)


def _with_chunks(path: Path, out: Path, order: list[bytes], open_ended: bool = False) -> Path:
    """`path` with its chunks in `order` (types); the data chunk's size -1 when `open_ended`."""
    data = path.read_bytes()
    cs = {c[0]: c[2] for c in chunks(data)}
    body = b""
    for t in order:
        size = -1 if (t == b"data" and open_ended) else len(cs[t])
        body += t + struct.pack(">q", size) + cs[t]
    out.write_bytes(data[:8] + body)
    return out


def test_data_of_unknown_size_and_pipes(mk_transcode, mk_probe, mk_decode, tmp_path):
    """A recording still being written: the packet table before the audio and a data chunk of
    size -1, read to the end of the file. ffprobe reads it (its packets must be under 4096 bytes:
    AAC's are); from a pipe too, with the same packets. A file whose packet table follows the
    audio cannot be read from a pipe: an error naming the packet table."""
    src = _source(tmp_path)
    caf = tmp_path / "aac.caf"
    _transcode(mk_transcode, src, caf, "aac")
    types = check_layout(caf)["types"]
    live = _with_chunks(caf, tmp_path / "live.caf", [t for t in types if t not in (b"data", b"pakt")] + [b"pakt", b"data"], open_ended=True)
    _compare_packets(live, mk_probe)
    with open(live, "rb") as f:
        piped = _lines([mk_probe, "--packets", "-"], stdin=f)
    assert piped == _lines([mk_probe, "--packets", live])
    assert _decode_ours(mk_decode, live, tmp_path) == _decode_ours(mk_decode, caf, tmp_path)
    with open(caf, "rb") as f:
        proc = subprocess.run([str(mk_probe), "--packets", "-"], stdin=f, capture_output=True, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "packet table (pakt)" in err and "cannot seek" in err, err
    pcm = tmp_path / "pcm.caf"
    _transcode(mk_transcode, src, pcm, "pcm_s16le")
    with open(pcm, "rb") as f:
        assert _lines([mk_probe, "--packets", "-"], stdin=f) == lib.expected_packets(pcm)


@pytest.mark.parametrize("codec,cut", [("pcm_s16le", 150_001), ("alac", 9_001), ("adpcm_ima_qt", 30_001)])
def test_cut_copies_read_as_far_as_ffmpeg(codec, cut, mk_probe, mk_decode, tmp_path):
    """A file cut inside its audio (and, for ALAC, with its packet table gone with the cut: the
    packet table moved before the audio first, as Apple's recorder writes it): the packets
    ffprobe lists, a warning naming the cut; the decode as far as ffmpeg's."""
    full = _ffmpeg_caf(tmp_path, codec)
    if codec == "alac":
        types = chunks(full.read_bytes())
        order = [t for t, _, _ in types if t not in (b"data", b"pakt")] + [b"pakt", b"data"]
        full = _with_chunks(full, tmp_path / "pakt_first.caf", order)
    path = tmp_path / "cut.caf"
    path.write_bytes(full.read_bytes()[:cut])
    _compare_packets(path, mk_probe)
    err = lib.run([mk_probe, "--packets", path]).stderr.decode()
    assert "truncated" in err and "data" in err, err
    ours = _decode_ours(mk_decode, path, tmp_path)
    assert ours == _decode_ffmpeg(path)


def test_flipped_bytes_never_crash(mk_probe, mk_transcode, tmp_path):
    """200 copies of small CAF files (AAC, ALAC, ima4, PCM) with bytes flipped in their header,
    cookie and packet table: each is read to its end or refused with a message, never a crash."""
    src = _source(tmp_path, rate=8000)
    files = [_ffmpeg_caf(tmp_path, "alac"), _ffmpeg_caf(tmp_path, "adpcm_ima_qt")]
    aac = tmp_path / "aac.caf"
    _transcode(mk_transcode, src, aac, "aac")
    files.append(aac)
    rng = random.Random(30)
    for n in range(200):
        base = files[n % len(files)].read_bytes()
        data = bytearray(base)
        header_end = next(at for t, at, _ in chunks(base) if t == b"data") + 16
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(header_end) if rng.random() < 0.7 else rng.randrange(len(data))
            data[at] = rng.randrange(256)
        path = tmp_path / "flipped.caf"
        path.write_bytes(bytes(data))
        proc = lib.run([mk_probe, "--packets", path])
        assert proc.returncode in (0, 1), f"case {n}: exit {proc.returncode}\n{lib.tail(proc.stderr)}"
        if proc.returncode == 1:
            assert proc.stderr.strip(), f"case {n}: refused without a message"


@pytest.mark.parametrize("how,says", [("no-desc-first", "desc"), ("desc-size", "desc chunk is 40"), ("no-data", "no data chunk"),
                                      ("no-pakt", "no packet table"), ("zero-rate", "sample rate"), ("version", 'starts with "caff')])
def test_damaged_header_is_an_error_naming_the_chunk(how, says, mk_probe, tmp_path):
    """desc not first or not 32 bytes, no data chunk, variable packets with no packet table, a
    sample rate of 0, a version other than 1: an error (exit 1) naming what is wrong."""
    path = _ffmpeg_caf(tmp_path, "alac")
    data = bytearray(path.read_bytes())
    if how == "no-desc-first":
        data[8:12] = b"dexc"
    elif how == "desc-size":
        data[12:20] = struct.pack(">q", 40)
    elif how == "no-data":
        at = data.find(b"data")
        data[at:at + 4] = b"xxxx"
    elif how == "no-pakt":
        at = data.find(b"pakt")
        data[at:at + 4] = b"xxxx"
    elif how == "zero-rate":
        data[20:28] = bytes(8)
    elif how == "version":
        data[4:6] = b"\0\2"
    out = tmp_path / f"{how}.caf"
    out.write_bytes(bytes(data))
    proc = lib.run([mk_probe, "--packets", out])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and says in err, err
    if how not in ("zero-rate", "version"):
        # ffprobe refuses these too (it takes a rate of 0, and does not probe version 2 as CAF).
        assert lib.run(["ffprobe", "-v", "error", "-show_packets", out]).returncode != 0


REMUX_C = r"""
#include <mediakit/mediakit.h>
#include <stdio.h>
/* caf_remux SRC DST: mk_remux with the default settings (the catalogue picks DST's format). */
int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: %s SRC DST\n", argv[0]); return 2; }
    if (mk_remux(argv[1], argv[2], NULL) != MK_OK) { fprintf(stderr, "%s\n", mk_last_error()); return 1; }
    return 0;
}
"""


@pytest.fixture(scope="module")
def c_tools(mk_bin, tmp_path_factory):
    """Tests/c/io_packets.c (mk_demuxer_open_io with a read callback only: a pipe) and a
    program calling mk_remux, built against libmediakit."""
    d = tmp_path_factory.mktemp("caf_c")
    (d / "caf_remux.c").write_text(REMUX_C)
    tools = {}
    for name, src in (("io_packets", lib.REPO / "Tests" / "c" / "io_packets.c"), ("caf_remux", d / "caf_remux.c")):
        out = d / name
        cmd = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", lib.REPO / "Include", src, "-L", mk_bin, "-lmediakit",
               f"-Wl,-rpath,{mk_bin}", "-o", out]
        proc = lib.run(cmd)
        assert proc.returncode == 0, f"building {name}: {lib.tail(proc.stderr)}"
        tools[name] = out
    return tools


def test_c_api_reads_and_writes_caf(c_tools, mk_transcode, tmp_path):
    """C: mk_remux into .caf (an M4A's AAC, a WAV's PCM), which ffprobe reads with the source's
    packets (payload hashes) and the M4A's gapless facts in the packet table; mk_demuxer_open_io
    without seek (a pipe) reads a PCM CAF and an AAC CAF whose packet table comes first with
    ffprobe's packets."""
    src = tmp_path / "src.m4a"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.7:sample_rate=44100", "-ac", "2",
           "-c:a", "aac", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    wav = _source(tmp_path)
    for a, b in ((src, tmp_path / "aac.caf"), (wav, tmp_path / "pcm.caf")):
        lib.check_ok(lib.run([c_tools["caf_remux"], a, b]), [c_tools["caf_remux"], a, b])

        def hashes(p):
            out = lib.run(["ffprobe", "-v", "error", "-show_data_hash", "md5", "-show_entries", "packet=data_hash", "-of", "csv=p=0", p]).stdout
            return re.findall(rb"MD5:[0-9a-f]+", out)   # an M4A's first packet has a side-data column too

        if a == src:
            assert hashes(b) == hashes(a)
            pakt = check_layout(b)["pakt"]
            assert (pakt["priming"], pakt["valid"]) == (1024, round(0.7 * RATE))
        else:
            assert _decode_ffmpeg(b) == _decode_ffmpeg(a)
    aac = tmp_path / "aac.caf"
    types = check_layout(aac)["types"]
    first = _with_chunks(aac, tmp_path / "pakt_first.caf", [t for t in types if t not in (b"data", b"pakt")] + [b"pakt", b"data"])
    for path in (tmp_path / "pcm.caf", first):
        with open(path, "rb") as f:
            got = _lines([c_tools["io_packets"]], stdin=f)
        ref = lib.expected_packets(path)
        if any(line.split(",")[3] == "N/A" for line in ref):
            got, ref = lib.check_durations_against_dts(got, ref, {0}, path.name)
        assert got == ref, path.name


PY_SEEK = r"""
import sys, mediakit
d = mediakit.open(sys.argv[1])
for s in sys.argv[2:]:
    d.seek(float(s))
    p = next(iter(d.packets()))
    print(p.pts, p.size, p.position)
"""


@pytest.mark.parametrize("codec", ["alac", "adpcm_ima_qt", "pcm_s16le"])
def test_seek_lands_on_the_packet_holding_the_time(codec, mk_bin, tmp_path):
    """Demuxer.seek(t) (Python): the first packet is ffprobe's packet holding t's frame (the
    packet table's for ALAC, a 68-byte block for ima4); for PCM the run starts at t's frame
    itself and is as long as ffprobe's runs (4096 bytes, or to the end)."""
    path = _ffmpeg_caf(tmp_path, codec)
    rows = [tuple(int(x) if x != "N/A" else -1 for x in line.split(",")[1:6]) for line in lib.expected_packets(path)]
    times = [0.0, 0.37, 1.0, 1.29]
    env = dict(os.environ, MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"), PYTHONPATH=str(lib.REPO / "Bindings" / "python"))
    proc = lib.run([sys.executable, "-c", PY_SEEK, path, *map(str, times)], env=env)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    starts = [r[0] for r in rows] + [10 ** 12]
    first, last = rows[0], rows[-1]
    for t, line in zip(times, proc.stdout.decode().splitlines()):
        pts, size, pos = map(int, line.split())
        target = round(t * RATE)
        if codec == "pcm_s16le":
            frame = 4
            want_size = min(first[3], last[4] + last[3] - (first[4] + target * frame))
            assert (pts, size, pos) == (target, want_size, first[4] + target * frame), f"seek {t} s: {line}"
        else:
            i = next(k for k in range(len(rows)) if starts[k] <= target < starts[k + 1])
            assert (pts, size, pos) == (rows[i][0], rows[i][3], rows[i][4]), f"seek {t} s: {line}; ffprobe's packet: {rows[i]}"


# FFmpeg's channel layouts and their WAVE speaker masks.
LAYOUTS = {"mono": 0x4, "stereo": 0x3, "2.1": 0xB, "3.0": 0x7, "4.0": 0x107, "quad(side)": 0x603, "5.0(side)": 0x607, "5.1(side)": 0x60F,
           "3.0(back)": 0x103, "3.1": 0xF, "4.1": 0x10F, "7.1": 0x63F, "7.1(wide-side)": 0x6CF, "6.0": 0x707, "6.1": 0x70F,
           "hexagonal": 0x137, "7.0": 0x637, "7.1(wide)": 0xFF, "octagonal": 0x737}


def _chan(path) -> bytes:
    """The `chan` chunk of a CAF file (header included)."""
    data = Path(path).read_bytes()
    i = 8
    while i + 12 <= len(data):
        size = int.from_bytes(data[i + 4:i + 12], "big", signed=True)
        if data[i:i + 4] == b"chan":
            return data[i:i + 12 + size]
        if size < 0:
            break
        i += 12 + size
    return b""

PY_MASK = r"""
import sys, mediakit
print(mediakit.open(sys.argv[1]).tracks[0].channel_mask)
"""


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_channel_layouts_as_ffmpeg_names_them(layout, mk_bin, mk_remux, tmp_path):
    """The `chan` chunk ffmpeg writes for a layout reads as its speaker mask (a layout tag, or
    a bitmap above 6 channels); our copy of the file writes the `chan` ffmpeg writes, byte for
    byte, and ffprobe names it the same layout."""
    path = tmp_path / "in.caf"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-f", "lavfi", "-i", "sine=frequency=440:duration=0.1:sample_rate=8000",
           "-af", f"aformat=channel_layouts={layout}", "-c:a", "pcm_s16le", "-f", "caf", path]
    lib.oracle_ok(lib.run(cmd), cmd)
    env = dict(os.environ, MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"), PYTHONPATH=str(lib.REPO / "Bindings" / "python"))
    proc = lib.run([sys.executable, "-c", PY_MASK, path], env=env)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    assert int(proc.stdout) == LAYOUTS[layout]
    out = tmp_path / "out.caf"
    lib.check_ok(lib.run([mk_remux, path, out, "--quiet"]), [mk_remux, path, out])
    name = lib.run(["ffprobe", "-v", "error", "-show_entries", "stream=channel_layout", "-of", "csv=p=0", out]).stdout.decode().strip()
    assert name == layout
    assert _chan(out) and _chan(out) == _chan(path), f"chan: ours {_chan(out).hex()}, ffmpeg {_chan(path).hex()}"


def _framemd5(path: Path) -> list[str]:
    out = lib.run(["ffmpeg", "-v", "error", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]).stdout.decode()
    return [line for line in out.splitlines() if not line.startswith("#")]


@pytest.mark.parametrize("codec", ["alac", "flac", "libopus", "pcm_s24be"])
def test_caf_to_caf_remux_is_framemd5_identical(codec, mk_remux, tmp_path):
    """ffmpeg's CAF copied by mk-remux into CAF: `ffmpeg -f framemd5` prints the same packets
    (timestamps, durations, sizes, payload hashes)."""
    src = _ffmpeg_caf(tmp_path, codec)
    out = tmp_path / "copy.caf"
    lib.check_ok(lib.run([mk_remux, src, out, "--quiet"]), [mk_remux, src, out])
    check_layout(out)
    assert _framemd5(out) == _framemd5(src)
