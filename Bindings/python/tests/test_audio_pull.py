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


TRACK_FILES = [AAC_FILE, "mp3_mpeg1_44k_stereo_vbr_xing_9s.mp3", "fmp4_opus_mono_10s.mp4"]


def _pushed(path: Path, rate: Optional[int], fmt: str = "f32p") -> Any:
    """The oracle: every packet of the first audio track pushed (convert_packet), then flush."""
    with mediakit.open(path) as d:
        track = next(t for t in d.tracks if t.media_type == "audio")
        conv = mediakit.AudioConverter.for_track(track, fmt, rate)
        axis = 1 if fmt.endswith("p") else 0
        return np.concatenate([conv.convert_packet(p) for p in d.packets(track)] + [conv.flush()], axis=axis)


@pytest.mark.parametrize("name", TRACK_FILES)
def test_track_read_by_the_library_equals_pushing_the_packets(name: str, shared_media: Path) -> None:
    """AudioConverter.fill_track / skip_track (C mk_audio_converter_fill_demuxer: the library
    reads the packets, no callback): in pieces of 1000, 4096 and 10**6 frames, after a skip, after
    packets pushed first, resampled or not, the frames are those of pushing every packet (../shared/media)."""
    path = shared_media / name
    for rate, fmt in [(None, "f32p"), (16000, "f32p"), (None, "s16")]:
        expected = _pushed(path, rate, fmt)
        axis = 1 if fmt.endswith("p") else 0
        total = expected.shape[axis]
        assert total > 10000, name
        for piece in (1000, 4096, 10**6):
            with mediakit.open(path) as d:
                track = next(t for t in d.tracks if t.media_type == "audio")
                conv = mediakit.AudioConverter.for_track(track, fmt, rate)
                parts = []
                while True:
                    got = conv.fill_track(piece)
                    parts.append(got)
                    if got.shape[axis] < piece:
                        break
                assert conv.fill_track(piece).shape[axis] == 0, "a fill after the end gave frames"
            ours = np.concatenate(parts, axis=axis)
            assert ours.tobytes() == expected.tobytes(), f"{name} {rate} {fmt} in pieces of {piece}"
        skip = 12345
        with mediakit.open(path) as d:
            track = next(t for t in d.tracks if t.media_type == "audio")
            conv = mediakit.AudioConverter.for_track(track, fmt, rate)
            packets = d.packets(track)
            first = np.concatenate([conv.convert_packet(next(packets)) for _ in range(3)], axis=axis)
            rest = conv.fill_track(10**7)               # what the pushes left waiting comes first
            assert np.concatenate([first, rest], axis=axis).tobytes() == expected.tobytes(), f"{name}: push then fill_track"
        with mediakit.open(path) as d:
            track = next(t for t in d.tracks if t.media_type == "audio")
            conv = mediakit.AudioConverter.for_track(track, fmt, rate)
            assert conv.skip_track(skip) == skip
            rest = conv.fill_track(10**7)
            want = expected[:, skip:] if axis else expected[skip:]
            assert rest.tobytes() == want.tobytes(), f"{name} {rate} {fmt}: fill_track after skip_track({skip})"
            assert conv.skip_track(10) == 0


def test_track_read_by_the_library_from_a_cut_file(shared_media: Path, tmp_path: Path) -> None:
    """A file cut short is read as far as it goes: fill_track gives what pushing the packets read
    before the cut gives, with a TruncatedWarning naming the cut (the same input fed another way)."""
    data = (shared_media / AAC_FILE).read_bytes()          # moov first: the cut falls in mdat
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[:len(data) * 2 // 3 + 7])
    with pytest.warns(mediakit.TruncatedWarning, match="truncated"):
        expected = _pushed(cut, None)
    with mediakit.open(cut) as d:
        track = next(t for t in d.tracks if t.media_type == "audio")
        conv = mediakit.AudioConverter.for_track(track, "f32p")
        with pytest.warns(mediakit.TruncatedWarning, match="fill_demuxer.*truncated"):
            got = conv.fill_track(10**7)
    assert got.shape[1] > 44100 * 3
    assert got.tobytes() == expected.tobytes()


def test_track_fill_misuse(shared_media: Path) -> None:
    pcm = mediakit.AudioConverter("s16", 44100, "stereo", "f32", 48000, "stereo")
    with pytest.raises(mediakit.MediaKitError, match="takes PCM"):
        pcm.fill_track(10)
    with pytest.raises(mediakit.MediaKitError, match="takes PCM"):
        pcm.skip_track(10)
    with mediakit.open(shared_media / AAC_FILE) as d:
        track = next(t for t in d.tracks if t.media_type == "audio")
        conv = mediakit.AudioConverter.for_track(track, "f32")
        with pytest.raises(ValueError, match="count"):
            conv.fill_track(-1)
        with pytest.raises(ValueError, match="count"):
            conv.skip_track(-1)
        with pytest.raises(ValueError, match="count up to"):
            conv.fill_track(2**32 + 5)            # would wrap to 5 in the C int32
    with pytest.raises(mediakit.InvalidArgumentError, match="closed"):
        conv.fill_track(10)
