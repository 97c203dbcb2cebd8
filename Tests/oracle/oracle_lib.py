"""Helpers for the oracle suite: media discovery, the ffprobe/ffmpeg oracles, comparisons.

Every comparison here takes an output of ours and the output of an independent
implementation (FFmpeg 5.1's ffprobe/ffmpeg, see ../shared/ORACLES.md) run on the
same input, and reports the first difference in a form a person can act on.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import struct
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import BinaryIO, Iterator

import pytest

try:  # numpy is optional: the array module does the same, more slowly.
    import numpy as _np
except ImportError:  # pragma: no cover - depends on the machine
    _np = None

REPO = Path(__file__).resolve().parents[2]
SHARED_MEDIA = REPO.parent / "shared" / "media"

# Progressive ISO-BMFF / QuickTime files in ../shared/media.
PROGRESSIVE_EXTS = {".mp4", ".mov", ".m4a", ".m4v", ".qta", ".3gp", ".3g2"}
FRAGMENTED_PREFIXES = ("fmp4_", "cmaf_")

# Files on which ffprobe is demonstrably wrong, so that our output cannot equal it.
# Key: "FILE" (every probe test of that file) or "FILE::packets" / "FILE::json" (one test);
# value: why ffprobe is wrong there. Such a test is a strict expected failure: once it
# passes, pytest reports XPASS(strict) as a failure and the entry must go.
KNOWN_DIFFERENCES: dict[str, str] = {
    "mp4_iamf_audio_unsupported.mp4::json":
        "ffprobe takes the IAMF sample rate (48000) from the iacb configuration; the iamf "
        "sample entry itself says 0, which is what MediaKit reports for a codec it does not support",
}

# Files whose ffprobe packet ORDER is not the file's own: FFmpeg runs these tracks through
# a libavformat parser, which holds each packet back until the next read. The packets of
# each track are still compared line by line, in order; only the interleaving is not.
PARSER_DELAYED_ORDER: dict[str, str] = {
    "mp4_two_audio_tracks_ac3_5p1_and_aac.mp4":
        "FFmpeg parses AC-3 in MP4 (need_parsing), so each AC-3 packet comes out one read late",
}

# Tracks ffprobe lists without packets although the file has samples for them.
# Key: file name; value: (track index, why).
TRACKS_WITHOUT_FFPROBE_PACKETS: dict[str, tuple[int, str]] = {
    "mp4_h264_aac_text_chapter_track_chpl.mp4":
        (2, "a QuickTime chapter track (tref/chap): FFmpeg reads its samples into chapters "
            "and returns no packets for it"),
}


def known_difference(name: str, test: str) -> str | None:
    return KNOWN_DIFFERENCES.get(f"{name}::{test}") or KNOWN_DIFFERENCES.get(name)


CMD_TIMEOUT = 300  # seconds for one command: a hang is a failure, not a stuck suite
MAX_SHOWN = 5      # differing lines shown in a failure message
TRUNC = 160        # characters kept of each shown line


# --------------------------------------------------------------------------- boxes

def iter_boxes(f: BinaryIO, start: int, end: int) -> Iterator[tuple[str, int, int, int]]:
    """Yields (type, offset, header_size, size) of the boxes in [start, end).

    Stops quietly at the first box that does not fit: this walker only classifies
    files, the demuxer under test is the one that must report damage.
    """
    pos = start
    while pos + 8 <= end:
        f.seek(pos)
        header = f.read(8)
        if len(header) < 8:
            return
        size, kind = struct.unpack(">I4s", header)
        header_size = 8
        if size == 1:
            large = f.read(8)
            if len(large) < 8:
                return
            size = struct.unpack(">Q", large)[0]
            header_size = 16
        elif size == 0:
            size = end - pos
        if size < header_size or pos + size > end:
            return
        yield kind.decode("latin-1"), pos, header_size, size
        pos += size


def _child(f: BinaryIO, box: tuple[str, int, int, int], kind: str):
    _, pos, hs, size = box
    return [b for b in iter_boxes(f, pos + hs, pos + size) if b[0] == kind]


@functools.lru_cache(maxsize=None)
def box_summary(path: str) -> dict:
    """Top-level box types, whether the file is fragmented, sample entry types per trak."""
    end = os.path.getsize(path)
    with open(path, "rb") as f:
        top = list(iter_boxes(f, 0, end))
        kinds = [b[0] for b in top]
        fragmented = "moof" in kinds
        entries: list[list[str]] = []
        ctts: list[bool] = []
        for moov in (b for b in top if b[0] == "moov"):
            if _child(f, moov, "mvex"):
                fragmented = True
            for trak in _child(f, moov, "trak"):
                found: list[str] = []
                has_ctts = False
                for mdia in _child(f, trak, "mdia"):
                    for minf in _child(f, mdia, "minf"):
                        for stbl in _child(f, minf, "stbl"):
                            has_ctts = has_ctts or bool(_child(f, stbl, "ctts"))
                            for _, pos, hs, size in _child(f, stbl, "stsd"):
                                # full box: version/flags (4) + entry_count (4), then entries
                                found += [e[0] for e in iter_boxes(f, pos + hs + 8, pos + size)]
                entries.append(found)
                ctts.append(has_ctts)
    return {"top": kinds, "fragmented": fragmented, "sample_entries": entries, "ctts": ctts}


def presented_audio_samples(path: Path, sample_rate: int | None = None) -> int | None:
    """How many samples (per channel) of the first audio track the file says to present,
    read from the boxes themselves (ISO/IEC 14496-12 edit lists; Apple's iTunSMPB):

    - with an edit list: from the first non-empty edit's media_time for its
      segment_duration (movie time scale, converted to the track's), where an end within
      one movie tick of the media's end (the stts total) is the media's end (the movie
      time scale, often 1/1000 s, cannot say the end to the sample);
    - without one, with iTunSMPB: the stts total minus its priming and padding fields
      (which count in the media time scale, like the stts);
    - otherwise None (no end is stated: everything decoded is presented).
    Conversions between time scales round half away from zero (FFmpeg's av_rescale);
    the count is converted from the media time scale to `sample_rate` when given.
    """
    def rescale(v: int, mul: int, div: int) -> int:
        return (2 * v * mul + div) // (2 * div)
    import math
    import struct
    end = os.path.getsize(path)
    with open(path, "rb") as f:
        top = list(iter_boxes(f, 0, end))
        moov = next((b for b in top if b[0] == "moov"), None)
        if moov is None:
            return None
        movie_scale = None
        for _, pos, hs, _size in _child(f, moov, "mvhd"):
            f.seek(pos + hs)
            body = f.read(32)
            movie_scale = struct.unpack(">I", body[20:24] if body[0] == 1 else body[12:16])[0]
        for trak in _child(f, moov, "trak"):
            handler, scale, edits, total = None, None, [], 0
            for mdia in _child(f, trak, "mdia"):
                for _, pos, hs, _size in _child(f, mdia, "hdlr"):
                    f.seek(pos + hs + 8)
                    handler = f.read(4)
                for _, pos, hs, _size in _child(f, mdia, "mdhd"):
                    f.seek(pos + hs)
                    body = f.read(32)
                    scale = struct.unpack(">I", body[20:24] if body[0] == 1 else body[12:16])[0]
                for minf in _child(f, mdia, "minf"):
                    for stbl in _child(f, minf, "stbl"):
                        for _, pos, hs, _size in _child(f, stbl, "stts"):
                            f.seek(pos + hs + 4)
                            (n,) = struct.unpack(">I", f.read(4))
                            for _ in range(n):
                                count, delta = struct.unpack(">II", f.read(8))
                                total += count * delta
            if handler != b"soun":
                continue
            for edts in _child(f, trak, "edts"):
                for _, pos, hs, _size in _child(f, edts, "elst"):
                    f.seek(pos + hs)
                    version = f.read(4)[0]
                    (n,) = struct.unpack(">I", f.read(4))
                    for _ in range(n):
                        if version == 1:
                            dur, media_time = struct.unpack(">Qq", f.read(16))
                        else:
                            dur, media_time = struct.unpack(">Ii", f.read(8))
                        f.read(4)
                        edits.append((dur, media_time))
            media = [(d, m) for d, m in edits if m != -1]
            if media and movie_scale and scale:
                dur, start = media[0]
                if dur == 0:
                    return None
                stop = start + rescale(dur, scale, movie_scale)
                if abs(stop - total) <= max(1, math.ceil(scale / movie_scale)):
                    stop = total
                return rescale(stop - start, sample_rate or scale, scale)
            f.seek(0)
            data = f.read()
            i = data.find(b"iTunSMPB")
            if i >= 0:
                j = data.find(b"data", i)
                fields = data[j + 12:j + 200].split(b"\x00")[0].split()
                if len(fields) >= 3:
                    delay, padding = int(fields[1], 16), int(fields[2], 16)
                    if 0 < delay < 16384:
                        # The fields count in the media time scale (priming + padding + the
                        # original length add up to the stts total), which is the AAC core's
                        # rate: HE-AAC decodes to twice as many samples (the SBR rate).
                        return rescale(total - delay - padding, sample_rate or scale, scale)
            return None
    return None


def is_encrypted(path: Path) -> bool:
    """True when a track's sample entry is encv/enca (CENC): not decodable without keys."""
    return any(e in ("encv", "enca") for t in box_summary(str(path))["sample_entries"] for e in t)


# --------------------------------------------------------------------------- generated media

# Short inputs made with FFmpeg's lavfi generators (ORACLES.md, "Making test media"):
# name -> (video encoder args, audio encoder args, channels, extra muxer args).
_X264 = ["-c:v", "libx264", "-preset", "veryfast", "-bf", "2", "-g", "25"]
_X265 = ["-c:v", "libx265", "-preset", "fast", "-x265-params", "log-level=error:bframes=3:keyint=25"]
_AAC = ["-c:a", "aac", "-b:a", "96k"]
_MP3 = ["-c:a", "libmp3lame", "-b:a", "128k"]
_FASTSTART = ["-movflags", "+faststart"]

GENERATED: dict[str, tuple[list, list, int, list]] = {
    "h264_aac_mono.mp4":             (_X264, _AAC, 1, []),
    "h264_aac_stereo.mp4":           (_X264, _AAC, 2, []),
    "h264_aac_stereo_faststart.mp4": (_X264, _AAC, 2, _FASTSTART),
    "hevc_aac.mp4":                  (_X265, _AAC, 2, []),
    "hevc_aac_faststart.mp4":        (_X265, _AAC, 1, _FASTSTART),
    "h264_mp3.mp4":                  (_X264, _MP3, 2, []),
    "h264_mp3_faststart.mp4":        (_X264, _MP3, 1, _FASTSTART),
    # Pictures that NV12 / I420 output must convert (ffmpeg: libswscale; mk-decode: the
    # FFmpeg plugin's picture converter): 10-bit, 4:4:4 and 4:2:2.
    "hevc_10bit_aac.mp4":            (_X265 + ["-pix_fmt", "yuv420p10le"], _AAC, 2, []),
    "h264_yuv444p_aac.mp4":          (_X264 + ["-pix_fmt", "yuv444p"], _AAC, 1, []),
    "h264_yuv422p_aac.mp4":          (_X264 + ["-pix_fmt", "yuv422p"], _AAC, 1, []),
    # A quarter turn of 4:2:2: ffmpeg converts to the output format first (its transpose
    # filter takes no 4:2:2), then turns; see GENERATED_ROTATION.
    "h264_yuv422p_rotated90_aac.mp4": (_X264 + ["-pix_fmt", "yuv422p"], _AAC, 1, []),
    # Full-range pictures (decoded as yuvj420p): ffmpeg's conversion to NV12 / yuv420p also
    # brings them to the limited range.
    "h264_fullrange_aac.mp4":        (_X264 + ["-pix_fmt", "yuvj420p"], _AAC, 1, []),
    "hevc_fullrange_aac.mp4":        (["-c:v", "libx265", "-preset", "fast", "-x265-params",
                                       "log-level=error:bframes=3:keyint=25:range=full",
                                       "-pix_fmt", "yuv420p", "-color_range", "pc"], _AAC, 1, []),
    # Full-range 10-bit (no yuvj format: yuv420p10le flagged full range). libswscale sets up
    # its range conversion for sources of more than 8 bits only when it is told the range
    # before sws_init_context, as ffmpeg's scale filter does.
    "hevc_10bit_fullrange_aac.mp4":  (["-c:v", "libx265", "-preset", "fast", "-x265-params",
                                       "log-level=error:bframes=3:keyint=25:range=full",
                                       "-pix_fmt", "yuv420p10le", "-color_range", "pc"], _AAC, 1, []),
    # Limited-range gray (4:0:0): libswscale takes gray as full range unless told otherwise
    # after sws_init_context; ffmpeg copies the limited luma unchanged.
    "hevc_gray_aac.mp4":             (["-c:v", "libx265", "-preset", "fast", "-x265-params",
                                       "log-level=error:bframes=3:keyint=25",
                                       "-pix_fmt", "gray", "-color_range", "tv"], _AAC, 1, []),
    # Uncompressed audio in QuickTime files (stts: one entry of duration 1, one table sample
    # per PCM frame), which FFmpeg reads as packets of up to 1024 frames cut per chunk: sowt,
    # twos, in24 (+enda, sound description version 1), fl32 (+enda). FFmpeg 5.1 cannot write
    # PCM into an .mp4. The odd-chunks file has 1000-frame packets, so its chunks (2000,
    # 3000 ... frames) are not multiples of 1024 and read back as 1024 + 976 ... packets.
    "h264_pcm_s16le_mono.mov":       (_X264, ["-c:a", "pcm_s16le"], 1, []),
    "h264_pcm_s16le_stereo.mov":     (_X264, ["-c:a", "pcm_s16le"], 2, []),
    "h264_pcm_s16be_stereo.mov":     (_X264, ["-c:a", "pcm_s16be"], 2, []),
    "h264_pcm_s24le_stereo.mov":     (_X264, ["-c:a", "pcm_s24le"], 2, []),
    "h264_pcm_f32le_mono.mov":       (_X264, ["-c:a", "pcm_f32le"], 1, []),
    "h264_pcm_s16le_odd_chunks.mov": (_X264, ["-af", "asetnsamples=n=1000", "-c:a", "pcm_s16le"], 1, []),
}


# Generated inputs that get a display rotation (degrees) after encoding: FFmpeg 5.1 writes
# the `rotate` tag into the track matrix only when copying a stream, not when encoding it, so
# they are encoded first and then copied with the tag (rotate_copy).
GENERATED_ROTATION: dict[str, int] = {"h264_yuv422p_rotated90_aac.mp4": 90}


def rotate_copy(src: Path, out: Path, degrees: int) -> None:
    """`ffmpeg -i SRC -map 0 -c copy -metadata:s:v:0 rotate=DEGREES OUT`, then checks that
    ffprobe reads the rotation back (a test input that silently lost it would test nothing)."""
    cmd = ["ffmpeg", "-v", "error", "-y", "-nostdin", "-i", src, "-map", "0", "-c", "copy",
           "-metadata:s:v:0", f"rotate={degrees}", out]
    proc = run(cmd)
    if proc.returncode != 0 or not out.is_file():
        pytest.fail(f"could not rotate {src.name}: `{shell_line(cmd)}`\n{tail(proc.stderr)}")
    video = next((s for s in track_streams(ffprobe_json(out, ignore_editlist=False))
                  if s.get("codec_type") == "video"), {})
    if abs(rotation_of(video)) != degrees:
        pytest.fail(f"{out.name}: ffprobe reads rotation {rotation_of(video)}, expected {degrees}")


def generate_cmd(name: str, out: Path) -> list:
    """The ffmpeg command that makes GENERATED[name]: 2 s, 320x240, 25 fps, 44.1 kHz.

    Stereo is 440 Hz left and 660 Hz right, so a channel swap shows up in the PCM.
    Without +faststart the moov is at the end of the file (ffmpeg's default).
    """
    video, audio, channels, mux = GENERATED[name]
    cmd = ["ffmpeg", "-v", "error", "-y", "-nostdin",
           "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25",
           "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100"]
    if channels == 2:
        cmd += ["-f", "lavfi", "-i", "sine=frequency=660:sample_rate=44100",
                "-filter_complex", "[1:a][2:a]join=inputs=2:channel_layout=stereo[a]",
                "-map", "0:v", "-map", "[a]"]
    else:
        cmd += ["-map", "0:v", "-map", "1:a"]
    pix_fmt = [] if "-pix_fmt" in video else ["-pix_fmt", "yuv420p"]
    cmd += ["-t", "2", *video, *pix_fmt, *audio, "-ar", "44100", "-ac", str(channels),
            "-fflags", "+bitexact", "-flags:v", "+bitexact", "-flags:a", "+bitexact",
            "-map_metadata", "-1", *mux, out]
    return cmd


# --------------------------------------------------------------------------- media sets

def progressive_shared_media() -> list[str] | None:
    """Names of the progressive MP4/MOV/M4A/QTA/3GP files of ../shared/media, or None if absent.

    Left out: broken_* (they are for the robustness tests), fmp4_*/cmaf_* and any file
    whose top level has a moof or whose moov has an mvex (fragmented files come later).
    """
    if not SHARED_MEDIA.is_dir():
        return None
    names = []
    for p in sorted(SHARED_MEDIA.iterdir()):
        if p.suffix.lower() not in PROGRESSIVE_EXTS or not p.is_file():
            continue
        if p.name.startswith("broken_") or p.name.startswith(FRAGMENTED_PREFIXES):
            continue
        if box_summary(str(p))["fragmented"]:
            continue
        names.append(p.name)
    return names


def media_params(generated: bool = True, shared: bool = True) -> list:
    """pytest params for the `media` fixture: "gen:NAME", "repo:PATH" and "shared:NAME".

    When ../shared/media is missing, one "shared:<missing>" param stands for it, so the
    `media` fixture can skip (or, with CI=true, fail) with a message instead of the
    set silently shrinking.
    """
    params = []
    if generated:
        params += [file_param(f"gen:{n}", f"gen:{n}") for n in GENERATED]
        # the demo's bundled file (make demo decodes it)
        params.append(file_param("repo:Samples/media/sample.mp4", "Samples/media/sample.mp4"))
    if shared:
        names = progressive_shared_media()
        if names is None:
            params.append(pytest.param("shared:<missing>", id="shared-media-missing"))
        else:
            params += [file_param(f"shared:{n}", n) for n in names]
    return params


def file_param(value: str, id: str) -> object:
    """A pytest param for one input file, in the xdist group of that file: `make test` runs the
    suite with `--dist loadgroup`, so every test of one input runs in one worker, which then
    makes a generated input, remuxes it and asks ffprobe about it once, not once per worker."""
    return pytest.param(value, id=id, marks=pytest.mark.xdist_group(f"file:{value}"))


# --------------------------------------------------------------------------- running

@contextlib.contextmanager
def ffmpeg_stream(cmd: list):
    """ffmpeg's stdout as a stream (outputs can be hundreds of MB); checks its exit."""
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=err,
                                stdin=subprocess.DEVNULL)
        try:
            yield proc.stdout
            proc.stdout.read()  # drain whatever the comparison did not need
            rc = proc.wait(timeout=CMD_TIMEOUT)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        if rc != 0:
            err.seek(0)
            pytest.fail(f"oracle failed: `{shell_line(cmd)}` exited {rc}\n"
                        f"{tail(err.read())}")


def run(cmd: list, *, env: dict | None = None, timeout: int = CMD_TIMEOUT,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE) -> subprocess.CompletedProcess:
    """Runs a command (no shell); a timeout is a test failure that names the command.

    An ffprobe / ffmpeg run that only prints (see `_oracle_cache_key`) is answered from the
    run's oracle cache when the same command already ran on the same input bytes."""
    argv = [str(c) for c in cmd]
    key = _oracle_cache_key(argv) if (env is None and stdout is subprocess.PIPE
                                      and stderr is subprocess.PIPE) else None
    if key is not None:
        hit = _oracle_cache_get(key)
        if hit is not None:
            return subprocess.CompletedProcess(argv, 0, hit[0], hit[1])
    try:
        proc = subprocess.run(argv, stdout=stdout, stderr=stderr,
                              env=env, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pytest.fail(f"timed out after {timeout} s: {shell_line(cmd)}")
    if key is not None and proc.returncode == 0:
        _oracle_cache_put(key, proc.stdout, proc.stderr)
    return proc


# The oracle cache. ffmpeg and ffprobe are the suite's main cost, and most of one run's cost
# is not their work but their start (~0.1 s of CPU each: the dynamic loader resolving the
# symbols of ~200 libraries); several tests ask them the same question about the same file
# (the packets of a shared file for the probe, the remux and the seek tests; a generated
# source's samples before and after). A run that only prints (ffprobe; ffmpeg writing to
# `-`) is a function of its arguments and of the bytes of the files they name, so its
# answer is kept, for the length of one pytest run, in a folder shared by the xdist workers
# (`ORACLE_CACHE_DIR`, set by conftest.py), keyed by the arguments with every file named
# replaced by its identity: for ../shared/media and Samples (read-only inputs) path, size
# and mtime; for any other file (what a test wrote) a hash of its bytes, so a file
# rewritten in place is never answered for its old contents. Failed runs are not kept.
ORACLE_CACHE_DIR: Path | None = None
_ORACLE_CACHE_TOOLS = {"ffprobe", "ffmpeg"}
_ORACLE_CACHE_MAX = 64 << 20    # larger answers (whole decodes of long videos) are not kept
_ORACLE_CACHE_BUDGET = [1 << 30]  # bytes one worker may still write into the cache
_READ_ONLY_ROOTS = (str(SHARED_MEDIA.resolve()) + os.sep if SHARED_MEDIA.exists() else None,
                    str((REPO / "Samples").resolve()) + os.sep)


def _file_identity(arg: str) -> str | None:
    if not arg or arg.startswith("-"):
        return None
    try:
        st = os.stat(arg)
    except (OSError, ValueError):
        return None
    if not os.path.isfile(arg):
        return None
    real = os.path.realpath(arg)
    if any(root and real.startswith(root) for root in _READ_ONLY_ROOTS):
        return f"ro:{real}:{st.st_size}:{st.st_mtime_ns}"
    import hashlib
    h = hashlib.blake2b(digest_size=20)
    with open(arg, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return f"rw:{st.st_size}:{h.hexdigest()}"


def _oracle_cache_key(argv: list[str]) -> str | None:
    """The cache key of an ffprobe / ffmpeg run that only prints, else None: ffmpeg's output
    (its last argument) must be `-` / `pipe:` (anything else writes a file, a side effect)."""
    if ORACLE_CACHE_DIR is None or Path(argv[0]).name not in _ORACLE_CACHE_TOOLS:
        return None
    if Path(argv[0]).name == "ffmpeg" and (argv[-1] not in ("-", "pipe:", "pipe:1") or "-y" in argv):
        return None     # writes a file (`-y`: a second output, or overwrites one)
    if "-" in argv[1:-1] and argv[argv.index("-") - 1] == "-i":   # reads stdin: not here
        return None
    parts = []
    for arg in argv:
        ident = _file_identity(arg)
        parts.append(ident if ident is not None else "a:" + arg)
    import hashlib
    return hashlib.blake2b("\0".join(parts).encode(), digest_size=20).hexdigest()


def _oracle_cache_get(key: str) -> tuple[bytes, bytes] | None:
    assert ORACLE_CACHE_DIR is not None
    import pickle
    try:
        with open(ORACLE_CACHE_DIR / key, "rb") as f:
            out, err = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError):
        return None
    return out, err


def _oracle_cache_put(key: str, out: bytes, err: bytes) -> None:
    assert ORACLE_CACHE_DIR is not None
    size = len(out) + len(err)
    if size > _ORACLE_CACHE_MAX or size > _ORACLE_CACHE_BUDGET[0]:
        return
    _ORACLE_CACHE_BUDGET[0] -= size
    import pickle
    ORACLE_CACHE_DIR.mkdir(parents=True, exist_ok=True)
    tmp = ORACLE_CACHE_DIR / f".{key}.{os.getpid()}"
    with open(tmp, "wb") as f:
        pickle.dump((out, err), f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, ORACLE_CACHE_DIR / key)   # whole or absent, for the other worker too


def shell_line(cmd: list) -> str:
    import shlex
    return " ".join(shlex.quote(str(c)) for c in cmd)


def tail(data: bytes | str, limit: int = 1500) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def check_ok(proc: subprocess.CompletedProcess, cmd: list, who: str = "ours") -> None:
    """Fails the test when a command exited non-zero, with its stderr."""
    if proc.returncode != 0:
        how = (f"was killed by signal {-proc.returncode}" if proc.returncode < 0
               else f"exited {proc.returncode}")
        pytest.fail(f"{who}: `{shell_line(cmd)}` {how}\nstderr:\n{tail(proc.stderr)}")


def plugin_priorities(mk_probe: Path) -> dict[str, dict[str, int]]:
    """codec -> {plugin name: priority}, from `mk-probe --plugins` (the registry's own listing)."""
    cmd = [mk_probe, "--plugins"]
    proc = run(cmd)
    check_ok(proc, cmd)
    table: dict[str, dict[str, int]] = {}
    plugin = None
    for line in proc.stdout.decode().splitlines():
        m = re.match(r"^(\S+) ", line)
        if m and not line.startswith(" "):
            plugin = m.group(1)
        if line.strip().startswith("codecs:") and plugin:
            for codec, prio in re.findall(r"(\w+) \((?:audio|video), priority (-?\d+)\)", line):
                table.setdefault(codec, {})[plugin] = int(prio)
    return table


def oracle_ok(proc: subprocess.CompletedProcess, cmd: list) -> None:
    """An oracle that fails cannot judge anything: that is an error of the test set-up."""
    if proc.returncode != 0:
        pytest.fail(f"oracle failed: `{shell_line(cmd)}` exited {proc.returncode}\n"
                    f"stderr:\n{tail(proc.stderr)}")


# --------------------------------------------------------------------------- ffprobe

def ffprobe_metadata(path: Path) -> dict:
    """`ffprobe -show_format -show_streams -show_chapters` of `path`, as JSON: tags, streams,
    chapters (answered from the oracle cache by content, so a file rewritten in place is probed
    again; `ffprobe_json` caches by path)."""
    cmd = ["ffprobe", "-v", "error", "-show_format", "-show_streams", "-show_chapters", "-of", "json", path]
    proc = run(cmd)
    oracle_ok(proc, cmd)
    return json.loads(proc.stdout)


def first_attached_picture(path: Path) -> bytes | None:
    """The bytes of the first stream ffprobe marks `attached_pic` (cover art), as
    `ffmpeg -map 0:N -c copy` copies them out; None when there is none."""
    pics = [s["index"] for s in ffprobe_metadata(path)["streams"] if s.get("disposition", {}).get("attached_pic")]
    if not pics:
        return None
    cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", f"0:{pics[0]}", "-c", "copy", "-f", "data", "-"]
    proc = run(cmd)
    oracle_ok(proc, cmd)
    return proc.stdout


def ffprobe_packets_cmd(path: Path) -> list:
    return ["ffprobe", "-v", "error", "-ignore_editlist", "1",
            "-show_entries", "packet=stream_index,pts,dts,duration,size,pos,flags",
            "-of", "csv=p=0", path]


def ffprobe_packet_lines(path: Path) -> list[str]:
    """ffprobe's packets as `mk-probe --packets` prints them: `index,pts,dts,duration,size,pos,K|_`
    (the lines that follow side data, empty in CSV, left out)."""
    cmd = ["ffprobe", "-v", "error", "-show_entries", "packet=stream_index,pts,dts,duration,size,pos,flags",
           "-of", "csv=p=0", path]
    proc = run(cmd)
    oracle_ok(proc, cmd)
    out = []
    for line in proc.stdout.decode().splitlines():
        fields = line.split(",")
        while len(fields) > 7 and fields[-1] == "":
            fields.pop()
        if len(fields) != 7:
            continue
        out.append(",".join(fields[:6] + ["K" if fields[6].startswith("K") else "_"]))
    return out


@functools.lru_cache(maxsize=None)
def zero_duration_samples(path: str) -> dict[int, set[int]]:
    """Per trak (moov order = ffprobe's stream index), the samples whose stts delta is 0:
    a duration the file states as 0 (ISO/IEC 14496-12 8.6.1.2). Only the moov's sample
    tables are read (fragments state their durations in trun / tfhd / trex)."""
    out: dict[int, set[int]] = {}
    end = os.path.getsize(path)
    with open(path, "rb") as f:
        moov = next((b for b in iter_boxes(f, 0, end) if b[0] == "moov"), None)
        if moov is None:
            return out
        for index, trak in enumerate(_child(f, moov, "trak")):
            for mdia in _child(f, trak, "mdia"):
                for minf in _child(f, mdia, "minf"):
                    for stbl in _child(f, minf, "stbl"):
                        for _, pos, hs, size in _child(f, stbl, "stts"):
                            f.seek(pos + hs + 4)
                            (n,) = struct.unpack(">I", f.read(4))
                            sample = 0
                            for _ in range(min(n, (size - hs - 8) // 8)):
                                count, delta = struct.unpack(">II", f.read(8))
                                if delta == 0:
                                    out.setdefault(index, set()).update(range(sample, sample + count))
                                sample += count
    return out


def mdhd_duration(path: Path, trak_index: int) -> int | None:
    """The duration field of the mdhd of the trak at `trak_index` (moov order), or None."""
    end = os.path.getsize(path)
    with open(path, "rb") as f:
        moov = next((b for b in iter_boxes(f, 0, end) if b[0] == "moov"), None)
        traks = _child(f, moov, "trak") if moov else []
        if trak_index >= len(traks):
            return None
        for mdia in _child(f, traks[trak_index], "mdia"):
            for _, pos, hs, _size in _child(f, mdia, "mdhd"):
                f.seek(pos + hs)
                body = f.read(32)
                return struct.unpack(">Q", body[24:32])[0] if body[0] == 1 else struct.unpack(">I", body[16:20])[0]
    return None


@functools.lru_cache(maxsize=None)
def _ffprobe_packets(path: str) -> tuple[str, ...]:
    """ffprobe's packet lines, with N/A as the duration of the samples whose stts delta is 0
    (zero_duration_samples): ffprobe prints N/A for them with -fflags +nofillin, and
    otherwise invents a duration from the neighbouring packets. The file's statement is
    the oracle there; every other value is ffprobe's."""
    cmd = ffprobe_packets_cmd(Path(path))
    proc = run(cmd)
    oracle_ok(proc, cmd)
    lines = [l for l in proc.stdout.decode().splitlines() if l.strip()]
    zeros = zero_duration_samples(path)
    if zeros:
        seen: dict[int, int] = {}
        for i, line in enumerate(lines):
            fields = line.split(",")
            stream = int(fields[0])
            k = seen.get(stream, 0)
            seen[stream] = k + 1
            if k in zeros.get(stream, ()):
                fields[3] = "N/A"
                lines[i] = ",".join(fields)
    return tuple(lines)


@functools.lru_cache(maxsize=None)
def _ffprobe_json(path: str, ignore_editlist: bool) -> str:
    cmd = ["ffprobe", "-v", "error"]
    if ignore_editlist:
        cmd += ["-ignore_editlist", "1"]
    cmd += ["-show_streams", "-show_format", "-of", "json", path]
    proc = run(cmd)
    oracle_ok(proc, cmd)
    return proc.stdout.decode()


def ffprobe_json(path: Path, ignore_editlist: bool = True) -> dict:
    """`ffprobe -v error [-ignore_editlist 1] -show_streams -show_format -of json` (cached)."""
    return json.loads(_ffprobe_json(str(path), ignore_editlist))


def track_streams(info: dict) -> list[dict]:
    """ffprobe's streams that are tracks: cover art (disposition attached_pic, made by
    ffmpeg from udta/covr metadata, not from a trak) is left out."""
    return [s for s in info.get("streams", [])
            if not s.get("disposition", {}).get("attached_pic")]


def expected_packets(path: Path) -> list[str]:
    """ffprobe's packet lines in our CSV form: `track,pts,dts,duration,size,offset,flags`.

    The track number is the stream's rank among track streams (cover-art streams and
    their packets are dropped); flags become "K" when ffprobe's first flag is K, else "_".
    """
    info = ffprobe_json(path)
    ranks = {s["index"]: i for i, s in enumerate(track_streams(info))}
    lines = []
    for line in _ffprobe_packets(str(path)):
        fields = line.split(",")
        # A packet with side data gets an empty side-data column (and an empty line).
        while len(fields) > 7 and fields[-1] == "":
            fields.pop()
        if len(fields) != 7:
            pytest.fail(f"oracle: unexpected ffprobe packet line {line!r}")
        index = int(fields[0])
        if index not in ranks:
            continue
        flags = "K" if fields[6].startswith("K") else "_"
        lines.append(",".join([str(ranks[index])] + fields[1:6] + [flags]))
    return lines


def check_durations_against_dts(ours: list[str], ref: list[str], tracks: set[int],
                                name: str) -> tuple[list[str], list[str]]:
    """For `tracks`, check our duration column against ffprobe's dts deltas (next dts of the
    same track minus this dts; the last packet of a track has no next and is not checked),
    then blank the duration column on both sides so the remaining columns compare as usual."""
    ref_by_track: dict[int, list[list[str]]] = {}
    for line in ref:
        f = line.split(",")
        ref_by_track.setdefault(int(f[0]), []).append(f)
    expected: dict[tuple[int, int], str] = {}
    for t, rows in ref_by_track.items():
        if t not in tracks:
            continue
        for i in range(len(rows) - 1):
            expected[(t, i)] = str(int(rows[i + 1][2]) - int(rows[i][2]))
    seen: dict[int, int] = {}
    bad = []
    def blank(lines, check):
        out = []
        counts: dict[int, int] = {}
        for line in lines:
            f = line.split(",")
            t = int(f[0])
            i = counts.get(t, 0)
            counts[t] = i + 1
            if t in tracks:
                if check and (t, i) in expected and f[3] != expected[(t, i)]:
                    bad.append(f"track {t} packet {i}: duration {f[3]}, ffprobe's dts delta {expected[(t, i)]}")
                f[3] = "*"
            out.append(",".join(f))
        return out
    ours2 = blank(ours, True)
    ref2 = blank(ref, False)
    if bad:
        pytest.fail(f"{name}: packet durations differ from ffprobe's dts deltas:\n  " + "\n  ".join(bad[:MAX_SHOWN]),
                    pytrace=False)
    return ours2, ref2


def max_packet_seconds(path: Path) -> dict[int, Fraction]:
    """Per track rank: the longest packet duration in seconds (from ffprobe's packets)."""
    info = ffprobe_json(path)
    streams = track_streams(info)
    longest: dict[int, int] = {}
    for line in expected_packets(path):
        track, _, _, duration = line.split(",")[:4]
        if duration.isdigit():
            longest[int(track)] = max(longest.get(int(track), 0), int(duration))
    out = {}
    for rank, s in enumerate(streams):
        tb = Fraction(s.get("time_base", "0/1")) if s.get("time_base", "0/0") != "0/0" else Fraction(0)
        out[rank] = longest.get(rank, 0) * tb
    return out


def display_matrix_of(stream: dict) -> list[int] | None:
    """The 3x3 display matrix ffprobe prints in side_data_list (row-major), or None."""
    for sd in stream.get("side_data_list", []) or []:
        text = sd.get("displaymatrix")
        if text:
            values = [int(v) for line in text.strip().splitlines() for v in line.split(":", 1)[1].split()]
            if len(values) == 9:
                return values
    return None


# The eight quarter-turn display matrices (a, b, c, d of the tkhd matrix, in units of 1.0):
# four rotations and four rotations with a reflection.
QUARTER_TURN_MATRICES = {"identity": (1, 0, 0, 1), "clock": (0, 1, -1, 0), "cclock": (0, -1, 1, 0),
                         "half": (-1, 0, 0, -1), "transpose": (0, 1, 1, 0), "antitranspose": (0, -1, -1, 0),
                         "mirror_x": (-1, 0, 0, 1), "mirror_y": (1, 0, 0, -1)}


def with_display_matrix(mp4: bytes, name: str) -> tuple[bytes, list[int]]:
    """The one-track MP4 `mp4` with its tkhd matrix set to QUARTER_TURN_MATRICES[name]
    (ISO/IEC 14496-12 8.3.2: a b u c d v x y w, 16.16 fixed point, u v w 2.30), and that matrix."""
    import struct
    data = bytearray(mp4)
    at = data.find(b"tkhd")
    assert at > 0, "the clip has no tkhd"
    matrix_at = at + 4 + (52 if data[at + 4] == 1 else 40)  # after version .. volume
    a, b, c, d = (v * 65536 for v in QUARTER_TURN_MATRICES[name])
    matrix = [a, b, 0, c, d, 0, 0, 0, 1 << 30]
    data[matrix_at:matrix_at + 36] = struct.pack(">9i", *matrix)
    return bytes(data), matrix


def reflected_of(stream: dict) -> bool:
    """True when ffprobe's display matrix mirrors the picture (negative determinant of its
    2x2 rotation part); False without a matrix."""
    m = display_matrix_of(stream)
    return m is not None and m[0] * m[4] - m[1] * m[3] < 0


def rotation_of(stream: dict) -> float:
    """Rotation in degrees as ffprobe prints it in side_data_list (Display Matrix), else 0."""
    for sd in stream.get("side_data_list", []) or []:
        if "rotation" in sd:
            return float(sd["rotation"])
    return 0.0


def codec_of(stream: dict) -> str:
    """ffprobe's codec_name, or the sample entry fourcc (codec_tag_string) if it has none."""
    name = stream.get("codec_name")
    if name and name not in ("none", "unknown"):
        return name
    return stream.get("codec_tag_string", "")


# --------------------------------------------------------------------------- comparisons

def _cut(s: str) -> str:
    return s if len(s) <= TRUNC else s[:TRUNC] + "..."


def diff_lines(ours: list[str], ref: list[str], ours_name: str, ref_name: str) -> str | None:
    """None when equal; else a report of the first differing lines (1-based numbers)."""
    if ours == ref:
        return None
    out = [f"{ours_name}: {len(ours)} lines, {ref_name}: {len(ref)} lines"]
    shown = 0
    for i in range(max(len(ours), len(ref))):
        a = ours[i] if i < len(ours) else "<no line>"
        b = ref[i] if i < len(ref) else "<no line>"
        if a != b:
            if shown == 0:
                out.append(f"first difference at line {i + 1}:")
            out.append(f"  line {i + 1}: {ours_name:>7}: {_cut(a)}")
            out.append(f"  line {i + 1}: {ref_name:>7}: {_cut(b)}")
            shown += 1
            if shown >= MAX_SHOWN:
                rest = sum(1 for j in range(i + 1, max(len(ours), len(ref)))
                           if (ours[j] if j < len(ours) else None) != (ref[j] if j < len(ref) else None))
                if rest:
                    out.append(f"  ... and {rest} more differing lines")
                break
    return "\n".join(out)


def read_exact(f: BinaryIO, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        b = f.read(n - got)
        if not b:
            break
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def yuv420_frame_size(width: int, height: int) -> int:
    """Bytes of one 8-bit 4:2:0 frame (NV12 or I420): luma + two chroma planes rounded up."""
    return width * height + 2 * ((width + 1) // 2) * ((height + 1) // 2)


def _locate(frame_a: bytes, frame_b: bytes, width: int, height: int, layout: str) -> str:
    """Where the first differing byte of two frames is: plane, x, y."""
    i = next(k for k in range(min(len(frame_a), len(frame_b))) if frame_a[k] != frame_b[k])
    luma = width * height
    if i < luma:
        return f"Y plane x={i % width} y={i // width}"
    cw, ch = (width + 1) // 2, (height + 1) // 2
    j = i - luma
    if layout == "nv12":
        return f"UV plane byte {j % (2 * cw)} (x={j % (2 * cw) // 2}) y={j // (2 * cw)}"
    plane = "U" if j < cw * ch else "V"
    j %= cw * ch
    return f"{plane} plane x={j % cw} y={j // cw}"


def compare_video_stream(ours: BinaryIO, ref: BinaryIO, frame_size: int, width: int,
                         height: int, layout: str) -> str | None:
    """Compares two raw 4:2:0 streams frame by frame without holding them in memory.

    Returns None when byte-identical, else: frame counts and the first differing frame,
    plane and pixel.
    """
    return compare_video_streams({layout: ours}, ref, frame_size, width, height, layout)[layout]


def compare_video_streams(ours: dict[str, BinaryIO], ref: BinaryIO, frame_size: int, width: int,
                          height: int, layout: str) -> dict[str, str | None]:
    """compare_video_stream for several outputs of ours in the same layout against one
    reference read once (one ffmpeg decode serves them all): per name, None or the difference."""
    first: dict[str, str | None] = {k: None for k in ours}
    n_ours, tail_ours = dict.fromkeys(ours, 0), dict.fromkeys(ours, 0)
    index, n_ref, tail_ref = 0, 0, 0
    live = set(ours)
    while True:
        b = read_exact(ref, frame_size)
        got = {k: read_exact(ours[k], frame_size) for k in live}
        live = {k for k in live if got[k]}
        if not b and not live:
            break
        if len(b) == frame_size:
            n_ref += 1
        elif b:
            tail_ref = len(b)
        for k in ours:
            a = got.get(k, b"")
            if len(a) == frame_size:
                n_ours[k] += 1
            elif a:
                tail_ours[k] = len(a)
            if first[k] is None and a != b:
                if a and b and len(a) == len(b):
                    first[k] = f"first difference in frame {index}: {_locate(a, b, width, height, layout)}"
                else:
                    first[k] = f"first difference in frame {index}: one stream ends there"
        index += 1
    result: dict[str, str | None] = {}
    for k in ours:
        if first[k] is None:
            result[k] = None
            continue
        msg = [f"{layout} {width}x{height} ({frame_size} bytes/frame): "
               f"ours {n_ours[k]} frames, ffmpeg {n_ref} frames", first[k]]
        if tail_ours[k] or tail_ref:
            msg.append(f"partial last frame: ours {tail_ours[k]} bytes, ffmpeg {tail_ref} bytes")
        result[k] = "\n".join(msg)
    return result


def compare_pcm_s16(ours: bytes, ref: bytes, channels: int, tolerance: int = 1) -> str | None:
    """s16le interleaved: same byte length and |ours - ffmpeg| <= tolerance per sample."""
    channels = max(channels, 1)
    frame = 2 * channels
    problems = []
    if len(ours) != len(ref):
        problems.append(f"length: ours {len(ours)} bytes ({len(ours) / frame:g} samples/channel), "
                        f"ffmpeg {len(ref)} bytes ({len(ref) / frame:g} samples/channel), "
                        f"difference {(len(ours) - len(ref)) / frame:+g} samples/channel")
    n = min(len(ours), len(ref)) // 2
    if n:
        if _np is not None:
            a = _np.frombuffer(ours[: 2 * n], dtype="<i2").astype(_np.int32)
            b = _np.frombuffer(ref[: 2 * n], dtype="<i2").astype(_np.int32)
            d = _np.abs(a - b)
            worst = int(d.max())
            bad = _np.flatnonzero(d > tolerance)
            first_bad = int(bad[0]) if bad.size else None
            count = int(bad.size)
        else:
            import array
            import sys
            a, b = array.array("h"), array.array("h")
            a.frombytes(ours[: 2 * n])
            b.frombytes(ref[: 2 * n])
            if sys.byteorder == "big":
                a.byteswap()
                b.byteswap()
            worst, first_bad, count = 0, None, 0
            for i, (x, y) in enumerate(zip(a, b)):
                d = abs(x - y)
                worst = max(worst, d)
                if d > tolerance:
                    count += 1
                    if first_bad is None:
                        first_bad = i
        if first_bad is not None:
            problems.append(
                f"{count} samples differ by more than {tolerance} (max |diff| {worst}); first at "
                f"sample {first_bad // channels} channel {first_bad % channels}: "
                f"ours {int(a[first_bad])}, ffmpeg {int(b[first_bad])}")
        elif problems:
            problems.append(f"over the common {n // channels} samples/channel: max |diff| {worst}")
    return "\n".join(problems) or None


def check_decode_like_ffmpeg(path: Path, mk_decode: Path, tmp_path: Path) -> None:
    """The first video track (I420, `-fps_mode passthrough`) and the first audio track (s16le,
    `mk-decode --trim ffmpeg`: FFmpeg 5.1 keeps a last frame whole where the container gives it a
    shorter duration) of `path` decode byte for byte as `ffmpeg -i path -map 0:v:0 / 0:a:0` does
    (the same libavcodec decoders). Fails when the file has neither."""
    kinds = {s["codec_type"] for s in ffprobe_json(path)["streams"]}
    assert kinds & {"audio", "video"}, f"{path}: ffprobe lists no audio or video stream"
    if "video" in kinds:
        out = tmp_path / "out.i420"
        cmd = [mk_decode, path, "--video-out", out, "--pixel-format", "i420", "-q"]
        check_ok(run(cmd), cmd)
        ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:v:0", "-fps_mode", "passthrough",
                   "-f", "rawvideo", "-pix_fmt", "yuv420p", "-"]
        want = run(ref_cmd).stdout
        got = out.read_bytes()
        assert want and got == want, f"{len(got)} bytes, ffmpeg {len(want)}: `{shell_line(cmd)}` differs from `{shell_line(ref_cmd)}`"
    if "audio" in kinds:
        out = tmp_path / "out.pcm"
        cmd = [mk_decode, path, "--audio-out", out, "--trim", "ffmpeg", "-q"]
        check_ok(run(cmd), cmd)
        ref_cmd = ["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:a:0", "-f", "s16le", "-"]
        want = run(ref_cmd).stdout
        got = out.read_bytes()
        assert want and got == want, f"{len(got)} bytes, ffmpeg {len(want)}: " + str(compare_bytes_exact(got, want, "s16le"))


def compare_bytes_exact(ours: bytes, ref: bytes, what: str) -> str | None:
    if ours == ref:
        return None
    n = min(len(ours), len(ref))
    i = next((k for k in range(n) if ours[k] != ref[k]), n)
    return f"{what}: ours {len(ours)} bytes, ffmpeg {len(ref)} bytes; first difference at byte {i}"


# --------------------------------------------------------------------------- WAV / Y4M

def parse_wav(data: bytes) -> dict:
    """Parses a RIFF/WAVE file: fmt fields and the data chunk. Raises ValueError if malformed."""
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise ValueError("not a RIFF/WAVE file")
    riff_size = struct.unpack("<I", data[4:8])[0]
    if riff_size + 8 != len(data):
        raise ValueError(f"RIFF size {riff_size} + 8 != file size {len(data)}")
    pos, fmt, pcm = 12, None, None
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        body = data[pos + 8:pos + 8 + size]
        if len(body) != size:
            raise ValueError(f"chunk {cid!r} at {pos} runs past the end of the file")
        if cid == b"fmt ":
            tag, ch, rate, byte_rate, align, bits = struct.unpack("<HHIIHH", body[:16])
            if tag == 0xFFFE and size >= 40:  # WAVE_FORMAT_EXTENSIBLE: sub-format GUID
                tag = struct.unpack("<H", body[24:26])[0]
            fmt = dict(format=tag, channels=ch, rate=rate, byte_rate=byte_rate,
                       block_align=align, bits=bits)
        elif cid == b"data":
            pcm = body
        pos += 8 + size + (size & 1)
    if fmt is None or pcm is None:
        raise ValueError("missing fmt or data chunk")
    fmt["data"] = pcm
    return fmt


def y4m_reader(f: BinaryIO) -> tuple[dict, Iterator[bytes]]:
    """Reads a YUV4MPEG2 stream: (header fields, iterator over frame payloads)."""
    line = f.readline(4096)
    if not line.startswith(b"YUV4MPEG2 ") or not line.endswith(b"\n"):
        raise ValueError(f"not a YUV4MPEG2 header: {line[:80]!r}")
    fields = {}
    for token in line[10:].decode("ascii").split():
        if token.startswith("X") and "=" in token:   # extensions: XCOLORRANGE=LIMITED, XYSCSS=...
            key, _, value = token.partition("=")
            fields[key] = value
        else:
            fields[token[0]] = token[1:]
    w, h = int(fields.get("W", 0)), int(fields.get("H", 0))
    size = yuv420_frame_size(w, h)

    def frames() -> Iterator[bytes]:
        index = 0
        while True:
            marker = f.readline(4096)
            if not marker:
                return
            if not marker.startswith(b"FRAME"):
                raise ValueError(f"frame {index}: expected FRAME, got {marker[:40]!r}")
            payload = read_exact(f, size)
            if len(payload) != size:
                raise ValueError(f"frame {index}: {len(payload)} of {size} bytes")
            yield payload
            index += 1

    return fields, frames()


class Y4MPayloads:
    """The frame payloads of a y4m_reader as one raw stream: read() gives the next whole frame
    (compare_video_streams reads one frame at a time); a frame that does not parse ends the
    stream and its reason is kept in `error`."""

    def __init__(self, frames: Iterator[bytes]) -> None:
        self._frames, self.error = frames, None

    def read(self, n: int = -1) -> bytes:
        if self.error is not None:
            return b""
        try:
            return next(self._frames, b"")
        except ValueError as e:
            self.error = str(e)
            return b""


def y4m_header_facts(fields: dict) -> dict:
    """The header fields compared: W, H, F (as a reduced ratio), A (as a ratio, 0:0 unknown), C,
    and the XCOLORRANGE extension (absent: None)."""
    def ratio(v: str | None):
        if not v or ":" not in v:
            return v
        n, d = v.split(":", 1)
        n, d = int(n), int(d)
        return f"{n}:{d}" if d == 0 else str(Fraction(n, d))
    return {"W": fields.get("W"), "H": fields.get("H"), "F": ratio(fields.get("F")),
            "A": ratio(fields.get("A")), "C": fields.get("C", "420jpeg"),
            "XCOLORRANGE": fields.get("XCOLORRANGE")}


def shared_tmp(tmp_path_factory, name: str) -> Path:
    """A folder of this run that every xdist worker shares (the run's base folder, not the
    worker's own): inputs generated there are made once per run, not once per worker. Make
    its files through `generated_once`, which serializes the workers per file."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder = base / "shared" / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive lock between processes (flock on `path`, created if needed)."""
    import fcntl
    with open(path, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def generated_once(make):
    """Wraps a `make(name, folder) -> Path` that generates `folder / name` unless it exists:
    the workers sharing `folder` (`shared_tmp`) take turns per name, so none reads a file
    another is still writing; a generation that fails leaves no file behind."""
    @functools.wraps(make)
    def locked(name: str, folder: Path, *args, **kwargs) -> Path:
        with file_lock(folder / f".{name}.lock"):
            existed = (folder / name).exists()
            try:
                return make(name, folder, *args, **kwargs)
            except BaseException:
                if not existed:
                    (folder / name).unlink(missing_ok=True)
                raise
    return locked


def media_param_file(param: str, gen_dir: Path, make) -> Path:
    """The file a "gen:NAME" or "shared:NAME" test parameter names: a generated one made by
    `make(NAME, gen_dir)`, or ../shared/media/NAME (missing: a failure under CI=true, else a skip)."""
    import pytest
    kind, _, name = param.partition(":")
    if kind == "gen":
        return make(name, gen_dir)
    path = SHARED_MEDIA / name
    if not path.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing (CI=true: ../shared/media must be there)", pytrace=False)
        pytest.skip(f"{path} missing: these cases read ../shared/media, which this clone does not have")
    return path


def track_identity_problems(ours: list[dict], streams: list[dict]) -> list[str]:
    """What differs between mk-probe --json's tracks and ffprobe's streams in count, codec and
    media type (the facts every container's track test compares first)."""
    problems = []
    if len(ours) != len(streams):
        problems.append(f"{len(ours)} tracks, ffprobe {len(streams)}")
    for i, (t, s) in enumerate(zip(ours, streams)):
        if t["codec"] != codec_of(s):
            problems.append(f"track {i}: codec {t['codec']}, ffprobe {codec_of(s)}")
        if t["type"] != s["codec_type"]:
            problems.append(f"track {i}: type {t['type']}, ffprobe {s['codec_type']}")
    return problems
