"""mk-probe / mk-decode on Ogg (Opus, Vorbis, Theora, FLAC) and IVF (AV1, VP8, VP9) against FFmpeg.

Inputs: every .ogg/.opus/.ivf of ../shared/media (the broken_* ones only for "no crash"),
and files made here with ffmpeg: Opus and Vorbis mono/stereo/5.1, a chained file of each
(two files joined with `cat`), a chained file that changes codec, a two-stream file,
Ogg FLAC, Theora (+Vorbis), and AV1 (libaom, SVT-AV1), VP8, VP9 in IVF.

Oracles (ORACLES.md):
  packets  ffprobe -v error -show_entries packet=stream_index,pts,dts,duration,size,pos,flags
           -of csv=p=0 FILE  (Ogg has no edit list; flags: K or _, as test_probe.py maps them)
  facts    ffprobe -show_streams -show_format: codec, sample rate, channels, width, height,
           duration within one packet
  gapless  ffmpeg -c:a libopus|libvorbis -i FILE -f s16le (trimmed: what ffmpeg outputs) and
           the same with -flags2 +skip_manual (every decoded sample): the difference must be
           the track's encoder_delay + encoder_padding from `mk-probe --json`.
  decode   mk-decode exits 0 and writes samples / frames (output comparisons belong to the codec tests).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import os

import pytest

import oracle_lib as lib

SINE = ["-f", "lavfi", "-i"]


def _sine(rate: int) -> list[str]:
    return SINE + [f"sine=f=440:sample_rate={rate}"]


def _video() -> list[str]:
    return SINE + ["testsrc2=size=320x240:rate=25"]


# name -> list of ffmpeg commands (args after "ffmpeg -v error -y"), the last writes the file;
# "cat:a,b" joins earlier generated files.
GENERATED: dict[str, list] = {
    "opus_mono.opus": [*_sine(48000), "-t", "2", "-c:a", "libopus", "-ac", "1"],
    "opus_stereo.opus": [*_sine(48000), "-t", "2.3", "-c:a", "libopus", "-ac", "2"],
    "opus_51.opus": [*_sine(48000), "-t", "1.7", "-af", "aformat=channel_layouts=5.1", "-c:a", "libopus"],
    "vorbis_mono.ogg": [*_sine(44100), "-t", "2", "-c:a", "libvorbis", "-ac", "1"],
    "vorbis_stereo.ogg": [*_sine(44100), "-t", "2.3", "-c:a", "libvorbis", "-ac", "2"],
    "vorbis_51.ogg": [*_sine(48000), "-t", "1.7", "-af", "aformat=channel_layouts=5.1", "-c:a", "libvorbis"],
    "chained_opus.opus": "cat:opus_mono.opus,opus_stereo.opus",
    "chained_vorbis.ogg": "cat:vorbis_mono.ogg,vorbis_stereo.ogg",
    "chained_opus_then_vorbis.ogg": "cat:opus_stereo.opus,vorbis_stereo.ogg",
    "two_streams.ogg": [*_sine(48000), *SINE, "sine=f=660:sample_rate=44100", "-t", "2", "-map", "0", "-map", "1",
                        "-c:a:0", "libopus", "-c:a:1", "libvorbis"],
    "flac.ogg": [*_sine(44100), "-t", "1", "-c:a", "flac"],
    "theora_vorbis.ogv": [*_video(), *_sine(44100), "-t", "1", "-c:v", "libtheora", "-c:a", "libvorbis"],
    "av1_aom.ivf": [*_video(), "-t", "2", "-c:v", "libaom-av1", "-cpu-used", "8", "-g", "25"],
    "av1_svt.ivf": [*_video(), "-t", "2", "-c:v", "libsvtav1", "-g", "25", "-svtav1-params", "verbosity=0"],
    "vp8.ivf": [*_video(), "-t", "1", "-c:v", "libvpx", "-g", "10"],
    "vp9.ivf": [*_video(), "-t", "1", "-c:v", "libvpx-vp9", "-g", "10"],
}

# Files where ffprobe itself stops with an error part way: our demuxer must give the same
# packets, then fail with a MediaError (exit 1) rather than invent more.
STOPS_EARLY = {"chained_opus_then_vorbis.ogg"}

# Where ffprobe's number is an estimate, not the file's: strict expected failures.
KNOWN_DIFFERENCES = {
    "ogg_vorbis_no_audio_packets.ogg::facts":
        "every granule position is 0 (no audio); ffprobe falls back to estimating the duration "
        "from the file size and bit rate (0.005125 s); MediaKit reports 0",
}


@pytest.fixture(scope="session")
def gen_dir(tmp_path_factory) -> Path:
    return lib.shared_tmp(tmp_path_factory, "ogg-ivf")


@lib.generated_once
def _make(name: str, folder: Path) -> Path:
    out = folder / name
    if out.exists():
        return out
    recipe = GENERATED[name]
    if isinstance(recipe, str):
        parts = [_make(n, folder) for n in recipe[4:].split(",")]
        out.write_bytes(b"".join(p.read_bytes() for p in parts))
        return out
    cmd = ["ffmpeg", "-v", "error", "-y", "-nostdin", *recipe, "-map_metadata", "-1", out]
    proc = lib.run(cmd)
    if proc.returncode != 0 or not out.is_file():
        pytest.fail(f"could not generate {name}: `{lib.shell_line(cmd)}`\n{lib.tail(proc.stderr)}")
    return out


def _shared(exts: tuple[str, ...], broken: bool = False) -> list[str]:
    if not lib.SHARED_MEDIA.is_dir():
        return []
    return sorted(p.name for p in lib.SHARED_MEDIA.iterdir()
                  if p.suffix.lower() in exts and p.name.startswith("broken_") == broken)


MEDIA = ([pytest.param(f"gen:{n}", id=n) for n in GENERATED]
         + [pytest.param(f"shared:{n}", id=n) for n in _shared((".ogg", ".opus", ".ivf"))])


@pytest.fixture
def file(request, gen_dir) -> Path:
    return lib.media_param_file(request.param, gen_dir, _make)


def _ffprobe_packets(path: Path) -> list[str]:
    cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts,dts,duration,size,pos,flags",
           "-of", "csv=p=0", path]
    proc = lib.run(cmd)
    info = lib.ffprobe_json(path)
    ranks = {s["index"]: i for i, s in enumerate(lib.track_streams(info))}
    lines = []
    for line in proc.stdout.decode().splitlines():
        f = line.split(",")
        while len(f) > 7 and f[-1] == "":
            f.pop()
        if len(f) != 7 or int(f[0]) not in ranks:
            continue
        lines.append(",".join([str(ranks[int(f[0])])] + f[1:6] + ["K" if f[6].startswith("K") else "_"]))
    return lines


@pytest.mark.parametrize("file", MEDIA, indirect=True)
def test_packets_equal_ffprobe(file, mk_probe):
    """`mk-probe --packets` equals ffprobe's packet list line for line (track, pts, dts,
    duration, size, position, key flag), including Opus pre-skip (negative pts), Vorbis
    first-page timestamps, trimmed last packets and chained links."""
    cmd = [mk_probe, "--packets", file]
    proc = lib.run(cmd)
    if file.name not in STOPS_EARLY:
        lib.check_ok(proc, cmd)
    elif proc.returncode != 1 or b"unsupported" not in proc.stderr:
        pytest.fail(f"{file.name}: expected exit 1 with an unsupported error, got {proc.returncode}: {lib.tail(proc.stderr)}")
    ours = [l for l in proc.stdout.decode().splitlines() if l.strip()]
    diff = lib.diff_lines(ours, _ffprobe_packets(file), "mk-probe", "ffprobe")
    if diff:
        pytest.fail(f"{file.name}: packets differ from ffprobe\ncolumns: track,pts,dts,duration,size,offset,flags\n{diff}",
                    pytrace=False)


@pytest.mark.parametrize("file", MEDIA, indirect=True)
def test_track_facts_match_ffprobe(file, mk_probe, request):
    """Codec, type, sample rate, channels, width, height as ffprobe; duration within one packet."""
    reason = KNOWN_DIFFERENCES.get(f"{file.name}::facts")
    if reason:
        request.applymarker(pytest.mark.xfail(reason=reason, strict=True))
    proc = lib.run([mk_probe, "--json", file])
    lib.check_ok(proc, [mk_probe, "--json", file])
    ours = json.loads(proc.stdout)["tracks"]
    info = lib.ffprobe_json(file)
    streams = lib.track_streams(info)
    longest = lib.max_packet_seconds(file)
    problems = lib.track_identity_problems(ours, streams)
    for i, (t, s) in enumerate(zip(ours, streams)):
        if s["codec_type"] == "audio":
            for k in ("sample_rate", "channels"):
                if int(t[k]) != int(s[k]):
                    problems.append(f"track {i}: {k} {t[k]}, ffprobe {s[k]}")
        else:
            for k in ("width", "height"):
                if t[k] != s[k]:
                    problems.append(f"track {i}: {k} {t[k]}, ffprobe {s[k]}")
        if "duration" in s:
            tol = max(0.001, float(longest.get(i, 0)))
            if abs(float(t["duration"]) - float(s["duration"])) > tol + 1e-6:
                problems.append(f"track {i}: duration {t['duration']}, ffprobe {s['duration']} (+-{tol})")
    if problems:
        pytest.fail(f"{file.name}: " + "; ".join(problems), pytrace=False)


GAPLESS = ["opus_mono.opus", "opus_stereo.opus", "opus_51.opus", "vorbis_mono.ogg", "vorbis_stereo.ogg",
           "vorbis_51.ogg"]
GAPLESS_SHARED = [n for n in _shared((".ogg", ".opus")) if "no_audio" not in n]


@pytest.mark.parametrize("file", [pytest.param(f"gen:{n}", id=n) for n in GAPLESS]
                         + [pytest.param(f"shared:{n}", id=n) for n in GAPLESS_SHARED], indirect=True)
def test_gapless_delay_and_padding_are_ffmpegs_trim(file, mk_probe):
    """encoder_delay + encoder_padding = ffmpeg's untrimmed output - its trimmed output.

    Untrimmed: `ffmpeg -flags2 +skip_manual -c:a lib{opus,vorbis} -i FILE -ac 1 -f s16le`
    (skip-samples side data not applied); trimmed: the same without -flags2 (what ffmpeg plays).
    """
    proc = lib.run([mk_probe, "--json", file])
    lib.check_ok(proc, [mk_probe, "--json", file])
    track = json.loads(proc.stdout)["tracks"][0]
    codec = "lib" + track["codec"]

    def samples(extra: list[str]) -> int:
        cmd = ["ffmpeg", "-v", "error", *extra, "-c:a", codec, "-i", file, "-map", "0:a:0", "-ac", "1", "-f", "s16le", "-"]
        p = lib.run(cmd)
        lib.oracle_ok(p, cmd)
        return len(p.stdout) // 2

    untrimmed, trimmed = samples(["-flags2", "+skip_manual"]), samples([])
    ours = track["encoder_delay"] + track["encoder_padding"]
    assert untrimmed - trimmed == ours, (
        f"{file.name}: ffmpeg trims {untrimmed - trimmed} samples ({untrimmed} -> {trimmed}); "
        f"encoder_delay {track['encoder_delay']} + encoder_padding {track['encoder_padding']} = {ours}")


DECODE = ["opus_stereo.opus", "opus_51.opus", "vorbis_stereo.ogg", "chained_opus.opus", "two_streams.ogg",
          "av1_aom.ivf", "av1_svt.ivf", "vp8.ivf", "vp9.ivf"]


@pytest.mark.parametrize("file", [pytest.param(f"gen:{n}", id=n) for n in DECODE]
                         + [pytest.param(f"shared:{n}", id=n) for n in _shared((".ogg", ".opus", ".ivf"))
                            if "no_audio" not in n], indirect=True)
def test_decodes_without_error(file, mk_decode, tmp_path):
    """mk-decode goes through the Demuxer protocol and the plugin registry, exits 0 and writes output."""
    is_video = file.suffix == ".ivf"
    out = tmp_path / ("out.yuv" if is_video else "out.pcm")
    cmd = [mk_decode, file, "--video-out" if is_video else "--audio-out", out]
    if file.name == "chained_opus.opus":
        # Mono, then a stereo link decoded from its own header: raw PCM holds one format, so
        # both are written as stereo (without, mk-decode refuses by name: test_format_change).
        cmd += ["--channels", "2"]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    assert out.is_file() and out.stat().st_size > 0, f"{file.name}: mk-decode wrote nothing"


@pytest.mark.parametrize("name", _shared((".ogg", ".opus", ".ivf"), broken=True) or ["<none>"])
def test_broken_files_fail_cleanly(name, mk_probe):
    """Broken files: exit 0 or 1 with a message naming the file, never a crash or a hang."""
    if name == "<none>":
        pytest.skip("no broken Ogg/IVF files in ../shared/media")
    path = lib.SHARED_MEDIA / name
    proc = lib.run([mk_probe, "--packets", path], timeout=60)
    assert proc.returncode in (0, 1), f"{name}: exit {proc.returncode}: {lib.tail(proc.stderr)}"
    if proc.returncode == 1:
        assert name in proc.stderr.decode(), f"{name}: the error does not name the file: {lib.tail(proc.stderr)}"


# --------------------------------------------------------------------------- AV1 IVF -> MP4

def _box(data: bytes, fourcc: bytes) -> bytes | None:
    """The first `fourcc` box's body found in `data` (a flat search, enough for stsd children)."""
    i = data.find(fourcc)
    if i < 4:
        return None
    size = int.from_bytes(data[i - 4:i], "big")
    return data[i + 4:i - 4 + size]


def _framemd5_seconds(path: Path, decode: bool = False) -> list[tuple]:
    """`ffmpeg -f framemd5` rows as (stream, dts, pts, duration in seconds, size, MD5): packets
    copied (or, `decode`, frames decoded with libdav1d)."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", *(["-c:v", "libdav1d"] if decode else []), "-i", path, "-map", "0",
           *([] if decode else ["-c", "copy"]), "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    from fractions import Fraction
    tb, rows = {}, []
    for line in proc.stdout.decode().splitlines():
        if line.startswith("#tb "):
            k, v = line[4:].split(":")
            tb[int(k)] = Fraction(v.strip())
        elif line and not line.startswith("#"):
            f = [x.strip() for x in line.split(",")]
            st = int(f[0])
            rows.append((st, *(int(x) * tb[st] for x in f[1:4]), f[4], f[5]))
    return rows


AV1_IVF = [pytest.param("gen:av1_aom.ivf", id="av1_aom.ivf"), pytest.param("gen:av1_svt.ivf", id="av1_svt.ivf")] + \
    [pytest.param(f"shared:{n}", id=n) for n in _shared((".ivf",)) if "av1" in n]


@pytest.mark.parametrize("file", AV1_IVF, indirect=True)
def test_av1_ivf_remuxes_to_mp4_like_ffmpeg(file, mk_bin, tmp_path):
    """`mk-remux IN.ivf OUT.mp4` for AV1 (IVF stores no av1C): the av1C built from the first
    temporal unit's sequence header is byte for byte the one `ffmpeg -c copy` writes
    (ff_isom_write_av1c); the samples are ffmpeg's (temporal delimiters dropped, as FFmpeg's
    mov muxer drops them: same sizes and MD5s, same times in seconds); libdav1d decodes both to
    the same frames; gst-discoverer-1.0 and mediainfo open it."""
    ours, ref = tmp_path / "ours.mp4", tmp_path / "ffmpeg.mp4"
    cmd = [mk_bin / "mk-remux", "--quiet", file, ours]
    lib.check_ok(lib.run(cmd), cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", file, "-map", "0", "-c", "copy", ref]
    lib.oracle_ok(lib.run(ref_cmd), ref_cmd)
    a, b = _box(ours.read_bytes(), b"av1C"), _box(ref.read_bytes(), b"av1C")
    assert a is not None and a == b, f"av1C {a.hex() if a else None}, ffmpeg's {b.hex() if b else None}"
    assert _framemd5_seconds(ours) == _framemd5_seconds(ref), "the samples differ from ffmpeg's -c copy"
    assert _framemd5_seconds(ours, decode=True) == _framemd5_seconds(file, decode=True), "decodes differently"
    for tool in (["gst-discoverer-1.0", ours], ["mediainfo", ours]):
        proc = lib.run(tool)
        text = (proc.stdout + proc.stderr).decode(errors="replace")
        assert proc.returncode == 0 and "rror" not in text, f"`{lib.shell_line(tool)}`: {lib.tail(text, 300)}"
