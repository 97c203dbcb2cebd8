"""The pull model with "no data now" (issue 35, item 5): AudioConverter.fill (PCM),
AudioConverter.fill_packets (a track's packets) and Encoder.fill (PCM in, packets out), whose
source returns mediakit.NO_DATA_NOW when it has nothing for now. The oracle is the same input fed
another way: the output of a pull that is interrupted (and one whose source raises) equals one
push of the whole input; the FLAC packets decode with ffmpeg to the input."""
import subprocess
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import pytest

import mediakit

AAC_FILE = "mp4_h264_aac_moov_at_start_ctts_8s.mp4"


def noise(frames: int, seed: int) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((frames, 2)) * 6000).clip(-32768, 32767).astype("<i2")


def test_pcm_pull_with_no_data_now_equals_one_push() -> None:
    s16 = noise(20000, 1)
    ref = mediakit.AudioConverter("s16", 44100, "stereo", "f32p", 48000, "stereo")
    expected = np.concatenate([ref.convert(s16), ref.flush()], axis=1)

    conv = mediakit.AudioConverter("s16", 44100, "stereo", "f32p", 48000, "stereo")
    at, calls, ended = 0, 0, False
    starved = 0

    def source(wanted: int) -> Union[np.ndarray[Any, Any], None, object]:
        nonlocal at, calls, ended
        calls += 1
        if calls % 2 == 0:
            return mediakit.NO_DATA_NOW
        piece = s16[at:at + 900]
        at += len(piece)
        ended = len(piece) == 0
        return piece

    parts = []
    while True:
        got = conv.fill(1000, source)  # type: ignore[arg-type]
        parts.append(got)
        if conv.starved:
            starved += 1
            assert got.shape[1] < 1000
        elif got.shape[1] < 1000:
            assert ended
            if got.shape[1] == 0:
                break
    assert starved > 10
    assert np.array_equal(np.concatenate(parts, axis=1), expected), "the interrupted pull differs from one push"


def test_a_raising_source_loses_no_frames() -> None:
    s16 = noise(12000, 2)
    ref = mediakit.AudioConverter("s16", 44100, "stereo", "s16", 32000, "stereo")
    expected = np.concatenate([ref.convert(s16), ref.flush()])
    conv = mediakit.AudioConverter("s16", 44100, "stereo", "s16", 32000, "stereo")
    at, calls, raised = 0, 0, 0

    def source(wanted: int) -> np.ndarray[Any, Any]:
        nonlocal at, calls
        calls += 1
        if calls % 3 == 0:
            raise OSError("the microphone went away")
        piece = s16[at:at + 1100]
        at += len(piece)
        return piece

    parts = []
    while True:
        try:
            got = conv.fill(2000, source)
        except OSError:
            raised += 1
            continue
        parts.append(got)
        if len(got) < 2000:
            break
    assert raised > 0
    assert np.array_equal(np.concatenate(parts), expected), "frames converted before the source raised were lost"


def test_packet_pull_with_no_data_now_equals_pushing_the_packets(shared_media: Path) -> None:
    path = shared_media / AAC_FILE
    with mediakit.open(path) as d:
        track = next(t for t in d.tracks if t.media_type == "audio")
        conv = mediakit.AudioConverter.for_track(track, "f32", 48000, "mono")
        expected = np.concatenate([conv.convert_packet(p) for p in d.packets(track)] + [conv.flush()])
    with mediakit.open(path) as d:
        track = next(t for t in d.tracks if t.media_type == "audio")
        conv = mediakit.AudioConverter.for_track(track, "f32", 48000, "mono")
        packets = d.packets(track)
        calls, ended, starved = 0, False, 0

        def source(wanted: int) -> Optional[object]:
            nonlocal calls, ended
            calls += 1
            if calls % 2 == 0:
                return mediakit.NO_DATA_NOW
            p = next(packets, None)
            ended = p is None
            return p

        parts = []
        while True:
            got = conv.fill_packets(4096, source)  # type: ignore[arg-type]
            parts.append(got)
            starved += conv.starved
            if ended and len(got) == 0:
                break
        assert conv.output_format == ("f32", 48000, 1)
    assert starved > 10
    ours = np.concatenate(parts)
    assert len(ours) > 48000 * 7
    assert ours.tobytes() == expected.tobytes(), "the interrupted packet pull differs from pushing the packets"


def test_encoder_pull_with_no_data_now_equals_push_and_decodes_to_the_input(tmp_path: Path) -> None:
    pcm = noise(30000, 3)
    pushed = mediakit.Encoder("flac", "s16", 48000, "stereo")
    expected = pushed.encode(pcm) + pushed.flush()
    enc = mediakit.Encoder("flac", "s16", 48000, "stereo")
    at, calls, starved = 0, 0, 0

    def source(wanted: int) -> Union[np.ndarray[Any, Any], object]:
        nonlocal at, calls
        calls += 1
        if calls % 2 == 0:
            return mediakit.NO_DATA_NOW
        piece = pcm[at:at + 1500]
        at += len(piece)
        return piece

    got: list[mediakit.Packet] = []
    while True:
        ps = enc.fill(2, source)  # type: ignore[arg-type]
        got += ps
        starved += enc.starved
        if not enc.starved and len(ps) < 2:
            break
    assert starved > 3
    assert [p.data for p in got] == [p.data for p in expected]
    assert [(p.pts, p.duration) for p in got] == [(p.pts, p.duration) for p in expected]
    out = tmp_path / "pulled.flac"
    out.write_bytes(b"fLaC" + bytes([0x80, 0, 0, 34]) + enc.extradata + b"".join(p.data for p in got))
    proc = subprocess.run(["ffmpeg", "-v", "error", "-i", str(out), "-f", "s16le", "-"], capture_output=True)
    assert proc.returncode == 0 and proc.stdout == pcm.tobytes(), proc.stderr.decode()
    with pytest.raises(mediakit.MediaError):
        enc.encode(pcm[:10])                     # fed by fill(): encode() is refused
