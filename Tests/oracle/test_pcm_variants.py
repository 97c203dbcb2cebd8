"""PCM sample-format variants (issue 35 item 6, issue 30 item 3) against ffmpeg:
big-endian s16be / s24be / s32be / f32be / f64be, signed 8-bit, 24 in 32 (aligned high or
low), and their planar forms.

  mk-decode   `mk-decode X.aiff --sample-format F` writes exactly `ffmpeg -i X.aiff -f F -`
              (F: s16be s24be s32be f32be f64be s8; byte for byte: a 24-bit AIFF moves losslessly
              to the 24- and 32-bit formats, and is shifted down to 16 and 8 bits as ffmpeg's
              libswresample shifts); s24in32hi equals ffmpeg's `-f s32le` (an s24 source decoded
              to s32 has a zero low byte), s24in32lo equals ffmpeg's `-f s24le` sign-extended
              (numpy); from a float file, f32 -> s16be equals `-af aformat=s16 -f s16be` (+-1 LSB).
  mk-audioconv raw big-endian / s8 input: `ffmpeg -f F -i IN -f G -` (+-1 step of G, floats 1e-7).
  C           Tests/c/pcm_variants.c converts s16 through mk_audio_converter to each new
              MK_SAMPLES_* code, planar ones too: the planes equal ffmpeg's interleaved bytes.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import oracle_lib as lib

np = pytest.importorskip("numpy")

# The raw formats (ffmpeg -f names) and numpy's dtype of each.
NP = {"s8": "i1", "u8": "u1", "s16le": "<i2", "s16be": ">i2", "s32le": "<i4", "s32be": ">i4", "f32le": "<f4",
      "f32be": ">f4", "f64le": "<f8", "f64be": ">f8"}
VARIANTS = ["s16be", "s24be", "s32be", "f32be", "f64be", "s8"]
C_SOURCE = lib.REPO / "Tests" / "c" / "pcm_variants.c"


def _ffmpeg(args: list) -> bytes:
    cmd = ["ffmpeg", "-v", "error", "-nostdin", *args]
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, timeout=120)
    lib.oracle_ok(proc, cmd)
    return proc.stdout


def _values(data: bytes, fmt: str) -> "np.ndarray":
    """Samples of a raw format as int64 (integers) or float64."""
    if fmt in ("s24le", "s24be"):
        b = np.frombuffer(data[: len(data) // 3 * 3], dtype="u1").reshape(-1, 3).astype(np.int64)
        if fmt == "s24be":
            b = b[:, ::-1]
        v = b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)
        return np.where(v >= 1 << 23, v - (1 << 24), v)
    a = np.frombuffer(data, dtype=NP[fmt])
    return a.astype(np.float64) if fmt[0] == "f" else a.astype(np.int64)


@pytest.fixture(scope="module")
def aiff24(tmp_path_factory) -> Path:
    """A stereo 24-bit AIFF (big-endian samples): a sine and full-band noise, 0.4 s."""
    path = tmp_path_factory.mktemp("variants") / "in.aiff"
    _ffmpeg(["-f", "lavfi", "-i", "sine=frequency=997:sample_rate=44100:duration=0.4", "-f", "lavfi", "-i",
             "anoisesrc=duration=0.4:sample_rate=44100:amplitude=0.9:seed=3", "-filter_complex", "amerge=inputs=2",
             "-c:a", "pcm_s24be", path])
    return path


def _mk_decode(mk_decode: Path, media: Path, out: Path, fmt: str) -> bytes:
    cmd = [mk_decode, "-q", media, "--audio-out", out, "--sample-format", fmt]
    lib.check_ok(lib.run(cmd), cmd)
    return out.read_bytes()


@pytest.mark.parametrize("fmt", VARIANTS)
def test_mk_decode_writes_ffmpegs_raw_bytes(fmt, aiff24, mk_decode, tmp_path):
    ours = _mk_decode(mk_decode, aiff24, tmp_path / f"out.{fmt}", fmt)
    ref = _ffmpeg(["-i", aiff24, "-f", fmt, "-"])
    assert len(ours) == len(ref) > 10_000, f"{fmt}: ours {len(ours)} bytes, ffmpeg {len(ref)}"
    assert ours == ref, f"{fmt}: first difference at byte {next(i for i in range(len(ref)) if ours[i] != ref[i])}"


def test_mk_decode_24_in_32_high_and_low(aiff24, mk_decode, tmp_path):
    """Aligned high is ffmpeg's s32 of a 24-bit source (low byte zero); aligned low is ffmpeg's
    s24le sign-extended into 32 bits."""
    high = _mk_decode(mk_decode, aiff24, tmp_path / "out.hi", "s24in32hi")
    assert high == _ffmpeg(["-i", aiff24, "-f", "s32le", "-"])
    low = np.frombuffer(_mk_decode(mk_decode, aiff24, tmp_path / "out.lo", "s24in32lo"), dtype="<i4").astype(np.int64)
    ref = _values(_ffmpeg(["-i", aiff24, "-f", "s24le", "-"]), "s24le")
    assert len(low) == len(ref) > 10_000
    assert np.array_equal(low, ref)
    assert np.array_equal(np.frombuffer(high, dtype="<i4").astype(np.int64) >> 8, low)


def test_mk_decode_float_to_s16be_rounds_as_swresample(mk_decode, tmp_path):
    """From float samples, s16be is libswresample's rounding (`-af aformat=s16`), big-endian."""
    src = tmp_path / "float.wav"
    _ffmpeg(["-f", "lavfi", "-i", "anoisesrc=duration=0.3:sample_rate=48000:amplitude=1:seed=5", "-af", "volume=1.2",
             "-c:a", "pcm_f32le", src])
    ours = _values(_mk_decode(mk_decode, src, tmp_path / "out.s16be", "s16be"), "s16be")
    ref = _values(_ffmpeg(["-i", src, "-af", "aformat=s16", "-f", "s16be", "-"]), "s16be")
    assert len(ours) == len(ref) > 10_000
    worst = int(np.abs(ours - ref).max())
    assert worst <= 1, f"max |diff| {worst}"


@pytest.mark.parametrize("src,dst", [("s16be", "f32le"), ("f32be", "s24be"), ("s8", "s16le"), ("s32be", "f64be"),
                                     ("f64be", "s8")])
def test_mk_audioconv_reads_and_writes_variants(src, dst, mk_bin, tmp_path):
    rng = np.random.default_rng(11)
    n = 2 * 9600
    if src[0] == "f":
        data = rng.uniform(-1.05, 1.05, n).astype(NP[src]).tobytes()
    else:
        info = np.iinfo(np.dtype(NP[src]))
        data = rng.integers(info.min, info.max, n, endpoint=True).astype(NP[src]).tobytes()
    inp = tmp_path / f"in.{src}"
    inp.write_bytes(data)
    ours_name = {"f32le": "f32", "s16le": "s16"}.get(dst, dst)
    cmd = [mk_bin / "mk-audioconv", inp, "-", "--in-format", src, "--in-rate", "48000", "--in-channels", "2",
           "--sample-format", ours_name]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    extra = ["-af", "aformat=s16"] if dst.startswith("s16") else []
    ref = _ffmpeg(["-f", src, "-ar", "48000", "-ac", "2", "-i", inp, *extra, "-f", dst, "-"])
    a, b = _values(proc.stdout, dst), _values(ref, dst)
    assert len(a) == len(b) == n
    worst = float(np.abs(a - b).max())
    assert worst <= (1e-7 if dst[0] == "f" else 1), f"{src} -> {dst}: max |diff| {worst}"


# The MK_SAMPLES_* code of each variant (mediakit_types.h), the ffmpeg format it is compared
# with, and whether it is planar.
C_CASES = [("MK_SAMPLES_S8", "s8", False), ("MK_SAMPLES_S16BE", "s16be", False), ("MK_SAMPLES_S24BEP", "s24be", True),
           ("MK_SAMPLES_S32BE", "s32be", False), ("MK_SAMPLES_F32BEP", "f32be", True), ("MK_SAMPLES_F64BE", "f64be", False),
           ("MK_SAMPLES_S24IN32HI", "s32le", False), ("MK_SAMPLES_S24IN32LOP", "s24lo", True)]


def test_c_converter_writes_each_variant_like_ffmpeg(mk_bin, tmp_path):
    """Tests/c/pcm_variants.c: s16 stereo through mk_audio_converter into each new code, the
    planes written one after the other; compared with ffmpeg's interleaved output of the same
    s16 input (24 in 32 from an s24 detour: ffmpeg's s32 of s24 samples, and its s24 values)."""
    program = tmp_path / "pcm_variants"
    cc = lib.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", lib.REPO / "Include", C_SOURCE, "-L", mk_bin,
                  "-lmediakit", f"-Wl,-rpath,{mk_bin}", "-o", program])
    assert cc.returncode == 0, lib.tail(cc.stderr)
    rng = np.random.default_rng(2)
    frames = 4801
    s16 = rng.integers(-32768, 32768, 2 * frames).astype("<i2")
    inp = tmp_path / "in.s16"
    inp.write_bytes(s16.tobytes())
    for code, fmt, planar in C_CASES:
        out = tmp_path / f"out.{code}"
        proc = lib.run([program, code, inp, out])
        lib.check_ok(proc, [program, code], who="pcm_variants")
        got = out.read_bytes()
        if fmt == "s24lo":
            # ffmpeg has no 24-in-32 aligned low: its s24 values (s16 << 8), sign-extended.
            vals = _values(_ffmpeg(["-f", "s16le", "-ar", "48000", "-ac", "2", "-i", inp, "-f", "s24le", "-"]), "s24le")
            ref = vals.astype("<i4").tobytes()
            width = 4
        else:
            src_fmt = ["-af", "aformat=s32"] if fmt == "s32le" else []
            ref = _ffmpeg(["-f", "s16le", "-ar", "48000", "-ac", "2", "-i", inp, *src_fmt, "-f", fmt, "-"])
            width = {"s8": 1, "s16be": 2, "s24be": 3, "s32be": 4, "f32be": 4, "f64be": 8, "s32le": 4}[fmt]
        assert len(got) == len(ref) == 2 * frames * width, f"{code}: {len(got)} bytes, ffmpeg {len(ref)}"
        if planar:
            inter = np.frombuffer(ref, dtype="u1").reshape(frames, 2, width)
            ref = inter.transpose(1, 0, 2).tobytes()
        assert got == ref, f"{code} differs from ffmpeg -f {fmt}"


@pytest.mark.parametrize("fmt,codec", [("s16be", "pcm_s16be"), ("s8", "pcm_s8"), ("s24in32hi", "pcm_s32le"),
                                       ("f64be", "pcm_f64be")])
def test_mk_decode_prints_an_ffplay_command_that_reads_the_variant(fmt, codec, aiff24, mk_decode, tmp_path):
    """The printed ffplay command's input options describe the raw output (ffprobe with the
    same options reads the codec, rate and channels written)."""
    from test_decode import check_ffplay_command

    out = tmp_path / f"out.{fmt}"
    cmd = [mk_decode, aiff24, "--audio-out", out, "--sample-format", fmt]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    check_ffplay_command(aiff24, proc.stdout.decode() + proc.stderr.decode(), out,
                         {"codec_name": codec, "sample_rate": "44100", "channels": 2})
