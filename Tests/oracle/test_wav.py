"""WAV files (RIFF, RF64, WAVE_FORMAT_EXTENSIBLE) through WAVDemuxer.

Oracles: `ffprobe -show_entries packet=pos,size` (every packet's offset and size equal) and
`ffmpeg -i FILE -f s16le -` (the decoded samples byte-identical: PCM decoding is exact), on
files ffmpeg writes in every PCM sample format, 1, 2 and 6 channels, RF64, a file cut inside
its data chunk (read as far as it goes, as ffmpeg does), and from a pipe; for the codecs a
plugin decodes (ADPCM, GSM 6.10, MP3 ...) and the WAV files of ../shared/media/breadth, the
whole packet lines of ffprobe (pts, dts, duration, size, offset, key flag) and ffmpeg's decode
(|diff| <= 1); a tag no plugin decodes fails at decode time, naming the tag.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

import oracle_lib as lib

CASES = [("pcm_s16le", 2, []), ("pcm_s24le", 2, []), ("pcm_s32le", 1, []), ("pcm_f32le", 2, []),
         ("pcm_f64le", 1, []), ("pcm_u8", 1, []), ("pcm_alaw", 1, []), ("pcm_mulaw", 2, []),
         ("pcm_s16le", 6, []), ("pcm_s24le", 6, []), ("pcm_s16le", 2, ["-rf64", "always"])]


def _make(tmp_path, codec: str, channels: int, extra: list):
    path = tmp_path / f"{codec}_{channels}{'_rf64' if extra else ''}.wav"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2.3:sample_rate=44100",
           "-ac", str(channels), "-c:a", codec, *extra, path]
    lib.oracle_ok(lib.run(cmd), cmd)
    return path


def _packets(cmd: list, stdin=None) -> list[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, stdin=stdin, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return [l for l in proc.stdout.decode().splitlines() if l.strip()]


def _compare(path, mk_probe, mk_decode, tmp_path):
    ref = [",".join(reversed(l.split(",")[:2])) for l in _packets(["ffprobe", "-v", "error", "-show_entries", "packet=pos,size", "-of", "csv=p=0", path])]
    ours = [",".join(l.split(",")[5:3:-1]) for l in _packets([mk_probe, "--packets", path])]
    assert ours == ref, lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    out = tmp_path / "out.pcm"
    lib.check_ok(lib.run([mk_decode, path, "--audio-out", out, "-q"]), [mk_decode, path])
    want = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(path), "-f", "s16le", "-"], capture_output=True).stdout
    assert out.read_bytes() == want


@pytest.mark.parametrize("codec,channels,extra", CASES, ids=[f"{c}-{n}{'-rf64' if e else ''}" for c, n, e in CASES])
def test_wav_like_ffmpeg(codec, channels, extra, mk_probe, mk_decode, tmp_path):
    _compare(_make(tmp_path, codec, channels, extra), mk_probe, mk_decode, tmp_path)


def test_wav_cut_inside_its_data(mk_probe, mk_decode, tmp_path):
    full = _make(tmp_path, "pcm_s16le", 2, [])
    cut = tmp_path / "cut.wav"
    cut.write_bytes(full.read_bytes()[:150_001])   # mid-frame, mid-packet
    _compare(cut, mk_probe, mk_decode, tmp_path)


def test_wav_from_a_pipe(mk_probe, tmp_path):
    path = _make(tmp_path, "pcm_s24le", 2, [])
    with open(path, "rb") as f:
        piped = _packets([mk_probe, "--packets", "-"], stdin=f)
    assert piped == _packets([mk_probe, "--packets", path])


# Codecs MediaKit's core does not decode itself: the container names them by FFmpeg's RIFF table
# and a plugin (FFmpeg's) decodes them. (ffmpeg encoder, channels, sample rate, extra arguments)
CODECS = [("adpcm_ms", 1, 22050, []), ("adpcm_ms", 2, 44100, []), ("adpcm_ima_wav", 2, 44100, []),
          ("libgsm_ms", 1, 8000, []), ("libmp3lame", 2, 44100, []), ("libmp3lame", 1, 22050, ["-b:a", "32k"]),
          ("mp2", 2, 48000, []), ("adpcm_yamaha", 1, 22050, []), ("g726", 1, 8000, ["-b:a", "24k"]),
          ("g722", 1, 16000, [])]


def _ffprobe_packets(path) -> list[str]:
    """ffprobe's packets as mk-probe prints them: track, pts, dts, duration, size, offset, key flag."""
    rows = []
    for line in _packets(["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts,dts,duration,size,pos,flags",
                          "-of", "csv=p=0", path]):
        f = line.split(",")
        rows.append(",".join(f[:6] + ["K" if f[6].startswith("K") else "_"]))
    return rows


def _compare_codec(path, mk_probe, mk_decode, tmp_path):
    """Packets equal ffprobe's (timestamps, durations, sizes, offsets, key flags); the decode equals
    `ffmpeg -i FILE -f s16le -` (|diff| <= 1: MP3 and MP2 decode to float, converted to s16)."""
    ours = _packets([mk_probe, "--packets", path])
    ref = _ffprobe_packets(path)
    assert len(ref) > 0
    assert ours == ref, f"{path.name}: packets differ (track,pts,dts,duration,size,offset,flags)\n" + str(lib.diff_lines(ours, ref, "mk-probe", "ffprobe"))
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, path, "--audio-out", out, "-q"]
    lib.check_ok(lib.run(cmd), cmd)
    ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-f", "s16le", "-"]
    want = lib.run(ref_cmd)
    lib.oracle_ok(want, ref_cmd)
    channels = int(lib.ffprobe_json(path)["streams"][0]["channels"])
    diff = lib.compare_pcm_s16(out.read_bytes(), want.stdout, channels)
    assert diff is None, f"{path.name}: `{lib.shell_line(cmd)}` vs `{lib.shell_line(ref_cmd)}`:\n{diff}"


@pytest.mark.parametrize("codec,channels,rate,extra", CODECS, ids=[f"{c}-{n}ch-{r}" for c, n, r, _ in CODECS])
def test_wav_codecs_decoded_by_a_plugin(codec, channels, rate, extra, mk_probe, mk_decode, tmp_path):
    """WAV of MS ADPCM (tag 0x0002), IMA ADPCM, GSM 6.10 (0x0031), MP3 (0x0055), MP2 (0x0050),
    Yamaha ADPCM, G.726 and G.722, as ffmpeg writes them: packets equal ffprobe's (blocks of at most
    4096 bytes; one GSM frame pair or MPEG audio frame each, as FFmpeg's parsers cut them) and the
    FFmpeg plugin's decode equals ffmpeg's."""
    path = tmp_path / f"{codec}_{channels}.wav"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"sine=frequency=440:duration=2.3:sample_rate={rate}",
           "-ac", str(channels), "-c:a", codec, *extra, path]
    lib.oracle_ok(lib.run(cmd), cmd)
    _compare_codec(path, mk_probe, mk_decode, tmp_path)


def _breadth_wavs() -> list:
    names = sorted(p.name for p in (lib.SHARED_MEDIA / "breadth").glob("*.wav"))
    # Without ../shared: one case that skips (fails under CI=true) in media_param_file.
    return [pytest.param(f"shared:breadth/{n}", id=n) for n in names] or [pytest.param("shared:breadth/<none>.wav", id="none")]


@pytest.mark.parametrize("spec", _breadth_wavs())
def test_breadth_wav_files_like_ffmpeg(spec, mk_probe, mk_decode, tmp_path):
    """Every WAV of ../shared/media/breadth (real files of other tools: GSM 6.10, IMA ADPCM, RF64,
    float, 16 channels, ID3 and LIST chunks ...): packets equal ffprobe's, decode equals ffmpeg's."""
    _compare_codec(lib.media_param_file(spec, tmp_path, None), mk_probe, mk_decode, tmp_path)


PY_SEEK = r"""
import sys, mediakit
d = mediakit.open(sys.argv[1])
for s in sys.argv[2:]:
    d.seek(float(s))
    p = next(iter(d.packets()))
    print(p.pts, p.duration, p.size, p.position)
"""


@pytest.mark.parametrize("codec,rate", [("libgsm_ms", 8000), ("libmp3lame", 44100)])
def test_wav_seek_lands_on_the_frame_holding_the_time(codec, rate, mk_bin, tmp_path):
    """Python Demuxer.seek(t) in GSM 6.10 and MP3 in WAV (one frame per packet): the first packet
    is the line of ffprobe's packet list (pts, duration, size, offset) whose samples hold t."""
    path = tmp_path / f"{codec}.wav"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"sine=frequency=440:duration=3:sample_rate={rate}",
           "-c:a", codec, path]
    lib.oracle_ok(lib.run(cmd), cmd)
    rows = [tuple(int(x) for x in l.split(",")[1:6] if x != "") for l in _ffprobe_packets(path)]
    times = [0.0, 0.37, 1.0, 1.5, 2.2, 2.9]
    env = dict(os.environ, MEDIAKIT_LIBRARY=str(mk_bin / "libmediakit.so"), PYTHONPATH=str(lib.REPO / "Bindings" / "python"))
    proc = lib.run([sys.executable, "-c", PY_SEEK, path, *map(str, times)], env=env)
    assert proc.returncode == 0, lib.tail(proc.stderr)
    for t, line in zip(times, proc.stdout.decode().splitlines()):
        pts, duration, size, pos = map(int, line.split())
        target = int(t * rate)
        want = next(r for r in rows if r[0] <= target < r[0] + r[2])
        assert (pts, duration, size, pos) == (want[0], want[2], want[3], want[4]), f"seek {t} s: {line}; ffprobe's packet holding it: {want}"


def _retagged(tmp_path, tag: int):
    """A 16-bit PCM file whose format tag says `tag` (its data is then not that codec's: only
    the demuxer and the decoder's creation are exercised)."""
    path = _make(tmp_path, "pcm_s16le", 1, [])
    data = bytearray(path.read_bytes())
    assert data[12:16] == b"fmt " and data[20:22] == b"\x01\x00"
    data[20:22] = tag.to_bytes(2, "little")
    out = tmp_path / f"tag_{tag:04x}.wav"
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("tag,codec", [(0x1234, None), (0x0180, "ftr")], ids=["unknown-0x1234", "ftr-0x0180"])
def test_wav_codec_no_plugin_decodes_fails_at_decode_naming_the_tag(tag, codec, mk_probe, mk_decode, tmp_path):
    """A format tag is never refused by the container: the file opens and its packets equal
    ffprobe's (no timestamps and no key flag for a tag FFmpeg's table does not list); mk-decode
    fails (exit 1) when it asks for a decoder, naming the tag (and the codec when it has one:
    FFmpeg 5.1 names 0x0180 "ftr" but has no decoder for it, `ffmpeg -decoders`) and the
    plugins searched."""
    path = _retagged(tmp_path, tag)
    ours = _packets([mk_probe, "--packets", path])
    ref = _ffprobe_packets(path)
    if codec is None:
        assert ours == ref, lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    else:   # ffprobe times no packet of a codec it has no decoder for: offsets and sizes only
        assert [l.split(",")[4:6] for l in ours] == [l.split(",")[4:6] for l in ref], lib.diff_lines(ours, ref, "mk-probe", "ffprobe")
    proc = lib.run([mk_decode, path, "--audio-out", tmp_path / "out.pcm", "-q"])
    err = proc.stderr.decode()
    assert proc.returncode == 1, f"exit {proc.returncode}: {err}"
    assert f"0x{tag:04X}" in err and (codec is None or f"no decoder for {codec}" in err), err
    if codec is not None:
        assert "Plugins loaded: " in err and "ffmpeg (" in err, err
    if codec is None:
        assert "WAV format tag" in err, err


@pytest.mark.parametrize("codec", ["pcm_s16le", "pcm_s24le", "pcm_f32le"])
def test_wav_remux_into_mp4(codec, mk_bin, tmp_path):
    """`mk-remux in.wav out.mp4`: the PCM samples as they were (ffmpeg decodes both to the same bytes)."""
    path = _make(tmp_path, codec, 2, [])
    out = tmp_path / "out.mp4"
    lib.check_ok(lib.run([mk_bin / "mk-remux", path, out]), [mk_bin / "mk-remux", path, out])

    def pcm(p):
        return subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", str(p), "-f", "s32le", "-"], capture_output=True).stdout
    assert pcm(out) == pcm(path)


HEADER_CASES = [("pcm_f32le", 2, 44100), ("pcm_f64le", 1, 44100), ("pcm_f32le", 6, 48000), ("pcm_s16le", 2, 96000),
                ("pcm_s16le", 1, 96000), ("pcm_u8", 1, 96000), ("pcm_alaw", 2, 96000), ("pcm_mulaw", 6, 8000),
                ("pcm_s16le", 2, 48000), ("pcm_s24le", 2, 44100), ("pcm_alaw", 1, 8000)]


@pytest.mark.parametrize("channels", [3, 4, 5])
def test_wav_of_an_unknown_layout_gets_ffmpegs_default_mask(channels, mk_remux, tmp_path):
    """A WAV of 3 to 5 channels with a plain WAVEFORMATEX (no channel mask: the layout unknown),
    built here: `mk-remux` into WAV writes the extensible header with the mask of FFmpeg's
    default layout for the count (2.1, 4.0, 5.0), as `ffmpeg -c copy` does, byte for byte."""
    import struct

    rate, frames = 8000, 500
    data = (bytes(range(256)) * (frames * channels * 2 // 256 + 1))[:frames * channels * 2]
    fmt = struct.pack("<HHIIHH", 1, channels, rate, rate * channels * 2, channels * 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    src, ours, ref = tmp_path / "in.wav", tmp_path / "ours.wav", tmp_path / "ffmpeg.wav"
    src.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    lib.check_ok(lib.run([mk_remux, src, ours, "--quiet"]), [mk_remux, src, ours])
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-c", "copy", "-fflags", "+bitexact", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    a, b = ours.read_bytes(), ref.read_bytes()
    assert a == b, f"ours {a[:72].hex()}\nffmpeg {b[:72].hex()}"


@pytest.mark.parametrize("codec,channels,rate", HEADER_CASES, ids=[f"{c}-{n}-{r}" for c, n, r in HEADER_CASES])
def test_wav_header_is_ffmpegs(codec, channels, rate, mk_remux, mk_decode, tmp_path):
    """The header FFmpeg's wav muxer writes (riffenc.c): WAVE_FORMAT_EXTENSIBLE for more than two
    channels, samples wider than 16 bits (float too) and rates above 48 kHz, a `fact` chunk with
    the sample frames for every tag but integer PCM's; `mk-remux` into WAV against `ffmpeg -c
    copy`, byte for byte, and `mk-decode --wav --sample-format f32` of float samples against
    `ffmpeg -c:a pcm_f32le` of the same decode."""
    src, ours, ref = tmp_path / "in.wav", tmp_path / "ours.wav", tmp_path / "ffmpeg.wav"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate={rate}",
           "-af", "atrim=end_sample=1001", "-ac", str(channels), "-c:a", codec, "-fflags", "+bitexact", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    lib.check_ok(lib.run([mk_remux, src, ours, "--quiet"]), [mk_remux, src, ours])
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-c", "copy", "-fflags", "+bitexact", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    a, b = ours.read_bytes(), ref.read_bytes()
    assert a == b, f"ours {len(a)} bytes {a[:96].hex()}\nffmpeg {len(b)} bytes {b[:96].hex()}"
    if codec.startswith("pcm_f"):
        decoded, want = tmp_path / "decoded.wav", tmp_path / "want.wav"
        args = [mk_decode, src, "--audio-out", decoded, "--wav", "--sample-format", "f32", "-q"]
        lib.check_ok(lib.run(args), args)
        cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-c:a", "pcm_f32le", "-fflags", "+bitexact", want]
        lib.oracle_ok(lib.run(cmd), cmd)
        a, b = decoded.read_bytes(), want.read_bytes()
        assert a == b, f"mk-decode {len(a)} bytes {a[:96].hex()}\nffmpeg {len(b)} bytes {b[:96].hex()}"


RF64_CASES = [("pcm_s16le", 2, "always"), ("pcm_s16le", 2, "auto"), ("pcm_u8", 1, "always"), ("pcm_alaw", 1, "always"),
              ("pcm_s24le", 6, "always"), ("pcm_s16le", 1, "never")]


@pytest.mark.parametrize("codec,channels,mode", RF64_CASES, ids=[f"{c}-{n}-{m}" for c, n, m in RF64_CASES])
def test_rf64_header_is_ffmpegs(codec, channels, mode, mk_remux, tmp_path):
    """`mk-remux --rf64 MODE` into WAV against `ffmpeg -c copy -rf64 MODE`, byte for byte: RF64
    with its ds64 chunk (always), RIFF with the JUNK chunk reserved for it (auto, below 4 GiB),
    RIFF (never); an odd number of 8-bit samples (the pad byte counted in the ds64 sizes as
    ffmpeg counts it), G.711's fact chunk, the extensible format of 6 channels; and ffprobe
    reads ours. (The switch of `auto` past 4 GiB: WAVRF64Tests.)"""
    src, ours, ref = tmp_path / "in.wav", tmp_path / "ours.wav", tmp_path / "ffmpeg.wav"
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=8000",
           "-af", "atrim=end_sample=1001", "-ac", str(channels), "-c:a", codec, "-fflags", "+bitexact", src]
    lib.oracle_ok(lib.run(cmd), cmd)
    lib.check_ok(lib.run([mk_remux, src, ours, "--rf64", mode, "--quiet"]), [mk_remux, src, ours, "--rf64", mode])
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-y", "-i", src, "-c", "copy", "-rf64", mode, "-fflags", "+bitexact", ref]
    lib.oracle_ok(lib.run(cmd), cmd)
    a, b = ours.read_bytes(), ref.read_bytes()
    assert a == b, f"ours {len(a)} bytes {a[:96].hex()}\nffmpeg {len(b)} bytes {b[:96].hex()}"
    # ffprobe reads the codec and channels of the source; the sample count as it reads ffmpeg's
    # file (an odd 8-bit count reads one more: ffmpeg counts the pad byte in the ds64 data size).
    facts = ["ffprobe", "-v", "error", "-show_entries", "stream=codec_name,channels,duration_ts", "-of", "csv=p=0"]
    got = lib.run(facts + [ours]).stdout.decode().split(",")
    assert got[:2] == lib.run(facts + [src]).stdout.decode().split(",")[:2]
    assert got == lib.run(facts + [ref]).stdout.decode().split(",")
