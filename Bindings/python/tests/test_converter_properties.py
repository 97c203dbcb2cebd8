"""AudioConverter's and Encoder's Apple-style properties in Python (C 0.3; issue 35 item 6):
channel map and mix matrix, prime method and prime info, buffer-size calculations, MP3's legal
bit rates, the encoder's maximum packet size and the adjustable sample rate.

Oracles:
  channel map   ffmpeg's `pan=stereo|c0=c1|c1=c0` (a swap) on a real file's PCM, byte for byte;
  mix matrix    the gains applied in float64 by numpy (within float32 rounding);
  prime method  the same input fed another way: "pre" with its leading frames from before a cut
                equals the uncut stream from the cut on; "none" equals "normal" delayed by the
                trailing frames, and gives every output at once;
  buffer sizes  the frames each convert() gives: never more than output_buffer_size, and some
                convert() that many; input_buffer_size always enough, one frame fewer not;
  bit rates     ISO/IEC 11172-3 Table 3-B.2 / 13818-3 (as FFmpeg's mpegaudiotab.h has it),
                and the header of the first packet the MP3 encoder makes at each rate;
  packet size   ISO/IEC 11172-3's frame length, 144 * bitrate / rate + padding, against the packets;
  adjustable    the MPEG audio / Opus rates (the spec's): MP3 asked for 96000 codes at 48000,
                Opus asked for 44100 at 48000; refused without the option.
"""
from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import pytest

import mediakit

# ISO/IEC 11172-3 Table 3-B.2 (Layer III) and ISO/IEC 13818-3 (lower sampling frequencies),
# kbit/s by bitrate_index 1..14 (FFmpeg's mpegaudiotab.h: ff_mpa_bitrate_tab[lsf][2]).
MPEG1_LAYER3 = [32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
MPEG2_LAYER3 = [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]


def ffmpeg(*args: str) -> bytes:
    return subprocess.run(["ffmpeg", "-v", "error", *args, "-"], check=True, capture_output=True).stdout


def sine(frames: int, rate: int, channels: int = 2) -> np.ndarray:
    t = np.arange(frames) / rate
    cols = [0.3 * np.sin(2 * np.pi * (440 + 220 * c) * t) for c in range(channels)]
    return (np.stack(cols, axis=1) * 32767).astype("<i2")


def test_channel_map_equals_ffmpeg_pan(sample: Path) -> None:
    pcm = np.frombuffer(ffmpeg("-i", str(sample), "-map", "0:a:0", "-t", "2", "-ac", "2", "-f", "s16le"), dtype="<i2").reshape(-1, 2)
    swapped = ffmpeg("-i", str(sample), "-map", "0:a:0", "-t", "2", "-ac", "2", "-af", "pan=stereo|c0=c1|c1=c0", "-f", "s16le")
    rate = mediakit.open(sample).streams.audio[0].sample_rate
    conv = mediakit.AudioConverter("s16", rate, "stereo", "s16", rate, "stereo", channel_map=[1, 0])
    out = conv.convert(pcm)
    out = np.concatenate([out, conv.flush()])
    assert len(swapped) == pcm.nbytes and out.tobytes() == swapped, "channel_map [1, 0] differs from ffmpeg's pan swap"
    silent = mediakit.AudioConverter("s16", rate, "stereo", "s16", rate, 3, channel_map=[0, None, 0]).convert(pcm)
    assert (silent[:, 0] == pcm[:, 0]).all() and (silent[:, 1] == 0).all() and (silent[:, 2] == pcm[:, 0]).all()


def test_mix_matrix_applies_its_gains() -> None:
    pcm = sine(4800, 48000, 3)
    gains = [[0.5, 0.25, 0.0], [0.0, -1.0, 0.75]]
    out = mediakit.AudioConverter("s16", 48000, 3, "f32", 48000, "stereo", mix_matrix=gains).convert(pcm)
    expected = (pcm.astype(np.float64) / 32768) @ np.array(gains).T
    assert out.shape == (4800, 2) and np.abs(out - expected).max() < 1e-6


def test_bad_maps_and_matrices_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        mediakit.AudioConverter("s16", 48000, "stereo", "s16", 48000, "stereo", channel_map=[0, 1], mix_matrix=[[1, 0], [0, 1]])
    with pytest.raises(mediakit.InvalidArgumentError, match="channel map entry 1 names input channel 2"):
        mediakit.AudioConverter("s16", 48000, "stereo", "s16", 48000, "stereo", channel_map=[0, 2])
    with pytest.raises(ValueError, match="row 0 of mix_matrix has 3 gains; the input has 2 channels"):
        mediakit.AudioConverter("s16", 48000, "stereo", "f32", 48000, "mono", mix_matrix=[[1, 0, 0]])
    with pytest.raises(ValueError, match="channel_map has 1 entries; the output has 2 channels"):
        mediakit.AudioConverter("s16", 48000, "stereo", "s16", 48000, "stereo", channel_map=[0])
    with pytest.raises(ValueError, match="prime_method"):
        mediakit.AudioConverter("s16", 48000, "stereo", "s16", 44100, "stereo", prime_method="post")


def _mono(method: str, src: int, dst: int) -> mediakit.AudioConverter:
    return mediakit.AudioConverter("f32", src, "mono", "f32", dst, "mono", prime_method=method)


def _all(conv: mediakit.AudioConverter, x: np.ndarray) -> np.ndarray:
    return np.concatenate([conv.convert(x.reshape(-1, 1)), conv.flush()]).ravel()


def test_prime_methods() -> None:
    x = (np.random.default_rng(5).standard_normal(12000) * 0.2).astype("<f4")
    assert _mono("normal", 48000, 48000).prime_info == (0, 0)
    # pre: 48000 -> 44100 (147 / 160), cut at 160 * 30 input frames = 4410 output frames.
    pre = _mono("pre", 48000, 44100)
    lead, trail = pre.prime_info
    assert trail == lead + 1 and lead > 0
    whole = _all(_mono("normal", 48000, 44100), x)
    cut = 160 * 30
    assert np.array_equal(_all(pre, x[cut - lead:]), whole[cut * 147 // 160:])
    # none: 2x up; nothing waits, and the output is normal's delayed by 2 * trail frames.
    none = _mono("none", 24000, 48000)
    up = _mono("normal", 24000, 48000)
    assert none.latency == 0 and up.latency == up.prime_info[1] > 0
    first = none.convert(x[:1000].reshape(-1, 1))
    assert len(first) == 2000
    rest = np.concatenate([first.ravel(), _all(none, x[1000:])])
    normal = _all(_mono("normal", 24000, 48000), x)
    delay = 2 * none.prime_info[1]
    assert len(rest) == len(normal) + delay and np.array_equal(rest[delay:], normal)


@pytest.mark.parametrize("src,dst", [(44100, 48000), (48000, 8000), (44100, 44100)])
def test_buffer_sizes(src: int, dst: int) -> None:
    conv = mediakit.AudioConverter("s16", src, "stereo", "f32p", dst, "mono")
    assert conv.max_output_packet_size == 4
    n = 441
    bound = conv.output_buffer_size(n * 4)
    piece = np.zeros((n, 2), dtype="<i2")
    conv.convert(np.zeros((conv.latency + 1, 2), dtype="<i2"))
    sizes = [conv.convert(piece).shape[1] * 4 for _ in range(200)]
    assert max(sizes) == bound, f"{src}->{dst}: pushes of {n} frames gave at most {max(sizes)} bytes, computed {bound}"
    m = 480
    need = conv.input_buffer_size(m * 4) // 4
    for frames, enough in [(need, True), (need - 1, False)]:
        c = mediakit.AudioConverter("s16", src, "stereo", "f32p", dst, "mono")
        c.convert(np.zeros((c.latency + 1, 2), dtype="<i2"))
        got = [c.convert(np.zeros((frames, 2), dtype="<i2")).shape[1] for _ in range(200)]
        assert (min(got) >= m) == enough, f"{src}->{dst}: {frames} input frames gave {min(got)} at least, {m} wanted"


# MPEG 2.5 (8, 11.025, 12 kHz) is no ISO table: Fraunhofer's extension of 13818-3 keeps its
# bit rates, of which LAME (the plugin's encoder) codes 8 to 64 kbit/s (asked for 80 at 11025 Hz,
# it writes 64).
@pytest.mark.parametrize("rate,table", [(44100, MPEG1_LAYER3), (48000, MPEG1_LAYER3), (22050, MPEG2_LAYER3),
                                        (11025, MPEG2_LAYER3[:8]), (8000, MPEG2_LAYER3[:8])])
def test_mp3_bit_rates_are_the_spec_table_and_the_encoder_takes_each(rate: int, table: list[int]) -> None:
    rates = mediakit.Encoder("mp3", "s16", rate, "stereo").applicable_bit_rates
    assert rates == [k * 1000 for k in table]
    pcm = sine(rate // 5, rate)
    lsf = rate < 32000
    for bit_rate in rates:
        enc = mediakit.Encoder("mp3", "s16", rate, "stereo", bitrate=bit_rate)
        packets = enc.encode(pcm) + enc.flush()
        header = packets[0].data[:4]
        assert header[0] == 0xFF and header[1] & 0xE0 == 0xE0, "not an MPEG audio frame"
        assert ((header[1] >> 3) & 1) == (0 if lsf else 1), "MPEG version"
        index = header[2] >> 4
        assert table[index - 1] * 1000 == bit_rate, f"asked for {bit_rate}, the frame says {table[index - 1]} kbit/s"
        size = enc.max_packet_size
        coefficient = 72 if lsf else 144
        assert size == coefficient * bit_rate // rate + 1
        assert max(len(p.data) for p in packets) <= size


def test_mp3_max_packet_size_is_reached() -> None:
    enc = mediakit.Encoder("mp3", "s16", 44100, "stereo", bitrate=320_000)
    packets = enc.encode(sine(44100, 44100)) + enc.flush()
    assert enc.max_packet_size == 1045 and max(len(p.data) for p in packets) == 1045   # a padded frame
    assert mediakit.Encoder("vorbis", "f32", 44100, "stereo").max_packet_size is None


# The other codecs' bounds from their specifications, computed here from the spec's words:
# AAC 6144 bits a channel (ISO/IEC 14496-3 4.5.3.2); FLAC a verbatim frame (RFC 9639: header at
# most 16 bytes, a subframe header of one byte plus wasted-bits flags each, the stereo side
# channel one bit wider, CRC-16); ALAC the escape (uncompressed) frame FFmpeg's alacenc sizes its
# cookie's maxFrameBytes by (23 header bits + 32 when the frame is shorter than 4096 samples);
# Opus 1275 bytes a frame with its framing (RFC 6716 3.2); PCM frames x channels x width.
# White noise at full scale is the worst case for every coder: its packets must stay below.
def _flac_bound(block: int, channels: int, bits: int) -> int:
    side = (2 * bits + 1) * block if channels == 2 else channels * bits * block
    return 16 + channels * ((7 + bits + 7) // 8) + (side + 7) // 8 + 2


@pytest.mark.parametrize("codec,fmt,rate,layout,bound", [
    ("aac", "f32", 48000, "stereo", lambda e: 768 * 2),
    ("aac", "f32", 44100, "mono", lambda e: 768),
    ("flac", "s16", 44100, "stereo", lambda e: _flac_bound(e.frame_size, 2, 16)),
    ("flac", "s16", 48000, "mono", lambda e: _flac_bound(e.frame_size, 1, 16)),
    ("alac", "s16", 44100, "stereo", lambda e: ((23 + (32 if e.frame_size < 4096 else 0)) + 16 * 2 * e.frame_size + 3 + 7) // 8),
    ("opus", "f32", 48000, "stereo", lambda e: 2 + 2 + 1275),
    ("pcm_s24be", "s32", 48000, "stereo", lambda e: e.frame_size * 2 * 3 if e.frame_size else None),
])
def test_max_packet_size_bounds_every_codec(codec: str, fmt: str, rate: int, layout: str,
                                            bound: Callable[[mediakit.Encoder], Optional[int]]) -> None:
    enc = mediakit.Encoder(codec, fmt, rate, layout)
    want = bound(enc)
    assert enc.max_packet_size == want, f"{codec}: {enc.max_packet_size}, the spec's {want}"
    if want is None:
        return
    channels = 2 if layout == "stereo" else 1
    noise = np.random.default_rng(7).uniform(-1, 1, (rate, channels))
    pcm = noise.astype("<f4") if fmt == "f32" else (noise * (2 ** 15 - 1)).astype("<i2") if fmt == "s16" else (noise * (2 ** 31 - 1)).astype("<i4")
    packets = enc.encode(pcm) + enc.flush()
    assert packets and max(len(p.data) for p in packets) <= want, f"{codec}: a packet of {max(len(p.data) for p in packets)} bytes"
    assert mediakit.Encoder("flac", "s16", 44100, "stereo").applicable_bit_rates == []


@pytest.mark.parametrize("codec,asked,coded", [("mp3", 96000, 48000), ("opus", 44100, 48000), ("mp3", 20000, 22050)])
def test_adjustable_sample_rate(codec: str, asked: int, coded: int) -> None:
    with pytest.raises(mediakit.UnsupportedError, match=f"does not take {asked} Hz"):
        mediakit.Encoder(codec, "s16", asked, "stereo", sample_rate=asked)
    enc = mediakit.Encoder(codec, "s16", asked, "stereo", sample_rate=asked, adjustable_sample_rate=True)
    assert enc.sample_rate == coded
    packets = enc.encode(sine(asked // 2, asked)) + enc.flush()
    # Half a second of input at `asked` Hz is half a second coded (the PCM was resampled).
    seconds = sum(p.duration for p in packets) * enc.time_base[0] / enc.time_base[1]
    assert abs(seconds - 0.5) < 0.1, seconds
