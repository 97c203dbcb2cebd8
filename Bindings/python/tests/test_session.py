"""The PyAV-like decode loop over the C decode session (mk_async_decode_session): ``for frame in
mediakit.open(path).decode(video=0)``, ``async for``, ``container.seek(t)``, ``decoder.frame_at(t)``
and ``to_numpy(out=...)``, against ffmpeg (ORACLES.md): NV12 bytes equal to
`ffmpeg -i F -map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt nv12 -`, the frame at a time
equal to `ffmpeg -ss T -i F -frames:v 1`, s16 audio within 1 of `-map 0:a:0 -f s16le` cut where
the file says the audio ends."""
import asyncio
import subprocess
import threading
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import pytest

import mediakit

from test_decode import FILES, reference_pcm


def ffmpeg(path: Path, *args: str, input_options: Sequence[str] = ()) -> bytes:
    return subprocess.run(["ffmpeg", "-v", "error", *input_options, "-i", str(path), *args, "-"], check=True,
                          capture_output=True).stdout


def nv12(frame: Optional[mediakit.Frame]) -> bytes:
    """The frame's NV12 bytes (a frame is expected)."""
    assert frame is not None, "no frame at that time"
    return frame.to_numpy().tobytes()


def reference_nv12(path: Path, *input_options: str, frames: Optional[int] = None) -> bytes:
    more = ["-frames:v", str(frames)] if frames else []
    return ffmpeg(path, "-map", "0:v:0", "-fps_mode", "passthrough", *more, "-f", "rawvideo", "-pix_fmt", "nv12",
                  input_options=input_options)


def test_for_frame_in_decode_video_equals_ffmpeg(sample: Path) -> None:
    ref = reference_nv12(sample)
    with mediakit.open(sample) as container:
        track = container.streams.video[0]
        size = track.width * track.height * 3 // 2
        pts, count = [], 0
        buffer = np.empty(size, dtype=np.uint8)     # one buffer for the whole stream
        for frame in container.decode(video=0):
            arr = frame.to_numpy(out=buffer)
            assert np.shares_memory(arr, buffer), "to_numpy(out=) must pack into the given array"
            assert arr.tobytes() == ref[count * size:(count + 1) * size], f"frame {count} differs from ffmpeg's"
            pts.append(frame.pts)
            count += 1
    assert count * size == len(ref), f"{count} frames, ffmpeg {len(ref) // size}"
    assert pts == sorted(pts), "frames not in presentation order"


@pytest.mark.parametrize("name", FILES[:2])
def test_decode_audio_equals_ffmpeg(name: str, shared_media: Path) -> None:
    path = shared_media / name
    with mediakit.open(path) as container:
        track = container.streams.audio[0]
        frames = [f.to_numpy("s16") for f in container.decode(audio=0)]
    ours = np.concatenate(frames).astype(np.int32).ravel()
    ref = reference_pcm(path, track.channels, track.sample_rate)
    assert ours.size == ref.size, f"{ours.size} samples, ffmpeg {ref.size}"
    assert int(np.abs(ours - ref).max(initial=0)) <= 1


@pytest.mark.parametrize("name", FILES)
def test_async_for_equals_ffmpeg(name: str, shared_media: Path) -> None:
    path = shared_media / name
    ref = reference_nv12(path)

    async def collect() -> list[bytes]:
        out = []
        async for frame in mediakit.open(path).decode(video=0):
            out.append(frame.to_numpy().tobytes())
        return out

    frames = asyncio.run(collect())
    assert b"".join(frames) == ref, f"{len(frames)} frames; the bytes differ from ffmpeg's"


@pytest.mark.parametrize("t", [1.0, 2.52, 4.2])
def test_container_seek_and_frame_at_match_ffmpeg_ss(sample: Path, t: float) -> None:
    """The frame at T, three ways: container.seek(t) while decoding, session.frame_at(t), and the
    synchronous decoder.frame_at(t); each equals `ffmpeg -ss T -i F -frames:v 1`."""
    ref = reference_nv12(sample, "-ss", str(t), frames=1)
    with mediakit.open(sample) as container:
        frames = container.decode(video=0)
        next(frames)
        container.seek(t)
        assert next(frames).to_numpy().tobytes() == ref, f"container.seek({t})"
        assert nv12(frames.frame_at(t)) == ref, f"session.frame_at({t})"
        frames.close()
        with mediakit.DecodeSession(container.streams.video[0]) as decoder:
            assert nv12(decoder.frame_at(t)) == ref, f"decoder.frame_at({t})"
            assert nv12(decoder.frame_at(t)) == ref, "frame_at twice"


def test_flush_mid_stream_loses_nothing(sample: Path) -> None:
    """The iOS flush: the delayed frames come, decoding goes on; every frame once, as ffmpeg's."""
    ref = reference_nv12(sample)
    with mediakit.open(sample) as container:
        session = container.decode(video=0, queue_frames=3)
        out = {}
        completions: list[int] = []
        for i, frame in enumerate(session):
            out[frame.pts] = frame.to_numpy().tobytes()
            if i % 20 == 19:
                session.flush()
            if i == 50:
                session.flush(lambda: completions.append(threading.get_ident()))   # on the library's thread
        assert session.stats["frames"] == len(out)
        assert len(completions) == 1 and completions[0] != threading.get_ident(), \
            "the flush completion was called once, on the library's thread, before the end"
    track_size = len(next(iter(out.values())))
    assert b"".join(out[p] for p in sorted(out)) == ref
    assert len(out) * track_size == len(ref)


def test_session_guards_and_streams(sample: Path) -> None:
    with mediakit.open(sample) as container:
        assert [t.index for t in container.streams.video] == [0]
        assert [t.index for t in container.streams.audio] == [1]
        with pytest.raises(ValueError):
            container.decode(video=0, audio=0)
        session = container.decode(audio=0)
        with pytest.raises(mediakit.MediaError):
            container.read()              # the session reads the demuxer on its own thread
        first = next(session)
        assert first.time == pytest.approx(0.0, abs=0.05)
        session.close()
        assert container.read() is not None   # free again
        with pytest.raises(mediakit.MediaError):
            session.read()


@pytest.mark.parametrize("t", [1.2, 3.5, 5.5, 8.5, 10.5, 11.5])
def test_seek_in_open_gops_gives_every_frame_from_the_time_on(shared_media: Path, t: float) -> None:
    """A file whose key frames are H.264 I frames that are not IDRs, each followed in decoding
    order by B frames presented before it (open GOPs). Seeking to T, the session and the
    decoder give every frame the whole decode gives from T on, as ffmpeg decodes them.
    Oracle: ffmpeg's whole decode (no seek), from the first frame presented at or after T;
    ffmpeg's own -ss is not the oracle here: at 8.5 s it gives 2 of the 4 frames (its decoder,
    started at such a key frame, drops pictures; MediaKit starts a key frame earlier)."""
    path = shared_media / "mp4_h264_bframes_iibbibb_elst_offset.mp4"
    whole = reference_nv12(path)
    with mediakit.open(path) as container:
        track = container.streams.video[0]
        with mediakit.DecodeSession(track) as decoder:
            times = [f.pts for f in decoder.frames(container.packets(track))]
        size = len(whole) // len(times)
        assert size * len(times) == len(whole)
        target = round(t / track.time_base) - track.presentation_offset     # media ticks presented at t
        first = next(i for i, pts in enumerate(sorted(times)) if pts >= target)
        expected = whole[first * size:]
        assert expected, f"no frame at or after {t} s"
        with mediakit.DecodeSession(track) as decoder:
            decoder.seek(t)
            got = b"".join(f.to_numpy().tobytes() for f in decoder.frames(container.packets(track)))
        assert got == expected, f"decoder.seek({t}): {len(got) // size} frames, the whole decode has {len(expected) // size}"
        session = container.decode(video=0)
        session.seek(t)
        got = b"".join(f.to_numpy().tobytes() for f in session)
        session.close()
        assert got == expected, f"session.seek({t}): {len(got) // size} frames, the whole decode has {len(expected) // size}"
