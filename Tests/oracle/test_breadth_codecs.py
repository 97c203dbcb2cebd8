"""Every decoder of the installed libavcodec through the FFmpeg plugin, and the breadth files
whose codecs came with it (issue 31 item 3): Ogg Theora and Speex, AC-3 in Matroska.

Oracles:
- the plugin's codec list: `ffmpeg -decoders` (every audio and video codec with a decoder that
  is not experimental is offered by the FFmpeg plugin, under the codec's name), and the
  dedicated plugins (dav1d, opus, vorbis, swiftaudio) keep their priority above it;
- packets (Ogg, whose Speex timing is new): `ffprobe -show_entries packet=...`
  (lib.expected_packets), every line equal;
- decoding: `ffmpeg -i FILE -map 0:a:0 -f s16le` and `-map 0:v:0 -fps_mode passthrough
  -f rawvideo -pix_fmt yuv420p`, byte for byte (the same libavcodec decoders, deterministic),
  with `mk-decode --trim ffmpeg` (ffmpeg 5.1 keeps the whole last frame where the container
  gives it a shorter duration: Speex's last packet).
The 3GP (AMR, H.263), raw AMR and WAV (GSM, ADPCM, a-law ...) files of the breadth folder are
checked the same way by test_3gp.py, test_raw_audio.py and test_wav.py.
"""
from __future__ import annotations

import os
import re
import sys

import pytest

import oracle_lib as lib

BREADTH = lib.SHARED_MEDIA / "breadth"
GLOBS = ("ogv_*.ogv", "spx_*.spx", "mkv_androidx_*.mkv")


def _names() -> list[str]:
    """The files of GLOBS whose MANIFEST.tsv ffprobe column lists an audio or video stream."""
    manifest = BREADTH / "MANIFEST.tsv"
    if not manifest.is_file():
        return []
    rows = dict(line.split("\t")[0:6:5] for line in manifest.read_text().splitlines()[1:] if line.count("\t") >= 5)
    return sorted({p.name for g in GLOBS for p in BREADTH.glob(g)
                   if re.search(r"codec_type=(audio|video)", rows.get(p.name, ""))})


NAMES = _names()
PARAMS = [lib.file_param(f"shared:breadth/{n}", n) for n in NAMES] or [pytest.param("shared:breadth/<missing>", id="shared-media-missing")]
OGG = [p for p in PARAMS if not str(p.values[0]).endswith(".mkv")]


def _ffmpeg_codecs() -> set[str]:
    """Audio and video codec names with a decoder that is not experimental, from `ffmpeg -decoders`."""
    proc = lib.run(["ffmpeg", "-hide_banner", "-decoders"])
    lib.oracle_ok(proc, ["ffmpeg", "-decoders"])
    codecs: dict[str, bool] = {}
    listing = proc.stdout.decode()
    assert " ------" in listing, "`ffmpeg -decoders` has no listing after its legend"
    for line in listing.split(" ------", 1)[1].splitlines():
        m = re.match(r"^ ([VAS])([F.])([S.])([X.])([B.])([D.]) (\S+)\s+(.*)$", line)
        if not m or m.group(1) == "S":
            continue
        named = re.search(r"\(codec (\S+)\)$", m.group(8))
        codec = named.group(1) if named else m.group(7)
        codecs[codec] = codecs.get(codec, False) or m.group(4) != "X"
    return {c for c, usable in codecs.items() if usable}


def _plugin_codecs(mk_probe) -> dict[str, dict[str, int]]:
    """`mk-probe --plugins`: plugin name -> {codec: priority}."""
    proc = lib.run([mk_probe, "--plugins"])
    lib.check_ok(proc, [mk_probe, "--plugins"])
    plugins: dict[str, dict[str, int]] = {}
    name = ""
    for line in proc.stdout.decode().splitlines():
        if line and not line.startswith(" "):
            name = line.split()[0]
        elif line.strip().startswith("codecs:"):
            plugins[name] = {m.group(1): int(m.group(2)) for m in re.finditer(r"(\S+) \((?:audio|video), priority (-?\d+)\)", line)}
    return plugins


def test_ffmpeg_plugin_offers_every_decoder(mk_probe):
    plugins = _plugin_codecs(mk_probe)
    ours = plugins.get("ffmpeg", {})
    want = _ffmpeg_codecs()
    missing = sorted(want - set(ours))
    assert not missing, f"{len(missing)} of ffmpeg's {len(want)} decodable codecs are not offered: {missing[:40]}"
    extra = sorted(set(ours) - want)
    assert not extra, f"the plugin offers codecs `ffmpeg -decoders` does not list: {extra}"
    for plugin, codecs in plugins.items():
        if plugin == "ffmpeg":
            continue
        for codec, priority in codecs.items():
            assert priority > ours.get(codec, -1), f"{plugin}'s {codec} (priority {priority}) no longer wins over ffmpeg's ({ours.get(codec)})"


PY_DECODERS = r"""
import mediakit
for b in mediakit.backends():
    if b.kind == "decoder":
        print(b.plugin, b.codec, b.media_type, b.priority)
"""


def test_python_and_c_list_the_same_decoders(mk_probe, mk_bin):
    """`mediakit.backends()` (Python over the C API's mk_backend_*) lists the decoders
    `mk-probe --plugins` (Swift) lists, with the same priorities."""
    env = dict(os.environ, MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"), PYTHONPATH=str(lib.REPO / "Bindings" / "python"))
    proc = lib.run([sys.executable, "-c", PY_DECODERS], env=env)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    listed: dict[str, dict[str, int]] = {}
    for line in proc.stdout.decode().splitlines():
        plugin, codec, _, priority = line.split()
        listed.setdefault(plugin, {})[codec] = int(priority)
    assert listed == _plugin_codecs(mk_probe)
    assert len(listed["ffmpeg"]) > 400


@pytest.mark.parametrize("param", OGG or [pytest.param("shared:breadth/<missing>", id="shared-media-missing")])
def test_ogg_packets_like_ffprobe(param, mk_probe, tmp_path):
    path = lib.media_param_file(param, tmp_path, None)
    proc = lib.run([mk_probe, "--packets", path])
    lib.check_ok(proc, [mk_probe, "--packets", path])
    ours = [l for l in proc.stdout.decode().splitlines() if l.strip()]
    ref = lib.expected_packets(path)
    assert ref and ours == ref, lib.diff_lines(ours, ref, "mk-probe", "ffprobe")


@pytest.mark.parametrize("param", PARAMS)
def test_decode_like_ffmpeg(param, mk_decode, tmp_path):
    lib.check_decode_like_ffmpeg(lib.media_param_file(param, tmp_path, None), mk_decode, tmp_path)
