"""Raw audio elementary streams through AudioStreamParser / AudioStreamDemuxer: AC-3 and E-AC-3
(`.ac3`, `.eac3`), DTS (`.dts`, core and DTS-HD) and the AMR storage format (`.amr`, RFC 4867
section 5), on the breadth files of ../shared/media (ac3_*, eac3_*, amr_*), on streams ffmpeg
encodes (AC-3, E-AC-3, DTS through `-c:a dca -strict -2`; this FFmpeg has no AMR encoder) and on
streams ffmpeg copies out of the breadth corpus (`-c copy`: AMR-WB from a 3GP, DTS-HD MA, DTS
Express and E-AC-3 JOC from transport streams).

Oracles (ORACLES.md):
- packets: `ffprobe -show_entries packet=pts,dts,duration,size,pos,flags`: offsets, sizes and
  key flags equal. Timestamps: ours count samples (time base 1 / sample rate); FFmpeg's raw
  ac3 / eac3 / dts demuxers use 1/90000 and give each packet the duration
  floor(samples x 90000 / rate) (3134 for 1536 samples at 44.1 kHz), its pts the sum of those
  before it: our samples, converted by that rule, must give ffprobe's numbers. AMR: ffprobe's
  time base is 1 / rate, the numbers are equal as they are;
- payloads: `ffmpeg -c copy -f framemd5` of our remux into Matroska and MP4 against the same of
  the input (sizes and MD5s of every packet, in order);
- decode: `ffmpeg -v error -i FILE -map 0:a:0 -f s16le -`, byte for byte (the same libavcodec
  decoders behind mk-decode);
- track facts: `ffprobe -show_streams`: codec, sample rate, channels; the duration within one
  frame;
- seeking: `mk-decode --seek T` against the full decode cut at T (ORACLES.md), at least as
  close as `ffmpeg -ss T` is (exact where the decoder's state converges);
- a pipe (`cat FILE | mk-probe --packets -`) gives the file's packets; the push parser gives
  the same packets for any chunking (`mk-stream --chunk`); a file cut short reads as far as it
  goes (packets and decode as ffprobe / ffmpeg give them on the cut file).
"""
from __future__ import annotations

import os
import json
import subprocess
from fractions import Fraction

import pytest

import oracle_lib as lib

BREADTH = lib.SHARED_MEDIA / "breadth"
BREADTH_GLOBS = ("ac3_*.ac3", "eac3_*.eac3", "amr_*.amr")

# name -> ffmpeg arguments after the sine input (2 s).
GENERATED = {
    "ac3_48k_stereo.ac3": ["-ac", "2", "-ar", "48000", "-c:a", "ac3"],
    "ac3_44k_mono.ac3": ["-ac", "1", "-ar", "44100", "-c:a", "ac3"],
    "ac3_32k_51.ac3": ["-ac", "6", "-ar", "32000", "-c:a", "ac3"],
    "eac3_48k_stereo.eac3": ["-ac", "2", "-ar", "48000", "-c:a", "eac3"],
    "eac3_51.eac3": ["-ac", "6", "-ar", "48000", "-c:a", "eac3"],
    "dts_48k_stereo.dts": ["-ac", "2", "-ar", "48000", "-c:a", "dca", "-strict", "-2"],
    "dts_44k_stereo.dts": ["-ac", "2", "-ar", "44100", "-c:a", "dca", "-strict", "-2"],
}
# name -> (breadth file, ffmpeg output format): the stream copied out with -c copy.
COPIED = {
    "amr_wb_from_3gp.amr": ("3gp_androidx_83e476_bbb_mono_16kHz_23.05kbps_amrwb.3gp", "amr"),
    "amr_nb_from_3gp.amr": ("3gp_androidx_49ac76_bbb_mono_8kHz_12.2kbps_amrnb.3gp", "amr"),
    "dts_hd_ma_from_ts.dts": ("ts_androidx_1e854b_sample_dts_hd_ma.ts", "dts"),
    "dts_express_from_ts.dts": ("ts_androidx_64a577_sample_dts_express.ts", "dts"),
    "eac3_joc_from_ts.eac3": ("ts_androidx_086ff4_sample_eac3joc.ts", "eac3"),
}


def _params() -> list:
    params = [lib.file_param(f"gen:{n}", n) for n in GENERATED]
    params += [lib.file_param(f"copy:{n}", n) for n in COPIED]
    if BREADTH.is_dir():
        names = sorted(p.name for g in BREADTH_GLOBS for p in BREADTH.glob(g))
        params += [lib.file_param(f"shared:breadth/{n}", n) for n in names]
    else:
        params.append(pytest.param("shared:breadth/<missing>", id="shared-media-missing"))
    return params


PARAMS = _params()


def _make(name: str, folder) -> "os.PathLike":
    out = folder / name
    if not out.exists():
        if name in GENERATED:
            cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=f=440:d=2",
                   *GENERATED[name], out]
        else:
            source, fmt = COPIED[name]
            src = lib.media_param_file(f"shared:breadth/{source}", folder, None)
            cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-map", "0:a:0", "-c", "copy", "-f", fmt, out]
        lib.oracle_ok(lib.run(cmd), cmd)
    return out


@pytest.fixture
def stream(request, tmp_path_factory):
    """The input file a param names (generated, copied out of a breadth file, or a breadth file)."""
    kind, _, name = request.param.partition(":")
    folder = tmp_path_factory.getbasetemp() / "raw-audio"
    folder.mkdir(exist_ok=True)
    if kind == "copy":
        return _make(name, folder)
    return lib.media_param_file(request.param, folder, _make)


def _lines(cmd: list, stdin=None) -> tuple[list[str], str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, stdin=stdin, timeout=lib.CMD_TIMEOUT)
    assert proc.returncode == 0, f"`{lib.shell_line(cmd)}` failed: {proc.stderr.decode()[-800:]}"
    return [l for l in proc.stdout.decode().splitlines() if l.strip()], proc.stderr.decode()


def _ffprobe_stream(path) -> dict:
    return lib.ffprobe_json(path)["streams"][0]


def _expected_like_ours(path) -> list[str]:
    """ffprobe's packets as `track,pts,dts,duration,size,offset,flags` in samples where its time
    base is 1 / rate; in 1/90000 (ac3, eac3, dts) ffprobe's lines are kept as they are and
    `_ours_in_ffprobe_units` converts ours."""
    cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=pts,dts,duration,size,pos,flags", "-of", "csv=p=0", str(path)]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    out = []
    for line in proc.stdout.decode().splitlines():
        if not line.strip():
            continue
        pts, dts, dur, size, pos, flags = line.split(",")[:6]
        out.append(f"0,{pts},{dts},{dur},{size},{pos},{'K' if flags.startswith('K') else '_'}")
    return out


def _ours_in_ffprobe_units(lines: list[str], rate: int, time_base: str) -> list[str]:
    """Our packet lines (samples) in ffprobe's time base: as they are for 1 / rate; for 1/90000,
    each duration floor(samples x 90000 / rate) and each pts the sum of those before it (FFmpeg's
    raw demuxers). A packet cut short by the end has no duration of ours (N/A): ffprobe's
    parser gives it the frame's, so that field is not compared (`*`); nor are its pts and dts
    where ffprobe has none (FFmpeg's dca parser gives a cut DTS Express frame no timestamp), `?`."""
    num, den = (int(x) for x in time_base.split("/"))
    if Fraction(num, den) == Fraction(1, rate):
        out = []
        for line in lines:
            track, pts, dts, dur, size, pos, flags = line.split(",")
            out.append(f"{track},{pts}?,{dts}?,*,{size},{pos},{flags}" if dur == "N/A" else line)
        return out
    assert Fraction(num, den) == Fraction(1, 90000), f"unexpected ffprobe time base {time_base}"
    out, clock = [], 0
    for line in lines:
        track, pts, dts, dur, size, pos, flags = line.split(",")
        if dur == "N/A":
            out.append(f"{track},{clock}?,{clock}?,*,{size},{pos},{flags}")
            continue
        d = int(dur) * 90000 // rate
        out.append(f"{track},{clock},{clock},{d},{size},{pos},{flags}")
        clock += d
    return out


def _check_packets(path, mk_probe) -> None:
    ours, _ = _lines([mk_probe, "--packets", path])
    ref = _expected_like_ours(path)
    assert ref, f"ffprobe lists no packet of {path}"
    st = _ffprobe_stream(path)
    converted = _ours_in_ffprobe_units(ours, int(st["sample_rate"]), st["time_base"])
    def blank(o: str, r: str) -> str:
        if o == "*":
            return "*"
        if o.endswith("?"):
            return o if r == "N/A" else r + "?"
        return r
    ref = [",".join(blank(o, r) for o, r in zip(mine.split(","), line.split(","))) for mine, line in zip(converted, ref)] + ref[len(converted):]
    assert converted == ref, lib.diff_lines(converted, ref, "mk-probe", "ffprobe")


def _check_decode(path, mk_decode, tmp_path) -> None:
    out = tmp_path / "ours.pcm"
    cmd = [mk_decode, path, "--audio-out", out, "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a:0", "-f", "s16le", "-"]
    want = lib.run(ref_cmd).stdout
    got = out.read_bytes()
    assert want, f"ffmpeg decodes nothing of {path}"
    assert got == want, f"{path.name}: {len(got)} bytes of PCM, ffmpeg {len(want)}; " + str(lib.compare_bytes_exact(got, want, "s16le"))


@pytest.mark.parametrize("stream", PARAMS, indirect=True)
def test_packets_like_ffprobe(stream, mk_probe):
    _check_packets(stream, mk_probe)


@pytest.mark.parametrize("stream", PARAMS, indirect=True)
def test_decode_like_ffmpeg(stream, mk_decode, tmp_path):
    _check_decode(stream, mk_decode, tmp_path)


@pytest.mark.parametrize("stream", PARAMS, indirect=True)
def test_track_facts_like_ffprobe(stream, mk_probe):
    """Codec, rate and channels of ffprobe's stream; the duration within one frame of its (of the
    sum of its packets' durations where ffprobe says it estimates from the bit rate)."""
    proc = lib.run([mk_probe, "--json", stream])
    lib.check_ok(proc, [mk_probe, "--json", stream])
    info = json.loads(proc.stdout)
    assert len(info["tracks"]) == 1
    t = info["tracks"][0]
    st = _ffprobe_stream(stream)
    assert (t["codec"], t["sample_rate"]) == (st["codec_name"], int(st["sample_rate"]))
    # DTS-HD: the channels of the extension substream's first asset (8 of MA 7.1 over a 5.1 core).
    assert t["channels"] == st["channels"], (t["channels"], st["channels"])
    # Where ffprobe estimates the duration from the size and a bit rate, its packets' sum instead
    # (test_audio_streams' rule).
    from test_audio_streams import _ffprobe_duration
    ref = _ffprobe_duration(stream)
    if ref is None:   # no format duration (the DTS-HD stream): the sum of ffprobe's packets' durations
        cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=duration_time", "-of", "csv=p=0", str(stream)]
        ref = sum(float(v) for v in lib.run(cmd).stdout.decode().split() if v not in ("", "N/A"))
    frame = max(int(l.split(",")[3]) for l in _lines([mk_probe, "--packets", stream])[0] if l.split(",")[3] != "N/A")
    assert abs(float(info["format"]["duration"]) - ref) <= frame / int(st["sample_rate"]) + 0.001


# A/52's frame size table in kbit/s by frmsizecod / 2 (a 48 kHz frame holds kbps x 4 bytes).
AC3_KBPS = (32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 576, 640)


@pytest.mark.parametrize("bsid", [9, 10])
def test_reduced_rate_ac3_like_ffprobe(bsid, mk_probe, tmp_path):
    """AC-3 with bsid 9 or 10 (the reduced-rate streams: FFmpeg's parser halves, or quarters, the
    fscod rate and the bit rate by its `sr_shift`): sample rate, duration and every packet as
    ffprobe gives them. No encoder here writes such a stream, so an ffmpeg AC-3 stream at 48 kHz
    gets bsid 9 / 10 written into each frame's header; its audio blocks stay 48 kHz ones, which
    the decoder refuses, so only the headers (what the demuxer reads) are compared."""
    src, path = tmp_path / "src.ac3", tmp_path / f"bsid{bsid}.ac3"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=f=440:d=1:sample_rate=48000",
           "-ac", "2", "-c:a", "ac3", "-b:a", "192k", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    data, at, frames = bytearray(src.read_bytes()), 0, 0
    while at + 6 <= len(data):
        assert data[at:at + 2] == b"\x0b\x77" and data[at + 4] >> 6 == 0, f"no 48 kHz AC-3 frame at {at}"
        data[at + 5] = (data[at + 5] & 0x07) | bsid << 3
        at += AC3_KBPS[(data[at + 4] & 0x3F) // 2] * 4
        frames += 1
    assert at == len(data) and frames > 10
    path.write_bytes(data)
    st = _ffprobe_stream(path)
    assert int(st["sample_rate"]) == 48000 >> (bsid - 8), st
    info = json.loads(lib.run([mk_probe, "--json", path]).stdout)
    t = info["tracks"][0]
    assert (t["codec"], t["sample_rate"], t["channels"]) == ("ac3", int(st["sample_rate"]), st["channels"])
    assert float(info["format"]["duration"]) == pytest.approx(float(lib.ffprobe_json(path)["format"]["duration"]), abs=1e-3)
    _check_packets(path, mk_probe)


@pytest.mark.parametrize("stream", PARAMS, indirect=True)
def test_pipe_and_chunks_equal_the_file(stream, mk_probe, mk_stream):
    """`cat FILE | mk-probe --packets -` lists the file's packets; the push parser (mk-stream)
    gives the same (offset, size) for chunks of 7 and 4096 bytes and one push, and those are
    mk-probe's."""
    from_file, _ = _lines([mk_probe, "--packets", stream])
    with open(stream, "rb") as f:
        from_pipe, _ = _lines([mk_probe, "--packets", "-"], stdin=f)
    assert from_pipe == from_file, lib.diff_lines(from_pipe, from_file, "pipe", "file")
    want = [f"{f[5]},{f[4]}" for f in (l.split(",") for l in from_file)]
    for chunk in (7, 4096, 1 << 26):
        rows, _ = _lines([mk_stream, stream, "--packets", "--chunk", chunk])
        got = [",".join(r.split(",")[:2]) for r in rows]
        assert got == want, f"--chunk {chunk}: " + str(lib.diff_lines(got, want, "mk-stream", "mk-probe"))


@pytest.mark.parametrize("stream", PARAMS, indirect=True)
def test_cut_short_reads_as_far_as_it_goes(stream, mk_probe, mk_decode, tmp_path):
    """The file less its last 1001 bytes (a frame cut inside): packets as ffprobe lists them on
    the cut file (the cut frame handed on as a last, short packet) and the decode as ffmpeg's."""
    data = stream.read_bytes()
    cut = tmp_path / ("cut" + stream.suffix)
    cut.write_bytes(data[: max(0, len(data) - 1001)])
    _check_packets(cut, mk_probe)
    _check_decode(cut, mk_decode, tmp_path)


def _framemd5(path) -> list[str]:
    """(size, md5) of every packet of `ffmpeg -c copy -f framemd5`, in order."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [",".join(f.strip() for f in l.split(",")[4:6]) for l in proc.stdout.decode().splitlines() if l and not l.startswith("#")]


@pytest.mark.parametrize("stream", PARAMS, indirect=True)
@pytest.mark.parametrize("ext", ["mkv", "mp4"])
def test_remux_keeps_every_payload(stream, ext, mk_remux, tmp_path):
    """mk-remux into Matroska and MP4: every packet's size and MD5 as in the input (framemd5 of
    both: FFmpeg's parser splits the E-AC-3 samples of 6 blocks MP4 holds into their frames
    again). MP4 carries AC-3 (dac3), E-AC-3 (dec3) and DTS; AMR (Matroska and MP4) is refused
    naming the codec: what the muxers do today."""
    out = tmp_path / f"out.{ext}"
    cmd = [mk_remux, stream, out]
    proc = lib.run(cmd)
    codec = _ffprobe_stream(stream)["codec_name"]
    if codec.startswith("amr"):
        assert proc.returncode != 0 and codec.encode() in proc.stderr, proc.stderr
        return
    lib.check_ok(proc, cmd)
    got, want = _framemd5(out), _framemd5(stream)
    assert got == want, lib.diff_lines(got, want, f"remuxed .{ext}", "input")


def _moov_box(data: bytes, kind: bytes) -> bytes:
    """The last `kind` box of a one-track MP4 whose moov follows its mdat (header included)."""
    i = data.rfind(kind) - 4
    assert i >= 0, kind
    return data[i:i + int.from_bytes(data[i:i + 4], "big")]


EAC3_PARAMS = [p for p in PARAMS if "eac3" in p.id] + [lib.file_param("shared:breadth/ts_Vanilagy_00bbd7_eac3.ts", "ts_eac3")]


@pytest.mark.parametrize("stream", EAC3_PARAMS, indirect=True)
def test_eac3_into_mp4_as_ffmpeg_writes_it(stream, mk_remux, mk_probe, tmp_path):
    """E-AC-3 into MP4 against `ffmpeg -c copy` into MP4: the same `ec-3` sample entry (its dec3
    box built from the frames, and the btrt), the same samples (stsz, stts: frames of fewer than
    6 blocks joined into samples of 6 blocks, as FFmpeg's mov muxer joins them), the same
    packets through `ffmpeg -f framemd5`; and our demuxer reads back ffmpeg's samples (sizes
    and durations of its stsz / stts)."""
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ffmpeg.mp4"
    lib.check_ok(lib.run([mk_remux, stream, ours, "--quiet"]), [mk_remux, stream, ours])
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", stream, "-map", "0:a:0", "-c", "copy", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    a, b = ours.read_bytes(), ref.read_bytes()
    for kind in (b"ec-3", b"dec3", b"stsz", b"stts"):
        assert _moov_box(a, kind) == _moov_box(b, kind), f"{kind.decode()}: ours {_moov_box(a, kind).hex()}, ffmpeg {_moov_box(b, kind).hex()}"
    got, want = _framemd5(ours), _framemd5(ref)
    assert got and got == want, lib.diff_lines(got, want, "ours", "ffmpeg")
    stsz, stts = _moov_box(b, b"stsz"), _moov_box(b, b"stts")
    count = int.from_bytes(stsz[16:20], "big")
    sizes = [int.from_bytes(stsz[20 + 4 * k:24 + 4 * k], "big") for k in range(count)] if int.from_bytes(stsz[12:16], "big") == 0 \
        else [int.from_bytes(stsz[12:16], "big")] * count
    durations = []
    for k in range(int.from_bytes(stts[12:16], "big")):
        n, d = int.from_bytes(stts[16 + 8 * k:20 + 8 * k], "big"), int.from_bytes(stts[20 + 8 * k:24 + 8 * k], "big")
        durations += [d] * n
    lines, _ = _lines([mk_probe, "--packets", ours])
    assert [(int(l.split(",")[4]), int(l.split(",")[3])) for l in lines] == list(zip(sizes, durations))


def test_probe_reads_by_content_not_name(tmp_path_factory, mk_probe):
    """A raw stream under another extension is still found by its frames (the probe does not
    look at names); bytes that only start like a frame are refused with an error, not read."""
    folder = tmp_path_factory.getbasetemp() / "raw-audio"
    folder.mkdir(exist_ok=True)
    for name, codec in (("ac3_48k_stereo.ac3", "ac3"), ("eac3_48k_stereo.eac3", "eac3"), ("dts_48k_stereo.dts", "dts")):
        src = _make(name, folder)
        renamed = folder / (name + ".bin")
        renamed.write_bytes(src.read_bytes())
        proc = lib.run([mk_probe, "--json", renamed])
        lib.check_ok(proc, [mk_probe, "--json", renamed])
        assert json.loads(proc.stdout)["tracks"][0]["codec"] == codec
    junk = folder / "junk.ac3"
    junk.write_bytes(bytes([0x0B, 0x77, 0x00, 0x00, 0x14, 0x40]) + bytes(range(256)) * 8)
    proc = lib.run([mk_probe, "--packets", junk])
    assert proc.returncode != 0 and proc.stderr.startswith(b"mk-probe: "), proc.stderr


def _snr(ours: bytes, ref: bytes) -> float:
    """Signal-to-error ratio in dB of `ours` against `ref` (s16le, same length); inf when equal."""
    import array
    import math
    a, b = array.array("h", ours), array.array("h", ref)
    err = sum((x - y) ** 2 for x, y in zip(a, b))
    sig = sum(y * y for y in b) or 1
    return math.inf if err == 0 else 10 * math.log10(sig / err)


@pytest.mark.parametrize("stream", PARAMS, indirect=True)
def test_seek_is_the_full_decode_cut(stream, mk_decode, tmp_path):
    """`mk-decode --seek T` (T = 40 % of the stream) against ffmpeg's decode of the whole file
    from sample round(T x rate) on (ORACLES.md "Seeking": the full decode cut at T): the same
    length, and at least as close to it as `ffmpeg -ss T` is. Decoders whose state forgets
    the past (most of the generated streams) give it byte for byte; AC-3 dither and AMR's
    predictors and noise generators carry a state no seek can restore, so neither side is
    exact there, and ffmpeg's own seek (a fresh decoder at the frame) is the bound."""
    st = _ffprobe_stream(stream)
    rate, channels = int(st["sample_rate"]), int(st["channels"])
    full = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", stream, "-map", "0:a:0", "-f", "s16le", "-"]).stdout
    seconds = round(len(full) / (2 * channels) / rate * 0.4, 3)
    out = tmp_path / "seek.pcm"
    cmd = [mk_decode, stream, "--seek", seconds, "--audio-out", out, "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    want = full[round(seconds * rate) * 2 * channels:]
    got = out.read_bytes()
    assert len(got) == len(want), f"--seek {seconds}: {len(got)} bytes, the cut full decode {len(want)}"
    theirs = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-ss", str(seconds), "-i", stream, "-map", "0:a:0", "-f", "s16le", "-"]).stdout
    ours_snr, their_snr = _snr(got, want), _snr(theirs[:len(want)], want)
    assert ours_snr >= their_snr, f"--seek {seconds}: {ours_snr:.1f} dB against the cut full decode, ffmpeg -ss {their_snr:.1f} dB"


def test_eac3_dependent_frames_join_the_frame_before(tmp_path_factory, tmp_path, mk_probe):
    """E-AC-3 dependent frames (strmtyp 1: a 7.1 stream's extra channels) belong to the packet
    of the independent frame before them, as FFmpeg's ac3 parser joins them. ffmpeg's encoder
    writes none, so every second frame of a generated stream is marked dependent (its other
    bits kept; only the packets are compared, the decoder rejects such a stream): packets as
    ffprobe lists them, two frames each."""
    folder = tmp_path_factory.getbasetemp() / "raw-audio"
    folder.mkdir(exist_ok=True)
    data = bytearray(_make("eac3_48k_stereo.eac3", folder).read_bytes())
    i = n = 0
    while i + 8 <= len(data):
        size = (((data[i + 2] & 7) << 8) | data[i + 3]) * 2 + 2
        if n % 2 == 1:
            data[i + 2] = (data[i + 2] & 0x3F) | 0x40
        i, n = i + size, n + 1
    path = tmp_path / "dependent.eac3"
    path.write_bytes(bytes(data))
    _check_packets(path, mk_probe)


def test_amr_seek_past_the_parsed_frames(tmp_path, mk_decode):
    """A seek into an AMR file beyond the frames parsed when it was opened (a 350 s file made of
    the breadth file's frames 80 times over; the first 64 KiB are parsed, about 100 s): AMR has
    no sync word to find a frame from a guessed offset, so reading goes on from the last frame
    parsed. The output is the full decode cut at T in length and at least as close to it as
    ffmpeg -ss's (see test_seek_is_the_full_decode_cut)."""
    src = lib.media_param_file("shared:breadth/amr_androidx_b844f5_sample_nb.amr", tmp_path, None).read_bytes()
    path = tmp_path / "long.amr"
    path.write_bytes(src[:6] + src[6:] * 80)
    full = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-f", "s16le", "-"]).stdout
    for seconds in (200, 333):
        out = tmp_path / "seek.pcm"
        cmd = [mk_decode, path, "--seek", seconds, "--audio-out", out, "-q"]
        lib.check_ok(lib.run(cmd), cmd)
        want, got = full[seconds * 8000 * 2:], out.read_bytes()
        assert len(got) == len(want), f"--seek {seconds}: {len(got)} bytes, the cut full decode {len(want)}"
        theirs = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-ss", str(seconds), "-i", path, "-f", "s16le", "-"]).stdout
        assert _snr(got, want) >= _snr(theirs[:len(want)], want), f"--seek {seconds}"
