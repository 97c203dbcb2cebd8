"""Files cut short, for the checks of truncated decoding (test_truncated_decode.py, the C API
and the Python bindings): which shared files are cut (by FFmpeg's own reports and the
containers' structure), generated inputs and where to cut them, and ffmpeg's decode of them."""
from __future__ import annotations

import atexit
import concurrent.futures
import fcntl
import functools
import json
import os
import re
import struct
import tempfile
from pathlib import Path

import oracle_lib as lib

MP4_EXTENSIONS = {".mp4", ".mov", ".m4a", ".m4b", ".3gp", ".qta", ".m4s", ".cmfv"}
OGG_EXTENSIONS = {".ogg", ".opus"}
# The decoder libraries MediaKit's plugins use (ORACLES.md): same library, same output.
FFMPEG_DECODER = {"opus": ["-c:a", "libopus"], "vorbis": ["-c:a", "libvorbis"], "av1": ["-c:v", "libdav1d"]}
# Lines ffmpeg's demuxers print about the cut itself (not decoder errors).
DEMUXER_LINE = re.compile(r"^\[(mov,mp4|ogg|ivf|matroska)[^@]*@ [0-9a-fx]+\] ")


# --------------------------------------------------------------------------- where a file is cut

def ogg_ends_inside_page(data: bytes) -> bool:
    """True when the last page (RFC 3533 header, lacing table, body) goes past the end."""
    pos = 0
    while True:
        i = data.find(b"OggS", pos)
        if i < 0:
            return False
        if i + 27 > len(data) or i + 27 + data[i + 26] > len(data):
            return True
        n = data[i + 26]
        size = 27 + n + sum(data[i + 27:i + 27 + n])
        if i + size > len(data):
            return True
        pos = i + size


def _cut_off(path: Path) -> bool:
    if path.suffix in OGG_EXTENSIONS:
        return ogg_ends_inside_page(path.read_bytes())
    # FFmpeg's own words for a packet past the end ("partial file", mov) and for a packet the
    # end cuts short (a short read marks it corrupt; discardcorrupt then says so and drops it).
    proc = lib.run(["ffprobe", "-v", "warning", "-fflags", "+discardcorrupt", "-show_entries", "packet=stream_index",
                    "-of", "csv=p=0", path])
    return b"partial file" in proc.stderr or b"Packet corrupt" in proc.stderr


# --------------------------------------------------------------------------- oracle

def streams(path: Path) -> dict[str, dict]:
    """ffprobe's first audio and first video stream, by type (cover art aside)."""
    proc = lib.run(["ffprobe", "-v", "error", "-show_streams", "-of", "json", path])
    if proc.returncode != 0:
        return {}
    out: dict[str, dict] = {}
    for s in json.loads(proc.stdout or b"{}").get("streams", []):
        kind = s.get("codec_type")
        if (s.get("disposition") or {}).get("attached_pic"):
            continue   # cover art (an Ogg comment's picture): not a track MediaKit decodes
        if kind in ("audio", "video") and kind not in out:
            out[kind] = s
    return out


def ffmpeg_decode_cmd(path: Path, stream: dict, extra: list | None = None) -> list:
    kind = stream["codec_type"]
    cmd = ["ffmpeg", "-v", "error", "-nostdin"] + (extra or []) + FFMPEG_DECODER.get(stream.get("codec_name"), [])
    cmd += ["-i", path, "-map", f"0:{'a' if kind == 'audio' else 'v'}:0"]
    if kind == "video":
        return cmd + ["-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "nv12", "-"]
    return cmd + ["-f", "s16le", "-"]


def only_the_cut(path: Path, stream: dict) -> bool:
    """True when ffmpeg, with the cut packet dropped (-fflags +discardcorrupt), decodes the
    stream without a decoder error: the cut is the file's only damage."""
    cmd = ffmpeg_decode_cmd(path, stream, ["-fflags", "+discardcorrupt"])
    cmd[-1:] = []
    cmd[cmd.index("-f", cmd.index("-map")):] = ["-f", "null", "-"]
    proc = lib.run(cmd)
    lines = [l for l in proc.stderr.decode("utf-8", "replace").splitlines() if l.strip()]
    return proc.returncode == 0 and all(DEMUXER_LINE.match(l) for l in lines)


@functools.lru_cache(maxsize=None)
def shared_cut_files() -> tuple[tuple[str, str], ...]:
    """(name, "audio"|"video") for every cut shared file whose only damage is the cut.

    Asked while tests are collected, which every xdist worker does: the workers of one run
    (one PYTEST_XDIST_TESTRUNUID) find the list once, under a lock, and the others read it
    (~140 ffprobe / ffmpeg runs each time otherwise). Collection ends in every worker before
    any test runs, so the file is removed when the first worker exits."""
    if not lib.SHARED_MEDIA.is_dir():
        return ()
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run or not run.isalnum():
        return _find_shared_cut_files()
    path = Path(tempfile.gettempdir()) / f"mk-shared-cut-files-{run}.json"
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            found = tuple((name, kind) for name, kind in json.loads(path.read_text()))
        else:
            found = _find_shared_cut_files()
            tmp = path.with_suffix(f".{os.getpid()}")
            tmp.write_text(json.dumps(found))
            os.replace(tmp, path)
    atexit.register(lambda: [p.unlink(missing_ok=True) for p in (path, path.with_suffix(".lock"))])
    return found


def _find_shared_cut_files() -> tuple[tuple[str, str], ...]:
    files = sorted(p for p in lib.SHARED_MEDIA.iterdir()
                   if p.suffix in MP4_EXTENSIONS | OGG_EXTENSIONS | {".ivf"})
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        cut = [p for p, c in zip(files, pool.map(_cut_off, files)) if c]
        found = []
        for p in cut:
            for kind, s in streams(p).items():
                found.append((p, kind, s))
        keep = list(pool.map(lambda t: only_the_cut(t[0], t[2]), found))
    return tuple((p.name, kind) for (p, kind, _), k in zip(found, keep) if k)


def make_source(name: str, out: Path) -> None:
    """Generates input `name` (mp4_faststart, mp4_moov_at_end, fmp4, ivf_av1, ivf_vp9,
    ogg_opus, ogg_vorbis) with ffmpeg's lavfi sources and encoders into `out`."""
    video = ["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25"]
    audio = ["-f", "lavfi", "-i", "sine=f=440:sample_rate=44100"]
    cmd = ["ffmpeg", "-v", "error", "-y"]
    if name == "mp4_faststart":
        cmd += video + audio + ["-t", "3", "-c:v", "libx264", "-bf", "2", "-g", "25", "-c:a", "aac", "-ac", "1",
                                "-movflags", "+faststart", "-shortest", out]
    elif name == "mp4_moov_at_end":
        cmd += video + audio + ["-t", "2", "-c:v", "libx264", "-c:a", "aac", "-ac", "1", "-shortest", out]
    elif name == "fmp4":
        cmd += video + audio + ["-t", "3", "-c:v", "libx264", "-g", "25", "-c:a", "aac", "-ac", "1",
                                "-movflags", "+frag_keyframe+empty_moov", "-shortest", out]
    elif name == "ivf_av1":
        cmd += video + ["-t", "2", "-c:v", "libaom-av1", "-cpu-used", "8", "-g", "10", out]
    elif name == "ivf_vp9":
        cmd += video + ["-t", "2", "-c:v", "libvpx-vp9", "-g", "10", out]
    elif name == "ogg_opus":
        cmd += ["-f", "lavfi", "-i", "sine=f=440:sample_rate=48000:duration=3", "-ac", "2", "-c:a", "libopus", out]
    elif name == "ogg_vorbis":
        cmd += ["-f", "lavfi", "-i", "sine=f=440:sample_rate=48000:duration=3", "-ac", "2", "-c:a", "libvorbis", out]
    else:
        raise AssertionError(name)
    proc = lib.run(cmd)
    lib.oracle_ok(proc, cmd)


def source_suffix(name: str) -> str:
    """The file name extension of generated input `name`."""
    return {"ivf": ".ivf", "ogg": ".ogg"}.get(name.split("_")[0], ".mp4")


def top_level_boxes(data: bytes) -> list[tuple[bytes, int, int]]:
    boxes, pos = [], 0
    while pos + 8 <= len(data):
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if size == 1:
            size = struct.unpack(">Q", data[pos + 8:pos + 16])[0]
        boxes.append((kind, pos, size))
        pos += size
    return boxes


def ivf_frames(data: bytes) -> list[tuple[int, int]]:
    frames, pos = [], 32
    while pos + 12 <= len(data):
        size = struct.unpack("<I", data[pos:pos + 4])[0]
        frames.append((pos, size))
        pos += 12 + size
    return frames


def cut_point(name: str, where: str, data: bytes) -> int:
    """Where to cut a generated file (a byte offset), from its own structure."""
    if name.startswith("ivf"):
        frames = ivf_frames(data)
        pos, size = frames[len(frames) * 2 // 3]
        return pos + 5 if where == "frame-header" else pos + 12 + size // 2
    if name.startswith("ogg"):
        return len(data) * 3 // 5
    boxes = top_level_boxes(data)
    if where == "moof":
        # The last fragment's moof: FFmpeg 5.1 reads the part of a cut trun that is there as
        # samples; cut inside an earlier moof, the bogus samples make it output nothing at all.
        o, s = [(o, s) for k, o, s in boxes if k == b"moof"][-1]
        return o + s // 2
    mdats = [(o, s) for k, o, s in boxes if k == b"mdat"]
    o, s = mdats[len(mdats) // 2]
    fraction = {"mdat-early": 0.2, "mdat": 0.5, "mdat-late": 0.85}[where]
    return o + 8 + int((s - 8) * fraction)



def cut_copy(src: Path, name: str, where: str, out: Path) -> Path:
    """Writes the part of `src` (made by make_source(name)) before the cut point to `out`."""
    data = src.read_bytes()
    out.write_bytes(data[:cut_point(name, where, data)])
    return out
