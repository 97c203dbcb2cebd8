"""The Ogg muxer (issue 15 item 4): `mk-remux IN OUT.ogg|.opus` for Opus, Vorbis and FLAC from
Ogg, Matroska / WebM and MP4, against FFmpeg and the Xiph tools.

Inputs: the Ogg / Matroska / MP4 Opus and Vorbis files of ../shared/media, and files made here
with ffmpeg: libopus from 48 kHz and 24 kHz input, mono / stereo / 5.1, libvorbis q5 mono /
stereo / 5.1, very short and odd-length ones, Ogg FLAC, a two-stream Ogg (Opus + Vorbis), and
the same audio in WebM, MKV and MP4, and FLAC from .flac and .mka.

Oracles (ORACLES.md):
  packets  `ffmpeg -i F -map 0 -c copy -f framemd5 -`: from an Ogg input the whole lines
           (timestamps, durations, sizes, payload MD5s) equal the input's, except Vorbis
           timestamps (below); from Matroska / MP4 the stream, size and payload MD5 of every packet.
  decode   `ffmpeg -i F -map 0:a:N -f f32le -`: the output decodes to exactly the input's
           samples (gapless: Opus pre-skip and end trim, Vorbis end granule); from an MP4 the
           input's decode cut to what its edit list presents (lib.presented_audio_samples).
           Vorbis from Ogg also: `oggdec -R` (libvorbisfile, the reference decoder, which
           follows the granule positions exactly) gives the input's samples.
  tools    opusinfo (opus-tools) / ogginfo (vorbis-tools) exit 0 and print no WARNING or
           ERROR that they do not print for the input too (FFmpeg's Ogg FLAC has an empty
           packet; a header-only Vorbis file has a granule position of 0 outside its headers);
           gst-discoverer-1.0 opens the file (when it opens the input).
  ours     mk-probe --packets of the output lists the input's packets (pts, dts, duration,
           size; for a non-Ogg input sizes only; for Vorbis sizes only).

Vorbis timestamps: FFmpeg's Vorbis packet durations (its vorbis_parser, which reads the
previous block size from a long block's flag) differ from the samples the blocks complete
(Vorbis I section A.2, libvorbis's granule positions) at some block-size changes; FFmpeg puts
each page's first packet at the previous page's granule position, so its timestamps jump
there and depend on where pages end (ogg_vorbis_48k_stereo_bear.ogg: +448 at five page
starts), and so do the end-of-stream page's shortened durations. The muxer writes libvorbis's
granule positions with its own page layout, so for Vorbis from Ogg the framemd5 lines are
compared without pts, dts and duration, and the granule positions are judged by libvorbisfile.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

import oracle_lib as lib
import remux_lib

SINE = ["-f", "lavfi", "-i"]


def _sine(rate: int, f: int = 440) -> list[str]:
    return SINE + [f"sine=f={f}:sample_rate={rate}"]


# name -> ffmpeg arguments (after "ffmpeg -v error -y"); "remux:SRC" copies an earlier file.
GENERATED: dict[str, list | str] = {
    "opus_stereo_48k.opus": [*_sine(48000), "-t", "2.3", "-ac", "2", "-c:a", "libopus", "-b:a", "96k"],
    "opus_mono_24k.opus": [*_sine(24000), "-t", "1.37", "-c:a", "libopus", "-b:a", "32k"],
    "opus_51.opus": [*_sine(48000), "-t", "1.7", "-af", "aformat=channel_layouts=5.1", "-c:a", "libopus"],
    "opus_short.opus": [*_sine(48000), "-t", "0.013", "-c:a", "libopus"],
    "opus_long_pages.opus": [*_sine(48000), "-t", "7.001", "-c:a", "libopus", "-frame_duration", "2.5", "-b:a", "256k"],
    "vorbis_stereo_q5.ogg": [*_sine(44100), "-t", "2.3", "-ac", "2", "-c:a", "libvorbis", "-q:a", "5"],
    "vorbis_mono_odd.ogg": [*_sine(22050), "-t", "1.23457", "-c:a", "libvorbis", "-q:a", "5"],
    "vorbis_51.ogg": [*_sine(48000), "-t", "1.7", "-af", "aformat=channel_layouts=5.1", "-c:a", "libvorbis", "-q:a", "5"],
    "vorbis_short.ogg": [*_sine(44100), "-t", "0.01", "-c:a", "libvorbis", "-q:a", "5"],
    "flac.ogg": [*_sine(44100), "-t", "1.1", "-c:a", "flac"],
    "flac_native.flac": [*_sine(44100), "-t", "1.3", "-ac", "2", "-c:a", "flac"],
    "two_streams.ogg": [*_sine(48000), *_sine(44100, 660), "-t", "2", "-map", "0", "-map", "1",
                        "-c:a:0", "libopus", "-c:a:1", "libvorbis"],
    "opus.webm": "remux:opus_stereo_48k.opus",
    "opus_51.mka": "remux:opus_51.opus",
    "vorbis.webm": "remux:vorbis_stereo_q5.ogg",
    "vorbis_odd.mkv": "remux:vorbis_mono_odd.ogg",
    "flac.mka": "remux:flac_native.flac",
    "opus.mp4": "remux:opus_stereo_48k.opus",
    "opus_mono.mp4": "remux:opus_mono_24k.opus",
    "vp9_opus.webm": [*SINE, "testsrc2=size=160x120:rate=25", *_sine(48000), "-t", "1", "-c:v", "libvpx-vp9",
                      "-deadline", "realtime", "-c:a", "libopus"],
}


@pytest.fixture(scope="session")
def gen_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("ogg_mux")


def make(name: str, folder: Path) -> Path:
    out = folder / name
    if out.exists():
        return out
    spec = GENERATED[name]
    if isinstance(spec, str):
        args = ["-i", make(spec.partition(":")[2], folder), "-map", "0", "-c", "copy"]
    else:
        args = [*spec, "-map_metadata", "-1"]
    cmd = ["ffmpeg", "-v", "error", "-y", "-nostdin", *args, out]
    proc = lib.run(cmd)
    if proc.returncode != 0:
        pytest.fail(f"could not generate {name}: `{lib.shell_line(cmd)}`\n{lib.tail(proc.stderr)}")
    return out


SHARED = [
    "ogg_opus_stereo_tiny_155b.opus", "ogg_vorbis_stereo_1s.ogg", "ogg_vorbis_48k_stereo_bear.ogg",
    "ogg_vorbis_stereo_eos_edge.ogg", "ogg_vorbis_mono_metadata_block_picture.ogg", "ogg_vorbis_no_audio_packets.ogg",
    "ogg_vorbis_data_after_eos.ogg", "mka_opus_5p1.mka", "mkv_opus_mono_tiny.mkv", "webm_vorbis_mono_12k_3s.webm",
    "webm_vorbis_stereo_16k_tone.webm", "fmp4_opus_dOps_single_file.mp4", "mp4_opus_progressive_elst_preskip_1p5s.mp4",
    "fmp4_opus_mono_10s.mp4",
]
CASES = [f"shared:{n}" for n in SHARED] + [f"gen:{n}" for n in GENERATED if n != "vp9_opus.webm"]


def _source(spec: str, gen_dir: Path) -> Path:
    return lib.media_param_file(spec, gen_dir, make)


def _streams(path: Path) -> list[dict]:
    return lib.track_streams(lib.ffprobe_json(path))


def _framemd5(path: Path) -> list[list[str]]:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return [[f.strip() for f in l.split(",")] for l in proc.stdout.decode().splitlines() if l and not l.startswith("#")]


def _decode(path: Path, stream: int) -> bytes:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", f"0:a:{stream}", "-f", "f32le", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout


def _our_packets(mk_bin: Path, path: Path) -> list[list[str]]:
    cmd = [mk_bin / "mk-probe", "--packets", path]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    return [l.split(",") for l in proc.stdout.decode().splitlines() if l]


def _oggdec(path: Path) -> bytes:
    cmd = ["oggdec", "-Q", "-R", "-o", "-", path]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    return proc.stdout


@pytest.mark.parametrize("spec", CASES, ids=[c.partition(":")[2] for c in CASES])
def test_remux_into_ogg(spec, gen_dir, mk_bin, tmp_path):
    src = _source(spec, gen_dir)
    streams = _streams(src)
    opus_only = all(s.get("codec_name") == "opus" for s in streams)
    out = tmp_path / ("out.opus" if opus_only else "out.ogg")
    cmd = [mk_bin / "mk-remux", "--quiet", src, out]
    lib.check_ok(lib.run(cmd), cmd)
    problems = []
    from_ogg = src.suffix in (".ogg", ".opus")
    a, b = _framemd5(src), _framemd5(out)
    vorbis = {str(n) for n, s in enumerate(streams) if s.get("codec_name") == "vorbis"}
    if from_ogg:
        # per stream, in order (an attached picture's packet comes where FFmpeg injects it)
        a, b = (sorted((r if r[0] not in vorbis else [r[0], r[4], r[5]] for r in rows), key=lambda r: int(r[0])) for rows in (a, b))
        if a != b:
            problems.append(lib.diff_lines([",".join(r) for r in b], [",".join(r) for r in a], "ours", "input") or "framemd5 differs")
    elif [(r[0], r[4], r[5]) for r in a] != [(r[0], r[4], r[5]) for r in b]:
        problems.append("framemd5 payloads (stream, size, MD5) differ")
    keys = ("codec_name", "codec_type", "sample_rate", "channels", "channel_layout")
    got = _streams(out)
    if [{k: s.get(k) for k in keys} for s in streams] != [{k: s.get(k) for k in keys} for s in got]:
        problems.append(f"ffprobe streams differ: {[{k: s.get(k) for k in keys} for s in got]} vs the input's {[{k: s.get(k) for k in keys} for s in streams]}")
    for n, s in enumerate(streams):
        ref, ours = _decode(src, n), _decode(out, n)
        if src.suffix == ".mp4":
            presented = lib.presented_audio_samples(src, 48000)
            if presented is not None:
                ref = ref[:presented * 4 * int(s["channels"])]
        frame = 4 * int(s["channels"])
        if from_ogg and s.get("codec_name") == "vorbis" and len(streams) == 1:
            # libvorbisfile is the oracle for the length. FFmpeg must decode the output as the
            # input when it reads the input as libvorbisfile does, else to libvorbisfile's length
            # or as it decodes the input (it misplaces the end trim of a stream whose audio is
            # all on its end-of-stream page, ogg_vorbis_stereo_1s.ogg: 128 samples short).
            reference, decoded = _oggdec(src), _oggdec(out)
            if reference != decoded:
                problems.append(f"oggdec (libvorbisfile) decodes the output to {len(decoded) // (frame // 2)} samples, the input to {len(reference) // (frame // 2)}"
                                + ("" if len(reference) != len(decoded) else " (same length, different samples)"))
            if len(ref) // frame == len(reference) // (frame // 2) and ref != ours:
                problems.append(f"FFmpeg decodes the output to {len(ours) // frame} samples, the input to {len(ref) // frame} (as libvorbisfile)")
            if len(ours) // frame != len(decoded) // (frame // 2) and ours != ref:
                problems.append(f"FFmpeg decodes the output to {len(ours) // frame} samples, libvorbisfile to {len(decoded) // (frame // 2)}, FFmpeg the input to {len(ref) // frame}")
            common = min(len(ref), len(ours))
            if ref[:common] != ours[:common]:
                problems.append("FFmpeg decodes the output to other samples than the input")
        elif ref != ours:
            problems.append(f"stream {n} ({s['codec_name']}) decodes to {len(ours) // frame} samples, the input to {len(ref) // frame}"
                            + ("" if len(ref) != len(ours) else " (same length, different samples)"))
    problems += remux_lib.ogg_tool_problems(out, got, src)
    ours_in, ours_out = _our_packets(mk_bin, src), _our_packets(mk_bin, out)
    if from_ogg:
        ours_in, ours_out = ([r[:5] if r[0] not in vorbis else [r[0], r[4]] for r in rows] for rows in (ours_in, ours_out))
        if sorted(ours_in, key=lambda r: r[0]) != sorted(ours_out, key=lambda r: r[0]):  # per track, in order
            problems.append("mk-probe --packets (track, pts, dts, duration, size) of the output differ from the input's")
    elif sorted(((r[0], r[4]) for r in ours_in), key=lambda r: r[0]) != sorted(((r[0], r[4]) for r in ours_out), key=lambda r: r[0]):
        problems.append("mk-probe --packets sizes of the output differ from the input's")
    assert not problems, f"{src.name} -> {out.name}:\n" + "\n".join(problems)


def test_video_is_refused_and_audio_can_be_picked(gen_dir, mk_bin, tmp_path):
    """VP9 + Opus WebM into .ogg: an unsupported error naming the VP9 track and what Ogg takes,
    no output file; with --track 1 (the Opus track) the file is written and decodes as the input."""
    src, out = make("vp9_opus.webm", gen_dir), tmp_path / "out.ogg"
    proc = lib.run([mk_bin / "mk-remux", src, out])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "Ogg cannot carry track 0 (vp9)" in err and "Opus, Vorbis and FLAC" in err, err
    assert not out.exists()
    cmd = [mk_bin / "mk-remux", "--quiet", "--track", "1", src, out]
    lib.check_ok(lib.run(cmd), cmd)
    assert _decode(out, 0) == _decode(src, 0)
    assert not remux_lib.ogg_tool_problems(out, _streams(out))


def test_opus_extension_takes_opus_only(gen_dir, mk_bin, tmp_path):
    out = tmp_path / "out.opus"
    proc = lib.run([mk_bin / "mk-remux", make("vorbis_stereo_q5.ogg", gen_dir), out])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and ".opus file carries Opus only" in err and "vorbis" in err, err
    assert not out.exists()


def test_chained_input_is_a_clear_error_and_leaves_no_file(gen_dir, mk_bin, tmp_path):
    """Two Opus files joined (a chained Ogg): MediaKit writes one link per track, so the remux
    fails naming the chain, and nothing is left under the target name or beside it."""
    chained = tmp_path / "chained.opus"
    chained.write_bytes(make("opus_mono_24k.opus", gen_dir).read_bytes() + make("opus_stereo_48k.opus", gen_dir).read_bytes())
    out = tmp_path / "out" / "x.opus"
    out.parent.mkdir()
    proc = lib.run([mk_bin / "mk-remux", chained, out])
    err = proc.stderr.decode()
    assert proc.returncode == 1 and "one Ogg link per track" in err, err
    assert list(out.parent.iterdir()) == [], list(out.parent.iterdir())


def test_interrupted_write_leaves_no_file(gen_dir, mk_bin, tmp_path):
    """mk-remux killed (SIGKILL) while writing: the target name never appears (the data goes
    to a hidden temporary file beside it until the rename). Killed once the temporary file
    exists and a few paced packets later: its pages are still in the write buffer then (the
    whole output is smaller than it), so waiting for bytes on disk would wait out the deadline."""
    out = tmp_path / "out.opus"
    proc = subprocess.Popen([str(mk_bin / "mk-remux"), "--quiet", "--pace-ms", "20", str(make("opus_long_pages.opus", gen_dir)), str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while time.time() < deadline and not any(p.name.startswith(".out.opus.partial") for p in tmp_path.iterdir()):
            time.sleep(0.02)
        time.sleep(0.3)
        assert proc.poll() is None, "mk-remux finished before it could be interrupted"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not out.exists()


@pytest.mark.parametrize("name", ["opus_long_pages.opus", "opus_stereo_48k.opus"])
def test_pages_follow_the_rules(name, gen_dir, mk_bin, tmp_path):
    """The page layout of a remuxed file, read from the bytes: every page's CRC is right
    (ffmpeg would complain otherwise, and ogginfo checks it), the OpusHead is alone on the
    first page (BOS) and the OpusTags page ends before the audio; no data page spans more than
    one second or 255 lacing values; sequence numbers count up; only the last page is EOS;
    the last granule is the input's."""
    src, out = make(name, gen_dir), tmp_path / "out.opus"
    cmd = [mk_bin / "mk-remux", "--quiet", src, out]
    lib.check_ok(lib.run(cmd), cmd)

    def pages(path: Path) -> list[dict]:
        data, at, res = path.read_bytes(), 0, []
        while at < len(data):
            assert data[at:at + 4] == b"OggS", f"no page at {at}"
            n = data[at + 26]
            lacing = data[at + 27:at + 27 + n]
            size = 27 + n + sum(lacing)
            res.append({"flags": data[at + 5], "granule": int.from_bytes(data[at + 6:at + 14], "little", signed=True),
                        "seq": int.from_bytes(data[at + 18:at + 22], "little"), "lacing": lacing,
                        "body": data[at + 27 + n:at + size]})
            at += size
        return res

    ours, ref = pages(out), pages(src)
    assert ours[0]["flags"] == 2 and ours[0]["body"].startswith(b"OpusHead") and len(ours[0]["lacing"]) == 1
    assert ours[1]["body"].startswith(b"OpusTags") and ours[1]["lacing"][-1] < 255 and ours[1]["granule"] == 0
    assert [p["seq"] for p in ours] == list(range(len(ours)))
    assert [p["flags"] & 4 for p in ours] == [0] * (len(ours) - 1) + [4]
    assert ours[-1]["granule"] == ref[-1]["granule"]
    previous = 0
    for p in ours[2:]:
        assert len(p["lacing"]) <= 255
        if p["granule"] != -1:
            assert p["granule"] - previous <= 48000 + 5760, (previous, p["granule"])  # 1 s and one packet (120 ms at most)
            previous = p["granule"]


def test_remux_into_a_fifo(gen_dir, mk_bin, tmp_path):
    """A FIFO named .ogg as the output (nothing is written back): what comes out of the pipe
    decodes as the input and passes ogginfo / opusinfo."""
    src, fifo, captured = make("opus.webm", gen_dir), tmp_path / "live.ogg", tmp_path / "captured.ogg"
    os.mkfifo(fifo)
    with open(captured, "wb") as sink:
        reader = subprocess.Popen(["cat", str(fifo)], stdout=sink)
        proc = lib.run([mk_bin / "mk-remux", "--quiet", src, fifo])
        reader.wait(timeout=60)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    assert _decode(captured, 0) == _decode(src, 0)
    assert not remux_lib.ogg_tool_problems(captured, _streams(captured))
