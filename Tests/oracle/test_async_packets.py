"""Asynchronous decoding of the caller's packets (issue 35 item 7; VTDecompressionSessionDecodeFrame
with the asynchronous flag) and the error callback (item 10), through C and Python.

C: Tests/c/async_packets.c hands every packet of a track to mk_async_decode_session_decode (which
returns once the packet is queued) and writes each frame the frame callback gets on the library's
thread, packed (I420 / f32), in callback order; it also checks, on the same track, the frames
read with mk_async_decode_session_read_frame on another thread, a session made from codec
parameters, an error reaching the error callback (and the next decode call), and misuse. It is
run normally and under valgrind.

Python: mediakit.AsyncDecodeSession(track, on_frame=...) with decode(packet), flush(completion),
finish() and wait(); with on_frame=None, frames(packets) (without on_frame at all the session
reads the demuxer itself: test_async_decode.py).

Oracle: ffmpeg's per-frame md5 and pts for the same track
  ffmpeg -v error -i FILE -map 0:v:0 -fps_mode passthrough -copyts -enc_time_base -1 -pix_fmt yuv420p -f framemd5 -
  ffmpeg -v error -i FILE -map 0:a:0 -copyts -enc_time_base -1 -c:a pcm_f32le -f framemd5 -
(pts in the stream's time base; compared as offsets from the first frame, the presentation
offset aside): the frames, in presentation order, each once. A mid-stream flush delivers the
decoder's delayed frames early (a B-frame decoded after the flush is then presented before a
frame already delivered, as VideoToolbox's finish-delayed-frames does), so a run with a flush is
compared as a multiset of (pts, md5), with the flush completion coming mid-stream.
Inputs: H.264 with B-frames (Samples/media/sample.mp4, 125 frames; ../shared/media's
mp4_h264_bframes_iibbibb_elst_offset.mp4, I-I-B-B-I-B-B with an edit list) and MP3 audio
(../shared/media/mp3_cbr_56k_mono_no_xing.mp3).
"""

from __future__ import annotations

import collections
import hashlib
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest

import oracle_lib as lib

INCLUDE = lib.REPO / "Include"
PROGRAM_C = lib.REPO / "Tests" / "c" / "async_packets.c"
MK_PACK_I420, MK_PACK_F32 = 2, 4

CASES = [
    pytest.param("repo:Samples/media/sample.mp4", id="h264-bframes-sample"),
    pytest.param("shared:mp4_h264_bframes_iibbibb_elst_offset.mp4", id="h264-iibbibb-elst"),
    pytest.param("shared:mp3_cbr_56k_mono_no_xing.mp3", id="mp3"),
]


def _media(where: str, shared_media: Path | None = None) -> Path:
    kind, name = where.split(":", 1)
    if kind == "repo":
        return lib.REPO / name
    assert shared_media is not None
    path = shared_media / name
    if not path.is_file():
        pytest.fail(f"{path} is missing from ../shared/media", pytrace=False)
    return path


@pytest.fixture
def media(request):
    """The case's file: the repository's, or ../shared/media's (skipped without it, failed under CI=true)."""
    where = request.param
    if where.startswith("shared:"):
        return _media(where, request.getfixturevalue("shared_media"))
    return _media(where)


def _ffmpeg_frames(path: Path, video: bool) -> list[tuple[Fraction, str]]:
    """(pts in seconds, md5) of each frame ffmpeg decodes from the first video / audio track, in order."""
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:v:0" if video else "0:a:0", "-copyts",
           "-enc_time_base", "-1"]
    cmd += ["-fps_mode", "passthrough", "-pix_fmt", "yuv420p"] if video else ["-c:a", "pcm_f32le"]
    cmd += ["-f", "framemd5", "-"]
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)
    out = []
    tb = Fraction(1)
    for line in proc.stdout.decode().splitlines():
        if line.startswith("#tb 0:"):
            tb = Fraction(line.split(":")[1].strip())
        if line.startswith("#"):
            continue
        cols = [c.strip() for c in line.split(",")]
        out.append((int(cols[2]) * tb, cols[5]))
    assert out, f"ffmpeg decoded no frame of {path.name}"
    return out


def _is_video(path: Path) -> bool:
    return any(s.get("codec_type") == "video" for s in lib.ffprobe_json(path)["streams"])


def _relative(frames: list[tuple[Fraction, str]]) -> list[tuple[Fraction, str]]:
    first = min(p for p, _ in frames)
    return [(p - first, h) for p, h in frames]


def _libdir(mk_bin: Path) -> Path:
    if not (mk_bin / "libmediakit.so").is_file():
        pytest.fail(f"libmediakit.so not found in {mk_bin}; run `make build`", pytrace=False)
    return mk_bin


def _build(tmp_path: Path, libdir: Path) -> Path:
    out = tmp_path / "async_packets"
    args = ["cc", "-std=c99", "-D_POSIX_C_SOURCE=200809L", "-Wall", "-Wextra", "-Werror", "-pthread", "-I", INCLUDE,
            PROGRAM_C, "-L", libdir, "-lmediakit", f"-Wl,-rpath,{libdir}", "-o", out]
    proc = lib.run(args)
    if proc.returncode != 0:
        pytest.fail(f"building async_packets.c failed:\n{lib.tail(proc.stderr)}", pytrace=False)
    return out


def _c_frames(program: Path, path: Path, tmp_path: Path, flush_at: int = 0, wrapper: list | None = None):
    video = _is_video(path)
    raw = tmp_path / "frames.raw"
    cmd = (wrapper or []) + [program, path, "0", str(MK_PACK_I420 if video else MK_PACK_F32), raw]
    if flush_at:
        cmd.append(str(flush_at))
    proc = lib.run(cmd, timeout=900)
    out = proc.stdout.decode()
    # Under valgrind, exit code 3 is its count of "possibly lost" blocks (the Swift runtime's
    # threads); the leak and memory checks are test_c_session_under_valgrind's.
    assert proc.returncode in ((0, 3) if wrapper else (0,)) and re.search(r"^\d+ passed, 0 failed$", out, re.M), \
        out[-3000:] + lib.tail(proc.stderr)
    data = raw.read_bytes()
    frames, at = [], 0
    for m in re.finditer(r"^frame (-?\d+) (\d+/\d+) (\d+)$", out, re.M):
        size = int(m.group(3))
        frames.append((int(m.group(1)) * Fraction(m.group(2)), hashlib.md5(data[at:at + size]).hexdigest()))
        at += size
    assert at == len(data), "the frame lines do not account for every byte written"
    flushes = int(re.search(r"^frames \d+ packets \d+ flushes (\d+)$", out, re.M).group(1))
    return frames, flushes, proc


@pytest.mark.parametrize("media", [c for c in CASES], indirect=True)
def test_c_callbacks_give_ffmpegs_frames_in_presentation_order(media, mk_bin, tmp_path):
    program = _build(tmp_path, _libdir(mk_bin))
    ours, _, _ = _c_frames(program, media, tmp_path)
    ref = _ffmpeg_frames(media, _is_video(media))
    assert [h for _, h in ours] == [h for _, h in ref], (
        f"{media.name}: {len(ours)} frames, ffmpeg {len(ref)}; the first difference at "
        f"{next((i for i, (a, b) in enumerate(zip(ours, ref)) if a[1] != b[1]), min(len(ours), len(ref)))}")
    assert _relative(ours) == _relative(ref), f"{media.name}: the pts differ from ffmpeg's"


def test_c_mid_stream_flush_loses_and_duplicates_no_frame(mk_bin, tmp_path):
    media = lib.REPO / "Samples" / "media" / "sample.mp4"
    program = _build(tmp_path, _libdir(mk_bin))
    ours, flushes, _ = _c_frames(program, media, tmp_path, flush_at=40)
    ref = _ffmpeg_frames(media, True)
    assert flushes == 1
    assert collections.Counter(_relative(ours)) == collections.Counter(_relative(ref)), "a frame was lost or duplicated"


def test_c_session_under_valgrind(mk_bin, tmp_path):
    """async_packets.c under valgrind: "definitely lost: 0 bytes", no invalid read or write, with
    packets crossing from the caller's thread to the session's and frames to the callbacks'."""
    if not shutil.which("valgrind"):
        pytest.fail("valgrind is missing: scripts/deps.sh installs it", pytrace=False)
    libdir = tmp_path / "lib"
    libdir.mkdir()
    for so in list(_libdir(mk_bin).glob("libmediakit.so")) + list(mk_bin.glob("libMediaKitPlugin*.so")):
        shutil.copy(so, libdir / so.name)
        subprocess.run(["strip", "--strip-debug", libdir / so.name], check=True)
    program = _build(tmp_path, libdir)
    supp = lib.REPO / "Tests" / "c" / "valgrind.supp"
    _, _, proc = _c_frames(program, lib.REPO / "Samples" / "media" / "sample.mp4", tmp_path, flush_at=20,
                           wrapper=["valgrind", "--leak-check=full", f"--suppressions={supp}", "--error-exitcode=3"])
    err = proc.stderr.decode()
    assert "definitely lost: 0 bytes" in err or "no leaks are possible" in err, err[-3000:]
    assert "Invalid read" not in err and "Invalid write" not in err and "uninitialised" not in err, err[-5000:]


# --- Python -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def mediakit(mk_bin):
    """The Python bindings over the libmediakit under test."""
    os.environ["MEDIAKIT_LIBRARY"] = str(mk_bin / "libmediakit.so")
    sys.path.insert(0, str(lib.REPO / "Bindings" / "python"))
    import mediakit as mk
    return mk


def _md5(frame, video: bool) -> str:
    data = frame.to_ndarray("i420" if video else "f32")
    return hashlib.md5(data.tobytes() if hasattr(data, "tobytes") else bytes(data)).hexdigest()


@pytest.mark.parametrize("media", [c for c in CASES], indirect=True)
def test_python_on_frame_gives_ffmpegs_frames(media, mediakit, tmp_path):
    video = _is_video(media)
    ref = _ffmpeg_frames(media, video)
    got: list[tuple[Fraction, str]] = []
    threads: set[int] = set()

    def on_frame(frame) -> None:
        threads.add(threading.get_ident())
        got.append((frame.pts * frame.time_base, _md5(frame, video)))
        frame.close()

    with mediakit.open(media) as demuxer:
        track = demuxer.tracks[0]
        with mediakit.AsyncDecodeSession(track, on_frame=on_frame, on_error=lambda e: got.append((Fraction(-1), str(e)))) as session:
            for packet in demuxer.packets(track):
                session.decode(packet)
            session.finish()
            session.wait()
            assert session.stats["frames"] == len(got)
            assert session.stats["packets"] > 0 and session.recoveries == []
    assert threading.get_ident() not in threads, "on_frame ran on the caller's thread"
    assert [h for _, h in got] == [h for _, h in ref], f"{media.name}: {len(got)} frames, ffmpeg {len(ref)}"
    assert _relative(got) == _relative(ref)


def test_python_flush_completion_and_iteration(mediakit):
    media = lib.REPO / "Samples" / "media" / "sample.mp4"
    ref = _ffmpeg_frames(media, True)
    got: list[tuple[Fraction, str]] = []
    completed: list[int] = []
    with mediakit.open(media) as demuxer:
        track = demuxer.tracks[0]
        session = mediakit.AsyncDecodeSession(track, on_frame=lambda f: got.append((f.pts * f.time_base, _md5(f, True))))
        for i, packet in enumerate(demuxer.packets(track)):
            session.decode(packet)
            if i == 30:
                session.flush(lambda: completed.append(len(got)))
        session.finish()
        session.wait()
        session.close()
        assert len(completed) == 1 and 0 < completed[0] < len(got), completed
        assert collections.Counter(_relative(got)) == collections.Counter(_relative(ref))
        # Without on_frame: frames(packets) feeds a thread and yields the frames in order.
        demuxer.seek(0)
        with mediakit.AsyncDecodeSession(track, on_frame=None) as pulled:
            frames = [(f.pts * f.time_base, _md5(f, True)) for f in pulled.frames(demuxer.packets(track))]
        assert _relative(frames) == _relative(ref)


def test_python_callback_exception_is_raised_by_the_next_call(mediakit):
    media = lib.REPO / "Samples" / "media" / "sample.mp4"
    calls = []

    def on_frame(frame) -> None:
        calls.append(frame.pts)
        raise KeyError("from the callback")

    with mediakit.open(media) as demuxer:
        track = demuxer.tracks[0]
        session = mediakit.AsyncDecodeSession(track, on_frame=on_frame)
        with pytest.raises(KeyError, match="from the callback"):
            for packet in demuxer.packets(track):
                session.decode(packet)
            session.finish()
            session.wait()
        session.close()
    assert len(calls) == 1, "frames after a failed callback are dropped, not delivered"


def test_python_close_and_wait_from_on_frame(mediakit):
    """close() called by on_frame ends the session without waiting for that call (it waited for
    the queue it ran on, and libdispatch stopped the process: "dispatch_sync called on queue
    already owned by current thread"), and no frame callback runs after it; wait() called by
    on_frame raises StateError at once (it would wait for the call that made it: it hung), and
    the session goes on to the end. Oracle: ffprobe's frame count for the second session."""
    media = lib.REPO / "Samples" / "media" / "sample.mp4"
    frames = int(lib.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-count_frames", "-show_entries",
                          "stream=nb_read_frames", "-of", "csv=p=0", media]).stdout)
    sessions: list = []
    calls: list[int] = []
    closed = threading.Event()

    def close_at_third(frame) -> None:
        calls.append(frame.pts)
        frame.close()
        if len(calls) == 3:
            sessions[0].close()
            calls.append(-1)     # close returned to the callback
            closed.set()

    with mediakit.open(media) as demuxer:
        track = demuxer.tracks[0]
        sessions.append(mediakit.AsyncDecodeSession(track, on_frame=close_at_third))
        with pytest.raises(mediakit.MediaKitError, match="is closed|was cancelled"):
            for packet in demuxer.packets(track):
                sessions[0].decode(packet)
        assert closed.wait(30), f"close() called by on_frame did not return: {calls}"
        assert sessions[0].closed
        time.sleep(0.3)     # room for a callback that should not come
        assert calls[3:] == [-1], f"callbacks after close() returned in one: {calls}"

        waits: list[str] = []

        def wait_in_callback(frame) -> None:
            frame.close()
            if not waits:
                try:
                    session.wait()
                    waits.append("returned")
                except mediakit.StateError as e:
                    waits.append(str(e))
            calls.append(frame.pts)

        demuxer.seek(0)
        calls.clear()
        with mediakit.AsyncDecodeSession(track, on_frame=wait_in_callback) as session:
            for packet in demuxer.packets(track):
                session.decode(packet)
            session.finish()
            session.wait()
        assert len(waits) == 1 and "called from one of the session's callbacks" in waits[0], waits
        assert len(calls) == frames, f"{len(calls)} frames, ffprobe counts {frames}"


def test_python_decoding_error_reaches_on_error(mediakit):
    media = lib.REPO / "Samples" / "media" / "sample.mp4"
    errors = []
    with mediakit.open(media) as demuxer:
        track = demuxer.tracks[0]
        packets = demuxer.packets(track)
        with mediakit.AsyncDecodeSession(track, on_frame=lambda f: None, on_error=errors.append, recovery=False,
                                    threads=1) as session:
            for _ in range(3):
                session.decode(next(packets))
            good = next(packets)
            bad = mediakit.Packet.create(b"\xff" * 64, pts=good.pts, dts=good.dts, is_keyframe=True, track=0,
                                         time_base=track.time_base)
            session.decode(bad)
            session.wait()
            assert len(errors) == 1 and isinstance(errors[0], mediakit.InvalidDataError), errors
            with pytest.raises(mediakit.InvalidDataError):
                session.decode(good)


def test_python_recovery_steps_over_damage_in_the_callers_packets(mediakit):
    """The recovery rules of every decode session hold for the caller's packets: a damaged packet
    is stepped over (a Recovery, no on_error), and every frame of ffmpeg's decode of the intact
    file comes out but the ones counted lost."""
    media = lib.REPO / "Samples" / "media" / "sample.mp4"
    ref = _ffmpeg_frames(media, True)
    errors: list = []
    frames: list = []
    with mediakit.open(media) as demuxer:
        track = demuxer.tracks[0]
        with mediakit.AsyncDecodeSession(track, on_frame=lambda f: frames.append(f.pts), on_error=errors.append,
                                    threads=1) as session:
            for i, packet in enumerate(demuxer.packets(track)):
                if i == 10 and not packet.is_keyframe:
                    packet = mediakit.Packet.create(b"\xff" * 64, pts=packet.pts, dts=packet.dts, track=0,
                                                    time_base=track.time_base)
                session.decode(packet)
            session.finish()
            session.wait()
            recoveries = session.recoveries
    assert errors == []
    assert len(recoveries) >= 1 and recoveries[0].status == "MK_EDATA", recoveries
    assert len(frames) + sum(r.frames_lost for r in recoveries) == len(ref), (len(frames), recoveries)
    assert frames == sorted(frames), "presentation order"
