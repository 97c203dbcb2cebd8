"""AudioConverter (issue 13) against FFmpeg 5.1's libswresample.

Our side runs `mk-audioconv` (raw interleaved PCM through the Swift AudioConverter) or
`mk-decode --sample-rate/--channels/--sample-format`; the oracle is ffmpeg on the same input:

  sample types   ffmpeg -f FMT -ar R -ac N -i IN -f FMT2 -         (|diff| <= 1 step of FMT2)
                 (for s16 out: -af aformat=s16, the check issue 13 names)
  channels       ffmpeg ... -ch_layout L -i IN -ac 2 / -ch_layout L2  (|diff| <= 1 in s16)
  resampling     ffmpeg ... -af aresample=48000 [and :resampler=soxr]: both measured the same
                 way (SNR of a 1 kHz sine against the exact sine, passband gain to 0.45 of
                 44.1 kHz, rejection of an image and of aliases); the figures are printed and
                 ours must be at least as good as libswresample's default.
  mk-decode      ffmpeg -ignore_editlist 1 -i FILE -ac 2 -f s16le -  on the corpus's 5.1 AAC
                 and 5.1 Opus (|diff| <= 1); WAV headers read back by ffprobe.
"""
from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

np = pytest.importorskip("numpy")

FF_FMT = {"u8": "u8", "s16": "s16le", "s24": "s24le", "s32": "s32le", "f32": "f32le", "f64": "f64le"}
NP_TYPE = {"u8": "u1", "s16": "<i2", "s32": "<i4", "f32": "<f4", "f64": "<f8"}


@pytest.fixture(scope="session")
def mk_audioconv(mk_bin: Path) -> Path:
    path = mk_bin / "mk-audioconv"
    if not path.is_file():
        pytest.fail(f"mk-audioconv not found in {mk_bin}; run `make build` or set MK_BIN", pytrace=False)
    return path


def _ffmpeg(args: list, stdin: bytes | None = None) -> bytes:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", *args]
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, timeout=120)
    lib.oracle_ok(proc, cmd)
    return proc.stdout


def _ours(tool: Path, inp: Path, args: list) -> bytes:
    cmd = [tool, inp, "-", *args]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    return proc.stdout


def _decode(data: bytes, fmt: str) -> "np.ndarray":
    """Samples as int64 (integers, u8 centred) or float64."""
    if fmt == "s24":
        b = np.frombuffer(data[: len(data) // 3 * 3], dtype="u1").reshape(-1, 3).astype(np.int64)
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        return np.where(v >= 1 << 23, v - (1 << 24), v)
    a = np.frombuffer(data, dtype=NP_TYPE[fmt])
    return a.astype(np.float64) if fmt.startswith("f") else a.astype(np.int64)


def _compare(ours: bytes, ref: bytes, fmt: str, what: str, tolerance: float = 1) -> float:
    """Same length and |diff| <= tolerance (in steps of an integer format, absolutely for floats)."""
    a, b = _decode(ours, fmt), _decode(ref, fmt)
    assert len(a) == len(b), f"{what}: ours {len(a)} samples, ffmpeg {len(b)}"
    if len(a) == 0:
        return 0.0
    d = np.abs(a - b)
    worst = float(d.max())
    assert worst <= tolerance, (f"{what}: max |diff| {worst} > {tolerance} at sample {int(d.argmax())}: "
                                f"ours {a[d.argmax()]}, ffmpeg {b[d.argmax()]}")
    return worst


def _samples(fmt: str, frames: int, channels: int, seed: int = 1) -> bytes:
    """Random full-scale samples of `fmt` (floats a little beyond [-1, 1] to exercise clipping,
    and exact half steps of s16 to exercise rounding)."""
    rng = np.random.default_rng(seed)
    n = frames * channels
    if fmt == "u8":
        return rng.integers(0, 256, n, dtype=np.uint8).tobytes()
    if fmt == "s16":
        return rng.integers(-32768, 32768, n, dtype=np.int64).astype("<i2").tobytes()
    if fmt == "s24":
        v = rng.integers(-(1 << 23), 1 << 23, n, dtype=np.int64) & 0xFFFFFF
        return np.stack([v & 0xFF, (v >> 8) & 0xFF, v >> 16], axis=1).astype("u1").tobytes()
    if fmt == "s32":
        return rng.integers(-(1 << 31), 1 << 31, n, dtype=np.int64).astype("<i4").tobytes()
    v = rng.uniform(-1.1, 1.1, n)
    v[: n // 4] = (rng.integers(-40000, 40000, n // 4) + 0.5) / 32768   # ties at s16 steps
    return v.astype(NP_TYPE[fmt]).tobytes()


TYPES = ["u8", "s16", "s24", "s32", "f32", "f64"]


@pytest.mark.parametrize("src,dst", [(a, b) for a in TYPES for b in TYPES if a != b])
def test_sample_type_conversion_like_swresample(src, dst, mk_audioconv, tmp_path):
    """Every pair of sample types, sample for sample, as ffmpeg converts them (f32 -> s16 is
    `-af aformat=s16`); |diff| <= 1 step of the output type (floats: 1e-7)."""
    inp = tmp_path / f"in.{src}"
    inp.write_bytes(_samples(src, 48000, 2))
    ours = _ours(mk_audioconv, inp, ["--in-format", src, "--in-rate", "48000", "--in-channels", "2", "--sample-format", dst])
    extra = ["-af", "aformat=s16"] if dst == "s16" else []
    ref = _ffmpeg(["-f", FF_FMT[src], "-ar", "48000", "-ac", "2", "-i", inp, *extra, "-f", FF_FMT[dst], "-"])
    worst = _compare(ours, ref, dst, f"{src} -> {dst}", 1e-7 if dst.startswith("f") else 1)
    print(f"{src} -> {dst}: max |diff| {worst}")


def _layout_signal(channels: int, frames: int = 48000) -> "np.ndarray":
    """A different sine per channel, at most 0.6 of full scale, plus a little noise."""
    t = np.arange(frames) / 48000
    rng = np.random.default_rng(channels)
    sig = [0.6 * np.sin(2 * math.pi * (220 + 110 * c) * t) * (0.4 + 0.1 * c) + rng.normal(0, 0.02, frames)
           for c in range(channels)]
    return np.stack(sig, axis=1)


MIXES = [("5.1", "stereo"), ("mono", "stereo"), ("5.1(side)", "stereo"), ("7.1", "stereo"), ("5.1", "mono"),
         ("stereo", "mono"), ("quad", "stereo"), ("stereo", "5.1"), ("2.1", "stereo"), ("5.0", "stereo")]
CHANNELS = {"mono": 1, "stereo": 2, "2.1": 3, "quad": 4, "5.0": 5, "5.1": 6, "5.1(side)": 6, "7.1": 8}


@pytest.mark.parametrize("fmt", ["s16", "f32"])
@pytest.mark.parametrize("src,dst", MIXES)
def test_channel_mix_like_ffmpeg_ac(src, dst, fmt, mk_audioconv, tmp_path):
    """Mixing by position as `ffmpeg -ac N` / `-ch_layout L` (libswresample's matrix: centre and
    surrounds at -3 dB, LFE dropped; normalised for s16 output). s16: |diff| <= 1; f32: 1e-6."""
    sig = _layout_signal(CHANNELS[src])
    inp = tmp_path / "in.raw"
    inp.write_bytes((np.round(sig * 32767).astype("<i2") if fmt == "s16" else sig.astype("<f4")).tobytes())
    ours = _ours(mk_audioconv, inp, ["--in-format", fmt, "--in-rate", "48000", "--in-channels", src, "--channels", dst])
    ref = _ffmpeg(["-f", FF_FMT[fmt], "-ar", "48000", "-ch_layout", src, "-i", inp, "-af", f"aresample=ochl={dst}",
                   "-f", FF_FMT[fmt], "-"])
    worst = _compare(ours, ref, fmt, f"{src} -> {dst} ({fmt})", 1 if fmt == "s16" else 1e-6)
    print(f"{src} -> {dst} ({fmt}): max |diff| {worst}")


def test_downmix_like_ffmpeg_ac_2(mk_audioconv, tmp_path):
    """The exact command of issue 13: a generated 5.1 s16 file, `ffmpeg -ac 2`."""
    sig = _layout_signal(6)
    inp = tmp_path / "in.s16"
    inp.write_bytes(np.round(sig * 32767).astype("<i2").tobytes())
    ours = _ours(mk_audioconv, inp, ["--in-format", "s16", "--in-rate", "48000", "--in-channels", "5.1", "--channels", "2"])
    ref = _ffmpeg(["-f", "s16le", "-ar", "48000", "-ch_layout", "5.1", "-i", inp, "-ac", "2", "-f", "s16le", "-"])
    _compare(ours, ref, "s16", "5.1 -> -ac 2")


# ----------------------------------------------------------------------------- resampling

def _sine(freq: float, rate: int, frames: int, amp: float = 0.5) -> "np.ndarray":
    return amp * np.sin(2 * math.pi * freq * np.arange(frames) / rate)


def _amplitude(y: "np.ndarray", freq: float, rate: int, margin: int = 3000) -> float:
    """Amplitude of `freq` in y (Hann-windowed projection over the middle)."""
    seg = y[margin: len(y) - margin]
    j = np.arange(margin, margin + len(seg))
    w = np.hanning(len(seg))
    ph = 2 * math.pi * freq * j / rate
    c, s = np.sum(w * seg * np.cos(ph)), np.sum(w * seg * np.sin(ph))
    return 2 * math.hypot(c, s) / np.sum(w)


class _Resampler:
    def __init__(self, name, run):
        self.name, self.run = name, run


def _resamplers(mk_audioconv, tmp_path):
    def ours(quality, fmt):
        def run(x, a, b):
            inp = tmp_path / "x.raw"
            inp.write_bytes(x.astype(NP_TYPE[fmt]).tobytes())
            out = _ours(mk_audioconv, inp, ["--in-format", fmt, "--in-rate", str(a), "--in-channels", "1",
                                            "--sample-rate", str(b), "--quality", quality, "--sample-format", "f64"])
            return np.frombuffer(out, dtype="<f8")
        return run

    def ffmpeg(flt, fmt):
        def run(x, a, b):
            inp = tmp_path / "x.raw"
            inp.write_bytes(x.astype(NP_TYPE[fmt]).tobytes())
            out = _ffmpeg(["-f", FF_FMT[fmt], "-ar", str(a), "-ac", "1", "-i", inp, "-af", flt.format(rate=b),
                           "-f", "f64le", "-"])
            return np.frombuffer(out, dtype="<f8")
        return run
    return [_Resampler("ours medium (f32)", ours("medium", "f32")),
            _Resampler("swr default (f32)", ffmpeg("aresample={rate}", "f32")),
            _Resampler("ours high (f64)", ours("high", "f64")),
            _Resampler("soxr (f64)", ffmpeg("aresample={rate}:resampler=soxr", "f64"))]


def _figures(r: _Resampler) -> dict:
    n = 44100 * 2
    y = r.run(_sine(1000, 44100, n), 44100, 48000)
    j = np.arange(len(y))
    ref = _sine(1000, 48000, len(y))
    mid = slice(3000, len(y) - 3000)
    snr = 10 * math.log10(np.sum(ref[mid] ** 2) / np.sum((y[mid] - ref[mid]) ** 2))
    gains = []
    for f in (20, 1000, 5000, 10000, 15000, 18000, 19000, 19845):
        gains.append(20 * math.log10(_amplitude(r.run(_sine(f, 44100, n), 44100, 48000), f, 48000) / 0.5))
    # Image of a 19 kHz tone at 44.1 -> 48 kHz: 25.1 kHz, folded to 22.9 kHz.
    up = r.run(_sine(19000, 44100, n), 44100, 48000)
    image = -20 * math.log10(max(_amplitude(up, 48000 - 25100, 48000), 1e-12) / 0.5)
    # Aliases at 96 -> 44.1 kHz of tones from 1.1x the output's Nyquist frequency up.
    alias = 300.0
    for f in (24255 + 100, 30000, 40000):
        down = r.run(_sine(f, 96000, 96000 * 2), 96000, 44100)
        alias = min(alias, -20 * math.log10(max(_amplitude(down, 44100 - f, 44100), 1e-12) / 0.5))
    return dict(snr=snr, low=min(gains), high=max(gains), image=image, alias=alias, length=len(y))


def test_resampler_quality_against_swresample(mk_audioconv, tmp_path):
    """44.1 -> 48 kHz: SNR of a 1 kHz sine against the exact sine (>= 90 dB medium, >= 120 dB
    high), passband within 0.1 dB to 19845 Hz (0.45 of 44.1 kHz), image and alias rejection;
    ours medium at least as good as libswresample's default on every figure."""
    rows = {r.name: _figures(r) for r in _resamplers(mk_audioconv, tmp_path)}
    print()
    print(f"{'resampler':22} {'1 kHz SNR':>10} {'passband dB':>20} {'image dB':>9} {'alias dB':>9}")
    for name, f in rows.items():
        print(f"{name:22} {f['snr']:10.1f} {f['low']:9.4f}..{f['high']:<9.4f} {f['image']:9.1f} {f['alias']:9.1f}")
    med, swr, high = rows["ours medium (f32)"], rows["swr default (f32)"], rows["ours high (f64)"]
    assert med["length"] == swr["length"] == 96000, "44100 * 2 frames should give 96000 at 48 kHz"
    assert med["snr"] >= 90 and high["snr"] >= 120
    assert max(abs(med["low"]), abs(med["high"])) < 0.1 and max(abs(high["low"]), abs(high["high"])) < 0.1
    assert med["image"] >= 95 and med["alias"] >= 95 and high["image"] >= 120 and high["alias"] >= 120
    assert med["snr"] >= swr["snr"] and med["image"] >= swr["image"] and med["alias"] >= swr["alias"]
    assert max(abs(med["low"]), abs(med["high"])) <= max(abs(swr["low"]), abs(swr["high"]))


@pytest.mark.parametrize("frames", [1, 146, 147, 1000, 44100, 123457])
def test_exact_lengths_push_and_pull(frames, mk_audioconv, tmp_path):
    """N frames at 44.1 kHz give round(N * 48000 / 44100) at 48 kHz, pushed or pulled, for
    several chunk sizes, all byte-identical. (ffmpeg's aresample is not exact here: it gives
    0 frames for 1 and 1089 for 1000, so its count is printed, not compared.)"""
    inp = tmp_path / "in.f32"
    inp.write_bytes(_samples("f32", frames, 2, seed=frames))
    expected = (2 * frames * 160 + 147) // 294
    outs = set()
    for chunk in (7, 1024, frames):
        for mode in ([], ["--pull"]):
            out = _ours(mk_audioconv, inp, ["--sample-rate", "48000", "--chunk", str(chunk), *mode])
            assert len(out) == expected * 8, f"{frames} frames, chunk {chunk} {mode}: {len(out) // 8} out, expected {expected}"
            outs.add(out)
    assert len(outs) == 1, "push and pull, or chunk sizes, gave different samples"
    ref = _ffmpeg(["-f", "f32le", "-ar", "44100", "-ac", "2", "-i", inp, "-af", "aresample=48000", "-f", "f32le", "-"])
    print(f"{frames} frames at 44.1 kHz: ours {expected} at 48 kHz, ffmpeg aresample {len(ref) // 8}")


# ----------------------------------------------------------------------------- mk-decode

def test_mk_decode_downmixes_corpus_aac_51(mk_decode, shared_media, tmp_path):
    """`mk-decode --channels stereo` on the corpus's 5.1 AAC equals `ffmpeg -ac 2` (|diff| <= 1)."""
    media = shared_media / "mp4_two_aac_5p1_audio_tracks.mp4"
    if not media.exists():
        pytest.fail(f"{media.name} is missing from the shared media", pytrace=False)
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, "-q", media, "--trim", "none", "--audio-out", out, "--channels", "stereo"]
    lib.check_ok(lib.run(cmd), cmd)
    ref = _ffmpeg(["-ignore_editlist", "1", "-i", media, "-map", "0:a:0", "-ac", "2", "-f", "s16le", "-"])
    diff = lib.compare_pcm_s16(out.read_bytes(), ref, 2)
    assert diff is None, f"{lib.shell_line(cmd)}:\n{diff}"


def test_mk_decode_downmixes_corpus_opus_51(mk_decode, shared_media, tmp_path):
    """The corpus's 5.1 Opus (Matroska, which MediaKit does not read: copied into Ogg with
    `ffmpeg -c copy`), `--channels stereo`, equals `ffmpeg -c:a libopus -ac 2` (|diff| <= 1).
    FFmpeg's libopus wrapper decodes to s16 unless asked for float; our Opus plugin decodes
    to float, so ffmpeg is asked for float too (`-request_sample_fmt flt`): both then mix the
    same samples."""
    media = shared_media / "mka_opus_5p1.mka"
    if not media.exists():
        pytest.fail(f"{media.name} is missing from the shared media", pytrace=False)
    ogg = tmp_path / "opus51.opus"
    _ffmpeg(["-y", "-i", media, "-map", "0:a:0", "-c", "copy", ogg])
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, "-q", ogg, "--audio-out", out, "--channels", "stereo"]
    lib.check_ok(lib.run(cmd), cmd)
    ref = _ffmpeg(["-c:a", "libopus", "-request_sample_fmt", "flt", "-i", ogg, "-map", "0:a:0", "-ac", "2", "-f", "s16le", "-"])
    diff = lib.compare_pcm_s16(out.read_bytes(), ref, 2)
    assert diff is None, f"{lib.shell_line(cmd)}:\n{diff}"


@pytest.mark.parametrize("fmt,layout,tag,mask", [("f32", "mono", 3, None), ("s24", "5.1", 1, "5.1"),
                                                 ("s32", "stereo", 1, "stereo"), ("u8", "stereo", 1, None),
                                                 ("f64", "7.1", 3, "7.1")])
def test_mk_decode_converts_to_any_format_with_a_right_wav_header(fmt, layout, tag, mask, mk_decode, shared_media, tmp_path):
    """`mk-decode --sample-rate 48000 --channels L --sample-format F --wav` on a 44.1 kHz AAC file:
    the header (format tag, bits, channels, rate; channel layout as ffprobe reads the mask)
    and the length, round(N * 48000 / 44100) for the N frames decoded without conversion."""
    media = shared_media / "m4a_aac_mono_afconvert_apple_elst.mp4"
    if not media.exists():
        pytest.fail(f"{media.name} is missing from the shared media", pytrace=False)
    plain = tmp_path / "plain.pcm"
    cmd = [mk_decode, "-q", media, "--audio-out", plain]
    lib.check_ok(lib.run(cmd), cmd)
    src_channels = int(lib.ffprobe_json(media)["streams"][0].get("channels") or 1)
    n = len(plain.read_bytes()) // (2 * src_channels)
    out = tmp_path / "out.wav"
    cmd = [mk_decode, "-q", media, "--audio-out", out, "--wav", "--sample-rate", "48000", "--channels", layout,
           "--sample-format", fmt]
    lib.check_ok(lib.run(cmd), cmd)
    wav = lib.parse_wav(out.read_bytes())
    bits = {"u8": 8, "s24": 24, "s32": 32, "f32": 32, "f64": 64}[fmt]
    assert (wav["format"], wav["bits"], wav["channels"], wav["rate"]) == (tag, bits, CHANNELS[layout], 48000)
    assert len(wav["data"]) == (2 * n * 160 + 147) // 294 * CHANNELS[layout] * bits // 8
    probe = lib.run(["ffprobe", "-v", "error", "-show_entries", "stream=channel_layout,sample_rate,channels", "-of",
                     "default=nw=1", out])
    text = probe.stdout.decode()
    assert "sample_rate=48000" in text and f"channels={CHANNELS[layout]}" in text, text
    if mask:
        assert f"channel_layout={mask}" in text, text
