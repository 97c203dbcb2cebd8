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
        dec = mediakit.Decoder(track)
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
