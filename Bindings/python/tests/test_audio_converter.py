"""mediakit.AudioConverter against the Swift pipeline and tools (the same conversion fed
another way): a decoded AAC track converted to 48 kHz mono f32 equals `mk-decode
--sample-rate 48000 --channels mono --sample-format f32`; raw PCM equals `mk-audioconv`,
whatever the chunking; bad formats raise with a message."""
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import mediakit

AAC_FILE = "mp4_h264_aac_moov_at_start_ctts_8s.mp4"


def tool(name: str) -> str:
    return str(Path(os.environ.get("MK_BIN") or Path(mediakit.LIBRARY_PATH).parent) / name)


def test_aac_track_to_48k_mono_f32_equals_swift(shared_media: Path, tmp_path: Path) -> None:
    path = shared_media / AAC_FILE
    with mediakit.open(path) as d:
        track = next(t for t in d.tracks if t.media_type == "audio")
        conv = mediakit.AudioConverter.for_track(track, "f32", 48000, "mono")
        assert conv.output_format is None                   # known at the first frame
        parts = [conv.convert_packet(p) for p in d.packets(track)] + [conv.flush()]
        assert conv.output_format == ("f32", 48000, 1)
    ours = np.concatenate(parts)
    assert ours.dtype == np.float32 and ours.shape[1] == 1
    swift = tmp_path / "swift.f32"
    subprocess.run([tool("mk-decode"), str(path), "--audio-out", str(swift), "--sample-rate", "48000", "--channels", "mono",
                    "--sample-format", "f32"], check=True, capture_output=True)
    assert len(swift.read_bytes()) > 100_000
    assert ours.tobytes() == swift.read_bytes()


def test_pcm_conversion_equals_mk_audioconv_in_any_chunking(tmp_path: Path) -> None:
    t = np.arange(44100 * 2) / 44100
    stereo = np.stack([np.sin(2 * np.pi * 997 * t), 0.5 * np.sin(2 * np.pi * 440 * t)], axis=1)
    s16 = np.round(stereo * 20000).astype("<i2")
    raw = tmp_path / "in.s16"
    raw.write_bytes(s16.tobytes())
    ref = tmp_path / "ref.f32"
    subprocess.run([tool("mk-audioconv"), str(raw), str(ref), "--in-format", "s16", "--in-rate", "44100", "--in-channels", "2",
                    "--sample-format", "f32", "--sample-rate", "48000", "--channels", "mono"], check=True, capture_output=True)
    expected = ref.read_bytes()
    for chunk in (1000, 7, len(s16)):
        conv = mediakit.AudioConverter("s16", 44100, "stereo", "f32", 48000, "mono")
        out = [conv.convert(s16[i:i + chunk]) for i in range(0, len(s16), chunk)] + [conv.flush()]
        assert np.concatenate(out).tobytes() == expected, f"chunks of {chunk}"
    conv = mediakit.AudioConverter("s16", 44100, 2, "f32", 48000, 1)
    assert (conv.convert(s16.tobytes()).tobytes() + conv.flush().tobytes()) == expected   # bytes in, same result
    # The pull model (fill): asked for 1000 frames at a time, given 7 input frames a pull.
    at = 0

    def source(wanted: int) -> np.ndarray[Any, Any]:
        nonlocal at
        piece = s16[at:at + 7]
        at += len(piece)
        return piece

    conv = mediakit.AudioConverter("s16", 44100, "stereo", "f32", 48000, "mono")
    pulled = []
    while True:
        got = conv.fill(1000, source)
        pulled.append(got)
        if len(got) < 1000:
            break
    assert all(len(p) == 1000 for p in pulled[:-1]) and len(conv.fill(1000, source)) == 0
    assert np.concatenate(pulled).tobytes() == expected

    def broken(wanted: int) -> np.ndarray[Any, Any]:
        raise OSError("the microphone went away")

    with pytest.raises(OSError, match="microphone"):
        mediakit.AudioConverter("s16", 44100, "stereo", "f32", 48000, "mono").fill(100, broken)


def test_planar_output_and_lossless_round_trip() -> None:
    s16 = (np.arange(-3000, 3000, dtype="<i2").reshape(-1, 2))
    to_planar = mediakit.AudioConverter("s16", 48000, "stereo", "s32p", 48000, "stereo")
    planar = np.concatenate([to_planar.convert(s16), to_planar.flush()], axis=1)
    assert planar.shape == (2, len(s16)) and planar.dtype == np.dtype("<i4")
    back = mediakit.AudioConverter("s32p", 48000, "stereo", "s16", 48000, "stereo")
    again = np.concatenate([back.convert(planar), back.flush()])
    assert np.array_equal(again, s16)


def test_bad_formats_raise_with_a_message() -> None:
    with pytest.raises(ValueError):
        mediakit.AudioConverter("s17", 44100, "stereo", "f32", 48000, "mono")
    with pytest.raises(mediakit.MediaError, match="channel layout"):
        mediakit.AudioConverter("s16", 44100, "no-such-layout", "f32", 48000, "mono")
    with pytest.raises(mediakit.MediaError, match="sample_rate"):
        mediakit.AudioConverter("s16", 0, "stereo", "f32", 48000, "mono")
    conv = mediakit.AudioConverter("s16", 44100, "stereo", "f32", 48000, "mono")
    with pytest.raises(TypeError):
        conv.convert(np.zeros((10, 2), dtype=np.float32))


def test_frame_to_numpy_converts_like_the_converter(shared_media: Path) -> None:
    """frame.to_numpy(format=, rate=, layout=) equals an AudioConverter fed that frame's s16."""
    with mediakit.open(shared_media / AAC_FILE) as d:
        track = next(t for t in d.tracks if t.media_type == "audio")
        dec = mediakit.DecodeSession(track)
        frame = next(f for p in d.packets(track) for f in dec.decode(p))
        ours = frame.to_numpy(format="f32", rate=16000, layout="mono")
        src = frame.to_numpy("f32")                     # interleaved f32, the frame's own rate and channels
    conv = mediakit.AudioConverter("f32", frame.sample_rate, frame.channels, "f32", 16000, "mono")
    ref = np.concatenate([conv.convert(src), conv.flush()])
    assert ours.dtype == np.float32 and ours.shape == ref.shape == (round(frame.sample_count * 16000 / frame.sample_rate), 1)
    assert np.array_equal(ours, ref)
    s16 = frame.to_numpy(format="s16")
    assert s16.dtype == np.int16 and s16.shape == (frame.sample_count, frame.channels)
    assert np.array_equal(s16, frame.to_numpy("s16"))


def _tone(tmp_path: Path, seconds: float = 1.3) -> tuple[Path, "np.ndarray[Any, Any]"]:
    """A stereo s16 44.1 kHz tone made by ffmpeg (raw file, and as a (frames, 2) array)."""
    raw = tmp_path / "tone.s16"
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"sine=frequency=440:sample_rate=44100:duration={seconds}",
                    "-ac", "2", "-f", "s16le", str(raw)], check=True)
    return raw, np.fromfile(raw, dtype="<i2").reshape(-1, 2)


def _ffmpeg_f32(raw: Path, *filters: str) -> "np.ndarray[Any, Any]":
    out = subprocess.run(["ffmpeg", "-v", "error", "-f", "s16le", "-ar", "44100", "-ac", "2", "-i", str(raw), *filters,
                          "-f", "f32le", "-"], check=True, capture_output=True).stdout
    return np.frombuffer(out, dtype="<f4").reshape(-1, 2)


def test_priming_cuts_as_ffmpeg_atrim(tmp_path: Path) -> None:
    """prime_leading / prime_trailing drop input frames: s16 -> f32 at the same rate equals
    `ffmpeg -af atrim=start_sample=L:end_sample=N-T` (s16 to f32 is exact both ways)."""
    raw, tone = _tone(tmp_path)
    n, lead, trail = len(tone), 2112, 960
    conv = mediakit.AudioConverter("s16", 44100, "stereo", "f32", 44100, "stereo", prime_leading=lead, prime_trailing=trail)
    ours = np.concatenate([conv.convert(tone[i:i + 1000]) for i in range(0, n, 1000)] + [conv.flush()])
    ref = _ffmpeg_f32(raw, "-af", f"atrim=start_sample={lead}:end_sample={n - trail}")
    assert ours.shape == ref.shape, f"{ours.shape} frames, ffmpeg's atrim gives {ref.shape}"
    assert np.array_equal(ours, ref)


def test_counts_latency_and_reset(tmp_path: Path) -> None:
    """44.1 -> 48 kHz: the frames out in all equal ffmpeg's resampled count (`-ar 48000`);
    the counts are the frames given and returned; reset() drops what waits (the latency's
    frames) and the next stream converts as a new converter converts it (the same input fed
    another way)."""
    raw, tone = _tone(tmp_path)
    conv = mediakit.AudioConverter("s16", 44100, "stereo", "f32", 48000, "stereo")
    first = conv.convert(tone)
    assert conv.latency > 0, "a resampler holds input back"
    assert conv.input_frames == len(tone) and conv.output_frames == len(first)
    whole = np.concatenate([first, conv.flush()])
    assert len(whole) == len(_ffmpeg_f32(raw, "-ar", "48000")) == conv.output_frames
    # A second stream after a reset in the middle of the first one (its tail still held).
    conv.reset()
    assert (conv.input_frames, conv.output_frames) == (0, 0)
    conv.convert(tone[:5000])
    conv.reset()
    again = np.concatenate([conv.convert(tone[7000:]), conv.flush()])
    fresh = mediakit.AudioConverter("s16", 44100, "stereo", "f32", 48000, "stereo")
    expected = np.concatenate([fresh.convert(tone[7000:]), fresh.flush()])
    assert np.array_equal(again, expected), "after reset() the converter must start a new stream"
    assert mediakit.AudioConverter("s16", 44100, "stereo", "s16", 44100, "stereo").latency == 0, "nothing to wait for"


def test_track_converter_reset_and_no_counts(tmp_path: Path) -> None:
    """A track converter of a FLAC track (frames decode independently) converts its packets to
    ffmpeg's decode (`ffmpeg -i F -f s16le -`), and after reset() converts them again to the
    same; its counts are refused (its input is packets)."""
    media = tmp_path / "tone.mka"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100:duration=1",
                    "-ac", "2", "-c:a", "flac", str(media)], check=True)
    ref = np.frombuffer(subprocess.run(["ffmpeg", "-v", "error", "-i", str(media), "-f", "s16le", "-"], check=True,
                                       capture_output=True).stdout, dtype="<i2").reshape(-1, 2)
    with mediakit.open(media) as demuxer:
        track = demuxer.streams.audio[0]
        packets = list(demuxer.packets(track))
        conv = mediakit.AudioConverter.for_track(track, "s16")

        def run() -> "np.ndarray[Any, Any]":
            parts = [conv.convert_packet(p) for p in packets] + [conv.flush()]
            return np.concatenate([x for x in parts if len(x)])

        assert np.array_equal(run(), ref), "the FLAC track converted differs from ffmpeg's decode"
        conv.reset()
        assert np.array_equal(run(), ref), "after reset() the packets convert as the first time"
        with pytest.raises(mediakit.InvalidArgumentError, match="track converter"):
            conv.latency
