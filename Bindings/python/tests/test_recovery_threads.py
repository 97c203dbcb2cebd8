"""Recovery from damaged video with the decoder's threads on (issue 28 item 2), through the
Python bindings: ``mediakit.DecodeSession`` (C mk_decode_session, a DecodeSession) and
``container.decode(video=0)`` (C mk_async_decode_session, an AsyncDecodeSession). libavcodec's frame
threads report an error one or more packets after the packet that caused it; the session used
to blame the packet it was sending and rebuild on every packet until it gave up.

Inputs made here, as Tests/oracle/test_recovery_threads.py makes them: libx264, 320x180, 240
frames with B-frames, key frames at 0, 100 and 200; runs of 1, 2, 5 and 30 consecutive non-key
packets with their slice header cleared (the 6 bytes after the NAL length and header, at
ffprobe's offsets: the decoder rejects them), and 2 just before and 2 just after a key frame.

Oracles: ffmpeg's decode of the same damaged file with the same threads (`-threads T`): as
many frames, within 2; ffmpeg's decode of the clean file: every frame from the key frame after
the damage on, byte for byte (NV12); at most one decoder rebuild for the damage.
"""
from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

import mediakit

FRAMES, GOP, W, H = 240, 100, 320, 180
FRAME = W * H * 3 // 2
CASES = {"1": [40], "2": [40, 41], "5": list(range(40, 45)), "30": list(range(40, 70)),
         "before_key": [98, 99], "after_key": [101, 102]}


def _ffmpeg_md5s(path: Path, threads: int | None = None) -> list[str]:
    data = subprocess.run(["ffmpeg", "-v", "quiet", *(["-threads", str(threads)] if threads is not None else []),
                           "-i", str(path), "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo",
                           "-pix_fmt", "nv12", "-"], check=True, capture_output=True).stdout
    assert len(data) % FRAME == 0
    return [hashlib.md5(data[i:i + FRAME]).hexdigest() for i in range(0, len(data), FRAME)]


class Media:
    def __init__(self, folder: Path):
        self.folder = folder
        self.clean = folder / "clean.mp4"
        subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate=25",
                        "-frames:v", str(FRAMES), "-c:v", "libx264", "-g", str(GOP), "-keyint_min", str(GOP),
                        "-sc_threshold", "0", "-pix_fmt", "yuv420p", str(self.clean)], check=True)
        lines = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                                "packet=pts,pos,flags", "-of", "csv=p=0", str(self.clean)],
                               check=True, capture_output=True, text=True).stdout.split()
        self.packets = [{"pts": int(l.split(",")[0]), "pos": int(l.split(",")[1]), "key": "K" in l.split(",")[2]}
                        for l in lines]
        assert [i for i, p in enumerate(self.packets) if p["key"]] == list(range(0, FRAMES, GOP))
        self.reference = _ffmpeg_md5s(self.clean)
        self.files: dict[str, Path] = {}
        self.counts: dict[tuple[str, int], int] = {}

    def damaged(self, case: str) -> Path:
        if case not in self.files:
            data = bytearray(self.clean.read_bytes())
            for i in CASES[case]:
                assert not self.packets[i]["key"]
                pos = self.packets[i]["pos"]
                data[pos + 5:pos + 11] = bytes(6)
            self.files[case] = self.folder / f"bad_{case}.mp4"
            self.files[case].write_bytes(bytes(data))
        return self.files[case]

    def ffmpeg_count(self, case: str, threads: int) -> int:
        if (case, threads) not in self.counts:
            self.counts[case, threads] = len(_ffmpeg_md5s(self.damaged(case), threads))
            assert self.counts[case, threads] < FRAMES, "the damage is not rejected: the test must exercise recovery"
        return self.counts[case, threads]

    def tail(self, case: str) -> int:
        key = next(i for i in range(max(CASES[case]) + 1, FRAMES) if self.packets[i]["key"])
        return sum(1 for p in self.packets if p["pts"] >= self.packets[key]["pts"])


@pytest.fixture(scope="module")
def media(tmp_path_factory: pytest.TempPathFactory) -> Media:
    return Media(tmp_path_factory.mktemp("recovery-threads"))


def _md5(frame: mediakit.Frame) -> str:
    return hashlib.md5(frame.to_numpy("nv12").tobytes()).hexdigest()


@pytest.mark.parametrize("threads", [0, 1, 2])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("api", ["DecodeSession", "decode"])
def test_recovery_with_decoder_threads(api: str, case: str, threads: int, media: Media) -> None:
    path = media.damaged(case)
    with mediakit.open(path) as container:
        track = container.streams.video[0]
        if api == "DecodeSession":
            with mediakit.DecodeSession(track, threads=threads) as decoder:
                ours = [_md5(f) for f in decoder.frames(container.packets(track))]
        else:
            session = container.decode(video=0, threads=threads)
            ours = [_md5(f) for f in session]
            assert session.stats["rebuilds"] <= 1, f"{case} threads {threads}: {session.stats['rebuilds']} rebuilds for one damage"
            assert session.stats["recoveries"] > 0
    expected = media.ffmpeg_count(case, threads)
    assert abs(len(ours) - expected) <= 2, f"{api} {case} threads {threads}: {len(ours)} frames, ffmpeg's decode has {expected}"
    n = media.tail(case)
    assert ours[-n:] == media.reference[-n:], \
        f"{api} {case} threads {threads}: the frames after the key frame that follows the damage differ from ffmpeg's clean decode"
