"""The plugin contract test (Tests/plugin_harness/plugin_harness.c) over every plugin we ship.

plugin_harness.c drives one plugin through the C ABI of Include/mediakit/mediakit_plugin.h with
no host: argument checks, send / receive / flush / drain order, MK_EAGAIN handling, packet and
frame ownership (frames released after destroy and deinit), struct_size growth in both
directions and use from several threads; its header comment lists every check. It is built here
with the system C compiler (-Wall -Wextra -Werror), and run on each plugin of the build — FFmpeg,
dav1d, Opus, Vorbis and SwiftAudio (written in Swift) — for each codec we give it a stream of:
packets extracted by make_packets.py (ffprobe -show_packets -show_data) from shared or generated
files.

The demuxer factory (plugin ABI 2.4) has its own harness, demuxer_harness.c, run over the FFmpeg
plugin on the files of the breadth corpus only libavformat reads (its packet count is ffprobe's),
and over the guide's MKDEMO demuxer (Tests/plugin_harness/mkdemo.c, docs/writing-a-plugin.md) on a
file of make_mkdemo.py (its packet count is the generator's).
The muxer factory (2.5) has muxer_harness.c, writing what the plugin's demuxer reads from those
files into AVI and NUT; ffprobe reads back the packets it reads from the source.

Oracle: the ABI header's rules, which the harness checks (exit 0, no FAIL line), and its own
reference decode of the same stream (each decode under the other conditions must give the same
frames, samples and bytes).
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

import oracle_lib as lib

HARNESS_DIR = lib.REPO / "Tests" / "plugin_harness"

GENERATED = {  # name -> ffmpeg output arguments (after a lavfi input)
    "h264.mp4": ["-f", "lavfi", "-i", "testsrc=size=96x64:rate=25", "-t", "1", "-c:v", "libx264", "-bf", "2",
                 "-pix_fmt", "yuv420p"],
    "vorbis.mp4": ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", "1", "-ac", "2",
                   "-c:a", "libvorbis", "-strict", "experimental"],
    "alaw.wav": ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000", "-t", "0.77", "-ac", "2",
                 "-c:a", "pcm_alaw"],
    "mulaw.mov": ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000", "-t", "0.77", "-c:a", "pcm_mulaw"],
    "ima_qt.mov": ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=22050", "-t", "0.77", "-ac", "2",
                   "-c:a", "adpcm_ima_qt"],
    "ima_wav.wav": ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=22050", "-t", "0.77", "-ac", "2",
                    "-c:a", "adpcm_ima_wav"],
}

# (plugin file stem, codec, audio|video, media: "shared:NAME" or "gen:NAME")
RUNS = [
    ("FFmpeg", "h264", "video", "gen:h264.mp4"),
    ("FFmpeg", "vorbis", "audio", "gen:vorbis.mp4"),
    ("Dav1d", "av1", "video", "shared:mp4_av1_av1c_1s_tiny.mp4"),
    ("Opus", "opus", "audio", "shared:mp4_opus_progressive_elst_preskip_1p5s.mp4"),
    ("Vorbis", "vorbis", "audio", "gen:vorbis.mp4"),
    ("SwiftAudio", "pcm_alaw", "audio", "gen:alaw.wav"),
    ("SwiftAudio", "pcm_mulaw", "audio", "gen:mulaw.mov"),
    ("SwiftAudio", "adpcm_ima_qt", "audio", "gen:ima_qt.mov"),
    ("SwiftAudio", "adpcm_ima_wav", "audio", "gen:ima_wav.wav"),
]


@pytest.fixture(scope="module")
def harness(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("plugin-harness") / "plugin_harness"
    cmd = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I", lib.REPO / "Include",
           HARNESS_DIR / "plugin_harness.c", "-ldl", "-lpthread", "-o", out]
    proc = lib.run(cmd)
    assert proc.returncode == 0, f"`{lib.shell_line(cmd)}` failed:\n{lib.tail(proc.stderr)}"
    return out


@pytest.fixture(scope="module")
def packets(tmp_path_factory, request):
    """media spec + a|v -> a packet file, made once per module."""
    folder = tmp_path_factory.mktemp("plugin-harness-media")
    made: dict[tuple[str, str], Path] = {}

    def make(spec: str, kind: str) -> Path:
        key = (spec, kind)
        if key in made:
            return made[key]
        where, name = spec.split(":", 1)
        if where == "shared":
            media = request.getfixturevalue("shared_media") / name
            if not media.is_file():   # a user's older copy of ../shared; under CI the corpus must be whole
                msg = f"{name} is not in the shared media"
                if os.environ.get("CI") == "true":
                    pytest.fail(msg + " (CI=true: failing instead of skipping)", pytrace=False)
                pytest.skip(msg)
        else:
            media = folder / name
            cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *GENERATED[name], media]
            lib.oracle_ok(lib.run(cmd), cmd)
        out = folder / f"{name}.{kind}.pk"
        cmd = ["python3", HARNESS_DIR / "make_packets.py", media, kind, out]
        proc = lib.run(cmd)
        assert proc.returncode == 0, f"`{lib.shell_line(cmd)}` failed:\n{lib.tail(proc.stderr)}"
        made[key] = out
        return out

    return make


@pytest.mark.parametrize("plugin,codec,kind,media", RUNS, ids=[f"{p}-{c}" for p, c, _, _ in RUNS])
def test_plugin_passes_the_harness(plugin, codec, kind, media, harness, packets, mk_bin):
    """`plugin_harness libMediaKitPlugin<P>.so CODEC audio|video PACKETS`: exit 0, no FAIL line,
    and the plugin decoded frames (the reference decode is not empty)."""
    so = mk_bin / f"libMediaKitPlugin{plugin}.so"
    if not so.is_file():
        pytest.fail(f"{so.name} not found in {mk_bin}; run `make build`", pytrace=False)
    pk = packets(media, kind[0])
    cmd = [harness, so, codec, kind, pk]
    proc = lib.run(cmd)
    out, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    fails = [l for l in err.splitlines() if l.startswith("FAIL")]
    assert proc.returncode == 0 and not fails, (
        f"`{lib.shell_line(cmd)}` exit {proc.returncode}:\n" + "\n".join(fails[:20]) + "\n" + lib.tail(err))
    assert "backend " in out and "reference: frames 0," not in out, out


# Plugin ABI 2.4: the FFmpeg plugin's demuxer factory (libavformat) over files only it reads.
DEMUXER_RUNS = ["avi_meta-pytor_133ba9_testsrc2_mpeg4.avi", "mpc_Borewit_539382_apev2.sv7.mpc",
                "vtt_shaka-proj_034a2c_chapters.vtt"]


@pytest.fixture(scope="module")
def demuxer_harness(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demuxer-harness") / "demuxer_harness"
    cmd = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I", lib.REPO / "Include",
           HARNESS_DIR / "demuxer_harness.c", "-ldl", "-lpthread", "-o", out]
    proc = lib.run(cmd)
    assert proc.returncode == 0, f"`{lib.shell_line(cmd)}` failed:\n{lib.tail(proc.stderr)}"
    return out


@pytest.mark.parametrize("name", DEMUXER_RUNS)
def test_ffmpeg_demuxer_factory_passes_the_harness(name, demuxer_harness, shared_media, mk_bin):
    """`demuxer_harness libMediaKitPluginFFmpeg.so FILE`: exit 0, no FAIL line (arguments, EOF,
    struct_size growth, seek, a pipe), and as many packets as ffprobe lists."""
    path = shared_media / "breadth" / name
    cmd = [demuxer_harness, mk_bin / "libMediaKitPluginFFmpeg.so", path]
    proc = lib.run(cmd)
    out = proc.stdout.decode("utf-8", "replace")
    fails = [l for l in out.splitlines() if l.startswith("FAIL")]
    assert proc.returncode == 0 and not fails, f"`{lib.shell_line(cmd)}` exit {proc.returncode}:\n{out}{lib.tail(proc.stderr)}"
    ref_cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=size", "-of", "csv=p=0", path]
    ref = lib.run(ref_cmd)
    lib.oracle_ok(ref, ref_cmd)
    count = len([l for l in ref.stdout.decode().splitlines() if l.strip()])
    assert f" packets {count} " in out, (out, count)


def test_ffmpeg_demuxer_factory_passes_the_harness_with_attachments(demuxer_harness, shared_media, mk_bin, tmp_path):
    """The harness over a Matroska file with an attached file and an attached picture (plugin ABI
    2.5: tags, attachment bytes, no packets of an attachment), read by the FFmpeg plugin; its
    packet count is ffprobe's."""
    cover = lib.first_attached_picture(shared_media / "breadth" / "mpc_Borewit_539382_apev2.sv7.mpc")
    assert cover
    (tmp_path / "cover.jpg").write_bytes(cover)
    src = tmp_path / "attachments.mka"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=d=1", "-c:a", "libopus",
           "-attach", shared_media / "breadth" / "vtt_shaka-proj_034a2c_chapters.vtt", "-metadata:s:t:0", "mimetype=text/vtt",
           "-attach", tmp_path / "cover.jpg", "-metadata:s:t:1", "mimetype=image/jpeg", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    cmd = [demuxer_harness, mk_bin / "libMediaKitPluginFFmpeg.so", src]
    proc = lib.run(cmd)
    out = proc.stdout.decode("utf-8", "replace")
    fails = [l for l in out.splitlines() if l.startswith("FAIL")]
    assert proc.returncode == 0 and not fails, f"`{lib.shell_line(cmd)}` exit {proc.returncode}:\n{out}{lib.tail(proc.stderr)}"
    ref_cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=size", "-of", "csv=p=0", src]
    ref = lib.run(ref_cmd)
    lib.oracle_ok(ref, ref_cmd)
    count = len([l for l in ref.stdout.decode().splitlines() if l.strip()])
    assert f" tracks 3 packets {count} " in out, (out, count)


# Plugin ABI 2.5: the FFmpeg plugin's muxer factory (libavformat), writing the tracks its demuxer
# reads from a breadth file only libavformat reads, in formats whose output is deterministic (the
# harness compares two threads' bytes with one instance's).
MUXER_RUNS = [("avi_meta-pytor_133ba9_testsrc2_mpeg4.avi", "avi"), ("avi_meta-pytor_133ba9_testsrc2_mpeg4.avi", "nut"),
              ("vtt_shaka-proj_034a2c_chapters.vtt", "webvtt")]


@pytest.fixture(scope="module")
def muxer_harness(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("muxer-harness") / "muxer_harness"
    cmd = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-I", lib.REPO / "Include",
           HARNESS_DIR / "muxer_harness.c", "-ldl", "-lpthread", "-o", out]
    proc = lib.run(cmd)
    assert proc.returncode == 0, f"`{lib.shell_line(cmd)}` failed:\n{lib.tail(proc.stderr)}"
    return out


@pytest.mark.parametrize("name,fmt", MUXER_RUNS, ids=[f"{f}-{n.split('_')[0]}" for n, f in MUXER_RUNS])
def test_ffmpeg_muxer_factory_passes_the_harness(name, fmt, muxer_harness, shared_media, mk_bin, tmp_path):
    """`muxer_harness libMediaKitPluginFFmpeg.so FILE FORMAT OUT`: exit 0, no FAIL line (arguments,
    order of calls, struct_size growth, cancel, a pipe, threads), and both outputs (seekable and
    pipe) hold, as ffprobe reads them, the packets ffprobe reads from FILE (sizes, in order per
    stream)."""
    path = shared_media / "breadth" / name
    prefix = tmp_path / "out"
    cmd = [muxer_harness, mk_bin / "libMediaKitPluginFFmpeg.so", path, fmt, prefix]
    proc = lib.run(cmd)
    out = proc.stdout.decode("utf-8", "replace")
    fails = [l for l in out.splitlines() if l.startswith("FAIL")]
    assert proc.returncode == 0 and not fails, f"`{lib.shell_line(cmd)}` exit {proc.returncode}:\n{out}{lib.tail(proc.stderr)}"

    def sizes(file: Path) -> list[str]:
        ref_cmd = ["ffprobe", "-v", "error", "-f", fmt, "-show_entries", "packet=stream_index,size", "-of", "csv=p=0", file]
        ref = lib.run(ref_cmd)
        lib.oracle_ok(ref, ref_cmd)
        lines = [l for l in ref.stdout.decode().splitlines() if l.strip()]
        return sorted(lines, key=lambda l: int(l.split(",")[0]))   # stable: per stream, in order

    source_cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,size", "-of", "csv=p=0", path]
    source = lib.run(source_cmd)
    lib.oracle_ok(source, source_cmd)
    expected = sorted([l for l in source.stdout.decode().splitlines() if l.strip()], key=lambda l: int(l.split(",")[0]))
    for kind in ("seek", "pipe"):
        assert sizes(Path(f"{prefix}.{kind}")) == expected, kind


def test_mkdemo_demuxer_passes_the_harness(demuxer_harness, tmp_path):
    """`demuxer_harness libmkdemo.so demo.mkdemo` (the guide's C container plugin, built as the
    guide builds it): exit 0, no FAIL line, a seek to the middle done, and the generator's packet
    count (one per 1024 sample frames of its PCM, plus its cues)."""
    plugin = tmp_path / "libmkdemo.so"
    cmd = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-O2", "-fPIC", "-shared", "-fvisibility=hidden",
           "-I", lib.REPO / "Include", "-o", plugin, HARNESS_DIR / "mkdemo.c"]
    proc = lib.run(cmd)
    assert proc.returncode == 0, f"`{lib.shell_line(cmd)}` failed:\n{lib.tail(proc.stderr)}"
    demo, pcm = tmp_path / "demo.mkdemo", tmp_path / "demo.pcm"
    proc = lib.run(["python3", HARNESS_DIR / "make_mkdemo.py", demo, pcm])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    cmd = [demuxer_harness, plugin, demo]
    proc = lib.run(cmd)
    out = proc.stdout.decode("utf-8", "replace")
    fails = [l for l in out.splitlines() if l.startswith("FAIL")]
    assert proc.returncode == 0 and not fails, f"`{lib.shell_line(cmd)}` exit {proc.returncode}:\n{out}{lib.tail(proc.stderr)}"
    spec = importlib.util.spec_from_file_location("make_mkdemo", HARNESS_DIR / "make_mkdemo.py")
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    frames = pcm.stat().st_size // (2 * generator.CHANNELS)
    cues = len(generator.CUES)
    assert f" tracks 2 packets {-(-frames // 1024) + cues} " in out, out
    assert out.rstrip().endswith("seek to the middle"), out
