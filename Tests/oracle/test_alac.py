"""ALAC (Apple Lossless) in M4A and Matroska, decoded through the FFmpeg plugin.

Inputs: WAV files made from lavfi's sine (16-bit stereo 44.1 kHz, 24-bit stereo 48 kHz,
16-bit 5.1), encoded by `ffmpeg -c:a alac` into .m4a and .mkv.

Oracles (ORACLES.md):
- lossless: mk-decode's PCM equals the WAV it was encoded from, byte for byte
  (`ffmpeg -i SRC.wav -f s16le` / `-f s32le`: 24-bit samples in the top bits of 32);
- and equals ffmpeg's decode of the ALAC file in the same layout;
- packets: ffprobe's (lib.expected_packets: pts, dts, duration, size, offset, key flag);
- encoding (`mk-transcode --codec alac`, the FFmpeg plugin's "alac" encoder into MP4 / M4A and
  Matroska): ffprobe's codec, rate, channels and bit depth, and ffmpeg's decode equals the source;
- remux M4A <-> MKV: framemd5 (size and MD5 of every packet) equal.
"""
from __future__ import annotations

import pytest

import oracle_lib as lib

# name -> (ffmpeg arguments making the WAV, PCM layout to compare in)
SOURCES = {
    "s16_stereo_44k": (["-ac", "2", "-ar", "44100", "-c:a", "pcm_s16le"], "s16"),
    "s24_stereo_48k": (["-ac", "2", "-ar", "48000", "-c:a", "pcm_s24le"], "s32"),
    "s16_51_48k": (["-ac", "6", "-ar", "48000", "-c:a", "pcm_s16le"], "s16"),
}
CASES = [pytest.param(name, ext, id=f"{name}.{ext}") for name in SOURCES for ext in ("m4a", "mkv")]


def _make(tmp_path_factory, name: str, ext: str):
    folder = tmp_path_factory.getbasetemp() / "alac"
    folder.mkdir(exist_ok=True)
    wav, out = folder / f"{name}.wav", folder / f"{name}.{ext}"
    if not wav.exists():
        # Two sines and noise: the predictor has work to do; -bitexact for stable files.
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i",
               "aevalsrc=0.4*sin(2*PI*440*t)+0.2*sin(2*PI*3001*t)+0.05*(random(0)-0.5):d=2:s=48000",
               *SOURCES[name][0], "-fflags", "+bitexact", wav]
        lib.oracle_ok(lib.run(cmd), cmd)
    if not out.exists():
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", wav, "-c:a", "alac", out]
        lib.oracle_ok(lib.run(cmd), cmd)
    return wav, out


@pytest.mark.parametrize("name,ext", CASES)
def test_decode_is_lossless_and_like_ffmpeg(name, ext, tmp_path_factory, tmp_path, mk_decode):
    wav, path = _make(tmp_path_factory, name, ext)
    layout = SOURCES[name][1]
    out = tmp_path / "ours.pcm"
    cmd = [mk_decode, path, "--audio-out", out, "--sample-format", layout, "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    got = out.read_bytes()
    source = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", wav, "-f", f"{layout}le", "-"]).stdout
    ffmpeg = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a:0", "-f", f"{layout}le", "-"]).stdout
    assert source and ffmpeg == source, "oracle: ffmpeg's own ALAC round trip is not lossless"
    assert got == source, f"{path.name}: {len(got)} bytes, source {len(source)}: " + str(lib.compare_bytes_exact(got, source, layout))


@pytest.mark.parametrize("name,ext", CASES)
def test_packets_like_ffprobe(name, ext, tmp_path_factory, mk_probe):
    _, path = _make(tmp_path_factory, name, ext)
    proc = lib.run([mk_probe, "--packets", path])
    lib.check_ok(proc, [mk_probe, "--packets", path])
    ours = [l for l in proc.stdout.decode().splitlines() if l.strip()]
    ref = lib.expected_packets(path)
    assert ours == ref, lib.diff_lines(ours, ref, "mk-probe", "ffprobe")


@pytest.mark.parametrize("name,ext", CASES)
def test_transcode_to_alac_is_lossless(name, ext, tmp_path_factory, tmp_path, mk_transcode):
    """`mk-transcode SRC.wav OUT --codec alac` (the FFmpeg plugin's "alac" encoder): ffprobe reads
    ALAC at the source's rate, channels and bit depth, and ffmpeg's decode of it is the source
    PCM byte for byte (ORACLES.md "Encoders": a lossless round trip is bit-exact)."""
    wav, _ = _make(tmp_path_factory, name, ext)
    out = tmp_path / f"out.{ext}"
    cmd = [mk_transcode, wav, out, "--codec", "alac"]
    lib.check_ok(lib.run(cmd), cmd)
    st = lib.ffprobe_json(out)["streams"][0]
    src = lib.ffprobe_json(wav)["streams"][0]
    assert (st["codec_name"], st["sample_rate"], st["channels"]) == ("alac", src["sample_rate"], src["channels"])
    assert int(st["bits_per_raw_sample"]) == int(src["bits_per_sample"])
    layout = SOURCES[name][1]
    decoded = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", out, "-f", f"{layout}le", "-"]).stdout
    source = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", wav, "-f", f"{layout}le", "-"]).stdout
    assert decoded == source, f"{out.name}: " + str(lib.compare_bytes_exact(decoded, source, layout))


@pytest.mark.parametrize("name,ext", CASES)
def test_remux_keeps_alac_packets(name, ext, tmp_path_factory, tmp_path, mk_remux):
    """mk-remux M4A -> MKV and MKV -> MP4: every packet's size and MD5 as in the input
    (`ffmpeg -c copy -f framemd5` of both)."""
    _, path = _make(tmp_path_factory, name, ext)
    out = tmp_path / ("out.mkv" if ext == "m4a" else "out.mp4")
    cmd = [mk_remux, path, out]
    lib.check_ok(lib.run(cmd), cmd)

    def md5s(p):
        text = lib.run(["ffmpeg", "-v", "error", "-nostdin", "-i", p, "-map", "0", "-c", "copy", "-f", "framemd5", "-"]).stdout.decode()
        return [",".join(f.strip() for f in l.split(",")[4:6]) for l in text.splitlines() if l and not l.startswith("#")]
    got, want = md5s(out), md5s(path)
    assert got and got == want, lib.diff_lines(got, want, out.name, path.name)
