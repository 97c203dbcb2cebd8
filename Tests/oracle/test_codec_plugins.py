"""The dav1d, Opus and Vorbis plugins against ffmpeg running the same libraries.

Inputs: the AV1, Opus and Vorbis files of ../shared/media (MP4 now; IVF, Ogg and
fragmented MP4 files as soon as `mk-probe` can open them, skipped with the reason until
then) and short files made here with ffmpeg's lavfi generators and its libsvtav1 (or
libaom-av1), libopus and libvorbis encoders (8-bit and 10-bit AV1; stereo and 5.1
audio, each channel its own tone, so a channel order mistake shows).

Oracles (ORACLES.md, "Decoders: bit-exact output", same decoder library on both sides):
  AV1     ffmpeg -v error -c:v libdav1d -i FILE -map 0:v:0 -fps_mode passthrough
            -f rawvideo -pix_fmt yuv420p -          (yuv420p10le for 10-bit sources)
          against `mk-decode --backend dav1d --pixel-format i420|yuv420p10le`:
          byte-identical, edit list applied on both sides.
  Opus    ffmpeg -v error [-ignore_editlist 1] -flags2 +skip_manual -c:a libopus -i FILE
            -map 0:a:0 -f s16le -
  Vorbis  the same with -c:a libvorbis
          against `mk-decode --no-trim --backend opus|vorbis`: same length, |diff| <= 1 per
          sample (float-to-s16 rounding may differ by one step; in practice they are equal).
  These compare the RAW decoder output, independent of trimming: the plugins output every
  decoded sample and the host trims (mediakit_plugin.h, "Trimming"). On the ffmpeg side,
  -ignore_editlist 1 (MP4 inputs only: it is an option of the mov demuxer) keeps the
  samples the edit list would cut, and -flags2 +skip_manual (AV_CODEC_FLAG2_SKIP_MANUAL)
  stops libavcodec from dropping what the decoder or demuxer asks to skip: the Opus
  pre-skip (libopus's wrapper sets it as the decoder's skip_samples at open) and the
  start/end trims the Ogg demuxer attaches as packet side data. With the flag, libavcodec
  only exports those amounts as frame side data, which the ffmpeg tool ignores; without it
  ffmpeg's output would lack the pre-skip (312 samples at 48 kHz for most files) while the
  plugins keep it.
  The FFmpeg plugin follows the same rule for Opus (it opens its Opus decoder with
  SKIP_MANUAL): its raw output is checked against ffmpeg's native `-c:a opus` the same way.
Plugin facts: `nm -D --defined-only` (each plugin exports mediakit_plugin_entry only),
`ldd` (each plugin links its library, the core links none of them) and
`mk-probe --plugins` (priorities: av1 is decoded by dav1d at 200 unless asked otherwise).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

PLUGINS = {  # file -> (plugin name, library ldd must show)
    "libMediaKitPluginDav1d.so": ("dav1d", "libdav1d"),
    "libMediaKitPluginOpus.so": ("opus", "libopus"),
    "libMediaKitPluginVorbis.so": ("vorbis", "libvorbis"),
}
MP4_EXTS = {".mp4", ".mov", ".m4a", ".m4v"}

SHARED_AV1 = [
    "mp4_av1_av1c_1s_tiny.mp4",
    "mp4_av1_av01_64x64_progressive.mp4",
    "mp4_av1_aac_1080x720_progressive_audio_empty_edit.mp4",
    "mp4_av1_10bit_hdr10_aac_720x1280.mp4",
    "ivf_av1_320x180_1s.ivf",
]
SHARED_AUDIO = [
    "mp4_opus_progressive_elst_preskip_1p5s.mp4",
    "fmp4_opus_dOps_single_file.mp4",
    "ogg_opus_stereo_tiny_155b.opus",
    "ogg_vorbis_48k_stereo_bear.ogg",
    "ogg_vorbis_48k_stereo_granule_gap.ogg",
    "ogg_vorbis_data_after_eos.ogg",
    "ogg_vorbis_mono_metadata_block_picture.ogg",
    "ogg_vorbis_stereo_1s.ogg",
    "ogg_vorbis_stereo_eos_edge.ogg",
]


# --------------------------------------------------------------------------- generated media

def _av1_encoder() -> list | None:
    out = subprocess.run(["ffmpeg", "-hide_banner", "-encoders"], capture_output=True,
                         text=True).stdout
    if re.search(r"\slibsvtav1\s", out):
        return ["-c:v", "libsvtav1", "-preset", "12", "-g", "25"]
    if re.search(r"\slibaom-av1\s", out):
        return ["-c:v", "libaom-av1", "-cpu-used", "8", "-g", "25"]
    return None


AV1_ENCODER = _av1_encoder()
TONES = [440, 660, 880, 1100, 1320, 1540]


def _tones(n: int, rate: int) -> list:
    """lavfi inputs and the filter that joins n tones (one per channel) into one stream."""
    args = []
    for f in TONES[:n]:
        args += ["-f", "lavfi", "-i", f"sine=frequency={f}:sample_rate={rate}"]
    layout = {1: "mono", 2: "stereo", 6: "5.1"}[n]
    joined = "".join(f"[{i}:a]" for i in range(n))
    return args + ["-filter_complex", f"{joined}join=inputs={n}:channel_layout={layout}[a]",
                   "-map", "[a]"]


GENERATED = {  # name -> ffmpeg arguments after the inputs (the output name is appended)
    "av1_8bit_320x240.mp4": lambda: ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                     "-t", "2", *AV1_ENCODER, "-pix_fmt", "yuv420p"],
    "av1_10bit_320x240.mp4": lambda: ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                      "-t", "2", *AV1_ENCODER, "-pix_fmt", "yuv420p10le"],
    "av1_8bit_320x240.ivf": lambda: ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                     "-t", "2", *AV1_ENCODER, "-pix_fmt", "yuv420p"],
    "av1_10bit_320x240.ivf": lambda: ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
                                      "-t", "2", *AV1_ENCODER, "-pix_fmt", "yuv420p10le"],
    "opus_stereo.mp4": lambda: [*_tones(2, 48000), "-t", "2", "-c:a", "libopus", "-b:a", "96k"],
    "opus_5.1.mp4": lambda: [*_tones(6, 48000), "-t", "2", "-c:a", "libopus", "-b:a", "256k"],
    "vorbis_stereo.mp4": lambda: [*_tones(2, 44100), "-t", "2", "-c:a", "libvorbis",
                                  "-strict", "experimental"],
    "vorbis_5.1.mp4": lambda: [*_tones(6, 44100), "-t", "2", "-c:a", "libvorbis",
                               "-strict", "experimental"],
}


@pytest.fixture(scope="session")
def codec_media(tmp_path_factory):
    folder = tmp_path_factory.mktemp("codec-media")

    @functools.lru_cache(maxsize=None)
    def make(name: str) -> Path:
        if name.startswith("av1_") and AV1_ENCODER is None:
            pytest.skip("this ffmpeg has no AV1 encoder (libsvtav1 or libaom-av1): "
                        "no generated AV1 input")
        out = folder / name
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", *GENERATED[name](),
               "-fflags", "+bitexact", "-map_metadata", "-1", out]
        proc = lib.run(cmd, env=dict(os.environ, SVT_LOG="1"))  # SVT-AV1: errors only
        if proc.returncode != 0 or not out.is_file():
            pytest.fail(f"could not generate {name}: `{lib.shell_line(cmd)}`\n"
                        f"{lib.tail(proc.stderr)}")
        return out
    return make


def _media(spec: str, codec_media, request) -> Path:
    kind, _, name = spec.partition(":")
    if kind == "gen":
        return codec_media(name)
    folder = request.getfixturevalue("shared_media")
    path = folder / name
    if not path.is_file():
        pytest.fail(f"{path} is listed in this test but missing from ../shared/media")
    return path


def _require_demuxer(mk_probe, media: Path) -> None:
    """Fails, with mk-probe's message, when our demuxers cannot open the file or list its
    packets (MP4, fragmented MP4, Ogg and IVF are all in this build)."""
    proc = lib.run([mk_probe, media])
    if proc.returncode != 0:
        pytest.fail(f"{media.name}: mk-probe cannot open it: {lib.tail(proc.stderr, 300)}", pytrace=False)
    packets = lib.run([mk_probe, "--packets", media])
    if packets.returncode != 0 or not packets.stdout.strip():
        pytest.fail(f"{media.name}: mk-probe --packets lists no packet: {lib.tail(packets.stderr, 300)}",
                    pytrace=False)


def _first_stream(media: Path, kind: str) -> dict:
    info = lib.ffprobe_json(media, ignore_editlist=False)
    s = next((s for s in lib.track_streams(info) if s.get("codec_type") == kind), None)
    if s is None:
        pytest.fail(f"{media.name}: ffprobe finds no {kind} stream", pytrace=False)
    return s


# --------------------------------------------------------------------------- AV1

AV1_MEDIA = ([pytest.param(f"shared:{n}", id=n) for n in SHARED_AV1]
             + [pytest.param(f"gen:{n}", id=f"gen:{n}")
                for n in ("av1_8bit_320x240.mp4", "av1_10bit_320x240.mp4",
                          "av1_8bit_320x240.ivf", "av1_10bit_320x240.ivf")])
AV1_LAYOUTS = {"yuv420p": ("i420", "yuv420p", 1), "yuv420p10le": ("yuv420p10le", "yuv420p10le", 2)}


def _compare_streams(ours: Path, ref_cmd: list, frame_size: int) -> str | None:
    """Byte comparison of our file with ffmpeg's stdout, frame by frame, in bounded memory."""
    first, n_ours, n_ref, index = None, 0, 0, 0
    with open(ours, "rb") as a, lib.ffmpeg_stream(ref_cmd) as ref:
        while True:
            x = lib.read_exact(a, frame_size)
            y = lib.read_exact(ref, frame_size)
            if not x and not y:
                break
            n_ours += len(x) == frame_size
            n_ref += len(y) == frame_size
            if first is None and x != y:
                i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), None)
                first = (f"frame {index}: " + (f"first differing byte {i} of {frame_size}"
                                               if i is not None else "one stream ends there"))
            index += 1
    if first is None:
        return None
    return f"ours {n_ours} frames, ffmpeg {n_ref} frames ({frame_size} bytes each); first difference in {first}"


def _decode_av1(media, backend, mk_decode, tmp_path) -> tuple[Path, list, list, int]:
    stream = _first_stream(media, "video")
    if stream.get("codec_name") != "av1":
        pytest.fail(f"{media.name}: first video stream is {stream.get('codec_name')}, not av1")
    pix = stream.get("pix_fmt")
    if pix not in AV1_LAYOUTS:
        pytest.skip(f"{media.name}: {pix} pictures; this test compares the decoder's own layouts, "
                    f"yuv420p and yuv420p10le")
    ours_fmt, ref_fmt, bps = AV1_LAYOUTS[pix]
    w, h = int(stream["width"]), int(stream["height"])
    out = tmp_path / f"out.{ours_fmt}"
    cmd = [mk_decode, "-q", media, "--video-out", out, "--pixel-format", ours_fmt]
    if backend:
        cmd += ["--backend", backend]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="mk-decode")
    if not out.is_file():
        pytest.fail(f"`{lib.shell_line(cmd)}` exited 0 but wrote nothing", pytrace=False)
    ref = ["ffmpeg", "-v", "error", "-nostdin", "-c:v", "libdav1d", "-i", media,
           "-map", f"0:{stream['index']}", "-fps_mode", "passthrough",
           "-f", "rawvideo", "-pix_fmt", ref_fmt, "-"]
    size = (w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)) * bps
    return out, cmd, ref, size


@pytest.mark.parametrize("spec", AV1_MEDIA)
def test_av1_dav1d_identical_to_ffmpeg_libdav1d(spec, codec_media, request, mk_probe, mk_decode,
                                                 tmp_path):
    """`mk-decode --backend dav1d` output is byte-identical to `ffmpeg -c:v libdav1d`
    (yuv420p, or yuv420p10le for 10-bit sources), same frame count."""
    media = _media(spec, codec_media, request)
    _require_demuxer(mk_probe, media)
    out, cmd, ref, size = _decode_av1(media, "dav1d", mk_decode, tmp_path)
    diff = _compare_streams(out, ref, size)
    assert diff is None, (f"{media.name}: `{lib.shell_line(cmd)}` differs from "
                          f"`{lib.shell_line(ref)}`: {diff}")


@pytest.mark.parametrize("backend", ["ffmpeg", None], ids=["ffmpeg", "default"])
def test_av1_other_backends_agree(backend, request, mk_decode, tmp_path):
    """The FFmpeg plugin's AV1 backend (--backend ffmpeg, libdav1d inside libavcodec) and the
    default choice give the same bytes as ffmpeg -c:v libdav1d (so as the dav1d plugin)."""
    media = _media("shared:mp4_av1_aac_1080x720_progressive_audio_empty_edit.mp4", None, request)
    out, cmd, ref, size = _decode_av1(media, backend, mk_decode, tmp_path)
    diff = _compare_streams(out, ref, size)
    assert diff is None, f"`{lib.shell_line(cmd)}` differs from `{lib.shell_line(ref)}`: {diff}"


@pytest.mark.parametrize("name", ["mp4_av1_10bit_hdr10_aac_720x1280.mp4", "mp4_av1_av1c_1s_tiny.mp4"])
def test_av1_10bit_to_nv12_across_plugins(name, request, mk_decode, tmp_path):
    """10-bit AV1 pictures from the dav1d plugin, converted to NV12 by the FFmpeg plugin's
    picture converter (one plugin's frames through another's converter), byte-identical to
    `ffmpeg -c:v libdav1d -i IN -map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt nv12 -`."""
    media = _media(f"shared:{name}", None, request)
    stream = _first_stream(media, "video")
    assert stream.get("pix_fmt") == "yuv420p10le", f"{name}: expected a 10-bit source"
    w, h = int(stream["width"]), int(stream["height"])
    if abs(lib.rotation_of(stream)) % 180 == 90:
        w, h = h, w
    out = tmp_path / "out.nv12"
    cmd = [mk_decode, "-q", media, "--video-out", out, "--backend", "dav1d"]
    lib.check_ok(lib.run(cmd), cmd, who="mk-decode")
    ref = ["ffmpeg", "-v", "error", "-nostdin", "-c:v", "libdav1d", "-i", media, "-map", f"0:{stream['index']}",
           "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12", "-"]
    diff = _compare_streams(out, ref, w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2))
    assert diff is None, f"`{lib.shell_line(cmd)}` differs from `{lib.shell_line(ref)}`: {diff}"


def test_dedicated_plugins_win_by_priority(mk_probe):
    """`mk-probe --plugins` lists dav1d/opus/vorbis at priority 200 and, for av1, opus and
    vorbis, the dedicated plugin above ffmpeg (the registry picks the highest)."""
    table = lib.plugin_priorities(mk_probe)
    for codec in ("av1", "opus", "vorbis"):
        owners = table.get(codec, {})
        dedicated = {"av1": "dav1d"}.get(codec, codec)
        assert owners.get(dedicated) == 200, f"{codec}: {dedicated} not at priority 200: {owners}"
        best = max(owners, key=owners.get)
        assert best == dedicated, f"{codec}: the default backend would be {best}: {owners}"
        if "ffmpeg" in owners:
            assert owners["ffmpeg"] < 200, f"{codec}: ffmpeg at {owners['ffmpeg']}"


def test_unknown_backend_name_is_refused(mk_decode, request, tmp_path):
    """--backend with a name no plugin has: a clear error naming the codec, not a crash."""
    media = _media("shared:mp4_av1_av01_64x64_progressive.mp4", None, request)
    cmd = [mk_decode, media, "--video-out", tmp_path / "x.yuv", "--backend", "nosuchbackend"]
    proc = lib.run(cmd)
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode > 0, f"exit {proc.returncode}; stderr: {lib.tail(err)}"
    assert "no decoder for av1" in err and "nosuchbackend" in err, lib.tail(err)


# --------------------------------------------------------------------------- plugin files

@pytest.mark.parametrize("name", sorted(PLUGINS))
def test_plugin_exports_only_the_entry_point(name, mk_bin):
    """Oracle: `nm -D --defined-only` lists mediakit_plugin_entry as the one function, and
    `ldd` shows the codec library the plugin is built on."""
    path = mk_bin / name
    if not path.is_file():
        pytest.fail(f"{name} not found in {mk_bin}; run `make build`", pytrace=False)
    proc = lib.run(["nm", "-D", "--defined-only", path])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    funcs = [l.split()[-1] for l in proc.stdout.decode().splitlines()
             if len(l.split()) == 3 and l.split()[1] in ("T", "W")]
    funcs = [f for f in funcs if not f.startswith("_")]  # _init/_fini
    assert funcs == ["mediakit_plugin_entry"], f"{name} exports {funcs}"
    ldd = lib.run(["ldd", path]).stdout.decode()
    assert PLUGINS[name][1] in ldd, f"{name} does not link {PLUGINS[name][1]}:\n{ldd}"


@pytest.mark.parametrize("tool", ["mk-probe", "mk-decode"])
def test_core_links_no_codec_library(tool, mk_bin):
    """Oracle: `ldd` on our tools lists none of libdav1d, libopus, libvorbis."""
    out = lib.run(["ldd", mk_bin / tool]).stdout.decode()
    bad = [l.strip() for l in out.splitlines() if re.search(r"lib(dav1d|opus|vorbis)", l)]
    assert not bad, f"{tool} links codec libraries: {bad}"


@pytest.mark.parametrize("args,loads", [(["--count"], False), (["--plugins"], True)], ids=["count", "plugins"])
def test_plugins_load_only_when_needed(args, loads, mk_bin, tmp_path):
    """Reading a container needs no codec: `mk-probe --count` must not load a plugin (and with
    it libavcodec and its dozens of libraries), while `mk-probe --plugins` loads them all.
    Oracle: the dynamic loader's own trace (LD_DEBUG=files lists every library it opens)."""
    media = lib.REPO / "Samples" / "media" / "sample.mp4"
    env = dict(os.environ, LD_DEBUG="files", LD_DEBUG_OUTPUT=str(tmp_path / "ld"))
    cmd = [mk_bin / "mk-probe", *args, media]
    lib.check_ok(lib.run(cmd, env=env), cmd)
    trace = "".join(p.read_text(errors="replace") for p in tmp_path.glob("ld*"))
    opened = set(re.findall(r"file=(\S*libMediaKitPlugin\w+\.so)", trace))
    if loads:
        assert len(opened) >= 4, f"`mk-probe --plugins` opened only {sorted(opened)}"
    else:
        assert not opened, f"`mk-probe --count` loaded plugins it does not need: {sorted(opened)}"


# --------------------------------------------------------------------------- Opus and Vorbis

AUDIO_MEDIA = ([pytest.param(f"shared:{n}", id=n) for n in SHARED_AUDIO]
               + [pytest.param(f"gen:{n}", id=f"gen:{n}")
                  for n in ("opus_stereo.mp4", "opus_5.1.mp4", "vorbis_stereo.mp4", "vorbis_5.1.mp4")])
AUDIO_ORACLE = {"opus": "libopus", "vorbis": "libvorbis"}


def raw_audio_oracle(media: Path, stream: dict, decoder: str) -> list:
    cmd = ["ffmpeg", "-v", "error", "-nostdin"]
    if media.suffix.lower() in MP4_EXTS:
        cmd += ["-ignore_editlist", "1"]
    return cmd + ["-flags2", "+skip_manual", "-c:a", decoder, "-i", media,
                  "-map", f"0:{stream['index']}", "-f", "s16le", "-"]


def _check_raw_audio(media, stream, backend, decoder, mk_decode, tmp_path):
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, "-q", media, "--audio-out", out, "--no-trim", "--backend", backend]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="mk-decode")
    ref_cmd = raw_audio_oracle(media, stream, decoder)
    ref = lib.run(ref_cmd)
    lib.oracle_ok(ref, ref_cmd)
    ours = out.read_bytes() if out.is_file() else b""
    assert ref.stdout, f"the oracle decoded nothing: `{lib.shell_line(ref_cmd)}`"
    diff = lib.compare_pcm_s16(ours, ref.stdout, int(stream.get("channels") or 1))
    assert diff is None, (f"{media.name}: `{lib.shell_line(cmd)}` vs "
                          f"`{lib.shell_line(ref_cmd)}`:\n{diff}")


@pytest.mark.parametrize("spec", AUDIO_MEDIA)
def test_audio_raw_output_matches_ffmpeg(spec, codec_media, request, mk_probe, mk_decode, tmp_path):
    """`mk-decode --no-trim --backend opus|vorbis`: every decoded sample, within 1 of
    `ffmpeg [-ignore_editlist 1] -flags2 +skip_manual -c:a libopus|libvorbis` (see the
    module docstring for why this is the raw-output oracle), same sample count and channel
    order (the 5.1 files have one tone per channel)."""
    media = _media(spec, codec_media, request)
    _require_demuxer(mk_probe, media)
    stream = _first_stream(media, "audio")
    codec = stream.get("codec_name")
    if codec not in AUDIO_ORACLE:
        pytest.fail(f"{media.name}: first audio stream is {codec}, not opus/vorbis")
    _check_raw_audio(media, stream, codec, AUDIO_ORACLE[codec], mk_decode, tmp_path)


@pytest.mark.parametrize("spec", ["shared:mp4_opus_progressive_elst_preskip_1p5s.mp4",
                                  "gen:opus_5.1.mp4"])
def test_ffmpeg_backend_keeps_opus_preskip(spec, codec_media, request, mk_decode, tmp_path):
    """The FFmpeg plugin's Opus backend (libavcodec's native decoder) outputs the pre-skip
    too: `mk-decode --no-trim --backend ffmpeg` within 1 of `ffmpeg -ignore_editlist 1
    -flags2 +skip_manual -c:a opus` (same decoder, nothing skipped)."""
    media = _media(spec, codec_media, request)
    stream = _first_stream(media, "audio")
    _check_raw_audio(media, stream, "ffmpeg", "opus", mk_decode, tmp_path)
