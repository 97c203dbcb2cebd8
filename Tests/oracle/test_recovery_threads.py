"""Recovery from damaged video with the decoder's threads on (issue 28 item 2): libavcodec's
frame threads report an error one or more packets after the packet that caused it, so the
session must not blame (and leave out of the GOP it re-feeds) the packet it was sending, and
must not rebuild the decoder again and again for one damage. Before the fix, two consecutive
damaged frames under `--threads 0` (the default) made mk-decode rebuild the decoder on every
packet and give up ("gave up after 21 consecutive packets"); under `--threads 1` it lost the
two frames the replaced decoder still held for reordering.

The inputs are made here: an H.264 MP4 from libx264 (320x180, 240 frames, B-frames, a key
frame every 100 frames: 0, 100, 200) with runs of 1, 2, 5 and 30 consecutive non-key packets
damaged, and 2 just before and 2 just after the key frame at 100: the bits of their slice
header (the 6 bytes after the NAL length and header, at the offsets ffprobe gives) cleared, as
test_recovery.py does, so that the decoder rejects them (flipping them all to ones instead
leaves headers it accepts and conceals).

Oracles (ORACLES.md: ffmpeg's decode):
  - as many frames as ffmpeg delivers from the same damaged file with the same decoder threads
    (`ffmpeg -threads T`), within 2; ffmpeg must deliver fewer than 240 (the damage is rejected,
    the test exercises recovery);
  - every frame from the first key frame after the damage on is byte-identical to ffmpeg's
    decode of the undamaged file (NV12);
  - one damage costs at most one decoder rebuild (mk-decode's summary line).
Each through mk-decode (DecodeSession) and `mk-decode --async` (AsyncDecodeSession), and
through the C API (Tests/c/recovery_threads.c: mk_decode_session and mk_async_decode_session), at threads 0, 1
and 2 (the Python bindings: Bindings/python/tests/test_recovery_threads.py).
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

import oracle_lib as lib

FRAMES, GOP, W, H = 240, 100, 320, 180
FRAME = W * H * 3 // 2
# name: the damaged packets, in decode order (ffprobe's packet order)
CASES = {
    "1": [40],
    "2": [40, 41],
    "5": list(range(40, 45)),
    "30": list(range(40, 70)),
    "before_key": [98, 99],
    "after_key": [101, 102],
}


def _packets(path: Path) -> list[dict]:
    proc = lib.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts,pos,size,flags",
                    "-of", "csv=p=0", path])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    out = []
    for line in proc.stdout.decode().split():
        pts, size, pos, flags = line.split(",")[:4]
        out.append({"pts": int(pts), "size": int(size), "pos": int(pos), "key": "K" in flags})
    return out


def _md5s(data: bytes) -> list[str]:
    assert len(data) % FRAME == 0, f"{len(data)} bytes is not a whole number of {W}x{H} NV12 frames"
    return [hashlib.md5(data[i:i + FRAME]).hexdigest() for i in range(0, len(data), FRAME)]


def _ffmpeg_nv12(path: Path, threads: int | None = None) -> bytes:
    proc = lib.run(["ffmpeg", "-v", "quiet", *(["-threads", str(threads)] if threads is not None else []), "-i", path,
                    "-map", "0:v:0", "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12", "-"])
    assert proc.returncode == 0, lib.tail(proc.stderr)
    return proc.stdout


class Media:
    """The clean file, its packets and decode, and the damaged files with ffmpeg's frame
    counts, made once for the module."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.clean = folder / "clean.mp4"
        proc = lib.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"testsrc2=size={W}x{H}:rate=25",
                        "-frames:v", str(FRAMES), "-c:v", "libx264", "-g", str(GOP), "-keyint_min", str(GOP),
                        "-sc_threshold", "0", "-pix_fmt", "yuv420p", self.clean])
        assert proc.returncode == 0, lib.tail(proc.stderr)
        self.packets = _packets(self.clean)
        assert len(self.packets) == FRAMES
        assert [i for i, p in enumerate(self.packets) if p["key"]] == list(range(0, FRAMES, GOP))
        self.reference = _md5s(_ffmpeg_nv12(self.clean))
        assert len(self.reference) == FRAMES
        self._damaged: dict[str, Path] = {}
        self._counts: dict[tuple[str, int], int] = {}

    def damaged(self, case: str) -> Path:
        if case not in self._damaged:
            data = bytearray(self.clean.read_bytes())
            for i in CASES[case]:
                p = self.packets[i]
                assert not p["key"], f"packet {i} is a key frame"
                # After the 4-byte NAL length and the NAL header: the slice header, cleared.
                data[p["pos"] + 5:p["pos"] + 11] = bytes(6)
            out = self.folder / f"bad_{case}.mp4"
            out.write_bytes(bytes(data))
            self._damaged[case] = out
        return self._damaged[case]

    def ffmpeg_count(self, case: str, threads: int) -> int:
        key = (case, threads)
        if key not in self._counts:
            self._counts[key] = len(_md5s(_ffmpeg_nv12(self.damaged(case), threads)))
            assert self._counts[key] < FRAMES, f"{case}: ffmpeg decodes every frame: the damage is not rejected"
        return self._counts[key]

    def tail_after_damage(self, case: str) -> int:
        """The frames presented from the first key frame after the damage on."""
        last = max(CASES[case])
        key = next(i for i in range(last + 1, FRAMES) if self.packets[i]["key"])
        return sum(1 for p in self.packets if p["pts"] >= self.packets[key]["pts"])


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> Media:
    return Media(tmp_path_factory.mktemp("recovery-threads"))


@pytest.fixture(scope="module")
def c_program(mk_bin, tmp_path_factory) -> Path:
    """Tests/c/recovery_threads.c built against the checkout's libmediakit (as test_capi.py builds its programs)."""
    libdir = mk_bin
    if not (libdir / "libmediakit.so").is_file():
        pytest.fail(f"libmediakit.so not found in {libdir}; run `make build`", pytrace=False)
    out = tmp_path_factory.mktemp("recovery-threads-c") / "recovery_threads"
    cmd = ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-I", lib.REPO / "Include",
           lib.REPO / "Tests" / "c" / "recovery_threads.c", "-L", libdir, "-lmediakit", f"-Wl,-rpath,{libdir}", "-o", out]
    proc = lib.run(cmd)
    assert proc.returncode == 0, f"`{lib.shell_line(cmd)}` failed:\n{lib.tail(proc.stderr)}"
    return out


def check_frames(media: Media, case: str, threads: int, ours: list[str], who: str) -> None:
    expected = media.ffmpeg_count(case, threads)
    assert abs(len(ours) - expected) <= 2, \
        f"{who} {case} threads {threads}: {len(ours)} frames, ffmpeg's decode of the same damaged file has {expected}"
    n = media.tail_after_damage(case)
    assert len(ours) >= n
    for k in range(1, n + 1):
        assert ours[-k] == media.reference[-k], \
            f"{who} {case} threads {threads}: frame {FRAMES - k} (after the key frame that follows the damage) " \
            f"differs from ffmpeg's decode of the undamaged file"


@pytest.mark.parametrize("threads", [0, 1, 2])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("asynchronous", [False, True], ids=["DecodeSession", "AsyncDecodeSession"])
def test_mk_decode_recovers_with_decoder_threads(asynchronous, case, threads, media, mk_decode, tmp_path):
    bad = media.damaged(case)
    out = tmp_path / "out.nv12"
    cmd = [mk_decode, bad, "--video-out", out, "--threads", str(threads), "-q", *(["--async"] if asynchronous else [])]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd)
    err = proc.stderr.decode()
    ours = _md5s(out.read_bytes())
    check_frames(media, case, threads, ours, "mk-decode" + (" --async" if asynchronous else ""))
    summary = re.search(r"(\d+) packet\(s\) the decoder rejected were skipped \((\d+) frame\(s\) lost\), "
                        r"(\d+) frame\(s\) could not be received, (\d+) decoder rebuild\(s\)", err)
    assert summary, f"no damage summary in mk-decode's output:\n{lib.tail(err)}"
    assert int(summary.group(4)) <= 1, f"{case} threads {threads}: {summary.group(4)} rebuilds for one damage:\n{lib.tail(err)}"
    assert "gave up" not in err


@pytest.mark.parametrize("threads", [0, 1, 2])
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("api", ["decoder", "session"])
def test_c_api_recovers_with_decoder_threads(api, case, threads, media, c_program, tmp_path):
    out = tmp_path / "out.nv12"
    cmd = [c_program, media.damaged(case), str(threads), api, out]
    proc = lib.run(cmd)
    lib.check_ok(proc, cmd, who="recovery_threads")
    ours = _md5s(out.read_bytes())
    check_frames(media, case, threads, ours, f"C mk_{api}")
    stats = re.fullmatch(r"frames (\d+) rebuilds (-?\d+) recoveries (-?\d+)\n", proc.stdout.decode())
    assert stats and int(stats.group(1)) == len(ours), proc.stdout
    if api == "session":
        assert int(stats.group(3)) > 0 and int(stats.group(2)) <= 1, f"{case} threads {threads}: {proc.stdout.decode()}"
