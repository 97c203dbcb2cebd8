"""A file cut short is decoded as far as it goes, as ffmpeg decodes it (issue 10, defect 5).

Oracle: ffmpeg 5.1 on the same cut file, with the decoder libraries of ORACLES.md —
`ffmpeg -v error [-c:a libopus|libvorbis] -i F -map 0:a:0 -f s16le -` (the same length,
|diff| <= 1 per sample: float-to-s16 rounding) and `ffmpeg -v error [-c:v libdav1d] -i F
-map 0:v:0 -fps_mode passthrough -f rawvideo -pix_fmt nv12 -` (byte-identical). FFmpeg's
demuxers return the packet the cut goes through with the bytes there are (MP4, IVF; Ogg
drops the incomplete page) and its decoders decode or reject it; mk-decode must do the same,
exit 0, and print a warning naming the offset of the cut (exit 3 with --strict, the
outputs still written).

Inputs:
- shared: every file of ../shared/media in a container MediaKit reads whose end is cut off —
  Ogg: the file ends inside a page; IVF and MP4/MOV/M4A: `ffprobe -v warning -fflags
  +discardcorrupt -show_packets` reports "partial file" (a sample past the end) or "Packet
  corrupt" (a packet the end cuts short) — and whose only damage is the cut: ffmpeg with `-fflags +discardcorrupt` (the cut packet
  dropped) decodes it without a decoder error. (Files damaged elsewhere too are the subject of
  damage recovery, not of this check.)
- generated: H.264/AAC MP4 with the moov at the start cut inside mdat (three places),
  fragmented MP4 cut inside an mdat and inside the last moof, AV1 and VP9 IVF cut inside a frame
  and inside a frame header, Ogg Opus and Vorbis cut inside a page.
- a file cut inside its index (moov at the end, cut off; moov at the start, cut inside it)
  stays an error, as in ffmpeg: exit 1, a message naming the moov, no output.
"""
from __future__ import annotations

import concurrent.futures
import functools
import re
import struct
from pathlib import Path

import pytest

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
    import json
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
    """(name, "audio"|"video") for every cut shared file whose only damage is the cut."""
    if not lib.SHARED_MEDIA.is_dir():
        return ()
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


def _shared_params() -> list:
    if not lib.SHARED_MEDIA.is_dir():
        return [pytest.param("<missing>", "audio", id="shared-media-missing")]
    return [pytest.param(n, k, id=f"{n}-{k}") for n, k in shared_cut_files()]


def check_like_ffmpeg(path: Path, kind: str, mk_decode: Path, tmp_path: Path, strict: bool = False) -> None:
    """mk-decode of one track of the cut file equals ffmpeg's, with a warning about the cut."""
    stream = streams(path).get(kind)
    assert stream is not None, f"{path.name}: ffprobe finds no {kind} stream"
    ref_cmd = ffmpeg_decode_cmd(path, stream)
    ref = lib.run(ref_cmd)
    lib.oracle_ok(ref, ref_cmd)
    out = tmp_path / ("out.pcm" if kind == "audio" else "out.nv12")
    cmd = [mk_decode, "-q", path, "--audio-out" if kind == "audio" else "--video-out", out]
    if strict:
        cmd.append("--strict")
    proc = lib.run(cmd)
    if strict:
        assert proc.returncode == 3, f"`{lib.shell_line(cmd)}` exited {proc.returncode}, --strict on a cut file must exit 3\n{lib.tail(proc.stderr)}"
    else:
        lib.check_ok(proc, cmd, who="mk-decode")
    err = proc.stderr.decode("utf-8", "replace")
    assert re.search(r"warning: .*truncated at offset \d+", err), \
        f"`{lib.shell_line(cmd)}` must warn that the file is cut short, naming the offset; stderr:\n{lib.tail(err)}"
    assert out.is_file(), f"`{lib.shell_line(cmd)}` wrote no {out.name}"
    ours = out.read_bytes()
    if kind == "audio":
        diff = lib.compare_pcm_s16(ours, ref.stdout, int(stream.get("channels") or 1))
    else:
        diff = lib.compare_bytes_exact(ours, ref.stdout, "NV12")
    assert diff is None, f"{path.name}: `{lib.shell_line(cmd)}` vs `{lib.shell_line(ref_cmd)}`:\n{diff}"


@pytest.mark.parametrize("name,kind", _shared_params())
def test_shared_cut_file_decodes_like_ffmpeg(name, kind, shared_media, mk_decode, tmp_path):
    check_like_ffmpeg(shared_media / name, kind, mk_decode, tmp_path)


def test_the_issue_files_are_in_the_shared_set(shared_media):
    """The two files of issue 10 (defect 5) are found by the rules above."""
    names = {n for n, _ in shared_cut_files()}
    for n in ("ogg_opus_stereo_truncated_10000b_no_eos.opus", "ogg_vorbis_large_cover_multipage_comment_no_eos.ogg"):
        assert n in names, f"{n} should be found as a file cut short whose only damage is the cut"


# --------------------------------------------------------------------------- generated

def _make(name: str, out: Path) -> None:
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


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cut-sources")
    made: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in made:
            ext = {"ivf": ".ivf", "ogg": ".ogg"}.get(name.split("_")[0], ".mp4")
            made[name] = folder / (name + ext)
            _make(name, made[name])
        return made[name]
    return get


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


GENERATED = [
    ("mp4_faststart", "mdat-early", "audio"), ("mp4_faststart", "mdat-early", "video"),
    ("mp4_faststart", "mdat", "audio"), ("mp4_faststart", "mdat", "video"),
    ("mp4_faststart", "mdat-late", "audio"), ("mp4_faststart", "mdat-late", "video"),
    ("fmp4", "mdat", "audio"), ("fmp4", "mdat", "video"),
    ("fmp4", "moof", "audio"), ("fmp4", "moof", "video"),
    ("ivf_av1", "frame", "video"), ("ivf_av1", "frame-header", "video"),
    ("ivf_vp9", "frame", "video"), ("ivf_vp9", "frame-header", "video"),
    ("ogg_opus", "page", "audio"), ("ogg_vorbis", "page", "audio"),
]


@pytest.mark.parametrize("name,where,kind", GENERATED, ids=[f"{n}-{w}-{k}" for n, w, k in GENERATED])
def test_generated_cut_file_decodes_like_ffmpeg(name, where, kind, sources, mk_decode, tmp_path):
    src = sources(name)
    data = src.read_bytes()
    cut = tmp_path / f"cut{src.suffix}"
    cut.write_bytes(data[:cut_point(name, where, data)])
    check_like_ffmpeg(cut, kind, mk_decode, tmp_path)


def test_strict_exits_3_and_still_writes(sources, mk_decode, tmp_path):
    """--strict: the distinct exit status 3 for a cut file; the output is ffmpeg's all the same."""
    src = sources("mp4_faststart")
    data = src.read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[:cut_point("mp4_faststart", "mdat", data)])
    check_like_ffmpeg(cut, "audio", mk_decode, tmp_path, strict=True)


@pytest.mark.parametrize("name,where", [("mp4_moov_at_end", "mdat"), ("mp4_faststart", "moov")])
def test_cut_inside_the_index_stays_an_error(name, where, sources, mk_decode, tmp_path):
    """No moov, or a moov cut short: ffmpeg cannot read the file either; mk-decode exits 1
    naming the moov and leaves no output."""
    src = sources(name)
    data = src.read_bytes()
    boxes = top_level_boxes(data)
    if where == "moov":
        _, o, s = next(b for b in boxes if b[0] == b"moov")
    else:
        _, o, s = next(b for b in boxes if b[0] == b"mdat")
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[:o + s // 2])
    ref = lib.run(["ffmpeg", "-v", "error", "-i", cut, "-f", "null", "-"])
    assert ref.returncode != 0, "the oracle: ffmpeg must fail on a file without its whole moov"
    out = tmp_path / "out.pcm"
    cmd = [mk_decode, "-q", cut, "--audio-out", out]
    proc = lib.run(cmd)
    assert proc.returncode == 1, f"`{lib.shell_line(cmd)}` exited {proc.returncode}, expected 1\n{lib.tail(proc.stderr)}"
    assert b"moov" in proc.stderr, f"the error must name the moov box: {lib.tail(proc.stderr)}"
    assert not out.exists(), "no output is left after an error"
